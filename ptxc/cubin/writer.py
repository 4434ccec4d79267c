"""Write a cubin: kernels' SASS bytes and launch attributes -> an ELF file the CUDA
driver, cuobjdump and nvdisasm accept.

The layout is ptxas 13.5's, section for section and byte for byte, for sm_89 (_Plan)
and for sm_90, which ptxas lays out differently (_PlanSM90: .nv.compat, the reserved
shared window, constant banks after the code, five program headers; see docs/cubin.md).
Given nvcc's own .text and the same tool strings it reproduces nvcc's cubin exactly.
Kernels are passed in source (PTX) order; like ptxas, the file holds them in reverse
order.

Module-scope variables (ModuleVariable) are placed as ptxas places them while
it makes the first kernel of the file: `.visible` ones first, then the others, each
in declaration order, a section created (with its section symbol and names) the
first time a variable needs it.  `.const` -> .nv.constant3 (PROGBITS A, initial
bytes); `.global` -> .nv.global (NOBITS WA) or .nv.global.init (PROGBITS WA), and an
8-byte slot per `.global` in .nv.constant4 (PROGBITS A, zeros) that R_CUDA_64
relocations in .rel.nv.constant4 (last slot first) fill with its address.  The module
banks come after .rel.debug_frame in creation order, .nv.global.init after the code,
the NOBITS sections in creation order (the first kernel's shared window, .nv.global,
the others' windows); the writable LOAD segment covers .nv.global.init's bytes and
the NOBITS windows.  sm_90 places them the same way, with RELA relocations
(.rela.nv.constant4, addend 0), the module banks before the code with a LOAD segment
of their own, and .nv.global after .nv.shared.reserved.0 (_PlanSM90).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .. import __version__
from . import elf
from . import nvinfo as ni
from .elf import Section, Segment, Symbol
from ..sass.target import TARGETS, UnknownTarget, target

EM_CUDA = 190
ELFOSABI_CUDA = 0x41
CUDA_ABI_VERSION = 8

SHT_CUDA_INFO = 0x70000000
SHT_CUDA_CALLGRAPH = 0x70000001
SHT_CUDA_RELOCINFO = 0x7000000B
SHT_CUDA_COMPAT_INFO = 0x70000086
SHF_NOTE_TKINFO = 0x2000000    # flags ptxas gives its two notes
SHF_NOTE_CUINFO = 0x1000000
STO_CUDA_ENTRY = 0x10          # st_other of a kernel's symbol
R_CUDA_64 = 2                  # the .debug_frame relocation type

NOTE_OWNER = b"NVIDIA Corp"
NT_CUDA_TKINFO = 2000
NT_CUDA_CUINFO = 1000
NOTE_VERSION = 2
TOOLKIT_VERSION = 135          # 13.5: .note.nv.cuinfo and EIATTR_CUDA_API_VERSION

PTXC_TOOL_VERSION = f"ptxc {__version__}"
# What nvcc 13.5's ptxas writes; pass these (tool_name="ptxas") to reproduce its cubins.
NVCC_TOOL_VERSION = "Cuda compilation tools, release 13.5, V13.5.37"
NVCC_TOOL_BRANCH = "Build cuda_13.5.r13.5/compiler.39125733_0"

# What differs between architectures (e_flags, the parameter base, the reserved shared
# window, the layout family, the .nv.info records) is the target's record.

TEXT_ALIGN = 128
STACK_POINTER = 1              # R1: the CFA register in .debug_frame


@dataclass
class KernelImage:
    name: str                       # mangled name, e.g. "_Z4vaddPKfS0_Pfi"
    text: bytes                     # the encoded SASS, already padded to 128 bytes
    params: list[tuple[int, int]]   # (offset, size) of each parameter in the param buffer, by ordinal
    regcount: int                   # registers per thread (EIATTR_REGCOUNT)
    exit_offsets: list[int]         # byte offsets of EXIT instructions in text
    param_base: int = 0x160         # where parameters start in constant bank 0 (0x210 on sm_90)
    frame_size: int = 0
    min_stack_size: int = 0
    max_reg_count: int = 0xff
    shared_size: int = 0            # static shared memory bytes
    num_barriers: int = 0
    shared_align: int = 4           # alignment of .nv.shared.<kernel>: the largest .shared .align
    # Byte offset where .debug_frame re-states the CFA (R1 + frame_size): just past the
    # stack-pointer adjustment when there is a frame, else just past the instruction that
    # ends the entry block (its first branch or EXIT).  None: 0x20 with a frame, else
    # 16 past the first EXIT.
    cfa_offset: int | None = None
    crs_stack_size: int | None = None             # EIATTR_CRS_STACK_SIZE, when ptxas gives one
    max_threads: tuple[int, int, int] | None = None  # EIATTR_MAX_THREADS (__launch_bounds__, .maxntid)
    req_threads: tuple[int, int, int] | None = None  # EIATTR_REQNTID (.reqntid; ptxas refuses both)
    # Byte offsets of the warp-wide integer instructions ptxas lists (VOTEU.ANY, REDUX:
    # the aggregation of atomics and __reduce_*_sync): EIATTR_INT_WARP_WIDE_INSTR_OFFSETS.
    int_warp_wide_offsets: list[int] = field(default_factory=list)
    # The kernel has an `extern .shared` window (dynamic shared memory, sized at launch):
    # its .nv.shared.<k> exists even when empty (sm_89: size 0; sm_90: the reserved 1 KiB),
    # and has a section symbol only if static variables precede the window.  The reader
    # sets it only where the file shows it (a window without a section symbol).
    dynamic_shared: bool = False
    # Whether the code addresses shared memory (sm_90: an empty .rela.text.<k>, and the
    # nameless .nv.reservedSmem.cap symbol after the first such kernel).  None: it does
    # when it has a shared window.  False for the windows ptxas gives every kernel of a
    # module with `extern .shared` memory, used or not.
    shared_referenced: bool | None = None
    # The kernel calls subroutines laid out after it in its own .text (CALL.REL.NOINC):
    # on sm_90 ptxas leaves an empty .rela.text.<k> for the resolved calls.  Nothing on sm_89.
    calls: bool = False
    # The kernel's own constant bank 2 (.nv.constant2.<k>): the doubles its code reads
    # as c[0x2][offset] operands (pool_double_constants).  Empty: no section.
    constant_pool: bytes = b""
    # The code is one basic block (no branch).  With a stack frame, ptxas then ends the
    # FDE by re-stating CFA = R1 + 0 at the CFA point instead of advancing to the last
    # EXIT (isa_local's local_wide and local_hist); without a frame it changes nothing.
    straight_line: bool = False
    # Where the FDE's last advance goes; None: the last EXIT, as usual.  On sm_90 ptxas
    # stops elsewhere in some kernels: the ERRBAR after isa_memory's fences' last
    # MEMBAR.SC (0x1e0, its EXIT at 0x210), the ENDCOLLECTIVE of isa_warp's
    # divergent_sync (0x350, its EXIT at 0x260).
    fde_end: int | None = None
    # (offset, register) of the DW_CFA_undefined rows ptxas writes on sm_90 where a
    # register pair receives a generic address of shared memory (isa_uniform's
    # generic_cas: MOV R2, R0 at 0xc0 and MOV R3, R5 (SR_SWINHI) at 0xd0).
    cfi_undefined: list[tuple[int, int]] = field(default_factory=list)
    # The `.extern .func`s the kernel calls through the driver's system-call ABI (vprintf,
    # __assertfail: EIATTR_EXTERNS, a callgraph edge each) and the offsets of those
    # CALL.ABS.NOINCs (EIATTR_SYSCALL_OFFSETS).
    externs: list[str] = field(default_factory=list)
    syscall_offsets: list[int] = field(default_factory=list)

    @property
    def param_size(self) -> int:
        return max((offset + size for offset, size in self.params), default=0)

    def has_shared_window(self) -> bool:
        """Whether the kernel has a .nv.shared.<k> section."""
        return bool(self.shared_size) or self.dynamic_shared

    def has_static_shared(self, arch: str) -> bool:
        """Whether static variables live in the window (then it has a section symbol):
        more bytes than the reserved area ptxas puts ahead of them (sm_90: 1 KiB)."""
        return self.shared_size > target(arch).reserved_shared

    def references_shared(self) -> bool:
        if self.shared_referenced is not None:
            return self.shared_referenced
        return self.has_shared_window()

    def cfa_location(self) -> int:
        if self.cfa_offset is not None:
            return self.cfa_offset
        if self.frame_size:
            return 0x20
        return min(self.exit_offsets) + 16 if self.exit_offsets else 0x10


# Sections of module-scope variables (ptxas 13.5, sm_89; measured on nvcc's cubins).
CONST_BANK = ".nv.constant3"        # `.const` variables (c[0x3][offset]), with their initial bytes
ADDRESS_BANK = ".nv.constant4"      # the 64-bit address of every `.global` variable (c[0x4][slot])
GLOBAL_ZERO = ".nv.global"          # `.global` variables without an initializer (NOBITS)
GLOBAL_INIT = ".nv.global.init"     # `.global` variables with one
ADDRESS_SLOT = 8                    # bytes per address in .nv.constant4


@dataclass
class ModuleVariable:
    """A module-scope `.global` or `.const` variable as the cubin holds it.

    The lowering lays the variables out (the code reads them at these offsets); the
    writer only places them: `.const` ones in .nv.constant3, `.global` ones in
    .nv.global.init (with an initializer) or .nv.global (without), each with an
    STT_OBJECT symbol (LOCAL, or GLOBAL when `.visible`).  A `.global` variable's
    address lives at `address_slot` in .nv.constant4, filled by an R_CUDA_64
    relocation (.rel.nv.constant4) when the driver loads the module."""
    name: str
    space: str                       # "global" or "const"
    size: int
    align: int
    offset: int                      # in its section
    init: bytes | None = None        # initial bytes (at most `size`; the rest is zero)
    address_slot: int | None = None  # offset of its address in .nv.constant4 (globals)
    visible: bool = False

    @property
    def section(self) -> str:
        if self.space == "const":
            return CONST_BANK
        return GLOBAL_INIT if self.init is not None else GLOBAL_ZERO


def write_cubin(kernels: list[KernelImage], arch: str = "sm_89", tool_name: str = "ptxc",
                tool_version: str = PTXC_TOOL_VERSION, tool_args: str | None = None,
                tool_branch: str = "", variables: list[ModuleVariable] = (),
                virtual_arch: str | None = None, extern_slots: dict | None = None) -> bytes:
    """The cubin holding `kernels` (in source order) for `arch` ("sm_89" or "sm_90").

    The tool strings go into .note.nv.tkinfo; tool_args defaults to what nvcc passes
    ptxas ("-arch sm_89 -m 64").  To reproduce nvcc's cubin, pass tool_name="ptxas"
    and nvcc's version, branch and args strings.  `variables` are the module's
    `.global` and `.const` variables in declaration order.  `virtual_arch` is the PTX
    `.target` that .note.nv.cuinfo records (ptxas -arch=sm_90 on `.target sm_89` PTX
    writes 89 there); None: `arch`.  `extern_slots`: the `.extern .func`s the kernels
    call (system calls), name -> offset of its address in .nv.constant4: an undefined
    GLOBAL FUNC symbol each, after the kernels' and variables' symbols, whose address
    an R_CUDA_64 relocation puts in the slot (ptxas creates .nv.constant4 for them first).
    """
    if arch not in TARGETS:
        raise UnknownTarget(f"unsupported architecture {arch!r} ({', '.join(TARGETS)})")
    if not kernels:
        raise ValueError("a cubin needs at least one kernel")
    for k in kernels:
        _check(k)
    if len({k.name for k in kernels}) != len(kernels):
        raise ValueError("two kernels with the same name")
    variables = list(variables)
    _check_variables(variables)
    if tool_args is None:
        tool_args = f"-arch {arch} -m 64"
    plan_class = _PlanSM90 if target(arch).layout == "hopper" else _Plan
    externs = dict(extern_slots or {})
    called = {name for k in kernels for name in k.externs}
    if called - set(externs):
        raise ValueError(f"system calls without an address slot: {sorted(called - set(externs))}")
    externs = {name: slot for name, slot in externs.items() if name in called}
    plan = plan_class(list(reversed(kernels)), arch, variables=variables, virtual_arch=virtual_arch or arch,
                      externs=externs)
    return plan.build((tool_name, tool_version, tool_branch, tool_args))


def _check(k: KernelImage) -> None:
    """Refuse images the layout cannot represent, naming the kernel and the field."""
    def bad(message: str) -> ValueError:
        return ValueError(f"kernel {k.name!r}: {message}")
    if not k.name:
        raise ValueError("a kernel needs a name")
    if not k.text or len(k.text) % 16:
        raise bad(f"text must be whole 16-byte instructions, got {len(k.text)} bytes")
    if any(e % 16 or not 0 <= e < len(k.text) for e in k.exit_offsets):
        raise bad(f"exit offsets {k.exit_offsets} are not instructions in the text")
    if not 0 <= k.regcount <= 255:
        raise bad(f"register count {k.regcount} does not fit sh_info's top byte")
    if k.param_base + k.param_size > 0xFFFF:
        raise bad("parameters do not fit a 16-bit constant-bank offset")
    if k.shared_align < 1 or k.shared_align & (k.shared_align - 1):
        raise bad(f"shared alignment {k.shared_align} is not a power of two")
    if any(o % 16 or not 0 <= o < len(k.text) for o in k.int_warp_wide_offsets):
        raise bad(f"warp-wide instruction offsets {k.int_warp_wide_offsets} are not instructions in the text")
    rows = [o for o, _reg in k.cfi_undefined] + ([k.fde_end] if k.fde_end is not None else [])
    if any(o % 16 or not 0 <= o <= len(k.text) for o in rows):
        raise bad(f"FDE rows at {rows} are not instruction boundaries of the text")
    if k.max_threads is not None and k.req_threads is not None:
        raise bad("both .maxntid and .reqntid (ptxas refuses them together)")


def _check_variables(variables: list[ModuleVariable]) -> None:
    """Refuse variables the layout cannot hold: unknown spaces, initializers longer than
    the variable, overlapping offsets or address slots, names used twice."""
    if len({v.name for v in variables}) != len(variables):
        raise ValueError("two module variables with the same name")
    slots = [v.address_slot for v in variables if v.address_slot is not None]
    if len(set(slots)) != len(slots) or any(slot % ADDRESS_SLOT for slot in slots):
        raise ValueError(f"address slots {slots} overlap or are not 8-byte aligned")
    by_section: dict[str, list] = {}
    for v in variables:
        if v.space not in ("global", "const"):
            raise ValueError(f"variable {v.name!r}: space {v.space!r} is not global or const")
        if v.init is not None and len(v.init) > v.size:
            raise ValueError(f"variable {v.name!r}: {len(v.init)} initial bytes for {v.size}")
        if v.align < 1 or v.align & (v.align - 1) or v.offset % v.align:
            raise ValueError(f"variable {v.name!r}: offset {v.offset} is not aligned to {v.align}")
        by_section.setdefault(v.section, []).append(v)
    for section, members in by_section.items():
        members = sorted(members, key=lambda v: v.offset)
        for a, b in zip(members, members[1:]):
            if a.offset + a.size > b.offset:
                raise ValueError(f"variables {a.name!r} and {b.name!r} overlap in {section}")


# ---- the layout -------------------------------------------------------------------

@dataclass
class _Plan:
    """Section and symbol indices of one cubin, fixed before any contents are made."""
    kernels: list[KernelImage]     # file order (reverse source order)
    arch: str
    sections: list[Section] = field(default_factory=list)
    symbols: list[Symbol] = field(default_factory=list)
    variables: list[ModuleVariable] = field(default_factory=list)   # declaration order
    virtual_arch: str = "sm_89"    # .note.nv.cuinfo's SM: the PTX .target
    externs: dict = field(default_factory=dict)   # system call name -> .nv.constant4 slot

    def build(self, notes) -> bytes:
        self.module_items = _module_items(self.variables, self.externs)
        self._number_sections()
        self._number_symbols()
        self._fill_contents(notes)
        return _link(self.sections, self.arch)

    # -- indices --
    def _number_sections(self) -> None:
        names = [".shstrtab", ".strtab", ".symtab", ".debug_frame", ".note.nv.tkinfo",
                 ".note.nv.cuinfo", ".nv.info"] + self._compat_names()
        names += [f".nv.info.{k.name}" for k in self.kernels]
        names += [".nv.callgraph", ".nv.rel.action"]
        made = self._module_sections()
        if ADDRESS_BANK in made:
            names.append(".rel" + ADDRESS_BANK)
        names.append(".rel.debug_frame")
        names += [name for name in made if name.startswith(".nv.constant")]   # in creation order
        for k in self.kernels:
            names += [f".nv.constant2.{k.name}"] * bool(k.constant_pool) + [f".nv.constant0.{k.name}"]
        names += [f".text.{k.name}" for k in self.kernels]
        names += [GLOBAL_INIT] if GLOBAL_INIT in made else []
        # NOBITS windows in creation order: the first kernel's, the module's, the others'
        for i, k in enumerate(self.kernels):
            if k.has_shared_window():
                names.append(f".nv.shared.{k.name}")
            if i == 0 and GLOBAL_ZERO in made:
                names.append(GLOBAL_ZERO)
        self.index = {name: i + 1 for i, name in enumerate(names)}

    def _module_sections(self) -> list[str]:
        """The sections the module's variables create, in the order ptxas creates them."""
        return [name for kind, name in self.module_items if kind == "section"]

    def _compat_names(self) -> list[str]:
        return []  # sm_89 has no .nv.compat (sm_90: _PlanSM90)

    def _number_symbols(self) -> None:
        """Section symbols first (ptxas's order), then one global symbol per kernel."""
        section = lambda name: Symbol(name, type=elf.STT_SECTION, shndx=self.index[name])
        local = [section(".note.nv.tkinfo"), section(".note.nv.cuinfo")]
        visible = []
        for i, k in enumerate(self.kernels):
            local.append(section(f".text.{k.name}"))
            if k.has_static_shared(self.arch):
                local.append(section(f".nv.shared.{k.name}"))
            if i == 0:   # ptxas places the module's variables while making the first kernel
                for kind, item in self.module_items:
                    if kind == "section":
                        local.append(section(item))
                    else:
                        (visible if item.visible else local).append(self._variable_symbol(item))
            if k.constant_pool:
                local.append(section(f".nv.constant2.{k.name}"))
            local.append(section(f".nv.constant0.{k.name}"))
        local += [section(name) for name in (".debug_frame", ".nv.callgraph", ".nv.rel.action")]
        self.symbols = [Symbol("")] + local
        for k in self.kernels:
            self.symbols.append(Symbol(k.name, size=len(k.text), bind=elf.STB_GLOBAL,
                                       type=elf.STT_FUNC, other=STO_CUDA_ENTRY,
                                       shndx=self.index[f".text.{k.name}"]))
        self.symbols += visible
        self.symbols += _extern_symbols(self.externs)
        self.symbol_index = {s.name: i for i, s in enumerate(self.symbols)}
        self.first_global = len(local) + 1

    def _variable_symbol(self, v: ModuleVariable) -> Symbol:
        return Symbol(v.name, value=v.offset, size=v.size, type=elf.STT_OBJECT,
                      bind=elf.STB_GLOBAL if v.visible else elf.STB_LOCAL,
                      shndx=self.index[v.section])

    # -- contents --
    def _fill_contents(self, notes) -> None:
        idx, sym = self.index, self.symbol_index
        shstrtab, strtab = _string_tables(self.kernels, self._compat_names(), self.module_items)
        for s in self.symbols:
            s.name_offset = strtab.add(s.name)
        debug_frame, frame_relocs = self._debug_frame()
        secs = [
            Section(".shstrtab", elf.SHT_STRTAB, data=shstrtab.data()),
            Section(".strtab", elf.SHT_STRTAB, data=strtab.data()),
            Section(".symtab", elf.SHT_SYMTAB, data=b"".join(s.pack() for s in self.symbols),
                    link=idx[".strtab"], info=self.first_global, align=8, entsize=elf.SYM.size),
            Section(".debug_frame", elf.SHT_PROGBITS, data=debug_frame),
            Section(".note.nv.tkinfo", elf.SHT_NOTE, SHF_NOTE_TKINFO, _tkinfo(*notes), align=4),
            Section(".note.nv.cuinfo", elf.SHT_NOTE, SHF_NOTE_CUINFO, _cuinfo(self.virtual_arch),
                    link=idx[".note.nv.tkinfo"], align=4),
            Section(".nv.info", SHT_CUDA_INFO, data=ni.encode_records(self._global_info()),
                    link=idx[".symtab"], align=4),
        ]
        for k in self.kernels:
            secs.append(Section(f".nv.info.{k.name}", SHT_CUDA_INFO, elf.SHF_INFO_LINK,
                                ni.encode_records(self._kernel_info(k)), link=idx[".symtab"],
                                info=idx[f".text.{k.name}"], align=4))
        secs += [
            Section(".nv.callgraph", SHT_CUDA_CALLGRAPH, data=_callgraph(self.kernels, self.symbol_index),
                    link=idx[".symtab"], align=4, entsize=8),
            Section(".nv.rel.action", SHT_CUDA_RELOCINFO, data=REL_ACTION, align=8, entsize=8),
        ]
        if ".rel" + ADDRESS_BANK in idx:
            secs.append(Section(".rel" + ADDRESS_BANK, elf.SHT_REL, elf.SHF_INFO_LINK,
                                b"".join(r.pack() for r in self._address_relocations()),
                                link=idx[".symtab"], info=idx[ADDRESS_BANK], align=8,
                                entsize=elf.REL.size))
        secs.append(Section(".rel.debug_frame", elf.SHT_REL, elf.SHF_INFO_LINK,
                            b"".join(r.pack() for r in frame_relocs), link=idx[".symtab"],
                            info=idx[".debug_frame"], align=8, entsize=elf.REL.size))
        for name in self._module_sections():
            if name.startswith(".nv.constant"):
                secs.append(self._variable_section(name))
        for k in self.kernels:
            if k.constant_pool:
                secs.append(Section(f".nv.constant2.{k.name}", elf.SHT_PROGBITS,
                                    elf.SHF_ALLOC | elf.SHF_INFO_LINK, k.constant_pool,
                                    info=idx[f".text.{k.name}"], align=4))
            secs.append(Section(f".nv.constant0.{k.name}", elf.SHT_PROGBITS,
                                elf.SHF_ALLOC | elf.SHF_INFO_LINK,
                                bytes(k.param_base + k.param_size),
                                info=idx[f".text.{k.name}"], align=4))
        for k in self.kernels:
            secs.append(Section(f".text.{k.name}", elf.SHT_PROGBITS,
                                elf.SHF_ALLOC | elf.SHF_EXECINSTR, k.text, link=idx[".symtab"],
                                # ptxas packs the register count into sh_info's top byte
                                info=(k.regcount << 24) | sym[k.name], align=TEXT_ALIGN))
        if GLOBAL_INIT in idx:
            secs.append(self._variable_section(GLOBAL_INIT))
        for i, k in enumerate(self.kernels):
            if k.has_shared_window():
                secs.append(Section(f".nv.shared.{k.name}", elf.SHT_NOBITS,
                                    elf.SHF_WRITE | elf.SHF_ALLOC | elf.SHF_INFO_LINK,
                                    info=idx[f".text.{k.name}"], align=k.shared_align,
                                    nobits_size=k.shared_size))
            if i == 0 and GLOBAL_ZERO in idx:
                secs.append(self._variable_section(GLOBAL_ZERO))
        for s in secs:
            s.name_offset = shstrtab.add(s.name)
        self.sections = secs

    def _variable_section(self, name: str) -> Section:
        """.nv.constant3 / .nv.global.init (initial bytes), .nv.global (NOBITS) or
        .nv.constant4 (zeros the relocations fill): each as long as its last variable
        reaches and aligned to its most aligned one."""
        if name == ADDRESS_BANK:
            slots = [v.address_slot for v in self.variables if v.address_slot is not None]
            slots += list(self.externs.values())
            return Section(name, elf.SHT_PROGBITS, elf.SHF_ALLOC,
                           bytes(max(slots) + ADDRESS_SLOT), align=ADDRESS_SLOT)
        members = [v for v in self.variables if v.section == name]
        size = max(v.offset + v.size for v in members)
        align = max(v.align for v in members)
        if name == GLOBAL_ZERO:
            return Section(name, elf.SHT_NOBITS, elf.SHF_WRITE | elf.SHF_ALLOC, align=align,
                           nobits_size=size)
        data = bytearray(size)
        for v in members:
            if v.init:
                data[v.offset:v.offset + len(v.init)] = v.init
        flags = elf.SHF_ALLOC | (elf.SHF_WRITE if name == GLOBAL_INIT else 0)
        return Section(name, elf.SHT_PROGBITS, flags, bytes(data), align=align)

    def _address_relocations(self) -> list[elf.Relocation]:
        """R_CUDA_64 per `.global` variable at its .nv.constant4 slot, last slot first."""
        relocs = [elf.Relocation(v.address_slot, self.symbol_index[v.name], R_CUDA_64)
                  for v in self.variables if v.address_slot is not None]
        relocs += [elf.Relocation(slot, self.symbol_index[name], R_CUDA_64) for name, slot in self.externs.items()]
        return sorted(relocs, key=lambda r: r.offset, reverse=True)

    def _global_info(self) -> list[ni.Record]:
        """REGCOUNT and FRAME_SIZE per kernel in source order, then MIN_STACK_SIZE per
        kernel in file order: ptxas's order."""
        records = []
        for k in reversed(self.kernels):
            s = self.symbol_index[k.name]
            records.append(ni.per_function(ni.CODES["EIATTR_REGCOUNT"], s, k.regcount))
            records.append(ni.per_function(ni.CODES["EIATTR_FRAME_SIZE"], s, k.frame_size))
        for k in self.kernels:
            records.append(ni.per_function(ni.CODES["EIATTR_MIN_STACK_SIZE"],
                                           self.symbol_index[k.name], k.min_stack_size))
        return records

    def _kernel_info(self, k: KernelImage) -> list[ni.Record]:
        c = ni.CODES
        records = [ni.words(c["EIATTR_LANGUAGE"], ni.LANGUAGE_PTX),
                   ni.words(c["EIATTR_CUDA_API_VERSION"], TOOLKIT_VERSION)]
        records += [ni.Record(ni.EIFMT_NVAL, attr, 0) for attr in target(self.arch).kernel_nval_attrs]
        if k.params:
            bank = self.symbol_index[f".nv.constant0.{k.name}"]
            records.append(ni.param_cbank(bank, k.param_base, k.param_size))
            records.append(ni.hval(c["EIATTR_CBANK_PARAM_SIZE"], k.param_size))
            # one KPARAM_INFO per parameter, last ordinal first
            for ordinal in reversed(range(len(k.params))):
                records.append(ni.kparam_info(ordinal, *k.params[ordinal]))
        records.append(ni.hval(c["EIATTR_MAXREG_COUNT"], k.max_reg_count))
        if k.num_barriers:
            records.append(ni.bval(c["EIATTR_NUM_BARRIERS"], k.num_barriers))
        records += _extern_records(k, self.symbol_index)
        records.append(ni.hval(ni.EIATTR_UNNAMED_5F, target(self.arch).unnamed_5f))
        return records + _exit_records(k)

    def _debug_frame(self) -> tuple[bytes, list[elf.Relocation]]:
        """One CIE + FDE per kernel (ptxas repeats the CIE), and the relocations that
        point each FDE's initial_location at its kernel's symbol (source order)."""
        data, relocs = bytearray(), []
        for k in self.kernels:
            cie_offset = len(data)
            data += _cie()
            fde = _fde(cie_offset, k)
            relocs.append(elf.Relocation(len(data) + FDE_LOCATION_OFFSET,
                                         self.symbol_index[k.name], R_CUDA_64))
            data += fde
        return bytes(data), relocs[::-1]


