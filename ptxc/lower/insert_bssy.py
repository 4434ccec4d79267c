"""insert_bssy: reconverge diverged threads where their paths meet again (BSSY / BSYNC).

On sm_70 and later a warp whose threads branched apart does not come back together
by itself: `BSSY Bn, join` records the threads present in convergence barrier Bn,
and `BSYNC Bn` at the join makes each of them wait there until all that have not
exited arrived.  ptxas brackets every divergent region so; without it the threads
of a warp run the rest of the kernel apart, one path at a time (the emulator
serializes them the same way).

For each conditional branch (not `bra.uni`) the join is the branch block's
immediate post-dominator; a branch whose paths only end in EXIT needs no join.  The
region is what the branch reaches before the join; where other code enters the join
too, the region's edges go to a block of its own before it, which holds the BSYNC.
The BSSY goes before the
branch, unless the region holds the header of a loop around the branch (a loop's
exit test): then it goes in a preheader before the loop, created if the block
entering the loop has other successors, so that it runs once per entry into the
loop and not per iteration.  Regions with the same join and nested entries share
one barrier; barriers are numbered so that regions that overlap use different
ones (at most 16).

A collective under a member mask that differs between lanes comes from select_instrs
as a block of its own opened by `WARPSYNC.EXCLUSIVE mask` (sm_90's vote/match/redux,
sm_89's redux): its BSSY goes just before that WARPSYNC and its BSYNC at the start of
the block after it, as ptxas writes them, so the groups the WARPSYNC splits the warp
into run together again after the collective.

Expects: the final code (after order_instrs and assign_regs): blocks in layout
order, branches naming block labels, `bra.uni` branches marked by their comment.
Guarantees: every divergent branch and every WARPSYNC.EXCLUSIVE is inside a BSSY/BSYNC
pair whose BSYNC every path from it reaches (or exits first); blocks keep their order, with
preheaders added before loop headers where needed.
"""
from __future__ import annotations

from ..sass.ir import Block, Instr, Reg, Target
from .analysis import dominates as _dominates, dominators, post_dominators, predecessors, successors
from .kernel_info import info_of

MAX_BARRIERS = 16


def insert_bssy(func) -> None:
    regions = _regions(func)
    groups = _exclusive_groups(func)
    if not regions and not groups:
        return
    if regions:
        regions = _with_preheaders(func, regions)
        regions = [(entry, _private_join(func, entry, join, k)) for k, (entry, join) in enumerate(regions)]
    groups = _exclusive_groups(func)          # (after the preheaders: indices moved)
    succs = successors(func)
    index = {b.label: k for k, b in enumerate(func.blocks)}
    spans = [_span(succs, index[entry], index[join]) | {index[entry], index[join]} for entry, join in regions]
    spans += [{k, k + 1} for k in groups]
    colors = _color(spans)
    for (entry, join), barrier in zip(regions, colors):
        block = func.blocks[index[entry]]
        at = len(block.instrs)
        if block.instrs and block.instrs[-1].op in ("BRA", "EXIT", "RET"):
            at -= 1
        block.instrs.insert(at, Instr("BSSY", (), [Reg("B", barrier)], [Target(join)], comment="divergent region"))
        func.blocks[index[join]].instrs.insert(0, Instr("BSYNC", (), [], [Reg("B", barrier)], comment="join"))
    for k, barrier in zip(groups, colors[len(regions):]):
        block, join = func.blocks[k], func.blocks[k + 1]
        at = next(n for n, i in enumerate(block.instrs) if opens_exclusive(i))
        block.instrs.insert(at, Instr("BSSY", (), [Reg("B", barrier)], [Target(join.label)], comment="exclusive group"))
        join.instrs.insert(0, Instr("BSYNC", (), [], [Reg("B", barrier)], comment="exclusive group's end"))
    info_of(func).convergence_barriers = max(colors) + 1


def opens_exclusive(instr) -> bool:
    """Whether `instr` opens an exclusive group (its block ends where the group does:
    passes that merge blocks keep that boundary)."""
    return instr.op == "WARPSYNC" and "EXCLUSIVE" in instr.mods


def _exclusive_groups(func) -> list:
    """Indices of the blocks select_instrs opened with WARPSYNC.EXCLUSIVE (a collective
    under a varying member mask, isel_control._warpsync): each group's lanes run the
    block apart from the others', and meet again at the next block's start."""
    return [k for k, b in enumerate(func.blocks[:-1]) if any(opens_exclusive(i) for i in b.instrs)]


def _regions(func) -> list:
    """(entry label, join label) per divergent region, deduplicated."""
    succs = successors(func)
    n = len(func.blocks)
    preds = predecessors(succs)
    ipdom = post_dominators(succs, n)
    idom = dominators(preds, n)
    found = []   # (entry block, is a preheader of it, join block)
    for b, block in enumerate(func.blocks):
        branch = block.instrs[-1] if block.instrs else None
        if branch is None or branch.op != "BRA" or not _conditional(branch) or branch.comment == "uniform":
            continue
        join = ipdom[b]
        if join is None or join >= n:
            continue
        header = _loop_header(_span(succs, b, join), b, idom, preds)
        entry = (header, True) if header is not None else (b, False)
        if (entry, join) not in found:
            found.append((entry, join))
    # Regions with one join: the outermost (its entry dominating the others') is enough.
    kept = [(entry, join) for entry, join in found
            if not any(j == join and e != entry and _dominates(idom, e[0], entry[0])
                       and not (e[0] == entry[0] and entry[1] and not e[1]) for e, j in found)]
    labels = [b.label for b in func.blocks]
    return [((("preheader", labels[e]) if pre else labels[e]), labels[join]) for (e, pre), join in kept]


