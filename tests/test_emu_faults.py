"""Planted faults the emulator must catch, and bad input it must refuse clearly:
an out-of-bounds store (a compute-sanitizer-like report), a reduction without its
__syncthreads (a wrong result, reported by comparison), a scoreboard wait removed from
nvcc's SASS (--check-hazards names the instruction), malformed launch specs, a missing
kernel, wrong argument counts, and a kernel that never ends (--max-steps)."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import pytest

from ptxc import oracle
from ptxc.cli.check import check_command
from ptxc.cli.run import run_command
from ptxc.emu.device import Device, LaunchError
from ptxc.launch.spec import SpecError, parse_file, parse_line
from ptxc.launch import differences, run_launches

pytestmark = pytest.mark.oracle
needs_nvcc = pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")
TESTSUITE = Path(__file__).resolve().parent.parent / "testsuite"


@functools.lru_cache(maxsize=None)
def nvcc(source: str) -> bytes:
    tmp = Path(tempfile.mkdtemp(prefix="emu-fault-"))
    (tmp / "k.cu").write_text(source)
    oracle.nvcc_cubin(tmp / "k.cu", tmp / "k.cubin")
    return (tmp / "k.cubin").read_bytes()


def run_spec(source: str, **kw):
    return run_launches(nvcc(source), parse_file(source, "k.cu"), source, "k.cu", **kw)


# ---- an out-of-bounds store ---------------------------------------------------------------
OFF_BY_ONE = """
// LAUNCH: scale grid=4 block=256 x=f32[1000]:rand n=1000
__global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) x[i] = 2.0f * x[i];      // <= : one past the end
}
"""


@needs_nvcc
def test_out_of_bounds_store_is_reported():
    with pytest.raises(LaunchError) as info:
        run_spec(OFF_BY_ONE)
    report = str(info.value)
    # the first bad access is the read of x[1000] by thread 232 of block 3
    assert "Invalid __global__ read of size 4 bytes" in report
    assert "by thread (232,0,0) in block (3,0,0)" in report
    assert "LDG.E" in report and "SASS: /*" in report
    assert "is 0 bytes after the nearest allocation" in report and "of size 4000 bytes ('x')" in report


STORE_PAST_END = """
// LAUNCH: fill grid=1 block=64 x=i32[60]:zero
__global__ void fill(int* x) { x[threadIdx.x] = threadIdx.x; }
"""


@needs_nvcc
def test_out_of_bounds_write_names_the_store():
    with pytest.raises(LaunchError) as info:
        run_spec(STORE_PAST_END)
    report = str(info.value)
    assert "Invalid __global__ write of size 4 bytes" in report
    assert "by thread (60,0,0) in block (0,0,0)" in report
    assert "STG.E" in report
    assert "0 bytes after the nearest allocation" in report


MISALIGNED = """
// LAUNCH: misaligned grid=1 block=32 x=i32[64]:zero
__global__ void misaligned(int* x) {
    int* p = (int*)((char*)x + 2);
    p[threadIdx.x] = 1;
}
"""


@needs_nvcc
def test_misaligned_store_is_reported():
    with pytest.raises(LaunchError) as info:
        run_spec(MISALIGNED)
    assert "Misaligned __global__ write of size 4 bytes" in str(info.value)


SHARED_OOB = """
// LAUNCH: shared_oob grid=1 block=64 out=i32[64]:zero
__global__ void shared_oob(int* out) {
    __shared__ int buf[32];
    buf[threadIdx.x] = threadIdx.x;     // threads 32..63 write past the 128-byte buffer
    __syncthreads();
    out[threadIdx.x] = buf[threadIdx.x & 31];
}
"""


@needs_nvcc
def test_shared_out_of_bounds_is_reported():
    with pytest.raises(LaunchError) as info:
        run_spec(SHARED_OOB)
    report = str(info.value)
    assert "Invalid __shared__ write of size 4 bytes" in report
    assert "by thread (32,0,0)" in report


# ---- a reduction without __syncthreads ---------------------------------------------------------
@needs_nvcc
def test_missing_syncthreads_gives_a_wrong_result():
    good = (TESTSUITE / "reduce_shared.cu").read_text()
    assert good.count("__syncthreads();") == 2
    racy = good.replace("        __syncthreads();\n    }", "    }")     # the one inside the loop
    assert racy.count("__syncthreads();") == 1
    a, b = run_spec(good), run_spec(racy)
    x = a.initial["in"].reshape(64, 256).copy()
    width = 256
    while width > 1:
        width //= 2
        x[:, :width] = x[:, :width] + x[:, width:2 * width]
    assert not differences("out", a.buffers["out"], x[:, 0])            # the correct kernel is right
    wrong = differences("out", b.buffers["out"], a.buffers["out"])
    assert wrong, "the race must show: warps do not run in lockstep across a block"
    assert len(wrong) == 64                                               # every block's sum is off


# ---- a scoreboard wait removed by hand ------------------------------------------------------------
def patch_wait(cubin: bytes, kernel_op: str, keep=lambda instr: True) -> tuple[bytes, int]:
    """Clear the wait mask of the first instruction `kernel_op` in the cubin's text (edit
    the control bits in place: bits 116..121 of the 128-bit word)."""
    from ptxc.cubin.reader import read_cubin
    from ptxc.sass.decode import decode_all
    c = read_cubin(cubin)
    text = next(s for s in c.sections if s.name.startswith(".text."))
    for addr, instr in decode_all(text.data):
        if instr.op == kernel_op and instr.ctrl.wait and keep(instr):
            word = int.from_bytes(text.data[addr:addr + 16], "little")
            word &= ~(0x3F << 116)
            data = bytearray(cubin)
            data[text.offset + addr:text.offset + addr + 16] = word.to_bytes(16, "little")
            return bytes(data), addr
    raise AssertionError(f"no {kernel_op} waits on a scoreboard")


VADD_SPEC = """
// LAUNCH: vadd grid=4 block=256 a=f32[1024]:rand b=f32[1024]:rand c=f32[1024]:zero n=1024
""" + (TESTSUITE / "vadd.cu").read_text().split("int main")[0]


@needs_nvcc
def test_nvccs_vadd_has_no_hazards():
    run = run_spec(VADD_SPEC, check_hazards=True)
    assert run.hazards == []


DIVERGENT_STORES = """
// LAUNCH: split grid=1 block=64 x=f32[64]:rand y=f32[64]:rand out=f32[64]:zero out2=f32[128]:zero n=5
__global__ void split(const float* x, const float* y, float* out, float* out2, int n) {
    int i = threadIdx.x;
    float a = x[i], b = y[i];
    if (i & 1) {
        float s = a;
#pragma unroll 1
        for (int k = 0; k < n; k++)
            s = s * b + 1.0f;
        out[i] = s;
    } else {
        float t = b;
#pragma unroll 1
        for (int k = 0; k < n; k++)
            t = t * a - 1.0f;
        out2[i] = t;
    }
    out2[64 + i] = a * b;
}
"""


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_divergent_groups_write_their_own_lanes(tmp_path, arch):
    """The odd lanes' STG reads R2 late; the even lanes, run next, load R2 before that
    read scoreboard is waited for: their own lanes' R2, no hazard (regression: the WAR
    check was lane-blind and named one in nvcc's sm_90 code)."""
    source = DIVERGENT_STORES
    (tmp_path / "k.cu").write_text(source)
    oracle.nvcc_cubin(tmp_path / "k.cu", tmp_path / "k.cubin", arch=arch)
    run = run_launches((tmp_path / "k.cubin").read_bytes(), parse_file(source, "k.cu"), source, "k.cu",
                       check_hazards=True)
    assert run.hazards == []
    x, y = run.initial["x"], run.initial["y"]
    assert not differences("out2", run.buffers["out2"][64:], (x * y).astype(np.float32))


