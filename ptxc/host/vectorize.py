"""Run simple counted loops as whole-array NumPy operations.

A loop qualifies when it has the shape

    for (i = START; i < END; i++)          (also <=, !=, ++i, i += 1)
        p[i] = EXPR;  q[i] += EXPR; ...    (assignments to elements indexed by i only)

where every EXPR uses only constants, i itself, values that do not change in the loop,
elements `r[i]` at the same index, arithmetic with C's types, comparisons and ?:.  Then
iteration k touches only index k, so running each statement over all indices at once
gives what running the iterations in turn gives.  At run time the arrays must lie in
host memory and a stored array may overlap a loaded one only at the same base address;
otherwise (or for any doubt: integer division by a variable, a pointer that changes)
the interpreter runs the loop as written.  The seed's `for (int i = 0; i < n; i++)
a[i] = b[i] = 1.0f;` takes milliseconds this way instead of seconds.
"""
from __future__ import annotations

import numpy as np

from ..frontend import ast as A
from ..frontend import sema as S
from .memory import HostMemoryError
from .values import converter, sizeof


def dtype_of(t):
    if isinstance(t, S.IntType):
        if t.name == "bool":
            return np.dtype(np.uint8)
        return np.dtype({(1, True): np.int8, (1, False): np.uint8, (2, True): np.int16, (2, False): np.uint16,
                         (4, True): np.int32, (4, False): np.uint32, (8, True): np.int64,
                         (8, False): np.uint64}[(t.size, t.signed)])
    if isinstance(t, S.EnumType):
        return np.dtype(np.int32)
    if isinstance(t, S.FloatType):
        return np.dtype(np.float32 if t.size == 4 else np.float64)
    return None


class NotVectorizable(Exception):
    pass


MATH = {"sqrtf": np.sqrt, "sqrt": np.sqrt, "fabsf": np.abs, "fabs": np.abs, "floorf": np.floor, "floor": np.floor,
        "ceilf": np.ceil, "ceil": np.ceil, "truncf": np.trunc, "trunc": np.trunc}


def _strip(node):
    while isinstance(node, A.ImplicitCast) and isinstance(node.operand.type, S.IntType) \
            and isinstance(node.type, S.IntType):
        node = node.operand
    return node


def _is_var(node, sym) -> bool:
    node = _strip(node)
    return isinstance(node, A.Ident) and node.symbol is sym


def try_vectorize(fc, node: A.ForStmt):
    """A closure fast(frame) -> bool running the loop vectorized (False: run it as
    written), or None when the loop's shape does not qualify."""
    try:
        plan = _plan(fc, node)
    except NotVectorizable:
        return None
    return plan


def _plan(fc, node):
    # ---- the induction variable ----
    init = node.init
    if isinstance(init, A.Declaration) and len(init.declarators) == 1:
        sym = init.declarators[0].symbol
    elif isinstance(init, A.ExprStmt) and isinstance(init.expr, A.Assign) and init.expr.op == "=" \
            and isinstance(init.expr.target, A.Ident):
        sym = init.expr.target.symbol
    else:
        raise NotVectorizable
    if not isinstance(sym, S.VarSymbol) or not isinstance(sym.type, S.IntType) or id(sym) not in fc.slots:
        raise NotVectorizable
    slot = fc.slots[id(sym)]
    cond = node.cond
    if not (isinstance(cond, A.Binary) and cond.op in ("<", "<=", "!=") and _is_var(cond.lhs, sym)):
        raise NotVectorizable
    step = node.step
    ok_step = (isinstance(step, (A.PostIncDec, A.PreIncDec)) and step.op == "++" and _is_var(step.operand, sym)) or \
        (isinstance(step, A.Assign) and step.op == "+=" and _is_var(step.target, sym)
         and isinstance(_strip(step.value), A.IntLit) and _strip(step.value).value == 1)
    if not ok_step:
        raise NotVectorizable
    # ---- the body: element assignments only ----
    body = node.body
    stmts = body.items if isinstance(body, A.CompoundStmt) else [body]
    assigns = []
    for st in stmts:
        if not (isinstance(st, A.ExprStmt) and isinstance(st.expr, A.Assign)):
            raise NotVectorizable
        assigns.append(st.expr)
    if not assigns:
        raise NotVectorizable
    ctx = _Context(fc, sym)
    for a in assigns:
        ctx.check_assign(a)
    if _assigned_in(ctx.invariant_syms, stmts) or _is_var_used_as_pointer(ctx):
        raise NotVectorizable
    bound = fc.expr(cond.rhs)
    inclusive = cond.op == "<="
    evaluators = [ctx.compile_assign(a) for a in assigns]
    it = fc.it

    def fast(f):
        start = int(f[slot])
        end = int(bound(f)) + (1 if inclusive else 0)
        if cond.op == "!=" and end < start:
            return False
        n = end - start
        if n <= 0:
            return True
        if n < 64:
            return False          # not worth it: the plain loop is as fast
        env = _Env(it, f, start, n)
        try:
            ctx.check_memory(env)
        except (HostMemoryError, NotVectorizable):
            return False
        with np.errstate(all="ignore"):
            for ev in evaluators:
                ev(env)
        f[slot] = end
        return True
    return fast


