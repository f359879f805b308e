"""fastcredit.treesearch: counterfactual trees over recoverable prefixes.

Oracles: exact Q and V of the synthetic workflow by enumeration
(fastcredit.learning.workflow); an independent count of the environment's
steps; AgentUCT's score recomputed from its formula; the compiled engine
against the Python one (the same bits), on both allocation backends.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import fastcredit.treesearch as ts
from fastcredit import trees
from fastcredit.learning import workflow as W

ENV = W.environment()
THETA = np.random.default_rng(7).normal(scale=0.7, size=W.N_FEATURES)
ACTOR = ts.SoftmaxActor(THETA)
# (root, prefix) of states of different kinds and depths
STATES = [(W.root(0, 3), []), (W.root(1, 2), [0]), (W.root(2, 1), [2, 3])]


class Counting:
    """The workflow through the Python protocol, counting executed steps."""

    def __init__(self):
        self.inner = ENV.python()
        self.n_features = self.inner.n_features
        self.steps = 0

    def n_actions(self, s):
        return self.inner.n_actions(s)

    def step(self, s, a):
        self.steps += 1
        return self.inner.step(s, a)

    def utility(self, s):
        return self.inner.utility(s)

    def features(self, s, a):
        return self.inner.features(s, a)

    def step_cost(self, s, a):
        return self.inner.step_cost(s, a)


def _same(a, b, skip=("ledger",)):
    for f in a.__dataclass_fields__:
        if f in skip:
            continue
        x, y = getattr(a, f), getattr(b, f)
        if hasattr(x, "__dataclass_fields__"):
            _same(x, y, skip=())
        else:
            np.testing.assert_array_equal(x, y, err_msg=f)


@pytest.mark.parametrize("root,prefix", STATES)
def test_q_converges_to_the_exact_q(root, prefix):
    """2,000 uniform trials (400 per action): |Q_hat - Q| < 4.5 stderr for
    each of the 15 (state, action) pairs; the false-failure rate is at most
    15 * 6.8e-6 ~ 1e-4 per run of this test (normal tails; 400 trials)."""
    exact = ts.exact_q(ENV, root, prefix, ACTOR)
    res = ts.counterfactual_tree(ENV, root, prefix, ACTOR, budget=2000, seed=11)
    z = np.abs(res.q - exact) / np.maximum(res.stderr, 1e-12)
    assert (z < 4.5).all(), (res.q, exact, res.stderr)
    # exact Q by the Python enumeration agrees with the compiled one
    np.testing.assert_allclose(ts.exact_q(ENV.python(), root, prefix, ACTOR), exact,
                               rtol=1e-12)


def test_vine_values_against_exact_state_values():
    """k = 4,000 continuations: |V_hat - V| < 4.5 stderr at each of the 3
    states (false-failure rate ~2e-5)."""
    for root, prefix in STATES:
        cache = ts.PrefixCache(ENV, root)
        state, _ = cache.restore(prefix)
        n = W.n_actions(np.int64(state))
        pi = np.zeros(n)
        from fastcredit._jit.trees import probs
        probs(ENV.features, THETA, np.int64(state), n, np.empty(W.N_FEATURES), pi)
        v = pi @ ts.exact_q(ENV, root, prefix, ACTOR)
        v_hat, se, ledger = ts.monte_carlo_value(ENV, root, prefix, ACTOR, k=4000, seed=5)
        assert abs(v_hat - v) < 4.5 * se, (v_hat, v, se)
        assert ledger.trial_executed.shape == (4000,)


@pytest.mark.parametrize("rule", ts.ALLOCATORS)
def test_root_coverage(rule):
    for budget in (5, 6, 23):
        res = ts.counterfactual_tree(ENV, W.root(1, 1), [], ACTOR, budget=budget, rule=rule,
                                     seed=3)
        assert (res.counts >= 1).all() and res.counts.sum() == budget
        if budget == 5:
            assert (res.counts == 1).all()
    # fewer trials than actions: distinct actions, no repeats
    res = ts.counterfactual_tree(ENV, W.root(1, 1), [], ACTOR, budget=3, rule=rule, seed=3)
    assert sorted(res.counts.tolist()) == [0, 0, 1, 1, 1]
    assert np.isnan(res.q[res.counts == 0]).all() and np.isnan(res.credit[res.counts == 0]).all()


@pytest.mark.parametrize("rule", ts.ALLOCATORS)
def test_the_cache_changes_only_the_ledger(rule):
    for root, prefix in STATES:
        kw = dict(budget=48, rule=rule, c_tok=0.2, seed=9)
        env_on, env_off = Counting(), Counting()
        on = ts.counterfactual_tree(env_on, root, prefix, ACTOR, use_cache=True, **kw)
        off = ts.counterfactual_tree(env_off, root, prefix, ACTOR, use_cache=False, **kw)
        _same(on, off)
        # the ledger is an independent count of the steps the environment ran
        assert on.ledger.executed == env_on.steps
        assert off.ledger.executed == env_off.steps
        assert off.ledger.reused == 0
        assert on.ledger.executed <= 0.5 * off.ledger.executed
        # every step of a trial is executed or reused: with the cache a trial
        # restores its prefix (reused), without it trials after the first replay it
        replayed = np.where(np.arange(48) > 0, len(prefix), 0)
        np.testing.assert_array_equal(
            on.ledger.trial_executed + on.ledger.trial_reused - len(prefix),
            off.ledger.trial_executed - replayed)
        # the compiled engine: the same results and the same ledger
        jit_on = ts.counterfactual_tree(ENV, root, prefix, ACTOR, use_cache=True, **kw)
        _same(on, jit_on, skip=())


def test_seeds_reproduce_bits_on_both_backends():
    kw = dict(budget=30, rule="uct", seed=2**64 - 5)
    ref = ts.counterfactual_tree(ENV, W.root(2, 2), [0], ACTOR, **kw)
    for backend in ("c", "numba"):
        _same(ref, ts.counterfactual_tree(ENV.python(), W.root(2, 2), [0], ACTOR,
                                          backend=backend, **kw), skip=())
    _same(ref, ts.counterfactual_tree(ENV, W.root(2, 2), [0], ACTOR, **kw), skip=())
    other = ts.counterfactual_tree(ENV, W.root(2, 2), [0], ACTOR, budget=30, rule="uct",
                                   seed=1)
    assert not np.array_equal(ref.trial_return, other.trial_return)
    for credit in ts.CREDIT_SOURCES:
        a = ts.decision_records(ENV, W.root(1, 3), ACTOR, credit=credit, budget=8, k=8, seed=4)
        b = ts.decision_records(ENV.python(), W.root(1, 3), ACTOR, credit=credit, budget=8,
                                k=8, seed=4)
        np.testing.assert_array_equal(a.credit, b.credit)
        np.testing.assert_array_equal(a.actions, b.actions)
        np.testing.assert_array_equal(a.features, b.features)
        assert a.ledger == b.ledger


def test_agent_uct_selection_against_its_formula():
    """Replays AgentUCT's choices: every trial picks an action of maximal
    score, untried ones (cheapest predicted cost) first; the prediction is
    the first step's cost while it is uncached, then the uncached cost (with
    the cache on: the executed cost) of the action's last trial."""
    c, c_tok = 0.8, 0.15
    root, prefix = W.root(2, 3), [0]
    res = ts.counterfactual_tree(ENV, root, prefix, ACTOR, budget=60, rule="agent_uct", c=c,
                                 c_tok=c_tok, seed=21)
    n = res.counts.shape[0]
    # the prefix's child 0 exists only if the actor's prefix went there: a fresh cache has
    # only the prefix itself, so every root action's first step is uncached
    cost = np.array([W.step_cost(np.int64(0), a) for a in range(n)])
    counts, sums = np.zeros(n), np.zeros(n)
    for i, (a, r) in enumerate(zip(res.trial_action, res.trial_return)):
        untried = counts == 0
        if untried.any():
            score = np.where(untried, -c_tok * cost, -np.inf)
        else:
            score = sums / counts + c * np.sqrt(math.log(counts.sum() + 1) / counts) \
                - c_tok * cost
        assert score[a] == score.max(), (i, a, score)
        counts[a] += 1
        sums[a] += r
        cost[a] = res.ledger.trial_cost[i]


