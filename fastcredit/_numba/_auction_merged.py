"""The paths on the merged action lists (C's merge_lists): rerun mode, and
filter mode with a capacity. Each action keeps its best ads by its own
scores (all of them with a capacity, which nothing may cut), the kept
lists are merged into one ranked list, and the pipeline then runs on each
coalition's pool (rerun) or once on the full pool (filter)."""
import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from .._constants import MODE_RERUN
from ._auction_select import MERGE_LANES_MAX, count_ranks, gsp_price, rank_by_key, select_lists
from ._auction_sums import coalition_sums, coalition_winners
from ._simd import load8, prefer_512_bit_vectors, prefetch
from ._simd_lanes import bits8, first_lanes

jit = njit(cache=True, nogil=True)


@jit
def kept_items(ad, score, m, length, top, top_n, pick, pool, ks, ka):
    """The kept items of the action lists side by side: item q is pick[q]
    of action pool[q], key (ks[q], ka[q]); returns their number n."""
    n = 0
    for i in range(m):
        for j in range(top_n[i]):
            x = top[i * length + j]
            pick[n] = x
            pool[n] = i
            ks[n] = score[x]
            ka[n] = ad[x]
            n += 1
    return n


@jit
def place_ranked(pick, pool, ka, rank, n, inst, act, ra, gmask):
    """Item q to its ranked position rank[q]: the merged lists' instance
    inst, action act and ad ra there; gmask cleared."""
    for q in range(n):
        inst[rank[q]] = pick[q]
        act[rank[q]] = pool[q]
        ra[rank[q]] = ka[q]
        gmask[q] = 0


@jit
def _earlier_of_ad(ra, act, q):
    """The first ranked position of the ad ra[q] (ads in rank order) and the
    actions of its positions before q, found by comparing ra[q] with the
    ads before it 8 at a time (ra holds q rounded up to 8)."""
    a = ra[q]
    first = q
    earlier = 0
    for v in range(0, q, 8):
        hits = bits8(first_lanes(q - v) & (load8(ra, v) == a))
        if hits:  # an ad kept by several actions (rare)
            first = min(first, v + trailing_zeros(hits))
            while hits:
                earlier |= np.int64(1) << act[v + trailing_zeros(hits)]
                hits &= hits - 1
    return first, earlier


@jit
def merged_entries(score, value, n, inst, act, ra, grp, gmask, e_inst, e_a, e_p, e_s, e_w):
    """The merged lists' groups (an ad's first position grp, whose gmask ORs
    the actions that kept it) and entries (e_a: the position's action, e_p:
    its ad's earlier actions), as merge_lists in csrc/auction.c."""
    prefer_512_bit_vectors()
    for q in range(n):
        x = inst[q]
        first, earlier = _earlier_of_ad(ra, act, q)
        grp[q] = first
        gmask[first] |= np.int64(1) << act[q]
        e_inst[q] = x
        e_a[q] = np.int64(1) << act[q]
        e_p[q] = earlier
        e_s[q] = score[x]
        e_w[q] = value[x]


@jit
def _preranks_before(ad, pr, x, y):
    if pr[x] != pr[y]:
        return pr[x] > pr[y]
    return ad[x] < ad[y]


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
def _rank_pool(score, reserve, n, S, stamp, limit, inst, act, grp, gstamp, pick):
    """rank_pool of csrc/auction.c without capacity: the first `limit`
    ranked ads of pool(S) at or above the reserve, as merged positions in
    pick; returns how many. Without the capacity's arrays (_capped_pool),
    which this path would leave unused, and with no break out of its loop
    (see the module docstring)."""
    k = 0
    j = 0
    below = False  # an ad below the reserve: the ads after it are too
    while j < n and k < limit and not below:
        if (S >> act[j]) & 1 and gstamp[grp[j]] != stamp:
            gstamp[grp[j]] = stamp
            below = score[inst[j]] < reserve
            if not below:
                pick[k] = j
                k += 1
        j += 1
    return k


@jit
def _capped_pool(ad, score, pr, reserve, capacity, n, S, stamp, limit, inst, act, grp, gstamp,
                 pool, heap, pick):
    """rank_pool of csrc/auction.c with capacity > 0."""
    np_ = 0
    for j in range(n):
        if not (S >> act[j]) & 1 or gstamp[grp[j]] == stamp:
            continue
        gstamp[grp[j]] = stamp
        pool[np_] = j
        np_ += 1
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
    k = 0
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
    return gsp_price(scores[q], scores[q + 1] if q + 1 < k else tail, reserve)


