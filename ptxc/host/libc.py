"""More of the C library for host code: stdio's streams (fprintf, fputs, puts, putchar,
fflush on stdout and stderr), stdlib's conversions (strtol & co with their end pointers,
bases and clamping, strtod/strtof/atof with C's syntax incl. hex floats, inf and nan,
atoi, atol, atoll), string.h's strlen/strcmp/strncmp, abort, clock and time.  Each behaves as
glibc does (tests/test_host_runtime.py compares with gcc's build of the same program)."""
from __future__ import annotations

import re
import time

from .errors import ExitProgram, HostError
from .memory import HostMemoryError
from .printf import FormatError, format_c
from .values import round_f32

SPACE = " \t\n\v\f\r"
LIMITS = {"strtol": (-(1 << 63), (1 << 63) - 1), "strtoll": (-(1 << 63), (1 << 63) - 1),
          "strtoul": (0, (1 << 64) - 1), "strtoull": (0, (1 << 64) - 1)}
DECIMAL = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?")
SPECIAL = re.compile(r"[+-]?(?:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)", re.I)


def _text(it, address: int) -> str:
    try:
        return it.memory.read_string(address)
    except HostMemoryError as err:
        raise HostError(str(err)) from None


def _stream_writer(it, stream: int, name: str, node):
    if stream == 1:
        return it.write
    if stream == 2:
        return it.write_err
    raise HostError(f"{name}: ptxc run writes only to stdout and stderr", node.loc)


def rt_fprintf(it, args, types, node):
    write = _stream_writer(it, int(args[0]), "fprintf", node)
    try:
        text = format_c(_text(it, args[1]), list(args[2:]), it.memory.read_string)
    except (FormatError, HostMemoryError, TypeError, ValueError) as err:
        raise HostError(f"fprintf: {err}", node.loc) from None
    write(text)
    return len(text.encode("latin-1", "replace"))


def rt_fputs(it, args, types, node):
    _stream_writer(it, int(args[1]), "fputs", node)(_text(it, args[0]))
    return 1


def rt_puts(it, args, types, node):
    it.write(_text(it, args[0]) + "\n")
    return 1


def rt_putchar(it, args, types, node):
    it.write(chr(int(args[0]) & 0xFF))
    return int(args[0]) & 0xFF


def rt_fflush(it, args, types, node):
    return 0


def _parse_integer(text: str, base: int) -> tuple[int | None, int]:
    """(value, characters consumed) of C's strtol syntax; (None, 0) if no digits."""
    pos = 0
    while pos < len(text) and text[pos] in SPACE:
        pos += 1
    negative = False
    if pos < len(text) and text[pos] in "+-":
        negative = text[pos] == "-"
        pos += 1
    has_prefix = text[pos:pos + 2].lower() == "0x" and pos + 2 < len(text) and \
        text[pos + 2].lower() in "0123456789abcdef"
    if base == 0:
        base = 16 if has_prefix else 8 if text[pos:pos + 1] == "0" else 10
    if base == 16 and has_prefix:
        pos += 2
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"[:base]
    start = pos
    while pos < len(text) and text[pos].lower() in digits:
        pos += 1
    if pos == start:
        return None, 0
    value = int(text[start:pos], base)
    return (-value if negative else value), pos


def _strto_int(name: str):
    low, high = LIMITS[name]

    def run(it, args, types, node):
        base = int(args[2])
        if base != 0 and not 2 <= base <= 36:
            return 0
        text = _text(it, args[0])
        value, used = _parse_integer(text, base)
        if value is None:
            value = 0
        elif low == 0:                      # strtoul: a negative value wraps, a large one clamps
            value = high if abs(value) > high else value & high
        else:
            value = min(max(value, low), high)
        if args[1]:
            it.memory.store(int(args[1]), "Q", int(args[0]) + used)
        return value
    return run


def _parse_float(text: str) -> tuple[float, int]:
    pos = 0
    while pos < len(text) and text[pos] in SPACE:
        pos += 1
    for pattern, convert in ((HEX, _hex_float), (SPECIAL, _special), (DECIMAL, float)):
        m = pattern.match(text, pos)
        if m:
            return convert(m.group(0)), m.end()
    return 0.0, 0


def _hex_float(text: str) -> float:
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    if "p" not in body.lower():
        body += "p0"
    return sign * float.fromhex(body)


def _special(text: str) -> float:
    sign = -1.0 if text.startswith("-") else 1.0
    return sign * (float("inf") if "inf" in text.lower() else float("nan"))


def _strto_float(single: bool):
    def run(it, args, types, node):
        value, used = _parse_float(_text(it, args[0]))
        if len(args) > 1 and args[1]:
            it.memory.store(int(args[1]), "Q", int(args[0]) + used)
        return round_f32(value) if single else value
    return run


def _atol(bits: int):
    """glibc's atoi/atol/atoll: (type) strtol(s, NULL, 10), so out of range clamps first."""
    def run(it, args, types, node):
        value, _ = _parse_integer(_text(it, args[0]), 10)
        value = min(max(value or 0, -(1 << 63)), (1 << 63) - 1)
        value &= (1 << bits) - 1
        return value - (1 << bits) if value >> (bits - 1) else value
    return run


def rt_strlen(it, args, types, node):
    return len(_text(it, args[0]).encode("latin-1", "replace"))


def _compare(a: bytes, b: bytes) -> int:
    for x, y in zip(a + b"\0", b + b"\0"):
        if x != y:
            return x - y
    return 0


def rt_strcmp(it, args, types, node):
    return _compare(_text(it, args[0]).encode("latin-1"), _text(it, args[1]).encode("latin-1"))


def rt_strncmp(it, args, types, node):
    n = int(args[2])
    return _compare(_text(it, args[0]).encode("latin-1")[:n], _text(it, args[1]).encode("latin-1")[:n])


def rt_abort(it, args, types, node):
    it.write_err("Aborted\n")
    raise ExitProgram(134)


def rt_clock(it, args, types, node):
    return int(time.process_time() * 1_000_000)       # CLOCKS_PER_SEC is 1000000


def rt_time(it, args, types, node):
    now = int(time.time())
    if args[0]:
        it.memory.store(int(args[0]), "q", now)
    return now


FUNCTIONS = {
    "fprintf": rt_fprintf, "fputs": rt_fputs, "puts": rt_puts, "putchar": rt_putchar, "fflush": rt_fflush,
    "strtol": _strto_int("strtol"), "strtoll": _strto_int("strtoll"), "strtoul": _strto_int("strtoul"),
    "strtoull": _strto_int("strtoull"), "strtod": _strto_float(False), "strtof": _strto_float(True),
    "atof": _strto_float(False), "atoi": _atol(32), "atol": _atol(64), "atoll": _atol(64),
    "strlen": rt_strlen, "strcmp": rt_strcmp, "strncmp": rt_strncmp,
    "abort": rt_abort, "clock": rt_clock, "time": rt_time,
}
