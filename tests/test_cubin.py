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
from ptxc.cubin.writer import sleb128, uleb128

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
        write_cubin([good], arch="sm_80")
    with pytest.raises(ValueError, match="at least one kernel"):
        write_cubin([])
    with pytest.raises(ValueError, match="16-byte instructions"):
        write_cubin([KernelImage("k", b"\0" * 8, [], 4, [0])])
    with pytest.raises(ValueError, match="exit offsets"):
        write_cubin([KernelImage("k", nop_text(2), [], 4, [0x40])])
    with pytest.raises(ValueError, match="same name"):
        write_cubin([good, good])


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
