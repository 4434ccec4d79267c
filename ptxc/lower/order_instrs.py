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

Register pressure: once more than PRESSURE_LIMIT of the block's values are in flight,
what frees registers goes first.  Where the schedule still holds PRESSURE_MARGIN
more values at its peak than the source order does (fe_int_types computed sixteen
results first and stored them last: 35 where the PTX order needs 23), the block is
scheduled again by height under a cap at that level: a pick that would go above it
gives way to the first instruction, in source order, that adds no register.

Expects: virtual registers (before assign_regs), blocks from select_instrs.
Guarantees: each block holds the same instructions in a dependence-respecting order.
"""
from __future__ import annotations

import heapq
from collections import Counter
from itertools import chain

from ..sass.ir import Mem, Reg
from .vregs import regs_in, units

MEMORY = {"LDG", "STG", "LDS", "STS", "LDL", "STL", "ATOMG", "RED", "REDG", "ATOMS", "LD", "ST", "ATOM"}
STORES = {"STG", "STS", "STL", "ATOMG", "RED", "REDG", "ATOMS", "ST", "ATOM"}
TERMINATORS = {"BRA", "EXIT", "RET", "CALL", "BREAK", "BSYNC"}
DESCRIPTOR_READERS = {"LDG", "STG", "ATOMG", "RED", "REDG", "LD", "ST", "ATOM"}
# Nothing moves across these: barriers, fences, warp synchronization, and the
# warp-wide operations (which must see the same set of threads as the PTX says).
FENCES = {"BAR", "MEMBAR", "ERRBAR", "CCTL", "WARPSYNC", "B2R", "BPT", "NANOSLEEP", "BSSY",
          "SHFL", "VOTE", "VOTEU", "MATCH", "REDUX", "FCHK"}
COMMUTATIVE = {"FADD", "FMUL", "DADD", "DMUL"}
PROLOGUE = {"stack pointer (ABI)", "stack frame (ABI)"}

# Rough result latencies used only to rank candidates (control codes come from
# the measured table in ptxc/sass); variable-latency producers rank high.
RANK_LATENCY = {"LDG": 30, "LD": 30, "LDL": 30, "LDS": 24, "LDC": 20, "S2R": 20, "SHFL": 24, "MUFU": 16,
                "I2F": 16, "F2I": 16, "F2F": 16, "FRND": 16, "POPC": 16, "FLO": 16, "BREV": 16,
                "DADD": 10, "DMUL": 10, "DFMA": 10, "DSETP": 14, "ISETP": 13, "FSETP": 13,
                "ULDC": 8}  # uniform datapath -> vector consumer is slower than an ALU result
DEFAULT_LATENCY = 5


def _latency(instr) -> int:
    if instr.op == "IMAD" and "WIDE" in instr.mods:
        return 6
    return RANK_LATENCY.get(instr.op, DEFAULT_LATENCY)


def _reads(instr) -> set:
    out = set()
    for op in instr.srcs:
        if isinstance(op, Reg) and op.width == 1:   # most operands (regs_in's test, no list)
            if not op.is_zero:
                out.add((op.file, op.num, op.virtual))
            continue
        for r in regs_in(op):
            out.update(units(r))
    if instr.pred is not None:
        out.update(units(instr.pred))
    if instr.op in DESCRIPTOR_READERS and "E" in instr.mods:
        out.update(units(Reg("UR", 4, width=2)))
    return out


def _writes(instr) -> set:
    return {u for op in instr.dsts if isinstance(op, Reg) and not op.is_zero for u in units(op)}


def _dependences(instrs, reads: list, writes: list) -> list[set]:
    """For each instruction, the earlier ones it must stay after: those whose registers
    it reads, writes or overwrites (or that read what it writes), memory accesses
    either side of a store, everything before a terminator, the prologue, fences.
    Built from per-unit indexes, so a long block costs what its dependences cost.
    reads / writes: each instruction's units (_reads, _writes)."""
    preds = [set() for _ in instrs]
    writers: dict = {}            # unit -> indices of earlier instructions writing it
    readers: dict = {}            # unit -> indices of earlier instructions reading it
    memory, stores, fences, prologue = [], [], [], []
    for j, later in enumerate(instrs):
        r_j, w_j = reads[j], writes[j]
        mine = preds[j]
        for u in r_j:
            mine.update(writers.get(u, ()))
        for u in w_j:
            mine.update(writers.get(u, ()))
            mine.update(readers.get(u, ()))
        if later.op in TERMINATORS or later.op in FENCES:
            mine.update(range(j))
        else:
            mine.update(prologue)
            mine.update(fences)
            if later.op in MEMORY:
                mine.update(memory if later.op in STORES else stores)
        for u in r_j:
            readers.setdefault(u, []).append(j)
        for u in w_j:
            writers.setdefault(u, []).append(j)
        if later.op in MEMORY:
            memory.append(j)
            if later.op in STORES:
                stores.append(j)
        if later.op in FENCES:
            fences.append(j)
        if later.comment in PROLOGUE:
            prologue.append(j)
    return preds


