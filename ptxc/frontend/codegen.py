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
from .mangle import mangle_static_local


class Unsupported(Exception):
    """A construct the code generator does not handle yet: reported with its location."""

    def __init__(self, feature: str, loc):
        super().__init__(feature)
        self.feature, self.loc = feature, loc


# ---- virtual registers and blocks -------------------------------------------------------

class VReg:
    """A virtual register of one PTX register class: p, rs, r, rd, f, fd."""
    __slots__ = ("id", "cls")

    def __init__(self, id_: int, cls: str):
        self.id, self.cls = id_, cls

    def __repr__(self) -> str:
        return f"%v{self.cls}{self.id}"


_BASES: dict[str, str] = {}


def base_of(opcode: str) -> str:
    """`ld` for `ld.global.f32` (cached: passes ask for it very often)."""
    base = _BASES.get(opcode)
    if base is None:
        base = _BASES[opcode] = opcode.split(".", 1)[0]
    return base


class Block:
    __slots__ = ("label", "instrs")

    def __init__(self, label: str):
        self.label = label
        self.instrs: list[ir.Instr] = []

    def terminator(self) -> ir.Instr | None:
        if self.instrs:
            last = self.instrs[-1]
            if last.opcode.startswith(("bra", "ret", "exit")):
                return last
        return None


REG_DECL_ORDER = ("p", "rs", "f", "r", "fd", "rd")   # NVVM's order of .reg lines
REG_DECL = {"p": (".pred", "%p"), "rs": (".b16", "%rs"), "r": (".b32", "%r"), "rd": (".b64", "%rd"),
            "f": (".f32", "%f"), "fd": (".f64", "%fd")}

SPECIAL_REGS = {"threadIdx": "%tid", "blockIdx": "%ctaid", "blockDim": "%ntid", "gridDim": "%nctaid"}

# Instructions without side effects: dead-code elimination may drop them, value
# numbering may merge them.
_PURE_BASES = frozenset({
    "add", "sub", "mul", "mad", "fma", "div", "rem", "and", "or", "xor", "not", "shl", "shr", "neg",
    "abs", "min", "max", "setp", "selp", "cvt", "cvta", "mov", "sqrt", "rsqrt", "rcp", "ex2", "lg2",
    "sin", "cos", "popc", "clz", "brev", "mul24", "ld", "copysign",
})
_SIDE_EFFECT_LOADS = ("ld.volatile",)


# ---- C types -> PTX -----------------------------------------------------------------------

def reg_class(t: S.Type) -> str:
    if isinstance(t, S.IntType):
        if t.name == "bool":
            return "p"
        return {1: "rs", 2: "rs", 4: "r", 8: "rd"}[t.size]
    if isinstance(t, S.EnumType):
        return "r"
    if isinstance(t, S.FloatType):
        return "f" if t.size == 4 else "fd"
    if isinstance(t, (S.PointerType, S.ArrayType)):
        return "rd"
    raise Unsupported(f"values of type '{t}'", None)


def bits(t: S.Type) -> int:
    return 64 if isinstance(t, (S.PointerType, S.ArrayType)) else S.sizeof(t) * 8


def int_type(t: S.Type, signed: bool | None = None) -> str:
    """`s32`, `u64`, ... for an integer or pointer type (bool counts as 16-bit in %rs
    only when it is in memory; in registers it is a predicate)."""
    if isinstance(t, (S.PointerType, S.ArrayType)):
        return "s64" if signed is not False else "u64"
    if isinstance(t, S.EnumType):
        return "s32"
    sign = t.signed if signed is None else signed
    width = max(16, t.size * 8)
    return f"{'s' if sign else 'u'}{width}"


def float_type(t: S.Type) -> str:
    return "f32" if t.size == 4 else "f64"


def arith_type(t: S.Type) -> str:
    return float_type(t) if isinstance(t, S.FloatType) else int_type(t)


def memory_type(t: S.Type) -> str:
    """The type of a ld/st of a value of C type t (NVVM loads narrow ints unsigned)."""
    if isinstance(t, S.FloatType):
        return float_type(t)
    if isinstance(t, (S.PointerType, S.ArrayType)):
        return "u64"
    if isinstance(t, S.EnumType):
        return "u32"
    return f"u{t.size * 8}"


def param_type(t: S.Type) -> str:
    if isinstance(t, S.FloatType):
        return "." + float_type(t)
    if isinstance(t, (S.PointerType, S.ArrayType)):
        return ".u64"
    if isinstance(t, (S.IntType, S.EnumType)):
        size = 1 if isinstance(t, S.IntType) and t.name == "bool" else S.sizeof(t)
        return f".u{size * 8}"
    raise Unsupported(f"kernel parameters of type '{t}'", None)


def f32_bits(value: float) -> float:
    """Round a Python float to the nearest f32, as a constant folded in f32 must be."""
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def imm_for(value, t: S.Type) -> ir.Imm:
    if isinstance(t, S.FloatType):
        return ir.Imm(float(value), "." + float_type(t))
    return ir.Imm(int(value))


# Comparisons: C operator -> PTX condition, for integers and for floats; and the
# condition that is true exactly when the original is false (for branching around).
_INT_CMP = {"<": "lt", ">": "gt", "<=": "le", ">=": "ge", "==": "eq", "!=": "ne"}
_FLOAT_CMP = {"<": "lt", ">": "gt", "<=": "le", ">=": "ge", "==": "eq", "!=": "neu"}
_INVERSE = {"lt": "ge", "gt": "le", "le": "gt", "ge": "lt", "eq": "ne", "ne": "eq",
            "ltu": "ge", "gtu": "le", "leu": "gt", "geu": "lt", "equ": "ne", "neu": "eq"}
_FLOAT_INVERSE = {"lt": "geu", "gt": "leu", "le": "gtu", "ge": "ltu", "eq": "neu", "neu": "eq",
                  "ltu": "ge", "gtu": "le", "leu": "gt", "geu": "lt", "ne": "equ", "equ": "ne"}
_SWAPPED = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne", "neu": "neu",
            "ltu": "gtu", "gtu": "ltu", "leu": "geu", "geu": "leu", "equ": "equ"}


class MemRef:
    """An lvalue in memory: `[base+offset]` in one state space."""
    __slots__ = ("base", "offset", "space", "ctype", "nc")

    def __init__(self, base, offset: int, space: str, ctype: S.Type, nc: bool = False):
        self.base, self.offset, self.space, self.ctype, self.nc = base, offset, space, ctype, nc


class VarRef:
    """An lvalue in a register: a local variable that is assigned after its declaration."""
    __slots__ = ("reg", "ctype", "symbol")

    def __init__(self, reg: VReg, ctype: S.Type, symbol):
        self.reg, self.ctype, self.symbol = reg, ctype, symbol


class PointerInfo:
    """What codegen knows of a pointer value: its state space and whether loads through
    it may use the non-coherent cache (a `const T * __restrict__` kernel parameter)."""
    __slots__ = ("space", "nc")

    def __init__(self, space: str, nc: bool = False):
        self.space, self.nc = space, nc


GENERIC = PointerInfo("generic")


