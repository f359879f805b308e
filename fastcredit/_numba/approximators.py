"""Numba kernels of the approximator family: the same algorithm, in the same
order, as csrc/approximators.c (see csrc/approximators.h for the contract).

Signatures:
    draw_svarm(seed, game, first, m, sizes, cdf, masks)      masks (n,) uint64
    draw_stratified(seed, game, first, m, masks, slots)      masks (n, 2), slots (n,)
    draw_owen(seed, game, first, m, anchors, masks, slots)   masks (n, 2), slots (n,)
    fold_pairs(values, slots, count, first, s1, s2)          values (n, 2) float64
    fold_svarmiq(masks, values, m, centre, members, sizes, order, count, first, s1, s2)
                                                    members (n_subsets, order) int64
    fold_shapiq(masks, values, m, centre, members, sizes, order, weights, count, first, s1,
                s2)                                 masks, values (n_units, per_unit <= 2)
    fold_regression(masks, values, centre, weights, columns, column_sizes, coef,
                    work_x, work_i, gram, moment)   weights (n_kernels, m + 1), coef
                    (order + 1, order + 1), gram (n_kernels, p, p), moment (n_kernels, p)
"""
import numpy as np
from numba import njit

from .rng import below, uniform
from .rng import key as rng_key

__all__ = ["draw_svarm", "draw_stratified", "draw_owen", "fold_pairs"]

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


# --- Monte-Carlo interaction estimators (SVARM-IQ, SHAP-IQ) ---------------------

__all__ += ["fold_svarmiq", "fold_shapiq"]


@jit
def fold_svarmiq(masks, values, m, centre, members, sizes, order, count, first, s1, s2):
    for k in range(masks.shape[0]):
        mask = masks[k]
        t = _popcount(mask)
        x = values[k] - centre
        for j in range(sizes.shape[0]):
            p = 0
            for b in range(sizes[j]):
                p |= np.int64((mask >> np.uint64(members[j, b])) & _ONE) << b
            s = ((j << order) + p) * (m + 1) + t
            c = count[s]
            if c == 0:
                first[s] = x
            else:
                d = x - first[s]
                s1[s] += d
                s2[s] += d * d
            count[s] = c + 1


@jit
def fold_shapiq(masks, values, m, centre, members, sizes, order, weights, count, first, s1,
                s2):
    per_unit = masks.shape[1]
    x = np.empty(per_unit)
    t = np.empty(per_unit, dtype=np.int64)
    for u in range(masks.shape[0]):
        for c in range(per_unit):
            x[c] = values[u, c] - centre
            t[c] = _popcount(masks[u, c])
        for j in range(sizes.shape[0]):
            s = sizes[j]
            y = 0.0
            for c in range(per_unit):
                i = 0
                for b in range(s):
                    i += np.int64((masks[u, c] >> np.uint64(members[j, b])) & _ONE)
                y += x[c] * weights[(s * (m + 1) + t[c]) * (order + 1) + i]
            n = count[j]
            if n == 0:
                first[j] = y
            else:
                d = y - first[j]
                s1[j] += d
                s2[j] += d * d
            count[j] = n + 1


# --- regression estimators ------------------------------------------------------

__all__ += ["fold_regression", "fold_scores", "cholesky_solve"]

#: right-hand sides the back substitution carries at once (C: FC_SOLVE_RHS)
SOLVE_RHS = 4

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@jit
def _popcount(x):
    """The bits of x by SWAR arithmetic (csrc/approximators.c's popcount_swar)."""
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@jit
def fold_regression(masks, values, centre, weights, columns, column_sizes, coef, work_x,
                    work_i, gram, moment):
    n_kernels = weights.shape[0]
    p = columns.shape[0]
    for k in range(masks.shape[0]):
        mask = masks[k]
        s = _popcount(mask)
        y = values[k] - centre
        live = False
        for j in range(n_kernels):
            if weights[j, s] != 0.0:
                live = True
        if not live:
            continue
        nz = 0
        for a in range(p):
            x = coef[column_sizes[a], _popcount(mask & columns[a])]
            if x != 0.0:
                work_x[nz] = x
                work_i[nz] = a
                nz += 1
        for j in range(n_kernels):
            w = weights[j, s]
            if w == 0.0:
                continue
            for a in range(nz):
                wa = w * work_x[a]
                ia = work_i[a]
                moment[j, ia] += wa * y
                for b in range(a, nz):
                    gram[j, ia, work_i[b]] += wa * work_x[b]


