"""The front-end testsuite kernels fe_array2d .. fe_host_code, compiled by nvcc, run on
the emulator with their `// LAUNCH:` inputs, against an independent NumPy (or plain
Python) computation of what the C source means.

Integers compare exactly.  Floats compare exactly too: where nvcc contracts a*b+c into
one FFMA/DFMA (checked in the SASS, `ptxc dump`), the reference rounds that step once
with exact rational arithmetic (`ffma`, `dfma` below) instead of NumPy's two roundings.
Files with several launches are also run whole, each launch on what the earlier ones
left in the shared buffers (and in the module's __device__ variables).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from test_emu_kernels import (M32, M64, brev32, byte_perm, cdiv, check, clz32, cmod, f32, ffs,
                              launches_of, needs_nvcc, nvcc_cubin, popc, s8, s16, s32)
from ptxc.launch.spec import Buffer
from ptxc.launch import differences, run_launches

pytestmark = pytest.mark.oracle


# ---- helpers ------------------------------------------------------------------------------------------
def round_f32(q: Fraction) -> np.float32:
    """The float32 nearest the rational q, ties to even (float(q) is within one ulp)."""
    r = np.float32(float(q))
    candidates = (np.nextafter(r, np.float32(-np.inf)), r, np.nextafter(r, np.float32(np.inf)))
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - q), int(np.float32(c).view(np.int32)) & 1))


def ffma(a, b, c) -> np.float32:
    """FFMA: a*b+c in float32, rounded once."""
    return round_f32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def dfma(a, b, c) -> float:
    """DFMA: a*b+c in float64, rounded once (int/int division in Python rounds correctly)."""
    return float(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def check_sequence(name: str, reference) -> None:
    """Run every launch of a file in order on shared buffers; `reference(initial, scalars)`
    gets the buffers before the first launch and a list of each launch's scalars, and
    returns {buffer: expected contents after the last launch}.  Compared exactly."""
    source, launches = launches_of(name)
    run = run_launches(nvcc_cubin(name), launches, source, f"{name}.cu")
    scalars = [{item.name: float(item.text) if any(c in item.text for c in ".eE") else int(item.text, 0)
                for item in launch.items if not isinstance(item, Buffer)} for launch in launches]
    expected = reference({k: v.copy() for k, v in run.initial.items()}, scalars)
    assert expected, "the reference computes nothing"
    for buf, want in expected.items():
        got = run.buffers[buf]
        bad = differences(buf, got, np.asarray(want).astype(got.dtype))
        assert not bad, (f"{name} buffer '{buf}': {len(bad)} differences, first "
                         + ", ".join(f"[{i}] emulator {a!r} numpy {b!r}" for i, a, b in bad[:5]))


# ---- fe_array2d ---------------------------------------------------------------------------------------
@needs_nvcc
def test_array2d():
    W = 16

    def ref(i, s):
        inp, rows = i["in"], i["rows"].tolist()
        out = i["out"].copy()
        for bx in range(4):
            tile = inp[bx * 64:bx * 64 + 64].reshape(4, W)
            for ty in range(4):
                for tx in range(W):
                    g = bx * 64 + ty * W + tx
                    m = [[tile[(ty + r) % 4][(tx + c) % W] for c in range(3)] for r in range(3)]
                    # nvcc (SASS): each a*b - c*d is FFMA(a, b, -(c*d)); the expansion is
                    # FFMA(m02, c2, FFMA(m00, c0, -(m01*c1)))
                    c0 = ffma(m[1][1], m[2][2], -(m[1][2] * m[2][1]))
                    c1 = ffma(m[1][0], m[2][2], -(m[1][2] * m[2][0]))
                    c2 = ffma(m[1][0], m[2][1], -(m[1][1] * m[2][0]))
                    det = ffma(m[0][2], c2, ffma(m[0][0], c0, -(m[0][1] * c1)))
                    q = [[r * 4 + c + tx for c in range(4)] for r in range(4)]
                    pick = rows[g % 256]
                    out[g] = (det + f32(q[pick][3 - pick] + q[3][pick])) + tile[3 - ty][W - 1 - tx]
        return {"out": out}
    check("fe_array2d", "array2d", ref)


# ---- fe_atomics_float -------------------------------------------------------------------------------
@needs_nvcc
def test_atomics_float():
    # every addend is a small multiple of 1/4, so every partial sum is exact: any arrival
    # order gives the same bits
    def ref(i, s):
        v = i["v"][:s["n"]].astype(np.int64)
        f = np.zeros(8, np.float32)
        d = np.zeros(8, np.float64)
        f[0] = v.sum() * 0.5
        f[1:5] = s["n"] // 4
        f[5] = 3.0
        f[6] = 2.0 * s["n"]                 # d[1] is never written: always &f[6]
        d[0] = v.sum() * 0.25
        d[2] = sum(block.sum() * 0.5 for block in v.reshape(4, 64))
        return {"f": f, "d": d}
    check("fe_atomics_float", "atomics_float", ref)


# ---- fe_atomics_int ---------------------------------------------------------------------------------
@needs_nvcc
def test_atomics_int():
    def ref(i, s):
        x = [int(a) for a in i["v"][:s["n"]]]
        g, u, w = [0] * 16, [0] * 16, [0] * 4
        xor, bits, low = 0, 0, 0
        for a in x:
            xor ^= a
            low |= a & 0xFF
            bits |= 1 << (a & 31)
        inc = 0
        for _ in x:                         # atomicInc: old >= 100 ? 0 : old + 1
            inc = 0 if inc >= 100 else inc + 1
        block_sums = [sum(x[b * 128:(b + 1) * 128]) for b in range(4)]
        g[0], g[1] = s32(sum(x)), s32(-sum(x))
        g[2], g[3] = min(0, min(x)), max(0, max(x))     # the counters start at zero
        g[4], g[5], g[6] = 0, low, s32(xor)             # 0 & anything stays 0
        g[7], g[8] = 42, len(x)
        g[9], g[10] = s32(sum(block_sums)), max(0, max(block_sums))
        u[0] = sum(x) & M32
        u[1], u[2] = 0, max(a & M32 for a in x)
        u[3], u[4] = inc, bits
        w[0] = sum(a + 20000 for a in x) & M64
        return {"g": g, "u": u, "w": w}
    check("fe_atomics_int", "atomics_int", ref)


# ---- fe_bitonic -----------------------------------------------------------------------------------------
@needs_nvcc
def test_bitonic():
    # the last merge has size 512: every block ends sorted ascending
    check("fe_bitonic", "bitonic", lambda i, s: {"keys": np.sort(i["keys"].reshape(4, 512), axis=1).reshape(-1)})


# ---- fe_bitops ------------------------------------------------------------------------------------------
@needs_nvcc
def test_bitops():
    def funnel_l(lo, hi, n):
        return (((hi << 32) | lo) << (n & 31)) >> 32 & M32

    def funnel_r(lo, hi, n):
        return (((hi << 32) | lo) >> (n & 31)) & M32

    def bits(value, dtype, itype):
        return int(np.asarray(value, dtype).view(itype))

    def ref(i, s):
        out = i["out"].copy()
        for k in range(256):
            x, y, f = int(i["a"][k]), int(i["b"][k]), i["f"][k]
            lo, hi = y & M32, y >> 32
            r = k & 31
            o = [popc(x) + popc(y) * 100,
                 clz32(x) + (64 - y.bit_length()) * 100,
                 ffs(x) + ffs(y, 64) * 100,
                 brev32(x),
                 byte_perm(x, lo, 0x5140),
                 funnel_l(x, hi, k & 31) ^ funnel_r(x, lo, (k * 7) & 31),
                 (x << r) | (x >> ((32 - r) & 31)),
                 (y >> 17) ^ (y << 5),
                 ((x * 2654435761) >> 32) + ((s32(x) * -12345) >> 32),
                 bits(f, np.float32, np.uint32) ^ bits(f * f32(2), np.float32, np.uint32),
                 bits(np.uint32(x & 0x3FFFFFFF).view(np.float32) + f32(1), np.float32, np.uint32),
                 bits(np.float64(f), np.float64, np.int64) >> 29,
                 (x & 0xFF00FF00) >> 8 | (x & 0x00FF00FF) << 8]
            out[13 * k:13 * k + 13] = [v & M32 for v in o]
        return {"out": out}
    check("fe_bitops", "bitops", ref)


# ---- fe_const_volatile --------------------------------------------------------------------------------
@needs_nvcc
def test_const_volatile():
    def ref(i, s):
        n = s["n"]
        seen = 1 + i["flags"][:n]
        # nvcc (SASS): FFMA(in, 0.5, FFMA(in, 1.5, (float)seen))
        out = [ffma(x, f32(0.5), ffma(x, f32(1.5), f32(c))) for x, c in zip(i["in"][:n], seen)]
        return {"vol": seen, "out": out}
    check("fe_const_volatile", "const_volatile", ref)


# ---- fe_constant_mem ------------------------------------------------------------------------------------
COEFFS = [f32(0.0625), f32(0.25), f32(0.375), f32(0.25), f32(0.0625)]


def constant_mem_r(inp, n):
    """r = s * params.gain + params.bias * scale for every thread, s the 5-tap filter."""
    r = []
    for k in range(n):
        s = f32(0)
        for tap, off in enumerate((-2, -1, 0, 1, 2)):
            j = k + off
            if 0 <= j < n:
                s = ffma(COEFFS[tap], inp[j], s)     # nvcc: one FFMA per tap, in order
        r.append(ffma(s, f32(1.5), f32(-0.25) * f32(0.5)))
    return r


def constant_mem_out(inp, n):
    return np.array([r + COEFFS[k % 5] for k, r in enumerate(constant_mem_r(inp, n))], np.float32)


@needs_nvcc
def test_constant_mem():
    def ref(i, s):
        n = s["n"]
        return {"out": constant_mem_out(i["in"], n), "counts": [n // 4] * 4}
    check("fe_constant_mem", "constant_mem", ref)


@needs_nvcc
def test_read_counter_alone():
    # alone, the __device__ counter and history are still zero
    check("fe_constant_mem", "read_counter", lambda i, s: {"out": i["out"], "counts": i["counts"]})


@needs_nvcc
def test_constant_mem_then_read_counter():
    def ref(i, scalars):
        n = scalars[0]["n"]
        r = constant_mem_r(i["in"], n)              # what constant_mem left in history[]
        out = constant_mem_out(i["in"], n)
        counts = np.full(4, n // 4, np.uint32)
        counts[0] += sum(v > 0 for v in r)          # hits
        for t in range(32):
            out[t] = out[t] + r[8 * t]
        return {"out": out, "counts": counts}
    check_sequence("fe_constant_mem", ref)


# ---- fe_control -------------------------------------------------------------------------------------------
@needs_nvcc
def test_control():
    def ref(i, s):
        v, lim = i["v"].tolist(), i["lim"].tolist()
        out = i["out"].copy()
        for k in range(s["n"]):
            x = v[k]
            cls = 0 if x < -50 else 1 if x < 0 else 2 if x == 0 else 3 if x <= 50 else 4
            total = 0
            for a in range(lim[k]):
                if a % 3 == 0:
                    continue
                b = a
                while b > 0:
                    total += b & 1
                    b >>= 1
                    if total > 40:
                        break
            w, steps = x, 0
            while True:                               # do { ... } while (w != 0)
                w = cdiv(w, 2)
                steps += 1
                if steps > 3 and w == 1:
                    break
                if w == 0:
                    break
            found = next((j for j in range(64) if v[j] == x and j != k), -1)
            out[4 * k:4 * k + 4] = [cls, total, steps, found + (1000 if x <= 90 else 0)]
        return {"out": out}
    check("fe_control", "control", ref)


# ---- fe_conversions -----------------------------------------------------------------------------------
@needs_nvcc
def test_conversions():
    def f2i(v) -> int:
        """float -> int as the GPU's F2I.TRUNC: toward zero, saturating."""
        return min(max(int(np.trunc(v)), -(1 << 31)), (1 << 31) - 1)

    def ref(i, s):
        out, fo = i["out"].copy(), i["fo"].copy()
        for k in range(128):
            x = i["f"][k] * f32(1000)                 # float32 product
            y = float(i["d"][k]) * 1e6
            m = int(i["k"][k])
            o = [int(x), int(abs(x)), int(y), s8(m), m & 0xFF, s16(m), m & 0xFFFF,
                 int(m != 0) + int(x != 0) * 2 + 4,         # (bool)(f + i): a device pointer, never null
                 int(x * f32(0.5)) + int(y * 0.25),
                 int(np.rint(x)) - int(x),            # __float2int_rn rounds halves to even
                 int(np.floor(x)) * 3 + int(np.ceil(x)),
                 s32(f2i(f32(m)) - m),                # (float)INT_MAX rounds up to 2^31: saturates
                 int(float(np.float32(y))),
                 s32((m * 3) >> 1),
                 ((m & M32) * 7) % 1000003,
                 s8(m >> 8) * ((m >> 16) & 0xFF)]
            out[16 * k:16 * k + 16] = o
            fo[4 * k:4 * k + 4] = [f32(m), np.float32(y), f32(m) + np.float32(np.uint32(m & M32)),
                                   f32(int(y)) * f32(0.5)]
        return {"out": out, "fo": fo}
    check("fe_conversions", "conversions", ref)


