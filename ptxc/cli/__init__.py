"""The `ptxc` command: nvcc's spelling where nvcc has one.

    ptxc vadd.cu -o vadd.cubin            compile CUDA C to a cubin (default -arch=sm_89)
    ptxc vadd.ptx -o vadd.cubin           PTX in: ptxc as a drop-in ptxas
    ptxc vadd.cu --emit=ptx|sass|cubin    (also -ptx, -cubin)
    ptxc dump vadd.cubin                  SASS as cuobjdump -sass prints it
    ptxc run vadd.cu                      run host main() and its kernels on the emulator
    ptxc check x.cu                       run x.cu's LAUNCH lines with ptxc's and nvcc's cubins, compare
    ptxc run --device vadd.cu             the same on the real GPU (CUDA driver API; --ptx: through the JIT)
    ptxc check --device x.cu              ... and time each launch, ptxc against nvcc

Each command is a module of this package (compile.py, dump.py, run.py, check.py), imported
only when it runs: compiling loads no emulator, no host interpreter and no GPU binding.

Errors in the input print `file:line:col: error: ...`, the line and a caret, and
exit 1 with no output file written.  Anything else escaping is a bug in ptxc and
says so.
"""
from __future__ import annotations

import os
import sys
from importlib import import_module
from pathlib import Path

from ..diagnostics import CompileError

COMMANDS = ("dump", "run", "check")      # `ptxc NAME ...`; anything else is a compile


def command(name: str):
    """The `<name>_command(argv) -> exit status` of ptxc/cli/<name>.py."""
    return getattr(import_module(f"{__name__}.{name}"), f"{name}_command")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from ..regex_cache import install
    install()       # compiled regular expressions from the user cache (ptxc/regex_cache.py)
    try:
        if argv and argv[0] in COMMANDS:
            return command(argv[0])(argv[1:])
        from ..driver import tune_gc
        tune_gc()
        return command("compile")(argv)
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

