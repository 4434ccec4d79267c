"""The CUDA frontend: preprocessor, parser, sema, mangling, PTX codegen, diagnostics.

Expectations about NVIDIA's output come from the oracle at test time (marked
`oracle`): nvcc's PTX for the same file, ptxas's verdict on ours.
"""
from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.diagnostics import CompileError
from ptxc.frontend import ast as A
from ptxc.frontend import compile_cuda, parse_cuda
from ptxc.frontend import sema as S
from ptxc.frontend.mangle import mangle_function
from ptxc.frontend.preprocess import preprocess
from ptxc.ptx import ir
from ptxc.ptx.parser import parse_ptx
from ptxc.ptx.printer import print_module

from conftest import ROOT, TESTSUITE
from ptxc.launch.spec import parse_file
from ptxc.emu.names import matching_symbols, resolve_instance_name

# The testsuite kernels this frontend compiles today (the isa_*.cu files exercise the
# full language: inline asm, warp shuffles, half, local memory; a later issue).
FRONTEND_KERNELS = ["vadd.cu", "saxpy.cu", "reduce_shared.cu", "matmul_naive.cu", "histogram.cu",
                    "stencil_1d.cu", "collatz.cu", "clamp_math.cu", "arith_types.cu", "control_flow.cu"] + \
    sorted(p.name for p in TESTSUITE.glob("fe_*.cu"))
# Kernels whose PTX is nvcc's, instruction for instruction (a regression guard).
IDENTICAL_TO_NVCC = ["vadd.cu", "histogram.cu"]
ERROR_CASES = sorted((TESTSUITE / "errors").glob("*.cu"))


def compile_file(name: str) -> ir.Module:
    path = TESTSUITE / name
    module, _ = compile_cuda(path.read_text(), str(path))
    return module


def compile_kernel(name: str) -> ir.Function:
    module = compile_file(name)
    assert len(module.functions) == 1
    return module.functions[0]


def kernel(source: str) -> ir.Function:
    module, _ = compile_cuda(source, "test.cu")
    assert len(module.functions) == 1
    return module.functions[0]


def opcodes(func: ir.Function) -> list[str]:
    return [i.opcode for i in func.instrs()]


def expr_of(source_expr: str, decls: str = "int i; unsigned u; float f; double d; char c; long l;"
                                            " float* p; bool b;") -> A.Expr:
    """The typed AST of one expression, inside a host function with `decls`."""
    program, _ = parse_cuda(f"void t() {{ {decls} ({source_expr}); }}", "expr.cu")
    return program.items[0].body.items[-1].expr


def bare(e: A.Expr) -> A.Expr:
    while isinstance(e, A.ImplicitCast):
        e = e.operand
    return e


def instruction_list(func: ir.Function) -> list:
    return [(i.opcode, tuple(_comparable(op) for op in i.operands), i.guard, i.guard_negated)
            if isinstance(i, ir.Instr) else ("label", i.name) for i in func.body]


def _comparable(op):
    """An operand that compares equal to itself (a NaN immediate by its bits)."""
    if isinstance(op, ir.Imm) and isinstance(op.value, float):
        return ("imm", struct.pack("<d", op.value), op.type)
    return op


# ---- preprocessor ------------------------------------------------------------------------

def test_preprocessor_keeps_line_count_and_strips_comments():
    src = "a /* one\ntwo */ b // three\n#define N 4\nint x[N];\n"
    text, pp = preprocess(src, "p.cu")
    assert not pp.diagnostics
    assert text.count("\n") == src.count("\n")
    assert text.splitlines()[0].rstrip() == "a"
    assert text.splitlines()[1].strip() == "b"
    assert text.splitlines()[3] == "int x[4];"


def test_preprocessor_function_macros_and_conditionals():
    src = """#define SQ(x) ((x) * (x))
#define STR(x) #x
#define CAT(a, b) a##b
#if defined(SQ) && SQ(3) == 9
int ok = SQ(1 + 2);
#else
int bad;
#endif
#ifndef NOPE
const char* s = STR(hi there);
int CAT(var, 1);
#endif
"""
    text, pp = preprocess(src, "p.cu")
    assert not pp.diagnostics
    lines = text.splitlines()
    assert lines[4] == "int ok = ((1 + 2) * (1 + 2));"
    assert "bad" not in text
    assert lines[9] == 'const char* s = "hi there";'
    assert lines[10] == "int var1;"


