#!/usr/bin/env python3
"""The random campaign: thousands of random kernels through ptxc and nvcc, checked by
NVIDIA's tools and the emulator (issue 16).

    nice -n 10 python scripts/campaign.py --kernels 5000 --arch sm_89 --jobs 2
    python scripts/campaign.py --kernels 100 --arch sm_90 --per-file 50 --out /tmp/campaign

Kernels come from the styles of scripts/fuzz_kernels.py (full-range integer inputs of every
C integer type, parameter and block-uniform operands, division by all of them, loops,
helpers writing their parameters, empty/dead/live if-regions, float and double math) plus
`warp` (shared memory, barriers, shuffles, votes and float library calls), round robin,
kernel n from random.Random(seed + n).  Kernels are renamed (k<n>, helpers h<n>_<j>,
buffers NAME_<n>) and batched `--per-file` to a .cu file, so one nvcc run, one in-process
`ptxc.compile` and one cuobjdump per cubin cover many kernels.  Per file:

1. `nvdisasm`: `cuobjdump -sass` of ptxc's cubin must read every word (no error) and print,
   function by function, what `ptxc dump` prints (ptxc.sass.printer.format_cubin);
2. `dump`: `ptxc dump` of nvcc's cubin must equal `cuobjdump -sass` of it, without UNKNOWN;
3. `emulator`: both cubins run every LAUNCH line (per launch again where the whole file
   fails, so a failure is one kernel's), ptxc's with the hazard checker;
4. `results`: every output buffer of ptxc's cubin equals nvcc's.  A difference is
   classified: `fma contraction` where nvcc -fmad=false gives ptxc's values, `frontend`
   where ptxas's cubin of ptxc's PTX gives ptxc's values (the PTX is what differs),
   `backend` where it gives nvcc's (ptxc's lowering of its own PTX is wrong), else
   `unclassified`.

A file ptxc refuses is compiled kernel by kernel; the kernels it refuses count as
`ptxc refuses` (a diagnostic) and the rest are checked.  Files run in parallel (`--jobs`,
multiprocessing, default: all cores).  Prints counts by check and cause, the first
examples of each, and keeps every kernel with a finding under --out (with the failing
check in a comment).  Exit status 1 if any check failed.
"""
from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import fuzz_kernels as F  # noqa: E402

LAUNCH_KEYS = {"grid", "block", "shared", "seed", "ulp"}


