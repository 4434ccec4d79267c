"""Instruction selection builders for compares, branches, barriers and warp operations.

setp on integers is ISETP (64-bit: a low compare folded into the high one with
.EX); predicates combine with PLOP3; branches are BRA (a block ends after each),
`ret` in a kernel is EXIT; bar.sync is BAR.SYNC.DEFER_BLOCKING; shuffles, votes,
reductions and match are SHFL, VOTE, REDUX and MATCH, with a WARPSYNC first when
the member mask is not the full warp (ptxas does the same for masks it cannot
prove full, with a longer sequence).
"""
from __future__ import annotations

from dataclasses import replace

from ..ptx import ir as ptx
from ..sass.ir import Imm, Reg, SpecialReg, Target, RZ, PT
from ..sass.target import target
from .isel_int import (FALSE, TRUE, ZERO, ISETP_CMP, UNSIGNED_CMP, _in_reg, compare64, extend, lop3, size_of,
                       type_of, wide)
from .remove_convergent_warpsyncs import MEMBER_MASK   # dropped where the code is convergent
from .select_instrs import CBANK0_SREGS, S2R_SREGS, Selector, Unsupported, half


def setp_int(s: Selector, i: ptx.Instr):
    d, a, b = i.operands[:3]
    cmp, t = i.parts[1], type_of(i)
    bool_op, combine = "AND", TRUE
    for op in ("and", "or", "xor"):
        if i.has(op):
            bool_op, combine = op.upper(), s.value(i.operands[3], "pred")
    if size_of(t) == 8:
        compare64(s, s.reg(d), cmp, t.startswith("s"), wide(s, a, t), wide(s, b, t), combine, bool_op)
        return
    va, vb = extend(s, a, t), extend(s, b, t)
    mods = [ISETP_CMP[cmp]]
    if not isinstance(va, Reg) and isinstance(vb, Reg):
        va, vb = vb, va
        mods = [MIRROR[mods[0]]]
    if t.startswith("u") or cmp in UNSIGNED_CMP:
        mods.append("U32")
    s.emit("ISETP", tuple(mods) + (bool_op,), [s.reg(d), TRUE], [_in_reg(s, va), vb, combine])


MIRROR = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE"}


def bra(s: Selector, i: ptx.Instr):
    s.emit("BRA", (), [], [Target(i.operands[0].name)], comment="uniform" if i.has("uni") else "")
    s.start_block(s.new_label("fallthrough"))


def ret(s: Selector, i: ptx.Instr):
    if not s.ptx_func.entry:
        from .lower_calls import ret_from_func
        ret_from_func(s, i)
        return
    s.emit("EXIT")
    if s.guard is not None:
        s.start_block(s.new_label("fallthrough"))


def exit_(s: Selector, i: ptx.Instr):
    s.emit("EXIT")
    if s.guard is not None:
        s.start_block(s.new_label("fallthrough"))


def trap(s: Selector, i: ptx.Instr):
    s.emit("BPT", ("TRAP",), [], [Imm(1, "int")])


def bar_sync(s: Selector, i: ptx.Instr):
    """bar.sync / barrier.sync / bar.red: BAR.SYNC.DEFER_BLOCKING on barrier N."""
    ops = i.operands
    barrier = s.value(ops[0], "u32") if ops else Imm(0, "int")
    if isinstance(barrier, Imm):
        s.func.info.num_barriers = max(s.func.info.num_barriers, barrier.bits + 1)
    else:
        s.func.info.num_barriers = 16
    srcs = [barrier]
    if len(ops) > 1:
        srcs.append(_in_reg(s, s.value(ops[1], "u32")))
        if isinstance(barrier, Imm) and not isinstance(srcs[-1], Imm):
            pass
    s.emit("BAR", ("SYNC", "DEFER_BLOCKING"), [], srcs)


def bar_red(s: Selector, i: ptx.Instr):
    """bar.red.{popc,and,or}: BAR.RED reduces a predicate over the block; the result
    comes back through B2R.RESULT (popc) or a predicate (and/or)."""
    op = i.parts[2]
    d, barrier, pred = i.operands[0], i.operands[1], i.operands[-1]
    b = s.value(barrier, "u32")
    s.func.info.num_barriers = max(s.func.info.num_barriers, (b.bits + 1) if isinstance(b, Imm) else 16)
    p = s.value(pred, "pred")
    s.emit("BAR", ("RED", op.upper(), "DEFER_BLOCKING"), [], [b, p])
    if op == "popc":
        s.emit("B2R", ("RESULT",), [s.reg(d)], [])
    else:
        s.emit("B2R", ("RESULT",), [Reg("R", RZ), s.reg(d)], [])


