"""Parse preprocessed CUDA C into the AST of ptxc.frontend.ast with Lark's LALR parser.

The parser is built once per process (and its tables cached on disk by Lark), and
builds AST nodes while it parses (an inline transformer), so no parse tree is made.
A syntax error becomes a CompileError with file:line:col.

Lark builds the LALR tables; the driver below (Parser) runs them itself, reading Lark's
private internals: the parse table (`lark.parser.parser.parser.parse_table`, its
`states`, `start_states`, `end_states`, `lalr_analysis.Shift`), the rule callbacks and
their child filters (`ChildFilterLALR*`, `to_include`, `append_none`, `node_builder`,
`ExpandSingleChild`, `default_callback`) and the terminals (`PatternStr`).  Lark's public
interface would not do: its interactive parser (`parse_interactive`, `feed_token`) is
Lark's own per-token driver, Token objects and all, the loop this one replaces, and the
standalone generator emits that same driver.  Measured (CPU time, best of 3, the 47
preprocessed testsuite/*.cu files that Lark's own lexer can read, 1,907 lines): Lark's
public `Lark.parse`, building only its parse tree, 0.331 s; this driver with ptxc's
lexer, building the AST, 0.091 s (3.6x).  So Lark is pinned exactly in pyproject.toml (`lark==1.3.1`), and
tests/test_lark_pin.py fails, naming what moved, when the installed Lark is another
version or any internal read here is gone or changed shape.
"""
from __future__ import annotations

import ast as _pyast
import re
import string
from functools import partial
from itertools import accumulate, compress, repeat
from operator import itemgetter
from pathlib import Path

from lark import Lark, Transformer, Tree
from lark.parsers.lalr_analysis import Shift

import ptxc

from ..diagnostics import CompileError, Diagnostic, SourceLoc
from . import ast as A
from .cuda_runtime import TYPE_NAMES
from .preprocess import strip_comments

# Type names that the headers nvcc always includes (cuda_runtime.h, stdint.h, ...) declare.
BUILTIN_TYPE_NAMES = frozenset({
    "size_t", "ptrdiff_t", "dim3", "uint3", "cudaError_t", "cudaStream_t", "cudaEvent_t",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "intptr_t", "uintptr_t", "cudaMemcpyKind", "cudaDeviceProp",
}) | frozenset(f"{family}{n}" for family in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                           "longlong", "ulonglong", "float", "double") for n in (1, 2, 3, 4)) | TYPE_NAMES

# C's binary operators, loosest first (the flat `binary` rule is nested by this table).
BINARY_PRECEDENCE = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7,
                     "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}


def grammar_path() -> Path:
    """grammars/cuda.lark: inside the installed package first, then the source tree's root."""
    for folder in (Path(ptxc.__file__).parent / "grammars", Path(ptxc.__file__).parent.parent / "grammars"):
        if (folder / "cuda.lark").exists():
            return folder / "cuda.lark"
    raise FileNotFoundError("grammars/cuda.lark not found beside the ptxc package")


# A token is a plain tuple (type, value, line, column), the lexer's zip of its lists
# (made in C; a class's instances would each cost a call): `type` is the grammar's terminal
# name (IDENTIFIER, LPAR, ...), tok[1] its text, tok[2:] its (line, column).  The
# specifier rules' values are lists (["qualifiers", token]), so never mistaken for one.
Token = tuple


class SyntaxErrorAt(Exception):
    def __init__(self, message: str, line: int, col: int):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


def _loc(item) -> tuple:
    if isinstance(item, Token):
        return item[2:]
    if isinstance(item, list):  # [field, token] from the specifier rules; [field, [exprs]]
        return _loc(item[1]) if item and isinstance(item[0], str) else _loc(item[0])
    return item.loc


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"', "a": "\a",
            "b": "\b", "f": "\f", "v": "\v", "?": "?"}


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body
    try:
        return _pyast.literal_eval('"' + body.replace('"', '\\"') + '"') if '\\"' not in body \
            else _pyast.literal_eval("'" + body.replace("'", "\\'") + "'")
    except (ValueError, SyntaxError):
        return body


def int_literal_value(text: str) -> int:
    if text.isdigit() and (text[0] != "0" or len(text) == 1):   # decimal, no suffix (hot)
        return int(text)
    digits = text.rstrip("uUlL")
    if digits[:2] in ("0x", "0X"):
        return int(digits, 16)
    if digits[:2] in ("0b", "0B"):
        return int(digits[2:], 2)
    if len(digits) > 1 and digits[0] == "0":
        return int(digits, 8)
    return int(digits)


def _reduce_top(operands: list, operators: list) -> None:
    op = operators.pop()
    rhs = operands.pop()
    lhs = operands.pop()
    operands.append(A.Binary(op[2:], op[1], lhs, rhs))


