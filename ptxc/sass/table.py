"""Per-architecture SASS instruction tables: the data the encoder, decoder and printer share.

`load("sm_89")` reads ptxc/sass/sm_89.json (written by scripts/learn_sm89_table.py from
nvdisasm's answers; docs/instruction-table.md describes the format) once and indexes it:
by opcode bits for decoding, by (mnemonic, operand kinds) for encoding.  A form is one
encoding of one instruction: fixed opcode bits (`mask`/`value`), a template for the bits
nothing prints, named bit fields for the guard, the modifiers and each operand.
"""
from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .ir import CBank, Control, Imm, Instr, Mem, Reg, SpecialReg, Target, ZERO_REG

HERE = Path(__file__).resolve().parent
CTRL_SHIFT = 105
CTRL_MASK = ((1 << 21) - 1) << CTRL_SHIFT
# A scoreboard field is "neutral" at 7 (none); the others at 0.
NEUTRAL = {"stall": 0, "yield_bit": 0, "wbar": 7, "rbar": 7, "wait": 0, "reuse": 0}


class TableError(ValueError):
    """An instruction the table cannot encode (no form, a value out of a field's range)."""


@dataclass(frozen=True)
class Field:
    """Bits of the 128-bit word holding one number: pieces are (lo, width, shift), value
    bit `shift + i` living at word bit `lo + i`.  `signed` fields are two's complement over
    their top bit; the printed value is the field plus `bias` (PC-relative targets)."""
    pieces: tuple
    signed: bool = False
    bias: int = 0

    @property
    def top(self) -> int:
        return max(shift + width for _, width, shift in self.pieces)

    def raw(self, word: int) -> int:
        value = 0
        for lo, width, shift in self.pieces:
            value |= ((word >> lo) & ((1 << width) - 1)) << shift
        return value

    def get(self, word: int) -> int:
        value = self.raw(word)
        if self.signed and value >> (self.top - 1) & 1:
            value -= 1 << self.top
        return value + self.bias

    def put(self, word: int, value: int) -> int:
        """Store `value`: the field's bits, or a negative number in two's complement (an
        immediate -1 is 0xffffffff), plus the bias for PC-relative fields."""
        raw = value - self.bias
        low = -(1 << (self.top - 1))
        if not low <= raw < (1 << self.top):
            raise TableError(f"value {value:#x} does not fit a {self.top}-bit field")
        raw &= (1 << self.top) - 1
        kept = 0
        for lo, width, shift in self.pieces:
            mask = (1 << width) - 1
            word = (word & ~(mask << lo)) | (((raw >> shift) & mask) << lo)
            kept |= mask << shift
        if raw & ~kept:
            raise TableError(f"value {value:#x} has bits the field cannot hold (alignment?)")
        return word


def _field(d: dict | None) -> Field | None:
    if d is None:
        return None
    return Field(tuple(tuple(p) for p in d["bits"]), d.get("signed", False), d.get("bias", 0))


@dataclass
class ModField:
    """A modifier field: each value prints a tuple of tokens (maybe none)."""
    field: Field
    values: dict          # int -> tuple[str, ...]
    default: int


@dataclass
class OperandSpec:
    kind: str                      # reg cbank imm fimm mem sreg target
    role: str                      # dst / src
    fields: dict                   # part -> Field (num, neg, abs, inv, bank, offset, value, fbits, base, ...)
    file: str | None = None        # R P UR UP for registers
    fixed: int | None = None       # a register nothing encodes (always this number)
    fixed_flags: tuple = ()        # operand modifiers always present (-, |..|, !)
    names: dict | None = None      # sreg: value -> SR_ name
    base64: bool = False           # mem: prints [R2.64]
    no_base: bool = False
    fixed_ubase: int | None = None
    reuse: int | None = None       # bit of Control.reuse that marks this operand
    width: dict = field(default_factory=dict)  # modifier token ("" otherwise) -> width in registers
    sfx: str = ""
    omit_if_pt: bool = False       # nvdisasm does not print this predicate when it is PT

    def width_for(self, mods: tuple) -> int:
        for token, w in self.width.items():
            if token and token in mods:
                return w
        return self.width.get("", 1)


@dataclass
class Form:
    name: str
    op: str
    kinds: tuple
    mask: int
    value: int
    template: int
    guard_num: Field | None
    guard_inv: Field | None
    guard_file: str
    slots: list                    # str (fixed token) or ModField, in print order
    operands: list                 # OperandSpec, in print order
    aliases: list                  # (token, [ {operand index: condition} ... ])
    latency: str
    space_if: tuple                # control fields whose being set prints ' ;'
    example: str = ""

    @property
    def opcode(self) -> int:
        return self.value & 0xFFF

    @property
    def alias_tokens(self) -> set:
        return {token for token, _ in self.aliases}

    def ndsts(self) -> int:
        return sum(1 for o in self.operands if o.role == "dst")


