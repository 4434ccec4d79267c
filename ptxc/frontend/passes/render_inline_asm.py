"""render_inline_asm: inline PTX becomes its text, with the final register names.

Codegen leaves `asm("...")` as an `inline.asm` pseudo-instruction carrying the template
(`instr.asm = (template, number of outputs)`) and its operands (outputs, then inputs).
After number_registers has named every register, this writes the template with %0,
%1 ... replaced by the operands and %% by %, between the comments NVVM puts around
inline asm.  Expects: registers named (ptx.ir.Reg).  Guarantees: no pseudo-instruction
is left; the text is printed as it is (ptxas parses it).
"""
from __future__ import annotations

import re

from ...ptx import ir
from ...ptx.printer import format_operand


def render_inline_asm(cg, func: ir.Function) -> None:
    if not getattr(cg, "has_asm", False):
        return
    for k, item in enumerate(func.body):
        if isinstance(item, ir.Instr) and item.opcode == "inline.asm":
            func.body[k] = ir.Instr(_render(item.asm[0], item.operands), [])


def _render(template: str, operands: list) -> str:
    def substitute(m: re.Match) -> str:
        if m.group(0) == "%%":
            return "%"
        return format_operand(operands[int(m.group(1))])
    text = re.sub(r"%%|%(\d+)", substitute, template).strip().rstrip(";")
    text = text.replace("\n", "\n\t")
    end = "" if text.endswith("}") else ";"
    return f"// begin inline asm\n\t{text}{end}\n\t// end inline asm"
