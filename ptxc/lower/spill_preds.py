"""spill_preds: keep at most 7 predicates live by parking some in general registers.

sm_89 has seven predicate registers (P0..P6).  When more predicate values are live
at once, the one live the longest among those live at the fullest point is kept in
a general register instead: after each write, `SEL r, RZ, 0x1, !p` (r = p ? 1 : 0,
under the same guard as the write), and before each read a fresh short-lived
predicate is set from it (`ISETP.NE.AND t, PT, r, RZ, PT`).  Repeated until the
pressure fits.

Expects: virtual registers, instructions in final order (after order_instrs).
Guarantees: at most 7 predicate units live after any instruction; same values.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import Imm, Instr, Reg, RZ, PT
from ..sass.target import target
from .analysis import build_code, read_regs, written_regs
from .vregs import pressure_bound

def spill_preds(func) -> None:
    predicates = target(func.arch).predicates     # P0..P6 on every target so far
    values = {r.key() for i in func.instrs() for r in written_regs(i) if r.file == "P"}
    if len(values) <= predicates:
        return          # seven predicate values at most: they always fit
    if pressure_bound(func, "P") <= predicates:
        return          # they fit, by a bound that needs no liveness (_victim would find none)
    spilled = set()
    for _ in range(64):
        code = build_code(func, frozenset({"P"}))
        victim = _victim(code, spilled, predicates)
        if victim is None:
            return
        spilled.add(victim)
        _spill(func, victim)


def _victim(code, spilled: set, predicates: int):
    """The predicate to park, or None when the pressure fits."""
    worst, where = 0, None
    for i, live in enumerate(code.live_out):   # (code of the P file: only P units are live)
        written = {r.key() for r in code.results[i] if r.file == "P"}
        count = len(live | written) if written else len(live)
        if count > worst:
            worst, where = count, i
    if worst <= predicates:
        return None
    span = {}
    for live in code.live_out:
        for u in live:
            if u[0] == "P":
                span[u] = span.get(u, 0) + 1
    candidates = [u for u in code.live_out[where] if u[0] == "P" and u[2] and u not in spilled]
    if not candidates:
        return None
    return max(candidates, key=lambda u: (span[u], -u[1]))


def _spill(func, unit) -> None:
    file, num, virtual = unit
    slot = func.new_vreg("R")
    for block in func.blocks:
        out = []
        for instr in block.instrs:
            reads = [r for r in read_regs(instr) if r.key() == unit]
            if reads:
                temp = func.new_vreg("P")
                out.append(Instr("ISETP", ("NE", "AND"), [temp, Reg("P", PT)], [slot, Reg("R", RZ), Reg("P", PT)],
                                 comment="predicate back from a register"))
                _replace_reads(instr, unit, temp)
            out.append(instr)
            if any(r.key() == unit for r in written_regs(instr)):
                out.append(Instr("SEL", (), [slot], [Reg("R", RZ), Imm(1, "int"), Reg("P", num, True, inv=True)],
                                 instr.pred, comment="predicate parked in a register"))
        block.instrs = out


def _replace_reads(instr: Instr, unit, temp: Reg) -> None:
    def swap(op):
        if isinstance(op, Reg) and op.key() == unit:
            return replace(temp, inv=op.inv)
        return op
    instr.srcs = [swap(op) for op in instr.srcs]
    if instr.pred is not None and instr.pred.key() == unit:
        instr.pred = replace(temp, inv=instr.pred.inv)
