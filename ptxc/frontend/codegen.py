"""Typed AST -> PTX IR (ptxc.ptx.ir.Module), in NVVM's style.

One PTX function per kernel; __device__ functions are inlined into their callers, as
NVVM's -O3 inliner does for the small functions kernels call.  Generation happens in
two steps:

1. `FunctionCodegen` walks the typed AST and emits PTX instructions into basic blocks,
   with virtual registers (VReg).  A local variable that is initialized once and never
   assigned is just a name for the value that initialized it (what mem2reg makes of it);
   a variable assigned again gets one register, written in place.  Instructions with the
   same operands in one block are emitted once (local value numbering).

2. A flat list of passes (PASSES, below) rewrites the blocks as NVVM's pipeline would
   leave them, then `number_registers` gives the virtual registers NVVM's names:

       eliminate_dead_code  place_cvta  sink_loads  fuse_multiply_add
       fold_extending_loads  layout_blocks  number_registers

The register-numbering rule (docs/frontend.md has the derivation, with vadd):
registers are numbered per class (%r, %rd, %f, ...) from 1; first the values that live
across basic blocks, in order of definition (LLVM's FunctionLoweringInfo gives them
virtual registers before instruction selection), then kernel parameters that live
across blocks, in parameter order, then every other value in order of definition.
"""
from __future__ import annotations

import math
import os
import struct

from ..diagnostics import CompileError, Diagnostic, SourceLoc
from ..ptx import ir
from . import ast as A
from . import sema as S
from .sema import NESTING_LIMIT
from .mangle import mangle_static_local
from . import mathlib
from .builtins import BUILTINS
from .passes import run_passes
from .plan import PUSH_CHILDREN, loop_pragmas, plan_body, statements
from .vir import (AggValue, RegAgg, is_aggregate, leaf_range, leaves, FLOAT_CMP, FLOAT_INVERSE, GENERIC, INT_CMP, INVERSE, SPECIAL_REGS, SWAPPED, Block, MemRef,
                  PointerInfo, Unsupported, VarRef, VReg, arith_type, bits, canonical_compare, cvt_int, defines,
                  exact_reciprocal, f32_bits, float_type, fold_compare, imm_for, int_type, memory_type, mov_type,
                  param_type, reg_class, sel_type, value_key, ENDS_BLOCK, OpcodeTable, PURE_OPCODE, READS_FIRST)


