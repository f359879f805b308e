"""Within-trajectory Spearman correlation of credit with replay advantages,
and the audit that scores a credit signal by its median."""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import _parallel
from .._backend import kernels, resolve
from .._constants import SPEARMAN_CONSTANT, SPEARMAN_NONFINITE, SPEARMAN_SHORT, SPEARMAN_VALID
from .._params import MIN_STEPS
from ._data import trajectories
from .bootstrap import BootstrapCI, _median_bootstrap, check_resamples

__all__ = ["SpearmanAudit", "spearman_audit", "within_spearman"]

# Ranking a group of 4 to 20 steps costs about 0.05 to 0.25 us, so 256
# groups are about as long as handing a chunk to a pool thread.
_MIN_GROUPS_PER_THREAD = 256


def _group_spearman(x, y, offsets, min_len, threads, backend):
    """Spearman rho of ``x`` against ``y`` within each CSR group, and the
    group's status code (``SPEARMAN_*`` of :mod:`fastcredit._constants`;
    rho is NaN unless the group is valid)."""
    n_groups = offsets.shape[0] - 1
    rho = np.empty(n_groups)
    status = np.empty(n_groups, dtype=np.int8)
    longest = int(np.diff(offsets).max(initial=0))
    impl = kernels("audit", resolve("audit.spearman", backend))

    def part(a, b):
        # per-thread scratch, sized for the longest group as
        # fc_spearman_groups asks (csrc/audit.h)
        idx = np.empty(max(longest, 1), dtype=np.int64)
        ranks = np.empty(max(3 * longest, 1))
        impl.spearman_groups(offsets[a:b + 1], x, y, min_len, idx, ranks, rho[a:b],
                             status[a:b])

    _parallel.run(part, n_groups, _parallel.n_threads(threads),
                  min_items=_MIN_GROUPS_PER_THREAD)
    return rho, status


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
        Per-step credit and replay advantages, flat over the trajectories.
    offsets : array_like of int, shape (n_traj + 1,)
        CSR offsets of the trajectories.
    min_steps : int >= 2
        Shorter trajectories are degenerate (NaN).
    threads : int, optional
        Threads to split the trajectories over (default all cores).
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Returns
    -------
    ndarray (n_traj,)
        Spearman rho per trajectory; NaN where degenerate.

    Raises
    ------
    ValueError
        If ``credit`` or ``a_replay`` is not one-dimensional or the two
        differ in length, ``offsets`` is not valid CSR over them
        (one-dimensional, at least 2 entries, starting at 0, non-decreasing,
        ending at their length), ``min_steps < 2``, ``threads < 1``, or
        ``backend`` is not None, "c" or "numba" or is not available.
    TypeError
        If ``credit`` or ``a_replay`` is not a real array, ``offsets`` not
        integer, or ``min_steps`` or ``threads`` not an integer.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.within_spearman([1., 2., 3., 4., 5., 1., 1.], [1., 2., 4., 3., 9., 0., 1.], [0, 5, 7])
    array([0.9, nan])
    """
    x, y, off = trajectories(credit, a_replay, offsets)
    min_steps = MIN_STEPS.check(min_steps)
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

    Examples
    --------
    >>> import fastcredit as fc
    >>> audit = fc.spearman_audit([1., 2., 3., 4., 2., 1., 3., 4., 1., 1., 1.],
    ...                           [1., 2., 4., 3., 1., 2., 3., 4., 1., 2., 3.],
    ...                           [0, 4, 8, 11], resamples=100)
    >>> audit.rho, audit.status, audit.n_short, audit.median.estimate
    (array([0.8, 0.8, nan]), array([0, 0, 1], dtype=int8), 1, 0.8)
    """
    rho: np.ndarray
    status: np.ndarray
    n_scored: int
    n_short: int
    n_constant: int
    n_nonfinite: int
    median: BootstrapCI


def _score_trajectories(x, y, off, min_steps, resamples, level, seed, threads,
                        backend) -> SpearmanAudit:
    """:func:`spearman_audit` of checked arrays."""
    rho, status = _group_spearman(x, y, off, min_steps, threads, backend)
    counts = np.bincount(status, minlength=SPEARMAN_NONFINITE + 1)
    if counts[SPEARMAN_VALID] < 2:
        raise ValueError(
            f"a_replay: {counts[SPEARMAN_VALID]} of {status.shape[0]} trajectories can be "
            f"scored, the bootstrap needs 2 ({counts[SPEARMAN_SHORT]} have fewer than "
            f"min_steps = {min_steps} steps, {counts[SPEARMAN_CONSTANT]} a constant a_replay, "
            f"{counts[SPEARMAN_NONFINITE]} a non-finite credit or a_replay); nothing to audit")
    return SpearmanAudit(rho, status, n_scored=int(counts[SPEARMAN_VALID]),
                         n_short=int(counts[SPEARMAN_SHORT]),
                         n_constant=int(counts[SPEARMAN_CONSTANT]),
                         n_nonfinite=int(counts[SPEARMAN_NONFINITE]),
                         median=_median_bootstrap(rho, None, resamples, level, seed, threads,
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
        Per-step credit and replay advantages, flat over the trajectories.
    offsets : array_like of int, shape (n_traj + 1,)
        CSR offsets of the trajectories.
    min_steps : int >= 2
        Shorter trajectories are excluded (``n_short``).
    resamples, level, seed
        Of the bootstrap (:func:`~fastcredit.audit.bootstrap_median`). At
        least two trajectories must be scored.
    threads, backend
        As in :func:`~fastcredit.audit.bootstrap_median`.

    Returns
    -------
    SpearmanAudit
        Per-trajectory rho and status, the counts, and the median's CI.

    Raises
    ------
    ValueError
        If an argument fails the checks of :func:`within_spearman` or of
        :func:`~fastcredit.audit.bootstrap_median` (``resamples``,
        ``level``, ``seed``), or fewer than 2 trajectories can be scored
        (the message counts the short, constant and non-finite ones).
    TypeError
        If an argument has a wrong type, as in :func:`within_spearman` and
        :func:`~fastcredit.audit.bootstrap_median`.

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
    x, y, off = trajectories(credit, a_replay, offsets)
    min_steps = MIN_STEPS.check(min_steps)
    check_resamples(resamples)
    return _score_trajectories(x, y, off, min_steps, resamples, level, seed, threads, backend)
