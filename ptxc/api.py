"""The Python API: compile and emulate without a process per kernel.

    import ptxc
    result = ptxc.compile("testsuite/vadd.cu", arch="sm_89")     # a path, or source text
    result.cubin, result.ptx, result.sass                          # bytes, str, str
    result.kernels[0].registers, .shared, .local                   # resource usage
    run = ptxc.emulate("testsuite/vadd.cu")                        # the file's LAUNCH lines
    run.buffers["c"]                                               # NumPy array after the launches

`ptxc.compile` does what `ptxc FILE --emit=EMIT` does, with the same stages
(ptxc/driver.py), so its bytes are the command's bytes.  Errors in the input raise
ptxc.diagnostics.CompileError (its `.diagnostics`, `.format()` gives the command's
text) unless `check=False`, which returns a result with `ok == False` and the
diagnostics instead.  `import ptxc` loads none of this; the first call does, and the
emulator (numba) loads only with `ptxc.emulate`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import CompileError, Diagnostic

EMITS = ("ptx", "sass", "cubin")


@dataclass
class KernelResources:
    """What a compiled kernel uses, as the cubin's .nv.info says it."""
    name: str
    registers: int          # EIATTR_REGCOUNT
    shared: int             # static shared memory, bytes
    local: int              # local memory (stack frame: the depot and spills) per thread, bytes


@dataclass
class CompileResult:
    arch: str
    emit: str
    ptx: str | None = None          # the frontend's PTX (a .cu input); a .ptx input's own text
    cubin: bytes | None = None      # emit="cubin"
    kernels: list = field(default_factory=list)      # KernelResources, source order (cubin, sass)
    diagnostics: list = field(default_factory=list)  # Diagnostic; errors only when ok is False
    error: CompileError | None = None                # with check=False, what would have been raised
    _lowered: list | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def sass(self) -> str | None:
        """The kernels as `cuobjdump -sass` prints them (made on first use)."""
        if self._lowered is None:
            return None
        from .driver import sass_listing
        return sass_listing(self._lowered, self.arch)


def _source(source_or_path, filename: str | None) -> tuple[str, str]:
    """(text, filename): a Path, or a str naming an existing .cu/.ptx file, is read;
    any other str is source text (PTX if it has a .version directive, else CUDA)."""
    if isinstance(source_or_path, Path) or (isinstance(source_or_path, str) and "\n" not in source_or_path
                                            and source_or_path.endswith((".cu", ".ptx"))):
        path = Path(source_or_path)
        try:
            return path.read_text(), filename or str(path)
        except FileNotFoundError:
            raise CompileError(Diagnostic(f"'{path}': no such file")) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CompileError(Diagnostic(f"'{path}': cannot read: {exc}")) from None
    text = str(source_or_path)
    if filename is None:
        is_ptx = any(line.lstrip().startswith(".version") for line in text.splitlines())
        filename = "<string>.ptx" if is_ptx else "<string>.cu"
    return text, filename


def compile(source_or_path, arch: str = "sm_89", emit: str = "cubin", *, filename: str | None = None,
            ptx_version: str = "9.5", include_dirs=(), defines: dict | None = None, undefines=(),
            check: bool = True) -> CompileResult:
    """Compile CUDA C (.cu) or PTX (.ptx) for `arch`; see the module docstring.
    `filename` names the source in diagnostics and picks the language ('.cu'/'.ptx')."""
    from .driver import ARCHS, SASS_ARCHS, cubin_bytes, load_module, lower_module, reparse
    result = CompileResult(arch, emit)
    try:
        if emit not in EMITS:
            raise CompileError(Diagnostic(f"emit='{emit}': expected one of {', '.join(EMITS)}"))
        if arch not in ARCHS:
            raise CompileError(Diagnostic(f"unknown arch '{arch}' (supported: {', '.join(ARCHS)})"))
        if emit != "ptx" and arch not in SASS_ARCHS:
            raise CompileError(Diagnostic(f"arch={arch}: SASS and cubins are not supported yet for this target"))
        text, name = _source(source_or_path, filename)
        if not name.endswith((".cu", ".ptx")):
            raise CompileError(Diagnostic(f"'{name}': expected a .cu or .ptx file"))
        is_cuda = name.endswith(".cu")
        options = None
        if is_cuda:
            from .frontend.preprocess import Options as PreprocessOptions
            options = PreprocessOptions(list(include_dirs), dict(defines or {}), list(undefines))
        if emit == "ptx" and not is_cuda:
            raise CompileError(Diagnostic("emit='ptx' needs a .cu input"))
        module = load_module(name, text, arch, ptx_version, options)
        if is_cuda:
            from .ptx.printer import print_module
            module.target, module.version = arch, ptx_version
            result.ptx = print_module(module)
        else:
            result.ptx = text
        if emit == "ptx":
            return result
        lowered, lowered_path, lowered_text = module, name, text
        if is_cuda:
            lowered, lowered_path, lowered_text = reparse(module, name)
        from .lower.pipeline import Options
        try:
            kernels = lower_module(lowered, Options(arch=arch, filename=lowered_path))
        except CompileError as exc:
            if exc.source is None:
                exc.source = lowered_text
            raise
        result._lowered = kernels
        result.kernels = [_resources(k) for k in kernels]
        if emit == "cubin":
            result.cubin = cubin_bytes(kernels, arch)
        return result
    except CompileError as exc:
        if check:
            raise
        result.error, result.diagnostics = exc, list(exc.diagnostics)
        return result


def _resources(kernel) -> KernelResources:
    from .lower.kernel_info import info_of
    info = info_of(kernel.func)
    return KernelResources(kernel.name, kernel.func.num_regs, info.shared_size, info.frame_size)


def emulate(source_or_path, launches=None, arch: str = "sm_89", *, cubin: bytes | None = None,
            filename: str | None = None, check_hazards: bool = False, **compile_options):
    """Run LAUNCH lines on the emulator and return its ptxc.launch.SpecRun
    (`.buffers`: name -> NumPy array after the launches; `.results`: per launch).

    `launches`: LAUNCH specs (a str of lines, or a list of them, with or without the
    `// LAUNCH:` prefix); None runs the file's own LAUNCH lines.  `cubin`: run these
    bytes (nvcc's, say) instead of compiling the source with ptxc.compile."""
    from .launch.spec import parse_file      # the emulator (numba) loads only here
    from .launch import run_launches
    text, name = _source(source_or_path, filename)
    if cubin is None:
        cubin = compile(text, arch, "cubin", filename=name, **compile_options).cubin
    spec_text = text
    if launches is not None:
        lines = launches.splitlines() if isinstance(launches, str) else list(launches)
        spec_text = "\n".join(line if "LAUNCH:" in line else f"// LAUNCH: {line}" for line in lines if line.strip())
    return run_launches(cubin, parse_file(spec_text, name), text, name, check_hazards=check_hazards)
