"""Decode 16-byte SASS words into IR instructions with the architecture's table.

The opcode (low 12 bits) picks candidate forms, the most specific first; the first whose
fixed bits match and whose modifier fields hold known values gives the instruction:
physical registers (with their widths), the guard, and the control word.  A word no form
explains decodes to op "UNKNOWN" carrying the raw word, which prints as such and encodes
back unchanged.
"""
from __future__ import annotations

from .ir import Control, Imm, Instr, Mem, Reg, SpecialReg, Target
from .table import CTRL_SHIFT, Form, ModField, OperandSpec, Table, alias_for, load, make_cbank


class DecodeError(ValueError):
    """A word that cannot be decoded (only raised by decode_strict)."""


def decode(word: bytes, addr: int = 0, table: Table | None = None) -> Instr:
    """One instruction from its 16 bytes at `addr`; never raises for unknown encodings."""
    table = table or load()
    value = int.from_bytes(word[:16], "little")
    for form in table.decode_candidates(value):
        instr = decode_form(form, value, addr)
        if instr is not None:
            return instr
    return Instr("UNKNOWN", srcs=[Imm(value)], ctrl=Control.unpack(value >> CTRL_SHIFT),
                 comment="no form in the table")


def decode_strict(word: bytes, addr: int = 0, table: Table | None = None) -> Instr:
    instr = decode(word, addr, table)
    if instr.op == "UNKNOWN":
        raise DecodeError(f"unknown encoding {int.from_bytes(word[:16], 'little'):#034x} at {addr:#x}")
    return instr


def decode_all(code: bytes, base: int = 0, table: Table | None = None) -> list[tuple[int, Instr]]:
    """[(addr, Instr)] for a .text section."""
    return [(base + i, decode(code[i:i + 16], base + i, table)) for i in range(0, len(code) - 15, 16)]


def decode_form(form: Form, word: int, addr: int) -> Instr | None:
    mods: list = []
    for slot in form.slots:
        if isinstance(slot, ModField):
            tokens = slot.values.get(slot.field.raw(word))
            if tokens is None:
                return None
            mods += tokens
        else:
            mods.append(slot)
    operands = []
    for spec in form.operands:
        op = decode_operand(spec, word, addr, tuple(mods))
        if op is None:
            return None
        operands.append(op)
    token = alias_for(form, operands)
    if token:
        mods.insert(0, token)
    pred = None
    if form.guard_num is not None:
        num, inv = form.guard_num.raw(word), bool(form.guard_inv.raw(word))
        if num != 7 or inv:
            pred = Reg(form.guard_file, num, inv=inv)
    n = form.ndsts()
    return Instr(form.op, tuple(mods), operands[:n], operands[n:], pred, Control.unpack(word >> CTRL_SHIFT))


def _flags(spec: OperandSpec, word: int) -> dict:
    return {flag: flag in spec.fixed_flags or (flag in spec.fields and bool(spec.fields[flag].raw(word)))
            for flag in ("neg", "abs", "inv")}


def decode_operand(spec: OperandSpec, word: int, addr: int, mods: tuple):
    f = spec.fields
    if spec.kind == "reg":
        num = spec.fixed if spec.fixed is not None else f["num"].raw(word)
        return Reg(spec.file, num, width=spec.width_for(mods), **_flags(spec, word))
    if spec.kind == "cbank":
        return make_cbank(f["bank"].raw(word), f["offset"].get(word), **_flags(spec, word))
    if spec.kind == "imm":
        return Imm(f["value"].raw(word))
    if spec.kind == "fimm":
        return Imm(f["fbits"].raw(word), "f32")
    if spec.kind == "mem":
        base = None if spec.no_base else Reg("R", f["base"].raw(word), width=2 if spec.base64 else 1)
        ubase = Reg("UR", f["ubase"].raw(word)) if "ubase" in f else (
            Reg("UR", spec.fixed_ubase) if spec.fixed_ubase is not None else None)
        return Mem(base, f["offset"].get(word) if "offset" in f else 0, ubase)
    if spec.kind == "sreg":
        name = spec.names.get(f["name"].raw(word))
        return SpecialReg(name) if name else None
    if spec.kind == "target":
        return Target(addr=addr + f["target"].get(word))
    return None
