r"""The tree benchmark: does counterfactual-tree credit teach an agent a
multi-step workflow better than its baselines, and at what auxiliary cost?

On the synthetic retrieval workflow (:mod:`fastcredit.learning.workflow`) a
linear softmax actor (50 weights, :math:`\theta = 0` at the start: uniform
actions) is trained by PPO (:mod:`fastcredit.learning.ppo`) on the decision
records of its own episodes, with the credit of each method:

* ``asct_uniform``, ``asct_uct``, ``asct_agent_uct``: a counterfactual tree
  of ``budget`` trials at every visited state, credit
  :math:`Q(s_t, a_t) - \sum_b \pi(b \mid s_t) Q(s_t, b)`;
* ``vine``: VinePPO, :math:`\hat V(s_{t+1}) - \hat V(s_t)` from ``k``
  Monte-Carlo continuations per state;
* ``return``: trajectory-return PPO, the episode's return minus the batch's
  mean return, for every decision.

Advantages are standardised over each batch for every method. Each update
runs ``episodes`` episodes from request roots drawn afresh
(``SeedSequence([seed, run, update])``), then ``epochs`` Adam steps.
The score, **held-out utility**, is the trained actor's exact expected
utility (by enumeration) over the request distribution (all 16 kinds x levels
equally likely; no request is ever a training sample, they are the
population). The **auxiliary cost** is the cost units the method's search
executed per episode (the ledger; the actor's own steps excluded).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .._params import (CONTINUATIONS, COST_PRICE, EPISODES, EXPLORATION, LEARNING_RATE,
                       PPO_CLIP, PPO_EPOCHS, PPO_UPDATES, RUNS, SEED, TREE_BUDGET, TREE_METHOD)
from .._validation import as_sequence, check_bool, check_int
from . import ppo, workflow

__all__ = ["TREE_METHODS", "TreeBenchmarkResult", "tree_benchmark", "expected_utility"]

#: Methods compared by :func:`tree_benchmark`, in report order (fastcredit._params).
TREE_METHODS = TREE_METHOD.values
_RULE = {"asct_uniform": "uniform", "asct_uct": "uct", "asct_agent_uct": "agent_uct"}
_ALL_ROOTS = [workflow.root(k, v) for k in range(4) for v in range(4)]


def expected_utility(theta) -> float:
    """The actor's exact expected utility over the request distribution
    (every kind and level equally likely), by enumeration.

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit.learning import workflow, workflow_benchmark
    >>> round(workflow_benchmark.expected_utility(np.zeros(workflow.N_FEATURES)), 3)
    -0.529
    """
    from ..treesearch import SoftmaxActor, exact_q
    from .._jit.trees import probs
    env = workflow.environment()
    actor = SoftmaxActor(theta)
    total = 0.0
    for r in _ALL_ROOTS:
        q = exact_q(env, r, (), actor)
        p = np.zeros(q.shape[0])
        probs(env.features, actor.theta, np.int64(r), q.shape[0], np.empty(env.n_features), p)
        total += p @ q
    return float(total / len(_ALL_ROOTS))


@dataclass(frozen=True)
class TreeBenchmarkResult:
    """What :func:`tree_benchmark` measured.

    Attributes
    ----------
    methods : tuple of str
        The methods compared.
    utility : dict
        method -> (runs,) held-out utility after training.
    curves : dict
        method -> (runs, len(checkpoints)) held-out utility.
    checkpoints : tuple of int
        Updates after which the actor was scored.
    aux_cost : dict
        method -> (runs,) auxiliary cost units per episode.
    aux_executed, aux_reused : dict
        method -> (runs,) auxiliary steps per episode executed and reused
        from the prefix cache.
    initial : float
        The initial (uniform) actor's held-out utility.
    settings : dict
        The parameters of the run.
    seconds : float
        Wall time of the whole benchmark.

    Examples
    --------
    >>> import fastcredit as fc
    >>> res = fc.learning.tree_benchmark(methods=("return", "vine"), runs=1, updates=2,
    ...                                  episodes=2, k=2)
    >>> res.checkpoints, round(res.initial, 3)
    ((1, 2), -0.529)
    >>> res.aux_cost["return"], res.aux_cost["vine"], res.aux_reused["vine"]
    (array([0.]), array([14.]), array([19.5]))
    """
    methods: tuple
    utility: dict
    curves: dict
    checkpoints: tuple
    aux_cost: dict
    aux_executed: dict
    aux_reused: dict
    initial: float
    settings: dict
    seconds: float

    def table(self) -> str:
        """Held-out utility (mean +- sd over runs) after each checkpoint and
        auxiliary cost per episode; rows by final utility."""
        s = self.settings
        lines = [f"Held-out expected utility of the retrieval workflow (exact, over all "
                 f"requests); {s['runs']} runs x {s['updates']} PPO updates of "
                 f"{s['episodes']} episodes; tree budget {s['budget']}, VinePPO k {s['k']}",
                 f"  {'method':<16}" + "".join(f"{'after ' + str(c):>17}"
                                               for c in self.checkpoints) +
                 f"{'aux cost/ep':>13}{'aux steps/ep':>14}{'reused':>9}"]
        for m in sorted(self.methods, key=lambda m: -self.utility[m].mean()):
            v = self.curves[m]
            sd = v.std(axis=0, ddof=1) if v.shape[0] > 1 else np.zeros(v.shape[1])
            cells = "".join(f"{a:>9.3f} +- {b:.3f}" for a, b in zip(v.mean(axis=0), sd))
            lines.append(f"  {m:<16}{cells}{self.aux_cost[m].mean():>13.1f}"
                         f"{self.aux_executed[m].mean():>14.1f}"
                         f"{self.aux_reused[m].mean():>9.1f}")
        lines.append(f"  {'initial actor':<16}" + "".join(f"{self.initial:>17.3f}"
                                                          for _ in self.checkpoints))
        return "\n".join(lines)


def _seed(*parts) -> int:
    return int(np.random.SeedSequence(list(parts)).generate_state(1, np.uint64)[0])


def _train(method, run, *, seed, updates, episodes, budget, k, c, c_tok, epochs, lr, clip,
           checkpoints, use_cache):
    from ..treesearch import SoftmaxActor, decision_records
    env = workflow.environment()
    theta = np.zeros(workflow.N_FEATURES)
    curve, aux = [], np.zeros(3)
    credit = "asct" if method in _RULE else method
    for u in range(updates):
        roots = workflow.sample_roots(episodes, seed=_seed(seed, run, u))
        actor = SoftmaxActor(theta)
        recs = [decision_records(env, int(r), actor, credit=credit,
                                 rule=_RULE.get(method, "uniform"), budget=budget, k=k, c=c,
                                 c_tok=c_tok, seed=_seed(seed, run, u, e),
                                 use_cache=use_cache)
                for e, r in enumerate(roots)]
        for rec in recs:
            aux += (rec.ledger.cost, rec.ledger.executed, rec.ledger.reused)
        recs = [r for r in recs if r.actions.size]
        if recs:
            adv = np.concatenate([r.credit for r in recs])
            if method == "return":
                adv = adv - np.mean([r.utility for r in recs])
            ok = ~np.isnan(adv)
            if ok.sum() > 1:
                adv = (adv - adv[ok].mean()) / (adv[ok].std() + 1e-8)
            theta = ppo.ppo_update(theta, np.concatenate([r.features for r in recs]),
                                   np.concatenate([r.n_legal for r in recs]),
                                   np.concatenate([r.actions for r in recs]),
                                   np.concatenate([r.behaviour for r in recs]), adv,
                                   clip=clip, epochs=epochs, lr=lr)
        if u + 1 in checkpoints:
            curve.append(expected_utility(theta))
    return curve, aux / (updates * episodes)


def tree_benchmark(*, methods=TREE_METHODS, runs: int = 5, updates: int = 60,
                   episodes: int = 16, budget: int = 10, k: int = 10, c: float = 1.0,
                   c_tok: float = 0.05, epochs: int = 4, lr: float = 0.1, clip: float = 0.2,
                   checkpoints=None, use_cache: bool = True, seed: int = 0,
                   progress=None) -> TreeBenchmarkResult:
    """Train the workflow's actor with each method ``runs`` times and score
    its held-out utility and auxiliary cost (module docstring).

    Parameters
    ----------
    methods : sequence from :data:`TREE_METHODS`
        The methods compared, distinct.
    runs, updates, episodes : int
        Training runs per method, PPO updates per run, episodes per update.
    budget : int in [1, 2**24]
        Trials per tree (ASCT).
    k : int in [1, 2**24]
        Continuations per state (VinePPO).
    c, c_tok : float
        UCT's exploration constant; AgentUCT's price of a unit of cost.
    epochs, lr, clip
        The PPO update (:func:`fastcredit.learning.ppo.ppo_update`).
    checkpoints : sequence of int, optional
        Updates after which the actor is scored (default updates // 4,
        updates // 2 and updates).
    use_cache : bool
        The searches' prefix cache (off: the same results, more executed steps).
    seed : int in [0, 2**64)
        Seeds the episodes' roots and searches.
    progress : callable, optional
        Called with a line of text after each run.

    Returns
    -------
    TreeBenchmarkResult
        Held-out utility curves and auxiliary work of every run of every
        method.

    Raises
    ------
    ValueError
        If ``methods`` is empty, repeats a name or names an unknown method,
        ``runs`` is not in [1, 1000], ``updates`` or ``episodes`` is not in
        [1, 2**20], a checkpoint is not in [1, updates], ``budget`` or ``k``
        is not in [1, 2**24], ``c`` or ``c_tok`` is negative or not finite,
        ``epochs``, ``lr`` or ``clip`` is out of range as in
        :func:`fastcredit.learning.ppo.ppo_update`, or ``seed`` is outside
        [0, 2**64).
    TypeError
        If ``methods`` or ``checkpoints`` is a single string or not a
        sequence, ``progress`` is not callable, ``use_cache`` is not a bool,
        an integer argument is not an integer, or a real one not a real
        number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> res = fc.learning.tree_benchmark(methods=("return",), runs=1, updates=2, episodes=4)
    >>> res.curves["return"].shape
    (1, 2)
    """
    t0 = time.perf_counter()
    methods = tuple(as_sequence(methods, "methods", "method names"))
    for m in methods:
        TREE_METHOD.check(m)
    if not methods or len(set(methods)) != len(methods):
        raise ValueError(f"methods must be a non-empty list of distinct names, got {methods!r}")
    if progress is not None and not callable(progress):
        raise TypeError("progress must be callable (it is given a line of text)")
    runs = RUNS.check(runs)
    updates = PPO_UPDATES.check(updates)
    episodes = EPISODES.check(episodes)
    if checkpoints is None:
        checkpoints = {updates // 4, updates // 2}
    else:
        checkpoints = {check_int(x, "checkpoints", lo=1, hi=updates)
                       for x in as_sequence(checkpoints, "checkpoints", "update counts")}
    checkpoints = tuple(sorted(x for x in checkpoints | {updates} if x >= 1))
    opts = dict(seed=SEED.check(seed), updates=updates, episodes=episodes,
                budget=TREE_BUDGET.check(budget), k=CONTINUATIONS.check(k),
                c=EXPLORATION.check(c), c_tok=COST_PRICE.check(c_tok),
                epochs=PPO_EPOCHS.check(epochs), lr=LEARNING_RATE.check(lr),
                clip=PPO_CLIP.check(clip), checkpoints=checkpoints,
                use_cache=check_bool(use_cache, "use_cache"))
    initial = expected_utility(np.zeros(workflow.N_FEATURES))
    curves, util, cost, ex, re = {}, {}, {}, {}, {}
    for m in methods:
        rows, auxs = [], []
        for r in range(runs):
            curve, aux = _train(m, r, **opts)
            rows.append(curve)
            auxs.append(aux)
            if progress is not None:
                progress(f"{m} run {r + 1}/{runs}: held-out utility {curve[-1]:.3f}, "
                         f"aux cost/episode {aux[0]:.1f} ({time.perf_counter() - t0:.1f} s)")
        curves[m] = np.array(rows)
        util[m] = curves[m][:, -1]
        auxs = np.array(auxs)
        cost[m], ex[m], re[m] = auxs[:, 0], auxs[:, 1], auxs[:, 2]
    settings = {key: v for key, v in opts.items() if key != "checkpoints"}
    settings["runs"] = runs
    return TreeBenchmarkResult(methods, util, curves, checkpoints, cost, ex, re, initial,
                               settings, time.perf_counter() - t0)
