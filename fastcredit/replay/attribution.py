r"""Attribution on a record: the run as a stochastic game over its steps.

The players are the record's steps 0..n-1. A coalition S holds its steps at
their recorded actions and leaves the others to the policy (:class:`Hold`);
one rollout under it is one draw of the outcome, and

.. math:: v(S) = \mathbb{E}\,[\,y \mid do(a_t := a_t^{obs}),\ t \in S\,],

so v(N) is the observed outcome (for a deterministic outcome function) and
v({}) the outcome of the agent re-run from scratch. :class:`StepGame` is this
game as a vectorised Python callable on coalition masks: every evaluation is
a fresh rollout (it is never cached: a replay is random, and one cached draw
per coalition would fake certainty), rollout i of a game drawing from the
streams (seed, i), so that for a seed the values do not depend on
``max_concurrency``. :func:`shapley` feeds it to
:func:`fastcredit.permutation_shapley` (antithetic permutation sampling, the
t interval over pair-averaged marginals, the budget in rollouts), and
:func:`contrastive` resamples the run from each step on and hands the outcomes
to :func:`fastcredit.contrastive_effects` (effects, intervals, the
commitment point).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .._numba.sampling import PSEUDO_SAMPLES
from .._params import EFFECT_KIND, SEED
from .._validation import check_float, check_int, check_open_unit
from ..audit.contrastive import ContrastiveEffects, contrastive_effects
from ..sampling import ShapleyEstimate, permutation_shapley
from . import _streams
from .interventions import Plan
from .record import Record, check_record, rollout, runs_async
from .runner import MAX_CONCURRENCY, AgentError, run_many

__all__ = ["StepGame", "StepEffects", "shapley", "contrastive"]

_UNLIMITED = 2**62
#: Walks :func:`shapley` runs when neither ``permutations`` nor ``budget`` is given.
DEFAULT_PERMUTATIONS = 64


def _outcome(gen):
    """A rollout generator that returns only the outcome (the game keeps no
    trajectories)."""
    run = yield from gen
    return run.outcome


def _hold(held, n_steps: int) -> Plan:
    held = frozenset(int(t) for t in held)
    start = next((t for t in range(n_steps) if t not in held), n_steps)
    return Plan(start, held)


class StepGame:
    """The game over a record's steps, as a stochastic vectorised callable.

    ``game(masks)`` runs one rollout per coalition (uint64 masks ``(n,)``,
    bit t = step t held factual, or bool rows ``(n, n_steps)``) and returns
    their outcomes: one draw each of v(S). Rollouts of one call run
    concurrently; the k-th rollout of the game's life draws from the streams
    (seed, k), whatever the concurrency. Nothing is cached.

    Parameters
    ----------
    record : Record
        The record whose steps are the players (at least one step).
    seed : int
        In [0, 2**64): rollout k draws from the streams (seed, k).
    max_concurrency : int
        Rollouts in flight at once (threads for a blocking agent, tasks of an
        event loop for an async one).
    bounds : (float, float), optional
        The range [lo, hi] every outcome lies in (e.g. (0, 1) for a failure
        indicator); an outcome outside it raises ValueError.

    Attributes
    ----------
    m : int
        The players: the record's steps.
    n_rollouts : int
        Rollouts run so far.
    span : (float, float)
        The declared bounds, else the range of the outcomes seen so far
        ((inf, -inf) before any).

    Raises
    ------
    ValueError
        If the record has no steps, ``seed`` is outside [0, 2**64),
        ``max_concurrency`` is not in [1, 2**16], ``bounds`` has hi < lo or
        a non-finite end; when called, if a mask names a step the record
        does not have or an outcome lies outside ``bounds``.
    TypeError
        If ``record`` is not a Record, ``seed`` or ``max_concurrency`` is
        not an integer, or ``bounds`` is not a pair of real numbers; when
        called, if the coalitions are neither integer masks nor bool rows.

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit.replay import Agent, StepGame, record
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: float(sum(traj.actions)), max_steps=3)
    >>> game = StepGame(record(agent, seed=1), seed=0)
    >>> game(np.array([0, 7], dtype=np.uint64))     # re-run all, hold all (factual: 2)
    array([1., 2.])
    >>> game.m, game.n_rollouts, game.span
    (3, 2, (1.0, 2.0))
    """

    def __init__(self, record: Record, *, seed: int = 0, max_concurrency: int = 1,
                 bounds: tuple[float, float] | None = None):
        self.record = check_record(record)
        if record.n_steps < 1:
            raise ValueError("record has no steps: there is no game over its steps")
        self.seed = SEED.check(seed)
        self.max_concurrency = MAX_CONCURRENCY.check(max_concurrency)
        self.bounds = _check_bounds(bounds)
        self.span = self.bounds or (np.inf, -np.inf)
        self.m = record.n_steps
        self.n_rollouts = 0
        self._domain = _streams.GAME
        self._async = runs_async(record.agent, Plan(0))

    def _run(self, plans) -> np.ndarray:
        """Outcomes of one rollout per plan, rollouts numbered on from
        ``n_rollouts``."""
        first, base, agent = self.n_rollouts, self.record.trajectory, self.record.agent
        outcomes = run_many(
            lambda i: _outcome(rollout(agent, base, plans[i],
                                       (self.seed, self._domain, first + i))),
            len(plans), max_concurrency=self.max_concurrency, is_async=self._async)
        y = np.array(outcomes, dtype=np.float64)
        if y.size:
            lo, hi = self.span
            if self.bounds is not None and (y.min() < lo or y.max() > hi):
                bad = int(np.flatnonzero((y < lo) | (y > hi))[0])
                raise ValueError(f"outcome {y[bad]} of rollout {first + bad} lies outside the "
                                 f"declared bounds ({lo}, {hi})")
            self.span = (min(lo, float(y.min())), max(hi, float(y.max())))
        self.n_rollouts += len(plans)
        return y

    def __call__(self, coalitions) -> np.ndarray:
        arr = np.asarray(coalitions)
        if arr.ndim == 2 and arr.shape[1] == self.m and arr.dtype.kind in "biu":
            plans = [_hold(np.flatnonzero(row), self.m) for row in arr]
        elif arr.ndim == 1 and arr.dtype.kind in "iu":
            if self.m > 64:
                raise ValueError(f"coalitions of {self.m} steps need bool rows (n, {self.m})")
            if arr.size and (int(arr.min()) < 0 or int(arr.max()) >> self.m):
                raise ValueError(f"coalitions must be masks of the record's {self.m} steps, "
                                 f"in [0, 2**{self.m})")
            plans = [_hold((t for t in range(self.m) if int(mask) >> t & 1), self.m)
                     for mask in arr]
        else:
            raise TypeError(f"coalitions must be uint64 masks (n,) or bool rows (n, {self.m}), "
                            f"got dtype {arr.dtype} and shape {arr.shape}")
        return self._run(plans)


def _check_bounds(bounds):
    if bounds is None:
        return None
    if isinstance(bounds, (str, bytes)) or np.ndim(bounds) != 1 or len(bounds) != 2:
        raise TypeError(f"bounds must be a pair (lo, hi), got {bounds!r}")
    lo = check_float(bounds[0], "bounds[0]")
    return lo, check_float(bounds[1], "bounds[1]", lo=lo)


def _with_pseudo_samples(est: ShapleyEstimate, span, declared: bool) -> ShapleyEstimate:
    r"""``est`` with the stderr fc.permutation_shapley gives a stochastic
    game (see :class:`~fastcredit.ShapleyEstimate`): the sample variance with
    c = 2 pseudo-samples at each end of the samples' range [-w, w],
    w = hi - lo the outcome range,

    .. math:: s^2 = \frac{SS + c\,[(w - \bar x)^2 + (w + \bar x)^2]}{n - 1 + 2c},

    SS recovered from the plain stderr the sampler returned for a Python
    callable (:math:`SS = \mathrm{stderr}^2\, n (n - 1)`). Without it a few
    walks of a 0/1 outcome whose marginals happen not to vary report a
    zero-width interval (4 % of estimates at 10 pairs on the example agents).
    Undeclared bounds whose draws never differed say nothing of the range:
    the stderr is then infinite, as the sampler's."""
    n = float(est.n_samples)
    lo, hi = span
    if n < 2:
        return replace(est, bounds=(lo, hi))
    width = hi - lo
    if not declared and not width > 0.0:
        return replace(est, stderr=np.full_like(est.values, np.inf), bounds=(lo, hi))
    ss = est.stderr * est.stderr * n * (n - 1.0)
    mean = est.values
    ends = (width - mean) ** 2 + (width + mean) ** 2
    var = (ss + PSEUDO_SAMPLES * ends) / (n - 1.0 + 2.0 * PSEUDO_SAMPLES)
    return replace(est, stderr=np.sqrt(var / n), bounds=(lo, hi))


