"""The prelude: CUDA functions that ptxc defines in CUDA source (prelude.cu).

Expects: the user's file parsed (a TranslationUnit) and its preprocessed text.
Guarantees: every prelude function whose name the text contains and the file does not
define itself is prepended to the unit as an ordinary `__device__ __forceinline__`
definition, parsed from prelude.cu (its locations are prelude.cu's lines, and it
has no errors); a file that names none of them is left as it was, at the cost of one
substring test per function.
"""
from __future__ import annotations

import re
from pathlib import Path

from . import ast as A

PRELUDE_FILE = Path(__file__).with_name("prelude.cu")
_DEFINITION = re.compile(r"^__device__[^(]*?\b(\w+)\(", re.M)
_NAMES: list[str] | None = None


def prelude_names() -> list[str]:
    """The functions prelude.cu defines, in file order."""
    global _NAMES
    if _NAMES is None:
        _NAMES = _DEFINITION.findall(PRELUDE_FILE.read_text())
    return _NAMES


def add_prelude(unit: A.TranslationUnit, text: str) -> None:
    wanted = [name for name in prelude_names() if name in text]
    if not wanted:
        return
    defined = {_function_name(item) for item in unit.items if isinstance(item, A.FunctionDef)}
    wanted = [name for name in wanted if name not in defined and re.search(rf"\b{re.escape(name)}\b", text)]
    if not wanted:
        return
    from .parser import parse
    source = PRELUDE_FILE.read_text()
    prelude = parse(source, str(PRELUDE_FILE), source)
    unit.items[:0] = [item for item in prelude.items if _function_name(item) in wanted]


def _function_name(item: A.FunctionDef) -> str | None:
    return item.declarator.name
