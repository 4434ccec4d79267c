"""C++ classes: member functions, constructors, `this`, static members, bases, operators.

Expects: sema's Analyzer, a struct whose body has more than fields (StructSpec members
that are FunctionDefs, ConstructorDefs or static StructMembers, or bases).
Guarantees: the struct's layout is C's (bases' fields first, in order); every member
function is an ordinary function with the object as its first parameter -- `this`, a
`S *`, or for a const member function `__self`, the object by value (a const member
cannot change it, so a copy is the same, and a temporary needs no address); every
constructor is a function returning the object it builds (`S __self; members from the
initializer list; the body; return __self;`), so `S s(1, 2)`, `S(1, 2)` and `return
S(a, b)` are calls, inlined like any other, the object in registers.  Inside member
bodies a field's bare name is `this->name`.  Operators on class values become calls of
the member or free `operatorX` functions.  Names are mangled as nvcc mangles them
(`_ZNK4Vec23dotERKS_`, `_ZN4Vec2C1Eff`).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from . import ast as A
from . import sema as S


@dataclass(eq=False)
class ClassInfo:
    methods: dict = field(default_factory=dict)     # name -> [FunctionSymbol]
    ctors: list = field(default_factory=list)       # FunctionSymbol
    scope: object = None                            # fields, methods, statics by bare name
    own: set = field(default_factory=set)           # names of the member functions the class itself defines
    templates: dict = field(default_factory=dict)   # name -> templates.FunctionTemplate (member templates)


FieldRef, MethodRef = S.FieldRef, S.MethodRef      # (defined beside the other symbols)


def has_class_members(spec: A.StructSpec) -> bool:
    return bool(spec.bases) or any(
        not isinstance(m, A.StructMember) or "static" in m.specs.storage or
        any(d.derivations and isinstance(d.derivations[-1], A.FunctionDeriv) for d in m.declarators)
        for m in spec.members)


def _class_ref(loc) -> A.DeclSpecifiers:
    return A.DeclSpecifiers(loc, [], [], [], [], [], [A.TypeNameRef(loc, "__ptxc_class")])


def build_class(an, spec: A.StructSpec, name: str) -> S.StructType:
    fields, inherited = [], ClassInfo()
    for base in spec.bases:
        bt = an.base_type(A.DeclSpecifiers(base.loc, [], [], [], [], [], [base]))
        if not isinstance(bt, S.StructType) or not bt.complete:
            an.fail(f"base class '{S.type_name(bt)}' is not a complete struct", base.loc)
        fields += [(f, t) for f, t, _ in bt.fields]
        if bt.info is not None:
            for mname, syms in bt.info.methods.items():
                inherited.methods.setdefault(mname, []).extend(syms)
    statics, methods, ctors, others, member_templates = [], [], [], [], []
    for member in spec.members:
        if isinstance(member, A.StructMember):
            if "static" in member.specs.storage:
                statics.append(member)
                continue
            base = an.base_type(member.specs)
            for declarator in member.declarators:
                t = an.derive(base, declarator)
                if isinstance(t, S.FunctionType):
                    an.fail("unsupported feature: member functions defined outside their class", declarator.loc)
                if declarator.name in [f[0] for f in fields]:
                    an.error(f"duplicate member '{declarator.name}'", declarator.loc)
                fields.append((declarator.name, t))
        elif isinstance(member, A.FunctionDef):
            methods.append(member)
        elif isinstance(member, A.ConstructorDef):
            ctors.append(member)
        elif isinstance(member, A.TemplateDecl) and isinstance(member.declaration, A.FunctionDef):
            member_templates.append(member)
        else:
            others.append(member)
    struct = S.make_struct(name, fields, "union" if spec.kind == "union" else "struct")
    if spec.align is not None:
        align = max(struct.align, an.constant_int(spec.align))
        struct = S.dataclasses.replace(struct, align=align, size=(struct.size + align - 1) // align * align)
    info = ClassInfo(methods={k: list(v) for k, v in inherited.methods.items()})
    struct = S.dataclasses.replace(struct, info=info)
    if spec.instance is not None:       # a class template's instance: named `Name<args>` from the start
        struct = S.named_instance(struct, spec.instance[0].name, *spec.instance)
    if spec.name:
        an.scope.tags[spec.name] = struct
    scope = info.scope = S.Scope(an.scope)
    scope.names["__ptxc_class"] = S.TypedefSymbol("__ptxc_class", struct, spec.loc)
    if spec.name:
        scope.names[spec.name] = S.TypedefSymbol(spec.name, struct, spec.loc)   # the injected class name
    for fname, _, _ in struct.fields:
        scope.names[fname] = FieldRef(fname, bool(spec.captures and spec.captures.get(fname)))
    for mname in inherited.methods:     # a base's member functions, named unqualified in the class
        scope.names[mname] = MethodRef(mname)
    for member in methods:
        scope.names[member.declarator.name] = MethodRef(member.declarator.name)
    from .templates import FunctionTemplate
    for member in member_templates:
        d = member.declaration.declarator
        info.templates[d.name] = FunctionTemplate(d.name, member.params, member.declaration, d.loc, (), scope)
        scope.names[d.name] = MethodRef(d.name)
    saved = an.scope
    an.scope = scope
    try:
        for member in others:
            S._STMT_CHECKS[type(member)](an, member)
        for member in statics:
            declare_static(an, member, struct, scope)
        pending = [(make_method(an, struct, m), m) for m in methods]
        pending += [(make_constructor(an, struct, c), None) for c in ctors]
    finally:
        an.scope = saved
    if spec.name and any(isinstance(s, (S.VarSymbol, S.FunctionSymbol, S.EnumConstSymbol))
                         for s in scope.names.values()):
        # `S::N`, `S::f()`: the statics by qualified name
        an.scope.names.setdefault(spec.name, S.NamespaceSymbol(spec.name, scope, spec.loc))
    for sym, _ in pending:
        an.define_instance(sym, sym.definition, scope)
    return struct


def declare_static(an, member: A.StructMember, struct: S.StructType, scope: S.Scope) -> None:
    base = an.base_type(member.specs)
    if member.specs.constexpr:
        base = S.with_quals(base, const=True)
    for declarator, init in zip(member.declarators, member.inits or [None] * len(member.declarators)):
        t = an.derive(base, declarator)
        if isinstance(t, S.FunctionType):
            an.fail("unsupported feature: static member functions declared without a body", declarator.loc)
        sym = S.VarSymbol(declarator.name, t, "global", declarator.loc, space="device",
                          has_init=init is not None, is_static=True)
        if init is not None:
            value = an.check_initializer(init, t)
            an.note_constant(sym, value)
            if sym.const_value is None:
                an.fail(f"unsupported feature: static data member '{declarator.name}' initialized in its class "
                        f"by a value that is not a constant", declarator.loc)
        else:   # declared here, defined outside the class (`int S::n = 0;`): a host variable, as in CUDA
            if member.specs.memory_spaces or member.specs.exec_spaces:
                an.fail("memory qualifier on data member is not allowed", declarator.loc)
            sym.space = None
            sym.static_member = struct
            from .mangle import mangle_static_member
            sym.linkage_name = mangle_static_member(struct, declarator.name)
        scope.names[declarator.name] = sym


def make_method(an, struct: S.StructType, fdef: A.FunctionDef, register: bool = True):
    """A member function as a function of the object (`this` or `__self`) and its parameters."""
    fdef = copy.deepcopy(fdef)
    d = fdef.declarator
    deriv = d.derivations[-1] if d.derivations and isinstance(d.derivations[-1], A.FunctionDeriv) else None
    if deriv is None:
        an.fail("expected a member function declarator", d.loc)
    is_static = "static" in fdef.specs.storage
    mode = None
    if not is_static:
        loc = d.loc
        if deriv.const:
            specs = _class_ref(loc)
            specs.qualifiers.append("const")
            deriv.params.insert(0, A.ParameterDeclaration(loc, specs, A.Declarator(loc, "__self", [])))
            mode = "value"
        else:
            deriv.params.insert(0, A.ParameterDeclaration(loc, _class_ref(loc),
                                                          A.Declarator(loc, "this", [A.PointerDeriv(loc, [])])))
            mode = "pointer"
    if "virtual" in fdef.specs.storage:
        an.fail("unsupported feature: virtual functions", d.loc)
    conversion = None
    if d.conversion_type is not None:       # `operator float() const`: returns that type
        conversion = an.resolve_type_name(d.conversion_type)
        alias = f"__conversion_type{len(an.scope.names)}"
        an.scope.names[alias] = S.TypedefSymbol(alias, conversion, d.loc)
        fdef.specs.type_specs = [A.TypeNameRef(d.loc, alias)]
    base = an.base_type(fdef.specs)
    t = an.derive(base, d)
    spaces = frozenset(s.strip("_") for s in fdef.specs.exec_spaces) or frozenset({"host"})
    sym = S.FunctionSymbol(f"{struct.name}::{d.name}", t, d.loc, spaces,
                           inline=next((s for s in fdef.specs.function_specs if s != "constexpr"), None))
    sym.self_mode = mode
    sym.defaults = [p.default for p in deriv.params]
    sym.default_scope = an.scope
    declared = t.params[1:] if mode else t.params
    from .mangle import mangle_member
    sym.mangled = mangle_member(struct, d.name, list(declared), const=mode == "value", conversion=conversion)
    sym.declared_type = t
    S.effective_function_type(sym)
    sym.definition = fdef
    if register:
        if d.name not in struct.info.own:      # a class's own member hides the inherited ones of its name
            struct.info.methods[d.name] = []
            struct.info.own.add(d.name)
        struct.info.methods[d.name].append(sym)
    an.functions.append(sym)
    return sym


def make_constructor(an, struct: S.StructType, ctor: A.ConstructorDef):
    """`S(params) : a(x) { body }` as `S __ctor(params) { S __self; __self.a = x; body; return __self; }`."""
    loc = ctor.loc
    ctor = copy.deepcopy(ctor)
    specs = ctor.specs or A.DeclSpecifiers(loc, [], [], [], [], [], [])
    specs.type_specs = [A.TypeNameRef(loc, "__ptxc_class")]
    items = [A.Declaration(loc, _class_ref(loc), [A.InitDeclarator(loc, A.Declarator(loc, "__self", []))])]
    for name, args, iloc in ctor.inits:
        found = struct.field(name)
        if found is None:
            an.fail(f"'{name}' is not a member of '{struct.name}'", iloc)
        target = A.Member(iloc, A.Ident(iloc, "__self"), name)
        if len(args) == 1 and not (isinstance(found[0], S.StructType) and found[0].info is not None):
            value = args[0]
        else:
            value = A.Construct(iloc, A.TypeName(iloc, None, None, S.unqualified(found[0])), args)
        items.append(A.ExprStmt(iloc, A.Assign(iloc, "=", target, value)))
    items += ctor.body.items
    items.append(A.ReturnStmt(loc, A.Ident(loc, "__self")))
    fdef = A.FunctionDef(loc, specs, A.Declarator(loc, "__ctor", [A.FunctionDeriv(loc, ctor.params)]),
                         A.CompoundStmt(loc, items))
    t = an.derive(an.base_type(specs), fdef.declarator)
    spaces = frozenset(s.strip("_") for s in specs.exec_spaces) or frozenset({"host"})
    sym = S.FunctionSymbol(f"{struct.name}::{struct.name}", t, loc, spaces, inline="__forceinline__")
    sym.self_mode = "ctor"
    sym.defaults = [p.default for p in ctor.params]
    sym.default_scope = an.scope
    from .mangle import mangle_member
    sym.mangled = mangle_member(struct, None, list(t.params))
    sym.declared_type = t
    S.effective_function_type(sym)
    sym.definition = fdef
    if struct.info is not None:
        struct.info.ctors.append(sym)
    an.functions.append(sym)
    return sym


def aggregate_construct(an, expr: A.Construct, t: S.StructType, args: list) -> A.Expr:
    """`Vec{a, b}` of a struct without constructors: its fields in order, from a
    constructor made for it (one per struct and argument count, the rest zero)."""
    cache = an.__dict__.setdefault("aggregate_ctors", {})
    key = (t.decl, len(args))
    sym = cache.get(key)
    if sym is None:
        if len(args) > len(t.fields):
            an.fail(f"too many initializers for '{S.type_name(t)}'", expr.loc)
        loc = expr.loc
        scope = S.Scope(an.scope)
        scope.names["__ptxc_class"] = S.TypedefSymbol("__ptxc_class", t, loc)
        params, inits = [], []
        for index, (fname, ftype, _) in enumerate(t.fields):
            if index < len(args):
                tname = f"__field_type{index}"
                scope.names[tname] = S.TypedefSymbol(tname, S.unqualified(ftype), loc)
                params.append(A.ParameterDeclaration(loc, A.DeclSpecifiers(loc, [], [], [], [], [],
                                                                            [A.TypeNameRef(loc, tname)]),
                                                     A.Declarator(loc, f"__arg{index}", [])))
                inits.append((fname, [A.Ident(loc, f"__arg{index}")], loc))
            elif S.is_scalar(ftype):
                inits.append((fname, [A.IntLit(loc, 0, "0")], loc))
        spaces = ["__host__", "__device__"]
        ctor = A.ConstructorDef(loc, A.DeclSpecifiers(loc, [], [], [], spaces, [], []), params, inits,
                                A.CompoundStmt(loc, []))
        saved = an.scope
        an.scope = scope
        try:
            sym = make_constructor(an, t, ctor)
            an.define_instance(sym, sym.definition, scope)
        finally:
            an.scope = saved
        cache[key] = sym
    call = A.Call(expr.loc, A.Ident(expr.loc, sym.name), args)
    return an.finish_call(call, sym, args)


# ---- uses ---------------------------------------------------------------------------------

def member_template_instance(an, struct: S.StructType, template, call: A.Call, args: list):
    """`obj.apply(lane, f)` of `template <typename F> void apply(int, F)`: the instance
    for the deduced arguments, a member function like the others (cached per arguments)."""
    from . import templates as T
    arg_types = [S.unqualified(S.decay(a.type)) for a in args]
    explicit = T.deduce(an, template, [], arg_types, call.loc)
    explicit = T.complete_arguments(an, template, explicit, call.loc)
    key = T.argument_key(explicit)
    found = template.instances.get(key)
    if found is not None:
        return found
    scope = T.bind_scope(template, explicit, an)
    saved = an.scope
    an.scope = scope
    try:
        sym = make_method(an, struct, template.definition, register=False)
    finally:
        an.scope = saved
    template.instances[key] = sym
    an.define_instance(sym, sym.definition, scope)
    return sym


def object_of(an, base: A.Expr, arrow: bool) -> tuple:
    """(the object expression, its struct type) of `base.m` / `base->m`."""
    if arrow:
        if isinstance(base, A.Unary) and base.op == "&":
            return base.operand, base.operand.type
        base = an.rvalue(base)
        if not S.is_pointer(base.type) or not isinstance(base.type.pointee, S.StructType):
            an.fail(f"member reference type '{base.type}' is not a pointer to a struct", base.loc)
        return A.Unary(base.loc, "*", base, base.type.pointee), base.type.pointee
    return base, base.type


def self_argument(an, sym, obj: A.Expr, loc) -> A.Expr:
    if sym.self_mode == "value":
        return obj
    if isinstance(obj, A.Unary) and obj.op == "*":
        return obj.operand
    if not an.is_lvalue(obj):
        an.fail(f"unsupported feature: calling the non-const member function '{sym.name}' on a temporary", loc)
    return an.check_expr(A.Unary(obj.loc, "&", obj))    # (its variable's address is taken)


def method_call(an, call: A.Call, obj: A.Expr, struct: S.StructType, name: str, args: list) -> A.Expr:
    """`obj.name(args)`: the member function chosen by overload resolution on (obj, args)."""
    info = struct.info
    candidates = info.methods.get(name, []) if info is not None else []
    if info is not None and name in info.templates and not candidates:
        candidates = [member_template_instance(an, struct, info.templates[name], call, args)]
    if not candidates:
        an.fail(f"no member function named '{name}' in '{S.type_name(struct)}'", call.loc)
    full = {}
    for sym in candidates:
        if sym.self_mode is None:
            full[id(sym)] = list(args)
        else:
            full[id(sym)] = [self_argument(an, sym, obj, call.loc)] + list(args)
    viable = [s for s in candidates if len(full[id(s)]) <= len(s.type.params) and
              len(full[id(s)]) + sum(d is not None for d in s.defaults[len(full[id(s)]):]) >= len(s.type.params)]
    if not viable:
        an.fail(f"no matching member function for call to '{name}'", call.loc)
    sym = viable[0]
    if len(viable) > 1:
        picked = an.pick_overload(S.Overloads(name, viable), full[id(viable[0])], call.loc) \
            if all(len(full[id(s)]) == len(full[id(viable[0])]) for s in viable) else viable[0]
        sym = picked
    if sym.self_mode is not None and sym.name.rpartition("::")[0] != struct.name.partition("<")[0] and \
            sym.name.rpartition("::")[0] != struct.name:
        an.fail(f"unsupported feature: calling the base class's member function '{sym.name}' on a "
                f"'{S.type_name(struct)}' (a derived object)", call.loc)
    return an.finish_call(call, sym, full[id(sym)])


def construct(an, expr: A.Construct, t: S.StructType, args: list) -> A.Expr:
    """`S(args)`: a constructor's call; `S(s)` without one that fits: the copy."""
    ctors = t.info.ctors if t.info is not None else []
    viable = [c for c in ctors if len(args) <= len(c.type.params) and
              len(args) + sum(d is not None for d in c.defaults[len(args):]) >= len(c.type.params)]
    if len(args) == 1 and S.unqualified(args[0].type) == S.unqualified(t) and \
            not any(len(c.type.params) == 1 and S.unqualified(c.type.params[0]) == S.unqualified(t) for c in viable):
        return args[0]
    if not ctors:           # a class without constructors: `Max()`, `Acc{1.0f}` set its fields in order
        return aggregate_construct(an, expr, t, args)
    if not viable:
        an.fail(f"no matching constructor for '{S.type_name(t)}' with {len(args)} argument(s)", expr.loc)
    sym = viable[0] if len(viable) == 1 else an.pick_overload(S.Overloads(t.name, viable), args, expr.loc)
    call = A.Call(expr.loc, A.Ident(expr.loc, sym.name), args)
    return an.finish_call(call, sym, args)