@jit
def fold_scores(masks, values, centre, weights, columns, column_sizes, coef, phi, reach,
                work_x, work_i, work_g, work_fit, scores_sq, scores):
    n_stages = weights.shape[0]
    p = columns.shape[0]
    wide = n_stages * p
    for u in range(masks.shape[0]):
        for a in range(wide):
            work_g[a] = 0.0
        for q in range(masks.shape[1]):
            mask = masks[u, q]
            s = _popcount(mask)
            r = values[u, q] - centre
            k = 0
            for a in range(p):
                x = coef[column_sizes[a], _popcount(mask & columns[a])]
                if x != 0.0:
                    work_x[k] = x
                    work_i[k] = a
                    k += 1
            for t in range(n_stages):
                fit = 0.0
                for a in range(k):
                    fit += work_x[a] * phi[t, work_i[a]]
                r -= fit
                work_fit[t] = r * weights[t, s]
            # stage t's scores on its first reach[t] columns (the others are
            # never read); work_i ascends
            for t in range(n_stages):
                rw = work_fit[t]
                if rw == 0.0:
                    continue
                for a in range(k):
                    if work_i[a] >= reach[t]:
                        break
                    work_g[t * p + work_i[a]] += rw * work_x[a]
        nz = 0
        for a in range(wide):
            if work_g[a] != 0.0:
                work_x[nz] = work_g[a]
                work_i[nz] = a
                nz += 1
        for a in range(nz):
            ia = work_i[a]
            scores[ia] += work_x[a]
            for b in range(a, nz):
                scores_sq[ia, work_i[b]] += work_x[a] * work_x[b]


@jit
def cholesky_solve(a, rhs, info):
    n = a.shape[0]
    info[0] = 0
    # every sum runs along rows of R (the rows above row j; then, solving,
    # row k of R scaled by z[k]): each entry's terms in ascending k, as down
    # R's columns, the entries of a row independent of each other
    for j in range(n):
        diag = a[j, j]
        for k in range(j):
            r_kj = a[k, j]
            for i in range(j, n):
                a[j, i] -= r_kj * a[k, i]
        d = a[j, j]
        if not d > 1e-13 * diag:
            info[0] = j + 1
            return
        d = np.sqrt(d)
        a[j, j] = d
        for i in range(j + 1, n):
            a[j, i] /= d
    # SOLVE_RHS right-hand sides at a time in the back substitution: its sums
    # along R's rows are each one chain of dependent subtractions
    x = np.empty(SOLVE_RHS)
    for r in range(0, rhs.shape[0], SOLVE_RHS):
        w = min(rhs.shape[0] - r, SOLVE_RHS)
        for c in range(r, r + w):
            for k in range(n):
                zk = rhs[c, k] / a[k, k]
                rhs[c, k] = zk
                for i in range(k + 1, n):
                    rhs[c, i] -= a[k, i] * zk
        for i in range(n - 1, -1, -1):
            for c in range(w):
                x[c] = rhs[r + c, i]
            for k in range(i + 1, n):
                for c in range(w):
                    x[c] -= a[i, k] * rhs[r + c, k]
            for c in range(w):
                rhs[r + c, i] = x[c] / a[i, i]


# --- sparse transform (SPEX): binary BCH decoding ----------------------------------

__all__ += ["bch_decode"]


@jit
def _bch_mul(a, b, gf_exp, gf_log):
    if a == 0 or b == 0:
        return 0
    return gf_exp[gf_log[a] + gf_log[b]]


@jit
def bch_decode(received, order, t, gf_exp, gf_log, decoded, n_errors):
    n_words, length = received.shape
    syndrome = np.zeros(2 * t, np.int32)
    locator = np.zeros(2 * t + 1, np.int32)
    previous = np.zeros(2 * t + 1, np.int32)
    roots = np.zeros(t, np.int64)
    for w in range(n_words):
        for j in range(length):
            decoded[w, j] = received[w, j]
        any_nonzero = False
        for l in range(2 * t):
            s = 0
            for j in range(length):
                if received[w, j]:
                    s ^= gf_exp[((l + 1) * (length - 1 - j)) % order]
            syndrome[l] = s
            any_nonzero |= s != 0
        n_errors[w] = 0
        if not any_nonzero:
            continue
        locator[:] = 0
        previous[:] = 0
        locator[0] = previous[0] = 1
        degree, shift, last = 0, 1, 1
        for r in range(2 * t):
            discrepancy = syndrome[r]
            for i in range(1, degree + 1):
                discrepancy ^= _bch_mul(locator[i], syndrome[r - i], gf_exp, gf_log)
            if discrepancy == 0:
                shift += 1
                continue
            scale = gf_exp[gf_log[discrepancy] + order - gf_log[last]]
            saved = locator.copy()
            for i in range(2 * t + 1 - shift):
                locator[i + shift] ^= _bch_mul(scale, previous[i], gf_exp, gf_log)
            if 2 * degree <= r:
                degree = r + 1 - degree
                previous[:] = saved
                last = discrepancy
                shift = 1
            else:
                shift += 1
        if degree > t:
            n_errors[w] = -1
            continue
        n_roots, outside = 0, False
        for i in range(order):
            value = 1
            for l in range(1, degree + 1):
                if locator[l]:
                    value ^= gf_exp[(gf_log[locator[l]] + (order - i) * l) % order]
            if value == 0:
                if i >= length:
                    outside = True
                elif n_roots < t:
                    roots[n_roots] = i
                    n_roots += 1
        if outside or n_roots != degree:
            n_errors[w] = -1
            continue
        for i in range(n_roots):
            decoded[w, length - 1 - roots[i]] ^= 1
        n_errors[w] = degree


