"""Kernel names: the plain C++ name inside an Itanium-mangled one (`_Z4vaddPKfS0_Pfi` is
`vadd`), enough to match `// LAUNCH: vadd ...` and `vadd<<<...>>>` to a cubin symbol."""
from __future__ import annotations

import re


def demangle_base(symbol: str) -> str:
    """The unqualified function name of a mangled symbol (itself if not mangled)."""
    if not symbol.startswith("_Z"):
        return symbol
    rest = symbol[2:]
    if rest.startswith("N"):          # nested name: the last component before E
        rest = rest[1:]
        last = symbol
        while rest and rest[0].isdigit():
            n, rest = _length(rest)
            last, rest = rest[:n], rest[n:]
        return last
    if rest and rest[0].isdigit():
        n, rest = _length(rest)
        return rest[:n]
    return symbol


def _length(text: str) -> tuple[int, str]:
    digits = ""
    while text and text[0].isdigit():
        digits, text = digits + text[0], text[1:]
    return int(digits), text


# ---- template instances: `block_sum<256, float>` ----------------------------------------------
_BUILTINS = {"v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
             "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
             "x": "long long", "y": "unsigned long long", "f": "float", "d": "double"}


def template_args(symbol: str) -> list | None:
    """The template arguments of a mangled function template instance, as c++filt
    writes them (`_Z9block_sumILi256EfEvPKT0_PS0_i`: ['256', 'float']); None if the
    symbol is not one, or holds an argument this reader does not know."""
    if not symbol.startswith("_Z"):
        return None
    rest = symbol[2:]
    nested = rest.startswith("N")
    if nested:
        rest = rest[1:]
    while rest and rest[0].isdigit():
        n, rest = _length(rest)
        rest = rest[n:]
        if rest.startswith("I"):
            try:
                args, _ = _args(rest[1:])
            except (ValueError, IndexError):
                return None
            return args
        if not nested:
            return None
    return None


def _args(text: str) -> tuple[list, str]:
    out = []
    while not text.startswith("E"):
        arg, text = _arg(text)
        out.append(arg)
    return out, text[1:]


def _arg(text: str) -> tuple[str, str]:
    if text.startswith("L") and text[1] not in _BUILTINS:   # an enum's value: `(Mode)1`, as c++filt
        enum, text = _type(text[1:])
        end = text.index("E")
        number, text = text[:end], text[end + 1:]
        return f"({enum}){'-' + number[1:] if number.startswith('n') else number}", text
    if text.startswith("L"):
        code, text = text[1], text[2:]
        end = text.index("E")
        number, text = text[:end], text[end + 1:]
        value = -int(number[1:]) if number.startswith("n") else int(number)
        if code == "b":
            return ("true" if value else "false"), text
        suffix = {"j": "u", "l": "l", "m": "ul", "x": "ll", "y": "ull"}.get(code, "")
        return f"{value}{suffix}", text
    return _type(text)


def _type(text: str) -> tuple[str, str]:
    head = text[0]
    if head in _BUILTINS:
        return _BUILTINS[head], text[1:]
    if head == "P":
        inner, text = _type(text[1:])
        return inner + "*", text
    if head == "K":
        inner, text = _type(text[1:])
        return inner + " const", text
    if head == "N":     # a nested name: its last component (substitutions read as a prefix)
        text = text[1:]
        name = ""
        while not text.startswith("E"):
            if text.startswith("S"):
                text = text[text.index("_") + 1:]
                continue
            name, text = _type(text)
        return name, text[1:]
    if head.isdigit():
        n, text = _length(text)
        name, text = text[:n], text[n:]
        if text.startswith("I"):
            args, text = _args(text[1:])
            name += "<" + ", ".join(args) + ">"
        return name, text
    raise ValueError(f"unknown mangled type {text[:8]}")


def _normal(text: str) -> str:
    text = re.sub(r"\s+", " ", text.strip())
    text = re.sub(r"\s*([<>,*&()])\s*", r"\1", text)
    text = re.sub(r"\bunsigned\b(?! (int|char|short|long))", "unsigned int", text)
    text = text.replace("const ", "const_").replace(" const", "_const")
    return text


def _split_args(text: str) -> list:
    out, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(current)
            current = ""
            continue
        depth += ch in "<(" 
        depth -= ch in ">)"
        current += ch
    if current:
        out.append(current)
    return out


