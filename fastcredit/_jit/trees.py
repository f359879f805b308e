"""Numba drivers of counterfactual trees over a user's ``@njit`` environment
(fastcredit.treesearch; the allocation rule of every trial is the trees
family's kernel ``fastcredit._numba.trees.allocation_pick``).

Not cached: each environment's functions are distinct argument types,
compiled once per process.

An environment is five ``@njit`` functions over int64 states:
``n_actions(state) -> int`` (0 at a terminal state), ``step(state, action)
-> (state, cost)``, ``utility(state) -> float``, ``features(state, action,
out)`` (writes d floats) and ``step_cost(state, action) -> float`` (the
predicted cost of one step, read by AgentUCT).

The trie of executed prefixes (the prefix cache) is five arrays:
``node_state`` (cap,) int64, ``node_nact`` (cap,) int64, ``node_cost`` (cap,)
float64 (the cost of the step into the node), ``node_child`` (cap, A) int64
(-1: not yet executed) and ``n_nodes`` (1,) int64; node 0 is the episode's
root. The trie is kept whether or not the cache is used, so that what a trial
would cost with the cache (its *uncached* cost, read by AgentUCT) is the same
either way and the cache changes the ledger only.

Signatures:
    tree(n_actions, step, utility, features, step_cost, trie..., prefix,
         theta, rule, budget, c, c_tok, seed, use_cache, counts, sums,
         trial_action, trial_return, trial_executed, trial_reused,
         trial_cost, restore) -> status
        status 0; 1 when the trie is full (the caller grows it and runs
        again), 2 when prefix leads to a terminal state, 3 when an action of
        prefix is not legal, 4 when the environment broke its contract (an
        action count outside 0..A, a non-finite cost or utility).
    rollout(n_actions, step, utility, features, trie..., theta, seed,
            actions, probs) -> (length, status): the actor's own episode
        from node 0, its steps executed into the trie.
    exact_q(n_actions, step, utility, features, state, theta, q) -> status:
        Q(state, a) of every legal a under the actor, by enumeration.
    finish(counts, sums, pi, n, trial_action, trial_return, uniform, q,
           stderr, credit) -> baseline: a tree's Q, standard errors and
        centred credit from its trials (both engines call it).
    bound(n_actions, step, utility, features, step_cost) -> search: a
        compiled function with the environment's functions bound in (so a
        call types arrays only, not five function arguments, which costs
        Numba's dispatcher ~25 us), doing the tree, the visited state's
        probabilities and ``finish`` in one call:
        search(trie..., prefix, theta, rule, budget, c, c_tok, seed,
               use_cache, uniform, counts, trial_action, per_action,
               per_trial, scalars, info) -> status
        per_action (5, A): sums, pi, q, stderr, credit; per_trial (4,
        budget): return, executed, reused, cost; scalars (4,): the
        restore's executed, reused, cost and the baseline; info (2,): the
        visited state's legal actions and its state.
"""
import math

import numpy as np
from numba import njit

from .._numba.rng import key, uniform
from .._numba.trees import allocation_pick

#: rule code of Monte-Carlo continuations: the actor samples the root action too
ROOT_ACTOR = -1
#: stream items of a tree's draws beside the allocator's (seed, trial): the
#: continuations of trial i use item CONTINUE + i, candidate sampling CANDIDATES
CONTINUE = np.uint64(1 << 62)
CANDIDATES = np.uint64(1 << 63)
#: rule codes (fastcredit._constants.ALLOC_*)
_AGENT_UCT = 2

OK, FULL, TERMINAL, ILLEGAL, BROKEN = 0, 1, 2, 3, 4


@njit(nogil=True)
def probs(features, theta, state, n, phi, out):
    """out[:n] = softmax over the legal actions of theta . features(state, b),
    the dot product and the normaliser summed in index order."""
    top = -np.inf
    for b in range(n):
        features(state, b, phi)
        logit = 0.0
        for k in range(phi.shape[0]):
            logit += theta[k] * phi[k]
        out[b] = logit
        if logit > top:
            top = logit
    z = 0.0
    for b in range(n):
        out[b] = math.exp(out[b] - top)
        z += out[b]
    for b in range(n):
        out[b] /= z


