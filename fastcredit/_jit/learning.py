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
    n_requests = out.shape[0]
    for r in range(n_requests):
        lo, hi = offsets[r * k], offsets[r * k + k]
        n = hi - lo
        rewrite = np.empty(n, dtype=np.int64)
        for j in range(k):
            for x in range(offsets[r * k + j], offsets[r * k + j + 1]):
                rewrite[x - lo] = j
        # group the request's instances by ad: which rewrites retrieved each ad
        by_ad = np.argsort(ad_id[lo:hi], kind="mergesort")
        novel = np.zeros(n, dtype=np.bool_)
        distinct = np.zeros(k)
        distinct_novel = np.zeros(k)
        g = 0
        while g < n:
            e = g
            mask = np.uint64(0)
            while e < n and ad_id[lo + by_ad[e]] == ad_id[lo + by_ad[g]]:
                mask |= np.uint64(1) << np.uint64(rewrite[by_ad[e]])
                e += 1
            alone = (mask & (mask - np.uint64(1))) == np.uint64(0)
            for j in range(k):
                if (mask >> np.uint64(j)) & np.uint64(1):
                    distinct[j] += 1.0
                    if alone:
                        distinct_novel[j] += 1.0
            for x in range(g, e):
                novel[by_ad[x]] = alone
            g = e
        for j in range(k):
            a, b = offsets[r * k + j], offsets[r * k + j + 1]
            best = 0.0
            top_sum = 0.0
            novel_sum = 0.0
            taken = np.empty(min(slots, b - a), dtype=np.int64)
            n_taken = 0
            if b > a:
                best = score[a:b].max()
                # each ad's first instance in descending score order is its best
                desc = np.argsort(-score[a:b], kind="mergesort")
                for x in desc:
                    if n_taken == taken.shape[0]:
                        break
                    ad = ad_id[a + x]
                    seen = False
                    for y in range(n_taken):
                        if taken[y] == ad:
                            seen = True
                    if seen:
                        continue
                    taken[n_taken] = ad
                    n_taken += 1
                    top_sum += score[a + x]
                    if novel[a + x - lo]:
                        novel_sum += score[a + x]
            out[r, j, 0] = np.log1p(distinct[j])
            out[r, j, 1] = np.arcsinh(best)
            out[r, j, 2] = np.arcsinh(top_sum)
            out[r, j, 3] = distinct_novel[j] / distinct[j] if distinct[j] > 0 else 0.0
            out[r, j, 4] = np.arcsinh(novel_sum)
