"""PTX `set` (a comparison's result as a value) on every comparison and type shape, against
the PTX ISA's definition computed here with NumPy: per element the destination type's
"true" (u32/s32: all ones, 0xFFFF per half for a half-pair source; f32: 1.0; f16: 0x3C00;
bf16: 0x3F80) where the comparison holds, else 0; ordered comparisons are false and
unordered ones (equ, ltu, ...) true when an operand is NaN.  ptxas's code for `set` uses
FSET.BF / HSET2, which the instruction tables cannot decode yet, so its cubin cannot be
the reference; ptxas is asked to accept each PTX probe, nvdisasm to read ptxc's words.
"""
from __future__ import annotations

import numpy as np
import pytest

from ptxc import oracle
from ptxc.api import compile as ptxc_compile
from ptxc.emu.device import Device

pytestmark = pytest.mark.oracle

FLOAT_CMPS = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]
INT_CMPS = ["eq", "ne", "lt", "le", "gt", "ge"]
UINT_CMPS = ["eq", "ne", "lo", "ls", "hi", "hs"]
TRUE = {"u32": 0xFFFFFFFF, "s32": 0xFFFFFFFF, "f32": 0x3F800000, "f16": 0x3C00, "f16x2": 0x3C00,
        "bf16": 0x3F80, "bf16x2": 0x3F80}
N = 64

# (dtype, stype, comparisons, archs)
SHAPES = [
    ("u32", "f32", FLOAT_CMPS, ("sm_89", "sm_90")),
    ("f32", "f32", FLOAT_CMPS, ("sm_89", "sm_90")),
    ("s32", "f64", FLOAT_CMPS, ("sm_89", "sm_90")),
    ("u32", "f16x2", FLOAT_CMPS, ("sm_89", "sm_90")),
    ("f16x2", "f16x2", FLOAT_CMPS, ("sm_89", "sm_90")),
    ("u32", "f16", FLOAT_CMPS, ("sm_89", "sm_90")),
    ("bf16x2", "bf16x2", FLOAT_CMPS, ("sm_90",)),
    ("u32", "s32", INT_CMPS, ("sm_89", "sm_90")),
    ("u32", "u32", UINT_CMPS, ("sm_89", "sm_90")),
]
PARAMS = [(d, s, c, a) for d, s, c, archs in SHAPES for a in archs]


def probe(dtype: str, stype: str, cmps, arch: str) -> str:
    wide = stype == "f64"
    src = {"f32": "f32", "f64": "f64", "s32": "s32", "u32": "u32"}.get(stype, "b32")
    half = stype in ("f16", "bf16")
    dreg = "%h" if dtype in ("f16", "bf16") else "%r"
    lines = [f".version 8.8\n.target {arch}\n.address_size 64\n",
             ".visible .entry k(.param .u64 x, .param .u64 y, .param .u64 o)\n{",
             " .reg .b32 %r<40>; .reg .b16 %h<40>; .reg .f32 %f<4>; .reg .f64 %fd<4>; .reg .b64 %rd<12>;",
             " ld.param.u64 %rd1, [x]; ld.param.u64 %rd2, [y]; ld.param.u64 %rd3, [o];",
             " mov.u32 %r1, %tid.x; mul.wide.u32 %rd4, %r1, 8; mul.wide.u32 %rd5, %r1, 4;",
             " add.s64 %rd6, %rd1, %rd4; add.s64 %rd7, %rd2, %rd4; add.s64 %rd8, %rd3, %rd5;"]
    if wide:
        lines.append(" ld.global.f64 %fd1, [%rd6]; ld.global.f64 %fd2, [%rd7];")
        a, b = "%fd1", "%fd2"
    elif half:
        lines.append(" ld.global.u16 %h1, [%rd6]; ld.global.u16 %h2, [%rd7];")
        a, b = "%h1", "%h2"
    else:
        reg = "%f" if src == "f32" else "%r"
        lines.append(f" ld.global.{'f32' if src == 'f32' else 'u32'} {reg}2, [%rd6];"
                     f" ld.global.{'f32' if src == 'f32' else 'u32'} {reg}3, [%rd7];")
        a, b = f"{reg}2", f"{reg}3"
    for k, cmp in enumerate(cmps):
        d = f"{dreg}{10 + k}"
        lines.append(f" set.{cmp}.{dtype}.{stype} {d}, {a}, {b};")
        store = "u16" if dreg == "%h" else "u32"
        lines.append(f" st.global.{store} [%rd8+{4 * N * k}], {d};")
    lines.append(" ret;\n}\n")
    return "\n".join(lines)


def holds(cmp: str, a, b) -> np.ndarray:
    """The PTX comparison on NumPy values (floats: NaN-aware; ints: as given)."""
    if np.issubdtype(np.asarray(a).dtype, np.floating):
        unordered = np.isnan(a) | np.isnan(b)
        with np.errstate(invalid="ignore"):
            base = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}
        if cmp == "num":
            return ~unordered
        if cmp == "nan":
            return unordered
        if cmp.endswith("u") and cmp[:-1] in base:
            return base[cmp[:-1]] | unordered
        return base[cmp] & ~unordered
    ops = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
           "lo": a < b, "ls": a <= b, "hi": a > b, "hs": a >= b}
    return ops[cmp]