# ---- sm_90 ------------------------------------------------------------------------

RESERVED_SHARED = ".nv.shared.reserved.0"
STO_CUDA_RESERVED_SHARED = 0xA0   # st_other of __nv_reservedSMEM_offset_0_alias
STV_INTERNAL = 0x1                # st_other of the nameless symbol left of .nv.reservedSmem.cap
NVINFO_SW_WAR = 8                 # EIATTR_SW_WAR's payload in every sm_90 kernel


@dataclass
class _PlanSM90:
    """ptxas 13.5's sm_90 layout (measured on nvcc's cubins; docs/cubin.md).

    Sections: the string and symbol tables, .debug_frame, the notes (.note.nv.cuinfo now
    INFO_LINKs .nv.compat), .nv.info, .nv.compat, .nv.info.<k> per kernel, .nv.callgraph,
    an empty .rela.text.<k> per kernel whose code addressed shared memory or called a
    subroutine, .rela.nv.constant4 (RELA) when the module has `.global` variables,
    .rela.debug_frame (RELA, addend 0), the module's banks (.nv.constant4 / .nv.constant3 in
    creation order), .text.<k> (sh_info the kernel's symbol, no register count),
    .nv.global.init, the NOBITS windows (the first kernel's .nv.shared.<k>,
    .nv.shared.reserved.0, .nv.global, the others' windows), then the .nv.constant0.<k>
    banks.  No .nv.rel.action.  The string tables hold only the names used, in use order
    (.shstrtab ends with 14 zero bytes), the symbol table's sh_info is its length, and the
    constant banks' section symbols come after the kernels'.  Module variables are placed
    as on sm_89 (_module_items), while the first kernel is made."""
    kernels: list[KernelImage]     # file order (reverse source order)
    arch: str = "sm_90"
    variables: list[ModuleVariable] = field(default_factory=list)   # declaration order
    virtual_arch: str = "sm_90"    # .note.nv.cuinfo's SM: the PTX .target
    externs: dict = field(default_factory=dict)   # system call name -> .nv.constant4 slot

    def build(self, notes) -> bytes:
        self.module_items = _module_items(self.variables, self.externs)
        self.made = [item for kind, item in self.module_items if kind == "section"]
        self._number_sections()
        self._number_symbols()
        self._fill_contents(notes)
        return _link_sm90(self.sections)

    def _relocated(self, k: KernelImage) -> bool:
        """ptxas keeps an empty .rela.text.<k> for the relocations it resolved in the
        kernel's code: shared-memory addresses (the reserved window) and calls."""
        return k.references_shared() or k.calls

    def _number_sections(self) -> None:
        made = self.made
        names = [".shstrtab", ".strtab", ".symtab", ".debug_frame", ".note.nv.tkinfo", ".note.nv.cuinfo",
                 ".nv.info", ".nv.compat"]
        names += [f".nv.info.{k.name}" for k in self.kernels]
        names += [".nv.callgraph"]
        names += [f".rela.text.{k.name}" for k in self.kernels if self._relocated(k)]
        names += [".rela" + ADDRESS_BANK] * (ADDRESS_BANK in made)
        names += [".rela.debug_frame"]
        names += [name for name in made if name.startswith(".nv.constant")]   # in creation order
        names += [f".text.{k.name}" for k in self.kernels]
        names += [GLOBAL_INIT] * (GLOBAL_INIT in made)
        names += self._nobits_names()
        names += [f".nv.constant0.{k.name}" for k in self.kernels]
        self.index = {name: i + 1 for i, name in enumerate(names)}

    def _nobits_names(self) -> list[str]:
        """In creation order: the first kernel's window, the reserved window, .nv.global,
        then the other kernels' windows."""
        names = []
        for i, k in enumerate(self.kernels):
            if k.has_shared_window():
                names.append(f".nv.shared.{k.name}")
            if i == 0:
                names.append(RESERVED_SHARED)
                names += [GLOBAL_ZERO] * (GLOBAL_ZERO in self.made)
        return names

    def _number_symbols(self) -> None:
        """Section symbols (the module's sections and local variables after the first
        kernel's); each kernel's symbol, after the first the reserved-shared symbols and
        the `.visible` variables, and the nameless .nv.reservedSmem.cap after the first
        kernel that addresses shared memory; then the constant banks' section symbols."""
        idx = self.index
        section = lambda name: Symbol(name, type=elf.STT_SECTION, shndx=idx[name])
        local, visible = [section(".note.nv.tkinfo"), section(".note.nv.cuinfo")], []
        for i, k in enumerate(self.kernels):
            local.append(section(f".text.{k.name}"))
            if k.has_static_shared(self.arch):
                local.append(section(f".nv.shared.{k.name}"))
            if i == 0:   # ptxas places the module's variables while making the first kernel
                for kind, item in self.module_items:
                    if kind == "section":
                        local.append(section(item))
                    else:
                        (visible if item.visible else local).append(_Plan._variable_symbol(self, item))
        local += [section(".debug_frame"), section(".nv.callgraph")]
        self.symbols = [Symbol("")] + local
        self.cap_after = None
        for i, k in enumerate(self.kernels):
            self.symbols.append(Symbol(k.name, size=len(k.text), bind=elf.STB_GLOBAL, type=elf.STT_FUNC,
                                       other=STO_CUDA_ENTRY, shndx=idx[f".text.{k.name}"]))
            if i == 0:
                self.symbols += [Symbol(".nv.reservedSmem.offset0", size=4, bind=elf.STB_WEAK, type=elf.STT_OBJECT),
                                 Symbol("__nv_reservedSMEM_offset_0_alias", bind=elf.STB_WEAK,
                                        other=STO_CUDA_RESERVED_SHARED, shndx=idx[RESERVED_SHARED])]
                self.symbols += visible
            if k.references_shared() and self.cap_after is None:
                self.cap_after = len(self.symbols)
                self.symbols.append(Symbol("", other=STV_INTERNAL))  # named in .strtab, not here
        self.symbols += _extern_symbols(self.externs)
        self.symbols += [section(f".nv.constant0.{k.name}") for k in self.kernels]
        self.symbol_index = {s.name: i for i, s in enumerate(self.symbols) if s.name}

    def _fill_contents(self, notes) -> None:
        idx, sym = self.index, self.symbol_index
        strtab = elf.StringTable()
        for i, s in enumerate(self.symbols):
            s.name_offset = strtab.add(s.name) if s.name else 0
            if i == self.cap_after:
                strtab.add(".nv.reservedSmem.cap")
        debug_frame, frame_relocs = self._debug_frame()
        secs = [
            Section(".shstrtab", elf.SHT_STRTAB),
            Section(".strtab", elf.SHT_STRTAB, data=strtab.data()),
            Section(".symtab", elf.SHT_SYMTAB, data=b"".join(s.pack() for s in self.symbols),
                    link=idx[".strtab"], info=len(self.symbols), align=8, entsize=elf.SYM.size),
            Section(".debug_frame", elf.SHT_PROGBITS, data=debug_frame),
            Section(".note.nv.tkinfo", elf.SHT_NOTE, SHF_NOTE_TKINFO, _tkinfo(*notes), align=4),
            Section(".note.nv.cuinfo", elf.SHT_NOTE, SHF_NOTE_CUINFO | elf.SHF_INFO_LINK,
                    _cuinfo(self.virtual_arch), link=idx[".note.nv.tkinfo"], info=idx[".nv.compat"], align=4),
            Section(".nv.info", SHT_CUDA_INFO, data=ni.encode_records(_Plan._global_info(self)),
                    link=idx[".symtab"], align=4),
            Section(".nv.compat", SHT_CUDA_COMPAT_INFO, data=ni.encode_records(ni.sm90_compat_records()), align=4),
        ]
        for k in self.kernels:
            secs.append(Section(f".nv.info.{k.name}", SHT_CUDA_INFO, elf.SHF_INFO_LINK,
                                ni.encode_records(self._kernel_info(k)), link=idx[".symtab"],
                                info=idx[f".text.{k.name}"], align=4))
        secs.append(Section(".nv.callgraph", SHT_CUDA_CALLGRAPH, data=_callgraph(self.kernels, self.symbol_index), link=idx[".symtab"],
                            align=4, entsize=8))
        for k in self.kernels:
            if self._relocated(k):
                secs.append(Section(f".rela.text.{k.name}", elf.SHT_RELA, elf.SHF_INFO_LINK, link=idx[".symtab"],
                                    info=idx[f".text.{k.name}"], align=8, entsize=elf.RELA.size))
        if ADDRESS_BANK in self.made:
            relocs = [elf.Relocation(r.offset, r.symbol, r.type, 0) for r in _Plan._address_relocations(self)]
            secs.append(Section(".rela" + ADDRESS_BANK, elf.SHT_RELA, elf.SHF_INFO_LINK,
                                b"".join(r.pack() for r in relocs), link=idx[".symtab"],
                                info=idx[ADDRESS_BANK], align=8, entsize=elf.RELA.size))
        secs.append(Section(".rela.debug_frame", elf.SHT_RELA, elf.SHF_INFO_LINK,
                            b"".join(r.pack() for r in frame_relocs), link=idx[".symtab"],
                            info=idx[".debug_frame"], align=8, entsize=elf.RELA.size))
        secs += [_Plan._variable_section(self, name) for name in self.made if name.startswith(".nv.constant")]
        for k in self.kernels:
            secs.append(Section(f".text.{k.name}", elf.SHT_PROGBITS, elf.SHF_ALLOC | elf.SHF_EXECINSTR, k.text,
                                link=idx[".symtab"], info=sym[k.name], align=TEXT_ALIGN))
        if GLOBAL_INIT in self.made:
            secs.append(_Plan._variable_section(self, GLOBAL_INIT))
        windows = {f".nv.shared.{k.name}": k for k in self.kernels}
        for name in self._nobits_names():
            if name in windows:
                k = windows[name]
                secs.append(Section(name, elf.SHT_NOBITS, elf.SHF_WRITE | elf.SHF_ALLOC | elf.SHF_INFO_LINK,
                                    info=idx[f".text.{k.name}"], align=k.shared_align, nobits_size=k.shared_size))
            elif name == RESERVED_SHARED:
                secs.append(Section(RESERVED_SHARED, elf.SHT_NOBITS, elf.SHF_WRITE | elf.SHF_ALLOC, align=1))
            else:
                secs.append(_Plan._variable_section(self, name))
        for k in self.kernels:
            secs.append(Section(f".nv.constant0.{k.name}", elf.SHT_PROGBITS, elf.SHF_ALLOC | elf.SHF_INFO_LINK,
                                bytes(k.param_base + k.param_size), info=idx[f".text.{k.name}"], align=4))
        shstrtab = elf.StringTable()
        for s in secs:
            s.name_offset = shstrtab.add(s.name)
        secs[0].data = shstrtab.data() + bytes(len(".symtab_shndx") + 1)  # ptxas leaves 14 zero bytes
        self.sections = secs

    def _kernel_info(self, k: KernelImage) -> list[ni.Record]:
        c = ni.CODES
        records = [ni.words(c["EIATTR_LANGUAGE"], ni.LANGUAGE_PTX),
                   ni.words(c["EIATTR_CUDA_API_VERSION"], TOOLKIT_VERSION)]
        for ordinal in reversed(range(len(k.params))):   # last ordinal first
            records.append(ni.kparam_info(ordinal, *k.params[ordinal]))
        records.append(ni.hval(c["EIATTR_SPARSE_MMA_MASK"], 0))
        records.append(ni.hval(c["EIATTR_MAXREG_COUNT"], k.max_reg_count))
        if k.num_barriers:
            records.append(ni.bval(c["EIATTR_NUM_BARRIERS"], k.num_barriers))
        records += _extern_records(k, self.symbol_index)
        records.append(ni.hval(ni.EIATTR_UNNAMED_5F, target(self.arch).unnamed_5f))
        records += _exit_records(k)
        if k.params:
            records.append(ni.hval(c["EIATTR_CBANK_PARAM_SIZE"], k.param_size))
            bank = self.symbol_index[f".nv.constant0.{k.name}"]
            records.append(ni.param_cbank(bank, k.param_base, k.param_size))
        records += [ni.words(c["EIATTR_SW_WAR"], NVINFO_SW_WAR), ni.hval(c["EIATTR_NVSAL_SW_WAR"], 1),
                    ni.bval(c["EIATTR_PREEXIT_USED"], 0)]
        return records

    def _debug_frame(self) -> tuple[bytes, list[elf.Relocation]]:
        data, relocs = bytearray(), []
        for k in self.kernels:
            cie_offset = len(data)
            data += _cie()
            relocs.append(elf.Relocation(len(data) + FDE_LOCATION_OFFSET, self.symbol_index[k.name], R_CUDA_64, 0))
            data += _fde_sm90(cie_offset, k)
        return bytes(data), relocs[::-1]


