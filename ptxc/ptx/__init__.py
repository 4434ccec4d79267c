"""PTX: the IR both the CUDA frontend and the PTX parser produce, its parser and printer."""
