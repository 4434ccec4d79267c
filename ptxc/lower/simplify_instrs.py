"""simplify_instrs: algebra on instructions whose operands became constants.

After constant folding some instructions compute something simpler than their
opcode says; ptxas does not emit them, so neither do we:

    IMAD d, a, RZ, c  /  IMAD d, a, 0x0, c     ==>  MOV d, c        (x * 0 + c)
    IMAD d, a, 0x1, RZ                         ==>  MOV d, a
    IADD3 d, a, RZ, RZ                         ==>  MOV d, a
    LOP3.LUT d, a, b, c, lut                   ==>  MOV d, a / MOV d, RZ / MOV d, -1
                                                    when the zero inputs (RZ, 0x0)
                                                    leave the LUT a constant or a copy
    PLOP3.LUT d, PT, a, b, c, lut, 0x0         ==>  a copy of a, !a, PT or !PT when the
                                                    constant inputs (PT, !PT) decide it

An operand with a modifier never becomes a MOV's source: MOV has no modifier fields,
and `IMAD.MOV R, RZ, RZ, -c[0x0][0x178]` (the -d that ptxas's unsigned division starts
from, with d a kernel parameter) is a negation, not a copy.  Turning it into
`MOV R, -c[..]` let fold_constants take the bank value without its minus: issue 16's
u32 quotients by a parameter, about twice nvcc's, on sm_89 and sm_90.

Predicate copies are propagated into their readers (a guard, a SEL's selector, a
compare's combining input: every predicate operand takes `!`), so that
`not.pred` / `xor.pred p, q, 0` cost nothing; register copies go through
propagate_copies, and constants that appear go through fold_constants again,
until nothing changes (a few rounds at most).

Expects: virtual registers, constants folded (fold_constants).
Guarantees: same values; no instruction more.
"""
from __future__ import annotations

from dataclasses import replace
from itertools import chain

from ..sass.ir import Imm, Instr, Mem, Reg, RZ, PT
from .analysis import map_regs
from .propagate_copies import propagate_copies
from .vregs import units, write_counts


ROUNDS = 4


def simplify_instrs(func) -> None:
    from .fold_constants import fold_constants
    for _ in range(ROUNDS):
        changed = False
        for instr in func.instrs():
            before = (instr.op, instr.srcs)
            if instr.op == "IMAD" and not set(instr.mods) & {"WIDE", "HI", "X"}:
                _imad(instr)
            elif instr.op == "IADD3" and not set(instr.mods) & {"X"} and len(instr.dsts) == 1:
                _iadd3(instr)
            elif instr.op == "LOP3" and len(instr.dsts) == 1:
                _lop3(instr)
            changed |= (instr.op, instr.srcs) != before
        changed |= _test_bits(func)
        changed |= _propagate_predicates(func)
        changed |= _combine_compares(func)
        count = sum(len(b.instrs) for b in func.blocks)
        propagate_copies(func)
        fold_constants(func)
        changed |= sum(len(b.instrs) for b in func.blocks) != count
        if not changed:
            return


def _zero(op) -> bool:
    return (isinstance(op, Reg) and op.is_zero and op.file == "R" and not op.inv) or \
        (isinstance(op, Imm) and op.kind == "int" and op.bits == 0)


def _to_mov(instr: Instr, src) -> None:
    instr.op, instr.mods, instr.srcs = "MOV", (), [src]
    instr.comment = (instr.comment + "; " if instr.comment else "") + "simplified"


def _modified(op) -> bool:
    """Whether an operand carries a modifier (`-`, `|..|`, `~`): of a register or of a
    constant-bank value alike.  MOV has no modifier fields, so such an operand cannot
    become a MOV's source (IMAD.MOV R, RZ, RZ, -c[0x0][0x228] is a negation)."""
    return any(getattr(op, flag, False) for flag in ("neg", "abs", "inv"))


def _imad(instr: Instr) -> None:
    a, b, c = instr.srcs[:3]
    if _zero(a) or _zero(b):
        if _modified(c):
            return
        _to_mov(instr, c if not (isinstance(c, Reg) and c.is_zero) else Reg("R", RZ))
    elif isinstance(b, Imm) and b.kind == "int" and b.bits == 1 and _zero(c) and isinstance(a, Reg) \
            and not _modified(a):
        _to_mov(instr, a)


