"""The code generator's virtual-register IR and the C-type -> PTX-type mapping.

Codegen emits ptxc.ptx.ir.Instr objects into Blocks whose register operands are VRegs
(a class -- p, rs, r, rd, f, fd -- and a number); passes rewrite the blocks and
`number_registers` finally names every VReg as NVVM would (%r1, %rd2, ...).  This module
holds what codegen, the builtin lowerings and the passes share: the IR pieces, which
instructions define and read which registers, and how a C type maps to PTX.
"""
from __future__ import annotations

import math
import struct

from ..ptx import ir
from . import sema as S

class Unsupported(Exception):
    """A construct the code generator does not handle yet: reported with its location."""

    def __init__(self, feature: str, loc):
        super().__init__(feature)
        self.feature, self.loc = feature, loc


# ---- virtual registers and blocks -------------------------------------------------------

class VReg:
    """A virtual register of one PTX register class: p, rs, r, rd, f, fd."""
    __slots__ = ("id", "cls")

    def __init__(self, id_: int, cls: str):
        self.id = id_
        self.cls = cls

    def __repr__(self) -> str:
        return f"%v{self.cls}{self.id}"


class OpcodeTable(dict):
    """opcode -> a property of it, computed by `rule` on first sight of the opcode and
    remembered: hot loops index the table (`BASE[instr.opcode]`) instead of parsing
    the dotted opcode again at every instruction."""
    __slots__ = ("rule",)

    def __init__(self, rule):
        super().__init__()
        self.rule = rule

    def __missing__(self, opcode: str):
        value = self[opcode] = self.rule(opcode)
        return value


BASE = OpcodeTable(lambda opcode: opcode.split(".", 1)[0])   # `ld` for `ld.global.f32`


def base_of(opcode: str) -> str:
    """`ld` for `ld.global.f32`."""
    return BASE[opcode]


class Block:
    __slots__ = ("label", "instrs")

    def __init__(self, label: str):
        self.label = label
        self.instrs: list[ir.Instr] = []

    def terminator(self) -> ir.Instr | None:
        if self.instrs:
            last = self.instrs[-1]
            if TERMINATES[last.opcode]:
                return last
        return None


TERMINATES = OpcodeTable(lambda opcode: opcode.startswith(("bra", "ret", "exit")))
# Code after one of these starts a new block (codegen's emit and mathlib's expansions).
ENDS_BLOCK = OpcodeTable(lambda opcode: opcode.startswith(("bra", "ret", "exi")))


REG_DECL_ORDER = ("p", "rs", "f", "r", "fd", "rd")   # NVVM's order of .reg lines
REG_DECL = {"p": (".pred", "%p"), "rs": (".b16", "%rs"), "r": (".b32", "%r"), "rd": (".b64", "%rd"),
            "f": (".f32", "%f"), "fd": (".f64", "%fd")}

SPECIAL_REGS = {"threadIdx": "%tid", "blockIdx": "%ctaid", "blockDim": "%ntid", "gridDim": "%nctaid"}

# Instructions without side effects: dead-code elimination may drop them, value
# numbering may merge them.
PURE_BASES = frozenset({
    "add", "sub", "mul", "mad", "fma", "div", "rem", "and", "or", "xor", "not", "shl", "shr", "neg",
    "abs", "min", "max", "setp", "selp", "cvt", "cvta", "mov", "sqrt", "rsqrt", "rcp", "ex2", "lg2",
    "sin", "cos", "popc", "clz", "brev", "mul24", "ld", "copysign", "bfind", "bfi", "bfe", "prmt", "shf",
    "testp", "tanh",
})
# Writes the carry flag or reads it: the chain must stay whole and in order.
CARRY_BASES = frozenset({"addc", "subc", "madc"})


# ---- C types -> PTX -----------------------------------------------------------------------

_INT_CLASS = {1: "rs", 2: "rs", 4: "r", 8: "rd"}     # integer size -> register class
_MOV_TYPE = {"p": "pred", "rs": "u16", "r": "u32", "rd": "u64", "f": "f32", "fd": "f64"}


