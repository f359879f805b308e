"""cffi bindings of csrc/: one module per kernel family, each with the same
function signatures as the matching ``fastcredit._numba`` module; each
module's ``__all__`` lists its kernels, the same names as its twin's.

Arguments arrive validated (see fastcredit._validation); these bindings only
convert arrays to pointers and check the C return code.
"""
from .._cffi import ffi, lib

_CTYPES = {"float64": "double[]", "float32": "float[]", "int64": "int64_t[]",
           "uint64": "uint64_t[]", "int32": "int32_t[]", "uint8": "uint8_t[]",
           "bool": "_Bool[]"}


def ptr(arr):
    """A typed pointer into a C-contiguous numpy array (no copy)."""
    return ffi.from_buffer(_CTYPES[arr.dtype.name], arr)


def suffix(arr) -> str:
    """The C function suffix for a float array's dtype."""
    return "_f32" if arr.dtype.name == "float32" else "_f64"


def check(rc: int, func: str) -> None:
    """Turn a C error code into an exception. Validation in Python makes this
    unreachable in normal use; it guards the boundary all the same."""
    if rc != lib.FC_OK:
        raise ValueError(f"{func} rejected its arguments (code {rc})")
