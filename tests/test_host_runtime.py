"""`ptxc run`'s CUDA runtime API (ptxc/host/runtime.py) and more of its C library.

Expected values never come from ptxc: buffers and sums are computed here with NumPy,
error names and strings come from NVIDIA's libcudart (cudaGetErrorName/String, which
need no GPU), the runtime's tables are checked against driver_types.h and libcudart,
cudaDeviceProp's layout against gcc's build of driver_types.h, the C library against
gcc's build of the same program, and every testsuite/host program gives the same
output with nvcc's cubin as with ptxc's.  On a machine with a GPU, the device test
builds each program with nvcc (host code included) and compares what the real CUDA
runtime prints on the GPU with what `ptxc run -arch=sm_90` prints."""
from __future__ import annotations

import importlib.util
import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ptxc import oracle
from ptxc.cli.run import run_command
from ptxc.frontend import cuda_runtime_data as D
from ptxc.frontend import parse_cuda
from ptxc.frontend import sema as S
from ptxc.host import Interpreter

ROOT = Path(__file__).resolve().parent.parent
HOST = ROOT / "testsuite" / "host"
PROGRAMS = sorted(p.name for p in HOST.glob("*.cu"))
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
needs_nvcc = pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")
needs_cudart = pytest.mark.skipif(oracle.cudart() is None, reason="libcudart (the oracle) is not installed")


def cudart_name(code: int) -> str:
    return oracle.cudart().cudaGetErrorName(code).decode()


def cudart_string(code: int) -> str:
    return oracle.cudart().cudaGetErrorString(code).decode()


def code(name: str) -> int:
    return D.CUDAERROR[name]


def run_args(name: str) -> list[str]:
    """The arguments of a testsuite program's `// RUN: ptxc run %s -- ARGS` line."""
    m = re.search(r"^// RUN: ptxc run %s(?: -- (.*))?$", (HOST / name).read_text(), re.M)
    assert m, f"{name} has no RUN line"
    return m.group(1).split() if m.group(1) else []


