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
import numpy as np
from numba import njit

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

