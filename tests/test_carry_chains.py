"""PTX carry chains (add.cc, addc, sub.cc, subc, mad.cc, madc) on the emulator.

A kernel of inline-PTX chains is compiled by nvcc to PTX, then by ptxas and by ptxc;
both cubins run on the emulator and every result must equal the same computation
on Python integers: 128-bit add, subtract and multiply-add from 32-bit words, the
same from 64-bit words (a 64x128-bit multiply-add), immediates, a mixed add/subc
chain and a guarded link.  ptxas agreeing with the Python model checks the model;
ptxc agreeing with it checks the lowering.  The lit tests testsuite/lower/carry_*.ptx
pin the instructions chosen.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ptxc import oracle

pytestmark = pytest.mark.oracle

M32, M64 = (1 << 32) - 1, (1 << 64) - 1

CHAINS = r"""
// LAUNCH: chains32 grid=1 block=64 a=u32[256]:rand b=u32[256]:rand out32=u32[1280]:zero
// LAUNCH: chains64 grid=1 block=64 x=u64[256]:rand out64=u64[640]:zero

__global__ void chains32(const unsigned* a, const unsigned* b, unsigned* out) {
    int i = threadIdx.x;
    const unsigned* x = a + 4 * i;
    const unsigned* y = b + 4 * i;
    unsigned* o = out + 20 * i;
    // (x3:x2:x1:x0) + (y3:y2:y1:y0)
    asm("add.cc.u32 %0, %4, %8;\n\taddc.cc.u32 %1, %5, %9;\n\taddc.cc.u32 %2, %6, %10;\n\taddc.u32 %3, %7, %11;"
        : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3])
        : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(y[0]), "r"(y[1]), "r"(y[2]), "r"(y[3]));
    // (x3:x2:x1:x0) - (y3:y2:y1:y0)
    asm("sub.cc.u32 %0, %4, %8;\n\tsubc.cc.u32 %1, %5, %9;\n\tsubc.cc.u32 %2, %6, %10;\n\tsubc.u32 %3, %7, %11;"
        : "=r"(o[4]), "=r"(o[5]), "=r"(o[6]), "=r"(o[7])
        : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(y[0]), "r"(y[1]), "r"(y[2]), "r"(y[3]));
    // (x1:x0) * (y1:y0) + (x3:x2), as CUDA's __internal_trig_reduction_slowpathd writes it
    asm("{\n\t"
        "mad.lo.cc.u32 %0, %4, %6, %8;\n\t"
        "madc.hi.cc.u32 %1, %4, %6, %9;\n\t"
        "madc.hi.u32 %2, %4, %7, 0;\n\t"
        "mad.lo.cc.u32 %1, %4, %7, %1;\n\t"
        "madc.hi.cc.u32 %2, %5, %6, %2;\n\t"
        "madc.hi.u32 %3, %5, %7, 0;\n\t"
        "mad.lo.cc.u32 %1, %5, %6, %1;\n\t"
        "madc.lo.cc.u32 %2, %5, %7, %2;\n\t"
        "addc.u32 %3, %3, 0;\n\t}"
        : "=r"(o[8]), "=&r"(o[9]), "=&r"(o[10]), "=&r"(o[11])
        : "r"(x[0]), "r"(x[1]), "r"(y[0]), "r"(y[1]), "r"(x[2]), "r"(x[3]));
    // immediates: (x1:x0) + 0xFFFFFFFF00000007 and (x1:x0) - 0x0000000900000005
    asm("add.cc.u32 %0, %4, 7;\n\taddc.u32 %1, %5, 0xFFFFFFFF;\n\t"
        "sub.cc.u32 %2, %4, 5;\n\tsubc.u32 %3, %5, 9;"
        : "=r"(o[12]), "=r"(o[13]), "=r"(o[14]), "=r"(o[15]) : "r"(x[0]), "r"(x[1]));
    // mixed: subc takes the add's carry as its "no borrow", as the hardware does
    asm("add.cc.u32 %0, %2, %4;\n\tsubc.u32 %1, %3, %5;"
        : "=r"(o[16]), "=r"(o[17]) : "r"(x[0]), "r"(x[1]), "r"(y[0]), "r"(y[1]));
    // a guarded link: when y3 is odd the middle add runs and its carry goes on,
    // otherwise the flag keeps the first add's carry
    asm("{\n\t.reg .pred p;\n\t.reg .u32 t, u;\n\t"
        "and.b32 t, %7, 1;\n\t"
        "setp.ne.u32 p, t, 0;\n\t"
        "mov.u32 %0, %3;\n\t"
        "add.cc.u32 u, %2, %5;\n\t"
        "@p add.cc.u32 %0, %3, %6;\n\t"
        "addc.u32 %1, %4, %5;\n\t}"
        : "=&r"(o[18]), "=r"(o[19])
        : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(y[0]), "r"(y[1]), "r"(y[3]));
}

