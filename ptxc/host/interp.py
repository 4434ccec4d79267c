"""Interpret host code: main() and the host functions it calls, from the frontend's typed
AST, against host memory (memory.py) and the emulated GPU (ptxc.emu).

Each function is compiled once into nested Python closures (an expression becomes
`f(frame) -> value`, a statement `s(frame) -> None | signal`), which runs several times
faster than walking the tree.  Locals live in the frame's slots unless their address is
taken or they are arrays or structs: those get bytes in the stack region, so `&x`,
`cudaMalloc(&p, n)` and pointer arithmetic behave as in C.  Simple counted loops over
arrays run as whole-array NumPy operations (vectorize.py) when that cannot change the
result.

Supported: int/float/pointer locals, arrays, structs by field, the C operators with C's
conversions, if/for/while/do/switch/break/continue/return, host functions, main(argc,
argv), the C library (below and libc.py: malloc, printf, fprintf, strtol, the math
library, ...), the CUDA runtime (runtime.py: memory, streams, events, symbols, errors,
device properties), kernel launches `k<<<grid, block[, shared[, stream]]>>>(...)` with
int or dim3 dimensions.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from ..diagnostics import Diagnostic, SourceLoc
from ..frontend import ast as A
from ..frontend import sema as S
from .errors import ExitProgram, HostError, LaunchFailure  # noqa: F401 (re-exported)
from .memory import HostMemory, HostMemoryError
from .printf import FormatError, format_c
from .values import converter, int_info, is_float, is_int, is_pointer, round_f32, sizeof, struct_format


BREAK = object()
CONTINUE = object()


class Return:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


CUDA_ERRORS = {0: "no error", 1: "invalid argument", 2: "out of memory", 700: "an illegal memory access was encountered",
               702: "the launch timed out and was terminated", 9: "invalid configuration argument",
               98: "invalid device function", 719: "unspecified launch failure"}


@dataclass
class FunctionCode:
    name: str
    nslots: int
    frame_bytes: int
    params: list          # (slot or None, offset or None, type) per parameter
    body: object
    returns_struct: int = 0   # the size of the struct it returns by value (0: not a struct)


class Interpreter:
    def __init__(self, unit: A.TranslationUnit, filename: str, gpu, write, argv: list[str] | None = None,
                 write_err=None):
        """`gpu` has launch(symbol, grid, block, shared, args) and device (ptxc.emu Device);
        `write(text)` prints (stdout), `write_err(text)` writes stderr; `argv`: the
        program's arguments after its name (main's argv[1:])."""
        import sys

        from .runtime import Runtime
        self.unit = unit
        self.filename = filename
        self.gpu = gpu
        self.write = write
        self.write_err = write_err or sys.stderr.write
        self.argv = list(argv or [])
        self.memory = HostMemory()
        self.cuda = Runtime(self)
        self.functions: dict[str, A.FunctionDef] = {}
        self.compiled: dict[str, FunctionCode] = {}
        self.globals: dict[int, tuple] = {}      # id(VarSymbol) -> (address, type)
        self.random = None
        for item in unit.items:
            if isinstance(item, A.FunctionDef) and item.symbol is not None and item.symbol.on_host:
                self.functions[item.declarator.name] = item
        for sym in getattr(unit, "functions", ()):     # C++: instances, members, namespaces, overloads
            if sym.definition is not None and sym.on_host and isinstance(sym.definition, A.FunctionDef):
                self.functions[sym.mangled] = sym.definition
        self._init_globals()

    # ---- entry -----------------------------------------------------------------------------
    def run(self) -> int:
        main = self.functions.get("main")
        if main is None:
            raise HostError("the program has no main() to run")
        args = []
        if main.param_symbols:
            words = [self.filename, *self.argv]
            argv = self.memory.static.reserve(8 * (len(words) + 1), 8)
            for k, word in enumerate(words):          # (strings of their own: argv[i] is writable)
                data = word.encode("utf-8", "replace") + b"\0"
                address = self.memory.static.reserve(len(data), 1)
                self.memory.write(address, data)
                self.memory.store(argv + 8 * k, "Q", address)
            self.memory.store(argv + 8 * len(words), "Q", 0)
            args = [len(words), argv][:len(main.param_symbols)]
        try:
            result = self.call("main", args, main.loc)
        except ExitProgram as exc:
            return exc.code & 0xFF
        return int(result or 0) & 0xFF

    def _init_globals(self) -> None:
        for item in self.unit.items:
            if not isinstance(item, A.Declaration):
                continue
            for d in item.declarators:
                sym = d.symbol
                if not isinstance(sym, S.VarSymbol) or sym.space is not None or isinstance(sym.type, S.FunctionType):
                    continue
                if "typedef" in item.specs.storage or "extern" in item.specs.storage:
                    continue
                address = self.memory.static.reserve(max(sizeof(sym.type), 1), 16)
                self.globals[id(sym)] = (address, sym.type)
                if d.init is not None:
                    init = self._compile_initializer(d.init, sym.type, lambda f, a=address: a, None)
                    init([0])

    # ---- functions -------------------------------------------------------------------------------
    def call(self, name: str, args: list, loc):
        code = self.compiled.get(name)
        if code is None:
            code = self.compiled[name] = FunctionCompiler(self, self.functions[name]).compile()
        frame = [None] * code.nslots
        mark = self.memory.stack.top
        frame[0] = self.memory.stack.reserve(code.frame_bytes) if code.frame_bytes else 0
        try:
            for (slot, offset, t), value in zip(code.params, args):
                if slot is not None:
                    frame[slot] = value
                else:
                    self.store_value(frame[0] + offset, t, value)
            result = code.body(frame)
            value = result.value if isinstance(result, Return) else None
            if code.returns_struct and value is not None:   # the returned object's bytes, before its frame goes
                data = self.memory.read(value, code.returns_struct)
        finally:
            self.memory.stack.top = mark
        if code.returns_struct and value is not None:
            # a struct is its address: the copy the caller reads lives in the caller's part of the stack
            value = self.memory.stack.reserve(code.returns_struct)
            self.memory.write(value, data)
        return value

    # ---- memory helpers --------------------------------------------------------------------------
    def load_value(self, address: int, t):
        fmt = struct_format(t)
        if fmt is None:
            return address                      # arrays and structs are their address
        try:
            return self.memory.load(address, fmt)
        except HostMemoryError as err:
            raise HostError(str(err)) from None

    def store_value(self, address: int, t, value) -> None:
        fmt = struct_format(t)
        try:
            if fmt is None:                      # a struct: copy its bytes from the source address
                self.memory.write(address, self.memory.read(value, sizeof(t)))
            else:
                self.memory.store(address, fmt, value)
        except HostMemoryError as err:
            raise HostError(str(err)) from None
        except struct.error as err:
            raise HostError(f"cannot store {value!r} as {t}: {err}") from None

    def _compile_initializer(self, init, t, address_of, fc):
        """A closure storing an initializer (expression or {list}) at address_of(frame)."""
        if isinstance(init, A.InitList):
            parts = []
            if isinstance(t, S.ArrayType):
                esize = sizeof(t.elem)
                for k, item in enumerate(init.items):
                    parts.append(self._compile_initializer(item, t.elem, lambda f, k=k: address_of(f) + k * esize, fc))
            elif isinstance(t, S.StructType):
                for item, (fname, ftype, offset) in zip(init.items, t.fields):
                    parts.append(self._compile_initializer(item, ftype, lambda f, o=offset: address_of(f) + o, fc))
            else:
                parts.append(self._compile_initializer(init.items[0], t, address_of, fc))
            size = sizeof(t)

            def run(f):
                self.memory.fill(address_of(f), 0, size)
                for p in parts:
                    p(f)
            return run
        value = (fc or FunctionCompiler(self, None)).expr(init)
        if isinstance(t, S.ArrayType) and isinstance(init, A.StringLit):
            data = init.value.encode("latin-1") + b"\0"
            return lambda f: self.memory.write(address_of(f), data[:sizeof(t)])
        return lambda f: self.store_value(address_of(f), t, value(f))


class FunctionCompiler:
    """Compiles one function's body into closures."""

    def __init__(self, interp: Interpreter, fdef: A.FunctionDef | None):
        self.it = interp
        self.fdef = fdef
        self.slots: dict[int, int] = {}          # id(VarSymbol) -> frame slot
        self.offsets: dict[int, int] = {}        # id(VarSymbol) -> byte offset in the frame
        self.nslots = 1                          # slot 0: the frame's stack address
        self.frame_bytes = 0

    def compile(self) -> FunctionCode:
        fdef = self.fdef
        params = []
        for sym in fdef.param_symbols:
            self.declare(sym)
            if id(sym) in self.slots:
                params.append((self.slots[id(sym)], None, sym.type))
            else:
                params.append((None, self.offsets[id(sym)], sym.type))
        body = self.stmt(fdef.body)
        ret = S.unqualified(fdef.symbol.type.ret) if fdef.symbol is not None else None
        size = max(sizeof(ret), 1) if isinstance(ret, S.StructType) else 0
        return FunctionCode(fdef.declarator.name, self.nslots, self.frame_bytes, params, body, size)

    # ---- variables ----
    def declare(self, sym) -> None:
        t = sym.type
        if isinstance(t, (S.ArrayType, S.StructType)) or sym.address_taken:
            size = max(sizeof(t), 1)
            self.frame_bytes = (self.frame_bytes + 15) // 16 * 16
            self.offsets[id(sym)] = self.frame_bytes
            self.frame_bytes += size
        else:
            self.slots[id(sym)] = self.nslots
            self.nslots += 1

    def var_address(self, sym):
        """A closure giving the address of a variable kept in memory (None if in a slot)."""
        if id(sym) in self.offsets:
            off = self.offsets[id(sym)]
            return lambda f: f[0] + off
        if id(sym) in self.it.globals:
            address = self.it.globals[id(sym)][0]
            return lambda f: address
        return None

    def error(self, message: str, node) -> HostError:
        return HostError(message, getattr(node, "loc", None))

    # =========================================================================================
    # statements
    # =========================================================================================
    def stmt(self, node):
        method = getattr(self, "s_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"'{type(node).__name__}' statements are not supported by ptxc run", node)
        return method(node)

    def s_CompoundStmt(self, node):
        parts = [self.stmt(item) for item in node.items]
        parts = [p for p in parts if p is not None]
        if len(parts) == 1:
            return parts[0]

        def run(f):
            for p in parts:
                r = p(f)
                if r is not None:
                    return r
            return None
        return run

    def s_Declaration(self, node):
        if "typedef" in node.specs.storage:
            return None
        parts = []
        for d in node.declarators:
            sym = d.symbol
            if sym is None or isinstance(sym.type, S.FunctionType):
                continue
            if sym.is_static or "static" in node.specs.storage:
                address = self.it.memory.static.reserve(max(sizeof(sym.type), 1), 16)
                self.it.globals[id(sym)] = (address, sym.type)
                if d.init is not None:
                    self.it._compile_initializer(d.init, sym.type, lambda f, a=address: a, self)([0])
                continue
            self.declare(sym)
            address = self.var_address(sym)
            if address is not None:
                if d.init is not None:
                    parts.append(self.it._compile_initializer(d.init, sym.type, address, self))
            else:
                slot = self.slots[id(sym)]
                if d.init is not None:
                    value = self.expr(d.init)
                    parts.append(lambda f, s=slot, v=value: f.__setitem__(s, v(f)))
                else:
                    zero = 0.0 if is_float(sym.type) else 0
                    parts.append(lambda f, s=slot, z=zero: f.__setitem__(s, z))
        if not parts:
            return None

        def run(f):
            for p in parts:
                p(f)
        return run

    def s_ExprStmt(self, node):
        if node.expr is None:
            return None
        e = self.expr(node.expr)

        def run(f):
            e(f)
        return run

    def s_IfStmt(self, node):
        cond = self.cond(node.cond)
        then = self.stmt(node.then) or (lambda f: None)
        other = self.stmt(node.else_) if node.else_ is not None else None
        if other is None:
            return lambda f: then(f) if cond(f) else None
        return lambda f: then(f) if cond(f) else other(f)

    def _loop(self, cond, body, step, first_cond=True):
        body = body or (lambda f: None)

        def run(f):
            if first_cond and cond is not None and not cond(f):
                return None
            while True:
                r = body(f)
                if r is not None:
                    if r is BREAK:
                        return None
                    if r is not CONTINUE:
                        return r
                if step is not None:
                    step(f)
                if cond is not None and not cond(f):
                    return None
        return run

    def s_ForStmt(self, node):
        from .vectorize import try_vectorize
        init = self.stmt(node.init) if node.init is not None else None
        cond = self.cond(node.cond) if node.cond is not None else None
        step = self.expr(node.step) if node.step is not None else None
        body = self.stmt(node.body)
        loop = self._loop(cond, body, step)
        fast = try_vectorize(self, node)
        if fast is None:
            if init is None:
                return loop

            def run(f):
                init(f)
                return loop(f)
            return run

        def run_fast(f):
            if init is not None:
                init(f)
            if fast(f):
                return None
            return loop(f)
        return run_fast

    def s_WhileStmt(self, node):
        return self._loop(self.cond(node.cond), self.stmt(node.body), None)

    def s_DoStmt(self, node):
        return self._loop(self.cond(node.cond), self.stmt(node.body), None, first_cond=False)

    def s_ReturnStmt(self, node):
        if node.value is None:
            return lambda f: Return(None)
        value = self.expr(node.value)
        return lambda f: Return(value(f))

    def s_BreakStmt(self, node):
        return lambda f: BREAK

    def s_ContinueStmt(self, node):
        return lambda f: CONTINUE

    def s_SwitchStmt(self, node):
        value = self.expr(node.expr)
        flat, labels, default = [], {}, None

        def collect(n):
            nonlocal default
            if isinstance(n, A.CaseStmt):
                labels.setdefault(n.const_value, len(flat))
                collect(n.body)
            elif isinstance(n, A.DefaultStmt):
                default = len(flat)
                collect(n.body)
            elif isinstance(n, A.CompoundStmt):
                for item in n.items:
                    collect(item)
            else:
                flat.append(self.stmt(n))
        collect(node.body)

        def run(f):
            start = labels.get(value(f), default)
            if start is None:
                return None
            for s in flat[start:]:
                if s is None:
                    continue
                r = s(f)
                if r is not None:
                    return None if r is BREAK else r
            return None
        return run

    def s_CaseStmt(self, node):
        raise self.error("'case' outside a switch", node)

    def s_AsmStmt(self, node):
        raise self.error("inline assembly is not supported in host code", node)

    # =========================================================================================
    # expressions
    # =========================================================================================
    def expr(self, node):
        method = getattr(self, "e_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"'{type(node).__name__}' expressions are not supported by ptxc run", node)
        return method(node)

    def cond(self, node):
        e = self.expr(node)
        return e

    # ---- leaves ----
    def e_IntLit(self, node):
        v = converter(node.type, node.type)(node.value)
        return lambda f: v

    def e_CharLit(self, node):
        v = node.value
        return lambda f: v

    def e_BoolConst(self, node):
        v = 1 if node.value else 0
        return lambda f: v

    def e_FloatLit(self, node):
        v = round_f32(node.value) if node.type.size == 4 else float(node.value)
        return lambda f: v

    def e_StringLit(self, node):
        address = self.it.memory.string(node.value)
        return lambda f: address

    def e_Ident(self, node):
        sym = node.symbol
        if isinstance(sym, S.EnumConstSymbol):
            v = sym.value
            return lambda f: v
        if isinstance(sym, S.FunctionSymbol):
            raise self.error(f"function pointers ('{sym.name}') are not supported by ptxc run", node)
        if isinstance(sym, S.VarSymbol):
            if sym.space is not None or sym.kind == "builtin":
                raise self.error(f"'{sym.name}' is device memory: the host cannot read it", node)
            if id(sym) in self.slots:
                slot = self.slots[id(sym)]
                return lambda f: f[slot]
            address = self.var_address(sym)
            if address is None:
                raise self.error(f"'{sym.name}' used before its declaration", node)
            t = sym.type
            if isinstance(t, (S.ArrayType, S.StructType)):
                return address
            fmt = "<" + struct_format(t)
            size = struct.calcsize(fmt)
            mem = self.it.memory

            def load(f):
                a = address(f)
                try:
                    r = mem.region(a, size)
                except HostMemoryError as err:
                    raise self.error(str(err), node) from None
                return struct.unpack_from(fmt, r.buf, a - r.base)[0]
            return load
        raise self.error(f"unknown name '{node.name}'", node)

    # ---- lvalues: (load(f), store(f, value)) ----
    def lvalue(self, node):
        if isinstance(node, A.Ident) and isinstance(node.symbol, S.VarSymbol) and id(node.symbol) in self.slots:
            slot = self.slots[id(node.symbol)]

            def store(f, v):
                f[slot] = v
            return (lambda f: f[slot]), store
        address = self.address(node)
        t = node.type
        it = self.it
        fmt = struct_format(t)
        if fmt is None:
            return address, lambda f, v: it.store_value(address(f), t, v)
        fmt = "<" + fmt
        mem = it.memory
        size = struct.calcsize(fmt)

        def load(f):
            a = address(f)
            try:
                r = mem.region(a, size)
            except HostMemoryError as err:
                raise self.error(str(err), node) from None
            return struct.unpack_from(fmt, r.buf, a - r.base)[0]

        def store(f, v):
            a = address(f)
            try:
                r = mem.region(a, size)
            except HostMemoryError as err:
                raise self.error(str(err), node) from None
            struct.pack_into(fmt, r.buf, a - r.base, v)
        return load, store

    def address(self, node):
        """A closure computing the address of an lvalue expression."""
        if isinstance(node, A.Ident):
            address = self.var_address(node.symbol) if isinstance(node.symbol, S.VarSymbol) else None
            if address is None:
                raise self.error(f"cannot take the address of '{node.name}'", node)
            return address
        if isinstance(node, A.Index):
            base_t = node.base.type
            if is_pointer(node.index.type) or isinstance(node.index.type, S.ArrayType):
                base, index = self.expr(node.index), self.expr(node.base)
            else:
                base, index = self.expr(node.base), self.expr(node.index)
            size = sizeof(node.type)
            return lambda f: base(f) + index(f) * size
        if isinstance(node, A.Unary) and node.op == "*":
            return self.expr(node.operand)
        if isinstance(node, A.Member):
            st = node.base.type.pointee if node.arrow else node.base.type
            st = S.unqualified(st) if hasattr(S, "unqualified") else st
            found = st.field(node.name)
            if found is None:
                raise self.error(f"no member '{node.name}'", node)
            offset = found[1]
            base = self.expr(node.base) if node.arrow else self.address(node.base)
            return lambda f: base(f) + offset
        if isinstance(node, (A.ImplicitCast, A.Cast)) and isinstance(node.operand.type, (S.ArrayType, S.StructType)):
            return self.address(node.operand)
        if isinstance(S.unqualified(node.type), S.StructType) and \
                isinstance(node, (A.Call, A.Construct, A.Conditional, A.Assign, A.Comma)):
            return self.expr(node)      # a struct value is the address of its bytes (`f(x).mean`)
        raise self.error("this expression has no address", node)

    # ---- operators ----
    def e_ImplicitCast(self, node):
        return self._cast(node.operand, node.type)

    def e_Cast(self, node):
        return self._cast(node.operand, node.type)

    def e_CxxCast(self, node):
        return self._cast(node.operand, node.type)

    def _cast(self, operand, t):
        src = operand.type
        inner = self.expr(operand)
        if isinstance(src, S.ArrayType) or isinstance(src, S.FunctionType):
            return inner                                   # decay: the address
        if isinstance(t, S.StructType) or isinstance(src, S.StructType):
            return inner
        conv = converter(src, t)
        return lambda f: conv(inner(f))

    def e_Unary(self, node):
        op = node.op
        if op == "&":
            return self.address(node.operand)
        if op == "*":
            load, _ = self.lvalue(node)
            return load
        inner = self.expr(node.operand)
        t = node.type
        if op == "!":
            return lambda f: 0 if inner(f) else 1
        if op == "+":
            return inner
        conv = converter(t, t)
        if op == "-":
            if is_float(t):
                return lambda f: -inner(f)
            return lambda f: conv(-inner(f))
        if op == "~":
            return lambda f: conv(~inner(f))
        raise self.error(f"unary '{op}' is not supported", node)

    def e_Binary(self, node):
        op = node.op
        if op == "&&":
            a, b = self.expr(node.lhs), self.expr(node.rhs)
            return lambda f: 1 if a(f) and b(f) else 0
        if op == "||":
            a, b = self.expr(node.lhs), self.expr(node.rhs)
            return lambda f: 1 if a(f) or b(f) else 0
        a, b = self.expr(node.lhs), self.expr(node.rhs)
        return self.binary(op, a, b, node.lhs.type, node.rhs.type, node.type, node)

    def binary(self, op, a, b, ta, tb, t, node):
        """A closure for a op b (a, b closures) with C's meaning for operand types ta, tb
        and result type t."""
        fn = self.binop(op, ta, tb, t, node)
        if op == "<":
            return lambda f: 1 if a(f) < b(f) else 0
        if is_float(t) and t.size == 4 and op in ("+", "*", "-"):
            if op == "+":
                return lambda f: round_f32(a(f) + b(f))
            if op == "*":
                return lambda f: round_f32(a(f) * b(f))
            return lambda f: round_f32(a(f) - b(f))
        return lambda f: fn(a(f), b(f))

    def binop(self, op, ta, tb, t, node):
        """The function (x, y) -> x op y for values of types ta, tb, result type t."""
        if op in ("<", ">", "<=", ">=", "==", "!="):
            return {"<": lambda x, y: 1 if x < y else 0, ">": lambda x, y: 1 if x > y else 0,
                    "<=": lambda x, y: 1 if x <= y else 0, ">=": lambda x, y: 1 if x >= y else 0,
                    "==": lambda x, y: 1 if x == y else 0, "!=": lambda x, y: 1 if x != y else 0}[op]
        if is_pointer(ta) or isinstance(ta, S.ArrayType):
            size = sizeof(ta.pointee if is_pointer(ta) else ta.elem)
            if op == "+":
                return lambda x, y: (x + y * size) & 0xFFFFFFFFFFFFFFFF
            if op == "-" and (is_pointer(tb) or isinstance(tb, S.ArrayType)):
                return lambda x, y: (x - y) // size
            if op == "-":
                return lambda x, y: (x - y * size) & 0xFFFFFFFFFFFFFFFF
        if (is_pointer(tb) or isinstance(tb, S.ArrayType)) and op == "+":
            size = sizeof(tb.pointee if is_pointer(tb) else tb.elem)
            return lambda x, y: (y + x * size) & 0xFFFFFFFFFFFFFFFF
        if is_float(t):
            fn = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
                  "/": _fdiv}.get(op)
            if fn is None:
                raise self.error(f"'{op}' on floating-point values", node)
            if t.size == 4:
                return lambda x, y: round_f32(fn(x, y))
            return fn
        conv = converter(t, t)
        if op in ("/", "%"):
            def div(x, y):
                if y == 0:
                    raise self.error("integer division by zero", node)
                q = abs(x) // abs(y)
                q = q if (x >= 0) == (y >= 0) else -q
                return conv(q if op == "/" else x - y * q)
            return div
        if op in ("<<", ">>"):
            bits, _ = int_info(t)
            if op == "<<":
                return lambda x, y: conv(x << (y % bits))
            return lambda x, y: conv(x >> (y % bits))
        fn = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
              "&": lambda x, y: x & y, "|": lambda x, y: x | y, "^": lambda x, y: x ^ y}.get(op)
        if fn is None:
            raise self.error(f"operator '{op}' is not supported", node)
        return lambda x, y: conv(fn(x, y))

    def e_Assign(self, node):
        load, store = self.lvalue(node.target)
        t = node.target.type
        if node.op == "=":
            value = self.expr(node.value)

            def assign(f):
                v = value(f)
                store(f, v)
                return v
            return assign
        op = node.op[:-1]
        ct = node.compute_type or node.type
        pointer = is_pointer(t)
        to_ct = (lambda v: v) if pointer else converter(t, ct)
        back = (lambda v: v) if pointer else converter(ct, t)
        value = self.expr(node.value)
        vconv = (lambda v: v) if pointer or op in ("<<", ">>") else converter(node.value.type, ct)
        fn = self.binop(op, t if pointer else ct, node.value.type, t if pointer else ct, node)

        def compound(f):
            v = vconv(value(f))
            r = back(fn(to_ct(load(f)), v))
            store(f, r)
            return r
        return compound

    def _incdec(self, node, post: bool):
        load, store = self.lvalue(node.operand)
        t = node.operand.type
        delta = 1 if node.op == "++" else -1
        if is_pointer(t):
            delta *= sizeof(t.pointee)
            conv = lambda v: v & 0xFFFFFFFFFFFFFFFF  # noqa: E731
        elif is_float(t):
            conv = converter(t, t)
        else:
            conv = converter(t, t)

        def run(f):
            old = load(f)
            new = conv(old + delta)
            store(f, new)
            return old if post else new
        return run

    def e_PreIncDec(self, node):
        return self._incdec(node, post=False)

    def e_PostIncDec(self, node):
        return self._incdec(node, post=True)

    def e_Conditional(self, node):
        c, a, b = self.expr(node.cond), self.expr(node.then), self.expr(node.else_)
        return lambda f: a(f) if c(f) else b(f)

    def e_Comma(self, node):
        a, b = self.expr(node.lhs), self.expr(node.rhs)
        return lambda f: (a(f), b(f))[1]

    def e_Index(self, node):
        load, _ = self.lvalue(node)
        return load

    def e_Member(self, node):
        load, _ = self.lvalue(node)
        return load

    def e_SizeofExpr(self, node):
        v = sizeof(node.operand.type)
        return lambda f: v

    def e_SizeofType(self, node):
        v = sizeof(node.type_name.type)
        return lambda f: v

    def e_Construct(self, node):
        t = node.type
        if isinstance(t, S.StructType):
            args = [self.expr(a) for a in node.args]
            return self._make_struct(t, args, default=1 if t.name == "dim3" else 0)
        if not node.args:
            return lambda f: 0
        return self._cast(node.args[0], t)

    def _make_struct(self, t, args, default=0):
        it = self.it
        fields = t.fields

        def make(f):
            address = it.memory.stack.reserve(max(sizeof(t), 1))
            for k, (fname, ftype, offset) in enumerate(fields):
                v = args[k](f) if k < len(args) else default
                it.store_value(address + offset, ftype, converter(ftype, ftype)(v))
            return address
        return make

    # ---- calls ----
    def e_Call(self, node):
        callee = node.callee
        params = callee.type.params if callee is not None else ()
        args = [self.symbol_arg(a) if k < len(params) and isinstance(params[k], S.AnySymbolType) else self.expr(a)
                for k, a in enumerate(node.args)]
        name = callee.name if callee is not None else getattr(node.func, "name", "?")
        if callee is not None and callee.builtin is None and callee.mangled in self.it.functions:
            name = callee.mangled
        if callee is not None and callee.builtin is None and name in self.it.functions:
            it = self.it
            return lambda f: it.call(name, [a(f) for a in args], node.loc)
        if callee is not None and callee.builtin == "make_vector":
            return self._make_struct(callee.type.ret, args)
        runtime = RUNTIME.get(callee.builtin if callee is not None and callee.builtin else name)
        if runtime is None:
            runtime = RUNTIME.get(name)
        if runtime is None:
            raise self.error(f"'{name}' cannot be called from host code under ptxc run", node)
        it = self.it
        types = [a.type for a in node.args]
        return lambda f: runtime(it, [a(f) for a in args], types, node)

    def symbol_arg(self, node):
        """cudaMemcpyToSymbol's `symbol`: the device variable itself (its VarSymbol)."""
        while isinstance(node, A.ImplicitCast):
            node = node.operand
        sym = node.symbol
        return lambda f: sym

    def e_Launch(self, node):
        it = self.it
        callee = node.callee
        config = [self.expr(c) for c in node.config]
        config_types = [c.type for c in node.config]
        args = [self.expr(a) for a in node.args]
        params = list(callee.type.params)

        def dims(f, k):
            v = config[k](f)
            if isinstance(config_types[k], S.StructType):
                return tuple(it.memory.load(v + 4 * j, "I") for j in range(3))
            return (v, 1, 1)

        def launch(f):
            grid, block = dims(f, 0), dims(f, 1)
            shared = config[2](f) if len(config) > 2 else 0
            stream = config[3](f) if len(config) > 3 else 0
            values = []
            for a, t in zip(args, params):
                v = a(f)
                fmt = struct_format(t)
                if fmt is None:
                    values.append(it.memory.read(v, sizeof(t)))
                else:
                    values.append(struct.pack("<" + fmt, v))
            it.cuda.launch(callee, grid, block, shared, stream, values, node)
            return None
        return launch


