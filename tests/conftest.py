"""Shared fixtures: the oracle marker skips locally when NVIDIA's tools are absent
(.ci/run refuses any skip), and paths into testsuite/."""
from __future__ import annotations

from pathlib import Path

import pytest

from ptxc import oracle

ROOT = Path(__file__).resolve().parent.parent
TESTSUITE = ROOT / "testsuite"


def pytest_collection_modifyitems(config, items):
    if oracle.available():
        return
    skip = pytest.mark.skip(reason="NVIDIA's tools not installed (pip install 'ptxc[oracle]')")
    for item in items:
        if "oracle" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def seed_vadd() -> Path:
    return TESTSUITE / "vadd.cu"
