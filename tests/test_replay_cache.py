"""The caching default of permutation_shapley (issue 32 item 6): a plain
Python callable may be random (a replay of an agent) and is never cached
unless its caller declares it deterministic."""
import numpy as np
import pytest

import fastcredit as fc

AND_SHAPLEY = np.array([0.455, 0.455, 0.0])


def and_failure_draws(q=0.3, seed=0):
    """The AND-failure SCM of fc.synthetic.and_failure(0.3) as a plain
    stochastic Python callable: one replay per coalition, 1.0 when steps 0
    and 1 both end up bad (a step outside S is resampled, bad with
    probability q); step 2 is irrelevant."""
    gen = np.random.default_rng(seed)

    def game(masks):
        held = (masks[:, None] >> np.array([0, 1], dtype=np.uint64)) & np.uint64(1)
        bad = (held == 1) | (gen.random((len(masks), 2)) < q)
        return bad.all(axis=1).astype(np.float64)
    return game


def test_and_failure_as_a_python_callable_covers_the_planted_values():
    """Uncached by default: every evaluation is a fresh replay, so the
    intervals are honest. False-failure rate: the three 99.9 % intervals
    (t intervals over 1,000 antithetic pairs, where the CLT holds for these
    bounded marginals) all cover with probability >= 1 - 3 * 0.001 (Bonferroni):
    a seed drawn at random fails this test at most 0.3 % of the time."""
    exact = fc.synthetic.and_failure(0.3).shapley()
    np.testing.assert_allclose(exact, AND_SHAPLEY, atol=1e-12)
    est = fc.permutation_shapley(and_failure_draws(seed=11), 3, permutations=2000, seed=5)
    assert est.n_evals == 2000 * 4                 # m + 1 fresh replays a walk: nothing cached
    low, high = est.ci(0.999)
    assert np.all((low <= exact) & (exact <= high)), (est.values, low, high)
    assert np.all(high - low > 0.02)               # real error bars, not false certainty


def test_caching_a_stochastic_callable_fakes_certainty():
    """What the default avoids: cache=True memoises one draw per coalition
    (8 draws for the whole run), and the estimate is confidently wrong."""
    exact = fc.synthetic.and_failure(0.3).shapley()
    est = fc.permutation_shapley(and_failure_draws(seed=11), 3, permutations=2000, seed=5,
                                 cache=True)
    assert est.n_evals <= 8
    low, high = est.ci(0.999)
    assert not np.all((low <= exact) & (exact <= high)), (est.values, low, high)


def test_a_declared_game_is_cached_and_a_plain_one_is_not():
    v = np.array([0.0, 1.0, 2.0, 4.0])
    calls = []

    def game(masks):
        calls.append(len(masks))
        return v[masks.astype(np.int64)]
    plain = fc.permutation_shapley(game, 2, permutations=40, seed=1)
    assert plain.n_evals == sum(calls) == 40 * 3
    calls.clear()
    declared = fc.games.deterministic(game)
    cached = fc.permutation_shapley(declared, 2, permutations=40, seed=1)
    assert cached.n_evals == sum(calls) <= 4
    np.testing.assert_allclose(cached.values, plain.values, rtol=1e-12)
    assert fc.games.deterministic(declared) is declared
    assert fc.games.as_game(declared, 2).deterministic
    assert not fc.games.as_game(game, 2).deterministic
    assert fc.games.as_game(v).deterministic
    assert declared(np.array([3], dtype=np.uint64))[0] == 4.0


@pytest.mark.parametrize("bad", [None, 3, "f"])
def test_deterministic_refuses_what_is_not_a_python_callable(bad):
    with pytest.raises(TypeError, match="fn must be a vectorised Python callable"):
        fc.games.deterministic(bad)
