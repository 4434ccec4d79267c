"""The CUDA runtime API under `ptxc run`: errors, streams, events, device, host, managed
and symbol memory, device properties, over the interpreter's host memory and its GPU
(the emulator, ptxc.host.GPU, or a real one, ptxc.cli.host_gpu.HostGPU).

Semantics, as NVIDIA's CUDA Runtime API documents them (names and values from
ptxc/frontend/cuda_runtime_data.py, which scripts/learn_cuda_runtime.py learns from the
pinned toolkit):

- Errors.  Every call that fails returns its cudaError and makes it the *last error*;
  cudaGetLastError returns that and resets it, cudaPeekAtLastError leaves it.  A launch
  with a bad configuration (a block of more than 1024 threads, a grid dimension out of
  range, more shared memory than a block may have: cudaErrorInvalidConfiguration, as
  driver_types.h documents it) does not run and sets the last error; the program goes on.  A
  fault inside a kernel (an illegal or misaligned address, a trap) is asynchronous: the
  launch itself succeeds, the fault is reported by the next synchronizing call
  (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, cudaEventQuery,
  cudaStreamQuery, cudaMemcpy, cudaMemcpy*Symbol, cudaFree) and is *sticky*: from then
  on every call returns it, until cudaDeviceReset.  Device work issued after a fault
  does not run.  The emulator's report of the fault goes to stderr when it happens.
- Streams and order.  The emulator executes each operation when the program issues
  it, so work runs in issue order: in order within a stream, and the legacy default
  stream's implicit synchronization (and any cudaStreamWaitEvent) holds trivially.
  cudaMemcpyAsync and cudaMemsetAsync are complete when they return; *Query returns
  cudaSuccess.
- Time.  The device has one clock, in milliseconds, that advances by the time each
  operation takes on the device: a kernel by the emulator's wall-clock time running it
  (with --device, the GPU's own kernel time, by CUDA events), a copy or memset by the
  wall-clock time of the copy.  cudaEventRecord stamps the event with that clock, so
  cudaEventElapsedTime(start, stop) is the device time of the work issued between the
  two records: host code between them does not count, and with no work it is 0.
- Memory.  cudaMallocHost/cudaHostAlloc give host memory (cudaFreeHost checks it came
  from them).  cudaMallocManaged memory is a device allocation that host code sees at
  the same address: the interpreter keeps a host copy, written to the device before and
  read back after each device operation, so host and kernels see the same bytes.
  cudaMemcpyDefault infers the direction from the addresses.
- Symbols.  cudaMemcpyToSymbol/FromSymbol take the variable itself (`const T&`), with
  an offset; an out-of-range count is cudaErrorInvalidValue, a variable the module
  lacks cudaErrorInvalidSymbol.
- The device is one emulated GPU (device_props.py): cudaGetDeviceCount gives 1,
  another ordinal is cudaErrorInvalidDevice.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..frontend import cuda_runtime_data as D
from ..frontend import sema as S
from . import device_props
from .errors import HostError, LaunchFailure
from .memory import HostMemoryError
from .values import round_f32, sizeof, struct_format

CODES = D.CUDAERROR
SUCCESS = CODES["cudaSuccess"]
INVALID_VALUE = CODES["cudaErrorInvalidValue"]
INVALID_DEVICE = CODES["cudaErrorInvalidDevice"]
INVALID_HANDLE = CODES["cudaErrorInvalidResourceHandle"]
INVALID_SYMBOL = CODES["cudaErrorInvalidSymbol"]
INVALID_DIRECTION = CODES["cudaErrorInvalidMemcpyDirection"]
KINDS = D.CUDAMEMCPYKIND
H2H, H2D, D2H, D2D, DEFAULT = (KINDS[k] for k in ("cudaMemcpyHostToHost", "cudaMemcpyHostToDevice",
                                                   "cudaMemcpyDeviceToHost", "cudaMemcpyDeviceToDevice",
                                                   "cudaMemcpyDefault"))
FLAGS = D.FLAGS
HANDLE_BASE = 0x5E00_0000_0000          # where stream and event handles point (never dereferenced)
ATTRIBUTE_NAMES = {v: k for k, v in D.CUDADEVICEATTR.items()}


def error_name(code: int) -> str:
    return D.ERROR_STRINGS.get(code, ("unrecognized error code", "unrecognized error code"))[0]


def error_string(code: int) -> str:
    return D.ERROR_STRINGS.get(code, ("unrecognized error code", "unrecognized error code"))[1]


@dataclass
class Event:
    flags: int
    time_ms: float | None = None


class Runtime:
    """The CUDA runtime's state for one run of a program."""

    def __init__(self, interp):
        self.it = interp
        self.last_error = SUCCESS
        self.sticky = SUCCESS              # a fault the program has been told of
        self.pending = None                # a fault not yet reported (LaunchFailure)
        self.clock_ms = 0.0
        self.streams: dict[int, int] = {0: 0}          # handle -> flags (0: the default stream)
        self.events: dict[int, Event] = {}
        self.next_handle = HANDLE_BASE
        self.pinned: set[int] = set()
        self.managed: dict[int, int] = {}              # address -> size

    @property
    def gpu(self):
        if self.it.gpu is None:
            raise HostError("this program uses the GPU, but ptxc runs it without one")
        return self.it.gpu

    @property
    def arch(self) -> str:
        return getattr(self.it.gpu, "arch", None) or "sm_89"

    # ---- errors ----
    def fail(self, code: int) -> int:
        if code:
            self.last_error = code
        return code

    def synchronize(self) -> None:
        """A synchronizing call: a fault still pending becomes the sticky error."""
        if self.pending is not None:
            self.sticky = self.last_error = self.pending.code
            self.pending = None

    def handle(self) -> int:
        self.next_handle += 16
        return self.next_handle

    def store(self, address: int, fmt: str, value) -> None:
        try:
            self.it.memory.store(address, fmt, value)
        except HostMemoryError as err:
            raise HostError(str(err)) from None

    # ---- device work ----
    def before_device(self) -> None:
        """Managed memory's host copies to the device (the host may have written them)."""
        if self.managed:
            dev = self.gpu.device.memory
            for address, size in self.managed.items():
                dev.write(address, self.it.memory.read(address, size))

    def after_device(self) -> None:
        if self.managed:
            dev = self.gpu.device.memory
            for address, size in self.managed.items():
                self.it.memory.write(address, dev.read(address, size))

    def device_work(self, work) -> None:
        """Run `work()` on the device, advancing the device clock by its wall time."""
        self.before_device()
        start = time.perf_counter()
        work()
        self.clock_ms += (time.perf_counter() - start) * 1000.0
        self.after_device()

    def launch(self, callee, grid, block, shared, stream, args, node) -> None:
        if self.sticky:
            self.last_error = self.sticky
            return
        if stream not in self.streams:
            self.fail(INVALID_HANDLE)
            return
        if self.pending is not None:       # the context is broken: later work does not run
            return
        gpu = self.gpu
        self.before_device()
        try:
            ms = gpu.launch(callee, grid, block, shared, args, node)
        except LaunchFailure as failure:
            if failure.sticky:
                self.pending = failure
                self.it.write_err(f"ptxc run: {self.it.filename}:{node.loc[0]}: kernel {callee.name} faulted "
                                  f"({error_name(failure.code)}, reported at the next synchronizing call):\n"
                                  f"{failure}\n")
            else:
                self.fail(failure.code)
            return
        self.clock_ms += float(ms or 0.0)
        self.after_device()

    # ---- copies ----
    def is_device(self, address: int) -> bool:
        return self.gpu.device.memory.find(address) is not None

    def copy(self, dst: int, src: int, size: int, kind: int) -> int:
        if kind == DEFAULT:
            kind = (D2D if self.is_device(src) else H2D) if self.is_device(dst) else \
                (D2H if self.is_device(src) else H2H)
        if kind not in (H2H, H2D, D2H, D2D):
            return INVALID_DIRECTION
        if size == 0:
            return SUCCESS
        host = self.it.memory
        if kind == H2H:
            host.write(dst, host.read(src, size))
            return SUCCESS
        dev = self.gpu.device.memory
        if kind == H2D:
            self.device_work(lambda: dev.write(dst, host.read(src, size)))
        elif kind == D2H:
            def down():
                host.write(dst, dev.read(src, size))
            self.device_work(down)
            if dst in self.managed or any(a <= dst < a + s for a, s in self.managed.items()):
                self.before_device()       # the host wrote a managed range: the device sees it too
        else:
            self.device_work(lambda: dev.write(dst, dev.read(src, size)))
        return SUCCESS

    # ---- symbols ----
    def symbol_range(self, sym, offset: int, count: int):
        size = sizeof(sym.type)
        if offset < 0 or count < 0 or offset + count > size:
            return None
        return symbol_name(sym), sym.space


