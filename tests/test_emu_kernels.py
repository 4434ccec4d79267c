"""Every testsuite kernel, compiled by nvcc, run on the emulator with its `// LAUNCH:`
inputs, against an independent NumPy (or plain Python) computation of the same thing.

Floating-point results are compared exactly where NumPy can reproduce the exact
operation order (sums, products, trees, scans); where nvcc contracts a*b+c into one
fused multiply-add, NumPy's float64 detour may round twice, so those compare within
1 ulp per fused step (the tolerance is stated per kernel).  Library functions (expf,
sinf, powf, ...) compare within the ulp the launch line allows, plus what NVIDIA
documents for the function.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction
import tempfile
from pathlib import Path

import numpy as np
import pytest

from ptxc import oracle
from ptxc.launch.spec import Buffer, Scalar, parse_file
from ptxc.launch import differences, run_launches

pytestmark = pytest.mark.oracle
TESTSUITE = Path(__file__).resolve().parent.parent / "testsuite"
needs_nvcc = pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF


# ---- running a launch -------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def nvcc_cubin(name: str) -> bytes:
    out = Path(tempfile.mkdtemp(prefix="emu-")) / f"{name}.cubin"
    oracle.nvcc_cubin(TESTSUITE / f"{name}.cu", out)
    return out.read_bytes()


@functools.lru_cache(maxsize=None)
def launches_of(name: str):
    source = (TESTSUITE / f"{name}.cu").read_text()
    return source, parse_file(source, f"{name}.cu")


def run_case(name: str, kernel: str):
    """Run one launch of a file alone: (inputs, scalars, outputs, launch), buffers and
    scalars by parameter name."""
    source, launches = launches_of(name)
    index = next(i for i, l in enumerate(launches) if l.kernel == kernel)
    run = run_launches(nvcc_cubin(name), launches, source, f"{name}.cu", only={index})
    launch = launches[index]
    keys = iter(run.launch_buffers[index])
    inputs, outputs, scalars = {}, {}, {}
    for item in launch.items:
        if isinstance(item, Buffer):
            key = next(keys)
            inputs[item.name] = run.initial[key].copy()
            outputs[item.name] = run.buffers[key]
        else:
            scalars[item.name] = float(item.text) if any(c in item.text for c in ".eE") else int(item.text, 0)
    return inputs, scalars, outputs, launch


def check(name: str, kernel: str, reference, ulp: dict | None = None, atol: float = 0.0) -> None:
    """Run the launch and compare every buffer the reference computes: integers exactly,
    floats within `ulp[buffer]` units in the last place (or `atol` absolutely, for sums
    that cancel)."""
    inputs, scalars, outputs, launch = run_case(name, kernel)
    expected = reference({k: v.copy() for k, v in inputs.items()}, scalars)
    assert expected, "the reference computes nothing"
    for buf, want in expected.items():
        got = outputs[buf]
        want = np.asarray(want).astype(got.dtype)
        allowed = (ulp or {}).get(buf, 0)
        bad = differences(buf, got, want, allowed)
        if atol:
            bad = [(i, a, b) for i, a, b in bad if not abs(float(a) - float(b)) <= atol]
        assert not bad, (f"{name}:{kernel} buffer '{buf}': {len(bad)} differences beyond {allowed} ulp, first "
                         + ", ".join(f"[{i}] emulator {a!r} numpy {b!r}" for i, a, b in bad[:5]))


# ---- C arithmetic in Python ------------------------------------------------------------------
def s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def s64(x: int) -> int:
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def s8(x: int) -> int:
    x &= 0xFF
    return x - 256 if x >> 7 else x


def s16(x: int) -> int:
    x &= 0xFFFF
    return x - 65536 if x >> 15 else x


def cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def cmod(a: int, b: int) -> int:
    return a - b * cdiv(a, b)


def f32(x) -> np.float32:
    return np.float32(x)


def fma32(a, b, c):
    """a*b+c rounded once to float32, through float64 (exact product; the sum may round
    twice, hence the 1-ulp tolerance on fused results)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(np.float32)


def popc(x: int) -> int:
    return bin(x & M64).count("1")


def clz32(x: int) -> int:
    x &= M32
    return 32 - x.bit_length()


def brev32(x: int) -> int:
    return int(f"{x & M32:032b}"[::-1], 2)


def ffs(x: int, bits: int = 32) -> int:
    x &= (1 << bits) - 1
    return (x & -x).bit_length() if x else 0


# ---- the seed and the first kernels ---------------------------------------------------------------
@needs_nvcc
def test_vadd_seed_launch():
    from ptxc.emu.device import Device
    dev = Device()
    module = dev.load(nvcc_cubin("vadd"), "vadd.cubin")
    n = 1 << 20
    rng = np.random.default_rng(1)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    da, db, dc = (dev.malloc(4 * n, name) for name in "abc")
    dev.memory.write(da, a)
    dev.memory.write(db, b)
    dev.launch(module.kernel("vadd"), 4096, 256, [da, db, dc, n])
    assert np.array_equal(dev.memory.view(dc, np.float32, n), a + b)


@needs_nvcc
def test_saxpy():
    def ref(i, s):
        y = i["y"].copy()
        y[:s["n"]] = fma32(np.float32(s["a"]), i["x"][:s["n"]], i["y"][:s["n"]])
        return {"y": y}
    check("saxpy", "saxpy", ref, {"y": 1})