class FunctionCodegen:
    def __init__(self, module: "ModuleCodegen", fsym: S.FunctionSymbol, index: int):
        self.module = module
        self.fsym = fsym
        self.index = index
        self.next_id = 0
        self.next_label = 0
        self.blocks: list[Block] = []
        self.block: Block = self.new_block()
        self.memo: dict = {}                 # local value numbering, current block only
        self.uses: dict[VReg, int] = {}      # uses so far (for writing results in place)
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
        self.expr_dispatch = {
            A.IntLit: self.gen_literal, A.CharLit: self.gen_literal, A.BoolConst: self.gen_literal,
            A.FloatLit: self.gen_literal, A.Ident: self.gen_ident, A.Binary: self.gen_binary,
            A.Unary: self.gen_unary, A.PreIncDec: self.gen_inc_dec, A.PostIncDec: self.gen_inc_dec,
            A.Assign: self.gen_assign, A.Conditional: self.gen_conditional, A.Comma: self.gen_comma,
            A.Call: self.gen_call, A.Index: self.gen_load_lvalue, A.Member: self.gen_member,
            A.Cast: self.gen_cast, A.ImplicitCast: self.gen_cast, A.CxxCast: self.gen_cast,
            A.SizeofExpr: self.gen_sizeof,
            A.SizeofType: self.gen_sizeof, A.Construct: self.gen_construct,
        }
        self.stmt_dispatch = {
            A.CompoundStmt: self.gen_compound, A.ExprStmt: self.gen_expr_stmt, A.IfStmt: self.gen_if,
            A.ForStmt: self.gen_for, A.WhileStmt: self.gen_while, A.DoStmt: self.gen_do,
            A.ReturnStmt: self.gen_return, A.BreakStmt: self.gen_break, A.ContinueStmt: self.gen_continue,
            A.Declaration: self.gen_declaration, A.SwitchStmt: self.gen_switch,
        }

    # ---- emission helpers ------------------------------------------------------------
    def new_reg(self, cls: str) -> VReg:
        self.next_id += 1
        return VReg(self.next_id, cls)

    def make_label(self) -> str:
        self.next_label += 1
        return f"L{self.next_label}"

    def new_block(self, label: str | None = None) -> Block:
        block = Block(label or self.make_label())
        self.blocks.append(block)
        self.block = block
        self.memo = {}
        self.known = {}
        return block

    def place(self, label: str) -> None:
        """Start the block that `label` names (control falls into it)."""
        if not self.block.instrs and self.block.label != label and len(self.blocks) > 1:
            # An empty block: give it the new name (branches to the old name are renamed
            # in layout_blocks via the alias table).
            self.aliases[self.block.label] = label
            self.block.label = label
            self.memo = {}
            self.known = {}
            return
        self.new_block(label)

    def count_uses(self, operands) -> None:
        uses = self.uses
        for op in operands:
            if isinstance(op, VReg):
                uses[op] = uses.get(op, 0) + 1
            elif isinstance(op, ir.Address) and isinstance(op.base, VReg):
                uses[op.base] = uses.get(op.base, 0) + 1

    def emit(self, opcode: str, *operands, guard: VReg | None = None, negated: bool = False) -> ir.Instr:
        if self.block.instrs and self.block.terminator() is not None:
            self.new_block()  # code after a branch or ret starts a new (possibly dead) block
        instr = ir.Instr(opcode, list(operands), guard, negated)
        self.count_uses(operands[1:] if operands and _defines(instr) else operands)
        if guard is not None:
            self.uses[guard] = self.uses.get(guard, 0) + 1
        self.block.instrs.append(instr)
        return instr

    def op(self, opcode: str, cls: str, *sources) -> VReg:
        """A pure instruction: reuse an identical one from this block if there is one."""
        key = (opcode, *[_key(s) for s in sources])
        found = self.memo.get(key)
        if found is not None:
            return found
        dst = self.new_reg(cls)
        self.defs[dst] = self.emit(opcode, dst, *sources)
        self.memo[key] = dst
        return dst

    def write_reg(self, reg: VReg) -> None:
        """`reg` (a variable's register) is about to change: forget values derived from it."""
        self.known.pop(reg, None)
        if self.memo:
            self.memo = {k: v for k, v in self.memo.items() if v is not reg and reg not in k}

    def branch(self, label: str, guard: VReg | None = None, negated: bool = False) -> None:
        if isinstance(guard, ir.Imm):  # a condition known at compile time
            if bool(guard.value) != negated:
                self.emit("bra.uni", ir.Symbol(label))
            return
        if guard is None:
            self.emit("bra.uni", ir.Symbol(label))
        else:
            self.emit("bra", ir.Symbol(label), guard=guard, negated=negated)
            self.new_block()

    def unsupported(self, feature: str, node) -> Unsupported:
        return Unsupported(feature, getattr(node, "loc", None))

    # ---- the function ----------------------------------------------------------------
    def generate(self) -> ir.Function:
        fsym = self.fsym
        fdef = fsym.definition
        params = []
        for psym in fdef.param_symbols:
            name = f"{fsym.mangled}_param_{psym.index}"
            t = psym.type
            ptype = param_type(t)
            params.append(ir.Param(ptype, name))
            cls = reg_class(t)
            reg = self.new_reg("rs" if cls == "p" else cls)
            load_type = ptype[1:] if ptype not in (".u8",) else ("s8" if isinstance(t, S.IntType) and t.signed else "u8")
            self.emit(f"ld.param.{load_type}", reg, ir.Address(ir.Symbol(name)))
            self.param_loads[reg] = psym.index
            value = reg
            if cls == "p":  # bool parameter: a byte, tested against zero
                value = self.op("setp.ne.s16", "p", reg, ir.Imm(0))
            if isinstance(t, S.PointerType):
                self.kernel_pointers[reg] = t
            self.bind_initial(psym, value)
        self.gen_body(fdef.body)
        self.place(self.exit_label)
        self.emit("ret")
        directives = self.launch_bounds()
        func = ir.Function(fsym.mangled, entry=True, visible=True, params=params, directives=directives,
                           vars=self.vars)
        run_passes(self, func)
        return func

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
        """A parameter or initialized local: a name for `value`, or a register if assigned again."""
        if sym.address_taken:
            raise self.unsupported(f"taking the address of local variable '{sym.name}'", sym)
        if sym.assign_count == 0:
            if isinstance(value, VReg) and value in self.mutable:
                value = self.copy(value, sym.type)  # a snapshot: the source changes later
            self.bindings[sym] = value
            return
        reg = self.new_reg(reg_class(sym.type))
        self.mutable.add(reg)
        ref = VarRef(reg, S.unqualified(sym.type), sym)
        if value is not None:
            self.assign_reg(ref, value)
        self.bindings[sym] = ref

    def copy(self, value, t: S.Type) -> VReg:
        dst = self.new_reg(value.cls if isinstance(value, VReg) else reg_class(t))
        self.emit(f"mov.{_mov_type(dst.cls, t)}", dst, value)
        return dst

    # ---- statements ------------------------------------------------------------------
    def gen_body(self, body: A.CompoundStmt) -> None:
        for item in body.items:
            self.gen_stmt(item)

    def gen_stmt(self, stmt) -> None:
        handler = self.stmt_dispatch.get(type(stmt))
        if handler is None:
            raise self.unsupported(_describe_stmt(stmt), stmt)
        handler(stmt)

    def gen_compound(self, stmt: A.CompoundStmt) -> None:
        for item in stmt.items:
            self.gen_stmt(item)

    def gen_expr_stmt(self, stmt: A.ExprStmt) -> None:
        if stmt.expr is not None:
            self.gen_effect(stmt.expr)

    def gen_effect(self, expr: A.Expr) -> None:
        """Evaluate for side effects only (the value is not needed)."""
        if isinstance(expr, A.PostIncDec):
            self.gen_inc_dec(expr, want_value=False)
        elif isinstance(expr, A.Call):
            self.gen_call(expr, want_value=False)
        elif isinstance(expr, A.Comma):
            self.gen_effect(expr.lhs)
            self.gen_effect(expr.rhs)
        elif isinstance(expr, (A.ImplicitCast, A.Cast)) and isinstance(expr.type, S.VoidType):
            self.gen_effect(expr.operand)
        else:
            self.gen_expr(expr)

    def gen_declaration(self, decl: A.Declaration) -> None:
        for init in decl.declarators:
            sym = init.symbol
            if sym is None:
                continue
            if sym.space == "shared":
                self.declare_shared(sym, decl)
                continue
            if sym.space is not None or sym.is_static:
                raise self.unsupported(f"{'static' if sym.is_static else '__' + sym.space + '__'} local variables",
                                       init)
            if isinstance(sym.type, (S.ArrayType, S.StructType)):
                raise self.unsupported("local arrays and structs (local memory)", init)
            if init.init is None:
                if sym.address_taken:
                    raise self.unsupported(f"taking the address of local variable '{sym.name}'", init)
                reg = self.new_reg(reg_class(sym.type))
                self.mutable.add(reg)
                self.bindings[sym] = VarRef(reg, S.unqualified(sym.type), sym)
                continue
            if isinstance(init.init, A.InitList):
                if len(init.init.items) != 1:
                    raise self.unsupported("initializer lists", init.init)
                value = self.gen_expr(init.init.items[0])
            else:
                value = self.gen_expr(init.init)
            self.bind_initial(sym, value)

    def declare_shared(self, sym: S.VarSymbol, decl: A.Declaration) -> None:
        """A __shared__ variable: a .shared declaration in the kernel, as NVVM writes it
        (its "demoted variable"), named like a function-scope static."""
        t = sym.type
        elem = t
        while isinstance(elem, S.ArrayType):
            elem = elem.elem
        if isinstance(elem, S.StructType):
            raise self.unsupported("__shared__ structs", decl)
        extern = "extern" in decl.specs.storage
        if extern:
            name = sym.name
            var = ir.Variable(".shared", ".b8", name, align=16, array=0, extern=True)
            if name not in self.module.extern_shared:
                self.module.extern_shared[name] = var
        else:
            name = mangle_static_local(self.fsym.mangled, sym.name)
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
            self.cond_branch(stmt.cond, jump, True)
            return
        end = self.make_label()
        if stmt.else_ is None:
            self.cond_branch(stmt.cond, end, False)
            self.gen_stmt(stmt.then)
            self.place(end)
            return
        other = self.make_label()
        self.cond_branch(stmt.cond, other, False)
        self.gen_stmt(stmt.then)
        if self.block.terminator() is None:
            self.branch(end)
        self.place(other)
        self.gen_stmt(stmt.else_)
        self.place(end)

    def gen_loop(self, cond, body, step, test_first: bool) -> None:
        """Loops are rotated, as LLVM's loop passes leave them: a guard before the loop,
        the test at the bottom, so each iteration takes one branch."""
        exit_label, cont_label, top = self.make_label(), self.make_label(), self.make_label()
        constant = S.constant_value(cond) if cond is not None else 1
        if test_first and constant is not None and not constant:
            return
        if test_first and constant is None:
            self.cond_branch(cond, exit_label, False)
        self.place(top)
        self.loops.append((exit_label, cont_label))
        self.gen_stmt(body)
        self.loops.pop()
        self.place(cont_label)
        if step is not None:
            self.gen_effect(step)
        if constant is None:
            self.cond_branch(cond, top, True)
        elif constant:
            self.branch(top)
        self.place(exit_label)

    def gen_for(self, stmt: A.ForStmt) -> None:
        if stmt.init is not None:
            self.gen_stmt(stmt.init)
        self.gen_loop(stmt.cond, stmt.body, stmt.step, True)

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
                self.assign_reg(result, value)
        self.branch(label)

    def gen_switch(self, stmt: A.SwitchStmt) -> None:
        """A chain of compares: NVVM builds the same for a few sparse cases."""
        value = self.gen_expr(stmt.expr)
        t = stmt.expr.type
        cases: list[tuple[int, str]] = []
        default = [None]
        body = stmt.body

        def collect(node):
            if isinstance(node, A.CaseStmt):
                cases.append((node.const_value, node))
                collect(node.body)
            elif isinstance(node, A.DefaultStmt):
                default[0] = node
                collect(node.body)
            elif isinstance(node, A.CompoundStmt):
                for item in node.items:
                    collect(item)
        labels: dict[int, str] = {}
        collect(body)
        exit_label = self.make_label()
        for case_value, node in cases:
            labels[id(node)] = self.make_label()
        if default[0] is not None:
            labels[id(default[0])] = self.make_label()
        for case_value, node in cases:
            p = self.compare("==", value, imm_for(case_value, t), t)
            self.branch(labels[id(node)], p)
        self.branch(labels[id(default[0])] if default[0] is not None else exit_label)
        self.loops.append((exit_label, self.loops[-1][1] if self.loops else None))

        def gen_case_body(node):
            if isinstance(node, (A.CaseStmt, A.DefaultStmt)):
                self.place(labels[id(node)])
                gen_case_body(node.body)
            elif isinstance(node, A.CompoundStmt):
                for item in node.items:
                    gen_case_body(item)
            else:
                self.gen_stmt(node)
        gen_case_body(body)
        self.loops.pop()
        self.place(exit_label)

    # ---- conditions ------------------------------------------------------------------
    def cond_branch(self, cond: A.Expr, target: str, when: bool) -> None:
        """Branch to `target` if `cond` is `when`; fall through otherwise."""
        while isinstance(cond, A.ImplicitCast) and S.is_scalar(cond.operand.type) and cond.type == S.BOOL:
            cond = cond.operand
        constant = S.constant_value(cond)
        if constant is not None:
            if bool(constant) == when:
                self.branch(target)
            return
        if isinstance(cond, A.Binary) and cond.op in ("&&", "||") and _is_speculatable(cond.rhs):
            # SimplifyCFG's FoldBranchToCommonDest: both tests, and/or, one branch.
            self.branch(target, self.cond_pred(cond, negate=not when))
            return
        if isinstance(cond, A.Binary) and cond.op in ("&&", "||"):
            if (cond.op == "&&") == when:
                skip = self.make_label()
                self.cond_branch(cond.lhs, skip, not when)
                self.cond_branch(cond.rhs, target, when)
                self.place(skip)
            else:
                self.cond_branch(cond.lhs, target, when)
                self.cond_branch(cond.rhs, target, when)
            return
        if isinstance(cond, A.Unary) and cond.op == "!":
            self.cond_branch(cond.operand, target, not when)
            return
        if isinstance(cond, A.Binary) and cond.op in _INT_CMP:
            lhs = self.gen_expr(cond.lhs)
            rhs = self.gen_expr(cond.rhs)
            p = self.compare(cond.op, lhs, rhs, cond.lhs.type, negate=not when)
            self.branch(target, p)
            return
        value = self.gen_expr(cond)
        p = self.truth(value, cond.type, negate=not when)
        self.branch(target, p)

    def cond_pred(self, cond: A.Expr, negate: bool = False):
        """A predicate for `cond` (or its negation), evaluating every operand."""
        while isinstance(cond, A.ImplicitCast) and cond.type == S.BOOL and S.is_scalar(cond.operand.type):
            cond = cond.operand
        if isinstance(cond, A.Binary) and cond.op in ("&&", "||"):
            use_and = (cond.op == "&&") != negate   # De Morgan
            a = self.cond_pred(cond.lhs, negate)
            b = self.cond_pred(cond.rhs, negate)
            if isinstance(a, ir.Imm):
                return b if bool(a.value) == use_and else a
            if isinstance(b, ir.Imm):
                return a if bool(b.value) == use_and else b
            return self.op(f"{'and' if use_and else 'or'}.pred", "p", a, b)
        if isinstance(cond, A.Unary) and cond.op == "!":
            return self.cond_pred(cond.operand, not negate)
        if isinstance(cond, A.Binary) and cond.op in _INT_CMP:
            lhs, rhs = self.gen_expr(cond.lhs), self.gen_expr(cond.rhs)
            if S.is_pointer(cond.lhs.type) and S.is_pointer(cond.rhs.type):
                lhs, rhs = self.comparable_pointers(lhs, rhs)
            return self.compare(cond.op, lhs, rhs, S.unqualified(cond.lhs.type), negate)
        return self.truth(self.gen_expr(cond), cond.type, negate)

    def compare(self, op: str, lhs, rhs, t: S.Type, negate: bool = False):
        """setp for `lhs op rhs` (operands already of type t); constants go on the right."""
        is_float = isinstance(t, S.FloatType)
        cond = (_FLOAT_CMP if is_float else _INT_CMP)[op]
        if negate:
            cond = (_FLOAT_INVERSE if is_float else _INVERSE)[cond]
        if isinstance(lhs, ir.Imm) and isinstance(rhs, ir.Imm):
            value = _fold_compare(cond, lhs.value, rhs.value)
            return ir.Imm(int(value))
        if isinstance(lhs, ir.Imm):
            lhs, rhs = rhs, lhs
            cond = _SWAPPED[cond]
        if not is_float and isinstance(rhs, ir.Imm) and isinstance(t, (S.IntType, S.EnumType)) \
                and not (isinstance(t, S.IntType) and t.name == "bool"):
            cond, rhs = _canonical_compare(cond, rhs.value, t)
            if cond in ("true", "false"):
                return ir.Imm(int(cond == "true"))
        if is_float:
            suffix = float_type(t)
        elif isinstance(t, S.IntType) and t.name == "bool":
            return self.bool_compare(cond, lhs, rhs)
        elif cond in ("eq", "ne"):
            suffix = int_type(t, signed=True)
        else:
            suffix = int_type(t)
        return self.op(f"setp.{cond}.{suffix}", "p", lhs, rhs)

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
        if isinstance(value, ir.Imm):
            return ir.Imm(int(bool(value.value) != negate))
        if value.cls == "p":
            return self.op("not.pred", "p", value) if negate else value
        cond = "eq" if negate else "ne"
        if isinstance(t, S.FloatType):
            cond = "eq" if negate else "neu"
            return self.op(f"setp.{cond}.{float_type(t)}", "p", value, ir.Imm(0.0, "." + float_type(t)))
        suffix = {"rs": "s16", "r": "s32", "rd": "s64"}[value.cls]
        return self.op(f"setp.{cond}.{suffix}", "p", value, ir.Imm(0))

    def as_pred(self, value):
        if isinstance(value, ir.Imm):
            p = self.new_reg("p")
            self.emit("setp.ne.s32", p, ir.Imm(int(bool(value.value))), ir.Imm(0))
            return p
        return value

    # ---- expressions -----------------------------------------------------------------
    def gen_expr(self, expr: A.Expr):
        handler = self.expr_dispatch.get(type(expr))
        if handler is None:
            raise self.unsupported(_describe_expr(expr), expr)
        return handler(expr)

    def gen_literal(self, expr) -> ir.Imm:
        if isinstance(expr, A.FloatLit):
            value = expr.value if expr.type.size == 8 else f32_bits(expr.value)
            return ir.Imm(value, "." + float_type(expr.type))
        return ir.Imm(int(expr.value))

    def gen_ident(self, expr: A.Ident):
        sym = expr.symbol
        if isinstance(sym, S.EnumConstSymbol):
            return ir.Imm(sym.value)
        if isinstance(sym, S.VarSymbol):
            if sym.kind == "builtin":
                if sym.name == "warpSize":
                    return ir.Imm(32)
                raise self.unsupported(f"'{sym.name}' as a whole value", expr)
            binding = self.bindings.get(sym)
            if binding is None:
                if sym.kind == "global":
                    raise self.unsupported(f"global variable '{sym.name}' in device code", expr)
                raise self.unsupported(f"variable '{sym.name}' used before its declaration", expr)
            if isinstance(binding, VarRef):
                # A constant assigned earlier in this block is still the value (what
                # mem2reg + constant propagation would see).
                return self.known.get(binding.reg, binding.reg)
            if isinstance(binding, MemRef):
                return self.load(binding)
            return binding
        raise self.unsupported(f"'{expr.name}' as a value", expr)

    def gen_member(self, expr: A.Member):
        base = expr.base
        if isinstance(base, A.Ident) and isinstance(base.symbol, S.VarSymbol) and base.symbol.kind == "builtin":
            sreg = SPECIAL_REGS[base.symbol.name]
            return self.op("mov.u32", "r", ir.SpecialReg(f"{sreg}.{expr.name}"))
        return self.load(self.gen_lvalue(expr))

    def gen_load_lvalue(self, expr):
        return self.load(self.gen_lvalue(expr))

    # ---- arithmetic ------------------------------------------------------------------
    def gen_binary(self, expr: A.Binary):
        op = expr.op
        if op in ("&&", "||"):
            return self.gen_logical(expr)
        lt, rt = expr.lhs.type, expr.rhs.type
        if op in ("+", "-") and (S.is_pointer(lt) or S.is_pointer(rt)):
            return self.gen_pointer_arith(expr)
        lhs = self.gen_expr(expr.lhs)
        rhs = self.gen_expr(expr.rhs)
        if op in _INT_CMP:
            if S.is_pointer(lt) and S.is_pointer(rt):
                lhs, rhs = self.comparable_pointers(lhs, rhs)
            return self.compare(op, lhs, rhs, S.unqualified(expr.lhs.type))
        return self.arith(op, lhs, rhs, S.unqualified(expr.type), expr)

    def arith(self, op: str, lhs, rhs, t: S.Type, node=None):
        """`lhs op rhs` in type t, both operands already converted to t (shifts: the count
        may be any integer)."""
        if isinstance(lhs, ir.Imm) and isinstance(rhs, ir.Imm):
            try:
                value = S.fold_binary(op, lhs.value, rhs.value, t)
            except ZeroDivisionError:
                value = None
            if value is not None:
                return imm_for(S.convert_constant(value, t), t)
        cls = reg_class(t)
        if isinstance(t, S.FloatType):
            ft = float_type(t)
            if op in ("+", "*") and isinstance(lhs, ir.Imm):
                lhs, rhs = rhs, lhs
            if op == "*" and isinstance(rhs, ir.Imm) and rhs.value == 2.0:
                return self.op(f"add.{ft}", cls, lhs, lhs)  # instcombine: x * 2.0 -> x + x
            if op == "/" and isinstance(rhs, ir.Imm) and _exact_reciprocal(rhs.value):
                # x / 2^k is x * 2^-k exactly: LLVM rewrites the division.
                return self.arith("*", lhs, ir.Imm(1.0 / rhs.value, rhs.type), t, node)
            opcode = {"+": "add", "-": "sub", "*": "mul", "/": "div.rn"}.get(op)
            if opcode is None:
                raise self.unsupported(f"operator '{op}' on floating-point values", node)
            self.multiplies += opcode == "mul"
            return self.op(f"{opcode}.{ft}", cls, lhs, rhs)
        if cls == "p":
            raise self.unsupported(f"arithmetic on bool values", node)
        width = 64 if cls == "rd" else (32 if cls == "r" else 16)
        signed = t.signed if isinstance(t, S.IntType) else True
        if op in ("+", "*", "&", "|", "^") and isinstance(lhs, ir.Imm):
            lhs, rhs = rhs, lhs
        if op == "*" and width == 64:
            wide = self.widening_multiply(lhs, rhs)
            if wide is not None:
                return wide
        if op == "*" and isinstance(rhs, ir.Imm) and rhs.value > 0 and rhs.value & (rhs.value - 1) == 0:
            # x * 2^k is a shift, as LLVM's instcombine makes it.
            if rhs.value == 1:
                return lhs
            return self.op(f"shl.b{width}", cls, lhs, ir.Imm(rhs.value.bit_length() - 1))
        if op in ("+", "-") and isinstance(rhs, ir.Imm) and rhs.value == 0:
            return lhs
        if op in ("/", "%") and isinstance(rhs, ir.Imm) and rhs.value > 0 and \
                rhs.value & (rhs.value - 1) == 0 and not isinstance(lhs, ir.Imm):
            return self.divide_by_power_of_two(op, lhs, rhs.value, signed, width, cls)
        if op == "-" and isinstance(rhs, ir.Imm) and not isinstance(lhs, ir.Imm):
            # LLVM canonicalizes x - c to x + (-c).
            return self.op(f"add.s{width}", cls, lhs, ir.Imm(S.convert_constant(-rhs.value, t)))
        opcode = {
            "+": f"add.s{width}", "-": f"sub.s{width}", "*": f"mul.lo.s{width}",
            "/": f"div.{'s' if signed else 'u'}{width}", "%": f"rem.{'s' if signed else 'u'}{width}",
            "&": f"and.b{width}", "|": f"or.b{width}", "^": f"xor.b{width}",
            "<<": f"shl.b{width}", ">>": f"shr.{'s' if signed else 'u'}{width}",
        }[op]
        if op in ("<<", ">>") and isinstance(rhs, VReg) and rhs.cls != "r":
            rhs = self.convert(rhs, S.ULLONG if rhs.cls == "rd" else S.USHORT, S.UINT)
        self.multiplies += op == "*"
        return self.op(opcode, cls, lhs, rhs)

    def widening_multiply(self, lhs, rhs):
        """ext(a) * ext(b) in 64 bits is mul.wide of the 32-bit values (LLVM's pattern)."""
        def narrow(value):
            if isinstance(value, ir.Imm):
                return value, None
            instr = self.defs.get(value)
            if instr is not None and instr.opcode in ("cvt.u64.u32", "cvt.s64.s32"):
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
            if isinstance(v, ir.Imm) and not (0 <= v.value < (1 << 31)):
                return None
        if isinstance(a, ir.Imm):
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
        if isinstance(lhs, ir.Imm):
            if bool(lhs.value) == (expr.op == "||"):
                return ir.Imm(int(expr.op == "||"))
            return self.truth(self.gen_expr(expr.rhs), expr.rhs.type)
        if _is_speculatable(expr.rhs):
            rhs = self.truth(self.gen_expr(expr.rhs), expr.rhs.type)
            if isinstance(rhs, ir.Imm):
                if bool(rhs.value) == (expr.op == "||"):
                    return rhs
                return lhs
            return self.op(f"{'and' if expr.op == '&&' else 'or'}.pred", "p", lhs, rhs)
        result = self.new_reg("p")
        self.mutable.add(result)
        self.emit("mov.pred", result, lhs)
        done = self.make_label()
        self.branch(done, lhs, negated=(expr.op == "&&"))
        rhs = self.truth(self.gen_expr(expr.rhs), expr.rhs.type)
        self.emit("mov.pred", result, self.as_pred(rhs))
        self.place(done)
        return result

    def gen_unary(self, expr: A.Unary):
        op = expr.op
        if op == "*":
            return self.load(self.gen_lvalue(expr))
        if op == "&":
            return self.address_of(expr.operand)
        value = self.gen_expr(expr.operand)
        t = S.unqualified(expr.type)
        if op == "!":
            return self.truth(value, expr.operand.type, negate=True)
        if op == "+":
            return value
        if isinstance(value, ir.Imm):
            folded = -value.value if op == "-" else ~value.value
            return imm_for(S.convert_constant(folded, t), t)
        if op == "-":
            return self.op(f"neg.{arith_type(t) if not isinstance(t, S.IntType) else 's' + str(bits(t))}",
                           value.cls, value)
        return self.op(f"not.b{bits(t)}", value.cls, value)

    # ---- pointers and addresses ------------------------------------------------------
    # An address is a MemRef: base (a register or a variable's Symbol) + constant offset,
    # in a state space.  Global and generic addresses are 64-bit (%rd); shared ones are
    # 32-bit (%r), as NVVM keeps them.

    def pointer_info(self, value) -> PointerInfo:
        if isinstance(value, VReg):
            return self.pointers.get(value, GENERIC)
        return GENERIC

    def as_address_base(self, value, ptype: S.PointerType | None = None) -> VReg:
        """A pointer about to be dereferenced or offset.  A kernel's pointer parameter is
        assumed to point to global memory (as NVVM assumes): it is converted with
        cvta.to.global, once per block; place_cvta then positions the conversions."""
        if isinstance(value, ir.Imm):
            return self.op("mov.u64", "rd", value)
        param_type_ = self.kernel_pointers.get(value)
        if param_type_ is not None:
            dst = self.op("cvta.to.global.u64", "rd", value)
            pointee = param_type_.pointee
            self.pointers[dst] = PointerInfo("global", nc=pointee.const and param_type_.restrict)
            return dst
        return value

    def pointer_target(self, value, ptype: S.PointerType) -> MemRef:
        """The memory a pointer value points to."""
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
            index = self.gen_expr(index_expr)
        if isinstance(base, tuple):
            base = self.pointer_target(*base)
        offset = base.offset + extra * size
        if index is None:
            return MemRef(base.base, offset, base.space, elem_type, base.nc)
        if isinstance(index, ir.Imm):
            return MemRef(base.base, offset + index.value * size, base.space, elem_type, base.nc)
        if base.space == "shared" and (isinstance(base.base, ir.Symbol) or base.base.cls == "r"):
            scaled = self.scale_index32(index, index_expr.type, size)
            start = base.base if isinstance(base.base, VReg) else self.op("mov.u32", "r", base.base)
            addr = self.op("add.s32", "r", start, scaled)
            return MemRef(addr, offset, "shared", elem_type)
        start = base.base
        if isinstance(start, ir.Symbol):
            start = self.op("mov.u64", "rd", start)
        scaled = self.scale_index(index, index_expr.type, size)
        addr = self.op("add.s64", "rd", start, scaled)
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
        signed = (t.signed if isinstance(t, S.IntType) else True) and not self.known_nonnegative(index)
        if index.cls == "rs":
            index = self.convert(index, t, S.INT if signed else S.UINT)
        if size == 1:
            return self.op(f"cvt.{'s' if signed else 'u'}64.{'s' if signed else 'u'}32", "rd", index)
        return self.op(f"mul.wide.{'s' if signed else 'u'}32", "rd", index, ir.Imm(size))

    def known_nonnegative(self, value) -> bool:
        """A 32-bit value that is a zero-extended narrower one (a byte or short read
        unsigned): LLVM then widens it unsigned."""
        instr = self.defs.get(value) if isinstance(value, VReg) else None
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
            if isinstance(base, ir.Symbol):
                base = self.op("mov.u64", "rd", base)
                if mem.offset:
                    base = self.op("add.s64", "rd", base, ir.Imm(mem.offset))
            else:
                if mem.offset:
                    base = self.op("add.s32", "r", base, ir.Imm(mem.offset))
                base = self.op("cvt.u64.u32", "rd", base)
            return self.op("cvta.shared.u64", "rd", base)
        if isinstance(base, ir.Symbol):
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
        if info.space in ("global", "local"):
            return self.op(f"cvta.{info.space}.u64", "rd", value)
        return value

    def address_of(self, operand: A.Expr):
        lv = self.gen_lvalue(operand)
        if isinstance(lv, VarRef):
            raise self.unsupported("taking the address of a register variable", operand)
        return self.address_value(lv)

    # ---- lvalues, loads and stores ---------------------------------------------------
    def gen_lvalue(self, expr: A.Expr):
        if isinstance(expr, A.Ident):
            binding = self.bindings.get(expr.symbol)
            if isinstance(binding, (VarRef, MemRef)):
                return binding
            raise self.unsupported(f"assignment to '{expr.name}'", expr)
        if isinstance(expr, A.Index):
            base_expr = expr.base
            if isinstance(base_expr, A.ImplicitCast) and isinstance(base_expr.operand.type, S.ArrayType):
                base = self.gen_lvalue(base_expr.operand)  # an array object: its address
            else:
                base = (self.gen_expr(base_expr), base_expr.type)
            return self.element(base, expr.type, expr.index)
        if isinstance(expr, A.Unary) and expr.op == "*":
            return self.pointer_target(self.gen_expr(expr.operand), expr.operand.type)
        if isinstance(expr, A.Member):
            raise self.unsupported("struct members in device code", expr)
        raise self.unsupported("this expression as an lvalue", expr)

    def load(self, lv):
        if isinstance(lv, VarRef):
            return lv.reg
        t = S.unqualified(lv.ctype)
        if isinstance(t, (S.StructType, S.ArrayType)):
            raise self.unsupported(f"loading a value of type '{t}'", None)
        space = "" if lv.space == "generic" else f".{lv.space}"
        nc = ".nc" if lv.nc and lv.space == "global" else ""
        volatile = ".volatile" if lv.ctype.volatile else ""
        mtype = memory_type(t)
        cls = reg_class(t)
        dst = self.new_reg("rs" if cls == "p" else cls)
        instr = self.emit(f"ld{volatile}{space}{nc}.{mtype}", dst, ir.Address(lv.base, lv.offset))
        self.defs[dst] = instr
        self.loads += 1
        if dst.cls == "rs":
            self.narrow_loads += 1
        self.load_order[id(instr)] = len(self.load_order)
        if cls == "p":
            return self.op("setp.ne.s16", "p", dst, ir.Imm(0))
        return dst

    def store(self, lv, value) -> None:
        if isinstance(lv, VarRef):
            self.assign_reg(lv, value)
            return
        t = S.unqualified(lv.ctype)
        space = "" if lv.space == "generic" else f".{lv.space}"
        volatile = ".volatile" if lv.ctype.volatile else ""
        if reg_class(t) == "p":
            value = self.bool_to_int(value, S.USHORT)
        if isinstance(value, VReg) and S.is_pointer(t):
            value = self.to_generic(value) if self.pointer_info(value).space != "generic" else value
        self.emit(f"st{volatile}{space}.{memory_type(t)}", ir.Address(lv.base, lv.offset), value)
        # A store may change any loaded value: loads are not reused across it.
        self.memo = {k: v for k, v in self.memo.items() if not k[0].startswith("ld")}

    def assign_reg(self, ref: VarRef, value) -> None:
        """Write `value` into a variable's register: in place when the value was just
        computed into a temporary no one has read, with a mov otherwise."""
        reg = ref.reg
        self.write_reg(reg)
        last = self.block.instrs[-1] if self.block.instrs else None
        if (isinstance(value, VReg) and value is not reg and value not in self.mutable and last is not None
                and last.operands and last.operands[0] is value and self.uses.get(value, 0) == 0
                and value.cls == reg.cls and value not in self.param_loads and _defines(last)):
            last.operands[0] = reg
            self.memo = {k: v for k, v in self.memo.items() if v is not value}
            return
        if value is reg:
            return
        if isinstance(value, ir.Imm) and reg.cls == "p":
            self.emit("setp.ne.s32", reg, ir.Imm(int(bool(value.value))), ir.Imm(0))
            return
        self.emit(f"mov.{_mov_type(reg.cls, ref.ctype)}", reg, value)
        if isinstance(value, ir.Imm):
            self.known[reg] = value

    # ---- assignment ------------------------------------------------------------------
    def gen_assign(self, expr: A.Assign):
        if expr.op == "=":
            value = self.gen_expr(expr.value)   # C++17: the right side is evaluated first
            lv = self.gen_lvalue(expr.target)
            if isinstance(lv, VarRef) and S.is_pointer(lv.ctype):
                value = self.match_pointer_space(lv, value)
            self.store(lv, value)
            return lv.reg if isinstance(lv, VarRef) else value
        op = expr.op[:-1]
        value = self.gen_expr(expr.value)
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
        return lv.reg if isinstance(lv, VarRef) else result

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
        post = isinstance(expr, A.PostIncDec)
        if post and want_value and isinstance(lv, VarRef):
            old = self.copy(old, t)
        step = 1 if expr.op == "++" else -1
        if S.is_pointer(t):
            new = self.op("add.s64", "rd", old, ir.Imm(step * S.sizeof(t.pointee)))
            self.pointers[new] = self.pointer_info(old)
        elif isinstance(t, S.FloatType):
            new = self.arith("+", old, imm_for(float(step), t), t)
        else:
            wide = S.promote(t)
            new = self.convert(self.arith("+", self.convert(old, t, wide), ir.Imm(step), wide), wide, t)
        self.store(lv, new)
        if not want_value:
            return None
        if post:
            return old
        return lv.reg if isinstance(lv, VarRef) else new

    def gen_conditional(self, expr: A.Conditional):
        t = S.unqualified(expr.type)
        constant = S.constant_value(expr.cond)
        if constant is not None:
            return self.gen_expr(expr.then if constant else expr.else_)
        if _is_speculatable(expr.then) and _is_speculatable(expr.else_) and not isinstance(t, S.VoidType) \
                and reg_class(t) != "p":
            minmax = self.select_min_max(expr, t)
            if minmax is not None:
                return minmax
            p = self.condition_pred(expr.cond)
            a = self.gen_expr(expr.then)
            b = self.gen_expr(expr.else_)
            if isinstance(p, ir.Imm):
                return a if p.value else b
            return self.op(f"selp.{_sel_type(t)}", reg_class(t), a, b, p)
        result = None if isinstance(t, S.VoidType) else VarRef(self.new_reg(reg_class(t)), t, None)
        if result is not None:
            self.mutable.add(result.reg)
        other, end = self.make_label(), self.make_label()
        self.cond_branch(expr.cond, other, False)
        a = self.gen_expr(expr.then)
        if result is not None:
            self.assign_reg(result, a)
        self.branch(end)
        self.place(other)
        b = self.gen_expr(expr.else_)
        if result is not None:
            self.assign_reg(result, b)
        self.place(end)
        return result.reg if result is not None else None

    def select_min_max(self, expr: A.Conditional, t: S.Type):
        """`a > b ? a : b` is max(a, b), `a < b ? a : b` min(a, b): InstCombine's
        select-of-compare patterns (NVVM applies them to floats too)."""
        cond = expr.cond
        while isinstance(cond, A.ImplicitCast) and cond.type == S.BOOL:
            cond = cond.operand
        if not (isinstance(cond, A.Binary) and cond.op in ("<", ">", "<=", ">=")):
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
        if isinstance(a, ir.Imm):
            a, b = b, a
        if isinstance(a, ir.Imm):
            return None
        suffix = float_type(t) if isinstance(t, S.FloatType) else int_type(t)
        return self.op(f"{kind}.{suffix}", reg_class(t), a, b)

    def condition_pred(self, cond: A.Expr):
        while isinstance(cond, A.ImplicitCast) and cond.type == S.BOOL and S.is_scalar(cond.operand.type):
            cond = cond.operand
        if isinstance(cond, A.Binary) and cond.op in _INT_CMP:
            lhs, rhs = self.gen_expr(cond.lhs), self.gen_expr(cond.rhs)
            if S.is_pointer(cond.lhs.type) and S.is_pointer(cond.rhs.type):
                lhs, rhs = self.comparable_pointers(lhs, rhs)
            return self.compare(cond.op, lhs, rhs, S.unqualified(cond.lhs.type))
        return self.truth(self.gen_expr(cond), cond.type)

    def gen_comma(self, expr: A.Comma):
        self.gen_effect(expr.lhs)
        return self.gen_expr(expr.rhs)

    def gen_sizeof(self, expr):
        return ir.Imm(S.constant_value(expr))

    def gen_construct(self, expr: A.Construct):
        t = expr.type
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
        if isinstance(t, S.VoidType):
            self.gen_effect(operand)
            return None
        if isinstance(operand.type, S.ArrayType) and S.is_pointer(t):
            return self.address_value(self.gen_lvalue(operand))
        value = self.gen_expr(operand)
        return self.convert(value, operand.type, t)

    def convert(self, value, src: S.Type, dst: S.Type):
        src, dst = S.unqualified(src), S.unqualified(dst)
        if src == dst or value is None:
            return value
        if isinstance(src, (S.PointerType, S.ArrayType)) and isinstance(dst, S.PointerType):
            return value
        if isinstance(value, ir.Imm):
            if isinstance(dst, S.PointerType):
                return ir.Imm(int(value.value))
            return imm_for(S.convert_constant(value.value, dst), dst)
        if isinstance(dst, S.PointerType):
            src_int = src
            if value.cls == "rd":
                return value
            return self.op(f"cvt.{'s' if src_int.signed else 'u'}64.{int_type(src_int)}", "rd", value)
        if isinstance(src, S.PointerType):
            src = S.ULONG
        dcls, scls = reg_class(dst), value.cls
        if dcls == "p":
            return self.truth(value, src)
        if scls == "p":
            return self.bool_to(value, dst)
        if isinstance(dst, S.FloatType):
            if isinstance(src, S.FloatType):
                opcode = "cvt.f64.f32" if dst.size == 8 else "cvt.rn.f32.f64"
                return self.op(opcode, dcls, value)
            return self.op(f"cvt.rn.{float_type(dst)}.{_cvt_int(src)}", dcls, value)
        if isinstance(src, S.FloatType):
            return self.op(f"cvt.rzi.{_cvt_int(dst, register=True)}.{float_type(src)}", dcls, value)
        # integer to integer
        sbits, dbits = S.sizeof(src) * 8, S.sizeof(dst) * 8
        if dcls == scls:
            if dbits < sbits or (dbits == 8 and sbits == 16):
                # narrowing inside one register class (short -> char): re-extend the bits kept
                return self.op(f"cvt.{_cvt_int(dst)}.{int_type(src)}", dcls, value) if dbits == 8 else value
            return value
        if dbits > sbits:
            # widening: extend by the source's signedness
            return self.op(f"cvt.{'s' if src.signed else 'u'}{max(dbits, 16)}.{_cvt_int(src)}", dcls, value)
        # narrowing: truncate
        return self.op(f"cvt.u{max(dbits, 16)}.u{sbits}", dcls, value)

    def bool_to(self, pred: VReg, dst: S.Type):
        if isinstance(dst, S.FloatType):
            ft = float_type(dst)
            return self.op(f"selp.{ft}", reg_class(dst), ir.Imm(1.0, "." + ft), ir.Imm(0.0, "." + ft), pred)
        return self.bool_to_int(pred, dst)

    def bool_to_int(self, pred, dst: S.Type):
        if isinstance(pred, ir.Imm):
            return ir.Imm(int(bool(pred.value)))
        cls = reg_class(dst)
        width = {"rs": 16, "r": 32, "rd": 64}[cls]
        return self.op(f"selp.u{width}", cls, ir.Imm(1), ir.Imm(0), pred)

    # ---- calls -----------------------------------------------------------------------
    def gen_call(self, expr: A.Call, want_value: bool = True):
        callee = expr.callee
        if callee.builtin is not None:
            return self.gen_builtin(callee, expr, want_value)
        if callee.definition is None:
            raise self.unsupported(f"calling '{callee.name}', which has no definition", expr)
        if callee in self.inline_stack:
            raise self.unsupported(f"recursive call of '{callee.name}'", expr)
        return self.inline(callee, expr)

    def inline(self, callee: S.FunctionSymbol, expr: A.Call):
        args = [self.gen_expr(a) for a in expr.args]
        fdef = callee.definition
        for psym, value in zip(fdef.param_symbols, args):
            self.bind_initial(psym, value)
        ret_t = S.unqualified(callee.type.ret)
        items = fdef.body.items
        if items and isinstance(items[-1], A.ReturnStmt) and _count_returns(fdef.body) == 1:
            # One return, at the end: its value is the call's value, no register needed.
            self.inline_stack.append(callee)
            self.returns.append((None, None))
            try:
                for item in items[:-1]:
                    self.gen_stmt(item)
                value = items[-1].value
                result = self.gen_expr(value) if value is not None else None
            finally:
                self.returns.pop()
                self.inline_stack.pop()
            return None if isinstance(ret_t, S.VoidType) else result
        result = None
        if not isinstance(ret_t, S.VoidType):
            result = VarRef(self.new_reg(reg_class(ret_t)), ret_t, None)
            self.mutable.add(result.reg)
        done = self.make_label()
        self.returns.append((done, result))
        self.inline_stack.append(callee)
        try:
            self.gen_body(fdef.body)
        finally:
            self.inline_stack.pop()
            self.returns.pop()
        self.place(done)
        return result.reg if result is not None else None

    def gen_builtin(self, callee: S.FunctionSymbol, expr: A.Call, want_value: bool):
        name = callee.builtin
        t = callee.type.ret
        handler = BUILTINS.get(name)
        if handler is None:
            raise self.unsupported(f"the builtin function '{callee.name}' in device code", expr)
        return handler(self, expr, t, want_value)