def symbol_name(sym) -> str:
    """The name the module gives a __device__/__constant__ variable."""
    return getattr(sym, "mangled", None) or getattr(sym, "ptx_name", None) or sym.name


# =============================================================================================
# the API: each function is (interpreter, argument values, argument types, node) -> value
# =============================================================================================
def api(sync: bool = False, device: bool = True):
    """A runtime call: after a fault every call returns it (a synchronizing one first
    learns of a pending fault); a nonzero result becomes the last error."""
    def wrap(fn):
        def run(it, args, types, node):
            rt = it.cuda
            if sync:
                rt.synchronize()
            if rt.sticky and device:
                rt.last_error = rt.sticky
                return rt.sticky
            try:
                code = fn(rt, args, node)
            except HostMemoryError as err:
                raise HostError(f"{fn.__name__.removeprefix('rt_')}: {err}", node.loc) from None
            except HostError as err:
                raise HostError(str(err), err.loc or node.loc) from None
            return rt.fail(code or SUCCESS)
        run.__name__ = fn.__name__
        return run
    return wrap


# ---- errors ----
def rt_get_last_error(it, args, types, node):
    rt = it.cuda
    code, rt.last_error = rt.last_error, rt.sticky
    return code


def rt_peek_at_last_error(it, args, types, node):
    return it.cuda.last_error


