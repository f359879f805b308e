"""Credit audits and attribution statistics.

The statistics the credit-assignment papers judge credit rules with, fast
enough to rerun over thousands of requests and trajectories with 10,000
bootstrap resamples and shuffle controls:

* set-credit alignment (:func:`alignment`, :func:`alignment_controls`,
  :func:`paired_bootstrap`, :func:`evaluator_fidelity`): per request, a
  credit vector (m,) against a reference credit vector, both centred within
  the request;
* step-level audit against execution replay (:func:`replay_advantage`,
  :func:`spearman_audit`, :func:`audit_controls`, :func:`shuffle_within`,
  :func:`derangement`, :func:`holm`): trajectories are CSR, ``offsets``
  (n_traj + 1,) int64 over flat per-step arrays;
* causal agent replay (:func:`contrastive_effects`): the effect of
  resampling from step k onward, its confidence interval and the commitment
  point.

Seeded statistics draw from the counter-based RNG shared by both backends
(resample r, or group g, has its own stream), so a seed gives the same
numbers on ``backend="c"`` and ``"numba"`` and for any ``threads``.

NaN handling: a NaN score marks an undefined statistic (the cosine of a
request whose reference is constant, the Spearman of an excluded
trajectory); bootstraps and medians leave such items out and report how many
they used. A trajectory with a non-finite credit or A_replay is excluded from
the Spearman audit and counted (``n_nonfinite``), never silently scored.
Replay advantages and contrastive effects propagate NaN outcomes like NumPy.

Common keyword arguments: ``threads`` (default all cores), ``backend``
(None, "c" or "numba"; None picks the faster one, see fastcredit._backend),
``seed`` (integer in [0, 2**64)).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import ndtri

from . import _parallel
from ._backend import kernels, resolve
from ._validation import check_choice, check_float, check_int, csr_offsets, output, real_array
from ._validation import seed as check_seed
from .tables import pair_interactions, size_resolved

__all__ = ["Alignment", "BootstrapCI", "ContrastiveEffects", "Fidelity", "HolmResult",
           "ReplayAdvantage", "SpearmanAudit", "alignment", "alignment_controls", "audit_controls",
           "bootstrap_median", "contrastive_effects", "derangement", "evaluator_fidelity",
           "holm", "newcombe_interval", "paired_bootstrap", "replay_advantage",
           "shuffle_within", "spearman_audit", "wilson_interval", "within_spearman"]

_RNG_MAX_RANGE = 1 << 32   # fc_rng_below draws integers below n <= 2**32
_BOOTSTRAP_MAX_ITEMS = 1 << 31   # fc_bootstrap_median tallies draws in int32
_STATUS = ("valid", "short", "constant", "nonfinite")   # fc_spearman_groups status codes


# --- shared validation -------------------------------------------------------

def _open_unit(value, name: str) -> float:
    """A probability strictly between 0 and 1 (a level or an alpha)."""
    value = check_float(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return value


def _level(level) -> float:
    return _open_unit(level, "level")


def _float64(x, name: str) -> np.ndarray:
    return real_array(x, name).astype(np.float64, copy=False)


def _real(x, name: str) -> np.ndarray:
    """A real float64 array of any shape, scalars kept 0-d."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
    return arr.astype(np.float64)


def _flat(x, name: str) -> np.ndarray:
    arr = _float64(x, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _ragged(values, offsets, name: str, row_name: str):
    """Per-row data as (flat float64 values, int64 offsets): ``values`` 2-D
    (n_rows, k) when ``offsets`` is None, else flat with CSR ``offsets``."""
    arr = _float64(values, name)
    if offsets is None:
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_{row_name}s, k) when no offsets are "
                             f"given, got shape {arr.shape}")
        k = arr.shape[1]
        return arr.reshape(-1), np.arange(arr.shape[0] + 1, dtype=np.int64) * k
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional with offsets, got shape {arr.shape}")
    return arr, _offsets(offsets, arr.shape[0], f"{name}_offsets", row_name)


def _offsets(offsets, n_values: int, name: str, row_name: str) -> np.ndarray:
    """CSR offsets of at least one row over n_values values."""
    off = np.asarray(offsets)
    if off.ndim != 1 or off.shape[0] < 2:
        raise ValueError(f"{name} must be one-dimensional with at least 2 entries (one "
                         f"{row_name}), got shape {off.shape}")
    return csr_offsets(off, off.shape[0] - 1, n_values, name, row_name)


def _nonempty_rows(offsets, name: str, row_name: str) -> None:
    empty = np.flatnonzero(np.diff(offsets) == 0)
    if empty.size:
        raise ValueError(f"{name}: {row_name} {int(empty[0])} has no values (each needs >= 1)")


def _max_row(offsets, name: str, row_name: str) -> None:
    long = np.flatnonzero(np.diff(offsets) > _RNG_MAX_RANGE)
    if long.size:
        raise ValueError(f"{name}: {row_name} {int(long[0])} has more than 2**32 values")


def _trajectories(credit, a_replay, offsets):
    x = _flat(credit, "credit")
    y = _flat(a_replay, "a_replay")
    if x.shape != y.shape:
        raise ValueError(f"credit and a_replay must have the same length, got {x.shape[0]} "
                         f"and {y.shape[0]}")
    return x, y, _offsets(offsets, x.shape[0], "offsets", "trajectory")


