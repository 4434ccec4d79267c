"""Helpers shared by the passes: which registers an operand names, halves of pairs,
and rewriting operands.  Virtual registers are numbered per file; a 64-bit value is
a width-2 register whose high half is number+1 (allocated as an aligned pair)."""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import Mem, Reg


def regs_in(operand) -> list[Reg]:
    """Registers an operand reads (a memory operand reads its base registers)."""
    if isinstance(operand, Reg):
        return [] if operand.is_zero else [operand]
    if isinstance(operand, Mem):
        return [r for r in (operand.base, operand.ubase) if r is not None and not r.is_zero]
    return []


def half(reg: Reg, which: int) -> Reg:
    """The low (0) or high (1) 32-bit half of a width-2 register."""
    return replace(reg, num=reg.num + which, width=1)


def units(reg: Reg) -> list[tuple]:
    """The 32-bit register units a register covers, as (file, num, virtual) keys."""
    return [(reg.file, reg.num + k, reg.virtual) for k in range(reg.width)]


def substitute(operand, mapping: dict):
    """Replace registers per `mapping` (key() -> operand), keeping operand modifiers."""
    if isinstance(operand, Reg) and operand.key() in mapping:
        new = mapping[operand.key()]
        if isinstance(new, Reg):
            return replace(new, neg=operand.neg ^ new.neg, abs=operand.abs or new.abs, inv=operand.inv ^ new.inv)
        return new
    if isinstance(operand, Mem) and operand.base is not None and operand.base.key() in mapping:
        new = mapping[operand.base.key()]
        if isinstance(new, Reg):
            return replace(operand, base=replace(new, width=operand.base.width))
    return operand


def uses(func) -> dict:
    """Map each register key to the instructions that read it."""
    table: dict = {}
    for instr in func.instrs():
        for op in list(instr.srcs) + ([instr.pred] if instr.pred is not None else []):
            for reg in regs_in(op):
                table.setdefault(reg.key(), []).append(instr)
    return table


def defs(func) -> dict:
    """Map each register key to the instructions that write it."""
    table: dict = {}
    for instr in func.instrs():
        for op in instr.dsts:
            if isinstance(op, Reg) and not op.is_zero:
                table.setdefault(op.key(), []).append(instr)
    return table
