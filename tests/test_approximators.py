"""fc.approximate (the approximator family, issue 27): each estimator against
exact values, unbiasedness, C against Numba, budget accounting, errors, and
the shapiq drop-ins against shapiq's own classes."""
import math

import numpy as np
import pytest
from numba import njit

import fastcredit as fc
from fastcredit.approximators.marginals import owen_weights

import reference as ref

from conftest import BACKENDS

METHODS = ("svarm", "stratified", "owen")
FIXED = {"svarm": 2, "stratified": 1, "owen": 1}
FIXED_STOCHASTIC = 1          # v(empty), the baseline: a stochastic svarm samples v(N)
PER_SAMPLE = {"svarm": 1, "stratified": 2, "owen": 2}


def _game(m, seed=0):
    g = np.random.default_rng(seed)
    v = g.normal(size=1 << m)
    masks = np.arange(1 << m)
    v += 0.5 * np.bitwise_count(masks) ** 1.5      # a size effect, so strata differ
    v[0] = 0.3
    return v


def _estimand(v, method, index="SV", anchors=10):
    m = len(v).bit_length() - 1
    if method == "owen":
        return fc.semivalue(v, owen_weights(m, anchors))
    return fc.shapley(v) if index == "SV" else fc.banzhaf(v)


# --- exactness ----------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_full_budget_is_exact(method):
    v = _game(7)
    est = fc.approximate(v, method=method, budget=1 << 7, seed=3)
    np.testing.assert_allclose(est.values[1], _estimand(v, method), rtol=1e-12, atol=1e-12)
    assert est.values[0][0] == v[0] and est.n_evals == 1 << 7
    assert np.all(est.stderr[1] == 0) and isinstance(est, fc.Interactions)


def test_svarm_banzhaf_full_budget():
    v = _game(6)
    est = fc.approximate(v, index="BV", method="svarm", budget=10**6)
    np.testing.assert_allclose(est.values[1], fc.banzhaf(v), rtol=1e-12, atol=1e-12)
    assert est.n_evals == 64


@pytest.mark.parametrize("method", METHODS)
def test_large_budget_is_close(method):
    """m = 11, budget 1900 < 2**11: within 5 standard errors of the estimand
    (and the standard errors small)."""
    v = _game(11, 1)
    est = fc.approximate(v, method=method, budget=1900, seed=0)
    err = np.abs(est.values[1] - _estimand(v, method))
    assert np.all(err <= 5 * est.stderr[1] + 1e-12), (err, est.stderr[1])
    assert est.n_evals <= 1900


def test_owen_estimand_is_near_the_shapley_value_with_many_anchors():
    v = _game(6)
    assert np.abs(_estimand(v, "owen", anchors=400) - fc.shapley(v)).max() < 0.05


# --- unbiasedness ---------------------------------------------------------------
# Over S = 300 seeds the mean estimate of each of the m = 7 players is within
# 4.5 of its own standard error (sd over seeds / sqrt(S)) of the estimand. For
# an unbiased estimator |z| > 4.5 has probability about 7e-6 (the mean of 300
# estimates is close to normal), so the 3 x 7 checks fail by chance with
# probability below 2e-4. (SVARM is unbiased once each stratum it samples holds
# a sample; stratified once each (player, size); Owen for owen_weights.)

@pytest.mark.parametrize("method, budget", [("svarm", 90), ("stratified", 80), ("owen", 80)])
def test_unbiased(method, budget):
    v = _game(7, 2)
    runs = np.array([fc.approximate(v, method=method, budget=budget, seed=s).values[1]
                     for s in range(300)])
    z = (runs.mean(axis=0) - _estimand(v, method)) / (runs.std(axis=0, ddof=1) / np.sqrt(300))
    assert np.all(np.abs(z) < 4.5), z


def test_stderr_matches_the_spread_over_seeds():
    v = _game(9, 3)
    for method in METHODS:
        runs = [fc.approximate(v, method=method, budget=400, seed=s) for s in range(200)]
        sd = np.std([r.values[1] for r in runs], axis=0, ddof=1)
        se = np.mean([r.stderr[1] for r in runs], axis=0)
        assert np.all((se > 0.5 * sd) & (se < 2.0 * sd)), (method, se, sd)


# --- C against Numba, and against the oracle ------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_backends_bit_identical(method):
    if len(BACKENDS) < 2:
        pytest.skip("one backend")
    g = np.random.default_rng(5)
    v = g.normal(size=(2, 3, 1 << 8))
    for table in (v, v.astype(np.float32)):
        got = [fc.approximate(table, method=method, budget=150, seed=2**64 - 2, backend=b,
                              threads=2) for b in BACKENDS]
        for k in range(2):
            assert got[0].values[k].tobytes() == got[1].values[k].tobytes()
            assert got[0].stderr[k].tobytes() == got[1].stderr[k].tobytes()
        np.testing.assert_array_equal(got[0].n_evals, got[1].n_evals)
    calls = [fc.approximate(lambda s: v[0, 0][s.astype(np.int64)], 8, method=method,
                            budget=99, seed=1, backend=b) for b in BACKENDS]
    assert calls[0].values[1].tobytes() == calls[1].values[1].tobytes()


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("m, budget", [(7, 60), (8, 200), (5, 31)])
def test_against_the_reference(method, m, budget):
    v = _game(m, m)
    for backend in BACKENDS:
        est = fc.approximate(v, method=method, budget=budget, seed=11, backend=backend)
        want = ref.approx_run(v, method, budget, 11)
        np.testing.assert_allclose(est.values[1], want["values"], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(est.stderr[1], want["stderr"], rtol=1e-10, atol=1e-12)
        assert est.n_evals == want["n_evals"]


def test_batch_keeps_each_game_keyed_by_its_position():
    v = np.random.default_rng(6).normal(size=(3, 1 << 6))
    batch = fc.approximate(v, method="stratified", budget=40, seed=9)
    assert batch.values[1].shape == (3, 6) and batch.n_evals.shape == (3,)
    np.testing.assert_array_equal(batch.values[0][:, 0], v[:, 0])


# --- budget accounting ----------------------------------------------------------

class Counting:
    def __init__(self, v):
        self.v, self.seen, self.calls = v, [], 0

    def __call__(self, masks):
        self.calls += 1
        self.seen += [int(x) for x in masks]
        return self.v[masks.astype(np.int64)]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("budget", [3, 57, 400, 1023])
def test_deterministic_budget_spent_once_per_coalition(method, budget):
    v = _game(10, 4)
    game = Counting(v)
    est = fc.approximate(fc.games.deterministic(game), 10, method=method, budget=budget)
    assert len(game.seen) == est.n_evals <= budget
    assert len(set(game.seen)) == len(game.seen), "a coalition evaluated twice"
    assert budget - est.n_evals < PER_SAMPLE[method], "budget left unspent"
    assert game.calls <= 2 + (est.n_samples + 4095) // 4096 * 2


@pytest.mark.parametrize("method", METHODS)
def test_undeclared_callable_is_evaluated_afresh(method):
    v = _game(5, 4)
    game = Counting(v)
    est = fc.approximate(game, 5, method=method, budget=301)
    assert len(game.seen) == est.n_evals
    assert len(set(game.seen)) < len(game.seen), "no coalition evaluated twice: cached?"
    assert est.n_samples == (301 - FIXED_STOCHASTIC) // PER_SAMPLE[method]


@njit
def _noisy(mask, key):
    return float(mask & 1) + (key >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit
def _plain(mask):
    return float(mask & 5)


@pytest.mark.parametrize("method", METHODS)
def test_stochastic_jitted_game_is_never_cached(method):
    budget = 2001
    est = fc.approximate(_noisy, 5, method=method, budget=budget, seed=2)
    # every sample paid for all its coalitions: nothing was reused
    assert est.n_samples == (budget - FIXED_STOCHASTIC) // PER_SAMPLE[method]
    assert est.n_evals == FIXED_STOCHASTIC + est.n_samples * PER_SAMPLE[method]
    assert np.all(np.isfinite(est.stderr[1]))
    np.testing.assert_allclose(est.values[1], [1, 0, 0, 0, 0], atol=6 * est.stderr[1].max())
    again = fc.approximate(_noisy, 5, method=method, budget=budget, seed=2)
    assert again.values[1].tobytes() == est.values[1].tobytes()


@pytest.mark.parametrize("method", METHODS)
def test_jitted_game_matches_its_table(method):
    table = np.array([float(s & 5) for s in range(1 << 6)])
    a = fc.approximate(_plain, 6, method=method, budget=50, seed=4)
    b = fc.approximate(table, method=method, budget=50, seed=4)
    assert a.values[1].tobytes() == b.values[1].tobytes() and a.n_evals == b.n_evals


# --- errors -------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    ({"method": "kernel"}, "method"), ({"index": "SII"}, "index"),
    ({"index": "BV", "method": "owen"}, "index"), ({"order": 2}, "order"),
    ({"budget": 0}, "budget"), ({"budget": 1, "method": "svarm"}, "budget"),
    ({"budget": 2.5}, "budget"), ({"anchors": 3}, "anchors"),
    ({"anchors": 0, "method": "owen"}, "anchors"), ({"seed": -1}, "seed"),
    ({"backend": "fortran"}, "backend"), ({"m": 5}, "m")])