class FunctionCodegen:
    # Its state is in slots: an instance dict of this many attributes no longer shares
    # its keys with the class, which leaves every `self.x` and `self.method()` slow
    # (unspecialized); __dict__ takes whatever else a pass may add.
    __slots__ = (
        "module", "fsym", "index", "next_id", "next_label", "blocks", "rank_base", "rank_counter", "block",
        "memo", "loaded", "value_keys", "memo_deps", "write_log", "adopt_log", "def_blocks", "clobber_log", "uses", "bindings",
        "pointers", "kernel_pointers", "mutable", "known", "multiplies", "narrow_loads", "loads",
        "param_loads", "defs", "load_order", "loops", "returns", "inline_stack", "exit_label", "shared_vars",
        "aliases", "vars", "has_asm", "referenced", "ranks", "loop_regions", "offsets", "named", "frozen",
        "frame_size", "frame_align", "frame_regs", "plan", "call_params", "prototypes", "call_count",
        "region_tag", "regions", "block_names", "branch_targets", "__dict__")

    def __init__(self, module: "ModuleCodegen", fsym: S.FunctionSymbol, index: int):
        self.module = module
        self.fsym = fsym
        self.index = index
        self.next_id = 0
        self.next_label = 0
        self.blocks: list[Block] = []
        self.rank_base = 3 + len(fsym.type.params)   # a block's ranks start at (base + its index) << 16
        self.block: Block = self.new_block()
        self.memo: dict = {}                 # value numbering: key -> value, valid where the block is
        self.loaded: dict = {}               # the same for loads (what a store may make stale)
        self.value_keys: dict = {}           # value -> the one key memo_put stored it under
        self.memo_deps: dict = {}            # variable register -> memo keys that read it
        self.write_log: list = []            # variable registers written, in order (for regions)
        self.adopt_log: list = []            # temporaries variables took over, in order (for regions)
        self.def_blocks: dict = {}           # temporary -> the block whose instruction computed it
        self.clobber_log: list = []          # memory spaces clobbered, in order (for regions)
        # Reads of each register by the instructions emitted (vir.instr_uses counted; an
        # inline asm's outputs after the first count too): for writing results in place,
        # and eliminate_dead_code's counts unless a pass changed operands (then None).
        self.uses: dict[VReg, int] | None = {}
        self.bindings: dict = {}             # VarSymbol -> operand (value) or VarRef (register)
        self.pointers: dict[VReg, PointerInfo] = {}
        self.kernel_pointers: dict[VReg, S.PointerType] = {}  # ld.param results of pointer params
        self.mutable: set[VReg] = set()      # registers written more than once
        self.known: dict[VReg, ir.Imm] = {}  # variable registers holding a constant, this block
        self.multiplies = 0                  # mul instructions emitted (fuse_multiply_add has work)
        self.narrow_loads = 0                # ld into %rs (fold_extending_loads has work)
        self.loads = 0
        self.param_loads: dict[VReg, int] = {}
        self.defs: dict[VReg, ir.Instr] = {}  # the instruction that computed a temporary
        self.load_order: dict[int, int] = {}  # id(load instr) -> emission order
        self.loops: list[tuple[str, str]] = []  # (break label, continue label)
        self.returns: list = []              # (label, result VarRef or None) per inlined call
        self.inline_stack: list[S.FunctionSymbol] = []
        self.exit_label = self.make_label()
        self.shared_vars: dict = {}
        self.aliases: dict[str, str] = {}     # a renamed empty block's old label -> new
        self.vars: list[ir.Variable] = []
        self.has_asm = False                 # inline.asm pseudo-instructions to render
        self.referenced: set = set()         # labels some branch targets
        self.ranks: dict = {}                # VReg -> LLVM Reassociate rank (see value_rank)
        self.loop_regions: list = []         # (preheader block, blocks of the loop), inner loops first
        self.offsets: dict = {}              # VReg of a signed x + c -> (x, c)
        self.named: set = set()              # temporaries that a variable names (never retargeted)
        self.frozen: set = set()             # id() of instructions from mathlib: never fused
        self.frame_size = 0                  # the local memory frame (__local_depot)
        self.frame_align = 0
        self.frame_regs: set = set()         # "%SPL", "%SP" when used
        self.plan = None                     # the plan of the body being generated
        self.call_params: list = []          # `.param` buffers of real call sequences
        self.prototypes: list = []           # `.callprototype`s of indirect calls
        self.call_count = 0
        self.region_tag = None               # the inlined __noinline__ call being emitted
        self.regions: dict = {}              # id(instr) -> its region tag (fuse_multiply_add)

    # ---- emission helpers ------------------------------------------------------------
    def new_reg(self, cls: str) -> VReg:
        self.next_id += 1
        return VReg(self.next_id, cls)

    def make_label(self) -> str:
        self.next_label += 1
        return f"L{self.next_label}"

    def new_block(self, label: str | None = None, dominated: bool = False) -> Block:
        """A new block; `dominated`: entered only from the current one, so what is known
        here (value numbering, constants in variables) stays known there."""
        block = Block(label or self.make_label())
        self.rank_counter = (self.rank_base + len(self.blocks)) << 16
        self.blocks.append(block)
        self.block = block
        if not dominated:
            self.forget_all()
        return block

    def forget_all(self) -> None:
        self.memo = {}
        self.loaded = {}
        self.memo_deps = {}
        self.known = {}

    # ---- value numbering across blocks ------------------------------------------------
    # Structured code makes dominance easy: what was known before an `if`, a loop or an
    # inlined call is still known after it (at the join, which the code before
    # dominates), except values that read a variable written inside, or memory
    # written inside.  A loop's header also keeps what reads no variable and no memory.
    def region_start(self) -> tuple:
        return (dict(self.memo), dict(self.loaded), {k: set(v) for k, v in self.memo_deps.items()},
                dict(self.known), len(self.write_log), len(self.clobber_log), len(self.adopt_log))

    def region_join(self, saved: tuple, loop_header: bool = False) -> None:
        """Now at a block dominated by where `saved` was taken (after place())."""
        memo, loaded, deps, known, writes, clobbers, adoptions = saved
        memo, loaded = dict(memo), dict(loaded)   # `saved` may serve several joins: each gets its own copy
        written = set(self.write_log[writes:])
        adopted = set(self.adopt_log[adoptions:])
        if adopted:
            # A temporary computed before the region and taken over by a variable inside
            # it (an inlined callee's parameter, `x0 += 2u` on the argument's register)
            # is no longer what its key computes; nothing in `deps` says so, since it was
            # not a variable's register when it was remembered.
            memo = {k: v for k, v in memo.items() if v not in adopted and not adopted.intersection(k)}
            loaded = {k: v for k, v in loaded.items() if v not in adopted and not adopted.intersection(k)}
        spaces = set(self.clobber_log[clobbers:])
        stale = set()
        for reg in (self.mutable if loop_header else written):
            stale.update(deps.get(reg, ()))
        if loop_header or spaces:
            every = loop_header or "generic" in spaces or "all" in spaces
            stale.update(k for k in loaded if k[1] not in ("param", "const")
                         and (every or k[1] in spaces or k[1] == "generic"))
        for key in stale:
            memo.pop(key, None)
            loaded.pop(key, None)
        self.memo = memo
        self.loaded = loaded
        self.memo_deps = {reg: keys - stale for reg, keys in deps.items() if reg not in written}
        self.known = {reg: value for reg, value in known.items()
                      if reg not in written and not (loop_header and reg in self.mutable)}

    def memo_put(self, key: tuple, value) -> None:
        """Remember `value` (a register just computed) as what `key` computes."""
        (self.loaded if key[0] == "ld" else self.memo)[key] = value
        self.value_keys[value] = key
        mutable = self.mutable
        if not mutable:
            return
        for part in key:
            if part.__class__ is VReg and part in mutable:
                self.memo_deps.setdefault(part, set()).add(key)
        if value.__class__ is VReg and value in mutable:
            self.memo_deps.setdefault(value, set()).add(key)

    def place(self, label: str) -> None:
        """Start the block that `label` names (control falls into it)."""
        if not self.block.instrs and self.block.label != label and len(self.blocks) > 1:
            # An empty block: give it the new name (branches to the old name are renamed
            # in layout_blocks via the alias table).
            self.aliases[self.block.label] = label
            self.block.label = label
            self.forget_all()
            return
        self.new_block(label)

    def count_uses(self, operands) -> None:
        uses = self.uses
        for op in operands:
            if op.__class__ is VReg:
                uses[op] = uses.get(op, 0) + 1
            elif op.__class__ is _Address and op.base.__class__ is VReg:
                uses[op.base] = uses.get(op.base, 0) + 1

    def emit(self, opcode: str, *operands, guard: VReg | None = None, negated: bool = False,
             rank: bool = True) -> ir.Instr:
        instrs = self.block.instrs
        if instrs and _ENDS_BLOCK[instrs[-1].opcode]:
            self.new_block()  # code after a branch or ret starts a new (possibly dead) block
            instrs = self.block.instrs
        instr = ir.Instr(opcode, list(operands), guard, negated)
        uses = self.uses
        read = operands     # (what vir.instr_uses lists)
        defining = False
        if operands:
            first = operands[0].__class__
            if first is VReg and not READS_FIRST[opcode]:  # defines()
                defining = True
                read = operands[1:]
            elif first is _Vector:  # results (ld.v4, mov.b64 {lo, hi})
                read = operands[1:]
        for op in read:
            cls = op.__class__
            if cls is VReg:
                uses[op] = uses.get(op, 0) + 1
            elif cls is _Address:
                if op.base.__class__ is VReg:
                    uses[op.base] = uses.get(op.base, 0) + 1
            elif cls is _Vector:
                for reg in op.elems:
                    if reg.__class__ is VReg:
                        uses[reg] = uses.get(reg, 0) + 1
        if guard is not None:
            uses[guard] = uses.get(guard, 0) + 1
        instrs.append(instr)
        if self.region_tag is not None:
            self.regions[id(instr)] = self.region_tag
        if defining:
            self.def_blocks[operands[0]] = self.block
        if defining and rank:
            self.rank_instruction(instr)
        return instr

    def op(self, opcode: str, cls: str, *sources, commute: bool = True) -> VReg:
        """A pure instruction: reuse an identical one from this block if there is one.
        A commutative one gets its operands in LLVM's Reassociate order (lower rank
        first, constants last): it decides which product an add fuses with."""
        if len(sources) == 2:   # (the common case, without building a list)
            a, b = sources
            if commute and b.__class__ is not _Imm and _COMMUTES[opcode] and (
                    a.__class__ is _Imm or self.value_rank(a) > self.value_rank(b)):
                sources = (b, a)
                a, b = b, a
            key = (opcode, a if a.__class__ is VReg else value_key(a), b if b.__class__ is VReg else value_key(b))
        elif len(sources) == 1:
            a = sources[0]
            key = (opcode, a if a.__class__ is VReg else value_key(a))
        else:
            key = (opcode, *[s if s.__class__ is VReg else value_key(s) for s in sources])
        found = self.memo.get(key)
        if found is not None:
            return found
        # What emit(opcode, dst, *sources) and rank_instruction do, written out for an
        # instruction known to define a fresh register (this is the hottest path).
        instrs = self.block.instrs
        if instrs and _ENDS_BLOCK[instrs[-1].opcode]:
            self.new_block()
            instrs = self.block.instrs
        self.next_id += 1
        dst = VReg(self.next_id, cls)
        instr = _Instr(opcode, [dst, *sources], None, False)
        uses = self.uses
        ranks = self.ranks
        mutable = self.mutable
        kind = _RANK_KIND[opcode]
        by_operands = kind is _ABOVE_RANK or kind is _SAME_RANK   # (else the operands' ranks stay unasked)
        rank = 0
        for src in sources:
            src_cls = src.__class__
            if src_cls is VReg:
                uses[src] = uses.get(src, 0) + 1
                if src in mutable:   # (memo_put's work: the entry goes stale when the variable changes)
                    self.memo_deps.setdefault(src, set()).add(key)
                if by_operands:
                    r = ranks.get(src)
                    if r is None:
                        r = self.value_rank(src)
                    if r > rank:
                        rank = r
            elif src_cls is _Address:
                if src.base.__class__ is VReg:
                    uses[src.base] = uses.get(src.base, 0) + 1
            elif src_cls is _Vector:
                for reg in src.elems:
                    if reg.__class__ is VReg:
                        uses[reg] = uses.get(reg, 0) + 1
        instrs.append(instr)
        if self.region_tag is not None:
            self.regions[id(instr)] = self.region_tag
        if kind is _ABOVE_RANK:
            rank += 1
        elif kind is _NEXT_RANK:
            rank = self.unmovable_rank()
        elif kind is _PARAM_RANK:
            rank = 3 + self.param_loads.get(dst, 0)
        ranks[dst] = rank
        self.defs[dst] = instr
        self.memo[key] = dst    # (dst is fresh: only sources can be variables, above)
        self.value_keys[dst] = key
        return dst

    # LLVM's Reassociate ranks values (and orders commutative operands by them):
    # constants 0, kernel parameters 3, 4, ... in order, instructions that touch
    # memory or have side effects distinct ranks in program order (each block's from
    # its own base), and every other value 1 + the highest rank of its operands.
    def value_rank(self, value) -> int:
        if value.__class__ is not VReg:
            return 0
        rank = self.ranks.get(value)
        if rank is None:
            rank = self.ranks[value] = self.unmovable_rank()
        return rank

    def unmovable_rank(self) -> int:
        self.rank_counter += 1
        return self.rank_counter

    def rank_instruction(self, instr: ir.Instr) -> None:
        dst = instr.operands[0]
        if dst in self.ranks:
            return
        kind = _RANK_KIND[instr.opcode]
        if kind is _PARAM_RANK:
            rank = 3 + self.param_loads.get(dst, 0)
        elif kind is _NEXT_RANK:
            rank = self.unmovable_rank()
        else:
            rank = 0
            ranks = self.ranks
            for op in instr.operands[1:]:
                if op.__class__ is VReg:
                    r = ranks.get(op)
                    if r is None:
                        r = self.value_rank(op)
                    if r > rank:
                        rank = r
            if kind is _ABOVE_RANK:
                rank += 1
        self.ranks[dst] = rank

    def clobber_memory(self, space: str = "generic") -> None:
        """Memory in `space` may have changed: forget loaded values that may alias it
        (a generic access, a barrier or an atomic may change any of them)."""
        self.clobber_log.append(space)
        if not self.loaded:
            return
        if space in ("generic", "all"):
            stale = [k for k in self.loaded if k[1] not in ("param", "const")]
        else:
            stale = [k for k in self.loaded if k[1] in (space, "generic")]
        for key in stale:
            del self.loaded[key]

    def write_reg(self, reg: VReg) -> None:
        """`reg` (a variable's register) is about to change: forget values derived from it."""
        self.known.pop(reg, None)
        self.write_log.append(reg)
        keys = self.memo_deps.pop(reg, None)
        if keys:
            for key in keys:
                self.memo.pop(key, None)
                self.loaded.pop(key, None)
        if reg not in self.mutable:  # a temporary a variable takes over
            self.adopt_log.append(reg)
            if self.memo:
                self.memo = {k: v for k, v in self.memo.items() if v is not reg and reg not in k}
            if self.loaded:
                self.loaded = {k: v for k, v in self.loaded.items() if v is not reg and reg not in k}

    def place_forward(self, label: str) -> None:
        """Start `label`'s block, unless nothing branches to it (it is only ever reached
        from above): then the current block simply continues, keeping what it knows."""
        if label not in self.referenced and self.block.terminator() is None:
            return
        self.place(label)

    def branch(self, label: str, guard: VReg | None = None, negated: bool = False) -> None:
        self.referenced.add(label)
        if guard.__class__ is _Imm:  # a condition known at compile time
            if bool(guard.value) != negated:
                self.emit("bra.uni", ir.Symbol(label))
            return
        if guard is None:
            self.emit("bra.uni", ir.Symbol(label))
        else:
            self.emit("bra", ir.Symbol(label), guard=guard, negated=negated)
            self.new_block(dominated=True)

    def release(self) -> None:
        """Drop all state (see ModuleCodegen.generate_function)."""
        for name in FunctionCodegen.__slots__[:-1]:
            try:
                delattr(self, name)
            except AttributeError:   # (a slot never set: a pass's, when the passes did not run)
                pass
        self.__dict__.clear()

    def unsupported(self, feature: str, node) -> Unsupported:
        return Unsupported(feature, getattr(node, "loc", None))

    # ---- the function ----------------------------------------------------------------
    def generate(self) -> ir.Function:
        fsym = self.fsym
        fdef = fsym.definition
        params = []
        self.plan = self.plan_of(fdef)
        is_func = not fsym.is_kernel
        for psym in fdef.param_symbols:
            name = f"{fsym.mangled}_param_{psym.index}"
            t = psym.type
            if is_func:   # a .func: `.param .b32 name`, read with ld.param
                ptype, load_type = _call_param_type(S.unqualified(t), psym)
                params.append(ir.Param(ptype, name))
                reg = self.new_reg(reg_class(t))
                self.emit(f"ld.param.{load_type}", reg, ir.Address(ir.Symbol(name)))
                self.param_loads[reg] = psym.index
                self.ranks[reg] = 3 + psym.index
                self.bind_initial(psym, reg)
                continue
            if is_aggregate(t):  # a struct by value: bytes in the parameter space
                params.append(ir.Param(".b8", name, align=S.alignof(t), array=S.sizeof(t)))
                self.bind_initial(psym, MemRef(ir.Symbol(name), 0, "param", S.unqualified(t)))
                continue
            ptype = param_type(t)
            params.append(ir.Param(ptype, name))
            cls = reg_class(t)
            reg = self.new_reg("rs" if cls == "p" else cls)
            load_type = ptype[1:] if ptype not in (".u8",) else ("s8" if t.__class__ is S.IntType and t.signed else "u8")
            self.emit(f"ld.param.{load_type}", reg, ir.Address(ir.Symbol(name)))
            self.param_loads[reg] = psym.index
            self.ranks[reg] = 3 + psym.index
            value = reg
            if cls == "p":  # bool parameter: a byte, tested against zero
                value = self.op("setp.ne.s16", "p", reg, ir.Imm(0))
            if t.__class__ is _PointerType:
                self.kernel_pointers[reg] = t
            self.bind_initial(psym, value)
        if is_func:
            ret_t = S.unqualified(fsym.type.ret)
            return_params = []
            result = None
            if ret_t.__class__ is not S.VoidType:
                ptype, store_type = _call_param_type(ret_t, fdef, "a result")
                return_params.append(ir.Param(ptype, "func_retval0"))
                result = self.new_var(ret_t)
            self.returns.append((self.exit_label, result))
            self.inline_stack.append(fsym)
            self.gen_body(fdef.body)
            self.place(self.exit_label)
            if result is not None:
                self.emit(f"st.param.{_store_type(ret_t)}", ir.Address(ir.Symbol("func_retval0")),
                          self.load(result))
            self.emit("ret")
            func = ir.Function(fsym.mangled, entry=False, visible=False, params=params,
                               return_params=return_params, vars=self.vars)
        else:
            self.gen_body(fdef.body)
            self.place(self.exit_label)
            self.emit("ret")
            directives = self.launch_bounds()
            func = ir.Function(fsym.mangled, entry=True, visible=True, params=params, directives=directives,
                               vars=self.vars)
        func.call_params = self.call_params
        func.prototypes = self.prototypes
        self.finish_frame(func)
        run_passes(self, func)
        if self.frame_regs:
            func.regs[:0] = [ir.RegDecl(".b64", name) for name in ("%SP", "%SPL") if name in self.frame_regs]
        return func

    def plan_of(self, fdef: A.FunctionDef):
        """The function's plan (made once per compilation: a body inlined into several
        kernels is planned once; codegen only reads plans)."""
        plans = self.module.plans
        found = plans.get(id(fdef))
        if found is None:
            found = plans[id(fdef)] = plan_body(fdef.body, self.module.loop_pragmas,
                                                self.module.deref_cache, fdef.param_symbols)
        return found

    # ---- the local memory frame ------------------------------------------------------
    def local_region(self, size: int, align: int) -> int:
        """Reserve `size` bytes of the thread's local frame; return their offset."""
        offset = (self.frame_size + align - 1) // align * align
        self.frame_size = offset + size
        self.frame_align = max(self.frame_align, align)
        return offset

    def frame_register(self, name: str) -> ir.Reg:
        """%SPL (the frame's local address) or %SP (its generic address), as NVVM names them."""
        self.frame_regs.add("%SPL")
        self.frame_regs.add(name)
        return ir.Reg(name)

    def finish_frame(self, func: ir.Function) -> None:
        if not self.frame_regs:
            return
        depot = f"__local_depot{self.index}"
        func.vars.insert(0, ir.Variable(".local", ".b8", depot, align=self.frame_align,
                                        array=max(self.frame_size, 1)))
        head = [ir.Instr("mov.u64", [ir.Reg("%SPL"), ir.Symbol(depot)])]
        if "%SP" in self.frame_regs:
            head.append(ir.Instr("cvta.local.u64", [ir.Reg("%SP"), ir.Reg("%SPL")]))
        self.blocks[0].instrs[:0] = head

    def memory_variable(self, t: S.Type) -> MemRef:
        """A local variable in the frame: `[%SPL+offset]`."""
        offset = self.local_region(S.sizeof(t), S.alignof(t))
        return MemRef(self.frame_register("%SPL"), offset, "local", S.unqualified(t))

    def launch_bounds(self) -> list:
        if not self.fsym.launch_bounds:
            return []
        values = [S.constant_value(e) for e in self.fsym.launch_bounds]
        if any(not isinstance(v, int) for v in values):
            raise self.unsupported("non-constant __launch_bounds__", self.fsym.definition)
        out = [(".maxntid", (values[0], 1, 1))]
        if len(values) > 1 and values[1]:
            out.append((".minnctapersm", (values[1],)))
        return out

    def bind_initial(self, sym: S.VarSymbol, value) -> None:
        """A parameter or initialized local: a name for `value`, a register (or one per
        field) if assigned again, or a place in the frame if it must be in memory."""
        t = S.unqualified(sym.type)
        if sym in self.plan.in_memory:
            mem = self.memory_variable(t)
            if value is not None:
                self.store(mem, self.rvalue(value, t))
            self.bindings[sym] = mem
            return
        if is_aggregate(t):
            if value.__class__ is MemRef and value.space == "param" and sym not in self.plan.written \
                    and sym.assign_count == 0:
                self.bindings[sym] = value   # a struct parameter read in place (ld.param)
                return
            value = self.rvalue(value, t) if value is not None else None
            if sym not in self.plan.written and sym.assign_count == 0 and value is not None:
                copies = [self.snapshot(v, lt) for v, (_, lt) in zip(value.values, leaves(t))]
                self.carry_pack(value.values, copies)
                self.bindings[sym] = AggValue(t, copies)
                return
            if value is not None and all(self.adoptable(v, lt) for v, (_, lt) in zip(value.values, leaves(t))):
                for v in value.values:
                    self.write_reg(v)
                    self.mutable.add(v)
                self.bindings[sym] = RegAgg(t, [VarRef(v, lt, None) for v, (_, lt) in zip(value.values, leaves(t))])
                return
            var = self.new_var(t, sym)
            if value is not None:
                self.store(var, value)
            self.bindings[sym] = var
            return
        if sym.assign_count == 0 and not sym.address_taken:
            value = self.snapshot(value, t)
            if value.__class__ is VReg:
                self.named.add(value)
            self.bindings[sym] = value
            return
        if self.adoptable(value, t):
            # The initializer's temporary becomes the variable (mem2reg makes no copy).
            self.write_reg(value)
            self.mutable.add(value)
            self.bindings[sym] = VarRef(value, t, sym)
            return
        ref = self.new_var(t, sym)
        if value is not None:
            self.assign_reg(ref, value)
        self.bindings[sym] = ref

    def adoptable(self, value, t: S.Type) -> bool:
        """Is `value` a temporary nothing else names, so a variable may take it over?
        Only one computed in this block: value numbering may hand out an older one
        again after the variable changes it (a loop's next iteration reading what the
        header kept; the join after an `if` whose arm inlined `h(c)`, `h` writing its
        parameter)."""
        return value.__class__ is VReg and value not in self.mutable and value not in self.named \
            and value not in self.param_loads and value not in self.kernel_pointers \
            and value.cls == reg_class(t) and value not in self.pointers \
            and self.def_blocks.get(value) is self.block

    def snapshot(self, value, t: S.Type):
        """`value` as it is now: a copy when it is a variable's register (which changes later)."""
        if value.__class__ is VReg and value in self.mutable:
            return self.copy(value, t)
        return value

    def new_var(self, t: S.Type, sym=None):
        """Fresh registers for a variable of type t: a VarRef, or a RegAgg for aggregates."""
        if is_aggregate(t):
            return RegAgg(t, [self.new_var(lt) for _, lt in leaves(t)])
        reg = self.new_reg(reg_class(t))
        self.mutable.add(reg)
        self.ranks[reg] = self.unmovable_rank()   # a phi, in LLVM's terms
        return VarRef(reg, S.unqualified(t), sym)

    def rvalue(self, value, t: S.Type):
        """An aggregate's value from an lvalue (MemRef, RegAgg) or a value."""
        if isinstance(value, (MemRef, RegAgg, VarRef)):
            return self.load(value)
        return value

    def copy(self, value, t: S.Type) -> VReg:
        dst = self.new_reg(value.cls if value.__class__ is VReg else reg_class(t))
        self.emit(f"mov.{mov_type(dst.cls, t)}", dst, value)
        return dst

    # ---- statements ------------------------------------------------------------------
    def gen_body(self, body: A.CompoundStmt) -> None:
        for item in body.items:
            _GEN_STMT[item.__class__](self, item)

    def gen_stmt(self, stmt) -> None:
        _GEN_STMT[stmt.__class__](self, stmt)

    def unsupported_stmt(self, stmt) -> None:
        raise self.unsupported(_describe_stmt(stmt), stmt)

    def gen_compound(self, stmt: A.CompoundStmt) -> None:
        for item in stmt.items:
            _GEN_STMT[item.__class__](self, item)

    def gen_expr_stmt(self, stmt: A.ExprStmt) -> None:
        if stmt.expr is not None:
            self.gen_effect(stmt.expr)

    def gen_effect(self, expr: A.Expr) -> None:
        """Evaluate for side effects only (the value is not needed)."""
        cls = expr.__class__
        if cls is A.PostIncDec:
            self.gen_inc_dec(expr, want_value=False)
        elif cls is A.Call:
            self.gen_call(expr, want_value=False)
        elif cls is A.Comma:
            self.gen_effect(expr.lhs)
            self.gen_effect(expr.rhs)
        elif (cls is A.ImplicitCast or cls is A.Cast) and expr.type.__class__ is S.VoidType:
            self.gen_effect(expr.operand)
        else:
            _GEN_EXPR[expr.__class__](self, expr)

    def gen_declaration(self, decl: A.Declaration) -> None:
        for init in decl.declarators:
            sym = init.symbol
            if sym is None:
                continue
            if sym.space == "shared":
                self.declare_shared(sym, decl)
                continue
            if sym.is_static and sym.space in (None, "device", "constant"):
                self.declare_static(sym, init)
                continue
            if sym.space is not None or sym.is_static:
                raise self.unsupported(f"{'static' if sym.is_static else '__' + sym.space + '__'} local variables",
                                       init)
            t = S.unqualified(sym.type)
            if init.init is None:
                if sym in self.plan.in_memory:
                    self.bindings[sym] = self.memory_variable(t)
                else:
                    self.bindings[sym] = self.new_var(t, sym)
                continue
            self.bind_initial(sym, self.gen_initializer(init.init, t))

    def declare_static(self, sym: S.VarSymbol, init: A.InitDeclarator) -> None:
        """A static local: one variable for every thread, in global memory, named as a
        function-scope static (_ZZ<function>E<name>); a const one with a constant
        scalar initializer is just that constant."""
        t = S.unqualified(sym.type)
        if sym.type.const and not is_aggregate(t) and init.init is not None:
            value = S.constant_value(init.init)
            if value is not None:
                self.bindings[sym] = imm_for(S.convert_constant(value, t), t)
                return
        sym.declaration = init
        name = mangle_static_local((sym.function or self.fsym).mangled, sym.name)
        self.bindings[sym] = self.module.global_variable(sym, init, name=name,
                                                         space="const" if sym.space == "constant" else "global")

    def gen_initializer(self, init, t: S.Type):
        """The value of an initializer: an expression, or a braced list (missing items zero)."""
        if init.__class__ is not A.InitList:
            value = _GEN_EXPR[init.__class__](self, init)
            return self.rvalue(value, t) if is_aggregate(t) else value
        if not is_aggregate(t):
            return self.gen_initializer(init.items[0], t) if init.items else imm_for(0, t)
        if t.__class__ is S.ArrayType:
            parts = [(k * S.sizeof(t.elem), t.elem) for k in range(t.size or 0)]
        else:
            parts = [(offset, ftype) for _, ftype, offset in t.fields]
        values = []
        for k, (_, part) in enumerate(parts):
            if k < len(init.items):
                value = self.gen_initializer(init.items[k], part)
            else:
                value = self.zero_value(part)
            values.extend(value.values if is_aggregate(part) else [value])
        return AggValue(t, values)

    def zero_value(self, t: S.Type):
        if is_aggregate(t):
            return AggValue(t, [imm_for(0, lt) for _, lt in leaves(t)])
        return imm_for(0, t)

    def declare_shared(self, sym: S.VarSymbol, decl: A.Declaration) -> None:
        """A __shared__ variable: a .shared declaration in the kernel, as NVVM writes it
        (its "demoted variable"), named like a function-scope static."""
        t = sym.type
        elem = t
        while elem.__class__ is S.ArrayType:
            elem = elem.elem
        extern = "extern" in decl.specs.storage
        if extern:
            name = sym.name
            var = ir.Variable(".shared", ".b8", name, align=16, array=0, extern=True)
            if name not in self.module.extern_shared:
                self.module.extern_shared[name] = var
        else:
            name = mangle_static_local((sym.function or self.fsym).mangled, sym.name)
            var = ir.Variable(".shared", ".b8", name, align=S.alignof(elem), array=S.sizeof(t))
            if name not in self.shared_vars:
                self.vars.append(var)
                self.shared_vars[name] = var
        self.bindings[sym] = MemRef(ir.Symbol(name), 0, "shared", t)

    def gen_if(self, stmt: A.IfStmt) -> None:
        constant = S.constant_value(stmt.cond)
        if constant is not None:
            self.gen_stmt(stmt.then if constant else stmt.else_) if (constant or stmt.else_) else None
            return
        jump = _simple_jump(stmt.then, self)
        if jump is not None and stmt.else_ is None:
            # `if (c) return;` / `break;` / `continue;`: branch straight to the target.
            self.cond_branch(stmt.cond, jump, True, variable=True)
            return
        end = self.make_label()
        saved = self.region_start()  # before the condition: it may branch more than once
        if stmt.else_ is None:
            self.cond_branch(stmt.cond, end, False, variable=True)
            self.gen_stmt(stmt.then)
            self.place(end)
            self.region_join(saved)
            return
        other = self.make_label()
        self.cond_branch(stmt.cond, other, False, variable=True)
        self.gen_stmt(stmt.then)
        if self.block.terminator() is None:
            self.branch(end)
        self.place(other)
        self.region_join(saved)
        self.gen_stmt(stmt.else_)
        self.place(end)
        self.region_join(saved)

    def gen_loop(self, cond, body, step, test_first: bool) -> None:
        """Loops are rotated, as LLVM's loop passes leave them: a guard before the loop,
        the test at the bottom, so each iteration takes one branch."""
        exit_label, cont_label, top = self.make_label(), self.make_label(), self.make_label()
        constant = S.constant_value(cond) if cond is not None else 1
        if test_first and constant is not None and not constant:
            return
        saved = self.region_start()
        if test_first and constant is None:
            self.cond_branch(cond, exit_label, False, variable=True)
        preheader = self.block if not self.block.instrs else self.new_block(dominated=True)
        self.new_block(top)   # the header; the (empty) preheader before it takes hoisted code
        first = len(self.blocks) - 1
        self.region_join(saved, loop_header=True)
        self.loops.append((exit_label, cont_label))
        self.gen_stmt(body)
        self.loops.pop()
        self.place_forward(cont_label)
        if step is not None:
            self.gen_effect(step)
        if constant is None:
            self.cond_branch(cond, top, True, variable=True)
        elif constant:
            self.branch(top)
        blocks = self.blocks[first:]
        if blocks[-1] is self.block and not self.block.instrs:
            blocks.pop()  # the latch's fall-through: it becomes the exit, outside the loop
        self.loop_regions.append((preheader, blocks))
        self.place(exit_label)
        if test_first or constant is None:
            self.region_join(saved)

    def gen_for(self, stmt: A.ForStmt) -> None:
        values = self.plan.unroll.get(id(stmt))
        if values is not None:
            self.gen_unrolled(stmt, values)
            return
        if stmt.init is not None:
            self.gen_stmt(stmt.init)
        self.gen_loop(stmt.cond, stmt.body, stmt.step, True)

    def gen_unrolled(self, stmt: A.ForStmt, values: list) -> None:
        """A loop unrolled fully (plan.py decides which): the body once per value of the
        induction variable, which is a constant in each copy."""
        sym = stmt.init.declarators[0].symbol
        exit_label = self.make_label()
        saved = self.region_start()
        for value in values:
            next_label = self.make_label()
            self.bindings[sym] = ir.Imm(value)
            self.loops.append((exit_label, next_label))
            iteration = self.region_start()
            self.gen_stmt(stmt.body)
            self.loops.pop()
            if next_label in self.referenced or self.block.terminator() is not None:
                self.place(next_label)
                self.region_join(iteration)
        if exit_label in self.referenced or self.block.terminator() is not None:
            self.place(exit_label)
            self.region_join(saved)

    def gen_while(self, stmt: A.WhileStmt) -> None:
        self.gen_loop(stmt.cond, stmt.body, None, True)

    def gen_do(self, stmt: A.DoStmt) -> None:
        self.gen_loop(stmt.cond, stmt.body, None, False)

    def gen_break(self, stmt: A.BreakStmt) -> None:
        self.branch(self.loops[-1][0])

    def gen_continue(self, stmt: A.ContinueStmt) -> None:
        cont = next((c for _, c in reversed(self.loops) if c is not None), None)
        self.branch(cont)

    def gen_return(self, stmt: A.ReturnStmt) -> None:
        if not self.returns:  # the kernel itself
            if stmt.value is not None:
                self.gen_effect(stmt.value)
            self.branch(self.exit_label)
            return
        label, result = self.returns[-1]
        if stmt.value is not None:
            value = self.gen_expr(stmt.value)
            if result is not None:
                self.store(result, self.rvalue(value, result.ctype) if is_aggregate(result.ctype) else value)
        self.branch(label)

    def gen_asm(self, stmt: A.AsmStmt) -> None:
        """Inline PTX: one `inline.asm` pseudo-instruction whose operands are the outputs
        (registers, written back to their lvalues after it) then the inputs; the pass
        render_inline_asm substitutes the final register names into the template."""
        outputs, operands = [], []
        for constraint, expr in stmt.outputs:
            t = S.unqualified(expr.type)
            lv = self.gen_lvalue(expr)
            reg = self.new_reg(_asm_class(constraint, t, expr))
            if is_aggregate(t):
                _asm_aggregate(t, reg.cls, expr)
                if constraint.startswith("+"):
                    self.emit(f"mov.b{bits_of_class(reg.cls)}", reg, self.aggregate_word(self.load(lv), reg.cls))
            elif constraint.startswith("+"):
                self.emit(f"mov.{mov_type(reg.cls, t)}", reg, self.convert_to_class(self.load(lv), t, reg.cls))
            outputs.append((lv, reg, t))
            operands.append(reg)
        for constraint, expr in stmt.inputs:
            value = self.gen_expr(expr)
            t = S.unqualified(expr.type)
            if is_aggregate(t):     # a struct the size of a register (GNU C takes those)
                operands.append(self.aggregate_word(self.rvalue(value, t), _asm_aggregate(
                    t, _asm_class(constraint, t, expr), expr)))
                continue
            if "n" in constraint or "i" in constraint:
                if value.__class__ is not _Imm:
                    raise self.unsupported(f"asm operand '{constraint}' that is not a constant", expr)
                operands.append(value)
                continue
            cls = _asm_class(constraint, t, expr)
            if value.__class__ is VReg and S.is_pointer(t):    # asm addresses are generic
                value = self.to_generic(value)
            value = self.convert_to_class(value, t, cls)
            operands.append(self.materialize(value, t) if value.__class__ is _Imm else value)
        instr = self.emit("inline.asm", *operands)
        instr.asm = (stmt.template, len(outputs))
        self.has_asm = True
        for lv, reg, t in outputs:
            if is_aggregate(t):
                self.store(lv, self.unpack_pair(reg, t) if reg.cls == "r" else AggValue(t, [reg]))
                continue
            self.store(lv, self.convert_from_class(reg, t))
        if stmt.volatile or "memory" in stmt.clobbers:
            self.clobber_memory("all")

    def aggregate_word(self, value: AggValue, cls: str):
        """A register-sized struct as one asm operand: its one field, or two 16-bit fields packed."""
        if cls == "r":
            return self.pack_pair(value)
        return self.materialize(value.values[0], leaves(value.ctype)[0][1])

    def convert_to_class(self, value, t: S.Type, cls: str):
        """A value of C type t in the register class an asm constraint names."""
        if value.__class__ is _Imm or value.cls == cls:
            return value
        target = {"rs": S.USHORT, "r": S.UINT, "rd": S.ULLONG, "f": S.FLOAT, "fd": S.DOUBLE}[cls]
        if value.cls == "p":
            return self.bool_to_int(value, target)
        return self.convert(value, t, target)

    def convert_from_class(self, reg, t: S.Type):
        cls = reg_class(t)
        if reg.cls == cls:
            return reg
        source = {"rs": S.USHORT, "r": S.UINT, "rd": S.ULLONG, "f": S.FLOAT, "fd": S.DOUBLE}[reg.cls]
        return self.convert(reg, source, t)

    def gen_switch(self, stmt: A.SwitchStmt) -> None:
        """A chain of compares: NVVM builds the same for a few sparse cases."""
        value = self.gen_expr(stmt.expr)
        t = stmt.expr.type
        cases: list[tuple[int, str]] = []
        default = [None]
        body = stmt.body

        def collect(node):
            if node.__class__ is A.CaseStmt:
                cases.append((node.const_value, node))
                collect(node.body)
            elif node.__class__ is A.DefaultStmt:
                default[0] = node
                collect(node.body)
            elif node.__class__ is A.CompoundStmt:
                for item in node.items:
                    collect(item)
        labels: dict[int, str] = {}
        collect(body)
        exit_label = self.make_label()
        for case_value, node in cases:
            labels[id(node)] = self.make_label()
        if default[0] is not None:
            labels[id(default[0])] = self.make_label()
        saved = self.region_start()   # the dispatch dominates every case and the exit
        for case_value, node in cases:
            p = self.compare("==", value, imm_for(case_value, t), t)
            self.branch(labels[id(node)], p)
        self.branch(labels[id(default[0])] if default[0] is not None else exit_label)
        self.loops.append((exit_label, self.loops[-1][1] if self.loops else None))

        def gen_case_body(node):
            if isinstance(node, (A.CaseStmt, A.DefaultStmt)):
                self.place(labels[id(node)])
                self.region_join(saved)
                gen_case_body(node.body)
            elif node.__class__ is A.CompoundStmt:
                for item in node.items:
                    gen_case_body(item)
            else:
                self.gen_stmt(node)
        gen_case_body(body)
        self.loops.pop()
        self.place(exit_label)
        self.region_join(saved)

    # ---- conditions ------------------------------------------------------------------
    def cond_branch(self, cond: A.Expr, target: str, when: bool, variable: bool = False) -> None:
        """Branch to `target` if `cond` is `when`; fall through otherwise.  `variable`:
        the caller found `cond` not constant (stripping casts keeps it so)."""
        while cond.__class__ is A.ImplicitCast and S.is_scalar(cond.operand.type) and cond.type == S.BOOL:
            cond = cond.operand
        constant = None if variable else S.constant_value(cond)
        if constant is not None:
            if bool(constant) == when:
                self.branch(target)
            return
        if cond.__class__ is A.Binary and cond.op in ("&&", "||") and _is_speculatable(cond.rhs):
            # SimplifyCFG's FoldBranchToCommonDest: both tests, and/or, one branch.
            self.branch(target, self.cond_pred(cond, negate=not when))
            return
        if cond.__class__ is A.Binary and cond.op in ("&&", "||"):
            if (cond.op == "&&") == when:
                skip = self.make_label()
                self.cond_branch(cond.lhs, skip, not when)
                self.cond_branch(cond.rhs, target, when)
                self.place(skip)
            else:
                self.cond_branch(cond.lhs, target, when)
                self.cond_branch(cond.rhs, target, when)
            return
        if cond.__class__ is A.Unary and cond.op == "!":
            self.cond_branch(cond.operand, target, not when)
            return
        if cond.__class__ is A.Binary and cond.op in INT_CMP:
            narrow = self.narrow_equality(cond)
            if narrow is not None:
                lhs, rhs, t = self.gen_compare_operands(cond)
            else:
                lhs = _GEN_EXPR[cond.lhs.__class__](self, cond.lhs)
                rhs = _GEN_EXPR[cond.rhs.__class__](self, cond.rhs)
                t = cond.lhs.type
            p = self.compare(cond.op, lhs, rhs, t, negate=not when)
            self.branch(target, p)
            return
        value = _GEN_EXPR[cond.__class__](self, cond)
        p = self.truth(value, cond.type, negate=not when)
        self.branch(target, p)

    def cond_pred(self, cond: A.Expr, negate: bool = False):
        """A predicate for `cond` (or its negation), evaluating every operand."""
        while cond.__class__ is A.ImplicitCast and cond.type == S.BOOL and S.is_scalar(cond.operand.type):
            cond = cond.operand
        if cond.__class__ is A.Binary and cond.op in ("&&", "||"):
            use_and = (cond.op == "&&") != negate   # De Morgan
            a = self.cond_pred(cond.lhs, negate)
            b = self.cond_pred(cond.rhs, negate)
            if a.__class__ is _Imm:
                return b if bool(a.value) == use_and else a
            if b.__class__ is _Imm:
                return a if bool(b.value) == use_and else b
            return self.op(f"{'and' if use_and else 'or'}.pred", "p", a, b)
        if cond.__class__ is A.Unary and cond.op == "!":
            return self.cond_pred(cond.operand, not negate)
        if cond.__class__ is A.Binary and cond.op in INT_CMP:
            lhs, rhs, t = self.gen_compare_operands(cond)
            return self.compare(cond.op, lhs, rhs, t, negate)
        return self.truth(self.gen_expr(cond), cond.type, negate)

    def compare(self, op: str, lhs, rhs, t: S.Type, negate: bool = False):
        """setp for `lhs op rhs` (operands already of type t); constants go on the right."""
        is_float = t.__class__ is S.FloatType
        cond = (FLOAT_CMP if is_float else INT_CMP)[op]
        if negate:
            cond = (FLOAT_INVERSE if is_float else INVERSE)[cond]
        if lhs.__class__ is _Imm and rhs.__class__ is _Imm:
            value = fold_compare(cond, lhs.value, rhs.value)
            return ir.Imm(int(value))
        if lhs.__class__ is _Imm:
            lhs, rhs = rhs, lhs
            cond = SWAPPED[cond]
        if not is_float and rhs.__class__ is _Imm and isinstance(t, (S.IntType, S.EnumType)) \
                and not (t.__class__ is S.IntType and t.name == "bool"):
            cond, rhs = canonical_compare(cond, rhs.value, t)
            if cond in ("true", "false"):
                return ir.Imm(int(cond == "true"))
        if is_float:
            suffix = float_type(t)
        elif t.__class__ is S.IntType and t.name == "bool":
            return self.bool_compare(cond, lhs, rhs)
        elif cond in ("eq", "ne"):
            suffix = int_type(t, signed=True)
        else:
            suffix = int_type(t)
        return self.op(f"setp.{cond}.{suffix}", "p", lhs, rhs)

    def inverted_setp(self, pred: VReg):
        """`!p` where p is the setp just emitted and nothing else reads it: the setp of the
        inverse condition (LLVM folds the `xor i1 %c, true` into the icmp/fcmp)."""
        last = self.block.instrs[-1] if self.block.instrs else None
        if last is None or not last.opcode.startswith("setp.") or last.operands[0] is not pred \
                or last.guard is not None or self.uses.get(pred, 0) or pred in self.mutable or pred in self.named:
            return None
        _, cond, suffix = last.opcode.split(".", 2)
        inverse = (FLOAT_INVERSE if suffix.startswith("f") else INVERSE).get(cond)
        if inverse is None:
            return None
        return self.op(f"setp.{inverse}.{suffix}", "p", *last.operands[1:])

    def narrow_equality(self, cond: A.Binary):
        """`x == c` / `x != c` of a promoted 16-bit integer: (x, c, its type), compared in
        16 bits as LLVM's instcombine leaves `icmp ne (zext i16 %x), 0`; or None."""
        if cond.op not in ("==", "!="):
            return None
        inner = []
        for side in (cond.lhs, cond.rhs):
            if side.__class__ is A.ImplicitCast and S.is_integer(side.operand.type) and \
                    S.sizeof(side.operand.type) == 2 and S.sizeof(side.type) == 4:
                inner.append(side.operand)
            else:
                inner.append(side)
        t16 = next((S.unqualified(e.type) for e in inner if S.is_integer(e.type) and S.sizeof(e.type) == 2), None)
        if t16 is None or isinstance(t16, S.EnumType):
            return None
        parts = []
        for e in inner:
            if S.is_integer(e.type) and S.sizeof(e.type) == 2 and S.unqualified(e.type) == t16:
                parts.append(e)
                continue
            value = S.constant_value(e)
            low, high = (-32768, 32767) if t16.signed else (0, 65535)
            if not isinstance(value, int) or not low <= value <= high:
                return None
            parts.append(value)
        if all(isinstance(p, int) for p in parts):
            return None
        return parts[0], parts[1], t16

    def gen_compare_operands(self, cond: A.Binary):
        """The operands of a comparison and the type it compares in."""
        narrow = self.narrow_equality(cond)
        if narrow is not None:
            lhs, rhs, t = narrow
            lhs = imm_for(lhs, t) if isinstance(lhs, int) else self.gen_expr(lhs)
            rhs = imm_for(rhs, t) if isinstance(rhs, int) else self.gen_expr(rhs)
            return lhs, rhs, t
        lhs, rhs = self.gen_expr(cond.lhs), self.gen_expr(cond.rhs)
        if S.is_pointer(cond.lhs.type) and S.is_pointer(cond.rhs.type):
            lhs, rhs = self.comparable_pointers(lhs, rhs)
        return lhs, rhs, S.unqualified(cond.lhs.type)

    def bool_compare(self, cond: str, lhs, rhs):
        lhs, rhs = self.as_pred(lhs), self.as_pred(rhs)
        if cond == "ne":
            return self.op("xor.pred", "p", lhs, rhs)
        if cond == "eq":
            x = self.op("xor.pred", "p", lhs, rhs)
            return self.op("not.pred", "p", x)
        raise Unsupported("ordering comparison of bool values", None)

    def truth(self, value, t: S.Type, negate: bool = False):
        """A predicate that is true when `value` is nonzero (or zero, if negate)."""
        if value.__class__ is _Imm:
            return ir.Imm(int(bool(value.value) != negate))
        if value.cls == "p":
            if negate:
                inverted = self.inverted_setp(value)
                if inverted is not None:
                    return inverted
            return self.op("not.pred", "p", value) if negate else value
        cond = "eq" if negate else "ne"
        if t.__class__ is S.FloatType:
            cond = "eq" if negate else "neu"
            return self.op(f"setp.{cond}.{float_type(t)}", "p", value, ir.Imm(0.0, "." + float_type(t)))
        if value.cls == "rs" and S.sizeof(t) == 1:
            # a char's 16-bit register holds its byte and whatever the truncation left above
            value = self.op("and.b16", "rs", value, ir.Imm(255))
        suffix = {"rs": "s16", "r": "s32", "rd": "s64"}[value.cls]
        return self.op(f"setp.{cond}.{suffix}", "p", value, ir.Imm(0))

    def as_pred(self, value):
        if value.__class__ is _Imm:
            p = self.new_reg("p")
            self.emit("setp.ne.s32", p, ir.Imm(int(bool(value.value))), ir.Imm(0))
            return p
        return value

    # ---- expressions -----------------------------------------------------------------
    def gen_expr(self, expr: A.Expr):
        return _GEN_EXPR[expr.__class__](self, expr)

    def unsupported_expr(self, expr: A.Expr):
        raise self.unsupported(_describe_expr(expr), expr)

    def gen_literal(self, expr) -> ir.Imm:
        if expr.__class__ is A.FloatLit:
            value = expr.value if expr.type.size == 8 else f32_bits(expr.value)
            return ir.Imm(value, "." + float_type(expr.type))
        return ir.Imm(int(expr.value))

    def gen_ident(self, expr: A.Ident):
        sym = expr.symbol
        binding = self.bindings.get(sym)
        if binding is None:   # not bound yet: a constant, a builtin, a global, a function
            if sym.__class__ is S.EnumConstSymbol:
                return ir.Imm(sym.value)
            if sym.__class__ is S.FunctionSymbol:
                return self.function_address(sym, expr)
            if sym.__class__ is not S.VarSymbol:
                raise self.unsupported(f"'{expr.name}' as a value", expr)
            if sym.kind == "builtin":
                if sym.name == "warpSize":
                    return ir.Imm(32)
                if sym.name in SPECIAL_REGS:    # `dim3 b = blockDim;`: its three registers
                    sreg = SPECIAL_REGS[sym.name]
                    return AggValue(S.unqualified(sym.type), [self.op("mov.u32", "r", ir.SpecialReg(f"{sreg}.{c}"))
                                                              for c in "xyz"])
                raise self.unsupported(f"'{sym.name}' as a whole value", expr)
            binding = self.binding(sym, expr)
        cls = binding.__class__
        if cls is VarRef:
            # A constant assigned earlier in this block is still the value (what
            # mem2reg + constant propagation would see).
            return self.known.get(binding.reg, binding.reg)
        if cls is MemRef or cls is RegAgg:
            return self.load(binding)
        return binding

    def function_address(self, sym: S.FunctionSymbol, node) -> VReg:
        """A function pointer: `mov.u64 %rd, _Z6op_addii` (the function is a .func)."""
        if sym.definition is None or sym.builtin is not None:
            raise self.unsupported(f"the address of '{sym.name}', which has no definition", node)
        self.module.want_func(sym)
        return self.op("mov.u64", "rd", ir.Symbol(sym.mangled))

    def binding(self, sym: S.VarSymbol, node):
        """What a variable is bound to: a value, a VarRef, a RegAgg or a MemRef."""
        binding = self.bindings.get(sym)
        if binding is None:
            if sym.kind == "global":
                binding = self.bindings[sym] = self.module.global_variable(sym, node)
            else:
                raise self.unsupported(f"variable '{sym.name}' used before its declaration", node)
        return binding

    def gen_member(self, expr: A.Member):
        base = expr.base
        if base.__class__ is A.Ident and base.symbol.__class__ is S.VarSymbol and base.symbol.kind == "builtin":
            sreg = SPECIAL_REGS[base.symbol.name]
            return self.op("mov.u32", "r", ir.SpecialReg(f"{sreg}.{expr.name}"))
        if expr.arrow or _is_lvalue_path(base):
            return self.load(self.gen_lvalue(expr))
        value = self.gen_expr(base)   # a member of a struct value (a call's result)
        return self.part_of_value(value, expr)

    def part_of_value(self, value, expr: A.Member):
        struct = S.unqualified(expr.base.type)
        _, offset = struct.field(expr.name)
        first, count = leaf_range(struct, offset, expr.type)
        if is_aggregate(expr.type):
            return AggValue(S.unqualified(expr.type), value.values[first:first + count])
        return value.values[first]

    def gen_load_lvalue(self, expr):
        return self.load(self.gen_lvalue(expr))

    # ---- arithmetic ------------------------------------------------------------------
    def gen_binary(self, expr: A.Binary):
        op = expr.op
        if op in ("&&", "||"):
            return self.gen_logical(expr)
        lt, rt = expr.lhs.type, expr.rhs.type
        if op in ("+", "-") and (lt.__class__ is _PointerType or rt.__class__ is _PointerType):
            return self.gen_pointer_arith(expr)
        if op in ("==", "!=") and self.narrow_equality(expr) is not None:
            return self.compare(op, *self.gen_compare_operands(expr))
        lhs = _GEN_EXPR[expr.lhs.__class__](self, expr.lhs)
        rhs = _GEN_EXPR[expr.rhs.__class__](self, expr.rhs)
        if op in INT_CMP:
            if lt.__class__ is _PointerType and rt.__class__ is _PointerType:
                lhs, rhs = self.comparable_pointers(lhs, rhs)
            return self.compare(op, lhs, rhs, S.unqualified(lt))
        return self.arith(op, lhs, rhs, S.unqualified(expr.type), expr)

    def arith(self, op: str, lhs, rhs, t: S.Type, node=None):
        """`lhs op rhs` in type t, both operands already converted to t (shifts: the count
        may be any integer)."""
        if lhs.__class__ is _Imm and rhs.__class__ is _Imm:
            try:
                value = S.fold_binary(op, lhs.value, rhs.value, t)
            except ZeroDivisionError:
                value = None
            if value is not None:
                return imm_for(S.convert_constant(value, t), t)
        cls = reg_class(t)
        if t.__class__ is S.FloatType:
            ft = float_type(t)
            if op in ("+", "*") and lhs.__class__ is _Imm:
                lhs, rhs = rhs, lhs
            if rhs.__class__ is _Imm and _float_identity(op, rhs.value):
                return lhs  # instcombine: x * 1.0, x / 1.0, x - 0.0, x + -0.0 are x
            if op == "*" and rhs.__class__ is _Imm and lhs.__class__ is VReg and lhs not in self.mutable:
                negated = self.defs.get(lhs)
                if negated is not None and negated.opcode == f"neg.{ft}":
                    # instcombine: (-x) * c is x * -c
                    return self.arith("*", negated.operands[1], ir.Imm(-rhs.value, rhs.type), t, node)
            if op == "/" and rhs.__class__ is _Imm and exact_reciprocal(rhs.value):
                # x / 2^k is x * 2^-k exactly: LLVM rewrites the division.
                return self.arith("*", lhs, ir.Imm(1.0 / rhs.value, rhs.type), t, node)
            opcode = _FLOAT_OPCODES.get(op)
            if opcode is None:
                raise self.unsupported(f"operator '{op}' on floating-point values", node)
            self.multiplies += opcode == "mul"
            return self.op(f"{opcode}.{ft}", cls, lhs, rhs)
        if cls == "p":
            raise self.unsupported(f"arithmetic on bool values", node)
        width = 64 if cls == "rd" else (32 if cls == "r" else 16)
        signed = t.signed if t.__class__ is S.IntType else True
        if lhs.__class__ is _Imm and op in ("+", "*", "&", "|", "^"):
            lhs, rhs = rhs, lhs
        if op == "*" and width == 64:
            wide = self.widening_multiply(lhs, rhs)
            if wide is not None:
                return wide
        if rhs.__class__ is _Imm:   # InstCombine's rules for a constant right operand, in order
            c = rhs.value
            variable = lhs.__class__ is not _Imm
            if op == "*" and c > 0 and c & (c - 1) == 0:
                # x * 2^k is a shift, as LLVM's instcombine makes it.
                if c == 1:
                    return lhs
                return self.op(f"shl.b{width}", cls, lhs, ir.Imm(c.bit_length() - 1))
            if op in ("+", "-") and c == 0:
                return lhs
            if variable:
                # instcombine's identities: x*0, x&0 are 0; x|0, x^0, x<<0, x>>0 are x; x&-1 is x
                if c == 0 and op in ("*", "&"):
                    return ir.Imm(0)
                if c == 0 and op in ("|", "^", "<<", ">>"):
                    return lhs
                if op == "&" and S.convert_constant(c, t) == S.convert_constant(-1, t):
                    return lhs
                if op in ("/", "%") and c > 0 and c & (c - 1) == 0:
                    return self.divide_by_power_of_two(op, lhs, c, signed, width, cls)
                if op == "-":
                    # LLVM canonicalizes x - c to x + (-c).
                    return self.arith("+", lhs, ir.Imm(S.convert_constant(-c, t)), t, node)
            if op == "+" and signed and lhs.__class__ is VReg and lhs not in self.mutable:
                # A signed add cannot overflow (nsw): x + c indexes memory as [x's address + c*size].
                result = self.op(f"add.s{width}", cls, lhs, rhs)
                self.offsets[result] = (lhs, c)
                return result
        opcode = _INT_OPCODES[width, signed][op]
        if op in ("<<", ">>") and rhs.__class__ is VReg and rhs.cls != "r":
            rhs = self.convert(rhs, S.ULLONG if rhs.cls == "rd" else S.USHORT, S.UINT)
        self.multiplies += op == "*"
        return self.op(opcode, cls, lhs, rhs)

    def widening_multiply(self, lhs, rhs):
        """ext(a) * ext(b) in 64 bits is mul.wide of the 32-bit values (LLVM's pattern)."""
        def narrow(value):
            if value.__class__ is _Imm:
                return value, None
            instr = self.defs.get(value) if value not in self.mutable else None
            if instr is not None and instr.opcode in ("cvt.u64.u32", "cvt.s64.s32") \
                    and instr.operands[1] not in self.mutable:
                return instr.operands[1], instr.opcode[4]
            return None, None
        a, sa = narrow(lhs)
        b, sb = narrow(rhs)
        if a is None or b is None or (sa is None and sb is None):
            return None
        sign = sa or sb
        if (sa and sb and sa != sb):
            return None
        for v in (a, b):
            if v.__class__ is _Imm and not (0 <= v.value < (1 << 31)):
                return None
        if a.__class__ is _Imm:
            a, b = b, a
        return self.op(f"mul.wide.{sign}32", "rd", a, b)

    def divide_by_power_of_two(self, op: str, x, divisor: int, signed: bool, width: int, cls: str):
        """x / 2^k and x % 2^k as shifts and masks, the sequences LLVM emits: unsigned
        ones directly, signed ones rounding toward zero by first adding 2^k - 1 to
        negative x (computed from the sign bit)."""
        k = divisor.bit_length() - 1
        if divisor == 1:
            return x if op == "/" else ir.Imm(0)
        if not signed:
            if op == "/":
                return self.op(f"shr.u{width}", cls, x, ir.Imm(k))
            return self.op(f"and.b{width}", cls, x, ir.Imm(divisor - 1))
        if k == 1:
            bias = self.op(f"shr.u{width}", cls, x, ir.Imm(width - 1))
        else:
            sign = self.op(f"shr.s{width}", cls, x, ir.Imm(width - 1))
            bias = self.op(f"shr.u{width}", cls, sign, ir.Imm(width - k))
        biased = self.op(f"add.s{width}", cls, x, bias)
        if op == "/":
            return self.op(f"shr.s{width}", cls, biased, ir.Imm(k))
        rounded = self.op(f"and.b{width}", cls, biased, ir.Imm(-divisor))
        return self.op(f"sub.s{width}", cls, x, rounded)

    def gen_logical(self, expr: A.Binary):
        """`a && b` as a value: predicates combined when b is safe to evaluate early,
        branches otherwise (C's short circuit)."""
        lhs = self.truth(self.gen_expr(expr.lhs), expr.lhs.type)
        if lhs.__class__ is _Imm:
            if bool(lhs.value) == (expr.op == "||"):
                return ir.Imm(int(expr.op == "||"))
            return self.truth(self.gen_expr(expr.rhs), expr.rhs.type)
        if _is_speculatable(expr.rhs):
            rhs = self.truth(self.gen_expr(expr.rhs), expr.rhs.type)
            if rhs.__class__ is _Imm:
                if bool(rhs.value) == (expr.op == "||"):
                    return rhs
                return lhs
            return self.op(f"{'and' if expr.op == '&&' else 'or'}.pred", "p", lhs, rhs)
        result = self.new_reg("p")
        self.mutable.add(result)
        self.emit("mov.pred", result, lhs)
        done = self.make_label()
        saved = self.region_start()
        self.branch(done, lhs, negated=(expr.op == "&&"))
        rhs = self.truth(self.gen_expr(expr.rhs), expr.rhs.type)
        self.emit("mov.pred", result, self.as_pred(rhs))
        self.place(done)
        self.region_join(saved)
        return result

    def gen_unary(self, expr: A.Unary):
        op = expr.op
        if op == "*":
            if expr.type.__class__ is S.FunctionType:   # `(*fp)(x)`: the function is the pointer
                return self.gen_expr(expr.operand)
            return self.load(self.gen_lvalue(expr))
        if op == "&":
            return self.address_of(expr.operand)
        value = self.gen_expr(expr.operand)
        t = S.unqualified(expr.type)
        if op == "!":
            return self.truth(value, expr.operand.type, negate=True)
        if op == "+":
            return value
        if value.__class__ is _Imm:
            folded = -value.value if op == "-" else ~value.value
            return imm_for(S.convert_constant(folded, t), t)
        if op == "-":
            return self.op(f"neg.{arith_type(t) if t.__class__ is not S.IntType else 's' + str(bits(t))}",
                           value.cls, value)
        return self.op(f"not.b{bits(t)}", value.cls, value)

    # ---- pointers and addresses ------------------------------------------------------
    # An address is a MemRef: base (a register or a variable's Symbol) + constant offset,
    # in a state space.  Global and generic addresses are 64-bit (%rd); shared ones are
    # 32-bit (%r), as NVVM keeps them.

    def pointer_info(self, value) -> PointerInfo:
        if value.__class__ is VReg:
            return self.pointers.get(value, GENERIC)
        return GENERIC

    def as_address_base(self, value, ptype: S.PointerType | None = None) -> VReg:
        """A pointer about to be dereferenced or offset.  A kernel's pointer parameter is
        assumed to point to global memory (as NVVM assumes): it is converted with
        cvta.to.global, once per block; place_cvta then positions the conversions."""
        if value.__class__ is _Imm:
            return self.op("mov.u64", "rd", value)
        param_type_ = self.kernel_pointers.get(value)
        if param_type_ is not None:
            dst = self.op("cvta.to.global.u64", "rd", value)
            pointee = param_type_.pointee
            self.pointers[dst] = PointerInfo("global", nc=pointee.const and param_type_.restrict)
            return dst
        return value

    def pointer_target(self, value, ptype: S.PointerType) -> MemRef:
        """The memory a pointer value points to (or the register variable it names)."""
        if value.__class__ is RegPointer:
            return value.lv
        reg = self.as_address_base(value, ptype)
        info = self.pointer_info(reg)
        return MemRef(reg, 0, info.space, ptype.pointee, info.nc)

    def element(self, base, elem_type: S.Type, index_expr: A.Expr | None) -> MemRef:
        """The element `index_expr` of the array that starts at `base`: a MemRef, or a
        (pointer value, pointer type) pair converted only after the index is computed
        (the order NVVM's code has: index arithmetic, then cvta, then the add)."""
        size = S.sizeof(elem_type)
        index = None
        if index_expr is not None:
            index_expr, extra = _split_constant_offset(index_expr)
        else:
            extra = 0
        if index_expr is not None:
            index = _GEN_EXPR[index_expr.__class__](self, index_expr)
            while index.__class__ is VReg and index in self.offsets and index not in self.mutable:
                index, constant = self.offsets[index]   # (x + c): c folds into the address
                extra += constant
        if isinstance(base, tuple):
            base = self.pointer_target(*base)
        offset = base.offset + extra * size
        if index is None:
            return MemRef(base.base, offset, base.space, elem_type, base.nc)
        if index.__class__ is _Imm:
            return MemRef(base.base, offset + index.value * size, base.space, elem_type, base.nc)
        if base.space == "shared" and (base.base.__class__ is ir.Symbol or base.base.cls == "r"):
            scaled = self.scale_index32(index, index_expr.type, size)
            start = base.base if base.base.__class__ is VReg else self.op("mov.u32", "r", base.base)
            addr = self.op("add.s32", "r", start, scaled, commute=False)  # a GEP: base first
            return MemRef(addr, offset, "shared", elem_type)
        start = base.base
        if start.__class__ is ir.Symbol:
            start = self.op("mov.u64", "rd", start)
        scaled = self.scale_index(index, index_expr.type, size)
        addr = self.op("add.s64", "rd", start, scaled, commute=False)  # a GEP: base first
        self.pointers[addr] = PointerInfo(base.space, base.nc)
        return MemRef(addr, offset, base.space, elem_type, base.nc)

    def scale_index(self, index: VReg, t: S.Type, size: int) -> VReg:
        """index * size as a 64-bit byte offset (mul.wide for 32-bit indices, as NVVM)."""
        if index.cls == "rd":
            if size == 1:
                return index
            if size & (size - 1) == 0:
                return self.op("shl.b64", "rd", index, ir.Imm(size.bit_length() - 1))
            return self.op("mul.lo.s64", "rd", index, ir.Imm(size))
        signed = (t.signed if t.__class__ is S.IntType else True) and not self.known_nonnegative(index)
        if index.cls == "rs":
            index = self.convert(index, t, S.INT if signed else S.UINT)
        if size == 1:
            return self.op(f"cvt.{'s' if signed else 'u'}64.{'s' if signed else 'u'}32", "rd", index)
        return self.op(f"mul.wide.{'s' if signed else 'u'}32", "rd", index, ir.Imm(size))

    def known_nonnegative(self, value) -> bool:
        """A 32-bit value that is a zero-extended narrower one (a byte or short read
        unsigned): LLVM then widens it unsigned."""
        instr = self.defs.get(value) if value.__class__ is VReg and value not in self.mutable else None
        return instr is not None and instr.opcode in ("cvt.u32.u8", "cvt.u32.u16")

    def scale_index32(self, index: VReg, t: S.Type, size: int) -> VReg:
        """index * size as a 32-bit shared-memory offset."""
        if index.cls == "rd":
            index = self.op("cvt.u32.u64", "r", index)
        elif index.cls == "rs":
            index = self.convert(index, t, S.INT)
        if size == 1:
            return index
        if size & (size - 1) == 0:
            return self.op("shl.b32", "r", index, ir.Imm(size.bit_length() - 1))
        return self.op("mul.lo.s32", "r", index, ir.Imm(size))

    def address_value(self, mem: MemRef) -> VReg:
        """A pointer (64-bit) to `mem`, as C sees pointers: global stays global, shared
        becomes generic (cvta.shared)."""
        base = mem.base
        if mem.space == "shared":
            if base.__class__ is ir.Symbol:
                base = self.op("mov.u64", "rd", base)
                if mem.offset:
                    base = self.op("add.s64", "rd", base, ir.Imm(mem.offset))
            else:
                if mem.offset:
                    base = self.op("add.s32", "r", base, ir.Imm(mem.offset))
                base = self.op("cvt.u64.u32", "rd", base)
            return self.op("cvta.shared.u64", "rd", base)
        if mem.space == "local":
            # A pointer to the frame is generic: %SP (cvta.local of %SPL, set up at entry)
            # plus the offset, as NVVM writes it.
            if base == ir.Reg("%SPL"):
                return self.op("add.u64", "rd", self.frame_register("%SP"), ir.Imm(mem.offset))
            if mem.offset:
                base = self.op("add.s64", "rd", base, ir.Imm(mem.offset))
            return self.op("cvta.local.u64", "rd", base)
        if mem.space == "param":
            raise self.unsupported("the address of a kernel parameter's field", None)
        if base.__class__ is ir.Symbol:
            base = self.op("mov.u64", "rd", base)
        if mem.offset:
            reg = self.op("add.s64", "rd", base, ir.Imm(mem.offset))
        else:
            reg = base
        self.pointers[reg] = PointerInfo(mem.space, mem.nc)
        return reg

    def gen_pointer_arith(self, expr: A.Binary):
        lt, rt = expr.lhs.type, expr.rhs.type
        if S.is_pointer(lt) and S.is_pointer(rt):  # p - q
            a = self.gen_expr(expr.lhs)
            b = self.gen_expr(expr.rhs)
            a, b = self.comparable_pointers(a, b)
            diff = self.op("sub.s64", "rd", a, b)
            size = S.sizeof(lt.pointee)
            if size == 1:
                return diff
            if size & (size - 1) == 0:
                return self.op("shr.s64", "rd", diff, ir.Imm(size.bit_length() - 1))
            return self.op("div.s64", "rd", diff, ir.Imm(size))
        if S.is_pointer(lt):
            ptr_expr, idx_expr, ptype = expr.lhs, expr.rhs, lt
        else:
            ptr_expr, idx_expr, ptype = expr.rhs, expr.lhs, rt
        base = self.gen_expr(ptr_expr)
        if expr.op == "-":
            idx_expr = A.Unary(idx_expr.loc, "-", idx_expr, idx_expr.type)
        mem = self.element((base, ptype), ptype.pointee, idx_expr)
        return self.address_value(mem)

    def comparable_pointers(self, a, b):
        """Two pointers in one state space (generic unless both are known the same)."""
        ia, ib = self.pointer_info(a), self.pointer_info(b)
        if ia.space == ib.space:
            return a, b
        return self.to_generic(a), self.to_generic(b)

    def to_generic(self, value):
        info = self.pointer_info(value)
        if info.space in ("global", "local", "const"):
            return self.op(f"cvta.{info.space}.u64", "rd", value)
        return value

    def address_of(self, operand: A.Expr):
        if operand.__class__ is A.Ident and operand.symbol.__class__ is S.FunctionSymbol:
            return self.function_address(operand.symbol, operand)
        lv = self.gen_lvalue(operand)
        if isinstance(lv, (VarRef, RegAgg, _ConstRef)):
            # plan.py kept the variable in registers: the pointer only reaches `*p` in
            # inlined code, where it is the variable itself
            return RegPointer(lv)
        return self.address_value(lv)

    # ---- lvalues, loads and stores ---------------------------------------------------
    def gen_lvalue(self, expr: A.Expr):
        node_cls = expr.__class__    # (AST node classes have no subclasses: exact tests)
        if node_cls is A.Ident and expr.symbol.__class__ is S.VarSymbol:
            binding = self.bindings.get(expr.symbol)
            if binding is None:
                binding = self.binding(expr.symbol, expr)
            cls = binding.__class__
            if cls is VarRef or cls is MemRef or cls is RegAgg:
                return binding
            if binding.__class__ is AggValue:  # a struct never assigned: read it as registers
                return RegAgg(binding.ctype, [VarRef(v, lt, None) if v.__class__ is VReg else _ConstRef(v, lt)
                                              for v, (_, lt) in zip(binding.values, leaves(binding.ctype))])
            raise self.unsupported(f"assignment to '{expr.name}'", expr)
        if node_cls is A.Index:
            base_expr = expr.base
            if base_expr.__class__ is A.ImplicitCast and base_expr.operand.type.__class__ is S.ArrayType:
                base = self.gen_lvalue(base_expr.operand)  # an array object: its address
                if base.__class__ is RegAgg:
                    return self.register_element(base, expr)
            else:
                base = (_GEN_EXPR[base_expr.__class__](self, base_expr), base_expr.type)
                if base[0].__class__ is RegPointer:   # p[0], p a pointer to a register variable
                    return base[0].lv
            return self.element(base, expr.type, expr.index)
        if node_cls is A.Unary and expr.op == "*":
            return self.pointer_target(_GEN_EXPR[expr.operand.__class__](self, expr.operand), expr.operand.type)
        if node_cls is A.Member:
            return self.member_lvalue(expr)
        raise self.unsupported("this expression as an lvalue", expr)

    def member_lvalue(self, expr: A.Member):
        if expr.arrow:
            ptype = expr.base.type
            base = self.pointer_target(self.gen_expr(expr.base), ptype)
            struct = S.unqualified(ptype.pointee)
        else:
            base = self.gen_lvalue(expr.base)
            struct = S.unqualified(expr.base.type)
        _, offset = struct.field(expr.name)
        return self.sub_object(base, struct, offset, expr.type)

    def sub_object(self, base, outer: S.Type, offset: int, part: S.Type):
        """The part of type `part` at byte `offset` of the object `base` (of type outer)."""
        if base.__class__ is MemRef:
            return MemRef(base.base, base.offset + offset, base.space, part, base.nc)
        first, count = leaf_range(outer, offset, part)
        if is_aggregate(part):
            return RegAgg(S.unqualified(part), base.refs[first:first + count])
        return base.refs[first]

    def register_element(self, base: RegAgg, expr: A.Index):
        """An element of an array kept in registers: the index must be a constant."""
        index = self.gen_expr(expr.index)
        if index.__class__ is not _Imm:
            raise self.unsupported("an array element chosen at run time from an array in registers", expr)
        size = S.sizeof(expr.type)
        if not 0 <= index.value < (base.ctype.size or 0):
            raise self.unsupported(f"array index {index.value} out of bounds", expr)
        return self.sub_object(base, base.ctype, index.value * size, expr.type)

    def load(self, lv):
        lv_cls = lv.__class__
        if lv_cls is VarRef:
            return lv.reg
        if lv_cls is _ConstRef:
            return lv.value
        if lv_cls is RegAgg:
            return AggValue(lv.ctype, [self.load(ref) for ref in lv.refs])
        t = S.unqualified(lv.ctype)
        if t.__class__ in _AGGREGATE_TYPES:
            return self.load_aggregate(lv, t)
        space = "" if lv.space == "generic" else f".{lv.space}"
        nc = ".nc" if lv.nc and lv.space == "global" else ""
        volatile = ".volatile" if lv.ctype.volatile else ""
        mtype = memory_type(t)
        cls = reg_class(t)
        opcode = f"ld{volatile}{space}{nc}.{mtype}"
        key = ("ld", lv.space, opcode, value_key(lv.base), lv.offset)
        dst = self.loaded.get(key) if not volatile else None
        if dst is None:
            dst = self.new_reg("rs" if cls == "p" else cls)
            instr = self.emit(opcode, dst, ir.Address(lv.base, lv.offset))
            if not volatile:
                self.memo_put(key, dst)
        else:
            instr = self.defs[dst]
        self.defs[dst] = instr
        self.loads += 1
        if dst.cls == "rs":
            self.narrow_loads += 1
        self.load_order[id(instr)] = len(self.load_order)
        if cls == "p":
            return self.op("setp.ne.s16", "p", dst, ir.Imm(0))
        return dst

    def load_aggregate(self, mem: MemRef, t: S.Type) -> AggValue:
        """A struct or array from memory: one vector load for a CUDA vector type (float4:
        ld.v4.f32), else a load per scalar field (dead ones are removed later)."""
        parts = leaves(t)
        if _vector_access(t, mem):
            elem = parts[0][1]
            cls = reg_class(elem)
            regs = [self.new_reg(cls) for _ in parts]
            space = "" if mem.space == "generic" else f".{mem.space}"
            nc = ".nc" if mem.nc and mem.space == "global" else ""
            self.emit(f"ld{space}{nc}.v{len(parts)}.{memory_type(elem)}", ir.Vector(tuple(regs)),
                      ir.Address(mem.base, mem.offset))
            self.loads += 1
            return AggValue(t, regs)
        if _packed_pair(t, mem):
            return self.unpack_pair(self.load(MemRef(mem.base, mem.offset, mem.space, S.UINT, mem.nc)), t)
        return AggValue(t, [self.load(MemRef(mem.base, mem.offset + offset, mem.space, lt, mem.nc))
                            for offset, lt in parts])

    def carry_pack(self, values: list, copies: list) -> None:
        """`copies` hold what `values` hold: if those are a word's halves, so are these."""
        if len(values) == 2 and copies != values:
            word = self.memo.get(("pack", *values))
            if word is not None:
                self.memo_put(("pack", *copies), word)

    def unpack_pair(self, word: VReg, t: S.Type) -> AggValue:
        """The two 16-bit fields of a 32-bit word (`mov.b32 {%rs1, %rs2}, %r1`), remembered
        so that packing them again is the word itself."""
        low, high = self.new_reg("rs"), self.new_reg("rs")
        self.emit("mov.b32", ir.Vector((low, high)), word)
        self.memo_put(("pack", low, high), word)
        return AggValue(t, [low, high])

    def pack_pair(self, value: AggValue) -> VReg:
        """The 32-bit word of a two-field 16-bit aggregate (`mov.b32 %r1, {%rs1, %rs2}`)."""
        t = value.ctype
        low, high = (self.materialize(v, lt) for v, (_, lt) in zip(value.values, leaves(t)))
        word = self.memo.get(("pack", low, high))
        if word is None:
            word = self.new_reg("r")
            self.emit("mov.b32", word, ir.Vector((low, high)))
            self.memo_put(("pack", low, high), word)
        return word

    def store_aggregate(self, lv, value: AggValue) -> None:
        t = S.unqualified(lv.ctype)
        if lv.__class__ is RegAgg:
            word = self.memo.get(("pack", *value.values)) if len(value.values) == 2 else None
            for ref, v in zip(lv.refs, value.values):
                self.store(ref, v)
            if word is not None:    # the variable's fields are still that word's halves
                self.memo_put(("pack", *(ref.reg for ref in lv.refs)), word)
            return
        parts = leaves(t)
        if _vector_access(t, lv) and not lv.ctype.volatile:
            elem = parts[0][1]
            space = "" if lv.space == "generic" else f".{lv.space}"
            values = tuple(self.materialize(v, elem) for v in value.values)
            self.emit(f"st{space}.v{len(parts)}.{memory_type(elem)}", ir.Address(lv.base, lv.offset),
                      ir.Vector(values))
            self.clobber_memory(lv.space)
            return
        if _packed_pair(t, lv) and not lv.ctype.volatile:
            self.store(MemRef(lv.base, lv.offset, lv.space, S.UINT), self.pack_pair(value))
            return
        for (offset, lt), v in zip(parts, value.values):
            self.store(MemRef(lv.base, lv.offset + offset, lv.space, lt), v)

    def materialize(self, value, t: S.Type):
        """A register holding `value` (vector stores and asm operands take no immediates);
        one per constant where it dominates, as LLVM's CSE leaves them."""
        if value.__class__ is _Imm:
            bits = struct.pack("<d", value.value) if isinstance(value.value, float) else value.value
            key = ("mov", reg_class(t), bits, value.type)      # (bits: -0.0 is not 0.0)
            reg = self.memo.get(key)
            if reg is not None:
                return reg
            reg = self.new_reg(reg_class(t))
            self.emit(f"mov.{mov_type(reg.cls, t)}", reg, value)
            self.memo_put(key, reg)
            return reg
        return value

    def store(self, lv, value) -> None:
        if lv.__class__ is VarRef:
            self.assign_reg(lv, value)
            return
        if value.__class__ is AggValue or lv.__class__ is RegAgg:
            self.store_aggregate(lv, value)
            return
        t = S.unqualified(lv.ctype)
        space = "" if lv.space == "generic" else f".{lv.space}"
        volatile = ".volatile" if lv.ctype.volatile else ""
        if reg_class(t) == "p":
            value = self.bool_to_int(value, S.USHORT)
        if value.__class__ is VReg and S.is_pointer(t):
            value = self.to_generic(value) if self.pointer_info(value).space != "generic" else value
        self.emit(f"st{volatile}{space}.{memory_type(t)}", ir.Address(lv.base, lv.offset), value)
        self.clobber_memory(lv.space)

    def assign_reg(self, ref: VarRef, value) -> None:
        """Write `value` into a variable's register: in place when the value was just
        computed into a temporary no one has read, with a mov otherwise."""
        reg = ref.reg
        self.write_reg(reg)
        last = self.block.instrs[-1] if self.block.instrs else None
        if (value.__class__ is VReg and value is not reg and value not in self.mutable and last is not None
                and value not in self.named
                and last.operands and last.operands[0] is value and self.uses.get(value, 0) == 0
                and value.cls == reg.cls and value not in self.param_loads and defines(last)):
            last.operands[0] = reg
            key = self.value_keys.get(value)    # the only key that may still name it
            if key is not None:
                memo = self.loaded if key[0] == "ld" else self.memo
                if memo.get(key) is value:
                    del memo[key]
            return
        if value is reg:
            return
        if value.__class__ is _Imm and reg.cls == "p":
            self.emit("setp.ne.s32", reg, ir.Imm(int(bool(value.value))), ir.Imm(0))
            return
        self.emit(f"mov.{mov_type(reg.cls, ref.ctype)}", reg, value)
        if value.__class__ is _Imm:
            self.known[reg] = value

    # ---- assignment ------------------------------------------------------------------
    def gen_assign(self, expr: A.Assign):
        if expr.op == "=":
            value = _GEN_EXPR[expr.value.__class__](self, expr.value)   # C++17: the right side is evaluated first
            lv = self.gen_lvalue(expr.target)
            if lv.__class__ is VarRef and S.is_pointer(lv.ctype):
                value = self.match_pointer_space(lv, value)
            self.store(lv, value)
            return lv.reg if lv.__class__ is VarRef else value
        op = expr.op[:-1]
        value = _GEN_EXPR[expr.value.__class__](self, expr.value)
        lv = self.gen_lvalue(expr.target)
        t = S.unqualified(expr.target.type)
        old = self.load(lv)
        if S.is_pointer(t):
            result = self.address_value(self.element((old, t), t.pointee, _operand_expr(expr.value, op)))
        else:
            ct = expr.compute_type
            result = self.arith(op, self.convert(old, t, ct), value, ct, expr)
            result = self.convert(result, ct, t)
        self.store(lv, result)
        return lv.reg if lv.__class__ is VarRef else result

    def match_pointer_space(self, ref: VarRef, value):
        info = self.pointers.get(ref.reg)
        vinfo = self.pointer_info(value)
        if value in self.kernel_pointers:
            value = self.as_address_base(value)
            vinfo = self.pointer_info(value)
        if info is None:
            self.pointers[ref.reg] = vinfo
            return value
        if info.space != vinfo.space:
            return self.to_generic(value)
        return value

    def gen_inc_dec(self, expr, want_value: bool = True):
        lv = self.gen_lvalue(expr.operand)
        t = S.unqualified(expr.operand.type)
        old = self.load(lv)
        post = expr.__class__ is A.PostIncDec
        if post and want_value and lv.__class__ is VarRef:
            old = self.copy(old, t)
        step = 1 if expr.op == "++" else -1
        if S.is_pointer(t):
            new = self.op("add.s64", "rd", old, ir.Imm(step * S.sizeof(t.pointee)))
            self.pointers[new] = self.pointer_info(old)
        elif t.__class__ is S.FloatType:
            new = self.arith("+", old, imm_for(float(step), t), t)
        else:
            wide = S.promote(t)
            new = self.convert(self.arith("+", self.convert(old, t, wide), ir.Imm(step), wide), wide, t)
        self.store(lv, new)
        if not want_value:
            return None
        if post:
            return old
        return lv.reg if lv.__class__ is VarRef else new

    def gen_conditional(self, expr: A.Conditional):
        t = S.unqualified(expr.type)
        constant = S.constant_value(expr.cond)
        if constant is not None:
            return self.gen_expr(expr.then if constant else expr.else_)
        if t.__class__ is _PointerType and (_is_address_of(expr.then) or _is_address_of(expr.else_)):
            # `&(i == 0 ? x : y)` (a `T&` result): with the condition known here, only its
            # arm, which may name a variable kept in registers
            p = self.condition_pred(expr.cond)
            if p.__class__ is _Imm:
                return self.gen_expr(expr.then if p.value else expr.else_)
            a, b = self.gen_expr(expr.then), self.gen_expr(expr.else_)     # (addresses: no side effects)
            if a.__class__ is RegPointer or b.__class__ is RegPointer:
                raise self.unsupported("choosing at run time between variables kept in registers "
                                       "(a conditional of their addresses or references)", expr)
            return self.op(f"selp.{sel_type(t)}", reg_class(t), a, b, p)
        if is_aggregate(t):     # `c ? v : w` of one class: a select per field (what SROA leaves)
            if not (_is_speculatable(expr.then) and _is_speculatable(expr.else_)):
                raise self.unsupported("a conditional of class values with side effects in its arms", expr)
            p = self.condition_pred(expr.cond)
            a = self.rvalue(self.gen_expr(expr.then), t)
            b = self.rvalue(self.gen_expr(expr.else_), t)
            if p.__class__ is _Imm:
                return a if p.value else b
            values = []
            for va, vb, (_, lt) in zip(a.values, b.values, leaves(t)):
                values.append(va if va is vb else self.op(f"selp.{sel_type(lt)}", reg_class(lt), va, vb, p))
            return AggValue(t, values)
        if _is_speculatable(expr.then) and _is_speculatable(expr.else_) and t.__class__ is not S.VoidType \
                and reg_class(t) != "p":
            minmax = self.select_min_max(expr, t)
            if minmax is not None:
                return minmax
            p = self.condition_pred(expr.cond)
            if p.__class__ is _Imm:     # (a condition known here: only its arm, which may be a RegPointer)
                return self.gen_expr(expr.then if p.value else expr.else_)
            a = self.gen_expr(expr.then)
            b = self.gen_expr(expr.else_)
            if a.__class__ is RegPointer or b.__class__ is RegPointer:
                raise self.unsupported("choosing at run time between variables kept in registers "
                                       "(a conditional of their addresses or references)", expr)
            return self.op(f"selp.{sel_type(t)}", reg_class(t), a, b, p)
        result = None if t.__class__ is S.VoidType else VarRef(self.new_reg(reg_class(t)), t, None)
        if result is not None:
            self.mutable.add(result.reg)
        other, end = self.make_label(), self.make_label()
        saved = self.region_start()
        self.cond_branch(expr.cond, other, False, variable=True)
        a = self.gen_expr(expr.then)
        if result is not None:
            self.assign_reg(result, a)
        self.branch(end)
        self.place(other)
        self.region_join(saved)
        b = self.gen_expr(expr.else_)
        if result is not None:
            self.assign_reg(result, b)
        self.place(end)
        self.region_join(saved)
        return result.reg if result is not None else None

    def select_min_max(self, expr: A.Conditional, t: S.Type):
        """`a > b ? a : b` is max(a, b), `a < b ? a : b` min(a, b): InstCombine's
        select-of-compare patterns (NVVM applies them to floats too)."""
        cond = expr.cond
        while cond.__class__ is A.ImplicitCast and cond.type == S.BOOL:
            cond = cond.operand
        if not (cond.__class__ is A.Binary and cond.op in ("<", ">", "<=", ">=")):
            return None
        if S.unqualified(cond.lhs.type) != t or not S.is_arithmetic(t):
            return None
        keys = (_expr_key(cond.lhs), _expr_key(cond.rhs))
        arms = (_expr_key(expr.then), _expr_key(expr.else_))
        if None in keys or None in arms or keys[0] == keys[1]:
            return None
        if arms == keys:
            kind = "max" if cond.op in (">", ">=") else "min"
        elif arms == (keys[1], keys[0]):
            kind = "min" if cond.op in (">", ">=") else "max"
        else:
            return None
        a, b = self.gen_expr(cond.lhs), self.gen_expr(cond.rhs)
        if a.__class__ is _Imm:
            a, b = b, a
        if a.__class__ is _Imm:
            return None
        suffix = float_type(t) if t.__class__ is S.FloatType else int_type(t)
        return self.op(f"{kind}.{suffix}", reg_class(t), a, b)

    def condition_pred(self, cond: A.Expr):
        while cond.__class__ is A.ImplicitCast and cond.type == S.BOOL and S.is_scalar(cond.operand.type):
            cond = cond.operand
        if cond.__class__ is A.Binary and cond.op in INT_CMP:
            lhs, rhs, t = self.gen_compare_operands(cond)
            return self.compare(cond.op, lhs, rhs, t)
        return self.truth(self.gen_expr(cond), cond.type)

    def gen_comma(self, expr: A.Comma):
        self.gen_effect(expr.lhs)
        return self.gen_expr(expr.rhs)

    def gen_sizeof(self, expr):
        return ir.Imm(S.constant_value(expr))

    def gen_construct(self, expr: A.Construct):
        t = expr.type
        if t.__class__ is S.StructType and t.name in ("dim3", "uint3"):    # dim3(x, y): z (and y) default to 1
            values = [self.convert(self.gen_expr(a), a.type, S.UINT) for a in expr.args]
            return AggValue(t, values + [ir.Imm(1)] * (3 - len(values)))
        if not S.is_scalar(t):
            raise self.unsupported(f"constructing a '{t}' in device code", expr)
        if not expr.args:
            return imm_for(0, t)
        arg = expr.args[0]
        return self.convert(self.gen_expr(arg), arg.type, t)

    # ---- conversions -----------------------------------------------------------------
    def gen_cast(self, expr):
        operand = expr.operand
        t = expr.type
        if t.__class__ is S.VoidType:
            self.gen_effect(operand)
            return None
        if operand.type.__class__ is S.ArrayType and S.is_pointer(t):
            return self.address_value(self.gen_lvalue(operand))
        if operand.__class__ is A.Binary and t.__class__ is S.FloatType:
            narrow = _narrowed_binary(operand, t)
            if narrow is not None:
                return self.gen_binary(narrow)
        value = _GEN_EXPR[operand.__class__](self, operand)
        return self.convert(value, operand.type, t)

    def convert(self, value, src: S.Type, dst: S.Type):
        if src is dst:
            return value
        # S.unqualified of each, called only where a qualifier may be (most types have none)
        if src.const or src.volatile or src.__class__ is _PointerType:
            src = S.unqualified(src)
        if dst.const or dst.volatile or dst.__class__ is _PointerType:
            dst = S.unqualified(dst)
        # (types of different classes are never equal: the class test spares `==` its
        # dataclass __eq__ calls, both ways)
        if value is None or src is dst or (src.__class__ is dst.__class__ and src == dst):
            return value
        if isinstance(src, (S.PointerType, S.ArrayType, S.FunctionType)) and dst.__class__ is _PointerType:
            return value
        if value.__class__ is _Imm:
            if dst.__class__ is _PointerType:
                return ir.Imm(int(value.value))
            return imm_for(S.convert_constant(value.value, dst), dst)
        if src.__class__ is S.EnumType:    # an enum converts as its underlying int
            src = S.INT
        if dst.__class__ is _PointerType:
            src_int = src
            if value.cls == "rd":
                return value
            return self.op(f"cvt.{'s' if src_int.signed else 'u'}64.{int_type(src_int)}", "rd", value)
        if src.__class__ is _PointerType:
            src = S.ULONG
        dcls, scls = reg_class(dst), value.cls
        if dcls == "p":
            return self.truth(value, src)
        if scls == "p":
            return self.bool_to(value, dst)
        if dst.__class__ is S.FloatType:
            if src.__class__ is S.FloatType:
                opcode = "cvt.f64.f32" if dst.size == 8 else "cvt.rn.f32.f64"
                return self.op(opcode, dcls, value)
            return self.op(f"cvt.rn.{float_type(dst)}.{cvt_int(src)}", dcls, value)
        if src.__class__ is S.FloatType:
            if dcls == "rs":
                # as NVVM: to a 32-bit integer, then its low bits (C leaves an out-of-range
                # value undefined; nvcc's code wraps it rather than saturating)
                wide = self.op(f"cvt.rzi.{'s' if dst.signed else 'u'}32.{float_type(src)}", "r", value)
                return self.op("cvt.u16.u32", dcls, wide)
            return self.op(f"cvt.rzi.{cvt_int(dst, register=True)}.{float_type(src)}", dcls, value)
        # integer to integer
        sbits, dbits = S.sizeof(src) * 8, S.sizeof(dst) * 8
        if dcls == scls:
            if dbits < sbits or (dbits == 8 and sbits == 16):
                # narrowing inside one register class (short -> char): re-extend the bits kept
                return self.op(f"cvt.{cvt_int(dst)}.{int_type(src)}", dcls, value) if dbits == 8 else value
            if sbits == 8 and dbits == 16:
                # char -> short: a char's 16-bit register holds only its low byte for sure
                # (int -> char truncates to 16 bits), so extend from the byte
                return self.op(f"cvt.{'s' if src.signed else 'u'}16.{cvt_int(src)}", dcls, value)
            return value
        if dbits > sbits:
            # widening: extend by the source's signedness
            return self.op(f"cvt.{'s' if src.signed else 'u'}{max(dbits, 16)}.{cvt_int(src)}", dcls, value)
        # narrowing: truncate
        return self.op(f"cvt.u{max(dbits, 16)}.u{sbits}", dcls, value)

    def bool_to(self, pred: VReg, dst: S.Type):
        if dst.__class__ is S.FloatType:
            ft = float_type(dst)
            return self.op(f"selp.{ft}", reg_class(dst), ir.Imm(1.0, "." + ft), ir.Imm(0.0, "." + ft), pred)
        return self.bool_to_int(pred, dst)

    def bool_to_int(self, pred, dst: S.Type):
        if pred.__class__ is _Imm:
            return ir.Imm(int(bool(pred.value)))
        cls = reg_class(dst)
        width = {"rs": 16, "r": 32, "rd": 64}[cls]
        return self.op(f"selp.u{width}", cls, ir.Imm(1), ir.Imm(0), pred)

    # ---- calls -----------------------------------------------------------------------
    def gen_call(self, expr: A.Call, want_value: bool = True):
        callee = expr.callee
        if callee is None:   # through a function pointer
            target = self.gen_expr(expr.func)
            if target.__class__ is not VReg:
                raise self.unsupported("calling a constant function pointer", expr)
            ftype = S.unqualified(expr.func.type).pointee
            return self.real_call(target, ftype, expr)
        if callee.builtin is not None:
            return self.gen_builtin(callee, expr, want_value)
        if callee in self.module.recursive:
            self.module.want_func(callee)
            return self.real_call(ir.Symbol(callee.mangled), callee.type, expr)
        if callee.definition is None:
            raise self.unsupported(f"calling '{callee.name}', which has no definition", expr)
        if callee in self.inline_stack:
            raise self.unsupported(f"recursive call of '{callee.name}'", expr)
        return self.inline(callee, expr)

    def real_call(self, target, ftype: S.FunctionType, expr: A.Call):
        """A call that stays a call, in NVVM's sequence: arguments stored to `.param`
        buffers, `call.uni (retval), f, (params)` (or, through a pointer, `call (retval),
        %rd, (params), prototype`), the result loaded from its buffer."""
        values = [self.gen_expr(a) for a in expr.args]
        self.call_count += 1
        n = self.call_count
        arg_names, proto_params = [], []
        for k, (value, arg) in enumerate(zip(values, expr.args)):
            t = S.unqualified(arg.type)
            ptype, _ = _call_param_type(t, arg, "an argument")
            if value.__class__ is RegPointer or isinstance(value, (MemRef, RegAgg, AggValue)):
                raise self.unsupported("this argument of a call that is not inlined", arg)
            if value.__class__ is VarRef:
                value = value.reg
            if t.__class__ is _PointerType and value.__class__ is VReg:
                space = self.pointer_info(value).space
                if space not in ("generic", "global", "local", "const"):
                    raise self.unsupported(f"passing a {space} pointer to a call that is not inlined", arg)
                value = self.to_generic(value)
            name = f"__s{n}_param{k}"
            self.call_params.append(ir.Param(ptype, name))
            arg_names.append(ir.Symbol(name))
            proto_params.append(ir.Param(ptype, "_"))
            self.emit(f"st.param.{_store_type(t)}", ir.Address(ir.Symbol(name)), value)
        ret_t = S.unqualified(ftype.ret)
        returns, proto_returns = [], []
        if ret_t.__class__ is not S.VoidType:
            ptype, _ = _call_param_type(ret_t, expr, "a result")
            name = f"__s{n}_retval0"
            self.call_params.append(ir.Param(ptype, name))
            proto_returns.append(ir.Param(ptype, "_"))
            returns.append(ir.Symbol(name))
        operands = [ir.OperandList(tuple(returns))] if returns else []
        operands += [target, ir.OperandList(tuple(arg_names))]
        if target.__class__ is VReg:
            proto = f"prototype_{n}"
            self.prototypes.append(ir.CallPrototype(proto, proto_returns, proto_params))
            operands.append(ir.Symbol(proto))
            self.emit("call", *operands)
        else:
            self.emit("call.uni", *operands)
        self.clobber_memory("all")
        if not returns:
            return None
        dst = self.new_reg(reg_class(ret_t))
        self.emit(f"ld.param.{_store_type(ret_t)}", dst, ir.Address(returns[0]))
        return dst

    def inline(self, callee: S.FunctionSymbol, expr: A.Call):
        args = [self.gen_expr(a) for a in expr.args]
        fdef = callee.definition
        outer_plan = self.plan
        self.plan = self.plan_of(fdef)
        self.inline_stack.append(callee)
        outer_tag = self.region_tag
        if callee.inline == "__noinline__":
            # Inlined anyway, but floating-point products do not fuse across its
            # boundary, as they cannot across the call NVVM keeps.
            self.region_tag = object()
        try:
            for psym, value in zip(fdef.param_symbols, args):
                self.bind_initial(psym, value)
            return self.inline_body(callee, fdef)
        finally:
            self.region_tag = outer_tag
            self.inline_stack.pop()
            self.plan = outer_plan

    def inline_body(self, callee: S.FunctionSymbol, fdef: A.FunctionDef):
        ret_t = S.unqualified(callee.type.ret)
        items = fdef.body.items
        if items and isinstance(items[-1], A.ReturnStmt) and _count_returns(fdef.body) == 1:
            # One return, at the end: its value is the call's value, no register needed.
            self.returns.append((None, None))
            try:
                for item in items[:-1]:
                    self.gen_stmt(item)
                value = items[-1].value
                result = self.gen_expr(value) if value is not None else None
            finally:
                self.returns.pop()
            if ret_t.__class__ is S.VoidType:
                return None
            return self.rvalue(result, ret_t) if is_aggregate(ret_t) else result
        result = None if ret_t.__class__ is S.VoidType else self.new_var(ret_t)
        done = self.make_label()
        self.returns.append((done, result))
        saved = self.region_start()
        try:
            self.gen_body(fdef.body)
        finally:
            self.returns.pop()
        self.place(done)
        self.region_join(saved)
        if result is None:
            return None
        return self.load(result)

    def gen_builtin(self, callee: S.FunctionSymbol, expr: A.Call, want_value: bool):
        name = callee.builtin
        t = callee.type.ret
        handler = BUILTINS.get(name)
        if handler is None:
            if name in mathlib.SIGNATURES:
                args = [self.gen_expr(a) for a in expr.args]
                if name in _FOLDED_APPROX and args[0].__class__ is _Imm and math.isfinite(args[0].value):
                    # NVVM folds the intrinsic of a constant to the correctly rounded value
                    return ir.Imm(f32_bits(_FOLDED_APPROX[name](args[0].value)), ".f32")
                return mathlib.instantiate(self, name, args)
            raise self.unsupported(f"the builtin function '{callee.name}' in device code", expr)
        return handler(self, expr, t, want_value)


