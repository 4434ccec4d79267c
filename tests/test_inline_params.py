"""A callee's write to its by-value parameter must not reach the caller (issue 16).

The frontend inlines __device__ functions and lets a parameter take over the
argument's register when nothing else names it; value numbering could still hand
that register out as the argument expression's value, after the callee had changed
it: at the join after an `if` whose arm called `h0((unsigned)c0)` (`x0 += 2u` in
h0: `c0` came back as `ca[i] + 2`), and in the next iteration of a loop.  Generated
here: every parameter type x every kind of write (compound assignment, ++/--,
assignment, a write through the parameter's address), the argument converted from
another type, its value used before and after the call, the call under a branch,
in a loop and straight; compared with nvcc on the emulator, sm_89 and sm_90."""
from __future__ import annotations

import pytest

from ptxc import oracle
from ptxc.cli.check import check_command

pytestmark = [pytest.mark.oracle,
              pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")]

TYPES = ["int", "unsigned", "long long", "unsigned long long", "short", "unsigned short", "signed char",
         "unsigned char", "bool", "float", "double"]
WRITES = {   # kind -> (the write for most types, for bool)
    "compound": ("p += ({t})2; p *= ({t})3;", "p ^= true;"),
    "incdec": ("p++; --p; ++p;", "p = !p;"),
    "assign": ("p = ({t})(p + ({t})5);", "p = false;"),
    "address": ("{{ {t} *q = &p; *q = ({t})(*q + ({t})1); }}", "{{ bool *q = &p; *q = !*q; }}"),
}
ISSUE = """// LAUNCH: k grid=1 block=64 ca=u8[64]:rand a=i32[64]:rand out=u64[64]:zero o2=u32[64]:zero
__device__ unsigned long long h0(unsigned x0) { x0 += 2u; return (-(unsigned long long)x0) * x0; }
__global__ void k(const unsigned char *ca, const int *a, unsigned long long *out, unsigned *o2) {
    int i = threadIdx.x;
    unsigned char c0 = ca[i];
    unsigned long long r = (unsigned)c0;
    if (a[i] & 1) r = h0((unsigned)c0);
    out[i] = r;
    o2[i] = (unsigned)c0;
}
"""


def as_u64(t: str, v: str) -> str:
    return f"(unsigned long long)(long long)({v} * 4.0)" if t in ("float", "double") else f"(unsigned long long)({v})"


def kernel(kind: str) -> str:
    """One helper per parameter type writing its parameter the `kind` way; the caller's
    variable of the type before it is converted to the parameter's type."""
    n = len(TYPES)
    lines = [f"// LAUNCH: k grid=1 block=64 a=i32[64]:rand b=i32[64]:rand out=u64[{64 * (2 * n + 1)}]:zero"]
    for k, t in enumerate(TYPES):
        write = WRITES[kind][1 if t == "bool" else 0].format(t=t)
        lines += [f"__device__ unsigned long long h{k}({t} p) {{ {write} return {as_u64(t, 'p')}; }}"]
    lines += ["__global__ void k(const int *a, const int *b, unsigned long long *out) {",
              "    int i = threadIdx.x, x = a[i], y = b[i];",
              "    unsigned long long r = 0;"]
    lines += [f"    {t} c{k} = ({t})((x >> {k}) & 0xfff);" for k, t in enumerate(TYPES)]
    for k, t in enumerate(TYPES):
        source = (k + 1) % n
        arg = f"({t})c{source}"
        seen = f"r = r * 3u + {as_u64(t, arg)};"
        shape = (f"if ((y & {1 << (k % 5)}) != 0) r += h{k}({arg});",
                 f"for (int j = 0; j < (y & 3); j++) r += h{k}({arg});",
                 f"r += h{k}({arg});")[k % 3]
        lines += [f"    {seen}", f"    {shape}", f"    {seen}",
                  f"    if (y & 32) r += h{k}(c{source});", f"    r = r * 5u + {as_u64(TYPES[source], f'c{source}')};"]
    lines += [f"    out[i * {2 * n + 1} + {k}] = {as_u64(t, f'c{k}')};" for k, t in enumerate(TYPES)]
    lines += [f"    out[i * {2 * n + 1} + {n + k}] = {as_u64(t, f'({t})(c{k} + 1)')};" for k, t in enumerate(TYPES)]
    lines += [f"    out[i * {2 * n + 1} + {2 * n}] = r;", "}"]
    return "\n".join(lines) + "\n"


def check(source: str, arch: str, tmp_path, capsys, name: str) -> None:
    path = tmp_path / f"{name}.cu"
    path.write_text(source)
    status = check_command([str(path), f"-arch={arch}"])
    out = capsys.readouterr().out
    assert status == 0, out + "\n" + source


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_issue_case(arch, tmp_path, capsys):
    check(ISSUE, arch, tmp_path, capsys, "issue")


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("kind", sorted(WRITES))
def test_parameter_writes_stay_in_the_callee(kind, arch, tmp_path, capsys):
    check(kernel(kind), arch, tmp_path, capsys, kind)


def deep_sum(depth: int) -> str:
    expr = "x" + "".join(f" + (a[{k % 4}]" for k in range(depth)) + ")" * depth
    return ("// LAUNCH: k grid=1 block=32 a=i32[4]:randint(0,9) o=i32[32]:zero\n"
            f"__global__ void k(const int *a, int *o) {{ int x = threadIdx.x; o[x] = {expr}; }}\n")


def test_an_expression_3000_deep_compiles_as_nvccs_does(tmp_path, capsys):
    """Issue 16: nesting 495 deep was an internal error (RecursionError in sema); nvcc
    takes 3,000.  Far deeper input is a diagnostic, not a traceback."""
    check(deep_sum(3000), "sm_89", tmp_path, capsys, "deep")
    from ptxc.diagnostics import CompileError
    from ptxc.frontend import compile_cuda
    with pytest.raises(CompileError, match="unsupported feature: code nested more than"):
        compile_cuda(deep_sum(60000), "deeper.cu")
