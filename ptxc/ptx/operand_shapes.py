"""How many operands each PTX instruction takes, and of which kind: checked at parse time.

The grammar reads any `opcode operand, operand, ...;`, so `add.s32 %r1, %r2;` parses.
Without this check, instruction selection would meet the missing operand and fail
inside a rule.  With it, the parser reports the instruction at its file:line:col,
as ptxas does ("Arguments mismatch for instruction 'add'").

SHAPES maps an opcode's first part to the shapes it may have: one letter per operand,
- `d` a destination register (`%r1`; `_`; `%r1|%p1` where check_pair_destinations allows it),
- `D` a destination register or vector (`{%f1, %f2}`: ld, mov),
- `x` a source value (register, immediate, special register, `!%p`, a variable's name),
- `X` a source value or vector (st, mov),
- `m` a memory address (`[%rd1+4]`, `[name]`),
- `l` a label.
An opcode missing from SHAPES is not checked here (instruction selection names it as
unsupported, or lowers what it knows).  ld and st with `.v2`/`.v4`/`.v8` take a vector
of that many elements and without it no vector.

Immediates follow ptxas: an `.s*`/`.u*` instruction takes no floating-point immediate,
an `.f*` instruction no integer one, `.b*` a float of its own width (`mov.b32 %r1,
0f3F800000`) or an integer, and an instruction without a type (`bar.sync 0`) integers.
The type is the opcode's last part (a cvt's source type is its last).
"""
from __future__ import annotations

from ..diagnostics import Diagnostic, SourceLoc
from . import ir

_UNARY = ("neg abs not cnot popc clz brev bfind sqrt rsqrt rcp ex2 lg2 sin cos tanh testp isspacep cvta")
_BINARY = "add sub mul div rem and or xor shl shr mul24 addc subc copysign"
_TERNARY = "mad fma mad24 madc selp slct bfe prmt sad shf dp4a dp2a vabsdiff4"

SHAPES: dict[str, tuple[str, ...]] = {
    **{op: ("dx",) for op in _UNARY.split()},
    **{op: ("dxx",) for op in _BINARY.split()},
    **{op: ("dxxx",) for op in _TERNARY.split()},
    "min": ("dxx", "dxxx"), "max": ("dxx", "dxxx"),
    "bfi": ("dxxxx",), "lop3": ("dxxxx",),
    "mov": ("DX",), "cvt": ("dx",),
    "setp": ("dxx", "dxxx"), "set": ("dxx", "dxxx"),
    "ld": ("Dm",), "ldu": ("Dm",), "st": ("mX",),
    "atom": ("dmx", "dmxx"), "red": ("mx",), "prefetch": ("m",),
    "bar": ("", "x", "xx", "dxx", "dxxx"), "barrier": ("", "x", "xx", "dxx", "dxxx"),
    "membar": ("",), "fence": ("",), "ret": ("",), "exit": ("",), "trap": ("",), "brkpt": ("",),
    "bra": ("l",), "nanosleep": ("x",), "activemask": ("d",),
    "vote": ("dx", "dxx"), "shfl": ("dxxx", "dxxxx"), "match": ("dxx",), "redux": ("dxx",),
}

# cvt's destination types that pack two (or four) converted values into one register.
PACKED_TYPES = frozenset({"f16x2", "bf16x2", "e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2", "ue8m0x2"})

# Opcodes whose last part must be a type (`st.param.local` names none).
TYPED = frozenset(("mov ld st add sub mul div rem min max and or xor not neg abs shl shr mad fma cvt cvta setp "
                   "selp atom red popc clz brev bfind sqrt rsqrt rcp ex2 lg2 sin cos tanh copysign bfe bfi "
                   "shf").split())

_VALUE = (ir.Reg, ir.Imm, ir.SpecialReg, ir.NotReg, ir.Symbol)
_KIND_NAMES = {"d": "a register", "D": "a register or a vector", "x": "a value", "X": "a value or a vector",
               "m": "an address ([...])", "l": "a label"}


