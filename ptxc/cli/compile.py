"""`ptxc x.cu` / `ptxc x.ptx`: compile to PTX, SASS text or a cubin (ptxc/cli/__init__.py
dispatches here when the first argument is not a command's name)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..diagnostics import CompileError, Diagnostic
from ..sass.target import TARGETS

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
    from ..frontend.preprocess import Options
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
    from ..sass.printer import format_ir
    print(f"# *** SASS IR after {pass_name} ({func.name}) ***", file=sys.stderr)
    for block in func.blocks:
        print(f"{block.label}:", file=sys.stderr)
        for instr in block.instrs:
            print(f"    {format_ir(instr)}", file=sys.stderr)


def compile_command(argv: list[str]) -> int:
    # Each stage is imported where it is used: `-ptx` loads no lowering, a .ptx input no
    # frontend (docs/PERFORMANCE.md, start-up).
    from ..driver import ARCHS, SASS_ARCHS, cubin_bytes, load_module, lower_module, reparse, sass_listing

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
        from ..lower.pipeline import check_pass_names
        check_pass_names(print_after - {"*"}, "--print-after")
        check_pass_names(disabled, "--disable-pass")

    preprocess_options = None
    if source_path.suffix == ".cu":
        from ..frontend.preprocess import Options as PreprocessOptions
        preprocess_options = PreprocessOptions.from_args(args)
    module = load_module(str(source_path), source, args.arch, args.ptx_version, preprocess_options)
    if source_path.suffix == ".cu":
        module.target, module.version = args.arch, args.ptx_version
    output = Path(args.output) if args.output else None
    outputs: dict[Path | None, bytes | str] = {}
    ptx_text = None
    if (emit == "ptx" or args.keep) and source_path.suffix == ".cu":
        from ..ptx.printer import print_module
        ptx_text = print_module(module)
    if emit == "ptx":
        if source_path.suffix == ".ptx":
            raise CompileError(Diagnostic("--emit=ptx needs a .cu input"))
        outputs[output or source_path.with_suffix(".ptx")] = ptx_text
    else:
        lowered, lowered_path, lowered_text = module, str(source_path), source
        if source_path.suffix == ".cu":
            lowered, lowered_path, lowered_text = reparse(module, str(source_path))
        from ..lower.pipeline import Options
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
