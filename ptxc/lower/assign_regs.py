"""assign_regs: virtual registers -> physical registers, choosing as ptxas does.

Expects: instructions in final order (blocks in layout order, branches naming block
labels); registers virtual except precolored physical ones (R1 the stack pointer,
UR4:UR5 the global-memory descriptor, RZ, PT).  A width-2 virtual register n is a
64-bit value whose high half may be named on its own as n+1 (width 4: a quad).
Virtual registers need not be in SSA form: a register may be written in several
places (loop counters, conditional writes), and a predicated write keeps the old
value when its guard is false.

Guarantees: every register is physical; each value sits in one register, or in an
even-aligned pair / 4-aligned quad; predicates in P0..P6; R1 is never given to a
virtual value; every read sees the value its write left (check_regs checks it);
func.num_regs is what ptxas reports as EIATTR_REGCOUNT.

The algorithm is a greedy one, as ptxas's is, with ptxas's preferences measured
over the corpus in tests/data/regalloc (docs/regalloc.md has the numbers):

1. Values and liveness.  Every virtual register is a value (a pair and its halves
   are one); liveness is computed per 32-bit unit over the CFG.  A result
   interferes with what is live after its instruction, so it may take the register
   of a source read there for the last time (IMAD R6, R6, c[0x0][0x0], R3).
2. Late reads.  A load's address registers stay taken until the end of its block
   and while the loaded value is live; a store's registers until the end of its
   block.  ptxas does not reuse them (vadd's FADD writes R9, not the free R3/R5).
3. Order.  Pairs, then quads, then single registers, each in virtual-register
   order (ptxas takes values in its own vreg order, which follows the PTX, while
   liveness is that of the final order; select_instrs numbers ours the same
   way); 32-bit constants last; predicates longest-lived first.
4. Choice.  Among the registers free for the value's whole life: fewest register
   bank conflicts (two sources of one instruction in the same bank, reg % 2),
   then a register the value can share with a dying source or result (coalescing
   hints, followed through values not yet assigned), then the lowest number.
5. Retry.  Where that takes more than SLACK registers past the pressure (the most
   units live at once), or finds no register, the allocation is tried again in
   order of first definition and with liveness alone (without step 2), and the
   fewest registers win (fe_vector_types: ptxas's order put the two LDG.E.128
   results above their address pairs, R27 where R19 does).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from itertools import chain

from ..diagnostics import CompileError, Diagnostic
from ..sass.ir import Imm, Mem, Reg
from .analysis import Code, Value, build_code, collect_values, liveness, map_regs, read_regs, units, written_regs

# Physical registers that may hold virtual values, per file.  R1 is the stack
# pointer (MOV R1, c[0x0][0x28]) and the zero registers (RZ, PT, URZ, UPT) read as
# constants; everything else is free for the allocator.
ALLOCATABLE = {
    "R": [n for n in range(255) if n != 1],
    "P": list(range(7)),
    "UR": list(range(63)),
    "UP": list(range(7)),
}

ALLOWED = {file: frozenset(regs) for file, regs in ALLOCATABLE.items()}

# EIATTR_REGCOUNT is the highest R register used plus 3, measured over the corpus
# in tests/data/regalloc (vadd: R9 -> 12; matmul: R37 -> 40; i2d_sum: R10 -> 13).
REGCOUNT_EXTRA = 2

# --- interference -------------------------------------------------------------------------------

# Loads whose address registers ptxas does not reuse for the rest of the block, nor
# while the loaded value is live (measured: in vadd the sum avoids R2..R5, the dead
# address pairs of the two loads it adds; i2f_f2i's FMUL avoids R3 after the
# loaded value died).  Without this rule the corpus match drops by a quarter.
LOADS = frozenset({"LDG", "LD", "LDS", "LDL", "LDC", "ATOMG", "ATOM", "ATOMS"})
STORES = frozenset({"STG", "ST", "STS", "STL", "RED", "REDG"})


# How far (in instructions of the same block) the late-read rule reaches.  ptxas's
# small kernels show it (vadd's FADD avoids the address pairs its loads just read);
# over a long unrolled block a rule without limit keeps every stored and address
# register out of reach and the register count explodes (bitonic: 112 instead of 24).
LATE_READ_WINDOW = 12
STORE_ADDRESS_ONLY = True


def occupancy(code: Code) -> list[set]:
    """Units that a write by each instruction must not overwrite: the live units
    after it, plus, for LATE_READ_WINDOW instructions of its block, the address
    units of each load (while its result is still to be read, up to and including
    its last reader) and the registers each store reads."""
    occupied = [set(live) for live in code.live_out]
    for i, instr in enumerate(code.instrs):
        block_end = code.block_range(code.block_of[i]).stop
        window = range(i + 1, min(block_end, i + 1 + LATE_READ_WINDOW))
        if instr.op in STORES:
            srcs = [u for op in instr.srcs if isinstance(op, Mem) for r in (op.base, op.ubase)
                    if r is not None and not r.is_zero for u in units(r)] if STORE_ADDRESS_ONLY else \
                [u for r in read_regs(instr) if r is not instr.pred for u in units(r)]
            for j in window:
                occupied[j].update(srcs)
        if instr.op not in LOADS:
            continue
        address = [u for op in instr.srcs if isinstance(op, Mem) and op.base is not None
                   and not op.base.is_zero for u in units(op.base)]
        if not address:
            continue
        for j in window:
            occupied[j].update(address)
        result = [u for r in code.results[i] for u in units(r)]
        last = i
        for j in range(i + 1, block_end):
            if any(u in code.live_out[j - 1] for u in result):
                last = j
            else:
                break
        for j in range(i + 1, min(last + 1, i + 1 + 4 * LATE_READ_WINDOW)):
            occupied[j].update(address)
    return occupied


def interference(code: Code, occupied: list[set]) -> dict:
    """Unit -> the units that must not share its register: everything occupied
    after an instruction that writes it, and the other results of that instruction.
    A result may take the register of a source the instruction reads for the last
    time (IMAD R6, R6, ...), as the hardware reads sources before it writes."""
    conflicts: dict = defaultdict(set)
    for results, occ in zip(code.results, occupied):
        if not results:
            continue
        written = [u for r in results for u in units(r)]
        by_file: dict = {}
        for d in written:
            others = by_file.get(d[0])
            if others is None:      # the units of d's file occupied here, and the results
                file = d[0]
                others = by_file[file] = {u for u in occ if u[0] == file}
                others.update(u for u in written if u[0] == file)
            if len(others) < 2:     # d alone
                continue
            conflicts[d] |= others
            for other in others:
                conflicts[other].add(d)     # d's own set too: no unit conflicts with itself (below)
    for unit, theirs in conflicts.items():
        theirs.discard(unit)
    return dict(conflicts)


# --- choosing registers ---------------------------------------------------------------------------

@dataclass
class Allocation:
    code: Code
    value_of: dict
    conflicts: dict
    top: int = 254          # the highest R register the budget allows (-maxrregcount)
    _bases: dict = field(default_factory=dict)   # (file, width, refs, top) -> bases that fit

    def values(self) -> list:
        return sorted(set(self.value_of.values()), key=lambda v: (v.file, v.first))

    def register(self, reg: Reg) -> int | None:
        """The physical number an operand has now (None while its value is unassigned)."""
        if not reg.virtual:
            return reg.num
        value = self.value_of[(reg.file, reg.num, True)]      # (reg.key() of a virtual register)
        return None if value.phys is None else value.phys + reg.num - value.first

    def free_bases(self, value: Value) -> list[int]:
        """Bases where `value` fits: aligned, allocatable, and clear of every
        assigned value it interferes with (ascending)."""
        bases, _, bad = self.candidate_bases(value)
        return [p for p in bases if p not in bad]

    def candidate_bases(self, value: Value) -> tuple[list, frozenset, set]:
        """(bases ascending, the same as a set, bases taken): free_bases without
        building the list, for callers that stop early."""
        bad = set()
        add, value_of, conflicts = bad.add, self.value_of, self.conflicts
        file, first = value.file, value.first
        if value.width == 1:        # most values: the loop below with k = 0
            for other in conflicts.get((file, first, True), ()):
                if not other[2]:
                    add(other[1])
                    continue
                owner = value_of[other]
                if owner.phys is not None and owner is not value:
                    add(owner.phys + other[1] - owner.first)
        else:
            for k in range(value.width):
                for other in conflicts.get((file, first + k, True), ()):
                    if not other[2]:
                        add(other[1] - k)
                        continue
                    owner = value_of[other]
                    if owner is not value and owner.phys is not None:
                        add(owner.phys + other[1] - owner.first - k)
        if value.width == 1 and all(w == 1 for _, w in value.refs):
            key = (value.file, 1, None, self.top)
        else:
            key = (value.file, value.width, frozenset(value.refs), self.top)
        cached = self._bases.get(key)
        if cached is None:
            regs = ALLOCATABLE[value.file]
            if value.file == "R" and self.top < 254:
                regs = [p for p in regs if p + value.width - 1 <= self.top]
            if key[2] is None:
                bases = list(regs)
            else:
                allowed = ALLOWED[value.file]
                bases = [p for p in regs if value.fits(p) and all(p + k in allowed for k in range(value.width))]
            cached = self._bases[key] = (bases, frozenset(bases))
        return cached[0], cached[1], bad

    def dies_at(self, i: int, reg: Reg) -> bool:
        live = self.code.live_out[i]
        file, num, virtual = reg.file, reg.num, reg.virtual
        if reg.width == 1:          # most registers: no loop
            return (file, num, virtual) not in live
        return not any((file, num + k, virtual) in live for k in range(reg.width))


def allocation_order(alloc: Allocation) -> list:
    """Pairs, then quads, then single registers, each in virtual-number order, with
    32-bit constants (a MOV of an immediate) last; predicates longest-lived first.
    ptxas takes values in the order of its own virtual registers, which follows
    the PTX (swap2: a's address pair gets R2:R3 although the scheduler puts b's
    IMAD.WIDE first), and numbers the constants it materializes while lowering
    (MOV R7, 0x4 for IMAD.WIDE) last; select_instrs numbers ours in PTX order and
    fold_constants' constants last.  Pairs before quads: vec4's quad lands in R8
    because its output address pair took R4:R5 first.  For predicates,
    longest-first halves the misses against virtual-number order (80 -> 38)."""
    counts = Counter(chain.from_iterable(alloc.code.live_out))    # unit -> instructions it is live after

    def key(value: Value) -> tuple:
        if value.file in ("P", "UP"):
            return (value.file, False, False, False, -counts.get(value.unit(0), 0), value.first)
        return (value.file, value.width == 1, value.width > 2, value.width == 1 and is_constant(alloc, value),
                0, value.first)
    return sorted(alloc.values(), key=key)


def span(alloc: Allocation, value: Value) -> int:
    """How many instructions `value` is live after."""
    return sum(1 for live in alloc.code.live_out if any(value.unit(k) in live for k in range(value.width)))


CONSTANT_MOVES = frozenset({"MOV", "IMAD.MOV.U32"})


def is_constant(alloc: Allocation, value: Value) -> bool:
    """Written only by moves of an immediate: cheap to rematerialize, so ptxas gives
    it a register after everything else (sum8: the 4 of IMAD.WIDE lands in R19)."""
    return bool(value.defs) and all(
        alloc.code.instrs[i].name in CONSTANT_MOVES and alloc.code.instrs[i].pred is None
        and all(isinstance(op, Imm) or (isinstance(op, Reg) and op.is_zero) for op in alloc.code.instrs[i].srcs)
        for i, _ in value.defs)


def placements(dst_width: int, src_width: int, src_slot: int) -> list[tuple[int, int]]:
    """(unit of the result, unit of the source) that may share a register, best
    first: a pair built from single sources keeps them in operand order (IMAD.WIDE
    R6, R6, R7), a single result in a dying pair takes its low half first."""
    if dst_width == src_width:
        return [(0, 0)]
    if dst_width > src_width:
        natural = (src_slot * src_width) % dst_width
        return [(natural, 0)] + [(t, 0) for t in range(0, dst_width, src_width) if t != natural]
    return [(0, j) for j in range(src_width)]


HINT_DEPTH = 3


def hints(alloc: Allocation, value: Value) -> list[int]:
    """Bases for `value` that let an instruction's result share the register of a
    source it reads for the last time, best first: the assigned dying sources of
    the instructions that write `value`, then the results of the instructions
    that read `value` last (see result_hints)."""
    out = []
    for i, dst in value.defs:
        for slot, src in enumerate(alloc.code.sources[i]):
            if src.file != value.file:      # (the tests are side-effect free: cheapest first)
                continue
            where = alloc.register(src)
            if where is not None and _other(alloc, src, value) and alloc.dies_at(i, src):
                out += _placed(where, dst.width, src.width, slot, dst.num - value.first, +1)
    return out + result_hints(alloc, value, HINT_DEPTH)


def result_hints(alloc: Allocation, value: Value, depth: int) -> list[int]:
    """Bases putting `value` on a result of an instruction that reads it last.  A
    result not yet assigned lends its own result hints, up to `depth` steps: ctaid
    dies into i = ctaid * ntid + tid, i dies into the pair of IMAD.WIDE, so ctaid
    heads for the pair's low half (vadd: R6)."""
    out = []
    for i, src in value.uses:
        if not alloc.dies_at(i, src):
            continue
        slot = next((n for n, r in enumerate(alloc.code.sources[i]) if r is src), 0)
        for dst in alloc.code.results[i]:
            if dst.file != value.file or not _other(alloc, dst, value):
                continue
            where = alloc.register(dst)
            if where is None and depth > 0:
                other = alloc.value_of[dst.key()]
                found = result_hints(alloc, other, depth - 1)
                where = found[0] + dst.num - other.first if found else None
            if where is not None:
                out += _placed(where, dst.width, src.width, slot, src.num - value.first, -1)
    return out


