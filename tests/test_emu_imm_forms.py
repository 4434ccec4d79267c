"""nvcc's cubins that use the forms the tables learned from the `imm_sources` and
`uniform_sdiv64` probes of scripts/learn_sm89_table.py run on the emulator and give what
Python computes:

- sm_90: `I2F.F64 R, 0x7` and `I2FP.F32.U32.RZ R, 0x9` (a conversion of a constant that
  ptxas leaves unfolded), `IMAD.X R, RZ, RZ, -0x1, P` (the high word of a small value
  minus a larger one) and `LEA.HI.X.SX32 R, R, 0xffffffff, 0x1, P` (a sign-extended value
  minus one);
- sm_89 and sm_90: `IMAD.X R, RZ, RZ, ~UR4, P`, the negated zero high word of a uniform
  dividend in the subroutine of a 64-bit signed division.

Before these forms were learned the emulator stopped at them (`UNKNOWN ...: no form in
the table`); scripts/fuzz_kernels.py differential found them in random kernels.
"""
from __future__ import annotations

import re
import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest

from ptxc import oracle
from ptxc.launch.spec import parse_file
from ptxc.launch import run_launches

pytestmark = pytest.mark.oracle
needs_nvcc = pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")
M64 = (1 << 64) - 1

IMM = """
// LAUNCH: imm grid=2 block=64 a=i32[128]:rand b=i32[128]:rand out=u64[1024]:zero
__global__ void imm(const int* a, const int* b, unsigned long long* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = a[i], y = b[i];
    unsigned long long* o = out + 8 * i;
    o[0] = (unsigned long long)(unsigned)x - 5ull;
    o[1] = (unsigned long long)((long long)y * 2 - 4096);
    o[2] = (unsigned long long)((long long)(x ^ y) - 1);
    o[5] = (unsigned long long)((long long)(x < y) - (long long)(y & 0x7fff));
    double d; float f; int k = 7; unsigned u = 9;
    asm("cvt.rn.f64.s32 %0, %1;" : "=d"(d) : "r"(k));     // ptxas: I2F.F64 R, 0x7
    asm("cvt.rz.f32.u32 %0, %1;" : "=f"(f) : "r"(u));     // ptxas: I2FP.F32.U32.RZ R, 0x9
    o[3] = __double_as_longlong(d * (double)x);
    o[4] = __float_as_uint(f * (float)(y & 0xffff));
}
"""

SDIV = """
// LAUNCH: sdiv grid=2 block=64 d=i64[128]:randint(-200000,200000) e=i64[128]:rand out=i64[256]:zero n=987654
__global__ void sdiv(const long long* d, const long long* e, long long* out, unsigned n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long m = (long long)(n & 0xfffffu);
    out[2 * i] = m / (d[i] | 1);
    out[2 * i + 1] = m / (e[i] | 1);
}
"""


def _nvcc(source: str, name: str, arch: str) -> bytes:
    tmp = Path(tempfile.mkdtemp(prefix="emu-imm-"))
    (tmp / f"{name}.cu").write_text(source)
    out = tmp / f"{name}.{arch}.cubin"
    oracle.run("nvcc", f"-arch={arch}", "-cubin", "-O3", "-o", str(out), str(tmp / f"{name}.cu"))
    return out.read_bytes()


def _sass(cubin: bytes) -> str:
    from ptxc.cubin.reader import read_cubin
    from ptxc.sass.decode import decode_all
    from ptxc.sass.printer import format_instr
    from ptxc.sass.table import load
    image = read_cubin(cubin)
    table = load(image.arch)
    return "\n".join(format_instr(i, a, table) for k in image.kernels for a, i in decode_all(k.text, table=table))


def _nvidia_sass(cubin: bytes) -> str:
    """cuobjdump's listing: whether nvcc still writes a form is NVIDIA's tools' word."""
    path = Path(tempfile.mkdtemp(prefix="emu-imm-")) / "k.cubin"
    path.write_bytes(cubin)
    return oracle.cuobjdump_sass(path)


def _run(source: str, name: str, cubin: bytes):
    return run_launches(cubin, parse_file(source, f"{name}.cu"), source, f"{name}.cu")


def _trunc_div(a: int, b: int) -> int:
    """C's signed division: the quotient rounded toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _imm_want(x: int, y: int) -> list[int]:
    f = np.float32(9.0) * np.float32(y & 0xFFFF)              # FMUL of two exact floats
    return [((x & 0xFFFFFFFF) - 5) & M64, (y * 2 - 4096) & M64, ((x ^ y) - 1) & M64,
            struct.unpack("<Q", struct.pack("<d", 7.0 * float(x)))[0],
            struct.unpack("<I", struct.pack("<f", float(f)))[0],
            (int(x < y) - (y & 0x7FFF)) & M64, 0, 0]


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_90", "sm_89"])
def test_immediate_source_forms_run_and_match_python(arch):
    cubin = _nvcc(IMM, "imm", arch)
    assert "UNKNOWN" not in _sass(cubin)          # ptxc's decoder knows every word
    sass = _nvidia_sass(cubin)                    # what the test is about, as cuobjdump says
    forms = [r"I2F\.F64 R\d+, 0x7 ;", r"I2FP\.F32\.U32\.RZ R\d+, 0x9 ;",
             r"LEA\.HI\.X\.SX32 R\d+, R\d+, 0xffffffff, 0x1, P\d ;"]
    if arch == "sm_90":
        forms.append(r"IMAD\.X R\d+, RZ, RZ, -0x1, P\d ;")
    for form in forms:
        assert re.search(form, sass), f"nvcc no longer writes {form} for {arch}: the test lost its subject"
    run = _run(IMM, "imm", cubin)
    a, b = (run.initial[k].astype(np.int64).tolist() for k in "ab")
    want = np.array([_imm_want(x, y) for x, y in zip(a, b)], dtype=np.uint64).reshape(-1)
    got = run.buffers["out"].astype(np.uint64)
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, f"{arch}: out[{bad[0]}] (o[{bad[0] % 8}] of thread {bad[0] // 8}) = " \
                          f"{int(got[bad[0]]):#x}, Python {int(want[bad[0]]):#x}"


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_uniform_dividend_negation_runs_and_matches_python(arch):
    cubin = _nvcc(SDIV, "sdiv", arch)
    assert "UNKNOWN" not in _sass(cubin)
    sass = _nvidia_sass(cubin)
    assert re.search(r"IMAD\.X R\d+, RZ, RZ, ~UR\d+, P\d ;", sass), \
        f"nvcc no longer writes IMAD.X with ~UR for {arch}: the test lost its subject"
    run = _run(SDIV, "sdiv", cubin)
    m = 987654 & 0xFFFFF
    d, e = (run.initial[k].astype(np.int64).tolist() for k in "de")
    want = np.array([[_trunc_div(m, p | 1), _trunc_div(m, q | 1)] for p, q in zip(d, e)], dtype=np.int64).reshape(-1)
    got = run.buffers["out"]
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, f"{arch}: out[{bad[0]}] = {int(got[bad[0]])}, Python {int(want[bad[0]])}"
    assert np.count_nonzero(want) > 64          # the quotients are not all zero
