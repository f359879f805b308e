r"""Monte-Carlo estimators over single coalitions (shapiq's
``approximator/montecarlo``): for every order SVARM-IQ (stratified by size and
by the intersection with each interaction) and SHAP-IQ (not stratified),
:class:`Svarmiq` and :class:`Shapiq` below. SVARM (``method="svarm"``) is
SVARM-IQ of order 1, as shapiq's ``SVARM`` is its ``SVARMIQ`` with
``max_order=1``:

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
probabilities proportional to 1 / (l (m - l)) (shapiq's default;
``sampling_weights`` replace them, and ``pairing`` follows each draw by its
complement), a size whose expected number of draws reaches its number of
coalitions is evaluated whole instead (the border trick, repeated until no
size qualifies), and coalitions uniform within their size. A stratum mean is the mean of its samples (a repeated
coalition counts again, at no cost for a deterministic game), a stratum
with no sample contributes 0. A stochastic game (every draw fresh) gets no
census: every size 0..m is sampled (sizes 0 and m with the weight of size 1),
so v(empty) and v(N) are drawn repeatedly and every stratum's spread is seen.

.. math:: \widehat{\mathrm{se}}_i^2 = \sum_{\text{sampled } (l, \pm)} c_l^2\, s^2 / n .
"""
from __future__ import annotations

import math

import numpy as np

from .._index_weights import derivative_weights
from .._subsets import combinations, subset_masks
from .._validation import check_memory
from ..interactions import interactions
from .base import Design, InteractionEstimate, run_design

__all__ = ["Svarmiq", "Shapiq", "MONTE_CARLO_IQ", "stochastic_sizes",
           "estimate_interactions"]


def stochastic_sizes(m: int) -> tuple:
    """(sizes 0..m, their probabilities) for a stochastic game: 1 / (l (m - l))
    for 0 < l < m, and the weight of size 1 for the sizes 0 and m."""
    w = np.array([1.0 / (k * (m - k)) if 0 < k < m else (1.0 / (m - 1) if m > 1 else 1.0)
                  for k in range(m + 1)])
    return np.arange(m + 1, dtype=np.int64), w / w.sum()


# --- SVARM-IQ and SHAP-IQ: every order, over the same coalition sampler --------

