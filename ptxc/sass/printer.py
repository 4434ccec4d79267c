"""Print SASS the way cuobjdump -sass and nvdisasm do.

`format_instr` gives one instruction's text (`@P0 EXIT ;`), `format_listing` one
function as cuobjdump lays it out (address column, both hex words), `format_file` a
whole cubin's listing, `format_cubin` what `ptxc dump` prints for a cubin read by
ptxc.cubin.reader, and `format_ir` SASS IR that may still hold virtual registers.

How an operand prints depends on its form (a signed or unsigned immediate, `[R2.64]`,
whether an RZ base shows), so instructions are matched against the architecture's table
first.  Some printing rules come from nvdisasm rather than from the table's fields and
were measured with it (scripts/learn_sm89_table.py re-checks them on every run): the
space before `;` depends on the control word (per form, in the table); `.reuse` shows
only under some control words (`control.reuse_shown_if`); float immediates print with
C's `%.20g` below 1e9 in magnitude and `%.20e` from there, with `+INF `, `-QNAN `,
`-0.0 `... (a trailing space included) for the special values; an address offset
standing alone prints unsigned.  cuobjdump's hex column was measured over nvcc's
cubins (listing_width).  A word no form knows prints as `UNKNOWN 0x<hex> ;`.
"""
from __future__ import annotations

import struct

from .ir import CBank, Control, Imm, Instr, Mem, Reg, SpecialReg, Target, ZERO_REG
from .table import (DEFAULT_DESC, NEUTRAL, Form, OperandSpec, Table, alias_for, cbank_index, is_zero_reg, load,
                    match_form, mem_desc, reg_sel)
from .target import TARGETS

ZERO_NAME = {"R": "RZ", "P": "PT", "UR": "URZ", "UP": "UPT"}
ADDR_FIELD = 19          # the guard is right-aligned in this many columns after /*addr*/


# ---------------------------------------------------------------------------------------
# Numbers.
# ---------------------------------------------------------------------------------------
def signed_hex(value: int) -> str:
    return f"-{-value:#x}" if value < 0 else f"{value:#x}"


# (exponent bits, mantissa bits, struct format of the value) of each float immediate;
# an f64 immediate holds the high 32 bits of the double.
FLOAT_LAYOUT = {"f16": (5, 10, "<e", 16), "f32": (8, 23, "<f", 32), "f64": (11, 52, "<d", 64)}
# bfloat16 (HFMA2.BF16_V2's immediates on sm_90) is the high half of an f32.


