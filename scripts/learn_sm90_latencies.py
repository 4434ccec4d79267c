#!/usr/bin/env python3
"""Learn the sm_90 scheduling model from ptxas and write ptxc/sass/sm_90_latencies.json.

The method is scripts/learn_sm89_latencies.py's, whose functions this script imports and
runs unchanged (docs/scheduling.md): the same micro-benchmark kernels and realistic
kernels, compiled with the pinned `ptxas -arch=sm_90`, read back from cuobjdump's listing,
the smallest issue distance per producer/consumer relation taken as its latency.  What
sm_90 changes is set here before running it:

- ARCH, the PTX `.target` and the output file;
- the opcode classes of what sm_90 has and sm_89 does not: VIADD (integer add, where
  sm_89 writes IADD3) in a class of its own, `valu`; VIMNMX, VIMNMX3 and VIADDMNMX
  (integer min/max, sm_89's IMNMX) in another, `vminmax`.  They were one class until
  the homogeneity report (--report) showed two behaviours: an FFMA/FADD/FMUL or IMAD
  result reaches VIMNMX in 5 cycles where it reaches VIADD in 4, and VIADD's result
  reaches an ALU reader in 5 where VIMNMX's does in 4.  The class minimum (4) put a
  VIMNMX one cycle too early after an FADD: it read the old register on the H200
  (rhypotf in testsuite/fe_math_special.cu).  REDG (sm_89's RED), CGAERRBAR (a fence),
  ENDCOLLECTIVE (convergence).

Unknown opcodes fall into the slow, scoreboarded default class, as for sm_89.

Usage: python scripts/learn_sm90_latencies.py [--report] [--listings DIR] [--out FILE]
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "ptxc" / "sass" / "sm_90_latencies.json"

SM90_CLASSES = {
    "valu": (False, {}, "sm_90's integer add VIADD (sm_89 writes IADD3): an FMA-pipe reader's latencies"),
    "vminmax": (False, {}, "sm_90's integer min/max VIMNMX, VIMNMX3, VIADDMNMX (sm_89: IMNMX): "
                           "an ALU reader's latencies"),
}
SM90_RULES = [
    ("VIADD", (), "valu"),
    *[(op, (), "vminmax") for op in "VIMNMX VIMNMX3 VIADDMNMX".split()],
    ("REDG", (), "atom_global"),
    ("CGAERRBAR", (), "membar"),
    ("ENDCOLLECTIVE", (), "convergence"),
]


def sm89_learner():
    """scripts/learn_sm89_latencies.py as a module, switched to sm_90."""
    path = ROOT / "scripts" / "learn_sm89_latencies.py"
    spec = importlib.util.spec_from_file_location("learn_sm89_latencies", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.ARCH = "sm_90"
    module.OUT = OUT
    module.HEADER = module.HEADER.replace(".target sm_89", ".target sm_90")
    module.CLASSES = {**module.CLASSES, **SM90_CLASSES}
    module.OP_RULES = SM90_RULES + list(module.OP_RULES)
    return module


def main() -> int:
    learner = sm89_learner()
    build = learner.build

    def build_sm90(listings, report):
        table = build(listings, report)
        table["comment"] = table["comment"].replace("learn_sm89_latencies.py", "learn_sm90_latencies.py "
                                                    "(learn_sm89_latencies.py's method)").replace("sm_89", "sm_90")
        return table
    learner.build = build_sm90
    if "--out" not in sys.argv:
        sys.argv += ["--out", str(OUT)]
    return learner.main()


if __name__ == "__main__":
    sys.exit(main())
