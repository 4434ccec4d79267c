"""What a lowered kernel tells the cubin writer besides its code (the .nv.info records).

select_instrs fills the memory layout (shared variables, the local depot's frame);
later passes add what they learn (barriers, stack use, calls); the driver copies it
into ptxc.cubin.writer.KernelImage.  It travels as `func.info` on the SASS function.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class KernelInfo:
    shared_size: int = 0          # static .shared bytes (EIATTR / .nv.shared.<kernel> size)
    shared_align: int = 4
    dynamic_shared: bool = False  # an `extern .shared` array
    frame_size: int = 0           # bytes of local memory below R1 (the depot and spills)
    num_barriers: int = 0         # named barriers used (bar.sync N: N + 1)
    max_threads: tuple | None = None   # .maxntid / .reqntid
    max_reg_count: int | None = None   # .maxnreg
    calls: bool = False           # calls a subroutine (CALL.REL.NOINC)
    stack_size: int | None = None # EIATTR_MIN_STACK_SIZE with calls (link_calls); the frame without
    const_bank3: bool = False     # reads `.const` variables (constant bank 3)
    convergence_barriers: int = 0 # B registers BSSY/BSYNC use


def info_of(func) -> KernelInfo:
    info = getattr(func, "info", None)
    if info is None:
        info = KernelInfo()
        func.info = info
    return info
