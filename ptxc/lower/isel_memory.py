"""Instruction selection builders for loads, stores, atomics and address conversions.

Global memory is LDG/STG/ATOMG/RED with the `.E` form (a 64-bit address and the
memory descriptor in UR4); shared memory LDS/STS/ATOMS with 32-bit offsets in the
shared window; local memory LDL/STL with 32-bit offsets (the depot lives below
R1, the stack pointer); generic addresses LD/ST/ATOM; kernel parameters and
`.const` variables are constant-bank operands (c[0x0][0x160+...], c[0x3][...]),
read with LDC when the address is in a register.  Vectors (.v2/.v4) are one
access of 64 or 128 bits through an aligned register tuple; the element
registers are parts of that tuple (propagate_copies merges the moves).
Cache operators map as ptxas 13.5 maps them (measured on isa_memory.cu):
.ca -> STRONG.SM, .cg -> STRONG.GPU, .cs -> EF, .lu -> LU, .cv/.volatile -> STRONG.SYS,
.nc -> CONSTANT; stores .wb -> STRONG.SM, .cg -> STRONG.GPU, .cs -> EF, .wt -> STRONG.SYS.
"""
from __future__ import annotations

from dataclasses import replace

from ..ptx import ir as ptx
from ..sass.ir import CBank, Imm, Mem, Reg, RZ, PT, SpecialReg
from .isel_int import FALSE, TRUE, ZERO, ZERO64, _in_reg, extend_reg, size_of, wide
from .select_instrs import USER_CONST_BANK, Selector, Unsupported, half

SPACES = ("global", "shared", "local", "const", "param")
SIZE_MODS = {1: ("U8",), 2: ("U16",), 4: (), 8: ("64",), 16: ("128",)}
SIGNED_SIZE_MODS = {1: ("S8",), 2: ("S16",)}
LOAD_CACHE = {"ca": ("STRONG", "SM"), "cg": ("STRONG", "GPU"), "cs": ("EF",), "lu": ("LU",),
              "cv": ("STRONG", "SYS"), "nc": ("CONSTANT",), "volatile": ("STRONG", "SYS")}
STORE_CACHE = {"wb": ("STRONG", "SM"), "cg": ("STRONG", "GPU"), "cs": ("EF",), "wt": ("STRONG", "SYS"),
               "volatile": ("STRONG", "SYS")}
SCOPES = {"cta": ("STRONG", "SM"), "gpu": ("STRONG", "GPU"), "sys": ("STRONG", "SYS")}
CACHE_FIRST = ("EF", "LU")   # eviction hints print before the size, strength after it


def space_of(i: ptx.Instr) -> str:
    for part in i.parts[1:]:
        if part in SPACES:
            return part
    return "generic"


def vector_count(i: ptx.Instr) -> int:
    for part in i.parts[1:]:
        if part in ("v2", "v4", "v8"):
            return int(part[1:])
    return 1


def access_mods(size: int, type_: str) -> tuple:
    if size < 4 and type_.startswith("s"):
        return SIGNED_SIZE_MODS[size]
    return SIZE_MODS[size]


def _ordering(i: ptx.Instr, table: dict) -> tuple:
    """Cache operator or memory-ordering qualifier -> the LDG/STG modifiers."""
    for part in i.parts[1:]:
        if part in table:
            return table[part]
        if part in ("relaxed", "acquire", "release"):
            for scope in i.parts[1:]:
                if scope in SCOPES:
                    return SCOPES[scope]
    return ()


def _global_mods(size_mods: tuple, order: tuple) -> tuple:
    first = tuple(m for m in order if m in CACHE_FIRST)
    last = tuple(m for m in order if m not in CACHE_FIRST)
    return ("E",) + first + size_mods + last


# ---- loads ------------------------------------------------------------------------------

def ld(s: Selector, i: ptx.Instr):
    d, addr = i.operands
    space = space_of(i)
    t = i.parts[-1]
    count = vector_count(i)
    elem = size_of(t)
    if space == "param":
        ld_param(s, d, addr, t, count)
        return
    if space == "const":
        ld_const(s, d, addr, t, count)
        return
    total = elem * count
    dst, elems = _load_target(s, d, count, elem, t)
    mods = access_mods(total, t) if count == 1 else SIZE_MODS[total]
    if space == "global":
        s.emit("LDG", _global_mods(mods, _ordering(i, LOAD_CACHE)), [dst], [_global_address(s, addr)])
    elif space == "shared":
        s.emit("LDS", mods, [dst], [s.address(addr, "shared")])
    elif space == "local":
        s.emit("LDL", mods, [dst], [s.address(addr, "local")])
    else:
        s.emit("LD", _global_mods(mods, _ordering(i, LOAD_CACHE)), [dst], [_global_address(s, addr)])
    _finish_load(s, d, dst, elems, elem, t)


