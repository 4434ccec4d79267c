#!/usr/bin/env python3
"""Re-bless the expected output of the lit-style pass tests, and say what changed.

    python scripts/bless_lit.py                      # every testsuite/lower/*.ptx
    python scripts/bless_lit.py testsuite/lower/if_convert.ptx
    python scripts/bless_lit.py --check              # only report; change nothing

A test file (tests/test_lower_passes.py runs them) holds its RUN lines and its
CHECK lines.  Hand-written patterns (CHECK, CHECK-NOT, a CHECK-LABEL followed by
patterns) state what a pass must and must not do; this script never rewrites them,
it only says which fail.  A *precise block* is a CHECK-LABEL followed only by
CHECK-NEXT lines: the exact output after that label, as Cranelift's precise-output
tests keep it.  Blessing replaces each precise block by what ptxc prints now (up to
the next pass dump) and prints a unified diff of every file it changed.
"""
from __future__ import annotations

import argparse
import difflib
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from filecheck import CheckFailure, directives, filecheck  # noqa: E402

DIRECTIVE = re.compile(r"^(?P<lead>\s*//\s*)(?P<kind>CHECK-LABEL|CHECK-NEXT|CHECK-NOT|CHECK|RUN):\s?(?P<text>.*)$")
DUMP_HEADER = re.compile(r"^# \*\*\* SASS IR after ")


def run_output(path: Path, command: str) -> str:
    argv = [a.replace("%s", str(path)) for a in shlex.split(command)]
    result = subprocess.run([sys.executable, "-m", "ptxc", *argv[1:]], capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"{path}: `{command}` failed:\n{result.stderr}")
    return result.stderr + result.stdout


def section_after(output: list[str], label: str) -> list[str] | None:
    """The output lines after the first line containing `label`, up to the next dump
    header or the final listing."""
    for k, line in enumerate(output):
        if label in line:
            out = []
            for following in output[k + 1:]:
                if DUMP_HEADER.match(following) or not following.strip() or following.lstrip().startswith("code for"):
                    break
                out.append(following.strip())
            return out
    return None


def bless(path: Path, check_only: bool) -> bool:
    """Returns True if the file is (now) consistent with ptxc's output."""
    text = path.read_text()
    runs, checks = directives(text)
    output = "".join(run_output(path, r) for r in runs).splitlines()
    lines = text.splitlines()
    new_lines, k, changed = [], 0, False
    while k < len(lines):
        m = DIRECTIVE.match(lines[k])
        if not (m and m.group("kind") == "CHECK-LABEL"):
            new_lines.append(lines[k])
            k += 1
            continue
        block_end = k + 1
        while block_end < len(lines):
            n = DIRECTIVE.match(lines[block_end])
            if not (n and n.group("kind") == "CHECK-NEXT"):
                break
            block_end += 1
        following = DIRECTIVE.match(lines[block_end]) if block_end < len(lines) else None
        precise = block_end > k + 1 and not (following and following.group("kind") in ("CHECK", "CHECK-NOT"))
        new_lines.append(lines[k])
        if precise:
            actual = section_after(output, m.group("text").strip())
            if actual is not None:
                lead = m.group("lead")
                fresh = [f"{lead}CHECK-NEXT: {line}" for line in actual]
                if fresh != lines[k + 1:block_end]:
                    changed = True
                new_lines += fresh
                k = block_end
                continue
        k += 1
    if changed:
        new_text = "\n".join(new_lines) + "\n"
        diff = difflib.unified_diff(text.splitlines(), new_text.splitlines(), str(path), f"{path} (blessed)",
                                    lineterm="")
        print("\n".join(diff))
        if not check_only:
            path.write_text(new_text)
            text = new_text
    _, checks = directives(text)
    try:
        filecheck("\n".join(output), checks)
    except CheckFailure as exc:
        print(f"{path}: a hand-written check fails (not rewritten): {exc}")
        return False
    return not (changed and check_only)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true", help="report differences, change nothing")
    args = parser.parse_args()
    files = args.files or sorted((ROOT / "testsuite" / "lower").glob("*.ptx"))
    ok = True
    for path in files:
        ok &= bless(path, args.check)
    print(f"{len(files)} file(s) {'checked' if args.check else 'blessed'}"
          + ("" if ok else "; some need attention (above)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
