"""The emulated GPU as the driver sees it: global memory, loaded modules, launches.

Global memory is one byte heap mapped at GLOBAL_BASE; `malloc` hands out 512-byte
aligned allocations in increasing address order, each followed by a red zone no
allocation ever uses, so an access just past the end of a buffer is caught as out of
bounds (compute-sanitizer pads allocations the same way).  Freed ranges are not reused,
which keeps addresses reproducible run to run.

A module runs on the architecture its cubin names (ELF e_flags): sm_89 (Ada) or sm_90
(Hopper, the H200); the instruction table, constant bank 0, the shared-memory limit and
the hazard checker's latency table follow it (ARCHS).  Any other arch is refused at
load with a LaunchError.

A launch (`Device.launch`) builds what the driver would - the parameter buffer,
constant bank 0 and a QMD-like descriptor - and hands them to the jitted core
(core.run_grid).  Constant bank 0, the slots nvcc's code reads (measured over every
testsuite kernel: the `c[0x0][...]` operands of `cuobjdump -sass`):

    sm_89  sm_90
    0x000  0x000  blockDim.x, .y, .z (sm_90 reads .x as `LDC R9, c[0x0][RZ]`)
    0x00c  0x00c  gridDim.x, .y, .z
    0x018  0x018  shared window: 64-bit generic address of shared offset 0 (sm_89's
                  code reads it for generic shared pointers; sm_90's takes the high
                  word from SR_SWINHI instead and never reads this slot)
    0x020  0x020  local window (64-bit generic address of local offset 0; an
                  assumption: no nvcc code of either arch reads it)
    0x028  0x028  stack base: the top of each thread's local memory (R1 starts here;
                  sm_90: `LDC R1, c[0x0][0x28]`)
    0x118  0x208  global memory descriptor (64-bit, opaque: `ULDC.64 UR4, c[0x0][...]`,
                  the `desc[UR4]` of .E accesses; the emulator ignores its value)
    0x160  0x210  kernel parameters at their KPARAM_INFO offsets (the base from the
                  cubin's PARAM_CBANK record)

Shared memory on sm_90: the kernel's `.nv.shared.<k>` window starts with a 1 KiB area
the driver reserves (`.nv.shared.reserved.0`), so its size counts it (a 1 KiB array:
0x800) and the variables, then the dynamic shared memory, follow it.  Code forms
shared addresses as (SR_CgaCtaId << 24) + offset - the CTA's slot in its cluster's
distributed shared window; a launch without clusters is a cluster of one CTA, so
SR_CgaCtaId is 0 and the address is the offset.  Generic shared pointers are
SR_SWINHI:offset.  The per-block limit is the opt-in maximum: 227 KiB of the kernel's
own (static + dynamic) on sm_90 beside the reserved 1 KiB, 99 KiB on sm_89.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ..cubin.reader import CubinError, read_cubin
from ..sass.decode import decode_all
from ..sass.table import load as load_table
from ..sass.target import TARGETS, Target, with_table
from . import isa as I
from .program import Program, compile_program, resolve_cbanks

GLOBAL_BASE = 0x7F3C_0000_0000
SHARED_WINDOW = 0x7FFE_0000_0000
LOCAL_WINDOW = 0x7FFF_0000_0000
CODE_BASE = 0x7F3B_0000_0000       # where modules' .text would live (for the descriptor)
CBANK_BASE = 0x7F3B_8000_0000      # and constant-bank images
GLOBAL_DESCRIPTOR = 0x0000_0001_0000_0000
ALIGN = 512
RED_ZONE = 512
DEFAULT_STACK = 1024               # bytes of local memory per thread when ptxas cannot bound it
MAX_BLOCK_THREADS = 1024
# What differs between the architectures the emulator runs is their target record
# (ptxc.sass.target): the descriptor's bank-0 slot, the default parameter base (the
# cubin's PARAM_CBANK overrides it), the per-block opt-in maximum of the kernel's own
# shared memory, the bytes at the start of .nv.shared.<k> the driver reserves.
ARCHS = with_table()   # the targets whose instruction table exists (records: TARGETS)
DEFAULT_MAX_STEPS = 100_000_000    # warp instructions per launch (about 20 s): --max-steps changes it
SLICE = 2048                       # warp instructions before the next warp takes its turn


class LaunchError(Exception):
    """A launch that cannot start or that stopped (bad configuration, out-of-bounds
    access, deadlock, ...).  str() is the whole report; `report` the same lines."""

    def __init__(self, message: str, kind: str = "launch"):
        super().__init__(message)
        self.kind = kind


@dataclass
class Allocation:
    address: int
    size: int
    name: str = ""
    live: bool = True


class Memory:
    """Device global memory: a growing byte heap at GLOBAL_BASE."""

    def __init__(self):
        self.heap = np.zeros(0, dtype=np.uint8)
        self.allocations: list[Allocation] = []
        self.top = 0

    def malloc(self, size: int, name: str = "") -> int:
        if size < 0:
            raise LaunchError(f"cannot allocate {size} bytes")
        offset = self.top
        self.top = offset + _round_up(max(size, 1), ALIGN) + RED_ZONE
        self._grow(self.top)
        alloc = Allocation(GLOBAL_BASE + offset, size, name)
        self.allocations.append(alloc)
        return alloc.address

    def free(self, address: int) -> None:
        alloc = self.find(address)
        if alloc is None or alloc.address != address or not alloc.live:
            raise LaunchError(f"free of {address:#x}, which is not a live allocation")
        alloc.live = False

    def find(self, address: int) -> Allocation | None:
        for alloc in self.allocations:
            if alloc.address <= address < alloc.address + max(alloc.size, 1):
                return alloc
        return None

    def nearest(self, address: int) -> Allocation | None:
        live = [a for a in self.allocations if a.live]
        if not live:
            return None
        return min(live, key=lambda a: 0 if a.address <= address < a.address + a.size
                   else min(abs(address - a.address), abs(address - (a.address + a.size - 1))))

    def _grow(self, size: int) -> None:
        if size > len(self.heap):
            heap = np.zeros(max(size, 2 * len(self.heap)), dtype=np.uint8)
            heap[:len(self.heap)] = self.heap
            self.heap = heap

    def _range(self, address: int, size: int) -> slice:
        alloc = self.find(address)
        if alloc is None or not alloc.live or address + size > alloc.address + alloc.size:
            raise LaunchError(f"host access of {size} bytes at {address:#x} is outside every live allocation",
                              "memcpy")
        off = address - GLOBAL_BASE
        return slice(off, off + size)

    def write(self, address: int, data) -> None:
        data = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) \
            else data.reshape(-1).view(np.uint8)
        self.heap[self._range(address, len(data))] = data

    def read(self, address: int, size: int) -> bytes:
        return self.heap[self._range(address, size)].tobytes()

    def read_cstring(self, address: int, limit: int = 1 << 16) -> bytes | None:
        """The bytes of the NUL-terminated string at `address` in device memory (without
        the NUL; cut at the end of its allocation or `limit`), None outside every one."""
        alloc = self.find(address)
        if alloc is None or address < GLOBAL_BASE:
            return None
        off = address - GLOBAL_BASE
        end = min(alloc.address + max(alloc.size, 1) - GLOBAL_BASE, off + limit, len(self.heap))
        data = self.heap[off:end].tobytes()
        return data.split(b"\0", 1)[0]

    def view(self, address: int, dtype, count: int) -> np.ndarray:
        nbytes = np.dtype(dtype).itemsize * count
        return self.heap[self._range(address, nbytes)].view(dtype)

    def table(self) -> np.ndarray:
        live = sorted((a for a in self.allocations if a.live), key=lambda a: a.address)
        out = np.zeros((max(len(live), 1), 2), dtype=np.int64)
        for i, a in enumerate(live):
            out[i] = (a.address - GLOBAL_BASE, a.size)
        return out[:len(live)] if live else out[:0]


def _round_up(n: int, k: int) -> int:
    return (n + k - 1) // k * k


@dataclass
class Kernel:
    """A kernel of a loaded cubin."""
    name: str
    image: object                 # ptxc.cubin.writer.KernelImage
    program: Program
    banks: dict                   # bank number -> bytes of the cubin's own constant banks
    module: "Module"
    hazard_tables: object = None

    @property
    def arch(self) -> Target:
        return self.module.arch

    @property
    def params(self) -> list[tuple[int, int]]:
        return list(self.image.params)

    @property
    def param_base(self) -> int:
        return self.image.param_base

    def local_bytes(self) -> int:
        """Local memory per thread: the frame ptxas reports, or the default stack when it
        could not bound it (recursion: MIN_STACK_SIZE 0xffffffff)."""
        frame = max(self.image.frame_size or 0, self.image.min_stack_size or 0)
        # sm_90's ptxas writes MIN_STACK_SIZE 0 for a recursive kernel (nvcc's isa_calls
        # recursive_fib): the driver's default stack is what it runs in, as below
        if frame >= 0x10000000 or (self.image.crs_stack_size or 0) >= 0x10000000 or \
                (getattr(self.image, "calls", False) and self.arch.calls_unbounded_stack):
            frame = max(DEFAULT_STACK, self.image.frame_size or 0)
        return _round_up(frame, 16)


R_CUDA_32, R_CUDA_64 = 1, 2


class Module:
    """A cubin loaded for the emulator: its kernels by name (mangled and plain), its
    module-wide constant banks (3: __constant__ variables, 4: addresses of __device__
    variables, filled by relocations) and its __device__ variables, placed in the
    device's global memory (.nv.global zeroed, .nv.global.init copied)."""

    def __init__(self, data: bytes, filename: str = "x.cubin", device: "Device | None" = None):
        try:
            self.cubin = read_cubin(data, filename)
        except CubinError as err:
            raise LaunchError(f"{filename}: {err}", "load") from None
        self.filename = filename
        self.data = data
        arch = self.cubin.arch
        if arch not in ARCHS:
            raise LaunchError(f"{filename}: the cubin is for {arch}; the emulator runs "
                              f"{', '.join(ARCHS)} cubins (compile with -arch={' or -arch='.join(ARCHS)})",
                              "load")
        self.arch = TARGETS[arch]
        table = load_table(arch)
        self.kernels: dict[str, Kernel] = {}
        self.banks: dict[int, bytearray] = {}          # module-wide constant banks
        for name, content in self.cubin.constant_banks.items():
            parts = name.split(".")
            if len(parts) == 3:              # .nv.constant3, .nv.constant4: for every kernel
                self.banks[int(parts[2].removeprefix("constant"))] = bytearray(content)
        self.symbols: dict[str, int] = {}               # __device__ / __constant__ name -> address or offset
        self._place_globals(device)
        for image in self.cubin.kernels:
            banks = {}
            for name, content in self.cubin.constant_banks.items():
                if name.endswith("." + image.name):
                    bank = int(name.split(".")[2].removeprefix("constant"))
                    banks[bank] = bytes(content)
            program = compile_program(image.name, decode_all(image.text, table=table))
            self.kernels[image.name] = Kernel(image.name, image, program, banks, self)

    def _place_globals(self, device) -> None:
        cubin = self.cubin
        bases = {}
        for index, section in enumerate(cubin.sections):
            if section.name in (".nv.global", ".nv.global.init") and device is not None:
                size = section.size or len(section.data)
                address = device.malloc(max(size, 1), section.name)
                if section.data:
                    device.memory.write(address, section.data)
                bases[index] = address
            elif section.name.startswith(".nv.constant"):
                bases[index] = 0
        for sym in cubin.symbols:
            if sym.name and sym.shndx in bases and sym.type == 1:
                self.symbols[sym.name] = bases[sym.shndx] + sym.value
        for rel_name, relocations in cubin.relocations.items():
            target = rel_name.removeprefix(".rel").removeprefix("a")
            bank = None
            if target.startswith(".nv.constant"):
                parts = target.split(".")
                if len(parts) == 3:
                    bank = self.banks.get(int(parts[2].removeprefix("constant")))
            if bank is None:
                continue
            for r in relocations:
                sym = cubin.symbols[r.symbol]
                value = bases.get(sym.shndx, 0) + sym.value
                if sym.shndx == 0 and sym.name:     # an undefined FUNC: a system call of the driver
                    value = syscall_address(sym.name)
                size = 8 if r.type == R_CUDA_64 else 4 if r.type == R_CUDA_32 else 0
                if size == 0:
                    raise LaunchError(f"{self.filename}: relocation type {r.type} in {target} is not supported",
                                      "load")
                addend = r.addend if r.addend is not None else \
                    int.from_bytes(bank[r.offset:r.offset + size], "little")
                bank[r.offset:r.offset + size] = ((value + addend) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def kernel(self, name: str) -> Kernel:
        if name in self.kernels:
            return self.kernels[name]
        from .names import demangle_base, matching_symbols
        by_symbol = {k.name: k for k in self.kernels.values()}
        matches = [by_symbol[m] for m in matching_symbols(list(by_symbol), name)]
        if len(matches) == 1:
            return matches[0]
        known = ", ".join(sorted(demangle_base(k) for k in self.kernels))
        if len(matches) > 1:
            raise LaunchError(f"kernel name '{name}' is ambiguous in {self.filename} (overloads)", "kernel")
        raise LaunchError(f"no kernel '{name}' in {self.filename} (it has: {known})", "kernel")


@dataclass
class LaunchResult:
    warp_instructions: int
    thread_instructions: int
    blocks: int
    seconds: float
    hazards: list = field(default_factory=list)
    syscalls: list = field(default_factory=list)    # printf.SystemCall records, in output order
    syscalls_dropped: int = 0

    @property
    def output(self) -> str:
        """What the kernel's printf calls print (the driver's output after the launch)."""
        from .printf import device_output
        return device_output(self.syscalls)


def syscall_address(name: str) -> int:
    """The address the loader gives the driver's system call `name` (isa.SYSCALLS); a
    name the emulator does not provide gets SYS_BASE, which a call reports."""
    from . import isa
    return isa.SYS_BASE + isa.SYS_STRIDE * isa.SYSCALLS.get(name, 0)


@dataclass
class LaunchConfig:
    grid: tuple
    block: tuple
    shared: int = 0


def dim3(value) -> tuple:
    if isinstance(value, int):
        value = (value,)
    value = tuple(int(v) for v in value)
    return value + (1,) * (3 - len(value))


class Device:
    """An sm_89 or sm_90 GPU (each module runs as its cubin's arch): memory plus the
    launch machinery."""

    def __init__(self):
        self.memory = Memory()
        self.trace = None          # a callable(str) for --trace-launch
        self.printf_sink = None    # a callable(str) for device printf output (ptxc run: stdout)

    # ---- memory ----
    def malloc(self, size: int, name: str = "") -> int:
        return self.memory.malloc(size, name)

    def free(self, address: int) -> None:
        self.memory.free(address)

    def load(self, data: bytes, filename: str = "x.cubin") -> Module:
        return Module(data, filename, self)

    # ---- launches ----
    def param_buffer(self, kernel: Kernel, args: list) -> bytes:
        """Pack argument values at the kernel's KPARAM_INFO offsets.  `args` holds, per
        parameter, bytes of the parameter's size or an int (little-endian, wrapped)."""
        params = kernel.params
        if len(args) != len(params):
            raise LaunchError(f"kernel '{kernel.name}' takes {len(params)} argument(s), "
                              f"{len(args)} given", "arguments")
        size = max((off + sz for off, sz in params), default=0)
        buf = bytearray(size)
        for (off, sz), value in zip(params, args):
            if isinstance(value, (bytes, bytearray)):
                if len(value) != sz:
                    raise LaunchError(f"argument of {len(value)} bytes for a {sz}-byte parameter", "arguments")
                buf[off:off + sz] = value
            else:
                buf[off:off + sz] = (int(value) & ((1 << (8 * sz)) - 1)).to_bytes(sz, "little")
        return bytes(buf)

    def constant_bank0(self, kernel: Kernel, config: LaunchConfig, params: bytes) -> bytes:
        base = kernel.param_base
        arch = kernel.arch
        bank = bytearray(max(base + len(params), len(kernel.banks.get(0, b"")), arch.param_base))
        layout = arch.bank0
        struct.pack_into("<3I", bank, layout.block_dim, *config.block)
        struct.pack_into("<3I", bank, layout.grid_dim, *config.grid)
        struct.pack_into("<Q", bank, layout.shared_window, SHARED_WINDOW)
        struct.pack_into("<Q", bank, layout.local_window, LOCAL_WINDOW)
        struct.pack_into("<I", bank, layout.stack_base, kernel.local_bytes())
        struct.pack_into("<Q", bank, arch.descriptor, GLOBAL_DESCRIPTOR)
        bank[base:base + len(params)] = params
        return bytes(bank)

    def descriptor(self, kernel: Kernel, config: LaunchConfig) -> dict:
        """What a QMD (queue meta data) carries for this launch, in words."""
        image = kernel.image
        return {
            "kernel": kernel.name,
            "grid": config.grid, "block": config.block,
            "registers per thread": image.regcount,
            "shared memory": {"static": image.shared_size, "dynamic": config.shared,
                              "total": image.shared_size + config.shared},
            "local memory per thread": kernel.local_bytes(),
            "barriers": image.num_barriers,
            "program address": CODE_BASE + _module_offset(kernel),
            "program size": len(image.text),
            "constant bank 0 address": CBANK_BASE + _module_offset(kernel),
            "constant bank 0 size": image.param_base + max((o + s for o, s in image.params), default=0),
        }

    def check_config(self, kernel: Kernel, config: LaunchConfig) -> None:
        gx, gy, gz = config.grid
        bx, by, bz = config.block
        arch = kernel.arch
        if min(config.grid) < 1 or min(config.block) < 1:
            raise LaunchError(f"invalid launch configuration: grid {config.grid}, block {config.block} "
                              "(every dimension must be at least 1)", "config")
        if gx >= 1 << 31 or gy > 65535 or gz > 65535:
            raise LaunchError(f"grid {config.grid} exceeds {arch.name}'s limits (2^31-1, 65535, 65535)", "config")
        if bx > 1024 or by > 1024 or bz > 64 or bx * by * bz > MAX_BLOCK_THREADS:
            raise LaunchError(f"block {config.block} exceeds {arch.name}'s limits (1024 threads, z <= 64)", "config")
        # the kernel's own shared memory: its window less the area the driver reserves
        # (sm_90's .nv.shared.<k> counts it), plus the launch's dynamic bytes
        static = kernel.image.shared_size
        own = max(static - arch.reserved_shared, 0) if static else 0
        shared = own + config.shared
        if shared > arch.max_shared_per_block:
            reserved = f" (beside the {arch.reserved_shared} bytes the driver reserves)" if arch.reserved_shared else ""
            raise LaunchError(f"{shared} bytes of shared memory per block exceed {arch.name}'s "
                              f"{arch.max_shared_per_block}{reserved}", "config")
        if kernel.image.max_threads and bx * by * bz > int(np.prod(kernel.image.max_threads)):
            raise LaunchError(f"block of {bx * by * bz} threads exceeds the kernel's __launch_bounds__ "
                              f"{kernel.image.max_threads}", "config")

    def launch(self, kernel: Kernel, grid, block, args: list, shared: int = 0,
               max_steps: int = DEFAULT_MAX_STEPS, check_hazards: bool = False) -> LaunchResult:
        import time

        from .runner import run
        config = LaunchConfig(dim3(grid), dim3(block), int(shared))
        self.check_config(kernel, config)
        params = self.param_buffer(kernel, args)
        bank0 = self.constant_bank0(kernel, config, params)
        if self.trace is not None:
            self.trace_launch(kernel, config, params, bank0)
        banks = {number: bytes(content) for number, content in kernel.module.banks.items()}
        banks.update(kernel.banks)
        banks[0] = bank0
        start = time.perf_counter()
        try:
            result = run(self, kernel, config, banks, max_steps, check_hazards)
        except LaunchError as err:
            self.print_output(getattr(err, "result", None))
            raise
        result.seconds = time.perf_counter() - start
        self.print_output(result)
        return result

    def print_output(self, result) -> None:
        """Device printf: after a launch, what its vprintf calls printed goes to
        `printf_sink` (ptxc run sets it to the program's stdout), as the driver prints
        its printf buffer at the next synchronization."""
        if result is not None and self.printf_sink is not None and result.syscalls:
            text = result.output
            if text:
                self.printf_sink(text)

    def trace_launch(self, kernel: Kernel, config: LaunchConfig, params: bytes, bank0: bytes) -> None:
        out = self.trace
        out(f"launch {kernel.name} grid=({','.join(map(str, config.grid))}) "
            f"block=({','.join(map(str, config.block))}) shared={config.shared}")
        out("  parameter buffer:")
        for i, (off, size) in enumerate(kernel.params):
            value = int.from_bytes(params[off:off + size], "little")
            out(f"    param {i}: offset {off:#x} ({off}), {size} bytes = {value:#0{2 + 2 * size}x}")
        out(f"  constant bank 0 ({len(bank0)} bytes):")
        layout = kernel.arch.bank0
        labels = {layout.block_dim: "blockDim.x", layout.block_dim + 4: "blockDim.y", layout.block_dim + 8: "blockDim.z",
                  layout.grid_dim: "gridDim.x", layout.grid_dim + 4: "gridDim.y", layout.grid_dim + 8: "gridDim.z",
                  layout.shared_window: "shared window", layout.local_window: "local window",
                  layout.stack_base: "stack base", kernel.arch.descriptor: "global descriptor",
                  kernel.param_base: "parameters"}
        for off in range(0, len(bank0), 16):
            chunk = bank0[off:off + 16]
            if not any(chunk) and off not in labels and not any(off <= k < off + 16 for k in labels):
                continue
            words = " ".join(f"{int.from_bytes(chunk[i:i + 4], 'little'):08x}" for i in range(0, len(chunk), 4))
            notes = ", ".join(f"{k:#x} {v}" for k, v in labels.items() if off <= k < off + 16)
            out(f"    c[0x0][{off:#05x}]: {words}" + (f"   ; {notes}" if notes else ""))
        out("  launch descriptor (QMD):")
        for key, value in self.descriptor(kernel, config).items():
            if isinstance(value, int) and "address" in key:
                value = f"{value:#x}"
            out(f"    {key}: {value}")


def _module_offset(kernel: Kernel) -> int:
    names = list(kernel.module.kernels)
    return names.index(kernel.name) * 0x10000 if kernel.name in names else 0
