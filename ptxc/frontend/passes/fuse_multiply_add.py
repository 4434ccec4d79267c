"""fuse_multiply_add: `mul` feeding `add` becomes `fma.rn` / `mad.lo`, by NVPTX's rules.

CUDA compiles with -fmad=true, and NVPTX's DAG combine (PerformADDCombine) decides
which products fuse, per basic block; results depend on it bit for bit, so the rules
are NVPTX's own (checked against nvcc 13.5):

* float and double: `add(x, y)` tries x, then y: a `mul` defined in the same block
  whose every use (fewer than 5) is an `add` in that block fuses, even if several adds
  share it (`t = a*b; t + c; t + 1.0f` -> two fma, no mul).  A product used by
  anything else (a store, a compare, another block) stays a mul and fuses nowhere.
  `sub` never fuses.
* integers: a `mul.lo` used only by that one `add` becomes `mad.lo`.
* what is left of `x * 2.0` becomes `x + x`.
* a float product never fuses across the boundary of an inlined `__noinline__`
  function (cg.regions): NVVM keeps that call, so nothing fuses across it; such a
  product becomes `mul.rn` so that ptxas does not contract it either.

Expects: instructions from mathlib (cg.frozen) keep their exact form; products are
single-definition temporaries; `cg.uses`, unless None, counts every register's reads
(vir.instr_uses).  Guarantees: fused adds keep their destination and place; a product
left without uses is deleted; `cg.uses` stays true.
"""
from __future__ import annotations

from operator import attrgetter

from ...ptx import ir
from ..vir import BASE, READS_FIRST, VReg, instr_uses

Address, Vector = ir.Address, ir.Vector


def fuse_multiply_add(cg, func: ir.Function) -> None:
    if not cg.multiplies:
        return
    frozen = cg.frozen
    regions = cg.regions
    # The blocks with a product to fuse or rewrite (the others have nothing to do).
    blocks = [block for block in cg.blocks if not _FUSIBLE_PRODUCTS.isdisjoint(map(_opcode_of, block.instrs))]
    if not blocks:
        return
    # Who reads each product: with the read counts of cg.uses, a scan of the product's
    # own block finds them all whenever it matters (a product read elsewhere fuses
    # nowhere); the __noinline__ test (regions) asks about every reader, found by a scan
    # of every block.
    counts = cg.uses
    users = _users(blocks, cg.blocks) if regions or counts is None else None
    local_counts = counts if users is None else None
    for block in blocks:
        instrs = block.instrs
        local = users     # (the block's own readers: scanned when first asked about)
        defs_at: dict = {}
        removed: set = set()
        in_block: list = []   # [ids of the block's instructions], made on first need, kept current
        for pos, instr in enumerate(instrs):
            try:    # (a plain dict: subscripting an OpcodeTable, a dict subclass, costs twice as much)
                is_add, writes_first = _KIND[instr.opcode]
            except KeyError:
                is_add, writes_first = _KIND[instr.opcode] = _kind(instr.opcode)
            if is_add and len(instr.operands) == 3 and instr.guard is None \
                    and id(instr) not in frozen:
                for k in (1, 2):
                    product = instr.operands[k]
                    mpos = defs_at.get(product) if isinstance(product, VReg) else None
                    if mpos is None or product in cg.mutable:
                        continue
                    mul = instrs[mpos]
                    fused = _fused_opcode(mul.opcode, instr.opcode)
                    if fused is None or id(mul) in frozen:
                        continue
                    if local is None:
                        local = _users([block], [block])
                    if not _may_fuse(mul, product, local, local_counts, instrs, fused, in_block):
                        continue
                    if regions and fused.startswith("fma") and regions.get(id(mul)) is not regions.get(id(instr)):
                        continue
                    instrs[pos] = ir.Instr(fused, [instr.operands[0], mul.operands[1], mul.operands[2],
                                                   instr.operands[3 - k]])
                    if in_block:
                        in_block[0].discard(id(instr))
                        in_block[0].add(id(instrs[pos]))
                    local[product].remove(instr)
                    if counts is not None:  # the fused instruction reads the factors, not the product
                        counts[product] -= 1
                        _count_reads(counts, mul, 1)
                    if not local[product]:
                        removed.add(mpos)
                        if counts is not None:
                            _count_reads(counts, mul, -1)
                    break
            ops = instr.operands   # defines(instr), inlined (a fused add keeps its destination)
            if writes_first and ops and type(ops[0]) is VReg:
                defs_at[ops[0]] = pos
        if removed:
            block.instrs = [i for k, i in enumerate(instrs) if k not in removed]
        for instr in block.instrs:
            if instr.opcode != "mul.f32" and instr.opcode != "mul.f64":
                continue
            if regions and any(regions.get(id(u)) is not regions.get(id(instr))
                               for u in users.get(instr.operands[0], ())):
                # A product read across an inlined __noinline__ boundary must not be
                # contracted by ptxas either: `mul.rn` (what NVVM writes to forbid it).
                instr.opcode = "mul.rn." + instr.opcode[4:]
            elif isinstance(instr.operands[2], ir.Imm) and instr.operands[2].value == 2.0 \
                    and id(instr) not in frozen:
                # What is left of x * 2.0 becomes x + x (DAGCombiner's visitFMUL), after
                # fusion had its chance at the multiply (fma(x, 2.0, y) is not x + x + y).
                instr.opcode = "add." + instr.opcode[4:]
                instr.operands[2] = instr.operands[1]
                if counts is not None and instr.operands[1].__class__ is VReg:
                    counts[instr.operands[1]] += 1


