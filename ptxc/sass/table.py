"""Per-architecture SASS instruction tables: the data the encoder, decoder and printer share.

`load("sm_89")` reads ptxc/sass/sm_89.json (written by scripts/learn_sm89_table.py from
nvdisasm's answers; docs/instruction-table.md describes the format) once and indexes it:
by opcode bits for decoding, by (mnemonic, operand kinds) for encoding.  A form is one
encoding of one instruction: fixed opcode bits (`mask`/`value`), a template for the bits
nothing prints, named bit fields for the guard, the modifiers and each operand, and what
the instruction reads and writes (`effects`) and its scheduling class (`latency`), which
the emulator, scheduler and hazard checker work from instead of opcode names.
"""
from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path

from .ir import CBank, Control, Imm, Instr, Mem, Reg, SpecialReg, Target, ZERO_REG

HERE = Path(__file__).resolve().parent
CTRL_SHIFT = 105
CTRL_MASK = ((1 << 21) - 1) << CTRL_SHIFT
# A scoreboard field is "neutral" at 7 (none); the others at 0.
NEUTRAL = {"stall": 0, "yield_bit": 0, "wbar": 7, "rbar": 7, "wait": 0, "reuse": 0}
# The letter a form's `kinds` uses for each immediate kind of the IR.
FLOAT_KINDS = {"f32": "F", "f64": "D", "f16": "H"}


class TableError(ValueError):
    """An instruction the table cannot encode (no form, a value out of a field's range)."""


# ---------------------------------------------------------------------------------------
# Operand parts the IR (ptxc/sass/ir.py) may not have yet.  Until Reg has `sel` (the
# `.H0_H0` of `R0.H0_H0`, the `.X4` scale of `[R2.X4]`) and CBank has `index` (the R8 of
# `c[0x3][R8+0x100]`), registers and banks that need them are these subclasses; plain
# ones are the IR's own classes.
# ---------------------------------------------------------------------------------------
def _has_field(cls, name: str) -> bool:
    return name in getattr(cls, "__dataclass_fields__", {})


if _has_field(Reg, "sel"):
    SelReg = Reg
else:
    @dataclass(frozen=True)
    class SelReg(Reg):  # type: ignore[no-redef]
        sel: str = ""

if _has_field(Mem, "desc"):
    DescMem = Mem
else:
    @dataclass(frozen=True)
    class DescMem(Mem):  # type: ignore[no-redef]
        desc: Reg | None = None

# The memory descriptor of `.E` global accesses when an address names none: ptxas loads
# it with ULDC.64 UR4, c[0x0][0x118] (sm_89 encodes the register, nvdisasm does not print it).
DEFAULT_DESC = 4

if _has_field(CBank, "index"):
    IndexedCBank = CBank
else:
    @dataclass(frozen=True)
    class IndexedCBank(CBank):  # type: ignore[no-redef]
        index: Reg | None = None


def make_reg(file: str, num: int, width: int = 1, neg: bool = False, abs: bool = False, inv: bool = False,
             sel: str = "") -> Reg:
    if sel or SelReg is Reg:
        return SelReg(file, num, width=width, neg=neg, abs=abs, inv=inv, sel=sel)
    return Reg(file, num, width=width, neg=neg, abs=abs, inv=inv)


def make_cbank(bank: int, offset: int, neg: bool = False, abs: bool = False, index: Reg | None = None,
               inv: bool = False) -> CBank:
    if index is not None or IndexedCBank is CBank:
        return IndexedCBank(bank, offset, neg=neg, abs=abs, index=index, inv=inv)
    return CBank(bank, offset, neg=neg, abs=abs, inv=inv)


def make_mem(base: Reg | None, offset: int = 0, ubase: Reg | None = None, desc: Reg | None = None) -> Mem:
    if desc is not None or DescMem is Mem:
        return DescMem(base, offset, ubase, desc=desc)
    return Mem(base, offset, ubase)


def mem_desc(mem) -> Reg | None:
    return getattr(mem, "desc", None)


def reg_sel(reg) -> str:
    return getattr(reg, "sel", "") or ""


