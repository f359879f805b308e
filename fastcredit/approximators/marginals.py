r"""Estimators over marginal contributions, stratified (shapiq's
``approximator/marginals``): StratifiedSamplingSV and OwenSamplingSV.

Both estimate player i's value as the mean, over strata j of i that hold a
sample, of the stratum's mean marginal :math:`v(S \cup i) - v(S)`,

.. math:: \hat\phi_i = \frac{1}{k_i} \sum_{j} \bar x_{ij}, \qquad
          \widehat{\mathrm{se}}_i = \frac{1}{k_i} \sqrt{\sum_j s_{ij}^2 / n_{ij}},

k_i the strata with a sample, :math:`s_{ij}^2` the sample variance of the
:math:`n_{ij}` marginals of stratum j (0 for a stratum with a single
coalition of a deterministic game; ``inf`` for a stratum with one sample).
A sample costs 2 evaluations, fewer when the game is deterministic and a
coalition was seen before (the memo of fastcredit.approximators.base).
"""
from __future__ import annotations

import numpy as np

from .. import tables
from .base import Design

__all__ = ["Stratified", "Owen", "owen_anchors", "owen_weights"]


class _Pairs(Design):
    """Samples of two coalitions (S, S + i) folded into per-(player, stratum)
    moments; ``census[j]`` marks strata of one coalition."""

    coalitions = 2
    n_strata = 0

    def __init__(self, *args):
        super().__init__(*args)
        size = self.m * self.n_strata
        self.count = np.zeros(size, dtype=np.int64)
        self.first = np.zeros(size)
        self.s1 = np.zeros(size)
        self.s2 = np.zeros(size)

    def fold_fixed(self, impl, masks, values, v0):
        pass

    def samples_left(self, done):
        return True

    def fold(self, impl, masks, values, slots, v0):
        impl.fold_pairs(values, slots, self.count, self.first, self.s1, self.s2)

    def census(self):
        return np.zeros(self.n_strata, dtype=bool)

    def finish(self, v0):
        m, k = self.m, self.n_strata
        n = self.count.reshape(m, k).astype(np.float64)
        s1, s2 = self.s1.reshape(m, k), self.s2.reshape(m, k)
        has = n > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(has, self.first.reshape(m, k) + s1 / n, 0.0)
            var = np.where(n > 1, np.maximum(s2 - s1 * s1 / n, 0.0) / (n - 1), np.inf)
            var = np.where(self.census()[None, :] & self.deterministic, 0.0, var)
            contrib = np.where(has, var / np.maximum(n, 1), 0.0)
            strata = has.sum(axis=1)
            values = np.where(strata > 0, mean.sum(axis=1) / np.maximum(strata, 1), 0.0)
            stderr = np.where(strata > 0, np.sqrt(contrib.sum(axis=1)) / np.maximum(strata, 1),
                              np.inf)
        return values, stderr


class Stratified(_Pairs):
    r"""StratifiedSamplingSV (Maleki et al. 2013): strata by the size l of S,
    l = 0..m-1; sample u is player u mod m at size (u div m) mod m, S drawn
    uniformly among the C(m-1, l) coalitions of the others (shapiq's order,
    sizes outer, players inner). The Shapley value is the mean over sizes of
    the mean marginal at that size, so the estimate is unbiased once every
    stratum holds a sample (after the first m**2 samples)."""

    kernel = "approximators.stratified"

    def __init__(self, *args):
        self.n_strata = args[0]
        super().__init__(*args)

    def draw(self, impl, seed, g, first, n):
        masks = np.empty((n, 2), dtype=np.uint64)
        slots = np.empty(n, dtype=np.int64)
        impl.draw_stratified(seed, np.uint64(g), first, self.m, masks, slots)
        return masks, slots

    def census(self):
        c = np.zeros(self.m, dtype=bool)
        c[[0, self.m - 1]] = True
        return c

    def exact(self, table):
        return tables.shapley(table, threads=1)


def owen_anchors(n_anchors: int) -> np.ndarray:
    """shapiq's anchor points: 0.5 for one, else np.linspace(0, 1, n)."""
    return np.array([0.5]) if n_anchors == 1 else np.linspace(0.0, 1.0, n_anchors)


def owen_weights(m: int, n_anchors: int) -> np.ndarray:
    r"""w[k], k = 0..m-1: the semivalue Owen sampling estimates,
    :math:`w_k = \frac1M \sum_a q_a^k (1 - q_a)^{m-1-k}` (the multilinear
    extension's integral by the mean over the M anchors q_a)."""
    q = owen_anchors(n_anchors)[:, None]
    k = np.arange(m)[None, :]
    return (np.power(q, k) * np.power(1.0 - q, m - 1 - k)).mean(axis=0)


class Owen(_Pairs):
    r"""OwenSamplingSV (Okhrati & Lipani 2020): the Shapley value is the
    integral over q in [0, 1] of the mean marginal of i to S, each other
    player in S with probability q; sample u is player u mod m at anchor
    (u div m) mod M (shapiq's order), the anchors q_a = linspace(0, 1, M)
    (0.5 for M = 1). The estimate is unbiased for the semivalue with weights
    ``owen_weights(m, M)`` (the anchors' mean, not the integral: it differs
    from the Shapley value by the quadrature error, as shapiq's does)."""

    kernel = "approximators.owen"

    def __init__(self, m, index, deterministic, budget, n_anchors):
        self.anchors = owen_anchors(n_anchors)
        self.n_strata = len(self.anchors)
        super().__init__(m, index, deterministic, budget)

    def draw(self, impl, seed, g, first, n):
        masks = np.empty((n, 2), dtype=np.uint64)
        slots = np.empty(n, dtype=np.int64)
        impl.draw_owen(seed, np.uint64(g), first, self.m, self.anchors, masks, slots)
        return masks, slots

    def census(self):
        return (self.anchors == 0.0) | (self.anchors == 1.0)

    def exact(self, table):
        return tables.semivalue(table, owen_weights(self.m, self.n_strata), threads=1)
