"""Numba kernels of the sampling family: the same algorithm, in the same
order, as csrc/sampling.c.

Signatures:
    permutations(seed, game, first_unit, perms)     perms (n_units, m) int32
    tree_permutations(seed, game, first_unit, children, perms)
        children (m - 1, 2) int64, a validated binary tree; perms (n_units, m) int32
    masked_rows(background, xs, masks, owner, rows)
        background (n_b, m), xs (n_x, m) float64; masks (c,) uint64; owner (c,)
        int64; rows (c n_b, m) float64. Raises ValueError, with nothing
        written, unless every mask is below 2**m and every owner in [0, n_x)
        (as the C twin refuses them).
    background_mean(outputs, weights, means)
        outputs (c, n_b, k) float64; weights (n_b,) float64 or None; means (c, k).
        Raises ValueError unless n_b >= 1 and k >= 1 (as the C twin).
    affordable_pairs(perms, max_evals, pairs, counts, masks)
        perms (n_rows, n_pairs, k) int32, 2 <= k <= 64; max_evals >= 2; pairs,
        counts (n_rows,) int64; masks (n_rows, capacity) uint64, capacity >=
        min(max_evals, 2 + 2 (k - 1) n_pairs). Raises ValueError, nothing
        written, when an order is not a permutation (as the C twin refuses it).
    permutation_shapley(v, seed, first_game, max_walks, budget, antithetic,
                        cache_endpoints, tol, min_samples, values, stderr, stats)
        v (B, 2**m) float32/float64; values, stderr (B, m); stats (B, STATS) int64

The estimate helpers (``_estimate`` and what it calls) are generic over the
game: they read it through ``_evaluate``, which reads tables here and users'
``@njit`` games through the overload fastcredit._jit.games adds to run them.
With fresh keys (stochastic games), after unit u's permutation is shuffled
from its stream, the same stream hands out one fresh key per evaluation, in
walk order (the forward walk, then the reverse one). With common random
numbers (crn) the k-th marginal's two prefixes share one key, so every walk
costs 2m evaluations.

A stochastic game's draws lie in its outcome range ``span`` = [lo, hi]: the
declared bounds (a draw outside them is an error), or else the range of the
draws seen so far, widened by every draw. Its standard errors are
regularised by that range (``_variance``); tables and deterministic games
keep the plain sample variance, as csrc/sampling.c computes it.
"""
import numpy as np
from numba import njit, types
from numba.extending import overload

from .._constants import (AFFORDABLE_DENSE_PLAYERS, STAT_EVALS, STAT_SAMPLES,
                          STAT_TRUNCATED, STAT_WALKS)
from .rng import below, next_u64
from .rng import key as rng_key

__all__ = ["permutations", "permutation_shapley", "tree_permutations", "masked_rows",
           "background_mean", "affordable_pairs"]

jit = njit(cache=True, nogil=True)

_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)

#: Pseudo-samples put at each end of a stochastic game's sample range when
#: its variance is estimated (Agresti-Coull's "add two successes and two
#: failures", for any bounded outcome; see fastcredit.sampling).
PSEUDO_SAMPLES = 2.0
#: What the estimate helpers return: every evaluation was usable, one was
#: not finite, or a stochastic draw fell outside the declared bounds (its
#: coalition in bad[0]).
STATUS_OK = 0
STATUS_NOT_FINITE = 1
STATUS_OUT_OF_BOUNDS = 2


@jit
def _shuffle(state, perm):
    """Fisher-Yates shuffle of perm := 0..m-1 from the stream ``state``;
    returns the advanced state."""
    m = perm.shape[0]
    for i in range(m):
        perm[i] = i
    for i in range(m - 1, 0, -1):
        state, j = below(state, i + 1)
        t = perm[i]
        perm[i] = perm[j]
        perm[j] = t
    return state


@jit
def permutations(seed, game, first_unit, perms):
    """perms[u] = the permutation of unit first_unit + u of ``game``."""
    game_key = rng_key(seed, game)
    for u in range(perms.shape[0]):
        _shuffle(rng_key(game_key, first_unit + u), perms[u])


def _evaluate(game, mask, key):
    """v(mask) of a game in jitted code, resolved by the game's type: a table
    here; fastcredit._jit.games adds users' @njit games."""
    raise NotImplementedError("_evaluate is only callable from jitted code")


@overload(_evaluate, jit_options={"nogil": True})
def _evaluate_table(game, mask, key):
    if isinstance(game, types.Array):
        return lambda game, mask, key: np.float64(game[mask])
    return None