@dataclass
class Table:
    arch: str
    forms: list
    control: dict
    by_opcode: dict = field(default_factory=dict)   # low 12 bits -> forms, most specific first
    by_key: dict = field(default_factory=dict)      # (op, kinds) -> [(form, omitted operand indices)]
    by_op: dict = field(default_factory=dict)       # op -> forms
    mods_cache: dict = field(default_factory=dict)  # (form name, mods) -> match_mods(...)

    def __post_init__(self):
        for form in self.forms:
            self.by_opcode.setdefault(form.opcode, []).append(form)
            self.by_op.setdefault(form.op, []).append(form)
            hideable = [j for j, o in enumerate(form.operands) if o.omit_if_pt]
            for r in range(len(hideable) + 1):  # an instruction may leave out a hidden PT
                for drop in itertools.combinations(hideable, r):
                    kinds = tuple(k for j, k in enumerate(form.kinds) if j not in drop)
                    self.by_key.setdefault((form.op, kinds), []).append((form, drop))
        for forms in self.by_opcode.values():
            forms.sort(key=lambda f: -bin(f.mask).count("1"))
        for candidates in self.by_key.values():  # a form that prints every operand first
            candidates.sort(key=lambda fd: len(fd[1]))

    def reuse_shown(self, ctrl: Control) -> bool:
        return all(getattr(ctrl, f) == v for f, v in self.control.get("reuse_shown_if", {}).items())

    def decode_candidates(self, word: int) -> list:
        return [f for f in self.by_opcode.get(word & 0xFFF, ()) if word & f.mask == f.value]

    def encode_candidates(self, instr: Instr) -> list:
        """[(form, operand indices the instruction leaves out because they are PT)]."""
        return self.by_key.get((instr.op, operand_kinds(instr.operands)), [])


def operand_kind(op) -> str:
    """The letter a form's `kinds` uses for an IR operand."""
    if isinstance(op, Reg):
        return op.file
    if isinstance(op, CBank):
        return "C"
    if isinstance(op, Imm):
        return "F" if op.kind == "f32" else "I"
    if isinstance(op, Mem):
        return "M"
    if isinstance(op, SpecialReg):
        return "S"
    if isinstance(op, Target):
        return "T"
    raise TableError(f"unknown operand {op!r}")


def operand_kinds(operands) -> tuple:
    return tuple(operand_kind(o) for o in operands)


def _operand(d: dict) -> OperandSpec:
    fields = {part: _field(f) for part, f in d["fields"].items() if "names" not in f}
    names = None
    for part, f in d["fields"].items():
        if "names" in f:
            fields[part] = _field(f)
            names = {int(k): v for k, v in f["names"].items()}
    return OperandSpec(
        kind=d["kind"], role=d["role"], fields=fields, file=d.get("file"), fixed=d.get("fixed"),
        fixed_flags=tuple(d.get("fixed_flags", ())), names=names, base64=d.get("base64", False),
        no_base=d.get("no_base", False), fixed_ubase=d.get("fixed_ubase"), reuse=d.get("reuse"),
        width=d.get("width", {}), sfx=d.get("sfx", ""), omit_if_pt=d.get("omit_if_pt", False))


def _form(d: dict) -> Form:
    mask, template = int(d["mask"], 16), int(d["template"], 16)
    slots = [s if isinstance(s, str) else
             ModField(_field(s), {int(k): tuple(v) for k, v in s["values"].items()}, s["default"])
             for s in d["mods"]]
    aliases = [(a["token"], [{int(k): c for k, c in alt.items()} for alt in a["when"]]) for a in d["aliases"]]
    return Form(
        name=d["name"], op=d["op"], kinds=tuple(d["kinds"].split(",")) if d["kinds"] else (),
        mask=mask, value=template & mask, template=template,
        guard_num=_field(d["guard"].get("num")), guard_inv=_field(d["guard"].get("inv")),
        guard_file=d["guard"].get("file", "P"),
        slots=slots, operands=[_operand(o) for o in d["operands"]], aliases=aliases,
        latency=d["latency"], space_if=tuple(d["space_before_semicolon_if"]), example=d.get("example") or "")


@lru_cache(maxsize=None)
def load(arch_or_path: str | Path = "sm_89") -> Table:
    """The table for an architecture ('sm_89') or from a JSON file, loaded once."""
    path = Path(arch_or_path)
    if path.suffix != ".json":
        path = HERE / f"{arch_or_path}.json"
        if not path.exists():
            raise TableError(f"no SASS instruction table for {arch_or_path} (only sm_89 so far)")
    data = json.loads(path.read_text())
    return Table(data["arch"], [_form(f) for f in data["forms"]], data["control"])


