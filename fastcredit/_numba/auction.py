"""Numba kernels of the auction family: the algorithm of csrc/auction.c, step
for step and in the same summation order (see the proof of the per-action cut
there).

Signature (arrays validated by fastcredit.auction):
    replay(offsets, ad_id, score, value, prerank, m, start, stop, slots,
           reserve, capacity, pricing, mode, out, win_ad, win_earn)
offsets int64 (B*m + 1,); ad_id int64, score/value float64 (n,); prerank
float64 (n,) or empty for "rank capacity by score"; out float64 (B, 2**m),
rows start..stop-1 written; win_ad int64 / win_earn float64 (B, 2**m, slots),
or (1, 1, 1) placeholders when no winners are wanted. pricing: PRICING_*,
mode: MODE_* of fastcredit._constants; capacity 0 = none.
"""
import numpy as np
from numba import njit

from .._constants import MODE_RERUN, PRICING_GSP
from .rng import GOLDEN

__all__ = ["replay"]

jit = njit(cache=True, nogil=True)


@jit
def _ranks_before(ad, score, x, y):
    sx = score[x]
    sy = score[y]
    if sx != sy:
        return sx > sy
    if ad[x] != ad[y]:
        return ad[x] < ad[y]
    return x < y


@jit
def _preranks_before(ad, pr, x, y):
    if pr[x] != pr[y]:
        return pr[x] > pr[y]
    return ad[x] < ad[y]


@jit
def _gsp_price(own, nxt, reserve):
    p = nxt if nxt > reserve else reserve
    return p if p < own else own


@jit
def _best_distinct(ad, score, floor, length, lo, hi, top, t0):
    """top[t0:t0+length] <- the best distinct ads of [lo, hi) at or above
    floor; returns (count, instances below floor)."""
    n = 0
    below = 0
    for x in range(lo, hi):
        if score[x] < floor:
            below += 1
            continue
        if n == length and not _ranks_before(ad, score, x, top[t0 + n - 1]):
            continue
        j = 0
        while j < n and ad[top[t0 + j]] != ad[x]:
            j += 1
        if j < n:
            if not _ranks_before(ad, score, x, top[t0 + j]):
                continue
            p = j
        elif n < length:
            p = n
            n += 1
        else:
            p = n - 1
        while p > 0 and _ranks_before(ad, score, x, top[t0 + p - 1]):
            top[t0 + p] = top[t0 + p - 1]
            p -= 1
        top[t0 + p] = x
    return n, below


@jit
def _merge_lists(ad, score, value, m, length, top, top_n, inst, act, grp, gmask,
                 e_inst, e_a, e_p, e_s, e_w):
    head = np.zeros(m, dtype=np.int64)
    n = 0
    while True:
        best = -1
        for i in range(m):
            if head[i] < top_n[i] and (best < 0 or _ranks_before(
                    ad, score, top[i * length + head[i]], top[best * length + head[best]])):
                best = i
        if best < 0:
            return n
        x = top[best * length + head[best]]
        head[best] += 1
        j = 0
        while j < n and ad[inst[j]] != ad[x]:
            j += 1
        inst[n] = x
        act[n] = best
        grp[n] = grp[j] if j < n else n
        if j == n:
            gmask[n] = 0
        e_inst[n] = x
        e_a[n] = np.int64(1) << best
        e_p[n] = gmask[grp[n]]
        e_s[n] = score[x]
        e_w[n] = value[x]
        gmask[grp[n]] |= np.int64(1) << best
        n += 1


@jit
def _heap_sift(ad, pr, inst, heap, size, p):
    while True:
        c = 2 * p + 1
        if c >= size:
            return
        if c + 1 < size and _preranks_before(ad, pr, inst[heap[c]], inst[heap[c + 1]]):
            c += 1
        if not _preranks_before(ad, pr, inst[heap[p]], inst[heap[c]]):
            return
        t = heap[p]
        heap[p] = heap[c]
        heap[c] = t
        p = c


