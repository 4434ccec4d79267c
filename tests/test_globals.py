"""Module-scope `.global` and `.const` variables (CUDA `__device__` and `__constant__`),
from PTX to the cubin, against nvcc/ptxas 13.5 for sm_89.

What ptxas does (measured on the PTX below and on the testsuite files; docs in
ptxc/cubin/writer.py): `.const` variables go to .nv.constant3 with their initial
bytes and are read as c[0x3][offset] or LDC c[0x3][R+offset]; `.global` variables go
to .nv.global (NOBITS) or .nv.global.init (initialized), and every one of them has
its 64-bit address in .nv.constant4, filled by an R_CUDA_64 relocation
(.rel.nv.constant4), which the code reads as `MOV R2, c[0x4][slot]`.  Each variable
has an STT_OBJECT symbol (GLOBAL when `.visible`).

- the writer, given what the reader finds in nvcc's cubin, writes nvcc's cubin again
  byte for byte;
- ptxc's own cubin from the same PTX has the same sections, symbols, relocations and
  bank contents as nvcc's, and NVIDIA's tools read it without a complaint;
- on the emulator, ptxc's cubins (from nvcc's PTX and from ptxc's frontend) compute
  what nvcc's computes;
- what cannot be lowered is a `file:line:col` error.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.cubin import read_cubin, write_cubin
from ptxc.cubin.writer import ModuleVariable
from ptxc.lower.select_instrs import ModuleVars, initial_bytes
from ptxc.ptx import ir as ptx

from conftest import TESTSUITE

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n\n"

# Unused variables, an initialized .global, alignment 8, shared memory in one kernel:
# ptxas gives every .global an address slot, in declaration order.
MIXED = HEADER + """\
.global .align 4 .u32 g_unused;
.global .align 4 .u32 g_a;
.global .align 8 .b8 g_init[16] = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16};
.global .align 4 .b8 g_b[64];
.const .align 4 .b8 c_unused[8] = {1,2,3,4,5,6,7,8};
.const .align 8 .b8 c_x[16];
.const .align 4 .u32 c_y = 7;

.visible .entry k1(.param .u64 p)
{
	.reg .b32 %r<10>;
	.reg .b64 %rd<10>;
	.shared .align 4 .b8 sh[64];
	ld.param.u64 %rd1, [p];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u64 %rd3, g_b;
	ld.global.u32 %r1, [%rd3+8];
	ld.global.u32 %r2, [g_a];
	ld.global.u32 %r5, [g_init+4];
	ld.const.u32 %r3, [c_y];
	add.s32 %r4, %r1, %r2;
	add.s32 %r4, %r4, %r3;
	add.s32 %r4, %r4, %r5;
	st.shared.u32 [sh], %r4;
	ld.shared.u32 %r4, [sh+4];
	st.global.u32 [%rd2], %r4;
	ret;
}
.visible .entry k2(.param .u64 p)
{
	.reg .b32 %r<10>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [p];
	cvta.to.global.u64 %rd2, %rd1;
	ld.global.u32 %r1, [g_a];
	ld.const.u32 %r3, [c_x+4];
	add.s32 %r4, %r1, %r3;
	st.global.u32 [%rd2], %r4;
	ret;
}
"""

# .visible variables: ptxas places them first (offsets, slots, sections), their
# symbols are GLOBAL and follow the kernels'.
VISIBLE = HEADER + """\
.global .align 4 .u32 lg;
.const .align 4 .u32 lc = 5;
.visible .global .align 4 .u32 vg;
.visible .const .align 4 .u32 vc = 3;

.visible .entry k1(.param .u64 p)
{
	.reg .b32 %r<10>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [p];
	cvta.to.global.u64 %rd2, %rd1;
	ld.global.u32 %r1, [vg];
	ld.global.u32 %r2, [lg];
	ld.const.u32 %r3, [vc];
	ld.const.u32 %r5, [lc];
	add.s32 %r4, %r1, %r2;
	add.s32 %r4, %r4, %r3;
	add.s32 %r4, %r4, %r5;
	st.global.u32 [%rd2], %r4;
	ret;
}
"""

# Byte-sized variables (sections aligned 1) and shared memory in the first kernel of
# the file: the NOBITS sections come in creation order (.nv.shared.k2, .nv.global,
# .nv.shared.k1).
BYTES = HEADER + """\
.global .align 1 .b8 gb[3];
.const .align 1 .b8 cb[3] = {1,2,3};