class _Dispatch(dict):
    """Node class -> the FunctionCodegen method that generates it; `unknown` for the rest.
    Hot callers index it directly (`_GEN_EXPR[e.__class__](self, e)`): one call less
    per node than gen_expr."""

    def __init__(self, table: dict, unknown):
        super().__init__(table)
        self.unknown = unknown

    def __missing__(self, cls):
        return self.unknown


_GEN_EXPR = {
    A.IntLit: FunctionCodegen.gen_literal, A.CharLit: FunctionCodegen.gen_literal, A.BoolConst: FunctionCodegen.gen_literal,
    A.FloatLit: FunctionCodegen.gen_literal, A.Ident: FunctionCodegen.gen_ident, A.Binary: FunctionCodegen.gen_binary,
    A.Unary: FunctionCodegen.gen_unary, A.PreIncDec: FunctionCodegen.gen_inc_dec, A.PostIncDec: FunctionCodegen.gen_inc_dec,
    A.Assign: FunctionCodegen.gen_assign, A.Conditional: FunctionCodegen.gen_conditional, A.Comma: FunctionCodegen.gen_comma,
    A.Call: FunctionCodegen.gen_call, A.Index: FunctionCodegen.gen_load_lvalue, A.Member: FunctionCodegen.gen_member,
    A.Cast: FunctionCodegen.gen_cast, A.ImplicitCast: FunctionCodegen.gen_cast, A.CxxCast: FunctionCodegen.gen_cast,
    A.SizeofExpr: FunctionCodegen.gen_sizeof, A.SizeofType: FunctionCodegen.gen_sizeof, A.Construct: FunctionCodegen.gen_construct,
}
_GEN_EXPR = _Dispatch(_GEN_EXPR, FunctionCodegen.unsupported_expr)
_GEN_STMT = {
    A.CompoundStmt: FunctionCodegen.gen_compound, A.ExprStmt: FunctionCodegen.gen_expr_stmt, A.IfStmt: FunctionCodegen.gen_if,
    A.ForStmt: FunctionCodegen.gen_for, A.WhileStmt: FunctionCodegen.gen_while, A.DoStmt: FunctionCodegen.gen_do,
    A.ReturnStmt: FunctionCodegen.gen_return, A.BreakStmt: FunctionCodegen.gen_break, A.ContinueStmt: FunctionCodegen.gen_continue,
    A.Declaration: FunctionCodegen.gen_declaration, A.SwitchStmt: FunctionCodegen.gen_switch, A.AsmStmt: FunctionCodegen.gen_asm,
    A.StaticAssert: lambda self, stmt: None, A.UsingAlias: lambda self, stmt: None,   # (sema's alone)
    A.RangeForStmt: lambda self, stmt: self.gen_stmt(stmt.lowered),
    A.UsingDeclaration: lambda self, stmt: None,
}
_GEN_STMT = _Dispatch(_GEN_STMT, FunctionCodegen.unsupported_stmt)


