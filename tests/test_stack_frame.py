"""Stack frames keep 16-byte data aligned (issue 16): with calls, a `.local .align 16`
array (a float4 array's STL.128) sat at an address 8 mod 16, because a frame was
only rounded to 8 bytes (the kernel's after 8-byte saves across a call, a callee's
frame of its depot and return address), so R1 was 8 mod 16 below it.  Every frame
that holds 16-byte-aligned data, calls, or is called is now a multiple of 16.

Generated: nvcc's PTX of kernels with a float4 array in the kernel or in a
recursive callee (a real call), 0 to 3 values live across the call (which move the
frame's size by 4 bytes each), lowered by ptxc and run on the emulator
(which faults on a misaligned access) against nvcc's cubin, sm_89 and sm_90."""
from __future__ import annotations

import subprocess
import sys

import pytest

from ptxc import oracle

pytestmark = [pytest.mark.oracle,
              pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")]

LAUNCH = "// LAUNCH: k grid=1 block=32 fa=f32[128]:rand idx=i32[64]:randint(0,7) fo=f32[32]:zero\n"
FIB = "__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
ARRAY = """    float4 arr[{n}];
    for (int j = 0; j < {n}; j++) arr[(j + idx[{at}]) % {n}] = make_float4(fa[{at}] * j, fa[{at}] + 1.0f, 2.0f * j, 3.0f);
    float4 v = arr[idx[{at} + 1] % {n}];
"""


def kernel_array(n: int, live: int) -> str:
    """The array in the kernel, filled before the call and read after it, with `live`
    values (volatile loads: nvcc cannot move them past the call) kept across it."""
    keep = [f"    float q{k} = ((volatile const float *)fa)[i + {k}];" for k in range(live)]
    use = "".join(f" + q{k}" for k in range(live))
    return (LAUNCH + FIB + "__global__ void k(const float *fa, const int *idx, float *fo) {\n"
            "    int i = threadIdx.x;\n" + "".join(line + "\n" for line in keep) +
            ARRAY.format(n=n, at="i").replace("    float4 v", "    int s = fib(idx[i] & 3);\n    float4 v") +
            f"    fo[i] = v.x + v.y + v.z + v.w + s{use};\n}}\n")


def callee_array(n: int) -> str:
    """The array in a recursive callee: each level's frame below the one before."""
    return (LAUNCH + "__device__ float f(int n, const float *fa, const int *idx) {\n"
            "    if (n < 2) return n;\n" + ARRAY.format(n=n, at="n") +
            "    return f(n - 1, fa, idx) + f(n - 2, fa, idx) + v.x + v.y + v.z + v.w;\n}\n"
            "__global__ void k(const float *fa, const int *idx, float *fo) {\n"
            "    fo[threadIdx.x] = f(threadIdx.x & 3, fa, idx);\n}\n")


CASES = {f"kernel_n{n}_live{live}": kernel_array(n, live) for n in (2, 3) for live in (0, 1, 3)}
CASES.update({f"callee_n{n}": callee_array(n) for n in (2, 3, 5)})


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_aligned_locals_with_calls_match_nvcc(name, arch, tmp_path):
    from ptxc.launch.spec import parse_file
    from ptxc.launch import differences, run_launches
    source = CASES[name]
    cu = tmp_path / f"{name}.cu"
    cu.write_text(source)
    ptx, ours, theirs = tmp_path / "k.ptx", tmp_path / "ptxc.cubin", tmp_path / "nvcc.cubin"
    oracle.nvcc_ptx(cu, ptx, arch)
    assert ".local .align 16" in ptx.read_text()
    result = subprocess.run([sys.executable, "-m", "ptxc", str(ptx), f"-arch={arch}", "-o", str(ours)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    oracle.nvcc_cubin(cu, theirs, arch)
    launches = parse_file(source, str(cu))
    a = run_launches(theirs.read_bytes(), launches, source, str(cu))
    b = run_launches(ours.read_bytes(), launches, source, str(cu))
    diffs = differences("fo", a.buffers["fo"], b.buffers["fo"], 0)
    assert not diffs, f"{len(diffs)} elements differ, first {diffs[:3]}"
