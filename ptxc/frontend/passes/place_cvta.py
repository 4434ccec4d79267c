"""place_cvta: one `cvta.to.global` per kernel pointer parameter and block, where NVVM puts it.

Codegen converts a pointer parameter wherever it is dereferenced.  Measured against
nvcc 13.5 (docs/frontend.md): in the entry block the conversions go to the top, after
the parameter loads (and the frame's %SPL/%SP), in reverse order of first use; in
another block the same when some parameter serves more than one memory access there,
else each sits right before its first use.  Expects: the conversions' sources are the
`ld.param` registers (cg.kernel_pointers).  Guarantees: a block's duplicate
conversions are merged into its first (uses renamed everywhere, `cg.uses` kept true).
"""
from __future__ import annotations

from itertools import compress
from operator import attrgetter

from ...ptx import ir
from ..vir import BASE, Block, OpcodeTable, VReg, instr_uses

_MEMORY_ACCESS = OpcodeTable(lambda opcode: BASE[opcode] in ("ld", "st", "atom", "red"))
_ADD_S64 = "add.s64"
_CVTA = "cvta.to.global.u64"
_opcode_of = attrgetter("opcode")


def _shared_pointer(block: Block, roots: list) -> bool:
    """Does some register of `roots` address memory in more than one load/store of the
    block (directly or through add.s64s of it)?"""
    origin = {reg: (reg,) for reg in roots}     # register -> the roots it derives from
    opcodes = list(map(_opcode_of, block.instrs))
    # (the add.s64s and the memory accesses picked in C: most instructions are neither)
    for instr in compress(block.instrs, map(_ADD_S64.__eq__, opcodes)):
        ops = instr.operands
        found = [r for op in ops[1:] if op.__class__ is VReg and op in origin for r in origin[op]]
        if found:
            origin[ops[0]] = tuple(dict.fromkeys(origin.get(ops[0], ()) + tuple(found)))
    count = dict.fromkeys(roots, 0)
    for instr in compress(block.instrs, map(_MEMORY_ACCESS.__getitem__, opcodes)):
        for op in instr.operands:
            if op.__class__ is ir.Address and op.base.__class__ is VReg and op.base in origin:
                for root in origin[op.base]:
                    count[root] += 1
                    if count[root] > 1:
                        return True
    return False


def place_cvta(cg, func: ir.Function) -> None:
    """Merge the cvta.to.global conversions of each kernel pointer parameter to one per
    block and put them where NVVM does (measured against nvcc 13.5, docs/frontend.md):
    in the entry block, at its top, after the parameter loads, in reverse order of first
    use; in other blocks the same when some parameter is used for more than one memory
    access there, else each right before its first use."""
    if not cg.kernel_pointers:
        return      # (no pointer parameter: no conversion to place)
    elsewhere: dict = {}    # the merged conversions' results still read in some other block
    for bindex, block in enumerate(cg.blocks):
        if _CVTA not in map(_opcode_of, block.instrs):
            continue    # (most blocks, found in C)
        first: dict = {}   # param reg -> the cvta kept
        rename: dict = {}
        order: list = []
        for instr in block.instrs:
            if instr.opcode == _CVTA and instr.operands[1] in cg.kernel_pointers:
                src = instr.operands[1]
                if src in first:
                    rename[instr.operands[0]] = first[src].operands[0]
                else:
                    first[src] = instr
                    order.append(instr)
        if not order:
            continue
        if rename:
            uses = cg.uses
            kept = []
            for i in block.instrs:
                if i.opcode == _CVTA and i.operands[0] in rename:
                    if uses is not None:    # (its reads are gone)
                        for reg in instr_uses(i):
                            uses[reg] -= 1
                else:
                    kept.append(i)
            block.instrs = kept
            # The block's own reads now (its memory accesses are counted below), other
            # blocks' reads at the end -- none left to rename is the common case.
            _rename_reads([block], rename, uses)
            if uses is None or any(uses.get(reg) for reg in rename):
                elsewhere.update(rename)
        hoist = bindex == 0 or _shared_pointer(block, [i.operands[0] for i in order])
        if not hoist:
            continue
        hoisted = {id(i) for i in order}   # by identity: `in order` would compare dataclasses
        block.instrs = [i for i in block.instrs if id(i) not in hoisted]
        at = 0
        if bindex == 0:
            while at < len(block.instrs) and (block.instrs[at].opcode.startswith("ld.param")
                                              or (block.instrs[at].operands    # asm("...") has none
                                                  and isinstance(block.instrs[at].operands[0], ir.Reg))):
                at += 1  # past the parameter loads and the frame's %SPL/%SP
        block.instrs[at:at] = list(reversed(order))
    if elsewhere:
        _rename_reads(cg.blocks, elsewhere, cg.uses)


def _rename_reads(blocks: list, rename: dict, uses: dict | None) -> None:
    for block in blocks:
        for instr in block.instrs:
            ops = instr.operands
            for k, op in enumerate(ops):
                if isinstance(op, VReg) and op in rename:
                    ops[k] = _moved(op, rename, uses)
                elif isinstance(op, ir.Address) and op.base in rename:
                    ops[k] = ir.Address(_moved(op.base, rename, uses), op.offset)
            if instr.guard is not None and instr.guard in rename:
                instr.guard = _moved(instr.guard, rename, uses)


def _moved(reg: VReg, rename: dict, uses: dict | None) -> VReg:
    """The new name of one read of `reg` (the read counted there now)."""
    new = rename[reg]
    if uses is not None:
        uses[reg] -= 1
        uses[new] = uses.get(new, 0) + 1
    return new
