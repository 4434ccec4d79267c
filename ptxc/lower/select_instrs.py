"""select_instrs: PTX IR function -> SASS IR function with virtual registers.

Expects: a parsed PTX function whose registers are all declared; the module's
variables (`.shared`, `.const`, `.global`) in `module_vars`.
Guarantees: one SASS block per PTX label (the entry block first, named after the
function), more where a PTX instruction needs control flow of its own (division's
slow path, a guarded instruction that expands to several blocks); every PTX
register is one virtual register (width 2 for 64-bit types; predicates in P;
8- and 16-bit integers in a 32-bit register whose upper bits are unspecified, so
that readers which care extend them first); parameters are read as
constant-bank operands c[0x0][param_base+offset] through `MOV v, c[..]`
(fold_constants removes the MOVs); special registers come through S2R, or
through c[0x0][..] where the driver puts them in constant bank 0 (blockDim,
gridDim).  Shared variables are laid out from offset 0 of the shared window
(func.info.shared_size); the local depot becomes a stack frame below R1
(func.info.frame_size); `.const` variables are c[0x3][offset] operands and
`.global` ones are reached through their address, read from c[0x4][slot]
(ModuleVars lays both out for the whole module; func.module_vars carries the
layout to the cubin writer).  Some results are pseudo-instructions that later passes
remove: CVTA (fold_cvta), IADD.64 and 64-bit MOV (expand_wide_ops).

Selection is a table of rules, most specific first: a regular expression over the
PTX opcode and a builder that emits SASS (the builders live in isel_*.py, one
module per family).  A rule's builder sees the PTX guard through `emit`, which puts
it on every instruction; a rule whose code branches or predicates internally is
marked `branches=True` and a guarded instance is wrapped in `@!P BRA` around it.
An opcode no rule matches is an "unsupported PTX instruction" error at its line
and column, and so is an operand a builder cannot take.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field, replace
from typing import Callable

from ..diagnostics import CompileError, Diagnostic, SourceLoc
from ..ptx import ir as ptx
from ..sass.ir import Block, CBank, Function, Imm, Instr, Mem, Reg, SpecialReg, Target, RZ, PT
from ..sass.target import target as target_record
from .kernel_info import ALIGNED_STACK, KernelInfo, frame_bytes

# The special registers the driver puts in constant bank 0: (the target's Bank0 field,
# the u32's index there).
CBANK0_SREGS = {
    "%ntid.x": ("block_dim", 0), "%ntid.y": ("block_dim", 1), "%ntid.z": ("block_dim", 2),
    "%nctaid.x": ("grid_dim", 0), "%nctaid.y": ("grid_dim", 1), "%nctaid.z": ("grid_dim", 2),
}
S2R_SREGS = {
    "%tid.x": "SR_TID.X", "%tid.y": "SR_TID.Y", "%tid.z": "SR_TID.Z",
    "%ctaid.x": "SR_CTAID.X", "%ctaid.y": "SR_CTAID.Y", "%ctaid.z": "SR_CTAID.Z",
    "%laneid": "SR_LANEID", "%warpid": "SR_VIRTUALWARPID" , "%nwarpid": "SR_VIRTCFG",
    "%smid": "SR_VIRTID", "%lanemask_eq": "SR_EQMASK", "%lanemask_lt": "SR_LTMASK",
    "%lanemask_le": "SR_LEMASK", "%lanemask_gt": "SR_GTMASK", "%lanemask_ge": "SR_GEMASK",
    "%clock": "SR_CLOCKLO", "%clock_hi": "SR_CLOCKHI",
}
# What the target decides (ptxc.sass.target): the parameter base; the bytes reserved at
# the start of the shared window (sm_90: 1 KiB, .nv.shared.reserved.0), after which the
# variables follow; whether a shared address carries the CTA's rank in its cluster
# (sm_90: bits 24 and up, `S2R SR_CgaCtaId`, `LEA ..., 0x18`, as ptxas's sm_90 code
# forms it); operations it spells differently (same operands, same meaning: sm_90's
# integer min/max is VIMNMX, its global reduction REDG).
BUILTIN_CONSTANTS = {"WARP_SZ": 32}   # PTX's predefined constant
USER_CONST_BANK = 3   # `.const` variables live in constant bank 3 on sm_89
ADDRESS_BANK = 4      # and the 64-bit addresses of `.global` variables in bank 4 (8 bytes each)
ADDRESS_SLOT = 8


class Unsupported(Exception):
    """A PTX instruction or operand this backend cannot lower (reported with its location)."""

    def message(self) -> str:
        return f"unsupported {self}"


class BadOperand(Unsupported):
    """An operand PTX itself forbids there (a register of the wrong type)."""

    def message(self) -> str:
        return str(self)


@dataclass
class Rule:
    pattern: str                      # regular expression over the whole PTX opcode
    build: Callable                   # (selector, ptx instr) -> None, emits SASS
    why: str                          # one line: what this rule lowers and why so
    branches: bool = False            # emits its own control flow or predicated code

    def __post_init__(self):
        self.regex = re.compile(self.pattern)

    def matches(self, opcode: str) -> bool:
        return self.regex.fullmatch(opcode) is not None


@dataclass
class ModuleVars:
    """Module-scope variables a function may name (from ptx.Module.globals), and where
    they live, laid out once for the whole module as ptxas lays them out (the cubin
    writer places them at these offsets):

    - `.const` variables in constant bank 3 (`const_offsets`: name -> offset);
    - `.global` variables in the module's global window, `.nv.global.init` for those
      with an initializer and `.nv.global` for the others (`global_offsets`), and the
      address of each in constant bank 4 (`address_slots`: name -> offset of 8 bytes),
      which the driver's loader fills through a relocation;
    - the system calls declared `.extern .func` (vprintf, ...) through their address in
      bank 4 as well (`extern_slots`), before the variables' slots as ptxas places them.

    Offsets go in placement order (`.visible` variables first, then the others, each
    in declaration order), each at the variable's alignment.  `.extern` variables are
    not placed."""
    shared: list = field(default_factory=list)
    const: list = field(default_factory=list)
    other: list = field(default_factory=list)
    declared: list = field(default_factory=list)   # all of them, in declaration order
    const_offsets: dict = field(default_factory=dict)
    global_offsets: dict = field(default_factory=dict)
    address_slots: dict = field(default_factory=dict)
    extern_slots: dict = field(default_factory=dict)    # `.extern .func` name -> bank-4 offset

    @classmethod
    def of(cls, variables, functions=()) -> "ModuleVars":
        out = cls()
        from .lower_calls import is_extern
        by_name = {f.name: f for f in functions or ()}
        for f in functions or ():
            if is_extern(f.name, by_name) and f.name not in out.extern_slots:
                out.extern_slots[f.name] = ADDRESS_SLOT * len(out.extern_slots)
        for var in variables or ():
            {".shared": out.shared, ".const": out.const}.get(var.state, out.other).append(var)
            out.declared.append(var)
        out._layout()
        return out

    def placed(self) -> list:
        """The `.const` and `.global` variables with a place, in placement order."""
        return [v for v in placement_order(self.declared)
                if v.name in self.const_offsets or v.name in self.global_offsets]

    def _layout(self) -> None:
        cursors = {"const": 0, "init": 0, "zero": 0}
        for var in placement_order(self.declared):
            if var.extern or var.state not in (".const", ".global"):
                continue
            window = "const" if var.state == ".const" else "init" if var.init is not None else "zero"
            offset = align_up(cursors[window], variable_align(var))
            cursors[window] = offset + var.size
            if window == "const":
                self.const_offsets[var.name] = offset
            else:
                self.global_offsets[var.name] = offset
                self.address_slots[var.name] = ADDRESS_SLOT * (len(self.extern_slots) + len(self.address_slots))


def placement_order(variables) -> list:
    """ptxas places `.visible` module variables first, then the others (measured:
    offsets, address slots and symbols all follow this order)."""
    return [v for v in variables if v.visible] + [v for v in variables if not v.visible]


def variable_align(var) -> int:
    return var.align or _type_size(var.type)


def align_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def initial_bytes(var) -> bytes | None:
    """A variable's initializer as the bytes memory holds (little-endian), zeros after
    the last value given; None without an initializer.  Elements of a float type, and
    float literals in 32- or 64-bit elements, are IEEE floats (an integer literal in a
    float element is converted); integers wrap to the element's width."""
    if var.init is None:
        return None
    elem = _type_size(var.type)
    is_float = var.type.lstrip(".") in ("f32", "f64")
    out = bytearray()
    for imm in var.init:
        if elem in (4, 8) and (is_float or imm.type in (".f32", ".f64")):
            out += struct.pack("<f" if elem == 4 else "<d", float(imm.value))
        else:
            out += (int(imm.value) & ((1 << (8 * elem)) - 1)).to_bytes(elem, "little")
    return bytes(out[:var.size]).ljust(var.size, b"\0")