def _assigned_in(syms, stmts) -> bool:
    """Whether any of the symbols is assigned (or incremented) in the statements."""
    found = False

    def visit(n):
        nonlocal found
        if isinstance(n, (A.Assign,)) and isinstance(n.target, A.Ident) and n.target.symbol in syms:
            found = True
        if isinstance(n, (A.PreIncDec, A.PostIncDec)) and isinstance(n.operand, A.Ident) and n.operand.symbol in syms:
            found = True
        for f in getattr(n, "__dataclass_fields__", {}):
            v = getattr(n, f)
            if isinstance(v, A.Node):
                visit(v)
            elif isinstance(v, list):
                for x in v:
                    if isinstance(x, A.Node):
                        visit(x)
    for s in stmts:
        visit(s)
    return found


def _is_var_used_as_pointer(ctx) -> bool:
    return False


class _Env:
    def __init__(self, it, frame, start, n):
        self.it = it
        self.f = frame
        self.start = start
        self.n = n
        self.index = None
        self.views = {}

    def iota(self):
        if self.index is None:
            self.index = np.arange(self.start, self.start + self.n, dtype=np.int64)
        return self.index


class _Context:
    def __init__(self, fc, sym):
        self.fc = fc
        self.sym = sym
        self.invariant_syms = []
        self.arrays = []          # (key, base closure, element type, stored?)
        self.keys = {}            # id(Index or Assign node) -> array key
        self.loads = {}           # id(compound Assign) -> key of its load of the target
        self.scalars = {}         # id(Ident) -> closure reading a loop-invariant variable

    # ---- static checks ----
    def array_ref(self, node: A.Index, stored: bool):
        base, index = node.base, node.index
        if not _is_var(index, self.sym):
            raise NotVectorizable
        base = _strip(base)
        while isinstance(base, A.ImplicitCast):
            base = base.operand
        if not (isinstance(base, A.Ident) and isinstance(base.symbol, S.VarSymbol)):
            raise NotVectorizable
        t = base.type
        if not isinstance(t, (S.PointerType, S.ArrayType)):
            raise NotVectorizable
        elem = node.type
        if dtype_of(elem) is None:
            raise NotVectorizable
        self.invariant_syms.append(base.symbol)
        key = len(self.arrays)
        closure = self.fc.expr(node.base)
        self.arrays.append((key, closure, elem, stored))
        return key

    def check_assign(self, node: A.Assign):
        if node.op not in ("=", "+=", "-=", "*=", "&=", "|=", "^="):
            raise NotVectorizable
        if not isinstance(node.target, A.Index):
            raise NotVectorizable
        self.keys[id(node)] = self.array_ref(node.target, True)
        if node.op != "=":
            self.loads[id(node)] = self.array_ref(node.target, False)
        self.check_expr(node.value)

    def check_expr(self, node):
        if isinstance(node, (A.IntLit, A.FloatLit, A.CharLit, A.BoolConst)):
            return
        if isinstance(node, A.Ident):
            if node.symbol is self.sym:
                return
            if isinstance(node.symbol, S.EnumConstSymbol):
                return
            if isinstance(node.symbol, S.VarSymbol) and dtype_of(node.type) is not None \
                    and node.symbol.space is None and node.symbol.kind != "builtin":
                self.invariant_syms.append(node.symbol)
                self.scalars[id(node)] = self.fc.expr(node)
                return
            raise NotVectorizable
        if isinstance(node, A.Index):
            self.keys[id(node)] = self.array_ref(node, False)
            return
        if isinstance(node, A.Assign):
            self.check_assign(node)
            return
        if isinstance(node, (A.ImplicitCast, A.Cast)):
            if dtype_of(node.type) is None or dtype_of(node.operand.type) is None:
                raise NotVectorizable
            self.check_expr(node.operand)
            return
        if isinstance(node, A.Binary):
            if node.op in ("/", "%"):
                rhs = _strip(node.rhs)
                if not (isinstance(rhs, A.IntLit) and rhs.value != 0) and dtype_of(node.type).kind != "f":
                    raise NotVectorizable
            if node.op not in ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "<", ">", "<=", ">=", "==",
                               "!=", "&&", "||"):
                raise NotVectorizable
            if dtype_of(node.lhs.type) is None or dtype_of(node.rhs.type) is None:
                raise NotVectorizable
            self.check_expr(node.lhs)
            self.check_expr(node.rhs)
            return
        if isinstance(node, A.Unary) and node.op in ("-", "+", "~", "!"):
            self.check_expr(node.operand)
            return
        if isinstance(node, A.Conditional):
            for part in (node.cond, node.then, node.else_):
                self.check_expr(part)
            return
        if isinstance(node, A.Call) and node.callee is not None and node.callee.name in MATH \
                and len(node.args) == 1:
            self.check_expr(node.args[0])
            return
        raise NotVectorizable

    # ---- run-time checks ----
    def check_memory(self, env: _Env):
        ranges = []
        for key, closure, elem, stored in self.arrays:
            base = closure(env.f)
            size = sizeof(elem)
            address = base + env.start * size
            env.views[key] = env.it.memory.view(address, dtype_of(elem), env.n)
            ranges.append((address, address + env.n * size, base, size, stored))
        for a in ranges:
            for b in ranges:
                if a is b or not (a[4] or b[4]):
                    continue
                overlap = a[0] < b[1] and b[0] < a[1]
                if overlap and (a[2] != b[2] or a[3] != b[3]):
                    raise NotVectorizable

    # ---- evaluation ----
    def compile_assign(self, node):
        value = self.compile_expr(node.value)
        key = self.keys[id(node)]
        dtype = dtype_of(node.target.type)
        op = node.op
        load_key = self.loads.get(id(node))
        ct = dtype_of(node.compute_type or node.type) if op != "=" else dtype

        def run(env):
            v = value(env)
            if op == "=":
                result = np.asarray(v).astype(dtype, copy=False)
            else:
                old = env.views[load_key].astype(ct)
                v = np.asarray(v).astype(ct, copy=False)
                result = _arith(op[0], old, v, ct).astype(dtype)
            env.views[key][...] = result
            return result
        return run

    def compile_expr(self, node):
        dtype = dtype_of(node.type) if hasattr(node, "type") and node.type is not None else None
        if isinstance(node, (A.IntLit, A.CharLit, A.BoolConst)):
            v = np.array(int(node.value), dtype=dtype)
            return lambda env: v
        if isinstance(node, A.FloatLit):
            v = np.array(node.value, dtype=dtype)
            return lambda env: v
        if isinstance(node, A.Ident):
            if node.symbol is self.sym:
                return lambda env: env.iota().astype(dtype)
            if isinstance(node.symbol, S.EnumConstSymbol):
                v = np.array(node.symbol.value, dtype=dtype)
                return lambda env: v
            scalar = self.scalars[id(node)]
            return lambda env: np.array(scalar(env.f), dtype=dtype)
        if isinstance(node, A.Index):
            key = self.keys[id(node)]
            return lambda env: env.views[key]
        if isinstance(node, A.Assign):
            return self.compile_assign(node)
        if isinstance(node, (A.ImplicitCast, A.Cast)):
            inner = self.compile_expr(node.operand)
            src = dtype_of(node.operand.type)
            if isinstance(node.type, S.IntType) and node.type.name == "bool":
                return lambda env: (np.asarray(inner(env)) != 0).astype(np.uint8)
            if src.kind == "f" and dtype.kind in "iu":
                conv = converter(node.operand.type, node.type)

                def f2i(env):
                    x = np.asarray(inner(env))
                    ok = np.abs(x) < 2.0 ** 63                 # NaN and huge values: as the scalar code does
                    out = np.trunc(np.where(ok, x, 0)).astype(np.int64).astype(dtype)
                    if not np.all(ok):
                        out = np.array(out)
                        for k in np.nonzero(~ok)[0]:
                            out.flat[k] = conv(float(x.flat[k]))
                    return out
                return f2i
            return lambda env: np.asarray(inner(env)).astype(dtype)
        if isinstance(node, A.Unary):
            inner = self.compile_expr(node.operand)
            if node.op == "-":
                return lambda env: (-np.asarray(inner(env))).astype(dtype)
            if node.op == "+":
                return inner
            if node.op == "~":
                return lambda env: (~np.asarray(inner(env))).astype(dtype)
            return lambda env: (np.asarray(inner(env)) == 0).astype(dtype)
        if isinstance(node, A.Conditional):
            c, a, b = (self.compile_expr(x) for x in (node.cond, node.then, node.else_))
            return lambda env: np.where(np.asarray(c(env)) != 0, a(env), b(env)).astype(dtype)
        if isinstance(node, A.Call):
            fn = MATH[node.callee.name]
            inner = self.compile_expr(node.args[0])
            return lambda env: fn(np.asarray(inner(env)).astype(np.float64)).astype(dtype)
        if isinstance(node, A.Binary):
            a, b = self.compile_expr(node.lhs), self.compile_expr(node.rhs)
            op = node.op
            ct = dtype_of(node.lhs.type)
            if op in ("<", ">", "<=", ">=", "==", "!=", "&&", "||"):
                return lambda env: _compare(op, np.asarray(a(env)), np.asarray(b(env))).astype(dtype)
            return lambda env: _arith(op, np.asarray(a(env)).astype(ct), np.asarray(b(env)).astype(ct),
                                      dtype).astype(dtype)
        raise NotVectorizable


def _compare(op, x, y):
    if op == "<":
        return x < y
    if op == ">":
        return x > y
    if op == "<=":
        return x <= y
    if op == ">=":
        return x >= y
    if op == "==":
        return x == y
    if op == "!=":
        return x != y
    if op == "&&":
        return (x != 0) & (y != 0)
    return (x != 0) | (y != 0)


def _arith(op, x, y, dtype):
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/":
        if np.dtype(dtype).kind == "f":
            return x / y
        q = np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
        return np.where((x < 0) != (y < 0), -q, q)
    if op == "%":
        q = np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
        q = np.where((x < 0) != (y < 0), -q, q)
        return x.astype(np.int64) - y.astype(np.int64) * q
    bits = np.dtype(dtype).itemsize * 8
    if op == "&":
        return x & y
    if op == "|":
        return x | y
    if op == "^":
        return x ^ y
    if op == "<<":
        return x << (y.astype(np.int64) % bits).astype(x.dtype)
    if op == ">>":
        return x >> (y.astype(np.int64) % bits).astype(x.dtype)
    raise NotVectorizable
