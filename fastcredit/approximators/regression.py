r"""Estimators by weighted least squares over sampled coalitions (shapiq's
``approximator/regression``): KernelSHAP (``method="kernelshap"``),
KernelSHAP-IQ (``"kernelshapiq"``), Inconsistent KernelSHAP-IQ
(``"inconsistent_kernelshapiq"``), kADD-SHAP (``"kaddshap"``),
RegressionFSII (``"regression_fsii"``) and RegressionFBII
(``"regression_fbii"``).

Each writes its index as the solution of a weighted least-squares problem
over all coalitions S,

.. math:: \min_\phi \sum_S \mu(|S|)\,\big(v(S) - v(\emptyset) - x(S)^\top\phi\big)^2,
          \qquad x_T(S) = c\big(|T|, |T \cap S|\big),

one column per interaction T of order 0..k (k = ``order``), and estimates the
sums from a sample. The coefficient table c and the kernel :math:`\mu` are
shapiq's (1.4.1):

================================ =============================== ==================
method (index)                   c(t, j)                         kernel
================================ =============================== ==================
regression_fsii (FSII)           [j = t]                         KernelSHAP's
regression_fbii (FBII)           [j = t]                         2**-m
kaddshap (kADD-SHAP)             sum_{l=0}^{j} C(j, l) B_{t-l}   KernelSHAP's
inconsistent_kernelshapiq (SII)  sum_{l=1}^{j} C(j, l) B_{t-l}   KernelSHAP's
kernelshapiq, kernelshap (SII)   as above, one order at a time   order t's
================================ =============================== ==================

with B the Bernoulli numbers (B_1 = -1/2), the order-t kernel
:math:`\mu_t(s) = 1 / ((m - 2t + 1) \binom{m-2t}{s-t})` for t <= s <= m - t and
shapiq's large weight 1e8 outside (KernelSHAP's is t = 1: v(empty) and v(N)
all but fitted exactly). A column whose coefficients are all 0 (the empty
interaction under SII's) is left out. KernelSHAP-IQ fits order 1, then order
2 to the residuals with the order-2 kernel, and so on; from order t = 3 on,
as shapiq's, order t's regression takes the residuals of the middle sizes
t..m-t only (the border's responses set to 0, its weights kept), and the
border coalitions (sizes below t or above m - t) add their residuals with
SII's own weights, :math:`\sum_S (-1)^{t-|S \cap T|} r(S) / ((m-t+1)
\binom{m-t}{|S|-|S \cap T|})` (drawn ones importance-weighted; shapiq's
sampler counts each distinct one once): the exact SII of the residual game
on those sizes.

**The sample** is shapiq's ``CoalitionSampler``'s: v(empty) and v(N), then
the border trick (a size whose expected number of draws, at the budget left,
reaches its number of coalitions is enumerated instead, repeated until none
does), then draws of a size with probability proportional to
``sampling_weights`` (default 1 / (s (m - s)), and 1e8 for the sizes below k
or above m - k; FBII: C(m, s) / 2**m) and of a uniformly random coalition of
that size (the family's counter-based stream, ``draw_svarm``), with the
pairing trick each followed by its complement. An enumerated coalition keeps
its kernel weight; a drawn one weighs :math:`\mu(s)\binom{m}{s} / (P(s)\,N)`
per draw (N the draws of sampled sizes, complements included), shapiq's
importance weights. The normal equations :math:`X^\top W X` (upper
triangle) and :math:`X^\top W y` are accumulated by the compiled kernel
``fold_regression`` (C and Numba, the same operations in the same order)
in the basis :math:`[U \subseteq S]` (a coalition of more than m/2 players
as its complement, :math:`[U \subseteq N \setminus S]`), mapped to x by
each basis's change; the coalitions a kernel weighs 1e8 are folded in x
itself (NumPy), where their terms do not cancel. The small system is solved
by the compiled Cholesky (``lstsq`` when not numerically positive definite,
as shapiq falls back to it), the same call on bit-identical input on either
backend, so the estimates are bit-identical per seed.

**Budget** = game evaluations: the enumerated coalitions, then draws until
the next new coalition would pass the budget (a deterministic game's repeated
coalition is free, so as in shapiq the budget buys distinct coalitions).

**Standard errors**: the sandwich (delta-method) variance over the i.i.d.
samples (a draw, or a draw and its complement), with the enumerated
coalitions held fixed: for a single regression
:math:`\widehat{\mathrm{Var}}(\hat\phi) = A^{-1}\,\widehat{\mathrm{Cov}}(g_u)\,A^{-1}\,N_u / N^2`,
with A the estimated normal matrix and :math:`g_u = \sum_{S \in u} w_S\,x(S)\,r(S)`
the sample's weighted residual scores (KernelSHAP-IQ chains the orders'
influence functions). It is computed after the run from the kept samples: the
compiled ``fold_scores`` sums the scores' products in the f basis (a coalition
of more than m/2 players as its complement, without pairing), each score row
on the f columns its influence reads, the rest in NumPy. 0 for an interaction fitted from enumerated coalitions only; ``inf``
with fewer than 2 samples. KernelSHAP-IQ of order >= 3: the middle sizes'
regression is a score row of its own and the border's part a linear map of
the lower orders; where border coalitions were drawn rather than enumerated
(a budget below the border's census) the standard errors are NaN, as their
SII weights depend on the coalition's size, which the compiled score pass
does not carry. For a stochastic game the enumerated coalitions'
own noise is not counted.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from .._index_weights import _bernoulli
from .._subsets import combinations, subset_masks as _masks
from .._validation import float64_array, frozen
from ..interactions import interactions, subset_position
from .._backend import kernels, resolve
from .base import Design, InteractionEstimate, run_design

__all__ = ["REGRESSION", "border_trick", "size_weights", "estimate", "check_regression_order",
           "check_sampling_weights", "aggregate_k_sii"]

#: shapiq's large weight (``Approximator._big_M``): sizes the kernel all but fits.
BIG_M = 1e8


def border_trick(m: int, budget: int, weights) -> tuple:
    """shapiq's CoalitionSampler's choice of sizes: (enumerated sizes, sorted,
    0 and m among them; sampled sizes int64; their probabilities). Sizes
    1..m-1 of weight 0 are never used; the budget is capped at the
    coalitions left."""
    per = [math.comb(m, s) for s in range(m + 1)]
    sample = [s for s in range(1, m) if weights[s] > 0]
    left = min(budget, 2 + sum(per[s] for s in sample)) - 2
    w = np.asarray([weights[s] for s in sample], dtype=np.float64)
    w = w / w.sum() if len(w) else w
    computed = [0, m]
    while sample:
        move = [s for s, p in zip(sample, w) if left * p >= per[s]]
        if not move:
            break
        computed += move
        left -= sum(per[s] for s in move)
        keep = [j for j, s in enumerate(sample) if s not in move]
        sample, w = [sample[j] for j in keep], w[keep]
        if len(w):
            w = w / w.sum()
    return sorted(set(computed)), np.array(sample, dtype=np.int64), w


def size_weights(method: str, m: int, order: int) -> np.ndarray:
    """shapiq's default sampling weights of the sizes 0..m (normalised)."""
    if method == "regression_fbii":
        w = np.array([math.comb(m, s) / 2.0 ** m for s in range(m + 1)])
    else:
        w = np.array([BIG_M if s < order or s > m - order else 1.0 / (s * (m - s))
                      for s in range(m + 1)])
    return w / w.sum()


