"""The preprocessor's headers and macros: user headers (#include "x.h", -I), -D/-U,
`#pragma once`, __FILE__/__LINE__, diagnostics placed in headers and inside macro
expansions, nvcc's predefined macros, and the system headers' constants (their values
and types against nvcc's)."""
from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.diagnostics import CompileError
from ptxc.frontend import compile_cuda, predefined_macros
from ptxc.frontend.header_macros import HEADER_MACROS
from ptxc.frontend.preprocess import Options, preprocess
from ptxc.ptx.printer import print_module

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import learn_header_macros  # noqa: E402


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def ptx_of(path: Path, options: Options | None = None, arch: str = "sm_89") -> str:
    module, _ = compile_cuda(path.read_text(), str(path), arch=arch, options=options)
    return print_module(module)


def compile_error(path: Path, options: Options | None = None) -> CompileError:
    with pytest.raises(CompileError) as info:
        compile_cuda(path.read_text(), str(path), options=options)
    return info.value


HEADERS = {
    "inc/util.h": "#pragma once\n#include \"sub/more.h\"\n#define TWICE(x) ((x) + (x))\n"
                  "__device__ inline float scale(float v) { return TWICE(v) * FACTOR; }\n",
    "inc/sub/more.h": "#ifndef MORE_H\n#define MORE_H\n#define FACTOR 3.0f\nint more_count;\n#endif\n",
    "inc/bad.h": "#pragma once\n\n__device__ float g(float x) { return x + oops; }\n",
}


def test_user_headers_relative_include_dirs_once_and_guards(tmp_path):
    write(tmp_path, HEADERS)
    main = tmp_path / "k.cu"
    # util.h twice (#pragma once), more.h again through -I (its guard): one definition each
    main.write_text('#include "inc/util.h"\n#include "inc/util.h"\n#include <more.h>\n'
                    "__global__ void k(float* o) {\n  o[0] = scale(o[1]);\n}\n")
    err = compile_error(main)
    assert "unsupported #include 'more.h'" in err.format() and err.diagnostics[0].loc.line == 3
    ptx = ptx_of(main, Options(include_dirs=[str(tmp_path / "inc" / "sub")]))
    assert "mul.f32" in ptx and "0f40400000" in ptx    # (v + v) * 3.0f


def test_error_in_a_header_names_the_header_line_and_caret(tmp_path):
    write(tmp_path, HEADERS)
    main = tmp_path / "k.cu"
    main.write_text('#include "inc/bad.h"\n__global__ void k(float* o) { o[0] = g(o[1]) + nope; }\n')
    err = compile_error(main)
    text = err.format()
    first, second = err.diagnostics
    assert (Path(first.loc.file).name, first.loc.line, first.loc.col) == ("bad.h", 3, 42)
    assert (Path(second.loc.file).name, second.loc.line) == ("k.cu", 2)
    assert "__device__ float g(float x) { return x + oops; }\n" + " " * 41 + "^" in text
    assert "o[0] = g(o[1]) + nope;" in text


def test_caret_inside_macro_expansions(tmp_path):
    main = tmp_path / "k.cu"
    main.write_text("#define ADD(a, b) ((a) + (b))\n#define BAD(x) ((x) + undefined_thing)\n"
                    "__global__ void k(float* o) {\n"
                    "  o[0] = ADD(o[1], nope);\n"           # an argument: its own place
                    "  o[2] = BAD(o[3]);\n"                  # the body: the macro's name
                    "  o[4] = ADD(o[5],\n"
                    "             also_nope);\n"             # an argument on the call's next line
                    "}\n")
    err = compile_error(main)
    places = [(d.loc.line, d.loc.col) for d in err.diagnostics]
    assert places == [(4, 20), (5, 10), (7, 14)]
    assert "  o[0] = ADD(o[1], nope);\n                   ^" in err.format()


def test_file_and_line_macros(tmp_path):
    write(tmp_path, {"h.h": "#define HERE __LINE__\n__device__ int header_line() { return __LINE__; }\n"})
    main = tmp_path / "k.cu"
    main.write_text('#include "h.h"\n\n__global__ void k(int* o) {\n  o[0] = __LINE__;\n  o[1] = HERE;\n'
                    "  o[2] = header_line();\n}\n")
    ptx = ptx_of(main)
    stores = re.findall(r"st\.global\.u32\s+\[%rd\d+(?:\+\d+)?\], (\d+);", ptx)
    assert stores == ["4", "5", "2"]
    text, pp = preprocess('const char* f = __FILE__; int l = __LINE__;\n', "dir/x.cu")
    assert text.strip() == 'const char* f = "dir/x.cu"; int l = 1;'


def test_include_cycle_is_an_error_not_a_hang(tmp_path):
    write(tmp_path, {"a.h": '#include "b.h"\n', "b.h": '#include "a.h"\n'})
    main = tmp_path / "k.cu"
    main.write_text('#include "a.h"\n__global__ void k() {}\n')
    assert "nested too deeply" in compile_error(main).format()


def test_define_and_undefine_options(tmp_path):
    main = tmp_path / "k.cu"
    main.write_text("#ifndef N\n#error N is not defined\n#endif\n"
                    "__global__ void k(int* o) {\n  o[0] = N + VAL;\n#ifdef __CUDACC__\n  o[1] = 1;\n#endif\n}\n")
    assert "#error N is not defined" in compile_error(main).format()
    ptx = ptx_of(main, Options(defines={"N": "5", "VAL": "1"}, undefines=["__CUDACC__"]))
    assert re.findall(r"st\.global\.u32\s+\[[^]]+\], (\d+);", ptx) == ["6"]


