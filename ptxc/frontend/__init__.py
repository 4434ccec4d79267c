"""The CUDA C frontend: source -> preprocess -> parse -> sema -> codegen -> PTX IR.

    from ptxc.frontend import compile_cuda
    module, program = compile_cuda(source, "vadd.cu")

`module` is a ptxc.ptx.ir.Module with one .entry per __global__ function (__device__
functions are inlined into them); `program` is the typed AST of the whole file, host
main() included, for `ptxc run`.  Errors raise ptxc.diagnostics.CompileError carrying
every diagnostic found and the source text.  Nothing here imports numba.
"""
from __future__ import annotations

import gc
import sys

from ..diagnostics import CompileError
from . import ast
from .prelude import add_prelude
from .preprocess import Options, Preprocessor, preprocess

__all__ = ["compile_cuda", "parse_cuda", "ast", "Options", "predefined_macros"]
RECURSION_LIMIT = 60_000       # Python frames; NESTING_LIMIT (sema) is what it allows

# What nvcc 13.5 defines for its device pass (`nvcc -dryrun` shows them on the
# preprocessor's command line; tests/test_headers.py checks the list against it).
NVCC_VERSION = {"__CUDACC_VER_MAJOR__": "13", "__CUDACC_VER_MINOR__": "5", "__CUDACC_VER_BUILD__": "37",
                "__CUDA_API_VER_MAJOR__": "13", "__CUDA_API_VER_MINOR__": "5"}


def predefined_macros(arch: str) -> dict[str, str]:
    """nvcc's predefined macros for the device pass of `arch` (sm_89: __CUDA_ARCH__ 890)."""
    digits = "".join(ch for ch in arch if ch.isdigit()) or "89"
    cuda_arch = f"{int(digits) * 10}"
    return {"__CUDA_ARCH__": cuda_arch, "__CUDA_ARCH_LIST__": cuda_arch, "CUDA_DOUBLE_MATH_FUNCTIONS": "1",
            "__CUDACC__": "1", "__NVCC__": "1", **NVCC_VERSION, "__NVCC_DIAG_PRAGMA_SUPPORT__": "1",
            "__CUDACC_DEVICE_ATOMIC_BUILTINS__": "1"}


def _relocated(err: CompileError, pp: Preprocessor, filename: str) -> CompileError:
    """Diagnostics at positions of the preprocessed text, moved to where the text came
    from (a user header, the inside of a macro expansion), with every file's text."""
    for diag in err.diagnostics:
        loc = diag.loc
        if loc is not None and loc.file == filename:
            loc.file, loc.line, loc.col = pp.locate(loc.line, loc.col)
    err.sources = {**pp.sources, **getattr(err, "sources", {})}
    return err


def parse_cuda(source: str, filename: str, arch: str = "sm_89", options: Options | None = None,
               _pp: list | None = None):
    """Preprocess, parse and type-check: the typed AST and the analyzer (its symbols)."""
    from .parser import parse
    from .sema import analyze

    text, pp = preprocess(source, filename, predefined_macros(arch), options)
    if _pp is not None:
        _pp.append(pp)
    if pp.diagnostics:
        raise CompileError(pp.diagnostics, source).with_sources(pp.sources)
    try:
        program = parse(text, filename, source)
        add_prelude(program, text)
        analyzer = analyze(program, filename, source)
    except CompileError as err:
        if pp.identity:
            raise
        raise _relocated(err, pp, filename) from None
    program.pragmas = pp.pragmas
    return program, analyzer


def compile_cuda(source: str, filename: str, arch: str = "sm_89", ptx_version: str = "9.5",
                 options: Options | None = None):
    """CUDA C source -> (ptxc.ptx.ir.Module, typed AST of the whole program).
    `options`: the preprocessor's -I folders, -D and -U macros."""
    from .codegen import generate

    # The frontend allocates many small objects and frees none until it returns: the
    # cyclic garbage collector would only rescan them (it costs half the parse time).
    enabled = gc.isenabled()
    gc.disable()
    # sema and codegen recurse over the AST, a few frames per level: nvcc takes
    # expressions 3,000 deep, Python's default limit stopped at about 495
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    pps: list = []
    try:
        program, analyzer = parse_cuda(source, filename, arch, options, pps)
        module = generate(analyzer, filename, arch, ptx_version, source, program.pragmas)
    except CompileError as err:
        if not pps or pps[0].identity or getattr(err, "sources", None):
            raise
        raise _relocated(err, pps[0], filename) from None
    finally:
        sys.setrecursionlimit(limit)
        if enabled:
            gc.enable()
    return module, program