def _extern_symbols(externs: dict) -> list[Symbol]:
    """An undefined GLOBAL FUNC symbol per system call, in slot order."""
    return [Symbol(name, bind=elf.STB_GLOBAL, type=elf.STT_FUNC, shndx=0)
            for name in sorted(externs, key=externs.get)]


def _extern_records(k: KernelImage, symbol_index: dict) -> list[ni.Record]:
    """EIATTR_EXTERNS: the symbols of the system calls the kernel makes (after MAXREG_COUNT)."""
    if not k.externs:
        return []
    names = sorted(set(k.externs), key=lambda n: symbol_index[n])
    return [ni.words(ni.CODES["EIATTR_EXTERNS"], *(symbol_index[n] for n in names))]


def _exit_records(k: KernelImage) -> list[ni.Record]:
    """From the warp-wide instructions to the stack: ptxas's order on sm_89 and sm_90
    (INT_WARP_WIDE_INSTR_OFFSETS, EXIT_INSTR_OFFSETS, MAX_THREADS or REQNTID,
    CRS_STACK_SIZE; measured with __launch_bounds__/.reqntid kernels that call)."""
    c = ni.CODES
    records = []
    if k.syscall_offsets:
        records.append(ni.words(c["EIATTR_SYSCALL_OFFSETS"], *k.syscall_offsets))
    if k.int_warp_wide_offsets:
        records.append(ni.words(c["EIATTR_INT_WARP_WIDE_INSTR_OFFSETS"], *k.int_warp_wide_offsets))
    records.append(ni.words(c["EIATTR_EXIT_INSTR_OFFSETS"], *k.exit_offsets))
    if k.max_threads is not None:
        records.append(ni.words(c["EIATTR_MAX_THREADS"], *k.max_threads))
    if k.req_threads is not None:
        records.append(ni.words(c["EIATTR_REQNTID"], *k.req_threads))
    if k.crs_stack_size is not None:
        records.append(ni.words(c["EIATTR_CRS_STACK_SIZE"], k.crs_stack_size))
    return records


