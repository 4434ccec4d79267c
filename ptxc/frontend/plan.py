"""Decisions made before emitting a function body: what lives in memory, what unrolls.

Input: the typed AST of one function definition (sema done).  Output: a `BodyPlan`:

* `unroll`: for each `for` loop that NVVM would unroll fully, the values its induction
  variable takes (`for (int k = 0; k < 4; k++)` -> [0, 1, 2, 3]).  A loop unrolls when
  its trip count is a compile-time constant and it is small (trip count x body size
  within LLVM's -O3 threshold), or when `#pragma unroll` asks (`#pragma unroll 1`
  forbids it).  The induction variable must be declared by the loop and not written
  in its body.
* `in_memory`: the local variables that need the local memory frame (NVVM's
  `__local_depot`): aggregates (arrays, structs) indexed with a value that is not a
  compile-time constant once loops are unrolled, or whose address escapes (`&a[i]`,
  an array passed as a pointer), and scalars whose address is taken.  Every other
  local aggregate is split into one register per scalar field, as LLVM's SROA does.
* `written`: local aggregates assigned after their declaration (whole or in part);
  the others are names for their initial value.
"""
from __future__ import annotations

import dataclasses

from . import ast as A
from . import sema as S

# LLVM's full-unroll threshold at -O3 (UnrollThresholdAggressive), in its own units:
# one unit per instruction of the unrolled body, estimated here as AST operations.
UNROLL_THRESHOLD = 300
MAX_TRIP_COUNT = 64          # without a pragma
MAX_PRAGMA_TRIP_COUNT = 1024  # with `#pragma unroll`


@dataclasses.dataclass
class BodyPlan:
    unroll: dict = dataclasses.field(default_factory=dict)     # id(ForStmt) -> [values]
    in_memory: set = dataclasses.field(default_factory=set)    # VarSymbols
    written: set = dataclasses.field(default_factory=set)      # VarSymbols (aggregates)


def is_aggregate(t: S.Type) -> bool:
    return isinstance(t, (S.StructType, S.ArrayType))


_FIELDS: dict[type, tuple] = {}
# Fields that never hold a node: sema's annotations, and those declared as plain scalars.
_NOT_CHILDREN = frozenset({"loc", "type", "symbol", "callee", "compute_type", "const_value"})
_SCALAR_ANNOTATIONS = frozenset({"str", "int", "bool", "float"})
# Lists that never hold a node: keywords and strings, (line, text) pairs, symbols.
_WORD_LISTS = frozenset({(A.DeclSpecifiers, "storage"), (A.DeclSpecifiers, "qualifiers"),
                         (A.DeclSpecifiers, "function_specs"), (A.DeclSpecifiers, "exec_spaces"),
                         (A.DeclSpecifiers, "memory_spaces"), (A.PointerDeriv, "qualifiers"),
                         (A.AsmStmt, "clobbers"), (A.TranslationUnit, "pragmas"),
                         (A.FunctionDef, "param_symbols")})


def _child_fields(cls) -> tuple:
    names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls)
                                 if f.name not in _NOT_CHILDREN and f.type not in _SCALAR_ANNOTATIONS
                                 and (cls, f.name) not in _WORD_LISTS)
    return names


_Node = A.Node


def _make_children(cls):
    """`children` for one node class: its child fields read one after the other, the
    code written out once per class (no loop over field names, no getattr)."""
    lines = ["def children_of(node):", "    out = []"]
    for name in _child_fields(cls):
        lines += [f"    value = node.{name}",
                  "    if isinstance(value, _Node):",
                  "        out.append(value)",
                  "    elif value.__class__ is list:",
                  "        for item in value:",
                  "            if isinstance(item, _Node):",
                  "                out.append(item)",
                  "            elif isinstance(item, tuple):  # asm operands: (constraint, expr)",
                  "                out.extend(x for x in item if isinstance(x, _Node))"]
    lines.append("    return out")
    namespace = {"_Node": _Node}
    exec("\n".join(lines), namespace)
    return namespace["children_of"]


class _ChildrenOf(dict):
    """Node class -> its `children` function, made on first need."""

    def __missing__(self, cls):
        found = self[cls] = _make_children(cls)
        return found


# Walks index it (`CHILDREN_OF[node.__class__](node)`), one call less than `children`.
CHILDREN_OF = _ChildrenOf()


def children(node):
    """The AST nodes directly inside `node` (lists flattened)."""
    return CHILDREN_OF[node.__class__](node)


