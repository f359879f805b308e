"""shap's KernelExplainer over fastcredit's KernelSHAP sample and compiled solve.

A row's KernelSHAP is three steps, the model call in the middle:

1. the sample: the coalitions fc.approximate's KernelSHAP design takes for
   the row's seed within ``nsamples + 2`` model evaluations (the sizes the
   budget covers enumerated, the rest drawn, each draw followed by its
   complement), with their regression weights (:func:`kernel_sample`). It
   depends on the seed alone, so the rows of a call are planned first and
   their coalitions evaluated together, several rows per model call;
2. shap's ``l1_reg`` feature selection on that sample (scikit-learn's LARS,
   LassoLarsIC or Lasso on shap's augmented problem, as shap calls them:
   :func:`select_features`);
3. the weighted least squares on the selected features with the efficiency
   constraint (the last selected feature eliminated, as shap does), from
   the row's weighted Gram matrix, solved by the compiled Cholesky kernel
   (:func:`constrained_fit`).
"""
from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import scipy.sparse
import shap
from shap.utils._legacy import IdentityLink, convert_to_instance, match_instance_to_data

from .._backend import kernels
from .._params import SEED
from ..approximators.base import BATCH, SAMPLES_PER_EVALUATION, _run_one
from ..approximators.regression import KernelSHAP
from ..games import as_game
from ._common import Lookahead, RowGame, legacy_varying
from .permutation import BACKEND, exact_shapley

__all__ = ["KernelExplainer"]

#: shap's limit on the coalitions a row's fraction evaluated is counted against
#: (``max_samples``) when 2**M - 2 is larger.
MAX_SAMPLES = 2**30
#: shap's rule for l1_reg="auto": AIC selection below this fraction evaluated.
AUTO_FRACTION = 0.2


def legacy_link(link):
    """A legacy explainer's link (shap.utils._legacy.Link, NumPy already:
    its logit clips probabilities to [1e-15, 1 - 1e-15]), None for the
    identity."""
    return None if isinstance(link, IdentityLink) else link.f


def dense(values) -> np.ndarray:
    """A legacy explainer's data or row as a dense array (its dtype kept:
    a model may take strings)."""
    return values.toarray() if scipy.sparse.issparse(values) else np.asarray(values)


def check_nsamples(nsamples, k: int) -> int:
    """shap's ``nsamples`` for k varying features: the coalitions sampled
    besides v({}) and v(N) ("auto": 2 k + 2048), at most 2**k - 2."""
    if isinstance(nsamples, str) and nsamples == "auto":
        nsamples = 2 * k + 2048
    if isinstance(nsamples, (bool, np.bool_)) or not isinstance(
            nsamples, (int, np.integer)) or nsamples < 1:
        raise ValueError(f"nsamples must be a positive integer or 'auto', got {nsamples!r}")
    return min(int(nsamples), 2**k - 2) if k <= 30 else int(nsamples)


def selection_rule(l1_reg, fraction_evaluated: float):
    """shap's ``l1_reg`` for a row of which ``fraction_evaluated`` of the
    coalitions are sampled: None (no selection: False, 0, or "auto" at 20%
    or more), ("num_features", r), ("aic" | "bic", None) or ("lasso", alpha)."""
    if isinstance(l1_reg, str):
        if l1_reg == "auto":
            warnings.warn("l1_reg='auto' is deprecated and will be removed in a future version.",
                          DeprecationWarning, stacklevel=4)
            return ("aic", None) if fraction_evaluated < AUTO_FRACTION else None
        if l1_reg in ("aic", "bic"):
            return l1_reg, None
        if l1_reg.startswith("num_features(") and l1_reg.endswith(")"):
            count = l1_reg[len("num_features("):-1]
            if count.strip().isdigit() and int(count) >= 1:
                return "num_features", int(count)
        raise ValueError(f'l1_reg must be "num_features(r)" with r >= 1, "aic", "bic", '
                         f'"auto", False or a non-negative float (Lasso\'s alpha), got '
                         f'{l1_reg!r}')
    if isinstance(l1_reg, (bool, np.bool_, int, float, np.number)):
        if not np.isfinite(l1_reg) or l1_reg < 0:
            raise ValueError(f"l1_reg as Lasso's alpha must be finite and >= 0, got {l1_reg!r}")
        # shap's rule: False and 0 select nothing; True is Lasso's alpha 1
        return None if l1_reg == 0 else ("lasso", float(l1_reg))
    raise TypeError(f"l1_reg must be a string, a number or False, got {type(l1_reg).__name__}")


