r"""The agent protocol: a policy, an environment and an outcome.

An agent run is a sequence of steps t = 0, 1, ...: the policy sees the
history :math:`h_t = (o_{init}, a_0, o_0, \ldots, a_{t-1}, o_{t-1})` and a
random stream :math:`\xi_t`, and chooses :math:`a_t = \pi(h_t, \xi_t)`; the
environment answers with :math:`o_t = E(a_t, h_t, \zeta_t)` (a tool call's
result) and may end the run; the finished trajectory gets a score
:math:`y = f(\tau)` (for a failure audit, 1.0 when the run ended badly). The
random inputs :math:`\xi_t, \zeta_t` are numpy Generators drawn from seeded
per-step streams (:mod:`fastcredit.replay._streams`), so a run is a function
of its seed and any step can be re-drawn on its own.

A user satisfies the protocol in a few lines around any agent framework or
LLM client::

    def policy(history, rng):              # or: async def policy(history, rng)
        return llm.choose(history)         # an action, or Decision(action, logprob)

    def tools(action, history, rng):       # or an object with .step (and .reset)
        return run_tool(action)            # an observation, or Transition(obs, terminated)

    agent = Agent(policy, tools, outcome=lambda traj: float(refunded(traj)))

Each callable may be synchronous or ``async``; blocking ones run on a thread
pool, async ones on an event loop (:mod:`fastcredit.replay.runner`). The
environment keeps no state between calls: whatever it needs of the past is in
the history it is given, since a replay re-enters a run at any step.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from .._params import MAX_STEPS

__all__ = ["Agent", "Decision", "History", "Step", "Trajectory", "Transition",
           "is_async_callable"]

#: How a step's action came about (``Step.source``).
SOURCES = ("recorded", "policy", "held", "forced")


@dataclass(frozen=True)
class Decision:
    r"""A policy's choice with its log-probability when the policy knows it.

    Attributes
    ----------
    action : object
        Any value comparable with ``==`` (a tool call, a token, a string).
    logprob : float or None
        :math:`\log \pi(a_t \mid h_t)`, None when unknown (hosted models).

    Examples
    --------
    >>> from fastcredit.replay import Agent, Decision, record
    >>> agent = Agent(lambda h, rng: Decision("ask", logprob=-0.5), lambda a, h, rng: "ok",
    ...               outcome=lambda traj: 0.0, max_steps=2)
    >>> [(s.action, s.logprob) for s in record(agent).steps]
    [('ask', -0.5), ('ask', -0.5)]
    """

    action: Any
    logprob: float | None = None


@dataclass(frozen=True)
class Transition:
    """An environment's answer that also ends the run.

    Attributes
    ----------
    observation : object
        What the environment answered.
    terminated : bool
        True when this step ends the run (a final answer, a closed ticket).

    Examples
    --------
    >>> from fastcredit.replay import Agent, Transition, record
    >>> agent = Agent(lambda h, rng: h.step, lambda a, h, rng: Transition(a, terminated=a == 1),
    ...               outcome=lambda traj: 0.0, max_steps=5)
    >>> rec = record(agent)
    >>> rec.actions, rec.trajectory.terminated
    ((0, 1), True)
    """

    observation: Any
    terminated: bool = False


@dataclass(frozen=True)
class History:
    """What the policy sees at step ``len(actions)``: the initial observation
    (the task) and the actions and observations so far.

    Immutable: :meth:`then` returns the history one step later, and a
    context edit (:class:`~fastcredit.replay.interventions.EditContext`)
    returns a new one, e.g. ``dataclasses.replace(h, initial=new_task)``.

    Attributes
    ----------
    initial : object
        The initial observation (the task).
    actions, observations : tuple
        The actions taken and observations received so far, in step order.

    Examples
    --------
    >>> from fastcredit.replay import History
    >>> h = History("task").then("search", "3 hits")
    >>> h
    History(initial='task', actions=('search',), observations=('3 hits',))
    >>> h.step
    1
    """

    initial: Any
    actions: tuple = ()
    observations: tuple = ()

    @property
    def step(self) -> int:
        """The index of the step about to be decided."""
        return len(self.actions)

    def then(self, action, observation) -> History:
        """The history after one more step."""
        return History(self.initial, self.actions + (action,),
                       self.observations + (observation,))


@dataclass(frozen=True)
class Step:
    """One step of a trajectory.

    Attributes
    ----------
    history : History
        The context the policy decided on (after any context edit).
    action, observation : object
        The step's action and the environment's answer.
    logprob : float or None
        The policy's log-probability of ``action`` (None when the policy did
        not give one, or the action was not the policy's).
    source : {"recorded", "policy", "held", "forced"}
        "recorded": reused from the record (a factual prefix, no call made);
        "policy": decided by the (possibly swapped) policy; "held": the
        recorded action imposed on this step's context; "forced": an action
        imposed by an intervention.

    Examples
    --------
    >>> from fastcredit.replay import Agent, record
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: len(traj), max_steps=3)
    >>> step = record(agent, seed=1).steps[1]
    >>> step.index, step.history.actions, step.action, step.observation, step.source
    (1, (1,), 0, 0, 'policy')
    """

    history: History
    action: Any
    observation: Any
    logprob: float | None
    source: str

    @property
    def index(self) -> int:
        return self.history.step


@dataclass(frozen=True)
class Trajectory:
    """A finished run.

    Attributes
    ----------
    initial : object
        The initial observation (the task).
    steps : tuple of Step
        The run's steps in order.
    outcome : float or None
        The outcome score (None only while the outcome function is scoring
        it).
    terminated : bool
        True when the environment ended the run, False when it was cut off
        at ``max_steps``.
    stream : tuple of int
        (seed, domain, rollout index) of its random streams.

    Examples
    --------
    >>> from fastcredit.replay import Agent, record
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: len(traj), max_steps=3)
    >>> traj = record(agent, seed=1).trajectory
    >>> traj.actions, traj.observations, traj.outcome, traj.terminated, len(traj)
    ((1, 0, 1), (10, 0, 10), 3.0, False, 3)
    """

    initial: Any
    steps: tuple
    outcome: float | None
    terminated: bool
    stream: tuple

    @property
    def actions(self) -> tuple:
        return tuple(s.action for s in self.steps)

    @property
    def observations(self) -> tuple:
        return tuple(s.observation for s in self.steps)

    def __len__(self) -> int:
        return len(self.steps)


def is_async_callable(fn) -> bool:
    """Whether calling ``fn`` returns a coroutine (an ``async def`` function,
    or an object whose ``__call__`` is one)."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None))


