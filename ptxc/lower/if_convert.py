"""if_convert: short conditional code runs predicated instead of branched around.

    @P BRA L ; B... ; L: ...           ==>   @!P B... ; ...
    @P BRA T ; F... ; BRA J ; T: T... ; J:   ==>   @!P F... ; @P T... ; J:

A branch whose arms are a few instructions that meet again right after costs a
branch, often a BSSY/BSYNC pair, and, when the warp diverges, both arms one
after the other anyway; ptxas predicates such arms, and so does this pass: a
triangle arm of up to 8 instructions, diamond arms of up to 5 each (8 in all).
An arm qualifies when it is one block (jump-only blocks on the way are skipped),
only its branch enters it, it ends by reaching the join, none of its instructions
is guarded already, branches, synchronizes the warp or the block, or writes the
branch's predicate; one block is never both arms.  A branch to where control
falls anyway (`@P BRA L ; L:`, its arm emptied) is deleted.  Nested arms convert from the inside out.  Blocks that end up
entered only by falling through are merged into their predecessor (not an exclusive
group's block, opened by WARPSYNC.EXCLUSIVE, nor the one after it: insert_bssy puts its
BSYNC there).

Expects: virtual registers; blocks in layout order that end at their first branch.
Guarantees: the same values on every path; fewer branches and blocks.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import Instr, Reg, Target
from .analysis import BRANCHES, STOPS, _has_condition, is_guarded, predecessors as _preds
from .insert_bssy import opens_exclusive
from .simplify_cfg import is_branch_to_next

TRIANGLE_LIMIT = 8
DIAMOND_ARM_LIMIT = 5
DIAMOND_LIMIT = 8
# Instructions that must not run under a predicate they did not have: control flow,
# warp- and block-wide synchronization, and what the slow paths need unpredicated.
UNPREDICABLE = frozenset("""BRA EXIT RET CALL BSSY BSYNC BREAK BAR WARPSYNC SHFL VOTE VOTEU MATCH REDUX
    MEMBAR ERRBAR CCTL B2R NANOSLEEP BPT FCHK""".split())


def if_convert(func) -> None:
    facts = _BlockFacts()
    while _convert_one(func, facts):
        pass
    _merge_blocks(func)


class _BlockFacts:
    """What the CFG of a block depends on, read from its instructions once: the labels
    its branches name (as analysis.successors reads them), whether it falls through,
    and every Target label of its instructions.  Kept per instruction list: a block
    _convert_one changes gets a new list (and no list is changed in place meanwhile)."""

    def __init__(self):
        self.memo: dict = {}

    def of(self, block) -> tuple:
        """(branch labels, falls through, Target labels) of the block."""
        instrs = block.instrs
        entry = self.memo.get(id(instrs))
        if entry is None or entry[0] is not instrs:
            branch_labels, falls, targets = [], True, set()
            for instr in instrs:
                if instr.op in BRANCHES:
                    branch_labels += [op.label for op in instr.srcs if getattr(op, "label", None) is not None]
                if instr.op in STOPS and not is_guarded(instr) and not _has_condition(instr):
                    falls = False
                targets.update(op.label for op in instr.srcs if isinstance(op, Target))
            entry = self.memo[id(instrs)] = (instrs, (branch_labels, falls, targets))
        return entry[1]

    def successors(self, func) -> list:
        """analysis.successors(func), from the kept facts."""
        index = {block.label: b for b, block in enumerate(func.blocks)}
        succs = []
        last = len(func.blocks) - 1
        of = self.of
        for b, block in enumerate(func.blocks):
            branch_labels, falls, _ = of(block)
            out = [index[label] for label in branch_labels if label in index]
            if falls and b < last:
                out.append(b + 1)
            succs.append(out if len(out) < 2 else sorted(set(out)))   # (sorted(set(out)) when shorter)
        return succs

    def targets(self, func) -> set:
        """_branch_targets(func), from the kept facts."""
        out = set()
        of = self.of
        for block in func.blocks:
            out |= of(block)[2]
        return out


def _convert_one(func, facts: _BlockFacts) -> bool:
    succs = facts.successors(func)
    preds = _preds(succs)
    first_index: dict = {}
    for k, b in enumerate(func.blocks):
        first_index.setdefault(b.label, k)
    for a, block in enumerate(func.blocks):
        branch = block.instrs[-1] if block.instrs else None
        if not _is_conditional_jump(branch):
            continue
        t = first_index.get(branch.srcs[0].label)
        f = a + 1
        if t is None or f >= len(func.blocks):
            continue
        if is_branch_to_next(func, a, branch):    # `@P BRA L ; L:` (an arm emptied here or before)
            block.instrs = block.instrs[:-1]
            return True
        cond = branch.pred
        taken, fall = _arm(func, succs, preds, t, a, first_index), _arm(func, succs, preds, f, a, first_index)
        plan = _plan(taken, fall, t, f)
        if plan is None:
            continue
        arms, join, dead = plan
        if not all(_convertible(func.blocks[b], cond) for b, _ in arms):
            continue
        new = block.instrs[:-1]
        for b, sense in arms:
            guard = replace(cond, inv=cond.inv ^ (not sense))
            for instr in func.blocks[b].instrs:
                if instr.op == "BRA":
                    continue
                instr.pred = guard
                new.append(instr)
        new.append(Instr("BRA", (), [], [Target(func.blocks[join].label)], comment="join"))
        block.instrs = new
        for b in sorted(dead, reverse=True):
            func.blocks[b].instrs = []
        _drop_empty_unreached(func, facts.targets(func))
        return True
    return False


def _plan(taken, fall, t: int, f: int):
    """(arms as (block, runs when the branch is taken), join, blocks emptied) or None."""
    t_block, t_join, t_dead = taken
    f_block, f_join, f_dead = fall
    if t == f or (t_block is not None and t_block == f_block):
        return None     # one block on both paths is no arm: it runs either way
    # Triangle: the fall-through arm rejoins at the branch target.
    if f_block is not None and f_join == t:
        return [(f_block, False)], t, f_dead
    # Triangle the other way: the taken arm rejoins at the fall-through block.
    if t_block is not None and t_join == f:
        return [(t_block, True)], f, t_dead
    # Diamond: both arms meet at one join.
    if t_block is not None and f_block is not None and t_join == f_join and t_join is not None:
        return [(f_block, False), (t_block, True)], t_join, t_dead | f_dead
    if t_block is None and f_block is not None and f_join == t_join and t_join is not None:
        return [(f_block, False)], t_join, f_dead | t_dead
    if f_block is None and t_block is not None and f_join == t_join and t_join is not None:
        return [(t_block, True)], t_join, t_dead | f_dead
    return None


def _arm(func, succs, preds, start: int, branch_block: int, first_index: dict):
    """(arm block or None, where the arm ends up, blocks only this arm uses);
    first_index: label -> the index of the first block with that label."""
    dead = set()
    b = start
    entered_from = branch_block
    for _ in range(3):
        block = func.blocks[b]
        if preds[b] != [entered_from]:
            return None, b, set()
        if _is_jump(block):
            dead.add(b)
            entered_from = b
            b = first_index.get(block.instrs[0].srcs[0].label)
            if b is None:
                return None, None, set()
            continue
        if not block.instrs:
            return None, None, set()
        out = succs[b]
        if len(out) != 1:
            return None, None, set()
        join = out[0]
        return b, join, dead | {b}
    return None, None, set()


def _convertible(block, cond: Reg) -> bool:
    body = [i for i in block.instrs if i.op != "BRA"]
    if block.instrs and block.instrs[-1].op == "BRA" and _is_conditional_jump(block.instrs[-1]):
        return False
    if not body or len(body) > TRIANGLE_LIMIT:
        return False
    for instr in body:
        if instr.op in UNPREDICABLE or instr.pred is not None:
            return False
        if any(isinstance(d, Reg) and d.key() == cond.key() for d in instr.dsts):
            return False
    return True


def _is_jump(block) -> bool:
    return len(block.instrs) == 1 and block.instrs[0].op == "BRA" and block.instrs[0].pred is None \
        and len(block.instrs[0].srcs) == 1


def _is_conditional_jump(instr) -> bool:
    return (instr is not None and instr.op == "BRA" and instr.pred is not None and len(instr.srcs) == 1
            and isinstance(instr.srcs[0], Target) and not instr.pred.is_zero)


def _drop_empty_unreached(func, targets: set) -> None:
    """Remove emptied arm blocks nothing branches to any more (`targets`: the labels
    the instructions name)."""
    func.blocks = [b for k, b in enumerate(func.blocks) if k == 0 or b.instrs or b.label in targets
                   or not _was_arm(b)]


def _was_arm(block) -> bool:
    return not block.instrs


def _merge_blocks(func) -> None:
    """A block entered only by falling through from the one before joins it.  Merging
    moves instructions but changes no branch: the targets are found again only when
    _drop_jumps_to_next removed a branch, and the search goes on from the merged
    block (the pairs before it are as they were: not mergeable)."""
    targets, k = None, 1
    while True:
        if _drop_jumps_to_next(func) or targets is None:
            targets = _branch_targets(func)
            k = 1
        while k < len(func.blocks):
            prev, block = func.blocks[k - 1], func.blocks[k]
            if block.label not in targets and not any(i.op in ("BRA", "EXIT", "RET") or opens_exclusive(i)
                                                      for i in prev.instrs + block.instrs[:1]):
                break
            k += 1
        else:
            return
        prev.instrs += block.instrs
        del func.blocks[k]


def _branch_targets(func) -> set:
    return {op.label for b in func.blocks for i in b.instrs for op in i.srcs if isinstance(op, Target)}


def _drop_jumps_to_next(func) -> bool:
    dropped = False
    for k, block in enumerate(func.blocks[:-1]):
        if block.instrs and block.instrs[-1].op == "BRA" and block.instrs[-1].pred is None \
                and len(block.instrs[-1].srcs) == 1 and block.instrs[-1].srcs[0].label == func.blocks[k + 1].label:
            block.instrs.pop()
            dropped = True
    return dropped
