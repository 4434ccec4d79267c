#!/usr/bin/env python3
"""Run the testsuite's kernels on a real GPU: nvcc's sm_90 cubin against the other ways
of getting the same kernel onto the GPU, buffer for buffer, and time them.

Two steps, because the GPU machine has no pinned NVIDIA tools (three with the emulator):

    python scripts/device_check.py prepare WORK [FILE.cu ...]      # here: compile everything (default:
                                                                   # testsuite/*.cu, testsuite/regress/*.cu)
    python scripts/device_check.py emulate WORK                    # here: the sm_90 cubins on the emulator
    python scripts/device_check.py run WORK [--repeat N] [--json FILE]   # on the GPU

`prepare` writes, per kernel file with `// LAUNCH:` lines (design.md), into WORK:

| variant | what |
|---|---|
| nvcc-cubin | `nvcc -arch=sm_90 -cubin`: the reference |
| nvcc-ptx | `nvcc -arch=sm_90 -ptx`, `.version` lowered to 9.0 (driver 580's JIT refuses 9.5), JIT-compiled by the driver |
| ptxc-ptx | `ptxc -ptx -arch=sm_90 --ptx-version=9.0`, JIT-compiled by the driver |
| rewrap | nvcc's SASS written again by ptxc's cubin writer (`write_cubin(arch="sm_90")`) |
| ptxc-cubin | `ptxc -arch=sm_90`: ptxc's own sm_90 SASS; a file ptxc cannot compile for sm_90 is said so (its first error line) and has none |

and `manifest.json`, which also classes every kernel (below).  `run` loads each variant
(cuModuleLoadData), runs the file's launches with the same inputs, compares every buffer
with the reference's (integers exactly, floats within the line's `ulp=`: the comparison of
`ptxc check`, ptxc.launch.differences), and times each launch (CUDA events: one
warm-up launch, then the mean of --repeat launches, after the checked run).  A variant
that faults takes its CUDA context with it, so variants run in a worker process that is
restarted after a fault; one that gives no answer within --unit-timeout seconds (a kernel
that never ends: the GPU has no watchdog) is killed, and after --deadline seconds the
rest is reported as not run.  Progress goes to stderr as it happens; at the end one line
per file and variant, a summary, the kernel-time table, and vadd's c[0] and c[n-1];
--json keeps everything.

Kernel time.  Per kernel (a file's kernel, its launches' times summed), the ratios
ptxc-cubin/nvcc-cubin and ptxc-ptx/nvcc-cubin, and their geometric means over the kernels
where both ran and gave nvcc-cubin's buffers, for memory-bound kernels, compute-bound
kernels and all.  The rule that classes a kernel, applied by `prepare` to nvcc's sm_90
SASS of it (static instruction counts, one rule for all files, no list to keep):

    memory-bound  if global-memory instructions (LDG, STG, LD, ST, ATOM, ATOMG, RED, REDG,
                  LDGSTS) are at least 1/10 of its instructions (NOPs and the closing
                  self-branch not counted);
    compute-bound otherwise.

So vadd (3 of 20), saxpy (3 of 24), stencil_1d and matmul_naive are memory-bound;
fe_math_float, fe_nbody, isa_double and the shared-memory tiled matmuls compute-bound.
These kernels take 4-30 us on an H200: launch overhead weighs on every ratio.

`emulate` runs the prepared nvcc-cubin and ptxc-cubin files in ptxc's emulator and
writes their buffers to WORK/emu/ (compressed .npz, with emu/manifest.json), so that
`run` can show, per file, that the emulator and the GPU give the same buffers for both
cubins.  Until the emulator takes sm_90 cubins it says "emulator cannot load sm_90
cubins yet" (with the first failure of its probe: nvcc's sm_90 vadd, saxpy and
reduce_shared must run and vadd give 2) and writes only that (emu/manifest.json), and
`run` repeats it.

The batch on the device machine (docs/sm90.md "On the H200"): tests/test_device.py,
`run`, and `ptxc run --device` of vadd, in one call.
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
TIMED = ("ptxc-cubin", "ptxc-ptx")          # the variants whose kernel time is compared with nvcc-cubin's
EMULATED = ("nvcc-cubin", "ptxc-cubin")     # the variants `emulate` runs
# The memory-bound rule (docstring): global-memory instructions / all instructions >= MEMORY_SHARE.
GLOBAL_MEMORY_OPS = frozenset({"LDG", "STG", "LD", "ST", "ATOM", "ATOMG", "RED", "REDG", "LDGSTS"})
MEMORY_SHARE = 0.1
EMU_PROBE = ("vadd", "saxpy", "reduce_shared")
# Files without LAUNCH lines of their own get these (a copy in WORK carries the line):
# the seed's vadd, with inputs of ones, so that c[0] and c[n-1] print 2 as `ptxc run` does.
EXTRA_LAUNCHES = {"vadd.cu": "// LAUNCH: vadd grid=4096 block=256 a=f32[1048576]:ones b=f32[1048576]:ones "
                             "c=f32[1048576]:zero n=1048576"}


# ---- prepare (needs NVIDIA's pinned tools, no GPU) -----------------------------------------
def prepare(work: Path, sources: list[Path]) -> dict:
    from ptxc import oracle
    from ptxc.cubin import read_cubin, write_cubin
    from ptxc.launch.spec import parse_file
    import shutil
    work.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(work / "emu", ignore_errors=True)     # the emulator's results of an earlier prepare
    manifest = {"files": []}
    for cu in sources:
        source = cu.read_text()
        if not parse_file(source, str(cu)) and cu.name in EXTRA_LAUNCHES:
            source = EXTRA_LAUNCHES[cu.name] + "\n" + source
            cu = work / cu.name
            cu.write_text(source)
        if not parse_file(source, str(cu)):
            continue
        # relative to the checkout, which is where WORK travels with it (an absolute path otherwise)
        entry = {"source": str(cu.relative_to(ROOT)) if cu.is_relative_to(ROOT) else str(cu),
                 "variants": {}, "errors": {}}
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
        try:
            entry["kernels"] = kernel_classes(out("nvcc-cubin", "cubin").read_bytes())
        except Exception as err:  # noqa: BLE001 - unclassed kernels count as compute-bound
            print(f"    {stem}: cannot class its kernels: {type(err).__name__}: {err}")
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
            path.unlink(missing_ok=True)
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
        if "ptxc-cubin" in entry["errors"]:
            print(f"    ptxc-cubin: ptxc cannot compile {cu.name} for sm_90: {entry['errors']['ptxc-cubin']}")
    vadd89 = work / "vadd.sm_89.cubin"   # for the architecture-mismatch check
    oracle.run("nvcc", "-arch=sm_89", "-cubin", "-o", str(vadd89), str(ROOT / "testsuite" / "vadd.cu"))
    manifest["sm89_cubin"] = vadd89.name
    (work / "manifest.json").write_text(json.dumps(manifest, indent=1))
    files = manifest["files"]
    print(f"prepared {len(files)} files; ptxc-cubin for {sum('ptxc-cubin' in f['variants'] for f in files)}, "
          f"ptxc-ptx for {sum('ptxc-ptx' in f['variants'] for f in files)}")
    return manifest


# ---- classing kernels (memory- or compute-bound) ------------------------------------------------
def sass_mix(ops: list[str]) -> tuple[int, int]:
    """(instructions, global-memory instructions) of a kernel's opcodes in address order:
    NOPs and the closing self-branch (`BRA` after the last EXIT) not counted."""
    ops = [op for op in ops if op != "NOP"]
    if ops and ops[-1] == "BRA" and "EXIT" in ops:
        ops = ops[:-1]
    return len(ops), sum(op in GLOBAL_MEMORY_OPS for op in ops)


def default_sources() -> list[Path]:
    """testsuite/*.cu, and testsuite/regress/*.cu: regression kernels (issue 16's division
    by a parameter) whose nvcc code the emulator cannot run yet, so that only the GPU and
    `ptxc check` with a reference cubin compare them."""
    testsuite = ROOT / "testsuite"
    return sorted(testsuite.glob("*.cu")) + sorted((testsuite / "regress").glob("*.cu"))


def classify(instructions: int, global_memory: int) -> str:
    """'memory' or 'compute' (the rule in the docstring)."""
    return "memory" if instructions and global_memory >= MEMORY_SHARE * instructions else "compute"


def kernel_classes(cubin: bytes) -> dict:
    """{kernel's plain name: {mangled, instructions, global_memory, class}} of an sm_90 cubin."""
    from ptxc.cubin import read_cubin
    from ptxc.emu.names import demangle_base
    from ptxc.sass.decode import decode_all
    from ptxc.sass.table import load
    table = load("sm_90")
    out = {}
    for kernel in read_cubin(cubin).kernels:
        n, g = sass_mix([instr.op for _addr, instr in decode_all(kernel.text, 0, table)])
        out[demangle_base(kernel.name)] = {"mangled": kernel.name, "instructions": n, "global_memory": g,
                                           "class": classify(n, g)}
    return out


# ---- emulate (here: the emulator on the sm_90 cubins) ----------------------------------------------
def emulator_probe(work: Path, manifest: dict, max_steps: int) -> str | None:
    """None if the emulator runs nvcc's sm_90 cubins of EMU_PROBE (vadd giving 2), else why not."""
    from ptxc.launch.spec import parse_file
    from ptxc.launch import run_launches as emulate_launches
    import numpy as np
    by_stem = {Path(f["source"]).stem: f for f in manifest["files"]}
    for stem in EMU_PROBE:
        entry = by_stem.get(stem)
        if entry is None or "nvcc-cubin" not in entry["variants"]:
            continue
        source = (ROOT / entry["source"]).read_text()
        try:
            run = emulate_launches((work / entry["variants"]["nvcc-cubin"]).read_bytes(),
                                   parse_file(source, entry["source"]), source, entry["source"],
                                   cubin_name=entry["variants"]["nvcc-cubin"], max_steps=max_steps)
        except Exception as err:  # noqa: BLE001 - what the emulator says is the answer
            return f"{stem}: {_first_line(err)}"
        if stem == "vadd" and not (run.buffers["c"] == np.float32(2)).all():
            return "vadd: c is not a + b = 2"
    return None


def _first_line(err) -> str:
    text = str(err).strip().splitlines()
    text = next((x.strip("= ").strip() for x in text if x.strip("= ").strip()), type(err).__name__)
    return f"{type(err).__name__}: {text}"[:300]


def emulate(work: Path, max_steps: int = 20_000_000) -> dict:
    """The emulator on every prepared nvcc-cubin and ptxc-cubin: buffers to WORK/emu/."""
    import numpy as np
    from ptxc.launch.spec import parse_file
    from ptxc.launch import run_launches as emulate_launches
    manifest = json.loads((work / "manifest.json").read_text())
    folder = work / "emu"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.npz"):
        old.unlink()
    why = emulator_probe(work, manifest, max_steps)
    report = {"ok": why is None, "why": why, "files": {}}
    if why is not None:
        print(f"emulator cannot load sm_90 cubins yet ({why})")
        (folder / "manifest.json").write_text(json.dumps(report, indent=1))
        return report
    for entry in manifest["files"]:
        source = (ROOT / entry["source"]).read_text()
        launches = parse_file(source, entry["source"])
        results = report["files"][entry["source"]] = {}
        for variant in EMULATED:
            if variant not in entry["variants"]:
                continue
            name = entry["variants"][variant]
            t0 = time.perf_counter()
            try:
                run = emulate_launches((work / name).read_bytes(), launches, source, entry["source"],
                                       cubin_name=name, max_steps=max_steps)
            except Exception as err:  # noqa: BLE001 - reported per file
                results[variant] = {"ok": False, "error": _first_line(err)}
                continue
            npz = folder / f"{Path(name).stem}.npz"
            np.savez_compressed(npz, **{k.replace("@", "_at_"): v for k, v in run.buffers.items()})
            results[variant] = {"ok": True, "npz": str(npz.relative_to(work)), "ulp": run.ulp,
                                "seconds": round(time.perf_counter() - t0, 2)}
        stem = Path(entry["source"]).stem
        line = ", ".join(f"{v} " + ("ran" if r["ok"] else r["error"][:120]) for v, r in results.items())
        if "ptxc-cubin" not in entry["variants"]:
            line += " (no ptxc-cubin: ptxc cannot compile it for sm_90)"
        if all(results.get(v, {}).get("ok") for v in EMULATED):
            nvcc, ptxc = (np.load(work / results[v]["npz"]) for v in EMULATED)
            bad = buffer_diffs(ptxc, nvcc, results["ptxc-cubin"]["ulp"])
            line += "; ptxc-cubin " + (f"differs from nvcc-cubin in {', '.join(bad)}" if bad
                                       else "gives nvcc-cubin's buffers")
        print(f"{stem}: {line}")
    (folder / "manifest.json").write_text(json.dumps(report, indent=1))
    return report


def _lower_ptx_version(text: str) -> str:
    import re
    return re.sub(r"^\.version\s+\S+", f".version {JIT_PTX_VERSION}", text, count=1, flags=re.M)


# ---- run (on the GPU) -------------------------------------------------------------------------
def run_unit(gpu, work: Path, source_path: str, variant: str, filename: str, repeat: int) -> dict:
    """Run one file's launches on one variant: {'ok', 'error', 'buffers' (path of .npz), 'times_ms'}."""
    import numpy as np
    from ptxc.device import cubin_image, ptx_image, run_launches
    from ptxc.launch.spec import parse_file
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
            "kernels": run.kernels, "wall_s": round(time.perf_counter() - t0, 3)}


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


def buffer_diffs(data, ref, ulp: dict, who: str = "nvcc") -> dict:
    """{buffer: what differs} between two .npz contents (`ulp` by buffer name)."""
    from ptxc.launch import differences
    diffs = {}
    for key in ref.files:
        allowed = ulp.get(key.replace("_at_", "@"), 0)
        found = differences(key, data[key], ref[key], allowed) if key in data.files else [(-1, "missing", "")]
        if found:
            i, a, b = found[0]
            diffs[key] = f"{len(found)} differ, first [{i}]: {a!r} vs {who} {b!r}"
    return diffs


def compare_emulator(work: Path, rows: list[dict], report: dict) -> str | None:
    """Each GPU run of an EMULATED variant against the emulator's buffers of the same
    cubin (WORK/emu, from `emulate`): row['emulator'] = 'same' or what differs.  Returns
    why there is nothing to compare, if so."""
    import numpy as np
    path = work / "emu" / "manifest.json"
    if not path.exists():
        return "no emulator results (run `device_check.py emulate WORK` before carrying WORK)"
    emu = json.loads(path.read_text())
    if not emu.get("ok"):
        return f"emulator cannot load sm_90 cubins yet ({emu.get('why')})"
    results = {(r["source"], r["variant"]): r for r in report["results"]}
    for row in rows:
        mine = emu["files"].get(row["source"], {}).get(row["variant"])
        gpu = results.get((row["source"], row["variant"]))
        if row["variant"] not in EMULATED or mine is None or gpu is None or not gpu["ok"]:
            continue
        if not mine["ok"]:
            row["emulator"] = "emulator failed: " + mine["error"]
            continue
        diffs = buffer_diffs(np.load(gpu["npz"]), np.load(work / mine["npz"]), gpu["ulp"], "emulator")
        row["emulator"] = "same" if not diffs else "; ".join(f"{k}: {v}" for k, v in diffs.items())
    return None


def compare(report: dict) -> list[dict]:
    """Each non-reference result against its file's reference: differences per buffer."""
    import numpy as np
    by_source = {}
    for r in report["results"]:
        by_source.setdefault(r["source"], {})[r["variant"]] = r
    rows = []
    for source, variants in by_source.items():
        ref = variants.get(REFERENCE)
        ref_data = np.load(ref["npz"]) if ref and ref["ok"] else None
        for variant, r in variants.items():
            row = {"source": source, "variant": variant, "ok": r["ok"], "times_ms": r.get("times_ms"),
                   "kernels": r.get("kernels"), "error": r.get("error")}
            if r["ok"] and variant != REFERENCE and ref_data is not None:
                row["diffs"] = buffer_diffs(np.load(r["npz"]), ref_data, ref["ulp"])
                row["ok"] = not row["diffs"]
            rows.append(row)
    return rows


def kernel_times(rows: list[dict], classes: dict) -> list[dict]:
    """Per (file, kernel): its class and, per variant that ran, its launches' summed time
    in microseconds and whether that variant gave nvcc-cubin's buffers.  `classes`:
    {source: manifest 'kernels'}."""
    out = {}
    for r in rows:
        if not r.get("times_ms") or not r.get("kernels"):
            continue
        for kernel, ms in zip(r["kernels"], r["times_ms"]):
            if ms is None:
                continue
            info = classes.get(r["source"], {}).get(kernel, {})
            entry = out.setdefault((r["source"], kernel), {"source": r["source"], "kernel": kernel,
                                                           "class": info.get("class", "compute"),
                                                           "us": {}, "same": {}})
            entry["us"][r["variant"]] = entry["us"].get(r["variant"], 0.0) + ms * 1000
            entry["same"][r["variant"]] = bool(r["ok"])
    return list(out.values())


def geometric_mean(values: list[float]) -> float | None:
    import math
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def time_ratios(kernels: list[dict]) -> dict:
    """{variant: {'memory'|'compute'|'all': (geometric mean of variant/nvcc-cubin, kernels)}},
    over the kernels where both ran and the variant gave nvcc-cubin's buffers."""
    out = {}
    for variant in TIMED:
        by_class = {"memory": [], "compute": []}
        for k in kernels:
            if k["same"].get(variant) and REFERENCE in k["us"] and variant in k["us"]:
                by_class[k["class"]].append(k["us"][variant] / k["us"][REFERENCE])
        by_class["all"] = by_class["memory"] + by_class["compute"]
        out[variant] = {c: (geometric_mean(v), len(v)) for c, v in by_class.items()}
    return out


def format_kernel_times(kernels: list[dict], repeat=None) -> list[str]:
    """The kernel-time table and its geometric means, as `run` prints them."""
    if not kernels:
        return ["kernel time: none measured (--repeat 0?)"]
    how = f"mean of {repeat} launches after a warm-up" if repeat else "mean of --repeat launches after a warm-up"
    lines = [f"kernel time per kernel (us; CUDA events, {how}; x = variant / nvcc-cubin):",
             f"  {'file':20s} {'kernel':20s} {'class':8s} {'nvcc-cubin':>10s}"
             + "".join(f" {v:>18s}" for v in TIMED)]

    def cell(k, v):
        if v not in k["us"]:
            return f" {'-':>18s}"
        ratio = f"x{k['us'][v] / k['us'][REFERENCE]:.2f}" if REFERENCE in k["us"] else ""
        mark = "" if k["same"].get(v) else "!"      # ran, but not nvcc-cubin's buffers
        return f" {k['us'][v]:8.1f} {ratio + mark:>9s}"
    for k in sorted(kernels, key=lambda k: (k["class"], Path(k["source"]).stem, k["kernel"])):
        ref = f"{k['us'][REFERENCE]:10.1f}" if REFERENCE in k["us"] else f"{'-':>10s}"
        lines.append(f"  {Path(k['source']).stem:20s} {k['kernel'][:20]:20s} {k['class']:8s} {ref}"
                     + "".join(cell(k, v) for v in TIMED))
    lines.append("  (! : that variant's buffers differ from nvcc-cubin's; left out of the means)")
    lines.append("geometric mean of kernel time / nvcc-cubin's (kernels):")
    lines.append(f"  {'variant':12s} {'memory-bound':>16s} {'compute-bound':>16s} {'all':>16s}")
    for variant, by_class in time_ratios(kernels).items():
        cells = [f"x{m:.2f} ({n})" if m is not None else f"- ({n})" for m, n in
                 (by_class[c] for c in ("memory", "compute", "all"))]
        lines.append(f"  {variant:12s} " + " ".join(f"{c:>16s}" for c in cells))
    return lines


# Files whose results depend on the order threads run in: a difference there says
# nothing about the code (tests/test_emu_gpu.py's KNOWN gives the same reason).
RACY = {"fe_struct_global": "thread i reads particle i+1, which another warp updates without synchronization"}


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
        emu = f"  emulator: {r['emulator'][:160]}" if r.get("emulator") else ""
        print(f"{name:22s} {r['variant']:11s} {status}{total}{ratio}{emu}")
    print("summary:")
    for v in VARIANTS:
        mine = [r for r in rows if r["variant"] == v]
        if mine:
            bad = [Path(r["source"]).stem for r in mine if not r["ok"]]
            notes = [f"{b} (racy: {RACY[b]})" if b in RACY else b for b in bad]
            print(f"  {v:11s} {sum(r['ok'] for r in mine)}/{len(mine)} files "
                  + ("ran" if v == REFERENCE else "give nvcc-cubin's buffers")
                  + (f"; not: {', '.join(notes)}" if notes else ""))
    emulated = [r for r in rows if r.get("emulator")]
    if report.get("emulator_note"):
        print(f"emulator vs GPU: {report['emulator_note']}")
    elif emulated:
        for v in EMULATED:
            mine = [r for r in emulated if r["variant"] == v]
            print(f"  emulator vs GPU, {v}: {sum(r['emulator'] == 'same' for r in mine)}/{len(mine)} files "
                  "give the same buffers")
    print(f"sm_89 cubin on this GPU: {report.get('mismatch')}")
    for line in format_kernel_times(kernel_times(rows, report.get("classes", {})), report.get("repeat")):
        print(line)
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
    e = sub.add_parser("emulate")
    e.add_argument("work", type=Path)
    e.add_argument("--max-steps", type=int, default=20_000_000, help="warp instructions per launch")
    w = sub.add_parser("worker")
    w.add_argument("work", type=Path)
    w.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    if args.cmd == "prepare":
        sources = [s.resolve() for s in args.sources] or default_sources()
        prepare(args.work.resolve(), sources)
        return 0
    if args.cmd == "worker":
        return worker(args.work.resolve(), args.repeat)
    if args.cmd == "emulate":
        emulate(args.work.resolve(), args.max_steps)
        return 0
    from ptxc.device import GPU, NoDevice
    try:
        GPU()
    except NoDevice as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    work = args.work.resolve()
    report = run_all(work, args.repeat, args.unit_timeout, args.deadline)
    rows = compare(report)
    manifest = json.loads((work / "manifest.json").read_text())
    report["classes"] = {f["source"]: f.get("kernels", {}) for f in manifest["files"]}
    report["repeat"] = args.repeat
    report["emulator_note"] = compare_emulator(work, rows, report)
    print_summary(report, rows)
    if args.json:
        kernels = kernel_times(rows, report["classes"])
        args.json.write_text(json.dumps({"info": report["info"], "mismatch": report.get("mismatch"), "rows": rows,
                                         "emulator": report["emulator_note"], "kernel_times": kernels,
                                         "time_ratios": time_ratios(kernels)}, indent=1, default=str))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