def _agent_errors(fn):
    """The error behind the sampler's wrapping of a game's exception (an
    AgentError naming the step, or the harness's TypeError/ValueError on a
    bad output of the agent), re-raised as itself."""
    try:
        return fn()
    except RuntimeError as exc:
        if isinstance(exc.__cause__, (AgentError, TypeError, ValueError)):
            raise exc.__cause__ from None
        raise


def shapley(record: Record, *, permutations: int | None = None, budget: int | None = None,
            antithetic: bool = True, bounds: tuple[float, float] | None = None, seed: int = 0,
            max_concurrency: int = 1, chunk: int = 1 << 12) -> ShapleyEstimate:
    r"""Monte-Carlo Shapley credit of each step of a record, with intervals.

    :func:`fastcredit.permutation_shapley` on :class:`StepGame`: a walk along
    a random order of the steps runs one rollout per prefix (m + 1 rollouts;
    nothing is cached), credits step i with
    :math:`y(P \cup \{i\}) - y(P)`, and antithetic pairs (an order and its
    reverse) are averaged into one sample;
    :math:`\hat\phi_i = \bar x_i`, stderr :math:`s_i / \sqrt n` with
    :math:`s_i` the sd the sampler gives a stochastic game (two
    pseudo-samples at each end of the range, so samples that happen not to
    vary do not report certainty), ``est.ci(level)`` the t interval. The
    estimate is unbiased for the Shapley value of v over steps, and its
    marginals sum per walk to one draw of v(N) - v({}).

    Parameters
    ----------
    record : Record
        The record whose steps are credited.
    permutations : int, optional
        Walks (even when antithetic). Default: as many as ``budget`` affords,
        or 64 without one.
    budget : int, optional
        Hard cap on rollouts: a walk (pair) starts only if all of its
        rollouts fit; the estimate then says ``truncated``. At least one walk
        (pair): 2 (m + 1) rollouts when antithetic.
    antithetic : bool
        Pair each order with its reverse (default True).
    bounds : (float, float), optional
        The outcome range (e.g. (0, 1) for a failure indicator): sets the
        pseudo-samples of the stderr; an outcome outside it raises
        ValueError. Default: the range of the outcomes seen.
    seed : int
        Seed of the orders and of the rollouts' streams.
    max_concurrency : int
        Rollouts in flight; the estimate for a seed does not depend on it.
    chunk : int
        About how many rollouts are handed out at once (at least one walk):
        the unit of concurrency. Rollouts are numbered (and their streams
        drawn) in the order the batches list them, so the estimate depends on
        ``seed`` and ``chunk``, never on the concurrency.

    Returns
    -------
    ShapleyEstimate
        ``values``, ``stderr``, ``ci(level)``; ``n_evals`` is the number of
        rollouts, ``truncated`` whether the budget stopped the run,
        ``bounds`` the outcome range the stderr used.

    Raises
    ------
    AgentError
        A policy, tool or outcome raised in a rollout (the step is named).
    ValueError
        If the record has no steps, ``seed`` is outside [0, 2**64),
        ``max_concurrency`` is not in [1, 2**16], ``chunk`` is below 1,
        ``permutations`` is below 1 (2 when antithetic) or odd with
        ``antithetic=True``, ``budget`` cannot cover one walk (pair),
        ``bounds`` has hi < lo or a non-finite end, or an outcome lies
        outside ``bounds``, is not finite, or a logprob is positive or NaN.
    TypeError
        If ``record`` is not a Record, an integer argument is not an
        integer, ``antithetic`` is not a bool, ``bounds`` is not a pair of
        real numbers, or the agent returns an outcome that is not a real
        number.

    Examples
    --------
    >>> from fastcredit.replay import Agent, record, shapley
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: float(sum(traj.actions)), max_steps=3)
    >>> est = shapley(record(agent, seed=1), permutations=8, bounds=(0, 3), seed=0)
    >>> est.values, est.n_evals
    (array([ 0.75, -0.25,  0.25]), 32)
    """
    game = StepGame(record, seed=seed, max_concurrency=max_concurrency, bounds=bounds)
    chunk = check_int(chunk, "chunk", lo=1)
    if permutations is None and budget is None:
        permutations = DEFAULT_PERMUTATIONS
    est = _agent_errors(lambda: permutation_shapley(
        game, game.m, permutations=permutations, budget=budget, antithetic=antithetic,
        cache=False, chunk=chunk, seed=seed))
    return _with_pseudo_samples(est, game.span, bounds is not None)