class Selector:
    """Maps PTX registers to virtual SASS registers and collects the emitted code."""

    def __init__(self, ptx_func: ptx.Function, arch: str, module_vars: ModuleVars | None = None):
        self.ptx_func = ptx_func
        self.arch = arch
        self.target = target_record(arch)
        self.func = Function(name=ptx_func.name, param_base=self.target.param_base, arch=arch)
        self.func.info = KernelInfo()
        self.values: dict[str, Reg] = {}
        self.types: dict[str, str] = {}
        self._decls = None      # see _declared_type
        # a .func's own parameters are on the stack (lower_calls), not in bank 0
        self.param_offsets = self._layout_params(ptx_func.params) if ptx_func.entry else {}
        self.block = Block(ptx_func.name)
        self.func.blocks.append(self.block)
        self.guard: Reg | None = None     # the PTX guard of the instruction being lowered
        self.labels = 0
        self.carry = None                 # PTX's carry flag: the predicate the last .cc wrote (isel_int)
        self.module_vars = module_vars or ModuleVars()
        self.func.module_vars = self.module_vars
        self.symbols: dict[str, tuple] = {}   # name -> (space, offset)
        self._layout_variables()
        self.ptx_instr: ptx.Instr | None = None
        self._shared_base = None          # (block, register): the window's base on sm_90
        self.opcodes = self.target.opcodes
        for name, values in ptx_func.directives:
            if name in (".maxntid", ".reqntid"):
                self.func.info.max_threads = tuple(values)
            elif name == ".maxnreg" and values:
                self.func.info.max_reg_count = values[0]

    # ---- layout ----------------------------------------------------------------
    def _layout_params(self, params) -> dict[str, int]:
        """Parameters at their natural alignment, as the CUDA ABI packs them."""
        offsets, cursor = {}, 0
        for param in params:
            align = param.align or _type_size(param.type)
            cursor = (cursor + align - 1) // align * align
            offsets[param.name] = cursor
            self.func.params.append((cursor, param.size))
            cursor += param.size
        return offsets

    def _layout_variables(self) -> None:
        """Shared variables from offset 0 of the shared window in declaration order
        (module scope first), each at its alignment; `.const` ones in bank 3 and
        `.global` ones through their address in bank 4, where ModuleVars put them;
        the local depot (one per function) is the stack frame."""
        info = self.func.info
        shared = [v for v in self.module_vars.shared if self._names(v.name)] + \
                 [v for v in self.ptx_func.vars if v.state == ".shared"]
        cursor = self.target.reserved_shared if shared else 0
        for var in shared:
            align = var.align or _type_size(var.type)
            if var.extern:
                info.dynamic_shared = True
            cursor = (cursor + align - 1) // align * align
            self.symbols[var.name] = ("shared", cursor)
            cursor += var.size
            info.shared_align = max(info.shared_align, align)
        info.shared_size = cursor
        for name, offset in self.module_vars.const_offsets.items():
            self.symbols[name] = ("const", offset)
        for name, slot in self.module_vars.address_slots.items():
            self.symbols[name] = ("global", slot)
        frame = self._layout_call_buffers()
        from .lower_calls import needs_aligned_stack
        functions = getattr(self.ptx_func, "module_functions", None) or {}
        if functions and needs_aligned_stack(self.ptx_func, functions):
            info.frame_align = max(info.frame_align, ALIGNED_STACK)
        for var in self.ptx_func.vars:
            if var.state == ".local":
                align = var.align or _type_size(var.type)
                frame = (frame + align - 1) // align * align
                self.symbols[var.name] = ("local", frame)
                frame += var.size
                info.frame_align = max(info.frame_align, align)
        info.frame_size = frame_bytes(info, frame)
        for var in self.module_vars.other:
            self.symbols.setdefault(var.name, (var.state.lstrip("."), None))

    def _layout_call_buffers(self) -> int:
        """Real calls' `.param` buffers at the bottom of the frame, a .func's own
        parameters above it, functions as their ids (lower_calls' ABI); the bytes
        the buffers take."""
        from . import lower_calls
        functions = getattr(self.ptx_func, "module_functions", None) or {}
        for name, fid in lower_calls.function_ids(functions.values()).items():
            self.symbols[name] = ("function", fid)
        offsets, size = lower_calls.call_buffers(self.ptx_func) if functions else ({}, 0)
        if not self.ptx_func.entry:
            offsets.update(lower_calls.incoming_params(self.ptx_func))
        for name, offset in offsets.items():
            self.symbols[name] = ("local", offset)
        return size

    def _names(self, name: str) -> bool:
        """Whether the function's body mentions a module variable (ptxas allocates
        module-scope shared variables only for the kernels that use them)."""
        for item in self.ptx_func.body:
            if isinstance(item, ptx.Instr) and any(_mentions(op, name) for op in item.operands):
                return True
        return False

    # ---- registers -------------------------------------------------------------
    def reg_type(self, op: ptx.Reg) -> str:
        """The declared PTX type of a register, without the dot ('b32', 'pred')."""
        if op.name not in self.types:
            declared = self._declared_type(op)
            if declared is None:
                raise Unsupported(f"register {op.name} is not declared")
            self.types[op.name] = declared.lstrip(".")
        return self.types[op.name]

    def _declared_type(self, op: ptx.Reg) -> str | None:
        """ptx_func.reg_type(op) (the first declaration naming it, honouring `%r<N>`
        ranges), from an index of the declarations built on the first call."""
        if self._decls is None:
            exact, ranges = {}, {}
            for k, decl in enumerate(self.ptx_func.regs):
                if decl.count is None:
                    exact.setdefault(decl.prefix, (k, decl.type))
                else:
                    ranges.setdefault(decl.prefix, []).append((k, decl.count, decl.type))
            self._decls = (exact, ranges)
        exact, ranges = self._decls
        best = exact.get(op.name)
        m = _NUMBERED.fullmatch(op.name)
        if m:
            num = int(m.group(2))
            for k, count, type_ in ranges.get(m.group(1), ()):    # in declaration order
                if num < count:
                    if best is None or k < best[0]:
                        best = (k, type_)
                    break
        return None if best is None else best[1]

    def reg(self, op: ptx.Reg) -> Reg:
        if op.name not in self.values:
            ptx_type = self.reg_type(op)
            file = "P" if ptx_type == "pred" else "R"
            width = 2 if _type_size(ptx_type) == 8 else 1
            self.values[op.name] = self.func.new_vreg(file, width)
        return self.values[op.name]

    def new(self, width: int = 1) -> Reg:
        return self.func.new_vreg("R", width)

    def new_pred(self) -> Reg:
        return self.func.new_vreg("P", 1)

    # ---- operands ----------------------------------------------------------------
    def value(self, op, type_: str):
        """A PTX source operand for an instruction of PTX type `type_` ('s32', 'f32',
        'b64', ...): a register, or a 32-bit immediate / constant-bank operand that
        fold_constants and legalize_operands place or move into a register.
        64-bit constants always come in a register (a 64-bit MOV pseudo)."""
        size = _type_size(type_)
        if isinstance(op, ptx.Reg):
            return self.reg(op)
        if isinstance(op, ptx.Imm):
            bits = immediate_bits(op, type_)
            if size == 8:
                return self.materialize(Imm(bits, "int"), 2)
            return Imm(bits, "f32" if type_ == "f32" else "int")
        if isinstance(op, ptx.SpecialReg):
            return self.special(op)
        if isinstance(op, ptx.Symbol):
            if op.name in BUILTIN_CONSTANTS:
                return Imm(BUILTIN_CONSTANTS[op.name], "int")
            return self.symbol_value(op.name, size)
        if isinstance(op, ptx.NotReg):
            reg = self.reg(op.reg)
            return replace(reg, inv=not reg.inv)
        raise Unsupported(f"operand {op}")

    def r(self, op, type_: str) -> Reg:
        """A source operand in a register (constants moved into one)."""
        value = self.value(op, type_)
        if isinstance(value, Reg):
            return value
        return self.materialize(value, 1)

    def materialize(self, value, width: int = 1) -> Reg:
        """A fresh register set to a constant by a MOV (64-bit: the MOV pseudo)."""
        if isinstance(value, Imm) and value.kind != "int":
            value = Imm(value.bits, "int")
        dst = self.new(width)
        self.emit("MOV", (), [dst], [value])
        return dst

    def special(self, op: ptx.SpecialReg):
        if op.name in CBANK0_SREGS:
            slot, index = CBANK0_SREGS[op.name]
            return CBank(0, getattr(self.target.bank0, slot) + 4 * index)
        if op.name in S2R_SREGS:
            dst = self.new()
            self.emit("S2R", (), [dst], [SpecialReg(S2R_SREGS[op.name])])
            return dst
        raise Unsupported(f"special register {op.name}")

    def symbol_value(self, name: str, size: int):
        """The address a symbol names: a shared variable's offset in the shared window,
        the local depot's address (the stack pointer R1 plus its frame offset), a
        `.const` variable's offset in bank 3, a `.global` variable's 64-bit address
        (from bank 4); parameters of .func are registers."""
        space, offset = self.symbols.get(name, (None, None))
        if space == "shared" and self.target.shared_rank_shift is not None:
            lo = self.new()
            self.emit("IADD3", (), [lo], [self.shared_base(), Imm(offset, "int"), Reg("R", RZ)])
            if size != 8:
                return lo
            dst = self.new(2)
            self.emit("MOV", (), [half(dst, 0)], [lo])
            self.emit("MOV", (), [half(dst, 1)], [Reg("R", RZ)])
            return dst
        if space == "shared":
            value = Imm(offset, "int")
            return self.materialize(value, 2) if size == 8 else value
        if space == "local":
            return self.local_address(offset, size)
        if space == "function":   # a function pointer: the function's id (lower_calls)
            value = Imm(offset, "int")
            return self.materialize(value, 2) if size == 8 else value
        if space == "const":   # an address in constant bank 3: its offset there
            value = Imm(offset, "int")
            return self.materialize(value, 2) if size == 8 else value
        if space == "global":
            if size != 8:
                raise Unsupported(f"32-bit address of global variable '{name}'")
            return self.global_address(name)
        raise Unsupported(f"address of '{name}' ({space or 'unknown'} symbol)")

    def shared_base(self) -> Reg:
        """sm_90: the CTA's rank in its cluster shifted to bits 24.. (a shared address's
        high byte), read once per block: `S2R R, SR_CgaCtaId; IMAD.SHL.U32 R, R, 0x1000000, RZ`."""
        if self._shared_base is not None and self._shared_base[0] is self.block:
            return self._shared_base[1]
        rank, base = self.new(), self.new()
        guard, self.guard = self.guard, None     # unguarded: later instructions of the block reuse it
        self.emit("S2R", (), [rank], [SpecialReg("SR_CgaCtaId")])
        self.emit("IMAD", ("SHL", "U32"), [base], [rank, Imm(1 << self.target.shared_rank_shift, "int"),
                                                  Reg("R", RZ)], comment="shared window: the CTA's rank")
        self.guard = guard
        self._shared_base = (self.block, base)
        return base

    def global_address(self, name: str) -> Reg:
        """A `.global` variable's address in a register pair: the two words the loader
        put at its slot in bank 4 (`MOV R2, c[0x4][0x8]`, `MOV R3, c[0x4][0xc]`)."""
        dst = self.new(2)
        self.emit("MOV", (), [dst], [CBank(ADDRESS_BANK, self.module_vars.address_slots[name])],
                  comment=f"address of {name}; pseudo: expand_wide_ops")
        return dst

    def local_address(self, offset: int, size: int) -> Reg:
        """A local-space address: R1 (the stack pointer, pointing at the frame) plus an
        offset; 64-bit local addresses have a zero high word."""
        lo = self.new()
        self.emit("IADD3", (), [lo], [Reg("R", 1), Imm(offset, "int"), Reg("R", RZ)])
        if size != 8:
            return lo
        dst = self.new(2)
        self.emit("MOV", (), [half(dst, 0)], [lo])
        self.emit("MOV", (), [half(dst, 1)], [Reg("R", RZ)])
        return dst

    def address(self, op: ptx.Address, space: str) -> Mem:
        """`[reg+offset]`, `[symbol+offset]` as a SASS memory operand of `space`."""
        offset = op.offset
        base = op.base
        if isinstance(base, ptx.Symbol):
            kind, where = self.symbols.get(base.name, (None, None))
            if kind == "shared" and space in ("shared",):
                if self.target.shared_rank_shift is not None:
                    return Mem(self.shared_base(), where + offset)
                return Mem(Reg("R", RZ), where + offset)
            if kind == "local" and space == "local":
                return Mem(Reg("R", 1), where + offset)
            raise Unsupported(f"address of '{base.name}' in {space} memory")
        reg = self.reg(base)
        if space in ("shared", "local") and reg.width == 2:
            reg = half(reg, 0)  # shared and local addresses are 32-bit offsets
        return Mem(reg, offset)

    # ---- emitting ------------------------------------------------------------------
    def emit(self, op: str, mods=(), dsts=(), srcs=(), pred=None, comment="") -> Instr:
        if pred is not None and self.guard is not None:
            raise AssertionError(f"{op}: a rule with its own predicates must be marked branches=True")
        instr = Instr(self.opcodes.get(op, op), tuple(mods), list(dsts), list(srcs),
                      pred if pred is not None else self.guard,
                      comment=comment)
        self.block.instrs.append(instr)
        return instr

    def new_label(self, what: str = "L") -> str:
        self.labels += 1
        return f"{self.ptx_func.name}${what}{self.labels}"

    def start_block(self, label: str):
        self.block = Block(label)
        self.func.blocks.append(self.block)

    def branch_to_block(self, label: str):
        """Fall into a new block named `label` (a loop head a branch will come back to)."""
        self.start_block(label)

    def branch(self, label: str, pred: Reg | None = None):
        """A (conditional) branch ending the current block; code after it starts a new one."""
        self.emit("BRA", (), [], [Target(label)], pred=pred)
        self.start_block(self.new_label("fallthrough"))


