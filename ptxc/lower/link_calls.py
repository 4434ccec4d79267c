"""link_calls: put the subroutines a kernel calls after its code, and finish each call.

Each `.func` the kernel's real calls reach (transitively) is taken from the module's
subroutines (pipeline.Subroutines: lowered once per module by the same pass list with
the same options as the kernels, subroutine=True; a copy per kernel), and
its blocks are appended after the kernel's, before the padding, as ptxas places a
kernel's callees in its text section.  Labels of a subroutine get its name as a
prefix; its first block is `SUBROUTINE_LABEL + name`, the target of every CALL of it.
Before each CALL go `MOV R20, ret` and `MOV R21, 0x0`, the return address (the
offset in .text of the instruction after the CALL; RET.REL.NODEC R20 adds it to the
start of .text); the first MOV waits on every scoreboard.  The kernel's register
count covers the subroutines' and R20:R21; its stack size is its frame plus the
deepest chain of subroutine frames, or unbounded (0xffffffff, as ptxas) with recursion.

ptxc's call ABI (lower_calls) beside ptxas's, read from ptxas 13.5's code for
testsuite/isa_calls.cu: both place a kernel's callees in its own .text after the
EXIT, pass the return address in R20:R21 (`MOV R20, ret; MOV R21, 0x0;
CALL.REL.NOINC f`, `RET.REL.NODEC R20` with the immediate making it .text-relative)
and make a callee's frame with `IADD3 R1, R1, -frame`, storing R20:R21 there when
it calls.  ptxas passes arguments and results in R4, R5, ..., keeps R16.. callee-
saved (STL/LDL in the callee's frame) and saves the convergence barrier it uses
(BMOV.32.CLEAR R16, B6); a function pointer is an offset into a table in
.nv.constant2.<kernel> (`LDC.64 R8, c[0x2][R0]; CALL.REL.NOINC R8 0x0`), and it
writes a local FUNC symbol, an EIATTR_FRAME_SIZE and a .debug_frame FDE per
callee, and MIN_STACK_SIZE 0xffffffff with recursion.  ptxc passes arguments and
results on the stack, saves every value live across a call in the caller
(save_across_calls), uses no BSSY/BSYNC inside a subroutine (its divergent lanes
reconverge at the caller's join), represents a function pointer by a small id with
a compare-and-CALL dispatch, and writes only the kernel's symbols and records
(MIN_STACK_SIZE as ptxas).  Predicate and uniform values live across a call are
an error.

A module pass: pipeline.lower_module runs it on each kernel with the module's
Subroutines.

Expects: a kernel after set_control_codes, its CALLs naming SUBROUTINE_LABEL targets,
`func.call_context` (select_instrs) naming the module's functions.  Guarantees: every CALL
target is a block of the function; the padding ends the code again.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import Block, CBank, Control, Imm, Instr, Reg, Target
from .kernel_info import info_of
from .lower_calls import SUBROUTINE_LABEL, recursive_functions
from .pool_double_constants import BANK as POOL_BANK, pool_of
from .pad_text import PAD_LABEL

INSTR_BYTES = 16
ALL_SCOREBOARDS = 0x3F
UNBOUNDED_STACK = 0xFFFFFFFF


def link_calls(func, subroutines) -> None:
    context = getattr(func, "call_context", None)
    if context is None or getattr(func, "subroutine", False) or not _called(func):
        return
    subs = _callees(func, subroutines)
    pad = func.blocks.pop() if func.blocks and func.blocks[-1].label == PAD_LABEL else None
    for sub in subs.values():
        _join_constant_pool(func, sub)
        func.blocks += sub.blocks
    _set_return_addresses(func)
    if pad is not None:
        func.blocks.append(_padding(func, pad))
    info = info_of(func)
    func.num_regs = max([func.num_regs, 22 + 2] + [s.num_regs for s in subs.values()])
    info.calls = True
    if recursive_functions(context.functions) & set(subs):
        info.stack_size = UNBOUNDED_STACK
    else:
        info.stack_size = info.frame_size + _deepest(func, subs)


def _called(func) -> list[str]:
    return [op.label[len(SUBROUTINE_LABEL):] for i in func.instrs() if i.op == "CALL"
            for op in i.srcs if isinstance(op, Target) and (op.label or "").startswith(SUBROUTINE_LABEL)]


def _callees(func, subroutines) -> dict:
    """{name: its own copy of each subroutine} the kernel's calls reach, in the order found."""
    subs, todo = {}, list(dict.fromkeys(_called(func)))
    while todo:
        name = todo.pop(0)
        if name in subs:
            continue
        sub = subroutines.lower(name)
        _prefix_labels(sub, name)
        subs[name] = sub
        todo += [n for n in _called(sub) if n not in subs]
    return subs


def _join_constant_pool(func, sub) -> None:
    """A subroutine's bank-2 constants (pool_double_constants) appended to the kernel's
    (one .nv.constant2.<kernel> serves its whole .text), its c[0x2] offsets moved along."""
    words = getattr(sub, "constant_pool", None)
    if not words:
        return
    pool = pool_of(func)
    base = 8 * len(pool)
    pool += words
    for instr in sub.instrs():
        instr.srcs = [replace(op, offset=op.offset + base) if isinstance(op, CBank) and op.bank == POOL_BANK
                      else op for op in instr.srcs]


def _prefix_labels(sub, name: str) -> None:
    renamed = {b.label: f"{name}::{b.label}" for b in sub.blocks}
    renamed[sub.blocks[0].label] = SUBROUTINE_LABEL + name
    for block in sub.blocks:
        block.label = renamed[block.label]
        for instr in block.instrs:
            instr.srcs = [replace(op, label=renamed[op.label]) if isinstance(op, Target) and op.label in renamed
                          else op for op in instr.srcs]


def _set_return_addresses(func) -> None:
    for block in func.blocks:
        at = [k for k, i in enumerate(block.instrs) if i.op == "CALL"]
        for k in reversed(at):
            call = block.instrs[k]
            first = Control(stall=1, yield_bit=call.ctrl.yield_bit, wait=ALL_SCOREBOARDS)
            block.instrs[k:k] = [
                Instr("MOV", (), [Reg("R", 20)], [Imm(0, "int")], ctrl=first, comment="return address"),
                Instr("MOV", (), [Reg("R", 21)], [Imm(0, "int")], ctrl=Control(stall=1, yield_bit=call.ctrl.yield_bit),
                      comment="return address (high)")]
    addr = 0
    for block in func.blocks:
        for k, instr in enumerate(block.instrs):
            if instr.op == "CALL":
                block.instrs[k - 2].srcs = [Imm(addr + INSTR_BYTES, "int")]
            addr += INSTR_BYTES


def _padding(func, pad: Block) -> Block:
    """pad_text's trap and NOPs again, for the longer code, with the codes they had."""
    branch, nop = pad.instrs[0], pad.instrs[1]
    count = sum(len(b.instrs) for b in func.blocks) + 1
    block = Block(PAD_LABEL, [branch])
    block.instrs += [replace(nop, ctrl=replace(nop.ctrl)) for _ in range(-count % 8 + 8)]
    return block


def _deepest(func, subs: dict) -> int:
    """The most stack a chain of calls from the kernel takes (no recursion)."""
    memo = {}

    def depth(name):
        if name not in memo:
            memo[name] = info_of(subs[name]).frame_size + max([depth(n) for n in _called(subs[name])], default=0)
        return memo[name]
    return max([depth(n) for n in _called(func)], default=0)
