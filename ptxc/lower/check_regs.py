"""check_regs: prove that a register allocation kept the program's meaning.

`check_allocation(before, after)` takes a function before assign_regs (virtual
registers) and the same function after it, and follows both side by side, as
regalloc2's checker does: for every physical register it tracks the set of
virtual registers whose current value that physical register is known to hold.
A write of virtual unit v into physical p makes p hold exactly {v} and makes every
other register stop holding v; a read of v from p is correct only if p holds v
on every path that reaches it.  Paths meet by intersection.  A value that may be
undefined on a path (read before any write, as the virtual program itself does)
is held vacuously there.

It also checks the shape of the result: same instructions and non-register
operands, every register physical, pairs even-aligned and quads 4-aligned,
predicates in P0..P6, and R1 (the stack pointer) never given to a virtual value.

It shares only the operand helpers and the block successors with assign_regs;
liveness, values and interference are not used, so it does not repeat their bugs.
"""
from __future__ import annotations

from .analysis import is_guarded, read_regs, successors, units, written_regs
from ..sass.ir import Mem, Reg


class AllocationMismatch(AssertionError):
    """The allocated function does not compute what the virtual one did."""


def check_allocation(before, after) -> None:
    """Raise AllocationMismatch unless `after` is a correct allocation of `before`."""
    pairs = _paired_instrs(before, after)
    for where, b_instr, a_instr in pairs:
        _check_shape(where, b_instr, a_instr)
    succs = successors(before)
    blocks = _split_by_block(before, pairs)
    entry = _State({}, frozenset(), {})
    state_in = {0: entry}
    work = [0]
    while work:
        b = work.pop()
        state = state_in[b].copy()
        for where, b_instr, a_instr in blocks[b]:
            _step(state, where, b_instr, a_instr)
        for s in succs[b]:
            merged = state if s not in state_in else state_in[s].meet(state)
            if s not in state_in or merged != state_in[s]:
                state_in[s] = merged
                work.append(s)
    # A second pass with the fixed point reports reads against the final states.
    for b, instrs in enumerate(blocks):
        if b in state_in:
            state = state_in[b].copy()
            for where, b_instr, a_instr in instrs:
                _step(state, where, b_instr, a_instr, report=True)


class _State:
    """holds: physical unit -> frozenset of virtual units it holds; defined: the
    virtual units written on every path so far (the others may be undefined);
    pending: physical unit -> (virtual unit, guard) for a value written there under
    a guard only (the guard's threads see it; a write under the opposite guard of
    the same predicate completes it: if-converted code)."""

    def __init__(self, holds: dict, defined: frozenset, pending: dict):
        self.holds, self.defined, self.pending = holds, defined, pending

    def copy(self) -> "_State":
        return _State(dict(self.holds), self.defined, dict(self.pending))

    def undefined(self, v) -> bool:
        return v not in self.defined

    def held(self, p) -> frozenset:
        return self.holds.get(p, frozenset())

    def meet(self, other: "_State") -> "_State":
        holds = {}
        for p in set(self.holds) | set(other.holds):
            mine = {v for v in self.held(p) if other.undefined(v) or v in other.held(p)}
            theirs = {v for v in other.held(p) if self.undefined(v)}
            if mine | theirs:
                holds[p] = frozenset(mine | theirs)
        pending = {p: e for p, e in self.pending.items() if other.pending.get(p) == e}
        return _State(holds, self.defined & other.defined, pending)

    def __eq__(self, other) -> bool:
        return self.holds == other.holds and self.defined == other.defined and self.pending == other.pending


def _guard(instr):
    return (instr.pred.key(), instr.pred.inv) if is_guarded(instr) else None