_FOLDED_APPROX = {"__sinf": math.sin, "__cosf": math.cos}


def _call_param_type(t: S.Type, node, what: str = "a parameter") -> tuple[str, str]:
    """A .func parameter's (or result's) `.param` type and its ld.param type, as NVVM
    writes them: `.b32` read as u32/f32, `.b64` read as u64/f64."""
    t = S.unqualified(t)
    if t.__class__ is S.FloatType:
        return (".b64", "f64") if t.size == 8 else (".b32", "f32")
    if isinstance(t, (S.PointerType, S.ArrayType)):
        return ".b64", "u64"
    if isinstance(t, (S.IntType, S.EnumType)) and S.sizeof(t) >= 4 and not (t.__class__ is S.IntType and t.name == "bool"):
        return (".b64", "u64") if S.sizeof(t) == 8 else (".b32", "u32")
    raise Unsupported(f"{what} of type '{t}' in a call that is not inlined", getattr(node, "loc", None))


def _store_type(t: S.Type) -> str:
    """st.param / ld.param type of a call's argument or result."""
    t = S.unqualified(t)
    if t.__class__ is S.FloatType:
        return "f64" if t.size == 8 else "f32"
    if isinstance(t, (S.PointerType, S.ArrayType)) or S.sizeof(t) == 8:
        return "b64"
    return "b32"


