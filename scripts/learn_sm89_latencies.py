#!/usr/bin/env python3
"""Learn the sm_89 scheduling model from ptxas and write ptxc/sass/sm_89_latencies.json.

ptxas's latency tables are not documented, so this script asks ptxas: it writes
families of small PTX kernels (dependency chains between every pair of
instruction kinds, independent pairs, variable-latency producers consumed in
shuffled orders, predicates feeding branches and selects, loops, uniform-register
arithmetic, 64-bit producers), adds the realistic kernels of tests/data/sched
(nvcc's PTX for small CUDA programs; micro.ptx there is held out), compiles all of
them with the pinned `ptxas -arch=sm_89`
(default -O3: it reorders freely, so nothing here relies on the PTX order; every
fact is read back from the SASS listing), parses `cuobjdump -sass` and measures:

- issue time of every instruction = sum of the stall counts before it;
- for every pair of instructions in one straight-line region, the distance in
  cycles and how they are related (the second reads what the first wrote, in which
  operand role; overwrites what it read; overwrites what it wrote; or nothing);
- per (producer class, consumer class + operand role) the *minimum* distance ever
  seen: ptxas never violates a latency, and the chains make many pairs tight, so
  the minimum is the latency (a value seen only a few times is flagged);
- per pair of classes the minimum distance with no dependency (pipe throughput);
- which classes set scoreboards, the range of scoreboard numbers each uses, how
  far after the setter a wait may come, when read scoreboards are set;
- the minimum stall per class, before a branch target, on the entry instruction;
- the yield bit and the reuse flags as functions of stall and neighbours.

Classes group opcodes that behave alike (pipes in NVIDIA's terms: ALU, FMA,
XU/MUFU, FP64, LSU, ...); membership is declared below with a reason, and the
report printed at the end lists every opcode whose own measurements disagree
with its class.  Run: `python scripts/learn_sm89_latencies.py [--report]`.

`--arch sm_80` / `--arch sm_86` (Ampere, whose ISA Ada's extends) run the same
kernels and classes through `ptxas -arch=sm_80` / `sm_86` and write
ptxc/sass/<arch>_latencies.json; sm_90 has classes of its own
(scripts/learn_sm90_latencies.py).
"""
from __future__ import annotations

import argparse
import collections
import json
import random
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptxc import oracle  # noqa: E402
from ptxc.sass.ir import Instr, Target  # noqa: E402
from ptxc.sass.latency import LatencyTable  # noqa: E402
from ptxc.sass.listing import parse_cuobjdump_sass, reuse_slots, INSTR_RE, HIGH_RE, parse_instr  # noqa: E402

OUT = ROOT / "ptxc" / "sass" / "sm_89_latencies.json"
# Realistic kernels (nvcc's PTX for small CUDA programs) learned from besides the
# micro-benchmarks: they exercise patterns the generators do not (VOTEU feeding an
# IADD3, IMAD.WIDE carries, ...).  micro.ptx there is held out: generated with
# another seed, it is not read here.
REALISTIC = ROOT / "tests" / "data" / "sched"
ARCH = "sm_89"

# --- opcode classes ----------------------------------------------------------------
# class: (variable latency?, operand roles by source index, why these opcodes belong)
CLASSES = {
    "alu": (False, {}, "integer/logic/compare/move pipe (IADD3, LOP3, ISETP, ...); "
                       "2 cycles between two of them, 4 to an ALU reader"),
    "vote": (False, {}, "VOTE: an ALU op, but it reads its predicate as late as a branch does"),
    "cs2r": (False, {}, "CS2R: special-register read without a scoreboard (zeroing pairs), "
                        "dispatched apart from the ALU pipe"),
    "fma": (False, {}, "FP32 multiply-add: two FMA pipes, so one can issue every cycle"),
    "imad": (False, {}, "integer multiply-add (IMAD, IMAD.MOV, ...): same latencies as FP32, "
                        "but only the heavy FMA pipe runs it, every 2 cycles"),
    "imad_wide": (False, {"0": "ab", "1": "ab", "2": ["cl", "ch"]},
                  "IMAD.WIDE: two passes on the FMA pipe; the high half of the result "
                  "comes later than the low half, and the 64-bit addend is read late"),
    "imad_hi": (False, {"0": "ab", "1": "ab", "2": ["cl", "ch"]},
                "IMAD.HI: the high half of IMAD.WIDE, same two passes"),
    "fp16": (False, {}, "packed half precision (HADD2, HFMA2, ...)"),
    "fp16_mma": (False, {}, "HFMA2.MMA, which ptxas also uses to move constants"),
    "uldc": (False, {}, "uniform constant loads and moves (ULDC, UMOV)"),
    "udp": (False, {}, "uniform datapath arithmetic (UIADD3, ULOP3, USHF, ...)"),
    "voteu": (False, {}, "VOTEU: ballot into a uniform register"),
    "fp64": (True, {}, "FP64 is a slow shared unit on sm_89: scoreboarded, but a "
                       "consumer is still held for a fixed minimum"),
    "xu": (True, {}, "MUFU and the conversion/bit-count ops on its pipe: one every 8 cycles"),
    "flo": (True, {}, "FLO (find leading one): on the MUFU pipe, reads its source later"),
    "s2r": (True, {}, "special-register reads"),
    "uniform_var": (True, {}, "S2UR, R2UR, REDUX: variable latency into uniform registers"),
    "lsu_shared": (True, {"*": "data"}, "shared memory and MIO queue (LDS, STS, LDSM)"),
    "atom_shared": (True, {"*": "data"}, "shared-memory atomics (ATOMS): read operands later than LDS/STS"),
    "shfl": (True, {}, "warp shuffles (SHFL): on the MIO queue like shared memory"),
    "match": (True, {}, "MATCH: variable latency, but not on the MIO queue"),
    "lsu_global": (True, {"*": "data"}, "global/local/generic memory: fresh scoreboards from SB2 up"),
    "atom_global": (True, {"*": "data"}, "global atomics and reductions (ATOMG, RED): read data later"),
    "ldc": (True, {}, "indexed constant loads"),
    "bar": (False, {}, "BAR: on the MIO queue (4 cycles after a store, 6 before the next memory op)"),
    "membar": (False, {}, "MEMBAR: memory fence (6 cycles before anything else issues)"),
    "errbar": (False, {}, "ERRBAR: follows MEMBAR with a stall of 0"),
    "cctl": (False, {}, "CCTL: cache control after a fence"),
    "depbar": (False, {}, "DEPBAR: explicit scoreboard wait"),
    "branch": (False, {}, "control transfers: BRA, EXIT, BSYNC, CALL, RET, ..."),
    "convergence": (False, {}, "BSSY, WARPSYNC, YIELD: bookkeeping on the branch unit, no transfer"),
    "nop": (False, {}, "padding NOPs"),
}

