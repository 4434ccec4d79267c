"""simplify_cfg: remove branches that do not need to be there.

- A branch to a block that holds only an unconditional `BRA L` goes to L directly
  (the fast path of a division skips its inlined slow path in one branch).
- An unconditional branch to the block that follows it in layout is deleted.
- Blocks no path from the entry reaches are deleted.

Expects: blocks in layout order, branches naming block labels; a block ends at its
first branch or exit.
Guarantees: the same paths through the code; no block is left unreachable.
"""
from __future__ import annotations

from ..sass.ir import Target
from .assign_regs import successors


def simplify_cfg(func) -> None:
    _thread_jumps(func)
    _drop_branches_to_next(func)
    _drop_unreachable(func)


def _is_jump(instr) -> bool:
    return instr.op == "BRA" and instr.pred is None and len(instr.srcs) == 1


def _thread_jumps(func) -> None:
    forward = {}
    for block in func.blocks:
        if len(block.instrs) == 1 and _is_jump(block.instrs[0]):
            forward[block.label] = block.instrs[0].srcs[0].label
    for block in func.blocks:
        for instr in block.instrs:
            if instr.op != "BRA":
                continue
            target = instr.srcs[-1]
            label, seen = target.label, set()
            while label in forward and label not in seen:
                seen.add(label)
                label = forward[label]
            if label != target.label:
                instr.srcs[-1] = Target(label)


def _drop_branches_to_next(func) -> None:
    for index, block in enumerate(func.blocks[:-1]):
        if not (block.instrs and _is_jump(block.instrs[-1])):
            continue
        reached = set()   # the blocks control falls into: the next one and the empty ones after it
        for later in func.blocks[index + 1:]:
            reached.add(later.label)
            if later.instrs:
                break
        if block.instrs[-1].srcs[0].label in reached:
            block.instrs.pop()


def _drop_unreachable(func) -> None:
    succs = successors(func)
    seen, work = {0}, [0]
    while work:
        b = work.pop()
        for s in succs[b]:
            if s not in seen:
                seen.add(s)
                work.append(s)
    func.blocks = [b for k, b in enumerate(func.blocks) if k in seen]
