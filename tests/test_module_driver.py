"""The module driver (ptxc.lower.pipeline.lower_module): kernels and subroutines go
through the same pass list with the same options, so the pass flags and -maxrregcount
reach a `.func` kept as a call (issue 20: `--print-after-all` on call_recursive.ptx
printed no dump of `_Z3fibi`)."""
from __future__ import annotations

import re
from pathlib import Path

from ptxc.cli import main
from ptxc.lower.pipeline import PASSES

ROOT = Path(__file__).resolve().parent.parent
RECURSIVE = ROOT / "testsuite" / "lower" / "call_recursive.ptx"
HEADER = re.compile(r"^# \*\*\* (?:SASS IR|PTX) after (\w+) \((\S+)\) \*\*\*$", re.M)


def _dumps(capsys, *flags) -> list:
    """[(pass, function)] of the dumps `ptxc call_recursive.ptx --emit=sass FLAGS` prints."""
    assert main([str(RECURSIVE), "--emit=sass", "-o", "/dev/null", *flags]) == 0
    return HEADER.findall(capsys.readouterr().err)


def test_print_after_all_dumps_every_function(capsys):
    dumps = _dumps(capsys, "--print-after-all")
    by_function = {}
    for name, function in dumps:
        by_function.setdefault(function, []).append(name)
    subroutine_passes = [p.name for p in PASSES if not p.kernel_only]
    kernel_passes = [p.name for p in PASSES]
    assert by_function == {"recursive_fib": kernel_passes, "_Z3fibi": subroutine_passes}
    # the callee is lowered while its caller is linked: its dumps come before link_calls'
    assert dumps.index(("link_calls", "recursive_fib")) == len(dumps) - 1


def test_print_after_and_disable_pass_reach_the_subroutine(capsys):
    assert _dumps(capsys, "--print-after=assign_regs") == [("assign_regs", "recursive_fib"),
                                                           ("assign_regs", "_Z3fibi")]
    optional = next(p.name for p in PASSES if not p.required and not p.kernel_only)
    with_pass = _dumps(capsys, "--print-after-all")
    without = _dumps(capsys, "--print-after-all", f"--disable-pass={optional}")
    assert (optional, "_Z3fibi") in with_pass and (optional, "_Z3fibi") not in without


def test_max_regs_reaches_the_subroutine():
    """Options.max_regs (-maxrregcount) bounds the subroutine's registers as the kernel's."""
    from ptxc.lower.pipeline import Options, lower_module
    from ptxc.ptx.parser import parse_ptx
    seen = []
    options = Options(filename=str(RECURSIVE), max_regs=24, print_after={"select_instrs"},
                      printer=lambda name, func: seen.append((func.name, func.info.max_reg_count)))
    lower_module(parse_ptx(RECURSIVE.read_text(), str(RECURSIVE)), options)
    assert seen == [("recursive_fib", 24), ("_Z3fibi", 24)]
