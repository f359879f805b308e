"""Numba kernels of the auction family: the algorithm of csrc/auction.c, step
for step and in the same summation order (see the proofs of the per-action
cuts there), in a module per idea:

- _auction_select: each action's best distinct ads (extraction from 8-lane
  vectors, three lists side by side, as C's extract_step; lists of more
  than 32 items or more than 8 kept ads by C's scalar insertion), and the
  ranks of kept items (counted by score 8 items at a time, or by the full
  key on a tie);
- _auction_union: filter mode without capacity (a hash pass over the
  request, then the union of the actions' best ads, as C's ranked_union);
- _auction_merged: rerun mode and filter mode with a capacity (the kept
  lists merged as C's merge_lists on AVX-512 machines, then the pipeline on
  each pool);
- _auction_sums: the coalition sums, 32 coalitions at a time in 8-lane
  vectors, as C's.

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

from .._constants import MODE_RERUN, PRICING_GSP
from ._auction_merged import replay_merged
from ._auction_union import replay_union
from ._simd import realign_stack

__all__ = ["replay"]


@njit(cache=True, nogil=True)
def replay(offsets, ad_id, score, value, prerank, m, start, stop, slots, reserve, capacity,
           pricing, mode, out, win_ad, win_earn):
    realign_stack()
    if start == stop:
        return
    n_max = 1
    a_max = 1
    for r in range(start, stop):
        n_max = max(n_max, offsets[(r + 1) * m] - offsets[r * m])
        for i in range(m):
            a_max = max(a_max, offsets[r * m + i + 1] - offsets[r * m + i])
    gsp = pricing == PRICING_GSP
    # the ads each action keeps: filter reads `slots` per action, rerun
    # `slots` + 1 for GSP (whose price reads the next ad)
    cut = slots + (1 if gsp else 0) if mode == MODE_RERUN else slots
    length = a_max if capacity else min(cut, a_max)
    win = win_ad.shape[1] == out.shape[1]
    if mode != MODE_RERUN and not capacity:
        replay_union(offsets, ad_id, score, value, m, start, stop, slots, reserve, gsp, length,
                     n_max, out, win, win_ad, win_earn)
    else:
        replay_merged(offsets, ad_id, score, value, prerank if prerank.shape[0] else score, m,
                      start, stop, slots, reserve, capacity, gsp, mode, length,
                      -np.inf if capacity else reserve, n_max, out, win, win_ad, win_earn)