# ---- builtin functions ------------------------------------------------------------------

def _unary_builtin(opcode_for):
    def gen(cg: FunctionCodegen, expr: A.Call, t: S.Type, want_value: bool):
        value = cg.gen_expr(expr.args[0])
        return cg.op(opcode_for(t), reg_class(t), value)
    return gen


def _binary_builtin(opcode_for):
    def gen(cg: FunctionCodegen, expr: A.Call, t: S.Type, want_value: bool):
        a = cg.gen_expr(expr.args[0])
        b = cg.gen_expr(expr.args[1])
        return cg.op(opcode_for(t), reg_class(t), a, b)
    return gen


def _minmax(kind):
    def opcode(t):
        if isinstance(t, S.FloatType):
            return f"{kind}.{float_type(t)}"
        return f"{kind}.{int_type(t)}"
    return _binary_builtin(opcode)


def _gen_syncthreads(cg, expr, t, want_value):
    cg.emit("bar.sync", ir.Imm(0))
    cg.memo = {k: v for k, v in cg.memo.items() if not k[0].startswith("ld")}


def _gen_threadfence(cg, expr, t, want_value):
    cg.emit("membar.gl")


def _gen_fma(cg, expr, t, want_value):
    a, b, c = (cg.gen_expr(x) for x in expr.args)
    return cg.op(f"fma.rn.{float_type(t)}", reg_class(t), a, b, c)


