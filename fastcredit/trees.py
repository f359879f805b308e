"""Counterfactual-tree (ASCT) credit and trial allocation rules.

At states the actor visited, a budgeted search evaluates alternative legal
actions; the action values Q(s, a) then become credit centered on the actor's
own policy, which PPO consumes like an advantage:

* :func:`actor_centered_credit` - credit(a) = Q(s, a) - sum_b pi(b|s) Q(s, b)
  over ragged states (CSR over legal actions), with the sampled-action gather
  and per-batch standardisation PPO code needs;
* :class:`Uniform`, :class:`UCT`, :class:`AgentUCT` - ask/tell rules that
  spend a budget of trials over one state's legal actions, seeded with the
  counter-based RNG every fastcredit kernel uses;
* the engine that drives an environment to produce Q (counterfactual trees
  over recoverable prefixes with a prefix cache and a ledger, decision
  records, diagnostics) lives in :mod:`fastcredit.treesearch`; its public
  names are importable from here too (loaded on first use).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._backend import kernels, resolve
from ._constants import (ALLOC_AGENT_UCT, ALLOC_UCT, ALLOC_UNIFORM, CREDIT_ILLEGAL_ACTION,
                         CREDIT_NOT_A_POLICY)
from ._params import BASELINE, SEED
from ._validation import (as_array, check_bool, check_float, check_int, check_memory,
                          csr_offsets, float64_array, int_array, output)

#: fastcredit.treesearch's names, served from here on first use (PEP 562):
#: the engine imports this module's kernels, so it cannot be imported here.
_ENGINE = ("JitEnvironment", "SoftmaxActor", "PrefixCache", "Ledger", "RunLedger",
           "TreeResult", "DecisionRecords", "counterfactual_tree", "monte_carlo_value",
           "exact_q", "decision_records", "state_seed", "ALLOCATORS", "CREDIT_SOURCES",
           "Repeatability", "repeatability", "j_search", "centring_sign_flips",
           "cost_adjusted_value")

__all__ = ["TreeCredit", "actor_centered_credit", "Uniform", "UCT", "AgentUCT", *_ENGINE]


def __getattr__(name: str):
    if name in _ENGINE:
        from . import treesearch
        return getattr(treesearch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class TreeCredit:
    """Result of :func:`actor_centered_credit`.

    Attributes
    ----------
    credit : ndarray (n_values,)
        Q(s, a) - baseline(s) for every legal action (CSR order).
    baseline : ndarray (n_states,)
        The state's value under the baseline policy (0 for a state with no
        legal actions).
    sampled : ndarray (n_states,) or None
        Credit of the action the actor took in each state (standardised over
        the batch when asked), or None when no ``actions`` were given.

    Examples
    --------
    >>> import fastcredit as fc
    >>> res = fc.actor_centered_credit(q=[1.0, 0.0, 2.0, 4.0], offsets=[0, 2, 4],
    ...                                baseline="uniform")
    >>> res.credit, res.baseline, res.sampled
    (array([ 0.5, -0.5, -1. ,  1. ]), array([0.5, 3. ]), None)
    """
    credit: np.ndarray
    baseline: np.ndarray
    sampled: np.ndarray | None


def actor_centered_credit(q, pi=None, offsets=None, *, baseline="actor", actions=None,
                          standardize=False, eps=1e-8, atol=1e-6, out=None,
                          backend=None) -> TreeCredit:
    r"""Counterfactual-tree credit centered on the actor's policy.

    .. math:: \text{credit}(s, a) = Q(s, a) - \sum_b \pi(b \mid s) Q(s, b)

    (``baseline="actor"``) or :math:`Q(s, a) - \frac{1}{n_s} \sum_b Q(s, b)`
    (``baseline="uniform"``). Under the actor baseline the credit has zero
    mean under the actor's own policy at every state, so it is an advantage.

    Parameters
    ----------
    q : array_like, shape (n_values,)
        Action values of the legal actions of every state, state by state.
    pi : array_like, shape (n_values,)
        The actor's probabilities of the same actions: finite, >= 0 and
        summing to 1 within ``atol`` at every state with legal actions.
        Not needed for ``baseline="uniform"``.
    offsets : array_like of int, shape (n_states + 1,)
        CSR offsets: state s owns entries offsets[s] .. offsets[s+1]-1.
    baseline : {"actor", "uniform"}
        The policy the credit is centred on (see above).
    actions : array_like of int, shape (n_states,), optional
        Index of the sampled action within each state's legal actions
        (0 <= actions[s] < n_s); gathers ``sampled``.
    standardize : bool
        Standardise ``sampled`` over the batch, (x - mean) / (sd + eps) with
        the unbiased sd, as PPO implementations normalise advantages.
    eps : float >= 0
        Added to the sd when standardising.
    atol : float >= 0
        Tolerance of the sum-to-one check of ``pi``.
    out : TreeCredit, optional
        Arrays to write the result into (e.g. the previous call's result, in
        a training loop): its ``credit`` (n_values,), ``baseline``
        (n_states,) and, with ``actions``, ``sampled`` (n_states,), float64,
        C-contiguous, writeable and sharing no memory with the inputs or one
        another. The result holds these arrays (partly written when the
        call raises on ``pi`` or ``actions``, which the kernel checks in its
        pass).
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Returns
    -------
    TreeCredit
        The credit of every legal action, each state's baseline and the
        sampled actions' credit.

    Raises
    ------
    ValueError
        If ``q`` is not one-dimensional, ``offsets`` is not valid CSR over
        it (shape (n_states + 1,), starting at 0, non-decreasing, ending at
        len(q)), ``pi`` differs from ``q`` in shape, holds a negative or
        non-finite value or does not sum to 1 within ``atol`` at a state,
        ``actions`` does not have shape (n_states,) or names an action
        outside its state's legal ones, ``standardize=True`` is given
        without ``actions``, ``baseline`` is not "actor" or "uniform",
        ``eps`` or ``atol`` is negative or not finite, an array of ``out``
        has the wrong shape, is not writeable and C-contiguous or shares
        memory with an input or another of them, or ``backend`` is not
        None, "c" or "numba" or is not available.
    TypeError
        If ``offsets`` is missing, ``pi`` is missing with
        ``baseline="actor"``, ``q`` or ``pi`` is not a real array,
        ``offsets`` or ``actions`` not integer, ``standardize`` not a bool,
        ``eps`` or ``atol`` not a real number, or ``out`` is not a
        TreeCredit of float64 arrays.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> res = fc.actor_centered_credit(q=[1.0, 0.0, 2.0, 4.0], pi=[0.5, 0.5, 0.25, 0.75],
    ...                                offsets=[0, 2, 4], actions=[0, 0])
    >>> res.credit, res.sampled
    (array([ 0.5, -0.5, -1.5,  0.5]), array([ 0.5, -1.5]))
    """
    baseline = BASELINE.check(baseline)
    standardize = check_bool(standardize, "standardize")
    eps = check_float(eps, "eps", lo=0.0)
    qv = float64_array(q, "q")
    if qv.ndim != 1:
        raise ValueError(f"q must have shape (n_values,), got {qv.shape}")
    if offsets is None:
        raise TypeError("actor_centered_credit needs offsets (CSR over legal actions)")
    offsets = as_array(offsets, "offsets")
    n_states = offsets.shape[0] - 1 if offsets.ndim == 1 else -1
    if n_states < 0:
        raise ValueError(f"offsets must have shape (n_states + 1,), got {offsets.shape}")
    off = csr_offsets(offsets, n_states, qv.shape[0], row_name="state")
    uniform = baseline == "uniform"
    pv = None
    atol = check_float(atol, "atol", lo=0.0)
    if not uniform:
        if pi is None:
            raise TypeError('baseline="actor" needs pi')
        pv = float64_array(pi, "pi")
        if pv.shape != qv.shape:
            raise ValueError(f"pi must have q's shape {qv.shape}, got {pv.shape}")
    act = sampled = None
    if actions is not None:
        act = int_array(actions, "actions")
        if act.shape != (n_states,):
            raise ValueError(f"actions must have shape ({n_states},), got {act.shape}")
    elif standardize:
        raise ValueError("standardize=True needs actions (it standardises the sampled credit)")
    if out is not None and not isinstance(out, TreeCredit):
        raise TypeError(f"out must be a TreeCredit (e.g. a previous result), got "
                        f"{type(out).__name__}")
    inputs = {"q": (q, qv), "pi": (pi, pv), "offsets": (offsets, off), "actions": (actions, act)}
    credit = output(None if out is None else out.credit, qv.shape, "out.credit", inputs=inputs)
    base = output(None if out is None else out.baseline, (n_states,), "out.baseline",
                  inputs={**inputs, "out.credit": credit})
    if act is not None:
        sampled = output(None if out is None else out.sampled, (n_states,), "out.sampled",
                         inputs={**inputs, "out.credit": credit, "out.baseline": base})
    impl = kernels("trees", resolve("trees.credit", backend))
    # the kernel checks pi and the actions in its pass and stops at the
    # first state at fault
    status, s = impl.actor_centered_credit(qv, pv, off, uniform, atol, act, credit, base,
                                           sampled)
    if status == CREDIT_NOT_A_POLICY:
        _refuse_policy(pv[off[s]:off[s + 1]], off[s], s, atol)
    if status == CREDIT_ILLEGAL_ACTION:
        raise ValueError(f"actions[{s}] = {act[s]} is not a legal action index of state {s} "
                         f"(it has {off[s + 1] - off[s]})")
    if standardize:
        sd = sampled.std(ddof=1) if sampled.size > 1 else 0.0
        sampled -= sampled.mean()   # in place: the same bits, no new pages
        sampled /= sd + eps
    return TreeCredit(credit, base, sampled)


def _refuse_policy(p, first, state, atol):
    """The error for a state whose probabilities ``p`` (entries ``first``..)
    are not a policy: a negative or non-finite entry, else their sum (in
    index order, as the kernels add it) more than ``atol`` from 1."""
    bad = np.flatnonzero(~(np.isfinite(p) & (p >= 0)))
    if bad.size:
        raise ValueError(f"pi must be finite and >= 0; got {p[bad[0]]} at entry "
                         f"{first + bad[0]} (state {state})")
    raise ValueError(f"pi must sum to 1 over each state's legal actions (atol {atol}); "
                     f"state {state} sums to {np.add.accumulate(p)[-1]}")


class _Allocator:
    """Shared ask/tell bookkeeping of the allocation rules. The state the
    kernel reads (the counts, sums and costs) is private: the properties
    hand out copies, so only ``tell`` changes it, with checked values."""

    _rule = ALLOC_UNIFORM

    def __init__(self, n_actions: int, *, seed: int = 0, backend=None):
        n_actions = check_int(n_actions, "n_actions", lo=1, hi=2**32)
        self._seed = SEED.check(seed)
        self._key = np.uint64(self._seed)   # the kernel's argument, made once
        check_memory(24 * n_actions, lambda: f"n_actions = {n_actions:,} (a count, a sum and "
                                             f"a cost per action)")
        self._counts = np.zeros(n_actions, dtype=np.int64)
        self._sums = np.zeros(n_actions)
        self._costs = np.zeros(n_actions)
        self._c = 0.0
        self._c_tok = 0.0
        self._impl = kernels("trees", resolve("trees.allocation", backend))
        self._step = 0

    @property
    def n_actions(self) -> int:
        """Legal actions of the state."""
        return self._counts.shape[0]

    @property
    def seed(self) -> int:
        """The seed the draws of ``ask`` are keyed by."""
        return self._seed

    @property
    def counts(self) -> np.ndarray:
        """Trials told of each action (a copy)."""
        return self._counts.copy()

    @property
    def sums(self) -> np.ndarray:
        """Sum of the values told of each action (a copy)."""
        return self._sums.copy()

    @property
    def n_trials(self) -> int:
        """Trials told so far."""
        return int(self._counts.sum())

    @property
    def means(self) -> np.ndarray:
        """Mean value of each action (NaN where untried)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self._counts > 0, self._sums / np.maximum(self._counts, 1), np.nan)

    def ask(self) -> int:
        """The action to try next (every call draws from a fresh stream)."""
        a = self._impl.allocation_pick(self._rule, self._counts, self._sums, self._costs,
                                       self._c, self._c_tok, self._key, self._step)
        if a < 0:
            _refuse_pick()
        self._step += 1
        return a

    def tell(self, action: int, value: float) -> None:
        """Record the value of one trial of ``action``."""
        action = check_int(action, "action", lo=0, hi=self.n_actions - 1)
        self._record(action, check_float(value, "value"))

    def run(self, evaluate, budget: int):
        """Spend ``budget`` trials: ``tell(a, evaluate(a))`` for each asked a.
        Returns self."""
        if not callable(evaluate):
            raise TypeError(f"evaluate must be callable, evaluate(action) -> float; got "
                            f"{type(evaluate).__name__}")
        budget = check_int(budget, "budget", lo=0)
        # One kernel call a trial adds the last trial's value and picks the
        # next action (allocation_tell_pick), refusing a value that is not
        # finite before adding it, and no action; its operands are locals.
        # The two NumPy tallies and the finiteness check of a trial in Python
        # were ~0.3 us of its 1.2 (Numba; issue 33).
        step_kernel, rule, counts, sums = (self._impl.allocation_tell_pick, self._rule,
                                           self._counts, self._sums)
        costs, c, c_tok, key = self._costs, self._c, self._c_tok, self._key
        step, told, value = self._step, -1, 0.0
        try:
            for _ in range(budget):
                try:
                    a = step_kernel(rule, counts, sums, costs, c, c_tok, key, step, told, value)
                except ValueError:
                    raise _trial_refused(told, value) from None
                step += 1
                try:
                    value = evaluate(a)
                except Exception as exc:
                    raise RuntimeError(f"evaluate raised on action {a}: {exc!r}") from exc
                if not isinstance(value, float):   # a float's finiteness: the next call's
                    value = check_float(value, f"evaluate({a}) (the value evaluate returned)")
                told = a
        finally:
            self._step = step       # the trials asked, as ask counts them
        if told >= 0:               # the last trial
            if not math.isfinite(value):
                raise _trial_refused(told, value)
            self._record(told, value)
        return self

    def _record(self, action, value):
        """tell's bookkeeping, for checked arguments (run's last trial's too)."""
        self._counts[action] += 1
        self._sums[action] += value


