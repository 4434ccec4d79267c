"""Calls of `.func` subroutines that are not inlined: ptxc's call ABI, and why a call fails.

inline_calls replaces most calls with the callee's body.  Three kinds of call stay
real calls (`real_call`): a call of a recursive `.func`, of an outlined one (at least
OUTLINE_MIN_INSTRS long and called from two sites or more: `outlined_functions`),
and an indirect call through a register.  select_instrs lowers them with the builders here, and
link_calls appends each called `.func`, lowered once as a subroutine, after the
kernel's code.  A call of one of the CUDA driver's system calls declared `.extern
.func` (SYSTEM_CALLS: `vprintf`, `__assertfail`, `malloc`, `free`) stays a call through the
driver's ABI instead (`extern_call`; expand_extern_calls writes its sequence once
registers are assigned).  A call of a function only declared otherwise is still an
error at the call, `unsupported: calls to .func (...)`, with why_not_inlined's reason.

ptxc's ABI (simpler than ptxas's, docs/passes.md compares them):

- arguments and results travel through the stack, not registers: a call site
  stores its arguments at the bottom of the caller's frame, `[R1+0]...` (the
  `.param` buffers of the call laid out as the callee's parameters then its
  results, `param_layout`), and loads the results from there after the call; the
  callee reads them at `[R1+frame+k]` above its own frame (`INCOMING` offsets,
  fixed by insert_call_frame once the frame is known);
- the return address is R20:R21 (`MOV R20, ret; MOV R21, 0x0; CALL.REL.NOINC f`,
  as ptxas), saved by the callee in its frame and reloaded for `RET.REL.NODEC R20`;
- every register but R1 is caller-saved: save_across_calls stores each value live
  across a call in the caller's frame and reloads it after; the callee's frame is
  `IADD3 R1, R1, -frame` at entry and `+frame` before RET;
- a function pointer is a small integer, 1 + the index of the function among the
  module's address-taken functions (`function_ids`), not a code address; an
  indirect call compares it with each address-taken function of the call's
  prototype and makes a direct CALL to the one it names.

Expects: the PTX function's call sequences flattened by the parser (their `.param`
buffers in `Function.call_params`).  Guarantees: a CompileError, never a traceback.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ptx import ir as ptx
from ..sass.ir import Imm, Reg, RZ, Target
from .select_instrs import Unsupported


class UnsupportedCall(Unsupported):
    """What ptxc cannot lower because it involves calls to a `.func`."""

    def message(self) -> str:
        return f"unsupported: {self}"


NO_ABI = "ptxc inlines calls and has no call ABI"

RETURN_ADDRESS = Reg("R", 20, width=2)   # R20:R21, as ptxas: written by the caller, read by RET
INCOMING = 0x400000                      # offsets of a .func's own parameters before the frame is known
SUBROUTINE_LABEL = "$ptxc_func$"         # the label of a subroutine's first block: SUBROUTINE_LABEL + name
EXTERN_LABEL = "$ptxc_extern$"           # a CALL of an `.extern .func`: EXTERN_LABEL + name + "$" + site


@dataclass
class ExternSite:
    """One call of an `.extern .func` (a driver system call), as select_instrs saw it:
    the callee, and where its arguments and result wait in the caller's frame (the
    call's `.param` buffers, [R1+offset], with their sizes), for expand_extern_calls."""
    name: str
    args: list            # [(frame offset, bytes)] in order
    result: tuple | None  # (frame offset, bytes) or None


# The `.extern .func`s ptxas resolves as the driver's system calls (measured with ptxas 13.5
# on PTX declaring each: these compile, any other name is "Unresolved extern function").
SYSTEM_CALLS = ("vprintf", "__assertfail", "malloc", "free")


def is_extern(name: str, functions: dict) -> bool:
    """`name` is a system call (SYSTEM_CALLS) declared `.extern .func` here, not defined."""
    return name in SYSTEM_CALLS and is_extern_declaration(functions.get(name))


def is_extern_declaration(f) -> bool:
    return f is not None and not f.defined and not f.entry and f.extern


def direct_callees(func: ptx.Function) -> list[str]:
    """The names `func` calls directly, in order, once each."""
    names = []
    for instr in func.instrs():
        if instr.base == "call":
            callee = ptx.call_site(instr).callee
            if isinstance(callee, ptx.Symbol) and callee.name not in names:
                names.append(callee.name)
    return names