def default_constructor(t: S.Type):
    if isinstance(t, S.StructType) and t.info is not None:
        for c in t.info.ctors:
            if all(d is not None for d in c.defaults) or not c.type.params:
                return c
    return None


OPERATOR_NAMES = {"+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "&", "|", "^", "<<", ">>",
                  "&&", "||"}


def overloaded_operator(an, op: str, operands: list, loc):
    """`a + b` where an operand is a class: `a.operator+(b)` or `operator+(a, b)`, the
    member first; None if neither exists (the builtin operator then reports)."""
    first = operands[0]
    t = S.unqualified(first.type)
    name = "operator" + op
    if isinstance(t, S.StructType) and t.info is not None and t.info.methods.get(name):
        call = A.Call(loc, A.Member(loc, first, name), operands[1:])
        return method_call(an, call, first, t, name, operands[1:])
    free = an.scope.lookup(name)
    if free is not None:
        call = A.Call(loc, A.Ident(loc, name), operands)
        return an.check_expr(call)
    return None


# ---- lambdas ------------------------------------------------------------------------------

def _names_used(node, out: set) -> None:
    """Every identifier an AST uses (a lambda's body: what it may capture)."""
    if isinstance(node, A.Ident):
        out.add(node.name)
        return
    if isinstance(node, list):
        for item in node:
            _names_used(item, out)
        return
    if isinstance(node, tuple):
        for item in node:
            _names_used(item, out)
        return
    if not isinstance(node, A.Node):
        return
    for f in S.dataclasses.fields(node):
        if f.name in ("loc", "type", "symbol", "callee"):
            continue
        _names_used(getattr(node, f.name), out)


