"""Front-end testsuite kernels (fe_scan .. fe_warp_vote), compiled by nvcc, run on the
emulator with their `// LAUNCH:` inputs, against an independent NumPy (or plain Python)
computation of what the C source means.

Integers compare exactly.  Floats compare exactly too where the reference can follow the
kernel's operation order: where nvcc contracts a*b+c into one FFMA (read off the SASS and
named in a comment), the reference rounds a*b+c once with `ffma` below, exactly.  Only
expf (fe_softmax), which rests on MUFU.EX2, gets a tolerance in ulp.
"""
from __future__ import annotations

import numpy as np
import pytest

from test_emu_kernels import M32, check, f32, launches_of, libm32, needs_nvcc, nvcc_cubin, popc, s32
from ptxc.launch import run_launches

pytestmark = pytest.mark.oracle

LANE = np.arange(32)


def ffma(a, b, c) -> np.ndarray:
    """fmaf(a, b, c): a*b+c rounded once to float32, exactly.  The product of two floats is
    exact in float64; the sum is rounded to float64 to odd (TwoSum gives the error, and an
    inexact even result moves to its odd neighbour on the error's side), and a round-to-odd
    double (53 >= 24 + 2 bits) rounds to the correct float32."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, np.float32).astype(np.float64) for v in (a, b, c)))
    p = a * b
    s = p + c
    bp = s - p
    err = (p - (s - bp)) + (c - bp)
    even = (np.atleast_1d(s).view(np.int64) & 1).reshape(s.shape) == 0
    toward = np.where(err > 0, np.inf, -np.inf)
    s = np.where((err != 0) & even, np.nextafter(s, toward), s)
    return s.astype(np.float32)


def tree_sum(rows: np.ndarray) -> np.ndarray:
    """Shared-memory tree reduction along axis 1: red[t] += red[t + s] for s = width/2 .. 1."""
    v = rows.astype(np.float32).copy()
    width = v.shape[1]
    while width > 1:
        width //= 2
        v[:, :width] = v[:, :width] + v[:, width:2 * width]
    return v[:, 0]


# ---- fe_scan -------------------------------------------------------------------------------------
def block_offsets(sums: np.ndarray, blocks: int) -> np.ndarray:
    """add_offsets: block b adds sums[0] + ... + sums[b-1] (int arithmetic, wrapping)."""
    return np.array([s32(int(sums[:b].astype(np.int64).sum())) for b in range(blocks)], np.int64)


@needs_nvcc
def test_scan_block_scan():
    def ref(i, s):
        blocks = i["in"].astype(np.int64).reshape(4, 256)
        scan = np.cumsum(blocks, axis=1)                 # Hillis-Steele gives the inclusive scan
        return {"out": scan.reshape(-1), "sums": scan[:, -1]}
    check("fe_scan", "block_scan", ref)


@needs_nvcc
def test_scan_add_offsets():
    # alone, from fresh buffers: out and sums are the launch line's zeros
    def ref(i, s):
        out = i["out"].astype(np.int64).reshape(4, 256)
        return {"out": (out + block_offsets(i["sums"], 4)[:, None]).reshape(-1)}
    check("fe_scan", "add_offsets", ref)


@needs_nvcc
def test_scan_both_launches():
    # the file's own sequence: out and sums (same name, type, length and initializer) flow
    # from block_scan into add_offsets, which makes the whole array's inclusive scan
    source, launches = launches_of("fe_scan")
    run = run_launches(nvcc_cubin("fe_scan"), launches, source, "fe_scan.cu")
    x = run.initial["in"].astype(np.int64)
    assert np.array_equal(run.buffers["out"], np.cumsum(x))
    assert np.array_equal(run.buffers["sums"], x.reshape(4, 256).sum(1))


# ---- fe_shared_dynamic ---------------------------------------------------------------------------
@needs_nvcc
def test_shared_dynamic():
    def ref(i, s):
        vals = i["in"].reshape(8, 128)
        keys = i["keys"].reshape(8, 128)
        left = np.roll(np.arange(128), 1)                # t - 1, and 127 for t = 0
        step = np.where(keys > keys[:, left], f32(1), f32(-1)).astype(np.float32)
        return {"out": (vals[:, left] + step).reshape(-1)}
    check("fe_shared_dynamic", "dyn_shared", ref)


# ---- fe_shared_static ----------------------------------------------------------------------------
@needs_nvcc
def test_shared_static_transpose():
    check("fe_shared_static", "transpose", lambda i, s: {"out": i["in"].reshape(64, 64).T.reshape(-1)})


@needs_nvcc
def test_shared_static_structs():
    def ref(i, s):
        x = i["in"].reshape(2, 64)
        out = np.empty_like(x)
        for b in range(2):
            total = f32(0)
            for k in range(64):                          # thread 0's sequential sum
                total = f32(total + x[b, k])
            # items[items[t].idx] = items[63 - t]; v * 2 is exact, so FFMA or not is the same
            out[b] = x[b, ::-1] * f32(2) + total
        return {"out": out.reshape(-1)}
    check("fe_shared_static", "shared_structs", ref)


# ---- fe_softmax ----------------------------------------------------------------------------------
@needs_nvcc
def test_softmax():
    def ref(i, s):
        rows = i["in"].reshape(16, 256) * f32(8)        # times 8: exact
        m = rows.max(axis=1, keepdims=True)               # fmaxf tree: the row's maximum
        e = libm32(np.exp((rows - m).astype(np.float64)))  # x*8 - m is exact (FFMA or not)
        per_thread = e[:, :128] + e[:, 128:]              # 0 + e[t], then + e[t + 128]
        total = tree_sum(per_thread)
        return {"out": (e / total[:, None]).reshape(-1)}
    # expf is libdevice's 2^k * MUFU.EX2(r), not the correctly rounded exp used here: about
    # 2 ulp documented for EX2; the errors reach the row sums too (2 ulp is also what the
    # H200's own results differ from this reference by)
    check("fe_softmax", "softmax", ref, {"out": 2})


# ---- fe_struct_global ----------------------------------------------------------------------------
@needs_nvcc
def test_struct_global():
    # Racy by design: thread i reads particles[(i+1) % n].y, which thread i+1 updates.  This
    # reproduces the emulator's documented order (docs/emulator.md): blocks in order, warps
    # in order, each warp to completion, lanes in step.  The SASS stores particle i's x, y
    # before loading the neighbour's y (they may alias), so a thread sees its neighbour
    # updated when the neighbour's warp is its own or an earlier one: stale only for
    # i = 31, 63, 95, whose neighbour starts the next warp; i = 127 sees particle 0 updated.
    # Everything else (particles, out x/y/z) is race-free.  (On the H200 those three threads
    # saw their neighbour updated instead: the source guarantees neither.)
    def ref(i, s):
        n = s["n"]
        p = i["particles"].reshape(n, 4)
        x, y, z, w = p.T
        new = p.copy()
        new[:, 0] = ffma(w, f32(0.25), x)                # p->x += p->w * dt  (FFMA; w*0.25 is exact)
        new[:, 1] = ffma(w, f32(-0.25), y)               # (*p).y -= p->w * dt
        out = np.empty_like(p)
        out[:, 0], out[:, 1], out[:, 2] = x, y, x * y
        nb = (np.arange(n) + 1) % n
        seen_y = np.where(nb // 32 <= np.arange(n) // 32, new[nb, 1], y[nb])
        out[:, 3] = new[:, 0] + seen_y
        return {"particles": new.reshape(-1), "out": out.reshape(-1)}
    check("fe_struct_global", "struct_global", ref)


# ---- fe_struct_local -----------------------------------------------------------------------------
@needs_nvcc
def test_struct_local():
    def ref(i, s):
        n = s["n"]
        idx = np.arange(n)
        pos = i["in"].reshape(n, 2)
        px, py = pos.T
        vx, vy = px * f32(0.5), py * f32(0.5)            # b.vel = c.vel = scale(pos, 0.5)
        cx, cy = px + vx, py + vy                        # c.pos = add(c.pos, c.vel)
        mass_b = (idx & 3).astype(np.float32) + f32(2)
        mass_c = mass_b + f32(1)
        # energy(v) = 0.5 * m * (vx*vx + vy*vy): nvcc makes the speed FFMA(vx, vx, vy*vy) and
        # energy(b) + energy(c) one more FFMA(0.5*m_b, speed, energy(c))
        speed = ffma(vx, vx, vy * vy)
        e_c = (f32(0.5) * mass_c) * speed
        energies = ffma(f32(0.5) * mass_b, speed, e_c)
        sx = (f32(0) + f32(1)) + px + f32(0)             # pts = {1,2}, {b.pos.x, c.pos.y}, {0,-1}
        sy = (f32(0) + f32(2)) + cy + f32(-1)
        col2 = (cx - px) + f32(0)                        # + (float)(c.id - b.id)
        col3 = vy + vy * f32(-1)                         # add(b.vel, scale(c.vel, -1)).y
        return {"out": np.stack([energies, sx * sy, col2, col3], 1).reshape(-1)}
    check("fe_struct_local", "struct_local", ref)


# ---- fe_switch -----------------------------------------------------------------------------------
def switch_value(x: int) -> int:
    if x == 0:
        return 100
    if x in (1, 2):
        return 200 + 30                                  # falls into case 3
    if x == 3:
        return 30
    if x == 15:
        return 1500
    if x == 19:
        return 2 * x + 1
    if x == 7:
        return 7
    return -1 + 7                                        # default falls into case 7


def switch_loop(x: int) -> int:
    acc = 0
    for k in range(8):
        sel = (x + k) % 4                                # x + k >= 0: C's % agrees
        if sel == 0:
            acc += 1
        elif sel == 1:
            acc += 10
            continue                                     # skips acc *= 2
        elif sel == 2:
            acc += 100 if k & 1 == 0 else 1000
        else:
            acc -= 1
        acc = s32(acc * 2)
    return acc


@needs_nvcc
def test_switch():
    def ref(i, s):
        kinds = {ord("a"): 1, ord("b"): 2, ord("e"): 5}
        out = []
        for x, c in zip(i["v"].tolist(), i["c"].tolist()):
            out += [switch_value(x), switch_loop(x), kinds.get(c, 0)]
        return {"out": np.array(out)}
    check("fe_switch", "switches", ref)


# ---- fe_typedef_enum -----------------------------------------------------------------------------
@needs_nvcc
def test_typedef_enum():
    ADD, SUB, MUL, MAX, MIN = 0, 1, 5, 6, 10

    def ref(i, s):
        op = np.array([ADD, SUB, MUL, MAX, MIN])[i["ops"]]
        a, b = i["a"], i["b"]
        v = np.select([op == ADD, op == SUB, op == MUL, op == MAX],
                      [a + b, a - b, a * b, np.where(a > b, a, b)], np.where(a < b, a, b)).astype(np.float32)
        if s["mode"] == 2:                               # SQUARE
            v = v * v
        v = np.where(v < f32(-0.5), f32(-0.5), np.where(v > f32(0.5), f32(0.5), v)).astype(np.float32)
        # v + (real)op * 0.01f is one FFMA in nvcc's SASS; then + (float)(MIN - MAX) = 4
        return {"out": ffma(op.astype(np.float32), f32(0.01), v) + f32(MIN - MAX)}
    check("fe_typedef_enum", "typedef_enum", ref)


# ---- fe_unroll -----------------------------------------------------------------------------------
@needs_nvcc
def test_unroll():
    def ref(i, s):
        n, m = s["n"], s["m"]
        rows = i["in"].reshape(-1, 16)[:n]
        coef = i["coef"]
        dot = np.zeros(n, np.float32)
        for k in range(4):                               # dot += row[k] * coef[k]: FFMA chain
            dot = ffma(rows[:, k], coef[k], dot)
        poly = np.zeros(n, np.float32)
        for k in range(15, -1, -1):                      # poly * 0.5 is exact: FFMA or not
            poly = poly * f32(0.5) + rows[:, k]
        bits = np.array([popc(t & 0xFF) for t in range(n)], np.float32)
        tail = np.zeros(n, np.float32)
        for k in range(m):                               # tail += row[k] * (float)k: FFMA chain
            tail = ffma(rows[:, k], f32(k), tail)
        stepped = np.zeros(n, np.float32)
        for k in (1, 2, 4, 8):
            stepped = stepped + rows[:, k]
        return {"out": np.stack([dot, poly, bits + tail, stepped], 1).reshape(-1)}
    check("fe_unroll", "unroll", ref)


# ---- fe_vector_types -----------------------------------------------------------------------------
@needs_nvcc
def test_vector_types():
    def ref(i, s):
        n = s["n"]
        v = i["a"].reshape(-1, 4)[:n]
        w = v[(np.arange(n) + 1) % n]
        # lerp a + t*(b - a) with t = 0.25: t*(b - a) is exact, so FFMA or not is the same
        r = v + f32(0.25) * (w - v)
        r[:, 3] = v[:, 0] * w[:, 1]
        q = i["p"].astype(np.int64).reshape(-1, 2)[:n]
        o2 = np.stack([q[:, 1] * 2, q[:, 0] - q[:, 1]], 1)      # small: no overflow
        o3 = np.stack([v[:, 2] + w[:, 2], q[:, 0].astype(np.float32), r[:, 2]], 1)
        return {"out": r.reshape(-1), "o2": o2.reshape(-1), "o3": o3.reshape(-1)}
    check("fe_vector_types", "vector_types", ref)


# ---- fe_warp_shuffle -----------------------------------------------------------------------------
def shfl_idx(v, src, width=32):
    """__shfl_sync(v, src, width) per warp row: lane reads (lane & ~(width-1)) + src % width."""
    return v[:, (LANE & ~(width - 1)) + (np.asarray(src) % width)]


def shfl_up(v, delta, width=32):
    return v[:, np.where(LANE % width >= delta, LANE - delta, LANE)]


def shfl_down(v, delta, width=32):
    return v[:, np.where(LANE % width + delta < width, LANE + delta, LANE)]


def shfl_xor(v, mask, width=32):
    src = LANE ^ mask
    return v[:, np.where(src // width == LANE // width, src, LANE)]


@needs_nvcc
def test_warp_shuffle():
    def ref(i, s):
        f = i["fi"].reshape(-1, 32)
        d = i["di"].reshape(-1, 32)
        x = i["ii"].reshape(-1, 32)
        out = np.stack([shfl_idx(f, 0), shfl_idx(f, (LANE + 5) % 32), shfl_up(f, 1), shfl_down(f, 3),
                        shfl_xor(f, 16), shfl_idx(f, 2, 8), shfl_down(f, 1, 16), shfl_xor(f, 1, 4)], 2)
        dout = np.stack([shfl_idx(d, 31 - LANE), shfl_xor(d, 2)], 2)
        # __shfl_down_sync(x, lane & 7): each lane its own delta
        down7 = x[:, np.where(LANE + (LANE & 7) < 32, LANE + (LANE & 7), LANE)]
        total = f.copy()
        for off in (16, 8, 4, 2, 1):                     # butterfly: every lane the same sum
            total = total + shfl_xor(total, off)
        scaled = np.trunc(total * f32(1000)).astype(np.int32)   # (int) truncates
        iout = np.stack([shfl_idx(x, LANE // 2), shfl_up(x, 4, 16), down7, scaled], 2)
        return {"out": out.reshape(-1), "dout": dout.reshape(-1), "iout": iout.reshape(-1)}
    check("fe_warp_shuffle", "warp_shuffle", ref)


# ---- fe_warp_vote --------------------------------------------------------------------------------
def ballot(pred: np.ndarray) -> int:
    return int((pred.astype(np.int64) << LANE).sum())


@needs_nvcc
def test_warp_vote():
    def ref(i, s):
        v = i["v"].astype(np.int64)
        out = []
        for w in range(len(v) // 32):
            x = v[32 * w:32 * w + 32]
            pos = ballot(x > 0)
            any_big = int((x > 8).any())
            all_small = int((x < 10).all())
            odd = ballot(x & 1 == 1)                     # the lanes inside `if (x & 1)`
            mine = ballot(x == x[LANE ^ 1])
            # __any_sync(0x0000ffff, ...) and __all_sync(0xffff0000, ...) are called by all
            # 32 lanes, half of them outside the mask: undefined in CUDA.  nvcc emits a plain
            # VOTE.ANY / VOTE.ALL (no WARPSYNC) that votes over every active lane, as the
            # GPU does; that is what is reproduced here
            halves = int((x == 0).any()) * 2 + int((x != 0).all())
            for lane in range(32):
                active = odd if x[lane] & 1 else 0
                out += [pos, any_big, all_small, active, popc(pos) + popc(mine) * 100, halves]
        return {"out": np.array(out, np.int64) & M32}
    check("fe_warp_vote", "warp_vote", ref)
