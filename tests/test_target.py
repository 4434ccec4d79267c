"""The target records (ptxc/sass/target.py) against nvcc's cubins, and the targets end to end.

RUN: pytest tests/test_target.py
CHECK (oracle): for every record, nvcc's cubin of testsuite/vadd.cu has the record's
e_flags, cuobjdump's `.headerflags`, its PARAM_CBANK base, and its code reads the record's
descriptor slot (`ULDC.64 UR4, c[0x0][...]`) and stack base; a sample of nvcc's cubins
for every target (module variables, dynamic shared memory, a stack frame, a double pool)
read and written again by ptxc's writer is byte-identical (the layout, the .nv.info
records and flags are the record's); where the target has an instruction table, `ptxc
dump` of nvcc's cubins prints what cuobjdump prints, ptxc's vadd is nvcc's word for word
(control codes included) where ptxas writes the same instructions, and `ptxc check`
agrees on a few testsuite files.
CHECK: no module but ptxc/sass/target.py keeps a dictionary keyed by target name.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.cubin.reader import read_cubin
from ptxc.cubin.writer import write_cubin
from ptxc.sass.target import TARGETS, UnknownTarget, target, with_backend, with_table

ROOT = Path(__file__).resolve().parent.parent
TESTSUITE = ROOT / "testsuite"
NAMES = list(TARGETS)
# targets with a learned instruction table (a target record comes first, its table-learning run after)
WITH_TABLE = list(with_table())
# module variables and a warp-wide instruction (fe_constant_mem), a straight-line stack frame
# (isa_local), an empty dynamic window (fe_shared_dynamic), a kernel's own bank 2 (collatz),
# static shared memory (reduce_shared)
SAMPLE = ["vadd", "fe_constant_mem", "isa_local", "fe_shared_dynamic", "collatz", "reduce_shared"]


@pytest.fixture(scope="module")
def nvcc_cubins(tmp_path_factory):
    out = tmp_path_factory.mktemp("nvcc_targets")
    cache = {}

    def get(stem: str, arch: str) -> Path:
        if (stem, arch) not in cache:
            cache[stem, arch] = oracle.nvcc_cubin(TESTSUITE / f"{stem}.cu", out / f"{stem}.{arch}.cubin", arch)
        return cache[stem, arch]
    return get


def test_target_lookup():
    assert target("sm_89").sm == 89 and target("sm_90").param_base == 0x210
    assert all(t.name == f"sm_{t.sm}" and t.e_flags >> 8 & 0xFF == t.sm for t in TARGETS.values())
    with pytest.raises(UnknownTarget, match="sm_75"):
        target("sm_75")


def test_no_other_module_keys_a_dict_by_target():
    """The class of bug this record removes: a per-architecture dict outside it."""
    pattern = re.compile(r"""\{\s*["']sm_\d\d["']\s*:|ARCHS\s*=\s*\{""")
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "ptxc").rglob("*.py")
                 if p.name != "target.py" and pattern.search(p.read_text())]
    assert offenders == []


@pytest.mark.oracle
@pytest.mark.parametrize("arch", NAMES)
def test_record_matches_nvcc(nvcc_cubins, arch):
    record = target(arch)
    path = nvcc_cubins("vadd", arch)
    cubin = read_cubin(path.read_bytes())
    assert cubin.header.flags == record.e_flags
    assert cubin.kernels[0].param_base == record.param_base
    sass = oracle.cuobjdump_sass(path)
    assert f".headerflags\t{record.header_flags}" in sass
    assert f"ULDC.64 UR4, c[0x0][{record.descriptor:#x}]" in sass
    assert re.search(rf"(MOV|LDC) R1, c\[0x0\]\[{record.bank0.stack_base:#x}\]", sass)
    assert ("desc[UR4]" in sass) == record.prints_descriptor
    pooled = read_cubin(nvcc_cubins("collatz", arch).read_bytes())   # doubles from the kernel's bank 2?
    assert any(k.constant_pool for k in pooled.kernels) == record.double_pool


@pytest.mark.oracle
@pytest.mark.parametrize("arch", NAMES)
@pytest.mark.parametrize("stem", SAMPLE)
def test_nvcc_cubin_rewritten_byte_for_byte(nvcc_cubins, arch, stem):
    theirs = nvcc_cubins(stem, arch).read_bytes()
    cubin = read_cubin(theirs)
    assert cubin.arch == arch
    ours = write_cubin(cubin.kernels, arch=cubin.arch, variables=cubin.variables,
                       virtual_arch=cubin.virtual_arch, **cubin.tool_strings())
    assert ours == theirs


WITH_BACKEND = list(with_backend())   # a table, a latency table and math sequences learned
DUMP_SAMPLE = ["vadd", "saxpy", "reduce_shared", "isa_control", "fe_math_float"]
# fe_conversions: int -> f32 is I2FP on Ada and Hopper, I2F on Ampere (whose table has no
# I2FP: lowering asks the table, an internal-limit error before)
CHECK_SAMPLE = ["saxpy", "reduce_shared", "control_flow", "fe_conversions"]


@pytest.mark.oracle
@pytest.mark.parametrize("arch", WITH_TABLE)
@pytest.mark.parametrize("stem", DUMP_SAMPLE)
def test_dump_of_nvcc_cubin_equals_cuobjdump(nvcc_cubins, arch, stem):
    path = nvcc_cubins(stem, arch)
    proc = subprocess.run([sys.executable, "-m", "ptxc", "dump", str(path)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == oracle.cuobjdump_sass(path).splitlines()


@pytest.mark.oracle
@pytest.mark.parametrize("arch", WITH_BACKEND)
def test_vadd_cubin_and_sass(nvcc_cubins, arch, tmp_path):
    """`ptxc x.cu -arch=sm_NN -o x.cubin` and `--emit=sass`: the cubin is the target's, and
    where ptxas writes sm_89's instructions for vadd (sm_86) ptxc's words, control codes
    included, are nvcc's."""
    out = tmp_path / "vadd.cubin"
    proc = subprocess.run([sys.executable, "-m", "ptxc", str(TESTSUITE / "vadd.cu"), f"-arch={arch}", "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert read_cubin(out.read_bytes()).header.flags == target(arch).e_flags
    listing = subprocess.run([sys.executable, "-m", "ptxc", str(TESTSUITE / "vadd.cu"), f"-arch={arch}", "--emit=sass"],
                             capture_output=True, text=True, cwd=ROOT)
    assert listing.returncode == 0 and f"code for {arch}" in listing.stdout
    ours = oracle.cuobjdump_sass(out)
    theirs = oracle.cuobjdump_sass(nvcc_cubins("vadd", arch))
    if theirs.replace(arch, "sm_89").replace(f"SM{target(arch).sm}", "SM89") == \
            oracle.cuobjdump_sass(nvcc_cubins("vadd", "sm_89")):
        assert ours.splitlines() == theirs.splitlines()


@pytest.mark.oracle
@pytest.mark.parametrize("arch", WITH_BACKEND)
@pytest.mark.parametrize("stem", CHECK_SAMPLE)
def test_check_on_emulator(arch, stem):
    """`ptxc check -arch=sm_NN`: ptxc's cubin and nvcc's give the same buffers on the emulator."""
    proc = subprocess.run([sys.executable, "-m", "ptxc", "check", str(TESTSUITE / f"{stem}.cu"), f"-arch={arch}"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
