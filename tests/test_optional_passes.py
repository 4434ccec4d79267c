"""Every optional pass can be disabled and the code stays correct (docs/pipeline.md):
for each pass not marked required, testsuite kernels compiled with it disabled give
nvcc's results on the emulator.  Passes whose absence breaks the code are marked
required in ptxc/lower/pipeline.py instead (`--disable-pass` refuses them)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.lower.pipeline import PASSES

pytestmark = [pytest.mark.oracle,
              pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")]

TESTSUITE = Path(__file__).resolve().parent.parent / "testsuite"
# Small files that between them reach every optional pass: shuffles and votes (reconvergence),
# conversions and constants, doubles (bank 2), 64-bit addressing, predicated diamonds.
FILES = ["fe_warp_shuffle", "fe_conversions", "isa_double", "fe_control"]
# A shuffle after a loop whose trip count differs per lane: right only if the warp is whole
# again there (insert_bssy's BSYNC; with it disabled ptxc's results differed, so it is required).
DIVERGED_SHUFFLE = """// LAUNCH: k grid=2 block=64 a=i32[128]:rand o=i32[256]:zero
__global__ void k(const int *a, int *o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = a[i], v = x;
    for (int j = 0; j < (x & 7); j++) v = v * 3 + j;
    if (x & 8) v ^= 0x55;
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    o[i * 2] = v;
    o[i * 2 + 1] = __shfl_down_sync(0xffffffffu, v, 3);
}
"""
OPTIONAL = [p.name for p in PASSES if not p.required]


def source_of(name: str, tmp: str) -> Path:
    if name == "diverged_shuffle":
        path = Path(tmp) / "diverged_shuffle.cu"
        path.write_text(DIVERGED_SHUFFLE)
        return path
    return TESTSUITE / f"{name}.cu"


@lru_cache(maxsize=None)
def nvcc_buffers(name: str, arch: str, tmp: str):
    from ptxc.launch.spec import parse_file
    from ptxc.launch import run_launches
    path = source_of(name, tmp)
    source = path.read_text()
    cubin = Path(tmp) / f"{name}.{arch}.nvcc.cubin"
    oracle.nvcc_cubin(path, cubin, arch)
    return run_launches(cubin.read_bytes(), parse_file(source, f"{name}.cu"), source, f"{name}.cu")


def ptxc_buffers(name: str, arch: str, disabled: str, tmp: str):
    from ptxc.driver import cubin_bytes, load_module, lower_module, reparse
    from ptxc.launch.spec import parse_file
    from ptxc.launch import run_launches
    from ptxc.lower.pipeline import Options
    path = str(source_of(name, tmp))
    source = Path(path).read_text()
    module, ptx_path, _ = reparse(load_module(path, source, arch), path)
    kernels = lower_module(module, Options(arch=arch, filename=ptx_path, disabled={disabled}))
    return run_launches(cubin_bytes(kernels, arch), parse_file(source, f"{name}.cu"), source, f"{name}.cu")


@pytest.fixture(scope="module")
def nvcc_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("optional_passes"))


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("name", FILES + ["diverged_shuffle"])
@pytest.mark.parametrize("disabled", OPTIONAL)
def test_disabling_an_optional_pass_keeps_nvcc_results(disabled, name, arch, nvcc_dir):
    from ptxc.launch import differences
    theirs = nvcc_buffers(name, arch, nvcc_dir)
    ours = ptxc_buffers(name, arch, disabled, nvcc_dir)
    for buffer in theirs.buffers:
        diffs = differences(buffer, theirs.buffers[buffer], ours.buffers[buffer], theirs.ulp.get(buffer, 0))
        assert not diffs, f"--disable-pass={disabled}: {buffer}: {len(diffs)} elements differ, first {diffs[:3]}"


def test_a_pass_required_for_correct_results_says_why():
    from ptxc.diagnostics import CompileError
    from ptxc.lower.pipeline import check_pass_names
    with pytest.raises(CompileError, match="cannot be disabled \\(without BSSY/BSYNC"):
        check_pass_names({"insert_bssy"}, "--disable-pass")
