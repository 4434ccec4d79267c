"""The H200 decides what the emulator models (issue 16): nvcc's sm_90 cubins of the
kernels whose emulation changed here (LEA with -Ra and its carry, FMUL.D2/D4/D8/M8,
loops with continue around inner loops: BSSY/BSYNC) and ptxc's sm_90 cubins of the
same kernels run on the GPU; the GPU's buffers must equal the emulator's for nvcc's
cubin (the emulator's model is silicon's), and ptxc's cubin must finish and give
nvcc's buffers there (a deadlock at BSYNC would hang: the launch has a timeout).

    python tests/test_device_issue16.py prepare .device_work/issue16     # here: nvcc's cubins
    PTXC_ISSUE16=.device_work/issue16 python -m pytest -q tests/test_device_issue16.py   # the H200

The `device` tests skip with 'no CUDA GPU' without one (and without the prepared cubins)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))


def cases() -> dict:
    import test_bssy_joins as loops
    import test_emu_forms as forms
    out = {"lea": forms.LEA, "fmul": forms.FMUL}
    out.update({f"loop_{name}": loops.HEAD + body + "    o[i] = s + x;\n}\n" for name, body in loops.BODIES.items()})
    return out


def prepare(folder: str) -> int:
    from ptxc import oracle
    work = Path(folder)
    work.mkdir(parents=True, exist_ok=True)
    for name, source in cases().items():
        (work / f"{name}.cu").write_text(source)
        oracle.nvcc_cubin(work / f"{name}.cu", work / f"{name}.nvcc.cubin", "sm_90")
    print(f"{len(cases())} kernels in {work}")
    return 0


WORK = Path(os.environ.get("PTXC_ISSUE16", ROOT / ".device_work" / "issue16"))
NAMES = sorted(p.stem for p in WORK.glob("*.cu")) if WORK.is_dir() else []


@pytest.fixture(scope="module")
def gpu():
    from ptxc.device import GPU, available
    if not available():
        pytest.skip("no CUDA GPU")
    if not NAMES:
        pytest.skip(f"no prepared cubins in {WORK} (python tests/test_device_issue16.py prepare {WORK})")
    return GPU()


def same(a: dict, b: dict) -> list:
    return [k for k in a if not np.array_equal(np.asarray(a[k]).view(np.uint8), np.asarray(b[k]).view(np.uint8))]


@pytest.mark.device
@pytest.mark.parametrize("name", NAMES or ["none"])
def test_gpu_agrees_with_the_emulator_and_ptxc(name, gpu, tmp_path):
    import subprocess
    from ptxc.device import cubin_image, run_launches as run_on_gpu
    from ptxc.launch.spec import parse_file
    from ptxc.launch import run_launches as run_on_emulator
    cu = WORK / f"{name}.cu"
    source = cu.read_text()
    launches = parse_file(source, cu.name)
    nvcc = (WORK / f"{name}.nvcc.cubin").read_bytes()
    on_gpu = run_on_gpu(gpu, cubin_image(nvcc, f"{name}.nvcc.cubin"), launches, source, cu.name).buffers
    emulated = run_on_emulator(nvcc, launches, source, cu.name).buffers
    assert not same(on_gpu, emulated), f"the emulator differs from the H200 on nvcc's cubin: {same(on_gpu, emulated)}"
    ours = tmp_path / "ptxc.cubin"
    proc = subprocess.run([sys.executable, "-m", "ptxc", str(cu), "-arch=sm_90", "-o", str(ours)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    ptxc_gpu = run_on_gpu(gpu, cubin_image(ours.read_bytes(), "ptxc.cubin"), launches, source, cu.name,
                          timeout=60).buffers
    assert not same(on_gpu, ptxc_gpu), f"ptxc's cubin differs from nvcc's on the H200: {same(on_gpu, ptxc_gpu)}"


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "prepare":
    sys.exit(prepare(sys.argv[2]))
