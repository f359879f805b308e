r"""Paired inference: the context-shuffle placebo (the set-intervention
paper's Table 8) and the interval statistics the study's robustness checks
rest on.

* :func:`paired_table`, :func:`mcnemar`, :func:`paired_proportion_interval`,
  :func:`paired_comparison`: two binary outcomes on the same items (e.g.
  "the top action agrees with the replay" under the real context and under
  a deranged one), their McNemar test and an interval for the difference of
  the two proportions that accounts for the pairing;
* :func:`spearman_difference`: a percentile-bootstrap interval for
  :math:`\rho(x, z) - \rho(y, z)`, two signals scored against the same
  reference on the same items;
* :func:`temporal_consistency`: pairwise Spearman correlations of the same
  items' scores across snapshots;
* :func:`partial_correlation`: the correlation of x and y with covariates
  partialled out.

A 2 x 2 paired table is ``[[n11, n10], [n01, n00]]``: n11 items positive
under both, n10 under the first only, n01 under the second only, n00 under
neither; the difference of proportions is :math:`(n_{10} - n_{01}) / n`.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import _parallel
from .._backend import kernels, resolve
from .._params import CORRELATION, PAIRED_INTERVAL, SEED
from .._validation import check_bool, check_open_unit
from ._data import float64_vector, real_float64
from .bootstrap import (_MIN_RESAMPLES_PER_THREAD, BootstrapCI, _percentile_interval, _sorted,
                        check_bootstrap_items, check_resamples)

__all__ = ["McNemar", "PairedComparison", "PairedDifference", "PartialCorrelation",
           "TemporalConsistency", "mcnemar", "paired_comparison", "paired_proportion_interval",
           "paired_table", "partial_correlation", "spearman_difference",
           "temporal_consistency"]


def _z(level):
    from scipy.special import ndtri   # scipy on first use: importing fastcredit loads none
    return float(ndtri((1 + level) / 2))


# --- the paired 2 x 2 table -------------------------------------------------------

def paired_table(first, second) -> np.ndarray:
    """The paired 2 x 2 table of two binary outcomes on the same items.

    Parameters
    ----------
    first, second : array_like of bool or 0/1, shape (n,)
        The two outcomes of each item.

    Returns
    -------
    ndarray (2, 2) int64
        ``[[n11, n10], [n01, n00]]`` (first then second; 1 = positive).

    Raises
    ------
    ValueError
        If ``first`` or ``second`` is not one-dimensional or holds a value
        other than 0 and 1, or the two differ in length.
    TypeError
        If ``first`` or ``second`` is not real (bool, integer or float).

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.audit.paired_table([1, 1, 0, 0, 1], [1, 0, 1, 0, 0]).tolist()
    [[1, 2], [1, 1]]
    """
    a, b = real_float64(first, "first"), real_float64(second, "second")
    for arr, name in ((a, "first"), (b, "second")):
        if arr.ndim != 1 or not np.all((arr == 0) | (arr == 1)):
            raise ValueError(f"{name} must be a 1-D array of 0/1 or bool outcomes")
    if a.shape != b.shape:
        raise ValueError(f"first and second must be paired (same length), got {a.shape[0]} "
                         f"and {b.shape[0]}")
    a, b = a == 1, b == 1
    return np.array([[np.count_nonzero(a & b), np.count_nonzero(a & ~b)],
                     [np.count_nonzero(~a & b), np.count_nonzero(~a & ~b)]], dtype=np.int64)


def _table(table):
    """``table`` as four whole counts n11, n10, n01, n00 (floats) with n >= 1."""
    t = real_float64(table, "table")
    if t.shape != (2, 2):
        raise ValueError(f"table must be a 2 x 2 table of counts, got shape {t.shape}")
    if not np.all(np.isfinite(t) & (t >= 0) & (t == np.round(t))) or t.sum() < 1:
        raise ValueError(f"table must hold non-negative whole counts, at least one, got "
                         f"{t.tolist()}")
    # counts past 2**53 are not whole in float64, and the binomial tail
    # takes its number of trials as a C long
    if t.sum() > 2.0**53:
        raise ValueError(f"table's counts must add up to at most 2**53, got {t.sum():.6g}")
    return (float(x) for x in t.ravel())


@dataclasses.dataclass(frozen=True)
class McNemar:
    """McNemar's test of equal paired proportions (see :func:`mcnemar`).

    Attributes
    ----------
    statistic : float
        min(n10, n01) (exact) or the chi-square statistic (asymptotic).
    pvalue : float
        Two-sided.
    n10, n01 : int
        The discordant counts.
    exact, correction : bool
        The arguments of :func:`mcnemar` that gave this test.

    Examples
    --------
    >>> import fastcredit as fc
    >>> test = fc.audit.mcnemar([[59, 6], [16, 80]])
    >>> test.statistic, test.n10, test.n01, test.exact
    (6.0, 6, 16, True)
    """
    statistic: float
    pvalue: float
    n10: int
    n01: int
    exact: bool
    correction: bool


def mcnemar(table, *, exact=True, correction=True) -> McNemar:
    r"""McNemar's test that two paired proportions are equal.

    Only the discordant counts :math:`b = n_{10}`, :math:`c = n_{01}` matter.

    * exact (conditional): under the null each discordant item is
      first-only with probability 1/2, so
      :math:`p = \min(1, 2 \Pr[\mathrm{Bin}(b + c, 1/2) \le \min(b, c)])`,
      statistic :math:`\min(b, c)`;
    * asymptotic: :math:`X^2 = (|b - c| - \kappa)^2 / (b + c)` with
      :math:`\kappa = 1` (Edwards' continuity correction, the difference
      floored at 0) or 0, :math:`p = \Pr[\chi^2_1 \ge X^2]`.

    The conventions of ``statsmodels.stats.contingency_tables.mcnemar``
    (whose ``exact``/``correction`` arguments these are), except that the
    corrected difference is floored at 0 (statsmodels gives
    :math:`1/(b + c)` when b = c) and no discordant item (b + c = 0) gives
    statistic 0 and p = 1 (statsmodels: NaN asymptotically).

    Parameters
    ----------
    table : array_like (2, 2)
        ``[[n11, n10], [n01, n00]]`` (:func:`paired_table`).
    exact : bool
        The exact binomial test (default) or the asymptotic chi-square one.
    correction : bool
        Of the asymptotic test (the exact test ignores it).

    Returns
    -------
    McNemar
        The statistic, the two-sided p-value and the discordant counts.

    Raises
    ------
    ValueError
        If ``table`` is not 2 x 2, holds a count that is negative, not
        whole or not finite, adds up to 0 or to more than 2**53.
    TypeError
        If ``table`` is not real, or ``exact`` or ``correction`` is not a
        bool.

    Examples
    --------
    >>> import fastcredit as fc
    >>> t = [[59, 6], [16, 80]]        # Fagerland et al. (2017), Cavo et al. (2012)
    >>> round(fc.audit.mcnemar(t).pvalue, 6)
    0.052479
    >>> round(fc.audit.mcnemar(t, exact=False, correction=False).pvalue, 6)
    0.033006
    """
    # scipy.special's distribution functions are what scipy.stats' binom.cdf
    # and chi2.sf evaluate, without importing scipy.stats (half a second)
    from scipy.special import bdtr, chdtrc

    _, b, c, _ = _table(table)
    exact = check_bool(exact, "exact")
    correction = check_bool(correction, "correction")
    if exact:
        stat = min(b, c)
        p = min(1.0, 2.0 * float(bdtr(int(stat), int(b + c), 0.5)))
    elif b + c == 0:
        stat, p = 0.0, 1.0
    else:
        diff = max(abs(b - c) - (1.0 if correction else 0.0), 0.0)
        stat = diff * diff / (b + c)
        p = float(chdtrc(1, stat))
    return McNemar(float(stat), p, int(b), int(c), exact, correction)


@dataclasses.dataclass(frozen=True)
class PairedDifference:
    """A difference of paired proportions with its interval.

    Attributes
    ----------
    estimate : float
        :math:`(n_{10} - n_{01}) / n`, first minus second.
    low, high : float
        The interval's bounds, within [-1, 1].
    level : float
        Its confidence level.
    method : str
        "tango" or "newcombe" (see :func:`paired_proportion_interval`).

    Examples
    --------
    >>> import fastcredit as fc
    >>> d = fc.audit.paired_proportion_interval([[5, 3], [1, 11]])
    >>> d.estimate, d.method, d.low < 0 < d.high
    (0.1, 'tango', True)
    """
    estimate: float
    low: float
    high: float
    level: float
    method: str


def _tango_statistic(b, c, n, delta):
    """Tango's score statistic at difference ``delta``: +inf / -inf where its
    variance vanishes on either side of the estimate."""
    bq = -b - c + (2 * n - b + c) * delta
    cq = -c * delta * (1 - delta)
    q = (math.sqrt(max(0.0, bq * bq - 8 * n * cq)) - bq) / (4 * n)
    var = n * (2 * q + delta * (1 - delta))
    num = b - c - n * delta
    if var <= 0:
        return math.copysign(math.inf, num) if num else 0.0
    return num / math.sqrt(var)


def _decreasing_root(f, target, lo, hi):
    """The x in [lo, hi] where the decreasing f crosses ``target``, by
    bisection to adjacent doubles (f(lo) >= target >= f(hi))."""
    while True:
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            return lo if abs(f(lo) - target) <= abs(f(hi) - target) else hi
        if f(mid) >= target:
            lo = mid
        else:
            hi = mid


def _wilson_bounds(k, n, z):
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (0.0 if k == 0 else max(0.0, center - half),
            1.0 if k == n else min(1.0, center + half))


def paired_proportion_interval(table, *, level=0.95, method="tango") -> PairedDifference:
    r"""Confidence interval for a difference of paired proportions
    :math:`\delta = p_{1+} - p_{+1}` (first minus second), estimate
    :math:`\hat\delta = (n_{10} - n_{01}) / n`.

    ``method="tango"``: Tango's (1998, Statistics in Medicine 17:891)
    asymptotic score interval, the :math:`\delta` with
    :math:`|T(\delta)| \le z`,

    .. math:: T(\delta) = \frac{n_{10} - n_{01} - n\delta}
              {\sqrt{n (2 \tilde q + \delta (1 - \delta))}}, \qquad
              \tilde q = \frac{\sqrt{B^2 + 8 n\, n_{01} \delta (1 - \delta)} - B}{4n},
              \; B = -n_{10} - n_{01} + (2n - n_{10} + n_{01}) \delta,

    :math:`\tilde q` the maximum-likelihood :math:`p_{01}` under
    :math:`p_{10} - p_{01} = \delta`; limits by bisection to adjacent
    doubles. ``method="newcombe"``: Newcombe's (1998, Statistics in
    Medicine 17:2635) square-and-add interval, method 10: with Wilson
    intervals :math:`(l_1, u_1)`, :math:`(l_2, u_2)` of the two marginal
    proportions and

    .. math:: \hat\phi = \frac{C}{\sqrt{(n_{11}+n_{10})(n_{01}+n_{00})(n_{11}+n_{01})(n_{10}+n_{00})}},
              \quad C = \begin{cases} A - n/2 & A > n/2 \\ 0 & 0 \le A \le n/2 \\ A & A < 0
              \end{cases}, \; A = n_{11} n_{00} - n_{10} n_{01}

    (0 when a margin is empty),
    :math:`L = \hat\delta - \sqrt{(p_1 - l_1)^2 - 2\hat\phi (p_1 - l_1)(u_2 - p_2) + (u_2 - p_2)^2}`
    and :math:`U = \hat\delta + \sqrt{(p_2 - l_2)^2 - 2\hat\phi (p_2 - l_2)(u_1 - p_1) + (u_1 - p_1)^2}`.
    Both account for the pairing, which :func:`~fastcredit.audit.newcombe_interval`
    (independent samples) does not.

    Parameters
    ----------
    table : array_like (2, 2)
        ``[[n11, n10], [n01, n00]]`` (:func:`paired_table`).
    level : float in (0, 1)
        Confidence level.
    method : {"tango", "newcombe"}
        Tango's score interval (default) or Newcombe's square-and-add one.

    Returns
    -------
    PairedDifference
        The estimate first minus second and its interval.

    Raises
    ------
    ValueError
        If ``table`` is not 2 x 2, holds a count that is negative, not
        whole or not finite, adds up to 0 or to more than 2**53, ``level``
        is not in (0, 1), or ``method`` is not "tango" or "newcombe".
    TypeError
        If ``table`` is not real or ``level`` is not a real number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> t = [[59, 6], [16, 80]]        # Fagerland et al. (2017): -0.1240 to -0.0054
    >>> d = fc.audit.paired_proportion_interval(t)
    >>> round(d.estimate, 4), round(d.low, 4), round(d.high, 4)
    (-0.0621, -0.124, -0.0054)
    >>> d = fc.audit.paired_proportion_interval(t, method="newcombe")   # -0.1186 to -0.0046
    >>> round(d.low, 4), round(d.high, 4)
    (-0.1186, -0.0046)
    """
    n11, b, c, n00 = _table(table)
    level = check_open_unit(level, "level")
    method = PAIRED_INTERVAL.check(method)
    n = n11 + b + c + n00
    z = _z(level)
    est = (b - c) / n
    if method == "tango":
        stat = lambda d: _tango_statistic(b, c, n, d)   # noqa: E731
        low = -1.0 if est == -1 else _decreasing_root(stat, z, -1.0, est)
        high = 1.0 if est == 1 else _decreasing_root(stat, -z, est, 1.0)
    else:
        p1, p2 = (n11 + b) / n, (n11 + c) / n
        l1, u1 = _wilson_bounds(n11 + b, n, z)
        l2, u2 = _wilson_bounds(n11 + c, n, z)
        a = n11 * n00 - b * c
        margins = (n11 + b) * (c + n00) * (n11 + c) * (b + n00)
        cc = a - n / 2 if a > n / 2 else (a if a < 0 else 0.0)
        phi = cc / math.sqrt(margins) if margins > 0 else 0.0
        low = est - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2)
                                  + (u2 - p2) ** 2))
        high = est + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1)
                                   + (u1 - p1) ** 2))
    return PairedDifference(est, max(-1.0, low), min(1.0, high), level, method)


@dataclasses.dataclass(frozen=True)
class PairedComparison:
    """Two binary outcomes on the same items (the paper's Table 8).

    Attributes
    ----------
    table : ndarray (2, 2) int64
        The paired table (:func:`paired_table`).
    first_rate, second_rate : float
        The two proportions.
    difference : PairedDifference
        first - second, with its paired interval.
    exact, asymptotic : McNemar
        McNemar's exact test and the continuity-corrected asymptotic one.

    Examples
    --------
    >>> import fastcredit as fc
    >>> c = fc.audit.paired_comparison([1, 1, 0, 1], [1, 0, 0, 0])
    >>> c.table.tolist(), c.first_rate, c.second_rate, c.exact.pvalue
    ([[1, 2], [0, 1]], 0.75, 0.25, 0.5)
    """
    table: np.ndarray
    first_rate: float
    second_rate: float
    difference: PairedDifference
    exact: McNemar
    asymptotic: McNemar


def paired_comparison(first, second, *, level=0.95, method="tango") -> PairedComparison:
    r"""Compare two binary outcomes measured on the same items: the paired
    table, both rates, the paired interval of their difference
    (:func:`paired_proportion_interval`) and McNemar's tests
    (:func:`mcnemar`, exact and corrected asymptotic).

    The context-shuffle placebo (Table 8) is this with ``first`` the
    per-request outcome under the real context and ``second`` under a
    deranged one (:func:`~fastcredit.audit.derangement`): credit that reads
    the context should lose agreement when the context belongs to another
    request.

    Parameters
    ----------
    first, second : array_like of bool or 0/1, shape (n,)
        The two outcomes of each item, n >= 1.
    level : float in (0, 1)
        Confidence level of the difference's interval.
    method : {"tango", "newcombe"}
        The paired interval (:func:`paired_proportion_interval`).

    Returns
    -------
    PairedComparison
        The table, both rates, the difference and McNemar's tests.

    Raises
    ------
    ValueError
        If ``first`` or ``second`` is not one-dimensional or holds a value
        other than 0 and 1, the two differ in length or are empty, ``level``
        is not in (0, 1), or ``method`` is not "tango" or "newcombe".
    TypeError
        If ``first`` or ``second`` is not real or ``level`` is not a real
        number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> c = fc.audit.paired_comparison([1] * 30 + [0] * 10, [1] * 20 + [0] * 20)
    >>> c.difference.estimate, c.exact.pvalue < 0.01
    (0.25, True)
    """
    t = paired_table(first, second)
    n = t.sum()
    return PairedComparison(t, float(t[0].sum() / n), float(t[:, 0].sum() / n),
                            paired_proportion_interval(t, level=level, method=method),
                            mcnemar(t), mcnemar(t, exact=False))


# --- a paired difference of Spearman correlations ---------------------------------------

def _spearman(x, z):
    """Spearman's rho of x and z (average ranks): 0 when x is constant, NaN
    when z is."""
    from scipy.stats import rankdata
    rx, rz = rankdata(x) - (x.shape[0] + 1) / 2, rankdata(z) - (z.shape[0] + 1) / 2
    sxx, szz = float(rx @ rx), float(rz @ rz)
    if szz == 0:
        return float("nan")
    return 0.0 if sxx == 0 else float(rx @ rz) / math.sqrt(sxx * szz)


def spearman_difference(x, y, z, *, resamples=10_000, level=0.95, seed=0, threads=None,
                        backend=None) -> BootstrapCI:
    r"""Percentile-bootstrap interval for a paired difference of Spearman
    correlations, :math:`\Delta = \rho(x, z) - \rho(y, z)`: two signals
    (e.g. two credit rules) scored against the same reference z (e.g.
    :math:`A_{replay}`) on the same items.

    Replicate r resamples the n items with replacement, the triples
    :math:`(x_i, y_i, z_i)` together (RNG stream (seed, r), the draws of
    :func:`~fastcredit.audit.bootstrap_median`), and computes both
    correlations on the resample with average ranks for ties; O(n) per
    replicate (the ranks of a resample are read off its tallies in the
    sorted order of the sample, csrc/audit.h). A signal constant on a
    resample has :math:`\rho = 0`; a constant reference makes the
    replicate NaN (and so the interval, as NumPy propagates it).

    Parameters
    ----------
    x, y, z : array_like, shape (n,)
        Triples with a NaN anywhere are left out; at least 2 must remain.
    resamples, level, seed, threads, backend
        As in :func:`~fastcredit.audit.bootstrap_median`.

    Returns
    -------
    BootstrapCI
        :math:`\rho(x, z) - \rho(y, z)` with its interval and replicates.

    Raises
    ------
    ValueError
        If ``x``, ``y`` or ``z`` is not one-dimensional or they differ in
        length, fewer than 2 triples are free of NaN (or 2**31 or more
        are), or ``resamples``, ``level``, ``seed``, ``threads`` or
        ``backend`` is out of range, as in
        :func:`~fastcredit.audit.bootstrap_median`.
    TypeError
        If ``x``, ``y`` or ``z`` is not a real array, or another argument
        has a wrong type, as in :func:`~fastcredit.audit.bootstrap_median`.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=400)
    >>> good, bad = z + 0.5 * rng.normal(size=400), z + 3 * rng.normal(size=400)
    >>> ci = fc.audit.spearman_difference(good, bad, z, resamples=2000)
    >>> ci.low > 0
    True
    """
    x, y, z = (float64_vector(v, name) for v, name in ((x, "x"), (y, "y"), (z, "z")))
    if not x.shape == y.shape == z.shape:
        raise ValueError(f"x, y and z must be paired (same length), got {x.shape[0]}, "
                         f"{y.shape[0]} and {z.shape[0]}")
    resamples = check_resamples(resamples)
    level = check_open_unit(level, "level")
    seed = np.uint64(SEED.check(seed))
    keep = ~(np.isnan(x) | np.isnan(y) | np.isnan(z))
    x, y, z = x[keep], y[keep], z[keep]
    n = x.shape[0]
    check_bootstrap_items(n, "x, y and z (triples)")
    estimate = _spearman(x, z) - _spearman(y, z)
    sx, ox = _sorted(x)
    sy, oy = _sorted(y)
    sz, oz = _sorted(z)
    impl = kernels("audit", resolve("audit.bootstrap_spearman_diff", backend))
    reps = np.empty(resamples)

    def part(start, stop):
        impl.bootstrap_spearman_diff(sx, ox, sy, oy, sz, oz, seed, start, stop,
                                     np.empty(n, dtype=np.int32), np.empty(3 * n),
                                     reps[start:stop])

    _parallel.run(part, resamples, _parallel.n_threads(threads),
                  min_items=_MIN_RESAMPLES_PER_THREAD)
    return BootstrapCI(estimate, *_percentile_interval(impl, reps, level), level, n, reps)


# --- temporal self-consistency ---------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class TemporalConsistency:
    """Agreement of the same items' scores across snapshots.

    Attributes
    ----------
    matrix : ndarray (T, T)
        Spearman correlation of snapshots s and t (1 on the diagonal; NaN
        where a snapshot is constant).
    median, mean : float
        Over the pairs s < t.
    adjacent : float
        Mean over consecutive snapshots (t, t + 1).
    n : int
        Items used (those with no NaN score in any snapshot).

    Examples
    --------
    >>> import fastcredit as fc
    >>> tc = fc.audit.temporal_consistency([[1., 2., 3.], [1., 3., 2.]])
    >>> tc.matrix.round(6).tolist(), tc.n
    ([[1.0, 0.5], [0.5, 1.0]], 3)
    """
    matrix: np.ndarray
    median: float
    mean: float
    adjacent: float
    n: int


def temporal_consistency(scores) -> TemporalConsistency:
    r"""Temporal self-consistency: the pairwise Spearman correlations
    :math:`\rho(s_a, s_b)` of the same n items' scores in T snapshots (e.g.
    per-action credit from checkpoints of one training run, or replays on
    different days), summarised over the pairs a < b.

    Ranks are average ranks (ties); an item with a NaN score in any
    snapshot is left out of every correlation (listwise), so all pairs use
    the same items.

    Parameters
    ----------
    scores : array_like, shape (T, n), T >= 2, n >= 2
        Row t holds the n items' scores in snapshot t; NaN marks a missing
        score.

    Returns
    -------
    TemporalConsistency
        The correlation matrix and its summaries.

    Raises
    ------
    ValueError
        If ``scores`` is not 2-D with at least 2 snapshots, or fewer than 2
        items have no NaN score.
    TypeError
        If ``scores`` is not real.

    Examples
    --------
    >>> import fastcredit as fc
    >>> tc = fc.audit.temporal_consistency([[1., 2., 3., 4.], [1., 3., 2., 4.], [4., 3., 2., 1.]])
    >>> tc.matrix.round(2).tolist()[0], tc.adjacent
    ([1.0, 0.8, -1.0], 0.0)
    """
    from scipy.stats import rankdata

    s = real_float64(scores, "scores")
    if s.ndim != 2 or s.shape[0] < 2:
        raise ValueError(f"scores must have shape (T, n) with T >= 2 snapshots, got {s.shape}")
    keep = ~np.isnan(s).any(axis=0)
    s = s[:, keep]
    n = s.shape[1]
    if n < 2:
        raise ValueError(f"scores: needs at least 2 items with no NaN score, got {n}")
    r = rankdata(s, axis=1) - (n + 1) / 2
    norm = np.sqrt(np.einsum("ij,ij->i", r, r))
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = (r @ r.T) / np.outer(norm, norm)
    np.fill_diagonal(matrix, np.where(norm > 0, 1.0, np.nan))
    iu = np.triu_indices(s.shape[0], 1)
    pairs = matrix[iu]
    return TemporalConsistency(matrix, float(np.median(pairs)), float(np.mean(pairs)),
                               float(np.mean(np.diagonal(matrix, 1))), n)


# --- partial correlation ------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class PartialCorrelation:
    """A partial correlation with its test.

    Attributes
    ----------
    r : float
        The partial correlation (NaN when a residual is identically 0).
    pvalue : float
        Two-sided, Student's t with n - 2 - k degrees of freedom.
    n, k : int
        Items used and covariates.
    method : str
        "pearson" or "spearman".

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> z = np.arange(8.0)
    >>> pc = fc.audit.partial_correlation(z ** 2, z + 3 * np.sin(z), z, method="spearman")
    >>> pc.n, pc.k, pc.method, round(pc.r, 3)
    (8, 1, 'spearman', -0.035)
    """
    r: float
    pvalue: float
    n: int
    k: int
    method: str


def partial_correlation(x, y, covariates, *, method="pearson") -> PartialCorrelation:
    r"""The correlation of x and y with the covariates Z partialled out: the
    Pearson correlation of the residuals of x and of y after least squares
    on :math:`[1, Z]`; with one covariate,

    .. math:: r_{xy\cdot z} = \frac{r_{xy} - r_{xz} r_{yz}}
              {\sqrt{(1 - r_{xz}^2)(1 - r_{yz}^2)}}.

    ``method="spearman"`` ranks every variable first (average ranks). The
    test: :math:`t = r \sqrt{(n - 2 - k) / (1 - r^2)}`, two-sided, Student's
    t with n - 2 - k degrees of freedom. Items with a NaN anywhere are left
    out. In the step-level audit: does the credit still track
    :math:`A_{replay}` once step position (or the outcome) is accounted
    for?

    Parameters
    ----------
    x, y : array_like, shape (n,)
        The two variables; NaN marks a missing item.
    covariates : array_like, shape (n,) or (n, k)
        The covariates Z partialled out.
    method : {"pearson", "spearman"}
        Correlate the values (default) or their ranks.

    Returns
    -------
    PartialCorrelation
        r is NaN when a residual is identically 0.

    Raises
    ------
    ValueError
        If ``x`` or ``y`` is not one-dimensional, ``x``, ``y`` and
        ``covariates`` do not share their first axis (or ``covariates`` has
        more than 2 dimensions), fewer than k + 3 items are free of NaN,
        ``method="pearson"`` meets an infinite value, or ``method`` is not
        "pearson" or "spearman".
    TypeError
        If ``x``, ``y`` or ``covariates`` is not real.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> z = np.arange(50.0)
    >>> x = z + np.sin(z)
    >>> y = z + np.cos(3 * z)
    >>> round(float(np.corrcoef(x, y)[0, 1]), 3), round(fc.audit.partial_correlation(x, y, z).r, 3)
    (0.997, -0.003)
    """
    from scipy.stats import rankdata, t as student_t

    method = CORRELATION.check(method)
    x, y = float64_vector(x, "x"), float64_vector(y, "y")
    z = real_float64(covariates, "covariates")
    if z.ndim == 1:
        z = z[:, None]
    if z.ndim != 2 or z.shape[0] != x.shape[0] or x.shape != y.shape:
        raise ValueError(f"x, y and covariates must share their first axis (n,), got "
                         f"{x.shape}, {y.shape} and {np.shape(covariates)}")
    keep = ~(np.isnan(x) | np.isnan(y) | np.isnan(z).any(axis=1))
    x, y, z = x[keep], y[keep], z[keep]
    if method == "pearson":   # ranks take an infinite value; a regression does not
        for name, arr in (("x", x), ("y", y), ("covariates", z)):
            if np.isinf(arr).any():
                raise ValueError(f"{name} must be finite for method='pearson' (NaN marks a "
                                 f"missing item), got an infinite value")
    n, k = x.shape[0], z.shape[1]
    if n - 2 - k < 1:
        raise ValueError(f"covariates: n - 2 - k must be at least 1 (n = {n} items without "
                         f"NaN, k = {k} covariates)")
    if method == "spearman":
        x, y, z = rankdata(x), rankdata(y), rankdata(z, axis=0)
    design = np.column_stack([np.ones(n), z])
    coef, *_ = np.linalg.lstsq(design, np.column_stack([x, y]), rcond=None)
    res = np.column_stack([x, y]) - design @ coef
    sxx, syy = float(res[:, 0] @ res[:, 0]), float(res[:, 1] @ res[:, 1])
    r = float(res[:, 0] @ res[:, 1]) / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else math.nan
    df = n - 2 - k
    if math.isnan(r):
        p = math.nan
    elif abs(r) >= 1:
        p = 0.0
    else:
        p = float(2 * student_t.sf(abs(r) * math.sqrt(df / (1 - r * r)), df))
    return PartialCorrelation(r, p, n, k, method)