# --- bootstrap of medians ----------------------------------------------------

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
    n : int
        Items the statistic used (NaN items left out).
    replicates : ndarray (resamples,)
        The bootstrap replicates, replicate r from the RNG stream (seed, r).
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
        (feed a family of them to :func:`holm`)."""
        null = check_float(null, "null")
        below = np.count_nonzero(self.replicates <= null)
        above = np.count_nonzero(self.replicates >= null)
        return min(1.0, 2.0 * min(below, above) / self.replicates.shape[0])


def _sorted(x):
    order = np.argsort(x, kind="stable")
    return np.ascontiguousarray(x[order]), order.astype(np.int64)


def _bootstrap(a, b, resamples, level, seed, threads, backend) -> BootstrapCI:
    """Percentile bootstrap of median(a) (b None) or median(a) - median(b)."""
    resamples = check_int(resamples, "resamples", lo=1)
    level = _level(level)
    seed = np.uint64(check_seed(seed))
    keep = ~np.isnan(a) if b is None else ~(np.isnan(a) | np.isnan(b))
    a = a[keep]
    n = a.shape[0]
    if n < 2:
        raise ValueError(f"the bootstrap needs at least 2 items that are not NaN, got {n}")
    if n >= _BOOTSTRAP_MAX_ITEMS:
        raise ValueError(f"the bootstrap takes fewer than 2**31 items, got {n}")
    sorted_a, order_a = _sorted(a)
    estimate = float(np.median(a))
    if b is None:
        sorted_b, order_b = np.empty(0), np.empty(0, dtype=np.int64)
    else:
        b = b[keep]
        sorted_b, order_b = _sorted(b)
        estimate -= float(np.median(b))
    impl = kernels("audit", resolve("audit.bootstrap_median", backend))
    reps = np.empty(resamples)

    def part(start, stop):
        counts = np.empty(n, dtype=np.int32)
        impl.bootstrap_median(sorted_a, order_a, sorted_b, order_b, seed, start, stop, counts,
                              reps[start:stop])

    _parallel.run(part, resamples, _parallel.n_threads(threads), min_items=64)
    low, high = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    return BootstrapCI(estimate, float(low), float(high), level, n, reps)


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

    Returns
    -------
    BootstrapCI

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> ci = fc.bootstrap_median(np.arange(101.0), resamples=2000, seed=1)
    >>> ci.estimate, ci.low < 50 < ci.high
    (50.0, True)
    """
    return _bootstrap(_flat(x, "x"), None, resamples, level, seed, threads, backend)


