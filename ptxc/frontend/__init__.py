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
from .preprocess import preprocess

__all__ = ["compile_cuda", "parse_cuda", "ast"]
RECURSION_LIMIT = 60_000       # Python frames; NESTING_LIMIT (sema) is what it allows


def _defines(arch: str) -> dict[str, str]:
    digits = "".join(ch for ch in arch if ch.isdigit()) or "89"
    return {"__CUDACC__": "1", "__NVCC__": "1", "__CUDA_ARCH__": f"{int(digits) * 10}",
            "__CUDACC_VER_MAJOR__": "13", "__CUDACC_VER_MINOR__": "5"}


def parse_cuda(source: str, filename: str, arch: str = "sm_89"):
    """Preprocess, parse and type-check: the typed AST and the analyzer (its symbols)."""
    from .parser import parse
    from .sema import analyze

    text, pp = preprocess(source, filename, _defines(arch))
    if pp.diagnostics:
        raise CompileError(pp.diagnostics, source)
    program = parse(text, filename, source)
    add_prelude(program, text)
    analyzer = analyze(program, filename, source)
    program.pragmas = pp.pragmas
    return program, analyzer


def compile_cuda(source: str, filename: str, arch: str = "sm_89", ptx_version: str = "9.5"):
    """CUDA C source -> (ptxc.ptx.ir.Module, typed AST of the whole program)."""
    from .codegen import generate

    # The frontend allocates many small objects and frees none until it returns: the
    # cyclic garbage collector would only rescan them (it costs half the parse time).
    enabled = gc.isenabled()
    gc.disable()
    # sema and codegen recurse over the AST, a few frames per level: nvcc takes
    # expressions 3,000 deep, Python's default limit stopped at about 495
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        program, analyzer = parse_cuda(source, filename, arch)
        module = generate(analyzer, filename, arch, ptx_version, source, program.pragmas)
    finally:
        sys.setrecursionlimit(limit)
        if enabled:
            gc.enable()
    return module, program
