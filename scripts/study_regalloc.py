#!/usr/bin/env python3
"""How often does ptxc's register allocator pick the register ptxas picked?

For every kernel of the corpus (tests/data/regalloc/*.cu), take ptxas's own code
(nvcc -arch=sm_89 -cubin, cuobjdump -sass; cached beside the source as NAME.sass
with the register counts in NAME.regs), undo its allocation -- every web (the
definitions that reach common uses) of a physical register becomes a fresh
virtual register, and webs read together as a pair or quad become one wide value
-- then run ptxc.lower.assign_regs on the result and count the values that land
where ptxas put them.  Prints one line per kernel and the totals:

    scripts/study_regalloc.py            # all kernels, from the cached listings
    scripts/study_regalloc.py --bless    # recompile the corpus with nvcc first
    scripts/study_regalloc.py -v vadd    # list the values that differ
    scripts/study_regalloc.py --ablate   # the match with each rule switched off
    scripts/study_regalloc.py --pipeline # nvcc's PTX through ptxc's own passes

--pipeline is the faithful measure, since there the virtual registers are numbered
in PTX order as ptxas numbers its own; it covers only kernels whose PTX ptxc can
lower to exactly ptxas's instruction sequence.
"""
from __future__ import annotations

import argparse
import copy
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptxc.lower.analysis import (build_code, map_regs, read_regs,  # noqa: E402
                                 is_guarded, units, written_regs, BRANCHES, ENDS)
from ptxc.lower.assign_regs import assign_regs  # noqa: E402
from ptxc.lower.check_regs import check_allocation  # noqa: E402
from ptxc.sass.ir import Block, CBank, Function, Imm, Instr, Mem, Reg, SpecialReg, Target  # noqa: E402
from ptxc.sass.listing import parse_cuobjdump_sass  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "regalloc"
SEED_VADD = ROOT / "testsuite" / "vadd.cu"

# Registers ptxas fixes by convention: they stay physical in the stripped code.
FIXED_FILES = {"UR", "UP"}
FIXED_R = {1}


# --- the corpus ----------------------------------------------------------------------

def sources() -> list[Path]:
    return [SEED_VADD] + sorted(CORPUS.glob("*.cu"))


def cached(source: Path) -> tuple[Path, Path]:
    stem = "seed_vadd" if source == SEED_VADD else source.stem
    return CORPUS / f"{stem}.sass", CORPUS / f"{stem}.regs"


def bless(jobs: int = 2) -> None:
    """Recompile every corpus source with nvcc and cache listing and register counts."""
    import tempfile
    from concurrent.futures import ThreadPoolExecutor
    from ptxc import oracle

    def one(source: Path) -> None:
        sass, regs = cached(source)
        with tempfile.TemporaryDirectory() as tmp:
            cubin = oracle.nvcc_cubin(source, Path(tmp) / "x.cubin")
            sass.write_text(oracle.cuobjdump_sass(cubin))
            usage = oracle.run("cuobjdump", "-res-usage", str(cubin)).stdout
        counts = re.findall(r"Function (\S+):\s*REG:(\d+)", usage)
        regs.write_text("".join(f"{name} {count}\n" for name, count in counts))

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, sources()))


def kernels(names: list[str] | None = None):
    """(kernel name, ptxas's Function, ptxas's register count) over the corpus."""
    for _, name, func, regs in kernels_by_source(names):
        yield name, func, regs


def kernels_by_source(names: list[str] | None = None):
    """(source stem, kernel name, ptxas's Function, ptxas's register count)."""
    for source in sources():
        sass, regs = cached(source)
        counts = dict(line.split() for line in regs.read_text().splitlines())
        for name, listing in parse_cuobjdump_sass(sass.read_text()).items():
            if names and not any(n in name for n in names):
                continue
            yield (sass.stem, name, split_zero_pairs(function_from_listing(name, listing)), int(counts[name]))


