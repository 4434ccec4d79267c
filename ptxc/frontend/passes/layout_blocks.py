"""layout_blocks: the final block order and NVVM's labels.

Drops empty blocks, branches to the next block and unreachable blocks; a block reached
only by falling through joins its predecessor.  Then numbers the blocks as LLVM does
and names branch targets `$L__BB<function>_<block>`.  Expects: block labels are
unique; `cg.aliases` maps renamed labels; a branch is the last instruction of its block
(codegen starts a new block after one).  Guarantees: every branch names a label
that exists; sets cg.block_names and cg.branch_targets for number_registers.
"""
from __future__ import annotations

from ...ptx import ir
from ..vir import TERMINATES, OpcodeTable


def layout_blocks(cg, func: ir.Function) -> None:
    """Drop empty blocks and branches to the next block; name branch targets $L__BB<f>_<n>
    (n: the block's position, counting blocks as LLVM does)."""
    aliases = dict(cg.aliases)

    def resolve(label):
        if label not in aliases:    # (most labels: no set made)
            return label
        seen = set()
        while label in aliases and label not in seen:
            seen.add(label)
            label = aliases[label]
        return label

    blocks = cg.blocks
    changed = True
    while changed:
        changed = False
        # an empty block is an alias of the next one
        kept = []
        for k, block in enumerate(blocks):
            if not block.instrs and k + 1 < len(blocks):
                aliases[block.label] = blocks[k + 1].label
                changed = True
                continue
            kept.append(block)
        blocks = kept
        # a jump to the next block falls through
        # (block.terminator() and _is_branch written out here and below: these loops are hot)
        for k, block in enumerate(blocks[:-1]):
            instrs = block.instrs
            if instrs and _BRANCH[instrs[-1].opcode] and instrs[-1].guard is None:
                # (resolve's common case inline: a label without alias)
                target, after = instrs[-1].operands[0].name, blocks[k + 1].label
                if (resolve(target) if target in aliases else target) == \
                        (resolve(after) if after in aliases else after):
                    instrs.pop()
                    changed = True
        # unreachable blocks (after an unconditional jump, never targeted)
        targets = _targets(blocks, resolve, aliases)
        kept = [blocks[0]]
        for k, block in enumerate(blocks[1:], 1):
            instrs = kept[-1].instrs
            prev = instrs[-1] if instrs else None
            falls_in = prev is None or not TERMINATES[prev.opcode] or (_BRANCH[prev.opcode] and prev.guard is not None)
            label = block.label     # (resolve's common case inline: a label without alias)
            if not falls_in and (resolve(label) if label in aliases else label) not in targets \
                    and label not in targets:
                changed = True
                continue
            kept.append(block)
        blocks = kept
        # a block reached only by falling through is part of the block before it
        targets = _targets(blocks, resolve, aliases)
        merged = [blocks[0]]
        for block in blocks[1:]:
            prev = merged[-1]
            label = block.label
            if (not prev.instrs or not TERMINATES[prev.instrs[-1].opcode]) \
                    and (resolve(label) if label in aliases else label) not in targets:
                prev.instrs.extend(block.instrs)
                aliases[block.label] = prev.label
                changed = True
                continue
            merged.append(block)
        blocks = merged
    cg.blocks = blocks
    names = {}
    for n, block in enumerate(blocks):
        names[block.label] = f"$L__BB{cg.index}_{n}"
    targets = set()
    for block in blocks:
        instrs = block.instrs
        if instrs and _BRANCH[instrs[-1].opcode]:
            instr = instrs[-1]
            target = names[resolve(instr.operands[0].name)]
            instr.operands[0] = ir.Symbol(target)
            targets.add(target)
    cg.block_names = names
    cg.branch_targets = targets


def _targets(blocks: list, resolve, aliases: dict) -> set:
    """The labels branches name (resolved): only a block's last instruction branches."""
    targets = set()
    for block in blocks:
        if block.instrs:
            instr = block.instrs[-1]
            if _BRANCH[instr.opcode]:
                name = instr.operands[0].name
                targets.add(resolve(name) if name in aliases else name)   # (resolve's common case inline)
    return targets


# opcode -> is it `bra` or `bra.uni` (base_of(opcode) == "bra")
_BRANCH = OpcodeTable(lambda opcode: opcode == "bra" or opcode.startswith("bra."))
