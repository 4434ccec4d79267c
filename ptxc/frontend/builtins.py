"""Builtin functions in device code: what each CUDA builtin lowers to in PTX.

BUILTINS maps a builtin's codegen name (sema's FunctionSymbol.builtin) to a function
`gen(cg, call, result_type, want_value)` that emits its instructions through the
FunctionCodegen `cg` and returns the result operand.
"""
from __future__ import annotations

import struct

from ..ptx import ir
from . import ast as A
from . import sema as S
from .vir import MemRef, VReg, bits, float_type, int_type, memory_type, reg_class


def _unary_builtin(opcode_for):
    def gen(cg, expr: A.Call, t: S.Type, want_value: bool):
        value = cg.gen_expr(expr.args[0])
        return cg.op(opcode_for(t), reg_class(t), value)
    return gen


def _binary_builtin(opcode_for):
    def gen(cg, expr: A.Call, t: S.Type, want_value: bool):
        a = cg.gen_expr(expr.args[0])
        b = cg.gen_expr(expr.args[1])
        return cg.op(opcode_for(t), reg_class(t), a, b)
    return gen


def _minmax(kind):
    def opcode(t):
        if isinstance(t, S.FloatType):
            return f"{kind}.{float_type(t)}"
        return f"{kind}.{int_type(t)}"
    return _binary_builtin(opcode)


def _gen_syncthreads(cg, expr, t, want_value):
    cg.emit("bar.sync", ir.Imm(0))
    cg.clobber_memory("all")


def _gen_barrier_sync(cg, expr, t, want_value):
    """__barrier_sync(id): `barrier.sync id` (the aligned form cooperative groups' sync()
    compiles to, where __syncthreads is `bar.sync 0`)."""
    cg.emit("barrier.sync", cg.gen_expr(expr.args[0]))
    cg.clobber_memory("all")


def _gen_threadfence(cg, expr, t, want_value):
    cg.emit("membar.gl")
    cg.clobber_memory("all")


def pointer_argument(cg, expr: A.Expr) -> MemRef:
    """The memory a pointer argument designates, keeping its state space when the
    argument is `&x[i]` or an array (atomics on shared memory stay atom.shared)."""
    while isinstance(expr, A.ImplicitCast) and S.is_pointer(expr.type) and S.is_pointer(expr.operand.type):
        expr = expr.operand
    if isinstance(expr, A.Unary) and expr.op == "&":
        return cg.gen_lvalue(expr.operand)
    if isinstance(expr, A.ImplicitCast) and isinstance(expr.operand.type, S.ArrayType):
        return cg.gen_lvalue(expr.operand)
    return cg.pointer_target(cg.gen_expr(expr), expr.type)


_CACHE_HINTS = {"__ldg": "nc", "__ldcg": "cg", "__ldca": "ca", "__ldcs": "cs", "__ldlu": "lu", "__ldcv": "cv",
                "__stcg": "cg", "__stcs": "cs", "__stwb": "wb", "__stwt": "wt"}


def _gen_ldg(cg, expr, t, want_value):
    """__ldg(p): ld.global.nc; __ldcg & co: ld.global.cg / .ca / .cs / .lu / .cv."""
    mem = pointer_argument(cg, expr.args[0])
    hint = _CACHE_HINTS[expr.callee.builtin]
    if isinstance(t, S.StructType):   # float4 & co: one vector load
        from .vir import AggValue
        elem = t.fields[0][1]
        regs = [cg.new_reg(reg_class(elem)) for _ in range(t.vector)]
        cg.emit(f"ld.global.{hint}.v{t.vector}.{memory_type(elem)}", ir.Vector(tuple(regs)),
                ir.Address(mem.base, mem.offset))
        return AggValue(t, regs)
    cls = reg_class(t)
    dst = cg.new_reg("rs" if cls == "p" else cls)
    cg.emit(f"ld.global.{hint}.{memory_type(t)}", dst, ir.Address(mem.base, mem.offset))
    if expr.callee.builtin == "__ldcv":   # a volatile-like load: never reused
        cg.clobber_memory("global")
    return dst


