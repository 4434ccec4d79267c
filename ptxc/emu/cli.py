"""`ptxc run` and `ptxc check`: the emulator's two commands (ptxc/cli.py registers them).

    ptxc run prog.cu [--with=nvcc] [--trace-launch] [--max-steps=N] [--check-hazards]
    ptxc check kernels.cu [--max-steps=N] [--check-hazards] [--isolate]

Both return an exit status and print errors as `file:line:col: error: ...` (or the
emulator's sanitizer report), never a traceback; numba is imported only when a kernel
is about to run.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..diagnostics import CompileError, Diagnostic


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
def nvcc_cubin(path: str, arch: str = "sm_89") -> bytes:
    from .. import oracle
    try:
        with tempfile.TemporaryDirectory(prefix="ptxc-") as tmp:
            out = Path(tmp) / "x.cubin"
            oracle.nvcc_cubin(path, out, arch)
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
    if path.endswith(".cu"):            # the backend reads the frontend's PTX as text (see reparse)
        module, path, _text = reparse(module, path)
    options = Options(arch=arch, filename=path, module_vars=ModuleVars.of(module.globals),
                      functions=tuple(module.functions))
    kernels, failed = [], {}
    for ptx_func in module.kernels():
        try:
            func = lower_function(ptx_func, options)
            addrs = layout(func)
            text = b"".join(encode(instr, addr) for addr, instr in addrs)
        except CompileError as exc:
            failed[ptx_func.name] = "; ".join(d.message for d in exc.diagnostics)
            continue
        except Exception as exc:  # noqa: BLE001 - a lowering gap, reported per kernel
            failed[ptx_func.name] = f"{type(exc).__name__}: {exc}"
            continue
        exits = [addr for addr, instr in addrs if instr.op == "EXIT"]
        kernels.append(Kernel(ptx_func.name, func, addrs, text, exits))
    return (cubin_bytes(kernels, arch) if kernels else None), failed


# ---- ptxc run ------------------------------------------------------------------------------
def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ptxc run", description="Run a CUDA program (host main() and its kernels) "
                                "on the emulated sm_89 GPU.")
    p.add_argument("input", help="a .cu file with main()")
    p.add_argument("--with", dest="compiler", choices=("ptxc", "nvcc"), default="ptxc",
                   help="whose cubin runs the kernels (default: ptxc's own)")
    p.add_argument("--trace-launch", action="store_true",
                   help="print each launch's parameter buffer, constant bank 0 and launch descriptor")
    p.add_argument("--max-steps", type=int, default=None, metavar="N",
                   help="stop a launch after N warp instructions (a kernel that never ends)")
    p.add_argument("--check-hazards", action="store_true",
                   help="report reads of results whose scoreboard or stall count was not waited for")
    p.add_argument("-arch", default="sm_89", help="sm_89 (the only target the emulator runs)")
    return p


def run_command(argv: list[str]) -> int:
    args = _run_parser().parse_args(argv)
    try:
        return _run(args)
    except CompileError as exc:
        _print_error(exc)
        return 1


def _run(args) -> int:
    from ..frontend import compile_cuda
    from ..host import GPU, HostError, run_program
    from ..host.interp import diagnostic
    if args.arch != "sm_89":
        raise CompileError(Diagnostic(f"-arch={args.arch}: the emulator runs sm_89 cubins only"))
    if args.max_steps is not None and args.max_steps < 1:
        raise CompileError(Diagnostic("--max-steps must be at least 1"))
    path = args.input
    source = _read(path)
    module, program = compile_cuda(source, path, arch=args.arch)
    failed = {}
    if args.compiler == "nvcc":
        cubin = nvcc_cubin(path, args.arch)
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
              check_hazards=args.check_hazards, on_hazards=on_hazards, missing=failed)
    out = sys.stdout
    try:
        status = run_program(program, path, gpu, out.write)
    except HostError as err:
        out.flush()
        print(diagnostic(err, path).format(source), file=sys.stderr)
        return 1
    finally:
        out.flush()
    if hazards_seen and status == 0:
        return 1
    return status


# ---- ptxc check --------------------------------------------------------------------------------
def _check_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ptxc check", description="Run a kernel file's // LAUNCH: lines with "
                                "ptxc's and nvcc's cubins on the emulator and report every difference.")
    p.add_argument("input", help="a .cu file with // LAUNCH: lines")
    p.add_argument("--max-steps", type=int, default=None, metavar="N",
                   help="stop a launch after N warp instructions")
    p.add_argument("--check-hazards", action="store_true", help="also check both cubins for hazards")
    p.add_argument("--isolate", action="store_true",
                   help="run each launch line alone, from fresh buffers (the default when a kernel is missing)")
    p.add_argument("--limit", type=int, default=8, help="differences listed per buffer (default 8)")
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


def _check(args) -> int:
    from ..frontend import compile_cuda
    from .device import DEFAULT_MAX_STEPS, LaunchError
    from .launch_spec import parse_file
    from .specrun import differences, run_launches
    path = args.input
    source = _read(path)
    launches = parse_file(source, path)
    if not launches:
        raise CompileError(Diagnostic(f"'{path}' has no // LAUNCH: lines to check"))
    max_steps = args.max_steps or DEFAULT_MAX_STEPS
    module, _program = compile_cuda(source, path)
    ours, failed = ptxc_cubin(module, path)
    theirs = nvcc_cubin(path)
    from .names import demangle_base
    missing = {demangle_base(k): why for k, why in failed.items()}
    status = 0
    for name, why in missing.items():
        print(f"{path}: ptxc cannot compile kernel '{name}' yet: {why}")
        status = 1
    isolate = args.isolate or bool(missing)
    groups = [[i] for i in range(len(launches))] if isolate else [list(range(len(launches)))]
    if isolate and not args.isolate:
        print(f"{path}: running each launch alone (fresh buffers), since some kernels are missing")
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
        bad_any = False
        for key in keys:
            diffs = differences(key, a.buffers[key], b.buffers[key], a.ulp.get(key, 0))
            if diffs:
                bad_any = True
                print(f"{what}: buffer '{key}': {len(diffs)} of {len(a.buffers[key])} elements differ"
                      + (f" (beyond {a.ulp[key]} ulp)" if a.ulp.get(key) else ""))
                for index, x, y in diffs[:args.limit]:
                    print(f"    [{index}] ptxc {_fmt(x)}  nvcc {_fmt(y)}")
        if bad_any:
            status = 1
        else:
            print(f"{what}: ok ({len(keys)} buffers agree)")
    return status