def _make_pusher(cls):
    """Planner.visit's step for one node class: push its children that have children of
    their own onto the walk's stack, last first (so they pop in source order); no list
    of children is built, no leaf pushed."""
    lines = ["def push_children(node, stack):", "    push = stack.append"]
    for name in reversed(_child_fields(cls)):
        lines += [f"    value = node.{name}",
                  "    if value.__class__ in _INNER:",
                  "        push(value)",
                  "    elif value.__class__ is list:",
                  "        for item in reversed(value):",
                  "            if item.__class__ in _INNER:",
                  "                push(item)",
                  "            elif isinstance(item, tuple):  # asm operands: (constraint, expr)",
                  "                for x in reversed(item):",
                  "                    if x.__class__ in _INNER:",
                  "                        push(x)"]
    namespace = {"_INNER": _INNER}
    exec("\n".join(lines), namespace)
    return namespace["push_children"]


class _Pushers(dict):
    """Node class -> its `push_children` function, made on first need."""

    def __missing__(self, cls):
        found = self[cls] = _make_pusher(cls)
        return found


# Walks that only need to see every inner node once, in any order, use it too.
PUSH_CHILDREN = _Pushers()


# The node classes without child nodes (names, literals): the walk skips them; and the
# others (every node class of ast.py: no node is of a class defined elsewhere).
_LEAVES = frozenset(cls for cls in vars(A).values()
                    if isinstance(cls, type) and issubclass(cls, A.Node) and dataclasses.is_dataclass(cls)
                    and not _child_fields(cls))
_INNER = frozenset(cls for cls in vars(A).values()
                   if isinstance(cls, type) and issubclass(cls, A.Node) and cls not in _LEAVES)


def strip_casts(expr):
    while isinstance(expr, A.ImplicitCast):
        expr = expr.operand
    return expr


def local_root(expr):
    """The local variable an lvalue path (`v`, `v.f`, `v[i]`, `v.a[i].b`) starts at."""
    while True:
        if isinstance(expr, A.Ident):
            sym = expr.symbol
            return sym if isinstance(sym, S.VarSymbol) and sym.kind in ("local", "param") else None
        if isinstance(expr, A.Member) and not expr.arrow:
            expr = expr.base
        elif isinstance(expr, A.Index):
            base = expr.base
            if isinstance(base, A.ImplicitCast) and isinstance(base.operand.type, S.ArrayType):
                expr = base.operand
            else:
                return None
        else:
            return None


