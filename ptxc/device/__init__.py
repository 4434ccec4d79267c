"""Running kernels on a real GPU: what the emulator does, on silicon.

    from ptxc.device import GPU, cubin_image, run_launches
    gpu = GPU()                                   # NoDevice: "no CUDA GPU available ..."
    image = cubin_image(open("vadd.cubin", "rb").read(), "vadd.cubin")   # or ptx_image(text)
    run = run_launches(gpu, image, launches, source, "vadd.cu")          # launches: // LAUNCH: lines
    run.buffers["c"], run.times_ms

A cubin must be for the GPU's architecture (ArchMismatch otherwise: the H200 is sm_90);
PTX text is compiled by the driver's JIT (which takes `.version` up to what the driver
knows: 9.0 for driver 580).  Parameters are packed into one buffer at the offsets the
cubin's KPARAM_INFO records give (ptxc.cubin.reader), or, for PTX, at the offsets its
`.param` declarations give (each at its natural alignment, as ptxas places them).  The
driver API is imported lazily (driver_api.py); importing this package needs no GPU.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .driver_api import ArchMismatch, DeviceError, GPU, NoDevice, available, ptx_target

__all__ = ["ArchMismatch", "DeviceError", "GPU", "NoDevice", "available", "Image", "cubin_image", "ptx_image",
           "ptx_params", "GPURun", "run_launches"]


@dataclass
class Image:
    """Something the driver loads: a cubin (bytes) or PTX text, with each kernel's
    parameters [(offset, size)] by ordinal, keyed by mangled name."""
    kind: str                  # "cubin" or "ptx"
    data: bytes | str
    name: str
    params: dict
    arch: str | None = None    # a cubin's SM (from its ELF header); PTX: its .target


def cubin_image(data: bytes, filename: str = "x.cubin") -> Image:
    from ..cubin.reader import read_cubin
    cubin = read_cubin(data, filename)
    return Image("cubin", bytes(data), filename, {k.name: list(k.params) for k in cubin.kernels}, cubin.arch)


def ptx_image(text: str, filename: str = "x.ptx") -> Image:
    return Image("ptx", text, filename, ptx_params(text), ptx_target(text)[1])


# `.param .u64 name`, `.param .align 8 .b8 name[24]`, `.param .u64 .ptr .global .align 4 name`
PARAM = re.compile(r"\.param\s+(?:\.align\s+(?P<align>\d+)\s+)?\.(?P<type>[a-z]+)(?P<bits>\d+)"
                   r"(?:\s+\.ptr(?:\s+\.[a-z]+)*(?:\s+\.align\s+\d+)?)?\s+(?P<name>[\w$]+)(?:\s*\[(?P<count>\d+)\])?")
ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)", re.S)


def ptx_params(text: str) -> dict:
    """{kernel: [(offset, size)]} from the `.entry` declarations of PTX text: each
    parameter at the next multiple of its alignment (its `.align`, else its size)."""
    out = {}
    for m in ENTRY.finditer(text):
        offset, params = 0, []
        for p in PARAM.finditer(m.group(2)):
            size = int(p.group("bits")) // 8 * int(p.group("count") or 1)
            align = int(p.group("align") or int(p.group("bits")) // 8)
            offset = -(-offset // align) * align
            params.append((offset, size))
            offset += size
        out[m.group(1)] = params
    return out


@dataclass
class GPURun:
    """Buffers after all launches, by name (as ptxc.emu.specrun.SpecRun has them)."""
    buffers: dict = field(default_factory=dict)      # name -> np.ndarray (final contents)
    initial: dict = field(default_factory=dict)      # name -> np.ndarray (before the first launch)
    ulp: dict = field(default_factory=dict)          # name -> allowed ulps
    specs: dict = field(default_factory=dict)        # name -> launch_spec.Buffer
    times_ms: list = field(default_factory=list)     # per launch: mean milliseconds of one launch


def find_kernel(image: Image, name: str) -> str:
    """The mangled name in `image` of the kernel a LAUNCH line calls `name`."""
    from ..emu.names import demangle_base
    if name in image.params:
        return name
    matches = [k for k in image.params if demangle_base(k) == name]
    if len(matches) != 1:
        what = "is ambiguous (overloads)" if matches else f"is not there (it has: {', '.join(sorted(image.params))})"
        raise DeviceError(f"{image.name}: kernel '{name}' {what}")
    return matches[0]


def run_launches(gpu: GPU, image: Image, launches: list, source: str, filename: str,
                 repeat: int = 0) -> GPURun:
    """Run a kernel file's launches (ptxc.emu.launch_spec.parse_file) on `image`, then
    read every buffer back.  With `repeat`, each launch is also timed over that many
    further launches (after all launches ran once, so buffers are final before timing)."""
    from ..emu.launch_spec import Buffer, initial_contents, kernel_signatures, scalar_bytes
    module = gpu.load_cubin(image.data, image.name, image.arch) if image.kind == "cubin" \
        else gpu.load_ptx(image.data, image.name)
    signatures = kernel_signatures(source, filename)
    run, addresses, bound, calls = GPURun(), {}, {}, []
    try:
        for launch in launches:
            kernel = find_kernel(image, launch.kernel)
            params = image.params[kernel]
            if len(launch.items) != len(params):
                raise DeviceError(f"{filename}:{launch.line}: kernel '{launch.kernel}' takes {len(params)} "
                                  f"argument(s); the LAUNCH line gives {len(launch.items)}")
            sig = signatures.get(launch.kernel)
            buffer = bytearray(max((o + s for o, s in params), default=0))
            for position, (item, (offset, size)) in enumerate(zip(launch.items, params)):
                kind = sig.params[position][1] if sig and position < len(sig.params) else None
                if isinstance(item, Buffer):
                    key = bound.get(item.name)
                    old = run.specs.get(key)
                    if old is None or (old.type, old.count) != (item.type, item.count):
                        key = item.name if key is None else f"{item.name}@{launch.line}"
                        data = initial_contents(item, launch.seed)
                        addresses[key] = gpu.alloc(item.nbytes)
                        gpu.upload(addresses[key], np.ascontiguousarray(data))
                        run.specs[key], run.initial[key], bound[item.name] = item, data, key
                    run.ulp[key] = max(run.ulp.get(key, 0), launch.ulp)
                    value = addresses[key].to_bytes(8, "little")
                else:
                    value = scalar_bytes(item.text, size, None if kind is None else kind == "float")
                buffer[offset:offset + size] = value[:size]
            function = module.function(kernel)
            gpu.launch(function, launch.grid, launch.block, bytes(buffer), launch.shared)
            calls.append((function, launch, bytes(buffer)))
        for key, spec in run.specs.items():
            out = np.empty(spec.count, spec.dtype)
            gpu.download(addresses[key], out)
            run.buffers[key] = out
        for function, launch, buffer in calls:
            run.times_ms.append(gpu.launch(function, launch.grid, launch.block, buffer, launch.shared, repeat)
                                if repeat else None)
    finally:
        try:
            for address in addresses.values():
                gpu.free(address)
            module.unload()
        except DeviceError:
            pass  # after a fault the context is gone: the launch's own error is the one to report
    return run