def _iadd3(instr: Instr) -> None:
    a, b, c = instr.srcs
    operands = [op for op in (a, b, c) if not _zero(op)]
    if len(operands) == 1 and isinstance(operands[0], Reg) and not _modified(operands[0]):
        _to_mov(instr, operands[0])
    elif not operands:
        _to_mov(instr, Reg("R", RZ))


def _lop3(instr: Instr) -> None:
    a, b, c, lut, _ = instr.srcs
    table = lut.bits
    # Fix each zero input: keep the LUT entries where that input is 0.
    inputs = [a, b, c]
    masks = [0xF0, 0xCC, 0xAA]
    for k, op in enumerate(inputs):
        if _zero(op):
            table = _restrict(table, masks[k], False)
    if table in (0x00, 0xFF):
        _to_mov(instr, Reg("R", RZ) if table == 0 else Imm(0xFFFFFFFF, "int"))
        return
    for k, op in enumerate(inputs):
        if not _zero(op) and isinstance(op, Reg) and not _modified(op) and table == masks[k]:
            _to_mov(instr, op)
            return


def _restrict(table: int, mask: int, value: bool) -> int:
    """The LUT with one input fixed: every entry takes the one of its partner where
    that input has `value`."""
    shift = {0xF0: 4, 0xCC: 2, 0xAA: 1}[mask]
    out = 0
    for bit in range(8):
        partner = (bit | shift) if value else (bit & ~shift)
        if table >> partner & 1:
            out |= 1 << bit
    return out


def _propagate_predicates(func) -> bool:
    """PLOP3s that copy or invert one predicate (the others PT/!PT) disappear; readers
    use the source with its `!` adjusted.  Constant results become PT / !PT."""
    if not any(i.op == "PLOP3" or _equal_high_words(i) is not None for i in func.instrs()):
        return False               # no copy to find: skip building the def map
    # Writers are counted for what the loop asks about: virtual registers of the
    # compares and PLOP3s (a copy's source is one of theirs, substituted or not).
    defs = write_counts(func, {r.key() for i in func.instrs() if i.op in ("PLOP3", "ISETP")
                               for r in chain(i.dsts, i.srcs) if isinstance(r, Reg) and r.virtual})
    copies = {}

    def resolve(reg: Reg) -> Reg:
        seen = set()
        out = reg
        while out.file == "P" and out.key() in copies and out.key() not in seen:
            seen.add(out.key())
            src = copies[out.key()]
            out = replace(src, inv=src.inv ^ out.inv)
        return out

    def substitute(instr) -> None:
        if not any(isinstance(op, Reg) and op.file == "P" and op.virtual and op.key() in copies
                   for op in instr.srcs + [instr.pred]):
            return                 # reads no copy: resolve() would leave every register as it is
        written = instr.dsts
        instr.dsts = []
        map_regs(instr, lambda r: resolve(r) if r.file == "P" and r.virtual else r)
        instr.dsts = written

    for instr in func.instrs():
        if copies:
            substitute(instr)      # copies found so far (defs come before uses in layout, mostly)
        low = _equal_high_words(instr)
        if low is not None and instr.dsts[0].virtual and defs.get(instr.dsts[0].key(), 0) == 1 \
                and (not low.virtual or defs.get(low.key(), 0) == 1):
            copies[instr.dsts[0].key()] = low
            continue
        if instr.op != "PLOP3" or instr.pred is not None or len(instr.srcs) != 5:
            continue
        d = instr.dsts[0]
        if not d.virtual or defs.get(d.key(), 0) != 1 or not _is_pt(instr.dsts[1]):
            continue
        table = instr.srcs[3].bits
        masks = [0xF0, 0xCC, 0xAA]
        live = []
        for k, op in enumerate(instr.srcs[:3]):
            if _is_pt(op) or _is_not_pt(op):
                table = _restrict(table, masks[k], _is_pt(op))
            else:
                live.append((k, op))
        if table in (0x00, 0xFF):
            copies[d.key()] = Reg("P", PT, inv=table == 0)
            continue
        if len(live) == 1:
            k, op = live[0]
            if not op.virtual or defs.get(op.key(), 0) != 1:
                continue
            if table == masks[k]:
                copies[d.key()] = op
            elif table == (~masks[k] & 0xFF):
                copies[d.key()] = replace(op, inv=not op.inv)
    if not copies:
        return False
    for instr in func.instrs():    # again: readers laid out before their copy (loops)
        substitute(instr)
        if instr.pred is not None and instr.pred.is_zero and not instr.pred.inv:
            instr.pred = None          # @PT: always
    for block in func.blocks:        # @!PT: never; and the copies themselves
        block.instrs = [i for i in block.instrs
                        if not (i.op in ("PLOP3", "ISETP") and i.dsts and i.dsts[0].key() in copies)
                        and not (i.pred is not None and i.pred.is_zero and i.pred.inv)]
    return True


