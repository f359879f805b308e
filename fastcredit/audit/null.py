r"""The additive correlated-error null (the set-intervention paper's
Table 7): is the training evaluator's disagreement with the replay more
than an error added to the replay's table, correlated across coalitions
but blind to the request's own structure?

For each request r whose audit table varies (scale
:math:`s_r = \operatorname{sd}_S v^{audit}_r(S) > 0`: the subset where the
normalised statistics are defined), the normalised residual
:math:`e_r = (v^{train}_r - v^{audit}_r) / s_r` is the whole vector over
the :math:`2^m` coalitions. A null world gives every request the residual
of another request, transferred as a block and rescaled,
:math:`\tilde v^{train}_r = v^{audit}_r + s_r e_{d(r)}`, so the errors keep
their correlation across coalitions and their size relative to the
request, but lose any tie to the request's own interactions. The
statistics of the observed tables are set beside their distribution over
the worlds.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import _parallel
from .._backend import kernels, resolve
from .._constants import RNG_MAX_RANGE
from .._params import ATOL, SEED, Integer
from .._validation import check_memory, check_open_unit
from ..tables import shapley
from .study import _edges, _pair, _pairs

__all__ = ["CorrelatedErrorNull", "NullStatistic", "correlated_error_null"]

WORLDS = Integer("worlds", 1, 2**31 - 1, "null worlds (donor draws) of the correlated-error null")
# Statistic names, in the order of CorrelatedErrorNull.statistics.
NULL_STATISTICS = ("edge_agreement", "pair_agreement", "median_cosine",
                   "strength_vs_edge_disagreement", "strength_vs_cosine_gap")


@dataclasses.dataclass(frozen=True)
class NullStatistic:
    r"""One statistic, observed and under the null.

    Attributes
    ----------
    observed : float
        The statistic of the observed tables.
    null_median, null_low, null_high : float
        Median and percentile interval (at ``level``) over the worlds
        where the statistic is defined.
    gap : float
        observed - null_median.
    pvalue : float
        Two-sided Monte-Carlo p-value,
        :math:`\min(1, 2 (1 + \min(\#\{t_w \le t\}, \#\{t_w \ge t\})) / (W + 1))`
        over the W worlds where it is defined.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> rng = np.random.default_rng(1)
    >>> audit = rng.normal(size=(6, 4))
    >>> train = audit + 0.1 * rng.normal(size=(6, 4))
    >>> s = fc.audit.correlated_error_null(train, audit, worlds=50).statistics["edge_agreement"]
    >>> [round(x, 4) for x in (s.observed, s.null_median, s.null_low, s.null_high)]
    [0.9167, 0.9167, 0.801, 0.9583]
    """
    observed: float
    null_median: float
    null_low: float
    null_high: float
    gap: float
    pvalue: float


@dataclasses.dataclass(frozen=True)
class CorrelatedErrorNull:
    """The correlated-error null of :func:`correlated_error_null`.

    Attributes
    ----------
    statistics : dict
        name -> :class:`NullStatistic`, names as in
        :data:`NULL_STATISTICS`.
    worlds : ndarray (W, 5)
        Each world's statistics, columns in that order.
    n_requests : int
        Requests used (audit scale > 0).
    n_excluded : int
        Requests left out (a constant audit table).
    level : float
        The level of each statistic's null interval.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> rng = np.random.default_rng(1)
    >>> audit = rng.normal(size=(6, 4))
    >>> train = audit + 0.1 * rng.normal(size=(6, 4))
    >>> train[5] = audit[5] = 1.0                    # a constant audit table
    >>> res = fc.audit.correlated_error_null(train, audit, worlds=50)
    >>> res.n_requests, res.n_excluded, res.worlds.shape, list(res.statistics)[:2]
    (5, 1, (50, 5), ['edge_agreement', 'pair_agreement'])
    """
    statistics: dict
    worlds: np.ndarray = dataclasses.field(repr=False)
    n_requests: int
    n_excluded: int
    level: float


def _rank_rows(x):
    """Average 1-based ranks along the last axis of NaN-free x (ties share
    their mean rank): one unstable argsort per row, the runs of equal
    values found in sorted order (scipy's rankdata sorts stably, about
    twice as slow on the null's worlds)."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[-1]
    order = np.argsort(x, axis=-1)
    s = np.take_along_axis(x, order, axis=-1)
    pos = np.arange(n)
    first = np.ones(s.shape, dtype=bool)
    first[..., 1:] = s[..., 1:] != s[..., :-1]
    last = np.ones(s.shape, dtype=bool)
    last[..., :-1] = first[..., 1:]
    start = np.maximum.accumulate(np.where(first, pos, 0), axis=-1)
    stop = np.flip(np.minimum.accumulate(np.flip(np.where(last, pos, n - 1), -1), axis=-1), -1)
    out = np.empty(s.shape)
    np.put_along_axis(out, order, 0.5 * (start + stop) + 1.0, axis=-1)
    return out


def _spearman_rows(fixed_ranks, y):
    """Spearman of a fixed ranked vector with each row of y (NaN when a row
    is constant)."""
    ry = _rank_rows(y)
    fx = fixed_ranks - fixed_ranks.mean()
    ry = ry - ry.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (ry @ fx) / np.sqrt((ry * ry).sum(axis=-1) * float(fx @ fx))


def _signs(x, atol):
    """int8 signs of the finite x: +1 above atol, -1 below -atol, else 0 (the
    difference of two bool masks read as int8: ~45x faster than nested
    np.where on int64 at 1171 x 80, ~2.4 ms a call of the null)."""
    return (x > atol).view(np.int8) - (x < -atol).view(np.int8)


def _world_statistics(edge_hits, edge_count, pair_hits, pair_count, cosine, strength_ranks,
                      cos_ok):
    """The five statistics of each world (rows of the per-request arrays);
    ``strength_ranks`` = (ranks over all requests, ranks over those with
    ``cos_ok``)."""
    edge = edge_hits.sum(axis=-1) / edge_count.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        pair = pair_hits.sum(axis=-1) / pair_count.sum(axis=-1)
    cos = cosine[..., cos_ok]
    median_cos = np.median(cos, axis=-1)
    disagreement = 1.0 - edge_hits / edge_count
    # cosines of +-1 (always, for m = 2) come out of two summation orders
    # 1 ulp apart: ranked to 12 decimals, so that rounding does not break ties
    return np.stack([edge, pair, median_cos,
                     _spearman_rows(strength_ranks[0], disagreement),
                     _spearman_rows(strength_ranks[1], np.round(1.0 - cos, 12))], axis=-1)


def correlated_error_null(train, audit, *, worlds=1000, level=0.95, atol=1e-9, seed=0,
                          threads=None, backend=None) -> CorrelatedErrorNull:
    r"""The additive correlated-error null of the training evaluator against
    the audit evaluator (the paper's Table 7).

    On the requests whose audit table varies (:math:`s_r > 0`, the sd over
    coalitions), with :math:`e_r = (v^{train}_r - v^{audit}_r) / s_r`, world
    w sets :math:`\tilde v^{train}_r = v^{audit}_r + s_r e_{d_w(r)}` with
    donor :math:`d_w(r) \ne r` uniform (RNG stream (seed, w), csrc/audit.h
    ``fc_null_worlds``) and computes, like the observed tables:

    * ``edge_agreement``: insertion-edge sign agreement over the nonzero
      audit edges (:func:`~fastcredit.audit.edge_agreement`, pooled);
    * ``pair_agreement``: pair-interaction sign agreement over the pairs
      nonzero under both (:func:`~fastcredit.audit.pair_agreement`);
    * ``median_cosine``: median over requests of the centred cosine of the
      Shapley credits (requests whose centred audit Shapley is within atol
      of 0 left out);
    * the interaction-strength correlations: Spearman, across requests, of
      the normalised interaction strength
      :math:`g_r = \sum_{i<j} |I^{audit}_{ij}| / s_r` with the request's
      edge disagreement (1 - its edge agreement) and with its cosine gap
      (1 - cosine, rounded to 12 decimals so that rounding does not break
      ties): does the evaluator err more where the replay interacts more?

    Every statistic is linear in the table, so a world costs
    O(m 2^(m-1)) per request (the kernel adds the donor's residual
    statistics to the request's audit statistics); worlds are split over
    threads with the same bits for any split.

    Parameters
    ----------
    train, audit : array_like, shape (..., 2**m), 2 <= m <= 16
        Finite tables; at least 3 requests whose audit table varies.
    worlds : int in [1, 2**31)
        Null worlds (donor draws).
    level : float in (0, 1)
        Of the null interval (percentiles of the worlds).
    atol : float
        Signs: :math:`|x| \le` atol is 0 (as the study's functions). A
        statistic defined for no request (an atol that makes every audit
        edge 0 leaves edge agreement without a denominator) is NaN, observed
        and null alike.
    seed : int in [0, 2**64)
        World w draws its donors from the RNG stream (seed, w).
    threads : int, optional
        Threads to split the worlds (and the tables' Shapley values and
        interactions) over (default all cores).
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Returns
    -------
    CorrelatedErrorNull
        Each statistic observed and under the null, and every world's.

    Raises
    ------
    ValueError
        If ``train`` or ``audit`` has no last axis of length 2**m with
        2 <= m <= 16, the two differ in shape, either holds a non-finite
        value, fewer than 3 requests (or more than 2**32 + 1) have an audit
        table that varies, the tables' edges or the worlds' statistics would
        not fit in memory, ``worlds`` is not in [1, 2**31), ``level`` is not
        in (0, 1), ``atol`` is negative or not finite, ``seed`` is outside
        [0, 2**64), ``threads < 1``, or ``backend`` is not None, "c" or
        "numba" or is not available.
    TypeError
        If ``train`` or ``audit`` is not a real array, or ``worlds``,
        ``seed`` or ``threads`` is not an integer, or ``level`` or ``atol``
        not a real number.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> audit = rng.normal(size=(300, 32)); audit[:, 0] = 0
    >>> train = audit + 0.3 * rng.normal(size=(300, 32)) * audit.std(axis=1, keepdims=True)
    >>> res = fc.audit.correlated_error_null(train, audit, worlds=200)
    >>> s = res.statistics["edge_agreement"]
    >>> bool(s.null_low <= s.observed <= s.null_high)   # an additive error is the null
    True
    """
    t, a, m = _pair(train, audit)
    worlds = WORLDS.check(worlds)
    level = check_open_unit(level, "level")
    atol = ATOL.check(atol)
    seed = np.uint64(SEED.check(seed))
    for x, name in ((t, "train"), (a, "audit")):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} must be finite (the null transfers whole residual "
                             f"vectors)")
    scale = a.std(axis=1)
    keep = scale > 0
    n, n_excluded = int(np.count_nonzero(keep)), int(np.count_nonzero(~keep))
    if n < 3:
        raise ValueError(f"audit: the null needs at least 3 requests whose audit table varies, "
                         f"got {n}")
    if n - 1 > RNG_MAX_RANGE:
        raise ValueError(f"audit: the null takes at most 2**32 + 1 requests, got {n}")
    check_memory(6 * 8 * n * m << (m - 1), f"train and audit ({n:,} requests of m = {m}: "
                                           f"their insertion edges)")
    check_memory(worlds * n * 20, f"worlds = {worlds:,} (per-request statistics of {n:,} "
                                  f"requests in each)")
    t, a, scale = t[keep], a[keep], scale[keep]
    resid = (t - a) / scale[:, None]

    def stats(v):
        phi = shapley(v, threads=threads, backend=backend)
        return (np.ascontiguousarray(_edges(v, m)[0]), np.ascontiguousarray(
            _pairs(v, m, threads, backend)), phi - phi.mean(axis=1, keepdims=True))

    ea, pa, fa = stats(a)
    er, pr, fr = stats(resid)
    # an audit Shapley credit within atol of constant has no direction (its
    # centred values are rounding): exactly 0, so its cosine is NaN
    fa[np.abs(fa).max(axis=1) <= atol] = 0.0

    es, ps = _signs(ea, atol), _signs(pa, atol)
    edge_count = (es != 0).sum(axis=1)
    cos_ok = (fa != 0).any(axis=1)
    strength = np.abs(pa).sum(axis=1) / scale
    strength_ranks = (_rank_rows(strength), _rank_rows(strength[cos_ok]))
    impl = kernels("audit", resolve("audit.null_worlds", backend))
    out = (np.empty((worlds, n), dtype=np.int32), np.empty((worlds, n), dtype=np.int32),
           np.empty((worlds, n), dtype=np.int32), np.empty((worlds, n)))

    def part(start, stop):
        impl.null_worlds(scale, ea, es, er, pa, ps, pr, fa, fr, atol, seed, start, stop,
                         *(o[start:stop].reshape(-1) for o in out))

    _parallel.run(part, worlds, _parallel.n_threads(threads), min_items=16)
    null = _world_statistics(out[0], edge_count, out[1], out[2], out[3], strength_ranks,
                             cos_ok)
    # the observed tables: each request its own residual (the same arithmetic)
    tt, tp, tf = stats(t)
    st, sp = _signs(tt, atol), _signs(tp, atol)
    hits = ((st == es) & (es != 0)).sum(axis=1)
    counted = (sp != 0) & (ps != 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = np.where(cos_ok, (tf * fa).sum(axis=1) / np.sqrt((tf * tf).sum(axis=1)
                                                                 * (fa * fa).sum(axis=1)),
                          np.nan)
    cosine = np.where(cos_ok & ((tf * tf).sum(axis=1) == 0), 0.0, cosine)
    observed = _world_statistics(hits[None], edge_count, (counted & (sp == ps)).sum(axis=1)[None],
                                 counted.sum(axis=1)[None], cosine[None], strength_ranks,
                                 cos_ok)[0]
    return CorrelatedErrorNull({name: _summary(observed[j], null[:, j], level)
                                for j, name in enumerate(NULL_STATISTICS)},
                               null, n, n_excluded, level)


def _summary(observed, null, level) -> NullStatistic:
    """A statistic against its worlds, over the worlds where it is defined
    (a correlation is NaN in a world whose per-request values are all
    equal); all NaN when it is defined in none, or not observed."""
    null = null[~np.isnan(null)]
    if not null.size:
        return NullStatistic(float(observed), *[float("nan")] * 5)
    lo, hi = np.quantile(null, [(1 - level) / 2, (1 + level) / 2])
    med = float(np.median(null))
    extreme = min(np.count_nonzero(null <= observed), np.count_nonzero(null >= observed))
    p = min(1.0, 2 * (1 + extreme) / (null.size + 1)) if observed == observed else float("nan")
    return NullStatistic(float(observed), med, float(lo), float(hi), float(observed) - med, p)
