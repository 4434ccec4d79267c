"""Inline calls of `.func` subroutines: a direct call becomes a copy of the callee.

ptxas keeps every `.func` a subroutine (`CALL.REL.NOINC` to it with arguments in R4,
R5, ... and `RET.REL.NODEC` back).  ptxc inlines in the PTX, before instruction
selection, all but the calls that stay real calls (below); those go through
lower_calls' stack ABI.  Per inlined call site:

- each `.param` buffer slot of the call (the caller's `st.param [param0+8]` of an
  argument, its `ld.param [retval0+0]` of a result) becomes one register, and the
  `st.param`/`ld.param` on both sides become `mov`s (a `cvt` where a byte parameter
  is widened or a wider register is stored: `ld.param.s8 %r1` sign-extends);
  vector forms (`st.param.v2.f32 [retval0+0], {..}`) move element by element;
- the callee's registers get a tag no name of the caller starts with (`%r1` ->
  `%__i2_r1`), and so do its labels and call buffers: two calls of one function
  are two copies with distinct names;
- `ret` becomes a branch to the label after the copy (a final `ret` falls through);
  labels before and after the copy keep it a block of its own, as the CALL boundary
  does in nvcc's code: fuse_ffma contracts within a block only, so a callee's
  multiply and the caller's add of its result stay rounded apart as there;
- the callee's `.local` and `.shared` variables join the caller once per callee
  (a `.shared` variable is one per CTA however often its function is called; two
  inlined activations of one callee are never live together, so they share a
  local depot); a name the caller already uses gets a suffix.

A callee is flattened (its own calls inlined) once, then copied into each call site.

Expects: a PTX function as the parser or the frontend builds it (scopes flattened,
call sequences' `.param` buffers in `call_params`); the module's functions, to find
the callees.  Guarantees: the only calls left are real calls (lower_calls.real_call: of a
recursive `.func`, of an outlined one (lower_calls.outlined_functions: at least
OUTLINE_MIN_INSTRS long and called from two sites or more, as libdevice's slow paths;
ptxas never inlines, ptxc keeps these few as subroutines so a kernel does not carry a
copy per call), or indirect through a register), with their `st.param`/`ld.param`;
every other call buffer is gone; the input function and the callees are not
modified; a function with real calls or a function's address carries the module's
functions as `module_functions` (select_instrs lowers the calls with them).  A call
it cannot inline nor keep (a callee only declared here, `.extern`) is a CompileError
at the call, naming why (lower_calls.why_not_inlined).
"""
from __future__ import annotations

import re
from dataclasses import replace

from ..diagnostics import CompileError, Diagnostic, SourceLoc
from ..ptx import ir as ptx
from .lower_calls import UnsupportedCall, kept_calls, real_call, recursive_functions, why_not_inlined
from .select_instrs import Unsupported

_TAG = re.compile(r"%?__i(\d+)_")


def inline_calls(func: ptx.Function, functions=(), filename: str = "<ptx>", outline: bool = True) -> ptx.Function:
    """`func` with every call of a defined, non-recursive `.func` of `functions` inlined,
    but for the long ones called from several sites (lower_calls.outlined_functions)
    unless `outline` is False."""
    if not any(i.base == "call" for i in func.instrs()) and not _takes_function_address(func, functions):
        return func
    inliner = Inliner(functions, outline)
    problems = []
    try:
        flat = inliner.flatten(func)
    except InlineError as exc:
        problems.append(_diagnostic(exc.instr, exc.message(), filename))
        raise CompileError(problems) from None
    for instr in flat.instrs():
        if instr.base == "call" and not real_call(instr, inliner.functions, inliner.recursive):
            problems.append(_diagnostic(instr, UnsupportedCall(why_not_inlined(instr, inliner.functions,
                                                                               inliner.recursive)).message(),
                                        filename))
    if problems:
        raise CompileError(problems)
    if flat is func:
        flat = replace(func)
    flat.module_functions = inliner.functions   # for select_instrs' real calls (lower_calls)
    return flat


def _takes_function_address(func: ptx.Function, functions) -> bool:
    names = {f.name for f in functions if not f.entry}
    return bool(names) and any(isinstance(op, ptx.Symbol) and op.name in names
                               for i in func.instrs() for op in i.operands)


class InlineError(Unsupported):
    """A call sequence inline_calls cannot rewrite, at the instruction `instr`."""

    def __init__(self, text: str, instr: ptx.Instr):
        super().__init__(text)
        self.instr = instr

    def message(self) -> str:
        return f"unsupported: {self}"


def _diagnostic(instr: ptx.Instr, message: str, filename: str) -> Diagnostic:
    line, col = instr.loc or (0, 0)
    return Diagnostic(message, SourceLoc(filename, line, col))