def _kernel(method, m, t):
    """mu_t(s), s = 0..m: the order-t regression kernel (FBII: 2**-m)."""
    if method == "regression_fbii":
        return np.full(m + 1, 2.0 ** -m)
    return np.array([BIG_M if s < t or s > m - t else
                     1.0 / ((m - 2 * t + 1) * math.comb(m - 2 * t, s - t))
                     for s in range(m + 1)])


def _coefficients(method, order):
    """c(t, j), t, j = 0..order (shapiq's regression coefficient weights)."""
    b = _bernoulli(order)
    c = np.zeros((order + 1, order + 1))
    for t in range(order + 1):
        for j in range(t + 1):
            if method in ("regression_fsii", "regression_fbii"):
                c[t, j] = float(t == j)
            elif method == "kaddshap":
                c[t, j] = float(sum(math.comb(j, l) * b[t - l] for l in range(j + 1)))
            elif t >= 1:
                c[t, j] = float(sum(math.comb(j, l) * b[t - l] for l in range(1, j + 1)))
    return c


class Regression(Design):
    """One regression estimator's run (subclasses name the method)."""

    method = ""
    staged = False        # KernelSHAP-IQ: one regression per order on the residuals
    #: the empty set's value: v(empty) (False) or the fitted intercept + v(empty)
    intercept = False
    #: whether the regression on every coalition gives the index (else its
    #: full-budget result is that regression's, as shapiq's)
    consistent = True

    def __init__(self, m, index, deterministic, budget, order=1, pairing=False, weights=None,
                 stderr=True):
        super().__init__(m, index, deterministic, budget)
        self.with_stderr = stderr
        self.order = order
        self.coalitions = 2 if pairing else 1
        self.pairing = pairing
        (self.computed, self.sizes, self.cdf, self.coef, self.columns, self.column_sizes,
         self.census_weights, self.fold_columns, self.fold_sizes, self.fold_coef,
         self.transform, self.sample_weights, self.sampled, self.fixed_masks,
         self.complement_transform, *sparse) = _layout(
            type(self), m, order, budget, None if weights is None else tuple(weights))
        # the basis changes' nonzeros, row by row (None: the identity)
        self.sparse = [None if sparse[j] is None else (sparse[j], sparse[j + 1])
                       for j in (0, 2)]
        # the enumerated coalitions some kernel weighs 1e8 (below: folded in x)
        self.heavy_sizes = np.any(self.census_weights >= BIG_M, axis=0)
        p, k = len(self.fold_columns), len(self.census_weights)
        # the kernel rows' reach: the fit reads row j's normal equations only
        # on the columns of orders <= reach_order[j] (KernelSHAP-IQ's stage t
        # and order t's middle sizes read orders <= t; x_T is a sum of f_U, U
        # ⊆ T, so the f columns of those orders suffice)
        if self.staged:
            reach_order = [j + 1 if j < order else j - order + 3 for j in range(k)]
        else:
            reach_order = [order] * k
        self.reach = [sum(math.comb(m, t) for t in range(r + 1)) for r in reach_order]
        self.reach_x = [int(np.sum(self.column_sizes <= r)) for r in reach_order]
        # census, samples: each a plan of the folds (a row whose weights on
        # the sizes it folds equal an earlier row's is folded once: order t's
        # middle row is order t's row but on the border, which is heavy)
        self.plans = [_fold_plan(np.where(self.heavy_sizes, 0.0, self.census_weights),
                                 self.reach),
                      _fold_plan(self.sample_weights, self.reach)]
        # census, samples; then the same for the coalitions of more than m/2
        # players, folded as their complements (a coalition of 14 of 16 has
        # 470 subsets of size <= 3, its complement 4)
        self.gram = [[np.zeros((len(rows), q, q)) for rows, q in self.plans[part % 2][1]]
                     for part in range(4)]
        self.moment = [[np.zeros((len(rows), q)) for rows, q in self.plans[part % 2][1]]
                       for part in range(4)]
        self.work_x = np.empty(p)
        self.work_i = np.empty(p, dtype=np.int64)
        self.n_drawn = 0
        self.n_units = 0
        self.kept = []
        # KernelSHAP-IQ of order >= 3: the coalitions of the border sizes
        # (below the order or above m minus it) with their values, enumerated
        # ones and drawn ones apart (SII's own weights apply to them)
        self.border_top = order if self.staged and order >= 3 else 0
        self.border = {"census": [], "drawn": []}
        # the enumerated coalitions some kernel weighs 1e8 (v(empty), v(N),
        # KernelSHAP-IQ's border) are folded in the x basis, in NumPy: in
        # the f basis their 1e8 terms cancel in X'WX = M F'WF M' only to
        # 1e8 x rounding, which swamps the other coalitions' terms of the
        # columns that vanish on them (a rank-deficient sample then got an
        # arbitrary solution instead of shapiq's least-norm one)
        q = len(self.columns)
        self.heavy_gram = np.zeros((k, q, q))
        self.heavy_moment = np.zeros((k, q))

    # -- the loop's hooks ---------------------------------------------------------

    def fixed(self):
        return self.fixed_masks.copy()

    def _fold(self, impl, which, weights, masks, values, v0):
        large = 2 * np.bitwise_count(masks) > self.m
        full = np.uint64((1 << self.m) - 1)
        for part, at, ws in ((which, ~large, weights),
                             (which + 2, large, np.ascontiguousarray(weights[:, ::-1]))):
            if at.all():
                fold_masks, fold_values = masks, values
            else:
                fold_masks, fold_values = (np.ascontiguousarray(masks[at]),
                                           np.ascontiguousarray(values[at]))
            if part > 1:
                fold_masks = fold_masks ^ full
            if not len(fold_masks):
                continue
            for (rows, q), gram, moment in zip(self.plans[which][1], self.gram[part],
                                                 self.moment[part]):
                impl.fold_regression(fold_masks, fold_values, v0, np.ascontiguousarray(ws[rows]),
                                     self.fold_columns[:q], self.fold_sizes[:q], self.fold_coef,
                                     self.work_x, self.work_i, gram, moment)

    def _keep_border(self, which, masks, values):
        if self.border_top:
            sizes = np.bitwise_count(masks)
            at = (sizes < self.border_top) | (sizes > self.m - self.border_top)
            if at.any():
                self.border[which].append((masks[at], values[at]))

    def fold_fixed(self, impl, masks, values, v0):
        self.impl = impl
        self._keep_border("census", masks, values)
        sizes = np.bitwise_count(masks)
        heavy = self.heavy_sizes[sizes]
        if heavy.any():
            self._fold_heavy(masks[heavy], sizes[heavy], values[heavy] - v0)
            masks, values = np.ascontiguousarray(masks[~heavy]), \
                np.ascontiguousarray(values[~heavy])
        self._fold(impl, 0, self.census_weights, masks, values, v0)

    def _fold_heavy(self, masks, sizes, y):
        """X'WX and X'Wy of the coalitions a kernel weighs 1e8, in the x basis
        (x_T(S) = c(|T|, |T ∩ S|), exact zeros where it vanishes)."""
        x = self.coef[self.column_sizes[None, :],
                      np.bitwise_count(masks[:, None] & self.columns[None, :])]
        for j, kernel in enumerate(self.census_weights):
            w = kernel[sizes]
            if not w.any():
                continue
            wx = w[:, None] * x
            self.heavy_gram[j] += x.T @ wx
            self.heavy_moment[j] += wx.T @ y

    def samples_left(self, done):
        return len(self.sizes) > 0

    def draw(self, impl, seed, g, first, n):
        masks = np.empty(n, dtype=np.uint64)
        impl.draw_svarm(seed, np.uint64(g), first, self.m, self.sizes, self.cdf, masks)
        if not self.pairing:
            return masks[:, None], None
        full = np.uint64(2**self.m - 1)
        return np.stack([masks, masks ^ full], axis=1), None

    def fold(self, impl, masks, values, slots, v0):
        flat = np.ascontiguousarray(masks.reshape(-1))
        vals = np.ascontiguousarray(values.reshape(-1))
        self._fold(impl, 1, self.sample_weights, flat, vals, v0)
        self._keep_border("drawn", flat, vals)
        self.n_drawn += int(self.sampled[np.bitwise_count(flat)].sum())
        self.n_units += len(masks)
        if self.with_stderr:
            self.kept.append((np.array(masks), np.array(values)))

    # -- the solve ------------------------------------------------------------------

    def _normal(self):
        """(A (k, p, p) symmetric, h (k, p)): the estimated normal equations."""
        a, h = self.heavy_gram.copy(), self.heavy_moment.copy()
        (census_same, census_folds), (sample_same, sample_folds) = self.plans
        census_at, sample_at = _fold_positions(census_folds), _fold_positions(sample_folds)
        for first, t in ((0, self.sparse[0]), (2, self.sparse[1])):
            done = {}
            for j, (p, q) in enumerate(zip(self.reach_x, self.reach)):
                key = (census_same[j], sample_same[j])
                if key not in done:
                    f, r = census_at[key[0]]
                    gram, moment = self.gram[first][f][r].copy(), self.moment[first][f][r].copy()
                    if self.n_drawn:
                        f, r = sample_at[key[1]]
                        gram += self.gram[first + 1][f][r] / self.n_drawn
                        moment += self.moment[first + 1][f][r] / self.n_drawn
                    gram = np.triu(gram) + np.triu(gram, 1).T
                    if t is not None:
                        rows = (t[0][:p], t[1][:p])
                        gram = _rows_times(rows, _rows_times(rows, gram).T)
                        moment = _rows_times(rows, moment[:, None])[:, 0]
                    done[key] = gram, moment
                gram, moment = done[key]
                a[j, :p, :p] += gram
                h[j, :p] += moment
        return a, h

    def _blocks(self):
        """Column positions of each fitted stage (all columns, or one order each)."""
        if not self.staged:
            return [np.arange(len(self.columns))]
        return [np.flatnonzero(self.column_sizes == t) for t in range(1, self.order + 1)]

    def finish(self, v0):
        a, h = self._normal()
        blocks = self._blocks()
        phi = np.zeros(len(self.columns))
        self.plus, self.through = {}, {}
        for t, cols in enumerate(blocks):
            j = t if self.staged else 0
            done = np.concatenate(blocks[:t]) if t else cols[:0]
            if not self.staged or t < 2:
                rhs = h[j, cols] - a[j][np.ix_(cols, done)] @ phi[done]
                phi[cols] = self._solve(a[j][np.ix_(cols, cols)], rhs[None, :])[0]
                continue
            # shapiq's KernelSHAP-IQ of order t + 1 >= 3: the regression of
            # the residuals on the middle sizes (the border's responses set to
            # 0, its 1e8 weights kept in the normal matrix), plus SII's own
            # weights on the border coalitions' residuals
            jm = self._middle_row(t + 1)
            rhs = h[jm, cols] - a[jm][np.ix_(cols, done)] @ phi[done]
            self.plus[t] = self._solve(a[j][np.ix_(cols, cols)], rhs[None, :])[0]
            border, self.through[t] = self._border_sii(t + 1, v0, len(done))
            phi[cols] = self.plus[t] + border - self.through[t] @ phi[done]
        return self._layout(phi, v0), self._stderr(a, blocks, phi, v0)

    def _middle_row(self, t):
        """The kernel row of order t's middle sizes (t >= 3; after the k stages)."""
        return self.order + t - 3

    def _border_sii(self, t, v0, width):
        """(b, J): order t's SII weights summed over the border coalitions,
        b = G'(y - v0) and J = G'X with G[S, T] = (-1)^(t - |S∩T|) /
        ((m - t + 1) C(m - t, |S| - |S∩T|)) (SII's weight of v(S) in T's
        value) and X the coalitions' regression rows of orders 1..t-1
        (``width`` columns), so that order t's part from the border is b - J
        phi_{<t}. Enumerated coalitions count once, drawn ones with their
        importance weight C(m, s) / (P(s) N) (shapiq's sampler sums each
        distinct coalition once). NumPy on the kept coalitions: the same
        operations on the same input on either backend."""
        m = self.m
        parts, weights = [], []
        importance = np.divide(self.sample_weights[0], self.census_weights[0])
        for which in ("census", "drawn"):
            for masks, values in self.border[which]:
                sizes = np.bitwise_count(masks)
                keep = (sizes < t) | (sizes > m - t)
                parts.append((masks[keep], values[keep]))
                weights.append(np.ones(int(keep.sum())) if which == "census" else
                               importance[sizes[keep]] / max(self.n_drawn, 1))
        b, through = np.zeros(math.comb(m, t)), np.zeros((math.comb(m, t), width))
        if not parts:
            return b, through
        masks = np.concatenate([x[0] for x in parts])
        values = np.concatenate([x[1] for x in parts])
        weights = np.concatenate(weights)
        members = [_members(m, u) for u in range(t + 1)]
        sii = _border_weights(m, t)
        # in chunks of coalitions: G is (chunk, C(m, t))
        step = max(1, (1 << 22) // max(1, math.comb(m, t) + width))
        for lo in range(0, len(masks), step):
            bits = ((masks[lo:lo + step, None] >> np.arange(m, dtype=np.uint64)) & np.uint64(1)
                    ).astype(np.float64)
            sizes = bits.sum(axis=1).astype(np.int64)
            g = sii[sizes[:, None], (bits @ members[t]).astype(np.int64)]
            g *= weights[lo:lo + step, None]
            b += g.T @ (values[lo:lo + step] - v0)
            if width:
                x = np.concatenate([self.coef[u][(bits @ members[u]).astype(np.int64)]
                                    for u in range(1, t)], axis=1)
                through += g.T @ x
        return b, through

    def _solve(self, a, rhs):
        """x with a x = rhs[r] for each row r: the compiled Cholesky solve
        (numpy's lstsq where a is not numerically positive definite, as
        shapiq falls back to it)."""
        x = np.array(rhs, dtype=np.float64, order="C")
        if not len(a):
            return x
        info = np.zeros(1, dtype=np.int64)
        self.impl.cholesky_solve(np.array(a, order="C"), x, info)
        if info[0]:
            x = np.ascontiguousarray(np.linalg.lstsq(a, np.asarray(rhs).T, rcond=None)[0].T)
        return x

    def _stderr(self, a, blocks, phi, v0):
        """Standard errors of the reported entries: the sandwich
        sqrt(diag(L Cov(g_u) L^T) N_u) / N, with g_u a sample's scores
        (compiled: ``fold_scores``) and L the map from the scores to the
        entries' influence (stage t of phi: A_tt^-1 (g_t - sum_{i<t} A_ti
        psi_i), then the layout, k-SII's aggregation included)."""
        p = len(self.columns)
        width = sum(math.comb(self.m, t) for t in range(self.order + 1))
        if not self.n_units:
            return np.zeros(width)
        if not self.with_stderr:
            return np.full(width, np.nan)
        masks = np.ascontiguousarray(np.concatenate([k[0] for k in self.kept]))
        values = np.ascontiguousarray(np.concatenate([k[1] for k in self.kept]))
        n_units = len(masks)
        if n_units < 2:
            return np.full(width, np.inf)
        if any(len(x[0]) for x in self.border["drawn"]):
            # order >= 3 from drawn border coalitions: their SII-weighted sum
            # is not a score of the compiled pass (its weights depend on |S|)
            return np.full(width, np.nan)
        # the score rows, each a kernel row and the fit its residual then
        # loses: stage t (its kernel, phi_t); stage t >= 3 of KernelSHAP-IQ
        # (the middle sizes' kernel, its regression part; then no kernel, the
        # border's part, so the next stage sees phi_t's residual)
        rows_at, kernel_rows, parts = [], [], []
        for t, cols in enumerate(blocks):
            part = np.zeros(p)
            rows_at.append(len(kernel_rows))
            if t in self.plus:
                part[cols] = self.plus[t]
                kernel_rows.append(self.sample_weights[self._middle_row(t + 1)])
                parts.append(part)
                part = np.zeros(p)
                part[cols] = phi[cols] - self.plus[t]
                kernel_rows.append(np.zeros(self.m + 1))
            else:
                part[cols] = phi[cols]
                kernel_rows.append(self.sample_weights[t if self.staged else 0])
            parts.append(part)
        kernel_rows, parts = np.array(kernel_rows), np.array(parts)
        # the influence reads stage t's x scores of its own columns only: p
        # of the k p, x column c of score row block[c] (their covariance
        # below, the stages' cross terms included)
        block = np.zeros(p, dtype=np.int64)
        for t, cols in enumerate(blocks):
            block[cols] = rows_at[t]
        cov, total = self._score_moments(masks, values, v0, kernel_rows, parts, block)
        cov = (cov - np.outer(total, total) / n_units) / (n_units - 1)
        # influence of those x scores, by stage
        influence = np.zeros((p, p))
        for t, cols in enumerate(blocks):
            j = t if self.staged else 0
            prev = np.concatenate(blocks[:t]) if t else cols[:0]
            rows = np.zeros((len(cols), p))
            rows[:, cols] = np.eye(len(cols))
            jr = self._middle_row(t + 1) if t in self.plus else j
            rows -= a[jr][np.ix_(cols, prev)] @ influence[prev]
            influence[cols] = self._solve(a[j][np.ix_(cols, cols)], rows.T).T
            if t in self.plus:       # the border's part: - J phi_{<t}
                influence[cols] -= self.through[t] @ influence[prev]
        influence = self._layout(influence, 0.0)
        var = ((influence @ cov) * influence).sum(axis=1)
        return np.sqrt(np.maximum(var, 0.0) * n_units) / self.n_drawn

    def _score_moments(self, masks, values, v0, kernel_rows, parts, block):
        """(sum_u g_u g_u^T, sum_u g_u) of the samples' x scores g_u, score
        row block[c]'s column c for each x column c. ``fold_scores`` sums
        each sample's f-basis scores' products; without pairing a coalition
        of more than m/2 players is folded as its complement, in its own
        basis (its subsets of size <= k are the fewer), and the f scores the
        x scores read (x = M f, M's nonzeros row by row) are mapped to them."""
        p, q, k = len(self.columns), len(self.fold_columns), len(kernel_rows)
        if self.pairing:
            groups = [(np.ones(len(masks), dtype=bool), 0)]
        else:
            large = 2 * np.bitwise_count(masks[:, 0]) > self.m
            groups = [(~large, 0), (large, 1)]
        full = np.uint64((1 << self.m) - 1)
        second, total = np.zeros((p, p)), np.zeros(p)
        for at, flip in groups:
            if not at.any():
                continue
            transform = (self.transform, self.complement_transform)[flip]
            sparse = self.sparse[flip]
            if sparse is None:        # M = I
                sparse = (np.arange(p)[:, None], np.ones((p, 1)))
            group_masks = np.ascontiguousarray(masks[at] ^ full if flip else masks[at])
            weights = np.ascontiguousarray(kernel_rows[:, ::-1] if flip else kernel_rows)
            # each row's fit in the f basis: f . (M' part)
            fit = parts if transform is None else parts @ transform
            # each score row's f columns read: M's nonzeros in its x columns
            reach = np.zeros(k, dtype=np.int64)
            np.maximum.at(reach, block, sparse[0].max(axis=1) + 1)
            scores_sq, scores = np.zeros((k * q, k * q)), np.zeros(k * q)
            self.impl.fold_scores(group_masks, np.ascontiguousarray(values[at]), v0, weights,
                                  self.fold_columns, self.fold_sizes, self.fold_coef,
                                  np.ascontiguousarray(fit), reach, np.empty(k * q),
                                  np.empty(k * q, dtype=np.int64), np.empty(k * q),
                                  np.empty(k), scores_sq, scores)
            # the f scores read, and M's rows on them
            cols = sparse[0] + (block * q)[:, None]
            read = np.unique(cols)
            rows = (np.searchsorted(read, cols), sparse[1])
            sub = scores_sq[np.ix_(read, read)]          # upper triangle
            sub = np.triu(sub) + np.triu(sub, 1).T
            second += _rows_times(rows, _rows_times(rows, sub).T)
            total += _rows_times(rows, scores[read][:, None])[:, 0]
        return second, total

    def _layout(self, phi, v0):
        """The entries of orders 0..k (1 + sum C(m, t), then phi's trailing
        axes) from phi (p, ...), k-SII aggregated: linear but for v0."""
        m, k = self.m, self.order
        out = [np.zeros((math.comb(m, t),) + phi.shape[1:]) for t in range(k + 1)]
        for t in range(k + 1):
            at = self.column_sizes == t
            if at.any():
                out[t] = phi[at].copy()
        if self.intercept:
            out[0] = out[0] + v0
        else:
            out[0] = np.full((1,) + phi.shape[1:], v0)
        if self.index == "k-SII":
            out = aggregate_k_sii(out, m)
        return np.concatenate(out)

    def exact(self, table):
        if not self.consistent:
            # its estimand is not the index: the regression on every coalition
            impl = kernels("approximators", resolve(self.kernel, None))
            masks = np.arange(1 << self.m, dtype=np.uint64)
            for lo in range(0, len(masks), 1 << 16):
                self.fold_fixed(impl, masks[lo:lo + (1 << 16)], table[lo:lo + (1 << 16)],
                                table[0])
            self.kept = []
            return self.finish(table[0])[0]
        res = interactions(table, self.index, self.order, threads=1)
        vals = [np.asarray(x, dtype=np.float64) for x in res.values]
        if not self.intercept:
            vals[0] = np.array([table[0]], dtype=np.float64)
        return np.concatenate(vals)


@functools.lru_cache(maxsize=64)
def _layout(design, m, order, budget, weights):
    """What a regression run's design takes from (its class, m, order,
    budget, sampling weights as a tuple or None) alone, laid out once and
    read-only (a fastcredit.shap Kernel explainer runs one design per row):
    (enumerated sizes, sampled sizes, their cdf, c, the columns and their
    sizes, the census kernels, the fold's basis (masks, sizes, coefficients),
    the basis change M, the sample weights, the sampled sizes' flags, the
    enumerated coalitions)."""
    weights = size_weights(design.method, m, order) if weights is None else np.array(weights)
    computed, sizes, probs = border_trick(m, budget, weights)
    cdf = np.cumsum(probs)
    if len(cdf):
        cdf[-1] = 2.0
    coef = _coefficients(design.method, order)
    live = [t for t in range(order + 1) if np.any(coef[t] != 0)]
    columns = np.concatenate([_masks(m, t) for t in live])
    column_sizes = np.concatenate([np.full(math.comb(m, t), t, dtype=np.int64) for t in live])
    kernels = range(1, order + 1) if design.staged else (1,)
    # KernelSHAP-IQ of order t >= 3 (shapiq): a second row of order t's
    # kernel on the middle sizes t..m-t only (its regression's right-hand
    # side; the border sizes enter through SII's own weights, _border_sii)
    mu = np.array([_kernel(design.method, m, t) for t in kernels]
                  + [np.where(_middle(m, t), _kernel(design.method, m, t), 0.0)
                     for t in range(3, order + 1) if design.staged])
    # the folds use the sparse basis f_U(S) = [U ⊆ S], |U| <= k (x = M f, so
    # X'WX = M F'WF M'): the work per coalition is the square of its subsets
    # of size <= k, however dense x is
    fold_columns = np.concatenate([_masks(m, t) for t in range(order + 1)])
    fold_sizes = np.concatenate([np.full(math.comb(m, t), t, dtype=np.int64)
                                 for t in range(order + 1)])
    transform = _basis_change(coef, live, m, order)
    # the complements' basis: x_T(S) = c(t, t - |T ∩ (N \ S)|)
    flipped = np.array([[coef[t, t - j] if j <= t else 0.0 for j in range(order + 1)]
                        for t in range(order + 1)])
    complement_transform = _basis_change(flipped, live, m, order)
    sampled = np.zeros(m + 1, dtype=bool)
    sampled[sizes] = True
    per = np.array([math.comb(m, s) for s in range(m + 1)], dtype=np.float64)
    prob = np.zeros(m + 1)
    prob[sizes] = probs
    with np.errstate(divide="ignore", invalid="ignore"):
        sample_weights = np.where(sampled[None, :], mu * per / prob, 0.0)
    fixed = np.concatenate([_masks(m, s) for s in computed])
    arrays = [sizes, cdf, coef, columns, column_sizes, mu, fold_columns, fold_sizes,
              np.eye(order + 1), transform, sample_weights, sampled, fixed,
              complement_transform]
    for t in (transform, complement_transform):
        arrays += [None, None] if t is None else list(_padded_rows(t))
    return (tuple(computed),) + tuple(None if a is None else frozen(a) for a in arrays)


def _fold_plan(weights, reach):
    """(same, folds) for kernel rows ``weights`` (k, m + 1) of f-basis
    reaches ``reach``: same[j] the first row equal to row j (weights and
    reach), folds [(rows, reach)] the others grouped by reach, one
    ``fold_regression`` call each."""
    same = list(range(len(weights)))
    for j in range(len(weights)):
        same[j] = next(i for i in range(j + 1)
                       if reach[i] == reach[j] and np.array_equal(weights[i], weights[j]))
    folds = {}
    for j in range(len(weights)):
        if same[j] == j:
            folds.setdefault(reach[j], []).append(j)
    return same, [(rows, q) for q, rows in folds.items()]


def _fold_positions(folds):
    """row -> (fold, position in it) for a plan's folds."""
    return {j: (f, r) for f, (rows, _) in enumerate(folds) for r, j in enumerate(rows)}


@functools.lru_cache(maxsize=64)
def _members(m, t):
    """(m, C(m, t)) 0/1: player i in the t-subset (combinations order)."""
    out = np.zeros((m, math.comb(m, t)))
    players = combinations(m, t)
    for c in range(t):
        out[players[:, c], np.arange(len(players))] = 1.0
    return frozen(out)


def _border_weights(m, t):
    """(m + 1, t + 1): SII's weight of v(S) in T's value by |S| and |S∩T|
    for |T| = t, (-1)^(t - j) / ((m - t + 1) C(m - t, s - j)) (0 where
    impossible): shapiq's ``_ground_truth_sii_weight``."""
    out = np.zeros((m + 1, t + 1))
    for s in range(m + 1):
        for j in range(max(0, s + t - m), min(s, t) + 1):
            out[s, j] = (-1.0) ** (t - j) / ((m - t + 1) * math.comb(m - t, s - j))
    return out


def _middle(m, t):
    """Sizes 0..m of order t's regression (t <= s <= m - t; the others are
    the border its kernel weighs 1e8)."""
    s = np.arange(m + 1)
    return (s >= t) & (s <= m - t)


def _rows_times(sparse, b):
    """M @ b for M in the padded row form of :func:`_basis_change` ((p, w)
    column indices, (p, w) values; each row of M has at most 2**k nonzeros,
    so M G M' costs 2**k p q, not the dense p q**2)."""
    cols, vals = sparse
    out = vals[:, :1] * b[cols[:, 0]]
    for r in range(1, cols.shape[1]):
        out += vals[:, r:r + 1] * b[cols[:, r]]
    return out


def _padded_rows(dense):
    """(column indices, values) of each row's nonzeros, padded with zeros."""
    width = max(1, int((dense != 0).sum(axis=1).max()))
    cols = np.zeros((len(dense), width), dtype=np.int64)
    vals = np.zeros((len(dense), width))
    for i, row in enumerate(dense):
        nz = np.flatnonzero(row)
        cols[i, :len(nz)], vals[i, :len(nz)] = nz, row[nz]
    return cols, vals


def _basis_change(coef, live, m, order):
    """M (p, q) with x_T(S) = sum_U M[T, U] [U ⊆ S]: the columns T of the
    orders ``live``, U every subset of T (orders 0..k), M[T, U] =
    d(|T|, |U|), d(t, u) = sum_{j<=u} (-1)^(u-j) C(u, j) c(t, j) (Moebius
    inversion of c over the subsets of T); None when M is the identity."""
    d = np.zeros_like(coef, dtype=np.float64)
    for t in range(order + 1):
        for u in range(t + 1):
            d[t, u] = sum((-1) ** (u - j) * math.comb(u, j) * coef[t, j] for j in range(u + 1))
    if live == list(range(order + 1)) and np.array_equal(d, np.eye(order + 1)):
        return None
    starts = np.cumsum([0] + [math.comb(m, t) for t in range(order + 1)])
    rows = np.cumsum([0] + [math.comb(m, t) for t in live])
    out = np.zeros((rows[-1], starts[-1]))
    for r, t in enumerate(live):
        players = combinations(m, t)
        at = rows[r] + np.arange(len(players))
        for u in range(t + 1):
            if d[t, u] == 0.0:
                continue
            for pick in itertools.combinations(range(t), u):
                cols = starts[u] + (subset_position(players[:, list(pick)], m) if u else 0)
                out[at, cols] += d[t, u]
    return out


def aggregate_k_sii(sii, m):
    """k-SII(S) = sum over T ⊇ S, |T| <= k, of B_{|T|-|S|} SII(T) (Bordt &
    von Luxburg 2023, as shapiq aggregates); orders >= 1, the empty set's
    entry kept."""
    k = len(sii) - 1
    b = [float(x) for x in _bernoulli(k)]
    out = [x.copy() for x in sii]
    for t in range(2, k + 1):
        players = combinations(m, t)
        for s in range(1, t):
            for pick in itertools.combinations(range(t), s):
                pos = subset_position(players[:, list(pick)], m)
                np.add.at(out[s], pos, b[t - s] * sii[t])
    return out


class KernelSHAP(Regression):
    method, kernel, staged = "kernelshap", "approximators.kernelshap", True


class KernelSHAPIQ(Regression):
    method, kernel, staged = "kernelshapiq", "approximators.kernelshapiq", True


class InconsistentKernelSHAPIQ(Regression):
    method, kernel = "inconsistent_kernelshapiq", "approximators.inconsistent_kernelshapiq"
    consistent = False


class KADDSHAP(Regression):
    method, kernel = "kaddshap", "approximators.kaddshap"


class RegressionFSII(Regression):
    method, kernel = "regression_fsii", "approximators.regression_fsii"


class RegressionFBII(Regression):
    method, kernel, intercept = "regression_fbii", "approximators.regression_fbii", True


#: method -> (design, indices, most orders (None: m))
REGRESSION = {"kernelshap": (KernelSHAP, ("SV", "SII"), 1),      # SII of order 1 is SV
              "kernelshapiq": (KernelSHAPIQ, ("SII", "k-SII"), None),
              "inconsistent_kernelshapiq": (InconsistentKernelSHAPIQ, ("SII", "k-SII"), None),
              "kaddshap": (KADDSHAP, ("kADD-SHAP",), None),
              "regression_fsii": (RegressionFSII, ("FSII",), None),
              "regression_fbii": (RegressionFBII, ("FBII",), None)}


def check_regression_order(method: str, index: str, order: int) -> int:
    """``order`` for a regression method and index (SV: 1)."""
    top = REGRESSION[method][2]
    if top is not None and order > top:
        raise ValueError(f"order must be at most {top} for method={method!r}, got {order}")
    return order


def check_sampling_weights(weights, m: int) -> np.ndarray:
    """shapiq's ``sampling_weights``: (m + 1,) finite, non-negative, some
    size 1..m-1 positive when m >= 2 (a copy)."""
    w = float64_array(weights, "sampling_weights")
    if w.shape != (m + 1,):
        raise ValueError(f"sampling_weights must have shape ({m + 1},) (sizes 0..m), got "
                         f"{w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sampling_weights must be finite and non-negative")
    if m > 1 and not np.any(w[1:m] > 0):
        raise ValueError("sampling_weights must give some size 1..m-1 a positive weight")
    return w.copy()


def estimate(method, g, index, order, budget, seed, threads, pairing, weights, stderr=True):
    """fc.approximate for a regression method (arguments checked); without
    ``stderr`` the variance pass is skipped (NaN)."""
    design = REGRESSION[method][0]
    m = g.m
    width = sum(math.comb(m, t) for t in range(order + 1))

    def make():
        return design(m, index, bool(g.deterministic), budget, order=order, pairing=pairing,
                      weights=weights, stderr=stderr)

    _, values, stderr, n_evals, n_samples = run_design(make, g, index, budget, seed, threads,
                                                       width=width)
    cuts = np.cumsum([math.comb(m, t) for t in range(order + 1)])[:-1]
    return InteractionEstimate(index=index, order=order, m=m,
                               values=tuple(np.split(values, cuts, axis=-1)),
                               stderr=tuple(np.split(stderr, cuts, axis=-1)),
                               n_evals=n_evals, n_samples=n_samples, method=method)