def bar_warp_sync(s: Selector, i: ptx.Instr):
    """bar.warp.sync (__syncwarp): WARPSYNC, always kept (ptxas keeps it)."""
    mask = s.value(i.operands[0], "b32")
    s.emit("WARPSYNC", (), [], [mask])


VARYING_MASK = "varying member mask"  # kept: the lanes name different masks
EXCLUSIVE = "exclusive collective"    # insert_bssy brackets it with BSSY/BSYNC

# The collectives ptxas lowers, under a member mask that may differ between lanes, as
# `BSSY; WARPSYNC.EXCLUSIVE mask; op; BSYNC` (each mask's lanes run the op as a group
# of their own).  The others get a plain `WARPSYNC mask`, then the op over the lanes
# present, then the result cut down to the mask (sm_89's vote and match; measured with
# ptxas 13 on per-half-warp masks, docs/passes.md).
# (which ones: the target record's `exclusive_collectives`)

# PTX operations whose result is the same in every lane when their sources are.
_UNIFORM_OPS = frozenset("mov add sub mul mad and or xor not shl shr cvt min max neg".split())
_UNIFORM_SREGS = frozenset({"%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z",
                            "%ntid.x", "%ntid.y", "%ntid.z"})


def _member_mask(s: Selector, mask_op):
    """(kind, value) of a member mask operand: "full" (the immediate 0xffffffff),
    "uniform" (the same in every lane: an immediate, a kernel parameter, arithmetic of
    those) or "varying" (any other register, e.g. a half-warp's mask from %tid)."""
    mask = s.value(_known_constant(s.ptx_func, mask_op), "b32")
    if isinstance(mask, Imm):
        return ("full" if mask.bits == 0xFFFFFFFF else "uniform"), mask
    return ("uniform" if _is_warp_uniform(s, mask_op) else "varying"), mask


def _is_warp_uniform(s: Selector, op, depth: int = 0) -> bool:
    """Whether `op` provably holds one value across the warp (conservative: False when unsure)."""
    if isinstance(op, ptx.Imm):
        return True
    if isinstance(op, ptx.SpecialReg):
        return op.name in _UNIFORM_SREGS
    if not isinstance(op, ptx.Reg) or depth > 8:
        return False
    defs = _definitions(s).get(op.name, [])
    if len(defs) != 1 or defs[0].guard is not None:
        return False
    d = defs[0]
    if d.base == "ld" and d.has("param") and s.ptx_func.entry:
        addr = d.operands[1]
        return isinstance(addr, ptx.Address) and isinstance(addr.base, ptx.Symbol) \
            and addr.base.name in {p.name for p in s.ptx_func.params}
    return d.base in _UNIFORM_OPS and all(_is_warp_uniform(s, x, depth + 1) for x in d.operands[1:])


def _definitions(s: Selector) -> dict:
    """Register name -> the instructions of the function that write it (once per function)."""
    defs = getattr(s, "_ptx_definitions", None)
    if defs is None:
        defs = {}
        for instr in s.ptx_func.instrs():
            if not instr.operands:
                continue
            dst = instr.operands[0]
            names = ([dst.first, dst.second] if isinstance(dst, ptx.RegPair)
                     else list(dst.elems) if isinstance(dst, ptx.Vector) else [dst])
            for reg in names:
                if isinstance(reg, ptx.Reg):
                    defs.setdefault(reg.name, []).append(instr)
        s._ptx_definitions = defs
    return defs


def _warpsync(s: Selector, mask_op, sass_op: str):
    """What comes before a collective `sass_op` under member mask `mask_op`.

    Returns (mask, exclusive): the mask register when the result must still be cut
    down to it (a varying mask, no WARPSYNC.EXCLUSIVE on this target), else None; and
    whether the op was opened as an exclusive group (the caller calls _end_exclusive
    after it)."""
    kind, mask = _member_mask(s, mask_op)
    if kind == "full":
        return None, False
    if kind == "uniform":
        s.emit("WARPSYNC", (), [], [mask], comment=MEMBER_MASK)   # remove_convergent_warpsyncs
        return None, False
    if sass_op in target(s.arch).exclusive_collectives:
        s.start_block(s.new_label("exclusive"))        # the BSSY/BSYNC region: insert_bssy
        s.emit("WARPSYNC", ("EXCLUSIVE",), [], [mask], comment=EXCLUSIVE)
        return None, True
    s.emit("WARPSYNC", (), [], [mask], comment=VARYING_MASK)
    return mask, False