@njit(nogil=True)
def _admit(val, mask, check, fresh_keys, span, declared, bad):
    """The status of one evaluation ``val`` of ``mask``. Checked values must
    be finite; a stochastic draw (``fresh_keys``) must lie in ``span`` when
    the bounds were declared, and otherwise widens ``span``."""
    if not check:
        return STATUS_OK
    if not np.isfinite(val):
        bad[0] = mask
        return STATUS_NOT_FINITE
    if fresh_keys:
        if declared:
            if val < span[0] or val > span[1]:
                bad[0] = mask
                return STATUS_OUT_OF_BOUNDS
        else:
            span[0] = min(span[0], val)
            span[1] = max(span[1], val)
    return STATUS_OK


@njit(nogil=True)
def _value(game, mask, fresh_keys, state, check, span, declared, bad):
    """(state, value, status): one evaluation, drawing a fresh key when fresh_keys."""
    key = np.uint64(0)
    if fresh_keys:
        state, key = next_u64(state)
    val = _evaluate(game, mask, key)
    return state, val, _admit(val, mask, check, fresh_keys, span, declared, bad)


@njit(nogil=True)
def _walk(game, perm, reverse, state, fresh_keys, crn, cache_endpoints,
          v0, vn, x, check, span, declared, bad):
    """Adds one walk's marginals to x; returns (state, evaluations, status)."""
    m = perm.shape[0]
    mask = np.uint64(0)
    evals = 0
    prev = v0
    if not cache_endpoints and not crn:
        state, prev, status = _value(game, mask, fresh_keys, state, check, span, declared,
                                     bad)
        evals += 1
        if status != STATUS_OK:
            return state, evals, status
    for k in range(m):
        p = perm[m - 1 - k] if reverse else perm[k]
        lower = mask
        mask |= _ONE << np.uint64(p)
        if crn:
            state, key = next_u64(state)
            lo = _evaluate(game, lower, key)
            hi = _evaluate(game, mask, key)
            evals += 2
            status = _admit(lo, lower, check, fresh_keys, span, declared, bad)
            if status == STATUS_OK:
                status = _admit(hi, mask, check, fresh_keys, span, declared, bad)
            if status != STATUS_OK:
                return state, evals, status
            x[p] += hi - lo
            continue
        if cache_endpoints and k == m - 1:
            cur = vn
        else:
            state, cur, status = _value(game, mask, fresh_keys, state, check, span,
                                        declared, bad)
            evals += 1
            if status != STATUS_OK:
                return state, evals, status
        x[p] += cur - prev
        prev = cur
    return state, evals, STATUS_OK


@jit
def _variance(s1, s2, first, nn, width):
    """The variance estimate of one player's nn samples from their sums
    shifted by the first sample (s1, s2; see csrc/sampling.h): the sample
    variance SS / (n - 1) when width < 0 (tables, deterministic games), else,
    for samples in [-width, width], the variance of the samples with
    PSEUDO_SAMPLES c more at each end of that range:
    (SS + c ((width - mean)^2 + (width + mean)^2)) / (n - 1 + 2 c)."""
    ss = s2 - s1 * s1 / nn
    if width < 0.0:
        return ss / (nn - 1.0)
    mean = first + s1 / nn
    ends = (width - mean) * (width - mean) + (width + mean) * (width + mean)
    return (max(ss, 0.0) + PSEUDO_SAMPLES * ends) / (nn - 1.0 + 2.0 * PSEUDO_SAMPLES)


@jit
def _sample_width(fresh_keys, span, declared):
    """The width w = hi - lo of a stochastic game's outcome range, so every
    sample (a marginal, or a pair's average) lies in [-w, w]: infinite while
    no two draws of an undeclared range have differed (nothing bounds the
    samples yet); -1 for a deterministic game, whose samples keep their
    plain sample variance."""
    if not fresh_keys:
        return -1.0
    width = span[1] - span[0]
    if not declared and not width > 0.0:
        return np.inf
    return width


@jit
def _converged(s1, s2, first, n, tol, width):
    nn = np.float64(n)
    for i in range(s1.shape[0]):
        if not (_variance(s1[i], s2[i], first[i], nn, width) / nn <= tol * tol):
            return False
    return True


