"""eliminate_dead_code: drop pure instructions whose results nobody reads.

Expects: blocks of vir instructions; `is_pure` says which have no side effects (loads
but not volatile ones, arithmetic, conversions).  Guarantees: every store, branch,
barrier, atomic, shuffle, vote and inline asm stays; an instruction that only fed
removed ones is removed too (the work list follows operands back).
"""
from __future__ import annotations

from ...ptx import ir
from ..vir import PURE_OPCODE, READS_FIRST, VReg, instr_uses, is_pure

Address, Vector = ir.Address, ir.Vector


def eliminate_dead_code(cg, func: ir.Function) -> None:
    """Drop pure instructions whose results nobody reads (and then what only they read).
    Requires nothing; keeps every store, branch, barrier and atomic."""
    # One scan gathers what three did: use counts, each register's definitions, and the
    # pure instructions (candidates, in program order).
    counts: dict = {}
    defs: dict = {}
    pure: list = []
    get = counts.get
    for block in cg.blocks:
        for instr in block.instrs:
            ops = instr.operands
            if instr.opcode == "inline.asm":
                for reg in instr_uses(instr):
                    counts[reg] = get(reg, 0) + 1
            else:
                # instr_uses(instr), inlined (this scan reads every instruction): the
                # first operand only where the instruction reads it, then the others.
                first = True
                for op in ops:
                    cls = op.__class__
                    if cls is VReg:
                        if first:
                            first = False
                            if not READS_FIRST[instr.opcode]:
                                continue
                        counts[op] = get(op, 0) + 1
                    elif cls is Address:
                        first = False
                        reg = op.base
                        if reg.__class__ is VReg:
                            counts[reg] = get(reg, 0) + 1
                    elif cls is Vector:
                        if not first:
                            for reg in op.elems:
                                if reg.__class__ is VReg:
                                    counts[reg] = get(reg, 0) + 1
                        first = False
                    else:
                        first = False
                if instr.guard is not None:
                    counts[instr.guard] = get(instr.guard, 0) + 1
            if ops and ops[0].__class__ is VReg and not READS_FIRST[instr.opcode]:   # defines()
                found = defs.get(ops[0])
                if found is None:
                    defs[ops[0]] = [instr]
                else:
                    found.append(instr)
                if PURE_OPCODE[instr.opcode]:   # is_pure(instr): it defines a register
                    pure.append(instr)
    dead: set = set()
    work = [i for i in pure if counts.get(i.operands[0], 0) == 0]
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
