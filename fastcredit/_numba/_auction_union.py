"""Filter mode without capacity (C's ranked_union): one hash pass gives
every ad of a request its best score, each action keeps its best `slots`
ads by it, and their union U (the proof at the top of csrc/auction.c),
ranked by counting, goes to the coalition sums."""
import numpy as np
from numba import njit

from ._auction_select import (MERGE_LANES_MAX, count_ranks, gsp_price, key_before, rank_by_key,
                              select_lists)
from ._auction_sums import coalition_sums, coalition_winners
from ._simd import choose, if_greater, opaque, prefetch, realign_stack, store_lanes
from ._simd_lanes import load_lanes8, select8, splat8
from .rng import GOLDEN

jit = njit(cache=True, nogil=True)
# log2 of the most slots a hash table is kept 1/8 full with (HASH_BITS_SPARSE in C).
_HASH_BITS_SPARSE = 10


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
            # unconditional and every choice a bit mask, a conditional move
            # or a max, as in csrc/auction.c's hash_ads, so that no branch
            # depends on the data (the masks opaque: LLVM would make branches
            # of them again)
            while opaque(-np.int64(h_acts[h] != 0)) & (h_ad[h] ^ a):
                h = (h + np.uint64(1)) & mask
            acts = h_acts[h]
            g = h_g[h]
            h_ad[h] = a
            h_best[h] = if_greater(s, g, np.int64(x), h_best[h])
            h_g[h] = s if s > g else g   # a max (vmaxsd), no branch
            h_acts[h] = acts | (np.int64(1) << i)
            slot_of[x - lo] = np.int64(h) ^ -((acts >> i) & 1)  # ~h for a repeat
            used[n] = h
            n += np.uint64(acts == 0)
    return np.int64(n)


@jit
def replay_union(offsets, ad, score, value, m, start, stop, slots, reserve, gsp, length, n_max,
                  out, win, win_ad, win_earn):
    """Filter, capacity 0, requests start..stop-1: per request U of the proof
    in csrc/auction.c as entries (mask', best score, earnings) in rank order,
    then the coalition sums. The workspaces are allocated here and U is built
    in this loop, not in a callee: a callee taking the ~30 workspaces cost
    about a quarter of the request (there LLVM cannot tell that they do not
    alias)."""
    realign_stack()
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
        select_lists(h_g, h_ad, slot_of, True, offsets, req * m, m, length, reserve, top, top_n,
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
        if n > MERGE_LANES_MAX or not count_ranks(e_s, n, counted):  # a tie of scores
            rank_by_key(e_s, e_inst, pick, n, counted)
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
                past = key_before(e_s[n - 1], e_ad[n - 1], g, h_ad[h])
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
                e_w[q] = gsp_price(e_s[q], nxt, reserve)
        if win:
            coalition_winners(ad, m, slots, n, e_inst, e_a, e_p, e_w, cnt, out, req, win_ad,
                               win_earn)
        else:
            coalition_sums(reserve, m, slots, slots, n, False, e_a, e_p, e_s, e_w, out, req)
        for j in range(n_ads):  # the request's slots emptied for the next
            h = used[j]
            h_acts[h] = 0
            h_mask[h] = 0
            h_g[h] = -np.inf