# Ordering properties, inferred from where ptxas leaves scoreboards out: instructions
# on one queue read their operands in order; shared-memory loads, shuffles, the
# MUFU-pipe ops and FP64 also complete in order (ptxas gives only the last of a run
# of LDS or MUFU a scoreboard when their consumers come in the same order: matmul's
# LDS R18 / LDS.128 R8 / FFMA R8, R18, R8 waits on the LDS.128 alone); BAR.SYNC
# blocks until the queue has issued everything before it.  S2R does not: two S2R
# read by one IMAD share a scoreboard instead.
CLASS_PROPS = {
    "lsu_shared": {"queue": "mio", "in_order_results": True},
    "shfl": {"queue": "mio", "in_order_results": True},
    "lsu_global": {"queue": "mio"},
    "atom_global": {"queue": "mio"},
    "xu": {"queue": "xu", "in_order_results": True},
    "flo": {"queue": "xu", "in_order_results": True},
    "bar": {"queue": "mio", "blocking": True},
    "fp64": {"queue": "fp64", "in_order_results": True},
}

# Classes whose written registers are told apart: IMAD.WIDE writes the low half
# before the high half; IMAD.HI writes only a high half.
DST_ROLES = {"imad_wide": ["lo", "hi"], "imad_hi": ["hi"]}

# (opcode, required modifiers, class): first match wins, so specific rules come first.
OP_RULES = [
    ("IMAD", ("WIDE",), "imad_wide"), ("IMAD", ("HI",), "imad_hi"),
    ("HFMA2", ("MMA",), "fp16_mma"),
    ("VOTE", (), "vote"),
    ("CS2R", (), "cs2r"),
    *[(op, (), "alu") for op in """IADD3 LOP3 SHF ISETP SEL MOV PRMT LEA IMNMX IABS SGXT FMNMX
        FSETP FSEL FSET ISET PLOP3 PSETP P2R R2P BMSK I2FP F2FP I2I LOP IADD
        VABSDIFF VABSDIFF4""".split()],
    *[(op, (), "fma") for op in "FFMA FADD FMUL FSWZADD".split()],
    *[(op, (), "imad") for op in "IMAD IMUL IDP".split()],
    *[(op, (), "fp16") for op in "HADD2 HMUL2 HFMA2 HSETP2 HMNMX2 HSET2".split()],
    *[(op, (), "uldc") for op in "ULDC UMOV".split()],
    *[(op, (), "udp") for op in """UIADD3 ULOP3 USHF UISETP UIMAD USEL UPLOP3 UPRMT ULEA USGXT
        UBMSK UFLO UPOPC UBREV UP2UR ULOP UIABS UIMNMX UPSETP""".split()],
    ("VOTEU", (), "voteu"),
    *[(op, (), "fp64") for op in "DADD DMUL DFMA DSETP DMNMX DSET".split()],
    ("FLO", (), "flo"),
    *[(op, (), "xu") for op in "MUFU F2I I2F F2F FRND POPC BREV FCHK".split()],
    *[(op, (), "s2r") for op in "S2R".split()],
    *[(op, (), "uniform_var") for op in "S2UR R2UR REDUX".split()],
    *[(op, (), "lsu_shared") for op in "LDS STS LDSM".split()],
    ("ATOMS", (), "atom_shared"),
    ("SHFL", (), "shfl"),
    ("MATCH", (), "match"),
    *[(op, (), "atom_global") for op in "ATOMG ATOM RED".split()],
    *[(op, (), "lsu_global") for op in """LDG STG LDL STL LD ST LDGSTS
        SULD SUST SUATOM SURED TEX TLD""".split()],
    *[(op, (), "ldc") for op in "LDC".split()],
    *[(op, (), "bar") for op in "BAR ARRIVES".split()],
    ("MEMBAR", (), "membar"), ("ERRBAR", (), "errbar"), ("CCTL", (), "cctl"),
    *[(op, (), "depbar") for op in "DEPBAR LDGDEPBAR".split()],
    *[(op, (), "branch") for op in "BRA EXIT BSYNC CALL RET BREAK KILL JMP JMX BRX".split()],
    *[(op, (), "convergence") for op in "BSSY WARPSYNC BMOV YIELD NANOSLEEP".split()],
    ("NOP", (), "nop"),
]
DEFAULT_CLASS = "lsu_global"  # unknown opcodes: treat as slow, scoreboarded, safe


def skeleton_table() -> LatencyTable:
    """A table with classes and rules only: enough to classify and find operand roles."""
    return LatencyTable(skeleton_json())


def skeleton_json() -> dict:
    return {
        "arch": ARCH,
        "classes": {name: {"variable": var, "src_roles": roles, "note": note,
                           **({"dst_roles": DST_ROLES[name]} if name in DST_ROLES else {}),
                           **CLASS_PROPS.get(name, {})}
                    for name, (var, roles, note) in CLASSES.items()},
        "op_rules": [{"op": op, **({"mods": list(mods)} if mods else {}), "class": cls}
                     for op, mods, cls in OP_RULES],
        "raw": {}, "issue": {}, "war": {}, "waw": {},
        "rules": {"default_class": DEFAULT_CLASS, "raw_default": 1},
        "reuse": {"slot_of_src": {"*": [0, 1, 2]}},
    }


# --- PTX micro-benchmarks -------------------------------------------------------------

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"

