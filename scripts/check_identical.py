#!/usr/bin/env python3
"""Check that a change to ptxc changes no output: compile every testsuite/**/*.cu and
*.ptx to PTX and to a cubin for sm_89 and sm_90 and compare the bytes with a reference.

    git stash; python scripts/check_identical.py --write /tmp/ref; git stash pop
    python scripts/check_identical.py /tmp/ref            # exit 1 and a list if any differ

Each (file, arch, emit) gives one record: the output bytes, or, when ptxc refuses the
input, its exit status and the diagnostic it printed (so error text is checked too; the checkout's path is masked, so references made in
another checkout compare).
The compiles run in this one process through `ptxc.cli.main`, as a harness would use
them; `--fresh` runs each as its own `python -m ptxc` process instead (slower; checks
start-up paths such as the table cache being built or loaded).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ARCHS = ("sm_89", "sm_90")
EMITS = ("ptx", "cubin")


def inputs(only: str | None = None) -> list[Path]:
    suite = ROOT / "testsuite"
    return sorted(p for p in suite.rglob(only or "*") if p.suffix in (".cu", ".ptx"))


def compile_one(path: Path, arch: str, emit: str, out: Path, fresh: bool) -> bytes:
    """The output's bytes, or b'rc=N\\n' + stderr when ptxc refuses (temporary paths masked)."""
    argv = [str(path), f"-arch={arch}", f"--emit={emit}", "-o", str(out)]
    if out.exists():
        out.unlink()
    if fresh:
        done = subprocess.run([sys.executable, "-m", "ptxc", *argv], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        rc, err = done.returncode, done.stderr
    else:
        from ptxc.cli import main
        err_buf = io.StringIO()
        with contextlib.redirect_stderr(err_buf), contextlib.redirect_stdout(io.StringIO()):
            rc = main(argv)
        err = err_buf.getvalue()
    if rc == 0 and out.exists():
        return out.read_bytes()
    return f"rc={rc}\n{err.replace(str(out), 'OUT').replace(str(ROOT), 'ROOT')}".encode()


def records(fresh: bool, only: str | None = None):
    with tempfile.TemporaryDirectory(prefix="ptxc-identical-") as tmp:
        for path in inputs(only):
            rel = path.relative_to(ROOT / "testsuite")
            for arch in ARCHS:
                for emit in EMITS:
                    key = f"{rel}.{arch}.{emit}"
                    yield key, compile_one(path, arch, emit, Path(tmp) / f"out.{emit}", fresh)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", nargs="?", help="compare with this reference folder")
    parser.add_argument("--write", metavar="DIR", help="write a reference folder instead")
    parser.add_argument("--fresh", action="store_true", help="one `python -m ptxc` process per compile")
    parser.add_argument("--only", metavar="GLOB", help="only testsuite files matching GLOB (rglob), e.g. 'errors/*'")
    args = parser.parse_args()
    if not (args.reference or args.write):
        parser.error("give a reference folder, or --write DIR")
    differ, missing, count, refused = [], [], 0, 0
    for key, data in records(args.fresh, args.only):
        count += 1
        refused += data.startswith(b"rc=")
        if args.write:
            target = Path(args.write) / key
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            continue
        ref = Path(args.reference) / key
        if not ref.exists():
            missing.append(key)
        elif ref.read_bytes() != data:
            differ.append(key)
    print(f"{count} outputs ({refused} refusals recorded as rc+diagnostic)"
          + (f" written to {args.write}" if args.write else
             f": {count - len(differ) - len(missing)} identical, {len(differ)} differ, {len(missing)} not in reference"))
    for key in differ:
        print("differs:", key)
    for key in missing:
        print("missing:", key)
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