def function_from_listing(name: str, listing: list) -> Function:
    """Cut cuobjdump's instruction list into basic blocks; branch targets become
    labels; the padding after the last EXIT (BRA to itself, NOPs) is dropped."""
    instrs = [(addr, instr) for addr, instr in listing
              if instr.op != "NOP" and not (instr.op == "BRA" and _target(instr) == addr)]
    leaders = {instrs[0][0]} | {_target(i) for _, i in instrs if _target(i) is not None}
    for (addr, instr), (next_addr, _) in zip(instrs, instrs[1:]):
        if instr.op in BRANCHES | ENDS:
            leaders.add(next_addr)
    func = Function(name)
    for addr, instr in instrs:
        if addr in leaders:
            func.blocks.append(Block(f"L{addr:x}"))
        instr.srcs = [Target(label=f"L{op.addr:x}") if isinstance(op, Target) and op.addr is not None
                      else op for op in instr.srcs]
        func.blocks[-1].instrs.append(instr)
    return func


def split_zero_pairs(func: Function) -> Function:
    """`CS2R R10, SRZ` zeroes two registers at once; ptxas fuses two zeroing moves
    into it after allocation (sumloop: R10 the counter, R11 the sum, two unrelated
    variables).  Split it back into `MOV R10, RZ; MOV R11, RZ` so that the two
    stay separate values."""
    for block in func.blocks:
        out = []
        for instr in block.instrs:
            if instr.op == "CS2R" and instr.srcs == [SpecialReg("SRZ")] and instr.dsts[0].width == 2:
                dst = instr.dsts[0]
                out += [Instr("MOV", (), [replace(dst, num=dst.num + k, width=1)], [Reg("R", 255)], instr.pred)
                        for k in (0, 1)]
            else:
                out.append(instr)
        block.instrs = out
    return func


def _target(instr):
    return next((op.addr for op in instr.srcs if isinstance(op, Target) and op.addr is not None), None)


# --- undoing ptxas's allocation -------------------------------------------------------

def _renamed(unit) -> bool:
    file, num, _ = unit
    return file not in FIXED_FILES and not (file == "R" and num in FIXED_R)


class _UnionFind:
    def __init__(self):
        self.parent = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)


def reaching_defs(code) -> list[dict]:
    """For each instruction, unit -> set of definition sites (instr index, unit)
    that reach it before it executes (a guarded write adds a site, others replace)."""
    reach_in = [{} for _ in code.starts]
    changed = True
    while changed:
        changed = False
        for b in range(len(code.starts)):
            state = dict(reach_in[b])
            for i in code.block_range(b):
                _transfer(state, i, code.instrs[i])
            for succ in code.succs[b]:
                merged = dict(reach_in[succ])
                for unit, sites in state.items():
                    merged[unit] = merged.get(unit, frozenset()) | sites
                if merged != reach_in[succ]:
                    reach_in[succ], changed = merged, True
    before = [None] * len(code.instrs)
    for b in range(len(code.starts)):
        state = dict(reach_in[b])
        for i in code.block_range(b):
            before[i] = dict(state)
            _transfer(state, i, code.instrs[i])
    return before


def _transfer(state: dict, i: int, instr) -> None:
    for reg in written_regs(instr):
        for u in units(reg):
            site = frozenset({(i, u)})
            state[u] = state.get(u, frozenset()) | site if is_guarded(instr) else site


@dataclass
class Stripped:
    func: Function          # virtual registers
    truth: dict             # (file, virtual first unit) -> ptxas's physical base
    widths: dict            # (file, virtual first unit) -> width
    sites: dict             # (file, virtual first unit) -> text of its first defining instruction