# name: (input kind, output kind, PTX body).  Kinds: r = 32-bit, d = 64-bit, p = predicate.
# {o} output, {x} input, {k} {k2} 32-bit params, {kd} 64-bit param, {pp} a predicate,
# {xr} the last 32-bit value of the chain, {sm} a shared array.
OPS = {
    "iadd": ("r", "r", "add.s32 {o}, {x}, {k};"),
    "isub": ("r", "r", "sub.s32 {o}, {k}, {x};"),
    "imul": ("r", "r", "mul.lo.s32 {o}, {x}, {k};"),
    "imad_a": ("r", "r", "mad.lo.s32 {o}, {x}, {k}, {k2};"),
    "imad_c": ("r", "r", "mad.lo.s32 {o}, {k}, {k2}, {x};"),
    "imulhi": ("r", "r", "mul.hi.u32 {o}, {x}, {k};"),
    "imadhi": ("r", "r", "mad.hi.u32 {o}, {k}, {k2}, {x};"),
    "iand": ("r", "r", "and.b32 {o}, {x}, {k};"),
    "ixor": ("r", "r", "xor.b32 {o}, {x}, {k};"),
    "shl": ("r", "r", "shl.b32 {o}, {x}, 3;"),
    "shr_r": ("r", "r", "shr.u32 {o}, {k}, {x};"),
    "shr_s": ("r", "r", "shr.s32 {o}, {x}, {k};"),
    "imin": ("r", "r", "min.s32 {o}, {x}, {k};"),
    "imax": ("r", "r", "max.u32 {o}, {x}, {k};"),
    "iabs": ("r", "r", "abs.s32 {o}, {x};"),
    "popc": ("r", "r", "popc.b32 {o}, {x};"),
    "clz": ("r", "r", "clz.b32 {o}, {x};"),
    "brev": ("r", "r", "brev.b32 {o}, {x};"),
    "bfe": ("r", "r", "bfe.u32 {o}, {x}, 3, 5;"),
    "bfi": ("r", "r", "bfi.b32 {o}, {x}, {k}, 4, 8;"),
    "prmt": ("r", "r", "prmt.b32 {o}, {x}, {k}, 0x1032;"),
    "shf": ("r", "r", "shf.l.wrap.b32 {o}, {x}, {k}, 7;"),
    "lop3": ("r", "r", "lop3.b32 {o}, {x}, {k}, {k2}, 0x96;"),
    "dp4a": ("r", "r", "dp4a.u32.u32 {o}, {x}, {k}, {k2};"),
    "fadd": ("r", "r", "add.f32 {o}, {x}, {k};"),
    "fmul": ("r", "r", "mul.f32 {o}, {x}, {k};"),
    "ffma_a": ("r", "r", "fma.rn.f32 {o}, {x}, {k}, {k2};"),
    "ffma_c": ("r", "r", "fma.rn.f32 {o}, {k}, {k2}, {x};"),
    "fmin": ("r", "r", "min.f32 {o}, {x}, {k};"),
    "fabs": ("r", "r", "abs.f32 {o}, {x}; add.f32 {o}, {o}, {k};"),
    "frnd": ("r", "r", "cvt.rni.f32.f32 {o}, {x};"),
    "i2f": ("r", "r", "cvt.rn.f32.s32 {o}, {x};"),
    "u2f": ("r", "r", "cvt.rn.f32.u32 {o}, {x};"),
    "f2i": ("r", "r", "cvt.rzi.s32.f32 {o}, {x};"),
    "rcp": ("r", "r", "rcp.approx.ftz.f32 {o}, {x};"),
    "sqrt": ("r", "r", "sqrt.approx.ftz.f32 {o}, {x};"),
    "ex2": ("r", "r", "ex2.approx.ftz.f32 {o}, {x};"),
    "sin": ("r", "r", "sin.approx.ftz.f32 {o}, {x};"),
    "hadd2": ("r", "r", "add.f16x2 {o}, {x}, {k};"),
    "hfma2": ("r", "r", "fma.rn.f16x2 {o}, {x}, {k}, {k2};"),
    "hmul2": ("r", "r", "mul.f16x2 {o}, {x}, {k};"),
    "hmin2": ("r", "r", "min.f16x2 {o}, {x}, {k};"),
    "shfl": ("r", "r", "shfl.sync.idx.b32 {o}, {x}, {k}, 0x1f, -1;"),
    "shfl_bfly": ("r", "r", "shfl.sync.bfly.b32 {o}, {x}, 1, 0x1f, -1;"),
    "lds": ("r", "r", "ld.shared.u32 {o}, [{x}];"),
    "lds_off": ("r", "r", "ld.shared.u32 {o}, [{x}+64];"),
    "sts_lds": ("r", "r", "st.shared.u32 [{k}], {x}; ld.shared.u32 {o}, [{k2}];"),
    "sts_addr": ("r", "r", "st.shared.u32 [{x}], {k}; mov.b32 {o}, {k2};"),
    "atoms": ("r", "r", "atom.shared.add.u32 {o}, [{x}], {k};"),
    "match": ("r", "r", "match.any.sync.b32 {o}, {x}, -1;"),
    "redux": ("r", "r", "redux.sync.add.u32 {o}, {x}, -1;"),
    "sreg": ("r", "r", "mov.u32 {o}, %laneid; add.s32 {o}, {o}, {x};"),
    "bar": ("r", "r", "st.shared.u32 [{k}], {x}; bar.sync 0; ld.shared.u32 {o}, [{k2}];"),
    "bar_alu": ("r", "r", "st.shared.u32 [{k}], {x}; bar.sync 0; add.s32 {o}, {x}, {k2};"),
    "membar": ("r", "r", "st.global.u32 [%rd5+4], {x}; membar.gl; ld.global.u32 {o}, [%rd5+8];"),
    "setp": ("r", "p", "setp.lt.s32 {o}, {x}, {k};"),
    "setp_u": ("r", "p", "setp.ne.u32 {o}, {x}, 0;"),
    "fsetp": ("r", "p", "setp.lt.f32 {o}, {x}, {k};"),
    "hsetp": ("r", "p", "setp.lt.f16x2 {o}|%p_hi, {x}, {k};"),
    "selp": ("p", "r", "selp.b32 {o}, {k}, {k2}, {x};"),
    "selp_x": ("p", "r", "selp.b32 {o}, {xr}, {k2}, {x};"),
    "vote": ("p", "r", "vote.sync.ballot.b32 {o}, {x}, -1;"),
    "pand": ("p", "p", "and.pred {o}, {x}, {pp};"),
    "guard": ("p", "r", "mov.b32 {o}, {k}; @{x} add.s32 {o}, {xr}, {k2};"),
    "guard_f": ("p", "r", "mov.b32 {o}, {k}; @{x} mul.f32 {o}, {xr}, {k2};"),
    "guard_ld": ("p", "r", "mov.b32 {o}, {k}; @{x} ld.global.u32 {o}, [%rd5];"),
    "setp_and": ("p", "p", "setp.lt.and.s32 {o}, {xr}, {k}, {x};"),
    "widen": ("r", "d", "mul.wide.u32 {o}, {x}, {k};"),
    "widen_s": ("r", "d", "mul.wide.s32 {o}, {x}, 12;"),
    "cvt64": ("r", "d", "cvt.u64.u32 {o}, {x}; add.s64 {o}, {o}, {kd};"),
    "f2f64": ("r", "d", "cvt.f64.f32 {o}, {x};"),
    "i2f64": ("r", "d", "cvt.rn.f64.s32 {o}, {x};"),
    "add64": ("d", "d", "add.s64 {o}, {x}, {kd};"),
    "mad64": ("d", "d", "mad.lo.s64 {o}, {kd}, {kd}, {x};"),
    "mul64": ("d", "d", "mul.lo.s64 {o}, {x}, {kd};"),
    "shl64": ("d", "d", "shl.b64 {o}, {x}, 5;"),
    "shr64": ("d", "d", "shr.u64 {o}, {x}, {k};"),
    "dadd": ("d", "d", "add.f64 {o}, {x}, {kd};"),
    "dmul": ("d", "d", "mul.f64 {o}, {x}, {kd};"),
    "dfma": ("d", "d", "fma.rn.f64 {o}, {x}, {kd}, {kd};"),
    "dmin": ("d", "d", "min.f64 {o}, {x}, {kd};"),
    "dsetp": ("d", "p", "setp.lt.f64 {o}, {x}, {kd};"),
    "ldg": ("d", "r", "ld.global.u32 {o}, [{x}];"),
    "ldg64": ("d", "d", "ld.global.u64 {o}, [{x}];"),
    "ldg_nc": ("d", "r", "ld.global.nc.u32 {o}, [{x}];"),
    "ldg_off": ("d", "r", "ld.global.u32 {o}, [{x}+16];"),
    "atomg": ("d", "r", "atom.global.add.u32 {o}, [{x}], {k};"),
    "narrow": ("d", "r", "cvt.u32.u64 {o}, {x};"),
    "hi32": ("d", "r", "mov.b64 {{%r_lo, {o}}}, {x};"),
    "f2f32": ("d", "r", "cvt.rn.f32.f64 {o}, {x};"),
    "d2i": ("d", "r", "cvt.rzi.s32.f64 {o}, {x};"),
    "stg_addr": ("d", "r", "st.global.u32 [{x}], {k}; mov.b32 {o}, {k2};"),
    "stg_data": ("r", "r", "st.global.u32 [%rd5+8], {x}; add.s32 {o}, {x}, {k2};"),
    "stg_data64": ("d", "d", "st.global.u64 [%rd5+8], {x}; add.s64 {o}, {x}, {kd};"),
    "red": ("r", "r", "red.global.add.u32 [%rd5+4], {x}; xor.b32 {o}, {x}, {k};"),
}


