"""insert_prologue: what every sm_89 kernel sets up before its own code.

- `MOV R1, c[0x0][0x28]`: R1 is the stack pointer by the ABI, loaded from the
  stack base the driver writes at c[0x0][0x28]; ptxas emits it even when unused.
- `IADD3 R1, R1, -frame, RZ`: a kernel with local memory (the PTX local depot,
  spilled registers) makes its frame below the stack base; local addresses are
  R1-relative.
- `ULDC.64 UR4, c[0x0][0x118]` (sm_90: c[0x0][0x208]): the 64-bit global-memory descriptor that `.E`
  loads and stores use implicitly; placed at the top of the block holding the
  global memory accesses when there is exactly one such block, else at entry.

Expects: virtual registers elsewhere; R1 and UR4/UR5 are not allocated to anything;
func.info.frame_size the bytes of local memory the kernel needs.
Guarantees: R1 and UR4 hold their ABI values wherever they are read.
"""
from __future__ import annotations

from ..sass.ir import CBank, Imm, Instr, Reg, RZ
from ..sass.target import target
from .kernel_info import info_of

def stack_base(arch: str) -> CBank:
    """Where the driver writes the stack pointer's initial value in bank 0 (the target's record)."""
    return CBank(0, target(arch).bank0.stack_base)


def global_descriptor(arch: str) -> CBank:
    """Where the driver writes the global-memory descriptor in bank 0 (the target's record)."""
    return CBank(0, target(arch).descriptor)
MEMORY_OPS = {"LDG", "STG", "ATOMG", "RED", "REDG", "LD", "ST", "ATOM"}


def insert_prologue(func) -> None:
    entry = func.blocks[0]
    prologue = [Instr("MOV", (), [Reg("R", 1)], [stack_base(func.arch)], comment="stack pointer (ABI)")]
    frame = info_of(func).frame_size
    if frame:
        prologue.append(Instr("IADD3", (), [Reg("R", 1)], [Reg("R", 1), Imm(-frame & 0xFFFFFFFF, "int"),
                                                          Reg("R", RZ)], comment="stack frame (ABI)"))
    entry.instrs[0:0] = prologue
    memory_blocks = [b for b in func.blocks if any(i.op in MEMORY_OPS for i in b.instrs)]
    if memory_blocks:
        home = memory_blocks[0] if len(memory_blocks) == 1 else entry
        at = len(prologue) if home is entry else 0
        home.instrs.insert(at, Instr("ULDC", ("64",), [Reg("UR", 4, width=2)], [global_descriptor(func.arch)],
                                     comment="global memory descriptor"))