def cbank_index(cbank) -> Reg | None:
    return getattr(cbank, "index", None)


def is_zero_reg(reg) -> bool:
    """RZ, PT, URZ, UPT (a barrier register B0.. is never zero)."""
    return isinstance(reg, Reg) and not reg.virtual and reg.num == ZERO_REG.get(reg.file, -1)


# ---------------------------------------------------------------------------------------
# Fields.
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """Bits of the 128-bit word holding one number: pieces are (lo, width, shift), value
    bit `shift + i` living at word bit `lo + i`.  `signed` fields are two's complement over
    their top bit; the printed value is the field plus `bias` (PC-relative targets)."""
    pieces: tuple
    signed: bool = False
    bias: int = 0

    @cached_property
    def top(self) -> int:
        return max(shift + width for _, width, shift in self.pieces)

    @cached_property
    def _put_plan(self) -> tuple:
        """What `put` needs, computed once per field: (bias, lowest and highest+1 raw
        value, value mask, [(lo, mask, shift, the word with the piece's bits clear)], the
        value bits the pieces cannot hold)."""
        top = self.top
        kept = 0
        pieces = []
        for lo, width, shift in self.pieces:
            mask = (1 << width) - 1
            pieces.append((lo, mask, shift, ~(mask << lo)))
            kept |= mask << shift
        return (self.bias, -(1 << (top - 1)), 1 << top, (1 << top) - 1, tuple(pieces), ~kept)

    @property
    def low(self) -> int:
        """The lowest value bit the field holds (2 for a word-aligned offset)."""
        return min(shift for _, _, shift in self.pieces)

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
        bias, low, high, value_mask, pieces, lost = self._put_plan
        raw = value - bias
        if not low <= raw < high:
            raise TableError(f"value {value:#x} does not fit a {self.top}-bit field")
        raw &= value_mask
        for lo, mask, shift, clear in pieces:
            word = (word & clear) | (((raw >> shift) & mask) << lo)
        if raw & lost:
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
    """One operand of a form: its kind, its fields (numbers and flags) and named parts
    (`enums`: value -> text, e.g. the special register of S2R), and the parts nothing
    encodes (`const`: RZ of a hidden register, PR of P2R, the `.64` of an address)."""
    kind: str                      # reg cbank imm fimm mem sreg target
    role: str                      # dst / src (what the instruction does to it)
    fields: dict                   # part -> Field (num neg abs inv bank offset index value fbits base ubase base64
    #                                desc target); `desc` is printed by nothing (DEFAULT_DESC)
    enums: dict = field(default_factory=dict)   # part -> {value: text}: name (sreg), sel (reg), scale (mem)
    enums_if: dict = field(default_factory=dict)  # part -> [(slot, value, {value: text})]: names under a modifier
    signed_if: dict = field(default_factory=dict)  # part -> [(slot, value, signed)]: I2FP.F32.U32's immediate
    const: dict = field(default_factory=dict)   # part -> value: num, sel, name, scale, base64, ubase
    file: str | None = None        # R P UR UP B for registers
    fixed_flags: tuple = ()        # operand modifiers always present (-, |..|, !)
    float: str = ""                # fimm: f32, f64 (the high word) or f16
    float_if: tuple = ()           # fimm: ((slot, value, format), ...): HFMA2.BF16_V2 prints bf16
    reuse: int | None = None       # bit of Control.reuse that marks this operand
    width: tuple = ()              # ((regex over the mnemonic, registers), ...): first match wins, else 1
    omit_if_zero: bool = False     # nvdisasm does not print this register when it is RZ/PT (an immediate: 0)
    sep: str = ", "                # what nvdisasm prints before it (CALL.REL.NOINC R8 0x0)
    rz_base: str = "keep"          # 'omit' if nvdisasm leaves out a base RZ (mem) or index RZ (cbank)
    #                                when more follows
    index_file: str = "R"          # cbank: the file of its index register (c[0x3][UR4])
    also_written: bool = False     # a source the instruction also writes (BMOV.32.CLEAR's B6)
    desc_printed: bool = False     # mem: nvdisasm prints the descriptor, `desc[UR4][R2.64]` (sm_90)
    sel_in_abs: bool = False       # reg: the selector goes inside the bars, `|R2.H1|` (MUFU.F16), not `|R2|.H0_H0`
    offset_signed_alone: bool = False  # mem: an offset standing alone prints signed, `[-0x10]` (LDGSTS)
    # Derived from the above, for the encoder: ((flag, Field), ...) of the operand
    # modifiers (neg, abs, inv) it has fields for; ((flag, required), ...): an operand
    # fits only if it has each flag that is required (fixed_flags) and none it has no
    # field for (the flags it may have or not are left out).
    flag_fields: tuple = field(init=False, repr=False, compare=False)
    flag_checks: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        flags = ("neg", "abs", "inv")
        self.flag_fields = tuple((flag, self.fields[flag]) for flag in flags if flag in self.fields)
        self.flag_checks = tuple((flag, flag in self.fixed_flags) for flag in flags
                                 if flag in self.fixed_flags or flag not in self.fields)

    def names(self, part: str, values: dict) -> dict:
        """Value -> text of a named part, for an instruction whose modifier fields hold
        `values` ({slot index: value}): I2F.U8's source selectors are not I2F.S16's."""
        for slot, value, names in self.enums_if.get(part, ()):
            if values.get(slot) == value:
                return names
        return self.enums[part]

    def signed(self, part: str, values: dict) -> bool:
        for slot, value, signed in self.signed_if.get(part, ()):
            if values.get(slot) == value:
                return signed
        return self.fields[part].signed

    def float_for(self, values: dict) -> str:
        """The format a float immediate prints in under these modifier field values."""
        for slot, value, kind in self.float_if:
            if values.get(slot) == value:
                return kind
        return self.float

    def width_for(self, name: str) -> int:
        for pattern, w in self.width:
            if pattern.search(name):
                return w
        return 1

    @property
    def fixed(self) -> int | None:
        return self.const.get("num")

    @property
    def base64(self) -> bool:
        return bool(self.const.get("base64", False))


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
    effects: dict = field(default_factory=dict)
    example: str = ""
    free: int = 0                  # bits no field or opcode claims: as `template` has them
    # Combinations of modifier values and operand flags nvdisasm refuses (or prints as
    # something else): each a tuple of (slot index, value) and ((operand index, flag),
    # value) pairs that must not all hold.  Everything else was confirmed.
    illegal: tuple = ()
    # The template with the modifier fields stored, per their values (encode_form's
    # first step; a per-process memo of table data, like Table.mods_cache).
    slot_words: dict = field(default_factory=dict, repr=False, compare=False)
    alias_tokens: frozenset = field(init=False, repr=False, compare=False)   # the aliases' tokens

    def __post_init__(self):
        self.alias_tokens = frozenset(token for token, _ in self.aliases)

    @property
    def opcode(self) -> int:
        return self.value & 0xFFF


    def ndsts(self) -> int:
        return sum(1 for o in self.operands if o.role == "dst")

    def refused(self, values: dict, operands: list) -> tuple | None:
        """The illegal combination (see `illegal`) these modifier field values and
        operands hold, or None: such a word was never confirmed by nvdisasm."""
        for combo in self.illegal:
            for key, value in combo:
                if isinstance(key, int):
                    held = values.get(key)
                else:
                    held = int(bool(getattr(operands[key[0]], key[1], False)))
                if held != value:
                    break
            else:
                return combo
        return None

    def describe(self, combo: tuple) -> str:
        """An illegal combination in words: `I2F R,C: modifiers U32, RP` / `operand 2 inv`."""
        parts = []
        for key, value in combo:
            if isinstance(key, int):
                parts.append(".".join(self.slots[key].values[value]) or f"(slot {key} = {value})")
            else:
                parts.append(f"{'' if value else 'no '}{key[1]} on operand {key[0]}")
        return f"{self.name}: {' with '.join(parts)}"


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
            hideable = [j for j, o in enumerate(form.operands) if o.omit_if_zero]
            for r in range(len(hideable) + 1):  # an instruction may leave out a hidden RZ/PT
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
        """Forms whose opcode bits match and whose bits nothing prints are as the word has
        them (as the tools set them: two forms may print alike but encode those bits
        apart).  A word with other unprinted bits is no verified form's (a form the
        learner's verification left out may have had them): UNKNOWN, not a guess."""
        return [f for f in self.by_opcode.get(word & 0xFFF, ())
                if word & f.mask == f.value and (word ^ f.template) & f.free == 0]

    def encode_candidates(self, instr: Instr) -> list:
        """[(form, operand indices the instruction leaves out because they are RZ/PT)]."""
        return self.by_key.get((instr.op, operand_kinds(instr.operands)), [])