def call_cycle(name: str, functions: dict[str, ptx.Function]) -> list[str] | None:
    """A path of direct calls from `name` back to itself (`[f, g, f]`), or None."""
    paths, seen = [[name]], set()
    while paths:
        path = paths.pop(0)
        f = functions.get(path[-1])
        for callee in direct_callees(f) if f is not None and f.defined else ():
            if callee == name:
                return path + [name]
            if callee not in seen:
                seen.add(callee)
                paths.append(path + [callee])
    return None


def recursive_functions(functions: dict[str, ptx.Function]) -> set[str]:
    """The defined functions that can reach themselves through direct calls."""
    return {name for name, f in functions.items() if f.defined and call_cycle(name, functions)}


OUTLINE_MIN_INSTRS = 100    # a callee at least this long, called from two sites or more, stays a call


def outlined_functions(functions: dict[str, ptx.Function]) -> set[str]:
    """The defined .funcs kept as subroutines although they could be inlined: those of at
    least OUTLINE_MIN_INSTRS instructions (their own calls inlined) that the module calls
    from more than one site.  ptxas never inlines a PTX call; ptxc inlines every small or
    single-site one and keeps these (libdevice's slow paths, e.g. the trigonometric
    argument reduction that sin, cos and tan each call) so a kernel does not carry one
    copy per call."""
    sites: dict[str, int] = {}
    for f in functions.values():
        if f.defined:
            for name in direct_callees_all(f):
                sites[name] = sites.get(name, 0) + 1
    sizes: dict[str, int] = {}

    def size(name: str, stack=()) -> int:
        if name not in sizes:
            f = functions[name]
            n = 0
            for i in f.instrs():
                n += 1
                if i.base == "call":
                    callee = ptx.call_site(i).callee
                    if (isinstance(callee, ptx.Symbol) and callee.name in functions
                            and functions[callee.name].defined and callee.name not in stack):
                        n += size(callee.name, stack + (name,))
            sizes[name] = n
        return sizes[name]

    return {name for name, count in sites.items()
            if count > 1 and name in functions and functions[name].defined and not functions[name].entry
            and size(name) >= OUTLINE_MIN_INSTRS}


def direct_callees_all(f: ptx.Function) -> list[str]:
    """The names of the direct calls in `f`, once per call site."""
    return [c.name for i in f.instrs() if i.base == "call"
            for c in [ptx.call_site(i).callee] if isinstance(c, ptx.Symbol)]


def kept_calls(functions: dict[str, ptx.Function]) -> set[str]:
    """The .funcs whose direct calls stay calls: the recursive ones and the outlined ones."""
    return recursive_functions(functions) | outlined_functions(functions)


def why_not_inlined(instr: ptx.Instr, functions: dict[str, ptx.Function], recursive: set[str]) -> str:
    """`calls to .func (...)`: why inline_calls left this call."""
    site = ptx.call_site(instr)
    if not isinstance(site.callee, ptx.Symbol):
        return (f"calls to .func (indirect, through {site.callee.name} with prototype {site.prototype}; "
                f"{NO_ABI})")
    name = site.callee.name
    f = functions.get(name)
    if not functions:
        return f"calls to .func ('{name}'; the pipeline was given none of the module's functions to inline)"
    if f is None:
        return f"calls to .func ('{name}' is not declared in this module)"
    if f.entry:
        return f"calls to .func ('{name}' is a kernel, .entry)"
    if not f.defined:
        where = ".extern, " if f.extern else ""
        return (f"calls to .func ('{name}' is only declared here ({where}defined in another module) and "
                f"ptxc does not link modules)")
    if name in recursive:
        cycle = " -> ".join(call_cycle(name, functions))
        return f"calls to .func ('{name}' is recursive: {cycle}; {NO_ABI})"
    return f"calls to .func ('{name}'; not inlined: select_instrs expects inline_calls to have run)"


@dataclass
class CallContext:
    """What link_calls needs to lower a kernel's callees (select_instrs puts it on the function)."""
    functions: dict
    arch: str
    filename: str
    module_vars: object


def real_call(instr: ptx.Instr, functions: dict[str, ptx.Function], recursive: set[str]) -> bool:
    """A call that stays a call: indirect, or of a defined .func in `recursive` (the
    recursive ones, and the outlined ones: kept_calls)."""
    callee = ptx.call_site(instr).callee
    if not isinstance(callee, ptx.Symbol):
        return True
    if is_extern(callee.name, functions):
        return True
    f = functions.get(callee.name)
    return f is not None and f.defined and not f.entry and callee.name in recursive


