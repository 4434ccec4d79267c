"""Instruction selection builders for integer arithmetic, logic, shifts and moves.

Each builder takes (selector, PTX instruction) and emits SASS through the selector
(see select_instrs.py for the conventions).  The idioms are ptxas's for sm_89:
IADD3 for adds (a negated source for subtraction), IMAD for multiplies (IMAD.SHL
for shifts by constants, IMAD.WIDE for 32x32->64), SHF for variable and 64-bit
shifts, LOP3 truth tables for logic, IMNMX for min/max, IABS, PRMT to move bytes,
and 64-bit arithmetic as IADD3 + IADD3.X carry chains; PTX's carry flag (add.cc,
addc, madc, ...) is a virtual predicate the selector passes from writer to reader.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..ptx import ir as ptx
from ..sass.ir import Block, Imm, Instr, Reg, RZ, PT
from .select_instrs import Selector, Unsupported, _type_size, half
from .vregs import encodable

ZERO = Reg("R", RZ)
ZERO64 = Reg("R", RZ, width=2)
TRUE = Reg("P", PT)
FALSE = Reg("P", PT, inv=True)

# LOP3 truth tables over inputs a = 0xF0, b = 0xCC, c = 0xAA.
LUT_AND, LUT_OR, LUT_XOR, LUT_NOT_B = 0xC0, 0xFC, 0x3C, 0x33
LUT_SELECT_B_A_C = 0xE2          # b ? a : c, bit by bit (bfi: insert a under mask b into c)
LUT_OR_NOT_B = 0xF3              # a | ~b (bfe.s64: the sign bits above the field)
LUT_A_OR_B_AND_NOT_C = 0xF4      # a | (b & ~c) (bfi.b64: the field into b outside the window)
BOOL_LUT = {"and": LUT_AND, "or": LUT_OR, "xor": LUT_XOR}


def type_of(i: ptx.Instr) -> str:
    return i.parts[-1]


def size_of(type_: str) -> int:
    return _type_size(type_)


def neg(op):
    """-op for an IADD3 source: a register gets the negation flag, an immediate is negated."""
    if isinstance(op, Imm):
        return Imm(-op.bits & 0xFFFFFFFF, "int")
    return replace(op, neg=not op.neg)


def lop3(s: Selector, d, a, b, c, lut: int):
    s.emit("LOP3", ("LUT",), [d], [a, b, c, Imm(lut, "int"), FALSE])


def first_reg(s: Selector, a, b, type_: str):
    """Operands of a commutative op with a register first (constants go second)."""
    va, vb = s.value(a, type_), s.value(b, type_)
    if not isinstance(va, Reg) and isinstance(vb, Reg):
        va, vb = vb, va
    if not isinstance(va, Reg):
        va = s.materialize(va)
    return va, vb


# ---- extension of 8/16-bit values held in 32-bit registers ------------------------------

def extend(s: Selector, op, type_: str):
    """A source of a 8/16-bit type as a full 32-bit value (sign- or zero-extended);
    immediates are extended already (select_instrs.immediate_bits)."""
    value = s.value(op, type_)
    size = size_of(type_)
    if size >= 4 or not isinstance(value, Reg):
        return value
    return extend_reg(s, value, size, type_.startswith("s"))


def extend_reg(s: Selector, reg: Reg, size: int, signed: bool) -> Reg:
    dst = s.new()
    if signed:  # PRMT's sign-replicating selector nibbles: 0x8 | byte
        s.emit("PRMT", (), [dst], [reg, Imm(0x8880 if size == 1 else 0x9910, "int"), ZERO])
    else:
        lop3(s, dst, reg, Imm(0xFF if size == 1 else 0xFFFF, "int"), ZERO, LUT_AND)
    return dst


# ---- 64-bit helpers -------------------------------------------------------------------

def wide(s: Selector, op, type_: str) -> Reg:
    """A 64-bit source in a register pair."""
    value = s.value(op, type_)
    if isinstance(value, Reg) and value.width == 2:
        return value
    if isinstance(value, Reg):    # a 32-bit register used as 64 bits (b32 -> b64 moves)
        raise Unsupported(f"32-bit register {op.name if hasattr(op, 'name') else op} used as 64-bit")
    return s.materialize(value, 2)


def add64(s: Selector, d: Reg, a: Reg, b, negate: bool = False):
    """d = a + b (or a - b) over register pairs: IADD3 + IADD3.X with the carry in a predicate."""
    carry = s.new_pred()
    if negate:
        s.emit("IADD3", (), [half(d, 0), carry], [half(a, 0), neg(half(b, 0)), ZERO])
        s.emit("IADD3", ("X",), [half(d, 1)], [half(a, 1), replace(half(b, 1), inv=True), ZERO, carry, FALSE])
    else:
        s.emit("IADD3", (), [half(d, 0), carry], [half(a, 0), half(b, 0), ZERO])
        s.emit("IADD3", ("X",), [half(d, 1)], [half(a, 1), half(b, 1), ZERO, carry, FALSE])


# ---- the PTX carry flag ----------------------------------------------------------------
#
# add.cc, sub.cc, mad.cc and the c-forms (addc, subc, madc) pass CC.CF from one
# instruction to the next.  On sm_89 the carry lives in a predicate: IADD3 writes
# it (`IADD3 d, P, a, b, RZ`) and IADD3.X reads it (`IADD3.X d, a, b, RZ, P, !PT`),
# so the selector gives each carry-out a virtual predicate and the next carry-in
# reads it: an ordinary register dependency keeps producer and consumer in order
# through the later passes.  A subtraction adds the complement, as ptxas does:
# -b without a carry in, ~b plus the carry with one, so the predicate holds "no
# borrow" and mixed add/sub chains mean what they mean to ptxas.


@dataclass
class Carry:
    """The predicate that holds CC.CF now, and the block whose code wrote it."""
    pred: Reg
    block: Block


def carry_in(s: Selector) -> Reg:
    """The carry an addc/subc/madc reads.  Before any carry-out in the function the
    flag is clear (!PT); a carry set before a PTX label is not followed into it
    (another path may reach the label with a different flag)."""
    carry: Carry | None = s.carry
    if carry is None:
        return FALSE
    if carry.block is not s.block and _label_between(s, carry.block):
        raise Unsupported("the carry flag (CC.CF) read after a label; it was set before it")
    return carry.pred


def carry_out(s: Selector) -> Reg:
    """The predicate a carry-out writes, which becomes the current carry.  A guarded
    instruction writes the current carry's register, so that when the guard is false
    the flag keeps its old value, as in PTX."""
    carry: Carry | None = s.carry
    pred = carry.pred if s.guard is not None and carry is not None else s.new_pred()
    s.carry = Carry(pred, s.block)
    return pred


def _label_between(s: Selector, since: Block) -> bool:
    labels = {item.name for item in s.ptx_func.body if isinstance(item, ptx.Label)}
    blocks = s.func.blocks
    start = next(k for k, block in enumerate(blocks) if block is since)
    return any(block.label in labels for block in blocks[start + 1:])


def words(s: Selector, op, type_: str) -> list:
    """A source of a 32- or 64-bit carry operation as its 32-bit words, low first."""
    if size_of(type_) == 8:
        pair = wide(s, op, type_)
        return [half(pair, 0), half(pair, 1)]
    return [s.value(op, type_)]


def dst_words(d: Reg) -> list[Reg]:
    return [half(d, 0), half(d, 1)] if d.width == 2 else [d]


def add_chain(s: Selector, dsts: list[Reg], a_words: list, b_words: list, subtract: bool,
              carry: Reg | None, with_carry_out: bool):
    """dsts = a + b (+ carry) or a - b (- borrow), word by word, low first, each word's
    carry into the next; the last word's carry-out becomes the PTX carry flag."""
    last = len(dsts) - 1
    for k, (d, a, b) in enumerate(zip(dsts, a_words, b_words)):
        out = None
        if k < last:
            out = s.new_pred()
        elif with_carry_out:
            out = carry_out(s)
        add_word(s, d, a, b, subtract, carry, out)
        carry = out