def _count_reads(counts: dict, mul: ir.Instr, step: int) -> None:
    """A multiply's factors read once more (step 1) or once less (-1)."""
    for op in mul.operands[1:]:
        if op.__class__ is VReg:
            counts[op] = counts.get(op, 0) + step


def _users(blocks: list, readers: list) -> dict:
    """product register -> list of the instructions in `readers` (blocks) that read it,
    once per read, in order.  Only the results of the fusible `mul`s in `blocks` are
    tracked: no other register is ever asked about."""
    products = set()
    for block in blocks:
        for instr in block.instrs:
            ops = instr.operands
            if instr.opcode in _FUSIBLE_PRODUCTS and ops and ops[0].__class__ is VReg:
                products.add(ops[0])
    users: dict = {}
    if not products:
        return users
    for block in readers:
        for instr in block.instrs:
            ops = instr.operands
            if instr.opcode == "inline.asm":
                for reg in instr_uses(instr):
                    if reg in products:
                        users.setdefault(reg, []).append(instr)
                continue
            # instr_uses(instr), inlined (this scan reads every instruction): the first
            # operand only where the instruction reads it, then the others.
            if ops:
                first = ops[0].__class__
                if first is Vector or (first is VReg and not READS_FIRST[instr.opcode]):
                    ops = ops[1:]
            for op in ops:
                cls = op.__class__
                if cls is VReg:
                    if op in products:
                        users.setdefault(op, []).append(instr)
                elif cls is Address:
                    reg = op.base
                    if reg.__class__ is VReg and reg in products:
                        users.setdefault(reg, []).append(instr)
                elif cls is Vector:
                    for reg in op.elems:
                        if reg.__class__ is VReg and reg in products:
                            users.setdefault(reg, []).append(instr)
            if instr.guard is not None and instr.guard in products:
                users.setdefault(instr.guard, []).append(instr)
    return users


def _may_fuse(mul, product, users, counts, instrs: list, fused: str, in_block: list) -> bool:
    """`users`: the product's readers (in this block only, when `counts` gives every
    register's read count; else all of them)."""
    uses = users.get(product, [])
    count = len(uses) if counts is None else counts.get(product, 0)
    if fused.startswith("mad"):
        return count == 1
    if count >= 5 or count != len(uses):   # (read in another block too: no fusion)
        return False
    if not in_block:
        in_block.append({id(i) for i in instrs})
    ids = in_block[0]
    return all(id(u) in ids and BASE[u.opcode] == "add" and u.opcode == _ADD_OF[fused] for u in uses)


# The products that fuse (_fused_opcode) or become `mul.rn` / `x + x`: only these.
_FUSIBLE_PRODUCTS = frozenset({"mul.f32", "mul.f64", "mul.lo.s32", "mul.lo.s64", "mul.lo.s16"})
_opcode_of = attrgetter("opcode")
_ADD_OF = {"fma.rn.f32": "add.f32", "fma.rn.f64": "add.f64"}


def _fused_opcode(mul: str, add: str) -> str | None:
    return _FUSED.get((mul, add))


_FUSED = {("mul.f32", "add.f32"): "fma.rn.f32", ("mul.f64", "add.f64"): "fma.rn.f64",
          **{(f"mul.lo.s{width}", f"add.s{width}"): f"mad.lo.s{width}" for width in ("32", "64", "16")}}


def _kind(opcode: str) -> tuple:
    """(is it an add, does it write its first operand (if a register))"""
    return BASE[opcode] == "add", not READS_FIRST[opcode]


_KIND: dict = {}     # opcode -> _kind(opcode)