_NUMBERED = re.compile(r"(%[a-zA-Z_$][\w$]*?)(\d+)")     # as ptx.Function.reg_type reads `%r12`


def half(reg: Reg, which: int) -> Reg:
    """The low (0) or high (1) 32-bit half of a width-2 register (RZ stays RZ)."""
    # Reg(...) with every field: what replace(reg, num=..., width=1) builds, without its cost
    num = reg.num if reg.is_zero else reg.num + which
    return Reg(reg.file, num, reg.virtual, 1, reg.neg, reg.abs, reg.inv, reg.sel)


def _mentions(op, name: str) -> bool:
    if isinstance(op, ptx.Symbol):
        return op.name == name
    if isinstance(op, ptx.Address):
        return _mentions(op.base, name)
    if isinstance(op, (ptx.Vector, ptx.OperandList)):
        return any(_mentions(e, name) for e in op.elems)
    return False


def _type_size(ptx_type: str) -> int:
    size = _SIZE_OF.get(ptx_type)      # the usual names, with or without the dot
    if size is not None:
        return size
    ptx_type = ptx_type.lstrip(".")
    return 1 if ptx_type == "pred" else ptx.type_size(ptx_type)


# _type_size of every name ptx.type_size knows, and with its dot: a table of the PTX types
_SIZE_OF = {**{name: (1 if name == "pred" else size) for name, size in ptx._TYPE_SIZES.items()},
            **{"." + name: (1 if name == "pred" else size) for name, size in ptx._TYPE_SIZES.items()}}