def kernel(name: str, body: list[str]) -> str:
    text = "\n  ".join(body)
    return f""".visible .entry {name}(.param .u64 out, .param .u32 pk, .param .u32 pk2, .param .u64 pkd)
{{
  .reg .b32 %r<1000>; .reg .b64 %rd<1000>; .reg .pred %p<1000>; .reg .b32 %r_lo; .reg .pred %p_hi;
  .shared .align 8 .b32 sm[1024];
  ld.param.u64 %rd1, [out]; ld.param.u32 %r2, [pk]; ld.param.u32 %r3, [pk2]; ld.param.u64 %rd2, [pkd];
  mov.u32 %r1, %tid.x;
  setp.ne.s32 %p1, %r2, 7;
  cvta.to.global.u64 %rd3, %rd1;
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  {text}
  ret;
}}
"""


class Chain:
    """Builds a dependency chain of OPS entries starting from %tid.x."""

    def __init__(self):
        self.lines: list[str] = []
        self.count = 10
        self.x, self.kind, self.last_r = "%r1", "r", "%r1"

    def new(self, kind: str) -> str:
        self.count += 1
        return {"r": "%r", "d": "%rd", "p": "%p"}[kind] + str(self.count)

    def add(self, op: str) -> None:
        in_kind, out_kind, body = OPS[op]
        assert in_kind == self.kind, (op, self.kind)
        out = self.new(out_kind)
        self.lines.append(body.format(o=out, x=self.x, k="%r2", k2="%r3", kd="%rd2",
                                      pp="%p1", xr=self.last_r))
        self.x, self.kind = out, out_kind
        if out_kind == "r":
            self.last_r = out

    def sink(self, offset: int = 0) -> None:
        if self.kind == "p":
            out = self.new("r")
            self.lines.append(f"selp.b32 {out}, 1, 2, {self.x};")
            self.x, self.kind = out, "r"
        width = "u64" if self.kind == "d" else "u32"
        self.lines.append(f"st.global.{width} [%rd5+{offset}], {self.x};")


def ops_by_input() -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for name, (in_kind, _, _) in OPS.items():
        table.setdefault(in_kind, []).append(name)
    return table


def random_chain(rng: random.Random, length: int) -> list[str]:
    by_in, ops, kind = ops_by_input(), [], "r"
    for _ in range(length):
        op = rng.choice(by_in[kind])
        ops.append(op)
        kind = OPS[op][1]
    return ops


def path_to(kind: str, target: str) -> list[str]:
    """Ops that convert a value of `kind` into `target` (to glue pair kernels)."""
    glue = {("r", "d"): ["widen"], ("d", "r"): ["narrow"], ("p", "r"): ["selp"],
            ("r", "p"): ["setp"], ("p", "d"): ["selp", "widen"], ("d", "p"): ["dsetp"]}
    return [] if kind == target else glue[(kind, target)]


def gen_chains(rng: random.Random, count: int, length: int) -> list[str]:
    out = []
    for n in range(count):
        chain = Chain()
        for op in random_chain(rng, length):
            chain.add(op)
        chain.sink()
        out.append(kernel(f"chain{n}", chain.lines))
    return out


def gen_pairs(rng: random.Random) -> list[str]:
    """Every producer followed directly by every consumer (the tight pairs)."""
    out, names = [], list(OPS)
    for n, first in enumerate(names):
        for m, second in enumerate(names):
            chain = Chain()
            for glue in path_to("r", OPS[first][0]):
                chain.add(glue)
            chain.add(first)
            for glue in path_to(OPS[first][1], OPS[second][0]):
                chain.add(glue)
            chain.add(second)
            chain.sink()
            out.append(kernel(f"pair_{first}_{second}", chain.lines))
    rng.shuffle(out)
    return out


def gen_independent(rng: random.Random, count: int) -> list[str]:
    """Several chains interleaved in the PTX: fills latencies with unrelated work,
    which shows pipe throughput between independent instructions."""
    out = []
    for n in range(count):
        chains = [Chain() for _ in range(rng.randint(2, 4))]
        for k, chain in enumerate(chains):
            chain.count = 10 + 60 * k
        for _ in range(rng.randint(4, 10)):
            for chain in chains:
                by_in = ops_by_input()
                chain.add(rng.choice(by_in[chain.kind]))
        lines = []
        for step in range(max(len(c.lines) for c in chains)):
            for chain in chains:
                if step < len(chain.lines):
                    lines.append(chain.lines[step])
        for k, chain in enumerate(chains):
            chain.lines = []
            chain.sink(offset=8 * k)
            lines += chain.lines
        out.append(kernel(f"indep{n}", lines))
    return out


VARIABLE_PRODUCERS = {
    "ldg": "ld.global.u32 {o}, [%rd5+{off}];",
    "ldg64": "ld.global.u64 {o64}, [%rd5+{off}]; cvt.u32.u64 {o}, {o64};",
    "lds": "ld.shared.u32 {o}, [{x}+{off}];",
    "mufu": "ex2.approx.ftz.f32 {o}, {x};",
    "f2i": "cvt.rzi.s32.f32 {o}, {x};",
    "popc": "popc.b32 {o}, {x};",
    "shfl": "shfl.sync.bfly.b32 {o}, {x}, {off}, 0x1f, -1;",
    "dadd": "cvt.rn.f64.s32 {o64}, {x}; add.f64 {o64}, {o64}, {kd}; cvt.rzi.s32.f64 {o}, {o64};",
    "s2r": "mov.u32 {o}, %laneid;",
}


