"""remove_dead_code: delete instructions whose results nothing reads.

An instruction that only writes registers (arithmetic, moves, compares, special
register reads, non-volatile loads) and whose every written register is unread is
deleted; repeated until nothing changes.  Stores, atomics, barriers, branches,
warp-synchronous operations and volatile loads stay, except a branch (guarded or
not) to where control falls anyway: deleting the code of an if-region leaves
`@P BRA L ; L:`, whose branch and then whose condition are dead as well.

Expects: virtual registers (physical ones, R1 and the descriptor, are never removed).
Guarantees: same observable behaviour; fewer instructions.
"""
from __future__ import annotations

from ..sass.ir import Reg
from .simplify_cfg import is_branch_to_next
from .vregs import instr_read_units, units

# Operations with effects beyond their destination registers.
KEEP = frozenset("""STG STS STL ST ATOMG ATOMS ATOM RED BAR BRA EXIT RET CALL BSSY BSYNC BREAK WARPSYNC
    MEMBAR ERRBAR CCTL SHFL VOTE VOTEU MATCH REDUX NANOSLEEP BPT YIELD FCHK B2R NOP""".split())
VOLATILE = frozenset({"STRONG", "MMIO"})


def remove_dead_code(func) -> None:
    """Deleting an instruction only removes reads, so deadness never comes back: a
    worklist over read counts reaches the same instructions as rescanning the
    function until nothing changes, without the rescans (a dead chain of n
    instructions took n + 1 of them)."""
    count: dict = {}                 # unit -> reads of it by instructions still there
    reads: dict = {}                 # id(instr) -> units it reads
    writers: dict = {}               # unit -> candidate instructions writing it
    candidates = []
    for instr in func.instrs():
        units_read = instr_read_units(instr)
        reads[id(instr)] = units_read
        for u in units_read:
            count[u] = count.get(u, 0) + 1
        written = _removable_writes(instr)
        if written:
            candidates.append((instr, written))
            for u in written:
                writers.setdefault(u, []).append((instr, written))
    removed: set = set()

    def remove(instr) -> None:
        removed.add(id(instr))
        for u in reads[id(instr)]:
            count[u] -= 1
            if not count[u]:
                work.extend(writers.get(u, ()))

    work = list(reversed(candidates))
    while work:
        while work:
            instr, written = work.pop()
            if id(instr) in removed or any(count.get(u, 0) for u in written):
                continue
            remove(instr)
        if removed:
            for block in func.blocks:
                block.instrs = [i for i in block.instrs if id(i) not in removed]
        for index in reversed(range(len(func.blocks))):     # an emptied block may make the one before a no-op
            block = func.blocks[index]
            if block.instrs and is_branch_to_next(func, index, block.instrs[-1]):
                remove(block.instrs.pop())


def _removable_writes(instr) -> list:
    """The units an instruction writes when deleting it is allowed once they are all
    unread (only virtual results, no effect beyond them); [] otherwise."""
    if instr.op in KEEP or (instr.op in ("LDG", "LD", "LDS", "LDL") and VOLATILE & set(instr.mods)):
        return []
    written = [r for r in instr.dsts if isinstance(r, Reg) and not r.is_zero]
    if not written or any(not r.virtual for r in written):
        return []
    return [u for r in written for u in units(r)]
