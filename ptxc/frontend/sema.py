"""Semantic analysis: C/C++ types, scopes, and the conversions C performs silently.

Input: the AST from parser.py.  Output: the same AST, typed: every expression has
`.type`, every name its `.symbol`, and every implicit conversion (integer promotion,
usual arithmetic conversions, array-to-pointer decay, argument and assignment
conversions) is an explicit ImplicitCast node, so codegen never has to re-derive C's
rules.  Errors are collected, not raised one at a time; `analyze` raises one
CompileError carrying all of them.
"""
from __future__ import annotations

import dataclasses
import itertools
import operator
import os
from dataclasses import dataclass, field

from ..diagnostics import CompileError, Diagnostic, SourceLoc
from . import ast as A
from . import cuda_runtime

# ---- types -------------------------------------------------------------------------------
# Frozen dataclasses: two spellings of one type compare equal (`unsigned` == `unsigned int`).
# Qualifiers live on the type they qualify: `const float *` is PointerType(FloatType(const)).


@dataclass(frozen=True)
class Type:
    def __str__(self) -> str:
        return type_name(self)

    def __deepcopy__(self, memo):
        # A type is a value (a struct's is its declaration's identity): copies of the AST
        # (template instances) share it.  Copying one would also rebuild dicts keyed by
        # types before the copied keys have the fields their hash reads.
        return self


@dataclass(frozen=True)
class VoidType(Type):
    name: str = "void"
    const: bool = False
    volatile: bool = False


@dataclass(frozen=True)
class IntType(Type):
    name: str            # "int", "unsigned long", "bool", ...
    size: int
    signed: bool
    rank: int            # conversion rank: bool 0, char 1, short 2, int 3, long 4, long long 5
    const: bool = False
    volatile: bool = False


@dataclass(frozen=True)
class FloatType(Type):
    name: str            # "float", "double"
    size: int
    const: bool = False
    volatile: bool = False


@dataclass(frozen=True)
class PointerType(Type):
    pointee: Type
    const: bool = False
    volatile: bool = False
    restrict: bool = False


@dataclass(frozen=True)
class ArrayType(Type):
    elem: Type
    size: int | None
    const: bool = False
    volatile: bool = False


@dataclass(frozen=True)
class FunctionType(Type):
    ret: Type
    params: tuple
    variadic: bool = False
    const: bool = False
    volatile: bool = False


_DECLARATIONS = itertools.count(1)
# How deep ptxc's recursive analysis goes with frontend.RECURSION_LIMIT (measured: a
# `+` chain of 10,000 compiles; nvcc takes 3,000); deeper is a diagnostic, not a crash.
NESTING_LIMIT = 10_000


@dataclass(frozen=True, eq=False)
class StructType(Type):
    """A struct or union.  Two StructTypes are the same type when they come from the
    same declaration (`decl`, kept by qualified copies) and have the same qualifiers."""
    name: str
    kind: str = "struct"
    fields: list = field(default_factory=list)   # [(name, Type, offset)]
    complete: bool = False
    size: int = 0
    align: int = 1
    const: bool = False
    volatile: bool = False
    decl: int = field(default_factory=lambda: next(_DECLARATIONS))
    vector: int = 0     # a CUDA vector type (float4...): its element count
    template: object = None      # a class template's instance: the ClassTemplate
    info: object = None          # a class with member functions: its classes.ClassInfo
    template_args: tuple = ()    # and its arguments (Type, or (value, Type))

    def __eq__(self, other) -> bool:
        return isinstance(other, StructType) and other.decl == self.decl and \
            other.const == self.const and other.volatile == self.volatile

    def __hash__(self) -> int:
        return hash((self.decl, self.const, self.volatile))

    def field(self, name: str):
        for fname, ftype, offset in self.fields:
            if fname == name:
                return ftype, offset
        return None


@dataclass(frozen=True, eq=False)
class EnumType(Type):
    name: str
    const: bool = False
    volatile: bool = False
    decl: int = field(default_factory=lambda: next(_DECLARATIONS))

    def __eq__(self, other) -> bool:
        return isinstance(other, EnumType) and other.decl == self.decl and \
            other.const == self.const and other.volatile == self.volatile

    def __hash__(self) -> int:
        return hash((self.decl, self.const, self.volatile))


@dataclass(frozen=True)
class ReferenceType(Type):
    """`T&`: a parameter or a local bound to an lvalue (sema gives its symbol the type
    `T *` and reads it through `*`; a `const T&` parameter of a value type is passed
    by value, which no kernel can tell apart)."""
    pointee: Type
    const: bool = False
    volatile: bool = False


@dataclass(frozen=True)
class TemplateParamType(Type):
    """A template's type parameter inside its declared signature, for mangling (T_)."""
    index: int
    name: str
    const: bool = False
    volatile: bool = False


@dataclass(frozen=True)
class AnyPointerType(Type):
    """A builtin parameter that takes a pointer of any type (cudaMalloc's T**)."""
    levels: int = 1
    const: bool = False
    volatile: bool = False


@dataclass(frozen=True)
class AnySymbolType(Type):
    """A builtin parameter that names a __device__ or __constant__ variable itself
    (cudaMemcpyToSymbol's `const T& symbol`): the argument is not converted."""
    const: bool = False
    volatile: bool = False


def _int(name, size, signed, rank):
    return IntType(name, size, signed, rank)


BOOL = _int("bool", 1, False, 0)
CHAR = _int("char", 1, True, 1)
SCHAR = _int("signed char", 1, True, 1)
UCHAR = _int("unsigned char", 1, False, 1)
SHORT = _int("short", 2, True, 2)
USHORT = _int("unsigned short", 2, False, 2)
INT = _int("int", 4, True, 3)
UINT = _int("unsigned int", 4, False, 3)
LONG = _int("long", 8, True, 4)
ULONG = _int("unsigned long", 8, False, 4)
LLONG = _int("long long", 8, True, 5)
ULLONG = _int("unsigned long long", 8, False, 5)
FLOAT = FloatType("float", 4)
DOUBLE = FloatType("double", 8)
VOID = VoidType()
AUTO = VoidType("auto")      # `auto`, until its initializer gives the type
SIZE_T = ULONG
PTRDIFF_T = LONG

UNSIGNED_OF = {CHAR: UCHAR, SCHAR: UCHAR, SHORT: USHORT, INT: UINT, LONG: ULONG, LLONG: ULLONG}
_SCALAR_CLASSES = frozenset({IntType, FloatType, VoidType})
_UNQUALIFIED_SCALARS = {t: t for t in (BOOL, CHAR, SCHAR, UCHAR, SHORT, USHORT, INT, UINT, LONG, ULONG, LLONG,
                                       ULLONG, FLOAT, DOUBLE, VOID)}


# Type specifier keyword multisets -> type (the C standard's list of valid combinations).
_SPECIFIER_TYPES = {
    ("void",): VOID, ("bool",): BOOL, ("_Bool",): BOOL, ("char",): CHAR, ("char", "signed"): SCHAR,
    ("char", "unsigned"): UCHAR, ("short",): SHORT, ("int", "short"): SHORT, ("short", "signed"): SHORT,
    ("int", "short", "signed"): SHORT, ("short", "unsigned"): USHORT, ("int", "short", "unsigned"): USHORT,
    ("int",): INT, ("signed",): INT, ("int", "signed"): INT, ("unsigned",): UINT, ("int", "unsigned"): UINT,
    ("long",): LONG, ("int", "long"): LONG, ("long", "signed"): LONG, ("int", "long", "signed"): LONG,
    ("long", "unsigned"): ULONG, ("int", "long", "unsigned"): ULONG, ("long", "long"): LLONG,
    ("int", "long", "long"): LLONG, ("long", "long", "signed"): LLONG, ("int", "long", "long", "signed"): LLONG,
    ("long", "long", "unsigned"): ULLONG, ("int", "long", "long", "unsigned"): ULLONG,
    ("float",): FLOAT, ("double",): DOUBLE, ("double", "long"): DOUBLE,
}


def type_name(t: Type) -> str:
    """C spelling, as in messages: `const float *`."""
    quals = ("const " if t.const else "") + ("volatile " if t.volatile else "")
    if isinstance(t, (IntType, FloatType, VoidType)):
        return quals + t.name
    if isinstance(t, PointerType):
        inner = type_name(t.pointee)
        if isinstance(t.pointee, (ArrayType, FunctionType)):
            inner = inner.replace("(", "(*", 1) if "(" in inner else inner + " (*)"
        suffix = (" const" if t.const else "") + (" __restrict__" if t.restrict else "")
        return f"{inner} *{suffix}".replace("* *", "**")
    if isinstance(t, ArrayType):
        return f"{type_name(t.elem)} [{t.size if t.size is not None else ''}]"
    if isinstance(t, FunctionType):
        params = ", ".join(type_name(p) for p in t.params) + (", ..." if t.variadic else "")
        return f"{type_name(t.ret)} ({params or 'void'})"
    if isinstance(t, StructType):
        if t.template_args:
            from .templates import argument_text
            return quals + f"{t.name}<{', '.join(argument_text(a) for a in t.template_args)}>"
        return quals + t.name
    if isinstance(t, ReferenceType):
        return type_name(t.pointee) + " &"
    if isinstance(t, TemplateParamType):
        return quals + t.name
    if isinstance(t, EnumType):
        return quals + t.name
    if isinstance(t, AnyPointerType):
        return "T " + "*" * t.levels
    return repr(t)


def with_quals(t: Type, const: bool | None = None, volatile: bool | None = None) -> Type:
    if (const is None or t.const == const) and (volatile is None or t.volatile == volatile):
        return t    # the common case, without building the changes (hot)
    # dataclasses.replace(t, const=..., volatile=...) without its generic per-field work:
    # a type's fields are all __init__ arguments and no type has a __post_init__, so the
    # copy is the same object dictionary with the qualifiers changed.
    copy = object.__new__(t.__class__)
    fields = copy.__dict__
    fields.update(t.__dict__)
    if const is not None:
        fields["const"] = const
    if volatile is not None:
        fields["volatile"] = volatile
    if not fields["const"] and not fields["volatile"] and t.__class__ in _SCALAR_CLASSES:
        # An unqualified scalar is the one constant (INT, FLOAT...) equal to it: later
        # comparisons of types find it by identity, without a dataclass __eq__ call.
        return _UNQUALIFIED_SCALARS.get(copy, copy)
    return copy


def unqualified(t: Type) -> Type:
    if t.__class__ is PointerType:      # (the type classes are final: exact tests)
        if t.const or t.volatile or t.restrict:
            return PointerType(t.pointee)
        return t
    if not t.const and not t.volatile:
        return t
    return with_quals(t, False, False)


def qualifier_string(t: Type) -> str:
    """Itanium's order: restrict, volatile, const."""
    return ("r" if isinstance(t, PointerType) and t.restrict else "") + ("V" if t.volatile else "") + \
        ("K" if t.const else "")


def type_key(t: Type):
    return t


def parameter_type(t: Type) -> Type:
    """A parameter's type as the function's type sees it: arrays decay, top-level
    qualifiers drop."""
    if isinstance(t, ArrayType):
        t = PointerType(t.elem)
    elif isinstance(t, FunctionType):
        t = PointerType(t)
    return unqualified(t)


def is_integer(t: Type) -> bool:
    return isinstance(t, (IntType, EnumType))


def is_float(t: Type) -> bool:
    return isinstance(t, FloatType)


def is_arithmetic(t: Type) -> bool:
    return t.__class__ in _ARITHMETIC_TYPES


_ARITHMETIC_TYPES = frozenset({IntType, FloatType, EnumType})


def is_pointer(t: Type) -> bool:
    return t.__class__ is PointerType


def is_scalar(t: Type) -> bool:
    return isinstance(t, (IntType, FloatType, EnumType, PointerType))


def sizeof(t: Type) -> int:
    if isinstance(t, (IntType, FloatType)):
        return t.size
    if isinstance(t, (PointerType, AnyPointerType)):
        return 8
    if isinstance(t, EnumType):
        return 4
    if isinstance(t, ArrayType):
        return sizeof(t.elem) * (t.size or 0)
    if isinstance(t, StructType):
        return t.size
    if isinstance(t, VoidType):
        return 1  # GNU C: sizeof(void) == 1, so void* arithmetic is byte arithmetic
    raise ValueError(f"sizeof {t}")


def alignof(t: Type) -> int:
    if isinstance(t, ArrayType):
        return alignof(t.elem)
    if isinstance(t, StructType):
        return t.align
    return max(1, sizeof(t))


def promote(t: Type) -> Type:
    """Integer promotion: anything narrower than int becomes int."""
    if isinstance(t, EnumType):
        return INT
    if isinstance(t, IntType):
        if t.const or t.volatile:   # unqualified(t), for an IntType
            t = with_quals(t, False, False)
        if t.rank < INT.rank:
            return INT
        return t
    return unqualified(t)


def arithmetic_common(a: Type, b: Type) -> Type:
    """The usual arithmetic conversions."""
    a, b = promote(a), promote(b)
    # (only a FloatType equals DOUBLE or FLOAT: the class test first spares the two
    # __eq__ calls, each way, that comparing an IntType with them costs)
    # (promote's types are unqualified, and with_quals makes an unqualified float or
    # double the FLOAT or DOUBLE object: FLOAT itself is no DOUBLE, no __eq__ call)
    a_float, b_float = a.__class__ is FloatType, b.__class__ is FloatType
    if (a_float and (a is DOUBLE or (a is not FLOAT and a == DOUBLE))) or \
            (b_float and (b is DOUBLE or (b is not FLOAT and b == DOUBLE))):
        return DOUBLE
    if (a_float and (a is FLOAT or a == FLOAT)) or (b_float and (b is FLOAT or b == FLOAT)):
        return FLOAT
    assert isinstance(a, IntType) and isinstance(b, IntType)
    if a is b or a == b:
        return a
    if a.signed == b.signed:
        return a if a.rank > b.rank else b
    unsigned, signed = (a, b) if not a.signed else (b, a)
    if unsigned.rank >= signed.rank:
        return unsigned
    if signed.size > unsigned.size:
        return signed
    return UNSIGNED_OF[signed]


def decay(t: Type) -> Type:
    if isinstance(t, ArrayType):
        return PointerType(t.elem)
    if isinstance(t, FunctionType):
        return PointerType(t)
    return t


def make_struct(name: str, fields: list[tuple[str, Type]], kind: str = "struct") -> StructType:
    """A complete struct with C's layout: each field at its alignment, size rounded up."""
    laid, offset, align = [], 0, 1
    for fname, ftype in fields:
        a = alignof(ftype)
        offset = (offset + a - 1) // a * a
        laid.append((fname, ftype, offset if kind == "struct" else 0))
        size = sizeof(ftype)
        offset = offset + size if kind == "struct" else max(offset, size)
        align = max(align, a)
    size = (offset + align - 1) // align * align
    return StructType(name, kind, laid, True, size, align)


def named_instance(struct: StructType, name: str, template, args: tuple) -> StructType:
    """A class template's instance: the struct of its checked body, named `Name<args>`."""
    return dataclasses.replace(struct, name=name, template=template, template_args=args)