def reg_class(t: S.Type) -> str:
    cls = t.__class__   # (sema's type classes are final: exact tests)
    if cls is _IntType:
        if t.name == "bool":
            return "p"
        return _INT_CLASS[t.size]
    if cls is _FloatType:
        return "f" if t.size == 4 else "fd"
    if cls is _PointerType or cls is _ArrayType:
        return "rd"
    if cls is _EnumType:
        return "r"
    raise Unsupported(f"values of type '{t}'", None)


_IntType, _FloatType, _PointerType, _ArrayType, _EnumType = \
    S.IntType, S.FloatType, S.PointerType, S.ArrayType, S.EnumType
_ADDRESS_TYPES = frozenset({S.PointerType, S.ArrayType})


def bits(t: S.Type) -> int:
    return 64 if t.__class__ in _ADDRESS_TYPES else S.sizeof(t) * 8


def int_type(t: S.Type, signed: bool | None = None) -> str:
    """`s32`, `u64`, ... for an integer or pointer type (bool counts as 16-bit in %rs
    only when it is in memory; in registers it is a predicate)."""
    cls = t.__class__
    if cls in _ADDRESS_TYPES:
        return "s64" if signed is not False else "u64"
    if cls is _EnumType:
        return "s32"
    sign = t.signed if signed is None else signed
    width = max(16, t.size * 8)
    return f"{'s' if sign else 'u'}{width}"


def float_type(t: S.Type) -> str:
    return "f32" if t.size == 4 else "f64"


def arith_type(t: S.Type) -> str:
    return float_type(t) if isinstance(t, S.FloatType) else int_type(t)


def memory_type(t: S.Type) -> str:
    """The type of a ld/st of a value of C type t (NVVM loads narrow ints unsigned)."""
    cls = t.__class__
    if cls is _FloatType:
        return "f32" if t.size == 4 else "f64"
    if cls in _ADDRESS_TYPES:
        return "u64"
    if cls is _EnumType:
        return "u32"
    return f"u{t.size * 8}"


def param_type(t: S.Type) -> str:
    if isinstance(t, S.FloatType):
        return "." + float_type(t)
    if isinstance(t, (S.PointerType, S.ArrayType)):
        return ".u64"
    if isinstance(t, (S.IntType, S.EnumType)):
        size = 1 if isinstance(t, S.IntType) and t.name == "bool" else S.sizeof(t)
        return f".u{size * 8}"
    raise Unsupported(f"kernel parameters of type '{t}'", None)


def f32_bits(value: float) -> float:
    """Round a Python float to the nearest f32, as a constant folded in f32 must be."""
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def imm_for(value, t: S.Type) -> ir.Imm:
    if isinstance(t, S.FloatType):
        return ir.Imm(float(value), "." + float_type(t))
    return ir.Imm(int(value))


# Comparisons: C operator -> PTX condition, for integers and for floats; and the
# condition that is true exactly when the original is false (for branching around).
INT_CMP = {"<": "lt", ">": "gt", "<=": "le", ">=": "ge", "==": "eq", "!=": "ne"}
FLOAT_CMP = {"<": "lt", ">": "gt", "<=": "le", ">=": "ge", "==": "eq", "!=": "neu"}
INVERSE = {"lt": "ge", "gt": "le", "le": "gt", "ge": "lt", "eq": "ne", "ne": "eq",
            "ltu": "ge", "gtu": "le", "leu": "gt", "geu": "lt", "equ": "ne", "neu": "eq"}
FLOAT_INVERSE = {"lt": "geu", "gt": "leu", "le": "gtu", "ge": "ltu", "eq": "neu", "neu": "eq",
                  "ltu": "ge", "gtu": "le", "leu": "gt", "geu": "lt", "ne": "equ", "equ": "ne"}
SWAPPED = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne", "neu": "neu",
            "ltu": "gtu", "gtu": "ltu", "leu": "geu", "geu": "leu", "equ": "equ"}


class MemRef:
    """An lvalue in memory: `[base+offset]` in one state space."""
    __slots__ = ("base", "offset", "space", "ctype", "nc")

    def __init__(self, base, offset: int, space: str, ctype: S.Type, nc: bool = False):
        self.base = base
        self.offset = offset
        self.space = space
        self.ctype = ctype
        self.nc = nc