# ---- fe_device_funcs ----------------------------------------------------------------------------------
def sign(x: int) -> int:
    return (x > 0) - (x < 0)


def gcd(a: int, b: int) -> int:
    a, b = abs(a), abs(b)
    while b:
        a, b = b, cmod(a, b)
    return a


def is_prime(x: int) -> bool:
    return x >= 2 and all(x % d for d in range(2, int(x ** 0.5) + 1))


def device_funcs_out(inp, out, n):
    out = out.copy()
    for k in range(n):
        x, y = inp[k], inp[(k + 7) % n]
        q, r = (cdiv(x, y), cmod(x, y)) if y else (0, 0)
        out[3 * k] = sign(x) * (sign(y) + 2) ** 2 + gcd(x, y)
        out[3 * k + 1] = q * 1000 + r
        out[3 * k + 2] = x * x if is_prime(abs(x)) else gcd(x * x, 360)
    return out


def device_funcs2_out(inp, out, n):
    out = out.copy()
    for k in range(n):
        out[3 * k + 2] += gcd(inp[k], 84) + sign(inp[k])
    return out


@needs_nvcc
def test_device_funcs():
    check("fe_device_funcs", "device_funcs",
          lambda i, s: {"out": device_funcs_out(i["in"].tolist(), i["out"], s["n"])})