@needs_nvcc
def test_removed_scoreboard_wait_is_named():
    broken, addr = patch_wait(nvcc(VADD_SPEC), "FADD")
    launches = parse_file(VADD_SPEC, "k.cu")
    run = run_launches(broken, launches, VADD_SPEC, "k.cu", check_hazards=True)
    kinds = {h.kind for h in run.hazards}
    assert kinds == {"scoreboard"}
    texts = [str(h) for h in run.hazards]
    assert all(f"/*{addr:04x}*/ FADD" in t for t in texts), texts
    assert any("LDG.E" in t and "SB" in t for t in texts)


# ---- bad specs, missing kernels, wrong argument counts ---------------------------------------------
@pytest.mark.parametrize("line, message, col", [
    ("vadd block=256 n=1", "missing grid=", 1),
    ("vadd grid=0 block=256", "at least 1", 11),
    ("vadd grid=4,4,4,4 block=1", "X, X,Y or X,Y,Z", 11),
    ("vadd grid=4 block=256 a=f33[4]:zero", "unknown buffer type 'f33'", 25),
    ("vadd grid=4 block=256 a=f32[4]:random", "unknown initializer 'random'", 32),
    ("vadd grid=4 block=256 a=f32[x]:zero", "buffer length 'x' is not an integer", 29),
    ("vadd grid=4 block=256 a=f32[4]", "needs an initializer", 31),
    ("vadd grid=4 block=256 a=f32[4]:randint(5)", "randint takes two integers", 32),
    ("vadd grid=4 block=256 n=abc", "'abc' is not a number", 25),
    ("vadd grid=4 block=256 n=1 n=2", "given twice", 27),
    ("vadd grid=4 block=256 oops", "expected key=value", 23),
])
def test_bad_launch_specs(line, message, col):
    with pytest.raises(SpecError) as info:
        parse_line(line, "k.cu", 7, 1, "\n" * 6 + line)
    text = info.value.format()
    assert f"k.cu:7:{col}: error:" in text and message in text
    assert text.splitlines()[-1] == " " * (col - 1) + "^"


