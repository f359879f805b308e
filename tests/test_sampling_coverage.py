"""Honest error bars of fc.permutation_shapley: the coverage of its 95%
intervals on the trajectory SCMs of fc.synthetic over many seeds (stochastic
games from 10 samples on, with and without common random numbers), the
pseudo-sample variance of stochastic games behind it, the Student t quantile
of ci() and the budget rule."""
import itertools
import math

import numpy as np
import pytest
from numba import njit
from scipy.stats import binom

import fastcredit as fc
from fastcredit import synthetic as syn

LEVEL = 0.95
SEEDS = 1000
#: The trajectory SCMs, with rare marginals: a planted pivot with rare
#: derailments and recoveries (the reported case), a threshold of rare bad
#: steps, and AND / OR failures of rare steps beside irrelevant ones.
SCMS = {
    "chain q=r=0.02": syn.pivotal_chain(6, 2, q=0.02, r=0.02),
    "threshold q=0.03": syn.threshold_trajectory(8, 2, q=0.03, seed=1),
    "AND q=0.05": syn.and_failure(0.05, n_steps=4, steps=(0, 1, 2)),
    "OR q=0.02": syn.or_failure(0.02, n_steps=4, steps=(1, 3)),
}
#: (antithetic, crn, walks): 10 samples (pairs or walks) with and without
#: common random numbers, and the reported 50 CRN walks.
RUNS = [(True, False, 20), (True, True, 20), (True, True, 50), (False, False, 10),
        (False, True, 10)]
#: Each SCM player under each run is one check. A method whose intervals
#: cover with probability 0.95 covers Binomial(SEEDS, 0.95) times; a check
#: fails below that law's FALSE_FAILURE / N_CHECKS quantile, so by the union
#: bound a correct method fails this test with probability < FALSE_FAILURE
#: (the threshold is about 92% of seeds; at 10 samples the plain t interval
#: covered 4% to 87% of seeds for the worst player of each SCM).
FALSE_FAILURE = 1e-3
N_CHECKS = len(RUNS) * sum(scm.n_steps for scm in SCMS.values())
MIN_COVERED = int(binom.ppf(FALSE_FAILURE / N_CHECKS, SEEDS, LEVEL))


@pytest.mark.parametrize("name", SCMS)
def test_intervals_cover_the_exact_values_over_many_seeds(name):
    scm = SCMS[name]
    want = scm.shapley()
    assert binom.cdf(MIN_COVERED - 1, SEEDS, LEVEL) < FALSE_FAILURE / N_CHECKS
    for antithetic, crn, walks in RUNS:
        covered = np.zeros(scm.n_steps, dtype=np.int64)
        for seed in range(SEEDS):
            est = fc.permutation_shapley(scm.game, scm.n_steps, permutations=walks,
                                         antithetic=antithetic, crn=crn, seed=seed)
            low, high = est.ci(LEVEL)
            # a stochastic game never earns a zero-width interval
            assert np.all(high > low), (name, antithetic, crn, walks, seed, est)
            covered += (low <= want) & (want <= high)
        assert np.all(covered >= MIN_COVERED), (name, antithetic, crn, walks,
                                                covered / SEEDS)


@pytest.mark.parametrize("crn, walks, player", [(True, 50, 1), (False, 20, 4)])
def test_the_reported_zero_width_intervals_cover(crn, walks, player):
    # Player 1 (crn) and 4 (fresh keys) had stderr 0 and the interval [0, 0]
    # around exact values -0.00862 and 0.00111.
    scm = SCMS["chain q=r=0.02"]
    want = scm.shapley()[player]
    assert abs(want) > 1e-3
    est = fc.permutation_shapley(scm.game, 6, permutations=walks, crn=crn, seed=0)
    low, high = est.ci(LEVEL)
    assert est.values[player] == 0.0 and est.stderr[player] > 0.0
    assert low[player] < want < high[player]


def test_scm_games_declare_their_outcome_range():
    scm = SCMS["AND q=0.05"]
    assert scm.game.bounds == (0.0, 1.0)
    est = fc.permutation_shapley(scm.game, 4, permutations=40, seed=2)
    assert est.bounds == (0.0, 1.0)
    same = fc.permutation_shapley(scm.game, 4, permutations=40, seed=2, bounds=(0.0, 1.0))
    np.testing.assert_array_equal(est.stderr, same.stderr)
    wider = fc.permutation_shapley(scm.game, 4, permutations=40, seed=2, bounds=(-1.0, 1.0))
    assert wider.bounds == (-1.0, 1.0) and np.all(wider.stderr > est.stderr)


#: v(S) of 4 players, constant 0.25 on the coalitions of players 0 and 1
#: (masks 0..3): a 2-player game on it never varies.
TABLE = np.array([0.25, 0.25, 0.25, 0.25, 0.9, 0.1, 0.6, 0.0,
                  1.0, 0.3, 0.45, 0.8, 0.2, 0.7, 0.05, 0.5])


@njit
def keyless(mask, key):
    """A stochastic game whose draws ignore the key: every draw is v(mask)."""
    return TABLE[mask]


@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-1.0, 1.0)])
def test_stochastic_stderr_adds_two_pseudo_samples_at_each_end(bounds):
    # Same permutations as the table game, so the same samples; only the
    # variance differs: (SS + 2 ((w - mean)^2 + (w + mean)^2)) / (n + 3).
    n, w = 20, bounds[1] - bounds[0]
    table = fc.permutation_shapley(TABLE, permutations=2 * n, seed=3)
    est = fc.permutation_shapley(keyless, 4, permutations=2 * n, seed=3, bounds=bounds)
    assert est.n_samples == n and est.bounds == bounds and table.bounds is None
    np.testing.assert_allclose(est.values, table.values, rtol=1e-13, atol=1e-15)
    ss = table.stderr ** 2 * n * (n - 1)
    mean = table.values
    var = (ss + 2.0 * ((w - mean) ** 2 + (w + mean) ** 2)) / (n + 3)
    np.testing.assert_allclose(est.stderr, np.sqrt(var / n), rtol=1e-12)
    assert np.all(est.stderr > table.stderr)