@njit(nogil=True)
def draw(p, n, u):
    """The action of cumulative probability u (inverse CDF in index order;
    the last legal action takes what rounding leaves)."""
    for b in range(n - 1):
        u -= p[b]
        if u < 0.0:
            return b
    return n - 1


@njit(nogil=True)
def _advance(n_actions, step, node_state, node_nact, node_cost, node_child, n_nodes, node,
             state, action, execute, stats):
    """Take ``action`` from ``node`` (in ``state``). A known prefix is reused
    (its state read from the trie) unless ``execute``; an unknown one is
    executed and added. stats += (executed, reused, cost charged, new cost).
    Returns (child, its state), child -1 when the trie is full or -2 when
    the environment broke its contract."""
    c = node_child[node, action]
    if c >= 0 and not execute:
        stats[1] += 1
        return c, node_state[c]
    nxt, cost = step(state, action)
    cost = np.float64(cost)
    if not (math.isfinite(cost) and cost >= 0.0):
        return -2, state
    stats[0] += 1
    stats[2] += cost
    if c >= 0:
        return c, np.int64(nxt)
    c = n_nodes[0]
    if c >= node_state.shape[0]:
        return -1, state
    na = n_actions(nxt)
    if na < 0 or na > node_child.shape[1]:
        return -2, state
    n_nodes[0] = c + 1
    node_state[c] = nxt
    node_nact[c] = na
    node_cost[c] = cost
    node_child[c, :] = -1
    node_child[node, action] = c
    stats[3] += cost
    return c, np.int64(nxt)


@njit(nogil=True)
def _grow_rows(rows, n):
    out = np.full(max(n, 2 * rows.shape[0]), -1, dtype=np.int64)
    out[:rows.shape[0]] = rows
    return out


@njit(nogil=True)
def _grow_memo(memo):
    out = np.empty((2 * memo.shape[0], memo.shape[1]))
    out[:memo.shape[0]] = memo
    return out