def _end_exclusive(s: Selector, exclusive: bool):
    """Close an exclusive group: the code after it starts the block its BSYNC opens."""
    if exclusive:
        s.start_block(s.new_label("exclusive_join"))


SHFL_MODES = {"up": "UP", "down": "DOWN", "bfly": "BFLY", "idx": "IDX"}


def shfl(s: Selector, i: ptx.Instr):
    """shfl.sync.mode.b32 d[|p], a, b, c, mask -> SHFL.MODE p, d, a, b, c."""
    d, a, b, c = i.operands[:4]
    mode = SHFL_MODES[next(p for p in i.parts[1:] if p in SHFL_MODES)]
    if len(i.operands) > 4:
        _warpsync(s, i.operands[4], "SHFL")      # never cut down: each lane reads one other lane
    dst, pred = _pair_dst(s, d)
    lane, clamp = _shfl_operand(s, b), _shfl_operand(s, c)
    if not isinstance(lane, (Reg, Imm)) or not isinstance(clamp, (Reg, Imm)):
        lane, clamp = _in_reg(s, lane), _in_reg(s, clamp)
    s.emit("SHFL", (mode,), [pred, dst], [_in_reg(s, s.value(a, "b32")), lane, clamp])


def _shfl_operand(s: Selector, op):
    """A lane or clamp operand: an immediate where the value is known (nvcc moves
    constants into registers first: `mov.u32 %r39, 16;`), RZ for 0 as ptxas writes
    it (`SHFL.UP PT, R21, R14, 0x1, RZ`), else a register."""
    value = s.value(_known_constant(s.ptx_func, op), "b32")
    if isinstance(value, Imm) and value.bits == 0:
        return Reg("R", RZ)
    return value


def _known_constant(func: ptx.Function, op):
    """`op`, or the immediate a register holds when its only definition in `func` is an
    unguarded `mov` of an immediate (then every use sees that value)."""
    if not isinstance(op, ptx.Reg):
        return op
    defs = [i for i in func.instrs() if i.operands and _writes(i.operands[0], op)]
    if len(defs) == 1 and defs[0].base == "mov" and defs[0].guard is None \
            and isinstance(defs[0].operands[1], ptx.Imm):
        return defs[0].operands[1]
    return op


def _writes(dst, reg: ptx.Reg) -> bool:
    """Whether a destination operand names `reg` (itself, in a vector, or half of `a|b`)."""
    if isinstance(dst, ptx.RegPair):
        return reg in (dst.first, dst.second)
    if isinstance(dst, ptx.Vector):
        return reg in dst.elems
    return dst == reg


def _pair_dst(s: Selector, d):
    """The value and predicate destinations of shfl/match: `%r|%p` or a lone `%r`.

    A predicate the function never reads is PT, as ptxas writes it
    (`SHFL.DOWN PT, R5, R4, 0x1, 0x1f`); one it reads gets its register (`P0`).
    """
    if isinstance(d, ptx.RegPair):
        pred = s.reg(d.second) if _is_read(s.ptx_func, d.second) else Reg("P", PT)
        return s.reg(d.first), pred
    return s.reg(d), Reg("P", PT)


def _is_read(func: ptx.Function, reg: ptx.Reg) -> bool:
    """Whether any instruction of `func` names `reg` other than as half of a `a|b`
    destination (a plain destination counts: conservative, never wrong)."""
    def mentions(op) -> bool:
        if isinstance(op, ptx.NotReg):
            return op.reg == reg
        if isinstance(op, ptx.Address):
            return op.base == reg
        if isinstance(op, (ptx.Vector, ptx.OperandList)):
            return any(mentions(e) for e in op.elems)
        return op == reg
    return any(instr.guard == reg or any(mentions(op) for op in instr.operands) for instr in func.instrs())


