"""Read `cuobjdump -sass` text back into SASS IR, control words included.

`parse_cuobjdump_sass(text)` returns, per kernel, `[(addr, Instr), ...]` in address
order.  Each Instr carries the control word of its 128-bit encoding (the high
u64 that cuobjdump prints on the second line, shifted right by 41) as `ctrl`.
Operands are split into `dsts` and `srcs` by the small tables below (which
leading operands an opcode writes) and registers get their width (`IMAD.WIDE`
writes two, `DADD` reads pairs, `LDG.E.128` writes four) from the opcode and
its type modifiers.  It is what the scheduling model is learned from and tested
against; it keeps what scheduling needs (register identities, widths, reuse is
in the control word), and drops operand decorations the IR has no field for
(`.H1`, `.B2`, `.X4`, `.reuse`), so it is not a lossless round trip of the text.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, replace

from ptxc.sass.ir import Block, CBank, Control, Function, Imm, Instr, Mem, Reg, SpecialReg, Target

# --- which leading operands are destinations --------------------------------

# Opcodes that write nothing: stores, branches, barriers, fences, padding.
NO_DSTS = frozenset("""
    ST STG STS STL RED EXIT BRA BRX JMP JMX CALL RET BAR BSYNC BREAK WARPSYNC NOP
    MEMBAR DEPBAR CCTL ERRBAR YIELD KILL BPT NANOSLEEP LDGDEPBAR LDGSTS SUST SURED
    RTT ARRIVES
""".split())

# Opcodes with a fixed number of destinations other than one.
DST_COUNT = {
    "ISETP": 2, "FSETP": 2, "DSETP": 2, "HSETP2": 2, "PSETP": 2, "PLOP3": 2,
    "UISETP": 2, "UPLOP3": 2, "UPSETP": 2, "SHFL": 2,
}

# Opcodes with a second (predicate) destination only when the first is a register:
# `VOTE.ANY R4, PT, P2` writes R4 and PT, `VOTE.ALL P0, P0` writes P0 from P0.
REG_THEN_PRED = frozenset("VOTE VOTEU".split())

# Opcodes that may write a predicate before their register result
# (`LOP3.LUT P0, RZ, R9, 0x1, RZ, 0xc0, !PT`).
PRED_FIRST = frozenset("LOP3 ULOP3".split())

# Memory operations write the operands before their address (ATOMG's `PT, R2`).
DSTS_BEFORE_ADDRESS = frozenset("LD LDG LDS LDL LDC ATOM ATOMG ATOMS LDSM SULD SUATOM".split())

# Opcodes whose first operand may be followed by carry-out predicates
# (`IADD3 R0, P0, R2, R3, RZ`): those predicates are destinations too.
CARRY_OUT = frozenset("IADD3 LEA UIADD3 ULEA IMAD UIMAD".split())

# --- register widths ---------------------------------------------------------

# Opcodes whose register operands are all 64-bit pairs (predicates aside).
ALL_PAIRS = frozenset("DADD DMUL DFMA DSETP DMNMX DSET".split())

SIZE_MOD_WIDTH = {"64": 2, "128": 4, "U64": 2, "S64": 2, "F64": 2}

CONVERSIONS = frozenset("F2F I2F F2I I2I FRND F2IP I2FP".split())


def _size_width(mods) -> int:
    """Width of a memory operation's data from its size modifier (.64, .128)."""
    for mod in mods:
        if mod in ("64", "U64", "S64"):
            return 2
        if mod == "128":
            return 4
    return 1