def pointer_argument(cg: FunctionCodegen, expr: A.Expr) -> MemRef:
    """The memory a pointer argument designates, keeping its state space when the
    argument is `&x[i]` or an array (atomics on shared memory stay atom.shared)."""
    while isinstance(expr, A.ImplicitCast) and S.is_pointer(expr.type) and S.is_pointer(expr.operand.type):
        expr = expr.operand
    if isinstance(expr, A.Unary) and expr.op == "&":
        return cg.gen_lvalue(expr.operand)
    if isinstance(expr, A.ImplicitCast) and isinstance(expr.operand.type, S.ArrayType):
        return cg.gen_lvalue(expr.operand)
    return cg.pointer_target(cg.gen_expr(expr), expr.type)


def _gen_ldg(cg, expr, t, want_value):
    mem = pointer_argument(cg, expr.args[0])
    dst = cg.new_reg(reg_class(t))
    cg.emit(f"ld.global.nc.{memory_type(t)}", dst, ir.Address(mem.base, mem.offset))
    return dst


def _gen_expf_fast(cg, expr, t, want_value):
    x = cg.gen_expr(expr.args[0])
    scaled = cg.op("mul.f32", "f", x, ir.Imm(f32_bits(1.4426950408889634), ".f32"))
    return cg.op("ex2.approx.ftz.f32", "f", scaled)


