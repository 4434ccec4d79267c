"""expand_extern_calls: a call of an `.extern .func` (vprintf, __assertfail, ...) as
the CUDA driver's system-call ABI wants it, once registers are physical.

ptxas's code for such a call (read from nvcc 13.5's printf and assert cubins, sm_89
and sm_90): the arguments in R4, R5, ... (each at its size's alignment: a 64-bit one
in an even pair; vprintf's format R4:R5 and argument buffer R6:R7, __assertfail's
message R4:R5, file R6:R7, line R8, function R10:R11, char size R12:R13), the callee's
address from its bank-4 slot (c[0x4][slot], filled by an R_CUDA_64 relocation against
the undefined FUNC symbol), the return address in R20:R21 from LEPC (sm_89: `LEPC Rx`
gives the LEPC's own address, plus the distance to the return; sm_90: `LEPC R20, ret`
gives the return address itself), then `CALL.ABS.NOINC Rtarget`; the result comes back
in R4.  The cubin lists the callee in EIATTR_EXTERNS and each CALL's offset in
EIATTR_SYSCALL_OFFSETS (driver.kernel_image, from `func.syscalls`).

ptxc's calls (lower_calls) keep nothing in registers across a CALL (save_across_calls),
so at the CALL every register but R1 is free: the arguments come from their `.param`
buffers in the frame (`LDL [R1+offset]`, where st_call_param put them), and the result
goes back to its buffer (`STL [R1+offset], R4` after the return) for ld_call_param.

Expects: physical registers (after assign_regs), each extern CALL the last instruction
of its block naming `lower_calls.EXTERN_LABEL` + site (`func.extern_sites`), the module's
bank-4 slots in `func.module_vars.extern_slots`.  Guarantees: each such CALL reads its
target register; `func.syscalls` lists (CALL instruction, callee name); the register
count covers R20:R21.
"""
from __future__ import annotations

from ..diagnostics import CompileError, Diagnostic
from ..sass.ir import CBank, Imm, Instr, Mem, Reg, Target
from ..sass.target import target as target_of
from .lower_calls import EXTERN_LABEL

ADDRESS_BANK = 4
FIRST_ARG = 4                 # R4: the first argument and the result
RETURN_REG = 20               # R20:R21: the return address
TARGET = Reg("R", 2, width=2)    # the callee's address (ptxas: R2 or R8)
STACK = Reg("R", 1)
LOAD_MODS = {4: (), 8: ("64",)}
LEPC_TO_RETURN = 4 * 16       # sm_89: LEPC, IADD3, IADD3.X, CALL, then the return


def expand_extern_calls(func) -> None:
    sites = getattr(func, "extern_sites", None)
    if not sites:
        return
    slots = getattr(getattr(func, "module_vars", None), "extern_slots", {}) or {}
    func.syscalls = []
    top = 0
    for b, block in enumerate(func.blocks):
        if not block.instrs:
            continue
        call = block.instrs[-1]
        target = call.srcs[0] if call.op == "CALL" and call.srcs else None
        if not (isinstance(target, Target) and (target.label or "").startswith(EXTERN_LABEL)):
            continue
        site = sites[target.label]
        if site.name not in slots:
            raise CompileError(Diagnostic(f"internal error: no bank-4 slot for the system call '{site.name}'"))
        regs, top = _argument_registers(site, top)
        code = []
        for (offset, size), reg in zip(site.args, regs):
            code.append(Instr("LDL", LOAD_MODS[size], [reg], [Mem(STACK, offset)],
                              comment=f"{site.name}: argument in the ABI's register"))
        code.append(Instr("LDC", ("64",), [TARGET], [CBank(ADDRESS_BANK, slots[site.name])],
                          comment=f"{site.name}'s address (relocated)"))
        if not target_of(func.arch).lepc_takes_target:
            scratch = Reg("R", max(top, 14) + (max(top, 14) & 1), width=2)
            lo, hi = Reg("R", scratch.num), Reg("R", scratch.num + 1)
            carry = Reg("P", 0)
            code += [Instr("LEPC", (), [scratch], [], comment="this instruction's address"),
                     Instr("IADD3", (), [Reg("R", RETURN_REG), carry], [lo, Imm(LEPC_TO_RETURN, "int"), Reg("R", 255)],
                           comment="return address"),
                     Instr("IADD3", ("X",), [Reg("R", RETURN_REG + 1)],
                           [Reg("R", 255), hi, Reg("R", 255), carry, Reg("P", 7, inv=True)],
                           comment="return address (high)")]
        else:
            code.append(Instr("LEPC", (), [Reg("R", RETURN_REG, width=2)], [Target(func.blocks[b + 1].label)],
                              comment="return address"))
        call.srcs = [TARGET]
        func.syscalls.append((call, site.name))
        block.instrs[-1:-1] = code
        if site.result is not None and b + 1 < len(func.blocks):
            offset, size = site.result
            value = Reg("R", FIRST_ARG, width=size // 4)
            func.blocks[b + 1].instrs.insert(0, Instr("STL", LOAD_MODS[size], [], [Mem(STACK, offset), value],
                                                      comment=f"{site.name}'s result to its buffer"))
    func.num_regs = max(func.num_regs, RETURN_REG + 2, top)


def _argument_registers(site, top: int) -> tuple[list, int]:
    """R4, R5, ... for the arguments, each at its size's alignment; the next free one."""
    regs, cursor = [], FIRST_ARG
    for _offset, size in site.args:
        words = size // 4
        if size not in LOAD_MODS:
            raise CompileError(Diagnostic(f"unsupported: an argument of {size} bytes to the system call "
                                          f"'{site.name}'"))
        cursor = (cursor + words - 1) // words * words
        regs.append(Reg("R", cursor, width=words))
        cursor += words
    if cursor > 16:
        raise CompileError(Diagnostic(f"unsupported: system call '{site.name}' with more than 12 argument words"))
    return regs, max(top, cursor)