def test_preprocessor_accepts_known_headers_and_rejects_others():
    _, pp = preprocess("#include <stdio.h>\n#include <cuda_runtime.h>\n#include <stdlib.h>\n", "p.cu")
    assert not pp.diagnostics
    _, pp = preprocess("#include \"mine.h\"\n", "p.cu")
    assert pp.diagnostics and pp.diagnostics[0].loc.line == 1


def test_preprocessor_multiline_macro_call():
    text, pp = preprocess("#define ADD(a, b) a + b\nint x = ADD(1,\n 2);\nint y;\n", "p.cu")
    assert not pp.diagnostics
    assert text.splitlines()[1] == "int x = 1 + 2;"
    assert text.splitlines()[3] == "int y;"


# ---- parser -------------------------------------------------------------------------------

def test_parse_seed_program_with_host_main():
    program, analyzer = parse_cuda((TESTSUITE / "vadd.cu").read_text(), "vadd.cu")
    names = [item.declarator.name for item in program.items if isinstance(item, A.FunctionDef)]
    assert names == ["vadd", "main"]
    main = program.items[1]
    kinds = [type(s).__name__ for s in main.body.items]
    assert kinds[:4] == ["Declaration", "Declaration", "Declaration", "ForStmt"]
    launch = next(s.expr for s in main.body.items if isinstance(s, A.ExprStmt) and isinstance(s.expr, A.Launch))
    assert [c.operand.value if isinstance(c, A.ImplicitCast) else c.value for c in launch.config] == [4096, 256]
    assert len(launch.args) == 4
    # a[i] = b[i] = 1.0f is right-associative
    loop = main.body.items[3]
    assert isinstance(loop.body.expr, A.Assign) and isinstance(loop.body.expr.value, A.Assign)


def test_binary_precedence_and_associativity():
    e = expr_of("i + i * i - i << 2 < 5 && i | 3 == 3 || !i")
    assert e.op == "||"
    assert e.lhs.op == "&&"
    assert e.lhs.lhs.op == "<" and e.lhs.lhs.lhs.op == "<<"
    shift = e.lhs.lhs.lhs
    assert shift.lhs.op == "-" and shift.lhs.lhs.op == "+"     # (i + i*i) - i
    assert shift.lhs.lhs.rhs.op == "*"
    assert e.lhs.rhs.op == "|" and bare(e.lhs.rhs.rhs).op == "=="   # bool -> int for |


def test_typedef_names_casts_and_declarators():
    src = """typedef unsigned int uint;
typedef float real;
struct Pair { int a; real b; };
__device__ uint f(const real* __restrict__ p, uint n, int (*table)[4]) { return (uint)p[n] + sizeof(Pair); }
"""
    program, _ = parse_cuda(src, "t.cu")
    fdef = program.items[-1]
    ftype = fdef.symbol.type
    assert S.type_name(ftype.params[0]) == "const float * __restrict__"
    assert ftype.params[1] == S.UINT
    assert isinstance(ftype.params[2], S.PointerType) and isinstance(ftype.params[2].pointee, S.ArrayType)


def test_dangling_else_binds_to_nearest_if():
    program, _ = parse_cuda("void t(int a, int b) { if (a) if (b) a = 1; else a = 2; }", "t.cu")
    outer = program.items[0].body.items[0]
    assert outer.else_ is None and outer.then.else_ is not None


def test_cpp_constructs_in_host_code():
    src = """__global__ void k(float* a) {}
int main() {
    dim3 block(16, 16);
    dim3 grid((100 + 15) / 16, 4);
    float* d = nullptr_like();
    k<<<grid, block>>>(d);
    k<<<dim3(2), 32, 0>>>(d);
    return 0;
}
float* nullptr_like();
"""
    with pytest.raises(CompileError) as info:  # nullptr_like is used before it is declared
        parse_cuda(src, "t.cu")
    assert "nullptr_like" in info.value.diagnostics[0].message
    program, _ = parse_cuda(src.replace("float* nullptr_like();\n", "").replace(
        "int main", "float* nullptr_like() { return 0; }\nint main"), "t.cu")
    assert any(isinstance(item, A.FunctionDef) and item.declarator.name == "main" for item in program.items)


# ---- sema ---------------------------------------------------------------------------------

@pytest.mark.parametrize("expr,type_", [
    ("i + u", "unsigned int"), ("c + c", "int"), ("i * l", "long"), ("f + i", "float"),
    ("d * f", "double"), ("i < f", "bool"), ("p + i", "float *"), ("p - p", "long"),
    ("*p", "float"), ("c << l", "int"), ("b ? i : f", "float"), ("sizeof(double)", "unsigned long"),
    ("-c", "int"), ("~u", "unsigned int"), ("(char)i", "char"), ("i++", "int"), ("p[i]", "float"),
    ("!p", "bool"), ("u >> 1", "unsigned int"), ("1u + 2l", "long"), ("0x80000000", "unsigned int"),
    ("2147483648", "long"), ("1.0f", "float"), ("1.0", "double"), ("'a'", "char"),
])
def test_expression_types(expr, type_):
    assert S.type_name(expr_of(expr).type) == type_


