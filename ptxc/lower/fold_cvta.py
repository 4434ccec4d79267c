"""fold_cvta: remove `cvta.to.global` by folding it into the addressing.

On sm_89 a global address and its generic address are the same 64-bit value (the
global window is identity-mapped), so ptxas drops the conversion: loads and stores
with the `.E` form take the generic pointer directly.

Expects: CVTA pseudo-instructions from select_instrs (dst defined once).
Guarantees: no CVTA remains; each use of a CVTA result reads its source instead, part
for part: a 32-bit use of the 64-bit result's low or high register (a `selp.b64` split in
halves) reads the source's low or high register (or constant-bank word), never the whole
64-bit source in a 32-bit slot.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import CBank, Reg
from .vregs import defs, substitute


def fold_cvta(func) -> None:
    definitions = defs(func)
    mapping = {}
    for block in func.blocks:
        kept = []
        for instr in block.instrs:
            if instr.op == "CVTA" and len(definitions.get(instr.dsts[0].key(), [])) == 1:
                dst, src = instr.dsts[0], instr.srcs[0]
                for part in range(dst.width):        # every register of the value, by its place
                    mapping[replace(dst, num=dst.num + part).key()] = _part(src, part)
                continue
            kept.append(instr)
        block.instrs = kept
    if not mapping:
        return
    resolved = _resolved(mapping)
    for block in func.blocks:
        for instr in block.instrs:
            instr.srcs = [substitute(op, resolved) for op in instr.srcs]


def _part(src, part: int):
    """The `part`-th 32-bit register of a value: the source itself for part 0 (a use of
    the whole value keeps its width, vregs.substitute), else the register or bank word
    `part` places above."""
    if part == 0:
        return src
    if isinstance(src, Reg):
        return replace(src, num=src.num + part, width=1)
    if isinstance(src, CBank) and src.index is None:
        return replace(src, offset=src.offset + 4 * part)
    raise NotImplementedError(f"fold_cvta: a part of the CVTA source {src!r}")


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