class VarRef:
    """An lvalue in a register: a local variable that is assigned after its declaration."""
    __slots__ = ("reg", "ctype", "symbol")

    def __init__(self, reg: VReg, ctype: S.Type, symbol):
        self.reg, self.ctype, self.symbol = reg, ctype, symbol


class AggValue:
    """A struct or array value, as the values of its scalar leaves (see `leaves`)."""
    __slots__ = ("ctype", "values")

    def __init__(self, ctype: S.Type, values: list):
        self.ctype, self.values = ctype, values


class RegAgg:
    """A struct or array variable kept in registers (SROA): one VarRef per leaf."""
    __slots__ = ("ctype", "refs")

    def __init__(self, ctype: S.Type, refs: list):
        self.ctype, self.refs = ctype, refs


_LEAVES: dict = {}


def leaves(t: S.Type) -> tuple:
    """The scalar parts of a struct or array, in memory order: ((offset, type), ...)."""
    found = _LEAVES.get(t)
    if found is not None:
        return found
    if isinstance(t, S.StructType):
        if t.kind == "union":
            raise Unsupported(f"unions in device code ('{t}')", None)
        out = []
        for _, ftype, offset in t.fields:
            out.extend((offset + o, lt) for o, lt in leaves(ftype))
        found = tuple(out)
    elif isinstance(t, S.ArrayType):
        size = S.sizeof(t.elem)
        inner = leaves(t.elem)
        found = tuple((k * size + o, lt) for k in range(t.size or 0) for o, lt in inner)
    else:
        found = ((0, t),)
    _LEAVES[t] = found
    return found


def leaf_range(t: S.Type, offset: int, part: S.Type) -> tuple[int, int]:
    """The leaves of `t` that make up its sub-object `part` at byte `offset`: (first, count)."""
    first = 0
    for k, (o, _) in enumerate(leaves(t)):
        if o >= offset:
            first = k
            break
    return first, len(leaves(part))


def is_aggregate(t: S.Type) -> bool:
    return t.__class__ in _AGGREGATE_TYPES


_AGGREGATE_TYPES = frozenset({S.StructType, S.ArrayType})


class PointerInfo:
    """What codegen knows of a pointer value: its state space and whether loads through
    it may use the non-coherent cache (a `const T * __restrict__` kernel parameter)."""
    __slots__ = ("space", "nc")

    def __init__(self, space: str, nc: bool = False):
        self.space, self.nc = space, nc


GENERIC = PointerInfo("generic")



# ---- operands and instructions -----------------------------------------------------------

def value_key(operand):
    if isinstance(operand, ir.Imm):
        return ("imm", operand.value, operand.type)
    if isinstance(operand, ir.Address):
        return ("addr", operand.base, operand.offset)
    return operand


def defines(instr: ir.Instr) -> bool:
    """Does the instruction write its first operand?  (Stores, branches, barriers and
    reductions have an address, a label or nothing there, never a register.)"""
    ops = instr.operands
    if not ops or ops[0].__class__ is not VReg:
        return False
    opcode = instr.opcode
    return not _FIRST_IS_READ[opcode]


_USE_FIRST = ("bar.warp", "bar.sync", "barrier.sync", "st.", "red.")  # their first operand is read, not written


# opcode -> does it read its first operand
READS_FIRST = _FIRST_IS_READ = OpcodeTable(lambda opcode: opcode.startswith(_USE_FIRST))
_Address, _Vector = ir.Address, ir.Vector


def mov_type(cls: str, t: S.Type) -> str:
    return _MOV_TYPE[cls]


def sel_type(t: S.Type) -> str:
    if isinstance(t, S.FloatType):
        return float_type(t)
    return f"b{max(16, bits(t))}"


def cvt_int(t: S.Type, register: bool = False) -> str:
    """An integer type as cvt names it: 8-bit types keep their width (cvt.s32.s8)."""
    if isinstance(t, S.EnumType):
        return "s32"
    if isinstance(t, S.PointerType):
        return "u64"
    size = t.size * 8
    if register and size == 8:
        size = 16
    return f"{'s' if t.signed else 'u'}{size}"


