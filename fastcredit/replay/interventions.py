r"""The intervention algebra: do() operators on a recorded run.

An intervention names steps of a record and what to change there. A replay
under it keeps every step before the first intervened step k factual (the
recorded action and observation, reused without calling anything), applies
the change at k, and lets the (possibly swapped) policy re-decide every later
step that no intervention fixes, on fresh random streams, with live tool
calls:

=========================  ===============================================
``Resample(k)``            re-draw :math:`a_k` from the unchanged policy:
                           :math:`do(\xi_k := \xi_k')`, the null intervention
``ForceAction(k, a)``      :math:`do(a_k := a)`
``ReplaceObservation(k,    :math:`do(o_k := o)`, the recorded :math:`a_k`
o)``                       kept
``EditContext(k, f)``      :math:`do(h_k := f(h_k))`, then :math:`a_k` is
                           re-decided on the edited context, which the run
                           continues from
``SwapPolicy(k, pi)``      :math:`do(\pi_t := \pi')` for every t >= k
``Hold(S)``                :math:`do(a_t := a_t^{obs})` for t in S, every
                           other step re-decided: the coalitions of the game
                           over steps
=========================  ===============================================

They are small frozen dataclasses and compose with ``&`` (or
:class:`Compose`): ``SwapPolicy(2, new) & ForceAction(4, "escalate")``. Two
changes of the same kind at the same step are refused (their order would be
ambiguous); a forced action overrides the recorded one that ``Hold`` or
``ReplaceObservation`` would keep.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .._validation import check_int

__all__ = ["Intervention", "Resample", "ForceAction", "ReplaceObservation", "EditContext",
           "SwapPolicy", "Hold", "Compose", "Plan", "plan"]


class Intervention:
    """Base of the do() operators; ``a & b`` composes two.

    Examples
    --------
    >>> from fastcredit.replay import ForceAction, Intervention, Resample
    >>> both = ForceAction(1, "escalate") & Resample(3)
    >>> isinstance(both, Intervention), both
    (True, Compose(parts=(ForceAction(step=1, action='escalate'), Resample(step=3))))
    """

    def __and__(self, other):
        if not isinstance(other, Intervention):
            return NotImplemented
        return Compose(_parts(self) + _parts(other))

    def __post_init__(self):
        # the step is checked when the intervention is built, not first at a replay
        object.__setattr__(self, "step", check_int(self.step, f"{type(self).__name__}.step",
                                                   lo=0))

    def _check(self, n_steps: int) -> None:
        step = check_int(self.step, f"{type(self).__name__}.step", lo=0)
        if step >= n_steps:
            raise ValueError(f"{type(self).__name__}.step must be a step of the record "
                             f"(0..{n_steps - 1}), got {step}")


def _parts(iv):
    return iv.parts if isinstance(iv, Compose) else (iv,)


@dataclass(frozen=True)
class Resample(Intervention):
    """Re-draw the action at ``step`` from the unchanged policy (the null
    intervention: it changes only the random input).

    Parameters
    ----------
    step : int >= 0
        The step re-drawn; the steps before it are the record's.

    Raises
    ------
    TypeError
        If ``step`` is not an integer.
    ValueError
        If ``step`` is negative (or, at a replay, not a step of the record).

    Examples
    --------
    >>> from fastcredit.replay import Agent, Resample, record, replay
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: len(traj), max_steps=3)
    >>> rec = record(agent, seed=1)
    >>> [s.source for s in replay(rec, Resample(1)).trajectory.steps]
    ['recorded', 'policy', 'policy']
    """

    step: int


@dataclass(frozen=True)
class ForceAction(Intervention):
    """Take ``action`` at ``step``.

    Parameters
    ----------
    step : int >= 0
        The step whose action is imposed.
    action : object
        The action taken there.

    Raises
    ------
    TypeError
        If ``step`` is not an integer.
    ValueError
        If ``step`` is negative (or, at a replay, not a step of the record).

    Examples
    --------
    >>> from fastcredit.replay import Agent, ForceAction, record, replay
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: len(traj), max_steps=3)
    >>> run = replay(record(agent, seed=1), ForceAction(1, 5)).trajectory
    >>> run.actions[:2], run.observations[:2], [s.source for s in run.steps]
    ((1, 5), (10, 50), ['recorded', 'forced', 'policy'])
    """

    step: int
    action: Any


@dataclass(frozen=True)
class ReplaceObservation(Intervention):
    """Keep the recorded action at ``step`` but answer it with
    ``observation`` (a :class:`~fastcredit.replay.Transition` to also end or
    continue the run; a plain value continues it).

    Parameters
    ----------
    step : int >= 0
        The step whose observation is replaced.
    observation : object
        The answer given instead of calling the tool.

    Raises
    ------
    TypeError
        If ``step`` is not an integer.
    ValueError
        If ``step`` is negative (or, at a replay, not a step of the record).

    Examples
    --------
    >>> from fastcredit.replay import (Agent, ReplaceObservation, Transition, record,
    ...                                replay)
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: len(traj), max_steps=3)
    >>> done = ReplaceObservation(0, Transition("done", terminated=True))
    >>> run = replay(record(agent, seed=1), done).trajectory
    >>> run.actions, run.observations, run.outcome
    ((1,), ('done',), 1.0)
    """

    step: int
    observation: Any


@dataclass(frozen=True)
class EditContext(Intervention):
    """Replace the history at ``step`` by ``edit(history)`` (a
    :class:`~fastcredit.replay.History`); the policy re-decides that step on
    it and the run continues from it.

    Parameters
    ----------
    step : int >= 0
        The step whose context is edited.
    edit : callable
        ``edit(history) -> History``, sync or async.

    Raises
    ------
    TypeError
        If ``step`` is not an integer or ``edit`` is not callable.
    ValueError
        If ``step`` is negative (or, at a replay, not a step of the record).

    Examples
    --------
    >>> import dataclasses
    >>> from fastcredit.replay import Agent, EditContext, record, replay
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: len(traj), max_steps=3)
    >>> edit = EditContext(1, lambda h: dataclasses.replace(h, initial="new task"))
    >>> replay(record(agent, seed=1), edit).trajectory.steps[1].history
    History(initial='new task', actions=(1,), observations=(10,))
    """

    step: int
    edit: Callable

    def __post_init__(self):
        super().__post_init__()
        if not callable(self.edit):
            raise TypeError(f"EditContext.edit must be callable (history -> history), got "
                            f"{type(self.edit).__name__}")


@dataclass(frozen=True)
class SwapPolicy(Intervention):
    """Decide every step from ``step`` on with ``policy`` (same protocol as
    the agent's).

    Parameters
    ----------
    step : int >= 0
        The first step the new policy decides.
    policy : callable
        ``policy(history, rng) -> action | Decision``, sync or async.

    Raises
    ------
    TypeError
        If ``step`` is not an integer or ``policy`` is not callable.
    ValueError
        If ``step`` is negative (or, at a replay, not a step of the record).

    Examples
    --------
    >>> from fastcredit.replay import Agent, SwapPolicy, record, replay
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: len(traj), max_steps=3)
    >>> replay(record(agent, seed=1), SwapPolicy(1, lambda h, rng: 7)).trajectory.actions
    (1, 7, 7)
    """

    step: int
    policy: Callable

    def __post_init__(self):
        super().__post_init__()
        if not callable(self.policy):
            raise TypeError(f"SwapPolicy.policy must be callable (history, rng), got "
                            f"{type(self.policy).__name__}")


@dataclass(frozen=True)
class Hold(Intervention):
    """Hold the steps in ``steps`` at their recorded actions and re-decide the
    others: a coalition S of the game over steps, v(S) = E[outcome | do(a_t
    := a_t^obs), t in S]. The run is factual up to the first step not in S.

    Parameters
    ----------
    steps : collection of int >= 0
        The coalition S (default empty: every step re-decided).

    Raises
    ------
    TypeError
        If ``steps`` is a string or not a collection, or holds a value that
        is not an integer.
    ValueError
        If a step is negative (or, at a replay, not a step of the record).

    Examples
    --------
    >>> from fastcredit.replay import Agent, Hold, record, replay
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: len(traj), max_steps=3)
    >>> [s.source for s in replay(record(agent, seed=1), Hold({0, 1})).trajectory.steps]
    ['recorded', 'recorded', 'policy']
    """

    steps: frozenset = field(default_factory=frozenset)

    def __post_init__(self):
        if isinstance(self.steps, (str, bytes)):
            raise TypeError(f"Hold.steps must be a collection of step indices, got "
                            f"{type(self.steps).__name__}")
        try:
            steps = list(self.steps)
        except TypeError:
            raise TypeError(f"Hold.steps must be a collection of step indices, got "
                            f"{type(self.steps).__name__}") from None
        object.__setattr__(self, "steps", frozenset(check_int(s, "Hold.steps", lo=0)
                                                    for s in steps))

    def _check(self, n_steps):
        for s in self.steps:
            if s >= n_steps:
                raise ValueError(f"Hold.steps must be steps of the record (0..{n_steps - 1}), "
                                 f"got {s}")


@dataclass(frozen=True)
class Compose(Intervention):
    """Several interventions applied together (what ``a & b`` builds).

    Parameters
    ----------
    parts : sequence of Intervention
        At least one, none of them a Compose; two changes of the same kind
        at the same step are refused when the replay compiles them.

    Raises
    ------
    TypeError
        If ``parts`` is a single intervention, a string or not a sequence,
        or holds something that is not an intervention (or is a Compose).
    ValueError
        If ``parts`` is empty.

    Examples
    --------
    >>> from fastcredit.replay import Agent, Compose, ForceAction, SwapPolicy, record, replay
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: len(traj), max_steps=3)
    >>> both = Compose([SwapPolicy(1, lambda h, rng: 7), ForceAction(2, 0)])
    >>> replay(record(agent, seed=1), both).trajectory.actions
    (1, 7, 0)
    """

    parts: tuple

    def __post_init__(self):
        if isinstance(self.parts, (Intervention, str, bytes)):
            raise TypeError(f"Compose.parts must be a sequence of interventions, got "
                            f"{type(self.parts).__name__}")
        try:
            parts = tuple(self.parts)
        except TypeError:
            raise TypeError(f"Compose.parts must be a sequence of interventions, got "
                            f"{type(self.parts).__name__}") from None
        for p in parts:
            if not isinstance(p, Intervention) or isinstance(p, Compose):
                raise TypeError(f"Compose.parts must be interventions (not nested Compose), "
                                f"got {type(p).__name__}")
        if not parts:
            raise ValueError("Compose.parts must hold at least one intervention")
        object.__setattr__(self, "parts", parts)

    def _check(self, n_steps):
        for p in self.parts:
            p._check(n_steps)


@dataclass(frozen=True)
class Plan:
    """An intervention compiled against a record of ``n_steps`` steps.

    Attributes
    ----------
    start : int
        Steps before it are the record's, reused.
    held : frozenset
        Steps whose recorded action is imposed.
    forced : dict
        step -> forced action.
    observations : dict
        step -> replacing observation.
    edits : dict
        step -> context edit.
    policies : tuple
        (from step, policy) pairs in step order.
    """

    start: int
    held: frozenset = frozenset()
    forced: dict = field(default_factory=dict)
    observations: dict = field(default_factory=dict)
    edits: dict = field(default_factory=dict)
    policies: tuple = ()

    def policy_at(self, step: int, default):
        chosen = default
        for first, policy in self.policies:
            if first <= step:
                chosen = policy
        return chosen


def _put(table: dict, step: int, value, what: str):
    if step in table:
        raise ValueError(f"intervention: two {what} at step {step}; compose one per step")
    table[step] = value


def plan(intervention, n_steps: int, *, name: str = "intervention") -> Plan:
    """Compile ``intervention`` (or None: the whole run re-decided) for a
    record of ``n_steps`` steps."""
    if intervention is None:
        return Plan(0)
    if not isinstance(intervention, Intervention):
        raise TypeError(f"{name} must be a fastcredit.replay intervention (Resample, "
                        f"ForceAction, ...) or None, got {type(intervention).__name__}")
    if n_steps < 1:
        raise ValueError(f"{name}: the record has no steps to intervene on")
    intervention._check(n_steps)
    start = n_steps
    held, forced, observations, edits, policies = set(), {}, {}, {}, {}
    holds = [p for p in _parts(intervention) if isinstance(p, Hold)]
    if holds:
        coalition = frozenset().union(*(p.steps for p in holds))
        held |= coalition
        # factual up to the first step the coalition leaves to the policy
        start = next((t for t in range(n_steps) if t not in coalition), n_steps)
    for p in _parts(intervention):
        if isinstance(p, Hold):
            continue
        k = int(p.step)
        start = min(start, k)
        if isinstance(p, ForceAction):
            _put(forced, k, p.action, "forced actions")
        elif isinstance(p, ReplaceObservation):
            _put(observations, k, p.observation, "replaced observations")
            held.add(k)
        elif isinstance(p, EditContext):
            _put(edits, k, p.edit, "context edits")
        elif isinstance(p, SwapPolicy):
            _put(policies, k, p.policy, "policy swaps")
    return Plan(start, frozenset(held), forced, observations, edits,
                tuple(sorted(policies.items(), key=lambda kv: kv[0])))
