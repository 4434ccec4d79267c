"""Running kernels on a real GPU: what the emulator does, on silicon.

    from ptxc.device import GPU, cubin_image, run_launches
    gpu = GPU()                                   # NoDevice: "no CUDA GPU available ..."
    image = cubin_image(open("vadd.cubin", "rb").read(), "vadd.cubin")   # or ptx_image(text)
    run = run_launches(gpu, image, launches, source, "vadd.cu")          # launches: // LAUNCH: lines
    run.buffers["c"], run.times_ms

`ptxc run --device` runs a host program on it through ptxc.cli.host_gpu.HostGPU (the emulated
GPU's interface for ptxc.host's interpreter); `ptxc check --device` compares two images'
runs of a file's LAUNCH lines (ptxc/cli/check.py).  The LAUNCH lines are bound by
ptxc.launch's one binder, the same as on the emulator; GPUMachine below is this GPU as
that binder's machine.

A cubin must be for the GPU's architecture (ArchMismatch otherwise: the H200 is sm_90);
PTX text is compiled by the driver's JIT (which takes `.version` up to what the driver
knows: 9.0 for driver 580).  Parameters are packed into one buffer at the offsets the
cubin's KPARAM_INFO records give (ptxc.cubin.reader), or, for PTX, at the offsets its
`.param` declarations give (each at its natural alignment, as ptxas places them).  The
driver API is imported lazily (driver_api.py); importing this package needs no GPU.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..launch.bind import KernelNotFound, Machine, SpecRun, bind_and_run
from ..launch.names import matching_symbols
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


GPURun = SpecRun     # buffers after all launches, by name, and each launch's time


def find_kernel(image: Image, name: str) -> str:
    """The mangled name in `image` of the kernel a LAUNCH line calls `name`."""
    if name in image.params:
        return name
    matches = matching_symbols(list(image.params), name)
    if len(matches) != 1:
        what = "is ambiguous (overloads)" if matches else f"is not there (it has: {', '.join(sorted(image.params))})"
        raise DeviceError(f"{image.name}: kernel '{name}' {what}")
    return matches[0]


class GPUMachine(Machine):
    """An image loaded on `gpu`: parameters packed into one buffer at the image's offsets,
    memory cuMemAlloc'd (and freed, with the module unloaded, when the run ends)."""

    def __init__(self, gpu: GPU, image: Image, timeout: float | None):
        self.gpu, self.image, self.timeout = gpu, image, timeout
        self.module = gpu.load_cubin(image.data, image.name, image.arch) if image.kind == "cubin" \
            else gpu.load_ptx(image.data, image.name)
        self.addresses = []

    def kernel(self, name: str):
        try:
            kernel = find_kernel(self.image, name)
        except DeviceError as err:
            raise KernelNotFound(str(err)) from None
        return self.module.function(kernel), self.image.params[kernel]

    def alloc(self, nbytes: int, key: str) -> int:
        self.addresses.append(self.gpu.alloc(nbytes))
        return self.addresses[-1]

    def upload(self, address: int, data) -> None:
        self.gpu.upload(address, np.ascontiguousarray(data))

    def download(self, address: int, spec):
        out = np.empty(spec.count, spec.dtype)
        self.gpu.download(address, out)
        return out

    @staticmethod
    def pack(params: list, args: list) -> bytes:
        buffer = bytearray(max((o + s for o, s in params), default=0))
        for (offset, size), value in zip(params, args):
            value = value.to_bytes(8, "little") if isinstance(value, int) else value
            buffer[offset:offset + size] = value[:size]
        return bytes(buffer)

    def launch(self, function, launch, params: list, args: list):
        self.gpu.launch(function, launch.grid, launch.block, self.pack(params, args), launch.shared,
                        timeout=self.timeout)

    def time(self, function, launch, params: list, args: list, repeat: int) -> float | None:
        buffer = self.pack(params, args)
        self.gpu.launch(function, launch.grid, launch.block, buffer, launch.shared, timeout=self.timeout)  # warm-up
        return self.gpu.launch(function, launch.grid, launch.block, buffer, launch.shared, repeat,
                               timeout=self.timeout)

    def close(self) -> None:
        try:
            for address in self.addresses:
                self.gpu.free(address)
            self.module.unload()
        except DeviceError:
            pass  # after a fault the context is gone: the launch's own error is the one to report


def run_launches(gpu: GPU, image: Image, launches: list, source: str, filename: str,
                 repeat: int = 0, timeout: float | None = None) -> SpecRun:
    """Run a kernel file's launches (ptxc.launch.parse_file) on `image`, then read every
    buffer back, through ptxc.launch's binder (as the emulator's runs are bound; a bad
    spec is the same SpecError).  With `repeat`, each launch is then timed: one warm-up
    launch, then the mean of `repeat` launches between CUDA events (after all launches ran
    once and the buffers were read, so results are final)."""
    return bind_and_run(GPUMachine(gpu, image, timeout), launches, source, filename, repeat=repeat)