def test_implicit_conversions_are_explicit_nodes():
    e = expr_of("f = i + c")
    assert isinstance(e.value, A.ImplicitCast) and e.value.type == S.FLOAT
    add = e.value.operand
    assert isinstance(add.rhs, A.ImplicitCast) and add.rhs.type == S.INT and add.rhs.operand.type == S.CHAR


def test_usual_arithmetic_conversions():
    assert S.arithmetic_common(S.INT, S.UINT) == S.UINT
    assert S.arithmetic_common(S.LONG, S.UINT) == S.LONG
    assert S.arithmetic_common(S.ULONG, S.LLONG) == S.ULLONG
    assert S.arithmetic_common(S.SHORT, S.USHORT) == S.INT
    assert S.arithmetic_common(S.FLOAT, S.LONG) == S.FLOAT


def test_several_errors_in_one_run():
    src = "__global__ void k(int* a) { a[0] = x; a[1] = y; float* q = a; }"
    with pytest.raises(CompileError) as info:
        compile_cuda(src, "k.cu")
    messages = [d.message for d in info.value.diagnostics]
    assert messages == ["use of undeclared identifier 'x'", "use of undeclared identifier 'y'",
                        "cannot convert 'int *' to 'float *' when initializing"]


# ---- mangling -----------------------------------------------------------------------------

@pytest.mark.parametrize("params,expected", [
    ([S.PointerType(S.with_quals(S.FLOAT, const=True))] * 2 + [S.PointerType(S.FLOAT), S.INT],
     "_Z4vaddPKfS0_Pfi"),
    ([], "_Z4vaddv"),
    ([S.INT, S.UINT, S.LONG, S.ULONG, S.LLONG, S.ULLONG, S.SHORT, S.USHORT, S.CHAR, S.SCHAR, S.UCHAR, S.BOOL,
      S.FLOAT, S.DOUBLE], "_Z4vaddijlmxystcahbfd"),
    ([S.PointerType(S.PointerType(S.FLOAT)), S.PointerType(S.FLOAT), S.PointerType(S.PointerType(S.FLOAT))],
     "_Z4vaddPPfS_S0_"),
    ([S.PointerType(S.FLOAT, restrict=True), S.PointerType(S.with_quals(S.FLOAT, const=True), restrict=True)],
     "_Z4vaddPfPKf"),
    ([S.PointerType(S.with_quals(S.INT, const=True, volatile=True))], "_Z4vaddPVKi"),
])
def test_mangle(params, expected):
    assert mangle_function("vadd", params) == expected


@pytest.mark.oracle
def test_mangled_names_match_nvcc(tmp_path):
    src = """struct V { float x; };
__global__ void a(const float* p, const float* q, float* r, int n) {}
__global__ void b(unsigned char* p, long long n, unsigned long long m, short s, bool f) {}
__global__ void c(double** pp, double* p, const double* const* cpp, V* v, const V* cv) {}
__global__ void d() {}
__global__ void e(const int* __restrict__ p, volatile float* v, size_t n, char c, signed char sc) {}
"""
    path = tmp_path / "m.cu"
    path.write_text(src)
    oracle.nvcc_ptx(path, tmp_path / "m.ptx")
    theirs = re.findall(r"\.entry (\S+)\(", (tmp_path / "m.ptx").read_text())
    module, _ = compile_cuda(src, str(path))
    assert sorted(f.name for f in module.functions) == sorted(theirs)


@pytest.mark.oracle
def test_every_testsuite_kernel_has_nvccs_name(tmp_path):
    """Every kernel of every frontend testsuite file is mangled as nvcc mangles it (the
    cubins' symbols, which the launches look up, must be the same)."""
    for name in FRONTEND_KERNELS:
        path = TESTSUITE / name
        oracle.nvcc_ptx(path, tmp_path / "n.ptx")
        theirs = re.findall(r"\.entry (\S+)\(", (tmp_path / "n.ptx").read_text())
        module, _ = compile_cuda(path.read_text(), str(path))
        assert sorted(f.name for f in module.functions) == sorted(theirs), name