class BuildAst(Transformer):
    """One method per grammar rule (or alias); each returns the AST node of that name."""

    # ---- top level --------------------------------------------------------------
    def translation_unit(self, children):
        items = [c for c in children if c is not None]
        return A.TranslationUnit((1, 1), items)

    def empty_decl(self, children):
        return None

    def template_decl(self, children):
        tok = children[0]
        params = [c for c in children[1:-1] if c is not None]
        return A.TemplateDecl(tok[2:], children[-1], params)

    def explicit_instantiation(self, children):
        return A.ExplicitInstantiation(children[0][2:], children[-1])

    def type_template_param(self, children):
        name, default = children[-2:]
        return A.TemplateParam(name[2:], "type", name[1], default=default)

    def value_template_param(self, children):
        specs, declarator, default = children
        return A.TemplateParam(declarator.loc, "value", declarator.name, specs, declarator, default)

    def template_args(self, children):
        return [c for c in children if c is not None]

    def template_type(self, children):
        tok, args = children
        return A.TemplateTypeRef(tok[2:], tok[1], args)

    def qualified_type(self, children):
        names = [c for c in children if isinstance(c, Token)]
        args = children[-1] if isinstance(children[-1], list) else None
        name = "::".join(t[1] for t in names)
        if names[-1][0] == "TEMPLATE_TYPE_NAME":
            return A.TemplateTypeRef(names[0][2:], name, args)
        return A.TypeNameRef(names[0][2:], name)

    def qualified_name(self, children):
        return "::".join(t[1] for t in children)

    def namespace_def(self, children):
        tok, name = children[0], children[1]
        return A.NamespaceDef(tok[2:], name[1] if name is not None else None,
                              [c for c in children[2:] if c is not None])

    def using_alias(self, children):
        tok, name, type_name = children
        return A.UsingAlias(tok[2:], name[1], type_name)

    def namespace_alias(self, children):
        tok, name = children[0], children[1]
        return A.NamespaceAlias(tok[2:], name[1], next(c for c in children[2:] if isinstance(c, str)))

    def using_declaration(self, children):
        names = [c for c in children[1:] if isinstance(c, Token)]
        return A.UsingDeclaration(children[0][2:], "::".join(t[1] for t in names))

    def using_directive(self, children):
        return A.UsingDirective(children[0][2:], children[1])

    def static_assert_decl(self, children):
        tok, cond = children[0], children[1]
        strings = [c for c in children[2:] if c is not None]
        message = "".join(_unescape(t[1][1:-1]) for t in strings) if strings else None
        return A.StaticAssert(tok[2:], cond, message)

    def template_declarator(self, children):
        tok, args = children
        return A.Declarator(tok[2:], tok[1], [], None, args)

    def template_id(self, children):
        tok, args = children
        return A.TemplateId(tok[2:], tok[1], args)

    def qualified_ident(self, children):
        names = [c for c in children if isinstance(c, Token)]
        args = next((c for c in children if isinstance(c, list)), None)
        name = "::".join(t[1] for t in names)
        if names[-1][0] == "TEMPLATE_NAME":
            return A.TemplateId(names[0][2:], name, args)
        return A.Ident(names[0][2:], name)

    def nullptr(self, children):
        return A.IntLit(children[0][2:], 0, "0")

    def align_spec(self, children):
        return ["align", children[0]]

    def constexpr_spec(self, children):
        return ["constexpr", children[0]]

    def enum_scope(self, children):
        return "scoped"

    def function_def(self, children):
        specs, declarator, body = children
        return A.FunctionDef(specs.loc, specs, declarator, body)

    # ---- declarations -----------------------------------------------------------
    def declaration(self, children):
        specs, declarators = children
        return A.Declaration(specs.loc, specs, declarators or [])

    def init_declarator_list(self, children):
        return children

    def init_declarator(self, children):
        declarator, init = children
        return A.InitDeclarator(declarator.loc, declarator, init)

    def brace_init_declarator(self, children):
        declarator, tok, items = children
        return A.InitDeclarator(declarator.loc, declarator, A.InitList(tok[2:], items or [], True))

    def brace_construct(self, children):
        head, tok, args = children[:3]     # (the closing brace may come too: `return V{...};`)
        loc = head[2:]
        specs = A.DeclSpecifiers(loc, [], [], [], [], [], [A.TypeNameRef(loc, head[1])])
        type_name = A.TypeName(loc, specs, A.Declarator(loc, None, []))
        return A.Construct(loc, type_name, args or [], None, True)

    def init_list(self, children):
        items = children[0] if children and children[0] is not None else []
        return A.InitList(items[0].loc if items else (0, 0), items)

    def initializer_list(self, children):
        return [c for c in children if c is not None]

    def decl_specifiers(self, children):
        specs = A.DeclSpecifiers(_loc(children[0]), [], [], [], [], [], [])
        for child in children:
            if child.__class__ is list:     # [field of DeclSpecifiers, token] from a specifier rule
                field = child[0]
                if field == "extern":
                    specs.storage.append("extern")
                    specs.extern_c = specs.extern_c or (child[2] is not None and child[2][1] == '"C"')
                elif field == "launch_bounds":
                    specs.launch_bounds = child[1]
                elif field == "align":
                    specs.align = child[1]
                elif field == "constexpr":
                    specs.constexpr = True
                else:
                    getattr(specs, field).append(child[1][1])
            elif isinstance(child, Token):  # TYPE_NAME
                specs.type_specs.append(A.TypeNameRef(child[2:], child[1]))
            else:                           # StructSpec, EnumSpec, TemplateTypeRef
                specs.type_specs.append(child)
        return specs

    specifier_qualifier_list = decl_specifiers

    def storage_class(self, children):
        return ["storage", children[0]]

    def function_spec(self, children):
        return ["function_specs", children[0]]

    def exec_space(self, children):
        return ["exec_spaces", children[0]]

    def memory_space(self, children):
        return ["memory_spaces", children[0]]

    def type_qualifier(self, children):
        return ["qualifiers", children[0]]

    def base_type(self, children):
        return ["type_specs", children[0]]

    def struct_kw(self, children):
        return ["struct", children[0]]

    def extern_spec(self, children):
        return ["extern", children[0], children[1]]

    def launch_bounds(self, children):
        return ["launch_bounds", children[0]]

    def struct_spec(self, children):
        kw = children[0][1]
        align = children[1]
        name = children[2]
        bases = children[3] if len(children) > 3 else None
        members = children[4] if len(children) > 4 else None
        kind = "struct" if kw[1] == "class" else kw[1]
        return A.StructSpec(kw[2:], kind, name[1] if name is not None else None, members, None, align,
                            bases or [])

    def base_clause(self, children):
        return children

    def base_spec(self, children):
        rest = [c for c in children[1:] if c is not None]
        head = rest[0]
        if isinstance(head, Token):
            if head[0] == "TEMPLATE_TYPE_NAME":
                return A.TemplateTypeRef(head[2:], head[1], rest[1] if len(rest) > 1 else None)
            return A.TypeNameRef(head[2:], head[1])
        return head

    def access(self, children):
        return children[0]

    def member_function(self, children):
        return children[0]

    def constructor_def(self, children):
        specs, tok, params, inits, body = children
        params, _ = params or ([], False)
        return A.ConstructorDef(tok[2:], specs, params, inits or [], body)

    def access_label(self, children):
        return None

    def member_declarator_list(self, children):
        return children

    def member_declarator(self, children):
        return (children[0], children[1])

    def ctor_inits(self, children):
        return children

    def ctor_init(self, children):
        name, args = children
        return (name[1], args or [], name[2:])

    def const_function_declarator(self, children):
        inner, params = children[0], children[1]
        params, variadic = params or ([], False)
        deriv = A.FunctionDeriv(inner.loc, params, variadic, True)
        return A.Declarator(inner.loc, inner.name, [deriv] + inner.derivations, None, inner.template_args,
                            inner.conversion_type)

    def operator_declarator(self, children):
        tok, symbol = children
        return A.Declarator(tok[2:], "operator" + symbol, [])

    def conversion_declarator(self, children):
        tok, specs, pointer = children
        target = A.TypeName(specs.loc, specs, A.Declarator(specs.loc, None, pointer or []))
        return A.Declarator(tok[2:], "operator conversion", [], None, None, target)

    def operator_symbol(self, children):
        return "".join(c[1] for c in children)

    def this_expr(self, children):
        return A.Ident(children[0][2:], "this")

    def lambda_expr(self, children):
        captures = [c[1] for c in children if isinstance(c, tuple) and c and c[0] == "capture"]
        params = next((c[0] for c in children if isinstance(c, tuple) and len(c) == 2 and c[0] != "capture"), [])
        ret = next((c for c in children if isinstance(c, A.TypeName)), None)
        body = children[-1]
        spaces = [c[1][1] for c in children if isinstance(c, list) and c and c[0] == "exec_spaces"]
        node = A.Lambda(body.loc, captures, params, ret, body)
        node.spaces = spaces
        return node

    def capture(self, children):
        return ("capture", "".join(c[1] for c in children) or "=")

    def struct_align(self, children):
        return children[0]

    def struct_specialization(self, children):
        kw, name, args, bases, members = children
        kind = "struct" if kw[1][1] == "class" else kw[1][1]
        return A.StructSpec(kw[1][2:], kind, name[1], members, args, None, bases or [])

    def struct_body(self, children):
        return [c for c in children if c is not None]

    def struct_member(self, children):
        if len(children) == 1:      # a using alias, a static_assert
            return children[0]
        specs, declarators = children
        declarators = declarators or []
        return A.StructMember(specs.loc, specs, [d for d, _ in declarators], [i for _, i in declarators])

    def struct_declarator_list(self, children):
        return children

    def enum_spec(self, children):
        scoped = children[0] == "scoped"
        name = children[1]
        underlying = children[2] if len(children) > 3 else None
        body = children[3] if len(children) > 3 else None
        loc = _loc(name) if name is not None else (body[0].loc if body else (0, 0))
        return A.EnumSpec(loc, name[1] if name is not None else None, body, scoped, underlying)

    def enum_body(self, children):
        return children

    def enumerator(self, children):
        name, value = children
        return A.Enumerator(name[2:], name[1], value)

    # ---- declarators ------------------------------------------------------------
    def declarator(self, children):
        pointer, direct = children
        if pointer:
            return A.Declarator(direct.loc, direct.name, pointer + direct.derivations, direct.construct_args,
                                direct.template_args)
        return direct

    def name_declarator(self, children):
        tok = children[0]
        return A.Declarator(tok[2:], tok[1], [])

    def qualified_declarator(self, children):
        """`int Cfg::calls = 0;`: the definition of a static data member."""
        scope, name = children
        return A.Declarator(name[2:], f"{scope[1]}::{name[1]}", [])

    def array_declarator(self, children):
        inner, size = children
        deriv = A.ArrayDeriv(inner.loc, size)
        return A.Declarator(inner.loc, inner.name, [deriv] + inner.derivations)

    def function_declarator(self, children):
        inner, params = children
        params, variadic = params or ([], False)
        deriv = A.FunctionDeriv(inner.loc, params, variadic)
        return A.Declarator(inner.loc, inner.name, [deriv] + inner.derivations, None, inner.template_args,
                            inner.conversion_type)

    def construct_declarator(self, children):
        inner, args = children
        return A.Declarator(inner.loc, inner.name, inner.derivations, args)

    def pointer(self, children):
        derivs = []
        for child in children:
            if isinstance(child, Token):
                derivs.append(A.PointerDeriv(child[2:], ["&"] if child[1] == "&" else []))
            else:
                derivs[-1].qualifiers.append(child[1][1])
        return derivs

    def parameter_list(self, children):
        variadic = bool(children) and isinstance(children[-1], Token)
        return ([c for c in children if not isinstance(c, Token)], variadic)

    def parameter_declaration(self, children):
        specs, declarator, default = children
        if declarator is None:
            declarator = A.Declarator(specs.loc, None, [])
        return A.ParameterDeclaration(specs.loc, specs, declarator, default)

    def type_name(self, children):
        specs, declarator = children
        if declarator is None:
            declarator = A.Declarator(specs.loc, None, [])
        return A.TypeName(specs.loc, specs, declarator)

    def abstract_declarator(self, children):
        if len(children) == 1:  # pointer alone
            return A.Declarator(children[0][0].loc, None, children[0])
        pointer, direct = children
        return A.Declarator(direct.loc, None, (pointer or []) + direct.derivations)

    def abstract_array(self, children):
        inner, size = children
        inner = inner or A.Declarator(size.loc if size else (0, 0), None, [])
        return A.Declarator(inner.loc, None, [A.ArrayDeriv(inner.loc, size)] + inner.derivations)

    def abstract_function(self, children):
        inner, params = children
        inner = inner or A.Declarator((0, 0), None, [])
        params, variadic = params or ([], False)
        return A.Declarator(inner.loc, None, [A.FunctionDeriv(inner.loc, params, variadic)] + inner.derivations)

    # ---- statements -------------------------------------------------------------
    def compound_stmt(self, children):
        return A.CompoundStmt(children[0].loc if children else (0, 0), children)

    def expr_stmt(self, children):
        expr = children[0]
        return A.ExprStmt(expr.loc if expr is not None else (0, 0), expr)

    def if_stmt(self, children):
        tok, constexpr, cond, then, else_ = children
        return A.IfStmt(tok[2:], cond, then, else_, constexpr is not None)

    def for_stmt(self, children):
        tok, init, cond, step, body = children
        return A.ForStmt(tok[2:], init, cond, step, body)

    def range_for_stmt(self, children):
        tok, specs, declarator, rng, body = children
        return A.RangeForStmt(tok[2:], specs, declarator, rng, body)

    def template_member(self, children):
        tok, args, name = children
        return A.ClassMemberRef(tok[2:], A.TemplateTypeRef(tok[2:], tok[1], args), name[1])

    def template_member_type(self, children):
        _, tok, args, name = children
        return A.TemplateTypeRef(tok[2:], tok[1], args, name[1])

    def while_stmt(self, children):
        tok, cond, body = children
        return A.WhileStmt(tok[2:], cond, body)

    def do_stmt(self, children):
        tok, body, cond = children
        return A.DoStmt(tok[2:], body, cond)

    def return_stmt(self, children):
        tok, value, _ = children
        return A.ReturnStmt(tok[2:], value)

    def break_stmt(self, children):
        return A.BreakStmt(children[0][2:])

    def continue_stmt(self, children):
        return A.ContinueStmt(children[0][2:])

    def switch_stmt(self, children):
        tok, expr, body = children
        return A.SwitchStmt(tok[2:], expr, body)

    def case_stmt(self, children):
        value, body = children
        return A.CaseStmt(value.loc, value, body)

    def default_stmt(self, children):
        return A.DefaultStmt(children[0].loc, children[0])

    def asm_keyword(self, children):
        return children[0]

    def asm_stmt(self, children):
        tok = children[0]
        qualifier = children[1]
        strings = [c for c in children[2:] if isinstance(c, Token)]
        sections = next((c for c in children[2:] if isinstance(c, list)), [])
        template = "".join(_unescape(t[1][1:-1]) for t in strings)
        outputs = sections[0] if len(sections) > 0 else []
        inputs = sections[1] if len(sections) > 1 else []
        clobbers = [c for c, _ in sections[2]] if len(sections) > 2 else []
        return A.AsmStmt(tok[2:], template, qualifier is not None, outputs, inputs, clobbers)

    def asm_qualifier(self, children):
        return children[0]

    def asm_operands(self, children):
        """One `: a, b` section followed by the later ones: a list of sections."""
        operands = [c for c in children if isinstance(c, tuple)]   # asm_operand's (no token here)
        rest = next((c for c in children if isinstance(c, list)), [])
        return [operands] + rest

    def asm_operands_after_empty(self, children):
        """`::` (C++'s scope token) between two sections: an empty section, then this one."""
        return [[]] + self.asm_operands(children)

    def asm_operand(self, children):
        constraint, expr = children
        return (_unescape(constraint[1][1:-1]), expr)

    # ---- expressions ------------------------------------------------------------
    def comma(self, children):
        lhs, rhs = children
        return A.Comma(lhs.loc, lhs, rhs)

    def assign(self, children):
        target, op, value = children
        return A.Assign(op[2:], op[1], target, value)

    def conditional(self, children):
        cond, then, else_ = children
        return A.Conditional(cond.loc, cond, then, else_)

    def binary(self, children):
        """Nest the flat [operand, op, operand, ...] list by precedence (all left-associative)."""
        if len(children) == 3:
            lhs, op, rhs = children
            return A.Binary(op[2:], op[1], lhs, rhs)
        operands = [children[0]]
        operators: list[Token] = []
        for k in range(1, len(children), 2):
            op = children[k]
            prec = BINARY_PRECEDENCE[op[1]]
            while operators and BINARY_PRECEDENCE[operators[-1][1]] >= prec:
                _reduce_top(operands, operators)
            operators.append(op)
            operands.append(children[k + 1])
        while operators:
            _reduce_top(operands, operators)
        return operands[0]

    def cast(self, children):
        type_name, operand = children
        return A.Cast(type_name.loc, type_name, operand)

    def pre_inc_dec(self, children):
        op, operand = children
        return A.PreIncDec(op[2:], op[1], operand)

    def unary(self, children):
        op, operand = children
        return A.Unary(op[2:], op[1], operand)

    def sizeof_expr(self, children):
        tok, operand = children
        return A.SizeofExpr(tok[2:], operand)

    def sizeof_type(self, children):
        tok = children[0]
        return A.SizeofType(tok[2:], children[2])

    def alignof_type(self, children):
        """`alignof(T)`: the constant it is, once sema knows T (an IntLit of size_t)."""
        tok = children[0]
        return A.AlignofType(tok[2:], children[2])

    def index(self, children):
        base, _, idx, _ = children
        return A.Index(base.loc, base, idx)

    def call(self, children):
        func, _, args, _ = children
        return A.Call(func.loc, func, args or [])

    def launch(self, children):
        func, _, config, _, _, args, _ = children
        return A.Launch(func.loc, func, config, args or [])

    def member(self, children):
        base, op, name = children
        return A.Member(op[2:], base, name[1], op[1] == "->")

    def post_inc_dec(self, children):
        operand, op = children
        return A.PostIncDec(op[2:], op[1], operand)

    def construct(self, children):
        head, _, args, _ = children
        if isinstance(head, Token):   # TYPE_NAME
            loc = head[2:]
            specs = A.DeclSpecifiers(loc, [], [], [], [], [], [A.TypeNameRef(loc, head[1])])
        else:                         # ["type_specs", token] from base_type
            tok = head[1]
            loc = tok[2:]
            specs = A.DeclSpecifiers(loc, [], [], [], [], [], [tok[1]])
        type_name = A.TypeName(loc, specs, A.Declarator(loc, None, []))
        return A.Construct(loc, type_name, args or [])

    def template_construct(self, children):
        tok, targs, _, args, _ = children
        loc = tok[2:]
        specs = A.DeclSpecifiers(loc, [], [], [], [], [], [A.TemplateTypeRef(loc, tok[1], targs)])
        type_name = A.TypeName(loc, specs, A.Declarator(loc, None, []))
        return A.Construct(loc, type_name, args or [])

    def qualified_construct(self, children):
        ref, _, args, _ = children
        loc = ref.loc
        specs = A.DeclSpecifiers(loc, [], [], [], [], [], [ref])
        return A.Construct(loc, A.TypeName(loc, specs, A.Declarator(loc, None, [])), args or [])

    def cxx_cast(self, children):
        kind = children[0]
        type_name = next(c for c in children if isinstance(c, A.TypeName))
        operand = [c for c in children if isinstance(c, A.Node)][-1]
        return A.CxxCast(kind[2:], kind[1], type_name, operand)

    def argument_list(self, children):
        return children

    def ident(self, children):
        tok = children[0]
        return A.Ident(tok[2:], tok[1])

    def int_lit(self, children):
        tok = children[0]
        try:
            value = int_literal_value(tok[1])
        except ValueError:
            raise SyntaxErrorAt(f"invalid digit in octal constant '{tok[1]}'", tok[2], tok[3]) from None
        return A.IntLit(tok[2:], value, tok[1])

    def float_lit(self, children):
        tok = children[0]
        return A.FloatLit(tok[2:], float(tok[1].rstrip("fFlL")), tok[1])

    def char_lit(self, children):
        tok = children[0]
        text = _unescape(tok[1][1:-1])
        return A.CharLit(tok[2:], ord(text[0]) if text else 0, tok[1])

    def string_lit(self, children):
        tok = children[0]
        return A.StringLit(tok[2:], "".join(_unescape(t[1][1:-1]) for t in children))

    def bool_const(self, children):
        tok = children[0]
        return A.BoolConst(tok[2:], tok[1] == "true")