def paired_bootstrap(a, b, *, resamples=10_000, level=0.95, seed=0, threads=None,
                     backend=None) -> BootstrapCI:
    r"""Request-level paired bootstrap of a difference of medians.

    .. math:: \Delta = \operatorname{median}_r a_r - \operatorname{median}_r b_r

    Each replicate resamples whole requests (the pair (a_r, b_r) together),
    so the interval accounts for the two rules being scored on the same
    requests. Typical use: ``a``, ``b`` the per-request cosines of two credit
    rules against the same reference (:func:`alignment`).

    Parameters
    ----------
    a, b : array_like, shape (n,)
        Paired scores. Pairs where either is NaN are left out; at least 2
        must remain.
    resamples, level, seed, threads, backend
        As in :func:`bootstrap_median`.

    Returns
    -------
    BootstrapCI of median(a) - median(b).

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
    a = _flat(a, "a")
    b = _flat(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"a and b must be paired (same length), got {a.shape[0]} and "
                         f"{b.shape[0]}")
    return _bootstrap(a, b, resamples, level, seed, threads, backend)


# --- set-credit alignment ----------------------------------------------------

def _group_spearman(x, y, offsets, min_len, threads, backend):
    """Per-group Spearman rho and status codes (see fc_spearman_groups)."""
    n_groups = offsets.shape[0] - 1
    rho = np.empty(n_groups)
    status = np.empty(n_groups, dtype=np.int8)
    longest = int(np.diff(offsets).max(initial=0))
    impl = kernels("audit", resolve("audit.spearman", backend))

    def part(a, b):
        idx = np.empty(max(longest, 1), dtype=np.int64)
        ranks = np.empty(max(3 * longest, 1))
        impl.spearman_groups(offsets[a:b + 1], x, y, min_len, idx, ranks, rho[a:b],
                             status[a:b])

    _parallel.run(part, n_groups, _parallel.n_threads(threads), min_items=256)
    return rho, status


@dataclasses.dataclass(frozen=True)
class Alignment:
    """Per-request agreement of credit vectors with a reference.

    Per-request arrays have the leading shape of the input; NaN marks a
    request where the statistic is undefined (constant reference).

    Attributes
    ----------
    cosine : ndarray
        Cosine of the centred vectors (0 when the credit is constant).
    sign : ndarray
        Fraction of the m components whose centred signs agree.
    sign_nonzero : ndarray
        The same over the components where the centred reference is nonzero.
    spearman : ndarray
        Spearman correlation (average ranks for ties; 0 when the credit is
        constant).
    top : ndarray of bool
        Whether the top action (first argmax) is the same.
    median_cosine, mean_sign, mean_sign_nonzero, median_spearman, top_rate : float
        Summaries over the requests where each is defined.
    n_defined : int
        Requests with a non-constant reference.
    """
    cosine: np.ndarray
    sign: np.ndarray
    sign_nonzero: np.ndarray
    spearman: np.ndarray
    top: np.ndarray
    median_cosine: float
    mean_sign: float
    mean_sign_nonzero: float
    median_spearman: float
    top_rate: float
    n_defined: int


def _summary(fn, x) -> float:
    x = x[~np.isnan(x)]
    return float(fn(x)) if x.size else float("nan")


def alignment(credit, reference, *, center=True, threads=None, backend=None) -> Alignment:
    r"""How well credit vectors agree with reference credit, request by request.

    With :math:`c, r` the credit and reference vectors of a request, each
    centred within the request (:math:`c - \bar c`) when ``center``:

    * cosine :math:`c \cdot r / (\lVert c \rVert \lVert r \rVert)`
      (the Pearson correlation when centred);
    * sign agreement :math:`\frac1m \sum_i [\operatorname{sign} c_i = \operatorname{sign} r_i]`,
      and the same over the components with :math:`r_i \ne 0` only;
    * Spearman correlation of c and r;
    * top-action agreement :math:`\arg\max c = \arg\max r`.

    A request whose (centred) reference is constant has no direction to agree
    with: its cosine, Spearman and nonzero-sign agreement are NaN. A constant
    credit vector scores 0 on cosine and Spearman.

    Parameters
    ----------
    credit, reference : array_like, shape (..., m), m >= 2
        float64 or float32; the same shape.
    center : bool
        Centre each vector within its request first (default True).

    Returns
    -------
    Alignment

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> al = fc.alignment([[3., 1., 2.], [0., 0., 1.]], [[2., 0., 1.], [1., 0., 0.]])
    >>> al.cosine, al.top
    (array([ 1. , -0.5]), array([ True, False]))
    """
    c = _float64(credit, "credit")
    r = _float64(reference, "reference")
    if c.shape != r.shape:
        raise ValueError(f"credit and reference must have the same shape, got {c.shape} and "
                         f"{r.shape}")
    if c.ndim == 0 or c.shape[-1] < 2:
        raise ValueError(f"credit must have shape (..., m) with m >= 2, got {c.shape}")
    if not isinstance(center, (bool, np.bool_)):
        raise TypeError(f"center must be a bool, got {type(center).__name__}")
    lead, m = c.shape[:-1], c.shape[-1]
    c = c.reshape(-1, m)
    r = r.reshape(-1, m)
    if center:
        c = c - c.mean(axis=1, keepdims=True)
        r = r - r.mean(axis=1, keepdims=True)
    norm_c = np.sqrt(np.einsum("ij,ij->i", c, c))
    norm_r = np.sqrt(np.einsum("ij,ij->i", r, r))
    dot = np.einsum("ij,ij->i", c, r)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = np.where(norm_c == 0, 0.0, dot / (norm_c * norm_r))
    cosine[norm_r == 0] = np.nan
    same = np.sign(c) == np.sign(r)
    nonzero = r != 0
    sign = same.mean(axis=1)
    n_nonzero = nonzero.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sign_nonzero = (same & nonzero).sum(axis=1) / n_nonzero
    top = np.argmax(c, axis=1) == np.argmax(r, axis=1)
    offsets = np.arange(c.shape[0] + 1, dtype=np.int64) * m
    rho, _ = _group_spearman(np.ascontiguousarray(c).reshape(-1),
                             np.ascontiguousarray(r).reshape(-1), offsets, 2, threads, backend)
    return Alignment(cosine.reshape(lead), sign.reshape(lead), sign_nonzero.reshape(lead),
                     rho.reshape(lead), top.reshape(lead),
                     median_cosine=_summary(np.median, cosine),
                     mean_sign=_summary(np.mean, sign),
                     mean_sign_nonzero=_summary(np.mean, sign_nonzero),
                     median_spearman=_summary(np.median, rho),
                     top_rate=_summary(np.mean, top.astype(np.float64)),
                     n_defined=int(np.count_nonzero(norm_r)))


@dataclasses.dataclass(frozen=True)
class Fidelity:
    """Agreement of an evaluator's coalition tables with reference tables.

    Attributes
    ----------
    pair_sign : float
        Fraction of pairs i < j (over all requests) whose pair interactions
        I_ij = v(ij) - v(i) - v(j) + v(0) have the same sign.
    pair_sign_nonzero : float
        The same over the pairs with a nonzero reference interaction.
    edge_sign : ndarray (m,)
        ``[k]``: over insertion edges (S, i), i not in S, |S| = k, where the
        reference marginal v(S+i) - v(S) is nonzero, the fraction whose
        marginals have the same sign (NaN when there is no such edge).
    edge_count : ndarray (m,) int64
        The number of such edges per k.
    size_resolved : tuple of Alignment, one per k = 0..m-1
        The size-resolved credit (the m-vector of mean marginals into
        coalitions of size k, :func:`fastcredit.size_resolved`) compared
        like credit vectors.
    """
    pair_sign: float
    pair_sign_nonzero: float
    edge_sign: np.ndarray
    edge_count: np.ndarray
    size_resolved: tuple


def _rate(hits, count) -> float:
    return float(hits / count) if count else float("nan")


def evaluator_fidelity(v, reference, *, threads=None, backend=None) -> Fidelity:
    r"""How faithfully one evaluator's coalition tables reproduce another's.

    For the same requests scored by two evaluators (e.g. auction replay with
    ``mode="filter"`` against ``mode="rerun"``), compares pair-interaction
    signs, insertion-edge signs :math:`\operatorname{sign}(v(S+i) - v(S))`
    stratified by :math:`|S|`, and the size-resolved credit per :math:`|S|`.

    Parameters
    ----------
    v, reference : array_like, shape (..., 2**m), 2 <= m <= 16
        Coalition tables of the same requests; ``reference`` is the trusted
        evaluator.

    Returns
    -------
    Fidelity

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.array([0., 1., 1., 3.])           # complements
    >>> fc.evaluator_fidelity(v, v).pair_sign
    1.0
    >>> fc.evaluator_fidelity(np.array([0., 1., 1., 1.]), v).pair_sign   # substitutes
    0.0
    """
    a = _float64(v, "v")
    ref = _float64(reference, "reference")
    if a.shape != ref.shape:
        raise ValueError(f"v and reference must have the same shape, got {a.shape} and "
                         f"{ref.shape}")
    n = a.shape[-1] if a.ndim else 0
    if n < 4 or n & (n - 1) or n > 1 << 16:
        raise ValueError(f"v must have a last axis of length 2**m with 2 <= m <= 16, got "
                         f"shape {a.shape}")
    m = n.bit_length() - 1
    a = a.reshape(-1, n)
    ref = ref.reshape(-1, n)
    iu = np.triu_indices(m, 1)
    pa = pair_interactions(a, threads=threads, backend=backend)[:, iu[0], iu[1]]
    pr = pair_interactions(ref, threads=threads, backend=backend)[:, iu[0], iu[1]]
    same = np.sign(pa) == np.sign(pr)
    masks = np.arange(n)
    sizes = np.bitwise_count(masks)
    hits = np.zeros(m, dtype=np.int64)
    count = np.zeros(m, dtype=np.int64)
    for i in range(m):
        s = masks[(masks >> i & 1) == 0]
        da = a[:, s | 1 << i] - a[:, s]
        dr = ref[:, s | 1 << i] - ref[:, s]
        edge = dr != 0
        k = np.broadcast_to(sizes[s], dr.shape)
        count += np.bincount(k[edge], minlength=m)
        hits += np.bincount(k[edge & (np.sign(da) == np.sign(dr))], minlength=m)
    with np.errstate(invalid="ignore", divide="ignore"):
        edge_sign = hits / count
    sa = size_resolved(a, threads=threads, backend=backend)
    sr = size_resolved(ref, threads=threads, backend=backend)
    per_size = tuple(alignment(np.ascontiguousarray(sa[:, :, k]),
                               np.ascontiguousarray(sr[:, :, k]), threads=threads,
                               backend=backend) for k in range(m))
    nz = pr != 0
    return Fidelity(_rate(np.count_nonzero(same), same.size),
                    _rate(np.count_nonzero(same & nz), np.count_nonzero(nz)),
                    edge_sign, count, per_size)


# --- step-level audit against execution replay -------------------------------

@dataclasses.dataclass(frozen=True)
class ReplayAdvantage:
    """Per-step replay advantages (see :func:`replay_advantage`).

    Attributes
    ----------
    advantage : ndarray (n_steps,)
        A_replay = mean(factual) - mean(alternative).
    noise_floor : ndarray (n_steps,)
        The sd (ddof = 1) of the factual replays; NaN with one replay.
    critical : ndarray of bool (n_steps,)
        ``|advantage| > threshold`` (A_replay != 0 by default).
    resolution : ndarray (n_steps,)
        Where both arms are all zero: 1 - alpha**(1/n), n the smaller arm,
        the smallest |dp| the zero advantage excludes; NaN elsewhere.
    """
    advantage: np.ndarray
    noise_floor: np.ndarray
    critical: np.ndarray
    resolution: np.ndarray


def replay_advantage(factual, alternative, *, factual_offsets=None, alternative_offsets=None,
                     alpha=0.05, threshold=0.0, backend=None) -> ReplayAdvantage:
    r"""Step-level advantages from execution replay.

    For step t with factual replays :math:`f_{t,1..n_f}` (the factual action
    replayed) and alternative rollouts :math:`a_{t,1..n_a}` (policy-sampled
    alternatives):

    .. math:: A_{replay}(t) = \bar f_t - \bar a_t, \qquad
              \text{noise}(t) = \operatorname{sd}(f_t)

    A step is critical when :math:`|A_{replay}(t)| > \text{threshold}`. An
    arm of n binary outcomes that are all 0 has the exact one-sided
    :math:`1 - \alpha` binomial (Clopper-Pearson) upper bound
    :math:`1 - \alpha^{1/n}` on its rate (0.632 for n = 3, alpha = 0.05): when
    both arms are all zero, ``resolution`` reports this bound for the
    smaller arm; a zero advantage there is only "no effect larger than this".

    Parameters
    ----------
    factual, alternative : array_like
        Outcomes per step: 2-D (n_steps, k) arrays, or flat arrays with CSR
        ``factual_offsets`` / ``alternative_offsets`` (n_steps + 1,). Every
        step needs at least one outcome in each arm. NaN propagates.
    alpha : float in (0, 1)
    threshold : float >= 0

    Returns
    -------
    ReplayAdvantage

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> ra = fc.replay_advantage([[1., 1., 1.], [0., 0., 0.]], [[0., 0., 1.], [0., 0., 0.]])
    >>> ra.advantage.round(3), ra.critical, ra.resolution.round(3)
    (array([0.667, 0.   ]), array([ True, False]), array([  nan, 0.632]))
    """
    f, f_off = _ragged(factual, factual_offsets, "factual", "step")
    a, a_off = _ragged(alternative, alternative_offsets, "alternative", "step")
    if f_off.shape != a_off.shape:
        raise ValueError(f"factual and alternative must cover the same steps, got "
                         f"{f_off.shape[0] - 1} and {a_off.shape[0] - 1}")
    _nonempty_rows(f_off, "factual", "step")
    _nonempty_rows(a_off, "alternative", "step")
    alpha = _open_unit(alpha, "alpha")
    threshold = check_float(threshold, "threshold", lo=0.0)
    n_steps = f_off.shape[0] - 1
    adv, noise, res = np.empty(n_steps), np.empty(n_steps), np.empty(n_steps)
    impl = kernels("audit", resolve("audit.replay_advantage", backend))
    impl.replay_advantage(f_off, f, a_off, a, alpha, adv, noise, res)
    return ReplayAdvantage(adv, noise, np.abs(adv) > threshold, res)


def within_spearman(credit, a_replay, offsets, *, min_steps=4, threads=None,
                    backend=None) -> np.ndarray:
    r"""Spearman correlation between credit and A_replay within each trajectory.

    Ranks are average ranks within the trajectory (ties share the mean
    rank); rho is the Pearson correlation of the ranks, as
    ``scipy.stats.spearmanr``. Trajectories with fewer than ``min_steps``
    steps, a constant A_replay or a non-finite value are degenerate: NaN. A
    constant credit signal (e.g. uniform credit) scores 0.

    Parameters
    ----------
    credit, a_replay : array_like, shape (n_steps_total,)
    offsets : array_like of int, shape (n_traj + 1,)
        CSR offsets of the trajectories.
    min_steps : int >= 2

    Returns
    -------
    ndarray (n_traj,)

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.within_spearman([1., 2., 3., 4., 5., 1., 1.], [1., 2., 4., 3., 9., 0., 1.], [0, 5, 7])
    array([0.9, nan])
    """
    x, y, off = _trajectories(credit, a_replay, offsets)
    min_steps = check_int(min_steps, "min_steps", lo=2)
    return _group_spearman(x, y, off, min_steps, threads, backend)[0]


@dataclasses.dataclass(frozen=True)
class SpearmanAudit:
    """A credit signal scored against A_replay (see :func:`spearman_audit`).

    Attributes
    ----------
    rho : ndarray (n_traj,)
        Within-trajectory Spearman; NaN for degenerate trajectories.
    status : ndarray of int8 (n_traj,)
        0 scored, 1 fewer than min_steps steps, 2 constant A_replay,
        3 a non-finite value.
    n_scored, n_short, n_constant, n_nonfinite : int
        Trajectory counts per status.
    median : BootstrapCI
        The median rho over the scored trajectories with its percentile
        bootstrap CI (trajectories resampled).
    """
    rho: np.ndarray
    status: np.ndarray
    n_scored: int
    n_short: int
    n_constant: int
    n_nonfinite: int
    median: BootstrapCI


def _audit(x, y, off, min_steps, resamples, level, seed, threads, backend) -> SpearmanAudit:
    rho, status = _group_spearman(x, y, off, min_steps, threads, backend)
    counts = np.bincount(status, minlength=len(_STATUS))
    return SpearmanAudit(rho, status, *map(int, counts),
                         median=_bootstrap(rho, None, resamples, level, seed, threads,
                                           backend))


def spearman_audit(credit, a_replay, offsets, *, min_steps=4, resamples=10_000, level=0.95,
                   seed=0, threads=None, backend=None) -> SpearmanAudit:
    r"""Score a credit signal by its within-trajectory Spearman against A_replay.

    Per trajectory, :math:`\rho_j` = Spearman(credit, A_replay) over its
    steps (see :func:`within_spearman`); degenerate trajectories (fewer than
    ``min_steps`` steps, constant A_replay, non-finite values) are excluded
    and counted. The signal's score is :math:`\operatorname{median}_j \rho_j`
    with a percentile bootstrap CI over trajectories.

    Parameters
    ----------
    credit, a_replay : array_like, shape (n_steps_total,)
    offsets : array_like of int, shape (n_traj + 1,)
    min_steps : int >= 2
    resamples, level, seed
        Of the bootstrap (:func:`bootstrap_median`). At least two
        trajectories must be scored.

    Returns
    -------
    SpearmanAudit

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> off = np.arange(0, 2001, 20)                  # 100 trajectories of 20 steps
    >>> a = rng.normal(size=2000)
    >>> audit = fc.spearman_audit(a + rng.normal(size=2000), a, off, seed=0)
    >>> audit.n_scored, 0.5 < audit.median.estimate < 0.9
    (100, True)
    """
    x, y, off = _trajectories(credit, a_replay, offsets)
    min_steps = check_int(min_steps, "min_steps", lo=2)
    return _audit(x, y, off, min_steps, resamples, level, seed, threads, backend)


def shuffle_within(values, offsets, *, seed=0, stream=0, out=None, threads=None,
                   backend=None) -> np.ndarray:
    r"""Shuffle values within each group, keeping every group's marginals.

    Group g is permuted uniformly (Fisher-Yates) with the RNG stream
    (seed, stream * n_groups + g): the same multiset of values stays in each
    trajectory, only its assignment to steps is destroyed. ``stream`` numbers
    independent shuffles of the same data.

    Parameters
    ----------
    values : array_like, shape (n,)
    offsets : array_like of int, shape (n_groups + 1,)
        CSR offsets; groups have at most 2**32 values.
    seed, stream : int
    out : ndarray (n,) float64, optional

    Returns
    -------
    ndarray (n,), float64

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> s = fc.shuffle_within(np.arange(6.), [0, 3, 6], seed=4)
    >>> np.sort(s[:3]), np.sort(s[3:])
    (array([0., 1., 2.]), array([3., 4., 5.]))
    """
    x = _flat(values, "values")
    off = _offsets(offsets, x.shape[0], "offsets", "group")
    _max_row(off, "values", "group")
    seed = np.uint64(check_seed(seed))
    n_groups = off.shape[0] - 1
    stream = check_int(stream, "stream", lo=0)
    first = stream * n_groups
    if first + n_groups > 2**64:
        raise ValueError("stream * n_groups must stay below 2**64")
    res = output(out, x.shape)
    if np.shares_memory(res, x):
        raise ValueError("out must not overlap values")
    impl = kernels("audit", resolve("audit.shuffle", backend))
    _parallel.run(lambda a, b: impl.shuffle_groups(off[a:b + 1], x, seed,
                                                   np.uint64(first + a), res),
                  n_groups, _parallel.n_threads(threads), min_items=1024)
    return res


def derangement(n, *, seed=0, backend=None) -> np.ndarray:
    r"""A uniformly random derangement of 0..n-1 (no fixed points).

    ``perm[i] != i`` for every i: giving item i the context (or credit) of
    item ``perm[i]`` pairs every item with another item's, a control that
    keeps the marginals of both sides.

    Parameters
    ----------
    n : int, 2 <= n <= 2**32

    Returns
    -------
    ndarray (n,) int64

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> p = fc.derangement(5, seed=3)
    >>> bool(np.all(p != np.arange(5))), sorted(p.tolist())
    (True, [0, 1, 2, 3, 4])
    """
    n = check_int(n, "n", lo=2, hi=_RNG_MAX_RANGE)
    out = np.empty(n, dtype=np.int64)
    kernels("audit", resolve("audit.derangement", backend)).derangement(
        n, np.uint64(check_seed(seed)), out)
    return out


_CONTROLS = ("shuffle", "random", "uniform", "derangement")

def _control_signals(x, off, controls, seed, threads, backend) -> dict:
    """The credit ``x`` (CSR ``off``) and the named controls of it, each
    drawing its randomness from ``seed``."""
    if isinstance(controls, str):
        raise TypeError("controls must be a sequence of names, not a string")
    controls = [check_choice(c, "controls", _CONTROLS) for c in controls]
    seed = check_seed(seed)
    signals = {"signal": x}
    for name in controls:
        if name == "shuffle":
            signals[name] = shuffle_within(x, off, seed=seed, threads=threads, backend=backend)
        elif name == "random":
            signals[name] = np.random.default_rng(seed).random(x.shape[0])
        elif name == "uniform":
            signals[name] = np.zeros_like(x)
        else:
            lengths = np.diff(off)
            if lengths.size < 2 or np.any(lengths != lengths[0]):
                raise ValueError("controls: 'derangement' needs at least 2 groups, all of "
                                 "the same length")
            perm = derangement(lengths.size, seed=seed, backend=backend)
            signals[name] = x.reshape(lengths.size, -1)[perm].reshape(-1)
    return signals


def audit_controls(credit, a_replay, offsets, *, controls=_CONTROLS[:3], min_steps=4,
                   resamples=10_000, level=0.95, seed=0, threads=None,
                   backend=None) -> dict:
    r"""A credit signal and its controls through the same Spearman audit.

    Returns ``{"signal": SpearmanAudit, control: SpearmanAudit, ...}`` where
    the controls replace the credit by:

    * ``"shuffle"``: the credit shuffled within each trajectory
      (:func:`shuffle_within`, marginals kept exactly);
    * ``"random"``: i.i.d. uniform [0, 1) credit;
    * ``"uniform"``: the same credit for every step (scores 0 by definition);
    * ``"derangement"``: trajectory g gets the credit of trajectory
      ``perm[g]``, ``perm`` = :func:`derangement` (needs trajectories of one
      length).

    Every audit uses the same trajectories (exclusion depends on A_replay
    only), the same ``seed`` for its bootstrap, and the controls draw their
    credit from ``seed`` too, so the comparison is paired.

    Parameters
    ----------
    credit, a_replay, offsets, min_steps, resamples, level, seed
        As in :func:`spearman_audit`.
    controls : sequence of {"shuffle", "random", "uniform", "derangement"}

    Returns
    -------
    dict of str -> SpearmanAudit

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> off = np.arange(0, 2001, 20)
    >>> a = rng.normal(size=2000)
    >>> res = fc.audit_controls(a + rng.normal(size=2000), a, off, resamples=1000)
    >>> res["signal"].median.low > res["shuffle"].median.high, res["uniform"].median.estimate
    (True, 0.0)
    >>> diff = fc.paired_bootstrap(res["signal"].rho, res["shuffle"].rho, resamples=1000)
    >>> fc.holm([diff.pvalue(), 0.2]).reject
    array([ True, False])
    """
    x, y, off = _trajectories(credit, a_replay, offsets)
    min_steps = check_int(min_steps, "min_steps", lo=2)
    signals = _control_signals(x, off, controls, seed, threads, backend)
    return {name: _audit(s, y, off, min_steps, resamples, level, seed, threads, backend)
            for name, s in signals.items()}


def alignment_controls(credit, reference, *, controls=_CONTROLS, seed=0, center=True,
                       threads=None, backend=None) -> dict:
    r"""Set credit and its controls scored by the same :func:`alignment`.

    Returns ``{"signal": Alignment, control: Alignment, ...}`` with the
    controls of :func:`audit_controls` applied to requests instead of
    trajectories: ``"shuffle"`` permutes the m credits within each request,
    ``"derangement"`` gives request r the credit vector of request
    ``perm[r]`` (no request keeps its own), ``"random"`` and ``"uniform"``
    replace it.

    The per-request cosines are paired across the entries: compare a rule
    with a control by :func:`paired_bootstrap` of their ``cosine`` arrays.

    Parameters
    ----------
    credit, reference : array_like, shape (n_requests, m)
    controls : sequence of {"shuffle", "random", "uniform", "derangement"}
    seed, center, threads, backend
        As in :func:`alignment`; ``seed`` drives the controls.

    Returns
    -------
    dict of str -> Alignment

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> ref = rng.normal(size=(300, 5))
    >>> res = fc.alignment_controls(ref + 0.5 * rng.normal(size=ref.shape), ref)
    >>> res["signal"].median_cosine > 0.8, abs(res["derangement"].median_cosine) < 0.2
    (True, True)
    """
    c = _float64(credit, "credit")
    if c.ndim != 2 or c.shape[1] < 2:
        raise ValueError(f"credit must have shape (n_requests, m) with m >= 2, got {c.shape}")
    off = np.arange(c.shape[0] + 1, dtype=np.int64) * c.shape[1]
    signals = _control_signals(c.reshape(-1), off, controls, seed, threads, backend)
    return {name: alignment(s.reshape(c.shape), reference, center=center, threads=threads,
                            backend=backend) for name, s in signals.items()}


@dataclasses.dataclass(frozen=True)
class HolmResult:
    """Holm step-down adjusted p-values and rejections at ``alpha``."""
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
    pvalues : array_like, shape (k,), values in [0, 1], k >= 1
    alpha : float in (0, 1)

    Returns
    -------
    HolmResult with ``adjusted`` (k,) and ``reject`` (k,) bool, in input order.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.holm([0.01, 0.04, 0.03, 0.005]).adjusted
    array([0.03, 0.06, 0.06, 0.02])
    """
    p = _flat(pvalues, "pvalues")
    if p.shape[0] < 1:
        raise ValueError("pvalues must hold at least one p-value")
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError("pvalues must lie in [0, 1] (NaN is not a p-value)")
    alpha = _open_unit(alpha, "alpha")
    k = p.shape[0]
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((k - np.arange(k)) * p[order]))
    adjusted = np.empty(k)
    adjusted[order] = stepped
    return HolmResult(adjusted, adjusted <= alpha, alpha)