def test_decision_records_keep_auxiliary_branches_out():
    rec = ts.decision_records(ENV, W.root(0, 2), ACTOR, budget=12, seed=1)
    T = rec.actions.shape[0]
    assert rec.behaviour.shape == rec.credit.shape == (T,) and rec.features.shape[:2] == (T, 5)
    # the states are the actor's own: replaying its actions reaches them
    s = np.int64(W.root(0, 2))
    for t in range(T):
        assert rec.states[t] == s
        s = W.step(s, rec.actions[t])[0]
    assert rec.utility == W.utility(s)
    assert rec.ledger.n_states == T and rec.ledger.actor_executed == T
    # credit is Q(s_t, a_t) centred by the actor
    for t in range(T):
        res = ts.counterfactual_tree(ENV, W.root(0, 2), rec.actions[:t], ACTOR, budget=12,
                                     seed=ts.state_seed(1, t))
        assert rec.credit[t] == res.credit[rec.actions[t]]


def test_diagnostics():
    rep = ts.repeatability(ENV, W.root(0, 3), [[], [1]], ACTOR, repeats=6, budget=40)
    assert rep.q.shape == (2, 6, 5) and (rep.q_sd > 0).all()
    assert ((rep.sign_agreement >= 0) & (rep.sign_agreement <= 1)).all()
    big = ts.repeatability(ENV, W.root(0, 3), [[]], ACTOR, repeats=6, budget=800)
    assert big.q_sd[0] < rep.q_sd[0]   # 20x the trials: about 1/sqrt(20) the SD
    q = ts.exact_q(ENV, W.root(0, 3), [], ACTOR)
    assert ts.j_search(q, q, np.full(5, 0.2)) == pytest.approx(q.max() - q.mean())
    assert ts.centring_sign_flips(q, np.full(5, 0.2)) == 0.0
    assert ts.cost_adjusted_value([2.0], [5.0], c_tok=0.1) == pytest.approx(1.5)


