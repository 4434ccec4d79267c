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
branch's predicate.  Nested arms convert from the inside out.  Blocks that end up
entered only by falling through are merged into their predecessor.

Expects: virtual registers; blocks in layout order that end at their first branch.
Guarantees: the same values on every path; fewer branches and blocks.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import Instr, Reg, Target
from .assign_regs import successors

TRIANGLE_LIMIT = 8
DIAMOND_ARM_LIMIT = 5
DIAMOND_LIMIT = 8
# Instructions that must not run under a predicate they did not have: control flow,
# warp- and block-wide synchronization, and what the slow paths need unpredicated.
UNPREDICABLE = frozenset("""BRA EXIT RET CALL BSSY BSYNC BREAK BAR WARPSYNC SHFL VOTE VOTEU MATCH REDUX
    MEMBAR ERRBAR CCTL B2R NANOSLEEP BPT FCHK""".split())


def if_convert(func) -> None:
    while _convert_one(func):
        pass
    _merge_blocks(func)


def _convert_one(func) -> bool:
    succs = successors(func)
    preds = _preds(succs)
    for a, block in enumerate(func.blocks):
        branch = block.instrs[-1] if block.instrs else None
        if not _is_conditional_jump(branch):
            continue
        t = _index(func, branch.srcs[0].label)
        f = a + 1
        if t is None or f >= len(func.blocks):
            continue
        cond = branch.pred
        taken, fall = _arm(func, succs, preds, t, a), _arm(func, succs, preds, f, a)
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
        _drop_empty_unreached(func)
        return True
    return False


def _plan(taken, fall, t: int, f: int):
    """(arms as (block, runs when the branch is taken), join, blocks emptied) or None."""
    t_block, t_join, t_dead = taken
    f_block, f_join, f_dead = fall
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


def _arm(func, succs, preds, start: int, branch_block: int):
    """(arm block or None, where the arm ends up, blocks only this arm uses)."""
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
            b = _index(func, block.instrs[0].srcs[0].label)
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


def _index(func, label: str):
    for k, b in enumerate(func.blocks):
        if b.label == label:
            return k
    return None


def _preds(succs) -> list:
    preds = [[] for _ in succs]
    for b, out in enumerate(succs):
        for s in out:
            preds[s].append(b)
    return preds


def _drop_empty_unreached(func) -> None:
    """Remove emptied arm blocks nothing branches to any more."""
    targets = {op.label for b in func.blocks for i in b.instrs for op in i.srcs if isinstance(op, Target)}
    func.blocks = [b for k, b in enumerate(func.blocks) if k == 0 or b.instrs or b.label in targets
                   or not _was_arm(b)]


def _was_arm(block) -> bool:
    return not block.instrs


def _merge_blocks(func) -> None:
    """A block entered only by falling through from the one before joins it."""
    changed = True
    while changed:
        changed = False
        _drop_jumps_to_next(func)
        targets = {op.label for b in func.blocks for i in b.instrs for op in i.srcs if isinstance(op, Target)}
        for k in range(1, len(func.blocks)):
            prev, block = func.blocks[k - 1], func.blocks[k]
            if block.label in targets:
                continue
            if prev.instrs and prev.instrs[-1].op in ("BRA", "EXIT", "RET"):
                continue
            if any(i.op in ("BRA", "EXIT", "RET") for i in prev.instrs):
                continue
            prev.instrs += block.instrs
            del func.blocks[k]
            changed = True
            break


def _drop_jumps_to_next(func) -> None:
    for k, block in enumerate(func.blocks[:-1]):
        if block.instrs and block.instrs[-1].op == "BRA" and block.instrs[-1].pred is None \
                and len(block.instrs[-1].srcs) == 1 and block.instrs[-1].srcs[0].label == func.blocks[k + 1].label:
            block.instrs.pop()
