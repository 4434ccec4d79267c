"""Read a cubin (ours or nvcc's): ELF sections and symbols, .nv.info records, notes,
constant banks, relocations, and per kernel the KernelImage that write_cubin would
need to write it again.  Anything that is not a well-formed 64-bit CUDA ELF raises
CubinError."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from . import elf
from . import nvinfo as ni
from .elf import Section, Segment, Symbol
from .writer import (ADDRESS_BANK, CONST_BANK, EM_CUDA, GLOBAL_INIT, GLOBAL_ZERO, PARAM_BASE,
                     KernelImage, ModuleVariable)


class CubinError(Exception):
    """Not a readable cubin.  str() says why; `filename` says which file, so the CLI
    can print `{filename}: error: {message}`."""

    def __init__(self, message: str, filename: str = "x.cubin"):
        super().__init__(message)
        self.filename = filename


@dataclass
class Cubin:
    filename: str
    header: elf.Header
    sections: list[Section]                 # index 0 is the null section
    segments: list[Segment]
    symbols: list[Symbol]
    info: list[ni.Record]                   # the global .nv.info
    kernel_info: dict[str, list[ni.Record]]  # .nv.info.<kernel>
    constant_banks: dict[str, bytes]        # section name -> contents (.nv.constant0.<kernel>, ...)
    relocations: dict[str, list[elf.Relocation]]  # relocation section name -> entries
    notes: dict[str, list[tuple[bytes, int, bytes]]]
    kernels: list[KernelImage] = field(default_factory=list)  # source order, as write_cubin takes them
    variables: list[ModuleVariable] = field(default_factory=list)  # as write_cubin takes them

    @property
    def arch(self) -> str:
        return f"sm_{(self.header.flags >> 8) & 0xFF}"

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def kernel(self, name: str) -> KernelImage:
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(name)

    def tool_strings(self) -> dict[str, str]:
        """Tool name, version, branch and args from .note.nv.tkinfo."""
        for _owner, _type, desc in self.notes.get(".note.nv.tkinfo", []):
            if len(desc) >= 24:
                offsets = struct.unpack_from("<5I", desc, 4)
                blob = desc[24:]
                keys = ("", "tool_name", "tool_version", "tool_branch", "tool_args")
                return {key: elf.string_at(blob, off) for key, off in zip(keys, offsets) if key}
        return {}


def read_cubin(data: bytes, filename: str = "x.cubin") -> Cubin:
    try:
        return _read(bytes(data), filename)
    except CubinError:
        raise
    except (struct.error, ValueError, IndexError, KeyError, StopIteration) as err:
        raise CubinError(f"malformed cubin: {err}", filename) from None


def _read(data: bytes, filename: str) -> Cubin:
    header = _check_header(data, filename)
    sections = _read_sections(data, header, filename)
    by_name = {s.name: i for i, s in enumerate(sections)}
    symbols = _read_symbols(sections)
    segments = [Segment.unpack(data, header.phoff + i * elf.PHDR.size)
                for i in range(header.phnum)]
    cubin = Cubin(
        filename=filename, header=header, sections=sections, segments=segments,
        symbols=symbols,
        info=ni.decode_records(sections[by_name[".nv.info"]].data) if ".nv.info" in by_name else [],
        kernel_info={s.name.removeprefix(".nv.info."): ni.decode_records(s.data)
                     for s in sections if s.name.startswith(".nv.info.")},
        constant_banks={s.name: s.data for s in sections if s.name.startswith(".nv.constant")},
        relocations={s.name: elf.unpack_relocations(s.data, s.type == elf.SHT_RELA)
                     for s in sections if s.type in (elf.SHT_REL, elf.SHT_RELA)},
        notes={s.name: elf.unpack_notes(s.data) for s in sections if s.type == elf.SHT_NOTE})
    cubin.kernels = [_kernel(cubin, s) for s in reversed(sections)
                     if s.name.startswith(".text.") and _is_kernel(cubin, s)]
    cubin.variables = _variables(cubin)
    return cubin


def _variables(cubin: Cubin) -> list[ModuleVariable]:
    """The `.global` and `.const` variables: STT_OBJECT symbols in .nv.constant3,
    .nv.global and .nv.global.init, with their bytes and their .nv.constant4 address
    slots, in the order ptxas placed them: the `.visible` (GLOBAL) ones first, then
    the others, each in symbol-table order."""
    spaces = {CONST_BANK: "const", GLOBAL_ZERO: "global", GLOBAL_INIT: "global"}
    slots = {r.symbol: r.offset for r in cubin.relocations.get(".rel" + ADDRESS_BANK, [])}
    variables = []
    for number, sym in sorted(enumerate(cubin.symbols), key=lambda e: e[1].bind != elf.STB_GLOBAL):
        section = cubin.sections[sym.shndx] if 0 < sym.shndx < len(cubin.sections) else None
        if sym.type != elf.STT_OBJECT or section is None or section.name not in spaces:
            continue
        init = section.data[sym.value:sym.value + sym.size] if section.name != GLOBAL_ZERO else None
        variables.append(ModuleVariable(
            sym.name, spaces[section.name], sym.size, _alignment(sym.value, section.align),
            sym.value, init, slots.get(number), sym.bind == elf.STB_GLOBAL))
    return variables


def _alignment(offset: int, section_align: int) -> int:
    """A variable's alignment as far as the file shows it: the largest power of two
    that divides its offset, at most its section's alignment."""
    align = max(section_align, 1)
    while offset % align:
        align //= 2
    return align


