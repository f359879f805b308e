r"""The set-intervention study's analyses of a replay landscape.

The paper's design: credit rules are computed under a *training* evaluator
(the cheap one, auction replay in ``filter`` mode) and judged against a
reference Shapley credit from a separate *audit* evaluator (``rerun``); both
evaluators score the same requests, so everything here takes two batches of
coalition tables ``train`` and ``audit`` of shape (..., 2**m).

* :func:`interaction_distribution`: signs and sizes of the pair interactions
  :math:`I_{ij} = v(ij) - v(i) - v(j) + v(\emptyset)` (the paper's
  interaction distribution);
* :func:`edge_agreement`: insertion-edge sign agreement between the two
  evaluators by predecessor size (Table 4), with a request-clustered
  interval;
* :func:`pair_agreement`: pair-interaction sign agreement;
* :func:`calibration`: the summary figures a synthetic landscape is
  calibrated on (all of the above);
* :func:`size_agreement`: per predecessor size k, the training evaluator's
  size-resolved marginals against a target from the audit evaluator
  (Table 1);
* :func:`rule_agreement`: each credit rule under the training evaluator
  against the audit evaluator's Shapley credit, with the paired bootstrap of
  Shapley (CASI) minus the rule (Tables 2 and 6).

Choices where the paper's definitions leave room (docs/study.md):

* a value within ``atol`` of 0 is zero (the tables are sums of prices: an
  exact zero can round to 1e-15);
* a sign is one of -, 0, +: an edge whose marginal is 0 under one evaluator
  and positive under the other disagrees (the filter evaluator's exact zeros
  are part of what it gets wrong);
* pair-interaction sign agreement is over the pairs nonzero under both
  evaluators (:attr:`PairAgreement.rate`); over all pairs it is also
  reported. In ``filter`` mode with nonnegative earnings
  :math:`I_{ij} \le 0` always (the filtered top-N of a union is a subset of
  the two filtered top-N's), so over all pairs the agreement is at most one
  minus the audit evaluator's share of complements;
* the median :math:`|I_{ij}|` is over the nonzero interactions (over all
  pairs it is also reported).

A share or rate of nothing (no requests, no nonzero pair) is NaN, as is a
median of nothing; the per-request statistics are NaN where
:func:`alignment` documents it. NaN in a table propagates: a rate, share or
median over a NaN marginal or interaction is NaN.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .._params import AGREEMENT_OVER, ATOL
from .._validation import as_array, as_sequence, check_memory, check_open_unit, float64_array
from ..tables import banzhaf, leave_one_out, pair_interactions, shapley, singleton, size_resolved
from .agreement import alignment
from .bootstrap import paired_bootstrap

__all__ = ["Calibration", "EdgeAgreement", "InteractionDistribution", "PairAgreement",
           "RuleAgreement", "SizeAgreement", "calibration", "edge_agreement",
           "interaction_distribution", "pair_agreement", "rule_agreement", "size_agreement",
           "STUDY_RULES"]

#: The credit rules of the paper's comparison, by name (Shapley is CASI).
STUDY_RULES = {"singleton": singleton, "leave_one_out": leave_one_out, "banzhaf": banzhaf,
               "shapley": shapley}
_TARGETS = ("size", "shapley")


def _tables(v, name):
    """``v`` as float64 (B, 2**m) with 2 <= m <= 16, and m."""
    a = as_array(v, name)
    n = a.shape[-1] if a.ndim else 0
    if n < 4 or n & (n - 1) or n > 1 << 16:
        raise ValueError(f"{name} must have a last axis of length 2**m with 2 <= m <= 16, got "
                         f"shape {a.shape}")
    a = float64_array(a, name)
    return a.reshape(-1, n), n.bit_length() - 1


def _pair(train, audit, names=("train", "audit")):
    """Two tables of the same requests, checked and converted; ``names``
    are the caller's argument names, for its errors."""
    t, m = _tables(train, names[0])
    a, _ = _tables(audit, names[1])
    if t.shape != a.shape or np.shape(train) != np.shape(audit):
        raise ValueError(f"{names[0]} and {names[1]} must have the same shape, got "
                         f"{np.shape(train)} and {np.shape(audit)}")
    return t, a, m


def _sign(x, atol):
    """-1, 0, +1 with |x| <= atol as 0 (NaN stays NaN)."""
    return np.where(np.abs(x) <= atol, 0.0, np.sign(x))