# --- ProxySPEX: the Fourier coefficients of a fitted tree ensemble (csrc/proxyspex.c) ---

__all__ += ["tree_fourier"]

_TREE_MAX_DEPTH = 62
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@jit
def _tree_leaves(split_feature, left, right, first, n_nodes, leaf_value, leaf, n_leaves, m,
                 fill, table):
    """One tree's leaves, depth first (left first), as csrc/proxyspex.c's
    walk_tree: counted (returns the terms) or filled into ``table`` (slots,
    masks, values, n_freq, shift); -1 for a malformed tree."""
    slots, masks, values, state = table
    feature = np.zeros(_TREE_MAX_DEPTH + 1, np.int64)
    went_right = np.zeros(_TREE_MAX_DEPTH + 1, np.int64)
    node = np.zeros(_TREE_MAX_DEPTH + 2, np.int64)
    terms = 0
    visits = 0
    depth = 0
    if n_nodes == 0:
        if fill:
            _fill_leaf(leaf_value[leaf], 0, feature, went_right, slots, masks, values, state)
        return 1
    while True:
        at = node[depth]
        child = right[first + at] if went_right[depth] else left[first + at]
        f = split_feature[first + at]
        if f < 0 or f >= m:
            return -1
        feature[depth] = f
        if child < 0:
            lf = -child - 1
            visits += 1
            if lf >= n_leaves or visits > n_leaves:
                return -1
            if fill:
                _fill_leaf(leaf_value[leaf + lf], depth + 1, feature, went_right, slots, masks,
                           values, state)
            if terms > (1 << 62) - (1 << (depth + 1)):
                return -1
            terms += 1 << (depth + 1)
        else:
            if child <= at or child >= n_nodes or depth + 1 >= _TREE_MAX_DEPTH:
                return -1
            depth += 1
            node[depth] = child
            went_right[depth] = 0
            continue
        while depth >= 0 and went_right[depth]:
            depth -= 1
        if depth < 0:
            return terms
        went_right[depth] = 1


@jit
def _fill_leaf(value, depth, feature, right, slots, masks, values, state):
    scaled = value * (1.0 / float(np.uint64(1) << np.uint64(depth)))
    slot_mask = np.uint64(slots.shape[0] - 1)
    shift = np.uint64(state[1])
    for j in range(1 << depth):
        freq = np.uint64(0)
        negative = 0
        for d in range(depth):
            if (j >> d) & 1:
                freq ^= _ONE << np.uint64(feature[d])
                negative ^= right[d]
        term = -scaled if negative else scaled
        h = (freq * _GOLDEN) >> shift
        while True:
            s = slots[h]
            if s < 0:
                slots[h] = state[0]
                masks[state[0]] = freq
                values[state[0]] = term
                state[0] += 1
                break
            if masks[s] == freq:
                values[s] += term
                break
            h = (h + _ONE) & slot_mask


@jit
def tree_fourier(split_feature, left_child, right_child, node_start, leaf_value, leaf_start, m,
                 slots, masks, values, counts):
    n_trees = node_start.shape[0] - 1
    if n_trees < 0 or leaf_start.shape[0] != n_trees + 1 or m < 1 or m > 64 \
            or node_start[0] != 0 or leaf_start[0] != 0 \
            or (slots.shape[0] & (slots.shape[0] - 1)) != 0:
        raise ValueError("tree_fourier: invalid arguments")
    for k in range(n_trees):
        nodes = node_start[k + 1] - node_start[k]
        if nodes < 0 or leaf_start[k + 1] - leaf_start[k] != nodes + 1:
            raise ValueError("tree_fourier: a tree's leaves must be its nodes + 1")
    # state: n_freq, the hash shift
    state = np.zeros(2, np.int64)
    table = (slots, masks, values, state)
    counts[1] = 0
    total = 0
    for k in range(n_trees):
        t = _tree_leaves(split_feature, left_child, right_child, node_start[k],
                         node_start[k + 1] - node_start[k], leaf_value, leaf_start[k],
                         leaf_start[k + 1] - leaf_start[k], m, False, table)
        if t < 0 or t > (1 << 62) - total:
            raise ValueError("tree_fourier: a malformed tree or too many terms")
        total += t
    counts[0] = total
    if masks.shape[0] < total or slots.shape[0] < 2 * total or slots.shape[0] < 2:
        return
    slots[:] = -1
    shift = 64
    s = slots.shape[0]
    while s > 1:
        shift -= 1
        s >>= 1
    state[1] = shift
    for k in range(n_trees):
        _tree_leaves(split_feature, left_child, right_child, node_start[k],
                     node_start[k + 1] - node_start[k], leaf_value, leaf_start[k],
                     leaf_start[k + 1] - leaf_start[k], m, True, table)
    counts[1] = state[0]