def _check_callable(fn, name: str):
    if not callable(fn):
        raise TypeError(f"{name} must be callable, got {type(fn).__name__}")
    return fn


@dataclass(frozen=True)
class Agent:
    """A policy, an environment (tools) and an outcome score.

    Parameters
    ----------
    policy : callable
        ``policy(history, rng) -> action | Decision``, sync or async.
    env : callable or object
        ``env(action, history, rng) -> observation | Transition``, or an
        object with that ``step`` method and optionally ``reset(rng) ->
        initial observation`` (Gymnasium's names; without ``reset`` the
        initial observation is ``initial``). Sync or async.
    outcome : callable
        ``outcome(trajectory) -> float``, sync or async: the score of a
        finished run (for a failure audit, 1.0 when it ended badly).
    initial : object
        The initial observation (the task) when ``env`` has no ``reset``.
    max_steps : int in [1, 2**20]
        A run that has not terminated after this many steps is cut off
        (``Trajectory.terminated`` is False).

    Raises
    ------
    TypeError
        If ``policy`` or ``outcome`` is not callable, ``env`` is neither
        callable nor has a ``step`` method (or its ``reset`` is not
        callable), or ``max_steps`` is not an integer.
    ValueError
        If ``max_steps`` is not in [1, 2**20].

    Examples
    --------
    >>> from fastcredit.replay import Agent, record
    >>> agent = Agent(lambda h, rng: int(rng.integers(2)), lambda a, h, rng: a * 10,
    ...               outcome=lambda traj: float(sum(traj.actions)), initial="task",
    ...               max_steps=3)
    >>> agent.is_async, record(agent, seed=1).outcome
    (False, 2.0)
    """

    policy: Callable
    env: Any
    outcome: Callable
    initial: Any = None
    max_steps: int = 32
    step_fn: Callable = field(init=False, repr=False, compare=False)
    reset_fn: Callable | None = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        _check_callable(self.policy, "policy")
        _check_callable(self.outcome, "outcome")
        step = getattr(self.env, "step", None)
        if callable(step):
            reset = getattr(self.env, "reset", None)
            if reset is not None and not callable(reset):
                raise TypeError(f"env.reset must be callable, got {type(reset).__name__}")
        elif callable(self.env):
            step, reset = self.env, None
        else:
            raise TypeError(f"env must be callable (action, history, rng) or have a step "
                            f"method, got {type(self.env).__name__}")
        object.__setattr__(self, "step_fn", step)
        object.__setattr__(self, "reset_fn", reset)
        object.__setattr__(self, "max_steps", MAX_STEPS.check(self.max_steps))

    @property
    def is_async(self) -> bool:
        """Whether any of its callables is async (its runs then go on an
        event loop)."""
        return any(is_async_callable(fn) for fn in
                   (self.policy, self.step_fn, self.reset_fn, self.outcome) if fn is not None)
