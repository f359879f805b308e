"""Numba kernels of the auction family: the algorithm of csrc/auction.c, step
for step and in the same summation order (see the proofs of the per-action
cuts there). An action's best ads are selected by extraction from 8-lane
vectors (_simd, _simd_lanes) as in C's extract_step, three lists side by side; lists of
more than 32 items or more than 8 kept ads by the scalar insertion of C's
select_scalar. The kept lists are merged as C's merge_lists on AVX-512
machines (ranks counted by score 8 items at a time, an item's earlier items
of its ad found 8 at a time); the coalition sums take 32 coalitions at a
time in 8-lane vectors, as C's.

A function called once per request takes its arrays without Numba's
reference counts (atomic operations) only if llvmlite's refprune pass can
drop them, which it does when all of them die together at its one exit:
no view made per request (whole arrays and an index instead), no path that
leaves an array unused (Numba frees it at that path's start, and at a
break out of a loop frees them all), and no call
of a jitted function that LLVM does not inline (its error status is an
exit of its own). Hence steps called in turn from the request loop, not
one function that calls them, and the choices between steps made there.

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
from numba.cpython.unsafe.numbers import trailing_zeros

from .._constants import MODE_RERUN, PRICING_GSP
from ._simd import (choose, lane, load8, opaque, prefer_512_bit_vectors, prefetch, store_lanes,
                    zeros8)
from ._simd_lanes import (bits8, first_lanes, gather8, lanes8, load_lanes8, max_lanes, min_lanes,
                          select8, splat8)
from .rng import GOLDEN

__all__ = ["replay"]

jit = njit(cache=True, nogil=True)
# Inlined into the caller by Numba: a call of a jitted function that is not
# inlined (LLVM leaves large ones) gives the caller an exit that propagates
# the callee's error status, past which refprune cannot drop the caller's
# reference counts (atomic operations at each call of the caller). Only for
# a function whose own calls LLVM inlines: Numba's inlining counts
# references to its arguments, which otherwise stay, in the caller's loop.
inline_jit = njit(cache=True, nogil=True, inline="always")
# The ad of the padding key (-inf, _PAD_AD) that every scalar kept list starts
# as, and of the lanes outside a tie of scores in _extract_step.
_PAD_AD = np.iinfo(np.int64).max
# Items a list may have to be selected by extraction (EXTRACT_MAX in C).
_EXTRACT_MAX = 32
# Kept items the merge may rank by score alone (their ranks are bits of an int64).
_MERGE_LANES_MAX = 64
# log2 of the most slots a hash table is kept 1/8 full with (HASH_BITS_SPARSE in C).
_HASH_BITS_SPARSE = 10


@jit
def _key_before(sx, ax, sy, ay):
    """Whether key (sx, ax) ranks before (sy, ay): score desc, then ad asc."""
    return (sx > sy) | ((sx == sy) & (ax < ay))  # no branch: the counts vectorise


@jit
def _preranks_before(ad, pr, x, y):
    if pr[x] != pr[y]:
        return pr[x] > pr[y]
    return ad[x] < ad[y]


@jit
def _gsp_price(own, nxt, reserve):
    p = nxt if nxt > reserve else reserve
    return p if p < own else own


@inline_jit
def _select(ks, ka, kmap, use_map, lo, hi, rel, length, floor, top, t0, top_s, top_a):
    """top[t0:t0+length] <- keys k of the best distinct ads of items lo..hi-1
    (k = kmap[rel + x - lo] with use_map, else x; key (ks[k], ka[k])) at or above
    floor; returns their count. Of two items of one ad the first of the
    higher score counts; k < 0 marks an item to skip (a map marks so the
    repeats of a key, so that with a map no ad is kept twice). An insertion
    per item, as C's select_scalar; the kept keys' scores and ads sit in
    top_s / top_a (workspaces of length) beside top, padded with keys
    (-inf, INT64_MAX) that every item ranks before."""
    for j in range(length):
        top_s[j] = -np.inf
        top_a[j] = _PAD_AD
    last = length - 1
    for x in range(lo, hi):
        k = kmap[rel + x - lo] if use_map else x
        if k < 0:
            continue
        s = ks[k]
        a = ka[k]
        if s < floor or not _key_before(s, a, top_s[last], top_a[last]):
            continue
        p = last
        if not use_map:
            j = 0
            while j < last and top_a[j] != a:
                j += 1
            if top_a[j] == a:
                if not s > top_s[j]:
                    continue
                p = j  # the ad's better item takes its place, then moves up
        while p > 0 and _key_before(s, a, top_s[p - 1], top_a[p - 1]):
            top[t0 + p] = top[t0 + p - 1]
            top_s[p] = top_s[p - 1]
            top_a[p] = top_a[p - 1]
            p -= 1
        top[t0 + p] = k
        top_s[p] = s
        top_a[p] = a
    n = 0
    for j in range(length):
        n += top_s[j] > -np.inf
    return n


@jit
def _list_lanes(ks, ka, kmap, use_map, x, rest, floor):
    """Items x .. x + min(rest, 8) - 1 of a list as vectors of scores and of
    what tells the items' ads apart: the ads, or with use_map the keys k
    (x indexes kmap; a map gives each ad one key and skips its repeats, so
    a key stands for its ad and no ad need be gathered). Absent items,
    repeats and items below floor score -inf."""
    if rest <= 0:  # no gather (a few cycles even with no lane to read)
        return splat8(-np.inf), splat8(-1)
    if use_map:
        ids = load_lanes8(kmap, x, rest, -1)
        s = gather8(ks, ids, ids >= 0, -np.inf)
    else:
        s = load_lanes8(ks, x, rest, -np.inf)
        ids = load_lanes8(ka, x, rest, 0)
    return select8(s >= floor, s, -np.inf), ids


@jit
def _list_vectors(ks, ka, kmap, use_map, lo, hi, rel, floor):
    """The items lo .. hi-1 (at most _EXTRACT_MAX; rel: lo's place in kmap)
    in 4 pairs of 8-lane vectors (_list_lanes): scores S, ads or keys D."""
    x = rel if use_map else lo
    S0, D0 = _list_lanes(ks, ka, kmap, use_map, x, hi - lo, floor)
    S1, D1 = _list_lanes(ks, ka, kmap, use_map, x + 8, hi - lo - 8, floor)
    S2, D2 = _list_lanes(ks, ka, kmap, use_map, x + 16, hi - lo - 16, floor)
    S3, D3 = _list_lanes(ks, ka, kmap, use_map, x + 24, hi - lo - 24, floor)
    return (S0, S1, S2, S3), (D0, D1, D2, D3)


@jit
def _higher(x, y):
    return select8(x > y, x, y)


@jit
def _lower(x, y):
    return select8(x < y, x, y)


@jit
def _tied_ads(e, D, ka, use_map):
    """The ads of the lanes set in e (ads D, or keys D with use_map), the
    others _PAD_AD."""
    return gather8(ka, D, e, _PAD_AD) if use_map else select8(e, D, _PAD_AD)


@jit
def _extract_step(S, D, ka, kmap, use_map, lo, rel):
    """extract_step of csrc/auction.c on a list in vectors
    (_list_vectors): the key of the best item left - the highest score, then
    the lowest ad of its lanes, then the first lane, which is the ad's first
    item of that score - or -1 when none is left, and S with every item of
    its ad scored -inf."""
    S0, S1, S2, S3 = S
    D0, D1, D2, D3 = D
    best = max_lanes(_higher(_higher(S0, S1), _higher(S2, S3)))
    if lane(best, 0) == -np.inf:  # the list is used up
        return -1, S
    e0 = S0 == best
    e1 = S1 == best
    e2 = S2 == best
    e3 = S3 == best
    lanes = bits8(e0) | bits8(e1) << 8 | bits8(e2) << 16 | bits8(e3) << 24
    if lanes & (lanes - 1):  # a tie of scores: the lowest ad
        A0 = _tied_ads(e0, D0, ka, use_map)
        A1 = _tied_ads(e1, D1, ka, use_map)
        A2 = _tied_ads(e2, D2, ka, use_map)
        A3 = _tied_ads(e3, D3, ka, use_map)
        low = min_lanes(_lower(_lower(A0, A1), _lower(A2, A3)))
        lanes = (bits8(e0 & (A0 == low)) | bits8(e1 & (A1 == low)) << 8
                 | bits8(e2 & (A2 == low)) << 16 | bits8(e3 & (A3 == low)) << 24)
    p = trailing_zeros(lanes)
    k = kmap[rel + p] if use_map else lo + p
    d = splat8(k if use_map else ka[k])
    return k, (select8(D0 == d, -np.inf, S0), select8(D1 == d, -np.inf, S1),
               select8(D2 == d, -np.inf, S2), select8(D3 == d, -np.inf, S3))


@jit
def _group_vectors(ks, ka, kmap, use_map, offsets, o, i, floor):
    """_list_vectors of list i (offsets[o+i] .. offsets[o+i+1]-1), or of an
    empty list when i < 0 (absent)."""
    lo = offsets[o + max(i, 0)]
    hi = offsets[o + i + 1] if i >= 0 else lo
    return _list_vectors(ks, ka, kmap, use_map, lo, hi, lo - offsets[o], floor)


@inline_jit
def _extract_group(ks, ka, kmap, use_map, offsets, o, i0, i1, i2, length, floor, top, top_n):
    """_select of lists i0, i1, i2 (-1: absent) by extraction, side by side
    as C's select_lists_avx512 (EXTRACT_GROUP 3): a step waits on its lane
    reductions, which the other lists' steps fill. The three steps are
    written out and the loop has one exit: a helper function per step, or a
    break, left atomic reference counts of the arrays per step or call
    (llvmlite's refprune drops them only when they all die at one end)."""
    prefer_512_bit_vectors()
    S0, D0 = _group_vectors(ks, ka, kmap, use_map, offsets, o, i0, floor)
    S1, D1 = _group_vectors(ks, ka, kmap, use_map, offsets, o, i1, floor)
    S2, D2 = _group_vectors(ks, ka, kmap, use_map, offsets, o, i2, floor)
    n0 = 0 if i0 >= 0 else -1  # an absent list is never at step n
    n1 = 0 if i1 >= 0 else -1
    n2 = 0 if i2 >= 0 else -1
    got = 0
    while got < length and max(n0, n1, n2) == got:  # no break (docstring)
        if n0 == got:
            lo = offsets[o + i0]
            k, S0 = _extract_step(S0, D0, ka, kmap, use_map, lo, lo - offsets[o])
            top[i0 * length + got] = k
            n0 += k >= 0
        if n1 == got:
            lo = offsets[o + i1]
            k, S1 = _extract_step(S1, D1, ka, kmap, use_map, lo, lo - offsets[o])
            top[i1 * length + got] = k
            n1 += k >= 0
        if n2 == got:
            lo = offsets[o + i2]
            k, S2 = _extract_step(S2, D2, ka, kmap, use_map, lo, lo - offsets[o])
            top[i2 * length + got] = k
            n2 += k >= 0
        got += 1
    if i0 >= 0:
        top_n[i0] = n0
    if i1 >= 0:
        top_n[i1] = n1
    if i2 >= 0:
        top_n[i2] = n2


@jit
def _select_lists(ks, ka, kmap, use_map, offsets, o, m, length, floor, top, top_n, top_s,
                  top_a):
    """_select on every action's items (action i: offsets[o+i] ..
    offsets[o+i+1]-1, keys into top[i*length:], counts into top_n[i]; kmap
    indexed from offsets[o]): lists of at most _EXTRACT_MAX items by
    extraction three at a time when length <= 8 (C: on AVX-512 machines),
    others by the scalar insertion."""
    i0 = i1 = i2 = -1
    for i in range(m):
        lo = offsets[o + i]
        hi = offsets[o + i + 1]
        if length > 8 or hi - lo > _EXTRACT_MAX:
            top_n[i] = _select(ks, ka, kmap, use_map, lo, hi, lo - offsets[o], length, floor, top,
                               i * length, top_s, top_a)
        elif i0 < 0:
            i0 = i
        elif i1 < 0:
            i1 = i
        else:
            i2 = i
        if i2 >= 0 or (i == m - 1 and i0 >= 0):  # one call: inlined once
            _extract_group(ks, ka, kmap, use_map, offsets, o, i0, i1, i2, length, floor, top,
                           top_n)
            i0 = i1 = i2 = -1


@jit
def _kept_items(ad, score, m, length, top, top_n, pick, pool, ks, ka):
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
def _rank_by_key(ks, ka, pick, n, rank):
    """rank[q] <- the number of the n items (_kept_items, or filter mode's
    union) before item q by the full key: score desc, ad asc, item index
    (pick) asc; with no branch, so that the count vectorises. Needed only
    where _count_ranks cannot rank the items by score alone (more than 64,
    or a tie of scores, rare): C's rank_keys."""
    for q in range(n):
        x = pick[q]
        ax = ka[q]
        sx = ks[q]
        before = 0
        for r in range(n):
            y = pick[r]
            ay = ka[r]
            sy = ks[r]
            before += (sy > sx) | ((sy == sx) & ((ay < ax) | ((ay == ax) & (y < x))))
        rank[q] = before


@jit
def _place_ranked(pick, pool, ka, rank, n, inst, act, ra, gmask):
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
def _merged_entries(score, value, n, inst, act, ra, grp, gmask, e_inst, e_a, e_p, e_s, e_w):
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
    return _gsp_price(scores[q], scores[q + 1] if q + 1 < k else tail, reserve)


@jit
def _count_ranks(s, n, rank):
    """rank[q] <- how many of s[0..n-1] exceed s[q] (n <= 64), counted for 8
    items at a time (C's count_ranks); returns whether no two items share a
    rank (no equal scores), else the caller counts the full key."""
    prefer_512_bit_vectors()
    for v in range(0, n, 8):
        k = min(8, n - v)
        c = load_lanes8(s, v, k, 0.0)
        above = splat8(0)
        for q in range(n):
            above = select8(s[q] > c, above + 1, above)
        store_lanes(rank, v, above, k)
    placed = 0
    for q in range(n):
        placed |= np.int64(1) << rank[q]
    return placed == (-1 if n == 64 else (np.int64(1) << n) - 1)


@jit
def _count_before(e_s, e_ad, n, g, a, n_in, counted):
    """counted[j] = how many of the n ranked entries (e_s, e_ad) have a key
    before (g[j], a[j]), 8 ads at a time (C's count_before)."""
    for j in range(0, n_in, 8):
        k = min(8, n_in - j)
        gv = load_lanes8(g, j, k, 0.0)
        av = load_lanes8(a, j, k, np.int64(0))
        before = splat8(0)
        for q in range(n):
            ahead = (e_s[q] > gv) | ((e_s[q] == gv) & (av > e_ad[q]))
            before = select8(ahead, before + 1, before)
        store_lanes(counted, j, before, k)


@jit
def _hash_ads(ad, score, m, offsets, o, h_bits, h_ad, h_g, h_best, h_acts, slot_of, used):
    """Every ad of the request (instances offsets[o] .. offsets[o+m]-1) into
    the (empty) hash table with its best score and instance;
    slot_of[x - offsets[o]] is x's slot, or ~slot when an earlier instance
    of x's action has the same ad; used[] the distinct slots, whose number
    is returned. A slot is empty when h_acts is 0 and then holds
    h_g = -inf, as in csrc/auction.c."""
    # unsigned indices: Numba tests a signed index for wrapping around
    # (negative from the end), which costs registers and instructions here
    mask = np.uint64((1 << h_bits) - 1)
    lo = offsets[o]
    n = np.uint64(0)
    for i in range(m):
        for x in range(np.uint64(offsets[o + i]), np.uint64(offsets[o + i + 1])):
            a = ad[x]
            s = score[x]
            h = (np.uint64(a) * GOLDEN) >> np.uint64(64 - h_bits)
            # one branch, taken only on a slot holding another ad; every load
            # unconditional and every choice a bit mask, as in csrc/auction.c's
            # hash_ads, so that no branch depends on the data (the masks
            # opaque: LLVM would make branches of them again)
            while opaque(-np.int64(h_acts[h] != 0)) & (h_ad[h] ^ a):
                h = (h + np.uint64(1)) & mask
            acts = h_acts[h]
            g = h_g[h]
            up = opaque(-np.int64(s > g))
            h_ad[h] = a
            h_best[h] = (np.int64(x) & up) | (h_best[h] & ~up)
            h_g[h] = choose(up, s, g)
            h_acts[h] = acts | (np.int64(1) << i)
            slot_of[x - lo] = np.int64(h) ^ -((acts >> i) & 1)  # ~h for a repeat
            used[n] = h
            n += np.uint64(acts == 0)
    return np.int64(n)


@jit
def _replay_union(offsets, ad, score, value, m, start, stop, slots, reserve, gsp, length, n_max,
                  out, win, win_ad, win_earn):
    """Filter, capacity 0, requests start..stop-1: per request U of the proof
    in csrc/auction.c as entries (mask', best score, earnings) in rank order,
    then the coalition sums. The workspaces are allocated here and U is built
    in this loop, not in a callee: a callee taking the ~30 workspaces cost
    about a quarter of the request (there LLVM cannot tell that they do not
    alias)."""
    h_bits = 1  # at most 1/8 full up to _HASH_BITS_SPARSE, as csrc/auction.c says why
    while (1 << h_bits) < 2 * n_max or ((1 << h_bits) < 8 * n_max and h_bits < _HASH_BITS_SPARSE):
        h_bits += 1
    hsize = 1 << h_bits
    size = m * length
    ranked = max(n_max, size)
    n_masks = 1 << m
    h_ad = np.zeros(hsize, dtype=np.int64)
    h_best = np.zeros(hsize, dtype=np.int64)
    h_mask = np.zeros(hsize, dtype=np.int64)
    h_acts = np.zeros(hsize, dtype=np.int64)
    h_g = np.full(hsize, -np.inf)
    slot_of = np.zeros(n_max, dtype=np.int64)
    used = np.zeros(n_max, dtype=np.int64)
    top = np.zeros(size, dtype=np.int64)
    top_n = np.zeros(m, dtype=np.int64)
    pick = np.zeros(size, dtype=np.int64)
    rank = np.zeros(size, dtype=np.int64)
    e_ad = np.zeros(ranked, dtype=np.int64)
    e_inst = np.zeros(ranked, dtype=np.int64)
    e_a = np.zeros(ranked, dtype=np.int64)
    e_p = np.zeros(ranked, dtype=np.int64)
    e_s = np.zeros(ranked)
    e_w = np.zeros(ranked)
    after = np.zeros(ranked + 1)
    in_a = np.zeros(n_max, dtype=np.int64)
    in_g = np.zeros(n_max)
    counted = np.zeros(max(n_max, size), dtype=np.int64)
    cnt = np.zeros(n_masks, dtype=np.int64)
    top_s = np.zeros(length)
    top_a = np.zeros(length, dtype=np.int64)
    for req in range(start, stop):
        if win:
            win_ad[req] = -1
            win_earn[req] = 0.0
        if req + 1 < stop:  # as csrc/auction.c's replay_range says why
            prefetch(value, offsets[(req + 1) * m], offsets[(req + 2) * m])
        n_ads = _hash_ads(ad, score, m, offsets, req * m, h_bits, h_ad, h_g, h_best, h_acts,
                          slot_of, used)
        _select_lists(h_g, h_ad, slot_of, True, offsets, req * m, m, length, reserve, top, top_n,
                      top_s, top_a)
        n = 0
        for i in range(m):
            for j in range(top_n[i]):
                h = top[i * length + j]
                fresh = h_mask[h] == 0
                h_mask[h] |= np.int64(1) << i
                pick[n] = h
                n += fresh
        for q in range(n):  # the keys side by side, so that the counts vectorise
            e_s[q] = h_g[pick[q]]
            e_inst[q] = h_ad[pick[q]]
        if n > _MERGE_LANES_MAX or not _count_ranks(e_s, n, counted):  # a tie of scores
            _rank_by_key(e_s, e_inst, pick, n, counted)
        for q in range(n):
            rank[counted[q]] = pick[q]
        for q in range(n):
            h = rank[q]
            e_inst[q] = h_best[h]
            e_a[q] = h_mask[h]
            e_p[q] = 0
            e_s[q] = h_g[h]
            e_w[q] = value[h_best[h]]
        if gsp and n > 0:
            # after[p]: the best score of the ads outside U ranked after exactly p
            # entries of U; ads after U's last entry need no count
            for q in range(n):
                e_ad[q] = ad[e_inst[q]]
            # in_a, in_g: the ads between U's entries
            tail = -np.inf
            n_in = 0
            for j in range(n_ads):
                h = used[j]
                in_u = h_mask[h] != 0
                g = h_g[h]
                past = _key_before(e_s[n - 1], e_ad[n - 1], g, h_ad[h])
                # a max, as csrc/auction.c's ranked_union says why (an ad past
                # U's last entry is not in U)
                after_u = choose(opaque(-np.int64(past)), g, -np.inf)
                tail = after_u if after_u > tail else tail
                in_a[n_in] = h_ad[h]
                in_g[n_in] = g
                n_in += (not in_u) & (not past)
            for q in range(n):
                after[q] = -np.inf
            after[n] = tail
            _count_before(e_s, e_ad, n, in_g, in_a, n_in, counted)
            for j in range(n_in):
                p = counted[j]
                after[p] = in_g[j] if in_g[j] > after[p] else after[p]
            for q in range(n):
                nxt = e_s[q + 1] if q + 1 < n and e_s[q + 1] > after[q + 1] else after[q + 1]
                e_w[q] = _gsp_price(e_s[q], nxt, reserve)
        if win:
            _coalition_winners(ad, m, slots, n, e_inst, e_a, e_p, e_w, cnt, out, req, win_ad,
                               win_earn)
        else:
            _coalition_sums(reserve, m, slots, slots, n, False, e_a, e_p, e_s, e_w, out, req)
        for j in range(n_ads):  # the request's slots emptied for the next
            h = used[j]
            h_acts[h] = 0
            h_mask[h] = 0
            h_g[h] = -np.inf


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


# _MEETS[x]: the bits l < 32 with l & x != 0 (the coalitions of a block of 32
# that meet actions x), as C's Work.meets
_MEETS = np.array([sum(1 << l for l in range(32) if l & x) for x in range(32)], dtype=np.int64)


@jit
def _coalition_lanes(goes, quota, lagged, w, sums, taken):
    """One entry (its coalitions goes, earning w) of _coalition_sums for 8
    coalitions: taken where the entry goes and fewer than quota are taken,
    earning w where taken (lagged: where taken but not first)."""
    take = goes & (taken < quota)
    earns = take & (taken > 0) if lagged else take
    return sums + select8(earns, w, 0.0), select8(take, taken + 1, taken)


@jit
def _coalition_sums(reserve, m, slots, quota, n, lagged, e_a, e_p, e_s, e_w, out, row):
    """y(S) = out[row, S] for every S from n ranked entries, as
    coalition_sums in csrc/auction.c (a GSP price of rerun mode is
    max(reserve, next score) there): one lane per coalition, 32 at a time
    in four vectors held in registers across the entries, as C's lanes.
    The table comes whole with its row, not as a view: a view per request
    costs atomic reference counts."""
    prefer_512_bit_vectors()
    n_masks = 1 << m
    for b in range(0, n_masks, 32):
        s0 = s1 = s2 = s3 = zeros8()
        t0 = t1 = t2 = t3 = splat8(0)
        for j in range(n):
            a = e_a[j]
            p = e_p[j]
            # the coalitions b + l (l < 32) meeting a and missing p
            goes = (-1 if a & b else _MEETS[a & 31]) & ~(-1 if p & b else _MEETS[p & 31])
            w = (e_s[j] if e_s[j] > reserve else reserve) if lagged else e_w[j]
            s0, t0 = _coalition_lanes(lanes8(goes, 0), quota, lagged, w, s0, t0)
            s1, t1 = _coalition_lanes(lanes8(goes, 1), quota, lagged, w, s1, t1)
            s2, t2 = _coalition_lanes(lanes8(goes, 2), quota, lagged, w, s2, t2)
            s3, t3 = _coalition_lanes(lanes8(goes, 3), quota, lagged, w, s3, t3)
        if lagged:
            s0 = s0 + select8((t0 > 0) & (t0 <= slots), reserve, 0.0)
            s1 = s1 + select8((t1 > 0) & (t1 <= slots), reserve, 0.0)
            s2 = s2 + select8((t2 > 0) & (t2 <= slots), reserve, 0.0)
            s3 = s3 + select8((t3 > 0) & (t3 <= slots), reserve, 0.0)
        y = row * n_masks + b  # flat index of out[row, b]
        store_lanes(out, y, s0, n_masks - b)
        store_lanes(out, y + 8, s1, n_masks - b - 8)
        store_lanes(out, y + 16, s2, n_masks - b - 16)
        store_lanes(out, y + 24, s3, n_masks - b - 24)


@jit
def _coalition_winners(ad, m, slots, n, e_inst, e_a, e_p, e_w, cnt, out, row, win_ad,
                       win_earn):
    """_coalition_sums (not lagged) one coalition at a time, recording each
    coalition's winners into win_ad[row], win_earn[row] (C's scalar
    coalition_sums). A function apart from _coalition_sums: in one function
    Numba frees the arrays that one path leaves unused at its start, and
    refprune then keeps their reference counts."""
    n_masks = 1 << m
    for S in range(n_masks):
        out[row, S] = 0.0
        cnt[S] = 0
    for j in range(n):
        a = e_a[j]
        p = e_p[j]
        w = e_w[j]
        for S in range(n_masks):
            if (S & a) and not (S & p) and cnt[S] < slots:
                win_ad[row, S, cnt[S]] = ad[e_inst[j]]
                win_earn[row, S, cnt[S]] = w
                out[row, S] += w
                cnt[S] += 1


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
    # the ads each action keeps: filter reads `slots` per action, rerun `wanted`
    cut = slots if mode != MODE_RERUN else wanted
    length = a_max if capacity else min(cut, a_max)
    floor = -np.inf if capacity else reserve
    pr = prerank if prerank.shape[0] else score
    n_masks = 1 << m
    full = n_masks - 1
    win = win_ad.shape[1] == n_masks
    if mode != MODE_RERUN and not capacity:
        _replay_union(offsets, ad_id, score, value, m, start, stop, slots, reserve, gsp, length,
                      n_max, out, win, win_ad, win_earn)
        return
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
        _select_lists(score, ad_id, top, False, offsets, r * m, m, length, floor, top, top_n,
                      top_s, top_a)
        # merge_lists of csrc/auction.c (on AVX-512) in steps, each a
        # function whose arrays all die at its end: llvmlite's refprune then
        # drops their reference counts, which it keeps (atomic, ~30 per
        # request) in a function whose arrays die at different calls
        n = _kept_items(ad_id, score, m, length, top, top_n, pick, pool, ks, ka)
        if n > _MERGE_LANES_MAX or not _count_ranks(ks, n, rank):  # a tie of scores
            _rank_by_key(ks, ka, pick, n, rank)
        _place_ranked(pick, pool, ka, rank, n, inst, act, ra, gmask)
        _merged_entries(score, value, n, inst, act, ra, grp, gmask, e_inst, e_a, e_p, e_s, e_w)
        if mode == MODE_RERUN:
            if capacity or win:
                _rerun_table(ad_id, score, value, pr, gsp, reserve, capacity, m, slots, wanted,
                             n, r * n_masks, inst, act, grp, gstamp, pool, heap, pick, e_s,
                             out, r, win, win_ad, win_earn)
            else:
                _coalition_sums(reserve, m, slots, wanted, n, gsp, e_a, e_p, e_s, e_w, out, r)
            continue
        n = _ranked_full(ad_id, score, value, pr, gsp, reserve, capacity, full, r * n_masks + 1,
                         n, inst, act, grp, gmask, gstamp, pool, heap, pick, e_inst, e_a, e_s,
                         e_w)
        n = _relevant_entries(m, slots, n, e_inst, e_a, e_p, e_s, e_w)
        if win:
            _coalition_winners(ad_id, m, slots, n, e_inst, e_a, e_p, e_w, cnt, out, r, win_ad,
                               win_earn)
        else:
            _coalition_sums(reserve, m, slots, slots, n, False, e_a, e_p, e_s, e_w, out, r)


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