@jit
def _rank_pool(ad, score, pr, reserve, capacity, n, S, stamp, limit,
               inst, act, grp, gstamp, pool, heap, pick):
    np_ = 0
    k = 0
    for j in range(n):
        if not (S >> act[j]) & 1 or gstamp[grp[j]] == stamp:
            continue
        gstamp[grp[j]] = stamp
        if capacity == 0:
            if score[inst[j]] < reserve or k == limit:
                return k
            pick[k] = j
            k += 1
        else:
            pool[np_] = j
            np_ += 1
    if capacity == 0:
        return k
    weakest = -1
    if np_ > capacity:
        for t in range(capacity):
            heap[t] = pool[t]
        for t in range(capacity // 2 - 1, -1, -1):
            _heap_sift(ad, pr, inst, heap, capacity, t)
        for t in range(capacity, np_):
            if _preranks_before(ad, pr, inst[pool[t]], inst[heap[0]]):
                heap[0] = pool[t]
                _heap_sift(ad, pr, inst, heap, capacity, 0)
        weakest = inst[heap[0]]
    for t in range(np_):
        if k >= limit:
            break
        x = inst[pool[t]]
        if weakest >= 0 and _preranks_before(ad, pr, weakest, x):
            continue
        if score[x] < reserve:
            break
        pick[k] = pool[t]
        k += 1
    return k


@jit
def _earning(value, gsp, reserve, x, scores, q, k, tail):
    if not gsp:
        return value[x]
    return _gsp_price(scores[q], scores[q + 1] if q + 1 < k else tail, reserve)


@jit
def _hash_slot(h_ad, h_stamp, h_bits, a, stamp):
    mask = (np.int64(1) << h_bits) - 1
    h = np.int64((np.uint64(a) * GOLDEN) >> np.uint64(64 - h_bits))
    while h_stamp[h] == stamp and h_ad[h] != a:
        h = (h + 1) & mask
    return h


@jit
def _ranked_prefix(ad, score, value, gsp, reserve, m, length, wanted, off, top, top_n, below,
                   h_ad, h_ent, h_stamp, h_bits, stamp, e_inst, e_a, e_s, e_w):
    need = np.empty(m)
    bound = np.inf
    tail = -np.inf
    for i in range(m):
        if off[i + 1] == off[i]:
            need[i] = np.inf
        elif top_n[i] >= wanted:
            need[i] = score[top[i * length + wanted - 1]]
        elif below[i]:
            need[i] = -np.inf
        else:
            need[i] = score[top[i * length + top_n[i] - 1]]
        if need[i] < bound:
            bound = need[i]
    if bound == np.inf:
        return -1
    if bound < reserve:
        bound = reserve
    n = 0
    for i in range(m):
        for x in range(off[i], off[i + 1]):
            h = _hash_slot(h_ad, h_stamp, h_bits, ad[x], stamp)
            if h_stamp[h] != stamp:
                h_stamp[h] = stamp
                h_ad[h] = ad[x]
                h_ent[h] = n
                e_inst[n] = x
                e_a[n] = np.int64(1) << i
                n += 1
            else:
                q = h_ent[h]
                e_a[q] |= np.int64(1) << i
                if score[x] > score[e_inst[q]]:
                    e_inst[q] = x
    kept = 0
    for q in range(n):
        s = score[e_inst[q]]
        a = e_a[q]
        keep = s >= bound
        if not gsp:
            through = False
            for i in range(m):
                through |= ((a >> i) & 1) == 1 and s >= need[i]
            keep &= through
        tail = s if s < bound and s > tail else tail
        e_inst[kept] = e_inst[q]
        e_a[kept] = a
        e_s[kept] = s
        kept += keep
    n = kept
    for q in range(1, n):
        xi = e_inst[q]
        ai = e_a[q]
        adi = ad[xi]
        si = e_s[q]
        p = q
        while p > 0 and (si > e_s[p - 1] or (si == e_s[p - 1] and adi < ad[e_inst[p - 1]])):
            e_inst[p] = e_inst[p - 1]
            e_a[p] = e_a[p - 1]
            e_s[p] = e_s[p - 1]
            p -= 1
        e_inst[p] = xi
        e_a[p] = ai
        e_s[p] = si
    for q in range(n):
        e_w[q] = _earning(value, gsp, reserve, e_inst[q], e_s, q, n, tail)
    return n


@jit
def _relevant_entries(m, slots, n, e_inst, e_a, e_p, e_s, e_w):
    count = np.zeros(m, dtype=np.int64)
    kept = 0
    for q in range(n):
        a = e_a[q]
        relevant = 0
        for i in range(m):
            bit = (a >> i) & 1
            relevant |= bit & (1 if count[i] < slots else 0)
            count[i] += bit
        e_inst[kept] = e_inst[q]
        e_a[kept] = a
        e_p[kept] = 0
        e_s[kept] = e_s[q]
        e_w[kept] = e_w[q]
        kept += relevant
    return kept


@jit
def _coalition_sums(ad, reserve, m, slots, quota, n, lagged, e_inst, e_a, e_p, e_s, e_w, cnt,
                    prev, y, win, win_ad, win_earn):
    n_masks = 1 << m
    for S in range(n_masks):
        y[S] = 0.0
        cnt[S] = 0
        prev[S] = 0.0
    for j in range(n):
        a = e_a[j]
        p = e_p[j]
        s = e_s[j]
        w = e_w[j]
        if win:
            for S in range(n_masks):
                if (S & a) and not (S & p) and cnt[S] < quota:
                    win_ad[S, cnt[S]] = ad[e_inst[j]]
                    win_earn[S, cnt[S]] = w
        if lagged:
            for S in range(n_masks):
                take = (S & a) != 0 and (S & p) == 0 and cnt[S] < quota
                price = _gsp_price(prev[S], s, reserve)  # unconditional: the loop vectorises
                y[S] += price if take and cnt[S] > 0 else 0.0
                prev[S] = s if take else prev[S]
                cnt[S] += take
        else:
            for S in range(n_masks):
                take = (S & a) != 0 and (S & p) == 0 and cnt[S] < quota
                y[S] += w if take else 0.0
                cnt[S] += take
    if lagged:
        for S in range(n_masks):
            y[S] += (_gsp_price(prev[S], -np.inf, reserve)
                     if cnt[S] > 0 and cnt[S] <= slots else 0.0)


@jit
def replay(offsets, ad_id, score, value, prerank, m, start, stop, slots, reserve, capacity,
           pricing, mode, out, win_ad, win_earn):
    if start == stop:
        return
    n_max = 1
    a_max = 1
    for r in range(start, stop):
        n_max = max(n_max, offsets[(r + 1) * m] - offsets[r * m])
        for i in range(m):
            a_max = max(a_max, offsets[r * m + i + 1] - offsets[r * m + i])
    gsp = pricing == PRICING_GSP
    wanted = slots + (1 if gsp else 0)
    length = a_max if capacity else min(wanted, a_max)
    floor = -np.inf if capacity else reserve
    pr = prerank if prerank.shape[0] else score
    n_masks = 1 << m
    full = n_masks - 1
    win = win_ad.shape[1] == n_masks
    h_bits = 1
    while (1 << h_bits) < 2 * n_max:
        h_bits += 1
    size = m * length
    ranked = max(n_max, size)
    top = np.zeros(size, dtype=np.int64)
    top_n = np.zeros(m, dtype=np.int64)
    below = np.zeros(m, dtype=np.int64)
    inst = np.zeros(size, dtype=np.int64)
    act = np.zeros(size, dtype=np.int64)
    grp = np.zeros(size, dtype=np.int64)
    gmask = np.zeros(size, dtype=np.int64)
    gstamp = np.zeros(size, dtype=np.int64)
    pool = np.zeros(size, dtype=np.int64)
    heap = np.zeros(size, dtype=np.int64)
    pick = np.zeros(size, dtype=np.int64)
    e_inst = np.zeros(ranked, dtype=np.int64)
    e_a = np.zeros(ranked, dtype=np.int64)
    e_p = np.zeros(ranked, dtype=np.int64)
    e_s = np.zeros(ranked)
    e_w = np.zeros(ranked)
    h_ad = np.zeros(1 << h_bits, dtype=np.int64)
    h_ent = np.zeros(1 << h_bits, dtype=np.int64)
    h_stamp = np.zeros(1 << h_bits, dtype=np.int64)
    cnt = np.zeros(n_masks, dtype=np.int64)
    prev = np.zeros(n_masks)
    for r in range(start, stop):
        off = offsets[r * m:(r + 1) * m + 1]
        y = out[r]
        wa = win_ad[r if win else 0]
        we = win_earn[r if win else 0]
        if win:
            wa[:, :] = -1
            we[:, :] = 0.0
        for i in range(m):
            top_n[i], below[i] = _best_distinct(ad_id, score, floor, length, off[i], off[i + 1],
                                                top, i * length)
        if mode == MODE_RERUN:
            n = _merge_lists(ad_id, score, value, m, length, top, top_n, inst, act, grp, gmask,
                             e_inst, e_a, e_p, e_s, e_w)
            if capacity or win:
                _rerun_table(ad_id, score, value, pr, gsp, reserve, capacity, m, slots, wanted,
                             n, r * n_masks, inst, act, grp, gstamp, pool, heap, pick, e_s,
                             y, win, wa, we)
            else:
                _coalition_sums(ad_id, reserve, m, slots, wanted, n, gsp, e_inst, e_a, e_p,
                                e_s, e_w, cnt, prev, y, False, wa, we)
            continue
        if capacity:
            n = _merge_lists(ad_id, score, value, m, length, top, top_n, inst, act, grp, gmask,
                             e_inst, e_a, e_p, e_s, e_w)
            n = _ranked_full(ad_id, score, value, pr, gsp, reserve, capacity, full,
                             r * n_masks + 1, n, inst, act, grp, gmask, gstamp, pool, heap,
                             pick, e_inst, e_a, e_s, e_w)
        else:
            n = _ranked_prefix(ad_id, score, value, gsp, reserve, m, length, wanted, off, top,
                               top_n, below, h_ad, h_ent, h_stamp, h_bits, r + 1, e_inst,
                               e_a, e_s, e_w)
        n = _relevant_entries(m, slots, n, e_inst, e_a, e_p, e_s, e_w) if n >= 0 else 0
        _coalition_sums(ad_id, reserve, m, slots, slots, n, False, e_inst, e_a, e_p, e_s, e_w,
                        cnt, prev, y, win, wa, we)


@jit
def _ranked_full(ad, score, value, pr, gsp, reserve, capacity, full, stamp, n_merged, inst,
                 act, grp, gmask, gstamp, pool, heap, pick, e_inst, e_a, e_s, e_w):
    k = _rank_pool(ad, score, pr, reserve, capacity, n_merged, full, stamp, n_merged, inst,
                   act, grp, gstamp, pool, heap, pick)
    for q in range(k):
        e_inst[q] = inst[pick[q]]
        e_a[q] = gmask[grp[pick[q]]]
        e_s[q] = score[e_inst[q]]
    for q in range(k):
        e_w[q] = _earning(value, gsp, reserve, e_inst[q], e_s, q, k, -np.inf)
    return k


@jit
def _rerun_table(ad, score, value, pr, gsp, reserve, capacity, m, slots, wanted, n_merged,
                 stamp0, inst, act, grp, gstamp, pool, heap, pick, e_s, y, win, win_ad,
                 win_earn):
    y[0] = 0.0
    for S in range(1, 1 << m):
        total = 0.0
        k = _rank_pool(ad, score, pr, reserve, capacity, n_merged, S, stamp0 + S, wanted, inst,
                       act, grp, gstamp, pool, heap, pick)
        for q in range(k):
            e_s[q] = score[inst[pick[q]]]
        for q in range(min(k, slots)):
            x = inst[pick[q]]
            e = _earning(value, gsp, reserve, x, e_s, q, k, -np.inf)
            total += e
            if win:
                win_ad[S, q] = ad[x]
                win_earn[S, q] = e
        y[S] = total