def immediate_bits(op: ptx.Imm, type_: str) -> int:
    """The bits of a PTX immediate as an operand of type `type_`: floats in IEEE form,
    integers wrapped to the type (16-bit signed ones sign-extended to 32 bits, as the
    registers that hold them are compared after sign extension)."""
    size = _type_size(type_)
    if type_ == "f32" or (op.type == ".f32" and size == 4):
        return struct.unpack("<I", struct.pack("<f", float(op.value)))[0]
    if type_ == "f64" or op.type == ".f64":
        return struct.unpack("<Q", struct.pack("<d", float(op.value)))[0]
    if op.type == ".f32":
        return struct.unpack("<I", struct.pack("<f", float(op.value)))[0]
    value = int(op.value)
    if size <= 2:
        value &= (1 << (8 * size)) - 1
        if type_.startswith("s") and value >> (8 * size - 1):
            value -= 1 << (8 * size)
        return value & 0xFFFFFFFF
    return value & ((1 << (8 * max(size, 4))) - 1)


def _rules():
    from .isel_rules import RULES
    return RULES


_RULE_OF: dict = {}     # opcode -> the first rule of isel_rules.RULES matching it (or None)


def rule_for(opcode: str):
    """The first rule whose pattern matches `opcode` (looked up once per opcode)."""
    try:
        return _RULE_OF[opcode]
    except KeyError:
        rule = _RULE_OF[opcode] = next((r for r in _rules() if r.matches(opcode)), None)
        return rule


