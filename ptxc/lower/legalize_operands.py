"""legalize_operands: make every instruction encodable by moving constants into registers.

Instruction selection and fold_constants put immediates and constant-bank values
where they are convenient; the table decides where they may go.  For an
instruction no form encodes: first try the commutative swap of its first two
sources (a compare mirrors, SEL inverts its predicate), then move constants into
registers, one at a time from the first slot, until a form fits.  A constant
moved for several instructions of a block is set by one `MOV` before its first
use there (vadd's `MOV R7, 0x4` serves all three IMAD.WIDE); those registers are
numbered after every other, as ptxas numbers the constants it materializes.

Expects: virtual registers; no pseudo-instructions left (expand_wide_ops ran).
Guarantees: every instruction matches a form of the table (ptxc.lower.vregs.encodable),
or a CompileError names the one that does not (an internal limit, not bad input).
"""
from __future__ import annotations

from dataclasses import replace

from ..diagnostics import CompileError, Diagnostic
from ..sass.ir import CBank, Imm, Instr, Reg, Target
from ..sass.printer import format_ir
from .fold_constants import _swapped
from .vregs import encodable

SKIP = {"BRA", "CALL", "RET", "EXIT", "NOP", "BSSY", "BSYNC", "BREAK"}


def legalize_operands(func) -> None:
    for block in func.blocks:
        materialized: dict = {}
        new_instrs = []
        for instr in block.instrs:
            new_instrs += legalize(func, instr, materialized)
        block.instrs = new_instrs


def legalize(func, instr: Instr, materialized: dict) -> list:
    if instr.op in SKIP or encodable(instr, func.arch):
        return [instr]
    swapped = _swap(instr)
    if swapped is not None and encodable(swapped, func.arch):
        instr.mods, instr.srcs, instr.pred = swapped.mods, swapped.srcs, swapped.pred
        return [instr]
    prelude = []
    slots = [k for k, op in enumerate(instr.srcs) if _movable(instr, k, op)]
    for k in slots:
        reg, movs = _materialize(func, instr.srcs[k], materialized)
        instr.srcs[k] = reg
        prelude += movs
        if encodable(instr, func.arch):
            return prelude + [instr]
        swapped = _swap(instr)
        if swapped is not None and encodable(swapped, func.arch):
            instr.mods, instr.srcs, instr.pred = swapped.mods, swapped.srcs, swapped.pred
            return prelude + [instr]
    raise CompileError(Diagnostic(f"internal limit: no {func.arch} encoding for `{format_ir(instr)}` "
                                  f"in {func.name} (the instruction table lacks this form)"))


def _swap(instr: Instr) -> Instr | None:
    if instr.op in ("SEL", "FSEL") and len(instr.srcs) == 3:
        a, b, p = instr.srcs
        return Instr(instr.op, instr.mods, instr.dsts, [b, a, replace(p, inv=not p.inv)], instr.pred)
    return _swapped(instr)


def _movable(instr: Instr, k: int, op) -> bool:
    if isinstance(op, CBank):
        return getattr(op, "index", None) is None
    if not isinstance(op, Imm):
        return False
    if instr.op in ("LOP3", "PLOP3") and k >= 3:
        return False                      # truth tables
    if instr.op == "LEA" and k == len(instr.srcs) - 1 - (1 if "X" in instr.mods else 0):
        return False                      # the shift count
    if instr.op in ("SHFL",) and k >= 1:
        return True
    return True


def _materialize(func, value, materialized: dict):
    """A register holding `value`, one MOV per block and value; f64 immediates are the
    high word of a double whose low word is zero."""
    if isinstance(value, Imm) and value.kind == "f64":
        key = ("f64", value.bits)
        if key in materialized:
            return materialized[key], []
        reg = func.new_vreg("R", 2)
        materialized[key] = reg
        lo, hi = replace(reg, width=1), replace(reg, num=reg.num + 1, width=1)
        return reg, [Instr("MOV", (), [lo], [Imm(0, "int")], comment="immediate for an operand slot"),
                     Instr("MOV", (), [hi], [Imm(value.bits, "int")], comment="immediate for an operand slot")]
    plain = Imm(value.bits, "int") if isinstance(value, Imm) else replace(value, neg=False, abs=False)
    key = (type(plain).__name__, plain)
    if key in materialized:
        reg = materialized[key]
    else:
        reg = func.new_vreg("R")
        materialized[key] = reg
        mov = Instr("MOV", (), [reg], [plain], comment="immediate for an operand slot")
        return _flagged(reg, value), [mov]
    return _flagged(reg, value), []


def _flagged(reg: Reg, value) -> Reg:
    if isinstance(value, CBank):
        return replace(reg, neg=value.neg, abs=value.abs)
    return reg
