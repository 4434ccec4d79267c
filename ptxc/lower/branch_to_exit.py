"""branch_to_exit: a branch to a block that only exits becomes the exit itself.

    @P0 BRA L ; ... L: EXIT     ==>     @P0 EXIT ; ... L: EXIT

This is vadd's bound check: `if (i < n)` compiles to `@%p1 bra $L__BB0_2` over a
`ret`, and ptxas emits `@P0 EXIT`.

Expects: blocks in layout order; EXIT for `ret`.
Guarantees: same control flow; blocks no branch targets any more stay (they are
reached by fall-through).
"""
from __future__ import annotations

from ..sass.ir import Instr


def branch_to_exit(func) -> None:
    exit_blocks = {b.label for b in func.blocks
                   if len(b.instrs) == 1 and b.instrs[0].op == "EXIT" and b.instrs[0].pred is None}
    for block in func.blocks:
        for index, instr in enumerate(block.instrs):
            if instr.op == "BRA" and len(instr.srcs) == 1 and instr.srcs[0].label in exit_blocks:
                block.instrs[index] = Instr("EXIT", (), [], [], instr.pred, comment="branch to exit")