def functions_by_name(functions) -> dict[str, ptx.Function]:
    """Each name's definition, or its declaration when the module has no body for it."""
    by_name = {}
    for f in functions:
        if f.defined or f.name not in by_name:
            by_name[f.name] = f
    return by_name


class Inliner:
    def __init__(self, functions, outline: bool = True):
        self.functions = functions_by_name(functions)
        # the callees whose calls stay calls: recursive ones, and outlined ones
        self.recursive = kept_calls(self.functions) if outline else recursive_functions(self.functions)
        self.flat: dict[str, ptx.Function] = {}

    def inlinable(self, instr: ptx.Instr) -> ptx.Function | None:
        """The callee a direct call would copy, or None where the call stays."""
        callee = ptx.call_site(instr).callee
        if not isinstance(callee, ptx.Symbol):
            return None
        f = self.functions.get(callee.name)
        if f is None or f.entry or not f.defined or f.name in self.recursive:
            return None
        return f

    def flattened(self, callee: ptx.Function) -> ptx.Function:
        if callee.name not in self.flat:
            self.flat[callee.name] = self.flatten(callee)
        return self.flat[callee.name]

    def flatten(self, func: ptx.Function) -> ptx.Function:
        """A copy of `func` whose inlinable calls are inlined (callees flattened first)."""
        calls = [i for i in func.instrs() if i.base == "call" and self.inlinable(i)]
        if not calls:
            return func
        return CallerRewrite(self, func, calls).run()


class CallerRewrite:
    """One function being rebuilt with its calls inlined."""

    def __init__(self, inliner: Inliner, func: ptx.Function, calls: list[ptx.Instr]):
        self.inliner = inliner
        self.func = func
        self.out = replace(func, regs=list(func.regs), vars=list(func.vars), prototypes=list(func.prototypes),
                           body=[])
        buffers = {s.name for i in calls for s in (*ptx.call_site(i).args, *ptx.call_site(i).returns)}
        self.buffers = buffers                          # the call buffers that become registers
        self.out.call_params = [p for p in func.call_params if p.name not in buffers]
        self.slots: dict[tuple[str, int], tuple[ptx.Reg, int]] = {}   # (buffer, offset) -> (register, size)
        self.slot_ranges: dict[str, ptx.RegDecl] = {}
        self.next_tag = 1 + max((int(m.group(1)) for name in _names(func) for m in [_TAG.match(name)] if m),
                                default=-1)
        self.slot_tag = self.new_tag()
        self.var_names: dict[tuple[str, str], str] = {}   # (callee, its variable) -> name here

    def new_tag(self) -> str:
        tag = f"__i{self.next_tag}_"
        self.next_tag += 1
        return tag

    def run(self) -> ptx.Function:
        for item in self.func.body:
            if isinstance(item, ptx.Label):
                self.out.body.append(item)
            elif item.base == "call" and self.inliner.inlinable(item):
                self.inline(item)
            elif item.base in ("st", "ld") and item.has("param") and self.call_buffer(item) in self.buffers:
                self.caller_param_access(item)
            else:
                self.out.body.append(item)
        self.out.regs += self.slot_ranges.values()
        return self.out

    # ---- .param buffer slots -------------------------------------------------------------
    def call_buffer(self, item: ptx.Instr) -> str | None:
        addr = item.operands[0] if item.base == "st" else item.operands[1]
        return addr.base.name if isinstance(addr, ptx.Address) and isinstance(addr.base, ptx.Symbol) else None

    def slot(self, buffer: str, offset: int, size: int, instr: ptx.Instr) -> ptx.Reg:
        """The register standing for bytes [offset, offset+size) of a call buffer."""
        key = (buffer, offset)
        if key in self.slots:
            reg, known = self.slots[key]
            if known != size:
                raise InlineError(f"calls to .func ({size}-byte access to bytes of '{buffer}' "
                                  f"accessed as {known} bytes elsewhere)", instr)
            return reg
        type_ = f".b{8 * max(size, 2)}"       # a byte lives in a 16-bit register
        decl = self.slot_ranges.setdefault(type_, ptx.RegDecl(type_, f"%{self.slot_tag}{type_[1:]}_", 0))
        reg = ptx.Reg(f"{decl.prefix}{decl.count}")
        decl.count += 1
        self.slots[key] = (reg, size)
        return reg

    def caller_param_access(self, item: ptx.Instr) -> None:
        """The caller's side of a call: arguments stored, results loaded."""
        self.out.body += param_moves(item, self.func, self.slot_of(self.call_buffer(item), item))

    def slot_of(self, buffer: str, instr: ptx.Instr):
        return lambda offset, size: self.slot(buffer, offset, size, instr)

    # ---- one call site -------------------------------------------------------------------
    def inline(self, call: ptx.Instr) -> None:
        site = ptx.call_site(call)
        callee = self.inliner.flattened(self.inliner.inlinable(call))
        if len(site.args) != len(callee.params) or len(site.returns) != len(callee.return_params):
            raise InlineError(f"calls to .func ('{callee.name}' takes {len(callee.params)} parameters and "
                              f"{len(callee.return_params)} results; the call passes {len(site.args)} and "
                              f"{len(site.returns)})", call)
        tag = self.new_tag()
        copy = CalleeCopy(self, callee, tag, site)
        start, done = copy.label(f"{tag}start"), copy.label(f"{tag}done")
        skip = [ptx.Instr("bra", [ptx.Symbol(done)], call.guard, not call.guard_negated, call.loc)] \
            if call.guard is not None else []
        # The body is a block of its own, as a CALL keeps it apart: fuse_ffma contracts
        # a multiply and an add only within a block, so a product passed in or returned
        # is rounded as in nvcc's code
        self.out.body += skip + [ptx.Label(start, call.loc)] + copy.body(done, call) + [ptx.Label(done, call.loc)]
        self.out.regs += [replace(d, prefix=copy.reg_name(d.prefix)) for d in callee.regs]
        self.out.call_params += [replace(p, name=copy.symbols[p.name]) for p in callee.call_params]
        self.out.prototypes += [replace(p, name=copy.symbols[p.name]) for p in callee.prototypes]

    def variable(self, callee: ptx.Function, var: ptx.Variable, call: ptx.Instr) -> str:
        """The caller's name for a callee's `.local`/`.shared` variable, added once per callee."""
        key = (callee.name, var.name)
        if key not in self.var_names:
            if var.state not in (".local", ".shared"):
                raise InlineError(f"calls to .func ('{callee.name}' declares a {var.state} variable "
                                  f"'{var.name}')", call)
            taken = {v.name for v in self.out.vars} | {p.name for p in self.out.call_params} | \
                _symbols_used(self.func)
            name, k = var.name, 0
            while name in taken:
                k += 1
                name = f"{var.name}_{k}"
            self.var_names[key] = name
            self.out.vars.append(replace(var, name=name))
        return self.var_names[key]