# ---- the lexer -------------------------------------------------------------------------
# Built from the grammar's own terminals, so cuda.lark stays the one definition of the
# language: string terminals that look like words are keywords, the other strings are
# punctuators (longest first), and the regex terminals keep their patterns.

_WORD = re.compile(r"[A-Za-z_]\w*\Z")


def _non_capturing(pattern: str) -> str:
    """A terminal's regex with its groups made (?:...) ones (no `(` in a class there)."""
    return re.sub(r"(?<!\\)\((?!\?)", "(?:", pattern)


def _longest_of(words: list) -> str:
    """A regex that matches the longest of `words` at a position, as a trie of branches:
    `<(?:<[<=]?|=|)` for < << <<= <<< <=.  A word may end where a branch is empty (the
    last one, so that longer words win) or, before one last character, with `?`."""
    tree: dict = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def branches(node: dict) -> list:
        ends = [ch for ch in sorted(node) if ch and set(node[ch]) == {""}]   # words' last characters
        out = [re.escape(ch) + after(node[ch]) for ch in sorted(node) if ch and ch not in ends]
        if ends:
            out.append(re.escape(ends[0]) if len(ends) == 1 else "[" + "".join(map(re.escape, ends)) + "]")
        return out

    def after(node: dict) -> str:
        alternatives = branches(node)
        if not alternatives:
            return ""
        if "" in node:
            if len(alternatives) == 1 and all(set(child) == {""} for ch, child in node.items() if ch):
                return alternatives[0] + "?"     # one character, or a class of them
            alternatives.append("")
        return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"

    return "|".join(branches(tree))


