"""ptxc: CUDA C -> PTX -> SASS -> cubin, each stage small enough to read.

    import ptxc
    result = ptxc.compile("vadd.cu", arch="sm_89")      # .cubin, .ptx, .sass, .kernels
    run = ptxc.emulate("vadd.cu")                       # the file's LAUNCH lines

`compile`, `emulate` and their result types live in ptxc/api.py and load on first
use: `import ptxc` itself imports nothing (the command's start-up depends on it).
"""

__version__ = "0.1.0"

_API = ("compile", "emulate", "CompileResult", "KernelResources")


def __getattr__(name: str):
    if name in _API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'ptxc' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_API))
