#!/usr/bin/env python3
"""Run the testsuite's kernels on a real GPU: nvcc's sm_90 cubin against the other ways
of getting the same kernel onto the GPU, buffer for buffer.

Two steps, because the GPU machine has no pinned NVIDIA tools:

    python scripts/device_check.py prepare WORK [testsuite/*.cu]   # here: compile everything
    python scripts/device_check.py run WORK [--repeat N] [--json FILE]   # on the GPU

`prepare` writes, per kernel file with `// LAUNCH:` lines (design.md), into WORK:

| variant | what |
|---|---|
| nvcc-cubin | `nvcc -arch=sm_90 -cubin`: the reference |
| nvcc-ptx | `nvcc -arch=sm_90 -ptx`, `.version` lowered to 9.0 (driver 580's JIT refuses 9.5), JIT-compiled by the driver |
| ptxc-ptx | `ptxc -ptx -arch=sm_90 --ptx-version=9.0`, JIT-compiled by the driver |
| rewrap | nvcc's SASS written again by ptxc's cubin writer (`write_cubin(arch="sm_90")`) |
| ptxc-cubin | `ptxc -arch=sm_90`: ptxc's own sm_90 SASS, once the sm_90 backend exists |

and `manifest.json`.  `run` loads each variant (cuModuleLoadData), runs the file's
launches with the same inputs, compares every buffer with the reference's (integers
exactly, floats within the line's `ulp=`), and times each launch (CUDA events, the mean
of --repeat launches after the checked run).  A variant that faults takes its CUDA
context with it, so variants run in a worker process that is restarted after a fault;
one that gives no answer within --unit-timeout seconds (a kernel that never ends: the GPU
has no watchdog) is killed, and after --deadline seconds the rest is reported as not run.
Progress goes to stderr as it happens; at the end one line per file and variant, a
summary, and vadd's c[0] and c[n-1]; --json keeps everything.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VARIANTS = ("nvcc-cubin", "nvcc-ptx", "ptxc-ptx", "rewrap", "ptxc-cubin")
REFERENCE = "nvcc-cubin"
JIT_PTX_VERSION = "9.0"
RESULTS = Path(tempfile.gettempdir()) / "ptxc_device_check"
# Files without LAUNCH lines of their own get these (a copy in WORK carries the line):
# the seed's vadd, with inputs of ones, so that c[0] and c[n-1] print 2 as `ptxc run` does.
EXTRA_LAUNCHES = {"vadd.cu": "// LAUNCH: vadd grid=4096 block=256 a=f32[1048576]:ones b=f32[1048576]:ones "
                             "c=f32[1048576]:zero n=1048576"}


# ---- prepare (needs NVIDIA's pinned tools, no GPU) -----------------------------------------
def prepare(work: Path, sources: list[Path]) -> dict:
    from ptxc import oracle
    from ptxc.cubin import read_cubin, write_cubin
    from ptxc.emu.launch_spec import parse_file
    work.mkdir(parents=True, exist_ok=True)
    manifest = {"files": []}
    for cu in sources:
        source = cu.read_text()
        if not parse_file(source, str(cu)) and cu.name in EXTRA_LAUNCHES:
            source = EXTRA_LAUNCHES[cu.name] + "\n" + source
            cu = work / cu.name
            cu.write_text(source)
        if not parse_file(source, str(cu)):
            continue
        entry = {"source": str(cu.relative_to(ROOT)), "variants": {}, "errors": {}}
        stem = cu.stem

        def out(variant: str, suffix: str) -> Path:
            return work / f"{stem}.{variant}.{suffix}"

        def record(variant: str, path: Path | None, error: str | None = None):
            if path is not None:
                entry["variants"][variant] = path.name
            else:
                lines = (error or "").strip().splitlines() or ["failed"]
                entry["errors"][variant] = next((x for x in lines if "error" in x), lines[0])[:300]

        proc = oracle.run("nvcc", "-arch=sm_90", "-cubin", "-o", str(out("nvcc-cubin", "cubin")), str(cu), check=False)
        if proc.returncode:
            continue  # nvcc rejects it: an error test, nothing to run
        record("nvcc-cubin", out("nvcc-cubin", "cubin"))
        proc = oracle.run("nvcc", "-arch=sm_90", "-ptx", "-o", str(out("nvcc-ptx", "ptx")), str(cu), check=False)
        if proc.returncode == 0:
            path = out("nvcc-ptx", "ptx")
            path.write_text(_lower_ptx_version(path.read_text()))
            record("nvcc-ptx", path)
        else:
            record("nvcc-ptx", None, proc.stderr)
        for variant, args, suffix in (("ptxc-ptx", ["-ptx", "--ptx-version=" + JIT_PTX_VERSION], "ptx"),
                                      ("ptxc-cubin", [], "cubin")):
            path = out(variant, suffix)
            proc = subprocess.run([sys.executable, "-m", "ptxc", str(cu), "-arch=sm_90", *args, "-o", str(path)],
                                  capture_output=True, text=True, cwd=ROOT)
            record(variant, path if proc.returncode == 0 else None, proc.stderr)
        try:
            theirs = read_cubin(out("nvcc-cubin", "cubin").read_bytes())
            out("rewrap", "cubin").write_bytes(write_cubin(theirs.kernels, arch="sm_90"))
            record("rewrap", out("rewrap", "cubin"))
        except Exception as err:  # noqa: BLE001 - reported, not fatal
            record("rewrap", None, f"{type(err).__name__}: {err}")
        manifest["files"].append(entry)
        print(f"{stem}: {', '.join(entry['variants'])}" + (f"  (no {', '.join(entry['errors'])})"
                                                           if entry["errors"] else ""))
    vadd89 = work / "vadd.sm_89.cubin"   # for the architecture-mismatch check
    oracle.run("nvcc", "-arch=sm_89", "-cubin", "-o", str(vadd89), str(ROOT / "testsuite" / "vadd.cu"))
    manifest["sm89_cubin"] = vadd89.name
    (work / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def _lower_ptx_version(text: str) -> str:
    import re
    return re.sub(r"^\.version\s+\S+", f".version {JIT_PTX_VERSION}", text, count=1, flags=re.M)


# ---- run (on the GPU) -------------------------------------------------------------------------
def run_unit(gpu, work: Path, source_path: str, variant: str, filename: str, repeat: int) -> dict:
    """Run one file's launches on one variant: {'ok', 'error', 'buffers' (path of .npz), 'times_ms'}."""
    import numpy as np
    from ptxc.device import cubin_image, ptx_image, run_launches
    from ptxc.emu.launch_spec import parse_file
    source = (ROOT / source_path).read_text()
    launches = parse_file(source, source_path)
    path = work / filename
    image = cubin_image(path.read_bytes(), filename) if path.suffix == ".cubin" else ptx_image(path.read_text(), filename)
    t0 = time.perf_counter()
    run = run_launches(gpu, image, launches, source, source_path, repeat)
    dump = RESULTS / f"{Path(filename).stem}.npz"   # not in WORK: that folder travels to the GPU machine
    dump.parent.mkdir(exist_ok=True)
    np.savez(dump, **{k.replace("@", "_at_"): v for k, v in run.buffers.items()})
    return {"ok": True, "npz": str(dump), "ulp": run.ulp, "keys": list(run.buffers), "times_ms": run.times_ms,
            "wall_s": round(time.perf_counter() - t0, 3)}