def _other(alloc: Allocation, reg: Reg, value: Value) -> bool:
    return not reg.virtual or alloc.value_of[(reg.file, reg.num, True)] is not value


def _placed(where: int, dst_width: int, src_width: int, slot: int, offset: int, direction: int) -> list[int]:
    """Bases for our value that put its operand (at `offset` in it) on a partner
    at register `where`: a source of ours (+1) or a result of ours (-1)."""
    out = []
    for t, j in placements(dst_width, src_width, slot):
        shift = j - t if direction > 0 else t - j
        out.append(where + shift - offset)
    return out


def bank_conflicts(alloc: Allocation, value: Value) -> tuple[int, int]:
    """For a value based at an even and at an odd register: how many register
    sources it would share a bank (register number mod 2) with, over the
    instructions that read it.  Measured over the corpus: FADD's two sources
    differ in bank 103 times out of 103, IMAD's 259 of 266, a stored value sits in
    the bank opposite its address register 103 of 104 times; a pair counts as its
    first register."""
    counts = [0, 0]
    if value.file != "R":
        return (0, 0)
    for i, mine in value.uses:
        for other in alloc.code.sources[i]:
            where = alloc.register(other) if other is not mine and other.file == "R" and _other(alloc, other, value) else None
            if where is not None:
                counts[(where - mine.num + value.first) % 2] += 1
    return (counts[0], counts[1])


