"""`ptxc dump x.cubin`: a cubin's SASS as cuobjdump -sass prints it."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..diagnostics import CompileError, Diagnostic


def dump_command(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="ptxc dump", description="Print a cubin's SASS as cuobjdump -sass does.")
    p.add_argument("cubin")
    args = p.parse_args(argv)
    from ..cubin.reader import CubinError, read_cubin
    from ..sass.printer import format_cubin
    from ..sass.table import TableError
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
