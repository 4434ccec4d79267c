"""split_at_calls: end a block at every CALL.

select_instrs ends a block at each CALL, but passes that merge straight-line blocks
(if_convert) may join the block after it back; order_instrs keeps a terminator last
in its block and would move a CALL past code that belongs after the return.  RET
comes back to the instruction after the CALL, so the code after it must stay there.

Expects: SASS IR with blocks.  Guarantees: a CALL is the last instruction of its
block, and the next block in layout order is where it returns.
"""
from __future__ import annotations

from ..sass.ir import Block


def split_at_calls(func) -> None:
    blocks, count = [], 0
    for block in func.blocks:
        current = Block(block.label)
        blocks.append(current)
        for k, instr in enumerate(block.instrs):
            current.instrs.append(instr)
            if instr.op == "CALL" and k + 1 < len(block.instrs):
                count += 1
                current = Block(f"{block.label}$return{count}")
                blocks.append(current)
    func.blocks = blocks