@needs_nvcc
def test_missing_kernel_and_wrong_argument_count():
    source = VADD_SPEC.replace("// LAUNCH: vadd", "// LAUNCH: vsub")
    with pytest.raises(SpecError) as info:
        run_spec(source)
    assert "no kernel 'vsub'" in info.value.format() and "it has: vadd" in info.value.format()
    source = VADD_SPEC.replace(" n=1024", "")
    with pytest.raises(SpecError) as info:
        run_spec(source)
    assert "kernel 'vadd' takes 4 argument(s); this line gives 3" in info.value.format()
    source = VADD_SPEC.replace("n=1024", "n=f32[4]:zero")
    with pytest.raises(SpecError) as info:
        run_spec(source)
    assert "parameter 4 of 'vadd' is not a pointer" in info.value.format()


# ---- a kernel that never ends ------------------------------------------------------------------------
FOREVER = """
// LAUNCH: spin grid=2 block=64 flag=i32[1]:zero
__global__ void spin(volatile int* flag) {
    while (flag[0] == 0) { }
}
"""


@needs_nvcc
def test_kernel_that_never_ends_stops_at_max_steps():
    with pytest.raises(LaunchError) as info:
        run_spec(FOREVER, max_steps=100_000)
    report = str(info.value)
    assert "did not finish within 100000 warp instructions (--max-steps)" in report
    assert info.value.kind == "max-steps"


# ---- the commands: errors, not tracebacks --------------------------------------------------------------
@needs_nvcc
def test_check_command_reports_spec_errors(tmp_path, capsys):
    path = tmp_path / "bad.cu"
    path.write_text(VADD_SPEC.replace("block=256", "block=256 colour=red"))
    assert check_command([str(path)]) == 1
    err = capsys.readouterr().err
    assert "bad.cu:2:" in err and "error:" in err and "Traceback" not in err


