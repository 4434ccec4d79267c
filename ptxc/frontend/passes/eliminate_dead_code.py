"""eliminate_dead_code: drop pure instructions whose results nobody reads.

Expects: blocks of vir instructions; `is_pure` says which have no side effects (loads
but not volatile ones, arithmetic, conversions).  Guarantees: every store, branch,
barrier, atomic, shuffle, vote and inline asm stays; an instruction that only fed
removed ones is removed too (the work list follows operands back).
"""
from __future__ import annotations

from ...ptx import ir
from ..vir import defines, instr_uses, is_pure, use_counts


def eliminate_dead_code(cg, func: ir.Function) -> None:
    """Drop pure instructions whose results nobody reads (and then what only they read).
    Requires nothing; keeps every store, branch, barrier and atomic."""
    counts = use_counts(cg)
    dead: set = set()
    work = [i for b in cg.blocks for i in b.instrs if is_pure(i) and counts.get(i.operands[0], 0) == 0]
    defs: dict = {}
    for block in cg.blocks:
        for instr in block.instrs:
            if defines(instr):
                defs.setdefault(instr.operands[0], []).append(instr)
    while work:
        instr = work.pop()
        if id(instr) in dead:
            continue
        dead.add(id(instr))
        for reg in instr_uses(instr):
            counts[reg] -= 1
            if counts[reg] == 0:
                for d in defs.get(reg, ()):
                    if is_pure(d) and id(d) not in dead:
                        work.append(d)
    if dead:
        for block in cg.blocks:
            block.instrs = [i for i in block.instrs if id(i) not in dead]
