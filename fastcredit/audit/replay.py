"""Step-level advantages from execution replay (A_replay)."""
from __future__ import annotations

import dataclasses

import numpy as np

from .._backend import kernels, resolve
from .._validation import check_float, check_open_unit, float64_array, ragged_rows

__all__ = ["ReplayAdvantage", "replay_advantage"]


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
        Where both arms are all zero (or both all one): 1 - alpha**(1/n), n
        the smaller arm, the smallest ``|dp|`` the zero advantage excludes; NaN
        elsewhere.

    Examples
    --------
    >>> import fastcredit as fc
    >>> ra = fc.replay_advantage([1., 1., 0., 0., 0.], [0., 0., 1.],
    ...                          factual_offsets=[0, 2, 5], alternative_offsets=[0, 1, 3])
    >>> ra.advantage, ra.noise_floor, ra.critical
    (array([ 1. , -0.5]), array([0., 0.]), array([ True,  True]))
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
    :math:`1 - \alpha^{1/n}` on its rate (0.632 for n = 3, alpha = 0.05), and
    by symmetry an all-one arm the same bound on one minus its rate: when
    both arms are all zero, or both all one, ``resolution`` reports this bound
    for the smaller arm; a zero advantage there is only "no effect larger
    than this".

    Parameters
    ----------
    factual, alternative : array_like
        Outcomes per step: 2-D (n_steps, k) arrays, or flat arrays with CSR
        ``factual_offsets`` / ``alternative_offsets`` (n_steps + 1,). Every
        step needs at least one outcome in each arm. NaN propagates.
    factual_offsets, alternative_offsets : array_like of int, shape (n_steps + 1,), optional
        CSR offsets of flat ``factual`` / ``alternative``: step t's outcomes
        are ``factual[factual_offsets[t]:factual_offsets[t + 1]]``. None
        (default) when the arm is 2-D.
    alpha : float in (0, 1)
        One minus the confidence of ``resolution``'s bound.
    threshold : float >= 0
        A step is critical when ``|advantage| > threshold``.
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Returns
    -------
    ReplayAdvantage
        Advantage, noise floor, criticality and resolution per step.

    Raises
    ------
    ValueError
        If an arm is not 2-D without offsets (or not 1-D with them), its
        offsets are not valid CSR over it, a step has no outcome in an arm,
        the two arms cover different numbers of steps, ``alpha`` is not in
        (0, 1), ``threshold`` is negative or not finite, or ``backend`` is
        not None, "c" or "numba" or is not available.
    TypeError
        If an arm is not a real array, its offsets not integer, or
        ``alpha`` or ``threshold`` not a real number.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> ra = fc.replay_advantage([[1., 1., 1.], [0., 0., 0.]], [[0., 0., 1.], [0., 0., 0.]])
    >>> ra.advantage.round(3), ra.critical, ra.resolution.round(3)
    (array([0.667, 0.   ]), array([ True, False]), array([  nan, 0.632]))
    """
    arms = ((factual, factual_offsets, "factual"), (alternative, alternative_offsets,
                                                    "alternative"))
    (f, f_off), (a, a_off) = (_arm(*arm) for arm in arms)
    if f_off.shape != a_off.shape:
        raise ValueError(f"factual and alternative must cover the same steps, got "
                         f"{f_off.shape[0] - 1} and {a_off.shape[0] - 1}")
    alpha = check_open_unit(alpha, "alpha")
    threshold = check_float(threshold, "threshold", lo=0.0)
    n_steps = f_off.shape[0] - 1
    adv, noise, res = np.empty(n_steps), np.empty(n_steps), np.empty(n_steps)
    critical = np.empty(n_steps, dtype=bool)
    impl = kernels("audit", resolve("audit.replay_advantage", backend))
    bad = impl.replay_advantage(f_off, f, a_off, a, alpha, threshold, adv, noise, res, critical)
    if bad >= 0:
        for arm in arms:       # the full checks name the argument and the step
            ragged_rows(*arm, "step", nonempty=True)
        raise ValueError(f"factual_offsets or alternative_offsets: step {bad} has no values "
                         f"or its offsets decrease")
    return ReplayAdvantage(adv, noise, critical, res)


def _arm(values, offsets, name):
    """One arm as (flat float64 values, int64 CSR offsets). Offsets given as
    the kernel takes them (a C-contiguous 1-D int64 array of >= 2 entries)
    are checked here only at their two ends: that they never decrease and
    give every step an outcome is checked by the kernel, in one pass over
    both arms' offsets before it writes anything (NumPy's check took ~0.4 ms
    an arm at 1e6 steps), and on its refusal by :func:`ragged_rows`, whose
    errors name the argument and the step. Other offsets, and an arm whose
    ends are wrong, go to :func:`ragged_rows` straight away."""
    if type(offsets) is np.ndarray and offsets.dtype == np.int64 and offsets.ndim == 1 \
            and offsets.shape[0] >= 2 and offsets.flags.c_contiguous:
        arr = float64_array(values, name)
        if arr.ndim == 1 and offsets[0] == 0 and offsets[-1] == arr.shape[0]:
            return arr, offsets
    return ragged_rows(values, offsets, name, "step", nonempty=True)
