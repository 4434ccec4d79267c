"""Kernel names as LAUNCH lines and `<<<...>>>` write them, matched to a cubin's symbols.

The matching itself is the emulator's (ptxc/emu/names.py: its module lookup uses it too);
this module hands it to the GPU side without importing the emulator until it is used.
"""
from __future__ import annotations


def resolve_instance_name(name: str, source: str) -> str:
    """`name` with the template arguments the source's defaults fill in (see emu/names.py)."""
    from ..emu.names import resolve_instance_name as resolve
    return resolve(name, source)


def matching_symbols(symbols, name: str) -> list:
    """The symbols (mangled) that a LAUNCH line's kernel `name` can mean."""
    from ..emu.names import matching_symbols as matching
    return matching(symbols, name)


def demangle_base(symbol: str) -> str:
    """The unqualified function name of a mangled symbol (itself if not mangled)."""
    from ..emu.names import demangle_base as demangle
    return demangle(symbol)