def strip_allocation(func: Function) -> Stripped:
    """Rename each web of ptxas's code to a virtual register (see the module doc)."""
    code = build_code(func)
    reaching = reaching_defs(code)
    webs = _UnionFind()        # definition sites that are one virtual unit
    for i, instr in enumerate(code.instrs):
        for reg in read_regs(instr):
            for u in filter(_renamed, units(reg)):
                sites = sorted(reaching[i].get(u, frozenset({("entry", u)})), key=str)
                for s in sites[1:]:
                    webs.union(s, sites[0])
                webs.find(sites[0])
    values = _UnionFind()      # webs that are one virtual register
    operand_sites = []         # (instr index, reg, [site per unit])
    for i, instr in enumerate(code.instrs):
        for reg in written_regs(instr):
            operand_sites.append((i, reg, [(i, u) for u in units(reg)]))
        for reg in read_regs(instr):
            operand_sites.append((i, reg, [min(reaching[i].get(u, frozenset({("entry", u)})), key=str)
                                           for u in units(reg)]))
    for i, reg, sites in operand_sites:
        if not all(map(_renamed, units(reg))):
            continue
        for s in sites:
            values.find(webs.find(s))
        for s in sites[1:]:
            values.union(webs.find(s), webs.find(sites[0]))
    # Webs of one physical unit inside one value are the same virtual unit.
    members: dict = {}
    for web in list(values.parent):
        if web == webs.find(web):
            members.setdefault(values.find(web), []).append(web)
    for group in members.values():
        by_unit: dict = {}
        for web in group:
            by_unit.setdefault(web[1], []).append(web)
        for same in by_unit.values():
            for w in same[1:]:
                webs.union(w, same[0])
    # Number the values in order of definition: the nearest the listing comes to
    # ptxas's own virtual-register order, which follows the PTX (before scheduling).
    base_of, truth, widths, sites, next_num = {}, {}, {}, {}, {}
    sites_of: dict = {}
    for site in list(webs.parent):
        if site[0] != "entry":
            sites_of.setdefault(webs.find(site), set()).add(site[0])
    for group in sorted(members.values(), key=lambda g: _birth(code, g, sites_of, webs)):
        file = group[0][1][0]
        low = min(w[1][1] for w in group)
        width = max(w[1][1] for w in group) - low + 1
        while width & (width - 1):
            width += 1
        num = next_num.get(file, 0)
        num += -num % width
        next_num[file] = num + width
        for web in group:
            base_of[webs.find(web)] = (num, low)
        truth[(file, num)] = low
        widths[(file, num)] = width
    stripped = copy.deepcopy(func)
    flat = [instr for block in stripped.blocks for instr in block.instrs]
    _apply_names(code, flat, reaching, webs, base_of)
    for (file, num) in truth:
        sites[(file, num)] = ""
    for instr in flat:
        for reg in written_regs(instr):
            if reg.virtual and sites.get((reg.file, reg.num)) == "":
                sites[(reg.file, reg.num)] = instr_text(instr)
    return Stripped(stripped, truth, widths, sites)


def _birth(code, group, sites_of, webs) -> int:
    """Sort key of a value: its first definition."""
    return min({i for web in group for i in sites_of.get(webs.find(web), ())}, default=-1)


def _apply_names(code, flat, reaching, webs, base_of) -> None:
    for i, instr in enumerate(flat):
        orig = code.instrs[i]
        names = {}
        for reg in written_regs(orig):
            if all(map(_renamed, units(reg))):
                names[("w", reg.file, reg.num, reg.width)] = _virtual(reg, webs.find((i, units(reg)[0])), base_of)
        for reg in read_regs(orig):
            if all(map(_renamed, units(reg))):
                site = min(reaching[i].get(units(reg)[0], frozenset({("entry", units(reg)[0])})), key=str)
                names[("r", reg.file, reg.num, reg.width)] = _virtual(reg, webs.find(site), base_of)

        def rename(reg, kind):
            key = (kind, reg.file, reg.num, reg.width)
            return replace(reg, num=names[key].num, virtual=True) if key in names and not reg.virtual else reg
        instr.dsts = [rename(r, "w") if isinstance(r, Reg) and not r.is_zero else r for r in instr.dsts]
        saved = instr.dsts
        instr.dsts = []
        map_regs(instr, lambda r: r if r.is_zero else rename(r, "r"))
        instr.dsts = saved


def _virtual(reg: Reg, web, base_of) -> Reg:
    num, low = base_of[web]
    return replace(reg, num=num + reg.num - low, virtual=True)


