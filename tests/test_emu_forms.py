"""Emulator semantics of forms nvcc writes that ptxc does not (issue 16), checked on
nvcc's own cubins against values computed here from the C source:

- `LEA Rd, P0, -Ra, Rb, sh` (ptxas's 64-bit `b - (a << sh)`): -Ra adds ~(Ra << sh) + 1,
  so the carry into LEA.HI.X is 1 when (Ra << sh) is 0 mod 2^32; the emulator took
  -(Ra << sh) mod 2^32 and lost it (results 2^32 off);
- `FMUL.D2/.D4/.D8/.M2/.M4/.M8` (ptxas's `(x * c) * 2^k`): the product times 2^-1 .. 2^3;
  the emulator ignored the scale;
- an f16 result of -0.0 (HFMA2.MMA R5, -RZ, RZ, -0.0, 0, sm_90's way to write
  0x80000000; HADD2, F2FP): fp.round16 dropped the sign of zero."""
from __future__ import annotations

import numpy as np
import pytest

from ptxc import oracle

pytestmark = [pytest.mark.oracle,
              pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")]

MASK = 0xFFFFFFFF80000000     # low words 0 or 2^31: (x << 1) and (x << 5) are 0 mod 2^32
LEA = f"""// LAUNCH: k grid=1 block=32 a=u64[32]:rand b=u64[32]:rand m=u64[32]:const({MASK}) o=u64[128]:zero
__global__ void k(const unsigned long long *a, const unsigned long long *b, const unsigned long long *m,
                  unsigned long long *o) {{
    int i = threadIdx.x;
    unsigned long long x = a[i] & m[i], y = b[i], xt = a[i] & (m[i] << 4);
    o[i * 4 + 0] = y - (x << 1);
    o[i * 4 + 1] = y - (xt << 5);
    o[i * 4 + 2] = y - (a[i] << 1);
    o[i * 4 + 3] = b[i] + (x << 1);
}}
"""
FMUL = """// LAUNCH: k grid=1 block=32 a=f32[32]:rand o=f32[128]:zero
__global__ void k(const float *a, float *o) {
    int i = threadIdx.x;
    float y = a[i];
    o[i * 4 + 0] = (y * 0.5f) * 0.5f;
    o[i * 4 + 1] = (y * 3.0f) * 0.125f;
    o[i * 4 + 2] = (y * 1.0e30f) * 8.0f;
    o[i * 4 + 3] = (y * 5.0f) * 4.0f;
}
"""


def run_nvcc(source: str, arch: str, tmp_path, form: str):
    from ptxc.launch.spec import parse_file
    from ptxc.launch import run_launches
    cu, cubin = tmp_path / "k.cu", tmp_path / "k.cubin"
    cu.write_text(source)
    oracle.nvcc_cubin(cu, cubin, arch)
    sass = oracle.cuobjdump_sass(cubin)
    assert form in sass, f"nvcc no longer writes {form!r}: the test needs another kernel\n{sass}"
    launches = parse_file(source, str(cu))
    return run_launches(cubin.read_bytes(), launches, source, str(cu)), launches


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_lea_with_a_negated_source_carries(arch, tmp_path):
    result, _ = run_nvcc(LEA, arch, tmp_path, ", -R")
    a, b, m = (np.asarray(result.buffers[k], dtype=np.uint64) for k in "abm")
    x, xt = a & m, a & (m << np.uint64(4))
    one, five = np.uint64(1), np.uint64(5)
    expected = np.stack([b - (x << one), b - (xt << five), b - (a << one), b + (x << one)], axis=1).reshape(-1)
    got = np.asarray(result.buffers["o"], dtype=np.uint64)
    assert np.array_equal(got, expected), [(k, hex(int(got[k])), hex(int(expected[k])))
                                           for k in np.nonzero(got != expected)[0][:4]]


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_fmul_scales_its_product(arch, tmp_path):
    result, _ = run_nvcc(FMUL, arch, tmp_path, "FMUL.D")
    y = np.asarray(result.buffers["a"], dtype=np.float32)
    f = np.float32
    expected = np.stack([(y * f(0.5)) * f(0.5), (y * f(3)) * f(0.125), (y * f(1e30)) * f(8), (y * f(5)) * f(4)],
                        axis=1).reshape(-1)
    got = np.asarray(result.buffers["o"], dtype=np.float32)
    assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))


def test_round16_keeps_the_sign_of_zero():
    from ptxc.emu import fp
    assert fp.round16(np.float64(-0.0), 0.0) == 0x8000
    assert fp.round16(np.float64(0.0), 0.0) == 0
    assert fp.round16(np.float64(0.0), -1e-300) == 0x8000    # a negative value too small for f16
