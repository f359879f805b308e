import math

import numpy as np
import pytest

import fastcredit as fc
import reference as ref

from conftest import random_tree_batch


def test_credit_matches_reference(backend, rng):
    q, pi, offsets, sizes = random_tree_batch(rng)
    for baseline in ("actor", "uniform"):
        res = fc.actor_centered_credit(q, pi, offsets, baseline=baseline, backend=backend)
        credit, base = ref.actor_centered_credit(q, pi, offsets, uniform=baseline == "uniform")
        np.testing.assert_allclose(res.credit, credit, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(res.baseline, base, rtol=1e-14, atol=1e-15)
        assert res.sampled is None
    # an advantage under the actor: zero mean under pi at every state
    res = fc.actor_centered_credit(q, pi, offsets, backend=backend)
    per_state = np.add.reduceat(pi * res.credit, offsets[:-1][sizes > 0])
    np.testing.assert_allclose(per_state, 0, atol=1e-14)
    assert (res.baseline[sizes == 0] == 0).all()


def test_sampled_gather_and_standardize(backend, rng):
    q2, pi2, off2, sizes = random_tree_batch(rng, max_actions=5, min_actions=1)
    actions = rng.integers(0, sizes)
    res = fc.actor_centered_credit(q2, pi2, off2, actions=actions, backend=backend)
    np.testing.assert_array_equal(res.sampled, res.credit[off2[:-1] + actions])
    std = fc.actor_centered_credit(q2, pi2, off2, actions=actions, standardize=True,
                                   backend=backend)
    assert abs(std.sampled.mean()) < 1e-12
    np.testing.assert_allclose(std.sampled.std(ddof=1), 1.0, rtol=1e-6)


def test_hand_example(backend):
    # state 0: Q = [1, 0], pi = [.5, .5] -> V = .5; state 1: Q = [2, 4],
    # pi = [.25, .75] -> V = 3.5.
    res = fc.actor_centered_credit([1.0, 0.0, 2.0, 4.0], [0.5, 0.5, 0.25, 0.75], [0, 2, 4],
                                   actions=[0, 1], backend=backend)
    np.testing.assert_array_equal(res.credit, [0.5, -0.5, -1.5, 0.5])
    np.testing.assert_array_equal(res.baseline, [0.5, 3.5])
    np.testing.assert_array_equal(res.sampled, [0.5, 0.5])
    uni = fc.actor_centered_credit([1.0, 0.0, 2.0, 4.0], offsets=[0, 2, 4], baseline="uniform",
                                   backend=backend)
    np.testing.assert_array_equal(uni.credit, [0.5, -0.5, -1.0, 1.0])


def test_credit_errors():
    q, pi, off = [1.0, 2.0, 3.0], [0.5, 0.5, 1.0], [0, 2, 3]
    with pytest.raises(ValueError, match=r"state 1 sums to 0.9"):
        fc.actor_centered_credit(q, [0.5, 0.5, 0.9], off)
    with pytest.raises(ValueError, match=r"pi must be finite and >= 0.*state 0"):
        fc.actor_centered_credit(q, [1.5, -0.5, 1.0], off)
    with pytest.raises(ValueError, match="offsets must be non-decreasing: state 1"):
        fc.actor_centered_credit(q, pi, [0, 2, 1, 3])
    with pytest.raises(ValueError, match=r"offsets\[-1\] must equal"):
        fc.actor_centered_credit(q, pi, [0, 2, 4])
    with pytest.raises(ValueError, match=r"actions\[1\] = 1 is not a legal action index"):
        fc.actor_centered_credit(q, pi, off, actions=[0, 1])
    with pytest.raises(ValueError, match=r"actions must have shape \(2,\)"):
        fc.actor_centered_credit(q, pi, off, actions=[0])
    with pytest.raises(ValueError, match="standardize=True needs actions"):
        fc.actor_centered_credit(q, pi, off, standardize=True)
    with pytest.raises(TypeError, match='baseline="actor" needs pi'):
        fc.actor_centered_credit(q, offsets=off)
    with pytest.raises(ValueError, match="pi must have q's shape"):
        fc.actor_centered_credit(q, [1.0], off)
    with pytest.raises(ValueError, match="baseline must be one of"):
        fc.actor_centered_credit(q, pi, off, baseline="mean")
    with pytest.raises(TypeError, match="offsets must be an integer array"):
        fc.actor_centered_credit(q, pi, [0.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"q must have shape \(n_values,\)"):
        fc.actor_centered_credit(np.zeros((3, 1)), pi, off)


def test_credit_into_out(backend):
    """out= (a previous result) gets the same bits as a fresh call, in its
    own arrays; arrays of out that overlap an input or one another, or have
    the wrong shape, are refused by name."""
    rng = np.random.default_rng(5)
    off, actions = np.array([0, 3, 5, 8]), np.array([0, 1, 2])
    q, pi = rng.normal(size=8), rng.uniform(size=8)
    pi /= np.repeat(np.add.reduceat(pi, off[:-1]), np.diff(off))
    fresh = fc.actor_centered_credit(q, pi, off, actions=actions, standardize=True,
                                     backend=backend)
    prev = fc.actor_centered_credit(rng.normal(size=8), pi, off, actions=actions,
                                    backend=backend)
    res = fc.actor_centered_credit(q, pi, off, actions=actions, standardize=True, out=prev,
                                   backend=backend)
    assert res.credit is prev.credit and res.baseline is prev.baseline
    assert res.sampled is prev.sampled
    for got, want in zip((res.credit, res.baseline, res.sampled),
                         (fresh.credit, fresh.baseline, fresh.sampled)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="out.credit must not overlap the input q"):
        fc.actor_centered_credit(q, pi, off, out=fc.TreeCredit(q, np.empty(3), None),
                                 backend=backend)
    shared = np.empty(8)
    with pytest.raises(ValueError, match="out.baseline must not overlap the input out.credit"):
        fc.actor_centered_credit(q, pi, off, out=fc.TreeCredit(shared, shared[5:], None),
                                 backend=backend)
    with pytest.raises(ValueError, match=r"out.sampled must have shape \(3,\)"):
        fc.actor_centered_credit(q, pi, off, actions=actions,
                                 out=fc.TreeCredit(np.empty(8), np.empty(3), np.empty(2)),
                                 backend=backend)
    with pytest.raises(TypeError, match="out must be a TreeCredit"):
        fc.actor_centered_credit(q, pi, off, out=(np.empty(8), np.empty(3)), backend=backend)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -0.25])