def rt_get_error_string(it, args, types, node):
    return it.memory.string(error_string(int(args[0])))


def rt_get_error_name(it, args, types, node):
    return it.memory.string(error_name(int(args[0])))


@api(sync=True)
def rt_cudaDeviceSynchronize(rt, args, node):
    return SUCCESS


def rt_device_reset(it, args, types, node):
    rt = it.cuda
    for address in list(rt.managed):
        it.memory.unmap(address)
    rt.managed.clear()
    rt.sticky, rt.pending, rt.last_error = SUCCESS, None, SUCCESS
    rt.streams = {0: 0}
    rt.events.clear()
    return SUCCESS


# ---- device memory ----
@api()
def rt_cudaMalloc(rt, args, node):
    address = rt.gpu.device.malloc(int(args[1]), "cudaMalloc")
    rt.store(int(args[0]), "Q", address)
    return SUCCESS


@api()
def rt_cudaMallocManaged(rt, args, node):
    flags = int(args[2]) if len(args) > 2 else FLAGS["cudaMemAttachGlobal"]
    if flags not in (FLAGS["cudaMemAttachGlobal"], FLAGS["cudaMemAttachHost"]):
        return INVALID_VALUE
    size = int(args[1])
    if size == 0:
        return INVALID_VALUE
    address = rt.gpu.device.malloc(size, "cudaMallocManaged")
    rt.it.memory.map(address, size)
    rt.managed[address] = size
    rt.store(int(args[0]), "Q", address)
    return SUCCESS


@api(sync=True)
def rt_cudaFree(rt, args, node):
    from ..emu.device import LaunchError
    address = int(args[0])
    if address == 0:
        return SUCCESS
    try:
        rt.gpu.device.free(address)
    except LaunchError as err:
        raise HostError(f"cudaFree: {err}") from None
    if address in rt.managed:
        del rt.managed[address]
        rt.it.memory.unmap(address)
    return SUCCESS


def _memcpy(rt, args, node, name):
    from ..emu.device import LaunchError
    try:
        return rt.copy(int(args[0]), int(args[1]), int(args[2]), int(args[3]))
    except LaunchError as err:
        raise HostError(f"{name}: {err}") from None


@api(sync=True)
def rt_cudaMemcpy(rt, args, node):
    return _memcpy(rt, args, node, "cudaMemcpy")


@api()
def rt_cudaMemcpyAsync(rt, args, node):
    if len(args) > 4 and int(args[4]) not in rt.streams:
        return INVALID_HANDLE
    if rt.pending is not None:
        return SUCCESS
    return _memcpy(rt, args, node, "cudaMemcpyAsync")


def _memset(rt, args, name):
    from ..emu.device import LaunchError
    address, value, size = int(args[0]), int(args[1]) & 0xFF, int(args[2])
    if size == 0:
        return SUCCESS
    dev = rt.gpu.device.memory
    try:
        rt.device_work(lambda: dev.write(address, bytes([value]) * size))
    except LaunchError as err:
        raise HostError(f"{name}: {err}") from None
    return SUCCESS