def gen_scoreboards(rng: random.Random, count: int) -> list[str]:
    """N variable-latency producers, then consumers in a shuffled order, some
    consuming two producers at once: shows how scoreboards are numbered and shared."""
    out = []
    for n in range(count):
        kinds = [rng.choice(list(VARIABLE_PRODUCERS)) for _ in range(rng.randint(2, 9))]
        lines, values = [], []
        for k, kind in enumerate(kinds):
            o, o64 = f"%r{100 + k}", f"%rd{100 + k}"
            lines.append(VARIABLE_PRODUCERS[kind].format(o=o, o64=o64, x="%r1", off=4 * (k + 1),
                                                          kd="%rd2"))
            values.append(o)
        order = values[:]
        rng.shuffle(order)
        acc = "%r2"
        for k, value in enumerate(order):
            nxt = f"%r{200 + k}"
            if k + 1 < len(order) and rng.random() < 0.3:
                lines.append(f"add.s32 {nxt}, {value}, {order[k + 1]}; mul.lo.s32 {nxt}, {nxt}, {acc};")
            else:
                lines.append(f"mad.lo.s32 {nxt}, {value}, {acc}, {value};")
            acc = nxt
            if rng.random() < 0.3:
                lines.append(f"st.global.u32 [%rd5+{4 * k}], {acc};")
        lines.append(f"st.global.u32 [%rd5], {acc};")
        out.append(kernel(f"sb{n}", lines))
    return out


def gen_loops(rng: random.Random, count: int) -> list[str]:
    """Loops and data-dependent branches: predicates feeding BRA, back edges,
    values crossing block boundaries, waits across blocks."""
    out = []
    by_in = ops_by_input()
    for n in range(count):
        chain = Chain()
        chain.lines.append("mov.u32 %r9, 0;")
        chain.lines.append(f"LOOP{n}:")
        for _ in range(rng.randint(2, 8)):
            chain.add(rng.choice(by_in[chain.kind]))
        for glue in path_to(chain.kind, "r"):
            chain.add(glue)
        chain.lines.append(f"add.s32 %r1, %r1, {chain.x};")
        chain.x = "%r1"
        chain.lines.append("add.s32 %r9, %r9, 1;")
        chain.lines.append("setp.lt.s32 %p2, %r9, %r3;")
        chain.lines.append(f"@%p2 bra LOOP{n};")
        # a forward branch around a block too big to predicate
        chain.lines.append(f"setp.eq.s32 %p3, {chain.x}, %r2;")
        chain.lines.append(f"@%p3 bra SKIP{n};")
        for _ in range(rng.randint(10, 16)):
            chain.add(rng.choice(by_in[chain.kind]))
        for glue in path_to(chain.kind, "r"):
            chain.add(glue)
        chain.lines.append(f"st.global.u32 [%rd5+12], {chain.x};")
        chain.lines.append(f"SKIP{n}:")
        chain.sink()
        out.append(kernel(f"loop{n}", chain.lines))
    return out


def gen_uniform(rng: random.Random, count: int) -> list[str]:
    """Arithmetic on parameters only (uniform across the warp): ptxas computes it on
    the uniform datapath (UIADD3, ULOP3, ...) and hands it to vector instructions."""
    uniform_ops = ["add.s32 {o}, {a}, {b};", "xor.b32 {o}, {a}, {b};", "mul.lo.s32 {o}, {a}, {b};",
                   "shl.b32 {o}, {a}, 3;", "min.s32 {o}, {a}, {b};", "and.b32 {o}, {a}, {b};",
                   "mov.u32 {o}, %ctaid.x; add.s32 {o}, {o}, {a};"]
    out = []
    for n in range(count):
        lines, vals = [], ["%r2", "%r3"]
        for k in range(rng.randint(3, 9)):
            o = f"%r{100 + k}"
            lines.append(rng.choice(uniform_ops).format(o=o, a=vals[-1], b=rng.choice(vals)))
            vals.append(o)
        lines.append(f"add.s32 %r300, %r1, {vals[-1]};")
        lines.append(f"mad.lo.s32 %r301, %r300, {vals[-2]}, {vals[-3]};")
        lines.append("st.global.u32 [%rd5], %r301;")
        out.append(kernel(f"uni{n}", lines))
    return out


# --- compiling and reading back ---------------------------------------------------------

def compile_batch(kernels: list[str], workdir: Path, tag: str) -> str:
    ptx = workdir / f"{tag}.ptx"
    ptx.write_text(HEADER + "\n".join(kernels))
    cubin = workdir / f"{tag}.cubin"
    oracle.ptxas(ptx, cubin, arch=ARCH)
    return oracle.cuobjdump_sass(cubin)


def compile_files(paths: list[Path]) -> list[str]:
    """Listings of existing PTX files (the test corpus: realistic kernels from nvcc).  A
    file whose `.target` is newer than ARCH (nvcc's sm_89 PTX, learning for sm_80) is
    compiled with ARCH as its target, which ptxas needs."""
    listings = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            cubin = Path(tmp) / (path.stem + ".cubin")
            text = path.read_text()
            declared = re.search(r"^\.target sm_(\d+)", text, re.M)
            if declared and int(declared.group(1)) > int(ARCH.removeprefix("sm_")):
                path = Path(tmp) / path.name
                path.write_text(text.replace(declared.group(0), f".target {ARCH}", 1))
            oracle.ptxas(path, cubin, arch=ARCH)
            listings.append(oracle.cuobjdump_sass(cubin))
    return listings


def compile_all(kernels: list[str], batch: int = 400) -> list[str]:
    listings = []
    with tempfile.TemporaryDirectory() as tmp:
        for start in range(0, len(kernels), batch):
            listings.append(compile_batch(kernels[start:start + batch], Path(tmp), f"b{start}"))
    return listings


# --- measuring ----------------------------------------------------------------------------

CONTROL_FLOW = {"BRA", "EXIT", "BRX", "JMP", "JMX", "CALL", "RET", "BSYNC", "BREAK", "KILL"}


def branch_targets(instrs) -> set[int]:
    return {s.addr for _, ins in instrs for s in ins.srcs if isinstance(s, Target) and s.addr is not None}


def padding_start(instrs) -> int:
    """Index of the BRA-to-self after the last EXIT, where the NOPs follow (a NOP
    inside the code, which ptxas sometimes places at a label, is not padding)."""
    k = len(instrs)
    while k > 0 and padding_like(instrs, k - 1):
        k -= 1
    return k


def padding_like(instrs, k) -> bool:
    addr, ins = instrs[k]
    if ins.op == "NOP":
        return True
    return (ins.op == "BRA" and ins.pred is None
            and any(isinstance(s, Target) and s.addr == addr for s in ins.srcs))


