"""The front-end testsuite kernels (fe_int_types ... fe_reduce_warp), compiled by nvcc, run
on the emulator with their `// LAUNCH:` inputs, against an independent NumPy (or plain
Python, with C semantics) computation of what the C source means.

Integers compare exactly.  Floats compare exactly where the reference can reproduce the
operation order; fused multiply-adds (nvcc contracts a*b+c into FFMA) are reproduced
exactly by `fma_rn` below, so they need no tolerance either.  Library functions compare
within the maximum error NVIDIA documents for them (CUDA C Programming Guide, appendix
"Mathematical Functions"), stated per column.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from test_emu_kernels import (M32, M64, cdiv, check, cmod, f32, launches_of, needs_nvcc, nvcc_cubin,
                              run_case, s8, s16, s32, s64, warp_reduce)
from ptxc.launch import run_launches

pytestmark = pytest.mark.oracle


# ---- helpers ------------------------------------------------------------------------------------------------
def fma_rn(a, b, c) -> np.ndarray:
    """fmaf(a, b, c): a*b+c rounded once to float32.  The float32 product is exact in
    float64; the float64 sum is made round-to-odd (TwoSum gives its error, an inexact
    sum with an even last bit steps one ulp toward the exact value), and round-to-odd
    at 53 bits followed by rounding to 24 bits is a correct single rounding."""
    a, b, c = (np.asarray(v, np.float32).astype(np.float64) for v in (a, b, c))
    p = a * b
    s = p + c
    bv = s - p
    err = (p - (s - bv)) + (c - bv)
    even = (s.view(np.int64) & 1) == 0
    nudge = (err != 0) & even & np.isfinite(s)
    s = np.where(nudge, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s.astype(np.float32)


def ulp_of(x, dtype=np.float32) -> np.ndarray:
    """The spacing of the floats of `dtype` at |x| (the smallest normal spacing near 0)."""
    x = np.abs(np.asarray(x, np.float64)).astype(dtype)
    tiny = np.finfo(dtype).tiny
    return np.spacing(np.maximum(x, tiny)).astype(np.float64)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many floats apart a and b are: (as float64, 0 where both are NaN and inf where
    one is; exactly, as unsigned integers).  The float64 form lets `compare` mix ulp
    bounds with absolute ones; small distances are compared in integers."""
    bits = {np.dtype(np.float32): (np.int32, np.uint32), np.dtype(np.float64): (np.int64, np.uint64)}
    signed, unsigned = bits[a.dtype]
    lowest = np.iinfo(signed).min
    ia, ib = a.view(signed), b.view(signed)
    ia = np.where(ia < 0, lowest - ia, ia)          # order the bit patterns like the values
    ib = np.where(ib < 0, lowest - ib, ib)
    dist = np.where(ia >= ib, ia.view(unsigned) - ib.view(unsigned), ib.view(unsigned) - ia.view(unsigned))
    dist[np.isnan(a) & np.isnan(b)] = 0
    out = dist.astype(np.float64)
    out[np.isnan(a) != np.isnan(b)] = np.inf
    return out, dist


def compare(name: str, kernel: str, buf: str, got: np.ndarray, want, ulp=0, abs_err=0.0) -> None:
    """Each element must be within `ulp` units in the last place or `abs_err` absolutely
    (scalars or per-element arrays)."""
    want = np.asarray(want).astype(got.dtype)
    if got.dtype.kind == "f":
        approx, dist = ulp_distance(got, want)
        ulp = np.broadcast_to(np.asarray(ulp, np.float64), got.shape)
        small = ulp < 2.0 ** 52                      # compare small distances in integers
        over = np.where(small, dist > np.where(small, ulp, 0).astype(dist.dtype), approx > ulp)
        over |= np.isinf(approx)
        with np.errstate(invalid="ignore"):
            over &= ~(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= abs_err)
    else:
        over = got != want
    bad = np.nonzero(over)[0]
    assert not bad.size, (f"{name}:{kernel} buffer '{buf}': {bad.size} differences, first "
                          + ", ".join(f"[{i}] emulator {got[i]!r} numpy {want[i]!r}" for i in bad[:5]))


