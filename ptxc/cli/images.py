"""The code a run or check command runs: ptxc's cubin (each kernel ptxc can lower), nvcc's
cubin or PTX (through the oracle), and the images the real GPU loads."""
from __future__ import annotations

import tempfile
from pathlib import Path

from ..diagnostics import CompileError, Diagnostic
from ..sass.target import TARGETS, with_backend


EMULATED_ARCHS = with_backend()     # targets ptxc compiles for, whose cubins the emulator runs


def nvcc_cubin(path: str, arch: str = "sm_89", flags: list[str] = ()) -> bytes:
    from .. import oracle
    try:
        with tempfile.TemporaryDirectory(prefix="ptxc-") as tmp:
            out = Path(tmp) / "x.cubin"
            oracle.nvcc_cubin(path, out, arch, flags)
            return out.read_bytes()
    except oracle.OracleMissing as exc:
        raise CompileError(Diagnostic(f"--with=nvcc: {exc}")) from None
    except RuntimeError as exc:
        raise CompileError(Diagnostic(f"nvcc failed on '{path}':\n{exc}")) from None


def ptxc_cubin(module, path: str, arch: str = "sm_89") -> tuple[bytes | None, dict]:
    """ptxc's cubin of every kernel it can lower, and {kernel: why not} for the others."""
    from ..driver import cubin_bytes, lower_module, reparse
    from ..lower.pipeline import Options
    if path.endswith(".cu"):            # the backend reads the frontend's PTX as text (see reparse)
        module, path, _text = reparse(module, path)
    errors, order = {}, [f.name for f in module.kernels()]
    kernels = lower_module(module, Options(arch=arch, filename=path), errors)
    failed = {name: "; ".join(d.message for d in exc.diagnostics) if isinstance(exc, CompileError)
              else f"{type(exc).__name__}: {exc}"     # a lowering gap, reported per kernel
              for name, exc in sorted(errors.items(), key=lambda e: order.index(e[0]))}
    return (cubin_bytes(kernels, arch) if kernels else None), failed


def nvcc_ptx(path: str, arch: str, ptx_version: str) -> str:
    """nvcc's PTX for `arch`, its `.version` lowered to `ptx_version` (for a driver's JIT)."""
    import re
    from .. import oracle
    try:
        with tempfile.TemporaryDirectory(prefix="ptxc-") as tmp:
            out = Path(tmp) / "x.ptx"
            oracle.nvcc_ptx(path, out, arch)
            text = out.read_text()
    except oracle.OracleMissing as exc:
        raise CompileError(Diagnostic(f"--with=nvcc: {exc}")) from None
    except RuntimeError as exc:
        raise CompileError(Diagnostic(f"nvcc failed on '{path}':\n{exc}")) from None
    return re.sub(r"^\.version\s+\S+", f".version {ptx_version}", text, count=1, flags=re.M)


NO_SASS_HINT = "--ptx runs ptxc's PTX through the driver's JIT, --with=nvcc runs nvcc's cubin"


def device_image(who: str, module, path: str, arch: str, ptx: bool, ptx_version: str,
                 nvcc_cubin_file: str | None = None):
    """(ptxc.device.Image, {kernel: why ptxc has no code for it}) of ptxc's (`who` =
    'ptxc') or nvcc's code for the GPU: a cubin for `arch`, or with `ptx` the PTX text
    (`.version` ptx_version); for nvcc, `nvcc_cubin_file` instead of running nvcc.  The
    image is None when ptxc lowers none of the kernels."""
    from ..cubin.reader import CubinError
    from ..device import cubin_image, ptx_image
    stem = Path(path).stem
    if who == "nvcc":
        if nvcc_cubin_file:
            try:
                data = Path(nvcc_cubin_file).read_bytes()
                return cubin_image(data, Path(nvcc_cubin_file).name), {}
            except OSError as exc:
                raise CompileError(Diagnostic(f"--nvcc-cubin: cannot read '{nvcc_cubin_file}': {exc.strerror}")) from None
            except CubinError as exc:
                raise CompileError(Diagnostic(f"--nvcc-cubin: '{nvcc_cubin_file}': {exc}")) from None
        if ptx:
            return ptx_image(nvcc_ptx(path, arch, ptx_version), f"{stem}.nvcc.ptx"), {}
        return cubin_image(nvcc_cubin(path, arch), f"{stem}.nvcc.cubin"), {}
    if ptx:
        from ..ptx.printer import print_module
        module.target, module.version = arch, ptx_version
        return ptx_image(print_module(module), f"{stem}.ptx"), {}
    from ..driver import SASS_ARCHS
    if arch not in SASS_ARCHS:
        raise CompileError(Diagnostic(f"-arch={arch}: ptxc cannot write {arch} SASS yet (only "
                                      f"{', '.join(SASS_ARCHS)}); {NO_SASS_HINT}"))
    cubin, failed = ptxc_cubin(module, path, arch)
    return (cubin_image(cubin, f"{stem}.cubin") if cubin is not None else None), failed


def open_gpu():
    """The first CUDA GPU (ptxc.device.GPU); no GPU is a CompileError that says so."""
    from ..device import GPU, DeviceError
    try:
        return GPU()
    except DeviceError as err:
        raise CompileError(Diagnostic(str(err))) from None
