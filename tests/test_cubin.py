"""The cubin writer and reader.

The strongest check: nvcc's cubin, read back into KernelImages and written again with
ptxas's tool strings, is byte-identical to nvcc's.  With ptxc's own tool strings,
cuobjdump and nvdisasm read our file with no complaint and print what they print for
nvcc's, the toolkit note aside.  The kernels are testsuite/vadd.cu and
tests/data/cubin/*.cu (their comments say what each exercises).
"""
from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.cubin import CubinError, KernelImage, read_cubin, write_cubin
from ptxc.cubin import elf, nvinfo
from ptxc.cubin.writer import ModuleVariable, sleb128, uleb128

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "cubin"
IDENTICAL = [ROOT / "testsuite" / "vadd.cu"] + [DATA / f"{n}.cu" for n in
                                                 ("params", "shared", "loops", "attrs")]


def nop_text(instructions: int) -> bytes:
    """Stand-in SASS: the writer never looks inside the text."""
    return bytes(range(16)) * instructions


def sample_kernels() -> list[KernelImage]:
    return [
        KernelImage("_Z4vaddPKfS0_Pfi", nop_text(32), [(0, 8), (8, 8), (16, 8), (24, 4)],
                    regcount=12, exit_offsets=[0x50, 0xF0]),
        KernelImage("_Z6reducePKfPf", nop_text(40), [(0, 8), (8, 8)], regcount=10,
                    exit_offsets=[0x1B0, 0x200], shared_size=1024, num_barriers=1,
                    cfa_offset=0xF0),
        KernelImage("_Z5mixedcdsxPi", nop_text(24), [(0, 1), (8, 8), (16, 2), (24, 8), (32, 8)],
                    regcount=8, exit_offsets=[0xD0], shared_size=3, shared_align=1,
                    max_threads=(128, 1, 1)),
        KernelImage("_Z5framev", nop_text(64), [], regcount=42, exit_offsets=[0x3D0],
                    frame_size=0x800, min_stack_size=0x800, crs_stack_size=0, max_reg_count=32),
    ]


# ---- without NVIDIA's tools -----------------------------------------------------------