def _gen_store_hint(cg, expr, t, want_value):
    """__stcg(p, v) & co: st.global.cg / .cs / .wb / .wt."""
    mem = pointer_argument(cg, expr.args[0])
    value = cg.gen_expr(expr.args[1])
    ptype = S.unqualified(expr.args[1].type)
    cg.emit(f"st.global.{_CACHE_HINTS[expr.callee.builtin]}.{memory_type(ptype)}", ir.Address(mem.base, mem.offset),
            cg.materialize(value, ptype) if isinstance(value, ir.Imm) else value)
    cg.clobber_memory("global")


def _gen_sad(kind):
    def gen(cg, expr, t, want_value):
        a, b, c = (cg.gen_expr(x) for x in expr.args)
        return cg.op(f"sad.{kind}32", "r", a, b, c)
    return gen


def _gen_uni_sync(cg, expr, t, want_value):
    mask = cg.gen_expr(expr.args[0])
    pred = cg.as_pred(cg.truth(cg.gen_expr(expr.args[1]), expr.args[1].type))
    out = cg.new_reg("p")
    cg.emit("vote.sync.uni.pred", out, pred, mask)
    return cg.op("selp.u32", "r", ir.Imm(1), ir.Imm(0), out)


def _gen_reduce(cg, expr, t, want_value):
    """__reduce_add_sync & co (sm_80+): redux.sync over the warp."""
    op = expr.callee.name.split("_")[3]
    kind = "b32" if op in ("and", "or", "xor") else int_type(t)
    mask = cg.gen_expr(expr.args[0])
    value = cg.gen_expr(expr.args[1])
    dst = cg.new_reg("r")
    cg.emit(f"redux.sync.{op}.{kind}", dst, cg.materialize(value, t) if isinstance(value, ir.Imm) else value, mask)
    return dst


def _match_operand(cg, expr: A.Expr):
    """The value __match_*_sync compares, and its width: a float or double as its bits
    (CUDA's overloads cast them), 64-bit integers as b64."""
    value = cg.gen_expr(expr)
    t = S.unqualified(expr.type)
    width = 64 if bits(t) == 64 else 32
    if isinstance(t, S.FloatType):
        cls = "r" if width == 32 else "rd"
        value = fold_bitcast(value, cls, S.UINT if width == 32 else S.ULLONG) if isinstance(value, ir.Imm) \
            else cg.op(f"mov.b{width}", cls, value)
    elif isinstance(value, ir.Imm):
        value = cg.materialize(value, S.UINT if width == 32 else S.ULLONG)
    return value, width


def _gen_match_all(cg, expr, t, want_value):
    """__match_all_sync(mask, v, &pred): match.all.sync.b32 d|p; pred is written."""
    mask = cg.gen_expr(expr.args[0])
    value, width = _match_operand(cg, expr.args[1])
    target = cg.pointer_target(cg.gen_expr(expr.args[2]), expr.args[2].type)
    dst, pred = cg.new_reg("r"), cg.new_reg("p")
    # `d|p` is not an operand the IR can print: written as inline PTX (render_inline_asm)
    instr = cg.emit("inline.asm", dst, pred, value,
                    cg.materialize(mask, S.UINT) if isinstance(mask, ir.Imm) else mask)
    instr.asm = (f"match.all.sync.b{width} %0|%1, %2, %3;", 2)
    cg.has_asm = True
    cg.store(target, cg.op("selp.u32", "r", ir.Imm(1), ir.Imm(0), pred))
    return dst


def _gen_match_any(cg, expr, t, want_value):
    mask = cg.gen_expr(expr.args[0])
    value, width = _match_operand(cg, expr.args[1])
    dst = cg.new_reg("r")
    cg.emit(f"match.any.sync.b{width}", dst, value, mask)
    return dst


_ATOMIC_OPS = {"atomicAdd": "add", "atomicExch": "exch", "atomicMin": "min", "atomicMax": "max",
               "atomicAnd": "and", "atomicOr": "or", "atomicXor": "xor", "atomicInc": "inc",
               "atomicDec": "dec", "atomicSub": "add"}