def _conversion_widths(op: str, mods) -> tuple[int, int]:
    """(dst, src) widths of a conversion from its type modifiers.  F2F and I2I name
    the destination type first (F2F.F64.F32); I2F names a float destination and an
    integer source (I2F.F64.S64), F2I the other way round (F2I.S64.F64, F2I.F64.FLOOR
    reads a double); FRND.F64 is 64-bit on both sides."""
    types = [m for m in mods if re.fullmatch(r"[FSU](8|16|32|64)", m)]
    width = lambda t: SIZE_MOD_WIDTH.get(t, 1)
    floats = [t for t in types if t.startswith("F")]
    ints = [t for t in types if not t.startswith("F")]
    if op in ("F2F", "I2I"):
        if len(types) >= 2:
            return width(types[0]), width(types[1])
        return (width(types[0]), width(types[0])) if types else (1, 1)
    if op in ("I2F", "I2FP"):
        return max(map(width, floats), default=1), max(map(width, ints), default=1)
    if op in ("F2I", "F2IP"):
        return max(map(width, ints), default=1), max(map(width, floats), default=1)
    wide = max(map(width, types), default=1)   # FRND.F64
    return wide, wide


def _widen(reg, width: int):
    if isinstance(reg, Reg) and reg.file in ("R", "UR") and width > 1:
        return Reg(reg.file, reg.num, reg.virtual, width, reg.neg, reg.abs, reg.inv)
    return reg


def assign_widths(instr: Instr) -> None:
    """Give registers their width from the opcode (the text only shows `.64`
    inside addresses)."""
    op, mods = instr.op, instr.mods
    if op in ALL_PAIRS:
        instr.dsts = [_widen(r, 2) for r in instr.dsts]
        instr.srcs = [_widen(r, 2) for r in instr.srcs]
    elif op in ("IMAD", "UIMAD") and "WIDE" in mods:
        instr.dsts[0] = _widen(instr.dsts[0], 2)
        if len(instr.srcs) >= 3:
            instr.srcs[2] = _widen(instr.srcs[2], 2)
    elif op in CONVERSIONS:
        dst_w, src_w = _conversion_widths(op, mods)
        instr.dsts = [_widen(r, dst_w) for r in instr.dsts]
        instr.srcs = [_widen(r, src_w) for r in instr.srcs]
    elif op in ("CS2R", "ULDC", "LDC", "MOV", "UMOV") and _size_width(mods) > 1:
        instr.dsts[0] = _widen(instr.dsts[0], _size_width(mods))
    elif op == "CS2R" and "32" not in mods:
        instr.dsts[0] = _widen(instr.dsts[0], 2)
    elif op in DSTS_BEFORE_ADDRESS or op in ("ST", "STG", "STS", "STL", "RED", "REDG"):
        width = _size_width(mods)
        instr.dsts = [_widen(r, width) for r in instr.dsts]
        instr.srcs = [_widen(r, width) if not isinstance(r, Mem) else r for r in instr.srcs]


# --- operand text --------------------------------------------------------------

REG_RE = re.compile(r"(UR|UP|R|P)(Z|T|\d+)$")
SPECIAL_FLOATS = {"INF": 0x7F800000, "+INF": 0x7F800000, "-INF": 0xFF800000,
                  "QNAN": 0x7FFFFFFF, "+QNAN": 0x7FFFFFFF, "-QNAN": 0xFFFFFFFF,
                  "NAN": 0x7FFFFFFF, "+NAN": 0x7FFFFFFF, "-NAN": 0xFFFFFFFF}
ZERO_NUM = {"R": 255, "UR": 63, "P": 7, "UP": 7}


@dataclass(frozen=True)
class IndexedCBank(CBank):
    """`c[0x0][R2+0x10]`: a constant-bank read indexed by a register."""
    index: Reg | None = None


def parse_reg(text: str) -> Reg | None:
    """`R6`, `-R2.reuse`, `|R3|`, `!P0`, `RZ`, `UR4`, `R2.64`, `R0.H1` -> Reg."""
    neg = inv = absolute = False
    body = text
    if body.startswith("-"):
        neg, body = True, body[1:]
    if body.startswith("!"):
        inv, body = True, body[1:]
    if body.startswith("~"):
        inv, body = True, body[1:]
    parts = body.split(".")
    name = parts[0]
    if name.startswith("|") and name.endswith("|"):
        absolute, name = True, name[1:-1]
    elif name.startswith("|") and len(parts) > 1 and parts[-1].endswith("|"):
        absolute, name = True, name[1:]          # |R2.H1| style
    match = REG_RE.match(name)
    if not match:
        return None
    file, num = match.groups()
    number = ZERO_NUM[file] if num in ("Z", "T") else int(num)
    width = 2 if "64" in parts[1:] else 1
    return Reg(file, number, width=width, neg=neg, abs=absolute, inv=inv)


