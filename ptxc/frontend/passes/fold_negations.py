"""fold_negations: float negations fold into the adds, subtracts and products they feed, as
LLVM's InstCombine and DAGCombiner fold them before NVPTX contracts.

Each rewrite is exact (IEEE negation only flips a sign), but it decides what
`fuse_multiply_add` sees afterwards, and so the bits of the result: `a - (-(a*a))` is
`a + a*a`, one fma in nvcc's code; `c*a + (-(e+a))` is `c*a - (e+a)`, which NVPTX
does not contract.  The rules, for f32 and f64 (measured against nvcc 13.5 by
tests/test_frontend_fma.py's generated expressions):

* `x + (-y)` -> `x - y`; `(-x) + y` -> `y - x`; `x - (-y)` -> `x + y`; `-(-x)` -> `x`
* `x - C` -> `x + (-C)` (a constant)
* `x - y*C` -> `x + y*(-C)`; `C - (a - b)` -> `(b - a) + C` (C a nonzero constant)
* `(-x) * (-y)` -> `x * y`; `(-x) * y` -> `-(x * y)` (the negation hoisted, so that the
  sum it reaches folds it), or `x * (y*(-C))` where y is `y*C`; `(-x) * C` -> `x * (-C)`;
  `x * -1.0` -> `-x`; `-(x * C)` -> `x * (-C)`; `-((x * C) * y)` -> `(x * -C) * y`
  (a product by 2.0 is `x + x` to NVPTX's DAG first, so it takes no negation)

Expects: vir blocks after propagate_copies (a register defined once in its block is the
value of that definition); instructions of cg.frozen (libdevice's) untouched.
Guarantees: the same values in the same registers; negations left without readers are
removed by eliminate_dead_code, which runs next; `cg.uses` is None after a rewrite
(the following passes count reads again).
"""
from __future__ import annotations

from ...ptx import ir
from ..vir import VReg

Imm = ir.Imm
_TYPES = ("f32", "f64")


def fold_negations(cg, func: ir.Function) -> None:
    if not cg.multiplies and not _has_negation(cg):
        return
    frozen, mutable = cg.frozen, cg.mutable
    reads = _read_counts(cg)
    changed = False
    for block in cg.blocks:
        defs: dict = {}     # register -> the instruction of this block that defines it
        out = []
        for instr in block.instrs:
            op = instr.opcode
            dot = op.find(".")
            base, suffix = op[:dot], op[dot + 1:]
            if suffix in _TYPES and instr.guard is None and id(instr) not in frozen and \
                    base in ("add", "sub", "mul", "neg"):
                new = _rewrite(cg, base, suffix, instr, defs, reads, mutable)
                for _ in range(4):  # (what a rewrite gives may fold again: `(-d) - (-d)` is `d - d`)
                    if new is None:
                        break
                    last = new[-1]
                    for n in new[:-1]:
                        defs[n.operands[0]] = n
                    again = _rewrite(cg, last.opcode.partition(".")[0], suffix, last, defs, reads, mutable)
                    if again is None:
                        break
                    new = new[:-1] + again
                if new is not None:
                    changed = True
                    out.extend(new)
                    for n in new:
                        if n.operands and n.operands[0].__class__ is VReg:
                            defs[n.operands[0]] = n
                    continue
            out.append(instr)
            ops = instr.operands
            if ops and ops[0].__class__ is VReg and ops[0] not in mutable:
                defs[ops[0]] = instr
        block.instrs = out
    if changed:
        cg.uses = None


def _has_negation(cg) -> bool:
    return any(i.opcode in ("neg.f32", "neg.f64", "sub.f32", "sub.f64") for b in cg.blocks for i in b.instrs)


def _read_counts(cg) -> dict:
    from ..vir import instr_uses
    counts: dict = {}
    for block in cg.blocks:
        for instr in block.instrs:
            for reg in instr_uses(instr):
                counts[reg] = counts.get(reg, 0) + 1
    return counts


def _negated_constant(value: Imm) -> Imm:
    return Imm(-value.value, value.type) if isinstance(value.value, float) else None


