#!/usr/bin/env python3
"""How fast the SASS emulator runs, beside NumPy doing the same work.

    python scripts/bench_emu.py            # the seed launch, a tiled matmul, `ptxc run vadd.cu`
    python scripts/bench_emu.py --repeat 5

Reports, per workload: seconds (best of --repeat), warp instructions and thread
instructions executed per second, and NumPy's time for the same arithmetic.  The kernels
are nvcc's (the oracle) when it is installed, else ptxc's own.  The first run in a fresh
tree builds the emulator core (about a minute); that is not measured.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptxc import oracle  # noqa: E402
from ptxc.emu.device import Device  # noqa: E402

TILED = r"""
#define TILE 16
__global__ void sgemm_tiled(const float* a, const float* b, float* c, int n) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        as[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
}
"""


def cubin_of(path: Path) -> tuple[bytes, str]:
    if oracle.available("nvcc"):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "k.cubin"
            oracle.nvcc_cubin(path, out)
            return out.read_bytes(), "nvcc"
    from ptxc.driver import cubin_bytes, load_module, lower_module
    from ptxc.lower.pipeline import Options
    module = load_module(str(path), path.read_text())
    return cubin_bytes(lower_module(module, Options(filename=str(path))), "sm_89"), "ptxc"


def best(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def report(name: str, seconds: float, result, numpy_seconds: float, who: str) -> None:
    warp, thread = result.warp_instructions, result.thread_instructions
    print(f"{name} ({who}'s cubin)")
    print(f"  emulator: {seconds * 1e3:9.1f} ms   {warp / seconds / 1e6:8.2f} M warp-instr/s   "
          f"{thread / seconds / 1e6:8.1f} M thread-instr/s   ({warp} warp / {thread} thread instructions)")
    print(f"  numpy:    {numpy_seconds * 1e3:9.1f} ms   (emulator / numpy = {seconds / numpy_seconds:.0f}x)")


def seed_launch(repeat: int) -> None:
    cubin, who = cubin_of(ROOT / "testsuite" / "vadd.cu")
    dev = Device()
    kernel = dev.load(cubin, "vadd.cubin").kernel("vadd")
    n = 1 << 20
    a, b = np.ones(n, np.float32), np.ones(n, np.float32)
    da, db, dc = (dev.malloc(4 * n, name) for name in "abc")
    dev.memory.write(da, a)
    dev.memory.write(db, b)
    dev.launch(kernel, 4096, 256, [da, db, dc, n])            # warm-up (builds the core if needed)
    seconds, result = best(lambda: dev.launch(kernel, 4096, 256, [da, db, dc, n]), repeat)
    numpy_seconds, _ = best(lambda: np.add(a, b), repeat)
    assert np.array_equal(dev.memory.view(dc, np.float32, n), a + b)
    report("seed launch: vadd<<<4096, 256>>> on 2^20 floats", seconds, result, numpy_seconds, who)


def tiled_matmul(repeat: int, n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tiled.cu"
        path.write_text(TILED)
        cubin, who = cubin_of(path)
    dev = Device()
    kernel = dev.load(cubin, "tiled.cubin").kernel("sgemm_tiled")
    rng = np.random.default_rng(0)
    A, B = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    da, db, dc = (dev.malloc(4 * n * n, name) for name in "abc")
    dev.memory.write(da, A)
    dev.memory.write(db, B)
    grid = (n // 16, n // 16)
    seconds, result = best(lambda: dev.launch(kernel, grid, (16, 16), [da, db, dc, n]), repeat)
    numpy_seconds, C = best(lambda: A @ B, repeat)
    got = dev.memory.view(dc, np.float32, n * n).reshape(n, n)
    assert np.allclose(got, C, rtol=1e-4), "the emulated matmul disagrees with NumPy"
    report(f"tiled shared-memory SGEMM {n}x{n}: grid {grid}, block (16,16)", seconds, result, numpy_seconds, who)


def seed_program(repeat: int) -> None:
    cmd = [sys.executable, "-c", "import sys; from ptxc.cli.run import run_command; "
           f"sys.exit(run_command(['{ROOT / 'testsuite' / 'vadd.cu'}']))"]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        times.append(time.perf_counter() - t)
    status = "ok" if proc.stdout == "c[0]=2.000000 c[n-1]=2.000000\n" else f"FAILED: {proc.stderr.strip()[:200]}"
    print(f"`ptxc run testsuite/vadd.cu` (a fresh Python each time, ptxc's cubin): "
          f"{min(times):.2f} s wall ({status})")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--size", type=int, default=256, help="matrix size of the tiled matmul (multiple of 16)")
    args = p.parse_args()
    seed_launch(args.repeat)
    tiled_matmul(args.repeat, args.size)
    seed_program(args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
