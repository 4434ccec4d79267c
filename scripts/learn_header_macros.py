"""Learn the values and types of the system headers' constant macros from nvcc.

    python scripts/learn_header_macros.py      # rewrites ptxc/frontend/header_macros.py

For every macro of the list below, a probe kernel compiled by the pinned nvcc stores the
macro into a `__device__ decltype(NAME)` variable; the PTX gives the value (the stored
bits) and a template specialised per C type gives the type.  The generated module
writes each macro as a literal of that type (floats as the shortest decimal that reads
back to the same bits, infinities and NaNs as ptxc's host-and-device bit casts), never as NVIDIA's header text.
The macro *names* are the C standard's (limits.h, float.h, stdint.h, math.h, ...) and,
for math_constants.h, the names that header defines.
"""
from __future__ import annotations

import re
import struct
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptxc import oracle  # noqa: E402

OUTPUT = ROOT / "ptxc" / "frontend" / "header_macros.py"

HEADERS = {
    "limits.h": "CHAR_BIT SCHAR_MIN SCHAR_MAX UCHAR_MAX CHAR_MIN CHAR_MAX MB_LEN_MAX SHRT_MIN SHRT_MAX "
                "USHRT_MAX INT_MIN INT_MAX UINT_MAX LONG_MIN LONG_MAX ULONG_MAX LLONG_MIN LLONG_MAX ULLONG_MAX",
    "float.h": "FLT_RADIX FLT_MANT_DIG DBL_MANT_DIG FLT_DIG DBL_DIG DECIMAL_DIG FLT_DECIMAL_DIG DBL_DECIMAL_DIG "
               "FLT_MIN_EXP DBL_MIN_EXP FLT_MIN_10_EXP DBL_MIN_10_EXP FLT_MAX_EXP DBL_MAX_EXP FLT_MAX_10_EXP "
               "DBL_MAX_10_EXP FLT_MAX DBL_MAX FLT_EPSILON DBL_EPSILON FLT_MIN DBL_MIN FLT_TRUE_MIN DBL_TRUE_MIN "
               "FLT_EVAL_METHOD",
    "stdint.h": "INT8_MIN INT8_MAX UINT8_MAX INT16_MIN INT16_MAX UINT16_MAX INT32_MIN INT32_MAX UINT32_MAX "
                "INT64_MIN INT64_MAX UINT64_MAX INTPTR_MIN INTPTR_MAX UINTPTR_MAX INTMAX_MIN INTMAX_MAX UINTMAX_MAX "
                "PTRDIFF_MIN PTRDIFF_MAX SIZE_MAX",
    "math.h": "M_E M_LOG2E M_LOG10E M_LN2 M_LN10 M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI M_2_SQRTPI M_SQRT2 "
              "M_SQRT1_2 INFINITY NAN HUGE_VAL HUGE_VALF FP_NAN FP_INFINITE FP_ZERO FP_SUBNORMAL FP_NORMAL",
    "stdio.h": "EOF",
    "stdlib.h": "RAND_MAX EXIT_SUCCESS EXIT_FAILURE",
    "math_constants.h": None,   # every CUDART_* the header defines
}
# Headers that bring the same macros as another (C++'s <cxxx> names; cuda_runtime.h
# includes the C library's limits and math through its own headers only in part, so
# it brings none here).
ALIASES = {"climits": "limits.h", "cfloat": "float.h", "cstdint": "stdint.h", "cmath": "math.h",
           "cstdio": "stdio.h", "cstdlib": "stdlib.h"}
# The headers known without a file that bring no constant this script learns.
PLAIN = ["cuda_runtime.h", "cuda.h", "cuda_runtime_api.h", "device_launch_parameters.h", "assert.h",
         "time.h", "stddef.h", "string.h", "cstring", "cassert", "ctime", "cstddef", "device_functions.h",
         "vector_types.h", "sm_20_atomic_functions.h", "sm_60_atomic_functions.h"]
NULL_HEADERS = ["stdio.h", "stdlib.h", "stddef.h", "string.h", "cstdio", "cstdlib", "cstddef", "cstring"]

# C type -> (code, PTX width, literal suffix)
TYPES = [("int", 32, ""), ("unsigned", 32, "U"), ("long", 64, "L"), ("unsigned long", 64, "UL"),
         ("long long", 64, "LL"), ("unsigned long long", 64, "ULL"), ("float", 32, "F"), ("double", 64, "")]