def _trial_refused(told, value):
    """The error of run's refused trial: the value of the trial told when
    it is not finite (nothing was added), else that no action can be picked."""
    if told >= 0 and not math.isfinite(value):
        return ValueError(f"evaluate({told}) (the value evaluate returned) must be finite, "
                          f"got {value}")
    return ValueError(_NO_PICK)


def _refuse_pick():
    """The error when no action can be picked: Numba's answer where C
    refuses, no score equals the best one."""
    raise ValueError(_NO_PICK)


_NO_PICK = ("no action can be picked: a score is NaN (the mean value, "
            "c * sqrt(log(N + 1) / n) and c_tok * cost overflowed to "
            "opposite infinities); use smaller c, c_tok, costs or values")


class Uniform(_Allocator):
    """Uniform allocation: an action with the fewest trials, ties broken at
    random, so every legal action is tried once before any is repeated and
    the budget is then spread evenly.

    Parameters
    ----------
    n_actions : int in [1, 2**32]
        Legal actions of the state.
    seed : int in [0, 2**64)
        Keys the random tie-breaks of :meth:`ask`.
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Attributes
    ----------
    counts, sums, means : ndarray (n_actions,)
        Trials, summed values and mean value of each action (copies; NaN
        mean where untried).
    n_trials : int
        Trials told so far.

    Raises
    ------
    ValueError
        If ``n_actions`` is not in [1, 2**32] or its bookkeeping would not
        fit in memory, ``seed`` is outside [0, 2**64), or ``backend`` is
        not None, "c" or "numba" or is not available.
    TypeError
        If ``n_actions`` or ``seed`` is not an integer.

    Examples
    --------
    >>> import fastcredit as fc
    >>> rule = fc.Uniform(3, seed=1)
    >>> sorted(rule.run(lambda a: float(a), budget=3).counts.tolist())
    [1, 1, 1]
    """