def operand_kind(op) -> str:
    """The letter a form's `kinds` uses for an IR operand."""
    if isinstance(op, Reg):
        return op.file
    if isinstance(op, CBank):
        return "C"
    if isinstance(op, Imm):
        return FLOAT_KINDS.get(op.kind, "I")
    if isinstance(op, Mem):
        return "M"
    if isinstance(op, SpecialReg):
        return "S"
    if isinstance(op, Target):
        return "T"
    raise TableError(f"unknown operand {op!r}")


def operand_kinds(operands) -> tuple:
    out = []
    for o in operands:      # (registers and immediates, most operands, without the call)
        t = type(o)
        if t is Reg:
            out.append(o.file)
        elif t is Imm:
            out.append(FLOAT_KINDS.get(o.kind, "I"))
        else:
            out.append(operand_kind(o))
    return tuple(out)


def _operand(d: dict) -> OperandSpec:
    fields, enums, enums_if, signed_if = {}, {}, {}, {}
    for part, f in d["fields"].items():
        fields[part] = _field(f)
        if "names" in f:
            enums[part] = {int(k): v for k, v in f["names"].items()}
        if "names_if" in f:
            enums_if[part] = [(c["slot"], c["value"], {int(k): v for k, v in c["names"].items()}) for c in f["names_if"]]
        if "signed_if" in f:
            signed_if[part] = [(c["slot"], c["value"], c["signed"]) for c in f["signed_if"]]
    return OperandSpec(
        kind=d["kind"], role=d["role"], fields=fields, enums=enums, enums_if=enums_if, signed_if=signed_if,
        const=dict(d.get("const", {})),
        file=d.get("file"), fixed_flags=tuple(d.get("fixed_flags", ())), float=d.get("float", ""),
        reuse=d.get("reuse"), width=tuple((re.compile(p), w) for p, w in d.get("width", ())),
        omit_if_zero=d.get("omit_if_zero", False), sep=d.get("sep", ", "), rz_base=d.get("rz_base", "keep"),
        index_file=d.get("index_file", "R"),
        also_written=d.get("also_written", False), desc_printed=d.get("desc_printed", False),
        sel_in_abs=d.get("sel_in_abs", False), offset_signed_alone=d.get("offset_signed_alone", False),
        float_if=tuple((c["slot"], c["value"], c["float"]) for c in d.get("float_if", ())))