def lambda_closure(an, expr: A.Lambda) -> A.Expr:
    """`[=](float x) { return a * x; }` as a class: one field per captured local (a
    pointer for a capture by reference), a const `operator()`, a constructor taking
    the captures; the expression is that constructor's call."""
    loc = expr.loc
    used: set = set()
    _names_used(expr.body, used)
    default = next((c for c in expr.captures if c in ("=", "&")), None)
    explicit = {c.lstrip("&"): c.startswith("&") for c in expr.captures if c not in ("=", "&", "this")}
    params = {p.declarator.name for p in expr.params}
    captures = []       # (name, VarSymbol, by reference)
    for name in sorted(used):
        if name in params:
            continue
        sym = an.scope.lookup(name)
        if not isinstance(sym, S.VarSymbol) or sym.kind not in ("local", "param") or sym.function is not an.function:
            continue
        if name in explicit:
            captures.append((name, sym, explicit[name]))
        elif default is not None:
            captures.append((name, sym, default == "&"))
        else:
            an.fail(f"variable '{name}' cannot be implicitly captured in a lambda with no capture-default", loc)
    scope = S.Scope(an.scope)
    members, ctor_params, inits, args = [], [], [], []
    for index, (name, sym, by_ref) in enumerate(captures):
        value_type = S.unqualified(sym.type) if not sym.reference else sym.type.pointee
        if isinstance(value_type, S.ArrayType):
            an.fail(f"unsupported feature: capturing the array '{name}' in a lambda", loc)
        field_type = S.PointerType(value_type) if by_ref else value_type
        tname = f"__capture_type{index}"
        scope.names[tname] = S.TypedefSymbol(tname, field_type, loc)
        specs = A.DeclSpecifiers(loc, [], [], [], [], [], [A.TypeNameRef(loc, tname)])
        members.append(A.StructMember(loc, specs, [A.Declarator(loc, name, [])], [None]))
        pname = f"__capture{index}"
        ctor_params.append(A.ParameterDeclaration(loc, A.DeclSpecifiers(loc, [], [], [], [], [],
                                                                         [A.TypeNameRef(loc, tname)]),
                                                  A.Declarator(loc, pname, [])))
        inits.append((name, [A.Ident(loc, pname)], loc))
        ident = A.Ident(loc, name)
        args.append(A.Unary(loc, "&", ident) if by_ref else ident)
    spaces = list(expr.spaces) or (["__device__"] if an.function is not None and an.function.on_device
                                   else ["__host__", "__device__"])
    ret_specs = expr.ret.specs if expr.ret is not None else A.DeclSpecifiers(loc, [], [], [], [], [], ["auto"])
    ret_decl = expr.ret.declarator if expr.ret is not None else A.Declarator(loc, None, [])
    op_specs = A.DeclSpecifiers(loc, [], list(ret_specs.qualifiers), ["__forceinline__"], list(spaces), [],
                                list(ret_specs.type_specs))
    op_decl = A.Declarator(loc, "operator()", [A.FunctionDeriv(loc, list(expr.params), False, True)] +
                           list(ret_decl.derivations))
    members.append(A.FunctionDef(loc, op_specs, op_decl, expr.body))
    ctor_specs = A.DeclSpecifiers(loc, [], [], [], list(spaces), [], [])
    members.append(A.ConstructorDef(loc, ctor_specs, ctor_params, inits, A.CompoundStmt(loc, [])))
    spec = A.StructSpec(loc, "struct", None, members)
    spec.captures = {name: by_ref for name, _, by_ref in captures}
    saved = an.scope
    an.scope = scope
    try:
        closure = build_class(an, spec, "<lambda>")
    finally:
        an.scope = saved
    return construct(an, A.Construct(loc, None, args), closure, [an.operand(a) for a in args])