def _atomic_type(op: str, t: S.Type) -> str:
    if op in ("exch", "and", "or", "xor", "cas"):
        return f"b{bits(t)}"
    if isinstance(t, S.FloatType):
        return float_type(t)
    if op in ("min", "max"):
        return int_type(t)
    return f"u{bits(t)}"


# atomicAdd_block -> atom.cta.add, atomicAdd_system -> atom.sys.add (NVVM's scopes).
_ATOMIC_SCOPE = {"": "", "_block": ".cta", "_system": ".sys"}


def _atomic_scope(name: str) -> tuple[str, str]:
    """(the atomic without its scope suffix, the PTX scope qualifier)."""
    for suffix in ("_block", "_system"):
        if name.endswith(suffix):
            return name[:-len(suffix)], _ATOMIC_SCOPE[suffix]
    return name, ""


def _gen_atomic(cg, expr: A.Call, t: S.Type, want_value: bool):
    name, scope = _atomic_scope(expr.callee.name)
    op = _ATOMIC_OPS[name]
    mem = pointer_argument(cg, expr.args[0])
    value = cg.gen_expr(expr.args[1])
    if name == "atomicSub":
        if isinstance(value, ir.Imm):
            value = ir.Imm(S.convert_constant(-value.value, t))
        else:
            value = cg.op(f"neg.s{bits(t)}", value.cls, value)
    space = "" if mem.space == "generic" else f".{mem.space}"
    atype = _atomic_type(op, t)
    addr = ir.Address(mem.base, mem.offset)
    # NVVM writes atom even when the old value is unused (no red).
    dst = cg.new_reg(reg_class(t))
    cg.emit(f"atom{space}{scope}.{op}.{atype}", dst, addr, value)
    cg.clobber_memory(mem.space)
    return dst


def _gen_atomic_cas(cg, expr, t, want_value):
    scope = _atomic_scope(expr.callee.name)[1]
    mem = pointer_argument(cg, expr.args[0])
    compare = cg.gen_expr(expr.args[1])
    value = cg.gen_expr(expr.args[2])
    space = "" if mem.space == "generic" else f".{mem.space}"
    dst = cg.new_reg(reg_class(t))
    cg.emit(f"atom{space}{scope}.cas.b{bits(t)}", dst, ir.Address(mem.base, mem.offset), compare, value)
    cg.clobber_memory(mem.space)
    return dst


def _gen_threadfence_block(cg, expr, t, want_value):
    cg.emit("membar.cta")


def _gen_threadfence_system(cg, expr, t, want_value):
    cg.emit("membar.sys")


def _gen_syncthreads_reduce(kind):
    """__syncthreads_count/and/or: bar.red over the block of a predicate."""
    def gen(cg, expr, t, want_value):
        value = cg.gen_expr(expr.args[0])
        pred = cg.truth(value, expr.args[0].type)
        pred = cg.as_pred(pred)
        cg.clobber_memory("all")
        if kind == "popc":
            dst = cg.new_reg("r")
            cg.emit("bar.red.popc.u32", dst, ir.Imm(0), pred)
            return dst
        out = cg.new_reg("p")
        cg.emit(f"bar.red.{kind}.pred", out, ir.Imm(0), pred)
        return cg.op("selp.u32", "r", ir.Imm(1), ir.Imm(0), out)
    return gen


# ---- warps ---------------------------------------------------------------------------

_SHUFFLE_MODES = {"__shfl_sync": "idx", "__shfl_up_sync": "up", "__shfl_down_sync": "down",
                  "__shfl_xor_sync": "bfly"}