@needs_nvcc
def test_device_funcs2():
    check("fe_device_funcs", "device_funcs2",
          lambda i, s: {"out": device_funcs2_out(i["in"].tolist(), i["out"], s["n"])})


@needs_nvcc
def test_device_funcs_sequence():
    def ref(i, scalars):
        inp = i["in"].tolist()
        out = device_funcs_out(inp, i["out"], scalars[0]["n"])
        return {"out": device_funcs2_out(inp, out, scalars[1]["n"])}
    check_sequence("fe_device_funcs", ref)


# ---- fe_dims ---------------------------------------------------------------------------------------------
def dims_out(out):
    out = out.copy()
    grid, block = (2, 3, 2), (4, 4, 2)
    for bz in range(grid[2]):
        for by in range(grid[1]):
            for bx in range(grid[0]):
                for tz in range(block[2]):
                    for ty in range(block[1]):
                        for tx in range(block[0]):
                            b = bx + grid[0] * (by + grid[1] * bz)
                            t = tx + block[0] * (ty + block[1] * tz)
                            ident = b * 32 + t
                            out[4 * ident:4 * ident + 4] = [b, t, tz * 100 + bz * 10 + grid[2],
                                                            32 + (t % 32) * 1000 + t // 32]
    return out


def grid_stride_out(out):
    return (out.astype(np.uint64) + 3 * np.arange(3072, dtype=np.uint64) + 1) & M32


@needs_nvcc
def test_dims():
    check("fe_dims", "dims", lambda i, s: {"out": dims_out(i["out"])})


@needs_nvcc
def test_grid_stride():
    check("fe_dims", "grid_stride", lambda i, s: {"out": grid_stride_out(i["out"])})


@needs_nvcc
def test_dims_then_grid_stride():
    check_sequence("fe_dims", lambda i, s: {"out": grid_stride_out(dims_out(i["out"]))})


# ---- fe_float_double ----------------------------------------------------------------------------------
@needs_nvcc
def test_float_double():
    def ref(i, s):
        fo, do, io = i["fo"].copy(), i["do_"].copy(), i["io"].copy()
        for k in range(s["n"]):
            x, y, m = i["f"][k], float(i["d"][k]), int(i["k"][k])
            xx = x * x
            # nvcc (SASS): F[0], F[4] one FFMA each (x*x stays a separate FMUL, shared
            # with F[1]); F[6] is FFMA(x, 2, m*0.001f) where 2x is exact; D[0], D[3] one DFMA
            fo[8 * k:8 * k + 8] = [ffma(x, f32(3), f32(-1.25)), x / (xx + f32(1.5)), f32(m) / f32(7),
                                   -x + np.float32(y), ffma(x, xx, -x), np.float32(np.uint32(m & M32)),
                                   f32(m) * f32(0.001) + f32(2) * x, x * f32(0.5) if x > 0 else -x * f32(2)]
            do[8 * k:8 * k + 8] = [dfma(y, y, float(x)), y / 3.0 - m, float(x) * 0.1, dfma(y, 1e10, float(m)),
                                   float(int(y * 1e6)) / 1e6, y - float(np.float32(y)), m / (y + 2.0), -y]
            io[4 * k:4 * k + 4] = [int(x * f32(1000)), int(y * 100000.0), int(xx * f32(1000)),
                                   s16(int(y * 70000.0))]
        return {"fo": fo, "do_": do, "io": io}
    check("fe_float_double", "float_double", ref)


# ---- fe_host_code -------------------------------------------------------------------------------------
@needs_nvcc
def test_host_code_saxpy_2d():
    # grid 4x2 of 16x16 threads: the columns are covered by the stride loop, but only rows
    # 0..31 of 64 have a thread.  a*x is exact (a = 2), so the FFMA rounds like a*x + y.
    def ref(i, s):
        width = s["width"]
        x, y = i["x"].reshape(-1, width), i["y"].reshape(-1, width).copy()
        y[:32] = f32(s["a"]) * x[:32] + y[:32]
        return {"y": y.reshape(-1)}
    check("fe_host_code", "saxpy_2d", ref)
