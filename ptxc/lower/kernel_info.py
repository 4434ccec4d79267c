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
    frame_align: int = 8          # frame_size is a multiple of it, so R1 stays this aligned (frame_bytes)
    num_barriers: int = 0         # named barriers used (bar.sync N: N + 1)
    max_threads: tuple | None = None   # .maxntid / .reqntid
    max_reg_count: int | None = None   # .maxnreg
    calls: bool = False           # calls a subroutine (CALL.REL.NOINC)
    stack_size: int | None = None # EIATTR_MIN_STACK_SIZE with calls (link_calls); the frame without
    const_bank3: bool = False     # reads `.const` variables (constant bank 3)
    convergence_barriers: int = 0 # B registers BSSY/BSYNC use


# R1 is 16-byte aligned where a function keeps 16-byte-aligned data in its frame (a
# `.local .align 16` array, an STL.128 slot): the stack top is, and that function's
# frame and the frame of every function on a call chain to it are multiples of 16
# (lower_calls.needs_aligned_stack).  ptxas instead realigns R1 with a LOP3 in such
# a callee; other frames stay multiples of 8, as ptxas's are.
ALIGNED_STACK = 16


def frame_bytes(info: KernelInfo, used: int) -> int:
    """The frame that holds `used` bytes: rounded up to info.frame_align."""
    align = info.frame_align
    return (used + align - 1) // align * align


def info_of(func) -> KernelInfo:
    info = getattr(func, "info", None)
    if info is None:
        info = KernelInfo()
        func.info = info
    return info
