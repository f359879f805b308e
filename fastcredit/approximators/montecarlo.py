r"""Monte-Carlo estimators over single coalitions, stratified by size and by
membership (shapiq's ``approximator/montecarlo``): SVARM.

SVARM (Kolpaczki, Bengs, Muschalik & Hüllermeier 2024, "Approximating the
Shapley value without marginal contributions"; shapiq's ``SVARM``, its
Monte-Carlo routine with both stratifications) writes a value as

.. math:: \phi_i = \sum_{l=1}^{m} c^+_l\, \mu^+_{il} - \sum_{l=0}^{m-1} c^-_l\, \mu^-_{il},
          \quad c^+_l = \binom{m-1}{l-1} p_{l-1},\ c^-_l = \binom{m-1}{l} p_l,

with :math:`\mu^{+}_{il}` (:math:`\mu^-_{il}`) the mean of v - v(empty) over
the coalitions of size l that contain (do not contain) i, and p the index's
marginal weights (SV: 1 / (m C(m-1, t)), so c = 1/m; BV: 2**-(m-1)). Every
evaluated coalition updates one stratum of every player. v(empty) and v(N)
are evaluated first; then shapiq's coalition sampler: sizes drawn with
probabilities proportional to 1 / (l (m - l)), a size whose expected number of
draws reaches its number of coalitions is evaluated whole instead (the
border trick, repeated until no size qualifies), and coalitions uniform
within their size. A stratum mean is the mean of its samples (a repeated
coalition counts again, at no cost for a deterministic game), a stratum
with no sample contributes 0. A stochastic game (every draw fresh) gets no
census: every size 0..m is sampled (sizes 0 and m with the weight of size 1),
so v(empty) and v(N) are drawn repeatedly and every stratum's spread is seen.

.. math:: \widehat{\mathrm{se}}_i^2 = \sum_{\text{sampled } (l, \pm)} c_l^2\, s^2 / n .
"""
from __future__ import annotations

import math

import numpy as np

from .. import tables
from .._index_weights import value_weights
from .._subsets import combinations
from .base import Design

__all__ = ["Svarm", "border_sizes", "stochastic_sizes"]


def border_sizes(m: int, budget: int) -> tuple:
    """(computed sizes, sampled sizes, their probabilities): shapiq's border
    trick for the SV/BV weights 1 / (l (m - l)), l = 1..m-1, with the
    budget left after v(empty) and v(N)."""
    sizes = list(range(1, m))
    weights = np.array([1.0 / (k * (m - k)) for k in sizes])
    weights = weights / weights.sum() if len(sizes) else weights
    left = min(budget, 2.0 ** m) - 2
    computed = []
    counts = {k: float(math.comb(m, k)) for k in sizes}
    while sizes:
        move = [k for k, w in zip(sizes, weights) if left * w >= counts[k]]
        if not move:
            break
        keep = [j for j, k in enumerate(sizes) if k not in move]
        computed += move
        left -= sum(counts[k] for k in move)
        sizes = [sizes[j] for j in keep]
        weights = weights[keep]
        if len(weights):
            weights = weights / weights.sum()
    return sorted(computed), np.array(sizes, dtype=np.int64), weights


def stochastic_sizes(m: int) -> tuple:
    """(sizes 0..m, their probabilities) for a stochastic game: 1 / (l (m - l))
    for 0 < l < m, and the weight of size 1 for the sizes 0 and m."""
    w = np.array([1.0 / (k * (m - k)) if 0 < k < m else (1.0 / (m - 1) if m > 1 else 1.0)
                  for k in range(m + 1)])
    return np.arange(m + 1, dtype=np.int64), w / w.sum()


class Svarm(Design):
    kernel = "approximators.svarm"
    coalitions = 1

    def __init__(self, m, index, deterministic, budget):
        super().__init__(m, index, deterministic, budget)
        if deterministic:
            self.computed, self.sizes, probs = border_sizes(m, budget)
        else:
            # a stochastic game: no census (whole sizes of single draws would
            # leave no spread to estimate), and v(empty), v(N) are sampled like
            # every size, so every stratum's spread is seen; the centre (one
            # draw of v(empty)) cancels once every stratum holds a sample
            self.computed, self.sizes, probs = [], *stochastic_sizes(m)
        cdf = np.cumsum(probs)
        if len(cdf):
            cdf[-1] = 2.0           # every uniform draw lands in the last size at worst
        self.cdf = cdf
        size = m * (m + 1) * 2
        self.count = np.zeros(size, dtype=np.int64)
        self.first = np.zeros(size)
        self.s1 = np.zeros(size)
        self.s2 = np.zeros(size)

    def fixed(self):
        m = self.m
        if not self.deterministic:
            return np.zeros(1, dtype=np.uint64)          # v(empty): the baseline
        full = np.uint64(2**m - 1) if m < 64 else np.uint64(2**64 - 1)
        parts = [np.array([0, full], dtype=np.uint64)]
        for k in self.computed:
            players = combinations(m, k).astype(np.uint64)
            parts.append(np.bitwise_or.reduce(np.left_shift(np.uint64(1), players), axis=1))
        return np.concatenate(parts)

    def fold_fixed(self, impl, masks, values, v0):
        if not self.deterministic:
            return                                       # the baseline draw only
        impl.fold_svarm(masks, values, self.m, v0, self.count, self.first, self.s1, self.s2)

    def samples_left(self, done):
        return len(self.sizes) > 0

    def draw(self, impl, seed, g, first, n):
        masks = np.empty(n, dtype=np.uint64)
        impl.draw_svarm(seed, np.uint64(g), first, self.m, self.sizes, self.cdf, masks)
        return masks[:, None], None

    def fold(self, impl, masks, values, slots, v0):
        impl.fold_svarm(np.ascontiguousarray(masks[:, 0]), np.ascontiguousarray(values[:, 0]),
                        self.m, v0, self.count, self.first, self.s1, self.s2)

    def finish(self, v0):
        m = self.m
        p = value_weights(self.index, m)
        coef = np.zeros((m + 1, 2))
        for k in range(m + 1):
            if k >= 1:
                coef[k, 1] = math.comb(m - 1, k - 1) * p[k - 1]
            if k <= m - 1:
                coef[k, 0] = -math.comb(m - 1, k) * p[k]
        n = self.count.reshape(m, m + 1, 2).astype(np.float64)
        s1, s2 = self.s1.reshape(m, m + 1, 2), self.s2.reshape(m, m + 1, 2)
        census = np.zeros(m + 1, dtype=bool)
        census[[0, m] + list(self.computed)] = True
        has = n > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(has, self.first.reshape(m, m + 1, 2) + s1 / n, 0.0)
            var = np.where(n > 1, np.maximum(s2 - s1 * s1 / n, 0.0) / (n - 1), np.inf)
            var = np.where(census[None, :, None] & self.deterministic, 0.0, var)
            live = has & (coef[None] != 0.0)
            contrib = np.where(live, coef[None] ** 2 * var / np.maximum(n, 1), 0.0)
        values = (mean * coef[None]).sum(axis=(1, 2))
        return values, np.sqrt(contrib.sum(axis=(1, 2)))

    def exact(self, table):
        return (tables.shapley if self.index == "SV" else tables.banzhaf)(table, threads=1)