def test_undeclared_bounds_are_the_range_of_the_draws():
    declared = fc.permutation_shapley(keyless, 4, permutations=40, seed=3, bounds=(0.0, 1.0))
    observed = fc.permutation_shapley(keyless, 4, permutations=40, seed=3)
    assert observed.bounds == (0.0, 1.0)            # TABLE spans [0, 1]
    np.testing.assert_array_equal(observed.stderr, declared.stderr)


def test_a_game_that_never_varied_is_certain_only_if_declared_constant():
    n = 15
    # every draw 0.25: no range is known, so nothing bounds the error
    unknown = fc.permutation_shapley(keyless, 2, permutations=2 * n, seed=1)
    assert unknown.bounds == (0.25, 0.25) and np.all(np.isinf(unknown.stderr))
    assert np.all(np.isinf(unknown.ci()[0]))
    # in [0, 1]: mean 0, SS 0, so s^2 = 2 (1 + 1) / (n + 3)
    unit = fc.permutation_shapley(keyless, 2, permutations=2 * n, seed=1, bounds=(0, 1))
    np.testing.assert_array_equal(unit.values, 0.0)
    np.testing.assert_allclose(unit.stderr, math.sqrt(4.0 / (n + 3) / n), rtol=1e-14)
    # declared constant: provably exact
    exact = fc.permutation_shapley(keyless, 2, permutations=2 * n, seed=1,
                                   bounds=(0.25, 0.25))
    low, high = exact.ci()
    np.testing.assert_array_equal(exact.stderr, 0.0)
    np.testing.assert_array_equal(low, high)


def test_tol_waits_for_the_pseudo_samples():
    # Samples that never vary would meet any tol at once; with bounds (0, 1)
    # stderr^2 = 4 / ((n + 3) n), first <= tol^2 at n = 199.
    tol = 0.01
    want = next(n for n in itertools.count(2) if 4.0 / ((n + 3) * n) <= tol * tol)
    est = fc.permutation_shapley(keyless, 2, permutations=100_000, tol=tol, min_samples=2,
                                 seed=1, bounds=(0.0, 1.0))
    assert want == 199 and est.n_samples == want


@pytest.mark.parametrize("game, m, bounds, exc, match", [
    (keyless, 2, (0.5, 1.0), ValueError, r"outside its bounds \(0.5, 1.0\) .* mask 0"),
    (keyless, 4, (1.0, 0.0), ValueError, r"bounds\[1\] must be >= 1.0"),
    (keyless, 4, (0.0, np.inf), ValueError, r"bounds\[1\] must be finite"),
    (keyless, 4, "01", TypeError, r"bounds must be a pair"),
    (keyless, 4, (0.0, 0.5, 1.0), TypeError, r"bounds must be a pair"),
    (keyless, 4, (0.0, "1"), TypeError, r"bounds\[1\] must be a real number"),
    (TABLE, None, (0.0, 1.0), ValueError, r"bounds applies to stochastic games"),
])
def test_bad_bounds(game, m, bounds, exc, match):
    with pytest.raises(exc, match=match):
        fc.permutation_shapley(game, m, permutations=20, bounds=bounds)


@pytest.mark.parametrize("walks, level, quantile", [
    (2, 0.95, math.tan(math.pi * 0.475)),           # t_{0.975, 1} = 12.71
    (2, 0.99, math.tan(math.pi * 0.495)),           # t_{0.995, 1} = 63.66
    (3, 0.95, 0.95 / math.sqrt(2 * 0.975 * 0.025)),  # t_{0.975, 2} = 4.30
])
def test_ci_uses_student_t_with_n_minus_1_degrees(backend, walks, level, quantile):
    # closed forms: t_{p, 1} = tan(pi (p - 1/2)), t_{p, 2} = (2p - 1) / sqrt(2 p (1 - p))
    v = np.random.default_rng(5).normal(size=1 << 6)
    est = fc.permutation_shapley(v, permutations=walks, antithetic=False, seed=1,
                                 backend=backend)
    assert est.n_samples == walks and np.all(est.stderr > 0)
    low, high = est.ci(level)
    np.testing.assert_allclose(est.values - low, quantile * est.stderr, rtol=1e-9)
    np.testing.assert_allclose(high - est.values, quantile * est.stderr, rtol=1e-9)


def test_budget_buys_the_pairs_that_fit(backend):
    # Documented cost: v({}) and v(N) read once (2), then each antithetic
    # pair 2 (m - 1); a pair starts only if all of it fits.
    m, budget = 5, 98
    pairs = (budget - 2) // (2 * (m - 1))
    assert (2 + pairs * 2 * (m - 1), 2 * pairs) == (98, 24)
    v = np.random.default_rng(1).normal(size=1 << m)
    est = fc.permutation_shapley(v, permutations=1000, budget=budget, seed=9,
                                 backend=backend)
    assert (est.n_evals, est.n_permutations, est.truncated) == (98, 24, True)
    short = fc.permutation_shapley(v, permutations=1000, budget=budget - 1, seed=9,
                                   backend=backend)
    assert (short.n_evals, short.n_permutations) == (90, 22)