def instr_text(instr) -> str:
    """An instruction as cuobjdump would print it, virtual registers marked %."""
    def reg(op: Reg) -> str:
        name = "-" * op.neg + "!" * op.inv + "%" * op.virtual + f"{op.file}{op.num}"
        return name + {2: ".64", 4: ".128"}.get(op.width, "")

    def show(op) -> str:
        if isinstance(op, Reg):
            return reg(op)
        if isinstance(op, Mem):
            base = reg(op.base) if op.base is not None else ""
            return f"[{base}{op.offset:+#x}]" if op.offset else f"[{base}]"
        if isinstance(op, CBank):
            return f"c[{op.bank:#x}][{op.offset:#x}]"
        if isinstance(op, Imm):
            return f"{op.bits:#x}"
        if isinstance(op, SpecialReg):
            return op.name
        if isinstance(op, Target):
            return op.label or f"{op.addr:#x}"
        return str(op)
    guard = f"@{reg(instr.pred)} " if instr.pred is not None else ""
    return f"{guard}{instr.name} " + ", ".join(show(op) for op in instr.operands)


# --- measuring -----------------------------------------------------------------------------

@dataclass
class Score:
    name: str
    matched: int
    total: int
    regs_ours: int
    regs_ptxas: int
    misses: list
    by_kind: dict           # 'R', 'R pair', 'R quad', 'P' -> (matched, total)


def study(name: str, func: Function, ptxas_regs: int) -> Score:
    stripped = strip_allocation(func)
    check_allocation(stripped.func, func)        # the stripping itself kept the meaning
    ours = copy.deepcopy(stripped.func)
    assign_regs(ours)
    check_allocation(stripped.func, ours)
    chosen = {}
    for before, after in zip(_flat(stripped.func), _flat(ours)):
        for vreg, preg in zip(written_regs(before) + read_regs(before), written_regs(after) + read_regs(after)):
            if vreg.virtual:
                chosen[(vreg.file, vreg.num)] = preg.num
    matched, misses, by_kind = 0, [], {}
    for key, want in sorted(stripped.truth.items()):
        got = chosen.get(key)
        kind = key[0] + {1: "", 2: " pair", 4: " quad"}[stripped.widths[key]]
        hit, seen = by_kind.get(kind, (0, 0))
        by_kind[kind] = (hit + (got == want), seen + 1)
        if got == want:
            matched += 1
        else:
            misses.append((key, want, got, stripped.sites[key]))
    return Score(name, matched, len(stripped.truth), ours.num_regs, ptxas_regs, misses, by_kind)


def pipeline_study() -> None:
    """Compile each corpus source to PTX with nvcc, lower every kernel with ptxc's
    passes, and where ptxc emits ptxas's instruction sequence, count the
    instructions whose registers are all ptxas's."""
    import tempfile
    from ptxc import oracle
    from ptxc.diagnostics import CompileError
    from ptxc.lower.pipeline import Options, lower_function
    from ptxc.ptx.parser import parse_ptx
    same = total = 0
    for source in sources():
        listings = parse_cuobjdump_sass(cached(source)[0].read_text())
        with tempfile.TemporaryDirectory() as tmp:
            ptx_path = oracle.nvcc_ptx(source, Path(tmp) / "x.ptx")
            text = ptx_path.read_text()
        try:
            module = parse_ptx(text, str(ptx_path))
        except CompileError as error:
            print(f"   cannot parse {source.name}: {error}")
            continue
        for ptx_func in module.kernels():
            try:
                ours = _code(lower_function(ptx_func, Options(filename=source.name)))
            except CompileError:
                print(f"   unsupported  {ptx_func.name}")
                continue
            theirs = _code(function_from_listing(ptx_func.name, listings[ptx_func.name]))
            if [i.name for i in ours] != [i.name for i in theirs]:
                print(f"   other code   {ptx_func.name}")
                continue
            hits = sum(_register_names(a) == _register_names(b) for a, b in zip(ours, theirs))
            same, total = same + hits, total + len(ours)
            print(f"{hits:4d}/{len(ours):<4d} instructions with ptxas's registers  {ptx_func.name}")
    print(f"instructions with ptxas's registers: {same}/{total}")


