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
_opcode_of = attrgetter("opcode")


def _memory_users(block: Block, reg: VReg) -> int:
    """How many loads/stores in the block address memory through reg (directly or through
    one add.s64 of it)."""
    derived = {reg}
    opcodes = list(map(_opcode_of, block.instrs))
    # (the add.s64s and the memory accesses picked in C: the block is scanned once per
    # parameter, most of its instructions are neither)
    for instr in compress(block.instrs, map(_ADD_S64.__eq__, opcodes)):
        if any(op.__class__ is VReg and op in derived for op in instr.operands[1:]):
            derived.add(instr.operands[0])
    count = 0
    for instr in compress(block.instrs, map(_MEMORY_ACCESS.__getitem__, opcodes)):
        for op in instr.operands:
            if op.__class__ is ir.Address and op.base.__class__ is VReg and op.base in derived:
                count += 1
    return count


def place_cvta(cg, func: ir.Function) -> None:
    """Merge the cvta.to.global conversions of each kernel pointer parameter to one per
    block and put them where NVVM does (measured against nvcc 13.5, docs/frontend.md):
    in the entry block, at its top, after the parameter loads, in reverse order of first
    use; in other blocks the same when some parameter is used for more than one memory
    access there, else each right before its first use."""
    for bindex, block in enumerate(cg.blocks):
        first: dict = {}   # param reg -> the cvta kept
        rename: dict = {}
        order: list = []
        for instr in block.instrs:
            if instr.opcode == "cvta.to.global.u64" and instr.operands[1] in cg.kernel_pointers:
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
                if i.opcode == "cvta.to.global.u64" and i.operands[0] in rename:
                    if uses is not None:    # (its reads are gone)
                        for reg in instr_uses(i):
                            uses[reg] -= 1
                else:
                    kept.append(i)
            block.instrs = kept
            for other in cg.blocks:
                for instr in other.instrs:
                    _rename_operands(instr, rename, uses)
        hoist = bindex == 0 or any(_memory_users(block, i.operands[0]) > 1 for i in order)
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


def _rename_operands(instr: ir.Instr, rename: dict, uses: dict | None) -> None:
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
