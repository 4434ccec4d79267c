"""The GPU as the emulator's oracle: run every testsuite launch on real silicon and keep
what it computed.

    python scripts/gpu_oracle.py prepare DIR      # here: sm_90 cubins, inputs, a manifest
    python scripts/gpu_oracle.py run DIR OUT      # on a machine with a GPU and CuPy
    python scripts/gpu_oracle.py compare DIR OUT  # here: the emulator (nvcc's sm_89 cubins) vs OUT
    python scripts/gpu_oracle.py golden DIR OUT   # here: keep the GPU's results for the tests
                                                   # (tests/data/emu_gpu/h200.npz, read by test_emu_gpu.py)

The GPU lent here is an H200 (sm_90), which refuses sm_89 cubins, so it runs nvcc's
sm_90 build of the same source, launch by launch, each from the launch line's initial
buffers (as tests/test_emu_kernels.py runs them).  Where the two architectures' code is
the same arithmetic, results must agree bit for bit; they may differ where the answer
depends on the order of float atomics (nondeterministic on a GPU) or on MUFU's
approximations (the emulator's are correctly rounded).  `run` needs only NumPy and CuPy.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ptxc.emu.names import resolve_instance_name


def prepare(out_dir: Path) -> None:
    """Compile each testsuite file for sm_89 and sm_90 and write the launches' inputs."""
    from ptxc import oracle
    from ptxc.emu.device import Device
    from ptxc.launch.spec import Buffer, initial_contents, kernel_signatures, parse_file, scalar_bytes
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = []
    arrays = {}
    for path in sorted((ROOT / "testsuite").glob("*.cu")):
        source = path.read_text()
        launches = parse_file(source, path.name)
        if not launches:
            continue
        stem = path.stem
        for arch in ("sm_89", "sm_90"):
            oracle.nvcc_cubin(path, out_dir / f"{stem}.{arch}.cubin", arch)
        module = Device().load((out_dir / f"{stem}.sm_89.cubin").read_bytes(), stem)
        sigs = kernel_signatures(source, path.name)
        for index, launch in enumerate(launches):
            kernel = module.kernel(resolve_instance_name(launch.kernel, source))
            sig = sigs.get(launch.kernel)
            params = []
            for pos, (item, (off, size)) in enumerate(zip(launch.items, kernel.params)):
                if isinstance(item, Buffer):
                    key = f"{stem}.{index}.{item.name}"
                    arrays[key] = initial_contents(item, launch.seed)
                    params.append({"buffer": key})
                else:
                    kind = sig.params[pos][1] if sig and pos < len(sig.params) else None
                    params.append({"bytes": scalar_bytes(item.text, size, None if kind is None
                                                         else kind == "float").hex()})
            manifest.append({"file": stem, "index": index, "kernel": kernel.name, "grid": list(launch.grid),
                             "block": list(launch.block), "shared": launch.shared, "params": params,
                             "ulp": launch.ulp, "line": launch.text})
    np.savez_compressed(out_dir / "inputs.npz", **arrays)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest)} launches prepared in {out_dir}")


def run(in_dir: Path, out_dir: Path) -> None:
    """On the GPU: every launch from its initial buffers; all buffers saved afterwards."""
    import cupy as cp
    manifest = json.loads((in_dir / "manifest.json").read_text())
    inputs = np.load(in_dir / "inputs.npz")
    modules = {}
    results = {}
    failures = []
    for entry in manifest:
        stem = entry["file"]
        if stem not in modules:
            modules[stem] = cp.RawModule(path=str(in_dir / f"{stem}.sm_90.cubin"))
        try:
            fn = modules[stem].get_function(entry["kernel"])
            args, buffers = [], {}
            for p in entry["params"]:
                if "buffer" in p:
                    arr = cp.asarray(inputs[p["buffer"]])
                    buffers[p["buffer"]] = arr
                    args.append(arr)
                else:
                    raw = bytes.fromhex(p["bytes"])
                    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[len(raw)]
                    args.append(np.frombuffer(raw, dtype=dtype)[0])
            fn(tuple(entry["grid"]), tuple(entry["block"]), tuple(args), shared_mem=entry["shared"])
            cp.cuda.Device().synchronize()
            for key, arr in buffers.items():
                results[key] = cp.asnumpy(arr)
        except Exception as exc:  # noqa: BLE001 - record and go on with the next launch
            failures.append(f"{stem}:{entry['kernel']}: {type(exc).__name__}: {exc}")
            cp.cuda.Device().synchronize()
    out_dir.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out_dir / "gpu.npz", **results)
    (out_dir / "failures.txt").write_text("\n".join(failures) + "\n")
    print(f"{len(results)} buffers from {len(manifest)} launches; {len(failures)} failures")
    for f in failures:
        print("  ", f)


