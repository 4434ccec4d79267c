"""Itanium C++ name mangling, the scheme nvcc's kernel names use: `vadd(const float*,
const float*, float*, int)` is `_Z4vaddPKfS0_Pfi`.

Covers every type the frontend has: the builtin integer and floating types, pointers,
cv/restrict qualifiers, arrays (decayed to pointers as parameters), structs, unions and
enums by name, and function types.  Substitutions (S_, S0_, ...) follow the ABI: every
mangled pointer, qualified or named type is recorded once, and a later occurrence of
the same type is replaced by its index.
"""
from __future__ import annotations

from . import sema as S

BUILTIN_CODES = {
    "void": "v", "bool": "b", "char": "c", "signed char": "a", "unsigned char": "h",
    "short": "s", "unsigned short": "t", "int": "i", "unsigned int": "j", "long": "l",
    "unsigned long": "m", "long long": "x", "unsigned long long": "y", "float": "f",
    "double": "d", "__half": "6__half",
}


def _seq_id(index: int) -> str:
    """Substitution number `index` as the ABI writes it: S_, S0_, S1_, ..., S9_, SA_, ..."""
    if index == 0:
        return "S_"
    n = index - 1
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    text = ""
    while True:
        text = digits[n % 36] + text
        n //= 36
        if n == 0:
            break
    return f"S{text}_"


class Mangler:
    def __init__(self):
        self.substitutions: list = []

    def _lookup(self, key) -> str | None:
        for index, known in enumerate(self.substitutions):
            if known == key:
                return _seq_id(index)
        return None

    def type(self, t: S.Type) -> str:
        quals = S.qualifier_string(t)
        if quals:
            key = ("qual", S.type_key(t))
            found = self._lookup(key)
            if found:
                return found
            text = quals + self.type(S.unqualified(t))
            self.substitutions.append(key)
            return text
        if isinstance(t, (S.IntType, S.FloatType, S.VoidType)):
            return BUILTIN_CODES[t.name]
        key = S.type_key(t)
        found = self._lookup(key)
        if found:
            return found
        if isinstance(t, S.PointerType):
            text = "P" + self.type(t.pointee)
        elif isinstance(t, S.ArrayType):
            text = f"A{t.size if t.size is not None else ''}_" + self.type(t.elem)
        elif isinstance(t, S.FunctionType):
            params = "".join(self.type(p) for p in t.params) or "v"
            text = "F" + self.type(t.ret) + params + ("z" if t.variadic else "") + "E"
        elif isinstance(t, (S.StructType, S.EnumType)):
            text = f"{len(t.name)}{t.name}"
        else:
            raise ValueError(f"cannot mangle {t}")
        self.substitutions.append(key)
        return text


def mangle_function(name: str, param_types: list) -> str:
    """`_Z<len><name><parameter types>`; `v` for an empty parameter list."""
    mangler = Mangler()
    params = "".join(mangler.type(S.parameter_type(t)) for t in param_types) or "v"
    return f"_Z{len(name)}{name}{params}"


def mangle_static_local(function_mangled: str, name: str) -> str:
    """A function-scope static (a `__shared__` array inside a kernel): `_ZZ<fn>E<name>`."""
    return f"_ZZ{function_mangled[2:]}E{len(name)}{name}"