class Planner:
    def __init__(self, pragmas: dict[int, str] | None = None, deref_cache: dict | None = None):
        self.plan = BodyPlan()
        self.pragmas = pragmas or {}
        self.deref_cache = deref_cache if deref_cache is not None else {}
        self.constants: set = set()   # induction variables of unrolled loops being scanned

    # ---- the walk ----------------------------------------------------------------------
    def visit(self, node) -> None:
        # Depth first, in source order, with a stack of the nodes still to see (one call
        # per special node, not per node); one table lookup per node instead of a chain of
        # isinstance tests: most nodes only need their children walked.
        stack = [node]
        pop = stack.pop
        while stack:
            node = pop()
            cls = node.__class__
            if cls in _LEAVES:   # (nothing to see in a leaf)
                continue
            special = _VISITS.get(cls)
            if special is None or special(self, node):
                PUSH_CHILDREN[cls](node, stack)

    # The handlers of _VISITS: each returns True when the node's children still need
    # the plain walk.
    def visit_array_decay(self, node: A.ImplicitCast) -> bool:
        if isinstance(node.operand.type, S.ArrayType):
            self.escape(node.operand)   # an array used as a pointer
        return True

    def visit_address_of(self, node: A.Unary) -> bool:
        if node.op == "&":
            self.escape(node.operand)
        return True

    def visit_write(self, node) -> bool:
        target = node.target if isinstance(node, A.Assign) else node.operand
        root = local_root(target)
        if root is not None and is_aggregate(root.type):
            self.plan.written.add(root)
        return True

    def visit_asm(self, node: A.AsmStmt) -> bool:
        for _, expr in node.outputs:
            root = local_root(expr)
            if root is not None and is_aggregate(root.type):
                self.plan.written.add(root)
        return True

    def visit_any_call(self, node: A.Call) -> bool:
        if node.callee is not None and node.callee.definition is not None and node.callee.builtin is None:
            self.visit_call(node)
            return False
        return True

    def visit_call(self, node: A.Call) -> None:
        """`f(&x)` where f only dereferences that parameter: x can stay in registers
        (after inlining, `*p` is x itself, as SROA makes it)."""
        self.visit(node.func)
        fdef = node.callee.definition
        for k, arg in enumerate(node.args):
            inner = arg
            while isinstance(inner, A.ImplicitCast) and S.is_pointer(inner.type):
                inner = inner.operand
            if isinstance(inner, A.Unary) and inner.op == "&" and local_root(inner.operand) is not None \
                    and k < len(fdef.param_symbols) and deref_only(fdef, k, self.deref_cache):
                root = local_root(inner.operand)
                self.plan.written.add(root)
                self.visit_path(inner.operand)
            else:
                self.visit(arg)

    def visit_index(self, node: A.Index) -> bool:
        base = node.base
        root = None
        if isinstance(base, A.ImplicitCast) and isinstance(base.operand.type, S.ArrayType):
            root = local_root(base.operand)
            if root is not None and not self.constant(node.index):
                self.plan.in_memory.add(root)
            self.visit_path(base.operand)
        else:
            self.visit(base)
        self.visit(node.index)
        return False

    def visit_path(self, expr) -> None:
        """The base of an index: walk it without counting its decay as an escape."""
        if isinstance(expr, A.Index):
            self.visit_index(expr)
        elif isinstance(expr, A.Member) and not expr.arrow:
            self.visit_path(expr.base)
        else:
            self.visit(expr)

    def escape(self, expr) -> None:
        root = local_root(expr)
        if root is not None:
            self.plan.in_memory.add(root)

    def constant(self, expr) -> bool:
        """Is `expr` a compile-time constant once the enclosing loops are unrolled?"""
        if S.constant_value(expr) is not None:
            return True
        if isinstance(expr, (A.ImplicitCast, A.Cast)):
            return self.constant(expr.operand)
        if isinstance(expr, A.Ident):
            return expr.symbol in self.constants
        if isinstance(expr, A.Unary):
            return expr.op in "-+~" and self.constant(expr.operand)
        if isinstance(expr, A.Binary):
            return expr.op not in ("&&", "||") and self.constant(expr.lhs) and self.constant(expr.rhs)
        return False

    # ---- loops -------------------------------------------------------------------------
    def visit_for(self, stmt: A.ForStmt) -> bool:
        values = self.plan_loop(stmt)
        if stmt.init is not None:
            self.visit(stmt.init)
        for part in (stmt.cond, stmt.step):
            if part is not None:
                self.visit(part)
        if values is None:
            self.visit(stmt.body)
            return False
        sym = stmt.init.declarators[0].symbol
        self.constants.add(sym)
        self.visit(stmt.body)
        self.constants.discard(sym)
        return False

    def plan_loop(self, stmt: A.ForStmt):
        """Decide whether `stmt` unrolls (into plan.unroll); its induction values or None."""
        values = self.trip_values(stmt)
        pragma = self.pragmas.get(stmt.loc[0])
        if values is not None:
            limit = _pragma_count(pragma)
            if limit == 1:
                values = None
            elif limit is None and len(values) > MAX_TRIP_COUNT:
                values = None
            elif limit is not None and len(values) > limit:
                values = None
            elif limit is None and values and \
                    len(values) * body_cost(stmt.body, UNROLL_THRESHOLD // len(values)) > UNROLL_THRESHOLD:
                values = None
        if values is not None:
            self.plan.unroll[id(stmt)] = values
        return values

    def trip_values(self, stmt: A.ForStmt):
        """The values of the induction variable, if the loop runs a constant number of
        times: `for (int k = C0; k < C1; k += C)` and the like."""
        init = stmt.init
        if not (isinstance(init, A.Declaration) and len(init.declarators) == 1):
            return None
        decl = init.declarators[0]
        sym = decl.symbol
        if sym is None or not isinstance(sym.type, S.IntType) or sym.type.name == "bool" or decl.init is None:
            return None
        start = S.constant_value(decl.init)
        if not isinstance(start, int) or stmt.cond is None or stmt.step is None:
            return None
        cond = strip_casts(stmt.cond)
        if not (isinstance(cond, A.Binary) and cond.op in ("<", "<=", ">", ">=", "!=")):
            return None
        op, lhs, rhs = cond.op, strip_casts(cond.lhs), cond.rhs
        if not (isinstance(lhs, A.Ident) and lhs.symbol is sym):
            return None
        limit = S.constant_value(rhs)
        if not isinstance(limit, (int, float)):
            return None
        step = _step_function(stmt.step, sym)
        # (sema counts every write of sym: one is the step, so only a count above one
        # needs the body searched)
        if step is None or sym.address_taken or (sym.assign_count > 1 and _writes(stmt.body, sym)):
            return None
        compare = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
                   ">=": lambda a, b: a >= b, "!=": lambda a, b: a != b}[op]
        values = []
        value = start
        while compare(value, limit):
            values.append(value)
            if len(values) > MAX_PRAGMA_TRIP_COUNT:
                return None
            value = S.convert_constant(step(value), sym.type)
        return values


