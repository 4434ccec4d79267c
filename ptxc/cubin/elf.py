"""ELF64 little-endian structures: header, section and program headers, symbols,
relocations and string tables.  Generic ELF only; what is CUDA-specific lives in
writer.py and reader.py."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")   # Elf64_Ehdr, 64 bytes
SHDR = struct.Struct("<IIQQQQIIQQ")         # Elf64_Shdr, 64 bytes
PHDR = struct.Struct("<IIQQQQQQ")           # Elf64_Phdr, 56 bytes
SYM = struct.Struct("<IBBHQQ")              # Elf64_Sym, 24 bytes
REL = struct.Struct("<QQ")                  # Elf64_Rel, 16 bytes
RELA = struct.Struct("<QQq")                # Elf64_Rela, 24 bytes
NHDR = struct.Struct("<III")                # Elf64_Nhdr: namesz, descsz, type

ELFMAG = b"\x7fELF"
ELFCLASS64, ELFDATA2LSB, EV_CURRENT = 2, 1, 1
ET_EXEC = 2

SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB = 0, 1, 2, 3
SHT_RELA, SHT_NOTE, SHT_NOBITS, SHT_REL = 4, 7, 8, 9

SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR, SHF_INFO_LINK = 0x1, 0x2, 0x4, 0x40

PT_LOAD, PT_PHDR = 1, 6
PF_X, PF_W, PF_R = 1, 2, 4

STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION = 0, 1, 2, 3


def align_up(value: int, alignment: int) -> int:
    return value if alignment <= 1 else (value + alignment - 1) // alignment * alignment


@dataclass
class Header:
    """The Elf64_Ehdr fields a cubin varies; the rest are fixed by ELF64-LE."""
    osabi: int
    abiversion: int
    type: int
    machine: int
    flags: int
    entry: int = 0
    phoff: int = 0
    shoff: int = 0
    phnum: int = 0
    shnum: int = 0
    shstrndx: int = 0

    def pack(self) -> bytes:
        ident = ELFMAG + bytes([ELFCLASS64, ELFDATA2LSB, EV_CURRENT, self.osabi, self.abiversion])
        return EHDR.pack(ident.ljust(16, b"\0"), self.type, self.machine, EV_CURRENT,
                         self.entry, self.phoff, self.shoff, self.flags, EHDR.size,
                         PHDR.size, self.phnum, SHDR.size, self.shnum, self.shstrndx)

    @classmethod
    def unpack(cls, data: bytes) -> "Header":
        (ident, etype, machine, _version, entry, phoff, shoff, flags, _ehsize,
         _phentsize, phnum, _shentsize, shnum, shstrndx) = EHDR.unpack_from(data, 0)
        return cls(osabi=ident[7], abiversion=ident[8], type=etype, machine=machine,
                   flags=flags, entry=entry, phoff=phoff, shoff=shoff, phnum=phnum,
                   shnum=shnum, shstrndx=shstrndx)


@dataclass
class Section:
    """One section: its header fields and contents.  For SHT_NOBITS, `size` holds the
    size and `data` stays empty; otherwise the size is len(data)."""
    name: str
    type: int
    flags: int = 0
    data: bytes = b""
    link: int = 0
    info: int = 0
    align: int = 1
    entsize: int = 0
    addr: int = 0
    offset: int = 0       # set by the layout (writer) or from the file (reader)
    nobits_size: int = 0
    name_offset: int = 0  # offset of `name` in .shstrtab

    @property
    def size(self) -> int:
        return self.nobits_size if self.type == SHT_NOBITS else len(self.data)

    def pack_header(self) -> bytes:
        return SHDR.pack(self.name_offset, self.type, self.flags, self.addr, self.offset,
                         self.size, self.link, self.info, self.align, self.entsize)


@dataclass
class Segment:
    """One program header."""
    type: int
    flags: int
    offset: int
    filesz: int
    memsz: int
    align: int = 8
    vaddr: int = 0
    paddr: int = 0

    def pack(self) -> bytes:
        return PHDR.pack(self.type, self.flags, self.offset, self.vaddr, self.paddr,
                         self.filesz, self.memsz, self.align)

    @classmethod
    def unpack(cls, data: bytes, offset: int) -> "Segment":
        ptype, flags, off, vaddr, paddr, filesz, memsz, align = PHDR.unpack_from(data, offset)
        return cls(ptype, flags, off, filesz, memsz, align, vaddr, paddr)


@dataclass
class Symbol:
    name: str
    value: int = 0
    size: int = 0
    bind: int = STB_LOCAL
    type: int = STT_NOTYPE
    other: int = 0
    shndx: int = 0
    name_offset: int = 0  # offset of `name` in .strtab

    def pack(self) -> bytes:
        return SYM.pack(self.name_offset, (self.bind << 4) | self.type, self.other,
                        self.shndx, self.value, self.size)


@dataclass
class Relocation:
    offset: int
    symbol: int
    type: int
    addend: int | None = None  # None for SHT_REL entries

    def pack(self) -> bytes:
        info = (self.symbol << 32) | self.type
        if self.addend is None:
            return REL.pack(self.offset, info)
        return RELA.pack(self.offset, info, self.addend)


def unpack_relocations(data: bytes, with_addend: bool) -> list[Relocation]:
    entry = RELA if with_addend else REL
    relocs = []
    for pos in range(0, len(data) - entry.size + 1, entry.size):
        offset, info, *addend = entry.unpack_from(data, pos)
        relocs.append(Relocation(offset, info >> 32, info & 0xFFFFFFFF,
                                 addend[0] if addend else None))
    return relocs


@dataclass
class StringTable:
    """An ELF string table: a leading NUL, then each distinct string once, in the order
    added."""
    offsets: dict[str, int] = field(default_factory=lambda: {"": 0})
    blob: bytearray = field(default_factory=lambda: bytearray(b"\0"))

    def add(self, name: str) -> int:
        if name not in self.offsets:
            self.offsets[name] = len(self.blob)
            self.blob += name.encode() + b"\0"
        return self.offsets[name]

    def data(self) -> bytes:
        return bytes(self.blob)


def string_at(table: bytes, offset: int) -> str:
    end = table.find(b"\0", offset)
    if offset >= len(table) or end < 0:
        raise ValueError(f"string offset {offset:#x} outside its table")
    return table[offset:end].decode("utf-8", "replace")


def pack_note(name: bytes, note_type: int, desc: bytes) -> bytes:
    """An ELF note: header, NUL-terminated name and desc, each padded to 4 bytes."""
    name_z = name + b"\0"
    return (NHDR.pack(len(name_z), len(desc), note_type)
            + name_z.ljust(align_up(len(name_z), 4), b"\0")
            + desc.ljust(align_up(len(desc), 4), b"\0"))


def unpack_notes(data: bytes) -> list[tuple[bytes, int, bytes]]:
    """(name without NUL, type, desc) of each note in a SHT_NOTE section."""
    notes, pos = [], 0
    while pos + NHDR.size <= len(data):
        namesz, descsz, note_type = NHDR.unpack_from(data, pos)
        pos += NHDR.size
        name = data[pos:pos + namesz].rstrip(b"\0")
        pos += align_up(namesz, 4)
        desc = data[pos:pos + descsz]
        if len(desc) < descsz:
            raise ValueError("note runs past the end of its section")
        pos += align_up(descsz, 4)
        notes.append((name, note_type, desc))
    return notes
