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
from .isel_int import (FALSE, TRUE, ZERO, ISETP_CMP, UNSIGNED_CMP, _in_reg, compare64, extend, size_of, type_of,
                       wide)
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
    mask = s.value(i.operands[0], "b32")
    s.emit("WARPSYNC", (), [], [mask])


def _warpsync(s: Selector, mask_op):
    """Threads named by a mask other than the whole warp meet first."""
    mask = s.value(_known_constant(s.ptx_func, mask_op), "b32")
    if isinstance(mask, Imm) and mask.bits == 0xFFFFFFFF:
        return
    s.emit("WARPSYNC", (), [], [mask], comment="member mask")   # remove_convergent_warpsyncs


SHFL_MODES = {"up": "UP", "down": "DOWN", "bfly": "BFLY", "idx": "IDX"}


def shfl(s: Selector, i: ptx.Instr):
    """shfl.sync.mode.b32 d[|p], a, b, c, mask -> SHFL.MODE p, d, a, b, c."""
    d, a, b, c = i.operands[:4]
    mode = SHFL_MODES[next(p for p in i.parts[1:] if p in SHFL_MODES)]
    if len(i.operands) > 4:
        _warpsync(s, i.operands[4])
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
    d, p = i.operands[:2]
    mode = next(x for x in i.parts[1:] if x in ("all", "any", "uni", "ballot"))
    if len(i.operands) > 2:
        _warpsync(s, i.operands[2])
    src = s.value(p, "pred")
    if mode == "ballot":
        s.emit("VOTE", ("ANY",), [s.reg(d), TRUE], [src])
        return
    s.emit("VOTE", ({"all": "ALL", "any": "ANY", "uni": "EQ"}[mode],), [s.reg(d)], [src])


def activemask(s: Selector, i: ptx.Instr):
    s.emit("VOTE", ("ANY",), [s.reg(i.operands[0]), TRUE], [TRUE])


REDUX_OPS = {"add": "SUM", "min": "MIN", "max": "MAX", "and": "", "or": "OR", "xor": "XOR"}


def redux(s: Selector, i: ptx.Instr):
    """redux.sync.op.type d, a, mask: REDUX into a uniform register, then back."""
    d, a = i.operands[:2]
    if len(i.operands) > 2:
        _warpsync(s, i.operands[2])
    op = next(p for p in i.parts[1:] if p in REDUX_OPS)
    t = type_of(i)
    mods = tuple(m for m in (REDUX_OPS[op],) if m)
    if t == "s32" and op in ("min", "max", "add"):
        mods += ("S32",)
    uniform = s.func.new_vreg("UR", 1)
    s.emit("REDUX", mods, [uniform], [s.r(a, t)])
    s.emit("MOV", (), [s.reg(d)], [uniform])


def match(s: Selector, i: ptx.Instr):
    d, a = i.operands[:2]
    mode = "ALL" if i.has("all") else "ANY"
    t = type_of(i)
    if len(i.operands) > 2:
        _warpsync(s, i.operands[2])
    src = wide(s, a, t) if size_of(t) == 8 else s.r(a, t)
    mods = (mode,) + (("U64",) if size_of(t) == 8 else ())
    if mode == "ALL":
        dst, pred = _pair_dst(s, d)
        s.emit("MATCH", mods, [pred, dst], [src])
    else:
        s.emit("MATCH", mods, [s.reg(d)], [src])


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