class Kernel:
    """One listing kernel with issue times, straight-line regions, classes, reads/writes."""

    def __init__(self, name: str, instrs, table: LatencyTable):
        self.name = name
        cut = padding_start(instrs)
        self.instrs = list(instrs[:cut])
        self.padding = [i for _, i in instrs[cut:]]
        self.time, t = [], 0
        for _, ins in self.instrs:
            self.time.append(t)
            t += ins.ctrl.stall
        targets = branch_targets(instrs)
        self.label_before = [a in targets for a, _ in self.instrs]
        self.region, rid, prev_cf = [], 0, False
        for k, (addr, ins) in enumerate(self.instrs):
            if self.label_before[k] or prev_cf:
                rid += 1
            self.region.append(rid)
            prev_cf = ins.op in CONTROL_FLOW
        self.cls = [table.op_class(ins) for _, ins in self.instrs]
        self.reads = [table.reads(ins) for _, ins in self.instrs]
        self.writes = [table.writes(ins) for _, ins in self.instrs]


def op_key(ins: Instr) -> str:
    """Finer than a class, for the homogeneity report."""
    for mod in ("WIDE", "HI", "MMA", "MOV", "SHL", "IADD"):
        if mod in ins.mods:
            return f"{ins.op}.{mod}"
    return ins.op


class Stats:
    """Minimum distances keyed by (producer, consumer[, role]) at class and opcode level."""

    def __init__(self):
        self.mins: dict[tuple, list] = {}

    def see(self, key: tuple, distance: int, where: str) -> None:
        entry = self.mins.get(key)
        if entry is None:
            self.mins[key] = [distance, 1, where]
        else:
            entry[1] += 1
            if distance < entry[0]:
                entry[0], entry[2] = distance, where

    def table(self, kind: str) -> dict[tuple, list]:
        return {k[1:]: v for k, v in self.mins.items() if k[0] == kind}


WINDOW = 24


def measure_pairs(kern: Kernel, stats: Stats) -> None:
    instrs = kern.instrs
    for j in range(len(instrs)):
        killed: set = set()
        for i in range(j - 1, max(-1, j - WINDOW), -1):
            if kern.region[i] != kern.region[j]:
                break
            d = kern.time[j] - kern.time[i]
            ci, cj = kern.cls[i], kern.cls[j]
            oi, oj = op_key(instrs[i][1]), op_key(instrs[j][1])
            where = f"{kern.name}@{instrs[i][0]:#x}"
            # a memory op that sets a read scoreboard lets the next MIO op (BAR)
            # come sooner: measured apart
            kind = "issue_rbar" if instrs[i][1].ctrl.rbar != 7 else "issue"
            stats.see((kind, ci, cj), d, where)
            stats.see(("issue_op", oi, oj), d, where)
            if i == j - 1:
                stats.see((kind + "_adjacent", ci, cj), d, where)
            written = {unit: key for key, unit in kern.writes[i]}
            read_units = {r.unit for r in kern.reads[i]}
            raw = False
            for r in kern.reads[j]:
                if r.unit in written and r.unit not in killed:
                    raw = True
                    stats.see(("raw", written[r.unit], f"{cj}.{r.role}"), d, where)
                    stats.see(("raw_op", oi, f"{oj}.{r.role}"), d, where)
            j_writes = {unit for _, unit in kern.writes[j]}
            waw = any(unit in written and unit not in killed for unit in j_writes)
            if waw:
                stats.see(("waw", ci, cj), d, where)
            if j_writes & read_units and not raw and not waw:
                stats.see(("war", ci, cj), d, where)
            if instrs[i][1].pred is None:  # a predicated write may not happen
                killed |= set(written)


def measure_rules(kern: Kernel, facts: dict) -> None:
    instrs = kern.instrs
    pending: set = set()
    for k, (addr, ins) in enumerate(instrs):
        if kern.label_before[k]:
            pending = set()
        pending -= {sb for sb in range(6) if ins.ctrl.wait >> sb & 1}
        if ins.ctrl.wbar != 7 and ins.ctrl.wbar not in pending:
            facts["fresh_wbar"][kern.cls[k]][ins.ctrl.wbar] += 1
        pending |= {sb for sb in (ins.ctrl.wbar, ins.ctrl.rbar) if sb != 7}
        c = ins.ctrl
        cls = kern.cls[k]
        last = k == len(instrs) - 1
        if not last:
            facts["min_stall"][cls] = min(facts["min_stall"].get(cls, 99), c.stall)
            if kern.label_before[k + 1] and ins.op not in CONTROL_FLOW:
                facts["before_label"][c.stall] += 1
        if k == 0:
            facts["entry"][c.stall] += 1
        if c.wbar != 7:
            lo, hi = facts["wbar_range"].get(cls, (9, -1))
            facts["wbar_range"][cls] = (min(lo, c.wbar), max(hi, c.wbar))
        if c.rbar != 7:
            facts["rbar_classes"][cls] += 1
            lo, hi = facts["rbar_range"].get(cls, (9, -1))
            facts["rbar_range"][cls] = (min(lo, c.rbar), max(hi, c.rbar))
        facts["yield"][(cls, min(c.stall, 6), c.yield_bit)] += 1
        # distance from the last setter of each waited scoreboard
        for sb in range(6):
            if not c.wait >> sb & 1:
                continue
            for i in range(k - 1, -1, -1):
                if kern.region[i] != kern.region[k]:
                    break
                ci = instrs[i][1].ctrl
                if ci.wbar == sb or ci.rbar == sb:
                    d = kern.time[k] - kern.time[i]
                    facts["wait_after_set"][kern.cls[i]] = min(
                        facts["wait_after_set"].get(kern.cls[i], 99), d)
                    break
    for ins in kern.padding:
        facts["padding"][(ins.op, ins.ctrl.stall, ins.ctrl.yield_bit)] += 1


def fit_yield_counter(kernels: list[Kernel], table: LatencyTable) -> int:
    """Coupled instructions with stall 2 give up the issue slot ('yield', bit 0) once
    enough cycles have passed since the last instruction that did; find that count."""
    points = []
    for kern in kernels:
        since = 0
        for k, (_, ins) in enumerate(kern.instrs):
            c = ins.ctrl
            if c.stall == 2 and table.cls(kern.cls[k])["yield_mode"] == "stall":
                points.append((since, c.yield_bit))
            since = 0 if c.yield_bit == 0 else since + c.stall
    best = max((sum((v >= t) == (y == 0) for v, y in points), t) for t in range(1, 40))
    return best[1]