@njit(nogil=True)
def _estimate(game, m, game_key, max_walks, budget, antithetic, cache_endpoints,
              fresh_keys, crn, tol, min_samples, values, stderr, stats, check, span,
              declared, bad, perm, work):
    """One game's estimate (see csrc/sampling.h); returns a STATUS_*. A
    stochastic game (fresh_keys) checks or widens its outcome range ``span``
    (2,) as _admit does and has its stderr regularised by it (_variance).
    perm (m,) int32 and work (4, m) are scratch, allocated once per batch
    (allocating per game serialises threads)."""
    x = work[0]
    first = work[1]
    s1 = work[2]
    s2 = work[3]
    s1[:] = 0.0
    s2[:] = 0.0
    unit_walks = 2 if antithetic else 1
    if crn:
        walk_cost = 2 * m
    elif cache_endpoints:
        walk_cost = m - 1
    else:
        walk_cost = m + 1
    unit_cost = unit_walks * walk_cost
    max_units = max_walks // unit_walks
    scale = 0.5 if antithetic else 1.0
    v0 = 0.0
    vn = 0.0
    evals = 0
    n = 0
    truncated = 0
    if cache_endpoints:
        v0 = _evaluate(game, np.uint64(0), np.uint64(0))
        vn = _evaluate(game, _ALL >> np.uint64(64 - m), np.uint64(0))
        evals = 2
        if check and not np.isfinite(v0):
            bad[0] = 0
            return STATUS_NOT_FINITE
        if check and not np.isfinite(vn):
            bad[0] = _ALL >> np.uint64(64 - m)
            return STATUS_NOT_FINITE
    for u in range(max_units):
        state = rng_key(game_key, u)
        if evals + unit_cost > budget:
            truncated = 1
            break
        state = _shuffle(state, perm)
        x[:] = 0.0
        state, spent, status = _walk(game, perm, False, state, fresh_keys, crn,
                                     cache_endpoints, v0, vn, x, check, span, declared, bad)
        evals += spent
        if status == STATUS_OK and antithetic:
            state, spent, status = _walk(game, perm, True, state, fresh_keys, crn,
                                         cache_endpoints, v0, vn, x, check, span, declared,
                                         bad)
            evals += spent
        if status != STATUS_OK:
            return status
        n += 1
        if n == 1:
            for i in range(m):
                first[i] = scale * x[i]
        else:
            for i in range(m):
                d = scale * x[i] - first[i]
                s1[i] += d
                s2[i] += d * d
        if tol > 0.0 and n >= min_samples and _converged(
                s1, s2, first, n, tol, _sample_width(fresh_keys, span, declared)):
            break
    nn = np.float64(n)
    width = _sample_width(fresh_keys, span, declared)
    for i in range(m):
        values[i] = first[i] + s1[i] / nn
        stderr[i] = np.inf
        if n > 1:
            var = _variance(s1[i], s2[i], first[i], nn, width)
            stderr[i] = np.sqrt((0.0 if var < 0.0 else var) / nn)
    stats[STAT_EVALS] = evals
    stats[STAT_WALKS] = n * unit_walks
    stats[STAT_SAMPLES] = n
    stats[STAT_TRUNCATED] = truncated
    return STATUS_OK


@jit
def permutation_shapley(v, seed, first_game, max_walks, budget, antithetic, cache_endpoints,
                        tol, min_samples, values, stderr, stats):
    """Estimates for a batch of tables, like fc_permutation_shapley_*."""
    m = 0
    while (1 << m) < v.shape[1]:
        m += 1
    bad = np.zeros(1, dtype=np.uint64)
    span = np.zeros(2)
    perm = np.empty(m, dtype=np.int32)
    work = np.empty((4, m))
    for g in range(v.shape[0]):
        _estimate(v[g], m, rng_key(seed, first_game + g), max_walks, budget,
                  antithetic, cache_endpoints, False, False, tol, min_samples, values[g],
                  stderr[g], stats[g], False, span, False, bad, perm, work)


@jit
def tree_permutations(seed, game, first_unit, children, perms):
    """perms[u] = the tree-respecting order of unit first_unit + u, like
    fc_sampling_tree_permutations (children validated by the caller)."""
    m = perms.shape[1]
    rows = m - 1
    game_key = rng_key(seed, game)
    if m == 1:
        perms[:, 0] = 0
        return
    size = np.empty(rows, dtype=np.int64)
    start = np.empty(rows, dtype=np.int64)
    for r in range(rows):
        a, b = children[r, 0], children[r, 1]
        size[r] = (1 if a < m else size[a - m]) + (1 if b < m else size[b - m])
    for u in range(perms.shape[0]):
        state = rng_key(game_key, first_unit + u)
        perm = perms[u]
        start[rows - 1] = 0
        for r in range(rows - 1, -1, -1):
            state, bits = next_u64(state)
            swap = np.int64(bits >> np.uint64(63))
            first, second = children[r, swap], children[r, 1 - swap]
            at = start[r] + (1 if first < m else size[first - m])
            if first < m:
                perm[start[r]] = first
            else:
                start[first - m] = start[r]
            if second < m:
                perm[at] = second
            else:
                start[second - m] = at


@jit
def masked_rows(background, xs, masks, owner, rows):
    """rows of c coalitions over the background, like fc_masked_rows: the
    background copied, then x's value down each kept column. Every mask and
    owner checked first (the public call's check, in the compiled pass)."""
    n_b, m = background.shape
    beyond = ~((_ONE << np.uint64(m)) - _ONE) if m < 64 else np.uint64(0)
    for c in range(masks.shape[0]):
        if (masks[c] & beyond) != 0 or owner[c] < 0 or owner[c] >= xs.shape[0]:
            raise ValueError("masked_rows: each mask must be below 2**m and each owner "
                             "in [0, n_x)")
    for c in range(masks.shape[0]):
        x = xs[owner[c]]
        base = c * n_b
        for b in range(n_b):
            for j in range(m):
                rows[base + b, j] = background[b, j]
        for j in range(m):
            if (masks[c] >> np.uint64(j)) & _ONE:
                value = x[j]
                for b in range(n_b):
                    rows[base + b, j] = value