@pytest.mark.parametrize("name", [n for n in FRONTEND_KERNELS if n != "vadd.cu"])
def test_testsuite_kernels_say_how_to_launch_them(name):
    """Each kernel file carries LAUNCH lines (design.md), one per launch, naming a kernel
    of the file and giving one item per parameter."""
    path = TESTSUITE / name
    text = path.read_text()
    launches = parse_file(text, str(path))
    assert launches, f"{name} has no LAUNCH line"
    program, analyzer = parse_cuda(text, str(path))
    kernels = {f.mangled: f for f in analyzer.functions if f.is_kernel and f.definition is not None}
    for launch in launches:
        found = matching_symbols(list(kernels), resolve_instance_name(launch.kernel, text))
        assert len(found) == 1, f"{name}: no kernel '{launch.kernel}' (or more than one: {found})"
        assert len(launch.items) == len(kernels[found[0]].type.params), f"{name}: {launch.kernel}'s parameters"


# ---- code generation ---------------------------------------------------------------------

@pytest.mark.oracle
@pytest.mark.parametrize("name", IDENTICAL_TO_NVCC)
def test_ptx_equals_nvcc_instruction_for_instruction(name, tmp_path):
    """Same instructions, order, types, operands and register numbers as nvcc -ptx,
    same .reg declarations and parameter names."""
    nvcc_ptx = oracle.nvcc_ptx(TESTSUITE / name, tmp_path / "nvcc.ptx")
    theirs = parse_ptx(nvcc_ptx.read_text(), str(nvcc_ptx))
    ours = compile_file(name)
    assert [f.name for f in ours.functions] == [f.name for f in theirs.functions]
    for mine, nv in zip(ours.functions, theirs.functions):
        assert mine.params == nv.params
        assert mine.regs == nv.regs
        assert instruction_list(mine) == instruction_list(nv)


def test_vadd_register_numbering_rule():
    """Values live across blocks are numbered first (%r1 is the mad result, defined
    after the parameter loads), then the rest in order of definition."""
    func = compile_kernel("vadd.cu")
    assert func_regs(func) == [(".pred", "%p", 2), (".f32", "%f", 4), (".b32", "%r", 6), (".b64", "%rd", 11)]
    mad = next(i for i in func.instrs() if i.opcode == "mad.lo.s32")
    assert mad.operands == [ir.Reg("%r1"), ir.Reg("%r3"), ir.Reg("%r4"), ir.Reg("%r5")]
    loads = [i for i in func.instrs() if i.opcode.startswith("ld.param")]
    assert [i.operands[0].name for i in loads] == ["%rd1", "%rd2", "%rd3", "%r2"]
    assert opcodes(func) == [
        "ld.param.u64", "ld.param.u64", "ld.param.u64", "ld.param.u32", "mov.u32", "mov.u32", "mov.u32",
        "mad.lo.s32", "setp.ge.s32", "bra", "cvta.to.global.u64", "mul.wide.s32", "add.s64",
        "cvta.to.global.u64", "add.s64", "ld.global.f32", "ld.global.f32", "add.f32", "cvta.to.global.u64",
        "add.s64", "st.global.f32", "ret"]
    assert func.name == "_Z4vaddPKfS0_Pfi"
    assert [p.name for p in func.params] == [f"_Z4vaddPKfS0_Pfi_param_{k}" for k in range(4)]


def func_regs(func: ir.Function) -> list:
    return [(d.type, d.prefix, d.count) for d in func.regs]


@pytest.mark.oracle
@pytest.mark.parametrize("name", FRONTEND_KERNELS)
def test_ptxas_accepts_testsuite_kernel(name, tmp_path):
    module = compile_file(name)
    ptx = tmp_path / (Path(name).stem + ".ptx")
    ptx.write_text(print_module(module))
    oracle.ptxas(ptx, tmp_path / "out.cubin")


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["saxpy.cu", "collatz.cu"])
def test_ptxas_accepts_sm90_and_older_ptx_version(name, tmp_path):
    path = TESTSUITE / name
    module, _ = compile_cuda(path.read_text(), str(path), arch="sm_90", ptx_version="9.0")
    assert module.target == "sm_90" and module.version == "9.0"
    ptx = tmp_path / "k.ptx"
    ptx.write_text(print_module(module))
    oracle.ptxas(ptx, tmp_path / "out.cubin", arch="sm_90")


@pytest.mark.parametrize("name", FRONTEND_KERNELS)
def test_printed_ptx_parses_back_to_the_same_module(name):
    module = compile_file(name)
    text = print_module(module)
    again = parse_ptx(text, name)
    assert print_module(again) == text
    for mine, parsed in zip(module.functions, again.functions):
        assert instruction_list(mine) == instruction_list(parsed)


