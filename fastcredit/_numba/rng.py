"""Counter-based random numbers, bit for bit those of csrc/rng.h.

A stream is keyed by (seed, item): ``state = key(seed, item)``; each call of
``next_u64(state)`` returns ``(new_state, bits)``. Usable from users' own
jitted code.
"""
import numpy as np
from numba import njit

from .._constants import RNG_GOLDEN

GOLDEN = np.uint64(RNG_GOLDEN)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)

jit = njit(cache=True, nogil=True)


@jit
def mix64(z):
    z = np.uint64(z)
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@jit
def key(seed, item):
    """The stream state for (seed, item)."""
    return mix64(np.uint64(seed) ^ mix64(np.uint64(item) + GOLDEN))


@jit
def next_u64(state):
    """(new state, 64 random bits)."""
    state = np.uint64(state) + GOLDEN
    return state, mix64(state)


@jit
def uniform(state):
    """(new state, uniform double in [0, 1) with 53 random bits)."""
    state, x = next_u64(state)
    return state, np.float64(x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@jit
def below(state, n):
    """(new state, integer in [0, n)) for 1 <= n <= 2**32."""
    state, x = next_u64(state)
    return state, np.int64(((x >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@jit
def fill(seed, item, out):
    """out[c] = draw c of the stream (seed, item), like fc_rng_fill."""
    state = key(seed, item)
    for c in range(out.shape[0]):
        state, out[c] = next_u64(state)