class _SampleOnly(KernelSHAP):
    """fc.approximate's KernelSHAP design run for its sample alone: the
    enumerated coalitions and the draws its loop takes within the budget
    (which do not depend on the game's values), kept instead of folded."""

    def __init__(self, k, budget):
        super().__init__(k, "SV", True, budget, order=1, pairing=True, stderr=False)
        self.draws = []

    def fold_fixed(self, impl, masks, values, v0):
        self.census = masks

    def fold(self, impl, masks, values, slots, v0):
        self.draws.append(masks.reshape(-1))

    def finish(self, v0):
        return np.zeros(self.m), np.zeros(self.m)


@functools.lru_cache(maxsize=64)
def _valueless_game(k: int):
    """A game of k players whose every value is 0: drives the sample's loop."""
    return as_game(lambda masks: np.zeros(len(masks)), k)


@functools.lru_cache(maxsize=64)
def _exact_sample(k: int):
    """Every coalition besides {} and N, with the Shapley kernel's weights
    (normalised), read-only."""
    masks = np.arange(1, 2**k - 1, dtype=np.uint64)
    mu = _SampleOnly(k, 2**k).census_weights[0]
    weights = mu[np.bitwise_count(masks)]
    masks.flags.writeable = weights.flags.writeable = False
    return masks, weights / weights.sum()