def check_exact(name: str, kernel: str, reference) -> None:
    """`check` through `compare`."""
    inputs, scalars, outputs, _ = run_case(name, kernel)
    for buf, want in reference({k: v.copy() for k, v in inputs.items()}, scalars).items():
        compare(name, kernel, buf, outputs[buf], want)


def run_file(name: str):
    """Run every launch of a file in order over shared buffers: (initial, final) buffers
    by key."""
    source, launches = launches_of(name)
    run = run_launches(nvcc_cubin(name), launches, source, f"{name}.cu")
    return run.initial, run.buffers


# ---- fe_int_types ---------------------------------------------------------------------------------------------
@needs_nvcc
def test_int_types():
    def ref(i, s):
        out = np.zeros(4096, np.int64)
        for k in range(s["n"]):
            x, y = int(i["a"][k]), int(i["b"][k])
            sc = int(i["c"][k])
            uc = sc & 0xFF
            ch = s8(x & 0x7F)
            sh = int(i["s"][k])
            us = sh & 0xFFFF
            u = x & M32
            l, ul = x, x & M64
            ll = x * y
            q = int(i["ull"][k])
            o = [
                sc + uc,
                s32(sh * us),
                (u + x) & M32,                              # unsigned, zero-extended
                int(not x < 0),                             # u < 0u is always false
                s64(l - ul),                                # unsigned long: 0
                cdiv(ll, 3) + cmod(ll, 7),
                s64((q >> 7) ^ ((q << 3) & M64)),
                (x * 13) & 0xFF, s8(x * 7), s16(x * 1001), (x * 999) & 0xFFFF,
                ch + s8(sh),
                s64(((-y) & M32) + ((-y) & 0xFFFF)),
                (q % 1000003) - (u % 17),
                1 + 2 * 10 + 4 * 100 + 8 * 1000 + 8 * 10000 + 8 * 100000,
                ((u * 2654435761) & M32) >> 16,
                (us << 40) | (uc << 8) | uc,
                s64(q // y + q % y),
                (x > y) + (u > y) * 2 + (sc < uc) * 4 + (l >= s64(ul)) * 8,
            ]
            o[7:11] = [sum(o[7:11])]
            out[16 * k:16 * k + 16] = o
        return {"out": out}
    check("fe_int_types", "int_types", ref)


# ---- fe_local_array -------------------------------------------------------------------------------------------
@needs_nvcc
def test_local_array():
    def ref(i, s):
        n = s["n"]
        x, sel = i["in"][:n], i["sel"][:n]
        idx = np.arange(n)
        p2 = x * x
        p3 = p2 * x
        # acc += powers[k] * (k + 1), contracted: fma(x, 2, 1), fma(x*x, 3, .), fma(x*x*x, 4, .)
        acc = fma_rn(p3, f32(4), fma_rn(p2, f32(3), fma_rn(x, f32(2), f32(1))))
        lut = np.stack([np.full(n, v, np.float32) for v in (0.5, 1.5, 2.5, 3.5, -1.0, -2.0)] + [x, p2], 1)
        hist = np.zeros((n, 8), np.int64)
        for k in range(32):
            np.add.at(hist, (idx, (idx + 3 * k) & 7), k)
        small = np.tile([1, 2, 3], (n, 1))
        small[idx, idx % 3] = 10
        out = np.stack([acc, lut[idx, sel], (hist[idx, sel] - hist[:, 0]).astype(np.float32),
                        (small[:, 0] + small[:, 1] * 10 + small[:, 2] * 100).astype(np.float32)], 1)
        return {"out": out.reshape(-1)}
    check("fe_local_array", "local_array", ref)


# ---- fe_mangling ------------------------------------------------------------------------------------------------
# `out` is double: compared bit for bit with check_exact (see ulp_distance).  Each launch
# alone, then the three in order over the shared `out`.
MANGLING_SCALARS = [1, 65, -3, 200, -1234, 60000, -5000000000, 7000000000, -9000000000, 12000000000, 1.5, -2.25,
                    99, 0.0]


@needs_nvcc
def test_mangling_scalars():
    def ref(i, s):
        # the scalars exactly as the launch line gives them; char is signed on this target
        assert [s[k] for k in ("flag", "c", "sc", "uc", "s", "us", "l", "ul", "ll", "ull", "f", "d", "z")] \
            == MANGLING_SCALARS[:13]
        out = np.zeros(64, np.float64)
        out[:14] = MANGLING_SCALARS
        return {"out": out}
    check_exact("fe_mangling", "scalars", ref)


def mangling_pointers(a, b, idx):
    out = np.zeros(64, np.float64)
    out[32:] = (a[idx] + b[31 - idx]).astype(np.float64)
    return out


def mangling_with_enum(out, mode, gain):
    t = np.arange(32)
    # mode == AUTO (2): gain * t in float, widened to double, added to out[t]
    term = (f32(gain) * t.astype(np.float32)).astype(np.float64) if mode == 2 else np.full(32, -1.0)
    out = out.copy()
    out[:32] += term
    return out


@needs_nvcc
def test_mangling_pointers():
    check_exact("fe_mangling", "pointers", lambda i, s: {"out": mangling_pointers(i["a"], i["b"], i["idx"])})


@needs_nvcc
def test_mangling_with_enum():
    check_exact("fe_mangling", "with_enum", lambda i, s: {"out": mangling_with_enum(i["out"], s["mode"], s["gain"])})


@needs_nvcc
def test_mangling_in_sequence():
    # the three launches share `out`: scalars fill 0..13, pointers 32..63, with_enum adds to 0..31
    initial, final = run_file("fe_mangling")
    out = np.zeros(64, np.float64)
    out[:14] = MANGLING_SCALARS
    out[32:] = mangling_pointers(initial["a"], initial["b"], initial["idx"])[32:]
    out = mangling_with_enum(out, 2, 0.5)
    compare("fe_mangling", "(all)", "out", final["out"], out)


# ---- fe_matmul_tiled ------------------------------------------------------------------------------------------
@needs_nvcc
def test_matmul_tiled():
    def ref(i, s):
        n = s["N"]
        A, B = i["A"].reshape(n, n), i["B"].reshape(n, n)
        acc = np.zeros((n, n), np.float32)
        for k in range(n):                  # acc += As[ty][k] * Bs[k][tx]: one FFMA per k, in order
            acc = fma_rn(A[:, k:k + 1], B[k:k + 1, :], acc)
        return {"C": acc.reshape(-1)}
    check("fe_matmul_tiled", "matmul_tiled", ref)


# ---- fe_multi_kernel ------------------------------------------------------------------------------------------
# Each launch alone (run_case: from the line's own, zero-filled, buffers), then all four
# in order over the shared buffers, as the file means them.
def mk_fill(n, base):
    i = np.arange(n)
    return fma_rn((i % 17).astype(np.float32), f32(0.125), f32(base))


def mk_diff(buf):
    return np.roll(buf, -1) - buf


def mk_total(diff):
    s = np.float32(0)
    for v in diff:
        s = np.float32(s + v)
    return np.array([s], np.float32)


@needs_nvcc
def test_multi_kernel_fill():
    check("fe_multi_kernel", "fill", lambda i, s: {"buf": mk_fill(s["n"], s["base"])})


@needs_nvcc
def test_multi_kernel_scale_in_place():
    check("fe_multi_kernel", "scale_in_place", lambda i, s: {"buf": i["buf"] * f32(s["factor"])})


@needs_nvcc
def test_multi_kernel_neighbour_diff():
    check("fe_multi_kernel", "neighbour_diff", lambda i, s: {"diff": mk_diff(i["buf"])})


@needs_nvcc
def test_multi_kernel_total():
    check("fe_multi_kernel", "total", lambda i, s: {"result": mk_total(i["diff"])})


@needs_nvcc
def test_multi_kernel_in_sequence():
    # fill -> scale -> neighbour difference -> total, over the shared buffers
    _, final = run_file("fe_multi_kernel")
    buf = mk_fill(1024, 0.5) * f32(3.0)
    diff = mk_diff(buf)
    compare("fe_multi_kernel", "(all)", "buf", final["buf"], buf)
    compare("fe_multi_kernel", "(all)", "diff", final["diff"], diff)
    compare("fe_multi_kernel", "(all)", "result", final["result"], mk_total(diff))


# ---- fe_operators -----------------------------------------------------------------------------------------------
@needs_nvcc
def test_operators():
    def ref(i, s):
        out = np.zeros(4096, np.int64)
        for k in range(s["n"]):
            x, y = int(i["a"][k]), int(i["b"][k])
            u = x & M32
            t = cmod(cdiv((x + y - 3) * 5, y), 1000)
            v = ((((u << (y & 7)) & M32) >> 3) & 0xFFF0F | 0x100) ^ u
            p1, p2, p3, p4, p = x, x + 2, x + 2, x, x         # p++, ++p, p--, --p
            q1, q = y, y - 2                                   # q--, then --q
            out[16 * k:16 * k + 16] = [
                t, s32(v), p1 + p2 * 3 - p3 * 5 + p4 * 7 + p,
                max(x, y) + abs(x), x * 2 + y, 4 + 8 * 3 + 4,
                (x == 0) + (y != 0) + (x != 0 and y != 0) + (x != 0) * 2 + ((not x > 0) and y > 10) * 4,
                s32((~x & 0x7FFF) | ((y << 4) ^ (x >> 2))),
                (x == y) + (x != y) * 2 + (x <= y) * 4 + (x >= y) * 8,
                s8(x) + s16(x * 100) + (y & 0xFF),
                cdiv(-x * -y, y), cmod(x, y) - cdiv(x, y) * y,
                (u >> 28) + (x >> 28), x * y + x * 3 - (y << 2),
                q1 * q + q,                  # nvcc reads q after --q (the expression is unsequenced)
                x + y]
        return {"out": out}
    check("fe_operators", "operators", ref)


# ---- fe_pointers ------------------------------------------------------------------------------------------------
@needs_nvcc
def test_pointers():
    def ref(i, s):
        n = s["n"]
        data, table = i["data"].reshape(-1, 64), i["table"]
        out = np.zeros((n, 4), np.float32)
        for k in range(n):
            row = data[k]
            out[k, 0] = f32(f32(row[3] + row[31]) + row[32])
            acc = f32(0)
            for v in row[:table[k % 64] % 16]:          # sum_range, one element at a time
                acc = f32(acc + v)
            out[k, 1] = acc
            out[k, 2] = row[5] * f32(2)
            t = (k & 31)
            out[k, 3] = float(table[t + 1] - table[t])
        idx = i["idx"].copy()
        idx[:n] = 32 * 100 + 1 + 32 * 4          # (mid - row) * 100 + (row < mid) + byte difference
        return {"out": out.reshape(-1), "idx": idx}
    check("fe_pointers", "pointers", ref)


# ---- fe_preprocessor --------------------------------------------------------------------------------------------
@needs_nvcc
def test_preprocessor():
    def ref(i, s):
        out = np.zeros(512, np.int64)
        for j, v in enumerate(int(v) for v in i["in"]):
            k = j % 4                                    # N_PER_THREAD == 4, SCALE == 2
            out[j] = cdiv((v + 1) * (v + 1), 2) + (v * 3 - 1) + max(v, k, -v)
        return {"out": out}
    check("fe_preprocessor", "preprocessor", ref)


# ---- fe_reduce_warp ---------------------------------------------------------------------------------------------
@needs_nvcc
def test_reduce_warp():
    def ref(i, s):
        ints, floats = i["in"].reshape(8, 256).astype(np.int64), i["f"].reshape(8, 256)
        out = [s32(int(b.sum())) for b in ints]
        fout = []
        for b in floats:
            partial = [warp_reduce(b[w * 32:(w + 1) * 32]) for w in range(8)]
            fout.append(warp_reduce(np.array(partial + [0] * 24, np.float32)))
        return {"out": out, "fout": fout}
    check("fe_reduce_warp", "reduce_warp", ref)


# ---- library functions: tolerances from NVIDIA's tables -------------------------------------------------------
def lib32(values) -> np.ndarray:
    """A float function evaluated in float64 and rounded to float32: the correctly
    rounded result the CUDA tables measure their ulp errors against."""
    return np.asarray(values, np.float64).astype(np.float32)


def sum_error(want, terms, partials=(), dtype=np.float32) -> np.ndarray:
    """The absolute error allowed for a sum of library results.  `terms` are (exact
    value, documented max ulp error): each may be off by that much plus half an ulp for
    the reference's own rounding; each rounded partial sum (the result included) may
    then round the other way."""
    err = sum((u + 0.5) * ulp_of(v, dtype) for v, u in terms)
    return err + sum(ulp_of(p, dtype) for p in list(partials) + [want])


class Columns:
    """A kernel's output columns, each with its allowed error (ulp, or absolute for
    sums that may cancel towards zero)."""

    def __init__(self, n: int):
        self.n, self.want, self.ulp, self.abs = n, [], [], []

    def add(self, want, ulp=0, abs_err=0.0):
        self.want.append(want)
        self.ulp.append(np.broadcast_to(np.asarray(ulp, np.float64), (self.n,)))
        self.abs.append(np.broadcast_to(np.asarray(abs_err, np.float64), (self.n,)))

    def check(self, name: str, kernel: str, got: np.ndarray) -> None:
        flat = lambda cols: np.stack(cols, 1).reshape(-1)        # noqa: E731
        want = flat([np.asarray(w).astype(got.dtype) for w in self.want])
        compare(name, kernel, "out", got[:want.size], want, flat(self.ulp), flat(self.abs))


# ---- fe_math_fast -----------------------------------------------------------------------------------------------
# The fast intrinsics' documented errors (CUDA Programming Guide, intrinsic functions):
# __expf 2 + floor(|1.173 x|) ulp, __exp10f 2 + floor(|2.95 x|) ulp, __fdividef 2 ulp,
# __sinf 2^-21.41 and __cosf 2^-21.19 absolute on [-pi, pi], __logf 2^-21.41 and
# __log2f 2^-22 absolute on [0.5, 2]; __powf and __tanf inherit theirs from
# exp2f(y * __log2f(x)) and __sinf(x) * (1 / __cosf(x)).
ERR_SIN, ERR_COS, ERR_LOG, ERR_LOG2 = 2 ** -21.41, 2 ** -21.19, 2 ** -21.41, 2 ** -22


def math_fast_ref(i, s) -> Columns:
    n = s["n"]
    a, b, k = i["x"][:n], i["y"][:n], i["k"][:n].astype(np.int64)
    A, B = a.astype(np.float64), b.astype(np.float64)
    m, p = k, np.roll(k, -1)
    out = Columns(n)
    x = (a * f32(4)).astype(np.float64)
    out.add(lib32(np.exp(x)), ulp=2 + np.floor(np.abs(1.173 * x)))
    t1, t2 = np.sin((a * f32(3)).astype(np.float64)), np.cos((b * f32(3)).astype(np.float64))
    w = lib32(t1) + lib32(t2)
    out.add(w, abs_err=ERR_SIN + ERR_COS + sum_error(w, [(t1, 0), (t2, 0)]))
    out.add(lib32(A / (b + f32(2)).astype(np.float64)), ulp=2)
    w = lib32(np.log((np.abs(a) + f32(0.5)).astype(np.float64)))
    out.add(w, abs_err=ERR_LOG + ulp_of(w))
    x = (np.abs(b) + f32(1)).astype(np.float64)
    w = lib32(np.power(x, A))
    # exp2's argument y * log2(x) is off by |y| 2^-22 plus its rounding: relatively ln 2 times that
    rel = math.log(2) * (np.abs(A) * ERR_LOG2 + 2 ** -24 * np.abs(A * np.log2(x)))
    out.add(w, ulp=2 + np.ceil(rel * np.abs(w) / ulp_of(w)))
    out.add(np.clip(a * f32(2), f32(0), f32(1)))
    out.add((np.minimum(m, p) + np.maximum(m, p) * 2 + np.abs(m)).astype(np.float32))
    out.add(np.minimum(a, b) + np.maximum(a, b) * f32(2))          # one rounding, fused or not
    out.add((np.minimum(m & M32, p & M32) % 1000).astype(np.float32) + np.maximum(m, 5).astype(np.float32))
    tan, e10 = np.tan(A), 10.0 ** B
    l2 = np.log2((np.abs(b) + f32(1)).astype(np.float64))
    part = lib32(tan) + lib32(e10)
    w = part + lib32(l2)
    err_tan = (ERR_SIN + np.abs(tan) * ERR_COS) / np.abs(np.cos(A)) + 2 * ulp_of(tan)   # + rcp and product
    err_e10 = (2 + np.floor(np.abs(2.95 * B))) * ulp_of(e10)
    out.add(w, abs_err=err_tan + err_e10 + ERR_LOG2 + sum_error(w, [(tan, 0), (e10, 0), (l2, 0)], [part]))
    return out


@needs_nvcc
def test_math_fast():
    inputs, scalars, outputs, _ = run_case("fe_math_fast", "math_fast")
    math_fast_ref(inputs, scalars).check("fe_math_fast", "math_fast", outputs["out"])


# ---- fe_math_float ----------------------------------------------------------------------------------------------
# libdevice's full-precision float functions, documented maximum errors (CUDA Programming
# Guide, single-precision table): sqrtf 0 (IEEE with -prec-sqrt=true, the default),
# rsqrtf 2, expf 2, exp2f 2, logf 1, log2f 1, sinf 2, cosf 2, tanhf 2, powf 4 ulp;
# fminf fmaxf floorf ceilf roundf fabsf fmaf exact.
def math_float_ref(i, s) -> Columns:
    n = s["n"]
    a, b = i["x"][:n], i["y"][:n]
    c = i["big"][:n] * f32(1000)
    d = lambda v: np.asarray(v, np.float32).astype(np.float64)      # noqa: E731
    A, C = d(a), d(c)
    out = Columns(n)
    out.add(np.sqrt(np.abs(a)))
    out.add(lib32(1 / np.sqrt(d(np.abs(b) + f32(0.01)))), ulp=2)
    out.add(lib32(np.exp(d(a * f32(10)))), ulp=2)
    out.add(lib32(np.exp2(d(b * f32(20)))), ulp=2)
    out.add(lib32(np.log(d(np.abs(a) + f32(1e-3)))), ulp=1)
    out.add(lib32(np.log2(d(np.abs(b) * f32(100)))), ulp=1)
    for t1, t2 in ((np.sin(d(a * f32(3))), np.sin(C)), (np.cos(d(b * f32(5))), np.cos(C))):
        w = lib32(t1) + lib32(t2)                  # sinf(c), |c| up to 1e8: Payne-Hanek
        out.add(w, abs_err=sum_error(w, [(t1, 2), (t2, 2)]))
    out.add(lib32(np.tanh(d(a * f32(4)))), ulp=2)
    out.add(lib32(np.power(d(np.abs(a) + f32(0.5)), d(b * f32(3)))), ulp=4)
    out.add(np.minimum(a, b) + np.maximum(a, b))
    out.add(np.floor(a * f32(10)) + np.ceil(b * f32(10)))
    r = a * f32(7.5)
    out.add(np.copysign(np.floor(np.abs(r) + f32(0.5)), r))       # roundf: halves away from zero
    out.add(fma_rn(a, b, f32(0.25)))
    # C++'s float overloads: sqrtf, expf, logf
    t_exp, t_log = np.exp(A), np.log(d(np.abs(b) + f32(1)))
    part = np.sqrt(np.abs(b)) + lib32(t_exp)
    w = part + lib32(t_log)
    out.add(w, abs_err=sum_error(w, [(t_exp, 2), (t_log, 1)], [part]))
    t1, t2 = np.exp2(A), A * A
    w = lib32(t1) + lib32(t2)
    out.add(w, abs_err=sum_error(w, [(t1, 4), (t2, 4)]))
    with np.errstate(over="ignore"):
        out.add(lib32(np.exp(C)))                  # |c| >= 1000 or c == 0: inf, 0 or 1 exactly
    out.add(np.full(n, np.nan, np.float32))        # logf(+-0) + sqrtf(negative): -inf + NaN
    out.add(lib32(np.tanh(C)) + np.floor(c))       # tanhf(c) is exactly -1, 0 or 1 here
    sa, ca, s2 = np.sin(A), np.cos(A), np.sin(d(f32(2) * a))
    prod = lib32(sa) * lib32(ca)
    w = np.abs(prod - f32(0.5) * lib32(s2))
    # sin(a)cos(a) - sin(2a)/2 cancels to about 0: the terms' errors, absolutely
    out.add(w, abs_err=2.5 * (ulp_of(sa) * np.abs(ca) + ulp_of(ca) * np.abs(sa)) + 1.25 * ulp_of(s2)
            + ulp_of(prod) + ulp_of(w))
    return out


@needs_nvcc
def test_math_float():
    inputs, scalars, outputs, _ = run_case("fe_math_float", "math_float")
    math_float_ref(inputs, scalars).check("fe_math_float", "math_float", outputs["out"])


# ---- fe_math_double ---------------------------------------------------------------------------------------------
# libdevice's double functions, documented maximum errors (CUDA Programming Guide,
# double-precision table): sqrt 0, rsqrt 1, exp exp2 log log2 1, sin cos 2, tanh 1,
# pow 2 ulp; fmin fmax floor ceil round fma exact.  The reference runs glibc's double
# functions, not correctly rounded either: GLIBC more ulp for those.
GLIBC = 1


def fma64(a: float, b: float, c: float) -> float:
    """fma(a, b, c) on doubles, rounded once (int / int true division rounds correctly)."""
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def math_double_ref(i, s) -> Columns:
    n = s["n"]
    a, b = i["x"][:n], i["y"][:n]
    F64 = np.float64
    out = Columns(n)
    t1, t2 = np.sqrt(np.abs(a)), 1 / np.sqrt(np.abs(b) + 0.01)
    w = t1 + t2
    out.add(w, abs_err=sum_error(w, [(t1, 0), (t2, 1 + GLIBC)], dtype=F64))
    out.add(np.exp(a * 20.0), ulp=1 + GLIBC)
    out.add(np.exp2(b * 30.0), ulp=1 + GLIBC)
    out.add(np.log(np.abs(a) + 1e-9), ulp=1 + GLIBC)
    out.add(np.log2(np.abs(b) * 1000.0), ulp=1 + GLIBC)
    out.add(np.sin(a * 4.0), ulp=2 + GLIBC)
    out.add(np.cos(b * 4.0), ulp=2 + GLIBC)
    t1, t2 = np.sin(a * 1e12), np.cos(b * 1e15)    # libdevice's slow-path reduction
    w = t1 + t2
    out.add(w, abs_err=sum_error(w, [(t1, 2 + GLIBC), (t2, 2 + GLIBC)], dtype=F64))
    out.add(np.tanh(a * 3.0), ulp=1 + GLIBC)
    out.add(np.power(np.abs(a) + 0.5, b * 4.0), ulp=2 + GLIBC)
    out.add(np.minimum(a, b) * np.maximum(a, b))
    out.add(np.floor(a * 100.0) - np.ceil(b * 100.0))
    r = a * 9.5
    out.add(np.copysign(np.floor(np.abs(r) + 0.5), r))             # round: halves away from zero
    out.add(np.array([fma64(x, y, -0.125) for x, y in zip(a, b)]))
    t1, t2 = np.power(a, 3.0), np.power(2.0, b)
    w = t1 + t2
    out.add(w, abs_err=sum_error(w, [(t1, 2 + GLIBC), (t2, 2 + GLIBC)], dtype=F64))
    # float expf and sinf (2 ulp each, in float32 ulps), widened and added in double
    fa, fb = a.astype(np.float32).astype(F64), b.astype(np.float32).astype(F64)
    e, sn = np.exp(fa), np.sin(fb)
    w = lib32(e).astype(F64) + lib32(sn).astype(F64)
    out.add(w, abs_err=2 * ulp_of(e) + 2 * ulp_of(sn) + ulp_of(w, F64))
    return out


@needs_nvcc
def test_math_double():
    inputs, scalars, outputs, _ = run_case("fe_math_double", "math_double")
    math_double_ref(inputs, scalars).check("fe_math_double", "math_double", outputs["out"])


# ---- fe_nbody ---------------------------------------------------------------------------------------------------
# The interaction in nvcc's operation order: dist2 = fma(rz, rz, fma(rx, rx, ry*ry)) + eps2
# (how it contracted the sum of squares), s = ((w * inv) * inv) * inv, a += r * s fused.
# rsqrtf is MUFU.RSQ, documented within 2 ulp: the reference takes the correctly rounded
# 1/sqrt, and allows each body the absolute error that 2 ulp in inv (6 in s, plus the
# roundings after it: 10 ulp relative) carries into each |r * s| term, plus one ulp of
# the running sum per step for roundings that then go the other way.
def nbody_ref(i, s):
    n, eps2 = s["n"], f32(s["eps2"])
    pos = i["pos"].reshape(-1, 4)
    me = pos[:n]
    acc = np.zeros((3, n), np.float32)
    err = np.zeros((3, n))
    for j in range(n):                               # tiles of 64, in order: j = 0 .. n-1
        bj = pos[j]
        r = bj[:3, None] - me[:, :3].T
        dist2 = fma_rn(r[2], r[2], fma_rn(r[0], r[0], r[1] * r[1])) + eps2
        inv = lib32(1 / np.sqrt(dist2.astype(np.float64)))
        scale = bj[3] * inv * inv * inv
        acc = fma_rn(r, scale, acc)
        err += np.abs(r * scale.astype(np.float64)) * 10 * 2.0 ** -23 + ulp_of(acc)
    zeros = np.zeros(n)
    want = np.stack([*acc, zeros.astype(np.float32)], 1).reshape(-1)
    return want, np.stack([*err, zeros], 1).reshape(-1)


@needs_nvcc
def test_nbody():
    inputs, scalars, outputs, _ = run_case("fe_nbody", "nbody")
    want, abs_err = nbody_ref(inputs, scalars)
    compare("fe_nbody", "nbody", "acc", outputs["acc"], want, abs_err=abs_err)