def select_instrs(ptx_func: ptx.Function, arch: str = "sm_89", filename: str = "<ptx>",
                  module_vars: ModuleVars | None = None) -> Function:
    selector = Selector(ptx_func, arch, module_vars)
    problems = []
    for item in ptx_func.body:
        if isinstance(item, ptx.Label):
            selector.start_block(item.name)
            continue
        rule = rule_for(item.opcode)
        selector.ptx_instr = item
        try:
            if rule is None:
                raise Unsupported(f"PTX instruction '{item.opcode}'")
            lower_one(selector, rule, item)
        except Unsupported as exc:
            line, col = item.loc or (0, 0)
            problems.append(Diagnostic(exc.message(), SourceLoc(filename, line, col)))
        finally:
            selector.guard = None
    if problems:
        raise CompileError(problems)
    func = selector.func
    func.subroutine = not ptx_func.entry
    functions = getattr(ptx_func, "module_functions", None)
    if functions:
        from .lower_calls import CallContext
        func.call_context = CallContext(functions, arch, filename, selector.module_vars)
    return func


# Operations whose register operands must all have the instruction's type size
# (PTX's "operand types must match the instruction type" for arithmetic).
SAME_SIZE_OPS = frozenset("add sub mul mad fma min max and or xor not neg abs div rem selp".split())


