"""The cubin stage: write kernels' SASS into a CUDA ELF file and read one back.

    write_cubin([KernelImage(...)], arch="sm_89") -> bytes
    read_cubin(data, filename) -> Cubin  (raises CubinError)

Layout and every value are documented in docs/cubin.md.
"""
__all__ = ["Cubin", "CubinError", "KernelImage", "read_cubin", "write_cubin"]

# Loaded on first use: writing a cubin (`ptxc x.ptx`) needs no reader.
_HOMES = {"Cubin": "reader", "CubinError": "reader", "read_cubin": "reader",
          "KernelImage": "writer", "write_cubin": "writer"}


def __getattr__(name: str):
    if name in _HOMES:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
