"""fastcredit.learning: the credit-assignment learning benchmark.

Oracles: the Plackett-Luce log-probability against its definition
(probabilities of all orderings sum to 1) and its gradient against central
finite differences; the Gumbel-top-m sampler against those probabilities
(chi-square, false-failure rate 1e-6); the filter evaluator of a sampled set
against a replay of that set's own pools; the features of a hand-made pool;
training on a toy whose right credit is known.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

import fastcredit as fc
from fastcredit import learning as L
from fastcredit.learning import policies, set_benchmark, update

K, M = 4, 2


def _toy(n_requests=16, k=K):
    """Rewrite 0 carries all the value: y(S) = 1 iff 0 is in S; one-hot
    features, so the policy is one logit per rewrite shared by all requests."""
    masks = np.arange(1 << k)
    values = np.tile((masks & 1).astype(float), (n_requests, 1))
    return L.LearningTask(values, np.tile(np.eye(k), (n_requests, 1, 1)))


def _orderings(k, m):
    return np.array(list(itertools.permutations(range(k), m)))


def _p_contains(policy, k, m, action):
    """Exact P(action in the sampled set) of a one-hot-feature policy."""
    logits = policy.logits(np.eye(k)[None])[0]
    orders = _orderings(k, m)
    logp, _ = L.plackett_luce(np.tile(logits, (len(orders), 1)), orders)
    return float(np.exp(logp)[(orders == action).any(axis=1)].sum())


@pytest.fixture(scope="module")
def task():
    return L.LearningTask.from_pools(L.benchmark_pools(60, rewrites=6, seed=3))


# --- Plackett-Luce ---------------------------------------------------------------

@pytest.mark.parametrize("k,m", [(4, 2), (5, 5), (3, 1)])
def test_plackett_luce_probabilities_sum_to_one(k, m):
    logits = np.random.default_rng(k * 10 + m).normal(scale=2.0, size=k)
    orders = _orderings(k, m)
    logp, _ = L.plackett_luce(np.tile(logits, (len(orders), 1)), orders)
    assert np.exp(logp).sum() == pytest.approx(1.0, abs=1e-12)
    # the definition, one ordering by hand
    o = orders[-1]
    expect = sum(logits[o[t]] - np.log(np.exp(np.delete(logits, o[:t])).sum())
                 for t in range(m))
    assert logp[-1] == pytest.approx(expect, abs=1e-12)


def test_plackett_luce_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    n, k, m = 6, 7, 4
    logits = rng.normal(scale=1.5, size=(n, k))
    order = np.array([rng.permutation(k)[:m] for _ in range(n)])
    weights = rng.normal(size=(n, m))
    _, grad = L.plackett_luce(logits, order, weights)
    h = 1e-6
    for j in range(k):
        step = np.zeros((n, k))
        step[:, j] = h
        up, _ = L.plackett_luce(logits + step, order, weights)
        down, _ = L.plackett_luce(logits - step, order, weights)
        np.testing.assert_allclose(grad[:, j], (up - down) / (2 * h), rtol=1e-6, atol=1e-8)
    # any leading shape: rows are independent
    logp3, grad3 = L.plackett_luce(logits.reshape(2, 3, k), order.reshape(2, 3, m),
                                   weights.reshape(2, 3, m))
    np.testing.assert_array_equal(grad3.reshape(n, k), grad)
    assert logp3.shape == (2, 3)
    # the gradient of a log-probability sums to 0 over the logits (shift invariance)
    np.testing.assert_allclose(L.plackett_luce(logits, order)[1].sum(axis=1), 0, atol=1e-12)


def test_gumbel_top_m_samples_plackett_luce():
    """Chi-square goodness of fit of 40,000 draws over the 12 orderings of
    2 of 4 rewrites; the test fails by chance with probability 1e-6."""
    logits = np.array([0.8, -0.3, 0.1, 0.5])
    draws = 40_000
    noise = np.random.default_rng(11).gumbel(size=(1, draws, K))
    order = policies._sample(logits[None], M, noise)[0]
    orders = _orderings(K, M)
    code = order[:, 0] * K + order[:, 1]
    counts = np.bincount(code, minlength=K * K)[orders[:, 0] * K + orders[:, 1]]
    assert counts.sum() == draws
    logp, _ = L.plackett_luce(np.tile(logits, (len(orders), 1)), orders)
    assert stats.chisquare(counts, draws * np.exp(logp)).pvalue > 1e-6


# --- the data ------------------------------------------------------------------

def test_rewrite_features_of_a_hand_made_pool():
    # request of 3 rewrites: 0 retrieves ads 7 (twice), 8; 1 retrieves 7; 2 nothing
    pools = fc.Pools([0, 3, 4, 4], ad_id=[7, 8, 7, 7], score=[3.0, 1.0, 2.5, 2.0],
                     value=[1.0, 1.0, 1.0, 1.0], m=3)
    f = L.rewrite_features(pools, slots=1)
    np.testing.assert_allclose(f[0, 0], [np.log(3), np.arcsinh(3), np.arcsinh(3), 0.5, 0.0])
    np.testing.assert_allclose(f[0, 1], [np.log(2), np.arcsinh(2), np.arcsinh(2), 0.0, 0.0])
    np.testing.assert_array_equal(f[0, 2], 0.0)
    # two slots: rewrite 0's best two distinct ads are 7 (3.0) and 8 (1.0, its own)
    f2 = L.rewrite_features(pools, slots=2)
    np.testing.assert_allclose(f2[0, 0, 2:], [np.arcsinh(4.0), 0.5, np.arcsinh(1.0)])
    # equal scores: the lower ad id is taken first (ad 3, which only rewrite 0 retrieved)
    tie = fc.Pools([0, 2, 3], ad_id=[5, 3, 5], score=[1.0, 1.0, 2.0], value=[1.0] * 3, m=2)
    np.testing.assert_allclose(L.rewrite_features(tie, slots=1)[0, 0, 4], np.arcsinh(1.0))


def test_task_values_are_the_rerun_tables(task):
    pools = L.benchmark_pools(60, rewrites=6, seed=3)
    np.testing.assert_array_equal(task.values, fc.auction_replay(pools, mode="rerun"))
    part = task.requests(10, 25)
    np.testing.assert_array_equal(part.values, task.values[10:25])
    np.testing.assert_array_equal(part.features, task.features[10:25])
    rebuilt = L.LearningTask.from_pools(part.pools)
    np.testing.assert_array_equal(rebuilt.values, part.values)
    np.testing.assert_array_equal(rebuilt.features, part.features)


def test_filter_evaluator_replays_the_chosen_pools(task):
    rng = np.random.default_rng(5)
    k, m = task.rewrites, 3
    req = rng.integers(0, task.n_requests, 20)
    chosen = np.sort(np.array([rng.permutation(k)[:m] for _ in req]), axis=1)
    table = update._sub_tables(task, req, chosen, "filter", threads=1)
    # at the full set both evaluators give the reward: the set's rerun value
    np.testing.assert_allclose(table[:, -1], task.values[req, policies._set_masks(chosen)],
                               rtol=1e-12)
    p = task.pools
    for n in (0, 7):   # one set by hand: its own pools, replayed in filter mode
        segs = [np.arange(p.offsets[req[n] * k + j], p.offsets[req[n] * k + j + 1])
                for j in chosen[n]]
        take = np.concatenate(segs)
        offsets = np.concatenate([[0], np.cumsum([len(s) for s in segs])])
        own = fc.Pools(offsets, p.ad_id[take], p.score[take], p.value[take], m=m,
                       prerank=p.prerank[take])
        np.testing.assert_array_equal(table[n], fc.auction_replay(own, mode="filter")[0])
    rerun = update._sub_tables(task, req, chosen, "rerun", threads=1)
    sub = [sum(1 << int(chosen[0, t]) for t in range(m) if s >> t & 1) for s in range(1 << m)]
    np.testing.assert_array_equal(rerun[0], task.values[req[0], sub])


# --- training ------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_shapley_trained_policy_finds_the_valuable_rewrite(seed):
    """Uniform sets hold rewrite 0 with probability 1/2. Training is
    deterministic per seed; after 40 updates the Shapley-trained policy holds
    it with probability > 0.99999 on every seed tried (0..9), so the bound
    0.99 has a wide margin."""
    toy = _toy()
    assert _p_contains(L.Policy.initial(toy), K, M, 0) == pytest.approx(0.5)
    policy = L.train_policy(toy, "shapley", m=M, steps=40, batch=16, group=8, lr=0.1,
                            evaluator="rerun", seed=seed)
    assert _p_contains(policy, K, M, 0) > 0.99
    assert np.argmax(policy.theta) == 0
    assert L.policy_value(toy, policy, m=M, samples=200) > 0.98
    assert policy.rewards[-5:].mean() > policy.rewards[:3].mean()


def test_training_is_deterministic_per_seed(task):
    kwargs = dict(m=3, steps=6, batch=8, group=4)
    a = L.train_policy(task, "shapley", seed=4, threads=1, **kwargs)
    b = L.train_policy(task, "shapley", seed=4, threads=2, **kwargs)
    c = L.train_policy(task, "shapley", seed=5, threads=1, **kwargs)
    np.testing.assert_array_equal(a.theta, b.theta)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    assert not np.array_equal(a.theta, c.theta)


def test_benchmark_reports_every_credit_and_repeats(task):
    pools = L.benchmark_pools(50, rewrites=6, seed=1)
    kwargs = dict(m=3, runs=2, steps=4, batch=8, group=4, eval_samples=8)
    res = L.benchmark(pools, **kwargs)
    again = L.benchmark(pools, **kwargs)
    assert res.credits == L.CREDITS
    for c in L.CREDITS:
        assert res.values[c].shape == (2,)
        np.testing.assert_array_equal(res.values[c], again.values[c])
        # a run is train_policy with its documented seed
        one = L.train_policy(task.__class__.from_pools(pools).requests(0, res.n_train), c,
                             m=3, steps=4, batch=8, group=4, seed=set_benchmark._derived_seed(0, 1))
        np.testing.assert_array_equal(one.theta, res.policies[c][1].theta)
    # the curve: each run scored after 1 and 4 updates on the held-out noise
    assert res.checkpoints == (1, 4)
    test = L.LearningTask.from_pools(pools).requests(res.n_train, 50)
    seed = set_benchmark._derived_seed(0, 2)
    early = L.policy_value(test, res.policies["banzhaf"][0].after(1), m=3, samples=8, seed=seed)
    assert res.curves["banzhaf"][0, 0] == early
    assert res.initial == L.policy_value(test, L.Policy.initial(test), m=3, samples=8, seed=seed)
    assert res.initial == again.initial and 0 < res.initial <= res.best
    assert (res.n_train, res.n_held_out) == (35, 15)
    text = res.table()
    for name in ("Broadcast", "Singleton", "Leave-one-out", "Banzhaf", "Shapley (CASI)",
                 "initial policy", "best set"):
        assert name in text


# --- bad input -----------------------------------------------------------------

@pytest.mark.parametrize("call,name", [
    (lambda t: L.train_policy(t, "casi"), "credit"),
    (lambda t: L.train_policy(t, m=4), "m"),
    (lambda t: L.train_policy(t, m=2, batch=33), "batch"),
    (lambda t: L.train_policy(t, m=2, group=1), "group"),
    (lambda t: L.train_policy(t, m=2, evaluator="audit"), "evaluator"),
    (lambda t: L.train_policy(t, m=2), "evaluator"),          # filter without pools
    (lambda t: L.train_policy(t, m=2, lr=-1.0), "lr"),
    (lambda t: L.train_policy(t, m=2, kappa=-1.0), "kappa"),
    (lambda t: L.train_policy("task"), "task"),
    (lambda t: L.policy_value(t, L.Policy(np.zeros(3), np.ones(3), "x", np.empty(0), np.empty((0, 3))), m=2),
     "policy"),
    (lambda t: L.policy_value(t, "policy"), "policy"),
    (lambda t: L.LearningTask(np.zeros((2, 6)), np.zeros((2, 2, 1))), "values"),
    (lambda t: L.LearningTask(np.zeros((2, 4)), np.zeros((2, 3, 1))), "features"),
    (lambda t: L.LearningTask(np.full((2, 4), np.nan), np.zeros((2, 2, 1))), "values"),
    (lambda t: L.LearningTask(np.zeros((1, 4)), np.zeros((1, 2, 1)), pools="p"), "pools"),
    (lambda t: L.plackett_luce([[0.0, 1.0]], [[1, 1]]), "order"),
    (lambda t: L.plackett_luce([[0.0, 1.0]], [[2]]), "order"),
    (lambda t: L.plackett_luce([[0.0, np.inf]], [[1]]), "logits"),
    (lambda t: L.plackett_luce([[0.0, 1.0]], [[1]], weights=[[1.0, 2.0]]), "weights"),
    (lambda t: L.benchmark(L.benchmark_pools(3, rewrites=4), m=2, held_out=0.1), "held_out"),
    (lambda t: L.benchmark(L.benchmark_pools(9, rewrites=4), credits=["shapley", "shapley"]),
     "credits"),
    (lambda t: L.rewrite_features(np.zeros(3)), "pools"),
    (lambda t: L.benchmark(L.benchmark_pools(9, rewrites=4), m=2, steps=5, checkpoints=[6]),
     "checkpoints"),
    (lambda t: L.Policy.initial(t).after(1), "updates"),
    (lambda t: L.benchmark_pools(3, rewrites=1), "rewrites"),
])
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call(_toy(32))


def test_docstring_examples():
    import doctest
    assert doctest.testmod(L).failed == 0