# ---- user-defined conversions ---------------------------------------------------------------

def conversion_operators(t) -> list:
    t = S.unqualified(t)
    if isinstance(t, S.StructType) and t.info is not None:
        return [m for m in t.info.methods.get("operator conversion", []) if m.self_mode is not None]
    return []


def converting_constructors(t, vt) -> list:
    """The constructors of class t that take one value of type vt (the others defaulted)."""
    t = S.unqualified(t)
    if not (isinstance(t, S.StructType) and t.info is not None):
        return []
    out = []
    for c in t.info.ctors:
        params = c.type.params
        if not params or any(d is None for d in c.defaults[1:len(params)]) or getattr(c, "explicit", False):
            continue
        p = S.unqualified(params[0])
        if p == S.unqualified(vt) or (S.is_arithmetic(p) and S.is_arithmetic(vt)):
            out.append(c)
    return out


def user_conversion(an, value: A.Expr, t: S.Type):
    """`float f = h;` through `operator float()`, `__half h = 1.0f;` through `__half(float)`:
    the converted expression (of the operator's or constructor's type), or None."""
    vt = S.unqualified(value.type)
    target = S.unqualified(t)
    operators = conversion_operators(vt)
    if operators:
        exact = [m for m in operators if S.unqualified(m.type.ret) == target]
        usable = exact or [m for m in operators if S.is_arithmetic(m.type.ret) and S.is_arithmetic(target)]
        if usable:
            sym = usable[0]
            call = A.Call(value.loc, A.Member(value.loc, value, "operator conversion"), [])
            return an.finish_call(call, sym, [self_argument(an, sym, value, value.loc)])
    ctors = converting_constructors(target, vt)
    if ctors and vt != target:
        exact = [c for c in ctors if S.unqualified(c.type.params[0]) == vt]
        sym = (exact or ctors)[0]
        call = A.Call(value.loc, A.Ident(value.loc, sym.name), [value])
        return an.finish_call(call, sym, [value])
    return None