def _fde_sm90(cie_offset: int, k: KernelImage) -> bytes:
    """sm_90's FDE: rows in address order, each an advance and its instructions: at the
    CFA point, CFA = R1 + frame size; at the last EXIT (fde_end), nothing (the FDE ends
    there).  When the last EXIT comes first (one EXIT, the CFA point just past it), the
    FDE advances to it, then on to the CFA point.  A straight-line kernel with a frame
    has one row: CFA = R1 + 0 at the CFA point.  DW_CFA_undefined rows (cfi_undefined)
    fall in between."""
    cfa_at = k.cfa_location()
    end = k.fde_end if k.fde_end is not None else max(k.exit_offsets, default=cfa_at)
    rows = [(offset, 1, bytes([DW_CFA_undefined]) + _reg(reg)) for offset, reg in k.cfi_undefined]
    if k.straight_line and k.frame_size:
        rows.append((cfa_at, 2, bytes([DW_CFA_def_cfa]) + _reg(STACK_POINTER) + uleb128(0)))
    else:
        rows.append((cfa_at, 2, bytes([DW_CFA_def_cfa]) + _reg(STACK_POINTER) + uleb128(k.frame_size)))
        rows.append((end, 3, b""))
    steps, at = bytearray(), 0
    for offset, _order, ops in sorted(rows, key=lambda r: r[:2]):
        steps += _advance(offset - at) + ops
        at = offset
    return _entry(struct.pack("<QQQ", cie_offset, 0, len(k.text)) + bytes(steps))


