"""The weights of the interaction indices and semivalues, shared by the exact
family (``fastcredit.interactions``) and the approximators
(``fastcredit.approximators``).

Moebius-domain weights w(m, k, s, u): I(S) = sum_{U ⊇ S} w a(U), |S| = s,
|U| = u (the table in ``fastcredit.interactions``' docstring); generalized
values' weights p(m, k, s, t) of v(T ∪ S) - v(T), T ⊆ N∖S, |T| = t; and the
discrete-derivative weights of the order-1 values (SV, BV) that sampling
estimators weigh their strata with. Every weight is an exact rational,
rounded once to float64.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

__all__ = ["weight_tables", "value_weights", "derivative_weights"]

# Moebius-domain weights w(m, k, s, u): I(S) = sum_{U ⊇ S} w a(U), |S| = s, |U| = u.

def _w_moebius(m, k, s, u):
    return Fraction(int(u == s))


def _w_co_moebius(m, k, s, u):
    return Fraction(1)


def _w_sii(m, k, s, u):
    return Fraction(1, u - s + 1)


def _w_bii(m, k, s, u):
    return Fraction(1, 2 ** (u - s))


def _w_chii(m, k, s, u):
    return Fraction(s, u)


def _w_stii(m, k, s, u):
    return Fraction(int(u == s)) if s < k else Fraction(1, math.comb(u, k))


def _w_fsii(m, k, s, u):
    if u <= k:
        return Fraction(int(u == s))
    return ((-1) ** (k - s) * Fraction(s, k + s) * math.comb(k, s)
            * Fraction(math.comb(u - 1, k), math.comb(u + k - 1, k + s)))


def _w_fbii(m, k, s, u):
    if u <= k:
        return Fraction(int(u == s))
    return Fraction((-1) ** (k - s) * math.comb(u - s - 1, k - s), 2 ** (u - s))


@functools.cache
def _bernoulli(n):
    """B_0..B_n with B_1 = -1/2 (scipy.special.bernoulli's convention)."""
    b = [Fraction(1)]
    for j in range(1, n + 1):
        b.append(-sum(math.comb(j + 1, i) * b[i] for i in range(j)) / (j + 1))
    return b


def _w_k_sii(m, k, s, u):
    b = _bernoulli(k)
    return sum(math.comb(u - s, t - s) * b[t - s] * _w_sii(m, k, t, u)
               for t in range(s, min(k, u) + 1))


def _w_kadd_shap(m, k, s, u):
    return sum(math.comb(u - s, t - s) * Fraction(1, t - s + 1) * _w_fsii(m, k, t, u)
               for t in range(s, min(k, u) + 1))


#: index -> (Moebius weight, whether values[0] is the index's own empty-set value)
_CARDINAL = {"Moebius": (_w_moebius, False), "Co-Moebius": (_w_co_moebius, False),
             "SII": (_w_sii, True), "BII": (_w_bii, True), "CHII": (_w_chii, False),
             "STII": (_w_stii, False), "k-SII": (_w_k_sii, False), "FSII": (_w_fsii, False),
             "FBII": (_w_fbii, True), "kADD-SHAP": (_w_kadd_shap, False),
             "SV": (_w_sii, False), "BV": (_w_bii, True)}

# Generalized values: the weight p(m, k, s, t) of v(T ∪ S) - v(T), T ⊆ N∖S, |T| = t.


def _p_sgv(m, k, s, t):
    return Fraction(1, (m - s + 1) * math.comb(m - s, t))


def _p_bgv(m, k, s, t):
    return Fraction(1, 2 ** (m - s))


def _p_chgv(m, k, s, t):
    return Fraction(s, (s + t) * math.comb(m, s + t))


def _p_igv(m, k, s, t):
    return Fraction(int(t == 0))


def _p_egv(m, k, s, t):
    return Fraction(int(t == m - s))


@functools.cache
def _joint_sv_weights(m, k):
    q = [Fraction(1, sum(math.comb(m, j) for j in range(1, k + 1)))]
    for r in range(1, m):
        q.append(sum(math.comb(r, j) * q[j] for j in range(max(r - k, 0), r))
                 / sum(math.comb(m - r, j) for j in range(1, min(k, m - r) + 1)))
    return q


def _p_joint_sv(m, k, s, t):
    return _joint_sv_weights(m, k)[t]


_GENERALIZED = {"SGV": _p_sgv, "BGV": _p_bgv, "CHGV": _p_chgv, "IGV": _p_igv, "EGV": _p_egv,
                "JointSV": _p_joint_sv}


@functools.lru_cache(maxsize=64)
def weight_tables(index: str, m: int, order: int):
    """``(source, up, down, own_empty)`` of an index: the sizes s = 1..order
    (and 0 when ``own_empty``) are ``sum_{W ⊇ S} up[s, |W|] x(W) +
    sum_{T ∩ S = ∅} down[s, |T|] x(T)`` with x the Moebius transform
    (``source == "moebius"``) or the table itself; ``down`` is None when it
    is all zero. Weights are exact rationals rounded once to float64."""
    up = np.zeros((order + 1, m + 1))
    if index in _CARDINAL:
        w, own_empty = _CARDINAL[index]
        for s in range(0 if own_empty else 1, order + 1):
            up[s, s:] = [float(w(m, order, s, u)) for u in range(s, m + 1)]
        return "moebius", up, None, own_empty
    p = _GENERALIZED[index]
    down = np.zeros((order + 1, m + 1))
    for s in range(1, order + 1):
        weights = [p(m, order, s, t) for t in range(m - s + 1)]
        up[s, s:] = [float(x) for x in weights]
        down[s, :m - s + 1] = [-float(x) for x in weights]
    return "table", up, down, False


@functools.lru_cache(maxsize=64)
def value_weights(index: str, m: int) -> np.ndarray:
    """p[t], t = 0..m-1: the weight of the marginal v(T + i) - v(T), |T| = t,
    in player i's value: SV 1 / (m C(m-1, t)), BV 1 / 2**(m-1) (read-only)."""
    if index == "SV":
        p = [Fraction(1, m * math.comb(m - 1, t)) for t in range(m)]
    elif index == "BV":
        p = [Fraction(1, 2 ** (m - 1))] * m
    else:
        raise ValueError(f"index must be 'SV' or 'BV' for value weights, got {index!r}")
    out = np.array([float(x) for x in p])
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=64)
def derivative_weights(index: str, m: int, order: int) -> np.ndarray:
    r"""p[s, t], s = 1..order, t = 0..m-s: the weight of the discrete
    derivative :math:`\Delta_S v(T)`, T ⊆ N∖S, |T| = t, in the index of S
    (|S| = s), :math:`I(S) = \sum_T p_{s,|T|} \Delta_S v(T)`, for the
    indices with Moebius weights (SII, BII, CHII, STII, FSII, FBII, k-SII,
    SV, BV, ...); row 0 and t > m - s are 0 (read-only).

    From the Moebius weights w(s, u) by :math:`w(s, s + l) = \sum_{t \ge l}
    \binom{m - s - l}{t - l} p_{s,t}` (:math:`\Delta_S v(T) = \sum_{L
    \subseteq T} a(S \cup L)`), solved from t = m - s down, exactly."""
    if index not in _CARDINAL:
        raise ValueError(f"index must be one with Moebius weights {tuple(_CARDINAL)}, got "
                         f"{index!r}")
    w = _CARDINAL[index][0]
    out = np.zeros((order + 1, m + 1))
    for s in range(1, order + 1):
        p = [Fraction(0)] * (m - s + 1)
        for t in range(m - s, -1, -1):
            p[t] = w(m, order, s, s + t) - sum(math.comb(m - s - t, r - t) * p[r]
                                               for r in range(t + 1, m - s + 1))
        out[s, :m - s + 1] = [float(x) for x in p]
    out.flags.writeable = False
    return out
