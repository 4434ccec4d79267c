"""save_across_calls: keep values alive across a CALL in the caller's stack frame.

ptxc's call ABI (lower_calls) has every register but R1 caller-saved: a subroutine is
allocated on its own and may write any register.  Before each `CALL`, every virtual
register value live across it is stored to a slot of the frame (`STL [R1+slot]`),
and after it (at the top of the next block, where RET comes back) loaded again into
the same virtual register.  A slot per value, shared by all calls; a value is not
stored again while its slot still holds it (saved before an earlier call and not
written since, on every way to this call: four calls of the trigonometric slow path
in fe_math_double store the values they share once).

Expects: instructions in final order, virtual registers, each CALL last in its block
(select_instrs starts a block after it); func.info.frame_size the frame so far.
Guarantees: no virtual register is live across a CALL; the frame (and the entry's
`IADD3 R1, R1, -frame`) grows by the slots.  A predicate or uniform value live
across a call goes through a general register: `SEL Rt, RZ, 0x1, P` (Rt = !P)
stored, and after the call loaded and turned back by `ISETP.EQ.U32.AND P, PT, Rt, RZ,
PT`.  A uniform value live across a call is a CompileError (ptxc does not save those).
"""
from __future__ import annotations

from ..diagnostics import CompileError, Diagnostic
from ..sass.ir import Imm, Instr, Mem, PT, RZ, Reg
from .analysis import build_code, collect_values
from .kernel_info import info_of
from .spill_regs import _set_frame

STORE_MODS = {1: (), 2: ("64",), 4: ("128",)}


def save_across_calls(func) -> None:
    if not any(i.op == "CALL" for i in func.instrs()):
        return
    code = build_code(func)
    value_of = collect_values(code)
    info = info_of(func)
    slots: dict = {}
    all_values = []
    preds = code.preds
    stored: list = [None] * len(func.blocks)   # per block, after it: values whose slot holds them
    for b, block in enumerate(func.blocks):
        # (the blocks grow as saves go in: their original code is indexed through `code`)
        valid = _stored_at_entry(b, preds[b], stored)
        for i in code.block_range(b):
            for reg in code.results[i]:
                if reg.virtual:
                    for k in range(reg.width):
                        owner = value_of.get((reg.file, reg.num + k, True))
                        if owner is not None:
                            valid.discard((owner.file, owner.first))
        stored[b] = valid
        if not block.instrs or block.instrs[-1].op != "CALL":
            continue
        live = code.live_out[code.block_range(b)[-1]]
        found = {}
        for u in live:
            if u[2] and u in value_of:
                found[(value_of[u].file, value_of[u].first)] = value_of[u]
        values = [found[k] for k in sorted(found)]
        all_values += values
        saves, loads = [], []
        for value in values:
            key = (value.file, value.first)
            if value.file == "P":
                _save_predicate(func, value, slots, info, [] if key in valid else saves, loads)
                valid.add(key)
                continue
            if value.file != "R":
                raise CompileError(Diagnostic(f"unsupported: a {value.file} register value live across a call "
                                              f"in {func.name} (ptxc saves only general registers)"))
            if (value.file, value.first) not in slots:
                size = 4 * value.width
                offset = (info.frame_size + size - 1) // size * size
                info.frame_size = offset + size
                slots[(value.file, value.first)] = offset
            reg = Reg("R", value.first, virtual=True, width=value.width)
            slot = Mem(Reg("R", 1), slots[(value.file, value.first)])
            if key not in valid:    # else the slot holds it still, from the save before an earlier call
                saves.append(Instr("STL", STORE_MODS[value.width], [], [slot, reg], comment="saved across the call"))
                valid.add(key)
            loads.append(Instr("LDL", STORE_MODS[value.width], [reg], [slot], comment="restored after the call"))
        block.instrs[-1:-1] = saves
        if loads:
            func.blocks[b + 1].instrs[0:0] = loads
    if slots:
        align = max(8, 4 * max((v.width for v in all_values), default=1))   # the frame keeps each slot aligned
        info.frame_align = max(info.frame_align, align)
        _set_frame(func, info.frame_size)


def _stored_at_entry(b: int, preds: list, stored: list) -> set:
    """The values whose frame slot holds their current value on entry to block b: those
    stored so on every way in (a block not scanned yet, a loop's back edge, counts as
    none; the entry block has none).  A restore after a call keeps its slot valid."""
    if not preds or any(stored[p] is None for p in preds):
        return set()
    return set.intersection(*(stored[p] for p in preds))


def _save_predicate(func, value, slots, info, saves, loads) -> None:
    """A predicate live across a call: its negation as 0/1 in a word of the frame."""
    if ("P", value.first) not in slots:
        slots[("P", value.first)] = offset = (info.frame_size + 3) // 4 * 4
        info.frame_size = offset + 4
    slot = Mem(Reg("R", 1), slots[("P", value.first)])
    pred = Reg("P", value.first, virtual=True)
    word, back = func.new_vreg("R"), func.new_vreg("R")
    saves += [Instr("SEL", (), [word], [Reg("R", RZ), Imm(1, "int"), pred], comment="predicate saved across the call"),
              Instr("STL", (), [], [slot, word], comment="saved across the call")]
    loads += [Instr("LDL", (), [back], [slot], comment="restored after the call"),
              Instr("ISETP", ("EQ", "U32", "AND"), [pred, Reg("P", PT)], [back, Reg("R", RZ), Reg("P", PT)],
                    comment="predicate restored after the call")]
