"""Calls of `.func` subroutines that are not inlined: why, and what select_instrs does.

ptxc has no call ABI: inline_calls replaces every call it can with the callee's body,
before instruction selection.  What it cannot inline is an error at the call,
`unsupported: calls to .func (...)` with the reason why_not_inlined gives: a recursive
callee (named with the cycle), an indirect call through a register, a callee only
declared in this module (`.extern`, defined elsewhere: ptxc does not link).

The builders here are what select_instrs' rules call for a call sequence (`st.param`
of the arguments, `call`, `ld.param` of the results), for `ret` and `ld.param` of its
own parameters inside a `.func`: they are reached only where select_instrs runs on a
function inline_calls did not rewrite, and each `call` reports one diagnostic; the
`st.param`/`ld.param` around it add none.

Expects: the PTX function's call sequences flattened by the parser (their `.param`
buffers in `Function.call_params`).  Guarantees: a CompileError, never a traceback.
"""
from __future__ import annotations

from ..ptx import ir as ptx
from .select_instrs import Unsupported


class UnsupportedCall(Unsupported):
    """What ptxc cannot lower because it involves calls to a `.func`."""

    def message(self) -> str:
        return f"unsupported: {self}"


NO_ABI = "ptxc inlines calls and has no call ABI"


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


def call(s, i: ptx.Instr):
    """`call[.uni] (ret), f, (args)[, proto]`: reported at the call."""
    site = ptx.call_site(i)
    callee = f"'{site.callee.name}'" if isinstance(site.callee, ptx.Symbol) else f"indirect, through {site.callee.name}"
    raise UnsupportedCall(f"calls to .func ({callee}; not inlined: select_instrs expects inline_calls to have run)")


def _is_call_buffer(s, addr) -> bool:
    return isinstance(addr.base, ptx.Symbol) and any(p.name == addr.base.name for p in s.ptx_func.call_params)


def ld_call_param(s, d, addr, t, count):
    """A call's return value: nothing here (the call reports); a .func's own parameter: an error."""
    if _is_call_buffer(s, addr):
        return
    raise UnsupportedCall("calls to .func (ld.param of a .func's own parameter; only kernels are compiled)")


def st_call_param(s, addr, v, t, count):
    """A call's argument: nothing here (the call reports); a .func's return value: an error."""
    if _is_call_buffer(s, addr):
        return
    raise UnsupportedCall("calls to .func (st.param of a .func's return value; only kernels are compiled)")


def ret_from_func(s, i):
    raise UnsupportedCall("calls to .func (ret from a .func; only kernels are compiled)")
