"""ptxc.device: kernels on a real GPU through the CUDA driver API.

RUN: pytest tests/test_device.py        (the `device` tests skip with 'no CUDA GPU' without one)
CHECK: parameter offsets read from PTX `.param` declarations are ptxas's; without a GPU,
GPU() is `no CUDA GPU available: ...`, never a traceback.
CHECK (device): ptxc's sm_90 PTX (`--ptx-version=9.0`) loads through the driver's JIT and
vadd gives c = a + b = 2; an sm_89 cubin (ptxc's own) is refused with both architectures
named; an unsupported `.version` says which option to use.
The whole testsuite on the GPU, against nvcc's sm_90 cubins, is scripts/device_check.py
(docs/sm90.md).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ptxc.device import ArchMismatch, DeviceError, GPU, NoDevice, available, cubin_image, ptx_image, ptx_params
from ptxc.device import run_launches
from ptxc.emu.launch_spec import parse_file

ROOT = Path(__file__).resolve().parent.parent
VADD = ROOT / "testsuite" / "vadd.cu"
VADD_LAUNCH = ("// LAUNCH: vadd grid=64 block=256 a=f32[16384]:ones b=f32[16384]:ones "
               "c=f32[16384]:zero n=16384\n")

PTX_PARAMS = """
.visible .entry k(
	.param .u8 k_param_0,
	.param .f64 k_param_1,
	.param .align 4 .b8 k_param_2[12],
	.param .u64 .ptr .global .align 4 k_param_3,
	.param .u16 k_param_4
)
{ ret; }
"""


def test_ptx_params_at_natural_alignment():
    assert ptx_params(PTX_PARAMS) == {"k": [(0, 1), (8, 8), (16, 12), (32, 8), (40, 2)]}


def test_no_gpu_is_a_clear_error():
    if available():
        pytest.skip("a GPU is here")
    with pytest.raises(NoDevice, match="^no CUDA GPU available"):
        GPU()


@pytest.fixture(scope="module")
def gpu():
    if not available():
        pytest.skip("no CUDA GPU")
    return GPU()


def ptxc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxc", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.device
def test_ptxc_ptx_runs_through_the_jit(gpu, tmp_path):
    out = tmp_path / "vadd.ptx"
    proc = ptxc(str(VADD), "-ptx", "-arch=sm_90", "--ptx-version=9.0", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    source = VADD_LAUNCH + VADD.read_text()
    run = run_launches(gpu, ptx_image(out.read_text(), "vadd.ptx"), parse_file(source, "vadd.cu"), source,
                       "vadd.cu")
    assert (run.buffers["c"] == np.float32(2)).all()


@pytest.mark.device
def test_sm89_cubin_is_refused(gpu, tmp_path):
    out = tmp_path / "vadd.cubin"
    proc = ptxc(str(VADD), "-arch=sm_89", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    image = cubin_image(out.read_bytes(), "vadd.cubin")
    if gpu.arch == "sm_89":
        pytest.skip("this GPU is sm_89")
    with pytest.raises(ArchMismatch, match=f"for sm_89, but the GPU .* is {gpu.arch}"):
        gpu.load_cubin(image.data, image.name, image.arch)


@pytest.mark.device
def test_ptx_version_the_driver_refuses_is_explained(gpu, tmp_path):
    out = tmp_path / "vadd.ptx"
    assert ptxc(str(VADD), "-ptx", "-arch=sm_90", "--ptx-version=9.5", "-o", str(out)).returncode == 0
    try:
        gpu.load_ptx(out.read_text(), "vadd.ptx").unload()
    except DeviceError as err:
        assert "--ptx-version" in str(err) or "refuses" in str(err), err