def address_taken(functions) -> list[str]:
    """The defined .func names that appear as an operand other than a call's callee, in module order."""
    functions = list(functions)
    names = {f.name for f in functions if f.defined and not f.entry}
    if not names:
        return []
    taken = set()
    for f in functions:
        for instr in f.instrs() if f.defined else ():
            if instr.base == "call":
                continue
            for op in instr.operands:
                for sym in _symbols(op):
                    if sym in names:
                        taken.add(sym)
    return [f.name for f in functions if f.name in taken]


def _symbols(op):
    if isinstance(op, ptx.Symbol):
        yield op.name
    elif isinstance(op, ptx.Address) and isinstance(op.base, ptx.Symbol):
        yield op.base.name
    elif hasattr(op, "elems"):
        for e in op.elems:
            yield from _symbols(e)


def function_ids(functions) -> dict[str, int]:
    """A function pointer's value: 1 + the function's index among the address-taken ones."""
    return {name: k + 1 for k, name in enumerate(address_taken(functions))}


def param_layout(params) -> dict[str, int]:
    """Offsets of `.param` buffers laid out in order at their natural alignment."""
    offsets, cursor = {}, 0
    for param in params:
        align = param.align or ptx.type_size(param.type)
        cursor = (cursor + align - 1) // align * align
        offsets[param.name] = cursor
        cursor += param.size
    return offsets


def call_buffers(func: ptx.Function) -> tuple[dict[str, int], int]:
    """Each call buffer's offset in the caller's outgoing area (the bottom of its
    frame), and that area's size: per call site, its arguments then its results."""
    by_name = {p.name: p for p in func.call_params}
    offsets, size = {}, 0
    for instr in func.instrs():
        if instr.base != "call":
            continue
        site = ptx.call_site(instr)
        params = [by_name[b.name] for b in site.args + site.returns if b.name in by_name]
        layout = param_layout(params)
        offsets.update(layout)
        size = max([size] + [layout[p.name] + p.size for p in params])
    return offsets, (size + 7) // 8 * 8


def incoming_params(func: ptx.Function) -> dict[str, int]:
    """A .func's own parameters and results, at INCOMING + their call-buffer offset."""
    return {name: INCOMING + off for name, off in param_layout(func.params + func.return_params).items()}


def callees(func: ptx.Function, functions: dict[str, ptx.Function]) -> list[str]:
    """The subroutines `func`'s real calls may reach directly: named callees, and
    for an indirect call every address-taken function of its prototype."""
    out = []
    for instr in func.instrs():
        if instr.base != "call":
            continue
        for name in call_targets(func, instr, functions):
            if name not in out:
                out.append(name)
    return out


def needs_aligned_stack(func: ptx.Function, functions: dict[str, ptx.Function]) -> bool:
    """Whether `func`, or a function it may call (directly or not), keeps 16-byte-
    aligned data in its frame: a `.local .align 16` variable, or 128-bit register
    values (`.v4` of 32 bits, `.v2` of 64), which save_across_calls and spill_regs may
    park in 16-byte slots.  Such a function's frame, and every caller's on the way to
    it, is a multiple of 16 (kernel_info.frame_bytes), so its R1 is 16-byte aligned."""
    seen, work = set(), [func]
    while work:
        f = work.pop()
        if _holds_aligned_data(f):
            return True
        for name in callees(f, functions):
            if name not in seen and name in functions:
                seen.add(name)
                work.append(functions[name])
    return False


_WIDE_VECTOR_TYPES = {"v4": {"b32", "u32", "s32", "f32"}, "v2": {"b64", "u64", "s64", "f64"}}


def _holds_aligned_data(func: ptx.Function) -> bool:
    if any(v.state == ".local" and (v.align or 0) >= 16 for v in func.vars):
        return True
    for instr in func.instrs():
        parts = instr.opcode.split(".")
        if "b128" in parts or any(vec in parts and types.intersection(parts)
                                  for vec, types in _WIDE_VECTOR_TYPES.items()):
            return True
    return False


def call_targets(func: ptx.Function, instr: ptx.Instr, functions: dict[str, ptx.Function]) -> list[str]:
    site = ptx.call_site(instr)
    if isinstance(site.callee, ptx.Symbol):
        return [site.callee.name]
    by_name = {p.name: p for p in func.call_params}
    want = ([by_name[b.name].size for b in site.args if b.name in by_name],
            [by_name[b.name].size for b in site.returns if b.name in by_name])
    return [name for name in address_taken(functions.values())
            if ([p.size for p in functions[name].params], [p.size for p in functions[name].return_params]) == want]


