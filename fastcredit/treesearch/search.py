r"""The counterfactual tree at an actor-visited state, Monte-Carlo state
values, exact Q by enumeration, and the decision records of an episode.

**One tree** (:func:`counterfactual_tree`) at the state s reached by
``prefix`` from ``root`` spends ``budget`` trials. Trial i:

1. picks a root action :math:`a_0` by the rule (``fastcredit._numba.trees``'s
   allocation kernel with stream (seed, i)): ``"uniform"`` (fewest trials),
   ``"uct"`` (:math:`\bar Q_a + c\sqrt{\log(N+1)/n_a}`) or ``"agent_uct"``
   (that minus :math:`c_{tok} \hat c_a`, :math:`\hat c_a` the predicted
   uncached cost of a trial of a: the predicted cost of its first step while
   that step is not cached, then the uncached cost its last trial realized).
   Every rule tries every action once before repeating one, so the root is
   covered when budget >= |A(s)|; with fewer trials AgentUCT first draws its
   ``budget`` candidates without replacement with weights
   :math:`e^{-c_{tok} \hat c_a}` (Gumbel-top-k, stream (seed, 2**63));
2. continues with the actor: each later action is drawn from
   :math:`\pi(\cdot \mid s_t)` with the stream (seed, 2**62 + i), until a
   terminal state; the trial's return is its utility.

:math:`Q(s, a)` is the mean of a's trial returns, with standard error
sd / sqrt(n_a) (ddof 1). Every step goes through the prefix cache: a prefix
already executed is restored, not executed, and only the uncached suffix
costs. With ``use_cache=False`` every trial replays its prefix from the root
and executes every step: the results are the same bits, only the ledger
differs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._backend import kernels, resolve
from .._constants import ALLOC_AGENT_UCT, ALLOC_UCT, ALLOC_UNIFORM, RNG_GOLDEN
from .._params import (ALLOCATOR, BACKEND, BASELINE, CONTINUATIONS, COST_PRICE, CREDIT_SOURCE,
                       EXPLORATION, SEED, TREE_BUDGET)
from .._validation import check_bool, check_int
from .env import (JitEnvironment, Ledger, PrefixCache, RunLedger, SoftmaxActor, _prefix,
                  jit_state)

__all__ = ["TreeResult", "DecisionRecords", "counterfactual_tree", "monte_carlo_value",
           "exact_q", "decision_records", "ALLOCATORS", "CREDIT_SOURCES"]

#: Allocation rules of a tree's trials (declared in fastcredit._params).
ALLOCATORS = ALLOCATOR.values
#: Where a decision's credit comes from (:func:`decision_records`).
CREDIT_SOURCES = CREDIT_SOURCE.values
_CODES = {"uniform": ALLOC_UNIFORM, "uct": ALLOC_UCT, "agent_uct": ALLOC_AGENT_UCT}


_JIT = []


def _jit():
    if not _JIT:
        from .._jit import trees
        _JIT.append(trees)
    return _JIT[0]


@dataclass(frozen=True)
class TreeResult:
    """One counterfactual tree (:func:`counterfactual_tree`).

    Attributes
    ----------
    q, stderr : ndarray (n,) float64
        Mean trial return of each root action and its standard error (NaN
        when untried; stderr NaN below 2 trials).
    counts : ndarray (n,) int64
        Trials of each root action.
    pi : ndarray (n,) float64
        The actor's probabilities at the state.
    credit : ndarray (n,) float64
        Q(s, a) minus the baseline over the tried actions (the actor's
        probabilities renormalised over them, or their plain mean); NaN when
        untried.
    baseline : float
        The baseline subtracted from Q.
    trial_action, trial_return : ndarray (budget,)
        Each trial's root action and return, in order.
    ledger : Ledger
        The tree's realized work.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> from fastcredit.learning import workflow
    >>> res = ts.counterfactual_tree(workflow.environment(), workflow.root(kind=0, level=3),
    ...                              budget=10, seed=1)
    >>> res.counts.tolist(), res.trial_action.tolist()[:5], res.ledger.executed
    ([2, 2, 2, 2, 2], [2, 0, 1, 3, 4], 26)
    """
    q: np.ndarray
    stderr: np.ndarray
    counts: np.ndarray
    pi: np.ndarray
    credit: np.ndarray
    baseline: float
    trial_action: np.ndarray
    trial_return: np.ndarray
    ledger: Ledger


def _theta(env, actor):
    if actor is None:
        return np.zeros(env.n_features) if isinstance(env, JitEnvironment) else None
    if not isinstance(actor, SoftmaxActor):
        raise TypeError(f"actor must be a fastcredit.treesearch.SoftmaxActor or None (uniform), "
                        f"got {type(actor).__name__}")
    if isinstance(env, JitEnvironment) and actor.theta.shape[0] != env.n_features:
        raise ValueError(f"actor must have env.n_features = {env.n_features} weights, got "
                         f"{actor.theta.shape[0]}")
    return np.ascontiguousarray(actor.theta)


def _cache_for(env, root, cache):
    if cache is None:
        if root is None:
            raise TypeError("give root (the episode's start state) or cache")
        return PrefixCache(env, root)
    if not isinstance(cache, PrefixCache):
        raise TypeError(f"cache must be a fastcredit.treesearch.PrefixCache, got "
                        f"{type(cache).__name__}")
    if cache.env is not env:
        raise ValueError("cache must belong to env (it was built for another environment)")
    if root is not None and not _same_state(root, cache.root, cache.jit):
        raise ValueError(f"root must be the root of cache ({cache.root!r}) when both are "
                         f"given, got {root!r}")
    return cache


def _same_state(a, b, jit: bool) -> bool:
    if jit:
        return jit_state(a, "root") == b
    if a is b:
        return True
    try:
        return bool(np.all(a == b))
    except (TypeError, ValueError):
        return False


_STATUS = {2: "the state prefix reaches from root is terminal (no legal actions to search)",
           3: "prefix holds an action that is not legal where it is taken (from root)",
           4: "the environment broke its contract: n_actions outside 0..max_actions, or a "
              "non-finite or negative cost or step_cost, or a non-finite utility"}


def _call_grow(cache, need, call):
    """Run a kernel that adds trie nodes; when the trie fills, roll the
    additions back, grow it and run again (so nothing it did counts)."""
    while True:
        cache._grow(need)
        old = int(cache.n_nodes[0])
        status = call()
        if status != 1:
            return status
        cache.n_nodes[0] = old
        child = cache.node_child[:old]
        child[child >= old] = -1
        need = 2 * max(need, cache.node_state.shape[0])


def _jit_status(cache, prefix, status) -> str:
    """The message of a compiled tree's status; for an illegal action of
    ``prefix``, which one (the trie holds the prefix's states up to it)."""
    if status == 3:
        node = 0
        for t, a in enumerate(prefix.tolist()):
            n = int(cache.node_nact[node])
            if not 0 <= a < n:
                return (f"{_STATUS[3]}: prefix[{t}] = {a}, and the state prefix[:{t}] reaches "
                        f"has {n} legal actions")
            node = int(cache.node_child[node, a])
            if node < 0:
                break
    return _STATUS[status]


def _jit_restore(cache, prefix, stats):
    env, trees = cache.env, _jit()
    counts, sums = np.zeros(1, dtype=np.int64), np.zeros(1)
    trial = [np.zeros(0, dtype=d) for d in (np.int64, np.float64, np.float64, np.float64,
                                            np.float64)]
    restore = np.zeros(3)
    # a zero-trial tree is the restore alone
    status = _call_grow(cache, prefix.shape[0] + 1, lambda: trees.tree(
        env.n_actions, env.step, env.utility, env.features, env.step_cost, *cache.arrays(),
        prefix, np.zeros(env.n_features), ALLOC_UNIFORM, 0, 0.0, 0.0, np.uint64(0), True,
        counts, sums, *trial, restore))
    if status not in (0, 2):
        raise ValueError(_jit_status(cache, prefix, status))
    stats[0], stats[1], stats[2] = restore[0], restore[1], restore[2]
    node = 0
    for a in prefix.tolist():
        node = int(cache.node_child[node, a])
    return int(cache.node_state[node])


def _tree_jit(cache, prefix, theta, rule, budget, c, c_tok, seed, use_cache, uniform):
    env = cache.env
    search = _jit().bound(env.n_actions, env.step, env.utility, env.features, env.step_cost)
    a_max = env.max_actions
    counts = np.zeros(a_max, dtype=np.int64)
    per_action = np.zeros((5, a_max))      # sums, pi, q, stderr, credit
    t_action = np.zeros(budget, dtype=np.int64)
    per_trial = np.zeros((4, budget))      # return, executed, reused, cost
    scalars = np.zeros(4)                  # the restore's executed, reused, cost; baseline
    info = np.zeros(2, dtype=np.int64)
    seed = np.uint64(seed)
    status = _call_grow(cache, prefix.shape[0] + 8 * budget, lambda: search(
        *cache.arrays(), prefix, theta, rule, budget, c, c_tok, seed, use_cache, uniform,
        counts, t_action, per_action, per_trial, scalars, info))
    if status:
        raise ValueError(_jit_status(cache, prefix, status))
    n = int(info[0])
    _, pi, q, stderr, credit = per_action[:, :n]
    ledger = Ledger(per_trial[1].astype(np.int64), per_trial[2].astype(np.int64),
                    per_trial[3], int(scalars[0]), int(scalars[1]), float(scalars[2]))
    return (counts[:n], pi, q, stderr, credit, float(scalars[3]), t_action, per_trial[0],
            ledger)


def _tree_c(cache, prefix, theta, rule, budget, c, c_tok, seed, use_cache, uniform):
    """The C twin of the compiled tree (fc_counterfactual_tree over Numba
    @cfunc pointers to the environment's functions): the same bits."""
    from .._c import trees as ct
    env = cache.env
    a_max = env.max_actions
    counts, sums, pi = np.zeros(a_max, dtype=np.int64), np.zeros(a_max), np.zeros(a_max)
    t_action = np.zeros(budget, dtype=np.int64)
    t_ret, t_exec, t_reused, t_cost = (np.zeros(budget) for _ in range(4))
    restore = np.zeros(3)
    status = _call_grow(cache, prefix.shape[0] + 8 * budget, lambda: ct._tree(
        env.n_actions, env.step, env.utility, env.features, env.step_cost, *cache.arrays(),
        prefix, theta, rule, budget, c, c_tok, np.uint64(seed), use_cache, counts, sums,
        t_action, t_ret, t_exec, t_reused, t_cost, restore, pi))
    if status:
        raise ValueError(_jit_status(cache, prefix, status))
    node = 0
    for a in prefix.tolist():
        node = int(cache.node_child[node, a])
    n = int(cache.node_nact[node])
    pi = pi[:n]
    q, stderr, credit = np.empty(n), np.empty(n), np.empty(n)
    base = ct._finish(counts, sums, pi, n, t_action, t_ret, uniform, q, stderr, credit)
    ledger = Ledger(t_exec.astype(np.int64), t_reused.astype(np.int64), t_cost,
                    int(restore[0]), int(restore[1]), float(restore[2]))
    return counts[:n], pi, q, stderr, credit, base, t_action, t_ret, ledger


def _probs(env, actor, state, n):
    return [1.0 / n] * n if actor is None else actor.probs(env, state, n)


def _tree_python(cache, prefix, actor, rule, budget, c, c_tok, seed, use_cache, centre_uniform,
                 backend):
    from .._numba.rng import key, uniform
    trees = _jit()
    env = cache.env
    pick = kernels("trees", resolve("trees.allocation", backend)).allocation_pick
    seed = np.uint64(seed)
    stats = [0, 0, 0.0, 0.0]
    node, state = 0, cache.root
    for t, a in enumerate(prefix.tolist()):
        if not 0 <= a < cache.nact[node]:
            raise ValueError(f"{_STATUS[3]} (prefix[{t}] = {a}; that state has "
                             f"{cache.nact[node]})")
        node, state = cache._advance(node, state, a, not use_cache, stats)
    restore = stats[:3]
    visited, root_state = node, state
    n = cache.nact[visited]
    if n == 0:
        raise ValueError(_STATUS[2])
    p = _probs(env, actor, root_state, n)
    step_cost = getattr(env, "step_cost", None)
    costs = np.zeros(n)
    for a in range(n):
        if (visited, a) not in cache.child and step_cost is not None:
            costs[a] = float(step_cost(root_state, a))
            if not (math.isfinite(costs[a]) and costs[a] >= 0):
                raise ValueError(f"env.step_cost returned {costs[a]}; it must be finite "
                                 f"and >= 0")
    cand = list(range(n))
    if rule == ALLOC_AGENT_UCT and budget < n:
        rs = key(seed, trees.CANDIDATES)
        g = []
        for a in range(n):
            rs, u = uniform(np.uint64(rs))
            g.append(-c_tok * costs[a] - math.log(-math.log(u + 1e-300) + 1e-300))
        cand = sorted(sorted(range(n), key=lambda a: (-g[a], a))[:budget])
    cand = np.array(cand, dtype=np.int64)
    counts, sums = np.zeros(n, dtype=np.int64), np.zeros(n)
    t_action = np.zeros(budget, dtype=np.int64)
    t_ret, t_cost = np.zeros(budget), np.zeros(budget)
    t_exec, t_reused = np.zeros(budget, dtype=np.int64), np.zeros(budget, dtype=np.int64)
    probs_at = _memo_probs(env, actor)     # the actor is fixed during a tree
    batch = getattr(env, "step_batch", None)
    pre = prefix.tolist()
    seed_int = int(seed)
    i = 0
    while i < budget:
        # a wave: trials whose root actions do not wait for returns not yet
        # known (all of them for "uniform" and continuations, the root's
        # coverage for the UCT rules); one trial at a time without step_batch
        if batch is None:
            wave = 1
        elif rule in (ALLOC_UNIFORM, trees.ROOT_ACTOR):
            wave = budget - i
        else:
            wave = max(1, min(budget, cand.shape[0]) - i)
        firsts, streams = [], []
        for j in range(i, i + wave):
            cs = _py_key(seed_int, _CONTINUE + j)
            if rule == trees.ROOT_ACTOR:
                cs, u = _py_uniform(cs)
                a0 = _draw(p, n, u)
            else:
                k = pick(rule, counts[cand], sums[cand], costs[cand], c, c_tok, seed, j)
                if k < 0:
                    raise ValueError(_STATUS[4])
                a0 = int(cand[k])
            counts[a0] += 1        # read by the next pick of this wave (sums are not)
            firsts.append(a0)
            streams.append(cs)
        if batch is None:
            out = [_trial(cache, pre, visited, root_state, firsts[0], streams[0], probs_at,
                          use_cache, i)]
        else:
            out = _wave(cache, batch, pre, visited, root_state, firsts, streams, probs_at,
                        use_cache, i)
        for j, (a0, (value, st)) in enumerate(zip(firsts, out), start=i):
            sums[a0] += value
            costs[a0] = st[3]
            t_action[j], t_ret[j] = a0, value
            t_exec[j], t_reused[j], t_cost[j] = st[0], st[1], st[2]
        i += wave
    pi = np.array(p, dtype=np.float64)
    q, stderr, credit = np.empty(n), np.empty(n), np.empty(n)
    baseline = trees.finish(counts, sums, pi, n, t_action, t_ret, centre_uniform, q, stderr,
                            credit)
    return (counts, pi, q, stderr, credit, float(baseline), t_action, t_ret,
            Ledger(t_exec, t_reused, t_cost, int(restore[0]), int(restore[1]),
                   float(restore[2])))


_MASK = (1 << 64) - 1
_CONTINUE = 1 << 62
_TO_UNIT = 1.0 / 9007199254740992.0


def _py_mix(z):
    """fastcredit._numba.rng.mix64 on Python ints (the same bits)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _py_key(seed, item):
    return _py_mix(seed ^ _py_mix((item + RNG_GOLDEN) & _MASK))


def _py_uniform(state):
    state = (state + RNG_GOLDEN) & _MASK
    return state, (_py_mix(state) >> 11) * _TO_UNIT


def _memo_probs(env, actor):
    """The actor's probabilities at (node, state, n), computed once per node
    (the actor does not change during a tree)."""
    memo = {}
    if actor is None:
        def at(node, state, n):
            p = memo.get(n)
            if p is None:
                p = memo[n] = [1.0 / n] * n
            return p
    else:
        def at(node, state, n):
            p = memo.get(node)
            if p is None:
                p = memo[node] = actor.probs(env, state, n)
            return p
    return at


def _end(env, state):
    value = float(env.utility(state))
    if not math.isfinite(value):
        raise ValueError(f"env.utility returned {value}; it must be finite")
    return value


def _trial(cache, pre, visited, root_state, a, cs, probs_at, use_cache, i):
    """One trial, step by step: (its return, its stats [executed, reused,
    cost, uncached cost])."""
    stats = [0, 0, 0.0, 0.0]
    advance, nact = cache._advance, cache.nact
    node, state = visited, root_state
    if not use_cache and i > 0:
        node, state = 0, cache.root
        for b in pre:
            node, state = advance(node, state, b, True, stats)
    elif use_cache:
        stats[1] += len(pre)
    execute = not use_cache
    while True:
        node, state = advance(node, state, a, execute, stats)
        na = nact[node]
        if na == 0:
            break
        cs, u = _py_uniform(cs)
        a = _draw(probs_at(node, state, na), na, u)
    return _end(cache.env, state), stats


def _wave(cache, batch, pre, visited, root_state, firsts, streams, probs_at, use_cache, i0):
    """The trials ``i0 ..`` of a wave in lockstep, each round's steps in one
    ``env.step_batch`` call: the same trie, results and ledger as
    :func:`_trial` one after another. A step's node is at the same depth in
    every trial of a round, so a step two trials of a round need is one
    that the lower-numbered trial would have executed first: it executes
    it (with the cache, once) and the others reuse it, in trial order."""
    env = cache.env
    w = len(firsts)
    stats = [[0, 0, 0.0, 0.0] for _ in range(w)]
    node, state = [visited] * w, [root_state] * w
    todo = []
    for j in range(w):
        replays = not use_cache and i0 + j > 0     # (trial 0 goes on from the restore)
        if replays:
            node[j], state[j] = 0, cache.root
        elif use_cache:
            stats[j][1] += len(pre)
        todo.append((list(pre) if replays else []) + [firsts[j]])
    cs = list(streams)
    done = [None] * w
    active = list(range(w))
    while active:
        # this round's steps: (trial, action, execute?)
        calls, owner = [], {}
        plan = []
        for j in active:
            a = todo[j].pop(0)
            replay = bool(todo[j])     # prefix replays are executed
            execute = replay or not use_cache
            key = (node[j], a)
            c = cache.child.get(key, -1)
            if not execute and (c >= 0 or key in owner):
                plan.append((j, a, False, -1))       # reused (now, or after its owner)
            else:
                if not execute:
                    owner[key] = j
                plan.append((j, a, True, len(calls)))
                calls.append((state[j], a))
        if calls:
            nxt, costs = batch([s for s, _ in calls], [a for _, a in calls])
            if len(nxt) != len(calls) or len(costs) != len(calls):
                raise ValueError(f"env.step_batch returned {len(nxt)} states and "
                                 f"{len(costs)} costs for {len(calls)} steps")
        for j, a, execute, k in plan:
            if k < 0:
                node[j], state[j] = cache._advance(node[j], state[j], a, False, stats[j])
            else:
                node[j], state[j] = cache._record(node[j], a, nxt[k], costs[k], stats[j])
        still = []
        for j in active:
            if todo[j]:
                still.append(j)
                continue
            na = cache.nact[node[j]]
            if na == 0:
                done[j] = (_end(env, state[j]), stats[j])
                continue
            cs[j], u = _py_uniform(cs[j])
            todo[j].append(_draw(probs_at(node[j], state[j], na), na, u))
            still.append(j)
        active = still
    return done


def _draw(p, n, u):
    """fastcredit._jit.trees.draw in Python (the same float operations)."""
    for b in range(n - 1):
        u -= p[b]
        if u < 0.0:
            return b
    return n - 1


def _search(env, root, prefix, actor, rule, budget, c, c_tok, seed, cache, use_cache,
            backend, uniform=False):
    cache = _cache_for(env, root, cache)
    prefix = _prefix(prefix)
    theta = _theta(env, actor)
    seed = SEED.check(seed)
    use_cache = check_bool(use_cache, "use_cache")
    if cache.jit:
        run = _tree_c if backend == "c" else _tree_jit
        return run(cache, prefix, theta, rule, budget, c, c_tok, seed, use_cache, uniform)
    return _tree_python(cache, prefix, actor, rule, budget, c, c_tok, seed, use_cache, uniform,
                        backend)


def counterfactual_tree(env, root=None, prefix=(), actor=None, *, budget: int = 48,
                        rule: str = "uniform", c: float = math.sqrt(2), c_tok: float = 1.0,
                        baseline: str = "actor", seed: int = 0, cache=None,
                        use_cache: bool = True, backend=None) -> TreeResult:
    r"""Q(s, a) of every legal action at the state ``prefix`` reaches, by a
    budgeted tree of trials continued by the actor (module docstring), and
    the actor-centred credit

    .. math:: \text{credit}(a) = Q(s, a) - \sum_b \pi(b \mid s) Q(s, b).

    Parameters
    ----------
    env : JitEnvironment or a Python environment (fastcredit.treesearch.env)
        The environment searched.
    root : object, optional
        The episode's start state (an int for a JitEnvironment); or give
        ``cache``.
    prefix : sequence of int
        The actions from ``root`` to the searched state.
    actor : SoftmaxActor or None
        The policy that continues trials (None: uniform).
    budget : int
        Trials (>= 1).
    rule : {"uniform", "uct", "agent_uct"}
        The allocation rule of the root actions (module docstring).
    c, c_tok : float
        UCT's exploration constant; AgentUCT's price of a unit of cost.
    baseline : {"actor", "uniform"}
        The centring of ``credit``.
    seed : int in [0, 2**64)
        Keys the trials' random streams.
    cache : PrefixCache, optional
        Shared by the trees of one episode (the default is a fresh one).
    use_cache : bool
        False: every step is executed (the ledger without reuse; the
        results are the same bits).
    backend : {"c", "numba"}, optional
        A JitEnvironment's tree: the Numba loop (default) or its C twin
        fc_counterfactual_tree, which calls the environment's functions
        through C pointers (Numba @cfunc wrappers); the same bits. A Python
        environment's tree: the allocation kernel's backend.

    Returns
    -------
    TreeResult
        Q, its standard error, the trial counts, the credit and the ledger.

    Raises
    ------
    ValueError
        If ``rule``, ``baseline`` or ``backend`` is not one of its values
        (or the backend is not available), ``budget`` is not in [1, 2**24],
        ``c`` or ``c_tok`` is negative or not finite, ``seed`` is outside
        [0, 2**64), ``prefix`` is not one-dimensional or holds an action
        that is not legal where it is taken, the state ``prefix`` reaches is
        terminal, ``actor`` has not ``env.n_features`` weights (a
        JitEnvironment), ``cache`` belongs to another environment or has
        another root than ``root``, or the environment breaks its contract
        (``n_actions`` outside 0..max_actions, a negative or non-finite
        cost or step_cost, a non-finite utility, a ``step_batch`` answer of
        the wrong length).
    TypeError
        If neither ``root`` nor ``cache`` is given, ``actor`` is not a
        SoftmaxActor or None, ``cache`` not a PrefixCache, a Python
        environment lacks ``n_actions``, ``step`` or ``utility``,
        ``budget`` or ``seed`` is not an integer, ``c`` or ``c_tok`` not a
        real number, ``use_cache`` not a bool, or ``prefix`` not integer.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> from fastcredit.learning import workflow
    >>> env = workflow.environment()
    >>> res = ts.counterfactual_tree(env, workflow.root(kind=0, level=3), budget=48, seed=1)
    >>> res.counts.tolist(), int(res.q.argmax())
    ([10, 9, 9, 10, 10], 0)
    """
    rule = ALLOCATOR.check(rule)
    backend = BACKEND.check(backend)
    budget = TREE_BUDGET.check(budget)
    c, c_tok = EXPLORATION.check(c), COST_PRICE.check(c_tok)
    baseline = BASELINE.check(baseline)
    counts, pi, q, stderr, credit, base, t_action, t_ret, ledger = _search(
        env, root, prefix, actor, _CODES[rule], budget, c, c_tok, seed, cache, use_cache,
        backend, baseline == "uniform")
    return TreeResult(q, stderr, counts, pi, credit, base, t_action, t_ret, ledger)


def monte_carlo_value(env, root=None, prefix=(), actor=None, *, k: int = 16, seed: int = 0,
                      cache=None, use_cache: bool = True):
    r"""VinePPO's state value: the mean return of ``k`` continuations of the
    actor from the state ``prefix`` reaches (the first action drawn from the
    actor too), :math:`\hat V(s) = \frac1k \sum_j R_j`.

    Parameters
    ----------
    env : JitEnvironment or a Python environment (fastcredit.treesearch.env)
        The environment.
    root : object, optional
        The episode's start state (an int for a JitEnvironment); or give
        ``cache``.
    prefix : sequence of int
        The actions from ``root`` to the valued state.
    actor : SoftmaxActor or None
        The policy of the continuations (None: uniform).
    k : int in [1, 2**24]
        Continuations.
    seed : int in [0, 2**64)
        Keys the continuations' random streams.
    cache : PrefixCache, optional
        Shared by the searches of one episode (the default is a fresh one).
    use_cache : bool
        False: every step is executed (only the ledger changes).

    Returns
    -------
    value : float
        :math:`\hat V(s)`; a terminal state's value is its utility (no
        continuations).
    stderr : float
        Its standard error, sd / sqrt(k) (ddof 1; NaN for k = 1, 0 at a
        terminal state).
    ledger : Ledger
        The continuations' realized work (empty at a terminal state).

    Raises
    ------
    ValueError
        If ``k`` is not in [1, 2**24], ``seed`` is outside [0, 2**64),
        ``prefix`` is not one-dimensional or holds an illegal action,
        ``actor`` has not ``env.n_features`` weights (a JitEnvironment),
        ``cache`` belongs to another environment or root, or the
        environment breaks its contract (as in :func:`counterfactual_tree`).
    TypeError
        If neither ``root`` nor ``cache`` is given, ``actor`` is not a
        SoftmaxActor or None, ``cache`` not a PrefixCache, ``k`` or
        ``seed`` not an integer, or ``use_cache`` not a bool.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> from fastcredit.learning import workflow
    >>> env = workflow.environment()
    >>> v, se, _ = ts.monte_carlo_value(env, workflow.root(kind=3, level=0), k=64)
    >>> round(v, 3)
    -1.33
    """
    k = CONTINUATIONS.check(k)
    seed = SEED.check(seed)
    use_cache = check_bool(use_cache, "use_cache")
    cache = _cache_for(env, root, cache)
    _theta(env, actor)
    pre = _prefix(prefix)
    node = _node(cache, pre)
    if _nact(cache, node) == 0:
        value = float(env.utility(_state(cache, node)))
        return value, 0.0, Ledger(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0),
                                  0, 0, 0.0)
    *_, t_ret, ledger = _search(env, None, pre, actor, _jit().ROOT_ACTOR, k, 0.0, 0.0, seed,
                                cache, use_cache, None)
    se = t_ret.std(ddof=1) / math.sqrt(k) if k > 1 else float("nan")
    return float(t_ret.mean()), float(se), ledger


def _node(cache, prefix):
    """The trie node of ``prefix``, restoring it (through the cache) when
    it is not there yet."""
    node = 0
    for t, a in enumerate(prefix.tolist()):
        nxt = int(cache.node_child[node, a]) if cache.jit else cache.child.get((node, a), -1)
        if nxt < 0:
            cache.restore(prefix)
            return _node(cache, prefix)
        node = nxt
    return node


def _nact(cache, node):
    return int(cache.node_nact[node]) if cache.jit else cache.nact[node]


def _state(cache, node):
    return np.int64(cache.node_state[node]) if cache.jit else cache.state[node]


def exact_q(env, root, prefix=(), actor=None) -> np.ndarray:
    r"""Q(s, a) of every legal action under the actor, by enumerating every
    continuation: :math:`Q(s, a) = V(s')` with :math:`V(s) = u(s)` at a
    terminal state and :math:`\sum_b \pi(b \mid s) Q(s, b)` elsewhere.
    Exponential in the depth: for small environments and tests.

    Parameters
    ----------
    env : JitEnvironment or a Python environment (fastcredit.treesearch.env)
        The environment.
    root : object
        The episode's start state (an int for a JitEnvironment).
    prefix : sequence of int
        The actions from ``root`` to the state whose Q is computed.
    actor : SoftmaxActor or None
        The policy of the continuations (None: uniform).

    Returns
    -------
    ndarray (n,) float64
        Q(s, a) of the state's n legal actions (empty at a terminal state).

    Raises
    ------
    ValueError
        If ``prefix`` is not one-dimensional or holds an action that is not
        legal where it is taken, ``actor`` has not ``env.n_features``
        weights (a JitEnvironment), or ``env.n_actions(root)`` is outside
        0..max_actions.
    TypeError
        If ``actor`` is not a SoftmaxActor or None, ``prefix`` is not
        integer, ``root`` is not an int for a JitEnvironment, or a Python
        environment lacks ``n_actions``, ``step`` or ``utility``.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> from fastcredit.learning import workflow
    >>> ts.exact_q(workflow.environment(), workflow.root(kind=3, level=0)).round(3)
    array([-1.441, -1.501, -2.101, -1.501,  0.   ])
    """
    cache = PrefixCache(env, root)
    prefix = _prefix(prefix)
    state, _ = cache.restore(prefix)
    theta = _theta(env, actor)
    if cache.jit:
        q = np.zeros(env.max_actions)
        n = _jit().exact_q(env.n_actions, env.step, env.utility, env.features,
                           np.int64(state), theta, q)
        return q[:n]

    def value(s, depth):
        n = env.n_actions(s)
        if n == 0:
            return float(env.utility(s))
        p = _probs(env, actor, s, n)
        v = 0.0
        for a in range(n):
            v += p[a] * value(env.step(s, a)[0], depth + 1)
        return v

    n = env.n_actions(state)
    return np.array([value(env.step(state, a)[0], 1) for a in range(n)])


@dataclass(frozen=True)
class DecisionRecords:
    """The actor's own decisions of one episode, with their credit
    (auxiliary branches are not in them); see :func:`decision_records`.

    Attributes
    ----------
    states : list
        The visited states (s_0 .. s_{T-1}).
    actions : ndarray (T,) int64
        The sampled actions.
    behaviour : ndarray (T,) float64
        pi(a_t | s_t) when they were sampled.
    credit : ndarray (T,) float64
        The decision's credit (NaN when a tree did not try the actor's
        action).
    features : ndarray (T, A, d) float64
        phi(s_t, b) of every legal b (zero padded).
    n_legal : ndarray (T,) int64
        Legal actions of each visited state.
    q : ndarray (T, A) float64
        The trees' Q (NaN padded; NaN for other sources).
    utility : float
        The episode's return.
    ledger : RunLedger
        The episode's and the search's realized work.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> from fastcredit.learning import workflow
    >>> rec = ts.decision_records(workflow.environment(), workflow.root(kind=1, level=2),
    ...                           credit="return", seed=3)
    >>> rec.actions.tolist(), rec.utility, rec.credit.tolist()
    ([2, 1, 1, 2, 4], -2.4, [-2.4, -2.4, -2.4, -2.4, -2.4])
    """
    states: list
    actions: np.ndarray
    behaviour: np.ndarray
    credit: np.ndarray
    features: np.ndarray
    n_legal: np.ndarray
    q: np.ndarray
    utility: float
    ledger: RunLedger


def _rollout(cache, actor, seed):
    """The actor's episode from the root: actions and their probabilities,
    drawn with the stream (seed, 0), every step executed."""
    env = cache.env
    if cache.jit:
        theta = _theta(env, actor)
        actions, probs = np.zeros(4096, dtype=np.int64), np.zeros(4096)
        stats = np.zeros(4)
        box = []

        def call():
            stats[:] = 0
            t, status = _jit().rollout(env.n_actions, env.step, env.utility, env.features,
                                       *cache.arrays(), theta, np.uint64(seed), actions,
                                       probs, stats)
            box[:] = [t]
            return status
        status = _call_grow(cache, 64, call)
        if status:
            raise ValueError(_STATUS[4] if status == 4 else "episode longer than 4096 steps")
        t = box[0]
        return actions[:t].copy(), probs[:t].copy(), int(stats[0]), float(stats[2])
    from .._numba.rng import key, uniform
    rs = key(np.uint64(seed), np.uint64(0))
    node, state, acts, probs = 0, cache.root, [], []
    stats = [0, 0, 0.0, 0.0]
    while cache.nact[node] > 0:
        n = cache.nact[node]
        p = _probs(env, actor, state, n)
        rs, u = uniform(np.uint64(rs))
        a = _draw(p, n, u)
        acts.append(a)
        probs.append(p[a])
        node, state = cache._advance(node, state, a, True, stats)
    return np.array(acts, dtype=np.int64), np.array(probs), int(stats[0]), float(stats[2])


def _features(env, state, n, a_max, d):
    out = np.zeros((a_max, d))
    for b in range(n):
        if isinstance(env, JitEnvironment):
            env.features(np.int64(state), np.int64(b), out[b])
        else:
            out[b] = env.features(state, b)
    return out


def state_seed(seed: int, t: int) -> int:
    """The seed of the search at step t of an episode seeded ``seed``: the
    first draw of the counter-based RNG stream (seed, t + 1), so that every
    step's search has its own stream.

    Parameters
    ----------
    seed : int in [0, 2**64)
        The episode's seed.
    t : int in [0, 2**64 - 2]
        The step.

    Returns
    -------
    int
        A seed in [0, 2**64).

    Raises
    ------
    ValueError
        If ``seed`` or ``t`` is out of its range.
    TypeError
        If ``seed`` or ``t`` is not an integer.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> ts.state_seed(0, 0), ts.state_seed(0, 1)
    (15916886550466581944, 16576549522093199164)
    """
    from .._numba.rng import key
    seed = SEED.check(seed)
    t = check_int(t, "t", lo=0, hi=2**64 - 2)
    return int(key(np.uint64(seed), np.uint64(t + 1)))


def decision_records(env, root, actor=None, *, credit: str = "asct", rule: str = "uniform",
                     budget: int = 16, k: int = 16, c: float = math.sqrt(2),
                     c_tok: float = 1.0, baseline: str = "actor", seed: int = 0,
                     use_cache: bool = True, backend=None) -> DecisionRecords:
    r"""Run the actor's episode from ``root`` and credit each of its
    decisions.

    * ``"asct"``: a counterfactual tree of ``budget`` trials at every
      visited state; credit :math:`Q(s_t, a_t) - \sum_b \pi(b|s_t) Q(s_t, b)`;
    * ``"vine"`` (VinePPO): :math:`\hat V(s_{t+1}) - \hat V(s_t)` with
      :math:`\hat V` the mean of ``k`` actor continuations
      (:func:`monte_carlo_value`) and :math:`\hat V(s_T)` the utility;
    * ``"return"``: the episode's return (centre it over a batch).

    The episode's action t is drawn with the stream (seed, 0); the search at
    step t is seeded :func:`state_seed` (seed, t). The trees share one
    prefix cache per episode (the actor's own steps are in it).

    Parameters
    ----------
    env : JitEnvironment or a Python environment (fastcredit.treesearch.env)
        The environment.
    root : object
        The episode's start state (an int for a JitEnvironment).
    actor : SoftmaxActor or None
        The policy of the episode and of the continuations (None: uniform).
    credit : {"asct", "vine", "return"}
        Where each decision's credit comes from (see above).
    rule : {"uniform", "uct", "agent_uct"}
        The trees' allocation rule (``"asct"``).
    budget : int in [1, 2**24]
        Trials per tree (``"asct"``).
    k : int in [1, 2**24]
        Continuations per state value (``"vine"``).
    c, c_tok : float >= 0
        UCT's exploration constant; AgentUCT's price of a unit of cost.
    baseline : {"actor", "uniform"}
        The centring of the trees' credit.
    seed : int in [0, 2**64)
        The episode's seed.
    use_cache : bool
        False: every step is executed (only the ledger changes).
    backend : {None, "c", "numba"}
        As in :func:`counterfactual_tree`.

    Returns
    -------
    DecisionRecords
        The episode's decisions, their credit, features and Q, and the
        ledger.

    Raises
    ------
    ValueError
        If ``credit``, ``rule``, ``baseline`` or ``backend`` is not one of
        its values (or the backend is not available), ``budget`` or ``k`` is
        not in [1, 2**24], ``c`` or ``c_tok`` is negative or not finite,
        ``seed`` is outside [0, 2**64), ``actor`` has not
        ``env.n_features`` weights (a JitEnvironment), the episode of a
        JitEnvironment is longer than 4096 steps, or the environment breaks
        its contract (as in :func:`counterfactual_tree`).
    TypeError
        If ``root`` is None, ``actor`` is not a SoftmaxActor or None, a
        Python environment lacks ``n_actions``, ``step`` or ``utility``,
        ``budget``, ``k`` or ``seed`` is not an integer, ``c`` or ``c_tok``
        not a real number, or ``use_cache`` not a bool.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> from fastcredit.learning import workflow
    >>> rec = ts.decision_records(workflow.environment(), workflow.root(kind=1, level=2),
    ...                           budget=16, seed=3)
    >>> rec.actions.shape == rec.credit.shape, rec.ledger.n_states == rec.actions.size
    (True, True)
    """
    credit = CREDIT_SOURCE.check(credit)
    rule = ALLOCATOR.check(rule)
    backend = BACKEND.check(backend)
    budget, k = TREE_BUDGET.check(budget), CONTINUATIONS.check(k)
    c, c_tok = EXPLORATION.check(c), COST_PRICE.check(c_tok)
    baseline = BASELINE.check(baseline)
    seed = SEED.check(seed)
    use_cache = check_bool(use_cache, "use_cache")
    cache = _cache_for(env, root, None)
    _theta(env, actor)
    actions, behaviour, executed, cost = _rollout(cache, actor, seed)
    ledger = RunLedger(executed, cost)
    T = actions.shape[0]
    a_max = env.max_actions if cache.jit else None
    states, legal, qs = [], np.zeros(T, dtype=np.int64), []
    values = np.zeros(T + 1)
    cr = np.full(T, np.nan)
    node = 0
    for t in range(T):
        states.append(_state(cache, node))
        legal[t] = _nact(cache, node)
        node = int(cache.node_child[node, actions[t]]) if cache.jit else \
            cache.child[(node, int(actions[t]))]
    utility = float(env.utility(_state(cache, node)))
    for t in range(T):
        pre = actions[:t]
        s = state_seed(seed, t)
        if credit == "asct":
            res = counterfactual_tree(env, None, pre, actor, budget=budget, rule=rule, c=c,
                                      c_tok=c_tok, baseline=baseline, seed=s, cache=cache,
                                      use_cache=use_cache, backend=backend)
            cr[t] = res.credit[actions[t]]
            qs.append(res.q)
            ledger = ledger.add_tree(res.ledger)
        elif credit == "vine":
            values[t], _, led = monte_carlo_value(env, None, pre, actor, k=k, seed=s,
                                                  cache=cache, use_cache=use_cache)
            ledger = ledger.add_tree(led)
    if credit == "vine":
        values[T] = utility
        cr = values[1:] - values[:-1]
    elif credit == "return":
        cr[:] = utility
    if a_max is None:
        a_max = int(legal.max()) if T else 1
    d = getattr(env, "n_features", 0)
    features = np.stack([_features(env, states[t], legal[t], a_max, d) for t in range(T)]) \
        if T else np.zeros((0, a_max, d))
    q = np.full((T, a_max), np.nan)
    for t, row in enumerate(qs):
        q[t, :row.shape[0]] = row
    return DecisionRecords(states, actions, behaviour, cr, features, legal, q, utility, ledger)
