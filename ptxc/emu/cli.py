"""`ptxc run` and `ptxc check`: the emulator's two commands (ptxc/cli.py registers them),
and the same on a real GPU with --device.

    ptxc run prog.cu [--with=nvcc] [--trace-launch] [--max-steps=N] [--check-hazards] [-- ARGS...]
    ptxc check kernels.cu [--max-steps=N] [--check-hazards] [--isolate]
    ptxc run --device prog.cu [--with=nvcc | --nvcc-cubin=F] [--ptx [--ptx-version=V]] [-arch=A]
    ptxc check --device kernels.cu [--ptx] [--nvcc-cubin=F] [--repeat=N] [-arch=A]

With --device the kernels run on the first CUDA GPU through the driver API (ptxc.device;
host code is still interpreted, with ptxc.device.host_gpu.HostGPU as its GPU), compiled
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
import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

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


# ---- cubins ------------------------------------------------------------------------------
EMULATED_ARCHS = with_backend()     # targets ptxc compiles for, whose cubins the emulator runs


def nvcc_cubin(path: str, arch: str = "sm_89", flags: list[str] = ()) -> bytes:
    from .. import oracle
    try:
        with tempfile.TemporaryDirectory(prefix="ptxc-") as tmp:
            out = Path(tmp) / "x.cubin"
            oracle.nvcc_cubin(path, out, arch, flags)
            return out.read_bytes()
    except oracle.OracleMissing as exc:
        raise CompileError(Diagnostic(f"--with=nvcc: {exc}")) from None
    except RuntimeError as exc:
        raise CompileError(Diagnostic(f"nvcc failed on '{path}':\n{exc}")) from None


def ptxc_cubin(module, path: str, arch: str = "sm_89") -> tuple[bytes | None, dict]:
    """ptxc's cubin of every kernel it can lower, and {kernel: why not} for the others."""
    from ..driver import Kernel, cubin_bytes, layout
    from ..driver import reparse
    from ..lower.pipeline import Options, lower_function
    from ..lower.select_instrs import ModuleVars
    from ..sass.encode import encode
    from ..sass.table import load
    table = load(arch)
    if path.endswith(".cu"):            # the backend reads the frontend's PTX as text (see reparse)
        module, path, _text = reparse(module, path)
    options = Options(arch=arch, filename=path, module_vars=ModuleVars.of(module.globals),
                      functions=tuple(module.functions))
    kernels, failed = [], {}
    for ptx_func in module.kernels():
        try:
            func = lower_function(ptx_func, options)
            addrs = layout(func)
            text = b"".join(encode(instr, addr, table) for addr, instr in addrs)
        except CompileError as exc:
            failed[ptx_func.name] = "; ".join(d.message for d in exc.diagnostics)
            continue
        except Exception as exc:  # noqa: BLE001 - a lowering gap, reported per kernel
            failed[ptx_func.name] = f"{type(exc).__name__}: {exc}"
            continue
        exits = [addr for addr, instr in addrs if instr.op == "EXIT"]
        kernels.append(Kernel(ptx_func.name, func, addrs, text, exits))
    return (cubin_bytes(kernels, arch) if kernels else None), failed


def nvcc_ptx(path: str, arch: str, ptx_version: str) -> str:
    """nvcc's PTX for `arch`, its `.version` lowered to `ptx_version` (for a driver's JIT)."""
    import re
    from .. import oracle
    try:
        with tempfile.TemporaryDirectory(prefix="ptxc-") as tmp:
            out = Path(tmp) / "x.ptx"
            oracle.nvcc_ptx(path, out, arch)
            text = out.read_text()
    except oracle.OracleMissing as exc:
        raise CompileError(Diagnostic(f"--with=nvcc: {exc}")) from None
    except RuntimeError as exc:
        raise CompileError(Diagnostic(f"nvcc failed on '{path}':\n{exc}")) from None
    return re.sub(r"^\.version\s+\S+", f".version {ptx_version}", text, count=1, flags=re.M)


NO_SASS_HINT = "--ptx runs ptxc's PTX through the driver's JIT, --with=nvcc runs nvcc's cubin"


def device_image(who: str, module, path: str, arch: str, ptx: bool, ptx_version: str,
                 nvcc_cubin_file: str | None = None):
    """(ptxc.device.Image, {kernel: why ptxc has no code for it}) of ptxc's (`who` =
    'ptxc') or nvcc's code for the GPU: a cubin for `arch`, or with `ptx` the PTX text
    (`.version` ptx_version); for nvcc, `nvcc_cubin_file` instead of running nvcc.  The
    image is None when ptxc lowers none of the kernels."""
    from ..cubin.reader import CubinError
    from ..device import cubin_image, ptx_image
    stem = Path(path).stem
    if who == "nvcc":
        if nvcc_cubin_file:
            try:
                data = Path(nvcc_cubin_file).read_bytes()
                return cubin_image(data, Path(nvcc_cubin_file).name), {}
            except OSError as exc:
                raise CompileError(Diagnostic(f"--nvcc-cubin: cannot read '{nvcc_cubin_file}': {exc.strerror}")) from None
            except CubinError as exc:
                raise CompileError(Diagnostic(f"--nvcc-cubin: '{nvcc_cubin_file}': {exc}")) from None
        if ptx:
            return ptx_image(nvcc_ptx(path, arch, ptx_version), f"{stem}.nvcc.ptx"), {}
        return cubin_image(nvcc_cubin(path, arch), f"{stem}.nvcc.cubin"), {}
    if ptx:
        from ..ptx.printer import print_module
        module.target, module.version = arch, ptx_version
        return ptx_image(print_module(module), f"{stem}.ptx"), {}
    from ..driver import SASS_ARCHS
    if arch not in SASS_ARCHS:
        raise CompileError(Diagnostic(f"-arch={arch}: ptxc cannot write {arch} SASS yet (only "
                                      f"{', '.join(SASS_ARCHS)}); {NO_SASS_HINT}"))
    cubin, failed = ptxc_cubin(module, path, arch)
    return (cubin_image(cubin, f"{stem}.cubin") if cubin is not None else None), failed


