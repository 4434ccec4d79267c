"""number_registers: NVVM's register names; writes func.body and func.regs.

Per class (%p, %rs, %r, %rd, %f, %fd), from 1: first the values live across blocks
(defined in one block and used in another, or defined in several), in order of
definition, as LLVM's FunctionLoweringInfo creates their virtual registers before
instruction selection; then kernel parameters live across blocks, in parameter order;
then every other value in order of definition.  Expects: layout_blocks ran.
Guarantees: no vir.VReg is left; `.reg` lines come in NVVM's order.
"""
from __future__ import annotations

from itertools import filterfalse, islice

from ...ptx import ir
from ..vir import REG_DECL, REG_DECL_ORDER, VReg, instr_defs, instr_uses

Address, Vector = ir.Address, ir.Vector

# class -> [None, %r1, %r2, ...]: each register operand made once (ir.Reg is immutable).
_NUMBERED: dict = {cls: [None] for cls in REG_DECL}


def number_registers(cg, func: ir.Function) -> None:
    # Every register, in order of first sighting (the dict's order), with the block it
    # was first seen in; those seen in another block too are live across blocks.
    def_block: dict = {}
    cross: set = set()
    composite: list = []    # instructions with an address or vector operand (renamed apart)
    seen = def_block.setdefault     # seen(reg, block) -> the block reg was first seen in
    has_asm = cg.has_asm
    for bindex, block in enumerate(cg.blocks):
        for instr in block.instrs:
            # Every register the instruction names, in operand order, then its guard
            # (what instr_defs + instr_uses list, walked inline: this loop is hot).
            if has_asm and instr.opcode == "inline.asm":
                for reg in instr_defs(instr) + instr_uses(instr):
                    if seen(reg, bindex) != bindex:
                        cross.add(reg)
            else:
                for op in instr.operands:
                    cls = op.__class__
                    if cls is VReg:
                        if seen(op, bindex) != bindex:
                            cross.add(op)
                    elif cls is Address:
                        reg = op.base
                        if reg.__class__ is VReg:
                            if seen(reg, bindex) != bindex:
                                cross.add(reg)
                            if not composite or composite[-1] is not instr:
                                composite.append(instr)
                    elif cls is Vector:
                        if not composite or composite[-1] is not instr:
                            composite.append(instr)
                        for reg in op.elems:
                            if reg.__class__ is VReg and seen(reg, bindex) != bindex:
                                cross.add(reg)
            guard = instr.guard
            if guard is not None and seen(guard, bindex) != bindex:
                cross.add(guard)
    # (filter, sorted, groupby and zip run these per-register steps in C)
    param_loads = cg.param_loads
    crossing = list(filter(cross.__contains__, def_block))
    params = sorted(filter(param_loads.__contains__, crossing), key=param_loads.__getitem__)
    order = list(filterfalse(param_loads.__contains__, crossing))
    order += params
    order += filterfalse(cross.__contains__, def_block)
    counters = dict.fromkeys(REG_DECL, 0)
    by_class: dict = {cls: [] for cls in REG_DECL}
    for reg in order:
        by_class[reg.cls].append(reg)
    names: dict = {}
    for cls, regs in by_class.items():
        count = len(regs)
        numbered = _NUMBERED[cls]
        while len(numbered) <= count:
            numbered.append(ir.Reg(f"{REG_DECL[cls][1]}{len(numbered)}"))
        names.update(zip(regs, islice(numbered, 1, None)))
        counters[cls] = count
    for block in cg.blocks:
        for instr in block.instrs:
            ops = instr.operands
            # (one to four operands, most instructions, without a comprehension's call)
            if len(ops) == 3:
                a, b, c = ops
                if a.__class__ is VReg:
                    ops[0] = names[a]
                if b.__class__ is VReg:
                    ops[1] = names[b]
                if c.__class__ is VReg:
                    ops[2] = names[c]
            elif len(ops) == 2:
                a, b = ops
                if a.__class__ is VReg:
                    ops[0] = names[a]
                if b.__class__ is VReg:
                    ops[1] = names[b]
            elif len(ops) == 4:
                a, b, c, d = ops
                if a.__class__ is VReg:
                    ops[0] = names[a]
                if b.__class__ is VReg:
                    ops[1] = names[b]
                if c.__class__ is VReg:
                    ops[2] = names[c]
                if d.__class__ is VReg:
                    ops[3] = names[d]
            elif len(ops) == 1:
                if ops[0].__class__ is VReg:
                    ops[0] = names[ops[0]]
            else:
                ops[:] = [names[op] if op.__class__ is VReg else op for op in ops]
            if instr.guard is not None:
                instr.guard = names[instr.guard]
    for instr in composite:
        ops = instr.operands
        for k, op in enumerate(ops):
            cls = op.__class__
            if cls is Address:
                if op.base.__class__ is VReg:
                    ops[k] = Address(names[op.base], op.offset)
            elif cls is Vector:
                ops[k] = Vector(tuple(names.get(e, e) for e in op.elems))
    func.regs = [ir.RegDecl(REG_DECL[cls][0], REG_DECL[cls][1], counters[cls] + 1)
                 for cls in REG_DECL_ORDER if counters[cls]]
    body: list = []
    for block in cg.blocks:
        name = cg.block_names[block.label]
        if name in cg.branch_targets:
            body.append(ir.Label(name))
        body.extend(block.instrs)
    func.body = body