def _link_sm90(sections: list[Section]) -> bytes:
    """Sections in order (NOBITS ones at the position they would start at), the section
    headers right after (not 8-aligned), then the program headers: PHDR, a LOAD over
    them, the module's constant banks (if any), the code, the writable memory
    (.nv.global.init's bytes, then the NOBITS windows; memsz 0 without any), the kernels'
    constant banks."""
    out = bytearray(elf.EHDR.size)
    for s in sections:
        s.offset = elf.align_up(len(out), s.align)
        if s.type != elf.SHT_NOBITS:
            out += bytes(s.offset - len(out)) + s.data
    shoff = len(out)
    headers = [Section("", elf.SHT_NULL, align=0)] + sections
    out += b"".join(s.pack_header() for s in headers)
    phoff = len(out)

    def load(flags: int, group: list[Section]) -> Segment:
        size = group[-1].offset + group[-1].size - group[0].offset
        return Segment(elf.PT_LOAD, flags, group[0].offset, size, size)
    texts = [s for s in sections if s.flags & elf.SHF_EXECINSTR]
    writable = [s for s in sections if s.flags & elf.SHF_WRITE]
    module_banks = [s for s in sections if s.name in (CONST_BANK, ADDRESS_BANK)]
    banks = [s for s in sections if s.name.startswith(".nv.constant0.")]
    r, rx, rw = elf.PF_R, elf.PF_R | elf.PF_X, elf.PF_R | elf.PF_W
    count = 5 + bool(module_banks)
    table = count * elf.PHDR.size
    segments = [Segment(elf.PT_PHDR, r, phoff, table, table), Segment(elf.PT_LOAD, r, phoff, table, table)]
    if module_banks:
        segments.append(load(r, module_banks))
    filesz = sum(s.size for s in writable if s.type != elf.SHT_NOBITS)
    segments += [load(rx, texts),
                 Segment(elf.PT_LOAD, rw, writable[0].offset, filesz, _shared_extent(writable)),
                 load(r, banks)]
    out += b"".join(p.pack() for p in segments)
    header = elf.Header(osabi=ELFOSABI_CUDA, abiversion=CUDA_ABI_VERSION, type=elf.ET_EXEC, machine=EM_CUDA,
                        flags=target("sm_90").e_flags, phoff=phoff, shoff=shoff,
                        phnum=len(segments), shnum=len(headers), shstrndx=1)
    out[:elf.EHDR.size] = header.pack()
    return bytes(out)