def _split_constant_offset(index: A.Expr):
    """`e + c` / `e - c` with signed (no-overflow) arithmetic: (e, c), folding c into the
    address offset as LLVM does for `inbounds` GEPs; (None, c) for a constant index."""
    node = index
    while node.__class__ is A.ImplicitCast and S.is_integer(node.type) and S.is_integer(node.operand.type) \
            and node.type.size >= node.operand.type.size and node.operand.type.signed:
        node = node.operand
    if node.__class__ is A.Ident and node.symbol.__class__ is not S.EnumConstSymbol:
        return index, 0   # (a variable: what constant_value would find, without the call)
    if not (node.__class__ is A.Binary and node.op in ("+", "-") and node.type.__class__ is S.IntType
            and node.type.signed):
        constant = S.constant_value(node)
        return (None, constant) if constant is not None else (index, 0)
    # (a sum is constant only if both sides are: each side is asked once)
    c = S.constant_value(node.rhs)
    if c is not None:
        if S.constant_value(node.lhs) is not None:
            constant = S.constant_value(node)
            if constant is not None:
                return None, constant
        inner, extra = _split_constant_offset(node.lhs)
        return inner, extra + (c if node.op == "+" else -c)
    if node.op == "+":
        c = S.constant_value(node.lhs)
        if c is not None:
            inner, extra = _split_constant_offset(node.rhs)
            return inner, extra + c
    return index, 0