def _step(state: _State, where: str, b_instr, a_instr, report: bool = False) -> None:
    guard = _guard(b_instr)
    for vreg, preg in zip(read_regs(b_instr), read_regs(a_instr)):
        for v, p in zip(units(vreg), units(preg)):
            p = p[:2]
            if vreg is b_instr.pred:
                guarded_read = False
            else:
                guarded_read = guard is not None and state.pending.get(p) == (v, guard)
            if report and v not in state.held(p) and not state.undefined(v) and not guarded_read:
                raise AllocationMismatch(
                    f"{where}: reads {_name(v)} from {p[0]}{p[1]}, which holds "
                    f"{', '.join(map(_name, sorted(state.held(p)))) or 'no live value'}")
    guarded = guard is not None
    for vreg, preg in zip(written_regs(b_instr), written_regs(a_instr)):
        for v, p in zip(units(vreg), units(preg)):
            p = p[:2]
            kept = v in state.held(p) or state.undefined(v)
            completes = guarded and state.pending.get(p) == (v, (guard[0], not guard[1]))
            for q in [q for q, held in state.holds.items() if v in held]:
                state.holds[q] = state.holds[q] - {v}
            state.pending.pop(p, None)
            if kept or not guarded or completes:
                state.holds[p] = frozenset({v})
            else:
                state.holds[p] = frozenset()
                state.pending[p] = (v, guard)
            if not guarded:
                state.defined = state.defined | {v}
    for vreg in written_regs(b_instr):      # a new value of a guard: its pending writes are unknown
        if vreg.file in ("P", "UP"):
            state.pending = {p: e for p, e in state.pending.items() if e[1][0] != vreg.key()}
    # Drop empty entries so that states compare equal regardless of history.
    state.holds = {p: held for p, held in state.holds.items() if held}


def _name(unit) -> str:
    file, num, virtual = unit
    return f"%{file}{num}" if virtual else f"{file}{num}"


def _paired_instrs(before, after) -> list:
    if [b.label for b in before.blocks] != [b.label for b in after.blocks]:
        raise AllocationMismatch("blocks differ between the function before and after allocation")
    out = []
    for block_b, block_a in zip(before.blocks, after.blocks):
        if len(block_b.instrs) != len(block_a.instrs):
            raise AllocationMismatch(f"block {block_b.label}: instruction count changed")
        for k, (b_instr, a_instr) in enumerate(zip(block_b.instrs, block_a.instrs)):
            out.append((f"{block_b.label}+{k} {b_instr.name}", b_instr, a_instr))
    return out


def _split_by_block(before, pairs) -> list:
    blocks, at = [], 0
    for block in before.blocks:
        blocks.append(pairs[at:at + len(block.instrs)])
        at += len(block.instrs)
    return blocks


def _check_shape(where: str, b_instr, a_instr) -> None:
    if (b_instr.op, b_instr.mods) != (a_instr.op, a_instr.mods):
        raise AllocationMismatch(f"{where}: opcode changed to {a_instr.name}")
    b_ops = b_instr.operands + [b_instr.pred]
    a_ops = a_instr.operands + [a_instr.pred]
    if len(b_ops) != len(a_ops):
        raise AllocationMismatch(f"{where}: operand count changed")
    for b_op, a_op in zip(b_ops, a_ops):
        if isinstance(b_op, (Reg, Mem)) != isinstance(a_op, (Reg, Mem)) or (
                not isinstance(b_op, (Reg, Mem)) and not hasattr(b_op, "index") and b_op != a_op):
            raise AllocationMismatch(f"{where}: operand {b_op} became {a_op}")
    for vreg, preg in zip(read_regs(b_instr) + written_regs(b_instr),
                          read_regs(a_instr) + written_regs(a_instr)):
        _check_register(where, vreg, preg)


def _check_register(where: str, vreg: Reg, preg: Reg) -> None:
    if preg.virtual:
        raise AllocationMismatch(f"{where}: {_name(preg.key())} left virtual")
    if (vreg.file, vreg.width, vreg.neg, vreg.abs, vreg.inv) != (preg.file, preg.width, preg.neg, preg.abs, preg.inv):
        raise AllocationMismatch(f"{where}: {vreg} became {preg}")
    if not vreg.virtual and vreg.num != preg.num:
        raise AllocationMismatch(f"{where}: precolored {_name(vreg.key())} moved to {preg.num}")
    if preg.num % preg.width:
        raise AllocationMismatch(f"{where}: {preg.file}{preg.num} is not aligned to {preg.width} registers")
    if vreg.virtual and preg.file == "R" and 1 in range(preg.num, preg.num + preg.width):
        raise AllocationMismatch(f"{where}: {_name(vreg.key())} given R1, the stack pointer")
    if vreg.virtual and preg.file == "P" and preg.num > 6:
        raise AllocationMismatch(f"{where}: {_name(vreg.key())} given P{preg.num}")
