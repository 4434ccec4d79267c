"""expand_wide_ops: split 64-bit pseudo-instructions into 32-bit machine code.

    IADD.64 d, a, b   ==>  IADD3 d.lo, P, a.lo, b.lo, RZ ; IADD3.X d.hi, a.hi, b.hi, RZ, P, !PT
    MOV d(64), s      ==>  MOV d.lo, s.lo ; MOV d.hi, s.hi
    CVTA d, s         ==>  the MOV above (only when fold_cvta was disabled)

Halves of a register are its two 32-bit units; of a constant-bank operand the words
at offset and offset+4; of a 64-bit immediate its two words.

Expects: IADD.64 / 64-bit MOV / CVTA pseudo-instructions.
Guarantees: only real sm_89 instructions remain; 64-bit values stay in aligned pairs.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import CBank, Imm, Instr, P, Reg, PT, RZ
from .vregs import half


def _half(op, which: int):
    if isinstance(op, Reg):
        return op if op.is_zero else half(op, which)
    if isinstance(op, CBank):
        return CBank(op.bank, op.offset + 4 * which)
    if isinstance(op, Imm):
        return Imm((op.bits >> (32 * which)) & 0xFFFFFFFF, "int")
    raise TypeError(op)


def _expand(func, instr: Instr) -> list[Instr]:
    if instr.op == "IADD" and instr.mods == ("64",):
        d, (a, b) = instr.dsts[0], instr.srcs
        if isinstance(a, (CBank, Imm)):
            a, b = b, a
        carry = func.new_vreg("P")
        return [Instr("IADD3", (), [_half(d, 0), carry], [_half(a, 0), _half(b, 0), Reg("R", RZ)], instr.pred),
                Instr("IADD3", ("X",), [_half(d, 1)], [_half(a, 1), _half(b, 1), Reg("R", RZ), carry, Reg("P", PT, inv=True)],
                      instr.pred)]
    if instr.op in ("MOV", "CVTA") and instr.dsts[0].width == 2:
        d, s = instr.dsts[0], instr.srcs[0]
        return [Instr("MOV", (), [_half(d, k)], [_half(s, k)], instr.pred) for k in (0, 1)]
    return [instr]


def expand_wide_ops(func) -> None:
    for block in func.blocks:
        block.instrs = [new for instr in block.instrs for new in _expand(func, instr)]
