"""Generated PTX probes: one small kernel body per PTX instruction x type x operand shape.

The learner (scripts/learn_sm89_table.py) compiles them with ptxas for sm_89 / sm_90 and
learns every SASS word ptxas writes for them, so that the tables cover what the PTX ISA
lets a user write, not only what testsuite/ happens to contain.  A body that ptxas
refuses for the target (a type the instruction does not take there) is dropped by the
learner (ptxas names its line), so the lists below may be generous.

Each body runs after the learner's prelude: %rd0 = out, %rd1 = in (global), %r0 = n
(a u32 parameter), %f0 = f (an f32 parameter), %r1 = tid.x.  Bodies declare their own
registers: %h (b16), %w (b32), %q (b64), %t (pred).  Results are stored, or ptxas
deletes the code.

Operand shapes: every binary/ternary instruction is probed with register sources, with
an immediate, and with a kernel parameter (ptxas reads those from the constant bank or
a uniform register); the learner's bit flips then find the shapes in between.
"""
from __future__ import annotations

import itertools
import re

DECLS = ".reg .b16 %h<16>; .reg .b32 %w<16>; .reg .b64 %q<16>; .reg .pred %t<8>;"
BITS = {"8": 8, "16": 16, "32": 32, "64": 64}
INTS = ["s16", "u16", "s32", "u32", "s64", "u64"]
FLOATS = ["f32", "f64"]
HALVES = ["f16", "f16x2", "bf16", "bf16x2"]


def size(t: str) -> int:
    """Bits of a PTX type: u8 8, bf16 16, f16x2 32, b64 64."""
    if t.endswith("x2"):
        return 32
    return int("".join(c for c in t if c.isdigit()))


def reg(t: str, i: int) -> str:
    return {8: "%h", 16: "%h", 32: "%w", 64: "%q"}[size(t)] + str(i)


def load(t: str, i: int, off: int) -> str:
    n = max(size(t), 16)
    return f"ld.global.b{n} {reg(t, i)}, [%rd1+{off}];"


def store(t: str, i: int, off: int) -> str:
    n = max(size(t), 16)
    return f"st.global.b{n} [%rd0+{off}], {reg(t, i)};"


def param(t: str, i: int) -> str:
    """A value of type t from the kernel parameters (uniform: constant bank / UR)."""
    n = size(t)
    if n == 64:
        return f"cvt.u64.u32 {reg(t, i)}, %r0;"
    if n == 16:
        return f"cvt.u16.u32 {reg(t, i)}, %r0;"
    return f"mov.b32 {reg(t, i)}, %r0;" if t not in ("f32",) else f"mov.b32 {reg(t, i)}, %f0;"


def immediate(t: str) -> str:
    if t == "f32":
        return "0f3FC00000"
    if t == "f64":
        return "0d3FF8000000000000"
    return "7"


def body(lines: list[str]) -> str:
    return "  " + DECLS + "\n" + "".join(f"  {x}\n" for x in lines)


def shaped(t: str, arity: int, make) -> dict:
    """Bodies for an instruction of `arity` sources of type t: all registers, the last an
    immediate (if the type has them), the last a parameter.  `make(dst, srcs)` -> text."""
    out = {}
    for shape in ("r", "i", "c"):
        if shape == "i" and t in HALVES:
            continue
        lines = [load(t, k + 1, 16 * k) for k in range(arity)]
        srcs = [reg(t, k + 1) for k in range(arity)]
        if shape == "i":
            srcs[-1] = immediate(t)
        elif shape == "c":
            lines.append(param(t, 9))
            srcs[-1] = reg(t, 9)
        lines += [make(reg(t, 0), srcs), store(t, 0, 0)]
        out[shape] = body(lines)
    return out