def test_command_line_takes_include_define_undefine(tmp_path):
    write(tmp_path, HEADERS)
    main = tmp_path / "k.cu"
    main.write_text('#include <util.h>\n__global__ void k(float* o) { o[0] = scale(o[1]) * N; }\n')
    out = tmp_path / "k.ptx"
    cmd = [sys.executable, "-m", "ptxc", str(main), "-ptx", "-o", str(out), "-I", str(tmp_path / "inc"),
           f"-I{tmp_path / 'inc' / 'sub'}", "-DN=2.0f"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run(cmd[:-1] + ["-UN"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1 and "undeclared identifier 'N'" in proc.stderr


def test_cuda_arch_selects_per_target(tmp_path):
    main = tmp_path / "k.cu"
    main.write_text("__global__ void k(int* o) {\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
                    "  o[0] = 9;\n#else\n  o[0] = 8;\n#endif\n  o[1] = __CUDA_ARCH__;\n}\n")
    for arch, want in (("sm_89", ["8", "890"]), ("sm_90", ["9", "900"])):
        assert re.findall(r"st\.global\.u32\s+\[[^]]+\], (\d+);", ptx_of(main, arch=arch)) == want


# ---- against nvcc ----------------------------------------------------------------------

@pytest.mark.oracle
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_predefined_macros_are_nvccs(arch, tmp_path):
    """The -D options nvcc gives its device-side preprocessor are ours, value for value."""
    cu = tmp_path / "e.cu"
    cu.write_text("__global__ void k() {}\n")
    proc = oracle.run("nvcc", f"-arch={arch}", "-ptx", "-dryrun", str(cu), cwd=str(tmp_path))
    command = next(line for line in (proc.stdout + proc.stderr).splitlines()
                   if " -E " in line and "__CUDA_ARCH__" in line)
    theirs = {}
    for name, value in re.findall(r"-D(\w+)(?:=(\S+))?", command):
        theirs[name] = value or "1"
    assert predefined_macros(arch) == theirs


@pytest.mark.oracle
def test_header_macros_are_what_nvcc_gives_now():
    """header_macros.py is what scripts/learn_header_macros.py learns from the pinned nvcc."""
    names = {h: (n.split() if n else learn_header_macros.math_constant_names())
             for h, n in learn_header_macros.HEADERS.items()}
    every = [n for ns in names.values() for n in ns]
    learned = learn_header_macros.learn(every)
    for header, ns in names.items():
        for name in ns:
            assert HEADER_MACROS[header][name] == learn_header_macros.literal(*learned[name]), name


@pytest.mark.oracle
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_header_constants_compile_to_nvccs_bits(arch, tmp_path):
    """Every constant, stored by a ptxc-compiled kernel, has the bits nvcc's probe gave."""
    headers = [h for h in learn_header_macros.HEADERS]
    names = [n for h in headers for n in HEADER_MACROS[h] if n != "NULL"]
    learned = learn_header_macros.learn(names, arch)
    lines = [f"#include <{h}>" for h in headers]
    lines += [f"__device__ {learned[n][0]} v{i};" for i, n in enumerate(names)]
    lines += ["__global__ void probe() {"] + [f"  v{i} = {n};" for i, n in enumerate(names)] + ["}"]
    cu = tmp_path / "probe.cu"
    cu.write_text("\n".join(lines) + "\n")
    ptx = ptx_of(cu, arch=arch)
    regs = dict(re.findall(r"mov\.[bfus]\d+\s+(%\w+), (-?\w+);", ptx))
    stored = {int(i): regs.get(v, v) for i, v in re.findall(r"st\.global\.\w+\s+\[v(\d+)\], (-?[%\w]+);", ptx)}
    for i, name in enumerate(names):
        ctype, bits = learned[name]
        width = 64 if ctype in ("long", "unsigned long", "long long", "unsigned long long", "double") else 32
        text = stored.get(i, "0")
        if text[:2] in ("0f", "0d"):
            got = int(text[2:], 16)
        else:
            got = int(text, 0) & ((1 << width) - 1)
        assert got == bits, (name, text, hex(bits))


@pytest.mark.oracle
def test_oracle_compiles_fp16_and_cooperative_groups(tmp_path):
    """The oracle extra's CCCL headers reach nvcc (issue 15, item 8)."""
    assert oracle.cccl_include_dir() is not None
    cu = tmp_path / "h.cu"
    cu.write_text("#include <cuda_fp16.h>\n#include <cooperative_groups.h>\n"
                  "namespace cg = cooperative_groups;\n"
                  "__global__ void k(__half* a) { cg::thread_block b = cg::this_thread_block();\n"
                  "  a[b.thread_rank()] = __hadd(a[0], a[1]); }\n")
    ptx = oracle.nvcc_ptx(cu, tmp_path / "h.ptx").read_text()
    assert "add.f16" in ptx or "add.rn.f16" in ptx


def test_host_program_with_check_macro_and_header_constants():
    """`ptxc run`: the CHECK macro (__FILE__, __LINE__, cudaGetErrorString, exit) and
    the headers' constants (FLT_MAX, INFINITY) on the host side."""
    src = ROOT / "testsuite" / "headers" / "host_check_macro.cu"
    proc = subprocess.run([sys.executable, "-m", "ptxc", "run", str(src)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "3.40282e+38 1 line 12\n"
