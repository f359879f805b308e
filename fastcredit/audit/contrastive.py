"""Causal agent replay: the effect of resampling a run from step k onward,
its confidence interval, and the commitment point."""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import _parallel
from .._backend import kernels, resolve
from .._constants import RNG_MAX_RANGE
from .._params import COMMITMENT_RULE, EFFECT_KIND, SEED
from .._validation import check_open_unit, ragged_rows
from ._data import check_rng_rows, real_float64
from .bootstrap import check_resamples
from .intervals import _newcombe, _wilson

__all__ = ["ContrastiveEffects", "contrastive_effects"]


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
        The confidence level of ``(low, high)``.
    commitment_point : int or None
        The last step that ``rule`` marks: by default the last whose effect
        is significantly negative (high < 0): resampling there still rescues
        the run, after it the outcome is committed. None when no step is.
    rule : str
        "negative" (high < 0) or "excludes_zero" (CAR's literal rule: high
        < 0 or low > 0).

    Examples
    --------
    >>> import fastcredit as fc
    >>> ce = fc.contrastive_effects([[0.2, 0.4, 0.1], [0.9, 1.5, 1.2]], 1.0, resamples=200)
    >>> ce.kind, ce.effect.round(3), ce.commitment_point
    ('continuous', array([-0.767,  0.2  ]), 0)
    """
    effect: np.ndarray
    low: np.ndarray
    high: np.ndarray
    kind: str
    level: float
    commitment_point: int | None
    rule: str = "negative"


def _bootstrap_effects(vals, off, obs, resamples, level, seed, threads, backend):
    """Percentile-bootstrap interval per step of mean(resampled) - mean(obs),
    both arms resampled (step k from the RNG stream (seed, k)); a scalar
    ``obs`` is a known outcome and only shifts the interval. The interval is
    numpy.quantile's (method "linear") of the replicates, selected by the
    kernels in the same pass over the steps."""
    n_steps = off.shape[0] - 1
    resamples = check_resamples(resamples, n_steps)
    seed = np.uint64(SEED.check(seed))
    b = np.ascontiguousarray(obs.reshape(-1)) if obs.ndim else np.empty(0)
    shift = float(obs) if obs.ndim == 0 else 0.0
    q_low, q_high = (1 - level) / 2, (1 + level) / 2
    reps = np.empty((n_steps, resamples))
    low, high = np.empty(n_steps), np.empty(n_steps)
    impl = kernels("audit", resolve("audit.bootstrap_mean_diff", backend))

    def part(a, c):
        impl.bootstrap_mean_diff(off[a:c + 1], vals, b, resamples, seed, np.uint64(a), reps[a:c])
        impl.percentile_interval(reps[a:c], shift, q_low, q_high, low[a:c], high[a:c])

    _parallel.run(part, n_steps, _parallel.n_threads(threads))
    return low, high


def contrastive_effects(resampled, observed, *, offsets=None, kind="auto", level=0.95,
                        resamples=10_000, seed=0, rule="negative", threads=None,
                        backend=None) -> ContrastiveEffects:
    r"""Contrastive effects of resampling each step, and the commitment point.

    For step k, the run is held factual on steps [0, k) and resampled by the
    policy from k onward K_k times; with outcomes y (1 = bad),

    .. math:: e_k = \overline{y}_{\text{resample at } k} - \overline{y}_{\text{observed}}

    A negative effect means resampling at k rescues the run. The commitment
    point (``rule="negative"``, the default) is the last k whose CI lies
    entirely below 0. CAR states it as "the last step whose interval
    excludes zero" (``rule="excludes_zero"``): the two differ only when a
    later step's interval lies entirely above 0, a step where resampling
    makes the run significantly *worse*; the literal rule then names that
    step, although resampling there rescues nothing, which is why it is not
    the default.

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
    offsets : array_like of int, shape (n_steps + 1,), optional
        CSR offsets of flat ``resampled``: step k's outcomes are
        ``resampled[offsets[k]:offsets[k + 1]]``. None (default) when
        ``resampled`` is 2-D.
    kind : {"auto", "binary", "continuous"}
        The outcomes' kind, which picks the interval (see above).
    level : float in (0, 1)
        Confidence level of the intervals.
    resamples, seed : int
        Of the bootstrap (continuous outcomes only); ``seed`` in
        [0, 2**64).
    rule : {"negative", "excludes_zero"}
        Of the commitment point.
    threads : int, optional
        Threads to split the steps' bootstraps over (default all cores).
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Returns
    -------
    ContrastiveEffects
        Per-step effects, their intervals and the commitment point.

    Raises
    ------
    ValueError
        If ``resampled`` is not 2-D without ``offsets`` (or not 1-D with
        them), ``offsets`` is not valid CSR over it (length n_steps + 1,
        starting at 0, non-decreasing, ending at its length), a step has no
        outcome or more than 2**32, ``observed`` is neither a scalar nor a
        non-empty 1-D array (or holds more than 2**32 outcomes),
        ``kind="binary"`` is given outcomes other than 0 and 1, ``kind`` or
        ``rule`` is not one of its values, ``level`` is not in (0, 1),
        ``resamples`` is not in [1, 2**31), ``seed`` is outside [0, 2**64),
        ``threads < 1``, or ``backend`` is not None, "c" or "numba" or is
        not available.
    TypeError
        If ``resampled`` is not a real array, ``observed`` not real,
        ``offsets`` not integer, or ``level``, ``resamples``, ``seed`` or
        ``threads`` has the wrong type.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> y = np.array([[0] * 60 + [1] * 40, [0] * 50 + [1] * 50, [1] * 100])
    >>> ce = fc.contrastive_effects(y, 1.0)
    >>> ce.effect, ce.commitment_point
    (array([-0.6, -0.5,  0. ]), 1)
    >>> y = np.array([[0] * 70 + [1] * 30, [1] * 100])
    >>> fc.contrastive_effects(y, 0.5).commitment_point    # step 1 makes it worse
    0
    >>> fc.contrastive_effects(y, 0.5, rule="excludes_zero").commitment_point
    1
    """
    vals, off = ragged_rows(resampled, offsets, "resampled", "step", nonempty=True)
    check_rng_rows(off, "resampled", "step")
    kind = EFFECT_KIND.check(kind)
    rule = COMMITMENT_RULE.check(rule)
    level = check_open_unit(level, "level")
    check_resamples(resamples)
    obs = real_float64(observed, "observed")
    if obs.ndim > 1 or obs.size < 1:
        raise ValueError(f"observed must be a scalar or a non-empty 1-D array, got shape "
                         f"{obs.shape}")
    if obs.size > RNG_MAX_RANGE:
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
    significant = np.flatnonzero((high < 0) | ((low > 0) & (rule == "excludes_zero")))
    point = int(significant[-1]) if significant.size else None
    return ContrastiveEffects(effect, np.asarray(low, dtype=np.float64),
                              np.asarray(high, dtype=np.float64), kind, level, point, rule)