@pytest.mark.parametrize("call,name", [
    (lambda: ts.counterfactual_tree(ENV, W.root(), budget=0), "budget"),
    (lambda: ts.counterfactual_tree(ENV, W.root(), rule="ucb"), "rule"),
    (lambda: ts.counterfactual_tree(ENV, W.root(), [7]), "prefix"),
    (lambda: ts.counterfactual_tree(ENV, W.root(), [[0]]), "prefix"),
    (lambda: ts.counterfactual_tree(ENV, W.root(), [4]), "prefix"),   # stop: terminal
    (lambda: ts.counterfactual_tree(ENV, W.root(), actor=THETA), "actor"),
    (lambda: ts.counterfactual_tree(ENV, W.root(), actor=ts.SoftmaxActor([1.0])), "actor"),
    (lambda: ts.counterfactual_tree(ENV, W.root(), c=-1.0), "c"),
    (lambda: ts.counterfactual_tree(ENV, W.root(), c_tok=float("nan")), "c_tok"),
    (lambda: ts.counterfactual_tree(ENV, W.root(), seed=-1), "seed"),
    (lambda: ts.counterfactual_tree(ENV, cache=ts.PrefixCache(ENV.python(), 0)), "cache"),
    (lambda: ts.counterfactual_tree(ENV), "root"),
    (lambda: ts.counterfactual_tree(object(), 0), "env"),
    (lambda: ts.SoftmaxActor([np.nan]), "theta"),
    (lambda: ts.JitEnvironment(len, W.step, W.utility, W.features, max_actions=5,
                               n_features=50), "n_actions"),
    (lambda: ts.monte_carlo_value(ENV, W.root(), k=0), "k"),
    (lambda: ts.decision_records(ENV, W.root(), credit="gae"), "credit"),
    (lambda: ts.repeatability(ENV, W.root(), [[]], repeats=1), "repeats"),
    (lambda: ts.j_search([1.0], [1.0, 2.0], [1.0]), "q_hat"),
])
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises((ValueError, TypeError)) as err:
        call()
    assert name in str(err.value)