def _draws(design: _SampleOnly, seed: int, left: int):
    """The draws (flat masks, each followed by its complement) fc.approximate's
    loop takes for ``seed`` with ``left`` evaluations after the enumerated
    sizes, found as its first round finds them (the first n samples, n
    doubled until their new coalitions pass what is left; the stream's
    draws are a function of the sample number); None when that round takes
    all of its samples (the loop goes on: then the loop itself is run). The
    drawn sizes are never enumerated ones, so a draw is new when it is the
    first of its coalition."""
    count = min(BATCH, SAMPLES_PER_EVALUATION * design.budget)
    n = min(count, 2 * (left // 2) + 16)
    impl = kernels("approximators", BACKEND)
    while True:
        masks = design.draw(impl, np.uint64(seed), 0, 0, n)[0].reshape(-1)
        firsts = np.zeros(len(masks), dtype=bool)
        firsts[np.unique(masks, return_index=True)[1]] = True
        cost = np.cumsum(firsts.reshape(n, 2).sum(axis=1))
        if n == count or cost[-1] > left:
            break
        n = min(count, 2 * n)
    take = int(np.searchsorted(cost, left, side="right"))
    return None if take == count else masks[:2 * take]


def kernel_sample(k: int, nsamples: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the coalitions the model evaluates, sorted and distinct, {} and N
    among them; the regression's coalitions, distinct, without {} and N;
    their weights, summing to 1).

    With nsamples >= 2**k - 2 every coalition, weighted by the Shapley
    kernel. Else fc.approximate's KernelSHAP sample for ``seed`` at budget
    nsamples + 2 (``pairing=True``): the coalitions of the sizes the budget
    covers with their kernel weight, and the draws up to the budget (each
    distinct coalition counted once) with shapiq's importance weights, a
    coalition drawn twice weighing twice. The regression on it is
    fc.approximate's (that one holds the efficiency constraint by weighting
    {} and N 1e8, this one exactly).
    """
    if k <= 30 and nsamples >= 2**k - 2:
        coalitions, weights = _exact_sample(k)
        return np.arange(2**k, dtype=np.uint64), coalitions, weights
    budget = nsamples + 2
    design = _SampleOnly(k, budget)
    census = design.fixed_masks
    left = budget - len(census)
    draws = (_draws(design, seed, left) if left > 0 and len(design.sizes) else
             np.empty(0, dtype=np.uint64))
    if draws is None:
        _run_one(design, _valueless_game(k), 0, np.uint64(seed), budget,
                 kernels("approximators", BACKEND))
        draws = np.concatenate(design.draws)
    full = np.uint64(2**k - 1) if k < 64 else np.uint64(2**64 - 1)
    sizes_census, sizes_drawn = np.bitwise_count(census), np.bitwise_count(draws)
    weights = np.concatenate([
        design.census_weights[0][sizes_census],
        design.sample_weights[0][sizes_drawn] / max(len(draws), 1)])
    every, at = np.unique(np.concatenate([census, draws]), return_inverse=True)
    total = np.bincount(at, weights=weights, minlength=len(every))
    inner = (every != 0) & (every != full)
    return every, every[inner], total[inner] / total[inner].sum()


def bit_matrix(masks: np.ndarray, k: int) -> np.ndarray:
    """(n, k) float64: 1 where coalition n holds feature j."""
    return ((masks[:, None] >> np.arange(k, dtype=np.uint64)) & np.uint64(1)).astype(np.float64)


def select_features(rule, x: np.ndarray, weights: np.ndarray, y: np.ndarray,
                    total: float) -> np.ndarray:
    """The features shap's ``l1_reg`` keeps for one output (in the order
    its selector gives them, the last eliminated by the constraint): the
    selector fitted, as shap fits it, on the augmented problem whose rows
    are each coalition S with weight w (k - |S|) and its complement with
    weight w |S| (targets y and y - total, designs x and x - 1), scaled by
    the square roots of the weights."""
    from sklearn.linear_model import Lasso, LassoLarsIC, lars_path
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    how, param = rule
    k = x.shape[1]
    s = x.sum(axis=1)
    root = np.sqrt(np.concatenate([weights * (k - s), weights * s]))
    target = np.concatenate([y, y - total]) * root
    design = root[:, None] * np.concatenate([x, x - 1.0])
    if how == "num_features":
        return np.asarray(lars_path(design, target, max_iter=param)[1], dtype=np.int64)
    if how in ("aic", "bic"):
        model = make_pipeline(StandardScaler(with_mean=False), LassoLarsIC(criterion=how))
        return np.flatnonzero(model.fit(design, target)[1].coef_)
    return np.flatnonzero(Lasso(alpha=param).fit(design, target).coef_)


def constrained_fit(gram: np.ndarray, moment: np.ndarray, total: np.ndarray,
                    selected: np.ndarray) -> np.ndarray:
    r"""phi (outputs, k): for each output d the weighted least squares
    :math:`\min \sum_S w_S (y_{Sd} - x_S^\top \phi_d)^2` over the features
    ``selected`` (0 elsewhere) subject to :math:`\sum \phi_d = total_d`,
    from the weighted Gram matrix ``gram`` = X'WX (k, k) and ``moment`` =
    X'WY (k, outputs). The last selected feature l is eliminated
    (:math:`\phi_l = total - \sum_{i \ne l} \phi_i`, as shap does), leaving
    the normal equations of the columns :math:`x_i - x_l`, solved by the
    compiled Cholesky kernel. Where the sample does not determine the
    values (features that always enter together, a short budget) those
    equations are singular: the Cholesky solve is then refused (it failed,
    or its solution does not satisfy them to 1e-8) and the values are the
    least-norm solution of the constrained problem (numpy's lstsq on its
    KKT system), which splits what the sample cannot tell apart equally, as
    fc.approximate's KernelSHAP does."""
    k, n_out = moment.shape
    phi = np.zeros((n_out, k))
    if len(selected) == 0:
        return phi
    last, rest = selected[-1], selected[:-1]
    if len(rest):
        a = np.ascontiguousarray(gram[np.ix_(rest, rest)] - gram[rest, last][:, None]
                                 - gram[last, rest][None, :] + gram[last, last])
        cross = gram[rest, last] - gram[last, last]
        rhs = np.ascontiguousarray((moment[rest] - moment[last]).T - total[:, None] * cross)
        solved = rhs.copy()
        info = np.zeros(1, dtype=np.int64)
        # (the kernel leaves its Cholesky factor in the matrix it is given)
        kernels("approximators", BACKEND).cholesky_solve(a.copy(), solved, info)
        scale = np.abs(a).max() * np.abs(solved).max() * len(a) + np.abs(rhs).max()
        if info[0] or not np.abs(solved @ a - rhs).max() <= 1e-8 * scale:
            p = len(selected)
            kkt = np.ones((p + 1, p + 1))
            kkt[:p, :p] = gram[np.ix_(selected, selected)]
            kkt[p, p] = 0.0
            least = np.linalg.lstsq(kkt, np.vstack([moment[selected], total[None, :]]),
                                    rcond=None)[0]
            phi[:, selected] = least[:p].T
            return phi
        phi[:, rest] = solved
    phi[:, last] = total - phi[:, rest].sum(axis=1)
    return phi


