"""Input checks of the audit functions that the generic ones in
:mod:`fastcredit._validation` do not cover."""
from __future__ import annotations

import numpy as np

from .._constants import RNG_MAX_RANGE
from .._validation import as_array, float64_array, row_offsets


def float64_vector(x, name: str) -> np.ndarray:
    """:func:`~fastcredit._validation.float64_array` that must be 1-D."""
    arr = float64_array(x, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def real_float64(x, name: str) -> np.ndarray:
    """``x`` of any shape and any real dtype as float64; scalars stay 0-d.

    Counts and outcomes are taken in whatever dtype they were tallied in,
    float16 and longdouble included, which
    :func:`~fastcredit._validation.float64_array` refuses."""
    arr = as_array(x, name)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
    return arr.astype(np.float64)


def check_rng_rows(offsets: np.ndarray, name: str, row_name: str) -> None:
    """Every row of CSR ``offsets`` (checked: non-decreasing) is short enough
    for the kernels' draws of an index within it (``fc_rng_below`` draws
    below 2**32). Rows of at most 2**32 values in all need no pass over them
    (np.diff's pass cost ~40 us warm at 50,000 rows, 3-4 % of a shuffle)."""
    if offsets[-1] - offsets[0] <= RNG_MAX_RANGE:
        return
    long = np.flatnonzero(np.diff(offsets) > RNG_MAX_RANGE)
    if long.size:
        raise ValueError(f"{name}: {row_name} {int(long[0])} has more than 2**32 values")


def trajectories(credit, a_replay, offsets):
    """``(credit, a_replay, offsets)`` checked: two flat float64 arrays of
    the same length over CSR trajectory ``offsets`` (int64)."""
    x = float64_vector(credit, "credit")
    y = float64_vector(a_replay, "a_replay")
    if x.shape != y.shape:
        raise ValueError(f"credit and a_replay must have the same length, got {x.shape[0]} "
                         f"and {y.shape[0]}")
    return x, y, row_offsets(offsets, x.shape[0], "offsets", "trajectory")
