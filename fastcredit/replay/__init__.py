"""Causal agent replay: record a stochastic agent, intervene on its steps, and
attribute its outcome with honest intervals.

- :mod:`.agent`: the protocol (``Agent(policy, env, outcome)``, ``Decision``,
  ``Transition``, ``History``) and the recorded ``Step`` / ``Trajectory``;
- :mod:`.record`: :func:`record` and :func:`replay` with the action-match rate;
- :mod:`.interventions`: the do() operators;
- :mod:`.runner`: sync/async drivers, concurrency, :class:`AgentError`;
- :mod:`.attribution`: the game over steps (:class:`StepGame`), :func:`shapley`
  and :func:`contrastive` (never cached, a budget in rollouts);
- :mod:`.examples`: offline agents with planted answers (CAR's scenarios);
- :mod:`.lm`: a tiny local language model as a policy (torch, transformers).
"""
from . import examples
from .agent import Agent, Decision, History, Step, Trajectory, Transition
from .attribution import StepEffects, StepGame, contrastive, shapley
from .interventions import (Compose, EditContext, ForceAction, Hold, Intervention,
                            ReplaceObservation, Resample, SwapPolicy)
from .record import Record, Replay, record, replay
from .runner import AgentError

__all__ = ["Agent", "Decision", "History", "Step", "Trajectory", "Transition",
           "Intervention", "Resample", "ForceAction", "ReplaceObservation", "EditContext",
           "SwapPolicy", "Hold", "Compose", "Record", "Replay", "record", "replay",
           "AgentError", "StepGame", "StepEffects", "shapley", "contrastive", "examples"]
