"""ptxc's own sm_90 (Hopper, H200) code: every testsuite file compiled with `-arch=sm_90`,
both from ptxc's frontend and from nvcc's sm_90 PTX (ptxc as a drop-in `ptxas
-arch=sm_90`), checked against nvcc's sm_90 cubin.

- cuobjdump and nvdisasm read the cubin without a complaint, and it says sm_90;
- the code keeps sm_90's conventions, as ptxas's sm_90 code does: no instruction but
  LDC/ULDC reads a constant bank (load_cbank_operands), the global descriptor comes
  from c[0x0][0x208], parameters from c[0x0][0x210];
- on the emulator every `// LAUNCH:` line gives nvcc's sm_90 cubin's buffers (ulp only
  where the line allows) and the hazard checker, with the sm_90 latency table, finds
  nothing in ptxc's code.

The same files on the H200 itself: scripts/device_check.py (docs/sm90.md).
"""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.launch.spec import parse_file
from ptxc.launch import differences, run_launches

from conftest import TESTSUITE

pytestmark = pytest.mark.oracle
needs_nvcc = pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")
FILES = sorted(p.stem for p in TESTSUITE.glob("*.cu"))
ARCH = "sm_90"
WORK = Path(tempfile.mkdtemp(prefix="ptxc-sm90-"))


@functools.lru_cache(maxsize=None)
def nvcc_cubin(name: str) -> bytes:
    return oracle.nvcc_cubin(TESTSUITE / f"{name}.cu", WORK / f"{name}.nvcc.cubin", ARCH).read_bytes()


def ptxc_cubin(name: str, frontend: str) -> bytes:
    """ptxc's sm_90 cubin of a testsuite file: from ptxc's own PTX (frontend "ptxc") or
    from nvcc's sm_90 PTX ("nvcc")."""
    from ptxc.driver import cubin_bytes, load_module, lower_module, reparse
    from ptxc.lower.pipeline import Options
    path = TESTSUITE / f"{name}.cu"
    if frontend == "nvcc":
        ptx = oracle.nvcc_ptx(path, WORK / f"{name}.nvcc.ptx", ARCH)
        module, filename = load_module(str(ptx), ptx.read_text(), ARCH), str(ptx)
    else:
        module = load_module(str(path), path.read_text(), ARCH)
        module, filename, _text = reparse(module, str(path))
    return cubin_bytes(lower_module(module, Options(arch=ARCH, filename=filename)), ARCH)


def sm90_conventions(cubin: bytes) -> list[str]:
    """What breaks sm_90's conventions in a cubin's code (empty: nothing)."""
    from ptxc.cubin.reader import read_cubin
    from ptxc.sass.decode import decode_all
    from ptxc.sass.ir import CBank
    from ptxc.sass.printer import format_ir
    from ptxc.sass.table import load
    image = read_cubin(cubin)
    problems = [] if image.arch == ARCH else [f"the cubin says {image.arch}"]
    for kernel in image.kernels:
        for addr, instr in decode_all(kernel.text, table=load(ARCH)):
            banks = [op for op in instr.srcs if isinstance(op, CBank)]
            if instr.op == "UNKNOWN":
                problems.append(f"{kernel.name}+{addr:#x}: an unknown word")
            elif banks and instr.op not in ("LDC", "ULDC"):
                problems.append(f"{kernel.name}+{addr:#x}: {format_ir(instr)} reads a constant bank")
            elif instr.op == "ULDC" and banks[0].bank == 0 and banks[0].offset == 0x118:
                problems.append(f"{kernel.name}+{addr:#x}: sm_89's descriptor slot c[0x0][0x118]")
    return problems


@needs_nvcc
@pytest.mark.parametrize("frontend", ["ptxc", "nvcc"])
@pytest.mark.parametrize("name", FILES)
def test_sm90_cubin_matches_nvcc(name, frontend):
    cubin = ptxc_cubin(name, frontend)
    out = WORK / f"{name}.{frontend}.ptxc.cubin"
    out.write_bytes(cubin)
    oracle.cuobjdump_sass(out)                       # raises on a complaint
    proc = oracle.run("nvdisasm", str(out), check=False)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr
    problems = sm90_conventions(cubin)
    assert not problems, "\n".join(problems[:10])
    source = (TESTSUITE / f"{name}.cu").read_text()
    launches = parse_file(source, f"{name}.cu")
    if not launches:
        return
    ref = run_launches(nvcc_cubin(name), launches, source, f"{name}.cu")
    run = run_launches(cubin, launches, source, f"{name}.cu", check_hazards=True)
    assert not run.hazards, f"{len(run.hazards)} hazards, first: {run.hazards[0]}"
    for key in ref.buffers:
        diffs = differences(key, ref.buffers[key], run.buffers[key], ref.ulp.get(key, 0))
        assert not diffs, f"buffer '{key}': {len(diffs)} elements differ from nvcc's sm_90 cubin, first {diffs[:3]}"


