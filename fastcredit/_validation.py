"""Argument checks shared by every public entry point.

Every structural problem raises ValueError (bad value, shape or range) or
TypeError (bad type or dtype) whose message names the argument, before any
compiled kernel is entered: the kernels trust what reaches them.
"""
from __future__ import annotations

import math
import numbers
import operator
import os

import numpy as np

from ._constants import MAX_TABLE_PLAYERS

_FLOAT64 = np.dtype(np.float64)
_TABLE_DTYPES = (_FLOAT64, np.dtype(np.float32))   # what coalition tables may hold


def check_int(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """An integer (not bool) within [lo, hi]."""
    if type(value) is not int:   # a plain int (never a bool) skips ~150 ns of conversion
        try:
            if isinstance(value, (bool, np.bool_)):
                raise TypeError
            value = int(operator.index(value))
        except TypeError:
            raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None
    if lo is not None and value < lo:
        raise ValueError(f"{name} must be >= {lo}, got {value}")
    if hi is not None and value > hi:
        raise ValueError(f"{name} must be <= {hi}, got {value}")
    return value


def check_float(value, name: str, lo: float | None = None, hi: float | None = None,
                finite: bool = True) -> float:
    """A real scalar within [lo, hi]."""
    if type(value) is not float:   # a float skips ~0.2 us of abstract-class checks
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
        value = float(value)
    if finite and not math.isfinite(value):   # ~10x np.isfinite's speed on a float
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


def as_array(x, name: str) -> np.ndarray:
    """``np.asarray(x)``, with a ragged nested sequence refused by name."""
    try:
        return np.asarray(x)
    except ValueError:
        raise ValueError(f"{name} must be a rectangular array, got a ragged sequence") \
            from None


def as_sequence(x, name: str, what: str = "values") -> list:
    """The items of a sequence ``x`` (tuple, list, 1-D array, ...) as a list;
    a string, None, a scalar or another non-iterable is refused by name."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of {what}, not a single string")
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise ValueError(f"{name} must be a sequence of {what}, got an array of shape "
                             f"{x.shape}")
        return x.tolist()
    try:
        return list(x)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of {what}, got "
                        f"{type(x).__name__}") from None


def check_path(value, name: str):
    """A file system path (str or os.PathLike), returned as given."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), got "
                        f"{type(value).__name__}")
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
    arr = as_array(x, name)
    return np.asarray(arr, dtype=_real_dtype(arr, name, dtypes), order="C")


def float64_array(x, name: str) -> np.ndarray:
    """:func:`real_array` converted to float64 (no copy when it already is)."""
    if type(x) is np.ndarray and x.dtype == _FLOAT64 and x.flags.c_contiguous:
        return x   # what the conversions below return for it, ~1 us sooner
    return real_array(x, name).astype(np.float64, copy=False)


def int_array(x, name: str, dtype=np.int64) -> np.ndarray:
    """``x`` as a C-contiguous integer array of ``dtype`` (None: keep an
    int32/int64 dtype, widen others to int64). Bools, floats and other
    dtypes are rejected, except an empty float array (``np.asarray([])``);
    values that do not fit ``dtype`` are refused, never wrapped."""
    arr = as_array(x, name)
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
    arr = v if v.__class__ is np.ndarray else as_array(v, name)
    dtype = arr.dtype
    if dtype not in _TABLE_DTYPES:   # only then the slower checks (~0.5 us)
        dtype = _real_dtype(arr, name, _TABLE_DTYPES)
    shape = arr.shape
    if not shape:
        raise ValueError(f"{name} must have a last axis of length 2**m, got a scalar")
    n = shape[-1]
    if n < 2 or n & (n - 1):
        raise ValueError(f"{name} must have a last axis of length 2**m with m >= 1, "
                         f"got length {n}")
    m = n.bit_length() - 1
    if m > max_m:
        raise ValueError(f"{name} has m = {m} players (last axis 2**{m}); at most "
                         f"{max_m} are supported")
    if arr.dtype != dtype or not arr.flags.c_contiguous:
        check_memory(arr.size * dtype.itemsize, f"{name} (a contiguous {dtype.name} copy of "
                                                f"its {arr.size:,} entries)")
        arr = np.ascontiguousarray(arr, dtype=dtype)
    # one game: the same (1, 2**m) view by indexing, half a reshape's cost
    return arr[None] if len(shape) == 1 else arr.reshape(-1, n), m, shape[:-1]


