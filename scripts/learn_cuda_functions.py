#!/usr/bin/env python3
"""List the device functions that CUDA's headers declare, for sema's diagnostics.

    python scripts/learn_cuda_functions.py           # writes ptxc/frontend/cuda_functions.txt
    python scripts/learn_cuda_functions.py --check   # exit 1 if the committed list differs

nvcc declares every CUDA math function and intrinsic (erfcinvf, __fsqrt_rn,
__reduce_add_sync, __float2half, ...) in the headers it always includes.  ptxc
implements the ones issue 5 names, and a call of any other would otherwise read "use
of undeclared identifier", which is not true of CUDA.  sema reports a name from this
list as an unsupported feature instead.  The names come from the pinned CUDA wheel's
headers (nvidia/cu13/include, beside the tools of ptxc.oracle), never typed by hand:
every identifier that a `__device__` or `*_DECL__` declaration puts before its `(`,
in the headers below, comments and preprocessor lines removed, minus all-capital macro
names.  The list holds names only, no declarations or code from the headers.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptxc import oracle  # noqa: E402

OUTPUT = ROOT / "ptxc" / "frontend" / "cuda_functions.txt"

# The headers behind cuda_runtime.h's device-side declarations: math, intrinsics,
# atomics, warp functions, and the half/bfloat16 types' functions.
HEADERS = [
    "crt/math_functions.h", "crt/device_functions.h", "crt/device_double_functions.h",
    "device_atomic_functions.h", "sm_20_atomic_functions.h", "sm_32_atomic_functions.h",
    "sm_35_atomic_functions.h", "sm_60_atomic_functions.h",
    "sm_20_intrinsics.h", "sm_30_intrinsics.h", "sm_32_intrinsics.h", "sm_35_intrinsics.h",
    "sm_61_intrinsics.h", "crt/sm_70_rt.h", "crt/sm_80_rt.h", "crt/sm_90_rt.h",
    "cuda_fp16.h", "cuda_bf16.h",
]

# A declaration: `__device__` or a `..._DECL__` macro, the return type and qualifiers
# (no parentheses, braces or `;`), then the function's name and its `(`.
_DECLARATION = re.compile(r"(?:\b__device__|_DECL__)\b[^;{}()#]*?\b([A-Za-z_]\w*)\s*\(")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#[^\n]*(?:\\\n[^\n]*)*", re.M)
_MACRO_NAME = re.compile(r"^[A-Z0-9_]+$")


def include_dir() -> Path:
    bin_dir = oracle.wheel_bin_dir()
    if bin_dir is None:
        oracle.require("nvcc")      # (raises OracleMissing, with how to install it)
        bin_dir = Path(str(oracle.find("nvcc"))).parent
    return bin_dir.parent / "include"


def declared_names(include: Path) -> list[str]:
    names: set[str] = set()
    for header in HEADERS:
        text = (include / header).read_text(errors="replace")
        text = _DIRECTIVE.sub(" ", _COMMENT.sub(" ", text))
        names.update(m.group(1) for m in _DECLARATION.finditer(text))
    return sorted(name for name in names if not _MACRO_NAME.match(name)
                  and name not in ("operator", "decltype", "sizeof") and not name.startswith("__attribute"))


def render(names: list[str]) -> str:
    head = (f"# Device functions declared by CUDA {oracle.PINNED_VERSION}'s headers "
            "(scripts/learn_cuda_functions.py writes this file; do not edit).\n")
    return head + "".join(f"{name}\n" for name in names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed list, write nothing")
    args = parser.parse_args()
    text = render(declared_names(include_dir()))
    if args.check:
        same = OUTPUT.exists() and OUTPUT.read_text() == text
        print(f"{OUTPUT.relative_to(ROOT)}: {'up to date' if same else 'differs from the headers'}")
        return 0 if same else 1
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)}: {text.count(chr(10)) - 1} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
