"""Numba kernels of the interactions family; the same algorithm, in the same
summation order, as csrc/interactions.c (the zeta transform is the one of
fastcredit._numba.tables, twin of the C one).

Signature (x: (B, 2**m) float32/float64; up, down: (m + 1,) float64, down
empty for no second sum; masks: (P,) uint64; work: (2**m,) float64 scratch;
out: (B, P) float64):
    graded_sums(x, up, down, masks, work, out)
        out[g, p] = sum_{W superset of masks[p]} up[|W|] x[g, W]
                  + sum_{T disjoint from masks[p]} down[|T|] x[g, T]
"""
import numpy as np
from numba import njit

from .tables import _log2, _popcount, _subset_transform

__all__ = ["graded_sums"]

jit = njit(cache=True, nogil=True)


@jit
def _direct(x, g, m, up, down, s):
    """The one-mask sum, in index order."""
    acc = 0.0
    has_down = down.shape[0] > 0
    for w in range(1 << m):
        u = np.uint64(w)
        c = _popcount(u)
        if (u & s) == s:
            acc += up[c] * np.float64(x[g, w])
        if has_down and (u & s) == np.uint64(0):
            acc += down[c] * np.float64(x[g, w])
    return acc


@jit
def _weigh(x, g, m, up, down, pc8, work):
    """work[q] = up[m - |q|] x(N - q) (+ down[|q|] x(q)), by blocks of 256."""
    bb = min(m, 8)
    bs = 1 << bb
    n = 1 << m
    full = n - 1
    has_down = down.shape[0] > 0
    for base in range(0, n, bs):
        h = _popcount(base)
        rev = full ^ base
        if has_down:
            for j in range(bs):
                c = h + pc8[j]
                work[base + j] = (up[m - c] * np.float64(x[g, rev - j])
                                  + down[c] * np.float64(x[g, base + j]))
        else:
            for j in range(bs):
                work[base + j] = up[m - h - pc8[j]] * np.float64(x[g, rev - j])


@jit
def graded_sums(x, up, down, masks, work, out):
    m = _log2(x.shape[1])
    n = 1 << m
    n_masks = masks.shape[0]
    pc8 = np.empty(256, dtype=np.int64)
    for j in range(256):
        pc8[j] = _popcount(j)
    for g in range(x.shape[0]):
        if n_masks == 1:
            out[g, 0] = _direct(x, g, m, up, down, masks[0])
            continue
        if n_masks == 0:
            continue
        _weigh(x, g, m, up, down, pc8, work)
        _subset_transform(work, m, 1.0)
        for p in range(n_masks):
            out[g, p] = work[(n - 1) ^ np.int64(masks[p])]