def _string_tables(kernels: list[KernelImage], extra: list[str],
                   module_items: list = ()) -> tuple[elf.StringTable, elf.StringTable]:
    """ptxas registers every section name it might create, used or not, in both string
    tables (in slightly different orders), then the kernel names in .strtab.  The
    module's variables come while the first kernel is made (after its .nv.shared name):
    their sections' names in both tables, the local variables' names in .strtab; the
    `.visible` ones' names end .strtab."""
    head = [".shstrtab", ".strtab", ".symtab", ".symtab_shndx", ".note.nv.tkinfo",
            ".note.nv.cuinfo", ".nv.info"] + extra
    made = [item for kind, item in module_items if kind == "section"]
    tail = [".debug_frame"] + [".rel" + ADDRESS_BANK] * (ADDRESS_BANK in made) + \
        [".rel.debug_frame", ".rela.debug_frame", ".nv.callgraph", ".nv.prototype", ".nv.rel.action"]
    shstrtab, strtab = elf.StringTable(), elf.StringTable()
    for name in head:
        shstrtab.add(name)
        strtab.add(name)
    for i, k in enumerate(kernels):
        for table, bank_order in ((shstrtab, ("", ".rel")), (strtab, (".rel", ""))):
            for prefix in (".text.", ".nv.info.", ".nv.shared."):
                table.add(prefix + k.name)
            if i == 0:
                for kind, item in module_items:
                    if kind == "section":
                        table.add(item)
                    elif table is strtab and not item.visible:
                        table.add(item.name)
            if k.constant_pool:
                table.add(f".nv.constant2.{k.name}")
            for rel in bank_order:
                table.add(f"{rel}.nv.constant0.{k.name}")
    for name in tail:
        shstrtab.add(name)
        strtab.add(name)
    for k in kernels:
        strtab.add(k.name)
    for kind, item in module_items:
        if kind == "var" and item.visible:
            strtab.add(item.name)
    return shstrtab, strtab


