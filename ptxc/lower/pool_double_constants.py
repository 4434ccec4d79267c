"""pool_double_constants: read double constants from constant bank 2, as ptxas does on sm_89.

A double whose low word is zero fits an instruction's immediate (fold_constants
makes `DMUL R2, R4, 1000`); any other one arrives in a register pair set by two
MOVs.  ptxas instead keeps such constants in the kernel's own bank,
`.nv.constant2.<kernel>`, and reads them as an operand: `DFMA R22, R20, R22,
c[0x2][0x1a0]`.  That saves the two MOVs and, more, the pair of registers each
constant holds while it waits for its use (a libdevice polynomial has a dozen).

For each source of a double operation (DADD, DMUL, DFMA, DSETP) that is a virtual
pair whose halves are both constants (constant_units), the pass offers
`c[0x2][offset]` (negated or absolute as the source was) and keeps it where the
table encodes the instruction with it, in that slot or, for a commutative operation,
after swapping the first two sources (then the instruction's sources are looked
at again: the swap moved them).  Each distinct 64-bit value gets one 8-byte
slot of `func.constant_pool`, in order of first use.  MOVs nothing reads any more
are deleted.  sm_90's ptxas reads no bank 2 there (its ALU forms read constant
banks only through LDC), so the pass does nothing for sm_90.

Expects: virtual registers; 64-bit constants as two 32-bit MOVs (expand_wide_ops
ran); after fold_constants, which takes the immediate forms first.
Guarantees: same values; every operand it places is encodable; `func.constant_pool`
(a list of 64-bit words, slot k at offset 8k) holds what c[0x2] operands read.
link_calls appends a subroutine's pool to its kernel's and moves its offsets.
"""
from __future__ import annotations

from ..sass.ir import CBank, Imm, Instr, Reg
from ..sass.target import target
from .fold_constants import _swapped, constant_units, remove_dead_moves
from .vregs import keeps_operation

BANK = 2
DOUBLE_OPS = {"DADD", "DMUL", "DFMA", "DSETP"}
def pool_double_constants(func) -> None:
    if not target(func.arch).double_pool:
        return
    constants = constant_units(func)
    if not constants:
        return
    pool = pool_of(func)
    slots = {value: k for k, value in enumerate(pool)}
    placed = False
    for block in func.blocks:
        for n, instr in enumerate(block.instrs):
            if instr.op not in DOUBLE_OPS:
                continue
            while True:     # again after each placement: a swap moves the other sources
                trial, value = _place_one(instr, constants, slots, len(pool), func.arch)
                if trial is None:
                    break
                if value not in slots:
                    slots[value] = len(pool)
                    pool.append(value)
                block.instrs[n] = instr = trial
                placed = True
    if placed:
        remove_dead_moves(func, set(constants))


def _place_one(instr: Instr, constants: dict, slots: dict, free: int, arch: str):
    """(instr with one more constant source read from the pool, its value), or
    (None, None) when no constant source of `instr` can be; `free`: the next slot."""
    for slot, src in enumerate(instr.srcs):
        value = _double(src, constants)
        if value is None:
            continue
        operand = CBank(BANK, 8 * slots.get(value, free), neg=src.neg, abs=src.abs)
        trial = _with(instr, slot, operand)
        if not keeps_operation(instr, trial, arch):
            trial = _swapped(trial)
            if trial is None or not keeps_operation(instr, trial, arch):
                continue
        return trial, value
    return None, None


def pool_of(func) -> list[int]:
    """The function's bank-2 words (made empty on first use)."""
    if getattr(func, "constant_pool", None) is None:
        func.constant_pool = []
    return func.constant_pool


def _double(src, constants: dict) -> int | None:
    """The 64-bit value of a virtual pair both of whose halves are MOVed constants."""
    if not (isinstance(src, Reg) and src.virtual and src.file == "R" and src.width == 2) or src.inv:
        return None
    lo, hi = (constants.get(("R", src.num + k, True)) for k in range(2))
    if not (isinstance(lo, Imm) and isinstance(hi, Imm)):
        return None
    return (hi.bits & 0xFFFFFFFF) << 32 | (lo.bits & 0xFFFFFFFF)


def _with(instr: Instr, slot: int, value) -> Instr:
    srcs = list(instr.srcs)
    srcs[slot] = value
    return Instr(instr.op, instr.mods, list(instr.dsts), srcs, instr.pred, instr.ctrl, instr.comment)
