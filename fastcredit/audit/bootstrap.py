"""Percentile bootstrap of a median and of a paired difference of medians."""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import _parallel
from .._backend import kernels, resolve
from .._constants import BOOTSTRAP_MAX_ITEMS
from .._params import RESAMPLES, SEED
from .._validation import check_float, check_memory, check_open_unit
from ._data import float64_vector

__all__ = ["BootstrapCI", "bootstrap_median", "paired_bootstrap"]

# A replicate of n items costs about 0.1 us (n = 10) to 1 us (n = 1000), so
# 64 of them are about as long as handing a chunk to a pool thread: fewer
# resamples per thread would spend more time dispatching than resampling.
_MIN_RESAMPLES_PER_THREAD = 64


@dataclasses.dataclass(frozen=True)
class BootstrapCI:
    """A statistic with its percentile-bootstrap confidence interval.

    Attributes
    ----------
    estimate : float
        The statistic on the data.
    low, high : float
        The (1 - level)/2 and (1 + level)/2 quantiles of the replicates
        (``numpy.quantile``, linear interpolation: the percentile method).
    level : float
        The confidence level of ``(low, high)``.
    n : int
        Items the statistic used (NaN items left out).
    replicates : ndarray (resamples,)
        The bootstrap replicates, replicate r from the RNG stream (seed, r).

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> ci = fc.bootstrap_median([1.0, 2.0, 3.0, 4.0, np.nan], resamples=200, seed=0)
    >>> ci.estimate, ci.n, ci.replicates.shape
    (2.5, 4, (200,))
    >>> float(ci.pvalue(0.0))
    0.0
    """
    estimate: float
    low: float
    high: float
    level: float
    n: int
    replicates: np.ndarray = dataclasses.field(repr=False)

    def pvalue(self, null: float = 0.0) -> float:
        r"""Two-sided percentile-bootstrap p-value of ``statistic == null``:
        :math:`\min(1, 2 \min(\Pr^*[\hat\theta^* \le \theta_0], \Pr^*[\hat\theta^* \ge \theta_0]))`,
        the smallest 1 - level whose percentile interval excludes ``null``
        (feed a family of them to :func:`~fastcredit.audit.holm`)."""
        null = check_float(null, "null")
        below = np.count_nonzero(self.replicates <= null)
        above = np.count_nonzero(self.replicates >= null)
        return min(1.0, 2.0 * min(below, above) / self.replicates.shape[0])


def _percentile_interval(impl, replicates, level) -> tuple[float, float]:
    """The percentile interval: the (1 - level)/2 and (1 + level)/2 quantiles
    of the replicates, as ``(low, high)``; numpy.quantile's (method
    "linear") bit for bit, selected by ``impl.percentile_interval`` (the
    audit kernels of the call's backend) in O(n) on a copy, since the
    selection reorders what it reads and the replicates are returned in
    stream order. np.quantile's own Python costs more than its selection,
    and more again run after a kernel has taken the caches."""
    low, high = np.empty(1), np.empty(1)
    impl.percentile_interval(replicates.reshape(1, -1).copy(), 0.0, (1 - level) / 2,
                             (1 + level) / 2, low, high)
    return float(low[0]), float(high[0])


def _sorted(x):
    order = np.argsort(x, kind="stable")
    return x[order], order.astype(np.int64, copy=False)


def _median_of_sorted(s) -> float:
    """``np.median`` of the sorted NaN-free ``s``, bit for bit: the middle
    item, or the middle two's sum halved, summed from 0.0 as NumPy's mean
    does (a zero median is +0.0). Read off the sort the kernel needs
    anyway: a second selection, with np.median's Python around it, costs
    more than the replicates' interval after a kernel has taken the
    caches."""
    h = s.shape[0] // 2
    return float(0.0 + s[h]) if s.shape[0] % 2 else float((0.0 + s[h - 1] + s[h]) / 2)


def check_resamples(resamples, rows: int = 1) -> int:
    """``resamples`` in its declared range, refused (naming it) when the
    replicates of ``rows`` statistics (float64, and a copy for their
    quantiles) cannot fit in memory."""
    resamples = RESAMPLES.check(resamples)
    check_memory(2 * 8 * rows * resamples,
                 f"resamples = {resamples:,} (the replicates of {rows:,} statistics)")
    return resamples


def check_bootstrap_items(n: int, what: str) -> None:
    """The number of items left after NaN is dropped fits the kernels'
    tallies: at least 2, fewer than 2**31; ``what`` names the items."""
    if n < 2:
        raise ValueError(f"{what}: the bootstrap needs at least 2 items that are not NaN, "
                         f"got {n}")
    if n > BOOTSTRAP_MAX_ITEMS:
        raise ValueError(f"the bootstrap takes fewer than 2**31 items, got {n}")


