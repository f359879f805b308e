"""Environments with recoverable prefixes, the actor, the prefix cache and the
ledger of realized work.

**The protocol.** A state is recoverable from its action prefix: replaying
the same actions from the same root reaches the same state at the same cost
(an environment with randomness keys it by the prefix). An environment
answers four questions, and optionally two more:

* ``n_actions(state) -> int``: its legal actions are 0 .. n - 1; 0 means
  the state is terminal;
* ``step(state, action) -> (next_state, cost)``: execute one step; ``cost``
  (finite, >= 0) is the work it took, in the caller's units (tokens,
  seconds, calls);
* ``utility(state) -> float``: the terminal utility (the return of an
  episode ending there);
* ``features(state, action) -> (d,) floats``: what the actor reads
  (:class:`SoftmaxActor`);
* ``step_cost(state, action) -> float`` (optional): the predicted cost of a
  step before it runs, read by AgentUCT (0 when absent);
* ``step_batch(states, actions) -> (next_states, costs)`` (optional): the
  steps of two lists of equal length at once (a batched LLM call, a vector
  of simulators), each as ``step`` would take it; sequences of the same
  length back.

A Python object with these methods is a *Python environment*: the engine
calls it one step at a time, or, when it has ``step_batch``, one round of
trials at a time: the trials of a tree whose root actions do not wait for
earlier trials' returns (every trial of the uniform rule and of Monte-Carlo
continuations, the root's coverage under UCT and AgentUCT) run in lockstep,
each round's steps in one ``step_batch`` call, with the same results, trie
and ledger as one at a time (the restore of the visited state and the
actor's own episode still go through ``step``). :class:`JitEnvironment` holds the same functions
as ``@njit`` functions over int64 states: the whole tree then runs compiled.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._params import ACTOR_FEATURES, MAX_LEGAL_ACTIONS, PREFIX_CAPACITY
from .._validation import check_int, check_memory, float64_array

__all__ = ["JitEnvironment", "SoftmaxActor", "PrefixCache", "Ledger", "RunLedger"]

def jit_state(value, name: str) -> np.int64:
    """A JitEnvironment's state: an int64 (an int, not a float or a string
    standing for one)."""
    return np.int64(check_int(value, name, lo=-(1 << 63), hi=(1 << 63) - 1))


def _zero_cost(state, action):
    return 0.0


_JIT_ZERO = None


def _jit_zero():
    global _JIT_ZERO
    if _JIT_ZERO is None:
        from numba import njit
        _JIT_ZERO = njit(nogil=True)(_zero_cost)
    return _JIT_ZERO


def _is_jitted(fn) -> bool:
    return hasattr(fn, "py_func") and hasattr(fn, "compile")


class JitEnvironment:
    """An environment of ``@njit`` functions over int64 states (the
    protocol of :mod:`fastcredit.treesearch.env`): trees over it run
    compiled, whole.

    Parameters
    ----------
    n_actions, step, utility, features : numba ``@njit`` functions
        ``n_actions(state) -> int``, ``step(state, action) -> (state,
        cost)``, ``utility(state) -> float``, ``features(state, action,
        out)`` writing ``n_features`` floats into ``out``.
    max_actions : int
        The most legal actions any state has.
    n_features : int
    step_cost : ``@njit`` function, optional
        ``step_cost(state, action) -> float``, AgentUCT's predicted cost of
        one step (default 0).

    Examples
    --------
    >>> from numba import njit
    >>> import fastcredit.treesearch as ts
    >>> env = ts.JitEnvironment(njit(lambda s: 2 if s < 2 else 0),
    ...                         njit(lambda s, a: (s + 1 + a, 1.0)),
    ...                         njit(lambda s: float(s)),
    ...                         njit(lambda s, a, out: out.fill(a)), max_actions=2, n_features=1)
    >>> env.max_actions
    2
    """

    __slots__ = ("n_actions", "step", "utility", "features", "step_cost", "max_actions",
                 "n_features")

    def __init__(self, n_actions, step, utility, features, *, max_actions: int,
                 n_features: int, step_cost=None):
        if step_cost is None:
            step_cost = _jit_zero()
        for name, fn in (("n_actions", n_actions), ("step", step), ("utility", utility),
                         ("features", features), ("step_cost", step_cost)):
            if not _is_jitted(fn):
                raise TypeError(f"{name} must be a numba @njit function, got "
                                f"{type(fn).__name__}")
            object.__setattr__(self, name, fn)
        object.__setattr__(self, "max_actions", MAX_LEGAL_ACTIONS.check(max_actions))
        object.__setattr__(self, "n_features", ACTOR_FEATURES.check(n_features))

    def __setattr__(self, name, value):
        raise AttributeError("JitEnvironment is immutable")

    # the Python protocol, so a JitEnvironment also runs on the Python engine
    def python(self) -> "_JitAsPython":
        """The same environment through the Python protocol (each call goes
        through Numba's dispatcher): the Python engine on it gives the
        compiled engine's bits."""
        return _JitAsPython(self)


class _JitAsPython:
    def __init__(self, env):
        self._env = env
        self.n_features = env.n_features

    def n_actions(self, state):
        return int(self._env.n_actions(np.int64(state)))

    def step(self, state, action):
        nxt, cost = self._env.step(np.int64(state), np.int64(action))
        return int(nxt), float(cost)

    def utility(self, state):
        return float(self._env.utility(np.int64(state)))

    def features(self, state, action):
        out = np.empty(self.n_features)
        self._env.features(np.int64(state), np.int64(action), out)
        return out

    def step_cost(self, state, action):
        return float(self._env.step_cost(np.int64(state), np.int64(action)))


class SoftmaxActor:
    r"""A linear softmax actor over the environment's features:

    .. math:: \pi(a \mid s) = \frac{e^{\theta^\top \phi(s, a)}}
              {\sum_{b \in A(s)} e^{\theta^\top \phi(s, b)}}

    Parameters
    ----------
    theta : array_like, shape (d,)
        Finite weights.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> ts.SoftmaxActor([0.0, 1.0]).theta
    array([0., 1.])
    """

    __slots__ = ("theta",)

    def __init__(self, theta):
        th = float64_array(theta, "theta")
        if th.ndim != 1 or th.shape[0] < 1:
            raise ValueError(f"theta must have shape (d,) with d >= 1, got {th.shape}")
        if not np.isfinite(th).all():
            raise ValueError("theta must be finite")
        th = th.copy()
        th.flags.writeable = False
        object.__setattr__(self, "theta", th)

    def __setattr__(self, name, value):
        raise AttributeError("SoftmaxActor is immutable")

    def probs(self, env, state, n: int) -> list:
        """The probabilities of the n legal actions of ``state`` (summed in
        index order, as the compiled engine sums them).

        ``env``: a JitEnvironment (``state`` an int) or a Python environment;
        ``n``: the state's legal actions, >= 1."""
        n = check_int(n, "n", lo=1, hi=1 << 62)
        if isinstance(env, JitEnvironment):
            if n > env.max_actions:
                raise ValueError(f"n must be at most env.max_actions = {env.max_actions}, "
                                 f"got {n}")
            env, state = _JitAsPython(env), jit_state(state, "state")
        elif not callable(getattr(env, "features", None)):
            raise TypeError(f"env must be a JitEnvironment or have a method features (the "
                            f"environment protocol of fastcredit.treesearch.env), got "
                            f"{type(env).__name__}")
        theta = self.theta.tolist()
        logits = []
        for b in range(n):
            phi = env.features(state, b)
            if len(phi) != len(theta):
                raise ValueError(f"env.features returned {len(phi)} features; the actor's "
                                 f"theta has {len(theta)}")
            logit = 0.0
            for k in range(len(theta)):
                logit += theta[k] * float(phi[k])
            logits.append(logit)
        top = max(logits)
        e = [math.exp(x - top) for x in logits]
        z = 0.0
        for x in e:
            z += x
        return [x / z for x in e]


@dataclass(frozen=True)
class Ledger:
    """Realized work of one tree (one actor-visited state).

    Attributes
    ----------
    trial_executed, trial_reused : ndarray (n_trials,) int64
        Steps each trial executed, and steps it took from the prefix cache
        instead (the restored prefix counts as reused when cached).
    trial_cost : ndarray (n_trials,) float64
        Cost units of the steps each trial executed.
    restore_executed, restore_reused : int
        Steps of the tree's restore of the visited state before its first
        trial, executed and reused.
    restore_cost : float
        Their cost units.

    Examples
    --------
    >>> import numpy as np, fastcredit.treesearch as ts
    >>> led = ts.Ledger(np.array([3, 1]), np.array([0, 2]), np.array([4.0, 1.0]), 2, 0, 2.0)
    >>> led.executed, led.reused, led.cost
    (6, 2, 7.0)
    """
    trial_executed: np.ndarray
    trial_reused: np.ndarray
    trial_cost: np.ndarray
    restore_executed: int
    restore_reused: int
    restore_cost: float

    @property
    def executed(self) -> int:
        """Steps the tree executed (restore and trials)."""
        return int(self.trial_executed.sum()) + self.restore_executed

    @property
    def reused(self) -> int:
        """Steps the tree took from the cache."""
        return int(self.trial_reused.sum()) + self.restore_reused

    @property
    def cost(self) -> float:
        """Cost units the tree executed."""
        return float(self.trial_cost.sum()) + self.restore_cost


@dataclass(frozen=True)
class RunLedger:
    """Realized work of a run: the actor's own episodes and the auxiliary
    search (trees or Monte-Carlo continuations) beside them.

    Ledgers add up with ``+``; :meth:`add_tree` adds one tree's
    :class:`Ledger`.

    Attributes
    ----------
    actor_executed : int
        Steps of the actor's own episodes.
    actor_cost : float
        Their cost units.
    executed, reused : int
        Auxiliary steps executed and reused from the cache.
    cost : float
        Cost units of the auxiliary steps executed.
    n_states : int
        Actor-visited states searched.

    Examples
    --------
    >>> import numpy as np, fastcredit.treesearch as ts
    >>> led = ts.Ledger(np.array([3, 1]), np.array([0, 2]), np.array([4.0, 1.0]), 2, 0, 2.0)
    >>> run = ts.RunLedger(actor_executed=5, actor_cost=5.0).add_tree(led)
    >>> run
    RunLedger(actor_executed=5, actor_cost=5.0, executed=6, reused=2, cost=7.0, n_states=1)
    >>> (run + run).n_states
    2
    """
    actor_executed: int = 0
    actor_cost: float = 0.0
    executed: int = 0
    reused: int = 0
    cost: float = 0.0
    n_states: int = 0

    def __add__(self, other: "RunLedger") -> "RunLedger":
        return RunLedger(self.actor_executed + other.actor_executed,
                         self.actor_cost + other.actor_cost, self.executed + other.executed,
                         self.reused + other.reused, self.cost + other.cost,
                         self.n_states + other.n_states)

    def add_tree(self, ledger: Ledger) -> "RunLedger":
        """This ledger with one more searched state's work (``ledger``: a
        tree's :class:`Ledger`)."""
        if not isinstance(ledger, Ledger):
            raise TypeError(f"ledger must be a fastcredit.treesearch.Ledger (a tree's "
                            f"TreeResult.ledger), got {type(ledger).__name__}")
        return self + RunLedger(0, 0.0, ledger.executed, ledger.reused, ledger.cost, 1)


class PrefixCache:
    """The executed prefixes of one episode root: a trie from action
    prefixes to the states they reach. Restoring a prefix executes only its
    uncached suffix.

    Parameters
    ----------
    env : JitEnvironment or a Python environment
    root : the episode's start state (an int for a JitEnvironment)
    capacity : int
        Initial nodes of a JitEnvironment's trie (it grows as needed).

    Examples
    --------
    >>> from numba import njit
    >>> import fastcredit.treesearch as ts
    >>> env = ts.JitEnvironment(njit(lambda s: 2 if s < 4 else 0),
    ...                         njit(lambda s, a: (s + 1 + a, 1.0)), njit(lambda s: float(s)),
    ...                         njit(lambda s, a, out: out.fill(a)), max_actions=2, n_features=1)
    >>> cache = ts.PrefixCache(env, 0)
    >>> cache.restore([1, 0])[1], cache.restore([1, 0, 1])[1]     # (executed, reused, cost)
    ((2, 0, 2.0), (1, 2, 1.0))
    """

    def __init__(self, env, root, *, capacity: int = 1024):
        self.env = env
        self.jit = isinstance(env, JitEnvironment)
        capacity = PREFIX_CAPACITY.check(capacity)
        if self.jit:
            root = jit_state(root, "root")
            n = int(env.n_actions(root))
            if not 0 <= n <= env.max_actions:
                raise ValueError(f"env.n_actions(root) = {n} is outside 0..max_actions "
                                 f"({env.max_actions})")
            self._alloc(capacity, "capacity = ")
            self.node_state[0] = root
            self.node_nact[0] = n
            self.n_nodes[0] = 1
        else:
            for name in ("n_actions", "step", "utility"):
                if not callable(getattr(env, name, None)):
                    raise TypeError(f"env must have a method {name} (the environment "
                                    f"protocol of fastcredit.treesearch.env), got "
                                    f"{type(env).__name__}")
            n = _legal(env, root)
            self.state, self.nact, self.cost, self.child = [root], [n], [0.0], {}
        self.root = root

    # --- a JitEnvironment's arrays -------------------------------------------
    def _alloc(self, capacity, label=""):
        a = self.env.max_actions
        nbytes = capacity * (24 + 8 * a)
        if nbytes >= 1 << 20:
            check_memory(nbytes, f"a prefix cache of {label}{capacity:,} nodes")
        # a node's entries are written when it is added (node_child's row to
        # -1 then); rows past n_nodes are zeros, never the allocator's leftovers,
        # since the arrays are the cache's public state (arrays())
        self.node_state = np.zeros(capacity, dtype=np.int64)
        self.node_nact = np.zeros(capacity, dtype=np.int64)
        self.node_cost = np.zeros(capacity)
        self.node_child = np.zeros((capacity, a), dtype=np.int64)
        self.node_child[0] = -1
        self.node_cost[0] = 0.0
        self.n_nodes = np.zeros(1, dtype=np.int64)

    def _grow(self, need: int):
        """Room for ``need`` more nodes (the capacity at least doubles)."""
        n = int(self.n_nodes[0])
        if n + need <= self.node_state.shape[0]:
            return
        old = (self.node_state, self.node_nact, self.node_cost, self.node_child)
        self._alloc(max(2 * old[0].shape[0], n + need))
        for new, arr in zip((self.node_state, self.node_nact, self.node_cost,
                             self.node_child), old):
            new[:n] = arr[:n]
        self.n_nodes[0] = n

    def arrays(self):
        return self.node_state, self.node_nact, self.node_cost, self.node_child, self.n_nodes

    @property
    def n_nodes_used(self) -> int:
        """Prefixes executed so far (the root included)."""
        return int(self.n_nodes[0]) if self.jit else len(self.state)

    # --- the Python trie ------------------------------------------------------
    def _advance(self, node, state, action, execute, stats):
        """Python engine: take ``action`` from ``node``; see
        fastcredit._jit.trees._advance (the same rule)."""
        c = self.child.get((node, action), -1)
        if c >= 0 and not execute:
            stats[1] += 1
            return c, self.state[c]
        nxt, cost = self.env.step(state, action)
        return self._record(node, action, nxt, cost, stats)

    def _record(self, node, action, nxt, cost, stats):
        """The step ``action`` from ``node`` was executed, reaching ``nxt``
        at ``cost``: charge it and add the node when it is new."""
        cost = float(cost)
        if not 0.0 <= cost < _INF:
            raise ValueError(f"env.step returned cost {cost!r}; costs must be finite and >= 0")
        stats[0] += 1
        stats[2] += cost
        key = (node, action)
        c = self.child.get(key, -1)
        if c >= 0:
            return c, nxt
        c = len(self.state)
        self.state.append(nxt)
        self.nact.append(_legal(self.env, nxt))
        self.cost.append(cost)
        self.child[key] = c
        stats[3] += cost
        return c, nxt

    def restore(self, prefix):
        """The state ``prefix`` reaches, executing only its uncached suffix.

        Returns ``(state, (executed, reused, cost))``."""
        prefix = _prefix(prefix)
        stats = [0, 0, 0.0, 0.0]
        if self.jit:
            from .search import _jit_restore
            state = _jit_restore(self, prefix, stats)
        else:
            node, state = 0, self.root
            for t, a in enumerate(prefix.tolist()):
                if not 0 <= a < self.nact[node]:
                    raise ValueError(f"prefix[{t}] = {a} is not a legal action (that state "
                                     f"has {self.nact[node]})")
                node, state = self._advance(node, state, a, False, stats)
        return state, (int(stats[0]), int(stats[1]), float(stats[2]))


_INF = float("inf")


def _legal(env, state) -> int:
    n = env.n_actions(state)
    if type(n) is int and n >= 0:
        return n
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"env.n_actions returned {n!r}; it must be an int >= 0")
    return int(n)


def _prefix(prefix) -> np.ndarray:
    # the common cases first: no prefix, a short list or tuple of ints
    if type(prefix) in (tuple, list):
        if not prefix:
            return np.zeros(0, dtype=np.int64)
        if all(type(a) is int and -(1 << 63) <= a < (1 << 63) for a in prefix):
            return np.array(prefix, dtype=np.int64)
    from .._validation import int_array
    p = int_array(prefix, "prefix")
    if p.ndim != 1:
        raise ValueError(f"prefix must be a 1-d sequence of actions, got shape {p.shape}")
    # a copy, writeable: a read-only prefix would have the search's jitted
    # functions compiled again for its type (2.7 s)
    return np.array(p, dtype=np.int64)