def test_credit_kernels_refuse_the_first_state_at_fault(backend, bad):
    """The kernels check pi and the actions in their pass: the error names
    the first state at fault, whichever check it breaks, on both backends."""
    q, off = np.arange(6.0), [0, 2, 2, 4, 6]
    pi = np.array([0.5, 0.5, 0.25, 0.75, 0.5, 0.5])
    later = pi.copy()
    later[4] = bad
    with pytest.raises(ValueError, match=r"pi must be finite and >= 0; got .* at entry 4 "
                                         r"\(state 3\)"):
        fc.actor_centered_credit(q, later, off, backend=backend)
    later[4:] = [0.5, 0.4]
    with pytest.raises(ValueError, match=r"state 3 sums to 0.9"):
        fc.actor_centered_credit(q, later, off, backend=backend)
    # state 1 (no actions) comes before state 3's sum
    with pytest.raises(ValueError, match=r"actions\[1\] = 0 is not a legal action index of "
                                         r"state 1 \(it has 0\)"):
        fc.actor_centered_credit(q, later, off, actions=[0, 0, 0, 0], backend=backend)
    fc.actor_centered_credit(q, later, off, atol=0.1, backend=backend)
    with pytest.raises(ValueError, match="atol"):
        fc.actor_centered_credit(q, offsets=off, baseline="uniform", atol=-1.0,
                                 backend=backend)


# --- allocation rules ---------------------------------------------------------

