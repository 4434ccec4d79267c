"""Calls of `.func` subroutines (the ABI): not lowered yet.

The builders here are what select_instrs' rules call for a call sequence (`st.param`
of the arguments, `call`, `ld.param` of the results), for `ret` and `ld.param` of its
own parameters inside a `.func`.  Each call reports one diagnostic,
`unsupported: calls to .func (...)`, at the `call`; the `st.param`/`ld.param`
around it add none.

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


def call(s, i: ptx.Instr):
    """`call[.uni] (ret), f, (args)[, proto]`: reported at the call."""
    site = ptx.call_site(i)
    callee = f"'{site.callee.name}'" if isinstance(site.callee, ptx.Symbol) else f"indirect, through {site.callee.name}"
    raise UnsupportedCall(f"calls to .func ({callee}; ptxc does not lower calls yet)")


def _is_call_buffer(s, addr) -> bool:
    return isinstance(addr.base, ptx.Symbol) and any(p.name == addr.base.name for p in s.ptx_func.call_params)


def ld_call_param(s, d, addr, t, count):
    """A call's return value: nothing here (the call reports); a .func's own parameter: an error."""
    if _is_call_buffer(s, addr):
        return
    raise UnsupportedCall("calls to .func (ld.param of a .func's own parameter)")


def st_call_param(s, addr, v, t, count):
    """A call's argument: nothing here (the call reports); a .func's return value: an error."""
    if _is_call_buffer(s, addr):
        return
    raise UnsupportedCall("calls to .func (st.param of a .func's return value)")


def ret_from_func(s, i):
    raise UnsupportedCall("calls to .func (ret from a .func)")