@njit(nogil=True)
def tree(n_actions, step, utility, features, step_cost, node_state, node_nact, node_cost,
         node_child, n_nodes, prefix, theta, rule, budget, c, c_tok, seed, use_cache,
         counts, sums, trial_action, trial_return, trial_executed, trial_reused, trial_cost,
         restore):
    n_max = node_child.shape[1]
    phi = np.empty(theta.shape[0])
    p = np.empty(n_max)      # the visited state's probabilities
    stats = np.zeros(4)
    # restore the visited state: from the cache, or executed from the root
    node, state = 0, node_state[0]
    for t in range(prefix.shape[0]):
        a = prefix[t]
        if a < 0 or a >= node_nact[node]:
            return ILLEGAL
        node, state = _advance(n_actions, step, node_state, node_nact, node_cost, node_child,
                               n_nodes, node, state, a, not use_cache, stats)
        if node < 0:
            return FULL if node == -1 else BROKEN
    restore[0], restore[1], restore[2] = stats[0], stats[1], stats[2]
    visited, root_state = node, state
    n = node_nact[visited]
    if n == 0:
        return TERMINAL
    counts[:n] = 0
    sums[:n] = 0.0
    probs(features, theta, root_state, n, phi, p)
    # predicted uncached cost of a trial of each root action (AgentUCT): one
    # step if that child is not yet in the trie, then the last trial's
    costs = np.zeros(n)
    for a in range(n):
        if node_child[visited, a] < 0:
            costs[a] = step_cost(root_state, a)
            if not (math.isfinite(costs[a]) and costs[a] >= 0.0):
                return BROKEN
    # candidates: every action, or (AgentUCT, budget < n) budget of them drawn
    # without replacement with weight exp(-c_tok * cost) (Gumbel-top-budget)
    cand = np.arange(n)
    n_cand = n
    if rule == _AGENT_UCT and budget < n:
        g = np.empty(n)
        rs = key(seed, CANDIDATES)
        for a in range(n):
            rs, u = uniform(rs)
            g[a] = -c_tok * costs[a] - math.log(-math.log(u + 1e-300) + 1e-300)
        taken = np.zeros(n, dtype=np.bool_)
        for j in range(budget):
            best = -1
            for a in range(n):
                if not taken[a] and (best < 0 or g[a] > g[best]):
                    best = a
            taken[best] = True
        n_cand = 0
        for a in range(n):
            if taken[a]:
                cand[n_cand] = a
                n_cand += 1
    p_row = np.full(node_state.shape[0], -1, dtype=np.int64)
    p_memo = np.empty((64, n_max))
    n_memo = 0
    sub_counts = np.zeros(n_cand, dtype=np.int64)
    sub_sums = np.zeros(n_cand)
    sub_costs = np.zeros(n_cand)
    for i in range(budget):
        stats[:] = 0.0
        if rule == ROOT_ACTOR:
            cs = key(seed, CONTINUE + np.uint64(i))
            cs, u = uniform(cs)
            a0 = draw(p, n, u)
        else:
            for j in range(n_cand):
                sub_counts[j] = counts[cand[j]]
                sub_sums[j] = sums[cand[j]]
                sub_costs[j] = costs[cand[j]]
            j = allocation_pick(rule, sub_counts, sub_sums, sub_costs, c, c_tok, seed, i)
            if j < 0:
                return BROKEN
            a0 = cand[j]
            cs = key(seed, CONTINUE + np.uint64(i))
        # without the cache a trial replays the prefix (trial 0 goes on from
        # the tree's own restore)
        node, state = visited, root_state
        if not use_cache and i > 0:
            node, state = 0, node_state[0]
            for t in range(prefix.shape[0]):
                node, state = _advance(n_actions, step, node_state, node_nact, node_cost,
                                       node_child, n_nodes, node, state, prefix[t], True,
                                       stats)
                if node < 0:
                    return FULL if node == -1 else BROKEN
        elif use_cache:
            stats[1] += prefix.shape[0]
        a = a0
        while True:
            node, state = _advance(n_actions, step, node_state, node_nact, node_cost,
                                   node_child, n_nodes, node, state, a, not use_cache, stats)
            if node < 0:
                return FULL if node == -1 else BROKEN
            na = node_nact[node]
            if na == 0:
                break
            # the actor is fixed during a tree: a node's probabilities are
            # computed once (row p_row[node] of p_memo)
            if node >= p_row.shape[0]:
                p_row = _grow_rows(p_row, node_state.shape[0])
            r = p_row[node]
            if r < 0:
                if n_memo >= p_memo.shape[0]:
                    p_memo = _grow_memo(p_memo)
                r = n_memo
                n_memo += 1
                p_row[node] = r
                probs(features, theta, state, na, phi, p_memo[r])
            cs, u = uniform(cs)
            a = draw(p_memo[r], na, u)
        value = np.float64(utility(state))
        if not math.isfinite(value):
            return BROKEN
        counts[a0] += 1
        sums[a0] += value
        costs[a0] = stats[3]
        trial_action[i] = a0
        trial_return[i] = value
        trial_executed[i] = stats[0]
        trial_reused[i] = stats[1]
        trial_cost[i] = stats[2]
    return OK


@njit(nogil=True)
def finish(counts, sums, pi, n, trial_action, trial_return, uniform, q, stderr, credit):
    """q[a] = sums[a] / counts[a]; stderr[a] = sd(a's returns, ddof 1) /
    sqrt(counts[a]); credit[a] = q[a] - baseline over the tried actions,
    the baseline sum_a w_a q[a] with w the actor's pi renormalised over the
    tried actions (1/k each when their pi sums to 0), or (``uniform``) the
    plain mean. Untried: NaN (stderr NaN below 2 trials). Sums in index
    order (actions) and trial order (squared deviations)."""
    tried = 0
    ptot = 0.0
    for a in range(n):
        stderr[a] = 0.0
        if counts[a] > 0:
            q[a] = sums[a] / np.float64(counts[a])
            tried += 1
            ptot += pi[a]
        else:
            q[a] = np.nan
    for i in range(trial_action.shape[0]):
        a = trial_action[i]
        d = trial_return[i] - q[a]
        stderr[a] += d * d
    for a in range(n):
        if counts[a] > 1:
            stderr[a] = math.sqrt(stderr[a] / np.float64(counts[a] - 1)) / \
                math.sqrt(np.float64(counts[a]))
        else:
            stderr[a] = np.nan
    b = 0.0
    if uniform:
        for a in range(n):
            if counts[a] > 0:
                b += q[a]
        b /= np.float64(tried)
    else:
        for a in range(n):
            if counts[a] > 0:
                w = pi[a] / ptot if ptot > 0.0 else 1.0 / np.float64(tried)
                b += w * q[a]
    for a in range(n):
        credit[a] = q[a] - b if counts[a] > 0 else np.nan
    return b


