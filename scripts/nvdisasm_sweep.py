#!/usr/bin/env python3
"""Does NVIDIA's disassembler read every word ptxc writes?  Compile every file under
testsuite/ (top level and subfolders) and N random kernels of each scripts/fuzz_kernels.py
style with ptxc for every target that has an instruction table (sm_80, sm_86, sm_89, sm_90), run `cuobjdump -sass` (nvdisasm inside) on each cubin,
and compare its text with `ptxc dump`'s (ptxc.sass.printer.format_cubin).  The emulator
cannot judge an encoding (it decodes with ptxc's own table); nvdisasm can.

    python scripts/nvdisasm_sweep.py [--random N] [--arch sm_80,sm_86,sm_89,sm_90]

Prints, per arch: cubins written, cubins cuobjdump refused, cubins whose text differs
(first differing line shown), and files ptxc refused (not counted: a diagnostic).
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import ptxc  # noqa: E402
from ptxc import oracle  # noqa: E402
from ptxc.cubin.reader import read_cubin  # noqa: E402
from ptxc.sass.printer import format_cubin  # noqa: E402
from ptxc.sass.target import with_backend  # noqa: E402


def sources(n_random: int):
    for path in sorted((ROOT / "testsuite").rglob("*")):
        if path.suffix in (".cu", ".ptx") and "errors" not in path.parts:
            yield str(path.relative_to(ROOT)), path
    import fuzz_kernels as F
    for style, cls in F.STYLES.items():
        for seed in range(n_random):
            yield f"{style}:{seed}", cls(random.Random(seed)).kernel()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int, default=20)
    ap.add_argument("--arch", default=",".join(with_backend()),
                    help="comma-separated targets (default: every target ptxc compiles for)")
    args = ap.parse_args()
    cuobjdump = oracle.require("cuobjdump")
    status = 0
    with tempfile.TemporaryDirectory() as tmp:
        for arch in args.arch.split(","):
            written = refused = differ = 0
            not_compiled = 0
            for name, src in sources(args.random):
                kw = {} if isinstance(src, Path) else {"filename": "fuzz.cu"}
                try:
                    res = ptxc.compile(src, arch=arch, emit="cubin", check=False, **kw)
                except Exception as exc:                     # an internal error: report it
                    print(f"{arch} {name}: internal error {exc!r}")
                    status = 1
                    continue
                if not res.ok or not res.cubin:
                    not_compiled += 1
                    continue
                written += 1
                cub = Path(tmp) / "k.cubin"
                cub.write_bytes(res.cubin)
                out = subprocess.run([str(cuobjdump), "-sass", str(cub)], capture_output=True, text=True)
                if out.returncode != 0 or "error" in out.stderr.lower():
                    refused += 1
                    status = 1
                    print(f"{arch} {name}: cuobjdump refuses: {out.stderr.strip()[:200]}")
                    continue
                mine = format_cubin(read_cubin(res.cubin, str(cub)))
                theirs = [l.rstrip() for l in out.stdout.splitlines() if l.strip()]
                ours = [l.rstrip() for l in mine.splitlines() if l.strip()]
                if theirs != ours:
                    differ += 1
                    status = 1
                    first = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours)))
                    print(f"{arch} {name}: text differs at line {first}:\n  cuobjdump: "
                          f"{theirs[first] if first < len(theirs) else '<end>'}\n  ptxc:      "
                          f"{ours[first] if first < len(ours) else '<end>'}")
            print(f"{arch}: {written} cubins; cuobjdump refused {refused}; text differs {differ}; "
                  f"{not_compiled} inputs ptxc did not compile (a diagnostic)")
    return status


if __name__ == "__main__":
    sys.exit(main())