def test_exported_from_the_trees_family():
    assert trees.counterfactual_tree is ts.counterfactual_tree
    assert "decision_records" in trees.__all__


# Defects the fuzz harness (tests/test_fuzz.py) found: each call was accepted,
# or raised an error naming no argument or not a ValueError/TypeError.
@pytest.mark.parametrize("call,pattern", [
    # the backend was read on the Python engine's path only
    (lambda: ts.counterfactual_tree(ENV, W.root(), backend="gpu"), "backend"),
    (lambda: ts.decision_records(ENV, W.root(), budget=2, backend=3), "backend"),
    # a JitEnvironment's root went through np.int64(): "3" and 1.5 accepted, 2**64 an
    # OverflowError
    (lambda: ts.counterfactual_tree(ENV, "3"), "root"),
    (lambda: ts.counterfactual_tree(ENV, 1.5), "root"),
    (lambda: ts.counterfactual_tree(ENV, 2**64), "root"),
    (lambda: ts.PrefixCache(ENV, np.float64(0.0)), "root"),
    # a terminal root (-1: step 7 of 6) blamed the prefix alone
    (lambda: ts.counterfactual_tree(ENV, -1, [0]), "root"),
    (lambda: ts.exact_q(ENV, -1, [0]), "root"),
    (lambda: ts.monte_carlo_value(ENV, -1, [0]), "root"),
    # root and a cache of another root: the root was silently ignored
    (lambda: ts.counterfactual_tree(ENV, W.root(0, 3), cache=ts.PrefixCache(ENV, W.root(1, 2))),
     "root"),
    # a cache too large for memory named no argument
    (lambda: ts.PrefixCache(ENV, 0, capacity=2**40), "capacity"),
    (lambda: ACTOR.probs(ENV, W.root(), 0), r"\bn must"),
    (lambda: ts.RunLedger().add_tree(None), "ledger"),         # an AttributeError
    (lambda: ts.state_seed(-1, 0), "seed"),                    # OverflowError
    (lambda: ts.state_seed("0", 0), "seed"),                   # accepted
    (lambda: ts.state_seed(0, 2.5), r"\bt must"),              # accepted
    (lambda: ts.state_seed(0, None), r"\bt must"),
    (lambda: ts.centring_sign_flips("x", [1.0]), r"\bq\b"),    # named q_hat
    (lambda: ts.repeatability(ENV, W.root(), [[0.5]]), r"prefixes\[0\]"),
    # options only a tree reads, accepted without a tree (VinePPO, the return, a
    # terminal state)
    (lambda: ts.decision_records(ENV, W.root(), credit="vine", k=2, c=-1.0), "c must"),
    (lambda: ts.decision_records(ENV, W.root(), credit="return", c_tok="x"), "c_tok"),
    (lambda: ts.decision_records(ENV, W.root(), credit="vine", k=2, baseline="median"),
     "baseline"),
    (lambda: ts.monte_carlo_value(ENV, W.root(), [4], seed=-1), "seed"),
    (lambda: ts.monte_carlo_value(ENV, W.root(), [4], use_cache="no"), "use_cache"),
    (lambda: ts.monte_carlo_value(ENV, W.root(), [4], actor=3), "actor"),
])
def test_malformed_input_is_refused_by_name(call, pattern):
    with pytest.raises((ValueError, TypeError), match=pattern):
        call()


def test_an_illegal_prefix_action_is_located():
    with pytest.raises(ValueError, match=r"prefix\[1\] = 9, and the state prefix\[:1\] "
                                         r"reaches has 5 legal actions"):
        ts.counterfactual_tree(ENV, W.root(), [0, 9])
    with pytest.raises(ValueError, match=r"prefix\[1\] = 9"):
        ts.PrefixCache(ENV, W.root()).restore([0, 9])


def test_root_given_with_its_own_cache_is_accepted():
    cache = ts.PrefixCache(ENV, W.root(1, 2))
    a = ts.counterfactual_tree(ENV, W.root(1, 2), [0], ACTOR, budget=8, cache=cache)
    b = ts.counterfactual_tree(ENV, None, [0], ACTOR, budget=8, cache=cache)
    _same(a, b)