def expected(dtype: str, stype: str, cmp: str, xb: np.ndarray, yb: np.ndarray) -> np.ndarray:
    """uint32 per thread (a 16-bit result in the low half)."""
    lo32 = lambda v: (v & 0xFFFFFFFF).astype(np.uint32)
    if stype == "f64":
        return np.where(holds(cmp, xb.view(np.float64), yb.view(np.float64)), TRUE[dtype], 0).astype(np.uint32)
    words_x, words_y = lo32(xb), lo32(yb)
    if stype in ("f32", "s32", "u32"):
        view = {"f32": np.float32, "s32": np.int32, "u32": np.uint32}[stype]
        return np.where(holds(cmp, words_x.view(view), words_y.view(view)), TRUE[dtype], 0).astype(np.uint32)
    halves = lambda w: [(w & 0xFFFF).astype(np.uint16), (w >> 16).astype(np.uint16)]

    def as_float(h):
        if stype.startswith("bf16"):
            return (h.astype(np.uint32) << 16).view(np.float32)
        return h.view(np.float16)
    if stype == "f16":
        return np.where(holds(cmp, as_float(halves(words_x)[0]), as_float(halves(words_y)[0])),
                        TRUE[dtype] & 0xFFFF if dtype != "u32" else TRUE[dtype], 0).astype(np.uint32)
    out = np.zeros(N, dtype=np.uint32)
    for k, (hx, hy) in enumerate(zip(halves(words_x), halves(words_y))):
        out |= np.where(holds(cmp, as_float(hx), as_float(hy)), TRUE[dtype] & 0xFFFF, 0).astype(np.uint32) << (16 * k)
    return out


def inputs(stype: str) -> tuple[np.ndarray, np.ndarray]:
    """64-bit words per thread: random bits with equal pairs, NaNs, zeros of both signs
    and infinities in the first lanes of each kind."""
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**63, N, dtype=np.int64).view(np.uint64)
    y = rng.integers(0, 2**63, N, dtype=np.int64).view(np.uint64)
    if stype in ("f32", "s32", "u32", "f64"):
        y[::4] = x[::4]
    else:
        y[::4] = x[::4]
        y[1::4] = (y[1::4] & 0xFFFFFFFFFFFF0000) | (x[1::4] & 0xFFFF)          # low halves equal
    special = {"f32": [0x7FC00000, 0x80000000, 0x00000000, 0x7F800000, 0xFF800000],
               "f64": [0x7FF8000000000000, 0x8000000000000000, 0, 0x7FF0000000000000, 0xFFF0000000000000],
               "f16": [0x7E00, 0x8000, 0, 0x7C00, 0xFC00], "f16x2": [0x7E007E00, 0x80000000, 0x8000, 0x7C00FC00, 1],
               "bf16x2": [0x7FC07FC0, 0x80000000, 0x8000, 0x7F80FF80, 1]}.get(stype, [0, 1, 0x80000000, 0x7FFFFFFF, 5])
    for k, v in enumerate(special):
        x[8 + k] = v
        y[8 + (k + 1) % len(special)] = v
    x[14], y[14] = special[1], special[2]       # -0 against +0
    if stype != "f64":
        x &= 0xFFFFFFFF
        y &= 0xFFFFFFFF
    return x, y


@pytest.mark.parametrize("dtype,stype,cmps,arch", PARAMS,
                         ids=[f"{d}.{s}-{a}" for d, s, _c, a in PARAMS])
def test_set_gives_the_isas_values(dtype, stype, cmps, arch, tmp_path):
    text = probe(dtype, stype, cmps, arch)
    ptx = tmp_path / "set.ptx"
    ptx.write_text(text)
    oracle.ptxas(ptx, tmp_path / "ptxas.cubin", arch)            # ptxas accepts the probe
    cubin = ptxc_compile(str(ptx), arch=arch).cubin
    (tmp_path / "ptxc.cubin").write_bytes(cubin)
    proc = oracle.run("nvdisasm", str(tmp_path / "ptxc.cubin"), check=False)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr
    x, y = inputs(stype)
    dev = Device()
    kernel = next(iter(dev.load(cubin, "set.cubin").kernels.values()))
    bx, by, bo = dev.malloc(8 * N), dev.malloc(8 * N), dev.malloc(4 * N * len(cmps))
    dev.memory.write(bx, x)
    dev.memory.write(by, y)
    dev.memory.write(bo, np.zeros(N * len(cmps), np.uint32))
    dev.launch(kernel, 1, N, [bx, by, bo])
    got = dev.memory.view(bo, np.uint32, N * len(cmps)).reshape(len(cmps), N)
    for k, cmp in enumerate(cmps):
        want = expected(dtype, stype, cmp, x, y)
        if dtype in ("f16", "bf16"):
            got_k = got[k] & 0xFFFF
        else:
            got_k = got[k]
        bad = np.nonzero(got_k != want)[0]
        assert not len(bad), (f"set.{cmp}.{dtype}.{stype}: lane {bad[0]}: x={x[bad[0]]:#x} y={y[bad[0]]:#x} "
                              f"got {got_k[bad[0]]:#x} want {want[bad[0]]:#x}")