def _check_header(data: bytes, filename: str) -> elf.Header:
    if len(data) < elf.EHDR.size:
        raise CubinError(f"file too short for an ELF header ({len(data)} bytes)", filename)
    if data[:4] != elf.ELFMAG:
        raise CubinError("not an ELF file", filename)
    if data[4] != elf.ELFCLASS64 or data[5] != elf.ELFDATA2LSB:
        raise CubinError("not a 64-bit little-endian ELF file", filename)
    header = elf.Header.unpack(data)
    if header.machine != EM_CUDA:
        raise CubinError(f"ELF file for machine {header.machine}, not CUDA ({EM_CUDA})", filename)
    needed = max(header.shoff + header.shnum * elf.SHDR.size,
                 header.phoff + header.phnum * elf.PHDR.size)
    if needed > len(data):
        raise CubinError(f"truncated: headers end at {needed:#x}, "
                         f"file is {len(data):#x} bytes", filename)
    if header.shstrndx >= header.shnum:
        raise CubinError("no section name table", filename)
    return header


def _read_sections(data: bytes, header: elf.Header, filename: str) -> list[Section]:
    sections = []
    for i in range(header.shnum):
        (name_offset, stype, flags, addr, offset, size, link, info, align,
         entsize) = elf.SHDR.unpack_from(data, header.shoff + i * elf.SHDR.size)
        if stype not in (elf.SHT_NOBITS, elf.SHT_NULL) and offset + size > len(data):
            raise CubinError(f"truncated: section {i} ends at {offset + size:#x}, "
                             f"file is {len(data):#x} bytes", filename)
        contents = b"" if stype in (elf.SHT_NOBITS, elf.SHT_NULL) else data[offset:offset + size]
        sections.append(Section("", stype, flags, contents, link, info, align, entsize, addr,
                                offset, size if stype == elf.SHT_NOBITS else 0, name_offset))
    names = sections[header.shstrndx].data
    for s in sections:
        s.name = elf.string_at(names, s.name_offset) if s.type != elf.SHT_NULL else ""
    return sections


def _read_symbols(sections: list[Section]) -> list[Symbol]:
    symtab = next((s for s in sections if s.type == elf.SHT_SYMTAB), None)
    if symtab is None:
        return []
    names = sections[symtab.link].data
    symbols = []
    for pos in range(0, len(symtab.data), elf.SYM.size):
        name_offset, info, other, shndx, value, size = elf.SYM.unpack_from(symtab.data, pos)
        symbols.append(Symbol(elf.string_at(names, name_offset), value, size, info >> 4,
                              info & 0xF, other, shndx, name_offset))
    return symbols