class KernelExplainer(shap.KernelExplainer):
    """shap's ``KernelExplainer`` over fastcredit's KernelSHAP sample and
    compiled solve.

    Same constructor (``model``, ``data``, ``feature_names``, ``link``),
    legacy API (``shap_values(X, nsamples=..., l1_reg=...)``, ``explain``,
    ``expected_value``) and ``__call__`` as ``shap.KernelExplainer``, and the
    same estimand: the Shapley values of v(S) = link(weighted mean over the
    background rows of the model on x with features outside S taken from
    the row), estimated by KernelSHAP's weighted least squares on sampled
    coalitions with the efficiency constraint. The coalitions are
    fc.approximate's KernelSHAP sample (:func:`kernel_sample`: shapiq's
    design, the sizes the budget covers enumerated and the rest drawn, each
    drawn coalition followed by its complement as shap pairs them; on a
    10-feature model with interactions, 500 samples, its error was below
    shap's), each distinct coalition evaluated once, every output of the
    model from the same evaluations, the rows of a ``shap_values`` call in
    shared model calls. ``nsamples`` counts the coalitions sampled besides
    v({}) and v(N) ("auto": 2 M + 2048, at most 2**M - 2, as shap's); when
    they cover all 2**M coalitions the values are exact.

    ``l1_reg`` selects features as shap's does before the regression, with
    the same scikit-learn selectors on the same augmented problem
    (:func:`select_features`): "num_features(r)" (LARS, r steps; r at
    least the varying features keeps them all), "aic" / "bic"
    (LassoLarsIC), a float (Lasso's alpha), "auto" (deprecated, as in shap:
    AIC when less than 20% of the coalitions are sampled), False or 0
    (none). The features left out get 0 and the selected ones carry
    f(x) - E f. Draws are seeded from NumPy's global generator.

    Parameters
    ----------
    model : callable
        The model: a matrix of rows (n, m) -> outputs (n,) or (n, k).
    data : array_like or DataFrame
        The background data (rows averaged over; k-means summaries keep
        their weights).
    feature_names : list of str, optional
    link : {"identity", "logit"}
        The link of the model's output (shap's legacy links).

    Examples
    --------
    >>> import numpy as np, fastcredit.shap as fs
    >>> rs = np.random.RandomState(0)
    >>> X, background = rs.randn(2, 4), rs.randn(10, 4)
    >>> model = lambda x: x @ np.arange(4.0) + x[:, 0] * x[:, 1]
    >>> explainer = fs.KernelExplainer(model, background)
    >>> phi = explainer.shap_values(X, nsamples=2**4, silent=True)   # every coalition
    >>> bool(np.allclose(phi.sum(1) + explainer.expected_value, model(X)))
    True
    >>> phi = explainer.shap_values(X, nsamples=2**4, l1_reg="num_features(2)", silent=True)
    >>> [int(n) for n in (phi != 0).sum(1)]                          # two features kept
    [2, 2]
    >>> bool(np.allclose(phi.sum(1) + explainer.expected_value, model(X)))
    True
    """

    def shap_values(self, X: Any, **kwargs: Any):
        # the rows' coalitions planned and evaluated ahead, several rows per model call
        background = self._background()
        self._ahead = (None if self.keep_index else Lookahead.of(
            (X,), self._row_game, lambda games: [self._plan(game, kwargs) for game in games],
            background=background if background.dtype.kind in "biuf" else None,
            equal_nan=True))
        try:
            return super().shap_values(X, **kwargs)
        finally:
            self._ahead = None

    def _row_game(self, x, varying=None) -> RowGame:
        """The game of a row x (m,) or (1, m), dense or sparse as given,
        over its varying features (found here unless given)."""
        row = x.reshape(1, -1)
        # keep_index: the model takes DataFrames with the data's column names
        columns = list(self.data.group_names) if self.keep_index else None
        return RowGame(self.model.f, self._background(), dense(row).reshape(-1), None,
                       link=legacy_link(self.link), weights=self.data.weights,
                       varying=legacy_varying(self, row) if varying is None else varying,
                       columns=columns)

    def _background(self) -> np.ndarray:
        """The background data, dense, converted once per data object."""
        cached = getattr(self, "_fastcredit_data", None)
        if cached is None or cached[0] is not self.data.data:
            cached = (self.data.data, dense(self.data.data))
            self._fastcredit_data = cached
        return cached[1]

    @staticmethod
    def _plan(game: RowGame, kwargs):
        """(the coalitions the model evaluates, (the regression's coalitions,
        their weights, the selection rule, exact)); the row's seed is drawn
        from NumPy's global generator when it has 2 or more varying
        features."""
        k = game.k
        full = np.uint64(2**k - 1) if k < 64 else np.uint64(2**64 - 1)
        if k < 2:
            return np.unique(np.array([0, full], dtype=np.uint64)), None
        nsamples = check_nsamples(kwargs.get("nsamples", "auto"), k)
        rule = selection_rule(kwargs.get("l1_reg", "num_features(10)"),
                              nsamples / (2**k - 2 if k <= 30 else MAX_SAMPLES))
        if rule is not None and rule[0] == "num_features" and rule[1] >= k:
            # LARS adds every feature unless the fit is exact before: all of them
            rule = None
        seed = SEED.check(int(np.random.randint(0, 2**62)))
        evaluate, coalitions, weights = kernel_sample(k, nsamples, seed)
        exact = k <= 30 and nsamples >= 2**k - 2
        return evaluate, (coalitions, weights, rule, exact)

    def explain(self, incoming_instance: Any, **kwargs: Any) -> np.ndarray:
        instance = convert_to_instance(incoming_instance)
        match_instance_to_data(instance, self.data)
        groups = self.data.groups      # None for sparse data: one feature each
        if groups is not None and any(len(group) != 1 for group in groups):
            raise NotImplementedError("fastcredit.shap's KernelExplainer does not take "
                                      "feature groups")
        ahead = getattr(self, "_ahead", None)
        taken = None if ahead is None else ahead.take(dense(instance.x))
        if taken is None:
            game = self._row_game(instance.x)
            taken = game, self._plan(game, kwargs)
        game, (evaluate, plan) = taken
        values = game.values(evaluate).reshape(len(evaluate), -1)
        phi = np.zeros((self.data.groups_size, values.shape[1]))
        if plan is not None:
            phi[game.varying] = self._regression(game, evaluate, values, *plan).T
        elif game.k == 1:
            phi[game.varying[0]] = values[-1] - values[0]
        return phi[:, 0] if not self.vector_out else phi

    @staticmethod
    def _regression(game, evaluate, values, coalitions, weights, rule, exact) -> np.ndarray:
        """KernelSHAP values (outputs, k) of the varying features."""
        k = game.k
        if exact and rule is None:
            return exact_shapley(game)
        v0, total = values[0], values[-1] - values[0]
        y = values[np.searchsorted(evaluate, coalitions)] - v0
        x = bit_matrix(coalitions, k)
        weighted = x * weights[:, None]
        gram, moment = weighted.T @ x, weighted.T @ y
        if rule is None:
            return constrained_fit(gram, moment, total, np.arange(k))
        phi = np.empty((len(total), k))
        for d in range(len(total)):
            selected = select_features(rule, x, weights, y[:, d], total[d])
            phi[d] = constrained_fit(gram, moment[:, d:d + 1], total[d:d + 1], selected)[0]
        return phi
