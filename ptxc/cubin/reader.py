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
from .writer import (ADDRESS_BANK, CONST_BANK, DW_CFA_advance_loc4, DW_CFA_def_cfa, DW_CFA_nop,
                     DW_CFA_undefined, DWARF_REG_BASE, EM_CUDA, GLOBAL_INIT, GLOBAL_ZERO,
                     STV_INTERNAL, KernelImage, ModuleVariable)
from ..sass.target import DEFAULT, TARGETS


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

    @property
    def virtual_arch(self) -> str:
        """The SM .note.nv.cuinfo records: the PTX `.target` (sm_89 PTX built for sm_90
        says 89); the file's arch when there is no such note."""
        for _owner, _type, desc in self.notes.get(".note.nv.cuinfo", []):
            if len(desc) >= 4:
                return f"sm_{struct.unpack_from('<H', desc, 2)[0]}"
        return self.arch

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
    except (struct.error, ValueError, IndexError, KeyError, StopIteration, OverflowError) as err:
        raise CubinError(f"malformed cubin: {_reason(err)}", filename) from None


def _reason(err: Exception) -> str:
    """What was wrong, in words, also for exceptions that carry no message
    (`next()` on no match, an empty KeyError): the message said nothing then."""
    if isinstance(err, OverflowError):
        return "an offset out of range"
    if isinstance(err, StopIteration):
        return "a section or record the file refers to is missing"
    if isinstance(err, KeyError):
        return f"no {err.args[0]!r} where the file refers to one" if err.args else "a name the file refers to is missing"
    if isinstance(err, (struct.error, IndexError)):
        return f"a table or record ends early ({err})" if str(err) else "a table or record ends early"
    return str(err) or type(err).__name__


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
    relocations = cubin.relocations.get(".rel" + ADDRESS_BANK) or cubin.relocations.get(".rela" + ADDRESS_BANK, [])
    slots = {r.symbol: r.offset for r in relocations}   # sm_89: REL; sm_90: RELA
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
                        param_base=TARGETS.get(cubin.arch, TARGETS[DEFAULT]).param_base)
    for r in records:
        _apply_kernel_record(image, r)
    for r in cubin.info:
        if r.fmt == ni.EIFMT_SVAL and len(r.value) == 8 and ni.unpack_words(r.value)[0] == symbol:
            _apply_global_record(image, r)
    pool = cubin.section(f".nv.constant2.{name}")
    if pool is not None:
        image.constant_pool = bytes(pool.data)
    shared = cubin.section(f".nv.shared.{name}")
    if shared is not None:
        image.shared_size, image.shared_align = shared.size, shared.align
        shared_index = cubin.sections.index(shared)
        has_symbol = any(s.type == elf.STT_SECTION and s.shndx == shared_index for s in cubin.symbols)
        image.dynamic_shared = not has_symbol   # a window without variables: `extern .shared`
    if _layout(cubin.arch) == "hopper":
        _apply_relocated(cubin, image, text, symbol, shared is not None)
    _apply_frame(image, _fde_rows(cubin, symbol), cubin.arch)
    return image


def _layout(arch: str) -> str | None:
    """The cubin layout family of `arch` (ptxc.sass.target), None for a target ptxc lacks."""
    known = TARGETS.get(arch)
    return known.layout if known else None


def _apply_relocated(cubin: Cubin, image: KernelImage, text: Section, symbol: int, window: bool) -> None:
    """sm_90: `calls` and `shared_referenced` from the empty .rela.text.<k> ptxas keeps for
    both, nvcc's subroutine symbols in the kernel's .text, and the nameless
    .nv.reservedSmem.cap symbol that follows the first kernel addressing shared memory
    (kernels before it in file order do not).  Where the file cannot tell (a kernel after
    that one, with calls and a window), the default (it does) is kept."""
    relocated = cubin.section(f".rela.text.{image.name}") is not None
    text_index = cubin.sections.index(text)
    subroutines = any(s.type == elf.STT_FUNC and s.bind == elf.STB_LOCAL and s.shndx == text_index
                      for s in cubin.symbols)   # nvcc's, laid out in the kernel's .text
    cap = next((i for i, s in enumerate(cubin.symbols) if not s.name and s.other == STV_INTERNAL), None)
    if cap is None:
        references = False
    else:
        cap_kernel = max((i for i, s in enumerate(cubin.symbols[:cap]) if s.type == elf.STT_FUNC and s.bind == elf.STB_GLOBAL),
                         default=None)
        kernel_order = [i for i, s in enumerate(cubin.symbols) if s.type == elf.STT_FUNC and s.bind == elf.STB_GLOBAL]
        if cap_kernel is None or symbol not in kernel_order:   # the cap comes before every kernel (isa_memory)
            references = True
        else:
            position, cap_position = kernel_order.index(symbol), kernel_order.index(cap_kernel)
            references = position == cap_position or (position > cap_position and relocated and window)
    image.calls = subroutines or (relocated and not references)
    if window and not references:
        image.shared_referenced = False


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
    elif name == "EIATTR_REQNTID":
        image.req_threads = tuple(ni.unpack_words(r.value))
    elif name == "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS":
        image.int_warp_wide_offsets = ni.unpack_words(r.value)