def math_constant_names() -> list[str]:
    include = oracle.find("nvcc").parent.parent / "include" / "math_constants.h"
    names = re.findall(r"^#define\s+(CUDART_\w+)\s", include.read_text(), re.M)
    return [n for n in dict.fromkeys(names) if not n.endswith("_H__")]


def probe(names: list[str]) -> str:
    lines = [f"#include <{h}>" for h in HEADERS]
    lines.append("template <class T> struct code_of;")
    for k, (ctype, _w, _s) in enumerate(TYPES):
        lines.append(f"template <> struct code_of<{ctype}> {{ enum {{ value = {k} }}; }};")
    for i, name in enumerate(names):
        lines.append(f"__device__ decltype({name}) v{i};")
        lines.append(f"__device__ int t{i} = code_of<decltype({name})>::value;")
    lines.append("__global__ void probe() {")
    lines.extend(f"  v{i} = {name};" for i, name in enumerate(names))
    lines.append("}")
    return "\n".join(lines) + "\n"


def learn(names: list[str], arch: str = "sm_89") -> dict[str, tuple[str, int]]:
    with tempfile.TemporaryDirectory() as tmp:
        cu = Path(tmp) / "probe.cu"
        cu.write_text(probe(names))
        ptx = oracle.nvcc_ptx(cu, Path(tmp) / "probe.ptx", arch).read_text()
    codes = {int(i): int(v or 0) for i, v in re.findall(r"\.global \.align 4 \.u32 t(\d+)(?: = (-?\d+))?;", ptx)}
    regs = dict(re.findall(r"mov\.[bus]\d+\s+(%\w+), (-?\w+);", ptx))
    found = {}
    for i, operand in re.findall(r"st\.global\.\w+\s+\[v(\d+)\], (-?[%\w]+);", ptx):
        value = regs.get(operand, operand)
        found[int(i)] = int(value, 0)
    result = {}
    for i, name in enumerate(names):
        ctype, width, _ = TYPES[codes[i]]
        bits = found.get(i, 0) & ((1 << width) - 1)   # a zero is stored as %r of 0 or not at all
        result[name] = (ctype, bits)
    return result


def literal(ctype: str, bits: int) -> str:
    _, width, suffix = next(t for t in TYPES if t[0] == ctype)
    if ctype == "float":
        value = struct.unpack("<f", struct.pack("<I", bits))[0]
        if value != value or value in (float("inf"), float("-inf")):
            return f"__ptxc_int_as_float(0x{bits:08x})"
        import numpy as np
        return f"{np.format_float_scientific(np.float32(value), unique=True, trim='-')}F".replace("e+", "e")
    if ctype == "double":
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if value != value or value in (float("inf"), float("-inf")):
            return f"__ptxc_longlong_as_double(0x{bits:016x}ULL)"
        return repr(value)
    signed = not suffix.startswith("U")
    value = bits - (1 << width) if signed and bits >> (width - 1) else bits
    if value == -(1 << (width - 1)):
        return f"(-{(1 << (width - 1)) - 1}{suffix} - 1)"
    return f"({value}{suffix})" if value < 0 else f"{value}{suffix}"


def main() -> None:
    names_of = {h: (names.split() if names else math_constant_names()) for h, names in HEADERS.items()}
    every = [n for names in names_of.values() for n in names]
    values = learn(every)
    if learn(every, "sm_90") != values:
        raise SystemExit("the constants differ between sm_89 and sm_90")
    out = ['"""The constant macros of the system headers ptxc knows without a file.',
           "",
           "Generated by scripts/learn_header_macros.py from nvcc 13.5 (values and types of a probe",
           "kernel's PTX); do not edit.", '"""', "", "HEADER_MACROS: dict[str, dict[str, str]] = {"]
    for header, names in names_of.items():
        entries = {n: literal(*values[n]) for n in names}
        if header in NULL_HEADERS:
            entries = {"NULL": "0", **entries}
        out.append(f"    {header!r}: {{")
        out.extend(f"        {n!r}: {v!r}," for n, v in entries.items())
        out.append("    },")
    out.append("}")
    out.append("for _alias, _header in " + repr(ALIASES) + ".items():")
    out.append("    HEADER_MACROS[_alias] = HEADER_MACROS[_header]")
    out.append("for _header in " + repr(PLAIN) + ":")
    out.append("    HEADER_MACROS.setdefault(_header, {'NULL': '0'} if _header in " + repr(NULL_HEADERS) + " else {})")
    OUTPUT.write_text("\n".join(out) + "\n")
    print(f"wrote {OUTPUT} ({len(every)} macros)")


if __name__ == "__main__":
    main()
