"""Subsets of the players 0..n-1 in lexicographic (``itertools.combinations``)
order, the order of fastcredit.interactions' results and of shapiq's: all
subsets of one size, and the position of given subsets. Unchecked: callers
validate n and the subsets."""
from __future__ import annotations

import functools
import math

import numpy as np

from ._validation import frozen


def binomials(n: int, k: int) -> np.ndarray:
    """C(a, b) for a in 0..n, b in 0..k, as int64 (0 when b > a)."""
    return np.array([[math.comb(a, b) for b in range(k + 1)] for a in range(n + 1)],
                    dtype=np.int64)


def combination_rank(players: np.ndarray, n: int, binom: np.ndarray) -> np.ndarray:
    r"""Position of each sorted subset (..., s) among the subsets of size s of
    0..n-1 in ``itertools.combinations`` (lexicographic) order:

    .. math:: \mathrm{rank}(c) = \binom{n}{s} - 1 - \sum_{j=0}^{s-1} \binom{n-1-c_j}{s-j}

    (the subsets after c in that order are counted by their first element
    that exceeds c's)."""
    s = players.shape[-1]
    total = binom[n, s] - 1
    if s == 0:
        return np.full(players.shape[:-1], total, dtype=np.int64)
    return total - binom[n - 1 - players, s - np.arange(s)].sum(axis=-1)


def combinations(n: int, s: int) -> np.ndarray:
    """All subsets of size s of 0..n-1, (C(n, s), s) int64, in
    ``itertools.combinations`` order (each row sorted): each subset of size
    t - 1 extended by every player after its last, size by size."""
    rows = np.zeros((1, 0), dtype=np.int64)
    for t in range(s):
        last = rows[:, -1] if t else np.full(len(rows), -1)
        extensions = n - 1 - last - (s - 1 - t)        # leave room for the rest
        keep = extensions > 0
        rows, last, extensions = rows[keep], last[keep], extensions[keep]
        start = np.repeat(np.cumsum(extensions) - extensions, extensions)
        nxt = np.repeat(last + 1, extensions) + np.arange(int(extensions.sum())) - start
        rows = np.column_stack([np.repeat(rows, extensions, axis=0), nxt])
    return rows


@functools.lru_cache(maxsize=256)
def subset_masks(n: int, s: int) -> np.ndarray:
    """uint64 masks of the subsets of size s of 0..n-1 (n <= 64), in
    ``itertools.combinations`` order, read-only: cached, as the approximators'
    designs lay them out on every call (a per-row cost in fastcredit.shap)."""
    players = combinations(n, s).astype(np.uint64)
    return frozen(np.bitwise_or.reduce(np.left_shift(np.uint64(1), players), axis=1,
                                       initial=np.uint64(0)))