# Node class -> the Planner method that looks at it (the others are only walked).
_VISITS = {
    A.ForStmt: Planner.visit_for, A.Index: Planner.visit_index, A.ImplicitCast: Planner.visit_array_decay,
    A.Unary: Planner.visit_address_of, A.Assign: Planner.visit_write, A.PreIncDec: Planner.visit_write,
    A.PostIncDec: Planner.visit_write, A.AsmStmt: Planner.visit_asm, A.Call: Planner.visit_any_call,
}


def deref_only(fdef: A.FunctionDef, index: int, cache: dict) -> bool:
    """Does function `fdef` use its pointer parameter `index` only to reach the object
    it points to (`*p`, `p->f`, `p[0]`, or passing it on to such a parameter)?
    `cache` (per compilation) remembers the answers, keyed by the parameter's symbol."""
    psym = fdef.param_symbols[index]
    found = cache.get(psym)
    if found is None:
        cache[psym] = False  # recursion: assume not while deciding
        found = S.is_pointer(psym.type) and psym.assign_count == 0 and not psym.address_taken \
            and _uses_are_derefs(fdef.body, None, psym, cache, getattr(fdef.symbol, "returns_ref", False))
        cache[psym] = found
    return found


def _uses_are_derefs(node, parent, psym, cache, returns_ref=False) -> bool:
    if isinstance(node, A.Ident) and node.symbol is psym:
        if isinstance(parent, A.Unary) and parent.op == "*":
            return True
        if isinstance(parent, A.Member) and parent.arrow:
            return True
        if isinstance(parent, A.Index) and parent.base is node and S.constant_value(parent.index) == 0:
            return True
        if isinstance(parent, A.Call) and parent.callee is not None and parent.callee.definition is not None \
                and parent.callee.builtin is None:
            k = next(i for i, a in enumerate(parent.args) if strip_pointer_casts(a) is node)
            return deref_only(parent.callee.definition, k, cache)
        if isinstance(parent, A.ImplicitCast) and S.is_pointer(parent.type):
            return True  # checked again at the cast's own parent
        if isinstance(parent, A.ReturnStmt) and returns_ref:
            return True  # `return *this;` of a `T&` function: its caller reads the result through `*`
        return False
    if isinstance(node, A.ImplicitCast) and S.is_pointer(node.type) and isinstance(node.operand, A.Ident) \
            and node.operand.symbol is psym:
        return _uses_are_derefs(node.operand, parent, psym, cache, returns_ref)
    return all(_uses_are_derefs(child, node, psym, cache, returns_ref) for child in CHILDREN_OF[node.__class__](node))


def strip_pointer_casts(expr):
    while isinstance(expr, A.ImplicitCast) and S.is_pointer(expr.type):
        expr = expr.operand
    return expr


def _pragma_count(pragma: str | None) -> int | None:
    """None: no pragma; 0: `#pragma unroll` (no count); N: `#pragma unroll N`."""
    if pragma is None:
        return None
    words = pragma.split()
    if len(words) >= 2 and words[1].isdigit():
        return int(words[1])
    return MAX_PRAGMA_TRIP_COUNT


def _step_function(step, sym):
    step = strip_casts(step)
    if isinstance(step, (A.PreIncDec, A.PostIncDec)) and isinstance(step.operand, A.Ident) \
            and step.operand.symbol is sym:
        return (lambda v: v + 1) if step.op == "++" else (lambda v: v - 1)
    if isinstance(step, A.Assign) and isinstance(step.target, A.Ident) and step.target.symbol is sym:
        c = S.constant_value(step.value)
        if not isinstance(c, int):
            return None
        return {"+=": lambda v: v + c, "-=": lambda v: v - c, "*=": lambda v: v * c,
                "<<=": lambda v: v << c, ">>=": lambda v: v >> c}.get(step.op)
    return None


