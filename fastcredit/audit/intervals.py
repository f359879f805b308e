"""Score confidence intervals for a binomial proportion (Wilson) and for a
difference of two proportions (Newcombe)."""
from __future__ import annotations

import numpy as np

from .._validation import check_open_unit
from ._data import real_float64

__all__ = ["newcombe_interval", "wilson_interval"]


def _binomial_counts(successes, n, suffix: str):
    """``(successes, n)`` as float64 arrays with n >= 1 and
    0 <= successes <= n; ``suffix`` numbers the sample in errors."""
    k, n = real_float64(successes, "successes" + suffix), real_float64(n, "n" + suffix)
    for arr, name in ((k, "successes" + suffix), (n, "n" + suffix)):
        whole = np.isfinite(arr) & (arr == np.round(arr))
        if not whole.all():
            raise ValueError(f"{name} must hold finite whole counts, got "
                             f"{float(arr[~whole].flat[0])}")
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"needs n{suffix} >= 1 and 0 <= successes{suffix} <= n{suffix}")
    return k, n


def _wilson(k, n, level):
    """:func:`wilson_interval` of checked counts."""
    # scipy is imported on first use so that importing fastcredit does not
    # load it
    from scipy.special import ndtri

    z = ndtri((1 + level) / 2)
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # exactly 0 and 1 at the ends (rounding would leave 1 - 2**-53 there, and a
    # step with every outcome bad would look significantly below 1)
    return (np.where(k == 0, 0.0, np.clip(center - half, 0.0, 1.0)),
            np.where(k == n, 1.0, np.clip(center + half, 0.0, 1.0)))


def _newcombe(k1, n1, k2, n2, level):
    """:func:`newcombe_interval` of checked counts."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = _wilson(k1, n1, level)
    l2, u2 = _wilson(k2, n2, level)
    d = p1 - p2
    return (d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def wilson_interval(successes, n, *, level=0.95):
    r"""Wilson score interval for a binomial proportion.

    .. math:: \frac{\hat p + \frac{z^2}{2n} \pm z \sqrt{\frac{\hat p(1-\hat p)}{n}
              + \frac{z^2}{4n^2}}}{1 + z^2/n}, \qquad z = \Phi^{-1}\big(\tfrac{1+\text{level}}2\big)

    Parameters
    ----------
    successes, n : array_like
        Counts (broadcast together), 0 <= successes <= n, n >= 1.
    level : float in (0, 1)
        Confidence level.

    Returns
    -------
    (low, high) : ndarrays
        Bounds on each proportion, in [0, 1].

    Raises
    ------
    ValueError
        If a count is not a finite whole number, ``n < 1``, ``successes``
        lies outside [0, n], the two do not broadcast, or ``level`` is not
        in (0, 1).
    TypeError
        If a count is not real or ``level`` is not a real number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> [round(float(b), 4) for b in fc.wilson_interval(0, 10)]
    [0.0, 0.2775]
    """
    k, n = _binomial_counts(successes, n, "")
    return _wilson(k, n, check_open_unit(level, "level"))


def newcombe_interval(successes1, n1, successes2, n2, *, level=0.95):
    r"""Newcombe's hybrid score interval for a difference of proportions p1 - p2.

    Newcombe (1998), Statistics in Medicine 17:873, method 10: with Wilson
    intervals (l_i, u_i) of each proportion,

    .. math:: \big[\hat d - \sqrt{(\hat p_1 - l_1)^2 + (u_2 - \hat p_2)^2},\;
              \hat d + \sqrt{(u_1 - \hat p_1)^2 + (\hat p_2 - l_2)^2}\big]

    Parameters
    ----------
    successes1, n1, successes2, n2 : array_like
        Counts of the two samples (broadcast together), as in
        :func:`wilson_interval`.
    level : float in (0, 1)
        Confidence level.

    Returns
    -------
    (low, high) : ndarrays
        Bounds on each difference p1 - p2, in [-1, 1].

    Raises
    ------
    ValueError
        If a count is not a finite whole number, ``n1 < 1`` or ``n2 < 1``,
        a sample's successes lie outside [0, n], the counts do not broadcast,
        or ``level`` is not in (0, 1).
    TypeError
        If a count is not real or ``level`` is not a real number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> [round(float(b), 4) for b in fc.newcombe_interval(56, 70, 48, 80)]
    [0.0524, 0.3339]
    """
    k1, n1 = _binomial_counts(successes1, n1, "1")
    k2, n2 = _binomial_counts(successes2, n2, "2")
    return _newcombe(k1, n1, k2, n2, check_open_unit(level, "level"))
