"""Two runs' buffers compared element by element: integers exactly, floats within a number
of units in the last place (two NaNs agree; +0 and -0 are the same value)."""
from __future__ import annotations

import numpy as np


def ordered_bits(x: np.ndarray) -> np.ndarray:
    """Float bit patterns as unsigned integers in the order of the values they stand for
    (+0 and -0 the same), so that the distance between two is their ulp distance."""
    width = x.dtype.itemsize * 8
    utype = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    u = x.view(utype).astype(np.uint64)
    top = np.uint64(1 << (width - 1))
    magnitude = u & (top - np.uint64(1))
    return np.where(u & top, top - magnitude, top + magnitude)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| in units in the last place, exactly (unsigned integer arithmetic: float64
    would round a distance between 64-bit patterns to a multiple of 2^11)."""
    oa, ob = ordered_bits(a), ordered_bits(b)
    return np.where(oa >= ob, oa - ob, ob - oa)


def differences(name: str, a: np.ndarray, b: np.ndarray, ulp=0) -> list:
    """[(index, a value, b value)] where the buffers differ beyond `ulp` (a number, or one
    per element)."""
    if a.dtype.kind == "f":
        allowed = np.asarray(ulp).astype(np.uint64)
        both_nan = np.isnan(a) & np.isnan(b)
        bad = (ulp_distance(a, b) > allowed) & ~both_nan
    else:
        bad = a != b
    return [(int(i), a[i], b[i]) for i in np.nonzero(bad)[0]]