class Warp:
    """Shared memory, __syncthreads, warp shuffles (xor/up/down/idx, constant and register
    lanes), votes with full and partial masks, and float library math (sinf, expf,
    sqrtf, fmaf, __fdividef, rsqrtf) over inputs whose range the kernel bounds."""
    FLOAT = ["sinf({a})", "cosf({a})", "expf({a} * 0.125f)", "sqrtf(fabsf({a}))", "fmaf({a}, {b}, 0.5f)",
             "__fdividef({a}, fabsf({b}) + 1.0f)", "rsqrtf(fabsf({a}) + 1.0f)", "fminf({a}, {b})",
             "fmaxf({a}, {b})", "({a} * {b} + 1.0f)", "floorf({a})", "truncf({a} * 3.5f)", "__sinf({a})",
             "exp2f({a} * 0.0625f)", "log2f(fabsf({a}) + 2.0f)", "tanhf({a})"]
    INT = ["({a} + {b})", "({a} ^ ({b} >> 3))", "({a} * 2654435761u)", "(__popc({a}) + {b})", "min({a}, {b})",
           "max({a}, {b})", "({a} >> ({b} & 31))", "__brev({a})", "__clz({a})", "({a} / (({b} & 0xff) + 1u))"]

    def __init__(self, rng: random.Random):
        self.rng = rng

    def fexpr(self, depth: int) -> str:
        rng = self.rng
        if depth <= 0 or rng.random() < 0.3:
            return rng.choice(["f0", "f1", "g", "0.75f", "-2.5f"])
        return rng.choice(self.FLOAT).format(a=self.fexpr(depth - 1), b=self.fexpr(depth - 1))

    def iexpr(self, depth: int) -> str:
        rng = self.rng
        if depth <= 0 or rng.random() < 0.3:
            return rng.choice(["u0", "u1", "s", "7u", "0x80000000u", "lane"])
        return rng.choice(self.INT).format(a=self.iexpr(depth - 1), b=self.iexpr(depth - 1))

    def shuffle(self, v: str) -> str:
        rng = self.rng
        mask = rng.choice(["0xffffffffu", "0xffffffffu", "0x0000ffffu", "0xffff0000u"])
        if mask != "0xffffffffu":         # lanes outside the mask would be undefined: take own value
            return f"(((lane < 16) == ({mask} == 0x0000ffffu)) ? __shfl_xor_sync({mask}, {v}, {rng.choice([1, 2, 4, 8])}) : {v})"
        kind = rng.choice(["xor", "up", "down", "idx", "idxr"])
        if kind == "xor":
            return f"__shfl_xor_sync({mask}, {v}, {rng.choice([1, 2, 4, 8, 16])})"
        if kind == "up":
            return f"__shfl_up_sync({mask}, {v}, {rng.randint(1, 5)})"
        if kind == "down":
            return f"__shfl_down_sync({mask}, {v}, {rng.randint(1, 5)}, {rng.choice([8, 16, 32])})"
        if kind == "idx":
            return f"__shfl_sync({mask}, {v}, {rng.randint(0, 31)})"
        return f"__shfl_sync({mask}, {v}, (int)(u1 & 31u), {rng.choice([4, 8, 32])})"

    def kernel(self) -> str:
        rng = self.rng
        body = ["    __shared__ unsigned su[64]; __shared__ float sf[64];",
                "    unsigned lane = threadIdx.x & 31u, t = threadIdx.x;",
                "    unsigned u0 = (unsigned)x, u1 = (unsigned)y, s = (unsigned)L;",
                "    float f0 = (float)(x & 0xfff) * 0.0078125f - 16.0f, f1 = (float)(y & 0x3ff) * 0.03125f, g = f0;",
                "    su[t] = u0; sf[t] = f1;", "    __syncthreads();"]
        for _ in range(rng.randint(3, 6)):
            r = rng.random()
            if r < 0.25:
                body.append(f"    u0 = {self.shuffle(self.iexpr(2))};")
            elif r < 0.4:
                body.append(f"    g = {self.shuffle(self.fexpr(1))};")
            elif r < 0.55:
                body.append(f"    u1 += su[(t + {rng.randint(1, 63)}u) & 63u] ^ {self.iexpr(1)};")
            elif r < 0.7:
                body.append(f"    g = {self.fexpr(rng.randint(1, 3))};")
            elif r < 0.8:
                m = rng.choice(["0xffffffffu", "0xffffffffu", "0x0000ffffu"])
                guard = "" if m == "0xffffffffu" else "if (lane < 16) "
                vote = rng.choice(["__any_sync", "__all_sync", "__ballot_sync", "__activemask() & __ballot_sync"])
                if vote == "__activemask() & __ballot_sync":
                    vote, m = "__ballot_sync", m
                body.append(f"    {guard}s += {vote}({m}, ({self.iexpr(1)} & {1 << rng.randint(0, 5)}u) != 0u);")
            elif r < 0.9:
                n = rng.randint(2, 6)
                body.append(f"    for (int j = 0; j < (int)(u1 & {n}u); j++) {{ g = g * 0.5f + sf[(t + j) & 63u]; }}")
            else:
                body += ["    __syncthreads();", f"    su[t] = {self.iexpr(2)}; sf[t] = g;", "    __syncthreads();",
                         f"    u1 ^= su[t ^ {rng.randint(1, 63)}u]; f1 += sf[63u - t];"]
        outs = [f"    out[i * 6 + {k}] = {v};" for k, v in enumerate(
            ["u0", "u1", "s", "(unsigned long long)__float_as_uint(g)", "(unsigned long long)__float_as_uint(f0 + f1)",
             "(unsigned long long)__float_as_uint(sf[t])"])]
        return "\n".join([F.HEAD[0].format(n=768)] + F.HEAD[1:] + body + outs + ["}"]) + "\n"


