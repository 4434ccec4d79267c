"""A real GPU behind ptxc.host's interpreter: what `ptxc run --device` runs a program on.

The interpreter (ptxc/host/interp.py) talks to its GPU through a small interface, the
one ptxc.host.GPU gives it over the emulator:

    gpu.arch                                      cudaGetDeviceProperties
    gpu.device.malloc(size, name) -> address      cudaMalloc
    gpu.device.free(address)                      cudaFree
    gpu.device.memory.find(address)               cudaMemcpyDefault: is it device memory?
    gpu.device.memory.read(address, size) -> bytes, .write(address, data)
    gpu.launch(symbol, grid, block, shared, args, node) -> ms   k<<<grid, block, shared>>>(args)
    gpu.write_symbol / read_symbol / symbol_address             cudaMemcpyToSymbol & co.

HostGPU gives the same over the CUDA driver API (driver_api.GPU): memory is cuMemAlloc'd
and copied with cuMemcpy; module variables are found with cuModuleGetGlobal (and
their ranges then count as live device memory); a launch packs the interpreter's argument bytes at the
image's parameter offsets (a cubin's KPARAM_INFO, or PTX `.param` declarations) and
launches with cuLaunchKernel, waiting for the kernel to end.  Errors are the ones the
interpreter already reports: memory errors are ptxc.emu.device.LaunchError (the
interpreter names the runtime call and the line), a failed launch a HostError.  A kernel
that does not finish within `timeout` seconds raises DeviceTimeout, which the caller
must end the process on (the GPU has no watchdog).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..emu.device import LaunchError
from ..host.interp import HostError
from ..device import GPU, DeviceError, DeviceTimeout, Image, find_kernel


class DeviceMemoryError(LaunchError):
    """A cudaMalloc'd range misused, or a copy the driver refused."""

    def __init__(self, message: str):
        super().__init__(message, "memcpy")


@dataclass
class Allocation:
    address: int
    size: int
    name: str = ""


class DeviceMemory:
    """Device global memory as the interpreter uses it: allocations are tracked here so
    that a copy outside them is an error with the address (as the emulator reports it)
    rather than whatever the driver makes of it."""

    def __init__(self, gpu: GPU):
        self.gpu = gpu
        self.allocations: dict[int, Allocation] = {}
        self.symbols: set[int] = set()      # module variables' ranges: not cuMemFree'd

    # -- as ptxc.emu.device.Device --
    def malloc(self, size: int, name: str = "") -> int:
        if size < 0:
            raise HostError(f"cudaMalloc: cannot allocate {size} bytes")
        try:
            address = self.gpu.alloc(size)
        except DeviceError as err:
            raise HostError(f"cudaMalloc({size}): {err}") from None
        self.allocations[address] = Allocation(address, size, name)
        return address

    def free(self, address: int) -> None:
        if address not in self.allocations or address in self.symbols:
            raise DeviceMemoryError(f"free of {address:#x}, which is not a live allocation")
        del self.allocations[address]
        try:
            self.gpu.free(address)
        except DeviceError as err:
            raise DeviceMemoryError(str(err)) from None

    def free_all(self) -> None:
        for address in self.symbols:
            self.allocations.pop(address, None)
        for address in list(self.allocations):
            try:
                self.free(address)
            except LaunchError:
                pass        # after a fault the context is gone with its memory

    @property
    def memory(self) -> "DeviceMemory":
        return self

    # -- as ptxc.emu.device.Memory --
    def find(self, address: int) -> Allocation | None:
        for alloc in self.allocations.values():
            if alloc.address <= address < alloc.address + max(alloc.size, 1):
                return alloc
        return None

    def _check(self, address: int, size: int) -> None:
        alloc = self.find(address)
        if alloc is None or address + size > alloc.address + alloc.size:
            raise DeviceMemoryError(f"host access of {size} bytes at {address:#x} is outside every live allocation")

    def write(self, address: int, data) -> None:
        import numpy as np
        data = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) \
            else np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        if not len(data):
            return
        self._check(address, len(data))
        try:
            self.gpu.upload(address, data)
        except DeviceError as err:
            raise DeviceMemoryError(str(err)) from None

    def read(self, address: int, size: int) -> bytes:
        import numpy as np
        if size == 0:
            return b""
        self._check(address, size)
        out = np.empty(size, np.uint8)
        try:
            self.gpu.download(address, out)
        except DeviceError as err:
            raise DeviceMemoryError(str(err)) from None
        return out.tobytes()


