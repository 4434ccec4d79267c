"""`ptxc check`: both cubins run on the emulator with the same inputs, every difference
reported (launch, buffer, index, both values), exit 1 on any."""
from __future__ import annotations

from pathlib import Path

import pytest

import ptxc.cli.images as emu_cli
from ptxc import oracle
from ptxc.cli.check import check_command

pytestmark = pytest.mark.oracle
needs_nvcc = pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")
TESTSUITE = Path(__file__).resolve().parent.parent / "testsuite"


@needs_nvcc
@pytest.mark.parametrize("name", ["saxpy", "stencil_1d", "reduce_shared", "histogram"])
def test_check_agrees(name, capsys):
    status = check_command([str(TESTSUITE / f"{name}.cu")])
    out = capsys.readouterr().out
    if "ptxc cannot compile" in out:
        pytest.xfail(f"ptxc's backend cannot compile {name} in this tree")
    assert status == 0, out
    assert ": ok (" in out


@needs_nvcc
def test_check_reports_every_difference(tmp_path, monkeypatch, capsys):
    """Stand a racy reduction (no __syncthreads in the loop) in for ptxc's cubin: the
    report names the launch, the buffer, each index and both values."""
    good = (TESTSUITE / "reduce_shared.cu").read_text()
    racy_path = tmp_path / "racy.cu"
    racy_path.write_text(good.replace("        __syncthreads();\n    }", "    }"))
    racy_cubin = emu_cli.nvcc_cubin(str(racy_path))
    monkeypatch.setattr(emu_cli, "ptxc_cubin", lambda module, path, arch="sm_89": (racy_cubin, {}))
    status = check_command([str(TESTSUITE / "reduce_shared.cu"), "--limit=3"])
    out = capsys.readouterr().out
    assert status == 1
    assert "block_reduce (line 2): buffer 'out': 64 of 64 elements differ" in out
    lines = [l for l in out.splitlines() if l.startswith("    [")]
    assert len(lines) == 3 and "ptxc" in lines[0] and "nvcc" in lines[0] and "(0x" in lines[0]


@needs_nvcc
def test_check_says_when_ptxc_cannot_compile(monkeypatch, capsys):
    monkeypatch.setattr(emu_cli, "ptxc_cubin",
                        lambda module, path, arch="sm_89": (None, {"_Z5saxpyifPKfPf": "no rule for ld.global.nc"}))
    status = check_command([str(TESTSUITE / "saxpy.cu")])
    out = capsys.readouterr().out
    assert status == 1
    assert "ptxc cannot compile kernel 'saxpy' yet: no rule for ld.global.nc" in out
    assert "saxpy (line 3): not checked" in out


def test_check_needs_launch_lines(tmp_path, capsys):
    path = tmp_path / "none.cu"
    path.write_text("__global__ void k(int* p) { p[0] = 1; }\n")
    assert check_command([str(path)]) == 1
    assert "no // LAUNCH: lines" in capsys.readouterr().err


LAUNCH_FILES = sorted(p.stem for p in TESTSUITE.glob("*.cu") if "// LAUNCH:" in p.read_text())


@needs_nvcc
@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_check_passes_wherever_ptxc_compiles(name, capsys):
    """`ptxc check` over the whole testsuite: every launch whose kernel ptxc compiles gives
    nvcc's results on the emulator (the others are reported as not checked, and fail
    the command, but are not differences)."""
    try:
        check_command([str(TESTSUITE / f"{name}.cu")])
    except SystemExit as exc:           # argparse or a CompileError path that exits
        pytest.fail(f"ptxc check exited: {exc}")
    out = capsys.readouterr()
    text = out.out + out.err
    if "unsupported feature" in text and ": ok (" not in text:
        pytest.xfail(f"ptxc's frontend cannot compile {name}: " + text.strip().splitlines()[0])
    launches = [l for l in text.splitlines() if " (line " in l]
    assert launches, text
    for line in launches:
        assert ": ok (" in line or "not checked: ptxc has no code for it" in line, text


@needs_nvcc
def test_check_goes_on_past_a_kernel_ptxc_lacks(tmp_path, monkeypatch, capsys):
    """Regression: in a file of several kernels, one that ptxc cannot compile made the
    other launches fail with "no kernel ..." (the runner looked every kernel up)."""
    source = (TESTSUITE / "isa_bits.cu").read_text()
    lacking = tmp_path / "isa_bits.cu"          # the same kernels but gray_code, renamed away
    lacking.write_text(source.replace("void gray_code(", "void gray_code_elsewhere("))
    ours = emu_cli.nvcc_cubin(str(lacking))
    monkeypatch.setattr(emu_cli, "ptxc_cubin", lambda module, path, arch="sm_89": (ours, {"_Z9gray_codePjPhi": "x"}))
    status = check_command([str(TESTSUITE / "isa_bits.cu")])
    out = capsys.readouterr().out
    assert status == 1
    assert "gray_code (line 6): not checked" in out
    assert out.count(": ok (") == source.count("// LAUNCH:") - 1, out
