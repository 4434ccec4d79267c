"""The random campaign's machinery on one small batch (scripts/campaign.py, docs/campaign.md).

RUN: pytest tests/test_campaign.py
CHECK (oracle): one .cu file of six generated kernels (one per style, renamed and batched as
the campaign does) goes through ptxc and nvcc; every word of ptxc's cubin is read by
cuobjdump as `ptxc dump` prints it, both cubins run every kernel on the emulator and the
buffers are nvcc's.  The full campaign (thousands of kernels per target) is a script run,
not a test.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def campaign():
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("campaign", ROOT / "scripts" / "campaign.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_batched_kernels_have_their_own_names():
    """Renaming keeps kernels, helpers and LAUNCH buffers of a batch apart (a shared
    buffer name would carry one kernel's output into the next launch)."""
    c = campaign()
    styles = list(c.STYLES)
    text = "".join(c.rename(c.kernel_source(n, 0, styles)[1], n) for n in range(len(styles)))
    from ptxc.launch.spec import parse_file
    launches = parse_file(text, "batch.cu")
    assert [l.kernel for l in launches] == [f"k{n}" for n in range(len(styles))]
    names = [item.name for l in launches for item in l.items]
    assert len(names) == len(set(names))
    assert "__global__ void k0(" in text and "h0(" not in text


@pytest.mark.oracle
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_one_batch_checks_clean(arch):
    c = campaign()
    styles = list(c.STYLES)
    # kernels 6..11: one per style, none of them needing a form the tables lack yet
    result = c.check_batch((6, len(styles), 0, styles, arch))
    assert result["kernels"] == len(styles)
    assert not result["findings"], result["findings"]