def _agree(a, b):
    """1.0 where the signs a and b agree, 0.0 where not, NaN where either is
    NaN (so that a rate over them is NaN, as NumPy propagates it)."""
    return np.where(np.isnan(a) | np.isnan(b), np.nan, (a == b).astype(np.float64))


def _pairs(v, m, threads=None, backend=None):
    """I_ij, i < j, of every request: (B, m (m - 1) / 2)."""
    iu = np.triu_indices(m, 1)
    return pair_interactions(v, threads=threads, backend=backend)[:, iu[0], iu[1]]


def _edges(v, m):
    """Marginals v(S + i) - v(S) of every insertion edge, (B, m 2**(m-1)), and
    the predecessor size ``|S|`` of each edge (m 2**(m-1),); edges ordered by i,
    then by S ascending. Player i's coalitions come in blocks of 2**(i+1)
    masks, the first half without i: the edges of i are the second half
    minus the first, read as strided views and subtracted into their columns
    (3x faster than gathering them at m = 5, 5x at m = 8)."""
    n, half = v.shape[0], 1 << (m - 1)
    masks = np.arange(1 << m)
    sizes = np.bitwise_count(masks)
    marg = np.empty((n, m * half), dtype=v.dtype)
    for i in range(m):
        blocks = v.reshape(n, -1, 2, 1 << i)
        np.subtract(blocks[:, :, 1], blocks[:, :, 0],
                    out=marg[:, i * half:(i + 1) * half].reshape(n, -1, 1 << i))
    return marg, np.concatenate([sizes[(masks >> i & 1) == 0] for i in range(m)])


# --- the interaction distribution ---------------------------------------------

@dataclasses.dataclass(frozen=True)
class InteractionDistribution:
    r"""Signs and sizes of the pair interactions :math:`I_{ij}`, i < j, of a
    batch of tables.

    Attributes
    ----------
    values : ndarray (n_pairs,)
        Every :math:`I_{ij}`, request by request (i < j in row-major order);
        those within ``atol`` of 0 set to 0.
    negative, positive, zero : int
        Counts of substitutes (< 0), complements (> 0) and zeros.
    negative_share, positive_share, zero_share : float
        The counts over the number of pairs (NaN if a pair is NaN).
    median_abs_nonzero : float
        Median :math:`|I_{ij}|` over the nonzero ones (NaN if none).
    median_abs : float
        Median :math:`|I_{ij}|` over all pairs.

    Examples
    --------
    >>> import fastcredit as fc
    >>> d = fc.interaction_distribution([[0., 1., 1., 1.], [0., 1., 1., 3.], [0., 1., 1., 2.]])
    >>> d.values, d.zero_share
    (array([-1.,  1.,  0.]), 0.3333333333333333)
    """
    values: np.ndarray = dataclasses.field(repr=False)
    negative: int
    positive: int
    zero: int
    negative_share: float
    positive_share: float
    zero_share: float
    median_abs_nonzero: float
    median_abs: float


def _share(count, total):
    return count / total if total == total and total else float("nan")


def interaction_distribution(v, *, atol=1e-9, threads=None,
                             backend=None) -> InteractionDistribution:
    r"""The distribution of pair interactions
    :math:`I_{ij} = v(ij) - v(i) - v(j) + v(\emptyset)` over requests and
    pairs i < j: how many are substitutes (negative), complements (positive)
    or exactly zero (within ``atol``), and how large.

    Parameters
    ----------
    v : array_like, shape (..., 2**m), 2 <= m <= 16
        Coalition tables of one evaluator.
    atol : float
        :math:`|I_{ij}| \le` atol counts as 0.
    threads : int, optional
        Threads of :func:`fastcredit.pair_interactions` (default all cores).
    backend : {None, "c", "numba"}
        Backend of :func:`fastcredit.pair_interactions`; None picks the
        faster one.

    Returns
    -------
    InteractionDistribution
        The interactions, their sign counts and shares, and median sizes.

    Raises
    ------
    ValueError
        If ``v`` has no last axis of length 2**m with 2 <= m <= 16, ``atol``
        is negative or not finite, ``threads < 1``, or ``backend`` is not
        None, "c" or "numba" or is not available.
    TypeError
        If ``v`` is not a real array, ``atol`` not a real number or
        ``threads`` not an integer.

    Examples
    --------
    >>> import fastcredit as fc
    >>> d = fc.interaction_distribution([[0., 1., 1., 1.], [0., 1., 1., 3.], [0., 1., 1., 2.]])
    >>> d.negative, d.positive, d.zero, d.median_abs_nonzero
    (1, 1, 1, 1.0)
    """
    v, m = _tables(v, "v")
    atol = ATOL.check(atol)
    vals = _pairs(v, m, threads, backend).ravel()
    vals = np.where(np.abs(vals) <= atol, 0.0, vals)
    neg, pos = int(np.count_nonzero(vals < 0)), int(np.count_nonzero(vals > 0))
    zero = int(np.count_nonzero(vals == 0))
    n = vals.size
    # NaN interactions make every share and median NaN (the counts count the rest)
    n = n if neg + pos + zero == n else float("nan")
    nonzero = np.abs(vals[vals != 0])
    return InteractionDistribution(
        vals, neg, pos, zero, _share(neg, n), _share(pos, n), _share(zero, n),
        float(np.median(nonzero)) if nonzero.size else float("nan"),
        float(np.median(np.abs(vals))) if vals.size else float("nan"))