class _MonteCarloIQ(Design):
    r"""shapiq's ``MonteCarlo`` estimators of an index of order k (Fumagalli et
    al. 2023, Theorem 1): :math:`I(S) = \sum_T W_{s,|T|,|T \cap S|}\,(v(T) -
    v(\emptyset))`, :math:`W_{s,t,j} = (-1)^{s-j} p_{s,t-j}` (the discrete-
    derivative weights, ``_index_weights.derivative_weights``), every S of
    sizes 1..k. Sampling is shapiq's CoalitionSampler (sizes 0 and m and the
    border sizes enumerated, the others drawn with their weights, coalitions
    uniform within a size; with ``pairing`` each draw's complement too);
    k-SII is SII aggregated (as shapiq). Subclasses fold the draws."""

    def __init__(self, m, index, deterministic, budget, order=1, pairing=False, weights=None):
        from .regression import border_trick, size_weights
        super().__init__(m, index, deterministic, budget)
        self.order = order
        self.base_index = "SII" if index == "k-SII" else index
        self.pairing = pairing
        self.coalitions = 2 if pairing else 1
        if deterministic:
            # shapiq's default weights: FBII's binomial ones, else KernelSHAP's
            # with the sizes below k and above m - k all but enumerated
            if weights is None:
                weights = size_weights("regression_fbii" if index == "FBII" else "", m, order)
            self.computed, self.sizes, probs = border_trick(m, budget, weights)
        else:
            # a stochastic game: every size drawn (no census of single draws)
            self.computed, (self.sizes, probs) = [], stochastic_sizes(m)
        cdf = np.cumsum(probs)
        if len(cdf):
            cdf[-1] = 2.0
        self.cdf = cdf
        self.probs = np.zeros(m + 1)
        self.probs[self.sizes] = probs
        self.subsets = np.concatenate([subset_masks(m, s) for s in range(1, order + 1)])
        self.subset_sizes = np.concatenate([np.full(math.comb(m, s), s, dtype=np.int64)
                                            for s in range(1, order + 1)])
        # each subset's members (ascending, padded to the order): the folds
        # read T's pattern on a subset bit by bit
        members = np.zeros((len(self.subsets), order), dtype=np.int64)
        row = 0
        for s in range(1, order + 1):
            members[row:row + math.comb(m, s), :s] = combinations(m, s)
            row += math.comb(m, s)
        self.members = members
        p = derivative_weights(self.base_index, m, order)
        std = np.zeros((order + 1, m + 1, order + 1))     # W[s, t, j]
        for s in range(1, order + 1):
            for t in range(m + 1):
                for j in range(max(0, s + t - m), min(s, t) + 1):
                    std[s, t, j] = (-1) ** (s - j) * p[s, t - j]
        self.standard = std

    def fixed(self):
        if not self.deterministic:
            return np.zeros(1, dtype=np.uint64)          # v(empty): the centre
        return np.concatenate([subset_masks(self.m, k) for k in self.computed])

    def samples_left(self, done):
        return len(self.sizes) > 0

    def draw(self, impl, seed, g, first, n):
        masks = np.empty(n, dtype=np.uint64)
        impl.draw_svarm(seed, np.uint64(g), first, self.m, self.sizes, self.cdf, masks)
        if not self.pairing:
            return masks[:, None], None
        full = np.uint64(2**self.m - 1) if self.m < 64 else np.uint64(2**64 - 1)
        return np.stack([masks, masks ^ full], axis=1), None

    #: whether the folds weigh the coalitions by k-SII's own weights (else
    #: k-SII is SII aggregated after the run)
    folds_k_sii = False

    def _layout(self, flat, v0, errors=False):
        """Entries of orders 0..k (values[0] = v(empty), stderr 0); k-SII
        aggregated from SII unless folded as k-SII (the aggregate's lower
        orders' errors are then not estimated: NaN)."""
        from .regression import aggregate_k_sii
        m, k = self.m, self.order
        cuts = np.cumsum([math.comb(m, s) for s in range(1, k + 1)])[:-1]
        out = [np.array([0.0 if errors else v0])] + np.split(flat, cuts)
        if self.index == "k-SII" and not self.folds_k_sii:
            if errors:
                out = [x if s in (0, k) else np.full_like(x, np.nan) for s, x in enumerate(out)]
            else:
                out = aggregate_k_sii(out, m)
        return np.concatenate(out)

    def exact(self, table):
        res = interactions(table, self.index, self.order, threads=1)
        vals = [np.asarray(x, dtype=np.float64) for x in res.values]
        vals[0] = np.array([table[0]], dtype=np.float64)
        return np.concatenate(vals)