def check_operand_types(s: Selector, item: ptx.Instr) -> None:
    """A register of the wrong size for an arithmetic instruction (add.s32 on a 64-bit
    register) is an error at the instruction, not silently wrong code."""
    parts = item.parts          # (once: each of base, has() and parts splits the opcode)
    base, modifiers = parts[0], parts[1:]
    if base not in SAME_SIZE_OPS or "wide" in modifiers or "hi" in modifiers and base == "mad":
        return
    type_ = parts[-1]
    if type_ not in ptx._TYPE_SIZES or type_ == "pred":
        return
    size = _type_size(type_)
    operands = item.operands[:3] if base == "selp" else item.operands
    for op in operands:
        if isinstance(op, ptx.Reg):
            declared = s.reg_type(op)
            if declared == "pred" and base in ("and", "or", "xor", "not"):
                continue
            if _type_size(declared) != size and not (declared in ("b16", "u16", "s16") and size == 2):
                raise BadOperand(f"operand {op.name} is .{declared} but '{item.opcode}' works on .{type_}")


def lower_one(s: Selector, rule: Rule, item: ptx.Instr) -> None:
    """Run one rule; a guarded instruction whose code branches is skipped by a branch."""
    check_operand_types(s, item)
    guard = None
    if item.guard is not None:
        reg = s.reg(item.guard)
        guard = replace(reg, inv=item.guard_negated)
    if guard is None or not rule.branches:
        s.guard = guard
        rule.build(s, item)
        return
    skip = s.new_label("skip")
    s.branch(skip, replace(guard, inv=not guard.inv))
    rule.build(s, item)
    s.start_block(skip)
