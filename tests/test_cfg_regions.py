"""if-regions emptied by remove_dead_code (issue 16): the branch around an empty arm
became a "diamond" whose two arms were the join block itself, so if_convert emitted
the join block twice under the branch's predicate (`@!P0 MOV R11, 0x0` twice; a
shift that ran twice or never).  Random shapes of empty, dead and live arms
(scripts/fuzz_kernels.py --style regions) are compared with nvcc on the emulator,
ptxc's cubin with the hazard checker and ptxas's cubin of ptxc's PTX; the seeds kept
here are ones the old passes got wrong.  The pass-level case is
testsuite/lower/if_convert_empty_arm.ptx."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.cli.check import check_command

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import fuzz_kernels  # noqa: E402

pytestmark = [pytest.mark.oracle,
              pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")]

ISSUE_CASES = {
    "dead_sinf": """// LAUNCH: k grid=1 block=64 fa=f32[64]:rand ua=u32[64]:rand fo=f32[64]:zero
__global__ void k(const float *fa, const unsigned *ua, float *fo) {
    int i = threadIdx.x;
    float f0 = fa[i];
    if (ua[i] & 1u) { float unused = sinf(f0); f0 = 0.0f; }
    fo[i] = f0 + 1.0f;
}
""",
    "empty_if_in_helper": """// LAUNCH: k grid=1 block=64 ua=u32[64]:randint(0,15) uo=u32[64]:zero
__device__ unsigned h(unsigned x) { if (x < 5u) {} return x << 1; }
__global__ void k(const unsigned *ua, unsigned *uo) {
    int i = threadIdx.x;
    unsigned x = ua[i];
    if (x & 2u) { if (x & 4u) x += 7u; x = h(x); }
    uo[i] = x;
}
""",
}


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("name", sorted(ISSUE_CASES))
def test_issue_case_matches_nvcc(name, arch, tmp_path, capsys):
    path = tmp_path / f"{name}.cu"
    path.write_text(ISSUE_CASES[name])
    status = check_command([str(path), f"-arch={arch}", "--check-hazards"])
    out = capsys.readouterr().out
    assert status == 0, out


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("seed", [0, 15, 55])
def test_random_regions_match_nvcc(seed, arch, tmp_path):
    source = fuzz_kernels.Regions(random.Random(seed)).kernel()
    problems = fuzz_kernels.compare(fuzz_kernels.outputs(source, tmp_path, arch), 6)
    assert not problems, "\n".join(problems) + "\n" + source