# ---------------------------------------------------------------------------------------
# Modifiers: matching an instruction's tokens to a form's slots.
# ---------------------------------------------------------------------------------------
def match_mods(slots: list, mods: tuple) -> dict | None:
    """Field values {slot index: value} that print exactly `mods`, preferring defaults;
    None if the form cannot print them."""
    best: list = []

    def walk(i: int, pos: int, chosen: dict):
        if best and best[0][0] == 0:
            return
        if i == len(slots):
            if pos == len(mods):
                cost = sum(v != slots[k].default for k, v in chosen.items())
                if not best or cost < best[0][0]:
                    best[:] = [(cost, dict(chosen))]
            return
        slot = slots[i]
        if isinstance(slot, str):
            if pos < len(mods) and mods[pos] == slot:
                walk(i + 1, pos + 1, chosen)
            return
        order = sorted(slot.values.items(), key=lambda kv: kv[0] != slot.default)
        for value, tokens in order:
            if tuple(mods[pos: pos + len(tokens)]) == tokens:
                chosen[i] = value
                walk(i + 1, pos + len(tokens), chosen)
                del chosen[i]

    walk(0, 0, {})
    return best[0][1] if best else None


def alias_holds(alternatives: list, operands: list) -> bool:
    """Whether an alias rule's conditions hold for these operands (IR values)."""
    return any(all(_condition(operands[j], cond) if j < len(operands) else False
                   for j, cond in alt.items()) for alt in alternatives)


def _condition(op, cond: str) -> bool:
    if cond == "zero":
        return isinstance(op, Reg) and op.is_zero
    if cond.startswith("imm="):
        return isinstance(op, Imm) and op.kind == "int" and op.bits == int(cond[4:])
    if cond == "pow2":
        return isinstance(op, Imm) and op.kind == "int" and 2 <= op.bits < 1 << 31 and not op.bits & (op.bits - 1)
    raise TableError(f"unknown alias condition {cond!r}")


def alias_for(form: Form, operands: list) -> str | None:
    for token, alternatives in form.aliases:
        if alias_holds(alternatives, operands):
            return token
    return None


def operand_fits(spec: OperandSpec, op) -> bool:
    """Whether an IR operand has the shape this operand of a form can hold (values are
    range-checked when encoding)."""
    for flag in ("neg", "abs", "inv"):
        has = bool(getattr(op, flag, False))
        if flag in spec.fixed_flags:
            if not has:
                return False
        elif has and flag not in spec.fields:
            return False
    if spec.kind == "reg":
        return not op.virtual and (spec.fixed is None or op.num == spec.fixed)
    if spec.kind == "mem":
        if (op.base is None) != spec.no_base:
            return False
        if op.ubase is None:
            return spec.fixed_ubase is None and "ubase" not in spec.fields
        return "ubase" in spec.fields or op.ubase.num == spec.fixed_ubase
    if spec.kind == "sreg":
        return op.name in spec.names.values()
    return True


def match_form(table: "Table", instr: Instr):
    """(form, {slot index: value}, operands) for the first form that can encode `instr`,
    or None."""
    return next(matching_forms(table, instr), None)


def matching_forms(table: "Table", instr: Instr):
    """Every (form, {slot index: value}, operands) whose modifiers and operand shapes fit
    `instr`; operands are the instruction's with any PT it left out put back.  A printing
    alias (IMAD.MOV) leading the modifiers is not part of the form's own."""
    for form, drop in table.encode_candidates(instr):
        mods = tuple(instr.mods)
        if mods and mods[0] in form.alias_tokens:
            mods = mods[1:]
        key = (form.name, mods)
        if key not in table.mods_cache:
            table.mods_cache[key] = match_mods(form.slots, mods)
        values = table.mods_cache[key]
        if values is None:
            continue
        operands = list(instr.operands)
        for j in drop:
            operands.insert(j, Reg(form.operands[j].file, ZERO_REG[form.operands[j].file]))
        if all(operand_fits(spec, op) for spec, op in zip(form.operands, operands)):
            yield form, values, operands