# --- insertion edges (Table 4) --------------------------------------------------

@dataclasses.dataclass(frozen=True)
class EdgeAgreement:
    r"""Sign agreement of the insertion edges :math:`v(S + i) - v(S)` of two
    evaluators, over the edges ``over`` selects and by predecessor size
    ``k = |S|``.

    Attributes
    ----------
    over : str
        The denominator: "audit_nonzero" (edges whose audit marginal is
        nonzero, the paper's), "both_nonzero", "either_nonzero" or "all".
    rate : float
        Share of the counted edges (every request, i, S not holding i) whose
        signs (-, 0, +) agree.
    low, high : float
        Its request-clustered interval at ``level``.
    level : float
        The intervals' confidence level.
    count : int
        Edges counted.
    rate_all, count_all : float, int
        The agreement over all edges (requests x m 2**(m-1)), 0 a sign.
    by_size : ndarray (m,)
        ``[k]``: the agreement over the counted edges with ``|S| = k``.
    by_size_low, by_size_high : ndarray (m,)
        Their request-clustered intervals.
    count_by_size : ndarray (m,) int64
        Counted edges per k.
    train_signs, audit_signs : ndarray (m, 3)
        ``[k]``: the shares of negative, zero and positive marginals of each
        evaluator among all edges with ``|S| = k``.

    Examples
    --------
    >>> import fastcredit as fc
    >>> e = fc.edge_agreement([0., 1., 1., 1.], [0., 1., 1., 2.])
    >>> e.over, e.count_by_size.tolist(), e.train_signs.tolist()
    ('audit_nonzero', [2, 2], [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    """
    over: str
    rate: float
    low: float
    high: float
    level: float
    count: int
    rate_all: float
    count_all: int
    by_size: np.ndarray
    by_size_low: np.ndarray
    by_size_high: np.ndarray
    count_by_size: np.ndarray
    train_signs: np.ndarray
    audit_signs: np.ndarray