def _form(d: dict) -> Form:
    mask, template = int(d["mask"], 16), int(d["template"], 16)
    slots = [s if isinstance(s, str) else
             ModField(_field(s), {int(k): tuple(v) for k, v in s["values"].items()}, s["default"])
             for s in d["mods"]]
    aliases = [(a["token"], [{int(k): c for k, c in alt.items()} for alt in a["when"]]) for a in d["aliases"]]
    operands = [_operand(o) for o in d["operands"]]
    claimed = mask | CTRL_MASK
    for f in [s.field for s in slots if not isinstance(s, str)] + [f for o in operands for f in o.fields.values()] + \
            [_field(d["guard"].get("num")), _field(d["guard"].get("inv"))]:
        for lo, width, _ in (f.pieces if f else ()):
            claimed |= ((1 << width) - 1) << lo
    return Form(
        name=d["name"], op=d["op"], kinds=tuple(d["kinds"].split(",")) if d["kinds"] else (),
        mask=mask, value=template & mask, template=template,
        guard_num=_field(d["guard"].get("num")), guard_inv=_field(d["guard"].get("inv")),
        guard_file=d["guard"].get("file", "P"),
        slots=slots, operands=operands, aliases=aliases,
        latency=d["latency"], space_if=tuple(d["space_before_semicolon_if"]), effects=d.get("effects", {}),
        example=d.get("example") or "", free=~claimed & ((1 << 128) - 1),
        illegal=tuple(tuple((_illegal_key(k), v) for k, v in sorted(c.items())) for c in d.get("illegal", ())))