def parse_mem(text: str) -> Mem:
    """`[R4.64+0x10]`, `[UR4+0x8]`, `[R0.X4+UR4-0x4]`, `desc[UR4][R2.64]`."""
    ubase = None
    if text.startswith("desc["):
        desc, text = text[5:].split("]", 1)
        ubase = parse_reg(desc)
    inner = text.strip()[1:-1]
    base, offset = None, 0
    for sign, term in re.findall(r"([+-]?)([^+-]+)", inner):
        reg = parse_reg(term.strip())
        if reg is not None and reg.file == "UR" and ubase is None:
            ubase = reg
        elif reg is not None:
            base = reg
        else:
            value = int(term, 0)
            offset += -value if sign == "-" else value
    return Mem(base, offset, ubase)


def parse_cbank(text: str):
    match = re.fullmatch(r"cx?\[(0x[0-9a-f]+|UR\d+)\]\[([^\]]*)\](?:\.\w+)*", text)
    bank_text, addr = match.groups()
    bank = int(bank_text, 16) if bank_text.startswith("0x") else 0
    index, offset = None, 0
    for sign, term in re.findall(r"([+-]?)([^+-]+)", addr):
        reg = parse_reg(term)
        if reg is not None:
            index = reg
        else:
            value = int(term, 0)
            offset += -value if sign == "-" else value
    if index is None:
        return CBank(bank, offset)
    return IndexedCBank(bank, offset, index)


def parse_imm(text: str, op: str) -> Imm:
    if text in SPECIAL_FLOATS:
        return Imm(SPECIAL_FLOATS[text], "f32")
    if re.fullmatch(r"-?0x[0-9a-fA-F]+", text):
        value = int(text, 16)
        return Imm(value & 0xFFFFFFFF if value < 0 else value)
    value = float(text)
    if op in ALL_PAIRS:
        return Imm(struct.unpack("<Q", struct.pack("<d", value))[0] >> 32, "f64")
    return Imm(struct.unpack("<I", struct.pack("<f", value))[0], "f32")


def parse_operand(text: str, op: str):
    if "[" in text:
        bare = text.lstrip("-|~").rstrip("|")
        if re.match(r"cx?\[", bare):
            return parse_cbank(bare)
        return parse_mem(text)
    if text.startswith("SR") or text in ("PR", "SRZ") or re.fullmatch(r"U?S?B\d+", text):
        return SpecialReg(text)
    if text.startswith("{"):        # DEPBAR.LE SB0, 0x0, {1}: a list of scoreboards
        return SpecialReg(text)
    reg = parse_reg(text)
    if reg is not None:
        return reg
    return parse_imm(text, op)


# --- one instruction -----------------------------------------------------------

# Opcodes whose immediate operand is a code address (printed as a hex address).
BRANCHES = frozenset("BRA BRX JMP CALL BSSY SSY PBK PCNT BREAK RET JMXU".split())


def split_operands(text: str) -> list[str]:
    """Operands are comma-separated; `c[0x0] [0x168]` may carry a space and
    `RET.REL.NODEC R20 0x0` separates two operands by a space alone."""
    out = []
    for piece in text.split(","):
        if "[" in piece:
            out.append(piece.replace(" ", ""))
        else:
            out.extend(piece.split())
    return [p for p in out if p]


