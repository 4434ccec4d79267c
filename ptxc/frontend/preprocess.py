"""The C preprocessor, small: comments, #define (object- and function-like), #undef,
#if/#ifdef/#ifndef/#elif/#else/#endif, #include of the system headers a CUDA file
names (accepted, no file read), #pragma and #error.

Guarantees: the output has exactly as many lines as the input, so a (line, col) that
the parser reports is the user's line; columns stay exact on lines without macro
expansion.  Comments become spaces.  Problems are collected as Diagnostics, never
raised one at a time.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..diagnostics import Diagnostic, SourceLoc

# Macros that a system header brings with it (the rest of a header's content, its
# functions and types, is known to sema as builtins).
HEADER_MACROS: dict[str, dict[str, str]] = {
    "stdio.h": {"NULL": "0", "EOF": "(-1)"},
    "stdlib.h": {"NULL": "0", "RAND_MAX": "2147483647", "EXIT_SUCCESS": "0", "EXIT_FAILURE": "1"},
    "stddef.h": {"NULL": "0"},
    "string.h": {"NULL": "0"},
    "limits.h": {"INT_MAX": "2147483647", "INT_MIN": "(-2147483647-1)", "UINT_MAX": "4294967295U",
                 "CHAR_BIT": "8", "LONG_MAX": "9223372036854775807L", "SHRT_MAX": "32767"},
    "float.h": {"FLT_MAX": "3.402823466e+38F", "FLT_MIN": "1.175494351e-38F", "FLT_EPSILON": "1.192092896e-07F",
                "DBL_MAX": "1.7976931348623158e+308", "DBL_EPSILON": "2.2204460492503131e-016"},
    "math.h": {"M_PI": "3.14159265358979323846", "M_E": "2.7182818284590452354", "INFINITY": "(__builtin_inff())"},
    "cuda_runtime.h": {}, "cuda.h": {}, "cuda_runtime_api.h": {}, "device_launch_parameters.h": {},
    "stdint.h": {}, "assert.h": {}, "time.h": {}, "cmath": {}, "cstdio": {"NULL": "0"},
    "cstdlib": {"NULL": "0"}, "math_constants.h": {"CUDART_PI_F": "3.141592654f"},
}
HEADER_MACROS["math.h"].pop("INFINITY")  # needs a builtin the frontend does not have yet
HEADER_MACROS["cmath"] = HEADER_MACROS["math.h"]


@dataclass
class Macro:
    name: str
    params: list[str] | None  # None: object-like
    body: list[str]           # tokens
    variadic: bool = False


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<op>\#\#|.)
""", re.X | re.S)

_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_WORD = re.compile(r"[A-Za-z_]\w*")
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w*)(.*)$")


def tokenize(text: str) -> list[str]:
    return [m.group() for m in _TOKEN.finditer(text)]


def strip_comments(source: str) -> str:
    """Comments become spaces; a block comment keeps its newlines so lines stay put."""
    if "/" not in source:
        return source

    def blank(m: re.Match) -> str:
        text = m.group()
        if text[0] in "\"'":
            return text
        if text.startswith("//"):
            return " " * len(text)
        return re.sub(r"[^\n]", " ", text)

    return _COMMENT_OR_STRING.sub(blank, source)


@lru_cache(maxsize=None)
def _object_macro(name: str, value: str) -> Macro:
    """A predefined or header macro (`__CUDACC__`, `INT_MAX`): made once per process (no
    one changes a Macro), not tokenized again for every file that includes its header."""
    return Macro(name, None, [t for t in tokenize(value) if not t.isspace()])