class HostGPU:
    """The kernels of one image (a cubin or PTX text) on the real GPU, as the CUDA
    runtime sees them: ptxc.host.GPU's interface over the driver API."""

    def __init__(self, gpu: GPU, image: Image | None, missing: dict | None = None, trace=None,
                 timeout: float | None = None, before_launch=None, hint: str = ""):
        """`missing`: kernels the compiler could not build, with why; `trace(line)`
        gets each launch's parameters and kernel time; `before_launch()` runs before
        each launch (flush stdout: a kernel's printf writes straight to file descriptor
        1); `hint` ends the error for a missing kernel."""
        self.gpu = gpu
        self.image = image
        self.device = DeviceMemory(gpu)
        self.module = None
        if image is not None:   # loading checks the architecture: an error before main() runs
            self.module = gpu.load_cubin(image.data, image.name, image.arch) if image.kind == "cubin" \
                else gpu.load_ptx(image.data, image.name)
        self.missing = missing or {}
        self.trace = trace
        self.timeout = timeout
        self.before_launch = before_launch
        self.hint = hint
        self.arch = gpu.arch
        self.launches = []          # per launch: (kernel, milliseconds)
        self._functions = {}

    def kernel_for(self, symbol) -> str:
        why = self.missing.get(symbol.mangled) or self.missing.get(symbol.name)
        if why is not None:
            raise HostError(f"ptxc cannot compile kernel '{symbol.name}' yet: {why}{self.hint}")
        if self.module is None:
            raise HostError(f"no module holds kernel '{symbol.name}'")
        if symbol.mangled and symbol.mangled in self.image.params:
            return symbol.mangled
        try:
            return find_kernel(self.image, symbol.name)
        except DeviceError as err:
            raise HostError(str(err)) from None

    def param_buffer(self, kernel: str, args: list) -> bytes:
        """The interpreter's argument bytes (one bytes per parameter) at the kernel's offsets."""
        params = self.image.params[kernel]
        if len(args) != len(params):
            raise HostError(f"kernel '{kernel}' takes {len(params)} argument(s), {len(args)} given")
        buffer = bytearray(max((o + s for o, s in params), default=0))
        for (offset, size), value in zip(params, args):
            if isinstance(value, int):
                value = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
            if len(value) != size:
                raise HostError(f"argument of {len(value)} bytes for a {size}-byte parameter of '{kernel}'")
            buffer[offset:offset + size] = value
        return bytes(buffer)

    def launch(self, symbol, grid, block, shared, args, node):
        try:
            kernel = self.kernel_for(symbol)
            params = self.param_buffer(kernel, args)
        except HostError as err:
            raise HostError(str(err), node.loc) from None
        grid, block = _dim3(grid), _dim3(block)
        if self.before_launch is not None:
            self.before_launch()
        try:
            function = self._functions.get(kernel)
            if function is None:
                function = self._functions[kernel] = self.module.function(kernel)
            ms = self.gpu.launch(function, grid, block, params, int(shared), timeout=self.timeout)
        except DeviceTimeout:
            raise
        except DeviceError as err:
            raise HostError(f"kernel launch {symbol.name}<<<...>>> failed on the GPU:\n{err}", node.loc) from None
        self.launches.append((kernel, ms))
        if self.trace is not None:
            self.trace(f"launch {kernel} grid=({','.join(map(str, grid))}) block=({','.join(map(str, block))}) "
                       f"shared={shared}: parameters {params.hex() or '(none)'}; kernel time {ms * 1000:.1f} us")
        return ms

    def _global(self, name: str) -> int:
        """The device address of a module variable, its range made accessible; KeyError if none."""
        found = self.module.global_variable(name) if self.module is not None else None
        if found is None:
            raise KeyError(name)
        address, size = found
        if address not in self.device.allocations:
            self.device.allocations[address] = Allocation(address, size, name)
            self.device.symbols.add(address)
        return address

    def write_symbol(self, name: str, space, offset: int, data: bytes) -> None:
        self.device.write(self._global(name) + offset, data)

    def read_symbol(self, name: str, space, offset: int, size: int) -> bytes:
        return self.device.read(self._global(name) + offset, size)

    def symbol_address(self, name: str, space) -> int:
        return self._global(name)

    def close(self) -> None:
        """Free what the program left allocated and unload the module."""
        self.device.free_all()
        if self.module is not None:
            try:
                self.module.unload()
            except DeviceError:
                pass
            self.module = None


def _dim3(value) -> tuple:
    value = (value,) if isinstance(value, int) else tuple(value)
    return tuple(int(v) for v in value) + (1,) * (3 - len(value))
