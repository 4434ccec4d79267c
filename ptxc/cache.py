"""A per-user cache of data built from ptxc's source files (tables, indexes), so that a
fresh process loads them in one `marshal.loads` instead of parsing JSON and building.

    data = cached("sm_89.table", [json_path, Path(__file__)], build)

The entry lives in $XDG_CACHE_HOME/ptxc (default ~/.cache/ptxc; $PTXC_CACHE_DIR
overrides it), named after a hash of the source files' bytes, the Python version and
this module, so a changed table, loader or interpreter builds a new one; a stale entry
is never read.  `build` must return what marshal can store (dicts, lists, tuples, str,
int, ...).  Writes are atomic (a temporary file renamed); an unwritable cache folder
only costs the build each time.  PTXC_NO_CACHE=1 turns the cache off (always build).
Nothing read from the cache can change an output: the entry is exactly what `build`
returned for the same source bytes.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import sys
from pathlib import Path

_VERSION = 1            # bump when the cache's own format changes


def cache_dir() -> Path:
    if os.environ.get("PTXC_CACHE_DIR"):
        return Path(os.environ["PTXC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ptxc"


def _key(name: str, sources: list) -> str:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{_VERSION} {sys.version} {marshal.version} {name}".encode())
    for source in sources:
        data = Path(source).read_bytes()
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def cached(name: str, sources: list, build):
    """build() through the cache; `sources`: every file the result depends on (the data
    files and the modules whose code shapes it)."""
    if os.environ.get("PTXC_NO_CACHE"):
        return build()
    folder = cache_dir()
    path = folder / f"{name}-{_key(name, sources)}.marshal"
    try:
        return marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        pass
    value = build()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_bytes(marshal.dumps(value))
        os.replace(tmp, path)
    except OSError:
        pass
    return value