@api()
def rt_cudaMemset(rt, args, node):
    return _memset(rt, args, "cudaMemset")


@api()
def rt_cudaMemsetAsync(rt, args, node):
    if len(args) > 3 and int(args[3]) not in rt.streams:
        return INVALID_HANDLE
    if rt.pending is not None:
        return SUCCESS
    return _memset(rt, args, "cudaMemsetAsync")


@api()
def rt_cudaMemGetInfo(rt, args, node):
    allocations = rt.gpu.device.memory.allocations
    allocations = allocations.values() if isinstance(allocations, dict) else allocations
    used = sum(a.size for a in allocations if getattr(a, "live", True))
    total = device_props.properties(rt.arch)["totalGlobalMem"]
    rt.store(int(args[0]), "Q", max(total - used, 0))
    rt.store(int(args[1]), "Q", total)
    return SUCCESS


# ---- host memory ----
def _malloc_host(rt, args):
    address = rt.it.memory.malloc(int(args[1]))
    rt.pinned.add(address)
    rt.store(int(args[0]), "Q", address)
    return SUCCESS


@api(device=False)
def rt_cudaMallocHost(rt, args, node):
    return _malloc_host(rt, args)


@api(device=False)
def rt_cudaHostAlloc(rt, args, node):
    allowed = FLAGS["cudaHostAllocPortable"] | FLAGS["cudaHostAllocMapped"] | FLAGS["cudaHostAllocWriteCombined"]
    if int(args[2]) & ~allowed:
        return INVALID_VALUE
    return _malloc_host(rt, args)


@api(device=False)
def rt_cudaFreeHost(rt, args, node):
    address = int(args[0])
    if address == 0:
        return SUCCESS
    if address not in rt.pinned:
        return INVALID_VALUE
    rt.pinned.discard(address)
    rt.it.memory.free(address)
    return SUCCESS


# ---- symbols ----
def _symbol_copy(rt, sym, offset, count, kind, allowed, move):
    if kind not in allowed:
        return INVALID_DIRECTION
    where = rt.symbol_range(sym, offset, count)
    if where is None:
        return INVALID_VALUE
    try:
        rt.before_device()
        move(where[0], where[1])
        rt.after_device()
    except KeyError:
        return INVALID_SYMBOL
    return SUCCESS


@api(sync=True)
def rt_cudaMemcpyToSymbol(rt, args, node):
    sym, src, count = args[0], int(args[1]), int(args[2])
    offset = int(args[3]) if len(args) > 3 else 0
    kind = int(args[4]) if len(args) > 4 else H2D
    if kind == DEFAULT:
        kind = D2D if rt.is_device(src) else H2D
    gpu = rt.gpu

    def move(name, space):
        data = rt.it.memory.read(src, count) if kind == H2D else gpu.device.memory.read(src, count)
        gpu.write_symbol(name, space, offset, data)
    return _symbol_copy(rt, sym, offset, count, kind, (H2D, D2D), move)


@api(sync=True)
def rt_cudaMemcpyFromSymbol(rt, args, node):
    dst, sym, count = int(args[0]), args[1], int(args[2])
    offset = int(args[3]) if len(args) > 3 else 0
    kind = int(args[4]) if len(args) > 4 else D2H
    if kind == DEFAULT:
        kind = D2D if rt.is_device(dst) else D2H
    gpu = rt.gpu

    def move(name, space):
        data = gpu.read_symbol(name, space, offset, count)
        if kind == D2H:
            rt.it.memory.write(dst, data)
        else:
            gpu.device.memory.write(dst, data)
    return _symbol_copy(rt, sym, offset, count, kind, (D2H, D2D), move)


@api()
def rt_cudaGetSymbolAddress(rt, args, node):
    sym = args[1]
    try:
        address = rt.gpu.symbol_address(symbol_name(sym), sym.space)
    except KeyError:
        return INVALID_SYMBOL
    rt.store(int(args[0]), "Q", address)
    return SUCCESS


@api()
def rt_cudaGetSymbolSize(rt, args, node):
    rt.store(int(args[0]), "Q", sizeof(args[1].type))
    return SUCCESS


# ---- streams ----
def _new_stream(rt, args, flags):
    if flags not in (FLAGS["cudaStreamDefault"], FLAGS["cudaStreamNonBlocking"]):
        return INVALID_VALUE
    handle = rt.handle()
    rt.streams[handle] = flags
    rt.store(int(args[0]), "Q", handle)
    return SUCCESS