def add_word(s: Selector, d: Reg, a, b, subtract: bool, carry: Reg | None, out: Reg | None):
    """One 32-bit word of a carry chain: IADD3 (carry-out in `out`) or IADD3.X (carry-in)."""
    if subtract:
        b = _complement(s, b) if carry is not None else _negate(s, b, out is not None)
    if not isinstance(a, Reg) and isinstance(b, Reg):
        a, b = b, a
    a = _in_reg(s, a)
    dsts = [d] + ([out] if out is not None else [])
    if carry is None:
        s.emit("IADD3", (), dsts, [a, b, ZERO])
    else:
        s.emit("IADD3", ("X",), dsts, [a, b, ZERO, carry, FALSE])


def _negate(s: Selector, b, carry_wanted: bool):
    """-b for a subtraction without a carry in.  a - 0 sets the carry (no borrow),
    which adding the immediate 0 would not: -x adds ~x + 1, so ptxas negates a
    register that holds zero (`UMOV UR4, URZ; IADD3 R, P, a, -UR4, RZ`)."""
    if isinstance(b, Imm) and b.bits == 0 and carry_wanted:
        return neg(s.materialize(b))
    if not isinstance(b, (Reg, Imm)):
        b = s.materialize(b)
    return neg(b)


def _complement(s: Selector, b):
    """~b: with the carry in, a + ~b + carry == a - b - borrow."""
    if isinstance(b, Imm):
        return Imm(~b.bits & 0xFFFFFFFF, "int")
    b = _in_reg(s, b)
    return replace(b, inv=not b.inv)


# ---- builders --------------------------------------------------------------------------

def add_carry(s: Selector, i: ptx.Instr):
    """add.cc / sub.cc and addc / subc (.cc), 32- or 64-bit (two words chained)."""
    d, a, b = i.operands
    t = type_of(i)
    carry = carry_in(s) if i.base in ("addc", "subc") else None
    add_chain(s, dst_words(s.reg(d)), words(s, a, t), words(s, b, t), i.base in ("sub", "subc"), carry,
              i.has("cc"))


def mad_carry(s: Selector, i: ptx.Instr):
    """mad.lo/hi.cc and madc.lo/hi (.cc): the product's low or high half, then its
    addition to c in the carry chain (ptxas fuses some into IMAD.WIDE.U32 with a
    carry-out; the separate IMAD and IADD3 compute the same)."""
    d, a, b, c = i.operands
    t = type_of(i)
    signed = t.startswith("s")
    carry = carry_in(s) if i.base == "madc" else None
    if size_of(t) == 8:
        product = s.new(2)
        if i.has("hi"):
            from .isel_math import mul_hi64
            mul_hi64(s, product, wide(s, a, t), wide(s, b, t), signed)
        else:
            mul_lo64(s, product, wide(s, a, t), wide(s, b, t))
    else:
        product = s.new()
        mods = (("HI",) if signed else ("HI", "U32")) if i.has("hi") else ()
        va, vb = first_reg(s, a, b, t)
        s.emit("IMAD", mods, [product], [va, vb, ZERO])
    add_chain(s, dst_words(s.reg(d)), dst_words(product), words(s, c, t), False, carry, i.has("cc"))


