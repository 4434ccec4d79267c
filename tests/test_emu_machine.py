"""Machine features beyond the testsuite: dynamic shared memory, __device__ variables,
the documented execution order (last lane's store wins, blocks in order), determinism,
and the program compiler's view of instructions."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import pytest

from ptxc import oracle
from ptxc.emu.device import GLOBAL_BASE, Device
from ptxc.launch.spec import parse_file
from ptxc.launch import run_launches

pytestmark = pytest.mark.oracle
needs_nvcc = pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")


@functools.lru_cache(maxsize=None)
def _cubin_path(source: str) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="emu-machine-"))
    (tmp / "k.cu").write_text(source)
    oracle.nvcc_cubin(tmp / "k.cu", tmp / "k.cubin")
    return str(tmp / "k.cubin")


def nvcc(source: str) -> bytes:
    return Path(_cubin_path(source)).read_bytes()


def run_spec(source: str, **kw):
    return run_launches(nvcc(source), parse_file(source, "k.cu"), source, "k.cu", **kw)


DYNAMIC = """
// LAUNCH: reverse grid=2 block=64 shared=256 x=i32[128]:iota out=i32[128]:zero
// LAUNCH: mixed grid=2 block=32 shared=128 y=f32[64]:rand res=f32[64]:zero
__global__ void reverse(const int* x, int* out) {
    extern __shared__ int buf[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    buf[t] = x[i];
    __syncthreads();
    out[i] = buf[blockDim.x - 1 - t];
}
__global__ void mixed(const float* y, float* res) {
    __shared__ float fixed[32];
    extern __shared__ float dyn[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    fixed[t] = y[i];
    dyn[t] = 2.0f * y[i];
    __syncthreads();
    res[i] = fixed[31 - t] + dyn[(t + 1) & 31];
}
"""


@needs_nvcc
def test_dynamic_shared_memory():
    run = run_spec(DYNAMIC)
    assert np.array_equal(run.buffers["out"], np.arange(128).reshape(2, 64)[:, ::-1].reshape(-1))
    y = run.initial["y"].reshape(2, 32)
    assert np.array_equal(run.buffers["res"].reshape(2, 32), y[:, ::-1] + 2 * np.roll(y, -1, axis=1))


ORDER = """
// LAUNCH: last_wins grid=3 block=64 out=i32[4]:zero
__device__ int counter;
__global__ void last_wins(int* out) {
    out[0] = blockIdx.x * 1000 + threadIdx.x;          // every thread stores to one address
    atomicAdd(&counter, threadIdx.x & 1);
    __syncthreads();
    if (threadIdx.x == 0) { out[1 + blockIdx.x] = counter; }
}
"""


@needs_nvcc
def test_documented_order_and_device_variables():
    run = run_spec(ORDER)
    # blocks in order, warps in order, lanes 0..31: the last store is block 2's thread 63
    assert run.buffers["out"].tolist() == [2063, 32, 64, 96]


@needs_nvcc
def test_runs_are_deterministic():
    source = (Path(__file__).resolve().parent.parent / "testsuite" / "isa_reduce.cu").read_text()
    a = run_spec(source)
    b = run_spec(source)
    for key in a.buffers:
        assert a.buffers[key].tobytes() == b.buffers[key].tobytes()


def test_allocations_are_aligned_with_red_zones():
    dev = Device()
    a = dev.malloc(100, "a")
    b = dev.malloc(4096, "b")
    assert a == GLOBAL_BASE and a % 512 == 0 and b % 512 == 0
    assert b - (a + 100) >= 512                         # the red zone catches x[n]
    assert dev.memory.nearest(a + 100).name == "a"


def test_program_rows_resolve_rz_and_constants():
    from ptxc.emu import isa as I
    from ptxc.emu.program import compile_program, resolve_cbanks
    from ptxc.sass.ir import CBank, Imm, Instr, Reg
    iadd = Instr("IADD3", (), [Reg("R", 3)], [Reg("R", 1), CBank(0, 0x160), Reg("R", 255)])
    prog = compile_program("k", [(0, iadd)])
    row = prog.rows[0]
    assert row[I.F_OP] == I.OP_IADD3 and row[I.F_D0] == 3
    assert (row[I.F_S + 3], row[I.F_S + 4]) == (I.K_CB, 0x160)
    assert (row[I.F_S + 6], row[I.F_S + 7]) == (I.K_IMM, 0)               # RZ reads as 0
    resolved = resolve_cbanks(prog.rows, {0: bytes(0x160) + (1234).to_bytes(4, "little")})
    assert (resolved[0, I.F_S + 3], resolved[0, I.F_S + 4]) == (I.K_IMM, 1234)
    unknown = compile_program("k", [(0, Instr("UNKNOWN", (), [], [Imm(0)]))])
    assert unknown.rows[0, I.F_OP] == I.OP_UNKNOWN and 0 in unknown.unsupported


def test_differences_counts_ulps_exactly():
    """Regression: double distances were taken in float64, which rounds the distance
    between two 64-bit patterns near 1.0 to a multiple of 1024, so 1 ulp read as 0."""
    from ptxc.launch import differences
    one = np.array([1.0, -2.5, 1e300])
    assert [i for i, _, _ in differences("x", one, np.nextafter(one, np.inf), 0)] == [0, 1, 2]
    assert differences("x", one, np.nextafter(one, np.inf), 1) == []
    assert differences("x", np.array([-0.0], np.float32), np.array([0.0], np.float32), 0) == []
    assert [i for i, _, _ in differences("x", np.array([1.0, 1.0]), np.array([1.0, 1.0 + 2 ** -51]),
                                         np.array([2, 1]))] == [1]
    assert differences("x", np.array([np.nan]), np.array([np.nan]), 0) == []


POW2 = """
// LAUNCH: pow2 grid=1 block=64 x=f64[64]:rand out=f64[64]:zero
__global__ void pow2(const double* x, double* out) {
    int i = threadIdx.x;
    out[i] = pow(2.0, x[i] * 4.0);
}
"""


@needs_nvcc
def test_mufu_rcp64h_of_an_immediate():
    """Regression: `MUFU.RCP64H R11, 2` (pow's log of the constant base 2.0) takes the
    high word of 2.0 as its immediate; the emulator moved it to the high half of a
    64-bit value, read 0 and made every pow(2.0, y) NaN."""
    run = run_spec(POW2)
    x, out = run.initial["x"], run.buffers["out"]
    want = np.exp2(x * 4.0)
    assert np.all(np.abs(out - want) <= 2 * np.spacing(want)), (out[:4], want[:4])


GENERIC_ATOMIC = """
// LAUNCH: generic_add grid=2 block=64 f=f32[4]:zero sel=i32[128]:randint(0,2)
__global__ void generic_add(float* f, const int* sel) {
    __shared__ float s[2];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if (t < 2)
        s[t] = 0.0f;
    __syncthreads();
    float* p = sel[i] ? &s[sel[i] - 1] : &f[blockIdx.x];   // generic: shared or global
    atomicAdd(p, 2.0f);
    __syncthreads();
    if (t < 2)
        f[2 + t] += s[t];
}
"""


@needs_nvcc
def test_generic_float_atomic_on_shared_and_global():
    """Regression: a generic float atomicAdd is `ATOM.E.ADD.F32 P1, RZ, [R4.64]` (done if
    the address is global, P1 says so), then `QSPC.E.S` and a shared CAS loop, else
    local LD/ST; the emulator took P1 for the old value and lacked QSPC."""
    run = run_spec(GENERIC_ATOMIC)
    sel = run.initial["sel"].reshape(2, 64)
    want = np.zeros(4, np.float32)
    want[0], want[1] = 2.0 * np.sum(sel[0] == 0), 2.0 * np.sum(sel[1] == 0)
    want[2] = 2.0 * np.sum(sel == 1)            # both blocks add their s[0] into f[2]
    want[3] = 2.0 * np.sum(sel == 2)
    assert np.array_equal(run.buffers["f"], want), (run.buffers["f"], want)
    assert "QSPC" in oracle.run("cuobjdump", "-sass", _cubin_path(GENERIC_ATOMIC)).stdout


WIDE_CONVERSIONS = """
// LAUNCH: f2u64 grid=1 block=32 x=u32[32]:iota out=u64[32]:zero
// LAUNCH: div64 grid=1 block=64 w=i64[64]:rand d=u64[64]:ones q=u64[64]:zero r=u64[64]:zero
__global__ void f2u64(const unsigned* x, unsigned long long* out) {
    int i = threadIdx.x;
    out[i] = (unsigned long long)__uint_as_float(0x5f7ffffeu - x[i] * 0x00800000u);
}
__global__ void div64(const long long* w, const unsigned long long* d, unsigned long long* q,
                      unsigned long long* r) {
    int i = threadIdx.x;
    unsigned long long n = (unsigned long long)w[i], m = d[i] + (unsigned long long)(i / 8) * 3;
    q[i] = n / m;
    r[i] = n % m;
}
"""


@needs_nvcc
def test_float_to_u64_at_and_above_2_to_the_63():
    """Regression: F2I.U64 of a float in [2^63, 2^64) gave 0 (numba's math.floor returns
    an int64, which wrapped), and so ptxas's 64-bit division by 1 came out wrong (the
    reciprocal of 1 is the only one that large): nvcc's cubin against Python."""
    import struct
    result = run_spec(WIDE_CONVERSIONS)
    out = [int(v) & (2**64 - 1) for v in result.buffers["out"]]
    want = []
    for i in range(32):
        f = struct.unpack("<f", struct.pack("<I", (0x5F7FFFFE - i * 0x00800000) & 0xFFFFFFFF))[0]
        want.append(min(int(f), 2**64 - 1))
    assert out == want
    w = [int(v) & (2**64 - 1) for v in result.buffers["w"]]
    m = [int(v) + (i // 8) * 3 for i, v in enumerate(result.buffers["d"])]
    assert [int(v) for v in result.buffers["q"]] == [a // b for a, b in zip(w, m)]
    assert [int(v) for v in result.buffers["r"]] == [a % b for a, b in zip(w, m)]


NEGATED_WIDE_ADDEND = """
// LAUNCH: mad_wide_neg grid=2 block=64 a=i32[128]:rand b=i32[128]:rand out=u64[128]:zero
__global__ void mad_wide_neg(const int* a, const int* b, unsigned long long* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = a[i], y = b[i];
    unsigned u = x * 2654435761u;
    unsigned short us = (unsigned short)(x >> 7);
    short s = (short)y;
    out[i] = (unsigned long long)us * (unsigned long long)(u / 31u) - (unsigned long long)s;
}
"""


@needs_nvcc
def test_imad_wide_with_a_negated_addend():
    """Regression (random kernels against Python): nvcc's `IMAD.WIDE.U32 R8, R7, R10, -R8`
    added the pair instead of subtracting it; nvcc's cubin against Python."""
    result = run_spec(NEGATED_WIDE_ADDEND)
    want = []
    for a, b in zip(result.buffers["a"], result.buffers["b"]):
        x, y = int(a), int(b)
        u = (x * 2654435761) % 2**32
        s = (y & 0xFFFF) - ((y & 0x8000) << 1)
        want.append((((x >> 7) & 0xFFFF) * (u // 31) - s) % 2**64)
    assert [int(v) & (2**64 - 1) for v in result.buffers["out"]] == want