def _same_arg(spec: str, arg: str) -> bool:
    spec, arg = _normal(spec), _normal(arg)
    if spec == arg:
        return True
    enum = re.fullmatch(r"\((\w+)\)(-?\d+)", arg)
    if enum and re.fullmatch(r"\((\w+)\)(-?\d+)", spec):
        return spec == arg
    if re.fullmatch(r"-?\d+[uUlL]*", spec) and re.fullmatch(r"-?\d+[ul]*", arg):
        return int(spec.rstrip("uUlL")) == int(arg.rstrip("ul"))
    # `const float*` written either way round
    return spec.replace("const_", "") == arg.replace("_const", "") and ("const" in spec) == ("const" in arg)


def parse_instance_name(name: str) -> tuple[str, list | None]:
    """`block_sum< 256, float >` -> ('block_sum', ['256', 'float']); no `<`: (name, None)."""
    name = name.strip()
    if "<" not in name:
        return name.split("::")[-1], None
    base, _, rest = name.partition("<")
    rest = rest.strip()
    if not rest.endswith(">"):
        raise ValueError(f"'{name}': unbalanced '<'")
    inner = rest[:-1].strip()
    return base.strip().split("::")[-1], [a.strip() for a in _split_args(inner)] if inner else []


def instance_matches(spec_args: list, symbol_args: list) -> bool:
    """The spec's arguments name this instance: each equal, trailing ones (defaults) left out."""
    if len(spec_args) > len(symbol_args):
        return False
    return all(_same_arg(s, a) for s, a in zip(spec_args, symbol_args))


_ENUM = re.compile(r"\benum\s+(?:class\s+|struct\s+)?(\w+)\s*(?::[^{]*)?\{([^}]*)\}")


_TEMPLATE_HEAD = re.compile(r"\btemplate\s*<")


def _template_defaults(source: str, kernel: str) -> list | None:
    """The default arguments (source text, None where there is none) of the template
    that declares function `kernel`, from the text: `template <int B, typename T = float>
    __global__ void kernel(` gives [None, 'float']."""
    for m in _TEMPLATE_HEAD.finditer(source):
        depth, k = 1, m.end()
        while k < len(source) and depth:
            depth += {"<": 1, ">": -1}.get(source[k], 0)
            k += 1
        head = source[m.end():k - 1]
        rest = source[k:k + 400]
        declared = re.match(r"[^;{(]*?\b" + re.escape(kernel) + r"\s*\(", rest)
        if declared is None or not head.strip():
            continue
        out = []
        for param in _split_args(head):
            _, eq, default = param.partition("=")
            out.append(default.strip() if eq else None)
        return out
    return None


def resolve_instance_name(name: str, source: str) -> str:
    """A LAUNCH line's kernel as the symbols spell it: trailing default arguments the
    line leaves out filled in from the template's declaration (`softmax_warp<128>` ->
    `softmax_warp<128, float>`), and enum arguments by their values (`hist<Mode::Low>`
    -> `hist<(Mode)0>`), which come from the source's enums."""
    if "<" not in name:
        return name
    base, args = parse_instance_name(name)
    defaults = _template_defaults(source, name.partition("<")[0].strip().split("::")[-1])
    if defaults is not None and args is not None and len(args) < len(defaults) and \
            all(d is not None for d in defaults[len(args):]):
        name = name.strip()[:-1].rstrip() + ("," if args else "") + ",".join(defaults[len(args):]) + ">"
    if "::" not in name:
        return name
    values = {}
    for m in _ENUM.finditer(source):
        value = -1
        for item in m.group(2).split(","):
            item = item.strip()
            if not item:
                continue
            label, _, given = item.partition("=")
            try:
                value = int(given.strip(), 0) if given.strip() else value + 1
            except ValueError:
                break
            values[(m.group(1), label.strip())] = value

    def replace(match):
        parts = match.group(0).split("::")
        key = (parts[-2], parts[-1]) if len(parts) >= 2 else None
        if key in values:
            return f"({parts[-2]}){values[key]}"
        return match.group(0)
    head, _, args = name.partition("<")
    return head + "<" + re.sub(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+", replace, args)


def matching_symbols(symbols, name: str) -> list:
    """The mangled symbols a LAUNCH line's kernel name names: a plain name (demangled
    base), or a template instance written as the source or c++filt writes it, trailing
    default arguments left out (an exact argument count wins)."""
    base, spec_args = parse_instance_name(name)
    matches = [k for k in symbols if demangle_base(k) == base]
    if spec_args is None:
        return matches
    matches = [k for k in matches if template_args(k) is not None and instance_matches(spec_args, template_args(k))]
    exact = [k for k in matches if len(template_args(k)) == len(spec_args)]
    return exact or matches
