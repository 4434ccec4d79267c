#!/usr/bin/env python3
"""Time ptxc against NVIDIA's tools in the same run, and print the ratios.

    python scripts/bench.py            # compile times (median of 7 runs), emulator, frontend
    python scripts/bench.py --runs 15 --markdown   # also print a table for docs/PERFORMANCE.md
    python scripts/bench.py --kernels              # the per-kernel table (issue 6's goals)
    python scripts/bench.py --kernels --only saxpy,collatz --no-emu

Measured, side by side on the same machine in the same run:
- `ptxc vadd.cu -o x.cubin` (a fresh process, as a user runs it) vs `nvcc -arch=sm_89 -cubin`;
- `ptxc vadd.ptx -o x.cubin` vs `ptxas -arch=sm_89` on nvcc's PTX;
- ptxc in-process (no interpreter start-up): the compile itself;
- the emulator's thread instructions per second on the seed launch (4096x256) and a tiled
  shared-memory SGEMM, beside NumPy doing the same work, and `ptxc run vadd.cu`'s wall
  time (scripts/bench_emu.py; --no-emu skips it);
- the frontend: PTX instructions ptxc/nvcc per file and source lines per CPU second
  (scripts/bench_frontend.py; --no-frontend skips it).

With --kernels, for every kernel of testsuite/*.cu, nvcc's PTX compiled by ptxc
(as a drop-in ptxas) against the same PTX compiled by ptxas: static instructions
(BRA-to-self and NOP padding excluded) and registers (EIATTR_REGCOUNT); dynamic
warp instructions on the emulator over the file's LAUNCH lines (both cubins run
the same launches with the same inputs, and their buffers are compared); compile
time (ptxc in-process per kernel against the ptxas process on the whole file,
shared among its kernels by instruction count, and both whole-file commands; best
of --runs, ptxas and ptxc timed in turn).
Totals are sums, ratios geometric means over the kernels that have both numbers.
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
sys.path.insert(0, str(ROOT / "scripts"))

from ptxc import oracle  # noqa: E402


def median_seconds(run, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def min_seconds(run, runs: int) -> float:
    """Best of `runs`: noise on a shared machine only ever adds time."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


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
    parser.add_argument("--kernels", action="store_true", help="the per-kernel table over testsuite/*.cu")
    parser.add_argument("--only", help="comma-separated testsuite file stems (with --kernels)")
    parser.add_argument("--no-emu", action="store_true",
                        help="skip the emulator (its throughput; with --kernels, the dynamic counts)")
    parser.add_argument("--no-frontend", action="store_true", help="skip the frontend's PTX size and speed")
    parser.add_argument("--callgrind", action="store_true",
                        help="also count the fresh processes' instructions (valgrind --tool=callgrind): "
                             "a number the other users of a loaded machine do not change")
    args = parser.parse_args()
    if args.kernels:
        return kernel_table(args)
    compile_times(args)
    if not args.no_emu:
        emulator_throughput(args)
    if not args.no_frontend:
        frontend_speed(args)
    return 0


def emulator_throughput(args) -> None:
    """The emulator beside NumPy doing the same work (scripts/bench_emu.py's workloads)."""
    import bench_emu
    print("\n# the emulator: thread instructions per second inside kernels, NumPy alongside")
    bench_emu.seed_launch(args.runs)
    bench_emu.tiled_matmul(args.runs, 256)
    bench_emu.seed_program(min(args.runs, 3))


def frontend_speed(args) -> None:
    """PTX instructions ptxc/nvcc and the frontend's lines per second (scripts/bench_frontend.py)."""
    import bench_frontend
    print("\n# the frontend: PTX instructions ptxc/nvcc -ptx per file, source lines per CPU second")
    sys.argv = [sys.argv[0], "--runs", str(args.runs)]
    bench_frontend.main()