def _gen_logf_fast(cg, expr, t, want_value):
    x = cg.gen_expr(expr.args[0])
    log2 = cg.op("lg2.approx.ftz.f32", "f", x)
    return cg.op("mul.f32", "f", log2, ir.Imm(f32_bits(0.6931471805599453), ".f32"))


_ATOMIC_OPS = {"atomicAdd": "add", "atomicExch": "exch", "atomicMin": "min", "atomicMax": "max",
               "atomicAnd": "and", "atomicOr": "or", "atomicXor": "xor", "atomicInc": "inc",
               "atomicDec": "dec", "atomicSub": "add"}


def _atomic_type(op: str, t: S.Type) -> str:
    if isinstance(t, S.FloatType):
        return float_type(t)
    if op in ("exch", "and", "or", "xor", "cas"):
        return f"b{bits(t)}"
    if op in ("min", "max"):
        return int_type(t)
    return f"u{bits(t)}"


def _gen_atomic(cg: FunctionCodegen, expr: A.Call, t: S.Type, want_value: bool):
    name = expr.callee.name
    op = _ATOMIC_OPS[name]
    mem = pointer_argument(cg, expr.args[0])
    value = cg.gen_expr(expr.args[1])
    if name == "atomicSub":
        if isinstance(value, ir.Imm):
            value = ir.Imm(S.convert_constant(-value.value, t))
        else:
            value = cg.op(f"neg.s{bits(t)}", value.cls, value)
    space = "" if mem.space == "generic" else f".{mem.space}"
    atype = _atomic_type(op, t)
    addr = ir.Address(mem.base, mem.offset)
    # NVVM writes atom even when the old value is unused (no red).
    dst = cg.new_reg(reg_class(t))
    cg.emit(f"atom{space}.{op}.{atype}", dst, addr, value)
    return dst


