"""Pass regression tests: each file in testsuite/lower/ holds its PTX input, its RUN
line and its CHECK lines (LLVM lit style), checked against ptxc's --print-after output.

These pin what ptxc's passes do and must not do; they are regression guards a person
has read, not proofs of correctness (those come from the oracle tests).
"""
from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from conftest import TESTSUITE
from filecheck import directives, filecheck

CASES = sorted((TESTSUITE / "lower").glob("*.ptx"))


def run_line(command: str, path) -> str:
    argv = [a.replace("%s", str(path)) for a in shlex.split(command)]
    assert argv[0] == "ptxc", "RUN lines start with ptxc"
    result = subprocess.run([sys.executable, "-m", "ptxc", *argv[1:]], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stderr + result.stdout  # pass dumps (stderr) come before the final listing


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_lit_file(path):
    runs, checks = directives(path.read_text())
    assert runs and checks, f"{path.name} needs RUN and CHECK lines"
    for command in runs:
        filecheck(run_line(command, path), checks)


def test_filecheck_can_fail():
    from filecheck import CheckFailure, Check
    with pytest.raises(CheckFailure):
        filecheck("a\nb\n", [Check("CHECK", "a", 1), Check("CHECK-NEXT", "c", 2)])
    with pytest.raises(CheckFailure):
        filecheck("a\nb\nc\n", [Check("CHECK", "a", 1), Check("CHECK-NOT", "b", 2), Check("CHECK", "c", 3)])
    filecheck("IMAD.WIDE R2, R6, R7, c[0x0][0x160]", [Check("CHECK", "IMAD.WIDE {{R[0-9]+}}, ", 1)])


BAD_PTX = """.version 9.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
\t.reg .b32 \t%r<3>;
\t.reg .b64 \t%rd<3>;
\tld.param.u64 \t%rd1, [k_param_0];
\tadd.s32 \t%r1, %rd1, 1;
\tpmevent \t1;
\tret;
}
"""


def test_bad_ptx_gets_file_line_col_diagnostics(tmp_path):
    """A register of the wrong type and an instruction ptxc does not lower are reported
    at their line and column, together, with no output file and exit status 1."""
    path = tmp_path / "bad.ptx"
    path.write_text(BAD_PTX)
    out = tmp_path / "bad.cubin"
    result = subprocess.run([sys.executable, "-m", "ptxc", str(path), "-o", str(out)], capture_output=True, text=True)
    assert result.returncode == 1
    assert f"{path}:9:2: error: operand %rd1 is .b64 but 'add.s32' works on .s32" in result.stderr
    assert f"{path}:10:2: error: unsupported PTX instruction 'pmevent'" in result.stderr
    assert "Traceback" not in result.stderr and not out.exists()