def _single_uses(func, keys: set, writer_keys: set) -> tuple[dict, dict]:
    """Unit -> its writers (as unit_defs lists them), unit -> its readers (an
    instruction that reads one twice is listed twice), for the virtual units asked
    about: `writer_keys` and `keys`."""
    writers, readers = {}, {}
    for instr in func.instrs():
        for op in instr.dsts:
            if isinstance(op, Reg) and op.virtual:
                for k in range(op.width):
                    unit = (op.file, op.num + k, True)
                    if unit in writer_keys:
                        writers.setdefault(unit, []).append(instr)
        for op in chain(instr.srcs, (instr.pred,)):    # the registers read, in operand order
            if isinstance(op, Reg):
                if op.width == 1:       # most operands: one unit, no list
                    if op.virtual:      # (the keys asked about are virtual units)
                        unit = (op.file, op.num, True)
                        if unit in keys:
                            readers.setdefault(unit, []).append(instr)
                    continue
                regs = (op,)
            elif isinstance(op, Mem):
                regs = (op.base, op.ubase)
            else:
                index = getattr(op, "index", None)
                regs = (index,) if isinstance(index, Reg) else ()
            for reg in regs:
                if reg is not None and reg.virtual:
                    for k in range(reg.width):
                        unit = (reg.file, reg.num + k, True)
                        if unit in keys:
                            readers.setdefault(unit, []).append(instr)
    return writers, readers


def _test_bits(func) -> bool:
    """`LOP3 t = x & c` read only by `ISETP.EQ/NE p, t, 0` becomes the LOP3 writing the
    predicate itself (`LOP3.LUT P, RZ, x, c, RZ, 0xc0, !PT`: P = (x & c) != 0), as
    ptxas tests bits; an EQ test reads it with `!`."""
    keys = {i.srcs[0].key() for i in func.instrs() if _bit_test_shape(i) and isinstance(i.srcs[0], Reg)
            and i.srcs[0].virtual}
    if not keys:
        return False               # nothing to rewrite: skip building the use maps
    if not any(i.op == "LOP3" and len(i.dsts) == 1 and isinstance(i.dsts[0], Reg) and i.pred is None
               and any(u in keys for u in units(i.dsts[0])) and getattr(i.srcs[3], "bits", None) == 0xC0
               and _zero(i.srcs[2]) for i in func.instrs()):
        return False               # no LOP3 of the shape the rewrite needs writes one: the same
    results = {i.dsts[0].key() for i in func.instrs() if _bit_test_shape(i) and i.dsts[0].virtual}
    writers, readers = _single_uses(func, keys, keys | results)
    changed = False
    for block in func.blocks:
        for instr in block.instrs:
            if not _bit_test_shape(instr):
                continue
            t = instr.srcs[0]
            if not (isinstance(t, Reg) and t.virtual and t.width == 1 and not (t.neg or t.inv)):
                continue
            lop = writers.get(t.key(), [])
            if len(lop) != 1 or len(readers.get(t.key(), [])) != 1:
                continue
            lop = lop[0]
            if lop.op != "LOP3" or lop.pred is not None or len(lop.dsts) != 1 or lop.srcs[3].bits != 0xC0 \
                    or not _zero(lop.srcs[2]):
                continue
            p = instr.dsts[0]
            if not p.virtual or len(writers.get(p.key(), [])) != 1:
                continue
            is_ne = instr.mods[0] == "NE"
            fresh = func.new_vreg("P")
            lop.dsts = [fresh, Reg("R", RZ)]
            # p = fresh (NE) or !fresh (EQ): a predicate copy _propagate_predicates removes
            instr.op, instr.mods = "PLOP3", ("LUT",)
            instr.dsts = [p, Reg("P", PT)]
            instr.srcs = [fresh, Reg("P", PT), Reg("P", PT), Imm(0xF0 if is_ne else 0x0F, "int"), Imm(0, "int")]
            changed = True
    return changed


def _bit_test_shape(instr) -> bool:
    """`ISETP.EQ/NE.AND p, PT, t, 0, PT` (unguarded): what _test_bits rewrites, given
    that t is a lone virtual register written by a suitable LOP3."""
    return (instr.op == "ISETP" and instr.mods[:1] in (("EQ",), ("NE",)) and instr.mods[-1] == "AND"
            and "EX" not in instr.mods and instr.pred is None and _is_pt(instr.srcs[2])
            and _is_pt(instr.dsts[1]) and _zero(instr.srcs[1]))


