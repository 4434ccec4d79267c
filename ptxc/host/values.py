"""C values on the host: how each type is stored (struct formats), converted and
wrapped.  Integers are Python ints already reduced to their type's range, floats are
Python floats (a `float` rounded to single precision), pointers are addresses."""
from __future__ import annotations

import struct

from ..frontend import sema as S

_FLOAT32 = struct.Struct("<f")


def round_f32(x: float) -> float:
    """x rounded to the nearest float32 (as C's float does), inf on overflow."""
    try:
        return _FLOAT32.unpack(_FLOAT32.pack(x))[0]
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def is_int(t) -> bool:
    return isinstance(t, (S.IntType, S.EnumType))


def is_float(t) -> bool:
    return isinstance(t, S.FloatType)


def is_pointer(t) -> bool:
    return isinstance(t, (S.PointerType, S.AnyPointerType))


def sizeof(t) -> int:
    if isinstance(t, S.EnumType):
        return 4
    if isinstance(t, (S.PointerType, S.AnyPointerType)):
        return 8
    if isinstance(t, S.ArrayType):
        return sizeof(t.elem) * (t.size or 0)
    if isinstance(t, S.VoidType):
        return 1
    if isinstance(t, S.FunctionType):
        return 8
    return S.sizeof(t)


def int_info(t) -> tuple[int, bool]:
    """(bits, signed) of an integer-like type."""
    if isinstance(t, S.EnumType):
        return 32, True
    return 8 * t.size, t.signed


FORMATS = {(1, True): "b", (1, False): "B", (2, True): "h", (2, False): "H", (4, True): "i", (4, False): "I",
           (8, True): "q", (8, False): "Q"}


def struct_format(t) -> str | None:
    """The struct module's code for a scalar type (None for structs and arrays)."""
    if isinstance(t, S.IntType):
        if t.name == "bool":
            return "?"
        return FORMATS[(t.size, t.signed)]
    if isinstance(t, S.EnumType):
        return "i"
    if isinstance(t, S.FloatType):
        return "f" if t.size == 4 else "d"
    if isinstance(t, (S.PointerType, S.AnyPointerType, S.FunctionType)):
        return "Q"
    return None


def converter(src, dst):
    """A function converting a value of type src to type dst, as C does."""
    if isinstance(dst, S.VoidType):
        return lambda v: None
    if isinstance(dst, S.IntType) and dst.name == "bool":
        return lambda v: 1 if v else 0
    if is_int(dst):
        bits, signed = int_info(dst)
        mask = (1 << bits) - 1
        top = 1 << (bits - 1)
        if is_float(src):
            def from_float(v):
                if v != v or v in (float("inf"), float("-inf")):
                    return 0 if not signed else -top
                return wrap(int(v))
        else:
            from_float = None

        if signed:
            def wrap(v):
                v &= mask
                return v - (1 << bits) if v & top else v
        else:
            def wrap(v):
                return v & mask
        return from_float if from_float else wrap
    if is_float(dst):
        if dst.size == 4:
            return lambda v: round_f32(float(v))
        return lambda v: float(v)
    if is_pointer(dst) or isinstance(dst, S.FunctionType):
        return lambda v: int(v) & 0xFFFFFFFFFFFFFFFF
    return lambda v: v


def type_key(t):
    """A hashable identity of a type without qualifiers (for caches)."""
    try:
        return S.type_key(t)
    except Exception:  # noqa: BLE001
        return str(t)