_BOUND = {}


def bound(n_actions, step, utility, features, step_cost):
    """The compiled tree search of one environment (module docstring),
    built once per set of functions."""
    fns = (n_actions, step, utility, features, step_cost)
    fn = _BOUND.get(fns)
    if fn is not None:
        return fn

    @njit(nogil=True)
    def search(node_state, node_nact, node_cost, node_child, n_nodes, prefix, theta, rule,
               budget, c, c_tok, seed, use_cache, uniform, counts, trial_action, per_action,
               per_trial, scalars, info):
        status = tree(n_actions, step, utility, features, step_cost, node_state, node_nact,
                      node_cost, node_child, n_nodes, prefix, theta, rule, budget, c, c_tok,
                      seed, use_cache, counts, per_action[0], trial_action, per_trial[0],
                      per_trial[1], per_trial[2], per_trial[3], scalars)
        if status != OK:
            return status
        node = 0
        for t in range(prefix.shape[0]):
            node = node_child[node, prefix[t]]
        n = node_nact[node]
        info[0] = n
        info[1] = node_state[node]
        phi = np.empty(theta.shape[0])
        probs(features, theta, node_state[node], n, phi, per_action[1])
        scalars[3] = finish(counts, per_action[0], per_action[1], n, trial_action,
                            per_trial[0], uniform, per_action[2], per_action[3],
                            per_action[4])
        return OK

    _BOUND[fns] = search
    return search


@njit(nogil=True)
def rollout(n_actions, step, utility, features, node_state, node_nact, node_cost, node_child,
            n_nodes, theta, seed, actions, probs_out, stats):
    """The actor's own episode from node 0: action t drawn with draw t of the
    stream (seed, 0), every step executed and added to the trie (a step
    already there is executed again: the actor's episode is real work).
    Returns (length, status); stats += (executed, reused, cost, new cost)."""
    n_max = node_child.shape[1]
    phi = np.empty(theta.shape[0])
    p = np.empty(n_max)
    rs = key(seed, np.uint64(0))
    node, state = 0, node_state[0]
    t = 0
    while node_nact[node] > 0:
        if t >= actions.shape[0]:
            return t, BROKEN
        n = node_nact[node]
        probs(features, theta, state, n, phi, p)
        rs, u = uniform(rs)
        a = draw(p, n, u)
        actions[t] = a
        probs_out[t] = p[a]
        node, state = _advance(n_actions, step, node_state, node_nact, node_cost, node_child,
                               n_nodes, node, state, a, True, stats)
        if node < 0:
            return t, FULL if node == -1 else BROKEN
        t += 1
    return t, OK


@njit(nogil=True)
def _value(n_actions, step, utility, features, state, theta, phi, depth):
    """V(state) under the actor: the probability-weighted mean of its
    children's values, summed in action order."""
    n = n_actions(state)
    if n == 0:
        return np.float64(utility(state))
    if depth > 64:
        return np.nan
    p = np.empty(n)
    probs(features, theta, state, n, phi, p)
    v = 0.0
    for a in range(n):
        nxt, _ = step(state, a)
        v += p[a] * _value(n_actions, step, utility, features, np.int64(nxt), theta, phi,
                           depth + 1)
    return v


@njit(nogil=True)
def exact_q(n_actions, step, utility, features, state, theta, q):
    """q[a] = Q(state, a) under the actor for every legal a, by enumerating
    every continuation (small environments only). Returns the action count."""
    phi = np.empty(theta.shape[0])
    n = n_actions(state)
    for a in range(n):
        nxt, _ = step(state, a)
        q[a] = _value(n_actions, step, utility, features, np.int64(nxt), theta, phi, 1)
    return n
