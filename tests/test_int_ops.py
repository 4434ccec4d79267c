"""Every integer type x every integer operator x every shape of its operands, compiled by
ptxc for sm_89 and sm_90: nvdisasm must accept every word of ptxc's cubin (cuobjdump -sass
prints it without an error, and as `ptxc dump` does), and the results on the emulator
must equal NVIDIA's code's for full-range operands (random over the type, plus every pair
of the type's edge values in the first 64 threads).

The shapes are where lowering goes wrong (issue 16: a u32 quotient by a kernel parameter
was about twice nvcc's, because a negated constant-bank source lost its minus): the
second operand as a register (a buffer element), a kernel parameter (a constant bank on
sm_89, a uniform register or LDC on sm_90), a `__constant__` variable (bank 3), a value
uniform across the block (`blockIdx.x + 3`), and immediates (1, small powers of two,
small and large odd numbers, negative ones, the type's extremes); divisions also with
the parameter, an immediate or the uniform value as the dividend.  Kernels are batched:
two per type (div/rem; everything else) in one file, so one nvcc run per target covers
them all.

NVIDIA's code is nvcc's cubin where the emulator runs it, else ptxas -O0's cubin of
nvcc's PTX (fuzz_kernels.reference_run): the emulator's table lacks some of nvcc's sm_90
uniform-register words yet.  testsuite/regress/int_div_param.cu is the division case on
its own, checked here with `ptxc check` and on the H200 (tests/test_device.py,
scripts/device_check.py).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ptxc import oracle

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import fuzz_kernels  # noqa: E402

pytestmark = pytest.mark.oracle
ARCHS = ("sm_89", "sm_90")
THREADS = 1024
BLOCK = 256


@dataclass(frozen=True)
class IntType:
    tag: str            # the LAUNCH spec's name (i8 ... u64)
    c: str              # the C type
    bits: int
    signed: bool
    p: int              # the kernel parameters' values (nonzero, never -1: divisors)
    q: int
    constant: int       # the __constant__ divisor
    imms: tuple         # immediates (nonzero) as the second operand

    @property
    def wide(self) -> str:
        """The unsigned type arithmetic that may overflow is done in (no UB; the promoted
        width for the narrow types)."""
        return "unsigned long long" if self.bits == 64 else "unsigned"

    @property
    def width(self) -> int:
        """Bits of the type the shifted value is promoted to."""
        return 64 if self.bits == 64 else 32

    def lit(self, v: int) -> str:
        if self.bits == 64:
            text = f"{v:#x}ull" if not self.signed else (f"{v}ll" if v != -2**63 else "(-0x7fffffffffffffffll - 1)")
        elif self.bits == 32 and not self.signed:
            text = f"{v:#x}u"
        else:
            text = str(v) if v != -2**31 else "(-0x7fffffff - 1)"
        return f"(({self.c}){text})"

    @property
    def lo(self) -> int:
        return -2 ** (self.bits - 1) if self.signed else 0

    @property
    def hi(self) -> int:
        return 2 ** (self.bits - 1) - 1 if self.signed else 2 ** self.bits - 1

    def edges(self) -> list:
        if self.signed:
            return [0, 1, -1, 2, 7, self.lo, self.lo + 1, self.hi]
        return [0, 1, 2, 7, self.hi // 2, self.hi // 2 + 1, self.hi - 1, self.hi]


TYPES = [
    IntType("i8", "signed char", 8, True, -7, 100, -7, (1, 2, 3, 7, 8, -1, -7, -8, 127, -128)),
    IntType("u8", "unsigned char", 8, False, 7, 200, 7, (1, 2, 3, 7, 8, 10, 100, 255)),
    IntType("i16", "short", 16, True, -7, 1000, -7, (1, 3, 8, -1, -7, -8, 1000, -32768, 32767)),
    IntType("u16", "unsigned short", 16, False, 7, 60000, 7, (1, 3, 7, 8, 10, 1000, 65535)),
    IntType("i32", "int", 32, True, -7, 1000003, -7,
            (1, 2, 3, 7, 8, -7, -8, 1000003, -1000003, 2**31 - 1, -2**31)),
    IntType("u32", "unsigned", 32, False, 7, 0x80000001, 7,
            (1, 2, 3, 7, 8, 10, 1000003, 0x7fffffff, 0x80000000, 0xffffffff)),
    IntType("i64", "long long", 64, True, -7, 0x7ffffffffff, -7,
            (1, 3, 7, 8, -7, -8, 1000003, -0x100000003, 2**63 - 1, -2**63)),
    IntType("u64", "unsigned long long", 64, False, 7, 0x100000003, 7,
            (1, 3, 7, 8, 10, 1000003, 0xffffffff, 0x100000003, 2**63, 2**64 - 1)),
]


def operands(t: IntType, reg: str = "y") -> list[tuple[str, str]]:
    """(shape, C expression) of every second operand: none but `reg` can be zero."""
    return ([("reg", reg), ("param", "p"), ("param2", "q"), ("const", f"cv_{t.tag}"), ("uniform", "uv")]
            + [(f"imm {v:#x}" if v >= 0 else f"imm -{-v:#x}", t.lit(v)) for v in t.imms])


def div_ops(t: IntType) -> list[tuple[str, str]]:
    """(what, expression) of the div/rem kernel."""
    out = []
    for shape, b in operands(t, "dy"):
        if t.signed and t.bits >= 32 and b in (t.lit(-1),):
            continue                              # MIN / -1 overflows
        for op in ("/", "%"):
            out.append((f"x {op} {shape}", f"x {op} {b}"))
    for shape, a in [("param", "p"), ("uniform", "uv"), ("imm", t.lit(t.imms[-1])), ("imm", t.lit(1000 % (t.hi + 1)))]:
        for op in ("/", "%"):
            out.append((f"{shape} {op} reg", f"{a} {op} dz"))
    return out


def alu_ops(t: IntType) -> list[tuple[str, str]]:
    """(what, expression) of everything else: arithmetic in the unsigned type of the
    promoted width where it could overflow, shifts by counts below the width."""
    w, out = t.wide, []
    for shape, b in operands(t):
        out += [(f"x * {shape}", f"({w})x * ({w}){b}"), (f"x + {shape}", f"({w})x + ({w}){b}"),
                (f"x - {shape}", f"({w})x - ({w}){b}"), (f"{shape} - x", f"({w}){b} - ({w})x"),
                (f"x & {shape}", f"x & {b}"), (f"x | {shape}", f"x | {b}"), (f"x ^ {shape}", f"x ^ {b}"),
                (f"min(x, {shape})", f"min(x, {b})"), (f"max(x, {shape})", f"max(x, {b})"),
                (f"x < {shape}", f"x < {b}"), (f"x >= {shape}", f"x >= {b}"), (f"x == {shape}", f"x == {b}")]
        if t.bits in (32, 64):
            hi = {(32, False): "__umulhi", (32, True): "__mulhi", (64, False): "__umul64hi",
                  (64, True): "__mul64hi"}[(t.bits, t.signed)]
            out.append((f"{hi}(x, {shape})", f"{hi}(x, {b})"))
    for shape, n in [("reg", f"(int)(y & {t.width - 1})"), ("param", "s"), ("imm 3", "3"),
                     ("imm max", str(t.width - 1)), ("uniform", f"(int)(blockIdx.x & {t.width - 1})")]:
        out += [(f"x >> {shape}", f"x >> {n}"), (f"x << {shape}", f"({w})x << {n}")]
    out += [("-x", f"-({w})x"), ("~x", "~x"), ("!x", "!x"), ("x ? p : q", "x ? p : q")]
    if t.bits in (32, 64):
        ll = "ll" if t.bits == 64 else ""
        arg = f"({'long long' if t.bits == 64 else 'int'})x" if not t.signed else "x"
        uarg = f"({w})x"
        out += [("popc", f"__popc{ll}({uarg})"), ("clz", f"__clz{ll}({arg})"), ("brev", f"__brev{ll}({uarg})"),
                ("ffs", f"__ffs{ll}({arg})")]
    return out


def kernel(t: IntType, kind: str) -> tuple[str, list[str], str]:
    """(source, what each output is, LAUNCH line) of one kernel."""
    ops = div_ops(t) if kind == "div" else alu_ops(t)
    name = f"{kind}_{t.tag}"
    n = len(ops)
    launch = (f"// LAUNCH: {name} grid={THREADS // BLOCK} block={BLOCK} a_{t.tag}={t.tag}[{THREADS}]:rand "
              f"b_{t.tag}={t.tag}[{THREADS}]:rand out_{name}=u64[{THREADS * n}]:zero p={t.p} q={t.q} s=5")
    edge = " : ".join(f"k == {k} ? {t.lit(v)}" for k, v in enumerate(t.edges()[:-1])) + f" : {t.lit(t.edges()[-1])}"
    minus_one = f" || (y == {t.lit(-1)} && x == {t.lit(t.lo)})" if t.signed and t.bits >= 32 else ""
    lines = [f"__device__ {t.c} edge_{name}(int k) {{ return {edge}; }}",
             f"__global__ void {name}(const {t.c}* a, const {t.c}* b, unsigned long long* out, {t.c} p, {t.c} q, int s) {{",
             "    int i = blockIdx.x * blockDim.x + threadIdx.x;",
             f"    {t.c} x = a[i], y = b[i];",
             f"    if (i < 64) {{ x = edge_{name}(i & 7); y = edge_{name}(i >> 3); }}",
             f"    {t.c} dy = (y == 0{minus_one}) ? ({t.c})1 : y;     // x / dy is defined",
             f"    {t.c} dz = y == 0 ? ({t.c})3 : y;                   // p, uv, immediates / dz: no MIN / -1",
             f"    {t.c} uv = ({t.c})(blockIdx.x + 3);",
             f"    unsigned long long* o = out + i * {n};"]
    if t.signed and t.bits >= 32:
        lines[6] = f"    {t.c} dz = (y == 0 || y == {t.lit(-1)}) ? ({t.c})3 : y;   // p, uv, immediates / dz: no MIN / -1"
    if kind != "div":
        del lines[5:7]
    lines += [f"    o[{k}] = (unsigned long long)(long long)({t.c})({expr});   // {what}"
              for k, (what, expr) in enumerate(ops)]
    return "\n".join(lines + ["}"]), [what for what, _ in ops], launch


def source(types=TYPES) -> tuple[str, dict]:
    """The file, and {kernel: [what output k is]}."""
    constants, kernels, launches, names = [], [], [], {}
    for t in types:
        constants.append(f"__constant__ {t.c} cv_{t.tag} = {t.lit(t.constant)};")
        for kind in ("div", "alu"):
            text, whats, launch = kernel(t, kind)
            kernels.append(text)
            launches.append(launch)
            names[f"{kind}_{t.tag}"] = whats
    head = ["// generated by tests/test_int_ops.py"] + launches
    return "\n".join(head + constants + kernels) + "\n", names


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    work = tmp_path_factory.mktemp("int_ops")
    text, names = source()
    cu = work / "int_ops.cu"
    cu.write_text(text)
    return cu, text, names


def ptxc_cubin(cu: Path, arch: str) -> Path:
    out = cu.with_suffix(f".ptxc.{arch}.cubin")
    rc, err = fuzz_kernels._quiet([cu, f"-arch={arch}", "-o", out])
    assert rc == 0, err
    return out


DIVISION = ROOT / "testsuite" / "regress" / "int_div_param.cu"


@pytest.mark.parametrize("arch", ARCHS)
def test_division_by_a_parameter(tmp_path, arch, capsys):
    """Issue 16's kernel and its siblings (every width, signed and unsigned, parameters
    7, 0x80000001, -7, 1000003, 0x100000003), full-range dividends: `ptxc check` against
    NVIDIA's cubin.  Before the fix 8192 of 8192 quotients and remainders of div_u32 by 7
    differed on both targets."""
    from ptxc.cli.check import check_command
    from ptxc.launch.spec import parse_file
    text = DIVISION.read_text()
    who, cubin = fuzz_kernels.reference_cubin(DIVISION, text, parse_file(text, str(DIVISION)), tmp_path, arch)
    status = check_command([str(DIVISION), f"-arch={arch}", f"--nvcc-cubin={cubin}"])
    out = capsys.readouterr().out
    assert status == 0 and ": ok (30 buffers agree)" in out, f"against {who}:\n{out}"


@pytest.mark.parametrize("arch", ARCHS)
def test_nvdisasm_accepts_every_word(generated, arch):
    """cuobjdump -sass (nvdisasm inside) prints ptxc's cubin without an error, and exactly
    as `ptxc dump` prints it."""
    cu, _, _ = generated
    cubin = ptxc_cubin(cu, arch)
    theirs = oracle.run("cuobjdump", "-sass", str(cubin), check=False)
    assert theirs.returncode == 0 and "error" not in theirs.stderr, theirs.stderr[:2000]
    rc, ours = _dump(cubin)
    assert rc == 0
    ours, theirs = ours.splitlines(), theirs.stdout.splitlines()
    bad = [f"  ptxc dump: {a!r}\n  cuobjdump: {b!r}" for a, b in zip(ours, theirs) if a != b]
    assert not bad and len(ours) == len(theirs), "\n".join(bad[:10])


def _dump(cubin: Path) -> tuple[int, str]:
    import contextlib
    import io

    from ptxc.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["dump", str(cubin)])
    return rc, out.getvalue()


@pytest.mark.parametrize("arch", ARCHS)
def test_results_equal_nvidias(generated, arch):
    from ptxc.launch.spec import parse_file
    from ptxc.launch import run_launches
    cu, text, names = generated
    launches = parse_file(text, str(cu))
    ours = run_launches(ptxc_cubin(cu, arch).read_bytes(), launches, text, str(cu), check_hazards=True)
    who, theirs, _ = fuzz_kernels.reference_run(cu, text, launches, cu.parent, arch)
    assert not ours.hazards, ours.hazards[:3]
    wrong = []
    for kernel_name, whats in names.items():
        a, b = ours.buffers[f"out_{kernel_name}"], theirs.buffers[f"out_{kernel_name}"]
        n = len(whats)
        for k, what in enumerate(whats):
            differ = [(j, int(a[j]), int(b[j])) for j in range(k, len(a), n) if a[j] != b[j]]
            if differ:
                j, x, y = differ[0]
                wrong.append(f"{kernel_name}: {what}: {len(differ)} of {len(a) // n} threads differ "
                             f"(thread {j // n}: ptxc {x:#x}, {who} {y:#x})")
    assert not wrong, f"{len(wrong)} operations differ from {who}'s:\n" + "\n".join(wrong[:40])


def test_generator_covers_every_type_and_shape():
    """The generator is what makes these tests mean something: each type has both
    kernels, every operand shape appears in a division and a remainder, and nothing is
    divided by an operand that may be zero."""
    text, names = source()
    assert sorted(names) == sorted(f"{k}_{t.tag}" for t in TYPES for k in ("div", "alu"))
    for t in TYPES:
        whats = names[f"div_{t.tag}"]
        for shape in ("reg", "param", "param2", "const", "uniform", "imm 0x8"):
            assert f"x / {shape}" in whats and f"x % {shape}" in whats, (t.tag, shape)
    assert " / y" not in text and " % y" not in text


@pytest.mark.parametrize("arch", ARCHS)
def test_u64_divisions_leave_no_hazard(tmp_path, arch):
    """The u64 div/rem kernel alone, ptxc's cubin under the hazard checker: each 64-bit
    division's slow path is entered and left by branches, and set_control_codes capped
    its propagation at 4 rounds, so `STG.E.64 [R6.64+0x50], R2`'s read scoreboard (SB1)
    was never waited for by the `I2F.U64.RP R2, R4` 17 divisions later (14 rounds)."""
    from ptxc.launch.spec import parse_file
    from ptxc.launch import run_launches
    u64 = next(t for t in TYPES if t.tag == "u64")
    text, _, launch = kernel(u64, "div")
    text = "\n".join([launch, f"__constant__ unsigned long long cv_u64 = {u64.lit(u64.constant)};", text]) + "\n"
    cu = tmp_path / "div_u64.cu"
    cu.write_text(text)
    run = run_launches(ptxc_cubin(cu, arch).read_bytes(), parse_file(text, str(cu)), text, str(cu),
                       check_hazards=True)
    assert not run.hazards, [h.text for h in run.hazards[:3]]