def _gen_shuffle(cg, expr: A.Call, t: S.Type, want_value: bool):
    """__shfl_*_sync(mask, var, lane[, width]) -> shfl.sync.<mode>.b32; the clamp operand
    packs the segment mask ((32 - width) << 8) with the lane limit (31, or 0 for up).
    A 64-bit value is shuffled as two halves, as NVVM splits it."""
    mode = _SHUFFLE_MODES[expr.callee.builtin]
    mask = cg.gen_expr(expr.args[0])
    value = cg.gen_expr(expr.args[1])
    lane = cg.gen_expr(expr.args[2])
    width = cg.gen_expr(expr.args[3]) if len(expr.args) > 3 else ir.Imm(32)
    limit = 0 if mode == "up" else 31
    if isinstance(width, ir.Imm):
        clamp = ir.Imm(((32 - width.value) << 8) | limit)
    else:
        segment = cg.op("shl.b32", "r", cg.op("sub.s32", "r", ir.Imm(32), width), ir.Imm(8))
        clamp = cg.op("or.b32", "r", segment, ir.Imm(limit)) if limit else segment

    def shuffle(word):
        dst = cg.new_reg("r")
        cg.emit(f"shfl.sync.{mode}.b32", dst, word, lane, clamp, mask)
        return dst

    cls = reg_class(t)
    if cls == "r":
        return shuffle(value)
    if cls == "f":
        return cg.op("mov.b32", "f", shuffle(cg.op("mov.b32", "r", value)))
    bits64 = value if cls == "rd" else cg.op("mov.b64", "rd", value)
    low = cg.op("cvt.u32.u64", "r", bits64)
    high = cg.op("cvt.u32.u64", "r", cg.op("shr.u64", "rd", bits64, ir.Imm(32)))
    high, low = shuffle(high), shuffle(low)
    joined = cg.new_reg("rd")
    cg.emit("mov.b64", joined, ir.Vector((low, high)))
    return joined if cls == "rd" else cg.op("mov.b64", "fd", joined)


def _gen_vote(kind):
    def gen(cg, expr, t, want_value):
        mask = cg.gen_expr(expr.args[0])
        pred = cg.as_pred(cg.truth(cg.gen_expr(expr.args[1]), expr.args[1].type))
        if kind == "ballot":
            dst = cg.new_reg("r")
            cg.emit("vote.sync.ballot.b32", dst, pred, mask)
            return dst
        out = cg.new_reg("p")
        cg.emit(f"vote.sync.{kind}.pred", out, pred, mask)
        return cg.op("selp.u32", "r", ir.Imm(1), ir.Imm(0), out)
    return gen


def _gen_activemask(cg, expr, t, want_value):
    dst = cg.new_reg("r")
    cg.emit("activemask.b32", dst)
    return dst


def _gen_syncwarp(cg, expr, t, want_value):
    mask = cg.gen_expr(expr.args[0]) if expr.args else ir.Imm(-1)
    cg.emit("bar.warp.sync", mask)


# ---- bits and conversions ------------------------------------------------------------

def _gen_ffs(width):
    """__ffs(x): 1 + the position of the lowest set bit (0 for x == 0), as NVVM writes it:
    brev, then bfind.shiftamt (which gives 0xffffffff for 0), plus one."""
    def gen(cg, expr, t, want_value):
        x = cg.gen_expr(expr.args[0])
        reversed_ = cg.op(f"brev.b{width}", "r" if width == 32 else "rd", x)
        position = cg.op(f"bfind.shiftamt.u{width}", "r", reversed_)
        return cg.op("add.s32", "r", position, ir.Imm(1))
    return gen