.visible .entry k1(.param .u64 p)
{
	.reg .b32 %r<10>;
	.reg .b64 %rd<10>;
	.shared .align 4 .b8 sh[64];
	ld.param.u64 %rd1, [p];
	cvta.to.global.u64 %rd2, %rd1;
	ld.global.u8 %r1, [gb+1];
	ld.const.u8 %r3, [cb+1];
	add.s32 %r4, %r1, %r3;
	st.shared.u32 [sh], %r4;
	ld.shared.u32 %r4, [sh+4];
	st.global.u32 [%rd2], %r4;
	ret;
}
.visible .entry k2(.param .u64 p)
{
	.reg .b32 %r<10>;
	.reg .b64 %rd<10>;
	.shared .align 8 .b8 sh2[32];
	ld.param.u64 %rd1, [p];
	cvta.to.global.u64 %rd2, %rd1;
	ld.global.u8 %r1, [gb];
	st.shared.u32 [sh2], %r1;
	ld.shared.u32 %r4, [sh2+4];
	st.global.u32 [%rd2], %r4;
	ret;
}
"""

PTX_CASES = {"mixed": MIXED, "visible": VISIBLE, "bytes": BYTES}
CU_CASES = ["fe_constant_mem", "isa_uniform", "isa_memory"]
MODULE_SECTIONS = (".nv.constant3", ".nv.constant4", ".nv.global", ".nv.global.init")


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("globals")


def nvcc_pair(work: Path, case: str) -> tuple[Path, Path]:
    """(PTX, nvcc's cubin) of a case: the PTX above through ptxas, or a testsuite
    file through nvcc (its PTX from nvcc -ptx)."""
    ptx_path, cubin = work / f"{case}.ptx", work / f"{case}.nvcc.cubin"
    if not cubin.exists():
        if case in PTX_CASES:
            ptx_path.write_text(PTX_CASES[case])
            oracle.ptxas(ptx_path, cubin)
        else:
            oracle.nvcc_ptx(TESTSUITE / f"{case}.cu", ptx_path)
            oracle.nvcc_cubin(TESTSUITE / f"{case}.cu", cubin)
    return ptx_path, cubin


def ptxc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxc", *args], capture_output=True, text=True)


def shape(data: bytes):
    """What must agree with nvcc's cubin: sections (name, type, flags, alignment; sizes
    of the module's sections), symbols (name, type, binding, section; value and size
    of variables), relocations other than .debug_frame's, and the module's bytes."""
    c = read_cubin(data)
    sections = [(s.name, s.type, s.flags, s.align, s.size if s.name in MODULE_SECTIONS else None)
                for s in c.sections[1:]]
    symbols = [(s.name, s.type, s.bind, c.sections[s.shndx].name if s.shndx else None,
                (s.value, s.size) if s.type == 1 else None) for s in c.symbols]
    relocations = {name: [(r.offset, c.symbols[r.symbol].name, r.type) for r in rs]
                   for name, rs in c.relocations.items() if name != ".rel.debug_frame"}
    contents = {s.name: s.data for s in c.sections if s.name in MODULE_SECTIONS}
    return sections, symbols, relocations, contents


# ---- the writer against nvcc's cubins -----------------------------------------------------

@pytest.mark.oracle
@pytest.mark.parametrize("case", list(PTX_CASES) + ["isa_uniform", "isa_memory"])
def test_writer_reproduces_nvccs_cubin(work, case):
    _ptx, cubin = nvcc_pair(work, case)
    theirs = cubin.read_bytes()
    c = read_cubin(theirs)
    assert c.variables, "nvcc's cubin has module variables"
    ours = write_cubin(c.kernels, arch=c.arch, variables=c.variables, **c.tool_strings())
    assert ours == theirs


@pytest.mark.oracle
def test_reader_finds_the_variables(work):
    _ptx, cubin = nvcc_pair(work, "fe_constant_mem")
    by_name = {v.name: v for v in read_cubin(cubin.read_bytes()).variables}
    assert [v.name for v in by_name.values()] == ["coeffs", "offsets", "params", "scale", "hits", "history"]
    assert by_name["scale"].init == bytes.fromhex("0000003f")        # 0.5f
    assert (by_name["hits"].space, by_name["hits"].address_slot, by_name["hits"].init) == ("global", 0, None)
    assert (by_name["history"].offset, by_name["history"].address_slot) == (4, 8)


def test_writer_refuses_overlapping_variables():
    from ptxc.cubin.writer import KernelImage
    kernel = KernelImage("k", bytes(128), [], 8, [0])
    a = ModuleVariable("a", "const", 8, 4, 0)
    b = ModuleVariable("b", "const", 4, 4, 4)
    with pytest.raises(ValueError, match="overlap"):
        write_cubin([kernel], variables=[a, b])
    with pytest.raises(ValueError, match="overlap"):
        write_cubin([kernel], arch="sm_90", variables=[a, b])


# ---- ptxc's cubins -----------------------------------------------------------------------

@pytest.mark.oracle
@pytest.mark.parametrize("case", list(PTX_CASES) + CU_CASES)
def test_drop_in_cubin_is_laid_out_as_nvccs(work, case):
    ptx_path, cubin = nvcc_pair(work, case)
    ours = work / f"{case}.ptxc.cubin"
    result = ptxc(str(ptx_path), "-o", str(ours))
    assert result.returncode == 0, result.stderr
    assert shape(ours.read_bytes()) == shape(cubin.read_bytes())
    for tool, args in (("cuobjdump", ["-elf"]), ("cuobjdump", ["-sass"]), ("nvdisasm", ["-c"])):
        run = oracle.run(tool, *args, str(ours), check=False)
        assert run.returncode == 0 and run.stderr == "", f"{tool} {args}: {run.stderr}"


@pytest.mark.oracle
@pytest.mark.parametrize("case", CU_CASES)
def test_frontend_cubin_reads_cleanly(work, case):
    ours = work / f"{case}.fe.cubin"
    result = ptxc(str(TESTSUITE / f"{case}.cu"), "-o", str(ours))
    assert result.returncode == 0, result.stderr
    names = {s.name for s in read_cubin(ours.read_bytes()).sections}
    assert ".nv.constant3" in names
    for tool, args in (("cuobjdump", ["-elf"]), ("cuobjdump", ["-sass"]), ("nvdisasm", ["-c"])):
        run = oracle.run(tool, *args, str(ours), check=False)
        assert run.returncode == 0 and run.stderr == "", f"{tool} {args}: {run.stderr}"


def run_both(work: Path, case: str, ours: Path):
    from ptxc.launch.spec import parse_file
    from ptxc.launch import differences, run_launches
    _ptx, theirs = nvcc_pair(work, case)
    source = (TESTSUITE / f"{case}.cu").read_text()
    launches = parse_file(source, f"{case}.cu")
    a = run_launches(theirs.read_bytes(), launches, source, f"{case}.cu")
    b = run_launches(ours.read_bytes(), launches, source, f"{case}.cu")
    for buffer in a.buffers:
        diffs = differences(buffer, a.buffers[buffer], b.buffers[buffer], a.ulp.get(buffer, 0))
        assert not diffs, f"{buffer}: {len(diffs)} elements differ, first {diffs[:3]}"


# Regression: order_instrs reads registers through ptxc/lower/vregs.regs_in, which did
# not count the index register of `LDC R8, c[0x3][R10]`: in constant_mem the LDC was
# scheduled above the IMAD.WIDE that computes R10.
@pytest.mark.oracle
@pytest.mark.parametrize("case", ["fe_constant_mem", "isa_uniform", "isa_memory"])
@pytest.mark.parametrize("source", ["nvcc_ptx", "frontend"])
def test_results_equal_nvcc_on_the_emulator(work, case, source):
    ptx_path, _cubin = nvcc_pair(work, case)
    ours = work / f"{case}.{source}.emu.cubin"
    result = ptxc(str(ptx_path if source == "nvcc_ptx" else TESTSUITE / f"{case}.cu"), "-o", str(ours))
    assert result.returncode == 0, result.stderr
    run_both(work, case, ours)


# ---- layout and initial bytes ---------------------------------------------------------------

def var(state, type_, name, init=None, array=None, align=None, visible=False):
    return ptx.Variable(state, type_, name, align=align, array=array, init=init, visible=visible)


def test_layout_places_visible_variables_first():
    variables = [var(".global", ".u32", "lg"), var(".const", ".u32", "lc", [ptx.Imm(5)]),
                 var(".global", ".u32", "vg", visible=True), var(".const", ".u32", "vc", visible=True),
                 var(".global", ".b8", "gi", [ptx.Imm(1)], array=8, align=8)]
    layout = ModuleVars.of(variables)
    assert layout.const_offsets == {"vc": 0, "lc": 4}
    assert layout.global_offsets == {"vg": 0, "lg": 4, "gi": 0}     # gi: .nv.global.init
    assert layout.address_slots == {"vg": 0, "lg": 8, "gi": 16}
    assert [v.name for v in layout.placed()] == ["vg", "vc", "lg", "lc", "gi"]


def test_initial_bytes():
    assert initial_bytes(var(".const", ".f32", "s", [ptx.Imm(0.5, ".f32")])) == bytes.fromhex("0000003f")
    assert initial_bytes(var(".const", ".f32", "one", [ptx.Imm(1)])) == bytes.fromhex("0000803f")
    assert initial_bytes(var(".const", ".s32", "a", [ptx.Imm(-2), ptx.Imm(3)], array=3)) == \
        bytes.fromhex("feffffff" "03000000" "00000000")
    assert initial_bytes(var(".const", ".b8", "b", [ptx.Imm(254), ptx.Imm(1)], array=4)) == bytes([254, 1, 0, 0])
    assert initial_bytes(var(".global", ".f64", "d", [ptx.Imm(0.25, ".f64")])) == bytes.fromhex("000000000000d03f")
    assert initial_bytes(var(".global", ".u32", "z")) is None


# ---- errors ----------------------------------------------------------------------------------

def test_what_cannot_be_lowered_is_an_error_at_its_line(tmp_path):
    path = tmp_path / "bad.ptx"
    path.write_text(HEADER + ".global .align 4 .u32 g;\n.visible .entry k()\n{\n.reg .b32 %r<4>;\n"
                    "mov.u32 %r1, g;\nld.global.u32 %r1, [nowhere];\nret;\n}\n")
    result = ptxc(str(path), "-o", str(tmp_path / "bad.cubin"))
    assert result.returncode == 1
    assert "bad.ptx:9:1: error: unsupported 32-bit address of global variable 'g'" in result.stderr
    assert "bad.ptx:10:1: error: unsupported address of 'nowhere' in global memory (unknown symbol)" \
        in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "bad.cubin").exists()
