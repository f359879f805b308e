"""Numba drivers that evaluate users' ``@njit`` value functions.

Not cached: each user function is a distinct argument type, compiled once per
process."""
import numpy as np
from numba import njit


@njit(nogil=True)
def fill_table(fn, out, start, stop):
    """out[mask] = fn(uint64(mask)) for mask in [start, stop)."""
    for mask in range(start, stop):
        out[mask] = fn(np.uint64(mask))