def emulate(in_dir: Path, entry: dict, inputs) -> dict:
    """The emulator's buffers for one manifest entry (nvcc's sm_89 cubin)."""
    from ptxc.emu.device import Device
    dev = Device()
    kernel = dev.load((in_dir / f"{entry['file']}.sm_89.cubin").read_bytes(), entry["file"]).kernel(entry["kernel"])
    args, addresses = [], {}
    for p in entry["params"]:
        if "buffer" in p:
            data = inputs[p["buffer"]]
            address = dev.malloc(data.nbytes, p["buffer"])
            dev.memory.write(address, data)
            addresses[p["buffer"]] = (address, data.dtype, data.size)
            args.append(address)
        else:
            args.append(bytes.fromhex(p["bytes"]))
    dev.launch(kernel, tuple(entry["grid"]), tuple(entry["block"]), args, entry["shared"], max_steps=50_000_000)
    return {key: dev.memory.view(a, dt, n).copy() for key, (a, dt, n) in addresses.items()}


def compare(in_dir: Path, gpu_dir: Path) -> int:
    from ptxc.emu.device import LaunchError
    from ptxc.launch.bind import differences
    manifest = json.loads((in_dir / "manifest.json").read_text())
    inputs = np.load(in_dir / "inputs.npz")
    gpu = np.load(gpu_dir / "gpu.npz")
    bad = 0
    for entry in manifest:
        name = f"{entry['file']}:{entry['kernel']}"
        keys = [p["buffer"] for p in entry["params"] if "buffer" in p]
        if not all(k in gpu for k in keys):
            print(f"{name}: not run on the GPU")
            continue
        try:
            emu = emulate(in_dir, entry, inputs)
        except LaunchError as err:
            print(f"{name}: the emulator failed: {str(err).splitlines()[0]}")
            bad += 1
            continue
        worst = []
        for key in keys:
            diffs = differences(key, emu[key], gpu[key], 0)
            if diffs:
                worst.append((key, len(diffs), diffs[:3]))
        if worst:
            bad += 1
            print(f"{name}: " + "; ".join(f"{k.split('.')[-1]}: {n} differ, e.g. " + ", ".join(
                f"[{i}] emu {a!r} gpu {b!r}" for i, a, b in d) for k, n, d in worst))
        else:
            print(f"{name}: identical")
    return 1 if bad else 0


GOLDEN = ROOT / "tests" / "data" / "emu_gpu" / "h200.npz"


def golden(in_dir: Path, gpu_dir: Path, dest: Path = GOLDEN) -> None:
    """Keep the buffers each launch changed on the GPU, with the launch lines they came
    from (a test skips entries whose line has changed since)."""
    manifest = json.loads((in_dir / "manifest.json").read_text())
    inputs = np.load(in_dir / "inputs.npz")
    gpu = np.load(gpu_dir / "gpu.npz")
    keep = {}
    entries = []
    for entry in manifest:
        keys = [p["buffer"] for p in entry["params"] if "buffer" in p]
        if not all(k in gpu for k in keys):
            continue
        changed = [k for k in keys if gpu[k].tobytes() != inputs[k].tobytes()]
        for k in changed:
            keep[k] = gpu[k]
        entries.append({"file": entry["file"], "index": entry["index"], "kernel": entry["kernel"],
                        "line": entry["line"], "buffers": changed})
    dest.parent.mkdir(parents=True, exist_ok=True)
    keep["__manifest__"] = np.frombuffer(json.dumps(entries).encode(), dtype=np.uint8)
    np.savez_compressed(dest, **keep)
    print(f"{len(entries)} launches, {len(keep) - 1} buffers -> {dest}")


if __name__ == "__main__":
    verb, *paths = sys.argv[1:]
    if verb == "prepare":
        prepare(Path(paths[0]))
    elif verb == "run":
        run(Path(paths[0]), Path(paths[1]))
    elif verb == "compare":
        sys.exit(compare(Path(paths[0]), Path(paths[1])))
    elif verb == "golden":
        golden(Path(paths[0]), Path(paths[1]), Path(paths[2]) if len(paths) > 2 else GOLDEN)
    else:
        sys.exit(f"unknown verb {verb!r}: prepare, run or compare")