def _gen_atomic_cas(cg, expr, t, want_value):
    mem = pointer_argument(cg, expr.args[0])
    compare = cg.gen_expr(expr.args[1])
    value = cg.gen_expr(expr.args[2])
    space = "" if mem.space == "generic" else f".{mem.space}"
    dst = cg.new_reg(reg_class(t))
    cg.emit(f"atom{space}.cas.b{bits(t)}", dst, ir.Address(mem.base, mem.offset), compare, value)
    return dst


BUILTINS = {
    "__syncthreads": _gen_syncthreads,
    "__threadfence": _gen_threadfence,
    "sqrtf": _unary_builtin(lambda t: "sqrt.rn.f32"), "sqrt": _unary_builtin(lambda t: "sqrt.rn.f64"),
    "__fsqrt_rn": _unary_builtin(lambda t: "sqrt.rn.f32"),
    "rsqrtf": _unary_builtin(lambda t: "rsqrt.approx.f32"), "rsqrt": _unary_builtin(lambda t: "rsqrt.approx.f64"),
    "fabsf": _unary_builtin(lambda t: "abs.f32"), "fabs": _unary_builtin(lambda t: "abs.f64"),
    "floorf": _unary_builtin(lambda t: "cvt.rmi.f32.f32"), "floor": _unary_builtin(lambda t: "cvt.rmi.f64.f64"),
    "ceilf": _unary_builtin(lambda t: "cvt.rpi.f32.f32"), "ceil": _unary_builtin(lambda t: "cvt.rpi.f64.f64"),
    "truncf": _unary_builtin(lambda t: "cvt.rzi.f32.f32"), "trunc": _unary_builtin(lambda t: "cvt.rzi.f64.f64"),
    "__saturatef": _unary_builtin(lambda t: "cvt.sat.f32.f32"),
    "__frcp_rn": _unary_builtin(lambda t: "rcp.rn.f32"),
    "__sinf": _unary_builtin(lambda t: "sin.approx.ftz.f32"), "__cosf": _unary_builtin(lambda t: "cos.approx.ftz.f32"),
    "__expf": _gen_expf_fast, "__logf": _gen_logf_fast,
    "fminf": _binary_builtin(lambda t: "min.f32"), "fmaxf": _binary_builtin(lambda t: "max.f32"),
    "fmin": _binary_builtin(lambda t: "min.f64"), "fmax": _binary_builtin(lambda t: "max.f64"),
    "__fdividef": _binary_builtin(lambda t: "div.approx.f32"),
    "__fadd_rn": _binary_builtin(lambda t: "add.rn.f32"), "__fmul_rn": _binary_builtin(lambda t: "mul.rn.f32"),
    "__fdiv_rn": _binary_builtin(lambda t: "div.rn.f32"),
    "min": _minmax("min"), "max": _minmax("max"),
    "abs": _unary_builtin(lambda t: "abs.s32"), "labs": _unary_builtin(lambda t: "abs.s64"),
    "llabs": _unary_builtin(lambda t: "abs.s64"),
    "fmaf": _gen_fma, "fma": _gen_fma,
    "__popc": _unary_builtin(lambda t: "popc.b32"), "__clz": _unary_builtin(lambda t: "clz.b32"),
    "__brev": _unary_builtin(lambda t: "brev.b32"),
    "__mul24": _binary_builtin(lambda t: "mul24.lo.s32"), "__umul24": _binary_builtin(lambda t: "mul24.lo.u32"),
    "__ldg": _gen_ldg,
    "atomicCAS": _gen_atomic_cas,
}
for _name in _ATOMIC_OPS:
    BUILTINS[_name] = _gen_atomic


# ---- small helpers ----------------------------------------------------------------------

def _key(operand):
    if isinstance(operand, ir.Imm):
        return ("imm", operand.value, operand.type)
    if isinstance(operand, ir.Address):
        return ("addr", operand.base, operand.offset)
    return operand


def _defines(instr: ir.Instr) -> bool:
    """Does the instruction write its first operand?  (Stores, branches, barriers and
    reductions have an address, a label or nothing there, never a register.)"""
    ops = instr.operands
    return bool(ops) and ops[0].__class__ is VReg


def _mov_type(cls: str, t: S.Type) -> str:
    return {"p": "pred", "rs": "u16", "r": "u32", "rd": "u64", "f": "f32", "fd": "f64"}[cls]


def _sel_type(t: S.Type) -> str:
    if isinstance(t, S.FloatType):
        return float_type(t)
    return f"b{max(16, bits(t))}"


def _cvt_int(t: S.Type, register: bool = False) -> str:
    """An integer type as cvt names it: 8-bit types keep their width (cvt.s32.s8)."""
    if isinstance(t, S.EnumType):
        return "s32"
    if isinstance(t, S.PointerType):
        return "u64"
    size = t.size * 8
    if register and size == 8:
        size = 16
    return f"{'s' if t.signed else 'u'}{size}"


def _exact_reciprocal(value: float) -> bool:
    """Is 1/value exact (value a power of two, not denormal-producing)?"""
    if value == 0 or math.isinf(value) or math.isnan(value):
        return False
    mantissa, exponent = math.frexp(abs(value))
    return mantissa == 0.5 and -125 < exponent < 126


def _canonical_compare(cond: str, c: int, t: S.Type):
    """InstCombine's canonical form of `x cond c`: strict predicates (x <= c is
    x < c+1), and unsigned tests against the ends of the range become ==, != or
    constants.  Returns (cond, Imm) or ("true"/"false", None)."""
    signed = not isinstance(t, S.IntType) or t.signed
    width = 32 if isinstance(t, S.EnumType) else max(16, t.size * 8)
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    if cond == "le":
        if c >= hi:
            return "true", None
        cond, c = "lt", c + 1
    elif cond == "ge":
        if c <= lo:
            return "true", None
        cond, c = "gt", c - 1
    if cond == "lt" and c <= lo:
        return "false", None
    if cond == "gt" and c >= hi:
        return "false", None
    if not signed:
        if cond == "lt" and c == 1:
            cond, c = "eq", 0
        elif cond == "gt" and c == 0:
            cond, c = "ne", 0
    return cond, ir.Imm(c)


def _fold_compare(cond: str, a, b) -> bool:
    base = cond.rstrip("u") if cond not in ("neu",) else "ne"
    return {"lt": a < b, "gt": a > b, "le": a <= b, "ge": a >= b, "eq": a == b, "ne": a != b}[base]


