"""The seed end to end: `ptxc vadd.cu -o vadd.cubin` gives the SASS nvcc gives.

Every expectation here comes from NVIDIA's tools run at test time: nvcc's cubin of
the same file, cuobjdump's and nvdisasm's reading of ptxc's cubin, ptxas's verdict
on ptxc's PTX.
"""
from __future__ import annotations

import difflib
import re
import subprocess
import sys

import pytest

from ptxc import oracle

from conftest import TESTSUITE

pytestmark = pytest.mark.oracle
SASS_LINE = re.compile(r"^\s+/\*([0-9a-f]{4})\*/\s+(.*?)\s*/\* (0x[0-9a-f]{16}) \*/\s*$")
HEX_LINE = re.compile(r"^\s+/\* (0x[0-9a-f]{16}) \*/\s*$")


def ptxc(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxc", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def sass_rows(listing: str) -> list[tuple[str, str, str]]:
    """(text, low word, high word) per instruction of a cuobjdump -sass listing."""
    rows, lines = [], listing.splitlines()
    for k, line in enumerate(lines):
        m = SASS_LINE.match(line)
        if m:
            high = HEX_LINE.match(lines[k + 1]).group(1)
            rows.append((re.sub(r"\s+", " ", m.group(2)), m.group(3), high))
    return rows


@pytest.fixture(scope="module")
def cubins(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("seed")
    ours, theirs = tmp / "ours.cubin", tmp / "nvcc.cubin"
    result = ptxc(TESTSUITE / "vadd.cu", "-o", ours)
    assert result.returncode == 0, result.stderr
    oracle.nvcc_cubin(TESTSUITE / "vadd.cu", theirs)
    return ours, theirs


def test_sass_matches_nvcc_instruction_for_instruction(cubins):
    ours, theirs = (sass_rows(oracle.cuobjdump_sass(p)) for p in cubins)
    real = lambda rows: [r for r in rows if not r[0].startswith("NOP")]
    assert len(real(theirs)) == 17  # 16 instructions + the BRA-to-self
    diff = "\n".join(difflib.unified_diff([" | ".join(r) for r in theirs], [" | ".join(r) for r in ours],
                                          "nvcc", "ptxc", lineterm=""))
    assert ours == theirs, "SASS differs from nvcc's:\n" + diff


def test_text_bytes_identical(cubins):
    from elftools.elf.elffile import ELFFile
    texts = []
    for path in cubins:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            texts.append(next(s.data() for s in elf.iter_sections() if s.name.startswith(".text.")))
    assert texts[0] == texts[1]


def test_elf_reads_cleanly_with_nvcc_sections_and_records(cubins):
    ours, theirs = cubins
    ours_elf = oracle.run("cuobjdump", "-elf", ours)
    assert ours_elf.stderr == ""
    disasm = oracle.run("nvdisasm", ours)
    assert disasm.stderr == ""
    sections = lambda text: re.findall(r"^\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+.*?(\.\S+)$", text, re.M)
    attrs = lambda text: re.findall(r"Attribute:\s+(\S+)", text)
    theirs_elf = oracle.cuobjdump_elf(theirs)
    assert sections(ours_elf.stdout) == sections(theirs_elf)
    assert attrs(ours_elf.stdout) == attrs(theirs_elf)


def test_ptxas_accepts_ptxc_ptx(tmp_path):
    result = ptxc(TESTSUITE / "vadd.cu", "-ptx", "-o", tmp_path / "vadd.ptx")
    assert result.returncode == 0, result.stderr
    oracle.ptxas(tmp_path / "vadd.ptx", tmp_path / "vadd.cubin")


def test_nvcc_ptx_through_ptxc_gives_the_same_sass(tmp_path, cubins):
    oracle.nvcc_ptx(TESTSUITE / "vadd.cu", tmp_path / "vadd.ptx")
    result = ptxc(tmp_path / "vadd.ptx", "-o", tmp_path / "x.cubin")
    assert result.returncode == 0, result.stderr
    assert sass_rows(oracle.cuobjdump_sass(tmp_path / "x.cubin")) == sass_rows(oracle.cuobjdump_sass(cubins[0]))


def test_without_imad_wide_fusion_the_code_is_longer_and_still_reads(tmp_path, cubins):
    result = ptxc(TESTSUITE / "vadd.cu", "--disable-pass=fuse_imad_wide", "-o", tmp_path / "nofuse.cubin")
    assert result.returncode == 0, result.stderr
    listing = oracle.run("cuobjdump", "-sass", tmp_path / "nofuse.cubin")
    assert listing.stderr == ""
    rows = [r[0] for r in sass_rows(listing.stdout) if not r[0].startswith("NOP")]
    fused = [r[0] for r in sass_rows(oracle.cuobjdump_sass(cubins[0])) if not r[0].startswith("NOP")]
    assert len(rows) > len(fused)
    assert any(r.startswith("IADD3.X") for r in rows)
    assert sum(r.startswith("IMAD.WIDE") for r in rows) < sum(r.startswith("IMAD.WIDE") for r in fused)