def test_run_command_missing_file(capsys):
    assert run_command(["/nonexistent/prog.cu"]) == 1
    assert "no such file" in capsys.readouterr().err


@needs_nvcc
def test_run_command_reports_a_crashing_kernel(tmp_path, capsys):
    """A fault is the CUDA runtime's error, as on the GPU: the emulator's report goes to
    stderr with the launch's line, the program goes on, and the next synchronizing call
    returns cudaErrorIllegalAddress (sticky: cudaMemcpy after it too)."""
    path = tmp_path / "crash.cu"
    path.write_text("""
#include <stdio.h>
__global__ void poke(int* p) { p[threadIdx.x + 1000000] = 1; }
int main() {
    int* d;
    cudaMalloc(&d, 64 * sizeof(int));
    poke<<<1, 64>>>(d);
    printf("launch: %d\\n", (int)cudaGetLastError());
    printf("sync: %d\\n", (int)cudaDeviceSynchronize());
    int h;
    printf("copy: %d\\n", (int)cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost));
    return 0;
}
""")
    assert run_command([str(path), "--with=nvcc"]) == 0
    captured = capsys.readouterr()
    assert "Invalid __global__ write of size 4 bytes" in captured.err
    assert "crash.cu:7:" in captured.err and "Traceback" not in captured.err
    from ptxc.frontend.cuda_runtime_data import CUDAERROR
    illegal = CUDAERROR["cudaErrorIllegalAddress"]      # (learned from driver_types.h)
    assert captured.out == f"launch: 0\nsync: {illegal}\ncopy: {illegal}\n"


# ---- a WARPSYNC that leaves out a thread executing it ---------------------------------------
# vote.sync with mask 0xffff in the `then` arm of an if/else that all 32 lanes take
# (undefined in CUDA: lanes 16..31 are not in the mask).  ptxas -arch=sm_90 and ptxc
# both put `WARPSYNC 0xffff` before the VOTE there (outside convergent code); lanes
# 16..31 executing a WARPSYNC that leaves them out is an illegal instruction on the GPU
# (measured on the H200 with fe_warp_vote's earlier ptxc code), and the emulator stops
# the same way.  (For sm_89 ptxas guards the VOTE with `BRA.DIV` instead, which the
# sm_89 table cannot decode yet.)
PARTIAL_VOTE = """.version 9.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd3, %rd2, %rd3;
  setp.gt.u32 %p1, %r1, 1000;
  @%p1 bra ELSE;
  setp.eq.s32 %p2, %r1, 5;
  vote.sync.ballot.b32 %r2, %p2, 0xffff;
  st.global.u32 [%rd3], %r2;
  bra END;
ELSE:
  st.global.u32 [%rd3], %r1;
END:
  ret;
}
"""


@pytest.mark.parametrize("compiler", ["ptxas", "ptxc"])
def test_warpsync_leaving_out_its_thread_is_an_illegal_instruction(compiler, tmp_path):
    from ptxc.driver import cubin_bytes, load_module, lower_module
    from ptxc.lower.pipeline import Options
    ptx = tmp_path / "k.ptx"
    ptx.write_text(PARTIAL_VOTE)
    if compiler == "ptxas":
        if not oracle.available("ptxas"):
            pytest.skip("ptxas (the oracle) is not installed")
        cubin = oracle.ptxas(ptx, tmp_path / "k.cubin", "sm_90").read_bytes()
    else:
        module = load_module(str(ptx), PARTIAL_VOTE, "sm_90")
        cubin = cubin_bytes(lower_module(module, Options(arch="sm_90", filename=str(ptx))), "sm_90")
    dev = Device()
    out = dev.malloc(32 * 4, "out")
    kernel = dev.load(cubin, "k.cubin").kernel("k")
    with pytest.raises(LaunchError) as info:
        dev.launch(kernel, 1, 32, [out])
    assert info.value.kind == "illegal-instruction"
    assert "WARPSYNC whose mask leaves out a thread that executes it" in str(info.value)