def _illegal_key(key: str):
    """"3" is modifier slot 3; "2.neg" the neg flag of operand 2."""
    if "." in key:
        j, flag = key.split(".")
        return (int(j), flag)
    return int(key)


@lru_cache(maxsize=None)
def load(arch_or_path: str | Path = "sm_89") -> Table:
    """The table for an architecture ('sm_89') or from a JSON file, loaded once."""
    path = Path(arch_or_path)
    if path.suffix != ".json":
        from .target import TARGETS
        known = TARGETS.get(str(arch_or_path))
        path = HERE / (known.table_file if known else f"{arch_or_path}.json")
        if not path.exists():
            known = sorted(p.stem for p in HERE.glob("sm_*.json") if "_latencies" not in p.stem)
            raise TableError(f"no SASS instruction table for {arch_or_path} (have: {', '.join(known)})")
    if path.parent != HERE:     # a table being learned or tested: built as read
        data = json.loads(path.read_text())
        return Table(data["arch"], [_form(f) for f in data["forms"]], data["control"])
    return _lazy_table(path)


# ---------------------------------------------------------------------------------------
# Loading fast: the JSON and the indexes of Table.__post_init__ kept in the user cache
# (ptxc/cache.py), and a Form built from its JSON only when an instruction asks for it.
# The Forms, their order in every index and so every output are those of the eager build.
# ---------------------------------------------------------------------------------------
class _LazyForms(Sequence):
    """Table.forms: a form is built (by _form, as the eager load does) on first access."""

    def __init__(self, raw: list):
        self._raw, self._built = raw, [None] * len(raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        form = self._built[i]
        if form is None:
            form = self._built[i] = _form(self._raw[i])
        return form


class _LazyIndex(Mapping):
    """by_opcode, by_op, by_key: each key's list made from form indices on first access."""

    def __init__(self, index: dict, forms: _LazyForms, with_drops: bool = False):
        self._index, self._forms, self._with_drops, self._lists = index, forms, with_drops, {}

    def __getitem__(self, key):
        out = self._lists.get(key)
        if out is None:
            entries = self._index[key]
            out = [(self._forms[i], drop) for i, drop in entries] if self._with_drops else \
                [self._forms[i] for i in entries]
            self._lists[key] = out
        return out

    def __iter__(self):
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, key) -> bool:
        return key in self._index


def _table_index(path: Path) -> dict:
    """What the cache keeps of a table: its JSON and Table's indexes as form positions."""
    data = json.loads(path.read_text())
    table = Table(data["arch"], [_form(f) for f in data["forms"]], data["control"])
    position = {id(form): i for i, form in enumerate(table.forms)}
    return {"arch": data["arch"], "forms": data["forms"], "control": data["control"],
            "by_opcode": {k: [position[id(f)] for f in v] for k, v in table.by_opcode.items()},
            "by_op": {k: [position[id(f)] for f in v] for k, v in table.by_op.items()},
            "by_key": {k: [(position[id(f)], drop) for f, drop in v] for k, v in table.by_key.items()}}


