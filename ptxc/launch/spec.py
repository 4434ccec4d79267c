"""`// LAUNCH:` lines: how a kernel file says how to run it (docs/emulator.md, design.md).

    // LAUNCH: vadd grid=4096 block=256 a=f32[1048576]:rand b=f32[1048576]:rand c=f32[1048576]:zero n=1048576

`grid=`/`block=` take X, X,Y or X,Y,Z; optional `shared=BYTES`, `seed=N`, `ulp=N`.  Then
one item per kernel parameter, in order: a buffer `name=TYPE[COUNT]:INIT` (a device
pointer; TYPE one of i8 u8 i16 u16 i32 u32 i64 u64 f32 f64; INIT one of zero, ones, iota,
rand, randint(LO,HI), const(V)) or a scalar `name=VALUE`.  Buffers are shared by name
between the launches of a file: a later line naming a buffer with the same type, length
and initializer passes the same memory (what earlier launches wrote); with another type,
length or initializer it is a new buffer.  Anything malformed is a SpecError carrying the
line and column of the offending text.

Buffer contents are reproducible: `rand` draws from numpy's PCG64 seeded with the line's
seed (default 0) and the buffer's name, floats uniform in [-1, 1), integers over the
whole range of the type.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

import numpy as np

from ..diagnostics import CompileError, Diagnostic, SourceLoc

DTYPES = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32,
          "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f32": np.float32, "f64": np.float64}
INITS = ("zero", "ones", "iota", "rand", "randint", "const")
KEYS = ("grid", "block", "shared", "seed", "ulp")
MARKER = re.compile(r"//\s*LAUNCH:")
BUFFER = re.compile(r"^(?P<type>[a-z0-9]+)\[(?P<count>[^\]]*)\](?::(?P<init>.*))?$")
MAX_COUNT = 1 << 28


class SpecError(CompileError):
    """A malformed launch spec: `file:line:col: error: ...` with the line and a caret."""


@dataclass
class Buffer:
    name: str
    type: str
    count: int
    init: str                 # zero ones iota rand randint const
    args: tuple = ()          # randint (lo, hi); const (value,)
    col: int = 0

    @property
    def dtype(self):
        return np.dtype(DTYPES[self.type])

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize


@dataclass
class Scalar:
    name: str
    text: str
    col: int = 0


@dataclass
class Launch:
    kernel: str
    grid: tuple
    block: tuple
    items: list
    shared: int = 0
    seed: int = 0
    ulp: int = 0
    line: int = 0
    col: int = 0
    text: str = ""

    def describe(self) -> str:
        return f"{self.kernel} (line {self.line})"


def parse_file(source: str, filename: str) -> list[Launch]:
    launches = []
    for number, line in enumerate(source.splitlines(), 1):
        m = MARKER.search(line)
        if m:
            launches.append(parse_line(line[m.end():], filename, number, m.end() + 1, source))
    return launches


def _error(message: str, filename: str, line: int, col: int, source: str | None) -> SpecError:
    return SpecError(Diagnostic(message, SourceLoc(filename, line, col)), source)


def _tokens(text: str, col0: int):
    """(word, column) for each space-separated word; a word may hold commas inside
    parentheses and brackets, and the first (the kernel) spaces inside `<...>`
    (`block_sum<256, float>`)."""
    words = [(m.group(0), col0 + m.start()) for m in re.finditer(r"\S+", text)]
    if words and "<" in words[0][0]:
        first, col = words.pop(0)
        while first.count("<") > first.count(">") and words:
            first += " " + words.pop(0)[0]
        words.insert(0, (first, col))
    yield from words


def _int(text: str, what: str, err) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise err(f"{what} '{text}' is not an integer") from None


def _dims(text: str, key: str, err) -> tuple:
    parts = text.split(",")
    if not 1 <= len(parts) <= 3 or any(p == "" for p in parts):
        raise err(f"{key}= takes X, X,Y or X,Y,Z, not '{text}'")
    dims = tuple(_int(p, f"{key} dimension", err) for p in parts)
    if any(d < 1 for d in dims):
        raise err(f"{key}= dimensions must be at least 1, not '{text}'")
    return dims + (1,) * (3 - len(dims))


def parse_line(text: str, filename: str = "<spec>", line: int = 1, col0: int = 1,
               source: str | None = None) -> Launch:
    words = list(_tokens(text, col0))
    if not words:
        raise _error("LAUNCH: needs a kernel name", filename, line, col0, source)
    kernel, kcol = words[0]
    if not re.fullmatch(r"[A-Za-z_][\w:]*(\s*<.*>)?", kernel):
        raise _error(f"'{kernel}' is not a kernel name", filename, line, kcol, source)
    launch = Launch(kernel, (), (), [], line=line, col=kcol, text=text.strip())
    names = set()
    for word, col in words[1:]:
        def err(message, col=col):
            return _error(message, filename, line, col, source)
        if "=" not in word:
            raise err(f"expected key=value, found '{word}'")
        key, value = word.split("=", 1)
        vcol = col + len(key) + 1
        if not key:
            raise err(f"missing name before '=' in '{word}'")
        if value == "":
            raise err(f"missing value after '{key}='", vcol)
        if key in KEYS:
            if key in ("grid", "block"):
                setattr(launch, key, _dims(value, key, lambda m: err(m, vcol)))
            else:
                number = _int(value, key, lambda m: err(m, vcol))
                if number < 0:
                    raise err(f"{key}= must not be negative", vcol)
                setattr(launch, key, number)
            continue
        if not re.fullmatch(r"[A-Za-z_]\w*", key):
            raise err(f"'{key}' is not a parameter name")
        if key in names:
            raise err(f"parameter '{key}' given twice")
        names.add(key)
        m = BUFFER.match(value)
        if m:
            launch.items.append(_buffer(key, m, vcol, err))
        elif "[" in value or ":" in value:
            raise err(f"malformed buffer '{value}': expected TYPE[COUNT]:INIT", vcol)
        else:
            _scalar_value(value, lambda msg: err(msg, vcol))
            launch.items.append(Scalar(key, value, vcol))
    if not launch.grid:
        raise _error("missing grid=", filename, line, kcol, source)
    if not launch.block:
        raise _error("missing block=", filename, line, kcol, source)
    return launch


def _buffer(name: str, m, col: int, err) -> Buffer:
    typ = m.group("type")
    if typ not in DTYPES:
        raise err(f"unknown buffer type '{typ}' (one of {' '.join(DTYPES)})", col)
    count = _int(m.group("count"), "buffer length", lambda msg: err(msg, col + len(typ) + 1))
    if not 0 < count <= MAX_COUNT:
        raise err(f"buffer length {count} out of range (1 to {MAX_COUNT})", col + len(typ) + 1)
    init = m.group("init")
    icol = col + m.start("init") if init is not None else col
    if init is None or init == "":
        raise err(f"buffer '{name}' needs an initializer (:{', :'.join(INITS)})", col + len(m.group(0)))
    im = re.fullmatch(r"(\w+)(?:\((.*)\))?", init)
    if not im or im.group(1) not in INITS:
        raise err(f"unknown initializer '{init}' (one of zero ones iota rand randint(LO,HI) const(V))", icol)
    kind, arg_text = im.group(1), im.group(2)
    args: tuple = ()
    if kind == "randint":
        if arg_text is None or arg_text.count(",") != 1:
            raise err("randint takes two integers: randint(LO,HI)", icol)
        lo, hi = (_int(a.strip(), "randint bound", lambda msg: err(msg, icol)) for a in arg_text.split(","))
        if lo > hi:
            raise err(f"randint({lo},{hi}): the low bound is above the high one", icol)
        args = (lo, hi)
    elif kind == "const":
        if arg_text is None or arg_text.strip() == "":
            raise err("const takes a value: const(V)", icol)
        args = (_scalar_value(arg_text.strip(), lambda msg: err(msg, icol)),)
    elif arg_text is not None:
        raise err(f"'{kind}' takes no arguments", icol)
    return Buffer(name, typ, count, kind, args, col)


def _scalar_value(text: str, err):
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        return float(text.rstrip("fF")) if text not in ("f", "F") else float("nan")
    except ValueError:
        raise err(f"'{text}' is not a number") from None


# ---- values ------------------------------------------------------------------------------------
def initial_contents(buf: Buffer, seed: int) -> np.ndarray:
    dtype = buf.dtype
    n = buf.count
    if buf.init == "zero":
        return np.zeros(n, dtype)
    if buf.init == "ones":
        return np.ones(n, dtype)
    if buf.init == "iota":
        return np.arange(n).astype(dtype)
    if buf.init == "const":
        return np.full(n, buf.args[0]).astype(dtype)
    rng = np.random.Generator(np.random.PCG64([seed, zlib.crc32(buf.name.encode())]))
    if buf.init == "randint":
        lo, hi = buf.args
        if dtype.kind == "f":
            return rng.integers(lo, hi, n, endpoint=True).astype(dtype)
        info = np.iinfo(dtype)
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
        return rng.integers(lo, hi, n, dtype=dtype, endpoint=True)
    if dtype.kind == "f":
        return (rng.random(n) * 2.0 - 1.0).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def scalar_bytes(text: str, size: int, is_float: bool | None) -> bytes:
    """The bytes of a scalar argument for a parameter of `size` bytes; `is_float` says
    whether the parameter is a float/double (None: judge by the literal)."""
    value = _scalar_value(text, lambda m: ValueError(m))
    if is_float is None:
        is_float = isinstance(value, float)
    if is_float:
        if size == 4:
            return np.float32(value).tobytes()
        if size == 8:
            return np.float64(value).tobytes()
        if size == 2:
            return np.float16(value).tobytes()
    if isinstance(value, float):
        if value != int(value):
            raise ValueError(f"'{text}' is not an integer")
        value = int(value)
    return (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


@dataclass
class KernelSignature:
    """What the source says about a kernel's parameters: names and whether each is a
    pointer or a floating-point scalar."""
    name: str
    params: list = field(default_factory=list)   # (name, kind) kind: 'pointer' 'float' 'int'


def kernel_signatures(source: str, filename: str) -> dict:
    """Kernels declared in a .cu file, from its syntax alone (no type checking, so
    files using builtins ptxc's sema does not know still work)."""
    from ..frontend.preprocess import preprocess
    from ..frontend.parser import parse
    from ..frontend import ast as A
    try:
        text, pp = preprocess(source, filename, {"__CUDACC__": "1", "__CUDA_ARCH__": "890"})
        unit = parse(text, filename, source)
    except Exception:  # noqa: BLE001 - fall back to the literal's own type
        return {}
    typedefs = {}
    out = {}
    for item in unit.items:
        if isinstance(item, A.Declaration) and "typedef" in item.specs.storage:
            for d in item.declarators:
                typedefs[d.declarator.name] = (_spec_kind(item.specs, typedefs), bool(d.declarator.derivations))
        if isinstance(item, A.FunctionDef) and "__global__" in item.specs.exec_spaces:
            fderiv = next((d for d in item.declarator.derivations if isinstance(d, A.FunctionDeriv)), None)
            sig = KernelSignature(item.declarator.name)
            for p in (fderiv.params if fderiv else []):
                pointer = any(isinstance(d, (A.PointerDeriv, A.ArrayDeriv)) for d in p.declarator.derivations)
                kind = _spec_kind(p.specs, typedefs)
                if kind == "pointer":
                    pointer = True
                sig.params.append((p.declarator.name, "pointer" if pointer else kind))
            out[sig.name] = sig
    return out


def _spec_kind(specs, typedefs) -> str:
    from ..frontend import ast as A
    for t in specs.type_specs:
        if t in ("float", "double", "__half", "half"):
            return "float"
        if isinstance(t, A.TypeNameRef) and t.name in typedefs:
            kind, is_pointer = typedefs[t.name]
            return "pointer" if is_pointer else kind
    return "int"
