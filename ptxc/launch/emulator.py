"""The emulator as the binder's machine (bind.py): a kernel file's launches on ptxc.emu.

numba is imported when the first launch runs, not when this module is.
"""
from __future__ import annotations

from .bind import KernelNotFound, Machine, SpecRun, bind_and_run
from .spec import Launch


class EmulatorMachine(Machine):
    """One cubin loaded on an emulated GPU (ptxc.emu.device.Device)."""

    def __init__(self, cubin: bytes, cubin_name: str, max_steps: int | None, check_hazards: bool, device=None):
        from ..emu.device import DEFAULT_MAX_STEPS, Device
        self.device = device or Device()
        self.module = self.device.load(cubin, cubin_name)
        self.max_steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
        self.check_hazards = check_hazards

    def kernel(self, name: str):
        from ..emu.device import LaunchError
        try:
            kernel = self.module.kernel(name)
        except LaunchError as err:
            raise KernelNotFound(str(err)) from None
        return kernel, kernel.params

    def alloc(self, nbytes: int, key: str) -> int:
        return self.device.malloc(nbytes, key)

    def upload(self, address: int, data) -> None:
        self.device.memory.write(address, data)

    def download(self, address: int, spec):
        return self.device.memory.view(address, spec.dtype, spec.count).copy()

    def launch(self, kernel, launch: Launch, params: list, args: list):
        return self.device.launch(kernel, launch.grid, launch.block, args, launch.shared,
                                  max_steps=self.max_steps, check_hazards=self.check_hazards)


def run_launches(cubin: bytes, launches: list[Launch], source: str, filename: str,
                 cubin_name: str = "x.cubin", max_steps: int | None = None,
                 check_hazards: bool = False, device=None, only: set | None = None) -> SpecRun:
    """Run `launches` (from parse_file) on `cubin` in the emulator (`device`: a
    ptxc.emu.device.Device, a fresh one by default; `max_steps`: its default bound).  Bad
    specs raise SpecError (with the spec's line and column); failed launches raise
    ptxc.emu.device.LaunchError."""
    machine = EmulatorMachine(cubin, cubin_name, max_steps, check_hazards, device)
    return bind_and_run(machine, launches, source, filename, only=only)