def test_kernel_pointer_parameters_are_global_and_restrict_const_is_nc():
    func = compile_kernel("saxpy.cu")
    ops = opcodes(func)
    assert "ld.global.nc.f32" in ops and "st.global.f32" in ops
    assert "fma.rn.f32" in ops


def test_shared_memory_is_a_demoted_variable_with_32_bit_addresses():
    func = compile_kernel("reduce_shared.cu")
    assert [(v.state, v.name, v.array) for v in func.vars] == \
        [(".shared", "_ZZ12block_reducePKfPfiE3buf", 1024)]
    shared = [i for i in func.instrs() if i.opcode.startswith(("ld.shared", "st.shared"))]
    assert shared and all(op.base.name.startswith(("%r", "_ZZ")) and not op.base.name.startswith("%rd")
                          for i in shared for op in i.operands if isinstance(op, ir.Address))
    assert "bar.sync" in opcodes(func)


def test_device_functions_are_inlined_and_constants_fold():
    func = compile_kernel("stencil_1d.cu")
    assert all(not i.opcode.startswith("call") for i in func.instrs())
    # weight(0) * in[i] with weight folded to 0.5f
    assert any(isinstance(op, ir.Imm) and op.value == 0.5 for i in func.instrs() for op in i.operands)


def test_loops_are_rotated_with_a_guard():
    func = kernel("""__global__ void k(int* a, int n) {
        for (int j = 0; j < n; j++) a[j] = j;
    }""")
    ops = opcodes(func)
    assert ops.count("bra") == 2            # the guard and the back edge
    labels = [i.name for i in func.body if isinstance(i, ir.Label)]
    branches = [i for i in func.instrs() if i.base == "bra"]
    assert branches[0].operands[0].name == labels[-1]      # the guard skips the loop
    assert branches[1].operands[0].name == labels[0]       # the back edge
    setps = [i for i in func.instrs() if i.base == "setp"]
    assert setps[0].opcode == "setp.lt.s32" and setps[0].operands[2] == ir.Imm(1)   # !(0 < n): n < 1


@pytest.mark.parametrize("source,expected", [
    ("a[i] = a[i] / 8;", ["shr.s32", "shr.u32", "add.s32", "shr.s32"]),
    ("a[i] = (unsigned)a[i] % 16u;", ["and.b32"]),
    ("a[i] = a[i] * 8;", ["shl.b32"]),
    ("int v = a[i]; a[i] = v > 3 ? v : 3;", ["max.s32"]),
    ("a[i] = min(a[i], 7);", ["min.s32"]),
    ("a[i] = atomicAdd(&a[0], 1);", ["atom.global.add.u32"]),
])
def test_integer_idioms(source, expected):
    func = kernel(f"__global__ void k(int* a) {{ int i = threadIdx.x; {source} }}")
    ops = opcodes(func)
    for opcode in expected:
        assert opcode in ops


def test_loads_move_only_ahead_of_their_first_use():
    """Two loads feeding one instruction are grouped before it, but never past an
    earlier reader of their values (a bug the GPU comparison once caught)."""
    func = kernel("""__global__ void k(const int* a, const int* b, long* out, int n) {
        int i = threadIdx.x;
        if (i < n) { int x = a[i], y = b[i]; long l = (long)x * 3; out[i] = l + x / y; }
    }""")
    defined = set()
    for instr in func.instrs():
        for op in instr.operands[1:] + [instr.guard]:
            base = op.base if isinstance(op, ir.Address) else op
            if isinstance(base, ir.Reg):
                assert base in defined, f"{base.name} read before it is written: {instr.opcode}"
        if instr.operands and isinstance(instr.operands[0], ir.Reg) and not instr.opcode.startswith("st"):
            defined.add(instr.operands[0])


def test_generated_ptx_has_no_undeclared_registers():
    for name in FRONTEND_KERNELS:
        module = compile_file(name)
        for func in module.functions:
            for instr in func.instrs():
                for op in instr.operands + ([instr.guard] if instr.guard else []):
                    base = op.base if isinstance(op, ir.Address) else op
                    if isinstance(base, ir.Reg):
                        assert func.reg_type(base) is not None, (name, instr)


# ---- the fuller language: aggregates, memory, loops, builtins -----------------------------

