"""Selection and ranking shared by both paths of fastcredit._numba.auction:
each action's best distinct ads (by extraction from 8-lane vectors, three
lists side by side, as C's select_lists_avx512; or by the scalar insertion
of C's select_scalar), and the ranks of kept items by score (count_ranks)
or by the full key (rank_by_key)."""
import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from ._simd import lane, prefer_512_bit_vectors, store_lanes
from ._simd_lanes import (bits8, gather8, load_lanes8, max_lanes, min_lanes, select8, splat8)

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
MERGE_LANES_MAX = 64


@jit
def key_before(sx, ax, sy, ay):
    """Whether key (sx, ax) ranks before (sy, ay): score desc, then ad asc."""
    return (sx > sy) | ((sx == sy) & (ax < ay))  # no branch: the counts vectorise


@jit
def gsp_price(own, nxt, reserve):
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
        if s < floor or not key_before(s, a, top_s[last], top_a[last]):
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
        while p > 0 and key_before(s, a, top_s[p - 1], top_a[p - 1]):
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
def select_lists(ks, ka, kmap, use_map, offsets, o, m, length, floor, top, top_n, top_s,
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
def count_ranks(s, n, rank):
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
def rank_by_key(ks, ka, pick, n, rank):
    """rank[q] <- the number of the n items (kept_items, or filter mode's
    union) before item q by the full key: score desc, ad asc, item index
    (pick) asc; with no branch, so that the count vectorises. Needed only
    where count_ranks cannot rank the items by score alone (more than 64,
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