def test_uniform_covers_all_before_repeating(backend):
    rule = fc.Uniform(7, seed=3, backend=backend)
    first = []
    for _ in range(7):
        a = rule.ask()
        first.append(a)
        rule.tell(a, 0.0)
    assert sorted(first) == list(range(7))
    rule.run(lambda a: 1.0, budget=14)
    assert (rule.counts == 3).all()
    # ties are broken at random: another seed visits in another order
    other = fc.Uniform(7, seed=4, backend=backend)
    order = []
    for _ in range(7):
        order.append(other.ask())
        other.tell(order[-1], 0.0)
    assert sorted(order) == list(range(7)) and order != first


def test_uct_concentrates_on_best_arm(backend):
    means = np.array([0.2, 0.5, 0.8, 0.4])
    rewards = np.random.default_rng(0).uniform(size=(4, 400)) < means[:, None]
    rule = fc.UCT(4, c=0.5, seed=0, backend=backend)
    rule.run(lambda a: float(rewards[a, rule.counts[a]]), budget=300)
    assert rule.counts.argmax() == 2 and rule.counts[2] > 0.6 * 300
    assert (rule.counts >= 1).all()
    np.testing.assert_allclose(rule.means[2], rewards[2, :rule.counts[2]].mean())


def test_agent_uct_avoids_costly_arm_when_utilities_tie(backend):
    rule = fc.AgentUCT(3, costs=[1.0, 10.0, 1.0], c=0.3, c_tok=0.05, seed=5, backend=backend)
    first = [rule.ask()]
    rule.tell(first[0], 0.5)
    rule.run(lambda a: 0.5, budget=59)
    assert first[0] in (0, 2)           # untried actions: the cheap ones first
    assert rule.counts[1] < rule.counts[0] and rule.counts[1] < rule.counts[2]
    assert rule.counts.sum() == 60
    # plain UCT spreads tied utilities evenly
    plain = fc.UCT(3, c=0.3, seed=5, backend=backend).run(lambda a: 0.5, budget=60)
    assert plain.counts.max() - plain.counts.min() <= 1


def test_agent_uct_cost_update_changes_choice(backend):
    rule = fc.AgentUCT(2, costs=[0.0, 0.0], c=0.0, c_tok=1.0, seed=0, backend=backend)
    rule.tell(0, 1.0)
    rule.tell(1, 1.0, cost=3.0)     # action 1's next trial is now expensive
    assert rule.costs.tolist() == [0.0, 3.0]
    assert all(rule.ask() == 0 for _ in range(5))


def test_allocation_is_seeded(backend):
    def sequence(cls, seed, **kw):
        rule = cls(6, seed=seed, backend=backend, **kw)
        out = []
        for j in range(40):
            a = rule.ask()
            out.append(a)
            rule.tell(a, float((a * 7 + j) % 5) / 5)
        return out

    for cls, kw in [(fc.Uniform, {}), (fc.UCT, {}), (fc.AgentUCT, {"costs": np.arange(6.0)})]:
        assert sequence(cls, 11, **kw) == sequence(cls, 11, **kw)
    assert sequence(fc.Uniform, 1) != sequence(fc.Uniform, 2)


@pytest.mark.parametrize("make", [lambda b: fc.Uniform(5, seed=7, backend=b),
                                  lambda b: fc.UCT(5, c=0.7, seed=7, backend=b),
                                  lambda b: fc.AgentUCT(5, np.arange(5.0), c_tok=0.1, seed=7,
                                                        backend=b)])
