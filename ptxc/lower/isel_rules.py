"""The instruction selection table: PTX opcode pattern -> builder, most specific first.

Each rule says in one line why it lowers as it does.  `branches=True` marks a
builder that emits control flow or predicated code of its own: a guarded PTX
instruction of that kind is skipped by a branch instead of predicating each
SASS instruction (select_instrs.lower_one).
"""
from __future__ import annotations

from ..ptx import ir as ptx
from . import isel_control as ctl
from . import isel_float as flt
from . import isel_int as ints
from . import isel_math as math
from . import lower_calls as calls
from . import isel_memory as mem
from .select_instrs import Rule, Unsupported

I = r"[usb](16|32|64)"          # integer types of arithmetic
I8 = r"[usb](8|16|32|64)"
F = r"(\.(rn|rz|rm|rp))?(\.ftz)?(\.sat)?"


def mov_rule(s, i):
    """mov of a special register reads it where the driver puts it; others copy."""
    if isinstance(i.operands[1], ptx.SpecialReg):
        ctl.mov_special(s, i.operands[0], i.operands[1])
    else:
        ints.mov(s, i)


def one_destination(build):
    """`setp p|q, ...` (a predicate and its complement) is read but not lowered yet:
    a clean diagnostic at the instruction rather than a wrong or crashing lowering."""
    def rule(s, i):
        if isinstance(i.operands[0], ptx.RegPair):
            raise Unsupported(f"'{i.opcode}' with two destinations (p|q)")
        build(s, i)
    return rule