def compile_times(args) -> None:
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
    goals = {"vadd.cu -> cubin": "goal <= 0.2", "vadd.ptx -> cubin": "goal <= 3"}
    results = []
    for name, ours, theirs, their_name in rows:
        ours()  # warm caches (Lark grammar, the table and regex caches, file system)
        # in turn, so that a busy spell of the shared machine slows both sides
        t_ours, t_theirs = [], []
        for _ in range(args.runs):
            t_ours.append(median_seconds(ours, 1))
            t_theirs.append(median_seconds(theirs, 1))
        t_ours, t_theirs = statistics.median(t_ours), statistics.median(t_theirs)
        results.append((name, t_ours, their_name, t_theirs, t_ours / t_theirs))
        print(f"{name:32s} ptxc {t_ours * 1000:8.1f} ms   {their_name:12s} {t_theirs * 1000:8.1f} ms   "
              f"ratio ptxc/{their_name.split()[0]} = {t_ours / t_theirs:5.2f}   {goals.get(name, '')}")
    if args.callgrind:
        print("\n# instructions executed (callgrind; children followed, nvcc's cicc/ptxas included)")
        python = callgrind_count([sys.executable, "-c", "pass"], tmp)
        print(f"{'python -c pass':32s} {python / 1e6:10.1f} M   (the interpreter's own start-up)")
        for name, cmd, their_name, their_cmd in [
                ("vadd.ptx -> cubin", ptxc + [ptx, "-o", tmp / "c.cubin"], "ptxas",
                 [oracle.require("ptxas"), "-arch=sm_89", "-o", tmp / "d.cubin", ptx]),
                ("vadd.cu -> cubin", ptxc + [source, "-o", tmp / "a.cubin"], "nvcc",
                 [oracle.require("nvcc"), "-arch=sm_89", "-cubin", "-o", tmp / "b.cubin", source])]:
            ours, theirs = callgrind_count(cmd, tmp), callgrind_count(their_cmd, tmp)
            print(f"{name:32s} ptxc {ours / 1e6:10.1f} M   {their_name:6s} {theirs / 1e6:10.1f} M   "
                  f"ratio {ours / theirs:5.2f}")
    if args.markdown:
        print("\n| what | ptxc (median) | NVIDIA (median) | ratio ptxc/NVIDIA |\n|---|---|---|---|")
        for name, t_ours, their_name, t_theirs, ratio in results:
            print(f"| {name} | {t_ours * 1000:.1f} ms | {their_name} {t_theirs * 1000:.1f} ms | {ratio:.2f} |")


def callgrind_count(args: list, tmp: Path) -> int:
    """Instructions the command (and its child processes) executed, by callgrind."""
    import re
    env = oracle._env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                          f"--callgrind-out-file={tmp}/callgrind.%p"] + [str(a) for a in args],
                         capture_output=True, text=True, env=env)
    for f in tmp.glob("callgrind.*"):
        f.unlink()
    return sum(int(n) for n in re.findall(r"Collected : (\d+)", out.stderr))


# ---- the per-kernel table ----------------------------------------------------------------

def _static_counts(cubin: bytes) -> dict:
    """Kernel -> (instructions without the trailing trap and NOPs, EIATTR_REGCOUNT)."""
    from ptxc.cubin.reader import read_cubin
    from ptxc.sass.decode import decode_all
    out = {}
    image = read_cubin(cubin)
    for kernel in image.kernels:
        name = kernel.name
        instrs = [i for _, i in decode_all(kernel.text)]
        while instrs and (instrs[-1].op == "NOP" or instrs[-1].op == "BRA"):
            last = instrs.pop()
            if last.op == "BRA":
                break
        out[name] = (len(instrs), kernel.regcount)
    return out


