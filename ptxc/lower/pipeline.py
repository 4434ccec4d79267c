"""The lowering pipeline: one flat list of passes, and the module driver that runs it.

The first passes (marked ptx) rewrite the PTX function: inline_calls copies the
module's `.func` bodies into the kernel; select_instrs turns PTX into SASS IR and
the rest rewrite that.  `--print-after=NAME`, `--print-after-all` and
`--disable-pass=NAME` name the passes of PASSES.  Passes marked required keep the code legal and cannot be
disabled (the IR they leave behind is not encodable otherwise, or, where `why` says so, computes
other results); every other pass leaves correct code when disabled (tests/test_optional_passes.py).  A PTX pass is
printed as PTX, a SASS pass through Options.printer.

lower_module is the module driver: every kernel, and every `.func` kept as a subroutine
that a kernel's real calls reach, goes through lower_function, the same pass list with
the same Options (so the pass flags and -maxrregcount reach subroutines too; a subroutine
skips the kernel_only passes); then the module passes (marked module: link_calls) join
each kernel with the subroutines it calls.  Each subroutine is lowered once per module.
"""
from __future__ import annotations

import sys
from copy import deepcopy
from dataclasses import dataclass, field, replace
from typing import Callable

from ..diagnostics import CompileError, Diagnostic
from ..ptx import ir as ptx
from .assign_regs import assign_regs
from .branch_to_exit import branch_to_exit
from .expand_extern_calls import expand_extern_calls
from .expand_wide_ops import expand_wide_ops
from .fold_address_offsets import fold_address_offsets
from .fold_constants import fold_constants
from .fold_cvta import fold_cvta
from .fuse_ffma import fuse_ffma
from .fuse_imad_wide import fuse_imad_wide
from .if_convert import if_convert
from .inline_calls import inline_calls
from .insert_bssy import insert_bssy
from .insert_call_frame import insert_call_frame
from .insert_prologue import insert_prologue
from .legalize_operands import legalize_operands
from .link_calls import link_calls
from .load_cbank_operands import load_cbank_operands
from .order_instrs import order_instrs
from .pad_text import pad_text
from .pool_double_constants import pool_double_constants
from .propagate_copies import propagate_copies
from .remove_convergent_warpsyncs import remove_convergent_warpsyncs
from .remove_dead_code import remove_dead_code
from .remove_self_moves import remove_self_moves
from .save_across_calls import save_across_calls
from .select_instrs import ModuleVars, select_instrs
from .set_control_codes import set_control_codes
from .simplify_cfg import simplify_cfg
from .simplify_instrs import simplify_instrs
from .spill_preds import spill_preds
from .spill_regs import spill_regs
from .split_at_calls import split_at_calls
from .split_webs import split_webs


@dataclass
class Pass:
    name: str
    run: Callable
    required: bool = False
    ptx: bool = False          # runs on the PTX function, before select_instrs
    kernel_only: bool = False  # not run on a subroutine (a .func lowered for link_calls)
    module: bool = False       # run by lower_module on each kernel, given the module's Subroutines
    why: str = ""              # a required pass that would be optional for encodability: why it is not


PASSES = [
    Pass("inline_calls", inline_calls, required=True, ptx=True),  # calls of .func -> the callee's body
    Pass("select_instrs", None, required=True),   # PTX IR -> SASS IR (virtual registers)
    Pass("remove_convergent_warpsyncs", remove_convergent_warpsyncs, kernel_only=True),
    Pass("fold_cvta", fold_cvta),
    Pass("fuse_imad_wide", fuse_imad_wide),
    Pass("expand_wide_ops", expand_wide_ops, required=True),
    Pass("split_webs", split_webs),
    Pass("propagate_copies", propagate_copies),
    Pass("fuse_ffma", fuse_ffma),
    Pass("fold_constants", fold_constants),
    Pass("pool_double_constants", pool_double_constants),   # sm_89: doubles from c[0x2]
    Pass("simplify_instrs", simplify_instrs),
    Pass("fold_address_offsets", fold_address_offsets),
    Pass("legalize_operands", legalize_operands, required=True),
    Pass("remove_dead_code", remove_dead_code),
    Pass("simplify_cfg", simplify_cfg),
    Pass("branch_to_exit", branch_to_exit),
    Pass("if_convert", if_convert),
    Pass("split_at_calls", split_at_calls, required=True),   # RET comes back after the CALL
    Pass("insert_prologue", insert_prologue, required=True, kernel_only=True),
    Pass("load_cbank_operands", load_cbank_operands, required=True),   # sm_90: c[][] only through LDC
    Pass("order_instrs", order_instrs),
    Pass("save_across_calls", save_across_calls, required=True),   # registers are caller-saved
    Pass("spill_preds", spill_preds, required=True),
    Pass("spill_regs", spill_regs, required=True),
    Pass("insert_call_frame", insert_call_frame, required=True),   # a subroutine's frame and epilogue
    Pass("assign_regs", assign_regs, required=True),
    Pass("expand_extern_calls", expand_extern_calls, required=True),   # vprintf & co: the driver's ABI
    Pass("remove_self_moves", remove_self_moves),
    Pass("insert_bssy", insert_bssy, required=True, kernel_only=True,   # subroutines do not reconverge: docs/passes.md
         why="without BSSY/BSYNC a warp that diverged is not whole again at a shuffle, vote or barrier "
             "after the divergent code, and their results change"),
    Pass("pad_text", pad_text, required=True, kernel_only=True),
    Pass("set_control_codes", set_control_codes, required=True),
    Pass("link_calls", link_calls, required=True, kernel_only=True, module=True),   # callees after the kernel's code
]
PASS_NAMES = [p.name for p in PASSES]


