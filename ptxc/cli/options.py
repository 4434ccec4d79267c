"""What `ptxc run` and `ptxc check` share: reading the input, the --device options and the
checks that an emulator option is not given with --device (nor a device one without)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..diagnostics import CompileError, Diagnostic
from ..sass.target import TARGETS, with_backend


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except FileNotFoundError:
        raise CompileError(Diagnostic(f"'{path}': no such file")) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CompileError(Diagnostic(f"'{path}': cannot read: {exc}")) from None


def _print_error(exc) -> None:
    print(exc.format() if isinstance(exc, CompileError) else str(exc), file=sys.stderr)


def _device_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", action="store_true",
                   help="run the kernels on the real GPU (CUDA driver API) instead of the emulator")
    p.add_argument("--ptx", action="store_true",
                   help="with --device: load ptxc's PTX text (run --with=nvcc: nvcc's) through the driver's "
                        "JIT instead of a cubin")
    from ..frontend.preprocess import Options
    Options.add_arguments(p)
    p.add_argument("--ptx-version", metavar="V",
                   help="with --ptx: the PTX .version to write (default: the newest the driver's JIT takes)")
    p.add_argument("--nvcc-cubin", metavar="FILE",
                   help="use this cubin as nvcc's instead of running nvcc (a machine without NVIDIA's compilers)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S",
                   help="with --device: seconds a kernel may run (the GPU has no watchdog; default 60)")
    p.add_argument("-arch", default=None,
                   help=f"target: {', '.join(TARGETS)} (default sm_89) on the emulator; with --device, default the GPU's own (sm_90 on an H200)")


def _pp_options(args):
    """The preprocessor's -I/-D/-U of the command line (none where a parser lacks them)."""
    from ..frontend.preprocess import Options
    return Options.from_args(args) if hasattr(args, "include_dirs") else Options()


def _check_device_options(command: str, args, emulator_only: list) -> None:
    """Options that belong to one side (emulator or --device) used on the other: an error."""
    if args.device:
        given = [flag for flag, value in emulator_only if value]
        if given:
            raise CompileError(Diagnostic(f"{', '.join(given)}: emulator option(s), not with --device"))
        if args.ptx_version and not args.ptx:
            raise CompileError(Diagnostic("--ptx-version needs --ptx"))
        if args.timeout <= 0:
            raise CompileError(Diagnostic("--timeout must be positive"))
        if command == "run" and args.ptx and args.nvcc_cubin:
            raise CompileError(Diagnostic("--nvcc-cubin runs that cubin: not with --ptx"))
        return
    for flag, value in (("--ptx", args.ptx), ("--ptx-version", args.ptx_version)):
        if value:
            raise CompileError(Diagnostic(f"{flag} needs --device (the emulator runs cubins)"))


def _gpu_timeout(err) -> None:
    """A kernel that never ends keeps the GPU until the process exits: report and exit now."""
    sys.stdout.flush()
    print(f"ptxc: error: {err}", file=sys.stderr)
    sys.stderr.flush()
    os._exit(1)
