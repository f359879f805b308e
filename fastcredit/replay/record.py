r"""Record a run of an agent, and replay it with or without an intervention.

:func:`record` runs the agent once and keeps every step's context (the
history the policy saw), action, log-probability and observation, with the
key of the random streams that produced them: step t's policy drew from
stream (seed, t, policy), its tool from (seed, t, env).

:func:`replay` runs it again. Without an intervention it re-decides every
step on the record's own streams and re-calls the tools, so a seeded local
policy reproduces the record exactly; a hosted model, which is not
bit-deterministic, may not, and the replay reports how often it did, the
**action-match rate**

.. math:: \text{match} = \frac{|\{t \in D : a_t^{replay} = a_t^{record}\}|}{|D|},

D the recorded steps from the first intervened step on whose action the
replay left to the policy (all of them without an intervention); a step
the replay never reached counts as a mismatch. Under an intervention
(:mod:`.interventions`) the steps before the first intervened step are the
record's, reused without calling anything, and the rest are re-decided on
fresh streams (seed, replay index, t, role).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .._params import SEED
from .._validation import check_int
from . import _streams
from .agent import Agent, Decision, History, Step, Trajectory, Transition, is_async_callable
from .interventions import Plan, plan as compile_plan
from .runner import AgentError, run_one

__all__ = ["Record", "Replay", "record", "replay", "rollout"]

_DOMAIN_NAMES = {_streams.RECORD: "the record", _streams.REPLAY: "a replay",
                 _streams.GAME: "a coalition rollout", _streams.CONTRASTIVE: "a resampling"}


@dataclass(frozen=True)
class Record:
    """A recorded run of an agent (see :func:`record`).

    Attributes
    ----------
    agent : Agent
        The agent recorded.
    trajectory : Trajectory
        The factual run; its streams are (seed, record domain, 0).
    seed : int
        The seed it was recorded with.

    Examples
    --------
    >>> from fastcredit.replay import Agent, record
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: len(traj), max_steps=3)
    >>> rec = record(agent, seed=1)
    >>> rec.actions, rec.n_steps, rec.outcome, rec.seed
    ((1, 0, 1), 3, 3.0, 1)
    """

    agent: Agent
    trajectory: Trajectory
    seed: int

    @property
    def steps(self) -> tuple:
        return self.trajectory.steps

    @property
    def n_steps(self) -> int:
        return len(self.trajectory.steps)

    @property
    def outcome(self) -> float:
        return self.trajectory.outcome

    @property
    def actions(self) -> tuple:
        return self.trajectory.actions


@dataclass(frozen=True)
class Replay:
    """A replay of a record (see :func:`replay`).

    Attributes
    ----------
    trajectory : Trajectory
        The replayed run.
    action_match : float
        The action-match rate over the compared steps (NaN when the
        intervention left no recorded step to the policy).
    n_compared : int
        Recorded steps compared (those left to the policy).
    first_divergence : int or None
        The first compared step whose action differs from the record's.

    Examples
    --------
    >>> from fastcredit.replay import Agent, record, replay
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: len(traj), max_steps=3)
    >>> rec = record(agent, seed=1)
    >>> again = replay(rec)                   # the record's own streams
    >>> again.action_match, again.n_compared, again.first_divergence
    (1.0, 3, None)
    >>> fresh = replay(rec, seed=5)           # fresh streams
    >>> fresh.trajectory.actions, fresh.action_match, fresh.first_divergence
    ((0, 1, 0), 0.0, 0)
    """

    trajectory: Trajectory
    action_match: float
    n_compared: int
    first_divergence: int | None


def _same(a, b) -> bool:
    """Whether two actions are equal (arrays compare as wholes)."""
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        import numpy as np
        return bool(np.array_equal(a, b))


def _call(role, step, fn, args, index, domain, steps):
    """Yield one call to the driver; an exception it throws back becomes an
    AgentError naming the step."""
    try:
        return (yield role, step, fn, args)
    except Exception as exc:
        raise AgentError(f"{role} raised at step {step} of {_DOMAIN_NAMES[domain]} "
                         f"(rollout {index}): {exc!r}", role=role, step=step, rollout=index,
                         steps=tuple(steps)) from exc


def _decision(out, step):
    if not isinstance(out, Decision):
        return out, None
    logprob = out.logprob
    if logprob is not None:
        try:
            logprob = float(logprob)
        except (TypeError, ValueError):
            raise TypeError(f"policy returned Decision.logprob = {logprob!r} at step {step}; "
                            f"expected a real number or None") from None
        if logprob > 0.0 or math.isnan(logprob):
            raise ValueError(f"policy returned Decision.logprob = {logprob} at step {step}; "
                             f"a log-probability is <= 0")
    return out.action, logprob


def _score(y, index):
    if isinstance(y, bool):
        return float(y)
    try:
        y = float(y)
    except (TypeError, ValueError):
        raise TypeError(f"outcome must return a real number, got {type(y).__name__} "
                        f"(rollout {index})") from None
    if not math.isfinite(y):
        raise ValueError(f"outcome returned {y} (rollout {index}); scores must be finite")
    return y


def rollout(agent: Agent, base: Trajectory | None, plan: Plan, stream: tuple):
    """One run as a generator of calls (see :mod:`.runner`): the record's
    steps before ``plan.start`` reused (``base`` None: a fresh run from
    ``reset``), the plan applied, the rest decided by the policy. Returns the
    Trajectory."""
    seed, domain, index = stream
    key = _streams.rollout_key(seed, domain, index)
    gen = _streams.generator
    steps = []
    if base is None:
        if agent.reset_fn is not None:
            initial = yield from _call("reset", 0, agent.reset_fn,
                                       (gen(key, 0, _streams.RESET),), index, domain, steps)
        else:
            initial = agent.initial
        history, t, terminated, n_base = History(initial), 0, False, 0
    else:
        initial, t, n_base = base.initial, plan.start, len(base.steps)
        steps = [Step(s.history, s.action, s.observation, s.logprob, "recorded")
                 for s in base.steps[:t]]
        if t < n_base:
            history, terminated = base.steps[t].history, False
        else:
            last = base.steps[-1]
            history, terminated = last.history.then(last.action, last.observation), \
                base.terminated
    while not terminated and t < agent.max_steps:
        edit = plan.edits.get(t)
        if edit is not None:
            history = yield from _call("context edit", t, edit, (history,), index, domain,
                                       steps)
            if not isinstance(history, History):
                raise TypeError(f"EditContext.edit must return a History, got "
                                f"{type(history).__name__} at step {t}")
        logprob = None
        if t in plan.forced:
            action, source = plan.forced[t], "forced"
        elif t in plan.held and t < n_base:
            action, source = base.steps[t].action, "held"
        else:
            policy = plan.policy_at(t, agent.policy)
            out = yield from _call("policy", t, policy,
                                   (history, gen(key, t, _streams.POLICY)), index, domain, steps)
            (action, logprob), source = _decision(out, t), "policy"
        if t in plan.observations:
            out = plan.observations[t]
        else:
            out = yield from _call("env", t, agent.step_fn,
                                   (action, history, gen(key, t, _streams.ENV)), index, domain,
                                   steps)
        if isinstance(out, Transition):
            observation, terminated = out.observation, bool(out.terminated)
        else:
            observation = out
        steps.append(Step(history, action, observation, logprob, source))
        history = history.then(action, observation)
        t += 1
    run = Trajectory(initial, tuple(steps), None, terminated, stream)
    y = yield from _call("outcome", t, agent.outcome, (run,), index, domain, steps)
    return Trajectory(initial, run.steps, _score(y, index), terminated, stream)


def check_record(record, name: str = "record") -> Record:
    if not isinstance(record, Record):
        raise TypeError(f"{name} must be a fastcredit.replay.Record (from record()), got "
                        f"{type(record).__name__}")
    return record


def runs_async(agent: Agent, plan: Plan) -> bool:
    """Whether runs of ``agent`` under ``plan`` need an event loop."""
    return agent.is_async or any(is_async_callable(fn) for fn in
                                 [p for _, p in plan.policies] + list(plan.edits.values()))


def record(agent: Agent, *, seed: int = 0) -> Record:
    """Run ``agent`` once and record every step.

    Step t's policy draws from the numpy Generator of stream (seed, t,
    policy) and its tool from (seed, t, env) (see
    :mod:`fastcredit.replay._streams`), so the record is a function of the
    agent and the seed, and every random input can be re-drawn.

    Parameters
    ----------
    agent : Agent
        The agent to run.
    seed : int
        In [0, 2**64).

    Returns
    -------
    Record
        The agent, the factual trajectory and the seed.

    Raises
    ------
    AgentError
        When the policy, a tool or the outcome raises: the message names the
        step, ``error.steps`` holds the steps done; no Record is returned.
    TypeError
        If ``agent`` is not an Agent or ``seed`` not an integer; if the
        policy returns a Decision whose logprob is not a real number, or the
        outcome returns something that is not a real number.
    ValueError
        If ``seed`` is outside [0, 2**64), the policy returns a positive or
        NaN logprob, or the outcome is not finite.

    Examples
    --------
    >>> from fastcredit.replay import Agent, record
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)),
    ...               lambda a, h, rng: a * 10, outcome=lambda traj: len(traj), max_steps=3)
    >>> rec = record(agent, seed=1)
    >>> rec.n_steps, rec.outcome
    (3, 3.0)
    """
    if not isinstance(agent, Agent):
        raise TypeError(f"agent must be a fastcredit.replay.Agent, got {type(agent).__name__}")
    seed = SEED.check(seed)
    empty = Plan(0)
    run = run_one(rollout(agent, None, empty, (seed, _streams.RECORD, 0)), agent.is_async)
    return Record(agent, run, seed)


def replay(record: Record, intervention=None, *, seed: int | None = None,
           index: int = 0) -> Replay:
    r"""Replay a record, under an intervention or not, and score its fidelity.

    Without an intervention (and without ``seed``) every step is re-decided
    by the policy on the record's own streams and the tools are called
    again: a seeded local policy and tools reproduce the record, action
    match 1.0. With an intervention, steps before its first step are the
    record's (reused, nothing called), the intervention applies, and the
    other steps are re-decided on the fresh streams (seed, replay, index).

    Parameters
    ----------
    record : Record
    intervention : Intervention, optional
        A do() operator of :mod:`fastcredit.replay.interventions`.
    seed : int, optional
        Seed of the fresh streams (default: the record's). Given without an
        intervention, the whole run is re-drawn on fresh streams.
    index : int
        The replay's index: replays of one seed with different indices are
        independent draws.

    Returns
    -------
    Replay
        The trajectory, the action-match rate over the steps left to the
        policy (see the module docstring), the first divergence.

    Raises
    ------
    AgentError
        When the policy, a tool, a context edit or the outcome raises (the
        step is named).
    TypeError
        If ``record`` is not a Record, ``intervention`` is not an
        intervention or None, ``seed`` or ``index`` is not an integer, a
        context edit returns something other than a History, or the agent
        returns a logprob or outcome that is not a real number.
    ValueError
        If ``seed`` is outside [0, 2**64) or ``index`` outside
        [0, 2**64), the intervention names a step the record does not have
        (or the record has none), two changes of the same kind fall on one
        step, or the agent returns a positive or NaN logprob or a
        non-finite outcome.

    Examples
    --------
    >>> from fastcredit.replay import Agent, ForceAction, record, replay
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: float(sum(traj.actions)), max_steps=3)
    >>> rec = record(agent, seed=1)
    >>> rec.actions, rec.outcome
    ((1, 0, 1), 2.0)
    >>> run = replay(rec, ForceAction(1, 5))
    >>> run.trajectory.actions, run.trajectory.outcome, run.n_compared
    ((1, 5, 1), 7.0, 1)
    """
    record = check_record(record)
    index = check_int(index, "index", lo=0, hi=(1 << 64) - 1)
    plan = compile_plan(intervention, record.n_steps)
    if intervention is None and seed is None:
        stream = (record.seed, _streams.RECORD, 0)
    else:
        stream = (record.seed if seed is None else SEED.check(seed), _streams.REPLAY, index)
    agent = record.agent
    run = run_one(rollout(agent, None if intervention is None else record.trajectory, plan,
                          stream), runs_async(agent, plan))
    compared = [t for t in range(plan.start, record.n_steps)
                if t not in plan.forced and t not in plan.held]
    matched = [t < len(run.steps) and run.steps[t].source == "policy"
               and _same(run.steps[t].action, record.steps[t].action) for t in compared]
    rate = sum(matched) / len(compared) if compared else math.nan
    first = next((t for t, ok in zip(compared, matched) if not ok), None)
    return Replay(run, rate, len(compared), first)