class CalleeCopy:
    """The body of one callee renamed for one call site."""

    def __init__(self, caller: CallerRewrite, callee: ptx.Function, tag: str, site: ptx.CallSite):
        self.caller, self.callee, self.tag = caller, callee, tag
        self.params = {p.name: arg.name for p, arg in zip(callee.params, site.args)}
        self.returns = {p.name: ret.name for p, ret in zip(callee.return_params, site.returns)}
        self.labels = {item.name for item in callee.body if isinstance(item, ptx.Label)}
        self.symbols = {name: tag + name for name in (*self.labels, *(p.name for p in callee.call_params),
                                                      *(p.name for p in callee.prototypes))}

    def label(self, name: str) -> str:
        while name in self.symbols.values():
            name += "_"
        return name

    def reg_name(self, name: str) -> str:
        return "%" + self.tag + name.lstrip("%")

    def operand(self, op):
        if isinstance(op, ptx.Reg):
            return ptx.Reg(self.reg_name(op.name))
        if isinstance(op, ptx.Symbol):
            return ptx.Symbol(self.symbols.get(op.name, op.name))
        if isinstance(op, ptx.NotReg):
            return ptx.NotReg(self.operand(op.reg))
        if isinstance(op, ptx.RegPair):
            return ptx.RegPair(self.operand(op.first), self.operand(op.second))
        if isinstance(op, ptx.Address):
            return replace(op, base=self.operand(op.base))
        if isinstance(op, (ptx.Vector, ptx.OperandList)):
            return replace(op, elems=tuple(self.operand(e) for e in op.elems))
        return op

    def body(self, done: str, call: ptx.Instr) -> list:
        for var in self.callee.vars:
            self.symbols[var.name] = self.caller.variable(self.callee, var, call)
        items = self.callee.body
        last = len(items) - 1
        while last >= 0 and isinstance(items[last], ptx.Label):
            last -= 1
        out = []
        for k, item in enumerate(items):
            if isinstance(item, ptx.Label):
                out.append(ptx.Label(self.symbols[item.name], item.loc))
            elif item.base == "ret":
                if k != last or item.guard is not None:
                    out.append(self.renamed(replace(item, opcode="bra", operands=[ptx.Symbol(done)])))
            elif item.base in ("ld", "st") and item.has("param"):
                out += self.param_access(item)
            else:
                self.check_no_param_use(item)
                out.append(self.renamed(item))
        return out

    def renamed(self, item: ptx.Instr) -> ptx.Instr:
        guard = self.operand(item.guard) if item.guard is not None else None
        return replace(item, operands=[self.operand(op) for op in item.operands], guard=guard)

    def param_access(self, item: ptx.Instr) -> list:
        """The callee's side: `ld.param` of a parameter, `st.param` of a result; a
        call buffer of a call left in the callee is only renamed."""
        addr = item.operands[1] if item.base == "ld" else item.operands[0]
        names = self.params if item.base == "ld" else self.returns
        buffer = names.get(addr.base.name) if isinstance(addr.base, ptx.Symbol) else None
        if buffer is None:
            return [self.renamed(item)]
        guard = self.operand(item.guard) if item.guard is not None else None
        moves = param_moves(item, self.callee, self.caller.slot_of(buffer, item), self.operand)
        return [replace(m, guard=guard) for m in moves]

    def check_no_param_use(self, item: ptx.Instr) -> None:
        """A parameter used other than by ld.param (its address taken) has no register form."""
        names = set(self.params) | set(self.returns)
        for op in item.operands:
            base = op.base if isinstance(op, ptx.Address) else op
            if isinstance(base, ptx.Symbol) and base.name in names:
                raise InlineError(f"calls to .func ('{self.callee.name}' uses its parameter '{base.name}' "
                                  f"other than by ld.param/st.param)", item)


