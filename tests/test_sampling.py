"""fc.permutation_shapley: against the from-the-definition estimator over the
documented permutations, exact Shapley values, calibration, antithetic
variance reduction, budgets, reproducibility and malformed input."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

import fastcredit as fc
from fastcredit._backend import kernels

import reference as ref


def member(m):
    masks = np.arange(1 << m)
    return (masks[:, None] >> np.arange(m)) & 1


def airport(c):
    # Littlechild & Owen, Management Science 20 (1973): v(S) = max_{i in S} c_i
    # has phi_i = sum_{j <= i} (c_j - c_{j-1}) / (m - j + 1) for sorted c.
    c = np.asarray(c, dtype=np.float64)
    m = len(c)
    want = np.cumsum(np.diff(np.concatenate([[0.0], c])) / (m - np.arange(m)))
    return (member(m) * c).max(axis=1), want


@pytest.mark.parametrize("m", [1, 2, 7, 70])
def test_permutations_follow_the_documented_stream(backend, m):
    impl = kernels("sampling", backend)
    perms = np.empty((5, m), dtype=np.int32)
    impl.permutations(2**64 - 3, 9, 40, perms)
    want = [ref.sampling_permutation(2**64 - 3, 9, 40 + u, m) for u in range(5)]
    np.testing.assert_array_equal(perms, want)


@pytest.mark.parametrize("antithetic", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_table_estimate_matches_the_definition(backend, rng, antithetic, dtype):
    m, games, walks = 5, 3, 12
    v = rng.normal(size=(games, 1 << m)).astype(dtype)
    est = fc.permutation_shapley(v, permutations=walks, antithetic=antithetic, seed=11,
                                 backend=backend)
    units = walks // 2 if antithetic else walks
    for g in range(games):
        orders = [ref.sampling_permutation(11, g, u, m) for u in range(units)]
        values, stderr = ref.permutation_estimate(v[g], orders, antithetic)
        np.testing.assert_allclose(est.values[g], values, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(est.stderr[g], stderr, rtol=1e-10, atol=1e-13)
    np.testing.assert_array_equal(est.n_permutations, [walks] * games)
    np.testing.assert_array_equal(est.n_samples, [units] * games)
    np.testing.assert_array_equal(est.n_evals, [2 + walks * (m - 1)] * games)


def test_thread_counts_give_identical_bits(backend, rng):
    v = rng.normal(size=(4, 10, 1 << 7))
    runs = [fc.permutation_shapley(v, permutations=60, budget=250, tol=0.3, min_samples=4,
                                   seed=5, backend=backend, threads=t) for t in (1, 2, 3)]
    for other in runs[1:]:
        for name in ("values", "stderr", "n_evals", "n_permutations", "n_samples",
                     "truncated"):
            np.testing.assert_array_equal(getattr(other, name), getattr(runs[0], name))
    assert runs[0].values.shape == (4, 10, 7) and runs[0].n_evals.shape == (4, 10)


def test_every_game_kind_walks_the_same_permutations(rng):
    m = 6
    v = rng.normal(size=1 << m)
    table = fc.permutation_shapley(v, permutations=400, seed=3)

    @njit
    def jitted(mask):
        return v[mask]

    games = [(jitted, {}), (lambda s: v[s.astype(np.int64)], {}),
             (lambda b: v[b @ (1 << np.arange(m))], {"coalitions": "bool"}),
             (lambda s: v[s.astype(np.int64)], {"chunk": 50})]
    for game, kw in games:
        est = fc.permutation_shapley(game, m, permutations=400, seed=3, **kw)
        np.testing.assert_allclose(est.values, table.values, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(est.stderr, table.stderr, rtol=1e-9)
        assert est.n_permutations == 400
    assert fc.permutation_shapley(jitted, m, permutations=400, seed=3).n_evals == 2 + 400 * 5
    # a Python game declared deterministic (or cache=True) is memoised: each
    # distinct coalition once
    for declare, kw in ((fc.games.deterministic, {}), (lambda fn: fn, {"cache": True})):
        calls = []
        fc.permutation_shapley(declare(lambda s: calls.append(s.copy()) or v[s.astype(np.int64)]),
                               m, permutations=400, seed=3, **kw)
        seen = np.concatenate(calls)
        assert len(seen) == len(np.unique(seen)) <= 1 << m
    # a plain one is evaluated afresh (it may be random): m + 1 per walk
    uncached = fc.permutation_shapley(lambda s: v[s.astype(np.int64)], m, permutations=400,
                                      seed=3)
    assert uncached.n_evals == 400 * (m + 1)
    np.testing.assert_allclose(uncached.values, table.values, rtol=1e-12, atol=1e-12)
    declared = fc.games.deterministic(lambda s: v[s.astype(np.int64)])
    assert fc.permutation_shapley(declared, m, permutations=400, seed=3,
                                  cache=False).n_evals == 400 * (m + 1)


def test_more_players_than_a_mask_holds():
    m = 90
    w = np.linspace(0.0, 1.0, m)
    game = fc.games.deterministic(lambda b: b @ w + 2.0 * b[:, 3] * b[:, 80])
    est = fc.permutation_shapley(game, m, permutations=200, seed=1)      # bool rows: m > 64
    want = w.copy()
    want[[3, 80]] += 1.0                     # the interaction splits equally
    np.testing.assert_allclose(est.values.sum(), want.sum(), rtol=1e-12)
    assert np.all(np.abs(est.values - want) <= 5 * est.stderr + 1e-12)
    assert est.n_evals == 2 + 200 * (m - 1)


def test_converges_on_a_published_game_like_one_over_sqrt_n(backend):
    v, want = airport([1.0, 3.0, 3.5, 7.0, 10.0, 10.0, 16.0, 20.0, 21.0, 30.0])
    errors, stderrs = [], []
    for walks in (200, 3200):
        est = fc.permutation_shapley(np.broadcast_to(v, (64, len(v))), permutations=walks,
                                     seed=7, backend=backend)
        np.testing.assert_allclose(est.values.sum(-1), v[-1] - v[0], rtol=1e-12)
        z = (est.values - want) / est.stderr
        assert np.abs(z).max() < 5.0
        errors.append(np.sqrt(np.mean((est.values - want) ** 2)))
        stderrs.append(est.stderr.mean())
    # 16x the walks: error and stderr shrink 4x (1/sqrt(n))
    assert 3.0 < errors[0] / errors[1] < 5.3
    assert 3.6 < stderrs[0] / stderrs[1] < 4.4


def test_confidence_intervals_are_calibrated(rng):
    m = 6
    v = rng.normal(size=1 << m)
    want = fc.shapley(v)
    est = fc.permutation_shapley(np.broadcast_to(v, (1500, 1 << m)), permutations=200,
                                 seed=2)
    for level in (0.8, 0.95):
        low, high = est.ci(level)
        coverage = np.mean((low <= want) & (want <= high))
        assert abs(coverage - level) < 0.02, (level, coverage)


@pytest.mark.parametrize("kind, bound", [("noisy_or", 0.5), ("concave", 0.8)])
def test_antithetic_pairs_reduce_variance(kind, bound):
    # Decreasing marginals: early in a walk a player gains much, late little,
    # so an order and its reverse err in opposite directions.
    m = 8
    if kind == "noisy_or":         # redundant causes: 1 - prod (1 - p_i)
        v = 1.0 - np.prod(np.where(member(m) == 1, 1.0 - np.linspace(0.2, 0.6, m), 1.0),
                          axis=1)
    else:
        v = np.sqrt(member(m) @ np.linspace(0.5, 1.5, m))
    games = np.broadcast_to(v, (3000, 1 << m))
    paired = fc.permutation_shapley(games, permutations=20, seed=4)
    plain = fc.permutation_shapley(games, permutations=20, antithetic=False, seed=4)
    want = fc.shapley(v)
    for est in (paired, plain):
        assert np.abs(est.values.mean(0) - want).max() < 4 * est.values.std(0).max() / 50
    # equal evaluations, markedly smaller variance
    ratio = paired.values.var(0) / plain.values.var(0)
    assert ratio.max() < bound, ratio


def test_budget_stops_cleanly(backend, rng):
    m = 5
    v = rng.normal(size=1 << m)
    full = fc.permutation_shapley(v, permutations=1000, seed=9, backend=backend)
    assert not full.truncated and full.n_evals == 2 + 1000 * (m - 1)
    cut = fc.permutation_shapley(v, permutations=1000, budget=101, seed=9, backend=backend)
    # 2 endpoint reads, then pairs of 2 * 4 evaluations: 12 pairs fit in 101
    assert cut.truncated and cut.n_evals == 98 and cut.n_permutations == 24
    same = fc.permutation_shapley(v, permutations=24, seed=9, backend=backend)
    np.testing.assert_array_equal(cut.values, same.values)
    np.testing.assert_array_equal(cut.stderr, same.stderr)
    spend = fc.permutation_shapley(v, budget=101, seed=9, backend=backend)
    assert not spend.truncated and spend.n_permutations == 24
    np.testing.assert_array_equal(spend.values, same.values)
    nocache = fc.permutation_shapley(v, budget=101, cache=False, antithetic=False, seed=9)
    assert nocache.n_evals == 96 and nocache.n_permutations == 16


def test_python_game_respects_the_budget():
    calls = []

    def game(s):
        calls.append(len(s))
        return np.bitwise_count(s).astype(float) ** 2

    est = fc.permutation_shapley(game, 12, permutations=10_000, budget=500, seed=1,
                                 chunk=100, cache=False)
    assert est.truncated and sum(calls) == est.n_evals <= 500
    assert est.n_permutations == 500 // (2 * 13) * 2
    np.testing.assert_allclose(est.values, 12.0, rtol=1e-12)   # symmetric game


def test_tol_stops_early(backend, rng):
    v = rng.normal(size=(2, 1 << 6))
    est = fc.permutation_shapley(v, permutations=100_000, tol=0.05, min_samples=10, seed=1,
                                 backend=backend)
    assert np.all(est.stderr.max(-1) <= 0.05)
    assert np.all(est.n_samples >= 10) and np.all(est.n_permutations < 100_000)
    assert not est.truncated.any()
    # the stop is the first sample that reaches the tolerance
    shorter = fc.permutation_shapley(v[0], permutations=int(est.n_permutations[0]) - 2,
                                     seed=1, backend=backend)
    assert shorter.stderr.max() > 0.05


def test_table_nan_propagates(backend):
    v = np.arange(8.0)
    v[5] = np.nan                     # coalition {0, 2}
    est = fc.permutation_shapley(v, permutations=40, seed=0, backend=backend)
    want = ref.permutation_run(v, 0, 0, 40)
    assert np.array_equal(np.isnan(est.values), np.isnan(want["values"]))
    assert np.array_equal(np.isnan(est.stderr), np.isnan(want["stderr"]))
    # in two antithetic pairs only the walks through {0, 2} read the NaN
    few = fc.permutation_shapley(v, permutations=4, seed=0, backend=backend)
    assert np.isnan(few.values).tolist() == [True, True, False] and few.values[2] == 4.0


def test_single_sample_has_infinite_error_bars():
    est = fc.permutation_shapley(np.arange(8.0), permutations=2, seed=0)
    assert est.n_samples == 1 and np.all(np.isinf(est.stderr))
    low, high = est.ci()
    assert np.all(np.isinf(low)) and np.all(np.isinf(high))


def test_int_and_float32_tables_give_float64(backend):
    table = np.array([0, 1, 2, 4])
    want = fc.permutation_shapley(table.astype(np.float64), permutations=8, seed=0,
                                  backend=backend)
    for v in (table, table.astype(np.float32)):
        est = fc.permutation_shapley(v, permutations=8, seed=0, backend=backend)
        assert est.values.dtype == np.float64 and est.stderr.dtype == np.float64
        assert np.array_equal(est.values, want.values)
    inexact = np.array([0.0, 0.1, 0.2, 0.7], dtype=np.float32)
    est = fc.permutation_shapley(inexact, permutations=8, seed=0, backend=backend)
    widened = fc.permutation_shapley(inexact.astype(np.float64), permutations=8, seed=0,
                                     backend=backend)
    assert np.array_equal(est.values, widened.values)


# --- malformed input ----------------------------------------------------------

GOOD = np.arange(8.0)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"permutations": 3}, ValueError, "permutations must be even"),
    ({"permutations": 0}, ValueError, "permutations must be >= 2"),
    ({"permutations": 1.5}, TypeError, "permutations must be an integer"),
    ({"permutations": 2**63}, ValueError, "permutations must be <="),
    ({"budget": 2**64}, ValueError, "budget must be <="),
    ({"budget": 5}, ValueError, "budget must cover an antithetic pair"),
    ({"budget": 3, "antithetic": False}, ValueError, "budget must cover one walk"),
    ({"budget": -1}, ValueError, "budget must be >= 1"),
    ({"antithetic": "yes"}, TypeError, "antithetic must be a bool"),
    ({"cache": 1}, TypeError, "cache must be a bool"),
    ({"tol": -0.1}, ValueError, "tol must be >= 0"),
    ({"tol": float("nan")}, ValueError, "tol must be finite"),
    ({"min_samples": 1}, ValueError, "min_samples must be >= 2"),
    ({"seed": -1}, ValueError, "seed must be >= 0"),
    ({"seed": 2**64}, ValueError, "seed must be <="),
    ({"threads": 0}, ValueError, "threads must be >= 1"),
    ({"backend": "gpu"}, ValueError, "backend must be"),
    ({"crn": True}, ValueError, "crn=True needs a stochastic game"),
    ({"coalitions": "list"}, ValueError, "coalitions must be one of"),
    ({"chunk": 0}, ValueError, "chunk must be >= 1"),
])
def test_bad_options(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fc.permutation_shapley(GOOD, **kwargs)


@pytest.mark.parametrize("game, m, exc, match", [
    (np.zeros(6), None, ValueError, "game must have a last axis of length 2\\*\\*m"),
    (np.zeros(1), None, ValueError, "game must have a last axis"),
    (np.zeros(8, complex), None, TypeError, "game must be a real"),
    (GOOD, 4, ValueError, "m = 4 does not match the table game"),
    (GOOD, 0, ValueError, "m must be >= 1"),
    (lambda s: s, None, ValueError, "m \\(the number of players\\) is required"),
    (lambda s: s, 0, ValueError, "m must be >= 1"),
    (lambda s: s, 5000, ValueError, "m must be <= 4096"),
])
def test_bad_game_or_m(game, m, exc, match):
    with pytest.raises(exc, match=match):
        fc.permutation_shapley(game, m)


@pytest.mark.parametrize("game, exc, match", [
    (lambda s: np.zeros(len(s) + 1), ValueError, "one value per coalition"),
    (lambda s: np.zeros((len(s), 1)), ValueError, "one value per coalition"),
    (lambda s: np.array(["x"] * len(s)), TypeError, "must return real numbers"),
    (lambda s: np.where(s == 3, np.nan, 1.0), ValueError, "non-finite .* mask 3"),
    (lambda s: np.where(np.bitwise_count(s) == 2, np.inf, 1.0), ValueError, "non-finite"),
])
def test_python_game_returning_garbage(game, exc, match):
    with pytest.raises(exc, match=match):
        fc.permutation_shapley(game, 4, permutations=20)


def test_python_game_that_raises_surfaces_with_context():
    def game(s):
        if len(s) > 2:
            raise KeyError("replay server down")
        return np.zeros(len(s))

    with pytest.raises(RuntimeError, match="game raised on a batch of .*replay server down"):
        fc.permutation_shapley(game, 4, permutations=20)


def test_jitted_game_errors():
    @njit
    def nan_at_5(mask):
        return np.nan if mask == 5 else 1.0

    with pytest.raises(ValueError, match="non-finite value for coalition mask 5"):
        fc.permutation_shapley(nan_at_5, 3, permutations=2000)
    with pytest.raises(ValueError, match="backend='c' cannot run an @njit game"):
        fc.permutation_shapley(nan_at_5, 3, backend="c")
    with pytest.raises(ValueError, match="m must be <= 64"):
        fc.permutation_shapley(nan_at_5, 65)
    with pytest.raises(ValueError, match="crn=True needs a stochastic game"):
        fc.permutation_shapley(nan_at_5, 3, crn=True)

    @njit
    def returns_array(mask):
        return np.zeros(2)

    # refused by argument name before sampling starts (it used to surface as a
    # RuntimeError from inside the compiled loop)
    with pytest.raises(TypeError, match=r"game must return a real number, fn\(mask\) returns"):
        fc.permutation_shapley(returns_array, 3, permutations=4)


def test_ci_level_is_checked():
    est = fc.permutation_shapley(GOOD, permutations=20)
    for level in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="level"):
            est.ci(level)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 6), seed=st.integers(0, 2**64 - 1), pairs=st.integers(1, 30),
       data=st.data())
def test_property_efficient_and_backend_identical(m, seed, pairs, data):
    v = np.array(data.draw(st.lists(st.floats(-1e3, 1e3), min_size=1 << m,
                                    max_size=1 << m)))
    runs = [fc.permutation_shapley(v, permutations=2 * pairs, seed=seed, backend=b)
            for b in fc.available_backends()]
    for est in runs:
        # every sample's marginals telescope to v(N) - v({})
        assert est.values.sum() == pytest.approx(v[-1] - v[0], rel=1e-9, abs=1e-9)
        assert np.all(est.stderr >= 0)
    for other in runs[1:]:
        np.testing.assert_array_equal(other.values, runs[0].values)
        np.testing.assert_array_equal(other.stderr, runs[0].stderr)


# -- one sample: the interval is (-inf, +inf) (issue 26) ---------------------------

@njit
def _one_sample_jitted(mask):
    return float(mask % 7) - 0.25 * float(mask & 3)


@njit
def _one_sample_stochastic(mask, key):
    return float(mask & 1) + float(mask >> 2 & 1) * (0.5 if key & 1 else 0.0)


def _one_sample_games(backend):
    """(game, m, keyword arguments) of every kind the sampler drives."""
    v = np.array([_one_sample_jitted(np.uint64(s)) for s in range(8)])
    return [(v, None, {"backend": backend}),
            (np.stack([v, v[::-1]]), None, {"backend": backend}),
            (_one_sample_jitted, 3, {}),
            (fc.games.deterministic(lambda s: v[s.astype(np.int64)]), 3, {}),
            (lambda s: v[s.astype(np.int64)], 3, {}),
            (_one_sample_stochastic, 3, {}),
            (_one_sample_stochastic, 3, {"bounds": (0.0, 1.5)}),
            (_one_sample_stochastic, 3, {"crn": True})]


def _assert_infinite_interval(est):
    assert np.all(est.n_samples == 1)
    assert np.all(np.isfinite(est.values))
    assert np.all(est.stderr == np.inf)               # "inf when there is one sample"
    for level in (0.5, 0.95, 1 - 1e-9):
        low, high = est.ci(level)
        assert low.shape == high.shape == est.values.shape
        assert np.all(low == -np.inf) and np.all(high == np.inf), (level, low, high)


@pytest.mark.parametrize("antithetic", [False, True])
def test_one_sample_gives_the_whole_real_line(backend, antithetic):
    """Kills the mutant: ci() with one sample (infinite interval) is never
    checked (fastcredit/sampling.py ShapleyEstimate.ci: the quantile of
    n = 1, ``np.inf``, changed to ``-np.inf``, which swaps the ends into
    (+inf, -inf) and still passed the old isinf-only test; or to ``0.0``,
    a NaN interval; or a one-sample stderr that is finite or NaN, as
    ``_Moments.finish`` with ``self.n < 1`` or the kernels' ``n > 0``).

    One walk (antithetic=False), one antithetic pair, and a budget that buys
    exactly one sample (the least that buys one, and one short of the next):
    every game kind, every level, low is -inf and high is +inf for every
    player, the stderr is inf and the value the finite one-sample mean."""
    unit = 2 if antithetic else 1
    for game, m, kw in _one_sample_games(backend):
        one = fc.permutation_shapley(game, m, permutations=unit, antithetic=antithetic,
                                     seed=3, **kw)
        assert np.all(one.n_permutations == unit)
        _assert_infinite_interval(one)
        two = fc.permutation_shapley(game, m, permutations=2 * unit, antithetic=antithetic,
                                     seed=3, **kw)
        assert np.all(two.n_samples == 2) and np.all(np.isfinite(two.ci()[0]))
        # the budget of one sample: v({}) and v(N) when cached, then whole walks
        cache = kw.get("cache", fc.games.as_game(game, m).deterministic)
        unit_cost = unit * fc.games.walk_cost(3, cache=cache, crn=kw.get("crn", False))
        first = 2 * cache + unit_cost
        for budget in (first, first + unit_cost - 1):
            est = fc.permutation_shapley(game, m, budget=budget, antithetic=antithetic,
                                         seed=3, **kw)
            assert np.all(est.n_permutations == unit) and not np.any(est.truncated)
            assert np.all(est.n_evals == one.n_evals)
            _assert_infinite_interval(est)
            np.testing.assert_array_equal(est.values, one.values)
        with pytest.raises(ValueError, match=f"budget must cover .*: {first} evaluations"):
            fc.permutation_shapley(game, m, budget=first - 1, antithetic=antithetic, **kw)
    # for a table, the one sample's marginals sum to v(N) - v({})
    est = fc.permutation_shapley(GOOD, permutations=unit, antithetic=antithetic, seed=3,
                                 backend=backend)
    assert est.values.sum() == pytest.approx(GOOD[-1] - GOOD[0])


def test_two_samples_give_the_t_interval_with_one_degree_of_freedom():
    """The other side of the n = 1 rule: from two samples on the interval is
    finite, values -+ t(1, (1 + level) / 2) stderr (12.706 at 95%), so a
    mutant moving the infinite case to n = 2 (``df >= 1`` -> ``df > 1``) or
    the finite one to n = 1 dies here or above."""
    est = fc.permutation_shapley(GOOD, permutations=4, seed=1)
    assert est.n_samples == 2 and np.all(np.isfinite(est.stderr))
    low, high = est.ci(0.95)
    np.testing.assert_allclose(high - est.values, 12.706204736174707 * est.stderr, rtol=1e-12)
    np.testing.assert_allclose(est.values - low, 12.706204736174707 * est.stderr, rtol=1e-12)


def test_ci_takes_each_game_s_own_number_of_samples():
    """A batch of estimates with 1, 2 and 5 samples: only the one-sample game
    has the infinite interval, the others their own t quantile."""
    values = np.array([[1.0, -2.0], [0.5, 0.25], [3.0, 4.0]])
    stderr = np.array([[np.inf, np.inf], [0.1, 0.2], [0.3, 0.4]])
    n = np.array([1, 2, 5])
    est = fc.ShapleyEstimate(values, stderr, n_evals=4 * n, n_permutations=n,
                             n_samples=n, truncated=np.zeros(3, bool))
    low, high = est.ci(0.95)
    assert low[0].tolist() == [-np.inf, -np.inf] and high[0].tolist() == [np.inf, np.inf]
    for row, q in ((1, 12.706204736174707), (2, 2.7764451051977987)):
        np.testing.assert_allclose(low[row], values[row] - q * stderr[row], rtol=1e-12)
        np.testing.assert_allclose(high[row], values[row] + q * stderr[row], rtol=1e-12)


# --- orders that keep a cluster tree's clusters together (fastcredit.shap) -----

@pytest.mark.parametrize("backend", fc.available_backends())
def test_tree_orders_keep_every_cluster_together_each_order_equally_often(backend):
    """A tree of 5 players (a pair, a pair joined with a player, then the
    root) has 2**4 = 16 orders that keep its clusters together: 32,000 draws
    give only those, each about 2,000 times (chi-square with 15 degrees of
    freedom below 55: exceeded by chance with probability 1.8e-6)."""
    from fastcredit.sampling import _tree_permutations
    children = [[0, 1], [2, 3], [6, 4], [5, 7]]        # nodes 5..8; the root is 8
    clusters = [{0, 1}, {2, 3}, {2, 3, 4}, {0, 1, 2, 3, 4}]
    perms = _tree_permutations(children, 11, 32_000, backend=backend)
    assert sorted(perms[0].tolist()) == list(range(5))
    for cluster in clusters:
        at = np.isin(perms, list(cluster))
        first = at.argmax(axis=1)
        # the cluster's players fill the positions first .. first + size - 1
        assert (at.sum(axis=1) == len(cluster)).all()
        assert at[np.arange(len(perms))[:, None], first[:, None] + np.arange(len(cluster))].all()
    _, counts = np.unique(perms, axis=0, return_counts=True)
    assert len(counts) == 16
    expected = len(perms) / 16
    assert ((counts - expected) ** 2 / expected).sum() < 55.0


@pytest.mark.parametrize("backend", fc.available_backends())
def test_shap_kernels_refuse_what_they_cannot_read_writing_nothing(backend):
    """The masked rows refuse a mask at or above 2**m (also at m = 64's
    limit, where no mask is) and an owner outside [0, n_x), and the
    background mean an empty background or output axis: in the kernel (the
    public call no longer checks them), ValueError, nothing written."""
    from fastcredit.sampling import _background_mean, _masked_rows
    background, xs = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3) + 10
    good_masks, good_owner = np.array([0, 7, 2], dtype=np.uint64), np.array([0, 1, 1])
    np.testing.assert_array_equal(
        _masked_rows(background, xs, good_masks, good_owner, backend=backend),
        ref.masked_rows(background, xs, good_masks, good_owner))
    for masks, owner in (([0, 8, 2], [0, 1, 1]), ([0, 7, 2**63], [0, 1, 1]),
                         ([0, 7, 2], [0, 2, 1]), ([0, 7, 2], [-1, 0, 0])):
        out = np.full((9, 3), -5.0)
        with pytest.raises(ValueError, match="mask|owner"):
            _masked_rows(background, xs, np.array(masks, dtype=np.uint64), np.array(owner),
                         out=out, backend=backend)
        assert (out == -5.0).all()
    wide = np.zeros((1, 64))
    assert _masked_rows(wide, wide + 1, np.array([2**64 - 1], dtype=np.uint64), [0],
                        backend=backend).sum() == 64
    for shape in ((3, 0, 2), (3, 2, 0)):
        with pytest.raises(ValueError, match="n_b >= 1, k >= 1"):
            _background_mean(np.zeros(shape), backend=backend)
    with pytest.raises(ValueError, match="outputs must be"):
        _background_mean(np.zeros((3, 2)), backend=backend)


@pytest.mark.parametrize("backend", fc.available_backends())
@pytest.mark.parametrize("k", [2, 7, 16, 17, 40, 64])
def test_affordable_pairs_are_the_reference_and_refuse_what_is_not_an_order(backend, k):
    """The affordable pairs (the kernel's bit per coalition up to 16
    players, its hash set beyond) equal the reference's pair-by-pair count,
    on budgets that stop before the first pair, inside and after all of
    them; the coalitions are sorted and the row padded with 2**64 - 1; an
    order with a repeated or missing player is refused."""
    from fastcredit.sampling import _affordable_pairs
    orders = np.argsort(np.random.default_rng(k).random((3, 9, k)), axis=2).astype(np.int32)
    for budget in (2, 2 * k, 5 * k, 10**6):
        pairs, counts, masks = _affordable_pairs(orders, budget, backend=backend)
        for row, (want_pairs, want_masks) in enumerate(ref.affordable_pairs(orders, budget)):
            assert pairs[row] == want_pairs and counts[row] == len(want_masks)
            assert masks[row, :counts[row]].tolist() == want_masks
            assert (masks[row, counts[row]:] == np.uint64(2**64 - 1)).all()
    bad = orders.copy()
    bad[1, 4, 0] = bad[1, 4, 1]
    with pytest.raises(ValueError, match="permutation"):
        _affordable_pairs(bad, 100, backend=backend)
    with pytest.raises(ValueError, match="perms must be"):
        _affordable_pairs(orders[..., :1], 100, backend=backend)
