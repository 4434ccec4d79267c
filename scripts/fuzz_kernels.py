#!/usr/bin/env python3
"""Random tests of ptxc against NVIDIA's tools: wrong code and internal errors.

    python scripts/fuzz_kernels.py differential --seeds 0:50          # random kernels, results vs nvcc
    python scripts/fuzz_kernels.py differential --seeds 0:20 --arch sm_90 --style statements
    python scripts/fuzz_kernels.py differential --seeds 0:300 --arch sm_90 --style operands
    python scripts/fuzz_kernels.py mutate --kind ptx --count 400 --seed 1   # bad input, no internal error

`differential` writes a kernel of random integer expressions (`--style expressions`),
of random statements over variables of every integer type, float and double (`--style
statements`), of random if/else shapes whose arms are empty, dead or live (`--style
regions`), of helpers that write their by-value parameters (`--style params`), or of typed expressions over full-range values of every integer type with
kernel parameters, block-uniform values and immediates as operands and divisors
(`--style operands`), free of undefined behaviour by construction (unsigned or bounded
signed arithmetic, divisors made nonzero, shift counts masked, floats converted only
inside their integer range).  nvcc's cubin, ptxc's own cubin and ptxas's cubin of ptxc's
PTX run its LAUNCH line on the emulator (ptxc's with the hazard checker); every output
must equal nvcc's.  Where the emulator cannot run nvcc's cubin (a word its table lacks),
the reference is ptxas -O0's cubin of nvcc's PTX (reference_run).  The run ends with the
counts by cause.  A kernel that differs is kept under --out with the outputs that differ;
scripts/fuzz_kernels.py reduce FILE.cu INDEX then evaluates every parenthesized
subexpression of output INDEX on its own, smallest first, to find the smallest that
differs.  A cubin the emulator cannot run (an instruction its table lacks) is reported
as such, not as a difference.

`mutate` changes one token of a testsuite file (`--kind cu`), one instruction's
opcode or operands of nvcc's PTX for one (`ptx`), or bytes of a cubin given to `ptxc
dump` (`cubin`), and checks that ptxc either compiles it or reports a diagnostic with
exit status 1 and no output file: never an internal error.

Everything found this way so far has a regression test (tests/test_ptx.py operand
shapes, tests/test_frontend_emu.py chars and enums, tests/test_narrow_params.py,
tests/test_emu_machine.py wide conversions, tests/test_fuzz.py's operands seeds and
tests/test_int_ops.py: a negated bank operand, the scheduler's round cap).  Exit status: 1 if anything was found.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import io
import random
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptxc import oracle  # noqa: E402

HEAD = ["// LAUNCH: k grid=2 block=64 a=i32[128]:rand b=i32[128]:rand w=i64[128]:rand out=u64[{n}]:zero",
        "__global__ void k(const int* a, const int* b, const long long* w, unsigned long long* out) {",
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;",
        "    int x = a[i], y = b[i]; long long L = w[i];"]


# ---- random kernels ------------------------------------------------------------------------
class Expressions:
    """Integer expressions over variables of every integer type; one output each."""
    PRELUDE = ["    unsigned u = x * 2654435761u, v = y ^ 0x5bd1e995u;",
               "    short s = (short)y; signed char c = (signed char)x; unsigned char uc = (unsigned char)(y >> 3);",
               "    unsigned short us = (unsigned short)(x >> 7); unsigned long long UL = (unsigned long long)L * 3ull;",
               "    bool bb = (x & 4) != 0;"]
    VARS = ["x", "y", "u", "v", "s", "c", "uc", "us", "L", "UL", "bb"]
    CONSTANTS = ["0", "1", "7", "255", "65535", "0x7fffffff", "0x80000000u", "3u", "123456789LL", "0xffffffffULL",
                 "-1", "-9", "31", "1000003"]
    INTS = ["int", "unsigned", "long long", "unsigned long long", "short", "unsigned short", "signed char",
            "unsigned char"]

    def __init__(self, rng: random.Random):
        self.rng = rng

    def expr(self, depth: int) -> str:
        rng = self.rng
        if depth <= 0 or rng.random() < 0.25:
            return rng.choice(self.VARS) if rng.random() < 0.75 else rng.choice(self.CONSTANTS)
        a, b = self.expr(depth - 1), self.expr(depth - 1)
        r = rng.random()
        if r < 0.45:        # unsigned arithmetic: wraps, never undefined
            t = rng.choice(["unsigned", "unsigned long long"])
            return f"(({t})({a}) {rng.choice(['+', '-', '*', '&', '|', '^'])} ({t})({b}))"
        if r < 0.55:        # division: nonzero divisors; signed ones bounded (no INT_MIN / -1)
            t = rng.choice(["unsigned", "unsigned long long", "int", "long long"])
            if t.startswith("unsigned"):
                return f"(({t})({a}) {rng.choice(['/', '%'])} (({t})({b}) | 1u))"
            return f"(({t})(({a}) & 0xffffff) {rng.choice(['/', '%'])} ((({t})({b}) & 0xff) | 1))"
        if r < 0.65:        # shifts: counts below the width; signed values shifted right only
            t = rng.choice(["unsigned", "unsigned long long", "int", "long long"])
            width = 31 if t in ("unsigned", "int") else 63
            op = ">>" if t in ("int", "long long") else rng.choice(["<<", ">>"])
            return f"(({t})({a}) {op} (({b}) & {width}))"
        if r < 0.75:
            return f"(({a}) {rng.choice(['<', '>', '<=', '>=', '==', '!='])} ({b}))"
        if r < 0.8:
            return f"(({a}) {rng.choice(['&&', '||'])} ({b}))"
        if r < 0.88:
            return f"(({self.expr(depth - 1)}) ? ({a}) : ({b}))"
        if r < 0.94:
            return f"(({rng.choice(self.INTS)})({a}))"
        return f"({rng.choice(['~', '!', '-'])}({rng.choice(['unsigned', 'unsigned long long', 'unsigned short', 'unsigned char'])})({a}))"

    def kernel(self, outputs: int = 6) -> str:
        lines = [HEAD[0].format(n=128 * outputs)] + HEAD[1:] + self.PRELUDE
        for k in range(outputs):
            lines.append(f"    out[i * {outputs} + {k}] = (unsigned long long)({self.expr(self.rng.randint(2, 5))});")
        return "\n".join(lines + ["}"]) + "\n"


class Statements:
    """Declarations of random types, then compound assignments, ++/-- under conditions."""
    TYPES = ["int", "unsigned", "long long", "unsigned long long", "short", "unsigned short", "signed char",
             "unsigned char", "float", "double", "bool"]

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.vars = [("x", "int"), ("y", "int"), ("L", "long long")]

    def atom(self) -> str:
        if self.rng.random() < 0.8:
            v, t = self.rng.choice(self.vars)
            return f"((int){v})" if t in ("float", "double") else v    # floats here are small: no UB
        return self.rng.choice(["0", "1", "-1", "3", "17", "255", "0x7fff", "100000", "2u", "0x1234567890LL"])

    def expr(self, depth: int) -> str:
        rng = self.rng
        if depth <= 0 or rng.random() < 0.3:
            return self.atom()
        a, b = self.expr(depth - 1), self.expr(depth - 1)
        r = rng.random()
        if r < 0.2:         # signed arithmetic on 15-bit values: no overflow
            return f"(((int)({a}) & 0x7fff) {rng.choice(['+', '-', '*'])} ((int)({b}) & 0x7fff))"
        if r < 0.4:
            t = rng.choice(["unsigned", "unsigned long long"])
            return f"(({t})({a}) {rng.choice(['+', '-', '*', '&', '|', '^'])} ({t})({b}))"
        if r < 0.5:
            return f"(({a}) {rng.choice(['<', '>', '<=', '>=', '==', '!='])} ({b}))"
        if r < 0.57:
            t = rng.choice(["int", "long long"])
            return f"((({t})({a}) & 0xfffff) {rng.choice(['/', '%'])} ((({t})({b}) & 0x3ff) + 1))"
        if r < 0.64:
            t = rng.choice(["int", "long long", "unsigned", "unsigned long long", "short", "unsigned char"])
            width = 63 if "long" in t else 31
            op = ">>" if t in ("int", "long long") else rng.choice(["<<", ">>"])
            return f"(({t})({a}) {op} ((int)({b}) & {width}))"
        if r < 0.72:
            return f"(({self.expr(depth - 1)}) ? ({a}) : ({b}))"
        if r < 0.8:         # float arithmetic on 12-bit values, back to int inside its range
            t = rng.choice(["float", "double"])
            if rng.random() < 0.25:
                return f"((int)(({t})((int)({a}) & 0xffff) / ({t})(((int)({b}) & 0xff) + 1)))"
            return f"((int)(({t})((int)({a}) & 0xfff) {rng.choice(['+', '-', '*'])} ({t})((int)({b}) & 0xfff)))"
        if r < 0.86:
            return f"((int)(({rng.choice(['float', 'double'])})((int)({a}) & 0xffffff) * 0.5))"
        if r < 0.92:
            return f"({rng.choice(self.TYPES[:8])})({a})"
        return f"({rng.choice(['~', '!', '-'])}(unsigned)({a}))"

    def kernel(self, statements: int = 10) -> str:
        rng = self.rng
        body = []
        for k in range(6):
            t = rng.choice(self.TYPES)
            init = self.expr(2)
            if t in ("float", "double"):
                init = f"({t})((int)({init}) & 0xffff) * 0.25"
            body.append(f"    {t} v{k} = ({t})({init});")
            self.vars.append((f"v{k}", t))
        for _ in range(statements):
            v, t = rng.choice(self.vars[3:])
            e = self.expr(rng.randint(1, 3))
            if t in ("float", "double", "bool"):
                body.append(f"    {v} = ({t})((int)({e}) & 0xffff);")
            else:
                op = rng.choice(["=", "+=", "-=", "^=", "|=", "&=", "<<=", ">>=", "*=", "/=", "%="])
                if op in ("<<=", ">>="):
                    body.append(f"    {v} = ({t})((unsigned long long)(({t}){v}) & 0xffffff); {v} {op} ((int)({e}) & 7);")
                elif op in ("/=", "%="):
                    body.append(f"    {v} {op} ({t})(((int)({e}) & 0x3f) + 1);")
                elif op in ("+=", "-=", "*=") and t in ("int", "long long", "short", "signed char"):
                    body.append(f"    {v} = ({t})({v} & 0x7fff); {v} {op} ({t})((int)({e}) & 0x7fff);")
                else:
                    body.append(f"    {v} {op} ({t})({e});")
            if rng.random() < 0.2:
                v2, t2 = rng.choice(self.vars[3:])
                if t2 not in ("float", "double", "bool"):
                    body.append(f"    if ({self.expr(1)}) {v2}++; else --{v2};")
        outs = [f"    out[i * 6 + {k}] = (unsigned long long)(long long)"
                f"({'(double)' + v + ' * 4.0' if t in ('float', 'double') else v});"
                for k, (v, t) in enumerate(self.vars[3:])]
        return "\n".join([HEAD[0].format(n=768)] + HEAD[1:] + body + outs + ["}"]) + "\n"


class Regions:
    """Random control-flow shapes whose arms are empty, dead or live: if/else regions
    nested up to three deep, in loops and in helpers, each arm nothing, only values
    nobody reads (sinf, a division: the code remove_dead_code deletes, leaving the
    region empty), a few live statements, or another region.  What if_convert,
    remove_dead_code and simplify_cfg must leave equivalent."""
    CONDITIONS = ["(x & {m}) != 0", "(y & {m}) == 0", "u0 < {k}u", "u1 > {k}u", "x < y", "(int)u2 > {k}",
                  "f0 < {k}.0f", "(u3 & 1u)"]
    LIVE = ["u{a} = u{a} << 1;", "u{a} += (unsigned)x;", "u{a} ^= u{b};", "u{a} = u{b} * 3u + {k}u;", "u{a}++;",
            "f0 = 0.0f;", "f{c} = f{c} * 0.5f;", "f{c} = f{c} + 1.0f;", "f1 = (float)u{a};", "u{a} = (unsigned)(f{c} * 0.25f);"]
    DEAD = ["float unused{n} = sinf(f{c});", "unsigned unused{n} = u{a} / (u{b} | 1u);",
            "float unused{n} = sqrtf(f{c}) * 3.0f;", "unsigned unused{n} = u{a} * {k}u + u{b};",
            "double unused{n} = (double)u{a} / 7.0;"]

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.names = 0

    def fill(self, pattern: str) -> str:
        rng = self.rng
        self.names += 1
        return pattern.format(a=rng.randint(0, 3), b=rng.randint(0, 3), c=rng.randint(0, 1), k=rng.randint(0, 9),
                              m=rng.choice([1, 2, 4, 8, 0x10, 0x100]), n=self.names)

    def arm(self, depth: int, indent: str) -> list:
        rng = self.rng
        r = rng.random()
        if r < 0.25:
            return []
        if r < 0.5:
            return [indent + self.fill(rng.choice(self.DEAD)) for _ in range(rng.randint(1, 2))]
        if r < 0.7 and depth > 0:
            return self.region(depth - 1, indent)
        lines = [indent + self.fill(rng.choice(self.LIVE)) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.3:
            lines.insert(rng.randint(0, len(lines)), indent + self.fill(rng.choice(self.DEAD)))
        return lines

    def region(self, depth: int, indent: str = "    ") -> list:
        rng = self.rng
        cond = self.fill(rng.choice(self.CONDITIONS))
        inner = indent + "    "
        lines = [f"{indent}if ({cond}) {{"] + self.arm(depth, inner)
        if rng.random() < 0.5:
            lines += [f"{indent}}} else {{"] + self.arm(depth, inner)
        lines.append(f"{indent}}}")
        if rng.random() < 0.15:
            lines = [f"{indent}for (int j{self.names} = 0; j{self.names} < (x & 3); j{self.names}++) {{"] + \
                    ["    " + line for line in lines] + [f"{indent}}}"]
        return lines

    def helper(self, k: int) -> list:
        """`unsigned hK(unsigned a)`: an empty or dead if, then a use of its argument."""
        rng = self.rng
        body = rng.choice(["", f"unsigned d = a / (a | 3u);", "float d = sinf((float)a);"])
        return [f"__device__ unsigned h{k}(unsigned a) {{",
                f"    if (a < {rng.randint(1, 9)}u) {{ {body} }}",
                f"    return a {rng.choice(['<<', '>>'])} {rng.randint(1, 4)};", "}"]

    def kernel(self) -> str:
        rng = self.rng
        helpers = [line for k in range(2) for line in self.helper(k)]
        body = ["    unsigned u0 = (unsigned)x, u1 = (unsigned)y, u2 = (unsigned)x >> 16, u3 = (unsigned)L;",
                "    float f0 = (float)(x & 0xffff) * 0.25f, f1 = (float)(y & 0xff);"]
        for _ in range(rng.randint(2, 4)):
            body += self.region(rng.randint(0, 2))
            if rng.random() < 0.4:
                body.append(f"    u{rng.randint(0, 3)} = h{rng.randint(0, 1)}(u{rng.randint(0, 3)});")
        outs = [f"    out[i * 6 + {k}] = {v};" for k, v in
                enumerate(["u0", "u1", "u2", "u3", "__float_as_uint(f0)", "__float_as_uint(f1)"])]
        return "\n".join([HEAD[0].format(n=768)] + helpers + HEAD[1:] + body + outs + ["}"]) + "\n"


class Params:
    """Helpers that write their by-value parameters (compound assignment, ++/--,
    assignment, through a pointer to it), called with the caller's variables of every
    integer type, casts of them and expressions, under branches and in loops; every
    caller variable is an output, so a callee's write that leaks into its argument
    shows."""
    TYPES = ["int", "unsigned", "long long", "unsigned long long", "short", "unsigned short", "signed char",
             "unsigned char", "bool", "float", "double"]
    WRITES = ["p += 2;", "p++;", "--p;", "p = ({t})(p * 3);", "p ^= 5;", "p <<= 1;", "p = ({t})7;",
              "{{ {t} *q = &p; *q = ({t})(*q + 1); }}", "p -= ({t})1;"]
    FLOAT_WRITES = ["p += 2;", "p++;", "p = p * 0.5f;", "{{ {t} *q = &p; *q = *q + 1; }}", "p = 3;"]

    def __init__(self, rng: random.Random):
        self.rng = rng

    def helper(self, k: int, t: str) -> list:
        rng = self.rng
        writes = self.FLOAT_WRITES if t in ("float", "double") else self.WRITES
        body = [f"    {rng.choice(writes).format(t=t)}" for _ in range(rng.randint(1, 3))]
        if t == "bool":
            body = ["    p = !p;", "    { bool *q = &p; *q = !*q; }"][:rng.randint(1, 2)]
        ret = "(unsigned long long)(long long)(p * 4.0)" if t in ("float", "double") else \
            "(-(unsigned long long)p) * (unsigned long long)p"
        return [f"__device__ unsigned long long h{k}({t} p) {{"] + body + [f"    return {ret};", "}"]

    def kernel(self) -> str:
        rng = self.rng
        types = [rng.choice(self.TYPES) for _ in range(3)]
        helpers = [line for k, t in enumerate(types) for line in self.helper(k, t)]
        vars_ = [(f"c{k}", rng.choice(self.TYPES[:8])) for k in range(3)]
        body = [f"    {t} {v} = ({t})((x >> {k * 5}) & 0xffff);" for k, (v, t) in enumerate(vars_)]
        body.append("    unsigned long long r = 0;")
        for _ in range(rng.randint(2, 4)):
            k = rng.randrange(3)
            v, t = rng.choice(vars_)
            arg = rng.choice([v, f"({types[k]}){v}", f"({types[k]})({v} + 1)"])
            call = f"r += h{k}({arg});"
            seen = f"r = r * 3u + (unsigned long long)(long long)({arg});"   # the argument's value, remembered
            if rng.random() < 0.6:
                body.append(f"    {seen}")
            shape = rng.random()
            if shape < 0.4:
                body.append(f"    if ((y & {1 << rng.randint(0, 4)}) != 0) {call}")
            elif shape < 0.6:
                body.append(f"    for (int j = 0; j < (y & 3); j++) {{ {call} }}")
            else:
                body.append(f"    {call}")
            if rng.random() < 0.6:
                body.append(f"    {seen}")
            if rng.random() < 0.3:
                body.append(f"    {v} = ({t})({v} + 1);")
        outs = [f"    out[i * 6 + {k}] = (unsigned long long){v};" for k, (v, _) in enumerate(vars_)]
        outs += ["    out[i * 6 + 3] = r;", "    out[i * 6 + 4] = (unsigned long long)(c0 + c1);",
                 "    out[i * 6 + 5] = (unsigned long long)(c2 * 3);"]
        return "\n".join([HEAD[0].format(n=768)] + helpers + HEAD[1:] + body + outs + ["}"]) + "\n"


class Operands:
    """Typed integer expressions over full-range values of every integer type: a buffer
    per type (two elements of it per thread), a kernel parameter per type (a constant
    bank on sm_89, a uniform register or LDC on sm_90), a block-uniform value and
    immediates, with division and remainder by all of them.  The parameters' values are
    drawn per kernel (powers of two, small, negative, the extremes, full-range random;
    never 0 or -1, so each may divide anything); other divisors are guarded.  Issue 16's
    u32 quotient by a parameter (twice nvcc's) is the kind of bug this style is for."""
    TYPES = [("i8", "signed char", 8, True), ("u8", "unsigned char", 8, False), ("i16", "short", 16, True),
             ("u16", "unsigned short", 16, False), ("i32", "int", 32, True), ("u32", "unsigned", 32, False),
             ("i64", "long long", 64, True), ("u64", "unsigned long long", 64, False)]

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.params = {tag: self.param_value(bits, signed) for tag, _, bits, signed in self.TYPES}

    def param_value(self, bits: int, signed: bool) -> int:
        rng = self.rng
        lo, hi = (-2 ** (bits - 1), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
        while True:
            v = rng.choice([1 << rng.randrange(bits - 1), rng.randint(2, 20), -rng.randint(2, 20), lo, hi, lo + 1,
                            rng.randint(lo, hi), rng.randint(lo, hi)])
            if lo <= v <= hi and v not in (0, -1):
                return v

    @staticmethod
    def wide(bits: int) -> str:
        return "unsigned long long" if bits == 64 else "unsigned"

    def literal(self, t) -> str:
        tag, c, bits, signed = t
        v = self.param_value(bits, signed)
        text = f"{v}" if signed else f"{v}u"
        if bits == 64:
            text = f"{v}ll" if signed and v != -2 ** 63 else (f"{v}ull" if not signed else "(-0x7fffffffffffffffll - 1)")
        elif bits == 32 and v == -2 ** 31:
            text = "(-0x7fffffff - 1)"
        return f"(({c}){text})"

    def leaf(self, t, divisor: bool = False) -> str:
        """A value of type t; with `divisor`, one that is never 0 or -1."""
        rng, (tag, c, bits, signed) = self.rng, t
        r = rng.random()
        if divisor:
            if r < 0.4:
                return f"p_{tag}"
            if r < 0.55:
                return f"(({c})(blockIdx.x * 977u + 3u) == ({c})-1 ? ({c})5 : ({c})(blockIdx.x * 977u + 3u))"
            if r < 0.75:
                return self.literal(t)
            v = rng.choice(["x", "y"]) + f"_{tag}"
            return f"(({v} == 0 || {v} == ({c})-1) ? ({c})3 : {v})"
        if r < 0.55:
            return rng.choice(["x", "y"]) + f"_{tag}"
        if r < 0.75:
            return f"p_{tag}"
        if r < 0.85:
            return f"(({c})(blockIdx.x * 977u + 3u))"
        if r < 0.93:
            return self.literal(t)
        other = rng.choice(self.TYPES)
        return f"(({c}){rng.choice(['x', 'y'])}_{other[0]})"

    def expr(self, t, depth: int) -> str:
        rng, (tag, c, bits, signed) = self.rng, t
        if depth <= 0 or rng.random() < 0.2:
            return self.leaf(t)
        a, w = self.expr(t, depth - 1), self.wide(bits)
        r = rng.random()
        if r < 0.3:                  # division and remainder: the divisor a parameter, uniform, immediate or guarded
            return f"(({c})(({a}) {rng.choice(['/', '%'])} {self.leaf(t, divisor=True)}))"
        b = self.expr(t, depth - 1) if rng.random() < 0.5 else self.leaf(t)
        if r < 0.5:                  # wrapping arithmetic in the unsigned type of the promoted width
            return f"(({c})(({w})({a}) {rng.choice(['+', '-', '*'])} ({w})({b})))"
        if r < 0.6:
            return f"(({c})(({a}) {rng.choice(['&', '|', '^'])} ({b})))"
        if r < 0.7:                  # shifts by a count below the promoted width
            width = 64 if bits == 64 else 32
            n = f"((int)({self.leaf(rng.choice(self.TYPES))}) & {width - 1})"
            if rng.random() < 0.5:
                return f"(({c})(({w})({a}) << {n}))"
            return f"(({c})(({a}) >> {n}))"
        if r < 0.78:
            if bits >= 32:
                return f"(({c}){rng.choice(['min', 'max'])}(({c})({a}), ({c})({b})))"
            return f"((({a}) < ({b})) ? ({a}) : ({b}))"
        if r < 0.84:
            return f"(({c})(({a}) {rng.choice(['<', '<=', '>', '>=', '==', '!='])} ({b})))"
        if r < 0.9 and bits >= 32:
            hi = {(32, False): "__umulhi", (32, True): "__mulhi", (64, False): "__umul64hi",
                  (64, True): "__mul64hi"}[(bits, signed)]
            return f"(({c}){hi}(({c})({a}), ({c})({b})))"
        if r < 0.95:
            return f"(({c})(({self.leaf(rng.choice(self.TYPES))}) ? ({a}) : ({b})))"
        return f"(({c})({rng.choice(['-', '~'])}({w})({a})))"

    def kernel(self, outputs: int = 6) -> str:
        rng = self.rng
        buffers = " ".join(f"b_{tag}={tag}[128]:rand" for tag, *_ in self.TYPES)
        scalars = " ".join(f"p_{tag}={self.params[tag]}" for tag, *_ in self.TYPES)
        launch = f"// LAUNCH: k grid=2 block=64 {buffers} out=u64[{128 * outputs}]:zero {scalars}"
        signature = ("__global__ void k(" + ", ".join(f"const {c}* b_{tag}" for tag, c, *_ in self.TYPES)
                     + ", unsigned long long* out, " + ", ".join(f"{c} p_{tag}" for tag, c, *_ in self.TYPES) + ") {")
        lines = [launch, signature, "    int i = blockIdx.x * blockDim.x + threadIdx.x;"]
        lines += [f"    {c} x_{tag} = b_{tag}[i], y_{tag} = b_{tag}[i ^ 1];" for tag, c, *_ in self.TYPES]
        for k in range(outputs):
            t = rng.choice(self.TYPES)
            lines.append(f"    out[i * {outputs} + {k}] = (unsigned long long)({self.expr(t, rng.randint(1, 4))});")
        return "\n".join(lines + ["}"]) + "\n"


STYLES = {"expressions": Expressions, "statements": Statements, "operands": Operands, "regions": Regions,
          "params": Params}


# ---- running both compilers ----------------------------------------------------------------
def _quiet(argv: list) -> tuple[int, str]:
    from ptxc.cli import main
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:
            rc = exc.code
        except BaseException as exc:      # noqa: BLE001 -- exactly what this looks for
            rc = f"escaped {type(exc).__name__}: {exc}"
    return rc, err.getvalue()


def reference_cubin(cu: Path, source: str, launches: list, work: Path, arch: str,
                    nvcc_cubin: Path | None = None) -> tuple[str, Path]:
    """(who, path) of NVIDIA's cubin for `cu` that the emulator runs: nvcc's, or, where
    the emulator cannot run that (a word its table has no form for yet: sm_90's
    `I2F.U32.RP R6, UR6`), ptxas -O0's cubin of nvcc's PTX, NVIDIA's code for the same
    source in shapes the table knows."""
    return reference_run(cu, source, launches, work, arch, nvcc_cubin)[::2]


def reference_run(cu: Path, source: str, launches: list, work: Path, arch: str, nvcc_cubin: Path | None = None):
    """(who, SpecRun, cubin path) of reference_cubin's cubin on the emulator.  Raises
    what the last attempt raised."""
    from ptxc.launch import run_launches
    if nvcc_cubin is None:
        nvcc_cubin = work / f"{cu.stem}.nvcc.cubin"
        oracle.run("nvcc", f"-arch={arch}", "-cubin", "-o", str(nvcc_cubin), str(cu))
    try:
        return "nvcc", run_launches(nvcc_cubin.read_bytes(), launches, source, str(cu)), nvcc_cubin
    except Exception as exc:        # noqa: BLE001 -- only a word the emulator lacks falls back
        if "no form" not in str(exc) and "not supported by the emulator" not in str(exc):
            raise
    ptx, cubin = work / f"{cu.stem}.nvcc.ptx", work / f"{cu.stem}.ptxas-O0.cubin"
    oracle.run("nvcc", f"-arch={arch}", "-ptx", "-o", str(ptx), str(cu))
    oracle.run("ptxas", "-O0", f"-arch={arch}", "-o", str(cubin), str(ptx))
    return "ptxas -O0 of nvcc's PTX", run_launches(cubin.read_bytes(), launches, source, str(cu)), cubin


def outputs(source: str, work: Path, arch: str) -> dict:
    """{'nvcc' | 'ptxc' | 'ptxc-ptx': list of out's words, or an error string; 'reference':
    which of NVIDIA's cubins 'nvcc' is (reference_run)}."""
    from ptxc.launch.spec import parse_file
    from ptxc.launch import run_launches
    cu = work / "k.cu"
    cu.write_text(source)
    found: dict = {}
    cubins = {"nvcc": work / "nvcc.cubin", "ptxc": work / "ptxc.cubin", "ptxc-ptx": work / "via.cubin"}
    oracle.run("nvcc", f"-arch={arch}", "-cubin", "-o", str(cubins["nvcc"]), str(cu))
    rc, err = _quiet([cu, f"-arch={arch}", "-o", cubins["ptxc"]])
    if rc != 0:
        found["ptxc"] = f"ptxc fails: {err.strip().splitlines()[0] if err.strip() else rc}"
    rc, err = _quiet([cu, f"-arch={arch}", "-ptx", "-o", work / "k.ptx"])
    if rc != 0:
        found["ptxc-ptx"] = f"ptxc -ptx fails: {err.strip().splitlines()[0] if err.strip() else rc}"
    else:
        done = oracle.run("ptxas", f"-arch={arch}", "-o", str(cubins["ptxc-ptx"]), str(work / "k.ptx"), check=False)
        if done.returncode != 0:
            found["ptxc-ptx"] = f"ptxas rejects ptxc's PTX: {done.stderr.strip()[:200]}"
    launches = parse_file(source, str(cu))
    for who, path in cubins.items():
        if who in found:
            continue
        try:
            if who == "nvcc":       # nvcc's cubin, or ptxas -O0's of nvcc's PTX where the emulator lacks a word
                found["reference"], result, _ = reference_run(cu, source, launches, work, arch, path)
            else:
                result = run_launches(path.read_bytes(), launches, source, str(cu), check_hazards=who == "ptxc")
        except Exception as exc:   # noqa: BLE001 -- reported, not raised
            lines = [line for line in str(exc).splitlines() if "SASS" in line] or str(exc).splitlines()[:1]
            found[who] = f"does not run: {lines[0].strip()[:200]}"
            continue
        if who == "ptxc" and result.hazards:
            found[who] = f"hazards: {result.hazards[:2]}"
            continue
        found[who] = [int(v) & (2**64 - 1) for v in result.buffers["out"]]
    return found


def compare(found: dict, per_thread: int) -> list[str]:
    """What differs from nvcc, in words (empty: all equal)."""
    problems = []
    reference = found.get("nvcc")
    for who in ("ptxc", "ptxc-ptx"):
        got = found.get(who)
        if isinstance(got, str):
            problems.append(f"{who}: {got}")
        elif isinstance(reference, list) and got != reference:
            wrong = [k for k in range(len(reference)) if got[k] != reference[k]]
            problems.append(f"{who}: outputs {sorted({k % per_thread for k in wrong})} differ "
                            f"(out[{wrong[0]}] = {got[wrong[0]]:#x}, nvcc {reference[wrong[0]]:#x})")
    if isinstance(reference, str):
        problems.append(f"nvcc: {reference}")
    return problems


def differential(args) -> int:
    first, last = (int(x) for x in args.seeds.split(":"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    found_any = 0
    causes: collections.Counter = collections.Counter()
    references: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(first, last):
            rng = random.Random(seed)
            source = STYLES[args.style](rng).kernel()
            found = outputs(source, Path(tmp), args.arch)
            references[found.get("reference", "none")] += 1
            problems = compare(found, 6)
            causes.update({cause(p) for p in problems} or {"same as nvcc"})
            table_only = problems and all("does not run" in p for p in problems)
            if problems:
                found_any += not table_only
                keep = out / f"{args.style}_{args.arch}_{seed}.cu"
                keep.write_text(source)
                print(f"seed {seed}: {'; '.join(problems)}  [{keep}]")
            else:
                print(f"seed {seed}: same as nvcc", file=sys.stderr)
    print(f"{last - first} kernels ({args.style}, {args.arch}), {found_any} with wrong results or failures")
    print("  reference: " + ", ".join(f"{who} {n}" for who, n in references.most_common()))
    for what, n in sorted(causes.items()):
        print(f"  {what}: {n}")
    return 1 if found_any else 0


def cause(problem: str) -> str:
    """A problem line's class, for the summary: who, and what (differs, does not run on
    the emulator, hazards, does not compile)."""
    who = problem.split(":", 1)[0]
    for what in ("differ", "does not run", "hazards", "fails", "rejects"):
        if what in problem:
            return f"{who}: {what}"
    return f"{who}: other"


def reduce(args) -> int:
    """Every parenthesized subexpression of output INDEX, smallest first, on its own."""
    source = Path(args.file).read_text()
    assigned = dict(re.findall(r"out\[i \* \d+ \+ (\d+)\] = \(unsigned long long\)\((.*)\);", source))
    expr = assigned[str(args.index)]
    subs, stack = {expr}, []
    for k, ch in enumerate(expr):
        if ch == "(":
            stack.append(k)
        elif ch == ")":
            piece = expr[stack.pop():k + 1]
            if not re.fullmatch(r"\((\s*(unsigned|signed|long|short|char|int|bool))+\s*\)", piece) and len(piece) > 3:
                subs.add(piece)
    subs = sorted(subs, key=len)
    launch = re.sub(r"out=u64\[\d+\]", f"out=u64[{128 * len(subs)}]", source.splitlines()[0])
    signature = next(line for line in source.splitlines() if line.startswith("__global__"))
    prelude = source[source.index(signature) + len(signature):source.index("    out[")]
    lines = [launch, signature, prelude.strip("\n")]
    lines += [f"    out[i * {len(subs)} + {k}] = (unsigned long long)({e});" for k, e in enumerate(subs)]
    with tempfile.TemporaryDirectory() as tmp:
        found = outputs("\n".join(lines + ["}"]) + "\n", Path(tmp), args.arch)
    reference = found["nvcc"]
    for k, e in enumerate(subs):
        bad = [w for w in ("ptxc", "ptxc-ptx") if isinstance(found[w], list)
               and found[w][k::len(subs)] != reference[k::len(subs)]]
        print(f"{'DIFFERS ' + ','.join(bad) if bad else 'same'}: {e}")
    return 0


# ---- bad input -----------------------------------------------------------------------------
PTX_SUFFIXES = [".s32", ".u32", ".f32", ".f64", ".u64", ".b32", ".b64", ".u16", ".s8", ".pred", ".rn", ".lo",
                ".wide", ".global", ".shared", ".v2", ".v4", ".sat", ".ftz", ".approx", ""]
PTX_OPERANDS = ["%r2", "%rd2", "%f2", "%fd2", "%p2", "%rs2", "%r100", "0", "1.0", "0f3F800000",
                "0d3FF0000000000000", "[%rd1]", "[%rd1+4]", "{%f1, %f2}", "%tid.x", "_Z3foo"]
CU_TOKENS = ["int", "float", "*", "(", ")", "{", "}", ";", ",", "[", "]", "0", "1.5", "x", "__shared__", "return",
             "if", "for", "struct", "double", "unsigned", "const", "=", "+=", "<<", "->", ".", "&", "::",
             "#define", "#if", '"', "'", "sizeof", "typedef", "enum", "switch", "case", "volatile", "?", ":"]


def _mutate_ptx(rng: random.Random, text: str) -> str:
    instrs = list(re.finditer(r"^\t(@!?%p\d+ )?([a-z][\w.]*)([^;\n]*);", text, re.M))
    m = rng.choice(instrs)
    opcode, rest = m.group(2), m.group(3)
    r = rng.random()
    if r < 0.3:
        parts = opcode.split(".")
        k = rng.randrange(len(parts))
        if k:
            parts[k] = rng.choice(PTX_SUFFIXES).lstrip(".")
        opcode = ".".join(p for p in parts if p)
    elif r < 0.45:
        opcode += rng.choice(PTX_SUFFIXES)
    elif r < 0.7:
        args = rest.split(",")
        args[rng.randrange(len(args))] = " " + rng.choice(PTX_OPERANDS)
        rest = ",".join(args)
    elif r < 0.85:
        args = rest.split(",")
        if len(args) > 1:
            args.pop(rng.randrange(len(args)))
        rest = ",".join(args)
    else:
        rest += ", " + rng.choice(PTX_OPERANDS)
    return text[:m.start()] + "\t" + (m.group(1) or "") + opcode + " " + rest.lstrip() + ";" + text[m.end():]


def _mutate_cu(rng: random.Random, text: str) -> str:
    tokens = list(re.finditer(r"\w+|[^\w\s]", text))
    m = rng.choice(tokens)
    r = rng.random()
    if r < 0.35:
        return text[:m.start()] + text[m.end():]
    if r < 0.7:
        return text[:m.start()] + rng.choice(CU_TOKENS) + text[m.end():]
    if r < 0.85:
        return text[:m.start()] + rng.choice(CU_TOKENS) + " " + text[m.start():]
    return text[:m.start()] + rng.choice(tokens).group() + text[m.end():]


def mutate(args) -> int:
    rng = random.Random(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sources = sorted((ROOT / "testsuite").glob("*.cu"))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.kind == "ptx":
            texts = [oracle.nvcc_ptx(p, tmp / f"{p.stem}.ptx").read_text() for p in sources]
        elif args.kind == "cubin":
            texts = [oracle.nvcc_cubin(p, tmp / f"{p.stem}.cubin").read_bytes() for p in sources[:8]]
        else:
            texts = [p.read_text() for p in sources]
        bad = 0
        for k in range(args.count):
            original = rng.choice(texts)
            if args.kind == "cubin":
                data = bytearray(original)
                for _ in range(rng.randint(1, 4)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
                case = tmp / "case.cubin"
                case.write_bytes(bytes(data))
                rc, err = _quiet(["dump", case])
                wrote = False
            else:
                text = _mutate_ptx(rng, original) if args.kind == "ptx" else _mutate_cu(rng, original)
                case = tmp / f"case.{args.kind}"
                case.write_text(text)
                target = tmp / "case.cubin"
                target.unlink(missing_ok=True)
                rc, err = _quiet([case, "-o", target])
                wrote = target.exists()
            if "internal error" in err or isinstance(rc, str) or rc not in (0, 1) or (rc == 1 and wrote):
                bad += 1
                keep = out / f"mutant_{args.kind}_{args.seed}_{k}{case.suffix}"
                keep.write_bytes(case.read_bytes())
                last = err.strip().splitlines()[-1] if err.strip() else str(rc)
                print(f"case {k}: {last[:200]}  [{keep}]")
    print(f"{args.count} mutants of {args.kind}, {bad} not handled as bad input")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("differential", help="random kernels: ptxc's results against nvcc's")
    d.add_argument("--seeds", default="0:20", help="FIRST:LAST (LAST excluded)")
    d.add_argument("--style", choices=tuple(STYLES), default="expressions")
    d.add_argument("--arch", default="sm_89", choices=("sm_89", "sm_90"))
    d.add_argument("--out", default="fuzz-found")
    r = sub.add_parser("reduce", help="find the smallest subexpression of an output that differs")
    r.add_argument("file")
    r.add_argument("index", type=int)
    r.add_argument("--arch", default="sm_89", choices=("sm_89", "sm_90"))
    m = sub.add_parser("mutate", help="mutated input: a diagnostic, never an internal error")
    m.add_argument("--kind", choices=("cu", "ptx", "cubin"), default="ptx")
    m.add_argument("--count", type=int, default=200)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--out", default="fuzz-found")
    args = parser.parse_args()
    oracle.require("nvcc")
    from ptxc.driver import tune_gc
    tune_gc()
    return {"differential": differential, "reduce": reduce, "mutate": mutate}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