def measure_reuse(listings: list[str], facts: dict, table: LatencyTable) -> None:
    """Which reuse bit each printed source carries, per opcode (from `.reuse` marks)."""
    for text in listings:
        pending = None
        for line in text.splitlines():
            m = INSTR_RE.match(line)
            if m:
                pending = m.group(2)
                continue
            m = HIGH_RE.match(line)
            if m and pending:
                ins = parse_instr(pending, int(m.group(1), 16) >> 41)
                if ins.ctrl.reuse:
                    facts["reuse_classes"][table.op_class(ins)] += 1
                    marked = [s - len(ins.dsts) for s in reuse_slots(pending)]
                    bits = [b for b in range(4) if ins.ctrl.reuse >> b & 1]
                    if len(marked) == 1 and len(bits) == 1:
                        facts["reuse_slot"][(ins.op, marked[0])][bits[0]] += 1
                pending = None


# --- from measurements to the table ------------------------------------------------------

def class_matrix(stats: Stats, kind: str, min_samples: int = 1) -> tuple[dict, dict]:
    """Per class pair, the minimum distance seen (pairs seen fewer than `min_samples`
    times are left out: the default applies to them)."""
    values, notes = {}, {}
    for (a, b), (dist, count, where) in stats.table(kind).items():
        if count < min_samples:
            continue
        values.setdefault(a, {})[b] = dist
        if count < 3:
            notes[f"{a}->{b}"] = f"seen {count}x only (min at {where})"
    return values, notes


def homogeneity_report(stats: Stats, table: LatencyTable, raw: dict) -> list[str]:
    """Opcode pairs whose own minimum differs from their class value."""
    lines = []
    opclass = {}
    for op, mods, cls in OP_RULES:
        opclass.setdefault(op if not mods else f"{op}.{mods[0]}", cls)
    for (a, b), (dist, count, where) in sorted(stats.table("raw_op").items()):
        op_b, role = b.rsplit(".", 1)
        ca = opclass.get(a) or opclass.get(a.split(".")[0])
        cb = opclass.get(op_b) or opclass.get(op_b.split(".")[0])
        if ca is None or cb is None or count < 3:
            continue
        class_value = raw.get(ca, {}).get(f"{cb}.{role}")
        if class_value is not None and dist != class_value and not table.cls(ca)["variable"]:
            lines.append(f"raw {a} -> {b}: {dist} (class {ca}->{cb}.{role} = {class_value}, "
                         f"{count} samples, min at {where})")
    return lines


def build(listings: list[str], report: bool) -> dict:
    skeleton = skeleton_json()
    table = LatencyTable(skeleton)
    kernels = []
    for text in listings:
        for name, instrs in parse_cuobjdump_sass(text).items():
            kernels.append(Kernel(name, instrs, table))
    stats = Stats()
    facts = {"min_stall": {}, "before_label": collections.Counter(), "entry": collections.Counter(),
             "wbar_range": {}, "rbar_range": {}, "rbar_classes": collections.Counter(),
             "yield": collections.Counter(), "wait_after_set": {}, "padding": collections.Counter(),
             "reuse_classes": collections.Counter(),
             "fresh_wbar": collections.defaultdict(collections.Counter),
             "reuse_slot": collections.defaultdict(collections.Counter)}
    for kern in kernels:
        measure_pairs(kern, stats)
        measure_rules(kern, facts)
    measure_reuse(listings, facts, table)

    raw, raw_notes = class_matrix(stats, "raw")
    # Throughput pairs are everywhere, so a pair seen rarely was seen by chance far
    # apart: only well-sampled pairs count.  Anti-dependences are nearly always
    # shadowed by a true dependence (x = f(R2); R2 = g(x)), so their minima
    # overstate: WAR is left out (every well-sampled WAR minimum equals the pair's
    # issue interval, or is such a shadow).  Output dependences are measured over
    # every pair writing the same register, also those that read it (R4 = f(R4)),
    # which makes many tight samples: LDG R4, [R4.64] right after IMAD.WIDE R4
    # waits 6 cycles where the address alone needs 5.
    issue, issue_notes = class_matrix(stats, "issue", min_samples=10)
    issue_rbar, _ = class_matrix(stats, "issue_rbar", min_samples=10)
    for table_, kind in ((issue, "issue"), (issue_rbar, "issue_rbar")):
        adjacent = stats.table(kind + "_adjacent")
        for a, row in table_.items():   # no evidence from neighbours: no constraint
            for b in list(row):
                if adjacent.get((a, b), [0, 0])[1] < 3:
                    del row[b]
    issue_after_rbar = {a: {b: v for b, v in row.items() if v < issue.get(a, {}).get(b, 0)}
                        for a, row in issue_rbar.items()}
    issue_after_rbar = {a: row for a, row in issue_after_rbar.items() if row}
    war: dict = {}
    waw, _ = class_matrix(stats, "waw", min_samples=20)

    cap_rare_entries(raw, stats)
    settle_variable_rows(raw, stats, facts)
    classes = skeleton["classes"]
    for name, info in classes.items():
        info["min_stall"] = facts["min_stall"].get(name, 1)
        info["yield_mode"] = yield_mode(facts["yield"], name)
        info["reuse"] = facts["reuse_classes"][name] > 0
        if info["variable"]:
            fresh = facts["fresh_wbar"][name]
            info["scoreboards"] = [min(fresh) if fresh else 0, 5]
            info["wait_after_set"] = facts["wait_after_set"].get(name, 2)
            info["read_scoreboard"] = facts["rbar_classes"][name] > 0
    table_json = dict(skeleton)
    table_json.update({
        "comment": (f"Generated by scripts/learn_sm89_latencies.py from ptxas {oracle.PINNED_VERSION} "
                    f"(-arch={ARCH}) listings; do not edit. Cycles are issue-to-issue distances: "
                    "the minimum ptxas ever leaves between the two instructions."),
        "raw": raw, "issue": issue, "issue_after_rbar": issue_after_rbar, "war": war, "waw": waw,
        "notes": {
            "raw": raw_notes, "issue": issue_notes,
            "method": {
                "raw": "min issue distance producer -> consumer reading its result, per operand "
                       "role; rare entries capped by the row's largest well-sampled value ('*.role')",
                "issue": "min distance between two classes with or without dependence, kept only "
                         "where ptxas put them side by side at least 3 times (pipe throughput)",
                "issue_after_rbar": "the same, measured after instructions that set a read scoreboard",
                "waw": "min distance between two writes of one register (incl. R4 = f(R4))",
                "war": "left out: every well-sampled minimum was a throughput interval or a shadow",
                "entry_min_stall": "stall of every kernel's first instruction",
                "before_label_min_stall": "stall of an instruction falling through into a branch target",
                "yield_counter": "cycles since the last cleared yield bit after which a stall-2 "
                                 "instruction clears it (best single threshold)",
                "scoreboards": "first scoreboard a class takes when it needs a fresh one",
                "wait_after_set": "min distance from setting a scoreboard to waiting on it",
            }},
    })
    misc = skeleton["rules"]
    misc.update({
        "entry_min_stall": min(s for s, n in facts["entry"].items()),
        "before_label_min_stall": min(s for s, n in facts["before_label"].items() if n >= 3),
        "yield_counter": None,
        "raw_default": 6,
        "padding": {op: {"stall": s, "yield_bit": y}
                    for (op, s, y), n in facts["padding"].most_common()},
    })
    table_json["rules"] = misc
    table2 = LatencyTable(table_json)
    misc["yield_counter"] = fit_yield_counter(kernels, table2)
    table_json["reuse"] = {"slot_of_src": reuse_slot_map(facts["reuse_slot"])}
    if report:
        for line in homogeneity_report(stats, table, raw):
            print(line)
        print("before-label stalls", sorted(facts["before_label"].items()))
        print("entry stalls", sorted(facts["entry"].items()))
        print("wbar ranges", facts["wbar_range"])
        print("fresh wbar", {c: dict(v) for c, v in facts["fresh_wbar"].items()})
        print("min stall by class", facts["min_stall"])
        print("rbar ranges", facts["rbar_range"])
    return table_json


