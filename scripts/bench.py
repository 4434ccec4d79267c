#!/usr/bin/env python3
"""Time ptxc against NVIDIA's tools in the same run, and print the ratios.

    python scripts/bench.py            # median of 7 runs each
    python scripts/bench.py --runs 15 --markdown   # also print a table for docs/PERFORMANCE.md

Measured, side by side on the same machine in the same run:
- `ptxc vadd.cu -o x.cubin` (a fresh process, as a user runs it) vs `nvcc -arch=sm_89 -cubin`;
- `ptxc vadd.ptx -o x.cubin` vs `ptxas -arch=sm_89` on nvcc's PTX;
- ptxc in-process (no interpreter start-up): the compile itself.
No test asserts on these numbers; docs/PERFORMANCE.md records them.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptxc import oracle  # noqa: E402


def median_seconds(run, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def command(args: list) -> callable:
    # Python as users run it: bytecode cached (`pip install` compiles it; some
    # sandboxes set PYTHONDONTWRITEBYTECODE, which would re-compile ptxc every run).
    env = oracle._env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def run():
        subprocess.run([str(a) for a in args], check=True, capture_output=True, env=env)
    return run


def in_process(path: Path, out: Path) -> callable:
    from ptxc.cli import main

    def run():
        assert main([str(path), "-o", str(out)]) == 0
    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    source = ROOT / "testsuite" / "vadd.cu"
    tmp = Path(tempfile.mkdtemp(prefix="ptxc-bench-"))
    ptx = oracle.nvcc_ptx(source, tmp / "vadd.ptx")
    ptxc = [sys.executable, "-m", "ptxc"]
    rows = [
        ("vadd.cu -> cubin", command(ptxc + [source, "-o", tmp / "a.cubin"]),
         command([oracle.require("nvcc"), "-arch=sm_89", "-cubin", "-o", tmp / "b.cubin", source]), "nvcc -cubin"),
        ("vadd.ptx -> cubin", command(ptxc + [ptx, "-o", tmp / "c.cubin"]),
         command([oracle.require("ptxas"), "-arch=sm_89", "-o", tmp / "d.cubin", ptx]), "ptxas"),
        ("vadd.cu -> cubin, in-process", in_process(source, tmp / "e.cubin"),
         command([oracle.require("nvcc"), "-arch=sm_89", "-cubin", "-o", tmp / "f.cubin", source]), "nvcc -cubin"),
    ]
    results = []
    for name, ours, theirs, their_name in rows:
        ours()  # warm caches (Lark grammar, file system)
        t_ours, t_theirs = median_seconds(ours, args.runs), median_seconds(theirs, args.runs)
        results.append((name, t_ours, their_name, t_theirs, t_ours / t_theirs))
        print(f"{name:32s} ptxc {t_ours * 1000:8.1f} ms   {their_name:12s} {t_theirs * 1000:8.1f} ms   "
              f"ratio ptxc/{their_name.split()[0]} = {t_ours / t_theirs:5.2f}")
    if args.markdown:
        print("\n| what | ptxc (median) | NVIDIA (median) | ratio ptxc/NVIDIA |\n|---|---|---|---|")
        for name, t_ours, their_name, t_theirs, ratio in results:
            print(f"| {name} | {t_ours * 1000:.1f} ms | {their_name} {t_theirs * 1000:.1f} ms | {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
