"""The `ptxc` command: nvcc's spelling where nvcc has one.

    ptxc vadd.cu -o vadd.cubin            compile CUDA C to a cubin (default -arch=sm_89)
    ptxc vadd.ptx -o vadd.cubin           PTX in: ptxc as a drop-in ptxas
    ptxc vadd.cu --emit=ptx|sass|cubin    (also -ptx, -cubin)
    ptxc dump vadd.cubin                  SASS as cuobjdump -sass prints it
    ptxc run vadd.cu                      run host main() and its kernels on the emulator
    ptxc check x.cu                       run x.cu's LAUNCH lines with ptxc's and nvcc's cubins, compare
    ptxc run --device vadd.cu             the same on the real GPU (CUDA driver API; --ptx: through the JIT)
    ptxc check --device x.cu              ... and time each launch, ptxc against nvcc

Errors in the input print `file:line:col: error: ...`, the line and a caret, and
exit 1 with no output file written.  Anything else escaping is a bug in ptxc and
says so.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .diagnostics import CompileError, Diagnostic
from .sass.target import TARGETS

EMITS = ("ptx", "sass", "cubin")


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ptxc", description="CUDA C -> PTX -> SASS -> cubin, in Python.",
                                epilog="Subcommands: `ptxc dump x.cubin` (SASS like cuobjdump -sass), "
                                       "`ptxc run prog.cu` (the emulator), `ptxc check x.cu` (ptxc vs nvcc); "
                                       "both take --device (the real GPU).")
    p.add_argument("input", help="a .cu (CUDA C) or .ptx file")
    p.add_argument("-o", dest="output", help="output file (default: the input's name with the emitted suffix)")
    p.add_argument("--emit", choices=EMITS, help="what to write: ptx, sass (text) or cubin (default)")
    p.add_argument("-ptx", action="store_const", const="ptx", dest="emit_flag", help="same as --emit=ptx")
    p.add_argument("-cubin", action="store_const", const="cubin", dest="emit_flag", help="same as --emit=cubin")
    p.add_argument("-arch", "--gpu-architecture", dest="arch", default="sm_89",
                   help=f"{', '.join(TARGETS)} (default sm_89)")
    p.add_argument("--ptx-version", default="9.5", help="the .version written in PTX output (default 9.5)")
    p.add_argument("--keep", action="store_true", help="also write every intermediate (.ptx, .sass) beside the output")
    p.add_argument("--print-after", action="append", default=[], metavar="PASS",
                   help="print the SASS IR after PASS (repeatable; comma-separated)")
    p.add_argument("--print-after-all", action="store_true", help="print the SASS IR after every pass")
    p.add_argument("--disable-pass", action="append", default=[], metavar="PASS",
                   help="skip an optional pass (repeatable; comma-separated)")
    from .frontend.preprocess import Options
    Options.add_arguments(p)
    return p


def _split(values: list[str]) -> set:
    return {v for value in values for v in value.split(",") if v}


def _write_atomically(path: Path, data: bytes | str) -> None:
    """Write through a temporary file in the same folder: no partial output on failure."""
    import tempfile         # (only here: it costs a fresh process several ms)
    mode = "wb" if isinstance(data, bytes) else "w"
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    except OSError as exc:
        raise CompileError(Diagnostic(f"cannot write '{path}': {exc.strerror}")) from None
    try:
        with os.fdopen(fd, mode) as out:
            out.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a compiler's output follows the umask
        os.replace(tmp, path)
    except OSError as exc:
        os.unlink(tmp)
        raise CompileError(Diagnostic(f"cannot write '{path}': {exc.strerror}")) from None


def _print_ir(pass_name: str, func) -> None:
    from .sass.printer import format_ir
    print(f"# *** SASS IR after {pass_name} ({func.name}) ***", file=sys.stderr)
    for block in func.blocks:
        print(f"{block.label}:", file=sys.stderr)
        for instr in block.instrs:
            print(f"    {format_ir(instr)}", file=sys.stderr)


def compile_command(argv: list[str]) -> int:
    # Each stage is imported where it is used: `-ptx` loads no lowering, a .ptx input no
    # frontend (docs/PERFORMANCE.md, start-up).
    from .driver import ARCHS, SASS_ARCHS, cubin_bytes, load_module, lower_module, reparse, sass_listing

    args = _parser().parse_args(argv)
    emit = args.emit or args.emit_flag or "cubin"
    if args.arch not in ARCHS:
        raise CompileError(Diagnostic(f"unknown -arch '{args.arch}' (supported: {', '.join(ARCHS)})"))
    if emit != "ptx" and args.arch not in SASS_ARCHS:
        raise CompileError(Diagnostic(f"-arch={args.arch}: SASS and cubins are not supported yet for this "
                                      f"target (only {', '.join(SASS_ARCHS)}); -ptx works"))
    source_path = Path(args.input)
    if source_path.suffix not in (".cu", ".ptx"):
        raise CompileError(Diagnostic(f"'{args.input}': expected a .cu or .ptx file"))
    try:
        source = source_path.read_text()
    except FileNotFoundError:
        raise CompileError(Diagnostic(f"'{args.input}': no such file")) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CompileError(Diagnostic(f"'{args.input}': cannot read: {exc}")) from None

    print_after = _split(args.print_after) | ({"*"} if args.print_after_all else set())
    disabled = _split(args.disable_pass)
    if emit != "ptx" or print_after or disabled:
        from .lower.pipeline import check_pass_names
        check_pass_names(print_after - {"*"}, "--print-after")
        check_pass_names(disabled, "--disable-pass")

    preprocess_options = None
    if source_path.suffix == ".cu":
        from .frontend.preprocess import Options as PreprocessOptions
        preprocess_options = PreprocessOptions.from_args(args)
    module = load_module(str(source_path), source, args.arch, args.ptx_version, preprocess_options)
    if source_path.suffix == ".cu":
        module.target, module.version = args.arch, args.ptx_version
    output = Path(args.output) if args.output else None
    outputs: dict[Path | None, bytes | str] = {}
    ptx_text = None
    if (emit == "ptx" or args.keep) and source_path.suffix == ".cu":
        from .ptx.printer import print_module
        ptx_text = print_module(module)
    if emit == "ptx":
        if source_path.suffix == ".ptx":
            raise CompileError(Diagnostic("--emit=ptx needs a .cu input"))
        outputs[output or source_path.with_suffix(".ptx")] = ptx_text
    else:
        lowered, lowered_path, lowered_text = module, str(source_path), source
        if source_path.suffix == ".cu":
            lowered, lowered_path, lowered_text = reparse(module, str(source_path))
        from .lower.pipeline import Options
        options = Options(arch=args.arch, print_after=print_after, disabled=disabled,
                          filename=lowered_path, printer=_print_ir if print_after else None)
        try:
            kernels = lower_module(lowered, options)
        except CompileError as exc:
            if exc.source is None:      # show the PTX line the lowering points at
                exc.source = lowered_text
            raise
        if emit == "sass":
            outputs[output] = sass_listing(kernels, args.arch)
        else:
            output = output or source_path.with_suffix(".cubin")
            outputs[output] = cubin_bytes(kernels, args.arch)
            if args.keep:
                outputs[output.with_suffix(".sass")] = sass_listing(kernels, args.arch)
        if args.keep and ptx_text is not None:
            outputs[(output or source_path).with_suffix(".ptx")] = ptx_text
    for path, data in outputs.items():
        if path is None:
            sys.stdout.write(data)
        else:
            _write_atomically(path, data)
    return 0


def dump_command(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="ptxc dump", description="Print a cubin's SASS as cuobjdump -sass does.")
    p.add_argument("cubin")
    args = p.parse_args(argv)
    from .cubin.reader import CubinError, read_cubin
    from .sass.printer import format_cubin
    from .sass.table import TableError
    try:
        data = Path(args.cubin).read_bytes()
    except OSError as exc:
        raise CompileError(Diagnostic(f"'{args.cubin}': cannot read: {exc.strerror}")) from None
    try:  # a word no form knows prints as `UNKNOWN 0x<hex> ;`: only the file itself can fail
        text = format_cubin(read_cubin(data, args.cubin))
    except (CubinError, TableError) as exc:
        print(f"{args.cubin}: error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


def run_command(argv: list[str]) -> int:
    from .emu.cli import run_command as run  # numba is imported only here
    return run(argv)


def check_command(argv: list[str]) -> int:
    from .emu.cli import check_command as check
    return check(argv)


COMMANDS = {"dump": dump_command, "run": run_command, "check": check_command}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from .regex_cache import install
    install()       # compiled regular expressions from the user cache (ptxc/regex_cache.py)
    try:
        if argv and argv[0] in COMMANDS:
            return COMMANDS[argv[0]](argv[1:])
        from .driver import tune_gc
        tune_gc()
        return compile_command(argv)
    except CompileError as exc:
        print(exc.format(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug in ptxc: say so plainly, without a traceback
        import traceback
        where = traceback.extract_tb(exc.__traceback__)[-1]
        print(f"ptxc: internal error: {type(exc).__name__}: {exc} "
              f"(at {Path(where.filename).name}:{where.lineno}); this is a bug in ptxc, please report it"
              f"{'' if os.environ.get('PTXC_TRACEBACK') else ' (PTXC_TRACEBACK=1 shows the traceback)'}",
              file=sys.stderr)
        if os.environ.get("PTXC_TRACEBACK"):
            traceback.print_exc()
        return 2


if __name__ == "__main__":
    sys.exit(main())