def worker(work: Path, repeat: int) -> int:
    """Read units (JSON lines) on stdin, print one JSON result line per unit; exit 3 after
    a fault that leaves the context unusable."""
    from ptxc.device import GPU, DeviceError
    gpu = GPU()
    print(json.dumps({"gpu": gpu.describe(), "arch": gpu.arch}), flush=True)
    for line in sys.stdin:
        unit = json.loads(line)
        try:
            result = run_unit(gpu, work, unit["source"], unit["variant"], unit["file"], repeat)
        except Exception as err:  # noqa: BLE001 - every failure is a result to report
            result = {"ok": False, "error": f"{type(err).__name__}: {err}"}
        print(json.dumps({**unit, **result}), flush=True)
        if not result["ok"]:
            try:
                gpu.synchronize()
            except DeviceError:
                return 3
    return 0


def run_all(work: Path, repeat: int, unit_timeout: float = 20.0, deadline: float | None = None) -> dict:
    """Every (file, variant) in worker processes.  A unit that gives no answer within
    `unit_timeout` seconds (a kernel that never ends: the GPU has no watchdog) gets its
    worker killed, which ends the kernel with the context; after `deadline` seconds the
    rest is reported as not run."""
    import queue
    import threading
    manifest = json.loads((work / "manifest.json").read_text())
    units = [{"source": f["source"], "variant": v, "file": f["variants"][v]}
             for f in manifest["files"] for v in VARIANTS if v in f["variants"]]
    units.sort(key=lambda u: Path(u["source"]).name != "vadd.cu")   # the seed's kernel first
    results, info = [], {}
    pending = list(units)
    t0 = time.monotonic()
    while pending:
        if deadline is not None and time.monotonic() - t0 > deadline:
            results += [{**u, "ok": False, "error": "not run: --deadline reached"} for u in pending]
            break
        proc = subprocess.Popen([sys.executable, __file__, "worker", str(work), "--repeat", str(repeat)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put(None)], daemon=True).start()
        proc.stdin.write("".join(json.dumps(u) + "\n" for u in pending))
        proc.stdin.close()
        done, started, timed_out = 0, False, False
        while True:
            try:
                line = lines.get(timeout=unit_timeout * (3 if not started else 1))
            except queue.Empty:
                proc.kill()
                timed_out = True
                break
            if line is None:
                break
            msg = json.loads(line)
            if "gpu" in msg:
                info, started = msg, True
                continue
            results.append(msg)
            done += 1
            print(f"  {Path(msg['source']).stem} {msg['variant']}: " + ("ok" if msg["ok"] else msg["error"][:200]),
                  file=sys.stderr, flush=True)
            if deadline is not None and time.monotonic() - t0 > deadline:
                proc.kill()
                break
        proc.wait()
        if not started and not info:
            print("no worker could start (no GPU?)", file=sys.stderr)
            return {"info": info, "results": results, "error": "no worker"}
        if done < len(pending) and (timed_out or proc.returncode not in (0, 3, -9)):
            why = f"no answer within {unit_timeout:g} s (a kernel that does not end?)" if timed_out \
                else f"worker exited with {proc.returncode}"
            results.append({**pending[done], "ok": False, "error": why})
            print(f"  {Path(pending[done]['source']).stem} {pending[done]['variant']}: {why}", file=sys.stderr)
            done += 1
        pending = pending[done:]
    return {"info": info, "results": results, "mismatch": check_arch_mismatch(work, manifest)}


