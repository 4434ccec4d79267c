"""PTX IR: a module of functions, each a flat list of instructions and labels.

An instruction keeps its full dotted opcode (`ld.global.f32`) and its operands in
PTX order (destination first).  Registers are virtual and typed by the `.reg`
declarations of their function: `%r` 32-bit integers, `%rd` 64-bit, `%f` f32,
`%fd` f64, `%p` predicates, `%rs` 16-bit, `%h` f16.  Nested `{ }` scopes do not
survive parsing: what a scope declares is renamed (`p` -> `%__s3_p`, `param0` ->
`__s3_param0`) and hoisted into its function, so a body is always flat.  The CUDA frontend builds
this IR; grammars/ptx.lark reads it from text; ptxc.ptx.printer writes it back.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field
from typing import Union


# The frozen classes below write their own __init__ (dataclass keeps a class's own): the
# generated one sets each field through object.__setattr__, twice as slow as storing
# into the instance dict, and both the frontend and the PTX parser make many of them.

@dataclass(frozen=True)
class Reg:
    name: str  # "%r1", "%rd4", "%p1"

    def __init__(self, name: str):
        self.__dict__["name"] = name


@dataclass(frozen=True)
class SpecialReg:
    name: str  # "%ctaid.x", "%tid.x", "%ntid.x", "%laneid"

    def __init__(self, name: str):
        self.__dict__["name"] = name


@dataclass(frozen=True, eq=False)
class Imm:
    """An integer or floating-point immediate; `type` is '.f32'/'.f64' for floats, else None.

    Equal immediates have equal values, except that a NaN equals a NaN of the same
    bits (nvcc writes 0f7FFFFFFF, and `parse(print(m)) == m` must hold for it).
    """
    value: Union[int, float]
    type: str | None = None

    def __init__(self, value: Union[int, float], type: str | None = None):  # noqa: A002
        d = self.__dict__
        d["value"] = value
        d["type"] = type

    def _key(self) -> tuple:
        if isinstance(self.value, float) and math.isnan(self.value):
            return ("nan", struct.pack("<d", self.value), self.type)
        return (self.value, self.type)

    def __eq__(self, other) -> bool:
        return isinstance(other, Imm) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True)
class Symbol:
    name: str  # a parameter, a global variable, or a label

    def __init__(self, name: str):
        self.__dict__["name"] = name


@dataclass(frozen=True)
class Address:
    """`[base+offset]`: base is a register or a symbol (a parameter, a variable)."""
    base: Union[Reg, Symbol]
    offset: int = 0

    def __init__(self, base: Union[Reg, Symbol], offset: int = 0):
        d = self.__dict__
        d["base"] = base
        d["offset"] = offset


@dataclass(frozen=True)
class Vector:
    elems: tuple  # of Reg / Imm: `{%f1, %f2}`

    def __init__(self, elems: tuple):
        self.__dict__["elems"] = elems


@dataclass(frozen=True)
class OperandList:
    elems: tuple  # `(retval0)`, `(param0, param1)` in call instructions


@dataclass(frozen=True)
class NotReg:
    reg: Reg      # `!%p1` as a source operand


@dataclass(frozen=True)
class RegPair:
    """`%r17|%p3`: one destination operand naming two registers, written together
    (shfl.sync's value and in-range predicate, match.all's mask and predicate,
    setp's predicate and its complement)."""
    first: Reg
    second: Reg


Operand = Union[Reg, SpecialReg, Imm, Symbol, Address, Vector, OperandList, NotReg, RegPair]


@dataclass
class Instr:
    opcode: str                 # full dotted opcode: "mad.lo.s32"
    operands: list              # destination first, as PTX writes them
    guard: Reg | None = None    # `@%p1`
    guard_negated: bool = False # `@!%p1`
    loc: tuple[int, int] | None = field(default=None, compare=False)  # (line, col) in the source

    @property
    def parts(self) -> list[str]:
        return self.opcode.split(".")

    @property
    def base(self) -> str:
        return self.parts[0]

    def has(self, modifier: str) -> bool:
        return modifier in self.parts[1:]


@dataclass
class Label:
    name: str
    loc: tuple[int, int] | None = field(default=None, compare=False)


@dataclass
class RegDecl:
    """`.reg .b32 %r<6>;` declares %r0..%r5 (count=6); count None declares one name."""
    type: str    # ".b32"
    prefix: str  # "%r"
    count: int | None = None

    def names(self) -> list[str]:
        if self.count is None:
            return [self.prefix]
        return [f"{self.prefix}{i}" for i in range(self.count)]


@dataclass
class Param:
    type: str              # ".u64"
    name: str
    align: int | None = None
    array: int | None = None  # `.param .align 8 .b8 p[16]`
    ptr: bool = False          # `.ptr` attribute (kept for printing)

    @property
    def size(self) -> int:
        return type_size(self.type) * (self.array or 1)


@dataclass
class CallPrototype:
    """`proto : .callprototype (.param .b32 _) _ (.param .b32 _);`: the signature an
    indirect call (`call (retval0), %rd5, (param0), proto;`) names."""
    name: str
    return_params: list[Param] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)