def choose(alloc: Allocation, value: Value) -> int:
    """The fewest bank conflicts, then a hinted register, then the lowest number
    (scale: `FMUL R5, R0, c[..]` stores R5 through [R2.64] rather than reuse R0)."""
    bases, base_set, bad = alloc.candidate_bases(value)
    lowest = at = None                   # the lowest free base, at bases[at]
    for at, p in enumerate(bases):
        if p not in bad:
            lowest = p
            break
    if lowest is None:
        raise CompileError(Diagnostic(
            f"more {value.file} registers live at once than the {len(ALLOCATABLE[value.file])} "
            f"available: ptxc does not spill registers"))
    preferred = set(hints(alloc, value))
    conflicts = bank_conflicts(alloc, value)
    # min over (conflicts[p % 2], p not in preferred, p), without a key call per register:
    # the best are the free bases of the parity with fewer conflicts when there is one
    # free (else every free base), and the lowest hinted among them wins, else the lowest.
    parity = None
    if conflicts[0] != conflicts[1]:
        want = 0 if conflicts[0] < conflicts[1] else 1
        if lowest & 1 == want:
            parity, first = want, lowest
        else:
            first = None
            for p in bases[at + 1:]:             # the lowest free base of that parity
                if p & 1 == want and p not in bad:
                    first = p
                    break
            if first is not None:
                parity = want
            else:
                first = lowest
    else:
        first = lowest
    hinted = [p for p in preferred if p in base_set and p not in bad and (parity is None or p & 1 == parity)]
    return min(hinted) if hinted else first