def _apply_global_record(image: KernelImage, r: ni.Record) -> None:
    value = ni.unpack_words(r.value)[1]
    if r.name == "EIATTR_REGCOUNT":
        image.regcount = value
    elif r.name == "EIATTR_FRAME_SIZE":
        image.frame_size = value
    elif r.name == "EIATTR_MIN_STACK_SIZE":
        image.min_stack_size = value


def _fde_rows(cubin: Cubin, symbol: int) -> list[tuple[int, list]] | None:
    """The kernel's FDE as rows (location, [(op, operands)]): each DW_CFA_advance_loc4
    starts a row; def_cfa and undefined go into the current one.  None when there is no
    FDE or it holds something else."""
    frame = cubin.section(".debug_frame")
    relocs = cubin.relocations.get(".rel.debug_frame") or cubin.relocations.get(".rela.debug_frame", [])  # sm_90: RELA
    if frame is None:
        return None
    data = frame.data

    def location(r: elf.Relocation) -> int:   # RELA: the addend; REL: the bytes in place
        return r.addend if r.addend is not None else struct.unpack_from("<Q", data, r.offset)[0]
    # the kernel's own FDE: nvcc's callees have FDEs relocated against the kernel too
    reloc = next((r for r in relocs if r.symbol == symbol and location(r) == 0), None)
    if reloc is None:
        return None
    length = struct.unpack_from("<Q", data, reloc.offset - 16)[0]   # the FDE's 64-bit length
    end = reloc.offset - 8 + length
    pos = reloc.offset + 16   # the FDE's instructions follow initial_location and address_range
    rows, location = [(0, [])], 0

    def uleb() -> int:
        nonlocal pos
        value = shift = 0
        while True:
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value
    while pos < end:
        op = data[pos]
        pos += 1
        if op == DW_CFA_advance_loc4:
            location = (location + struct.unpack_from("<I", data, pos)[0] * 4) & 0xFFFFFFFF
            pos += 4
            rows.append((location, []))
        elif op == DW_CFA_def_cfa:
            rows[-1][1].append(("def_cfa", uleb() - DWARF_REG_BASE, uleb()))
        elif op == DW_CFA_undefined:
            rows[-1][1].append(("undefined", uleb() - DWARF_REG_BASE))
        elif op == DW_CFA_nop:
            continue
        else:
            return None
    return rows


def _apply_frame(image: KernelImage, rows: list | None, arch: str) -> None:
    """cfa_offset, straight_line, fde_end and cfi_undefined from the FDE's rows (see
    writer._fde and writer._fde_sm90), each left at its default where that writes the
    same."""
    if not rows:
        return
    cfa_rows = [location for location, ops in rows if any(op[0] == "def_cfa" for op in ops)]
    if not cfa_rows:
        return
    cfa_at = cfa_rows[0]
    if cfa_at != image.cfa_location():  # keep None where the default gives the same
        image.cfa_offset = cfa_at
    image.cfi_undefined = [(location, op[1]) for location, ops in rows for op in ops if op[0] == "undefined"]
    last_location, last_ops = rows[-1]
    last_cfa = [op for op in last_ops if op[0] == "def_cfa"]
    if image.frame_size and last_cfa and last_cfa[-1][2] == 0 and last_location == cfa_at:
        image.straight_line = True   # CFA = R1 + 0 at the CFA point; no advance to the EXIT
        return
    # the row the FDE ends at: the last one without instructions (the Ada layout's first row, the
    # advance past the first instruction, is not it)
    ends = [location for location, ops in rows[2 if _layout(arch) == "ada" else 1:] if not ops]
    if ends and ends[-1] != max(image.exit_offsets, default=image.cfa_location()):
        image.fde_end = ends[-1]