@needs_nvcc
def test_reduce_shared():
    def ref(i, s):
        blocks = i["in"].reshape(64, 256).copy()
        width = 256
        while width > 1:
            width //= 2
            blocks[:, :width] = blocks[:, :width] + blocks[:, width:2 * width]
        return {"out": blocks[:, 0]}
    check("reduce_shared", "block_reduce", ref)


@needs_nvcc
def test_matmul_naive():
    def ref(i, s):
        n = s["N"]
        A, B = i["A"].reshape(n, n), i["B"].reshape(n, n)
        acc = np.zeros((n, n), np.float32)
        for k in range(n):
            acc = fma32(A[:, k:k + 1], B[k:k + 1, :], acc)
        return {"C": acc.reshape(-1)}
    check("matmul_naive", "matmul", ref, {"C": 4})


@needs_nvcc
def test_histogram():
    check("histogram", "histogram", lambda i, s: {"bins": np.bincount(i["data"], minlength=256)})


@needs_nvcc
def test_stencil_1d():
    def ref(i, s):
        x, n = i["in"], s["n"]
        out = i["out"].copy()
        out[1:n - 1] = (f32(0.25) * x[:n - 2] + f32(0.5) * x[1:n - 1]) + f32(0.25) * x[2:n]
        out[0], out[n - 1] = x[0], x[n - 1]
        return {"out": out}
    check("stencil_1d", "stencil", ref)


@needs_nvcc
def test_clamp_math():
    def ref(i, s):
        v = i["in"]
        r = np.maximum(v, f32(0))
        m = np.minimum(np.maximum(v, f32(s["lo"])), f32(s["hi"]))
        return {"out": fma32(m, np.sqrt(np.abs(v)), r) + v}
    check("clamp_math", "clamp_math", ref, {"out": 1})


@needs_nvcc
def test_collatz():
    def ref(i, s):
        out = {k: i[k].copy() for k in ("steps", "wide", "bytes", "flags", "halves")}
        for k, start in enumerate(i["start"].tolist()):
            x, count = start, 0
            while x != 1:
                x = x // 2 if x % 2 == 0 else 3 * x + 1
                count += 1
                if count >= 500:
                    break
            odd = sum(b for b in range(16) if (start >> b) & 1)
            kind = {0: 10, 1: 20, 3: -5}.get(count % 4, 0)
            steps = min(max(count, 0), 255) + kind * 12 - (1 if count > 50 else 0)
            out["steps"][k] = steps
            out["wide"][k] = s64((count << 33) | odd)
            out["bytes"][k] = (s8(start) + 1) & 0xFF
            out["flags"][k] = 1 if count > 100 and not (odd & 1) else 0
            out["halves"][k] = count * 0.5 + float(f32(odd) / f32(4))
        return out
    check("collatz", "collatz", ref)


@needs_nvcc
def test_control_flow():
    def classify(x):
        return -2 if x < -20 else -1 if x < 0 else 0 if x == 0 else (2 if x > 20 else 1)

    def ref(i, s):
        v, n = i["v"].tolist(), s["n"]
        out = i["out"].copy()
        for k, x in enumerate(v):
            hits = 1 if x > 0 else 0
            both = x > 0
            either = x < 10
            if not either:
                hits += 1
                either = hits > 5
            pick = v[(k + 1) % n] if x > 0 else -1
            acc = {-2: 110, -1: 10, 0: 7, 2: -2, 1: 1}[classify(x)]
            loops = 0
            for a in range(8):
                if a == cmod(x, 5):
                    continue
                for b in range(a, 8, 2):
                    if b * a > 20:
                        break
                    loops += b - a
            kk, steps = abs(x), 0
            while True:
                kk = kk // 2 + (kk & 1)
                steps += 1
                if not (kk > 1 and steps < 40):
                    break
            out[4 * k:4 * k + 4] = [hits * 4 + both * 2 + either, pick, acc * 1000 + loops, steps]
        return {"out": out}
    check("control_flow", "control_flow", ref)


