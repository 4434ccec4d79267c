"""Start-up (issue 17): each command imports only the stages it uses, the caches give
back exactly what a fresh build gives, and the Python API matches the command."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VADD = ROOT / "testsuite" / "vadd.cu"
PTX_FILE = ROOT / "testsuite" / "lower" / "fold_constants.ptx"


def _modules_after(code: str, tmp_path: Path) -> set:
    """sys.modules of a fresh interpreter after running `code` (which may use TMP)."""
    script = f"import sys\nTMP = {str(tmp_path)!r}\n{code}\nprint('\\n'.join(sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PTXC_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    return set(out.stdout.split())


def _compile_cmd(*argv) -> str:
    return f"from ptxc.cli import main\nassert main({[str(a) for a in argv]!r}) == 0"


def test_import_ptxc_imports_nothing_else(tmp_path):
    mods = _modules_after("import ptxc", tmp_path)
    assert {m for m in mods if m.startswith("ptxc")} == {"ptxc"}


def test_ptx_input_loads_no_frontend(tmp_path):
    mods = _modules_after(_compile_cmd(PTX_FILE, "-o", tmp_path / "x.cubin"), tmp_path)
    assert "ptxc.lower.pipeline" in mods          # (it did compile)
    frontend = {m for m in mods if m.startswith("ptxc.frontend")} - {"ptxc.frontend", "ptxc.frontend.preprocess",
                                                                      "ptxc.frontend.header_macros"}
    assert frontend == set()
    assert not any(m.startswith(("numba", "ptxc.emu", "ptxc.host")) for m in mods)


def test_emit_ptx_loads_no_lowering(tmp_path):
    mods = _modules_after(_compile_cmd(VADD, "-ptx", "-o", tmp_path / "x.ptx"), tmp_path)
    assert "ptxc.frontend.codegen" in mods
    assert not any(m.startswith(("ptxc.lower", "ptxc.cubin", "numba")) for m in mods)
    # of sass, only the target records (-arch's names; __CUDA_ARCH__)
    assert {m for m in mods if m.startswith("ptxc.sass")} <= {"ptxc.sass", "ptxc.sass.target"}


def test_dump_loads_no_lowering_or_frontend(tmp_path):
    cubin = tmp_path / "x.cubin"
    subprocess.run([sys.executable, "-m", "ptxc", str(PTX_FILE), "-o", str(cubin)], check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT), "PTXC_CACHE_DIR": str(tmp_path / "cache")})
    mods = _modules_after("from ptxc.cli import main\nimport contextlib, io\n"
                          f"with contextlib.redirect_stdout(io.StringIO()): assert main(['dump', {str(cubin)!r}]) == 0",
                          tmp_path)
    assert not any(m.startswith(("ptxc.lower", "ptxc.frontend.", "numba", "lark")) for m in mods)


# ---- the caches ---------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_lazy_table_is_the_eager_table(arch, tmp_path, monkeypatch):
    """Every index of the cached, lazily built table holds the same forms in the same
    order as the table built from the JSON (twice: building the cache, then reading it)."""
    from ptxc.sass import table as T
    monkeypatch.setenv("PTXC_CACHE_DIR", str(tmp_path))
    data = json.loads((T.HERE / f"{arch}.json").read_text())
    eager = T.Table(data["arch"], [T._form(f) for f in data["forms"]], data["control"])
    for _ in range(2):
        lazy = T._lazy_table(T.HERE / f"{arch}.json")
        assert list(lazy.by_key) == list(eager.by_key)   # keys first: no form built yet
        for name in ("by_opcode", "by_op", "by_key"):
            got, want = getattr(lazy, name), getattr(eager, name)
            assert list(got) == list(want)
            assert all(got[k] == want[k] for k in want), name
        assert list(lazy.forms) == list(eager.forms) and lazy.control == eager.control
    assert len(list(tmp_path.iterdir())) == 1


def test_cache_rebuilds_when_a_source_changes(tmp_path, monkeypatch):
    from ptxc.cache import cached
    monkeypatch.setenv("PTXC_CACHE_DIR", str(tmp_path / "cache"))
    source, builds = tmp_path / "t.json", []

    def build():
        builds.append(1)
        return json.loads(source.read_text())
    source.write_text('{"a": 1}')
    assert cached("t", [source], build) == {"a": 1} and cached("t", [source], build) == {"a": 1}
    assert len(builds) == 1
    source.write_text('{"a": 2}')
    assert cached("t", [source], build) == {"a": 2} and len(builds) == 2


def test_cached_regex_programs_equal_pythons(tmp_path, monkeypatch):
    """A pattern served from the regex cache is equal (Pattern.__eq__ compares flags,
    pattern and compiled code) to the one re compiles: every pattern a compile uses."""
    from ptxc import regex_cache as R
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PTXC_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-m", "ptxc", str(VADD), "-o", str(tmp_path / "x.cubin")], check=True, env=env)
    monkeypatch.setenv("PTXC_CACHE_DIR", str(tmp_path))
    import marshal
    entries = marshal.loads(R._path().read_bytes())
    assert len(entries) > 50
    for (pattern, flags), args in entries.items():
        assert R._sre.compile(pattern, *args) == re._compiler.compile(pattern, flags), pattern
    for pattern in [r"(?P<a>x+)(y)?\1", r"(?i)[a-z]{2,5}$", r"\.(?!32)[0-9A-F]+", b"\\x00+"]:
        assert R._sre.compile(pattern, *R.program(pattern, 0)) == re._compiler.compile(pattern, 0)


# ---- the Python API ---------------------------------------------------------------------

@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("source", [VADD, PTX_FILE], ids=["cu", "ptx"])
def test_api_compile_matches_the_command(source, arch, tmp_path):
    import ptxc
    from ptxc.cli import main
    out = tmp_path / "x.cubin"
    assert main([str(source), f"-arch={arch}", "-o", str(out)]) == 0
    result = ptxc.compile(source, arch=arch)
    assert result.ok and result.cubin == out.read_bytes()
    assert main([str(source), f"-arch={arch}", "--emit=sass", "-o", str(tmp_path / "x.sass")]) == 0
    assert result.sass == (tmp_path / "x.sass").read_text()
    assert result.kernels and all(k.registers > 0 for k in result.kernels)
    if source.suffix == ".cu":
        assert main([str(source), f"-arch={arch}", "-ptx", "-o", str(tmp_path / "x.ptx")]) == 0
        assert ptxc.compile(source.read_text(), arch=arch, emit="ptx").ptx == (tmp_path / "x.ptx").read_text()


def test_api_resources_from_the_kernel(tmp_path):
    import ptxc
    from ptxc.cubin.reader import read_cubin
    result = ptxc.compile(ROOT / "testsuite" / "fe_shared_static.cu")
    regs = {k.name: k.regcount for k in read_cubin(result.cubin).kernels}
    assert {k.name: k.registers for k in result.kernels} == regs
    assert any(k.shared > 0 for k in result.kernels)


def test_api_errors_raise_or_return():
    import ptxc
    from ptxc.diagnostics import CompileError
    bad = "__global__ void k(int *p) { p[0] = ; }\n"
    with pytest.raises(CompileError):
        ptxc.compile(bad)
    result = ptxc.compile(bad, check=False, filename="bad.cu")
    assert not result.ok and result.cubin is None and result.diagnostics
    assert result.error.format().startswith("bad.cu:1:")
    assert not ptxc.compile(VADD, arch="sm_20", check=False).ok