def _fdiv(x, y):
    try:
        return x / y
    except ZeroDivisionError:
        if x != x or x == 0:
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)


# =============================================================================================
# the C library and the CUDA runtime
# =============================================================================================
def _arg_error(name, node, message):
    return HostError(f"{name}: {message}", getattr(node, "loc", None))


def rt_malloc(it, args, types, node):
    return it.memory.malloc(int(args[0]))


def rt_calloc(it, args, types, node):
    size = int(args[0]) * int(args[1])
    address = it.memory.malloc(size)
    it.memory.fill(address, 0, size)
    return address


def rt_free(it, args, types, node):
    try:
        it.memory.free(int(args[0]))
    except HostMemoryError as err:
        raise _arg_error("free", node, str(err)) from None
    return None


def rt_printf(it, args, types, node):
    fmt = it.memory.read_string(args[0])
    values = []
    for v, t in zip(args[1:], types[1:]):
        values.append(v)
    try:
        text = format_c(fmt, values, it.memory.read_string)
    except (FormatError, HostMemoryError, TypeError, ValueError) as err:
        raise _arg_error("printf", node, str(err)) from None
    it.write(text)
    return len(text.encode("latin-1", "replace"))


def rt_exit(it, args, types, node):
    raise ExitProgram(int(args[0]))