@dataclass(frozen=True)
class StepEffects:
    """Contrastive effects of resampling a record from each step on.

    Attributes
    ----------
    effects : ContrastiveEffects
        ``effect``, ``low``, ``high`` per step and the ``commitment_point``.
    outcomes : ndarray
        The rollouts' outcomes, step by step (CSR over ``offsets``).
    offsets : ndarray (n_steps + 1,)
        Step k's outcomes are ``outcomes[offsets[k]:offsets[k + 1]]``.
    n_rollouts : int
        Rollouts run.
    truncated : bool
        True when the budget stopped the rollouts before ``samples`` per step.

    Examples
    --------
    >>> from fastcredit.replay import Agent, contrastive, record
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: float(sum(traj.actions)), max_steps=3)
    >>> eff = contrastive(record(agent, seed=1), samples=4, budget=10, resamples=100)
    >>> eff.offsets, eff.n_rollouts, eff.truncated
    (array([ 0,  4,  7, 10]), 10, True)
    """

    effects: ContrastiveEffects
    outcomes: np.ndarray
    offsets: np.ndarray
    n_rollouts: int
    truncated: bool


def contrastive(record: Record, *, samples: int = 32, budget: int | None = None,
                level: float = 0.95, kind: str = "auto", resamples: int = 10_000,
                seed: int = 0, max_concurrency: int = 1) -> StepEffects:
    r"""Resample the record from each step on; effects and the commitment point.

    For each step k, ``samples`` rollouts under :class:`Resample` (k) (steps
    before k factual, k onward re-decided by the policy) give outcomes
    :math:`y_{k,1..K}`, and :func:`fastcredit.contrastive_effects` compares
    them with the observed outcome:
    :math:`e_k = \bar y_k - y^{obs}` with its interval, and the commitment
    point, the last step whose interval lies below 0 (resampling there still
    rescues a bad run).

    Rollouts go round-robin over the steps (rollout i resamples step
    i mod n), so a budget that stops them leaves every step with
    floor(budget / n) or one more outcome.

    Parameters
    ----------
    record : Record
        The record resampled (at least one step).
    samples : int
        Rollouts per step, K >= 1.
    budget : int, optional
        Hard cap on rollouts (at least one per step); below n K the result
        says ``truncated``.
    level, kind, resamples
        As in :func:`fastcredit.contrastive_effects`.
    seed : int
        In [0, 2**64): seeds the rollouts' streams and the bootstrap.
    max_concurrency : int
        Rollouts in flight at once; the result does not depend on it.

    Returns
    -------
    StepEffects
        The effects with their intervals and commitment point, and the
        rollouts' outcomes.

    Raises
    ------
    AgentError
        A policy, tool or outcome raised in a rollout (the step is named).
    ValueError
        If the record has no steps, ``samples`` is below 1, ``budget`` is
        below the number of steps, ``level`` is not in (0, 1), ``kind`` is
        not "auto", "binary" or "continuous" (or "binary" meets outcomes
        other than 0 and 1), ``resamples`` is not in [1, 2**31), ``seed``
        is outside [0, 2**64), ``max_concurrency`` is not in [1, 2**16], or
        the agent returns a non-finite outcome or a positive or NaN logprob.
    TypeError
        If ``record`` is not a Record, an integer argument is not an
        integer, ``level`` is not a real number, or the agent returns an
        outcome that is not a real number.

    Examples
    --------
    >>> from fastcredit.replay import Agent, contrastive, record
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: float(sum(traj.actions)), max_steps=3)
    >>> eff = contrastive(record(agent, seed=1), samples=4, resamples=100)
    >>> eff.effects.effect, eff.n_rollouts
    (array([-0.25,  0.25,  0.  ]), 12)
    """
    game = StepGame(record, seed=seed, max_concurrency=max_concurrency)
    game._domain = _streams.CONTRASTIVE      # its own streams, apart from the game's
    samples = check_int(samples, "samples", lo=1, hi=_UNLIMITED)
    level = check_open_unit(level, "level")
    kind = EFFECT_KIND.check(kind)
    n = game.m
    total = n * samples
    if budget is not None:
        budget = check_int(budget, "budget", lo=1, hi=_UNLIMITED)
        if budget < n:
            raise ValueError(f"budget must cover one rollout per step: {n} rollouts, got "
                             f"{budget}")
    runs = total if budget is None else min(total, budget)
    plans = [Plan(i % n) for i in range(runs)]
    outcomes = game._run(plans)
    order = np.argsort(np.arange(runs) % n, kind="stable")
    counts = np.bincount(np.arange(runs) % n, minlength=n)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    flat = outcomes[order]
    effects = contrastive_effects(flat, record.outcome, offsets=offsets, kind=kind, level=level,
                                  resamples=resamples, seed=seed)
    return StepEffects(effects, flat, offsets, runs, runs < total)
