"""propagate_copies: remove register copies whose two sides can be one register.

    MOV d, s   with d and s each written once:

- d is part of a wider value (a vector store's data tuple, a learned sequence's
  input pair) and s is a lone register: s is written straight into d's part;
- s is part of a wider value (a vector load's result) or both are lone: readers
  of d read s.

Either way the MOV goes.  This is what makes `ld.global.v4.f32 {%f1, %f2, %f3, %f4}`
one LDG.E.128 into the registers the FFMAs read, and `st.global.v2.f32 [..], {%f5,
%f6}` one STG.E.64 of the registers the FADDs wrote.  Copies of loop variables
(written in several places) are left alone.

Expects: virtual registers; 64-bit pseudo-instructions expanded (MOVs are 32-bit).
Guarantees: same values; fewer instructions; no new registers.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import Mem, Reg
from .analysis import map_regs
from .vregs import reg_operands, write_counts


def propagate_copies(func) -> None:
    copies = [i for i in func.instrs() if _is_copy(i)]
    if not copies:
        return                     # no copy: skip building the maps
    defs = write_counts(func, {r.key() for i in copies for r in (i.dsts[0], i.srcs[0])})
    spans = None               # _value_spans, once a copy qualifies
    rename: dict = {}          # unit -> unit it becomes
    removed = set()
    for instr in copies:
        d, s = instr.dsts[0], _resolve(instr.srcs[0], rename)
        if s.key() == d.key() or defs.get(d.key(), 0) != 1 or defs.get(s.key(), 0) != 1:
            continue
        if spans is None:
            spans = _value_spans(func)
        d_wide, s_wide = spans.get(d.key(), 1) > 1, spans.get(s.key(), 1) > 1
        if d_wide and s_wide:
            continue
        if d_wide:
            rename[s.key()] = d.key()
        else:
            rename[d.key()] = s.key()
        removed.add(id(instr))
    if not rename:
        return
    final = {k: _follow(k, rename) for k in rename}
    for block in func.blocks:
        block.instrs = [i for i in block.instrs if id(i) not in removed]
        for instr in block.instrs:
            if _names_any(instr, final):
                map_regs(instr, lambda r: _renamed(r, final))   # (elsewhere it would change nothing)


def _names_any(instr, keys: dict) -> bool:
    """Whether a virtual 32-bit register among reg_operands(instr) has its key in `keys`
    (what _renamed changes)."""
    for op in reg_operands(instr):
        if op.virtual and op.width == 1 and (op.file, op.num, True) in keys:
            return True
    return False


def _is_copy(instr) -> bool:
    if instr.op != "MOV" or instr.pred is not None or len(instr.srcs) != 1:
        return False
    d, s = instr.dsts[0], instr.srcs[0]
    return (isinstance(s, Reg) and s.virtual and d.virtual and d.file == s.file == "R" and d.width == s.width == 1
            and not (s.neg or s.abs or s.inv))


def _value_spans(func) -> dict:
    """Unit -> width of the widest operand naming it (2 or 4 for parts of tuples)."""
    spans: dict = {}
    for instr in func.instrs():
        for operands in (instr.dsts, instr.srcs):
            for op in operands:
                if isinstance(op, Reg):
                    reg = op
                elif isinstance(op, Mem) and op.base is not None:
                    reg = op.base
                else:
                    continue
                if reg.virtual and reg.width > 1:
                    for k in range(reg.width):
                        key = (reg.file, reg.num + k, True)
                        spans[key] = max(spans.get(key, 1), reg.width)
    return spans


def _resolve(reg: Reg, rename: dict) -> Reg:
    key = _follow(reg.key(), rename)
    return replace(reg, num=key[1]) if key != reg.key() else reg


def _follow(key, rename: dict):
    seen = set()
    while key in rename and key not in seen:
        seen.add(key)
        key = rename[key]
    return key


def _renamed(reg: Reg, final: dict) -> Reg:
    if not reg.virtual or reg.width != 1:
        return reg
    key = final.get(reg.key())
    return replace(reg, num=key[1]) if key is not None else reg
