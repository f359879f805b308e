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
def _subset_columns(coef, columns, column_sizes):
    """Whether x_a(S) = coef[t_a, |S & U_a|] is [U_a ⊆ S] coef[t_a, t_a]
    (csrc/approximators.c's subset_columns): coef[t, j] = 0 for j < t and
    every column's size its number of members."""
    for t in range(coef.shape[0]):
        for j in range(t):
            if coef[t, j] != 0.0:
                return False
    for a in range(columns.shape[0]):
        if _popcount(columns[a]) != column_sizes[a]:
            return False
    return True


@jit
def fold_regression(masks, values, centre, weights, columns, column_sizes, coef, work_x,
                    work_i, gram, moment):
    n_kernels = weights.shape[0]
    p = columns.shape[0]
    subset = _subset_columns(coef, columns, column_sizes)
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
            if subset:
                x = 0.0 if columns[a] & ~mask else coef[column_sizes[a], column_sizes[a]]
            else:
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
    subset = _subset_columns(coef, columns, column_sizes)
    for u in range(masks.shape[0]):
        for a in range(wide):
            work_g[a] = 0.0
        for q in range(masks.shape[1]):
            mask = masks[u, q]
            s = _popcount(mask)
            r = values[u, q] - centre
            k = 0
            for a in range(p):
                if subset:
                    x = 0.0 if columns[a] & ~mask else coef[column_sizes[a], column_sizes[a]]
                else:
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
def _bch_decode_word(word, order, t, gf_exp, gf_log, out, syndrome, locator, previous, saved,
                     roots):
    """One word decoded into out: n_errors (-1 for a failure, out = word)."""
    length = word.shape[0]
    for j in range(length):
        out[j] = word[j]
    any_nonzero = False
    for l in range(2 * t):
        s = 0
        for j in range(length):
            if word[j]:
                s ^= gf_exp[((l + 1) * (length - 1 - j)) % order]
        syndrome[l] = s
        any_nonzero |= s != 0
    if not any_nonzero:
        return 0
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
        saved[:] = locator
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
        return -1
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
        return -1
    for i in range(n_roots):
        out[length - 1 - roots[i]] ^= 1
    return degree


@jit
def bch_decode(received, order, t, gf_exp, gf_log, decoded, n_errors):
    syndrome = np.zeros(2 * t, np.int32)
    locator = np.zeros(2 * t + 1, np.int32)
    previous = np.zeros(2 * t + 1, np.int32)
    saved = np.zeros(2 * t + 1, np.int32)
    roots = np.zeros(t, np.int64)
    for w in range(received.shape[0]):
        n_errors[w] = _bch_decode_word(received[w], order, t, gf_exp, gf_log, decoded[w],
                                       syndrome, locator, previous, saved, roots)


# --- sparse transform (SPEX): singleton detection ----------------------------------

__all__ += ["spex_detect"]


@jit
def _chase_less(sa, pa, sb, pb):
    """Python's order of (sum, [bit 0, bit 1, ...]) tuples."""
    if sa != sb:
        return sa < sb
    diff = pa ^ pb
    if diff == 0:
        return False
    j = 0
    while not (diff >> j) & 1:
        j += 1
    return (pb >> j) & 1 == 1


@jit
def _chase_push(hs, hp, size, s, p):
    """heapq.heappush; returns the new size."""
    pos = size
    while pos > 0:
        parent = (pos - 1) >> 1
        if not _chase_less(s, p, hs[parent], hp[parent]):
            break
        hs[pos] = hs[parent]
        hp[pos] = hp[parent]
        pos = parent
    hs[pos] = s
    hp[pos] = p
    return size + 1


@jit
def _chase_patterns(arr, depth, count, hs, hp, add_s, add_p):
    """sparse_transform's k_smallest_partial_sums_with_indices, replayed: the
    heap's size (the patterns are tried from its last entry to its first)."""
    size = 1
    hs[0] = 0.0
    hp[0] = 0
    for i in range(depth):
        current_min = hs[0]
        n_add = 0
        for x in range(size):
            if size < count or hs[x] - arr[i] >= current_min:
                add_s[n_add] = hs[x] - arr[i]
                add_p[n_add] = hp[x] | (1 << i)
                n_add += 1
        for a in range(n_add):
            size = _chase_push(hs, hp, size, add_s[a], add_p[a])
        if size > count:
            for a in range(1, size):
                s, p = hs[a], hp[a]
                b = a
                while b > 0 and _chase_less(s, p, hs[b - 1], hp[b - 1]):
                    hs[b] = hs[b - 1]
                    hp[b] = hp[b - 1]
                    b -= 1
                hs[b] = s
                hp[b] = p
            for a in range(count):
                hs[a] = hs[size - count + a]
                hp[a] = hp[size - count + a]
            size = count
    return size


