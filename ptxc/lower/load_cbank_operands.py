"""load_cbank_operands: on sm_90, constant-bank values reach instructions through LDC.

ptxas's sm_90 code never names `c[bank][offset]` as an operand of an arithmetic,
compare or move instruction: parameters, blockDim, the stack base and module
constants are loaded with `LDC` (`LDC.64` for a pair) into a register first
(`LDC.64 R2, c[0x0][0x210]` then `IMAD.WIDE R2, R9, 0x4, R2`), and the instruction
table learned from its code has (almost) no such forms.  Up to here the passes fold
constant-bank values into operands as on sm_89 (vregs.encodable counts a bank operand
as a register on these targets), so they stay short-lived; this pass turns each into a
register again:

- `MOV Rd, c[b][o]` (what a bare parameter load or the prologue's stack pointer is)
  becomes `LDC Rd, c[b][o]` itself;
- any other source `c[b][o]` becomes a virtual register loaded by `LDC` at its first
  use in the block; later uses in the same block read that register.  Its width is
  what the instruction reads in that slot (the table's form), `LDC.64` for two.

LDC and ULDC themselves, and indexed banks (`c[0x3][R8]`, only LDC reads those), are
left alone.  On other targets the pass does nothing.

Expects: SASS IR before order_instrs (virtual registers may remain).
Guarantees: on sm_90, no instruction other than LDC/ULDC reads a constant bank.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import CBank, Instr, Reg
from ..sass.table import load, matching_forms
from ..sass.target import target
from .vregs import CBANK_LOADS

MOVES = {"MOV", "IMAD.MOV.U32", "IMAD.MOV"}


def load_cbank_operands(func) -> None:
    if not target(func.arch).cbank_via_ldc:
        return
    table = load(func.arch)
    for block in func.blocks:
        loaded: dict = {}                 # (bank, offset, width) -> the register holding it
        out = []
        for instr in block.instrs:
            if instr.op in CBANK_LOADS or not any(_plain_cbank(op) for op in instr.srcs):
                out.append(instr)
                continue
            if instr.name in MOVES and len(instr.dsts) == 1 and isinstance(instr.dsts[0], Reg):
                bank = next(op for op in instr.srcs if _plain_cbank(op))
                if not (bank.neg or bank.abs):
                    dst = instr.dsts[0]
                    out.append(Instr("LDC", ("64",) if dst.width == 2 else (), [dst], [bank], instr.pred,
                                     comment=instr.comment))
                    continue
            for k, op in enumerate(instr.srcs):
                if not _plain_cbank(op):
                    continue
                width = slot_width(table, instr, k)
                key = (op.bank, op.offset, width)
                reg = loaded.get(key)
                if reg is None:
                    reg = loaded[key] = func.new_vreg("R", width)
                    out.append(Instr("LDC", ("64",) if width == 2 else (), [reg], [CBank(op.bank, op.offset)],
                                     comment=f"c[{op.bank:#x}][{op.offset:#x}] (sm_90: through LDC)"))
                instr.srcs[k] = replace(reg, neg=op.neg, abs=op.abs)
            out.append(instr)
        block.instrs = out


def _plain_cbank(op) -> bool:
    return isinstance(op, CBank) and op.index is None


def slot_width(table, instr: Instr, k: int) -> int:
    """Registers the instruction reads in source slot k if a register stood there
    (the width the table's matching form gives that operand)."""
    probe = Reg("R", 2)
    srcs = list(instr.srcs)
    srcs[k] = probe
    trial = Instr(instr.op, instr.mods, [_probe(o) for o in instr.dsts], [_probe(o) if j != k else probe
                                                                           for j, o in enumerate(srcs)], None)
    for form, _values, operands in matching_forms(table, trial):
        for spec, op in zip(form.operands, operands):
            if op is probe:
                return spec.width_for(instr.name)
    return 1


def _probe(op):
    """A virtual register as some physical one of its file and width (the table's
    forms are physical); constant banks elsewhere as registers too."""
    if isinstance(op, Reg) and op.virtual:
        return replace(op, num={1: 2, 2: 2, 4: 4}.get(op.width, 2) if op.file == "R" else 0, virtual=False)
    if _plain_cbank(op):
        return Reg("R", 2)
    return op
