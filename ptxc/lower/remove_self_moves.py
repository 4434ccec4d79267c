"""remove_self_moves: delete `MOV Rn, Rn` that register allocation left behind.

A copy whose two sides received the same register does nothing.

Expects: physical registers (after assign_regs).
Guarantees: same values; fewer instructions.
"""
from __future__ import annotations

from ..sass.ir import Reg


def remove_self_moves(func) -> None:
    for block in func.blocks:
        block.instrs = [i for i in block.instrs if not _self_move(i)]


def _self_move(instr) -> bool:
    if instr.op != "MOV" or len(instr.srcs) != 1 or not instr.dsts:
        return False
    d, s = instr.dsts[0], instr.srcs[0]
    return (isinstance(s, Reg) and not s.virtual and not d.virtual and d.file == s.file and d.num == s.num
            and d.width == s.width and not (s.neg or s.abs or s.inv))