def test_run_is_the_ask_tell_loop(backend, make):
    """run's kernel adds each trial and picks the next in one call
    (allocation_tell_pick): the same counts, sums (bit for bit) and draws as
    ask/tell, in runs split anywhere; a value refused mid-run or as the last
    one leaves the trials before it told and its own asked, as ask/tell's
    check would."""
    values = np.random.default_rng(1).normal(size=(5, 64))

    def value(a, j):
        return float(values[a, j % 64])

    ran, told = make(backend), make(backend)
    trial = iter(range(10**6))
    ran.run(lambda a: value(a, next(trial)), 23).run(lambda a: value(a, next(trial)), 0)
    ran.run(lambda a: value(a, next(trial)), 1).run(lambda a: value(a, next(trial)), 16)
    for j in range(40):
        a = told.ask()
        told.tell(a, value(a, j))
    assert ran.counts.tolist() == told.counts.tolist()
    assert ran.sums.tobytes() == told.sums.tobytes()
    for bad_at, budget in ((3, 10), (5, 6)):     # mid-run, and the last trial of the run
        rule, checked = make(backend), make(backend)
        trial = iter(range(10**6))
        with pytest.raises(ValueError, match=r"^evaluate\(\d\) .* must be finite, got inf"):
            rule.run(lambda a: math.inf if next(trial) == bad_at else 1.0, budget)
        for j in range(bad_at + 1):
            a = checked.ask()
            if j < bad_at:
                checked.tell(a, 1.0)
        assert rule.counts.tolist() == checked.counts.tolist() and rule.ask() == checked.ask()


def test_allocation_errors():
    with pytest.raises(ValueError, match="n_actions must be >= 1"):
        fc.Uniform(0)
    with pytest.raises(ValueError, match="action must be <= 2"):
        fc.UCT(3).tell(3, 1.0)
    with pytest.raises(ValueError, match="value must be finite"):
        fc.UCT(3).tell(0, float("nan"))
    with pytest.raises(ValueError, match="c must be >= 0"):
        fc.UCT(3, c=-1.0)
    with pytest.raises(ValueError, match=r"costs must have shape \(3,\)"):
        fc.AgentUCT(3, costs=[1.0, 2.0])
    with pytest.raises(ValueError, match="costs must be finite and >= 0"):
        fc.AgentUCT(2, costs=[1.0, -2.0])
    with pytest.raises(ValueError, match="cost must be >= 0"):
        fc.AgentUCT(2, costs=[1.0, 2.0]).tell(0, 1.0, cost=-1.0)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        fc.Uniform(2, seed=-1)
    with pytest.raises(ValueError, match="budget must be >= 0"):
        fc.Uniform(2).run(lambda a: 0.0, budget=-1)


def test_allocator_state_is_checked_before_it_is_allocated(monkeypatch):
    """Mutant: the counts, sums and costs of n_actions actions allocated
    unchecked: fc.Uniform(2**32) took 3 x 32 GiB from NumPy (a MemoryError,
    or memory it could not back). The available memory is fixed at 16 GiB
    so that the 96 GiB asked for exceed it on every machine."""
    from fastcredit import _validation
    monkeypatch.setattr(_validation, "_available_memory", lambda: 16 << 30)
    with pytest.raises(ValueError, match=r"n_actions = 4,294,967,296 \(a count, a sum and a "
                                         r"cost per action\) needs 96\.0 GiB, more than"):
        fc.Uniform(2**32)


# --- the whole tree: fc_counterfactual_tree (C, over @cfunc pointers) against
# the Numba loop fastcredit._jit.trees.tree, on the synthetic workflow --------

def _tree_case(kernel, env, cache, prefix, theta, rule, budget, use_cache, seed, pi=None):
    a = env.max_actions
    out = dict(counts=np.zeros(a, np.int64), sums=np.zeros(a), action=np.zeros(budget, np.int64),
               ret=np.zeros(budget), executed=np.zeros(budget), reused=np.zeros(budget),
               cost=np.zeros(budget), restore=np.zeros(3))
    extra = () if pi is None else (pi,)
    status = kernel(env.n_actions, env.step, env.utility, env.features, env.step_cost,
                    *cache.arrays(), np.asarray(prefix, np.int64), theta, rule, budget, 1.3,
                    0.2, np.uint64(seed), use_cache, *out.values(), *extra)
    out["status"] = status
    out["trie"] = [x[:int(cache.n_nodes[0])].copy() for x in cache.arrays()[:4]]
    return out


