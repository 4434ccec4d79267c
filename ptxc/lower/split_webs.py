"""split_webs: give each independent use of a virtual register its own register.

A PTX register (or a register of a learned ptxas sequence) may carry unrelated
values one after the other.  Kept as one value it would hold one physical
register over all of them, and its live ranges would interfere with everything
in between.  This pass computes reaching definitions per 32-bit register and
splits each register into webs: definitions that reach a common use (or that a
guarded definition may leave standing) are one web.  Each web after the first
gets a fresh virtual register.

Only registers never named as part of a wider operand are split (pairs and
quads stay whole).

Expects: virtual registers, blocks in layout order ending at their branches.
Guarantees: same values; a register that is written more than once carries one
web of definitions and uses.
"""
from __future__ import annotations

from collections import deque
from dataclasses import replace

from ..sass.ir import Mem, Reg
from .analysis import is_guarded, map_regs, read_regs, successors, written_regs


def split_webs(func) -> None:
    instrs, block_of = [], []
    for b, block in enumerate(func.blocks):
        for instr in block.instrs:
            instrs.append(instr)
            block_of.append(b)
    candidates = _candidates(instrs)
    if not candidates:
        return
    defs_at = {}   # instr index -> units it writes (candidates only)
    for i, instr in enumerate(instrs):
        for r in written_regs(instr):
            key = (r.file, r.num, r.virtual)    # r.key()
            if key in candidates:
                defs_at.setdefault(i, []).append(key)
    reach_in = _reaching(func, instrs, block_of, defs_at)
    reads = [read_regs(instr) for instr in instrs]
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    # Walk each block with its reaching definitions; link the definitions reaching a use.
    uses_web = {}   # (instr index, unit) -> a definition reaching it
    starts = {}
    for i, b in enumerate(block_of):
        starts.setdefault(b, i)
    for b, start in starts.items():
        current = dict(reach_in[b])   # (its sets are replaced below, never changed in place)
        i = start
        while i < len(instrs) and block_of[i] == b:
            instr = instrs[i]
            for reg in reads[i]:
                unit = (reg.file, reg.num, reg.virtual)     # reg.key()
                if unit in candidates:
                    reaching = current.get(unit, set())
                    for d in reaching:
                        union(d, next(iter(reaching)))
                    if reaching:
                        uses_web[(i, unit)] = next(iter(reaching))
            for unit in defs_at.get(i, ()):
                site = (i, unit)
                find(site)
                if is_guarded(instr):
                    for d in current.get(unit, set()):
                        union(site, d)
                    current[unit] = current.get(unit, set()) | {site}
                else:
                    current[unit] = {site}
            i += 1
    # A fresh register for every web but the first of each unit.
    webs = {}
    for site in list(parent):
        webs.setdefault(site[1], set()).add(find(site))
    rename = {}
    for unit, roots in webs.items():
        if len(roots) < 2:
            continue
        for root in sorted(roots)[1:]:
            rename[root] = func.new_vreg(unit[0]).num
    if not rename:
        return
    for i in sorted(set(defs_at) | {i for i, _unit in uses_web}):    # the others have nothing to rename
        instr = instrs[i]
        def_units = {u: rename.get(find((i, u))) for u in defs_at.get(i, ())}
        use_units = {}
        for reg in reads[i]:
            site = uses_web.get((i, reg.key()))
            if site is not None:
                use_units[reg.key()] = rename.get(find(site))
        if any(v is not None for v in def_units.values()) or any(v is not None for v in use_units.values()):
            _rewrite(instr, def_units, use_units)   # (with nothing renamed it changes nothing)


def _candidates(instrs) -> set:
    """Virtual units written more than once and only ever named alone."""
    wide, written = set(), {}
    for instr in instrs:
        for operands in (instr.dsts, instr.srcs):
            for op in operands:
                if isinstance(op, Reg):
                    if op.virtual and op.width > 1:
                        wide.update((op.file, op.num + k, True) for k in range(op.width))
                elif isinstance(op, Mem):
                    for reg in (op.base, op.ubase):
                        if reg is not None and reg.virtual and reg.width > 1:
                            wide.update((reg.file, reg.num + k, True) for k in range(reg.width))
        pred = instr.pred
        if pred is not None and pred.virtual and pred.width > 1:
            wide.update((pred.file, pred.num + k, True) for k in range(pred.width))
        for reg in written_regs(instr):
            if reg.virtual:
                key = (reg.file, reg.num, True)
                written[key] = written.get(key, 0) + 1
    return {u for u, n in written.items() if n > 1 and u not in wide}


def _reaching(func, instrs, block_of, defs_at) -> list:
    """Per block: unit -> definition sites reaching its start."""
    n = len(func.blocks)
    succs = successors(func)
    gen = [dict() for _ in range(n)]      # unit -> sites live at block end (from this block)
    killed = [set() for _ in range(n)]    # units an unguarded definition overwrites
    for i, units in defs_at.items():
        b = block_of[i]
        for unit in units:
            if is_guarded(instrs[i]):
                gen[b].setdefault(unit, set()).add((i, unit))
            else:
                gen[b][unit] = {(i, unit)}
                killed[b].add(unit)
    # A worklist to the (unique, least) fixpoint: a block is visited again only when
    # what reaches its start grew, and then passes on only what is new (`fresh`: the
    # sites that reached its start since its last visit); its own definitions go out
    # on its first visit, and what they kill never gets through.
    reach_in = [dict() for _ in range(n)]
    fresh = [dict() for _ in range(n)]
    first = [True] * n
    work, queued = deque(range(n)), [True] * n
    while work:
        b = work.popleft()
        queued[b] = False
        arrived, fresh[b] = fresh[b], {}
        out = {}
        for unit, sites in arrived.items():
            if unit not in killed[b]:
                out[unit] = sites
        if first[b]:
            first[b] = False
            for unit, sites in gen[b].items():
                out[unit] = out.get(unit, set()) | sites if unit not in killed[b] or _guarded_only(sites, instrs) \
                    else sites
        for s in succs[b]:
            target, pending = reach_in[s], fresh[s]
            grew = False
            for unit, sites in out.items():
                have = target.get(unit)
                if have is None:
                    target[unit] = set(sites)
                    new = sites
                elif sites <= have:
                    continue
                else:
                    new = sites - have
                    have |= new
                grew = True
                waiting = pending.get(unit)
                if waiting is None:
                    pending[unit] = set(new)
                else:
                    waiting |= new
            if grew and not queued[s]:
                queued[s] = True
                work.append(s)
    return reach_in


def _guarded_only(sites, instrs) -> bool:
    return all(is_guarded(instrs[i]) for i, _ in sites)


def _rewrite(instr, def_units: dict, use_units: dict) -> None:
    def dst(reg: Reg) -> Reg:
        new = def_units.get(reg.key())
        return replace(reg, num=new) if reg.virtual and new is not None else reg

    def src(reg: Reg) -> Reg:
        new = use_units.get(reg.key())
        return replace(reg, num=new) if reg.virtual and new is not None else reg

    instr.dsts = [dst(op) if isinstance(op, Reg) else op for op in instr.dsts]
    written = instr.dsts
    instr.dsts = []
    map_regs(instr, src)
    instr.dsts = written
