"""Numba kernels of the interactions family; the same algorithm, in the same
summation order, as csrc/interactions.c (the zeta transform is the one of
fastcredit._numba.tables, twin of the C one).

Signature (x: (B, 2**m) float32/float64; up, down: (m + 1,) float64, down
empty for no second sum; masks: (P,) uint64; work: (2**m,) float64 scratch;
out: (B * P,) float64, game by game, as in C):
    graded_sums(x, up, down, masks, work, out)
        out[g * P + p] = sum_{W superset of masks[p]} up[|W|] x[g, W]
                  + sum_{T disjoint from masks[p]} down[|T|] x[g, T]
    (one mask: a direct sum; single-player masks: one pass; else one zeta
    transform per game, as in C)
"""
import numpy as np
from numba import njit

from .tables import _log2, _popcount, _subset_transform

__all__ = ["graded_sums"]

jit = njit(cache=True, nogil=True)


@jit
def _direct(x, g, m, up, down, s, pc8):
    """The one-mask sum, in index order, by blocks of 256 entries."""
    bb = min(m, 8)
    bs = 1 << bb
    acc = 0.0
    has_down = down.shape[0] > 0
    for base in range(0, 1 << m, bs):
        h = _popcount(base)
        for j in range(bs):
            u = np.uint64(base + j)
            c = h + pc8[j]
            if (u & s) == s:
                acc += up[c] * np.float64(x[g, base + j])
            if has_down and (u & s) == np.uint64(0):
                acc += down[c] * np.float64(x[g, base + j])
    return acc


@jit
def _singles(x, g, m, up, down, pc8, acc):
    """All masks single players: one pass (singles_* in csrc/interactions.c)."""
    bb = min(m, 8)
    bs = 1 << bb
    has_down = down.shape[0] > 0
    rest = 0.0
    for b in range(m):
        acc[b] = 0.0
    low = np.empty(8)
    for base in range(0, 1 << m, bs):
        h = _popcount(base)
        low[:] = 0.0
        block = 0.0
        for j in range(bs):
            c = h + pc8[j]
            xv = np.float64(x[g, base + j])
            z = up[c] * xv
            if has_down:
                d = down[c] * xv
                z -= d
                rest += d
            block += z
            for b in range(bb):
                if j >> b & 1:
                    low[b] += z
        for b in range(bb):
            acc[b] += low[b]
        for b in range(bb, m):
            if base >> b & 1:
                acc[b] += block
    for b in range(m):
        acc[b] += rest


@jit
def _bit_of(mask):
    b = 0
    while not (mask >> np.uint64(b)) & np.uint64(1):
        b += 1
    return b


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
    singles = True
    for p in range(n_masks):
        singles = singles and _popcount(masks[p]) == 1
    for g in range(x.shape[0]):
        first = g * n_masks
        if n_masks == 1:
            out[first] = _direct(x, g, m, up, down, masks[0], pc8)
            continue
        if n_masks == 0:
            continue
        if singles:
            _singles(x, g, m, up, down, pc8, work)
            for p in range(n_masks):
                out[first + p] = work[_bit_of(masks[p])]
            continue
        _weigh(x, g, m, up, down, pc8, work)
        _subset_transform(work, m, 1.0)
        for p in range(n_masks):
            out[first + p] = work[(n - 1) ^ np.int64(masks[p])]
