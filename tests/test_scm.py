"""The agent-trajectory SCMs of fc.synthetic: exact tables against
enumeration, planted values, and their recovery by permutation sampling."""
import numpy as np
import pytest

import fastcredit as fc
from fastcredit import synthetic as syn

import reference as ref


@pytest.fixture(scope="module")
def and3():
    return syn.and_failure(0.3)


@pytest.fixture(scope="module")
def chain():
    return syn.pivotal_chain(6, 2, q=[0.1, 0.2, 0.3, 0.2, 0.1, 0.25], r=0.4)


def _threshold_oracle(weight, factual, threshold, q):
    n = len(weight)

    def outcome(mask, pattern):
        bad = [(factual[j] if mask >> j & 1 else pattern >> j & 1) for j in range(n)]
        return float(np.dot(weight, bad) >= threshold)

    return ref.scm_table(n, q, outcome)


def test_and_failure_has_the_planted_values(and3):
    # Causal agent replay (docs/design.md): an AND-failure of two steps with
    # P(bad step) = 0.3 has v(N) - v(0) = 0.91 and Shapley 0.455, 0.455, 0.
    v = and3.table()
    assert v[-1] - v[0] == pytest.approx(0.91, abs=1e-15)
    np.testing.assert_allclose(and3.shapley(), [0.455, 0.455, 0.0], atol=1e-15)
    np.testing.assert_allclose(v, _threshold_oracle([1, 1, 0], [1, 1, 0], 2, [0.3] * 3),
                               atol=1e-15)


def test_or_failure_splits_redundant_causes():
    scm = syn.or_failure([0.3, 0.5, 0.9, 0.2], n_steps=4, steps=(1, 3))
    v = scm.table()
    np.testing.assert_allclose(
        v, _threshold_oracle([0, 1, 0, 1], [0, 1, 0, 1], 1, [0.3, 0.5, 0.9, 0.2]), atol=1e-15)
    assert v[0] == pytest.approx(1 - 0.5 * 0.8)
    np.testing.assert_allclose(scm.shapley(), [0, 0.2, 0, 0.2], atol=1e-15)
    np.testing.assert_allclose(syn.or_failure(0.3).shapley(), [0.245, 0.245, 0], atol=1e-15)