def _available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux MemAvailable),
    or None where the system does not say."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_memory(nbytes: int, what) -> None:
    """Refuse, before allocating, an array of ``nbytes`` that cannot fit in
    the memory available now; ``what`` names the argument and the array (or
    is a function giving that text, when making it costs). Arrays under 1 MiB
    are not checked: reading the system's figure costs more than most small
    calls (NumPy's MemoryError still stands)."""
    if nbytes < 1 << 20:
        return
    available = _available_memory()
    if available is not None and nbytes > available:
        what = what() if callable(what) else what
        raise ValueError(f"{what} needs {nbytes / 2**30:.1f} GiB, more than the "
                         f"{available / 2**30:.1f} GiB of memory available")


def read_only(arr: np.ndarray) -> np.ndarray:
    """A read-only view of ``arr``: what a frozen result holds, and what the
    Numba kernels receive, so that an input's writeable flag never makes a
    new compiled signature (each one costs a compile)."""
    view = arr.view()
    view.flags.writeable = False
    return view


# Candidate solutions np.shares_memory may try before giving up: enough for
# any strided input against a contiguous out in practice (a few thousand at
# most), and a bound on the time of a pathological stride pattern, which is
# refused instead (TooHardError).
_OVERLAP_WORK = 1 << 16


def _memory_of(obj):
    """The memory of a caller's object as an array, without copying: the
    array itself, or a view through the array interface or the buffer
    protocol; None for an object that has no memory a caller could write
    (a list, a scalar)."""
    if obj is None or isinstance(obj, np.ndarray):
        return obj
    try:
        if hasattr(obj, "__array_interface__") or hasattr(obj, "__array_struct__"):
            return np.asarray(obj)
        return np.asarray(memoryview(obj))
    except (TypeError, ValueError):
        return None


def _check_disjoint(out, name: str, arg: str, arr) -> None:
    """Refuse ``out`` when it shares memory with ``arr``. Disjoint extents
    (the usual case) cost one bounds test; only overlapping extents, which
    a strided input interleaved with ``out`` can have without sharing a
    byte, are solved exactly, and a pattern too costly to solve is
    refused."""
    if not np.may_share_memory(out, arr):
        return
    try:
        shared = np.shares_memory(out, arr, max_work=_OVERLAP_WORK)
    except np.exceptions.TooHardError:
        raise ValueError(f"{name} must not overlap the input {arg} (their memory "
                         f"interleaves too intricately to prove them disjoint)") from None
    if shared:
        raise ValueError(f"{name} must not overlap the input {arg}")


def owned(arr: np.ndarray, given, what: str) -> np.ndarray:
    """``arr``, the array validation made of the caller's ``given``, as one
    the caller cannot reach: ``arr`` itself when it provably shares no
    memory with ``given`` (built from a list or tuple, or converted to a new
    array), else a copy, refused (naming ``what``) when it cannot fit in
    memory. Objects that are not arrays (buffers, pandas, torch, ...) may
    hand NumPy their own memory, so they are asked for it again and
    compared."""
    if isinstance(given, (list, tuple)):
        return arr
    if not np.may_share_memory(arr, given if isinstance(given, np.ndarray)
                               else np.asarray(given)):
        return arr
    check_memory(arr.nbytes, what)
    return arr.copy()


def frozen(arr: np.ndarray) -> np.ndarray:
    """A read-only view of ``arr`` whose memory is made read-only too (the
    array that owns it), so that the view cannot be made writeable again, as
    NumPy allows on a view of writeable memory. ``arr`` must be memory no one
    else writes (:func:`owned`, or an array the library just made)."""
    owner = arr
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    owner.flags.writeable = False
    return read_only(arr)


def output(out, shape: tuple, name: str = "out", dtype=np.float64, *, inputs=()) -> np.ndarray:
    """``out`` checked to be a writeable C-contiguous array of ``shape`` and
    ``dtype`` sharing no memory with the inputs, or a new empty one when
    ``out`` is None (refused before allocating when it cannot fit in memory).

    ``inputs`` maps each input's argument name to the array the kernel
    reads, or to a tuple of objects: the caller's own object first, then
    the array(s) it was converted to. The caller's object is checked too
    (when it is an array or exposes a buffer): a converted copy can be
    disjoint from ``out`` while the caller's buffer, which the contract says
    is never modified, is not."""
    if out is None:
        dtype = np.dtype(dtype)
        check_memory(math.prod(shape) * dtype.itemsize,   # dtype.name took ~4 us a call
                     lambda: f"the result ({dtype.name}, shape {tuple(shape)})")
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"{name} must have dtype {np.dtype(dtype).name}, got {out.dtype}")
    if out.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {out.shape}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"{name} must be a writeable C-contiguous array")
    for arg, objects in dict(inputs).items():
        for obj in objects if isinstance(objects, tuple) else (objects,):
            arr = _memory_of(obj)
            if arr is not None:
                _check_disjoint(out, name, arg, arr)
    return out


