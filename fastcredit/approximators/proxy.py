r"""ProxySPEX (Butler et al. 2025, "ProxySPEX: Inference-Efficient
Interpretability via Sparse Feature Interactions in LLMs"; shapiq's
``ProxySPEX``): a gradient-boosted tree ensemble fitted to the game's values
on sampled coalitions is the proxy whose Fourier transform is read off its
trees; the largest coefficients are refitted by ridge regression and turned
into Moebius coefficients, and those into the index (``method="proxyspex"``).

The steps, each as shapiq 1.4.1's:

1. **Coalitions**: shapiq's ``CoalitionSampler`` with the size weights
   C(m, s) (a uniformly random coalition) and the pairing trick: v(empty)
   and v(N), then a coalition and its complement per draw, each distinct
   coalition evaluated once (the regression family's sampler: the compiled
   ``draw_svarm`` stream). The training rows are the distinct coalitions in
   the order first seen (every draw of a stochastic game).
2. **The proxy**: LightGBM regressors (``LGBMRegressor(verbose=-1, n_jobs=1)``
   with shapiq's grid ``learning_rate`` in (0.01, 0.1), ``max_depth`` in
   (3, 5), ``max_iter`` in (500, 1000)), chosen by 5-fold cross-validated R²
   (scikit-learn's ``KFold(5)`` without shuffling, the mean over folds, the
   first best in the grid's order), then refitted on every row. This is
   shapiq's ``GridSearchCV`` estimator, computed with less work and the same
   bits: boosting is sequential and, without bagging or feature
   subsampling, deterministic, so a 500-round model is the first 500 trees
   of the 1000-round one: one 1000-round fit per (rate, depth) and fold is
   scored at 500 trees and at 1000 (20 fits, not 40, the folds' fits
   spread over ``threads``, each LightGBM model on one thread as shapiq's);
   the fitting itself is LightGBM's.
3. **The trees' Fourier coefficients** (Gorji et al. 2024, shapiq's
   ``_lgboost_to_fourier``): a leaf of value w at depth d is
   :math:`w\, 2^{-d} \prod_j (1 \pm \chi_{f_j})` over its path (+ for the
   left branch, x = 0; :math:`\chi_f = (-1)^{x_f}`); the compiled kernel
   ``tree_fourier`` (csrc/proxyspex.c, fastcredit._numba.approximators)
   expands every leaf and sums the terms per frequency.
4. **Refinement** (shapiq's ``_refine``): the coefficients that carry 95% of
   the energy outside the empty frequency are kept, and refitted by ridge
   regression on the ±1 Fourier basis with the penalty chosen among
   ``logspace(-6, 6, 100)`` by exact leave-one-out error (scikit-learn's
   ``RidgeCV(fit_intercept=False)``: the same estimator; here from one SVD
   of the basis, all penalties in a few matrix products).
5. **The index**: the index's Moebius weights
   (``fastcredit._index_weights``) applied to the Moebius coefficients
   :math:`a(T) = (-2)^{|T|} \sum_{K \supseteq T} F(K)`, folded into one
   pass over the frequencies (SPEX's ``fourier_to_index``); the shapiq
   drop-in takes the Moebius coefficients themselves (``fourier_to_moebius``).

shapiq's GridSearchCV is most of shapiq's time (docs/approximators.md has
the measurement); steps 1, 3 and 4 here take a fraction of a second.

No standard errors: the estimator (a cross-validated tree ensemble, then a
truncation) has no variance formula; ``stderr`` is NaN.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _parallel
from .._backend import kernels, resolve
from .._index_weights import _CARDINAL
from .._subsets import subset_masks
from ..games import TABLE, masks_to_bool
from .base import Design, InteractionEstimate, run_design
from .regression import border_trick
from .sparse import fourier_to_index, fourier_to_moebius

__all__ = ["ProxySpex", "PROXY", "INDICES", "estimate", "moebius", "proxy_fourier",
           "fit_fourier", "trees_of", "ensemble_fourier", "refine", "ridge"]

#: the indices estimated (those with Moebius weights)
INDICES = tuple(_CARDINAL)
#: shapiq's grid (its ``decoder_args``), in scikit-learn's ParameterGrid order
#: (keys sorted, the last fastest)
GRID = {"learning_rate": (0.01, 0.1), "max_depth": (3, 5), "max_iter": (500, 1000)}
FOLDS = 5
#: RidgeCV's penalties in shapiq's refinement
ALPHAS = np.logspace(-6, 6, 100)
#: the share of the energy the kept coefficients carry
ENERGY = 0.95


def lightgbm():
    """The lightgbm module, or ImportError saying how to get it."""
    try:
        import lightgbm as lgb
    except ImportError as exc:
        raise ImportError("method='proxyspex' needs lightgbm: pip install "
                          "'fastcredit[lightgbm]'") from exc
    return lgb


def _params(learning_rate, max_depth, rounds, seed):
    """The LightGBM parameters LGBMRegressor(verbose=-1, n_jobs=1,
    random_state=seed, learning_rate=..., max_depth=..., max_iter=rounds)
    trains with (its defaults, as lightgbm 4's ``_process_params``)."""
    return {"boosting_type": "gbdt", "colsample_bytree": 1.0, "learning_rate": learning_rate,
            "max_depth": max_depth, "min_child_samples": 20, "min_child_weight": 0.001,
            "min_split_gain": 0.0, "num_leaves": 31, "random_state": seed, "reg_alpha": 0.0,
            "reg_lambda": 0.0, "subsample": 1.0, "subsample_for_bin": 200000,
            "subsample_freq": 0, "verbose": -1, "num_iterations": rounds,
            "objective": "regression", "num_threads": 1}


def _train(lgb, x, y, learning_rate, max_depth, rounds, seed):
    """The booster LGBMRegressor would fit (kept trainable: no model-text
    round trip)."""
    return lgb.train(_params(learning_rate, max_depth, rounds, seed), lgb.Dataset(x, label=y),
                     keep_training_booster=True)


def _r2(y, pred):
    """scikit-learn's r2_score (1 when y is constant and fitted exactly, 0
    when constant and not)."""
    num = ((y - pred) ** 2).sum()
    den = ((y - y.mean()) ** 2).sum()
    if den == 0:
        return 1.0 if num == 0 else 0.0
    return 1.0 - num / den


def fit_fourier(masks, y, m, seed, threads, backend):
    """(frequencies uint64, coefficients): the Fourier transform of the
    cross-validated LightGBM proxy of ``y`` on the coalitions ``masks``
    (steps 2 and 3), zero coefficients left out. ``seed``: LightGBM's
    ``random_state`` (None: its default)."""
    lgb = lightgbm()
    n = len(y)
    if n < FOLDS:
        raise ValueError(f"method='proxyspex' needs at least {FOLDS} coalitions for its "
                         f"{FOLDS}-fold cross-validation, got {n}")
    x = masks_to_bool(masks, m).astype(np.float64)
    y = np.asarray(y, dtype=np.float64)
    rates, depths, rounds = GRID["learning_rate"], GRID["max_depth"], GRID["max_iter"]
    fits = [(r, d) for r in rates for d in depths]
    # KFold(5): the first n % 5 folds one row longer, in row order
    sizes = np.full(FOLDS, n // FOLDS) + (np.arange(FOLDS) < n % FOLDS)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    scores = np.empty((len(fits), len(rounds), FOLDS))

    def work(a, b):
        for task in range(a, b):
            (rate, depth), fold = fits[task // FOLDS], task % FOLDS
            test = np.zeros(n, dtype=bool)
            test[bounds[fold]:bounds[fold + 1]] = True
            booster = _train(lgb, x[~test], y[~test], rate, depth, max(rounds), seed)
            for j, r in enumerate(rounds):
                pred = booster.predict(x[test], num_iteration=r)
                scores[task // FOLDS, j, fold] = _r2(y[test], pred)

    _parallel.run(work, len(fits) * FOLDS, threads)
    # candidates in the grid's order (rate, depth, rounds); the first best mean
    best = int(np.argmax(scores.mean(axis=2).reshape(-1)))
    (rate, depth), r = fits[best // len(rounds)], rounds[best % len(rounds)]
    return tree_fourier(_train(lgb, x, y, rate, depth, r, seed), m, backend)


_FIELDS = ("num_leaves", "split_feature", "left_child", "right_child", "leaf_value")


def tree_fourier(booster, m, backend):
    """The ensemble's Fourier coefficients (step 3)."""
    return ensemble_fourier(*trees_of(booster), m, backend)


def trees_of(booster):
    """A LightGBM booster's trees in ensemble_fourier's layout, read from
    its model text (the leaf values exact, as its predictions use them)."""
    text = booster.model_to_string()
    lines = {f: [] for f in _FIELDS}
    for line in text[:text.index("end of trees")].split("\n"):
        key, _, value = line.partition("=")
        if key in lines:
            lines[key].append(value)

    def numbers(field, dtype):
        return np.array(" ".join(lines[field]).split(), dtype=dtype)

    leaves = numbers("num_leaves", np.int64)
    return (numbers("split_feature", np.int64), numbers("left_child", np.int64),
            numbers("right_child", np.int64), np.concatenate([[0], np.cumsum(leaves - 1)]),
            numbers("leaf_value", np.float64), np.concatenate([[0], np.cumsum(leaves)]))


def ensemble_fourier(split_feature, left_child, right_child, node_start, leaf_value,
                     leaf_start, m, backend=None):
    """(frequencies uint64, coefficients): the Fourier transform of a sum of
    trees over m binary features (LightGBM's layout: tree k's internal nodes
    ``node_start[k]:node_start[k + 1]``, child c >= 0 the tree's node c, c < 0
    its leaf -c - 1, leaves ``leaf_start[k]:leaf_start[k + 1]``), each
    frequency once, in the order first met, zero coefficients left out: the
    compiled ``tree_fourier`` kernel (csrc/approximators.h has its
    contract), called once to count the terms and once to sum them."""
    impl = kernels("approximators", resolve(ProxySpex.kernel, backend))
    trees = (np.ascontiguousarray(split_feature, dtype=np.int64),
             np.ascontiguousarray(left_child, dtype=np.int64),
             np.ascontiguousarray(right_child, dtype=np.int64),
             np.ascontiguousarray(node_start, dtype=np.int64),
             np.ascontiguousarray(leaf_value, dtype=np.float64),
             np.ascontiguousarray(leaf_start, dtype=np.int64), m)
    counts = np.zeros(2, dtype=np.int64)
    impl.tree_fourier(*trees, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64),
                      np.zeros(0), counts)
    terms = int(counts[0])
    slots = np.empty(1 << max(1, (2 * terms - 1).bit_length()), dtype=np.int64)
    freqs, coefs = np.empty(terms, dtype=np.uint64), np.empty(terms)
    impl.tree_fourier(*trees, slots, freqs, coefs, counts)
    freqs, coefs = freqs[:counts[1]], coefs[:counts[1]]
    keep = coefs != 0.0
    return freqs[keep], coefs[keep]


def refine(freqs, coefs, masks, y):
    """(frequencies, coefficients) of the refit (step 4): those above the
    95%-energy threshold, refitted on the ±1 basis (-1)^|S ∩ K| by ridge
    regression with RidgeCV's leave-one-out choice of the penalty."""
    if not len(freqs):
        return freqs, coefs
    energy = np.where(freqs == 0, 0.0, coefs) ** 2
    ranked = np.sort(energy)[::-1]
    total = energy.sum()
    # shapiq's threshold: the coefficient after the first whose cumulated
    # share reaches 95% (all of them when there is no energy outside K = {})
    at = int(np.argmin(np.cumsum(ranked / total) < ENERGY)) + 1 if total > 0 else len(ranked)
    threshold = math.sqrt(ranked[at]) if at < len(ranked) else 0.0
    support = freqs[np.abs(coefs) > threshold]
    if not len(support):
        return support, np.zeros(0)
    basis = 1.0 - 2.0 * (np.bitwise_count(masks[:, None] & support[None, :]) & 1)
    return support, ridge(basis, np.asarray(y, dtype=np.float64))


def ridge(basis, y):
    """scikit-learn's RidgeCV(alphas=ALPHAS, fit_intercept=False) fit of y on
    the columns of ``basis``: the first penalty of least mean squared
    leave-one-out error (exact, from one eigendecomposition), its
    coefficients."""
    # RidgeCV's decompositions: of the p x p covariance when n > p, else of
    # the n x n Gram matrix; z = the basis in the eigenvectors' coordinates
    wide = basis.shape[0] <= basis.shape[1]
    eig, vec = np.linalg.eigh(basis @ basis.T if wide else basis.T @ basis)
    z = vec * np.sqrt(np.maximum(eig, 0.0)) if wide else basis @ vec
    zty = z.T @ y
    z2 = z * z
    best, best_score = 0, -np.inf
    # the penalties in blocks: the fitted values and leverages (n, block)
    block = max(1, (1 << 22) // max(1, len(y)))
    for lo in range(0, len(ALPHAS), block):
        inverse = 1.0 / (np.maximum(eig, 0.0)[:, None] + ALPHAS[None, lo:lo + block])
        loo = (y[:, None] - z @ (inverse * zty[:, None])) / (1.0 - z2 @ inverse)
        score = -(loo * loo).mean(axis=0)
        j = int(np.argmax(score))
        if score[j] > best_score:        # the first best penalty, as RidgeCV
            best, best_score = lo + j, score[j]
    inverse = 1.0 / (np.maximum(eig, 0.0) + ALPHAS[best])
    if wide:
        return basis.T @ (vec @ (inverse * (vec.T @ y)))
    return vec @ (inverse * zty)


def proxy_fourier(masks, values, m, lgb_seed, threads, backend):
    """(frequencies uint64, coefficients): ProxySPEX's sparse Fourier
    transform of a game from its values on the coalitions ``masks`` (steps 2
    to 4: the proxy's coefficients, refined)."""
    freqs, coefs = fit_fourier(masks, values, m, lgb_seed, threads, backend)
    return refine(freqs, coefs, masks, values)


def _run(g, index, order, budget, seed, threads, lgb_seed):
    """run_design's output for ProxySpex designs on game g, and the design
    of its last game (whose ``fourier`` the sparse result is)."""
    n_games = g.value.shape[0] if g.kind == TABLE else 1
    # the folds' fits over the threads for one game, the games for a batch
    inner = threads if n_games == 1 else 1
    lightgbm()                # before the game is evaluated
    made = []

    def make():
        made.append(ProxySpex(g.m, index, bool(g.deterministic), budget, g.backend, order=order,
                              threads=inner, lgb_seed=lgb_seed))
        return made[-1]

    width = 0 if order is None else sum(math.comb(g.m, t) for t in range(order + 1))
    return run_design(make, g, index, budget, seed, threads, width=width), made[-1]


def estimate(g, index, order, budget, seed, threads):
    """fc.approximate(method="proxyspex") (arguments checked)."""
    m = g.m
    (_, values, stderr, n_evals, n_samples), _ = _run(g, index, order, budget, seed, threads,
                                                      int(seed) % 2**31)
    cuts = np.cumsum([math.comb(m, t) for t in range(order + 1)])[:-1]
    return InteractionEstimate(index=index, order=order, m=m,
                               values=tuple(np.split(values, cuts, axis=-1)),
                               stderr=tuple(np.split(stderr, cuts, axis=-1)),
                               n_evals=n_evals, n_samples=n_samples, method="proxyspex")


def moebius(g, budget, seed, threads, lgb_seed):
    """({players tuple: Moebius coefficient}, evaluations spent): shapiq's
    ProxySPEX's sparse Moebius transform of one game g (arguments checked);
    a budget that covers a deterministic game's 2**m coalitions fits the
    proxy to all of them, as shapiq's (not the exact transform)."""
    (*_, n_evals, _), design = _run(g, "Moebius", None, budget, seed, threads, lgb_seed)
    return fourier_to_moebius(*design.fourier), n_evals


class ProxySpex(Design):
    """ProxySPEX's run: shapiq's uniform sampler with pairing, the distinct
    coalitions kept; ``finish`` fits the proxy and returns the index of
    orders 0..order flattened (``order=None``: nothing, the refined Fourier
    transform left in ``fourier``)."""

    kernel = "approximators.proxyspex"
    coalitions = 2

    def __init__(self, m, index, deterministic, budget, backend, order=None, threads=1,
                 lgb_seed=None):
        super().__init__(m, index, deterministic, budget)
        self.backend, self.order, self.threads = backend, order, threads
        self.lgb_seed = lgb_seed
        computed, self.sizes, probabilities = border_trick(
            m, budget, [math.comb(m, s) for s in range(m + 1)])
        self.cdf = np.cumsum(probabilities)
        self.fixed_masks = np.concatenate([subset_masks(m, s) for s in computed])
        self.rows, self.values = [], []
        self.fourier = None

    def fixed(self):
        return self.fixed_masks.copy()

    def fold_fixed(self, impl, masks, values, v0):
        self.rows.append(np.array(masks))
        self.values.append(np.array(values))

    def samples_left(self, done):
        return len(self.sizes) > 0

    def draw(self, impl, seed, g, first, n):
        masks = np.empty(n, dtype=np.uint64)
        impl.draw_svarm(seed, np.uint64(g), first, self.m, self.sizes, self.cdf, masks)
        return np.stack([masks, masks ^ np.uint64(2**self.m - 1)], axis=1), None

    def fold(self, impl, masks, values, slots, v0):
        self.rows.append(masks.reshape(-1).copy())
        self.values.append(values.reshape(-1).copy())

    def finish(self, v0):
        masks, values = np.concatenate(self.rows), np.concatenate(self.values)
        if self.deterministic:
            first = np.sort(np.unique(masks, return_index=True)[1])
            masks, values = masks[first], values[first]
        self.fourier = proxy_fourier(masks, values, self.m, self.lgb_seed, self.threads,
                                     self.backend)
        if self.order is None:
            return np.zeros(0), np.zeros(0)
        out = np.concatenate(fourier_to_index(*self.fourier, self.index, self.m, self.order,
                                              empty=v0))
        return out, np.full(out.shape, np.nan)

    def exact(self, table):
        """Every coalition evaluated: the index itself (``order=None``, the
        sparse result: the proxy fitted to every coalition, as shapiq's)."""
        if self.order is None:
            masks = np.arange(1 << self.m, dtype=np.uint64)
            self.fourier = proxy_fourier(masks, table, self.m, self.lgb_seed, self.threads,
                                         self.backend)
            return np.zeros(0)
        from ..interactions import interactions
        return np.concatenate(interactions(table, self.index, self.order).values)

    estimate = staticmethod(estimate)


#: method -> (its design, the indices it estimates)
PROXY = {"proxyspex": (ProxySpex, INDICES)}