def make_vector(name: str, elem: Type, count: int, align: int) -> StructType:
    """A CUDA vector type (vector_types.h): fields x, y, z, w, and its own alignment
    (float4 is __align__(16)), which ld.v4/st.v4 rely on."""
    base = make_struct(name, [(f, elem) for f in "xyzw"[:count]])
    align = max(base.align, align)
    return dataclasses.replace(base, align=align, size=(base.size + align - 1) // align * align, vector=count)


# Element type and alignment of the 1-, 2-, 3- and 4-element forms (vector_types.h).
_VECTOR_FAMILIES = {
    "char": (SCHAR, (1, 2, 1, 4)), "uchar": (UCHAR, (1, 2, 1, 4)), "short": (SHORT, (2, 4, 2, 8)),
    "ushort": (USHORT, (2, 4, 2, 8)), "int": (INT, (4, 8, 4, 16)), "uint": (UINT, (4, 8, 4, 16)),
    "long": (LONG, (8, 16, 8, 16)), "ulong": (ULONG, (8, 16, 8, 16)), "longlong": (LLONG, (8, 16, 8, 16)),
    "ulonglong": (ULLONG, (8, 16, 8, 16)), "float": (FLOAT, (4, 8, 4, 16)), "double": (DOUBLE, (8, 16, 8, 16)),
}
VECTOR_TYPES: dict[str, StructType] = {
    f"{family}{n}": make_vector(f"{family}{n}", elem, n, aligns[n - 1])
    for family, (elem, aligns) in _VECTOR_FAMILIES.items() for n in (1, 2, 3, 4)}
UINT3 = VECTOR_TYPES["uint3"]
DIM3 = make_struct("dim3", [("x", UINT), ("y", UINT), ("z", UINT)])
FLOAT2, FLOAT3, FLOAT4 = VECTOR_TYPES["float2"], VECTOR_TYPES["float3"], VECTOR_TYPES["float4"]
CUDA_ERROR = EnumType("cudaError")
CUDA_MEMCPY_KIND = EnumType("cudaMemcpyKind")
OPAQUE_STREAM = PointerType(make_struct("CUstream_st", []))
OPAQUE_EVENT = PointerType(make_struct("CUevent_st", []))

BUILTIN_TYPEDEFS: dict[str, Type] = {
    "size_t": SIZE_T, "ptrdiff_t": PTRDIFF_T, "intptr_t": LONG, "uintptr_t": ULONG,
    "int8_t": SCHAR, "int16_t": SHORT, "int32_t": INT, "int64_t": LONG,
    "uint8_t": UCHAR, "uint16_t": USHORT, "uint32_t": UINT, "uint64_t": ULONG,
    "dim3": DIM3, **VECTOR_TYPES,
    "cudaError_t": CUDA_ERROR, "cudaMemcpyKind": CUDA_MEMCPY_KIND,
    "cudaStream_t": OPAQUE_STREAM, "cudaEvent_t": OPAQUE_EVENT,
}
BUILTIN_TYPEDEFS.update(cuda_runtime.typedefs())


# ---- symbols -----------------------------------------------------------------------------

@dataclass(eq=False)
class VarSymbol:
    name: str
    type: Type
    kind: str                 # "local", "param", "global", "builtin"
    loc: tuple
    space: str | None = None  # "shared", "constant", "managed" for device variables
    index: int = 0            # parameter position
    assign_count: int = 0     # assignments after the declaration (++, --, op= included)
    address_taken: bool = False
    has_init: bool = False
    is_static: bool = False
    function: "FunctionSymbol | None" = None  # the function a local belongs to
    declaration: object = None  # the InitDeclarator of a global (its initializer)
    const_value: object = None  # a const integer initialized by a constant: its value
    reference: bool = False     # a `T&`: the symbol holds a `T *`, each use reads through it
    static_member: object = None  # a static data member defined outside its class: the class
    linkage_name: str = ""      # its name in PTX where that is not `name` (`_ZN3Cfg5scaleE`)

    def __repr__(self) -> str:
        return f"VarSymbol({self.name!r}, {type_name(self.type)!r}, {self.kind})"


@dataclass(eq=False)
class FunctionSymbol:
    name: str
    type: FunctionType
    loc: tuple
    exec_spaces: frozenset = frozenset({"host"})
    definition: A.FunctionDef | None = None
    param_names: list = field(default_factory=list)
    extern_c: bool = False
    builtin: str | None = None   # codegen's name for a builtin ("sqrtf", "atomicAdd.s32")
    mangled: str = ""
    launch_bounds: list = field(default_factory=list)
    inline: str | None = None     # "__forceinline__", "__noinline__", ...
    address_taken: bool = False   # used as a value in device code (a function pointer)
    template_args: list = field(default_factory=list)   # an instance of a function template: its arguments
    ref_params: frozenset = frozenset()   # indices of `T&` parameters (passed as `T *`)
    declared_type: object = None          # the type as declared (references kept)
    defaults: list = field(default_factory=list)   # per parameter: its default argument (unchecked) or None
    self_mode: str | None = None   # a member function: "pointer" (`this`), "value" (const: `__self`), "ctor"
    default_scope: object = None   # where its default arguments are read (a template instance's own scope)
    returns_ref: bool = False      # returns a non-const `T&`: as the `T *` its returns take the address of

    def __repr__(self) -> str:
        return f"FunctionSymbol({self.name!r}, {type_name(self.type)!r})"

    @property
    def is_kernel(self) -> bool:
        return "global" in self.exec_spaces

    @property
    def on_device(self) -> bool:
        return "global" in self.exec_spaces or "device" in self.exec_spaces

    @property
    def on_host(self) -> bool:
        return "host" in self.exec_spaces


@dataclass(eq=False)
class EnumConstSymbol:
    name: str
    value: int
    type: Type
    loc: tuple


@dataclass(eq=False)
class TypedefSymbol:
    name: str
    type: Type
    loc: tuple


@dataclass(eq=False)
class FieldRef:
    """A field's bare name inside a member function: `this->name` (`*this->name` for a
    lambda's capture by reference, a pointer field)."""
    name: str
    deref: bool = False


@dataclass(eq=False)
class MethodRef:
    """A member function's bare name inside another: `this->name(...)`."""
    name: str


@dataclass(eq=False)
class NamespaceSymbol:
    """A namespace (or an enum class, whose enumerators it holds): `name::member`."""
    name: str
    scope: "Scope"
    loc: tuple
    path: tuple = ()        # the namespaces from the outermost, this one last


@dataclass(eq=False)
class Overloads:
    """A builtin with one entry per parameter-type signature (min, max, atomicAdd)."""
    name: str
    candidates: list          # FunctionSymbol


# ---- builtins ----------------------------------------------------------------------------

def _fn(name, ret, params, spaces=("host",), variadic=False, builtin=None):
    return FunctionSymbol(name, FunctionType(ret, tuple(params), variadic), (0, 0),
                          frozenset(spaces), builtin=builtin or name)


HD = ("host", "device")
DEV = ("device",)
_PC = PointerType(with_quals(CHAR, const=True))
_VP = PointerType(VOID)
_CVP = PointerType(VoidType(const=True))


# The vector types CUDA's __ldg and the other cache-hinted loads take.
LDG_VECTORS = ("char2", "char4", "short2", "short4", "int2", "int4", "longlong2", "uchar2", "uchar4", "ushort2",
               "ushort4", "uint2", "uint4", "ulonglong2", "float2", "float4", "double2")

# The scopes of CUDA's atomics: the device (no suffix), the block, the system.
ATOMIC_SCOPES = ("", "_block", "_system")


def _builtin_functions() -> dict[str, object]:
    table: dict[str, object] = {}

    def add(sym):
        if sym.name in table:
            existing = table[sym.name]
            if isinstance(existing, Overloads):
                existing.candidates.append(sym)
            else:
                table[sym.name] = Overloads(sym.name, [existing, sym])
        else:
            table[sym.name] = sym

    # host runtime and C library
    for sym in (
        _fn("malloc", _VP, [SIZE_T]), _fn("calloc", _VP, [SIZE_T, SIZE_T]), _fn("free", VOID, [_VP]),
        _fn("printf", INT, [_PC], HD, variadic=True), _fn("exit", VOID, [INT]),
        _fn("rand", INT, []), _fn("srand", VOID, [UINT]), _fn("memset", _VP, [_VP, INT, SIZE_T]),
        _fn("memcpy", _VP, [_VP, _CVP, SIZE_T]), _fn("atoi", INT, [_PC]), _fn("atof", DOUBLE, [_PC]),
        _fn("cudaMalloc", CUDA_ERROR, [AnyPointerType(2), SIZE_T]),
        _fn("cudaMallocManaged", CUDA_ERROR, [AnyPointerType(2), SIZE_T]),
        _fn("cudaFree", CUDA_ERROR, [_VP]),
        _fn("cudaMemcpy", CUDA_ERROR, [_VP, _CVP, SIZE_T, CUDA_MEMCPY_KIND]),
        _fn("cudaMemset", CUDA_ERROR, [_VP, INT, SIZE_T]),
        _fn("cudaDeviceSynchronize", CUDA_ERROR, []), _fn("cudaGetLastError", CUDA_ERROR, []),
        _fn("cudaPeekAtLastError", CUDA_ERROR, []), _fn("cudaDeviceReset", CUDA_ERROR, []),
        _fn("cudaGetErrorString", _PC, [CUDA_ERROR]), _fn("cudaSetDevice", CUDA_ERROR, [INT]),
        _fn("cudaEventCreate", CUDA_ERROR, [PointerType(OPAQUE_EVENT)]),
        _fn("cudaEventRecord", CUDA_ERROR, [OPAQUE_EVENT]),
        _fn("cudaEventSynchronize", CUDA_ERROR, [OPAQUE_EVENT]),
        _fn("cudaEventElapsedTime", CUDA_ERROR, [PointerType(FLOAT), OPAQUE_EVENT, OPAQUE_EVENT]),
        _fn("cudaEventDestroy", CUDA_ERROR, [OPAQUE_EVENT]),
    ):
        add(sym)
    for sym in cuda_runtime.functions():
        add(sym)
    # device: synchronization, fences, warps
    add(_fn("__syncthreads", VOID, [], DEV))
    add(_fn("__barrier_sync", VOID, [UINT], DEV))     # barrier.sync (cooperative groups' block sync)
    for name in ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or"):
        add(_fn(name, INT, [INT], DEV))
    for name in ("__threadfence", "__threadfence_block", "__threadfence_system"):
        add(_fn(name, VOID, [], DEV))
    add(_fn("__syncwarp", VOID, [], DEV))
    add(_fn("__syncwarp", VOID, [UINT], DEV))
    add(_fn("__activemask", UINT, [], DEV))
    add(_fn("__ballot_sync", UINT, [UINT, INT], DEV))
    add(_fn("__any_sync", INT, [UINT, INT], DEV))
    add(_fn("__all_sync", INT, [UINT, INT], DEV))
    for name, lane in (("__shfl_sync", INT), ("__shfl_up_sync", UINT), ("__shfl_down_sync", UINT),
                       ("__shfl_xor_sync", INT)):
        for t in (INT, UINT, LONG, ULONG, LLONG, ULLONG, FLOAT, DOUBLE):
            add(_fn(name, t, [UINT, t, lane], DEV, builtin=name))
            add(_fn(name, t, [UINT, t, lane, INT], DEV, builtin=name))
    # math: libdevice's functions (mathlib.py instantiates nvcc's code for each), with
    # C++'s float overloads of the double names (sqrt(float) is sqrtf)
    from .mathlib import SIGNATURES
    codes = {"f": FLOAT, "d": DOUBLE, "i": INT, "j": UINT, "l": LONG, "x": LLONG, "y": ULLONG}
    for key, (result, params, c_name) in SIGNATURES.items():
        add(_fn(c_name, codes[result], [codes[p] for p in params], HD, builtin=key))
    for key, (result, params, c_name) in SIGNATURES.items():
        # (the double form's float overload is the float form: ldexp(float, int) is ldexpf)
        if "d" in params and not key.startswith("__") and \
                SIGNATURES.get(key + "f") == (result.replace("d", "f"), params.replace("d", "f"), key + "f"):
            add(_fn(key, codes[result.replace("d", "f")], [codes[p] for p in params.replace("d", "f")], HD,
                    builtin=key + "f"))
    for t in (INT, UINT, LONG, ULONG, LLONG, ULLONG, FLOAT, DOUBLE):
        add(_fn("min", t, [t, t], HD, builtin="min"))
        add(_fn("max", t, [t, t], HD, builtin="max"))
    add(_fn("abs", INT, [INT], HD))
    add(_fn("abs", LONG, [LONG], HD, builtin="labs"))
    add(_fn("abs", LLONG, [LLONG], HD, builtin="llabs"))
    add(_fn("abs", FLOAT, [FLOAT], HD, builtin="fabsf"))
    add(_fn("abs", DOUBLE, [DOUBLE], HD, builtin="fabs"))
    add(_fn("labs", LONG, [LONG], HD))
    add(_fn("llabs", LLONG, [LLONG], HD))
    # integer and bit intrinsics
    for name, ret, params in (
            ("__popc", INT, [UINT]), ("__popcll", INT, [ULLONG]), ("__clz", INT, [INT]), ("__clzll", INT, [LLONG]),
            ("__ffs", INT, [INT]), ("__ffsll", INT, [LLONG]), ("__brev", UINT, [UINT]), ("__brevll", ULLONG, [ULLONG]),
            ("__mul24", INT, [INT, INT]), ("__umul24", UINT, [UINT, UINT]), ("__mulhi", INT, [INT, INT]),
            ("__umulhi", UINT, [UINT, UINT]), ("__mul64hi", LLONG, [LLONG, LLONG]),
            ("__umul64hi", ULLONG, [ULLONG, ULLONG]), ("__byte_perm", UINT, [UINT, UINT, UINT]),
            ("__funnelshift_l", UINT, [UINT, UINT, UINT]), ("__funnelshift_r", UINT, [UINT, UINT, UINT]),
            ("__float_as_int", INT, [FLOAT]), ("__int_as_float", FLOAT, [INT]), ("__float_as_uint", UINT, [FLOAT]),
            ("__uint_as_float", FLOAT, [UINT]), ("__double_as_longlong", LLONG, [DOUBLE]),
            ("__longlong_as_double", DOUBLE, [LLONG]),
            ("__funnelshift_lc", UINT, [UINT, UINT, UINT]), ("__funnelshift_rc", UINT, [UINT, UINT, UINT]),
            ("__sad", UINT, [INT, INT, UINT]), ("__usad", UINT, [UINT, UINT, UINT]),
            ("__uni_sync", INT, [UINT, INT])):
        add(_fn(name, ret, params, DEV))
    for t in (UINT, INT, ULONG, LONG, ULLONG, LLONG, FLOAT, DOUBLE):   # CUDA's overloads
        add(_fn("__match_any_sync", UINT, [UINT, t], DEV))
        add(_fn("__match_all_sync", UINT, [UINT, t, PointerType(INT)], DEV))
    # The bit casts ptxc's headers write INFINITY, NAN and CUDART_INF_F with: host and
    # device (CUDA's own __int_as_float is device-only)
    add(_fn("__ptxc_int_as_float", FLOAT, [INT], HD, builtin="__int_as_float"))
    add(_fn("__ptxc_longlong_as_double", DOUBLE, [LLONG], HD, builtin="__longlong_as_double"))
    # CUDA's vector types: make_float4(x, y, z, w) and the rest
    for name, vt in VECTOR_TYPES.items():
        elem = vt.fields[0][1]
        add(_fn(f"make_{name}", vt, [elem] * vt.vector, HD, builtin="make_vector"))
    for op in ("atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicAnd", "atomicOr",
               "atomicXor"):
        types = [INT, UINT, ULLONG]
        if op in ("atomicAdd", "atomicExch"):
            types.append(FLOAT)
        if op == "atomicAdd":
            types.append(DOUBLE)
        if op in ("atomicMin", "atomicMax", "atomicAnd", "atomicOr", "atomicXor"):
            types.append(LLONG)
        for t in types:
            if op in ("atomicAnd", "atomicOr", "atomicXor") and t == FLOAT:
                continue
            for scope in ATOMIC_SCOPES:     # atomicAdd, atomicAdd_block, atomicAdd_system
                add(_fn(op + scope, t, [PointerType(t), t], DEV, builtin=op))
    for scope in ATOMIC_SCOPES:
        for t in (INT, UINT, ULLONG, USHORT):
            add(_fn("atomicCAS" + scope, t, [PointerType(t), t, t], DEV, builtin="atomicCAS"))
        add(_fn("atomicInc" + scope, UINT, [PointerType(UINT), UINT], DEV, builtin="atomicInc"))
        add(_fn("atomicDec" + scope, UINT, [PointerType(UINT), UINT], DEV, builtin="atomicDec"))
    for name in ("__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv"):   # loads with cache hints
        for t in (FLOAT, DOUBLE, INT, UINT, LLONG, ULLONG, CHAR, UCHAR, SHORT, USHORT, SCHAR, LONG, ULONG):
            add(_fn(name, t, [PointerType(with_quals(t, const=True))], DEV, builtin=name))
        for vt in (VECTOR_TYPES[n] for n in LDG_VECTORS):
            add(_fn(name, vt, [PointerType(with_quals(vt, const=True))], DEV, builtin=name))
    for op in ("add", "min", "max"):
        for t in (INT, UINT):
            add(_fn(f"__reduce_{op}_sync", t, [UINT, t], DEV, builtin=f"__reduce_{op}_sync"))
    for op in ("and", "or", "xor"):
        add(_fn(f"__reduce_{op}_sync", UINT, [UINT, UINT], DEV))
    for name in ("__stcg", "__stcs", "__stwb", "__stwt"):   # stores with cache hints
        for t in (FLOAT, DOUBLE, INT, UINT, LLONG, ULLONG):
            add(_fn(name, VOID, [PointerType(t), t], DEV, builtin=name))
    return table


BUILTIN_FUNCTIONS = _builtin_functions()

# threadIdx & co: device-only variables of type uint3 / dim3.
BUILTIN_VARIABLES = {
    "threadIdx": UINT3, "blockIdx": UINT3, "blockDim": DIM3, "gridDim": DIM3, "warpSize": INT,
}

BUILTIN_CONSTANTS = {
    "cudaMemcpyHostToHost": (0, CUDA_MEMCPY_KIND), "cudaMemcpyHostToDevice": (1, CUDA_MEMCPY_KIND),
    "cudaMemcpyDeviceToHost": (2, CUDA_MEMCPY_KIND), "cudaMemcpyDeviceToDevice": (3, CUDA_MEMCPY_KIND),
    "cudaMemcpyDefault": (4, CUDA_MEMCPY_KIND), "cudaSuccess": (0, CUDA_ERROR),
}
BUILTIN_CONSTANTS.update(cuda_runtime.constants())


# ---- the analyzer ------------------------------------------------------------------------

class Scope:
    __slots__ = ("names", "tags", "parent")

    def __init__(self, parent: "Scope | None"):
        self.names: dict[str, object] = {}
        self.tags: dict[str, Type] = {}
        self.parent = parent

    def lookup(self, name: str):
        scope = self
        while scope is not None:
            found = scope.names.get(name)
            if found is not None:
                return found
            scope = scope.parent
        if "::" in name:
            return self.lookup_qualified(name)
        return None

    def lookup_qualified(self, name: str):
        """`a::b::c`: `a` as an unqualified name, then each member inside it."""
        first, *rest = name.split("::")
        found = self.lookup(first) if first else None
        for part in rest:
            if not isinstance(found, NamespaceSymbol):
                return None
            found = found.scope.names.get(part)
        return found

    def lookup_tag(self, name: str):
        scope = self
        while scope is not None:
            found = scope.tags.get(name)
            if found is not None:
                return found
            scope = scope.parent
        if "::" in name:    # `ns::S`: the tag inside the namespace
            prefix, _, last = name.rpartition("::")
            ns = self.lookup(prefix)
            if isinstance(ns, NamespaceSymbol):
                return ns.scope.tags.get(last)
        return None


_CUDA_FUNCTIONS: frozenset | None = None


def cuda_function_declared(name: str) -> bool:
    """Whether CUDA's headers declare a device function `name` (cuda_functions.txt,
    learned from them by scripts/learn_cuda_functions.py): one that ptxc does not
    implement is an unsupported feature, not an undeclared name.  Read on first use,
    which is an error path."""
    global _CUDA_FUNCTIONS
    if _CUDA_FUNCTIONS is None:
        from pathlib import Path
        text = (Path(__file__).parent / "cuda_functions.txt").read_text()
        _CUDA_FUNCTIONS = frozenset(line for line in text.splitlines() if line and not line.startswith("#"))
    return name in _CUDA_FUNCTIONS


def effective_function_type(sym: "FunctionSymbol") -> None:
    """A function's parameters as sema and codegen pass them: a `T&` is a `T *` (its
    index in ref_params), a `const T&` of a value type a `T` (the mangled name keeps
    the declared types)."""
    params = sym.type.params
    ret = sym.type.ret
    if isinstance(ret, ReferenceType):
        if ret.pointee.const or isinstance(ret.pointee, ArrayType) or unqualified(ret.pointee) == AUTO:
            # a `const T&` result: a copy, which nothing can tell apart from the reference
            sym.type = FunctionType(unqualified(ret.pointee), params, sym.type.variadic)
        else:   # `T& operator[](int)`, `Vec& operator+=(...)`: the lvalue's address, read through `*`
            sym.type = FunctionType(PointerType(ret.pointee), params, sym.type.variadic)
            sym.returns_ref = True
    if not any(isinstance(p, ReferenceType) for p in params):
        return
    out, refs = [], set()
    for index, p in enumerate(params):
        if isinstance(p, ReferenceType):
            if p.pointee.const and not isinstance(p.pointee, ArrayType):
                out.append(unqualified(p.pointee))
            else:
                out.append(PointerType(p.pointee))
                refs.add(index)
        else:
            out.append(p)
    sym.type = FunctionType(sym.type.ret, tuple(out), sym.type.variadic)
    sym.ref_params = frozenset(refs)


def _is_builtin(sym) -> bool:
    return isinstance(sym, Overloads) or getattr(sym, "loc", None) == (0, 0)


def _named_for_linkage(base: Type, declarator: A.Declarator) -> Type:
    """`typedef struct { ... } Name;`: C++ names the unnamed struct or enum `Name`
    (for linkage, so for mangling too)."""
    if isinstance(base, (StructType, EnumType)) and base.name.startswith("<anonymous") and declarator.name \
            and not declarator.derivations:
        return dataclasses.replace(base, name=declarator.name)
    return base


def _same_type(a: Type, b: Type) -> bool:
    """a == b, without the dataclass __eq__ call (or two) where identity or class tells."""
    return a is b or (a.__class__ is b.__class__ and a == b)


def _conversion_rank(arg: Type, param: Type, expr: A.Expr) -> int | None:
    """0 exact match, 1 promotion, 2 conversion, None: the argument does not convert."""
    # (types of different classes are never equal: the class test spares the dataclass
    # __eq__ calls, both ways, that `==` makes to find that out)
    if arg is param or (arg.__class__ is param.__class__ and arg == param):
        return 0
    if is_arithmetic(param) and is_arithmetic(arg):
        promoted = promote(arg)
        if promoted.__class__ is not param.__class__:
            return 2
        return 1 if promoted is param or promoted == param or (
            arg.__class__ is FloatType and (arg is FLOAT or arg == FLOAT) and (param is DOUBLE or param == DOUBLE)) \
            else 2
    if param.__class__ is PointerType and arg.__class__ is PointerType:
        to, fro = unqualified(param.pointee), unqualified(arg.pointee)
        if to is fro or (to.__class__ is fro.__class__ and to == fro):
            return 0
        return 2 if isinstance(param.pointee, VoidType) else None
    if isinstance(param, AnyPointerType):
        return 0 if isinstance(arg, PointerType) else None
    if isinstance(param, AnySymbolType):
        return 0
    if param.__class__ is PointerType and is_integer(arg) and _is_zero_literal(expr):
        return 2            # a null pointer constant (cudaEventRecord(e, 0): the default stream)
    if isinstance(param, StructType) and isinstance(arg, StructType) and param.name == arg.name:
        return 0
    if param.__class__ is StructType or arg.__class__ is StructType:   # a user-defined conversion
        from . import classes
        if classes.converting_constructors(param, arg) or any(
                unqualified(m.type.ret) == unqualified(param) or
                (is_arithmetic(m.type.ret) and is_arithmetic(param)) for m in classes.conversion_operators(arg)):
            return 3
    return None


def _is_zero_literal(expr) -> bool:
    while isinstance(expr, A.ImplicitCast):
        expr = expr.operand
    return isinstance(expr, A.IntLit) and expr.value == 0


class SemaError(Exception):
    """Aborts checking of one expression after its diagnostic has been recorded."""


_ARITH_OPS = {"+", "-", "*", "/"}
_INT_OPS = {"%", "&", "|", "^"}
_SHIFT_OPS = {"<<", ">>"}
_COMPARE_OPS = {"<", ">", "<=", ">=", "==", "!="}
_LOGICAL_OPS = {"&&", "||"}


# The global scope's builtin names, made once: typedefs, variables (_FRESH: a new symbol
# per analysis), enum constants, functions.
_GLOBAL_NAMES: dict = {}
_FRESH = object()


class Analyzer:
    def __init__(self, filename: str):
        self.filename = filename
        self.diagnostics: list[Diagnostic] = []
        self.globals = Scope(None)
        self.completions: dict = {}     # decl of a struct named before its definition -> the complete type
        self.scope = self.globals
        self.function: FunctionSymbol | None = None
        self.loop_depth = 0
        self.switch_depth = 0
        self.functions: list[FunctionSymbol] = []
        self.namespace_scope = self.globals   # where declarations at file level go
        self.poisoned: set = set()            # names whose declaration failed
        self.namespace_path: tuple = ()
        if not _GLOBAL_NAMES:   # typedefs, constants, functions: never changed, shared by every analysis
            _GLOBAL_NAMES.update({name: TypedefSymbol(name, t, (0, 0)) for name, t in BUILTIN_TYPEDEFS.items()})
            _GLOBAL_NAMES.update(dict.fromkeys(BUILTIN_VARIABLES, _FRESH))
            _GLOBAL_NAMES.update({name: EnumConstSymbol(name, value, t, (0, 0))
                                  for name, (value, t) in BUILTIN_CONSTANTS.items()})
            _GLOBAL_NAMES.update(BUILTIN_FUNCTIONS)
        names = self.globals.names = dict(_GLOBAL_NAMES)
        for name, t in BUILTIN_VARIABLES.items():   # variables: fresh (sema counts their uses)
            if names[name] is _FRESH:
                names[name] = VarSymbol(name, t, "builtin", (0, 0))

    # ---- diagnostics -------------------------------------------------------------------
    def error(self, message: str, loc: tuple) -> None:
        line, col = loc if loc and loc[0] > 0 else (1, 1)
        self.diagnostics.append(Diagnostic(message, SourceLoc(self.filename, line, col)))

    def fail(self, message: str, loc: tuple):
        self.error(message, loc)
        raise SemaError(message)

    # ---- translation unit --------------------------------------------------------------
    def run(self, unit: A.TranslationUnit) -> None:
        self.check_external_items(unit.items)

    def check_external_items(self, items: list) -> None:
        for item in items:
            try:
                cls = item.__class__
                if cls is A.FunctionDef:
                    self.check_function_def(item)
                elif cls is A.Declaration:
                    self.check_global_declaration(item)
                else:
                    _EXTERNAL_CHECKS[cls](self, item)
            except SemaError:
                pass
            except RecursionError:
                self.error(f"unsupported feature: code nested more than about {NESTING_LIMIT} levels deep", item.loc)
            except Exception as exc:  # a bug in ptxc, not in the user's code: say so plainly
                if os.environ.get("PTXC_TRACEBACK"):
                    raise
                self.error(f"internal error in ptxc's semantic analysis ({type(exc).__name__}: {exc}); "
                           "please report it (PTXC_TRACEBACK=1 shows the traceback)", item.loc)

    # ---- declarations ------------------------------------------------------------------
    def base_type(self, specs: A.DeclSpecifiers) -> Type:
        keywords = []
        named: Type | None = None
        for spec in specs.type_specs:
            if isinstance(spec, str):
                keywords.append(spec)
            elif isinstance(spec, A.TypeNameRef):
                sym = self.scope.lookup(spec.name)
                if isinstance(sym, TypedefSymbol):
                    named = sym.type
                else:
                    tag = self.scope.lookup_tag(spec.name)
                    if tag is None:
                        self.fail(f"unknown type name '{spec.name}'", spec.loc)
                    named = tag
            elif isinstance(spec, A.StructSpec):
                named = self.struct_type(spec)
            elif isinstance(spec, A.EnumSpec):
                named = self.enum_type(spec)
            elif isinstance(spec, A.TemplateTypeRef):
                named = self.template_type(spec)
        if named is not None:
            if keywords:
                self.fail(f"cannot combine '{' '.join(keywords)}' with a type name", specs.loc)
            t = named
        elif not keywords:
            self.fail("a type specifier is required for all declarations", specs.loc)
        elif keywords == ["auto"]:
            t = AUTO
        else:
            t = _SPECIFIER_TYPES.get(tuple(sorted(keywords)))
            if t is None:
                self.fail(f"invalid combination of type specifiers '{' '.join(keywords)}'", specs.loc)
        const = "const" in specs.qualifiers
        volatile = "volatile" in specs.qualifiers
        if const or volatile:
            t = with_quals(t, const or t.const, volatile or t.volatile)
        return t

    def struct_type(self, spec: A.StructSpec) -> Type:
        if spec.members is not None:
            from . import classes
            if classes.has_class_members(spec):
                name = spec.name or f"<anonymous {spec.kind}>"
                if spec.name and self.namespace_path:
                    name = "::".join(self.namespace_path + (spec.name,))
                return classes.build_class(self, spec, name)
        if spec.members is None:
            existing = self.scope.lookup_tag(spec.name)
            if existing is None:
                existing = StructType(spec.name, spec.kind)
                self.scope.tags[spec.name] = existing
            return existing
        name = spec.name or f"<anonymous {spec.kind}>"
        fields = []
        for member in spec.members:
            base = self.base_type(member.specs)
            for declarator in member.declarators:
                t = self.derive(base, declarator)
                if declarator.name in [f[0] for f in fields]:
                    self.error(f"duplicate member '{declarator.name}'", declarator.loc)
                fields.append((declarator.name, t))
        if spec.name and self.namespace_path:
            name = "::".join(self.namespace_path + (spec.name,))
        struct = make_struct(name, fields, spec.kind)
        if spec.align is not None:      # `struct __align__(16) S`: at least that alignment
            align = max(struct.align, self.constant_int(spec.align))
            struct = dataclasses.replace(struct, align=align, size=(struct.size + align - 1) // align * align)
        if spec.name:
            forward = self.scope.tags.get(spec.name)
            if isinstance(forward, StructType) and not forward.complete:
                # `struct Node { struct Node* next; }`: the type its members named before it was complete
                struct = dataclasses.replace(struct, decl=forward.decl)
                self.completions[forward.decl] = struct
            self.scope.tags[spec.name] = struct
        return struct

    def enum_type(self, spec: A.EnumSpec) -> Type:
        if spec.enumerators is None:
            existing = self.scope.lookup_tag(spec.name)
            if existing is None:
                self.fail(f"use of undeclared enum '{spec.name}'", spec.loc)
            return existing
        t = EnumType("::".join(self.namespace_path + (spec.name,)) if spec.name else "<anonymous enum>")
        if spec.name:
            self.scope.tags[spec.name] = t
        members = None
        if spec.scoped:     # `enum class E { A }`: `E::A`, not `A`
            members = NamespaceSymbol(spec.name, Scope(None), spec.loc)
            self.scope.names[spec.name] = members
        value = 0
        for enumerator in spec.enumerators:
            if enumerator.value is not None:
                value = self.constant_int(enumerator.value)
            sym = EnumConstSymbol(enumerator.name, value, t, enumerator.loc)
            if members is not None:
                members.scope.names[enumerator.name] = sym
            else:
                self.declare(sym)
            value += 1
        return t

    def derive(self, base: Type, declarator: A.Declarator) -> Type:
        t = base
        for deriv in declarator.derivations:
            if isinstance(deriv, A.PointerDeriv) and deriv.qualifiers and deriv.qualifiers[0] == "&":
                t = ReferenceType(t)
            elif isinstance(deriv, A.PointerDeriv):
                t = PointerType(t, "const" in deriv.qualifiers, "volatile" in deriv.qualifiers,
                                any(q.startswith("__restrict") or q == "restrict" for q in deriv.qualifiers))
            elif isinstance(deriv, A.ArrayDeriv):
                size = None
                if deriv.size is not None:
                    size = self.constant_int(deriv.size)
                    if size <= 0:
                        self.error("array size must be positive", deriv.size.loc)
                if isinstance(t, FunctionType):
                    self.fail("declared as array of functions", declarator.loc)
                t = ArrayType(t, size)
            elif isinstance(deriv, A.FunctionDeriv):
                params = self.parameter_types(deriv)
                t = FunctionType(t, tuple(p for p, _, _ in params), deriv.variadic)
        return t

    def parameter_types(self, deriv: A.FunctionDeriv) -> list[tuple[Type, str | None, tuple]]:
        params = []
        for p in deriv.params:
            base = self.base_type(p.specs)
            t = self.derive(base, p.declarator)
            params.append((t, p.declarator.name, p.declarator.loc))
        if len(params) == 1 and isinstance(params[0][0], VoidType) and params[0][1] is None:
            return []
        for t, name, loc in params:
            if t == AUTO:
                self.fail("unsupported feature: 'auto' parameters (generic lambdas)", loc)
            if isinstance(t, VoidType):
                self.error("parameter has incomplete type 'void'", loc)
        return params

    def declare(self, sym) -> None:
        scope = self.scope
        old = scope.names.get(sym.name)
        if old is None or (scope is self.globals and _is_builtin(old)):
            scope.names[sym.name] = sym
            return
        self.error(f"redefinition of '{sym.name}'", sym.loc)

    def check_global_declaration(self, decl: A.Declaration) -> None:
        specs = decl.specs
        base = self.base_type(specs)
        if specs.constexpr:
            base = with_quals(base, const=True)
        if "typedef" in specs.storage:
            for init in decl.declarators:
                t = self.derive(_named_for_linkage(base, init.declarator), init.declarator)
                self.declare(TypedefSymbol(init.declarator.name, t, init.declarator.loc))
            return
        for init in decl.declarators:
            d = init.declarator
            t = self.derive(base, d)
            if d.name and "::" in d.name and not isinstance(t, FunctionType):
                self.define_static_member(specs, init, t)
                continue
            if isinstance(t, FunctionType):
                self.declare_function(specs, d, t)
                continue
            space = next((s.strip("_") for s in specs.memory_spaces), None)
            if space is None and specs.exec_spaces:
                space = "device"
            sym = VarSymbol(d.name, t, "global", d.loc, space=space, has_init=init.init is not None,
                            is_static="static" in specs.storage)
            sym.declaration = init
            self.declare(sym)
            init.symbol = sym
            if init.init is not None:
                if unqualified(t) == AUTO:
                    t = sym.type = self.deduced_local_type(t, init, d)
                init.init = self.check_initializer(init.init, t)
                self.note_constant(sym, init.init)
                if isinstance(t, ArrayType) and t.size is None and isinstance(init.init, A.InitList):
                    sym.type = ArrayType(t.elem, len(init.init.items))

    def define_static_member(self, specs: A.DeclSpecifiers, init: A.InitDeclarator, t: Type) -> None:
        """`const float Cfg::scale = 2.0f;`: the definition of a static data member its
        class declared (a host variable; a constant one device code reads as its value)."""
        d = init.declarator
        sym = self.scope.lookup(d.name)
        if not isinstance(sym, VarSymbol) or sym.static_member is None:
            self.fail(f"no static data member '{d.name}' declared", d.loc)
        if specs.memory_spaces or specs.exec_spaces:
            self.fail("memory qualifier on data member is not allowed", d.loc)
        if unqualified(t) != unqualified(sym.type) or t.const != sym.type.const:
            self.fail(f"declaration of '{d.name}' as '{type_name(t)}' does not match its class's "
                      f"'{type_name(sym.type)}'", d.loc)
        if sym.declaration is not None:
            self.fail(f"redefinition of '{d.name}'", d.loc)
        sym.declaration = init
        init.symbol = sym
        if init.init is not None:
            sym.has_init = True
            init.init = self.check_initializer(init.init, sym.type)
            self.note_constant(sym, init.init)

    def note_constant(self, sym: VarSymbol, init) -> None:
        """`const int n = 100;`: `n` is an integer constant expression (`float h[n]`);
        a `const float` at file or class scope initialized by a constant is that constant
        (device code may read it, as nvcc folds it)."""
        if sym.type.const and not isinstance(init, A.InitList):
            if is_integer(sym.type):
                value = constant_value(init)
                if isinstance(value, int):
                    sym.const_value = value
            elif sym.kind == "global" and isinstance(unqualified(sym.type), FloatType) and \
                    not sym.type.volatile:
                value = constant_value(init)
                if isinstance(value, (int, float)):
                    sym.const_value = convert_constant(value, unqualified(sym.type))

    def deduced_local_type(self, t: Type, init: A.InitDeclarator, d: A.Declarator) -> Type:
        """`auto x = e;` has e's type (decayed, top-level qualifiers dropped, `const auto`
        keeps const); `T& r = lvalue;` holds the lvalue's address."""
        if init.init is None or isinstance(init.init, A.InitList):
            self.fail(f"declaration of '{d.name}' with deduced or reference type needs an initializer", d.loc)
        if isinstance(t, ReferenceType):
            value = self.check_expr(init.init)
            if not self.is_lvalue(value):
                if t.pointee.const:      # `const T& r = temporary;`: a copy, which nothing can tell apart
                    return unqualified(t.pointee)
                self.fail("non-const reference cannot bind to a temporary", init.init.loc)
            pointee = value.type if unqualified(t.pointee) == AUTO else t.pointee
            if unqualified(t.pointee) == AUTO and t.pointee.const:
                pointee = with_quals(pointee, const=True)
            init.init = self.check_expr(A.Unary(value.loc, "&", value))
            init.init.type = PointerType(pointee)
            init.reference = True
            return PointerType(pointee)
        value = self.rvalue(self.check_expr(init.init))
        init.init = value
        deduced = unqualified(value.type)
        if t.const:
            deduced = with_quals(deduced, const=True)
        return deduced

    @staticmethod
    def _same_params_as_builtin(existing, t: FunctionType) -> bool:
        builtins = existing.candidates if isinstance(existing, Overloads) else [existing]
        params = tuple(unqualified(p) for p in t.params)
        return any(isinstance(b, FunctionSymbol) and
                   tuple(unqualified(p) for p in b.type.params) == params for b in builtins)

    def declare_function(self, specs: A.DeclSpecifiers, d: A.Declarator, t: FunctionType) -> FunctionSymbol:
        spaces = frozenset(s.strip("_") for s in specs.exec_spaces) or frozenset({"host"})
        if "global" in spaces and not isinstance(t.ret, VoidType):
            self.error("a __global__ function must have a void return type", d.loc)
        if "global" in spaces and ("host" in spaces or "device" in spaces):
            self.error(f"'{'__host__' if 'host' in spaces else '__device__'}' and '__global__' cannot be combined",
                       specs.loc)
        existing = self.namespace_scope.names.get(d.name)
        overloads = None
        if isinstance(existing, FunctionSymbol) and existing.loc != (0, 0):
            if existing.declared_type == t:
                return existing
            overloads = Overloads(d.name, [existing])      # C++ overloading: another signature
        elif isinstance(existing, Overloads) and existing.candidates and existing.candidates[0].loc != (0, 0):
            same = [c for c in existing.candidates if isinstance(c, FunctionSymbol) and c.declared_type == t]
            if same:
                return same[0]
            overloads = existing
        elif existing.__class__ is FunctionTemplate:
            overloads = Overloads(d.name, [existing])
        elif isinstance(existing, (FunctionSymbol, Overloads)) and not self._same_params_as_builtin(existing, t):
            # C++ overloading of a builtin (cuda_fp16.h's `__hadd(__half, __half)` beside
            # the integer `__hadd`, `atomicAdd(__half *, __half)`): another signature
            builtins = existing.candidates if isinstance(existing, Overloads) else [existing]
            overloads = Overloads(d.name, list(builtins))
        sym = FunctionSymbol(d.name, t, d.loc, spaces, extern_c=specs.extern_c,
                             launch_bounds=list(specs.launch_bounds),
                             inline=next(iter(specs.function_specs), None))
        fderiv = d.derivations[-1] if d.derivations and isinstance(d.derivations[-1], A.FunctionDeriv) else None
        sym.param_names = [p.declarator.name for p in fderiv.params] if fderiv else []
        sym.defaults = [p.default for p in fderiv.params] if fderiv else []
        sym.default_scope = self.scope
        if overloads is None and isinstance(existing, (FunctionSymbol, Overloads)) and (
                isinstance(existing, Overloads) or existing.loc == (0, 0)):
            self.error(f"redefinition of builtin function '{d.name}'", d.loc)
        if overloads is not None:
            overloads.candidates.append(sym)
            self.namespace_scope.names[d.name] = overloads
        else:
            self.namespace_scope.names[d.name] = sym
        from .mangle import mangle_function  # mangle imports this module
        sym.mangled = d.name if sym.extern_c or d.name == "main" else \
            mangle_function(d.name, list(t.params), self.namespace_path)
        sym.declared_type = t
        effective_function_type(sym)
        self.functions.append(sym)
        return sym

    def check_function_def(self, fdef: A.FunctionDef) -> None:
        base = self.base_type(fdef.specs)
        d = fdef.declarator
        t = self.derive(base, d)
        if not isinstance(t, FunctionType) or not isinstance(d.derivations[-1], A.FunctionDeriv):
            self.fail("expected a function declarator", d.loc)
        sym = self.declare_function(fdef.specs, d, t)
        if sym.definition is not None:
            self.error(f"redefinition of '{d.name}'", d.loc)
        self.define_instance(sym, fdef, self.namespace_scope)

    def define_instance(self, sym: "FunctionSymbol", fdef: A.FunctionDef, parent: "Scope") -> None:
        """Check `fdef`'s body as `sym`'s, its names looked up from `parent` (the file,
        a namespace, or a template instance's parameters).  Re-entrant: a template
        instantiated while another function is checked."""
        d = fdef.declarator
        sym.definition = fdef
        fdef.symbol = sym
        saved = (self.scope, self.function, self.loop_depth, self.switch_depth)
        self.scope = parent
        try:
            params = self.parameter_types(d.derivations[-1])
            sym.param_names = [name for _, name, _ in params]
            effective_function_type(sym)
            if fdef.specs.launch_bounds:
                sym.launch_bounds = [self.check_expr(e) for e in fdef.specs.launch_bounds]
            self.function = sym
            self.loop_depth = self.switch_depth = 0
            self.scope = Scope(parent)
            fdef.param_symbols = []
            for index, (ptype, name, loc) in enumerate(params):
                psym = VarSymbol(name or f"<param {index}>", sym.type.params[index], "param", loc, index=index,
                                 function=sym, reference=index in sym.ref_params)
                fdef.param_symbols.append(psym)
                if name:
                    self.declare(psym)
            for item in fdef.body.items:
                self.check_stmt(item)
            if sym.type.ret == AUTO:    # `auto` without a return with a value: void
                sym.type = FunctionType(VOID, sym.type.params, sym.type.variadic)
        finally:
            self.scope, self.function, self.loop_depth, self.switch_depth = saved

    def check_local_declaration(self, decl: A.Declaration) -> None:
        specs = decl.specs
        base = self.base_type(specs)
        if specs.constexpr:
            base = with_quals(base, const=True)
        if "typedef" in specs.storage:
            for init in decl.declarators:
                self.declare(TypedefSymbol(init.declarator.name,
                                           self.derive(_named_for_linkage(base, init.declarator), init.declarator),
                                           init.declarator.loc))
            return
        for init in decl.declarators:
            d = init.declarator
            try:
                t = self.derive(base, d)
                if isinstance(t, FunctionType):
                    self.error("function declarations inside a function are not supported", d.loc)
                    continue
                if unqualified(t) == AUTO or isinstance(t, ReferenceType):
                    try:
                        t = self.deduced_local_type(t, init, d)
                    except SemaError:
                        self.poisoned.add(d.name)   # (its uses are not errors of their own)
                        raise
                if isinstance(t, VoidType):
                    self.error(f"variable '{d.name}' has incomplete type 'void'", d.loc)
                    continue
                space = next((s.strip("_") for s in specs.memory_spaces), None)
                if space is not None and self.function is not None and not self.function.on_device:
                    self.error(f"__{space}__ variables are only allowed in device code", specs.loc)
                if isinstance(t, ArrayType) and t.size is None and isinstance(init.init, A.StringLit):
                    t = ArrayType(t.elem, len(init.init.value.encode("latin-1")) + 1, t.const, t.volatile)
                sym = VarSymbol(d.name, t, "local", d.loc, space=space, is_static="static" in specs.storage,
                                has_init=init.init is not None or d.construct_args is not None,
                                function=self.function)
                if isinstance(t, ArrayType) and t.size is None and not (space == "shared" and "extern" in specs.storage) \
                        and not isinstance(init.init, A.InitList):
                    self.error(f"array '{d.name}' has no size", d.loc)
                self.declare(sym)  # in scope in its own initializer, as in C
                init.symbol = sym
                if isinstance(t, PointerType) and getattr(init, "reference", False):
                    sym.reference = True
                    sym.type = t
                elif init.init is not None:
                    if space == "shared":
                        self.error("initializer not allowed for __shared__ variable", init.init.loc)
                    init.init = self.check_initializer(init.init, t)
                    self.note_constant(sym, init.init)
                    if isinstance(t, ArrayType) and t.size is None and isinstance(init.init, A.InitList):
                        t = ArrayType(t.elem, len(init.init.items))
                        sym.type = t
                elif d.construct_args is None and isinstance(t, StructType) and t.info is not None and \
                        d.name != "__self" and space is None:
                    from . import classes
                    ctor = classes.default_constructor(t)
                    if ctor is not None:        # `S s;` runs S's default constructor
                        sym.has_init = True
                        init.init = self.check_construct(A.Construct(d.loc, A.TypeName(d.loc, specs, d, t), []),
                                                         known_type=t)
                elif d.construct_args is not None:
                    init.init = self.check_construct(A.Construct(d.loc, A.TypeName(d.loc, specs, d, t),
                                                                 d.construct_args), known_type=t)
            except SemaError:
                pass

    def check_initializer(self, init, t: Type):
        if isinstance(init, A.InitList) and isinstance(t, StructType) and t.info is not None and t.info.ctors:
            from . import classes     # `S s{a, b}` / `S s = {a, b}` of a class with constructors
            return classes.construct(self, A.Construct(init.loc, None, init.items), unqualified(t),
                                     [self.operand(a) for a in init.items])
        if isinstance(init, A.InitList):
            if isinstance(t, ArrayType):
                if t.size is not None and len(init.items) > t.size:
                    self.error("excess elements in array initializer", init.items[t.size].loc)
                init.items = [self.check_initializer(item, t.elem) for item in init.items]
            elif isinstance(t, StructType):
                if len(init.items) > len(t.fields):
                    self.error("excess elements in struct initializer", init.items[len(t.fields)].loc)
                init.items = [self.check_initializer(item, ftype) for item, (_, ftype, _) in zip(init.items, t.fields)]
            elif len(init.items) == 1:
                init.items = [self.check_initializer(init.items[0], t)]
            elif not init.items:    # `int x{};`: value-initialized, zero
                init.items = [self.implicit(self.check_expr(A.IntLit(init.loc, 0, "0")), unqualified(t))]
            else:
                self.error("too many initializers for a scalar", init.loc)
            return init
        expr = self.check_expr(init)
        return self.convert_assign(expr, unqualified(t) if not isinstance(t, ArrayType) else t, "initializing")

    # ---- statements --------------------------------------------------------------------
    def check_stmt(self, stmt) -> None:
        try:
            _STMT_CHECKS[type(stmt)](self, stmt)
        except SemaError:
            pass

    def check_compound(self, stmt: A.CompoundStmt) -> None:
        self.scope = Scope(self.scope)
        try:
            for item in stmt.items:
                self.check_stmt(item)
        finally:
            self.scope = self.scope.parent

    def check_expr_stmt(self, stmt: A.ExprStmt) -> None:
        if stmt.expr is not None:
            stmt.expr = self.check_expr(stmt.expr)

    def check_condition(self, expr: A.Expr) -> A.Expr:
        expr = self.rvalue(self.check_expr(expr))
        if not is_scalar(expr.type):
            self.fail(f"value of type '{expr.type}' is not contextually convertible to 'bool'", expr.loc)
        return expr

    def check_if(self, stmt: A.IfStmt) -> None:
        stmt.cond = self.check_condition(stmt.cond)
        if stmt.constexpr:      # only the branch taken is instantiated
            value = constant_value(stmt.cond)
            if not isinstance(value, (int, float)):
                self.fail("'if constexpr' condition is not a constant expression", stmt.cond.loc)
            if value:
                stmt.else_ = None
            else:
                stmt.then = A.CompoundStmt(stmt.loc, [])
        self.check_scoped(stmt.then)
        if stmt.else_ is not None:
            self.check_scoped(stmt.else_)

    def check_scoped(self, stmt) -> None:
        self.scope = Scope(self.scope)
        try:
            self.check_stmt(stmt)
        finally:
            self.scope = self.scope.parent

    def check_for(self, stmt: A.ForStmt) -> None:
        self.scope = Scope(self.scope)
        try:
            if stmt.init is not None:
                self.check_stmt(stmt.init)
            if stmt.cond is not None:
                try:
                    stmt.cond = self.check_condition(stmt.cond)
                except SemaError:
                    pass
            if stmt.step is not None:
                try:
                    stmt.step = self.check_expr(stmt.step)
                except SemaError:
                    pass
            self.loop_depth += 1
            try:
                self.check_scoped(stmt.body)
            finally:
                self.loop_depth -= 1
        finally:
            self.scope = self.scope.parent

    def check_while(self, stmt: A.WhileStmt) -> None:
        try:
            stmt.cond = self.check_condition(stmt.cond)
        except SemaError:
            pass
        self.loop_depth += 1
        try:
            self.check_scoped(stmt.body)
        finally:
            self.loop_depth -= 1

    def check_do(self, stmt: A.DoStmt) -> None:
        self.loop_depth += 1
        try:
            self.check_scoped(stmt.body)
        finally:
            self.loop_depth -= 1
        stmt.cond = self.check_condition(stmt.cond)

    def check_return(self, stmt: A.ReturnStmt) -> None:
        ret = self.function.type.ret if self.function else VOID
        if stmt.value is None and self.function is not None and self.function.self_mode == "ctor":
            stmt.value = A.Ident(stmt.loc, "__self")    # a constructor returns the object it built
        if stmt.value is None:
            if not isinstance(ret, VoidType) and self.function.name != "main":
                self.error(f"non-void function '{self.function.name}' should return a value", stmt.loc)
            return
        value = self.check_expr(stmt.value)
        if ret == AUTO:     # `auto f()` (a lambda's operator()): the first return gives the type
            ret = unqualified(decay(value.type)) if not isinstance(value.type, VoidType) else VOID
            fn = self.function
            fn.type = FunctionType(ret, fn.type.params, fn.type.variadic)
        if isinstance(ret, VoidType):
            if not isinstance(value.type, VoidType):
                self.error(f"void function '{self.function.name}' should not return a value", stmt.loc)
            stmt.value = value
            return
        if self.function.returns_ref:       # `return x;` of a `T&` function returns &x
            if not self.is_lvalue(value):
                self.fail("a non-const reference result cannot bind to a temporary", value.loc)
            if unqualified(value.type) != unqualified(ret.pointee) or (value.type.const and not ret.pointee.const):
                self.fail(f"cannot bind a reference of type '{ret.pointee} &' to a value of type '{value.type}'",
                          value.loc)
            stmt.value = self.address_of_lvalue(value)
            return
        stmt.value = self.convert_assign(value, unqualified(ret), "returning")

    def check_range_for(self, stmt: A.RangeForStmt) -> None:
        """`for (T v : arr) body` over an array of known size: `for (int i = 0; i < N; ++i)
        { T v = arr[i]; body }` (the array named once, by a reference when it is not a name)."""
        rng = self.check_expr(stmt.range)
        t = rng.type
        if not isinstance(t, ArrayType) or t.size is None:
            self.fail(f"unsupported feature: range-based for over '{t}' (only arrays of known size)", stmt.range.loc)
        loc = stmt.loc
        index = f"__range_index{loc[0]}_{loc[1]}"
        int_specs = A.DeclSpecifiers(loc, [], [], [], [], [], ["int"])
        init = A.Declaration(loc, int_specs, [A.InitDeclarator(loc, A.Declarator(loc, index, []),
                                                               A.IntLit(loc, 0, "0"))])
        cond = A.Binary(loc, "<", A.Ident(loc, index), A.IntLit(loc, t.size, str(t.size)))
        step = A.PreIncDec(loc, "++", A.Ident(loc, index))
        element = A.Declaration(loc, stmt.specs, [A.InitDeclarator(loc, stmt.declarator,
                                                                   A.Index(loc, rng, A.Ident(loc, index)))])
        stmt.lowered = A.ForStmt(loc, init, cond, step, A.CompoundStmt(loc, [element, stmt.body]))
        stmt.specs = stmt.declarator = stmt.range = stmt.body = None
        self.check_stmt(stmt.lowered)

    def check_static_assert(self, stmt: A.StaticAssert) -> None:
        value = self.constant_int(stmt.cond)
        if not value:
            message = f": {stmt.message}" if stmt.message else ""
            self.error(f"static assertion failed{message}", stmt.cond.loc)

    def check_using_alias(self, stmt: A.UsingAlias) -> None:
        self.declare(TypedefSymbol(stmt.name, self.resolve_type_name(stmt.type_name), stmt.loc))

    def check_using_declaration(self, stmt: A.UsingDeclaration) -> None:
        last = stmt.name.rpartition("::")[2]
        sym = self.scope.lookup(stmt.name)
        tag = self.scope.lookup_tag(stmt.name)
        if sym is None and tag is None:
            self.fail(f"no member named '{last}' in '{stmt.name.rpartition('::')[0]}'", stmt.loc)
        if sym is not None:
            self.scope.names[last] = sym
        if tag is not None:
            self.scope.tags[last] = tag

    def check_using_directive(self, stmt: A.UsingDirective) -> None:
        ns = self.scope.lookup(stmt.name)
        if not isinstance(ns, NamespaceSymbol):
            self.fail(f"'{stmt.name}' is not a namespace", stmt.loc)
        for name, sym in ns.scope.names.items():
            self.scope.names.setdefault(name, sym)

    def check_namespace_alias(self, stmt: A.NamespaceAlias) -> None:
        ns = self.scope.lookup(stmt.target)
        if not isinstance(ns, NamespaceSymbol):
            self.fail(f"'{stmt.target}' is not a namespace", stmt.loc)
        self.scope.names[stmt.name] = ns

    def check_namespace(self, item: A.NamespaceDef) -> None:
        name = item.name or "(anonymous namespace)"
        existing = self.namespace_scope.names.get(name)
        if not isinstance(existing, NamespaceSymbol):
            existing = NamespaceSymbol(name, Scope(self.namespace_scope), item.loc, self.namespace_path + (name,))
            self.namespace_scope.names[name] = existing
        saved = (self.scope, self.namespace_scope, self.namespace_path)
        self.scope = self.namespace_scope = existing.scope
        self.namespace_path = existing.path if item.name else self.namespace_path
        try:
            self.check_external_items(item.items)
        finally:
            self.scope, self.namespace_scope, self.namespace_path = saved
        if item.name is None:       # its names are the enclosing scope's
            for n, sym in existing.scope.names.items():
                self.scope.names.setdefault(n, sym)

    def check_template_decl(self, item: A.TemplateDecl) -> None:
        from . import templates as T
        decl = item.declaration
        if not item.params:
            return self.check_specialization(item)
        if isinstance(decl, A.FunctionDef) or (isinstance(decl, A.Declaration) and decl.declarators):
            d = decl.declarator if isinstance(decl, A.FunctionDef) else decl.declarators[0].declarator
            existing = self.namespace_scope.names.get(d.name)
            if isinstance(existing, T.FunctionTemplate):
                if isinstance(decl, A.FunctionDef) and not isinstance(existing.definition, A.FunctionDef):
                    existing.definition, existing.params = decl, item.params
                return
            template = T.FunctionTemplate(d.name, item.params, decl, d.loc, self.namespace_path, self.namespace_scope)
            if isinstance(decl, A.Declaration):     # a prototype: the definition comes later
                template.definition = A.Declaration(decl.loc, decl.specs, decl.declarators)
                template.definition.declarator = d
            self.namespace_scope.names[d.name] = template
            return
        if isinstance(decl, A.UsingAlias):
            self.namespace_scope.names[decl.name] = T.AliasTemplate(decl.name, item.params, decl.type_name, item.loc,
                                                                    self.namespace_scope)
            return
        if isinstance(decl, A.Declaration):
            struct = next((s for s in decl.specs.type_specs if isinstance(s, A.StructSpec)), None)
            if struct is not None and struct.name:
                if struct.template_args is not None:
                    self.error("unsupported feature: partial specialization of class templates", item.loc)
                    return
                self.namespace_scope.names[struct.name] = T.ClassTemplate(
                    struct.name, item.params, struct, item.loc, self.namespace_scope)
                return
        self.error("unsupported feature: this kind of template", item.loc)

    def check_specialization(self, item: A.TemplateDecl) -> None:
        """`template <> ...`: an explicit specialization of a function or class template."""
        from . import templates as T
        decl = item.declaration
        if isinstance(decl, A.FunctionDef):
            d = decl.declarator
            template = self.scope.lookup(d.name)
            if not isinstance(template, T.FunctionTemplate):
                self.fail(f"'{d.name}' is not a function template", d.loc)
            args = T.explicit_arguments(self, template.params, d.template_args or [], d.loc)
            if len(args) < len(template.params):
                arg_types = [self.derive(self.base_type(p.specs), p.declarator)
                             for p in T._function_deriv(d).params]
                args = T.deduce(self, template, args, [unqualified(parameter_type(t)) for t in arg_types], d.loc)
            args = T.complete_arguments(self, template, args, d.loc)
            template.specializations[T.argument_key(args)] = decl
            return
        struct = next((s for s in decl.specs.type_specs if isinstance(s, A.StructSpec)), None) \
            if isinstance(decl, A.Declaration) else None
        if struct is not None and struct.template_args is not None:
            template = self.scope.lookup(struct.name)
            if not isinstance(template, T.ClassTemplate):
                self.fail(f"'{struct.name}' is not a class template", struct.loc)
            args = T.explicit_arguments(self, template.params, struct.template_args, struct.loc)
            args = T.complete_arguments(self, template, args, struct.loc)
            template.specializations[T.argument_key(args)] = struct
            return
        self.error("unsupported feature: this kind of template specialization", item.loc)

    def check_explicit_instantiation(self, item: A.ExplicitInstantiation) -> None:
        from . import templates as T
        decl = item.declaration
        d = decl.declarators[0].declarator if isinstance(decl, A.Declaration) and decl.declarators else \
            getattr(decl, "declarator", None)
        template = self.scope.lookup(d.name) if d is not None and d.name else None
        if not isinstance(template, T.FunctionTemplate):
            self.fail("unsupported feature: explicit instantiation of anything but a function template", item.loc)
        args = T.explicit_arguments(self, template.params, d.template_args or [], d.loc)
        if len(args) < len(template.params):
            arg_types = [self.derive(self.base_type(p.specs), p.declarator) for p in T._function_deriv(d).params]
            args = T.deduce(self, template, args, [unqualified(parameter_type(t)) for t in arg_types], d.loc)
        args = T.complete_arguments(self, template, args, d.loc)
        T.instantiate_function(self, template, args, d.loc)

    def check_break(self, stmt: A.BreakStmt) -> None:
        if self.loop_depth == 0 and self.switch_depth == 0:
            self.error("'break' statement not in loop or switch statement", stmt.loc)

    def check_continue(self, stmt: A.ContinueStmt) -> None:
        if self.loop_depth == 0:
            self.error("'continue' statement not in loop statement", stmt.loc)

    def check_switch(self, stmt: A.SwitchStmt) -> None:
        expr = self.rvalue(self.check_expr(stmt.expr))
        if not is_integer(expr.type):
            self.error(f"statement requires expression of integer type ('{expr.type}' invalid)", expr.loc)
        else:
            expr = self.implicit(expr, promote(expr.type))
        stmt.expr = expr
        self.switch_depth += 1
        try:
            self.check_scoped(stmt.body)
        finally:
            self.switch_depth -= 1

    def check_case(self, stmt: A.CaseStmt) -> None:
        if self.switch_depth == 0:
            self.error("'case' statement not in switch statement", stmt.loc)
        stmt.value = self.check_expr(stmt.value)
        stmt.const_value = self.constant_int(stmt.value)
        self.check_stmt(stmt.body)

    def check_default(self, stmt: A.DefaultStmt) -> None:
        if self.switch_depth == 0:
            self.error("'default' statement not in switch statement", stmt.loc)
        self.check_stmt(stmt.body)

    def check_asm(self, stmt: A.AsmStmt) -> None:
        """Inline PTX: outputs must be assignable; the constraint letters name register
        classes (h: 16-bit, r: 32-bit, l: 64-bit, f: f32, d: f64, n: a constant)."""
        outputs = []
        for constraint, expr in stmt.outputs:
            expr = self.check_expr(expr)
            if not constraint.startswith(("=", "+")):
                self.error(f"output operand constraint '{constraint}' lacks '='", expr.loc)
            self.check_modifiable(expr, "asm")
            outputs.append((constraint, expr))
        inputs = []
        for constraint, expr in stmt.inputs:
            inputs.append((constraint, self.rvalue(self.check_expr(expr))))
        stmt.outputs, stmt.inputs = outputs, inputs

    # ---- expressions -------------------------------------------------------------------
    def check_expr(self, expr: A.Expr) -> A.Expr:
        if expr.type is not None:
            return expr
        return _EXPR_CHECKS[type(expr)](self, expr)

    def rvalue(self, expr: A.Expr) -> A.Expr:
        """Array-to-pointer and function-to-pointer decay."""
        t = expr.type
        if isinstance(t, (ArrayType, FunctionType)):
            return A.ImplicitCast(expr.loc, expr, decay(t))
        return expr

    def implicit(self, expr: A.Expr, t: Type) -> A.Expr:
        if expr.type is t or (expr.type.__class__ is t.__class__ and expr.type == t):
            return expr
        if isinstance(expr, A.ImplicitCast) and unqualified(expr.type) == unqualified(t):
            return expr
        return A.ImplicitCast(expr.loc, expr, t)

    def undeclared(self, name: str, loc) -> None:
        if name in self.poisoned:
            raise SemaError(name)
        if cuda_function_declared(name):
            self.fail(f"unsupported feature: the CUDA function '{name}'", loc)
        self.fail(f"use of undeclared identifier '{name}'", loc)

    def check_ident(self, expr: A.Ident) -> A.Expr:
        sym = self.scope.lookup(expr.name)
        if sym is None:
            if expr.name == "this" and self.function is not None and self.function.self_mode in ("value", "ctor"):
                return self.check_expr(A.Unary(expr.loc, "&", A.Ident(expr.loc, "__self")))
            self.undeclared(expr.name, expr.loc)
        cls = sym.__class__
        if cls is FieldRef:      # a member's bare name: this->name
            member = A.Member(expr.loc, A.Ident(expr.loc, "this"), expr.name, True)
            return self.check_expr(A.Unary(expr.loc, "*", member) if sym.deref else member)
        if cls is MethodRef:
            self.fail(f"unsupported feature: the member function '{expr.name}' as a value", expr.loc)
        if isinstance(sym, TypedefSymbol):
            self.fail(f"unexpected type name '{expr.name}': expected expression", expr.loc)
        expr.symbol = sym
        if isinstance(sym, VarSymbol):
            if sym.kind == "builtin" and self.function is not None and not self.function.on_device:
                self.fail(f"'{expr.name}' is only available in device code", expr.loc)
            expr.type = sym.type
            if sym.const_value is not None and sym.kind == "global":   # `constexpr int N = 8;`: its value
                return constant_literal(expr.loc, sym)
            if sym.reference:       # a `T&`: the object it refers to
                return A.Unary(expr.loc, "*", expr, sym.type.pointee)
        elif isinstance(sym, EnumConstSymbol):
            expr.type = sym.type if sym.type is not CUDA_MEMCPY_KIND and sym.type is not CUDA_ERROR else sym.type
        elif isinstance(sym, FunctionSymbol):
            expr.type = sym.type
            self.function_designator(sym, expr.loc)
        elif isinstance(sym, Overloads):
            expr.type = sym.candidates[0].type
        return expr

    def check_template_id(self, expr: A.TemplateId) -> A.Expr:
        """`f<int>` not called: the instance's address."""
        sym = self.template_callee(expr, None, expr.loc)
        ident = A.Ident(expr.loc, sym.mangled)
        ident.symbol = sym
        ident.type = sym.type
        self.function_designator(sym, expr.loc)
        return ident

    def template_callee(self, func, args: list | None, loc) -> "FunctionSymbol":
        """The instance a template-id or a function template's name calls: explicit
        arguments, then deduction from `args`' types, then defaults."""
        from . import templates as T
        template = self.scope.lookup(func.name)
        if not isinstance(template, T.FunctionTemplate):
            self.fail(f"'{func.name}' is not a function template", func.loc)
        written = getattr(func, "args", None) or []
        explicit = T.explicit_arguments(self, template.params, written, func.loc)
        if args is not None and len(explicit) < len(template.params):
            arg_types = [unqualified(decay(a.type)) for a in args]
            explicit = T.deduce(self, template, explicit, arg_types, loc)
        explicit = T.complete_arguments(self, template, explicit, loc)
        return T.instantiate_function(self, template, explicit, loc)

    def template_type(self, spec: A.TemplateTypeRef) -> Type:
        from . import templates as T
        template = self.scope.lookup(spec.name)
        if isinstance(template, TypedefSymbol):     # the injected class name inside its own template
            return template.type
        if isinstance(template, T.AliasTemplate) and spec.args is not None and spec.member is None:
            args = T.explicit_arguments(self, template.params, spec.args, spec.loc)
            args = T.complete_arguments(self, template, args, spec.loc)
            return T.alias_type(self, template, args)
        if not isinstance(template, T.ClassTemplate):
            self.fail(f"'{spec.name}' is not a class template", spec.loc)
        if spec.args is None:
            self.fail(f"use of class template '{spec.name}' requires template arguments", spec.loc)
        args = T.explicit_arguments(self, template.params, spec.args, spec.loc)
        args = T.complete_arguments(self, template, args, spec.loc)
        struct = T.instantiate_class(self, template, args, spec.loc)
        if spec.member is None:
            return struct
        found = struct.info.scope.names.get(spec.member) if struct.info is not None else None
        if not isinstance(found, TypedefSymbol):    # `typename Traits<T>::type`
            self.fail(f"no type named '{spec.member}' in '{struct}'", spec.loc)
        return found.type

    def class_member(self, expr: A.ClassMemberRef):
        """The symbol `Traits<T>::name` names: a static member of the instance."""
        struct = self.template_type(expr.owner)
        found = struct.info.scope.names.get(expr.name) if getattr(struct, "info", None) is not None else None
        if found.__class__ is MethodRef:     # static member functions
            statics = [m for m in struct.info.methods.get(expr.name, []) if m.self_mode is None]
            found = statics[0] if len(statics) == 1 else Overloads(expr.name, statics) if statics else None
        if found is None or found.__class__ in (FieldRef, MethodRef):
            self.fail(f"no static member named '{expr.name}' in '{struct}'", expr.loc)
        return found

    def check_class_member(self, expr: A.ClassMemberRef) -> A.Expr:
        sym = self.class_member(expr)
        if isinstance(sym, VarSymbol) and sym.const_value is not None:
            return constant_literal(expr.loc, sym)
        if isinstance(sym, EnumConstSymbol):
            return A.IntLit(expr.loc, sym.value, str(sym.value), sym.type)
        ident = A.Ident(expr.loc, expr.name)
        ident.symbol = sym
        ident.type = getattr(sym, "type", None)
        if isinstance(sym, FunctionSymbol):
            self.function_designator(sym, expr.loc)
            return ident
        self.fail(f"unsupported feature: the static member '{expr.name}' as a value", expr.loc)

    def function_designator(self, sym: "FunctionSymbol", loc) -> None:
        """A function named other than as a direct call's callee: in device code its
        address is taken, so it must be a __device__ function codegen can emit."""
        caller = self.function
        if caller is None or not caller.on_device:
            return
        if sym.builtin is not None:
            self.fail(f"unsupported feature: the address of the builtin function '{sym.name}'", loc)
        if sym.is_kernel:
            self.fail(f"unsupported feature: the address of the __global__ function '{sym.name}' in device code",
                      loc)
        if not sym.on_device:
            self.fail(f"a __host__ function(\"{sym.name}\") cannot be used as a function pointer in a "
                      f"{'__global__' if caller.is_kernel else '__device__'} function(\"{caller.name}\")", loc)
        sym.address_taken = True

    def check_int_lit(self, expr: A.IntLit) -> A.Expr:
        value = expr.value
        if value <= 0x7FFFFFFF and expr.text.isdigit():   # no suffix, fits an int: int (hot)
            expr.type = INT
            return expr
        text = expr.text.lower()
        unsigned = "u" in text
        longs = text.count("l")
        decimal = not (text.startswith("0") and len(text.rstrip("ul")) > 1)
        if longs == 0:
            candidates = [UINT, ULONG] if unsigned else ([INT, LONG] if decimal else [INT, UINT, LONG, ULONG])
        elif longs == 1:
            candidates = [ULONG] if unsigned else ([LONG] if decimal else [LONG, ULONG])
        else:
            candidates = [ULLONG] if unsigned else ([LLONG] if decimal else [LLONG, ULLONG])
        for t in candidates:
            limit = 1 << (t.size * 8 - (1 if t.signed else 0))
            if value < limit:
                expr.type = t
                return expr
        self.error("integer literal is too large", expr.loc)
        expr.type = ULLONG
        return expr

    def check_float_lit(self, expr: A.FloatLit) -> A.Expr:
        expr.type = FLOAT if expr.text[-1] in "fF" else DOUBLE
        return expr

    def check_char_lit(self, expr: A.CharLit) -> A.Expr:
        expr.type = CHAR
        return expr

    def check_string_lit(self, expr: A.StringLit) -> A.Expr:
        expr.type = ArrayType(with_quals(CHAR, const=True), len(expr.value.encode()) + 1)
        return expr

    def check_bool(self, expr: A.BoolConst) -> A.Expr:
        expr.type = BOOL
        return expr

    def operand(self, expr: A.Expr) -> A.Expr:
        """rvalue(check_expr(expr)), written out (two calls less per operand: hot)."""
        if expr.type is None:
            expr = _EXPR_CHECKS[type(expr)](self, expr)
        t = expr.type
        if isinstance(t, (ArrayType, FunctionType)):
            return A.ImplicitCast(expr.loc, expr, decay(t))
        return expr

    def check_binary(self, expr: A.Binary) -> A.Expr:
        op = expr.op
        lhs = self.operand(expr.lhs)
        rhs = self.operand(expr.rhs)
        lt, rt = lhs.type, rhs.type
        if lt.__class__ is StructType or rt.__class__ is StructType:    # a class's operator
            from . import classes
            found = classes.overloaded_operator(self, op, [lhs, rhs], expr.loc)
            if found is not None:
                return found
        if op in _LOGICAL_OPS:
            for side in (lhs, rhs):
                if not is_scalar(side.type):
                    self.fail(f"invalid operand to '{op}' (have '{side.type}')", side.loc)
            expr.lhs, expr.rhs, expr.type = lhs, rhs, BOOL
            return expr
        if lt.__class__ in _ARITHMETIC_TYPES and rt.__class__ in _ARITHMETIC_TYPES:   # is_arithmetic, both
            if op in _SHIFT_OPS or op in _INT_OPS:
                if not (is_integer(lt) and is_integer(rt)):
                    bad = lhs if not is_integer(lt) else rhs
                    self.fail(f"invalid operands to binary expression ('{lt}' and '{rt}'): '{op}' needs integers",
                              expr.loc)
                    del bad
            if op in _SHIFT_OPS:
                expr.lhs = self.implicit(lhs, promote(lt))
                expr.rhs = self.implicit(rhs, promote(rt))
                expr.type = promote(lt)
                return expr
            common = arithmetic_common(lt, rt)
            expr.lhs = self.implicit(lhs, common)
            expr.rhs = self.implicit(rhs, common)
            expr.type = BOOL if op in _COMPARE_OPS else common
            return expr
        # pointer forms
        if op in ("+", "-") and is_pointer(lt) and is_integer(rt):
            self.require_complete_pointee(lt, expr.loc)
            expr.lhs, expr.rhs, expr.type = lhs, self.implicit(rhs, promote(rt)), unqualified(lt)
            return expr
        if op == "+" and is_integer(lt) and is_pointer(rt):
            self.require_complete_pointee(rt, expr.loc)
            expr.lhs, expr.rhs, expr.type = self.implicit(lhs, promote(lt)), rhs, unqualified(rt)
            return expr
        if op == "-" and is_pointer(lt) and is_pointer(rt):
            if unqualified(lt.pointee) != unqualified(rt.pointee):
                self.fail(f"'{lt}' and '{rt}' are not pointers to compatible types", expr.loc)
            expr.lhs, expr.rhs, expr.type = lhs, rhs, PTRDIFF_T
            return expr
        if op in _COMPARE_OPS and (is_pointer(lt) or is_pointer(rt)):
            if is_pointer(lt) and is_pointer(rt):
                if unqualified(lt.pointee) != unqualified(rt.pointee) and not (
                        isinstance(lt.pointee, VoidType) or isinstance(rt.pointee, VoidType)):
                    self.error(f"comparison of distinct pointer types ('{lt}' and '{rt}')", expr.loc)
            elif not (self.is_null_constant(lhs) or self.is_null_constant(rhs)):
                self.fail(f"comparison between pointer and integer ('{lt}' and '{rt}')", expr.loc)
            else:
                ptr = lt if is_pointer(lt) else rt
                if is_pointer(lt):
                    rhs = self.implicit(rhs, unqualified(ptr))
                else:
                    lhs = self.implicit(lhs, unqualified(ptr))
            expr.lhs, expr.rhs, expr.type = lhs, rhs, BOOL
            return expr
        self.fail(f"invalid operands to binary expression ('{lt}' and '{rt}')", expr.loc)

    def require_complete_pointee(self, t: PointerType, loc) -> None:
        if isinstance(t.pointee, StructType) and not t.pointee.complete:
            self.fail(f"arithmetic on a pointer to an incomplete type '{t.pointee}'", loc)

    def is_null_constant(self, expr: A.Expr) -> bool:
        while isinstance(expr, A.ImplicitCast):
            expr = expr.operand
        return isinstance(expr, A.IntLit) and expr.value == 0

    def check_unary(self, expr: A.Unary) -> A.Expr:
        op = expr.op
        if op == "*" and isinstance(expr.operand, A.Ident) and expr.operand.name == "this" and \
                self.function is not None and self.function.self_mode in ("value", "ctor"):
            return self.check_expr(A.Ident(expr.loc, "__self"))
        if op in ("-", "+", "!", "~"):
            operand = self.check_expr(expr.operand)
            expr.operand = operand
            if isinstance(operand.type, StructType):
                from . import classes
                found = classes.overloaded_operator(self, op, [operand], expr.loc)
                if found is not None:
                    return found
        if op == "&":
            operand = self.check_expr(expr.operand)
            if isinstance(operand, A.Ident) and isinstance(operand.symbol, FunctionSymbol):
                expr.operand = operand
                expr.type = PointerType(operand.type)
                return expr
            if not self.is_lvalue(operand):
                self.fail("cannot take the address of an rvalue", expr.loc)
            root = operand
            if isinstance(root, A.Ident) and isinstance(root.symbol, VarSymbol):
                root.symbol.address_taken = True
            expr.operand = operand
            expr.type = PointerType(operand.type)
            return expr
        operand = self.operand(expr.operand)
        t = operand.type
        if op == "*":
            if not is_pointer(t):
                self.fail(f"indirection requires pointer operand ('{t}' invalid)", expr.loc)
            if isinstance(t.pointee, VoidType):
                self.fail("indirection of a 'void *' pointer", expr.loc)
            expr.operand, expr.type = operand, t.pointee
            return expr
        if op == "!":
            if not is_scalar(t):
                self.fail(f"invalid argument type '{t}' to unary expression", expr.loc)
            expr.operand, expr.type = operand, BOOL
            return expr
        if op == "~":
            if not is_integer(t):
                self.fail(f"invalid argument type '{t}' to unary expression", expr.loc)
        elif not is_arithmetic(t):
            self.fail(f"invalid argument type '{t}' to unary expression", expr.loc)
        expr.operand = self.implicit(operand, promote(t))
        expr.type = promote(t)
        return expr

    def address_of_lvalue(self, value: A.Expr) -> A.Expr:
        """`&value` of a checked lvalue (`&*p` is p; `&(c ? a : b)` is `c ? &a : &b`)."""
        if isinstance(value, A.Unary) and value.op == "*":
            return value.operand
        if isinstance(value, A.Conditional):
            then, else_ = self.address_of_lvalue(value.then), self.address_of_lvalue(value.else_)
            return A.Conditional(value.loc, value.cond, then, else_, then.type)
        return self.check_expr(A.Unary(value.loc, "&", value))

    def is_lvalue(self, expr: A.Expr) -> bool:
        if isinstance(expr, A.Ident):
            return isinstance(expr.symbol, VarSymbol)
        if isinstance(expr, A.Index):
            return True
        if isinstance(expr, A.Unary):
            return expr.op == "*"
        if isinstance(expr, A.Member):
            return expr.arrow or self.is_lvalue(expr.base)
        if isinstance(expr, (A.PreIncDec, A.Assign)):
            return True
        if isinstance(expr, A.StringLit):
            return True
        if isinstance(expr, A.Conditional):     # C++: two lvalues of one type give an lvalue
            return self.is_lvalue(expr.then) and self.is_lvalue(expr.else_) and expr.then.type == expr.else_.type
        return False

    def check_modifiable(self, target: A.Expr, what: str) -> None:
        if not self.is_lvalue(target):
            self.fail(f"expression is not assignable", target.loc)
        t = target.type
        if isinstance(t, ArrayType):
            self.fail(f"array type '{t}' is not assignable", target.loc)
        if t.const:
            if isinstance(target, A.Ident):
                self.fail(f"cannot assign to variable '{target.name}' with const-qualified type '{t}'", target.loc)
            self.fail(f"read-only variable is not assignable", target.loc)
        if isinstance(target, A.Ident) and isinstance(target.symbol, VarSymbol):
            sym = target.symbol
            if sym.kind == "builtin":
                self.fail(f"cannot assign to '{sym.name}'", target.loc)
            sym.assign_count += 1
        root = target
        while isinstance(root, A.Member) and not root.arrow:
            root = root.base
        if isinstance(root, A.Ident) and isinstance(root.symbol, VarSymbol) and root.symbol.kind == "builtin":
            self.fail(f"cannot assign to '{root.symbol.name}'", target.loc)
        if root is not target and isinstance(root, A.Ident) and isinstance(root.symbol, VarSymbol):
            root.symbol.assign_count += 1

    def check_inc_dec(self, expr) -> A.Expr:
        operand = self.check_expr(expr.operand)
        self.check_modifiable(operand, expr.op)
        t = operand.type
        if not (is_arithmetic(t) or is_pointer(t)) or isinstance(t, EnumType):
            self.fail(f"cannot {'increment' if expr.op == '++' else 'decrement'} value of type '{t}'", expr.loc)
        expr.operand = operand
        expr.type = unqualified(t)
        return expr

    def check_assign(self, expr: A.Assign) -> A.Expr:
        value = self.operand(expr.value)
        target = self.check_expr(expr.target)
        if target.type.__class__ is StructType and target.type.info is not None and \
                target.type.info.methods.get("operator" + expr.op):     # `a += b`, `a = b` of a class
            from . import classes
            return classes.overloaded_operator(self, expr.op, [target, value], expr.loc)
        if expr.op != "=" and target.type.__class__ is StructType:
            from . import classes
            found = classes.overloaded_operator(self, expr.op, [target, value], expr.loc)
            if found is not None:
                return found
        self.check_modifiable(target, expr.op)
        t = unqualified(target.type)
        expr.target = target
        expr.type = t
        if expr.op == "=":
            expr.value = self.convert_assign(value, t, "assigning")
            return expr
        op = expr.op[:-1]
        vt = value.type
        if op in ("+", "-") and is_pointer(t) and is_integer(vt):
            expr.value = self.implicit(value, promote(vt))
            expr.compute_type = t
            return expr
        if not (is_arithmetic(t) and is_arithmetic(vt)):
            self.fail(f"invalid operands to '{expr.op}' ('{t}' and '{vt}')", expr.loc)
        if op in _SHIFT_OPS or op in _INT_OPS:
            if not (is_integer(t) and is_integer(vt)):
                self.fail(f"invalid operands to '{expr.op}' ('{t}' and '{vt}'): integers required", expr.loc)
        if op in _SHIFT_OPS:
            expr.compute_type = promote(t)
            expr.value = self.implicit(value, promote(vt))
        else:
            expr.compute_type = arithmetic_common(t, vt)
            expr.value = self.implicit(value, expr.compute_type)
        return expr

    def convert_assign(self, value: A.Expr, t: Type, context: str) -> A.Expr:
        """The implicit conversion of assignment, initialization, argument passing, return."""
        if isinstance(t, AnySymbolType):
            while isinstance(value, A.ImplicitCast):
                value = value.operand
            sym = value.symbol if isinstance(value, A.Ident) else None
            if not isinstance(sym, VarSymbol) or sym.space not in ("device", "constant", "managed"):
                self.fail("the symbol argument must name a __device__ or __constant__ variable", value.loc)
            return value
        value = self.rvalue(value)
        vt = value.type
        if vt is UINT3 and unqualified(t) == DIM3 and isinstance(value, A.Ident):   # `dim3 t = threadIdx;`
            return self.check_construct(A.Construct(value.loc, None, [A.Member(value.loc, value, c) for c in "xyz"]),
                                        known_type=DIM3)
        if isinstance(t, AnyPointerType):
            if is_pointer(vt):
                return value
            self.fail(f"cannot convert '{vt}' to a pointer", value.loc)
        if isinstance(t, ArrayType):
            if isinstance(value, A.StringLit) or (isinstance(value, A.ImplicitCast) and isinstance(value.operand, A.StringLit)):
                return value
            self.fail(f"array initializer must be an initializer list", value.loc)
        if t.__class__ in _ARITHMETIC_TYPES and vt.__class__ in _ARITHMETIC_TYPES:   # is_arithmetic, both
            if isinstance(t, EnumType) and unqualified(vt) != unqualified(t):
                self.fail(f"cannot convert '{vt}' to '{t}' when {context}", value.loc)
            return self.implicit(value, unqualified(t))
        if isinstance(t, IntType) and t.name == "bool" and is_pointer(vt):
            return self.implicit(value, BOOL)
        if is_pointer(t):
            if is_pointer(vt):
                tp, vp = t.pointee, vt.pointee
                if (vp.const and not tp.const) or (vp.volatile and not tp.volatile):
                    self.fail(f"{context} to '{t}' from '{vt}' discards qualifiers", value.loc)
                if unqualified(tp) == unqualified(vp) or isinstance(tp, VoidType):
                    return self.implicit(value, t)
                self.fail(f"cannot convert '{vt}' to '{t}' when {context}", value.loc)
            if self.is_null_constant(value):
                return self.implicit(value, t)
        if isinstance(t, StructType) and isinstance(vt, StructType) and t.name == vt.name:
            return value
        if vt.__class__ is StructType or t.__class__ is StructType:     # a class's conversion
            from . import classes
            converted = classes.user_conversion(self, value, t)
            if converted is not None:
                return self.convert_assign(converted, t, context)
        self.fail(f"cannot convert '{vt}' to '{t}' when {context}", value.loc)

    def check_conditional(self, expr: A.Conditional) -> A.Expr:
        expr.cond = self.check_condition(expr.cond)
        then = self.operand(expr.then)
        else_ = self.operand(expr.else_)
        tt, et = then.type, else_.type
        if isinstance(tt, EnumType) and isinstance(et, EnumType) and unqualified(tt) == unqualified(et):
            # C++: both operands of one enumeration type give that type (`c ? LOW : HIGH`)
            expr.then, expr.else_, expr.type = then, else_, unqualified(tt)
        elif is_arithmetic(tt) and is_arithmetic(et):
            # C++: operands of one type give that type (`c ? a : b` of two shorts is a short)
            common = unqualified(tt) if unqualified(tt) == unqualified(et) else arithmetic_common(tt, et)
            expr.then, expr.else_, expr.type = self.implicit(then, common), self.implicit(else_, common), common
        elif is_pointer(tt) and is_pointer(et) and unqualified(tt) == unqualified(et):
            expr.then, expr.else_, expr.type = then, else_, unqualified(tt)
        elif is_pointer(tt) and is_pointer(et) and (composite := composite_pointer_type(tt, et)) is not None:
            expr.then, expr.else_ = self.implicit(then, composite), self.implicit(else_, composite)
            expr.type = composite
        elif isinstance(tt, StructType) and unqualified(tt) == unqualified(et):
            expr.then, expr.else_, expr.type = then, else_, unqualified(tt)     # `c ? v : w` of one class
        elif is_pointer(tt) and self.is_null_constant(else_) and self.is_null_constant(then):
            expr.then, expr.else_, expr.type = then, self.implicit(else_, tt), unqualified(tt)
        elif is_pointer(tt) and self.is_null_constant(else_):
            expr.then, expr.else_, expr.type = then, self.implicit(else_, tt), tt
        elif is_pointer(et) and self.is_null_constant(then):
            expr.then, expr.else_, expr.type = self.implicit(then, et), else_, et
        elif isinstance(tt, VoidType) and isinstance(et, VoidType):
            expr.then, expr.else_, expr.type = then, else_, VOID
        else:
            self.fail(f"incompatible operand types ('{tt}' and '{et}')", expr.loc)
        return expr

    def check_comma(self, expr: A.Comma) -> A.Expr:
        expr.lhs = self.check_expr(expr.lhs)
        expr.rhs = self.check_expr(expr.rhs)
        expr.type = expr.rhs.type
        return expr

    def resolve_callee(self, func: A.Expr, args: list[A.Expr], loc) -> FunctionSymbol:
        if isinstance(func, A.TemplateId):
            return self.template_callee(func, args, loc)
        if not isinstance(func, A.Ident):
            self.fail("only direct calls of named functions are supported", func.loc)
        sym = self.scope.lookup(func.name)
        if sym.__class__ is FunctionTemplate:
            return self.template_callee(func, args, loc)
        if sym is None:
            self.undeclared(func.name, func.loc)
        if isinstance(sym, Overloads):
            return self.pick_overload(sym, args, loc)
        if not isinstance(sym, FunctionSymbol):
            t = getattr(sym, "type", None)
            if isinstance(t, PointerType) and isinstance(t.pointee, FunctionType):
                self.fail("unsupported feature: calls through function pointers", func.loc)
            self.fail(f"called object type '{t}' is not a function", func.loc)
        return sym

    def pick_overload(self, overloads: Overloads, args: list[A.Expr], loc) -> FunctionSymbol:
        """C++'s choice, simplified: every argument must convert; the best candidate is
        the one whose conversions rank best (exact, then promotion, then conversion),
        ties going to the usual arithmetic conversions' common type, then to the first
        declared (so sqrt(int) is the double one)."""
        arg_types = [unqualified(decay(a.type)) for a in args]
        scored = []
        for order, cand in enumerate(overloads.candidates):
            params = cand.type.params
            if len(params) != len(args):
                defaults = getattr(cand, "defaults", ())
                if not (len(args) < len(params) <= len(defaults) and
                        all(d is not None for d in defaults[len(args):len(params)])):
                    continue
                params = params[:len(args)]     # the rest from default arguments
            refs = getattr(cand, "ref_params", ())
            if refs:    # a `T&` parameter (passed as `T *`) takes a T
                params = [p.pointee if k in refs and isinstance(p, PointerType) else p for k, p in enumerate(params)]
            ranks = [_conversion_rank(a, unqualified(p), arg) for a, p, arg in zip(arg_types, params, args)]
            if None not in ranks:
                scored.append((ranks, order, cand))
        if not scored:
            names = ", ".join(str(t) for t in arg_types)
            self.fail(f"no matching function for call to '{overloads.name}({names})'", loc)
        if len(scored) == 1:    # (the one viable candidate: no ranking to do)
            return scored[0][2]
        common = None
        if all(is_arithmetic(t) for t in arg_types) and arg_types:
            common = arg_types[0]
            for t in arg_types[1:]:
                common = arithmetic_common(common, t)

        def key(entry):
            ranks, order, cand = entry
            # another candidate ranks no worse on every argument, better on one
            dominated = False
            for other, _, _ in scored:
                if other != ranks and all(map(operator.le, other, ranks)):
                    dominated = True
                    break
            matches_common = common is not None and all(_same_type(unqualified(p), common) for p in cand.type.params
                                                        if is_arithmetic(p))
            return (dominated, sum(ranks) if not matches_common else -1, order)
        return min(scored, key=key)[2]

    def check_call(self, expr: A.Call) -> A.Expr:
        args = [self.operand(a) for a in expr.args]
        func = expr.func
        if func.__class__ is A.Member or func.__class__ is A.Ident or func.__class__ is A.ClassMemberRef:
            method = self.member_call(expr, args)
            if method is not None:
                return method
        if self.is_indirect_callee(expr.func):
            return self.check_indirect_call(expr, args)
        callee = self.resolve_callee(expr.func, args, expr.loc)
        return self.finish_call(expr, callee, args)

    def member_call(self, expr: A.Call, args: list):
        """`obj.f(x)`, `p->f(x)`, `f(x)` inside a member function, `functor(x)`: a member
        function's call, or None if the call is not one."""
        from . import classes
        func = expr.func
        if func.__class__ is A.ClassMemberRef:    # `Limits<float>::lowest()`
            sym = self.class_member(func)
            if isinstance(sym, Overloads):
                sym = self.pick_overload(sym, args, expr.loc)
            if not isinstance(sym, FunctionSymbol):
                self.fail(f"'{func.name}' is not a static member function", func.loc)
            return self.finish_call(expr, sym, args)
        if func.__class__ is A.Member:
            if func.arrow and isinstance(func.base, A.Ident) and func.base.name == "this" and \
                    self.function is not None and self.function.self_mode in ("value", "ctor"):
                func.base, func.arrow = A.Ident(func.base.loc, "__self"), False
            base = self.check_expr(func.base)
            obj, struct = classes.object_of(self, base, func.arrow)
            if not isinstance(struct, StructType) or struct.info is None or (
                    func.name not in struct.info.methods and func.name not in struct.info.templates):
                if isinstance(struct, StructType) and struct.field(func.name) is not None:
                    return None     # a field holding a function pointer
                self.fail(f"no member function named '{func.name}' in '{struct}'", func.loc)
            return classes.method_call(self, expr, obj, unqualified(struct), func.name, args)
        sym = self.scope.lookup(func.name)
        if sym.__class__ is MethodRef and "::" in func.name:     # `Counter::hit()`: a static member function
            owner, _, name = func.name.rpartition("::")
            struct = self.scope.lookup_tag(owner)
            statics = [m for m in struct.info.methods.get(name, []) if m.self_mode is None] \
                if isinstance(struct, StructType) and struct.info is not None else []
            if not statics:
                self.fail(f"'{func.name}' is not a static member function", func.loc)
            callee = statics[0] if len(statics) == 1 else self.pick_overload(Overloads(name, statics), args, expr.loc)
            return self.finish_call(expr, callee, args)
        if sym.__class__ is MethodRef:
            expr.func = A.Member(func.loc, A.Ident(func.loc, "this"), func.name, True)
            return self.member_call(expr, args)
        if sym.__class__ is FieldRef or \
                (isinstance(sym, VarSymbol) and isinstance(unqualified(sym.type), StructType)):   # a functor
            obj = self.check_expr(func)
            if not isinstance(unqualified(obj.type), StructType):
                return None
            return classes.method_call(self, expr, obj, unqualified(obj.type), "operator()", args)
        return None

    def finish_call(self, expr: A.Call, callee: "FunctionSymbol", args: list) -> A.Expr:
        if expr.func.__class__ is not A.Ident or expr.func.symbol is not None:   # (a functor: the object stays an argument)
            expr.func = A.Ident(expr.func.loc, callee.name)
        expr.func.symbol = callee
        expr.func.type = callee.type
        if callee.is_kernel:
            self.fail(f"a __global__ function call must be configured: use {callee.name}<<<grid, block>>>(...)",
                      expr.loc)
        self.check_call_space(callee, expr.loc)
        expr.args = self.convert_args(callee, args, expr.loc)
        expr.callee = callee
        expr.type = callee.type.ret
        if callee.returns_ref:     # a `T&` result is an lvalue: `*f(...)`
            return A.Unary(expr.loc, "*", expr, callee.type.ret.pointee)
        return expr

    def is_indirect_callee(self, func: A.Expr) -> bool:
        """A call through a pointer: the callee is not a function's (or overload set's) name."""
        if isinstance(func, A.TemplateId):
            return False
        if not isinstance(func, A.Ident):
            return True
        sym = self.scope.lookup(func.name)
        return isinstance(sym, VarSymbol) and isinstance(sym.type, PointerType) \
            and isinstance(sym.type.pointee, FunctionType)

    def check_indirect_call(self, expr: A.Call, args: list[A.Expr]) -> A.Expr:
        func = self.operand(expr.func)
        t = unqualified(func.type)
        if not (isinstance(t, PointerType) and isinstance(t.pointee, FunctionType)):
            self.fail(f"called object type '{func.type}' is not a function or function pointer", expr.func.loc)
        ftype = t.pointee
        params = ftype.params
        if len(args) != len(params):
            few = "few" if len(args) < len(params) else "many"
            self.fail(f"too {few} arguments to function call, expected {len(params)}, have {len(args)}", expr.loc)
        expr.args = [self.convert_assign(a, p, "passing argument") for a, p in zip(args, params)]
        expr.func = func
        expr.callee = None
        expr.type = ftype.ret
        return expr

    def check_call_space(self, callee: FunctionSymbol, loc) -> None:
        caller = self.function
        if caller is None:
            return
        if caller.on_device and not callee.on_device:
            where = "__global__" if caller.is_kernel else "__device__"
            self.fail(f"calling a __host__ function(\"{callee.name}\") from a {where} function(\"{caller.name}\") "
                      f"is not allowed", loc)
        if not caller.on_device and not callee.on_host:
            self.fail(f"calling a __device__ function(\"{callee.name}\") from a __host__ function"
                      f"(\"{caller.name}\") is not allowed", loc)

    def convert_args(self, callee: FunctionSymbol, args: list[A.Expr], loc) -> list[A.Expr]:
        params = callee.type.params
        missing = callee.defaults[len(args):len(params)]
        if missing and all(d is not None for d in missing):     # C++ default arguments
            import copy
            saved = self.scope
            if callee.default_scope is not None:    # (read where the function was declared: `T lo = T(0)`)
                self.scope = callee.default_scope
            try:
                args = list(args) + [self.operand(copy.deepcopy(d)) for d in missing]
            finally:
                self.scope = saved
        if len(args) < len(params) or (len(args) > len(params) and not callee.type.variadic):
            few = "few" if len(args) < len(params) else "many"
            self.fail(f"too {few} arguments to function call, expected {len(params)}, have {len(args)}", loc)
        out = []
        refs = callee.ref_params
        for k, arg in enumerate(args):
            if k in refs:
                out.append(self.bind_reference(arg, params[k]))
            elif k < len(params):
                out.append(self.convert_assign(arg, params[k], "passing argument"))
            else:  # default argument promotions for `...` (of the unqualified type)
                t = unqualified(arg.type)
                if t == FLOAT:
                    out.append(self.implicit(arg, DOUBLE))
                elif is_integer(t) and not isinstance(t, EnumType):
                    out.append(self.implicit(arg, promote(t)))
                else:
                    out.append(arg)
        return out

    def bind_reference(self, arg: A.Expr, param: PointerType) -> A.Expr:
        """A `T&` parameter takes its argument's address."""
        if not self.is_lvalue(arg):
            self.fail("a non-const reference cannot bind to a temporary", arg.loc)
        if unqualified(arg.type) != unqualified(param.pointee) or (arg.type.const and not param.pointee.const):
            self.fail(f"cannot bind a reference of type '{param.pointee} &' to a value of type '{arg.type}'",
                      arg.loc)
        return self.check_expr(A.Unary(arg.loc, "&", arg))    # (its variable's address is taken)

    def check_launch(self, expr: A.Launch) -> A.Expr:
        args = [self.operand(a) for a in expr.args]
        callee = self.resolve_callee(expr.func, args, expr.loc)
        expr.func.symbol = callee
        expr.func.type = callee.type
        if not callee.is_kernel:
            self.fail(f"'{callee.name}' is not a __global__ function and cannot be launched", expr.func.loc)
        if self.function is not None and self.function.on_device:
            self.fail("launching a kernel from device code (dynamic parallelism) is not supported", expr.loc)
        if not 2 <= len(expr.config) <= 4:
            self.fail(f"a launch configuration takes 2 to 4 arguments, {len(expr.config)} given", expr.loc)
        config = []
        for k, c in enumerate(expr.config):
            c = self.operand(c)
            if k < 2:
                if isinstance(c.type, StructType) and c.type.name in ("dim3", "uint3"):
                    config.append(c)
                elif is_integer(c.type):
                    config.append(self.implicit(c, UINT))
                else:
                    self.fail(f"launch dimension must be an integer or dim3, not '{c.type}'", c.loc)
            elif k == 2:
                config.append(self.convert_assign(c, SIZE_T, "passing shared memory size"))
            else:
                config.append(c)
        expr.config = config
        expr.args = self.convert_args(callee, args, expr.loc)
        expr.callee = callee
        expr.type = VOID
        return expr

    def check_index(self, expr: A.Index) -> A.Expr:
        base = self.operand(expr.base)
        index = self.operand(expr.index)
        if base.type.__class__ is StructType:       # `v[i]` of a class: its operator[]
            from . import classes
            found = classes.overloaded_operator(self, "[]", [base, index], expr.loc)
            if found is not None:
                return found
        if is_integer(base.type) and is_pointer(index.type):
            base, index = index, base
        if not is_pointer(base.type):
            self.fail(f"subscripted value is not an array or pointer (type '{base.type}')", expr.loc)
        if not is_integer(index.type):
            self.fail(f"array subscript is not an integer (type '{index.type}')", index.loc)
        if isinstance(base.type.pointee, VoidType):
            self.fail("subscript of a 'void *' pointer", expr.loc)
        self.require_complete_pointee(base.type, expr.loc)
        expr.base = base
        expr.index = self.implicit(index, promote(index.type))
        expr.type = base.type.pointee
        return expr

    def check_member(self, expr: A.Member) -> A.Expr:
        if expr.arrow and isinstance(expr.base, A.Ident) and expr.base.name == "this" and \
                self.function is not None and self.function.self_mode in ("value", "ctor"):
            expr.base, expr.arrow = A.Ident(expr.base.loc, "__self"), False     # the object itself
        base = self.check_expr(expr.base)
        t = base.type
        if expr.arrow:
            base = self.rvalue(base)
            if not is_pointer(base.type) or not isinstance(base.type.pointee, StructType):
                self.fail(f"member reference type '{base.type}' is not a pointer to a struct", expr.loc)
            t = base.type.pointee
            if not t.complete and t.decl in self.completions:    # `n->next->value` of `struct Node* next`
                t = with_quals(self.completions[t.decl], const=t.const, volatile=t.volatile)
                base = A.ImplicitCast(base.loc, base, PointerType(t))  # (equal types: implicit() would keep base)
        elif not isinstance(t, StructType):
            self.fail(f"member reference base type '{t}' is not a structure or union", expr.loc)
        found = t.field(expr.name)
        if found is None:
            self.fail(f"no member named '{expr.name}' in '{t.name}'", expr.loc)
        ftype = found[0]
        if t.const:
            ftype = with_quals(ftype, const=True)
        expr.base = base
        expr.type = ftype
        return expr

    def class_operand(self, operand: A.Expr, t: Type) -> A.Expr:
        """`(float)h`, `static_cast<float>(h)`, `float(h)` of a class with `operator float()`."""
        if operand.type.__class__ is StructType and not isinstance(t, StructType):
            from . import classes
            converted = classes.user_conversion(self, operand, t)
            if converted is not None:
                return converted
        return operand

    def check_cast(self, expr: A.Cast) -> A.Expr:
        t = self.resolve_type_name(expr.type_name)
        operand = self.class_operand(self.operand(expr.operand), t)
        self.check_explicit_conversion(operand, t, expr.loc)
        expr.operand = operand
        expr.type = unqualified(t) if not isinstance(t, PointerType) else PointerType(t.pointee)
        return expr

    def check_cxx_cast(self, expr: A.CxxCast) -> A.Expr:
        t = self.resolve_type_name(expr.type_name)
        operand = self.operand(expr.operand)
        if expr.kind == "static_cast":
            operand = self.class_operand(operand, t)
        vt = operand.type
        if expr.kind == "reinterpret_cast":
            ok = (is_pointer(t) or is_integer(t)) and (is_pointer(vt) or is_integer(vt)) and \
                (is_pointer(t) or is_pointer(vt))
            if not ok:
                self.fail(f"reinterpret_cast from '{vt}' to '{t}' is not allowed", expr.loc)
        elif expr.kind == "const_cast":
            if not (is_pointer(t) and is_pointer(vt) and unqualified(t.pointee) == unqualified(vt.pointee)):
                self.fail(f"const_cast from '{vt}' to '{t}' is not allowed", expr.loc)
        else:
            if is_pointer(t) and is_pointer(vt) and not (isinstance(t.pointee, VoidType) or
                                                          isinstance(vt.pointee, VoidType) or
                                                          unqualified(t.pointee) == unqualified(vt.pointee)):
                self.fail(f"static_cast from '{vt}' to '{t}' is not allowed", expr.loc)
            self.check_explicit_conversion(operand, t, expr.loc)
        expr.operand = operand
        expr.type = unqualified(t) if not isinstance(t, PointerType) else PointerType(t.pointee)
        return expr

    def check_explicit_conversion(self, operand: A.Expr, t: Type, loc) -> None:
        vt = operand.type
        if isinstance(t, VoidType):
            return
        if is_scalar(t) and is_scalar(vt):
            if (is_float(t) and is_pointer(vt)) or (is_pointer(t) and is_float(vt)):
                self.fail(f"cannot cast '{vt}' to '{t}'", loc)
            return
        if isinstance(t, StructType) and isinstance(vt, StructType) and t.name == vt.name:
            return
        self.fail(f"cannot cast '{vt}' to '{t}'", loc)

    def resolve_type_name(self, type_name: A.TypeName) -> Type:
        if type_name.type is None:
            type_name.type = self.derive(self.base_type(type_name.specs), type_name.declarator)
        return type_name.type

    def check_sizeof_expr(self, expr: A.SizeofExpr) -> A.Expr:
        operand = self.check_expr(expr.operand)
        if isinstance(operand.type, (VoidType, FunctionType)):
            self.fail(f"invalid application of 'sizeof' to '{operand.type}'", expr.loc)
        expr.operand = operand
        expr.type = SIZE_T
        return expr

    def check_sizeof_type(self, expr: A.SizeofType) -> A.Expr:
        t = self.resolve_type_name(expr.type_name)
        if isinstance(t, FunctionType) or (isinstance(t, StructType) and not t.complete):
            self.fail(f"invalid application of 'sizeof' to '{t}'", expr.loc)
        expr.type = SIZE_T
        return expr

    def check_alignof_type(self, expr: A.AlignofType) -> A.Expr:
        t = self.resolve_type_name(expr.type_name)
        if isinstance(t, FunctionType) or (isinstance(t, StructType) and not t.complete):
            self.fail(f"invalid application of 'alignof' to '{t}'", expr.loc)
        value = alignof(t)
        return A.IntLit(expr.loc, value, str(value), SIZE_T)

    def check_construct(self, expr: A.Construct, known_type: Type | None = None) -> A.Expr:
        t = known_type or self.resolve_type_name(expr.type_name)
        args = [self.operand(a) for a in expr.args]
        if isinstance(t, StructType) and (t.info is not None or (len(args) == 1 and
                                                                  unqualified(args[0].type) == unqualified(t))):
            from . import classes
            return classes.construct(self, expr, unqualified(t), args)
        if isinstance(t, StructType) and t.complete and not t.vector and t.name not in ("dim3", "uint3") and \
                t.kind == "struct" and (args or expr.braced):
            from . import classes     # `Vec{a, b}`: an aggregate's fields
            return classes.aggregate_construct(self, expr, unqualified(t), args)
        if isinstance(t, StructType) and t.name in ("dim3", "uint3"):
            if len(args) > 3:
                self.fail(f"dim3 takes at most 3 values, {len(args)} given", expr.loc)
            expr.args = [self.convert_assign(a, UINT, "constructing dim3") for a in args]
        elif is_scalar(t):
            if len(args) > 1:
                self.fail(f"functional cast to '{t}' takes one value", expr.loc)
            args = [self.class_operand(a, t) for a in args]
            if args:
                self.check_explicit_conversion(args[0], t, expr.loc)
            expr.args = args
        else:
            self.fail(f"cannot construct a value of type '{t}'", expr.loc)
        expr.type = unqualified(t)
        return expr

    # ---- constant expressions ----------------------------------------------------------
    def constant_int(self, expr: A.Expr) -> int:
        expr = self.check_expr(expr)
        value = constant_value(expr)
        if not isinstance(value, int):
            self.fail("expression is not an integer constant expression", expr.loc)
        return value


# File-level items other than functions and declarations.
_EXTERNAL_CHECKS = {
    A.TemplateDecl: Analyzer.check_template_decl, A.ExplicitInstantiation: Analyzer.check_explicit_instantiation,
    A.NamespaceDef: Analyzer.check_namespace, A.UsingDirective: Analyzer.check_using_directive,
    A.NamespaceAlias: Analyzer.check_namespace_alias,
    A.UsingAlias: Analyzer.check_using_alias, A.StaticAssert: Analyzer.check_static_assert,
    A.UsingDeclaration: Analyzer.check_using_declaration,
}

# Node class -> the Analyzer method that checks it.
_EXPR_CHECKS = {
    A.Ident: Analyzer.check_ident, A.IntLit: Analyzer.check_int_lit, A.FloatLit: Analyzer.check_float_lit,
    A.CharLit: Analyzer.check_char_lit, A.StringLit: Analyzer.check_string_lit, A.BoolConst: Analyzer.check_bool,
    A.Binary: Analyzer.check_binary, A.Unary: Analyzer.check_unary, A.PreIncDec: Analyzer.check_inc_dec,
    A.PostIncDec: Analyzer.check_inc_dec, A.Assign: Analyzer.check_assign,
    A.Conditional: Analyzer.check_conditional, A.Comma: Analyzer.check_comma, A.Call: Analyzer.check_call,
    A.Launch: Analyzer.check_launch, A.Index: Analyzer.check_index, A.Member: Analyzer.check_member,
    A.Cast: Analyzer.check_cast, A.SizeofExpr: Analyzer.check_sizeof_expr,
    A.SizeofType: Analyzer.check_sizeof_type, A.AlignofType: Analyzer.check_alignof_type,
    A.Construct: Analyzer.check_construct,
    A.ImplicitCast: lambda self, expr: expr, A.CxxCast: Analyzer.check_cxx_cast,
    A.TemplateId: Analyzer.check_template_id,
    A.ClassMemberRef: Analyzer.check_class_member,
    A.Lambda: lambda self, expr: __import__("ptxc.frontend.classes", fromlist=["x"]).lambda_closure(self, expr),
}
_STMT_CHECKS = {
    A.CompoundStmt: Analyzer.check_compound, A.ExprStmt: Analyzer.check_expr_stmt, A.IfStmt: Analyzer.check_if,
    A.ForStmt: Analyzer.check_for, A.WhileStmt: Analyzer.check_while, A.DoStmt: Analyzer.check_do,
    A.ReturnStmt: Analyzer.check_return, A.BreakStmt: Analyzer.check_break,
    A.ContinueStmt: Analyzer.check_continue, A.SwitchStmt: Analyzer.check_switch,
    A.CaseStmt: Analyzer.check_case, A.DefaultStmt: Analyzer.check_default,
    A.Declaration: Analyzer.check_local_declaration, A.AsmStmt: Analyzer.check_asm,
    A.StaticAssert: Analyzer.check_static_assert, A.UsingAlias: Analyzer.check_using_alias,
    A.RangeForStmt: Analyzer.check_range_for, A.UsingDeclaration: Analyzer.check_using_declaration,
}


def composite_pointer_type(a: PointerType, b: PointerType) -> Type | None:
    """C++'s composite pointer type of two pointers ([expr.type]), or None: pointees of
    one type give it with both operands' qualifiers (`char *` and `const char *`: `const
    char *`); a `void *` and an object pointer give `void *` so qualified."""
    pa, pb = a.pointee, b.pointee
    const, volatile = pa.const or pb.const, pa.volatile or pb.volatile
    ua, ub = unqualified(pa), unqualified(pb)
    if ua == ub:
        target = ua
    elif isinstance(ua, VoidType) and not isinstance(ub, FunctionType) or \
            isinstance(ub, VoidType) and not isinstance(ua, FunctionType):
        target = VOID
    else:   # (bases are flattened into their classes' fields: no derived-to-base conversion)
        return None
    return PointerType(with_quals(target, const=const, volatile=volatile))


def constant_literal(loc, sym: VarSymbol) -> A.Expr:
    """The literal a constant variable's use stands for (`N`, `Cfg::scale`)."""
    t = unqualified(sym.type)
    if isinstance(t, FloatType):
        return A.FloatLit(loc, float(sym.const_value), repr(float(sym.const_value)), t)
    return A.IntLit(loc, sym.const_value, str(sym.const_value), t)


def constant_value(expr: A.Expr):
    """The value of a constant expression (int or float), or None."""
    cls = expr.__class__
    if cls is A.Ident:   # the common cases first, by exact class (hot)
        symbol = expr.symbol
        return symbol.value if isinstance(symbol, EnumConstSymbol) else getattr(symbol, "const_value", None)
    if cls is A.Call:
        return _constexpr_call(expr)
    if cls in _NEVER_CONSTANT:
        return None
    if isinstance(expr, (A.IntLit, A.CharLit)):
        return expr.value
    if isinstance(expr, A.BoolConst):
        return int(expr.value)
    if isinstance(expr, A.FloatLit):
        return expr.value
    if isinstance(expr, A.Ident) and isinstance(expr.symbol, EnumConstSymbol):
        return expr.symbol.value
    if isinstance(expr, (A.ImplicitCast, A.Cast)):
        inner = constant_value(expr.operand)
        if inner is None:
            return None
        return convert_constant(inner, expr.type)
    if isinstance(expr, A.SizeofType):
        return sizeof(expr.type_name.type)
    if isinstance(expr, A.SizeofExpr):
        return sizeof(expr.operand.type)
    if isinstance(expr, A.Unary):
        inner = constant_value(expr.operand)
        if inner is None:
            return None
        if expr.op == "-":
            return convert_constant(-inner, expr.type)
        if expr.op == "+":
            return inner
        if expr.op == "~":
            return convert_constant(~inner, expr.type)
        if expr.op == "!":
            return int(not inner)
        return None
    if isinstance(expr, A.Binary):
        a, b = constant_value(expr.lhs), constant_value(expr.rhs)
        if a is None or b is None:
            return None
        try:
            value = fold_binary(expr.op, a, b, expr.lhs.type)
        except ZeroDivisionError:
            return None
        return convert_constant(value, expr.type) if value is not None else None
    if isinstance(expr, A.Conditional):
        cond = constant_value(expr.cond)
        if cond is None:
            return None
        return constant_value(expr.then if cond else expr.else_)
    return None


_CONSTEXPR_DEPTH = [0]


def _constexpr_call(expr: A.Call):
    """A call of a `constexpr` function whose body is one `return e;`, with constant
    arguments: e's value, its parameters bound to them (recursion up to a depth)."""
    callee = expr.callee
    fdef = getattr(callee, "definition", None)
    if fdef is None or not fdef.specs.constexpr or len(fdef.body.items) != 1 or \
            fdef.body.items[0].__class__ is not A.ReturnStmt or fdef.body.items[0].value is None:
        return None
    values = [constant_value(a) for a in expr.args]
    if any(v is None for v in values) or len(values) != len(fdef.param_symbols) or _CONSTEXPR_DEPTH[0] > 64:
        return None
    saved = [p.const_value for p in fdef.param_symbols]
    _CONSTEXPR_DEPTH[0] += 1
    try:
        for psym, value in zip(fdef.param_symbols, values):
            psym.const_value = value
        return constant_value(fdef.body.items[0].value)
    finally:
        _CONSTEXPR_DEPTH[0] -= 1
        for psym, value in zip(fdef.param_symbols, saved):
            psym.const_value = value


# Expressions constant_value never folds (it would test each against every kind above).
_NEVER_CONSTANT = frozenset({A.StringLit, A.PreIncDec, A.PostIncDec, A.Assign, A.Comma, A.Launch,
                             A.Index, A.Member, A.Construct, A.CxxCast})


def fold_binary(op: str, a, b, operand_type: Type):
    """C's meaning of a binary operator on constants (the operands already converted)."""
    if op == "+": return a + b
    if op == "-": return a - b
    if op == "*": return a * b
    if op == "/":
        if isinstance(a, float) or isinstance(b, float):
            return a / b
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    if op == "%":
        q = abs(a) // abs(b)
        q = q if (a >= 0) == (b >= 0) else -q
        return a - q * b
    if op == "<<": return a << b
    if op == ">>": return a >> b
    if op == "&": return a & b
    if op == "|": return a | b
    if op == "^": return a ^ b
    if op == "<": return int(a < b)
    if op == ">": return int(a > b)
    if op == "<=": return int(a <= b)
    if op == ">=": return int(a >= b)
    if op == "==": return int(a == b)
    if op == "!=": return int(a != b)
    if op == "&&": return int(bool(a) and bool(b))
    if op == "||": return int(bool(a) or bool(b))
    return None


def convert_constant(value, t: Type):
    """Convert a constant as C would: wrap integers to the type's width, truncate floats."""
    if isinstance(t, IntType):
        if t.name == "bool":
            return int(bool(value))
        value = int(value)
        bits = t.size * 8
        value &= (1 << bits) - 1
        if t.signed and value >= 1 << (bits - 1):
            value -= 1 << bits
        return value
    if isinstance(t, EnumType):
        return int(value)
    if isinstance(t, FloatType):
        value = float(value)
        if t.size == 4:
            import struct
            try:
                value = struct.unpack("<f", struct.pack("<f", value))[0]
            except OverflowError:
                value = float("inf") if value > 0 else float("-inf")
        return value
    return value


def analyze(unit: A.TranslationUnit, filename: str, source: str | None = None) -> Analyzer:
    """Type-check the whole unit; raise CompileError with every diagnostic found."""
    analyzer = Analyzer(filename)
    analyzer.run(unit)
    unit.functions = analyzer.functions
    if analyzer.diagnostics:
        raise CompileError(analyzer.diagnostics, source)
    return analyzer


from .templates import FunctionTemplate  # noqa: E402  (templates.py imports this module)