def test_conventions_check_can_fail():
    """The convention check names what sm_89 code does and sm_90 code must not."""
    from ptxc.driver import cubin_bytes, load_module, lower_module, reparse
    from ptxc.lower.pipeline import Options
    path = TESTSUITE / "vadd.cu"
    module, filename, _ = reparse(load_module(str(path), path.read_text(), "sm_89"), str(path))
    sm89 = cubin_bytes(lower_module(module, Options(arch="sm_89", filename=filename)), "sm_89")
    problems = sm90_conventions(sm89)
    assert problems and "says sm_89" in problems[0]


# ---- an FP32 or IMAD result read by sm_90's integer min/max ---------------------------------------
MINMAX_AFTER_FMA = """
__global__ void k(const float* x, const float* y, float* out, int* iout) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = rhypotf(x[i], y[i]);
    iout[i] = max(__float_as_int(x[i] * 3.0f), __float_as_int(y[i] + 1.0f)) + min(i * 7, i + 5);
}
"""
_MINMAX = {"VIMNMX", "VIMNMX3", "VIADDMNMX"}
_FMA_PIPE = {"FADD", "FMUL", "FFMA", "IMAD"}


def _minmax_distances(cubin: bytes) -> list[int]:
    """Issue distances (cycles, from the control words) from an FADD/FMUL/FFMA/IMAD to a
    VIMNMX-family instruction reading its result, in straight-line code."""
    from ptxc.cubin.reader import read_cubin
    from ptxc.sass.decode import decode_all
    from ptxc.sass.ir import Reg
    from ptxc.sass.table import load

    def units(ops):
        return {(r.file, r.num + k) for r in ops if isinstance(r, Reg) and not r.is_zero for k in range(r.width)}
    found = []
    for kernel in read_cubin(cubin).kernels:
        instrs = [instr for _, instr in decode_all(kernel.text, table=load(ARCH))]
        time, clock = [], 0
        for instr in instrs:
            time.append(clock)
            clock += max(instr.ctrl.stall, 1)
        for j, consumer in enumerate(instrs):
            if consumer.op not in _MINMAX:
                continue
            wanted = units(consumer.srcs)
            for i in range(j - 1, max(-1, j - 24), -1):
                producer = instrs[i]
                if producer.op in ("BRA", "EXIT", "BSYNC"):
                    break
                written = units(producer.dsts) & wanted
                if written and producer.op in _FMA_PIPE:
                    found.append(time[j] - time[i])
                wanted -= written
    return found


@needs_nvcc
def test_minmax_reads_an_fma_result_no_sooner_than_ptxas(tmp_path):
    """ptxas never issues VIMNMX sooner after the FADD/FMUL/IMAD it reads than a set
    distance (5 cycles); ptxc put it at 4, and the H200 read the old register (rhypotf
    gave 1/sqrt(2*min^2): testsuite/fe_math_special.cu).  Regression for the sm_90
    latency table's `vminmax` class."""
    from ptxc.driver import cubin_bytes, load_module, lower_module, reparse
    from ptxc.lower.pipeline import Options
    path = tmp_path / "k.cu"
    path.write_text(MINMAX_AFTER_FMA)
    theirs = _minmax_distances(oracle.nvcc_cubin(path, tmp_path / "k.nvcc.cubin", ARCH).read_bytes())
    module, filename, _text = reparse(load_module(str(path), MINMAX_AFTER_FMA, ARCH), str(path))
    ours = _minmax_distances(cubin_bytes(lower_module(module, Options(arch=ARCH, filename=filename)), ARCH))
    assert theirs and ours, (theirs, ours)
    assert min(ours) >= min(theirs), f"ptxc {sorted(ours)}, ptxas {sorted(theirs)}"
