"""Instruction selection builders for f32/f64 arithmetic, comparisons and conversions.

ptxas's sm_89 idioms: FADD/FMUL/FFMA with their rounding, .FTZ and .SAT
modifiers (subtraction is FADD with a negated source; neg and abs are FADD with
-RZ), FMNMX for min/max, FSETP/DSETP for comparisons, DADD/DMUL/DFMA, MUFU for
the approximate functions (with ptxas's range reduction where PTX promises
accuracy over the whole range), I2F/I2FP/F2I/F2F/FRND for conversions with
their rounding modes, and PRMT/LOP3/SHF for integer narrowing and widening.
The correctly rounded division, reciprocal and square root are in isel_math.
"""
from __future__ import annotations

from dataclasses import replace

from ..ptx import ir as ptx
from ..sass.ir import Imm, Instr, Reg, RZ, PT
from ..sass.target import target
from .isel_int import (FALSE, TRUE, ZERO, ZERO64, LUT_AND, _in_reg, extend, extend_reg, lop3, size_of, type_of,
                       wide)
from .select_instrs import Rule, Selector, Unsupported, half
from .vregs import encodable

ROUND = {"rn": (), "rz": ("RZ",), "rm": ("RM",), "rp": ("RP",)}
ROUND_INT = {"rni": (), "rzi": ("TRUNC",), "rmi": ("FLOOR",), "rpi": ("CEIL",)}
FRND_MODE = {"rni": (), "rzi": ("TRUNC",), "rmi": ("FLOOR",), "rpi": ("CEIL",)}
FSETP_CMP = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE",
             "equ": "EQU", "neu": "NEU", "ltu": "LTU", "leu": "LEU", "gtu": "GTU", "geu": "GEU",
             "num": "NUM", "nan": "NAN"}
NEG_ZERO = Reg("R", RZ, neg=True)
INT_TYPE = {"s8": "S8", "u8": "U8", "s16": "S16", "u16": "U16", "s32": "S32", "u32": "U32",
            "s64": "S64", "u64": "U64"}


def rounding(i: ptx.Instr) -> tuple:
    for part in i.parts[1:]:
        if part in ROUND:
            return ROUND[part]
    return ()


def ftz(i: ptx.Instr) -> tuple:
    return ("FTZ",) if i.has("ftz") else ()


def sat(i: ptx.Instr) -> tuple:
    return ("SAT",) if i.has("sat") else ()


def fsrc(s: Selector, op):
    return s.value(op, "f32")


def fneg(op):
    if isinstance(op, Imm):
        return Imm(op.bits ^ 0x80000000, op.kind)
    return replace(op, neg=not op.neg)


def fpair(s: Selector, a, b):
    """Two sources of a commutative f32 op, a register first."""
    va, vb = fsrc(s, a), fsrc(s, b)
    if not isinstance(va, Reg) and isinstance(vb, Reg):
        va, vb = vb, va
    return _in_reg(s, va), vb


def dsrc(s: Selector, op) -> Reg:
    return wide(s, op, "f64")


def dsign(s: Selector, op, absolute: bool = True) -> Reg:
    """A source of DADD, DMUL, DFMA or DSETP: a register that `neg.f64` or `abs.f64`
    made from another comes as that one with the operand's modifier (`DFMA R2, -R4,
    R6, R8`), as ptxas reads it; the MOV and LOP3 of the negation are then dead
    where nothing else reads it.  `absolute`: the slot takes |R| (DADD, DSETP; not
    DMUL, DFMA).  Only where both registers have one definition in the function, so
    the source still holds the value the negation read."""
    folded = _sign_ops(s).get(op.name) if isinstance(op, ptx.Reg) else None
    if folded is not None and (absolute or folded[0] == "neg"):
        kind, source = folded
        reg = dsrc(s, source)
        return replace(reg, neg=not reg.neg) if kind == "neg" else replace(reg, abs=True, neg=False)
    return dsrc(s, op)


def _sign_ops(s: Selector) -> dict:
    """PTX register -> ('neg' | 'abs', the register it negates), for the function's
    single-definition `neg.f64` / `abs.f64` of single-definition registers."""
    found = getattr(s, "_f64_sign_ops", None)
    if found is None:
        definitions: dict = {}
        candidates = []
        for instr in s.ptx_func.instrs():
            for reg in _written(instr):
                definitions[reg.name] = definitions.get(reg.name, 0) + 1
            if instr.base in ("neg", "abs") and instr.has("f64") and isinstance(instr.operands[1], ptx.Reg):
                candidates.append(instr)
        found = {}
        for instr in candidates:
            d, a = instr.operands
            if definitions.get(d.name) == 1 and definitions.get(a.name) == 1:
                found[d.name] = (instr.base, a)
        s._f64_sign_ops = found
    return found


def _written(instr: ptx.Instr) -> list:
    """The registers a PTX instruction may write: those of its first operand (a
    register, a vector `{%r1, %r2}` or a pair `%r1|%p1`); more than it writes, for
    stores and branches name no register there."""
    first = instr.operands[0] if instr.operands else None
    if isinstance(first, ptx.Reg):
        return [first]
    if isinstance(first, ptx.Vector):
        return [e for e in first.elems if isinstance(e, ptx.Reg)]
    if isinstance(first, ptx.RegPair):
        return [first.first, first.second]
    return []


# ---- f32 ------------------------------------------------------------------------------