def assign_regs(func) -> None:
    code = build_code(func)
    value_of = collect_values(code)
    alloc = Allocation(code, value_of, interference(code, occupancy(code)))
    limit = getattr(getattr(func, "info", None), "max_reg_count", None)
    if limit:
        alloc.top = max(limit - 1 - REGCOUNT_EXTRA, 2)
    order = allocation_order(alloc)
    best = _colour(alloc, order)
    chosen = _assignment(alloc)
    # (The pressure is at least the R units live after the instruction with the most
    # units live: within SLACK of those, `best` is within SLACK of the pressure.)
    if best is None or best > _pressure_at_fullest(code) + SLACK:
        bound = pressure(alloc)
        if best is None or best > bound + SLACK:
            # ptxas's order (pairs, then quads, then single registers) and its late-read
            # rule can paint it into a corner: pairs take the low registers a quad needed,
            # and the values need many more registers than are ever live at once, or do
            # not fit at all.  Then try again in order of first definition (a greedy
            # colouring of straight-line live ranges needs no more than the pressure), and
            # with liveness alone (the late-read rule is ptxas's habit, not a need); the
            # fewest registers win, ptxas's way on a tie, and the first that reaches the
            # pressure ends the search.
            loose = Allocation(code, value_of, interference(code, [set(live) for live in code.live_out]), alloc.top)
            by_definition = sorted(order, key=lambda v: (v.file not in ("P", "UP"), _first_def(v), v.first))
            for attempt, values in ((loose, order), (alloc, by_definition), (loose, by_definition)):
                top = _colour(attempt, values)
                if top is not None and (best is None or top < best):
                    best, chosen = top, _assignment(attempt)
                if best is not None and best <= bound:
                    break
            if best is None:
                raise CompileError(Diagnostic(
                    f"more R registers live at once than the {len(ALLOCATABLE['R'])} available: "
                    f"ptxc does not spill registers"))
    for value, phys in chosen.items():
        value.phys = phys
    func.num_regs = _allocated_regcount(alloc)
    rewrite(alloc)