def check_arch_mismatch(work: Path, manifest: dict) -> str:
    """What loading an sm_89 cubin on this GPU says (it must be a clear error)."""
    from ptxc.device import GPU, cubin_image, DeviceError
    image = cubin_image((work / manifest["sm89_cubin"]).read_bytes(), manifest["sm89_cubin"])
    try:
        GPU().load_cubin(image.data, image.name, image.arch)
    except DeviceError as err:
        return f"{type(err).__name__}: {err}"
    return "loaded (unexpected)"


def compare(report: dict) -> list[dict]:
    """Each non-reference result against its file's reference: differences per buffer."""
    import numpy as np
    from ptxc.emu.specrun import differences
    by_source = {}
    for r in report["results"]:
        by_source.setdefault(r["source"], {})[r["variant"]] = r
    rows = []
    for source, variants in by_source.items():
        ref = variants.get(REFERENCE)
        ref_data = np.load(ref["npz"]) if ref and ref["ok"] else None
        for variant, r in variants.items():
            row = {"source": source, "variant": variant, "ok": r["ok"], "times_ms": r.get("times_ms"),
                   "error": r.get("error")}
            if r["ok"] and variant != REFERENCE and ref_data is not None:
                data = np.load(r["npz"])
                diffs = {}
                for key in ref_data.files:
                    ulp = ref["ulp"].get(key.replace("_at_", "@"), 0)
                    found = differences(key, data[key], ref_data[key], ulp) if key in data.files else [(-1, "missing", "")]
                    if found:
                        i, a, b = found[0]
                        diffs[key] = f"{len(found)} differ, first [{i}]: {a!r} vs nvcc {b!r}"
                row["diffs"] = diffs
                row["ok"] = not diffs
            rows.append(row)
    return rows