_BOOL_OPS = {0xC0: "AND", 0xFC: "OR", 0x3C: "XOR"}


def _combining_shape(instr) -> bool:
    """An unguarded PLOP3 that ands, ors or xors two predicates, one of them a plain
    virtual predicate: what _combine_compares may fold a compare into."""
    return (instr.op == "PLOP3" and instr.pred is None and len(instr.srcs) == 5 and _is_pt(instr.srcs[2])
            and instr.srcs[3].bits in _BOOL_OPS and _is_pt(instr.dsts[1])
            and any(isinstance(op, Reg) and op.virtual and not op.inv for op in instr.srcs[:2]))


def _combine_compares(func) -> bool:
    """A compare read only by a PLOP3 that ands, ors or xors it with another predicate
    takes that predicate as its combining input (ISETP.GT.XOR P0, PT, a, b, !P1)."""
    if not any(_combining_shape(i) for i in func.instrs()):
        return False               # nothing to rewrite: skip building the use maps
    keys = {op.key() for i in func.instrs() if i.op == "PLOP3"
            for op in i.srcs[:2] if isinstance(op, Reg) and op.virtual}
    if not any(i.op in ("ISETP", "FSETP") and i.dsts[0].key() in keys and i.pred is None and "EX" not in i.mods
               and i.mods[-1] == "AND" and len(i.srcs) > 2 and _is_pt(i.srcs[2]) and _is_pt(i.dsts[1])
               for i in func.instrs()):
        return False               # no compare of the shape the rewrite needs writes one: the same
    compared = {op.key() for i in func.instrs() if i.op in ("ISETP", "FSETP")
                for op in i.srcs[:2] if isinstance(op, Reg) and op.virtual}
    writers, readers = _single_uses(func, keys, keys | compared)
    ops = {0xC0: "AND", 0xFC: "OR", 0x3C: "XOR"}
    changed = False
    for instr in func.instrs():
        if instr.op != "PLOP3" or instr.pred is not None or len(instr.srcs) != 5 or not _is_pt(instr.srcs[2]):
            continue
        bool_op = ops.get(instr.srcs[3].bits)
        if bool_op is None or not _is_pt(instr.dsts[1]):
            continue
        for k in (0, 1):
            first, other = instr.srcs[k], instr.srcs[1 - k]
            if not (isinstance(first, Reg) and first.virtual and not first.inv):
                continue
            cmp = writers.get(first.key(), [])
            if len(cmp) != 1 or len(readers.get(first.key(), [])) != 1:
                continue
            cmp = cmp[0]
            if cmp.op not in ("ISETP", "FSETP") or cmp.pred is not None or "EX" in cmp.mods \
                    or cmp.mods[-1] != "AND" or not _is_pt(cmp.srcs[2]) or not _is_pt(cmp.dsts[1]):
                continue
            if not all(not isinstance(op, Reg) or op.is_zero or (op.virtual and len(writers.get(op.key(), [])) == 1)
                       for op in cmp.srcs[:2]):
                continue     # the compare moves down to the PLOP3: its sources must still hold there
            instr.op, instr.mods = cmp.op, cmp.mods[:-1] + (bool_op,)
            instr.srcs = cmp.srcs[:2] + [other]
            cmp.op = "NOP_DEAD"
            changed = True
            break
    if changed:
        for block in func.blocks:
            block.instrs = [i for i in block.instrs if i.op != "NOP_DEAD"]
    return changed


def _equal_high_words(instr):
    """A 64-bit compare's high half (ISETP.*.AND.EX) of two equal zero words is just
    the low half's result, whatever the comparison."""
    if instr.op != "ISETP" or "EX" not in instr.mods or "AND" not in instr.mods or instr.pred is not None:
        return None
    if len(instr.srcs) != 4 or not (_zero(instr.srcs[0]) and _zero(instr.srcs[1]) and _is_pt(instr.srcs[2])):
        return None
    if not _is_pt(instr.dsts[1]):
        return None
    return instr.srcs[3]


def _is_pt(op) -> bool:
    return isinstance(op, Reg) and op.file == "P" and op.is_zero and not op.inv


def _is_not_pt(op) -> bool:
    return isinstance(op, Reg) and op.file == "P" and op.is_zero and op.inv
