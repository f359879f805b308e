"""cffi bindings of csrc/: one module per kernel family, each with the same
function signatures as the matching ``fastcredit._numba`` module; each
module's ``__all__`` lists its kernels, the same names as its twin's.

Arguments arrive validated (see fastcredit._validation); these bindings only
convert arrays to pointers and check the C return code, saying on a refusal
which argument the C function refused.
"""
import numpy as np

from .._cffi import ffi, lib

# keyed by dtype, not its name: ``dtype.name`` costs ~3 us a call, most of a
# pointer's cost, and a small kernel call takes a dozen pointers
_CTYPES = {np.dtype(name): ctype for name, ctype in {
    "float64": "double[]", "float32": "float[]", "int64": "int64_t[]",
    "uint64": "uint64_t[]", "int32": "int32_t[]", "uint8": "uint8_t[]",
    "bool": "_Bool[]"}.items()}
_FLOAT32 = np.dtype(np.float32)


def ptr(arr):
    """A typed pointer into a C-contiguous numpy array (no copy)."""
    return ffi.from_buffer(_CTYPES[arr.dtype], arr)


def suffix(arr) -> str:
    """The C function suffix for a float array's dtype."""
    return "_f32" if arr.dtype == _FLOAT32 else "_f64"


def check(rc: int, func: str, refused=None) -> None:
    """Turn a C return code (csrc/fastcredit.h) into an exception.

    FC_EINVAL raises ValueError, FC_ENOMEM MemoryError, any other non-zero
    code RuntimeError. The codes do not say which argument was refused, so a
    binding passes ``refused``: a function that re-checks, on this error path
    only, the C function's own conditions and returns the first one its
    arguments break, naming the argument (None when it finds none).
    Validation in Python makes all of this unreachable in normal use; it
    guards the boundary all the same."""
    if rc == lib.FC_OK:
        return
    if rc == lib.FC_EINVAL:
        what = refused() if refused is not None else None
        raise ValueError(f"{func} rejected its arguments (FC_EINVAL): " +
                         (what or "an argument is out of range or inconsistent"))
    if rc == lib.FC_ENOMEM:
        raise MemoryError(f"{func} could not allocate its workspace (FC_ENOMEM)")
    raise RuntimeError(f"{func} returned {rc}, which is not a return code of fastcredit.h")


def offsets_refused(offsets, first: int, last: int, n_values: int | None, name: str = "offsets",
                    values: str = "values") -> str | None:
    """What the C kernels' CSR check (csr_offsets_ok in csrc/internal.h, then
    an end within the ``n_values`` values when given) refuses in
    ``offsets[first..last]``, naming the entry; None when nothing."""
    part = offsets[first:last + 1]
    if part[0] < 0:
        return f"{name}[{first}] = {part[0]} is negative"
    down = np.flatnonzero(part[1:] < part[:-1])
    if down.size:
        j = first + int(down[0])
        return f"{name} must be non-decreasing: {name}[{j}] = {offsets[j]} > " \
               f"{name}[{j + 1}] = {offsets[j + 1]}"
    if n_values is not None and part[-1] > n_values:
        return f"{name}[{last}] = {part[-1]} is past the end of the {n_values} {values}"
    return None