def print_summary(report: dict, rows: list[dict]) -> None:
    print(f"GPU: {report['info'].get('gpu', '?')}")
    ref_ms = {(r["source"]): r["times_ms"] for r in rows if r["variant"] == REFERENCE}
    for r in rows:
        name = Path(r["source"]).stem
        if not r["ok"] and r.get("error"):
            status = "ERROR " + r["error"][:160]
        elif not r["ok"]:
            status = "DIFF  " + "; ".join(f"{k}: {v}" for k, v in r["diffs"].items())[:300]
        else:
            status = "same as nvcc-cubin" if r["variant"] != REFERENCE else "ran"
        times = r.get("times_ms") or []
        ref = ref_ms.get(r["source"]) or []
        ratio = ""
        if r["ok"] and times and ref and r["variant"] != REFERENCE and all(times) and all(ref):
            ratio = f"  time x{sum(times) / sum(ref):.2f}"
        total = f"  {sum(t for t in times if t) * 1000:.1f} us" if times and all(times) else ""
        print(f"{name:22s} {r['variant']:11s} {status}{total}{ratio}")
    print("summary:")
    for v in VARIANTS:
        mine = [r for r in rows if r["variant"] == v]
        if mine:
            print(f"  {v:11s} {sum(r['ok'] for r in mine)}/{len(mine)} files "
                  + ("ran" if v == REFERENCE else "give nvcc-cubin's buffers"))
    print(f"sm_89 cubin on this GPU: {report.get('mismatch')}")
    vadd = [r for r in report["results"] if Path(r["source"]).name == "vadd.cu" and r["ok"]]
    for r in vadd:  # what `ptxc run --device vadd.cu` is to print
        import numpy as np
        c = np.load(r["npz"])["c"]
        print(f"vadd {r['variant']:11s} c[0]={c[0]:f} c[n-1]={c[-1]:f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("work", type=Path)
    p.add_argument("sources", nargs="*", type=Path)
    r = sub.add_parser("run")
    r.add_argument("work", type=Path)
    r.add_argument("--repeat", type=int, default=20, help="launches timed per LAUNCH line (0: no timing)")
    r.add_argument("--json", type=Path, help="write the whole report here")
    r.add_argument("--unit-timeout", type=float, default=20.0, help="seconds one file's variant may take")
    r.add_argument("--deadline", type=float, help="seconds after which the rest is not run")
    w = sub.add_parser("worker")
    w.add_argument("work", type=Path)
    w.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    if args.cmd == "prepare":
        sources = [s.resolve() for s in args.sources] or sorted((ROOT / "testsuite").glob("*.cu"))
        prepare(args.work.resolve(), sources)
        return 0
    if args.cmd == "worker":
        return worker(args.work.resolve(), args.repeat)
    from ptxc.device import GPU, NoDevice
    try:
        GPU()
    except NoDevice as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    report = run_all(args.work.resolve(), args.repeat, args.unit_timeout, args.deadline)
    rows = compare(report)
    print_summary(report, rows)
    if args.json:
        args.json.write_text(json.dumps({"info": report["info"], "mismatch": report.get("mismatch"), "rows": rows},
                                        indent=1, default=str))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