def _dynamic_counts(cu: Path, cubins: dict) -> tuple[dict, list]:
    """Kernel -> {tool: warp instructions} over the file's launches; and mismatches."""
    from ptxc.launch.spec import parse_file
    from ptxc.launch import differences, run_launches
    text = cu.read_text()
    launches = parse_file(text, str(cu))
    counts, runs, bad = {}, {}, []
    for tool, data in cubins.items():
        try:
            run = run_launches(data, launches, text, str(cu))
        except Exception as exc:   # the emulator could not run it: say so, keep going
            bad.append(f"{tool}'s cubin does not run: {str(exc).splitlines()[0][:160]}")
            continue
        runs[tool] = run
        for launch, result in zip(launches, run.results):
            if result is not None:
                per = counts.setdefault(launch.kernel, {})
                per[tool] = per.get(tool, 0) + result.warp_instructions
    if len(runs) == 2:
        a, b = runs["ptxas"], runs["ptxc"]
        for name in a.buffers:
            diffs = differences(name, a.buffers[name], b.buffers[name], a.ulp.get(name, 0))
            if diffs:
                bad.append(f"{name}: {len(diffs)} differ (first at {diffs[0][0]}: {diffs[0][1]} vs {diffs[0][2]})")
    return counts, bad


def _base_name(mangled: str) -> str:
    from ptxc.emu.names import demangle_base
    return demangle_base(mangled)


def kernel_table(args) -> int:
    import math
    from ptxc.driver import cubin_bytes, load_module, lower_module
    from ptxc.lower.pipeline import Options
    only = set(args.only.split(",")) if args.only else None
    files = [p for p in sorted((ROOT / "testsuite").glob("*.cu")) if only is None or p.stem in only]
    tmp = Path(tempfile.mkdtemp(prefix="ptxc-bench-"))
    rows, problems = [], []
    ptxas = [oracle.require("ptxas"), "-arch=sm_89"]
    from ptxc.driver import tune_gc
    tune_gc()                      # as `ptxc` compiling does
    # Warm up once (the instruction table, Lark's tables and lazy imports load on first
    # use), so that the first file's kernels are not charged for it.
    lower_module(load_module("vadd.ptx", oracle.nvcc_ptx(ROOT / "testsuite" / "vadd.cu", tmp / "warm.ptx").read_text()),
                 Options(filename="vadd.ptx"))
    for cu in files:
        ptx = oracle.nvcc_ptx(cu, tmp / f"{cu.stem}.ptx")
        theirs = tmp / f"{cu.stem}.ptxas.cubin"
        run_ptxas = command(ptxas + ["-o", theirs, ptx])
        ptxas_times = []
        try:
            t_cmd = min_seconds(command([sys.executable, "-m", "ptxc", ptx, "-o", tmp / "x.cubin"]), args.runs)
            per_kernel_time = {}
            # ptxas and ptxc in turn, best of each: a busy spell of this shared machine
            # then slows both sides' samples rather than one side's.
            for attempt in range(max(1, args.runs)):   # a fresh parse each time
                ptxas_times.append(min_seconds(run_ptxas, 1))
                module = load_module(str(ptx), ptx.read_text())
                kernels = []
                for ptx_func in module.kernels():
                    single = type(module)(module.version, module.target, module.address_size,
                                          [f for f in module.functions if f is ptx_func or not f.entry],
                                          module.globals)
                    start = time.perf_counter()
                    kernels += lower_module(single, Options(filename=str(ptx)))
                    took = time.perf_counter() - start
                    per_kernel_time[ptx_func.name] = min(per_kernel_time.get(ptx_func.name, took), took)
            ours = cubin_bytes(kernels, "sm_89")
            t_ptxas = min(ptxas_times)
        except Exception as exc:   # report and go on: the table shows what does lower
            reason = getattr(exc, "stderr", None) or str(exc)
            reason = reason.decode() if isinstance(reason, bytes) else reason
            lines = [l for l in reason.splitlines() if "error" in l] or reason.splitlines() or ["?"]
            problems.append(f"{cu.name}: ptxc cannot compile it: {lines[0][:200]}")
            continue
        static_ours, static_theirs = _static_counts(ours), _static_counts(theirs.read_bytes())
        dynamic, bad = ({}, []) if args.no_emu else _dynamic_counts(cu, {"ptxas": theirs.read_bytes(), "ptxc": ours})
        problems += [f"{cu.name}: {b}" for b in bad]
        total_static = sum(n for n, _ in static_theirs.values()) or 1
        for name, (n_ours, r_ours) in static_ours.items():
            n_theirs, r_theirs = static_theirs.get(name, (0, 0))
            base = _base_name(name)
            dyn = dynamic.get(base, {})
            rows.append({"file": cu.stem, "kernel": base, "instrs": (n_ours, n_theirs), "regs": (r_ours, r_theirs),
                         "dyn": (dyn.get("ptxc"), dyn.get("ptxas")),
                         "time": (per_kernel_time.get(name, 0.0), t_ptxas * n_theirs / total_static),
                         "file_time": (t_cmd, t_ptxas)})
        print(f"  {cu.name}: {len(static_ours)} kernel(s)", file=sys.stderr)
    _print_kernel_table(rows, problems, args.markdown)
    return 0