class Lexer:
    REGEX_TERMINALS = ("IDENTIFIER", "FLOAT_CONST", "INT_CONST", "CHAR_CONST", "STRING")

    def __init__(self, terminals):
        self.keywords: dict[str, str] = {}
        punctuators: dict[str, str] = {}
        patterns: dict[str, str] = {}
        for term in terminals:
            pattern = term.pattern
            if type(pattern).__name__ == "PatternStr":
                if _WORD.match(pattern.value):
                    self.keywords[pattern.value] = term.name
                else:
                    punctuators[pattern.value] = term.name
            elif not term.name.startswith("__IGNORE"):
                if term.name not in self.REGEX_TERMINALS:
                    raise ValueError(f"cuda.lark: the lexer does not know the terminal {term.name}; "
                                     "write keywords and punctuators as string literals")
                patterns[term.name] = pattern.value
        # A token's kind by its text (keywords, punctuators, a lone quote: an error), else
        # by its first character (a digit: INT_CONST until FLOAT_CONST matches it all).
        self.kind_of_text = {**self.keywords, **punctuators, '"': "ERROR", "'": "ERROR"}
        self.kind_of_first = {ch: "IDENTIFIER" for ch in string.ascii_letters + "_"}
        self.kind_of_first.update({**dict.fromkeys(string.digits, "INT_CONST"), ".": "FLOAT_CONST",
                                   "'": "CHAR_CONST", '"': "STRING", "/": "COMMENT"})
        self.float_const = re.compile(_non_capturing(patterns["FLOAT_CONST"]))
        # One match per token with the whitespace after it, so that findall (no match
        # objects) gives a line's tokens, and their lengths their columns.  The alternatives start
        # with different characters, except where listed in order: a FLOAT_CONST before an
        # INT_CONST, a number before '.', a comment before '/'.  Punctuators are a trie
        # (`<(?:<[<=]?|=|)`): sre skips a branch that starts with another character in
        # one step, but tries every alternative of a flat list.
        late = [p for p in punctuators if p[0] in "./"]
        self.master = re.compile("(?:" + "|".join([
            _non_capturing(patterns["IDENTIFIER"]),
            _longest_of([p for p in punctuators if p not in late]),
            _non_capturing(patterns["FLOAT_CONST"]),
            _non_capturing(patterns["INT_CONST"]),
            r"//[^\n]*|/\*(?:.|\n)*?\*/",
            _longest_of(late),
            _non_capturing(patterns["CHAR_CONST"]),
            _non_capturing(patterns["STRING"]),
            r"\S",      # no token: an error
        ]) + r")\s*")
        assert self.master.groups == 0, "findall would give groups, not tokens"

    def tokens(self, text: str, type_names: set) -> list:
        """The Tokens, $END last; an IDENTIFIER that a typedef or struct tag declared is a
        TYPE_NAME (the "lexer hack": C's grammar cannot tell `T * x;` apart otherwise).
        Text that is no token ends the list with a $ERROR token, its value the message:
        the parser reports it when it gets there (after any syntax error before it).

        Each step runs over a line's or all tokens at once in C (map over lists), so
        that only the lexer hack's and a few rare tokens take a Python step each."""
        self.template_names: dict[str, str] = {}
        if "/*" in text:    # a block comment may span lines: spaces instead (its breaks kept)
            text = strip_comments(text)
        findall = self.master.findall
        values: list = []
        lines: list = []
        columns: list = []
        line_texts = text.split("\n")
        for number, line in enumerate(line_texts, 1):
            first = len(line) - len(line.lstrip())
            if first < len(line):
                pieces = findall(line, first)     # each token and the whitespace after it
                values += map(str.rstrip, pieces)
                lines += repeat(number, len(pieces))
                columns += accumulate(map(len, pieces[:-1]), initial=first + 1)
        kinds = list(map(self.kind_of_text.get, values,
                         map(self.kind_of_first.get, map(itemgetter(0), values), repeat("ERROR"))))
        present = set(kinds)    # (one pass, then no list scan for a kind that is absent)
        if "INT_CONST" in present:
            for k in _positions(kinds, "INT_CONST"):
                value = values[k]   # (a FLOAT_CONST has a '.' or an exponent: the regex only then)
                if ("." in value or "e" in value or "E" in value) and self.float_const.fullmatch(value):
                    kinds[k] = "FLOAT_CONST"
        error = None
        if "ERROR" in present:      # no token matches here: the tokens end
            cut = kinds.index("ERROR")
            error = (values[cut], lines[cut], columns[cut])
            del values[cut:], kinds[cut:], lines[cut:], columns[cut:]
        if "COMMENT" in present:    # a // comment (the preprocessor has replaced them by spaces)
            keep = [kind != "COMMENT" for kind in kinds]
            values, kinds, lines, columns = (list(compress(items, keep)) for items in (values, kinds, lines, columns))
        if "TEMPLATE" in present or "USING" in present:
            self.mark_templates(kinds, values, type_names)
        self.mark_type_names(kinds, values, type_names)
        if "STRUCT" in present or "CLASS" in present:
            mark_constructors(kinds, values)
        if "{" in values:
            mark_brace_inits(kinds, values)
        if "::" in values:
            self.mark_namespaces(kinds, values)
        out = list(zip(kinds, values, lines, columns))
        if self.template_names and (">>" in values or ">>>" in values):
            out = self.split_closing_angles(out)
        if error is not None:
            value, line, column = error
            what = "missing terminating '\"' character" if value == '"' else \
                "missing terminating ' character" if value == "'" else f"stray '{value}' in program"
            out.append(("$ERROR", what, line, column))
            return out
        out.append(("$END", "", len(line_texts), len(line_texts[-1]) + 1))
        return out

    def mark_templates(self, kinds: list, values: list, type_names: set) -> None:
        """C++'s other lexer hack: the name a template declares is a TEMPLATE_NAME
        (a function template) or a TEMPLATE_TYPE_NAME (a class template) wherever it
        appears, so that `f<2>(x)` and `Vec<float> v` parse; `using T = ...;` makes
        `T` a type name."""
        count = len(kinds)
        for k in _positions(kinds, "USING"):
            if k + 2 < count and kinds[k + 1] == "IDENTIFIER" and values[k + 2] == "=":
                type_names.add(values[k + 1])
        for k in _positions(kinds, "TEMPLATE"):
            j = k + 1
            if j < count and values[j] == "<":
                j = _after_angles(values, j)
            if j + 1 < count and values[j] in ("struct", "class", "union") and kinds[j + 1] == "IDENTIFIER":
                self.template_names[values[j + 1]] = "TEMPLATE_TYPE_NAME"
                continue
            if j + 2 < count and values[j] == "using" and values[j + 2] == "=":   # an alias template
                self.template_names[values[j + 1]] = "TEMPLATE_TYPE_NAME"
                type_names.discard(values[j + 1])
                continue
            name = _declared_function_name(kinds, values, j)
            if name is not None and self.template_names.get(name) != "TEMPLATE_TYPE_NAME":
                self.template_names[name] = "TEMPLATE_NAME"
        names = self.template_names
        if names:
            for k in compress(range(count), map(names.__contains__, values)):
                # (a member's name after `.`/`->` is the class's, not the template's:
                # `g.sync()` beside a function template `sync`)
                if kinds[k] == "IDENTIFIER" and not (k > 0 and values[k - 1] in (".", "->") and
                                                     (k + 1 >= count or values[k + 1] != "<")):
                    kinds[k] = names[values[k]]

    @staticmethod
    def mark_namespaces(kinds: list, values: list) -> None:
        """A name before `::` (a namespace, an enum class, a struct) is a NAMESPACE_NAME,
        and so is the one `using namespace` names."""
        for k in _positions(values, "::"):
            if k > 0 and kinds[k - 1] in ("IDENTIFIER", "TYPE_NAME", "TEMPLATE_TYPE_NAME"):
                kinds[k - 1] = "NAMESPACE_NAME"
                if k + 2 < len(kinds) and kinds[k + 1] == "IDENTIFIER" and values[k + 2] in ("=", ";", "[", "{") \
                        and _after_type_words(kinds, values, k - 2):
                    kinds[k - 1] = "MEMBER_SCOPE"   # `const float Cfg::scale = 2.0f;`
        for k in _positions(values, "namespace"):
            if k > 0 and values[k - 1] == "using" and k + 1 < len(kinds) and kinds[k + 1] == "IDENTIFIER":
                kinds[k + 1] = "NAMESPACE_NAME"
            if k + 2 < len(kinds) and values[k + 2] == "=":    # `namespace cg = a::b;`: the target
                j = k + 3
                while j < len(kinds) and values[j] != ";":
                    if kinds[j] == "IDENTIFIER":
                        kinds[j] = "NAMESPACE_NAME"
                    j += 1

    def split_closing_angles(self, tokens: list) -> list:
        """`A<B<int>>`: the `>>` that closes two template argument lists is two `>`."""
        greater = self.kind_of_text[">"]
        out = []
        depth = []      # "<" for an open template argument list, "(" for brackets
        previous = None
        for tok in tokens:
            kind, value = tok[0], tok[1]
            if value == "<" and previous in ("TEMPLATE_NAME", "TEMPLATE_TYPE_NAME", "TEMPLATE"):
                depth.append("<")
            elif value in ("(", "[", "{"):
                depth.append("(")
            elif value in (")", "]", "}"):
                while depth and depth.pop() != "(":
                    pass
            elif value == ">" and depth and depth[-1] == "<":
                depth.pop()
            elif value in (">>", ">>>") and depth and depth[-1] == "<":
                line, column = tok[2], tok[3]
                for n in range(len(value)):
                    if depth and depth[-1] == "<":
                        depth.pop()
                    out.append((greater, ">", line, column + n))
                previous = greater
                continue
            out.append(tok)
            previous = kind
        return out

    @staticmethod
    def mark_type_names(kinds: list, values: list, type_names: set) -> None:
        """The lexer hack: IDENTIFIER -> TYPE_NAME where `type_names` (which a typedef or a
        struct/union/enum/class/typename tag adds to, as the tokens go) has the name."""
        hacks = _HACK_KINDS.intersection(kinds)
        first = min(map(kinds.index, hacks)) if hacks else len(kinds)
        # Before the first typedef or tag keyword, the set is the one given.
        if not type_names.isdisjoint(values[:first]):
            for k in compress(range(first), map(type_names.__contains__, values[:first])):
                if kinds[k] == "IDENTIFIER" and not (k > 0 and values[k - 1] in _MEMBER_ACCESS):
                    kinds[k] = "TYPE_NAME"
        in_typedef = False
        depth = 0
        expect_tag = False
        shadowed: set = set()   # tags that a variable of the same name hides
        skip_to = 0             # past `__align__(N)` between a tag keyword and its tag
        for k in range(first, len(kinds)):
            kind = kinds[k]
            if kind == "TEMPLATE_TYPE_NAME":    # `template <...> struct Name`: its tag
                expect_tag = False
            elif kind == "IDENTIFIER":
                value = values[k]
                if expect_tag:
                    expect_tag = False
                    if value in type_names or value in shadowed:
                        kinds[k] = "TYPE_NAME"
                    else:
                        type_names.add(value)  # C++: `struct S {...}; S s;`
                elif value in type_names:
                    if values[k - 1] in _MEMBER_ACCESS:     # `p.x` with a type `x`: the member
                        pass
                    elif _declares_variable(kinds, values, k):     # `struct node *node;`: a variable now
                        type_names.discard(value)
                        shadowed.add(value)
                    else:
                        kinds[k] = "TYPE_NAME"
                elif in_typedef and (depth == 0 or (depth == 1 and values[k - 1] == "*")):
                    type_names.add(value)
            elif kind in _HACK_KINDS:
                if kind == "TYPEDEF":
                    in_typedef, depth = True, 0
                else:
                    expect_tag = True
            elif expect_tag and values[k] in ("__align__", "alignas"):   # `struct __align__(4) S`
                k_close = _after_parens(values, k + 1)
                skip_to = k_close
            elif expect_tag and skip_to > k:
                pass
            elif expect_tag and values[k] in _TAG_ENDS:   # `struct { ... }`: no tag
                expect_tag = False
                if in_typedef and values[k] == "{":
                    depth += 1
            elif in_typedef:
                value = values[k]
                if value in "([{":
                    depth += 1
                elif value in ")]}":
                    depth -= 1
                elif value == ";" and depth == 0:
                    in_typedef = False


