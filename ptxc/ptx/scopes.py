"""Nested `{ }` scopes of a PTX function body, flattened while the parser builds them.

A scope may declare registers, variables, `.param` buffers and call prototypes whose
names shadow the function's: nvcc's inline asm writes `{ .reg .pred %p1; ... }` in a
function that has its own `%p1`, and every `{ // callseq N }` declares its own
`param0`.  flatten_into renames each name a scope declares to one unique in its
function (`%p1` -> `%__s3_p1`, `p` -> `%__s3_p`, `param0` -> `__s3_param0`), in the
declarations and in the scope's instructions, then appends the scope to its parent.

Expects: a child scope complete (its own nested scopes already flattened).
Guarantees: the flat body means what the nested one meant; every renamed register has
a `%` name; a register declared without `%` is a Reg (never a Symbol) where it is used.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from . import ir


@dataclass
class Scope:
    """What one `{ }` holds: its own declarations, its instructions and labels in order
    (those of flattened inner scopes included), and the inner scopes flattened into it
    (renamed already; kept apart so that only this scope's own names are renamed)."""
    regs: list[ir.RegDecl] = field(default_factory=list)
    vars: list[ir.Variable] = field(default_factory=list)
    call_params: list[ir.Param] = field(default_factory=list)
    prototypes: list[ir.CallPrototype] = field(default_factory=list)
    items: list = field(default_factory=list)
    inner: list["Scope"] = field(default_factory=list)


class Renaming:
    """The names a scope declares, each mapped to its new name.

    `tag` is the prefix that makes the names unique (`__s3_`); tag None keeps every
    name and only turns uses of `%`-less registers into Regs (a function's own scope).
    """

    def __init__(self, scope: Scope, tag: str | None):
        new_reg = (lambda name: name) if tag is None else (lambda name: "%" + tag + name.lstrip("%"))
        new_symbol = (lambda name: name) if tag is None else (lambda name: tag + name)
        self.regs = {d.prefix: new_reg(d.prefix) for d in scope.regs if d.count is None}
        self.ranges = {d.prefix: (new_reg(d.prefix), d.count) for d in scope.regs if d.count is not None}
        self.symbols = {x.name: new_symbol(x.name) for x in (*scope.vars, *scope.call_params, *scope.prototypes)}

    def reg_name(self, name: str) -> str | None:
        """The new name of a register this scope declares (`%r2` of `%r<4>` too); None if not its own."""
        if name in self.regs:
            return self.regs[name]
        m = re.fullmatch(r"(%[A-Za-z_$][\w$]*?)(\d+)", name)
        if m and m.group(1) in self.ranges:
            new_prefix, count = self.ranges[m.group(1)]
            if int(m.group(2)) < count:
                return new_prefix + m.group(2)
        return None

    def operand(self, op):
        """`op` with this scope's names replaced; other operands unchanged."""
        if isinstance(op, ir.Reg):
            return ir.Reg(self.reg_name(op.name) or op.name)
        if isinstance(op, ir.Symbol):
            reg = self.reg_name(op.name)
            if reg is not None:
                return ir.Reg(reg)
            return ir.Symbol(self.symbols.get(op.name, op.name))
        if isinstance(op, ir.NotReg):
            return ir.NotReg(self.operand(op.reg))
        if isinstance(op, ir.RegPair):
            return ir.RegPair(self.operand(op.first), self.operand(op.second))
        if isinstance(op, ir.Address):
            return replace(op, base=self.operand(op.base))
        if isinstance(op, (ir.Vector, ir.OperandList)):
            return replace(op, elems=tuple(self.operand(e) for e in op.elems))
        return op

    def instr(self, instr: ir.Instr) -> None:
        """Rename the operands and guard of `instr` in place."""
        instr.operands = [self.operand(op) for op in instr.operands]
        if instr.guard is not None:
            instr.guard = self.operand(instr.guard)

    def apply(self, scope: Scope) -> None:
        """Rename the scope's declarations and uses in place."""
        scope.regs = [replace(d, prefix=self.regs[d.prefix] if d.count is None else self.ranges[d.prefix][0])
                      for d in scope.regs]
        scope.vars = [replace(v, name=self.symbols[v.name]) for v in scope.vars]
        scope.call_params = [replace(p, name=self.symbols[p.name]) for p in scope.call_params]
        scope.prototypes = [replace(p, name=self.symbols[p.name]) for p in scope.prototypes]
        for item in scope.items:
            if isinstance(item, ir.Instr):
                self.instr(item)


def flatten_into(parent: Scope, child: Scope, tag: str) -> None:
    """Rename what `child` declares with `tag` and append its code to `parent`'s."""
    Renaming(child, tag).apply(child)
    parent.items += child.items
    parent.inner += [child] + child.inner
    child.inner = []


def flatten_function_body(scope: Scope) -> Scope:
    """A function's own `{ }`: its names stay (uses of `%`-less registers become Regs)
    and the declarations of every inner scope join its own, in order."""
    Renaming(scope, None).apply(scope)
    for inner in scope.inner:
        scope.regs += inner.regs
        scope.vars += inner.vars
        scope.call_params += inner.call_params
        scope.prototypes += inner.prototypes
    scope.inner = []
    return scope