def vote(s: Selector, i: ptx.Instr):
    """vote.sync: VOTE over the lanes present.  Under a varying member mask on a
    target without an exclusive VOTE (sm_89), the lanes of every mask vote together
    after a plain WARPSYNC and each lane's result is cut down to its own mask (and,
    for all/uni, to the lanes still running), as ptxas's slow path does."""
    d, p = i.operands[:2]
    mode = next(x for x in i.parts[1:] if x in ("all", "any", "uni", "ballot"))
    mask, exclusive = _warpsync(s, i.operands[2], "VOTE") if len(i.operands) > 2 else (None, False)
    src = s.value(p, "pred")
    if mask is None:
        if mode == "ballot":
            s.emit("VOTE", ("ANY",), [s.reg(d), TRUE], [src])
        else:
            s.emit("VOTE", ({"all": "ALL", "any": "ANY", "uni": "EQ"}[mode],), [s.reg(d)], [src])
        _end_exclusive(s, exclusive)
        return
    ballot = s.new()
    s.emit("VOTE", ("ANY",), [ballot, TRUE], [src])
    if mode == "ballot":
        lop3(s, s.reg(d), ballot, mask, ZERO, 0xC0)
        return
    if mode == "any":
        hits = s.new()
        lop3(s, hits, ballot, mask, ZERO, 0xC0)
        s.emit("ISETP", ("NE", "U32", "AND"), [s.reg(d), TRUE], [hits, ZERO, TRUE])
        return
    members = _present_members(s, mask)
    hits = s.new()
    lop3(s, hits, ballot, members, ZERO, 0xC0)
    if mode == "all":
        s.emit("ISETP", ("EQ", "U32", "AND"), [s.reg(d), TRUE], [hits, members, TRUE])
        return
    none = s.new_pred()
    s.emit("ISETP", ("EQ", "U32", "AND"), [none, TRUE], [hits, ZERO, TRUE])
    s.emit("ISETP", ("EQ", "U32", "OR"), [s.reg(d), TRUE], [hits, members, none])


def _present_members(s: Selector, mask) -> Reg:
    """The lanes of `mask` still running (exited lanes count as agreeing)."""
    active, members = s.new(), s.new()
    s.emit("VOTE", ("ANY",), [active, TRUE], [TRUE])
    lop3(s, members, mask, active, ZERO, 0xC0)
    return members


def activemask(s: Selector, i: ptx.Instr):
    s.emit("VOTE", ("ANY",), [s.reg(i.operands[0]), TRUE], [TRUE])


REDUX_OPS = {"add": "SUM", "min": "MIN", "max": "MAX", "and": "", "or": "OR", "xor": "XOR"}


def redux(s: Selector, i: ptx.Instr):
    """redux.sync.op.type d, a, mask: REDUX into a uniform register, then back (inside
    the exclusive group under a varying mask: the next group's REDUX writes the same
    uniform register)."""
    d, a = i.operands[:2]
    mask, exclusive = _warpsync(s, i.operands[2], "REDUX") if len(i.operands) > 2 else (None, False)
    assert mask is None, "REDUX is exclusive on every target"
    op = next(p for p in i.parts[1:] if p in REDUX_OPS)
    t = type_of(i)
    mods = tuple(m for m in (REDUX_OPS[op],) if m)
    if t == "s32" and op in ("min", "max", "add"):
        mods += ("S32",)
    uniform = s.func.new_vreg("UR", 1)
    s.emit("REDUX", mods, [uniform], [s.r(a, t)])
    s.emit("MOV", (), [s.reg(d)], [uniform])
    _end_exclusive(s, exclusive)


def match(s: Selector, i: ptx.Instr):
    """match.{any,all}.sync: MATCH over the lanes present; under a varying member mask
    without an exclusive MATCH (sm_89), MATCH.ANY then the lanes cut down to the mask
    (match.all: equal to the mask's running lanes, or 0), as ptxas's slow path does."""
    d, a = i.operands[:2]
    mode = "ALL" if i.has("all") else "ANY"
    t = type_of(i)
    mask, exclusive = _warpsync(s, i.operands[2], "MATCH") if len(i.operands) > 2 else (None, False)
    src = wide(s, a, t) if size_of(t) == 8 else s.r(a, t)
    width = ("U64",) if size_of(t) == 8 else ()
    if mask is not None:
        same = s.new()
        s.emit("MATCH", ("ANY",) + width, [same], [src])
        if mode == "ANY":
            lop3(s, s.reg(d), same, mask, ZERO, 0xC0)
            return
        members = _present_members(s, mask)
        dst, pred = _pair_dst(s, d)
        hits, equal = s.new(), (pred if pred.virtual else s.new_pred())
        lop3(s, hits, same, members, ZERO, 0xC0)
        s.emit("ISETP", ("EQ", "U32", "AND"), [equal, TRUE], [hits, members, TRUE])
        s.emit("SEL", (), [dst], [members, ZERO, equal])
        return
    if mode == "ALL":
        dst, pred = _pair_dst(s, d)
        s.emit("MATCH", (mode,) + width, [pred, dst], [src])
    else:
        s.emit("MATCH", (mode,) + width, [s.reg(d)], [src])
    _end_exclusive(s, exclusive)


