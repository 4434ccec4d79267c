"""The cubin stage: write kernels' SASS into a CUDA ELF file and read one back.

    write_cubin([KernelImage(...)], arch="sm_89") -> bytes
    read_cubin(data, filename) -> Cubin  (raises CubinError)

Layout and every value are documented in docs/cubin.md.
"""
from .reader import Cubin, CubinError, read_cubin
from .writer import KernelImage, write_cubin

__all__ = ["Cubin", "CubinError", "KernelImage", "read_cubin", "write_cubin"]