class Svarmiq(_MonteCarloIQ):
    r"""SVARM-IQ (Kolpaczki, Muschalik, Fumagalli, Hammer & Hüllermeier 2024;
    shapiq's ``SVARMIQ``): stratified by the coalition size t and the
    intersection pattern :math:`I = T \cap S`,

    .. math:: \hat I(S) = \sum_{I \subseteq S} \sum_t W_{s,t,|I|}
              \binom{m - s}{t - |I|}\, \bar x_{S,I,t},

    :math:`\bar x_{S,I,t}` the mean of v(T) - v(empty) over the draws (a
    coalition drawn twice counts twice) of the stratum, exact for enumerated
    sizes; a stratum without a draw contributes 0. Every coalition (a pair's
    complement too) updates one stratum of every S.

    .. math:: \widehat{\mathrm{se}}^2 = \sum_{\text{sampled } (I, t)}
              \big(W_{s,t,|I|} \tbinom{m-s}{t-|I|}\big)^2 s^2_{S,I,t} / n_{S,I,t}

    (a pair's two coalitions taken as independent draws)."""

    kernel = "approximators.svarmiq"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        m, k = self.m, self.order
        size = (len(self.subsets) << k) * (m + 1)
        check_memory(size * 32, f"SVARM-IQ's {size} strata (m = {m}, order {k})")
        self.count = np.zeros(size, dtype=np.int64)
        self.first = np.zeros(size)
        self.s1 = np.zeros(size)
        self.s2 = np.zeros(size)

    def _fold(self, impl, masks, values, v0):
        impl.fold_svarmiq(np.ascontiguousarray(masks.reshape(-1)),
                          np.ascontiguousarray(values.reshape(-1)), self.m, v0, self.members,
                          self.subset_sizes, self.order, self.count, self.first, self.s1,
                          self.s2)

    def fold_fixed(self, impl, masks, values, v0):
        if self.deterministic:
            self._fold(impl, masks, values, v0)

    def fold(self, impl, masks, values, slots, v0):
        self._fold(impl, masks, values, v0)

    def finish(self, v0):
        m, k = self.m, self.order
        n_sub = len(self.subsets)
        # coef[s, p, t] = W[s, t, |p|] C(m - s, t - |p|), p a pattern of s bits
        width = 1 << k
        ones = np.array([bin(p).count("1") for p in range(width)])
        coef = np.zeros((k + 1, width, m + 1))
        for s in range(1, k + 1):
            for p in range(1 << s):
                j = ones[p]
                for t in range(j, m - s + j + 1):
                    coef[s, p, t] = self.standard[s, t, j] * math.comb(m - s, t - j)
        c = coef[self.subset_sizes]                          # (n_sub, width, m + 1)
        shape = (n_sub, width, m + 1)
        n = self.count.reshape(shape).astype(np.float64)
        s1, s2 = self.s1.reshape(shape), self.s2.reshape(shape)
        census = np.zeros(m + 1, dtype=bool)
        census[list(self.computed)] = True
        has = n > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(has, self.first.reshape(shape) + s1 / n, 0.0)
            var = np.where(n > 1, np.maximum(s2 - s1 * s1 / n, 0.0) / (n - 1), np.inf)
            var = np.where(census[None, None, :], 0.0, var)
            live = has & (c != 0.0)
            contrib = np.where(live, c ** 2 * var / np.maximum(n, 1), 0.0)
        values = (mean * c).sum(axis=(1, 2))
        stderr = np.sqrt(contrib.sum(axis=(1, 2)))
        return self._layout(values, v0), self._layout(stderr, v0, errors=True)


def k_sii_weights(sii, m, k):
    """W'[u, t, j] = sum_{r <= k - u} B_r sum_a C(t - j, a) C(m - u - t + j, r - a)
    W[u + r, t, j + a]: k-SII's weight of v(T) (|T| = t, |T ∩ U| = j) in
    U's value (|U| = u), from SII's W (k + 1, m + 1, k + 1): the supersets
    U ∪ V of U (|V| = r) meeting T in a more players of V."""
    from .._index_weights import _bernoulli
    b = [float(x) for x in _bernoulli(k)]

    def comb(n, r):
        return math.comb(n, r) if 0 <= r <= n else 0

    out = np.zeros_like(sii)
    for u in range(1, k + 1):
        for t in range(m + 1):
            for j in range(min(u, t) + 1):
                out[u, t, j] = sum(b[r] * comb(t - j, a) * comb(m - u - t + j, r - a)
                                   * sii[u + r, t, j + a]
                                   for r in range(k - u + 1) for a in range(r + 1))
    return out


