r"""Repeated noisy replays: the audit reference and its noise.

The set-intervention paper's audit reference is not one replay but the
coalition-wise median over R repeated noisy replays,
:math:`y_{audit}(S) = \operatorname{median}_r y_r(S)`. Everything here takes
the repeats as one array ``repeated`` of shape (..., R, 2**m): the R
replays of every request's coalition table (e.g.
:func:`fastcredit.synthetic.replay_repeats`, the replay-noise model
:math:`y_r(S) = v(S) + \sigma z_{r,S}`).

* :func:`aggregate_repeats`: the (..., 2**m) table of the median (the
  paper's y_audit) or the mean over the repeats;
* :func:`replay_reference`: the noisy replays of noise-free tables drawn and
  aggregated in one call (the study's audit reference);
* :func:`split_half_consistency`: do two independent halves of the repeats
  give the same credit signs (the paper's split-half sign self-consistency,
  0.7747 with the median, 0.7214 with the mean);
* :func:`noise_scale`: the noise of the aggregated table against the number
  of repeats aggregated, beside the :math:`1/\sqrt{R}` reference;
* :func:`fidelity_by_magnitude`: a backend's insertion-edge sign agreement
  with the aggregated replay, by the magnitude of the replay's edge (the
  counting is :func:`fastcredit.audit.edge_agreement`'s, ``over=`` included).

Signs have three values, a value within ``atol`` of 0 being 0, as in
:mod:`fastcredit.audit.study`. NaN in the repeats propagates (the median and
the mean of a coalition with a NaN repeat are NaN, and so is a rate over
it).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .._params import (AGREEMENT_OVER, ATOL, MAGNITUDE_BINS, REPEAT_AGGREGATE,
                       SPLIT_STATISTIC)
from .._validation import as_array, check_memory, check_open_unit, float64_array
from ..tables import shapley
from .study import _agree, _clustered_interval, _counted, _edge_signs, _sign, _tables

__all__ = ["MagnitudeFidelity", "NoiseScale", "SplitHalfConsistency", "aggregate_repeats",
           "fidelity_by_magnitude", "noise_scale", "replay_reference", "split_half_consistency"]


def _repeats(x, name, min_repeats=1):
    """``x`` as float64 (B, R, 2**m) with 2 <= m <= 16, its leading shape and m."""
    a = as_array(x, name)
    n = a.shape[-1] if a.ndim else 0
    if a.ndim < 2 or n < 4 or n & (n - 1) or n > 1 << 16:
        raise ValueError(f"{name} must have shape (..., R, 2**m) with 2 <= m <= 16, got shape "
                         f"{a.shape}")
    if a.shape[-2] < min_repeats:
        raise ValueError(f"{name} must hold at least {min_repeats} repeats (its axis -2), got "
                         f"shape {a.shape}")
    a = float64_array(a, name)
    return a.reshape(-1, a.shape[-2], n), a.shape[:-2], n.bit_length() - 1


def _aggregate(y, how):
    """Median or mean over axis 1 of (B, R, n)."""
    if how == "mean":
        return y.mean(axis=1)
    if y.shape[1] <= 2:   # the median of one or two values is their mean
        return y.mean(axis=1)
    return np.median(y, axis=1)


def aggregate_repeats(repeated, *, how="median") -> np.ndarray:
    r"""The table of repeated replays aggregated coalition by coalition.

    .. math:: y_{agg}(S) = \operatorname{median}_{r = 1..R} y_r(S)
              \quad\text{or}\quad \frac{1}{R} \sum_{r=1}^{R} y_r(S)

    The median (``how="median"``, default) is the paper's audit reference
    y_audit; for an even R it is the mean of the two middle values.

    Parameters
    ----------
    repeated : array_like, shape (..., R, 2**m), 2 <= m <= 16, R >= 1
        R replays of each table.
    how : {"median", "mean"}
        The aggregate over the repeats.

    Returns
    -------
    ndarray (..., 2**m) float64
        The aggregated table of each request.

    Raises
    ------
    ValueError
        If ``repeated`` does not have shape (..., R, 2**m) with
        2 <= m <= 16 and R >= 1, or ``how`` is not "median" or "mean".
    TypeError
        If ``repeated`` is not a real array.

    Examples
    --------
    >>> import fastcredit as fc
    >>> y = [[0., 1., 2., 9.], [0., 3., 2., 1.], [0., 2., 2., 2.]]   # R = 3, m = 2
    >>> fc.audit.aggregate_repeats(y).tolist()
    [0.0, 2.0, 2.0, 2.0]
    >>> fc.audit.aggregate_repeats(y, how="mean").tolist()
    [0.0, 2.0, 2.0, 4.0]
    """
    y, lead, m = _repeats(repeated, "repeated")
    how = REPEAT_AGGREGATE.check(how)
    return _aggregate(y, how).reshape(lead + (1 << m,))


def replay_reference(v, *, repeats=6, noise=1.0, seed=0, first=0, how="median", threads=None,
                     backend=None) -> np.ndarray:
    r"""The audit reference of noise-free tables: ``repeats`` noisy replays
    of every coalition (:func:`fastcredit.synthetic.replay_repeats`,
    :math:`y_r(S) = v(S) + \sigma z_{r,S}`) aggregated by
    :func:`aggregate_repeats`:
    :math:`y_{audit}(S) = \operatorname{median}_r y_r(S)`.

    Parameters
    ----------
    v : array_like, shape (..., 2**m), 2 <= m <= 16
        The noise-free coalition tables.
    repeats : int >= 1
        Noisy replays per coalition.
    noise : float in [0, 1e300]
        :math:`\sigma`.
    seed, first, threads, backend
        Of :func:`fastcredit.synthetic.replay_repeats` (request ``first + b``
        is row b: the same request has the same repeats in any batch).
    how : {"median", "mean"}
        The aggregate over the repeats.

    Returns
    -------
    ndarray (..., 2**m) float64
        The aggregated replay of each table.

    Raises
    ------
    ValueError
        If ``v`` has no last axis of length 2**m with 2 <= m <= 16, ``how``
        is not "median" or "mean", ``repeats`` is not in [1, 2**31),
        ``noise`` is not in [0, 1e300], ``seed`` is outside [0, 2**64),
        ``first`` is negative or too large for the batch, the repeats would
        not fit in memory, ``threads < 1``, or ``backend`` is not None, "c"
        or "numba" or is not available.
    TypeError
        If ``v`` is not a real array, ``repeats``, ``seed``, ``first`` or
        ``threads`` is not an integer, or ``noise`` not a real number.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.array([0., 1., 2., 4.])
    >>> bool((fc.audit.replay_reference(v, noise=0.0) == v).all())
    True
    >>> y = fc.audit.replay_reference(np.tile(v, (4000, 1)), repeats=3, noise=0.5, seed=1)
    >>> bool(abs(np.median(y[:, 3]) - 4.0) < 0.02)
    True
    """
    from ..synthetic import replay_repeats
    _tables(v, "v")
    how = REPEAT_AGGREGATE.check(how)
    y = replay_repeats(v, repeats=repeats, noise=noise, seed=seed, first=first,
                       threads=threads, backend=backend)
    return aggregate_repeats(y, how=how)


# --- split-half sign self-consistency --------------------------------------------

@dataclasses.dataclass(frozen=True)
class SplitHalfConsistency:
    r"""Sign agreement of two independent halves of the repeats, each
    aggregated by the median and by the mean.

    Attributes
    ----------
    statistic : str
        "shapley" (the players' Shapley credits) or "edges" (the insertion
        edges).
    half : int
        Repeats per half, :math:`\lfloor R/2 \rfloor`.
    median, mean : float
        Share of the counted signs that agree between the halves, with the
        median and with the mean aggregation.
    median_low, median_high, mean_low, mean_high : float
        Request-clustered intervals at ``level``
        (:func:`~fastcredit.audit.edge_agreement`'s).
    level : float
        Their confidence level.
    median_count, mean_count : int
        Signs counted (nonzero in either half).
    by_request_median, by_request_mean : ndarray (...,)
        Each request's share (NaN where it counts nothing).

    Examples
    --------
    >>> import fastcredit as fc
    >>> y = [[0., 1., 2., 3.], [0., 1., -2., 3.], [0., 1., 2., 3.], [0., 1., 2., 4.]]
    >>> c = fc.audit.split_half_consistency(y, statistic="edges")
    >>> c.half, c.median, c.median_count
    (2, 0.75, 4)
    """
    statistic: str
    half: int
    median: float
    median_low: float
    median_high: float
    mean: float
    mean_low: float
    mean_high: float
    level: float
    median_count: int
    mean_count: int
    by_request_median: np.ndarray = dataclasses.field(repr=False)
    by_request_mean: np.ndarray = dataclasses.field(repr=False)


def _half_signs(a, b, m, statistic, atol, threads, backend):
    """(signs of a, signs of b), the things split-half consistency compares."""
    if statistic == "edges":
        sa, sb, _, _ = _edge_signs(a, b, m, atol)
        return sa, sb
    return (_sign(shapley(a, threads=threads, backend=backend), atol),
            _sign(shapley(b, threads=threads, backend=backend), atol))


def split_half_consistency(repeated, *, statistic="shapley", atol=1e-9, level=0.95,
                           threads=None, backend=None) -> SplitHalfConsistency:
    r"""Split-half sign self-consistency of repeated replays: how often two
    independent halves of the repeats give a credit the same sign.

    The R repeats of every request are split into the first
    :math:`h = \lfloor R/2 \rfloor` and the next h (an odd R leaves the last
    repeat out); each half is aggregated into a table (:math:`y^A`,
    :math:`y^B`, by the median and, separately, by the mean), and the signs
    (-, 0, +, :math:`|x| \le` atol as 0) of the halves' credits are compared:

    .. math:: \text{consistency} = \frac{\#\{(q, c) \in E :
              \operatorname{sign} c(y^A_q) = \operatorname{sign} c(y^B_q)\}}
              {\# E}

    over every request q and credit c: the m Shapley values
    :math:`\phi_i` of each half's table (``statistic="shapley"``, default;
    raw, not centred) or its :math:`m 2^{m-1}` insertion edges
    :math:`y(S + i) - y(S)` (``"edges"``). E holds the credits nonzero in
    either half (``over="either_nonzero"`` of
    :func:`~fastcredit.audit.edge_agreement`: the halves are symmetric, and
    a player both halves give exactly 0, such as a rewrite with no ads in
    noise-free replays, is not a finding). With no noise the halves are
    equal and the consistency is 1. The interval is request-clustered.

    Parameters
    ----------
    repeated : array_like, shape (..., R, 2**m), 2 <= m <= 16, R >= 2
        R replays of each request's table.
    statistic : {"shapley", "edges"}
        The credits compared: Shapley values or insertion edges.
    atol : float
        Signs: :math:`|x| \le` atol is 0.
    level : float in (0, 1)
        Confidence level of the intervals.
    threads : int, optional
        Threads of :func:`fastcredit.shapley` (default all cores).
    backend : {None, "c", "numba"}
        Backend of :func:`fastcredit.shapley`; None picks the faster one.

    Returns
    -------
    SplitHalfConsistency
        The agreement of the halves with the median and with the mean.

    Raises
    ------
    ValueError
        If ``repeated`` does not have shape (..., R, 2**m) with
        2 <= m <= 16 and R >= 2, ``statistic`` is not "shapley" or "edges",
        ``atol`` is negative or not finite, ``level`` is not in (0, 1), the
        edges would not fit in memory, ``threads < 1``, or ``backend`` is
        not None, "c" or "numba" or is not available.
    TypeError
        If ``repeated`` is not a real array, ``atol`` or ``level`` not a
        real number, or ``threads`` not an integer.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.random.default_rng(0).normal(size=(200, 8))
    >>> y = fc.synthetic.replay_repeats(v, repeats=6, noise=0.0)
    >>> c = fc.audit.split_half_consistency(y)
    >>> c.half, c.median, c.mean
    (3, 1.0, 1.0)
    >>> noisy = fc.synthetic.replay_repeats(v, repeats=6, noise=1.0, seed=2)
    >>> bool(fc.audit.split_half_consistency(noisy).median < 1.0)
    True
    """
    y, lead, m = _repeats(repeated, "repeated", min_repeats=2)
    statistic = SPLIT_STATISTIC.check(statistic)
    atol = ATOL.check(atol)
    level = check_open_unit(level, "level")
    h = y.shape[1] // 2
    if statistic == "edges":
        check_memory(8 * 8 * y.shape[0] * m << (m - 1),
                     f"repeated ({y.shape[0]:,} requests of m = {m}: their insertion edges)")
    out = {}
    for how in ("median", "mean"):
        sa, sb = _half_signs(_aggregate(y[:, :h], how), _aggregate(y[:, h:2 * h], how), m,
                             statistic, atol, threads, backend)
        same = _agree(sa, sb)
        counted = _counted(sa, sb, "either_nonzero")
        hits = np.where(counted, same, 0.0).sum(axis=1)
        counts = counted.sum(axis=1)
        rate, low, high = _clustered_interval(hits[:, None], counts[:, None], level)
        with np.errstate(invalid="ignore", divide="ignore"):
            per = np.where(counts > 0, hits / np.maximum(counts, 1), np.nan)
        out[how] = (float(rate[0]), float(low[0]), float(high[0]), int(counts.sum()),
                    per.reshape(lead))
    md, mn = out["median"], out["mean"]
    return SplitHalfConsistency(statistic, h, md[0], md[1], md[2], mn[0], mn[1], mn[2], level,
                                md[3], mn[3], md[4], mn[4])


# --- noise against the number of repeats ----------------------------------------

@dataclasses.dataclass(frozen=True)
class NoiseScale:
    r"""The sd of an aggregated table's entries against the number of
    repeats aggregated.

    Attributes
    ----------
    how : str
        "median" or "mean".
    repeats : ndarray (n,) int64
        r = 1, 2, ..., :math:`\lfloor R/2 \rfloor`.
    sd : ndarray (n,)
        ``[j]``: the sd of one entry of a table aggregated from
        ``repeats[j]`` replays, estimated from two disjoint sets of them
        (NaN for no requests).
    reference : ndarray (n,)
        :math:`\widehat{sd}(1) / \sqrt{r}`: the scale of a mean of r
        independent replays.
    slope : float
        Least-squares slope of :math:`\log \widehat{sd}` on :math:`\log r`
        (-1/2 for independent noise; NaN with fewer than two r or a zero
        sd).
    count : int
        Differences averaged per r (requests x nonempty coalitions).

    Examples
    --------
    >>> import fastcredit as fc
    >>> y = [[0., 1., 2., 3.], [0., 1., -2., 3.], [0., 1., 2., 3.], [0., 1., 2., 4.]]
    >>> s = fc.audit.noise_scale(y)
    >>> s.repeats, s.sd.round(4), s.count
    (array([1, 2]), array([1.633 , 0.8416]), 3)
    """
    how: str
    repeats: np.ndarray
    sd: np.ndarray
    reference: np.ndarray
    slope: float
    count: int


def noise_scale(repeated, *, how="median") -> NoiseScale:
    r"""How the noise of the aggregated replay falls with the number of
    repeats, next to the :math:`1/\sqrt{R}` reference.

    For r = 1 .. :math:`\lfloor R/2 \rfloor`, two tables are aggregated
    (:func:`aggregate_repeats`) from disjoint sets of r repeats of every
    request, :math:`A_r` from repeats [0, r) and :math:`B_r` from [r, 2r);
    their difference has twice the variance of one aggregated entry, so

    .. math:: \widehat{sd}(r) = \sqrt{\frac{1}{2 N}
              \sum_{q} \sum_{S \ne \emptyset} (A_{r,q}(S) - B_{r,q}(S))^2}

    over the N = requests x :math:`(2^m - 1)` nonempty coalitions (the
    empty coalition is not replayed). For independent noise of sd
    :math:`\sigma` the mean gives :math:`\sigma/\sqrt{r}` exactly; the
    median of Gaussian noise is :math:`\sigma/\sqrt{r}` for r <= 2 and tends
    to :math:`\sigma\sqrt{\pi/(2r)}` (1.25 times the mean's). The reference
    is :math:`\widehat{sd}(1)/\sqrt{r}`.

    Parameters
    ----------
    repeated : array_like, shape (..., R, 2**m), 2 <= m <= 16, R >= 2
        R replays of each request's table.
    how : {"median", "mean"}
        The aggregate over the repeats.

    Returns
    -------
    NoiseScale
        The sd per number of repeats, the reference and the slope.

    Raises
    ------
    ValueError
        If ``repeated`` does not have shape (..., R, 2**m) with
        2 <= m <= 16 and R >= 2, or ``how`` is not "median" or "mean".
    TypeError
        If ``repeated`` is not a real array.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.zeros((500, 32))
    >>> s = fc.audit.noise_scale(fc.synthetic.replay_repeats(v, repeats=8, noise=2.0),
    ...                          how="mean")
    >>> s.repeats.tolist(), bool(np.allclose(s.sd, 2.0 / np.sqrt(s.repeats), rtol=0.05))
    ([1, 2, 3, 4], True)
    """
    y, _, m = _repeats(repeated, "repeated", min_repeats=2)
    how = REPEAT_AGGREGATE.check(how)
    rs = np.arange(1, y.shape[1] // 2 + 1, dtype=np.int64)
    n = y.shape[0] * ((1 << m) - 1)
    sd = np.empty(rs.size)
    for j, r in enumerate(rs):
        d = _aggregate(y[:, :r, 1:], how) - _aggregate(y[:, r:2 * r, 1:], how)
        sd[j] = np.sqrt(np.einsum("ij,ij->", d, d) / (2 * n)) if n else np.nan
    reference = sd[0] / np.sqrt(rs)
    ok = np.isfinite(sd) & (sd > 0)
    slope = (float(np.polyfit(np.log(rs), np.log(sd), 1)[0])
             if rs.size >= 2 and ok.all() else float("nan"))
    return NoiseScale(how, rs, sd, reference, slope, int(n))


# --- fidelity by edge magnitude ----------------------------------------------------

@dataclasses.dataclass(frozen=True)
class MagnitudeFidelity:
    r"""Insertion-edge sign agreement of a backend with a reference, by bins
    of the reference edge's magnitude :math:`|\Delta^{ref}|`.

    Attributes
    ----------
    over : str
        The edges counted (:class:`~fastcredit.audit.EdgeAgreement`'s).
    bin_edges : ndarray (n_bins + 1,)
        Bin j holds :math:`e_j \le |\Delta^{ref}| < e_{j+1}` (the last bin
        includes its upper end).
    rate, low, high : ndarray (n_bins,)
        Agreement per bin and its request-clustered interval (NaN for an
        empty bin).
    count : ndarray (n_bins,) int64
        Counted edges per bin.
    overall : float
        The agreement over every counted edge: ``edge_agreement(v,
        reference, over=over).rate``.
    level : float
        The intervals' confidence level.

    Examples
    --------
    >>> import fastcredit as fc
    >>> f = fc.audit.fidelity_by_magnitude([0., 1., 1., 1.], [0., 1., 1., 1.5], bins=2)
    >>> f.over, f.bin_edges.tolist(), f.count.tolist()
    ('audit_nonzero', [0.5, 0.75, 1.0], [2, 2])
    """
    over: str
    bin_edges: np.ndarray
    rate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    count: np.ndarray
    overall: float
    level: float


def fidelity_by_magnitude(v, reference, *, bins=4, over="audit_nonzero", atol=1e-9,
                          level=0.95) -> MagnitudeFidelity:
    r"""A backend's insertion-edge sign agreement with a reference (the
    repeat-aggregated replay), conditioned on the reference edge's size:
    does the backend get the large replay effects right, and are its
    disagreements on edges the replay barely moves?

    For each request, player i and S not holding i, the edge signs of
    :math:`\Delta^{v}_{S,i} = v(S+i) - v(S)` and
    :math:`\Delta^{ref}_{S,i}` are compared exactly as
    :func:`~fastcredit.audit.edge_agreement` (``v`` as ``train``,
    ``reference`` as ``audit``) compares them, over the edges ``over``
    selects; the counted edges are then split by
    :math:`|\Delta^{ref}_{S,i}|`:

    .. math:: \text{agreement}_j = \frac{\#\{(S, i) \in E :
              e_j \le |\Delta^{ref}_{S,i}| < e_{j+1},\ \operatorname{sign}
              \Delta^{v}_{S,i} = \operatorname{sign} \Delta^{ref}_{S,i}\}}
              {\#\{(S, i) \in E : e_j \le |\Delta^{ref}_{S,i}| < e_{j+1}\}}

    With ``bins`` an integer the bin edges :math:`e_j` are the j/bins
    quantiles of :math:`|\Delta^{ref}|` over the counted edges (equal
    counts up to ties; a tie across a quantile leaves a bin empty); with a
    sequence they are given. The count-weighted mean of the bins' agreement
    is the overall one.

    Parameters
    ----------
    v, reference : array_like, shape (..., 2**m), 2 <= m <= 16
        The backend's tables and the reference tables of the same requests.
    bins : int >= 1 or sequence of increasing floats (at least two)
        Number of quantile bins, or the bin edges.
    over : {"audit_nonzero", "both_nonzero", "either_nonzero", "all"}
        The edges counted (:func:`~fastcredit.audit.edge_agreement`'s).
    atol : float
        Signs: :math:`|x| \le` atol is 0.
    level : float in (0, 1)
        Confidence level of the intervals.

    Returns
    -------
    MagnitudeFidelity
        Agreement, interval and count per magnitude bin, and overall.

    Raises
    ------
    ValueError
        If ``v`` or ``reference`` has no last axis of length 2**m with
        2 <= m <= 16, the two differ in shape, ``bins`` is an int outside
        [1, 2**16] or a sequence that is not at least two increasing edges
        (NaN refused), ``over`` is not one of its values, ``atol`` is
        negative or not finite, ``level`` is not in (0, 1), or the edges
        would not fit in memory.
    TypeError
        If ``v``, ``reference`` or a sequence ``bins`` is not a real array,
        or ``atol`` or ``level`` is not a real number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> f = fc.audit.fidelity_by_magnitude([0., 1., 1., 1.], [0., 1., 1., 1.5], bins=[0, 1, 2])
    >>> f.rate.tolist(), f.count.tolist(), f.overall   # the small edges are wrong
    ([0.0, 1.0], [2, 2], 0.5)
    """
    t, m = _tables(v, "v")
    a, _ = _tables(reference, "reference")
    if np.shape(v) != np.shape(reference):
        raise ValueError(f"v and reference must have the same shape, got {np.shape(v)} and "
                         f"{np.shape(reference)}")
    over = AGREEMENT_OVER.check(over)
    atol = ATOL.check(atol)
    level = check_open_unit(level, "level")
    given = not isinstance(bins, (int, np.integer)) or isinstance(bins, bool)
    if given:
        edges = float64_array(as_array(bins, "bins"), "bins")
        if edges.ndim != 1 or edges.size < 2 or np.isnan(edges).any() \
                or not (np.diff(edges) > 0).all():
            raise ValueError(f"bins must be an int >= 1 or at least two increasing bin edges, "
                             f"got {bins!r}")
    else:
        bins = MAGNITUDE_BINS.check(bins)
    check_memory(7 * 8 * t.shape[0] * m << (m - 1),
                 f"v and reference ({t.shape[0]:,} requests of m = {m}: their insertion edges)")
    st, sa, _, da = _edge_signs(t, a, m, atol)
    same = _agree(st, sa)
    counted = _counted(st, sa, over)
    mag = np.abs(da)
    if not given:
        pick = mag[counted]
        edges = (np.quantile(pick, np.linspace(0.0, 1.0, bins + 1)) if pick.size
                 else np.full(bins + 1, np.nan))
    nb = edges.size - 1
    nan = np.isnan(mag)
    hits, counts = np.empty((t.shape[0], nb)), np.empty((t.shape[0], nb))
    for j in range(nb):
        upper = mag <= edges[j + 1] if j == nb - 1 else mag < edges[j + 1]
        inbin = counted & ((mag >= edges[j]) & upper | nan)   # a NaN edge is in every bin
        hits[:, j] = np.where(inbin, same, 0.0).sum(axis=1)
        counts[:, j] = inbin.sum(axis=1)
    rate, low, high = _clustered_interval(hits, counts, level)
    overall, _, _ = _clustered_interval(np.where(counted, same, 0.0).sum(axis=1)[:, None],
                                        counted.sum(axis=1)[:, None], level)
    return MagnitudeFidelity(over, edges, rate, low, high, counts.sum(axis=0).astype(np.int64),
                             float(overall[0]), level)
