"""Device printf's formatting (ptxc/emu/printf.py), and host printf under `ptxc run`
(ptxc/host/printf.py, which shares its conversions), against the host C library's printf:
generated conversions (every conversion x flags x width x precision x length modifier,
random values incl. edge cases) are packed into an argument buffer in NVVM's layout
(each argument after C's promotions at its size's alignment), formatted by ptxc, and
printed by a C program the host compiler builds; the texts must be equal.  The C
library is the reference for C's printf semantics (CUDA documents device printf as
C's); the buffer layout itself is checked against nvcc's PTX in test_headers_emu.py.
"""
from __future__ import annotations

import random
import shutil
import struct
import subprocess

import pytest

from ptxc.emu.printf import format_vprintf
from ptxc.host.printf import format_c

CC = shutil.which("gcc") or shutil.which("cc")
needs_cc = pytest.mark.skipif(CC is None, reason="no host C compiler")

INTS = [0, 1, -1, 7, -42, 255, 65535, 2**31 - 1, -2**31, 123456789]
WIDES = [0, -1, 2**63 - 1, -2**63, 2**40 + 3, 10**15]
DOUBLES = [0.0, -0.0, 1.5, -2.25, 3.141592653589793, 1e-310, 6.02e23, -1e-5, 123456.789, float("inf"),
           float("-inf"), 2.0**-1074, 0.1]
STRINGS = [b"hey", b"", b"a longer string"]


def generate(rng: random.Random, count: int):
    """(format, C argument expressions, buffer bytes, strings by address) cases."""
    cases = []
    for _ in range(count):
        parts, c_args, buf, strings, values = [], [], bytearray(), {}, []
        for _k in range(rng.randint(1, 4)):
            conv = rng.choice("diouxXeEfgGacsp%")
            flags = "".join(rng.sample("-+ #0", rng.randint(0, 2))) if conv not in "csp%" else rng.choice(["", "-"])
            width = rng.choice(["", "", "5", "12"]) if conv != "%" else ""
            prec = rng.choice(["", "", ".0", ".3", ".10"]) if conv in "diouxXeEfgGs" else ""
            length = ""
            if conv in "diouxX":
                length = rng.choice(["", "", "l", "ll", "h", "hh"])
            if conv in "sp%":
                flags = flags.replace("#", "").replace("0", "").replace("+", "").replace(" ", "")
            if conv == "a" and prec:
                prec = ""
            parts.append(f"[%{flags}{width}{prec}{length}{conv}]")
            if conv == "%":
                continue
            if conv in "diouxXc":
                wide = length in ("l", "ll")
                value = rng.choice(WIDES if wide else INTS)
                if conv == "c":
                    value = rng.randint(33, 126)
                size = 8 if wide else 4
                ctype = {"l": "long", "ll": "long long"}.get(length, "int")
                if conv in "ouxX":
                    ctype = "unsigned " + ctype
                    value &= (1 << (8 * size)) - 1
                c_args.append(f"({ctype}){value}{'ULL' if conv in 'ouxX' else 'LL'}")
                _put(buf, value & ((1 << (8 * size)) - 1), size)
                values.append(value)
            elif conv in "eEfgGa":
                value = rng.choice(DOUBLES)
                finite = abs(value) != float("inf")
                c_args.append(value.hex() if finite else ("(1.0/0.0)" if value > 0 else "(-1.0/0.0)"))
                _align(buf, 8)
                buf += struct.pack("<d", value)
                values.append(value)
            elif conv == "s":
                text = rng.choice(STRINGS)
                address = 0x1000 * (len(strings) + 1)
                strings[address] = text + b"\0"
                c_args.append('"' + text.decode() + '"')
                _put(buf, address, 8)
                values.append(address)
            else:                       # %p
                address = rng.choice([0x7f001230, 0xdeadbeef00])
                c_args.append(f"(void*){address:#x}ULL")
                _put(buf, address, 8)
                values.append(address)
        cases.append(("".join(parts) + "\n", c_args, bytes(buf), strings, values))
    return cases


def _align(buf: bytearray, size: int) -> None:
    buf += bytes((-len(buf)) % size)


def _put(buf: bytearray, value: int, size: int) -> None:
    _align(buf, size)
    buf += value.to_bytes(size, "little")


def c_program(cases) -> str:
    lines = ["#include <stdio.h>", "int main(void) {"]
    for fmt, args, _buf, _strings, _values in cases:
        literal = fmt.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        lines.append(f'    printf("{literal}"{"".join(", " + a for a in args)});')
    lines += ["    return 0;", "}"]
    return "\n".join(lines)


@needs_cc
def test_device_printf_formats_as_c_does(tmp_path):
    cases = generate(random.Random(1616), 3000)
    source = tmp_path / "p.c"
    source.write_text(c_program(cases))
    subprocess.run([CC, "-w", "-O0", "-o", str(tmp_path / "p"), str(source)], check=True)
    want = subprocess.run([str(tmp_path / "p")], capture_output=True, check=True).stdout.decode().splitlines()
    assert len(want) == len(cases)
    device = [format_vprintf(fmt.encode(), buf, lambda a, s=strings: s[a]).rstrip("\n")
              for fmt, _args, buf, strings, _values in cases]
    host = [format_c(fmt, values, lambda a, s=strings: s[a][:-1].decode()).rstrip("\n")
            for fmt, _args, _buf, strings, values in cases]
    for who, got in (("device printf", device), ("host printf", host)):
        bad = [(c[0].strip(), g, w) for c, g, w in zip(cases, got, want) if g != w]
        assert not bad, f"{who}: {len(bad)} of {len(cases)} differ, first {bad[:4]}"


def test_arguments_are_read_at_their_alignment():
    """NVVM's buffer for printf("%d %f %c %lld", 1, 2.5, 'x', 1LL << 40): 1 at 0, 2.5 at 8,
    'x' (an int) at 16, the long long at 24."""
    buf = (1).to_bytes(4, "little") + bytes(4) + struct.pack("<d", 2.5) + ord("x").to_bytes(4, "little") \
        + bytes(4) + (1 << 40).to_bytes(8, "little")
    assert format_vprintf(b"%d %f %c %lld\0", buf, None) == "1 2.500000 x 1099511627776"
