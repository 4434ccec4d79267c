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
from dataclasses import dataclass

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
        width = buffer.take(4, signed=True)
    if precision == "*":
        precision = buffer.take(4, signed=True)
    wide = length is not None and length.encode() in WIDE
    if conv in "diouxXc":
        value = buffer.take(8 if wide else 4, signed=conv in "di")
    elif conv in "eEfFgGaA":
        value = buffer.take(8, floating=True)
    else:                                   # s, p, n: a 64-bit address
        value = buffer.take(8)
    return format_conversion(flags, width, precision, length, conv, value,
                             lambda a: read_string(a).split(b"\0", 1)[0].decode("utf-8", "replace"))


LENGTH_BITS = {"hh": 8, "h": 16, None: 32, "l": 64, "ll": 64, "z": 64, "j": 64, "t": 64, "L": 64}


def format_conversion(flags: str, width, precision, length, conv: str, value, read_string) -> str:
    """One C conversion (`%-08.3lx`...) of one argument, as glibc prints it (64-bit long).
    `width`/`precision`: ints, digit strings or None (a negative `*` width left-justifies;
    a negative `*` precision is none); read_string(address) -> str for %s."""
    if conv == "%":
        return "%"
    width = int(width) if width not in (None, "") else 0
    if width < 0:
        flags, width = flags + "-", -width
    if precision is not None:
        precision = int(precision or 0)
        if precision < 0:
            precision = None
    spec = "%" + flags + (str(width) if width else "") + ("." + str(precision) if precision is not None else "")
    if conv in "diouxX":
        signed = conv in "di"
        return _c_integer(_narrow(int(value), LENGTH_BITS[length], signed), flags, width, precision, conv, signed)
    if conv in "eEfFgGaA":
        value = float(value)
        special = value != value or value in (float("inf"), float("-inf"))
        if special:   # C pads inf and nan with spaces and prints a negative NaN's sign
            spec = "%" + re.sub(r"^([-+ #0]*)", lambda f: f.group(1).replace("0", ""), spec[1:])
        if conv in "aA":
            return _hexfloat(value, spec, conv, precision)
        text = (spec + conv) % value
        if value != value and struct.pack("<d", value)[7] >> 7:
            text = text.replace("nan", "-nan").replace("NAN", "-NAN")
        return text
    padded = "%" + ("-" if "-" in flags else "") + (str(width) if width else "")   # text: spaces only
    if conv == "c":
        return (padded + "s") % chr(int(value) & 0xFF)
    if conv == "s":
        text = "(null)" if not value else read_string(int(value))
        return (padded + ("." + str(precision) if precision is not None else "") + "s") % text
    if conv == "p":
        address = int(value) & 0xFFFFFFFFFFFFFFFF
        return (padded + "s") % ("(nil)" if address == 0 else f"0x{address:x}")
    return ""     # %n writes nothing here


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


def _narrow(value: int, bits: int, signed: bool) -> int:
    value &= (1 << bits) - 1
    if signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def _hexfloat(value: float, spec: str, conv: str, precision=None) -> str:
    """%a: glibc's shortest hexadecimal form (0x1.8p+0), or `precision` hex digits
    (truncated: glibc rounds, which the tests do not reach)."""
    flags = re.match(r"%([-+ #0]*)", spec).group(1)
    if value != value or value in (float("inf"), float("-inf")):
        text = ("%" + flags.replace("0", "").replace("-", "") + ("F" if conv == "A" else "f")) % value
    else:
        mantissa, exponent = value.hex().split("p")
        whole, _, fraction = mantissa.partition(".")
        fraction = (fraction + "0" * precision)[:precision] if precision is not None else fraction.rstrip("0")
        text = whole + ("." + fraction if fraction else ("." if "#" in flags else "")) + "p" + exponent
        if "+" in flags and not text.startswith("-"):
            text = "+" + text
        elif " " in flags and not text.startswith("-"):
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


# ---- the emulator's printf service --------------------------------------------------------
# The core logs each system call (isa.SL_*: kind, block, thread, argument registers, and
# vprintf's argument buffer as it was at the call); after the launch these turn the log
# into what the CUDA driver prints.  The CUDA programming guide leaves the order of
# different threads' output unspecified; the emulator's is deterministic: block by
# block (linear block index), warp by warp within a block, each warp's calls in the
# order it made them, and within one call the lanes in order.


@dataclass
class SystemCall:
    """One vprintf or __assertfail call of one thread."""
    name: str                      # "vprintf" or "__assertfail"
    block: tuple                   # blockIdx (x, y, z)
    thread: tuple                  # threadIdx (x, y, z)
    text: str = ""                 # vprintf: what it prints
    message: str = ""              # __assertfail: the expression, file, line and function
    file: str = ""
    line: int = 0
    function: str = ""


def _coords(index: int, dims) -> tuple:
    return index % dims[0], (index // dims[0]) % dims[1], index // (dims[0] * dims[1])


def system_calls(log, config, read_cstring) -> list:
    """The core's system-call log (an int64 array, isa.SL_COLS columns) as SystemCalls
    in output order.  `read_cstring(address)` -> bytes or None (device memory)."""
    from . import isa as I
    count = int(log[0, 0])
    rows = sorted(range(1, count + 1), key=lambda r: (int(log[r, I.SL_BLOCK]), int(log[r, I.SL_THREAD]) // 32))

    def string(address: int) -> bytes:
        data = read_cstring(address) if address else None
        return data if data is not None else b""
    out = []
    for r in rows:
        row = [int(x) for x in log[r]]
        kind = row[I.SL_KIND]
        block, thread = _coords(row[I.SL_BLOCK], config.grid), _coords(row[I.SL_THREAD], config.block)
        args = [a & 0xFFFFFFFFFFFFFFFF for a in row[I.SL_ARGS:I.SL_ARGS + 5]]
        if kind == I.SYS_VPRINTF:
            words = row[I.SL_BUF:I.SL_BUF + row[I.SL_NBUF]]
            buffer = b"".join((w & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little") for w in words)
            fmt = string(args[0])
            text = format_vprintf(fmt, buffer, string) if args[0] else ""
            out.append(SystemCall("vprintf", block, thread, text=text))
        elif kind == I.SYS_ASSERTFAIL:
            decode = lambda a: string(a).decode("utf-8", "replace")
            out.append(SystemCall("__assertfail", block, thread, message=decode(args[0]), file=decode(args[1]),
                                  line=args[2] & 0xFFFFFFFF, function=decode(args[3])))
    return out


def device_output(calls) -> str:
    """The text the kernel's printf calls print, in output order."""
    return "".join(c.text for c in calls if c.name == "vprintf")


def assertion_messages(calls, config=None) -> list:
    """One line per failed device assert, as the CUDA driver prints it:
    `file:line: function: block: [x,y,z], thread: [x,y,z] Assertion `expr` failed.`"""
    lines = []
    for c in calls:
        if c.name == "__assertfail":
            lines.append(f"{c.file}:{c.line}: {c.function}: block: [{','.join(map(str, c.block))}], "
                         f"thread: [{','.join(map(str, c.thread))}] Assertion `{c.message}` failed.")
    return lines
