"""Argument checks shared by every public entry point.

Every structural problem raises ValueError (bad value, shape or range) or
TypeError (bad type or dtype) whose message names the argument, before any
compiled kernel is entered: the kernels trust what reaches them.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

from ._constants import MAX_TABLE_PLAYERS


def check_int(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """An integer (not bool) within [lo, hi]."""
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None
    value = int(value)
    if lo is not None and value < lo:
        raise ValueError(f"{name} must be >= {lo}, got {value}")
    if hi is not None and value > hi:
        raise ValueError(f"{name} must be <= {hi}, got {value}")
    return value


def check_float(value, name: str, lo: float | None = None, hi: float | None = None,
                finite: bool = True) -> float:
    """A real scalar within [lo, hi]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if finite and not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if lo is not None and value < lo:
        raise ValueError(f"{name} must be >= {lo}, got {value}")
    if hi is not None and value > hi:
        raise ValueError(f"{name} must be <= {hi}, got {value}")
    return value


def check_bool(value, name: str) -> bool:
    """A bool (Python or NumPy), not a number standing for one."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def check_choice(value, name: str, choices) -> str:
    """One of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def check_open_unit(value, name: str) -> float:
    """A real strictly between 0 and 1 (a confidence level, an alpha)."""
    value = check_float(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return value


def _real_dtype(arr: np.ndarray, name: str, dtypes) -> np.dtype:
    """The dtype ``arr`` will be used as: float64/float32 (those allowed) as
    they are, integers and bools as float64; others rejected."""
    kind = arr.dtype.kind
    if kind in "biu":
        return np.dtype(np.float64)
    if kind != "f" or arr.dtype not in dtypes:
        allowed = "/".join(np.dtype(d).name for d in dtypes)
        raise TypeError(f"{name} must be a real {allowed} array, got dtype {arr.dtype}")
    return arr.dtype


def real_array(x, name: str, *, dtypes=(np.float64, np.float32)) -> np.ndarray:
    """``x`` as a C-contiguous float array of its own shape (a scalar stays
    0-d). float64/float32 pass through (a non-contiguous one is copied);
    integer and bool arrays become float64; complex, object, string and
    other dtypes are rejected."""
    arr = np.asarray(x)
    return np.asarray(arr, dtype=_real_dtype(arr, name, dtypes), order="C")


def float64_array(x, name: str) -> np.ndarray:
    """:func:`real_array` converted to float64 (no copy when it already is)."""
    return real_array(x, name).astype(np.float64, copy=False)


def int_array(x, name: str, dtype=np.int64) -> np.ndarray:
    """``x`` as a C-contiguous integer array of ``dtype`` (None: keep an
    int32/int64 dtype, widen others to int64). Bools, floats and other
    dtypes are rejected, except an empty float array (``np.asarray([])``);
    values that do not fit ``dtype`` are refused, never wrapped."""
    arr = np.asarray(x)
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    if dtype is None:
        dtype = arr.dtype if arr.dtype in (np.int32, np.int64) else np.int64
    dtype = np.dtype(dtype)
    if arr.size and arr.dtype != dtype:
        info = np.iinfo(dtype)
        lo, hi = arr.min(), arr.max()
        if lo < info.min or hi > info.max:
            bad = lo if lo < info.min else hi
            raise ValueError(f"{name} values must fit in {dtype.name}, got {bad}")
    return np.asarray(arr, dtype=dtype, order="C")


def coalition_table(v, name: str = "v", *, max_m: int = MAX_TABLE_PLAYERS):
    """Validate coalition tables ``(..., 2**m)``.

    Returns ``(flat, m, lead)``: a C-contiguous float32/float64 array of shape
    ``(B, 2**m)``, the number of players, and the leading shape. The shape is
    checked before anything is copied.
    """
    arr = np.asarray(v)
    dtype = _real_dtype(arr, name, (np.float64, np.float32))
    if arr.ndim == 0:
        raise ValueError(f"{name} must have a last axis of length 2**m, got a scalar")
    n = arr.shape[-1]
    if n < 2 or n & (n - 1):
        raise ValueError(f"{name} must have a last axis of length 2**m with m >= 1, "
                         f"got length {n}")
    m = n.bit_length() - 1
    if m > max_m:
        raise ValueError(f"{name} has m = {m} players (last axis 2**{m}); at most "
                         f"{max_m} are supported")
    lead = arr.shape[:-1]
    return np.ascontiguousarray(arr, dtype=dtype).reshape(-1, n), m, lead


def output(out, shape: tuple, name: str = "out", dtype=np.float64) -> np.ndarray:
    """``out`` checked to be a writeable C-contiguous array of ``shape`` and
    ``dtype``, or a new empty one when ``out`` is None."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"{name} must have dtype {np.dtype(dtype).name}, got {out.dtype}")
    if out.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {out.shape}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"{name} must be a writeable C-contiguous array")
    return out


def csr_offsets(offsets, n_rows: int, n_values: int, name: str = "offsets",
                row_name: str = "row", *, row_label=None, values: str = "values") -> np.ndarray:
    """Validate CSR offsets: int array of length n_rows + 1, starting at 0,
    non-decreasing, ending at n_values. Errors name the first bad row, as
    ``row_label(r)`` when given (e.g. "request 3 (action 1)"), else
    "<row_name> r"; ``values`` names what the offsets count."""
    arr = int_array(offsets, name)
    if arr.ndim != 1 or arr.shape[0] != n_rows + 1:
        raise ValueError(f"{name} must have shape ({n_rows + 1},), got {arr.shape}")
    if arr[0] != 0:
        raise ValueError(f"{name}[0] must be 0, got {arr[0]}")
    steps = np.diff(arr)
    bad = np.flatnonzero(steps < 0)
    if bad.size:
        r = int(bad[0])
        label = row_label(r) if row_label is not None else f"{row_name} {r}"
        raise ValueError(f"{name} must be non-decreasing: {label} has "
                         f"{name}[{r}] = {arr[r]} > {name}[{r + 1}] = {arr[r + 1]}")
    if arr[-1] != n_values:
        raise ValueError(f"{name}[-1] must equal the number of {values} ({n_values}), "
                         f"got {arr[-1]}")
    return arr


def seed(value, name: str = "seed") -> int:
    """A seed: an integer in [0, 2**64)."""
    return check_int(value, name, lo=0, hi=2**64 - 1)
