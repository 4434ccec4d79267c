"""The CUDA driver API, as much of it as running a kernel needs.

A thin layer over `cuda.bindings.driver` (NVIDIA's cuda-python), imported on first use so
that nothing else in ptxc needs it: initialise the driver and take the first GPU's
primary context, load a module from a cubin or from PTX text (which the driver compiles:
its PTX JIT), allocate and copy memory, and launch a kernel with its parameters packed
into one buffer (CU_LAUNCH_PARAM_BUFFER_POINTER), the offsets being the cubin's own
KPARAM_INFO records, timed by CUDA events.

Every failure is a DeviceError with a sentence a user can act on: `no CUDA GPU available`
when the bindings, the driver or a GPU are missing; an architecture mismatch when a cubin
is for another SM than the GPU's; the PTX version the driver's JIT takes when it refuses
the text's `.version` (jit_ptx_version gives the newest a driver takes); DeviceTimeout
when a launch given a timeout has not ended by then (polling its end event: the GPU has
no watchdog).  After a fault, recover() resets the primary context so that later
launches can run.
"""
from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass

CU_LAUNCH_PARAM_END = 0
CU_LAUNCH_PARAM_BUFFER_POINTER = 1
CU_LAUNCH_PARAM_BUFFER_SIZE = 2


class DeviceError(RuntimeError):
    """A GPU operation failed; str() says what and why."""


class NoDevice(DeviceError):
    """No GPU to run on (no cuda-python, no driver, or no device)."""


class ArchMismatch(DeviceError):
    """The cubin's architecture is not the GPU's."""


class DeviceTimeout(DeviceError):
    """A kernel did not finish within the time allowed.  The GPU has no watchdog: the
    kernel keeps running until the process (and with it the context) ends, so the
    caller's only way out is to exit."""


# The newest PTX ISA each CUDA driver's JIT takes, by (major, minor) of the driver's CUDA
# version (NVIDIA's PTX ISA release notes); a driver between two entries takes the lower.
JIT_PTX_VERSIONS = {(11, 8): "7.8", (12, 0): "8.0", (12, 1): "8.1", (12, 2): "8.2", (12, 3): "8.3",
                    (12, 4): "8.4", (12, 5): "8.5", (12, 8): "8.7", (12, 9): "8.8", (13, 0): "9.0"}