def placement_order(variables: list) -> list:
    """The order ptxas places module variables in (offsets, address slots, symbols):
    the `.visible` ones first, then the others, each in declaration order.  Anything
    with a `visible` attribute (ModuleVariable, ptxc.ptx.ir.Variable) will do."""
    return [v for v in variables if v.visible] + [v for v in variables if not v.visible]


def _module_items(variables: list[ModuleVariable], externs: dict | None = None) -> list[tuple[str, object]]:
    """What the module's variables add to the file, in ptxas's order of creation:
    ("section", name) the first time a section is needed, ("var", variable) for each
    variable: the `.visible` ones first, then the others, each in declaration order.
    A `.global` variable's address slot is made right after its symbol, so
    .nv.constant4 appears after the first `.global` variable."""
    items, made = [], set()

    def section(name: str) -> None:
        if name not in made:
            made.add(name)
            items.append(("section", name))
    if externs:          # the system calls' address slots come first (ptxas: vprintf at c[0x4][0x0])
        section(ADDRESS_BANK)
    for v in placement_order(variables):
        section(v.section)
        items.append(("var", v))
        if v.address_slot is not None:
            section(ADDRESS_BANK)
    return items


# ---- fixed-format contents -----------------------------------------------------------

def _tkinfo(tool_name: str, tool_version: str, tool_branch: str, tool_args: str) -> bytes:
    """The toolkit note: version, then offsets of four strings in the string area that
    follows (which starts with an empty string, offset 0)."""
    strings = [b"", tool_name.encode(), tool_version.encode(), tool_branch.encode(),
               tool_args.encode()]
    offsets, blob = [], bytearray()
    for s in strings:
        offsets.append(len(blob))
        blob += s + b"\0"
    desc = struct.pack("<6I", NOTE_VERSION, *offsets) + blob
    return elf.pack_note(NOTE_OWNER, NT_CUDA_TKINFO, desc.ljust(elf.align_up(len(desc), 4), b"\0"))