# --- causal agent replay -----------------------------------------------------

def wilson_interval(successes, n, *, level=0.95):
    r"""Wilson score interval for a binomial proportion.

    .. math:: \frac{\hat p + \frac{z^2}{2n} \pm z \sqrt{\frac{\hat p(1-\hat p)}{n}
              + \frac{z^2}{4n^2}}}{1 + z^2/n}, \qquad z = \Phi^{-1}\big(\tfrac{1+\text{level}}2\big)

    Parameters
    ----------
    successes, n : array_like
        Counts (broadcast together), 0 <= successes <= n, n >= 1.

    Returns
    -------
    (low, high) : ndarrays

    Examples
    --------
    >>> import fastcredit as fc
    >>> [round(float(b), 4) for b in fc.wilson_interval(0, 10)]
    [0.0, 0.2775]
    """
    k, n = _binomial_counts(successes, n, "")
    return _wilson(k, n, _level(level))


def _binomial_counts(successes, n, suffix: str):
    k, n = _real(successes, "successes" + suffix), _real(n, "n" + suffix)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"needs n{suffix} >= 1 and 0 <= successes{suffix} <= n{suffix}")
    return k, n


def _wilson(k, n, level):
    z = ndtri((1 + level) / 2)
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # exactly 0 and 1 at the ends (rounding would leave 1 - 2**-53 there, and a
    # step with every outcome bad would look significantly below 1)
    return (np.where(k == 0, 0.0, np.clip(center - half, 0.0, 1.0)),
            np.where(k == n, 1.0, np.clip(center + half, 0.0, 1.0)))