def _writes(node, sym) -> bool:
    """Is `sym` assigned (or its address taken) anywhere inside `node`?"""
    stack = [node]
    while stack:
        node = stack.pop()
        target = None
        if isinstance(node, A.Assign):
            target = node.target
        elif isinstance(node, (A.PreIncDec, A.PostIncDec)):
            target = node.operand
        elif isinstance(node, A.Unary) and node.op == "&":
            target = node.operand
        if target is not None and isinstance(strip_casts(target), A.Ident) and strip_casts(target).symbol is sym:
            return True
        PUSH_CHILDREN[node.__class__](node, stack)
    return False


def body_cost(node, limit: int | None = None, _active: frozenset = frozenset()) -> int:
    """Roughly the instructions `node` becomes: its operations, with inner loops that
    unroll counted once per iteration (a recursive callee's body counted once).  With a
    `limit`, the count may stop as soon as it is past the limit."""
    cost = 0
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, (A.Binary, A.Unary, A.Assign, A.PreIncDec, A.PostIncDec, A.Call, A.Index,
                             A.Conditional, A.IfStmt, A.Member)):
            cost += 1
            if limit is not None and cost > limit:
                return cost
        if isinstance(node, A.Call):
            callee = node.callee
            if callee is not None and callee.definition is not None and callee not in _active:
                cost += body_cost(callee.definition.body, None if limit is None else limit - cost,
                                  _active | {callee})
                if limit is not None and cost > limit:
                    return cost
        PUSH_CHILDREN[node.__class__](node, stack)
    return cost


def plan_body(body: A.Node, pragmas: dict[int, str] | None = None, deref_cache: dict | None = None,
              params=()) -> BodyPlan:
    """The plan of a function body (`params`: its parameters' VarSymbols)."""
    planner = Planner(pragmas, deref_cache)
    loops = _statement_loops(body, params)
    if loops is None:
        planner.visit(body)
    else:   # no variable the expressions could put in memory or write in part: only loops to plan
        for stmt in loops:
            planner.plan_loop(stmt)
    return planner.plan


# The statements directly inside each kind of statement (expressions aside).
_SUBSTATEMENTS = {
    A.CompoundStmt: lambda s: s.items, A.IfStmt: lambda s: (s.then, s.else_) if s.else_ else (s.then,),
    A.WhileStmt: lambda s: (s.body,), A.DoStmt: lambda s: (s.body,), A.SwitchStmt: lambda s: (s.body,),
    A.CaseStmt: lambda s: (s.body,), A.DefaultStmt: lambda s: (s.body,),
    A.ForStmt: lambda s: (s.init, s.body) if s.init is not None else (s.body,),
    A.RangeForStmt: lambda s: (s.lowered,),
}


def statements(body):
    """Every statement in a body (declarations included), depth first in source order,
    without looking into expressions (no statement is inside one)."""
    stack = [body]
    while stack:
        node = stack.pop()
        yield node
        inner = _SUBSTATEMENTS.get(node.__class__)
        if inner is not None:
            stack.extend(reversed(inner(node)))


def _in_plan(sym) -> bool:
    """Could the expression walk put `sym` in `in_memory` or `written` (an aggregate, or
    a variable whose address is taken) where codegen reads it (an automatic variable)?"""
    return sym is not None and sym.space is None and not sym.is_static and (
        sym.address_taken or is_aggregate(sym.type))


def _statement_loops(body, params):
    """The `for` statements of a body, outermost first in source order, when its
    expressions need no walk: no parameter or automatic local is an aggregate or has
    its address taken, so in_memory and written stay empty (sema's address_taken
    marks every `&x` of a scalar; the other ways in concern aggregates).  None when
    the full walk is needed."""
    for psym in params:
        if _in_plan(psym):
            return None
    loops = []
    stack = [body]
    while stack:
        node = stack.pop()
        cls = node.__class__
        if cls is A.Declaration:
            for init in node.declarators:
                if _in_plan(init.symbol):
                    return None
            continue
        inner = _SUBSTATEMENTS.get(cls)
        if inner is not None:
            if cls is A.ForStmt:
                loops.append(node)
            stack.extend(reversed(inner(node)))
    return loops


def loop_pragmas(pragmas: list[tuple[int, str]], loop_lines) -> dict[int, str]:
    """`#pragma unroll` lines mapped to the line of the loop each precedes (the first
    loop starting within the next few lines)."""
    out: dict[int, str] = {}
    lines = sorted(set(loop_lines))
    for line, text in pragmas:
        if not text.startswith("unroll"):
            continue
        following = [ln for ln in lines if line < ln <= line + 3]
        if following:
            out[following[0]] = text
    return out
