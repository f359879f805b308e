"""ProxySPEX (fastcredit.approximators.proxy, fc.approximate(method="proxyspex"),
fastcredit.shapiq.ProxySPEX): the same estimator as shapiq 1.4.1's on the
same coalitions, its pieces against independent oracles (LightGBM's own
predictions, scikit-learn's RidgeCV), exactness on sparse games, budget
accounting and the twins. Needs lightgbm (an optional extra)."""
from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import fastcredit as fc
from fastcredit.approximators import proxy
from fastcredit.approximators.sparse import fourier_to_moebius

lgb = pytest.importorskip("lightgbm")


def bits(masks, m):
    return ((np.asarray(masks, dtype=np.uint64)[:, None] >> np.arange(m, dtype=np.uint64))
            & np.uint64(1)).astype(np.float64)


def noisy_table(m, seed):
    """An additive + pairwise + noise table (bench/approximators_vs_shapiq.py's game)."""
    g = np.random.default_rng(seed)
    x = bits(np.arange(1 << m), m)
    return x @ g.normal(size=m) + np.einsum("si,ij,sj->s", x, g.normal(size=(m, m)) / m, x) \
        + 0.1 * g.normal(size=1 << m)


def sparse_table(m):
    """v(S) = 2 [{0, 1} ⊆ S] + [5 ∈ S] - 1: Moebius coefficients on {}, {5}, {0, 1}."""
    x = bits(np.arange(1 << m), m)
    return 2.0 * x[:, 0] * x[:, 1] + x[:, 5] - 1.0


@pytest.mark.parametrize("backend", ["c", "numba"])
def test_trees_fourier_series_is_the_ensemble(backend):
    """The coefficients read off a fitted LightGBM ensemble, summed as a
    Fourier series at every coalition, are its predictions (an oracle
    independent of shapiq's recursion, which test_compare checks)."""
    m = 7
    v = noisy_table(m, 1)
    x = bits(np.arange(1 << m), m)
    booster = proxy._train(lgb, x, v, 0.1, 5, 60, 0)
    freqs, coefs = proxy.tree_fourier(booster, m, backend)
    series = (1.0 - 2.0 * (np.bitwise_count(np.arange(1 << m, dtype=np.uint64)[:, None]
                                            & freqs[None, :]) & 1)) @ coefs
    np.testing.assert_allclose(series, booster.predict(x), rtol=0, atol=1e-12)
    assert len(np.unique(freqs)) == len(freqs) and np.all(coefs != 0)


def test_ridge_is_ridgecv():
    """The refit's penalty and coefficients are scikit-learn's
    RidgeCV(alphas=logspace(-6, 6, 100), fit_intercept=False) on a ±1 basis,
    tall and wide."""
    linear_model = pytest.importorskip("sklearn.linear_model")
    g = np.random.default_rng(2)
    for n_rows, n_cols in ((400, 12), (30, 60)):
        basis = np.where(g.random((n_rows, n_cols)) < 0.5, -1.0, 1.0)
        y = basis @ g.normal(size=n_cols) + g.normal(size=n_rows)
        want = linear_model.RidgeCV(alphas=np.logspace(-6, 6, 100),
                                    fit_intercept=False).fit(basis, y).coef_
        np.testing.assert_allclose(proxy.ridge(basis, y), want, rtol=1e-8, atol=1e-10)


def test_refine_threshold_is_shapiqs():
    """shapiq's truncation: the coefficients above the one after the first
    whose cumulated share of the energy (the empty frequency's left out)
    reaches 95%, strictly."""
    freqs = np.array([0, 1, 2, 4, 8, 16], dtype=np.uint64)
    coefs = np.array([5.0, 3.0, -2.0, 1.0, 0.5, 0.1])     # energies 9, 4, 1, .25, .01
    masks = np.arange(64, dtype=np.uint64)
    support, _ = proxy.refine(freqs, coefs, masks, np.zeros(64))
    # cumulated shares .63, .91, .98: the third reaches 95%, the threshold is the
    # fourth's magnitude, 0.5: kept 1, 2, 4 and the empty frequency (5 > 0.5)
    np.testing.assert_array_equal(support, [0, 1, 2, 4])
    shapiq = pytest.importorskip("shapiq")
    refined = shapiq.ProxySPEX(n=6)._refine(
        {tuple(np.flatnonzero(bits([k], 6)[0]).tolist()): c for k, c in zip(freqs, coefs)},
        bits(masks, 6), np.zeros(64))
    assert sorted(refined) == [(), (0,), (1,), (2,)]


def test_matches_shapiq_on_its_coalitions():
    """Given shapiq's coalitions (its CoalitionSampler, the same seed), the
    proxy, its Fourier coefficients and the refit are shapiq's: the index
    values agree to rounding (shapiq's GridSearchCV refits LightGBM; ours
    fits half as many models, the same ones)."""
    shapiq = pytest.importorskip("shapiq")
    from shapiq.approximator.sampling import CoalitionSampler
    from fastcredit.shapiq import ProxySPEX, TableGame
    m, budget, seed = 8, 160, 3
    game = TableGame(noisy_table(m, 4))
    theirs = shapiq.ProxySPEX(n=m, max_order=2, random_state=seed).approximate(budget, game)
    sampler = CoalitionSampler(n_players=m, sampling_weights=np.array(
        [math.comb(m, s) for s in range(m + 1)], dtype=float), pairing_trick=True,
        random_state=seed)
    sampler.sample(budget)
    rows = sampler.coalitions_matrix
    masks = (rows.astype(np.uint64) << np.arange(m, dtype=np.uint64)).sum(axis=1)
    fourier = proxy.proxy_fourier(masks.astype(np.uint64), game(rows), m, seed, 2, None)
    ours = ProxySPEX(n=m, max_order=2, random_state=seed)
    values = ours._process_moebius(fourier_to_moebius(*fourier))
    assert set(ours.interaction_lookup) == set(theirs.interaction_lookup)
    for s, at in ours.interaction_lookup.items():
        assert values[at] == pytest.approx(theirs[s], rel=1e-9, abs=1e-9), s


