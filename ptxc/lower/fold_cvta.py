"""fold_cvta: remove `cvta.to.global` by folding it into the addressing.

On sm_89 a global address and its generic address are the same 64-bit value (the
global window is identity-mapped), so ptxas drops the conversion: loads and stores
with the `.E` form take the generic pointer directly.

Expects: CVTA pseudo-instructions from select_instrs (dst defined once).
Guarantees: no CVTA remains; each use of a CVTA result reads its source instead.
"""
from __future__ import annotations

from .vregs import defs, substitute


def fold_cvta(func) -> None:
    definitions = defs(func)
    mapping = {}
    for block in func.blocks:
        kept = []
        for instr in block.instrs:
            if instr.op == "CVTA" and len(definitions.get(instr.dsts[0].key(), [])) == 1:
                mapping[instr.dsts[0].key()] = instr.srcs[0]
                continue
            kept.append(instr)
        block.instrs = kept
    if not mapping:
        return
    resolved = _resolved(mapping)
    for block in func.blocks:
        for instr in block.instrs:
            instr.srcs = [substitute(op, resolved) for op in instr.srcs]


def _resolved(mapping: dict) -> dict:
    """Follow chains (cvta of a cvta) to their end."""
    out = {}
    for key, value in mapping.items():
        seen = set()
        while hasattr(value, "key") and value.key() in mapping and value.key() not in seen:
            seen.add(value.key())
            value = mapping[value.key()]
        out[key] = value
    return out