@pytest.mark.parametrize("rule", [-1, 0, 1, 2])      # actor continuations, FC_ALLOC_*
@pytest.mark.parametrize("use_cache", [True, False])
def test_c_tree_is_bit_identical_to_the_numba_loop(rule, use_cache):
    import fastcredit.treesearch as ts
    from fastcredit._c import trees as ct
    from fastcredit._jit import trees as jt
    from fastcredit.learning import workflow as W
    env = W.environment()
    theta = np.random.default_rng(rule + 5).normal(scale=0.7, size=W.N_FEATURES)
    for root, prefix, budget in ((W.root(0, 3), [], 48), (W.root(1, 2), [0], 3),
                                 (W.root(2, 1), [2, 3], 200), (W.root(3, 0), [1], 1)):
        for seed in (0, 2**64 - 1):
            res = []
            for kernel in (jt.tree, ct._tree):
                cache = ts.PrefixCache(env, root, capacity=4096)
                pi = np.zeros(env.max_actions) if kernel is ct._tree else None
                # a first tree fills the trie: the second reuses part of it
                _tree_case(kernel, env, cache, [], theta, rule, 7, use_cache, (seed + 1) % 2**64, pi)
                res.append(_tree_case(kernel, env, cache, prefix, theta, rule, budget,
                                      use_cache, seed, pi))
            assert res[0]["status"] == res[1]["status"] == 0
            for k in res[0]:
                if k == "trie":
                    for x, y in zip(res[0][k], res[1][k]):
                        np.testing.assert_array_equal(x, y)
                else:
                    np.testing.assert_array_equal(res[0][k], res[1][k], err_msg=k)


def test_c_tree_statuses_and_finish_match_numba():
    import fastcredit.treesearch as ts
    from fastcredit._c import trees as ct
    from fastcredit._jit import trees as jt
    from fastcredit.learning import workflow as W
    env = W.environment()
    theta = np.zeros(W.N_FEATURES)
    root = W.root(1, 1)
    for prefix, cap, status in (([4], 64, 2), ([0, 7], 64, 3), ([], 3, 1)):
        got = []
        for kernel in (jt.tree, ct._tree):
            cache = ts.PrefixCache(env, root, capacity=cap)
            pi = np.zeros(env.max_actions) if kernel is ct._tree else None
            got.append(_tree_case(kernel, env, cache, prefix, theta, 0, 20, True, 0, pi))
        assert got[0]["status"] == got[1]["status"] == status
    # the public call on either backend, with a trie that has to grow
    for baseline in ("actor", "uniform"):
        kw = dict(budget=300, rule="agent_uct", baseline=baseline, seed=8)
        a = ts.counterfactual_tree(env, root, [0], ts.SoftmaxActor(theta + 0.1), backend="numba",
                                   cache=ts.PrefixCache(env, root, capacity=2), **kw)
        b = ts.counterfactual_tree(env, root, [0], ts.SoftmaxActor(theta + 0.1), backend="c",
                                   cache=ts.PrefixCache(env, root, capacity=2), **kw)
        for f in ("q", "stderr", "counts", "pi", "credit", "baseline", "trial_action",
                  "trial_return"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)
        assert a.ledger.executed == b.ledger.executed and a.ledger.cost == b.ledger.cost
    # finish on its own
    n, rng = 5, np.random.default_rng(0)
    counts = np.array([3, 0, 1, 4, 2])
    action = rng.permutation(np.repeat(np.arange(n), counts))
    ret = rng.normal(size=action.size)
    sums = np.zeros(n)
    for a, r in zip(action, ret):
        sums[a] += r
    pi = rng.dirichlet(np.ones(n))
    for uniform in (False, True):
        outs = [[np.empty(n) for _ in range(3)] for _ in range(2)]
        b0 = jt.finish(counts, sums, pi, n, action, ret, uniform, *outs[0])
        b1 = ct._finish(counts, sums, pi, n, action, ret, uniform, *outs[1])
        assert b0 == b1
        for x, y in zip(*outs):
            np.testing.assert_array_equal(x, y)
