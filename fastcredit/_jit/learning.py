"""Numba kernels of fastcredit.learning (no C twin: the benchmark is a
Numba/NumPy program, not a kernel family).

Signatures:
    plackett_luce(logits, order, weights, logp, grad)
        logits (N, K) float64 finite, order (N, m) int64 distinct indices in
        [0, K), weights (N, m) float64; writes logp (N,) and grad (N, K):
        logp[n] = sum_t weights[n, t] * log pi(order[n, t] | not yet chosen),
        grad[n] = d logp[n] / d logits[n].
    rewrite_features(offsets, ad_id, score, k, slots, out)
        CSR pools of B requests x k rewrites; writes out (B, k, N_FEATURES).
"""
import numpy as np
from numba import njit

from .. import _numba  # noqa: F401  (points Numba's cache at a writable place)

jit = njit(cache=True, nogil=True)

#: Columns of rewrite_features (see fastcredit.learning.FEATURES).
N_FEATURES = 5


@jit
def plackett_luce(logits, order, weights, logp, grad):
    n_rows, k = logits.shape
    m = order.shape[1]
    used = np.zeros(k, dtype=np.bool_)
    prob = np.empty(k)
    for n in range(n_rows):
        used[:] = False
        grad[n, :] = 0.0
        total = 0.0
        for t in range(m):
            # log-softmax over the rewrites still available at step t
            top = -np.inf
            for j in range(k):
                if not used[j] and logits[n, j] > top:
                    top = logits[n, j]
            norm = 0.0
            for j in range(k):
                if not used[j]:
                    prob[j] = np.exp(logits[n, j] - top)
                    norm += prob[j]
            w = weights[n, t]
            pick = order[n, t]
            total += w * (logits[n, pick] - top - np.log(norm))
            for j in range(k):
                if not used[j]:
                    grad[n, j] -= w * prob[j] / norm
            grad[n, pick] += w
            used[pick] = True
        logp[n] = total


@jit
def rewrite_features(offsets, ad_id, score, k, slots, out):
    # No sorting (np.argsort alone takes seconds to compile): an ad's group is
    # found by scanning the request's earlier instances, O(n**2) for n
    # candidates of a request (hundreds), and the top-slots ads by selection.
    n_requests = out.shape[0]
    for r in range(n_requests):
        lo, hi = offsets[r * k], offsets[r * k + k]
        n = hi - lo
        rewrite = np.empty(n, dtype=np.int64)
        for j in range(k):
            for x in range(offsets[r * k + j], offsets[r * k + j + 1]):
                rewrite[x - lo] = j
        # first[x]: the request's first instance of x's ad; retrieved_by[f]:
        # the rewrites that retrieved the ad whose first instance is f
        first = np.empty(n, dtype=np.int64)
        retrieved_by = np.zeros(n, dtype=np.uint64)
        for x in range(n):
            first[x] = x
            for y in range(x):
                if ad_id[lo + y] == ad_id[lo + x]:
                    first[x] = first[y]
                    break
            retrieved_by[first[x]] |= np.uint64(1) << np.uint64(rewrite[x])
        novel = np.empty(n, dtype=np.bool_)
        for x in range(n):
            mask = retrieved_by[first[x]]
            novel[x] = (mask & (mask - np.uint64(1))) == np.uint64(0)
        for j in range(k):
            a, b = offsets[r * k + j], offsets[r * k + j + 1]
            distinct = 0.0
            distinct_novel = 0.0
            for x in range(a, b):
                repeat = False
                for y in range(a, x):
                    if ad_id[y] == ad_id[x]:
                        repeat = True
                        break
                if not repeat:
                    distinct += 1.0
                    if novel[x - lo]:
                        distinct_novel += 1.0
            # the top-slots distinct ads by best score (ties: lower ad_id)
            used = np.zeros(b - a, dtype=np.bool_)
            best = 0.0
            top_sum = 0.0
            novel_sum = 0.0
            for t in range(min(slots, b - a)):
                pick = -1
                for x in range(a, b):
                    if used[x - a]:
                        continue
                    if pick < 0 or score[x] > score[pick] or (
                            score[x] == score[pick] and ad_id[x] < ad_id[pick]):
                        pick = x
                if pick < 0:
                    break
                for x in range(a, b):
                    if ad_id[x] == ad_id[pick]:
                        used[x - a] = True
                if t == 0:
                    best = score[pick]
                top_sum += score[pick]
                if novel[pick - lo]:
                    novel_sum += score[pick]
            out[r, j, 0] = np.log1p(distinct)
            out[r, j, 1] = np.arcsinh(best)
            out[r, j, 2] = np.arcsinh(top_sum)
            out[r, j, 3] = distinct_novel / distinct if distinct > 0 else 0.0
            out[r, j, 4] = np.arcsinh(novel_sum)
