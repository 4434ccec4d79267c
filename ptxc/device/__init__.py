"""Running kernels on a real GPU: what the emulator does, on silicon.

    from ptxc.device import GPU, cubin_image, run_launches
    gpu = GPU()                                   # NoDevice: "no CUDA GPU available ..."
    image = cubin_image(open("vadd.cubin", "rb").read(), "vadd.cubin")   # or ptx_image(text)
    run = run_launches(gpu, image, launches, source, "vadd.cu")          # launches: // LAUNCH: lines
    run.buffers["c"], run.times_ms

`ptxc run --device` runs a host program on it through host_gpu.HostGPU (the emulated
GPU's interface for ptxc.host's interpreter); `ptxc check --device` compares two images'
runs of a file's LAUNCH lines (ptxc/emu/cli.py).

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

from .driver_api import (ArchMismatch, DeviceError, DeviceTimeout, GPU, NoDevice, available, jit_ptx_version,
                         ptx_target)

__all__ = ["ArchMismatch", "DeviceError", "DeviceTimeout", "GPU", "NoDevice", "available", "jit_ptx_version",
           "Image", "cubin_image", "ptx_image", "ptx_params", "GPURun", "run_launches", "find_kernel"]


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
    launch_buffers: list = field(default_factory=list)   # per launch: the buffer keys it passes
    kernels: list = field(default_factory=list)      # per launch: the kernel's name on the LAUNCH line


def resolve_instance_name(name: str, source: str) -> str:
    from ..emu.names import resolve_instance_name as resolve
    return resolve(name, source)


def find_kernel(image: Image, name: str) -> str:
    """The mangled name in `image` of the kernel a LAUNCH line calls `name`."""
    from ..emu.names import matching_symbols
    if name in image.params:
        return name
    matches = matching_symbols(list(image.params), name)
    if len(matches) != 1:
        what = "is ambiguous (overloads)" if matches else f"is not there (it has: {', '.join(sorted(image.params))})"
        raise DeviceError(f"{image.name}: kernel '{name}' {what}")
    return matches[0]


def run_launches(gpu: GPU, image: Image, launches: list, source: str, filename: str,
                 repeat: int = 0, timeout: float | None = None) -> GPURun:
    """Run a kernel file's launches (ptxc.emu.launch_spec.parse_file) on `image`, then
    read every buffer back.  Buffers are bound and filled as ptxc.emu.specrun binds them
    (the same name, type, length and initializer is the same buffer; otherwise a new one,
    NAME@LINE), and a bad spec is the same SpecError.  With `repeat`, each launch is then
    timed: one warm-up launch, then the mean of `repeat` launches between CUDA events
    (after all launches ran once and the buffers were read, so results are final)."""
    from ..emu.launch_spec import Buffer, initial_contents, kernel_signatures, scalar_bytes
    from ..emu.specrun import spec_error
    module = gpu.load_cubin(image.data, image.name, image.arch) if image.kind == "cubin" \
        else gpu.load_ptx(image.data, image.name)
    signatures = kernel_signatures(source, filename)
    run, addresses, bound, calls = GPURun(), {}, {}, []
    try:
        for launch in launches:
            try:
                kernel = find_kernel(image, resolve_instance_name(launch.kernel, source))
            except DeviceError as err:
                raise spec_error(str(err), filename, launch, source=source) from None
            params = image.params[kernel]
            if len(launch.items) != len(params):
                raise spec_error(f"kernel '{launch.kernel}' takes {len(params)} argument(s); "
                                 f"this line gives {len(launch.items)}", filename, launch, source=source)
            sig = signatures.get(launch.kernel)
            buffer = bytearray(max((o + s for o, s in params), default=0))
            keys = []
            for position, (item, (offset, size)) in enumerate(zip(launch.items, params)):
                kind = sig.params[position][1] if sig and position < len(sig.params) else None
                if isinstance(item, Buffer):
                    if size != 8 or kind not in (None, "pointer"):
                        raise spec_error(f"'{item.name}' is a buffer but parameter {position + 1} of "
                                         f"'{launch.kernel}' is not a pointer", filename, launch, item.col, source)
                    key = bound.get(item.name)
                    old = run.specs.get(key)
                    if old is None or (old.type, old.count, old.init, old.args) != \
                            (item.type, item.count, item.init, item.args):
                        key = item.name if key is None else f"{item.name}@{launch.line}"
                        data = initial_contents(item, launch.seed)
                        addresses[key] = gpu.alloc(item.nbytes)
                        gpu.upload(addresses[key], np.ascontiguousarray(data))
                        run.specs[key], run.initial[key], bound[item.name] = item, data, key
                    run.ulp[key] = max(run.ulp.get(key, 0), launch.ulp)
                    keys.append(key)
                    value = addresses[key].to_bytes(8, "little")
                else:
                    if kind == "pointer":
                        raise spec_error(f"parameter {position + 1} of '{launch.kernel}' is a pointer: "
                                         f"give a buffer (NAME=TYPE[COUNT]:INIT), not '{item.text}'",
                                         filename, launch, item.col, source)
                    try:
                        value = scalar_bytes(item.text, size, None if kind is None else kind == "float")
                    except (ValueError, OverflowError) as err:
                        raise spec_error(str(err), filename, launch, item.col, source) from None
                buffer[offset:offset + size] = value[:size]
            function = module.function(kernel)
            gpu.launch(function, launch.grid, launch.block, bytes(buffer), launch.shared, timeout=timeout)
            calls.append((function, launch, bytes(buffer)))
            run.launch_buffers.append(keys)
            run.kernels.append(launch.kernel)
        for key, spec in run.specs.items():
            out = np.empty(spec.count, spec.dtype)
            gpu.download(addresses[key], out)
            run.buffers[key] = out
        for function, launch, buffer in calls:
            if repeat:
                gpu.launch(function, launch.grid, launch.block, buffer, launch.shared, timeout=timeout)  # warm-up
            run.times_ms.append(gpu.launch(function, launch.grid, launch.block, buffer, launch.shared, repeat,
                                           timeout=timeout) if repeat else None)
    finally:
        try:
            for address in addresses.values():
                gpu.free(address)
            module.unload()
        except DeviceError:
            pass  # after a fault the context is gone: the launch's own error is the one to report
    return run
