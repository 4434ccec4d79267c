"""Encode SASS IR instructions into 16-byte words with the architecture's table.

`encode(instr, addr)` finds the form whose mnemonic, modifiers and operand kinds match
(ptxc.sass.table), starts from its template (opcode bits and the bits nothing prints, as
ptxas sets them), stores each field, and puts the control word in bits 105..125.
Branch targets are PC-relative: the field holds target - (addr + 16).
"""
from __future__ import annotations

from .ir import ZERO_REG, Instr, Reg
from .printer import format_ir
from .table import (CTRL_MASK, CTRL_SHIFT, DEFAULT_DESC, Form, OperandSpec, Table, TableError, alias_holds, cbank_index,
                    load, matching_forms, mem_desc, operand_kinds, reg_sel)


class EncodeError(TableError):
    """The instruction has no encoding in the table (or a value does not fit)."""


def encode(instr: Instr, addr: int = 0, table: Table | None = None) -> bytes:
    """The 16 little-endian bytes of one instruction placed at `addr`."""
    table = table or load()
    if instr.op == "UNKNOWN":  # a word the decoder did not know: give it back unchanged
        word = instr.srcs[0].bits & ~CTRL_MASK | instr.ctrl.pack() << CTRL_SHIFT
        return word.to_bytes(16, "little")
    for op in instr.operands + ([instr.pred] if instr.pred else []):
        if isinstance(op, Reg):
            virtual = op.virtual
        else:
            virtual = any(r is not None and r.virtual
                          for r in (getattr(op, "base", None), getattr(op, "ubase", None), cbank_index(op)))
        if virtual:
            raise EncodeError(f"virtual register in {format_ir(instr)}: registers are allocated before encoding")
    errors = []
    for form, values, operands in matching_forms(table, instr):
        try:
            return encode_form(form, values, instr, addr, operands).to_bytes(16, "little")
        except TableError as e:
            errors.append(f"{form.name}: {e}")
    if not table.encode_candidates(instr):
        raise EncodeError(f"no {table.arch} form for {instr.name} with operands "
                          f"{','.join(operand_kinds(instr.operands))}: {format_ir(instr)}")
    raise EncodeError(f"cannot encode {format_ir(instr)}: " + ("; ".join(errors) or
                      "its modifiers or operand shapes match no form"))


def encode_all(instrs, base: int = 0, table: Table | None = None) -> bytes:
    """Instructions laid out one after another from address `base`."""
    return b"".join(encode(instr, base + 16 * i, table) for i, instr in enumerate(instrs))


def encode_form(form: Form, values: dict, instr: Instr, addr: int, operands: list) -> int:
    key = tuple(values.items())
    word = form.slot_words.get(key)
    if word is None:
        word = form.template
        for i, value in values.items():
            word = form.slots[i].field.put(word, value)
        form.slot_words[key] = word
    if instr.mods and instr.mods[0] in form.alias_tokens:
        rule = dict(form.aliases)[instr.mods[0]]
        if not alias_holds(rule, operands):
            raise EncodeError(f"{instr.name}: nvdisasm prints {instr.mods[0]} only for "
                              f"operands matching {rule}")
    pred = instr.pred
    if form.guard_num is not None:
        word = form.guard_num.put(word, 7 if pred is None else pred.num)
        word = form.guard_inv.put(word, int(pred is not None and pred.inv))
    elif pred is not None:
        raise EncodeError(f"{form.name} takes no guard predicate")
    if form.illegal:
        combo = form.refused(values, operands)
        if combo is not None:
            raise EncodeError(f"{instr.name}: never confirmed by nvdisasm, which refuses {form.describe(combo)}")
    for spec, op in zip(form.operands, operands):
        word = encode_operand(word, spec, op, addr, values)
    return word | instr.ctrl.pack() << CTRL_SHIFT


def _flags(word: int, spec: OperandSpec, op) -> int:
    for flag, field in spec.flag_fields:
        word = field.put(word, int(bool(getattr(op, flag, False))))
    return word


def _put_part(word: int, spec: OperandSpec, part: str, value, values: dict | None = None) -> int:
    """Store a part: a number, or a name through the field's `enums`; parts the form
    holds as constants were checked by operand_fits."""
    if part not in spec.fields:
        return word
    if part in spec.enums:
        value = next(v for v, text in spec.names(part, values or {}).items() if text == value)
    return spec.fields[part].put(word, value)


def encode_operand(word: int, spec: OperandSpec, op, addr: int, values: dict | None = None) -> int:
    f = spec.fields
    word = _flags(word, spec, op)
    if spec.kind == "reg":
        word = _put_part(word, spec, "num", op.num)
        if "sel" in f:              # (_put_part leaves the word as it is without the field)
            word = _put_part(word, spec, "sel", reg_sel(op), values)
        return word
    if spec.kind == "cbank":
        index = cbank_index(op)
        word = _put_part(word, spec, "index", ZERO_REG[spec.index_file] if index is None else index.num)
        return f["offset"].put(f["bank"].put(word, op.bank), op.offset)
    if spec.kind == "imm":
        return f["value"].put(word, op.bits)
    if spec.kind == "fimm":
        return f["fbits"].put(word, op.bits)
    if spec.kind == "mem":
        base = op.base if op.base is not None else Reg("R", ZERO_REG["R"])
        word = _put_part(word, spec, "base", base.num)
        word = _put_part(word, spec, "scale", reg_sel(base), values)
        word = _put_part(word, spec, "base64", int(base.width == 2))
        if op.ubase is not None:
            word = _put_part(word, spec, "ubase", op.ubase.num)
        desc = mem_desc(op)
        word = _put_part(word, spec, "desc", DEFAULT_DESC if desc is None else desc.num)
        if "offset" in f:
            word = f["offset"].put(word, op.offset)
        elif op.offset:
            raise EncodeError("this form has no address offset")
        return word
    if spec.kind == "sreg":
        return _put_part(word, spec, "name", op.name, values)
    if spec.kind == "target":
        if op.addr is None:
            raise EncodeError(f"branch target {op.label!r} has no address yet")
        return f["target"].put(word, op.addr - addr)
    raise EncodeError(f"unknown operand kind {spec.kind}")