def _operand_expr(value: A.Expr, op: str) -> A.Expr:
    """The element count of `p += n` / `p -= n` as an expression."""
    if op == "-":
        return A.Unary(value.loc, "-", value, value.type)
    return value


_ASM_CLASSES = {"h": "rs", "r": "r", "l": "rd", "f": "f", "d": "fd"}


def _asm_class(constraint: str, t: S.Type, node) -> str:
    """The register class of an asm constraint: h 16-bit, r 32-bit, l 64-bit, f f32, d f64."""
    for letter in constraint:
        if letter in _ASM_CLASSES:
            return _ASM_CLASSES[letter]
    raise Unsupported(f"asm constraint '{constraint}'", node.loc)


def _asm_aggregate(t: S.Type, cls: str, node) -> str:
    """Check that a struct can be an asm operand of class `cls`: one 16-bit field for `h`,
    two for `r` (cuda_fp16.h's `__half`, `__half2`)."""
    parts = leaves(t)
    sizes = [S.sizeof(lt) for _, lt in parts]
    if (cls == "rs" and sizes == [2]) or (cls == "r" and sizes == [2, 2]):
        return cls
    raise Unsupported(f"asm operand of type '{S.type_name(t)}'", node.loc)


def bits_of_class(cls: str) -> int:
    return {"rs": 16, "r": 32, "rd": 64, "f": 32, "fd": 64}[cls]


