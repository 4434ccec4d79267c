"""Calls the frontend keeps as calls: recursive __device__ functions and calls through
function pointers become PTX `.func`s and NVVM's call sequences (st.param, call,
ld.param); everything else is still inlined."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ptxc import oracle
from ptxc.diagnostics import CompileError
from ptxc.frontend import compile_cuda
from ptxc.ptx import ir
from ptxc.ptx.parser import parse_ptx
from ptxc.ptx.printer import print_module

TESTSUITE = Path(__file__).resolve().parent.parent / "testsuite"


def compile_source(source: str, name: str = "calls.cu") -> ir.Module:
    module, _ = compile_cuda(source, name)
    return module


def calls(func: ir.Function) -> list[ir.Instr]:
    return [i for i in func.body if isinstance(i, ir.Instr) and i.opcode.split(".")[0] == "call"]


def assert_ptxas_accepts(module: ir.Module, tmp_path: Path) -> None:
    text = print_module(module)
    parse_ptx(text)                       # it parses back
    ptx = tmp_path / "m.ptx"
    ptx.write_text(text)
    oracle.ptxas(ptx, tmp_path / "m.cubin")


RECURSIVE = """
__device__ int fib(int k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); }
__device__ int helper(int x) { return x * 3; }
__global__ void k(int* out) { out[threadIdx.x] = fib(threadIdx.x % 10) + helper(threadIdx.x); }
"""

POINTERS = """
__device__ int twice(int x) { return 2 * x; }
__device__ int add(int x, int y) { return x + y; }
__device__ int sub(int x, int y) { return x - y; }
typedef int (*unop)(int);
typedef int (*binop)(int, int);
__global__ void k(const int* in, int* out, int n) {
    int i = threadIdx.x;
    binop h = in[i] > 0 ? add : &sub;
    unop t = &twice;
    out[i] = h(in[i], n) + t(i) + (*t)(2);
}
"""


def test_recursive_function_is_a_func_called_by_itself():
    module = compile_source(RECURSIVE)
    names = [(f.name, f.entry) for f in module.functions]
    assert names == [("_Z3fibi", False), ("_Z1kPi", True)]    # helper is inlined
    fib, kernel = module.functions
    assert [p.type for p in fib.return_params] == [".b32"] and fib.return_params[0].name == "func_retval0"
    assert [ir.call_site(c).callee for c in calls(fib)] == [ir.Symbol("_Z3fibi")] * 2
    assert all(c.opcode == "call.uni" for c in calls(fib) + calls(kernel))
    assert len(calls(kernel)) == 1
    ops = [i.opcode for i in fib.body if isinstance(i, ir.Instr)]
    assert ops[0] == "ld.param.u32" and "st.param.b32" in ops and ops[-1] == "ret"


def test_function_pointer_calls_use_prototypes():
    module = compile_source(POINTERS)
    funcs = {f.name: f for f in module.functions}
    assert not funcs["_Z5twicei"].entry and not funcs["_Z3addii"].entry and not funcs["_Z3subii"].entry
    kernel = funcs["_Z1kPKiPii"]
    sites = [ir.call_site(c) for c in calls(kernel)]
    assert len(sites) == 3 and all(c.opcode == "call" for c in calls(kernel))
    assert all(isinstance(s.callee, ir.Reg) and s.prototype for s in sites)
    protos = {p.name: p for p in kernel.prototypes}
    assert [len(protos[s.prototype].params) for s in sites] == [2, 1, 1]
    movs = [i.operands[1] for i in kernel.body if isinstance(i, ir.Instr) and i.opcode == "mov.u64"
            and isinstance(i.operands[1], ir.Symbol)]
    assert {m.name for m in movs} == {"_Z3addii", "_Z3subii", "_Z5twicei"}


def test_function_pointer_in_a_ternary_selects_the_address():
    module = compile_source(POINTERS)
    kernel = module.functions[-1]
    text = print_module(module)
    assert "mov.u64" in text and "_Z3subii" in text and "_Z3addii" in text
    # the pointer reaching the two-argument call is one register, chosen by the condition
    site = ir.call_site(calls(kernel)[0])
    assert isinstance(site.callee, ir.Reg)


def test_forward_declaration_for_a_later_function():
    source = """
    __device__ int even(int n);
    __device__ int odd(int n) { return n == 0 ? 0 : even(n - 1); }
    __device__ int even(int n) { return n == 0 ? 1 : odd(n - 1); }
    __global__ void k(int* out) { out[threadIdx.x] = even(threadIdx.x); }
    """
    module = compile_source(source)
    kinds = [(f.name, f.defined) for f in module.functions]
    assert kinds[0][1] is False and kinds.count((kinds[0][0], True)) == 1   # declared, then defined
    assert ("_Z3oddi", True) in kinds and ("_Z4eveni", True) in kinds
    assert sum(1 for _, defined in kinds if not defined) == 1


@pytest.mark.parametrize("source, message", [
    ("__global__ void child(int* a) { a[0] = 1; }\ntypedef void (*kfn)(int* p);\n"
     "__global__ void k(int* a) { kfn g = child; }\n",
     "calls.cu:3:37: error: unsupported feature: the address of the __global__ function 'child' in device code"),
    ("int hostf(int x) { return x; }\ntypedef int (*unop)(int);\n"
     "__global__ void k(int* a) { unop h = &hostf; a[0] = h(1); }\n",
     "calls.cu:3:39: error: a __host__ function(\"hostf\") cannot be used as a function pointer"),
    ("__device__ int f(int x) { return x; }\n__global__ void k(int* a) { int v = 3; a[0] = v(1); }\n",
     "calls.cu:2:47: error: called object type 'int' is not a function"),
])
def test_unsupported_function_pointers_are_diagnosed(source, message):
    with pytest.raises(CompileError) as info:
        compile_source(source)
    text = info.value.format()
    assert text.startswith(message) and "^" in text


@pytest.mark.oracle
def test_ptxas_accepts_calls(tmp_path):
    for source in (RECURSIVE, POINTERS):
        assert_ptxas_accepts(compile_source(source), tmp_path)
    path = TESTSUITE / "isa_calls.cu"
    assert_ptxas_accepts(compile_cuda(path.read_text(), str(path))[0], tmp_path)


@pytest.mark.oracle
def test_isa_calls_computes_what_nvcc_computes():
    from test_frontend_emu import cubins, run
    from ptxc.launch import differences
    path = TESTSUITE / "isa_calls.cu"
    ours, theirs = cubins(path)
    expected = run(theirs, path, "nvcc")
    got = run(ours, path, "ptxc")
    for buffer, values in expected.buffers.items():
        assert not differences(buffer, got.buffers[buffer], values, expected.ulp.get(buffer, 0)), buffer
