"""Analyses of a SASS IR function, computed here and consumed by the passes: which
registers an instruction reads and writes, the CFG (successors, the Code view with its
predecessors), liveness per 32-bit register unit, the values (webs) of virtual
registers, and dominators and post-dominators.

Expects: any SASS IR function (virtual or physical registers, blocks in layout order,
branches naming block labels).  Guarantees: nothing is changed; each analysis is a
fresh result (passes that change the code compute it again).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..sass.ir import Mem, Reg

BRANCHES = frozenset({"BRA", "BRX", "JMP", "JMX"})
ENDS = frozenset({"EXIT", "RET", "KILL"})
STOPS = BRANCHES | ENDS
PREDICATE_FILES = frozenset({"P", "UP"})


# --- operands --------------------------------------------------------------------

def read_regs(instr) -> list[Reg]:
    """Registers an instruction reads: sources, address bases, indexed constant
    banks and its guard predicate."""
    out = []
    append = out.append
    for op in instr.srcs:
        if isinstance(op, Reg):
            if not op.is_zero:
                append(op)
        elif isinstance(op, Mem):
            base, ubase = op.base, op.ubase
            if base is not None and not base.is_zero:
                append(base)
            if ubase is not None and not ubase.is_zero:
                append(ubase)
        else:
            index = getattr(op, "index", None)
            if isinstance(index, Reg) and not index.is_zero:
                append(index)
    pred = instr.pred
    if pred is not None and not pred.is_zero:
        append(pred)
    return out


def source_regs(instr) -> list[Reg]:
    """Registers an instruction reads as operands (its guard predicate excluded)."""
    return [r for r in read_regs(instr) if r is not instr.pred]


def written_regs(instr) -> list[Reg]:
    return [r for r in instr.dsts if isinstance(r, Reg) and not r.is_zero]


def units(reg: Reg) -> list[tuple]:
    """The 32-bit register units a register operand covers: (file, num, virtual)."""
    if reg.width == 1:
        return [(reg.file, reg.num, reg.virtual)]
    return [(reg.file, reg.num + k, reg.virtual) for k in range(reg.width)]


def is_guarded(instr) -> bool:
    """A predicated instruction may not execute: its writes keep the old value."""
    return instr.pred is not None and not (instr.pred.is_zero and not instr.pred.inv)


def map_regs(instr, fn) -> None:
    """Replace every register operand of `instr` by fn(reg) (address bases too)."""
    def one(op):
        if isinstance(op, Reg):
            return fn(op)
        if isinstance(op, Mem):
            return replace(op, base=fn(op.base) if op.base is not None else None,
                           ubase=fn(op.ubase) if op.ubase is not None else None)
        if isinstance(getattr(op, "index", None), Reg):
            return replace(op, index=fn(op.index))
        return op
    instr.dsts = [one(op) for op in instr.dsts]
    instr.srcs = [one(op) for op in instr.srcs]
    if instr.pred is not None:
        instr.pred = fn(instr.pred)


# --- control flow and liveness ------------------------------------------------------

@dataclass
class Code:
    """A function's instructions in order, with the block structure around them."""
    instrs: list                   # every instruction, layout order
    block_of: list                 # instruction index -> block index
    starts: list                   # block index -> first instruction index
    succs: list                    # block index -> successor block indices
    live_out: list = field(default_factory=list)   # instruction index -> set of units
    # Per instruction, computed once (the allocator asks for them many times): the
    # registers it reads (guard included), its source operands, its results.
    reads: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    results: list = field(default_factory=list)

    @property
    def preds(self) -> list:
        return predecessors(self.succs)

    def block_range(self, b: int) -> range:
        end = self.starts[b + 1] if b + 1 < len(self.starts) else len(self.instrs)
        return range(self.starts[b], end)