STYLES = dict(F.STYLES, warp=Warp)


# ---- batching ------------------------------------------------------------------------------
def rename(source: str, n: int) -> str:
    """Kernel k -> k<n>, helpers h<j> -> h<n>_<j>, LAUNCH buffer/scalar names NAME -> NAME_<n>."""
    out = []
    for line in source.splitlines():
        if "// LAUNCH:" in line:
            head, items = line.split("// LAUNCH:", 1)
            words = items.split()
            words[0] = f"k{n}"
            words[1:] = [w if w.split("=", 1)[0] in LAUNCH_KEYS or "=" not in w else
                         f"{w.split('=', 1)[0]}_{n}={w.split('=', 1)[1]}" for w in words[1:]]
            out.append(f"{head}// LAUNCH: " + " ".join(words))
            continue
        line = re.sub(r"__global__ void k\(", f"__global__ void k{n}(", line)
        out.append(re.sub(r"\bh(\d+)\b", rf"h{n}_\1", line))
    return "\n".join(out) + "\n"


def kernel_source(n: int, seed: int, styles: list) -> tuple[str, str]:
    style = styles[n % len(styles)]
    return style, STYLES[style](random.Random(seed + n)).kernel()


# ---- the checks ----------------------------------------------------------------------------
def tool(name: str) -> str:
    from ptxc import oracle
    return str(oracle.require(name))


def functions(listing: str) -> dict:
    """{function name: [non-empty rstripped lines]} of a `cuobjdump -sass` style listing."""
    out, name = {}, None
    for line in listing.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name is not None and line.strip():
            out[name].append(line.rstrip())
    return out


def kernel_name(symbol: str) -> str:
    """k<n> of a (mangled) function symbol: _Z2k5PKiS0_PKxPy -> k5."""
    m = re.match(r"_Z\d+(k\d+)", symbol)
    return m.group(1) if m else symbol


def first_difference(a: list, b: list) -> str:
    k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return (f"line {k}: cuobjdump {a[k].strip() if k < len(a) else '<end>'!r}, "
            f"ptxc {b[k].strip() if k < len(b) else '<end>'!r}")


def compare_listings(cubin: Path, raw: bytes) -> dict:
    """{kernel name: problem} where cuobjdump and ptxc dump disagree ('*': the whole cubin)."""
    from ptxc.cubin.reader import read_cubin
    from ptxc.sass.printer import format_cubin
    done = subprocess.run([tool("cuobjdump"), "-sass", str(cubin)], capture_output=True, text=True)
    if done.returncode != 0 or "error" in done.stderr.lower():
        return {"*": f"cuobjdump refuses: {done.stderr.strip()[:300]}"}
    try:
        ours = functions(format_cubin(read_cubin(raw, str(cubin))))
    except Exception as exc:    # noqa: BLE001 -- a finding, reported
        return {"*": f"ptxc dump fails: {type(exc).__name__}: {exc}"[:300]}
    theirs = functions(done.stdout)
    ours, theirs = ({kernel_name(k): v for k, v in d.items()} for d in (ours, theirs))
    problems = {}
    for name in sorted(set(theirs) | set(ours)):
        a, b = theirs.get(name, []), ours.get(name, [])
        unknown = [line for line in b if "UNKNOWN" in line]
        if unknown:
            problems[name] = f"UNKNOWN: {unknown[0].strip()[:200]}"
        elif a != b:
            problems[name] = first_difference(a, b)
    return problems


