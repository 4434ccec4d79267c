"""simplify_cfg: remove branches that do not need to be there.

- A branch to a block that holds only an unconditional `BRA L` goes to L directly
  (the fast path of a division skips its inlined slow path in one branch).
- A branch to the block that follows it in layout (past empty blocks) is deleted,
  conditional or not: control goes there either way.  (A conditional one is what an
  if-region emptied by remove_dead_code leaves: `@P BRA L ; L:`.)
- Blocks no path from the entry reaches are deleted.

Expects: blocks in layout order, branches naming block labels; a block ends at its
first branch or exit.
Guarantees: the same paths through the code; no block is left unreachable.
"""
from __future__ import annotations

from ..sass.ir import Target
from .analysis import successors


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
        while block.instrs and is_branch_to_next(func, index, block.instrs[-1]):
            block.instrs.pop()


def falls_into(func, index: int) -> set:
    """The labels control reaches by falling out of block `index`: the next block's
    and, while blocks are empty, the one after each."""
    reached = set()
    for later in func.blocks[index + 1:]:
        reached.add(later.label)
        if later.instrs:
            break
    return reached


def is_branch_to_next(func, index: int, instr) -> bool:
    """`instr`, the last of block `index`, is a branch (guarded or not) to where control
    falls anyway, so it has no effect."""
    return (instr.op == "BRA" and len(instr.srcs) == 1 and isinstance(instr.srcs[0], Target)
            and not instr.mods and instr.srcs[0].label in falls_into(func, index))


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