# ---- builders (select_instrs' rules) -------------------------------------------------

def call(s, i: ptx.Instr):
    """`call (ret), f, (args)`: a direct CALL; through a register, a compare with each
    candidate's id and a direct CALL of the one that matches.  The arguments are
    already on the stack (st_call_param); CALL ends its block."""
    functions = getattr(s.ptx_func, "module_functions", None) or {}
    site = ptx.call_site(i)
    if isinstance(site.callee, ptx.Symbol):
        if is_extern(site.callee.name, functions):
            extern_call(s, i, site)
            return
        f = functions.get(site.callee.name)
        if f is None or not f.defined or f.entry:
            recursive = recursive_functions(functions)
            raise UnsupportedCall(why_not_inlined(i, functions, recursive))
        _call_to(s, site.callee.name)
        return
    ids = function_ids(functions.values())
    pointer = s.reg(site.callee)
    low = Reg(pointer.file, pointer.num, pointer.virtual)   # ids fit the low word
    join = s.new_label("after_call")
    for name in call_targets(s.ptx_func, i, functions):
        p = s.new_pred()
        s.emit("ISETP", ("NE", "U32", "AND"), [p, Reg("P", 7)], [low, Imm(ids[name], "int"), Reg("P", 7)])
        skip = s.new_label("not_" + name)
        s.emit("BRA", (), [], [Target(skip)], pred=p)
        s.start_block(s.new_label("call"))
        _call_to(s, name)
        s.emit("BRA", (), [], [Target(join)])
        s.start_block(skip)
    s.start_block(join)


def extern_call(s, i: ptx.Instr, site) -> None:
    """`call (ret), vprintf, (args)`: a CALL.ABS.NOINC placeholder that names the site;
    the arguments are already in the frame (st_call_param), the result is loaded from
    there (ld_call_param) after expand_extern_calls stores R4 to it."""
    by_name = {p.name: p for p in s.ptx_func.call_params}

    def where(buffer):
        param = by_name.get(buffer.name)
        kind, offset = s.symbols.get(buffer.name, (None, None))
        if param is None or kind != "local":
            raise UnsupportedCall(f"calls to .func ('{site.callee.name}': argument {buffer.name} is not a "
                                  f"`.param` buffer of the call)")
        return offset, param.size
    args = [where(b) for b in site.args]
    result = where(site.returns[0]) if site.returns else None
    sites = s.func.__dict__.setdefault("extern_sites", {})
    label = f"{EXTERN_LABEL}{site.callee.name}${len(sites)}"
    sites[label] = ExternSite(site.callee.name, args, result)
    s.emit("CALL", ("ABS", "NOINC"), [], [Target(label)], comment=f"call {site.callee.name} (system call)")
    s.func.info.calls = True
    s.start_block(s.new_label("return"))


def _call_to(s, name: str) -> None:
    s.emit("CALL", ("REL", "NOINC"), [], [Target(SUBROUTINE_LABEL + name)], comment=f"call {name}")
    s.func.info.calls = True
    s.start_block(s.new_label("return"))


def _is_call_buffer(s, addr) -> bool:
    return isinstance(addr.base, ptx.Symbol) and any(p.name == addr.base.name for p in s.ptx_func.call_params)


def _as_local(s):
    """The current `ld.param`/`st.param` as the `.local` access it is in this ABI."""
    i = s.ptx_instr
    return ptx.Instr(".".join("local" if p == "param" else p for p in i.parts), i.operands, i.guard,
                     i.guard_negated, i.loc)


def ld_call_param(s, d, addr, t, count):
    """A call's result or a .func's own parameter: a load from the stack."""
    from .isel_memory import ld
    ld(s, _as_local(s))


def st_call_param(s, addr, v, t, count):
    """A call's argument or a .func's result: a store to the stack."""
    from .isel_memory import st
    st(s, _as_local(s))


def ret_from_func(s, i):
    """`ret` in a .func: RET.REL.NODEC R20 (insert_call_frame adds the epilogue)."""
    s.emit("RET", ("REL", "NODEC"), [], [RETURN_ADDRESS, Target(None, 0)], comment="return")
    s.start_block(s.new_label("after_ret"))