def rt_memset(it, args, types, node):
    try:
        it.memory.fill(args[0], args[1], int(args[2]))
    except HostMemoryError as err:
        raise _arg_error("memset", node, str(err)) from None
    return args[0]


def rt_memcpy(it, args, types, node):
    try:
        it.memory.write(args[0], it.memory.read(args[1], int(args[2])))
    except HostMemoryError as err:
        raise _arg_error("memcpy", node, str(err)) from None
    return args[0]


class GlibcRandom:
    """glibc's rand(): the additive feedback generator r[i] = r[i-3] + r[i-31] seeded by
    a Lehmer sequence (random_r.c, TYPE_3), so a program prints what it prints on Linux."""

    def __init__(self, seed: int = 1):
        seed &= 0xFFFFFFFF
        seed = seed - (1 << 32) if seed >> 31 else seed
        r = [seed if seed != 0 else 1]
        for _ in range(1, 31):
            hi, lo = int(r[-1] / 127773), r[-1] - 127773 * int(r[-1] / 127773)
            word = 16807 * lo - 2836 * hi
            if word < 0:
                word += 2147483647
            r.append(word)
        r += [r[0], r[1], r[2]]
        self.r = [x & 0xFFFFFFFF for x in r]
        for _ in range(310):
            self.next()

    def next(self) -> int:
        value = (self.r[-31] + self.r[-3]) & 0xFFFFFFFF
        self.r.append(value)
        if len(self.r) > 64:
            del self.r[:-34]
        return value >> 1


