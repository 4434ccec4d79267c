"""`ptxc run`: interpret a CUDA program's host code (main) with its kernels on the
emulated GPU (ptxc.emu).  interp.py runs the typed AST of main; memory.py is host
memory; printf.py formats output; libc.py is more of the C library; runtime.py is the
CUDA runtime API (device_props.py the device it describes); vectorize.py runs simple
array loops with NumPy.

The interpreter's GPU (GPU below, or ptxc.cli.host_gpu.HostGPU for a real one):

    gpu.arch                                       the architecture (cudaGetDeviceProperties)
    gpu.device.malloc(size, name), .free(address)  cudaMalloc, cudaFree
    gpu.device.memory.find/read/write              device memory, cudaMemcpyDefault
    gpu.launch(symbol, grid, block, shared, args, node) -> milliseconds
        raises LaunchFailure for what the runtime reports as a cudaError (a bad
        configuration, a fault in the kernel) and HostError for what stops the program
    gpu.write_symbol(name, space, offset, data), gpu.read_symbol(name, space, offset, size),
    gpu.symbol_address(name, space)               cudaMemcpyToSymbol & co (KeyError: no such symbol)
"""
from __future__ import annotations

from .errors import LaunchFailure
from .interp import ExitProgram, HostError, Interpreter


class GPU:
    """The kernels of one cubin on one emulated device, as the CUDA runtime sees them."""

    def __init__(self, cubin: bytes | None, cubin_name: str, trace=None, max_steps=None, check_hazards=False,
                 on_hazards=None, missing: dict | None = None, arch: str = "sm_89"):
        """`missing`: kernels the compiler could not build, with why (a launch of one
        is an error that says so)."""
        from ..emu.device import DEFAULT_MAX_STEPS, Device
        self.device = Device()
        self.device.trace = trace
        self.module = self.device.load(cubin, cubin_name) if cubin is not None else None
        self.arch = self.module.arch.name if self.module is not None else arch
        self.missing = missing or {}
        self.max_steps = max_steps or DEFAULT_MAX_STEPS
        self.check_hazards = check_hazards
        self.on_hazards = on_hazards
        self.launches = []

    def kernel_for(self, symbol):
        from ..emu.device import LaunchError
        why = self.missing.get(symbol.mangled) or self.missing.get(symbol.name)
        if why is not None:
            raise HostError(f"ptxc cannot compile kernel '{symbol.name}' yet: {why} "
                            "(run with --with=nvcc to use nvcc's cubin)")
        if self.module is None:
            raise HostError(f"no cubin holds kernel '{symbol.name}'")
        if symbol.mangled and symbol.mangled in self.module.kernels:
            return self.module.kernels[symbol.mangled]
        try:
            return self.module.kernel(symbol.name)
        except LaunchError as err:
            raise HostError(str(err)) from None

    def launch(self, symbol, grid, block, shared, args, node):
        from ..emu.device import LaunchError
        try:
            kernel = self.kernel_for(symbol)
        except HostError as err:
            raise HostError(str(err), node.loc) from None
        try:
            result = self.device.launch(kernel, grid, block, args, shared, max_steps=self.max_steps,
                                        check_hazards=self.check_hazards)
        except LaunchError as err:
            from .runtime import launch_failure
            failure = launch_failure(err)
            if failure is not None:
                raise failure from None
            raise HostError(f"kernel launch {symbol.name}<<<...>>> failed:\n{err}", node.loc) from None
        self.launches.append(result)
        if result.hazards and self.on_hazards is not None:
            self.on_hazards(kernel, result.hazards)
        return result.seconds * 1000.0

    # ---- __device__ and __constant__ variables ----
    def _symbol(self, name: str):
        """(section name, address or offset) of a module variable; KeyError if none."""
        if self.module is None:
            raise KeyError(name)
        cubin = self.module.cubin
        for sym in cubin.symbols:
            if sym.name == name and 0 < sym.shndx < len(cubin.sections):
                return cubin.sections[sym.shndx].name, self.module.symbols[name]
        raise KeyError(name)

    def write_symbol(self, name: str, space, offset: int, data: bytes) -> None:
        section, where = self._symbol(name)
        if section.startswith(".nv.constant"):
            bank = self.module.banks[int(section.split(".")[2].removeprefix("constant"))]
            bank[where + offset:where + offset + len(data)] = data
        else:
            self.device.memory.write(where + offset, data)

    def read_symbol(self, name: str, space, offset: int, size: int) -> bytes:
        section, where = self._symbol(name)
        if section.startswith(".nv.constant"):
            bank = self.module.banks[int(section.split(".")[2].removeprefix("constant"))]
            return bytes(bank[where + offset:where + offset + size])
        return self.device.memory.read(where + offset, size)

    def symbol_address(self, name: str, space) -> int:
        section, where = self._symbol(name)
        if section.startswith(".nv.constant"):
            raise HostError(f"unsupported feature: the address of the __constant__ variable '{name}' "
                            "on the emulator (constant banks are not in its global memory)")
        return where


def run_program(program, filename: str, gpu: GPU, write, argv: list[str] | None = None, write_err=None) -> int:
    """Run main() of a typed AST with `argv` as its arguments; returns its exit status."""
    return Interpreter(program, filename, gpu, write, argv=argv, write_err=write_err).run()


__all__ = ["GPU", "HostError", "ExitProgram", "Interpreter", "LaunchFailure", "run_program"]
