"""`ptxc run`: a CUDA program, host main() interpreted, its kernels on the emulator, or
with --device on a real GPU (`ptxc check`, its sibling, is check.py).

    ptxc run prog.cu [--with=nvcc] [--trace-launch] [--max-steps=N] [--check-hazards] [-- ARGS...]
    ptxc check kernels.cu [--max-steps=N] [--check-hazards] [--isolate]
    ptxc run --device prog.cu [--with=nvcc | --nvcc-cubin=F] [--ptx [--ptx-version=V]] [-arch=A]
    ptxc check --device kernels.cu [--ptx] [--nvcc-cubin=F] [--repeat=N] [-arch=A]

With --device the kernels run on the first CUDA GPU through the driver API (ptxc.device;
host code is still interpreted, with ptxc.cli.host_gpu.HostGPU as its GPU), compiled
for the GPU's architecture unless -arch says otherwise: ptxc's cubin, nvcc's cubin
(--with=nvcc, or a prebuilt one: --nvcc-cubin), or with --ptx the PTX text, which the
driver's JIT compiles (`.version` the newest that driver takes, or --ptx-version).
`check --device` also times each launch (CUDA events, the mean of --repeat launches
after a warm-up) and gives the ratio ptxc/nvcc.

`ptxc run` passes what follows `--` to main() as argv[1:] and exits with main's
return value (or exit()'s status).  All return an exit status and print errors as `file:line:col: error: ...` (or the
emulator's sanitizer report), `ptxc: error: no CUDA GPU available: ...` without a GPU,
never a traceback; numba is imported only when a kernel is about to run on the emulator.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..diagnostics import CompileError, Diagnostic
from ..sass.target import TARGETS, with_backend
from .images import EMULATED_ARCHS, NO_SASS_HINT, device_image, nvcc_cubin, open_gpu, ptxc_cubin
from .options import _check_device_options, _device_options, _gpu_timeout, _pp_options, _print_error, _read


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ptxc run", description="Run a CUDA program (host main() and its kernels) "
                                f"on the emulated GPU ({', '.join(TARGETS)}), or with --device on the real one.")
    p.add_argument("input", help="a .cu file with main()")
    p.add_argument("program_args", nargs="*", metavar="-- ARGS",
                   help="after --: the program's arguments (main's argv[1:])")
    p.add_argument("--with", dest="compiler", choices=("ptxc", "nvcc"), default="ptxc",
                   help="whose cubin runs the kernels (default: ptxc's own)")
    p.add_argument("--trace-launch", action="store_true",
                   help="print each launch's parameter buffer, constant bank 0 and launch descriptor "
                        "(--device: the parameter buffer and the kernel time)")
    p.add_argument("--max-steps", type=int, default=None, metavar="N",
                   help="stop a launch after N warp instructions (a kernel that never ends)")
    p.add_argument("--check-hazards", action="store_true",
                   help="report reads of results whose scoreboard or stall count was not waited for")
    _device_options(p)
    return p


def run_command(argv: list[str]) -> int:
    argv = list(argv)
    program_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = _run_parser().parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if args.program_args:
        _run_parser().error(f"unexpected argument(s) {' '.join(args.program_args)}: the program's "
                            "arguments go after --")
    args.program_args = program_args
    try:
        return _run(args)
    except CompileError as exc:
        _print_error(exc)
        return 1


def _run(args) -> int:
    from ..frontend import compile_cuda
    from ..host import GPU, HostError, run_program
    from ..host.interp import diagnostic
    _check_device_options("run", args, [("--max-steps", args.max_steps is not None),
                                        ("--check-hazards", args.check_hazards)])
    if args.device:
        return _run_device(args)
    args.arch = args.arch or "sm_89"
    if args.arch not in EMULATED_ARCHS:
        raise CompileError(Diagnostic(f"-arch={args.arch}: the emulator runs {', '.join(EMULATED_ARCHS)} cubins"))
    if args.max_steps is not None and args.max_steps < 1:
        raise CompileError(Diagnostic("--max-steps must be at least 1"))
    path = args.input
    source = _read(path)
    module, program = compile_cuda(source, path, arch=args.arch, options=_pp_options(args))
    failed = {}
    if args.nvcc_cubin:
        cubin = device_image("nvcc", None, path, args.arch, False, "", args.nvcc_cubin)[0].data
    elif args.compiler == "nvcc":
        cubin = nvcc_cubin(path, args.arch, _pp_options(args).nvcc_flags())
    else:
        # kernels ptxc cannot lower yet are an error only if the program launches them
        cubin, failed = ptxc_cubin(module, path, args.arch)
    trace = (lambda line: print(line, file=sys.stderr)) if args.trace_launch else None
    hazards_seen = []

    def on_hazards(kernel, hazards):
        hazards_seen.extend(hazards)
        for h in hazards:
            print(f"hazard: {kernel.name}: {h}", file=sys.stderr)

    gpu = GPU(cubin, Path(path).with_suffix(".cubin").name, trace=trace, max_steps=args.max_steps,
              check_hazards=args.check_hazards, on_hazards=on_hazards, missing=failed, arch=args.arch)
    out = sys.stdout
    gpu.device.printf_sink = out.write     # device printf, after each launch (ptxc.emu.printf)
    try:
        status = run_program(program, path, gpu, out.write, argv=args.program_args, write_err=_stderr_writer(out))
    except HostError as err:
        out.flush()
        print(diagnostic(err, path).format(source), file=sys.stderr)
        return 1
    finally:
        out.flush()
    if hazards_seen and status == 0:
        return 1
    return status


def _stderr_writer(out):
    """The program's stderr: stdout flushed first, so that the two interleave as written."""
    def write(text: str) -> None:
        out.flush()
        sys.stderr.write(text)
        sys.stderr.flush()
    return write


def _run_device(args) -> int:
    """`ptxc run --device`: main() interpreted here, its kernels on the GPU."""
    from ..device import DeviceError, DeviceTimeout, jit_ptx_version
    from .host_gpu import HostGPU
    from ..frontend import compile_cuda
    from ..host import HostError, run_program
    from ..host.interp import diagnostic
    gpu = open_gpu()
    arch = args.arch or gpu.arch
    ptx_version = args.ptx_version or jit_ptx_version(gpu.driver_version)
    path = args.input
    source = _read(path)
    module, program = compile_cuda(source, path, arch=arch, ptx_version=ptx_version,
                                   options=_pp_options(args))
    who = "nvcc" if args.compiler == "nvcc" or args.nvcc_cubin else "ptxc"
    image, failed = device_image(who, module, path, arch, args.ptx, ptx_version, args.nvcc_cubin)
    trace = (lambda line: print(line, file=sys.stderr)) if args.trace_launch else None
    out = sys.stdout
    try:
        host = HostGPU(gpu, image, failed, trace=trace, timeout=args.timeout, before_launch=out.flush,
                       hint=f" ({NO_SASS_HINT})")
    except DeviceError as err:
        raise CompileError(Diagnostic(str(err))) from None
    try:
        return run_program(program, path, host, out.write, argv=args.program_args, write_err=_stderr_writer(out))
    except HostError as err:
        out.flush()
        print(diagnostic(err, path).format(source), file=sys.stderr)
        return 1
    except DeviceTimeout as err:
        _gpu_timeout(err)
    finally:
        out.flush()
        host.close()