def run_all(cubin: bytes, launches: list, source: str, filename: str, hazards: bool) -> dict:
    """{kernel: {buffer: array} | problem string}: each launch on its own (one kernel's
    failure is that kernel's), the cubin loaded and the source's signatures read once."""
    from functools import lru_cache
    from ptxc import launch as specrun
    from ptxc.launch import bind
    from ptxc.emu.device import Device
    if not hasattr(bind.kernel_signatures, "cache_info"):      # read the batch's signatures once
        bind.kernel_signatures = lru_cache(maxsize=4)(bind.kernel_signatures)
    device = Device()
    try:
        module = device.load(cubin, "x.cubin")
    except Exception as exc:   # noqa: BLE001 -- a finding for every kernel
        return {launch.kernel: f"does not load: {type(exc).__name__}: {str(exc)[:200]}" for launch in launches}
    device.load = lambda data, name="x.cubin": module
    found = {}
    for launch in launches:
        n = launch.kernel[1:]
        try:
            run = specrun.run_launches(cubin, [launch], source, filename, check_hazards=hazards,
                                       max_steps=2_000_000, device=device)
        except Exception as exc:   # noqa: BLE001 -- a finding, reported
            lines = [line for line in str(exc).splitlines() if "SASS" in line] or str(exc).splitlines()[:1] or [""]
            found[launch.kernel] = f"does not run: {type(exc).__name__}: {lines[0].strip()[:200]}"
            continue
        if hazards and run.hazards:
            found[launch.kernel] = f"hazards: {run.hazards[:2]}"
        else:
            found[launch.kernel] = {k: v for k, v in run.buffers.items() if k.endswith(f"_{n}")}
    return found


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(a[k].tobytes() == b[k].tobytes() for k in a)


def nvcc_cubin(cu: Path, arch: str, out: Path, *flags) -> bool:
    done = subprocess.run([tool("nvcc"), f"-arch={arch}", "-cubin", *flags, "-o", str(out), str(cu)],
                          capture_output=True, text=True)
    return done.returncode == 0


def ptxc_compile(source: str, arch: str):
    import ptxc
    try:
        return ptxc.compile(source, arch=arch, emit="cubin", filename="batch.cu", check=False), None
    except Exception as exc:     # noqa: BLE001 -- an internal error is a finding
        return None, f"internal error: {type(exc).__name__}: {exc}"[:300]


def check_batch(job: tuple) -> dict:
    """One .cu file of kernels [first, first+count): {'kernels', 'findings': [(check, cause,
    kernel, detail)], 'sources': {kernel: source}}."""
    first, count, seed, styles, arch = job
    from ptxc.launch.spec import parse_file
    kernels = {f"k{n}": kernel_source(n, seed, styles) for n in range(first, first + count)}
    renamed = {k: rename(src, int(k[1:])) for k, (_, src) in kernels.items()}
    findings = []

    def find(check, cause, kernel, detail):
        findings.append((check, cause, kernel, kernels[kernel][0] if kernel in kernels else "*", detail))

    with tempfile.TemporaryDirectory(prefix="campaign") as tmp:
        work = Path(tmp)
        res, err = ptxc_compile("".join(renamed.values()), arch)
        if err or not res.ok:           # find the kernels ptxc refuses, compile the others
            keep = {}
            for k, src in renamed.items():
                one, e = ptxc_compile(src, arch)
                if e:
                    find("ptxc", "internal error", k, e)
                elif not one.ok:
                    find("ptxc", "refuses (diagnostic)", k, str(one.error).splitlines()[0][:200])
                else:
                    keep[k] = src
            renamed = keep
            if not renamed:
                return {"kernels": count, "findings": findings}
            res, err = ptxc_compile("".join(renamed.values()), arch)
            if err or not res.ok:
                for k in renamed:
                    find("ptxc", "fails in a batch only", k, err or str(res.error)[:200])
                return {"kernels": count, "findings": findings}
        source = "".join(renamed.values())
        cu = work / "batch.cu"
        cu.write_text(source)
        mine, theirs = work / "ptxc.cubin", work / "nvcc.cubin"
        mine.write_bytes(res.cubin)
        if not nvcc_cubin(cu, arch, theirs):
            for k in renamed:
                find("nvcc", "refuses", k, "nvcc fails on the batch")
            return {"kernels": count, "findings": findings}
        for check, path in (("nvdisasm", mine), ("dump", theirs)):
            for k, problem in compare_listings(path, path.read_bytes()).items():
                cause = ("UNKNOWN word" if problem.startswith("UNKNOWN") else
                         "refused" if "refuses" in problem or "fails" in problem else "text differs")
                if k == "*":
                    for kk in renamed:
                        find(check, cause, kk, problem)
                else:
                    find(check, cause, k, problem)
        launches = parse_file(source, str(cu))
        ours = run_all(res.cubin, launches, source, str(cu), hazards=True)
        ref = run_all(theirs.read_bytes(), launches, source, str(cu), hazards=False)
        differ = []
        for k in renamed:
            a, b = ours.get(k), ref.get(k)
            if isinstance(a, str):
                find("emulator", "ptxc cubin: " + a.split(":")[0], k, a)
            if isinstance(b, str):
                find("emulator", "nvcc cubin: " + b.split(":")[0], k, b)
            if isinstance(a, dict) and isinstance(b, dict) and not same(a, b):
                differ.append(k)
        if differ:
            classify(differ, renamed, ours, ref, source, cu, work, arch, launches, find)
    return {"kernels": count, "findings": findings}