def _cuinfo(arch: str) -> bytes:
    """The CUDA note: version, the virtual SM, the toolkit version."""
    desc = struct.pack("<HHI", NOTE_VERSION, sm_number(arch), TOOLKIT_VERSION)
    return elf.pack_note(NOTE_OWNER, NT_CUDA_CUINFO, desc)


def sm_number(arch: str) -> int:
    return int(arch.removeprefix("sm_"))


def _callgraph(kernels=(), symbol_index=None) -> bytes:
    """ptxas's four fixed entries (0, -1) .. (0, -4), and after the first an edge
    (kernel, callee) per system call a kernel makes (file order, symbol order)."""
    edges = b""
    for k in kernels:
        for name in sorted(set(k.externs), key=lambda n: symbol_index[n]):
            edges += struct.pack("<II", symbol_index[k.name], symbol_index[name])
    return struct.pack("<Ii", 0, -1) + edges + b"".join(struct.pack("<Ii", 0, -n) for n in range(2, 5))


# .nv.rel.action: the one relocation action ptxas declares, R_CUDA_CONST_FIELD22_37
# (type 0x73): symbol kind ADDR, addend shift 0, then (source position, length,
# destination position) twice: (0, 17, 37) and (0, 5, 54).
REL_ACTION = struct.pack("<II8B", 0x73, 0, 0, 0, 0, 17, 37, 0, 5, 54)

# ---- .debug_frame: DWARF CFI in the 64-bit format -------------------------------------

DW_CFA_nop, DW_CFA_advance_loc4, DW_CFA_def_cfa, DW_CFA_same_value = 0x00, 0x04, 0x0C, 0x08
DW_CFA_undefined = 0x07
CODE_ALIGN, DATA_ALIGN = 4, -4
DWARF_REG_BASE = 0x5000000     # ptxas numbers register Rn as 0x5000000 + n in CFI
NO_RETURN_REGISTER = 0xFFFFFFFF
FDE_LOCATION_OFFSET = 12 + 8   # initial_location: after the length and the CIE pointer


def uleb128(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def sleb128(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        done = (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40)
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)


def _reg(n: int) -> bytes:
    return uleb128(DWARF_REG_BASE + n)


def _entry(body: bytes) -> bytes:
    """A 64-bit DWARF CFI entry, NOP-padded so that each entry is 8-byte sized."""
    body = body.ljust(elf.align_up(len(body) + 12, 8) - 12, bytes([DW_CFA_nop]))
    return struct.pack("<IQ", 0xFFFFFFFF, len(body)) + body


def _cie() -> bytes:
    """CFA = R1 + 0; R255 (RZ) and R1 keep their values; no return-address register."""
    body = (struct.pack("<q", -1) + bytes([3, 0]) + uleb128(CODE_ALIGN) + sleb128(DATA_ALIGN)
            + uleb128(NO_RETURN_REGISTER)
            + bytes([DW_CFA_def_cfa]) + _reg(STACK_POINTER) + uleb128(0)
            + bytes([DW_CFA_same_value]) + _reg(255)
            + bytes([DW_CFA_same_value]) + _reg(STACK_POINTER))
    return _entry(body)


def _advance(delta_bytes: int) -> bytes:
    # ptxas stores a backwards step as an unsigned 32-bit byte delta, then scales it.
    return bytes([DW_CFA_advance_loc4]) + struct.pack("<I", (delta_bytes & 0xFFFFFFFF) // CODE_ALIGN)


def _fde(cie_offset: int, k: KernelImage) -> bytes:
    """ptxas's four steps: advance past the first instruction (which loads R1, the
    stack pointer); advance to the CFA point; CFA = R1 + frame size; advance to the
    last EXIT (a step that may go backwards).  A straight-line kernel with a frame ends
    instead with an advance of 0 and CFA = R1 + 0."""
    cfa_at = k.cfa_location()
    last_exit = k.fde_end if k.fde_end is not None else max(k.exit_offsets, default=cfa_at)
    body = (struct.pack("<QQQ", cie_offset, 0, len(k.text))
            + _advance(0x10) + _advance(cfa_at - 0x10)
            + bytes([DW_CFA_def_cfa]) + _reg(STACK_POINTER) + uleb128(k.frame_size))
    if k.straight_line and k.frame_size:   # no advance to the EXIT: CFA = R1 + 0 right there
        body += _advance(0) + bytes([DW_CFA_def_cfa]) + _reg(STACK_POINTER) + uleb128(0)
    else:
        body += _advance(last_exit - cfa_at)
    return _entry(body)


# ---- placing sections in the file ----------------------------------------------------

def _link(sections: list[Section], arch: str) -> bytes:
    """Lay the sections out in order, then the section headers, then the program
    headers; return the file."""
    out = bytearray(elf.EHDR.size)
    for s in sections:
        if s.type == elf.SHT_NOBITS:
            continue
        s.offset = elf.align_up(len(out), s.align)
        out += bytes(s.offset - len(out)) + s.data
    shoff = elf.align_up(len(out), 8)
    out += bytes(shoff - len(out))
    for s in sections:
        if s.type == elf.SHT_NOBITS:
            s.offset = shoff
    headers = [Section("", elf.SHT_NULL, align=0)] + sections
    out += b"".join(s.pack_header() for s in headers)
    phoff = len(out)
    segments = _segments(sections, phoff)
    out += b"".join(p.pack() for p in segments)
    header = elf.Header(osabi=ELFOSABI_CUDA, abiversion=CUDA_ABI_VERSION, type=elf.ET_EXEC,
                        machine=EM_CUDA, flags=target(arch).e_flags,
                        phoff=phoff, shoff=shoff, phnum=len(segments), shnum=len(headers),
                        shstrndx=1)
    out[:elf.EHDR.size] = header.pack()
    return bytes(out)


def _segments(sections: list[Section], phoff: int) -> list[Segment]:
    """PHDR; one LOAD over constant banks and code; one over writable memory (if any:
    .nv.global.init's bytes, then the NOBITS windows, .nv.global and shared memory);
    and a LOAD over the program headers themselves, as ptxas writes them."""
    loaded = [s for s in sections if s.flags & elf.SHF_ALLOC and not s.flags & elf.SHF_WRITE
              and s.type != elf.SHT_NOBITS]
    writable = [s for s in sections if s.flags & elf.SHF_WRITE]
    count = 3 + bool(writable)
    table_size = count * elf.PHDR.size
    rx = elf.PF_R | elf.PF_X
    start = loaded[0].offset
    end = loaded[-1].offset + loaded[-1].size
    segments = [Segment(elf.PT_PHDR, rx, phoff, table_size, table_size),
                Segment(elf.PT_LOAD, rx, start, end - start, end - start)]
    if writable:
        filesz = sum(s.size for s in writable if s.type != elf.SHT_NOBITS)
        segments.append(Segment(elf.PT_LOAD, elf.PF_R | elf.PF_W, writable[0].offset, filesz,
                                _shared_extent(writable)))
    segments.append(Segment(elf.PT_LOAD, rx, phoff, table_size, table_size))
    return segments


def _shared_extent(shared: list[Section]) -> int:
    """Bytes spanned by the kernels' shared windows placed one after another, aligned."""
    end = 0
    for s in shared:
        end = elf.align_up(end, s.align) + s.size
    return end
