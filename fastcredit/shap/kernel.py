"""shap's KernelExplainer over fastcredit's compiled KernelSHAP
(``fc.approximate(..., method="kernelshap")``)."""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse
import shap
from shap.utils._legacy import IdentityLink, convert_to_instance, match_instance_to_data

from .._params import SEED
from ..approximators import approximate
from ..games import deterministic
from ._common import RowGame, legacy_varying
from .permutation import BACKEND

__all__ = ["KernelExplainer"]


def legacy_link(link):
    """A legacy explainer's link (shap.utils._legacy.Link, NumPy already:
    its logit clips probabilities to [1e-15, 1 - 1e-15]), None for the
    identity."""
    return None if isinstance(link, IdentityLink) else link.f


def dense(values) -> np.ndarray:
    """A legacy explainer's data or row as a dense array (its dtype kept:
    a model may take strings)."""
    return values.toarray() if scipy.sparse.issparse(values) else np.asarray(values)


def check_l1_reg(l1_reg, k: int, fraction_evaluated: float) -> None:
    """shap's ``l1_reg`` where it selects no feature: False or 0,
    "num_features(r)" with r >= k (LARS then keeps all k), or "auto" when
    at least 20% of the coalitions are evaluated. A selection of fewer
    features (Lasso, LARS, AIC/BIC) is not implemented: refused by name."""
    if isinstance(l1_reg, (bool, np.bool_)) and not l1_reg:
        return
    if isinstance(l1_reg, (int, float, np.number)) and not isinstance(l1_reg, (bool, np.bool_)) \
            and l1_reg == 0:
        return
    if isinstance(l1_reg, str):
        if l1_reg == "auto" and fraction_evaluated >= 0.2:
            return
        if l1_reg.startswith("num_features(") and l1_reg.endswith(")"):
            try:
                if int(l1_reg[len("num_features("):-1]) >= k:
                    return
            except ValueError:
                pass
    raise NotImplementedError(
        f"l1_reg={l1_reg!r} would select features before the regression for this row ({k} "
        f"varying features, {fraction_evaluated:.0%} of coalitions evaluated); fastcredit.shap's "
        f"KernelExplainer fits all of them: pass l1_reg=False, or num_features(r) with r >= {k}")


class KernelExplainer(shap.KernelExplainer):
    """shap's ``KernelExplainer`` over fastcredit's compiled KernelSHAP.

    Same constructor (``model``, ``data``, ``feature_names``, ``link``),
    legacy API (``shap_values(X, nsamples=..., l1_reg=...)``, ``explain``,
    ``expected_value``) and ``__call__`` as ``shap.KernelExplainer``, and the
    same estimand: the Shapley values of v(S) = link(weighted mean over the
    background rows of the model on x with features outside S taken from
    the row), estimated by the constrained weighted least squares of
    KernelSHAP on sampled coalitions. The coalitions are drawn, and the
    regression solved, by :func:`fastcredit.approximate` with
    ``method="kernelshap"`` (compiled; its sampling design is shapiq's, not
    shap's enumeration of the small and large sizes first, with each drawn
    coalition followed by its complement, as shap pairs them: on a 10-feature
    model with interactions, 500 samples, this halved the error of
    unpaired draws and was below shap's); each distinct
    coalition is evaluated once, every output of the model from the same
    evaluations, in large model calls. ``nsamples`` counts the coalitions
    sampled besides v({}) and v(N) ("auto": 2 M + 2048, at most 2**M - 2,
    as shap's); when they cover all 2**M coalitions the values are exact.
    ``l1_reg`` is honoured where it selects no feature (see
    :func:`check_l1_reg`) and refused where it would. Draws are seeded from
    NumPy's global generator.

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
    """

    def explain(self, incoming_instance: Any, **kwargs: Any) -> np.ndarray:
        instance = convert_to_instance(incoming_instance)
        match_instance_to_data(instance, self.data)
        groups = self.data.groups      # None for sparse data: one feature each
        if groups is not None and any(len(group) != 1 for group in groups):
            raise NotImplementedError("fastcredit.shap's KernelExplainer does not take "
                                      "feature groups")
        x = dense(instance.x).reshape(-1)
        varying = legacy_varying(self, instance.x)
        k = len(varying)
        # keep_index: the model takes DataFrames with the data's column names
        columns = list(self.data.group_names) if self.keep_index else None
        game = RowGame(self.model.f, dense(self.data.data), x, None,
                       link=legacy_link(self.link), weights=self.data.weights,
                       varying=varying, columns=columns)
        phi = np.zeros((self.data.groups_size, self.D))
        if k == 1:
            full = np.uint64(1)
            phi[varying[0]] = (game.values([full]) - game.values([0]))[0]
        elif k > 1:
            phi[varying] = self._regression(game, kwargs).T
        return phi[:, 0] if not self.vector_out else phi

    def _regression(self, game: RowGame, kwargs) -> np.ndarray:
        """KernelSHAP values (D, k) of the varying features."""
        k = game.k
        nsamples = kwargs.get("nsamples", "auto")
        if isinstance(nsamples, str) and nsamples == "auto":
            nsamples = 2 * k + 2048
        if isinstance(nsamples, (bool, np.bool_)) or not isinstance(
                nsamples, (int, np.integer)) or nsamples < 1:
            raise ValueError(f"nsamples must be a positive integer or 'auto', got {nsamples!r}")
        coalitions = 2**k - 2 if k <= 30 else 2**30
        nsamples = min(int(nsamples), coalitions)
        check_l1_reg(kwargs.get("l1_reg", "num_features(10)"), k, nsamples / coalitions)
        seed = SEED.check(int(np.random.randint(0, 2**62)))
        values = np.empty((self.D, k))
        for j in range(self.D):
            column = deterministic(
                lambda masks, j=j: game.values(masks).reshape(len(masks), -1)[:, j])
            est = approximate(column, k, "SV", method="kernelshap", budget=nsamples + 2,
                              seed=seed, pairing=True, stderr=False, backend=BACKEND)
            values[j] = est.values[1]
        return values