def fold_bitcast(value: ir.Imm, cls: str, t: S.Type) -> ir.Imm:
    """The bits of a constant read as another type: a constant (NVVM folds the bitcast;
    `INFINITY` and `CUDART_NAN_F` are such casts in ptxc's headers)."""
    width = 32 if cls in ("r", "f") else 64
    if isinstance(value.value, float):
        packed = struct.pack("<f" if width == 32 else "<d", value.value)
    else:
        packed = (value.value & ((1 << width) - 1)).to_bytes(width // 8, "little")
    if cls in ("f", "fd"):
        return ir.Imm(struct.unpack("<f" if width == 32 else "<d", packed)[0], ".f32" if width == 32 else ".f64")
    return ir.Imm(S.convert_constant(int.from_bytes(packed, "little"), t))


def _gen_bitcast(cls):
    def gen(cg, expr, t, want_value):
        value = cg.gen_expr(expr.args[0])
        width = 32 if cls in ("r", "f") else 64
        if isinstance(value, ir.Imm):
            return fold_bitcast(value, cls, t)
        return cg.op(f"mov.b{width}", cls, value)
    return gen


def _gen_convert(opcode, cls):
    def gen(cg, expr, t, want_value):
        return cg.op(opcode, cls, cg.gen_expr(expr.args[0]))
    return gen


def _gen_make_vector(cg, expr, t, want_value):
    from .vir import AggValue
    elem = t.fields[0][1]
    return AggValue(t, [cg.convert(cg.gen_expr(a), a.type, elem) for a in expr.args])


def _gen_ternary(opcode, cls):
    def gen(cg, expr, t, want_value):
        a, b, c = (cg.gen_expr(x) for x in expr.args)
        return cg.op(opcode, cls, a, b, c)
    return gen


# ---- device printf -----------------------------------------------------------------------
VPRINTF = ir.Function("vprintf", entry=False, visible=False, extern=True, defined=False,
                      params=[ir.Param(".b64", "vprintf_param_0"), ir.Param(".b64", "vprintf_param_1")],
                      return_params=[ir.Param(".b32", "func_retval0")])


def _string_literal(expr: A.Expr) -> str | None:
    while isinstance(expr, A.ImplicitCast):
        expr = expr.operand
    return expr.value if isinstance(expr, A.StringLit) else None


def _printf_argument(cg, arg: A.Expr):
    """(value, PTX store type, size) of one of printf's arguments as vprintf's buffer holds
    it: sema made C's default promotions (float -> double, char/short -> int); a string
    literal is the generic address of its `$str` constant."""
    text = _string_literal(arg)
    if text is not None:
        return cg.module.string_constant(cg, text), "u64", 8
    t = S.unqualified(arg.type)
    value = cg.gen_expr(arg)
    if isinstance(t, (S.PointerType, S.ArrayType)):
        if value.__class__ is VReg:
            value = cg.to_generic(value)
        return value, "u64", 8
    if isinstance(t, S.FloatType):
        return value, memory_type(t), S.sizeof(t)
    if S.sizeof(t) < 4:
        raise cg.unsupported("a printf argument narrower than int", arg)
    return value, f"u{S.sizeof(t) * 8}", S.sizeof(t)


def _printf_buffer(cg, size: int) -> int:
    """The frame offset of vprintf's argument buffer: one region that every printf of the
    function shares, as large as the largest (NVVM's single alloca), grown in place
    while it ends the frame."""
    base, have = getattr(cg, "printf_buffer", (None, 0))
    if base is not None and size <= have:
        return base
    if base is not None and cg.frame_size == base + have:
        cg.frame_size = base + size
        cg.printf_buffer = (base, size)
        return base
    base = cg.local_region(size, 8)
    cg.printf_buffer = (base, size)
    return base


def _gen_printf(cg, expr, t, want_value):
    """printf(fmt, ...) in device code, as NVVM writes it: the arguments stored in a
    buffer of the thread's local frame, each at its own alignment, and
    `call.uni (retval0), vprintf, (fmt, buffer)`; no arguments: a null buffer."""
    fmt = _string_literal(expr.args[0])
    if fmt is None:
        raise cg.unsupported("printf with a format that is not a string literal", expr.args[0])
    fmt_ptr = cg.module.string_constant(cg, fmt)
    args = [_printf_argument(cg, a) for a in expr.args[1:]]
    if args:
        offsets, size = [], 0
        for _value, _type, width in args:
            size = (size + width - 1) // width * width
            offsets.append(size)
            size += width
        base = _printf_buffer(cg, size)
        local = cg.frame_register("%SPL")
        for (value, stype, _width), offset in zip(args, offsets):
            cg.emit(f"st.local.{stype}", ir.Address(local, base + offset), value)
        buffer = cg.op("add.u64", "rd", cg.frame_register("%SP"), ir.Imm(base))
    else:
        buffer = ir.Imm(0)
    cg.module.declare_extern(VPRINTF)
    cg.call_count += 1
    n = cg.call_count
    names = [f"__s{n}_param0", f"__s{n}_param1"]
    for name, value in zip(names, (fmt_ptr, buffer)):
        cg.call_params.append(ir.Param(".b64", name))
        cg.emit("st.param.b64", ir.Address(ir.Symbol(name)), value)
    ret = f"__s{n}_retval0"
    cg.call_params.append(ir.Param(".b32", ret))
    cg.emit("call.uni", ir.OperandList((ir.Symbol(ret),)), ir.Symbol("vprintf"),
            ir.OperandList(tuple(ir.Symbol(x) for x in names)))
    cg.clobber_memory("all")
    dst = cg.new_reg("r")
    cg.emit("ld.param.b32", dst, ir.Address(ir.Symbol(ret)))
    return dst


BUILTINS = {
    "printf": _gen_printf,
    "__syncthreads": _gen_syncthreads, "__barrier_sync": _gen_barrier_sync,
    "__syncthreads_count": _gen_syncthreads_reduce("popc"),
    "__syncthreads_and": _gen_syncthreads_reduce("and"),
    "__syncthreads_or": _gen_syncthreads_reduce("or"),
    "__threadfence": _gen_threadfence,
    "__threadfence_block": _gen_threadfence_block,
    "__threadfence_system": _gen_threadfence_system,
    "__syncwarp": _gen_syncwarp, "__activemask": _gen_activemask,
    "__ballot_sync": _gen_vote("ballot"), "__any_sync": _gen_vote("any"), "__all_sync": _gen_vote("all"),
    "min": _minmax("min"), "max": _minmax("max"),
    "abs": _unary_builtin(lambda t: "abs.s32"), "labs": _unary_builtin(lambda t: "abs.s64"),
    "llabs": _unary_builtin(lambda t: "abs.s64"),
    "__popc": _unary_builtin(lambda t: "popc.b32"), "__clz": _unary_builtin(lambda t: "clz.b32"),
    "__popcll": _gen_convert("popc.b64", "r"), "__clzll": _gen_convert("clz.b64", "r"),
    "__ffs": _gen_ffs(32), "__ffsll": _gen_ffs(64),
    "__brev": _unary_builtin(lambda t: "brev.b32"), "__brevll": _unary_builtin(lambda t: "brev.b64"),
    "__mul24": _binary_builtin(lambda t: "mul24.lo.s32"), "__umul24": _binary_builtin(lambda t: "mul24.lo.u32"),
    "__mulhi": _binary_builtin(lambda t: "mul.hi.s32"), "__umulhi": _binary_builtin(lambda t: "mul.hi.u32"),
    "__mul64hi": _binary_builtin(lambda t: "mul.hi.s64"), "__umul64hi": _binary_builtin(lambda t: "mul.hi.u64"),
    "__byte_perm": _gen_ternary("prmt.b32", "r"),
    "__funnelshift_l": _gen_ternary("shf.l.wrap.b32", "r"), "__funnelshift_r": _gen_ternary("shf.r.wrap.b32", "r"),
    "__funnelshift_lc": _gen_ternary("shf.l.clamp.b32", "r"), "__funnelshift_rc": _gen_ternary("shf.r.clamp.b32", "r"),
    "__sad": _gen_sad("s"), "__usad": _gen_sad("u"), "__uni_sync": _gen_uni_sync, "__match_any_sync": _gen_match_any,
    "__float_as_int": _gen_bitcast("r"), "__float_as_uint": _gen_bitcast("r"),
    "__int_as_float": _gen_bitcast("f"), "__uint_as_float": _gen_bitcast("f"),
    "__double_as_longlong": _gen_bitcast("rd"), "__longlong_as_double": _gen_bitcast("fd"),
    "make_vector": _gen_make_vector,
    "atomicCAS": _gen_atomic_cas,
}
for _name in ("add", "min", "max", "and", "or", "xor"):
    BUILTINS[f"__reduce_{_name}_sync"] = _gen_reduce
BUILTINS["__match_all_sync"] = _gen_match_all
for _name in _SHUFFLE_MODES:
    BUILTINS[_name] = _gen_shuffle
for _name, _hint in _CACHE_HINTS.items():
    BUILTINS[_name] = _gen_ldg if _name.startswith("__ld") else _gen_store_hint
for _name in _ATOMIC_OPS:
    BUILTINS[_name] = _gen_atomic