def _code(func) -> list:
    instrs = [i for i in _flat(func) if i.op != "NOP"]
    while instrs and instrs[-1].op == "BRA":
        instrs.pop()
    return instrs


def _register_names(instr) -> list[str]:
    names = []
    for op in ([instr.pred] if instr.pred is not None else []) + instr.dsts + instr.srcs:
        reg = op.base if hasattr(op, "base") else op
        if isinstance(reg, Reg) and not reg.is_zero:
            names.append(f"{reg.file}{reg.num}")
    return names


def ablate() -> None:
    """Print the corpus match with each rule of assign_regs switched off in turn."""
    from ptxc.lower import assign_regs as module
    switches = {
        "late reads (load/store registers kept)": ("occupancy", lambda code: [set(live) for live in code.live_out]),
        "bank rule": ("bank_conflicts", lambda alloc, value: (0, 0)),
        "coalescing hints": ("hints", lambda alloc, value: []),
        "constants last": ("is_constant", lambda alloc, value: False),
        "allocation order (plain virtual-number order)":
            ("allocation_order", lambda alloc: sorted(alloc.values(), key=lambda v: (v.file, v.first))),
    }
    print(f"all rules: {_corpus_rate()}")
    for what, (name, stub) in switches.items():
        saved = getattr(module, name)
        setattr(module, name, stub)
        try:
            print(f"without {what}: {_corpus_rate()}")
        finally:
            setattr(module, name, saved)


def _corpus_rate() -> str:
    matched = total = 0
    for name, func, regs in kernels():
        if not any(instr.op == "CALL" for instr in _flat(func)):
            score = study(name, func, regs)
            matched, total = matched + score.matched, total + score.total
    return f"{matched}/{total} = {100 * matched / max(total, 1):.1f}%"


def _flat(func):
    return [instr for block in func.blocks for instr in block.instrs]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only kernels whose name contains one of these")
    parser.add_argument("--bless", action="store_true", help="recompile the corpus with nvcc first")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the values that differ")
    parser.add_argument("--ablate", action="store_true", help="the match with each rule switched off")
    parser.add_argument("--pipeline", action="store_true", help="nvcc's PTX through ptxc's own passes")
    args = parser.parse_args(argv)
    if args.bless:
        bless()
    if args.pipeline:
        pipeline_study()
        return 0
    if args.ablate:
        ablate()
        return 0
    matched = total = regs_same = count = 0
    kinds: dict = {}
    per_source: dict = {}
    for stem, name, func, regs in kernels_by_source(args.names):
        if any(instr.op == "CALL" for instr in _flat(func)):
            print(f"   skipped (calls a subroutine)  {name}")
            continue
        score = study(name, func, regs)
        matched, total = matched + score.matched, total + score.total
        regs_same += score.regs_ours == score.regs_ptxas
        count += 1
        old = per_source.get(stem, (0, 0))
        per_source[stem] = (old[0] + score.matched, old[1] + score.total)
        for kind, (hit, seen) in score.by_kind.items():
            old = kinds.get(kind, (0, 0))
            kinds[kind] = (old[0] + hit, old[1] + seen)
        print(f"{score.matched:4d}/{score.total:<4d} regs {score.regs_ours:3d} vs {score.regs_ptxas:3d}  {name}")
        if args.verbose:
            for (file, num), want, got, site in score.misses:
                print(f"        %{file}{num}: ptxas {file}{want}, ours {file}{got}   {site}")
    print("by source: " + ", ".join(f"{stem} {hit}/{seen}" for stem, (hit, seen) in per_source.items()))
    print("by kind: " + ", ".join(f"{kind} {hit}/{seen}" for kind, (hit, seen) in sorted(kinds.items())))
    print(f"values in ptxas's register: {matched}/{total} = {100 * matched / max(total, 1):.1f}%; "
          f"register count equal in {regs_same}/{count} kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