RULES = [
    # ---- data movement ----
    Rule(r"mov\.(pred|[usb](16|32|64)|f32|f64)", mov_rule, "copies; special registers from S2R or c[0x0][..]"),
    Rule(r"ld(\.(weak|volatile|relaxed|acquire|cta|gpu|sys|cluster))*(\.(global|shared|local|const|param))?"
         r"(\.(ca|cg|cs|lu|cv|nc|L1::\w+|L2::\w+))*(\.v[248])?\.[usbf](8|16|32|64)", mem.ld,
         "loads: LDG/LDS/LDL by state space (LD generic), c[bank][..] for parameters and constants"),
    Rule(r"st(\.(weak|volatile|relaxed|release|cta|gpu|sys|cluster))*(\.(global|shared|local|param))?"
         r"(\.(wb|cg|cs|wt))*(\.v[248])?\.[usbf](8|16|32|64)", mem.st,
         "stores: STG/STS/STL by state space"),
    Rule(r"atom(\.(relaxed|acquire|release|acq_rel|cta|gpu|sys))*\.shared(\.(relaxed|acquire|release|acq_rel|cta|gpu|sys))*"
         r"\.(add\.f(32|64)|(add|min|max|and|or|xor)\.[usb]64)", mem.atom,
         "shared atomics the unit lacks (floats, 64-bit but CAS/EXCH): a compare-and-swap loop (ATOMS.CAST.SPIN)",
         branches=True),
    Rule(r"red(\.(relaxed|release|cta|gpu|sys))*\.shared(\.(relaxed|release|cta|gpu|sys))*"
         r"\.(add\.f(32|64)|(add|min|max|and|or|xor)\.[usb]64)", mem.red,
         "shared reductions the unit lacks: the same loop", branches=True),
    Rule(r"atom(\.(relaxed|acquire|release|acq_rel|cta|gpu|sys))*(\.(global|shared))?"
         r"(\.(relaxed|acquire|release|acq_rel|cta|gpu|sys))*\.(add|min|max|inc|dec|and|or|xor|exch|cas)\.[usbf](32|64)", mem.atom,
         "atomics: ATOMG (RED when the result is unused) / ATOMS / ATOM"),
    Rule(r"red(\.(relaxed|release|cta|gpu|sys))*(\.(global|shared))?(\.(relaxed|release|cta|gpu|sys))*"
         r"\.(add|min|max|inc|dec|and|or|xor)\.[usbf](32|64)", mem.red, "reductions without a result: RED"),
    Rule(r"cvta(\.to)?\.(global|shared|local)\.u(32|64)", mem.cvta,
         "address-space conversions: identity for global, window base for shared/local"),
    Rule(r"isspacep\.(global|shared|local)", mem.isspacep, "which window a generic address is in"),
    Rule(r"prefetch(u)?\..*", mem.prefetch, "a hint, dropped"),
    Rule(r"(membar\.(cta|gl|sys)|fence\.(sc|acq_rel)\.(cta|gpu|sys))", mem.membar,
         "memory fences: MEMBAR (+ ERRBAR, CCTL.IVALL beyond the CTA)"),

    # ---- integer arithmetic ----
    Rule(r"(add|sub)\.cc\.[us](32|64)|(addc|subc)(\.cc)?\.[us](32|64)", ints.add_carry,
         "the PTX carry flag in a predicate: IADD3 writes it, IADD3.X reads it (subtraction adds ~b)"),
    Rule(r"mad\.(lo|hi)\.cc\.[us](32|64)|madc\.(lo|hi)(\.cc)?\.[us](32|64)", ints.mad_carry,
         "IMAD (.HI) for the product, then its addition to c in the carry chain"),
    Rule(rf"add\.{I}", ints.add_int, "IADD3 (64-bit: a pseudo expanded to IADD3 + IADD3.X)"),
    Rule(rf"sub\.{I}", ints.sub_int, "IADD3 with a negated source; 64-bit with the carry chain"),
    Rule(rf"neg\.s(16|32|64)", ints.neg_int, "0 - a"),
    Rule(rf"mul\.lo\.{I}", ints.mul_lo, "IMAD with an RZ addend (64-bit: IMAD.WIDE.U32 + cross terms)"),
    Rule(r"mul24\.lo\.[su]32", ints.mul24_lo, "SGXT / LOP3 to 24 bits, then IMAD"),
    Rule(r"mul\.wide\.[su](16|32)", ints.mul_wide, "IMAD.WIDE (16-bit: extend, then a 32-bit IMAD)"),
    Rule(r"mad\.wide\.[su](16|32)", ints.mul_wide, "IMAD.WIDE with the 64-bit addend"),
    Rule(rf"mul\.hi\.{I}", ints.mul_hi, "IMAD.HI; 64-bit: ptxas's learned sequence"),
    Rule(rf"mad\.lo\.{I}", ints.mad_lo, "IMAD"),
    Rule(r"mad\.hi\.[su]32", ints.mad_hi, "IMAD.HI then the addend"),
    Rule(r"(div|rem)\.[su](8|16|32|64)", math.learned, "ptxas's MUFU.RCP + IMAD.HI sequence (64-bit: its subroutine)",
         branches=True),
    Rule(r"(and|or|xor)\.(pred|b16|b32|b64)", ints.logic, "LOP3 truth tables; PLOP3 for predicates"),
    Rule(r"not\.(pred|b16|b32|b64)", ints.not_, "LOP3 ~b; PLOP3 for predicates"),
    Rule(r"cnot\.b(16|32|64)", ints.cnot, "a == 0"),
    Rule(r"shl\.b(16|32|64)", ints.shl, "IMAD.SHL by a constant, SHF.L otherwise (funnel shifts for 64 bits)"),
    Rule(r"shr\.[usb](16|32|64)", ints.shr, "SHF.R (.S32 for signed), after extending narrow values"),
    Rule(rf"(min|max)\.{I}", ints.min_max, "IMNMX (64-bit: compare and select)"),
    Rule(r"abs\.s(16|32|64)", ints.abs_int, "IABS"),
    Rule(r"popc\.b(32|64)", ints.popc, "POPC"),
    Rule(r"clz\.b(32|64)", ints.clz, "31 - FLO.U32"),
    Rule(r"bfind(\.shiftamt)?\.[su](32|64)", ints.bfind, "FLO (64-bit: of the high word, else the low)"),
    Rule(r"brev\.b(32|64)", ints.brev, "BREV"),
    Rule(r"bfi\.b(32|64)", ints.bfi, "shift and LOP3 select under the field mask"),
    Rule(r"bfe\.[su](32|64)", ints.bfe, "shift the field to the top, then down (arithmetic for signed)"),
    Rule(r"prmt\.b32(\.\w+)?", ints.prmt, "PRMT"),
    Rule(r"sad\.[su]32", ints.sad, "VABSDIFF then the addend"),
    Rule(r"vabsdiff4\.u32\.u32\.u32(\.add)?", ints.vabsdiff4, "VABSDIFF4.U8 (ACC for .add)"),
    Rule(r"shf\.[lr]\.(wrap|clamp)\.b32", ints.shf, "SHF (.W for wrap) on the pair b:a"),
    Rule(r"selp\.[usbf](16|32|64)", ints.selp, "SEL (two for 64 bits)"),
    Rule(r"slct\.[usbf](32)\.[sf]32", ints.slct, "compare with zero, then SEL"),

    # ---- comparisons and control ----
    Rule(r"setp\.(eq|ne|lt|le|gt|ge|lo|ls|hi|hs)(\.(and|or|xor))?\.[usb](16|32|64)", one_destination(ctl.setp_int),
         "ISETP (64-bit: the low words unsigned, the high words with .EX)"),
    Rule(r"setp\.(eq|ne|lt|le|gt|ge|equ|neu|ltu|leu|gtu|geu|num|nan)(\.(and|or|xor))?(\.ftz)?\.f(32|64)",
         one_destination(flt.setp_float), "FSETP / DSETP"),
    Rule(r"set\.(eq|ne|lt|le|gt|ge|lo|ls|hi|hs|equ|neu|ltu|leu|gtu|geu|num|nan)(\.(and|or|xor|ftz))*"
         r"\.(u32|s32|f32|f16|f16x2|bf16|bf16x2)\.([usb](16|32|64)|f32|f64|f16|f16x2|bf16|bf16x2)", ctl.set_,
         "the setp lowering, then SEL of the type's true value per element (ptxas: FSET.BF, HSET2)"),
    Rule(r"bra(\.uni)?", ctl.bra, "BRA; a block ends after it"),
    Rule(r"call(\.uni)?", calls.call, "real calls (recursive, indirect): CALL.REL.NOINC, lower_calls' ABI"),
    Rule(r"ret(\.uni)?", ctl.ret, "EXIT in a kernel, RET.REL.NODEC R20 in a .func"),
    Rule(r"exit", ctl.exit_, "EXIT"),
    Rule(r"trap", ctl.trap, "BPT.TRAP"),
    Rule(r"(bar|barrier)(\.cta)?(\.sync|\.aligned)*", ctl.bar_sync, "BAR.SYNC.DEFER_BLOCKING"),
    Rule(r"bar(rier)?(\.cta)?\.red\.(popc|and|or)(\.u32|\.pred)", ctl.bar_red, "BAR.RED + B2R.RESULT"),
    Rule(r"bar\.warp\.sync", ctl.bar_warp_sync, "WARPSYNC"),
    Rule(r"shfl\.sync\.(up|down|bfly|idx)\.b32", ctl.shfl, "SHFL (WARPSYNC first for a partial mask)"),
    Rule(r"vote\.sync\.(all|any|uni)\.pred", ctl.vote, "VOTE.ALL/ANY/EQ (a varying mask: exclusive or cut down)",
         branches=True),
    Rule(r"vote\.sync\.ballot\.b32", ctl.vote, "VOTE.ANY into a register (a varying mask: exclusive or cut down)",
         branches=True),
    Rule(r"activemask\.b32", ctl.activemask, "VOTE.ANY R, PT, PT"),
    Rule(r"redux\.sync\.(add|min|max|and|or|xor)\.[usb]32", ctl.redux,
         "REDUX into a uniform register (a varying mask: an exclusive group)", branches=True),
    Rule(r"match\.(any|all)\.sync\.b(32|64)", ctl.match, "MATCH.ANY / MATCH.ALL (a varying mask: exclusive or cut down)",
         branches=True),
    Rule(r"nanosleep\.u32", ctl.nanosleep, "NANOSLEEP"),

    # ---- floating point ----
    Rule(rf"add{F}\.f32", flt.add_f32, "FADD"),
    Rule(rf"sub{F}\.f32", flt.sub_f32, "FADD with a negated source"),
    Rule(rf"mul{F}\.f32", flt.mul_f32, "FMUL"),
    Rule(rf"(fma|mad){F}\.f32", flt.fma_f32, "FFMA"),
    Rule(r"neg(\.ftz)?\.f32", flt.neg_f32, "FADD -a, -RZ (ptxas's negation)"),
    Rule(r"abs(\.ftz)?\.f32", flt.abs_f32, "FADD |a|, -RZ"),
    Rule(r"(min|max)(\.ftz)?(\.NaN)?\.f32", flt.min_max_f32, "FMNMX"),
    Rule(r"copysign\.f32", flt.copysign_f32, "LOP3 sign bit from one, magnitude from the other"),
    Rule(r"copysign\.f64", flt.copysign_f64, "MOV of the low word, LOP3 of the high words"),
    Rule(r"add(\.(rn|rz|rm|rp))?\.f64", flt.add_f64, "DADD"),
    Rule(r"sub(\.(rn|rz|rm|rp))?\.f64", flt.sub_f64, "DADD with a negated source"),
    Rule(r"mul(\.(rn|rz|rm|rp))?\.f64", flt.mul_f64, "DMUL"),
    Rule(r"(fma|mad)(\.(rn|rz|rm|rp))?\.f64", flt.fma_f64, "DFMA"),
    Rule(r"neg\.f64", flt.neg_f64, "flip the sign bit"),
    Rule(r"abs\.f64", flt.abs_f64, "clear the sign bit"),
    Rule(r"(min|max)\.f64", math.learned, "ptxas's DSETP.MIN/MAX select with NaN handling", branches=True),
    Rule(r"rcp\.approx\.ftz\.f32", flt.rcp_approx, "MUFU.RCP"),
    Rule(r"rsqrt\.approx\.ftz\.f32", flt.rsqrt_approx, "MUFU.RSQ"),
    Rule(r"ex2\.approx\.ftz\.f32", lambda s, i: flt.mufu(s, "EX2", s.reg(i.operands[0]), s.r(i.operands[1], "f32")),
         "MUFU.EX2"),
    Rule(r"lg2\.approx\.ftz\.f32", lambda s, i: flt.mufu(s, "LG2", s.reg(i.operands[0]), s.r(i.operands[1], "f32")),
         "MUFU.LG2"),
    Rule(r"(sin|cos)\.approx(\.ftz)?\.f32", flt.sin_cos_approx, "FMUL.RZ by 1/(2 pi), then MUFU.SIN/COS"),
    Rule(r"tanh\.approx\.f32", flt.tanh_approx, "MUFU.TANH"),
    Rule(r"(div|rcp|sqrt|rsqrt|ex2|lg2)(\.(rn|rz|rm|rp|approx|full))?(\.ftz)?\.f(32|64)", math.learned,
         "ptxas's sequences: MUFU estimates refined by FFMA/DFMA, slow paths inline", branches=True),
    *flt.HALF_RULES,
    Rule(r"cvt(\.(rn|rz|rm|rp|rni|rzi|rmi|rpi))?(\.ftz)?(\.sat)?\.[usbf](8|16|32|64)\.[usbf](8|16|32|64)",
         flt.cvt, "I2F/I2FP, F2I, F2F, FRND; integer widening by SHF/PRMT, narrowing as a copy"),
]