@pytest.mark.parametrize("index", ["FBII", "SII", "k-SII", "FSII", "STII", "BII"])
def test_sparse_game_exact(index):
    """A 2-additive game of 16 players: 1,000 of the 65,536 coalitions give
    its index exactly (its three Fourier frequencies outside {} carry equal
    energy, so the truncation keeps them and the refit is exact)."""
    v = sparse_table(16)
    est = fc.approximate(v, index=index, order=2, method="proxyspex", budget=1000, seed=5)
    want = fc.interactions(v, index, 2)
    assert est.n_evals == 1000 and est.method == "proxyspex"
    for got, exact in zip(est.values, want.values):
        np.testing.assert_allclose(got, exact, rtol=0, atol=1e-6)
    assert all(np.isnan(s).all() for s in est.stderr[1:])


def test_census_is_exact():
    """A budget covering every coalition of a deterministic game is its
    exact index (the family's census)."""
    v = noisy_table(6, 7)
    est = fc.approximate(v, index="FBII", order=3, method="proxyspex", budget=64)
    want = fc.interactions(v, "FBII", 3)
    for got, exact, err in zip(est.values, want.values, est.stderr):
        np.testing.assert_allclose(got, exact, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(err, 0.0)


def test_budget_and_caching():
    """A deterministic game: each distinct coalition once, at most the
    budget, v(empty) and v(N) among them; a stochastic one: every draw
    afresh (the pairing trick: a coalition and its complement each)."""
    m = 10
    v = noisy_table(m, 8)
    seen = []

    def game(masks):
        seen.extend(masks.tolist())
        return v[masks.astype(np.int64)]

    est = fc.approximate(fc.games.deterministic(game), m, index="FBII", order=1,
                         method="proxyspex", budget=300, seed=9)
    assert len(seen) == len(set(seen)) == est.n_evals <= 300
    assert est.n_evals >= 298 and {0, 2**m - 1} <= set(seen)
    # 5 players, 14 draws (and complements) of 30 coalitions: some repeat,
    # each evaluated again
    v = noisy_table(5, 8)
    seen.clear()
    est = fc.approximate(game, 5, index="FBII", order=1, method="proxyspex", budget=30,
                         seed=9)
    assert len(seen) == est.n_evals == 30 and len(set(seen)) < 30


def test_twins_agree_per_seed():
    """The draws and the trees' coefficients are bit-identical on C and
    Numba, so is the estimate (LightGBM is deterministic)."""
    v = noisy_table(8, 10)
    runs = [fc.approximate(v, index="k-SII", order=2, method="proxyspex", budget=120,
                           seed=2**64 - 3, backend=b, threads=2) for b in ("c", "numba")]
    for a, b in zip(runs[0].values, runs[1].values):
        np.testing.assert_array_equal(a, b)
    again = fc.approximate(v, index="k-SII", order=2, method="proxyspex", budget=120,
                           seed=2**64 - 3, backend="c", threads=1)
    for a, b in zip(runs[0].values, again.values):
        np.testing.assert_array_equal(a, b)


def test_refusals(monkeypatch):
    v = noisy_table(5, 11)
    with pytest.raises(ValueError, match="at least 5 coalitions"):
        fc.approximate(v, index="FBII", order=1, method="proxyspex", budget=4)
    with pytest.raises(ValueError, match="index must be one of"):
        fc.approximate(v, index="SGV", order=1, method="proxyspex", budget=20)
    with pytest.raises(ValueError, match="pairing"):
        fc.approximate(v, index="FBII", order=1, method="proxyspex", budget=20, pairing=True)
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    with pytest.raises(ImportError, match="needs lightgbm"):
        fc.approximate(v, index="FBII", order=1, method="proxyspex", budget=20)


def test_dropin_sparse_game():
    """fastcredit.shapiq.ProxySPEX: shapiq's attributes, the 2-additive
    game's FBII exactly, the budget spent, results flagged estimated."""
    pytest.importorskip("shapiq")
    from fastcredit.shapiq import ProxySPEX
    approximator = ProxySPEX(n=16, max_order=2, random_state=0)
    assert (approximator.index, approximator.decoder_type, approximator.max_order) == \
        ("FBII", "proxyspex", 2)
    result = approximator.approximate(1000, lambda rows: 2.0 * rows[:, 0] * rows[:, 1]
                                      + rows[:, 5] - 1.0)
    assert result.estimated and result.estimation_budget == 1000
    assert result[(0, 1)] == pytest.approx(2.0, abs=1e-6)
    assert result[(5,)] == pytest.approx(1.0, abs=1e-6)
    assert result[()] == pytest.approx(-1.0, abs=1e-6)
    assert max(abs(result[s]) for s in result.interaction_lookup
               if s not in ((), (5,), (0, 1))) < 1e-6