def _conditional(instr) -> bool:
    if instr.pred is not None and not (instr.pred.is_zero and not instr.pred.inv):
        return True
    return any(isinstance(op, Reg) and op.file == "P" and not (op.is_zero and not op.inv) for op in instr.srcs)


def _span(succs, start: int, stop: int) -> set:
    """Blocks reachable from `start` without passing through `stop`."""
    seen, work = {start}, [start]
    while work:
        b = work.pop()
        for s in succs[b]:
            if s != stop and s not in seen:
                seen.add(s)
                work.append(s)
    return seen


def _loop_header(region: set, branch: int, idom: list, preds: list):
    """The header of a loop around `branch` whose blocks the region holds: a block of
    the region that dominates the branch block and is entered from the branch's side
    by a back edge."""
    best = None
    for h in region:
        if not _dominates(idom, h, branch):
            continue
        if any(p in region and _dominates(idom, h, p) for p in preds[h]):
            if best is None or _dominates(idom, h, best):
                best = h
    return best


def _with_preheaders(func, regions: list) -> list:
    """Replace ('preheader', header) entries by a block that enters the loop once,
    creating one before the header when the block entering it does not fit."""
    out = []
    made = {}
    for entry, join in regions:
        if isinstance(entry, tuple):
            header = entry[1]
            if header not in made:
                made[header] = _preheader(func, header)
            entry = made[header]
        if (entry, join) not in out:
            out.append((entry, join))
    return out


def _preheader(func, header: str) -> str:
    """A block whose only successor is the loop header, run once per entry into the
    loop: a new block placed right before the header, taking the edges that enter
    the loop from outside (back edges come from blocks the header dominates)."""
    succs = successors(func)
    n = len(func.blocks)
    preds = predecessors(succs)
    idom = dominators(preds, n)
    h = next(k for k, b in enumerate(func.blocks) if b.label == header)
    outside = [p for p in preds[h] if not _dominates(idom, h, p)]
    label = f"{header}$preheader"
    _redirect(func, outside, header, label)
    _insert_before(func, h, label, succs, outside, "back edge")
    return label


def _private_join(func, entry: str, join: str, serial: int) -> str:
    """The join if only the region's blocks enter it; else a new block right before it,
    which the region's edges into the join take instead: the BSYNC goes there, so a
    thread that comes to the join from outside (a loop's `continue` to the code after
    an inner loop) does not wait at a barrier whose BSSY it never ran."""
    succs = successors(func)
    index = {b.label: k for k, b in enumerate(func.blocks)}
    e, j = index[entry], index[join]
    region = _span(succs, e, j)
    outside = [p for p in range(len(func.blocks)) if j in succs[p] and p not in region]
    if not outside:
        return join
    label = f"{join}$join{serial}"
    _redirect(func, [p for p in region if j in succs[p]], join, label)
    _insert_before(func, j, label, succs, region, "past the join")
    return label


def _redirect(func, blocks, old: str, new: str) -> None:
    """The branches to label `old` in `blocks` (indices) go to `new` instead."""
    for p in blocks:
        for instr in func.blocks[p].instrs:
            if instr.op == "BRA":
                instr.srcs = [Target(new) if isinstance(op, Target) and op.label == old else op
                              for op in instr.srcs]


def _insert_before(func, at: int, label: str, succs, redirected, comment: str) -> None:
    """An empty block `label` before block `at`; the block above, if it fell into `at`
    and is not among those `redirected` to the new block, branches over it."""
    target = func.blocks[at].label
    before = at - 1
    if before >= 0 and before not in redirected and _falls_into(func, before, succs, at):
        func.blocks[before].instrs.append(Instr("BRA", (), [], [Target(target)], comment=comment))
    func.blocks.insert(at, Block(label))


def _falls_into(func, b: int, succs, h: int) -> bool:
    """Whether block b reaches h by falling through (not only by a branch to it)."""
    if h not in succs[b]:
        return False
    last = func.blocks[b].instrs[-1] if func.blocks[b].instrs else None
    return last is None or last.op != "BRA" or _conditional(last) or last.srcs[-1].label != func.blocks[h].label


def _color(spans: list) -> list:
    """Barrier numbers: regions whose blocks overlap get different ones; bigger first."""
    order = sorted(range(len(spans)), key=lambda k: -len(spans[k]))
    colors = [0] * len(spans)
    for k in order:
        used = {colors[j] for j in order[:order.index(k)] if spans[j] & spans[k]}
        colors[k] = next(c for c in range(MAX_BARRIERS) if c not in used) if len(used) < MAX_BARRIERS else 0
    return colors
