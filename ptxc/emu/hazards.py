"""The hazard checker's tables and reports (`--check-hazards`).

The core follows, per warp and along the path actually executed, what the hardware's
scheduler trusts the control codes for:

- a variable-latency instruction (memory, MUFU, S2R, ...) names a write scoreboard; its
  results may be read only by an instruction whose wait mask includes that scoreboard
  (or after one that did).  Reading earlier is a `scoreboard` hazard - for the lanes
  it writes: in a divergent warp, a lane group reading its own registers while another
  group's load to the same register number is pending is no hazard (registers are per
  lane; uniform registers are the warp's);
- a fixed-latency result may be read only when the stall counts issued since its
  producer add up to the latency the model gives for that producer, consumer and
  operand role (ptxc/sass/sm_89_latencies.json or sm_90_latencies.json, the cubin's
  arch, through ptxc.sass.latency).  Reading earlier is a `stall` hazard;
- an instruction that sets a read scoreboard (stores read their data late) must not
  have its source registers overwritten before that scoreboard is waited for: a `WAR`
  hazard - for the lanes it reads (another lane group of a divergent warp overwriting
  its own registers is none) - unless the overwriting instruction is queued behind the reader on one
  in-order queue (a SHFL after a SHFL: both classes name the queue and complete in
  order), which cannot write before the reader has read; the scheduler's rule too
  (ptxc.lower.set_control_codes.queued_behind).

Issue cycles count `max(stall, 1)` per instruction; a switch of the running lane group
(divergence, a barrier) counts as a long wait, as it is on silicon.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import isa as I

KIND_NAMES = {I.HZ_SB: "scoreboard", I.HZ_STALL: "stall", I.HZ_WAR: "WAR"}


def unit_index(unit) -> int | None:
    file, num = unit
    if file == "R" and num < 255:
        return num
    if file == "P" and num < 7:
        return 256 + num
    if file == "UR" and num < 63:
        return 264 + num
    if file == "UP" and num < 7:
        return 328 + num
    return None


def unit_name(index: int) -> str:
    if index < 256:
        return f"R{index}"
    if index < 264:
        return f"P{index - 256}"
    if index < 328:
        return f"UR{index - 264}"
    return f"UP{index - 328}"


def hazard_tables(kernel):
    """(per-instruction table [n, HZ_COLS], latency cube [producer key, consumer class,
    role]) for a kernel, cached on it."""
    if kernel.hazard_tables is not None:
        return kernel.hazard_tables
    from ..sass.latency import load
    lt = load(kernel.arch.name)
    instrs = kernel.program.instrs
    hz = np.zeros((len(instrs), I.HZ_COLS), dtype=np.int64)
    classes, keys, roles, queues = {}, {}, {}, {}
    pending = []
    for i, (_addr, instr) in enumerate(instrs):
        hz[i, I.HZ_CLS] = -1
        hz[i, I.HZ_Q] = -1
        if instr.op == "UNKNOWN":
            continue
        try:
            cls = lt.op_class(instr)
            variable = lt.is_variable(instr)
            reads = lt.reads(instr)
            writes = lt.writes(instr)
        except Exception:  # noqa: BLE001 - an instruction the model does not know: unchecked
            continue
        hz[i, I.HZ_CLS] = classes.setdefault(cls, len(classes))
        hz[i, I.HZ_VAR] = 1 if variable else 0
        info = lt.cls(cls)
        queue = info.get("queue")
        hz[i, I.HZ_Q] = queues.setdefault(queue, len(queues)) if queue and info.get("in_order_results") else -1
        nr = 0
        for read in reads:
            u = unit_index(read.unit)
            if u is None or nr >= 8:
                continue
            role = roles.setdefault(read.role, len(roles))
            hz[i, I.HZ_R + nr] = u | role << 10
            nr += 1
        hz[i, I.HZ_NR] = nr
        nw = 0
        for key, unit in writes:
            u = unit_index(unit)
            if u is None or nw >= 4:
                continue
            k = keys.setdefault(key, len(keys))
            hz[i, I.HZ_W + nw] = u | k << 10
            nw += 1
        hz[i, I.HZ_NW] = nw
        pending.append(i)
    lat = np.zeros((max(len(keys), 1), max(len(classes), 1), max(len(roles), 1)), dtype=np.int64)
    for key, k in keys.items():
        for cls, c in classes.items():
            for role, r in roles.items():
                try:
                    lat[k, c, r] = lt.raw(key, cls, role)
                except Exception:  # noqa: BLE001
                    lat[k, c, r] = 0
    kernel.hazard_tables = (hz, lat)
    return kernel.hazard_tables


@dataclass(frozen=True)
class Hazard:
    kind: str             # scoreboard, stall, WAR
    pc: int               # the reading (or overwriting) instruction
    unit: str             # R3, P0, ...
    producer: int         # the instruction whose result (or pending read) is involved
    text: str = ""

    def __str__(self) -> str:
        return self.text


def collect(kernel, records: np.ndarray) -> list[Hazard]:
    from .runner import sass_line
    seen, out = set(), []
    for pc, unit, kind, producer, have, need in records.tolist():
        key = (pc, unit, kind)
        if key in seen:
            continue
        seen.add(key)
        name = unit_name(unit)
        here, there = sass_line(kernel, pc), sass_line(kernel, producer)
        sb = kernel.program.rows[producer, I.F_WBAR] if 0 <= producer < len(kernel.program.rows) else 7
        if kind == I.HZ_SB:
            text = (f"{here} reads {name} before waiting on scoreboard SB{sb}, which {there} sets for it "
                    f"(its wait mask lacks bit {sb})")
        elif kind == I.HZ_STALL:
            text = (f"{here} reads {name} {have} cycles after {there} wrote it; the latency model wants {need} "
                    f"(the stall counts between are too small)")
        else:
            rsb = kernel.program.rows[producer, I.F_RBAR] if 0 <= producer < len(kernel.program.rows) else 7
            text = (f"{here} overwrites {name} while {there} may still read it (its read scoreboard SB{rsb} "
                    f"was not waited for)")
        out.append(Hazard(KIND_NAMES.get(kind, str(kind)), pc, name, producer, text))
    return out