def _ratio(pair) -> float | None:
    a, b = pair
    return a / b if a is not None and b else None


def _geomean(values) -> float | None:
    import math
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _print_kernel_table(rows: list, problems: list, markdown: bool) -> None:
    head = ("file", "kernel", "instrs ptxc/ptxas", "regs ptxc/ptxas", "dyn ptxc/ptxas", "ratio",
            "compile ms ptxc/ptxas", "ratio")
    lines = []
    for r in rows:
        dyn = r["dyn"]
        lines.append((r["file"], r["kernel"], f"{r['instrs'][0]}/{r['instrs'][1]}", f"{r['regs'][0]}/{r['regs'][1]}",
                      f"{dyn[0]}/{dyn[1]}" if dyn[0] is not None else "-",
                      f"{_ratio(dyn):.3f}" if _ratio(dyn) else "-",
                      f"{r['time'][0] * 1000:.1f}/{r['time'][1] * 1000:.1f}", f"{_ratio(r['time']):.2f}"))
    total_instrs = (sum(r["instrs"][0] for r in rows), sum(r["instrs"][1] for r in rows))
    total_regs = (sum(r["regs"][0] for r in rows), sum(r["regs"][1] for r in rows))
    dyn_rows = [r for r in rows if r["dyn"][0] is not None and r["dyn"][1]]
    total_dyn = (sum(r["dyn"][0] for r in dyn_rows), sum(r["dyn"][1] for r in dyn_rows))
    files = {r["file"]: r["file_time"] for r in rows}
    lines.append(("total", f"{len(rows)} kernels", f"{total_instrs[0]}/{total_instrs[1]}",
                  f"{total_regs[0]}/{total_regs[1]}", f"{total_dyn[0]}/{total_dyn[1]}",
                  f"geomean {_geomean(_ratio(r['dyn']) for r in dyn_rows) or 0:.3f}",
                  f"{sum(r['time'][0] for r in rows) * 1000:.0f}/{sum(r['time'][1] for r in rows) * 1000:.0f}",
                  f"geomean {_geomean(_ratio(r['time']) for r in rows) or 0:.2f}"))
    if markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(str(x[k])) for x in [head] + lines) for k in range(len(head))]
        for line in [head] + lines:
            print("  ".join(str(x).ljust(w) for x, w in zip(line, widths)))
    print(f"\nstatic instructions ptxc/ptxas: geomean {_geomean(_ratio(r['instrs']) for r in rows) or 0:.3f}; "
          f"registers: geomean {_geomean(_ratio(r['regs']) for r in rows) or 0:.3f}, "
          f"worst ptxc - ptxas = {max((r['regs'][0] - r['regs'][1] for r in rows), default=0)}")
    print("whole-file commands (fresh process): " + ", ".join(
        f"{f} {a * 1000:.0f}/{b * 1000:.0f} ms" for f, (a, b) in files.items()))
    for p in problems:
        print("problem:", p)


if __name__ == "__main__":
    sys.exit(main())
