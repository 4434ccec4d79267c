"""`ptxc check x.cu`: run a kernel file's `// LAUNCH:` lines with ptxc's cubin and nvcc's on
the emulator (or with --device on the real GPU, timing each launch) and report every
difference: buffer, index, both values (ptxc.launch: the binder, the comparison, the report).

    ptxc check kernels.cu [--max-steps=N] [--check-hazards] [--isolate]
    ptxc check --device kernels.cu [--ptx] [--nvcc-cubin=F] [--repeat=N] [-arch=A]
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..diagnostics import CompileError, Diagnostic
from ..launch.report import geometric_mean, launch_groups, report_group, time_line
from . import images
from .images import EMULATED_ARCHS
from .options import _check_device_options, _device_options, _gpu_timeout, _pp_options, _print_error, _read


def _check_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ptxc check", description="Run a kernel file's // LAUNCH: lines with "
                                "ptxc's and nvcc's cubins on the emulator (or with --device on the real GPU, "
                                "timing each launch) and report every difference.")
    p.add_argument("input", help="a .cu file with // LAUNCH: lines")
    p.add_argument("--max-steps", type=int, default=None, metavar="N",
                   help="stop a launch after N warp instructions")
    p.add_argument("--check-hazards", action="store_true", help="also check both cubins for hazards")
    p.add_argument("--isolate", action="store_true",
                   help="run each launch line alone, from fresh buffers (the default when a kernel is missing)")
    p.add_argument("--limit", type=int, default=8, help="differences listed per buffer (default 8)")
    _device_options(p)
    p.add_argument("--repeat", type=int, default=10, metavar="N",
                   help="with --device: time each launch as the mean of N launches after a warm-up "
                        "(default 10; 0: no timing)")
    return p


def check_command(argv: list[str]) -> int:
    args = _check_parser().parse_args(argv)
    try:
        return _check(args)
    except CompileError as exc:
        _print_error(exc)
        return 1


def _check(args) -> int:
    from ..frontend import compile_cuda
    from ..emu.device import DEFAULT_MAX_STEPS, LaunchError
    from ..launch.spec import parse_file
    from ..launch import run_launches
    _check_device_options("check", args, [("--max-steps", args.max_steps is not None),
                                          ("--check-hazards", args.check_hazards)])
    if args.device:
        return _check_device(args)
    arch = args.arch or "sm_89"
    if arch not in EMULATED_ARCHS:
        raise CompileError(Diagnostic(f"-arch={arch}: the emulator runs {', '.join(EMULATED_ARCHS)} cubins"))
    path = args.input
    source = _read(path)
    launches = parse_file(source, path)
    if not launches:
        raise CompileError(Diagnostic(f"'{path}' has no // LAUNCH: lines to check"))
    max_steps = args.max_steps or DEFAULT_MAX_STEPS
    module, _program = compile_cuda(source, path, arch=arch, options=_pp_options(args))
    ours, failed = images.ptxc_cubin(module, path, arch)
    theirs = images.device_image("nvcc", None, path, arch, False, "", args.nvcc_cubin)[0].data if args.nvcc_cubin \
        else images.nvcc_cubin(path, arch, _pp_options(args).nvcc_flags())
    from ..launch.names import demangle_base
    missing = {demangle_base(k): why for k, why in failed.items()}
    status = 1 if missing else 0
    groups = launch_groups(path, launches, missing, args.isolate)
    for group in groups:
        if any(launches[i].kernel in missing for i in group):
            for i in group:
                print(f"{launches[i].kernel} (line {launches[i].line}): not checked: ptxc has no code for it")
            continue
        runs = {}
        for who, cubin in (("ptxc", ours), ("nvcc", theirs)):
            try:
                runs[who] = run_launches(cubin, launches, source, path, cubin_name=f"{Path(path).stem}.{who}.cubin",
                                         max_steps=max_steps, check_hazards=args.check_hazards,
                                         only=set(group))
            except LaunchError as err:
                print(f"{path}: {who}'s cubin failed:\n{err}")
                runs[who] = None
                status = 1
        if runs.get("ptxc") is None or runs.get("nvcc") is None:
            continue
        a, b = runs["ptxc"], runs["nvcc"]
        for who, run in (("ptxc", a), ("nvcc", b)):
            for h in run.hazards:
                print(f"{path}: hazard in {who}'s cubin: {h}")
                status = 1
        keys = sorted({k for i in group for k in a.launch_buffers[i]}, key=list(a.buffers).index)
        what = ", ".join(f"{launches[i].kernel} (line {launches[i].line})" for i in group)
        if not report_group(what, keys, a, b, args.limit):
            status = 1
    return status

def _check_device(args) -> int:
    """`ptxc check --device`: every LAUNCH line on the GPU with ptxc's code and nvcc's cubin."""
    from ..device import DeviceError, DeviceTimeout, jit_ptx_version
    from ..device import run_launches as run_on_gpu
    from ..frontend import compile_cuda
    from ..launch.spec import parse_file
    from ..launch.names import demangle_base
    if args.repeat < 0:
        raise CompileError(Diagnostic("--repeat must be 0 or more"))
    gpu = images.open_gpu()
    arch = args.arch or gpu.arch
    ptx_version = args.ptx_version or jit_ptx_version(gpu.driver_version)
    path = args.input
    source = _read(path)
    launches = parse_file(source, path)
    if not launches:
        raise CompileError(Diagnostic(f"'{path}' has no // LAUNCH: lines to check"))
    module, _program = compile_cuda(source, path, arch=arch, ptx_version=ptx_version,
                                   options=_pp_options(args))
    ours, failed = images.device_image("ptxc", module, path, arch, args.ptx, ptx_version)
    theirs, _ = images.device_image("nvcc", None, path, arch, False, ptx_version, args.nvcc_cubin)
    for image in (ours, theirs):
        if image is not None and image.kind == "cubin":
            try:
                gpu.check_arch(image.arch, image.name)
            except DeviceError as err:
                raise CompileError(Diagnostic(str(err))) from None
    what_ours = f"PTX (.version {ptx_version}, driver JIT)" if args.ptx else f"{arch} cubin"
    print(f"{path}: on {gpu.describe()}: ptxc's {what_ours} against nvcc's {theirs.arch or arch} cubin")
    missing = {demangle_base(k): why for k, why in failed.items()}
    status = 1 if missing else 0
    ratios = []
    for group in launch_groups(path, launches, missing, args.isolate):
        if any(launches[i].kernel in missing for i in group):
            for i in group:
                print(f"{launches[i].kernel} (line {launches[i].line}): not checked: ptxc has no code for it")
            continue
        chosen = [launches[i] for i in group]
        runs = {}
        for who, image in (("ptxc", ours), ("nvcc", theirs)):
            try:
                runs[who] = run_on_gpu(gpu, image, chosen, source, path, repeat=args.repeat, timeout=args.timeout)
            except DeviceTimeout as err:
                _gpu_timeout(f"{path}: {who}'s {image.kind}: {err}")
            except DeviceError as err:
                print(f"{path}: {who}'s {image.kind} failed on the GPU:\n{err}")
                runs[who], status = None, 1
                try:
                    gpu.recover()
                except DeviceError as again:
                    print(f"{path}: the GPU's context cannot be recovered ({again}); stopping")
                    return 1
        if runs.get("ptxc") is None or runs.get("nvcc") is None:
            continue
        a, b = runs["ptxc"], runs["nvcc"]
        what = ", ".join(f"{launch.kernel} (line {launch.line})" for launch in chosen)
        if not report_group(what, list(a.buffers), a, b, args.limit):
            status = 1
        if args.repeat:
            for launch, x, y in zip(chosen, a.times_ms, b.times_ms):
                print(time_line(launch, x, y))
                ratios.append(x / y if x and y else None)
    mean = geometric_mean(ratios)
    if mean is not None:
        print(f"{path}: kernel time ptxc/nvcc: geometric mean x{mean:.2f} over {sum(r is not None for r in ratios)} "
              f"launch(es) (CUDA events, mean of {args.repeat} launches after a warm-up)")
    return status