def successors(func) -> list[list[int]]:
    """Successor blocks of each block: branch targets, and the next block unless
    the block ends in an unconditional branch or exit."""
    index = {block.label: b for b, block in enumerate(func.blocks)}
    succs = []
    for b, block in enumerate(func.blocks):
        out, falls = [], True
        for instr in block.instrs:
            if instr.op in BRANCHES:
                out += [index[op.label] for op in instr.srcs if getattr(op, "label", None) in index]
            if instr.op in STOPS and not is_guarded(instr) and not _has_condition(instr):
                falls = False
        if falls and b + 1 < len(func.blocks):
            out.append(b + 1)
        succs.append(sorted(set(out)))
    return succs


def predecessors(succs: list) -> list[list[int]]:
    """Predecessor blocks of each block, in block order, from the successor lists."""
    preds = [[] for _ in succs]
    for b, out in enumerate(succs):
        for s in out:
            preds[s].append(b)
    return preds


def _has_condition(instr) -> bool:
    """`BRA !P2, L` branches only where its predicate operand holds."""
    return any(isinstance(op, Reg) and op.file in ("P", "UP") and not (op.is_zero and not op.inv)
               for op in instr.srcs)


def build_code(func, files: frozenset | None = None) -> Code:
    """The function's code and its liveness (of the register files in `files` only, when
    given: units of one file never affect another's liveness).  With `files`, the
    registers read (reads, sources) are those of `files` only and the results those
    of `files` and the predicates (whose writes liveness tracks for guards): all
    that liveness of `files` depends on."""
    instrs, block_of, starts = [], [], []
    for b, block in enumerate(func.blocks):
        starts.append(len(instrs))
        instrs += block.instrs
        block_of += [b] * len(block.instrs)
    code = Code(instrs, block_of, starts, successors(func))
    if files is not None and files <= PREDICATE_FILES:
        # predicates are never inside an address: read_regs of their files, directly
        code.reads = [[r for r in instr.srcs if isinstance(r, Reg) and r.file in files and not r.is_zero]
                      + ([instr.pred] if instr.pred is not None and instr.pred.file in files
                         and not instr.pred.is_zero else []) for instr in instrs]
    else:
        code.reads = [read_regs(instr) for instr in instrs]
    code.results = [written_regs(instr) for instr in instrs]
    if files is not None:
        kept = files | PREDICATE_FILES
        code.reads = [[r for r in regs if r.file in files] if regs else regs for regs in code.reads]
        code.results = [[r for r in regs if r.file in kept] if regs else regs for regs in code.results]
    code.sources = [[r for r in regs if r is not instr.pred] for regs, instr in zip(code.reads, instrs)]
    code.live_out = liveness(code, files)
    return code


def uses_and_kills(instr) -> tuple[set, set]:
    used = {u for r in read_regs(instr) for u in units(r)}
    killed = set() if is_guarded(instr) else {u for r in written_regs(instr) for u in units(r)}
    return used, killed


_USES_AND_KILLS = uses_and_kills


def liveness(code: Code, files: frozenset | None = None) -> list[set]:
    """Units live after each instruction.  A guarded write does not kill, except
    where predication makes it a full definition after all (see _scan_block): two
    writes under complementary guards (if-converted arms of a diamond), or a write
    whose every later read, in its block and before any redefinition of the guard,
    is under the same guard (a temporary of a predicated arm, like a carry)."""
    effects = [_effects(instr, reads, results) for instr, reads, results in zip(code.instrs, code.reads, code.results)]
    if files is not None:
        effects = [({u for u in used if u[0] in files}, {u for u in killed if u[0] in files},
                    {u for u in written if u[0] in files}, guard, preds)
                   for used, killed, written, guard, preds in effects]
    live_in = [set() for _ in code.starts]
    # Round-robin to the fixpoint; a block is scanned again only when the live-in
    # set of one of its successors changed since its last scan (the scan is a
    # function of that input alone, so skipping it gives the same sets).
    version = [0] * len(code.starts)
    seen: list = [None] * len(code.starts)
    changed = True
    while changed:
        changed = False
        for b in reversed(range(len(code.starts))):
            stamp = tuple(version[s] for s in code.succs[b])
            if stamp == seen[b]:
                continue
            seen[b] = stamp
            live = set().union(*(live_in[s] for s in code.succs[b]))
            live = _scan_block(code, b, live, effects)
            if live != live_in[b]:
                live_in[b], changed = live, True
                version[b] += 1
    live_out = [set() for _ in code.instrs]
    for b in range(len(code.starts)):
        live = set().union(*(live_in[s] for s in code.succs[b]))
        _scan_block(code, b, live, effects, live_out)
    return live_out


