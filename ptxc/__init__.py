"""ptxc: CUDA C -> PTX -> SASS -> cubin, each stage small enough to read."""

__version__ = "0.1.0"
