#!/usr/bin/env python3
"""The CUDA frontend against NVVM, in one run: PTX size and compile speed.

    python scripts/bench_frontend.py              # every frontend kernel of testsuite/
    python scripts/bench_frontend.py --runs 5 fe_softmax.cu saxpy.cu
    python scripts/bench_frontend.py --counts     # speed only, as deterministic counts too

For each kernel file: the PTX instructions ptxc writes / those nvcc -ptx writes (the
same counting for both: instruction lines of every function body, labels and
directives excluded), and their geometric mean over the files (goal: <= 1.1).  Then
the frontend's speed: source lines compiled per second of CPU time (preprocess,
parse, sema, codegen and printing the PTX; best of --runs), goal >= 20,000.  CPU time,
not wall time, because the machines this runs on are shared.  Where they are so shared
that CPU time moves by +-15% between runs, --counts also counts what compiling the
files once executes: Python function calls and bytecodes (the same numbers on every
run of the same code).  No test asserts on these numbers.
"""
from __future__ import annotations

import argparse
import gc
import math
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptxc import oracle  # noqa: E402
from ptxc.frontend import compile_cuda  # noqa: E402
from ptxc.ptx.printer import print_module  # noqa: E402

TESTSUITE = ROOT / "testsuite"
# The testsuite kernels written for this frontend (isa_*.cu and lower/ belong to the backend).
LEGACY = ["vadd.cu", "saxpy.cu", "reduce_shared.cu", "matmul_naive.cu", "histogram.cu", "stencil_1d.cu",
          "collatz.cu", "clamp_math.cu", "arith_types.cu", "control_flow.cu"]


def frontend_kernels() -> list[str]:
    return LEGACY + sorted(p.name for p in TESTSUITE.glob("fe_*.cu"))


_INSTRUCTION = re.compile(r"^\t(?:@!?%\w+ )?[a-z][\w.]*(?:\s|;)", re.M)


def count_instructions(ptx: str) -> int:
    """Instruction lines in function bodies (`\\tadd.s32 ...;`, `\\t@%p1 bra ...;`)."""
    count = 0
    for body in re.findall(r"\n\{\n(.*?)\n\}", ptx, re.S):
        count += len(_INSTRUCTION.findall(body))
    return count


def nvcc_count(path: Path, tmp: Path) -> int:
    out = tmp / (path.stem + ".nvcc.ptx")
    oracle.nvcc_ptx(path, out)
    return count_instructions(out.read_text())


def ptxc_ptx(path: Path) -> str:
    module, _ = compile_cuda(path.read_text(), str(path))
    return print_module(module)


def speed(paths: list[Path], runs: int) -> tuple[int, float]:
    """(source lines, best CPU seconds to compile them all)."""
    sources = [(p.read_text(), str(p)) for p in paths]
    lines = sum(text.count("\n") + 1 for text, _ in sources)
    best = math.inf
    for _ in range(runs):
        gc.collect()
        start = time.process_time()
        for text, name in sources:
            print_module(compile_cuda(text, name)[0])
        best = min(best, time.process_time() - start)
    return lines, best


def counts(paths: list[Path]) -> tuple[int, int]:
    """(Python function calls, bytecodes) of compiling and printing the files once,
    after one untraced pass (so that what runs once per process is not counted)."""
    sources = [(p.read_text(), str(p)) for p in paths]

    def compile_all():
        for text, name in sources:
            print_module(compile_cuda(text, name)[0])
    compile_all()
    calls = bytecodes = 0

    def profile(frame, event, arg):
        nonlocal calls
        if event == "call":
            calls += 1

    def trace(frame, event, arg):
        nonlocal bytecodes
        frame.f_trace_opcodes, frame.f_trace_lines = True, False
        if event == "opcode":
            bytecodes += 1
        return trace
    sys.setprofile(profile)
    compile_all()
    sys.setprofile(None)
    sys.settrace(trace)
    compile_all()
    sys.settrace(None)
    return calls, bytecodes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="testsuite kernel files (default: all of the frontend's)")
    parser.add_argument("--runs", type=int, default=5, help="speed: best of this many passes")
    parser.add_argument("--counts", action="store_true",
                        help="only the speed, with the calls and bytecodes of one pass")
    args = parser.parse_args()
    names = args.files or frontend_kernels()
    paths = [TESTSUITE / name if not Path(name).exists() else Path(name) for name in names]
    if args.counts:
        lines, seconds = speed(paths, args.runs)
        calls, bytecodes = counts(paths)
        print(f"frontend speed: {lines} lines in {seconds * 1000:.0f} ms CPU = {lines / seconds:,.0f} lines/s; "
              f"one pass: {calls:,} Python calls, {bytecodes / 1e6:.2f} M bytecodes")
        return 0
    ratios = []
    print(f"{'kernel file':28} {'ptxc':>6} {'nvcc':>6} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            ours = count_instructions(ptxc_ptx(path))
            theirs = nvcc_count(path, Path(tmp))
            ratio = ours / theirs if theirs else float("nan")
            ratios.append(ratio)
            print(f"{path.name:28} {ours:6d} {theirs:6d} {ratio:6.2f}")
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"\ninstruction count ptxc/nvcc, geometric mean over {len(ratios)} files: {geomean:.3f} (goal <= 1.1)")
    lines, seconds = speed(paths, args.runs)
    print(f"frontend speed: {lines} lines in {seconds * 1000:.0f} ms CPU = {lines / seconds:,.0f} lines/s "
          f"(goal >= 20,000)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