def _float_identity(op: str, c: float) -> bool:
    """Is `x op c` exactly x for every x (NaNs and signed zeros included)?"""
    if op in ("*", "/"):
        return c == 1.0
    if op == "-":
        return c == 0.0 and math.copysign(1.0, c) > 0
    if op == "+":
        return c == 0.0 and math.copysign(1.0, c) < 0
    return False


_Address, _Vector, _Imm, _Instr = ir.Address, ir.Vector, ir.Imm, ir.Instr
_PointerType = S.PointerType
_LOOPS = frozenset({A.ForStmt, A.WhileStmt, A.DoStmt})
_AGGREGATE_TYPES = frozenset({S.StructType, S.ArrayType})   # (vir.is_aggregate's test, inline)

# Opcodes after which code starts a new block.
def _int_opcodes(width: int, signed: bool) -> dict:
    """C operator -> the PTX opcode of that integer operation, at one width and signedness."""
    sign = "s" if signed else "u"
    return {"+": f"add.s{width}", "-": f"sub.s{width}", "*": f"mul.lo.s{width}",
            "/": f"div.{sign}{width}", "%": f"rem.{sign}{width}",
            "&": f"and.b{width}", "|": f"or.b{width}", "^": f"xor.b{width}",
            "<<": f"shl.b{width}", ">>": f"shr.{sign}{width}"}


# (width, signed) -> _int_opcodes(width, signed): arith's opcodes, made once.
_INT_OPCODES = {(width, signed): _int_opcodes(width, signed) for width in (16, 32, 64) for signed in (False, True)}
_FLOAT_OPCODES = {"+": "add", "-": "sub", "*": "mul", "/": "div.rn"}

_ENDS_BLOCK = ENDS_BLOCK

# Opcodes whose two operands commute (LLVM orders them by rank).
_COMMUTATIVE = ("add.", "mul.lo", "mul.wide", "mul.f", "and.", "or.", "xor.", "min.", "max.", "mul24.", "mul.hi")
_COMMUTES = OpcodeTable(lambda opcode: opcode.startswith(_COMMUTATIVE))


# How an instruction's result is ranked (FunctionCodegen.rank_instruction): as a kernel
# parameter, with the next rank in program order, with its highest operand's rank, or
# one above that.
_PARAM_RANK, _NEXT_RANK, _SAME_RANK, _ABOVE_RANK = "param", "next", "same", "above"


def _rank_kind(opcode: str) -> str:
    if opcode.startswith("ld.param"):
        return _PARAM_RANK
    if not PURE_OPCODE[opcode] or opcode.startswith(("ld.", "div", "rem")):
        return _NEXT_RANK
    return _SAME_RANK if opcode.startswith(("neg", "not")) else _ABOVE_RANK


_RANK_KIND = OpcodeTable(_rank_kind)


def _is_address_of(expr) -> bool:
    return (expr.__class__ is A.Unary and expr.op == "&") or \
        (expr.__class__ is A.Conditional and (_is_address_of(expr.then) or _is_address_of(expr.else_)))


def _narrowed_binary(expr: A.Binary, t: S.Type):
    """InstCombine's visitFPTrunc: `(float)((double)x op (double)y)` for + - * / of two
    floats (or float constants) is `x op y` in float, exactly (a double holds the
    exact result's rounding to float: double rounding is innocuous for these), so NVPTX
    contracts it like any float expression.  None where the pattern does not hold."""
    if expr.op not in ("+", "-", "*", "/") or S.unqualified(t) != S.FLOAT or S.unqualified(expr.type) != S.DOUBLE:
        return None
    sides = []
    for side in (expr.lhs, expr.rhs):
        if side.__class__ in (A.ImplicitCast, A.Cast) and S.unqualified(side.operand.type) == S.FLOAT:
            sides.append(side.operand)
        elif side.__class__ is A.FloatLit and f32_bits(side.value) == side.value:
            sides.append(A.FloatLit(side.loc, side.value, side.text, S.FLOAT))
        else:
            return None
    return A.Binary(expr.loc, expr.op, sides[0], sides[1], S.FLOAT)


