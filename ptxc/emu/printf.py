"""Device printf's text: a format string and the argument buffer vprintf receives, as the
GPU's printf turns them into output at the next synchronization.

Expects: the format's bytes (up to its NUL) and the argument buffer the caller built
(NVVM's layout, checked in tests/test_headers_emu.py: each argument after C's default
promotions, char/short -> int and float -> double, stored at the next multiple of its
size, 4 or 8 bytes; pointers and `%s` strings as 64-bit addresses).  `read_string(addr)`
gives the bytes of a NUL-terminated string in device memory.
Guarantees: C's printf conversions (flags `-+ #0`, width and precision, `*` from the
buffer, the length modifiers hh h l ll j z t L) as glibc prints them; an unknown
conversion is printed as written.  Pure Python: no numba.
"""
from __future__ import annotations

import re
import struct

# flags, width, precision, length modifier, conversion
SPEC = re.compile(rb"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|j|z|t|L)?([diouxXeEfFgGaAcspn%])")
WIDE = {b"l", b"ll", b"j", b"z", b"t"}


class ArgumentBuffer:
    """Arguments read in order, each at its size's alignment."""

    def __init__(self, data: bytes):
        self.data = data
        self.offset = 0

    def take(self, size: int, signed: bool = False, floating: bool = False):
        self.offset = (self.offset + size - 1) // size * size
        raw = self.data[self.offset:self.offset + size].ljust(size, b"\0")
        self.offset += size
        if floating:
            return struct.unpack("<d", raw)[0]
        return int.from_bytes(raw, "little", signed=signed)


def format_vprintf(fmt: bytes, args: bytes, read_string) -> str:
    """The text printf(fmt, ...) prints for the argument buffer `args`."""
    fmt = fmt.split(b"\0", 1)[0]
    buffer = ArgumentBuffer(args)
    out, pos = [], 0
    for m in SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()].decode("utf-8", "replace"))
        pos = m.end()
        out.append(_conversion(m, buffer, read_string))
    out.append(fmt[pos:].decode("utf-8", "replace"))
    return "".join(out)


def _conversion(m, buffer: ArgumentBuffer, read_string) -> str:
    flags, width, precision, length, conv = (g.decode() if g is not None else None for g in m.groups())
    if conv == "%":
        return "%"
    if width == "*":
        w = buffer.take(4, signed=True)
        if w < 0:
            flags, w = flags + "-", -w
        width = str(w)
    if precision == "*":
        p = buffer.take(4, signed=True)
        precision = str(p) if p >= 0 else None
    wide = length is not None and length.encode() in WIDE
    spec = "%" + flags + (width or "") + ("." + (precision or "0") if precision is not None else "")
    if conv in "diouxX":
        signed = conv in "di"
        value = _narrow(buffer.take(8 if wide else 4, signed=signed), length, signed)
        return _c_integer(value, flags, int(width or 0), None if precision is None else int(precision or 0),
                          conv, signed)
    if conv in "eEfFgGaA":
        value = buffer.take(8, floating=True)
        if value != value or value in (float("inf"), float("-inf")):
            spec = "%" + re.sub(r"^([-+ #0]*)", lambda f: f.group(1).replace("0", ""), spec[1:])  # C pads inf with spaces
        if conv in "aA":
            return _hexfloat(value, spec, conv)
        return (spec + conv) % value
    if conv == "c":
        value = buffer.take(4) & 0xFF
        return (spec.replace("0", "") + "s") % chr(value)
    if conv == "s":
        address = buffer.take(8)
        text = "(null)" if address == 0 else read_string(address).split(b"\0", 1)[0].decode("utf-8", "replace")
        return (spec + "s") % text
    if conv == "p":
        address = buffer.take(8)
        return (spec.replace("0", "") + "s") % ("(nil)" if address == 0 else f"0x{address:x}")
    buffer.take(8)     # %n writes nothing here
    return ""


def _c_integer(value: int, flags: str, width: int, precision, conv: str, signed: bool) -> str:
    """C's integer conversions (Python's % differs: '#o' is 0o, '+' applies to unsigned,
    '%.0d' of 0 is '0')."""
    digits = format(abs(value), {"d": "d", "i": "d", "u": "d", "o": "o", "x": "x", "X": "X"}[conv])
    if precision is not None:
        digits = "" if precision == 0 and value == 0 else digits.zfill(precision)
    if conv == "o" and "#" in flags and not digits.startswith("0"):
        digits = "0" + digits
    prefix = ("0x" if conv == "x" else "0X") if conv in "xX" and "#" in flags and value != 0 else ""
    sign = "-" if value < 0 else ("+" if signed and "+" in flags else (" " if signed and " " in flags else ""))
    lead = sign + prefix
    if "-" in flags:
        return (lead + digits).ljust(width)
    if "0" in flags and precision is None:
        return lead + digits.rjust(width - len(lead), "0")
    return (lead + digits).rjust(width)


def _narrow(value: int, length, signed: bool) -> int:
    bits = {"hh": 8, "h": 16}.get(length)
    if bits is None:
        return value
    value &= (1 << bits) - 1
    if signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def _hexfloat(value: float, spec: str, conv: str) -> str:
    """%a: glibc's shortest hexadecimal form (0x1.8p+0); precision is not modelled."""
    flags = re.match(r"%([-+ #0]*)", spec).group(1)
    if value != value or value in (float("inf"), float("-inf")):
        text = ("%" + flags.replace("0", "").replace("-", "") + ("F" if conv == "A" else "f")) % value
    else:
        mantissa, exponent = value.hex().split("p")
        whole, _, fraction = mantissa.partition(".")
        fraction = fraction.rstrip("0")
        text = whole + ("." + fraction if fraction else ("." if "#" in flags else "")) + "p" + exponent
        if "+" in spec.split(".")[0] and not text.startswith("-"):
            text = "+" + text
        elif " " in spec.split(".")[0] and not text.startswith("-"):
            text = " " + text
    if conv == "A":
        text = text.upper()
    width = int(re.sub(r"[-+ #0]", "", spec[1:].split(".")[0]) or 0)
    if "-" in flags:
        return text.ljust(width)
    if "0" in flags and text[-1].isdigit():        # zeros after the sign and 0x, as C pads
        head = 3 if text[0] in "+- " else 2
        return text[:head] + text[head:].rjust(width - head, "0")
    return text.rjust(width)