__global__ void chains64(const unsigned long long* in, unsigned long long* out) {
    int i = threadIdx.x;
    const unsigned long long* x = in + 4 * i;
    unsigned long long* o = out + 10 * i;
    // (x1:x0) + (x3:x2) and (x1:x0) - (x3:x2)
    asm("add.cc.u64 %0, %4, %6;\n\taddc.u64 %1, %5, %7;\n\t"
        "sub.cc.u64 %2, %4, %6;\n\tsubc.u64 %3, %5, %7;"
        : "=l"(o[0]), "=l"(o[1]), "=l"(o[2]), "=l"(o[3]) : "l"(x[0]), "l"(x[1]), "l"(x[2]), "l"(x[3]));
    // x0 * (x2:x1) + (x1:x3), 192 bits
    asm("{\n\t"
        "mad.lo.cc.u64 %0, %3, %4, %6;\n\t"
        "madc.hi.cc.u64 %1, %3, %4, %4;\n\t"
        "addc.u64 %2, 0, 0;\n\t"
        "mad.lo.cc.u64 %1, %3, %5, %1;\n\t"
        "madc.hi.u64 %2, %3, %5, %2;\n\t}"
        : "=&l"(o[4]), "=&l"(o[5]), "=&l"(o[6]) : "l"(x[0]), "l"(x[1]), "l"(x[2]), "l"(x[3]));
    // madc.lo after a carry; mad.hi.cc, then addc of an immediate whose low word is 0
    // (for other values ptxas writes IADD3.X R, P, R, imm, RZ, P, !PT, a form the
    // sm_89 table has not learned, so the emulator could not run ptxas's cubin)
    asm("{\n\t.reg .u64 t;\n\t"
        "add.cc.u64 t, %3, %4;\n\t"
        "madc.lo.u64 %0, %5, %6, %3;\n\t"
        "mad.hi.cc.u64 %1, %3, %4, %5;\n\t"
        "addc.u64 %2, %6, 0x500000000;\n\t}"
        : "=l"(o[7]), "=l"(o[8]), "=l"(o[9]) : "l"(x[0]), "l"(x[1]), "l"(x[2]), "l"(x[3]));
}
"""


def join(words, bits: int) -> int:
    return sum(int(w) << (bits * k) for k, w in enumerate(words))


def split(value: int, count: int, bits: int) -> list[int]:
    return [(value >> (bits * k)) & ((1 << bits) - 1) for k in range(count)]


def expect32(a, b) -> list[int]:
    out = []
    for i in range(64):
        x, y = [int(v) for v in a[4 * i:4 * i + 4]], [int(v) for v in b[4 * i:4 * i + 4]]
        big_x, big_y = join(x, 32), join(y, 32)
        o = split(big_x + big_y, 4, 32) + split(big_x - big_y, 4, 32)
        o += split(join(x[:2], 32) * join(y[:2], 32) + join(x[2:], 32), 4, 32)
        low = join(x[:2], 32)
        o += split(low + 0xFFFFFFFF00000007, 2, 32) + split(low - 0x0000000900000005, 2, 32)
        carry = (x[0] + y[0]) >> 32
        o += [(x[0] + y[0]) & M32, (x[1] + (~y[1] & M32) + carry) & M32]
        middle = x[1]
        if y[3] & 1:
            middle, carry = (x[1] + y[1]) & M32, (x[1] + y[1]) >> 32
        o += [middle, (x[2] + y[0] + carry) & M32]
        out += o
    return out


def expect64(values) -> list[int]:
    out = []
    for i in range(64):
        x = [int(v) for v in values[4 * i:4 * i + 4]]
        big_a, big_b = join(x[:2], 64), join(x[2:], 64)
        o = split(big_a + big_b, 2, 64) + split(big_a - big_b, 2, 64)
        o += split(x[0] * join([x[1], x[2]], 64) + join([x[3], x[1]], 64), 3, 64)
        carry = (x[0] + x[1]) >> 64
        high = (x[0] * x[1]) >> 64
        o += [(x[2] * x[3] + x[0] + carry) & M64, (high + x[2]) & M64,
              (x[3] + 0x500000000 + ((high + x[2]) >> 64)) & M64]
        out += o
    return out


def compile_both(tmp: Path, name: str, source: str) -> tuple[Path, Path, Path]:
    """nvcc's PTX of `source`, then ptxas's and ptxc's cubins of it."""
    cu, ptx = tmp / f"{name}.cu", tmp / f"{name}.ptx"
    cu.write_text(source)
    oracle.nvcc_ptx(cu, ptx)
    theirs, ours = tmp / f"{name}.ptxas.cubin", tmp / f"{name}.ptxc.cubin"
    oracle.ptxas(ptx, theirs)
    result = subprocess.run([sys.executable, "-m", "ptxc", str(ptx), "-o", str(ours)], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    return ptx, theirs, ours


def run(cubin: Path, source: str, name: str, check_hazards: bool):
    from ptxc.launch.spec import parse_file
    from ptxc.launch import run_launches
    launches = parse_file(source, f"{name}.cu")
    return run_launches(cubin.read_bytes(), launches, source, f"{name}.cu", check_hazards=check_hazards)


@pytest.fixture(scope="module")
def chains(tmp_path_factory):
    return compile_both(tmp_path_factory.mktemp("carry"), "chains", CHAINS)


@pytest.mark.parametrize("compiler", ["ptxas", "ptxc"])
def test_chains_equal_python_integers(chains, compiler):
    _ptx, theirs, ours = chains
    result = run(ours if compiler == "ptxc" else theirs, CHAINS, "chains", check_hazards=compiler == "ptxc")
    assert not result.hazards, f"hazards in {compiler}'s cubin: {result.hazards[:3]}"
    buffers = result.buffers
    want32, got32 = expect32(buffers["a"], buffers["b"]), [int(v) for v in buffers["out32"]]
    want64, got64 = expect64(buffers["x"]), [int(v) for v in buffers["out64"]]
    wrong32 = sorted({k % 20 for k, (g, w) in enumerate(zip(got32, want32)) if g != w})
    wrong64 = sorted({k % 10 for k, (g, w) in enumerate(zip(got64, want64)) if g != w})
    assert not wrong32 and not wrong64, f"{compiler}: wrong words of chains32 {wrong32}, of chains64 {wrong64}"


def test_inputs_exercise_both_carries(chains):
    """The random inputs carry out of the low words in some threads and not in others,
    and take both ways of the guarded link."""
    _ptx, theirs, _ours = chains
    buffers = run(theirs, CHAINS, "chains", check_hazards=False).buffers
    a, b = [int(v) for v in buffers["a"]], [int(v) for v in buffers["b"]]
    carries = {(a[4 * i] + b[4 * i]) >> 32 for i in range(64)}
    guards = {b[4 * i + 3] & 1 for i in range(64)}
    assert carries == {0, 1} and guards == {0, 1}


def test_ptxc_cubin_reads_cleanly(chains):
    _ptx, _theirs, ours = chains
    for tool, args in (("cuobjdump", ["-sass"]), ("nvdisasm", [])):
        result = oracle.run(tool, *args, str(ours), check=False)
        assert result.returncode == 0 and result.stderr == "", f"{tool}: {result.stderr}"


SUBTRACT_ZERO = r"""
// LAUNCH: subtract_zero grid=1 block=32 x=u64[32]:rand out=u64[64]:zero
__global__ void subtract_zero(const unsigned long long* x, unsigned long long* out) {
    int i = threadIdx.x;
    unsigned lo, hi;
    asm("{\n\t.reg .u32 a, b;\n\tmov.b64 {a, b}, %2;\n\t"
        "sub.cc.u32 %0, a, 0;\n\tsubc.u32 %1, b, 0;\n\t}" : "=r"(lo), "=r"(hi) : "l"(x[i]));
    out[2 * i] = ((unsigned long long)hi << 32) | lo;
    out[2 * i + 1] = 0x3FE0000000000000ull - ((x[i] & 0xFF) << 52);
}
"""


def test_subtracting_zero_keeps_the_carry(tmp_path):
    """Regression: fold_constants turned -R (R = 0) in an IADD3 with a carry-out into the
    immediate 0, which does not carry as a - 0 does.  a - 0 carries out (no borrow): sub.cc of 0, and sub.s64 of a value whose low
    word is zero (x << 52, as __internal_trig_reduction_slowpathd builds an exponent)."""
    _ptx, theirs, ours = compile_both(tmp_path, "subtract_zero", SUBTRACT_ZERO)
    x = [int(v) for v in run(theirs, SUBTRACT_ZERO, "subtract_zero", False).buffers["x"]]
    want = []
    for value in x:
        want += [value, (0x3FE0000000000000 - ((value & 0xFF) << 52)) & M64]
    for cubin in (theirs, ours):
        assert [int(v) for v in run(cubin, SUBTRACT_ZERO, "subtract_zero", True).buffers["out"]] == want


CARRY_OVER_LABEL = """.version 9.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
\t.reg .b32 \t%r<4>;
\t.reg .b64 \t%rd<2>;
\tld.param.u64 \t%rd1, [k_param_0];
\tld.global.v2.u32 \t{%r1, %r2}, [%rd1];
\tadd.cc.u32 \t%r3, %r1, %r2;
$L__join:
\taddc.u32 \t%r3, %r1, %r2;
\tst.global.u32 \t[%rd1], %r3;
\tret;
}
"""


def test_carry_read_after_a_label_is_a_diagnostic(tmp_path):
    """Another path may reach a label with another carry: a clean error at the reader."""
    path = tmp_path / "over_label.ptx"
    path.write_text(CARRY_OVER_LABEL)
    result = subprocess.run([sys.executable, "-m", "ptxc", str(path), "-o", str(tmp_path / "x.cubin")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert f"{path}:12:2: error: " in result.stderr and "carry flag" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
