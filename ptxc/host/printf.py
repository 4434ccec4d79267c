"""C's printf for host code: the format's conversions (%d %i %u %f %F %e %E %g %G %s %x
%X %o %p %c %a %%, with flags, width, precision and length modifiers) applied to the
values the interpreter passes.  Each conversion is ptxc.emu.printf.format_conversion,
which device printf uses too (C's printf semantics are defined once)."""
from __future__ import annotations

import re

from ..emu.printf import format_conversion

SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?"
                  r"(?P<length>hh|h|ll|l|L|z|j|t)?(?P<conv>[diouxXeEfFgGcsp%aA])")


class FormatError(Exception):
    pass


def format_c(fmt: str, args: list, read_string) -> str:
    """The text printf(fmt, args...) prints; read_string(address) -> str reads %s args."""
    out = []
    pos = 0
    arg_iter = iter(args)

    def next_arg():
        try:
            return next(arg_iter)
        except StopIteration:
            raise FormatError("printf: too few arguments for the format") from None

    for m in SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        conv = m.group("conv")
        if conv == "%":
            out.append("%")
            continue
        width, prec = m.group("width"), m.group("prec")
        if width == "*":
            width = int(next_arg())
        if prec == "*":
            prec = int(next_arg())
        out.append(format_conversion(m.group("flags"), width, prec, m.group("length"), conv, next_arg(),
                                     read_string))
    out.append(fmt[pos:])
    return "".join(out)
