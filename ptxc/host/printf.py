"""C's printf conversions (%d %i %u %f %F %e %E %g %G %s %x %X %o %p %c %%, with flags,
width, precision and length modifiers), applied to values the interpreter passes."""
from __future__ import annotations

import re

SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?"
                  r"(?P<length>hh|h|ll|l|L|z|j|t)?(?P<conv>[diouxXeEfFgGcsp%aA])")
LENGTH_BITS = {"hh": 8, "h": 16, None: 32, "l": 64, "ll": 64, "z": 64, "j": 64, "t": 64, "L": 64}


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
        flags = m.group("flags")
        width = m.group("width")
        prec = m.group("prec")
        if width == "*":
            width = str(int(next_arg()))
            if width.startswith("-"):
                flags += "-"
                width = width[1:]
        if prec == "*":
            prec = str(max(int(next_arg()), 0))
        value = next_arg()
        spec = "%" + flags + (width or "") + ("." + prec if prec is not None else "")
        bits = LENGTH_BITS[m.group("length")]
        if conv in "di":
            v = int(value) & ((1 << bits) - 1)
            if v >> (bits - 1):
                v -= 1 << bits
            out.append((spec + "d") % v)
        elif conv in "ouxX":
            v = int(value) & ((1 << bits) - 1)
            out.append((spec + ("d" if conv == "u" else conv)) % v)
        elif conv in "eEfFgGaA":
            v = float(value)
            if conv in "aA":
                text = _hexfloat(v, prec)
                out.append(text if conv == "a" else text.upper())
            else:
                text = (spec + conv) % v
                if v != v:
                    text = text.replace("nan", "-nan" if str(v).startswith("-") else "nan")
                out.append(text)
        elif conv == "c":
            out.append((spec.replace(".", "") + "s") % chr(int(value) & 0xFF))
        elif conv == "s":
            text = read_string(int(value)) if value else "(null)"
            out.append((spec + "s") % text)
        elif conv == "p":
            v = int(value) & 0xFFFFFFFFFFFFFFFF
            text = f"0x{v:x}" if v else "(nil)"
            out.append(((spec.replace(".", "") if prec is None else spec) + "s") % text)
    out.append(fmt[pos:])
    return "".join(out)


def _hexfloat(v: float, prec) -> str:
    """C's %a: 0x1.8p+0 (no trailing zeros unless a precision asks for digits)."""
    if v != v or v in (float("inf"), float("-inf")):
        return str(v).replace("inf", "inf")
    text = v.hex()                       # [-]0x1.8000000000000p+0
    sign = "-" if text.startswith("-") else ""
    mant, exp = text.lstrip("-")[2:].split("p")
    head, _, frac = mant.partition(".")
    if prec is not None and prec != "":
        digits = int(prec)
        frac = (frac + "0" * digits)[:digits]
    else:
        frac = frac.rstrip("0")
    exp = int(exp)
    return f"{sign}0x{head}{'.' + frac if frac else ''}p{'+' if exp >= 0 else '-'}{abs(exp)}"
