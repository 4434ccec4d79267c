"""CUDA's math library as NVVM lowers it: each call instantiates nvcc's own PTX for it.

`expf(x)` is not one PTX instruction: NVVM inlines libdevice's implementation, a fixed
sequence (range reduction, a polynomial, special cases; `sinf` even has a slow path
with a local array for huge arguments).  Writing those sequences by hand would be
copying them anyway, and a transcription error changes results in the last bit.  So
`mathlib.ptx` holds, for every math builtin ptxc knows, the body that nvcc 13.5 writes
for `extern "C" __device__ float __ptxc_expf(float a) { return expf(a); }` compiled with
-rdc (one `.func` each), and a call instantiates that body: fresh virtual registers,
fresh labels, the argument for the parameter load, the stored return value as the
result, nested `call`s (double-precision trig's slow path) expanded the same way, and
the function's `__local_depot` given a region of the caller's frame.

Regenerate with `python -m ptxc.frontend.mathlib` (needs the oracle, nvcc 13.5); the
file says so at its top.  The approximate intrinsics (`__expf`, `__sinf`, `__fdividef`)
come from the same file, so what they lower to (`ex2.approx.f32` after a multiply) is
what nvcc writes, not what a reader remembers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..ptx import ir

# Every math builtin that has a template: key -> (result, parameters, C name).  Types
# are Itanium codes (f float, d double, i int, j unsigned, x long long, y unsigned long
# long); the key names the template (`__ptxc_<key>` in mathlib.ptx) and is the codegen
# name sema gives the builtin; C name is what the user writes (isnan has a float and a
# double form: keys isnan_f and isnan_d).
_FLOAT_UNARY = ("sqrtf rsqrtf cbrtf rcbrtf expf exp2f exp10f expm1f logf log2f log10f log1pf logbf "
                "sinf cosf tanf sinpif cospif asinf acosf atanf sinhf coshf tanhf asinhf acoshf atanhf "
                "fabsf floorf ceilf roundf truncf rintf nearbyintf erff erfcf erfinvf erfcinvf erfcxf "
                "normcdff normcdfinvf lgammaf tgammaf __expf __exp10f __logf __log2f __log10f __sinf "
                "__cosf __tanf __saturatef")
_FLOAT_BINARY = ("fminf fmaxf powf fmodf remainderf atan2f hypotf rhypotf copysignf fdimf nextafterf "
                 "fdividef __fdividef __powf")
_DOUBLE_UNARY = ("sqrt rsqrt cbrt rcbrt exp exp2 exp10 expm1 log log2 log10 log1p logb sin cos tan sinpi "
                 "cospi asin acos atan sinh cosh tanh asinh acosh atanh fabs floor ceil round trunc rint "
                 "nearbyint erf erfc erfinv erfcinv erfcx normcdf normcdfinv lgamma tgamma")
_DOUBLE_BINARY = "fmin fmax pow fmod remainder atan2 hypot rhypot copysign fdim nextafter"
_ROUNDINGS = ("rn", "rz", "ru", "rd")

SIGNATURES: dict[str, tuple[str, str, str]] = {}


def _add(key: str, result: str, params: str, c_name: str | None = None) -> None:
    SIGNATURES[key] = (result, params, c_name or key)


for _name in _FLOAT_UNARY.split():
    _add(_name, "f", "f")
for _name in _FLOAT_BINARY.split():
    _add(_name, "f", "ff")
_add("fmaf", "f", "fff")
for _name in _DOUBLE_UNARY.split():
    _add(_name, "d", "d")
for _name in _DOUBLE_BINARY.split():
    _add(_name, "d", "dd")
_add("fma", "d", "ddd")
# Mixed signatures: (float form, double form, result, parameters) with `r` for the
# form's real type (f or d).
for _float, _double, _result, _params in (
        ("ldexpf", "ldexp", "r", "ri"), ("scalbnf", "scalbn", "r", "ri"), ("scalblnf", "scalbln", "r", "rl"),
        ("ilogbf", "ilogb", "i", "r"),
        ("lrintf", "lrint", "l", "r"), ("lroundf", "lround", "l", "r"),
        ("llrintf", "llrint", "x", "r"), ("llroundf", "llround", "x", "r"),
        ("norm3df", "norm3d", "r", "rrr"), ("rnorm3df", "rnorm3d", "r", "rrr"),
        ("norm4df", "norm4d", "r", "rrrr"), ("rnorm4df", "rnorm4d", "r", "rrrr")):
    _add(_float, _result.replace("r", "f"), _params.replace("r", "f"))
    _add(_double, _result.replace("r", "d"), _params.replace("r", "d"))
for _r in _ROUNDINGS:   # the IEEE operations with a rounding mode, and conversions
    for _op in ("fadd", "fsub", "fmul", "fdiv"):
        _add(f"__{_op}_{_r}", "f", "ff")
    for _op in ("dadd", "dsub", "dmul", "ddiv"):
        _add(f"__{_op}_{_r}", "d", "dd")
    _add(f"__fmaf_{_r}", "f", "fff")
    _add(f"__fma_{_r}", "d", "ddd")
    _add(f"__frcp_{_r}", "f", "f")
    _add(f"__fsqrt_{_r}", "f", "f")
    _add(f"__drcp_{_r}", "d", "d")
    _add(f"__dsqrt_{_r}", "d", "d")
    for _src, _src_code in (("float", "f"), ("double", "d")):
        for _dst, _dst_code in (("int", "i"), ("uint", "j"), ("ll", "x"), ("ull", "y")):
            _add(f"__{_src}2{_dst}_{_r}", _dst_code, _src_code)
    for _src, _src_code in (("int", "i"), ("uint", "j"), ("ll", "x"), ("ull", "y")):
        _add(f"__{_src}2float_{_r}", "f", _src_code)
        if _src in ("ll", "ull"):
            _add(f"__{_src}2double_{_r}", "d", _src_code)
    _add(f"__double2float_{_r}", "f", "d")
_add("__frsqrt_rn", "f", "f")
for _src, _src_code in (("int", "i"), ("uint", "j")):
    _add(f"__{_src}2double_rn", "d", _src_code)
for _name, _sig in (("__hadd", "iii"), ("__rhadd", "iii"), ("__uhadd", "jjj"), ("__urhadd", "jjj")):
    _add(_name, _sig[0], _sig[1:])   # integer halving adds (libdevice)
for _name in ("__vadd2", "__vadd4", "__vsub2", "__vsub4", "__vabsdiffs2", "__vabsdiffs4", "__vabsdiffu2",
              "__vabsdiffu4", "__vmaxs2", "__vmaxs4", "__vmaxu2", "__vmaxu4", "__vmins2", "__vmins4",
              "__vminu2", "__vminu4", "__vavgs2", "__vavgs4", "__vavgu2", "__vavgu4", "__vcmpeq4", "__vsads4",
              "__vsadu4"):
    _add(_name, "j", "jj")   # SIMD within a word
for _name in ("isnan", "isinf", "isfinite", "signbit"):   # classification: an int
    _add(f"{_name}_f", "i", "f", _name)
    _add(f"{_name}_d", "i", "d", _name)

C_TYPES = {"f": "float", "d": "double", "i": "int", "j": "unsigned int", "l": "long", "x": "long long",
           "y": "unsigned long long"}

PTX_FILE = Path(__file__).with_name("mathlib.ptx")
PREFIX = "__ptxc_"


# ---- reading mathlib.ptx ---------------------------------------------------------------

@dataclass
class Call:
    """A `{ // callseq ... }` block: st.param of the arguments, call, ld.param of results."""
    callee: str
    args: list                       # template operands, in parameter order
    results: list                    # (template register, byte offset in retval0)


@dataclass
class Template:
    name: str
    params: list[str]                # parameter symbol names, in order
    body: list = field(default_factory=list)   # ir.Instr | ir.Label | Call
    depot: tuple[int, int] | None = None       # (size, align) of __local_depot
    reg_types: dict = field(default_factory=dict)   # scoped names (%temp#3) -> PTX class
    multi_defs: set = field(default_factory=set)    # registers written more than once
    globals: set = field(default_factory=set)       # module variables it reads
    steps: list | None = None                       # the body compiled for _generate
    expand: object = None                           # the steps as a function (_generate)
    classes: dict = field(default_factory=dict)     # register name -> vir class
    needs_end: bool = False                         # returns other than at the end


_FUNC_START = re.compile(r"^(?:\.visible )?\.func\s+(?:\([^)]*\)\s*)?(\S+)\($", re.M)
_REG = re.compile(r"%[A-Za-z_][\w#]*")


class Library:
    def __init__(self, text: str):
        self.text = text
        self.spans: dict[str, tuple[int, int]] = {}
        for m in _FUNC_START.finditer(text):
            end = text.index("\n}\n", m.end())
            self.spans[m.group(1)] = (m.start(), end + 2)
        self.variables: dict[str, ir.Variable] = {}
        for m in re.finditer(r"^\.global \.align (\d+) \.b8 (\w+)\[(\d+)\] = \{([^}]*)\};", text, re.M):
            values = [ir.Imm(int(v)) for v in m.group(4).split(",")]
            self.variables[m.group(2)] = ir.Variable(".global", ".b8", m.group(2), align=int(m.group(1)),
                                                    array=int(m.group(3)), init=values)
        self.templates: dict[str, Template] = {}

    def template(self, name: str) -> Template:
        found = self.templates.get(name)
        if found is None:
            start, end = self.spans[name]
            found = self.templates[name] = _parse_function(name, self.text[start:end], self.variables)
        return found


_LIBRARY: Library | None = None


def library() -> Library:
    global _LIBRARY
    if _LIBRARY is None:
        _LIBRARY = Library(PTX_FILE.read_text())
    return _LIBRARY


def _parse_function(name: str, text: str, variables: dict) -> Template:
    params = re.findall(r"\.param \.\w+ (\w+_param_\d+)", text[:text.index("{")])
    tpl = Template(name, params)
    body = text[text.index("{") + 1:text.rindex("}")]
    lines = [line.strip() for line in body.split("\n")]
    scopes = [0]           # `{ }` blocks open here (each numbered): their .reg names are theirs
    count = 0
    k = 0
    while k < len(lines):
        line = lines[k]
        k += 1
        if not line or line.startswith("//"):
            continue
        if line.startswith("{ // callseq"):
            end = next(j for j in range(k, len(lines)) if lines[j].startswith("} // callseq"))
            tpl.body.append(_parse_call(lines[k:end]))
            k = end + 1
            continue
        if line == "{":
            count += 1
            scopes.append(count)
            continue
        if line == "}":
            scopes.pop()
            continue
        if line.startswith(".pragma"):
            continue
        m = re.match(r"\.local \.align (\d+) \.b8\s+__local_depot\d+\[(\d+)\];", line)
        if m:
            tpl.depot = (int(m.group(2)), int(m.group(1)))
            continue
        m = re.match(r"\.reg (\.\w+) ([^<;]+);", line)
        if m and len(scopes) > 1:  # registers scoped to a `{ }` block: make their names unique
            for name in m.group(2).split(","):
                tpl.reg_types[f"{name.strip()}#{scopes[-1]}"] = m.group(1)
            continue
        if line.startswith(".reg"):
            continue
        if line.endswith(":"):
            tpl.body.append(ir.Label(line[:-1]))
            continue
        instr = _parse_instr(line, scopes, tpl)
        if instr.opcode == "mov.u64" and instr.operands[0] == ir.Reg("%SPL"):
            continue
        for op in instr.operands:
            if isinstance(op, ir.Symbol) and op.name in variables:
                tpl.globals.add(op.name)
        tpl.body.append(instr)
    defs: dict[str, int] = {}
    for item in tpl.body:
        if isinstance(item, ir.Instr):
            for reg in _defined(item):
                defs[reg] = defs.get(reg, 0) + 1
        elif isinstance(item, Call):
            for reg, _ in item.results:
                defs[reg.name] = defs.get(reg.name, 0) + 2
    tpl.multi_defs = {reg for reg, count in defs.items() if count > 1}
    return tpl


def _defined(instr: ir.Instr) -> list[str]:
    if not instr.operands or instr.opcode.startswith(("st.", "bra", "ret")):
        return []
    dst = instr.operands[0]
    if isinstance(dst, ir.Reg):
        return [dst.name]
    if isinstance(dst, ir.Vector):
        return [e.name for e in dst.elems if isinstance(e, ir.Reg)]
    return []


def _parse_call(lines: list[str]) -> Call:
    text = " ".join(lines)
    callee = re.search(r"call\.uni \(retval0\),\s*(\w+),", text).group(1)
    args = {}
    for m in re.finditer(r"st\.param\.\w+\s+\[(param\d+)\+0\], ([^;]+);", text):
        args[int(m.group(1)[5:])] = _operand(m.group(2).strip(), [0])
    results = [(ir.Reg(m.group(1)), int(m.group(2)))
               for m in re.finditer(r"ld\.param\.\w+\s+(%\w+), \[retval0\+(\d+)\];", text)]
    return Call(callee, [args[k] for k in sorted(args)], results)


def _split_operands(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for pos, ch in enumerate(text):
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:pos].strip())
            start = pos + 1
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def _parse_instr(line: str, scopes: list, tpl: Template) -> ir.Instr:
    line = line.rstrip(";").strip()
    guard, negated = None, False
    if line.startswith("@"):
        head, line = line.split(None, 1)
        negated = head.startswith("@!")
        guard = ir.Reg(head.lstrip("@!"))
    parts = line.split(None, 1)
    opcode = parts[0]
    operands = [_operand(text, scopes, tpl) for text in _split_operands(parts[1])] if len(parts) > 1 else []
    return ir.Instr(opcode, operands, guard, negated)


def _operand(text: str, scopes: list, tpl: Template | None = None):
    if text.startswith("%"):
        if tpl is not None:
            for scope in reversed(scopes):
                if f"{text}#{scope}" in tpl.reg_types:
                    return ir.Reg(f"{text}#{scope}")
        return ir.Reg(text)
    if text.startswith("["):
        inner = text[1:-1]
        m = re.match(r"(.+?)\+(-?\d+)$", inner)
        base, offset = (m.group(1), int(m.group(2))) if m else (inner, 0)
        return ir.Address(_operand(base, scopes, tpl), offset)
    if text.startswith("{"):
        return ir.Vector(tuple(_operand(e, scopes, tpl) for e in _split_operands(text[1:-1])))
    if text[:2] in ("0f", "0F") and len(text) == 10:
        import struct
        return ir.Imm(struct.unpack("<f", bytes.fromhex(text[2:])[::-1])[0], ".f32")
    if text[:2] in ("0d", "0D") and len(text) == 18:
        import struct
        return ir.Imm(struct.unpack("<d", bytes.fromhex(text[2:])[::-1])[0], ".f64")
    if re.fullmatch(r"-?\d+", text):
        return ir.Imm(int(text))
    return ir.Symbol(text)


# ---- instantiation ---------------------------------------------------------------------

_CLASS_OF_PREFIX = {"%p": "p", "%rs": "rs", "%r": "r", "%rd": "rd", "%f": "f", "%fd": "fd"}
_CLASS_OF_TYPE = {".pred": "p", ".b16": "rs", ".b32": "r", ".b64": "rd", ".f32": "f", ".f64": "fd",
                  ".u32": "r", ".s32": "r", ".u64": "rd", ".s64": "rd", ".u16": "rs", ".s16": "rs"}


def instantiate(cg, name: str, args: list):
    """Emit the math builtin `name` applied to `args` (operands of the right classes)
    through the FunctionCodegen `cg`; return the result operand."""
    from .vir import VReg   # (here: sema imports this module, vir imports sema)
    result = _expand(cg, library().template(PREFIX + name), args)[0]
    if result.__class__ is VReg:
        # NVVM inlines libdevice before it contracts: a product that is the function's
        # value (expf's last `mul`) fuses into the caller's add (`1.f + expf(x)`).
        for instr in reversed(cg.block.instrs):
            ops = instr.operands
            if ops and ops[0] is result:
                if instr.opcode in ("mul.f32", "mul.f64") and instr.guard is None:
                    cg.frozen.discard(id(instr))
                    cg.multiplies += 1      # (fuse_multiply_add has work)
                break
    return result


def _expand(cg, tpl: Template, args: list) -> dict:
    """Emit the template's body through `cg`, `args` for its parameters; return its
    results ({byte offset in retval0: operand})."""
    expand = tpl.expand
    if expand is None:
        expand = tpl.expand = _generate(tpl)
    return expand(cg, args)


def _generate(tpl: Template):
    """The template's steps (_compile) as the Python function that runs them, built once
    per template and process: each template register a local variable (made at its first
    sighting, fresh per instantiation), each label likewise.  A run of plain
    instructions (a segment) is one list of ir.Instr appended to the current block at
    once, its registers numbered from cg.next_id in order of first sighting, and the
    reads it makes of each register are added to cg.uses once, at the end (they are
    known here); branches, labels, parameters, results and nested calls go through
    cg's methods.  What it emits is what calling cg.emit per instruction would emit,
    in the same order, with the same register numbers and use counts."""
    from .vir import ENDS_BLOCK, READS_FIRST, VReg   # (here: sema imports this module, vir imports sema)
    if tpl.steps is None:
        _compile(tpl)
    lib = library()
    classes = tpl.classes
    multi = tpl.multi_defs
    constants: list = []        # operands used as they are (immediates, symbols)
    variables: dict = {}        # template register -> local variable name
    labels: dict = {}           # template label -> local variable name
    bound: set = set()          # template registers certainly made (or bound) at this point
    reads: dict = {}            # template register -> reads by segment instructions
    lines: list = []
    segment: list = []          # the current segment's instructions (Python expressions)
    fresh: list = []            # the current segment's new registers (statements)

    def constant(value) -> str:
        constants.append(value)
        return f"K[{len(constants) - 1}]"

    def var(name: str) -> str:
        found = variables.get(name)
        if found is None:
            found = variables[name] = f"v{len(variables)}"
        return found

    def reg(name: str, indent: str = "    ") -> str:
        """The register, made (a statement before) at first sight: numbered in the
        segment when one is open, else by cg.new_reg."""
        if name in ("%SPL", "%SP"):
            return f"frame_register({name!r})"
        local = var(name)
        if name not in bound:
            if in_segment[0]:
                fresh.append(f"{indent}{local} = VReg(n + {len(fresh_ids) + 1}, {classes[name]!r})")
                fresh_ids.append(name)
            else:
                lines.append(f"{indent}{local} = new_reg({classes[name]!r})")
            if name in multi:
                (fresh if in_segment[0] else lines).append(f"{indent}mutable_add({local})")
            bound.add(name)
        return local

    def label(name: str) -> str:
        found = labels.get(name)
        if found is None:
            found = labels[name] = f"l{len(labels)}"
            lines.append(f"    {found} = make_label()")
        return found

    def value(spec) -> str:
        kind = spec[0]
        if kind == 0:
            return reg(spec[1])
        if kind == 1:
            return constant(spec[1])
        if kind == 2:
            return f"Address({reg(spec[1])}, {spec[2]})"
        if kind == 4:
            return "Vector((" + "".join(f"{value(e)}, " for e in spec[1]) + "))"
        return f"Symbol({label(spec[1])})"

    def count_reads(opcode: str, specs: tuple, guard) -> None:
        """The registers emit() would count as read (vir.instr_uses)."""
        read = specs
        if specs and (specs[0][0] == 4 or (specs[0][0] == 0 and not READS_FIRST[opcode])):
            read = specs[1:]
        names = []
        for spec in read:
            if spec[0] in (0, 2):
                names.append(spec[1])
            elif spec[0] == 4:
                names.extend(e[1] for e in spec[1] if e[0] == 0)
        if guard:
            names.append(guard)
        for name in names:
            if name not in ("%SPL", "%SP"):
                reads[name] = reads.get(name, 0) + 1

    in_segment = [False]
    fresh_ids: list = []

    def flush() -> None:
        """Close the open segment: its registers, its instructions appended, frozen."""
        if not in_segment[0]:
            return
        in_segment[0] = False
        lines.extend(["    instrs = cg.block.instrs",
                      "    if instrs and _ENDS_BLOCK[instrs[-1].opcode]:  # (code after a branch: a new block)",
                      "        cg.new_block()",
                      "        instrs = cg.block.instrs",
                      "    n = cg.next_id"])
        lines.extend(fresh)
        lines.append("    seg = [" + ",\n           ".join(segment) + "]")
        if fresh_ids:
            lines.append(f"    cg.next_id = n + {len(fresh_ids)}")
        lines.extend(["    instrs += seg", "    frozen_update(map(id, seg))",
                      "    if cg.region_tag is not None:", "        _tag_region(cg, seg)"])
        segment.clear()
        fresh.clear()
        fresh_ids.clear()

    lines += ["    new_reg = cg.new_reg", "    emit = cg.emit", "    frozen_update = cg.frozen.update",
              "    mutable_add = cg.mutable.add", "    make_label = cg.make_label",
              "    frame_register = cg.frame_register"]
    if tpl.depot:
        lines.append(f"    depot = cg.local_region{tpl.depot!r}")
    else:
        lines.append("    depot = 0")
    if tpl.globals:
        lines += ["    for name in tpl.globals:", "        cg.module.add_global(lib.variables[name])"]
    start = len(lines)   # (where `saved = cg.region_start()` goes if the template branches)
    lines.append("    results = {}")
    if tpl.needs_end:
        lines += ["    end_label = make_label()", "    result_regs = {}"]
    for step in tpl.steps:
        kind = step[0]
        if kind == "instr":
            _, opcode, specs, guard, negated, frame = step
            if any(spec[0] == 5 for spec in specs) or ENDS_BLOCK[opcode]:
                # (a label operand or a block end: emitted alone, as cg.emit would)
                flush()
                operands = [value(spec) for spec in specs]
                options = (f"guard={reg(guard)}, " if guard else "") + ("negated=True, " if negated else "")
                lines.append(f"    cg.frozen.add(id(emit({opcode!r}, {', '.join(operands)}"
                             f"{', ' if operands else ''}{options}rank=False)))")
                continue
            in_segment[0] = True
            operands = [value(spec) for spec in specs]
            if frame:
                operands[2] = f"Imm({operands[2]}.value + depot)"
            guard_text = reg(guard) if guard else "None"
            segment.append(f"Instr({opcode!r}, [{', '.join(operands)}], {guard_text}, {negated!r})")
            count_reads(opcode, specs, guard)
            continue
        flush()
        if kind == "label":
            lines.append(f"    cg.place({label(step[1])})")
        elif kind == "bra":
            target = label(step[1])
            guard_text = reg(step[2]) if step[2] else "None"
            lines.append(f"    cg.branch({target}, {guard_text}, {step[3]!r})")
        elif kind == "param":
            _, name, index, wanted = step
            lines.append(f"    arg = args[{index}]")
            if name in multi:
                local = reg(name)
                lines.append(f"    _param_copy(emit, {local}, arg)")
            else:
                lines.append(f"    if isinstance(arg, Imm) or arg.cls != {wanted!r}:")
                # (a copy: the template reads a float's bits as an integer, or writes it)
                local = reg(name, "        ") if name not in bound else var(name)
                lines.append(f"        _param_copy(emit, {local}, arg)")
                lines += ["    else:", f"        {local} = arg"]
                bound.add(name)
        elif kind == "result":
            _, offset, spec = step
            result = value(spec)
            if not tpl.needs_end:
                lines.append(f"    results[{offset}] = {result}")
            else:
                lines += [f"    result = {result}",
                          f"    if {offset} not in result_regs:",
                          f"        results[{offset}] = result_regs[{offset}] = new_reg("
                          f"result.cls if not isinstance(result, Imm) else 'r')",
                          f"        mutable_add(result_regs[{offset}])",
                          f"    emit('mov.' + _MOV[result_regs[{offset}].cls], result_regs[{offset}], result)"]
        elif kind == "ret":
            if tpl.needs_end:
                lines.append("    cg.branch(end_label)")
        else:   # a call: the callee's expansion, then its results copied
            call = step[1]
            callee = lib.template(call.callee)
            values = ", ".join(value(_spec(a, tpl)) for a in call.args)
            lines.append(f"    values = _expand(cg, {constant(callee)}, [{values}])")
            for template_reg, offset in call.results:
                dst = reg(template_reg.name)
                lines.append(f"    emit('mov.' + _MOV[{dst}.cls], {dst}, values[{offset}])")
    flush()
    if tpl.needs_end:
        lines.append("    cg.place(end_label)")
    if labels:  # the template branched: what was known before it is known after it
        lines.insert(start, "    saved = cg.region_start()")
        lines.append("    cg.region_join(saved)")
    if reads:   # the segments' reads, counted as emit() would have
        lines.append("    uses = cg.uses")
        for name, count in reads.items():
            local = var(name)
            lines.append(f"    uses[{local}] = uses.get({local}, 0) + {count}")
    lines.append("    return results")
    namespace = {"K": constants, "tpl": tpl, "lib": lib, "Imm": ir.Imm, "Address": ir.Address,
                 "Vector": ir.Vector, "Symbol": ir.Symbol, "Instr": ir.Instr, "VReg": VReg, "_MOV": _MOV,
                 "_param_copy": _param_copy, "_expand": _expand, "_ENDS_BLOCK": ENDS_BLOCK,
                 "_tag_region": _tag_region}
    exec("def expand(cg, args):\n" + "\n".join(lines), namespace)
    return namespace["expand"]


def _tag_region(cg, instrs: list) -> None:
    """The instructions belong to the inlined __noinline__ call being emitted (cg.emit's rule)."""
    for instr in instrs:
        cg.regions[id(instr)] = cg.region_tag


def _param_copy(emit, dst, arg) -> None:
    """A parameter's register set from the argument (an immediate, or a register of
    another class, or one the template writes again)."""
    width = "64" if dst.cls in ("rd", "fd") else "32" if dst.cls in ("r", "f") else "16"
    emit(f"mov.b{width}" if not isinstance(arg, ir.Imm) else f"mov.{_MOV[dst.cls]}", dst, arg)


def _spec(op, tpl: Template):
    """An operand as a quick recipe: (0, reg) (1, constant) (2, reg, offset) (4, elems)
    (5, label)."""
    if isinstance(op, ir.Reg):
        _class_of(op.name, tpl)
        return (0, op.name)
    if isinstance(op, ir.Address) and isinstance(op.base, ir.Reg):
        _class_of(op.base.name, tpl)
        return (2, op.base.name, op.offset)
    if isinstance(op, ir.Vector):
        return (4, tuple(_spec(e, tpl) for e in op.elems))
    if isinstance(op, ir.Symbol) and op.name.startswith("$L__"):
        return (5, op.name)
    return (1, op)


def _class_of(name: str, tpl: Template) -> str:
    cls = tpl.classes.get(name)
    if cls is None:
        if name in ("%SPL", "%SP"):
            cls = "rd"
        elif name in tpl.reg_types:
            cls = _CLASS_OF_TYPE[tpl.reg_types[name]]
        else:
            cls = _CLASS_OF_PREFIX[re.match(r"%[a-z]+", name).group()]
        tpl.classes[name] = cls
    return cls


def _compile(tpl: Template) -> None:
    """The template's body as steps (what _generate writes as code), without re-reading the PTX."""
    steps = []
    returns = sum(1 for item in tpl.body if isinstance(item, ir.Instr) and item.opcode == "ret")
    tpl.needs_end = returns > 1 or (bool(tpl.body) and not _is_ret(tpl.body[-1]))
    for item in tpl.body:
        if isinstance(item, ir.Label):
            steps.append(("label", item.name))
        elif isinstance(item, Call):
            for a in item.args:
                _spec(a, tpl)
            for template_reg, _ in item.results:
                _class_of(template_reg.name, tpl)
            steps.append(("call", item))
        elif item.opcode.startswith("ld.param") and isinstance(item.operands[1].base, ir.Symbol):
            name = item.operands[0].name
            steps.append(("param", name, tpl.params.index(item.operands[1].base.name), _class_of(name, tpl)))
        elif item.opcode.startswith("st.param"):
            steps.append(("result", item.operands[0].offset, _spec(item.operands[1], tpl)))
        elif item.opcode == "ret":
            steps.append(("ret",))
        elif item.opcode.startswith("bra"):
            guard = item.guard.name if item.guard is not None else None
            if guard:
                _class_of(guard, tpl)
            steps.append(("bra", item.operands[0].name, guard, item.guard_negated))
        else:
            guard = item.guard.name if item.guard is not None else None
            if guard:
                _class_of(guard, tpl)
            frame = item.opcode == "add.u64" and item.operands[1] in (ir.Reg("%SPL"), ir.Reg("%SP"))
            steps.append(("instr", item.opcode, tuple(_spec(op, tpl) for op in item.operands), guard,
                          item.guard_negated, frame))
    tpl.steps = steps


def _is_ret(item) -> bool:
    return isinstance(item, ir.Instr) and item.opcode == "ret"


_MOV = {"p": "pred", "rs": "b16", "r": "b32", "rd": "b64", "f": "f32", "fd": "f64"}


# ---- regenerating mathlib.ptx ----------------------------------------------------------

def regenerate(path: Path = PTX_FILE) -> None:
    """Ask nvcc (the oracle) for every template; write mathlib.ptx."""
    import tempfile

    from .. import oracle
    lines = []
    for key, (result, params, c_name) in SIGNATURES.items():
        decl = ", ".join(f"{C_TYPES[p]} a{k}" for k, p in enumerate(params))
        args = ", ".join(f"a{k}" for k in range(len(params)))
        lines.append(f'extern "C" __device__ {C_TYPES[result]} {PREFIX}{key}({decl}) {{ return {c_name}({args}); }}')
    with tempfile.TemporaryDirectory() as tmp:
        cu = Path(tmp) / "mathlib.cu"
        cu.write_text("\n".join(lines) + "\n")
        out = Path(tmp) / "mathlib.ptx"
        oracle.run("nvcc", "-arch=sm_89", "-rdc=true", "-ptx", "-o", str(out), str(cu))
        ptx = out.read_text()
    header = ("// Generated by `python -m ptxc.frontend.mathlib` from nvcc 13.5 "
              "(-arch=sm_89 -rdc=true -ptx); do not edit.\n"
              "// One .func per math builtin: the PTX NVVM writes for it (see mathlib.py).\n")
    body = ptx[ptx.index("\n", ptx.index(".address_size")) + 1:]
    path.write_text(header + body)


if __name__ == "__main__":
    regenerate()
    print(f"wrote {PTX_FILE}")
