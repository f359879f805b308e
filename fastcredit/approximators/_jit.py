"""Numba loops that evaluate users' @njit games on a batch of masks (not
cached: each user function is its own argument type, compiled once per
process)."""
import numpy as np
from numba import njit

from .._numba.rng import key as rng_key


@njit(nogil=True)
def fill(fn, masks, out):
    """out[j] = fn(masks[j])."""
    for j in range(masks.shape[0]):
        out[j] = fn(masks[j])


@njit(nogil=True)
def fill_keyed(fn, masks, eval_key, first, out):
    """out[j] = fn(masks[j], key), key the draw key of evaluation first + j."""
    for j in range(masks.shape[0]):
        out[j] = fn(masks[j], rng_key(eval_key, first + np.uint64(j)))