def test_small_constant_loops_unroll_and_pragma_unroll_1_keeps_a_loop():
    func = kernel("""__global__ void k(const float* in, float* out) {
        int i = threadIdx.x;
        float s = 0.0f;
        for (int k = 0; k < 4; k++) s += in[i + k];
        int bits = 0;
    #pragma unroll 1
        for (int k = 0; k < 8; k++) bits += (i >> k) & 1;
        out[i] = s + bits;
    }""")
    ops = opcodes(func)
    assert ops.count("ld.global.f32") == 4                    # unrolled: one load per iteration
    assert sum(op.startswith("bra") for op in ops) == 1      # the one loop left: its back edge
    offsets = sorted(op.offset for i in func.instrs() for op in i.operands
                     if isinstance(op, ir.Address) and i.opcode == "ld.global.f32")
    assert offsets == [0, 4, 8, 12]                           # in[i + k] folds k into the address


def test_local_arrays_in_registers_unless_indexed_at_run_time():
    func = kernel("""__global__ void k(const float* in, const int* sel, float* out) {
        int i = threadIdx.x;
        float r[4];
        for (int k = 0; k < 4; k++) r[k] = in[i] * k;
        float m[4];
        for (int k = 0; k < 4; k++) m[k] = in[i] + k;
        out[i] = r[0] + r[3] + m[sel[i] & 3];
    }""")
    assert [(v.state, v.array) for v in func.vars] == [(".local", 16)]   # only m
    assert any(i.opcode == "ld.local.f32" for i in func.instrs())
    assert all(i.opcode != "st.local.f32" or i.operands[0].offset < 16 for i in func.instrs())


def test_structs_split_into_registers_and_struct_parameters_read_in_place():
    func = kernel("""struct P { float x, y; int id; };
    __device__ P twice(P p) { p.x *= 2.0f; p.y *= 2.0f; return p; }
    __global__ void k(P p, P* out) {
        P q = twice(p);
        out[threadIdx.x] = q;
    }""")
    assert func.params[0].type == ".b8" and func.params[0].array == 12 and func.params[0].align == 4
    loads = [i for i in func.instrs() if i.opcode.startswith("ld.param") and "param_0" in i.operands[1].base.name]
    assert sorted(i.operands[1].offset for i in loads) == [0, 4, 8]
    assert not func.vars and "mov.f32" not in opcodes(func)  # no frame, no copies


def test_pointer_to_a_local_passed_to_an_inlined_function_stays_in_registers():
    func = kernel("""__device__ void divmod(int a, int b, int* q, int* r) { *q = a / b; *r = a % b; }
    __global__ void k(int* out) {
        int q, r;
        divmod(out[0], 7, &q, &r);
        out[1] = q * 10 + r;
    }""")
    assert not func.vars
    assert not any(".local" in i.opcode for i in func.instrs())


def test_module_scope_variables():
    module, _ = compile_cuda("""__constant__ float coeffs[3] = {1.0f, 0.5f, 0.25f};
    __device__ unsigned hits;
    __global__ void k(float* out) {
        out[threadIdx.x] = coeffs[1] + coeffs[threadIdx.x % 3];
        atomicAdd(&hits, 1u);
    }""", "m.cu")
    variables = {v.name: v for v in module.globals}
    assert variables["coeffs"].state == ".const" and variables["coeffs"].array == 12
    assert [b.value for b in variables["coeffs"].init[4:8]] == [0, 0, 0, 63]   # 0.5f
    assert variables["hits"].state == ".global" and variables["hits"].type == ".u32"
    ops = opcodes(module.functions[0])
    assert "ld.const.f32" in ops and "atom.global.add.u32" in ops


def test_value_numbering_across_blocks_respects_writes_and_stores():
    func = kernel("""__global__ void k(int* p, int x, int c) {
        int a = x * 3;
        if (c) x = 5;
        int v = p[1];
        if (c) p[1] = 7;
        p[0] = a + x * 3 + v + p[1];
    }""")
    ops = opcodes(func)
    assert ops.count("ld.global.u32") == 2           # p[1] is read again after the store
    assert ops.count("mul.lo.s32") + ops.count("mad.lo.s32") == 2   # x * 3 again after x = 5


def test_loop_invariant_address_arithmetic_is_hoisted():
    func = kernel("""__global__ void k(int* p, int x, int n) {
        for (int i = 0; i < n; i++) p[i] = x % 7;
    }""")
    body = func.body
    loop_top = next(k for k, item in enumerate(body) if isinstance(item, ir.Label))
    hoisted = [i.opcode for i in body[:loop_top] if isinstance(i, ir.Instr)]
    assert "cvta.to.global.u64" in hoisted and "rem.s32" in hoisted