class Preprocessor:
    def __init__(self, filename: str, defines: dict[str, str] | None = None):
        self.filename = filename
        self.macros: dict[str, Macro] = {}
        self.diagnostics: list[Diagnostic] = []
        self.included: list[str] = []
        self.pragmas: list[tuple[int, str]] = []
        for name, value in (defines or {}).items():
            self.define_object(name, value)

    # ---- diagnostics -------------------------------------------------------------
    def error(self, message: str, line: int, col: int = 1) -> None:
        self.diagnostics.append(Diagnostic(message, SourceLoc(self.filename, line, col)))

    def define_object(self, name: str, value: str) -> None:
        self.macros[name] = _object_macro(name, value)

    # ---- driver ------------------------------------------------------------------
    def run(self, source: str) -> str:
        text = strip_comments(source)
        if "\\\n" in text:
            text = self.join_continuations(text)
        lines = text.split("\n")
        out: list[str] = []
        # Stack of (taking, taken_before, seen_else, line) per open #if.
        conds: list[list] = []
        active = True
        i = 0
        pending: list[str] = []  # a macro call whose arguments continue on later lines
        pending_start = 0
        # A line can name a macro only if the text does somewhere: where no defined macro
        # is among the text's words (most files), no line is searched for one.
        words = set(_WORD.findall(text))
        named = not self.macros.keys().isdisjoint(words)
        while i < len(lines):
            line = lines[i]
            lineno = i + 1
            stripped = line.lstrip()
            if stripped.startswith("#") and not pending:
                self.directive(line, lineno, conds)
                named = not self.macros.keys().isdisjoint(words)     # (#define, #undef, #include)
                active = all(c[0] for c in conds)
                out.append("")
                i += 1
                continue
            if not active:
                out.append("")
                i += 1
                continue
            if pending:
                pending.append(line)
                joined = " ".join(pending)
            else:
                joined = line
            if named and self.has_macro(joined):
                expanded, complete = self.expand_line(joined, lineno)
                if not complete and i + 1 < len(lines):
                    if not pending:
                        pending = [line]
                        pending_start = i
                    i += 1
                    continue
                out.append(expanded)
                out.extend("" for _ in range(len(pending) - 1 if pending else 0))
                pending = []
            else:
                if pending:
                    out.append(joined)
                    out.extend("" for _ in range(len(pending) - 1))
                    pending = []
                else:
                    out.append(line)
            i += 1
        if pending:
            self.error("unterminated macro call", pending_start + 1)
        if conds:
            self.error("unterminated #if", conds[-1][3])
        return "\n".join(out)

    @staticmethod
    def join_continuations(text: str) -> str:
        """`a \\<newline> b` becomes one line, followed by blank lines to keep the count."""
        lines = text.split("\n")
        out = []
        carry, extra = "", 0
        for line in lines:
            if line.endswith("\\"):
                carry += line[:-1]
                extra += 1
                continue
            out.append(carry + line)
            out.extend([""] * extra)
            carry, extra = "", 0
        if carry:
            out.append(carry)
        return "\n".join(out)

    # ---- directives --------------------------------------------------------------
    def directive(self, line: str, lineno: int, conds: list[list]) -> None:
        m = _DIRECTIVE.match(line)
        name, rest = m.group(1), m.group(2).strip()
        active = all(c[0] for c in conds)
        col = line.index("#") + 1
        if name in ("if", "ifdef", "ifndef"):
            if not active:
                conds.append([False, True, False, lineno])
                return
            if name == "if":
                value = self.eval_condition(rest, lineno)
            else:
                value = (rest.split()[0] in self.macros) if rest else False
                if name == "ifndef":
                    value = not value
            conds.append([value, value, False, lineno])
        elif name in ("elif", "else"):
            if not conds:
                self.error(f"#{name} without #if", lineno, col)
                return
            top = conds[-1]
            if top[2]:
                self.error(f"#{name} after #else", lineno, col)
            outer = all(c[0] for c in conds[:-1])
            if name == "else":
                top[2] = True
                top[0] = outer and not top[1]
            else:
                take = outer and not top[1] and self.eval_condition(rest, lineno)
                top[0] = take
            top[1] = top[1] or top[0]
        elif name == "endif":
            if not conds:
                self.error("#endif without #if", lineno, col)
            else:
                conds.pop()
        elif not active:
            return
        elif name == "define":
            self.define(rest, lineno)
        elif name == "undef":
            self.macros.pop(rest.split()[0] if rest else "", None)
        elif name == "include":
            self.include(rest, lineno, col)
        elif name == "pragma":
            self.pragmas.append((lineno, rest))
        elif name == "error":
            self.error(f"#error {rest}", lineno, col)
        elif name in ("warning", "line", ""):
            return
        else:
            self.error(f"unknown preprocessor directive '#{name}'", lineno, col)

    def include(self, rest: str, lineno: int, col: int) -> None:
        m = re.match(r'[<"]([^>"]+)[>"]', rest)
        if not m:
            self.error("expected a header name after #include", lineno, col)
            return
        header = m.group(1)
        if header not in HEADER_MACROS:
            self.error(f"unsupported #include '{header}': only system headers the frontend knows "
                       f"({', '.join(sorted(h for h in HEADER_MACROS if h.endswith('.h')))}) are accepted",
                       lineno, col)
            return
        self.included.append(header)
        for name, value in HEADER_MACROS[header].items():
            if name not in self.macros:
                self.define_object(name, value)

    def define(self, rest: str, lineno: int) -> None:
        m = re.match(r"([A-Za-z_]\w*)(\()?", rest)
        if not m:
            self.error("macro name must be an identifier", lineno)
            return
        name = m.group(1)
        if m.group(2):  # function-like: no space between name and '('
            close = rest.find(")", m.end())
            if close < 0:
                self.error("missing ')' in macro parameter list", lineno)
                return
            params = [p.strip() for p in rest[m.end():close].split(",") if p.strip()]
            variadic = bool(params) and params[-1] == "..."
            if variadic:
                params[-1] = "__VA_ARGS__"
            body = [t for t in tokenize(rest[close + 1:].strip())]
            self.macros[name] = Macro(name, params, _trim(body), variadic)
        else:
            self.macros[name] = Macro(name, None, _trim(tokenize(rest[m.end():].strip())))

    # ---- #if expressions ---------------------------------------------------------
    def eval_condition(self, text: str, lineno: int) -> bool:
        text = re.sub(r"\bdefined\s*\(\s*(\w+)\s*\)|\bdefined\s+(\w+)",
                      lambda m: "1" if (m.group(1) or m.group(2)) in self.macros else "0", text)
        tokens = [t for t in self.expand(tokenize(text), frozenset()) if not t.isspace()]
        try:
            value, pos = _CondParser(tokens).parse()
            return bool(value)
        except (ValueError, IndexError, ZeroDivisionError):
            self.error(f"invalid #if expression '{text.strip()}'", lineno)
            return False

    # ---- macro expansion ---------------------------------------------------------
    def has_macro(self, line: str) -> bool:
        return not self.macros.keys().isdisjoint(_WORD.findall(line))

    def expand_line(self, line: str, lineno: int) -> tuple[str, bool]:
        """Expand one logical line; complete=False when a macro call's ')' is missing."""
        tokens = tokenize(line)
        try:
            return "".join(self.expand(tokens, frozenset())), True
        except _Incomplete:
            return line, False
        except _BadCall as exc:
            name, want, got = exc.args
            self.error(f"macro '{name}' takes {want} argument(s), {got} given", lineno, line.find(name) + 1)
            return line, True

    def expand(self, tokens: list[str], hide: frozenset) -> list[str]:
        out: list[str] = []
        i = 0
        n = len(tokens)
        while i < n:
            tok = tokens[i]
            macro = self.macros.get(tok)
            if macro is None or tok in hide:
                out.append(tok)
                i += 1
                continue
            if macro.params is None:
                out.extend(self.expand(macro.body, hide | {tok}))
                i += 1
                continue
            j = i + 1
            while j < n and tokens[j].isspace():
                j += 1
            if j >= n or tokens[j] != "(":
                out.append(tok)
                i += 1
                continue
            args, end = _collect_args(tokens, j)
            body = self.substitute(macro, args, hide)
            out.extend(self.expand(body, hide | {tok}))
            i = end
        return out

    def substitute(self, macro: Macro, args: list[list[str]], hide: frozenset) -> list[str]:
        params = macro.params or []
        if len(params) == 0 and len(args) == 1 and not "".join(args[0]).strip():
            args = []
        if macro.variadic and len(args) > len(params):
            head = args[:len(params) - 1]
            tail: list[str] = []
            for k, a in enumerate(args[len(params) - 1:]):
                if k:
                    tail.append(",")
                tail.extend(a)
            args = head + [tail]
        if len(args) != len(params):
            raise _BadCall(macro.name, len(params), len(args))
        raw = {p: _trim(a) for p, a in zip(params, args)}
        expanded = {p: self.expand(a, hide) for p, a in raw.items()}
        body = macro.body
        out: list[str] = []
        k = 0
        while k < len(body):
            tok = body[k]
            if tok == "#" and k + 1 < len(body):
                nxt = _next_nonspace(body, k + 1)
                if nxt is not None and body[nxt] in raw:
                    text = "".join(raw[body[nxt]]).replace("\\", "\\\\").replace('"', '\\"')
                    out.append(f'"{text}"')
                    k = nxt + 1
                    continue
            if tok == "##":
                while out and out[-1].isspace():
                    out.pop()
                nxt = _next_nonspace(body, k + 1)
                if nxt is None:
                    k += 1
                    continue
                right = raw.get(body[nxt], [body[nxt]])
                left = out.pop() if out else ""
                out.extend(tokenize(left + "".join(right)))
                k = nxt + 1
                continue
            if tok in raw:
                nxt = _next_nonspace(body, k + 1)
                pasted = nxt is not None and body[nxt] == "##"
                out.extend(raw[tok] if pasted else expanded[tok])
            else:
                out.append(tok)
            k += 1
        return out