def classify(differ, renamed, ours, refs, source, cu, work, arch, launches, find) -> None:
    """Why ptxc's buffers differ from nvcc's (see the module docstring)."""
    nofma = work / "nofma.cubin"
    nofma_run = run_all(nofma.read_bytes(), launches, source, str(cu), False) \
        if nvcc_cubin(cu, arch, nofma, "-fmad=false") else {}
    via = work / "via.cubin"
    via_run = {}
    if res_ptx := ptxc_ptx(source, arch):
        (work / "ptxc.ptx").write_text(res_ptx)
        done = subprocess.run([tool("ptxas"), f"-arch={arch}", "-o", str(via), str(work / "ptxc.ptx")],
                              capture_output=True, text=True)
        if done.returncode == 0:
            via_run = run_all(via.read_bytes(), launches, source, str(cu), False)
    for k in differ:
        mine = ours[k]
        name = next(b for b in sorted(mine) if mine[b].tobytes() != refs[k][b].tobytes())
        at = int(next(iter((mine[name] != refs[k][name]).nonzero()[0])))
        where = f"{name}[{at}] = {int(mine[name][at]):#x}, nvcc {int(refs[k][name][at]):#x}"
        nofma_k, via_k = nofma_run.get(k), via_run.get(k)
        bad = sorted(name for name in mine if mine[name].tobytes() != (via_k or {}).get(name, mine[name]).tobytes())
        if isinstance(nofma_k, dict) and same(mine, nofma_k):
            find("results", "fma contraction (legit)", k, f"nvcc -fmad=false gives ptxc's values ({where})")
        elif isinstance(via_k, dict) and same(mine, via_k):
            find("results", "frontend (ptxc's PTX)", k, f"ptxas's cubin of ptxc's PTX gives ptxc's values ({where})")
        elif isinstance(via_k, dict):
            find("results", "backend (lowering)", k, f"ptxas's cubin of ptxc's PTX differs from ptxc's: {bad} ({where})")
        else:
            find("results", "unclassified", k, f"no ptxas cubin of ptxc's PTX to compare ({where})")


def ptxc_ptx(source: str, arch: str) -> str | None:
    import ptxc
    try:
        res = ptxc.compile(source, arch=arch, emit="ptx", filename="batch.cu", check=False)
    except Exception:   # noqa: BLE001
        return None
    return res.ptx if res.ok else None


# ---- driver --------------------------------------------------------------------------------
def summarize(findings: list, kernels: int, arch: str, seconds: float, examples: int = 3) -> str:
    lines = [f"{arch}: {kernels} kernels in {seconds:.0f} s"]
    by_check = collections.defaultdict(collections.Counter)
    shown = collections.defaultdict(list)
    for check, cause, k, style, detail in findings:
        by_check[check][cause] += 1
        if len(shown[check, cause]) < examples:
            shown[check, cause].append(f"{k} ({style}): {detail}")
    for check in ("ptxc", "nvcc", "nvdisasm", "dump", "emulator", "results"):
        total = sum(by_check[check].values())
        lines.append(f"  {check}: {total} finding(s)")
        for cause, n in by_check[check].most_common():
            lines.append(f"    {cause}: {n}")
            lines += [f"      {e}" for e in shown[check, cause]]
    return "\n".join(lines)