class Shapiq(_MonteCarloIQ):
    r"""SHAP-IQ (Fumagalli, Muschalik, Kolpaczki, Hüllermeier & Hammer 2023;
    shapiq's ``SHAPIQ``), no stratification: the enumerated sizes exactly,
    plus the mean over the N draws of their importance-weighted terms,

    .. math:: \hat I(S) = \sum_{T \text{ enumerated}} W_{s,|T|,|T \cap S|}\,
              (v(T) - v_0) + \frac1N \sum_{d=1}^{N} \frac{\binom{m}{t_d}}{q_{t_d}}
              W_{s,t_d,|T_d \cap S|}\,(v(T_d) - v_0),

    q the size probabilities; unbiased. A unit is one draw (with
    ``pairing``, a draw and its complement, N counting both), and

    .. math:: \widehat{\mathrm{se}} = \sqrt{U}\, s_y / N,

    s_y the sample standard deviation of the U units' summed terms. k-SII,
    :math:`\sum_{T \supseteq S,\, |T| \le k} B_{|T|-|S|}\, \mathrm{SII}(T)`, is such
    a sum too, with weights by (|S|, |T_d|, |T_d ∩ S|) alone
    (:func:`k_sii_weights`): folded with them, every order's estimate has
    its own standard error (the aggregate of the SII estimates, the same
    values, would not: they are correlated)."""

    kernel = "approximators.shapiq"
    folds_k_sii = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        m = self.m
        if self.index == "k-SII":
            self.standard = k_sii_weights(self.standard, m, self.order)
        per = np.array([math.comb(m, t) for t in range(m + 1)], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(self.probs > 0, per / self.probs, 0.0)
        self.census_weights = np.ascontiguousarray(self.standard.reshape(-1))
        self.sample_weights = np.ascontiguousarray(
            (self.standard * scale[None, :, None]).reshape(-1))
        n_sub = len(self.subsets)
        self.moments = [(np.zeros(n_sub, dtype=np.int64), np.zeros(n_sub), np.zeros(n_sub),
                         np.zeros(n_sub)) for _ in range(2)]     # census, samples
        self.units = 0

    def _fold(self, impl, which, weights, masks, values, v0):
        impl.fold_shapiq(np.ascontiguousarray(masks), np.ascontiguousarray(values), self.m, v0,
                         self.members, self.subset_sizes, self.order, weights,
                         *self.moments[which])

    def fold_fixed(self, impl, masks, values, v0):
        if self.deterministic:
            self._fold(impl, 0, self.census_weights, masks[:, None], values[:, None], v0)

    def fold(self, impl, masks, values, slots, v0):
        self._fold(impl, 1, self.sample_weights, masks, values, v0)
        self.units += len(masks)

    def finish(self, v0):
        count, first, s1, _ = self.moments[0]
        values = count * first + s1                         # the enumerated sizes' sums
        n_units = self.units
        if n_units:
            count, first, s1, s2 = self.moments[1]
            n_draws = n_units * self.coalitions
            values = values + (n_units * first + s1) / n_draws
            if n_units > 1:
                var = np.maximum(s2 - s1 * s1 / n_units, 0.0) / (n_units - 1)
                stderr = np.sqrt(var * n_units) / n_draws
            else:
                stderr = np.full(len(values), np.inf)
        else:
            stderr = np.zeros(len(values)) if len(self.sizes) == 0 else np.full(len(values),
                                                                                 np.inf)
        return self._layout(values, v0), self._layout(stderr, v0, errors=True)


#: method -> (design, the indices it estimates)
MONTE_CARLO_IQ = {"svarmiq": (Svarmiq, ("SII", "BII", "CHII", "STII", "FSII", "FBII", "k-SII",
                                        "SV", "BV")),
                  "svarm": (Svarmiq, ("SV", "BV")),
                  "shapiq": (Shapiq, ("SII", "BII", "CHII", "STII", "FSII", "FBII", "k-SII",
                                      "SV", "BV"))}


def estimate_interactions(method, g, index, order, budget, seed, threads, pairing, weights):
    """fc.approximate for "svarmiq" and "shapiq" (arguments checked)."""
    design = MONTE_CARLO_IQ[method][0]
    m = g.m
    width = sum(math.comb(m, t) for t in range(order + 1))

    def make():
        return design(m, index, bool(g.deterministic), budget, order=order, pairing=pairing,
                      weights=weights)

    _, values, stderr, n_evals, n_samples = run_design(make, g, index, budget, seed, threads,
                                                       width=width)
    cuts = np.cumsum([math.comb(m, t) for t in range(order + 1)])[:-1]
    return InteractionEstimate(index=index, order=order, m=m,
                               values=tuple(np.split(values, cuts, axis=-1)),
                               stderr=tuple(np.split(stderr, cuts, axis=-1)),
                               n_evals=n_evals, n_samples=n_samples, method=method)
