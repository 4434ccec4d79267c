"""eliminate_dead_code: drop pure instructions whose results nobody reads.

Expects: blocks of vir instructions; `is_pure` says which have no side effects (loads
but not volatile ones, arithmetic, conversions); `cg.uses`, unless None, counts every
register's reads (then, without inline asm, no operand is scanned).  Guarantees: every
store, branch, barrier, atomic, shuffle, vote and inline asm stays; an instruction that
only fed removed ones is removed too (the work list follows operands back); `cg.uses`
counts the reads (vir.instr_uses) of the instructions left.
"""
from __future__ import annotations

from ...ptx import ir
from ..vir import PURE_OPCODE, READS_FIRST, VReg, instr_uses

Address, Vector = ir.Address, ir.Vector
_PURE: dict = {}    # opcode -> PURE_OPCODE[opcode]


def eliminate_dead_code(cg, func: ir.Function) -> None:
    """Drop pure instructions whose results nobody reads (and then what only they read);
    keeps every store, branch, barrier and atomic."""
    if cg.uses is not None and not cg.has_asm:
        counts = cg.uses    # (kept true below, as the dead instructions' reads go)
        get = counts.get
        # The unread results, found without listing every pure instruction first (most
        # functions have none: then that list is never needed).
        work = []
        for block in cg.blocks:
            for instr in block.instrs:
                try:    # (a plain dict: subscripting an OpcodeTable, a dict subclass, costs twice as much)
                    pure = _PURE[instr.opcode]
                except KeyError:
                    pure = _PURE[instr.opcode] = PURE_OPCODE[instr.opcode]
                if pure and instr.operands and _unread(instr.operands[0], get):
                    work.append(instr)
        if not work:
            return
        pure = _pure_definitions(cg)
    else:
        counts, pure = _count_uses(cg)
        cg.uses = counts    # (kept true below, as the dead instructions' reads go)
        get = counts.get
        work = [i for i in pure if _unread(i.operands[0], get)]
        if not work:
            return
    defs: dict = {}     # register -> the pure instructions that write it
    for instr in pure:
        first = instr.operands[0]
        for reg in (first.elems if first.__class__ is Vector else (first,)):
            found = defs.get(reg)
            if found is None:
                defs[reg] = [instr]
            else:
                found.append(instr)
    dead: set = set()
    while work:
        instr = work.pop()
        if id(instr) in dead:
            continue
        dead.add(id(instr))
        for reg in instr_uses(instr):
            counts[reg] -= 1
            if counts[reg] == 0:
                for d in defs.get(reg, ()):
                    if id(d) not in dead and _unread(d.operands[0], counts.get):
                        work.append(d)
    for block in cg.blocks:
        block.instrs = [i for i in block.instrs if id(i) not in dead]


def _unread(first, get) -> bool:
    """Is a pure instruction's result (a register, or a vector of them: `mov.b32 {%rs1,
    %rs2}, %r1`) read by nothing?"""
    if first.__class__ is VReg:
        return get(first, 0) == 0
    return first.__class__ is Vector and all(get(e, 0) == 0 for e in first.elems if e.__class__ is VReg)


def _pure_definitions(cg) -> list:
    """The pure instructions that define a register, in program order."""
    # (a pure opcode never reads its first operand: a register there is its result)
    return [instr for block in cg.blocks for instr in block.instrs
            if PURE_OPCODE[instr.opcode] and instr.operands and instr.operands[0].__class__ in (VReg, Vector)]


def _count_uses(cg) -> tuple[dict, list]:
    """Use counts and the pure instructions that define a register (in program order),
    from one scan of every operand."""
    counts: dict = {}
    pure: list = []
    get = counts.get
    has_asm = cg.has_asm
    for block in cg.blocks:
        for instr in block.instrs:
            ops = instr.operands
            opcode = instr.opcode
            if has_asm and opcode == "inline.asm":   # never pure
                for reg in instr_uses(instr):
                    counts[reg] = get(reg, 0) + 1
                continue
            # instr_uses(instr), inlined (this scan reads every instruction): the first
            # operand only where the instruction reads it, then the others.
            if ops:
                first = ops[0].__class__
                if first is VReg and not READS_FIRST[opcode]:   # defines()
                    if PURE_OPCODE[opcode]:    # is_pure(instr)
                        pure.append(instr)
                    ops = ops[1:]
                elif first is Vector:
                    if PURE_OPCODE[opcode]:
                        pure.append(instr)
                    ops = ops[1:]
            for op in ops:
                cls = op.__class__
                if cls is VReg:
                    counts[op] = get(op, 0) + 1
                elif cls is Address:
                    reg = op.base
                    if reg.__class__ is VReg:
                        counts[reg] = get(reg, 0) + 1
                elif cls is Vector:
                    for reg in op.elems:
                        if reg.__class__ is VReg:
                            counts[reg] = get(reg, 0) + 1
            if instr.guard is not None:
                counts[instr.guard] = get(instr.guard, 0) + 1
    return counts, pure