def _fits(kind: str, op) -> bool:
    if kind == "d" or kind == "D":
        if isinstance(op, ir.Reg) or op == ir.Symbol("_"):
            return True
        if isinstance(op, ir.RegPair):
            return True          # check_pair_destinations says where a pair may stand
        return kind == "D" and isinstance(op, ir.Vector)
    if kind == "x":
        return isinstance(op, _VALUE)
    if kind == "X":
        return isinstance(op, _VALUE) or isinstance(op, ir.Vector)
    if kind == "m":
        return isinstance(op, ir.Address)
    return isinstance(op, ir.Symbol)     # "l"


def _vector_count(parts: list) -> int:
    for part in parts[1:]:
        if part in ("v2", "v4", "v8"):
            return int(part[1])
    return 0


def _immediates(op) -> list:
    if isinstance(op, ir.Imm):
        return [op]
    if isinstance(op, ir.Vector):
        return [e for e in op.elems if isinstance(e, ir.Imm)]
    return []


def shape_problem(instr: ir.Instr) -> str | None:
    """What is wrong with the instruction's operands, or None."""
    parts = instr.opcode.split(".")
    base = parts[0]
    shapes = SHAPES.get(base)
    if shapes is None:
        return None
    type_ = parts[-1]
    if base in TYPED and len(parts) > 1 and type_ not in ir.TYPE_SIZES:
        return f"'{instr.opcode}' names no type (.b32, .u64, .f32, ...) as its last part"
    ops = instr.operands
    if base == "cvt" and len(parts) > 2 and parts[-2] in PACKED_TYPES:
        shapes = ("dxx", "dxxx")       # cvt.rn.f16x2.f32 d, a, b: two values packed into one
    fitting = [s for s in shapes if len(s) == len(ops)]
    if not fitting:
        counts = sorted({len(s) for s in shapes})
        wanted = " or ".join(str(n) for n in counts)
        return f"'{instr.opcode}' takes {wanted} operand{'s' if counts[-1] != 1 else ''}, not {len(ops)}"
    shape = fitting[0]
    for k, (kind, op) in enumerate(zip(shape, ops)):
        if not _fits(kind, op):
            return f"operand {k + 1} of '{instr.opcode}' must be {_KIND_NAMES[kind]}"
    if base in ("ld", "ldu", "st"):
        data = ops[0] if base != "st" else ops[1]
        count = _vector_count(parts)
        if count and not (isinstance(data, ir.Vector) and len(data.elems) == count):
            return f"'{instr.opcode}' moves a vector of {count}: write {{...}} with {count} elements"
        if not count and isinstance(data, ir.Vector):
            return f"'{instr.opcode}' moves one value: a vector needs .v2, .v4 or .v8"
    family = "f" if type_.startswith("bf") else type_[0]
    if type_ not in ir.TYPE_SIZES:      # bar.sync, nanosleep, ...: integers only
        family = "u"
    if family in "sufb":
        for op in ops:
            if op.__class__ is ir.Reg:
                continue
            for imm in _immediates(op):
                if family == "b":      # bits: a float literal of the same width only
                    if imm.type is not None and ir.type_size(imm.type) != ir.type_size(type_):
                        return f"'{instr.opcode}' takes no {8 * ir.type_size(imm.type)}-bit floating-point immediate"
                elif (imm.type is not None) != (family == "f"):
                    kind = "floating-point" if imm.type is not None else "integer"
                    return f"'{instr.opcode}' takes no {kind} immediate"
    return None


def check_operand_shapes(func: ir.Function, filename: str) -> list[Diagnostic]:
    """A Diagnostic at every instruction whose operands do not fit its opcode."""
    problems = []
    for instr in func.instrs():
        problem = shape_problem(instr)
        if problem:
            line, col = instr.loc or (0, 0)
            problems.append(Diagnostic(problem, SourceLoc(filename, line, col)))
    return problems