def test_bad_arguments_are_named(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        fc.approximate(np.zeros(16), **kwargs)


def test_bad_games_are_named():
    with pytest.raises(ValueError, match="m"):
        fc.approximate(lambda s: np.zeros(len(s)), 65, coalitions="bool")
    with pytest.raises(ValueError, match="backend"):
        fc.approximate(_plain, 4, backend="c")
    with pytest.raises(ValueError, match="non-finite"):
        fc.approximate(lambda s: np.full(len(s), np.nan), 4)
    with pytest.raises(ValueError, match="game"):
        fc.approximate(np.zeros(15))


# --- the shapiq drop-ins ----------------------------------------------------------

DROP_INS = [("SVARM", {}, 150), ("StratifiedSamplingSV", {}, 200),
            ("OwenSamplingSV", {"n_anchor_points": 4}, 200)]


@pytest.mark.parametrize("name, kwargs, budget", DROP_INS)
def test_drop_in_agrees_with_shapiq(name, kwargs, budget):
    """Ours and shapiq's class, 40 seeds each on one n = 8 game: the mean
    estimates agree within 4.5 standard errors of their difference (both
    estimate the same thing; a chance failure has probability < 1e-4 over
    the 8 players), and each result is shapiq's InteractionValues with the
    same index, layout and baseline."""
    shapiq = pytest.importorskip("shapiq")
    import warnings
    from fastcredit import shapiq as fcs
    v = _game(8, 7)
    game = fcs.TableGame(v)
    ours_cls, theirs_cls = getattr(fcs, name), getattr(shapiq, name)
    assert issubclass(ours_cls, theirs_cls)
    ours, theirs = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(40):
            a = ours_cls(8, random_state=s, **kwargs).approximate(budget, game)
            b = theirs_cls(8, random_state=s, **kwargs)(budget=budget, game=game)
            assert a.index == b.index and a.interaction_lookup == b.interaction_lookup
            assert a.baseline_value == b.baseline_value == v[0]
            assert a.estimation_budget <= budget
            ours.append(a.get_n_order_values(1))
            theirs.append(b.get_n_order_values(1))
    ours, theirs = np.array(ours), np.array(theirs)
    se = np.sqrt(ours.var(axis=0, ddof=1) / 40 + theirs.var(axis=0, ddof=1) / 40)
    z = (ours.mean(axis=0) - theirs.mean(axis=0)) / se
    assert np.all(np.abs(z) < 4.5), z


def test_drop_ins_random_state_and_full_budget():
    pytest.importorskip("shapiq")
    from fastcredit import shapiq as fcs
    v = _game(6, 8)
    game = fcs.TableGame(v)
    for cls in (fcs.SVARM, fcs.StratifiedSamplingSV, fcs.OwenSamplingSV):
        a, b = cls(6, random_state=3), cls(6, random_state=3)
        first = a.approximate(40, game)
        assert np.array_equal(first.values, b.approximate(40, game).values)
        assert not np.array_equal(first.values, a.approximate(40, game).values)
        full = cls(6).approximate(64, game)
        # shapiq's SVARM reports budget >= 2**n as exact; its stratified and
        # Owen samplers report every result as estimated
        assert full.estimated == (cls is not fcs.SVARM) and full.estimation_budget == 64
    exact = fcs.SVARM(6).approximate(64, game)
    np.testing.assert_allclose(exact.get_n_order_values(1), fc.shapley(v), atol=1e-12)
    with pytest.raises(TypeError, match="pairing_trick"):
        fcs.SVARM(6, pairing_trick="yes")
    with pytest.raises(ValueError, match="n_anchor_points"):
        fcs.OwenSamplingSV(6, n_anchor_points=0)
    with pytest.raises(ValueError, match="budget"):
        fcs.SVARM(6).approximate(1, game)


@pytest.mark.parametrize("method", METHODS)
def test_dense_and_sorted_memos_agree(method, monkeypatch):
    """The memo is bookkeeping: the dense one (small m) and the sorted one
    (large m) give the same run."""
    from fastcredit.approximators import base
    v = _game(9, 9)
    want = fc.approximate(v, method=method, budget=300, seed=5)
    monkeypatch.setattr(base, "_memo", lambda m, budget: base._Memo())
    got = fc.approximate(v, method=method, budget=300, seed=5)
    assert got.values[1].tobytes() == want.values[1].tobytes()
    assert got.stderr[1].tobytes() == want.stderr[1].tobytes()
    assert got.n_evals == want.n_evals and got.n_samples == want.n_samples


def test_sorted_memo_on_a_large_game_against_the_reference():
    v = _game(20, 10)
    for method in METHODS:
        est = fc.approximate(v, method=method, budget=700, seed=3)
        want = ref.approx_run(v, method, 700, 3)
        np.testing.assert_allclose(est.values[1], want["values"], rtol=1e-10, atol=1e-12)
        assert est.n_evals == want["n_evals"]


@pytest.mark.parametrize("method", METHODS)
def test_stochastic_game_unbiased_with_honest_stderr(method):
    """A stochastic @njit game (v(S) = [0 in S] + uniform noise; SV = e_0):
    over 200 seeds the mean estimate is within 4.5 of its standard error of
    the truth (chance failure < 1e-5 per player), and the reported stderr
    is within a factor 2 of the spread over seeds."""
    runs = [fc.approximate(_noisy, 5, method=method, budget=400, seed=s) for s in range(200)]
    vals = np.array([r.values[1] for r in runs])
    sd = vals.std(axis=0, ddof=1)
    z = (vals.mean(axis=0) - [1, 0, 0, 0, 0]) / (sd / np.sqrt(200))
    assert np.all(np.abs(z) < 4.5), z
    se = np.median([r.stderr[1] for r in runs], axis=0)
    assert np.all((se > 0.5 * sd) & (se < 2 * sd)), (se, sd)


# --- SHAP-IQ and SVARM-IQ (method="shapiq", "svarmiq"): every order --------------

IQ_METHODS = ("shapiq", "svarmiq")
#: (index, order) pairs shapiq's MonteCarlo approximators estimate
IQ_INDICES = [("SII", 2), ("k-SII", 2), ("STII", 2), ("FSII", 2), ("FBII", 2), ("BII", 2),
              ("CHII", 2), ("SV", 1), ("BV", 1), ("STII", 3), ("k-SII", 3)]
_IQ_TABLE = _game(5, 11)


@njit
def _noisy_table(mask, key):
    """_IQ_TABLE[mask] plus uniform noise on [-1/2, 1/2) (mean 0)."""
    return _IQ_TABLE[mask] + ((key >> np.uint64(11)) * (1.0 / 9007199254740992.0) - 0.5)


def _iq_exact(v, index, order):
    return fc.interactions(v, index, order).values


@pytest.mark.parametrize("method", IQ_METHODS)
@pytest.mark.parametrize("index, order", IQ_INDICES)
def test_iq_full_budget_is_exact(method, index, order):
    """budget >= 2**m: the index itself, orders 1..k (fc.interactions), v(empty)
    at order 0, stderr 0; and the table is read once per coalition."""
    v = _game(6, 2)
    game = Counting(v)
    est = fc.approximate(fc.games.deterministic(game), 6, index, order, method=method,
                         budget=64)
    want = _iq_exact(v, index, order)
    for s in range(1, order + 1):
        np.testing.assert_allclose(est.values[s], want[s], rtol=1e-12, atol=1e-12)
        assert np.all(est.stderr[s] == 0)
    assert est.values[0][0] == v[0] and est.n_evals == 64 == len(set(game.seen))


@pytest.mark.parametrize("method", IQ_METHODS)
@pytest.mark.parametrize("index, order", [("SII", 2), ("k-SII", 2), ("STII", 2), ("FSII", 2),
                                          ("BII", 2), ("SV", 1)])
def test_iq_unbiased_on_a_stochastic_game_with_honest_stderr(method, index, order):
    """A stochastic @njit game (a table plus uniform noise of mean 0), budget
    = 1,500 draws (every size drawn, every stratum filled): over 200 seeds the
    mean estimate of every interaction is within 4.5 standard errors of the
    index of the table (a chance failure below 7e-6 per entry, 2e-4 per test
    of at most 25 entries), and SHAP-IQ's reported stderr (k-SII's lower
    orders too; SVARM-IQ's where defined) is within a factor 2 of the spread
    over seeds."""
    runs = [fc.approximate(_noisy_table, 5, index, order, method=method, budget=1500, seed=s)
            for s in range(200)]
    want = _iq_exact(_IQ_TABLE, index, order)
    for s in range(1, order + 1):
        vals = np.array([r.values[s] for r in runs])
        sd = vals.std(axis=0, ddof=1)
        z = (vals.mean(axis=0) - want[s]) / (sd / np.sqrt(len(runs)))
        assert np.all(np.abs(z) < 4.5), (s, z)
        se = np.median([r.stderr[s] for r in runs], axis=0)
        if method == "svarmiq" and index == "k-SII" and s < order:
            # an aggregate of estimates stratified each its own way
            assert np.all(np.isnan(se))
            continue
        assert np.all((se > 0.5 * sd) & (se < 2 * sd)), (s, se, sd)


@pytest.mark.parametrize("m, order, budget", [(7, 2, 60), (8, 3, 200)])
def test_shapiq_k_sii_folded_is_sii_aggregated(m, order, budget):
    """SHAP-IQ folds k-SII with its own weights (so its lower orders get a
    standard error): the values are the SII estimates of the same draws
    aggregated (Bordt & von Luxburg's Bernoulli sums), to rounding."""
    from fastcredit.approximators.regression import aggregate_k_sii
    v = _game(m, 1)
    sii = fc.approximate(v, m, "SII", order, method="shapiq", budget=budget, seed=4)
    k_sii = fc.approximate(v, m, "k-SII", order, method="shapiq", budget=budget, seed=4)
    for want, got in zip(aggregate_k_sii(list(sii.values), m)[1:], k_sii.values[1:]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert all(np.all(s > 0) for s in k_sii.stderr[1:])


@pytest.mark.parametrize("method", IQ_METHODS)
@pytest.mark.parametrize("pairing", [False, True])
def test_iq_backends_bit_identical(method, pairing):
    if len(BACKENDS) < 2:
        pytest.skip("one backend")
    v = _game(7, 5)
    # a table, and an undeclared callable (the stochastic path: no census)
    for game, m in ((v, None), (Counting(v), 7)):
        a, b = (fc.approximate(game, m, "STII", 3, method=method, budget=90, seed=2**64 - 9,
                               pairing=pairing, backend=be) for be in ("c", "numba"))
        for x, y in zip(a.values + a.stderr, b.values + b.stderr):
            assert x.tobytes() == y.tobytes()
        assert a.n_evals == b.n_evals and a.n_samples == b.n_samples


@pytest.mark.parametrize("method", IQ_METHODS)
@pytest.mark.parametrize("budget, pairing", [(2, False), (23, False), (300, True),
                                             (1000, False), (1023, True)])
def test_iq_deterministic_budget_spent_once_per_coalition(method, budget, pairing):
    v = _game(10, 4)
    game = Counting(v)
    est = fc.approximate(fc.games.deterministic(game), 10, "k-SII", 2, method=method,
                         budget=budget, pairing=pairing)
    assert est.n_evals == len(game.seen) == len(set(game.seen)) <= budget
    assert game.calls == 1 or budget > 2 ** 12        # the fixed coalitions ride along
    # the sampler spends the budget to within one sample's coalitions
    assert est.n_evals >= budget - (2 if pairing else 1)


@pytest.mark.parametrize("method", IQ_METHODS)
def test_iq_stochastic_game_is_never_cached(method):
    game = Counting(_game(5, 4))
    est = fc.approximate(game, 5, "SII", 2, method=method, budget=301)
    assert len(game.seen) == est.n_evals == 301
    assert len(set(game.seen)) < len(game.seen), "no coalition evaluated twice: cached?"
    assert est.n_samples == 300                         # v(empty) the centre, then draws


def test_iq_pairing_draws_each_coalition_with_its_complement():
    game = Counting(_game(8, 1))
    fc.approximate(game, 8, "SII", 2, method="shapiq", budget=201, pairing=True)
    drawn = np.array(game.seen[1:], dtype=np.uint64)     # after v(empty)
    assert np.all(drawn[0::2] ^ drawn[1::2] == 255)


def test_iq_sampling_weights_steer_the_sizes():
    """Only size 4 weighed (beside the enumerated 0 and m): every drawn
    coalition has 4 players."""
    game = Counting(_game(8, 1))
    w = np.zeros(9)
    w[4] = 1.0
    fc.approximate(fc.games.deterministic(game), 8, "SII", 2, method="svarmiq", budget=40,
                   sampling_weights=w)
    sizes = np.bitwise_count(np.array(game.seen, dtype=np.uint64))
    assert set(sizes.tolist()) == {0, 4, 8}


@pytest.mark.parametrize("kwargs, name", [
    ({"index": "Moebius", "order": 2}, "index"), ({"index": "SV", "order": 2}, "order"),
    ({"index": "SII", "order": 7}, "order"), ({"budget": 1}, "budget"),
    ({"index": "SII", "order": 2, "anchors": 3}, "anchors"),
    ({"index": "SII", "order": 2, "sampling_weights": np.ones(5)}, "sampling_weights"),
    ({"index": "SII", "order": 2, "pairing": 2}, "pairing")])
@pytest.mark.parametrize("method", IQ_METHODS)
def test_iq_bad_arguments_are_named(method, kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        fc.approximate(_game(6), method=method, **kwargs)


def test_iq_sampling_weights_are_refused_for_a_stochastic_game():
    with pytest.raises(ValueError, match="sampling_weights"):
        fc.approximate(_noisy_table, 5, "SII", 2, method="shapiq", sampling_weights=np.ones(6))


# --- the regression methods (KernelSHAP, KernelSHAP-IQ, kADD-SHAP, Faithful) ------

#: method -> (index, order) of its main use
REGRESSION = {"kernelshap": ("SV", 1), "kernelshapiq": ("k-SII", 2),
              "inconsistent_kernelshapiq": ("SII", 2), "kaddshap": ("kADD-SHAP", 2),
              "regression_fsii": ("FSII", 2), "regression_fbii": ("FBII", 2)}


def _full_regression(v, method, index, order):
    """The regression on every coalition (tests/reference.py's dense solve
    with the whole table as census): the estimand of a method whose limit is
    not the index (Inconsistent KernelSHAP-IQ)."""
    m = len(v).bit_length() - 1
    r = ref.regression_run(v, method, index, order, 1 << m, 0)
    assert r["n_evals"] == 1 << m
    return r["values"]


@pytest.mark.parametrize("method, index, order", [
    (method, index, order) for method, (index, top) in REGRESSION.items()
    for order in ([1] if method == "kernelshap" else [1, 2, 3])])
def test_regression_full_budget_is_exact(method, index, order):
    v = _game(6, order)
    est = fc.approximate(v, method=method, index=index, order=order, budget=1 << 6, seed=3)
    got = np.concatenate(est.values)
    if method == "inconsistent_kernelshapiq":
        # not consistent for SII: its full-budget result is its regression's
        np.testing.assert_allclose(got, _full_regression(v, method, index, order), rtol=1e-5,
                                   atol=1e-6)
    else:
        want = fc.interactions(v, index, order).values
        np.testing.assert_allclose(got[1:], np.concatenate(want[1:]), rtol=1e-12,
                                   atol=1e-12)
        # the empty set: FBII's fitted intercept, else v(empty) (as shapiq's regressions)
        assert got[0] == (want[0][0] if method == "regression_fbii" else v[0])
    assert est.n_evals == 1 << 6 and all(np.all(s == 0) for s in est.stderr)
    assert [x.shape for x in est.values] == [(math.comb(6, t),) for t in range(order + 1)]


@pytest.mark.parametrize("method", [m for m in REGRESSION if m != "inconsistent_kernelshapiq"])
def test_regression_on_every_coalition_is_the_index(method):
    """The weighted least squares on the whole table (the reference's dense
    solve, shapiq's 1e8 weights) is the index itself, to that weight's
    1e-6: the estimand of each consistent method."""
    index, order = REGRESSION[method]
    v = _game(6, 2)
    got = _full_regression(v, method, index, order)
    want = np.concatenate(fc.interactions(v, index, order).values)
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", REGRESSION)
@pytest.mark.parametrize("budget, pairing", [(2, False), (23, False), (300, True),
                                             (1000, False)])
def test_regression_budget_spent_once_per_coalition(method, budget, pairing):
    index, order = REGRESSION[method]
    v = _game(10, 4)
    game = Counting(v)
    est = fc.approximate(fc.games.deterministic(game), 10, index, order, method=method,
                         budget=budget, pairing=pairing, seed=5)
    assert len(game.seen) == est.n_evals <= budget
    assert len(set(game.seen)) == len(game.seen), "a coalition evaluated twice"
    assert budget - est.n_evals < (2 if pairing else 1), "budget left unspent"
    assert {0, (1 << 10) - 1} <= set(game.seen)


@pytest.mark.parametrize("method", ["kernelshap", "kaddshap"])
def test_regression_stochastic_game_is_never_cached(method):
    index, order = REGRESSION[method]
    game = Counting(_game(8, 4))
    est = fc.approximate(game, 8, index, order, method=method, budget=200, seed=1)
    assert len(game.seen) == est.n_evals == 200
    assert len(set(game.seen)) < len(game.seen), "no coalition evaluated twice: cached?"
    # an @njit fn(mask, key): every draw fresh; its budget capped at the 2**m
    # coalitions, as shapiq's sampler caps it
    a = fc.approximate(_noisy, 8, index, order, method=method, budget=200, seed=2)
    b = fc.approximate(_noisy, 8, index, order, method=method, budget=200, seed=2)
    assert a.n_evals == 200 and np.concatenate(a.values).tobytes() == \
        np.concatenate(b.values).tobytes()


@pytest.mark.parametrize("method", REGRESSION)
def test_regression_seeds_and_backends(method):
    index, order = REGRESSION[method]
    v = _game(8, 2)
    runs = {be: fc.approximate(v, method=method, index=index, order=order, budget=120,
                               seed=11, backend=be) for be in BACKENDS}
    first = np.concatenate(runs[BACKENDS[0]].values + runs[BACKENDS[0]].stderr)
    for est in runs.values():
        assert np.concatenate(est.values + est.stderr).tobytes() == first.tobytes()
    other = fc.approximate(v, method=method, index=index, order=order, budget=120, seed=12)
    assert not np.array_equal(np.concatenate(other.values), np.concatenate(
        runs[BACKENDS[0]].values))


# Over S = 200 seeds, m = 8: the reported (sandwich) standard error is the
# spread of the estimates: the ratio of their sd over seeds to the rms stderr
# lies in [0.75, 1.33] for every entry. The sd of 200 draws is within 5% of
# its value with sd about 5%, so a correct stderr leaves the band with
# probability below 1e-6 per entry (about 40 entries per method; the delta
# method's own error at this budget was measured at 0.9-1.17). The estimators
# are consistent, not unbiased (ratios of sums); the error must shrink with
# the budget.

@pytest.mark.parametrize("method, index, order", [(method, *REGRESSION[method])
                                                   for method in REGRESSION]
                         + [("kernelshapiq", "SII", 3)])
def test_regression_stderr_is_the_spread_and_error_shrinks(method, index, order):
    v = _game(8, 1)
    runs = [fc.approximate(v, method=method, index=index, order=order, budget=200, seed=s)
            for s in range(200)]
    est = np.array([np.concatenate(r.values[1:]) for r in runs])
    se = np.array([np.concatenate(r.stderr[1:]) for r in runs])
    ratio = est.std(axis=0, ddof=1) / np.sqrt((se ** 2).mean(axis=0))
    assert np.all((ratio > 0.75) & (ratio < 1.33)), ratio
    if method == "inconsistent_kernelshapiq":
        return
    exact = np.concatenate(fc.interactions(v, index, order).values[1:])

    def rmse(budget):
        return np.sqrt(np.mean([(np.concatenate(fc.approximate(
            v, method=method, index=index, order=order, budget=budget, seed=s).values[1:])
            - exact) ** 2 for s in range(20)]))
    assert rmse(240) < 0.7 * rmse(60)


def test_regression_pairing_and_sampling_weights():
    game = Counting(_game(8, 1))
    fc.approximate(fc.games.deterministic(game), 8, "FSII", 2, method="regression_fsii",
                   budget=120, pairing=True, seed=3)
    seen = set(game.seen)
    assert sum(((1 << 8) - 1) ^ x not in seen for x in seen) <= 1
    w = np.zeros(9)
    w[[0, 4, 8]] = 1.0
    game = Counting(_game(8, 1))
    fc.approximate(fc.games.deterministic(game), 8, "SV", 1, method="kernelshap", budget=60,
                   sampling_weights=w)
    assert set(np.bitwise_count(np.array(game.seen, dtype=np.uint64)).tolist()) == {0, 4, 8}


# --- KernelSHAP-IQ of order >= 3 (shapiq's: the middle sizes' regression plus
# SII's own weights on the border coalitions) ----------------------------------

@pytest.mark.parametrize("m, order", [(6, 3), (7, 4), (5, 5)])
@pytest.mark.parametrize("index", ["SII", "k-SII"])
def test_kernelshapiq_high_orders_on_every_coalition_are_the_index(m, order, index):
    """A game passed as stochastic (no memo, no whole-table shortcut) at
    budget 2**m: the border trick enumerates every size, so the estimator
    itself runs on every coalition once; its result is the index of every
    order (to shapiq's 1e8 border weights' 1e-6), stderr 0."""
    v = _game(m, order)
    game = Counting(v)
    est = fc.approximate(game, m, index, order, method="kernelshapiq", budget=1 << m, seed=3)
    assert est.n_evals == 1 << m == len(set(game.seen))
    want = fc.interactions(v, index, order).values
    for got, exact in zip(est.values[1:], want[1:]):
        np.testing.assert_allclose(got, exact, rtol=1e-6, atol=2e-6)
    assert est.values[0][0] == v[0] and all(np.all(s == 0) for s in est.stderr)


@pytest.mark.parametrize("budget", [150, 40])
def test_kernelshapiq_order_3_backends_and_drawn_border(budget):
    """C and Numba bit-identical per seed (values and stderr) at order 3; at
    budget 40 the border sizes (74 coalitions for m = 8) are drawn, not
    enumerated: values finite, stderr NaN (their SII-weighted sum is not a
    score of the variance pass)."""
    v = _game(8, 2)
    runs = [fc.approximate(v, method="kernelshapiq", index="k-SII", order=3, budget=budget,
                           seed=6, backend=be) for be in BACKENDS]
    first = np.concatenate(runs[0].values + runs[0].stderr)
    for est in runs:
        assert est.n_evals == budget
        assert np.concatenate(est.values + est.stderr).tobytes() == first.tobytes()
        assert all(np.all(np.isfinite(x)) for x in est.values)
        stderr = np.concatenate(est.stderr[1:])
        assert np.all(np.isnan(stderr)) if budget == 40 else np.all(stderr > 0)


def test_regression_rank_deficient_sample_takes_the_least_norm_fit():
    """shapiq's Inconsistent KernelSHAP-IQ test (n = 7, order 4, budget 100:
    98 columns, 100 coalitions, the sample's rank 96-98) on a game the
    columns represent exactly, v(S) = |S| / 7 + [{1, 2} ⊆ S]: the fit is the
    game's (pair (1, 2) 1, the triple (1, 2, 3) 0, within shapiq's 0.03) on
    every one of 40 seeds. The 1e8-weighted v(empty) and v(N) are folded in
    the x basis: in the f basis their terms cancelled only to 1e8 x rounding,
    and a seed in eight got an arbitrary null-space component (|(1, 2, 3)| up
    to 1.2) where shapiq's solve falls back to the least-norm fit."""
    m = 7
    masks = np.arange(1 << m)
    v = np.bitwise_count(masks) / 7 + ((masks & 6) == 6)
    pair = fc.subset_players(m, 2).tolist().index([1, 2])
    triple = fc.subset_players(m, 3).tolist().index([1, 2, 3])
    for seed in range(40):
        est = fc.approximate(v, m, "SII", 4, method="inconsistent_kernelshapiq", budget=100,
                             seed=seed)
        assert abs(est.values[3][triple]) < 0.03 and abs(est.values[2][pair] - 1) < 0.03


def test_regression_k_sii_is_sii_aggregated():
    v = _game(7, 2)
    a = fc.approximate(v, method="kernelshapiq", index="SII", order=2, budget=90, seed=4)
    b = fc.approximate(v, method="kernelshapiq", index="k-SII", order=2, budget=90, seed=4)
    np.testing.assert_array_equal(a.values[2], b.values[2])
    pairs = fc.subset_players(7, 2)
    expect = a.values[1].copy()
    for (i, j), x in zip(pairs, a.values[2]):
        expect[i] -= x / 2
        expect[j] -= x / 2
    np.testing.assert_allclose(b.values[1], expect, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kwargs, name", [
    ({"method": "kernelshap", "index": "FSII"}, "index"),
    ({"method": "kernelshap", "order": 2}, "order"),
    ({"method": "kernelshapiq", "index": "k-SII", "order": 7}, "order"),
    ({"method": "regression_fsii", "index": "FSII", "order": 7}, "order"),
    ({"method": "kaddshap", "index": "kADD-SHAP", "budget": 1}, "budget"),
    ({"method": "regression_fbii", "index": "FBII", "sampling_weights": np.ones(6)},
     "sampling_weights"),
    ({"method": "kernelshap", "sampling_weights": -np.ones(7)}, "sampling_weights"),
    ({"method": "kernelshap", "pairing": "yes"}, "pairing"),
    ({"method": "stratified", "pairing": True}, "pairing")])
def test_regression_bad_arguments_are_named(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        fc.approximate(_game(6), **kwargs)


def test_regression_without_stderr_skips_the_variance_pass_only():
    v = _game(8, 3)
    a = fc.approximate(v, index="FSII", order=2, method="regression_fsii", budget=150, seed=2)
    b = fc.approximate(v, index="FSII", order=2, method="regression_fsii", budget=150, seed=2,
                       stderr=False)
    assert np.concatenate(a.values).tobytes() == np.concatenate(b.values).tobytes()
    assert all(np.all(np.isnan(s)) for s in b.stderr) and a.n_evals == b.n_evals
    full = fc.approximate(v, index="FSII", order=2, method="regression_fsii", budget=256,
                          stderr=False)
    assert all(np.all(s == 0) for s in full.stderr)


# -- SPEX's BCH decoder (fastcredit.approximators.sparse; against galois in
# tests/test_shapiq_approximators.py) -------------------------------------------

from fastcredit._c import approximators as capprox  # noqa: E402
from fastcredit.approximators.sparse import BCHCode  # noqa: E402


def test_bch_decode_backends_are_bit_identical_on_any_word():
    g = np.random.default_rng(3)
    for n, t in [(5, 2), (16, 5), (30, 7), (64, 16)]:
        code = BCHCode(n, t)
        words = (g.random((300, n + code.parity_length)) < g.random((300, 1))).astype(np.uint8)
        c, numba = code.decode(words, "c"), code.decode(words, "numba")
        assert np.array_equal(c[0], numba[0]) and np.array_equal(c[1], numba[1])
        ok = c[1] != -1
        # a decoded word is a codeword at the reported distance
        residual = (code.delay_matrix()[1:] @ c[0][ok, :n].T % 2).T
        assert np.array_equal(residual, c[0][ok, n:])
        assert np.array_equal((c[0][ok] != words[ok]).sum(axis=1), c[1][ok])


def test_bch_decode_refuses_bad_arguments():
    code = BCHCode(6, 2)
    words = np.zeros((2, 6 + code.parity_length), np.uint8)
    out, errors = np.empty_like(words), np.empty(2, np.int64)
    args = (code.order, code.t, code.gf_exp, code.gf_log)
    with pytest.raises(ValueError, match="received"):
        capprox.bch_decode(words.astype(np.int64), *args, out, errors)
    with pytest.raises(ValueError, match="decoded"):
        capprox.bch_decode(words, *args, out[:1], errors)
    with pytest.raises(ValueError, match="n_errors"):
        capprox.bch_decode(words, *args, out, errors[:1])
    with pytest.raises(ValueError, match="gf_exp"):
        capprox.bch_decode(words, *args[:2], code.gf_exp[:3], code.gf_log, out, errors)
    words[0, 0] = 2
    with pytest.raises(ValueError):
        capprox.bch_decode(words, *args, out, errors)
    with pytest.raises(ValueError):
        capprox.bch_decode(words[:, :1] * 0, code.order, 0, code.gf_exp, code.gf_log,
                           out[:, :1], errors)


# -- SPEX (fc.approximate(method="spex"); fastcredit.approximators.sparse) -------

from fastcredit._numba import approximators as nbapprox  # noqa: E402


def _fourier_game(m, frequencies, coefficients, noise=0.0, seed=0):
    """v(S) = sum_k c_k (-1)^|S & k| (+ normal noise of sd ``noise``)."""
    masks = np.arange(1 << m)
    v = np.zeros(1 << m)
    for k, c in zip(frequencies, coefficients):
        v += np.where(np.bitwise_count(masks & k) & 1, -c, c)
    return v + noise * np.random.default_rng(seed).normal(size=v.size)


#: a sparse game of degree <= 3 on 12 players: SPEX's claim is that its
#: coefficients, hence every index of it, are recovered exactly
SPARSE_FREQUENCIES = [0, 0b1, 0b110, 0b100000100000, 0b10, 0b11100, 0b1000000]
SPARSE_COEFFICIENTS = [0.5, 1.0, -0.7, 0.4, 0.3, 0.25, -0.6]


@pytest.mark.parametrize("index", ["FBII", "SII", "k-SII", "STII", "FSII", "BII", "Moebius",
                                   "kADD-SHAP", "CHII"])
def test_spex_recovers_a_sparse_low_order_game_exactly(index):
    m = 12
    v = _fourier_game(m, SPARSE_FREQUENCIES, SPARSE_COEFFICIENTS)
    exact = fc.interactions(v, index, 3)
    for backend in BACKENDS:
        est = fc.approximate(v, index=index, order=3, method="spex", budget=2000, seed=4,
                             backend=backend)
        assert est.n_evals <= 2000 < 1 << m
        for got, want in zip(est.values, exact.values):
            np.testing.assert_allclose(got, want, atol=1e-9)
        assert all(np.isnan(s).all() for s in est.stderr)


@pytest.mark.parametrize("index", ["FBII", "SII", "k-SII", "STII", "FSII", "BII", "Moebius",
                                   "Co-Moebius", "kADD-SHAP", "CHII"])
def test_fourier_conversions_are_the_tables(index):
    """The one Fourier -> Moebius and Fourier -> index pair (SPEX's and
    ProxySPEX's), on uint64 masks and on 0/1 rows alike, against the table
    the Fourier series makes: fc.moebius of it, fc.interactions of it (with
    several frequencies of one width, every width 0..5)."""
    from fastcredit.approximators.sparse import fourier_to_index, fourier_to_moebius
    m = 9
    g = np.random.default_rng(3)
    freqs = np.array([0, 0b1, 0b110, 0b101000000, 0b11100, 0b111010, 0b11111000, 0b100010001,
                      0b1000000], dtype=np.uint64)
    coefs = g.normal(size=len(freqs))
    v = _fourier_game(m, freqs.astype(np.int64), coefs)
    rows = ((freqs[:, None] >> np.arange(m, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)
    moebius = fc.moebius(v)
    want = fc.interactions(v, index, 3).values
    for frequencies in (freqs, rows):
        got = fourier_to_moebius(frequencies, coefs)
        table = np.zeros(1 << m)
        for players, a in got.items():
            table[sum(1 << i for i in players)] = a
        np.testing.assert_allclose(table, moebius, atol=1e-12)
        for a, b in zip(fourier_to_index(frequencies, coefs, index, m, 3), want):
            np.testing.assert_allclose(a, b, atol=1e-12)
    # values[0]: the given v(empty) where the index has no own empty value
    from fastcredit._index_weights import _CARDINAL
    own_empty = _CARDINAL[index][1]
    shifted = fourier_to_index(freqs, coefs, index, m, 3, empty=7.0)[0]
    np.testing.assert_allclose(shifted, want[0] if own_empty else 7.0, atol=1e-12)


def test_spex_degree_parameter_is_the_largest_detected_interaction():
    """degree_parameter = t, the errors the code corrects: the sparse game's
    interaction of 3 players is recovered exactly with t >= 3, missed with
    t = 2 (its whole coefficient, 0.25 Fourier = 2 FBII, left out); the
    queries are those of the code of t (BCH(31, 21) for t = 2: 10 parity
    bits, 3 * 11 * 2^6 = 2112 within 3000; BCH(63, 36) for t = 5: 27,
    3 * 28 * 2^5 = 2688)."""
    m = 12
    v = _fourier_game(m, SPARSE_FREQUENCIES, SPARSE_COEFFICIENTS)
    exact = np.concatenate(fc.interactions(v, "FBII", 3).values)
    kw = dict(index="FBII", order=3, method="spex", budget=3000, seed=4)
    for t, queries in ((2, 2112), (3, None), (5, 2688), (8, None)):
        est = fc.approximate(v, degree_parameter=t, **kw)
        error = np.abs(np.concatenate(est.values) - exact).max()
        if t == 2:
            assert error == pytest.approx(2.0, abs=1e-9)
        else:
            assert error < 1e-9
        assert queries is None or est.n_samples == queries
    default = fc.approximate(v, **kw)
    assert default.n_samples == 2688          # shapiq's default, t = 5


@pytest.mark.parametrize("degree, decoder", [(3, "hard"), (3, "soft"), (5, "hard")])
def test_spex_options_are_shapiqs(monkeypatch, degree, decoder):
    """fc.approximate(method="spex", degree_parameter=, decoder_type=) is
    shapiq 1.4.1's SPEX(degree_parameter=, decoder_type=) given its
    subsampling (numpy's global generator, seeded alike): the same FBII to
    rounding, on a noisy game where soft and hard decoding differ."""
    shapiq = pytest.importorskip("shapiq")
    pytest.importorskip("galois")
    from fastcredit.approximators import sparse
    m = 12
    v = _fourier_game(m, SPARSE_FREQUENCIES, SPARSE_COEFFICIENTS, noise=1.0, seed=1)
    monkeypatch.setattr(sparse, "stream_subsampling", lambda seed, game, n, b: np.stack(
        [np.random.randint(2, size=(n, b)) for _ in range(sparse.N_GROUPS)]))
    weights = 1 << np.arange(m)
    differs = False
    for s in range(4):
        np.random.seed(s)
        ours = fc.approximate(v, index="FBII", order=2, method="spex", budget=3000,
                              degree_parameter=degree, decoder_type=decoder)
        np.random.seed(s)
        other = fc.approximate(v, index="FBII", order=2, method="spex", budget=3000,
                               degree_parameter=degree,
                               decoder_type="soft" if decoder == "hard" else "hard")
        differs |= not np.array_equal(ours.values[2], other.values[2])
        np.random.seed(s)
        theirs = shapiq.SPEX(n=m, max_order=2, degree_parameter=degree,
                             decoder_type=decoder).approximate(
            3000, lambda rows: v[rows.astype(np.int64) @ weights])
        np.testing.assert_allclose(ours.values[1], theirs.get_n_order_values(1),
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ours.values[2],
                                   theirs.get_n_order_values(2)[np.triu_indices(m, 1)],
                                   rtol=1e-9, atol=1e-12)
    assert differs


def test_spex_on_every_kind_of_game():
    """A table, a vectorised callable (masks and bool rows), an @njit game and
    a batch of tables give the same estimate (the batch's game g keyed by its
    position, the others as game 0)."""
    m = 12
    v = _fourier_game(m, SPARSE_FREQUENCIES, SPARSE_COEFFICIENTS, noise=0.05, seed=1)
    kw = dict(index="FBII", order=2, method="spex", budget=3000, seed=9)
    table = fc.approximate(v, **kw)
    masks = fc.approximate(fc.games.deterministic(lambda s: v[s.astype(np.int64)]), m, **kw)
    rows = fc.approximate(fc.games.deterministic(lambda b: v[b @ (1 << np.arange(m))]), m,
                          coalitions="bool", **kw)
    table_nb = v.copy()
    jitted = fc.approximate(njit(lambda s: table_nb[s]), m, **kw)
    batch = fc.approximate(np.stack([v, v[::-1]]), threads=2, **kw)
    for est in (masks, rows, jitted):
        for a, b in zip(est.values, table.values):
            np.testing.assert_array_equal(a, b)
        assert est.n_evals == table.n_evals
    for a, b in zip(batch.values, table.values):
        np.testing.assert_array_equal(a[0], b)
    alone = fc.approximate(v[::-1], **kw)
    assert not np.array_equal(batch.values[1][1], alone.values[1])   # game 1's own stream
    assert batch.n_evals.shape == (2,) and batch.n_evals[0] == table.n_evals


def test_spex_backends_are_bit_identical():
    m = 14
    v = _fourier_game(m, SPARSE_FREQUENCIES, SPARSE_COEFFICIENTS, noise=0.2, seed=2)
    runs = [fc.approximate(v, index="FBII", order=2, method="spex", budget=5000, seed=s,
                           backend=b) for s in range(3) for b in BACKENDS]
    for c, numba in zip(runs[::len(BACKENDS)], runs[len(BACKENDS) - 1::len(BACKENDS)]):
        assert np.concatenate(c.values).tobytes() == np.concatenate(numba.values).tobytes()


def test_spex_detect_kernels_are_bit_identical_on_any_bins():
    """The detection kernel alone, C against Numba, on random transforms (every
    bin to check; some zero bins, some sign patterns no code word is near),
    soft and hard, at t = 2 and 5."""
    g = np.random.default_rng(11)
    for n, t, b in [(9, 2, 3), (16, 5, 4), (70, 5, 3)]:
        code = BCHCode(n, t)
        delays = np.ascontiguousarray(code.delay_matrix(), dtype=np.uint8)
        sub = (g.random((3, n, b)) < 0.5).astype(np.uint8)
        u = g.normal(size=(3, code.parity_length + 1, 1 << b))
        u[:, :, 0] = 0.0
        u[1] *= np.sign(u[1, :1])            # positive ratios: the all-zero word
        for soft in (True, False):
            out = []
            for impl in (capprox, nbapprox):
                arrays = (np.ones((3, 1 << b), np.uint8), np.empty((3, 1 << b), np.uint8),
                          np.empty((3, 1 << b, n), np.uint8), np.empty((3, 1 << b)))
                work = np.empty((t * (t + 1) // 2 + 3) * (n + code.parity_length), np.uint8)
                impl.spex_detect(u, sub, delays, code.order, code.t, code.gf_exp, code.gf_log,
                                 soft, 1e-9, 0.9, *arrays, work)
                out.append(arrays)
            (check_c, status_c, k_c, rho_c), (check_nb, status_nb, k_nb, rho_nb) = out
            assert check_c.tobytes() == check_nb.tobytes()
            assert status_c.tobytes() == status_nb.tobytes()
            # k and rho are written for the bins examined (status 1 or 2)
            seen = status_c > 0
            assert k_c[seen].tobytes() == k_nb[seen].tobytes()
            assert rho_c[seen].tobytes() == rho_nb[seen].tobytes()
            assert (status_c[:, 0] == 0).all() and (status_c == 1).any()


def test_spex_budget_accounting():
    """Budget = evaluations: a deterministic game is evaluated once per
    distinct query (3 (parity bits + 1) 2^b queries, the largest b that fits);
    a stochastic @njit game on every query, afresh; a budget covering every
    coalition evaluates each once and is exact."""
    m = 12
    v = _fourier_game(m, SPARSE_FREQUENCIES, SPARSE_COEFFICIENTS, noise=0.1)
    seen = []

    def game(masks):
        seen.append(masks.copy())
        return v[masks.astype(np.int64)]
    est = fc.approximate(fc.games.deterministic(game), m, index="FBII", order=2,
                         method="spex", budget=3000)
    calls = np.concatenate(seen)
    # BCH(63, 36) shortened to 12: 27 parity bits; 3 * 28 * 2^5 = 2688 <= 3000
    assert est.n_samples == 2688 and len(calls) == est.n_evals == len(np.unique(calls)) < 2688

    @njit
    def noisy(mask, key):
        return float(mask & 7) + (key >> np.uint64(11)) * 2.0**-53
    sto = fc.approximate(noisy, m, index="FBII", order=2, method="spex", budget=3000)
    assert sto.n_evals == sto.n_samples == 2688
    again = fc.approximate(noisy, m, index="FBII", order=2, method="spex", budget=3000)
    np.testing.assert_array_equal(sto.values[1], again.values[1])     # keyed draws
    full = fc.approximate(v, index="FBII", order=2, method="spex", budget=1 << m)
    assert full.n_evals == 1 << m and all((s == 0).all() for s in full.stderr)
    for got, want in zip(full.values, fc.interactions(v, "FBII", 2).values):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kwargs, name", [
    ({"budget": 100}, "budget"), ({"pairing": True}, "pairing"),
    ({"index": "SGV"}, "index"), ({"index": "SV", "order": 2}, "order"),
    ({"order": 13}, "order"), ({"anchors": 3}, "anchors"),
    ({"degree_parameter": 1}, "^degree_parameter must be"),
    ({"degree_parameter": 17}, "^degree_parameter must be"),
    ({"decoder_type": "proxyspex"}, "^decoder_type must be one of"),
    ({"method": "svarm", "index": "SV", "order": 1, "degree_parameter": 5},
     "degree_parameter and decoder_type apply to method='spex' only"),
    ({"method": "proxyspex", "decoder_type": "soft"},
     "degree_parameter and decoder_type apply to method='spex' only")])
def test_spex_refusals(kwargs, name):
    args = {"index": "FBII", "order": 2, "method": "spex", "budget": 3000} | kwargs
    with pytest.raises(ValueError, match=name):
        fc.approximate(_fourier_game(12, [1], [1.0]), **args)


def test_spex_detect_refuses_bad_arguments():
    code = BCHCode(9, 2)
    delays = np.ascontiguousarray(code.delay_matrix(), dtype=np.uint8)
    sub = np.zeros((3, 9, 3), np.uint8)
    u = np.ones((3, code.parity_length + 1, 8))
    arrays = [np.ones((3, 8), np.uint8), np.empty((3, 8), np.uint8),
              np.empty((3, 8, 9), np.uint8), np.empty((3, 8))]
    work = np.empty(6 * (9 + code.parity_length), np.uint8)
    args = (code.order, code.t, code.gf_exp, code.gf_log, True, 1e-9, 0.9)
    capprox.spex_detect(u, sub, delays, *args, *arrays, work)
    for bad, name in ((dict(u=np.ones((3, code.parity_length + 1, 4))), "subsampling"),
                      (dict(u=u.astype(np.float32)), "u"),
                      (dict(delays=delays[1:]), "delays"), (dict(work=work[:10]), "work"),
                      (dict(k=arrays[2][:, :, :3]), "k"), (dict(rho=arrays[3][:2]), "rho")):
        call = dict(u=u, subsampling=sub, delays=delays, work=work, to_check=arrays[0],
                    status=arrays[1], k=arrays[2], rho=arrays[3]) | bad
        with pytest.raises(ValueError, match=name):
            capprox.spex_detect(call["u"], call["subsampling"], call["delays"], *args,
                                call["to_check"], call["status"], call["k"], call["rho"],
                                call["work"])
    with pytest.raises(ValueError, match="fc_approx_spex_detect"):
        capprox.spex_detect(u, sub, delays, code.order, 0, code.gf_exp, code.gf_log, True,
                            1e-9, 0.9, *arrays, work)
