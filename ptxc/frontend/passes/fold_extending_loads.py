"""fold_extending_loads: `ld.u8 %rs` + `cvt.u32.u8 %r, %rs` becomes `ld.u8 %r`.

LLVM's extending load: a byte or short loaded and then widened is loaded straight into
a 32-bit register.  Expects: `cg.uses`, unless None, counts every register's reads
(the 16-bit value must have no other use: checked with it).  Guarantees: the widening
keeps its signedness (`ld.s8` for a sign extension); `cg.uses` is not kept true.
"""
from __future__ import annotations

from ...ptx import ir
from ..vir import base_of, defines, use_counts


_EXTENSIONS = {"cvt.u32.u8": "u8", "cvt.s32.s8": "s8", "cvt.u32.u16": "u16", "cvt.s32.s16": "s16"}


def fold_extending_loads(cg, func: ir.Function) -> None:
    """ld.u8 %rs + cvt.u32.u8 %r, %rs -> ld.u8 %r (a zero- or sign-extending load into a
    32-bit register), when the 16-bit value has no other use: LLVM's extload."""
    if not cg.narrow_loads:
        return
    # (cg.uses counts every read here, kept true by the passes before; with inline asm
    # it over-counts the asm's outputs: counted afresh)
    counts = cg.uses if cg.uses is not None and not cg.has_asm else use_counts(cg)
    for block in cg.blocks:
        loads = {}
        out = []
        for instr in block.instrs:
            if base_of(instr.opcode) == "ld" and defines(instr) and instr.operands[0].cls == "rs":
                loads[instr.operands[0]] = instr
            ext = _EXTENSIONS.get(instr.opcode)
            if ext is not None:
                src = instr.operands[1]
                load = loads.get(src)
                if load is not None and counts.get(src) == 1 and load.parts[-1][1:] == ext[1:]:
                    load.opcode = ".".join(load.parts[:-1] + [ext])
                    load.operands[0] = instr.operands[0]
                    continue
            out.append(instr)
        block.instrs = out