def _split_constant_offset(index: A.Expr):
    """`e + c` / `e - c` with signed (no-overflow) arithmetic: (e, c), folding c into the
    address offset as LLVM does for `inbounds` GEPs."""
    node = index
    while isinstance(node, A.ImplicitCast) and S.is_integer(node.type) and S.is_integer(node.operand.type) \
            and node.type.size >= node.operand.type.size and node.operand.type.signed:
        node = node.operand
    constant = S.constant_value(node)
    if constant is not None:
        return None, constant
    if isinstance(node, A.Binary) and node.op in ("+", "-") and isinstance(node.type, S.IntType) \
            and node.type.signed:
        c = S.constant_value(node.rhs)
        if c is not None:
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


def _is_speculatable(expr: A.Expr) -> bool:
    """Can `expr` be evaluated even when C would not (no side effects, no memory access)?"""
    if isinstance(expr, (A.IntLit, A.FloatLit, A.CharLit, A.BoolConst, A.SizeofType, A.SizeofExpr)):
        return True
    if isinstance(expr, A.Ident):
        return isinstance(expr.symbol, (S.VarSymbol, S.EnumConstSymbol)) and \
            not isinstance(getattr(expr.symbol, "type", None), S.ArrayType)
    if isinstance(expr, (A.ImplicitCast, A.Cast)):
        return _is_speculatable(expr.operand)
    if isinstance(expr, A.Unary):
        return expr.op in ("-", "+", "~", "!") and _is_speculatable(expr.operand)
    if isinstance(expr, A.Binary):
        if expr.op in ("/", "%") and S.is_integer(expr.type):
            return False  # may trap on zero
        return _is_speculatable(expr.lhs) and _is_speculatable(expr.rhs)
    if isinstance(expr, A.Member):
        return isinstance(expr.base, A.Ident) and getattr(expr.base.symbol, "kind", "") == "builtin"
    if isinstance(expr, A.Conditional):
        return all(_is_speculatable(e) for e in (expr.cond, expr.then, expr.else_))
    return False


def _simple_jump(stmt, cg: FunctionCodegen) -> str | None:
    """The target of a statement that is only `return;`, `break;` or `continue;`."""
    while isinstance(stmt, A.CompoundStmt) and len(stmt.items) == 1:
        stmt = stmt.items[0]
    if isinstance(stmt, A.ReturnStmt) and stmt.value is None:
        return cg.returns[-1][0] if cg.returns else cg.exit_label
    if isinstance(stmt, A.BreakStmt) and cg.loops:
        return cg.loops[-1][0]
    if isinstance(stmt, A.ContinueStmt) and cg.loops:
        return next((c for _, c in reversed(cg.loops) if c is not None), None)
    return None


def _expr_key(expr: A.Expr):
    """A structural key for simple expressions (names, constants, conversions of them)."""
    while isinstance(expr, A.ImplicitCast):
        expr = expr.operand
    if isinstance(expr, A.Ident):
        return ("id", id(expr.symbol))
    if isinstance(expr, (A.IntLit, A.CharLit)):
        return ("int", expr.value)
    if isinstance(expr, A.FloatLit):
        return ("float", expr.value)
    return None


def _count_returns(node) -> int:
    if isinstance(node, A.ReturnStmt):
        return 1
    if isinstance(node, A.CompoundStmt):
        return sum(_count_returns(i) for i in node.items)
    if isinstance(node, A.IfStmt):
        return _count_returns(node.then) + (_count_returns(node.else_) if node.else_ else 0)
    if isinstance(node, (A.ForStmt, A.WhileStmt, A.DoStmt)):
        return _count_returns(node.body)
    if isinstance(node, (A.SwitchStmt, A.CaseStmt, A.DefaultStmt)):
        return _count_returns(node.body)
    return 0


def _describe_stmt(stmt) -> str:
    return {A.CaseStmt: "'case' outside a switch", A.DefaultStmt: "'default' outside a switch",
            A.AsmStmt: "inline asm"}.get(type(stmt), type(stmt).__name__)


def _describe_expr(expr) -> str:
    if isinstance(expr, A.StringLit):
        return "string literals in device code"
    if isinstance(expr, A.Launch):
        return "kernel launches in device code"
    return f"{type(expr).__name__} expressions"


# ---- passes over the blocks --------------------------------------------------------------

def instr_defs(instr: ir.Instr) -> list:
    return [instr.operands[0]] if _defines(instr) else []


def instr_uses(instr: ir.Instr) -> list:
    ops = instr.operands
    out = []
    first = True
    for op in ops:
        cls = op.__class__
        if cls is VReg:
            if not first:
                out.append(op)
        elif cls is ir.Address:
            if op.base.__class__ is VReg:
                out.append(op.base)
        elif cls is ir.Vector:
            out.extend(e for e in op.elems if e.__class__ is VReg)
        first = False
    if instr.guard is not None:
        out.append(instr.guard)
    return out


def is_pure(instr: ir.Instr) -> bool:
    opcode = instr.opcode
    base = base_of(opcode)
    if base == "ld":
        return ".volatile" not in opcode and _defines(instr)
    return base in _PURE_BASES and _defines(instr)


def eliminate_dead_code(cg: FunctionCodegen, func: ir.Function) -> None:
    """Drop pure instructions whose results nobody reads (and then what only they read).
    Requires nothing; keeps every store, branch, barrier and atomic."""
    counts = _use_counts(cg)
    dead: set = set()
    work = [i for b in cg.blocks for i in b.instrs if is_pure(i) and counts.get(i.operands[0], 0) == 0]
    defs: dict = {}
    for block in cg.blocks:
        for instr in block.instrs:
            if _defines(instr):
                defs.setdefault(instr.operands[0], []).append(instr)
    while work:
        instr = work.pop()
        if id(instr) in dead:
            continue
        dead.add(id(instr))
        for reg in instr_uses(instr):
            counts[reg] -= 1
            if counts[reg] == 0:
                for d in defs.get(reg, ()):
                    if is_pure(d) and id(d) not in dead:
                        work.append(d)
    if dead:
        for block in cg.blocks:
            block.instrs = [i for i in block.instrs if id(i) not in dead]


def _use_counts(cg: FunctionCodegen) -> dict:
    counts: dict = {}
    for block in cg.blocks:
        for instr in block.instrs:
            for u in instr_uses(instr):
                counts[u] = counts.get(u, 0) + 1
    return counts


def fuse_multiply_add(cg: FunctionCodegen, func: ir.Function) -> None:
    """mul + add -> mad.lo / fma.rn when the product has no other use, as LLVM's DAG
    combiner does (CUDA compiles with -fmad=true).  The fused instruction takes the add's
    place.  Requires single-definition temporaries for the product."""
    if not cg.multiplies:
        return
    counts = _use_counts(cg)
    for block in cg.blocks:
        defs_at = {}
        instrs = block.instrs
        for pos, instr in enumerate(instrs):
            if base_of(instr.opcode) == "add" and len(instr.operands) == 3 and instr.guard is None:
                for k in (1, 2):
                    prod = instr.operands[k]
                    if not isinstance(prod, VReg) or counts.get(prod) != 1 or prod in cg.mutable:
                        continue
                    mpos = defs_at.get(prod)
                    if mpos is None:
                        continue
                    mul = instrs[mpos]
                    fused = _fused_opcode(mul.opcode, instr.opcode)
                    if fused is None or _written_between(instrs, mpos, pos, mul.operands[1:]):
                        continue
                    other = instr.operands[3 - k]
                    instrs[pos] = ir.Instr(fused, [instr.operands[0], mul.operands[1], mul.operands[2], other])
                    instrs[mpos] = None
                    break
            if instrs[pos] is not None and _defines(instrs[pos]):
                defs_at[instrs[pos].operands[0]] = pos
        block.instrs = [i for i in instrs if i is not None]


def _fused_opcode(mul: str, add: str) -> str | None:
    if mul == "mul.f32" and add == "add.f32":
        return "fma.rn.f32"
    if mul == "mul.f64" and add == "add.f64":
        return "fma.rn.f64"
    for width in ("32", "64", "16"):
        if mul == f"mul.lo.s{width}" and add == f"add.s{width}":
            return f"mad.lo.s{width}"
    return None


def _written_between(instrs, start: int, end: int, operands) -> bool:
    regs = {op for op in operands if isinstance(op, VReg)}
    for instr in instrs[start + 1:end]:
        if instr is not None and _defines(instr) and instr.operands[0] in regs:
            return True
    return False


def _memory_users(block: Block, reg: VReg) -> int:
    """How many loads/stores in the block address memory through reg (directly or through
    one add.s64 of it)."""
    derived = {reg}
    for instr in block.instrs:
        if instr.opcode == "add.s64" and any(op in derived for op in instr.operands[1:]):
            derived.add(instr.operands[0])
    count = 0
    for instr in block.instrs:
        if base_of(instr.opcode) in ("ld", "st", "atom", "red"):
            for op in instr.operands:
                if isinstance(op, ir.Address) and op.base in derived:
                    count += 1
    return count


def place_cvta(cg: FunctionCodegen, func: ir.Function) -> None:
    """Merge the cvta.to.global conversions of each kernel pointer parameter to one per
    block and put them where NVVM does (measured against nvcc 13.5, docs/frontend.md):
    in the entry block, at its top, after the parameter loads, in reverse order of first
    use; in other blocks the same when some parameter is used for more than one memory
    access there, else each right before its first use."""
    for bindex, block in enumerate(cg.blocks):
        first: dict = {}   # param reg -> the cvta kept
        rename: dict = {}
        order: list = []
        for instr in block.instrs:
            if instr.opcode == "cvta.to.global.u64" and instr.operands[1] in cg.kernel_pointers:
                src = instr.operands[1]
                if src in first:
                    rename[instr.operands[0]] = first[src].operands[0]
                else:
                    first[src] = instr
                    order.append(instr)
        if not order:
            continue
        if rename:
            block.instrs = [i for i in block.instrs if not (i.opcode == "cvta.to.global.u64"
                                                          and i.operands[0] in rename)]
            for instr in block.instrs:
                _rename_operands(instr, rename)
                for other in cg.blocks:
                    pass
            for other in cg.blocks:
                for instr in other.instrs:
                    _rename_operands(instr, rename)
        hoist = bindex == 0 or any(_memory_users(block, i.operands[0]) > 1 for i in order)
        if not hoist:
            continue
        block.instrs = [i for i in block.instrs if i not in order]
        at = 0
        if bindex == 0:
            while at < len(block.instrs) and block.instrs[at].opcode.startswith("ld.param"):
                at += 1
        block.instrs[at:at] = list(reversed(order))


