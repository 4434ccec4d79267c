"""Parse preprocessed CUDA C into the AST of ptxc.frontend.ast with Lark's LALR parser.

The parser is built once per process (and its tables cached on disk by Lark), and
builds AST nodes while it parses (an inline transformer), so no parse tree is made.
A syntax error becomes a CompileError with file:line:col.
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
        return A.TemplateDecl(tok[2:], children[-1])

    def template_param(self, children):
        return None

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
                else:
                    getattr(specs, field).append(child[1][1])
            elif isinstance(child, Token):  # TYPE_NAME
                specs.type_specs.append(A.TypeNameRef(child[2:], child[1]))
            else:                           # StructSpec, EnumSpec
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
        name = children[1] if len(children) > 1 else None
        members = children[2] if len(children) > 2 else None
        return A.StructSpec(kw[2:], kw[1], name[1] if name is not None else None, members)

    def struct_body(self, children):
        return children

    def struct_member(self, children):
        specs, declarators = children
        return A.StructMember(specs.loc, specs, declarators)

    def struct_declarator_list(self, children):
        return children

    def enum_spec(self, children):
        name = children[0]
        body = children[1] if len(children) > 1 else None
        loc = _loc(name) if name is not None else (body[0].loc if body else (0, 0))
        return A.EnumSpec(loc, name[1] if name is not None else None, body)

    def enum_body(self, children):
        return children

    def enumerator(self, children):
        name, value = children
        return A.Enumerator(name[2:], name[1], value)

    # ---- declarators ------------------------------------------------------------
    def declarator(self, children):
        pointer, direct = children
        if pointer:
            return A.Declarator(direct.loc, direct.name, pointer + direct.derivations, direct.construct_args)
        return direct

    def name_declarator(self, children):
        tok = children[0]
        return A.Declarator(tok[2:], tok[1], [])

    def array_declarator(self, children):
        inner, size = children
        deriv = A.ArrayDeriv(inner.loc, size)
        return A.Declarator(inner.loc, inner.name, [deriv] + inner.derivations)

    def function_declarator(self, children):
        inner, params = children
        params, variadic = params or ([], False)
        deriv = A.FunctionDeriv(inner.loc, params, variadic)
        return A.Declarator(inner.loc, inner.name, [deriv] + inner.derivations)

    def construct_declarator(self, children):
        inner, args = children
        return A.Declarator(inner.loc, inner.name, inner.derivations, args)

    def pointer(self, children):
        derivs = []
        for child in children:
            if isinstance(child, Token):
                derivs.append(A.PointerDeriv(child[2:], []))
            else:
                derivs[-1].qualifiers.append(child[1][1])
        return derivs

    def parameter_list(self, children):
        variadic = bool(children) and isinstance(children[-1], Token)
        return ([c for c in children if not isinstance(c, Token)], variadic)

    def parameter_declaration(self, children):
        specs, declarator = children
        if declarator is None:
            declarator = A.Declarator(specs.loc, None, [])
        return A.ParameterDeclaration(specs.loc, specs, declarator)

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
        tok, cond, then, else_ = children
        return A.IfStmt(tok[2:], cond, then, else_)

    def for_stmt(self, children):
        tok, init, cond, step, body = children
        return A.ForStmt(tok[2:], init, cond, step, body)

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
        self.mark_type_names(kinds, values, type_names)
        out = list(zip(kinds, values, lines, columns))
        if error is not None:
            value, line, column = error
            what = "missing terminating '\"' character" if value == '"' else \
                "missing terminating ' character" if value == "'" else f"stray '{value}' in program"
            out.append(("$ERROR", what, line, column))
            return out
        out.append(("$END", "", len(line_texts), len(line_texts[-1]) + 1))
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
                if kinds[k] == "IDENTIFIER":
                    kinds[k] = "TYPE_NAME"
        in_typedef = False
        depth = 0
        expect_tag = False
        for k in range(first, len(kinds)):
            kind = kinds[k]
            if kind == "IDENTIFIER":
                value = values[k]
                if expect_tag:
                    expect_tag = False
                    if value in type_names:
                        kinds[k] = "TYPE_NAME"
                    else:
                        type_names.add(value)  # C++: `struct S {...}; S s;`
                elif value in type_names:
                    kinds[k] = "TYPE_NAME"
                elif in_typedef and (depth == 0 or (depth == 1 and values[k - 1] == "*")):
                    type_names.add(value)
            elif kind in _HACK_KINDS:
                if kind == "TYPEDEF":
                    in_typedef, depth = True, 0
                else:
                    expect_tag = True
            elif in_typedef:
                value = values[k]
                if value in "([{":
                    depth += 1
                elif value in ")]}":
                    depth -= 1
                elif value == ";" and depth == 0:
                    in_typedef = False


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
        for tok in self.lexer.tokens(text, set(BUILTIN_TYPE_NAMES)):
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


def get_parser() -> Parser:
    """The parser, built once per process; Lark caches its LALR tables on disk."""
    global _PARSER
    if _PARSER is None:
        lark = Lark(grammar_path().read_text(), parser="lalr", lexer="basic", transformer=BuildAst(),
                    maybe_placeholders=True, cache=True)
        _PARSER = Parser(lark)
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
