"""The emulator's semantics, form by form (scripts/hw_forms.py): every PTX instruction
form of the catalog, with edge-case and random operands, compiled by ptxas and by ptxc
for sm_89 and sm_90 and run on the emulator.

- ptxas's cubin on the emulator gives what the Python reference gives, for every form
  that has one (integer arithmetic, bit operations, compares, integer and float
  conversions in every rounding, f16/bf16 conversions, votes, reductions, shuffles);
- ptxc's cubin gives what ptxas's gives (on the emulator);
- every launch the emulator refuses is one tests/data/hw_forms_tolerances.json names
  with its reason (today: words the tables cannot decode yet);

and the same on the H200 (the `device` test, or `hw_forms.py run` + `compare`:
docs/emulator.md "Checked against silicon").  Also nvcc's own sm_90 code with per-half-warp
masks (WARPSYNC.EXCLUSIVE, WARPSYNC.COLLECTIVE) against NumPy.
"""
from __future__ import annotations

import fnmatch
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from ptxc import oracle

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import hw_forms as H  # noqa: E402



@pytest.fixture(scope="module")
def work(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hw_forms")
    H.prepare(folder, H.ARCHS)
    return folder


@pytest.fixture(scope="module")
def findings(work):
    return H.emulate(work, verbose=False)


def _show(diffs: dict) -> str:
    return "\n".join(f"{k}: {v['bad']} slots, e.g. {'; '.join(v['examples'][:2])}"
                     for k, v in sorted(diffs.items()) if v["bad"])


def test_catalog_covers_the_brief():
    names = {f.name for f in H.forms()}
    for want in ("shl.b32", "shr.s64", "shf.l.clamp.b32", "shf.r.wrap.b32", "bfe.s64", "bfi.b32", "prmt.b32.f4e",
                 "lop3.b32.0x96", "mul.hi.u64", "mad.wide.s32", "div.s64", "rem.u32", "setp.ltu.f32", "testp.subnormal.f64",
                 "fma.rm.ftz.sat.f32", "div.rp.f64", "sqrt.rz.f32", "ex2.approx.ftz.f32", "cvt.rpi.s64.f64",
                 "cvt.sat.u8.s32", "cvt.rz.f32.u64", "cvt.rn.bf16x2.f32", "fma.rn.bf16x2", "copysign.f32",
                 "shfl.sync.idx.b32.half", "vote.sync.ballot.b32.half", "match.any.sync.b64", "redux.sync.min.s32",
                 "atom.global.cas.b64", "atom.global.add.f64", "red.global.xor.b64", "atom.global.max.s64.same"):
        assert want in names, want
    assert len(names) > 900
    # every operand type's edge values are in every form's cases
    form = next(f for f in H.forms() if f.name == "add.rn.f32")
    cols = H.operand_values(form)
    for v in (0x80000000, 0x00000001, 0x7f800001, 0xffc12345, 0x7f800000):
        assert v in cols[0] and v in cols[1]


@pytest.mark.oracle
def test_emulator_matches_the_reference(findings):
    bad = {k: v for k, v in findings["reference"].items() if v["bad"]}
    assert not bad, "the emulator (ptxas's cubin) differs from the reference:\n" + _show(bad)


@pytest.mark.oracle
def test_ptxc_cubin_matches_ptxas_cubin(findings):
    known = json.loads(H.TOLERANCES.read_text()).get("ptxc_bugs", [])

    def is_known(key):
        return any(fnmatch.fnmatch(key.split(" ")[1], p) for k in known for p in k["forms"])
    bad = {k: v for k, v in findings["ptxc_vs_ptxas"].items() if v["bad"]}
    assert not {k: v for k, v in bad.items() if not is_known(k)}, \
        "ptxc's cubin differs from ptxas's on the emulator:\n" + _show({k: v for k, v in bad.items() if not is_known(k)})
    for entry in known:
        for pattern in entry["forms"]:
            assert any(fnmatch.fnmatch(k.split(" ")[1], pattern) for k in bad), \
                f"{pattern} now agrees with ptxas: remove it from ptxc_bugs in {H.TOLERANCES.name}"


@pytest.mark.oracle
def test_every_refused_launch_is_a_known_gap(findings):
    known = json.loads(H.TOLERANCES.read_text())["launch"]
    unknown = {}
    for key, why in findings["launch_errors"].items():
        form = key.split(" ")[1]
        if not any(any(fnmatch.fnmatch(form, p) for p in k["forms"]) and k["error"] in why for k in known):
            unknown[key] = why
    assert not unknown, "the emulator refuses:\n" + "\n".join(f"{k}: {v}" for k, v in sorted(unknown.items()))


@pytest.mark.oracle
@pytest.mark.parametrize("arch", H.ARCHS)
def test_regression_forms_were_checked(work, findings, arch):
    """The forms whose emulation was fixed (F2FP.BF16, WARPSYNC per half-warp, I2F/F2I
    with f16, signed FLO, -0 to f16; then the first H200 run's findings) ran and met
    their reference: not skipped."""
    manifest = json.loads((work / "manifest.json").read_text())
    ran = set()
    for entry in manifest["groups"]:
        if entry["arch"] == arch and "ptxas" in entry["cubins"]:
            ran |= set(entry["ptxas_forms"])
    refused = {k.split(" ")[1] for k in findings["launch_errors"] if k.startswith(arch) and "(ptxas)" in k}
    for name in ("cvt.rn.bf16x2.f32", "cvt.rz.bf16.f32", "cvt.rn.f16.s32", "cvt.rz.f16.u64", "cvt.rni.s64.f16",
                 "cvt.rn.f16.f32", "cvt.rz.f16.f32", "bfind.s32", "bfind.shiftamt.s64",
                 # after the first H200 run (docs/hw-forms.md): F2IP, I2I.SAT, the div.rn.f32
                 # slow path (a BSYNC deadlock), f64 NaN payloads, F2I of NaN, min/max.NaN,
                 # prmt's modes, .ftz f16, 64-bit and f16x2 atomics
                 "cvt.rni.u8.f32", "cvt.rzi.u8.f32", "cvt.sat.s16.s32", "cvt.sat.u8.s32", "div.rn.f32",
                 "add.f64", "fma.rm.f64", "mul.rz.f64", "neg.f64", "sqrt.rn.f64", "cvt.rzi.s32.f64",
                 "cvt.rzi.u64.f32", "cvt.rn.f32.f64", "cvt.f64.f32", "max.NaN.f32", "min.NaN.f16x2",
                 "prmt.b32.b4e", "prmt.b32.rc16", "add.rn.ftz.f16", "mul.rn.ftz.f16x2", "atom.global.max.s64",
                 "atom.global.add.f64", "red.global.add.noftz.f16x2",
                 *(("shfl.sync.idx.b32.half", "vote.sync.ballot.b32.half", "cvt.rn.bf16.f16", "cvt.rn.f16.bf16",
                    "max.NaN.bf16x2", "atom.global.add.noftz.bf16x2") if arch == "sm_90" else ())):
        assert name in ran and name not in refused, name


# ---- nvcc's sm_90 code for per-half-warp masks: WARPSYNC.EXCLUSIVE / .COLLECTIVE ------------
HALF_WARPS = r"""
__global__ void ballot_any(unsigned *o, const unsigned *a) {
  unsigned t = threadIdx.x;
  unsigned m = 0xffffu << (t & 16);
  o[t] = __ballot_sync(m, a[t] & 1) + __any_sync(m, a[t] > 4);
}
__global__ void reduce_match(unsigned *o, const unsigned *a) {
  unsigned t = threadIdx.x;
  unsigned m = ((t & 31) < 16) ? 0x0000ffffu : 0xffff0000u;
  o[t] = __reduce_add_sync(m, a[t]) ^ __match_any_sync(m, a[t] & 3);
}
__global__ void divergent_shuffles(unsigned *o, const unsigned *a) {
  unsigned t = threadIdx.x;
  unsigned v = a[t];
  if (t & 16) { v = __shfl_xor_sync(0xffff0000u, v, 1); } else { v = __shfl_xor_sync(0x0000ffffu, v, 2); }
  o[t] = v;
}
"""


def _half_warp_reference(name: str, a: np.ndarray) -> np.ndarray:
    out = np.zeros(64, np.uint32)
    for t in range(64):
        half = [(t & ~15) + k for k in range(16)]
        if name == "ballot_any":
            ballot = sum(int(a[k] & 1) << (k & 31) for k in half)
            out[t] = (ballot + int(any(a[k] > 4 for k in half))) & 0xFFFFFFFF
        elif name == "reduce_match":
            total = sum(int(a[k]) for k in half) & 0xFFFFFFFF
            match = sum(1 << (k & 31) for k in half if (a[k] & 3) == (a[t] & 3))
            out[t] = total ^ match
        else:
            out[t] = a[t ^ (1 if t & 16 else 2)]
    return out


@pytest.mark.oracle
def test_nvcc_half_warp_masks_run(tmp_path):
    """nvcc writes WARPSYNC.EXCLUSIVE R0 (per half-warp masks) and WARPSYNC.COLLECTIVE for
    these on sm_90; the emulator used to take lane 0's mask for the whole warp and stop
    the launch as an illegal WARPSYNC, which the H200 runs."""
    from ptxc.emu.device import Device
    cu = tmp_path / "half_warps.cu"
    cu.write_text(HALF_WARPS)
    cubin = oracle.nvcc_cubin(cu, tmp_path / "half_warps.cubin", "sm_90").read_bytes()
    assert "WARPSYNC.EXCLUSIVE" in oracle.cuobjdump_sass(tmp_path / "half_warps.cubin")
    a = np.random.default_rng(5).integers(0, 10, 64).astype(np.uint32)
    for name in ("ballot_any", "reduce_match", "divergent_shuffles"):
        dev = Device()
        module = dev.load(cubin, "half_warps.cubin")
        kernel = next(module.kernel(k) for k in [f"_Z{len(name)}{name}PjPKj"])
        pa, po = dev.malloc(a.nbytes, "a"), dev.malloc(a.nbytes, "o")
        dev.memory.write(pa, a)
        dev.launch(kernel, (1, 1, 1), (64, 1, 1), [po, pa], 0)
        got = dev.memory.view(po, np.uint32, 64)
        assert (got == _half_warp_reference(name, a)).all(), (name, got, _half_warp_reference(name, a))


# ---- the H200 --------------------------------------------------------------------------------
class EmulatedGPU:
    """The emulator behind ptxc.device's GPU interface (what run_device calls), so that
    the device step's plumbing is tested here: `run` then `compare` must agree."""

    def __init__(self):
        from ptxc.emu.device import Device
        self.dev = Device()

    def describe(self):
        return "the emulator standing in for a GPU"

    def load_cubin(self, data, filename, arch):
        dev = self.dev

        class Module:
            def __init__(self):
                self.module = dev.load(data, filename)

            def function(self, name):
                return self.module.kernel(name)

            def unload(self):
                pass
        return Module()

    def alloc(self, nbytes):
        return self.dev.malloc(nbytes)

    def free(self, address):
        pass

    def upload(self, address, array):
        self.dev.memory.write(address, array)

    def download(self, address, array):
        array[:] = self.dev.memory.view(address, array.dtype, array.size)

    def launch(self, function, grid, block, params, shared=0, repeat=1, timeout=None):
        from ptxc.device.driver_api import DeviceError
        from ptxc.emu.device import LaunchError
        args = [int.from_bytes(params[0:8], "little"), int.from_bytes(params[8:16], "little"), params[16:20]]
        try:
            self.dev.launch(function, grid, block, args, shared, max_steps=10_000_000)
        except LaunchError as err:
            raise DeviceError(str(err)) from None
        return 0.0

    def recover(self):
        pass


@pytest.mark.oracle
def test_device_step_plumbing(tmp_path):
    """prepare -> emulate -> run (on the emulator standing in for the GPU) -> compare: no
    difference, and a launch the machine refuses is reported per form."""
    work = tmp_path / "w"
    H.prepare(work, ("sm_90",), True, "shf.*")
    H.emulate(work, verbose=False)
    out = tmp_path / "gpu.json"
    H.run_device(work, out, EmulatedGPU())
    report = json.loads(out.read_text())
    assert report["results"] and all("error" not in r for r in report["results"].values())
    found = H.compare(work, out, verbose=False)
    assert not found["emulator_vs_gpu"] and not found["ptxc_vs_ptxas_on_gpu"] and not found["errors"], found
    # a GPU that gives other bits is caught, form by form
    first = next(iter(report["results"].values()))
    slots = H.decode_slots(first["out"]).copy()
    slots[0] ^= 1
    first["out"] = H.encode_slots(slots)
    out.write_text(json.dumps(report))
    found = H.compare(work, out, verbose=False)
    assert list(found["emulator_vs_gpu"]) == ["shf.l.wrap.b32"], found["emulator_vs_gpu"]


@pytest.mark.device
def test_gpu_matches_emulator(tmp_path):
    """On a machine with the GPU and a prepared WORK ($PTXC_HW_FORMS, from `hw_forms.py
    prepare` + `emulate` here): the H200's slots equal the emulator's, bit for bit, up to
    the recorded tolerances."""
    import os
    from ptxc.device import available
    if not available():
        pytest.skip("no CUDA GPU")
    work = Path(os.environ.get("PTXC_HW_FORMS", ROOT / ".hw_forms"))
    if not (work / "manifest.json").exists():
        pytest.skip(f"no prepared forms in {work} (python scripts/hw_forms.py prepare {work})")
    out = tmp_path / "gpu.json"
    H.run_device(work, out)
    found = H.compare(work, out, verbose=False)
    assert not found["emulator_vs_gpu"], _show(found["emulator_vs_gpu"])
