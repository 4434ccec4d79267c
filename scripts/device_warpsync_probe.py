#!/usr/bin/env python3
"""Does a WARPSYNC whose mask leaves out a thread executing it stop the GPU?

    python scripts/device_warpsync_probe.py prepare DIR   # here: ptxas's and ptxc's sm_90 cubins
    python scripts/device_warpsync_probe.py run DIR       # on the GPU machine

The kernel is tests/test_emu_faults.py's PARTIAL_VOTE: `vote.sync.ballot` with mask
0xffff in an if/else arm that all 32 lanes take.  Both ptxas -arch=sm_90 and ptxc put
`WARPSYNC 0xffff` before the VOTE; the emulator stops such a launch as an illegal
instruction.  `run` launches both cubins (one warp) and prints what the GPU says.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def prepare(out: Path) -> None:
    from ptxc import oracle
    from ptxc.driver import cubin_bytes, load_module, lower_module
    from ptxc.lower.pipeline import Options
    from test_emu_faults import PARTIAL_VOTE
    out.mkdir(parents=True, exist_ok=True)
    ptx = out / "partial_vote.ptx"
    ptx.write_text(PARTIAL_VOTE)
    oracle.ptxas(ptx, out / "partial_vote.ptxas.cubin", "sm_90")
    module = load_module(str(ptx), PARTIAL_VOTE, "sm_90")
    (out / "partial_vote.ptxc.cubin").write_bytes(
        cubin_bytes(lower_module(module, Options(arch="sm_90", filename=str(ptx))), "sm_90"))


def run(out: Path) -> None:
    """Each cubin in a process of its own: an illegal instruction leaves the CUDA
    context unusable for the rest of the process."""
    import subprocess
    for who in ("ptxas", "ptxc"):
        proc = subprocess.run([sys.executable, __file__, "run-one", str(out / f"partial_vote.{who}.cubin")],
                              capture_output=True, text=True, timeout=60)
        print(f"{who}: {(proc.stdout + proc.stderr).strip().splitlines()[-1:]}")


def run_one(path: Path) -> None:
    import numpy as np
    from ptxc.device import GPU, DeviceError
    gpu = GPU()
    try:
        module = gpu.load_cubin(path.read_bytes(), path.name, "sm_90")
        buf = gpu.alloc(32 * 4)
        gpu.launch(module.function("k"), (1, 1, 1), (32, 1, 1), int(buf).to_bytes(8, "little"))
        host = np.zeros(32, np.uint32)
        gpu.download(buf, host)
        print(f"ran, out[0]={host[0]:#x} out[31]={host[31]:#x}")
    except DeviceError as err:
        print(err)


if __name__ == "__main__":
    {"prepare": prepare, "run": run, "run-one": run_one}[sys.argv[1]](Path(sys.argv[2]))