def _global_address(s: Selector, addr: ptx.Address) -> Mem:
    """A global or generic address: `[reg+offset]` with a 64-bit register, or
    `[var+offset]` for a `.global` variable (its address from bank 4, then the offset
    in the instruction: `LDG.E R2, [R2.64+0x8]`)."""
    if isinstance(addr.base, ptx.Symbol):
        kind, _slot = s.symbols.get(addr.base.name, (None, None))
        if kind != "global":
            raise Unsupported(f"address of '{addr.base.name}' in global memory ({kind or 'unknown'} symbol)")
        return Mem(s.global_address(addr.base.name), addr.offset)
    reg = s.reg(addr.base)
    if reg.width != 2:
        raise Unsupported("a 32-bit register as a global address")
    return Mem(reg, addr.offset)


def _load_target(s: Selector, d, count: int, elem: int, t: str):
    """The register a load writes: the destination itself, or a fresh tuple for a
    vector (whose parts become the element registers) or a 64-bit load into pairs."""
    if count == 1:
        reg = s.reg(d)
        if elem < 8 and reg.width == 2:   # ld.u8 into a 64-bit register: widen after
            return s.new(), None
        return reg, None
    width = max(elem * count // 4, 1)
    tuple_width = 4 if width > 2 else width
    return s.new(tuple_width), list(d.elems)


def _finish_load(s: Selector, d, dst: Reg, elems, elem: int, t: str):
    if elems is None:
        target = s.reg(d)
        if target.width == 2 and dst.width == 1:
            s.emit("MOV", (), [half(target, 0)], [dst])
            if t.startswith("s"):
                s.emit("SHF", ("R", "S32", "HI"), [half(target, 1)], [ZERO, Imm(31, "int"), dst])
            else:
                s.emit("MOV", (), [half(target, 1)], [ZERO])
        return
    if elem < 4:   # narrow elements: bytes of the loaded words, moved down
        for k, e in enumerate(elems):
            if isinstance(e, ptx.Reg):
                word = replace(dst, num=dst.num + k * elem // 4, width=1)
                shift = (k * elem) % 4 * 8
                if shift:
                    s.emit("SHF", ("R", "U32", "HI"), [s.reg(e)], [ZERO, Imm(shift, "int"), word])
                else:
                    s.emit("MOV", (), [s.reg(e)], [word])
        return
    words = max(elem // 4, 1)
    for k, e in enumerate(elems):
        if isinstance(e, ptx.Reg):
            part = replace(dst, num=dst.num + k * words, width=words)
            s.emit("MOV", (), [s.reg(e)], [part], comment="vector element" + (
                "; pseudo: expand_wide_ops" if words == 2 else ""))


def ld_param(s: Selector, d, addr: ptx.Address, t: str, count: int):
    name = addr.base.name if isinstance(addr.base, ptx.Symbol) else None
    if name not in s.param_offsets:
        from .lower_calls import ld_call_param
        ld_call_param(s, d, addr, t, count)
        return
    offset = s.func.param_base + s.param_offsets[name] + addr.offset
    elems = list(d.elems) if isinstance(d, ptx.Vector) else [d]
    elem = size_of(t)
    for k, e in enumerate(elems):
        if not isinstance(e, ptx.Reg):
            continue
        dst = s.reg(e)
        where = offset + k * elem
        if elem < 4:
            _load_narrow_constant(s, dst, CBank(0, where & ~3), where & 3, elem, t)
            continue
        if dst.width == 2 and elem == 4:
            # a wider destination: sign-extended for signed types, else zero-extended
            s.emit("MOV", (), [half(dst, 0)], [CBank(0, where)], comment="parameter")
            if t.startswith("s"):
                s.emit("SHF", ("R", "S32", "HI"), [half(dst, 1)], [ZERO, Imm(31, "int"), half(dst, 0)])
            else:
                s.emit("MOV", (), [half(dst, 1)], [ZERO])
            continue
        s.emit("MOV", (), [dst], [CBank(0, where)], comment="parameter" + (
            "; pseudo: expand_wide_ops" if dst.width == 2 else ""))


def _load_narrow_constant(s: Selector, dst: Reg, word: CBank, byte: int, elem: int, t: str):
    """An 8/16-bit constant-bank value: the word, then its bytes extended (PRMT)."""
    sel = prmt_extend_selector(byte, elem, t.startswith("s"))
    word_reg = s.new()
    s.emit("MOV", (), [word_reg], [word])
    target = dst if dst.width == 1 else half(dst, 0)
    s.emit("PRMT", (), [target], [word_reg, Imm(sel, "int"), ZERO])
    if dst.width == 2:
        if t.startswith("s"):
            s.emit("SHF", ("R", "S32", "HI"), [half(dst, 1)], [ZERO, Imm(31, "int"), target])
        else:
            s.emit("MOV", (), [half(dst, 1)], [ZERO])


def prmt_extend_selector(byte: int, size: int, signed: bool) -> int:
    """PRMT selector taking `size` bytes from byte `byte` of the first source and
    filling the rest with zeros (byte 4: the second source, RZ) or with copies of
    the sign (a nibble 8 | b replicates byte b's top bit)."""
    top = byte + size - 1
    fill = (8 | top) if signed else 4
    nibbles = [byte + k for k in range(size)] + [fill] * (4 - size)
    return sum(n << (4 * k) for k, n in enumerate(nibbles))


def ld_const(s: Selector, d, addr: ptx.Address, t: str, count: int):
    """`.const` memory is constant bank 3: a symbol address is a c[0x3][offset] operand;
    an address in a register (the bank offset mov.u64 gave, plus arithmetic) indexes
    the bank: LDC d, c[0x3][R+offset]."""
    if not isinstance(addr.base, ptx.Symbol):
        base = s.reg(addr.base)
        index = half(base, 0) if base.width == 2 else base
        elems = list(d.elems) if isinstance(d, ptx.Vector) else [d]
        elem = size_of(t)
        for k, e in enumerate(elems):
            if isinstance(e, ptx.Reg):
                dst = s.reg(e)
                mods = {1: ("S8",) if t.startswith("s") else ("U8",), 2: ("S16",) if t.startswith("s") else ("U16",),
                        4: (), 8: ("64",)}[elem]
                s.emit("LDC", mods, [dst], [CBank(USER_CONST_BANK, addr.offset + k * elem, index=index)])
        s.func.info.const_bank3 = True
        return
    kind, where = s.symbols.get(addr.base.name, (None, None))
    if kind != "const":
        raise Unsupported(f"ld.const of '{addr.base.name}'")
    elems = list(d.elems) if isinstance(d, ptx.Vector) else [d]
    elem = size_of(t)
    for k, e in enumerate(elems):
        if not isinstance(e, ptx.Reg):
            continue
        offset = where + addr.offset + k * elem
        dst = s.reg(e)
        if elem < 4:
            _load_narrow_constant(s, dst, CBank(USER_CONST_BANK, offset & ~3), offset & 3, elem, t)
            continue
        s.emit("MOV", (), [dst], [CBank(USER_CONST_BANK, offset)],
               comment="constant" + ("; pseudo: expand_wide_ops" if dst.width == 2 else ""))
    s.func.info.const_bank3 = True


# ---- stores -----------------------------------------------------------------------------

def st(s: Selector, i: ptx.Instr):
    addr, v = i.operands
    space = space_of(i)
    t = i.parts[-1]
    count = vector_count(i)
    elem = size_of(t)
    if space == "param":
        from .lower_calls import st_call_param
        st_call_param(s, addr, v, t, count)
        return
    data = _store_data(s, v, count, elem, t)
    mods = SIZE_MODS[elem * count] if count > 1 else SIZE_MODS[elem]
    if space == "global":
        s.emit("STG", _global_mods(mods, _ordering(i, STORE_CACHE)), [], [_global_address(s, addr), data])
    elif space == "shared":
        s.emit("STS", mods, [], [s.address(addr, "shared"), data])
    elif space == "local":
        s.emit("STL", mods, [], [s.address(addr, "local"), data])
    elif space == "generic":
        s.emit("ST", _global_mods(mods, _ordering(i, STORE_CACHE)), [], [_global_address(s, addr), data])
    else:
        raise Unsupported(f"store to {space} memory")


def _store_data(s: Selector, v, count: int, elem: int, t: str) -> Reg:
    """The stored value in a register (a tuple for vectors; RZ for zero)."""
    if count == 1:
        value = s.value(v, t)
        if isinstance(value, Reg):
            if elem < 8 and value.width == 2:
                return half(value, 0)
            return value
        if isinstance(value, Imm) and value.bits == 0:
            return Reg("R", RZ, width=2 if elem == 8 else 1)
        return s.materialize(value)
    if elem < 4:
        return _pack_narrow(s, v.elems, elem, t)
    words = elem // 4
    width = words * count
    data = s.new(4 if width > 2 else width)
    for k, e in enumerate(v.elems):
        part = replace(data, num=data.num + k * words, width=words)
        value = s.value(e, t)
        if isinstance(value, Imm):
            value = Imm(value.bits, "int")
        s.emit("MOV", (), [part], [value], comment="vector element" + (
            "; pseudo: expand_wide_ops" if words == 2 else ""))
    return data


def _pack_narrow(s: Selector, elems, elem: int, t: str) -> Reg:
    """8/16-bit vector elements packed into the words one store writes (PRMT)."""
    per_word = 4 // elem
    nwords = max(len(elems) * elem // 4, 1)
    data = s.new(nwords if nwords != 3 else 4)
    for w in range(nwords):
        part = replace(data, num=data.num + w, width=1) if data.width > 1 else data
        chunk = [_in_reg(s, s.value(e, t)) for e in elems[w * per_word:(w + 1) * per_word]]
        if elem == 2:
            s.emit("PRMT", (), [part], [chunk[0], Imm(0x5410, "int"), chunk[1] if len(chunk) > 1 else ZERO])
        else:
            low, high = s.new(), s.new()
            s.emit("PRMT", (), [low], [chunk[0], Imm(0x0040, "int"), chunk[1] if len(chunk) > 1 else ZERO])
            if len(chunk) > 2:
                s.emit("PRMT", (), [high], [chunk[2], Imm(0x0040, "int"), chunk[3] if len(chunk) > 3 else ZERO])
                s.emit("PRMT", (), [part], [low, Imm(0x5410, "int"), high])
            else:
                s.emit("MOV", (), [part], [low])
    return data


# ---- atomics ---------------------------------------------------------------------------

ATOM_OPS = {"add": "ADD", "min": "MIN", "max": "MAX", "inc": "INC", "dec": "DEC", "and": "AND",
            "or": "OR", "xor": "XOR", "exch": "EXCH", "cas": "CAS"}


def _atom_type_mods(op: str, t: str) -> tuple:
    if t == "f32":
        return ("F32", "FTZ", "RN")
    if t == "f64":
        return ("F64", "RN")
    if size_of(t) == 8:
        return ("S64",) if t == "s64" and op in ("min", "max") else ("64",)
    if t == "s32" and op in ("min", "max"):
        return ("S32",)
    return ()


def atom(s: Selector, i: ptx.Instr):
    d, addr, *vals = i.operands
    atomic(s, i, d, addr, vals)


def red(s: Selector, i: ptx.Instr):
    addr, *vals = i.operands
    atomic(s, i, None, addr, vals)


def atomic(s: Selector, i: ptx.Instr, d, addr, vals):
    space = space_of(i)
    t = i.parts[-1]
    op = next(p for p in i.parts[1:] if p in ATOM_OPS)
    if t in ("f16", "bf16", "f16x2", "bf16x2"):
        raise Unsupported(f"atomic on {t}")
    tmods = _atom_type_mods(op, t)
    wide_value = size_of(t) == 8
    srcs = [wide(s, v, t) if wide_value else _in_reg(s, s.value(v, t)) for v in vals]
    if op == "add" and t in ("f32", "f64"):
        srcs = [_in_reg(s, s.value(vals[0], "f32"))] if t == "f32" else srcs
    dst = s.reg(d) if d is not None else Reg("R", RZ, width=2 if wide_value else 1)
    scope = _atom_scope(i)
    if space == "shared":
        if needs_cas_loop(op, t):
            shared_cas_loop(s, op, t, dst, s.address(addr, "shared"), srcs)
            return
        s.emit("ATOMS", (ATOM_OPS[op],) + tmods, [dst], [s.address(addr, "shared")] + srcs)
        return
    mem = _global_address(s, addr)
    kind = "ATOMG" if space == "global" else "ATOM"
    if d is None and op != "cas" and op != "exch" and space == "global":
        s.emit("RED", ("E", ATOM_OPS[op]) + tmods + scope, [], [mem] + srcs)
        return
    s.emit(kind, ("E", ATOM_OPS[op]) + tmods + scope, [Reg("P", PT), dst], [mem] + srcs)


def needs_cas_loop(op: str, t: str) -> bool:
    """Shared memory's atomic unit has no float operations and, on 64-bit words, only CAS
    and EXCH: ptxas writes the others as a compare-and-swap loop (fe_atomics_scoped's
    64-bit atomicAdd on __shared__: LDS.64, IADD3 + IMAD.X, ATOMS.CAST.SPIN.64)."""
    return t in ("f32", "f64") or (size_of(t) == 8 and op not in ("cas", "exch"))


def shared_cas_loop(s: Selector, op: str, t: str, dst: Reg, mem: Mem, srcs: list):
    """ptxas's loop for a shared atomic the unit lacks: LDS the old value, compute the new
    one, ATOMS.CAST.SPIN (which writes 1 when the swap happened); again if not."""
    wide64 = size_of(t) == 8
    value = srcs[0]
    loop = s.new_label("cas")
    old, new, ok = s.new(2 if wide64 else 1), s.new(2 if wide64 else 1), s.new(2 if wide64 else 1)
    flag = s.new_pred()
    s.branch_to_block(loop)
    s.emit("LDS", ("64",) if wide64 else (), [old], [mem])
    _combine(s, op, t, new, old, value)
    s.emit("ATOMS", ("CAST", "SPIN") + (("64",) if wide64 else ()), [ok], [mem, old, new])
    s.emit("ISETP", ("EQ", "U32", "AND"), [flag, TRUE], [half(ok, 0) if wide64 else ok, Imm(1, "int"), TRUE])
    s.branch(loop, replace(flag, inv=True))
    if not dst.is_zero:
        s.emit("MOV", (), [dst], [old], comment="the value before the operation" + (
            "; pseudo: expand_wide_ops" if wide64 else ""))


def _combine(s: Selector, op: str, t: str, new: Reg, old: Reg, value: Reg):
    """new = old (op) value, for the operations shared_cas_loop runs."""
    from .isel_int import LUT_AND, LUT_OR, LUT_XOR, add64, compare64, lop3
    if t in ("f32", "f64") and op != "add":
        raise Unsupported(f"atom.shared.{op}.{t}")
    if t == "f32":
        s.emit("FADD", (), [new], [value, old])
    elif t == "f64":
        s.emit("DADD", (), [new], [old, value])
    elif op == "add":
        add64(s, new, old, value)
    elif op in ("and", "or", "xor"):
        lut = {"and": LUT_AND, "or": LUT_OR, "xor": LUT_XOR}[op]
        for k in (0, 1):
            lop3(s, half(new, k), half(old, k), half(value, k), ZERO, lut)
    elif op in ("min", "max"):
        take = s.new_pred()
        compare64(s, take, "lt" if op == "min" else "gt", t.startswith("s"), value, old)
        for k in (0, 1):
            s.emit("SEL", (), [half(new, k)], [half(value, k), half(old, k), take])
    else:
        raise Unsupported(f"atom.shared.{op}.{t}")


def _atom_scope(i: ptx.Instr) -> tuple:
    for part in i.parts[1:]:
        if part == "cta":
            return ("STRONG", "SM")
        if part == "sys":
            return ("STRONG", "SYS")
    return ("STRONG", "GPU")


# ---- address conversions -------------------------------------------------------------------

# The windows' generic bases are bank-0 slots of the target's record (Bank0); sm_90 reads
# the shared window's high word from a special register instead (the record's
# window_hi_sreg; ptxas: `S2R R5, SR_SWINHI`), and subtracts the local window's low word
# going back from generic.
def _windows(s: Selector) -> tuple[CBank, CBank]:
    """(shared window, local window): their bank-0 slots on the target."""
    bank0 = s.target.bank0
    return CBank(0, bank0.shared_window), CBank(0, bank0.local_window)


def cvta(s: Selector, i: ptx.Instr):
    """cvta.to.global is the identity (a pseudo fold_cvta removes); shared and local
    addresses are offsets in windows whose generic base the driver puts at c[0x0][0x18]
    and c[0x0][0x20]: to generic adds the base, from generic keeps the low word
    (the windows are 4 GiB aligned)."""
    d, a = i.operands
    t = i.parts[-1]
    to = i.has("to")
    space = next((p for p in i.parts[1:] if p in SPACES), "global")
    dst = s.reg(d)
    if space == "global":
        src = s.value(a, t)
        if isinstance(src, Reg) and src.width == 2:
            s.emit("CVTA", ("TO", "GLOBAL") if to else ("GLOBAL",), [dst], [src], comment="pseudo: fold_cvta")
        else:
            raise Unsupported("cvta of a global variable's address")
        return
    shared_window, local_window = _windows(s)
    hi_sreg = s.target.window_hi_sreg
    window = shared_window if space == "shared" else local_window
    if to:
        src = s.value(a, t)
        low = half(src, 0) if isinstance(src, Reg) and src.width == 2 else src
        if space == "local" and hi_sreg:   # sm_90: the offset from the window
            if not isinstance(low, Reg):
                low = s.materialize(low)
            offset = s.new()
            s.emit("IADD3", (), [offset], [low, replace(local_window, neg=True), ZERO])
            low = offset
        if dst.width == 2:
            s.emit("MOV", (), [half(dst, 0)], [low])
            s.emit("MOV", (), [half(dst, 1)], [ZERO])
        else:
            s.emit("MOV", (), [dst], [low])
        return
    src = s.value(a, t)
    if isinstance(src, Reg) and src.width == 2:
        src = half(src, 0)
    if not isinstance(src, Reg):
        src = s.materialize(src)
    if space == "shared" and hi_sreg:
        # sm_90: a shared address is already the low word; the window's high word is SR_SWINHI
        s.emit("MOV", (), [half(dst, 0)], [src])
        s.emit("S2R", (), [half(dst, 1)], [SpecialReg(hi_sreg)])
        return
    carry = s.new_pred()
    base = s.materialize(window, 2)
    s.emit("IADD3", (), [half(dst, 0), carry], [src, half(base, 0), ZERO])
    s.emit("IADD3", ("X",), [half(dst, 1)], [ZERO, half(base, 1), ZERO, carry, FALSE])


def isspacep(s: Selector, i: ptx.Instr):
    d, a = i.operands
    space = i.parts[1]
    p = s.reg(d)
    src = wide(s, a, "u64")
    shared_window, local_window = _windows(s)
    if space == "global":
        lo, hi = s.new_pred(), s.new_pred()
        # neither in the shared window nor in the local one
        s.emit("ISETP", ("NE", "U32", "AND"), [lo, TRUE], [half(src, 1), _hi_of(s, shared_window), TRUE])
        s.emit("ISETP", ("NE", "U32", "AND"), [p, TRUE], [half(src, 1), _hi_of(s, local_window), lo])
        return
    window = shared_window if space == "shared" else local_window
    s.emit("ISETP", ("EQ", "U32", "AND"), [p, TRUE], [half(src, 1), _hi_of(s, window), TRUE])


def _hi_of(s: Selector, window: CBank):
    if window == _windows(s)[0] and s.target.window_hi_sreg:
        hi = s.new()
        s.emit("S2R", (), [hi], [SpecialReg(s.target.window_hi_sreg)])
        return hi
    return CBank(window.bank, window.offset + 4)


def prefetch(s: Selector, i: ptx.Instr):
    """A hint: nothing to do."""


def membar(s: Selector, i: ptx.Instr):
    """membar / fence: MEMBAR at the scope; at GPU and system scope ptxas follows it
    with ERRBAR and an L1 invalidation (CCTL.IVALL)."""
    level = i.parts[1] if len(i.parts) > 1 else "gl"
    scope = {"cta": "CTA", "gl": "GPU", "gpu": "GPU", "sys": "SYS"}.get(level)
    if scope is None:
        scope = next((v for k, v in (("cta", "CTA"), ("gpu", "GPU"), ("sys", "SYS")) if i.has(k)), "GPU")
    s.emit("MEMBAR", ("SC", scope))
    if scope != "CTA":
        s.emit("ERRBAR")
        s.emit("CCTL", ("IVALL",))