def _lazy_table(path: Path) -> Table:
    from ..cache import cached
    data = cached(f"{path.stem}.table", [path, Path(__file__)], lambda: _table_index(path))
    table = object.__new__(Table)
    forms = _LazyForms(data["forms"])
    table.arch, table.forms, table.control, table.mods_cache = data["arch"], forms, data["control"], {}
    table.by_opcode = _LazyIndex(data["by_opcode"], forms)
    table.by_op = _LazyIndex(data["by_op"], forms)
    table.by_key = _LazyIndex(data["by_key"], forms, with_drops=True)
    return table


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
        return is_zero_reg(op)
    if cond.startswith("imm="):
        return isinstance(op, Imm) and op.kind == "int" and op.bits == int(cond[4:])
    if cond == "pow2":
        # nvdisasm's IMAD.SHL alias: every power of two 2..2^30 except 2^16, which it
        # prints as IMAD.U32 (probed over 2^1..2^31; tests/test_sass_encoding.py re-probes).
        return (isinstance(op, Imm) and op.kind == "int" and 2 <= op.bits < 1 << 31
                and not op.bits & (op.bits - 1) and op.bits != 1 << 16)
    raise TableError(f"unknown alias condition {cond!r}")


def alias_for(form: Form, operands: list) -> str | None:
    for token, alternatives in form.aliases:
        if alias_holds(alternatives, operands):
            return token
    return None


def _part_fits(spec: OperandSpec, part: str, value, values: dict) -> bool:
    """A named part (sel, scale, name) holds `value`: as the form's constant, as one of
    its field's names, or is absent ("") where the form has neither."""
    if part in spec.enums:
        return value in spec.names(part, values).values()
    return value == spec.const.get(part, "")


def operand_fits(spec: OperandSpec, op, values: dict | None = None) -> bool:
    """Whether an IR operand has the shape this operand of a form can hold (values are
    range-checked when encoding); `values` are the form's modifier field values."""
    values = values or {}
    for flag, required in spec.flag_checks:
        if bool(getattr(op, flag, False)) != required:
            return False
    if spec.kind == "reg":
        if op.virtual or (spec.fixed is not None and op.num != spec.fixed):
            return False
        return _part_fits(spec, "sel", reg_sel(op), values)
    if spec.kind == "cbank":
        index = cbank_index(op)
        return index is None or ("index" in spec.fields and index.file == spec.index_file)
    if spec.kind == "fimm":
        return op.kind == spec.float
    if spec.kind == "mem":
        if op.base is not None and not _part_fits(spec, "scale", reg_sel(op.base), values):
            return False
        if op.base is None and "scale" in spec.const:
            return False
        # A form whose address is fixed 64-bit (`[R2.64]`: base64 a constant, not a field)
        # takes no 32-bit base: sm_90's LD has such a form and a 32-bit one with the same
        # modifiers (`LD.E R4, desc[UR4][R2.64]`, `LD.E R4, [R2]`), and the base's width is
        # what tells them apart.  (Not the other way round: a form that prints no `.64`
        # may still take a register pair, ATOMG.E.CAS's `[R2+0x20]`.)
        if spec.base64 and "base64" not in spec.fields and op.base is not None and op.base.width != 2:
            return False
        if op.ubase is None:
            return "ubase" not in spec.const and "ubase" not in spec.fields
        return "ubase" in spec.fields or op.ubase.num == spec.const.get("ubase")
    if spec.kind == "sreg":
        return _part_fits(spec, "name", op.name, values)
    return True


def match_form(table: "Table", instr: Instr):
    """(form, {slot index: value}, operands) for the first form that can encode `instr`,
    or None."""
    return next(matching_forms(table, instr), None)


def matching_forms(table: "Table", instr: Instr):
    """Every (form, {slot index: value}, operands) whose modifiers and operand shapes fit
    `instr`; operands are the instruction's with any RZ/PT it left out put back.  A
    printing alias (IMAD.MOV) leading the modifiers is not part of the form's own."""
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
            spec = form.operands[j]
            operands.insert(j, Imm(0) if spec.kind == "imm" else Reg(spec.file, ZERO_REG[spec.file]))
        if all(operand_fits(spec, op, values) for spec, op in zip(form.operands, operands)):
            yield form, values, operands