def format_float(bits: int, kind: str = "f32") -> str:
    """A float immediate as nvdisasm prints it: C's %.20g below 1e9 in magnitude, %.20e
    from there, and `+INF `, `-QNAN `, `+SNAN `, `-0.0 ` with a trailing space."""
    if kind == "bf16":
        bits, kind = bits << 16, "f32"
    ebits, mbits, fmt, size = FLOAT_LAYOUT[kind]
    if kind == "f64":
        bits <<= 32
    sign = "-" if bits >> (size - 1) & 1 else "+"
    exponent, mantissa = (bits >> mbits) & ((1 << ebits) - 1), bits & ((1 << mbits) - 1)
    if exponent == (1 << ebits) - 1:
        if mantissa == 0:
            return f"{sign}INF "
        return f"{sign}{'QNAN' if mantissa >> (mbits - 1) else 'SNAN'} "
    if bits == 1 << (size - 1):
        return "-0.0 "
    value = struct.unpack(fmt, bits.to_bytes(size // 8, "little"))[0]
    return f"{value:.20e}" if abs(value) >= 1e9 else f"{value:.20g}"


def format_f32(bits: int) -> str:
    return format_float(bits, "f32")


def _imm_value(imm: Imm, spec: OperandSpec | None, values: dict | None = None) -> int:
    """The number an immediate prints as: its field (and the modifiers: I2FP.F32.U32)
    say whether it is signed."""
    f = spec.fields.get("value") if spec else None
    if f is None:
        return imm.bits
    bits = imm.bits & ((1 << f.top) - 1)
    return bits - (1 << f.top) if spec.signed("value", values or {}) and bits >> (f.top - 1) & 1 else bits


# ---------------------------------------------------------------------------------------
# Operands.
# ---------------------------------------------------------------------------------------
def reg_name(reg: Reg) -> str:
    if reg.virtual:
        return f"%{reg.file.lower()}{reg.num}" + (f".{32 * reg.width}" if reg.width > 1 else "")
    return ZERO_NAME[reg.file] if is_zero_reg(reg) else f"{reg.file}{reg.num}"


def _with_flags(text: str, op, inv_char: str, suffix: str = "", inside: str = "") -> str:
    """`-|R2|.reuse.H0_H0`: the absolute value bars go round the name (and `inside`:
    the selector of forms that print `|R2.H1|`), `.reuse` and the selector follow them,
    `!`/`~` and `-` go before."""
    text += inside
    if getattr(op, "abs", False):
        text = f"|{text}|"
    text += suffix
    if getattr(op, "inv", False):
        text = inv_char + text
    if getattr(op, "neg", False):
        text = "-" + text
    return text


def _mem_text(op: Mem, spec: OperandSpec | None) -> str:
    """`[R2.64+UR4+0x10]`.  Where the form says so (`rz_base`), a base RZ is left out
    unless it carries a scale next to a uniform register (`[RZ.X4+URZ]`); an offset
    standing alone prints unsigned (`[0xfffffc]`), otherwise signed (`[R2+-0x4]`).
    sm_90 forms print the memory descriptor first: `desc[UR4][R2.64]`."""
    base = op.base if op.base is not None else Reg("R", ZERO_REG["R"])
    wide = spec.base64 if spec and "base64" not in spec.fields else base.width == 2
    parts = []
    if not (is_zero_reg(base) and spec is not None and (spec.rz_base == "omit" or "base" not in spec.fields)
            and not (reg_sel(base) and op.ubase is not None)):
        # a virtual pair already names its width (%r4.64): say it once, [%r4.64]
        said = base.virtual and base.width == 2
        parts.append(reg_name(base) + (".64" if wide and not said else "") + (f".{reg_sel(base)}" if reg_sel(base) else ""))
    if op.ubase is not None:
        parts.append(reg_name(op.ubase))
    if parts:
        if op.offset:
            parts.append(signed_hex(op.offset))
    elif op.offset:
        field = spec.fields.get("offset") if spec else None
        if spec is not None and spec.offset_signed_alone:
            parts.append(signed_hex(op.offset))
        else:
            parts.append(f"{op.offset & ((1 << field.top) - 1) if field else op.offset:#x}")
    else:
        parts.append("RZ")
    text = "[" + "+".join(parts) + "]"
    if spec is not None and spec.desc_printed:
        desc = mem_desc(op)
        text = f"desc[{reg_name(desc) if desc is not None else f'UR{DEFAULT_DESC}'}]" + text
    return text


def _cbank_text(op: CBank, spec: OperandSpec | None = None) -> str:
    """`c[0x3][0x100]`, `c[0x3][R8+0x100]`, `c[0x3][R8]`; an index RZ shows only when
    the offset is 0, unless the form keeps it (`c[0x3][URZ+0x10]`: rz_base)."""
    index = cbank_index(op)
    if index is None and spec is not None and "index" in spec.fields:
        index = Reg(spec.index_file, ZERO_REG[spec.index_file])   # what the encoder writes for none
    keep = spec is not None and spec.rz_base == "keep"
    if index is None or (is_zero_reg(index) and op.offset and not keep):
        inner = signed_hex(op.offset)
    else:
        inner = reg_name(index) + (f"+{signed_hex(op.offset)}" if op.offset else "")
    return _with_flags(f"c[{op.bank:#x}][{inner}]", op, "~")


def format_operand(op, spec: OperandSpec | None = None, reuse: bool = False, values: dict | None = None) -> str:
    if isinstance(op, Reg):
        sel = f".{reg_sel(op)}" if reg_sel(op) else ""
        if spec is not None and spec.sel_in_abs and getattr(op, "abs", False):
            return _with_flags(reg_name(op), op, "!" if op.file in ("P", "UP") else "~", ".reuse" if reuse else "", sel)
        return _with_flags(reg_name(op), op, "!" if op.file in ("P", "UP") else "~", (".reuse" if reuse else "") + sel)
    if isinstance(op, CBank):
        return _cbank_text(op, spec)
    if isinstance(op, Imm):
        if op.kind in FLOAT_LAYOUT:
            return format_float(op.bits, spec.float_for(values or {}) if spec is not None and spec.float_if else op.kind)
        return signed_hex(_imm_value(op, spec, values))
    if isinstance(op, Mem):
        return _mem_text(op, spec)
    if isinstance(op, SpecialReg):
        return op.name
    if isinstance(op, Target):
        return f"{op.addr:#x}" if op.addr is not None else str(op.label)
    return str(op)


def format_guard(pred: Reg | None) -> str:
    if pred is None:
        return ""
    return f"@{'!' if pred.inv else ''}{reg_name(pred)} "


def _space_before_semicolon(form: Form | None, ctrl: Control) -> bool:
    if form is None:
        return True
    return any(getattr(ctrl, f) != NEUTRAL[f] for f in form.space_if)


# ---------------------------------------------------------------------------------------
# Instructions.
# ---------------------------------------------------------------------------------------
def format_body(instr: Instr, table: Table | None = None) -> str:
    """The instruction without its guard: `IMAD.WIDE R2, R6.reuse, R7.reuse, c[0x0][0x160] ;`."""
    table = table or load()
    if instr.op == "UNKNOWN":
        word = instr.srcs[0].bits if instr.srcs else 0
        return f"UNKNOWN 0x{word >> 64:016x}{word & (1 << 64) - 1:016x} ;"
    found = match_form(table, instr)
    form, values, operands = found if found else (None, {}, instr.operands)
    specs = form.operands if form else [None] * len(operands)
    show_reuse = table.reuse_shown(instr.ctrl)
    text = ""
    for op, spec in zip(operands, specs):
        if spec is not None and spec.omit_if_zero and (
                (is_zero_reg(op) and not op.inv) or (isinstance(op, Imm) and op.bits == 0)):
            continue
        reuse = bool(show_reuse and spec is not None and spec.reuse is not None
                     and instr.ctrl.reuse >> spec.reuse & 1)
        text += (spec.sep if spec is not None and text else ", " if text else "") + format_operand(op, spec, reuse, values)
    text = _mnemonic(instr, form, operands) + (" " + text if text else "")
    return text + (" ;" if _space_before_semicolon(form, instr.ctrl) else ";")


def _mnemonic(instr: Instr, form: Form | None, operands: list) -> str:
    """The name with its modifiers; nvdisasm's alias (IMAD.MOV) follows the operands,
    whether or not the instruction spelled it."""
    if form is None or not form.aliases:
        return instr.name
    mods = tuple(instr.mods)
    if mods and mods[0] in form.alias_tokens:
        mods = mods[1:]
    token = alias_for(form, operands)
    return ".".join((instr.op,) + ((token,) if token else ()) + mods)


def format_instr(instr: Instr, addr: int = 0, table: Table | None = None) -> str:
    """Exactly the text cuobjdump -sass prints for this instruction (no address, no hex)."""
    return format_guard(instr.pred) + format_body(instr, table)


def format_ir(instr: Instr) -> str:
    """SASS IR for --print-after: like cuobjdump, but virtual registers print as %r3,
    %p1 (%r4.64 for a pair) and nothing needs a form in the table."""
    ops = [format_operand(op) for op in instr.operands]
    text = format_guard(instr.pred) + instr.name + (" " + ", ".join(ops) if ops else "") + " ;"
    return text + (f"  // {instr.comment}" if instr.comment else "")


# ---------------------------------------------------------------------------------------
# Listings.
# ---------------------------------------------------------------------------------------
def _left(addr: int, instr: Instr, table: Table | None) -> str:
    return f"        /*{addr:04x}*/" + format_guard(instr.pred).rjust(ADDR_FIELD) + format_body(instr, table)


def _sized_text(instr: Instr, table: Table) -> str:
    """The text cuobjdump sizes its columns by: every reuse flag shown (whatever the
    control word says), the guard counted in full rather than inside its 19 columns."""
    shown = Control(**{**vars(instr.ctrl), **table.control.get("reuse_shown_if", {})})
    sized = Instr(instr.op, instr.mods, instr.dsts, instr.srcs, instr.pred, shown)
    return format_guard(instr.pred) + format_body(sized, table)


def listing_width(functions, table: Table | None = None) -> int:
    """The column of the hex words, measured with nvcc's cubins: two spaces after the
    longest `/*addr*/` + 19 columns + guard + instruction of the whole file, with every
    reuse flag counted (see _sized_text)."""
    table = table or load()
    return max((len(f"        /*{a:04x}*/") + ADDR_FIELD + len(_sized_text(i, table)) + 2
                for _, rows in functions for a, i in rows), default=0)


def format_listing(function_name, instrs_with_addrs=None, arch: str = "sm_89",
                   width: int | None = None) -> str:
    """One function as cuobjdump -sass prints it, from `Function :` to the dotted line.

    `instrs_with_addrs` is [(addr, Instr)] (or [(addr, Instr, bytes)] to show given bytes
    rather than encoding); `width` is the hex column (listing_width over the whole file,
    as cuobjdump computes it).  Given a list of (name, instrs_with_addrs) instead of a
    name, it prints the whole file (format_file)."""
    if not isinstance(function_name, str):
        return format_file(function_name, arch if instrs_with_addrs is None else instrs_with_addrs)
    from .encode import encode
    table = load(arch)
    rows = [(r[0], r[1]) for r in instrs_with_addrs]
    if width is None:
        width = listing_width([(function_name, rows)], table)
    out = [f"\t\tFunction : {function_name}", f"\t.headerflags\t{TARGETS[arch].header_flags if arch in TARGETS else ''}"]
    for row in instrs_with_addrs:
        addr, instr = row[0], row[1]
        raw = row[2] if len(row) > 2 else encode(instr, addr, table)
        lo, hi = int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:16], "little")
        out.append(_left(addr, instr, table).ljust(width) + f"/* 0x{lo:016x} */")
        out.append(" " * width + f"/* 0x{hi:016x} */")
    out.append("\t\t..........")
    return "\n".join(out) + "\n\n\n"


def format_file(functions, arch: str = "sm_89") -> str:
    """The whole output of cuobjdump -sass for a cubin holding these functions
    [(name, [(addr, Instr)])], in the order given (cuobjdump follows the order of the
    .text sections, which ptxas writes last kernel first)."""
    functions = [(name, list(rows)) for name, rows in functions]
    width = listing_width([(n, [(r[0], r[1]) for r in rows]) for n, rows in functions], load(arch))
    body = "".join(format_listing(name, rows, arch, width) for name, rows in functions)
    return f"\n\tcode for {arch}\n\t.target\t{arch}\n\n" + body


def format_cubin(cubin) -> str:
    """cuobjdump -sass for a cubin read by ptxc.cubin.reader (anything with `arch` and
    `sections` having `name` and `data`): every .text.<function>, decoded."""
    from .decode import decode_all
    table = load(cubin.arch)
    functions = [(s.name[len(".text."):], [(a, i, s.data[a:a + 16]) for a, i in decode_all(s.data, 0, table)])
                 for s in cubin.sections if s.name.startswith(".text.")]
    return format_file(functions, cubin.arch)
