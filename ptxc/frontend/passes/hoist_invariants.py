"""hoist_invariants: loop-invariant computations move to the loop's preheader (LICM).

Codegen gives every loop an empty preheader block before its header and records the
loop's blocks (cg.loop_regions, inner loops first).  An instruction in a loop moves
to the end of the preheader when it has no side effects and is not a load, writes a
register that nothing else writes, and reads only registers defined outside the loop
(or by instructions already hoisted): pointer conversions (cvta), index scaling,
address arithmetic and the like, as LLVM's LICM leaves them.  Expects: vir blocks
before layout_blocks; cg.frozen (mathlib code) is not moved.  Guarantees: an
instruction moves only to a block that dominates it; its operands dominate that block.
"""
from __future__ import annotations

from ...ptx import ir
from ..vir import PURE_OPCODE, READS_FIRST, OpcodeTable, VReg, instr_defs, instr_uses, is_pure


def hoist_invariants(cg, func: ir.Function) -> None:
    if not cg.loop_regions:
        return
    def_count: dict = {}
    get = def_count.get
    for block in cg.blocks:
        for instr in block.instrs:
            # instr_defs(instr), its common case written out (a register result)
            ops = instr.operands
            if ops and type(ops[0]) is VReg and instr.opcode != "inline.asm":
                try:    # (a plain dict: subscripting an OpcodeTable, a dict subclass, costs twice as much)
                    reads_first = _READS_FIRST[instr.opcode]
                except KeyError:
                    reads_first = _READS_FIRST[instr.opcode] = READS_FIRST[instr.opcode]
                if not reads_first:
                    def_count[ops[0]] = get(ops[0], 0) + 1
                continue
            for reg in instr_defs(instr):
                def_count[reg] = get(reg, 0) + 1
    for preheader, blocks in cg.loop_regions:
        inside: set = set()
        for block in blocks:
            for instr in block.instrs:
                ops = instr.operands
                if ops and ops[0].__class__ is VReg and instr.opcode != "inline.asm":
                    if not READS_FIRST[instr.opcode]:
                        inside.add(ops[0])
                    continue
                inside.update(instr_defs(instr))
        hoisted = []
        for block in blocks:
            kept = []
            for instr in block.instrs:
                if _HOISTABLE[instr.opcode] and _invariant(instr, inside, def_count, cg):
                    hoisted.append(instr)
                    inside.discard(instr.operands[0])
                else:
                    kept.append(instr)
            block.instrs = kept
        if hoisted:
            term = preheader.terminator()
            at = len(preheader.instrs) - (1 if term is not None else 0)
            preheader.instrs[at:at] = hoisted


_READS_FIRST: dict = {}     # opcode -> READS_FIRST[opcode]

# Opcodes of instructions that may move out of a loop: pure ones, not loads.
_HOISTABLE = OpcodeTable(lambda opcode: PURE_OPCODE[opcode] and not opcode.startswith("ld"))


def _invariant(instr: ir.Instr, inside: set, def_count: dict, cg) -> bool:
    """(Its opcode is _HOISTABLE.)"""
    if instr.guard is not None or not is_pure(instr) or id(instr) in cg.frozen:
        return False
    dst = instr.operands[0]
    if dst.__class__ is not VReg or def_count.get(dst) != 1:
        return False
    return all(reg not in inside for reg in instr_uses(instr))
