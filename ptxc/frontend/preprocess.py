"""The C preprocessor, small: comments, #define (object- and function-like, `#`, `##`,
`__VA_ARGS__`), #undef, #if/#ifdef/#ifndef/#elif/#else/#endif (`defined`), #include of
user headers (`"x.h"` beside the including file, then the -I folders) and of the system
headers a CUDA file names (known without a file: their macros are `header_macros.py`'s,
their declarations sema's builtins), `#pragma once`, #pragma, #error, and the dynamic
macros `__FILE__` and `__LINE__`.

Expects: the main file's text; `Options` (the -I folders, -D and -U of the command line).
Guarantees: every output line has an origin (`Preprocessor.locate`): a file, a line, and
for a line with macro expansions a column per output character, so that a (line, col)
the parser or sema reports in the output becomes the user's file, line and column, the
caret on the macro's name for what a macro body produced and on the argument's own text
for what came from an argument.  Without user headers the output has exactly as many
lines as the input.  Comments become spaces.  Problems are collected as Diagnostics,
never raised one at a time.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..diagnostics import Diagnostic, SourceLoc
from .header_macros import HEADER_MACROS

# ptxc's own header files (cuda_fp16.h, ...): CUDA source that the frontend parses, found
# after the -I folders.  A system header without a file here is one of HEADER_MACROS.
INCLUDE_DIR = Path(__file__).with_name("include")
MAX_INCLUDE_DEPTH = 200   # gcc's limit; an include cycle without guards stops here


@dataclass
class Options:
    """What the command line tells the preprocessor: -I DIR, -D NAME[=V], -U NAME."""
    include_dirs: list[str] = field(default_factory=list)
    defines: dict[str, str] = field(default_factory=dict)
    undefines: list[str] = field(default_factory=list)

    def nvcc_flags(self) -> list[str]:
        """The same options as nvcc spells them (for the oracle's compile of the file)."""
        flags = [f"-I{d}" for d in self.include_dirs]
        flags += [f"-D{n}={v}" for n, v in self.defines.items()]
        return flags + [f"-U{n}" for n in self.undefines]

    @staticmethod
    def from_args(args) -> "Options":
        """From argparse's -I/-D/-U lists (add_arguments)."""
        defines = dict(Options.parse_define(d) for d in (args.define or []))
        return Options(list(args.include_dirs or []), defines, list(args.undefine or []))

    @staticmethod
    def add_arguments(parser) -> None:
        parser.add_argument("-I", dest="include_dirs", action="append", metavar="DIR",
                            help="search DIR for #include files (after the including file's folder)")
        parser.add_argument("-D", dest="define", action="append", metavar="NAME[=V]",
                            help="define macro NAME (as 1, or as V)")
        parser.add_argument("-U", dest="undefine", action="append", metavar="NAME",
                            help="undefine macro NAME (also a predefined one)")

    @staticmethod
    def parse_define(text: str) -> tuple[str, str]:
        """`-D NAME` defines NAME as 1, as nvcc and gcc do; `-D NAME=V` as V."""
        name, eq, value = text.partition("=")
        return name, (value if eq else "1")


@dataclass
class Macro:
    name: str
    params: list[str] | None  # None: object-like
    body: list[str]           # tokens
    variadic: bool = False
    dynamic: bool = False     # __FILE__, __LINE__: the preprocessor's state gives the value


class _Tok(str):
    """A token of the line being expanded, with the offset in that line it came from;
    `exact` when the token is the source's own text (its characters map one to one)."""
    __slots__ = ("pos", "exact")

    @staticmethod
    def at(text: str, pos: int, exact: bool) -> "_Tok":
        tok = _Tok(text)
        tok.pos, tok.exact = pos, exact
        return tok


DYNAMIC_MACROS = ("__FILE__", "__LINE__")


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
    def __init__(self, filename: str, defines: dict[str, str] | None = None, options: Options | None = None):
        self.filename = filename
        self.options = options or Options()
        self.macros: dict[str, Macro] = {}
        self.diagnostics: list[Diagnostic] = []
        self.included: list[str] = []
        self.pragmas: list[tuple[int, str]] = []
        self.sources: dict[str, str] = {}          # every file read, for carets
        self.once: set[str] = set()                # files with #pragma once
        # Per output line: (file, line); and, for a line with macro expansions, a
        # (line, col) of its file per output character.
        self.origins: list[tuple[str, int]] = []
        self.col_maps: dict[int, list[tuple[int, int]]] = {}
        self.file = filename
        self.line = 0
        self.depth = 0
        for name in DYNAMIC_MACROS:
            self.macros[name] = Macro(name, None, [], dynamic=True)
        for name, value in (defines or {}).items():
            self.define_object(name, value)
        for name, value in self.options.defines.items():
            self.macros[name] = _object_macro(name, value)
        for name in self.options.undefines:
            self.macros.pop(name, None)

    # ---- diagnostics -------------------------------------------------------------
    def error(self, message: str, line: int, col: int = 1) -> None:
        self.diagnostics.append(Diagnostic(message, SourceLoc(self.file, line, col)))

    def define_object(self, name: str, value: str) -> None:
        self.macros[name] = _object_macro(name, value)

    # ---- locations ---------------------------------------------------------------
    @property
    def identity(self) -> bool:
        """The output's (line, col) is the main file's: nothing to translate."""
        return not self.col_maps and all(f == self.filename and line == k
                                          for k, (f, line) in enumerate(self.origins, 1))

    def locate(self, line: int, col: int) -> tuple[str, int, int]:
        """The file, line and column that output position (line, col) came from."""
        if not 1 <= line <= len(self.origins):
            return self.filename, line, col
        file, src_line = self.origins[line - 1]
        cols = self.col_maps.get(line)
        if cols:
            src_line, col = cols[min(max(col, 1), len(cols)) - 1]
        return file, src_line, col

    # ---- driver ------------------------------------------------------------------
    def run(self, source: str) -> str:
        self.out: list[str] = []
        self.process(source, self.filename)
        return "\n".join(self.out)

    def process(self, source: str, filename: str) -> None:
        """Preprocess one file's text, appending to self.out (an #include recurses)."""
        saved_file, saved_line = self.file, self.line
        self.file = filename
        self.sources[filename] = source
        out = self.out
        origins = self.origins
        text = strip_comments(source)
        if "\\\n" in text:
            text = self.join_continuations(text)
        lines = text.split("\n")
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
                self.line = lineno
                out.append("")
                origins.append((filename, lineno))
                self.directive(line, lineno, conds)
                self.file = filename
                named = not self.macros.keys().isdisjoint(words)     # (#define, #undef, #include)
                active = all(c[0] for c in conds)
                i += 1
                continue
            if not active:
                out.append("")
                origins.append((filename, lineno))
                i += 1
                continue
            if pending:
                pending.append(line)
                joined = " ".join(pending)
            else:
                joined = line
            if named and self.has_macro(joined):
                start = pending_start if pending else i
                self.line = start + 1
                expanded, complete, cols = self.expand_line(joined, start + 1)
                if not complete and i + 1 < len(lines):
                    if not pending:
                        pending = [line]
                        pending_start = i
                    i += 1
                    continue
                out.append(expanded)
                origins.append((filename, start + 1))
                if cols is not None:
                    self.col_maps[len(out)] = self.line_cols(cols, pending or [line], start + 1)
                for k in range(start + 1, i + 1):
                    out.append("")
                    origins.append((filename, k + 1))
                pending = []
            else:
                if pending:
                    out.append(joined)
                    origins.append((filename, pending_start + 1))
                    self.col_maps[len(out)] = self.line_cols(list(range(len(joined))), pending, pending_start + 1)
                    for k in range(pending_start + 1, i + 1):
                        out.append("")
                        origins.append((filename, k + 1))
                    pending = []
                else:
                    out.append(line)
                    origins.append((filename, lineno))
            i += 1
        if pending:
            self.error("unterminated macro call", pending_start + 1)
        if conds:
            self.error("unterminated #if", conds[-1][3])
        self.file, self.line = saved_file, saved_line

    @staticmethod
    def line_cols(offsets: list[int], pieces: list[str], first_line: int) -> list[tuple[int, int]]:
        """Offsets into `" ".join(pieces)` (a macro call over several lines) as (line, col)."""
        starts = []
        pos = 0
        for piece in pieces:
            starts.append(pos)
            pos += len(piece) + 1
        result = []
        k = 0
        for off in offsets:
            while k + 1 < len(starts) and off >= starts[k + 1]:
                k += 1
            while k > 0 and off < starts[k]:
                k -= 1
            result.append((first_line + k, off - starts[k] + 1))
        return result

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
            if rest and rest.split()[0] not in DYNAMIC_MACROS:
                self.macros.pop(rest.split()[0], None)
        elif name == "include":
            self.include(rest, lineno, col)
        elif name == "pragma":
            if rest.split()[:1] == ["once"]:
                self.once.add(os.path.realpath(self.file))
            else:
                self.pragmas.append((len(self.out), rest))   # the line the parser sees
        elif name == "error":
            self.error(f"#error {rest}", lineno, col)
        elif name in ("warning", "line", ""):
            return
        else:
            self.error(f"unknown preprocessor directive '#{name}'", lineno, col)

    def include(self, rest: str, lineno: int, col: int) -> None:
        m = re.match(r'"([^"]+)"|<([^>]+)>', rest)
        if not m and rest:   # #include MACRO: the expansion names the header
            expanded = "".join(self.expand(tokenize(rest), frozenset())).strip()
            m = re.match(r'"([^"]+)"|<([^>]+)>', expanded)
        if not m:
            self.error("expected a header name after #include", lineno, col)
            return
        quoted = m.group(1) is not None
        header = m.group(1) if quoted else m.group(2)
        path = self.find_header(header, quoted)
        if path is None:
            if header in HEADER_MACROS:
                self.included.append(header)
                for name, value in HEADER_MACROS[header].items():
                    if name not in self.macros:
                        self.define_object(name, value)
                return
            if quoted:
                self.error(f"cannot open include file '{header}': no such file in the including file's "
                           f"folder or the -I folders", lineno, col)
            else:
                known = sorted({h for h in HEADER_MACROS} | {p.name for p in INCLUDE_DIR.glob("*")
                                                            if p.is_file()})
                self.error(f"unsupported #include '{header}': no such file in the -I folders, and not a "
                           f"system header ptxc has ({', '.join(known)})", lineno, col)
            return
        key = os.path.realpath(path)
        if key in self.once:
            return
        if self.depth >= MAX_INCLUDE_DEPTH:
            self.error(f"#include nested too deeply (more than {MAX_INCLUDE_DEPTH} levels)", lineno, col)
            return
        try:
            text = Path(path).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            self.error(f"cannot read include file '{header}': {exc}", lineno, col)
            return
        self.included.append(header)
        if header in HEADER_MACROS:
            for name, value in HEADER_MACROS[header].items():
                if name not in self.macros:
                    self.define_object(name, value)
        self.depth += 1
        self.process(text, path)
        self.depth -= 1

    def find_header(self, header: str, quoted: bool) -> str | None:
        """`"x.h"`: the including file's folder, then -I; `<x.h>`: -I, then ptxc's own."""
        folders = []
        if quoted:
            folders.append(os.path.dirname(self.file) or ".")
        folders.extend(self.options.include_dirs)
        folders.append(str(INCLUDE_DIR))
        for folder in folders:
            candidate = os.path.join(folder, header)
            if os.path.isfile(candidate):
                return candidate if folder != str(INCLUDE_DIR) else str(Path(candidate))
        return None

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

    def expand_line(self, line: str, lineno: int) -> tuple[str, bool, list[int] | None]:
        """Expand one logical line; complete=False when a macro call's ')' is missing.
        Also returns, per output character, the offset in `line` it came from."""
        tokens = []
        pos = 0
        for text in tokenize(line):
            tokens.append(_Tok.at(text, pos, True))
            pos += len(text)
        try:
            result = self.expand(tokens, frozenset())
        except _Incomplete:
            return line, False, None
        except _BadCall as exc:
            name, want, got = exc.args
            self.error(f"macro '{name}' takes {want} argument(s), {got} given", lineno, line.find(name) + 1)
            return line, True, None
        offsets: list[int] = []
        for tok in result:
            where = getattr(tok, "pos", 0)
            if getattr(tok, "exact", False):
                offsets.extend(range(where, where + len(tok)))
            else:
                offsets.extend([where] * len(tok))
        return "".join(result), True, offsets

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
            if macro.dynamic:
                out.append(_Tok.at(self.dynamic_value(tok), getattr(tok, "pos", 0), False))
                i += 1
                continue
            if macro.params is None:
                out.extend(_placed(self.expand(macro.body, hide | {tok}), tok))
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
            out.extend(_placed(self.expand(body, hide | {tok}), tok))
            i = end
        return out

    def dynamic_value(self, name: str) -> str:
        if name == "__LINE__":
            return str(self.line)
        return '"' + self.file.replace("\\", "\\\\").replace('"', '\\"') + '"'

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


def _placed(tokens: list[str], call: str) -> list[str]:
    """What a macro call produced: tokens of its body are placed at the call's name
    (arguments' tokens keep their own places)."""
    pos = getattr(call, "pos", None)
    if pos is None:
        return tokens
    return [t if isinstance(t, _Tok) else _Tok.at(t, pos, False) for t in tokens]


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


def preprocess(source: str, filename: str, defines: dict[str, str] | None = None,
               options: Options | None = None) -> tuple[str, Preprocessor]:
    """Run the preprocessor; the caller raises on pp.diagnostics (kept with later ones).
    `defines` are the predefined macros; `options` the command line's -I/-D/-U."""
    pp = Preprocessor(filename, defines, options)
    return pp.run(source), pp
