"""Numba kernels of the trees family; the same algorithms, in the same
summation order, as csrc/trees.c (see csrc/trees.h for the math).

Signatures:
    actor_centered_credit(q, pi, offsets, uniform, atol, actions, credit, baseline,
                          sampled) -> (status, state)
        q, pi (n_values,) float64 (pi None exactly when uniform); offsets (n_states + 1,) int64; actions (n_states,) int64
        or None; credit (n_values,), baseline and sampled (n_states,)
        float64. Status 0 (state -1), or CREDIT_NOT_A_POLICY /
        CREDIT_ILLEGAL_ACTION at the first state at fault.
    allocation_pick(rule, counts, sums, costs, c, c_tok, seed, step) -> int
        rule ALLOC_UNIFORM / ALLOC_UCT / ALLOC_AGENT_UCT (fastcredit._constants);
        counts (n,) int64, sums and costs (n,) float64 (costs read by
        ALLOC_AGENT_UCT only).
    allocation_tell_pick(rule, counts, sums, costs, c, c_tok, seed, step, told, value)
            -> int
        The trial told (action told >= 0, its value) added to counts and
        sums, then allocation_pick; told = -1 adds nothing (told in -1 ..
        n-1 assumed). Raises ValueError, as the C twin: with nothing added
        when the value is not finite, with the trial added when no action
        can be picked.
"""
import math

import numpy as np
from numba import njit

from .._constants import (ALLOC_AGENT_UCT, ALLOC_UNIFORM, CREDIT_ILLEGAL_ACTION,
                          CREDIT_NOT_A_POLICY)
from .rng import below, key

__all__ = ["actor_centered_credit", "allocation_pick", "allocation_tell_pick"]

jit = njit(cache=True, nogil=True)
_MAX_DOUBLE = np.finfo(np.float64).max


@jit
def actor_centered_credit(q, pi, offsets, uniform, atol, actions, credit, baseline, sampled):
    for s in range(offsets.shape[0] - 1):
        lo = offsets[s]
        hi = offsets[s + 1]
        b = 0.0
        if pi is None:
            for a in range(lo, hi):
                b += q[a]
            if hi > lo:
                b /= np.float64(hi - lo)
        else:
            total = 0.0
            finite = True
            for a in range(lo, hi):
                finite &= pi[a] >= 0 and pi[a] <= _MAX_DOUBLE
                total += pi[a]
                b += pi[a] * q[a]
            if not finite or (hi > lo and abs(total - 1.0) > atol):
                return CREDIT_NOT_A_POLICY, s
        baseline[s] = b
        for a in range(lo, hi):
            credit[a] = q[a] - b
        if actions is not None:
            if actions[s] < 0 or actions[s] >= hi - lo:
                return CREDIT_ILLEGAL_ACTION, s
            sampled[s] = credit[lo + actions[s]]
    return 0, -1


@jit
def _score(rule, counts, sums, costs, c, c_tok, log_total, a):
    penalty = c_tok * costs[a] if rule == ALLOC_AGENT_UCT else 0.0
    if rule == ALLOC_UNIFORM:
        return -np.float64(counts[a])
    if counts[a] == 0:
        return -penalty if rule == ALLOC_AGENT_UCT else np.inf
    return sums[a] / np.float64(counts[a]) + c * math.sqrt(log_total / np.float64(counts[a])) \
        - penalty


@jit
def allocation_pick(rule, counts, sums, costs, c, c_tok, seed, step):
    n = counts.shape[0]
    total = 0
    untried = 0
    for a in range(n):
        total += counts[a]
        untried += counts[a] == 0
    log_total = math.log(np.float64(total) + 1.0)
    best = -np.inf
    ties = 0
    for a in range(n):
        eligible = rule == ALLOC_UNIFORM or untried == 0 or counts[a] == 0
        v = _score(rule, counts, sums, costs, c, c_tok, log_total, a)
        if not eligible:
            continue
        if v > best or ties == 0:
            best = v
            ties = 1
        elif v == best:
            ties += 1
    _, pick = below(key(seed, step), ties)
    for a in range(n):
        eligible = rule == ALLOC_UNIFORM or untried == 0 or counts[a] == 0
        if eligible and _score(rule, counts, sums, costs, c, c_tok, log_total, a) == best:
            if pick == 0:
                return a
            pick -= 1
    return -1


@jit
def allocation_tell_pick(rule, counts, sums, costs, c, c_tok, seed, step, told, value):
    if told >= 0:
        if not math.isfinite(value):
            raise ValueError("allocation_tell_pick: the value told is not finite")
        counts[told] += 1
        sums[told] += value
    a = allocation_pick(rule, counts, sums, costs, c, c_tok, seed, step)
    if a < 0:
        raise ValueError("allocation_tell_pick: no action can be picked (a score is NaN)")
    return a
