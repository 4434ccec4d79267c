"""select_instrs: PTX IR function -> SASS IR function with virtual registers.

Expects: a parsed PTX function whose registers are all declared.
Guarantees: one SASS block per PTX label (the entry block first, named after the
function); every PTX register is one virtual register (width 2 for 64-bit types);
parameters are read as constant-bank operands c[0x0][param_base+offset] through
`MOV v, c[..]` (fold_constants removes the MOVs); special registers come through
S2R, or through c[0x0][..] where the driver puts them in constant bank 0 (blockDim,
gridDim).  Some results are pseudo-instructions that later passes must remove:
CVTA (fold_cvta), IADD.64 and 64-bit MOV (expand_wide_ops).

Selection is a table of rules, most specific first: a regular expression over the
PTX opcode and a builder that emits SASS.  An opcode no rule matches is an
"unsupported PTX instruction" error at its line and column.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..diagnostics import CompileError, Diagnostic, SourceLoc
from ..ptx import ir as ptx
from ..sass.ir import Block, CBank, Function, Imm, Instr, Mem, P, Reg, SpecialReg, Target, RZ, PT
from .vregs import half

# Constant bank 0 as the driver fills it on sm_89 (measured from nvcc's SASS).
CBANK0_SREGS = {
    "%ntid.x": 0x0, "%ntid.y": 0x4, "%ntid.z": 0x8,
    "%nctaid.x": 0xC, "%nctaid.y": 0x10, "%nctaid.z": 0x14,
}
S2R_SREGS = {
    "%tid.x": "SR_TID.X", "%tid.y": "SR_TID.Y", "%tid.z": "SR_TID.Z",
    "%ctaid.x": "SR_CTAID.X", "%ctaid.y": "SR_CTAID.Y", "%ctaid.z": "SR_CTAID.Z",
    "%laneid": "SR_LANEID",
}
PARAM_BASE = {"sm_89": 0x160, "sm_90": 0x210}

ISETP_CMP = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE",
             "lo": "LT", "ls": "LE", "hi": "GT", "hs": "GE"}


class Unsupported(Exception):
    pass


@dataclass
class Rule:
    pattern: str                      # regular expression over the whole PTX opcode
    build: Callable                   # (selector, ptx instr) -> None, emits SASS
    why: str                          # one line: what this rule lowers and why so

    def matches(self, opcode: str) -> bool:
        return re.fullmatch(self.pattern, opcode) is not None


class Selector:
    """Maps PTX registers to virtual SASS registers and collects the emitted code."""

    def __init__(self, ptx_func: ptx.Function, arch: str):
        self.ptx_func = ptx_func
        self.func = Function(name=ptx_func.name, param_base=PARAM_BASE.get(arch, 0x160))
        self.values: dict[str, Reg] = {}
        self.param_offsets = self._layout_params(ptx_func.params)
        self.block = Block(ptx_func.name)
        self.func.blocks.append(self.block)

    def _layout_params(self, params) -> dict[str, int]:
        """Parameters at their natural alignment, as the CUDA ABI packs them."""
        offsets, cursor = {}, 0
        for param in params:
            align = param.align or _type_size(param.type)
            cursor = (cursor + align - 1) // align * align
            offsets[param.name] = cursor
            self.func.params.append((cursor, param.size))
            cursor += param.size
        return offsets

    def reg(self, op: ptx.Reg) -> Reg:
        if op.name not in self.values:
            ptx_type = self.ptx_func.reg_type(op) or ".b32"
            file = "P" if ptx_type == ".pred" else "R"
            width = 2 if _type_size(ptx_type) == 8 else 1
            self.values[op.name] = self.func.new_vreg(file, width)
        return self.values[op.name]

    def src(self, op, type_: str | None = None):
        """A PTX source operand as a SASS operand (register, immediate, constant)."""
        if isinstance(op, ptx.Reg):
            return self.reg(op)
        if isinstance(op, ptx.Imm):
            return _immediate(op, type_)
        if isinstance(op, ptx.SpecialReg) and op.name in CBANK0_SREGS:
            return CBank(0, CBANK0_SREGS[op.name])
        raise Unsupported(f"operand {op}")

    def address(self, op: ptx.Address) -> Mem:
        if isinstance(op.base, ptx.Reg):
            return Mem(self.reg(op.base), op.offset)
        raise Unsupported("address of a symbol")

    def emit(self, op: str, mods=(), dsts=(), srcs=(), pred=None, comment="") -> Instr:
        instr = Instr(op, tuple(mods), list(dsts), list(srcs), pred, comment=comment)
        self.block.instrs.append(instr)
        return instr

    def guard(self, instr: ptx.Instr) -> Reg | None:
        if instr.guard is None:
            return None
        reg = self.reg(instr.guard)
        return Reg(reg.file, reg.num, True, inv=instr.guard_negated)

    def start_block(self, label: str):
        self.block = Block(label)
        self.func.blocks.append(self.block)


def _type_size(ptx_type: str) -> int:
    return 1 if ptx_type == ".pred" else ptx.type_size(ptx_type)


def _immediate(op: ptx.Imm, type_: str | None) -> Imm:
    import struct
    if op.type == ".f32" or (type_ == "f32" and isinstance(op.value, float)):
        return Imm(struct.unpack("<I", struct.pack("<f", op.value))[0], "f32")
    if op.type == ".f64":
        return Imm(struct.unpack("<Q", struct.pack("<d", op.value))[0], "f64")
    return Imm(int(op.value) & 0xFFFFFFFF, "int")


def _type_of(instr: ptx.Instr) -> str:
    return instr.parts[-1]


# ---- builders: one per rule --------------------------------------------------------

def ld_param(s: Selector, i: ptx.Instr):
    dst, addr = i.operands
    offset = s.param_offsets[addr.base.name] + addr.offset
    s.emit("MOV", (), [s.reg(dst)], [CBank(0, s.func.param_base + offset)], comment="parameter")


def mov_special(s: Selector, i: ptx.Instr):
    dst, sreg = i.operands
    if sreg.name in S2R_SREGS:
        s.emit("S2R", (), [s.reg(dst)], [SpecialReg(S2R_SREGS[sreg.name])])
    elif sreg.name in CBANK0_SREGS:
        s.emit("MOV", (), [s.reg(dst)], [CBank(0, CBANK0_SREGS[sreg.name])])
    else:
        raise Unsupported(f"special register {sreg.name}")


def mov(s: Selector, i: ptx.Instr):
    dst, src = i.operands
    s.emit("MOV", (), [s.reg(dst)], [s.src(src, _type_of(i))])


def mad_lo(s: Selector, i: ptx.Instr):
    d, a, b, c = i.operands
    s.emit("IMAD", (), [s.reg(d)], [s.src(a), s.src(b), s.src(c)])


def mul_lo(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    s.emit("IMAD", (), [s.reg(d)], [s.src(a), s.src(b), Reg("R", RZ)])


def mul_wide(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    mods = ("WIDE",) if i.parts[-1] == "s32" else ("WIDE", "U32")
    s.emit("IMAD", mods, [s.reg(d)], [s.src(a), s.src(b), Reg("R", RZ, width=2)])


def add_int(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    if _type_size("." + _type_of(i)) == 8:
        s.emit("IADD", ("64",), [s.reg(d)], [s.src(a), s.src(b)], comment="pseudo: expand_wide_ops")
    else:
        s.emit("IADD3", (), [s.reg(d)], [s.src(a), s.src(b), Reg("R", RZ)])


def cvta_to_global(s: Selector, i: ptx.Instr):
    d, a = i.operands
    s.emit("CVTA", ("TO", "GLOBAL"), [s.reg(d)], [s.src(a)], comment="pseudo: fold_cvta")


def setp_int(s: Selector, i: ptx.Instr):
    p, a, b = i.operands
    cmp, type_ = i.parts[1], i.parts[2]
    mods = [ISETP_CMP[cmp]]
    if type_.startswith("u") or cmp in ("lo", "ls", "hi", "hs"):
        mods.append("U32")
    mods.append("AND")
    s.emit("ISETP", mods, [s.reg(p), P(PT)], [s.src(a), s.src(b), P(PT)])


def setp_f32(s: Selector, i: ptx.Instr):
    p, a, b = i.operands
    s.emit("FSETP", (i.parts[1].upper(), "AND"), [s.reg(p), P(PT)], [s.src(a, "f32"), s.src(b, "f32"), P(PT)])


def bra(s: Selector, i: ptx.Instr):
    s.emit("BRA", (), [], [Target(i.operands[0].name)], pred=s.guard(i))


def ld_global(s: Selector, i: ptx.Instr):
    d, addr = i.operands
    s.emit("LDG", ("E",) + _width_mods(i), [s.reg(d)], [s.address(addr)])


def st_global(s: Selector, i: ptx.Instr):
    addr, v = i.operands
    s.emit("STG", ("E",) + _width_mods(i), [], [s.address(addr), s.src(v)])


def _width_mods(i: ptx.Instr) -> tuple:
    size = _type_size("." + _type_of(i))
    signed = _type_of(i).startswith("s")
    return {1: ("S8",) if signed else ("U8",), 2: ("S16",) if signed else ("U16",),
            4: (), 8: ("64",), 16: ("128",)}[size]


def add_f32(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    s.emit("FADD", (), [s.reg(d)], [s.src(a, "f32"), s.src(b, "f32")])


def mul_f32(s: Selector, i: ptx.Instr):
    d, a, b = i.operands
    s.emit("FMUL", (), [s.reg(d)], [s.src(a, "f32"), s.src(b, "f32")])


def fma_f32(s: Selector, i: ptx.Instr):
    d, a, b, c = i.operands
    s.emit("FFMA", (), [s.reg(d)], [s.src(a, "f32"), s.src(b, "f32"), s.src(c, "f32")])


def ret(s: Selector, i: ptx.Instr):
    s.emit("EXIT", (), [], [], pred=s.guard(i))


RULES = [
    Rule(r"ld\.param\.[usb](32|64)", ld_param, "parameters live in constant bank 0"),
    Rule(r"mov\.[usb]32", lambda s, i: (mov_special if isinstance(i.operands[1], ptx.SpecialReg) else mov)(s, i),
         "special registers come from S2R or constant bank 0; plain moves are copies"),
    Rule(r"mov\.(f32|[usb]64)", mov, "copies"),
    Rule(r"mad\.lo\.[su]32", mad_lo, "32-bit multiply-add is IMAD"),
    Rule(r"mul\.lo\.[su]32", mul_lo, "32-bit multiply is IMAD with RZ addend"),
    Rule(r"mul\.wide\.[su]32", mul_wide, "32x32->64 multiply is IMAD.WIDE with RZ addend"),
    Rule(r"add\.[su](32|64)", add_int, "32-bit add is IADD3; 64-bit add a pseudo expanded later"),
    Rule(r"cvta\.to\.global\.u64", cvta_to_global, "generic->global is the identity on sm_89"),
    Rule(r"setp\.(eq|ne|lt|le|gt|ge|lo|ls|hi|hs)\.[sub]32", setp_int, "integer compares are ISETP"),
    Rule(r"setp\.(eq|ne|lt|le|gt|ge)\.f32", setp_f32, "float compares are FSETP"),
    Rule(r"bra(\.uni)?", bra, "branches"),
    Rule(r"ld\.global(\.nc)?\.[usbf](8|16|32|64)", ld_global, "global loads through the 64-bit descriptor"),
    Rule(r"st\.global\.[usbf](8|16|32|64)", st_global, "global stores through the 64-bit descriptor"),
    Rule(r"add(\.rn)?\.f32", add_f32, "f32 add"),
    Rule(r"mul(\.rn)?\.f32", mul_f32, "f32 multiply"),
    Rule(r"fma\.rn\.f32", fma_f32, "f32 fused multiply-add"),
    Rule(r"ret", ret, "return from a kernel ends the thread"),
]


def select_instrs(ptx_func: ptx.Function, arch: str = "sm_89", filename: str = "<ptx>") -> Function:
    selector = Selector(ptx_func, arch)
    problems = []
    for item in ptx_func.body:
        if isinstance(item, ptx.Label):
            selector.start_block(item.name)
            continue
        rule = next((r for r in RULES if r.matches(item.opcode)), None)
        try:
            if rule is None:
                raise Unsupported(f"PTX instruction '{item.opcode}'")
            rule.build(selector, item)
            if item.base == "bra" or (item.base == "ret" and item.guard is not None):
                selector.start_block(f"{ptx_func.name}$fallthrough{len(selector.func.blocks)}")
        except Unsupported as exc:
            line, col = item.loc or (0, 0)
            problems.append(Diagnostic(f"unsupported {exc}", SourceLoc(filename, line, col)))
    if problems:
        raise CompileError(problems)
    return selector.func
