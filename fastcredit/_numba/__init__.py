"""Numba backend: one module per kernel family, each function a plain
``@njit(cache=True, nogil=True)`` kernel with the same signature as the
matching ``fastcredit._c`` binding, callable from users' own jitted code.
Each module's ``__all__`` lists its kernels, the same names as its twin's.
Code with no C twin lives in ``fastcredit._jit``.

Kernels trust their arguments (validated by the public functions): arrays are
C-contiguous, float tables are float32 or float64, outputs are float64.
"""
from .._warm import ensure_numba_cache

ensure_numba_cache()