def open_gpu():
    """The first CUDA GPU (ptxc.device.GPU); no GPU is a CompileError that says so."""
    from ..device import GPU, DeviceError
    try:
        return GPU()
    except DeviceError as err:
        raise CompileError(Diagnostic(str(err))) from None


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


# ---- ptxc run ------------------------------------------------------------------------------
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
    from ..device.host_gpu import HostGPU
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


# ---- ptxc check --------------------------------------------------------------------------------
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


def _fmt(value) -> str:
    """An element as the report shows it: floats with their bits, integers in decimal."""
    if isinstance(value, np.floating):
        bits = value.view(np.uint32 if value.dtype == np.float32 else np.uint64)
        return f"{float(value)!r} ({int(bits):#x})"
    return str(int(value))


def _report_group(what: str, keys: list, a, b, limit: int) -> bool:
    """Print a group of launches' buffers, ptxc's run `a` against nvcc's `b` (SpecRun or
    ptxc.device.GPURun: .buffers and .ulp); True if they agree."""
    from .specrun import differences
    bad_any = False
    for key in keys:
        diffs = differences(key, a.buffers[key], b.buffers[key], a.ulp.get(key, 0))
        if diffs:
            bad_any = True
            print(f"{what}: buffer '{key}': {len(diffs)} of {len(a.buffers[key])} elements differ"
                  + (f" (beyond {a.ulp[key]} ulp)" if a.ulp.get(key) else ""))
            for index, x, y in diffs[:limit]:
                print(f"    [{index}] ptxc {_fmt(x)}  nvcc {_fmt(y)}")
    if not bad_any:
        print(f"{what}: ok ({len(keys)} buffers agree)")
    return not bad_any


def _isolated_groups(path: str, launches: list, missing: dict, isolate: bool) -> list:
    for name, why in missing.items():
        print(f"{path}: ptxc cannot compile kernel '{name}' yet: {why}")
    if missing and not isolate:
        print(f"{path}: running each launch alone (fresh buffers), since some kernels are missing")
    isolate = isolate or bool(missing)
    return [[i] for i in range(len(launches))] if isolate else [list(range(len(launches)))]


def _check(args) -> int:
    from ..frontend import compile_cuda
    from .device import DEFAULT_MAX_STEPS, LaunchError
    from .launch_spec import parse_file
    from .specrun import run_launches
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
    ours, failed = ptxc_cubin(module, path, arch)
    theirs = device_image("nvcc", None, path, arch, False, "", args.nvcc_cubin)[0].data if args.nvcc_cubin \
        else nvcc_cubin(path, arch, _pp_options(args).nvcc_flags())
    from .names import demangle_base
    missing = {demangle_base(k): why for k, why in failed.items()}
    status = 1 if missing else 0
    groups = _isolated_groups(path, launches, missing, args.isolate)
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
        if not _report_group(what, keys, a, b, args.limit):
            status = 1
    return status


def time_line(launch, ptxc_ms: float | None, nvcc_ms: float | None) -> str:
    """One launch's kernel times as `ptxc check --device` prints them."""
    def us(ms):
        return "-" if ms is None else f"{ms * 1000:.1f} us"
    ratio = f"  ptxc/nvcc x{ptxc_ms / nvcc_ms:.2f}" if ptxc_ms and nvcc_ms else ""
    return f"    time {launch.kernel} (line {launch.line}): ptxc {us(ptxc_ms)}  nvcc {us(nvcc_ms)}{ratio}"


def geometric_mean(values: list) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _check_device(args) -> int:
    """`ptxc check --device`: every LAUNCH line on the GPU with ptxc's code and nvcc's cubin."""
    from ..device import DeviceError, DeviceTimeout, jit_ptx_version
    from ..device import run_launches as run_on_gpu
    from ..frontend import compile_cuda
    from .launch_spec import parse_file
    from .names import demangle_base
    if args.repeat < 0:
        raise CompileError(Diagnostic("--repeat must be 0 or more"))
    gpu = open_gpu()
    arch = args.arch or gpu.arch
    ptx_version = args.ptx_version or jit_ptx_version(gpu.driver_version)
    path = args.input
    source = _read(path)
    launches = parse_file(source, path)
    if not launches:
        raise CompileError(Diagnostic(f"'{path}' has no // LAUNCH: lines to check"))
    module, _program = compile_cuda(source, path, arch=arch, ptx_version=ptx_version,
                                   options=_pp_options(args))
    ours, failed = device_image("ptxc", module, path, arch, args.ptx, ptx_version)
    theirs, _ = device_image("nvcc", None, path, arch, False, ptx_version, args.nvcc_cubin)
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
    for group in _isolated_groups(path, launches, missing, args.isolate):
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
        if not _report_group(what, list(a.buffers), a, b, args.limit):
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