# How many registers past the pressure (the most R units live at once) ptxas's order
# may take before the allocation is tried again in other orders.
SLACK = 4


def _colour(alloc: Allocation, order: list) -> int | None:
    """Assign `order` greedily (choose); the highest R register used, or None where a
    value found no register."""
    for value in order:
        value.phys = None
    try:
        for value in order:
            value.phys = choose(alloc, value)
    except CompileError:
        return None
    return max((v.phys + v.width - 1 for v in order if v.file == "R"), default=-1)


def _assignment(alloc: Allocation) -> dict:
    return {value: value.phys for value in alloc.value_of.values()}


def pressure(alloc: Allocation) -> int:
    """The most virtual R units live after any instruction, plus R0 and R1 (the
    stack pointer sits below every value)."""
    return 2 + max((len([u for u in live if u[0] == "R" and u[2]]) for live in alloc.code.live_out), default=0)


def _pressure_at_fullest(code: Code) -> int:
    """A lower bound of `pressure`: its count after the instruction with the most units live."""
    fullest = max(code.live_out, key=len, default=())
    return 2 + len([u for u in fullest if u[0] == "R" and u[2]])


def _first_def(value: Value) -> int:
    return min((i for i, _ in value.defs), default=-1)


def rewrite(alloc: Allocation) -> None:
    def physical(reg: Reg) -> Reg:
        if not reg.virtual:
            return reg
        value = alloc.value_of[(reg.file, reg.num, True)]
        # Reg(...) with every field: what replace(reg, num=..., virtual=False) builds
        return Reg(reg.file, value.phys + reg.num - value.first, False, reg.width, reg.neg, reg.abs, reg.inv,
                   reg.sel)
    for instr in alloc.code.instrs:
        map_regs(instr, physical)


def _allocated_regcount(alloc: Allocation) -> int:
    """regcount of the code once rewritten, from the operands build_code collected."""
    top = -1
    for regs in (alloc.code.reads, alloc.code.results):
        for group in regs:
            for r in group:
                if r.file == "R":
                    top = max(top, alloc.register(r) + r.width - 1)
    return top + 1 + REGCOUNT_EXTRA


def regcount(code: Code) -> int:
    """EIATTR_REGCOUNT: the highest R register used, plus one, plus REGCOUNT_EXTRA."""
    top = max((u[1] for instr in code.instrs for r in written_regs(instr) + read_regs(instr)
               if r.file == "R" for u in units(r)), default=-1)
    return top + 1 + REGCOUNT_EXTRA