def rt_rand(it, args, types, node):
    if it.random is None:
        it.random = GlibcRandom(1)
    return it.random.next()


def rt_srand(it, args, types, node):
    it.random = GlibcRandom(int(args[0]))
    return None


def rt_atoi(it, args, types, node):
    text = it.memory.read_string(args[0]).strip()
    digits = ""
    for ch in text:
        if ch.isdigit() or (not digits and ch in "+-"):
            digits += ch
        else:
            break
    try:
        return int(digits)
    except ValueError:
        return 0


def rt_zero(it, args, types, node):
    return 0


def _math1(fn, single):
    def run(it, args, types, node):
        try:
            v = fn(float(args[0]))
        except (ValueError, OverflowError):
            v = math.nan
        return round_f32(v) if single else v
    return run


def _math2(fn, single):
    def run(it, args, types, node):
        try:
            v = fn(float(args[0]), float(args[1]))
        except (ValueError, OverflowError, ZeroDivisionError):
            v = math.nan
        return round_f32(v) if single else v
    return run


def _minmax(pick):
    def run(it, args, types, node):
        return pick(args[0], args[1])
    return run


RUNTIME = {
    "malloc": rt_malloc, "calloc": rt_calloc, "free": rt_free, "printf": rt_printf, "exit": rt_exit,
    "memset": rt_memset, "memcpy": rt_memcpy, "rand": rt_rand, "srand": rt_srand, "atoi": rt_atoi,
    "abs": lambda it, a, t, n: abs(a[0]), "labs": lambda it, a, t, n: abs(a[0]),
    "llabs": lambda it, a, t, n: abs(a[0]),
    "min": _minmax(min), "max": _minmax(max),
    "fminf": _math2(lambda x, y: y if x != x else (x if y != y else min(x, y)), True),
    "fmaxf": _math2(lambda x, y: y if x != x else (x if y != y else max(x, y)), True),
    "fmin": _math2(lambda x, y: y if x != x else (x if y != y else min(x, y)), False),
    "fmax": _math2(lambda x, y: y if x != x else (x if y != y else max(x, y)), False),
    "powf": _math2(math.pow, True), "pow": _math2(math.pow, False),
    "fmodf": _math2(math.fmod, True), "fmod": _math2(math.fmod, False),
    "atan2f": _math2(math.atan2, True), "atan2": _math2(math.atan2, False),
    "copysignf": _math2(math.copysign, True),
    "fmaf": lambda it, a, t, n: round_f32(float(a[0]) * float(a[1]) + float(a[2])),
    "fma": lambda it, a, t, n: float(a[0]) * float(a[1]) + float(a[2]),
}
for _name, _fn1 in (("sqrt", math.sqrt), ("fabs", math.fabs), ("floor", math.floor), ("ceil", math.ceil),
                    ("trunc", math.trunc), ("exp", math.exp), ("exp2", lambda x: 2.0 ** x), ("log", math.log),
                    ("log2", math.log2), ("log10", math.log10), ("sin", math.sin), ("cos", math.cos),
                    ("tan", math.tan), ("tanh", math.tanh), ("rsqrt", lambda x: 1.0 / math.sqrt(x)),
                    ("round", lambda x: math.copysign(math.floor(abs(x) + 0.5), x))):
    RUNTIME[_name] = _math1(lambda x, g=_fn1: float(g(x)), False)
    RUNTIME[_name + "f"] = _math1(lambda x, g=_fn1: float(g(x)), True)


def _bitcast(pack: str, unpack: str):
    """__int_as_float & co on the host (the headers' INFINITY, NAN are such casts)."""
    def run(it, args, types, node):
        width = struct.calcsize(pack)
        return struct.unpack(unpack, (int(args[0]) & ((1 << (8 * width)) - 1)).to_bytes(width, "little"))[0]
    return run


RUNTIME["__int_as_float"] = _bitcast("<I", "<f")
RUNTIME["__longlong_as_double"] = _bitcast("<Q", "<d")


def _more_functions():
    from . import libc, runtime
    RUNTIME.update(libc.FUNCTIONS)
    RUNTIME.update(runtime.FUNCTIONS)


_more_functions()


def diagnostic(err: HostError, filename: str) -> Diagnostic:
    loc = err.loc
    if loc:
        return Diagnostic(str(err), SourceLoc(filename, loc[0], loc[1]))
    return Diagnostic(str(err))
