"""The launch harness: a kernel file's `// LAUNCH:` lines run on the emulator or on a real
GPU, the buffers compared and the differences reported.

    from ptxc.launch import parse_file, run_launches, differences
    launches = parse_file(source, "vadd.cu")               # spec.py: the LAUNCH syntax
    run = run_launches(cubin, launches, source, "vadd.cu")  # emulator.py: on ptxc.emu
    run.buffers["c"]; differences("c", run.buffers["c"], other.buffers["c"], ulp=1)

spec.py parses the lines and makes the buffers' initial contents; bind.py is the one
binder (kernels found, items checked, buffers bound by name across lines, scalars packed,
buffers read back) over a Machine: emulator.py for ptxc.emu, ptxc.device for the CUDA
driver API; compare.py compares buffers (exactly, or within N ulp); report.py prints what
`ptxc check` prints.  Importing this package imports neither numba nor a GPU binding.
"""
from __future__ import annotations

from .bind import KernelNotFound, Machine, SpecRun, bind_and_run, spec_error
from .compare import differences, ordered_bits, ulp_distance
from .emulator import run_launches
from .spec import Buffer, Launch, Scalar, SpecError, parse_file, parse_line

__all__ = ["KernelNotFound", "Machine", "SpecRun", "bind_and_run", "spec_error", "differences", "ordered_bits",
           "ulp_distance", "run_launches", "Buffer", "Launch", "Scalar", "SpecError", "parse_file", "parse_line"]
