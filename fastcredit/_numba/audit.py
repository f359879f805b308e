"""Numba kernels of the audit family; the same algorithms, in the same
summation order and with the same random draws, as csrc/audit.c.

Signatures (float arrays float64, offsets int64 CSR, seeds uint64):
    bootstrap_median(sorted_a, order_a, sorted_b, order_b, seed, start, stop, counts, out)
        counts (n,) int32 scratch; out (stop - start,); unpaired when sorted_b has length 0
    bootstrap_mean_diff(offsets, a_values, b_values, resamples, seed, first_item, out)
        out (n_groups, resamples); b_values of length 0: the b term is 0
    percentile_interval(reps, shift, q_low, q_high, low, high)
        reps (n_rows, n) scratch, overwritten; low, high (n_rows,)
    spearman_groups(offsets, x, y, min_len, idx, ranks, rho, status)
        idx (L,) int64 and ranks (3 L,) scratch, L the longest group; status int8
    alignment_rows(credit, reference, center, atol, work, idx, cosine, sign, sign_nonzero,
                   spearman, top, defined)
        (n, m) rows; work (5 m,) and idx (m,) int64 scratch; top, defined bool
    shuffle_groups(offsets, x, seed, first_item, out)
    derangement(n, seed, out)                  out (n,) int64
    replay_advantage(f_offsets, f_values, a_offsets, a_values, alpha, threshold,
                     advantage, noise, resolution, critical) -> bad
        critical bool; bad = the first step whose offsets are refused (nothing
        written), else -1
    bootstrap_spearman_diff(sorted_x, order_x, sorted_y, order_y, sorted_z, order_z, seed,
                            start, stop, counts, ranks, out)
        counts (n,) int32 and ranks (3 n,) scratch; out (stop - start,)
    null_worlds(scale, edge_audit, edge_sign, edge_resid, pair_audit, pair_sign, pair_resid,
                phi_audit, phi_resid, atol, seed, start, stop, edge_hits, pair_hits,
                pair_count, cosine)
        (n, .) inputs, int8 signs; outputs ((stop - start) * n,), int32 counts
See csrc/audit.h for the definitions.
"""
import numpy as np
from numba import njit

from .._constants import (BOOTSTRAP_DRAW_BLOCK, SPEARMAN_CONSTANT, SPEARMAN_COUNTING_MAX,
                          SPEARMAN_NONFINITE, SPEARMAN_SHORT, SPEARMAN_VALID)
from .rng import GOLDEN, below, key, mix64

__all__ = ["bootstrap_median", "bootstrap_mean_diff", "percentile_interval", "spearman_groups", "alignment_rows",
           "shuffle_groups", "derangement", "replay_advantage", "bootstrap_spearman_diff",
           "null_worlds"]

jit = njit(cache=True, nogil=True)


@jit
def _draw_index_pairs(state_key, first, count, n, out):
    n = np.uint64(n)
    low = np.uint64(0xFFFFFFFF)
    for c in range(count):
        z = mix64(state_key + (np.uint64(first + c) + np.uint64(1)) * GOLDEN)
        out[2 * c] = ((z >> np.uint64(32)) * n) >> np.uint64(32)
        out[2 * c + 1] = ((z & low) * n) >> np.uint64(32)


@jit
def _order_statistic(sorted_x, order, counts, k, pos, seen):
    while seen + counts[order[pos]] <= k:
        seen += counts[order[pos]]
        pos += 1
    return sorted_x[pos], pos, seen


