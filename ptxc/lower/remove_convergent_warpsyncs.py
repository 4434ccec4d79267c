"""remove_convergent_warpsyncs: no WARPSYNC before a vote or shuffle the whole warp reaches together.

select_instrs puts `WARPSYNC mask` before every SHFL/VOTE/MATCH/REDUX whose member
mask is not the full warp but the same in every lane (an immediate, a kernel
parameter: isel_control._member_mask).  ptxas leaves it out where the code is convergent: in a
block that every path from the kernel's entry to its exits goes through, outside any
loop, the threads that have not exited arrive together (divergent regions before it
have reconverged at their BSYNC), so the WARPSYNC has nothing to wait for.  It keeps
it inside a branch (measured: `vote.sync.any` with mask 0xffff at the top of a kernel
is a bare VOTE; the same inside `if (tid < 16)` is `WARPSYNC R0` then VOTE).  This
matters beyond speed: a WARPSYNC whose mask leaves out a calling thread is an illegal
instruction on the GPU, and CUDA code that calls `__any_sync(0xffff, ...)` from the
whole warp (testsuite fe_warp_vote) runs under nvcc only because ptxas drops it.
An explicit `__syncwarp` (bar.warp.sync) is always kept, as ptxas keeps it, and so
is the WARPSYNC of a mask that may differ between lanes (a half-warp's, a tile's,
computed from %tid): there ptxas keeps a plain `WARPSYNC R` before a shuffle even at
the top of a kernel, and a vote/match/redux is an exclusive group (`BSSY;
WARPSYNC.EXCLUSIVE R; op; BSYNC` on sm_90, redux only on sm_89; else the op over the
lanes present, cut down to the mask): running it over the whole warp because both
halves arrived together is what made ptxc's code wrong on the H200.

Expects: SASS IR straight from select_instrs (a kernel; branches end their blocks).
Guarantees: every WARPSYNC left is an explicit one or guards an operation in a block
that not every thread reaches together.
"""
from __future__ import annotations

MEMBER_MASK = "member mask"      # the comment select_instrs gives the WARPSYNCs it adds


def remove_convergent_warpsyncs(func) -> None:
    blocks = func.blocks
    if not any(i.op == "WARPSYNC" and i.comment == MEMBER_MASK for b in blocks for i in b.instrs):
        return
    succs = successors(func)
    exits_only = {k for k, b in enumerate(blocks)
                  if b.instrs and b.instrs[0].op in ("EXIT", "RET") and b.instrs[0].pred is None}
    for k, block in enumerate(blocks):
        if any(i.op == "WARPSYNC" and i.comment == MEMBER_MASK for i in block.instrs) \
                and _on_every_path(succs, k, exits_only) and not _in_cycle(succs, k):
            block.instrs = [i for i in block.instrs if not (i.op == "WARPSYNC" and i.comment == MEMBER_MASK)]


def successors(func) -> list[list[int]]:
    """Per block (by index), the blocks control may go to next."""
    index = {b.label: k for k, b in enumerate(func.blocks)}
    out = []
    for k, block in enumerate(func.blocks):
        nxt, ends = [], False
        for instr in block.instrs:
            if instr.op == "BRA":
                nxt += [index[op.label] for op in instr.srcs if getattr(op, "label", None) in index]
                ends = ends or instr.pred is None
            elif instr.op in ("EXIT", "RET") and instr.pred is None:
                ends = True
        if not ends and k + 1 < len(func.blocks):
            nxt.append(k + 1)
        out.append(nxt)
    return out


def _on_every_path(succs, k: int, exits_only: set = frozenset()) -> bool:
    """Whether every path from the entry to an exit passes through block k, early exits
    aside: a branch to a block that only exits (`if (i >= n) return;`), taken from a
    block whose other threads go on towards k, ends those threads before the others get
    there, and a WARPSYNC counts exited threads as arrived (ptxas: `@P0 EXIT`, then a
    bare VOTE)."""
    if k == 0:
        return True
    towards_k = _reaching(succs, k)
    seen, stack = {0}, [0]
    while stack:
        b = stack.pop()
        if not succs[b]:
            return False          # an exit reached without passing k
        for s in succs[b]:
            if s in exits_only and b in towards_k:
                continue          # an early exit
            if s != k and s not in seen:
                seen.add(s)
                stack.append(s)
    return True


def _reaching(succs, k: int) -> set:
    """The blocks from which block k can be reached."""
    preds: dict = {}
    for b, ss in enumerate(succs):
        for s in ss:
            preds.setdefault(s, []).append(b)
    seen, stack = set(), [k]
    while stack:
        for p in preds.get(stack.pop(), ()):
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def _in_cycle(succs, k: int) -> bool:
    seen, stack = set(), list(succs[k])
    while stack:
        b = stack.pop()
        if b == k:
            return True
        if b not in seen:
            seen.add(b)
            stack.extend(succs[b])
    return False
