r"""The step-level audit's protocol: a frozen, control-gated verdict order and
the figures that size and cost an audit.

* :func:`audit_verdicts`: H1 (the credit tracks :math:`A_{replay}`), H2 (it
  beats its own shuffle control), H3 (it beats a baseline rule), read in that
  order, each only when every earlier one holds;
* :func:`precision_lift`: precision of the steps a signal flags as critical,
  against the precision of a control's flags;
* :func:`effective_sample_size`, :func:`dose_match`: how many steps a credit
  rule effectively updates (Kish's effective sample size of its weights), and
  a rule truncated to match another's dose, so that two rules are compared at
  the same concentration;
* :func:`mde_ladder`, :func:`zero_arm_bound`: the smallest effect a study of
  n items can detect, and what an all-zero arm of n binary replays excludes;
* :func:`router_metrics`: recall and judge cost of a confidence router that
  sends its low-confidence steps to an (expensive) judge.

Trajectories are CSR, as in :func:`~fastcredit.audit.spearman_audit`:
``offsets`` (n_traj + 1,) int64 over flat per-step arrays.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .._params import JUDGE_COST, MIN_STEPS, SEED, STANDARD_DEVIATION
from .._validation import as_array, check_open_unit, float64_array, int_array, row_offsets
from ._data import float64_vector, trajectories
from .bootstrap import BootstrapCI, check_resamples, paired_bootstrap
from .controls import shuffle_within
from .intervals import wilson_interval
from .spearman import _score_trajectories, within_spearman

__all__ = ["AuditVerdicts", "DoseMatch", "MDELadder", "PrecisionLift", "RouterMetrics",
           "Verdict", "audit_verdicts", "dose_match", "effective_sample_size", "mde_ladder",
           "precision_lift", "router_metrics", "zero_arm_bound"]


def _z(p):
    from scipy.special import ndtri   # scipy on first use: importing fastcredit loads none
    return float(ndtri(p))


# --- the verdict order ------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Verdict:
    """One hypothesis of :func:`audit_verdicts`.

    Attributes
    ----------
    name : str
        "H1", "H2" or "H3".
    question : str
        What the hypothesis claims, in words.
    status : str
        "supported" (its interval lies above 0), "not supported", or
        "not read" (an earlier hypothesis is not supported: its interval was
        not computed).
    interval : BootstrapCI or None
        None when not read.

    Examples
    --------
    >>> import fastcredit as fc
    >>> credit = [1., 2., 3., 4., 4., 3., 2., 1., 1., 3., 2., 4.]
    >>> a_replay = [1., 2., 4., 3., 2., 1., 3., 4., 1., 2., 3., 4.]
    >>> v = fc.audit.audit_verdicts(credit, [0.] * 12, a_replay, [0, 4, 8, 12], resamples=100)
    >>> h1 = v.verdicts[0]
    >>> h1.name, h1.status, h1.interval.estimate, v.verdicts[1].interval
    ('H1', 'not supported', 0.8, None)
    """
    name: str
    question: str
    status: str
    interval: BootstrapCI | None


@dataclasses.dataclass(frozen=True)
class AuditVerdicts:
    """The verdicts of :func:`audit_verdicts`.

    Attributes
    ----------
    verdicts : tuple of Verdict
        H1, H2, H3 in order.
    reached : int
        Hypotheses supported before the first that is not (0 to 3).
    rho, control_rho, baseline_rho : ndarray (n_traj,)
        Within-trajectory Spearman of the credit, of its shuffle control and
        of the baseline rule with :math:`A_{replay}` (NaN: not scored).
    n_scored : int
        Trajectories scored.
    level : float
        The confidence level of every interval.

    Examples
    --------
    >>> import fastcredit as fc
    >>> credit = [1., 2., 3., 4., 4., 3., 2., 1., 1., 3., 2., 4.]
    >>> a_replay = [1., 2., 4., 3., 2., 1., 3., 4., 1., 2., 3., 4.]
    >>> v = fc.audit.audit_verdicts(credit, [0.] * 12, a_replay, [0, 4, 8, 12], resamples=100)
    >>> v.reached, v.n_scored, v.rho
    (0, 3, array([ 0.8, -0.8,  0.8]))
    """
    verdicts: tuple
    reached: int
    rho: np.ndarray = dataclasses.field(repr=False)
    control_rho: np.ndarray = dataclasses.field(repr=False)
    baseline_rho: np.ndarray = dataclasses.field(repr=False)
    n_scored: int
    level: float


_QUESTIONS = {"H1": "the credit tracks A_replay: median within-trajectory Spearman > 0",
              "H2": "it beats its shuffle control: median rho(credit) - median rho(shuffled) > 0",
              "H3": "it beats the baseline rule: median rho(credit) - median rho(baseline) > 0"}


def audit_verdicts(credit, baseline_credit, a_replay, offsets, *, min_steps=4,
                   resamples=10_000, level=0.95, seed=0, threads=None,
                   backend=None) -> AuditVerdicts:
    r"""The frozen, control-gated verdict order of a step-level credit audit.

    With :math:`\rho_j` the within-trajectory Spearman of the credit with
    :math:`A_{replay}` (:func:`~fastcredit.audit.within_spearman`),
    :math:`\rho^{sh}_j` that of the credit shuffled within its trajectory
    (:func:`~fastcredit.audit.shuffle_within`, stream 0 of ``seed``: the same
    values, their assignment to steps destroyed) and :math:`\rho^{b}_j` that
    of the baseline rule, over the trajectories the credit can be scored on:

    * **H1**, the credit tracks the replay:
      :math:`\theta_1 = \operatorname{median}_j \rho_j`, percentile-bootstrap
      interval over trajectories (:func:`~fastcredit.audit.spearman_audit`);
    * **H2**, it beats its control:
      :math:`\theta_2 = \operatorname{median}_j \rho_j - \operatorname{median}_j \rho^{sh}_j`,
      trajectory-level paired bootstrap
      (:func:`~fastcredit.audit.paired_bootstrap`);
    * **H3**, it beats the baseline:
      :math:`\theta_3 = \operatorname{median}_j \rho_j - \operatorname{median}_j \rho^{b}_j`,
      the same.

    The rule: :math:`H_k` is *supported* when the lower end of its interval
    is above 0 (an interval entirely below 0 is "not supported": the credit
    is anti-aligned, or worse than the control or baseline). :math:`H_k` is
    read only when :math:`H_1, \dots, H_{k-1}` are all supported; otherwise
    its interval is not computed and it is "not read". The order is fixed
    before the data are seen (frozen), and every interval is at ``level``:
    a fixed-sequence (gatekeeping) procedure, whose familywise error rate is
    at most 1 - level with no multiplicity correction, since a later
    hypothesis can only be rejected after all earlier ones are. Every
    bootstrap uses ``seed`` (common random numbers).

    Parameters
    ----------
    credit, baseline_credit, a_replay : array_like, shape (n_steps_total,)
        The audited credit, the baseline rule's credit (e.g. the return
        broadcast to every step, or a judge's scores) and the replay
        advantages.
    offsets : array_like of int, shape (n_traj + 1,)
        CSR offsets of the trajectories.
    min_steps : int >= 2
        Trajectories with fewer steps are not scored.
    resamples, level, seed, threads, backend
        As in :func:`~fastcredit.audit.spearman_audit`.

    Returns
    -------
    AuditVerdicts
        H1, H2, H3 with their status and intervals, and the per-trajectory
        correlations.

    Raises
    ------
    ValueError
        If ``credit``, ``baseline_credit`` or ``a_replay`` is not
        one-dimensional or they differ in length, ``offsets`` is not valid
        CSR over them, fewer than 2 trajectories can be scored, or
        ``min_steps``, ``resamples``, ``level``, ``seed``, ``threads`` or
        ``backend`` is out of range, as in
        :func:`~fastcredit.audit.spearman_audit`.
    TypeError
        If an array is not real (``offsets``: not integer) or a scalar
        argument has the wrong type, as in
        :func:`~fastcredit.audit.spearman_audit`.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> off = np.arange(0, 2001, 10)                 # 200 trajectories of 10 steps
    >>> a = rng.normal(size=2000)
    >>> v = fc.audit.audit_verdicts(a + rng.normal(size=2000), a + 3 * rng.normal(size=2000),
    ...                             a, off, resamples=2000)
    >>> [x.status for x in v.verdicts], v.reached
    (['supported', 'supported', 'supported'], 3)
    >>> v = fc.audit.audit_verdicts(rng.normal(size=2000), a, a, off, resamples=2000)
    >>> [x.status for x in v.verdicts]
    ['not supported', 'not read', 'not read']
    """
    x, y, off = trajectories(credit, a_replay, offsets)
    base = float64_vector(baseline_credit, "baseline_credit")
    if base.shape != x.shape:
        raise ValueError(f"baseline_credit must have the length of credit, {x.shape[0]}, got "
                         f"{base.shape[0]}")
    min_steps = MIN_STEPS.check(min_steps)
    resamples = check_resamples(resamples)
    level = check_open_unit(level, "level")
    seed = SEED.check(seed)
    signal = _score_trajectories(x, y, off, min_steps, resamples, level, seed, threads, backend)
    scored = ~np.isnan(signal.rho)

    def rho_of(values):
        # the signal's trajectories only: a control or baseline is compared
        # where the credit itself is scored
        return np.where(scored, within_spearman(values, y, off, min_steps=min_steps,
                                                threads=threads, backend=backend), np.nan)

    control = rho_of(shuffle_within(x, off, seed=seed, threads=threads, backend=backend))
    baseline = rho_of(base)
    intervals = {"H1": lambda: signal.median,
                 "H2": lambda: paired_bootstrap(signal.rho, control, resamples=resamples,
                                                level=level, seed=seed, threads=threads,
                                                backend=backend),
                 "H3": lambda: paired_bootstrap(signal.rho, baseline, resamples=resamples,
                                                level=level, seed=seed, threads=threads,
                                                backend=backend)}
    verdicts, reached, gate = [], 0, True
    for name, question in _QUESTIONS.items():
        if not gate:
            verdicts.append(Verdict(name, question, "not read", None))
            continue
        ci = intervals[name]()
        gate = bool(ci.low > 0)
        reached += gate
        verdicts.append(Verdict(name, question, "supported" if gate else "not supported", ci))
    return AuditVerdicts(tuple(verdicts), reached, signal.rho, control, baseline,
                         signal.n_scored, level)


# --- precision lift -----------------------------------------------------------------

def _flags(x, name, n=None):
    """A 1-D boolean array (bool or 0/1), of length n when given."""
    a = as_array(x, name)
    if a.ndim != 1 or a.dtype.kind not in "biu" or (a.dtype.kind != "b" and a.size
                                                      and not np.isin(a, (0, 1)).all()):
        raise ValueError(f"{name} must be a one-dimensional array of bool or 0/1, got "
                         f"{a.dtype} of shape {a.shape}")
    if n is not None and a.shape[0] != n:
        raise ValueError(f"{name} must have length {n} (one flag per step), got {a.shape[0]}")
    return a.astype(bool)


@dataclasses.dataclass(frozen=True)
class PrecisionLift:
    r"""Precision of flagged steps against a control's.

    Attributes
    ----------
    precision, control_precision : float
        :math:`|F \cap C| / |F|` (NaN when nothing is flagged).
    precision_low, precision_high, control_low, control_high : float
        Wilson intervals of the two precisions at ``level``.
    lift : float
        precision / control_precision (NaN when either is undefined, inf
        when only the control's is 0).
    difference : float
        precision - control_precision.
    flagged, control_flagged, hits, control_hits, critical : int
        ``|F|``, ``|F^c|``, ``|F & C|``, ``|F^c & C|`` and ``|C|``.
    level : float
        The level of the Wilson intervals.

    Examples
    --------
    >>> import fastcredit as fc
    >>> p = fc.audit.precision_lift([1, 1, 0, 0], [0, 1, 1, 0], [1, 0, 0, 0])
    >>> p.precision, p.control_precision, p.lift, p.hits, p.critical
    (0.5, 0.0, inf, 1, 1)
    """
    precision: float
    control_precision: float
    precision_low: float
    precision_high: float
    control_low: float
    control_high: float
    lift: float
    difference: float
    flagged: int
    control_flagged: int
    hits: int
    control_hits: int
    critical: int
    level: float


def precision_lift(flagged, control_flagged, critical, *, level=0.95) -> PrecisionLift:
    r"""Precision lift of a signal's flags over a control's.

    With F the steps the signal flags (e.g. its top step per trajectory),
    :math:`F^{c}` those the control flags (e.g. the same rule on the shuffled
    credit, or a random step per trajectory) and C the critical steps
    (:math:`A_{replay} \ne 0`):

    .. math:: \mathrm{prec} = \frac{|F \cap C|}{|F|}, \quad
              \mathrm{prec}^{c} = \frac{|F^{c} \cap C|}{|F^{c}|}, \quad
              \mathrm{lift} = \mathrm{prec} / \mathrm{prec}^{c},

    each precision with its Wilson interval
    (:func:`~fastcredit.audit.wilson_interval`). A lift of 1 is what a
    signal blind to the replay gets.

    Parameters
    ----------
    flagged, control_flagged, critical : array_like of bool or 0/1, shape (n_steps,)
        The signal's flags, the control's flags and the critical steps.
    level : float in (0, 1)
        Confidence level of the Wilson intervals.

    Returns
    -------
    PrecisionLift
        Both precisions, their intervals, the lift and the counts.

    Raises
    ------
    ValueError
        If ``flagged``, ``control_flagged`` or ``critical`` is not a
        one-dimensional array of bool or integer 0/1 (a float array is
        refused too), the three differ in length, or ``level`` is not in
        (0, 1).
    TypeError
        If ``level`` is not a real number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> crit = [1, 1, 0, 0, 0, 0, 1, 0]
    >>> p = fc.audit.precision_lift([1, 1, 1, 0, 0, 0, 0, 0], [1, 0, 1, 1, 0, 1, 0, 0], crit)
    >>> p.precision, p.control_precision, p.lift
    (0.6666666666666666, 0.25, 2.6666666666666665)
    """
    f = _flags(flagged, "flagged")
    fc_ = _flags(control_flagged, "control_flagged", f.shape[0])
    c = _flags(critical, "critical", f.shape[0])
    level = check_open_unit(level, "level")

    def prec(mask):
        n, k = int(mask.sum()), int((mask & c).sum())
        if n == 0:
            return k, n, float("nan"), float("nan"), float("nan")
        lo, hi = wilson_interval(k, n, level=level)
        return k, n, k / n, lo, hi

    hits, nf, p, plo, phi = prec(f)
    chits, nc, q, qlo, qhi = prec(fc_)
    with np.errstate(divide="ignore", invalid="ignore"):
        lift = float(np.float64(p) / np.float64(q))
    return PrecisionLift(p, q, plo, phi, qlo, qhi, lift, p - q, nf, nc, hits, chits,
                         int(c.sum()), level)


# --- dose matching ------------------------------------------------------------------

def _groups(x, offsets):
    return row_offsets(offsets, x.shape[0], "offsets", "trajectory")


def effective_sample_size(credit, offsets) -> np.ndarray:
    r"""Kish's effective sample size of each trajectory's credit weights: the
    number of steps a credit rule effectively updates (its dose),

    .. math:: \mathrm{ESS}_j = \frac{\left(\sum_{t \in j} |c_t|\right)^2}{\sum_{t \in j} c_t^2},

    between 1 (all weight on one step) and the trajectory's length (equal
    weights); NaN for a trajectory whose credit is all 0 (or empty), and
    NaN propagates.

    Parameters
    ----------
    credit : array_like, shape (n_steps_total,)
        Per-step credit, flat over the trajectories.
    offsets : array_like of int, shape (n_traj + 1,)
        CSR offsets of the trajectories.

    Returns
    -------
    ndarray (n_traj,)
        The effective sample size of each trajectory.

    Raises
    ------
    ValueError
        If ``credit`` is not one-dimensional or ``offsets`` is not valid CSR
        over it (one-dimensional, at least 2 entries, starting at 0,
        non-decreasing, ending at its length).
    TypeError
        If ``credit`` is not a real array or ``offsets`` not integer.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.audit.effective_sample_size([1., 1., 1., 1., 3., 0., 0., -1.], [0, 4, 8])
    array([4. , 1.6])
    """
    x = float64_vector(credit, "credit")
    off = _groups(x, offsets)
    return _ess(x, off)


def _ess(x, off):
    a = np.abs(x)
    s1 = np.add.reduceat(np.append(a, 0.0), off[:-1]) if off.shape[0] > 1 else np.zeros(0)
    s2 = np.add.reduceat(np.append(a * a, 0.0), off[:-1]) if off.shape[0] > 1 else np.zeros(0)
    # reduceat gives the element itself for an empty group: those are zeroed
    empty = off[1:] == off[:-1]
    s1[empty], s2[empty] = 0.0, 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(s2 > 0, s1 * s1 / np.where(s2 > 0, s2, 1.0), np.nan)


@dataclasses.dataclass(frozen=True)
class DoseMatch:
    """A credit rule truncated to another's dose (:func:`dose_match`).

    Attributes
    ----------
    credit : ndarray (n_steps_total,)
        The matched credit: each trajectory's ``kept`` largest ``|credit|``
        steps, the others 0.
    kept : ndarray (n_traj,) int64
        Steps kept per trajectory.
    ess, target : ndarray (n_traj,)
        The matched credit's effective sample size and the reference's.
    unmatched : int
        Trajectories whose whole credit stays below the target (kept whole)
        or where either is undefined (all 0: kept whole).

    Examples
    --------
    >>> import fastcredit as fc
    >>> d = fc.audit.dose_match([1., 2., 3., 4.], [0., 0., 5., 1.], [0, 4])
    >>> d.ess.round(3), d.unmatched
    (array([1.96]), 0)
    """
    credit: np.ndarray
    kept: np.ndarray
    ess: np.ndarray
    target: np.ndarray
    unmatched: int


def dose_match(credit, reference, offsets) -> DoseMatch:
    r"""Truncate a credit rule to the dose of a reference rule, trajectory by
    trajectory, so that two rules are compared at the same concentration.

    Per trajectory, with :math:`|c|_{(1)} \ge |c|_{(2)} \ge \dots` the
    credit's magnitudes in decreasing order (ties: the earlier step first)
    and :math:`\mathrm{ESS}(k)` the effective sample size
    (:func:`effective_sample_size`) of the k largest, keep the smallest k
    with :math:`\mathrm{ESS}(k) \ge \mathrm{ESS}(\text{reference})` and set
    the other steps to 0. :math:`\mathrm{ESS}(k)` never decreases in k
    (adding a weight no larger than the others raises it), so this k is the
    fewest steps that carry at least the reference's dose. A trajectory
    whose whole credit has less (or where either ESS is undefined) is kept
    whole and counted in ``unmatched``.

    Parameters
    ----------
    credit, reference : array_like, shape (n_steps_total,)
        Finite; the rule to truncate and the rule whose dose it matches.
    offsets : array_like of int, shape (n_traj + 1,)
        CSR offsets of the trajectories.

    Returns
    -------
    DoseMatch
        The truncated credit, the steps kept and both doses.

    Raises
    ------
    ValueError
        If ``credit`` or ``reference`` is not one-dimensional, the two
        differ in length, either holds a non-finite value, or ``offsets`` is
        not valid CSR over them.
    TypeError
        If ``credit`` or ``reference`` is not a real array or ``offsets``
        not integer.

    Examples
    --------
    >>> import fastcredit as fc
    >>> d = fc.audit.dose_match([1., 2., 3., 4.], [0., 0., 5., 1.], [0, 4])
    >>> d.credit, d.kept, d.target.round(3)
    (array([0., 0., 3., 4.]), array([2]), array([1.385]))
    """
    x = float64_vector(credit, "credit")
    r = float64_vector(reference, "reference")
    if r.shape != x.shape:
        raise ValueError(f"reference must have the length of credit, {x.shape[0]}, got "
                         f"{r.shape[0]}")
    for a, name in ((x, "credit"), (r, "reference")):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} must be finite")
    off = _groups(x, offsets)
    target = _ess(r, off)
    out = x.copy()
    kept = np.diff(off).astype(np.int64)
    unmatched = 0
    for j in range(off.shape[0] - 1):
        a, b = off[j], off[j + 1]
        w = np.abs(x[a:b])
        order = np.argsort(-w, kind="stable")
        s = w[order]
        ess = np.cumsum(s) ** 2 / np.where(np.cumsum(s * s) > 0, np.cumsum(s * s), np.nan)
        # rounding may leave ESS(k) of equal weights a hair below k: a target
        # reached within 1e-12 relative is reached
        ok = np.flatnonzero(ess >= target[j] * (1 - 1e-12))
        if not ok.size or target[j] != target[j]:
            unmatched += 1
            continue
        kept[j] = ok[0] + 1
        out[a + order[kept[j]:]] = 0.0
    return DoseMatch(out, kept, _ess(out, off), target, unmatched)


# --- the minimum-detectable-effect ladder ---------------------------------------------

@dataclasses.dataclass(frozen=True)
class MDELadder:
    """Minimum detectable effects by sample size (:func:`mde_ladder`).

    Attributes
    ----------
    sizes : ndarray (k,) int64
        The sample sizes n.
    mde : ndarray (k,)
        The minimum detectable effect at each size.
    sd, level, power : float
        The arguments the ladder was computed with.

    Examples
    --------
    >>> import fastcredit as fc
    >>> ladder = fc.audit.mde_ladder([25, 100], sd=1.0, level=0.95, power=0.8)
    >>> ladder.sizes, ladder.mde.round(3)
    (array([ 25, 100]), array([0.56, 0.28]))
    """
    sizes: np.ndarray
    mde: np.ndarray
    sd: float
    level: float
    power: float


def mde_ladder(sizes, *, sd=1.0, level=0.95, power=0.8) -> MDELadder:
    r"""The minimum-detectable-effect ladder: the smallest true effect a
    two-sided test at ``level`` detects with probability ``power`` from n
    independent items of standard deviation ``sd``,

    .. math:: \mathrm{MDE}(n) = \left(z_{(1 + \mathrm{level})/2} + z_{\mathrm{power}}\right)
              \frac{\mathrm{sd}}{\sqrt n},

    for each n of ``sizes`` (normal approximation; for a median use the sd
    of its bootstrap replicates times :math:`\sqrt n`, e.g. the per-
    trajectory Spearman's spread). Read down the ladder to size an audit:
    the number of trajectories (or replays) whose MDE is below the effect
    that matters.

    Parameters
    ----------
    sizes : array_like of int >= 1, shape (k,)
        The sample sizes n.
    sd : float >= 0
        Standard deviation of one item.
    level, power : float in (0, 1)
        Confidence level of the two-sided test and its power.

    Returns
    -------
    MDELadder
        The sizes and the MDE at each.

    Raises
    ------
    ValueError
        If ``sizes`` is not a non-empty one-dimensional array of integers
        >= 1 (or they do not fit in int64), ``sd`` is negative or not
        finite, or ``level`` or ``power`` is not in (0, 1).
    TypeError
        If ``sizes`` is not an integer array, or ``sd``, ``level`` or
        ``power`` not a real number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.audit.mde_ladder([100, 400], sd=0.5).mde.round(4)
    array([0.1401, 0.07  ])
    """
    n = int_array(sizes, "sizes")
    if n.ndim != 1 or not n.size or (n < 1).any():
        raise ValueError(f"sizes must be a non-empty one-dimensional array of integers >= 1, "
                         f"got shape {n.shape}")
    sd = STANDARD_DEVIATION.check(sd)
    level = check_open_unit(level, "level")
    power = check_open_unit(power, "power")
    factor = _z((1 + level) / 2) + _z(power)
    return MDELadder(n, factor * sd / np.sqrt(n.astype(np.float64)), sd, level, power)


def zero_arm_bound(replays, *, level=0.95) -> np.ndarray:
    r"""What an arm of n binary replays that all came out 0 excludes: the
    exact one-sided upper confidence bound of the success probability,

    .. math:: p_{up}(n) = 1 - (1 - \mathrm{level})^{1/n},

    the p with :math:`(1 - p)^n = 1 - \mathrm{level}` (Clopper-Pearson with
    no success). Only effects :math:`|\Delta p| > p_{up}` are excluded: three
    replays exclude only 0.632 at level 0.95.

    Parameters
    ----------
    replays : int or array_like of int >= 1
        Replays n of each arm.
    level : float in (0, 1)
        Confidence level of the bound.

    Returns
    -------
    ndarray (float64, the shape of ``replays``)
        The bound :math:`p_{up}(n)` of each arm.

    Raises
    ------
    ValueError
        If a count of ``replays`` is below 1 (or does not fit in int64), or
        ``level`` is not in (0, 1).
    TypeError
        If ``replays`` is not an integer array or ``level`` not a real
        number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.audit.zero_arm_bound([1, 3, 10, 30]).round(3)
    array([0.95 , 0.632, 0.259, 0.095])
    """
    n = int_array(replays, "replays")
    if (n < 1).any():
        raise ValueError(f"replays must be integers >= 1, got {int(n.min())}")
    level = check_open_unit(level, "level")
    return -np.expm1(np.log1p(-level) / n.astype(np.float64))


# --- the confidence router --------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class RouterMetrics:
    """A confidence router at each threshold (:func:`router_metrics`).

    Attributes
    ----------
    thresholds : ndarray (k,)
        The confidence thresholds.
    routed : ndarray (k,) int64
        Steps sent to the judge (confidence < threshold).
    recall : ndarray (k,)
        Critical steps caught (by the judge or by an automatic flag) over
        critical steps (NaN when there is none).
    precision : ndarray (k,)
        Critical steps among those flagged (NaN when nothing is).
    judge_share : ndarray (k,)
        routed / steps.
    judge_cost : ndarray (k,)
        routed x the cost of one judge call.
    auto_recall : float
        Recall of the automatic flags alone (no judge).
    n_steps, n_critical : int
        Steps and critical steps.

    Examples
    --------
    >>> import fastcredit as fc
    >>> r = fc.audit.router_metrics([0.9, 0.2, 0.8, 0.4], [1, 0, 0, 0], [1, 1, 0, 0],
    ...                             thresholds=[0.0, 0.5, 1.0])
    >>> r.routed, r.judge_share, r.n_critical
    (array([0, 2, 4]), array([0. , 0.5, 1. ]), 2)
    """
    thresholds: np.ndarray
    routed: np.ndarray
    recall: np.ndarray
    precision: np.ndarray
    judge_share: np.ndarray
    judge_cost: np.ndarray
    auto_recall: float
    n_steps: int
    n_critical: int


def router_metrics(confidence, flagged, critical, *, thresholds, judge_cost=1.0) -> RouterMetrics:
    r"""Recall and judge cost of a confidence router.

    The router decides each step automatically (its flag) when its
    confidence is at least the threshold, and sends it to a judge otherwise;
    the judge is taken as right (it flags exactly the critical steps it
    sees). With R the routed steps, F the automatic flags and C the
    critical steps, at each threshold :math:`\tau`:

    .. math:: R = \{t : \mathrm{conf}_t < \tau\}, \quad
              \hat F = (F \setminus R) \cup (C \cap R), \quad
              \mathrm{recall} = \frac{|\hat F \cap C|}{|C|}, \quad
              \mathrm{precision} = \frac{|\hat F \cap C|}{|\hat F|},

    judge share :math:`|R| / n` and judge cost :math:`|R| \times`
    ``judge_cost``. The curve over thresholds is the trade-off: how much
    judging buys how much recall.

    Parameters
    ----------
    confidence : array_like, shape (n_steps,)
        The router's confidence in each step's automatic flag; not NaN.
    flagged, critical : array_like of bool or 0/1, shape (n_steps,)
        The automatic flags and the critical steps.
    thresholds : array_like, shape (k,)
        Not NaN (-inf: never route; +inf: route everything).
    judge_cost : float >= 0
        Cost of one judge call (e.g. dollars or replays).

    Returns
    -------
    RouterMetrics
        Routed steps, recall, precision and judge cost per threshold.

    Raises
    ------
    ValueError
        If ``confidence`` is not one-dimensional or holds NaN, ``flagged``
        or ``critical`` is not a one-dimensional array of bool or integer
        0/1 of its length, ``thresholds`` is not one-dimensional or holds
        NaN, or ``judge_cost`` is negative or not finite.
    TypeError
        If ``confidence`` or ``thresholds`` is not a real array or
        ``judge_cost`` not a real number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> r = fc.audit.router_metrics([0.9, 0.2, 0.8, 0.4], [1, 0, 0, 0], [1, 1, 0, 0],
    ...                             thresholds=[0.0, 0.5, 1.0], judge_cost=2.0)
    >>> r.recall, r.judge_cost, r.auto_recall
    (array([0.5, 1. , 1. ]), array([0., 4., 8.]), 0.5)
    """
    conf = float64_vector(confidence, "confidence")
    if np.isnan(conf).any():
        raise ValueError("confidence must not contain NaN")
    f = _flags(flagged, "flagged", conf.shape[0])
    c = _flags(critical, "critical", conf.shape[0])
    th = float64_array(thresholds, "thresholds")
    if th.ndim != 1 or np.isnan(th).any():
        raise ValueError(f"thresholds must be one-dimensional and not NaN, got shape "
                         f"{th.shape}")
    judge_cost = JUDGE_COST.check(judge_cost)
    routed = conf[None, :] < th[:, None]
    final = np.where(routed, c[None, :], f[None, :])
    caught = (final & c[None, :]).sum(axis=1)
    n_flagged = final.sum(axis=1)
    n_crit = int(c.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = caught / np.float64(n_crit) if n_crit else np.full(th.shape, np.nan)
        precision = np.where(n_flagged > 0, caught / np.maximum(n_flagged, 1), np.nan)
    n_routed = routed.sum(axis=1).astype(np.int64)
    n = conf.shape[0]
    return RouterMetrics(th, n_routed, recall, precision,
                         n_routed / n if n else np.full(th.shape, np.nan),
                         n_routed * judge_cost,
                         float((f & c).sum() / n_crit) if n_crit else float("nan"), n, n_crit)