@njit(cache=True, nogil=True, error_model="numpy")   # a zero col[0]: C's IEEE ratios
def spex_detect(u, subsampling, delays, order, t, gf_exp, gf_log, soft, cutoff, energy_cutoff,
                to_check, status, k, rho, work):
    n_groups, n_delays, n_bins = u.shape
    n, b = subsampling.shape[1], subsampling.shape[2]
    r = n_delays - 1
    length = n + r
    depth = min(t, r)
    count = t * (t + 1) // 2
    word, dec = work[:length], work[length:2 * length]
    messages = work[2 * length:]
    syndrome = np.zeros(2 * t, np.int32)
    locator = np.zeros(2 * t + 1, np.int32)
    previous = np.zeros(2 * t + 1, np.int32)
    saved = np.zeros(2 * t + 1, np.int32)
    roots = np.zeros(t, np.int64)
    hs = np.zeros(2 * count + 2)
    hp = np.zeros(2 * count + 2, np.int64)
    add_s = np.zeros(count + 1)
    add_p = np.zeros(count + 1, np.int64)
    idx = np.zeros(depth, np.int64)
    arr = np.zeros(depth)
    for g in range(n_groups):
        for j in range(n_bins):
            kk = k[g, j]
            energy = 0.0
            for d in range(n_delays):
                energy += u[g, d, j] * u[g, d, j]
            if not energy > cutoff * n_delays or not to_check[g, j]:
                to_check[g, j] = 0
                status[g, j] = 0
                continue
            c0 = u[g, 0, j]
            for i in range(n):
                word[i] = 0
            for p in range(r):
                if soft:
                    word[n + p] = u[g, p + 1, j] / c0 < 0
                else:
                    word[n + p] = (u[g, p + 1, j] < 0) != (c0 < 0)
            n_errors = _bch_decode_word(word, order, t, gf_exp, gf_log, dec, syndrome, locator,
                                        previous, saved, roots)
            for i in range(n):
                kk[i] = 0 if n_errors == -1 else dec[i]
            if n_errors == -1 and soft:
                for i in range(depth):
                    pick, pick_key = -1, 0.0
                    for p in range(r):
                        key = abs(u[g, p + 1, j] / c0)
                        taken = False
                        for c in range(i):
                            taken |= idx[c] == p
                        if not taken and (pick < 0 or key < pick_key):
                            pick, pick_key = p, key
                    idx[i] = pick
                    arr[i] = pick_key
                size = _chase_patterns(arr, depth, count, hs, hp, add_s, add_p)
                n_distinct, best, best_errors = 0, -1, 0
                for h in range(size - 1, -1, -1):
                    for i in range(depth):
                        word[n + idx[i]] ^= (hp[h] >> i) & 1
                    n_errors = _bch_decode_word(word, order, t, gf_exp, gf_log, dec, syndrome,
                                                locator, previous, saved, roots)
                    for i in range(depth):
                        word[n + idx[i]] ^= (hp[h] >> i) & 1
                    if n_errors == -1:
                        continue
                    new = True
                    for i in range(n_distinct):
                        same = True
                        for c in range(n):
                            if messages[i * n + c] != dec[c]:
                                same = False
                                break
                        if same:
                            new = False
                            break
                    if not new:
                        continue
                    for i in range(n):
                        messages[n_distinct * n + i] = dec[i]
                    if best < 0 or n_errors < best_errors:
                        best, best_errors = n_distinct, n_errors
                    n_distinct += 1
                if best >= 0:
                    for i in range(n):
                        kk[i] = messages[best * n + i]
            mean = 0.0
            for d in range(n_delays):
                parity = 0
                for i in range(n):
                    parity ^= delays[d, i] & kk[i]
                mean += -u[g, d, j] if parity else u[g, d, j]
            mean /= n_delays
            residual = 0.0
            for d in range(n_delays):
                parity = 0
                for i in range(n):
                    parity ^= delays[d, i] & kk[i]
                e = u[g, d, j] - (-mean if parity else mean)
                residual += e * e
            matching = True
            for p in range(b):
                bit = 0
                for i in range(n):
                    bit ^= subsampling[g, i, p] & kk[i]
                matching &= bit == (j >> (b - 1 - p)) & 1
            rho[g, j] = mean
            if matching and residual / energy < energy_cutoff:
                status[g, j] = 2
            else:
                status[g, j] = 1
                to_check[g, j] = 0


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