def jit_ptx_version(driver_version: int) -> str:
    """The `.version` to write in PTX for the JIT of a driver (cuDriverGetVersion's
    number: 13000 is CUDA 13.0, whose JIT takes PTX 9.0)."""
    key = (driver_version // 1000, driver_version % 1000 // 10)
    known = [k for k in JIT_PTX_VERSIONS if k <= key]
    return JIT_PTX_VERSIONS[max(known)] if known else JIT_PTX_VERSIONS[min(JIT_PTX_VERSIONS)]


_DRIVER = None


def _driver():
    """cuda.bindings.driver, initialised; NoDevice if there is no GPU to use."""
    global _DRIVER
    if _DRIVER is not None:
        return _DRIVER
    try:
        from cuda.bindings import driver
    except ImportError:
        try:
            from cuda import cuda as driver  # cuda-python before 12.6
        except ImportError:
            raise NoDevice("no CUDA GPU available: the CUDA Python bindings are not installed "
                           "(pip install cuda-bindings)") from None
    try:
        err, = driver.cuInit(0)
    except Exception as exc:  # noqa: BLE001 - no libcuda.so: the bindings raise their own types
        raise NoDevice(f"no CUDA GPU available: the CUDA driver could not be loaded ({exc})") from None
    if err != driver.CUresult.CUDA_SUCCESS:
        raise NoDevice(f"no CUDA GPU available: cuInit failed ({_error_name(driver, err)})")
    err, count = driver.cuDeviceGetCount()
    if err != driver.CUresult.CUDA_SUCCESS or count == 0:
        raise NoDevice("no CUDA GPU available: the driver sees no device")
    _DRIVER = driver
    return driver


def _error_name(driver, err) -> str:
    try:
        status, name = driver.cuGetErrorName(err)
        return name.decode() if status == driver.CUresult.CUDA_SUCCESS else str(err)
    except Exception:  # noqa: BLE001
        return str(err)


def _check(driver, result, what: str):
    """The values after the status of a driver call's result tuple; DeviceError on failure."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise DeviceError(f"{what}: {_error_name(driver, err)}")
    return values[0] if len(values) == 1 else values


def _load_data(driver, image: bytes):
    """cuModuleLoadData on a copy of `image` with a NUL after it (PTX must end so), passed
    by address, which every version of the bindings takes."""
    buffer = ctypes.create_string_buffer(image, len(image) + 1)
    return driver.cuModuleLoadData(ctypes.addressof(buffer))


def available() -> bool:
    """Whether a GPU can be used here (cuda-python, a driver and a device)."""
    try:
        _driver()
    except NoDevice:
        return False
    return True


def ptx_target(ptx: str) -> tuple[str | None, str | None]:
    """(`.version`, `.target`) of PTX text."""
    version = re.search(r"^\s*\.version\s+(\S+)", ptx, re.M)
    target = re.search(r"^\s*\.target\s+(sm_\d+)", ptx, re.M)
    return (version.group(1) if version else None, target.group(1) if target else None)


@dataclass
class Function:
    name: str
    handle: object


class Module:
    """A loaded module: its kernels by (mangled) name."""

    def __init__(self, gpu: "GPU", handle, source: str):
        self.gpu, self.handle, self.source = gpu, handle, source

    def function(self, name: str) -> Function:
        d = self.gpu.driver
        return Function(name, _check(d, d.cuModuleGetFunction(self.handle, name.encode()),
                                     f"{self.source}: no kernel {name}"))

    def global_variable(self, name: str) -> tuple[int, int] | None:
        """(device address, size) of a module variable (__device__ or __constant__),
        None if the module has none of that name."""
        d = self.gpu.driver
        result = _result(d.cuModuleGetGlobal(self.handle, name.encode()))
        if result[0] != d.CUresult.CUDA_SUCCESS:
            return None
        return int(result[1]), int(result[2])

    def unload(self) -> None:
        d = self.gpu.driver
        _check(d, d.cuModuleUnload(self.handle), "cuModuleUnload")


class GPU:
    """The first GPU and its primary context."""

    def __init__(self, ordinal: int = 0):
        d = self.driver = _driver()
        self.device = _check(d, d.cuDeviceGet(ordinal), "cuDeviceGet")
        name = _check(d, d.cuDeviceGetName(256, self.device), "cuDeviceGetName")
        self.name = name.split(b"\0")[0].decode()
        attr = d.CUdevice_attribute
        major = _check(d, d.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device), "")
        minor = _check(d, d.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device), "")
        self.arch = f"sm_{major}{minor}"
        self.driver_version = _check(d, d.cuDriverGetVersion(), "cuDriverGetVersion")
        self.context = _check(d, d.cuDevicePrimaryCtxRetain(self.device), "cuDevicePrimaryCtxRetain")
        _check(d, d.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def describe(self) -> str:
        v = self.driver_version
        return f"{self.name} ({self.arch}, CUDA driver {v // 1000}.{v % 1000 // 10})"

    # -- modules --
    def check_arch(self, arch: str | None, filename: str = "x.cubin") -> None:
        """ArchMismatch, naming both, if a cubin for `arch` cannot run on this GPU."""
        if arch is not None and arch != self.arch:
            raise ArchMismatch(f"{filename}: the cubin is for {arch}, but the GPU ({self.name}) is {self.arch}; "
                               f"compile with -arch={self.arch}")

    def load_cubin(self, data: bytes, filename: str = "x.cubin", arch: str | None = None) -> Module:
        """Load a cubin; `arch` (read from its header by the caller) is checked first so
        that a mismatch says which architectures differ."""
        self.check_arch(arch, filename)
        d = self.driver
        err, handle = _load_data(d, bytes(data))
        if err == d.CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU:
            raise ArchMismatch(f"{filename}: the driver finds no code for {self.arch} ({self.name}) in it")
        if err != d.CUresult.CUDA_SUCCESS:
            raise DeviceError(f"{filename}: cuModuleLoadData: {_error_name(d, err)}")
        return Module(self, handle, filename)

    def load_ptx(self, text: str, filename: str = "x.ptx") -> Module:
        """Load PTX text; the driver JIT-compiles it for this GPU."""
        d = self.driver
        version, target = ptx_target(text)
        err, handle = _load_data(d, text.encode())
        if err == d.CUresult.CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
            raise DeviceError(f"{filename}: the driver's PTX JIT (CUDA {self.driver_version // 1000}."
                              f"{self.driver_version % 1000 // 10}) refuses .version {version}; "
                              f"write an older one (ptxc --ptx-version=9.0)")
        if err != d.CUresult.CUDA_SUCCESS:
            extra = f" (.target {target}, GPU {self.arch})" if target else ""
            raise DeviceError(f"{filename}: cuModuleLoadData (PTX JIT): {_error_name(d, err)}{extra}")
        return Module(self, handle, filename)

    # -- memory --
    def alloc(self, nbytes: int) -> int:
        d = self.driver
        return int(_check(d, d.cuMemAlloc(max(nbytes, 1)), f"cuMemAlloc({nbytes})"))

    def free(self, address: int) -> None:
        d = self.driver
        _check(d, d.cuMemFree(d.CUdeviceptr(address)), "cuMemFree")

    def upload(self, address: int, array) -> None:
        """Copy a contiguous numpy array to device memory."""
        d = self.driver
        _check(d, d.cuMemcpyHtoD(d.CUdeviceptr(address), array.ctypes.data, array.nbytes), "cuMemcpyHtoD")

    def download(self, address: int, array) -> None:
        """Fill a contiguous numpy array from device memory."""
        d = self.driver
        _check(d, d.cuMemcpyDtoH(array.ctypes.data, d.CUdeviceptr(address), array.nbytes), "cuMemcpyDtoH")

    # -- launches --
    def launch(self, function: Function, grid: tuple, block: tuple, params: bytes, shared: int = 0,
               repeat: int = 1, timeout: float | None = None) -> float:
        """Launch `repeat` times with the parameter buffer `params` (already laid out at
        the kernel's parameter offsets); returns the mean milliseconds of one launch, by
        CUDA events around them.  Waits for the GPU to finish; a fault is a DeviceError;
        with `timeout`, a kernel still running after that many seconds is DeviceTimeout."""
        d = self.driver
        buffer = ctypes.create_string_buffer(bytes(params), max(len(params), 1))
        size = ctypes.c_size_t(len(params))
        extra = (ctypes.c_void_p * 5)(CU_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(buffer),
                                      CU_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size), CU_LAUNCH_PARAM_END)
        start = _check(d, d.cuEventCreate(0), "cuEventCreate")
        end = _check(d, d.cuEventCreate(0), "cuEventCreate")
        try:
            _check(d, d.cuEventRecord(start, 0), "cuEventRecord")
            for _ in range(repeat):
                _check(d, d.cuLaunchKernel(function.handle, *grid, *block, shared, 0, None,
                                           ctypes.addressof(extra)), f"launching {function.name}")
            _check(d, d.cuEventRecord(end, 0), "cuEventRecord")
            if timeout is not None:
                self._wait(end, timeout, function.name)
            _check(d, d.cuEventSynchronize(end), f"running {function.name}")
            ms = _check(d, d.cuEventElapsedTime(start, end), "cuEventElapsedTime")
        finally:
            d.cuEventDestroy(start)
            d.cuEventDestroy(end)
        return ms / repeat

    def _wait(self, event, timeout: float, name: str) -> None:
        """Poll `event` until it completes, at most `timeout` seconds (cuEventSynchronize
        would wait forever for a kernel that never ends)."""
        import time
        d = self.driver
        deadline = time.monotonic() + timeout
        pause = 1e-4
        while True:
            err = _result(d.cuEventQuery(event))[0]
            if err != d.CUresult.CUDA_ERROR_NOT_READY:
                return          # done, or failed: cuEventSynchronize reports which
            if time.monotonic() > deadline:
                raise DeviceTimeout(f"kernel {name} did not finish within {timeout:g} s "
                                    "(a kernel that never ends? --timeout changes the limit)")
            time.sleep(pause)
            pause = min(pause * 2, 0.01)

    def synchronize(self) -> None:
        d = self.driver
        _check(d, d.cuCtxSynchronize(), "cuCtxSynchronize")

    def recover(self) -> None:
        """After a failed launch: make the context usable again.  A fault (illegal
        address, ...) is sticky: the primary context is reset, which frees every
        allocation and unloads every module.  DeviceError if even that fails."""
        d = self.driver
        try:
            self.synchronize()
            return
        except DeviceError:
            pass
        _check(d, d.cuDevicePrimaryCtxReset(self.device), "cuDevicePrimaryCtxReset")
        self.context = _check(d, d.cuDevicePrimaryCtxRetain(self.device), "cuDevicePrimaryCtxRetain")
        _check(d, d.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        self.synchronize()


def _result(result) -> tuple:
    return result if isinstance(result, tuple) else (result,)