@api()
def rt_cudaStreamCreate(rt, args, node):
    return _new_stream(rt, args, FLAGS["cudaStreamDefault"])


@api()
def rt_cudaStreamCreateWithFlags(rt, args, node):
    return _new_stream(rt, args, int(args[1]))


@api(sync=True)
def rt_cudaStreamSynchronize(rt, args, node):
    return SUCCESS if int(args[0]) in rt.streams else INVALID_HANDLE


@api(sync=True)
def rt_cudaStreamQuery(rt, args, node):
    return SUCCESS if int(args[0]) in rt.streams else INVALID_HANDLE


@api()
def rt_cudaStreamDestroy(rt, args, node):
    handle = int(args[0])
    if handle == 0 or handle not in rt.streams:
        return INVALID_HANDLE
    del rt.streams[handle]
    return SUCCESS


@api()
def rt_cudaStreamWaitEvent(rt, args, node):
    if int(args[0]) not in rt.streams or int(args[1]) not in rt.events:
        return INVALID_HANDLE
    return SUCCESS


# ---- events ----
def _new_event(rt, args, flags):
    known = FLAGS["cudaEventBlockingSync"] | FLAGS["cudaEventDisableTiming"] | FLAGS["cudaEventInterprocess"]
    if flags & ~known or (flags & FLAGS["cudaEventInterprocess"] and not flags & FLAGS["cudaEventDisableTiming"]):
        return INVALID_VALUE
    handle = rt.handle()
    rt.events[handle] = Event(flags)
    rt.store(int(args[0]), "Q", handle)
    return SUCCESS


@api()
def rt_cudaEventCreate(rt, args, node):
    return _new_event(rt, args, FLAGS["cudaEventDefault"])


@api()
def rt_cudaEventCreateWithFlags(rt, args, node):
    return _new_event(rt, args, int(args[1]))


@api()
def rt_cudaEventRecord(rt, args, node):
    event = rt.events.get(int(args[0]))
    stream = int(args[1]) if len(args) > 1 else 0
    if event is None or stream not in rt.streams:
        return INVALID_HANDLE
    event.time_ms = rt.clock_ms
    return SUCCESS


@api(sync=True)
def rt_cudaEventSynchronize(rt, args, node):
    return SUCCESS if int(args[0]) in rt.events else INVALID_HANDLE


@api(sync=True)
def rt_cudaEventQuery(rt, args, node):
    return SUCCESS if int(args[0]) in rt.events else INVALID_HANDLE


@api()
def rt_cudaEventElapsedTime(rt, args, node):
    start, stop = rt.events.get(int(args[1])), rt.events.get(int(args[2]))
    if start is None or stop is None or start.time_ms is None or stop.time_ms is None:
        return INVALID_HANDLE
    if (start.flags | stop.flags) & FLAGS["cudaEventDisableTiming"]:
        return INVALID_HANDLE
    if int(args[0]) == 0:
        return INVALID_VALUE
    rt.store(int(args[0]), "f", round_f32(stop.time_ms - start.time_ms))
    return SUCCESS


@api()
def rt_cudaEventDestroy(rt, args, node):
    if rt.events.pop(int(args[0]), None) is None:
        return INVALID_HANDLE
    return SUCCESS


# ---- the device ----
@api(device=False)
def rt_cudaGetDeviceCount(rt, args, node):
    rt.store(int(args[0]), "i", 1)
    return SUCCESS


@api(device=False)
def rt_cudaSetDevice(rt, args, node):
    return SUCCESS if int(args[0]) == 0 else INVALID_DEVICE


@api(device=False)
def rt_cudaGetDevice(rt, args, node):
    rt.store(int(args[0]), "i", 0)
    return SUCCESS


@api(device=False)
def rt_cudaGetDeviceProperties(rt, args, node):
    if int(args[1]) != 0:
        return INVALID_DEVICE
    t = S.BUILTIN_TYPEDEFS["cudaDeviceProp"]
    address = int(args[0])
    memory = rt.it.memory
    memory.fill(address, 0, sizeof(t))
    values = device_props.properties(rt.arch)
    for name, ftype, offset in t.fields:
        value = values.get(name)
        if value is None:
            continue
        if isinstance(value, str):
            memory.write(address + offset, value.encode()[:sizeof(ftype) - 1])
        elif isinstance(ftype, S.ArrayType):
            fmt = struct_format(ftype.elem)
            for k, v in enumerate(value):
                memory.store(address + offset + k * sizeof(ftype.elem), fmt, v)
        else:
            memory.store(address + offset, struct_format(ftype), value)
    return SUCCESS


