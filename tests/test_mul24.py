"""mul24.lo (CUDA's __mul24/__umul24; ptxc's frontend writes mul24, nvcc's writes and +
mul.lo): ptxc's cubin against a Python computation of the low 32 bits of the 24-bit
product and against nvcc's cubin, on the emulator."""
from __future__ import annotations

import pytest

from ptxc import oracle

import subprocess
import sys

from test_carry_chains import run

pytestmark = pytest.mark.oracle

MUL24 = """
// LAUNCH: mul24 grid=1 block=64 a=i32[64]:rand b=i32[64]:rand out=i32[128]:zero
__global__ void mul24(const int* a, const int* b, int* out) {
    int i = threadIdx.x;
    out[2 * i] = __mul24(a[i], b[i]);
    out[2 * i + 1] = (int)__umul24((unsigned)a[i], (unsigned)b[i]);
}
"""


def s24(x: int) -> int:
    x &= 0xFFFFFF
    return x - (1 << 24) if x >> 23 else x


@pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")
def test_mul24_keeps_24_bits(tmp_path):
    cu, ptx, ours, theirs = (tmp_path / n for n in ("mul24.cu", "mul24.ptx", "ours.cubin", "theirs.cubin"))
    cu.write_text(MUL24)
    for args in (["-ptx", "-o", ptx], ["-o", ours]):
        done = subprocess.run([sys.executable, "-m", "ptxc", str(cu), *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert "mul24.lo.s32" in ptx.read_text() and "mul24.lo.u32" in ptx.read_text()
    oracle.nvcc_cubin(cu, theirs)
    result = run(ours, MUL24, "mul24", check_hazards=True)
    assert not result.hazards
    a, b = [int(v) for v in result.buffers["a"]], [int(v) for v in result.buffers["b"]]
    want = []
    for x, y in zip(a, b):
        want += [(s24(x) * s24(y)) & 0xFFFFFFFF, ((x & 0xFFFFFF) * (y & 0xFFFFFF)) & 0xFFFFFFFF]
    got = [int(v) & 0xFFFFFFFF for v in result.buffers["out"]]
    assert got == want
    assert got == [int(v) & 0xFFFFFFFF for v in run(theirs, MUL24, "mul24", False).buffers["out"]]