def _rename_operands(instr: ir.Instr, rename: dict) -> None:
    ops = instr.operands
    for k, op in enumerate(ops):
        if isinstance(op, VReg) and op in rename:
            ops[k] = rename[op]
        elif isinstance(op, ir.Address) and op.base in rename:
            ops[k] = ir.Address(rename[op.base], op.offset)
    if instr.guard is not None and instr.guard in rename:
        instr.guard = rename[instr.guard]


def sink_loads(cg: FunctionCodegen, func: ir.Function) -> None:
    """Outside the entry block, loads that feed one instruction together are moved to
    just before it, in reverse source order: where nvcc 13.5 puts them (vadd loads b[i],
    then a[i], then adds; a lone load stays where it is).  The entry block keeps source
    order, as nvcc's does.  Requires: no store between a load and the moved-to place."""
    if cg.loads < 2:
        return
    for block in cg.blocks[1:]:
        instrs = block.instrs
        if sum(1 for i in instrs if i.opcode.startswith("ld.") and ".param" not in i.opcode) < 2:
            continue
        pos = 0
        while pos < len(instrs):
            user = instrs[pos]
            loads = []
            for reg in instr_uses(user):
                k = _load_defining(instrs, pos, reg)
                if k is not None and instrs[k] not in loads:
                    loads.append(instrs[k])
            if len(loads) >= 2:
                for load in loads:
                    instrs.remove(load)
                pos = instrs.index(user)
                loads.sort(key=lambda ld: -cg.load_order[id(ld)])
                instrs[pos:pos] = loads
                pos += len(loads)
            pos += 1


def _load_defining(instrs: list, user_pos: int, reg) -> int | None:
    """The position of the load that defines reg, if the instruction at user_pos is the
    first to read it and nothing in between may write memory or reg."""
    for k in range(user_pos - 1, -1, -1):
        instr = instrs[k]
        if base_of(instr.opcode) in ("st", "atom", "red", "bar", "membar", "call"):
            return None
        if reg in instr_uses(instr):
            return None
        if _defines(instr) and instr.operands[0] is reg:
            if base_of(instr.opcode) == "ld" and ".param" not in instr.opcode and ".volatile" not in instr.opcode:
                return k
            return None
    return None


_EXTENSIONS = {"cvt.u32.u8": "u8", "cvt.s32.s8": "s8", "cvt.u32.u16": "u16", "cvt.s32.s16": "s16"}


def fold_extending_loads(cg: FunctionCodegen, func: ir.Function) -> None:
    """ld.u8 %rs + cvt.u32.u8 %r, %rs -> ld.u8 %r (a zero- or sign-extending load into a
    32-bit register), when the 16-bit value has no other use: LLVM's extload."""
    if not cg.narrow_loads:
        return
    counts = _use_counts(cg)
    for block in cg.blocks:
        loads = {}
        out = []
        for instr in block.instrs:
            if base_of(instr.opcode) == "ld" and _defines(instr) and instr.operands[0].cls == "rs":
                loads[instr.operands[0]] = instr
            ext = _EXTENSIONS.get(instr.opcode)
            if ext is not None:
                src = instr.operands[1]
                load = loads.get(src)
                if load is not None and counts.get(src) == 1 and load.parts[-1][1:] == ext[1:]:
                    load.opcode = ".".join(load.parts[:-1] + [ext])
                    load.operands[0] = instr.operands[0]
                    continue
            out.append(instr)
        block.instrs = out


def layout_blocks(cg: FunctionCodegen, func: ir.Function) -> None:
    """Drop empty blocks and branches to the next block; name branch targets $L__BB<f>_<n>
    (n: the block's position, counting blocks as LLVM does)."""
    aliases = dict(cg.aliases)

    def resolve(label):
        seen = set()
        while label in aliases and label not in seen:
            seen.add(label)
            label = aliases[label]
        return label

    blocks = cg.blocks
    changed = True
    while changed:
        changed = False
        # an empty block is an alias of the next one
        kept = []
        for k, block in enumerate(blocks):
            if not block.instrs and k + 1 < len(blocks):
                aliases[block.label] = blocks[k + 1].label
                changed = True
                continue
            kept.append(block)
        blocks = kept
        # a jump to the next block falls through
        for k, block in enumerate(blocks[:-1]):
            term = block.terminator()
            if term is not None and base_of(term.opcode) == "bra" and term.guard is None and \
                    resolve(term.operands[0].name) == resolve(blocks[k + 1].label):
                block.instrs.pop()
                changed = True
        # unreachable blocks (after an unconditional jump, never targeted)
        targets = set()
        for block in blocks:
            for instr in block.instrs:
                if base_of(instr.opcode) == "bra":
                    targets.add(resolve(instr.operands[0].name))
        kept = [blocks[0]]
        for k, block in enumerate(blocks[1:], 1):
            prev = kept[-1].terminator()
            falls_in = prev is None or (base_of(prev.opcode) == "bra" and prev.guard is not None)
            if not falls_in and resolve(block.label) not in targets and block.label not in targets:
                changed = True
                continue
            kept.append(block)
        blocks = kept
        # a block reached only by falling through is part of the block before it
        targets = {resolve(instr.operands[0].name) for block in blocks for instr in block.instrs
                   if base_of(instr.opcode) == "bra"}
        merged = [blocks[0]]
        for block in blocks[1:]:
            prev = merged[-1]
            if prev.terminator() is None and resolve(block.label) not in targets:
                prev.instrs.extend(block.instrs)
                aliases[block.label] = prev.label
                changed = True
                continue
            merged.append(block)
        blocks = merged
    cg.blocks = blocks
    names = {}
    for n, block in enumerate(blocks):
        names[block.label] = f"$L__BB{cg.index}_{n}"
    targets = set()
    for block in blocks:
        for instr in block.instrs:
            if base_of(instr.opcode) == "bra":
                target = names[resolve(instr.operands[0].name)]
                instr.operands[0] = ir.Symbol(target)
                targets.add(target)
    cg.block_names = names
    cg.branch_targets = targets


def number_registers(cg: FunctionCodegen, func: ir.Function) -> None:
    """Name the virtual registers as NVVM does; write func.body and func.regs.

    Per class, from 1: values live across blocks (defined in one block and used in
    another, or defined in several), in order of definition; then kernel parameters live
    across blocks, in parameter order; then all other values in order of definition."""
    def_block: dict = {}
    cross: set = set()
    order: list = []
    for bindex, block in enumerate(cg.blocks):
        for instr in block.instrs:
            for reg in instr_defs(instr):
                if reg not in def_block:
                    def_block[reg] = bindex
                    order.append(reg)
                elif def_block[reg] != bindex:
                    cross.add(reg)
            for reg in instr_uses(instr):
                if reg not in def_block:  # read before any write (an undefined value)
                    def_block[reg] = bindex
                    order.append(reg)
                elif def_block[reg] != bindex:
                    cross.add(reg)
    params = sorted((r for r in order if r in cross and r in cg.param_loads), key=lambda r: cg.param_loads[r])
    first = [r for r in order if r in cross and r not in cg.param_loads]
    rest = [r for r in order if r not in cross]
    counters = {cls: 0 for cls in REG_DECL}
    names: dict = {}
    for reg in first + params + rest:
        counters[reg.cls] += 1
        names[reg] = ir.Reg(f"{REG_DECL[reg.cls][1]}{counters[reg.cls]}")
    for block in cg.blocks:
        for instr in block.instrs:
            ops = instr.operands
            for k, op in enumerate(ops):
                if isinstance(op, VReg):
                    ops[k] = names[op]
                elif isinstance(op, ir.Address) and isinstance(op.base, VReg):
                    ops[k] = ir.Address(names[op.base], op.offset)
                elif isinstance(op, ir.Vector):
                    ops[k] = ir.Vector(tuple(names.get(e, e) for e in op.elems))
            if instr.guard is not None:
                instr.guard = names[instr.guard]
    func.regs = [ir.RegDecl(REG_DECL[cls][0], REG_DECL[cls][1], counters[cls] + 1)
                 for cls in REG_DECL_ORDER if counters[cls]]
    body: list = []
    for block in cg.blocks:
        name = cg.block_names[block.label]
        if name in cg.branch_targets:
            body.append(ir.Label(name))
        body.extend(block.instrs)
    func.body = body


# The pipeline after instruction emission, in order (names as --print-after would use).
PASSES = [
    ("eliminate_dead_code", eliminate_dead_code),
    ("place_cvta", place_cvta),
    ("sink_loads", sink_loads),
    ("fuse_multiply_add", fuse_multiply_add),
    ("fold_extending_loads", fold_extending_loads),
    ("layout_blocks", layout_blocks),
    ("number_registers", number_registers),
]


def run_passes(cg: FunctionCodegen, func: ir.Function) -> None:
    for _name, pass_ in PASSES:
        pass_(cg, func)


# ---- the module --------------------------------------------------------------------------

class ModuleCodegen:
    def __init__(self, analyzer: S.Analyzer, filename: str, arch: str, ptx_version: str):
        self.analyzer = analyzer
        self.filename = filename
        self.arch = arch
        self.ptx_version = ptx_version
        self.extern_shared: dict[str, ir.Variable] = {}
        self.diagnostics: list[Diagnostic] = []

    def generate(self) -> ir.Module:
        module = ir.Module(version=self.ptx_version, target=self.arch, address_size=64)
        index = 0
        for fsym in self.analyzer.functions:
            if not fsym.is_kernel or fsym.definition is None:
                continue
            try:
                func = FunctionCodegen(self, fsym, index).generate()
            except Unsupported as exc:
                loc = exc.loc or fsym.loc
                line, col = loc if loc and loc[0] > 0 else fsym.loc
                self.diagnostics.append(Diagnostic(f"unsupported feature: {exc.feature}",
                                                   SourceLoc(self.filename, line, col)))
                continue
            except Exception as exc:  # a bug in ptxc, not in the user's code: say so plainly
                if os.environ.get("PTXC_TRACEBACK"):
                    raise
                self.diagnostics.append(Diagnostic(
                    f"internal error in ptxc's code generator ({type(exc).__name__}: {exc}); "
                    "please report it (PTXC_TRACEBACK=1 shows the traceback)",
                    SourceLoc(self.filename, *fsym.loc)))
                continue
            module.functions.append(func)
            index += 1
        module.globals = list(self.extern_shared.values())
        return module


def generate(analyzer: S.Analyzer, filename: str, arch: str = "sm_89", ptx_version: str = "9.5",
             source: str | None = None) -> ir.Module:
    gen = ModuleCodegen(analyzer, filename, arch, ptx_version)
    module = gen.generate()
    if gen.diagnostics:
        raise CompileError(gen.diagnostics, source)
    return module
