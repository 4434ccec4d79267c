"""SASS IR: machine instructions with their operands split into what they write and read.

Registers start virtual (numbered per function, `virtual=True`) after instruction
selection and become physical in register allocation.  Operands print in the order
cuobjdump prints them: `dsts` then `srcs` (ISETP's `P0, PT` are both destinations;
STG's `[R6.64], R9` are both sources).  `Control` is the scheduling word that
ptxas's scheduler sets and the hardware obeys.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Union

# Register numbers that name a zero / true register in each file.
RZ, PT, URZ, UPT = 255, 7, 63, 7
ZERO_REG = {"R": RZ, "P": PT, "UR": URZ, "UP": UPT}  # convergence barriers (B0..B15) have none


@dataclass(frozen=True, slots=True)
class Reg:
    """A register operand.  `width` counts 32-bit registers (2 for a 64-bit value,
    printed `.64` inside an address); neg/abs/inv are operand modifiers
    (`-R2`, `|R2|`, `!P0`)."""
    file: str            # 'R', 'P', 'UR', 'UP', 'B'
    num: int
    virtual: bool = False
    width: int = 1
    neg: bool = False
    abs: bool = False
    inv: bool = False
    sel: str = ""        # a half or scale selector printed after the name: `.H0_H0`, `.X4`
    is_zero: bool = field(init=False, repr=False, compare=False)   # see __post_init__

    def __post_init__(self):
        # RZ, PT, URZ, UPT (read as constants): asked far more often than a register is
        # made, so computed once here.  A field left out of __init__, equality, hashing
        # and repr.  (Slots, and object.__setattr__ as the generated __init__ stores
        # the fields: an own __init__ writing self.__dict__ made every later attribute
        # read of a register slower.)
        object.__setattr__(self, "is_zero", not self.virtual and self.num == ZERO_REG.get(self.file))

    def key(self) -> tuple:
        """Identity of the value, ignoring operand modifiers."""
        return (self.file, self.num, self.virtual)

    def plain(self) -> "Reg":
        return replace(self, neg=False, abs=False, inv=False, sel="")


def R(num: int, width: int = 1) -> Reg:
    return Reg("R", num, width=width)


def P(num: int) -> Reg:
    return Reg("P", num)


def UR(num: int, width: int = 1) -> Reg:
    return Reg("UR", num, width=width)


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate: `bits` is the raw value as encoded; `kind` says how it prints
    ('int', 'f32' or 'f64')."""
    bits: int
    kind: str = "int"


@dataclass(frozen=True, slots=True)
class CBank:
    """A constant-bank operand `c[bank][offset]`, possibly negated or absolute
    (`-c[0x0][0x160]`, `|c[0x0][0x160]|` in float instructions)."""
    bank: int
    offset: int
    neg: bool = False
    abs: bool = False
    index: "Reg | None" = None   # `c[0x3][R8+0x100]`, `c[0x3][UR4]`
    inv: bool = False            # `~c[0x0][0x164]`: the bitwise complement (IMAD.X, IADD3.X)


@dataclass(frozen=True, slots=True)
class Mem:
    """A memory address `[base.64+ubase+offset]`; base width 2 prints `.64`."""
    base: Reg | None
    offset: int = 0
    ubase: Reg | None = None
    desc: Reg | None = None      # the memory descriptor (UR4) that `.E` accesses encode but never print


@dataclass(frozen=True, slots=True)
class SpecialReg:
    name: str  # 'SR_CTAID.X', 'SR_TID.X', 'SR_LANEID', ...


@dataclass(frozen=True, slots=True)
class Target:
    """A branch target: a label before layout, an address after it."""
    label: str | None = None
    addr: int | None = None


Operand = Union[Reg, Imm, CBank, Mem, SpecialReg, Target]


@dataclass
class Control:
    """The scheduling word (bits 105..125): stall cycles, the yield bit as encoded,
    the scoreboard set on write and on read (7 = none), the mask of scoreboards
    waited on before issue, and the operand-reuse flags (bit 0 = first source slot)."""
    stall: int = 15
    yield_bit: int = 0
    wbar: int = 7
    rbar: int = 7
    wait: int = 0
    reuse: int = 0

    def pack(self) -> int:
        return (self.stall | self.yield_bit << 4 | self.wbar << 5 | self.rbar << 8
                | self.wait << 11 | self.reuse << 17)

    @classmethod
    def unpack(cls, value: int) -> "Control":
        return cls(value & 0xF, (value >> 4) & 1, (value >> 5) & 7, (value >> 8) & 7,
                   (value >> 11) & 0x3F, (value >> 17) & 0xF)


@dataclass
class Instr:
    op: str                                   # 'IMAD'
    mods: tuple[str, ...] = ()                # ('WIDE',) -> IMAD.WIDE
    dsts: list = field(default_factory=list)  # operands written
    srcs: list = field(default_factory=list)  # operands read
    pred: Reg | None = None                   # guard: @P0 / @!P0 (inv)
    ctrl: Control = field(default_factory=Control)
    comment: str = ""                         # why it exists (shown by --print-after)

    @property
    def name(self) -> str:
        return ".".join((self.op,) + tuple(self.mods))

    @property
    def operands(self) -> list:
        return list(self.dsts) + list(self.srcs)


@dataclass
class Block:
    label: str
    instrs: list[Instr] = field(default_factory=list)


@dataclass
class Function:
    """A kernel in SASS IR: basic blocks in layout order plus what the cubin needs."""
    name: str
    blocks: list[Block] = field(default_factory=list)
    params: list[tuple[int, int]] = field(default_factory=list)  # (offset, size) per parameter
    param_base: int = 0x160
    arch: str = "sm_89"        # the target: its instruction table decides what is encodable
    num_regs: int = 0          # after allocation: registers per thread (EIATTR_REGCOUNT)
    next_vreg: dict = field(default_factory=dict)
    # The module's variables and their layout (ptxc.lower.select_instrs.ModuleVars) that
    # the code was selected against: the cubin must place them where it says.
    module_vars: object = None

    def instrs(self):
        """Every instruction, in layout order (lazily, block by block, as a generator
        with `yield from block.instrs` would: each block's list is read on reaching it)."""
        return chain.from_iterable(block.instrs for block in self.blocks)

    def new_vreg(self, file: str = "R", width: int = 1) -> Reg:
        n = self.next_vreg.get(file, 0)
        self.next_vreg[file] = n + width
        return Reg(file, n, virtual=True, width=width)
