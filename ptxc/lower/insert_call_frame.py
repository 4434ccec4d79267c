"""insert_call_frame: a subroutine's frame, return address and epilogue (lower_calls' ABI).

At entry: `IADD3 R1, R1, -frame` (the frame: the .func's local depot, its outgoing
call buffers, spill and save slots, and 8 bytes for the return address), `STL.64
[R1+ra], R20` (the caller's R20:R21, which the subroutine's own calls overwrite),
and `ULDC.64 UR4, c[0x0][0x118]` when it touches global memory.  Before each RET:
`LDL.64 R20, [R1+ra]` and `IADD3 R1, R1, frame`.  The .func's own parameters and
results, addressed `[R1+INCOMING+k]` by select_instrs, move to `[R1+frame+k]`, the
caller's outgoing area just above this frame.

Expects: a subroutine (func.subroutine) after spill_regs: virtual registers, the
frame final but for the return address slot.  A kernel is left alone.
Guarantees: R1 is the caller's again at every RET; R20:R21 hold the return address
there; no INCOMING offset remains.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import Imm, Instr, Mem, Reg, RZ
from .insert_prologue import MEMORY_OPS, global_descriptor
from .kernel_info import frame_bytes, info_of
from .lower_calls import INCOMING, RETURN_ADDRESS

STACK_POINTER = Reg("R", 1)


def insert_call_frame(func) -> None:
    if not getattr(func, "subroutine", False):
        return
    info = info_of(func)
    ra = (info.frame_size + 7) // 8 * 8
    frame = info.frame_size = frame_bytes(info, ra + 8)
    _place_incoming(func, frame)
    entry = func.blocks[0]
    entry.instrs = [i for i in entry.instrs if i.comment != "stack frame (ABI)"]
    prologue = [_adjust(-frame, "stack frame (ABI)"),
                Instr("STL", ("64",), [], [Mem(STACK_POINTER, ra), RETURN_ADDRESS], comment="return address")]
    if any(i.op in MEMORY_OPS for i in func.instrs()):
        prologue.append(Instr("ULDC", ("64",), [Reg("UR", 4, width=2)], [global_descriptor(func.arch)],
                              comment="global memory descriptor"))
    entry.instrs[0:0] = prologue
    for block in func.blocks:
        for k in range(len(block.instrs) - 1, -1, -1):
            ret = block.instrs[k]
            if ret.op == "RET":
                block.instrs[k:k] = [
                    Instr("LDL", ("64",), [RETURN_ADDRESS], [Mem(STACK_POINTER, ra)], pred=ret.pred,
                          comment="return address"),
                    replace(_adjust(frame, "stack frame release (ABI)"), pred=ret.pred)]


def _adjust(delta: int, comment: str) -> Instr:
    return Instr("IADD3", (), [STACK_POINTER], [STACK_POINTER, Imm(delta & 0xFFFFFFFF, "int"), Reg("R", RZ)],
                 comment=comment)


def _place_incoming(func, frame: int) -> None:
    """[R1+INCOMING+k] -> [R1+frame+k]; so for an `IADD3 Rd, R1, INCOMING+k` address."""
    def moved(op):
        if isinstance(op, Mem) and op.base == STACK_POINTER and op.offset >= INCOMING:
            return replace(op, offset=op.offset - INCOMING + frame)
        if isinstance(op, Imm) and op.kind == "int" and INCOMING <= op.bits < 2 * INCOMING:
            return Imm(op.bits - INCOMING + frame, "int")
        return op
    for instr in func.instrs():
        if any(isinstance(op, Mem) for op in instr.srcs) or (
                instr.op == "IADD3" and STACK_POINTER in instr.srcs):
            instr.srcs = [moved(op) for op in instr.srcs]