def unknown_words(findings: list, arch: str) -> str:
    """The UNKNOWN words of nvcc's cubins, as nvdisasm prints them, by mnemonic: what the
    tables lack."""
    import importlib.util
    words = collections.defaultdict(set)
    for check, cause, k, _style, detail in findings:
        m = re.search(r"UNKNOWN 0x([0-9a-f]+)", detail)
        if check == "dump" and m:
            words[int(m.group(1), 16)].add(k)
    if not words:
        return "UNKNOWN words in nvcc's cubins: none"
    spec = importlib.util.spec_from_file_location("learn_sm89_table", ROOT / "scripts" / "learn_sm89_table.py")
    learn = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = learn
    spec.loader.exec_module(learn)
    order = sorted(words)
    texts = learn.nvdisasm_batch(order, arch)
    by = collections.defaultdict(lambda: [0, None])
    for w, t in zip(order, texts):
        name = (t or "?").split(" ")[0] if not (t or "").startswith("@") else (t or "?").split(" ")[1]
        by[name][0] += len(words[w])
        by[name][1] = by[name][1] or t
    lines = [f"UNKNOWN words in nvcc's cubins, by what nvdisasm prints ({len(words)} distinct words):"]
    lines += [f"  {name}: {n} kernel(s), e.g. {example}" for name, (n, example) in
              sorted(by.items(), key=lambda kv: -kv[1][0])]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=int, default=500)
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--per-file", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--styles", default=",".join(STYLES))
    ap.add_argument("--out", default=None, help="results.jsonl (one line per file; a rerun with the same "
                    "options continues it) and the kernels with findings; default: a temporary folder")
    ap.add_argument("--summary-only", action="store_true", help="print the summary of --out's results")
    args = ap.parse_args(argv)
    styles = args.styles.split(",")
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="campaign"))
    out.mkdir(parents=True, exist_ok=True)
    log = out / f"results_{args.arch}.jsonl"
    key = {"arch": args.arch, "seed": args.seed, "styles": styles, "per_file": args.per_file}
    done_batches = {}
    if log.exists():
        for line in log.read_text().splitlines():
            rec = json.loads(line)
            if rec["key"] == key:
                done_batches[rec["first"]] = rec
    jobs = [(first, min(args.per_file, args.kernels - first), args.seed, styles, args.arch)
            for first in range(0, args.kernels, args.per_file) if first not in done_batches]
    start = time.time()
    if jobs and not args.summary_only:
        with multiprocessing.get_context("spawn").Pool(max(1, args.jobs)) as pool, log.open("a") as f:
            for n, (job, result) in enumerate(zip(jobs, pool.imap(check_batch, jobs)), 1):
                rec = {"key": key, "first": job[0], "seconds": round(time.time() - start, 1), **result}
                f.write(json.dumps(rec) + "\n")
                f.flush()
                done_batches[job[0]] = rec
                print(f"[{n}/{len(jobs)}] {time.time() - start:.0f} s, {len(result['findings'])} finding(s)",
                      file=sys.stderr)
    records = [r for first, r in sorted(done_batches.items()) if first < args.kernels]
    findings = [tuple(f) for r in records for f in r["findings"]]
    kernels = sum(r["kernels"] for r in records)
    print(summarize(findings, kernels, args.arch, time.time() - start))
    print(unknown_words(findings, args.arch))
    for check, cause, k, style, detail in findings:
        n = int(k[1:]) if k[1:].isdigit() else None
        if n is not None:
            src = rename(kernel_source(n, args.seed, styles)[1], n)
            (out / f"{args.arch}_{k}.cu").write_text(f"// {check}: {cause}: {detail}\n{src}")
    print(f"results: {log}", file=sys.stderr)
    legit = {"fma contraction (legit)", "refuses (diagnostic)"}
    return 1 if any(cause not in legit for _, cause, *_ in findings) else 0


if __name__ == "__main__":
    sys.exit(main())
