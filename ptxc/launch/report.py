"""Reports of two runs of a kernel file's launches (ptxc's code and nvcc's, on the emulator
or the GPU): each buffer that differs, element by element, and the kernel times side by side."""
from __future__ import annotations

import math

import numpy as np

from .compare import differences


def format_value(value) -> str:
    """An element as the report shows it: floats with their bits, integers in decimal."""
    if isinstance(value, np.floating):
        bits = value.view(np.uint32 if value.dtype == np.float32 else np.uint64)
        return f"{float(value)!r} ({int(bits):#x})"
    return str(int(value))


def report_group(what: str, keys: list, a, b, limit: int) -> bool:
    """Print a group of launches' buffers, ptxc's run `a` against nvcc's `b` (SpecRun or
    ptxc.device.GPURun: .buffers and .ulp); True if they agree."""
    bad_any = False
    for key in keys:
        diffs = differences(key, a.buffers[key], b.buffers[key], a.ulp.get(key, 0))
        if diffs:
            bad_any = True
            print(f"{what}: buffer '{key}': {len(diffs)} of {len(a.buffers[key])} elements differ"
                  + (f" (beyond {a.ulp[key]} ulp)" if a.ulp.get(key) else ""))
            for index, x, y in diffs[:limit]:
                print(f"    [{index}] ptxc {format_value(x)}  nvcc {format_value(y)}")
    if not bad_any:
        print(f"{what}: ok ({len(keys)} buffers agree)")
    return not bad_any


def launch_groups(path: str, launches: list, missing: dict, isolate: bool) -> list:
    """The launches run together, by index: all of them in one group (data flows from one to
    the next), or each alone, from fresh buffers, with --isolate or when ptxc lacks a kernel."""
    for name, why in missing.items():
        print(f"{path}: ptxc cannot compile kernel '{name}' yet: {why}")
    if missing and not isolate:
        print(f"{path}: running each launch alone (fresh buffers), since some kernels are missing")
    isolate = isolate or bool(missing)
    return [[i] for i in range(len(launches))] if isolate else [list(range(len(launches)))]


def time_line(launch, ptxc_ms: float | None, nvcc_ms: float | None) -> str:
    """One launch's kernel times as `ptxc check --device` prints them."""
    def us(ms):
        return "-" if ms is None else f"{ms * 1000:.1f} us"
    ratio = f"  ptxc/nvcc x{ptxc_ms / nvcc_ms:.2f}" if ptxc_ms and nvcc_ms else ""
    return f"    time {launch.kernel} (line {launch.line}): ptxc {us(ptxc_ms)}  nvcc {us(nvcc_ms)}{ratio}"


def geometric_mean(values: list) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None
