"""shap's SamplingExplainer (IME) over fastcredit's antithetic permutation walks."""
from __future__ import annotations

from typing import Any

import numpy as np
import shap
from shap.utils._legacy import convert_to_instance, match_instance_to_data

from .._backend import kernels
from .._params import SEED
from ._common import AUTO_BATCH_ROWS, legacy_varying
from .permutation import BACKEND

__all__ = ["SamplingExplainer"]


def _model_rows(model, rows: np.ndarray, n_out: int) -> np.ndarray:
    """model.f on masked rows, in calls of AUTO_BATCH_ROWS rows: (n, n_out)."""
    parts = []
    for a in range(0, len(rows), AUTO_BATCH_ROWS):
        chunk = rows[a:a + AUTO_BATCH_ROWS]
        try:
            out = np.asarray(model.f(chunk), dtype=np.float64)
        except Exception as exc:
            raise RuntimeError(f"the model raised when called on {len(chunk)} masked rows "
                               f"(rows {a}..{a + len(chunk) - 1} of {len(rows)}): "
                               f"{exc!r}") from exc
        if len(out) != len(chunk):
            raise ValueError(f"the model must return one output per input row: given "
                             f"{len(chunk)} rows it returned shape {out.shape}")
        parts.append(out.reshape(len(chunk), n_out))
    return np.concatenate(parts)


class SamplingExplainer(shap.SamplingExplainer):
    """shap's ``SamplingExplainer`` (Strumbelj and Kononenko's IME) over
    fastcredit's antithetic permutation walks.

    Same constructor, legacy API (``shap_values(X, nsamples=...)``,
    ``explain``, ``expected_value``) and ``__call__`` as
    ``shap.SamplingExplainer``, and the same estimand: the Shapley values of
    the game whose value for a coalition S is the model on x with features
    outside S taken from a random background row, averaged over that row.
    shap draws, for one feature at a time, an order and a background row
    and spends two model rows on that feature's marginal; here each draw is
    a whole walk over all the varying features (fastcredit's permutation
    stream, each order walked with its reverse and the same background
    row): M model rows give one marginal of every feature, f(x) is
    evaluated once per row, and the model runs on all walks' rows in a few
    large calls. ``nsamples`` keeps shap's meaning (2 * nsamples model
    rows per explained row; "auto": 1000 per varying feature). As shap does,
    the small efficiency gap of the sample mean, f(x) - E f - sum(phi), is
    spread over the features in proportion to their sampling variance.
    Draws come from NumPy's global generator (seed it with np.random.seed,
    as for shap's).

    Parameters
    ----------
    model : callable
        The model: a matrix of rows (n, m) -> outputs (n,) or (n, k).
    data : array_like or DataFrame
        The background data (rows averaged over; k-means summaries keep
        their weights).
    **kwargs
        shap's (``link`` must be the identity, as shap requires).

    Examples
    --------
    >>> import numpy as np, fastcredit.shap as fs
    >>> rs = np.random.RandomState(0)
    >>> X, background = rs.randn(2, 5), rs.randn(10, 5)
    >>> model = lambda x: x @ np.arange(5.0)
    >>> explainer = fs.SamplingExplainer(model, background)
    >>> phi = explainer.shap_values(X, nsamples=200, silent=True)
    >>> phi.shape
    (2, 5)
    >>> bool(np.allclose(phi.sum(1) + explainer.expected_value, model(X)))
    True
    """

    def explain(self, incoming_instance: Any, **kwargs: Any) -> np.ndarray:
        instance = convert_to_instance(incoming_instance)
        match_instance_to_data(instance, self.data)
        if len(self.data.groups) != self.P:
            raise ValueError("SamplingExplainer does not support feature groups")
        x = np.asarray(instance.x, dtype=np.float64).reshape(-1)
        background = np.asarray(self.data.data, dtype=np.float64)
        varying = legacy_varying(self, instance.x)
        k = len(varying)
        n_out = self.D
        fx = _model_rows(self.model, x[None, :], n_out)[0]
        phi = np.zeros((self.P, n_out))
        if k == 1:
            phi[varying[0]] = fx - self.fnull
        elif k > 1:
            nsamples = kwargs.get("nsamples", "auto")
            if isinstance(nsamples, str) and nsamples == "auto":
                nsamples = 1000 * k
            if isinstance(nsamples, (bool, np.bool_)) or not isinstance(
                    nsamples, (int, np.integer)) or nsamples < 1:
                raise ValueError(f"nsamples must be a positive integer or 'auto', got "
                                 f"{nsamples!r}")
            phi[varying] = self._walks(x, background, varying, fx, int(nsamples))
        return phi[:, 0] if not self.vector_out else phi

    def _walks(self, x, background, varying, fx, nsamples) -> np.ndarray:
        """(k, D) Shapley estimates from antithetic walks, one background
        row per pair, within 2 * nsamples model rows."""
        k = len(varying)
        pairs = max(1, (2 * nsamples) // (2 * k))
        seed = SEED.check(int(np.random.randint(0, 2**62)))
        perms = np.empty((pairs, k), dtype=np.int32)
        kernels("sampling", BACKEND).permutations(np.uint64(seed), 0, 0, perms)
        weights = np.asarray(self.data.weights, dtype=np.float64)
        rows_of = np.random.default_rng(seed).choice(len(background), size=pairs,
                                                     p=weights / weights.sum())
        orders = np.concatenate([perms, perms[:, ::-1]])
        base = background[np.concatenate([rows_of, rows_of])]           # (W, P)
        # prefix s of walk w keeps x on its first s features of the order
        rank = np.empty_like(orders)
        np.put_along_axis(rank, orders, np.arange(k, dtype=orders.dtype)[None, :], axis=1)
        keep = rank[:, None, :] < np.arange(k)[None, :, None]           # (W, k, k)
        rows = np.repeat(base[:, None, :], k, axis=1)                   # (W, k, P)
        rows[:, :, varying] = np.where(keep, x[varying], rows[:, :, varying])
        walks = len(orders)
        values = np.empty((walks, k + 1, self.D))
        values[:, :k] = _model_rows(self.model, rows.reshape(-1, self.P),
                                    self.D).reshape(walks, k, self.D)
        values[:, k] = fx
        marginals = np.empty((walks, k, self.D))
        np.put_along_axis(marginals, orders[:, :, None], np.diff(values, axis=1), axis=1)
        samples = 0.5 * (marginals[:pairs] + marginals[pairs:])
        phi = samples.mean(axis=0)
        var = samples.var(axis=0)
        gap = fx - self.fnull - phi.sum(axis=0)
        total = var.sum(axis=0)
        share = np.where(total > 0, var / np.where(total > 0, total, 1.0), 1.0 / k)
        return phi + share * gap
