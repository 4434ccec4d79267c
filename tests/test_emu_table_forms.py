"""The emulator takes an instruction of every form the tables decode, or refuses it by name.

RUN: pytest tests/test_emu_table_forms.py
CHECK: for random instructions of every form of the sm_89 and sm_90 tables, building the
emulator's program never raises (a modifier combination a semantics builder has no case
for is recorded as unsupported with its name: VOTE.INVALID3 once raised KeyError), and an
instruction with a value nvdisasm calls invalid (`MUFU.INVALID7`, `LD.???0`,
`R2.INVALID2`) is refused rather than run as some other operation.
"""
from __future__ import annotations

import random

import pytest

from ptxc.emu import program
from ptxc.sass import table
from ptxc.sass.ir import Control

ARCHS = ("sm_89", "sm_90")


@pytest.mark.parametrize("arch", ARCHS)
def test_every_form_is_taken_or_refused_by_name(arch):
    tbl = table.load(arch)
    rng = random.Random(16)
    instrs = []
    for form in tbl.forms:
        for _ in range(8):
            instrs.append((16 * len(instrs), table.random_instr(form, rng, 16 * len(instrs), Control())))
    prog = program.compile_program("forms", instrs)   # must not raise
    for i, (_, instr) in enumerate(instrs):
        invalid = [t for t in instr.mods if t.startswith(("INVALID", "???"))] + [
            table.reg_sel(o) for o in instr.operands if table.reg_sel(o).startswith("INVALID")]
        if invalid:
            assert i in prog.unsupported, f"{instr.name}: runs although nvdisasm calls {invalid[0]} invalid"
        if i in prog.unsupported:
            assert prog.unsupported[i], f"{instr.name}: refused without a reason"