# ---- moves in place of st.param / ld.param ----------------------------------------------

def _elements(op) -> tuple:
    return op.elems if isinstance(op, ptx.Vector) else (op,)


def _reg_size(func: ptx.Function, reg: ptx.Reg, item: ptx.Instr) -> int:
    declared = func.reg_type(reg) if isinstance(reg, ptx.Reg) else None
    if declared is None:
        raise InlineError(f"calls to .func ({item.opcode} of '{reg}', not a declared register)", item)
    return ptx.type_size(declared)


def param_moves(item: ptx.Instr, func: ptx.Function, slot, rename=lambda op: op) -> list:
    """The moves that replace `st.param`/`ld.param` of a buffer whose bytes are slot
    registers (`slot(offset, size)`); `func` declares the registers of `item`,
    `rename` maps them to the names the moves use."""
    if item.base == "st":
        addr, value = item.operands
        return store_moves(item, addr, value, func, slot, rename)
    dst, addr = item.operands
    return load_moves(item, dst, addr, func, slot, rename)


def store_moves(item, addr, value, func, slot, rename) -> list:
    """`st.param.T [buf+off], v` (or .vN): each element into its slot register."""
    type_ = "." + item.parts[-1]
    size = ptx.type_size(type_)
    out = []
    for k, elem in enumerate(_elements(value)):
        reg = slot(addr.offset + k * size, size)
        width = max(size, 2)
        if isinstance(elem, ptx.Imm):
            opcode = f"mov{type_}" if size > 1 else "mov.b16"
        else:
            have = _reg_size(func, elem, item)
            if have == width:
                opcode = f"mov.b{8 * width}"
            elif have > width:   # st of a wider register keeps its low bytes
                opcode = f"cvt.u{8 * width}.u{8 * have}"
            else:
                raise InlineError(f"calls to .func ({item.opcode} of the {8 * have}-bit register {elem.name})",
                                  item)
        out.append(ptx.Instr(opcode, [reg, rename(elem)], item.guard, item.guard_negated, item.loc))
    return out


def load_moves(item, dst, addr, func, slot, rename) -> list:
    """`ld.param.T d, [buf+off]` (or .vN): each element from its slot register,
    extended as ld extends into a wider register (sign for .s types)."""
    part = item.parts[-1]
    size = ptx.type_size("." + part)
    kind = "s" if part.startswith("s") else "u"
    out = []
    for k, elem in enumerate(_elements(dst)):
        reg = slot(addr.offset + k * size, size)
        have = _reg_size(func, elem, item)
        if size == 1 or have > size:
            opcode = f"cvt.{kind}{8 * max(have, 2)}.{kind}{8 * size}"
        elif have == size:
            opcode = f"mov.b{8 * size}"
        else:
            raise InlineError(f"calls to .func ({item.opcode} into the {8 * have}-bit register {elem.name})", item)
        out.append(ptx.Instr(opcode, [rename(elem), reg], item.guard, item.guard_negated, item.loc))
    return out


def _symbols_used(func: ptx.Function) -> set[str]:
    """The symbols `func`'s instructions name (module variables among them)."""
    used = set()
    for instr in func.instrs():
        for op in instr.operands:
            base = op.base if isinstance(op, ptx.Address) else op
            if isinstance(base, ptx.Symbol):
                used.add(base.name)
    return used


def _names(func: ptx.Function):
    """Every name `func` declares (registers without `%`, variables, buffers, labels)."""
    yield from (d.prefix.lstrip("%") for d in func.regs)
    yield from (v.name for v in func.vars)
    yield from (p.name for p in (*func.call_params, *func.prototypes))
    yield from (i.name for i in func.body if isinstance(i, ptx.Label))
