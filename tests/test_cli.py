"""The command line: options, outputs and errors as a user meets them."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import TESTSUITE


def ptxc(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxc", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_emit_ptx_spellings(tmp_path):
    a, b = tmp_path / "a.ptx", tmp_path / "b.ptx"
    assert ptxc(TESTSUITE / "vadd.cu", "--emit=ptx", "-o", a).returncode == 0
    assert ptxc(TESTSUITE / "vadd.cu", "-ptx", "-o", b).returncode == 0
    assert a.read_text() == b.read_text()
    assert ".entry _Z4vaddPKfS0_Pfi(" in a.read_text()


def test_emit_cubin_spellings_and_default_output(tmp_path):
    (tmp_path / "vadd.cu").write_text((TESTSUITE / "vadd.cu").read_text())
    assert ptxc("vadd.cu", "-cubin", cwd=tmp_path).returncode == 0
    assert (tmp_path / "vadd.cubin").read_bytes()[:4] == b"\x7fELF"
    assert ptxc("vadd.cu", "--emit=cubin", "-arch=sm_89", "-o", "b.cubin", cwd=tmp_path).returncode == 0
    assert (tmp_path / "b.cubin").read_bytes() == (tmp_path / "vadd.cubin").read_bytes()


def test_arch_with_a_space_and_sm90_ptx(tmp_path):
    assert ptxc(TESTSUITE / "vadd.cu", "-arch", "sm_89", "-o", tmp_path / "a.cubin").returncode == 0
    result = ptxc(TESTSUITE / "vadd.cu", "-arch=sm_90", "-ptx", "--ptx-version=9.0", "-o", tmp_path / "a.ptx")
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "a.ptx").read_text()
    assert ".target sm_90" in text and ".version 9.0" in text


def test_emit_sass_prints_the_listing():
    result = ptxc(TESTSUITE / "vadd.cu", "--emit=sass")
    assert result.returncode == 0, result.stderr
    assert "Function : _Z4vaddPKfS0_Pfi" in result.stdout
    assert "IMAD.WIDE" in result.stdout and "@P0 EXIT" in result.stdout


def test_output_permissions_follow_the_umask(tmp_path):
    """Regression: outputs went through mkstemp and stayed 0600."""
    out = tmp_path / "x.cubin"
    assert ptxc(TESTSUITE / "vadd.cu", "-o", out).returncode == 0
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


def test_keep_writes_every_intermediate(tmp_path):
    result = ptxc(TESTSUITE / "vadd.cu", "--keep", "-o", tmp_path / "vadd.cubin")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vadd.cubin", "vadd.ptx", "vadd.sass"]


def test_print_after_one_pass_and_all():
    one = ptxc(TESTSUITE / "vadd.cu", "--emit=sass", "--print-after=fuse_imad_wide")
    assert one.returncode == 0, one.stderr
    assert one.stderr.count("SASS IR after") == 1 and "after fuse_imad_wide" in one.stderr
    every = ptxc(TESTSUITE / "vadd.cu", "--emit=sass", "--print-after-all")
    from ptxc.lower.pipeline import PASS_NAMES
    assert every.stderr.count("SASS IR after") + every.stderr.count("PTX after") == len(PASS_NAMES)


def test_disable_pass_changes_the_code():
    plain = ptxc(TESTSUITE / "vadd.cu", "--emit=sass").stdout
    unfused = ptxc(TESTSUITE / "vadd.cu", "--emit=sass", "--disable-pass=fuse_imad_wide").stdout
    assert "IADD3.X" in unfused and "IADD3.X" not in plain


@pytest.mark.parametrize("args, message", [
    (["--disable-pass=nosuch"], "unknown pass 'nosuch'"),
    (["--disable-pass=assign_regs"], "is required"),
    (["--print-after=nosuch"], "unknown pass 'nosuch'"),
    (["-arch=sm_75"], "unknown -arch 'sm_75'"),
])
def test_bad_options(args, message, tmp_path):
    result = ptxc(TESTSUITE / "vadd.cu", "-o", tmp_path / "x.cubin", *args)
    assert result.returncode == 1 and message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "x.cubin").exists()


def test_syntax_error_has_location_line_caret_and_no_output(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k(int* a) {\n    a[0] = 1\n}\n")
    result = ptxc(bad, "-o", tmp_path / "bad.cubin")
    assert result.returncode == 1
    first, source_line, caret = result.stderr.splitlines()[:3]
    assert first.startswith(f"{bad}:3:1: error:")
    assert source_line == "}" and caret == "^"
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "bad.cubin").exists()


def test_ptx_syntax_error(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 9.5\n.target sm_89\n.address_size 64\n.visible .entry k()\n{\n\tret\n}\n")
    result = ptxc(bad, "-o", tmp_path / "bad.cubin")
    assert result.returncode == 1
    assert result.stderr.startswith(f"{bad}:7:1: error:")
    assert not (tmp_path / "bad.cubin").exists()


def test_unsupported_ptx_instruction_is_named(tmp_path):
    src = tmp_path / "u.ptx"
    src.write_text(".version 9.5\n.target sm_89\n.address_size 64\n.visible .entry k()\n{\n"
                   "\t.reg .b32 %r<3>;\n\tpmevent 1;\n\tret;\n}\n")
    result = ptxc(src, "-o", tmp_path / "u.cubin")
    assert result.returncode == 1
    assert f"{src}:7:2: error: unsupported PTX instruction 'pmevent'" in result.stderr
    # regression: lowering errors printed no source line and caret
    assert result.stderr.splitlines()[1:3] == [" pmevent 1;", " ^"], result.stderr
    assert not (tmp_path / "u.cubin").exists()


def test_lowering_error_in_cuda_points_into_the_generated_ptx(tmp_path):
    """Regression: a .cu's lowering errors said `file.cu:0:0` (the frontend's PTX has no
    lines); the backend now reads that PTX as text, so the error names its line, shows
    it with a caret, and inline asm is lowered like any PTX."""
    src = tmp_path / "a.cu"
    src.write_text('__global__ void k(int* p) {\n'
                   '    int y;\n'
                   '    asm("pmevent 1;");\n'
                   '    asm("add.s32 %0, %1, 1;" : "=r"(y) : "r"(p[0]));\n'
                   '    p[1] = y;\n}\n')
    result = ptxc(src, "-o", tmp_path / "a.cubin")
    assert result.returncode == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{tmp_path / 'a.ptx'}:") and "unsupported PTX instruction 'pmevent'" in first, \
        result.stderr
    assert result.stderr.splitlines()[1].strip() == "pmevent 1;" and "^" in result.stderr.splitlines()[2]
    assert not (tmp_path / "a.cubin").exists()
    src.write_text(src.read_text().replace('    asm("pmevent 1;");\n', ""))
    assert ptxc(src, "-o", tmp_path / "a.cubin").returncode == 0


def test_missing_input():
    result = ptxc("does-not-exist.cu")
    assert result.returncode == 1 and "does-not-exist.cu': no such file" in result.stderr


def test_unwritable_output(tmp_path):
    result = ptxc(TESTSUITE / "vadd.cu", "-o", tmp_path / "no" / "such" / "dir" / "x.cubin")
    assert result.returncode == 1 and "cannot write" in result.stderr
    assert "Traceback" not in result.stderr


def test_compiling_does_not_import_numba(tmp_path):
    out = str(tmp_path / "x.cubin")
    code = ("import sys; from ptxc.cli import main; "
            f"assert main([{str(TESTSUITE / 'vadd.cu')!r}, '-o', {out!r}]) == 0; "
            "print('numba' in sys.modules or 'llvmlite' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip().endswith("False"), result.stderr