class UCT(_Allocator):
    r"""UCT allocation: untried actions first (in random order), then the
    argmax of :math:`\bar Q_a + c \sqrt{\log(N + 1) / n_a}` with N trials so
    far and :math:`n_a` of action a; ties broken at random.

    Parameters
    ----------
    n_actions : int in [1, 2**32]
        Legal actions of the state.
    c : float
        Exploration constant (>= 0).
    seed : int in [0, 2**64)
        Keys the random tie-breaks of :meth:`ask`.
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Raises
    ------
    ValueError
        If ``c`` is negative or not finite, or another argument is out of
        range as in :class:`Uniform`.
    TypeError
        If ``c`` is not a real number, or ``n_actions`` or ``seed`` not an
        integer.

    Examples
    --------
    >>> import fastcredit as fc
    >>> rule = fc.UCT(3, c=0.5, seed=0).run(lambda a: [0.0, 1.0, 0.2][a], budget=12)
    >>> rule.counts.tolist(), rule.means.tolist()
    ([1, 10, 1], [0.0, 1.0, 0.2])
    """

    _rule = ALLOC_UCT

    def __init__(self, n_actions: int, *, c: float = math.sqrt(2), seed: int = 0,
                 backend=None):
        super().__init__(n_actions, seed=seed, backend=backend)
        self._c = check_float(c, "c", lo=0.0)