def newcombe_interval(successes1, n1, successes2, n2, *, level=0.95):
    r"""Newcombe's hybrid score interval for a difference of proportions p1 - p2.

    Newcombe (1998), Statistics in Medicine 17:873, method 10: with Wilson
    intervals (l_i, u_i) of each proportion,

    .. math:: \big[\hat d - \sqrt{(\hat p_1 - l_1)^2 + (u_2 - \hat p_2)^2},\;
              \hat d + \sqrt{(u_1 - \hat p_1)^2 + (\hat p_2 - l_2)^2}\big]

    Returns
    -------
    (low, high) : ndarrays

    Examples
    --------
    >>> import fastcredit as fc
    >>> [round(float(b), 4) for b in fc.newcombe_interval(56, 70, 48, 80)]
    [0.0524, 0.3339]
    """
    k1, n1 = _binomial_counts(successes1, n1, "1")
    k2, n2 = _binomial_counts(successes2, n2, "2")
    return _newcombe(k1, n1, k2, n2, _level(level))


def _newcombe(k1, n1, k2, n2, level):
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = _wilson(k1, n1, level)
    l2, u2 = _wilson(k2, n2, level)
    d = p1 - p2
    return (d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


@dataclasses.dataclass(frozen=True)
class ContrastiveEffects:
    """Contrastive resampling effects per step (see :func:`contrastive_effects`).

    Attributes
    ----------
    effect, low, high : ndarray (n_steps,)
        P(bad | resample from k) - P(bad | observed) and its CI.
    kind : str
        "binary" (Wilson / Newcombe intervals) or "continuous" (bootstrap).
    level : float
    commitment_point : int or None
        The last step whose effect is significantly negative (high < 0):
        resampling there still rescues the run, after it the outcome is
        committed. None when no step is.
    """
    effect: np.ndarray
    low: np.ndarray
    high: np.ndarray
    kind: str
    level: float
    commitment_point: int | None


def contrastive_effects(resampled, observed, *, offsets=None, kind="auto", level=0.95,
                        resamples=10_000, seed=0, threads=None,
                        backend=None) -> ContrastiveEffects:
    r"""Contrastive effects of resampling each step, and the commitment point.

    For step k, the run is held factual on steps [0, k) and resampled by the
    policy from k onward K_k times; with outcomes y (1 = bad),

    .. math:: e_k = \overline{y}_{\text{resample at } k} - \overline{y}_{\text{observed}}

    A negative effect means resampling at k rescues the run. The commitment
    point is the last k whose CI lies entirely below 0.

    Intervals: ``kind="binary"`` (0/1 outcomes) uses the Wilson interval of
    the resampled rate, shifted by the observed value when ``observed`` is a
    scalar (a known outcome), and Newcombe's hybrid score interval when
    ``observed`` holds replayed outcomes. ``kind="continuous"`` uses a
    percentile bootstrap of the difference of means, both arms resampled
    (step k draws from the RNG stream (seed, k)). ``"auto"`` picks binary
    when every outcome is 0 or 1.

    Parameters
    ----------
    resampled : array_like
        Outcomes per step: (n_steps, K) or flat with CSR ``offsets``
        (n_steps + 1,); every step needs at least one outcome.
    observed : float or array_like (n_obs,)
        The observed outcome, or outcomes of replays of the observed run.
    kind : {"auto", "binary", "continuous"}
    level : float in (0, 1)
    resamples, seed : int
        Of the bootstrap (continuous outcomes only).

    Returns
    -------
    ContrastiveEffects

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> y = np.array([[0] * 60 + [1] * 40, [0] * 50 + [1] * 50, [1] * 100])
    >>> ce = fc.contrastive_effects(y, 1.0)
    >>> ce.effect, ce.commitment_point
    (array([-0.6, -0.5,  0. ]), 1)
    """
    vals, off = _ragged(resampled, offsets, "resampled", "step")
    _nonempty_rows(off, "resampled", "step")
    _max_row(off, "resampled", "step")
    kind = check_choice(kind, "kind", ("auto", "binary", "continuous"))
    level = _level(level)
    obs = _real(observed, "observed")
    if obs.ndim > 1 or obs.size < 1:
        raise ValueError(f"observed must be a scalar or a non-empty 1-D array, got shape "
                         f"{obs.shape}")
    if obs.size > _RNG_MAX_RANGE:
        raise ValueError("observed holds more than 2**32 outcomes")
    binary_data = bool(np.all((vals == 0) | (vals == 1)) and np.all((obs == 0) | (obs == 1)))
    if kind == "auto":
        kind = "binary" if binary_data else "continuous"
    elif kind == "binary" and not binary_data:
        raise ValueError("kind='binary' needs outcomes that are all 0 or 1")
    n = np.diff(off).astype(np.float64)
    sums = np.add.reduceat(vals, off[:-1]) if vals.size else np.zeros(0)
    effect = sums / n - obs.mean()
    if kind == "binary":
        if obs.ndim == 0:
            low, high = _wilson(sums, n, level)
            low, high = low - float(obs), high - float(obs)
        else:
            low, high = _newcombe(sums, n, np.full_like(n, obs.sum()),
                                  np.full_like(n, obs.size), level)
    else:
        low, high = _bootstrap_effects(vals, off, obs, resamples, level, seed, threads,
                                       backend)
    significant = np.flatnonzero(high < 0)
    point = int(significant[-1]) if significant.size else None
    return ContrastiveEffects(effect, np.asarray(low, dtype=np.float64),
                              np.asarray(high, dtype=np.float64), kind, level, point)


def _bootstrap_effects(vals, off, obs, resamples, level, seed, threads, backend):
    resamples = check_int(resamples, "resamples", lo=1)
    seed = np.uint64(check_seed(seed))
    b = np.ascontiguousarray(obs.reshape(-1)) if obs.ndim else np.empty(0)
    n_steps = off.shape[0] - 1
    reps = np.empty((n_steps, resamples))
    impl = kernels("audit", resolve("audit.bootstrap_mean_diff", backend))
    _parallel.run(lambda a, c: impl.bootstrap_mean_diff(off[a:c + 1], vals, b, resamples,
                                                        seed, np.uint64(a), reps[a:c]),
                  n_steps, _parallel.n_threads(threads))
    if obs.ndim == 0:
        reps -= float(obs)
    low, high = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2], axis=1)
    return low, high