def mark_constructors(kinds: list, values: list) -> None:
    """Inside `struct S { ... }` (at the body's own level), `S (` starts a constructor:
    its name is a CTOR_NAME, not the type name that would begin a member's type.
    (Only the struct keywords, the braces and the classes' names are looked at.)"""
    count = len(values)
    bodies = {}     # index of a class body's `{` -> the class's name
    for k in sorted(list(_positions(values, "struct")) + list(_positions(values, "class"))):
        if kinds[k] not in ("STRUCT", "CLASS"):
            continue
        j = k + 1
        if j < count and values[j] in ("__align__", "alignas"):
            j = _after_parens(values, j + 1)
        if j >= count or kinds[j] not in ("TYPE_NAME", "TEMPLATE_TYPE_NAME", "IDENTIFIER"):
            continue
        name = values[j]
        depth = 0
        for m in range(j + 1, min(count, j + 200)):
            value = values[m]
            if value in ("(", "<"):
                depth += 1
            elif value in (")", ">"):
                depth -= 1
            elif depth <= 0 and value in (";", "{", ")", ","):
                if value == "{":
                    bodies[m] = name
                break
    if not bodies:
        return
    # The innermost open brace after each brace, so that any position's is a bisection away.
    braces = sorted(list(_positions(values, "{")) + list(_positions(values, "}")))
    innermost, stack = [], []
    for k in braces:
        if values[k] == "{":
            stack.append(k)
        elif stack:
            stack.pop()
        innermost.append(stack[-1] if stack else None)
    from bisect import bisect_right
    for body, name in bodies.items():
        for k in _positions(values, name):
            if k <= body or k + 1 >= count or values[k + 1] != "(" or values[k - 1] in ("~", ".", "->", "::"):
                continue
            i = bisect_right(braces, k) - 1
            if i >= 0 and innermost[i] == body:
                kinds[k] = "CTOR_NAME"


