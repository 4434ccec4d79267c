"""spill_regs: keep the general registers within budget by moving values to local memory.

The budget is 255 registers, or fewer under `.maxnreg` / `-maxrregcount`
(func.info.max_reg_count counts EIATTR_REGCOUNT, which is the highest register
plus three).  While assign_regs cannot fit the function in it, the value live the
longest is spilled: a slot in the stack frame below R1, a store after each write
(under the write's guard) and a load into a fresh short-lived register before
each read.  The frame grows by the slots; the prologue's `IADD3 R1, R1, -frame`
is adjusted or added.

Expects: the final order (after order_instrs, spill_preds), virtual registers.
Guarantees: assign_regs finds registers within the budget (or a CompileError says
the function cannot fit even with everything spilled); same values.
"""
from __future__ import annotations

import copy
from dataclasses import replace

from ..diagnostics import CompileError
from ..sass.ir import Imm, Instr, Mem, Reg, RZ
from ..sass.target import target
from .analysis import build_code, collect_values, read_regs, written_regs
from .assign_regs import assign_regs
from .kernel_info import frame_bytes, info_of
from .vregs import pressure_bound

MAX_ROUNDS = 64
SIZE_MODS = {1: (), 2: ("64",), 4: ("128",)}


def spill_regs(func) -> None:
    info = info_of(func)
    if _fits_easily(func, info.max_reg_count):
        return
    spilled = set()
    for _ in range(MAX_ROUNDS):
        trial = copy.deepcopy(func)
        try:
            assign_regs(trial)
            if info.max_reg_count is None or trial.num_regs <= info.max_reg_count:
                return
        except CompileError:
            pass
        victim = _victim(func, spilled)
        if victim is None:
            raise CompileError_("the function does not fit in the register budget even with its values in memory")
        spilled.add((victim.file, victim.first))
        _spill(func, victim)
    raise CompileError_("register spilling did not converge")


def CompileError_(message: str) -> CompileError:
    from ..diagnostics import Diagnostic
    return CompileError(Diagnostic(message))


# Registers kept in reserve for alignment (pairs, quads) and the late-read rule when
# deciding from liveness alone that the budget is safe.
SLACK = 24


def _fits_easily(func, max_reg_count) -> bool:
    """The most values live at once stays well below the budget: no spilling needed."""
    budget = (max_reg_count or target(func.arch).registers) - 3
    if pressure_bound(func, "R") + SLACK < budget:
        return True             # (first: over the corpus it decides where the count below does not)
    units = set()
    for instr in func.instrs():
        for reg in written_regs(instr) + read_regs(instr):
            if reg.virtual and reg.file == "R":
                units.update(range(reg.num, reg.num + reg.width))
    if len(units) + SLACK < budget:
        return True
    code = build_code(func, frozenset({"R"}))
    pressure = max((sum(1 for u in live if u[0] == "R") for live in code.live_out), default=0)
    return pressure + SLACK < budget


def _victim(func, spilled: set):
    """The longest-lived general-register value not spilled yet (nor a spill's own temporary)."""
    code = build_code(func, frozenset({"R"}))
    values = {v for v in collect_values(code).values() if v.file == "R"}
    best, best_span = None, 0
    for value in values:
        if (value.file, value.first) in spilled or any("spill" in code.instrs[i].comment for i, _ in value.defs):
            continue
        span = sum(1 for live in code.live_out if value.unit(0) in live)
        if span > best_span:
            best, best_span = value, span
    return best


def _spill(func, value) -> None:
    info = info_of(func)
    size = 4 * value.width
    offset = (info.frame_size + size - 1) // size * size
    info.frame_align = max(info.frame_align, size)     # the slot is as aligned as R1 is
    _set_frame(func, offset + size)
    slot = Mem(Reg("R", 1), offset)
    mods = SIZE_MODS[value.width]
    span = range(value.first, value.first + value.width)
    for block in func.blocks:
        out = []
        for instr in block.instrs:
            reads = [r for r in read_regs(instr) if r.virtual and r.file == "R" and r.num in span]
            if reads:
                temp = func.new_vreg("R", value.width)
                out.append(Instr("LDL", mods, [temp], [slot], comment="spill: reload"))
                _rename_reads(instr, value, temp)
            out.append(instr)
            if any(r.virtual and r.file == "R" and r.num in span for r in written_regs(instr)):
                whole = Reg("R", value.first, virtual=True, width=value.width)
                out.append(Instr("STL", mods, [], [slot, whole], instr.pred, comment="spill: store"))
        block.instrs = out


def _rename_reads(instr, value, temp: Reg) -> None:
    def swap(reg):
        if isinstance(reg, Reg) and reg.virtual and reg.file == "R" and value.first <= reg.num < value.first + value.width:
            return replace(reg, num=temp.num + reg.num - value.first)
        return reg
    srcs = []
    for op in instr.srcs:
        if isinstance(op, Mem):
            op = replace(op, base=swap(op.base) if op.base is not None else None,
                         ubase=swap(op.ubase) if op.ubase is not None else None)
        elif getattr(op, "index", None) is not None:
            op = replace(op, index=swap(op.index))
        else:
            op = swap(op)
        srcs.append(op)
    instr.srcs = srcs


def _set_frame(func, frame: int) -> None:
    """The frame holds `frame` bytes: info.frame_size (rounded by frame_bytes) and the
    entry's `IADD3 R1, R1, -frame` say so."""
    info = info_of(func)
    info.frame_size = frame = frame_bytes(info, frame)
    entry = func.blocks[0]
    for instr in entry.instrs:
        if instr.comment == "stack frame (ABI)":
            instr.srcs[1] = Imm(-frame & 0xFFFFFFFF, "int")
            return
    at = next((k + 1 for k, i in enumerate(entry.instrs) if i.comment == "stack pointer (ABI)"), 0)
    entry.instrs.insert(at, Instr("IADD3", (), [Reg("R", 1)], [Reg("R", 1), Imm(-frame & 0xFFFFFFFF, "int"),
                                                              Reg("R", RZ)], comment="stack frame (ABI)"))