def contractible(i: ptx.Instr) -> str:
    """PTX lets mul and add without an explicit rounding modifier fuse (fuse_ffma)."""
    return "contractible" if not any(p in ROUND for p in i.parts[1:]) and not i.has("sat") else ""


def add_f32(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    va, vb = fpair(s, a, b)
    s.emit("FADD", ftz(i) + rounding(i) + sat(i), [s.reg(d)], [va, vb], comment=contractible(i))


def sub_f32(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    va, vb = fsrc(s, a), fneg(fsrc(s, b))
    if not isinstance(va, Reg) and isinstance(vb, Reg):
        va, vb = vb, va
    s.emit("FADD", ftz(i) + rounding(i) + sat(i), [s.reg(d)], [_in_reg(s, va), vb], comment=contractible(i))


def mul_f32(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    va, vb = fpair(s, a, b)
    s.emit("FMUL", ftz(i) + rounding(i) + sat(i), [s.reg(d)], [va, vb], comment=contractible(i))


def fma_f32(s: Selector, i: ptx.Instr):
    d, a, b, c = i.operands
    va, vb = fpair(s, a, b)
    s.emit("FFMA", ftz(i) + rounding(i) + sat(i), [s.reg(d)], [va, vb, fsrc(s, c)])


def neg_f32(s: Selector, i: ptx.Instr):
    d, a = i.operands
    s.emit("FADD", ftz(i), [s.reg(d)], [fneg(s.r(a, "f32")), NEG_ZERO])


def abs_f32(s: Selector, i: ptx.Instr):
    d, a = i.operands
    s.emit("FADD", ftz(i), [s.reg(d)], [replace(s.r(a, "f32"), abs=True), NEG_ZERO])


def min_max_f32(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    va, vb = fpair(s, a, b)
    mods = ftz(i) + (("NAN",) if i.has("NaN") else ())
    s.emit("FMNMX", mods, [s.reg(d)], [va, vb, TRUE if i.base == "min" else FALSE])


def copysign_f32(s: Selector, i: ptx.Instr):
    """copysign d, a, b: b's magnitude with a's sign (one LOP3: a & 0x80000000 | b & ~)."""
    d, a, b = i.operands
    lop3(s, s.reg(d), s.r(a, "f32"), Imm(0x80000000, "int"), s.r(b, "f32"), 0xE2)


def copysign_f64(s: Selector, i: ptx.Instr):
    """copysign.f64 d, a, b: b's low word, and b's high word with a's sign bit (LOP3)."""
    d, a, b = i.operands
    dst, va, vb = s.reg(d), dsrc(s, a), dsrc(s, b)
    s.emit("MOV", (), [half(dst, 0)], [half(vb, 0)])
    lop3(s, half(dst, 1), half(va, 1), Imm(0x80000000, "int"), half(vb, 1), 0xE2)


def setp_float(s: Selector, i: ptx.Instr):
    dsts = i.operands[0]
    d, a, b = i.operands[:3]
    cmp = FSETP_CMP[i.parts[1]]
    bool_op, combine = _bool_combine(s, i)
    t = type_of(i)
    if t == "f64":
        s.emit("DSETP", (cmp, bool_op), [s.reg(d), TRUE], [dsign(s, a), dsign(s, b), combine])
        return
    if t == "f16":
        raise Unsupported("f16 comparison")
    va, vb = fsrc(s, a), fsrc(s, b)
    if not isinstance(va, Reg) and isinstance(vb, Reg):
        va, vb, cmp = vb, va, MIRROR[cmp]
    s.emit("FSETP", (cmp,) + ftz(i) + (bool_op,), [s.reg(d), TRUE], [_in_reg(s, va), vb, combine])


MIRROR = {"EQ": "EQ", "NE": "NE", "LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE",
          "EQU": "EQU", "NEU": "NEU", "LTU": "GTU", "GTU": "LTU", "LEU": "GEU", "GEU": "LEU",
          "NUM": "NUM", "NAN": "NAN"}


def _bool_combine(s: Selector, i: ptx.Instr):
    """setp's optional .and/.or/.xor with a third predicate source."""
    for op in ("and", "or", "xor"):
        if i.has(op):
            return op.upper(), s.value(i.operands[3], "pred")
    return "AND", TRUE


# ---- f64 ------------------------------------------------------------------------------

def add_f64(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    s.emit("DADD", rounding(i), [s.reg(d)], [dsign(s, a), dsign(s, b)], comment=contractible(i))


def sub_f64(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    vb = dsign(s, b)
    s.emit("DADD", rounding(i), [s.reg(d)], [dsign(s, a), replace(vb, neg=not vb.neg)], comment=contractible(i))


def mul_f64(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    s.emit("DMUL", rounding(i), [s.reg(d)], [dsign(s, a, False), dsign(s, b, False)], comment=contractible(i))


def fma_f64(s: Selector, i: ptx.Instr):
    d, a, b, c = i.operands
    s.emit("DFMA", rounding(i), [s.reg(d)], [dsign(s, a, False), dsign(s, b, False), dsign(s, c, False)])


def neg_f64(s: Selector, i: ptx.Instr):
    """The sign bit flipped (exact for every input, NaNs included)."""
    d, a = i.operands
    va, dst = dsrc(s, a), s.reg(d)
    s.emit("MOV", (), [half(dst, 0)], [half(va, 0)])
    lop3(s, half(dst, 1), half(va, 1), Imm(0x80000000, "int"), ZERO, 0x3C)


def abs_f64(s: Selector, i: ptx.Instr):
    d, a = i.operands
    va, dst = dsrc(s, a), s.reg(d)
    s.emit("MOV", (), [half(dst, 0)], [half(va, 0)])
    lop3(s, half(dst, 1), half(va, 1), Imm(0x7FFFFFFF, "int"), ZERO, LUT_AND)


def min_max_f64(s: Selector, i: ptx.Instr):
    """min/max.f64: DSETP.MIN/MAX selects, as ptxas does; a NaN operand loses to a
    number (if both are NaN the result is the canonical NaN)."""
    d, a, b = i.operands
    va, vb, dst = dsrc(s, a), dsrc(s, b), s.reg(d)
    pick, nan = s.new_pred(), s.new_pred()
    s.emit("DSETP", ("MIN" if i.base == "min" else "MAX", "AND"), [pick, nan], [va, vb, TRUE])
    hi_b = s.new()
    s.emit("MOV", (), [hi_b], [half(vb, 1)])
    s.emit("FSEL", (), [half(dst, 1)], [half(va, 1), hi_b, pick])
    s.emit("SEL", (), [half(dst, 0)], [half(va, 0), half(vb, 0), pick])
    s.emit("LOP3", ("LUT",), [half(dst, 1)], [hi_b, Imm(0x80000, "int"), ZERO, Imm(0xFC, "int"), FALSE],
           pred=nan) if s.guard is None else None


# ---- conversions ------------------------------------------------------------------------

def cvt(s: Selector, i: ptx.Instr):
    """cvt[.rnd][.ftz][.sat].dtype.atype d, a."""
    d, a = i.operands
    dtype, atype = i.parts[-2], i.parts[-1]
    mods = i.parts[1:-2]
    dfloat, afloat = dtype.startswith("f"), atype.startswith("f")
    if dfloat and afloat:
        cvt_float_float(s, i, d, a, dtype, atype, mods)
    elif dfloat:
        cvt_int_float(s, i, d, a, dtype, atype, mods)
    elif afloat:
        cvt_float_int(s, i, d, a, dtype, atype, mods)
    else:
        cvt_int_int(s, i, d, a, dtype, atype)


def cvt_int_int(s: Selector, i, d, a, dtype: str, atype: str):
    """Integer conversions: widening extends by the source type (PRMT / LOP3 for 8 and
    16 bits, SHF for the high word of 64); narrowing keeps the low bits, extended by
    the destination type when it lands in a full 32-bit register."""
    dsize, asize = size_of(dtype), size_of(atype)
    dst = s.reg(d)
    if i.has("sat"):
        raise Unsupported("cvt.sat between integer types")
    src = s.value(a, atype)
    if isinstance(src, Reg) and src.width == 2 and (asize < 8 or dsize < 8):
        src = half(src, 0)
    if dsize == 8:
        if isinstance(src, Reg) and src.width == 2:
            s.emit("MOV", (), [dst], [src], comment="pseudo: expand_wide_ops")
            return
        low = _in_reg(s, src)
        if asize < 4:
            low = extend_reg(s, low, asize, atype.startswith("s"))
        s.emit("MOV", (), [half(dst, 0)], [low])
        if atype.startswith("s"):
            s.emit("SHF", ("R", "S32", "HI"), [half(dst, 1)], [ZERO, Imm(31, "int"), low])
        else:
            s.emit("MOV", (), [half(dst, 1)], [ZERO])
        return
    if not isinstance(src, Reg):
        s.emit("MOV", (), [dst], [Imm(src.bits, "int")])
        return
    if asize < dsize and asize < 4:
        s.emit("MOV", (), [dst], [extend_reg(s, src, asize, atype.startswith("s"))])
        return
    if dsize < 4 and dsize <= asize and _reg_size(s, d) == 4:
        s.emit("MOV", (), [dst], [extend_reg(s, src, dsize, dtype.startswith("s"))])
        return
    s.emit("MOV", (), [dst], [src])


def _reg_size(s: Selector, op) -> int:
    return size_of(s.reg_type(op)) if isinstance(op, ptx.Reg) else 4


def cvt_int_float(s: Selector, i, d, a, dtype: str, atype: str, mods, dst: Reg | None = None):
    """Integer to float; `dst` is the f32 destination when the caller narrows it after."""
    rnd = ()
    for m in mods:
        if m in ROUND:
            rnd = ROUND[m]
    if dtype == "f16":
        raise Unsupported("conversion to f16")
    asize = size_of(atype)
    if dst is None:
        dst = s.reg(d)
    src = None
    if dtype == "f32" and atype in ("s32", "u32") and rnd in ((), ("RZ",)):
        src = s.r(a, atype)
        i2fp = Instr("I2FP", ("F32", INT_TYPE[atype]) + rnd, [dst], [src])
        if encodable(i2fp, s.arch):     # Ada and Hopper have I2FP; Ampere converts with I2F
            s.emit(i2fp.op, i2fp.mods, i2fp.dsts, i2fp.srcs)
            return
    if src is None:
        src = wide(s, a, atype) if asize == 8 else s.r(a, atype)
    type_mod = () if atype == "s32" else (INT_TYPE[atype],)
    s.emit("I2F", (("F64",) if dtype == "f64" else ()) + type_mod + rnd, [dst], [src])


def cvt_float_int(s: Selector, i, d, a, dtype: str, atype: str, mods, src: Reg | None = None):
    """Float to integer; `src` is the f32 source when the caller has widened it already."""
    rnd = ("TRUNC",)
    for m in mods:
        if m in ROUND_INT:
            rnd = ROUND_INT[m]
    if atype == "f16":
        raise Unsupported("conversion from f16")
    dsize = size_of(dtype)
    dst = s.reg(d)
    if src is None:
        src = dsrc(s, a) if atype == "f64" else s.r(a, "f32")
    ftz_mod = ("FTZ",) if "ftz" in mods else ()
    wide_type = dtype if dsize >= 4 else ("s32" if dtype.startswith("s") else "u32")   # s8/s16 via s32
    type_mod = () if wide_type == "s32" else (INT_TYPE[wide_type],)      # S32 is F2I's default: unprinted
    if dsize == 8:
        type_mod = (INT_TYPE[dtype],)
    src_mod = ("F64",) if atype == "f64" else ()
    ntz = () if dsize == 8 or atype == "f64" else ("NTZ",)
    if dsize < 4 and atype == "f64":
        # F2I.{U8,S8,U16,S16}.F64 saturates by itself, as ptxas writes it: through U32 and
        # a clamp a NaN becomes 0x80000000 (the H200's F2I.U32.F64), clamped to 0xff/0xffff,
        # where ptxas's code gives 0x80/0x8000.  Its upper bits are not the extension:
        # extended here as ptxas does before a widening use (LOP3 / PRMT).
        narrow = s.new()
        s.emit("F2I", (INT_TYPE[dtype], "F64") + rnd, [narrow], [src])
        if dtype.startswith("s"):
            s.emit("PRMT", (), [dst], [narrow, Imm(0x8880 if dsize == 1 else 0x9910, "int"), ZERO])
        else:
            lop3(s, dst, narrow, Imm(0xFF if dsize == 1 else 0xFFFF, "int"), ZERO, LUT_AND)
        return
    if dsize < 4:  # saturate to the narrow type, as PTX's float->int conversion does
        wide_dst = s.new()
        s.emit("F2I", ftz_mod + type_mod + src_mod + rnd + ntz, [wide_dst], [src])
        lo, hi = ((-(1 << (8 * dsize - 1))) & 0xFFFFFFFF, (1 << (8 * dsize - 1)) - 1) if dtype.startswith("s") \
            else (0, (1 << (8 * dsize)) - 1)
        clamped = s.new()
        signed = () if dtype.startswith("s") else ("U32",)
        s.emit("IMNMX", signed, [clamped], [wide_dst, Imm(lo, "int"), FALSE])
        s.emit("IMNMX", signed, [dst], [clamped, Imm(hi, "int"), TRUE])
        return
    s.emit("F2I", ftz_mod + type_mod + src_mod + rnd + ntz, [dst], [src])


def cvt_float_float(s: Selector, i, d, a, dtype: str, atype: str, mods):
    dst = s.reg(d)
    ftz_mod = ("FTZ",) if "ftz" in mods else ()
    sat_mod = ("SAT",) if "sat" in mods else ()
    if dtype == atype == "f32":
        for m in mods:
            if m in FRND_MODE:
                s.emit("FRND", ftz_mod + FRND_MODE[m], [dst], [s.r(a, "f32")])
                if sat_mod:
                    s.emit("FADD", ftz_mod + ("SAT",), [dst], [dst, NEG_ZERO])
                return
        s.emit("FADD", ftz_mod + sat_mod, [dst], [s.r(a, "f32"), NEG_ZERO])
        return
    if dtype == atype == "f64":
        for m in mods:
            if m in FRND_MODE:
                s.emit("FRND", ("F64",) + FRND_MODE[m], [dst], [dsrc(s, a)])
                return
        s.emit("MOV", (), [dst], [dsrc(s, a)], comment="pseudo: expand_wide_ops")
        return
    if dtype == "f32" and atype == "f64":
        rnd = ()
        for m in mods:
            if m in ROUND:
                rnd = ROUND[m]
        s.emit("F2F", ftz_mod + ("F32", "F64") + rnd, [dst], [dsrc(s, a)])
        if sat_mod:
            s.emit("FADD", ("SAT",), [dst], [dst, NEG_ZERO])
        return
    if dtype == "f64" and atype == "f32":
        src = s.r(a, "f32")
        if ftz_mod:     # ptxas: FMUL.FTZ x, 1 flushes (and makes a NaN 0x7fffffff), then F2F
            src = s.new()
            s.emit("FMUL", ("FTZ",), [src], [s.r(a, "f32"), Imm(0x3F800000, "f32")])
        s.emit("F2F", ("F64", "F32"), [dst], [src])
        return
    raise Unsupported(f"conversion {dtype} <- {atype}")


# ---- MUFU-based approximations ----------------------------------------------------------

def mufu(s: Selector, func: str, d: Reg, a):
    s.emit("MUFU", (func,), [d], [a])


def rcp_approx(s: Selector, i: ptx.Instr):
    d, a = i.operands
    if type_of(i) == "f64":
        raise Unsupported("rcp.approx.f64")
    mufu(s, "RCP", s.reg(d), s.r(a, "f32"))


def rsqrt_approx(s: Selector, i: ptx.Instr):
    d, a = i.operands
    if type_of(i) == "f64":
        from .isel_math import rsqrt_approx_f64
        rsqrt_approx_f64(s, s.reg(d), dsrc(s, a))
        return
    mufu(s, "RSQ", s.reg(d), s.r(a, "f32"))


def sqrt_approx(s: Selector, i: ptx.Instr):
    d, a = i.operands
    mufu(s, "SQRT", s.reg(d), s.r(a, "f32"))


def sin_cos_approx(s: Selector, i: ptx.Instr):
    """MUFU.SIN/COS take the angle in turns: multiply by 1/(2 pi), rounding to zero."""
    d, a = i.operands
    turns = s.new()
    s.emit("FMUL", ("RZ",), [turns], [s.r(a, "f32"), Imm(0x3E22F983, "f32")])
    mufu(s, "SIN" if i.base == "sin" else "COS", s.reg(d), turns)


def tanh_approx(s: Selector, i: ptx.Instr):
    d, a = i.operands
    mufu(s, "TANH", s.reg(d), s.r(a, "f32"))


def ex2_approx(s: Selector, i: ptx.Instr):
    """ex2.approx.ftz is MUFU.EX2; without .ftz, inputs below -126 are halved and the
    result squared, so that denormal results come out right (ptxas's sequence)."""
    d, a = i.operands
    x = s.r(a, "f32")
    if i.has("ftz"):
        mufu(s, "EX2", s.reg(d), x)
        return
    small = s.new_pred()
    s.emit("FSETP", ("GEU", "AND"), [small, TRUE], [x, Imm(0xC2FC0000, "f32"), TRUE])
    halved, r = s.new(), s.new()
    s.emit("FMUL", (), [halved], [x, Imm(0x3F000000, "f32")])
    s.emit("FSEL", (), [halved], [x, halved, small])
    mufu(s, "EX2", r, halved)
    squared = s.new()
    s.emit("FMUL", (), [squared], [r, r])
    s.emit("FSEL", (), [s.reg(d)], [r, squared, small])


def lg2_approx(s: Selector, i: ptx.Instr):
    """lg2.approx without .ftz: a denormal input is scaled by 2^24 first and 24
    subtracted after (ptxas's sequence)."""
    d, a = i.operands
    x = s.r(a, "f32")
    if i.has("ftz"):
        mufu(s, "LG2", s.reg(d), x)
        return
    tiny = s.new_pred()
    s.emit("FSETP", ("GEU", "AND"), [tiny, TRUE], [x, Imm(0x00800000, "f32"), TRUE])
    scaled, r, fixed = s.new(), s.new(), s.new()
    s.emit("FMUL", (), [scaled], [x, Imm(0x4B800000, "f32")])
    s.emit("FSEL", (), [scaled], [x, scaled, tiny])
    mufu(s, "LG2", r, scaled)
    s.emit("FADD", (), [fixed], [r, Imm(0xC1C00000, "f32")])
    s.emit("FSEL", (), [s.reg(d)], [r, fixed, tiny])


# ---- f16 and f16x2 ------------------------------------------------------------------------
#
# ptxas computes half precision on the HADD2/HMUL2/HFMA2/HMNMX2/HSETP2 pipe, which works
# on a register's two 16-bit halves at once.  An f16x2 operation uses both halves as they
# are; a scalar f16 one reads the low half of each source broadcast to both (`.H0_H0`),
# so its result lands in both halves and the low one is the value (PTX's 16-bit
# registers leave the upper bits unspecified).  What each lowers to was read from ptxas's
# SASS for each PTX instruction alone (scripts/learn_sm89_table.py's "half" probe).

H0 = "H0_H0"
NEG_ZERO_H0 = Reg("R", RZ, neg=True, sel=H0)
ZERO_H0 = Reg("R", RZ, sel=H0)
NEG_ZERO_PLAIN = Reg("R", RZ, neg=True)     # HADD2.F32's -RZ prints no selector


def is_pair(i: ptx.Instr) -> bool:
    return i.parts[-1] in ("f16x2", "bf16x2")


def is_bf16(i: ptx.Instr) -> bool:
    return i.parts[-1] in ("bf16", "bf16x2")


def hsrc(s: Selector, op, pair: bool) -> Reg:
    """A half source: the whole register of an f16x2 value, the low half of an f16 one."""
    reg = s.r(op, "b32" if pair else "b16")
    return reg if pair else replace(reg, sel=H0)


def half_mods(i: ptx.Instr) -> tuple:
    """The HADD2/HMUL2/HFMA2 modifiers of a half instruction: BF16_V2 for bf16 types
    (the same pipe on bfloat16 halves: ptxas's `HFMA2.BF16_V2.RELU`), FTZ, SAT, RELU."""
    return (("BF16_V2",) if is_bf16(i) else ()) + ftz(i) + sat(i) + (("RELU",) if i.has("relu") else ())


def add_f16(s: Selector, i: ptx.Instr):
    """add/sub: HADD2 (sub negates the second source); contractible without .rn."""
    d, a, b = i.operands
    pair = is_pair(i)
    vb = hsrc(s, b, pair)
    if i.base == "sub":
        vb = replace(vb, neg=not vb.neg)
    s.emit("HADD2", half_mods(i), [s.reg(d)], [hsrc(s, a, pair), vb],
           comment="" if is_bf16(i) else contractible(i))


def mul_f16(s: Selector, i: ptx.Instr):
    """HMUL2; without .rn it may contract with an add into HFMA2 (fuse_ffma), as ptxas does."""
    d, a, b = i.operands
    pair = is_pair(i)
    s.emit("HMUL2", half_mods(i), [s.reg(d)], [hsrc(s, a, pair), hsrc(s, b, pair)],
           comment="" if is_bf16(i) else contractible(i))


def fma_f16(s: Selector, i: ptx.Instr):
    d, a, b, c = i.operands
    pair = is_pair(i)
    s.emit("HFMA2", half_mods(i), [s.reg(d)], [hsrc(s, a, pair), hsrc(s, b, pair), hsrc(s, c, pair)])


def neg_f16(s: Selector, i: ptx.Instr):
    """-a + -0: ptxas's negation (exact; -0 for +0).  bf16: -0 * 0 + -a (HFMA2.BF16_V2)."""
    d, a = i.operands
    va = hsrc(s, a, is_pair(i))
    if is_bf16(i):
        s.emit("HFMA2", ("BF16_V2",), [s.reg(d)], [NEG_ZERO_H0, ZERO_H0, replace(va, neg=True)])
        return
    s.emit("HADD2", ftz(i), [s.reg(d)], [replace(va, neg=True), NEG_ZERO_H0])


def abs_f16(s: Selector, i: ptx.Instr):
    """|a| + -0 (bf16: -0 * 0 + |a|, HFMA2.BF16_V2, as ptxas)."""
    d, a = i.operands
    va = hsrc(s, a, is_pair(i))
    if is_bf16(i):
        s.emit("HFMA2", ("BF16_V2",), [s.reg(d)], [NEG_ZERO_H0, ZERO_H0, replace(va, abs=True)])
        return
    s.emit("HADD2", ftz(i), [s.reg(d)], [replace(va, abs=True), NEG_ZERO_H0])


def min_max_f16(s: Selector, i: ptx.Instr):
    """HMNMX2: PT selects the minimum, !PT the maximum; .NaN propagates NaNs."""
    d, a, b = i.operands
    if i.has("xorsign"):
        raise Unsupported(f"'{i.opcode}' (.xorsign.abs)")
    pair = is_pair(i)
    mods = (("BF16_V2",) if is_bf16(i) else ()) + ftz(i) + (("NAN",) if i.has("NaN") else ())
    s.emit("HMNMX2", mods, [s.reg(d)], [hsrc(s, a, pair), hsrc(s, b, pair), TRUE if i.base == "min" else FALSE])


def setp_f16(s: Selector, i: ptx.Instr):
    """HSETP2: f16 compares the low halves into one predicate; f16x2 writes `p|q`, the
    low halves' result and the high halves'."""
    pair = is_pair(i)
    dst = i.operands[0]
    if pair != isinstance(dst, ptx.RegPair):
        raise Unsupported(f"'{i.opcode}' with {'one destination' if pair else 'two destinations (p|q)'}")
    dsts = [s.reg(dst.first), s.reg(dst.second)] if pair else [s.reg(dst), TRUE]
    a, b = i.operands[1:3]
    bool_op, combine = _bool_combine(s, i)
    bf16 = ("BF16_V2",) if is_bf16(i) else ()
    s.emit("HSETP2", bf16 + (FSETP_CMP[i.parts[1]],) + ftz(i) + (bool_op,), dsts,
           [hsrc(s, a, pair), hsrc(s, b, pair), combine])


def cvt_f16(s: Selector, i: ptx.Instr):
    """cvt to or from f16.  f32 <-> f16 and f64 <-> f16 are one instruction (F2FP, HADD2.F32,
    F2F; rounding down or up F2F.F16.F32.RM/.RP as ptxas, F2FP has no such modes).  Integers go through f32, which is exact: f32 holds every f16 and every integer
    up to 2^24, and an integer beyond that is beyond f16's range in every rounding mode
    (rounding toward zero or infinity twice rounds once on f16's coarser grid)."""
    d, a = i.operands
    dtype, atype = i.parts[-2], i.parts[-1]
    mods = i.parts[1:-2]
    if dtype == "f16" and atype == "f16":
        cvt_f16_f16(s, d, a, mods)
    elif dtype == "f16":
        dst = s.reg(d)
        if atype == "f64":
            s.emit("F2F", ftz(i) + ("F16", "F64") + rounding(i), [dst], [dsrc(s, a)])
        else:
            f32 = s.r(a, "f32") if atype == "f32" else s.new()
            if atype != "f32":
                cvt_int_float(s, i, d, a, "f32", atype, mods, dst=f32)
            if set(rounding(i)) & {"RM", "RP"}:     # ptxas: F2F.F16.F32.RM/.RP (and I2F.F16.U32.RM)
                s.emit("F2F", ("F16", "F32") + rounding(i), [dst], [f32])
            else:
                s.emit("F2FP", ("F16", "F32", "PACK_AB") + rounding(i), [dst], [ZERO, f32])
        if i.has("sat"):
            s.emit("HADD2", ("SAT",), [dst], [replace(dst, sel=H0), NEG_ZERO_H0])
    elif atype == "f16" and dtype == "f64":
        # one F2F.F64.F16, as ptxas writes it: through HADD2.F32 a NaN's payload becomes
        # f32's canonical 0x7fffffff (0x7fffffffe0000000 on the H200; ptxas keeps it)
        s.emit("F2F", ("F64", "F16"), [s.reg(d)], [s.r(a, "b16")])
    elif atype == "f16":
        # .ftz changes nothing: an f16 subnormal is a normal f32 (ptxas ignores it too)
        wide_value = widen_f16(s, s.r(a, "b16"), s.reg(d) if dtype == "f32" else None)
        if dtype == "f32":
            if i.has("sat"):
                s.emit("FADD", ("SAT",), [s.reg(d)], [s.reg(d), NEG_ZERO])
        elif dtype == "f64":
            raise AssertionError("cvt.f64.f16 is F2F.F64.F16 (above)")
        else:
            cvt_float_int(s, i, d, a, dtype, "f32", mods, src=wide_value)
    else:
        raise Unsupported(f"conversion {dtype} <- {atype}")


def widen_f16(s: Selector, h: Reg, out: Reg | None = None) -> Reg:
    """f16 (low half) -> f32: HADD2.F32 -0 + h, exact."""
    out = out or s.new()
    s.emit("HADD2", ("F32",), [out], [NEG_ZERO_PLAIN, replace(h, sel=H0)])
    return out


def cvt_f16_f16(s: Selector, d, a, mods):
    """cvt.f16.f16: a copy (.ftz/.sat through HADD2 + -0); rounding to an integer
    (.rni etc.) is FRND on the exact f32 value, narrowed back exactly."""
    dst = s.reg(d)
    src = s.r(a, "b16")
    int_round = next((FRND_MODE[m] for m in mods if m in FRND_MODE), None)
    if int_round is not None:
        wide_value, rounded = widen_f16(s, src), s.new()
        s.emit("FRND", int_round, [rounded], [wide_value])
        s.emit("F2FP", ("F16", "F32", "PACK_AB"), [dst], [ZERO, rounded])
        src = dst
    extra = (("FTZ",) if "ftz" in mods else ()) + (("SAT",) if "sat" in mods else ())
    if extra:
        s.emit("HADD2", extra, [dst], [replace(src, sel=H0), NEG_ZERO_H0])
    elif src is not dst:
        s.emit("MOV", (), [dst], [src])


def cvt_f16x2_f32(s: Selector, i: ptx.Instr):
    """cvt.rn.f16x2.f32 d, a, b: F2FP packs a into the high half and b into the low."""
    d, a, b = i.operands
    s.emit("F2FP", f2fp_clamps(i) + ("F16", "F32", "PACK_AB") + rounding(i), [s.reg(d)],
           [s.r(a, "f32"), s.r(b, "f32")])


def f2fp_clamps(i: ptx.Instr) -> tuple:
    """F2FP's .SATFINITE (overflow to the largest finite value) and .RELU (negative to +0),
    in ptxas's order (F2FP.SATFINITE.RELU.F16.F32...)."""
    return (("SATFINITE",) if i.has("satfinite") else ()) + (("RELU",) if i.has("relu") else ())


def cvt_f16_f32_clamped(s: Selector, i: ptx.Instr):
    """cvt.{rn,rz}{.relu}{.satfinite}.f16.f32: F2FP into the low half, RZ the high one
    (ptxas writes the same conversion as F2FP...MERGE_C d, a, RZ)."""
    d, a = i.operands
    s.emit("F2FP", f2fp_clamps(i) + ("F16", "F32", "PACK_AB") + rounding(i), [s.reg(d)], [ZERO, s.r(a, "f32")])


def cvt_bf16_f32(s: Selector, i: ptx.Instr):
    """cvt.{rn,rz}[.relu].bf16.f32 is F2FP.BF16.F32.PACK_AB into the low half (with RZ
    the high one); .rm/.rp are F2F.BF16.F32.RM/RP (ptxas)."""
    d, a = i.operands
    rnd = rounding(i)
    if rnd in (("RM",), ("RP",)) and i.has("satfinite"):
        raise Unsupported(f"'{i.opcode}'")
    if rnd in (("RM",), ("RP",)):
        s.emit("F2F", ("BF16", "F32") + rnd, [s.reg(d)], [s.r(a, "f32")])
        return
    s.emit("F2FP", f2fp_clamps(i) + ("BF16", "F32", "PACK_AB") + rnd, [s.reg(d)], [ZERO, s.r(a, "f32")])


def cvt_bf16_f64(s: Selector, i: ptx.Instr):
    """cvt.rnd.bf16.f64 (sm_90): F2F.BF16.F64."""
    d, a = i.operands
    s.emit("F2F", ("BF16", "F64") + rounding(i), [s.reg(d)], [dsrc(s, a)])


def cvt_from_bf16(s: Selector, i: ptx.Instr):
    """cvt.f32.bf16 is exact: the 16 bits moved to the top of the word (ptxas's SHF.L
    by 16); f64 widens that f32."""
    d, a = i.operands
    dtype = i.parts[-2]
    wide_value = s.reg(d) if dtype == "f32" else s.new()
    s.emit("SHF", ("L", "U32"), [wide_value], [s.r(a, "b16"), Imm(16, "int"), ZERO])
    if dtype == "f64":
        s.emit("F2F", ("F64", "F32"), [s.reg(d)], [wide_value])


def cvt_bf16_int(s: Selector, i: ptx.Instr):
    """cvt between bf16 and integers (PTX: sm_90 only, ptxas refuses them on sm_89).
    bf16 -> integer: the exact f32 (the bits moved up by 16) converted as f32 -> integer
    is (ptxas: F2I.BF16 directly); integer -> bf16: I2F.BF16 with the rounding, as
    ptxas writes it (through f32 would round twice)."""
    d, a = i.operands
    dtype, atype = i.parts[-2], i.parts[-1]
    mods = i.parts[1:-2]
    if target(s.arch).sm < 90:
        raise Unsupported(f"'{i.opcode}' (cvt between bf16 and integers requires sm_90)")
    if atype == "bf16":
        wide_value = s.new()
        s.emit("SHF", ("L", "U32"), [wide_value], [s.r(a, "b16"), Imm(16, "int"), ZERO])
        cvt_float_int(s, i, d, a, dtype, "f32", mods, src=wide_value)
        return
    if size_of(atype) != 4:
        raise Unsupported(f"'{i.opcode}' (a {atype} source)")
    type_mod = () if atype == "s32" else (INT_TYPE[atype],)
    s.emit("I2F", ("BF16",) + type_mod + rounding(i), [s.reg(d)], [s.r(a, atype)])


def cvt_bf16x2_f32(s: Selector, i: ptx.Instr):
    """cvt.{rn,rz}[.relu].bf16x2.f32 d, a, b: F2FP.BF16.F32.PACK_AB, a high, b low."""
    d, a, b = i.operands
    s.emit("F2FP", f2fp_clamps(i) + ("BF16", "F32", "PACK_AB") + rounding(i), [s.reg(d)],
           [s.r(a, "f32"), s.r(b, "f32")])


def mufu_f16(s: Selector, i: ptx.Instr):
    """ex2/tanh.approx.f16: MUFU.EX2.F16 / MUFU.TANH.F16 on the low half; .f16x2: one per
    half and PRMT 0x5410 joining the results' low halves (ptxas's code, except that it
    reads the high half as `R.H1`)."""
    d, a = i.operands
    func = {"ex2": "EX2", "tanh": "TANH"}[i.base]
    if not is_pair(i):
        s.emit("MUFU", (func, "F16"), [s.reg(d)], [s.r(a, "b16")])
        return
    src = s.r(a, "b32")
    low, high, upper = s.new(), s.new(), s.new()
    s.emit("MUFU", (func, "F16"), [low], [src])
    # ptxas reads the high half as `R.H1`, a MUFU form the tables lack: move it down first
    s.emit("PRMT", (), [upper], [src, Imm(0x7632, "int"), ZERO], comment="the high half, moved down")
    s.emit("MUFU", (func, "F16"), [high], [upper])
    s.emit("PRMT", (), [s.reg(d)], [low, Imm(0x5410, "int"), high], comment="the two results' low halves")


# Selection rules for half precision; isel_rules.RULES takes them where the f16 rules go
# (before the general cvt).
H = r"\.b?f16(x2)?"
HALF_RULES = [
    Rule(r"cvt(\.(rn|rz|rm|rp))?(\.relu)?(\.satfinite)?\.bf16\.f32", cvt_bf16_f32,
         "F2FP.BF16.F32.PACK_AB (rn, rz), F2F.BF16.F32 (rm, rp)"),
    Rule(r"cvt(\.(rn|rz|rm|rp))\.bf16\.f64", cvt_bf16_f64, "F2F.BF16.F64"),
    Rule(r"cvt\.f(32|64)\.bf16", cvt_from_bf16, "the bits shifted up by 16 (exact); F2F.F64.F32 for f64"),
    Rule(r"cvt(\.(rn|rz))?(\.relu)?(\.satfinite)?\.bf16x2\.f32", cvt_bf16x2_f32, "F2FP.BF16.F32.PACK_AB"),
    Rule(r"cvt(\.(rn|rz|rm|rp|rni|rzi|rmi|rpi))?(\.sat)?\.(bf16\.[us](8|16|32|64)|[us](8|16|32|64)\.bf16)",
         cvt_bf16_int, "sm_90: the exact f32 then F2I; I2F.BF16"),
    Rule(r"(ex2|tanh)\.approx(\.ftz)?\.f16(x2)?", mufu_f16, "MUFU.EX2.F16 / MUFU.TANH.F16 (per half, PRMT)"),
    Rule(rf"(add|sub)(\.rn)?(\.ftz)?(\.sat)?{H}", add_f16, "HADD2 (.H0_H0 halves for f16), sub negating b"),
    Rule(rf"mul(\.rn)?(\.ftz)?(\.sat)?{H}", mul_f16, "HMUL2; contracts with an add into HFMA2 without .rn"),
    Rule(rf"fma\.rn(\.ftz)?(\.sat)?(\.relu)?{H}", fma_f16, "HFMA2"),
    Rule(rf"neg(\.ftz)?{H}", neg_f16, "HADD2 -a, -RZ (ptxas's negation)"),
    Rule(rf"abs(\.ftz)?{H}", abs_f16, "HADD2 |a|, -RZ"),
    Rule(rf"(min|max)(\.ftz)?(\.NaN)?(\.xorsign\.abs)?{H}", min_max_f16, "HMNMX2 (PT: min, !PT: max)"),
    Rule(rf"setp\.(eq|ne|lt|le|gt|ge|equ|neu|ltu|leu|gtu|geu|num|nan)(\.(and|or|xor))?(\.ftz)?{H}",
         setp_f16, "HSETP2 (f16x2: both halves, p|q)"),
    Rule(r"cvt(\.(rn|rz))?(\.relu)?(\.satfinite)?\.f16x2\.f32", cvt_f16x2_f32,
         "F2FP.F16.F32.PACK_AB (.SATFINITE, .RELU)"),
    Rule(r"cvt(\.(rn|rz))(\.relu|\.satfinite|\.relu\.satfinite)\.f16\.f32", cvt_f16_f32_clamped,
         "F2FP.F16.F32.PACK_AB with RZ high (.SATFINITE, .RELU)"),
    Rule(r"cvt(\.(rn|rz|rm|rp|rni|rzi|rmi|rpi))?(\.ftz)?(\.sat)?"
         r"\.(f16\.[usbf](8|16|32|64)|[usbf](8|16|32|64)\.f16)", cvt_f16,
         "F2FP / HADD2.F32 / F2F; integers through an exact f32"),
]
