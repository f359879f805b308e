"""Numba kernels of the approximator family: the same algorithm, in the same
order, as csrc/approximators.c (see csrc/approximators.h for the contract).

Signatures:
    draw_svarm(seed, game, first, m, sizes, cdf, masks)      masks (n,) uint64
    draw_stratified(seed, game, first, m, masks, slots)      masks (n, 2), slots (n,)
    draw_owen(seed, game, first, m, anchors, masks, slots)   masks (n, 2), slots (n,)
    fold_pairs(values, slots, count, first, s1, s2)          values (n, 2) float64
    fold_svarm(masks, values, m, centre, count, first, s1, s2)
"""
import numpy as np
from numba import njit

from .rng import below, uniform
from .rng import key as rng_key

__all__ = ["draw_svarm", "draw_stratified", "draw_owen", "fold_pairs", "fold_svarm"]

jit = njit(cache=True, nogil=True)
_ONE = np.uint64(1)


@jit
def _pick(state, p, n, k):
    """(state, mask) of a uniformly random k of p[0..n) (partial Fisher-Yates)."""
    mask = np.uint64(0)
    for j in range(k):
        state, r = below(state, n - j)
        t = p[j]
        p[j] = p[j + r]
        p[j + r] = t
        mask |= _ONE << np.uint64(p[j])
    return state, mask


@jit
def draw_svarm(seed, game, first, m, sizes, cdf, masks):
    game_key = rng_key(seed, game)
    p = np.empty(m, dtype=np.int64)
    nz = sizes.shape[0]
    for u in range(masks.shape[0]):
        state = rng_key(game_key, first + u)
        state, x = uniform(state)
        size = sizes[nz - 1]
        for k in range(nz):
            if x < cdf[k]:
                size = sizes[k]
                break
        for i in range(m):
            p[i] = i
        state, masks[u] = _pick(state, p, m, size)


@jit
def draw_stratified(seed, game, first, m, masks, slots):
    game_key = rng_key(seed, game)
    p = np.empty(m, dtype=np.int64)
    for u in range(slots.shape[0]):
        s = first + u
        i = s % m
        size = (s // m) % m
        state = rng_key(game_key, s)
        q = 0
        for j in range(m):
            if j != i:
                p[q] = j
                q += 1
        state, mask = _pick(state, p, m - 1, size)
        masks[u, 0] = mask
        masks[u, 1] = mask | (_ONE << np.uint64(i))
        slots[u] = i * m + size


@jit
def draw_owen(seed, game, first, m, anchors, masks, slots):
    game_key = rng_key(seed, game)
    na = anchors.shape[0]
    for u in range(slots.shape[0]):
        s = first + u
        i = s % m
        a = (s // m) % na
        q = anchors[a]
        state = rng_key(game_key, s)
        mask = np.uint64(0)
        for j in range(m):
            if j != i:
                state, x = uniform(state)
                if x < q:
                    mask |= _ONE << np.uint64(j)
        masks[u, 0] = mask
        masks[u, 1] = mask | (_ONE << np.uint64(i))
        slots[u] = i * na + a


# The moments are updated inline (a helper called per stratum ran 17x slower).

@jit
def fold_pairs(values, slots, count, first, s1, s2):
    for k in range(slots.shape[0]):
        s = slots[k]
        x = values[k, 1] - values[k, 0]
        c = count[s]
        if c == 0:
            first[s] = x
        else:
            d = x - first[s]
            s1[s] += d
            s2[s] += d * d
        count[s] = c + 1


@jit
def fold_svarm(masks, values, m, centre, count, first, s1, s2):
    for k in range(masks.shape[0]):
        mask = masks[k]
        size = 0
        y = mask
        while y != 0:
            y &= y - _ONE
            size += 1
        x = values[k] - centre
        for i in range(m):
            s = (i * (m + 1) + size) * 2 + np.int64((mask >> np.uint64(i)) & _ONE)
            c = count[s]
            if c == 0:
                first[s] = x
            else:
                d = x - first[s]
                s1[s] += d
                s2[s] += d * d
            count[s] = c + 1
