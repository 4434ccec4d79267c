"""The CUDA C abstract syntax tree.

One dataclass per grammar rule of grammars/cuda.lark, named after it (`if_stmt` -> IfStmt).
Every node has `loc = (line, col)`, 1-based, of its first token (a binary expression: of
its operator).  Sema fills the fields marked "sema:"; codegen reads them.  The only node
no grammar rule builds is ImplicitCast, which sema inserts where C converts a value.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

Loc = tuple  # (line, col)


@dataclass(slots=True, eq=False)
class Node:
    loc: Loc


# ---- declarations ------------------------------------------------------------------------

@dataclass(slots=True, eq=False)
class DeclSpecifiers(Node):
    storage: list           # "static", "typedef", "register", "extern"
    qualifiers: list        # "const", "volatile", "__restrict__"
    function_specs: list    # "inline", "__forceinline__", ...
    exec_spaces: list       # "__global__", "__device__", "__host__"
    memory_spaces: list     # "__shared__", "__constant__", "__managed__"
    type_specs: list        # str keywords, TypeNameRef, StructSpec, EnumSpec
    launch_bounds: list = field(default_factory=list)  # expressions
    extern_c: bool = False
    align: Any = None       # `__align__(N)`: the expression N
    constexpr: bool = False


@dataclass(slots=True, eq=False)
class TypeNameRef(Node):
    """A TYPE_NAME token used as a type specifier (a typedef or a struct tag)."""
    name: str


@dataclass(slots=True, eq=False)
class TemplateTypeRef(Node):
    """`Name<args>` as a type specifier (a class template's specialization); `args`
    None: the template's own name inside its body; `member`: `Name<args>::member`."""
    name: str
    args: Optional[list]    # TypeName or Expr
    member: Optional[str] = None


@dataclass(slots=True, eq=False)
class PointerDeriv(Node):
    qualifiers: list


@dataclass(slots=True, eq=False)
class ArrayDeriv(Node):
    size: Optional["Expr"]


@dataclass(slots=True, eq=False)
class FunctionDeriv(Node):
    params: list            # ParameterDeclaration
    variadic: bool = False
    const: bool = False     # a const member function: `float norm() const`


@dataclass(slots=True, eq=False)
class Declarator(Node):
    """A name and the type derivations applied, in order, to the specifiers' base type:
    `*a[4]` is [PointerDeriv, ArrayDeriv(4)] (array of pointers)."""
    name: Optional[str]
    derivations: list
    construct_args: Optional[list] = None  # C++ `dim3 grid(8, 8)`
    template_args: Optional[list] = None   # `f<int>` in an explicit instantiation or specialization
    conversion_type: Any = None            # `operator float()`: the TypeName it converts to


@dataclass(slots=True, eq=False)
class ParameterDeclaration(Node):
    specs: DeclSpecifiers
    declarator: Declarator
    default: Any = None     # C++ default argument


@dataclass(slots=True, eq=False)
class TypeName(Node):
    specs: DeclSpecifiers
    declarator: Declarator
    type: Any = None        # sema: the Type it names


@dataclass(slots=True, eq=False)
class InitList(Node):
    items: list
    braced_init: bool = False   # `T x{...}` (a constructor's call where T has one)


@dataclass(slots=True, eq=False)
class InitDeclarator(Node):
    declarator: Declarator
    init: Any = None        # Expr or InitList
    symbol: Any = None      # sema: the declared Symbol
    reference: bool = False  # sema: a `T& r = lvalue;` (init is the lvalue's address)


@dataclass(slots=True, eq=False)
class Declaration(Node):
    specs: DeclSpecifiers
    declarators: list       # InitDeclarator


@dataclass(slots=True, eq=False)
class StructMember(Node):
    specs: DeclSpecifiers
    declarators: list       # Declarator
    inits: list = field(default_factory=list)   # per declarator: its `= value` or None (static members)


@dataclass(slots=True, eq=False)
class ConstructorDef(Node):
    """`__device__ S(float x) : a(x), b(0) { ... }` inside struct S."""
    specs: Any              # DeclSpecifiers or None
    params: list            # ParameterDeclaration
    inits: list             # (member name, [Expr])
    body: Any


@dataclass(slots=True, eq=False)
class Lambda(Node):
    """`[=](float x) { return a * x; }`: captures are "=", "&", "x", "&x", "this"."""
    captures: list
    params: list            # ParameterDeclaration
    ret: Any                # TypeName or None
    body: Any
    type: Any = None
    spaces: list = field(default_factory=list)   # `[=] __device__ (...)`: its execution spaces


@dataclass(slots=True, eq=False)
class StructSpec(Node):
    kind: str               # "struct", "union" or "class"
    name: Optional[str]
    members: Optional[list]  # None: a reference to a tag declared elsewhere
    template_args: Optional[list] = None   # `template <> struct S<float> {...}`
    align: Any = None       # `struct __align__(16) S`: the expression
    bases: list = field(default_factory=list)   # TypeNameRef / TemplateTypeRef of `: public B`
    instance: Any = None    # sema: (ClassTemplate, arguments) when this is an instance's copy
    captures: Any = None    # a lambda's closure: {captured name: by reference}


@dataclass(slots=True, eq=False)
class Enumerator(Node):
    name: str
    value: Optional["Expr"]


@dataclass(slots=True, eq=False)
class EnumSpec(Node):
    name: Optional[str]
    enumerators: Optional[list]
    scoped: bool = False    # `enum class`
    underlying: Any = None  # `enum E : unsigned char`: its DeclSpecifiers


@dataclass(slots=True, eq=False)
class FunctionDef(Node):
    specs: DeclSpecifiers
    declarator: Declarator
    body: "CompoundStmt"
    symbol: Any = None      # sema: FunctionSymbol
    param_symbols: list = field(default_factory=list)  # sema: one VarSymbol per parameter


@dataclass(slots=True, eq=False)
class TemplateDecl(Node):
    """`template <typename T, int N = 4> ...` (params empty: `template <>`, an explicit
    specialization)."""
    declaration: Node
    params: list = field(default_factory=list)   # TemplateParam


@dataclass(slots=True, eq=False)
class TemplateParam(Node):
    kind: str               # "type" or "value"
    name: Optional[str]
    specs: Any = None       # a value parameter's DeclSpecifiers
    declarator: Any = None  # and Declarator
    default: Any = None     # TypeName (type) or Expr (value)


@dataclass(slots=True, eq=False)
class ExplicitInstantiation(Node):
    """`template __global__ void k<float>(float*, int);`"""
    declaration: Node


@dataclass(slots=True, eq=False)
class NamespaceDef(Node):
    name: Optional[str]     # None: an anonymous namespace
    items: list


@dataclass(slots=True, eq=False)
class NamespaceAlias(Node):
    """`namespace cg = cooperative_groups;`"""
    name: str
    target: str


@dataclass(slots=True, eq=False)
class UsingDirective(Node):
    """`using namespace N;`"""
    name: str


@dataclass(slots=True, eq=False)
class UsingAlias(Node):
    """`using T = float;`"""
    name: str
    type_name: Any


@dataclass(slots=True, eq=False)
class UsingDeclaration(Node):
    """`using ns::name;`"""
    name: str               # qualified


@dataclass(slots=True, eq=False)
class StaticAssert(Node):
    cond: Any
    message: Optional[str]


@dataclass(slots=True, eq=False)
class TranslationUnit(Node):
    items: list             # FunctionDef | Declaration
    filename: str = ""
    pragmas: list = field(default_factory=list)  # (line, text) of each #pragma
    functions: list = field(default_factory=list)  # sema: every FunctionSymbol (instances, members too)


# ---- statements --------------------------------------------------------------------------

@dataclass(slots=True, eq=False)
class CompoundStmt(Node):
    items: list


@dataclass(slots=True, eq=False)
class ExprStmt(Node):
    expr: Optional["Expr"]


@dataclass(slots=True, eq=False)
class IfStmt(Node):
    cond: "Expr"
    then: Node
    else_: Optional[Node] = None
    constexpr: bool = False


@dataclass(slots=True, eq=False)
class ForStmt(Node):
    init: Optional[Node]    # Declaration or ExprStmt
    cond: Optional["Expr"]
    step: Optional["Expr"]
    body: Node


@dataclass(slots=True, eq=False)
class RangeForStmt(Node):
    """`for (float v : arr) body`; sema lowers it to `lowered`, an index loop (and
    clears the other fields, so that each node is seen once)."""
    specs: Any
    declarator: Any
    range: Any
    body: Any
    lowered: Any = None


@dataclass(slots=True, eq=False)
class WhileStmt(Node):
    cond: "Expr"
    body: Node


@dataclass(slots=True, eq=False)
class DoStmt(Node):
    body: Node
    cond: "Expr"


@dataclass(slots=True, eq=False)
class ReturnStmt(Node):
    value: Optional["Expr"]


@dataclass(slots=True, eq=False)
class BreakStmt(Node):
    pass


@dataclass(slots=True, eq=False)
class ContinueStmt(Node):
    pass


@dataclass(slots=True, eq=False)
class SwitchStmt(Node):
    expr: "Expr"
    body: Node


@dataclass(slots=True, eq=False)
class CaseStmt(Node):
    value: "Expr"
    body: Node
    const_value: Optional[int] = None  # sema: the label's value


@dataclass(slots=True, eq=False)
class DefaultStmt(Node):
    body: Node


@dataclass(slots=True, eq=False)
class AsmStmt(Node):
    """`asm volatile("add.s32 %0, %1, 1;" : "=r"(x) : "r"(y));`"""
    template: str
    volatile: bool
    outputs: list           # (constraint, Expr)
    inputs: list            # (constraint, Expr)
    clobbers: list          # str


# ---- expressions -------------------------------------------------------------------------
# sema sets `type` on every expression (a ptxc.frontend.sema Type).

@dataclass(slots=True, eq=False)
class Expr(Node):
    pass


@dataclass(slots=True, eq=False)
class Ident(Expr):
    name: str
    type: Any = None
    symbol: Any = None      # sema: the Symbol it names


@dataclass(slots=True, eq=False)
class TemplateId(Expr):
    """`f<int, 4>` (args None: a function template's bare name, deduced at the call)."""
    name: str
    args: Optional[list]
    type: Any = None
    symbol: Any = None


@dataclass(slots=True, eq=False)
class ClassMemberRef(Expr):
    """`Traits<T>::value`, `Limits<float>::lowest`: a static member of a class template's instance."""
    owner: TemplateTypeRef
    name: str
    type: Any = None
    symbol: Any = None


@dataclass(slots=True, eq=False)
class IntLit(Expr):
    value: int
    text: str
    type: Any = None


@dataclass(slots=True, eq=False)
class FloatLit(Expr):
    value: float
    text: str
    type: Any = None


@dataclass(slots=True, eq=False)
class CharLit(Expr):
    value: int
    text: str
    type: Any = None


@dataclass(slots=True, eq=False)
class StringLit(Expr):
    value: str
    type: Any = None


@dataclass(slots=True, eq=False)
class BoolConst(Expr):
    value: bool
    type: Any = None


@dataclass(slots=True, eq=False)
class Binary(Expr):
    op: str                 # "+", "<", "&&", ...
    lhs: Expr
    rhs: Expr
    type: Any = None


@dataclass(slots=True, eq=False)
class Unary(Expr):
    op: str                 # "+", "-", "*", "&", "!", "~"
    operand: Expr
    type: Any = None


@dataclass(slots=True, eq=False)
class PreIncDec(Expr):
    op: str                 # "++" or "--"
    operand: Expr
    type: Any = None


@dataclass(slots=True, eq=False)
class PostIncDec(Expr):
    op: str
    operand: Expr
    type: Any = None


@dataclass(slots=True, eq=False)
class Assign(Expr):
    op: str                 # "=", "+=", ...
    target: Expr
    value: Expr
    type: Any = None
    compute_type: Any = None  # sema: the type `target op value` is computed in (compound)


@dataclass(slots=True, eq=False)
class Conditional(Expr):
    cond: Expr
    then: Expr
    else_: Expr
    type: Any = None


@dataclass(slots=True, eq=False)
class Comma(Expr):
    lhs: Expr
    rhs: Expr
    type: Any = None


@dataclass(slots=True, eq=False)
class Call(Expr):
    func: Expr
    args: list
    type: Any = None
    callee: Any = None      # sema: FunctionSymbol or Builtin


@dataclass(slots=True, eq=False)
class Launch(Expr):
    """`kernel<<<grid, block[, shared[, stream]]>>>(args)`"""
    func: Expr
    config: list
    args: list
    type: Any = None
    callee: Any = None


@dataclass(slots=True, eq=False)
class Index(Expr):
    base: Expr
    index: Expr
    type: Any = None


@dataclass(slots=True, eq=False)
class Member(Expr):
    base: Expr
    name: str
    arrow: bool = False
    type: Any = None


@dataclass(slots=True, eq=False)
class Cast(Expr):
    type_name: TypeName
    operand: Expr
    type: Any = None


@dataclass(slots=True, eq=False)
class SizeofExpr(Expr):
    operand: Expr
    type: Any = None


@dataclass(slots=True, eq=False)
class SizeofType(Expr):
    type_name: TypeName
    type: Any = None


@dataclass(slots=True, eq=False)
class AlignofType(Expr):
    type_name: TypeName
    type: Any = None


@dataclass(slots=True, eq=False)
class Construct(Expr):
    """C++ functional notation: `float(i)`, `dim3(16, 16)`, `Vec{a, b}`."""
    type_name: TypeName
    args: list
    type: Any = None
    braced: bool = False


@dataclass(slots=True, eq=False)
class CxxCast(Expr):
    """`static_cast<T>(e)`, `reinterpret_cast<T>(e)`, `const_cast<T>(e)`."""
    kind: str
    type_name: TypeName
    operand: Expr
    type: Any = None


@dataclass(slots=True, eq=False)
class ImplicitCast(Expr):
    """Inserted by sema: a conversion C performs without being asked."""
    operand: Expr
    type: Any = None


EXPRESSION_TYPES = (Expr,)