_TAG_KEYWORDS = frozenset({"struct", "union", "class", "enum", "namespace", ":", "public", "private",
                           "protected", ","})


def mark_brace_inits(kinds: list, values: list) -> None:
    """`Affine aff{2.0f, 1.0f}` and `return Vec{a, b}`: a `{` right after a declarator's
    name or a type name (not after a tag, a namespace's name or a base class) is a
    BRACE_INIT."""
    for k in _positions(values, "{"):
        if k < 1:
            continue
        kind = kinds[k - 1]
        before = values[k - 2] if k >= 2 else ""
        if before == ")" and k >= 6 and values[k - 5] in ("__align__", "alignas"):    # struct __align__(16) S {
            before = values[k - 6]
        if kind == "IDENTIFIER" and before not in _TAG_KEYWORDS:
            kinds[k] = "BRACE_INIT"
        elif kind in ("TYPE_NAME", "TEMPLATE_TYPE_NAME") and \
                before in ("=", "(", "return", "?", "{", ";", "}", "[", "+", "-", "*", "/"):
            kinds[k] = "BRACE_INIT"     # (a class template's own name inside it: `return Complex{a, b}`)


_TAG_ENDS = frozenset({"{", ";", "*", "&", ",", ">"})


def _declares_variable(kinds: list, values: list, k: int) -> bool:
    """Is the type name at k a declarator's name (`LatLong *LatLong;`, `struct node node,`)?"""
    if k + 1 >= len(values) or values[k + 1] not in (";", ",", "=", ")", "["):
        return False
    before = values[k - 1] if k > 0 else ""
    return before in ("*", "&") or (kinds[k - 1] == "TYPE_NAME" and k >= 2 and
                                    values[k - 2] in ("struct", "union", "enum", "class"))


def _after_angles(values: list, k: int) -> int:
    """The index after the `>` that closes the `<` at k (brackets inside skipped)."""
    depth = 0
    parens = 0
    for j in range(k, len(values)):
        value = values[j]
        if value in ("(", "[", "{"):
            parens += 1
        elif value in (")", "]", "}"):
            parens -= 1
        elif parens == 0:
            if value == "<":
                depth += 1
            elif value in (">", ">>", ">>>"):
                depth -= len(value)
                if depth <= 0:
                    return j + 1
            elif value == ";":
                return j
    return len(values)