def csr_offsets(offsets, n_rows: int, n_values: int, name: str = "offsets",
                row_name: str = "row", *, row_label=None, values: str = "values",
                nonempty: str | None = None) -> np.ndarray:
    """Validate CSR offsets: int array of length n_rows + 1, starting at 0,
    non-decreasing, ending at n_values. Errors name the first bad row, as
    ``row_label(r)`` when given (e.g. "request 3 (action 1)"), else
    "<row_name> r"; ``values`` names what the offsets count. With
    ``nonempty`` (the values' argument name, for the error) every row must
    hold at least one value; the rows' lengths are taken once for both
    checks."""
    arr = int_array(offsets, name)
    if arr.ndim != 1 or arr.shape[0] != n_rows + 1:
        raise ValueError(f"{name} must have shape ({n_rows + 1},), got {arr.shape}")
    if arr[0] != 0:
        raise ValueError(f"{name}[0] must be 0, got {arr[0]}")
    # one comparison of neighbours into bools, not np.diff's (n,) int64
    # (half the time, a quarter of the memory); the row is found on refusal
    later, earlier = arr[1:], arr[:-1]
    bad = (np.less_equal if nonempty is not None else np.less)(later, earlier).any()
    steps = np.diff(arr) if bad else None
    if bad and steps.min() < 0:
        r = int(np.flatnonzero(steps < 0)[0])
        label = row_label(r) if row_label is not None else f"{row_name} {r}"
        raise ValueError(f"{name} must be non-decreasing: {label} has "
                         f"{name}[{r}] = {arr[r]} > {name}[{r + 1}] = {arr[r + 1]}")
    if arr[-1] != n_values:
        raise ValueError(f"{name}[-1] must equal the number of {values} ({n_values}), "
                         f"got {arr[-1]}")
    if bad:
        raise ValueError(f"{nonempty}: {row_name} {int(np.flatnonzero(steps == 0)[0])} has no "
                         f"values (each needs >= 1)")
    return arr


# --- ragged (CSR) data -------------------------------------------------------

def row_offsets(offsets, n_values: int, name: str = "offsets",
                row_name: str = "row", nonempty: str | None = None) -> np.ndarray:
    """CSR offsets of at least one row over ``n_values`` values, the number
    of rows read from their length (``len(offsets) - 1``); otherwise checked
    as :func:`csr_offsets`."""
    arr = as_array(offsets, name)
    if arr.ndim != 1 or arr.shape[0] < 2:
        raise ValueError(f"{name} must be one-dimensional with at least 2 entries (one "
                         f"{row_name}), got shape {arr.shape}")
    return csr_offsets(arr, arr.shape[0] - 1, n_values, name, row_name, nonempty=nonempty)


def dense_offsets(n_rows: int, row_len: int) -> np.ndarray:
    """CSR offsets (n_rows + 1,) int64 of ``n_rows`` rows of ``row_len``
    values each: a dense (n_rows, row_len) array seen as ragged rows."""
    return np.arange(n_rows + 1, dtype=np.int64) * row_len


def ragged_rows(values, offsets, name: str, row_name: str = "row", *, nonempty=False):
    """Rows of values as ``(flat float64 values, int64 CSR offsets)``.

    ``values`` is 2-D (n_rows, k) when ``offsets`` is None (k values per
    row), else flat with CSR ``offsets`` (n_rows + 1,), named
    ``<name>_offsets`` in errors. ``nonempty``: every row must hold a
    value (the error names ``name`` and the first empty row)."""
    arr = float64_array(values, name)
    if offsets is None:
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_{row_name}s, k) when no offsets are "
                             f"given, got shape {arr.shape}")
        if nonempty and arr.shape[1] == 0 and arr.shape[0]:
            raise ValueError(f"{name}: {row_name} 0 has no values (each needs >= 1)")
        return arr.reshape(-1), dense_offsets(*arr.shape)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional with offsets, got shape {arr.shape}")
    return arr, row_offsets(offsets, arr.shape[0], f"{name}_offsets", row_name,
                            nonempty=name if nonempty else None)