def _median_bootstrap(a, b, resamples, level, seed, threads, backend,
                      name="x") -> BootstrapCI:
    """Percentile bootstrap of median(a) (b None) or median(a) - median(b),
    the pairs (a_i, b_i) resampled together; ``name`` names the data in
    errors."""
    resamples = check_resamples(resamples)
    level = check_open_unit(level, "level")
    seed = np.uint64(SEED.check(seed))
    keep = ~np.isnan(a) if b is None else ~(np.isnan(a) | np.isnan(b))
    a = a[keep]
    n = a.shape[0]
    check_bootstrap_items(n, name)
    # the kernel tallies each replicate's draws against the sorted sample, so
    # a replicate's median costs O(n) without sorting the resample
    sorted_a, order_a = _sorted(a)
    estimate = _median_of_sorted(sorted_a)
    if b is None:
        sorted_b, order_b = np.empty(0), np.empty(0, dtype=np.int64)
    else:
        b = b[keep]
        sorted_b, order_b = _sorted(b)
        estimate -= _median_of_sorted(sorted_b)
    impl = kernels("audit", resolve("audit.bootstrap_median", backend))
    reps = np.empty(resamples)

    def part(start, stop):
        counts = np.empty(n, dtype=np.int32)
        impl.bootstrap_median(sorted_a, order_a, sorted_b, order_b, seed, start, stop, counts,
                              reps[start:stop])

    _parallel.run(part, resamples, _parallel.n_threads(threads),
                  min_items=_MIN_RESAMPLES_PER_THREAD)
    return BootstrapCI(estimate, *_percentile_interval(impl, reps, level), level, n, reps)


def bootstrap_median(x, *, resamples=10_000, level=0.95, seed=0, threads=None,
                     backend=None) -> BootstrapCI:
    r"""The median with a percentile-bootstrap confidence interval.

    Replicate r resamples the n items with replacement (RNG stream
    (seed, r), two item indices per 64-bit draw, see csrc/audit.h) and takes
    the median; the interval is the percentile interval of the replicates.
    O(n) per replicate (draws are tallied against the sorted sample; no sort
    per replicate).

    Parameters
    ----------
    x : array_like, shape (n,)
        Scores, e.g. per-trajectory Spearman correlations. NaN entries are
        left out; at least 2 must remain.
    resamples : int
    level : float
        Confidence level in (0, 1).
    seed : int in [0, 2**64)
    threads : int, optional
        Threads to split the replicates over (default all cores).
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Returns
    -------
    BootstrapCI
        The median of the non-NaN scores, its interval and replicates.

    Raises
    ------
    ValueError
        If ``x`` is not one-dimensional, fewer than 2 scores are not NaN (or
        2**31 or more are), ``resamples`` is not in [1, 2**31) or its
        replicates would not fit in memory, ``level`` is not in (0, 1),
        ``seed`` is outside [0, 2**64), ``threads < 1``, or ``backend`` is
        not None, "c" or "numba" or is not available.
    TypeError
        If ``x`` is not a real array, or ``resamples``, ``seed`` or
        ``threads`` is not an integer, or ``level`` not a real number.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> ci = fc.bootstrap_median(np.arange(101.0), resamples=2000, seed=1)
    >>> ci.estimate, ci.low < 50 < ci.high
    (50.0, True)
    """
    return _median_bootstrap(float64_vector(x, "x"), None, resamples, level, seed, threads,
                             backend)


def paired_bootstrap(a, b, *, resamples=10_000, level=0.95, seed=0, threads=None,
                     backend=None) -> BootstrapCI:
    r"""Request-level paired bootstrap of a difference of medians.

    .. math:: \Delta = \operatorname{median}_r a_r - \operatorname{median}_r b_r

    Each replicate resamples whole requests (the pair (a_r, b_r) together),
    so the interval accounts for the two rules being scored on the same
    requests. Typical use: ``a``, ``b`` the per-request cosines of two credit
    rules against the same reference (:func:`~fastcredit.audit.alignment`).

    Parameters
    ----------
    a, b : array_like, shape (n,)
        Paired scores. Pairs where either is NaN are left out; at least 2
        must remain.
    resamples, level, seed, threads, backend
        As in :func:`bootstrap_median`.

    Returns
    -------
    BootstrapCI
        median(a) - median(b) over the pairs without NaN, with its interval.

    Raises
    ------
    ValueError
        If ``a`` and ``b`` are not one-dimensional arrays of the same
        length, fewer than 2 pairs are free of NaN, or another argument is
        out of range, as in :func:`bootstrap_median`.
    TypeError
        If ``a`` or ``b`` is not a real array, or another argument has the
        wrong type, as in :func:`bootstrap_median`.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> ref = rng.normal(size=(500, 5))
    >>> good = fc.alignment(ref + 0.3 * rng.normal(size=ref.shape), ref).cosine
    >>> bad = fc.alignment(ref + 3.0 * rng.normal(size=ref.shape), ref).cosine
    >>> fc.paired_bootstrap(good, bad, seed=0).low > 0
    True
    """
    a = float64_vector(a, "a")
    b = float64_vector(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"a and b must be paired (same length), got {a.shape[0]} and "
                         f"{b.shape[0]}")
    return _median_bootstrap(a, b, resamples, level, seed, threads, backend,
                             name="a and b (pairs)")
