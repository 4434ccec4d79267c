"""Find and run NVIDIA's tools, the oracle every output of ptxc is judged against.

They come from the pinned wheels of the `oracle` extra (site-packages/nvidia/cu13/bin)
or, for users with a CUDA toolkit, from PATH.  Nothing in the compile path needs
them; tests and scripts/ do.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

TOOLS = ("nvcc", "ptxas", "cuobjdump", "nvdisasm")
PINNED_VERSION = "13.5"


class OracleMissing(RuntimeError):
    """NVIDIA's tools are not installed: `pip install 'ptxc[oracle]'`."""


@lru_cache(maxsize=None)
def wheel_bin_dir() -> Path | None:
    """site-packages/nvidia/cu13/bin from the nvidia-cuda-nvcc wheel, if installed."""
    try:
        import nvidia  # namespace package from the NVIDIA wheels
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", []):
        candidate = Path(root) / "cu13" / "bin"
        if (candidate / "ptxas").exists():
            return candidate
    return None


@lru_cache(maxsize=None)
def find(tool: str) -> Path | None:
    """Path of `tool` (nvcc, ptxas, cuobjdump, nvdisasm): the wheel first, then PATH."""
    bin_dir = wheel_bin_dir()
    if bin_dir is not None and (bin_dir / tool).exists():
        return bin_dir / tool
    found = shutil.which(tool)
    return Path(found) if found else None


def available(*tools: str) -> bool:
    return all(find(t) is not None for t in (tools or TOOLS))


def require(tool: str) -> Path:
    path = find(tool)
    if path is None:
        raise OracleMissing(
            f"{tool} not found: install NVIDIA's tools with `pip install 'ptxc[oracle]'` "
            f"(nvidia-cuda-nvcc and friends =={PINNED_VERSION}.x) or put a CUDA toolkit on PATH")
    return path


def _env() -> dict:
    env = dict(os.environ)
    bin_dir = wheel_bin_dir()
    if bin_dir is not None:  # nvcc looks for cicc/ptxas beside itself and on PATH
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def run(tool: str, *args: str, check: bool = True, cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run an oracle tool and return the completed process (text mode)."""
    cmd = [str(require(tool)), *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=cwd)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}{proc.stdout}")
    return proc


@lru_cache(maxsize=None)
def cccl_include_dir() -> Path | None:
    """CCCL's headers (`nv/target`, cuda/std), which cuda_fp16.h, cuda_bf16.h,
    cooperative_groups.h and mma.h need: the nvidia-cuda-cccl wheel's include/cccl
    (or a toolkit's beside nvcc)."""
    nvcc = find("nvcc")
    candidates = [nvcc.parent.parent / "include" / "cccl"] if nvcc else []
    try:
        import nvidia
        candidates += [Path(root) / "cu13" / "include" / "cccl" for root in getattr(nvidia, "__path__", [])]
    except ImportError:
        pass
    for candidate in candidates:
        if (candidate / "nv" / "target").exists():
            return candidate
    return None


@lru_cache(maxsize=None)
def cuda_include_dir() -> Path | None:
    """The CUDA headers beside nvcc (driver_types.h, cuda_runtime_api.h): the facts of the
    runtime API (enum values, struct fields) that scripts/learn_cuda_runtime.py reads."""
    nvcc = find("nvcc")
    if nvcc is not None and (nvcc.parent.parent / "include" / "driver_types.h").exists():
        return nvcc.parent.parent / "include"
    return None


@lru_cache(maxsize=None)
def cudart():
    """NVIDIA's CUDA runtime library (libcudart.so of the nvidia-cuda-runtime wheel, or a
    toolkit's beside nvcc) loaded with ctypes, or None.  Its cudaGetErrorName and
    cudaGetErrorString need no GPU: they are the truth for the runtime's error strings."""
    import ctypes
    nvcc = find("nvcc")
    dirs = [nvcc.parent.parent / "lib", nvcc.parent.parent / "lib64"] if nvcc else []
    for d in dirs:
        for lib in sorted(d.glob("libcudart.so*")) if d.exists() else []:
            try:
                handle = ctypes.CDLL(str(lib))
            except OSError:
                continue
            handle.cudaGetErrorName.restype = ctypes.c_char_p
            handle.cudaGetErrorString.restype = ctypes.c_char_p
            return handle
    return None


def nvcc_include_flags() -> list[str]:
    cccl = cccl_include_dir()
    return ["-isystem", str(cccl)] if cccl else []


def nvcc_cubin(cu_path: str | Path, out_path: str | Path, arch: str = "sm_89", flags: list[str] = ()) -> Path:
    """`flags`: more nvcc options (the -I/-D/-U a test or `ptxc check` was given)."""
    run("nvcc", f"-arch={arch}", *nvcc_include_flags(), *flags, "-cubin", "-o", str(out_path), str(cu_path))
    return Path(out_path)


def nvcc_ptx(cu_path: str | Path, out_path: str | Path, arch: str = "sm_89", flags: list[str] = ()) -> Path:
    run("nvcc", f"-arch={arch}", *nvcc_include_flags(), *flags, "-ptx", "-o", str(out_path), str(cu_path))
    return Path(out_path)


def ptxas(ptx_path: str | Path, out_path: str | Path, arch: str = "sm_89") -> Path:
    run("ptxas", f"-arch={arch}", "-o", str(out_path), str(ptx_path))
    return Path(out_path)


def cuobjdump_sass(cubin_path: str | Path) -> str:
    return run("cuobjdump", "-sass", str(cubin_path)).stdout


def cuobjdump_elf(cubin_path: str | Path) -> str:
    return run("cuobjdump", "-elf", str(cubin_path)).stdout


def nvdisasm_raw(raw_path: str | Path, arch: str = "SM89", *extra: str) -> str:
    """Disassemble raw 16-byte instruction words (no ELF) with `nvdisasm -b SM89`."""
    return run("nvdisasm", "-b", arch, *extra, str(raw_path)).stdout