def ptxc_run(name: str, capsys, *options: str, args=None) -> tuple[int, str, str]:
    argv = [str(HOST / name), *options, "--", *(run_args(name) if args is None else args)]
    status = run_command(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# ---- the runtime's facts -----------------------------------------------------------------------
@needs_cudart
def test_error_names_and_strings_are_libcudarts():
    lib = oracle.cudart()
    for value, (name, text) in D.ERROR_STRINGS.items():
        assert (name, text) == (lib.cudaGetErrorName(value).decode(), lib.cudaGetErrorString(value).decode())
    assert set(D.ERROR_STRINGS) == set(D.CUDAERROR.values())


@needs_nvcc
def test_tables_are_what_driver_types_h_says():
    spec = importlib.util.spec_from_file_location("learn", ROOT / "scripts" / "learn_cuda_runtime.py")
    learn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(learn)
    text = learn.strip_comments((oracle.cuda_include_dir() / "driver_types.h").read_text())
    assert learn.enum_values(text, "cudaError") == D.CUDAERROR
    assert learn.enum_values(text, "cudaDeviceAttr") == D.CUDADEVICEATTR
    assert learn.enum_values(text, "cudaMemcpyKind") == D.CUDAMEMCPYKIND
    assert learn.flag_macros(text) == D.FLAGS
    assert learn.struct_fields(text, "cudaDeviceProp") == D.DEVICE_PROP_FIELDS


@needs_gcc
@needs_nvcc
def test_device_prop_layout_is_gccs(tmp_path):
    """sizeof and every field's offset of ptxc's cudaDeviceProp, as gcc lays out the header's."""
    prop = S.BUILTIN_TYPEDEFS["cudaDeviceProp"]
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include <driver_types.h>', 'int main() {',
             '  printf("%zu\\n", sizeof(struct cudaDeviceProp));']
    lines += [f'  printf("%zu\\n", offsetof(struct cudaDeviceProp, {name}));' for name, _, _ in prop.fields]
    lines.append("  return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run(["gcc", "-w", "-I", str(oracle.cuda_include_dir()), str(src), "-o", str(exe)], check=True)
    got = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
    assert got == [prop.size] + [offset for _, _, offset in prop.fields]


# ---- the testsuite's host programs -----------------------------------------------------------------
def expected_events(n: int, a: float) -> str:
    x = ((np.arange(n) % 100) * 0.25).astype(np.float32)
    y = (np.arange(n) % 7).astype(np.float32)
    y = (np.float32(a) * x).astype(np.float32) + y          # (FMA or not: the products are exact)
    untimed = cudart_name(code("cudaErrorInvalidResourceHandle"))
    return (f"n={n} a={a:g} y[0]={y[0]:g} y[n-1]={y[-1]:g} sum={y.astype(np.float64).sum():.2f}\n"
            "kernel time positive: yes\n"
            f"elapsed with an untimed event: {untimed}\nlast error: {untimed}\n"
            f"last error now: {cudart_name(0)}\n")


def expected_streams() -> str:
    n, chunk = 4096, 2048
    h_in = np.arange(n, dtype=np.int64) % 1000 - 500
    out = h_in * h_in + np.repeat([1, 2], chunk)
    return (f"stream 0: {out[:chunk].sum()}  stream 1: {out[chunk:].sum()}  first {out[0]} last {out[-1]}\n"
            f"across the halves: {out[chunk - 1]} {out[chunk]}\n"
            f"destroyed stream: {cudart_name(code('cudaErrorInvalidResourceHandle'))}\n")


def expected_constant_symbol() -> str:
    n = 300
    h_in = ((np.arange(n) * 37) % 23 - 11).astype(np.float32)
    taps = np.array([0.5, 1.0, -3.0, 1.0, 0.5], np.float32)
    out = np.zeros(n, np.float32)
    for i in range(n):                      # in the kernel's order: float sums, tap by tap
        s = np.float32(0)
        for k in range(-2, 3):
            if 0 <= i + k < n:
                s = np.float32(s + taps[k + 2] * h_in[i + k])
        out[i] = s
    positives = int((out > 0).sum())
    e = code("cudaErrorInvalidValue")
    return (f"taps {' '.join(f'{t:g}' for t in taps)}\n"
            f"out[0]={out[0]:g} out[1]={out[1]:g} out[n-1]={out[-1]:g} sum={out.astype(np.float64).sum():.2f} "
            f"positives={positives} ({positives})\n"
            f"past the end: {cudart_name(e)}: {cudart_string(e)}\n")


def expected_launch_errors() -> str:
    config, ok, fault = code("cudaErrorInvalidConfiguration"), 0, code("cudaErrorIllegalAddress")
    return (f"block of 2048: {cudart_string(config)}\nthen: {cudart_string(ok)}\n"
            f"block 32x32x2: {cudart_name(config)} ({cudart_string(config)}), peeked: {cudart_name(config)}\n"
            f"grid y 100000: {cudart_name(config)}\n1 MiB shared: {cudart_name(config)}\n"
            f"synchronize: {cudart_name(ok)}\n"
            f"valid launch: {cudart_name(ok)} {cudart_name(ok)} h[1023]={2 * 1023}\n"
            f"fault: {cudart_name(fault)}: {cudart_string(fault)}\n"
            f"memcpy after it: {cudart_name(fault)}\n"
            f"last error: {cudart_name(fault)}, still: {cudart_name(fault)}\n")


def expected_argv(n: int, period_text: str, step: float, label: str) -> str:
    period = int(period_text, 0)
    out = (np.float32(step) * (np.arange(n) % period).astype(np.float32)).astype(np.float32)
    return (f"argc=5 n={n} period={period} (parsed {len(period_text)} chars) step={step:g} label={label} "
            f"({len(label)} chars)\nsum={out.astype(np.float64).sum():.3f} max={out.max():g}\n")


def expected_managed_props(arch: str) -> str:
    from ptxc.sass.target import target
    cc = {"sm_89": (8, 9), "sm_90": (9, 0)}[arch]
    per_sm = {"sm_89": (1536, 24, 100 * 1024), "sm_90": (2048, 32, 228 * 1024)}[arch]
    optin = target(arch).max_shared_per_block
    v = (np.arange(1000) - 500) * 3 + 1
    return (f"devices 1, device 0: compute capability {cc[0]}.{cc[1]}\n"
            "warp 32 (32), threads/block 1024 (1024), block dims 1024 1024 64 (64), grid 2147483647 65535 65535\n"
            f"shared/block 49152, opt-in {optin} ({optin}), constant 65536, registers/block 65536\n"
            f"threads/SM {per_sm[0]}, blocks/SM {per_sm[1]}, shared/SM {per_sm[2]}\n"
            f"other device: {cudart_name(code('cudaErrorInvalidDevice'))}\n"
            f"managed: v[0]={v[0]} v[999]={v[-1]} sum={v.sum()}\n")


EXPECTED = {
    "host_events.cu": lambda arch: expected_events(5000, 2.0),
    "host_streams.cu": lambda arch: expected_streams(),
    "host_constant_symbol.cu": lambda arch: expected_constant_symbol(),
    "host_launch_errors.cu": lambda arch: expected_launch_errors(),
    "host_argv.cu": lambda arch: expected_argv(3000, "0x40", 1.5, "label"),
    "host_managed_props.cu": expected_managed_props,
}
STATUS = {"host_argv.cu": 3000 % 7}


def test_every_host_program_has_an_expectation():
    assert set(PROGRAMS) == set(EXPECTED)


@needs_cudart
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_host_program(name, arch, capsys):
    status, out, err = ptxc_run(name, capsys, f"-arch={arch}")
    if "ptxc cannot compile kernel" in err:
        pytest.xfail(f"ptxc's backend: {err.strip().splitlines()[0]}")
    assert (status, out) == (STATUS.get(name, 0), EXPECTED[name](arch)), err


@needs_nvcc
@needs_cudart
@pytest.mark.parametrize("name", PROGRAMS)
def test_host_program_with_nvccs_cubin(name, capsys):
    status, out, err = ptxc_run(name, capsys, "--with=nvcc")
    assert (status, out) == (STATUS.get(name, 0), EXPECTED[name]("sm_89")), err


def test_a_fault_is_reported_on_stderr_when_it_happens(capsys):
    status, out, err = ptxc_run("host_launch_errors.cu", capsys)
    if "ptxc cannot compile kernel" in err:
        pytest.xfail("ptxc's backend cannot compile the program's kernels")
    assert "kernel stray faulted (cudaErrorIllegalAddress, reported at the next synchronizing call)" in err
    assert "Address 0x0 is out of bounds" in err


@needs_cudart
def test_argv_defaults_and_usage(capsys):
    status, out, err = ptxc_run("host_argv.cu", capsys, args=[])
    assert (status, out) == (2, "")
    assert err.endswith("usage: " + str(HOST / "host_argv.cu") + " N PERIOD STEP [LABEL]\n")
    status, out, err = ptxc_run("host_argv.cu", capsys, args=["701", "010", "-0.25"])
    assert status == 701 % 7
    assert out.startswith("argc=4 n=701 period=8 (parsed 3 chars) step=-0.25 label=none (4 chars)\n")


def test_program_arguments_go_after_the_double_dash(capsys):
    with pytest.raises(SystemExit):
        run_command([str(HOST / "host_argv.cu"), "3000"])
    assert "go after --" in capsys.readouterr().err


# ---- the C library against gcc -------------------------------------------------------------------
C_LIBRARY = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
    const char* ints[] = {"42", "  -17xyz", "0x1F", "0777", "+9", "junk", "99999999999999999999", "-0x10", "12e3"};
    for (int k = 0; k < 9; k++) {
        char* end;
        long v0 = strtol(ints[k], &end, 0);
        int used0 = (int)(end - ints[k]);
        long v10 = strtol(ints[k], &end, 10);
        int used10 = (int)(end - ints[k]);
        unsigned long u16 = strtoul(ints[k], &end, 16);
        long long ll = strtoll(ints[k], NULL, 8);
        printf("%s: %ld/%d %ld/%d %lu %lld %d %ld\n", ints[k], v0, used0, v10, used10, u16, ll, atoi(ints[k]),
               atol(ints[k]));
    }
    const char* floats[] = {"3.25", "  -1e-3abc", "0x1.8p1", "inf", "-Infinity", ".5", "1e400", "7.", "x1"};
    for (int k = 0; k < 9; k++) {
        char* end;
        double d = strtod(floats[k], &end);
        float f = strtof(floats[k], NULL);
        printf("%s: %.17g/%d %.9g %g\n", floats[k], d, (int)(end - floats[k]), f, atof(floats[k]));
    }
    fprintf(stdout, "%s has %d chars, cmp %d %d %d\n", "hello", (int)strlen("hello"), strcmp("abc", "abd") < 0,
            strcmp("b", "a") > 0, strncmp("abcx", "abcy", 3));
    fprintf(stderr, "to stderr %d\n", 5);
    puts("puts line");
    putchar('!');
    putchar('\n');
    fflush(stdout);
    return argc;
}
"""


@needs_gcc
def test_c_library_matches_gcc(tmp_path):
    src = tmp_path / "prog.c"
    src.write_text(C_LIBRARY)
    exe = tmp_path / "prog"
    subprocess.run(["gcc", "-x", "c", "-std=gnu11", "-O0", "-w", str(src), "-o", str(exe), "-lm"], check=True)
    want = subprocess.run([str(exe), "a", "b"], capture_output=True, text=True)
    program, _ = parse_cuda(C_LIBRARY, "prog.cu")
    out, err = io.StringIO(), io.StringIO()
    status = Interpreter(program, str(exe), gpu=None, write=out.write, argv=["a", "b"], write_err=err.write).run()
    assert (out.getvalue(), err.getvalue(), status) == (want.stdout, want.stderr, want.returncode)


# ---- on the GPU: NVIDIA's runtime prints the same -------------------------------------------------
def _gpu_available() -> bool:
    try:
        from ptxc.device import available
        return available()
    except Exception:  # noqa: BLE001
        return False


def build_host_programs(out_dir: Path) -> None:
    """nvcc's executables of testsuite/host/*.cu for sm_90 (host code linked with NVIDIA's
    libcudart) into out_dir: `python tests/test_host_runtime.py DIR` on a machine with
    nvcc, for a GPU machine without it (PTXC_HOST_EXES=DIR)."""
    env = dict(os.environ, PATH=f"{oracle.wheel_bin_dir()}{os.pathsep}{os.environ.get('PATH', '')}")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in PROGRAMS:
        subprocess.run([str(oracle.find("nvcc")), "-arch=sm_90", "-o", str(out_dir / Path(name).stem),
                        str(HOST / name)], check=True, env=env)


@pytest.mark.device
@pytest.mark.parametrize("name", PROGRAMS)
def test_host_program_on_the_gpu_prints_what_ptxc_run_prints(name, tmp_path, capsys):
    """nvcc builds the whole program (host code linked with NVIDIA's libcudart); run on
    the GPU, it must print what `ptxc run -arch=sm_90` prints (the programs print no
    timing and only the compute capability's facts).  The executables come from
    $PTXC_HOST_EXES if set (see build_host_programs), else nvcc builds them here."""
    if not _gpu_available():
        pytest.skip("no CUDA GPU")
    prebuilt = os.environ.get("PTXC_HOST_EXES")
    if prebuilt:
        exe = Path(prebuilt) / Path(name).stem
    elif oracle.available("nvcc"):
        build_host_programs(tmp_path)
        exe = tmp_path / Path(name).stem
    else:
        pytest.fail("neither nvcc nor $PTXC_HOST_EXES: nothing builds the real program")
    real = subprocess.run([str(exe), *run_args(name)], capture_output=True, text=True, timeout=120)
    status, out, err = ptxc_run(name, capsys, "-arch=sm_90")
    assert (status, out) == (real.returncode, real.stdout), err



if __name__ == "__main__":
    import sys
    build_host_programs(Path(sys.argv[1]))
