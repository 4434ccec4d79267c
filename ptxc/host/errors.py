"""The ways an interpreted program stops or fails, shared by the interpreter, the C
library, the CUDA runtime and the GPUs behind it."""
from __future__ import annotations


class HostError(Exception):
    """An error of the interpreted program (bad memory access, unsupported construct,
    a failed launch): reported with the source location, exit 1."""

    def __init__(self, message: str, loc=None):
        super().__init__(message)
        self.loc = loc


class ExitProgram(Exception):
    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


class LaunchFailure(Exception):
    """A kernel launch that the CUDA runtime reports as a cudaError instead of stopping
    the program: `code` (a cudaError value), `sticky` (a fault in the kernel, which
    corrupts the context: every later call returns it; a bad configuration is not) and
    the emulator's report (`str()`)."""

    def __init__(self, code: int, report: str, sticky: bool):
        super().__init__(report)
        self.code = code
        self.sticky = sticky
