"""Slow oracles computed straight from the definitions in DESIGN.md.

No cleverness here: loops over coalitions, permutations and candidates, so a
disagreement with a kernel means the kernel is wrong. Every family adds its
oracles below its own heading.
"""
from __future__ import annotations

import itertools
import math

import numpy as np


def players(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


# --- tables -----------------------------------------------------------------

def semivalue(v, weights) -> np.ndarray:
    """phi_i = sum over S not containing i of w[|S|] (v(S+i) - v(S))."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    phi = np.zeros(m)
    for i in range(m):
        for s in range(1 << m):
            if not s >> i & 1:
                phi[i] += weights[bin(s).count("1")] * (v[s | 1 << i] - v[s])
    return phi


def shapley_by_orders(v) -> np.ndarray:
    """Shapley as the average marginal over all m! orders (m <= 7)."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    phi = np.zeros(m)
    for order in itertools.permutations(range(m)):
        s = 0
        for i in order:
            phi[i] += v[s | 1 << i] - v[s]
            s |= 1 << i
    return phi / math.factorial(m)


def shapley(v) -> np.ndarray:
    m = len(v).bit_length() - 1
    return semivalue(v, [math.factorial(k) * math.factorial(m - k - 1) / math.factorial(m)
                         for k in range(m)])


def banzhaf(v) -> np.ndarray:
    m = len(v).bit_length() - 1
    return semivalue(v, [1.0 / 2 ** (m - 1)] * m)


def singleton(v) -> np.ndarray:
    m = len(v).bit_length() - 1
    return np.array([v[1 << i] - v[0] for i in range(m)], dtype=np.float64)


def leave_one_out(v) -> np.ndarray:
    m = len(v).bit_length() - 1
    full = (1 << m) - 1
    return np.array([v[full] - v[full ^ 1 << i] for i in range(m)], dtype=np.float64)


def size_resolved(v) -> np.ndarray:
    """[i, k] = mean over |S| = k, i not in S, of v(S+i) - v(S)."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    out = np.zeros((m, m))
    for i in range(m):
        for k in range(m):
            diffs = [v[s | 1 << i] - v[s] for s in range(1 << m)
                     if not s >> i & 1 and bin(s).count("1") == k]
            out[i, k] = np.mean(diffs)
    return out


def pair_interactions(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    out = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            if i != j:
                out[i, j] = v[1 << i | 1 << j] - v[1 << i] - v[1 << j] + v[0]
    return out


def moebius(v) -> np.ndarray:
    """a(S) = sum over T subset of S of (-1)^|S - T| v(T)."""
    v = np.asarray(v, dtype=np.float64)
    a = np.zeros(len(v))
    for s in range(len(v)):
        for t in range(len(v)):
            if t & s == t:
                a[s] += (-1) ** bin(s & ~t).count("1") * v[t]
    return a


def from_moebius(a) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    return np.array([sum(a[t] for t in range(len(a)) if t & s == t) for s in range(len(a))])


def semivalue_matrix(m: int, weights) -> np.ndarray:
    """C[S, i] with phi = v @ C: w[|S|-1] if i in S, else -w[|S|] (the
    vectorised form of the definition; memory 2**m * m)."""
    masks = np.arange(1 << m)
    member = (masks[:, None] >> np.arange(m)) & 1
    size = member.sum(1)
    w = np.asarray(weights, dtype=np.float64)
    w_in = np.where(size > 0, w[np.maximum(size - 1, 0)], 0.0)
    w_out = np.where(size < m, w[np.minimum(size, m - 1)], 0.0)
    return np.where(member == 1, w_in[:, None], -w_out[:, None])