# ---------------------------------------------------------------------------------------
# What an instruction reads and writes, from its form (for the emulator, the scheduler
# and the hazard checker).
# ---------------------------------------------------------------------------------------
def effects(instr: Instr, table: "Table | None" = None) -> dict:
    """{'reads': [...], 'writes': [...], 'mem': {...} or None, 'control': str or None,
    'latency': class}: registers as (file, first number, count), leaving out RZ/PT;
    implicit operands (the UR4 descriptor of `.E` accesses) included."""
    table = table or load()
    found = match_form(table, instr)
    if found is None:
        raise TableError(f"no {table.arch} form for {instr.name}")
    form, _, operands = found
    reads, writes = [], []
    if instr.pred is not None and not is_zero_reg(instr.pred):
        reads.append((instr.pred.file, instr.pred.num, 1))

    def regs_of(op, spec):
        if isinstance(op, Reg):
            return [op]
        if isinstance(op, Mem):
            desc = mem_desc(op)
            if desc is None and "desc" in spec.fields:  # what the encoder puts there
                desc = Reg("UR", DEFAULT_DESC, width=2)
            return [r for r in (op.base, op.ubase, desc) if r is not None]
        if isinstance(op, CBank) and cbank_index(op) is not None:
            return [cbank_index(op)]
        return []

    for spec, op in zip(form.operands, operands):
        for reg in regs_of(op, spec):
            if is_zero_reg(reg):
                continue
            unit = (reg.file, reg.num, reg.width)
            if spec.role == "dst" and isinstance(op, Reg):
                writes.append(unit)
            else:
                reads.append(unit)
            if spec.also_written and isinstance(op, Reg):
                writes.append(unit)
    name = instr.name
    for imp in form.effects.get("implicit", ()):
        if imp.get("if") and imp["if"] not in name.split("."):
            continue
        (writes if imp["role"] == "dst" else reads).append((imp["file"], imp["num"], imp.get("width", 1)))
    return {"reads": reads, "writes": writes, "mem": form.effects.get("mem"),
            "control": form.effects.get("control"), "latency": form.latency}


# ---------------------------------------------------------------------------------------
# Sample instructions, for checking the table against nvdisasm (tests, the learn script).
# ---------------------------------------------------------------------------------------
def random_instr(form: Form, rng: random.Random, addr: int = 0, ctrl: Control | None = None) -> Instr:
    """A random instruction of this form: registers and numbers anywhere in their fields,
    special values (RZ, 0, 1, powers of 2) often, each modifier field at its default or
    at a random value."""
    for _ in range(50):     # a combination nvdisasm confirmed (most are)
        values = {}
        for i, slot in enumerate(form.slots):
            if not isinstance(slot, str):
                values[i] = slot.default if rng.random() < 0.5 else rng.choice(sorted(slot.values))
        if not any(all(values.get(k) == v for k, v in combo if isinstance(k, int)) for combo in form.illegal
                   if all(isinstance(k, int) for k, _ in combo)):
            break
    else:
        values = {i: slot.default for i, slot in enumerate(form.slots) if not isinstance(slot, str)}
    mods = []
    for i, slot in enumerate(form.slots):
        mods += [slot] if isinstance(slot, str) else list(slot.values[values[i]])
    for _ in range(50):
        operands = [_random_operand(spec, rng, form.op, tuple(mods), values, addr) for spec in form.operands]
        if form.refused(values, operands) is None:
            break
    else:
        operands = [_clear_flags(_random_operand(spec, rng, form.op, tuple(mods), values, addr), spec)
                    for spec in form.operands]
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
        if spec.reuse is not None and isinstance(op, Reg) and not is_zero_reg(op) and rng.random() < 0.3:
            reuse |= 1 << spec.reuse
    ctrl = Control(ctrl.stall, ctrl.yield_bit, ctrl.wbar, ctrl.rbar, ctrl.wait, reuse)
    token = alias_for(form, operands)
    mods = ([token] if token else []) + mods
    n = form.ndsts()
    return Instr(form.op, tuple(mods), operands[:n], operands[n:], pred, ctrl)


def _clear_flags(op, spec: OperandSpec):
    """The operand without the flags it may go without (those it has fields for)."""
    flags = {flag: False for flag, _ in spec.flag_fields if getattr(op, flag, False)}
    return replace(op, **flags) if flags else op


