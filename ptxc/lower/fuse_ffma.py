"""fuse_ffma: a multiply feeding an add becomes one fused multiply-add, where PTX allows.

    FMUL t, a, b ;  FADD d, t, c    ==>    FFMA d, a, b, c      (DMUL/DADD: DFMA,
                                                                 HMUL2/HADD2: HFMA2)

PTX lets the code generator contract `mul` and `add` (or `sub`) that carry no
explicit rounding modifier into an fma, and ptxas does: the results then differ
from a rounded multiply and add in the last place, so ptxc must contract exactly
where ptxas does to give the same bits.  select_instrs marks the multiplies and
adds that may contract (comment "contractible"), including the final multiply of
an approximate division; this pass fuses a marked multiply into a marked add in
the same block when the add is the product's only reader, nothing in between
rewrites the multiply's sources, both have the same guard and the same FTZ flag.
A subtracted product becomes a negated first factor.  Half precision fuses when the
add reads the product's halves as the multiply computed them: both f16x2 (no
selectors) or both f16 (`.H0_H0` everywhere), as ptxas fuses mul.f16 + add.f16.

Expects: select_instrs' output (virtual registers, contractible marks).
Guarantees: the values ptxas computes; one instruction less per fusion.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import Instr, Reg
from .vregs import read_units, units, regs_in

CONTRACT = "contractible"
FUSED = {"FMUL": ("FADD", "FFMA"), "DMUL": ("DADD", "DFMA"), "HMUL2": ("HADD2", "HFMA2")}
ADDS = {add for add, _ in FUSED.values()}


def fuse_ffma(func) -> None:
    if not any(i.op in FUSED and CONTRACT in i.comment for i in func.instrs()):
        return                     # no contractible multiply: nothing to fuse
    readers = _reader_counts(func)
    for block in func.blocks:
        products = {}   # unit key of a marked multiply's result -> (index, instr, units it reads)
        removed = set()
        for index, instr in enumerate(block.instrs):
            if instr.op in ADDS and CONTRACT in instr.comment:
                _try_fuse(block, index, instr, products, readers, removed)
            for d in instr.dsts:
                if isinstance(d, Reg):
                    for u in units(d):
                        products.pop(u, None)
            _forget_clobbered(products, instr, block)
            if instr.op in FUSED and CONTRACT in instr.comment and len(instr.dsts) == 1 and not any(
                    isinstance(op, Reg) and op.key() == instr.dsts[0].key() for op in instr.srcs):
                products[instr.dsts[0].key()] = (index, instr,
                                                 {u for op in instr.srcs for r in regs_in(op) for u in units(r)})
        block.instrs = [i for k, i in enumerate(block.instrs) if k not in removed]


def _reader_counts(func) -> dict:
    counts: dict = {}
    get = counts.get
    for instr in func.instrs():
        for op in instr.srcs:
            for reg in regs_in(op):
                for u in units(reg):
                    counts[u] = get(u, 0) + 1
        if instr.pred is not None:
            for reg in regs_in(instr.pred):
                for u in units(reg):
                    counts[u] = get(u, 0) + 1
    return counts


def _forget_clobbered(products: dict, instr: Instr, block) -> None:
    """A product whose sources this instruction rewrites can no longer move down to its add."""
    if not products:
        return
    written = {u for d in instr.dsts if isinstance(d, Reg) for u in units(d)}
    if not written:
        return
    for key, (_, _mul, read) in list(products.items()):
        if not read.isdisjoint(written):
            del products[key]


def _try_fuse(block, index: int, add: Instr, products: dict, readers: dict, removed: set) -> None:
    for slot in (0, 1):
        src = add.srcs[slot]
        if not isinstance(src, Reg) or src.abs or src.key() not in products or src.width != add.dsts[0].width:
            continue
        mul_index, mul, _read = products[src.key()]
        if FUSED[mul.op][0] != add.op or readers.get(src.key(), 0) != 1 or mul.pred != add.pred:
            continue
        if ("FTZ" in mul.mods) != ("FTZ" in add.mods) or set(add.mods) - {"FTZ"} or set(mul.mods) - {"FTZ"}:
            continue
        if any(getattr(op, "sel", "") != getattr(src, "sel", "") for op in mul.srcs):
            continue   # the add reads other halves than the multiply made
        a, b = mul.srcs
        if src.neg:
            a = replace(a, neg=not a.neg) if isinstance(a, Reg) else _negated(a)
            if a is None:
                continue
        other = add.srcs[1 - slot]
        block.instrs[index] = Instr(FUSED[mul.op][1], add.mods, list(add.dsts), [a, b, other], add.pred,
                                    comment="contracted mul + add")
        removed.add(mul_index)
        del products[src.key()]
        return


def _negated(op):
    from ..sass.ir import Imm
    if isinstance(op, Imm) and op.kind == "f32":
        return Imm(op.bits ^ 0x80000000, "f32")
    return None
