"""Parse PTX text (nvcc's or ptxc's) into PTX IR, with grammars/ptx.lark.

Guarantees: every Instr and Label carries its (line, col); a syntax error becomes a
CompileError at the offending token.  Nested `{ }` scopes are flattened into their
function, what they declare renamed (ptxc/ptx/scopes.py).  Registers are checked
against the `.reg` declarations of their function (an undeclared register is an error).
"""
from __future__ import annotations

import re
import struct
from functools import lru_cache
from pathlib import Path

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..diagnostics import CompileError, Diagnostic, SourceLoc
from . import ir
from .operand_shapes import check_operand_shapes
from .scopes import Scope, flatten_function_body, flatten_into


def grammar_path(name: str) -> Path:
    """grammars/ lives inside the installed package (wheel) or at the repository root."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "grammars" / name, here.parent / "grammars" / name):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"grammar {name} not found beside {here}")


@lru_cache(maxsize=None)
def _parser() -> Lark:
    # cache=True keeps the LALR tables in a temporary file keyed by the grammar's
    # hash: building them costs ~300 ms, loading ~20 ms.
    # The transformer runs inline, as the parser reduces (no parse tree is built); it is
    # reset before each parse (see parse_ptx).
    return Lark(grammar_path("ptx.lark").read_text(), parser="lalr", lexer="contextual",
                maybe_placeholders=True, cache=True, transformer=_TRANSFORMER)


def parse_int(text: str) -> int:
    text = text.rstrip("uU")
    neg = text.startswith("-")
    body = text[1:] if neg else text
    if body[:2] in ("0x", "0X"):
        value = int(body, 16)
    elif body[:2] in ("0b", "0B"):
        value = int(body, 2)
    elif len(body) > 1 and body.startswith("0"):
        value = int(body, 8)
    else:
        value = int(body)
    return -value if neg else value


def parse_float_bits(text: str) -> ir.Imm:
    if text[1] in "fF":
        return ir.Imm(struct.unpack("<f", struct.pack("<I", int(text[2:], 16)))[0], ".f32")
    return ir.Imm(struct.unpack("<d", struct.pack("<Q", int(text[2:], 16)))[0], ".f64")


# Words a `.param` or a variable declaration takes beside its type.
ATTRIBUTE_WORDS = frozenset({".ptr", ".global", ".shared", ".local", ".const", ".param", ".v2", ".v4", ".v8"})


def _loc(token) -> tuple[int, int]:
    return (token.line, token.column)


class _ToIR(Transformer):
    """Builds ptxc.ptx.ir nodes bottom-up; rule names match IR node names."""

    def __init__(self):
        super().__init__()
        self.scopes = 0   # nested scopes flattened so far in the current function
        self.problems: list = []   # (message, (line, col)) of declarations with an unknown type

    def start(self, items):
        module = ir.Module(functions=[], globals=[])
        for item in items:
            if isinstance(item, tuple) and item[0] == "version":
                module.version = item[1]
            elif isinstance(item, tuple) and item[0] == "target":
                module.target = item[1]
            elif isinstance(item, tuple) and item[0] == "address_size":
                module.address_size = item[1]
            elif isinstance(item, ir.Function):
                module.functions.append(item)
            elif isinstance(item, ir.Variable):
                module.globals.append(item)
        return module

    def version(self, items):
        return ("version", str(items[0]))

    def target(self, items):
        return ("target", ", ".join(str(t) for t in items))

    def address_size(self, items):
        return ("address_size", parse_int(items[0]))

    def ignored_directive(self, items):
        return None

    def attr(self, items):
        if len(items) == 2:
            return ("align", parse_int(items[1]))
        word = str(items[0])
        if word not in ATTRIBUTE_WORDS and word[1:] not in ir.TYPE_SIZES:
            self.problems.append((f"unknown type '{word}'", _loc(items[0])))
        return word

    def array_dim(self, items):
        return 0 if items[0] is None else parse_int(items[0])

    def param(self, items):
        *attrs, name, dim = items
        param = ir.Param(type="", name=str(name), array=dim)
        for attr in attrs:
            if isinstance(attr, tuple):
                param.align = attr[1]
            elif attr == ".ptr":
                param.ptr = True
            elif attr in (".global", ".shared", ".local", ".const"):
                continue  # pointee state space of a .ptr parameter
            else:
                param.type = attr
        return param

    def params(self, items):
        return [p for p in items if p is not None]

    def return_params(self, items):
        return ("returns", list(items))

    def perf_directive(self, items):
        return (str(items[0]), tuple(parse_int(t) for t in items[1:]))

    def function(self, items):
        func = ir.Function(name="", entry=True, visible=False, defined=False)
        for item in items:
            if isinstance(item, Token) and item.type == "LINKAGE":
                func.visible = func.visible or item == ".visible"
                func.extern = func.extern or item == ".extern"
                func.weak = func.weak or item == ".weak"
            elif isinstance(item, Token) and item.type == "FUNC_KIND":
                func.entry = item == ".entry"
                func.loc = _loc(item)
            elif isinstance(item, Token) and item.type == "NAME":
                func.name = str(item)
            elif isinstance(item, tuple) and item[0] == "returns":
                func.return_params = item[1]
            elif isinstance(item, tuple):
                func.directives.append(item)
            elif isinstance(item, list):
                func.params = item
            elif isinstance(item, Scope):
                body = flatten_function_body(item)
                func.defined = True
                func.regs, func.vars, func.body = body.regs, body.vars, body.items
                func.call_params, func.prototypes = body.call_params, body.prototypes
        self.scopes = 0   # scope tags restart in each function
        return func

    def body(self, items):
        """A `{ }`: its declarations and code; an inner scope is renamed and flattened."""
        scope = Scope()
        for item in items:
            if isinstance(item, Scope):
                self.scopes += 1
                flatten_into(scope, item, f"__s{self.scopes}_")
            elif isinstance(item, list):  # the RegDecls of one `.reg` line
                scope.regs += item
            elif isinstance(item, ir.Variable):
                scope.vars.append(item)
            elif isinstance(item, ir.Param):
                scope.call_params.append(item)
            elif isinstance(item, ir.CallPrototype):
                scope.prototypes.append(item)
            elif isinstance(item, (ir.Instr, ir.Label)):
                scope.items.append(item)
        return scope

    def param_decl(self, items):
        return items[0]

    def call_prototype(self, items):
        label, *rest = items
        proto = ir.CallPrototype(str(label).rstrip(":").strip())
        for item in rest:
            if isinstance(item, tuple) and item[0] == "returns":
                proto.return_params = item[1]
            elif isinstance(item, list):
                proto.params = item
        return proto

    def reg_decl(self, items):
        type_, *names = items
        if str(type_)[1:] not in ir.TYPE_SIZES:
            self.problems.append((f"unknown type '{type_}'", _loc(type_)))
        return [ir.RegDecl(str(type_), prefix, count) for prefix, count in names]

    def reg_name(self, items):
        count = None if len(items) < 2 or items[1] is None else parse_int(items[1])
        return (str(items[0]), count)

    def variable(self, items):
        linkage = [t for t in items if isinstance(t, Token) and t.type == "LINKAGE"]
        items = [t for t in items if not (isinstance(t, Token) and t.type == "LINKAGE")]
        state, *rest = items
        var = ir.Variable(state=str(state), type="", name="",
                          extern=any(t == ".extern" for t in linkage), visible=any(t == ".visible" for t in linkage))
        for item in rest:
            if isinstance(item, tuple):
                var.align = item[1]
            elif isinstance(item, Token) and item.type == "NAME":
                var.name = str(item)
            elif isinstance(item, str) and item.startswith("."):
                var.type = item
            elif isinstance(item, int):
                var.array = item
            elif isinstance(item, list):
                var.init = item
        return var

    def initializer(self, items):
        return list(items)

    def pragma(self, items):
        return None

    def loc_directive(self, items):
        return None

    def label(self, items):
        token = items[0]
        return ir.Label(str(token)[:-1], _loc(token))

    def guard(self, items):
        negated = items[0] is not None
        return (ir.Reg(str(items[1])), negated)

    def instr(self, items):
        guard, opcode, *operands = items
        operands = [op for op in operands if op is not None]
        instr = ir.Instr(str(opcode), operands, loc=_loc(opcode))
        if guard is not None:
            instr.guard, instr.guard_negated = guard
        return instr

    def reg(self, items):
        return ir.Reg(str(items[0]))

    def reg_pair(self, items):
        return ir.RegPair(ir.Reg(str(items[0])), ir.Reg(str(items[1])))

    def special(self, items):
        return ir.SpecialReg(str(items[0]))

    def not_reg(self, items):
        return ir.NotReg(ir.Reg(str(items[1])))

    def symbol(self, items):
        return ir.Symbol(str(items[0]))

    def sink(self, items):
        return ir.Symbol("_")

    def imm(self, items):
        text = str(items[0])
        if items[0].type == "FLOAT_BITS":
            return parse_float_bits(text)
        if items[0].type == "DECIMAL_FLOAT":
            return ir.Imm(float(text), ".f64")
        return ir.Imm(parse_int(text))

    def address(self, items):
        base, offset = items
        if base.type == "REG":
            base_op = ir.Reg(str(base))
        elif base.type == "NAME":
            base_op = ir.Symbol(str(base))
        else:
            return ir.Address(ir.Symbol(""), parse_int(base))
        off = 0
        if offset is not None:
            text = re.sub(r"\s+", "", str(offset))
            off = parse_int(text[1:]) * (-1 if text[0] == "-" else 1)
        return ir.Address(base_op, off)

    def vector(self, items):
        return ir.Vector(tuple(items))

    def operand_list(self, items):
        return ir.OperandList(tuple(i for i in items if i is not None))


_TRANSFORMER = _ToIR()


def _describe(exc: UnexpectedInput) -> str:
    if isinstance(exc, UnexpectedToken):
        if exc.token.type == "$END":
            return "unexpected end of file"
        return f"unexpected '{exc.token}'"
    if isinstance(exc, UnexpectedCharacters):
        return f"unexpected character '{exc.char}'"
    return "syntax error"


def check_branch_targets(func: ir.Function, filename: str) -> list[Diagnostic]:
    """A `bra` goes to a label of its own function."""
    labels = {item.name for item in func.body if isinstance(item, ir.Label)}
    problems = []
    for instr in func.instrs():
        if instr.base == "bra" and instr.operands:
            target = instr.operands[-1]
            name = target.name if isinstance(target, ir.Symbol) else str(target)
            if name not in labels:
                line, col = instr.loc or (0, 0)
                problems.append(Diagnostic(f"label '{name}' is not defined in '{func.name}'",
                                           SourceLoc(filename, line, col)))
    return problems


def check_registers(func: ir.Function, filename: str, source: str) -> list[Diagnostic]:
    """Every register an instruction names must be declared by a `.reg` of its function."""
    declared = func.reg_type
    problems = []
    for instr in func.instrs():
        regs = [instr.guard] if instr.guard else []
        for op in instr.operands:
            regs += _registers_in(op)
        for reg in regs:
            if declared(reg) is None:
                line, col = instr.loc or (0, 0)
                problems.append(Diagnostic(f"register '{reg.name}' is not declared",
                                           SourceLoc(filename, line, col)))
    return problems


PAIR_DESTINATION_OPS = ("setp", "shfl", "match")   # PTX's `a|b` destinations


def check_pair_destinations(func: ir.Function, filename: str) -> list[Diagnostic]:
    """`%r|%p` is only the destination (first operand) of setp, shfl and match."""
    problems = []
    for instr in func.instrs():
        for k, op in enumerate(instr.operands):
            if isinstance(op, ir.RegPair) and (k > 0 or instr.base not in PAIR_DESTINATION_OPS):
                line, col = instr.loc or (0, 0)
                problems.append(Diagnostic(f"'{instr.opcode}' takes no '{op.first.name}|{op.second.name}' operand",
                                           SourceLoc(filename, line, col)))
    return problems


def _registers_in(op) -> list[ir.Reg]:
    if isinstance(op, ir.Reg):
        return [op]
    if isinstance(op, ir.NotReg):
        return [op.reg]
    if isinstance(op, ir.RegPair):
        return [op.first, op.second]
    if isinstance(op, ir.Address) and isinstance(op.base, ir.Reg):
        return [op.base]
    if isinstance(op, (ir.Vector, ir.OperandList)):
        return [r for e in op.elems for r in _registers_in(e)]
    return []


def parse_ptx(text: str, filename: str = "<ptx>") -> ir.Module:
    """Parse PTX text into a Module; raise CompileError with file:line:col on bad input."""
    try:
        _TRANSFORMER.__init__()
        module = _parser().parse(text)
    except UnexpectedInput as exc:
        line = getattr(exc, "line", 0) or 0
        col = getattr(exc, "column", 0) or 0
        if isinstance(exc, UnexpectedEOF) or line <= 0:
            lines = text.splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
        raise CompileError.at(f"PTX syntax error: {_describe(exc)}", filename, line, col, text) from None
    problems = [Diagnostic(message, SourceLoc(filename, line, col))
                for message, (line, col) in _TRANSFORMER.problems]
    problems += [d for f in module.functions
                 for d in check_registers(f, filename, text) + check_pair_destinations(f, filename)
                 + check_operand_shapes(f, filename) + check_branch_targets(f, filename)]
    if problems:
        raise CompileError(problems, text)
    return module