# ---------------------------------------------------------------------------------------
# Sample instructions, for checking the table against nvdisasm (tests, the learn script).
# ---------------------------------------------------------------------------------------
def random_instr(form: Form, rng: random.Random, addr: int = 0, ctrl: Control | None = None) -> Instr:
    """A random instruction of this form: registers and numbers anywhere in their fields,
    special values (RZ, 0, 1, powers of 2) often, each modifier field at its default or
    at a random value."""
    values = {}
    for i, slot in enumerate(form.slots):
        if not isinstance(slot, str):
            values[i] = slot.default if rng.random() < 0.5 else rng.choice(sorted(slot.values))
    mods = []
    for i, slot in enumerate(form.slots):
        mods += [slot] if isinstance(slot, str) else list(slot.values[values[i]])
    operands = [_random_operand(spec, rng, tuple(mods), addr) for spec in form.operands]
    pred = None
    if form.guard_num is not None and rng.random() < 0.3:
        pred = Reg(form.guard_file, rng.randrange(8), inv=rng.random() < 0.5 and form.guard_inv is not None)
        if pred.num == 7 and not pred.inv:
            pred = None
    if ctrl is None:
        ctrl = Control(stall=rng.randrange(1, 12), yield_bit=rng.randrange(2), wbar=7, rbar=7,
                       wait=rng.choice((0, 0, 1, 4)))
    reuse = 0
    for spec, op in zip(form.operands, operands):
        if spec.reuse is not None and isinstance(op, Reg) and not op.is_zero and rng.random() < 0.3:
            reuse |= 1 << spec.reuse
    ctrl = Control(ctrl.stall, ctrl.yield_bit, ctrl.wbar, ctrl.rbar, ctrl.wait, reuse)
    token = alias_for(form, operands)
    mods = ([token] if token else []) + mods
    n = form.ndsts()
    return Instr(form.op, tuple(mods), operands[:n], operands[n:], pred, ctrl)


def _random_number(f: Field, rng: random.Random, special=(0, 1, 2, 4, 8, 0x10)) -> int:
    low_zero = min(s for _, _, s in f.pieces)
    if rng.random() < 0.3:
        value = rng.choice(special) << low_zero
    else:
        value = rng.getrandbits(f.top) & ~((1 << low_zero) - 1)
    if f.signed and value >> (f.top - 1) & 1:
        value -= 1 << f.top
    return value + f.bias


def _random_operand(spec: OperandSpec, rng: random.Random, mods: tuple, addr: int):
    flags = {flag: (flag in spec.fixed_flags) or (flag in spec.fields and rng.random() < 0.3)
             for flag in ("neg", "abs", "inv")}
    if spec.kind == "reg":
        if spec.fixed is not None:
            num = spec.fixed
        else:
            top = spec.fields["num"].top
            num = ZERO_REG[spec.file] if rng.random() < 0.2 else rng.randrange(1 << top)
        return Reg(spec.file, num, width=spec.width_for(mods), **flags)
    if spec.kind == "cbank":
        return make_cbank(_random_number(spec.fields["bank"], rng, (0, 1, 3)) & 0x1F,
                          _random_number(spec.fields["offset"], rng, (0, 0x40, 0x58)), **flags)
    if spec.kind == "imm":
        f = spec.fields["value"]
        return Imm((_random_number(f, rng) - f.bias) & ((1 << f.top) - 1))
    if spec.kind == "fimm":
        special = (0, 0x3F800000, 0x3F000000, 0x7F800000, 0xFF800000, 0x80000000, 0x7FC00000, 0x4E6E6B28)
        bits = rng.choice(special) if rng.random() < 0.3 else rng.getrandbits(32)
        return Imm(bits & ((1 << spec.fields["fbits"].top) - 1), "f32")
    if spec.kind == "mem":
        base = None
        if not spec.no_base:
            base = Reg("R", rng.randrange(256), width=2 if spec.base64 else 1)
        offset = _random_number(spec.fields["offset"], rng) if "offset" in spec.fields else 0
        ubase = None
        if "ubase" in spec.fields:
            ubase = Reg("UR", rng.randrange(64))
        elif spec.fixed_ubase is not None:
            ubase = Reg("UR", spec.fixed_ubase)
        return Mem(base, offset, ubase)
    if spec.kind == "sreg":
        return SpecialReg(rng.choice(sorted(spec.names.values())))
    if spec.kind == "target":
        align = 1 << min(s for _, _, s in spec.fields["target"].pieces)
        return Target(addr=rng.randrange(0, addr + 0x1000, align))
    raise TableError(f"unknown operand kind {spec.kind}")


# ---------------------------------------------------------------------------------------
# CBank operand modifiers.  ptxc.sass.ir.CBank has no neg/abs/inv yet (FADD R0, R1,
# -c[0x0][0x160] needs them); until it does, decoded negated banks use this subclass.
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CBankMod(CBank):
    neg: bool = False
    abs: bool = False
    inv: bool = False


def make_cbank(bank: int, offset: int, neg: bool = False, abs: bool = False, inv: bool = False) -> CBank:
    if hasattr(CBank, "__dataclass_fields__") and "neg" in CBank.__dataclass_fields__:
        return CBank(bank, offset, neg=neg, abs=abs, inv=inv)  # type: ignore[call-arg]
    if neg or abs or inv:
        return CBankMod(bank, offset, neg, abs, inv)
    return CBank(bank, offset)