def _clustered_interval(hits, counts, level):
    r"""Percentile-free interval of the pooled rate :math:`R = \sum h_r /
    \sum c_r` over requests r, by the linearised (delta-method) variance of a
    ratio with the request as the cluster:
    :math:`\widehat{se}^2 = \frac{n}{n-1} \sum_r (h_r - R c_r)^2 / (\sum_r c_r)^2`,
    R +- z se clipped to [0, 1]. Rows of ``hits``/``counts`` are requests;
    columns are strata (one interval per column)."""
    from scipy.special import ndtri

    hits = np.asarray(hits, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    n = hits.shape[0]
    total = counts.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = hits.sum(axis=0) / total
        resid = hits - rate * counts
        se = np.sqrt(n / max(n - 1, 1) * (resid ** 2).sum(axis=0)) / total
    z = ndtri((1 + level) / 2)
    return rate, np.clip(rate - z * se, 0.0, 1.0), np.clip(rate + z * se, 0.0, 1.0)


def _counted(st, sa, over):
    """Which items (signs ``st`` of train, ``sa`` of audit) a share ``over``
    counts. An item with a NaN sign is always counted, so that a rate over
    it is NaN (NumPy's propagation)."""
    nan = np.isnan(st) | np.isnan(sa)
    if over == "audit_nonzero":
        return (sa != 0) | nan
    if over == "both_nonzero":
        return (st != 0) & (sa != 0) | nan
    if over == "either_nonzero":
        return (st != 0) | (sa != 0)
    return np.ones(st.shape, dtype=bool)


def _edge_signs(t, a, m, atol):
    """The signs of every insertion edge of ``t`` and ``a`` (B, m 2**(m-1)),
    the predecessor size of each edge and ``a``'s marginals: the one
    definition of an edge's sign that :func:`edge_agreement` and
    :func:`fastcredit.audit.fidelity_by_magnitude` count."""
    dt, k = _edges(t, m)
    da, _ = _edges(a, m)
    return _sign(dt, atol), _sign(da, atol), k, da


def edge_agreement(train, audit, *, over="audit_nonzero", atol=1e-9,
                   level=0.95) -> EdgeAgreement:
    r"""Insertion-edge sign agreement of two evaluators, by predecessor size
    (the paper's Table 4).

    For every request, player i and coalition S not holding i, the signs
    (-, 0, + with :math:`|x| \le` atol as 0) of
    :math:`v_{train}(S + i) - v_{train}(S)` and
    :math:`v_{audit}(S + i) - v_{audit}(S)`; agreement is the share of the
    counted edges whose signs are equal, over all sizes and per ``k = |S|``:

    .. math:: \text{agreement} = \frac{\#\{(S, i) \in E :
              \operatorname{sign} \Delta^{train}_{S,i} = \operatorname{sign}
              \Delta^{audit}_{S,i}\}}{\# E}

    with E the edges ``over`` selects: ``"audit_nonzero"`` (default, the
    paper's: :math:`\Delta^{audit} \ne 0`, so the training evaluator's
    exact zeros where the replay moves count as errors and two zeros are
    not an agreement), ``"both_nonzero"``, ``"either_nonzero"`` or
    ``"all"`` (0 a sign like the others). This is the one definition of
    edge agreement: :func:`~fastcredit.audit.evaluator_fidelity`'s
    ``edge_sign`` is this function's ``by_size``. The interval treats the
    request as the unit (edges of one request are not independent): the
    linearised variance of a ratio of sums over requests, a normal interval
    at ``level``.

    Parameters
    ----------
    train, audit : array_like, shape (..., 2**m), 2 <= m <= 16
        The same requests' tables under the two evaluators (``audit`` is
        the reference).
    over : {"audit_nonzero", "both_nonzero", "either_nonzero", "all"}
        The edges counted (see above).
    atol : float
        Signs: :math:`|x| \le` atol is 0.
    level : float in (0, 1)
        Confidence level of the intervals.

    Returns
    -------
    EdgeAgreement
        Overall and per-size agreement with intervals, and sign shares.

    Raises
    ------
    ValueError
        If ``train`` or ``audit`` has no last axis of length 2**m with
        2 <= m <= 16, the two differ in shape, ``over`` is not one of its
        values, ``atol`` is negative or not finite, ``level`` is not in
        (0, 1), or the edges would not fit in memory.
    TypeError
        If ``train`` or ``audit`` is not a real array, or ``atol`` or
        ``level`` not a real number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> e = fc.edge_agreement([0., 1., 1., 1.], [0., 1., 1., 2.])
    >>> e.rate, e.by_size.tolist(), e.count
    (0.5, [1.0, 0.0], 4)
    >>> e = fc.edge_agreement([0., 1., 1., 1.], [0., 1., 1., 1.], over="audit_nonzero")
    >>> e.rate, e.count, e.rate_all, e.count_all   # the two zero edges are not counted
    (1.0, 2, 1.0, 4)
    """
    t, a, m = _pair(train, audit)
    over = AGREEMENT_OVER.check(over)
    atol = ATOL.check(atol)
    level = check_open_unit(level, "level")
    # the marginals and signs of both evaluators, and their agreement
    check_memory(6 * 8 * t.shape[0] * m << (m - 1),
                 f"train and audit ({t.shape[0]:,} requests of m = {m}: their "
                 f"{t.shape[0] * m << (m - 1):,} insertion edges)")
    st, sa, k, _ = _edge_signs(t, a, m, atol)
    same = _agree(st, sa)
    counted = _counted(st, sa, over)
    onehot = (k[:, None] == np.arange(m)).astype(np.float64)   # edge -> its size
    # per request and size (a matrix product would spread one NaN over all sizes)
    hits = np.stack([np.where(counted[:, k == j], same[:, k == j], 0.0).sum(axis=1)
                     for j in range(m)], axis=1)   # (B, m)
    counts = np.stack([counted[:, k == j].sum(axis=1) for j in range(m)], axis=1)
    by, lo, hi = _clustered_interval(hits, counts, level)
    rate, low, high = _clustered_interval(hits.sum(axis=1, keepdims=True),
                                          counts.sum(axis=1, keepdims=True), level)
    all_counts = onehot.sum(axis=0) * t.shape[0]

    def signs(s):
        out = np.empty((m, 3))
        for j, sign in enumerate((-1.0, 0.0, 1.0)):
            with np.errstate(invalid="ignore", divide="ignore"):
                out[:, j] = (s == sign).sum(axis=0) @ onehot / all_counts
        out[np.isnan(s).sum(axis=0) @ onehot > 0] = np.nan   # NaN marginals of size k
        return out

    return EdgeAgreement(
        over, float(rate[0]), float(low[0]), float(high[0]), level, int(counts.sum()),
        _share(float(same.sum()), same.size), int(same.size), by, lo, hi,
        counts.sum(axis=0).astype(np.int64), signs(st), signs(sa))


# --- pair interactions -------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class PairAgreement:
    """Sign agreement of two evaluators' pair interactions.

    Attributes
    ----------
    over : str
        The denominator, as in :class:`EdgeAgreement` (default here
        "both_nonzero").
    rate : float
        Share of the counted pairs whose signs agree.
    low, high : float
        Its request-clustered interval at ``level`` (the pairs of one
        request are not independent).
    level : float
        The interval's confidence level.
    count : int
        Pairs counted.
    rate_all : float
        Share of all pairs whose signs (-, 0, +) agree.
    count_all : int
        All pairs (requests x m (m - 1) / 2).

    Examples
    --------
    >>> import fastcredit as fc
    >>> p = fc.pair_agreement([[0., 1., 1., 1.], [0., 1., 1., 2.]],
    ...                       [[0., 1., 1., 0.], [0., 1., 1., 3.]])
    >>> p.over, p.count_all
    ('both_nonzero', 2)
    """
    over: str
    rate: float
    low: float
    high: float
    level: float
    count: int
    rate_all: float
    count_all: int


def pair_agreement(train, audit, *, over="both_nonzero", atol=1e-9, level=0.95, threads=None,
                   backend=None) -> PairAgreement:
    r"""Pair-interaction sign agreement of two evaluators:
    :math:`\operatorname{sign} I^{train}_{ij} = \operatorname{sign} I^{audit}_{ij}`
    over the pairs i < j (of every request) that ``over`` selects (by
    default those nonzero under both, :math:`|I| >` atol: do the two
    evaluators agree on substitutes versus complements where both see an
    interaction), and over all pairs with 0 as a sign. The interval is the
    request-clustered one of :func:`edge_agreement`.

    Parameters
    ----------
    train, audit : array_like, shape (..., 2**m), 2 <= m <= 16
        The same requests' tables under the two evaluators.
    over : {"both_nonzero", "audit_nonzero", "either_nonzero", "all"}
        The pairs counted (as in :func:`edge_agreement`).
    atol : float
        Signs: :math:`|I| \le` atol is 0.
    level : float in (0, 1)
        Confidence level of the interval.
    threads : int, optional
        Threads of :func:`fastcredit.pair_interactions` (default all cores).
    backend : {None, "c", "numba"}
        Backend of :func:`fastcredit.pair_interactions`; None picks the
        faster one.

    Returns
    -------
    PairAgreement
        The agreement over the counted pairs with its interval, and over all.

    Raises
    ------
    ValueError
        If ``train`` or ``audit`` has no last axis of length 2**m with
        2 <= m <= 16, the two differ in shape, ``over`` is not one of its
        values, ``atol`` is negative or not finite, ``level`` is not in
        (0, 1), ``threads < 1``, or ``backend`` is not None, "c" or "numba"
        or is not available.
    TypeError
        If ``train`` or ``audit`` is not a real array, ``atol`` or ``level``
        not a real number, or ``threads`` not an integer.

    Examples
    --------
    >>> import fastcredit as fc
    >>> p = fc.pair_agreement([[0., 1., 1., 1.], [0., 1., 1., 2.]],
    ...                       [[0., 1., 1., 0.], [0., 1., 1., 3.]])
    >>> p.rate, p.count, p.rate_all   # a substitute in both; 0 against a complement
    (1.0, 1, 0.5)
    """
    t, a, m = _pair(train, audit)
    over = AGREEMENT_OVER.check(over)
    atol = ATOL.check(atol)
    level = check_open_unit(level, "level")
    st = _sign(_pairs(t, m, threads, backend), atol)
    sa = _sign(_pairs(a, m, threads, backend), atol)
    same = _agree(st, sa)
    counted = _counted(st, sa, over)
    hits = np.where(counted, same, 0.0).sum(axis=1, keepdims=True)
    counts = counted.sum(axis=1, keepdims=True)
    rate, low, high = _clustered_interval(hits, counts, level)
    return PairAgreement(over, float(rate[0]), float(low[0]), float(high[0]), level,
                         int(counts.sum()), _share(float(same.sum()), same.size),
                         int(same.size))


# --- calibration ---------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Calibration:
    """The summary figures of a replay landscape (docs/study.md compares
    them with the paper's).

    Attributes
    ----------
    interactions : InteractionDistribution
        Of the audit evaluator (the training evaluator's, when it is
        ``filter``, has no complements by construction).
    train_interactions : InteractionDistribution
        Of the training evaluator.
    edges : EdgeAgreement
        Insertion-edge sign agreement (:func:`edge_agreement`).
    pairs : PairAgreement
        Pair-interaction sign agreement (:func:`pair_agreement`).
    n_requests : int
        Requests (tables) compared.

    Examples
    --------
    >>> import fastcredit as fc
    >>> c = fc.calibration([[0., 1., 1., 1.]], [[0., 1., 1., 3.]])
    >>> c.n_requests, c.edges.rate, c.pairs.rate
    (1, 0.5, 0.0)
    """
    interactions: InteractionDistribution
    train_interactions: InteractionDistribution
    edges: EdgeAgreement
    pairs: PairAgreement
    n_requests: int


def calibration(train, audit, *, atol=1e-9, level=0.95, threads=None,
                backend=None) -> Calibration:
    """The calibration statistics of a landscape scored by two evaluators:
    the interaction distribution of each, insertion-edge sign agreement
    with its interval and pair-interaction sign agreement.

    Parameters
    ----------
    train, audit : array_like, shape (..., 2**m), 2 <= m <= 16
        The same requests' tables under the two evaluators.
    atol, level
        As in :func:`edge_agreement`.
    threads, backend
        Of :func:`fastcredit.pair_interactions`.

    Returns
    -------
    Calibration
        Both interaction distributions, edge and pair agreement.

    Raises
    ------
    ValueError
        If an argument fails the checks of :func:`edge_agreement` or
        :func:`pair_agreement` (tables of 2**m with 2 <= m <= 16 and the
        same shape, ``atol`` >= 0 and finite, ``level`` in (0, 1),
        ``threads`` >= 1, an available ``backend``).
    TypeError
        If ``train`` or ``audit`` is not a real array, or a scalar argument
        has the wrong type.

    Examples
    --------
    >>> import fastcredit as fc
    >>> c = fc.calibration([[0., 1., 1., 1.]], [[0., 1., 1., 3.]])
    >>> c.interactions.positive, c.train_interactions.negative
    (1, 1)
    """
    t, a, _ = _pair(train, audit)
    kw = dict(atol=atol, threads=threads, backend=backend)
    return Calibration(interaction_distribution(a, **kw), interaction_distribution(t, **kw),
                       edge_agreement(t, a, atol=atol, level=level),
                       pair_agreement(t, a, level=level, **kw), t.shape[0])


# --- Table 1: agreement by predecessor size ------------------------------------------

@dataclasses.dataclass(frozen=True)
class SizeAgreement:
    """Per predecessor size k, the training evaluator's size-resolved
    marginals against the audit target.

    Attributes
    ----------
    target : str
        "size" (the audit evaluator's size-resolved marginals at the same k)
        or "shapley" (the audit evaluator's Shapley credit).
    by_size : tuple of Alignment, one per k = 0..m-1
        The comparison at each predecessor size.
    median_cosine, sign_nonzero, median_spearman, top_rate : ndarray (m,)
        The summaries of each (sign agreement on the nonzero targets).

    Examples
    --------
    >>> import fastcredit as fc
    >>> s = fc.size_agreement([[0., 2., 1., 3.], [0., 1., 2., 4.]],
    ...                       [[0., 2., 1., 3.], [0., 3., 1., 3.]], target="shapley")
    >>> s.target, len(s.by_size), s.by_size[0].cosine, s.top_rate
    ('shapley', 2, array([ 1., -1.]), array([0.5, 0.5]))
    """
    target: str
    by_size: tuple
    median_cosine: np.ndarray
    sign_nonzero: np.ndarray
    median_spearman: np.ndarray
    top_rate: np.ndarray


def size_agreement(train, audit, *, target="size", atol=1e-9, threads=None,
                   backend=None) -> SizeAgreement:
    r"""Agreement resolved by predecessor size ``|S| = k`` (the paper's Table 1).

    For each k, the training evaluator's size-resolved credit
    :math:`\phi^{(k)}_i = \operatorname{mean}_{|S| = k,\, i \notin S}
    v_{train}(S + i) - v_{train}(S)` (:func:`fastcredit.size_resolved`) is
    compared, request by request and centred (:func:`alignment`), with the
    target: the audit evaluator's size-resolved credit at the same k
    (``target="size"``) or its Shapley credit (``target="shapley"``: which
    predecessor size carries the reference's ranking; k = 0 is Singleton,
    k = m - 1 leave-one-out). Reported per k: sign agreement on the nonzero
    (centred) targets, median Spearman, top-action agreement and median
    cosine.

    Parameters
    ----------
    train, audit : array_like, shape (..., 2**m), 2 <= m <= 16
        The same requests' tables under the two evaluators.
    target : {"size", "shapley"}
        What each k's size-resolved credit is compared with (see above).
    atol, threads, backend
        As in :func:`alignment`: centred credits within ``atol`` of 0 are
        zero and within ``atol`` of each other tied (the tables are sums of
        prices, whose exact ties can round apart).

    Returns
    -------
    SizeAgreement
        One :class:`Alignment` per k and their summaries.

    Raises
    ------
    ValueError
        If ``train`` or ``audit`` has no last axis of length 2**m with
        2 <= m <= 16, the two differ in shape, ``target`` is not "size" or
        "shapley", ``atol`` is negative or not finite, ``threads < 1``, or
        ``backend`` is not None, "c" or "numba" or is not available.
    TypeError
        If ``train`` or ``audit`` is not a real array, ``atol`` not a real
        number or ``threads`` not an integer.

    Examples
    --------
    >>> import fastcredit as fc
    >>> s = fc.size_agreement([[0., 2., 1., 3.]], [[0., 2., 1., 3.]])
    >>> s.median_cosine.round(12).tolist()
    [1.0, 1.0]
    """
    t, a, m = _pair(train, audit)
    atol = ATOL.check(atol)
    if target not in _TARGETS:
        raise ValueError(f"target must be one of {_TARGETS}, got {target!r}")
    st = size_resolved(t, threads=threads, backend=backend)
    if target == "size":
        sa = size_resolved(a, threads=threads, backend=backend)
        goal = [np.ascontiguousarray(sa[:, :, k]) for k in range(m)]
    else:
        goal = [shapley(a, threads=threads, backend=backend)] * m
    per = tuple(alignment(np.ascontiguousarray(st[:, :, k]), goal[k], atol=atol,
                          threads=threads, backend=backend) for k in range(m))
    return SizeAgreement(target, per, *(np.array([getattr(al, f) for al in per])
                                        for f in ("median_cosine", "mean_sign_nonzero",
                                                  "median_spearman", "top_rate")))


# --- Tables 2 and 6: credit rules against the audit Shapley ---------------------------

@dataclasses.dataclass(frozen=True)
class RuleAgreement:
    """Credit rules under the training evaluator against the audit
    evaluator's Shapley credit.

    Attributes
    ----------
    rules : tuple of str
        The rules compared, in the order given.
    alignment : dict
        rule -> :class:`Alignment` of its credit with the reference.
    versus_shapley : dict
        rule -> :class:`BootstrapCI` of median cosine (Shapley) minus median
        cosine (rule), request-level paired bootstrap; absent for Shapley.

    Examples
    --------
    >>> import fastcredit as fc
    >>> train = [[0., 2., 1., 3.], [0., 1., 2., 4.], [0., 1., 3., 3.]]
    >>> audit = [[0., 2., 1., 3.], [0., 3., 1., 3.], [0., 1., 2., 2.]]
    >>> r = fc.rule_agreement(train, audit, rules=("singleton", "shapley"), resamples=100)
    >>> r.rules, r.alignment["singleton"].cosine, r.versus_shapley["singleton"].estimate
    (('singleton', 'shapley'), array([ 1., -1.,  1.]), 0.0)
    """
    rules: tuple
    alignment: dict
    versus_shapley: dict


def rule_agreement(train, audit, *, rules=tuple(STUDY_RULES), resamples=10_000, level=0.95,
                   seed=0, atol=1e-9, threads=None, backend=None) -> RuleAgreement:
    r"""Each credit rule computed under the training evaluator, scored
    against the Shapley credit of the audit evaluator (the paper's Tables 2
    and 6).

    Per rule: the per-request centred cosine, sign agreement (all components
    and the nonzero ones), Spearman and top-action agreement with the
    reference (:func:`alignment`), and the request-level paired bootstrap
    (:func:`paired_bootstrap`) of median cosine of Shapley (CASI) minus that
    of the rule, over the requests where the reference varies.

    Parameters
    ----------
    train, audit : array_like, shape (..., 2**m), 2 <= m <= 16
        The same requests' tables under the two evaluators.
    rules : sequence of str
        From :data:`STUDY_RULES` ("singleton", "leave_one_out", "banzhaf",
        "shapley"); Shapley is always computed (it is what the others are
        compared with).
    resamples, level, seed, threads, backend
        As in :func:`paired_bootstrap`.
    atol : float
        As in :func:`alignment` (see :func:`size_agreement`).

    Returns
    -------
    RuleAgreement
        Each rule's alignment and its bootstrap gap to Shapley.

    Raises
    ------
    ValueError
        If ``train`` or ``audit`` has no last axis of length 2**m with
        2 <= m <= 16, the two differ in shape, ``rules`` is empty, repeats a
        rule or names one not in :data:`STUDY_RULES`, fewer than 2 requests
        have an audit Shapley credit that varies (when a rule other than
        Shapley is compared), ``atol`` is negative or not finite, or
        ``resamples``, ``level``, ``seed``, ``threads`` or ``backend`` is
        out of range as in :func:`paired_bootstrap`.
    TypeError
        If ``train`` or ``audit`` is not a real array, ``rules`` is a single
        string or not a sequence, or a scalar argument has the wrong type.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.random.default_rng(0).random((50, 8))
    >>> r = fc.rule_agreement(v, v, resamples=200)
    >>> r.alignment["shapley"].median_cosine
    1.0
    """
    t, a, _ = _pair(train, audit)
    atol = ATOL.check(atol)
    rules = tuple(as_sequence(rules, "rules", "rule names"))
    if (not rules or len(set(map(repr, rules))) != len(rules)
            or not all(isinstance(r, str) and r in STUDY_RULES for r in rules)):
        raise ValueError(f"rules must be distinct names from {tuple(STUDY_RULES)}, got "
                         f"{rules!r}")
    reference = shapley(a, threads=threads, backend=backend)
    names = tuple(rules) + (() if "shapley" in rules else ("shapley",))
    al = {r: alignment(STUDY_RULES[r](t, threads=threads, backend=backend), reference,
                       atol=atol, threads=threads, backend=backend) for r in names}
    casi = al["shapley"].cosine.reshape(-1)
    if np.count_nonzero(~np.isnan(casi)) < 2 and len(rules) > ("shapley" in rules):
        raise ValueError(f"audit: the bootstrap needs at least 2 requests whose audit Shapley "
                         f"credit varies by more than atol = {atol:g}, got "
                         f"{np.count_nonzero(~np.isnan(casi))}")
    vs = {r: paired_bootstrap(casi, al[r].cosine.reshape(-1), resamples=resamples, level=level,
                              seed=seed, threads=threads, backend=backend)
          for r in rules if r != "shapley"}
    return RuleAgreement(tuple(rules), {r: al[r] for r in rules}, vs)