@dataclass(frozen=True)
class CallSite:
    """A `call` instruction's operands by role (see call_site)."""
    callee: Union[Symbol, Reg]            # a function's name, or a register holding its address
    returns: tuple = ()                   # the `.param` buffers receiving results: (Symbol, ...)
    args: tuple = ()                      # the `.param` buffers holding arguments
    prototype: str | None = None          # the .callprototype of an indirect call


def call_site(instr: "Instr") -> CallSite:
    """Decode `call[.uni] [(ret, ...),] callee[, (arg, ...)][, prototype];`.

    Expects an Instr whose base is `call`, operands in PTX order as the parser
    keeps them; an OperandList before the callee is its returns, one after it
    its arguments, a Symbol after those the prototype.
    """
    ops = list(instr.operands)
    returns = ops.pop(0).elems if ops and isinstance(ops[0], OperandList) else ()
    callee = ops.pop(0)
    args = ops.pop(0).elems if ops and isinstance(ops[0], OperandList) else ()
    prototype = ops[0].name if ops and isinstance(ops[0], Symbol) else None
    return CallSite(callee, tuple(returns), tuple(args), prototype)


@dataclass
class Variable:
    """A `.global`/`.shared`/`.local`/`.const` variable: `.shared .align 4 .b8 buf[1024];`."""
    state: str                 # ".shared"
    type: str                  # ".b8"
    name: str
    align: int | None = None
    array: int | None = None   # element count; 0 for `[]` (extern dynamic shared)
    init: list | None = None   # initial values (Imm)
    extern: bool = False
    visible: bool = False

    @property
    def size(self) -> int:
        return type_size(self.type) * (self.array or 1)


@dataclass
class Function:
    name: str
    entry: bool = True         # .entry (a kernel) or .func
    visible: bool = True
    extern: bool = False       # `.extern .func`: defined in another module
    weak: bool = False         # `.weak .func`
    defined: bool = True       # False for a declaration (`.func (...) f(...);`), which has no body
    params: list[Param] = field(default_factory=list)
    regs: list[RegDecl] = field(default_factory=list)
    vars: list[Variable] = field(default_factory=list)
    return_params: list[Param] = field(default_factory=list)
    directives: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)  # (".maxntid", (256, 1, 1))
    call_params: list[Param] = field(default_factory=list)   # `.param` buffers of its call sequences
    prototypes: list[CallPrototype] = field(default_factory=list)
    body: list[Union[Instr, Label]] = field(default_factory=list)
    loc: tuple[int, int] | None = field(default=None, compare=False)

    def reg_types(self) -> dict[str, str]:
        """Map every declared register name to its PTX type."""
        types = {}
        for decl in self.regs:
            if decl.count is None:
                types[decl.prefix] = decl.type
        return types

    def reg_type(self, reg: Reg) -> str | None:
        """The declared type of `reg`, honouring `%r<N>` ranges."""
        m = re.fullmatch(r"(%[a-zA-Z_$][\w$]*?)(\d+)", reg.name)
        for decl in self.regs:
            if decl.count is None and decl.prefix == reg.name:
                return decl.type
            if decl.count is not None and m and m.group(1) == decl.prefix and int(m.group(2)) < decl.count:
                return decl.type
        return None

    def instrs(self) -> list[Instr]:
        return [item for item in self.body if isinstance(item, Instr)]


@dataclass
class Module:
    version: str = "9.5"
    target: str = "sm_89"
    address_size: int = 64
    functions: list[Function] = field(default_factory=list)
    globals: list[Variable] = field(default_factory=list)

    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.entry]

    def subroutines(self) -> list[Function]:
        """The `.func`s this module defines (not those it only declares)."""
        return [f for f in self.functions if not f.entry and f.defined]


_TYPE_SIZES = {"pred": 1, "b8": 1, "s8": 1, "u8": 1, "b16": 2, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
               "b32": 4, "s32": 4, "u32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4,
               "b64": 8, "s64": 8, "u64": 8, "f64": 8, "b128": 16}


TYPE_SIZES = _TYPE_SIZES   # the scalar types PTX declares registers, parameters and variables with


def type_size(ptx_type: str) -> int:
    """Bytes taken by a PTX scalar type such as '.u64'."""
    return _TYPE_SIZES[ptx_type.lstrip(".")]