@jit
def background_mean(outputs, weights, means):
    """means[c] = the (weighted) average over the background rows of
    outputs[c], summed in row order, like fc_background_mean."""
    n, n_b, k = outputs.shape
    if n_b < 1 or k < 1:
        raise ValueError("background_mean: outputs must be (c, n_b >= 1, k >= 1)")
    # each sum in a register, as C
    for c in range(n):
        for o in range(k):
            if weights is None:
                total = outputs[c, 0, o]
                for b in range(1, n_b):
                    total += outputs[c, b, o]
                means[c, o] = total / n_b
            else:
                total = weights[0] * outputs[c, 0, o]
                for b in range(1, n_b):
                    total += weights[b] * outputs[c, b, o]
                means[c, o] = total


#: The multiplier of the coalition sets' hash (Fibonacci hashing), as C's.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@jit
def _set_slot(slots, bits, key):
    """The slot of key (nonzero) in the set ``slots`` (2**bits, 0 = empty),
    or the empty slot it would take; linear probing, like C's set_slot."""
    last = (_ONE << np.uint64(bits)) - _ONE
    i = (key * _GOLDEN) >> np.uint64(64 - bits)
    while slots[i] != 0 and slots[i] != key:
        i = (i + _ONE) & last
    return i


@jit
def affordable_pairs(perms, max_evals, pairs, counts, masks):
    """Each row's antithetic pairs that fit max_evals distinct coalitions,
    and those coalitions in increasing order, padded with 2**64 - 1; like
    fc_affordable_pairs (csrc/sampling.h): a bit per coalition up to
    AFFORDABLE_DENSE_PLAYERS players, else a hash set."""
    n_rows, n_pairs, k = perms.shape
    width = 2 * (k - 1)
    for r in range(n_rows):
        for p in range(n_pairs):
            seen = np.uint64(0)
            for j in range(k):
                player = perms[r, p, j]
                if player < 0 or player >= k or (seen >> np.uint64(player)) & _ONE:
                    raise ValueError("affordable_pairs: every order must be a permutation "
                                     "of 0..k-1")
                seen |= _ONE << np.uint64(player)
    if n_rows == 0:
        return
    dense = k <= AFFORDABLE_DENSE_PLAYERS
    need = max_evals if n_pairs > (max_evals - 2) // width else 2 + width * n_pairs
    bits = 2
    while (1 << bits) < 2 * need:
        bits += 1
    slots = np.zeros(((1 << k) // 64 + 1) if dense else (1 << bits), dtype=np.uint64)
    full = _ALL if k == 64 else (_ONE << np.uint64(k)) - _ONE
    keys = np.empty(width, dtype=np.uint64)
    for r in range(n_rows):
        out = masks[r]
        out[0] = 0
        count = 1
        taken = 0
        for p in range(n_pairs):
            prefix = np.uint64(0)
            for j in range(k - 1):
                prefix |= _ONE << np.uint64(perms[r, p, j])
                keys[j] = prefix
                keys[k - 1 + j] = prefix ^ full
            fresh = 0
            for j in range(width):
                if dense:
                    fresh += 1 - np.int64((slots[keys[j] >> np.uint64(6)]
                                           >> (keys[j] & np.uint64(63))) & _ONE)
                elif slots[_set_slot(slots, bits, keys[j])] == 0:
                    fresh += 1
            if count + fresh + 1 > max_evals:
                break
            for j in range(width):
                if dense:
                    slots[keys[j] >> np.uint64(6)] |= _ONE << (keys[j] & np.uint64(63))
                else:
                    at = _set_slot(slots, bits, keys[j])
                    if slots[at] == 0:
                        slots[at] = keys[j]
                        out[count] = keys[j]
                        count += 1
            if dense:
                count += fresh
            taken += 1
        if dense:
            # the coalitions in increasing order, the set emptied for the next row
            at = 1
            for i in range(slots.shape[0]):
                word = slots[i]
                for bit in range(64):
                    if (word >> np.uint64(bit)) & _ONE:
                        out[at] = (np.uint64(i) << np.uint64(6)) | np.uint64(bit)
                        at += 1
                slots[i] = 0
        else:
            out[1:count] = np.sort(out[1:count])
            slots[:] = 0
        out[count] = full
        count += 1
        pairs[r] = taken
        counts[r] = count
        out[count:] = _ALL