def test_actor_probabilities_on_a_jit_environment():
    """SoftmaxActor.probs took only Python environments (a JitEnvironment's
    features write into an array): it now takes both, with the same bits."""
    for state in (W.root(0, 3), W.root(2, 1)):
        p = ACTOR.probs(ENV, state, 5)
        assert p == ACTOR.probs(ENV.python(), state, 5)
        assert sum(p) == pytest.approx(1.0)


@pytest.mark.parametrize("baseline", ["actor", "uniform"])
def test_q_stderr_and_credit_against_their_definitions(baseline):
    """The compiled finish (both engines call it) against NumPy and the trees
    family's actor_centered_credit on the tried actions."""
    root, prefix = STATES[1]
    res = ts.counterfactual_tree(ENV, root, prefix, ACTOR, budget=13, rule="uct",
                                 baseline=baseline, seed=4)
    tried = np.flatnonzero(res.counts > 0)
    for a in range(res.counts.size):
        r = res.trial_return[res.trial_action == a]
        assert r.size == res.counts[a]
        if r.size:
            assert res.q[a] == pytest.approx(r.mean(), rel=1e-12)
        if r.size > 1:
            assert res.stderr[a] == pytest.approx(r.std(ddof=1) / math.sqrt(r.size), rel=1e-12)
        else:
            assert np.isnan(res.stderr[a])
    w = res.pi[tried] / res.pi[tried].sum()
    ref = trees.actor_centered_credit(res.q[tried], w, [0, tried.size], baseline=baseline)
    np.testing.assert_allclose(res.credit[tried], ref.credit, rtol=1e-12, atol=1e-12)
    assert res.baseline == pytest.approx(float(ref.baseline[0]), rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(res.pi, ACTOR.probs(ENV, W._pack(1, 1, 0, 0, 1, 0, 1, 2), 5),
                               rtol=1e-12)


class Batched(Counting):
    """Counting with step_batch: the trials' steps must go through it (the
    restore and the actor's own episode still step one at a time), with the
    same bits and ledger."""

    def __init__(self):
        super().__init__()
        self.calls = self.batched = 0

    def step_batch(self, states, actions):
        assert len(states) == len(actions) >= 1
        self.calls += 1
        self.batched += len(states)
        self.steps += len(states)
        out = [self.inner.step(s, a) for s, a in zip(states, actions)]
        return [s for s, _ in out], [c for _, c in out]


@pytest.mark.parametrize("rule", ts.ALLOCATORS)
@pytest.mark.parametrize("use_cache", [True, False])
def test_batched_steps_give_the_one_at_a_time_results(rule, use_cache):
    for root, prefix in STATES:
        kw = dict(budget=48, rule=rule, c_tok=0.2, seed=5, use_cache=use_cache)
        one = ts.counterfactual_tree(Counting(), root, prefix, ACTOR, **kw)
        env = Batched()
        many = ts.counterfactual_tree(env, root, prefix, ACTOR, **kw)
        _same(one, many, skip=())
        assert env.steps == many.ledger.executed
        assert env.batched == many.ledger.trial_executed.sum()
        if rule == "uniform":
            assert env.calls <= 6 + len(prefix)       # one call per round
    # Monte-Carlo continuations (VinePPO's values) and whole episodes' records
    for credit in ts.CREDIT_SOURCES:
        a = ts.decision_records(Counting(), W.root(1, 3), ACTOR, credit=credit, budget=8, k=8,
                                seed=4)
        b = ts.decision_records(Batched(), W.root(1, 3), ACTOR, credit=credit, budget=8, k=8,
                                seed=4)
        np.testing.assert_array_equal(a.credit, b.credit)
        assert a.ledger == b.ledger


def test_step_batch_of_the_wrong_length_is_refused():
    class Short(Batched):
        def step_batch(self, states, actions):
            nxt, cost = super().step_batch(states, actions)
            return nxt[:-1], cost[:-1]
    with pytest.raises(ValueError, match="step_batch"):
        ts.counterfactual_tree(Short(), W.root(0, 0), [], ACTOR, budget=10)
