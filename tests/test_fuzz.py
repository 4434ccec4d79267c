"""A few fixed seeds of scripts/fuzz_kernels.py, so that what it once found stays found:
random kernels whose every output must equal nvcc's (on the emulator, ptxc's own cubin
and ptxas's cubin of ptxc's PTX), and mutated input that must give a diagnostic, never
an internal error.  Longer runs: `python scripts/fuzz_kernels.py --help`."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from ptxc import oracle

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import fuzz_kernels  # noqa: E402

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("style, seed", [("expressions", s) for s in range(4)] +
                         [("statements", s) for s in range(3)])
def test_random_kernel_matches_nvcc(style, seed, tmp_path):
    """The bugs such kernels found have tests of their own (fuzz_kernels' docstring
    lists them); these seeds keep the generator and the comparison working."""
    rng = random.Random(seed)
    source = (fuzz_kernels.Expressions(rng) if style == "expressions" else fuzz_kernels.Statements(rng)).kernel()
    problems = fuzz_kernels.compare(fuzz_kernels.outputs(source, tmp_path, "sm_89"), 6)
    assert not problems, "\n".join(problems) + "\n" + source


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("seed", [1, 4])
def test_random_operands_match_nvcc(arch, seed, tmp_path):
    """--style operands: full-range values of every integer type, kernel parameters and
    uniform values as operands, division by each.  Seed 1 was ptxc's u32 quotient by a
    parameter (issue 16; wrong on sm_89), seed 4 a load whose wait the 4-round cap of
    set_control_codes lost (a scoreboard hazard).  ptxas's cubin of ptxc's PTX is
    compared too where the emulator runs it (its table lacks some of ptxas's words)."""
    source = fuzz_kernels.Operands(random.Random(seed)).kernel()
    problems = fuzz_kernels.compare(fuzz_kernels.outputs(source, tmp_path, arch), 6)
    problems = [p for p in problems if not (p.startswith("ptxc-ptx:") and "does not run" in p)]
    assert not problems, "\n".join(problems) + "\n" + source


@pytest.mark.parametrize("kind", ["ptx", "cu"])
def test_mutated_input_is_a_diagnostic(kind, tmp_path, capsys):
    class Args:
        count, seed, out = 40, 5, str(tmp_path / "found")
    Args.kind = kind
    assert fuzz_kernels.mutate(Args) == 0, capsys.readouterr().out