@api(device=False)
def rt_cudaDeviceGetAttribute(rt, args, node):
    if int(args[2]) != 0:
        return INVALID_DEVICE
    name = ATTRIBUTE_NAMES.get(int(args[1]))
    if name is None:
        return INVALID_VALUE
    value = device_props.attribute(rt.arch, name)
    if value is None:
        raise HostError(f"unsupported feature: cudaDeviceGetAttribute({name}) under ptxc run")
    rt.store(int(args[0]), "i", value)
    return SUCCESS


@api(device=False)
def rt_version(rt, args, node):
    rt.store(int(args[0]), "i", D.RUNTIME_VERSION)
    return SUCCESS


FUNCTIONS = {
    "cudaGetLastError": rt_get_last_error, "cudaPeekAtLastError": rt_peek_at_last_error,
    "cudaGetErrorString": rt_get_error_string, "cudaGetErrorName": rt_get_error_name,
    "cudaDeviceSynchronize": rt_cudaDeviceSynchronize, "cudaDeviceReset": rt_device_reset,
    "cudaMalloc": rt_cudaMalloc, "cudaMallocManaged": rt_cudaMallocManaged, "cudaFree": rt_cudaFree,
    "cudaMemcpy": rt_cudaMemcpy, "cudaMemcpyAsync": rt_cudaMemcpyAsync,
    "cudaMemset": rt_cudaMemset, "cudaMemsetAsync": rt_cudaMemsetAsync, "cudaMemGetInfo": rt_cudaMemGetInfo,
    "cudaMallocHost": rt_cudaMallocHost, "cudaHostAlloc": rt_cudaHostAlloc, "cudaFreeHost": rt_cudaFreeHost,
    "cudaMemcpyToSymbol": rt_cudaMemcpyToSymbol, "cudaMemcpyFromSymbol": rt_cudaMemcpyFromSymbol,
    "cudaGetSymbolAddress": rt_cudaGetSymbolAddress, "cudaGetSymbolSize": rt_cudaGetSymbolSize,
    "cudaStreamCreate": rt_cudaStreamCreate, "cudaStreamCreateWithFlags": rt_cudaStreamCreateWithFlags,
    "cudaStreamSynchronize": rt_cudaStreamSynchronize, "cudaStreamQuery": rt_cudaStreamQuery,
    "cudaStreamDestroy": rt_cudaStreamDestroy, "cudaStreamWaitEvent": rt_cudaStreamWaitEvent,
    "cudaEventCreate": rt_cudaEventCreate, "cudaEventCreateWithFlags": rt_cudaEventCreateWithFlags,
    "cudaEventRecord": rt_cudaEventRecord, "cudaEventSynchronize": rt_cudaEventSynchronize,
    "cudaEventQuery": rt_cudaEventQuery, "cudaEventElapsedTime": rt_cudaEventElapsedTime,
    "cudaEventDestroy": rt_cudaEventDestroy,
    "cudaGetDeviceCount": rt_cudaGetDeviceCount, "cudaSetDevice": rt_cudaSetDevice,
    "cudaGetDevice": rt_cudaGetDevice, "cudaGetDeviceProperties": rt_cudaGetDeviceProperties,
    "cudaDeviceGetAttribute": rt_cudaDeviceGetAttribute,
    "cudaRuntimeGetVersion": rt_version, "cudaDriverGetVersion": rt_version,
}

# how the emulator's LaunchError kinds read as the runtime's errors (None: ptxc stops the
# program with the report: the emulator's limits and gaps are not the program's errors)
FAULTS = {"memcheck": "cudaErrorIllegalAddress", "trap": "cudaErrorLaunchFailure",
          "illegal-instruction": "cudaErrorIllegalInstruction"}


def launch_failure(err) -> LaunchFailure | None:
    """The LaunchFailure a ptxc.emu LaunchError is to the program, None if it is not one."""
    text = str(err)
    if err.kind == "config":        # (driver_types.h: too many threads, blocks or shared memory)
        return LaunchFailure(CODES["cudaErrorInvalidConfiguration"], text, sticky=False)
    name = FAULTS.get(err.kind)
    if name is None:
        return None
    if err.kind == "memcheck" and "misaligned" in text:
        name = "cudaErrorMisalignedAddress"
    return LaunchFailure(CODES[name], text, sticky=True)