def count_dsts(op: str, operands: list) -> int:
    if op in NO_DSTS or not operands:
        return 0
    if op in DSTS_BEFORE_ADDRESS:
        for i, operand in enumerate(operands):
            if isinstance(operand, Mem):
                return i
        return 1
    if op in PRED_FIRST and isinstance(operands[0], Reg) and operands[0].file in ("P", "UP"):
        return min(2, len(operands))
    if op in DST_COUNT:
        return min(DST_COUNT[op], len(operands))
    if op in REG_THEN_PRED:
        first = operands[0]
        return 2 if isinstance(first, Reg) and first.file in ("R", "UR") and len(operands) > 2 else 1
    if op in CARRY_OUT:
        n = 1
        while (n < len(operands) and isinstance(operands[n], Reg)
               and operands[n].file in ("P", "UP") and not operands[n].inv):
            n += 1
        return n
    return 1


def parse_instr(text: str, control: int) -> Instr:
    """`@!P0 IMAD.WIDE R4, R6, R7, c[0x0][0x168]` plus its control word -> Instr."""
    text = text.strip().rstrip(";").strip()
    pred = None
    if text.startswith("@"):
        guard, text = text.split(None, 1)
        pred = parse_reg(guard[1:])
    name, _, rest = text.partition(" ")
    op, *mods = name.split(".")
    tokens = split_operands(rest)
    operands = []
    for token in tokens:
        if op in BRANCHES and re.fullmatch(r"0x[0-9a-f]+", token):
            operands.append(Target(addr=int(token, 16)))
        else:
            operands.append(parse_operand(token, op))
    n = count_dsts(op, operands)
    instr = Instr(op, tuple(mods), operands[:n], operands[n:], pred, Control.unpack(control))
    assign_widths(instr)
    return instr


# --- a whole listing -------------------------------------------------------------

FUNCTION_RE = re.compile(r"^\s*Function : (\S+)")
INSTR_RE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*/\* 0x([0-9a-f]{16}) \*/")
HIGH_RE = re.compile(r"^\s*/\* 0x([0-9a-f]{16}) \*/\s*$")


def parse_cuobjdump_sass(text: str) -> dict[str, list[tuple[int, Instr]]]:
    """Every kernel in a `cuobjdump -sass` listing -> [(address, Instr), ...]."""
    kernels: dict[str, list[tuple[int, Instr]]] = {}
    current = None
    pending = None  # (addr, text) waiting for its high word
    for line in text.splitlines():
        match = FUNCTION_RE.match(line)
        if match:
            current = kernels.setdefault(match.group(1), [])
            continue
        match = INSTR_RE.match(line)
        if match and current is not None:
            pending = (int(match.group(1), 16), match.group(2))
            continue
        match = HIGH_RE.match(line)
        if match and pending is not None:
            addr, instr_text = pending
            current.append((addr, parse_instr(instr_text, int(match.group(1), 16) >> 41)))
            pending = None
    return kernels


def reuse_slots(instr_text: str) -> list[int]:
    """Indices (among all operands as printed) carrying `.reuse` in the text."""
    text = instr_text.strip().rstrip(";")
    if text.startswith("@"):
        text = text.split(None, 1)[1]
    rest = text.partition(" ")[2]
    return [i for i, tok in enumerate(split_operands(rest)) if ".reuse" in tok]


def to_function(name: str, instrs: list[tuple[int, Instr]]) -> Function:
    """A listing kernel as an IR function: a block starts at every branch target (and
    at the entry); branch targets become labels `L_<addr>` naming those blocks."""
    targets = {s.addr for _, ins in instrs for s in ins.srcs
               if isinstance(s, Target) and s.addr is not None}
    func = Function(name)
    for addr, ins in instrs:
        if not func.blocks or addr in targets:
            func.blocks.append(Block(f"L_{addr:x}" if func.blocks or addr in targets else name))
        srcs = [Target(label=f"L_{s.addr:x}") if isinstance(s, Target) and s.addr is not None else s
                for s in ins.srcs]
        func.blocks[-1].instrs.append(replace(ins, srcs=srcs, ctrl=replace(ins.ctrl)))
    return func