def test_warp_shuffle_of_a_double_moves_two_halves():
    func = kernel("""__global__ void k(double* d) {
        d[threadIdx.x] = __shfl_down_sync(0xffffffff, d[threadIdx.x], 2, 16);
    }""")
    shuffles = [i for i in func.instrs() if i.opcode == "shfl.sync.down.b32"]
    assert len(shuffles) == 2
    assert all(i.operands[3] == ir.Imm((32 - 16) << 8 | 31) for i in shuffles)


def test_inline_asm_gets_the_final_register_names():
    func = kernel("""__global__ void k(unsigned* out) {
        unsigned lane;
        asm("mov.u32 %0, %%laneid;" : "=r"(lane));
        out[threadIdx.x] = lane;
    }""")
    text = [i.opcode for i in func.instrs() if "laneid" in i.opcode]
    assert len(text) == 1 and re.search(r"mov\.u32 %r\d+, %laneid;", text[0])


@pytest.mark.oracle
def test_fma_contraction_and_operand_order_match_nvcc(tmp_path):
    """Which product an add fuses with decides the result's bits: NVPTX fuses the first
    operand, in LLVM Reassociate's order (see docs/frontend.md)."""
    src = """__global__ void k1(float* F, const float* k, const float* f) { int i = threadIdx.x; float x = f[i]; float m = k[i]; F[0] = m * 0.001f + 2.0f * x; }
__global__ void k2(float* F, const float* k, const float* f) { int i = threadIdx.x; float m = k[i]; float x = f[i]; F[0] = m * 0.001f + 3.0f * x; }
__global__ void k3(float* F, float m, const float* f) { int i = threadIdx.x; float x = f[i]; F[0] = m * 0.001f + 3.0f * x; }
__global__ void k4(float* o, float a, float b, float c) { float t = a * b; o[0] = t + c; o[1] = t + 1.0f; }
__global__ void k5(float* o, float a, float b, float c) { float t = a * b; o[0] = t + c; o[1] = t; }
__global__ void k6(float* o, float a, float b, float c, float d) { o[0] = a * b - c * d; o[1] = a * 2.0f + c * d; }
"""
    path = tmp_path / "f.cu"
    path.write_text(src)
    theirs = parse_ptx(oracle.nvcc_ptx(path, tmp_path / "f.ptx").read_text(), "f.ptx")
    ours, _ = compile_cuda(src, str(path))

    def arithmetic(func):
        return [(i.opcode, tuple(op for op in i.operands[1:])) for i in func.instrs()
                if i.opcode.split(".")[0] in ("fma", "mul", "add", "sub") and i.opcode.endswith("f32")]
    for mine, nv in zip(ours.functions, theirs.functions):
        assert arithmetic(mine) == arithmetic(nv), mine.name


@pytest.mark.oracle
def test_libdevice_expf_is_nvccs_code(tmp_path):
    src = "__global__ void k(const float* in, float* out) { out[threadIdx.x] = expf(in[threadIdx.x]); }\n"
    path = tmp_path / "e.cu"
    path.write_text(src)
    theirs = parse_ptx(oracle.nvcc_ptx(path, tmp_path / "e.ptx").read_text(), "e.ptx")
    ours, _ = compile_cuda(src, str(path))
    assert sorted(opcodes(ours.functions[0])) == sorted(opcodes(theirs.functions[0]))


# ---- diagnostics ---------------------------------------------------------------------------

def expected_errors(path: Path) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^// ERROR: (.*)$", path.read_text(), re.M)]


@pytest.mark.parametrize("path", ERROR_CASES, ids=[p.name for p in ERROR_CASES])
def test_error_cases(path):
    """Each testsuite/errors file names the diagnostics it must produce, in order."""
    with pytest.raises(CompileError) as info:
        compile_cuda(path.read_text(), str(path))
    got = [f"{d.loc.line}:{d.loc.col}: {d.message}" for d in info.value.diagnostics]
    assert got == expected_errors(path)
    text = info.value.format()
    assert text.startswith(f"{path}:") and "^" in text