def _rewrite(cg, base: str, t: str, instr: ir.Instr, defs: dict, reads: dict, mutable) -> list | None:
    """The instructions that replace `instr`, or None to keep it."""
    ops = instr.operands
    dst = ops[0]

    def neg_source(value):
        """x if `value` is `-x` computed in this block."""
        d = defs.get(value) if value.__class__ is VReg else None
        return d.operands[1] if d is not None and d.opcode == "neg." + t else None

    def single(value) -> bool:
        return reads.get(value, 0) == 1

    def scaled_factor(value):
        """(y, -C) if `value` is `y * C` computed in this block and read only here."""
        d = defs.get(value) if value.__class__ is VReg else None
        if d is None or d.opcode != f"mul.{t}" or not single(value) or id(d) in cg.frozen:
            return None
        c = _negated_constant(d.operands[2]) if d.operands[2].__class__ is Imm else None
        if c is None or c.value == -2.0:     # (x * 2.0 is x + x to the DAG before this would apply)
            return None
        return d.operands[1], c

    if base == "add":
        x, y = ops[1], ops[2]
        ny = neg_source(y)
        if ny is not None:
            return [ir.Instr(f"sub.{t}", [dst, x, ny])]
        nx = neg_source(x)
        if nx is not None:
            return [ir.Instr(f"sub.{t}", [dst, y, nx])]
        return None
    if base == "sub":
        x, y = ops[1], ops[2]
        ny = neg_source(y)
        if ny is not None:
            return [ir.Instr(f"add.{t}", [dst, x, ny])]
        if y.__class__ is Imm:
            c = _negated_constant(y)
            if c is not None:
                return [ir.Instr(f"add.{t}", [dst, x, c])]
            return None
        scaled = scaled_factor(y)
        if scaled is not None:      # x - y*C -> x + y*(-C)
            product = cg.new_reg(dst.cls)
            return [ir.Instr(f"mul.{t}", [product, scaled[0], scaled[1]]), ir.Instr(f"add.{t}", [dst, x, product])]
        d = defs.get(y)
        if x.__class__ is Imm and x.value != 0 and d is not None and d.opcode == f"sub.{t}" and single(y) and \
                id(d) not in cg.frozen:    # C - (a - b) -> (b - a) + C (exact for C != 0)
            diff = cg.new_reg(dst.cls)
            return [ir.Instr(f"sub.{t}", [diff, d.operands[2], d.operands[1]]), ir.Instr(f"add.{t}", [dst, diff, x])]
        return None
    if base == "mul":
        x, y = ops[1], ops[2]
        if y.__class__ is Imm and y.value == -1.0:      # x * -1.0 -> -x
            return [ir.Instr(f"neg.{t}", [dst, x])]
        nx = neg_source(x)
        if nx is not None and y.__class__ is Imm and (c := _negated_constant(y)) is not None:
            return [ir.Instr(f"mul.{t}", [dst, nx, c])]     # (-x) * C -> x * (-C)
        nx, ny = neg_source(x), neg_source(y)
        if nx is not None and ny is not None and single(x) and single(y):
            return [ir.Instr(f"mul.{t}", [dst, nx, ny])]
        for neg_in, other in ((x, y), (y, x)):
            n = neg_source(neg_in)
            if n is None or not single(neg_in):
                continue
            scaled = scaled_factor(other)
            if scaled is not None:    # (-x) * (y*C) -> x * (y*(-C))
                product = cg.new_reg(dst.cls)
                args = [dst, n, product] if neg_in is x else [dst, product, n]
                return [ir.Instr(f"mul.{t}", [product, scaled[0], scaled[1]]), ir.Instr(f"mul.{t}", args)]
            if other.__class__ is VReg:
                product = cg.new_reg(dst.cls)
                args = [product, n, other] if neg_in is x else [product, other, n]
                return [ir.Instr(f"mul.{t}", args), ir.Instr(f"neg.{t}", [dst, product])]
        return None
    # neg
    src = ops[1]
    inner = defs.get(src) if src.__class__ is VReg else None
    if inner is None or not single(src) or id(inner) in cg.frozen:
        return None
    if inner.opcode == f"neg.{t}":
        return [ir.Instr(f"mov.{t}", [dst, inner.operands[1]])]
    if inner.opcode == f"mul.{t}":
        a, b = inner.operands[1], inner.operands[2]
        if b.__class__ is Imm and (c := _negated_constant(b)) is not None:
            return [ir.Instr(f"mul.{t}", [dst, a, c])]
        for factor, other in ((a, b), (b, a)):
            d = defs.get(factor) if factor.__class__ is VReg else None
            if d is not None and d.opcode == f"mul.{t}" and single(factor) and id(d) not in cg.frozen and \
                    d.operands[2].__class__ is Imm and (c := _negated_constant(d.operands[2])) is not None:
                scaled = cg.new_reg(dst.cls)
                return [ir.Instr(f"mul.{t}", [scaled, d.operands[1], c]), ir.Instr(f"mul.{t}", [dst, scaled, other])]
    return None
