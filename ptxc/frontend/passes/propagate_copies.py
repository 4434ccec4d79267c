"""propagate_copies: `mov %a, %b` goes when %a is only that copy of %b, unchanged while %a is read.

Codegen copies a value where a variable may change later (a snapshot), or where a
register variable is set once (a struct field, an inlined function's result); when %a
is written only by the copy and %b does not change after it -- %b is written once, or
only in the copy's block before the copy -- the copy is only a second name, which
mem2reg/SROA would not have made.  So it is when %b is written only in the copy's
block and every read of %a is in that block, after the copy and no later than %b's
next write (an unrolled loop's struct variable passed to an inlined member function).  Expects: vir blocks.  Guarantees: every read of %a
reads %b (same class), which holds the same value there; `cg.uses` (codegen's use
counts), unless None, still counts every register's reads: a removed copy's read is
gone, and %a's reads are %b's.
"""
from __future__ import annotations

from itertools import compress
from itertools import count as _counter
from operator import attrgetter

from ...ptx import ir
from ..vir import READS_FIRST, OpcodeTable, VReg, instr_defs, instr_uses

_COPY = OpcodeTable(lambda opcode: opcode.startswith("mov."))
_opcode_of = attrgetter("opcode")


def propagate_copies(cg, func: ir.Function) -> None:
    # The candidate copies: unguarded `mov`s between registers of one class.
    copies: list = []        # (block index, position, mov instruction)
    for b, block in enumerate(cg.blocks):
        instrs = block.instrs
        # (the positions of the block's `mov`s, picked in C)
        for pos in compress(_counter(), map(_COPY.__getitem__, map(_opcode_of, instrs))):
            instr = instrs[pos]
            if instr.guard is None:
                ops = instr.operands
                if len(ops) == 2 and ops[0].__class__ is VReg and ops[1].__class__ is VReg \
                        and ops[0].cls == ops[1].cls:
                    copies.append((b, pos, instr))
    if not copies:
        return
    # Of their registers: how often each is written, where last, whether in one block only.
    involved = {reg for _, _, instr in copies for reg in instr.operands}
    defs: dict = {}
    last_def: dict = {}      # register -> position (in its block) of its last definition
    def_block: dict = {}     # register -> the block that writes it; -1: several blocks
    for b, block in enumerate(cg.blocks):
        for pos, instr in enumerate(block.instrs):
            ops = instr.operands
            if not ops:
                continue
            reg = ops[0]
            # instr_defs, with its common case first: a plain register result
            if reg.__class__ is VReg and instr.opcode != "inline.asm":
                if reg not in involved or READS_FIRST[instr.opcode]:
                    continue        # (a store's address, a barrier's count: nothing written)
                written = (reg,)
            elif reg.__class__ is ir.Vector or instr.opcode == "inline.asm":
                written = [reg for reg in instr_defs(instr) if reg in involved]
            else:
                continue
            for reg in written:
                count = defs.get(reg)
                if count is None:
                    defs[reg] = 1
                    def_block[reg] = b
                else:
                    defs[reg] = count + 1
                    if def_block[reg] != b:
                        def_block[reg] = -1
                last_def[reg] = pos
    rename: dict = {}
    param_loads = cg.param_loads
    for b, pos, instr in copies:
        dst, src = instr.operands
        root = src      # a copy of a copy: of the first one's source (unchanging after it, so here too)
        while root in rename:
            root = rename[root]
        if defs[dst] == 1 and dst not in param_loads and dst is not root \
                and (defs.get(root, 0) <= 1 or (def_block[root] == b and last_def[root] < pos)):
            rename[dst] = src
    _rename_within_block(cg, copies, rename, defs, def_block, param_loads)
    if not rename:
        return

    def resolve(reg):
        while reg in rename:
            reg = rename[reg]
        return reg
    for b, pos, instr in reversed(copies):   # (the copies that go, last first: positions stay true)
        if instr.operands[0] in rename:
            del cg.blocks[b].instrs[pos]
    for block in cg.blocks:
        for instr in block.instrs:
            ops = instr.operands
            for op in ops:      # (most instructions read no renamed register: look first)
                cls = type(op)
                if (cls is VReg and op in rename) or cls is ir.Address or cls is ir.Vector:
                    break
            else:
                if instr.guard is not None and instr.guard in rename:
                    instr.guard = resolve(instr.guard)
                continue
            for k, op in enumerate(ops):
                cls = op.__class__
                if cls is VReg:
                    if op in rename:
                        ops[k] = resolve(op)
                elif cls is ir.Address:
                    if op.base.__class__ is VReg and op.base in rename:
                        ops[k] = ir.Address(resolve(op.base), op.offset)
                elif cls is ir.Vector:
                    if any(e in rename for e in op.elems if e.__class__ is VReg):
                        ops[k] = ir.Vector(tuple(resolve(e) if e.__class__ is VReg else e for e in op.elems))
            if instr.guard is not None and instr.guard in rename:
                instr.guard = resolve(instr.guard)
    uses = cg.uses
    if uses is not None:
        for b, pos, instr in copies:
            dst, src = instr.operands
            if dst in rename:   # the copy is gone, and its read of src
                uses[src] -= 1
        for reg in rename:
            count = uses.pop(reg, 0)
            if count:
                final = resolve(reg)
                uses[final] = uses.get(final, 0) + count


def _rename_within_block(cg, copies: list, rename: dict, defs: dict, def_block: dict, param_loads) -> None:
    """The copies whose %a is read only between the copy and %b's next write, in the
    copy's block (where %b is written: nowhere else)."""
    sources = {instr.operands[1] for _, _, instr in copies}
    candidates = []
    for b, pos, instr in copies:
        dst, src = instr.operands
        if dst in rename or defs[dst] != 1 or dst in param_loads or src in rename or dst in sources \
                or src in rename.values() or def_block.get(src) != b:
            continue
        candidates.append((b, pos, dst, src))
    if not candidates:
        return
    watched_reads = {dst for _, _, dst, _ in candidates}
    watched_defs = {src for _, _, _, src in candidates}
    reads: dict = {}        # register -> [(block, position)]
    writes: dict = {}       # register -> [position] (its one block)
    for b, block in enumerate(cg.blocks):
        for pos, instr in enumerate(block.instrs):
            for reg in instr_uses(instr):
                if reg in watched_reads:
                    reads.setdefault(reg, []).append((b, pos))
            if instr.opcode == "inline.asm":     # (a `+` output is read too: conservatively both)
                for reg in instr.operands:
                    if reg.__class__ is VReg and reg in watched_reads:
                        reads.setdefault(reg, []).append((b, pos))
            for reg in instr_defs(instr):
                if reg in watched_defs:
                    writes.setdefault(reg, []).append(pos)
    for b, pos, dst, src in candidates:
        if dst in rename.values() or src in rename:
            continue
        later = [p for p in writes.get(src, ()) if p > pos]
        limit = min(later) if later else None
        if all(rb == b and rp > pos and (limit is None or rp <= limit) for rb, rp in reads.get(dst, ())):
            rename[dst] = src