def _random_number(f: Field, rng: random.Random, special=(0, 1, 2, 4, 8, 0x10)) -> int:
    held = sum(((1 << width) - 1) << shift for _, width, shift in f.pieces)   # (pieces may leave gaps)
    if rng.random() < 0.3:
        value = (rng.choice(special) << f.low) & held
    else:
        value = rng.getrandbits(f.top) & held
    if f.signed and value >> (f.top - 1) & 1:
        value -= 1 << f.top
    return value + f.bias


def _random_part(spec: OperandSpec, part: str, rng: random.Random, values: dict) -> str:
    if part in spec.enums:
        return rng.choice(sorted(set(spec.names(part, values).values())))
    return spec.const.get(part, "")


def _random_reg_num(spec: OperandSpec, part: str, file: str, rng: random.Random) -> int:
    if part not in spec.fields:
        return spec.const.get(part, ZERO_REG.get(file, 0))
    top = spec.fields[part].top
    if file in ZERO_REG and rng.random() < 0.2:
        return ZERO_REG[file]
    return rng.randrange(1 << top)


SPECIAL_FLOATS = {
    "f32": (0, 0x3F800000, 0x3F000000, 0x7F800000, 0xFF800000, 0x80000000, 0x7FC00000, 0x4E6E6B28, 0x7F800001),
    "f64": (0, 0x3FF00000, 0x3FE00000, 0x7FF00000, 0xFFF00000, 0x80000000, 0x7FF80000, 0x41CDCD65, 0x7FF00001),
    "f16": (0, 0x3C00, 0x3800, 0x7C00, 0xFC00, 0x8000, 0x7E00, 0x7BFF, 0x7C01),
}


def _random_operand(spec: OperandSpec, rng: random.Random, op: str, mods: tuple, values: dict, addr: int):
    name = ".".join((op,) + mods)
    flags = {flag: (flag in spec.fixed_flags) or (flag in spec.fields and rng.random() < 0.3)
             for flag in ("neg", "abs", "inv")}
    f = spec.fields
    if spec.kind == "reg":
        num = _random_reg_num(spec, "num", spec.file, rng)
        return make_reg(spec.file, num, spec.width_for(name), sel=_random_part(spec, "sel", rng, values), **flags)
    if spec.kind == "cbank":
        index = None
        if "index" in f:
            index = Reg(spec.index_file, _random_reg_num(spec, "index", spec.index_file, rng))
        return make_cbank(_random_number(f["bank"], rng, (0, 1, 3)), _random_number(f["offset"], rng, (0, 0x40, 0x58)),
                          flags["neg"], flags["abs"], index, flags["inv"])
    if spec.kind == "imm":
        v = f["value"]
        return Imm((_random_number(v, rng) - v.bias) & ((1 << v.top) - 1))
    if spec.kind == "fimm":
        top = f["fbits"].top
        bits = rng.choice(SPECIAL_FLOATS[spec.float]) if rng.random() < 0.3 else rng.getrandbits(top)
        return Imm(bits & ((1 << top) - 1) & ~((1 << f["fbits"].low) - 1), spec.float)
    if spec.kind == "mem":
        wide = bool(f["base64"].raw(rng.getrandbits(128))) if "base64" in f else spec.base64
        base = make_reg("R", _random_reg_num(spec, "base", "R", rng), 2 if wide else 1,
                        sel=_random_part(spec, "scale", rng, values))
        offset = _random_number(f["offset"], rng) if "offset" in f else 0
        ubase = None
        if "ubase" in f:
            ubase = Reg("UR", _random_reg_num(spec, "ubase", "UR", rng))
        elif "ubase" in spec.const:
            ubase = Reg("UR", spec.const["ubase"])
        desc = Reg("UR", rng.randrange(0, 64, 2), width=2) if "desc" in f else None
        return make_mem(base, offset, ubase, desc)
    if spec.kind == "sreg":
        return SpecialReg(_random_part(spec, "name", rng, values))
    if spec.kind == "target":
        align = 1 << f["target"].low
        return Target(addr=rng.randrange(0, addr + 0x1000, align))
    raise TableError(f"unknown operand kind {spec.kind}")