def add_int(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        s.emit("IADD", ("64",), [s.reg(d)], [wide(s, a, t), wide(s, b, t)], comment="pseudo: expand_wide_ops")
        return
    va, vb = first_reg(s, a, b, t)
    s.emit("IADD3", (), [s.reg(d)], [va, vb, ZERO])


def sub_int(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        add64(s, s.reg(d), wide(s, a, t), wide(s, b, t), negate=True)
        return
    va, vb = s.value(a, t), s.value(b, t)
    if isinstance(va, Reg):
        s.emit("IADD3", (), [s.reg(d)], [va, neg(vb), ZERO])
    elif isinstance(vb, Reg):
        s.emit("IADD3", (), [s.reg(d)], [neg(vb), va, ZERO])
    else:
        s.emit("IADD3", (), [s.reg(d)], [s.materialize(va), neg(vb), ZERO])


def neg_int(s: Selector, i: ptx.Instr):
    d, a = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        add64(s, s.reg(d), ZERO64, wide(s, a, t), negate=True)
        return
    s.emit("IADD3", (), [s.reg(d)], [ZERO, neg(s.r(a, t)), ZERO])


def mul_lo(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        mul_lo64(s, s.reg(d), wide(s, a, t), wide(s, b, t))
        return
    va, vb = first_reg(s, a, b, t)
    s.emit("IMAD", (), [s.reg(d)], [va, vb, ZERO])


def mul24_lo(s: Selector, i: ptx.Instr):
    """mul24.lo d, a, b: the low 32 bits of the product of a's and b's low 24 bits
    (sign-extended for .s32: SGXT; masked for .u32: LOP3), then one IMAD."""
    d, a, b = i.operands
    t = type_of(i)
    narrowed = []
    for op in (a, b):
        r = _in_reg(s, s.value(op, t))
        n = s.new()
        if t == "s32":
            s.emit("SGXT", (), [n], [r, Imm(24, "int")])
        else:
            lop3(s, n, r, Imm(0xFFFFFF, "int"), ZERO, LUT_AND)
        narrowed.append(n)
    s.emit("IMAD", (), [s.reg(d)], [narrowed[0], narrowed[1], ZERO])


def mul_lo64(s: Selector, d: Reg, a: Reg, b: Reg, addend: Reg | None = None):
    """d = a * b (mod 2^64): the low product wide, the cross terms into the high word."""
    cross = s.new()
    s.emit("IMAD", (), [cross], [half(a, 1), half(b, 0), ZERO])
    s.emit("IMAD", (), [cross], [half(a, 0), half(b, 1), cross])
    low = s.new(2)
    s.emit("IMAD", ("WIDE", "U32"), [low], [half(a, 0), half(b, 0), addend or ZERO64])
    s.emit("MOV", (), [half(d, 0)], [half(low, 0)])
    s.emit("IADD3", (), [half(d, 1)], [half(low, 1), cross, ZERO])


def mad_lo(s: Selector, i: ptx.Instr):
    d, a, b, c = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        mul_lo64(s, s.reg(d), wide(s, a, t), wide(s, b, t), wide(s, c, t))
        return
    va, vb = first_reg(s, a, b, t)
    s.emit("IMAD", (), [s.reg(d)], [va, vb, s.value(c, t)])


def mul_hi(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        from .isel_math import mul_hi64
        mul_hi64(s, s.reg(d), wide(s, a, t), wide(s, b, t), t.startswith("s"))
        return
    if size_of(t) < 4:
        va, vb = extend(s, a, t), extend(s, b, t)
        prod = s.new()
        s.emit("IMAD", (), [prod], [_in_reg(s, va), vb, ZERO])
        s.emit("SHF", ("R", "S32" if t.startswith("s") else "U32", "HI"), [s.reg(d)], [ZERO, Imm(16, "int"), prod])
        return
    mods = ("HI",) if t.startswith("s") else ("HI", "U32")
    va, vb = first_reg(s, a, b, t)
    s.emit("IMAD", mods, [s.reg(d)], [va, vb, ZERO])


def mad_hi(s: Selector, i: ptx.Instr):
    d, a, b, c = i.operands
    t = type_of(i)
    mods = ("HI",) if t.startswith("s") else ("HI", "U32")
    va, vb = first_reg(s, a, b, t)
    prod = s.new()
    s.emit("IMAD", mods, [prod], [va, vb, ZERO])
    s.emit("IADD3", (), [s.reg(d)], [prod, s.value(c, t), ZERO])


def mul_wide(s: Selector, i: ptx.Instr):
    d, a, b = i.operands[:3]
    addend = i.operands[3] if len(i.operands) == 4 else None
    t = type_of(i)
    if size_of(t) == 2:   # 16x16 -> 32: extend, then an ordinary 32-bit multiply
        va, vb = extend(s, a, t), extend(s, b, t)
        if not isinstance(va, Reg):
            va, vb = vb, va
        c = s.value(addend, "s32" if t.startswith("s") else "u32") if addend is not None else ZERO
        s.emit("IMAD", (), [s.reg(d)], [_in_reg(s, va), vb, c])
        return
    mods = ("WIDE",) if t.startswith("s") else ("WIDE", "U32")
    va, vb = first_reg(s, a, b, t)
    c = wide(s, addend, "s64" if t.startswith("s") else "u64") if addend is not None else ZERO64
    s.emit("IMAD", mods, [s.reg(d)], [va, vb, c])


def _in_reg(s: Selector, value) -> Reg:
    return value if isinstance(value, Reg) else s.materialize(value)


def logic(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    t = type_of(i)
    lut = BOOL_LUT[i.base]
    if t == "pred":
        s.emit("PLOP3", ("LUT",), [s.reg(d), TRUE], [s.value(a, t), s.value(b, t), TRUE, Imm(lut, "int"),
                                                      Imm(0, "int")])
        return
    if size_of(t) == 8:
        va, vb = wide(s, a, t), s.value(b, t)
        vb = wide(s, b, t)
        for k in (0, 1):
            lop3(s, half(s.reg(d), k), half(va, k), half(vb, k), ZERO, lut)
        return
    va, vb = first_reg(s, a, b, t)
    lop3(s, s.reg(d), va, vb, ZERO, lut)


def not_(s: Selector, i: ptx.Instr):
    d, a = i.operands
    t = type_of(i)
    if t == "pred":
        s.emit("PLOP3", ("LUT",), [s.reg(d), TRUE], [s.value(a, t), TRUE, TRUE, Imm(0x0F, "int"), Imm(0, "int")])
        return
    if size_of(t) == 8:
        va = wide(s, a, t)
        for k in (0, 1):
            lop3(s, half(s.reg(d), k), ZERO, half(va, k), ZERO, LUT_NOT_B)
        return
    lop3(s, s.reg(d), ZERO, s.value(a, t), ZERO, LUT_NOT_B)


def cnot(s: Selector, i: ptx.Instr):
    d, a = i.operands
    t = type_of(i)
    p = s.new_pred()
    if size_of(t) == 8:     # both words are zero: 1, a 64-bit result (the high word 0)
        compare64(s, p, "eq", False, wide(s, a, t), ZERO64)
        s.emit("SEL", (), [half(s.reg(d), 0)], [_one(s), ZERO, p])
        s.emit("MOV", (), [half(s.reg(d), 1)], [ZERO])
        return
    s.emit("ISETP", ("EQ", "U32", "AND"), [p, TRUE], [s.r(a, t), ZERO, TRUE])
    s.emit("SEL", (), [s.reg(d)], [_one(s), ZERO, p])


def _one(s: Selector) -> Reg:
    return s.materialize(Imm(1, "int"))


def shl(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    t = type_of(i)
    amount = s.value(b, "u32")
    if size_of(t) == 8:
        shift64(s, s.reg(d), wide(s, a, t), amount, "L", False)
        return
    va = s.r(a, t)
    if isinstance(amount, Imm):
        k = amount.bits
        if k >= 8 * max(size_of(t), 4):
            s.emit("MOV", (), [s.reg(d)], [ZERO])
        else:
            shl = Instr("IMAD", ("SHL", "U32"), [s.reg(d)], [va, Imm(1 << k, "int"), ZERO])
            # nvdisasm prints IMAD.SHL only for some powers of two (not 0x10000): the table says which
            s.emit("IMAD", ("SHL", "U32") if 1 <= k < 31 and encodable(shl, s.arch) else (), [s.reg(d)],
                   [va, Imm(1 << k, "int"), ZERO])
        return
    s.emit("SHF", ("L", "U32"), [s.reg(d)], [va, amount, ZERO])


def shr(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    t = type_of(i)
    signed = t.startswith("s")
    amount = s.value(b, "u32")
    if size_of(t) == 8:
        shift64(s, s.reg(d), wide(s, a, t), amount, "R", signed)
        return
    va = extend(s, a, t)
    va = _in_reg(s, va)
    if isinstance(amount, Imm) and amount.bits > 31:
        amount = Imm(31 if signed else 32, "int")
    s.emit("SHF", ("R", "S32" if signed else "U32", "HI"), [s.reg(d)], [ZERO, amount, va])


def shift64(s: Selector, d: Reg, a: Reg, amount, direction: str, signed: bool):
    """64-bit shifts: a funnel shift for the word that takes bits from both halves and
    a 32-bit shift for the other (SHF clamps the amount, as PTX does)."""
    lo, hi = half(a, 0), half(a, 1)
    if isinstance(amount, Imm) and amount.bits >= 32:
        k = min(amount.bits, 64) - 32
        if direction == "L":
            s.emit("MOV", (), [half(d, 0)], [ZERO])
            s.emit("SHF", ("L", "U32"), [half(d, 1)], [lo, Imm(k, "int"), ZERO])
        else:
            typ = "S32" if signed else "U32"
            s.emit("SHF", ("R", typ, "HI"), [half(d, 0)], [ZERO, Imm(min(k, 31) if signed else k, "int"), hi])
            if signed:
                s.emit("SHF", ("R", "S32", "HI"), [half(d, 1)], [ZERO, Imm(31, "int"), hi])
            else:
                s.emit("MOV", (), [half(d, 1)], [ZERO])
        return
    if direction == "L":
        s.emit("SHF", ("L", "U64", "HI"), [half(d, 1)], [lo, amount, hi])
        s.emit("SHF", ("L", "U32"), [half(d, 0)], [lo, amount, ZERO])
    else:
        typ = ("S64", "S32") if signed else ("U64", "U32")
        s.emit("SHF", ("R", typ[0]), [half(d, 0)], [lo, amount, hi])
        s.emit("SHF", ("R", typ[1], "HI"), [half(d, 1)], [ZERO, amount, hi])


def min_max(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    t = type_of(i)
    is_min = i.base == "min"
    if size_of(t) == 8:
        va, vb = wide(s, a, t), wide(s, b, t)
        p = s.new_pred()
        compare64(s, p, "lt" if is_min else "gt", t.startswith("s"), va, vb)
        for k in (0, 1):
            s.emit("SEL", (), [half(s.reg(d), k)], [half(va, k), half(vb, k), p])
        return
    va, vb = extend(s, a, t), extend(s, b, t)
    if not isinstance(va, Reg):
        va, vb = vb, va
    mods = () if t.startswith("s") else ("U32",)
    s.emit("IMNMX", mods, [s.reg(d)], [_in_reg(s, va), vb, TRUE if is_min else FALSE])


def abs_int(s: Selector, i: ptx.Instr):
    d, a = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        va = wide(s, a, t)
        negated = s.new(2)
        add64(s, negated, ZERO64, va, negate=True)
        p = s.new_pred()
        s.emit("ISETP", ("LT", "AND"), [p, TRUE], [half(va, 1), ZERO, TRUE])
        for k in (0, 1):
            s.emit("SEL", (), [half(s.reg(d), k)], [half(negated, k), half(va, k), p])
        return
    s.emit("IABS", (), [s.reg(d)], [_in_reg(s, extend(s, a, t))])


def compare64(s: Selector, p: Reg, cmp: str, signed: bool, a: Reg, b: Reg, combine=None, bool_op="AND"):
    """p = a cmp b over 64-bit pairs: unsigned compare of the low words, then the
    high words with .EX folding the low result in (ISETP.*.EX)."""
    low = s.new_pred()
    s.emit("ISETP", (ISETP_CMP[cmp], "U32", "AND"), [low, TRUE], [half(a, 0), half(b, 0), TRUE])
    mods = [ISETP_CMP[cmp]] + ([] if signed and cmp not in UNSIGNED_CMP else ["U32"]) + [bool_op, "EX"]
    s.emit("ISETP", tuple(mods), [p, TRUE], [half(a, 1), half(b, 1), combine or TRUE, low])


ISETP_CMP = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE",
             "lo": "LT", "ls": "LE", "hi": "GT", "hs": "GE"}
UNSIGNED_CMP = {"lo", "ls", "hi", "hs"}


def popc(s: Selector, i: ptx.Instr):
    d, a = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        va = wide(s, a, t)
        lo, hi = s.new(), s.new()
        s.emit("POPC", (), [lo], [half(va, 0)])
        s.emit("POPC", (), [hi], [half(va, 1)])
        s.emit("IADD3", (), [s.reg(d)], [lo, hi, ZERO])
        return
    s.emit("POPC", (), [s.reg(d)], [s.r(a, t)])


def clz(s: Selector, i: ptx.Instr):
    d, a = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        va = wide(s, a, t)
        p = s.new_pred()
        s.emit("ISETP", ("NE", "U32", "AND"), [p, TRUE], [half(va, 1), ZERO, TRUE])
        word, top = s.new(), s.new()
        s.emit("SEL", (), [word], [half(va, 1), half(va, 0), p])
        s.emit("FLO", ("U32",), [top], [word])
        base = s.new()
        s.emit("SEL", (), [base], [s.materialize(Imm(31, "int")), Imm(63, "int"), p])
        s.emit("IADD3", (), [s.reg(d)], [base, neg(top), ZERO])
        return
    top = s.new()
    s.emit("FLO", ("U32",), [top], [s.r(a, t)])
    s.emit("IADD3", (), [s.reg(d)], [neg(top), Imm(31, "int"), ZERO])


def bfind(s: Selector, i: ptx.Instr):
    d, a = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        bfind64(s, i, d, a, t)
        return
    mods = ("U32",) if t.startswith("u") else ()
    if i.has("shiftamt"):
        mods += ("SH",)
    s.emit("FLO", mods, [s.reg(d)], [s.r(a, t)])


def bfind64(s: Selector, i: ptx.Instr, d, a, t: str):
    """The highest set (or, signed, non-sign) bit of a 64-bit value: FLO of the high
    word plus 32 if it has one, else FLO of the low word (-1 if none).  .shiftamt
    gives 63 minus that (all ones when no bit is set)."""
    va = wide(s, a, t)
    hi, lo = half(va, 1), half(va, 0)
    signed = t.startswith("s")
    word_hi, word_lo = s.new(), s.new()
    s.emit("FLO", () if signed else ("U32",), [word_hi], [hi])
    p = s.new_pred()
    s.emit("ISETP", ("NE", "AND"), [p, TRUE], [word_hi, Imm(0xFFFFFFFF, "int"), TRUE])
    low_src = lo
    if signed:   # below a sign-only high word, the low word counts bits unlike the sign
        sign = s.new()
        s.emit("SHF", ("R", "S32", "HI"), [sign], [ZERO, Imm(31, "int"), hi])
        low_src = s.new()
        lop3(s, low_src, lo, sign, ZERO, LUT_XOR)
    s.emit("FLO", ("U32",), [word_lo], [low_src])
    top = s.new()
    s.emit("IADD3", (), [top], [word_hi, Imm(32, "int"), ZERO])
    result = s.reg(d) if not i.has("shiftamt") else s.new()
    s.emit("SEL", (), [result], [top, word_lo, p])
    if i.has("shiftamt"):
        none = s.new_pred()
        s.emit("ISETP", ("EQ", "AND"), [none, TRUE], [result, Imm(0xFFFFFFFF, "int"), TRUE])
        amount = s.new()
        s.emit("IADD3", (), [amount], [neg(result), Imm(63, "int"), ZERO])
        s.emit("SEL", (), [s.reg(d)], [amount, Imm(0xFFFFFFFF, "int"), replace(none, inv=True)])


def brev(s: Selector, i: ptx.Instr):
    d, a = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        va = wide(s, a, t)
        s.emit("BREV", (), [half(s.reg(d), 0)], [half(va, 1)])
        s.emit("BREV", (), [half(s.reg(d), 1)], [half(va, 0)])
        return
    s.emit("BREV", (), [s.reg(d)], [s.r(a, t)])


def bfi(s: Selector, i: ptx.Instr):
    """bfi d, a, b, pos, len: a's low len bits inserted into b at pos.  Constant pos
    and len (what nvcc writes for bit fields) are a shift and one LOP3 per word;
    variable ones are ptxas's sequences (bfi_variable, bfi_variable64)."""
    d, a, b, pos, length = i.operands
    t = type_of(i)
    if not (isinstance(pos, ptx.Imm) and isinstance(length, ptx.Imm)):
        (bfi_variable64 if size_of(t) == 8 else bfi_variable)(s, i)
        return
    p, n = int(pos.value), int(length.value)
    bits = 8 * size_of(t)
    mask = ((1 << min(n, bits)) - 1) << p & ((1 << bits) - 1) if p < bits else 0
    if size_of(t) == 8:
        va, vb = wide(s, a, t), wide(s, b, t)
        shifted = s.new(2)
        shift64(s, shifted, va, Imm(p, "int"), "L", False)
        for k in (0, 1):
            word_mask = (mask >> (32 * k)) & 0xFFFFFFFF
            lop3(s, half(s.reg(d), k), half(shifted, k), Imm(word_mask, "int"), half(vb, k), LUT_SELECT_B_A_C)
        return
    va, vb = s.r(a, t), s.value(b, t)
    shifted = s.new()
    s.emit("SHF", ("L", "U32"), [shifted], [va, Imm(min(p, 32), "int"), ZERO])
    lop3(s, s.reg(d), shifted, Imm(mask, "int"), _in_reg(s, vb), LUT_SELECT_B_A_C)


def bfe(s: Selector, i: ptx.Instr):
    """bfe d, a, pos, len with constant pos/len: a shift left then an arithmetic or
    logical shift right brings the field down, sign- or zero-extended.  Variable
    pos/len and 64-bit values: ptxas's sequences (bfe_variable, bfe64)."""
    d, a, pos, length = i.operands
    t = type_of(i)
    if size_of(t) == 8:
        bfe64(s, i)
        return
    if not (isinstance(pos, ptx.Imm) and isinstance(length, ptx.Imm)):
        bfe_variable(s, i)
        return
    p, n = min(int(pos.value), 32), min(int(length.value), 32)
    if n == 0:
        s.emit("MOV", (), [s.reg(d)], [ZERO])
        return
    n = min(n, 32 - p) if t.startswith("u") else n
    up = s.new()
    left = 32 - p - n
    if left < 0:
        left, n = 0, 32 - p
    s.emit("SHF", ("L", "U32"), [up], [s.r(a, t), Imm(left, "int"), ZERO])
    s.emit("SHF", ("R", "S32" if t.startswith("s") else "U32", "HI"), [s.reg(d)], [ZERO, Imm(32 - n, "int"), up])


# PRMT selectors of ptxas's variable bit-field code: pos's low byte and len's low byte
# packed into one word (PTX reads only those bytes), then each taken out again.
PACK_POS_LEN, POS_BYTE, LEN_BYTE = 0x7604, 0x4, 0x5


def _pos_len_bytes(s: Selector, pos, length) -> tuple[Reg, Reg]:
    """pos & 0xff and len & 0xff in registers, as ptxas computes them for 32-bit bfe/bfi."""
    packed, p, n = s.new(), s.new(), s.new()
    s.emit("PRMT", (), [packed], [s.r(length, "u32"), Imm(PACK_POS_LEN, "int"), s.r(pos, "u32")])
    s.emit("PRMT", (), [p], [ZERO, Imm(POS_BYTE, "int"), packed])
    s.emit("PRMT", (), [n], [ZERO, Imm(LEN_BYTE, "int"), packed])
    return p, n


def bfe_variable(s: Selector, i: ptx.Instr):
    """32-bit bfe with a register pos or len (ptxas): the value shifted right by pos
    (SHF clamps, arithmetic for signed), then SGXT keeps len bits, zero- or sign-extended."""
    d, a, pos, length = i.operands
    signed = type_of(i).startswith("s")
    p, n = _pos_len_bytes(s, pos, length)
    down = s.new()
    s.emit("SHF", ("R", "S32" if signed else "U32", "HI"), [down], [ZERO, p, s.r(a, type_of(i))])
    s.emit("SGXT", () if signed else ("U32",), [s.reg(d)], [down, n])


def bfi_variable(s: Selector, i: ptx.Instr):
    """32-bit bfi with a register pos or len (ptxas): BMSK builds the field mask, a
    shifted by pos is selected under it into b."""
    d, a, b, pos, length = i.operands
    p, n = _pos_len_bytes(s, pos, length)
    mask, shifted = s.new(), s.new()
    s.emit("BMSK", (), [mask], [p, n])
    s.emit("SHF", ("L", "U32"), [shifted], [s.r(a, "b32"), p, ZERO])
    lop3(s, s.reg(d), shifted, mask, s.r(b, "b32"), LUT_SELECT_B_A_C)


def _low_bits_mask64(s: Selector, n: Reg) -> Reg:
    """(1 << n) - 1 over a register pair (ptxas: SHF.L of 1, then a 64-bit decrement)."""
    one, ones = s.materialize(Imm(1, "int")), s.new(2)
    s.emit("SHF", ("L", "U32"), [half(ones, 0)], [one, n, ZERO])
    s.emit("SHF", ("L", "U64", "HI"), [half(ones, 1)], [one, n, ZERO])
    mask = s.new(2)
    add64(s, mask, ones, s.materialize(Imm(0xFFFFFFFFFFFFFFFF, "int"), 2))
    return mask


def _and64(s: Selector, d: Reg, a: Reg, b: Reg):
    for k in (0, 1):
        lop3(s, half(d, k), half(a, k), half(b, k), ZERO, LUT_AND)


def bfe64(s: Selector, i: ptx.Instr):
    """64-bit bfe (ptxas): the value shifted right by pos, masked to len bits; for
    signed, where the field's top bit (bit len-1) is set, the bits above it are set."""
    d, a, pos, length = i.operands
    t = type_of(i)
    signed = t.startswith("s")
    va, p, n = wide(s, a, t), s.r(pos, "u32"), s.r(length, "u32")
    mask = _low_bits_mask64(s, n)
    down = s.new(2)
    shift64(s, down, va, p, "R", signed)
    if not signed:
        _and64(s, s.reg(d), down, mask)
        return
    field, top, below = s.new(2), s.new(2), s.new()
    _and64(s, field, down, mask)
    s.emit("IADD3", (), [below], [n, Imm(0xFFFFFFFF, "int"), ZERO])
    shift64(s, top, field, below, "R", False)
    negative = s.new_pred()
    compare64(s, negative, "ne", False, top, ZERO64)
    extended = s.new(2)
    for k in (0, 1):
        lop3(s, half(extended, k), half(field, k), half(mask, k), ZERO, LUT_OR_NOT_B)
        s.emit("SEL", (), [half(s.reg(d), k)], [half(extended, k), half(field, k), negative])


def bfi_variable64(s: Selector, i: ptx.Instr):
    """64-bit bfi with a register pos or len (ptxas): (a & mask) << pos, or'ed into
    b with the bits under mask << pos cleared."""
    d, a, b, pos, length = i.operands
    t = type_of(i)
    va, vb, p, n = wide(s, a, t), wide(s, b, t), s.r(pos, "u32"), s.r(length, "u32")
    mask = _low_bits_mask64(s, n)
    field, shifted, window = s.new(2), s.new(2), s.new(2)
    _and64(s, field, va, mask)
    shift64(s, shifted, field, p, "L", False)
    shift64(s, window, mask, p, "L", False)
    for k in (0, 1):
        lop3(s, half(s.reg(d), k), half(shifted, k), half(vb, k), half(window, k), LUT_A_OR_B_AND_NOT_C)


def prmt(s: Selector, i: ptx.Instr):
    d, a, b, c = i.operands
    if len(i.parts) > 2:
        raise Unsupported(f"prmt mode .{i.parts[1]}")
    s.emit("PRMT", (), [s.reg(d)], [s.r(a, "b32"), s.value(c, "b32"), s.r(b, "b32")])


def mov(s: Selector, i: ptx.Instr):
    d, a = i.operands
    t = type_of(i)
    if isinstance(d, ptx.Vector):
        unpack(s, d, a, t)
        return
    if isinstance(a, ptx.Vector):
        pack(s, s.reg(d), a, t)
        return
    if t == "pred":
        src = s.value(a, t)
        if isinstance(src, Imm):
            src = TRUE if src.bits else FALSE
        s.emit("PLOP3", ("LUT",), [s.reg(d), TRUE], [src, TRUE, TRUE, Imm(0xF0, "int"), Imm(0, "int")])
        return
    dst = s.reg(d)
    if dst.width == 2:
        src = s.value(a, t) if not isinstance(a, ptx.Imm) else Imm(_imm64(a, t), "int")
        if isinstance(src, Reg) and src.width == 1:
            raise Unsupported("a 32-bit register moved into a 64-bit one")
        s.emit("MOV", (), [dst], [src], comment="pseudo: expand_wide_ops")
        return
    src = s.value(a, t)
    if isinstance(src, Imm):
        src = Imm(src.bits, "int")
    if isinstance(src, Reg) and src.width == 2:
        src = half(src, 0)
    s.emit("MOV", (), [dst], [src])


def _imm64(op: ptx.Imm, t: str) -> int:
    from .select_instrs import immediate_bits
    return immediate_bits(op, t if size_of(t) == 8 else "b64")


def pack(s: Selector, dst: Reg, vec: ptx.Vector, t: str):
    """mov.b64 d, {lo, hi} / mov.b32 d, {h0, h1}: elements side by side."""
    elems = vec.elems
    if dst.width == 2 and len(elems) == 2:
        for k, e in enumerate(elems):
            s.emit("MOV", (), [half(dst, k)], [_word(s, e)])
        return
    if dst.width == 1 and len(elems) == 2:  # two 16-bit halves
        s.emit("PRMT", (), [dst], [s.r(elems[0], "b16"), Imm(0x5410, "int"), s.r(elems[1], "b16")])
        return
    if dst.width == 2 and len(elems) == 4:  # four 16-bit quarters
        for k in (0, 1):
            s.emit("PRMT", (), [half(dst, k)], [s.r(elems[2 * k], "b16"), Imm(0x5410, "int"),
                                                s.r(elems[2 * k + 1], "b16")])
        return
    raise Unsupported(f"mov of a {len(elems)}-element vector")


def _word(s: Selector, e):
    value = s.value(e, "b32")
    return Imm(value.bits, "int") if isinstance(value, Imm) else value


def unpack(s: Selector, vec: ptx.Vector, src, t: str):
    """mov.b64 {lo, hi}, d / mov.b32 {h0, h1}, d: elements out of a wider register."""
    elems = vec.elems
    value = s.value(src, t)
    if isinstance(value, Reg) and value.width == 2 and len(elems) == 2:
        for k, e in enumerate(elems):
            if isinstance(e, ptx.Reg):
                s.emit("MOV", (), [s.reg(e)], [half(value, k)])
        return
    value = _in_reg(s, value)
    if value.width == 1 and len(elems) == 2:
        if isinstance(elems[0], ptx.Reg):
            s.emit("MOV", (), [s.reg(elems[0])], [value])
        if isinstance(elems[1], ptx.Reg):
            s.emit("SHF", ("R", "U32", "HI"), [s.reg(elems[1])], [ZERO, Imm(16, "int"), value])
        return
    if value.width == 2 and len(elems) == 4:
        for k, e in enumerate(elems):
            if not isinstance(e, ptx.Reg):
                continue
            word = half(value, k // 2)
            if k % 2 == 0:
                s.emit("MOV", (), [s.reg(e)], [word])
            else:
                s.emit("SHF", ("R", "U32", "HI"), [s.reg(e)], [ZERO, Imm(16, "int"), word])
        return
    raise Unsupported(f"mov into a {len(elems)}-element vector")


def selp(s: Selector, i: ptx.Instr):
    d, a, b, c = i.operands
    t = type_of(i)
    p = s.value(c, "pred")
    if size_of(t) == 8:
        va, vb = wide(s, a, t), wide(s, b, t)
        for k in (0, 1):
            s.emit("SEL", (), [half(s.reg(d), k)], [half(va, k), half(vb, k), p])
        return
    va, vb = s.value(a, t), s.value(b, t)
    va = Imm(va.bits, "int") if isinstance(va, Imm) else va
    vb = Imm(vb.bits, "int") if isinstance(vb, Imm) else vb
    if isinstance(va, Imm) and va.bits == 0:      # p ? 0 : b  ==  SEL RZ, b, p
        va = ZERO
    elif isinstance(vb, Imm) and vb.bits == 0 and not isinstance(va, Reg):   # p ? a : 0 == !p ? RZ : a
        va, vb, p = ZERO, va, replace(p, inv=not p.inv)
    if not isinstance(va, Reg) and isinstance(vb, Reg):
        va, vb, p = vb, va, replace(p, inv=not p.inv)
    s.emit("SEL", (), [s.reg(d)], [_in_reg(s, va), vb, p])


def slct(s: Selector, i: ptx.Instr):
    d, a, b, c = i.operands
    t = type_of(i)
    p = s.new_pred()
    if i.parts[-1] == "f32":
        s.emit("FSETP", ("GE", "AND"), [p, TRUE], [s.r(c, "f32"), ZERO, TRUE])
    else:
        s.emit("ISETP", ("GE", "AND"), [p, TRUE], [s.r(c, "s32"), ZERO, TRUE])
    s.emit("SEL", (), [s.reg(d)], [s.r(a, i.parts[1]), s.value(b, i.parts[1]), p])


def shf(s: Selector, i: ptx.Instr):
    """shf.l/r.wrap/clamp.b32 d, a, b, c: the funnel shift of b:a by c (SHF .W wraps
    the amount, plain SHF clamps it; left shifts keep the high word)."""
    d, a, b, c = i.operands
    left = i.parts[1] == "l"
    wrap = ("W",) if i.parts[2] == "wrap" else ()
    mods = ("L",) + wrap + ("U32", "HI") if left else ("R",) + wrap + ("U32",)
    s.emit("SHF", mods, [s.reg(d)], [s.r(a, "b32"), s.value(c, "u32"), s.r(b, "b32")])


def sad(s: Selector, i: ptx.Instr):
    """sad d, a, b, c = |a - b| + c: VABSDIFF (no form adds a register), then IADD3."""
    d, a, b, c = i.operands
    t = type_of(i)
    diff = s.new()
    s.emit("VABSDIFF", () if t.startswith("s") else ("U32",), [diff], [s.r(a, t), s.r(b, t), Imm(0, "int")])
    s.emit("IADD3", (), [s.reg(d)], [diff, s.value(c, t), ZERO])


def vabsdiff4(s: Selector, i: ptx.Instr):
    """vabsdiff4.u32.u32.u32 d, a, b, c (no mask, no secondary op): the four byte-wise
    absolute differences, c unused; `.add` sums them onto c (VABSDIFF4.ACC)."""
    d, a, b, c = i.operands
    if i.parts[1:4] != ["u32", "u32", "u32"] and not (len(i.parts) > 4 and i.parts[1:4] == ["u32", "u32", "u32"]):
        raise Unsupported(f"{i.opcode} (only unsigned bytes)")
    acc = i.has("add")
    s.emit("VABSDIFF4", ("U8",) + (("ACC",) if acc else ()), [s.reg(d)],
           [s.r(a, "b32"), s.r(b, "b32"), s.value(c, "b32") if acc else ZERO])