WELL_SAMPLED = 5


def cap_rare_entries(raw: dict, stats: Stats) -> None:
    """A minimum seen only a few times may not be tight (transpose once left 48 cycles
    between an IMAD.WIDE and the STS reading it).  Per producer and operand role the
    largest well-sampled latency becomes the row's default ('*.role', used for
    consumers never measured) and caps the rarely seen entries."""
    counts = stats.table("raw")
    for producer, row in raw.items():
        caps: dict[str, int] = {}
        for consumer, value in row.items():
            if counts[(producer, consumer)][1] >= WELL_SAMPLED:
                role = consumer.rsplit(".", 1)[1]
                caps[role] = max(caps.get(role, 0), value)
        for consumer, value in list(row.items()):
            role = consumer.rsplit(".", 1)[1]
            if counts[(producer, consumer)][1] < WELL_SAMPLED and role in caps:
                row[consumer] = min(value, caps[role])
        for role, cap in caps.items():
            row[f"*.{role}"] = cap


def settle_variable_rows(raw: dict, stats: Stats, facts: dict) -> None:
    """A scoreboarded producer's consumer waits on the scoreboard, and the only fixed
    distance is the one between setting a scoreboard and waiting on it (2 cycles);
    larger minima in such a row are throughput or chance (S2R -> STG is never
    adjacent).  FP64 is the exception: its consumers stay 6-10 cycles away even
    though they also wait, so a row whose typical value exceeds the wait distance
    is kept as measured."""
    counts = stats.table("raw")
    for producer, row in raw.items():
        cls = producer.split(".")[0]
        if cls not in CLASSES or not CLASSES[cls][0]:
            continue
        gap = facts["wait_after_set"].get(cls, 2)
        sampled = sorted(v for c, v in row.items()
                         if not c.startswith("*") and counts[(producer, c)][1] >= 3)
        if sampled and sampled[len(sampled) // 2] > gap + 1:
            continue
        for consumer in row:
            row[consumer] = gap


def yield_mode(counts: collections.Counter, cls: str) -> str:
    """'stall': the bit follows the stall count (clear from 3 cycles up);
    'always': the bit stays set whatever the stall (decoupled instructions)."""
    long_stalls = [(y, n) for (c, s, y), n in counts.items() if c == cls and s >= 3]
    set_ = sum(n for y, n in long_stalls if y == 1)
    clear = sum(n for y, n in long_stalls if y == 0)
    return "always" if set_ > clear else "stall"


# Opcodes whose only register source sits in the b operand field of the encoding
# (so its reuse flag is bit 1); confirmed by the listings where they occur.
B_SLOT_UNARY = ("IABS", "MOV", "I2FP", "F2FP")


def reuse_slot_map(observed) -> dict:
    """Per opcode, the reuse bit of each source index, when it is not the index itself
    (IABS R1, R2 keeps its one source in the b slot)."""
    out = {"*": [0, 1, 2], **{op: [1, 1, 2] for op in B_SLOT_UNARY}}
    per_op = collections.defaultdict(dict)
    for (op, index), bits in observed.items():
        bit, _ = bits.most_common(1)[0]
        per_op[op][index] = bit
    for op, slots in per_op.items():
        if any(index != bit for index, bit in slots.items()):
            out[op] = [slots.get(k, k) for k in range(3)]
    return out


def corpus(seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    return (gen_chains(rng, 500, 25) + gen_pairs(rng) + gen_independent(rng, 300)
            + gen_scoreboards(rng, 300) + gen_loops(rng, 150) + gen_uniform(rng, 100))


def test_corpus(seed: int = 2) -> str:
    """A few kernels of each family with another seed: tests/data/sched/micro.ptx,
    kernels the tables were not learned from."""
    rng = random.Random(seed)
    kernels = (gen_chains(rng, 12, 20) + gen_independent(rng, 8) + gen_scoreboards(rng, 10)
               + gen_loops(rng, 8) + gen_uniform(rng, 6))
    return (f"// Generated by scripts/learn_sm89_latencies.py --test-corpus (seed {seed}):\n"
            "// micro-benchmark kernels of every family, none of them used for learning.\n"
            + HEADER + "\n".join(kernels))


AMPERE_ADA = ("sm_80", "sm_86", "sm_89")   # the targets these classes describe


def set_arch(arch: str) -> None:
    """Learn for `arch`: ptxas's -arch, the kernels' .target, the output file."""
    global ARCH, HEADER, OUT
    ARCH = arch
    HEADER = HEADER.replace(".target sm_89", f".target {arch}")
    OUT = ROOT / "ptxc" / "sass" / f"{arch}_latencies.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true", help="print the homogeneity report")
    parser.add_argument("--out", default=None, help="default ptxc/sass/<arch>_latencies.json")
    parser.add_argument("--arch", default=None, choices=AMPERE_ADA,
                        help="the target (default: sm_89, or what a wrapper set)")
    parser.add_argument("--listings", help="directory caching the cuobjdump listings "
                                           "(reused if present: to iterate on the analysis)")
    parser.add_argument("--test-corpus", metavar="PTX",
                        help="write held-out micro-benchmark kernels to PTX and stop")
    args = parser.parse_args()
    if args.arch:
        set_arch(args.arch)
    args.out = args.out or str(OUT)
    if args.test_corpus:
        Path(args.test_corpus).write_text(test_corpus())
        return 0
    cache = Path(args.listings) if args.listings else None
    if cache is not None and cache.is_dir() and any(cache.glob("*.sass")):
        listings = [p.read_text() for p in sorted(cache.glob("*.sass"))]
    else:
        kernels = corpus()
        print(f"compiling {len(kernels)} kernels with ptxas -arch={ARCH} ...", file=sys.stderr)
        listings = compile_all(kernels) + compile_files(
            sorted(p for p in REALISTIC.glob("*.ptx") if p.name != "micro.ptx"))
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
            for n, text in enumerate(listings):
                (cache / f"{n:03d}.sass").write_text(text)
    table = build(listings, args.report)
    Path(args.out).write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