def exact_reciprocal(value: float) -> bool:
    """Is 1/value exact (value a power of two, not denormal-producing)?"""
    if value == 0 or math.isinf(value) or math.isnan(value):
        return False
    mantissa, exponent = math.frexp(abs(value))
    return mantissa == 0.5 and -125 < exponent < 126


def canonical_compare(cond: str, c: int, t: S.Type):
    """InstCombine's canonical form of `x cond c`: strict predicates (x <= c is
    x < c+1), and unsigned tests against the ends of the range become ==, != or
    constants.  Returns (cond, Imm) or ("true"/"false", None)."""
    signed = not isinstance(t, S.IntType) or t.signed
    width = 32 if isinstance(t, S.EnumType) else max(16, t.size * 8)
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    if cond == "le":
        if c >= hi:
            return "true", None
        cond, c = "lt", c + 1
    elif cond == "ge":
        if c <= lo:
            return "true", None
        cond, c = "gt", c - 1
    if cond == "lt" and c <= lo:
        return "false", None
    if cond == "gt" and c >= hi:
        return "false", None
    if not signed:
        if cond == "lt" and c == 1:
            cond, c = "eq", 0
        elif cond == "gt" and c == 0:
            cond, c = "ne", 0
    return cond, ir.Imm(c)


def fold_compare(cond: str, a, b) -> bool:
    base = cond.rstrip("u") if cond not in ("neu",) else "ne"
    return {"lt": a < b, "gt": a > b, "le": a <= b, "ge": a >= b, "eq": a == b, "ne": a != b}[base]


def instr_defs(instr: ir.Instr) -> list:
    """The registers an instruction writes: its first operand, or the elements of a
    vector there (ld.v4, mov.b64 {lo, hi})."""
    ops = instr.operands
    if not ops:
        return []
    if instr.opcode == "inline.asm":
        return [op for op in ops[:instr.asm[1]] if op.__class__ is VReg]
    first = ops[0]
    if first.__class__ is VReg:
        return [first] if defines(instr) else []
    if first.__class__ is ir.Vector:
        return [e for e in first.elems if e.__class__ is VReg]
    return []


def instr_uses(instr: ir.Instr) -> list:
    ops = instr.operands
    opcode = instr.opcode
    if opcode == "inline.asm":
        return [op for op in ops[instr.asm[1]:] if op.__class__ is VReg]
    out = []
    if ops:
        # The first operand (what `defines` decides, inlined: this is hot), then the rest.
        op = ops[0]
        cls = op.__class__
        if cls is VReg:
            if _FIRST_IS_READ[opcode]:
                out.append(op)
        elif cls is _Address:
            if op.base.__class__ is VReg:
                out.append(op.base)
        for op in ops[1:]:
            cls = op.__class__
            if cls is VReg:
                out.append(op)
            elif cls is _Address:
                if op.base.__class__ is VReg:
                    out.append(op.base)
            elif cls is _Vector:
                out.extend([e for e in op.elems if e.__class__ is VReg])
    if instr.guard is not None:
        out.append(instr.guard)
    return out


def is_pure(instr: ir.Instr) -> bool:
    """No side effects: removable when unused, mergeable with an identical one."""
    opcode = instr.opcode
    if not PURE_OPCODE[opcode]:
        return False
    # defines(instr), inlined
    ops = instr.operands
    if not ops or ops[0].__class__ is not VReg:
        return False
    return not _FIRST_IS_READ[opcode]


def _pure_opcode(opcode: str) -> bool:
    base = BASE[opcode]
    if base == "ld":
        return ".volatile" not in opcode
    return base in PURE_BASES and ".cc" not in opcode and base not in CARRY_BASES


# opcode -> has it no side effects (is_pure for an instruction that defines a register)
PURE_OPCODE = OpcodeTable(_pure_opcode)


def use_counts(cg) -> dict:
    counts: dict = {}
    for block in cg.blocks:
        for instr in block.instrs:
            for u in instr_uses(instr):
                counts[u] = counts.get(u, 0) + 1
    return counts


