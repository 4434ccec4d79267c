"""Compiled regular expressions kept between processes.

Python compiles a regular expression in Python code (re._parser, re._compiler): a
fresh `ptxc x.ptx` spent ~40 % of its parse compiling Lark's lexer patterns (the
contextual lexer builds one large alternation per parser state, ~30 of them) and the
instruction selector's.  Lark's `cache=True` keeps its LALR tables, not these.

`install()` (the `ptxc` command calls it; a library import never does) makes
re._compiler.compile look a (pattern, flags) up in a table loaded from the user cache
(ptxc/cache.py's folder) and hand the stored program straight to _sre.compile; a
pattern not in the table is compiled as Python does and added, and the table is
written back when the process exits.  The stored program is what re._compiler makes
for that pattern and flags, so a Pattern from the table is equal (same flags, pattern
and code: Pattern.__eq__) to a freshly compiled one; tests/test_startup.py checks it.
The file's name carries the Python version and _sre.MAGIC: another interpreter never
reads it.  PTXC_NO_CACHE=1 leaves `re` alone.
"""
from __future__ import annotations

import atexit
import marshal
import os
import re
import sys

try:
    import _sre
    from re import _compiler, _parser
except ImportError:             # not CPython's re: nothing to speed up
    _sre = None

_MAX_ENTRIES = 4000             # patterns made from input text must not grow it forever
_entries: dict = {}
_added = False
_original = None


def _path():
    from .cache import cache_dir
    tag = f"{sys.implementation.cache_tag}-{_sre.MAGIC}-{_sre.CODESIZE}"
    return cache_dir() / f"regex-{tag}.marshal"


def program(pattern, flags: int) -> tuple:
    """What _sre.compile takes after the pattern, as re._compiler.compile makes it."""
    parsed = _parser.parse(pattern, flags)
    code = [int(c) for c in _compiler._code(parsed, flags)]   # (some are int subclasses)
    groupindex = dict(parsed.state.groupdict)
    indexgroup = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup))


def _compile(p, flags=0):
    global _added
    if type(p) not in (str, bytes) or flags & re.DEBUG:    # (a str subclass: marshal cannot keep it)
        return _original(p, flags)
    key = (p, int(flags))
    args = _entries.get(key)
    if args is None:
        args = program(p, flags)
        if len(_entries) < _MAX_ENTRIES and _storable(args):
            _entries[key] = args
            _added = True
    return _sre.compile(p, *args)


def _storable(args: tuple) -> bool:
    try:
        marshal.dumps(args)
        return True
    except ValueError:
        return False


def _save() -> None:
    if not _added:
        return
    path = _path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_bytes(marshal.dumps(_entries))
        os.replace(tmp, path)
    except OSError:
        pass


def install() -> None:
    """Serve re's compiles from the user cache for the rest of this process."""
    global _original, _entries
    if _sre is None or _original is not None or os.environ.get("PTXC_NO_CACHE"):
        return
    try:
        loaded = marshal.loads(_path().read_bytes())
        if isinstance(loaded, dict):
            _entries = loaded
    except (OSError, ValueError, EOFError, TypeError):
        pass
    _original = _compiler.compile
    _compiler.compile = _compile
    atexit.register(_save)
