"""pad_text: end the code as ptxas does, with a branch to itself and NOPs.

The `BRA` to itself stops a warp that runs past the last EXIT; NOPs then fill
.text to a multiple of 128 bytes (8 instructions of 16 bytes) plus one more 128
bytes of NOPs.  Measured on ptxas 13.5: n instructions (the BRA included) take
8 * (ceil(n / 8) + 1) slots: 3 -> 16, 8 -> 16, 11 -> 24, 17 -> 32 (vadd), 41 -> 56.

Expects: the final instruction list.
Guarantees: len(instructions) is a multiple of 8; the last real one is `BRA self`.
"""
from __future__ import annotations

from ..sass.ir import Block, Instr, Target

PAD_LABEL = "$ptxc_trap"


def pad_text(func) -> None:
    block = Block(PAD_LABEL)
    block.instrs.append(Instr("BRA", (), [], [Target(PAD_LABEL)], comment="trap: branch to self"))
    count = sum(len(b.instrs) for b in func.blocks) + 1
    block.instrs += [Instr("NOP") for _ in range(-count % 8 + 8)]
    func.blocks.append(block)