@needs_nvcc
def test_arith_types():
    def ref(i, s):
        ints, longs = i["ints"].copy(), i["longs"].copy()
        floats, doubles = i["floats"].copy(), i["doubles"].copy()
        for k in range(s["n"]):
            x, y = int(i["a"][k]), int(i["b"][k])
            u = x & M32
            l = x * 100000
            sh = s16(x * 3)
            ch = int(i["c"][k])
            fx, dx = i["f"][k], float(i["d"][k])
            odd = x & 1
            o = [cdiv(x, y), cmod(x, y), cdiv(x, 8) + cmod(x, 4) + cdiv(x, -2), (u // 16 + u % 32),
                 s32(x << (y & 15)), x >> (y & 31), u >> (y & 31), s32(~x ^ (x | y) & (x - y)),
                 (x > y) + (x <= y) * 2 + (u < 7) * 4 + (x == -x) * 8 + (x != y) * 16,
                 x if x > 0 and y < 20 else -y, (not x) + (not odd) + (1 if odd or y > 25 else 0),
                 sh + ch * 2 + (ch & 0xFF), int(fx) * 1000 + int(dx * 1000.0),
                 min(x, y) + max(x, -y) + abs(x), x * 7 + y * -3 - 11, s16(x * 300) + s8(y * 11)]
            ints[16 * k:16 * k + 16] = [s32(v) for v in o]
            longs[4 * k:4 * k + 4] = [cdiv(l, 7) + cmod(l, 1000), u * y + (x << 20), l >> 3,
                                      ((l + 5000000000) & M64) // 3]
            g = [fx * fx + f32(0.5), fx / f32(3) - fx * f32(2), f32(x) / f32(4) + f32(u), max(fx, f32(0.25)),
                 (np.fmin(fx, f32(0.1)) + np.fmax(fx, f32(-0.1))) + abs(fx), f32(dx) + f32(l),
                 -fx + (f32(1) if odd else f32(2)), np.sqrt(abs(fx)) + f32(ch)]
            floats[8 * k:8 * k + 8] = g
            doubles[4 * k:4 * k + 4] = [float(Fraction(dx) * Fraction(dx) + Fraction(float(fx))),  # one DFMA
                                        dx / 7.0 - x, l * 0.5 + u, max(dx, 0.0) + math.sqrt(abs(dx))]
        return {"ints": ints, "longs": longs, "floats": floats, "doubles": doubles}
    check("arith_types", "arith_types", ref, {"floats": 1, "doubles": 1})


# ---- isa_bits ---------------------------------------------------------------------------------------
def byte_perm(x: int, y: int, sel: int) -> int:
    word = (y << 32) | x
    return sum(((word >> (8 * ((sel >> (4 * n)) & 7))) & 0xFF) << (8 * n) for n in range(4))


@needs_nvcc
def test_bit_tricks():
    def ref(i, s):
        out = i["out"].copy()
        for k in range(s["n"]):
            a, b = int(i["x"][k]), int(i["y"][k])
            fl = (((b << 32 | a) << (k & 31)) >> 32) & M32
            fr = ((b << 32 | a) >> 7) & M32
            frc = ((b << 32 | a) >> min(k, 32)) & M32
            o = [popc(a) + popc((a << 32) | b), clz32(a) + (32 + clz32(b) if b else 64), brev32(a),
                 byte_perm(a, b, 0x5140) + byte_perm(a, b, k & 0x7777), fl ^ fr ^ frc,
                 ffs(a) + ffs(b << 3, 64), (a & ~b) | (a ^ (b >> 3)) | ((a << 5) & 0xF0F0F0F0),
                 ((a >> (b & 31)) & 0x3FF) | ((s32(a) >> 28) << 12) | ((a * b) >> 32)]
            out[8 * k:8 * k + 8] = [v & M32 for v in o]
        return {"out": out}
    check("isa_bits", "bit_tricks", ref)


@needs_nvcc
def test_int_arith():
    def sext24(x):
        x &= 0xFFFFFF
        return x - (1 << 24) if x >> 23 else x

    def ref(i, s):
        out = i["out"].copy()
        for k in range(s["n"]):
            a, b = int(i["x"][k]), int(i["y"][k])
            ua, ub = a & M32, b & M32
            vabs = sum(abs(s8(a >> (8 * j)) - s8(b >> (8 * j))) << (8 * j) for j in range(4))
            o = [min(a, b) + max(a, 17), abs(a) - min(ua, ub), cdiv(a, b) + cmod(a, b),
                 ua // ub + ua % 10, ((a * b) >> 32) + sext24(a) * sext24(b) + a * 12345 + a * 8,
                 abs(a - b) + 3 + abs(ua - ub) + 1, (a << 3) + (a >> 2) + (ua >> 30) + (b * 3 - a),
                 vabs + ((a + b) >> 1) + ((a + b + 1) >> 1)]
            out[8 * k:8 * k + 8] = [s32(v) for v in o]
        return {"out": out}
    check("isa_bits", "int_arith", ref)


@needs_nvcc
def test_wide_arith():
    def ref(i, s):
        out = i["out"].copy()
        for k in range(s["n"]):
            a, b = int(i["x"][k]), int(i["y"][k])
            o = [a * b + (a >> 13) + (b << 7), ((a * b) >> 64) ^ ((s64(a) >> 5) & M64),
                 a // (b | 1) + a % 1000, (a - b if a < b else b - a) + (min(s64(a), s64(b)) & M64) + max(a, b)]
            out[4 * k:4 * k + 4] = [v & M64 for v in o]
        return {"out": out}
    check("isa_bits", "wide_arith", ref)


@needs_nvcc
def test_gray_code():
    def ref(i, s):
        g = np.arange(s["n"]) ^ (np.arange(s["n"]) >> 1)
        odd = np.array([popc(int(v)) & 1 for v in g])
        return {"out": g, "bits": np.where(odd == 1, 0x80 | (g & 0x7F), g & 0x7F)}
    check("isa_bits", "gray_code", ref)


# ---- isa_calls -------------------------------------------------------------------------------------
@needs_nvcc
def test_call_chain():
    def mix(a, b):
        return s32((a * 31) ^ (b + 7))

    def ref(i, s):
        x = [int(v) for v in i["in"]]
        out = i["out"].copy()
        for k in range(s["n"]):
            total = sum(x[:x[k] & 7])
            out[k] = mix(mix(x[k], k), min(max(total, -100), 100))
        return {"out": out}
    check("isa_calls", "call_chain", ref)


@needs_nvcc
def test_recursive_fib():
    fib = [0, 1]
    while len(fib) < 12:
        fib.append(fib[-1] + fib[-2])
    check("isa_calls", "recursive_fib", lambda i, s: {"out": [fib[t % 12] for t in range(32)]})


@needs_nvcc
def test_call_float():
    def ref(i, s):
        x = i["x"]
        c, sn = f32(math.cos(0.5)), f32(math.sin(0.5))
        poly = fma32(fma32(f32(2), x, f32(-1)), x, f32(0.5))
        return {"out": (poly + x * c) - x * sn}
    check("isa_calls", "call_float", ref, {"out": 4})


@needs_nvcc
def test_indirect_call():
    def ref(i, s):
        x = [int(v) for v in i["x"]]
        return {"out": [[x[k] + k, x[k] - k, x[k] * k][k % 3] for k in range(64)]}
    check("isa_calls", "indirect_call", ref)


# ---- isa_control -----------------------------------------------------------------------------------
@needs_nvcc
def test_control_collatz():
    def ref(i, s):
        out = i["steps"].copy()
        for k in range(s["n"]):
            v, n = int(i["in"][k]), 0
            while v != 1 and n < 1000:
                v = (3 * v + 1) & M32 if v & 1 else v >> 1
                n += 1
            out[k] = n
        return {"steps": out}
    check("isa_control", "collatz", ref)


@needs_nvcc
def test_classify():
    def ref(i, s):
        out = i["out"].copy()
        for k in range(s["n"]):
            a, b = int(i["x"][k]), int(i["y"][k])
            r = {0: a + b, 1: a - b, 2: a * b, 3: 1 if (a > 5 and b < 3) or a == b else -1}.get((a & 3) + (b > 0), 42)
            if (a > 0) != (b > 0) and (a ^ b) > 3:
                r += 1000
            out[k] = r
        return {"out": out}
    check("isa_control", "classify", ref)


@needs_nvcc
def test_search():
    def ref(i, s):
        n = s["n"]
        pos = i["pos"].copy()
        for k in range(128):
            row = i["hay"][k * n:(k + 1) * n].tolist()
            pos[k] = next((j for j, v in enumerate(row) if v >= 0 and v == i["needles"][k]), -1)
        return {"pos": pos}
    check("isa_control", "search", ref)


@needs_nvcc
def test_block_votes():
    def ref(i, s):
        x = i["x"].reshape(4, 128)
        return {"out": np.stack([(x > 0).sum(1), (x > -5).all(1), (x == 5).any(1), np.arange(4)], 1).reshape(-1)}
    check("isa_control", "block_votes", ref)


@needs_nvcc
def test_many_predicates():
    def ref(i, s):
        x = i["x"]
        out = i["out"].copy()
        for k in range(128):
            v = x[k]
            p = [v > f32((j - 4) * 0.25) for j in range(8)]
            r = 0
            for j in range(8):
                w = x[(k + j) & 127]
                if p[j] and w > 0:
                    r += 1 << j
                if p[(j + 3) & 7] != (w < f32(0.5)):
                    r ^= 0x100 << j
            out[k] = r
        return {"out": out}
    check("isa_control", "many_predicates", ref)


# ---- isa_double --------------------------------------------------------------------------------------
@needs_nvcc
def test_double_arith():
    def ref(i, s):
        a, b = i["x"], i["y"]
        cols = [a + b, a * b - 1.5, a / b, np.sqrt(np.abs(a)), (a * b + 0.25) + a * 3.0,
                np.fmin(a, b) + np.fmax(a, b) + 1.0 / (b + 2.0) + 1.0 / np.sqrt(np.abs(a) + 1.0)]
        return {"out": np.stack(cols, 1).reshape(-1)}
    # column 5 sums four terms that cancel: NVIDIA's rsqrt is within 1 ulp, not exact
    check("isa_double", "double_arith", ref, {"out": 4}, atol=1e-15)


@needs_nvcc
def test_double_convert():
    def ref(i, s):
        d = i["x"] * 1.0e5
        iv = i["i"].astype(np.int64)
        dout = np.stack([i["f"].astype(np.float64), iv.astype(np.float64),
                         (iv & M32).astype(np.float64) + iv.astype(np.float64) * 0.5], 1).reshape(-1)
        io = np.stack([np.trunc(d), np.trunc(np.abs(d)) + np.rint(d)], 1).reshape(-1)
        bits = d.view(np.int64)
        lo = np.trunc(d).astype(np.int64) + np.array([cmod(int(v), 7) for v in bits])
        return {"fo": d.astype(np.float32), "dout": dout, "io": io.astype(np.int64), "lo": lo}
    check("isa_double", "double_convert", ref)


@needs_nvcc
def test_double_compare():
    def ref(i, s):
        a, b = i["x"], i["y"]
        with np.errstate(all="ignore"):
            f = ((a < b) * 1 | (a >= 0.5) * 2 | np.isnan(a / b) * 4 | np.isinf(a * 1e308 * 10.0) * 8
                 | ((a != b) & (b <= 0.0)) * 16)
        return {"flags": f, "out": np.where(a > b, a, -b)}
    check("isa_double", "double_compare", ref)


@needs_nvcc
def test_horner():
    c = [1.0, -0.5, 0.333333333333, -0.25, 0.2, -0.1666666666, 0.142857142857, -0.125]

    def ref(i, s):
        t, r = i["x"], np.zeros_like(i["x"])
        for j in range(7, -1, -1):
            r = r * t + c[j]
        return {"out": r}
    check("isa_double", "horner", ref, {"out": 4})


# ---- isa_half ------------------------------------------------------------------------------------------
def h2f(bits) -> np.ndarray:
    return np.asarray(bits, np.uint16).view(np.float16).astype(np.float64)


def f2h(values) -> np.ndarray:
    return np.asarray(values, np.float64).astype(np.float16).view(np.uint16)


def same_half(got, want):
    """f16 results agree bit for bit, or both are NaN (the GPU's NaN is 0x7fff)."""
    got, want = np.asarray(got, np.uint16), np.asarray(want, np.uint16)
    nan = np.isnan(got.view(np.float16)) & np.isnan(want.view(np.float16))
    return (got == want) | nan


@needs_nvcc
def test_half_axpy():
    inputs, scalars, outputs, _ = run_case("isa_half", "half_axpy")
    # ptxas fuses mul.f16 + add.f16 into one HFMA2: a single rounding
    with np.errstate(all="ignore"):
        want = f2h(h2f(inputs["x"]) * 0.5 + h2f(inputs["y"]))
    assert same_half(outputs["out"], want).all()


@needs_nvcc
def test_half2_ops():
    inputs, scalars, outputs, _ = run_case("isa_half", "half2_ops")
    a, b = inputs["x"].view(np.uint16), inputs["y"].view(np.uint16)    # (lo, hi) pairs
    ha, hb = h2f(a), h2f(b)
    with np.errstate(all="ignore"):                                  # inf * 0, overflow to inf
        fma = f2h(ha * hb + 1.0)
        mx = np.where(np.isnan(ha), hb, np.where(np.isnan(hb), ha, np.maximum(ha, hb)))
        sub = f2h(ha * ha - mx)          # mul.f16x2 + sub.f16x2 fuse into one HFMA2
    got = outputs["out"].view(np.uint16).reshape(-1, 2, 2)            # [i][word][half]
    assert same_half(got[:, 0, :].reshape(-1), fma).all()
    assert same_half(got[:, 1, :].reshape(-1), sub).all()


@needs_nvcc
def test_half_convert():
    inputs, scalars, outputs, _ = run_case("isa_half", "half_convert")
    v = f2h((inputs["f"] * f32(3)).astype(np.float32))
    h = h2f(v).astype(np.float32)
    back = (h + (-h) * f32(0.25)) + np.where(h < 0, f32(1), f32(0)) + h2f(f2h(h2f(v) + 1.5)).astype(np.float32)
    assert same_half(outputs["h"], v).all()
    assert not differences("back", outputs["back"], back.astype(np.float32), 1)


# ---- isa_histogram ----------------------------------------------------------------------------------
@needs_nvcc
def test_shared_histogram():
    check("isa_histogram", "histogram", lambda i, s: {"bins": np.bincount(i["data"], minlength=256)})


@needs_nvcc
def test_global_histogram():
    check("isa_histogram", "global_histogram", lambda i, s: {"bins": np.bincount(i["data"] & 63, minlength=64)})


@needs_nvcc
def test_atomic_misc():
    def ref(i, s):
        v = i["data"].astype(np.int64)
        xor = 0
        for x in v.tolist():
            xor ^= x
        inc = 0
        for _ in range(len(v)):
            inc = 0 if inc >= 1000 else inc + 1
        stats = [max(0, v.max()), min(0, v.min()), 0, int(np.bitwise_or.reduce(v & 0x101)), s32(xor), inc,
                 -len(v), 42]
        blocks = v.reshape(8, 128)
        f = np.float32(0)
        for x in ((v & 15) * 0.5).astype(np.float32):
            f = f32(f + x)
        fs = [f, np.float32(0), np.float32(0), np.float32(0)]
        for b in range(8):
            fs[1] = f32(fs[1] + f32(max(-2147483647, blocks[b].max())))
            fs[2] = f32(fs[2] + f32(min(2147483647, blocks[b].min())))
        return {"stats": stats, "fstats": fs}
    check("isa_histogram", "atomic_misc", ref)


@needs_nvcc
def test_cas_max():
    check("isa_histogram", "cas_max", lambda i, s: {"result": [max(f32(-1000), i["data"].max())]})


@needs_nvcc
def test_generic_atomics():
    check("isa_histogram", "generic_atomics", lambda i, s: {"counters": [128, 32, 5, 0], "wide": [7, 768]})


# ---- isa_local -----------------------------------------------------------------------------------------
@needs_nvcc
def test_local_sort():
    check("isa_local", "local_sort", lambda i, s: {"out": np.sort(i["in"].reshape(-1, 16), axis=1).reshape(-1)})


@needs_nvcc
def test_local_hist():
    def ref(i, s):
        chunks = (i["in"].reshape(-1, 16) & 15).astype(np.int64)
        return {"out": np.stack([np.bincount(c, minlength=16) for c in chunks]).reshape(-1)}
    check("isa_local", "local_hist", ref)


@needs_nvcc
def test_local_wide():
    def ref(i, s):
        idx = i["idx"].tolist()
        out, lout = i["out"].copy(), i["lout"].copy()
        for k in range(128):
            d = [j * 0.5 + k for j in range(8)]
            l = [(j << 40) | k for j in range(8)]
            c = [s8(j - k) for j in range(8)]
            j = idx[k]
            d[j] *= 3.0
            l[(j + 1) & 7] -= 5
            c[(j + 2) & 7] = 100
            out[k] = d[idx[(k + 1) & 127]] + c[j]
            lout[k] = l[idx[(k + 2) & 127]]
        return {"out": out, "lout": lout}
    check("isa_local", "local_wide", ref)


# ---- isa_math -----------------------------------------------------------------------------------------
def libm32(values) -> np.ndarray:
    return np.asarray(values, np.float64).astype(np.float32)


@needs_nvcc
def test_float_math():
    def ref(i, s):
        a, b = i["x"].astype(np.float64), i["y"].astype(np.float64)
        fa, fb = i["x"], i["y"]
        with np.errstate(all="ignore"):
            cols = [libm32(a / b), np.sqrt(np.abs(fa)), libm32(np.exp(a)) + libm32(np.log(np.abs(fb) + f32(1))),
                    libm32(np.sin(a)) * libm32(np.cos(b)), libm32(1.0 / np.sqrt(np.abs(fb) + f32(0.25))),
                    ((np.fmin(fa, fb) - np.fmax(fa, fb)) + np.floor(fa * f32(10))) + np.ceil(fb * f32(3)),
                    (np.trunc(fa * f32(7)) + libm32(np.round(fb * f32(5) + 0.0))) + np.rint(fa * f32(2.5)),
                    ((libm32(np.power(np.abs(fa) + f32(0.5), b)) + libm32(np.exp2(b)))
                     + libm32(np.log2(np.abs(fa) + f32(2)))) + libm32(np.tanh(a))]
        # roundf rounds halves away from zero
        cols[6] = (np.trunc(fa * f32(7)) + np.copysign(np.floor(np.abs(fb * f32(5)) + f32(0.5)), fb * f32(5))) \
            + np.rint(fa * f32(2.5))
        return {"out": np.stack(cols, 1).reshape(-1)}
    check("isa_math", "float_math", ref, {"out": 8})


def round_f32(x: Fraction, mode: str) -> np.float32:
    """The float32 next to the exact value x: 'rn' nearest even, 'rz' toward zero,
    'rd' down, 'ru' up."""
    up, down = np.float32(np.inf), np.float32(-np.inf)
    lo = np.float32(float(x))
    while Fraction(float(lo)) > x:
        lo = np.nextafter(lo, down)
    while Fraction(float(np.nextafter(lo, up))) <= x:
        lo = np.nextafter(lo, up)
    hi = lo if Fraction(float(lo)) == x else np.nextafter(lo, up)
    if mode == "rd":
        return lo
    if mode == "ru":
        return hi
    if mode == "rz":
        return lo if x >= 0 else hi
    dl, dh = x - Fraction(float(lo)), Fraction(float(hi)) - x
    if dl != dh:
        return lo if dl < dh else hi
    return lo if int(lo.view(np.int32)) % 2 == 0 else hi


@needs_nvcc
def test_fast_math():
    def ref(i, s):
        a = i["x"].astype(np.float64)
        fa = i["x"]
        fx = [Fraction(float(v)) for v in fa]
        mul_rz = np.array([round_f32(v * 3, "rz") for v in fx], np.float32)
        add_rd = np.array([round_f32(v + Fraction(float(f32(0.1))), "rd") for v in fx], np.float32)
        fma_ru = np.array([round_f32(v * v + 1, "ru") for v in fx], np.float32)
        cols = [libm32(1.0 / (fa + f32(2)).astype(np.float64)) + libm32(np.exp(a)),
                libm32(np.sin(a)) + libm32(np.cos(a)) + libm32(np.log((fa + f32(2)).astype(np.float64))),
                np.clip(fa * f32(4), f32(0), f32(1)) + libm32(1.0 / (fa + f32(3)).astype(np.float64)),
                ((np.sqrt(fa + f32(1)) + mul_rz) + add_rd) + fma_ru]
        return {"out": np.stack(cols, 1).reshape(-1)}
    # __sinf/__cosf/__logf/__expf err by a few ulp of terms near 1 that the sums cancel
    check("isa_math", "fast_math", ref, {"out": 16}, atol=5e-7)


@needs_nvcc
def test_conversions():
    def ref(i, s):
        f = (i["x"] * f32(1000)).astype(np.float32)
        iv, uv = i["i"], i["u"]
        io = np.stack([np.trunc(f), np.trunc(np.abs(f)), np.rint(f), np.floor(f) + np.ceil(np.abs(f))], 1)
        fo = np.stack([iv.astype(np.float32), uv.astype(np.float32), np.zeros_like(f), np.zeros_like(f)], 1)
        for k in range(len(f)):
            fo[k, 2] = f32(_round_toward(int(iv[k]), 0)) + f32(_round_toward(int(uv[k]), -1))
            fo[k, 3] = f32(int(iv[k])) * f32(int(uv[k]))
        lo = np.stack([np.trunc(f), np.trunc(np.abs(f))], 1)
        return {"io": io.reshape(-1).astype(np.int64), "fo": fo.reshape(-1), "lo": lo.reshape(-1).astype(np.int64)}
    check("isa_math", "conversions", ref)


def _round_toward(n: int, direction: int) -> np.float32:
    """The float32 next to integer n toward zero (direction 0) or -inf (-1)."""
    r = np.float32(n)
    if int(r) == n:
        return r
    if direction == 0:
        wrong = abs(int(r)) > abs(n)
    else:
        wrong = int(r) > n
    return np.nextafter(r, np.float32(0) if direction == 0 else np.float32(-np.inf)) if wrong else r


@needs_nvcc
def test_compare_select():
    def ref(i, s):
        a, b = i["x"], i["y"]
        out = np.stack([np.where(a > b, a * f32(2), b - f32(1)),
                        np.where((a >= 0) & (b < f32(0.5)), -a, np.abs(b))], 1).reshape(-1)
        with np.errstate(all="ignore"):
            f = (np.isnan(a / b) * 1 | np.isinf(f32(1) / a) * 2 | np.signbit(a) * 4 | (a != b) * 8
                 | ((a <= b) | (b > f32(0.75))) * 16)
        return {"out": out, "flags": f}
    check("isa_math", "compare_select", ref)


@needs_nvcc
def test_math_saxpy():
    def ref(i, s):
        return {"y": fma32(f32(s["a"]), i["x"], i["y"])}
    check("isa_math", "saxpy", ref, {"y": 1})


# ---- isa_matmul ----------------------------------------------------------------------------------------
@needs_nvcc
def test_sgemm_tiled():
    def ref(i, s):
        n = s["n"]
        A, B = i["a"].reshape(n, n), i["b"].reshape(n, n)
        acc = np.zeros((n, n), np.float32)
        for k in range(n):
            acc = fma32(A[:, k:k + 1], B[k:k + 1, :], acc)
        return {"c": acc.reshape(-1)}
    check("isa_matmul", "sgemm_tiled", ref, {"c": 8})


@needs_nvcc
def test_sgemm_vec4():
    def ref(i, s):
        n = s["n"]
        A, B = i["a"].reshape(n, n), i["b"].reshape(n, n)
        acc = np.zeros((n, n), np.float32)
        for k in range(n):
            acc = fma32(A[:, k:k + 1], B[k:k + 1, :], acc)
        c = fma32(f32(s["alpha"]), acc, f32(s["beta"]) * i["c"].reshape(n, n))
        # only columns 16*bx .. 16*bx+15 of threads x < 4 are written: all of them here
        return {"c": c.reshape(-1)}
    check("isa_matmul", "sgemm_vec4", ref, {"c": 8})


@needs_nvcc
def test_dgemm_naive():
    def ref(i, s):
        n = s["n"]
        A, B = i["a"].reshape(n, n), i["b"].reshape(n, n)
        return {"c": (2.0 * (A @ B) - 0.5 * i["c"].reshape(n, n)).reshape(-1)}
    check("isa_matmul", "dgemm_naive", ref, {"c": 64})


@needs_nvcc
def test_transpose():
    check("isa_matmul", "transpose", lambda i, s: {"out": i["in"].reshape(128, 128).T.reshape(-1)})


# ---- isa_memory -----------------------------------------------------------------------------------------
@needs_nvcc
def test_widths():
    def ref(i, s):
        v2 = i["v2"].astype(np.int64).reshape(-1, 2)
        v4 = i["v4"].astype(np.int64).reshape(-1, 4)
        cols = [i["b"], i["ub"], i["s"], i["us"], i["w"], i["l"], v2[:, 0] * v2[:, 1], v4.sum(1)]
        return {"out": np.stack([np.asarray(c, np.int64)[:128] for c in cols], 1).reshape(-1)}
    check("isa_memory", "widths", ref)


@needs_nvcc
def test_store_widths():
    def ref(i, s):
        v = i["in"].astype(np.int64)
        k = np.arange(128)
        return {"b": v & 0xFF, "s": (v >> 3) & 0xFFFF, "l": v * 3,
                "v2": np.stack([v.astype(np.float32), np.ones(128, np.float32)], 1).reshape(-1),
                "v4": np.stack([np.full(128, 0.5), k, np.full(128, -1.0), v & 7], 1).astype(np.float32).reshape(-1),
                "d2": np.stack([v.astype(np.float64), np.full(128, 0.25)], 1).reshape(-1)}
    check("isa_memory", "store_widths", ref)


@needs_nvcc
def test_cache_hints():
    def ref(i, s):
        x, n = i["in"], s["n"]
        k = np.arange(n)
        q = i["in4"].reshape(-1, 4)
        a = (x[k] + x[(k + 1) % n]) + x[(k + 2) % n]
        b = (x[(k + 3) % n] + x[(k + 4) % n]) + x[(k + 5) % n]
        c = ((q[k, 0] + q[k, 1]) + q[k, 2]) + q[k, 3]
        d = q[(k + 7) % n, 0] * q[(k + 7) % n, 3]
        return {"out": np.stack([a, b, c, d], 1).reshape(-1)}
    check("isa_memory", "cache_hints", ref)


@needs_nvcc
def test_shared_widths():
    def ref(i, s):
        out = i["out"].copy()
        x = [int(v) for v in i["in"]]
        for k in range(128):
            blk, t = divmod(k, 64)
            u = 63 - t
            vu = x[blk * 64 + u]
            out[4 * k:4 * k + 4] = [s8(vu) + (vu & 0xFFFF), s32(vu + x[blk * 64 + ((u + 1) & 63)]), vu << 20,
                                    s32(vu + (vu + 1) * (vu + 2) - (vu + 3))]
        return {"out": out}
    check("isa_memory", "shared_widths", ref)


@needs_nvcc
def test_constant_table():
    # __constant__ tables the launch never fills hold zeros
    check("isa_memory", "constant_table", lambda i, s: {"out": np.zeros(256, np.float32)})


@needs_nvcc
def test_fences():
    check("isa_memory", "fences", lambda i, s: {"data": 3 * np.arange(128), "flag": [1, 1, 1, 1],
                                                 "out": 3 * np.arange(128) + 1})


# ---- isa_reduce ------------------------------------------------------------------------------------------
@needs_nvcc
def test_block_sum():
    def ref(i, s):
        x, n = i["in"], s["n"]
        out = i["out"].copy()
        for b in range(64):
            idx = b * 512 + np.arange(256)
            v = np.where(idx < n, x[np.minimum(idx, n - 1)], f32(0)).astype(np.float32)
            v = np.where(idx + 256 < n, v + x[np.minimum(idx + 256, n - 1)], v).astype(np.float32)
            for width in (128, 64):
                v[:width] = v[:width] + v[width:2 * width]
            for off in (32, 16, 8, 4, 2, 1):
                v[:32] = v[:32] + v[off:off + 32]
            out[b] = v[0]
        return {"out": out}
    check("isa_reduce", "block_sum", ref)


def warp_reduce(values: np.ndarray) -> np.float32:
    v = values.astype(np.float32).copy()
    for off in (16, 8, 4, 2, 1):
        src = np.concatenate([v[off:], v[32 - off:]])       # lanes past the end read their own value
        v = v + src
    return v[0]


@needs_nvcc
def test_warp_sum():
    def ref(i, s):
        x = i["in"]
        total = np.float32(0)
        for b in range(32):
            block = x[b * 128:(b + 1) * 128]
            partial = [warp_reduce(block[w * 32:(w + 1) * 32]) for w in range(4)]
            v = warp_reduce(np.array(partial + [0] * 28, np.float32))
            total = f32(total + v)
        return {"total": [total]}
    check("isa_reduce", "warp_sum", ref)


@needs_nvcc
def test_warp_scan():
    check("isa_reduce", "warp_scan",
          lambda i, s: {"out": np.cumsum(i["in"].reshape(-1, 32), axis=1).reshape(-1)})


@needs_nvcc
def test_int_sum():
    check("isa_reduce", "int_sum", lambda i, s: {"total": [int(i["in"].astype(np.int64).sum())]})


@needs_nvcc
def test_dot():
    def ref(i, s):
        t = (i["a"] * i["b"]).reshape(32, 256)
        width = 256
        while width > 1:
            width //= 2
            t[:, :width] = t[:, :width] + t[:, width:2 * width]
        return {"partial": t[:, 0]}
    check("isa_reduce", "dot", ref)


# ---- isa_uniform ---------------------------------------------------------------------------------------------
@needs_nvcc
def test_block_lookup():
    def ref(i, s):
        row = i["weights"][np.arange(128) & 63] * np.arange(128, dtype=np.float32)
        acc = np.float32(0)
        for b in range(8):
            acc = f32(acc + f32(row[b & 127] + f32(0)))
        return {"out": np.full(128, acc, np.float32)}
    check("isa_uniform", "block_lookup", ref)


@needs_nvcc
def test_mask_gather():
    def ref(i, s):
        m, data = i["masks"].astype(np.int64), i["data"].reshape(8, 64)
        return {"out": sum(np.where((m >> k) & 1, data[k], 0) for k in range(8))}
    check("isa_uniform", "mask_gather", ref)


@needs_nvcc
def test_generic_cas():
    check("isa_uniform", "generic_cas", lambda i, s: {"g": [s["v"], s["v"], s["v"], 0]})


# ---- isa_warp --------------------------------------------------------------------------------------------------
@needs_nvcc
def test_shuffles():
    def ref(i, s):
        v = i["in"].reshape(-1, 32)
        lane = np.arange(32)
        up = np.where(lane % 16 >= 2, lane - 2, lane)
        down = np.where(lane % 8 + 1 < 8, lane + 1, lane)
        src = i["in"].reshape(-1, 32) & 31
        out = np.stack([v[:, [3] * 32], v[:, lane ^ 5], v[:, up],
                        v[:, down] + np.take_along_axis(v, src, 1)], 2).reshape(-1)
        fout = i["fin"].reshape(-1, 32)[:, lane ^ 16].reshape(-1) * f32(2)
        dout = i["din"].reshape(-1, 32)[:, (lane + 1) & 31].reshape(-1)
        return {"out": out, "fout": fout, "dout": dout}
    check("isa_warp", "shuffles", ref)


@needs_nvcc
def test_votes():
    def ref(i, s):
        v = i["in"].reshape(-1, 32).astype(np.int64)
        lane = np.arange(32)
        ballot = lambda m: (m.astype(np.int64) << lane).sum(1, keepdims=True)   # noqa: E731
        b_pos = ballot(v > 0)
        allany = (v >= -3).all(1, keepdims=True) * 1 + 2 * (v == 3).any(1, keepdims=True)
        uni = ((v != 0) == (v[:, :1] != 0)).all(1, keepdims=True)     # __uni_sync votes on v != 0
        odd = np.array([[popc(int(x))] for x in ballot((v & 1) == 1)[:, 0]])
        cols = [np.broadcast_to(b_pos, v.shape), np.broadcast_to(allany, v.shape),
                np.broadcast_to((1 << lane) - 1, v.shape), np.broadcast_to(odd + uni, v.shape)]
        return {"out": np.stack(cols, 2).reshape(-1)}
    check("isa_warp", "votes", ref)


@needs_nvcc
def test_matches():
    def ref(i, s):
        v = i["in"].reshape(-1, 32).astype(np.int64)
        lane = np.arange(32)
        same = np.array([[((row == row[l]).astype(np.int64) << lane).sum() for l in range(32)] for row in v])
        return {"out": np.stack([same, np.zeros_like(same)], 2).reshape(-1)}
    check("isa_warp", "matches", ref)


@needs_nvcc
def test_warp_reduce_ops():
    def ref(i, s):
        v = i["in"].reshape(-1, 32).astype(np.int64)
        return {"out": np.stack([v.sum(1) & M32, v.max(1), np.bitwise_or.reduce(v, 1), (v - 500).min(1) & M32],
                                1).reshape(-1)}
    check("isa_warp", "warp_reduce_ops", ref)


@needs_nvcc
def test_divergent_sync():
    def ref(i, s):
        v = i["in"].reshape(-1, 32).astype(np.int64)
        out = v.copy()
        for w in range(len(v)):
            odd = [l for l in range(32) if v[w, l] & 1]
            for l in range(32):
                out[w, l] = v[w, l] + v[w, odd[0]] if v[w, l] & 1 else v[w, l] - 1
        return {"out": out.reshape(-1)}
    check("isa_warp", "divergent_sync", ref)
