"""A small FileCheck: the subset of LLVM's that ptxc's pass tests use.

A test file holds its own `RUN:` line (the command, `%s` for the file) and its
`CHECK:` lines (also CHECK-NEXT, CHECK-NOT, CHECK-LABEL), in comments:

    // RUN: ptxc %s --emit=sass --print-after=fuse_imad_wide
    // CHECK-LABEL: after fuse_imad_wide
    // CHECK: IMAD.WIDE {{.*}}, c[0x0][0x160]
    // CHECK-NOT: IADD3

Patterns match a substring of a line; `{{regex}}` embeds a regular expression.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

DIRECTIVE = re.compile(r"//\s*(RUN|CHECK|CHECK-NEXT|CHECK-NOT|CHECK-LABEL):\s?(.*)$")


@dataclass
class Check:
    kind: str
    pattern: str
    line: int

    def regex(self) -> re.Pattern:
        parts = re.split(r"\{\{(.*?)\}\}", self.pattern.strip())
        return re.compile("".join(p if k % 2 else re.escape(p) for k, p in enumerate(parts)))


def directives(text: str) -> tuple[list[str], list[Check]]:
    runs, checks = [], []
    for number, line in enumerate(text.splitlines(), 1):
        m = DIRECTIVE.search(line)
        if m and m.group(1) == "RUN":
            runs.append(m.group(2).strip())
        elif m:
            checks.append(Check(m.group(1), m.group(2), number))
    return runs, checks


class CheckFailure(AssertionError):
    pass


def filecheck(output: str, checks: list[Check]) -> None:
    """Raise CheckFailure naming the first check that does not hold."""
    lines = output.splitlines()
    position = 0          # next line to search from
    last_match = -1
    pending_not: list[Check] = []
    for check in checks:
        rx = check.regex()
        if check.kind == "CHECK-NOT":
            pending_not.append(check)
            continue
        if check.kind == "CHECK-NEXT":
            found = last_match + 1 if last_match + 1 < len(lines) and rx.search(lines[last_match + 1]) else None
            if found is None:
                raise CheckFailure(f"line {check.line}: CHECK-NEXT: {check.pattern!r} not on the line after "
                                   f"{lines[last_match]!r}" if last_match >= 0 else "at start")
        else:
            found = next((k for k in range(position, len(lines)) if rx.search(lines[k])), None)
            if found is None:
                raise CheckFailure(f"line {check.line}: {check.kind}: {check.pattern!r} not found after "
                                   f"output line {position + 1}")
        for not_check in pending_not:
            hit = next((k for k in range(position, found) if not_check.regex().search(lines[k])), None)
            if hit is not None:
                raise CheckFailure(f"line {not_check.line}: CHECK-NOT: {not_check.pattern!r} found: {lines[hit]!r}")
        pending_not = []
        last_match, position = found, found + 1
    for not_check in pending_not:
        hit = next((k for k in range(position, len(lines)) if not_check.regex().search(lines[k])), None)
        if hit is not None:
            raise CheckFailure(f"line {not_check.line}: CHECK-NOT: {not_check.pattern!r} found: {lines[hit]!r}")