def _effects(instr, reads: list, results: list) -> tuple:
    """(used, killed, written units, guard key, predicate keys written) of one instruction,
    given the registers it reads and writes (read_regs and written_regs of it)."""
    guard = _guard_key(instr)       # None where the instruction is not guarded
    written = set()
    for r in results:
        if r.width == 1:
            written.add((r.file, r.num, r.virtual))
        else:
            written.update(units(r))
    if uses_and_kills is _USES_AND_KILLS:
        # what uses_and_kills(instr) computes, from the registers build_code collected
        used = set()
        for r in reads:
            if r.width == 1:
                used.add((r.file, r.num, r.virtual))
            else:
                used.update(units(r))
        killed = set(written) if guard is None else set()
    else:                   # replaced (tests plant liveness bugs through it)
        used, killed = uses_and_kills(instr)
    preds = {r.key() for r in results if r.file in PREDICATE_FILES} if results else set()
    return used, killed, written, guard, preds


def _guard_key(instr):
    if not is_guarded(instr):
        return None
    return (instr.pred.key(), instr.pred.inv)


def _scan_block(code: Code, b: int, live: set, effects: list, record: list | None = None) -> set:
    """Backward over block b from `live` at its end; returns what is live at its start."""
    live = set(live)
    at_end = set(live)
    partial: dict = {}    # unit -> guards of later writes to it
    private: dict = {}    # unit -> the one guard of all its later reads (None: some other)
    guarded: set = set()  # units private may give a guard (not None): a superset
    for i in reversed(code.block_range(b)):
        if record is not None:
            record[i] = set(live)
        used, killed, written, guard, written_preds = effects[i]
        if guard is None:
            kill = killed
            for u in killed:
                partial.pop(u, None)
                private.pop(u, None)
        else:
            kill = set(killed)
            for u in written:
                if (guard[0], not guard[1]) in partial.get(u, ()) or (u in private and private[u] == guard):
                    kill.add(u)
                partial.setdefault(u, set()).add(guard)
        for key in written_preds:   # a new guard value: earlier writes are not under it
            for u in list(guarded):
                g = private.get(u)
                if g is None:
                    guarded.discard(u)
                elif g[0] == key:
                    private[u] = None
                    guarded.discard(u)
            for u in partial:
                partial[u] = {g for g in partial[u] if g[0] != key}
        live -= kill            # (in place: `live` is this scan's own set, recorded by copy)
        live |= used
        for u in used:
            partial.pop(u, None)   # this read needs the value from above: later writes do not cover it
            if guard is not None and u == guard[0]:
                continue
            if u in at_end and u not in kill:
                private[u] = None
            elif u not in private:
                private[u] = guard
                if guard is not None:
                    guarded.add(u)
            elif private[u] != guard:
                private[u] = None
    return live


# --- values -------------------------------------------------------------------------------

@dataclass(eq=False)
class Value:
    """One virtual register: `width` consecutive units from virtual number `first`,
    named by operands at (offset, width) positions that must stay aligned."""
    file: str
    first: int
    width: int
    refs: set = field(default_factory=set)
    phys: int | None = None
    defs: list = field(default_factory=list)   # (instr index, operand) writing it
    uses: list = field(default_factory=list)   # (instr index, operand) reading it

    def unit(self, k: int) -> tuple:
        return (self.file, self.first + k, True)

    def fits(self, base: int) -> bool:
        return all((base + offset) % width == 0 for offset, width in self.refs)

    def __repr__(self) -> str:
        where = f"->{self.file}{self.phys}" if self.phys is not None else ""
        return f"%{self.file}{self.first}:{self.width}{where}"


