"""sink_loads: loads that feed one instruction together move to just before it.

Outside the entry block, nvcc 13.5 issues the loads an instruction needs right before
it, in reverse source order (vadd loads b[i], then a[i], then adds); a lone load stays
where it is, and the entry block keeps source order.  Expects: vir blocks.
Guarantees: a load never moves past a store, atomic, barrier, fence or call, nor past
an earlier reader of its value, nor past a write of a register its address reads.
"""
from __future__ import annotations

from operator import attrgetter

from ...ptx import ir
from ..vir import BASE, OpcodeTable, VReg, instr_defs, instr_uses

_BARRIERS = frozenset({"st", "atom", "red", "bar", "barrier", "membar", "call", "inline"})
_BARRIER = OpcodeTable(lambda opcode: BASE[opcode] in _BARRIERS)
# A load that may move: not of a parameter, not volatile.
_MOVABLE_LOAD = OpcodeTable(lambda opcode: opcode.startswith("ld.") and ".param" not in opcode
                            and ".volatile" not in opcode)


def sink_loads(cg, func: ir.Function) -> None:
    if cg.loads < 2:
        return
    order = cg.load_order
    frozen = cg.frozen
    for block in cg.blocks[1:]:
        instrs = block.instrs
        if not _two_movable(instrs):
            continue
        pending: dict = {}      # value register of an unread load -> the load
        moves: dict = {}        # id(user) -> the loads to put before it
        moved: set = set()
        for instr in instrs:
            try:    # (a plain dict: subscripting an OpcodeTable, a dict subclass, costs twice as much)
                barrier, movable = _KIND[instr.opcode]
            except KeyError:
                barrier, movable = _KIND[instr.opcode] = _BARRIER[instr.opcode], _MOVABLE_LOAD[instr.opcode]
            if pending:     # (with no load pending, what the instruction reads finds none)
                found = []
                for reg in instr_uses(instr):
                    load = pending.pop(reg, None)
                    if load is not None and load not in found:
                        found.append(load)
                if len(found) >= 2:
                    found.sort(key=lambda ld: -order.get(id(ld), 0))
                    moves[id(instr)] = found
                    moved.update(id(ld) for ld in found)
            if barrier:
                pending.clear()
                continue
            if pending:
                for reg in instr_defs(instr):
                    pending.pop(reg, None)
                    for value, load in list(pending.items()):
                        if load.operands[1].base is reg:
                            del pending[value]
            if movable and instr.operands and type(instr.operands[0]) is VReg and id(instr) not in frozen:   # _movable(instr)
                pending[instr.operands[0]] = instr
        if moves:
            out = []
            for instr in instrs:
                if id(instr) in moved:
                    continue
                loads = moves.get(id(instr))
                if loads:
                    out.extend(loads)
                out.append(instr)
            block.instrs = out


_opcode_of = attrgetter("opcode")
_KIND: dict = {}    # opcode -> (_BARRIER[opcode], _MOVABLE_LOAD[opcode])


def _movable(instr: ir.Instr) -> bool:
    return _MOVABLE_LOAD[instr.opcode] and bool(instr.operands) and instr.operands[0].__class__ is VReg


def _two_movable(instrs: list) -> bool:
    """Are at least two of the instructions movable loads?"""
    if sum(map(_MOVABLE_LOAD.__getitem__, map(_opcode_of, instrs))) < 2:
        return False    # (by opcode alone, counted in C: most blocks)
    seen = False
    for instr in instrs:
        if _MOVABLE_LOAD[instr.opcode] and instr.operands and instr.operands[0].__class__ is VReg:
            if seen:
                return True
            seen = True
    return False