@jit
def _ranked_full(ad, score, value, pr, gsp, reserve, capacity, full, stamp, n_merged, inst,
                 act, grp, gmask, gstamp, pool, heap, pick, e_inst, e_a, e_s, e_w):
    k = _capped_pool(ad, score, pr, reserve, capacity, n_merged, full, stamp, n_merged, inst,
                     act, grp, gstamp, pool, heap, pick)
    for q in range(k):
        e_inst[q] = inst[pick[q]]
        e_a[q] = gmask[grp[pick[q]]]
        e_s[q] = score[e_inst[q]]
    for q in range(k):
        e_w[q] = _earning(value, gsp, reserve, e_inst[q], e_s, q, k, -np.inf)
    return k


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
def _rerun_table(ad, score, value, pr, gsp, reserve, capacity, m, slots, wanted, n_merged,
                 stamp0, inst, act, grp, gstamp, pool, heap, pick, e_s, out, row, win, win_ad,
                 win_earn):
    out[row, 0] = 0.0
    for S in range(1, 1 << m):
        total = 0.0
        if capacity:
            k = _capped_pool(ad, score, pr, reserve, capacity, n_merged, S, stamp0 + S, wanted,
                             inst, act, grp, gstamp, pool, heap, pick)
        else:
            k = _rank_pool(score, reserve, n_merged, S, stamp0 + S, wanted, inst, act, grp,
                           gstamp, pick)
        for q in range(k):
            e_s[q] = score[inst[pick[q]]]
        for q in range(min(k, slots)):
            x = inst[pick[q]]
            e = _earning(value, gsp, reserve, x, e_s, q, k, -np.inf)
            total += e
            if win:
                win_ad[row, S, q] = ad[x]
                win_earn[row, S, q] = e
        out[row, S] = total


@jit
def replay_merged(offsets, ad_id, score, value, pr, m, start, stop, slots, reserve, capacity,
                  gsp, mode, length, floor, n_max, out, win, win_ad, win_earn):
    """Requests start..stop-1 of rerun mode, or of filter mode with a
    capacity (replay's arguments; length: the ads each action keeps, floor:
    the score below which none is kept, n_max: the most instances of a
    request)."""
    wanted = slots + (1 if gsp else 0)
    n_masks = 1 << m
    full = n_masks - 1
    size = m * length
    ranked = max(n_max, size)
    top = np.zeros(size, dtype=np.int64)
    top_n = np.zeros(m, dtype=np.int64)
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
    cnt = np.zeros(n_masks, dtype=np.int64)
    top_s = np.zeros(length)
    top_a = np.zeros(length, dtype=np.int64)
    lanes = size + 7  # the merge's workspaces: m * length items in vectors of 8
    ks = np.zeros(lanes)
    ka = np.zeros(lanes, dtype=np.int64)
    rank = np.zeros(lanes, dtype=np.int64)
    ra = np.zeros(lanes, dtype=np.int64)
    for r in range(start, stop):
        if win:
            win_ad[r] = -1
            win_earn[r] = 0.0
        if r + 1 < stop:  # as csrc/auction.c's replay_range says why
            prefetch(value, offsets[(r + 1) * m], offsets[(r + 2) * m])
        select_lists(score, ad_id, top, False, offsets, r * m, m, length, floor, top, top_n,
                     top_s, top_a)
        # merge_lists of csrc/auction.c (on AVX-512) in steps, each a
        # function whose arrays all die at its end: llvmlite's refprune then
        # drops their reference counts, which it keeps (atomic, ~30 per
        # request) in a function whose arrays die at different calls
        n = kept_items(ad_id, score, m, length, top, top_n, pick, pool, ks, ka)
        if n > MERGE_LANES_MAX or not count_ranks(ks, n, rank):  # a tie of scores
            rank_by_key(ks, ka, pick, n, rank)
        place_ranked(pick, pool, ka, rank, n, inst, act, ra, gmask)
        merged_entries(score, value, n, inst, act, ra, grp, gmask, e_inst, e_a, e_p, e_s, e_w)
        if mode == MODE_RERUN:
            if capacity or win:
                _rerun_table(ad_id, score, value, pr, gsp, reserve, capacity, m, slots, wanted,
                             n, r * n_masks, inst, act, grp, gstamp, pool, heap, pick, e_s,
                             out, r, win, win_ad, win_earn)
            else:
                coalition_sums(reserve, m, slots, wanted, n, gsp, e_a, e_p, e_s, e_w, out, r)
            continue
        n = _ranked_full(ad_id, score, value, pr, gsp, reserve, capacity, full, r * n_masks + 1,
                         n, inst, act, grp, gmask, gstamp, pool, heap, pick, e_inst, e_a, e_s,
                         e_w)
        n = _relevant_entries(m, slots, n, e_inst, e_a, e_p, e_s, e_w)
        if win:
            coalition_winners(ad_id, m, slots, n, e_inst, e_a, e_p, e_w, cnt, out, r, win_ad,
                              win_earn)
        else:
            coalition_sums(reserve, m, slots, slots, n, False, e_a, e_p, e_s, e_w, out, r)
