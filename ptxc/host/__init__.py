"""`ptxc run`: interpret a CUDA program's host code (main) with its kernels on the
emulated GPU (ptxc.emu).  interp.py runs the typed AST of main; memory.py is host
memory; printf.py formats output; vectorize.py runs simple array loops with NumPy."""
from __future__ import annotations

from .interp import ExitProgram, HostError, Interpreter


class GPU:
    """The kernels of one cubin on one emulated device, as the CUDA runtime sees them."""

    def __init__(self, cubin: bytes | None, cubin_name: str, trace=None, max_steps=None, check_hazards=False,
                 on_hazards=None, missing: dict | None = None):
        """`missing`: kernels the compiler could not build, with why (a launch of one
        is an error that says so)."""
        from ..emu.device import DEFAULT_MAX_STEPS, Device
        self.device = Device()
        self.device.trace = trace
        self.module = self.device.load(cubin, cubin_name) if cubin is not None else None
        self.missing = missing or {}
        self.max_steps = max_steps or DEFAULT_MAX_STEPS
        self.check_hazards = check_hazards
        self.on_hazards = on_hazards
        self.last_error = 0
        self.sticky_error = 0
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
            raise HostError(f"kernel launch {symbol.name}<<<...>>> failed:\n{err}", node.loc) from None
        self.launches.append(result)
        if result.hazards and self.on_hazards is not None:
            self.on_hazards(kernel, result.hazards)
        return result


def run_program(program, filename: str, gpu: GPU, write) -> int:
    """Run main() of a typed AST; returns its exit status."""
    return Interpreter(program, filename, gpu, write).run()


__all__ = ["GPU", "HostError", "ExitProgram", "Interpreter", "run_program"]
