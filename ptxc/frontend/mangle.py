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
        if isinstance(t, S.TemplateParamType):
            text = "T_" if t.index == 0 else f"T{t.index - 1}_"
        elif isinstance(t, S.PointerType):
            text = "P" + self.type(t.pointee)
        elif isinstance(t, S.ReferenceType):
            text = "R" + self.type(t.pointee)
        elif isinstance(t, S.ArrayType):
            text = f"A{t.size if t.size is not None else ''}_" + self.type(t.elem)
        elif isinstance(t, S.FunctionType):
            params = "".join(self.type(p) for p in t.params) or "v"
            text = "F" + self.type(t.ret) + params + ("z" if t.variadic else "") + "E"
        elif isinstance(t, S.StructType) and t.template_args:
            # <unscoped-template-name> is a candidate of its own, then the whole name.
            name = f"{len(t.name)}{t.name}"
            found = self._lookup(("template", t.name))
            if found is None:
                self.substitutions.append(("template", t.name))
            text = (found or name) + self.template_args(t.template_args)
        elif isinstance(t, (S.StructType, S.EnumType)):
            text = self.source_name(t.name)
        else:
            raise ValueError(f"cannot mangle {t}")
        self.substitutions.append(key)
        return text


    def source_name(self, name: str) -> str:
        """`ns::Mode` is N2ns4ModeE (the prefix a candidate); `Mode` is 4Mode."""
        parts = name.split("::")
        if len(parts) == 1:
            return f"{len(name)}{name}"
        return "N" + self.prefix(parts[:-1]) + f"{len(parts[-1])}{parts[-1]}E"

    def prefix(self, parts: list) -> str:
        """The namespaces of a nested name; each prefix is a substitution candidate."""
        text = ""
        for k in range(len(parts)):
            key = ("prefix", tuple(parts[:k + 1]))
            found = self._lookup(key)
            if found is not None:
                text = found
                continue
            text += f"{len(parts[k])}{parts[k]}"
            self.substitutions.append(key)
        return text

    def template_args(self, args) -> str:
        return "I" + "".join(self.template_arg(a) for a in args) + "E"

    def template_arg(self, arg) -> str:
        if isinstance(arg, S.Type):
            return self.type(arg)
        value, t = arg
        code = self.type(S.unqualified(t))
        return f"L{code}{'n' if value < 0 else ''}{abs(int(value))}E"


# Itanium's <operator-name>s; the unary forms where the operator takes one operand.
OPERATOR_CODES = {
    "+": "pl", "-": "mi", "*": "ml", "/": "dv", "%": "rm", "&": "an", "|": "or", "^": "eo", "=": "aS",
    "+=": "pL", "-=": "mI", "*=": "mL", "/=": "dV", "%=": "rM", "&=": "aN", "|=": "oR", "^=": "eO",
    "<<": "ls", ">>": "rs", "<<=": "lS", ">>=": "rS", "==": "eq", "!=": "ne", "<": "lt", ">": "gt",
    "<=": "le", ">=": "ge", "!": "nt", "&&": "aa", "||": "oo", "++": "pp", "--": "mm", "()": "cl",
    "[]": "ix", "~": "co",
}
UNARY_CODES = {"+": "ps", "-": "ng", "*": "de", "&": "ad"}


def unqualified_name(name: str, operands: int) -> str:
    """<unqualified-name>: `3dot`, or `pl` for operator+ (`ng` for a unary minus)."""
    if name.startswith("operator") and name[8:] in OPERATOR_CODES:
        op = name[8:]
        return UNARY_CODES[op] if operands == 1 and op in UNARY_CODES else OPERATOR_CODES[op]
    return f"{len(name)}{name}"


def mangle_member(struct: "S.StructType", name: str | None, param_types: list, const: bool = False,
                  conversion=None) -> str:
    """A member function (`_ZNK4Vec23dotERKS_`) or, `name` None, a constructor (`_ZN4Vec2C1Eff`):
    the class is a prefix, and so a substitution candidate, like the type it is."""
    mangler = Mangler()
    prefix = mangler.type(S.unqualified(struct))
    if prefix.startswith("N") and prefix.endswith("E"):     # a class inside a namespace
        prefix = prefix[1:-1]
    if conversion is not None:      # `operator float()`: cv <type>
        member = "cv" + mangler.type(conversion)
    else:
        member = "C1" if name is None else unqualified_name(name, len(param_types) + 1)
    params = "".join(mangler.type(S.parameter_type(t)) for t in param_types) or "v"
    return f"_ZN{'K' if const else ''}{prefix}{member}E{params}"


def mangle_static_member(struct: "S.StructType", name: str) -> str:
    """A static data member: the class as a prefix, then the name (`_ZN3Cfg5callsE`)."""
    prefix = Mangler().type(S.unqualified(struct))
    if prefix.startswith("N") and prefix.endswith("E"):
        prefix = prefix[1:-1]
    return f"_ZN{prefix}{len(name)}{name}E"


def mangle_template_function(name: str, namespace: tuple, args: list, declared: "S.FunctionType") -> str:
    """A function template's instance: its name with `I<args>E`, then the declared
    return and parameter types (written with T_, T0_ where the declaration uses the
    parameters: <unscoped-template-name> and every prefix are substitution candidates)."""
    mangler = Mangler()
    if namespace:
        head = "N" + mangler.prefix(list(namespace))
        mangler.substitutions.append(("prefix", tuple(namespace) + (name,)))
        head += unqualified_name(name, len(declared.params)) + mangler.template_args(args) + "E"
    else:
        mangler.substitutions.append(("template", name))
        head = unqualified_name(name, len(declared.params)) + mangler.template_args(args)
    ret = mangler.type(declared.ret)
    params = "".join(mangler.type(S.parameter_type(t)) for t in declared.params) or "v"
    return f"_Z{head}{ret}{params}"


def mangle_function(name: str, param_types: list, namespace: tuple = ()) -> str:
    """`_Z<len><name><parameter types>`; `v` for an empty parameter list."""
    mangler = Mangler()
    head = unqualified_name(name, len(param_types))
    if namespace:
        head = "N" + mangler.prefix(list(namespace)) + head + "E"
    params = "".join(mangler.type(S.parameter_type(t)) for t in param_types) or "v"
    return f"_Z{head}{params}"


def mangle_static_local(function_mangled: str, name: str) -> str:
    """A function-scope static (a `__shared__` array inside a kernel): `_ZZ<fn>E<name>`."""
    return f"_ZZ{function_mangled[2:]}E{len(name)}{name}"