def int_arith() -> dict:
    probes = {}
    ops = {"add": 2, "sub": 2, "mul.lo": 2, "mul.hi": 2, "mad.lo": 3, "mad.hi": 3, "div": 2, "rem": 2,
           "min": 2, "max": 2, "abs": 1, "neg": 1}
    for (op, n), t in itertools.product(ops.items(), INTS):
        if op in ("abs", "neg") and t.startswith("u"):
            continue
        for shape, b in shaped(t, n, lambda d, s, op=op, t=t: f"{op}.{t} {d}, {', '.join(s)};").items():
            probes[f"i_{op}_{t}_{shape}"] = b
    for t in ("s32", "u32"):
        for op, n in (("mul24.lo", 2), ("mul24.hi", 2), ("mad24.lo", 3), ("sad", 3), ("add.sat", 2), ("sub.sat", 2)):
            if op.endswith("sat") and t == "u32":
                continue
            for shape, b in shaped(t, n, lambda d, s, op=op, t=t: f"{op}.{t} {d}, {', '.join(s)};").items():
                probes[f"i_{op}_{t}_{shape}"] = b
    for t in ("s16", "u16", "s32", "u32"):  # widening multiplies
        wide = t[0] + str(2 * size(t))
        lines = [load(t, 1, 0), load(t, 2, 16), f"mul.wide.{t} {reg(wide, 0)}, {reg(t, 1)}, {reg(t, 2)};",
                 store(wide, 0, 0), param(t, 9), f"mad.wide.{t} {reg(wide, 3)}, {reg(t, 1)}, {reg(t, 9)}, {reg(wide, 0)};",
                 store(wide, 3, 16)]
        probes[f"i_mulwide_{t}"] = body(lines)
    for t in ("b16", "b32", "b64"):
        for op, n in (("and", 2), ("or", 2), ("xor", 2), ("not", 1), ("cnot", 1)):
            for shape, b in shaped(t, n, lambda d, s, op=op, t=t: f"{op}.{t} {d}, {', '.join(s)};").items():
                probes[f"b_{op}_{t}_{shape}"] = b
        for op in ("shl", "shr"):
            lines = [load(t, 1, 0), load("b32", 2, 16), f"{op}.{t} {reg(t, 0)}, {reg(t, 1)}, %w2;", store(t, 0, 0),
                     f"{op}.{t} {reg(t, 3)}, {reg(t, 1)}, 3;", store(t, 3, 16),
                     f"{op}.{t} {reg(t, 4)}, {reg(t, 1)}, %r0;", store(t, 4, 32)]
            probes[f"b_{op}_{t}"] = body(lines)
    for t in ("s16", "s32", "s64"):
        lines = [load(t, 1, 0), load("b32", 2, 16), f"shr.{t} {reg(t, 0)}, {reg(t, 1)}, %w2;", store(t, 0, 0)]
        probes[f"b_sar_{t}"] = body(lines)
    for t in ("b32", "b64", "s32", "u32", "s64", "u64"):
        for op in ("popc", "clz", "brev", "bfind", "bfind.shiftamt"):
            if op == "brev" and t[0] != "b" or op in ("popc", "clz") and t[0] != "b" or op.startswith("bfind") and t[0] == "b":
                continue
            lines = [load(t, 1, 0), f"{op}.{t} %w0, {reg(t, 1)};" if op != "brev" else f"brev.{t} {reg(t, 0)}, {reg(t, 1)};",
                     store("b32", 0, 0) if op != "brev" else store(t, 0, 0)]
            probes[f"i_{op}_{t}"] = body(lines)
        if t[0] in "su":
            lines = [load(t, 1, 0), load("b32", 2, 16), load("b32", 3, 32),
                     f"bfe.{t} {reg(t, 0)}, {reg(t, 1)}, %w2, %w3;", store(t, 0, 0),
                     f"bfe.{t} {reg(t, 4)}, {reg(t, 1)}, 3, 5;", store(t, 4, 16)]
            probes[f"i_bfe_{t}"] = body(lines)
        else:
            lines = [load(t, 1, 0), load(t, 2, 16), load("b32", 3, 32), load("b32", 4, 48),
                     f"bfi.{t} {reg(t, 0)}, {reg(t, 1)}, {reg(t, 2)}, %w3, %w4;", store(t, 0, 0)]
            probes[f"i_bfi_{t}"] = body(lines)
    for mode in ("", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"):
        lines = [load("b32", 1, 0), load("b32", 2, 16), load("b32", 3, 32),
                 f"prmt.b32{mode} %w0, %w1, %w2, %w3;", store("b32", 0, 0),
                 f"prmt.b32{mode} %w4, %w1, %r0, 0x3210;", store("b32", 4, 16)]
        probes[f"b_prmt{mode.replace('.', '_')}"] = body(lines)
    for lr, mode, t in itertools.product(("l", "r"), ("wrap", "clamp"), ("b32",)):
        lines = [load("b32", 1, 0), load("b32", 2, 16), load("b32", 3, 32),
                 f"shf.{lr}.{mode}.b32 %w0, %w1, %w2, %w3;", store("b32", 0, 0),
                 f"shf.{lr}.{mode}.b32 %w4, %w1, %w2, 5;", store("b32", 4, 16)]
        probes[f"b_shf_{lr}_{mode}"] = body(lines)
    for a, b in (("u32", "u32"), ("s32", "s32"), ("u32", "s32")):
        lines = [load("b32", 1, 0), load("b32", 2, 16), load("b32", 3, 32),
                 f"dp4a.{a}.{b} %w0, %w1, %w2, %w3;", f"dp2a.lo.{a}.{b} %w4, %w1, %w2, %w3;",
                 store("b32", 0, 0), store("b32", 4, 16)]
        probes[f"i_dp4a_{a}_{b}"] = body(lines)
    lines = [load("b32", 1, 0), load("b32", 2, 16), load("b32", 3, 32)]
    for k, lut in enumerate((0x96, 0xE8, 0xFE, 0x80)):
        lines += [f"lop3.b32 %w{4 + k}, %w1, %w2, %w3, {lut:#x};", store("b32", 4 + k, 16 * k)]
    probes["b_lop3"] = body(lines)
    lines = [load("b32", 1, 0), load("b32", 2, 16), "add.cc.u32 %w3, %w1, %w2;", "addc.cc.u32 %w4, %w1, %r0;",
             "addc.u32 %w5, %w2, 0;", "sub.cc.u32 %w6, %w1, %w2;", "subc.u32 %w7, %w2, %w1;"]
    lines += [store("b32", 3 + k, 16 * k) for k in range(5)]
    probes["i_carry"] = body(lines)
    for t in ("b32", "b64"):
        lines = [load(t, 1, 0), load("b32", 2, 16), f"bmsk.clamp.b32 %w3, %w2, 5;", f"szext.clamp.s32 %w4, %w2, %w2;",
                 "szext.wrap.u32 %w5, %w2, 7;", store("b32", 3, 0), store("b32", 4, 16), store("b32", 5, 32)]
        probes[f"b_bmsk_{t}"] = body(lines)
        break
    return probes


def float_arith() -> dict:
    probes = {}
    for t in FLOATS:
        for op, n in (("add", 2), ("sub", 2), ("mul", 2), ("fma", 3)):
            for rnd in ("rn", "rz", "rm", "rp"):
                for ftz in (("", ".ftz", ".sat", ".ftz.sat") if t == "f32" else ("",)):
                    for shape, b in shaped(t, n, lambda d, s, op=op, t=t, r=rnd, f=ftz: f"{op}.{r}{f}.{t} {d}, {', '.join(s)};").items():
                        probes[f"f_{op}_{rnd}{ftz.replace('.', '_')}_{t}_{shape}"] = b
        for op, n in (("min", 2), ("max", 2), ("abs", 1), ("neg", 1), ("copysign", 2)):
            for shape, b in shaped(t, n, lambda d, s, op=op, t=t: f"{op}.{t} {d}, {', '.join(s)};").items():
                probes[f"f_{op}_{t}_{shape}"] = b
        for mode in (("approx", "approx.ftz", "full", "rn", "rz", "rm", "rp", "rn.ftz") if t == "f32"
                     else ("rn", "rz", "rm", "rp")):
            for shape, b in shaped(t, 2, lambda d, s, m=mode, t=t: f"div.{m}.{t} {d}, {', '.join(s)};").items():
                probes[f"f_div_{mode.replace('.', '_')}_{t}_{shape}"] = b
        for op in (("rcp.approx", "rcp.approx.ftz", "rcp.rn", "rcp.rz", "sqrt.approx", "sqrt.rn", "sqrt.rm",
                    "rsqrt.approx", "sin.approx", "cos.approx", "lg2.approx", "ex2.approx", "tanh.approx",
                    "ex2.approx.ftz", "lg2.approx.ftz") if t == "f32" else
                   ("rcp.rn", "rcp.rz", "rcp.approx.ftz", "sqrt.rn", "sqrt.rp", "rsqrt.approx")):
            lines = [load(t, 1, 0), f"{op}.{t} {reg(t, 0)}, {reg(t, 1)};", store(t, 0, 0)]
            probes[f"f_{op.replace('.', '_')}_{t}"] = body(lines)
        for op in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
            lines = [load(t, 1, 0), f"testp.{op}.{t} %t1, {reg(t, 1)};", "selp.u32 %w0, 1, 0, %t1;", store("b32", 0, 0)]
            probes[f"f_testp_{op}_{t}"] = body(lines)
    for op in ("min.NaN", "max.NaN", "min.ftz", "max.xorsign.abs"):
        for shape, b in shaped("f32", 2, lambda d, s, op=op: f"{op}.f32 {d}, {', '.join(s)};").items():
            probes[f"f_{op.replace('.', '_')}_{shape}"] = b
    for t in HALVES:
        for op, n in (("add", 2), ("sub", 2), ("mul", 2), ("fma.rn", 3), ("min", 2), ("max", 2), ("neg", 1),
                      ("abs", 1), ("add.rn", 2), ("fma.rn.relu", 3), ("min.NaN", 2), ("ex2.approx", 1),
                      ("tanh.approx", 1), ("add.ftz", 2), ("fma.rn.sat", 3)):
            for shape, b in shaped(t, n, lambda d, s, op=op, t=t: f"{op}.{t} {d}, {', '.join(s)};").items():
                probes[f"h_{op.replace('.', '_')}_{t}_{shape}"] = b
    return probes


def conversions() -> dict:
    probes = {}
    types = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64", "f16", "bf16", "f32", "f64"]
    for d, s in itertools.product(types, types):
        if d == s and d not in ("f32", "f64", "f16"):
            continue
        df, sf = d[0] in "fb", s[0] in "fb"
        if df and sf:
            modes = ["rn", "rz", "rm", "rp"] if size(d) < size(s) else (["rni", "rzi", "rmi", "rpi"] if d == s else [""])
        elif df:
            modes = ["rn", "rz", "rm", "rp"]
        elif sf:
            modes = ["rni", "rzi", "rmi", "rpi"]
        else:
            modes = [""]
        for mode in modes:
            for extra in ("", ".sat", ".ftz") if sf or df else ("", ".sat"):
                name = ".".join(x for x in ("cvt", mode) if x) + extra
                lines = [load(s, 1, 0), f"{name}.{d}.{s} {reg(d, 0)}, {reg(s, 1)};", store(d, 0, 0)]
                probes[f"cvt_{d}_{s}_{mode}{extra.replace('.', '_')}"] = body(lines)
    for d in ("f16x2", "bf16x2"):
        for mode in ("rn", "rn.relu", "rz"):
            lines = [load("f32", 1, 0), load("f32", 2, 16), f"cvt.{mode}.{d}.f32 %w0, %w1, %w2;", store("b32", 0, 0)]
            probes[f"cvt_{d}_{mode.replace('.', '_')}"] = body(lines)
    for d in ("f16", "bf16"):
        lines = [load("f32", 1, 0), f"cvt.rn.relu.{d}.f32 %h0, %w1;", store("b16", 0, 0)]
        probes[f"cvt_{d}_relu"] = body(lines)
    lines = [load("f32", 1, 0), "cvt.rna.tf32.f32 %w0, %w1;", store("b32", 0, 0)]
    probes["cvt_tf32"] = body(lines)
    lines = [load("b32", 1, 0), "cvt.pack.sat.u8.s32.b32 %w0, %w1, %w1, 0;", store("b32", 0, 0)]
    probes["cvt_pack"] = body(lines)
    return probes


def compares() -> dict:
    probes = {}
    ints = ["eq", "ne", "lt", "le", "gt", "ge"]
    unsigned = ["lo", "ls", "hi", "hs"]
    floats = ints + ["equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]
    for t in INTS + ["b16", "b32", "b64"] + FLOATS + ["f16", "bf16"]:
        cmps = floats if t[0] == "f" or t == "bf16" else (["eq", "ne"] if t[0] == "b" else ints + (unsigned if t[0] == "u" else []))
        for cmp, bop in itertools.product(cmps, ("", ".and", ".or", ".xor")):
            if bop and cmp not in ("lt", "eq", "ne", "gtu"):
                continue
            for shape, b in shaped(t, 2, lambda d, s: "").items():
                lines = b.splitlines()[1:-2]   # the loads and the parameter, without the op and store
                srcs = [reg(t, 1), reg(t, 2)] if shape == "r" else [reg(t, 1), immediate(t) if shape == "i" else reg(t, 9)]
                if bop:
                    lines.append(f"setp.ne.u32 %t3, %r1, 5;")
                    lines.append(f"setp.{cmp}{bop}.{t} %t1|%t2, {', '.join(srcs)}, %t3;")
                else:
                    lines.append(f"setp.{cmp}.{t} %t1|%t2, {', '.join(srcs)};")
                lines += ["selp.u32 %w0, 1, 0, %t1;", "selp.u32 %w4, 1, 0, %t2;", store("b32", 0, 0), store("b32", 4, 16)]
                probes[f"setp_{cmp}{bop.replace('.', '_')}_{t}_{shape}"] = body([x.strip() for x in lines])
        if t in ("b16", "b32", "b64", "f32", "f64", "s32", "u64"):
            lines = [load(t, 1, 0), load(t, 2, 16), "setp.ne.u32 %t1, %r1, 3;",
                     f"selp.{t} {reg(t, 0)}, {reg(t, 1)}, {reg(t, 2)}, %t1;", store(t, 0, 0),
                     f"selp.{t} {reg(t, 3)}, {reg(t, 1)}, {immediate(t)}, %t1;", store(t, 3, 16)]
            probes[f"selp_{t}"] = body(lines)
    for t in ("s32", "f32"):
        lines = [load(t, 1, 0), load(t, 2, 16), load(t, 3, 32), f"slct.{t}.s32 %w0, %w1, %w2, %w3;" if t == "s32"
                 else "slct.f32.f32 %w0, %w1, %w2, %w3;", store("b32", 0, 0)]
        probes[f"slct_{t}"] = body(lines)
    lines = [load("b32", 1, 0), "setp.ne.u32 %t1, %w1, 0;", "setp.lt.u32 %t2, %r1, %w1;",
             "and.pred %t3, %t1, %t2;", "or.pred %t4, %t1, %t2;", "xor.pred %t5, %t3, %t4;", "not.pred %t6, %t5;",
             "selp.u32 %w0, 1, 0, %t6;", store("b32", 0, 0)]
    probes["pred_logic"] = body(lines)
    return probes


def warp() -> dict:
    probes = {}
    for mode in ("up", "down", "bfly", "idx"):
        for lane, clamp in (("%w2", "%w3"), ("%w2", "31"), ("3", "%w3"), ("3", "31"), ("%r0", "%r0")):
            lines = [load("b32", 1, 0), load("b32", 2, 16), load("b32", 3, 32),
                     f"shfl.sync.{mode}.b32 %w0|%t1, %w1, {lane}, {clamp}, 0xffffffff;",
                     "selp.u32 %w4, 1, 0, %t1;", store("b32", 0, 0), store("b32", 4, 16)]
            probes[f"shfl_{mode}_{lane[1:]}_{clamp[1:]}"] = body(lines)
        lines = [load("b32", 1, 0), load("b32", 5, 16), f"shfl.sync.{mode}.b32 %w0, %w1, 1, 31, %w5;", store("b32", 0, 0)]
        probes[f"shfl_{mode}_mask"] = body(lines)
    for mode in ("all", "any", "uni"):
        lines = [load("b32", 1, 0), "setp.ne.u32 %t1, %w1, 0;", f"vote.sync.{mode}.pred %t2, %t1, 0xffffffff;",
                 "selp.u32 %w0, 1, 0, %t2;", store("b32", 0, 0),
                 f"vote.sync.{mode}.pred %t3, !%t1, %r0;", "selp.u32 %w2, 1, 0, %t3;", store("b32", 2, 16)]
        probes[f"vote_{mode}"] = body(lines)
    lines = [load("b32", 1, 0), "setp.ne.u32 %t1, %w1, 0;", "vote.sync.ballot.b32 %w0, %t1, 0xffffffff;",
             store("b32", 0, 0), "activemask.b32 %w2;", store("b32", 2, 16)]
    probes["vote_ballot"] = body(lines)
    for t in ("b32", "b64"):
        lines = [load(t, 1, 0), f"match.any.sync.{t} %w0, {reg(t, 1)}, 0xffffffff;", store("b32", 0, 0),
                 f"match.all.sync.{t} %w2|%t1, {reg(t, 1)}, 0xffffffff;", "selp.u32 %w3, 1, 0, %t1;",
                 store("b32", 2, 16), store("b32", 3, 32)]
        probes[f"match_{t}"] = body(lines)
    for op, t in itertools.product(("add", "min", "max", "and", "or", "xor"), ("u32", "s32", "b32")):
        if (op in ("and", "or", "xor")) != (t == "b32"):
            continue
        lines = [load("b32", 1, 0), f"redux.sync.{op}.{t} %w0, %w1, 0xffffffff;", store("b32", 0, 0)]
        probes[f"redux_{op}_{t}"] = body(lines)
    return probes


def atomics() -> dict:
    probes = {}
    ops = {"add": ["u32", "s32", "u64", "f32", "f64", "f16x2", "bf16x2", "f16"], "min": ["u32", "s32", "u64", "s64"],
           "max": ["u32", "s32", "u64", "s64"], "inc": ["u32"], "dec": ["u32"], "and": ["b32", "b64"],
           "or": ["b32", "b64"], "xor": ["b32", "b64"], "exch": ["b32", "b64"], "cas": ["b32", "b64"]}
    for space, (op, types) in itertools.product(("global", "shared", ""), ops.items()):
        for t in types:
            sp = f".{space}" if space else ""
            addr = "[%q5]" if space == "shared" else "[%rd0+16]"
            head = [load(t, 1, 0), load(t, 2, 16)]
            if space == "shared":
                head = [".shared .align 8 .b8 sbuf[256];", "mov.u64 %q5, sbuf;"] + head
            if op == "cas":
                lines = head + [f"atom{sp}.cas.{t} {reg(t, 0)}, {addr}, {reg(t, 1)}, {reg(t, 2)};", store(t, 0, 0)]
            else:
                lines = head + [f"atom{sp}.{op}.{t} {reg(t, 0)}, {addr}, {reg(t, 1)};", store(t, 0, 0),
                                f"red{sp}.{op}.{t} {addr}, {reg(t, 2)};"]
            probes[f"atom_{space or 'generic'}_{op}_{t}"] = body(lines)
    for sem, scope in itertools.product(("relaxed", "acquire", "release", "acq_rel"), ("cta", "gpu", "sys")):
        lines = [load("b32", 1, 0), f"atom.{sem}.{scope}.global.add.u32 %w0, [%rd0+16], %w1;", store("b32", 0, 0)]
        probes[f"atom_{sem}_{scope}"] = body(lines)
    return probes


def memory() -> dict:
    probes = {}
    types = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "f32", "f64"]
    vectors = ["v2.u32", "v4.u32", "v2.u64", "v2.f32", "v4.f32", "v2.u16", "v4.u16", "v2.f64"]
    for space in ("global", "shared", "local", ""):
        for t in types + vectors:
            base = t.split(".")[-1]
            lanes = int(t[1]) if t.startswith("v") else 1
            regs = [reg(base, k + 1) for k in range(lanes)]
            val = "{" + ", ".join(regs) + "}" if lanes > 1 else regs[0]
            head, addr = [], "[%rd1+32]"
            if space == "shared":
                head = [".shared .align 16 .b8 sbuf[256];", "mov.u64 %q10, sbuf;"]
                addr = "[%q10+32]"
            elif space == "local":
                head = [".local .align 16 .b8 lbuf[64];", "mov.u64 %q10, lbuf;"]
                addr = "[%q10+16]"
            sp = f".{space}" if space else ""
            lines = head + [load(base, k + 1, 16 * k) for k in range(lanes)]
            if space in ("shared", "local"):
                lines += [f"st{sp}.{t} {addr}, {val};", "bar.sync 0;" if space == "shared" else ""]
            out = [reg(base, k + 5) for k in range(lanes)]
            oval = "{" + ", ".join(out) + "}" if lanes > 1 else out[0]
            lines += [f"ld{sp}.{t} {oval}, {addr};"] + [store(base, k + 5, 16 * k) for k in range(lanes)]
            if space in ("global", ""):
                lines += [f"st{sp}.{t} [%rd0+64], {val};"]
            probes[f"mem_{space or 'generic'}_{t.replace('.', '_')}"] = body([x for x in lines if x])
    for cache in ("ca", "cg", "cs", "lu", "cv", "nc", "volatile", "relaxed.gpu", "acquire.gpu", "relaxed.sys",
                  "acquire.cta", "L1::no_allocate", "L1::evict_last", "L2::64B"):
        for t in ("u32", "v4.u32", "u8"):
            base = t.split(".")[-1]
            lanes = 4 if t.startswith("v4") else 1
            out = [reg(base, k + 5) for k in range(lanes)]
            oval = "{" + ", ".join(out) + "}" if lanes > 1 else out[0]
            spc = "global." + cache if cache not in ("volatile", "relaxed.gpu", "acquire.gpu", "relaxed.sys",
                                                     "acquire.cta") else cache + ".global"
            lines = [f"ld.{spc}.{t} {oval}, [%rd1+32];"] + [store(base, k + 5, 16 * k) for k in range(lanes)]
            probes[f"ld_{cache.replace('.', '_').replace(':', '_')}_{t.replace('.', '_')}"] = body(lines)
    for cache in ("wb", "cg", "cs", "wt", "volatile", "relaxed.gpu", "release.gpu", "release.sys"):
        spc = "global." + cache if cache in ("wb", "cg", "cs", "wt") else cache + ".global"
        lines = [load("b32", 1, 0), f"st.{spc}.u32 [%rd0+16], %w1;"]
        probes[f"st_{cache.replace('.', '_')}"] = body(lines)
    # ld.param: a 32-bit parameter into a 64-bit register, narrow parameters; ld.const
    lines = ["ld.param.u32 %q1, [p_n];", "ld.param.s32 %q2, [p_n];", "ld.param.u8 %h1, [p_n];",
             "ld.param.s16 %w1, [p_n];", store("b64", 1, 0), store("b64", 2, 8), store("b16", 1, 16),
             store("b32", 1, 24)]
    probes["ld_param_widen"] = body(lines)
    lines = [load("b32", 1, 0), "and.b32 %w2, %w1, 60;", "cvt.u64.u32 %q1, %w2;", "mov.u64 %q2, cdata;",
             "add.u64 %q3, %q2, %q1;", "ld.const.u32 %w3, [%q3];", "ld.const.u32 %w4, [cdata+8];",
             "ld.const.v2.u32 {%w5, %w6}, [%q3];", store("b32", 3, 0), store("b32", 4, 16), store("b32", 5, 32)]
    probes["ld_const"] = body(lines)
    # cp.async: LDGSTS and its waits (DEPBAR / LDGDEPBAR)
    for size, cache in ((4, "ca"), (8, "ca"), (16, "ca"), (16, "cg")):
        lines = [".shared .align 16 .b8 cbuf[512];", "mov.u32 %w1, cbuf;", "shl.b32 %w2, %r1, 4;",
                 "add.u32 %w3, %w1, %w2;", f"cp.async.{cache}.shared.global [%w3], [%rd1+16], {size};",
                 f"cp.async.{cache}.shared.global [%w3+32], [%rd1], {size}, %r0;" if cache == "ca" else "",
                 "cp.async.commit_group;", "cp.async.wait_group 1;", "cp.async.wait_group 0;",
                 "cp.async.wait_all;", "bar.sync 0;", "ld.shared.u32 %w4, [%w3];", store("b32", 4, 0)]
        probes[f"cp_async_{cache}_{size}"] = body([x for x in lines if x])
    lines = [load("b64", 1, 0), "cvta.to.global.u64 %q2, %q1;", "cvta.global.u64 %q3, %q2;", store("b64", 3, 0),
             "isspacep.shared %t1, %q1;", "isspacep.global %t2, %q1;", "isspacep.local %t3, %q1;",
             "selp.u32 %w0, 1, 0, %t1;", "selp.u32 %w1, 1, 0, %t2;", "selp.u32 %w2, 1, 0, %t3;",
             store("b32", 0, 8), store("b32", 1, 12), store("b32", 2, 16),
             "prefetch.global.L2 [%rd1];", "prefetchu.L1 [%rd1];"]
    probes["addresses"] = body(lines)
    return probes


def control() -> dict:
    probes = {}
    lines = ["mov.u32 %w0, %clock;", "mov.u64 %q0, %clock64;", "mov.u64 %q1, %globaltimer;",
             "mov.u32 %w1, %nctaid.x;", "mov.u32 %w2, %lanemask_ge;", "mov.u32 %w3, %nsmid;",
             "mov.u32 %w4, %dynamic_smem_size;", "mov.u32 %w5, %total_smem_size;",
             store("b32", 0, 0), store("b64", 0, 8), store("b64", 1, 16), store("b32", 1, 24),
             store("b32", 2, 28), store("b32", 3, 32), store("b32", 4, 36), store("b32", 5, 40)]
    probes["sregs_more"] = body(lines)
    lines = [load("b32", 1, 0), "setp.ne.u32 %t1, %w1, 0;", "bar.red.popc.u32 %w2, 0, %t1;",
             "bar.red.and.pred %t2, 0, %t1;", "bar.arrive 1, 64;", "barrier.sync.aligned 2;",
             "bar.sync 3, 32;", "selp.u32 %w3, 1, 0, %t2;", store("b32", 2, 0), store("b32", 3, 16),
             "membar.cta;", "membar.gl;", "membar.sys;", "fence.acq_rel.gpu;", "fence.sc.sys;",
             "nanosleep.u32 100;", "nanosleep.u32 %w1;"]
    probes["barriers"] = body(lines)
    lines = [load("b32", 1, 0), "setp.ne.u32 %t1, %w1, 0;", "@%t1 trap;", "st.global.u32 [%rd0], %w1;"]
    probes["trap"] = body(lines)
    lines = [load("b32", 1, 0), "st.global.u32 [%rd0], %w1;", "exit;"]
    probes["exit_early"] = body(lines)
    return probes


# Module-level declarations the call probes need.
HEADER = """
.extern .func (.param .b32 ret) vprintf (.param .b64 fmt, .param .b64 args);
.extern .func __assertfail (.param .b64 msg, .param .b64 file, .param .b32 line, .param .b64 func, .param .b64 size);
.global .align 1 .b8 probe_fmt[4] = {37, 100, 10, 0};
.const .align 4 .b32 cdata[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
.func (.param .b32 r) probe_helper (.param .b32 a)
{
  .reg .b32 %x<4>;
  ld.param.b32 %x0, [a]; mul.lo.s32 %x1, %x0, %x0; st.param.b32 [r], %x1; ret;
}
"""


def calls() -> dict:
    probes = {}
    lines = [".local .align 8 .b8 args[8];", load("b32", 1, 0), "mov.u64 %q1, args;", "cvta.local.u64 %q2, %q1;",
             "st.local.u32 [args], %w1;", "mov.u64 %q3, probe_fmt;", "cvta.global.u64 %q4, %q3;",
             "{", ".param .b64 f; .param .b64 a; .param .b32 r;", "st.param.b64 [f], %q4;", "st.param.b64 [a], %q2;",
             "call.uni (r), vprintf, (f, a);", "ld.param.b32 %w2, [r];", "}", store("b32", 2, 0)]
    probes["call_vprintf"] = body(lines)
    lines = [load("b32", 1, 0), "setp.eq.u32 %t1, %w1, 12345;", "@!%t1 bra OK;", "mov.u64 %q1, probe_fmt;",
             "cvta.global.u64 %q2, %q1;", "{", ".param .b64 m; .param .b64 fl; .param .b32 l; .param .b64 fn; .param .b64 s;",
             "st.param.b64 [m], %q2;", "st.param.b64 [fl], %q2;", "st.param.b32 [l], 7;", "st.param.b64 [fn], %q2;",
             "st.param.b64 [s], 1;", "call.uni __assertfail, (m, fl, l, fn, s);", "}", "OK:", store("b32", 1, 0)]
    probes["call_assertfail"] = body(lines)
    lines = [load("b32", 1, 0), "mov.u64 %q1, probe_helper;", "setp.ne.u32 %t1, %w1, 0;",
             "{", ".param .b32 a; .param .b32 r;", "st.param.b32 [a], %w1;",
             "proto: .callprototype (.param .b32 _) _ (.param .b32 _);", "call (r), %q1, (a), proto;",
             "ld.param.b32 %w2, [r];", "}", store("b32", 2, 0)]
    probes["call_indirect"] = body(lines)
    return probes


def generated() -> dict:
    """name -> body, every family above."""
    out = {}
    for family in (int_arith, float_arith, conversions, compares, warp, atomics, memory, control, calls):
        out.update({"g_" + re.sub(r"\W", "_", k): v for k, v in family().items()})
    return out
