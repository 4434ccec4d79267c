"""The passes that turn codegen's blocks into NVVM-shaped PTX, in order.

Each pass is one module named after its one public function `<verb_noun>(cg, func)`,
which rewrites `cg.blocks` (a list of vir.Block of ptx.ir.Instr over vir.VReg) in place;
its docstring says what it expects and guarantees.  `number_registers` is last: it
names the virtual registers and writes `func.body` and `func.regs`.
"""
from __future__ import annotations

from .eliminate_dead_code import eliminate_dead_code
from .fold_extending_loads import fold_extending_loads
from .fold_negations import fold_negations
from .fuse_multiply_add import fuse_multiply_add
from .hoist_invariants import hoist_invariants
from .layout_blocks import layout_blocks
from .number_registers import number_registers
from .place_cvta import place_cvta
from .propagate_copies import propagate_copies
from .render_inline_asm import render_inline_asm
from .sink_loads import sink_loads

# The pipeline after instruction emission, in order (names as --print-after would use).
PASSES = [
    ("fold_negations", fold_negations),
    ("propagate_copies", propagate_copies),
    ("eliminate_dead_code", eliminate_dead_code),
    ("place_cvta", place_cvta),
    ("sink_loads", sink_loads),
    ("fuse_multiply_add", fuse_multiply_add),
    ("hoist_invariants", hoist_invariants),
    ("fold_extending_loads", fold_extending_loads),
    ("layout_blocks", layout_blocks),
    ("number_registers", number_registers),
    ("render_inline_asm", render_inline_asm),
]


def run_passes(cg, func) -> None:
    for _name, pass_ in PASSES:
        pass_(cg, func)