class _Incomplete(Exception):
    pass


class _BadCall(Exception):
    pass


def _trim(tokens: list[str]) -> list[str]:
    start, end = 0, len(tokens)
    while start < end and tokens[start].isspace():
        start += 1
    while end > start and tokens[end - 1].isspace():
        end -= 1
    return tokens[start:end]


def _next_nonspace(tokens: list[str], k: int) -> int | None:
    while k < len(tokens) and tokens[k].isspace():
        k += 1
    return k if k < len(tokens) else None


def _collect_args(tokens: list[str], open_index: int) -> tuple[list[list[str]], int]:
    depth = 0
    args: list[list[str]] = [[]]
    for k in range(open_index, len(tokens)):
        tok = tokens[k]
        if tok == "(":
            depth += 1
            if depth == 1:
                continue
        elif tok == ")":
            depth -= 1
            if depth == 0:
                return args, k + 1
        elif tok == "," and depth == 1:
            args.append([])
            continue
        args[-1].append(tok)
    raise _Incomplete()


class _CondParser:
    """Integer constant expressions of #if, by precedence climbing."""
    BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7, "<=": 7,
              ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}

    def __init__(self, tokens: list[str]):
        # Re-join two-character operators split by the tokenizer.
        merged: list[str] = []
        for tok in tokens:
            if merged and merged[-1] + tok in ("||", "&&", "==", "!=", "<=", ">=", "<<", ">>"):
                merged[-1] += tok
            else:
                merged.append(tok)
        self.tokens = merged
        self.pos = 0

    def parse(self) -> tuple[int, int]:
        value = self.ternary()
        if self.pos != len(self.tokens):
            raise ValueError("trailing tokens")
        return value, self.pos

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def ternary(self) -> int:
        cond = self.binary(1)
        if self.peek() == "?":
            self.take()
            a = self.ternary()
            if self.take() != ":":
                raise ValueError("expected ':'")
            b = self.ternary()
            return a if cond else b
        return cond

    def binary(self, min_prec: int) -> int:
        left = self.unary()
        while True:
            op = self.peek()
            prec = self.BINARY.get(op or "")
            if prec is None or prec < min_prec:
                return left
            self.take()
            right = self.binary(prec + 1)
            left = _apply(op, left, right)

    def unary(self) -> int:
        tok = self.take()
        if tok == "(":
            value = self.ternary()
            if self.take() != ")":
                raise ValueError("expected ')'")
            return value
        if tok == "!":
            return int(not self.unary())
        if tok == "-":
            return -self.unary()
        if tok == "+":
            return self.unary()
        if tok == "~":
            return ~self.unary()
        if tok[0].isdigit():
            return int(tok.rstrip("uUlL"), 0) if not tok.startswith("0") or tok in ("0",) or tok[1:2] in "xXbB" \
                else int(tok.rstrip("uUlL"), 8)
        if tok[0] == "'":
            return ord(tok[1])
        if tok[0].isalpha() or tok[0] == "_":
            return 0  # an identifier left after expansion counts as 0, as in C
        raise ValueError(f"unexpected {tok!r}")


def _apply(op: str, a: int, b: int) -> int:
    if op == "||": return int(bool(a) or bool(b))
    if op == "&&": return int(bool(a) and bool(b))
    if op == "|": return a | b
    if op == "^": return a ^ b
    if op == "&": return a & b
    if op == "==": return int(a == b)
    if op == "!=": return int(a != b)
    if op == "<": return int(a < b)
    if op == ">": return int(a > b)
    if op == "<=": return int(a <= b)
    if op == ">=": return int(a >= b)
    if op == "<<": return a << b
    if op == ">>": return a >> b
    if op == "+": return a + b
    if op == "-": return a - b
    if op == "*": return a * b
    if op == "/": return int(a / b)
    if op == "%": return a - int(a / b) * b
    raise ValueError(op)


def preprocess(source: str, filename: str, defines: dict[str, str] | None = None) -> tuple[str, Preprocessor]:
    """Run the preprocessor; the caller raises on pp.diagnostics (kept with later ones)."""
    pp = Preprocessor(filename, defines)
    return pp.run(source), pp