class AgentUCT(UCT):
    r"""Cost-aware UCT for agent rollouts: the UCT score minus
    :math:`c_{tok}` times the predicted uncached cost of a trial (e.g. the
    tokens a rollout of that action would generate beyond cached prefixes);
    among untried actions the cheapest goes first. When utilities tie, the
    cheaper action gets the trials.

    Parameters
    ----------
    n_actions : int in [1, 2**32]
        Legal actions of the state.
    costs : array_like, shape (n_actions,)
        Predicted uncached cost of the next trial of each action (finite,
        >= 0); update one with ``tell(a, value, cost=...)``.
    c : float
        Exploration constant (>= 0).
    c_tok : float
        Price of one unit of cost in value units (>= 0).
    seed : int in [0, 2**64)
        Keys the random tie-breaks of :meth:`ask`.
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Raises
    ------
    ValueError
        If ``costs`` does not have shape (n_actions,) or holds a negative or
        non-finite value, ``c_tok`` is negative or not finite, or another
        argument is out of range as in :class:`UCT`.
    TypeError
        If ``costs`` is not a real array, ``c_tok`` not a real number, or
        another argument has the wrong type as in :class:`UCT`.

    Examples
    --------
    >>> import fastcredit as fc
    >>> rule = fc.AgentUCT(2, costs=[0.0, 5.0], c_tok=0.1, seed=0)
    >>> rule.run(lambda a: 1.0, budget=20).counts.tolist()
    [15, 5]
    """

    _rule = ALLOC_AGENT_UCT

    def __init__(self, n_actions: int, costs, *, c: float = math.sqrt(2), c_tok: float = 1.0,
                 seed: int = 0, backend=None):
        super().__init__(n_actions, c=c, seed=seed, backend=backend)
        self._c_tok = check_float(c_tok, "c_tok", lo=0.0)
        cost = float64_array(costs, "costs")
        if cost.shape != (self.n_actions,):
            raise ValueError(f"costs must have shape ({self.n_actions},), got {np.shape(costs)}")
        if not (np.isfinite(cost) & (cost >= 0)).all():
            raise ValueError("costs must be finite and >= 0")
        self._costs = cost.copy()

    @property
    def costs(self) -> np.ndarray:
        """Predicted uncached cost of the next trial of each action."""
        return self._costs.copy()

    def tell(self, action: int, value: float, cost: float | None = None) -> None:
        """Record a trial; ``cost`` (optional) replaces the action's predicted
        uncached cost for its next trial. A call that raises changes
        nothing."""
        if cost is not None:
            cost = check_float(cost, "cost", lo=0.0)
        super().tell(action, value)
        if cost is not None:
            self._costs[action] = cost
