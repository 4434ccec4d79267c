"""fold_address_offsets: a constant added to an address goes into the access's offset.

    IADD3 d, a, 0x40, RZ ;  LDS r, [d]             ==>   LDS r, [a+0x40]
    IADD3 d.lo, P, a.lo, 0x10, RZ ;
    IADD3.X d.hi, a.hi, RZ, RZ, P, !PT ; LDG r, [d.64]   ==>   LDG r, [a.64+0x10]

Memory instructions encode a signed 24-bit offset beside the base register; ptxas
uses it for `p[i + k]` rather than computing each address.  The add then usually
dies (remove_dead_code).  Only registers written once take part, so the base the
access now reads holds at the access what it held at the add.

Expects: virtual registers, constants folded (fold_constants), 64-bit adds expanded.
Guarantees: the same addresses; adds no access needs any more are left for
remove_dead_code.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import Imm, Mem, Reg
from .vregs import unit_defs, units

MEMORY = frozenset("LDG STG LDS STS LDL STL LD ST ATOMG ATOMS ATOM RED".split())
OFFSET_BITS = 24


def fold_address_offsets(func) -> None:
    defs = unit_defs(func)
    for instr in func.instrs():
        if instr.op not in MEMORY:
            continue
        instr.srcs = [_folded(op, defs) if isinstance(op, Mem) else op for op in instr.srcs]


def _single(defs: dict, reg: Reg):
    """The instructions writing `reg` if each of its 32-bit units has exactly one writer."""
    if any(len(defs.get(u, [])) != 1 for u in units(reg)):
        return None
    return list({id(w): w for u in units(reg) for w in defs[u]}.values())


def _folded(mem: Mem, defs: dict) -> Mem:
    base = mem.base
    for _ in range(4):   # a chain of constant adds folds all the way down
        if base is None or not base.virtual or base.neg or base.inv or mem.ubase is not None:
            return mem
        found = _constant_add(base, defs)
        if found is None:
            return mem
        source, value = found
        offset = mem.offset + value
        if not -(1 << (OFFSET_BITS - 1)) <= offset < (1 << (OFFSET_BITS - 1)):
            return mem
        mem = replace(mem, base=replace(source, width=base.width), offset=offset)
        base = mem.base
    return mem


def _constant_add(base: Reg, defs: dict):
    """(source register, constant) if `base` is written once as source + constant."""
    writers = _single(defs, base)
    if writers is None:
        return None
    if base.width == 1:
        add = writers[0]
        if add.op != "IADD3" or add.mods or add.pred is not None or len(add.dsts) != 1:
            return None
        return _reg_plus_imm(add.srcs, defs)
    if base.width != 2 or len(writers) != 2:
        return None
    low = next((w for w in writers if w.dsts and w.dsts[0].key() == base.key()), None)
    high = next((w for w in writers if w is not low), None)
    if low is None or high is None or low.op != "IADD3" or high.op != "IADD3" or low.mods or high.mods != ("X",):
        return None
    if low.pred is not None or high.pred is not None or len(low.dsts) != 2:
        return None
    found = _reg_plus_imm(low.srcs, defs)
    if found is None:
        return None
    source, value = found
    a_hi, b_hi, c_hi, carry, _ = high.srcs
    if not (isinstance(a_hi, Reg) and a_hi.virtual and a_hi.num == source.num + 1 and not a_hi.neg and not a_hi.inv):
        return None
    if not (isinstance(carry, Reg) and carry.key() == low.dsts[1].key()):
        return None
    extension = 0xFFFFFFFF if value < 0 else 0
    if not (_zero_or(b_hi, extension) and _zero_or(c_hi, 0)):
        return None
    if len(_single(defs, replace(source, width=2)) or []) == 0:
        return None
    return replace(source, width=2), value


def _reg_plus_imm(srcs, defs: dict):
    regs = [op for op in srcs if isinstance(op, Reg) and not op.is_zero]
    imms = [op for op in srcs if isinstance(op, Imm) and op.kind == "int"]
    zeros = [op for op in srcs if isinstance(op, Reg) and op.is_zero]
    if len(regs) != 1 or len(imms) != 1 or len(zeros) != 1:
        return None
    source = regs[0]
    if not source.virtual or source.neg or source.inv or _single(defs, source) is None:
        return None
    bits = imms[0].bits
    value = bits - (1 << 32) if bits & 0x80000000 else bits
    return source, value


def _zero_or(op, bits: int) -> bool:
    if isinstance(op, Reg):
        return op.is_zero and bits == 0
    return isinstance(op, Imm) and op.kind == "int" and op.bits == bits