def test_leb128():
    assert uleb128(0) == b"\0"
    assert uleb128(0x5000001) == bytes([0x81, 0x80, 0x80, 0x28])  # R1 as ptxas writes it
    assert uleb128(0xFFFFFFFF) == bytes([0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
    assert sleb128(-4) == b"\x7c"
    assert sleb128(64) == b"\xc0\x00"


def test_string_table_keeps_first_offset():
    table = elf.StringTable()
    assert table.add(".text") == 1
    assert table.add(".nv.info") == 7
    assert table.add(".text") == 1
    assert table.data() == b"\0.text\0.nv.info\0"


def test_records_round_trip():
    records = [nvinfo.words(0x37, 135), nvinfo.hval(0x1B, 0xFF), nvinfo.bval(0x4C, 4),
               nvinfo.kparam_info(3, 0x18, 4), nvinfo.param_cbank(4, 0x160, 0x1C)]
    data = nvinfo.encode_records(records)
    assert data[:8] == bytes([0x04, 0x37, 0x04, 0x00, 0x87, 0, 0, 0])
    assert nvinfo.decode_records(data) == records
    assert nvinfo.unpack_kparam_info(records[3].value) == (3, 0x18, 4)
    assert records[3].value[-4:] == bytes.fromhex("00f01100")  # as ptxas writes a 4-byte param


def test_truncated_record_is_an_error():
    data = nvinfo.encode_records([nvinfo.words(0x1C, 0x50, 0xF0)])
    with pytest.raises(ValueError, match="runs past the end"):
        nvinfo.decode_records(data[:-1])


def test_write_read_round_trip():
    kernels = sample_kernels()
    cubin = read_cubin(write_cubin(kernels))
    assert cubin.kernels == kernels
    assert cubin.arch == "sm_89"
    assert cubin.tool_strings()["tool_name"] == "ptxc"
    assert cubin.tool_strings()["tool_args"] == "-arch sm_89 -m 64"


def test_sm90_flags_and_param_base():
    kernels = [KernelImage("k", nop_text(8), [(0, 8)], regcount=8, exit_offsets=[0x40],
                           param_base=0x210)]
    cubin = read_cubin(write_cubin(kernels, arch="sm_90"))
    assert cubin.header.flags == 0x6005A04
    assert cubin.kernels == kernels
    assert len(cubin.constant_banks[".nv.constant0.k"]) == 0x210 + 8
    assert cubin.tool_strings()["tool_args"] == "-arch sm_90 -m 64"


def test_layout_with_pyelftools():
    from elftools.elf.elffile import ELFFile
    import io
    data = write_cubin(sample_kernels())
    ef = ELFFile(io.BytesIO(data))
    assert ef["e_type"] == "ET_EXEC" and ef["e_machine"] == "EM_CUDA"
    assert ef["e_ident"]["EI_OSABI"] == 0x41 and ef["e_ident"]["EI_ABIVERSION"] == 8
    assert ef["e_flags"] == 0x6005904
    names = [s.name for s in ef.iter_sections()]
    # kernels in reverse source order, as ptxas writes them
    assert names[:8] == ["", ".shstrtab", ".strtab", ".symtab", ".debug_frame",
                         ".note.nv.tkinfo", ".note.nv.cuinfo", ".nv.info"]
    assert names[8:12] == [".nv.info._Z5framev", ".nv.info._Z5mixedcdsxPi",
                           ".nv.info._Z6reducePKfPf", ".nv.info._Z4vaddPKfS0_Pfi"]
    assert names[-2:] == [".nv.shared._Z5mixedcdsxPi", ".nv.shared._Z6reducePKfPf"]
    text = ef.get_section_by_name(".text._Z6reducePKfPf")
    assert text["sh_info"] >> 24 == 10 and text["sh_addralign"] == 128
    symbols = {s.name: s for s in ef.get_section_by_name(".symtab").iter_symbols()}
    assert symbols["_Z6reducePKfPf"]["st_size"] == 40 * 16
    assert symbols["_Z6reducePKfPf"]["st_info"]["bind"] == "STB_GLOBAL"
    entry = next(s for s in read_cubin(data).symbols if s.name == "_Z6reducePKfPf")
    assert entry.other == 0x10  # STO_CUDA_ENTRY, which pyelftools does not decode
    shared = [s for s in ef.iter_segments() if s["p_flags"] == elf.PF_R | elf.PF_W]
    assert shared[0]["p_memsz"] == 4 + 1024  # mixed's 3 bytes, then reduce's window at 4


def test_write_refuses_what_it_cannot_lay_out():
    good = sample_kernels()[0]
    with pytest.raises(ValueError, match="unsupported architecture"):
        write_cubin([good], arch="sm_75")
    with pytest.raises(ValueError, match="at least one kernel"):
        write_cubin([])
    with pytest.raises(ValueError, match="16-byte instructions"):
        write_cubin([KernelImage("k", b"\0" * 8, [], 4, [0])])
    with pytest.raises(ValueError, match="exit offsets"):
        write_cubin([KernelImage("k", nop_text(2), [], 4, [0x40])])
    with pytest.raises(ValueError, match="same name"):
        write_cubin([good, good])
    with pytest.raises(ValueError, match="warp-wide"):
        write_cubin([KernelImage("k", nop_text(2), [], 4, [0x10], int_warp_wide_offsets=[0x18])])
    with pytest.raises(ValueError, match="FDE rows"):
        write_cubin([KernelImage("k", nop_text(2), [], 4, [0x10], fde_end=0x40)], arch="sm_90")
    with pytest.raises(ValueError, match="maxntid and .reqntid"):
        write_cubin([KernelImage("k", nop_text(2), [], 4, [0x10], max_threads=(32, 1, 1), req_threads=(32, 1, 1))])


@pytest.fixture
def ours() -> bytes:
    return write_cubin(sample_kernels())


def test_empty_file(ours):
    with pytest.raises(CubinError, match="too short"):
        read_cubin(b"", "empty.cubin")


def test_not_elf(ours):
    with pytest.raises(CubinError, match="^not an ELF file$") as info:
        read_cubin(b"#include <stdio.h>\n" * 8, "bad.cubin")
    assert info.value.filename == "bad.cubin"


def test_elf_of_another_machine(ours):
    x86 = bytearray(ours)
    struct.pack_into("<H", x86, 18, 62)  # e_machine = EM_X86_64
    with pytest.raises(CubinError, match="machine 62, not CUDA"):
        read_cubin(bytes(x86))


def test_host_executable():
    exe = Path(sys.executable).resolve().read_bytes()
    if exe[:4] != elf.ELFMAG:
        pytest.skip("the Python interpreter is not an ELF file here")
    with pytest.raises(CubinError, match="not CUDA"):
        read_cubin(exe, "python")


def test_32_bit_elf(ours):
    with pytest.raises(CubinError, match="64-bit"):
        read_cubin(ours[:4] + b"\x01" + ours[5:])


@pytest.mark.parametrize("keep", [0x30, 0x200, 0x9C0, -1])
def test_truncated(ours, keep):
    with pytest.raises(CubinError):
        read_cubin(ours[:keep])


def test_kernel_without_symbol(ours):
    cubin = read_cubin(ours)
    symtab = cubin.section(".symtab")
    broken = bytearray(ours)
    # give the last symbol (a kernel) the name of a section symbol
    last = symtab.offset + symtab.size - elf.SYM.size
    struct.pack_into("<I", broken, last, cubin.symbols[1].name_offset)
    with pytest.raises(CubinError, match="malformed"):
        read_cubin(bytes(broken))


def test_corrupt_section_name(ours):
    header = elf.Header.unpack(ours)
    broken = bytearray(ours)
    struct.pack_into("<I", broken, header.shoff + 3 * elf.SHDR.size, 0xFFFFFF)
    with pytest.raises(CubinError, match="malformed"):
        read_cubin(bytes(broken))


# ---- against nvcc ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def nvcc_cubins(tmp_path_factory):
    """nvcc's cubin for each source and arch, compiled once."""
    out = tmp_path_factory.mktemp("nvcc")
    cache = {}

    def get(source: Path, arch: str = "sm_89") -> Path:
        if (source, arch) not in cache:
            cache[source, arch] = oracle.nvcc_cubin(source, out / f"{source.stem}.{arch}.cubin", arch)
        return cache[source, arch]
    return get


def rewrite(data: bytes, **tool) -> bytes:
    cubin = read_cubin(data)
    return write_cubin(cubin.kernels, arch=cubin.arch, **tool)


@pytest.mark.oracle
@pytest.mark.parametrize("source", IDENTICAL, ids=lambda p: p.stem)
def test_byte_identical_to_nvcc(nvcc_cubins, source):
    theirs = nvcc_cubins(source).read_bytes()
    ours = rewrite(theirs, **read_cubin(theirs).tool_strings())
    assert read_cubin(theirs).tool_strings()["tool_name"] == "ptxas"
    assert ours == theirs


def cuobjdump_elf_without_tool_note(path: Path) -> str:
    """cuobjdump -elf's text with what the toolkit note changes taken out: section
    offsets (the note's size moves them), the note's size and its strings."""
    text = oracle.cuobjdump_elf(path)
    text = re.sub(r"^.* NOTE .*\.note\.nv\.tkinfo\n", "", text, flags=re.M)
    text = re.sub(r"^( +[0-9a-f]+) +[0-9a-f]+ ", r"\1 ", text, flags=re.M)
    text = re.sub(r"NVIDIA Corp +\d+ +NVIDIA CUDA Toolkit", "NVIDIA Corp Toolkit", text)
    return re.sub(r"\tTool (Name|Version|Branch|Command Line Arguments):.*\n", "", text)


@pytest.mark.oracle
@pytest.mark.parametrize("source", IDENTICAL, ids=lambda p: p.stem)
def test_nvidia_tools_read_ours_as_nvccs(nvcc_cubins, source, tmp_path):
    theirs = nvcc_cubins(source)
    ours = tmp_path / "ours.cubin"
    ours.write_bytes(rewrite(theirs.read_bytes()))  # tool name "ptxc"
    for tool, args in (("cuobjdump", ["-elf"]), ("cuobjdump", ["-sass"]), ("nvdisasm", ["-c"])):
        proc = oracle.run(tool, *args, str(ours))
        assert proc.stderr == "", f"{tool} {args}: {proc.stderr}"
    assert "Tool Name: ptxc" in oracle.cuobjdump_elf(ours)
    assert cuobjdump_elf_without_tool_note(ours) == cuobjdump_elf_without_tool_note(theirs)
    assert oracle.cuobjdump_sass(ours) == oracle.cuobjdump_sass(theirs)
    assert oracle.run("nvdisasm", "-c", str(ours)).stdout == \
        oracle.run("nvdisasm", "-c", str(theirs)).stdout


@pytest.mark.oracle
@pytest.mark.parametrize("source", IDENTICAL + [DATA / "calls.cu"], ids=lambda p: p.stem)
def test_reader_agrees_with_cuobjdump(nvcc_cubins, source):
    """Register counts, parameters, exits and shared sizes as cuobjdump prints them."""
    path = nvcc_cubins(source)
    cubin = read_cubin(path.read_bytes(), path.name)
    text = oracle.cuobjdump_elf(path)
    regcounts = dict(re.findall(r"function: (\S+)\(0x[0-9a-f]+\)\tregister count: (\d+)", text))
    smem = dict(re.findall(r"\n\.text\.(\S+)\nlmem=\d+\tsmem=(\d+)", text))
    for k in cubin.kernels:
        assert k.regcount == int(regcounts[k.name])
        assert k.shared_size == int(smem[k.name])
        info = text.split(f"\n.nv.info.{k.name}\n")[1].split("\n\n\n")[0]
        exits = re.search(r"EXIT_INSTR_OFFSETS\n\tFormat:\tEIFMT_SVAL\n\tValue:\t(.*)", info)
        assert k.exit_offsets == [int(v, 16) for v in exits.group(1).split()]
        params = re.findall(r"Ordinal : (0x\w+)\tOffset  : (0x\w+)\tSize    : (0x\w+)", info)
        assert k.params == [(int(o, 16), int(s, 16)) for _, o, s in sorted(params, key=lambda p: int(p[0], 16))]
        assert k.text == cubin.section(f".text.{k.name}").data


# ---- sm_90: nvcc's own layout -----------------------------------------------------------

# Kernels with and without shared memory in one file, the first (in file order: the last
# in source) without: where ptxas puts .nv.shared.reserved.0, the empty .rela.text.<k>
# and the nameless .nv.reservedSmem.cap symbol depends on that order.
MIXED_SHARED = """
__global__ void first(int* out) { out[threadIdx.x] = threadIdx.x; }
__global__ void second(int* out) {
    __shared__ int s[64];
    s[threadIdx.x % 64] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}
__global__ void third(float* out) { out[threadIdx.x] = 2.0f * threadIdx.x; }
"""


@pytest.fixture(scope="module")
def mixed_shared(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("src") / "mixed_shared.cu"
    path.write_text(MIXED_SHARED)
    return path


def sm90_sources(mixed: Path) -> list[Path]:
    return IDENTICAL + [mixed]


@pytest.mark.oracle
@pytest.mark.parametrize("which", range(len(IDENTICAL) + 1))
def test_byte_identical_to_nvcc_sm90(nvcc_cubins, mixed_shared, which):
    """nvcc's sm_90 cubin, read and written again with ptxas's tool strings: the same bytes."""
    theirs = nvcc_cubins(sm90_sources(mixed_shared)[which], "sm_90").read_bytes()
    cubin = read_cubin(theirs)
    assert cubin.arch == "sm_90"
    assert write_cubin(cubin.kernels, arch="sm_90", **cubin.tool_strings()) == theirs


@pytest.mark.oracle
@pytest.mark.parametrize("which", range(len(IDENTICAL) + 1))
def test_nvidia_tools_read_ours_as_nvccs_sm90(nvcc_cubins, mixed_shared, which, tmp_path):
    theirs = nvcc_cubins(sm90_sources(mixed_shared)[which], "sm_90")
    ours = tmp_path / "ours.cubin"
    ours.write_bytes(rewrite(theirs.read_bytes()))  # tool name "ptxc"
    for tool, args in (("cuobjdump", ["-elf"]), ("cuobjdump", ["-sass"]), ("nvdisasm", ["-c"])):
        proc = oracle.run(tool, *args, str(ours))
        assert proc.stderr == "", f"{tool} {args}: {proc.stderr}"
    assert cuobjdump_elf_without_tool_note(ours) == cuobjdump_elf_without_tool_note(theirs)
    assert oracle.cuobjdump_sass(ours) == oracle.cuobjdump_sass(theirs)


def test_sm90_layout():
    """What sm_90 has that sm_89 does not, on the sample kernels (no oracle needed)."""
    kernels = [KernelImage(k.name, k.text, k.params, k.regcount, k.exit_offsets, param_base=0x210,
                           shared_size=k.shared_size + 0x400 if k.shared_size else 0, shared_align=k.shared_align,
                           num_barriers=k.num_barriers, max_threads=k.max_threads, cfa_offset=k.cfa_offset,
                           frame_size=k.frame_size, min_stack_size=k.min_stack_size,
                           crs_stack_size=k.crs_stack_size, max_reg_count=k.max_reg_count)
               for k in sample_kernels()]
    cubin = read_cubin(write_cubin(kernels, arch="sm_90"))
    assert cubin.kernels == kernels
    names = [s.name for s in cubin.sections]
    assert ".nv.compat" in names and ".nv.rel.action" not in names and ".rel.debug_frame" not in names
    assert names.index(".rela.debug_frame") < names.index(".text._Z5framev") < names.index(".nv.constant0._Z5framev")
    # the reserved window follows the first kernel in file order (_Z5framev, no shared memory)
    assert names.index(".nv.shared.reserved.0") < names.index(".nv.shared._Z5mixedcdsxPi")
    assert [n for n in names if n.startswith(".rela.text.")] == [".rela.text._Z5mixedcdsxPi",
                                                                 ".rela.text._Z6reducePKfPf"]
    text = cubin.section(".text._Z6reducePKfPf")
    assert text.info == next(i for i, s in enumerate(cubin.symbols) if s.name == "_Z6reducePKfPf")  # no regcount
    assert [p.type for p in cubin.segments] == [elf.PT_PHDR] + [elf.PT_LOAD] * 4
    records = {r.name for r in cubin.kernel_info["_Z4vaddPKfS0_Pfi"]}
    assert {"EIATTR_SW_WAR", "EIATTR_NVSAL_SW_WAR", "EIATTR_PREEXIT_USED", "EIATTR_SPARSE_MMA_MASK"} <= records
    assert cubin.symbols[-1].name == ".nv.constant0._Z4vaddPKfS0_Pfi"


@pytest.mark.oracle
def test_attribute_names_match_cuobjdump(tmp_path, monkeypatch):
    """One record of every code 0..255: cuobjdump's name for each is nvinfo's."""
    from ptxc.cubin import writer
    probe = [nvinfo.Record(nvinfo.EIFMT_NVAL, code, 0) for code in range(256)]
    monkeypatch.setattr(writer._Plan, "_kernel_info", lambda self, kernel: probe)
    path = tmp_path / "probe.cubin"
    path.write_bytes(write_cubin(sample_kernels()[:1]))
    text = oracle.cuobjdump_elf(path)
    section = text.split("\n.nv.info._Z4vaddPKfS0_Pfi\n")[1].split("\n\n\n")[0]
    names = re.findall(r"Attribute:\t(.*)", section)
    assert len(names) == 256
    assert {c: n for c, n in enumerate(names) if n != "unknown Attribute"} == nvinfo.ATTRIBUTES


# ---- sm_90: module variables, stack frames, dynamic shared memory, calls ----------------

TESTSUITE = ROOT / "testsuite"
# nvcc's sm_90 cubins of these are rewritten byte for byte: module variables (isa_uniform,
# isa_memory, fe_constant_mem: .nv.constant3, .nv.global, .nv.constant4 with
# .rela.nv.constant4), stack frames in straight-line kernels (isa_local), dynamic shared
# memory (fe_shared_dynamic).  isa_uniform's generic_cas has DW_CFA_undefined rows,
# isa_memory's fences an FDE that ends at the ERRBAR after its last MEMBAR.SC,
# fe_constant_mem an INT_WARP_WIDE_INSTR_OFFSETS record.
SM90_MODULE_FILES = [TESTSUITE / f"{n}.cu" for n in
                     ("isa_uniform", "isa_memory", "fe_constant_mem", "isa_local", "fe_shared_dynamic")]

PTX90 = ".version 8.0\n.target sm_90\n.address_size 64\n\n"
KERNEL_BODY = """\
	.reg .b32 %r<10>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [p];
	cvta.to.global.u64 %rd2, %rd1;
"""

# Local, `.visible` and initialized variables; shared memory in the second kernel (file
# order: the first), then, swapped, in the first: where ptxas puts the module's sections,
# symbols (the `.visible` ones after the first kernel's reserved-shared symbols, before
# .nv.reservedSmem.cap), .nv.global and the reserved window.
_VARIABLES = """\
.global .align 4 .u32 lg;
.const .align 4 .u32 lc = 5;
.visible .global .align 4 .u32 vg;
.visible .const .align 4 .u32 vc = 3;
.global .align 8 .b8 gi[8] = {1,2,3,4,5,6,7,8};
.const .align 1 .b8 cb[3] = {1,2,3};
"""
_K_SHARED = """\
.visible .entry k_shared(.param .u64 p)
{
""" + KERNEL_BODY + """\
	.shared .align 8 .b8 sh[64];
	ld.global.u32 %r1, [vg];
	ld.global.u32 %r2, [lg];
	ld.const.u32 %r3, [vc];
	ld.const.u32 %r5, [lc];
	ld.global.u32 %r6, [gi];
	ld.const.u8 %r7, [cb+1];
	add.s32 %r4, %r1, %r2;
	add.s32 %r4, %r4, %r3;
	add.s32 %r4, %r4, %r5;
	add.s32 %r4, %r4, %r6;
	add.s32 %r4, %r4, %r7;
	st.shared.u32 [sh], %r4;
	bar.sync 0;
	ld.shared.u32 %r4, [sh+4];
	st.global.u32 [%rd2], %r4;
	ret;
}
"""
_K_PLAIN = """\
.visible .entry k_plain(.param .u64 p) .maxntid 128, 1, 1
{
""" + KERNEL_BODY + """\
	ld.global.u32 %r1, [vg];
	st.global.u32 [%rd2], %r1;
	ret;
}
"""
# `extern .shared` memory: every kernel gets a window (the reserved 1 KiB), a section
# symbol only with static variables, an empty .rela.text only if it addresses shared
# memory; .reqntid gives REQNTID.
_K_DYNAMIC = """\
.extern .shared .align 16 .b8 dyn[];
.visible .entry k_unused(.param .u64 p) .reqntid 64, 2, 1
{
""" + KERNEL_BODY + """\
	mov.u32 %r1, %tid.x;
	st.global.u32 [%rd2], %r1;
	ret;
}
.visible .entry k_dynstatic(.param .u64 p)
{
""" + KERNEL_BODY + """\
	.shared .align 8 .b8 st[24];
	mov.u32 %r1, %tid.x;
	st.shared.u32 [dyn], %r1;
	st.shared.u32 [st], %r1;
	bar.sync 0;
	ld.shared.u32 %r2, [dyn+4];
	ld.shared.u32 %r3, [st+4];
	add.s32 %r2, %r2, %r3;
	st.global.u32 [%rd2], %r2;
	ret;
}
.visible .entry k_dynonly(.param .u64 p)
{
""" + KERNEL_BODY + """\
	mov.u32 %r1, %tid.x;
	st.shared.u32 [dyn], %r1;
	bar.sync 3, 64;
	ld.shared.u32 %r2, [dyn+4];
	st.global.u32 [%rd2], %r2;
	ret;
}
"""
SM90_PTX = {
    "vars_shared_second": PTX90 + _VARIABLES + _K_SHARED + _K_PLAIN,
    "vars_shared_first": PTX90 + _VARIABLES + _K_PLAIN + _K_SHARED,
    "dynamic_shared": PTX90 + _K_DYNAMIC,
    # sm_89 PTX built for sm_90: .note.nv.cuinfo says 89 (write_cubin's virtual_arch)
    "vars_target_sm89": PTX90.replace("sm_90", "sm_89") + _VARIABLES + _K_SHARED,
}


@pytest.fixture(scope="module")
def sm90_ptx_cubins(tmp_path_factory):
    out = tmp_path_factory.mktemp("ptx90")
    cache = {}

    def get(case: str) -> Path:
        if case not in cache:
            ptx = out / f"{case}.ptx"
            ptx.write_text(SM90_PTX[case])
            cache[case] = oracle.ptxas(ptx, out / f"{case}.cubin", "sm_90")
        return cache[case]
    return get


def rewrite_all(data: bytes, **tool) -> bytes:
    """What the reader finds (kernels, module variables, the PTX target), written again."""
    cubin = read_cubin(data)
    return write_cubin(cubin.kernels, arch=cubin.arch, variables=cubin.variables,
                       virtual_arch=cubin.virtual_arch, **tool)


@pytest.mark.oracle
@pytest.mark.parametrize("source", SM90_MODULE_FILES, ids=lambda p: p.stem)
def test_sm90_module_files_byte_identical(nvcc_cubins, source):
    theirs = nvcc_cubins(source, "sm_90").read_bytes()
    cubin = read_cubin(theirs)
    assert cubin.arch == "sm_90"
    assert rewrite_all(theirs, **cubin.tool_strings()) == theirs


@pytest.mark.oracle
@pytest.mark.parametrize("source", SM90_MODULE_FILES, ids=lambda p: p.stem)
def test_sm89_module_files_byte_identical(nvcc_cubins, source):
    """The same files on sm_89 (fe_constant_mem: INT_WARP_WIDE_INSTR_OFFSETS; isa_local:
    the straight-line FDE; fe_shared_dynamic: an empty window without a symbol)."""
    theirs = nvcc_cubins(source, "sm_89").read_bytes()
    assert rewrite_all(theirs, **read_cubin(theirs).tool_strings()) == theirs


# nvcc's sm_89 cubins whose kernels read doubles from their own bank 2 (c[0x2][..],
# .nv.constant2.<kernel>), rewritten byte for byte.
BANK2_FILES = [TESTSUITE / f"{n}.cu" for n in ("collatz", "fe_array2d")]


@pytest.mark.oracle
@pytest.mark.parametrize("source", BANK2_FILES, ids=lambda p: p.stem)
def test_sm89_bank2_files_byte_identical(nvcc_cubins, source):
    theirs = nvcc_cubins(source, "sm_89").read_bytes()
    cubin = read_cubin(theirs)
    assert any(k.constant_pool for k in cubin.kernels)
    assert rewrite_all(theirs, **cubin.tool_strings()) == theirs


@pytest.mark.oracle
@pytest.mark.parametrize("case", list(SM90_PTX))
def test_sm90_ptx_probes_byte_identical(sm90_ptx_cubins, case):
    theirs = sm90_ptx_cubins(case).read_bytes()
    cubin = read_cubin(theirs)
    assert rewrite_all(theirs, **cubin.tool_strings()) == theirs
    if case == "vars_target_sm89":
        assert cubin.virtual_arch == "sm_89" and cubin.arch == "sm_90"
    if case == "dynamic_shared":
        k = {k.name: k for k in cubin.kernels}
        assert k["k_unused"].req_threads == (64, 2, 1) and k["k_unused"].shared_referenced is False
        assert k["k_dynonly"].dynamic_shared and k["k_dynonly"].num_barriers == 4
        assert not k["k_dynstatic"].dynamic_shared   # the file cannot tell: it has variables


@pytest.mark.oracle
@pytest.mark.parametrize("source", SM90_MODULE_FILES, ids=lambda p: p.stem)
def test_nvidia_tools_read_sm90_module_files(nvcc_cubins, source, tmp_path):
    theirs = nvcc_cubins(source, "sm_90")
    ours = tmp_path / "ours.cubin"
    ours.write_bytes(rewrite_all(theirs.read_bytes()))  # tool name "ptxc"
    for tool, args in (("cuobjdump", ["-elf"]), ("cuobjdump", ["-sass"]), ("nvdisasm", ["-c"])):
        proc = oracle.run(tool, *args, str(ours))
        assert proc.stderr == "", f"{tool} {args}: {proc.stderr}"
    assert cuobjdump_elf_without_tool_note(ours) == cuobjdump_elf_without_tool_note(theirs)
    assert oracle.cuobjdump_sass(ours) == oracle.cuobjdump_sass(theirs)


# What the CUDA loader reads of a cubin, from cuobjdump -elf: the ELF header line; each
# section but the string tables, .debug_frame and its relocations and the toolkit note,
# with its size (.nv.info's: its records), entry size, alignment, type and flags, and what it links to by name;
# every symbol but nvcc's subroutines (LOCAL FUNC), by name; the .nv.info records of the
# kernels (the global ones naming nvcc's subroutines left out) with symbol numbers
# replaced by names; and the contents of every other section (code, banks, initial
# bytes, relocations, .nv.compat, .nv.callgraph, the windows).
NOT_LOADED = {".shstrtab", ".strtab", ".symtab", ".debug_frame", ".rela.debug_frame", ".note.nv.tkinfo"}


def loader_view(path: Path) -> dict:
    text = oracle.cuobjdump_elf(path)
    blocks, name = {}, None
    for line in text.split("\n"):
        header = re.match(r"^(?:\.section )?(\.\S+)", line)
        if header:
            name = header.group(1)
            blocks[name] = []
        elif name is not None:
            blocks[name].append(line)
    rows = re.findall(r"^ +([0-9a-f]+) +[0-9a-f]+ +([0-9a-f]+) +([0-9a-f]+) +([0-9a-f]+) +(\S+) +([0-9a-f]+) +"
                      r"([0-9a-f]+) +([0-9a-f]+) (\S+)$", text.split("\n.section")[0], re.M)
    sections = {int(r[0], 16): r[-1] for r in rows}
    symbols = {}
    for line in blocks[".symtab"][1:]:
        fields = line.split()
        if len(fields) >= 8:
            symbols[int(fields[0], 16)] = fields
    kernels = {f[-1] for f in symbols.values() if f[3] == "FUNC" and f[4] == "GLOBAL"}
    view = {"header": text.strip().split("\n")[0]}
    for index, size, es, align, stype, flags, link, info, sname in rows:
        if sname in NOT_LOADED:
            continue
        info = int(info, 16)
        target = symbols[info][-1] if sname.startswith(".text.") else sections.get(info, info)
        if sname == ".nv.info":
            size = None   # its records are compared below, those of nvcc's subroutines left out
        view["section " + sname] = (size, es, align, stype, flags, sections.get(int(link, 16), 0), target)
    view["symbols"] = sorted(tuple(f[1:7]) + (sections.get(int(f[7], 16), f[7]), f[-1] if len(f) > 8 else "")
                             for f in symbols.values() if not (f[3] == "FUNC" and f[4] == "LOCAL"))

    def named(record: str) -> str:
        record = re.sub(r"\(0x[0-9a-f]+\)", "", record)   # function: NAME(0xN) -> NAME
        if "EIATTR_PARAM_CBANK" in record:   # its value starts with the bank's section symbol
            record = re.sub(r"(Value:\t)(0x[0-9a-f]+)", lambda m: m.group(1) + symbols[int(m.group(2), 16)][-1], record)
        return record
    for bname, lines in blocks.items():
        if bname in NOT_LOADED:
            continue
        if bname.startswith(".nv.info"):
            records = "\n".join(lines).split("\t<0x")[1:]
            records = [named(r.split("\n", 1)[1].strip()) for r in records]
            if bname == ".nv.info":
                records = [r for r in records if re.search(r"function: (\S+)", r).group(1) in kernels]
            view[bname] = records
        else:
            view[bname] = "\n".join(lines).strip()
    return view


@pytest.mark.oracle
def test_sm90_fe_math_double_as_the_loader_sees_it(nvcc_cubins, tmp_path):
    """fe_math_double's module variables (.nv.global.init tables, .nv.constant4 with
    .rela.nv.constant4) rewritten for sm_90.  Not byte for byte: nvcc's code calls
    ptxas's own subroutines ($__internal_0_$__cuda_sm20_drsqrt_f64_slowpath_v2 & co.),
    which carry LOCAL FUNC symbols inside the kernel's .text, a FRAME_SIZE record each
    and FDEs with a CIE of their own; KernelImage does not model them (ptxc lays its
    subroutines out in the kernel's .text without symbols).  Everything the loader reads
    is nvcc's, and NVIDIA's tools read the file cleanly."""
    theirs = nvcc_cubins(TESTSUITE / "fe_math_double.cu", "sm_90")
    cubin = read_cubin(theirs.read_bytes())
    assert {v.section for v in cubin.variables} == {".nv.global.init"}
    ours = tmp_path / "ours.cubin"
    ours.write_bytes(rewrite_all(theirs.read_bytes(), **cubin.tool_strings()))
    assert ours.read_bytes() != theirs.read_bytes()
    for tool, args in (("cuobjdump", ["-elf"]), ("cuobjdump", ["-sass"]), ("nvdisasm", ["-c"])):
        proc = oracle.run(tool, *args, str(ours))
        assert proc.stderr == "", f"{tool} {args}: {proc.stderr}"
    assert loader_view(ours) == loader_view(theirs)


# An equivalent of what ptxc's sm_90 kernels need at once: module variables (a
# zero-initialized and an initialized __device__, a __constant__), a stack frame in a
# straight-line kernel (volatile local array), dynamic shared memory (every kernel gets
# the window), and a call to a recursive function (a subroutine inside the caller's .text).
EQUIVALENT = """
__device__ int hits;
__device__ float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__constant__ float coef[4] = {0.5f, 0.25f, 2.0f, 4.0f};
extern __shared__ float dyn[];

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__global__ void frame(const int* idx, float* out) {
    volatile float local[16];
    for (int i = 0; i < 16; ++i) local[i] = coef[i & 3] * i + table[i & 3];
    out[threadIdx.x] = local[idx[threadIdx.x] & 15];
    atomicAdd(&hits, 1);
}
__global__ void dynamic(const float* in, float* out) {
    dyn[threadIdx.x] = in[threadIdx.x] * coef[1];
    __syncthreads();
    out[threadIdx.x] = dyn[(threadIdx.x + 1) % blockDim.x] + table[threadIdx.x & 3];
}
__global__ void calls(int* out, int n) { out[threadIdx.x] = fib(n + threadIdx.x % 4) + hits; }
"""


@pytest.mark.oracle
def test_sm90_kernels_with_everything_read_cleanly(tmp_path):
    """write_cubin(arch="sm_90") for kernels built field by field as the lowering fills
    them (nvcc's code for the text): cuobjdump and nvdisasm read the file without a
    word, and the loader sees what nvcc wrote for the same source (loader_view; nvcc's
    subroutine symbol $_Z5callsPii$_Z3fibi and its FRAME_SIZE aside)."""
    source = tmp_path / "equivalent.cu"
    source.write_text(EQUIVALENT)
    theirs = oracle.nvcc_cubin(source, tmp_path / "nvcc.cubin", "sm_90")
    nvcc = {k.name: k for k in read_cubin(theirs.read_bytes()).kernels}

    def image(name: str, **facts) -> KernelImage:
        k = nvcc[name]   # code, parameters, registers and exits of nvcc's kernel
        return KernelImage(name, k.text, k.params, k.regcount, k.exit_offsets, param_base=0x210,
                           shared_size=0x400, shared_align=16, dynamic_shared=True, **facts)
    kernels = [  # source order
        image("_Z5framePKiPf", frame_size=0x40, min_stack_size=0x40, straight_line=True, cfa_offset=0x50,
              int_warp_wide_offsets=nvcc["_Z5framePKiPf"].int_warp_wide_offsets, shared_referenced=False),
        image("_Z7dynamicPKfPf", num_barriers=1),
        image("_Z5callsPii", calls=True, min_stack_size=0xFFFFFFFF, crs_stack_size=0xFFFFFFFF,
              shared_referenced=False),
    ]
    variables = [ModuleVariable("hits", "global", 4, 4, 0, address_slot=0),
                 ModuleVariable("table", "global", 16, 4, 0, struct.pack("<4f", 1, 2, 3, 4), address_slot=8),
                 ModuleVariable("coef", "const", 16, 4, 0, struct.pack("<4f", 0.5, 0.25, 2, 4))]
    ours = tmp_path / "ours.cubin"
    ours.write_bytes(write_cubin(kernels, arch="sm_90", variables=variables,
                                 **read_cubin(theirs.read_bytes()).tool_strings()))
    for tool, args in (("cuobjdump", ["-elf"]), ("cuobjdump", ["-sass"]), ("nvdisasm", ["-c"])):
        proc = oracle.run(tool, *args, str(ours))
        assert proc.stderr == "", f"{tool} {args}: {proc.stderr}"
    assert loader_view(ours) == loader_view(theirs)
    back = read_cubin(ours.read_bytes())
    assert back.kernels == kernels and back.variables == variables


def test_sm90_module_variables_layout():
    """The sm_90 layout of module variables (no oracle needed): the module's banks before
    the code with a LOAD segment of their own, RELA address relocations, .nv.global.init
    after the code, .nv.global after the reserved window; kernels and variables read back."""
    kernels = [KernelImage("k1", nop_text(8), [(0, 8)], 8, [0x40], param_base=0x210, shared_size=0x440),
               KernelImage("k2", nop_text(8), [(0, 8)], 8, [0x40], param_base=0x210, calls=True,
                           req_threads=(64, 1, 1), int_warp_wide_offsets=[0x10, 0x20])]
    variables = [ModuleVariable("g", "global", 4, 4, 0, address_slot=0),
                 ModuleVariable("gi", "global", 8, 8, 0, bytes(range(8)), address_slot=8),
                 ModuleVariable("c", "const", 12, 4, 0, bytes(range(12))),
                 ModuleVariable("vg", "global", 4, 4, 4, address_slot=16, visible=True)]
    data = write_cubin(kernels, arch="sm_90", variables=variables)
    cubin = read_cubin(data)
    assert cubin.kernels == kernels
    assert sorted(cubin.variables, key=lambda v: v.name) == sorted(variables, key=lambda v: v.name)
    names = [s.name for s in cubin.sections]
    assert names.index(".rela.text.k2") < names.index(".rela.nv.constant4") < names.index(".rela.debug_frame") \
        < names.index(".nv.constant4") < names.index(".nv.constant3") < names.index(".text.k2")
    assert names.index(".text.k1") < names.index(".nv.global.init") < names.index(".nv.shared.reserved.0") \
        < names.index(".nv.global") < names.index(".nv.shared.k1") < names.index(".nv.constant0.k2")
    relocs = cubin.relocations[".rela.nv.constant4"]
    assert [(r.offset, cubin.symbols[r.symbol].name, r.addend) for r in relocs] == \
        [(16, "vg", 0), (8, "gi", 0), (0, "g", 0)]
    assert [(p.type, p.flags) for p in cubin.segments] == \
        [(elf.PT_PHDR, 4), (elf.PT_LOAD, 4), (elf.PT_LOAD, 4), (elf.PT_LOAD, 5), (elf.PT_LOAD, 6), (elf.PT_LOAD, 4)]
    banks = cubin.segments[2]
    assert (banks.offset, banks.filesz) == (cubin.section(".nv.constant4").offset, 24 + 12)
    writable = cubin.segments[4]
    assert (writable.offset, writable.filesz, writable.memsz) == (cubin.section(".nv.global.init").offset, 8, 8 + 8 + 0x440)
    records = [r.name for r in cubin.kernel_info["k2"]]
    assert records.index("EIATTR_INT_WARP_WIDE_INSTR_OFFSETS") < records.index("EIATTR_EXIT_INSTR_OFFSETS") \
        < records.index("EIATTR_REQNTID")


def test_frame_fields_round_trip():
    """straight_line, fde_end, cfi_undefined, dynamic_shared and shared_referenced come
    back from both layouts."""
    base = dict(param_base=0x210, shared_align=16)
    kernels = [KernelImage("a", nop_text(16), [], 8, [0xF0], frame_size=0x40, min_stack_size=0x40,
                           straight_line=True, cfa_offset=0x50, param_base=0x210),
               KernelImage("b", nop_text(16), [], 8, [0x50, 0xE0], fde_end=0xC0, cfi_undefined=[(0x20, 2), (0x30, 3)],
                           cfa_offset=0x70, shared_size=0x400, dynamic_shared=True, **base),
               KernelImage("c", nop_text(16), [], 8, [0xE0], shared_size=0x400, dynamic_shared=True,
                           shared_referenced=False, **base)]
    assert read_cubin(write_cubin(kernels, arch="sm_90")).kernels == kernels
    sm89 = [KernelImage(k.name, k.text, k.params, k.regcount, k.exit_offsets, frame_size=k.frame_size,
                        min_stack_size=k.min_stack_size, straight_line=k.straight_line, cfa_offset=k.cfa_offset,
                        fde_end=k.fde_end, shared_align=k.shared_align, dynamic_shared=k.dynamic_shared)
            for k in kernels]
    assert read_cubin(write_cubin(sm89)).kernels == sm89


def test_relocation_offset_out_of_range():
    """Regression (mutated cubins given to `ptxc dump`): a .rel.debug_frame entry whose
    offset is past any size was an internal OverflowError, not a CubinError."""
    from ptxc.driver import cubin_bytes, load_module, lower_module
    from ptxc.lower.pipeline import Options
    ptx = (Path(__file__).resolve().parent.parent / "testsuite" / "lower" / "fold_cvta.ptx")
    data = bytearray(cubin_bytes(lower_module(load_module(str(ptx), ptx.read_text()), Options()), "sm_89"))
    rel = next(s for s in read_cubin(bytes(data)).sections if s.name == ".rel.debug_frame")
    struct.pack_into("<Q", data, rel.offset, (1 << 63) + 5)      # the first entry's r_offset
    with pytest.raises(CubinError, match="malformed cubin: an offset out of range"):
        read_cubin(bytes(data), "bad.cubin")


def test_every_damaged_cubin_names_what_is_wrong(ours):
    """Issue 16: `ptxc dump` of some damaged cubins said `malformed cubin: ` and nothing
    more (an exception without a message).  Bytes of the header, section headers and
    .nv.info records changed at random, 400 ways: every error names a reason."""
    import random
    rng = random.Random(16)
    header = elf.Header.unpack(ours)
    spans = [(0, 64), (header.shoff, header.shoff + header.shnum * elf.SHDR.size), (0, len(ours))]
    for _ in range(400):
        broken = bytearray(ours)
        lo, hi = rng.choice(spans)
        for _ in range(rng.randint(1, 4)):
            broken[rng.randrange(lo, min(hi, len(broken)))] = rng.randrange(256)
        try:
            read_cubin(bytes(broken[:rng.choice([len(broken), rng.randrange(64, len(broken))])]))
        except CubinError as err:
            message = str(err)
            assert not message.rstrip().endswith("malformed cubin:"), message
