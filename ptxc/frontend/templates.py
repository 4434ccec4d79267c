"""C++ templates: function and class templates, their arguments and their instances.

Expects: sema's Analyzer (it calls back into it to check an instance's body), the AST
of a `template <...>` declaration kept untouched (sema never checks a template itself:
only copies of it, one per argument list).
Guarantees: one FunctionSymbol (or StructType) per distinct argument list, checked like
an ordinary function in a scope where each type parameter is a typedef of its argument
and each value parameter an integer constant; its Itanium name is the one nvcc gives
(parameter types written with the template's parameters, `T_`, `T0_`, as the ABI says);
arguments come from the explicit list, then deduction from the call's argument types,
then the parameters' defaults.  Explicit specializations (`template <>`) replace the
primary template for their argument list.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from . import ast as A
from . import sema as S


@dataclass(eq=False)
class FunctionTemplate:
    name: str
    params: list                  # A.TemplateParam
    definition: A.Node            # A.FunctionDef (or a Declaration: a prototype), never checked itself
    loc: tuple
    namespace: tuple = ()         # the enclosing namespaces, outermost first
    scope: object = None          # where the template was declared (its names' scope)
    instances: dict = field(default_factory=dict)        # argument key -> FunctionSymbol
    specializations: dict = field(default_factory=dict)  # argument key -> A.FunctionDef


@dataclass(eq=False)
class ClassTemplate:
    name: str
    params: list
    spec: A.StructSpec
    loc: tuple
    scope: object = None
    instances: dict = field(default_factory=dict)        # argument key -> StructType
    specializations: dict = field(default_factory=dict)  # argument key -> A.StructSpec


@dataclass(eq=False)
class AliasTemplate:
    """`template <class T> using V4 = Vec<T, 4>;`: a type, written with the parameters."""
    name: str
    params: list
    type_name: A.TypeName
    loc: tuple
    scope: object = None


def alias_type(analyzer, template: AliasTemplate, args: list) -> S.Type:
    """The type an alias template names for `args` (its text read with the parameters bound)."""
    scope = bind_scope(template, args, analyzer)
    saved = analyzer.scope
    analyzer.scope = scope
    try:
        return analyzer.resolve_type_name(copy.deepcopy(template.type_name))
    finally:
        analyzer.scope = saved


def argument_key(args: list) -> tuple:
    return tuple(("t", a) if isinstance(a, S.Type) else ("v", a[0]) for a in args)


# ---- arguments -----------------------------------------------------------------------------

def explicit_arguments(analyzer, params: list, written: list, loc) -> list:
    """The arguments written in `<...>`, checked against the parameters: a Type for a
    type parameter, (value, Type) for a value parameter."""
    if len(written) > len(params):
        analyzer.fail(f"too many template arguments ({len(written)} for {len(params)} parameters)", loc)
    out = []
    for param, arg in zip(params, written):
        if param.kind == "type":
            if not isinstance(arg, A.TypeName):
                analyzer.fail(f"template argument for type parameter '{param.name}' must be a type", arg.loc)
            out.append(analyzer.resolve_type_name(arg))
        else:
            if isinstance(arg, A.TypeName):
                analyzer.fail(f"template argument for non-type parameter '{param.name}' must be an expression",
                              arg.loc)
            out.append(value_argument(analyzer, param, arg))
    return out


def value_argument(analyzer, param: A.TemplateParam, expr) -> tuple:
    t = S.unqualified(analyzer.derive(analyzer.base_type(param.specs), param.declarator))
    value = analyzer.constant_int(expr)
    return (S.convert_constant(value, t), t)


def complete_arguments(analyzer, template, args: list, loc) -> list:
    """Fill the parameters not given or deduced from their defaults, in order (a default
    may name earlier parameters)."""
    out = list(args)
    for k, param in enumerate(template.params):
        if k < len(out) and out[k] is not None:
            continue
        if param.default is None:
            analyzer.fail(f"couldn't infer template argument '{param.name}' of '{template.name}'", loc)
        scope = bind_scope(template, out[:k], analyzer)
        saved = analyzer.scope
        analyzer.scope = scope
        try:
            if param.kind == "type":
                value = analyzer.resolve_type_name(copy.deepcopy(param.default))
            else:
                value = value_argument(analyzer, param, copy.deepcopy(param.default))
        finally:
            analyzer.scope = saved
        if k < len(out):
            out[k] = value
        else:
            out.append(value)
    return out


def bind_scope(template, args: list, analyzer, placeholders: bool = False) -> S.Scope:
    """A scope above the template's own where each parameter names its argument (or,
    with `placeholders`, a TemplateParamType for mangling)."""
    scope = S.Scope(template.scope if template.scope is not None else analyzer.globals)
    for index, (param, arg) in enumerate(zip(template.params, args)):
        if param.name is None:
            continue
        if param.kind == "type":
            t = S.TemplateParamType(index, param.name) if placeholders else arg
            scope.names[param.name] = S.TypedefSymbol(param.name, t, param.loc)
        else:
            value, t = arg if arg is not None else (0, S.INT)
            scope.names[param.name] = S.EnumConstSymbol(param.name, value, t, param.loc)
    return scope


# ---- deduction ----------------------------------------------------------------------------

def deduce(analyzer, template: FunctionTemplate, explicit: list, arg_types: list, loc) -> list:
    """Template argument deduction from a call's argument types ([temp.deduct.call],
    simplified: T, pointers to T, arrays of T, qualifiers)."""
    # (a copy: sema records types in the nodes it checks, and the template's own stay unchecked)
    deriv = _function_deriv(copy.deepcopy(template.definition.declarator))
    args = list(explicit) + [None] * (len(template.params) - len(explicit))
    _deduce_values(template, deriv, arg_types, args)
    scope = bind_scope(template, args, analyzer, placeholders=True)
    for index, a in enumerate(args):    # explicit arguments are not placeholders
        if a is not None and template.params[index].kind == "type":
            scope.names[template.params[index].name] = S.TypedefSymbol(template.params[index].name, a, loc)
    saved = analyzer.scope
    analyzer.scope = scope
    try:
        params = [analyzer.derive(analyzer.base_type(p.specs), p.declarator) for p in deriv.params]
    finally:
        analyzer.scope = saved
    given = len(explicit)
    for ptype, atype in zip(params, arg_types):
        before = list(args)
        for k in range(given, len(args)):   # each deduction on its own, then compared
            if args[k] is not None:
                args[k] = None
        _match(S.parameter_type(ptype) if not isinstance(ptype, S.ReferenceType) else ptype.pointee,
               atype, args)
        for k in range(given, len(args)):
            if before[k] is not None and args[k] is not None and S.unqualified(before[k]) != S.unqualified(args[k]):
                analyzer.fail(f"no matching function for call to '{template.name}': conflicting types for "
                              f"'{template.params[k].name}' ('{before[k]}' and '{args[k]}')", loc)
            if args[k] is None:
                args[k] = before[k]
    return args


def _deduce_values(template, deriv: A.FunctionDeriv, arg_types: list, args: list) -> None:
    """Non-type arguments from class template instances: a parameter `const Tile<N>&`
    given a `Tile<32>` makes N 32 (the argument list is read from the parameter's text,
    since a placeholder instance of Tile would not show where N went)."""
    names = {p.name: k for k, p in enumerate(template.params) if p.kind != "type" and p.name}
    if not names:
        return
    for param, atype in zip(deriv.params, arg_types):
        ref = next((t for t in param.specs.type_specs if isinstance(t, A.TemplateTypeRef)), None)
        a = S.unqualified(atype)
        while isinstance(a, (S.PointerType, S.ReferenceType)):
            a = S.unqualified(a.pointee)
        if ref is None or not isinstance(a, S.StructType) or not a.template_args or not ref.args:
            continue
        for given, actual in zip(ref.args, a.template_args):
            if isinstance(given, A.Ident) and given.name in names and isinstance(actual, tuple):
                k = names[given.name]
                if args[k] is None:
                    args[k] = actual


def _match(p: S.Type, a: S.Type, args: list) -> None:
    if isinstance(p, S.TemplateParamType):
        if args[p.index] is None:
            bound = S.with_quals(a, False if p.const else None, False if p.volatile else None)
            args[p.index] = S.unqualified(bound) if not (p.const or p.volatile) else bound
            if not (p.const or p.volatile):
                args[p.index] = S.unqualified(a)
        return
    if isinstance(p, S.PointerType) and isinstance(a, S.PointerType):
        inner = a.pointee
        if isinstance(p.pointee, S.TemplateParamType):
            inner = S.with_quals(inner, False if p.pointee.const else None, False if p.pointee.volatile else None)
            if args[p.pointee.index] is None:
                args[p.pointee.index] = inner
            return
        _match(p.pointee, inner, args)
    elif isinstance(p, S.ArrayType) and isinstance(a, S.ArrayType):
        _match(p.elem, a.elem, args)
    elif isinstance(p, S.StructType) and isinstance(a, S.StructType) and p.template is not None \
            and p.template is a.template:
        for pa, aa in zip(p.template_args, a.template_args):
            if isinstance(pa, S.Type) and isinstance(aa, S.Type):
                _match(pa, aa, args)


def _function_deriv(declarator: A.Declarator) -> A.FunctionDeriv:
    for deriv in reversed(declarator.derivations):
        if isinstance(deriv, A.FunctionDeriv):
            return deriv
    raise ValueError("not a function declarator")


# ---- instances ----------------------------------------------------------------------------

def instantiate_function(analyzer, template: FunctionTemplate, args: list, loc) -> S.FunctionSymbol:
    key = argument_key(args)
    found = template.instances.get(key)
    if found is not None:
        return found
    specialization = template.specializations.get(key)
    fdef = copy.deepcopy(specialization if specialization is not None else template.definition)
    scope = bind_scope(template, args, analyzer) if specialization is None else \
        S.Scope(template.scope if template.scope is not None else analyzer.globals)
    # The mangled name writes the declared signature in terms of the parameters.
    placeholder_scope = bind_scope(template, args, analyzer, placeholders=True)
    saved = analyzer.scope
    try:
        analyzer.scope = placeholder_scope
        signature = copy.deepcopy((template.definition.specs, template.definition.declarator))
        declared = analyzer.derive(analyzer.base_type(signature[0]), signature[1])
        analyzer.scope = scope
        base = analyzer.base_type(fdef.specs)
        t = analyzer.derive(base, fdef.declarator)
    finally:
        analyzer.scope = saved
    from .mangle import mangle_template_function
    spaces = frozenset(s.strip("_") for s in fdef.specs.exec_spaces) or frozenset({"host"})
    shown = f"{template.name}<{', '.join(argument_text(a) for a in args)}>"
    sym = S.FunctionSymbol(shown, t, fdef.declarator.loc, spaces, launch_bounds=list(fdef.specs.launch_bounds),
                           inline=next((s for s in fdef.specs.function_specs if s != "constexpr"), None))
    sym.defaults = [p.default for p in _function_deriv(fdef.declarator).params]
    sym.default_scope = scope
    sym.mangled = mangle_template_function(template.name, template.namespace, args, declared)
    sym.template_args = args
    template.instances[key] = sym
    if isinstance(fdef, A.FunctionDef):
        analyzer.define_instance(sym, fdef, scope)
    analyzer.functions.append(sym)
    return sym


def dependent(arg) -> bool:
    """Does a template argument name a template parameter (inside a declared signature)?"""
    if isinstance(arg, S.TemplateParamType):
        return True
    if isinstance(arg, (S.PointerType, S.ReferenceType)):
        return dependent(arg.pointee)
    if isinstance(arg, S.ArrayType):
        return dependent(arg.elem)
    if isinstance(arg, S.StructType):
        return any(dependent(a) for a in arg.template_args)
    return False


def instantiate_class(analyzer, template: ClassTemplate, args: list, loc) -> S.StructType:
    if any(dependent(a) for a in args):     # `Complex<T>` in a signature being mangled: a name only
        return S.StructType(template.name, template=template, template_args=tuple(args))
    key = argument_key(args)
    found = template.instances.get(key)
    if found is not None:
        return found
    specialization = template.specializations.get(key)
    spec = copy.deepcopy(specialization if specialization is not None else template.spec)
    scope = bind_scope(template, args, analyzer) if specialization is None else \
        S.Scope(template.scope if template.scope is not None else analyzer.globals)
    saved = analyzer.scope
    analyzer.scope = scope
    try:
        spec.instance = (template, tuple(args))
        struct = analyzer.struct_type(spec)
    finally:
        analyzer.scope = saved
    if struct.template is None:
        struct = S.named_instance(struct, template.name, template, tuple(args))
    template.instances[key] = struct
    return struct


def argument_text(arg) -> str:
    if isinstance(arg, S.Type):
        return S.type_name(arg)
    value, t = arg
    if isinstance(t, S.IntType) and t.name == "bool":
        return "true" if value else "false"
    return str(value)