class RegPointer:
    """A pointer to a variable kept in registers, known at compile time: only ever
    dereferenced (plan.deref_only), so `*p` is the variable."""
    __slots__ = ("lv",)

    def __init__(self, lv):
        self.lv = lv


class _ConstRef:
    """A field of a struct variable that is a name for a constant (never assigned)."""
    __slots__ = ("value", "ctype")

    def __init__(self, value, ctype):
        self.value, self.ctype = value, ctype


def _is_lvalue_path(expr) -> bool:
    """Can gen_lvalue produce an object for `expr` (rather than only a value)?"""
    if expr.__class__ is A.Ident:
        return expr.symbol.__class__ is S.VarSymbol
    if isinstance(expr, (A.Index,)):
        return True
    if expr.__class__ is A.Unary:
        return expr.op == "*"
    if expr.__class__ is A.Member:
        return expr.arrow or _is_lvalue_path(expr.base)
    return False


def _packed_pair(t: S.Type, mem) -> bool:
    """Is a whole-object access of `t` at `mem` one 32-bit access: a struct of two 16-bit
    integer fields aligned to 4 (`__half2`, `__nv_bfloat162`: LLVM's memcpy of an
    over-aligned 4-byte struct is an i32 load or store)?"""
    if t.__class__ is not S.StructType or t.align < 4 or S.sizeof(t) != 4 or mem.__class__ is not MemRef \
            or mem.space == "param" or mem.offset % 4:
        return False
    parts = leaves(t)
    return len(parts) == 2 and all(S.sizeof(lt) == 2 and lt.__class__ is S.IntType for _, lt in parts)


def _vector_access(t: S.Type, mem) -> bool:
    """Is a whole-object access of `t` at `mem` one ld/st.v2/v4 (a CUDA vector type at its
    alignment, outside the parameter space)?"""
    return t.__class__ is S.StructType and t.vector in (2, 4) and mem.__class__ is MemRef \
        and mem.space != "param" and mem.offset % t.align == 0


def _is_speculatable(expr: A.Expr) -> bool:
    """Can `expr` be evaluated even when C would not (no side effects, no memory access)?"""
    if isinstance(expr, (A.IntLit, A.FloatLit, A.CharLit, A.BoolConst, A.SizeofType, A.SizeofExpr)):
        return True
    if expr.__class__ is A.Ident:
        return isinstance(expr.symbol, (S.VarSymbol, S.EnumConstSymbol)) and \
            not isinstance(getattr(expr.symbol, "type", None), S.ArrayType)
    if isinstance(expr, (A.ImplicitCast, A.Cast)):
        return _is_speculatable(expr.operand)
    if expr.__class__ is A.Unary:
        return expr.op in ("-", "+", "~", "!") and _is_speculatable(expr.operand)
    if expr.__class__ is A.Binary:
        if expr.op in ("/", "%") and S.is_integer(expr.type):
            return False  # may trap on zero
        return _is_speculatable(expr.lhs) and _is_speculatable(expr.rhs)
    if expr.__class__ is A.Member:
        return expr.base.__class__ is A.Ident and getattr(expr.base.symbol, "kind", "") == "builtin"
    if expr.__class__ is A.Conditional:
        return all(_is_speculatable(e) for e in (expr.cond, expr.then, expr.else_))
    return False


def _simple_jump(stmt, cg: FunctionCodegen) -> str | None:
    """The target of a statement that is only `return;`, `break;` or `continue;`."""
    while stmt.__class__ is A.CompoundStmt and len(stmt.items) == 1:
        stmt = stmt.items[0]
    if stmt.__class__ is A.ReturnStmt and stmt.value is None:
        return cg.returns[-1][0] if cg.returns else cg.exit_label
    if stmt.__class__ is A.BreakStmt and cg.loops:
        return cg.loops[-1][0]
    if stmt.__class__ is A.ContinueStmt and cg.loops:
        return next((c for _, c in reversed(cg.loops) if c is not None), None)
    return None


def _expr_key(expr: A.Expr):
    """A structural key for simple expressions (names, constants, conversions of them)."""
    while expr.__class__ is A.ImplicitCast:
        expr = expr.operand
    if expr.__class__ is A.Ident:
        return ("id", id(expr.symbol))
    if isinstance(expr, (A.IntLit, A.CharLit)):
        return ("int", expr.value)
    if expr.__class__ is A.FloatLit:
        return ("float", expr.value)
    return None


def _only_constant_uses(fsym) -> bool:
    """A constexpr function: what no kernel reaches is only ever evaluated by sema."""
    return fsym.definition is not None and fsym.definition.specs.constexpr


def _count_returns(node) -> int:
    if node.__class__ is A.ReturnStmt:
        return 1
    if node.__class__ is A.CompoundStmt:
        return sum(_count_returns(i) for i in node.items)
    if node.__class__ is A.IfStmt:
        return _count_returns(node.then) + (_count_returns(node.else_) if node.else_ else 0)
    if isinstance(node, (A.ForStmt, A.WhileStmt, A.DoStmt)):
        return _count_returns(node.body)
    if node.__class__ is A.RangeForStmt:
        return _count_returns(node.lowered)
    if isinstance(node, (A.SwitchStmt, A.CaseStmt, A.DefaultStmt)):
        return _count_returns(node.body)
    return 0


def _describe_stmt(stmt) -> str:
    return {A.CaseStmt: "'case' outside a switch", A.DefaultStmt: "'default' outside a switch",
            A.AsmStmt: "inline asm"}.get(type(stmt), type(stmt).__name__)


def _describe_expr(expr) -> str:
    if expr.__class__ is A.StringLit:
        return "string literals in device code"
    if expr.__class__ is A.Launch:
        return "kernel launches in device code"
    return f"{type(expr).__name__} expressions"


# ---- the module --------------------------------------------------------------------------

class ModuleCodegen:
    def __init__(self, analyzer: S.Analyzer, filename: str, arch: str, ptx_version: str, pragmas=()):
        self.analyzer = analyzer
        self.filename = filename
        self.arch = arch
        self.ptx_version = ptx_version
        self.extern_shared: dict[str, ir.Variable] = {}
        self.globals: dict[str, ir.Variable] = {}     # module-scope variables, in order of first use
        self.externs: dict[str, ir.Function] = {}     # .extern .funcs called (vprintf)
        self.strings: dict[bytes, str] = {}           # string literal bytes -> its $str constant
        self.global_refs: dict = {}                   # VarSymbol -> MemRef
        self.deref_cache: dict = {}                   # plan.deref_only's answers
        self.plans: dict = {}                         # id(FunctionDef) -> plan.BodyPlan
        self.diagnostics: list[Diagnostic] = []
        self.loop_pragmas = loop_pragmas(list(pragmas), self.loop_lines()) if pragmas else {}
        self.recursive = self.recursive_functions()
        self.wanted: dict = {}                        # FunctionSymbol -> True: emitted as .func

    def recursive_functions(self) -> set:
        """__device__ functions on a cycle of the call graph: they stay calls (.func)."""
        graph: dict = {}
        for fsym in self.analyzer.functions:
            if fsym.definition is None or not fsym.on_device:
                continue
            callees, stack = set(), [fsym.definition.body]
            while stack:
                node = stack.pop()
                if node.__class__ is A.StaticAssert:    # (evaluated by sema: no call at run time)
                    continue
                if node.__class__ is A.Call and node.callee is not None and node.callee.builtin is None \
                        and node.callee.definition is not None:
                    callees.add(node.callee)
                PUSH_CHILDREN[node.__class__](node, stack)
            graph[fsym] = callees
        # What kernels (and function pointers) can reach at run time: a recursive function
        # only constant expressions call (a constexpr `log2i`) is not emitted, as NVVM drops it.
        self.reachable = set()
        stack = [f for f in graph if f.is_kernel or f.address_taken]
        while stack:
            f = stack.pop()
            if f not in self.reachable:
                self.reachable.add(f)
                stack.extend(graph.get(f, ()))
        graph = {f: callees for f, callees in graph.items() if not f.is_kernel}
        out = set()
        for start in graph:
            seen, stack = set(), list(graph[start])
            while stack:
                f = stack.pop()
                if f is start:
                    out.add(start)
                    break
                if f in seen:
                    continue
                seen.add(f)
                stack.extend(graph.get(f, ()))
        return out

    def want_func(self, fsym: S.FunctionSymbol) -> None:
        self.wanted[fsym] = True

    def loop_lines(self) -> list[int]:
        lines = []
        for fsym in self.analyzer.functions:
            if fsym.definition is not None and fsym.on_device:
                lines += [stmt.loc[0] for stmt in statements(fsym.definition.body) if stmt.__class__ in _LOOPS]
        return lines

    def add_global(self, var: ir.Variable) -> None:
        self.globals.setdefault(var.name, var)

    def declare_extern(self, func: ir.Function) -> None:
        """A `.extern .func` the module calls (vprintf), declared once before the kernels."""
        self.externs.setdefault(func.name, func)

    def string_constant(self, cg, text: str):
        """The generic address of a string literal's bytes: a `.global .align 1 .b8 $str`
        constant per distinct string (NVVM's names: $str, $str$1, ...)."""
        data = text.encode("utf-8") + b"\0"
        name = self.strings.get(data)
        if name is None:
            name = "$str" if not self.strings else f"$str${len(self.strings)}"
            self.strings[data] = name
            self.add_global(ir.Variable(".global", ".b8", name, align=1, array=len(data),
                                        init=[ir.Imm(b) for b in data]))
        return cg.op("cvta.global.u64", "rd", cg.op("mov.u64", "rd", ir.Symbol(name)))

    def global_variable(self, sym: S.VarSymbol, node, name: str | None = None, space: str | None = None) -> MemRef:
        """A __device__, __constant__ or file-scope __shared__ variable: a module-level
        declaration, named as C++ names it (unmangled at global scope), and its MemRef."""
        found = self.global_refs.get(sym)
        if found is not None:
            return found
        if space is None:
            space = {"device": "global", "constant": "const", "shared": "shared"}.get(sym.space)
            if space is None:
                raise Unsupported(f"host variable '{sym.name}' in device code" if sym.space is None
                                  else f"__{sym.space}__ variables", node.loc)
        name = name or sym.linkage_name or sym.name
        t = S.unqualified(sym.type)
        if space == "shared" and t.__class__ is S.ArrayType and t.size is None:  # extern __shared__ x[]
            var = self.extern_shared.setdefault(name, ir.Variable(".shared", ".b8", name, align=16, array=0,
                                                                  extern=True))
            found = self.global_refs[sym] = MemRef(ir.Symbol(name), 0, space, t)
            return found
        align = S.alignof(t)
        init = global_initializer(sym, t)
        if init is None and not is_aggregate(t) and space != "shared":
            var = ir.Variable(f".{space}", f".{memory_type(t) if reg_class(t) != 'p' else 'u8'}", name,
                              align=align)
        else:
            var = ir.Variable(f".{space}", ".b8", name, align=align, array=S.sizeof(t), init=init)
        self.add_global(var)
        found = self.global_refs[sym] = MemRef(ir.Symbol(name), 0, space, t)
        return found

    def generate(self) -> ir.Module:
        module = ir.Module(version=self.ptx_version, target=self.arch, address_size=64)
        # Functions that stay calls (recursive ones, those whose address is taken) are
        # .funcs, in source order before the kernels, as NVVM writes them.
        funcs = [f for f in self.analyzer.functions if f.definition is not None and f.on_device
                 and not f.is_kernel and (f in self.recursive or f.address_taken)
                 and (f in self.reachable or not _only_constant_uses(f))]
        index = 0
        for fsym in funcs:
            func = self.generate_function(fsym, index)
            if func is not None:
                module.functions.append(func)
                index += 1
        for fsym in self.analyzer.functions:
            if not fsym.is_kernel or fsym.definition is None:
                continue
            func = self.generate_function(fsym, index)
            if func is not None:
                module.functions.append(func)
                index += 1
        if funcs:
            module.functions[:0] = self.forward_declarations(module.functions)
        module.functions[:0] = list(self.externs.values())
        module.globals = list(self.globals.values()) + list(self.extern_shared.values())
        return module

    def forward_declarations(self, functions: list) -> list:
        """`.func (...) f(...);` for each .func used (called, or its address taken) before
        its definition; a function may name itself."""
        position = {f.name: k for k, f in enumerate(functions) if not f.entry}
        needed = []
        for k, func in enumerate(functions):
            for instr in func.body:
                for op in getattr(instr, "operands", ()):
                    if op.__class__ is ir.Symbol and position.get(op.name, -1) > k and op.name not in needed:
                        needed.append(op.name)
        out = []
        for name in needed:
            f = functions[position[name]]
            out.append(ir.Function(f.name, entry=False, visible=False, defined=False, params=list(f.params),
                                   return_params=list(f.return_params)))
        return out

    def generate_function(self, fsym: S.FunctionSymbol, index: int):
        cg = FunctionCodegen(self, fsym, index)
        try:
            func = cg.generate()
        except Unsupported as exc:
            loc = exc.loc or fsym.loc
            line, col = loc if loc and loc[0] > 0 else fsym.loc
            self.diagnostics.append(Diagnostic(f"unsupported feature: {exc.feature}",
                                               SourceLoc(self.filename, line, col)))
            return None
        except RecursionError:
            self.diagnostics.append(Diagnostic(
                f"unsupported feature: code nested more than about {NESTING_LIMIT} levels deep",
                SourceLoc(self.filename, *fsym.loc)))
            return None
        except Exception as exc:  # a bug in ptxc, not in the user's code: say so plainly
            if os.environ.get("PTXC_TRACEBACK"):
                raise
            self.diagnostics.append(Diagnostic(
                f"internal error in ptxc's code generator ({type(exc).__name__}: {exc}); "
                "please report it (PTXC_TRACEBACK=1 shows the traceback)",
                SourceLoc(self.filename, *fsym.loc)))
            return None
        finally:
            # Closures made while generating can refer back to it: cycles that would
            # keep the whole codegen state (memo, uses, ranks, blocks, dropped
            # instructions) alive until the cyclic GC finds it.  Nothing reads the
            # object after this: emptied, reference counting frees that state now.
            cg.release()
        return func


def global_initializer(sym: S.VarSymbol, t: S.Type) -> list | None:
    """The bytes of a global variable's constant initializer (ir.Imm each), or None."""
    decl = sym.declaration
    if decl is None or decl.init is None:
        return None
    data = bytearray(S.sizeof(t))

    def fill(init, t, offset):
        if init.__class__ is A.InitList:
            if t.__class__ is S.ArrayType:
                parts = [(offset + k * S.sizeof(t.elem), t.elem) for k in range(len(init.items))]
            elif t.__class__ is S.StructType:
                parts = [(offset + o, ft) for _, ft, o in t.fields]
            else:
                parts = [(offset, t)]
            for item, (o, part) in zip(init.items, parts):
                fill(item, part, o)
            return
        value = S.constant_value(init)
        if value is None:
            raise Unsupported(f"a non-constant initializer for '{sym.name}'", init.loc)
        data[offset:offset + S.sizeof(t)] = scalar_bytes(value, t)

    fill(decl.init, t, 0)
    return [ir.Imm(b) for b in data]


def scalar_bytes(value, t: S.Type) -> bytes:
    if t.__class__ is S.FloatType:
        return struct.pack("<f" if t.size == 4 else "<d", value)
    size = S.sizeof(t)
    return (int(value) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def generate(analyzer: S.Analyzer, filename: str, arch: str = "sm_89", ptx_version: str = "9.5",
             source: str | None = None, pragmas=()) -> ir.Module:
    gen = ModuleCodegen(analyzer, filename, arch, ptx_version, pragmas)
    module = gen.generate()
    if gen.diagnostics:
        raise CompileError(gen.diagnostics, source)
    return module
