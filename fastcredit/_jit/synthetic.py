"""Numba kernels of the agent-trajectory SCMs in fastcredit.synthetic.

Players are the steps of a trajectory whose factual outcome was bad. A
coalition mask S holds the steps in S at their factual action; every other
step is resampled from the policy. A stochastic game ``fn(mask, key)`` plays
one such counterfactual trajectory and returns 1.0 for a bad outcome, so
v(S) = E fn(S, key) = P(bad | S held factual). Step j's randomness is the j-th
uniform draw of the stream seeded by ``key`` (drawn whether or not it is
used), so two coalitions evaluated with one key differ only in the steps
whose status differs (what common random numbers rely on).

Threshold rule: step j is bad (factual_bad[j], or with probability q[j] when
resampled); the outcome is bad iff sum_j weight[j] * bad_j >= threshold.
AND- and OR-failures are the thresholds len(steps) and 1 over 0/1 weights.

Chain rule (pivotal steps): a state "derailed" starts False. A held step j
derails the trajectory if derails[j], else keeps the state; a resampled step
derails an on-track trajectory with probability q[j] and puts a derailed one
back on track with probability r[j]. The outcome is bad iff derailed at the end.

Signatures (weight int64 (n,), factual_bad/derails uint8 (n,), q, r float64 (n,)):
    threshold_draw(mask, key, weight, factual_bad, q, threshold) -> 0.0 / 1.0
    threshold_table(weight, factual_bad, q, threshold, out)    out (2**n,) exact v(S)
    chain_draw(mask, key, derails, q, r) -> 0.0 / 1.0
    chain_table(derails, q, r, out)                             out (2**n,) exact v(S)
    threshold_game(...), chain_game(...): the stochastic @njit fn(mask, key) with
        these parameters frozen in (compiled once per game).
"""
import math

import numpy as np
from numba import njit

from .._numba import rng
from .._numba.rng import uniform

jit = njit(cache=True, nogil=True)
_ONE = np.uint64(1)


@jit
def threshold_draw(mask, key, weight, factual_bad, q, threshold):
    state = np.uint64(key)
    total = 0
    for j in range(weight.shape[0]):
        state, u = uniform(state)
        held = (np.uint64(mask) >> np.uint64(j)) & _ONE
        bad = factual_bad[j] != 0 if held else u < q[j]
        if bad:
            total += weight[j]
    return 1.0 if total >= threshold else 0.0


@jit
def threshold_table(weight, factual_bad, q, threshold, out):
    n = weight.shape[0]
    top = 0
    for j in range(n):
        top += weight[j]
    dist = np.empty(top + 1)
    for mask in range(out.shape[0]):
        dist[:] = 0.0
        dist[0] = 1.0
        fixed = 0
        for j in range(n):
            w = weight[j]
            if (mask >> j) & 1:
                fixed += w if factual_bad[j] else 0
            elif w > 0:
                for k in range(top, w - 1, -1):
                    dist[k] = dist[k] * (1.0 - q[j]) + dist[k - w] * q[j]
                for k in range(min(w, top + 1)):
                    dist[k] *= 1.0 - q[j]
        p = 0.0
        for k in range(top + 1):
            if fixed + k >= threshold:
                p += dist[k]
        out[mask] = p


@jit
def chain_draw(mask, key, derails, q, r):
    state = np.uint64(key)
    derailed = False
    for j in range(q.shape[0]):
        state, u = uniform(state)
        if (np.uint64(mask) >> np.uint64(j)) & _ONE:
            derailed = derailed or derails[j] != 0
        elif derailed:
            derailed = not u < r[j]
        else:
            derailed = u < q[j]
    return 1.0 if derailed else 0.0


@jit
def chain_table(derails, q, r, out):
    for mask in range(out.shape[0]):
        p = 0.0
        for j in range(q.shape[0]):
            if (mask >> j) & 1:
                if derails[j]:
                    p = 1.0
            else:
                p = p * (1.0 - r[j]) + (1.0 - p) * q[j]
        out[mask] = p


def threshold_game(weight, factual_bad, q, threshold):
    """The stochastic game fn(mask, key) of a threshold trajectory."""
    @njit(nogil=True)
    def game(mask, key):
        return threshold_draw(mask, key, weight, factual_bad, q, threshold)
    return game


def chain_game(derails, q, r):
    """The stochastic game fn(mask, key) of a pivotal-step chain."""
    @njit(nogil=True)
    def game(mask, key):
        return chain_draw(mask, key, derails, q, r)
    return game


# --- sponsored search ---------------------------------------------------------
# Request r of a stream draws from three RNG streams keyed by
# (seed, 3 (first + r) + stream): list lengths, instances, and clicks (keyed
# further by ad, so every instance of an ad in a request shares its click).
# Signatures: search_lengths(seed, first, m, k, empty, short, lengths, a, b)
# fills lengths[r*m + i] for requests a..b-1; search_fill(seed, first, m,
# topics, per_topic, bid, ctr, offsets, ad, score, value, prerank, a, b) fills
# their instances.

SHAPE_STREAM, DRAW_STREAM, CLICK_STREAM = 0, 1, 2


@jit
def search_lengths(seed, first, m, k, empty, short, lengths, a, b):
    for r in range(a, b):
        state = rng.key(seed, 3 * (first + r) + SHAPE_STREAM)
        for i in range(m):
            state, u = rng.uniform(state)
            if u < empty:
                lengths[r * m + i] = 0
            elif u < empty + short:
                state, extra = rng.below(state, max(k // 2, 1))
                lengths[r * m + i] = 1 + extra
            else:
                lengths[r * m + i] = k


@jit
def search_fill(seed, first, m, topics, per_topic, bid, ctr, offsets, ad, score, value,
                 prerank, a, b):
    for r in range(a, b):
        state = rng.key(seed, 3 * (first + r) + DRAW_STREAM)
        clicks = rng.key(seed, 3 * (first + r) + CLICK_STREAM)
        state, u = rng.uniform(state)
        home = min(int(topics * u * u), topics - 1)
        for i in range(m):
            state, drift = rng.below(state, topics)
            state, u = rng.uniform(state)
            keep = 0.5 + 0.45 * u
            for x in range(offsets[r * m + i], offsets[r * m + i + 1]):
                state, u = rng.uniform(state)
                on_topic = u < keep
                state, u = rng.uniform(state)
                rank = min(int(per_topic * u * math.sqrt(u)), per_topic - 1)
                ad_x = (home if on_topic else drift) * per_topic + rank
                state, u1 = rng.uniform(state)
                state, u2 = rng.uniform(state)
                radius = math.sqrt(-2.0 * math.log1p(-u1))
                z1 = radius * math.cos(2.0 * math.pi * u2)
                z2 = radius * math.sin(2.0 * math.pi * u2)
                pctr = min(ctr[ad_x] * math.exp(0.3 * z1) * (1.0 if on_topic else 0.4), 1.0)
                ad[x] = ad_x
                score[x] = bid[ad_x] * pctr
                prerank[x] = math.log(score[x]) + 0.5 * z2
                _, bits = rng.next_u64(clicks ^ rng.mix64(ad_x))
                u = (bits >> np.uint64(11)) * (1.0 / 9007199254740992.0)
                value[x] = bid[ad_x] if u < ctr[ad_x] else 0.0