@dataclass
class Options:
    arch: str = "sm_89"
    print_after: set = field(default_factory=set)   # pass names, or {"*"} for all
    disabled: set = field(default_factory=set)
    filename: str = "<ptx>"
    printer: Callable | None = None                  # (pass name, function) -> None
    module_vars: ModuleVars | None = None            # the module's .shared/.const/.global variables
    max_regs: int | None = None                      # -maxrregcount: registers per thread at most
    functions: tuple = ()                            # the module's functions (inline_calls' callees)


def check_pass_names(names, option: str) -> None:
    for name in names:
        if name not in PASS_NAMES:
            raise CompileError(Diagnostic(f"{option}: unknown pass '{name}' (passes: {', '.join(PASS_NAMES)})"))
        p = next(p for p in PASSES if p.name == name)
        if option == "--disable-pass" and p.required:
            reason = f" ({p.why})" if p.why else ""
            raise CompileError(Diagnostic(f"--disable-pass: pass '{name}' is required and cannot be disabled{reason}"))


def lower_function(ptx_func: ptx.Function, options: Options, subroutine: bool = False):
    """Run every function pass on one kernel (or, with subroutine, on a .func that
    link_calls places after a kernel); return its SASS IR function (physical registers,
    control codes).  The module passes are lower_module's."""
    func = None
    for p in PASSES:
        if p.name in options.disabled or (subroutine and p.kernel_only) or p.module:
            continue
        if p.ptx:
            ptx_func = p.run(ptx_func, options.functions, options.filename)
            _print_after(p.name, ptx_func, options, print_ptx)
            continue
        if p.run is None:
            func = select_instrs(ptx_func, options.arch, options.filename, options.module_vars)
            if options.max_regs:
                limit = func.info.max_reg_count
                func.info.max_reg_count = min(limit, options.max_regs) if limit else options.max_regs
        elif p.name == "set_control_codes":
            p.run(func, options.arch)
        else:
            p.run(func)
        _print_after(p.name, func, options)
    return func


def _print_after(name: str, func, options: Options, printer: Callable | None = None) -> None:
    if options.printer and ("*" in options.print_after or name in options.print_after):
        (printer or options.printer)(name, func)


class Subroutines:
    """The module's `.func`s kept as subroutines, each lowered once, on first use, by
    lower_function with the module's Options; every kernel that calls one gets its own
    copy (link_calls renames its labels and sets its return addresses in place).  A
    subroutine that cannot be lowered raises its error for every kernel that calls it."""

    def __init__(self, functions: dict, options: Options):
        self.functions, self.options = functions, options
        self.lowered = {}

    def lower(self, name: str):
        if name not in self.lowered:
            try:
                self.lowered[name] = lower_function(self.functions[name], self.options, subroutine=True)
            except Exception as exc:   # noqa: BLE001 - kept, raised again for each caller
                self.lowered[name] = exc
        sub = self.lowered[name]
        if isinstance(sub, Exception):
            raise sub
        shared = [getattr(sub, name) for name in ("call_context", "module_vars") if hasattr(sub, name)]
        return deepcopy(sub, {id(obj): obj for obj in shared})   # the module's facts stay shared


def lower_module(module: ptx.Module, options: Options, failed: dict | None = None) -> list:
    """[(kernel name, SASS IR function)] of the module's kernels, in order, each joined with
    its subroutines.  With `failed` (a dict), a kernel whose lowering raises is left out
    and the exception kept there by name instead of raised."""
    from .inline_calls import functions_by_name
    options = replace(options, module_vars=ModuleVars.of(module.globals, module.functions), functions=tuple(module.functions))
    subroutines = Subroutines(functions_by_name(options.functions), options)
    lowered = []
    for ptx_func in module.kernels():
        try:
            func = lower_function(ptx_func, options)
            for p in PASSES:
                if p.module and p.name not in options.disabled:
                    p.run(func, subroutines)
                    _print_after(p.name, func, options)
        except Exception as exc:
            if failed is None:
                raise
            failed[ptx_func.name] = exc
            continue
        lowered.append((ptx_func.name, func))
    return lowered


def print_ptx(pass_name: str, func: ptx.Function) -> None:
    """The PTX function after a PTX pass, on stderr, as --print-after shows SASS IR."""
    from ..ptx.printer import format_function
    print(f"# *** PTX after {pass_name} ({func.name}) ***", file=sys.stderr)
    for line in format_function(func):
        if line.strip() and not line.startswith("\t// .globl"):
            indent = "    " if line.startswith("\t") else ""
            print(indent + " ".join(line.split()), file=sys.stderr)
