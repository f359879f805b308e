"""Numba-only code: drivers that run users' ``@njit`` functions
(:mod:`.games`), and generators without a C twin (:mod:`.synthetic`).

A user's jitted function can only be called from jitted code, so these have
no C backend and are not kernel families (see fastcredit._backend). Modules
here may import ``fastcredit._numba``, never the reverse.
"""
