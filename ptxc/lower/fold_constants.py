"""fold_constants: put constant-bank values and immediates straight into operands.

A value loaded by `MOV v, c[0x0][0x160]` (a parameter) or `MOV v, imm` is folded
into each instruction that can encode it: sm_89 ALU instructions take one
non-register source, in the second slot (or the third of a three-source op).  When
two sources want it (IMAD.WIDE d, i, 0x4, c[0x0][0x160] after fusion) the constant
bank wins and the immediate moves into a register set by one shared `MOV`, as ptxas
does (`MOV R7, 0x4` serves all three IMAD.WIDE of vadd).  Commutative operations
swap a constant out of the first slot; ISETP swaps and mirrors its comparison.

Expects: virtual registers; constants defined by single MOVs.
Guarantees: same values; MOVs whose results are no longer read are deleted.
"""
from __future__ import annotations

from ..sass.ir import CBank, Imm, Instr, Reg
from .vregs import defs, uses

# Source slots that may hold the one constant operand, by opcode (sm_89 ALU forms:
# R,R,R / R,imm,R / R,c,R / R,R,imm / R,R,c).  IADD.64 is the pseudo 64-bit add.
CONSTANT_SLOTS = {"IMAD": (1, 2), "IADD3": (1, 2), "FFMA": (1, 2), "FADD": (1,), "FMUL": (1,),
                  "ISETP": (1,), "FSETP": (1,), "IADD": (0, 1), "MOV": (0,)}
COMMUTATIVE = {"IMAD": (0, 1), "IADD3": (0, 1), "FADD": (0, 1), "FMUL": (0, 1), "FFMA": (0, 1)}
MIRRORED = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE"}


def _is_constant(op) -> bool:
    return isinstance(op, (CBank, Imm))


def fold_constants(func) -> None:
    constants = _constant_values(func)
    for block in func.blocks:
        materialized: dict = {}
        new_instrs = []
        for instr in block.instrs:
            new_instrs += _fold(func, instr, constants, materialized)
        block.instrs = new_instrs
    _remove_dead_moves(func, constants)


def _constant_values(func) -> dict:
    definitions = defs(func)
    constants = {}
    for instr in func.instrs():
        if (instr.op == "MOV" and instr.pred is None and _is_constant(instr.srcs[0])
                and len(definitions.get(instr.dsts[0].key(), [])) == 1):
            constants[instr.dsts[0].key()] = (instr.srcs[0], instr.dsts[0].width)
    return constants


def _constant_of(op, constants, width_ok):
    if isinstance(op, Reg) and not op.neg and not op.abs and op.key() in constants:
        value, width = constants[op.key()]
        if width_ok(width):
            return value
    return None


def _slot_width(instr: Instr, slot: int) -> int:
    if instr.op == "IMAD" and "WIDE" in instr.mods and slot == 2:
        return 2
    if instr.op in ("IADD",) or (instr.op == "MOV" and instr.dsts[0].width == 2):
        return 2
    return 1


def _fold(func, instr: Instr, constants, materialized) -> list[Instr]:
    slots = CONSTANT_SLOTS.get(instr.op)
    if slots is None:
        return [instr]
    srcs = list(instr.srcs)
    candidates = {k: _constant_of(src, constants, lambda w, k=k: w == _slot_width(instr, k))
                  for k, src in enumerate(srcs)}
    candidates = {k: v for k, v in candidates.items() if v is not None}
    if not candidates:
        return [instr]
    # Move a constant out of slot 0 of a commutative op (or mirror a compare).
    if 0 in candidates and 0 not in slots:
        swap = COMMUTATIVE.get(instr.op)
        if swap is None and instr.op == "ISETP" and not _is_constant(srcs[1]):
            swap = (0, 1)
            instr.mods = (MIRRORED[instr.mods[0]],) + instr.mods[1:]
        if swap is None or _is_constant(srcs[swap[1]]):
            candidates.pop(0)
        else:
            srcs[0], srcs[1] = srcs[1], srcs[0]
            candidates[1] = candidates.pop(0)
            candidates.pop(0, None)
    prelude = []
    present = [k for k, s in enumerate(srcs) if _is_constant(s)]
    for slot in sorted(candidates, key=lambda k: not isinstance(candidates[k], CBank)):
        if slot not in slots:
            continue
        if present and present != [slot]:
            if not isinstance(candidates[slot], CBank):
                continue
            # The constant bank wins the one slot; the immediate goes into a register.
            for k in present:
                reg, mov = _materialize(func, srcs[k], materialized)
                srcs[k] = reg
                prelude += [mov] if mov else []
            present = []
        srcs[slot] = candidates[slot]
        present = [slot]
    instr.srcs = srcs
    return prelude + [instr]


def _materialize(func, imm, materialized):
    """A register holding `imm`, one MOV per block and value."""
    key = (type(imm), imm)
    if key in materialized:
        return materialized[key], None
    reg = func.new_vreg("R")
    materialized[key] = reg
    return reg, Instr("MOV", (), [reg], [imm], comment="immediate for an operand slot")


def _remove_dead_moves(func, constants) -> None:
    while True:
        readers = uses(func)
        removed = False
        for block in func.blocks:
            kept = [i for i in block.instrs
                    if not (i.op == "MOV" and i.dsts[0].key() in constants and i.dsts[0].key() not in readers)]
            removed |= len(kept) != len(block.instrs)
            block.instrs = kept
        if not removed:
            return
