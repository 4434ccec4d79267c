"""Kernel names: the plain C++ name inside an Itanium-mangled one (`_Z4vaddPKfS0_Pfi` is
`vadd`), enough to match `// LAUNCH: vadd ...` and `vadd<<<...>>>` to a cubin symbol."""
from __future__ import annotations


def demangle_base(symbol: str) -> str:
    """The unqualified function name of a mangled symbol (itself if not mangled)."""
    if not symbol.startswith("_Z"):
        return symbol
    rest = symbol[2:]
    if rest.startswith("N"):          # nested name: the last component before E
        rest = rest[1:]
        last = symbol
        while rest and rest[0].isdigit():
            n, rest = _length(rest)
            last, rest = rest[:n], rest[n:]
        return last
    if rest and rest[0].isdigit():
        n, rest = _length(rest)
        return rest[:n]
    return symbol


def _length(text: str) -> tuple[int, str]:
    digits = ""
    while text and text[0].isdigit():
        digits, text = digits + text[0], text[1:]
    return int(digits), text
