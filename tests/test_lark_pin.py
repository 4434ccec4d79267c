"""ptxc/frontend/parser.py drives Lark's LALR tables itself, through Lark's private
internals, so Lark is pinned exactly (pyproject.toml).  These tests fail loudly, naming
what moved, when the installed Lark is another version or an internal the driver reads
is gone or has changed shape: upgrade Lark only together with the driver."""
from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _pinned() -> str:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    lark = [d for d in deps if re.match(r"lark\b", d)]
    assert len(lark) == 1 and re.fullmatch(r"lark==[\w.]+", lark[0]), \
        f"pyproject.toml must pin Lark exactly (lark==X.Y.Z), not {lark}"
    return lark[0].split("==")[1]


def test_installed_lark_is_the_pinned_one():
    assert version("lark") == _pinned(), (
        f"Lark {version('lark')} is installed but pyproject.toml pins {_pinned()}: the CUDA parser's driver "
        "(ptxc/frontend/parser.py) reads Lark's private internals; check them before changing the pin")


@pytest.fixture(scope="module")
def lark():
    from ptxc.frontend.parser import build_lark
    return build_lark()


def test_the_parse_table_the_driver_reads(lark):
    from lark.parsers.lalr_analysis import Shift
    inner = lark.parser.parser.parser           # Lark -> ParsingFrontend -> LALR_Parser -> _Parser
    table = inner.parse_table
    assert "start" in table.start_states and "start" in table.end_states
    assert isinstance(table.states, dict) and table.states
    actions = [entry for row in table.states.values() for entry in row.values()]
    assert all(isinstance(entry, tuple) and len(entry) == 2 for entry in actions)
    shifts = [arg for action, arg in actions if action is Shift]
    reduces = [arg for action, arg in actions if action is not Shift]
    assert shifts and all(isinstance(arg, int) for arg in shifts), "a Shift's argument is the next state"
    for rule in reduces[:50]:
        assert isinstance(rule.expansion, (list, tuple)) and isinstance(rule.origin.name, str)
        assert rule in inner.callbacks, "callbacks are keyed by rule"


def test_the_callbacks_the_driver_rewrites(lark):
    """Every callback is one of the kinds parser._direct_callback knows, with the fields it reads."""
    inner = lark.parser.parser.parser
    kinds = {}
    for rule, callback in inner.callbacks.items():
        kind = type(callback).__name__
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind in ("ChildFilterLALR", "ChildFilterLALR_NoPlaceholders"):
            assert all(isinstance(entry, tuple) and len(entry) >= 2 for entry in callback.to_include)
            assert hasattr(callback, "node_builder")
        elif kind == "ExpandSingleChild":
            assert hasattr(callback, "node_builder")
        else:
            assert callable(callback), kind
    assert kinds.get("ChildFilterLALR", 0) + kinds.get("ChildFilterLALR_NoPlaceholders", 0) > 0, kinds
    assert "ExpandSingleChild" in kinds, kinds


def test_the_terminals_the_lexer_reads(lark):
    kinds = {type(term.pattern).__name__ for term in lark.terminals}
    assert kinds <= {"PatternStr", "PatternRE"}, kinds
    assert all(isinstance(term.name, str) and isinstance(term.pattern.value, str) for term in lark.terminals)


def test_the_driver_builds_and_parses(lark):
    from ptxc.frontend.parser import Parser
    unit = Parser(lark).parse("__global__ void k(float *a, int n) { if (n) a[0] = 1.0f; }\n")
    assert type(unit).__name__ == "TranslationUnit"
