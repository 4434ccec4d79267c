"""Lowering: PTX IR -> SASS IR, one pass per module, run in order by ptxc.lower.pipeline."""
