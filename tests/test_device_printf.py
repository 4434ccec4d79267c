"""Device printf and assert: ptxc's lowering of `.extern .func` calls (expand_extern_calls,
the cubin's extern symbol, relocation and .nv.info records) and the emulator's system-call
service (ptxc/emu/printf.py, the CALL.ABS.NOINC in core.py).

Expected text never comes from ptxc: each printf's output is derived here from C's
semantics with Python's % formatting of the same values (computed in NumPy's float32
where the kernel computes in float, then promoted to double as C's varargs do), in the
order the emulator documents (block, warp, call, lane).  nvcc's cubin runs through the
same service and must print the same text; nvdisasm (cuobjdump -sass) must read every
word of ptxc's cubin, and cuobjdump -elf must show the extern symbol and records nvcc's
cubin has.  __assertfail is exercised through nvcc's PTX (ptxc's frontend has no
<cassert> yet): ptxc's backend on it and nvcc's cubin must both stop with the
assertion's message for the same threads.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ptxc import oracle
from ptxc.api import compile as ptxc_compile
from ptxc.emu.device import Device, LaunchError

pytestmark = pytest.mark.oracle

GRID, BLOCK = 2, 40          # two warps per block, the second partial: lane and warp order
F, BIG = 1.25, 1000000007

# (format, the arguments as CUDA C, the arguments' values for global thread index i and
# address `a` of the int buffer, as C passes them after its default promotions)
f32 = np.float32


def _fl(x) -> float:
    return float(f32(x))


def C_ALT_HEX(v: int) -> str:
    """C's %#x: no 0x prefix for zero (Python's '%#x' % 0 is '0x0')."""
    return "0x%x" % v if v else "0"


CASES = [
    ("%d|%5d|%-5d|%+05d|%i\\n", "i * 7 - 3, i, -i, i, i * i",
     lambda i, a: (i * 7 - 3, i, -i, i, i * i)),
    ("%u|%x|%X|%#x|%o\\n", "4000000000u - i, i * 255, i * 255 + 10, i, i * 8",
     lambda i, a: ((4000000000 - i) & 0xFFFFFFFF, i * 255, i * 255 + 10, C_ALT_HEX(i), i * 8)),
    ("%lld|%llu|%ld|%lx\\n", "big * i, (unsigned long long)big << i, (long)i - 5, (unsigned long)big + i",
     lambda i, a: (BIG * i, (BIG << i) & (2**64 - 1), i - 5, BIG + i)),
    ("%f|%.2f|%8.3f|%e|%g|%G\\n", "f * i, f + i, -f * i, f * 1000.0f * i, f / (i + 1), f * 1e10f * i",
     lambda i, a: (_fl(f32(F) * f32(i)), _fl(f32(F) + f32(i)), _fl(-f32(F) * f32(i)),
                   _fl(f32(F) * f32(1000.0) * f32(i)), _fl(f32(F) / f32(i + 1)), _fl(f32(F) * f32(1e10) * f32(i)))),
    ("%.10f|%lf|%5.1e\\n", "(double)f / 3.0, (double)i * 0.1, 1.0 / (i + 1)",
     lambda i, a: (F / 3.0, i * 0.1, 1.0 / (i + 1))),
    ("%s|%10s|%-6s|%.2s|\\n", '"lit", "right", "left", "cut"',
     lambda i, a: ("lit", "right", "left", "cut")),
    ("%c|%3c|%%|%p\\n", "'a' + (i % 26), 'A' + (i % 26), a + i",
     lambda i, a: (chr(97 + i % 26), chr(65 + i % 26), "%%", "0x%x" % (a + 4 * i))),
]

SOURCE = "#include <cstdio>\n__global__ void show(const int *a, float f, long long big)\n{\n" \
         "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" + \
         "".join(f'    printf("{fmt}", {args});\n' for fmt, args, _ in CASES) + "}\n"


def expected_text(address: int) -> str:
    """What the launch prints by C's rules, in the emulator's order: block by block,
    warp by warp, each printf in program order, the lanes in order."""
    out = []
    for b in range(GRID):
        for w in range(0, BLOCK, 32):
            for fmt, _args, values in CASES:
                for lane in range(w, min(w + 32, BLOCK)):
                    i = b * BLOCK + lane
                    vals = values(i, address)
                    text = fmt.replace("\\n", "\n").replace("%p", "%s").replace("%#x", "%s")
                    text = re.sub(r"%([-+ #0]*\d*(?:\.\d+)?)(?:ll|l)([a-zA-Z])", r"%\1\2", text)   # values narrowed above
                    out.append(text % tuple(v for v in vals if v != "%%"))
    return "".join(out)


def run_printf(cubin: bytes, name: str) -> tuple[str, int]:
    dev = Device()
    printed = []
    dev.printf_sink = printed.append
    module = dev.load(cubin, name)
    kernel = next(iter(module.kernels.values()))
    a = dev.malloc(4 * GRID * BLOCK, "a")
    dev.launch(kernel, GRID, BLOCK, [a, np.float32(F).tobytes(), BIG])
    return "".join(printed), a


@pytest.fixture(scope="module", params=["sm_89", "sm_90"])
def cubins(request, tmp_path_factory):
    arch = request.param
    tmp = tmp_path_factory.mktemp(f"printf_{arch}")
    src = tmp / "show.cu"
    src.write_text(SOURCE)
    ours = ptxc_compile(str(src), arch=arch).cubin
    (tmp / "ptxc.cubin").write_bytes(ours)
    oracle.nvcc_cubin(src, tmp / "nvcc.cubin", arch)
    return arch, tmp, ours, (tmp / "nvcc.cubin").read_bytes()


def test_printf_output_is_cs_for_ptxc_and_nvcc_cubins(cubins):
    arch, _tmp, ours, theirs = cubins
    got, address = run_printf(ours, "ptxc.cubin")
    want = expected_text(address)
    assert got == want
    nvcc_got, nvcc_address = run_printf(theirs, "nvcc.cubin")
    assert nvcc_address == address
    assert nvcc_got == want


def test_nvidias_tools_read_ptxcs_printf_cubin(cubins):
    arch, tmp, _ours, _theirs = cubins
    sass = oracle.cuobjdump_sass(tmp / "ptxc.cubin")      # nvdisasm decodes every word
    assert sass.count("CALL.ABS.NOINC") == len(CASES)
    assert "LEPC" in sass
    ours, theirs = oracle.cuobjdump_elf(tmp / "ptxc.cubin"), oracle.cuobjdump_elf(tmp / "nvcc.cubin")
    for elf in (ours, theirs):
        assert re.search(r"FUNC\s+GLOBAL\s+DEFAULT\s+-\s+0\s+vprintf", elf)
        assert re.search(r"0x0\s+vprintf\s+R_CUDA_64", elf)
        assert re.search(r"externs:\s+vprintf\(0x[0-9a-f]+\)", elf)
    calls = [int(m, 16) for m in re.findall(r"/\*([0-9a-f]{4})\*/\s+CALL\.ABS\.NOINC", sass)]
    offsets = re.search(r"EIATTR_SYSCALL_OFFSETS\s+Format:\s+EIFMT_SVAL\s+Value:\s+([0-9a-fx ]+)", ours)
    assert [int(x, 16) for x in offsets.group(1).split()] == calls


ASSERT_SOURCE = """#include <cassert>
__global__ void check(int *a)
{
    int i = threadIdx.x;
    assert(a[i] < 5);
    a[i] = -i;
}
"""
ASSERT_LINE = 5


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_assert_stops_the_launch_with_its_message(arch, tmp_path):
    src = tmp_path / "check.cu"
    src.write_text(ASSERT_SOURCE)
    oracle.nvcc_ptx(src, tmp_path / "check.ptx", arch)
    oracle.nvcc_cubin(src, tmp_path / "nvcc.cubin", arch)
    ours = ptxc_compile(str(tmp_path / "check.ptx"), arch=arch).cubin
    values = np.array([0, 1, 9, 3, 7] + [0] * 27 + [100] * 8, dtype=np.int32)   # warp 0 fails first
    failing = [i for i in range(32) if values[i] >= 5]
    want = [f"{src}:{ASSERT_LINE}: void check(int *): block: [0,0,0], thread: [{i},0,0] "
            f"Assertion `a[i] < 5` failed." for i in failing]
    for cubin in (ours, (tmp_path / "nvcc.cubin").read_bytes()):
        dev = Device()
        kernel = next(iter(dev.load(cubin, "check.cubin").kernels.values()))
        a = dev.malloc(values.nbytes, "a")
        dev.memory.write(a, values)
        with pytest.raises(LaunchError) as info:
            dev.launch(kernel, 1, len(values), [a])
        assert info.value.kind == "assert"
        assert [line for line in str(info.value).splitlines() if "Assertion" in line] == want


PROGRAM = """#include <cstdio>
__global__ void hello(float f)
{
    printf("block %d thread %d: %.3f %s\\n", blockIdx.x, threadIdx.x, f * threadIdx.x, "ok");
}
int main()
{
    printf("before\\n");
    hello<<<2, 3>>>(0.5f);
    cudaDeviceSynchronize();
    printf("after\\n");
    return 0;
}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_ptxc_run_prints_device_output_after_the_kernel(arch, tmp_path, capsys):
    from ptxc.cli.run import run_command
    src = tmp_path / "hello.cu"
    src.write_text(PROGRAM)
    want = "before\n" + "".join("block %d thread %d: %.3f %s\n" % (b, t, _fl(f32(0.5) * f32(t)), "ok")
                                for b in range(2) for t in range(3)) + "after\n"
    for cubin_of in ("ptxc", "nvcc"):
        assert run_command([str(src), f"-arch={arch}", f"--with={cubin_of}"]) == 0
        assert capsys.readouterr().out == want


def test_expected_text_covers_each_conversion():
    """The cases name every conversion the brief lists (a guard on the table above)."""
    formats = "".join(fmt for fmt, _a, _v in CASES)
    for conv in ("%d", "%i", "%u", "%x", "%X", "%o", "%lld", "%llu", "%ld", "%lx", "%f", "%e", "%g", "%G",
                 "%s", "%c", "%p", "%%", "%.2f", "%8.3f", "%10s", "%-5d", "%+05d", "%#x", "%.2s"):
        assert conv in formats, conv
