"""fastcredit.audit.null: the additive correlated-error null (Table 7)
against a from-the-definition oracle (tests/reference.py builds each
world's tables whole), C against Numba bit for bit for any thread split,
and the null's interval covering the observed statistic when the null is
true, at the stated rate."""
import numpy as np
import pytest
import scipy.stats

import fastcredit as fc
import reference as ref
from fastcredit.audit import null

from conftest import BACKENDS


def landscape(seed, n=40, m=3, structured=False):
    """Audit tables with exact zeros; train = audit + a correlated error,
    scaled to the request (structured: the error also grows with the
    request's interaction strength, which the null cannot produce)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 4, size=(n, 1 << m)).astype(float)
    a[:, 0] = 0
    a[1] = 0.0          # a constant audit table: excluded
    err = rng.normal(size=(n, 1 << m)) + rng.normal(size=(n, 1))   # correlated across S
    scale = a.std(axis=1, keepdims=True)
    if structured:
        strength = np.abs(fc.pair_interactions(a)).sum(axis=(1, 2))[:, None] / 2
        err = err * (0.1 + strength / strength.max())
    return a + 0.4 * scale * err, a


def oracle_statistics(train, audit, worlds, seed, atol=1e-9):
    eh, ec, ph, pc, cos, strength = ref.correlated_error_null(train, audit, worlds, seed, atol)
    ok = ~np.isnan(cos[0])
    rows = []
    for w in range(worlds):
        rows.append([eh[w].sum() / ec.sum(), ph[w].sum() / pc[w].sum(), np.median(cos[w, ok]),
                     scipy.stats.spearmanr(strength, 1 - eh[w] / ec)[0],
                     scipy.stats.spearmanr(strength[ok], np.round(1 - cos[w, ok], 12))[0]])
    return np.array(rows)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m", [2, 3, 4])
def test_worlds_against_the_definition(backend, m):
    train, audit = landscape(m, m=m)
    res = null.correlated_error_null(train, audit, worlds=25, seed=7, backend=backend)
    want = oracle_statistics(train, audit, 25, 7)
    np.testing.assert_allclose(res.worlds, want, rtol=1e-12, atol=1e-12)
    assert res.n_requests == 39 and res.n_excluded == 1
    for j, name in enumerate(null.NULL_STATISTICS):
        s = res.statistics[name]
        defined = want[:, j][~np.isnan(want[:, j])]
        if defined.size:
            assert s.null_median == pytest.approx(np.median(defined), abs=1e-12)
        else:
            assert np.isnan(s.null_median)
        assert s.gap == s.observed - s.null_median or np.isnan(s.gap)


def test_observed_statistics_are_the_study_functions():
    train, audit = landscape(3, n=60, m=4)
    res = null.correlated_error_null(train, audit, worlds=20)
    keep = audit.std(axis=1) > 0
    t, a = train[keep], audit[keep]
    st = res.statistics
    assert st["edge_agreement"].observed == pytest.approx(fc.edge_agreement(t, a).rate,
                                                          abs=1e-15)
    assert st["pair_agreement"].observed == pytest.approx(fc.pair_agreement(t, a).rate,
                                                          abs=1e-15)
    cos = fc.alignment(fc.shapley(t), fc.shapley(a)).cosine
    assert st["median_cosine"].observed == pytest.approx(np.nanmedian(cos), abs=1e-12)


def test_same_bits_on_both_backends_and_any_threads():
    train, audit = landscape(11, n=300, m=5)
    runs = [null.correlated_error_null(train, audit, worlds=200, seed=3, threads=t, backend=b)
            for b in BACKENDS for t in (1, 2)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.worlds, runs[0].worlds)


def test_structured_error_is_flagged_by_the_strength_correlation():
    train, audit = landscape(5, n=400, m=4, structured=True)
    res = null.correlated_error_null(train, audit, worlds=300)
    s = res.statistics["strength_vs_edge_disagreement"]
    assert s.observed > s.null_high and s.pvalue < 0.01


def test_interval_covers_the_observed_statistic_when_the_null_holds():
    """Residuals exchangeable across requests (the null is true): the 90 %
    null interval of edge agreement covers the observed value in about 90 %
    of 200 landscapes (measured: 0.95 and 0.93 on seeds 1000+ and 5000+, a
    little conservative: donors exclude the request itself). Asserting at least
    0.80: a binomial(200, 0.9) count falls below 160 with probability below
    1e-5, the false-failure rate of this test."""
    covered = 0
    for seed in range(200):
        train, audit = landscape(1000 + seed, n=120, m=3)
        s = null.correlated_error_null(train, audit, worlds=199, level=0.9, seed=seed,
                                       threads=1).statistics["edge_agreement"]
        covered += s.null_low <= s.observed <= s.null_high
    assert covered >= 160, covered


@pytest.mark.parametrize("call,match", [
    (lambda: null.correlated_error_null(np.zeros((5, 8)), np.zeros((5, 8))), "at least 3"),
    (lambda: null.correlated_error_null(*landscape(0), worlds=0), "worlds"),
    (lambda: null.correlated_error_null(np.full((5, 8), np.nan), np.ones((5, 8))),
     "train must be finite"),
    (lambda: null.correlated_error_null(np.zeros((5, 8)), np.zeros((5, 4))), "same shape"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
