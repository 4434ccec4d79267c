"""Decode 16-byte SASS words into IR instructions with the architecture's table.

The opcode (low 12 bits) picks candidate forms, the most specific first; the first whose
fixed bits match and whose modifier fields hold known values gives the instruction:
physical registers (with their widths), the guard, and the control word.  A word no form
explains decodes to op "UNKNOWN" carrying the raw word, which prints as such and encodes
back unchanged; so does a word holding a combination of modifiers and operand flags the
form records as `illegal` (never confirmed by nvdisasm): the emulator stops on it rather
than guess what the hardware would do.
"""
from __future__ import annotations

from .ir import ZERO_REG, Control, Imm, Instr, Reg, SpecialReg, Target
from .table import CTRL_SHIFT, Form, ModField, OperandSpec, Table, alias_for, load, make_cbank, make_mem, make_reg


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
    values = {}
    for i, slot in enumerate(form.slots):
        if isinstance(slot, ModField):
            values[i] = slot.field.raw(word)
            tokens = slot.values.get(values[i])
            if tokens is None:
                return None
            mods += tokens
        else:
            mods.append(slot)
    operands = []
    for spec in form.operands:
        op = decode_operand(spec, word, addr, (form.op, *mods), values)
        if op is None:
            return None
        operands.append(op)
    if form.illegal and form.refused(values, operands) is not None:
        return None    # a combination nvdisasm refuses: not this form's word
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


def _part(spec: OperandSpec, part: str, word: int, values: dict, default=None):
    """A part of an operand: its field's value (named through `enums` if it has names),
    else the form's constant, else `default`.  None for a name the table does not have."""
    if part in spec.fields:
        value = spec.fields[part].raw(word)
        return spec.names(part, values).get(value) if part in spec.enums else value
    return spec.const.get(part, default)


def decode_operand(spec: OperandSpec, word: int, addr: int, mods: tuple, values: dict):
    """One operand; `mods` is the mnemonic (op and modifier tokens), `values` the form's
    modifier field values (some operands print by them)."""
    f = spec.fields
    name = ".".join(mods)
    if spec.kind == "reg":
        num, sel = _part(spec, "num", word, values), _part(spec, "sel", word, values, "")
        if num is None or sel is None:
            return None
        return make_reg(spec.file, num, spec.width_for(name), sel=sel, **_flags(spec, word))
    if spec.kind == "cbank":
        flags = _flags(spec, word)
        index = Reg(spec.index_file, f["index"].raw(word)) if "index" in f else None
        return make_cbank(f["bank"].raw(word), f["offset"].get(word), flags["neg"], flags["abs"], index, flags["inv"])
    if spec.kind == "imm":
        return Imm(f["value"].raw(word))
    if spec.kind == "fimm":
        return Imm(f["fbits"].raw(word), spec.float)
    if spec.kind == "mem":
        base, scale = _part(spec, "base", word, values, ZERO_REG["R"]), _part(spec, "scale", word, values, "")
        wide = bool(_part(spec, "base64", word, values, False))
        ubase = _part(spec, "ubase", word, values)
        if scale is None:
            return None
        desc = Reg("UR", f["desc"].raw(word), width=2) if "desc" in f else None
        return make_mem(make_reg("R", base, 2 if wide else 1, sel=scale), f["offset"].get(word) if "offset" in f else 0,
                        None if ubase is None else Reg("UR", ubase), desc)
    if spec.kind == "sreg":
        sreg = _part(spec, "name", word, values)
        return SpecialReg(sreg) if sreg else None
    if spec.kind == "target":
        return Target(addr=addr + f["target"].get(word))
    return None
