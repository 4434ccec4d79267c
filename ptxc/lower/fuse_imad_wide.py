"""fuse_imad_wide: `mul.wide` followed by a 64-bit `add` becomes one IMAD.WIDE.

    IMAD.WIDE t, a, b, RZ ;  IADD.64 d, x, t    ==>    IMAD.WIDE d, a, b, x

This is how ptxas forms `&p[i]` in one instruction.  Every IADD.64 that adds the
product is rewritten (vadd's one product feeds three adds); the product itself is
deleted once nothing reads it.

Expects: IMAD.WIDE with an RZ addend and IADD.64 pseudo-instructions (select_instrs).
Guarantees: same values; fewer instructions; no new registers.
"""
from __future__ import annotations

from ..sass.ir import Reg
from .vregs import defs, read_units, units


def _is_product(instr) -> bool:
    if not (instr.op == "IMAD" and "WIDE" in instr.mods and len(instr.srcs) == 3):
        return False
    addend = instr.srcs[2]
    return isinstance(addend, Reg) and addend.is_zero


def fuse_imad_wide(func) -> None:
    candidates = [instr for instr in func.instrs() if _is_product(instr)]
    if not candidates:
        return                     # no product to fuse (nor to remove)
    definitions = defs(func)
    products = {}
    for instr in candidates:
        if len(definitions.get(instr.dsts[0].key(), [])) == 1:
            products[instr.dsts[0].key()] = instr
    for block in func.blocks:
        for index, instr in enumerate(block.instrs):
            if not (instr.op == "IADD" and instr.mods == ("64",)):
                continue
            for which in (1, 0):
                src = instr.srcs[which]
                if isinstance(src, Reg) and src.key() in products and not src.neg:
                    product = products[src.key()]
                    other = instr.srcs[1 - which]
                    block.instrs[index] = type(instr)(
                        "IMAD", product.mods, list(instr.dsts), [product.srcs[0], product.srcs[1], other],
                        instr.pred, comment="fused mul.wide + add")
                    break
    remove_unused(func, products.values())


def remove_unused(func, candidates) -> None:
    """Delete instructions among `candidates` whose results nothing reads."""
    candidates = list(candidates)
    if not candidates:
        return                     # nothing to delete: skip collecting the reads
    readers = read_units(func)   # per 32-bit unit: the high half of a product may be read alone
    dead = {id(i) for i in candidates
            if all(u not in readers for d in i.dsts if isinstance(d, Reg) for u in units(d))}
    for block in func.blocks:
        block.instrs = [i for i in block.instrs if id(i) not in dead]
