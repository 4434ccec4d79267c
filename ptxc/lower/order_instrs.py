"""order_instrs: list-schedule each block, so long-latency work starts early.

Top-down list scheduling over each block's dependence graph.  Among instructions
whose inputs are ready, pick the one with the longest latency path to the end of
the block (its height); ties go to the one whose first reader comes first in the
source, then to source order.  This reproduces ptxas's order on vadd: the three
address computations first, the two loads back to back, the store address between
the loads and the add that waits for them.

Dependences: register read-after-write, write-after-read and write-after-write;
memory order between a store and any other access; the global-memory descriptor
(ULDC UR4) before every `.E` access; the stack-pointer prologue stays first; a
block's terminator (branch, exit) stays last.  Commutative two-register operations
put the older value first (FADD R9, R4, R3 reads b[i] loaded first), as ptxas does.

Expects: virtual registers (before assign_regs), blocks from select_instrs.
Guarantees: each block holds the same instructions in a dependence-respecting order.
"""
from __future__ import annotations

from ..sass.ir import Mem, Reg
from .vregs import regs_in, units

MEMORY = {"LDG", "STG", "LDS", "STS", "LDL", "STL", "ATOMG", "RED", "ATOMS"}
STORES = {"STG", "STS", "STL", "ATOMG", "RED", "ATOMS"}
TERMINATORS = {"BRA", "EXIT", "RET", "CALL"}
DESCRIPTOR_READERS = {"LDG", "STG", "ATOMG", "RED"}
COMMUTATIVE = {"FADD", "FMUL", "DADD", "DMUL"}

# Rough result latencies used only to rank candidates (control codes come from
# the measured table in ptxc/sass); variable-latency producers rank high.
RANK_LATENCY = {"LDG": 30, "LDS": 24, "S2R": 20, "MUFU": 16, "ISETP": 13, "FSETP": 13,
                "ULDC": 8}  # uniform datapath -> vector consumer is slower than an ALU result
DEFAULT_LATENCY = 5


def _latency(instr) -> int:
    if instr.op == "IMAD" and "WIDE" in instr.mods:
        return 6
    return RANK_LATENCY.get(instr.op, DEFAULT_LATENCY)


def _reads(instr) -> set:
    regs = [r for op in instr.srcs for r in regs_in(op)]
    if instr.pred is not None:
        regs.append(instr.pred)
    if instr.op in DESCRIPTOR_READERS and "E" in instr.mods:
        regs.append(Reg("UR", 4, width=2))
    return {u for r in regs for u in units(r)}


def _writes(instr) -> set:
    return {u for op in instr.dsts if isinstance(op, Reg) and not op.is_zero for u in units(op)}


def _dependences(instrs) -> list[set]:
    preds = [set() for _ in instrs]
    for j, later in enumerate(instrs):
        r_j, w_j = _reads(later), _writes(later)
        for i in range(j):
            earlier = instrs[i]
            r_i, w_i = _reads(earlier), _writes(earlier)
            if (w_i & r_j) or (r_i & w_j) or (w_i & w_j):
                preds[j].add(i)
            elif earlier.op in MEMORY and later.op in MEMORY and (earlier.op in STORES or later.op in STORES):
                preds[j].add(i)
            elif later.op in TERMINATORS or earlier.comment == "stack pointer (ABI)":
                preds[j].add(i)
    return preds


def _order_operands(instr, definition_index) -> None:
    if instr.op in COMMUTATIVE and len(instr.srcs) == 2 and all(isinstance(s, Reg) for s in instr.srcs):
        a, b = instr.srcs
        if definition_index.get(b.key(), -1) < definition_index.get(a.key(), -1):
            instr.srcs = [b, a]


def order_block(instrs: list) -> list:
    preds = _dependences(instrs)
    succs = [set() for _ in instrs]
    for j, ps in enumerate(preds):
        for i in ps:
            succs[i].add(j)
    height = [0] * len(instrs)
    for i in reversed(range(len(instrs))):
        height[i] = max((_latency(instrs[i]) + height[j] for j in succs[i]), default=0)
    first_reader = [min(succs[i], default=len(instrs)) for i in range(len(instrs))]
    done, order = set(), []
    while len(order) < len(instrs):
        ready = [i for i in range(len(instrs)) if i not in done and preds[i] <= done]
        best = min(ready, key=lambda i: (-height[i], first_reader[i], i))
        done.add(best)
        order.append(best)
    return [instrs[i] for i in order]


def order_instrs(func) -> None:
    definition_index = {}
    for index, instr in enumerate(func.instrs()):
        for d in instr.dsts:
            if isinstance(d, Reg):
                definition_index.setdefault(d.key(), index)
    for block in func.blocks:
        for instr in block.instrs:
            _order_operands(instr, definition_index)
        block.instrs = order_block(block.instrs)
