"""set_control_codes: give every instruction its scheduling word, as ptxas would.

Each sm_89 instruction carries a control word (ir.Control): how many cycles to
stall before the next instruction issues, a yield hint, a scoreboard to set when a
variable-latency result is written (wbar) or its sources have been read (rbar),
the scoreboards to wait on before issuing, and operand-reuse flags.  The hardware
does no dependency checking of its own: these bits are the only thing that keeps
a consumer from reading a register before its producer wrote it.

The numbers come from the latency table (ptxc/sass/sm_89_latencies.json, learned
from ptxas by scripts/learn_sm89_latencies.py); opcodes are classified by that
table, never by a chain of tests here.  docs/scheduling.md describes the model.

Expects: a function after register allocation and ordering: physical registers,
instructions in final order in `func.blocks`, branch targets as `ir.Target` labels
naming blocks.  Padding (a `BRA` to its own block and NOPs, added by pad_text) may
be present at the end.
Guarantees, for every instruction:
- a read or overwrite of a variable-latency result waits on that producer's
  scoreboard, and so does an overwrite of a register a pending variable-latency
  instruction still has to read (its read scoreboard), along every CFG path;
- a reader of a fixed-latency result issues at least the table's latency after
  its producer, along fallthrough and along taken branches (a branch's stall
  covers what its target block needs), and no instruction issues sooner after
  another than the two classes' pipe interval allows;
- yield bits and reuse flags follow ptxas's rules; padding gets ptxas's codes;
- a CALL or RET waits on every scoreboard still pending there: the code on the
  other side (a subroutine, a caller) is scheduled apart and expects nothing in flight.
Scoreboard states propagate over the CFG to their fixed point, however many rounds
that takes (a kernel of sixteen 64-bit divisions needs 14; a cap of 4 lost a STG's
read-scoreboard wait).
A dependency that would need a single stall above 15 cycles is clamped to 15
(no latency in the sm_89 table comes near that).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..sass import latency
from ..sass.ir import Control, Function, Instr, Reg, Target

# CFG semantics (not scheduling classes): which instructions leave the block.
TAKEN_EDGE_OPS = frozenset({"BRA", "JMP", "BRX"})
NO_FALLTHROUGH_OPS = frozenset({"BRA", "JMP", "BRX", "EXIT", "RET", "KILL"})

MAX_STALL = 15
WINDOW = 24          # instructions looked back for dependencies
HORIZON = 16         # cycles after which every fixed latency has elapsed
SCOREBOARDS = 6
REGISTER_BANKS = 2


@dataclass
class Slot:
    """One instruction in layout order with what the model needs to know about it."""
    instr: Instr
    block: int
    cls: str
    info: dict
    reads: list
    writes: list                      # [(producer key, unit)]
    padding: bool = False
    read_units: set = field(default_factory=set)
    write_units: set = field(default_factory=set)
    touched_units: set = field(default_factory=set)   # read or written
    write_map: dict = field(default_factory=dict)     # unit -> producer key (the last for a unit)


class Schedule:
    """The function flattened into layout order, with its control-flow edges."""

    def __init__(self, func: Function, table: latency.LatencyTable):
        self.table = table
        self.most = None                  # see MostNeeded
        self.in_flight_at: dict = {}      # CALL/RET index -> scoreboards pending there
        self.slots: list[Slot] = []
        self.block_start: dict[str, int] = {}
        for b, block in enumerate(func.blocks):
            self.block_start[block.label] = len(self.slots)
            for instr in block.instrs:
                cls = table.op_class(instr)
                reads, writes = table.reads(instr), table.writes(instr)
                read_units = {r.unit for r in reads}
                write_units = {unit for _, unit in writes}
                self.slots.append(Slot(instr, b, cls, table.cls(cls), reads, writes, False, read_units, write_units,
                                       read_units | write_units, {unit: key for key, unit in writes}))
        self._targets = [self._targets_of(k) for k in range(len(self.slots))]
        self._producers: dict = {}        # see producers
        for k in range(len(self.slots) - 1, -1, -1):   # padding ends the code
            if not self._is_padding(k):
                break
            self.slots[k].padding = True
        self.real = [k for k, s in enumerate(self.slots) if not s.padding]
        self.targeted = {self.block_start[t] for k in self.real for t in self.targets(k)}
        # The walks ask these many times per instruction: compute them once.
        self._falls = [self._falls_through(k) for k in range(len(self.slots))]
        self._succs = [([k + 1] if self._falls[k] else []) + [self.block_start[t] for t in self.targets(k)]
                       for k in range(len(self.slots))]

    def _is_padding(self, k: int) -> bool:
        """NOPs and the BRA to itself (pad_text's trap) after the last instruction."""
        instr = self.slots[k].instr
        if instr.op == "NOP":
            return True
        return (instr.op in TAKEN_EDGE_OPS and instr.pred is None
                and self.targets(k) == [self._label_at(k)])

    def _label_at(self, k: int) -> str | None:
        for label, start in self.block_start.items():
            if start == k:
                return label
        return None

    def targets(self, k: int) -> list[str]:
        return self._targets[k]

    def producers(self, br: int) -> list[int]:
        """Branch `br`, then back along its fallthrough chain (computed once)."""
        out = self._producers.get(br)
        if out is None:
            out = self._producers[br] = [br] + list(self.chain(br))
        return out

    def _targets_of(self, k: int) -> list[str]:
        instr = self.slots[k].instr
        if instr.op not in TAKEN_EDGE_OPS:
            return []
        return [s.label for s in instr.srcs
                if isinstance(s, Target) and s.label in self.block_start]

    def falls_through(self, k: int) -> bool:
        return self._falls[k]

    def _falls_through(self, k: int) -> bool:
        instr = self.slots[k].instr
        if instr.op in NO_FALLTHROUGH_OPS and instr.pred is None and not any(
                isinstance(op, Reg) and op.file == "P" and not (op.is_zero and not op.inv) for op in instr.srcs):
            return False
        return k + 1 < len(self.slots) and not self.slots[k + 1].padding

    def successors(self, k: int) -> list[int]:
        return self._succs[k]

    def chain(self, j: int):
        """Instructions that run right before j on the fallthrough path, nearest first."""
        i = j - 1
        while i >= 0 and j - i <= WINDOW and self.falls_through(i):
            yield i
            i -= 1


def set_control_codes(func: Function, arch: str = "sm_89") -> None:
    table = latency.load(arch)
    sched = Schedule(func, table)
    if not sched.real:
        return
    assign_scoreboards(sched)
    assign_stalls(sched)
    assign_yield(sched)
    assign_reuse(sched)
    assign_padding(sched)
    settle_at_calls(sched)


# Control leaves the code the scheduler sees at a CALL (into a subroutine scheduled on
# its own) and at a RET (back into a caller): nothing may be in flight there, so the
# scoreboards still pending there are waited for (assign_scoreboards records them).  The stall and yield bits of CALL and RET are an
# opcode extension (nvdisasm rejects other values: "undefined value 0x1f for table
# TABLES_opex_0"); these are ptxas's (CALL.REL.NOINC 0x000fea.., RET.REL.NODEC 0x000fec..).
CALL_BOUNDARY_STALL = {"CALL": 5, "RET": 6}


def settle_at_calls(sched: Schedule) -> None:
    for k, slot in enumerate(sched.slots):
        stall = CALL_BOUNDARY_STALL.get(slot.instr.op)
        if stall is not None:
            slot.instr.ctrl.wait |= sched.in_flight_at.get(k, 0)
            slot.instr.ctrl.yield_bit = 1
            if not 0 < slot.instr.ctrl.stall < ILLEGAL_YIELD_STALL:    # keep the pair legal
                slot.instr.ctrl.stall = stall
            slot.instr.ctrl.reuse = 0
        if slot.instr.op == "CALL":
            _settle_return_branch(sched, k)


def _settle_return_branch(sched: Schedule, call: int) -> None:
    """An indirect call's dispatch (lower_calls.call) has one CALL per candidate, each
    on a divergent path: its registers reloaded after the return (save_across_calls)
    must have arrived before the branch to the join, where the warp may switch to
    the lanes of another candidate that store the same registers."""
    for k in range(call + 1, len(sched.slots)):
        instr = sched.slots[k].instr
        if instr.op in TAKEN_EDGE_OPS or instr.op in CALL_BOUNDARY_STALL or instr.op == "EXIT":
            if instr.op in TAKEN_EDGE_OPS and sched.slots[k].block == sched.slots[call + 1].block:
                instr.ctrl.wait |= sched.in_flight_at.get(k, 0)
            return


# --- scoreboards --------------------------------------------------------------------

@dataclass
class Pending:
    """A scoreboard in flight: the producers it counts and the units they hold."""
    kind: str               # 'w': results not yet written; 'r': sources not yet read
    units: set
    producers: set
    waiter: int | None      # the first instruction expected to wait on it


def first_event(sched: Schedule, start: int, is_use, is_clobber, can_use: bool = True,
                can_clobber: bool = True) -> tuple[int | None, int | None]:
    """Walk forward from `start` along every CFG path, stopping each at its first use.
    Returns the first use and the first clobber reached on some path before any use
    (then a read scoreboard is needed), in the order a depth-first walk that follows
    the layout first meets them (on straight-line code, path order); either may be
    None.  A use that also clobbers settles both: waiting for a result implies the
    sources were read.  can_use / can_clobber False say that is_use / is_clobber never
    hold (no result; no vector register read): the walk stops once the rest is known."""
    use = clobber = None
    if not can_use and not can_clobber:
        return use, clobber
    seen: set[int] = set()
    slots, succs = sched.slots, sched._succs
    stack = list(reversed(succs[start]))
    while stack:
        k = stack.pop()
        while k not in seen and not slots[k].padding:   # straight on while one successor
            seen.add(k)
            if is_use(k):
                if use is None:
                    use = k
                    if clobber is not None or not can_clobber:
                        return use, clobber     # both first events found: nothing changes them
                break
            if clobber is None and is_clobber(k):
                clobber = k
                if use is not None or not can_use:
                    return use, clobber
            nxt = succs[k]
            if len(nxt) != 1:
                stack.extend(reversed(nxt))
                break
            k = nxt[0]
    return use, clobber


def assign_scoreboards(sched: Schedule) -> None:
    """wbar/rbar on variable-latency producers, waits before the first instruction that
    needs each, propagated over the CFG until nothing changes.  A round reads the
    entry states of branch targets; when it changed none after reading it (only
    targets it had not reached yet), another round would compute the same again, and
    the loop stops.  Only then: each backward branch may take a round to carry a
    pending scoreboard one step further (64-bit divisions' slow paths, one per
    division, are entered and left by branches), and a cap on the rounds left the
    overwrite at its end without its wait (a STG's read scoreboard, 17 divisions
    later).  States only grow (merge is a union; waits are or-ed), so this ends."""
    slots = sched.slots
    wbar: dict[int, int] = {}
    rbar: dict[int, int] = {}
    waiter = find_waiters(sched)
    entry: dict[int, dict[int, Pending]] = {}
    waits = {k: 0 for k in sched.real}
    while True:
        changed = stale = False
        read: set = set()           # targets whose entry state this round merged in
        state: dict[int, Pending] = {}
        for k in sched.real:
            if k in sched.targeted or k == sched.real[0]:
                state = merge(state, entry.get(k, {}))
                read.add(k)
            mask = 0
            for sb, pend in state.items():
                hits = slots[k].touched_units if pend.kind == "w" else slots[k].write_units
                if not pend.units.isdisjoint(hits):
                    mask |= 1 << sb
            state = settle(state, mask)
            if slots[k].instr.op in CALL_BOUNDARY_STALL or slots[k].instr.op in TAKEN_EDGE_OPS:
                # what is still in flight here (settle_at_calls)
                sched.in_flight_at[k] = sched.in_flight_at.get(k, 0) | sum(1 << sb for sb in state)
            if mask != waits[k]:
                waits[k] |= mask
                changed = True
            if (k, "r") in waiter:
                sb = rbar.get(k)
                if sb is None:
                    sb = rbar[k] = allocate(state, waiter[(k, "r")], 0)
                vector_reads = {u for u in slots[k].read_units if u[0] == "R"}
                add(state, sb, "r", vector_reads, k, waiter[(k, "r")])
            if (k, "w") in waiter:
                sb = wbar.get(k)
                if sb is None:
                    sb = wbar[k] = allocate(state, waiter[(k, "w")], slots[k].info["scoreboards"][0])
                add(state, sb, "w", slots[k].write_units, k, waiter[(k, "w")])
            for target in sched.targets(k):
                t = sched.block_start[target]
                merged = merge(entry.get(t, {}), state)
                if not same(merged, entry.get(t, {})):
                    entry[t] = merged
                    changed = True
                    stale |= t in read
            if not sched.falls_through(k):
                state = {}
        if not changed or not stale:
            break
    for k in sched.real:
        ctrl = slots[k].instr.ctrl
        ctrl.wait = waits[k]
        ctrl.wbar = wbar.get(k, 7)
        ctrl.rbar = rbar.get(k, 7)


def find_waiters(sched: Schedule) -> dict[tuple[int, str], int]:
    """For each variable-latency producer, the first instruction that must wait for its
    result ('w': reads or overwrites it) and, when some path reaches one before any
    such use, the first that overwrites a vector register it still has to read ('r').  Uniform registers are
    read at issue and need no read scoreboard.  A producer on an in-order queue
    needs neither when a later producer on the same queue is waited for first."""
    slots = sched.slots
    events: dict[int, tuple] = {}
    for k in sched.real:
        slot = slots[k]
        if not slot.info["variable"]:
            continue
        dst = slot.write_units
        vector_reads = {u for u in slot.read_units if u[0] == "R"}
        events[k] = first_event(
            sched, k,
            is_use=lambda m: not dst.isdisjoint(slots[m].touched_units),
            is_clobber=lambda m: not vector_reads.isdisjoint(slots[m].write_units)
            and not queued_behind(slot.info, slots[m].info),
            can_use=bool(dst), can_clobber=bool(vector_reads))
    waiter = {}
    for k, (use, clobber) in events.items():
        if use is not None and not covered(sched, events, k, use, "w"):
            waiter[(k, "w")] = use
        if clobber is not None and not covered(sched, events, k, clobber, "r"):
            waiter[(k, "r")] = clobber
    return waiter


def queued_behind(reader: dict, writer: dict) -> bool:
    """An overwrite that cannot land before the reader has read: both on one queue
    whose members complete in order (FP64 after FP64, LDS after STS)."""
    return (reader.get("queue") is not None and reader.get("queue") == writer.get("queue")
            and reader.get("in_order_results") and writer.get("in_order_results"))


def covered(sched: Schedule, events: dict, k: int, event: int, kind: str) -> bool:
    """Whether a later member of k's in-order queue settles k before `event`: on the
    straight path from k to `event`, a blocking member (BAR.SYNC)
    is issued (for reads), or a later producer whose own wait comes no later than
    `event` (results complete in order; any wait implies earlier reads are done).
    A fork in the path ends the search: coverage must hold on every path."""
    queue = sched.slots[k].info.get("queue")
    if queue is None:
        return False
    if kind == "w" and not sched.slots[k].info.get("in_order_results"):
        return False
    waits_seen: set[int] = set()
    m = k
    for _ in range(4 * WINDOW):
        nxt = sched.successors(m)
        if len(nxt) != 1:
            return False
        m = nxt[0]
        if m == event:
            return m in waits_seen
        if m in waits_seen:
            return True
        other = sched.slots[m]
        if other.info.get("queue") != queue:
            continue
        if kind == "r" and other.info.get("blocking"):
            return True
        if not other.info.get("in_order_results"):
            continue        # only waits on in-order results tell how far the queue got
        use, clobber = events.get(m, (None, None))
        first = use if kind == "w" else min((x for x in (use, clobber) if x is not None), default=None)
        if first is not None:
            waits_seen.add(first)
    return False


def allocate(state: dict[int, "Pending"], first_waiter: int, lowest: int) -> int:
    """A producer shares the scoreboard of pending producers that the same instruction
    will wait for; otherwise it takes the lowest free one its class may use (global
    memory starts at SB2), or, when all are taken, the last one."""
    for sb, pend in sorted(state.items()):
        if pend.waiter == first_waiter:
            return sb
    for sb in range(lowest, SCOREBOARDS):
        if sb not in state:
            return sb
    return SCOREBOARDS - 1


def add(state: dict[int, Pending], sb: int, kind: str, units: set, producer: int, waiter) -> None:
    pend = state.get(sb)
    if pend is None:
        state[sb] = Pending(kind, set(units), {producer}, waiter)
        return
    pend.units |= units
    pend.producers.add(producer)
    if pend.kind != kind:
        pend.kind = "w"  # a scoreboard counting both kinds: treat reads as writes (safe)
        pend.units |= units
    if waiter is not None and (pend.waiter is None or waiter < pend.waiter):
        pend.waiter = waiter


def settle(state: dict[int, Pending], mask: int) -> dict[int, Pending]:
    """After waiting on `mask`: those scoreboards are free, and a producer whose write
    completed has certainly read its sources too."""
    if not mask:        # nothing waited on: every scoreboard stays (no producer set is empty)
        return dict(state)
    done = set()
    for sb in range(SCOREBOARDS):
        if mask >> sb & 1 and sb in state:
            if state[sb].kind == "w":
                done |= state[sb].producers
    out = {}
    for sb, pend in state.items():
        if mask >> sb & 1:
            continue
        if pend.kind == "r" and pend.producers <= done:
            continue
        out[sb] = pend
    return out


def merge(a: dict[int, Pending], b: dict[int, Pending]) -> dict[int, Pending]:
    out = {sb: Pending(p.kind, set(p.units), set(p.producers), p.waiter) for sb, p in a.items()}
    for sb, p in b.items():
        if sb in out:
            add(out, sb, p.kind, p.units, min(p.producers), p.waiter)
            out[sb].producers |= p.producers
        else:
            out[sb] = Pending(p.kind, set(p.units), set(p.producers), p.waiter)
    return out


def same(a: dict[int, Pending], b: dict[int, Pending]) -> bool:
    return a.keys() == b.keys() and all(
        a[sb].kind == b[sb].kind and a[sb].units == b[sb].units for sb in a)


# --- stalls -------------------------------------------------------------------------

class Between:
    """What the instructions between a producer and a consumer do that `distance` asks:
    the units they overwrite unconditionally (the producer's result there is dead) and
    the scoreboards they set.  Grown one instruction at a time by `add`."""
    __slots__ = ("killed", "scoreboards")

    def __init__(self):
        self.killed: set = set()
        self.scoreboards: set = set()

    def add(self, slot: Slot) -> None:
        if slot.instr.pred is None:
            self.killed |= slot.write_units
        ctrl = slot.instr.ctrl
        self.scoreboards.add(ctrl.wbar)
        self.scoreboards.add(ctrl.rbar)

    def copy(self) -> "Between":
        facts = Between()
        facts.killed = set(self.killed)
        facts.scoreboards = set(self.scoreboards)
        return facts


def distance(sched: Schedule, i: int, k: int, between: Between) -> int:
    """Cycles instruction k must issue after instruction i (i before k on one path, with
    `between` describing the instructions that run in between)."""
    table, si, sk = sched.table, sched.slots[i], sched.slots[k]
    need = table.issue(si.cls, sk.cls, si.instr.ctrl.rbar != 7)
    killed = between.killed
    written = si.write_map
    if written and not killed.isdisjoint(written):
        written = {unit: key for unit, key in written.items() if unit not in killed}
    if written and not sk.read_units.isdisjoint(written):
        for read in sk.reads:
            key = written.get(read.unit)
            if key is not None:
                need = max(need, table.raw(key, sk.cls, read.role))
    if not sk.write_units.isdisjoint(si.read_units):
        need = max(need, table.war(si.cls, sk.cls))
    if written and not sk.write_units.isdisjoint(written):
        need = max(need, table.waw(si.cls, sk.cls))
    ctrl_i, ctrl_k = si.instr.ctrl, sk.instr.ctrl
    if ctrl_k.wait:
        for sb in (ctrl_i.wbar, ctrl_i.rbar):
            if sb != 7 and ctrl_k.wait >> sb & 1 and sb not in between.scoreboards:
                need = max(need, si.info.get("wait_after_set", 2))
    return need


class MostNeeded:
    """Upper bounds on `distance(i, k)` from what i writes and reads and k's class,
    operand roles and waits, but not which units meet: the walks of assign_stalls
    skip the exact question where the bound cannot raise a time.  Each term of
    `distance` is bounded by the same table entry with the unit tests left out.
    `any_producer(k)` bounds it over every i: issue times never decrease along the
    layout, so a walk back from k stops once that bound cannot matter."""

    def __init__(self, sched: Schedule):
        self.table = sched.table
        self.shared = sched.table.bound_memo    # (producer, consumer signature) -> bound
        producers: dict = {}        # signature -> its number here
        consumers: dict = {}
        self.pid, self.cid = [], []     # per instruction: its signatures' numbers
        for slot in sched.slots:
            ctrl = slot.instr.ctrl
            wait = slot.info.get("wait_after_set", 2) if ctrl.wbar != 7 or ctrl.rbar != 7 else 0
            keys = tuple(sorted(set(slot.write_map.values())))
            producer = (slot.cls, keys, bool(slot.read_units), ctrl.rbar != 7, wait)
            roles = tuple(sorted({read.role for read in slot.reads}))
            consumer = (slot.cls, roles, bool(slot.write_units), bool(ctrl.wait))
            self.pid.append(producers.setdefault(producer, len(producers)))
            self.cid.append(consumers.setdefault(consumer, len(consumers)))
        self.producers, self.consumers = list(producers), list(consumers)
        self.grid = [[None] * len(consumers) for _ in producers]   # [pid][cid] -> bound
        self.any = [None] * len(consumers)                          # [cid] -> over every pid

    def __call__(self, i: int, k: int) -> int:
        return self.pair(self.pid[i], self.cid[k])

    def pair(self, p: int, c: int) -> int:
        bound = self.grid[p][c]
        if bound is None:
            key = (self.producers[p], self.consumers[c])
            bound = self.shared.get(key)
            if bound is None:
                bound = self.shared[key] = self._bound(*key)
            self.grid[p][c] = bound
        return bound

    def any_producer(self, k: int) -> int:
        c = self.cid[k]
        bound = self.any[c]
        if bound is None:
            bound = self.any[c] = max(self.pair(p, c) for p in range(len(self.producers)))
        return bound

    def _bound(self, producer: tuple, consumer: tuple) -> int:
        table = self.table
        cls_i, keys, reads, read_scoreboard, wait = producer
        cls_k, roles, writes, waits = consumer
        values = [table.issue(cls_i, cls_k, read_scoreboard)]
        values += [table.raw(key, cls_k, role) for key in keys for role in roles]
        if writes and reads:
            values.append(table.war(cls_i, cls_k))
        if writes and keys:
            values.append(table.waw(cls_i, cls_k))
        if waits:
            values.append(wait)
        return max(values)


# Instructions whose stall field must stay small (none so far: a long stall is legal
# once the yield bit is clear, see ILLEGAL_YIELD_STALL).
SHORT_STALL_OPS: dict = {}
# nvdisasm calls every word with the yield bit set and a stall of 0 or of 12..15
# undefined (measured over 17 opcodes of every class, all 32 stall/yield pairs).
ILLEGAL_YIELD_STALL = 12


def assign_stalls(sched: Schedule) -> None:
    """Issue times in layout order, repeated until they stop changing (at most 5
    rounds): a branch's stall must cover its target block, whose offsets a forward
    branch only knows from the round before.  A round reads the times of earlier
    rounds only there (`taken_edge_needs` records those offsets): when every offset
    it read equals what the round ended with, another round would compute the same
    times, and the loop stops without running it."""
    slots, rules = sched.slots, sched.table.rules_misc
    real = sched.real
    falls, targeted = sched._falls, sched.targeted
    branches = {k for k in real if sched.targets(k)}
    min_stall = [slot.info.get("min_stall", 1) for slot in slots]
    most = sched.most = MostNeeded(sched)
    grid, pid, cid = most.grid, most.pid, most.cid
    time: dict[int, int] = {}
    for _ in range(5):      # until a forward branch sees its target's final offsets
        previous = dict(time)
        offsets_read: list = []
        # While every time so far equals the last round's, an instruction not after a
        # branch gets the time it got then (from the same earlier times, by the same
        # rules): `time` still holds it.  Only after a branch does a round differ.
        same = bool(previous)
        for n, j in enumerate(real):
            if n == 0:
                time[j] = 0
                continue
            p = real[n - 1]
            if same and p not in branches:
                continue
            tp = time[p]
            t = tp + min_stall[p]
            if n == 1:
                t = max(t, tp + rules["entry_min_stall"])
            if falls[p]:
                if j in targeted:
                    t = max(t, tp + rules["before_label_min_stall"])
                # back along j's fallthrough chain (p = j - 1 first) while latencies last
                between, filled = None, j       # `between` describes slots filled..j-1
                c, most_j = cid[j], most.any_producer(j)
                i = p
                while i >= 0 and j - i <= WINDOW and falls[i]:
                    ti = time[i]
                    if tp - ti >= HORIZON or ti + most_j <= t:
                        break
                    bound = grid[pid[i]][c]
                    if bound is None:
                        bound = most(i, j)
                    if ti + bound > t:
                        if between is None:
                            between = Between()
                        while filled > i + 1:
                            filled -= 1
                            between.add(slots[filled])
                        need = distance(sched, i, j, between)
                        if ti + need > t:
                            t = ti + need
                    i -= 1
            if p in branches:
                t = max(t, taken_edge_needs(sched, p, time, previous, offsets_read))
            if slots[p].instr.op in SHORT_STALL_OPS and t - time[p] > SHORT_STALL_OPS[slots[p].instr.op]:
                # nvdisasm rejects a BSSY with a long stall: issue it later instead
                time[p] = t - SHORT_STALL_OPS[slots[p].instr.op]
                same = False
            if same and t != time[j]:
                same = False
            time[j] = t
        if time == previous or all(time[k] - time[start] == offset for start, k, offset in offsets_read):
            break
    for n, j in enumerate(real):
        ctrl = slots[j].instr.ctrl
        if n + 1 < len(real):
            stall = time[real[n + 1]] - time[j]
        else:
            stall = max(min_stall[j], taken_edge_needs(sched, j, time, time, []) - time[j])
        ctrl.stall = min(MAX_STALL, max(min_stall[j], stall))


def taken_edge_needs(sched: Schedule, br: int, time: dict, previous: dict, offsets_read: list) -> int:
    """Earliest time the instruction after branch `br` may issue so that, when the
    branch is taken, its target block's first instructions still see every latency:
    the branch's stall is paid on both paths.  Each (block start, instruction, offset)
    it uses is appended to `offsets_read`."""
    slots, most = sched.slots, sched.most
    need = 0
    t_br = time[br]
    for target in sched.targets(br):
        start = sched.block_start[target]
        known = time if start <= br else previous
        producers = sched.producers(br)     # the branch, then back along its chain
        target_part = Between()             # slots start..k-1
        for k in range(start, min(len(slots), start + WINDOW)):
            if slots[k].padding:
                break
            offset = (known[k] - known[start]) if (k in known and start in known) else k - start
            offsets_read.append((start, k, offset))
            if offset >= HORIZON:
                break
            between, filled = None, br + 1  # then also slots filled..br
            most_k = most.any_producer(k)
            for i in producers:
                ti = time[i]
                if t_br - ti >= HORIZON or ti + most_k - offset <= need:
                    break
                if ti + most(i, k) - offset > need:
                    if between is None:
                        between = target_part.copy()
                    while filled > i + 1:
                        filled -= 1
                        between.add(slots[filled])
                    need = max(need, ti + distance(sched, i, k, between) - offset)
            if not sched.falls_through(k):
                break
            target_part.add(slots[k])
    return need


# --- yield and reuse ----------------------------------------------------------------

def assign_yield(sched: Schedule) -> None:
    """Decoupled instructions keep the bit set (no yield).  Coupled ones clear it from
    3 stall cycles up, keep it at 1, and at 2 clear it once `yield_counter` cycles
    have passed since the last instruction that cleared it."""
    counter = sched.table.rules_misc["yield_counter"]
    since = 0
    for k in sched.real:
        slot = sched.slots[k]
        ctrl = slot.instr.ctrl
        if ctrl.stall == 0 or ctrl.stall >= ILLEGAL_YIELD_STALL:
            # ERRBAR and the padding: never a reason to keep the slot; and nvdisasm
            # rejects yield set with a stall of 12 or more (any opcode, measured)
            bit = 0
        elif slot.info["yield_mode"] == "always":
            bit = 1
        elif ctrl.stall >= 3:
            bit = 0
        elif ctrl.stall == 2:
            bit = 0 if since >= counter else 1
        else:
            bit = 1
        ctrl.yield_bit = bit
        since = 0 if bit == 0 else since + ctrl.stall


def source_regs(sched: Schedule, k: int) -> dict[int, Reg]:
    """Reuse-cache slot -> the general register an instruction reads there."""
    slot = sched.slots[k]
    out = {}
    cache_slots = None
    for index, operand in enumerate(slot.instr.srcs):
        if isinstance(operand, Reg) and operand.file == "R" and not operand.is_zero:
            if cache_slots is None:
                cache_slots = sched.table.reuse_slots(slot.instr)
            cache_slot = cache_slots[index] if index < len(cache_slots) else None
            if cache_slot is not None:
                out[cache_slot] = operand
    return out


def bank(reg: Reg) -> int:
    """Register bank: the reuse cache keeps one entry per operand slot and bank."""
    return reg.num % REGISTER_BANKS


def assign_reuse(sched: Schedule) -> None:
    """A source is marked .reuse when the next instruction that uses the operand
    reuse cache reads the same register in the same slot, with no read of another
    register of the same bank through that slot, no yield (which lets another warp
    evict the cache) and no write to the register in between.  Decoupled
    instructions neither set nor disturb the cache."""
    slots, real = sched.slots, sched.real
    sources: dict = {}      # k -> source_regs(sched, k), asked again and again below

    def regs_of(k: int) -> dict:
        regs = sources.get(k)
        if regs is None:
            regs = sources[k] = source_regs(sched, k)
        return regs

    for n, i in enumerate(real):
        slot = slots[i]
        slot.instr.ctrl.reuse = 0
        if not slot.info["reuse"] or slot.instr.ctrl.yield_bit == 0:
            continue
        bits = 0
        for cache_slot, reg in regs_of(i).items():
            units = set(latency.reg_units(reg))
            if units & slot.write_units:
                continue
            for m in range(n + 1, len(real)):
                k = real[m]
                if not sched.falls_through(k - 1) or k in sched.targeted:
                    break
                other = slots[k]
                if other.info["reuse"]:
                    regs = regs_of(k)
                    if cache_slot in regs and bank(regs[cache_slot]) == bank(reg):
                        if regs[cache_slot].key() == reg.key() and regs[cache_slot].width == reg.width:
                            bits |= 1 << cache_slot
                        break
                if units & other.write_units or other.instr.ctrl.yield_bit == 0:
                    break
        slot.instr.ctrl.reuse = bits


def assign_padding(sched: Schedule) -> None:
    codes = sched.table.rules_misc["padding"]
    for slot in sched.slots:
        if slot.padding:
            code = codes.get(slot.instr.op, {"stall": 0, "yield_bit": 0})
            slot.instr.ctrl = Control(stall=code["stall"], yield_bit=code["yield_bit"])
