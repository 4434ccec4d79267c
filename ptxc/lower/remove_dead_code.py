"""remove_dead_code: delete instructions whose results nothing reads.

An instruction that only writes registers (arithmetic, moves, compares, special
register reads, non-volatile loads) and whose every written register is unread is
deleted; repeated until nothing changes.  Stores, atomics, barriers, branches,
warp-synchronous operations and volatile loads stay.

Expects: virtual registers (physical ones, R1 and the descriptor, are never removed).
Guarantees: same observable behaviour; fewer instructions.
"""
from __future__ import annotations

from ..sass.ir import Reg
from .vregs import read_units, units

# Operations with effects beyond their destination registers.
KEEP = frozenset("""STG STS STL ST ATOMG ATOMS ATOM RED BAR BRA EXIT RET CALL BSSY BSYNC BREAK WARPSYNC
    MEMBAR ERRBAR CCTL SHFL VOTE VOTEU MATCH REDUX NANOSLEEP BPT YIELD FCHK B2R NOP""".split())
VOLATILE = frozenset({"STRONG", "MMIO"})


def remove_dead_code(func) -> None:
    while True:
        read = read_units(func)
        removed = False
        for block in func.blocks:
            kept = [i for i in block.instrs if not _dead(i, read)]
            removed |= len(kept) != len(block.instrs)
            block.instrs = kept
        if not removed:
            return


def _dead(instr, read: set) -> bool:
    if instr.op in KEEP or (instr.op in ("LDG", "LD", "LDS", "LDL") and VOLATILE & set(instr.mods)):
        return False
    written = [r for r in instr.dsts if isinstance(r, Reg) and not r.is_zero]
    if not written or any(not r.virtual for r in written):
        return False
    return not any(u in read for r in written for u in units(r))