def mov_special(s: Selector, d, sreg: ptx.SpecialReg):
    """A special register: constant bank 0 for the launch dimensions, S2R otherwise."""
    dst = s.reg(d)
    if sreg.name in CBANK0_SREGS:
        s.emit("MOV", (), [dst], [s.special(sreg)])
    elif sreg.name in S2R_SREGS:
        if dst.width == 2:
            s.emit("S2R", (), [half(dst, 0)], [SpecialReg(S2R_SREGS[sreg.name])])
            s.emit("MOV", (), [half(dst, 1)], [ZERO])
        else:
            s.emit("S2R", (), [dst], [SpecialReg(S2R_SREGS[sreg.name])])
    elif sreg.name in ("%clock64", "%globaltimer"):
        s.emit("CS2R", (), [dst], [SpecialReg("SR_CLOCKLO" if sreg.name == "%clock64" else "SR_GLOBALTIMERLO")])
    else:
        raise Unsupported(f"special register {sreg.name}")


def nanosleep(s: Selector, i: ptx.Instr):
    s.emit("NANOSLEEP", (), [], [s.value(i.operands[0], "u32")])


# ---- set: a comparison's result as a value -------------------------------------------------
# set.CmpOp{.ftz}{.BoolOp}.dtype.stype d, a, b{, {!}c}: per element, the dtype's "true"
# (u32/s32: all ones; f32: 1.0; f16 / bf16: 1.0 in each half) where the compare holds,
# else 0.  With a half-pair stype, each 16-bit half of d is the result of its own halves
# (u32/s32: 0xFFFF per half).  ptxas writes FSET.BF / HSET2 / HSET2.BF, forms the tables
# do not have yet; the same values come from the setp lowering into predicates and a SEL
# per element (ptxas's own code for set.*.u32.f32: FSETP + SEL).
SET_TRUE = {"u32": 0xFFFFFFFF, "s32": 0xFFFFFFFF, "f32": 0x3F800000, "f16": 0x3C00, "bf16": 0x3F80,
            "f16x2": 0x3C00, "bf16x2": 0x3F80}
HALF_TYPES = ("f16", "f16x2", "bf16", "bf16x2")


def set_(s: Selector, i: ptx.Instr):
    from . import isel_float as flt
    d, a, b = i.operands[:3]
    dtype, stype = i.parts[-2], i.parts[-1]
    pair = stype in ("f16x2", "bf16x2")
    if pair and dtype not in ("u32", "s32", "f16x2", "bf16x2") or not pair and dtype in ("f16x2", "bf16x2"):
        raise Unsupported(f"'{i.opcode}' (a result type of another shape than its sources)")
    flags = [p for p in i.parts[2:-2]]
    order = [p for p in ("and", "or", "xor") if p in flags] + [p for p in ("ftz",) if p in flags]
    opcode = ".".join(["setp", i.parts[1]] + order + [stype])
    preds = [s.new_pred() for _ in range(2 if pair else 1)]
    names = [f"%__set{len(s.values)}_{k}" for k in range(len(preds))]
    for name, p in zip(names, preds):
        s.values[name] = p
    regs = [ptx.Reg(name) for name in names]
    dst = ptx.RegPair(regs[0], regs[1]) if pair else regs[0]
    compare = ptx.Instr(opcode, [dst] + list(i.operands[1:]), i.guard, i.guard_negated, i.loc)
    if stype in HALF_TYPES:
        flt.setp_f16(s, compare)
    elif stype in ("f32", "f64"):
        flt.setp_float(s, compare)
    else:
        setp_int(s, compare)
    true = SET_TRUE[dtype]
    out = s.reg(d)
    if not pair:
        s.emit("SEL", (), [out], [_in_reg(s, Imm(true, "int")), ZERO, preds[0]], comment=f"{i.opcode}'s value")
        return
    low, high = s.new(), s.new()
    half_true = true & 0xFFFF
    s.emit("SEL", (), [low], [_in_reg(s, Imm(half_true, "int")), ZERO, preds[0]], comment="low half's value")
    s.emit("SEL", (), [high], [_in_reg(s, Imm(half_true << 16, "int")), ZERO, preds[1]], comment="high half's value")
    s.emit("IADD3", (), [out], [low, high, ZERO], comment="the two halves (disjoint bits)")