def test_threshold_trajectory_game_draws_its_table():
    scm = syn.threshold_trajectory(7, 3, seed=4)
    draws = scm.game
    keys = np.arange(4000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    v = scm.table()
    assert v[-1] == pytest.approx(1.0)               # the factual run failed
    for mask in (0, 0b1010101, 0b0011100):
        mc = np.mean([draws(np.uint64(mask), k) for k in keys])
        assert abs(mc - v[mask]) < 4 * np.sqrt(v[mask] * (1 - v[mask]) / len(keys)) + 1e-12


def test_threshold_rule_against_enumeration_for_given_parameters():
    q = [0.1, 0.45, 0.3, 0.2, 0.05]
    scm = syn.threshold_trajectory(5, 2, q=q, seed=8)
    gen = np.random.default_rng(8)
    gen.uniform(0.05, 0.5, 5)                     # the draw q replaced
    n_bad = int(gen.integers(2, 6))
    factual = np.zeros(5, dtype=int)
    factual[gen.choice(5, n_bad, replace=False)] = 1
    np.testing.assert_allclose(scm.table(), _threshold_oracle([1] * 5, factual, 2, q),
                               atol=1e-14)


def test_pivotal_chain_table_matches_enumeration(chain):
    q = [0.1, 0.2, 0.3, 0.2, 0.1, 0.25]
    want = ref.chain_scm_table([0, 0, 1, 0, 0, 0], q, [0.4] * 6)
    v = chain.table()
    np.testing.assert_allclose(v, want, atol=1e-15)
    assert v[-1] == 1.0
    phi = chain.shapley()
    assert phi.argmax() == 2 and np.all(phi[3:] > 0)   # the pivot and the no-recoveries


def test_scm_recovered_within_ci_and_efficient(and3, chain):
    for scm in (and3, chain, syn.or_failure(0.3)):
        want = scm.shapley()
        v = scm.table()
        est = fc.permutation_shapley(scm.game, scm.n_steps, permutations=8000, seed=3)
        low, high = est.ci(0.999)
        assert np.all((low <= want) & (want <= high)), (scm.name, est.values, want)
        # per walk the marginals telescope to one draw of v(N) - v({})
        assert abs(est.values.sum() - (v[-1] - v[0])) < 4 * est.stderr.sum()


def test_stochastic_games_are_never_cached(and3):
    est = fc.permutation_shapley(and3.game, 3, permutations=100, seed=1)
    assert est.n_evals == 100 * 4                   # m + 1 fresh draws per walk
    budgeted = fc.permutation_shapley(and3.game, 3, budget=400, antithetic=False, seed=1)
    assert budgeted.n_permutations == 100
    with pytest.raises(ValueError, match="cache=True is refused for a stochastic game"):
        fc.permutation_shapley(and3.game, 3, cache=True)
    # a cached draw would report far too little error: the honest stderr of
    # 0/1 outcomes cannot be tiny with 50 samples
    assert est.stderr[:2].min() > 0.02


def test_common_random_numbers_cut_the_noise(chain):
    want = chain.shapley()
    fresh = fc.permutation_shapley(chain.game, 6, permutations=4000, seed=2)
    crn = fc.permutation_shapley(chain.game, 6, permutations=4000, seed=2, crn=True)
    assert crn.n_evals == 4000 * 12                 # 2m evaluations per walk
    assert np.all(np.abs(crn.values - want) < 4 * crn.stderr)
    # half the variance per walk, and still less per evaluation spent
    assert np.all(crn.stderr < fresh.stderr)
    assert np.mean(crn.stderr ** 2) < 0.55 * np.mean(fresh.stderr ** 2)
    assert np.mean(crn.stderr ** 2 * crn.n_evals) < 0.9 * np.mean(
        fresh.stderr ** 2 * fresh.n_evals)


def test_same_seed_same_draws(and3):
    a = fc.permutation_shapley(and3.game, 3, permutations=50, seed=77)
    b = fc.permutation_shapley(and3.game, 3, permutations=50, seed=77)
    c = fc.permutation_shapley(and3.game, 3, permutations=50, seed=78)
    np.testing.assert_array_equal(a.values, b.values)
    assert not np.array_equal(a.values, c.values)


@pytest.mark.parametrize("make, exc, match", [
    (lambda: syn.and_failure(1.2), ValueError, "q must be <= 1"),
    (lambda: syn.and_failure([0.1, 0.2]), ValueError, "q must be a scalar or have shape"),
    (lambda: syn.and_failure(0.3, steps=(0, 0)), ValueError, "distinct steps"),
    (lambda: syn.and_failure(0.3, steps=()), ValueError, "non-empty"),
    (lambda: syn.or_failure(0.3, steps=(3,)), ValueError, "steps must be <= 2"),
    (lambda: syn.and_failure(0.3, n_steps=0), ValueError, "n_steps must be >= 1"),
    (lambda: syn.and_failure(0.3, n_steps=65), ValueError, "n_steps must be <= 64"),
    (lambda: syn.pivotal_chain(4, 4), ValueError, "pivot must be <= 3"),
    (lambda: syn.pivotal_chain(4, 1, r=[0.1, 0.2, 0.3, -0.1]), ValueError, "r must hold"),
    (lambda: syn.threshold_trajectory(5, 6), ValueError, "threshold must be <= 5"),
    (lambda: syn.threshold_trajectory(5, seed=-1), ValueError, "seed must be >= 0"),
    (lambda: syn.threshold_trajectory(30).table(), ValueError, "at most 24 steps"),
])
def test_bad_scm_arguments(make, exc, match):
    with pytest.raises(exc, match=match):
        make()
