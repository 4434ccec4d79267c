"""The emulator against real silicon: every testsuite launch, run on an H200 (nvcc's
sm_90 build of the same source, from the same launch-line inputs), kept in
tests/data/emu_gpu/h200.npz by `python scripts/gpu_oracle.py golden` (see that module
for how to regenerate it).  The emulator runs nvcc's sm_89 cubin and must give the same
bytes, except where the GPU's answer is not a function of the inputs alone or rests on
the special-function unit's approximations (KNOWN below).  A launch whose line changed
since the GPU run is skipped; so is one the instruction table cannot decode yet.
"""
from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest

from ptxc import oracle
from ptxc.emu.device import LaunchError
from ptxc.launch.spec import parse_file
from ptxc.launch import differences, run_launches

pytestmark = pytest.mark.oracle
ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "emu_gpu" / "h200.npz"

# kernel (plain name) -> (allowed ulp, or a function of the buffer length giving it per element, why)
KNOWN = {
    "float_math": (2, "expf/logf/sinf/powf/tanhf rest on MUFU.EX2/LG2/SIN/COS; the emulator's are correctly rounded"),
    "math_float": (2, "the same library functions"),
    "fast_math": (None, "__sinf/__cosf/__logf/__expf are bare MUFU; sums of them cancel, so errors grow"),
    "math_fast": (None, "bare MUFU, as fast_math"),
    "nbody": (None, "rsqrtf is MUFU.RSQ, accumulated over 128 bodies"),
    "warp_sum": (None, "float atomicAdd from 32 blocks: the GPU's order is not the emulator's"),
    "struct_global": (None, "thread i reads particle i+1, which another warp updates without synchronization"),
    "read_counter": (None, "reads __device__ variables another kernel of the file set on the GPU run"),
    # o[15] = (double)expf((float)a) + (double)sinf((float)b): float library results on MUFU,
    # widened.  An operand's float ulp is 2^29 double ulps; where the two cancel (expf ~ -sinf)
    # one operand ulp is up to 16 ulps of the sum: 2^33.  The other 15 double results must be exact.
    "math_double": (lambda n: np.where(np.arange(n) % 16 == 15, 2 ** 33, 0),
                    "o[15] sums float expf and sinf (MUFU.EX2, MUFU.SIN)"),
    "softmax": (2, "expf rests on MUFU.EX2, whose hardware result the emulator does not reproduce bit for bit"),
}


def golden():
    data = np.load(GOLDEN)
    manifest = json.loads(bytes(data["__manifest__"]).decode())
    return data, manifest


def entries():
    if not GOLDEN.exists():
        return []
    _, manifest = golden()
    return [pytest.param(e, id=f"{e['file']}:{e['index']}") for e in manifest]


@functools.lru_cache(maxsize=None)
def nvcc_cubin(stem: str) -> bytes:
    out = Path(tempfile.mkdtemp(prefix="emu-gpu-")) / f"{stem}.cubin"
    oracle.nvcc_cubin(ROOT / "testsuite" / f"{stem}.cu", out)
    return out.read_bytes()


@pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")
@pytest.mark.parametrize("entry", entries())
def test_emulator_matches_h200(entry):
    path = ROOT / "testsuite" / f"{entry['file']}.cu"
    if not path.exists():
        pytest.xfail("the testsuite file is gone: regenerate the GPU goldens")
    source = path.read_text()
    launches = parse_file(source, path.name)
    index = entry["index"]
    if index >= len(launches) or launches[index].text != entry["line"]:
        pytest.xfail("the launch line changed since the GPU run: regenerate with python scripts/gpu_oracle.py")
    launch = launches[index]
    try:
        run = run_launches(nvcc_cubin(entry["file"]), launches, source, path.name, only={index},
                           max_steps=50_000_000)
    except LaunchError as err:
        if err.kind == "unsupported":
            pytest.xfail("an instruction the table cannot decode yet")
        raise
    data, _ = golden()
    allowed, why = KNOWN.get(launch.kernel, (0, ""))
    if allowed is None:
        pytest.xfail(why)
    keys = dict(zip([i.name for i in launch.items if hasattr(i, "count")], run.launch_buffers[index]))
    for golden_key in entry["buffers"]:
        name = golden_key.split(".", 2)[2]
        got = run.buffers[keys[name]]
        want = data[golden_key]
        bad = differences(name, got, want, allowed(len(got)) if callable(allowed) else allowed)
        assert not bad, (f"{entry['file']}:{launch.kernel} buffer '{name}': {len(bad)} elements differ from the "
                         f"H200 beyond the allowed ulp; first: "
                         + ", ".join(f"[{i}] emulator {a!r} gpu {b!r}" for i, a, b in bad[:5]))