def collect_values(code: Code) -> dict:
    """Virtual unit -> its Value.  Operands that overlap name the same value (a pair
    n and its high half n+1); each Value also learns where it is written and read."""
    spans: dict = {}
    for results, reads in zip(code.results, code.reads):
        for regs in (results, reads):
            for reg in regs:
                if reg.virtual:
                    refs = spans.get(reg.file)
                    if refs is None:
                        refs = spans[reg.file] = set()
                    refs.add((reg.num, reg.width))
    value_of = {}
    for file, refs in spans.items():
        current = None
        for num, width in sorted(refs):
            if current is None or num >= current.first + current.width:
                current = Value(file, num, width)
            current.width = max(current.width, num + width - current.first)
            current.refs.add((num - current.first, width))
            for k in range(num, num + width):
                value_of[(file, k, True)] = current
    for value in set(value_of.values()):
        while value.width & (value.width - 1):   # a 3-unit span is a quad
            value.width += 1
    for i, (results, reads) in enumerate(zip(code.results, code.reads)):
        for reg in results:
            if reg.virtual:
                value_of[(reg.file, reg.num, True)].defs.append((i, reg))
        for reg in reads:
            if reg.virtual:
                value_of[(reg.file, reg.num, True)].uses.append((i, reg))
    return value_of


# --- dominators ----------------------------------------------------------------------

def dominators(preds: list, n: int) -> list:
    """Immediate dominators of blocks 0..n-1 (block 0 the entry); None if unreachable."""
    succs = [[s for s in range(n) if b in preds[s]] for b in range(n)]
    return _immediate_dominators(succs, preds, 0, n)


def post_dominators(succs, n: int) -> list:
    """Immediate post-dominators; None where only the exit (a virtual node every block
    without successors reaches) post-dominates."""
    rsuccs = [[] for _ in range(n + 1)]   # edges of the reversed graph, node n the exit
    for b, out in enumerate(succs):
        if not out:
            rsuccs[n].append(b)
        for s in out:
            rsuccs[s].append(b)
    rpreds = [[] for _ in range(n + 1)]
    for b, out in enumerate(rsuccs):
        for s in out:
            rpreds[s].append(b)
    ipdom = _immediate_dominators(rsuccs, rpreds, n, n + 1)
    return [x if x != n else None for x in ipdom[:n]]


def dominates(idom: list, a: int, b: int) -> bool:
    """Whether `a` dominates `b` in the tree `idom` (of dominators or post_dominators)."""
    while b is not None:
        if a == b:
            return True
        b = idom[b] if idom[b] != b else None
    return False


def _immediate_dominators(succs: list, preds: list, start: int, n: int) -> list:
    """Cooper, Harvey and Kennedy's iteration over the graph's reverse postorder."""
    order = reverse_postorder(succs, start)
    rank = {b: k for k, b in enumerate(order)}
    idom = [None] * n
    idom[start] = start
    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            new = None
            for p in preds[b]:
                if idom[p] is None:
                    continue
                new = p if new is None else _intersect(idom, rank, p, new)
            if new is not None and idom[b] != new:
                idom[b], changed = new, True
    return idom


def _intersect(idom, rank, a, b):
    while a != b:
        while rank[a] > rank[b]:
            a = idom[a]
        while rank[b] > rank[a]:
            b = idom[b]
    return a


def reverse_postorder(succs, start: int) -> list:
    """The nodes reachable from `start`, in reverse postorder of a depth-first walk."""
    seen, order = set(), []
    stack = [(start, iter(succs[start]))]
    seen.add(start)
    while stack:
        node, it = stack[-1]
        nxt = next((s for s in it if s not in seen), None)
        if nxt is None:
            stack.pop()
            order.append(node)
        else:
            seen.add(nxt)
            stack.append((nxt, iter(succs[nxt])))
    return list(reversed(order))