@jit
def _tallied_median(sorted_x, order, counts, n):
    lo, pos, seen = _order_statistic(sorted_x, order, counts, (n - 1) // 2, 0, 0)
    if n % 2:
        return lo
    hi, pos, seen = _order_statistic(sorted_x, order, counts, n // 2, pos, seen)
    return 0.5 * (lo + hi)


@jit
def _tally_resample(state_key, n, idx, counts):
    """counts[i] = how often the resample of ``state_key`` draws item i: n
    draws with replacement, two per stream item, in blocks (tally_resample
    of csrc/audit.c); idx: scratch of 2 * BOOTSTRAP_DRAW_BLOCK."""
    draws = (n + 1) // 2
    counts[:] = 0
    for c in range(0, draws, BOOTSTRAP_DRAW_BLOCK):
        block = min(BOOTSTRAP_DRAW_BLOCK, draws - c)
        used = min(2 * block, n - 2 * c)
        _draw_index_pairs(state_key, c, block, n, idx)
        for j in range(used):
            counts[idx[j]] += 1


@jit
def bootstrap_median(sorted_a, order_a, sorted_b, order_b, seed, start, stop, counts, out):
    n = sorted_a.shape[0]
    idx = np.empty(2 * BOOTSTRAP_DRAW_BLOCK, dtype=np.uint32)
    for r in range(start, stop):
        _tally_resample(key(seed, r), n, idx, counts)
        stat = _tallied_median(sorted_a, order_a, counts, n)
        if sorted_b.shape[0]:
            stat -= _tallied_median(sorted_b, order_b, counts, n)
        out[r - start] = stat


@jit
def _resampled_mean(x, state):
    s = 0.0
    for _ in range(x.shape[0]):
        state, i = below(state, x.shape[0])
        s += x[i]
    return s / x.shape[0], state


@jit
def bootstrap_mean_diff(offsets, a_values, b_values, resamples, seed, first_item, out):
    n_b = b_values.shape[0]
    for g in range(offsets.shape[0] - 1):
        a = a_values[offsets[g]:offsets[g + 1]]
        state = key(seed, np.uint64(first_item) + np.uint64(g))
        for r in range(resamples):
            ma, state = _resampled_mean(a, state)
            if n_b:
                mb, state = _resampled_mean(b_values, state)
                ma -= mb
            out[g, r] = ma


@jit
def _heap_sort(x, lo, hi):
    n = hi - lo
    i = n // 2 - 1
    end = n
    while end > 1:
        if i >= 0:
            root = i
            i -= 1
        else:
            end -= 1
            v = x[lo]
            x[lo] = x[lo + end]
            x[lo + end] = v
            root = 0
        v = x[lo + root]
        while 2 * root + 1 < end:
            j = 2 * root + 1
            if j + 1 < end and x[lo + j + 1] > x[lo + j]:
                j += 1
            if x[lo + j] <= v:
                break
            x[lo + root] = x[lo + j]
            root = j
        x[lo + root] = v


@jit
def _partition_by(x, lo, hi, p, upto):
    store = lo
    for i in range(lo, hi):
        v = x[i]
        x[i] = x[store]
        x[store] = v
        store += (v <= p) if upto else (v < p)
    return store


# upper bounds of the partitions kept for a row's next query (see csrc/audit.c)
_SELECT_BOUNDS = 64


@jit
def _select_kth(x, lo, hi, k, rounds, bounds, depth):
    while hi - lo > 1:
        a, b, c = x[lo], x[lo + (hi - lo) // 2], x[hi - 1]
        if a < b:
            p = b if b < c else (c if a < c else a)
        else:
            p = a if a < c else (c if b < c else b)
        if rounds == 0:
            _heap_sort(x, lo, hi)
            break
        rounds -= 1
        below = _partition_by(x, lo, hi, p, False)
        if k < below:
            hi = below
            if depth < _SELECT_BOUNDS:
                bounds[depth] = below
                depth += 1
            continue
        lo = _partition_by(x, below, hi, p, True)
        if k < lo:
            if lo < hi and depth < _SELECT_BOUNDS:
                bounds[depth] = lo
                depth += 1
            break
    return depth


@jit
def _order_stat(x, k, rounds, bounds, depth, done):
    """(depth, done) after putting the k-th smallest in place."""
    lo = done
    while depth > 0 and bounds[depth - 1] <= k:
        depth -= 1
        lo = bounds[depth]
    hi = bounds[depth - 1] if depth > 0 else x.shape[0]
    return _select_kth(x, lo, hi, k, rounds, bounds, depth), k + 1


@jit
def _lerp(a, b, t):
    d = b - a
    return b - d * (1.0 - t) if t >= 0.5 else a + d * t


@jit
def percentile_interval(reps, shift, q_low, q_high, low, high):
    n = reps.shape[1]
    rounds = 8
    i = n
    while i > 1:
        rounds += 2
        i >>= 1
    bounds = np.empty(_SELECT_BOUNDS, dtype=np.int64)
    for g in range(reps.shape[0]):
        x = reps[g]
        nan = False
        for i in range(n):
            x[i] -= shift
            nan |= x[i] != x[i]
        if nan:
            low[g] = np.nan
            high[g] = np.nan
            continue
        done = 0
        last = -1
        depth = 0
        for s in range(2):
            v = np.float64(n - 1) * (q_low if s == 0 else q_high)
            j = np.floor(v)
            top = v >= np.float64(n - 1)
            at = n - 1 if top else np.int64(j)
            nxt = at + 1 if at + 1 < n else n - 1
            t = v + 1.0 if top else v - j
            # a position up to the last one queried is in place (see C)
            if at > last:
                depth, done = _order_stat(x, at, rounds, bounds, depth, done)
            a = x[at]
            if nxt > at and nxt > last:
                depth, done = _order_stat(x, nxt, rounds, bounds, depth, done)
            last = nxt
            r = _lerp(a, x[nxt], t)
            if s == 0:
                low[g] = r
            else:
                high[g] = r


@jit
def _sift_down(keys, idx, root, end):
    kv = keys[root]
    ki = idx[root]
    while 2 * root + 1 < end:
        j = 2 * root + 1
        if j + 1 < end and keys[j + 1] > keys[j]:
            j += 1
        if keys[j] <= kv:
            break
        keys[root] = keys[j]
        idx[root] = idx[j]
        root = j
    keys[root] = kv
    idx[root] = ki


@jit
def _sort_keys(keys, idx, n):
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(keys, idx, i, n)
    for i in range(n - 1, 0, -1):
        kv = keys[0]
        ki = idx[0]
        keys[0] = keys[i]
        idx[0] = idx[i]
        keys[i] = kv
        idx[i] = ki
        _sift_down(keys, idx, 0, i)


@jit
def _counted_ranks(x, n, ranks):
    ties_of_first = 0
    for i in range(n):
        less = 0
        equal = 0
        for j in range(n):
            less += x[j] < x[i]
            equal += x[j] == x[i]
        ranks[i] = 0.5 * np.float64(2 * less + equal + 1)
        if i == 0:
            ties_of_first = equal
    return ties_of_first


@jit
def _average_ranks(x, n, keys, idx, ranks):
    if n <= SPEARMAN_COUNTING_MAX:
        return _counted_ranks(x, n, ranks) == n
    for i in range(n):
        keys[i] = x[i]
        idx[i] = i
    _sort_keys(keys, idx, n)
    lo = 0
    while lo < n:
        hi = lo + 1
        while hi < n and keys[hi] == keys[lo]:
            hi += 1
        r = 0.5 * np.float64(lo + hi - 1) + 1.0
        for i in range(lo, hi):
            ranks[idx[i]] = r
        lo = hi
    return keys[0] == keys[n - 1]


@jit
def _spearman_group(xg, yg, n, min_len, idx, ranks):
    """(rho, status) of one group, as csrc/audit.c's spearman_group."""
    rx = ranks[:n]
    ry = ranks[n:2 * n]
    keys = ranks[2 * n:3 * n]
    if n < min_len:
        return np.nan, SPEARMAN_SHORT
    finite = True
    for i in range(n):
        finite &= np.isfinite(xg[i]) and np.isfinite(yg[i])
    if not finite:
        return np.nan, SPEARMAN_NONFINITE
    if _average_ranks(yg, n, keys, idx, ry):
        return np.nan, SPEARMAN_CONSTANT
    if _average_ranks(xg, n, keys, idx, rx):
        return 0.0, SPEARMAN_VALID
    c = 0.5 * np.float64(n + 1)
    sxy = 0.0
    sxx = 0.0
    syy = 0.0
    for i in range(n):
        dx = rx[i] - c
        dy = ry[i] - c
        sxy += dx * dy
        sxx += dx * dx
        syy += dy * dy
    return sxy / np.sqrt(sxx * syy), SPEARMAN_VALID


@jit
def spearman_groups(offsets, x, y, min_len, idx, ranks, rho, status):
    for g in range(offsets.shape[0] - 1):
        rho[g], status[g] = _spearman_group(x[offsets[g]:offsets[g + 1]],
                                            y[offsets[g]:offsets[g + 1]],
                                            offsets[g + 1] - offsets[g], min_len, idx, ranks)


@jit
def _tie_values(x, m, atol, keys, idx):
    k = 0
    for i in range(m):
        if abs(x[i]) <= atol:
            x[i] = 0.0
        if not np.isnan(x[i]):
            keys[k] = x[i]
            idx[k] = i
            k += 1
    _sort_keys(keys, idx, k)
    lo = 0
    while lo < k:
        hi = lo + 1
        while hi < k and keys[hi] - keys[hi - 1] <= atol:
            x[idx[hi]] = keys[lo]
            hi += 1
        lo = hi


@jit
def _first_argmax(x, m):
    best = 0
    top = x[0]
    for i in range(1, m):
        up = (not x[i] <= top) & (top == top)       # a NaN top stays
        best = i if up else best
        top = x[i] if up else top
    return best


@jit
def _sign_of(x):
    return (x > 0.0) - (x < 0.0)


@jit
def alignment_rows(credit, reference, center, atol, work, idx, cosine, sign, sign_nonzero,
                   spearman, top, defined):
    n, m = credit.shape
    c, r, ranks = work[:m], work[m:2 * m], work[2 * m:]
    for g in range(n):
        cg, rg = credit[g], reference[g]
        mean_c = 0.0
        mean_r = 0.0
        if center:
            for i in range(m):
                mean_c += cg[i]
                mean_r += rg[i]
            mean_c /= np.float64(m)
            mean_r /= np.float64(m)
        dot = 0.0
        cc = 0.0
        rr = 0.0
        for i in range(m):
            c[i] = cg[i] - mean_c
            r[i] = rg[i] - mean_r
            dot += c[i] * r[i]
            cc += c[i] * c[i]
            rr += r[i] * r[i]
        if atol > 0.0:
            _tie_values(c, m, atol, ranks, idx)
            _tie_values(r, m, atol, ranks, idx)
            constant_c = True
            constant_r = True
            for i in range(m):
                constant_c &= c[i] == 0.0
                constant_r &= r[i] == 0.0
        else:
            constant_c = cc == 0.0
            constant_r = rr == 0.0
        defined[g] = not constant_r
        if constant_r:
            cosine[g] = np.nan
        elif constant_c:
            cosine[g] = 0.0
        else:
            cosine[g] = dot / (np.sqrt(cc) * np.sqrt(rr))
        same = 0
        nonzero = 0
        hits = 0
        for i in range(m):
            agree = (c[i] == c[i]) & (r[i] == r[i]) & (_sign_of(c[i]) == _sign_of(r[i]))
            counted = r[i] != 0.0
            same += agree
            nonzero += counted
            hits += agree & counted
        sign[g] = np.float64(same) / np.float64(m)
        sign_nonzero[g] = np.float64(hits) / np.float64(nonzero) if nonzero else np.nan
        top[g] = _first_argmax(c, m) == _first_argmax(r, m)
        spearman[g] = _spearman_group(c, r, m, 2, idx, ranks)[0]


@jit
def shuffle_groups(offsets, x, seed, first_item, out):
    for g in range(offsets.shape[0] - 1):
        o = out[offsets[g]:offsets[g + 1]]
        o[:] = x[offsets[g]:offsets[g + 1]]
        state = key(seed, np.uint64(first_item) + np.uint64(g))
        for j in range(o.shape[0] - 1, 0, -1):
            state, k = below(state, j + 1)
            t = o[j]
            o[j] = o[k]
            o[k] = t


@jit
def derangement(n, seed, out):
    attempt = 0
    while True:
        state = key(seed, attempt)
        for i in range(n):
            out[i] = i
        j = n - 1
        while j > 0:
            state, k = below(state, j + 1)
            t = out[j]
            out[j] = out[k]
            out[k] = t
            if out[j] == j:
                break
            j -= 1
        if j == 0 and out[0] != 0:
            return
        attempt += 1


@jit
def _arm_mean(x):
    """(mean, whether every value is the same bound of a binary outcome, that
    value): all 0 or all 1."""
    s = 0.0
    at_edge = x[0] == 0.0 or x[0] == 1.0
    for i in range(x.shape[0]):
        s += x[i]
        at_edge &= x[i] == x[0]
    return s / x.shape[0], at_edge, x[0]


@jit
def replay_advantage(f_offsets, f_values, a_offsets, a_values, alpha, threshold, advantage,
                     noise, resolution, critical):
    n_steps = f_offsets.shape[0] - 1
    for t in range(n_steps):
        if (f_offsets[t + 1] <= f_offsets[t] or a_offsets[t + 1] <= a_offsets[t]
                or (t == 0 and (f_offsets[0] < 0 or a_offsets[0] < 0))):
            return t
    for t in range(n_steps):
        f = f_values[f_offsets[t]:f_offsets[t + 1]]
        a = a_values[a_offsets[t]:a_offsets[t + 1]]
        mf, f_edge, f_at = _arm_mean(f)
        ma, a_edge, a_at = _arm_mean(a)
        ss = 0.0
        for i in range(f.shape[0]):
            ss += (f[i] - mf) * (f[i] - mf)
        advantage[t] = mf - ma
        critical[t] = abs(mf - ma) > threshold
        noise[t] = np.sqrt(ss / (f.shape[0] - 1)) if f.shape[0] > 1 else np.nan
        if f_edge and a_edge and f_at == a_at:
            resolution[t] = 1.0 - alpha ** (1.0 / min(f.shape[0], a.shape[0]))
        else:
            resolution[t] = np.nan
    return -1


@jit
def _tallied_ranks(sorted_x, order, counts, ranks):
    n = sorted_x.shape[0]
    p = 0
    seen = 0
    while p < n:
        total = 0
        q = p
        while q < n and sorted_x[q] == sorted_x[p]:
            total += counts[order[q]]
            q += 1
        rank = np.float64(seen) + np.float64(total + 1) * 0.5
        while p < q:
            ranks[order[p]] = rank
            p += 1
        seen += total


@jit
def bootstrap_spearman_diff(sorted_x, order_x, sorted_y, order_y, sorted_z, order_z, seed,
                            start, stop, counts, ranks, out):
    n = sorted_x.shape[0]
    mid = np.float64(n + 1) * 0.5
    idx = np.empty(2 * BOOTSTRAP_DRAW_BLOCK, dtype=np.uint32)
    rx, ry, rz = ranks[:n], ranks[n:2 * n], ranks[2 * n:3 * n]
    for r in range(start, stop):
        _tally_resample(key(seed, r), n, idx, counts)
        _tallied_ranks(sorted_x, order_x, counts, rx)
        _tallied_ranks(sorted_y, order_y, counts, ry)
        _tallied_ranks(sorted_z, order_z, counts, rz)
        sxx = syy = szz = sxz = syz = 0.0
        for i in range(n):
            w = np.float64(counts[i])
            dx, dy, dz = rx[i] - mid, ry[i] - mid, rz[i] - mid
            sxx += w * dx * dx
            syy += w * dy * dy
            szz += w * dz * dz
            sxz += w * dx * dz
            syz += w * dy * dz
        if szz == 0.0:
            out[r - start] = np.nan
            continue
        rho_x = 0.0 if sxx == 0.0 else sxz / np.sqrt(sxx * szz)
        rho_y = 0.0 if syy == 0.0 else syz / np.sqrt(syy * szz)
        out[r - start] = rho_x - rho_y


@jit
def _signed_hits(audit, sign, resid, s, atol):
    hits = 0
    counted = 0
    for e in range(audit.shape[0]):
        x = audit[e] + s * resid[e]
        sg = np.float64(sign[e])
        hits += sg * x > atol
        counted += (sign[e] != 0) & ((x > atol) | (x < -atol))
    return hits, counted


@jit
def null_worlds(scale, edge_audit, edge_sign, edge_resid, pair_audit, pair_sign, pair_resid,
                phi_audit, phi_resid, atol, seed, start, stop, edge_hits, pair_hits, pair_count,
                cosine):
    n = scale.shape[0]
    n_players = phi_audit.shape[1]
    for w in range(start, stop):
        state = key(seed, w)
        for r in range(n):
            o = (w - start) * n + r
            state, d = below(state, n - 1)
            if d >= r:
                d += 1
            s = scale[r]
            hits, _ = _signed_hits(edge_audit[r], edge_sign[r], edge_resid[d], s, atol)
            phits, pcount = _signed_hits(pair_audit[r], pair_sign[r], pair_resid[d], s, atol)
            tt = ta = aa = 0.0
            for i in range(n_players):
                a = phi_audit[r, i]
                t = a + s * phi_resid[d, i]
                tt += t * t
                ta += t * a
                aa += a * a
            edge_hits[o] = hits
            pair_hits[o] = phits
            pair_count[o] = pcount
            if aa == 0.0:
                cosine[o] = np.nan
            elif tt == 0.0:
                cosine[o] = 0.0
            else:
                cosine[o] = ta / np.sqrt(tt * aa)
