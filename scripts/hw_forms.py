#!/usr/bin/env python3
"""The emulator's semantics checked against silicon, one PTX instruction form at a time
(the way Mesa NAK's hw_tests check each instruction on the GPU).

    python scripts/hw_forms.py prepare WORK                 # here: PTX, ptxas and ptxc cubins, inputs
    python scripts/hw_forms.py emulate WORK                 # here: every cubin on the emulator (+ reference)
    python scripts/hw_forms.py run WORK --json OUT.json     # on the GPU machine: ptxas's (and ptxc's) sm_90 cubins
    python scripts/hw_forms.py compare WORK OUT.json        # here: GPU vs emulator, bit for bit

A *form* is one PTX instruction with its type and modifiers (`cvt.rni.s32.f32`,
`shf.l.clamp.b32`, `vote.sync.ballot.b32` under a half-warp mask, `atom.global.cas.b64`):
ptxc.emu must give for the SASS ptxas writes for it what the H200 gives.  The catalog
(`forms()`) covers the integer, bit, compare, float (f16/bf16/f32/f64, every rounding,
.ftz/.sat/.approx), conversion, warp and atomic instructions the frontend or nvcc emit.

Each form gets NCASES = 128 operand sets (one block of four warps, a case per thread):
edge values first (0, -0, denormals, infinities, NaNs with payloads, INT_MIN/INT_MAX,
shift counts past the width, exact halfway values for every rounding), then random
ones, the same on every run (seeded by the form's name).  Forms are batched: one kernel
holds a group of forms, reading its operands from `in` and writing its results to `out`,
both arrays of 8-byte slots, slot `base + operand * NCASES + thread`; a group is one
ptxas run and one launch.  An atomic's memory operand is the thread's own slot of `in`
(or thread 0's slot for all threads: a same-address atomic, integer operations only,
whose final value does not depend on the order), so `in` is compared after the launch too.

`emulate` runs each group's cubins on the emulator: ptxas's and ptxc's, sm_89 and sm_90;
they must give the same slots, and where a Python reference is easy (integer operations,
integer conversions, int<->float conversions in every rounding) the reference's.
`compare` puts the GPU's slots beside the emulator's for ptxas's sm_90 cubin (and, where
ptxc compiled the group, ptxc's sm_90 cubin on the GPU beside ptxas's on the GPU).  A
difference is a bug unless tests/data/hw_forms_tolerances.json names the form, with
the reason (MUFU's approximations are not bit-exact in the emulator, say) and the ulps
allowed.  tests/test_hw_forms.py runs the CPU part; `run` needs only numpy and the CUDA
driver's Python bindings (ptxc.device.driver_api), so the device machine runs it as is.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import struct
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NCASES = 128
ARCHS = ("sm_90", "sm_89")
TOLERANCES = ROOT / "tests" / "data" / "hw_forms_tolerances.json"
M32, M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF

# ---- types -------------------------------------------------------------------------------
# PTX register type, load/store type and width (bits) of every operand type a form names.
TYPES = {
    "pred": ("pred", "u32", 1),
    "u8": ("b16", "u8", 8), "s8": ("b16", "s8", 8),
    "u16": ("b16", "u16", 16), "s16": ("b16", "s16", 16), "b16": ("b16", "u16", 16),
    "f16": ("b16", "u16", 16), "bf16": ("b16", "u16", 16),
    "u32": ("b32", "u32", 32), "s32": ("b32", "u32", 32), "b32": ("b32", "u32", 32),
    "f16x2": ("b32", "u32", 32), "bf16x2": ("b32", "u32", 32), "f32": ("f32", "f32", 32),
    "u64": ("b64", "u64", 64), "s64": ("b64", "u64", 64), "b64": ("b64", "u64", 64), "f64": ("f64", "f64", 64),
}


def width(t: str) -> int:
    return TYPES[t.split(":")[0]][2]


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


F32_EDGES = [0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3f000000, 0x3fc00000, 0x40200000, 0xc0200000,
             0x40600000, 0xbf000000, 0x00000001, 0x807fffff, 0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff,
             0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc12345, 0x7fbfffff, 0x3eaaaaab, 0x4f000000,
             0xcf000000, 0x4f800000, 0x5f000000, 0xdf000000, 0x5f800000, 0x4b800001, 0x3f801000, 0x3f803000,
             0x477ff000, 0x477fe000, 0x47800000, 0x33800000, 0x33000000, 0x33c00000, 0x387fc000, 0x3f808000,
             0x3f818000, 0x3f808001, 0x40490fdb, 0x4e800000, 0xceffffff, 0x4f7fffff, 0x3f7fffff, 0x00400000]
F64_EDGES = [f64_bits(x) for x in (0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.5, -0.5, 1 / 3, math.pi,
                                    2.0 ** 31, -2.0 ** 31, 2.0 ** 32, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64,
                                    4294967295.5, 2147483647.5, -2147483648.5, 1 + 2.0 ** -24, 1 + 3 * 2.0 ** -24,
                                    1 + 2.0 ** -53, 65520.0, 65504.0, 2.0 ** -24, 2.0 ** -25, 2.0 ** -149,
                                    2.0 ** -150, 3.4028235677973366e38, 3.4028235e38 * 1.0000001, 1e300, 1e-300)] + [
    0x0000000000000001, 0x800fffffffffffff, 0x0010000000000000, 0x7fefffffffffffff, 0x7ff0000000000000,
    0xfff0000000000000, 0x7ff8000000000000, 0x7ff0000000000001, 0xfff8123456789abc, 0x3ff0000010000000,
    0x3ff0000030000000, 0x36a0000000000000, 0x3690000000000000]
F16_EDGES = [0x0000, 0x8000, 0x3c00, 0xbc00, 0x3800, 0x3e00, 0x4100, 0xc100, 0x0001, 0x83ff, 0x0400, 0x7bff,
             0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe12, 0x3555, 0x4248, 0x5bff, 0x6bff, 0x77ff, 0x3bff]
BF16_EDGES = [0x0000, 0x8000, 0x3f80, 0xbf80, 0x3f00, 0x3fc0, 0x4020, 0xc020, 0x0001, 0x807f, 0x0080, 0x7f7f,
              0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffa5, 0x3eab, 0x4049, 0x4f00, 0xcf00, 0x4780, 0x3f7f]
INT_EDGES = {
    8: [0, 1, 2, 0x7f, 0x80, 0x81, 0xff, 0xfe, 7, 8],
    16: [0, 1, 2, 0x7fff, 0x8000, 0x8001, 0xffff, 0xfffe, 15, 16, 17, 0xff, 0x100],
    32: [0, 1, 2, 3, 7, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 0xfffffffe, 31, 32, 33, 63, 64,
         0x12345678, 0xdeadbeef, 0x0000ffff, 0xffff0000, 0x00ff00ff, 0x55555555],
    64: [0, 1, 2, 3, 0x7fffffffffffffff, 0x8000000000000000, 0x8000000000000001, M64, M64 - 1, 63, 64, 65,
         0xffffffff, 0x100000000, 0x80000000, 0xffffffff80000000, 0x123456789abcdef0, 0x00000001ffffffff],
}


def edges(t: str) -> list[int]:
    base, _, dom = t.partition(":")
    if dom == "shift":      # a shift count / bit position: small, at and past the width
        return [0, 1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 0xffffffff, 0x80000000]
    if dom == "small":      # a few distinct values (match, same-address atomics)
        return [0, 1, 2, 3]
    if dom == "lane":
        return list(range(32))
    if base == "pred":
        return [0, 1]
    if base == "f32":
        return F32_EDGES
    if base == "f64":
        return F64_EDGES
    if base == "f16":
        return F16_EDGES
    if base == "bf16":
        return BF16_EDGES
    if base in ("f16x2", "bf16x2"):
        e = F16_EDGES if base == "f16x2" else BF16_EDGES
        return [e[i] | e[(i * 7 + 3) % len(e)] << 16 for i in range(len(e))]
    return INT_EDGES[width(base)]


def random_value(t: str, rng) -> int:
    base, _, dom = t.partition(":")
    if dom == "shift":
        return int(rng.integers(0, 70))
    if dom == "small":
        return int(rng.integers(0, 4))
    if dom == "lane":
        return int(rng.integers(0, 32))
    if dom == "ctl":        # shfl's c operand: clamp and segment mask
        return int(rng.integers(0, 32)) | int(rng.integers(0, 32)) << 8
    if base == "pred":
        return int(rng.integers(0, 2))
    bits = width(base)
    if base in ("f32", "f64") and rng.random() < 0.5:      # an ordinary number, not just random bits
        x = float(rng.uniform(-8, 8)) * 2.0 ** int(rng.integers(-4, 5))
        return f32_bits(x) if base == "f32" else f64_bits(x)
    if bits < 32 or base in ("f16", "bf16"):
        return int(rng.integers(0, 1 << 16)) & ((1 << bits) - 1)
    if rng.random() < 0.25 and base not in ("f16x2", "bf16x2"):   # small magnitudes, either sign
        v = int(rng.integers(-300, 300))
        return v & ((1 << bits) - 1)
    return int(rng.integers(0, 1 << 32)) if bits == 32 else int(rng.integers(0, 1 << 63)) * 2 + int(rng.integers(0, 2))


def operand_values(form: "Form") -> list[list[int]]:
    """NCASES values per input: every edge value of each operand appears, paired with
    different edges of the others (a stride per operand), then random values."""
    rng = np.random.default_rng(zlib.crc32(form.name.encode()))
    cols = []
    for j, t in enumerate(form.ins):
        e = edges(t) if form.values is None else form.values
        n_edge = min(len(e) * 2, NCASES * 3 // 4)
        stride = next(k for k in range(1 + 2 * j, 10 * len(e) + 2) if math.gcd(k, len(e)) == 1)
        col = [e[(i * stride + j * 5) % len(e)] for i in range(n_edge)]
        col += [random_value(t, rng) for _ in range(NCASES - n_edge)]
        cols.append(col)
    return cols


# ---- forms ---------------------------------------------------------------------------------
@dataclass
class Form:
    """One PTX instruction form: `body` is PTX with {i0}.. for the inputs' registers,
    {o0}.. for the outputs', {m} for the memory operand's address, {mask} the member mask."""
    name: str
    body: str
    ins: tuple
    outs: tuple
    ref: object = None              # f(*ints) -> tuple of ints (None: no reference for that case)
    group: str = "misc"
    mem: str | None = None          # "own" (the thread's slot of input 0) or "shared" (thread 0's)
    mask: str = "0xffffffff"        # warp forms: the member mask (an immediate or %mhalf)
    values: list | None = None      # operand values instead of the types' edges
    arch: int = 89                  # the oldest target the form compiles for
    warp_ref: object = None         # f(columns) -> [outputs per case]: a reference over whole warps
    mem_ref: object = None          # atomics: f(old, *operands) -> the memory operand's new value (None: no reference)


def sx(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def wrap(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


def _signed(t: str) -> bool:
    return t[0] == "s"


def _val(v: int, t: str) -> int:
    return sx(v, width(t)) if _signed(t) else wrap(v, width(t))


def int_forms() -> list[Form]:
    out = []

    def add(name, body, ins, outs, ref, group):
        out.append(Form(name, body, ins, outs, ref, group))

    for t in ("s16", "u16", "s32", "u32", "s64", "u64"):
        w = width(t)
        g = f"int{w}"
        add(f"add.{t}", f"add.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), lambda a, b, w=w: (wrap(a + b, w),), g)
        add(f"sub.{t}", f"sub.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), lambda a, b, w=w: (wrap(a - b, w),), g)
        add(f"mul.lo.{t}", f"mul.lo.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,),
            lambda a, b, w=w: (wrap(a * b, w),), g)
        add(f"mul.hi.{t}", f"mul.hi.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,),
            lambda a, b, t=t, w=w: (wrap(_val(a, t) * _val(b, t) >> w, w),), g)
        add(f"mad.lo.{t}", f"mad.lo.{t} {{o0}}, {{i0}}, {{i1}}, {{i2}};", (t, t, t), (t,),
            lambda a, b, c, w=w: (wrap(a * b + c, w),), g)
        if w >= 32:
            add(f"mad.hi.{t}", f"mad.hi.{t} {{o0}}, {{i0}}, {{i1}}, {{i2}};", (t, t, t), (t,),
                lambda a, b, c, t=t, w=w: (wrap((_val(a, t) * _val(b, t) >> w) + c, w),), g)
        if w <= 32:
            wide = t[0] + str(2 * w)
            add(f"mul.wide.{t}", f"mul.wide.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (wide,),
                lambda a, b, t=t, w=w: (wrap(_val(a, t) * _val(b, t), 2 * w),), g)
            if w == 32:
                add(f"mad.wide.{t}", f"mad.wide.{t} {{o0}}, {{i0}}, {{i1}}, {{i2}};", (t, t, wide), (wide,),
                    lambda a, b, c, t=t, w=w: (wrap(_val(a, t) * _val(b, t) + c, 2 * w),), g)
        for op in ("div", "rem"):
            def ref(a, b, t=t, w=w, op=op):
                x, y = _val(a, t), _val(b, t)
                if y == 0:
                    return (None,)        # PTX leaves it undefined: the GPU decides
                q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
                return (wrap(q if op == "div" else x - q * y, w),)
            add(f"{op}.{t}", f"{op}.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), ref, f"div{w}")
        for op in ("min", "max"):
            f = min if op == "min" else max
            add(f"{op}.{t}", f"{op}.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,),
                lambda a, b, t=t, w=w, f=f: (wrap(f(_val(a, t), _val(b, t)), w),), g)
        if t[0] == "s":
            add(f"abs.{t}", f"abs.{t} {{o0}}, {{i0}};", (t,), (t,), lambda a, t=t, w=w: (wrap(abs(_val(a, t)), w),), g)
            add(f"neg.{t}", f"neg.{t} {{o0}}, {{i0}};", (t,), (t,), lambda a, w=w: (wrap(-a, w),), g)
        # shifts: the count is an unsigned 32-bit register, any value (PTX clamps it to the width)
        b = "b" + str(w)
        if t[0] == "u":
            add(f"shl.{b}", f"shl.{b} {{o0}}, {{i0}}, {{i1}};", (b, "u32:shift"), (b,),
                lambda a, s, w=w: (wrap(a << min(s, w), w),), f"shift{w}")
        add(f"shr.{t}", f"shr.{t} {{o0}}, {{i0}}, {{i1}};", (t, "u32:shift"), (t,),
            lambda a, s, t=t, w=w: (wrap(_val(a, t) >> min(s, w), w),), f"shift{w}")
    for t in ("s32", "u32"):
        add(f"add.sat.s32" if t == "s32" else "add.cc+addc.u32",
            "add.sat.s32 {o0}, {i0}, {i1};" if t == "s32" else
            "add.cc.u32 {o0}, {i0}, {i1};\n\taddc.u32 {o1}, {i0}, {i1};",
            (t, t), (t,) if t == "s32" else (t, t),
            (lambda a, b: (wrap(max(-2 ** 31, min(2 ** 31 - 1, sx(a, 32) + sx(b, 32))), 32),)) if t == "s32" else
            (lambda a, b: (wrap(a + b, 32), wrap(a + b + ((a + b) >> 32), 32))), "int32")
        add(f"mul24.lo.{t}", f"mul24.lo.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,),
            lambda a, b, t=t: (wrap(_val(wrap(a, 24) if t[0] == "u" else sx(a, 24), t) *
                                    (wrap(b, 24) if t[0] == "u" else sx(b, 24)), 32),), "int32")
        add(f"mad24.lo.{t}", f"mad24.lo.{t} {{o0}}, {{i0}}, {{i1}}, {{i2}};", (t, t, t), (t,),
            lambda a, b, c, t=t: (wrap((wrap(a, 24) if t[0] == "u" else sx(a, 24)) *
                                       (wrap(b, 24) if t[0] == "u" else sx(b, 24)) + c, 32),), "int32")
        add(f"sad.{t}", f"sad.{t} {{o0}}, {{i0}}, {{i1}}, {{i2}};", (t, t, t), (t,),
            lambda a, b, c, t=t: (wrap(abs(_val(a, t) - _val(b, t)) + c, 32),), "int32")
    add("sub.sat.s32", "sub.sat.s32 {o0}, {i0}, {i1};", ("s32", "s32"), ("s32",),
        lambda a, b: (wrap(max(-2 ** 31, min(2 ** 31 - 1, sx(a, 32) - sx(b, 32))), 32),), "int32")
    add("sub.cc+subc.u32", "sub.cc.u32 {o0}, {i0}, {i1};\n\tsubc.u32 {o1}, {i0}, {i1};", ("u32", "u32"),
        ("u32", "u32"), lambda a, b: (wrap(a - b, 32), wrap(a - b - (1 if b > a else 0), 32)), "int32")
    add("max.relu.s32", "max.relu.s32 {o0}, {i0}, {i1};", ("s32", "s32"), ("s32",),
        lambda a, b: (wrap(max(0, sx(a, 32), sx(b, 32)), 32),), "int32")
    add("min.relu.s32", "min.relu.s32 {o0}, {i0}, {i1};", ("s32", "s32"), ("s32",),
        lambda a, b: (wrap(max(0, min(sx(a, 32), sx(b, 32))), 32),), "int32")
    for sh in ("l", "r"):
        for mode in ("wrap", "clamp"):
            def ref(a, b, n, sh=sh, mode=mode):
                n = n & 31 if mode == "wrap" else min(n, 32)
                v = b << 32 | a
                return (wrap(v << n >> 32, 32),) if sh == "l" else (wrap(v >> n, 32),)
            add(f"shf.{sh}.{mode}.b32", f"shf.{sh}.{mode}.b32 {{o0}}, {{i0}}, {{i1}}, {{i2}};",
                ("b32", "b32", "u32:shift"), ("b32",), ref, "shift32")
    return out


def popc(v):
    return bin(v).count("1")


def bit_forms() -> list[Form]:
    out = []

    def add(name, body, ins, outs, ref, group="bits"):
        out.append(Form(name, body, ins, outs, ref, group))

    for w in (32, 64):
        b = f"b{w}"
        add(f"brev.{b}", f"brev.{b} {{o0}}, {{i0}};", (b,), (b,), lambda a, w=w: (int(f"{a:0{w}b}"[::-1], 2),))
        add(f"popc.{b}", f"popc.{b} {{o0}}, {{i0}};", (b,), ("u32",), lambda a: (popc(a),))
        add(f"clz.{b}", f"clz.{b} {{o0}}, {{i0}};", (b,), ("u32",), lambda a, w=w: (w - a.bit_length(),))
        for t in ("u", "s"):
            def ref(a, w=w, t=t, shift=False):
                v = sx(a, w) if t == "s" else a
                if v < 0:
                    v = ~v
                if v == 0:
                    return (M32,)
                pos = v.bit_length() - 1
                return (w - 1 - pos if shift else pos,)
            add(f"bfind.{t}{w}", f"bfind.{t}{w} {{o0}}, {{i0}};", (f"{t}{w}",), ("u32",), ref)
            add(f"bfind.shiftamt.{t}{w}", f"bfind.shiftamt.{t}{w} {{o0}}, {{i0}};", (f"{t}{w}",), ("u32",),
                lambda a, r=ref: r(a, shift=True))

            def bfe(a, p, n, w=w, t=t):
                if p > 0xff or n > 0xff:
                    return (None,)      # PTX restricts both to 0..255: wider values are the GPU's choice
                p, n = p & 0xff, n & 0xff
                if n == 0:
                    return (0,)
                v = sx(a, w) if t == "s" else a
                if p >= w:      # PTX: the sign bit (or 0) of the source, replicated
                    field_ = -1 if t == "s" and v < 0 else 0
                else:
                    field_ = v >> p
                    top = min(p + n - 1, w - 1)
                    nn = top - p + 1
                    field_ &= (1 << nn) - 1
                    if t == "s" and field_ >> (nn - 1) & 1 and nn < w + 1:
                        field_ -= 1 << nn
                return (wrap(field_, w),)
            add(f"bfe.{t}{w}", f"bfe.{t}{w} {{o0}}, {{i0}}, {{i1}}, {{i2}};", (f"{t}{w}", "u32:shift", "u32:shift"),
                (f"{t}{w}",), bfe)

        def bfi(a, b, p, n, w=w):
            if p > 0xff or n > 0xff:
                return (None,)          # as bfe
            p, n = p & 0xff, n & 0xff
            if n == 0 or p >= w:
                return (b,)
            n = min(n, w - p)
            m = ((1 << n) - 1) << p
            return ((b & ~m | (a << p) & m) & ((1 << w) - 1),)
        add(f"bfi.{b}", f"bfi.{b} {{o0}}, {{i0}}, {{i1}}, {{i2}}, {{i3}};", (b, b, "u32:shift", "u32:shift"), (b,), bfi)
        for op, f in (("and", lambda a, b: a & b), ("or", lambda a, b: a | b), ("xor", lambda a, b: a ^ b)):
            add(f"{op}.{b}", f"{op}.{b} {{o0}}, {{i0}}, {{i1}};", (b, b), (b,), lambda a, c, f=f: (f(a, c),))
        add(f"not.{b}", f"not.{b} {{o0}}, {{i0}};", (b,), (b,), lambda a, w=w: (wrap(~a, w),))
        add(f"cnot.{b}", f"cnot.{b} {{o0}}, {{i0}};", (b,), (b,), lambda a: (int(a == 0),))
    add("and.b16", "and.b16 {o0}, {i0}, {i1};", ("b16", "b16"), ("b16",), lambda a, b: (a & b,))
    add("xor.b16", "xor.b16 {o0}, {i0}, {i1};", ("b16", "b16"), ("b16",), lambda a, b: (a ^ b,))
    for lut in (0x96, 0xe8, 0x1e, 0x80, 0xfe, 0x01, 0x6a, 0xb4, 0xca, 0x3c):
        def ref(a, b, c, lut=lut):
            r = 0
            for i in range(32):
                idx = (a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1)
                r |= (lut >> idx & 1) << i
            return (r,)
        add(f"lop3.b32.{lut:#04x}", f"lop3.b32 {{o0}}, {{i0}}, {{i1}}, {{i2}}, {lut:#04x};", ("b32", "b32", "b32"),
            ("b32",), ref)
    for mode in ("", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"):
        def ref(a, b, c, mode=mode):
            byts = [(a | b << 32) >> (8 * i) & 0xff for i in range(8)]
            if mode:
                # the PTX ISA's prmt modes: the selector's low two bits n pick, for result
                # bytes 0..3 (f4e: n..n+3; b4e: n, n-1, n-2, n-3 mod 8; rc8: n; ecl: max(i, n);
                # ecr: min(i, n); rc16: the half-word n&1 twice)
                n = c & 3
                pick = {".f4e": lambda i: (n + i) & 7, ".b4e": lambda i: (n - i) & 7, ".rc8": lambda i: n,
                        ".ecl": lambda i: max(i, n), ".ecr": lambda i: min(i, n),
                        ".rc16": lambda i: 2 * (n & 1) + (i & 1)}[mode]
                return (sum(byts[pick(i)] << (8 * i) for i in range(4)),)
            r = 0
            for k in range(4):
                sel = c >> (4 * k) & 0xf
                v = byts[sel & 7]
                if sel & 8:
                    v = 0xff if v & 0x80 else 0
                r |= v << (8 * k)
            return (r,)
        add(f"prmt.b32{mode}", f"prmt.b32{mode} {{o0}}, {{i0}}, {{i1}}, {{i2}};", ("b32", "b32", "b32"), ("b32",), ref)
    return out


INT_CMPS = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
            "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}
UNSIGNED_CMPS = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
FLOAT_CMPS = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")


def compare_forms() -> list[Form]:
    out = []
    for t in ("s16", "u16", "s32", "u32", "s64", "u64"):
        w = width(t)
        cmps = list(INT_CMPS) + (list(UNSIGNED_CMPS) if t[0] == "u" else [])
        for c in cmps:
            f = INT_CMPS[UNSIGNED_CMPS.get(c, c)]
            out.append(Form(f"setp.{c}.{t}", f"setp.{c}.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), ("pred",),
                            lambda a, b, t=t, f=f: (int(f(_val(a, t), _val(b, t))),), f"setp{w}"))
    for c, bop in (("lt", "and"), ("ge", "or"), ("ne", "xor")):
        f = INT_CMPS[c]
        g = {"and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y}[bop]
        out.append(Form(f"setp.{c}.{bop}.s32", f"setp.{c}.{bop}.s32 {{o0}}|{{o1}}, {{i0}}, {{i1}}, {{i2}};",
                        ("s32", "s32", "pred"), ("pred", "pred"),
                        lambda a, b, p, f=f, g=g: (g(int(f(sx(a, 32), sx(b, 32))), p),
                                                   g(int(not f(sx(a, 32), sx(b, 32))), p)), "setp32"))
    for t in ("f32", "f64"):
        for c in FLOAT_CMPS:
            for ftz in ((".ftz", "") if t == "f32" else ("",)):
                out.append(Form(f"setp.{c}{ftz}.{t}", f"setp.{c}{ftz}.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), ("pred",),
                                group=f"fsetp{t}"))
    for c in ("eq", "ne", "lt", "le", "gt", "geu", "nan", "num"):
        out.append(Form(f"setp.{c}.f16", f"setp.{c}.f16 {{o0}}, {{i0}}, {{i1}};", ("f16", "f16"), ("pred",),
                        group="f16"))
        out.append(Form(f"setp.{c}.f16x2", f"setp.{c}.f16x2 {{o0}}|{{o1}}, {{i0}}, {{i1}};", ("f16x2", "f16x2"),
                        ("pred", "pred"), group="f16"))
    for t in ("b32", "b64", "f32", "f64", "b16"):
        out.append(Form(f"selp.{t}", f"selp.{t} {{o0}}, {{i0}}, {{i1}}, {{i2}};", (t, t, "pred"), (t,),
                        lambda a, b, p: (a if p else b,), "setp32"))
    for t in ("f32", "f64"):
        for k in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
            out.append(Form(f"testp.{k}.{t}", f"testp.{k}.{t} {{o0}}, {{i0}};", (t,), ("pred",), group=f"fsetp{t}"))
    return out


ROUNDINGS = (".rn", ".rz", ".rm", ".rp")


def _f64_nan(*ops) -> int | None:
    """The NaN an f64 operation writes for NaN operands (H200, docs/hw-forms.md): the first
    NaN source, quieted, its sign kept (the negation of sub/neg not applied)."""
    for v in ops:
        if (v >> 52 & 0x7ff) == 0x7ff and v & (1 << 52) - 1:
            return v | 1 << 51
    return None


def f64_arith_ref(op: str, mode: str):
    """add/sub/mul/fma.f64: NaN operands (the rule above), infinite operands (exact in
    every rounding), and everything in round-to-nearest but fma (Python's IEEE doubles)."""
    def ref(*ops):
        nan = _f64_nan(*ops)
        if nan is not None:
            return (nan,)
        xs = [bits_float(v, "f64") for v in ops]
        inf = any(math.isinf(x) for x in xs)
        if op == "fma":
            x, y, z = xs
            if math.isinf(x) or math.isinf(y):
                r = x * y + z
            elif math.isinf(z):
                r = z
            else:
                return (None,)
        elif not inf and mode not in ("", ".rn"):
            return (None,)
        else:
            x, y = xs
            r = x + y if op == "add" else x - y if op == "sub" else x * y
        return (None,) if math.isnan(r) else (f64_bits(r),)
    return ref


def f64_unary_ref(op: str):
    def ref(a):
        nan = _f64_nan(a)
        if nan is not None:
            return (nan,)
        if op == "neg":
            return (a ^ 1 << 63,)
        if op == "abs":
            return (a & ~(1 << 63),)
        x = bits_float(a, "f64")                 # sqrt.rn: IEEE's correctly rounded root
        return (None,) if x < 0 else (f64_bits(math.sqrt(x)),)
    return ref


def half_float(v: int, fmt: str) -> float:
    if fmt == "f16":
        return float(np.frombuffer(struct.pack("<H", v & 0xffff), np.float16)[0])
    return bits_float((v & 0xffff) << 16, "f32")


def _lanes(t: str):
    """(element format, element width, count) of a float operand type."""
    return {"f32": ("f32", 32, 1), "f16": ("f16", 16, 1), "bf16": ("bf16", 16, 1),
            "f16x2": ("f16", 16, 2), "bf16x2": ("bf16", 16, 2)}[t]


def minmax_nan_ref(op: str, t: str, ftz: bool):
    """min/max.NaN: a NaN element gives the canonical NaN (0x7fffffff, 0x7fff per half:
    the f32/half pipes' NaN, H200); else the smaller/larger operand.  Equal values
    (+0/-0) and flushed subnormals: no reference."""
    fmt, w, n = _lanes(t)
    canon = 0x7fffffff if w == 32 else 0x7fff

    def ref(a, b):
        r = 0
        for k in range(n):
            ea, eb = a >> (w * k) & (1 << w) - 1, b >> (w * k) & (1 << w) - 1
            x, y = (bits_float(ea, "f32"), bits_float(eb, "f32")) if w == 32 else (half_float(ea, fmt), half_float(eb, fmt))
            if math.isnan(x) or math.isnan(y):
                v = canon
            elif x == y or (ftz and (x != 0 and abs(x) < 2.0 ** -126 or y != 0 and abs(y) < 2.0 ** -126)):
                return (None,)
            else:
                v = ea if (x < y) == (op == "min") else eb
            r |= v << (w * k)
        return (r,)
    return ref


def half_ftz_ref(op: str, t: str):
    """add/sub/mul.rn.ftz.f16(x2): subnormal inputs and results flushed to a zero of their
    sign, the exact result (a float64, exact for two f16s) rounded to nearest; NaN: none."""
    _fmt, _w, n = _lanes(t)

    def flush(h):
        return h & 0x8000 if (h & 0x7c00) == 0 else h

    def ref(a, b):
        r = 0
        for k in range(n):
            x, y = half_float(flush(a >> (16 * k) & 0xffff), "f16"), half_float(flush(b >> (16 * k) & 0xffff), "f16")
            v = x + y if op == "add" else x - y if op == "sub" else x * y
            if math.isnan(v):
                return (None,)
            r |= flush(round_to_format(v, "f16", "rn")) << (16 * k)
        return (r,)
    return ref


def float_forms() -> list[Form]:
    out = []

    def add(name, body, ins, outs, group, arch=89):
        ref = None
        base = name.split(".")
        if name.endswith(".f64") and base[0] in ("add", "sub", "mul", "fma"):
            ref = f64_arith_ref(base[0], "." + base[1] if len(base) > 2 else "")
        elif name in ("neg.f64", "abs.f64", "sqrt.rn.f64"):
            ref = f64_unary_ref(base[0])
        elif ".NaN." in name and base[0] in ("min", "max"):
            ref = minmax_nan_ref(base[0], base[-1], ".ftz." in name)
        elif ".rn.ftz." in name and base[0] in ("add", "sub", "mul") and base[-1] in ("f16", "f16x2"):
            ref = half_ftz_ref(base[0], base[-1])
        out.append(Form(name, body, ins, outs, ref, group, arch=arch))

    for t in ("f32", "f64"):
        g = f"float{t}"
        for r in ROUNDINGS:
            for ftz in ((".ftz", "") if t == "f32" else ("",)):
                for sat in ((".sat", "") if t == "f32" else ("",)):
                    m = f"{r}{ftz}{sat}"
                    for op in ("add", "sub", "mul"):
                        add(f"{op}{m}.{t}", f"{op}{m}.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), g)
                    add(f"fma{m}.{t}", f"fma{m}.{t} {{o0}}, {{i0}}, {{i1}}, {{i2}};", (t, t, t), (t,), g)
            for ftz in ((".ftz", "") if t == "f32" else ("",)):
                add(f"div{r}{ftz}.{t}", f"div{r}{ftz}.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), f"fdiv{t}")
                add(f"rcp{r}{ftz}.{t}", f"rcp{r}{ftz}.{t} {{o0}}, {{i0}};", (t,), (t,), f"fdiv{t}")
                add(f"sqrt{r}{ftz}.{t}", f"sqrt{r}{ftz}.{t} {{o0}}, {{i0}};", (t,), (t,), f"fdiv{t}")
        add(f"add.{t}", f"add.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), g)
        for ftz in ((".ftz", "") if t == "f32" else ("",)):
            for op in ("min", "max"):
                add(f"{op}{ftz}.{t}", f"{op}{ftz}.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), g)
                if t == "f32":
                    add(f"{op}{ftz}.NaN.{t}", f"{op}{ftz}.NaN.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), g, 89)
            add(f"abs{ftz}.{t}", f"abs{ftz}.{t} {{o0}}, {{i0}};", (t,), (t,), g)
            add(f"neg{ftz}.{t}", f"neg{ftz}.{t} {{o0}}, {{i0}};", (t,), (t,), g)
        add(f"copysign.{t}", f"copysign.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), g)
    for ftz in (".ftz", ""):
        add(f"div.approx{ftz}.f32", f"div.approx{ftz}.f32 {{o0}}, {{i0}}, {{i1}};", ("f32", "f32"), ("f32",), "mufu")
        add(f"div.full{ftz}.f32", f"div.full{ftz}.f32 {{o0}}, {{i0}}, {{i1}};", ("f32", "f32"), ("f32",), "mufu")
        for fn in ("rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos"):
            add(f"{fn}.approx{ftz}.f32", f"{fn}.approx{ftz}.f32 {{o0}}, {{i0}};", ("f32",), ("f32",), "mufu")
    add("tanh.approx.f32", "tanh.approx.f32 {o0}, {i0};", ("f32",), ("f32",), "mufu")
    add("rcp.approx.ftz.f64", "rcp.approx.ftz.f64 {o0}, {i0};", ("f64",), ("f64",), "mufu")
    add("rsqrt.approx.f64", "rsqrt.approx.f64 {o0}, {i0};", ("f64",), ("f64",), "mufu")
    add("ex2.approx.f16", "ex2.approx.f16 {o0}, {i0};", ("f16",), ("f16",), "mufu")
    add("ex2.approx.f16x2", "ex2.approx.f16x2 {o0}, {i0};", ("f16x2",), ("f16x2",), "mufu")
    # f16 / bf16 arithmetic
    for t in ("f16", "f16x2", "bf16", "bf16x2"):
        g = "f16" if t.startswith("f16") else "bf16"
        arch = 90 if t.startswith("bf16") else 89
        mods = ((".rn", ".rn.ftz", ".rn.sat", "") if g == "f16" else (".rn", ""))
        for m in mods:
            for op in ("add", "sub", "mul"):
                add(f"{op}{m}.{t}", f"{op}{m}.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), g, arch)
        for m in ((".rn", ".rn.ftz", ".rn.sat", ".rn.relu") if g == "f16" else (".rn", ".rn.relu")):
            add(f"fma{m}.{t}", f"fma{m}.{t} {{o0}}, {{i0}}, {{i1}}, {{i2}};", (t, t, t), (t,), g, 89)
        for op in ("min", "max"):
            add(f"{op}.{t}", f"{op}.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), g, 89)
            add(f"{op}.NaN.{t}", f"{op}.NaN.{t} {{o0}}, {{i0}}, {{i1}};", (t, t), (t,), g, 89)
        add(f"neg.{t}", f"neg.{t} {{o0}}, {{i0}};", (t,), (t,), g, 89)
        add(f"abs.{t}", f"abs.{t} {{o0}}, {{i0}};", (t,), (t,), g, 89)
    return out


INT_TYPES = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")


def round_int_to_float(v: int, mant: int, mode: str) -> tuple[int, int]:
    """(significand, exponent) of the integer v != 0 rounded to `mant` bits in `mode`."""
    neg = v < 0
    a = -v if neg else v
    shift = max(a.bit_length() - mant, 0)
    q, rem = a >> shift, a & ((1 << shift) - 1)
    half = 1 << (shift - 1) if shift else 0
    up = {"rn": rem > half or (rem == half and shift and q & 1), "rz": False,
          "rm": neg and rem != 0, "rp": (not neg) and rem != 0}[mode]
    q += int(bool(up))
    return (-q if neg else q), shift


def int_to_float_bits(v: int, t: str, mode: str) -> int:
    if v == 0:
        return 0
    q, e = round_int_to_float(v, 24 if t == "f32" else 53, mode)
    x = math.ldexp(float(q), e)     # exact: q has at most mant+1 bits
    if t == "f32":
        return f32_bits(x) if abs(x) < 2.0 ** 128 else (0xff800000 if x < 0 else 0x7f800000)
    return f64_bits(x)


def bits_float(v: int, t: str) -> float:
    return struct.unpack("<f", struct.pack("<I", v))[0] if t == "f32" else struct.unpack("<d", struct.pack("<Q", v))[0]


def float_to_int(v: int, ft: str, it: str, mode: str, ftz: bool) -> int:
    x = bits_float(v, ft)
    w = width(it)
    if math.isnan(x):
        # measured on the H200 (docs/hw-forms.md): 0 from f32/f16 to <= 32 bits (ptxas's
        # F2I.NTZ); from f64, or to 64 bits, the destination width's sign bit
        return 0 if ft != "f64" and w <= 32 else 1 << (w - 1)
    if ftz and ft == "f32" and (v & 0x7f800000) == 0:
        x = 0.0
    if math.isinf(x):
        n = x
    else:
        fl = math.floor(x)
        n = {"rni": round(x), "rzi": math.trunc(x), "rmi": fl, "rpi": math.ceil(x)}[mode]
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if it[0] == "s" else (0, (1 << w) - 1)
    n = lo if n < lo else hi if n > hi else int(n)
    return wrap(n, w)


FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23)}      # exponent bits, significand bits
QNAN = {"f16": 0x7e00, "bf16": 0x7fc0, "f32": 0x7fc00000}      # IEEE 754's default quiet NaNs


def round_to_format(x: float, fmt: str, mode: str, satfinite: bool = False) -> int | None:
    """Bits of the exact value x rounded to `fmt` in mode rn/rz/rm/rp (None for NaN: the
    NaN a unit writes is the GPU's choice, not the reference's)."""
    from fractions import Fraction
    ebits, mbits = FORMATS[fmt]
    sign_bit = 1 << (ebits + mbits)
    inf = ((1 << ebits) - 1) << mbits
    if math.isnan(x):
        return None
    sign = sign_bit if math.copysign(1.0, x) < 0 else 0
    if math.isinf(x):
        return sign | (inf - 1 if satfinite else inf)
    if x == 0:
        return sign
    bias = (1 << (ebits - 1)) - 1
    a = Fraction(abs(x))
    e = max(math.frexp(abs(x))[1] - 1, 1 - bias)
    ulp = Fraction(2) ** (e - mbits)
    n, rem = divmod(a, ulp)
    n = int(n)
    up = {"rn": rem * 2 > ulp or (rem * 2 == ulp and n & 1), "rz": False,
          "rm": bool(sign) and rem != 0, "rp": not sign and rem != 0}[mode]
    n += int(bool(up))
    v = n * ulp
    if v == 0:
        return sign
    ve = v.numerator.bit_length() - v.denominator.bit_length()
    while Fraction(2) ** ve > v:
        ve -= 1
    while Fraction(2) ** (ve + 1) <= v:
        ve += 1
    if ve > bias:
        toward_zero = mode == "rz" or (mode == "rm" and not sign) or (mode == "rp" and sign)
        return sign | (inf - 1 if toward_zero or satfinite else inf)
    if ve < 1 - bias:
        return sign | int(v / Fraction(2) ** (1 - bias - mbits))
    return sign | (ve + bias) << mbits | int(v / Fraction(2) ** (ve - mbits)) - (1 << mbits)


def _int_as_float(v: int) -> float:
    """An integer as a float that rounds to f16 as the integer does: exact below 2^53, and
    past f16's range (65520 and up) any value overflows the same way."""
    return float(v) if abs(v) < 2 ** 53 else math.copysign(2.0 ** 60, v)


def _flush32(v: int) -> int:
    return v & 0x80000000 if (v & 0x7f800000) == 0 else v


def narrow_nan_ref(bits: int, fmt: str) -> int:
    """f64 NaN -> f32/f16/bf16 as the H200 converts it (second run, 2026-12-02):
    0xfff8123456789abc -> 0xffc091a2 / 0xfe04 / 0xffc0, i.e. the sign, the payload's top
    bits (the significand cut to the narrower width), and the quiet bit."""
    mbits, width = {"f32": (23, 32), "f16": (10, 16), "bf16": (7, 16)}[fmt]
    sign = (bits >> 63) << (width - 1)
    return sign | QNAN[fmt] | ((bits & ((1 << 52) - 1)) >> (52 - mbits))


def to_half_ref(fmt: str, mode: str, src: str = "f32", ftz: bool = False, relu: bool = False,
                satfinite: bool = False):
    """Reference of cvt to f16/bf16 (and of the x2 forms: first operand to the high half)."""
    def one(a):
        if ftz and src == "f32":
            a = _flush32(a)
        x = bits_float(a, src)
        if relu and (math.isnan(x) or x < 0 or math.copysign(1.0, x) < 0):
            return None if math.isnan(x) or x == 0 else 0
        if math.isnan(x) and src == "f64":
            return narrow_nan_ref(a, fmt)             # f64 to narrower: sign, top of payload, quieted (H200)
        return round_to_format(x, fmt, mode, satfinite)

    def ref(*ops):
        r = [one(a) for a in ops]
        if None in r:
            return (None,)
        return (r[0] << 16 | r[1],) if len(r) == 2 else (r[0],)
    return ref


def f32_from_f64_ref(mode: str, ftz: bool, sat: bool):
    def ref(a):
        x = bits_float(a, "f64")
        if math.isnan(x):
            return (0,) if sat else (narrow_nan_ref(a, "f32"),)   # sign, top of payload, quieted (H200)
        if sat:
            x = 0.0 if not x > 0.0 else min(x, 1.0)     # -0 saturates to +0
        r = round_to_format(x, "f32", mode)
        return (_flush32(r) if ftz else r,)
    return ref


def widen_ref(src: str, dst: str, ftz: bool = False):
    """cvt to a wider float: exact (NaN: the GPU's choice)."""
    def ref(a):
        if src == "f32" and ftz:
            a = _flush32(a)
        if src == "f16":
            x = float(np.frombuffer(struct.pack("<H", a), np.float16)[0])
        elif src == "bf16":
            x = bits_float(a << 16, "f32")
        else:
            x = bits_float(a, src)
        if math.isnan(x):
            if dst == "f64" and not ftz:                # the payload, widened and quieted (H200)
                mbits = {"f32": 23, "f16": 10, "bf16": 7}[src]
                top = {"f32": 31, "f16": 15, "bf16": 15}[src]
                return ((a >> top & 1) << 63 | 0x7ff8000000000000 | (a & ((1 << mbits) - 1)) << (52 - mbits),)
            return (None,)
        return (f32_bits(x) if dst == "f32" else f64_bits(x),)
    return ref


def cvt_forms() -> list[Form]:
    out = []

    def add(name, body, ins, outs, ref, group, arch=89):
        out.append(Form(name, body, ins, outs, ref, group, arch=arch))

    for d in INT_TYPES:
        for s in INT_TYPES:
            if d == s:
                continue
            fits = (d[0] == s[0] or d[0] == "s") and width(d) >= width(s) + (d[0] != s[0])
            for sat in ("",) if fits else ("", ".sat"):      # ptxas refuses a .sat that cannot clip
                def ref(a, d=d, s=s, sat=sat):
                    v = _val(a, s)
                    w = width(d)
                    if sat:
                        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if d[0] == "s" else (0, (1 << w) - 1)
                        v = min(max(v, lo), hi)
                    # a narrow destination is written as its register (16 bits for 8-bit types),
                    # sign- or zero-extended from the destination width
                    return (wrap(v, w),)
                add(f"cvt{sat}.{d}.{s}", f"cvt{sat}.{d}.{s} {{o0}}, {{i0}};", (s,), (d,), ref, "cvtii")
    for it in INT_TYPES:
        for ft in ("f32", "f64"):
            for r in ROUNDINGS:
                add(f"cvt{r}.{ft}.{it}", f"cvt{r}.{ft}.{it} {{o0}}, {{i0}};", (it,), (ft,),
                    lambda a, it=it, ft=ft, r=r: (int_to_float_bits(_val(a, it), ft, r[1:]),), f"cvtif")
                for ftz in ((".ftz", "") if ft == "f32" else ("",)):
                    ri = r + "i"
                    add(f"cvt{ri}{ftz}.{it}.{ft}", f"cvt{ri}{ftz}.{it}.{ft} {{o0}}, {{i0}};", (ft,), (it,),
                        lambda a, it=it, ft=ft, ri=ri, ftz=ftz: (float_to_int(a, ft, it, ri[1:], bool(ftz)),), "cvtfi")
        for r in ROUNDINGS:
            add(f"cvt{r}.f16.{it}", f"cvt{r}.f16.{it} {{o0}}, {{i0}};", (it,), ("f16",),
                lambda a, it=it, r=r: (round_to_format(_int_as_float(_val(a, it)), "f16", r[1:]),), "cvtf16")
            add(f"cvt{r}i.{it}.f16", f"cvt{r}i.{it}.f16 {{o0}}, {{i0}};", ("f16",), (it,),
                lambda a, it=it, r=r: (float_to_int(f32_bits(float(np.frombuffer(struct.pack("<H", a), np.float16)[0])),
                                                    "f32", it, r[1:] + "i", False),), "cvtf16")
    for r in ROUNDINGS:
        for ftz in (".ftz", ""):
            for sat in (".sat", ""):
                add(f"cvt{r}{ftz}{sat}.f32.f64", f"cvt{r}{ftz}{sat}.f32.f64 {{o0}}, {{i0}};", ("f64",), ("f32",),
                    f32_from_f64_ref(r[1:], bool(ftz), bool(sat)), "cvtff")
            add(f"cvt{r}i{ftz}.f32.f32", f"cvt{r}i{ftz}.f32.f32 {{o0}}, {{i0}};", ("f32",), ("f32",), None, "cvtff")
            add(f"cvt{r}{ftz}.f16.f32", f"cvt{r}{ftz}.f16.f32 {{o0}}, {{i0}};", ("f32",), ("f16",),
                to_half_ref("f16", r[1:], ftz=bool(ftz)), "cvtf16")
        add(f"cvt{r}i.f64.f64", f"cvt{r}i.f64.f64 {{o0}}, {{i0}};", ("f64",), ("f64",), None, "cvtff")
        add(f"cvt{r}.f16.f64", f"cvt{r}.f16.f64 {{o0}}, {{i0}};", ("f64",), ("f16",),
            to_half_ref("f16", r[1:], "f64"), "cvtf16")
    for ftz in (".ftz", ""):
        add(f"cvt{ftz}.f64.f32", f"cvt{ftz}.f64.f32 {{o0}}, {{i0}};", ("f32",), ("f64",),
            widen_ref("f32", "f64", bool(ftz)), "cvtff")
        add(f"cvt{ftz}.f32.f16", f"cvt{ftz}.f32.f16 {{o0}}, {{i0}};", ("f16",), ("f32",), widen_ref("f16", "f32"),
            "cvtf16")
    add("cvt.f64.f16", "cvt.f64.f16 {o0}, {i0};", ("f16",), ("f64",), widen_ref("f16", "f64"), "cvtf16")
    add("cvt.rn.sat.f16.f32", "cvt.rn.sat.f16.f32 {o0}, {i0};", ("f32",), ("f16",), None, "cvtf16")
    add("cvt.rn.f16x2.f32", "cvt.rn.f16x2.f32 {o0}, {i0}, {i1};", ("f32", "f32"), ("f16x2",),
        to_half_ref("f16", "rn"), "cvtf16")
    add("cvt.rn.relu.f16x2.f32", "cvt.rn.relu.f16x2.f32 {o0}, {i0}, {i1};", ("f32", "f32"), ("f16x2",),
        to_half_ref("f16", "rn", relu=True), "cvtf16")
    # bf16: F2FP.BF16.F32.PACK_AB and friends
    for m in (".rn", ".rz", ".rn.relu", ".rz.relu"):
        ref = to_half_ref("bf16", m[1:3], relu="relu" in m)
        add(f"cvt{m}.bf16.f32", f"cvt{m}.bf16.f32 {{o0}}, {{i0}};", ("f32",), ("bf16",), ref, "cvtbf16")
        add(f"cvt{m}.bf16x2.f32", f"cvt{m}.bf16x2.f32 {{o0}}, {{i0}}, {{i1}};", ("f32", "f32"), ("bf16x2",), ref,
            "cvtbf16")
    add("cvt.rn.satfinite.bf16x2.f32", "cvt.rn.satfinite.bf16x2.f32 {o0}, {i0}, {i1};", ("f32", "f32"),
        ("bf16x2",), to_half_ref("bf16", "rn", satfinite=True), "cvtbf16", 90)
    add("cvt.f32.bf16", "cvt.f32.bf16 {o0}, {i0};", ("bf16",), ("f32",), widen_ref("bf16", "f32"), "cvtbf16", 90)
    add("cvt.rn.bf16.f64", "cvt.rn.bf16.f64 {o0}, {i0};", ("f64",), ("bf16",), to_half_ref("bf16", "rn", "f64"),
        "cvtbf16", 90)
    add("cvt.rn.bf16.f16", "cvt.rn.bf16.f16 {o0}, {i0};", ("f16",), ("bf16",),
        lambda a: (round_to_format(half_float(a, "f16"), "bf16", "rn"),), "cvtbf16", 90)
    add("cvt.rn.f16.bf16", "cvt.rn.f16.bf16 {o0}, {i0};", ("bf16",), ("f16",),
        lambda a: (round_to_format(half_float(a, "bf16"), "f16", "rn"),), "cvtbf16", 90)
    add("cvt.rni.s32.bf16", "cvt.rni.s32.bf16 {o0}, {i0};", ("bf16",), ("s32",), None, "cvtbf16", 90)
    add("cvt.rn.bf16.s32", "cvt.rn.bf16.s32 {o0}, {i0};", ("s32",), ("bf16",), None, "cvtbf16", 90)
    return out


def member_mask(case: int, mask: str) -> int:
    """The member mask a thread passes: all 32 lanes, its half-warp (%mhalf), its tile
    of 8 lanes (%mtile), or an immediate (`.part` forms: only the lanes it names run)."""
    if mask == "%mhalf":
        return 0xffff0000 if case & 16 else 0x0000ffff
    if mask == "%mtile":
        return 0xff << (case & 24)
    return int(mask, 0)


MASK_SUFFIX = {"0xffffffff": "", "%mhalf": ".half", "%mtile": ".tile", "0x0000ffff": ".part"}


def only_members(mask: str, ref):
    """A warp reference whose lanes outside an immediate mask (which skip the form) are unknown."""
    if not mask.startswith("0x") or ref is None:
        return ref

    def limited(cols):
        return [r if member_mask(c, mask) >> (c & 31) & 1 else (None,) * len(r) for c, r in enumerate(ref(cols))]
    return limited


def warp_lanes(case: int, m: int) -> list[int]:
    """The cases of the threads in case's warp that member mask m names."""
    base = case & ~31
    return [base + lane for lane in range(32) if m >> lane & 1]


def vote_ref(kind: str, mask: str):
    def ref(cols):
        out = []
        for c in range(NCASES):
            preds = [cols[0][k] & 1 for k in warp_lanes(c, member_mask(c, mask))]
            if kind == "ballot":
                out.append((sum(p << (k & 31) for p, k in zip(preds, warp_lanes(c, member_mask(c, mask)))),))
            else:
                out.append((int({"all": all(preds), "any": any(preds), "uni": len(set(preds)) == 1}[kind]),))
        return out
    return ref


def redux_ref(op: str, t: str, mask: str):
    def ref(cols):
        out = []
        for c in range(NCASES):
            vals = [_val(cols[0][k], t) for k in warp_lanes(c, member_mask(c, mask))]
            r = {"add": lambda v: sum(v), "min": min, "max": max}.get(op)
            if r is not None:
                out.append((wrap(r(vals), 32),))
            else:
                acc = vals[0]
                for v in vals[1:]:
                    acc = {"and": acc & v, "or": acc | v, "xor": acc ^ v}[op]
                out.append((acc,))
        return out
    return ref


def bfly_ref(mask: str):
    """shfl.sync.bfly with c = 0x1f (full mask) or 0x100f (half-warp segments)."""
    def ref(cols):
        out = []
        for c in range(NCASES):
            lane, seg_clamp = c & 31, (31 if mask != "%mhalf" else 15)
            src = lane ^ (cols[1][c] & 31)
            seg = lane & ~seg_clamp & 31 if mask == "%mhalf" else 0
            ok = (src & ~seg_clamp & 31) == seg if mask == "%mhalf" else True
            out.append((cols[0][(c & ~31) + src] if ok else cols[0][c], int(ok)))
        return out
    return ref


def match_any_ref(mask: str):
    def ref(cols):
        out = []
        for c in range(NCASES):
            lanes = warp_lanes(c, member_mask(c, mask))
            out.append((sum(1 << (k & 31) for k in lanes if cols[0][k] == cols[0][c]),))
        return out
    return ref


def warp_forms() -> list[Form]:
    out = []

    def add(name, body, ins, outs, mask="0xffffffff", values=None, warp_ref=None):
        out.append(Form(name, body, ins, outs, None, "warp", mask=mask, values=values, warp_ref=warp_ref))

    for kind, lane_t in (("idx", "u32:lane"), ("up", "u32:lane"), ("down", "u32:lane"), ("bfly", "u32:lane")):
        add(f"shfl.sync.{kind}.b32", f"shfl.sync.{kind}.b32 {{o0}}|{{o1}}, {{i0}}, {{i1}}, 0x1f, {{mask}};",
            ("b32", lane_t), ("b32", "pred"), warp_ref=bfly_ref("0xffffffff") if kind == "bfly" else None)
        add(f"shfl.sync.{kind}.b32.c", f"shfl.sync.{kind}.b32 {{o0}}|{{o1}}, {{i0}}, {{i1}}, {{i2}}, {{mask}};",
            ("b32", lane_t, "u32:ctl"), ("b32", "pred"))
        clamp = "0x100f" if kind != "up" else "0x1000"
        half_lane = "u32:lane" if kind != "bfly" else "u32:small"
        add(f"shfl.sync.{kind}.b32.half", f"shfl.sync.{kind}.b32 {{o0}}|{{o1}}, {{i0}}, {{i1}}, {clamp}, {{mask}};",
            ("b32", half_lane), ("b32", "pred"), "%mhalf", warp_ref=bfly_ref("%mhalf") if kind == "bfly" else None)
    # every mask shape: the whole warp, per half-warp and per 8-lane tile (registers that
    # differ between lanes: ptxas's WARPSYNC.EXCLUSIVE groups), and the immediate
    # 0x0000ffff (.part) that only lanes 0-15 run, behind a guard (their outputs are set
    # first; the others' are unknown to the reference)
    for mask in ("0xffffffff", "%mhalf", "%mtile", "0x0000ffff"):
        sfx = MASK_SUFFIX[mask]

        def body(text, preset=("{o0}",)):
            if not sfx == ".part":
                return text
            init = "".join(f"mov.b32 {o}, 0;\n\t" if o != "pred" else "setp.ne.u32 {o0}, %tix, %tix;\n\t"
                           for o in preset)
            return init + "@%plow " + text

        for kind in ("all", "any", "uni"):
            add(f"vote.sync.{kind}.pred{sfx}", body(f"vote.sync.{kind}.pred {{o0}}, {{i0}}, {{mask}};", ("pred",)),
                ("pred",), ("pred",), mask, warp_ref=only_members(mask, vote_ref(kind, mask)))
        add(f"vote.sync.ballot.b32{sfx}", body("vote.sync.ballot.b32 {o0}, {i0}, {mask};"), ("pred",), ("b32",), mask,
            warp_ref=only_members(mask, vote_ref("ballot", mask)))
        add(f"bar.warp.sync{sfx}", body("bar.warp.sync {mask};\n\tmov.b32 {o0}, {i0};"), ("b32",), ("b32",), mask,
            warp_ref=only_members(mask, lambda cols: [(v,) for v in cols[0]]))
        add(f"match.any.sync.b32{sfx}", body("match.any.sync.b32 {o0}, {i0}, {mask};"), ("u32:small",), ("b32",),
            mask, warp_ref=only_members(mask, match_any_ref(mask)))
        if sfx != ".part":       # (a guarded `d|p` destination pair: the predicate's preset aside)
            add(f"match.all.sync.b32{sfx}", "match.all.sync.b32 {o0}|{o1}, {i0}, {mask};", ("u32:small",),
                ("b32", "pred"), mask, values=[1, 1, 1, 1, 2])
        add(f"match.any.sync.b64{sfx}", body("match.any.sync.b64 {o0}, {i0}, {mask};"), ("u64:small",), ("b32",),
            mask)
        for op, t in (("add", "u32"), ("add", "s32"), ("min", "u32"), ("min", "s32"), ("max", "u32"),
                      ("max", "s32"), ("and", "b32"), ("or", "b32"), ("xor", "b32")):
            add(f"redux.sync.{op}.{t}{sfx}", body(f"redux.sync.{op}.{t} {{o0}}, {{i0}}, {{mask}};"), (t,), (t,), mask,
                warp_ref=only_members(mask, redux_ref(op, t, mask)))
    add("activemask.b32", "activemask.b32 {o0};\n\tmov.b32 {o1}, {i0};", ("b32",), ("b32", "b32"))
    return out


def atom_forms() -> list[Form]:
    out = []
    ops = [("add", "u32"), ("add", "s32"), ("add", "u64"), ("add", "f32"), ("add", "f64"),
           ("min", "u32"), ("min", "s32"), ("max", "u32"), ("max", "s32"), ("min", "u64"), ("max", "s64"),
           ("min", "s64"), ("max", "u64"), ("and", "b32"), ("or", "b32"), ("xor", "b32"), ("and", "b64"),
           ("or", "b64"), ("xor", "b64"), ("exch", "b32"), ("exch", "b64"), ("inc", "u32"), ("dec", "u32"),
           ("add.noftz", "f16x2"), ("add.noftz", "bf16x2"), ("add.noftz", "f16")]
    for op, t in ops:
        arch = 90 if t == "bf16x2" else 89
        # the value returned is the memory operand's old value: the slot's input
        out.append(Form(f"atom.global.{op}.{t}", f"atom.global.{op}.{t} {{o0}}, [{{m}}], {{i1}};", (t, t), (t,),
                        lambda old, b: (old,), "atom", mem="own", arch=arch, mem_ref=atom_mem_ref(op, t)))
        if op != "exch":
            out.append(Form(f"red.global.{op}.{t}", f"red.global.{op}.{t} [{{m}}], {{i1}};", (t, t), (), None,
                            "atom", mem="own", arch=arch, mem_ref=atom_mem_ref(op, t)))
        if not t.startswith(("f", "bf")) and op not in ("exch",):
            # inc/dec with different operands do not commute: on one address the result
            # is the order the lanes came in (ptxc's and ptxas's cubins, the same REDG.E.INC, gave
            # different values on the H200), so
            # every lane gives the same operand there
            operand = "1000" if op in ("inc", "dec") else "{i1}"
            out.append(Form(f"atom.global.{op}.{t}.same", f"red.global.{op}.{t} [{{m}}], {operand};", (t, t), (),
                            None, "atom", mem="shared"))
    for t in ("b32", "b64"):
        out.append(Form(f"atom.global.cas.{t}", f"atom.global.cas.{t} {{o0}}, [{{m}}], {{i1}}, {{i2}};",
                        (t + ":small", t + ":small", t), (t,), None, "atom", mem="own"))
    return out


def atom_mem_ref(op: str, t: str):
    """The value an atomic leaves in memory (PTX ISA's atom semantics); float adds: the
    exact sum rounded to nearest (f16x2/bf16x2 per half, subnormals kept: .noftz), a NaN
    operand of the f64 adder returned as it is (H200); NaN halves: no reference."""
    w = width(t)

    def ref(old, b, *_):
        if op == "add" and t == "f64":
            for v in (old, b):
                if (v >> 52 & 0x7ff) == 0x7ff and v & (1 << 52) - 1:
                    return v
            r = bits_float(old, "f64") + bits_float(b, "f64")
            return None if math.isnan(r) else f64_bits(r)
        if op == "add.noftz":
            fmt = "bf16" if t.startswith("bf16") else "f16"
            r = 0
            for k in range(2 if t.endswith("x2") else 1):
                x, y = half_float(old >> (16 * k), fmt), half_float(b >> (16 * k), fmt)
                if math.isnan(x + y):
                    return None
                r |= round_to_format(x + y, fmt, "rn") << (16 * k)
            return r
        if t in ("f32",):
            return None
        signed = t[0] == "s"
        x, y = (sx(old, w), sx(b, w)) if signed else (old, b)
        if op == "add":
            return wrap(x + y, w)
        if op in ("min", "max"):
            return wrap(min(x, y) if op == "min" else max(x, y), w)
        if op in ("and", "or", "xor"):
            return {"and": old & b, "or": old | b, "xor": old ^ b}[op]
        if op == "exch":
            return b
        if op == "inc":
            return 0 if old >= b else old + 1
        if op == "dec":
            return b if old == 0 or old > b else old - 1
        return None
    return ref


def forms(arch: str | None = None) -> list[Form]:
    all_forms = int_forms() + bit_forms() + compare_forms() + float_forms() + cvt_forms() + warp_forms() + atom_forms()
    names = [f.name for f in all_forms]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    if arch is not None:
        all_forms = [f for f in all_forms if f.arch <= int(arch[3:])]
    return all_forms


# ---- PTX ----------------------------------------------------------------------------------
@dataclass
class Group:
    name: str
    forms: list
    in_base: dict = field(default_factory=dict)     # form name -> first slot of its inputs
    out_base: dict = field(default_factory=dict)
    in_slots: int = 0
    out_slots: int = 0


def groups(arch: str, max_forms: int = 24) -> list[Group]:
    """The forms of `arch` in kernels of at most `max_forms`, one catalog group (int32,
    cvtf16, warp, ...) per kernel.  Not more: ptxas if-converts the short skip branches
    around each form, so a word the emulator cannot decode stops every form of its kernel."""
    by_group: dict = {}
    for f in forms(arch):
        by_group.setdefault(f.group, []).append(f)
    out = []
    for g, fs in by_group.items():
        for k in range(0, len(fs), max_forms):
            grp = Group(f"{g}_{k // max_forms}", fs[k:k + max_forms])
            for f in grp.forms:
                grp.in_base[f.name], grp.out_base[f.name] = grp.in_slots, grp.out_slots
                grp.in_slots += len(f.ins) * NCASES
                grp.out_slots += len(f.outs) * NCASES
            out.append(grp)
    return out


def ptx_of(group: Group, arch: str, only: set | None = None) -> str:
    """One kernel `k_<group>` for the group's forms (or those named in `only`)."""
    decls, body = [], []
    for n, f in enumerate(group.forms):
        if only is not None and f.name not in only:
            continue
        regs = {}
        for role, types in (("i", f.ins), ("o", f.outs)):
            for j, t in enumerate(types):
                rt = TYPES[t.split(":")[0]][0]
                name = f"%{role}{n}_{j}"
                decls.append(f"\t.reg .{rt} {name};")
                regs[f"{role}{j}"] = name
        body.append(f"\t// form {f.name}")
        body.append(f"\tsetp.ne.u32 %pskip, %sel, {n};")
        body.append(f"\tand.pred %pskip, %pskip, %psome;")
        body.append(f"\t@%pskip bra $L_skip{n};")
        for j, t in enumerate(f.ins):
            base_t = t.split(":")[0]
            off = (group.in_base[f.name] + j * NCASES) * 8
            if f.mem is not None and j == 0:
                continue        # the memory operand: not loaded, its address is {m}
            if base_t == "pred":
                decls.append(f"\t.reg .b32 %pi{n}_{j};")
                body.append(f"\tld.global.u32 %pi{n}_{j}, [%pin+{off}];")
                body.append(f"\tsetp.ne.u32 {regs[f'i{j}']}, %pi{n}_{j}, 0;")
            else:
                body.append(f"\tld.global.{TYPES[base_t][1]} {regs[f'i{j}']}, [%pin+{off}];")
        mem = None
        if f.mem == "own":
            mem = f"%pin+{group.in_base[f.name] * 8}"
        elif f.mem == "shared":
            mem = f"%pin0+{group.in_base[f.name] * 8}"
        text = f.body.format(m=mem, mask=f.mask, **regs)
        body.extend("\t" + line.strip() for line in text.splitlines())
        for j, t in enumerate(f.outs):
            off = (group.out_base[f.name] + j * NCASES) * 8
            if t == "pred":
                decls.append(f"\t.reg .b32 %po{n}_{j};")
                body.append(f"\tselp.u32 %po{n}_{j}, 1, 0, {regs[f'o{j}']};")
                body.append(f"\tst.global.u32 [%pout+{off}], %po{n}_{j};")
            else:
                base_t = t.split(":")[0]
                st = TYPES[base_t][1].replace("s8", "u8")
                body.append(f"\tst.global.{st} [%pout+{off}], {regs[f'o{j}']};")
        body.append(f"$L_skip{n}:")
    version = "8.5"
    return "\n".join([
        f"// generated by scripts/hw_forms.py (group {group.name}); do not edit",
        f".version {version}", f".target {arch}", ".address_size 64", "",
        f".visible .entry k_{group.name}(.param .u64 p_in, .param .u64 p_out, .param .u32 p_sel)", "{",
        "\t.reg .b64 %pin0, %pout0, %pin, %pout, %toff;", "\t.reg .b32 %tix, %half, %mhalf, %tsh, %mtile;", "\t.reg .pred %ph, %pskip, %psome, %plow;", "\t.reg .b32 %sel;",
        *decls,
        "\tld.param.u64 %pin0, [p_in];", "\tld.param.u32 %sel, [p_sel];",
        "\tsetp.ne.u32 %psome, %sel, -1;", "\tld.param.u64 %pout0, [p_out];",
        "\tcvta.to.global.u64 %pin0, %pin0;", "\tcvta.to.global.u64 %pout0, %pout0;",
        "\tmov.u32 %tix, %tid.x;", "\tmul.wide.u32 %toff, %tix, 8;",
        "\tadd.s64 %pin, %pin0, %toff;", "\tadd.s64 %pout, %pout0, %toff;",
        "\tand.b32 %half, %tix, 16;", "\tsetp.ne.u32 %ph, %half, 0;",
        "\tselp.b32 %mhalf, 0xffff0000, 0x0000ffff, %ph;",
        "\tand.b32 %tsh, %tix, 24;", "\tmov.b32 %mtile, 0xff;", "\tshl.b32 %mtile, %mtile, %tsh;",
        "\tand.b32 %tsh, %tix, 31;", "\tsetp.lt.u32 %plow, %tsh, 16;",
        *body, "\tret;", "}", ""])


def inputs_of(group: Group) -> np.ndarray:
    data = np.zeros(max(group.in_slots, 1), np.uint64)
    for f in group.forms:
        base = group.in_base[f.name]
        for j, col in enumerate(operand_values(f)):
            data[base + j * NCASES: base + (j + 1) * NCASES] = np.array(col, dtype=np.uint64)
    return data


# ---- prepare ---------------------------------------------------------------------------------
def _ptxas_bad_lines(stderr: str) -> set[int]:
    import re
    return {int(m.group(1)) for m in re.finditer(r"\.ptx, line (\d+)", stderr)}


def _form_of_line(ptx: str, line: int) -> str | None:
    name = None
    for k, text in enumerate(ptx.splitlines(), 1):
        if text.startswith("\t// form "):
            name = text[len("\t// form "):]
        if k == line:
            return name
    return None


def ptxas_cubin(group: Group, arch: str, work: Path) -> tuple[bytes | None, set, str]:
    """ptxas's cubin of the group; forms whose lines ptxas rejects are dropped (and
    returned with its message) until the rest compiles."""
    from ptxc import oracle
    only = {f.name for f in group.forms}
    rejected = {}
    for _ in range(len(group.forms) + 1):
        if not only:
            return None, only, "; ".join(f"{k}: {v}" for k, v in rejected.items())
        text = ptx_of(group, arch, only)
        path = work / f"{group.name}.{arch}.ptx"
        path.write_text(text)
        proc = oracle.run("ptxas", f"-arch={arch}", "-o", str(work / f"{group.name}.{arch}.ptxas.cubin"), str(path),
                          check=False)
        if proc.returncode == 0:
            return (work / f"{group.name}.{arch}.ptxas.cubin").read_bytes(), only, \
                "; ".join(f"{k}: {v}" for k, v in rejected.items())
        bad = {_form_of_line(text, line) for line in _ptxas_bad_lines(proc.stderr)} - {None}
        if not bad:
            raise RuntimeError(f"ptxas rejects {path} outside any form:\n{proc.stderr}")
        for name in bad:
            msg = next((x for x in proc.stderr.splitlines() if "error" in x), "")
            rejected[name] = msg.split("error   :")[-1].strip()[:160]
        only -= bad
    raise RuntimeError("ptxas keeps failing")


def ptxc_compile(text: str, path: str, arch: str) -> tuple[bytes | None, str | None]:
    from ptxc.diagnostics import CompileError
    from ptxc.driver import cubin_bytes, load_module, lower_module
    from ptxc.lower.pipeline import Options
    try:
        module = load_module(path, text, arch)
        return cubin_bytes(lower_module(module, Options(arch=arch, filename=path)), arch), None
    except CompileError as err:
        return None, str(err).strip().splitlines()[0][:200]
    except Exception as err:  # noqa: BLE001 - an internal error of ptxc is a finding too
        return None, f"internal error: {type(err).__name__}: {err}"[:200]


def ptxc_cubin(group: Group, arch: str, forms_ok: set, work: Path) -> tuple[bytes | None, set, dict]:
    """ptxc's cubin of the forms ptxas took; forms ptxc cannot compile are found one by
    one (each alone) and left out, with ptxc's message."""
    path = str(work / f"{group.name}.{arch}.ptx")
    data, err = ptxc_compile(ptx_of(group, arch, forms_ok), path, arch)
    if data is not None:
        return data, set(forms_ok), {}
    failed = {}
    for name in sorted(forms_ok):
        _d, e = ptxc_compile(ptx_of(group, arch, {name}), path, arch)
        if e is not None:
            failed[name] = e
    ok = set(forms_ok) - set(failed)
    if not ok:
        return None, ok, failed
    data, err = ptxc_compile(ptx_of(group, arch, ok), path, arch)
    if data is None:
        return None, set(), {**failed, "*": err}
    return data, ok, failed


def prepare(work: Path, archs=ARCHS, with_ptxc: bool = True, select: str | None = None) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    manifest = {"ncases": NCASES, "groups": []}
    for arch in archs:
        for group in groups(arch):
            if select and not any(fnmatch.fnmatch(f.name, select) for f in group.forms):
                continue
            if select:
                group = _subgroup(group, {f.name for f in group.forms if fnmatch.fnmatch(f.name, select)})
            np.save(work / f"{group.name}.{arch}.in.npy", inputs_of(group))
            cubin, ok, rejected = ptxas_cubin(group, arch, work)
            entry = {"group": group.name, "arch": arch, "kernel": f"k_{group.name}", "in": f"{group.name}.{arch}.in.npy",
                     "in_slots": group.in_slots, "out_slots": group.out_slots, "cubins": {},
                     "forms": [{"name": f.name, "ins": list(f.ins), "outs": list(f.outs),
                                "in_base": group.in_base[f.name], "out_base": group.out_base[f.name], "mem": f.mem}
                               for f in group.forms],
                     "ptxas_rejects": rejected, "ptxas_forms": sorted(ok)}
            if cubin is not None:
                entry["cubins"]["ptxas"] = f"{group.name}.{arch}.ptxas.cubin"
            if with_ptxc and cubin is not None:
                data, pok, failed = ptxc_cubin(group, arch, ok, work)
                entry["ptxc_forms"], entry["ptxc_fails"] = sorted(pok), failed
                if data is not None:
                    (work / f"{group.name}.{arch}.ptxc.cubin").write_bytes(data)
                    entry["cubins"]["ptxc"] = f"{group.name}.{arch}.ptxc.cubin"
            manifest["groups"].append(entry)
            print(f"{arch} {group.name}: {len(ok)}/{len(group.forms)} forms ptxas"
                  + (f", {len(entry.get('ptxc_forms', []))} ptxc" if with_ptxc else "")
                  + (f"; ptxas rejects {rejected}" if rejected else ""), flush=True)
    (work / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def _subgroup(group: Group, names: set) -> Group:
    sub = Group(group.name, [f for f in group.forms if f.name in names])
    for f in sub.forms:
        sub.in_base[f.name], sub.out_base[f.name] = sub.in_slots, sub.out_slots
        sub.in_slots += len(f.ins) * NCASES
        sub.out_slots += len(f.outs) * NCASES
    return sub


# ---- running: emulator and GPU -------------------------------------------------------------------
ALL = 0xFFFFFFFF        # p_sel: run every form of the kernel (else only form number p_sel)


def merge_form(into: dict, run: dict, entry_form: dict, ncases: int = NCASES) -> None:
    """Copy one form's slots (outputs, and its memory operand's) from `run` into `into`."""
    for buf, slot, _t, _c in form_slots(entry_form, ncases):
        into[buf][slot] = run[buf][slot]


def run_forms(launch, entry: dict, inputs: np.ndarray, forms_in: set, error_types, fatal=()) -> tuple[dict, dict]:
    """All forms in one launch; if that fails, each form (of `forms_in`) in a launch of
    its own, so that one form the machine refuses costs only its own slots.
    Returns ({"in", "out"}, {form: error}); an error of a `fatal` type goes up."""
    try:
        return launch(ALL), {}
    except fatal:
        raise
    except error_types as err:
        first = _why(err)
    merged = {"in": inputs.copy(), "out": np.zeros(max(entry["out_slots"], 1), np.uint64)}
    errors = {}
    for n, f in enumerate(entry["forms"]):
        if f["name"] not in forms_in:
            continue
        try:
            merge_form(merged, launch(n), f)
        except fatal:
            raise
        except error_types as err:
            errors[f["name"]] = _why(err)
    if not errors:
        errors["*"] = "the launch of all forms failed, each alone ran: " + first
    return merged, errors


def _why(err) -> str:
    lines = [x.strip("= ").strip() for x in str(err).strip().splitlines()]
    sass = next((x for x in lines if x.startswith("SASS:")), "")
    return (lines[0] + (" " + sass if sass else ""))[:300]


def run_emulator(cubin: bytes, entry: dict, inputs: np.ndarray, forms_in: set) -> tuple[dict, dict]:
    from ptxc.emu.device import Device, LaunchError
    dev = Device()
    kernel = dev.load(cubin, entry["kernel"]).kernel(entry["kernel"])
    pin = dev.malloc(inputs.nbytes, "in")
    n_out = max(entry["out_slots"], 1)
    pout = dev.malloc(n_out * 8, "out")

    def launch(sel):
        dev.memory.write(pin, inputs)
        dev.memory.write(pout, np.zeros(n_out, np.uint64))
        dev.launch(kernel, (1, 1, 1), (NCASES, 1, 1), [pin, pout, sel.to_bytes(4, "little")], 0,
                   max_steps=10_000_000)
        return {"in": dev.memory.view(pin, np.uint64, inputs.size).copy(),
                "out": dev.memory.view(pout, np.uint64, n_out).copy()}
    return run_forms(launch, entry, inputs, forms_in, (LaunchError,))


def run_gpu(gpu, cubin: bytes, entry: dict, inputs: np.ndarray, forms_in: set) -> tuple[dict, dict]:
    from ptxc.device.driver_api import DeviceError, DeviceTimeout
    n_out = max(entry["out_slots"], 1)
    state = {}

    def load():
        state["module"] = gpu.load_cubin(cubin, entry["kernel"] + ".cubin", "sm_90")
        state["pin"], state["pout"] = gpu.alloc(inputs.nbytes), gpu.alloc(n_out * 8)

    def launch(sel):
        if not state:
            load()
        try:
            gpu.upload(state["pin"], np.ascontiguousarray(inputs))
            gpu.upload(state["pout"], np.zeros(n_out, np.uint64))
            params = state["pin"].to_bytes(8, "little") + state["pout"].to_bytes(8, "little") + sel.to_bytes(4, "little")
            gpu.launch(state["module"].function(entry["kernel"]), (1, 1, 1), (NCASES, 1, 1), params, timeout=20)
            fin, fout = np.empty(inputs.size, np.uint64), np.empty(n_out, np.uint64)
            gpu.download(state["pin"], fin)
            gpu.download(state["pout"], fout)
            return {"in": fin, "out": fout}
        except DeviceTimeout:
            raise
        except DeviceError:
            state.clear()       # a fault takes the context, its modules and memory with it
            gpu.recover()
            raise
    try:
        return run_forms(launch, entry, inputs, forms_in, (DeviceError,), fatal=(DeviceTimeout,))
    finally:
        if state:
            gpu.free(state["pin"])
            gpu.free(state["pout"])
            state["module"].unload()


def encode_slots(slots: np.ndarray) -> str:
    """8-byte slots as base64 of their little-endian bytes (the JSON the GPU run writes)."""
    import base64
    return base64.b64encode(np.ascontiguousarray(slots, dtype="<u8").tobytes()).decode()


def decode_slots(text: str) -> np.ndarray:
    import base64
    return np.frombuffer(base64.b64decode(text), dtype="<u8").astype(np.uint64)


def run_device(work: Path, json_out: Path, gpu=None) -> int:
    """On the GPU: every sm_90 cubin (ptxas's and ptxc's), all slots to json_out.  A
    kernel that never ends (DeviceTimeout: the GPU has no watchdog) ends the run, with
    what ran so far written."""
    from ptxc.device.driver_api import GPU, DeviceError, DeviceTimeout
    gpu = gpu or GPU()
    manifest = json.loads((work / "manifest.json").read_text())
    report = {"gpu": gpu.describe(), "results": {}}
    failures = 0
    for entry in manifest["groups"]:
        if entry["arch"] != "sm_90":
            continue
        inputs = np.load(work / entry["in"])
        for who, name in entry["cubins"].items():
            key = f"{entry['group']}.{who}"
            try:
                res, errors = run_gpu(gpu, (work / name).read_bytes(), entry, inputs, set(entry[who + "_forms"]))
                report["results"][key] = {"in": encode_slots(res["in"]), "out": encode_slots(res["out"]),
                                          "form_errors": errors}
                print(f"{key}: ran" + (f"; {len(errors)} forms failed: {errors}" if errors else ""), flush=True)
            except DeviceTimeout as err:
                report["results"][key] = {"error": str(err)}
                json_out.write_text(json.dumps(report))
                print(f"{key}: {err}; stopping (results so far in {json_out})", flush=True)
                os._exit(3)         # the kernel still runs: only ending the process frees the GPU
            except DeviceError as err:
                failures += 1
                report["results"][key] = {"error": str(err)}
                print(f"{key}: {err}", flush=True)
                try:
                    gpu.recover()
                except DeviceError:
                    pass
    json_out.write_text(json.dumps(report))
    print(f"{len(report['results'])} launches, {failures} failed -> {json_out}")
    return 0


# ---- comparing -------------------------------------------------------------------------------
def load_tolerances(path: Path = TOLERANCES) -> list[dict]:
    return json.loads(path.read_text())["tolerances"] if path.exists() else []


def tolerance_for(name: str, against: str, tolerances: list[dict]) -> dict | None:
    for t in tolerances:
        if against in t.get("applies", ("gpu", "ptxc", "reference")) and \
                any(fnmatch.fnmatch(name, p) for p in t["forms"]):
            return t
    return None


def _ulps(a: int, b: int, t: str) -> float:
    w = width(t)
    if t in ("f16x2", "bf16x2"):
        return max(_ulps(a & 0xffff, b & 0xffff, t[:-2]), _ulps(a >> 16, b >> 16, t[:-2]))
    if not t.startswith(("f", "bf")):
        return math.inf if a != b else 0
    sign = 1 << (w - 1)
    nan_exp = {16: 0x7c00, 32: 0x7f800000, 64: 0x7ff0000000000000}[w] if t != "bf16" else 0x7f80
    mant = {16: 0x3ff, 32: 0x7fffff, 64: 0xfffffffffffff}[w] if t != "bf16" else 0x7f

    def isnan(v):
        return (v & nan_exp) == nan_exp and v & mant

    if isnan(a) or isnan(b):
        return 0 if isnan(a) and isnan(b) else math.inf

    def ordinal(v):
        return -(v & ~sign) if v & sign else v
    return abs(ordinal(a) - ordinal(b))


def _abs_close(a: int, b: int, t: str, limit) -> bool:
    """Within an absolute error `limit` (a tolerance's "abs": MUFU.LG2/SIN/COS document an
    absolute error, unbounded in ulps near their zeros); f32 only."""
    if limit is None or t != "f32":
        return False
    x, y = bits_float(a & M32, "f32"), bits_float(b & M32, "f32")
    return math.isfinite(x) and math.isfinite(y) and abs(x - y) <= limit


def form_slots(entry_form: dict, ncases: int):
    """[(buffer, slot, type, case)] of each result slot of a form (outputs, and the
    memory operand's slot of `in` for atomics)."""
    out = []
    for j, t in enumerate(entry_form["outs"]):
        for c in range(ncases):
            out.append(("out", entry_form["out_base"] + j * ncases + c, t, c))
    if entry_form["mem"] == "own":
        for c in range(ncases):
            out.append(("in", entry_form["in_base"] + c, entry_form["ins"][0].split(":")[0], c))
    elif entry_form["mem"] == "shared":
        out.append(("in", entry_form["in_base"], entry_form["ins"][0].split(":")[0], 0))
    return out


def diff_forms(entry: dict, mine: dict, theirs: dict, against: str, tolerances: list[dict],
               forms_ok: set, inputs: np.ndarray | None = None, ncases: int = NCASES) -> dict:
    """{form: {"bad": n, "tolerated": n, "examples": [...]}} for forms whose slots differ."""
    out = {}
    for f in entry["forms"]:
        if f["name"] not in forms_ok:
            continue
        tol = tolerance_for(f["name"], against, tolerances)
        bad, tolerated, examples = 0, 0, []
        for buf, slot, t, case in form_slots(f, ncases):
            a, b = int(mine[buf][slot]), int(theirs[buf][slot])
            if a == b:
                continue
            if tol is not None and (_ulps(a & ((1 << width(t)) - 1), b & ((1 << width(t)) - 1), t) <= tol.get("ulp", 0)
                                    or _abs_close(a, b, t, tol.get("abs"))):
                tolerated += 1
                continue
            bad += 1
            if len(examples) < 4:
                ops = []
                if inputs is not None:
                    ops = [f"{int(inputs[f['in_base'] + j * ncases + case]):#x}" for j in range(len(f["ins"]))]
                examples.append(f"case {case} ({', '.join(ops)}) {buf}[{slot}]: {a:#x} vs {b:#x}")
        if bad or tolerated:
            out[f["name"]] = {"bad": bad, "tolerated": tolerated, "examples": examples}
    return out


def reference_slots(entry: dict, inputs: np.ndarray, ncases: int = NCASES) -> tuple[dict, set]:
    """The Python reference's out-slots for the forms that have one, and those forms."""
    catalog = {f.name: f for f in forms()}
    out = np.zeros(max(entry["out_slots"], 1), np.uint64)
    known = np.zeros(out.size, bool)
    mem = inputs.copy()                  # atomics: the memory operands' slots after the launch
    mem_known = np.zeros(mem.size, bool)
    names = set()
    for ef in entry["forms"]:
        form = catalog.get(ef["name"])
        if form is None or (form.ref is None and form.warp_ref is None and form.mem_ref is None):
            continue
        names.add(form.name)
        cols = [[int(inputs[ef["in_base"] + j * ncases + c]) & ((1 << width(t)) - 1) for c in range(ncases)]
                for j, t in enumerate(form.ins)]
        if form.mem_ref is not None and ef["mem"] == "own":
            for c in range(ncases):
                v = form.mem_ref(*[col[c] for col in cols])
                if v is not None:
                    w = width(form.ins[0])
                    slot = ef["in_base"] + c
                    mem[slot] = (int(inputs[slot]) & ~((1 << w) - 1) & M64) | (v & ((1 << w) - 1))
                    mem_known[slot] = True
        if form.ref is None and form.warp_ref is None:
            continue
        warp_results = form.warp_ref(cols) if form.warp_ref is not None else None
        for c in range(ncases):
            res = warp_results[c] if warp_results is not None else form.ref(*[col[c] for col in cols])
            for j, (v, t) in enumerate(zip(res, form.outs)):
                slot = ef["out_base"] + j * ncases + c
                if v is not None:
                    out[slot] = v & ((1 << max(width(t), 8)) - 1) if t != "pred" else v
                    known[slot] = True
    return {"out": out, "known": known, "in": mem, "in_known": mem_known}, names


def emulate(work: Path, verbose: bool = True) -> dict:
    """Every cubin on the emulator; ptxas's vs ptxc's (same arch) and vs the reference.
    Writes WORK/emu/<group>.<arch>.<who>.npz and returns the findings."""
    manifest = json.loads((work / "manifest.json").read_text())
    ncases = manifest["ncases"]
    tolerances = load_tolerances()
    (work / "emu").mkdir(exist_ok=True)
    findings = {"launch_errors": {}, "ptxc_vs_ptxas": {}, "reference": {}}
    for entry in manifest["groups"]:
        inputs = np.load(work / entry["in"])
        runs = {}
        ran = {}
        for who, name in entry["cubins"].items():
            key = f"{entry['arch']}.{entry['group']}.{who}"
            runs[who], errors = run_emulator((work / name).read_bytes(), entry, inputs, set(entry[who + "_forms"]))
            ran[who] = set(entry[who + "_forms"]) - set(errors)
            for form, why in errors.items():
                findings["launch_errors"][f"{entry['arch']} {form} ({who})"] = why
                if verbose:
                    print(f"{key}: {form}: {why}", flush=True)
            np.savez_compressed(work / "emu" / f"{entry['group']}.{entry['arch']}.{who}.npz", **runs[who],
                                errors=np.array(json.dumps(errors)))
        if "ptxas" in runs:
            ref, names = reference_slots(entry, inputs, ncases)
            masked = {"out": np.where(ref["known"], runs["ptxas"]["out"], ref["out"]),
                      "in": np.where(ref["in_known"], runs["ptxas"]["in"], ref["in"])}
            d = diff_forms(entry, masked, ref, "reference", tolerances, names & ran["ptxas"], inputs, ncases)
            for k, v in d.items():
                findings["reference"][f"{entry['arch']} {k}"] = v
        if "ptxas" in runs and "ptxc" in runs:
            d = diff_forms(entry, runs["ptxc"], runs["ptxas"], "ptxc", tolerances, ran["ptxc"] & ran["ptxas"],
                           inputs, ncases)
            for k, v in d.items():
                findings["ptxc_vs_ptxas"][f"{entry['arch']} {k}"] = v
        if verbose:
            print(f"{entry['arch']} {entry['group']}: emulated {', '.join(runs)}", flush=True)
    (work / "emu" / "findings.json").write_text(json.dumps(findings, indent=1))
    return findings


def compare(work: Path, gpu_json: Path, verbose: bool = True) -> dict:
    """GPU vs emulator (ptxas's sm_90 cubin), and ptxc's sm_90 cubin vs ptxas's on the GPU."""
    manifest = json.loads((work / "manifest.json").read_text())
    ncases = manifest["ncases"]
    gpu = json.loads(gpu_json.read_text())
    tolerances = load_tolerances()
    findings = {"gpu": gpu.get("gpu"), "emulator_vs_gpu": {}, "ptxc_vs_ptxas_on_gpu": {}, "errors": {},
                "tolerated": {}}
    for entry in manifest["groups"]:
        if entry["arch"] != "sm_90":
            continue
        inputs = np.load(work / entry["in"])
        g, ok = {}, {}
        for who in entry["cubins"]:
            r = gpu["results"].get(f"{entry['group']}.{who}")
            if r is None or "error" in r:
                findings["errors"][f"{entry['group']}.{who}"] = (r or {}).get("error", "not run on the GPU")
                continue
            g[who] = {k: decode_slots(r[k]) for k in ("in", "out")}
            ok[who] = set(entry[who + "_forms"]) - set(r.get("form_errors", {}))
            for form, why in r.get("form_errors", {}).items():
                findings["errors"][f"{form} ({who}, GPU)"] = why
        if "ptxas" in g:
            npz = work / "emu" / f"{entry['group']}.sm_90.ptxas.npz"
            if npz.exists():
                saved = np.load(npz)
                emu, errors = {"in": saved["in"], "out": saved["out"]}, json.loads(str(saved["errors"]))
            else:
                emu, errors = run_emulator((work / entry["cubins"]["ptxas"]).read_bytes(), entry, inputs,
                                           set(entry["ptxas_forms"]))
            for form, why in errors.items():
                findings["errors"][f"{form} (ptxas, emulator)"] = why
            d = diff_forms(entry, emu, g["ptxas"], "gpu", tolerances, ok["ptxas"] - set(errors), inputs, ncases)
            for k, v in d.items():
                (findings["emulator_vs_gpu"] if v["bad"] else findings["tolerated"])[k] = v
        if "ptxas" in g and "ptxc" in g:
            d = diff_forms(entry, g["ptxc"], g["ptxas"], "ptxc", tolerances, ok["ptxc"] & ok["ptxas"], inputs, ncases)
            findings["ptxc_vs_ptxas_on_gpu"].update({k: v for k, v in d.items() if v["bad"]})
    if verbose:
        for sect in ("emulator_vs_gpu", "ptxc_vs_ptxas_on_gpu", "errors"):
            print(f"== {sect}: {len(findings[sect])}")
            for k, v in sorted(findings[sect].items()):
                print(f"  {k}: {v if isinstance(v, str) else str(v['bad']) + ' slots; ' + '; '.join(v['examples'][:2])}")
        print(f"== tolerated (known tolerances): {len(findings['tolerated'])} forms")
    return findings


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("work", type=Path)
    p.add_argument("--arch", action="append", help="sm_90 and/or sm_89 (default both)")
    p.add_argument("--no-ptxc", action="store_true")
    p.add_argument("--select", help="only forms whose name matches this glob")
    e = sub.add_parser("emulate")
    e.add_argument("work", type=Path)
    r = sub.add_parser("run")
    r.add_argument("work", type=Path)
    r.add_argument("--json", type=Path, required=True)
    c = sub.add_parser("compare")
    c.add_argument("work", type=Path)
    c.add_argument("gpu_json", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "prepare":
        prepare(args.work.resolve(), tuple(args.arch or ARCHS), not args.no_ptxc, args.select)
        return 0
    if args.cmd == "emulate":
        f = emulate(args.work.resolve())
        for sect in ("launch_errors", "reference", "ptxc_vs_ptxas"):
            print(f"== {sect}: {len(f[sect])}")
            for k, v in sorted(f[sect].items()):
                if isinstance(v, str) or v["bad"]:
                    print(f"  {k}: {v if isinstance(v, str) else str(v['bad']) + ' slots; ' + '; '.join(v['examples'][:2])}")
        return 0
    if args.cmd == "run":
        return run_device(args.work.resolve(), args.json)
    f = compare(args.work.resolve(), args.gpu_json)
    return 1 if f["emulator_vs_gpu"] or f["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
