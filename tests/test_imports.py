"""The package table (docs/pipeline.md) is what the code follows: every import in
ptxc/**.py, read with `ast`, is one the table allows its package, and compiling a .cu
file to a cubin loads no numba (nor the emulator, the launch harness, the host
interpreter or the GPU binding)."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ptxc"
EVERYONE = {"diagnostics", "cache", ""}        # "" is `ptxc` itself (its __version__)
ROW = re.compile(r"^\| `(?P<name>\w+)` \|[^|]*\| (?P<imports>.*) \|$")


def allowed_imports(text: str) -> dict:
    """{package: {package it may import: True if only lazily}} from the table's rows; the
    value None stands for 'all'."""
    table = {}
    for line in text.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        cell = m.group("imports").strip()
        if cell.startswith("all"):
            table[m.group("name")] = None
            continue
        table[m.group("name")] = {name: bool(lazy) for name, lazy in
                                  re.findall(r"`(\w+)`( \(lazily)?", cell)}
    return table


def package_of(path: Path) -> str:
    """The table's name for the package a module belongs to: ptxc/lower/x.py is `lower`,
    ptxc/driver.py is `driver`, ptxc/__init__.py is `` (the root)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return "" if parts in (("__init__",), ("__main__",)) else parts[0]


def imports(path: Path, text: str | None = None):
    """(ptxc package imported, lazily?, line) for every import of ptxc (and of numba) in
    the module at `path` (its text, or `text` as if it were there)."""
    tree = ast.parse(path.read_text() if text is None else text, str(path))
    here = list(path.relative_to(ROOT).parent.parts)          # ['ptxc', 'lower']
    lazy_lines = {node.lineno for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            # `from .. import oracle` names a module; `from .. import __version__` an attribute
            targets = [module] if node.module else \
                [module + [alias.name] if _is_module(module + [alias.name]) else module for alias in node.names]
        else:
            continue
        for target in targets:
            if target[0] == "numba":
                yield "numba", node.lineno in lazy_lines, node.lineno
            elif target[0] == "ptxc":
                yield (target[1] if len(target) > 1 else ""), node.lineno in lazy_lines, node.lineno


def _is_module(dotted: list) -> bool:
    where = ROOT.joinpath(*dotted)
    return where.with_suffix(".py").exists() or (where / "__init__.py").exists()


def test_every_import_follows_the_package_table():
    table = allowed_imports((ROOT / "docs" / "pipeline.md").read_text())
    assert {"frontend", "lower", "emu", "launch", "device", "cli"} <= set(table), "the table did not parse"
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        package = package_of(path)
        if package == "":
            continue                 # the root: `ptxc.compile` & co. through __getattr__, the command
        assert package in table, f"{path.relative_to(ROOT)}: package '{package}' has no row in docs/pipeline.md"
        allowed = table[package]
        for target, lazy, line in imports(path):
            if target == "numba":
                if package != "emu":
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: imports numba (only the emulator may)")
                continue
            if target == package or target in EVERYONE or allowed is None:
                continue
            if target not in allowed:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: `{package}` imports `{target}` "
                             "(docs/pipeline.md does not allow it)")
            elif allowed[target] and not lazy:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: `{package}` imports `{target}` at module "
                             "level (the table allows it only lazily, inside a function)")
    assert not wrong, "\n".join(wrong)


def test_the_checker_sees_relative_and_lazy_imports():
    """The reader itself: `from ..x import y` in ptxc/a/b.py is package x; inside a def it is lazy."""
    text = ("from ..lower import pipeline\nfrom . import core\nimport numba\n"
            "def f():\n    from ..frontend.sema import X\n    from .. import oracle, __version__\n")
    got = sorted(imports(PACKAGE / "emu" / "probe.py", text), key=lambda t: t[2])
    assert got == [("lower", False, 1), ("emu", False, 2), ("numba", False, 3), ("frontend", True, 5),
                   ("oracle", True, 6), ("", True, 6)]


def test_compiling_cuda_loads_no_emulator(tmp_path):
    """`ptxc vadd.cu -o vadd.cubin` in a fresh interpreter: no numba, and no stage that
    only running kernels needs."""
    script = ("import sys\nfrom ptxc.cli import main\n"
              f"assert main([{str(ROOT / 'testsuite' / 'vadd.cu')!r}, '-o', {str(tmp_path / 'v.cubin')!r}]) == 0\n"
              "print('\\n'.join(sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PTXC_CACHE_DIR": str(tmp_path / "cache")}
    mods = set(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                              check=True).stdout.split())
    assert "ptxc.cubin.writer" in mods            # (it did compile)
    loaded = {m for m in mods if m.split(".")[0] == "numba"
              or m.startswith(("ptxc.emu", "ptxc.launch", "ptxc.host", "ptxc.device", "ptxc.cli.run",
                               "ptxc.cli.check"))}
    assert loaded == set()
