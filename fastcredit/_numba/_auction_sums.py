"""The coalition sums of fastcredit._numba.auction (C's coalition_sums):
y(S) for every coalition S from a ranked list of entries, 32 coalitions at
a time in 8-lane vectors, or one at a time recording the winners."""
import numpy as np
from numba import njit

from ._simd import prefer_512_bit_vectors, store_lanes, zeros8
from ._simd_lanes import lanes8, select8, splat8

jit = njit(cache=True, nogil=True)

# _MEETS[x]: the bits l < 32 with l & x != 0 (the coalitions of a block of 32
# that meet actions x), as C's Work.meets
_MEETS = np.array([sum(1 << l for l in range(32) if l & x) for x in range(32)], dtype=np.int64)


@jit
def _coalition_lanes(goes, quota, lagged, w, sums, taken):
    """One entry (its coalitions goes, earning w) of coalition_sums for 8
    coalitions: taken where the entry goes and fewer than quota are taken,
    earning w where taken (lagged: where taken but not first)."""
    take = goes & (taken < quota)
    earns = take & (taken > 0) if lagged else take
    return sums + select8(earns, w, 0.0), select8(take, taken + 1, taken)


@jit
def coalition_sums(reserve, m, slots, quota, n, lagged, e_a, e_p, e_s, e_w, out, row):
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
def coalition_winners(ad, m, slots, n, e_inst, e_a, e_p, e_w, cnt, out, row, win_ad,
                       win_earn):
    """coalition_sums (not lagged) one coalition at a time, recording each
    coalition's winners into win_ad[row], win_earn[row] (C's scalar
    coalition_sums). A function apart from coalition_sums: in one function
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