def _declared_function_name(kinds: list, values: list, k: int):
    """The name of the function a declaration starting at k declares: the identifier
    before its parameter list's `(` (attributes' parentheses and template arguments skipped)."""
    last = None
    j = k
    while j < len(values):
        value = values[j]
        if value in ("__launch_bounds__", "__align__", "alignas"):
            j = _after_parens(values, j + 1)
            continue
        if value == "<" and last is not None:
            j = _after_angles(values, j)
            continue
        if value == "(":
            return last
        if value in (";", "{", "=", "}"):
            return None
        if kinds[j] == "IDENTIFIER":
            last = value
        j += 1
    return None


def _after_parens(values: list, k: int) -> int:
    depth = 0
    for j in range(k, len(values)):
        if values[j] == "(":
            depth += 1
        elif values[j] == ")":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(values)


_MEMBER_ACCESS = (".", "->")
_TYPE_WORDS = frozenset({"int", "float", "double", "char", "short", "long", "unsigned", "signed", "bool",
                         "void", "const", "volatile", "auto"})


def _after_type_words(kinds: list, values: list, k: int) -> bool:
    """Do the tokens ending at k end a declaration's specifiers (`const float`, `T *`)?"""
    while k >= 0 and values[k] in ("*", "&"):
        k -= 1
    return k >= 0 and (kinds[k] == "TYPE_NAME" or values[k] in _TYPE_WORDS)


def _positions(items: list, item):
    """The indices of `item` in `items`, in order (list.index scans in C)."""
    k = -1
    for _ in range(items.count(item)):
        k = items.index(item, k + 1)
        yield k




# The keywords the lexer hack follows: a tag name comes next, or a typedef starts.
_HACK_KINDS = frozenset({"STRUCT", "UNION", "ENUM", "TYPENAME", "CLASS", "TYPEDEF"})


# ---- the LALR driver -------------------------------------------------------------------
# Lark builds the tables (and caches them on disk); this loop runs them.  It is Lark's own
# algorithm with the per-rule data looked up once, not per reduction: about twice as fast.

# The action where the table has none: a reduction of size -1 (so that the loop tests for
# it only on its rare path, after size 1 and size > 0).
_NO_ACTION = (-1, None, None, None)


class Parser:
    def __init__(self, lark: Lark):
        inner = lark.parser.parser.parser
        table = inner.parse_table
        callbacks = inner.callbacks
        self.start_state = table.start_states["start"]
        self.end_state = table.end_states["start"]
        rule_info: dict[int, tuple] = {}
        self.actions: dict | list = {}   # state -> {terminal: next state (shift) or rule info (reduce)}
        self.gotos: dict | list = {}     # state -> {rule name: next state}
        for state, row in table.states.items():
            actions, gotos = {}, {}
            for symbol, (action, arg) in row.items():
                if action is Shift:
                    if symbol.isupper() or symbol.startswith("$"):
                        actions[symbol] = arg   # a shift: the next state (an int)
                    else:
                        gotos[symbol] = arg
                else:
                    info = rule_info.get(id(arg))
                    if info is None:
                        callback = callbacks[arg]
                        if len(arg.expansion) == 1 and type(callback).__name__ == "ExpandSingleChild":
                            callback = None
                        else:
                            callback = _direct_callback(callback, len(arg.expansion))
                        info = (len(arg.expansion), arg.origin.name, callback)
                        rule_info[id(arg)] = info
                    # a reduction: (size, rule name, callback, {state below: state after})
                    actions[symbol] = (*info, {})
            self.actions[state] = actions
            self.gotos[state] = gotos
        if sorted(self.actions) == list(range(len(self.actions))):   # states 0..n-1: index lists
            self.actions = [self.actions[k] for k in range(len(self.actions))]
            self.gotos = [self.gotos[k] for k in range(len(self.gotos))]
        self.lexer = Lexer(lark.terminals)

    def parse(self, text: str):
        actions = self.actions
        end_state = self.end_state
        state = self.start_state
        states = [state]
        values: list = []
        self.last_tokens = tokens = self.lexer.tokens(text, set(BUILTIN_TYPE_NAMES))
        for tok in tokens:
            ttype = tok[0]
            action = actions[state].get(ttype, _NO_ACTION)
            while action.__class__ is not int:     # reductions until tok is shifted
                # The goto after the reduction, the chain of one-child reductions that
                # may follow it, and the action there on this lookahead depend only on
                # the state below, the rule and the lookahead: followed once, then
                # remembered in the action (`after`, keyed by the state below).
                size, origin, callback, after = action
                if size == 1:   # the most common size: the stacks' tops are replaced
                    below = states[-2]
                    if callback is not None:     # (None: a `?rule` with one child, its value)
                        values[-1] = callback([values[-1]])
                    entry = after.get(below)
                    if entry is None:
                        entry = after[below] = self.after_reduction(below, origin, ttype)
                    state, action = entry
                    states[-1] = state
                    continue
                if size > 0:
                    children = values[-size:]
                    del states[-size:]
                    del values[-size:]
                elif size == 0:
                    children = []
                else:           # _NO_ACTION: the end, or a syntax error
                    if state == end_state and ttype == "$END":   # accept
                        return values[-1]
                    raise self.error(tok, state, values)
                below = states[-1]
                entry = after.get(below)
                if entry is None:
                    entry = after[below] = self.after_reduction(below, origin, ttype)
                state, action = entry
                states.append(state)
                values.append(callback(children))
            states.append(action)   # shift
            values.append(tok)
            state = action
        raise AssertionError("the parser ended without accepting")

    def after_reduction(self, below: int, origin: str, ttype: str) -> tuple:
        """(state, action on `ttype` there) after a reduction to `origin` above `below`."""
        state = self.follow_units(below, self.gotos[below][origin], ttype)
        return state, self.actions[state].get(ttype, _NO_ACTION)

    def follow_units(self, below: int, target: int, ttype: str) -> int:
        """The state that `target` (just pushed above `below`) leads to on lookahead
        `ttype` through reductions of one-child `?rules`, which only change the state."""
        actions, gotos = self.actions, self.gotos
        while True:
            after = actions[target].get(ttype)
            if after is None or after.__class__ is int or after[2] is not None:
                return target
            target = gotos[below][after[1]]

    def error(self, tok: Token, state: int, values: list) -> SyntaxErrorAt:
        if tok[0] == "$ERROR":    # (no state has an action for it: the lexer's error)
            return SyntaxErrorAt(tok[1], tok[2], tok[3])
        unsupported = unsupported_construct(self.last_tokens, tok)
        if unsupported is not None:
            what, at = unsupported
            return SyntaxErrorAt(f"unsupported feature: {what}", at[2], at[3])
        expected = {s for s in self.actions[state]}
        for closer, text in (("SEMICOLON", "';'"), ("RPAR", "')'"), ("RSQB", "']'"), ("COLON", "':'"),
                             ("RBRACE", "'}'")):
            if closer in expected and (closer != "RBRACE" or len(expected) <= 3):
                # Reported at the token found instead, as nvcc does.
                if tok[0] == "$END":
                    return SyntaxErrorAt(f"expected {text} at end of file", tok[2], tok[3])
                return SyntaxErrorAt(f"expected {text} before '{tok[1]}'", tok[2], tok[3])
        if tok[0] == "$END":
            return SyntaxErrorAt("unexpected end of file", tok[2], tok[3])
        if "IDENTIFIER" in expected and "INT_CONST" in expected:
            return SyntaxErrorAt(f"expected expression before '{tok[1]}'", tok[2], tok[3])
        if "IDENTIFIER" in expected:
            return SyntaxErrorAt(f"expected identifier before '{tok[1]}'", tok[2], tok[3])
        return SyntaxErrorAt(f"unexpected '{tok[1]}'", tok[2], tok[3])


