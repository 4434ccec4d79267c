"""The kernels of testsuite/headers/ (issue 15's intrinsics and headers): for sm_89 and
sm_90, NVIDIA's ptxas accepts ptxc's PTX, and its cubin gives nvcc's cubin's buffers on
the emulator, LAUNCH line by LAUNCH line.  Only the frontend is under test: these files
use PTX whose SASS forms the instruction tables lack yet (`bfe` with variable operands:
SGXT/BMSK R, R, R; NANOSLEEP of a register; issue 16), so they live outside testsuite/'s
top level, which every backend test globs.  (fe_atomics_scoped and fe_ldg_vector moved
there once ptxc's backend lowered them.)

Device printf: ptxc's vprintf call against nvcc's (the same buffer layout and size).
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.frontend import compile_cuda
from ptxc.ptx.printer import print_module

from conftest import TESTSUITE

pytestmark = pytest.mark.oracle
FILES = sorted(p.name for p in (TESTSUITE / "headers").glob("*.cu") if "// LAUNCH:" in p.read_text())


def instructions(ptx: str) -> int:
    return sum(1 for line in ptx.splitlines()
               if line.startswith("\t") and not line.startswith(("\t//", "\t.", "\t}", "\t{")))


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("name", FILES)
def test_ptxc_ptx_gives_nvccs_buffers(name, arch):
    from ptxc.launch.spec import parse_file
    from ptxc.launch import differences, run_launches
    path = TESTSUITE / "headers" / name
    module, _ = compile_cuda(path.read_text(), str(path), arch=arch)
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / "ptxc.ptx"
        ptx.write_text(print_module(module))
        ours = oracle.ptxas(ptx, Path(tmp) / "ptxc.cubin", arch).read_bytes()
        theirs = oracle.nvcc_cubin(path, Path(tmp) / "nvcc.cubin", arch).read_bytes()
    source = path.read_text()
    launches = parse_file(source, str(path))
    assert launches
    expected = _run_or_xfail(run_launches, theirs, launches, source, path, "nvcc's")
    got = _run_or_xfail(run_launches, ours, launches, source, path, "ptxc's PTX through ptxas:")
    report = []
    for buffer, values in expected.buffers.items():
        diffs = differences(buffer, got.buffers[buffer], values, expected.ulp.get(buffer, 0))
        if diffs:
            report.append(f"{buffer}: {len(diffs)} differ, first {diffs[:3]}")
    assert not report, "\n".join(report)


def _run_or_xfail(run_launches, cubin, launches, source, path, whose):
    """The launches' buffers; an expected failure where the emulator's instruction table
    has no form for a SASS word of the cubin (ptxc's emulator lacks the fp16/bf16 and
    uniform-datapath forms that nvcc's half and cooperative-groups code uses: F2I.F16,
    HSETP2 with immediates, HADD2.BF16_V2, UIMAD/ULEA.HI, LOP3 to a predicate with a
    uniform operand), named with the instruction."""
    from ptxc.emu.device import LaunchError
    try:
        return run_launches(cubin, launches, source, str(path))
    except LaunchError as exc:
        text = str(exc)
        if "Instruction not supported by the emulator" not in text:
            raise
        sass = next((line.split("SASS:", 1)[1].strip() for line in text.splitlines() if "SASS:" in line), "?")
        pytest.xfail(f"{whose} cubin uses an instruction the emulator lacks: {sass}")


PRINTF = r'''#include <cstdio>
__global__ void k(const float* x, int n) {
    int i = threadIdx.x;
    char c = 'a'; short s = 3; long long ll = 1ll << 40; double d = 2.5;
    if (i < 2) printf("i=%d x=%f c=%c s=%hd ll=%lld d=%g p=%p str=%s\n", i, x[i], c, s, ll, d, x, "hey");
    printf("plain\n");
    printf("%u %ld %f\n", (unsigned)n, (long)n, 1.5f);
}
'''


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_device_printf_is_nvvms_vprintf_call(arch, tmp_path):
    cu = tmp_path / "pf.cu"
    cu.write_text(PRINTF)
    module, _ = compile_cuda(PRINTF, str(cu), arch=arch)
    ours = print_module(module)
    theirs = oracle.nvcc_ptx(cu, tmp_path / "nvcc.ptx", arch).read_text()
    oracle.ptxas(tmp_path / "nvcc.ptx", tmp_path / "n.cubin", arch)
    (tmp_path / "ptxc.ptx").write_text(ours)
    oracle.ptxas(tmp_path / "ptxc.ptx", tmp_path / "p.cubin", arch)       # raises if refused
    decl = re.compile(r"\.extern \.func\s*\(\.param \.b32 func_retval0\) vprintf\s*\(\s*\.param \.b64 "
                      r"vprintf_param_0,\s*\.param \.b64 vprintf_param_1\s*\)\s*;")
    assert decl.search(ours) and decl.search(theirs)
    # the format strings: the same bytes (nvcc leaves the trailing NUL to the array size)
    def strings(text):
        return [(int(size), [int(b) for b in body.split(",")] if body.strip() else [])
                for size, body in re.findall(r"\.global \.align 1 \.b8 \$str(?:\$\d+)?\[(\d+)\] = \{([^}]*)\}", text)]
    assert [(size, body + [0] * (size - len(body))) for size, body in strings(theirs)] == \
        [(size, body + [0] * (size - len(body))) for size, body in strings(ours)]
    # the argument buffers: the same offsets, widths and frame size
    def layout(text):
        stores = re.findall(r"st\.local\.(v2\.)?[a-z](\d+)\s+\[%\w+(?:\+(\d+))?\]", text)
        slots = set()
        for vec, width, offset in stores:
            for k in range(2 if vec else 1):
                slots.add((int(offset or 0) + k * int(width) // 8, int(width)))
        depot = int(re.search(r"__local_depot0\[(\d+)\]", text).group(1))
        return sorted(slots), depot
    assert layout(ours) == layout(theirs)
    assert ours.count("call.uni") == theirs.count("call.uni") == 3


def test_printf_format_must_be_a_literal(tmp_path):
    from ptxc.diagnostics import CompileError
    src = "__global__ void k(const char* f) { printf(f, 1); }\n"
    with pytest.raises(CompileError) as info:
        compile_cuda(src, "k.cu")
    assert "unsupported feature: printf with a format that is not a string literal" in info.value.format()


def test_atomic_cas16_and_scoped_atomics_are_nvvms(tmp_path):
    """The atomics nvcc writes for the 16-bit CAS and the scoped forms, opcode for opcode."""
    src = ("__global__ void k(unsigned short* h, int* a, double* d, long long* l) {\n"
           "  h[1] = atomicCAS(h, (unsigned short)1, (unsigned short)2);\n"
           "  a[1] = atomicAdd_block(a, 1); a[2] = atomicCAS_system(a, 1, 2); d[1] = atomicAdd_system(d, 1.0);\n"
           "  l[1] = atomicAnd(l, 3ll); l[2] = atomicOr_block(l, 3ll); l[3] = atomicXor_system(l, 5ll);\n}\n")
    cu = tmp_path / "a.cu"
    cu.write_text(src)
    module, _ = compile_cuda(src, str(cu))
    ours = re.findall(r"\batom\.[\w.]+", print_module(module))
    theirs = re.findall(r"\batom\.[\w.]+", oracle.nvcc_ptx(cu, tmp_path / "a.ptx").read_text())
    assert ours == theirs