def _order_operands(instr, definition_index) -> None:
    if instr.op in COMMUTATIVE and len(instr.srcs) == 2 and all(isinstance(s, Reg) for s in instr.srcs):
        a, b = instr.srcs
        if definition_index.get(b.key(), -1) < definition_index.get(a.key(), -1):
            instr.srcs = [b, a]


def order_block(instrs: list) -> list:
    reads, writes = [_reads(i) for i in instrs], [_writes(i) for i in instrs]
    preds = _dependences(instrs, reads, writes)
    succs = [set() for _ in instrs]
    for j, ps in enumerate(preds):
        for i in ps:
            succs[i].add(j)
    height = [0] * len(instrs)
    for i in reversed(range(len(instrs))):
        if succs[i]:
            height[i] = _latency(instrs[i]) + max(height[j] for j in succs[i])
    first_reader = [min(succs[i], default=len(instrs)) for i in range(len(instrs))]
    graph = (reads, writes, preds, succs, height, first_reader)
    order, peak = _list_schedule(*graph)
    if len(order) > PRESSURE_LIMIT:
        # Hoisting by height can hold many more values than the source order did
        # (fe_int_types: sixteen results computed first, stored last: 35 units live
        # where the PTX order needs 23).  Then schedule again under a cap.
        cap = _peak(reads, writes, range(len(instrs))) + PRESSURE_MARGIN
        if peak > max(cap, PRESSURE_LIMIT):
            order, _ = _list_schedule(*graph, cap=cap)
    return [instrs[i] for i in order]


def _list_schedule(reads, writes, preds, succs, height, first_reader, cap: int | None = None) -> tuple:
    """The order picked by height (see the module docstring), preferring what frees
    registers once more than PRESSURE_LIMIT values are in flight.  With a cap
    instead: by height, but a pick that would take the estimated pressure above the
    cap gives way to the first instruction, in source order, that adds no register.
    Returns (order, _peak along it)."""
    pressure = _Pressure(reads, writes)
    # Ready: every predecessor scheduled (counted down as they are; the keys below
    # end in the index, so the pick does not depend on the order of `ready`).  The
    # usual key never changes, so a heap holds the ready ones by it (entries scheduled
    # by another key are dropped when they surface).
    waiting = [len(ps) for ps in preds]
    ready = {i for i in range(len(preds)) if not waiting[i]}
    heap = [(-height[i], first_reader[i], i) for i in ready]
    heapq.heapify(heap)
    order = []
    peak = 0
    while len(order) < len(preds):
        if cap is None and pressure.current > PRESSURE_LIMIT:
            # too many values in flight: prefer what frees registers over what adds them
            best = min(ready, key=lambda i: (pressure.delta(i), -height[i], first_reader[i], i))
        else:
            while heap[0][2] not in ready:
                heapq.heappop(heap)
            best = heap[0][2]
            if cap is not None and pressure.current + pressure.delta(best) > cap:
                best = min(ready, key=lambda i: (pressure.delta(i) > 0, i))
        ready.discard(best)
        order.append(best)
        pressure.schedule(best)
        if pressure.current > peak:
            peak = pressure.current
        for j in succs[best]:
            waiting[j] -= 1
            if not waiting[j]:
                ready.add(j)
                heapq.heappush(heap, (-height[j], first_reader[j], j))
    return order, peak


def _peak(reads, writes, order) -> int:
    """The most block values the _Pressure estimate holds at once along `order`."""
    pressure = _Pressure(reads, writes)
    peak = 0
    for i in order:
        pressure.schedule(i)
        peak = max(peak, pressure.current)
    return peak


# How far the scheduled order's pressure may rise above the source order's before
# the block is scheduled again under a cap at that level.
PRESSURE_MARGIN = 8


# Above this many 32-bit values defined in the block and still to be read there, the
# scheduler stops hoisting loads ahead of the work that consumes them (nbody's 64
# unrolled LDS.128 would otherwise all start first and hold 256 registers).
PRESSURE_LIMIT = 12


class _Pressure:
    """An estimate of the registers the block's own values occupy at the schedule's
    current point: each value counts from its definition to its last reader in the
    block (values read only in other blocks are not counted)."""

    def __init__(self, reads: list, writes: list):
        self.reads = reads
        self.writes = writes
        self.remaining: dict = dict(Counter(chain.from_iterable(reads)))   # unit -> reads to come
        self.live: set = set()
        self.current = 0

    def delta(self, i: int) -> int:
        freed = sum(1 for u in self.reads[i] if u in self.live and self.remaining.get(u, 0) == 1)
        added = sum(1 for u in self.writes[i] if self.remaining.get(u, 0) > 0 and u not in self.live)
        return added - freed

    def schedule(self, i: int) -> None:
        remaining, live = self.remaining, self.live
        for u in self.reads[i]:
            left = remaining[u] = remaining.get(u, 0) - 1
            if left <= 0:
                live.discard(u)
        for u in self.writes[i]:
            if remaining.get(u, 0) > 0:
                live.add(u)
        self.current = len(live)


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
