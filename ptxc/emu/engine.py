"""Where the compiled core comes from.

Importing numba and loading a cached jitted function costs most of a second, more than
running the seed's whole launch.  So the core (core.run_grid) is compiled once ahead of
time with numba.pycc into an ordinary extension module, named after a hash of the
sources it is built from, and kept beside them (ptxc/emu/__pycache__, or
$PTXC_CACHE_DIR, or ~/.cache/ptxc).  Later runs import that module: no numba at all.

    python -m ptxc.emu.engine          # build it now (about a minute, once per change)

`run_grid()` returns the AOT function if it is built for the current sources, else
builds it (printing one line on stderr), and falls back to numba's JIT (cache=True)
when building is impossible or PTXC_EMU_JIT=1 is set.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = ("core.py", "fp.py", "isa.py", "engine.py")

# The exported signature: every array C-contiguous, as runner.py allocates them.
SIGNATURE = ("void(i8[:,::1], i8[::1], u4[:,::1], u1[::1], u2[::1], u4[::1], i8[:,::1], "
             "u1[::1], u2[::1], u4[::1], u1[::1], u2[::1], u4[::1], "
             "i8[:,::1], u1[:,::1], i8[:,::1], u1[:,::1], i8[:,::1], i8[::1], i8[::1], i8[::1], i8[::1], "
             "i8[:,::1], i8[:,:,::1], i8[:,:,::1], i8[:,::1], i8[::1], i8[::1], i8[::1], i8[:,::1])")


def source_hash() -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update((HERE / name).read_bytes())
    h.update(sys.version.encode())
    try:
        from importlib.metadata import version
        h.update(version("numba").encode())
    except Exception:  # noqa: BLE001
        pass
    return h.hexdigest()[:16]


def cache_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("PTXC_CACHE_DIR"):
        dirs.append(Path(os.environ["PTXC_CACHE_DIR"]))
    dirs.append(HERE / "__pycache__")
    dirs.append(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ptxc")
    return dirs


def module_name() -> str:
    return f"_emu_core_{source_hash()}"


def find_built() -> Path | None:
    name = module_name()
    for d in cache_dirs():
        if d.is_dir():
            for path in d.glob(name + "*.so"):
                return path
    return None


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(module_name(), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run_grid


def build(verbose: bool = False) -> Path:
    """Compile core.run_grid ahead of time; returns the extension's path."""
    import warnings

    from numba.pycc import CC

    from . import core
    name = module_name()
    last_error = None
    for d in cache_dirs():
        try:
            d.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=d))
        except OSError as exc:
            last_error = exc
            continue
        try:
            cc = CC(name)
            cc.output_dir = str(tmp)
            cc.verbose = verbose
            cc.target_cpu = "host"
            cc.export("run_grid", SIGNATURE)(core.run_grid.py_func)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cc.compile()
            built = next(tmp.glob(name + "*.so"))
            final = d / built.name
            os.replace(built, final)           # atomic: a concurrent build just wins the race
            for stale in d.glob("_emu_core_*.so"):
                if not stale.name.startswith(name):
                    try:
                        stale.unlink()
                    except OSError:
                        pass
            return final
        finally:
            for leftover in tmp.rglob("*"):
                if leftover.is_file():
                    leftover.unlink()
            for leftover in sorted(tmp.rglob("*"), reverse=True):
                leftover.rmdir()
            tmp.rmdir()
    raise OSError(f"no writable cache directory for the emulator core: {last_error}")


@lru_cache(maxsize=None)
def run_grid():
    """The core's entry point: ahead-of-time compiled if possible, else jitted."""
    if os.environ.get("PTXC_EMU_JIT") != "1":
        path = find_built()
        if path is None:
            try:
                print("ptxc: building the emulator core (once, about a minute)...", file=sys.stderr)
                path = build()
            except Exception as exc:  # noqa: BLE001 - fall back to numba's JIT
                print(f"ptxc: could not build the emulator core ahead of time ({exc}); using numba's JIT",
                      file=sys.stderr)
                path = None
        if path is not None:
            try:
                return _load(path)
            except ImportError:
                pass
    from .core import run_grid as jitted
    return jitted


if __name__ == "__main__":
    print(build(verbose="-v" in sys.argv))
