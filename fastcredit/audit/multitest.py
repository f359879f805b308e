"""Multiple-testing correction of a family of p-values (Holm)."""
from __future__ import annotations

import dataclasses

import numpy as np

from .._validation import check_open_unit
from ._data import float64_vector

__all__ = ["HolmResult", "holm"]


@dataclasses.dataclass(frozen=True)
class HolmResult:
    """Holm step-down adjusted p-values and rejections at ``alpha``.

    Attributes
    ----------
    adjusted : ndarray (k,)
        Adjusted p-values, in input order.
    reject : ndarray of bool (k,)
        ``adjusted <= alpha``.
    alpha : float
        The family-wise error rate controlled.

    Examples
    --------
    >>> import fastcredit as fc
    >>> result = fc.holm([0.01, 0.04, 0.03, 0.005], alpha=0.05)
    >>> result.reject
    array([ True, False, False,  True])
    """
    adjusted: np.ndarray
    reject: np.ndarray
    alpha: float


def holm(pvalues, *, alpha=0.05) -> HolmResult:
    r"""Holm's step-down correction of a family of p-values.

    With the p-values sorted ascending, :math:`p_{(1)} \le \dots \le p_{(k)}`,

    .. math:: \tilde p_{(j)} = \min\Big(1, \max_{l \le j} (k - l + 1)\, p_{(l)}\Big)

    and hypothesis (j) is rejected when :math:`\tilde p_{(j)} \le \alpha`
    (strong control of the family-wise error rate). NaN p-values are not
    allowed.

    Parameters
    ----------
    pvalues : array_like, shape (k,)
        The family's p-values, in [0, 1], k >= 1.
    alpha : float in (0, 1)
        The family-wise error rate to control.

    Returns
    -------
    HolmResult
        ``adjusted`` (k,) and ``reject`` (k,) bool, in input order.

    Raises
    ------
    ValueError
        If ``pvalues`` is not one-dimensional, is empty or holds a value
        outside [0, 1] (NaN included), or ``alpha`` is not in (0, 1).
    TypeError
        If ``pvalues`` is not a real array or ``alpha`` not a real number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.holm([0.01, 0.04, 0.03, 0.005]).adjusted
    array([0.03, 0.06, 0.06, 0.02])
    """
    p = float64_vector(pvalues, "pvalues")
    if p.shape[0] < 1:
        raise ValueError("pvalues must hold at least one p-value")
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError("pvalues must lie in [0, 1] (NaN is not a p-value)")
    alpha = check_open_unit(alpha, "alpha")
    k = p.shape[0]
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((k - np.arange(k)) * p[order]))
    adjusted = np.empty(k)
    adjusted[order] = stepped
    return HolmResult(adjusted, adjusted <= alpha, alpha)
