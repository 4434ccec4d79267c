"""pool_double_constants (sm_89: doubles read from c[0x2]) against nvcc on the emulator.

A DADD of two constants (`fabs(1e-5) + 1e-3`, issue 16) had its first constant
placed after swapping the sources, and then the second one written over the slot
the swap had moved the first into: `DADD R2, R2, c[0x2][0x8]` computed 1e-3 + 1e-3.
Generated here: DADD/DMUL/DFMA/DSETP operations whose sources are constants (none
an immediate encodes) or variables, with every modifier (-x, |x|, -|x|), one, two or
three constants; each an output of its own.  sm_90 has no pool, its code is checked
the same way."""
from __future__ import annotations

import itertools
import random

import pytest

from ptxc import oracle
from ptxc.cli.check import check_command

pytestmark = [pytest.mark.oracle,
              pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")]

CONSTANTS = ["1e-5", "1e-3", "0.1", "(-2.718281828459045)", "(1.0 / 3.0)", "1.0000000000000002"]
MODIFIERS = ["{}", "(-{})", "fabs({})", "(-fabs({}))"]
OPS = ["({a} + {b})", "({a} - {b})", "({a} * {b})", "fma({a}, {b}, {c})", "(({a} < {b}) ? {c} : 0.5)",
       "(({a} >= {b}) ? {c} : 0.25)"]


def operand(rng: random.Random, constant: bool) -> str:
    base = rng.choice(CONSTANTS) if constant else rng.choice(["d", "e"])
    return rng.choice(MODIFIERS).format(base)


def expressions(count: int, seed: int = 16) -> list[str]:
    rng = random.Random(seed)
    out = ["(fabs(1e-5) + (double)1e-3)"]   # issue 16's case
    for op, pattern in itertools.product(OPS, range(1, 8)):     # which of a, b, c are constants
        if len(out) >= count:
            break
        flags = [(pattern >> k) & 1 for k in range(3)]
        a, b, c = (operand(rng, bool(f)) for f in flags)
        out.append(op.format(a=a, b=b, c=c))
    while len(out) < count:
        a, b, c = (operand(rng, rng.random() < 0.6) for _ in range(3))
        out.append(rng.choice(OPS).format(a=a, b=b, c=c))
    return out


def kernel(exprs: list[str]) -> str:
    n = len(exprs)
    lines = [f"// LAUNCH: k grid=1 block=32 da=f64[32]:rand db=f64[32]:rand o=f64[{32 * n}]:zero",
             "__global__ void k(const double *da, const double *db, double *o) {",
             "    int i = threadIdx.x;",
             "    double d = da[i], e = db[i];"]
    lines += [f"    o[i * {n} + {k}] = {e};" for k, e in enumerate(exprs)]
    lines.append("    o[i] += log2(fabs(1e-5) + (double)1e-3);")    # the consumer
    return "\n".join(lines + ["}"]) + "\n"


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_double_constants_match_nvcc(arch, tmp_path, capsys):
    path = tmp_path / "pool.cu"
    path.write_text(kernel(expressions(64)))
    status = check_command([str(path), f"-arch={arch}"])
    out = capsys.readouterr().out
    assert status == 0, out + "\n" + path.read_text()
