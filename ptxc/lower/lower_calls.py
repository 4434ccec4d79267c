"""Calls of `.func` subroutines (the ABI): not lowered yet.

The builders here are what select_instrs' rules call for `st.param`/`ld.param` of a
call sequence, `call` and `ret` inside a `.func`; each says plainly that ptxc does
not lower calls yet.
"""
from __future__ import annotations

from .select_instrs import Unsupported


def ld_call_param(s, d, addr, t, count):
    raise Unsupported("ld.param of a call's return value or a .func parameter (calls are not lowered yet)")


def st_call_param(s, addr, v, t, count):
    raise Unsupported("st.param of a call argument (calls are not lowered yet)")


def ret_from_func(s, i):
    raise Unsupported("ret from a .func (calls are not lowered yet)")