# C++ that the subset leaves out, by the word that starts it: a syntax error at or after
# one is reported as the feature, by name (diagnostics, issue 15).
UNSUPPORTED_WORDS = {
    "virtual": "virtual functions", "try": "exceptions", "catch": "exceptions", "throw": "exceptions",
    "mutable": "mutable members",
    "typeid": "RTTI (typeid)", "dynamic_cast": "RTTI (dynamic_cast)", "new": "new and delete",
    "delete": "new and delete",
    "public": "classes with access specifiers", "private": "classes with access specifiers",
    "protected": "classes with access specifiers", "friend": "friend declarations",
    "goto": "goto", "concept": "concepts", "requires": "concepts", "co_await": "coroutines",
    "decltype": "decltype", "thread_local": "thread_local",
}


def unsupported_construct(tokens: list, at: Token):
    """(feature, token) for the C++ construct outside the subset that a syntax error at
    `at` comes from, or None: a word of UNSUPPORTED_WORDS before it; `(` inside a struct
    body (a member function or constructor); `[` where an expression starts (a lambda);
    `...` in a template's parameters (a variadic template)."""
    try:
        end = tokens.index(at)
    except ValueError:
        return None
    for tok in tokens[:end + 1]:
        if tok[0] == "IDENTIFIER" and tok[1] in UNSUPPORTED_WORDS:
            return UNSUPPORTED_WORDS[tok[1]], tok
    if at[1] == "[" and end > 0 and tokens[end - 1][1] in ("=", "(", ",", "return"):
        return "lambdas", at
    if at[1] == "..." or (end + 1 < len(tokens) and tokens[end + 1][1] == "..." and tokens[end - 1][1] in
                          ("typename", "class")):
        return "variadic templates", at
    depth = []      # the braces open at `at`: is the innermost a struct's body?
    for k in range(end):
        value = tokens[k][1]
        if value == "{":
            depth.append(k >= 2 and (tokens[k - 2][1] in ("struct", "class", "union") or
                                     tokens[k - 1][1] in ("struct", "class", "union")))
        elif value == "}" and depth:
            depth.pop()
    if depth and depth[-1] and at[1] == "~":
        return "destructors", at
    if depth and depth[-1]:     # in a struct body: a `(` before the member's end is a function
        for tok in tokens[end:end + 64]:
            if tok[1] in (";", "{", "}"):
                break
            if tok[1] == "(":
                return "member functions and constructors", at
    if at[1] == ":" and end > 0 and tokens[end - 1][0] in ("TYPE_NAME", "IDENTIFIER") and \
            any(t[1] in ("struct", "class") for t in tokens[max(0, end - 3):end]):
        return "inheritance", at
    return None


def _direct_callback(callback, size: int):
    """Lark's rule callback, without its generic child filter: the filter loops over
    (index, expand, add_none) triples on every reduction; this is one function written
    for the rule (`_rule_function`) that lists the kept children (and the `[x]`
    placeholders' Nones), splices inlined rules' lists in, and passes the list on --
    or, for an inlined rule, is the list."""
    kind = type(callback).__name__
    if kind not in ("ChildFilterLALR", "ChildFilterLALR_NoPlaceholders"):
        if kind == "ExpandSingleChild" and size > 1:    # (never one child: the rule's builder)
            callback = callback.node_builder
        build = _tree_builder(callback)
        return list if build is _inlined else build     # (a copy of the fresh list, made in C)
    entries = [(entry[0], entry[1], entry[2] if len(entry) > 2 else 0) for entry in callback.to_include]
    trailing = getattr(callback, "append_none", 0)
    build = callback.node_builder
    # A `?rule` (Lark's ExpandSingleChild): one kept child is the value; the test is
    # written into the rule function, or left out where the count of kept is known.
    single = type(build).__name__ == "ExpandSingleChild"
    if single:
        build = build.node_builder
    build = _tree_builder(build)
    if not single and not trailing and [(index, expand, nones) for index, expand, nones in entries] == \
            [(k, False, 0) for k in range(size)]:
        # every child, in order (`children` is a fresh list already)
        return list if build is _inlined else build
    return _rule_function(entries, trailing, build, single)


def _rule_function(entries: list, trailing: int, build, single: bool = False):
    """The children a rule keeps, as one list display (`[children[0], None,
    *children[2]]`: a `[x]` placeholder's None, an inlined rule's list spliced), then
    the rule's builder.  A left-recursive list (`items: items "," item`, the first entry
    an inlined list) grows in place, as with Lark's own filter for LALR."""
    first, first_expand, first_nones = entries[0] if entries else (0, False, 0)
    rest = entries[1:]
    if first_expand and not first_nones and not trailing and not any(e or n for _, e, n in rest):
        lines = [f"    kept = children[{first}]"]
        lines += [f"    kept.append(children[{index}])" for index, _, _ in rest]
    else:
        items = []
        for index, expand, nones in entries:
            items += ["None"] * nones
            items.append(f"*children[{index}]" if expand else f"children[{index}]")
        items += ["None"] * trailing
        lines = [f"    kept = [{', '.join(items)}]"]
    kept_count = None if any(expand for _, expand, _ in entries) else \
        len(entries) + sum(nones for _, _, nones in entries) + trailing
    if build is _inlined:
        lines.append("    return kept")
    elif single and kept_count == 1:
        lines.append("    return kept[0]")
    elif single and kept_count is None:
        lines.append("    return kept[0] if len(kept) == 1 else build(kept)")
    else:
        lines.append("    return build(kept)")
    namespace = {"build": build}
    exec("def rule_function(children):\n" + "\n".join(lines), namespace)
    return namespace["rule_function"]


def _inlined(children: list) -> list:
    """The value of an inlined rule: its children, which the rule using it splices in."""
    return children


def _tree_builder(builder):
    """A rule without a BuildAst method builds the Tree that Transformer.__default__
    would, without its two call layers; an inlined rule (`_rule`, Lark's `__x_star`
    repetitions) just its list of children."""
    if isinstance(builder, partial) and builder.func.__name__ == "default_callback":
        name = builder.args[0]
        if name.startswith("_"):
            return _inlined
        return lambda children: Tree(name, children)
    return builder


_PARSER: Parser | None = None


def build_lark() -> Lark:
    """Lark's LALR parser of cuda.lark, whose tables and callbacks Parser runs."""
    return Lark(grammar_path().read_text(), parser="lalr", lexer="basic", transformer=BuildAst(),
                maybe_placeholders=True, cache=True)


def get_parser() -> Parser:
    """The parser, built once per process; Lark caches its LALR tables on disk."""
    global _PARSER
    if _PARSER is None:
        _PARSER = Parser(build_lark())
    return _PARSER


def parse(text: str, filename: str, source: str | None = None) -> A.TranslationUnit:
    """Parse preprocessed text; `source` (the original text) is kept for error carets."""
    try:
        unit = get_parser().parse(text)
    except SyntaxErrorAt as exc:
        diag = Diagnostic(exc.message, SourceLoc(filename, exc.line, exc.col))
        raise CompileError([diag], source if source is not None else text) from None
    unit.filename = filename
    return unit