def _is_kernel(cubin: Cubin, text: Section) -> bool:
    return text.name.removeprefix(".text.") in cubin.kernel_info


def _kernel(cubin: Cubin, text: Section) -> KernelImage:
    """Rebuild the KernelImage behind .text.<name> from its records and sections."""
    name = text.name.removeprefix(".text.")
    records = cubin.kernel_info[name]
    symbol = next(i for i, s in enumerate(cubin.symbols) if s.name == name)
    image = KernelImage(name=name, text=text.data, params=_params(records),
                        regcount=text.info >> 24, exit_offsets=[],
                        param_base=PARAM_BASE.get(cubin.arch, PARAM_BASE["sm_89"]))
    for r in records:
        _apply_kernel_record(image, r)
    for r in cubin.info:
        if r.fmt == ni.EIFMT_SVAL and len(r.value) == 8 and ni.unpack_words(r.value)[0] == symbol:
            _apply_global_record(image, r)
    shared = cubin.section(f".nv.shared.{name}")
    if shared is not None:
        image.shared_size, image.shared_align = shared.size, shared.align
    cfa_offset = _cfa_offset(cubin, symbol)
    if cfa_offset != image.cfa_location():  # keep None where the default gives the same
        image.cfa_offset = cfa_offset
    return image


def _params(records: list[ni.Record]) -> list[tuple[int, int]]:
    by_ordinal = {}
    for r in records:
        if r.name == "EIATTR_KPARAM_INFO":
            ordinal, offset, size = ni.unpack_kparam_info(r.value)
            by_ordinal[ordinal] = (offset, size)
    return [by_ordinal[i] for i in sorted(by_ordinal)]


def _apply_kernel_record(image: KernelImage, r: ni.Record) -> None:
    name = r.name
    if name == "EIATTR_PARAM_CBANK":
        image.param_base = struct.unpack_from("<IHH", r.value)[1]
    elif name == "EIATTR_MAXREG_COUNT":
        image.max_reg_count = r.value
    elif name == "EIATTR_NUM_BARRIERS":
        image.num_barriers = r.value
    elif name == "EIATTR_EXIT_INSTR_OFFSETS":
        image.exit_offsets = ni.unpack_words(r.value)
    elif name == "EIATTR_CRS_STACK_SIZE":
        image.crs_stack_size = ni.unpack_words(r.value)[0]
    elif name == "EIATTR_MAX_THREADS":
        image.max_threads = tuple(ni.unpack_words(r.value))


def _apply_global_record(image: KernelImage, r: ni.Record) -> None:
    value = ni.unpack_words(r.value)[1]
    if r.name == "EIATTR_REGCOUNT":
        image.regcount = value
    elif r.name == "EIATTR_FRAME_SIZE":
        image.frame_size = value
    elif r.name == "EIATTR_MIN_STACK_SIZE":
        image.min_stack_size = value


def _cfa_offset(cubin: Cubin, symbol: int) -> int | None:
    """Where the kernel's FDE re-states the CFA: the sum of the advances before its
    DW_CFA_def_cfa (see writer._fde)."""
    frame = cubin.section(".debug_frame")
    relocs = cubin.relocations.get(".rel.debug_frame") or cubin.relocations.get(".rela.debug_frame", [])  # sm_90: RELA
    reloc = next((r for r in relocs if r.symbol == symbol), None)
    if frame is None or reloc is None:
        return None
    pos = reloc.offset + 16  # the FDE's instructions follow initial_location and address_range
    location = 0
    while pos + 5 <= len(frame.data) and frame.data[pos] == 0x04:  # DW_CFA_advance_loc4
        location += struct.unpack_from("<I", frame.data, pos + 1)[0] * 4
        pos += 5
    return location