@pytest.mark.oracle
def test_cuda_function_list_is_the_headers():
    """cuda_functions.txt is what scripts/learn_cuda_functions.py reads from the pinned
    CUDA headers now (the names sema calls CUDA's, never typed by hand)."""
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "learn_cuda_functions.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.oracle
def test_unsupported_cuda_functions_are_cuda_functions(tmp_path):
    """What ptxc reports as an unsupported CUDA function, nvcc compiles; what it
    reports as undeclared, nvcc rejects as undeclared too."""
    source = (TESTSUITE / "errors" / "unsupported_cuda_function.cu").read_text()
    unsupported = re.findall(r"unsupported feature: the CUDA function '(\w+)'", source)
    undeclared = re.findall(r"use of undeclared identifier '(\w+)'", source)
    assert unsupported and undeclared
    kept = [line for line in source.splitlines() if not any(f"{name}(" in line for name in undeclared)]
    path = tmp_path / "ok.cu"
    path.write_text("\n".join(kept) + "\n")
    oracle.nvcc_ptx(path, tmp_path / "ok.ptx")       # raises if nvcc rejects it
    path.write_text(source)
    result = oracle.run("nvcc", "-ptx", "-arch=sm_89", str(path), "-o", str(tmp_path / "bad.ptx"), check=False)
    assert result.returncode != 0
    for name in undeclared:
        assert f'identifier "{name}" is undefined' in result.stderr + result.stdout


def test_error_formatting_shows_line_and_caret():
    with pytest.raises(CompileError) as info:
        compile_cuda("__global__ void k(int* a) {\n    a[0] = b;\n}\n", "k.cu")
    assert info.value.format() == "k.cu:2:12: error: use of undeclared identifier 'b'\n    a[0] = b;\n           ^"


# ---- robustness: mutated kernels -------------------------------------------------------------

_TYPE_WORD = re.compile(r"\b(int|float|double|char|unsigned|long|bool|size_t)\b(?!\s*\()")
_BINARY_OP = re.compile(r"(?<=\s)(\+|-|\*|/|%|<<|>>|&|\||\^|<|>|<=|>=|==|!=|&&|\|\|)(?=\s)")
_ASSIGN_OP = re.compile(r"(?<=\s)(=|\+=|-=|\*=|/=|%=|<<=|>>=|&=|\|=|\^=)(?=\s)")
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+\.?\d*f?|<<=|>>=|<<|>>|->|\+\+|--|&&|\|\||[<>=!]=|\S")


def mutants(seed: int, count: int):
    """Testsuite kernels with types, operators or tokens swapped or dropped."""
    import random
    rng = random.Random(seed)
    sources = [(TESTSUITE / name).read_text() for name in FRONTEND_KERNELS]
    types = ["int", "float", "double", "char", "unsigned", "long", "bool", "short", "unsigned char",
             "size_t", "long long", "signed char"]
    binary = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", ">", "<=", ">=", "==", "!=", "&&", "||"]
    assign = ["=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="]
    for _ in range(count):
        text = rng.choice(sources)
        for _ in range(rng.randint(1, 4)):
            pick = rng.random()
            if pick < 0.8:
                pattern, choices = ((_TYPE_WORD, types) if pick < 0.4 else
                                    (_BINARY_OP, binary) if pick < 0.65 else (_ASSIGN_OP, assign))
                found = list(pattern.finditer(text))
                if found:
                    m = rng.choice(found)
                    text = text[:m.start()] + rng.choice(choices) + text[m.end():]
            else:
                tokens = list(_TOKEN.finditer(text))
                m = rng.choice(tokens)
                other = rng.choice(tokens).group()
                text = text[:m.start()] + ("" if pick < 0.9 else other) + text[m.end():]
        yield text


def test_mutated_kernels_get_diagnostics_never_tracebacks():
    for text in mutants(seed=1, count=300):
        try:
            compile_cuda(text, "mutant.cu")
        except CompileError as err:
            assert err.diagnostics and all(d.loc is not None for d in err.diagnostics)
            assert not any("internal error" in d.message for d in err.diagnostics), err.format()
            err.format()


@pytest.mark.oracle
def test_ptxas_accepts_mutated_kernels_that_compile(tmp_path):
    accepted = 0
    for k, text in enumerate(mutants(seed=2, count=80)):
        try:
            module, _ = compile_cuda(text, "mutant.cu")
        except CompileError:
            continue
        ptx = tmp_path / "m.ptx"
        ptx.write_text(print_module(module))
        result = oracle.run("ptxas", "-arch=sm_89", "-o", str(tmp_path / "m.cubin"), str(ptx), check=False)
        assert result.returncode == 0, f"{result.stderr}\n--- source ---\n{text}"
        accepted += 1
    assert accepted >= 20


# ---- speed and imports ----------------------------------------------------------------------

def test_compiling_does_not_import_numba():
    code = ("import sys; from ptxc.frontend import compile_cuda; "
            f"compile_cuda(open({str(TESTSUITE / 'vadd.cu')!r}).read(), 'vadd.cu'); "
            "assert 'numba' not in sys.modules, 'numba imported'")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
