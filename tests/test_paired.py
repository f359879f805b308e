"""fastcredit.audit.paired: McNemar, paired-proportion intervals, the paired
Spearman-difference bootstrap, temporal self-consistency and partial
correlation, each against scipy, a published example or the definition.

statsmodels is not installed in the project's environment, so McNemar is
checked against scipy's binomial test and chi-square distribution (the
computations statsmodels' mcnemar makes) and against the published values
of Fagerland, Lydersen and Laake (2017), Statistical Analysis of
Contingency Tables, chapter 8, on the data of Cavo et al. (2012), table
[[59, 6], [16, 80]] (the R package contingencytables prints the same)."""
import math

import numpy as np
import pytest
import scipy.optimize
import scipy.stats

import fastcredit as fc
import reference as ref

from conftest import BACKENDS

CAVO = [[59, 6], [16, 80]]
TABLES = [CAVO, [[1, 1], [7, 12]], [[0, 0], [0, 5]], [[3, 0], [0, 2]], [[0, 7], [0, 0]],
          [[10, 3], [3, 10]], [[794, 150], [86, 570]], [[0, 0], [9, 0]], [[2, 1], [0, 0]]]


# --- McNemar -----------------------------------------------------------------------------

@pytest.mark.parametrize("table", TABLES)
def test_mcnemar_exact_is_scipys_binomial_test(table):
    b, c = table[0][1], table[1][0]
    got = fc.mcnemar(table)
    want = scipy.stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
    assert got.pvalue == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert got.statistic == min(b, c) and (got.n10, got.n01) == (b, c)


@pytest.mark.parametrize("correction", [True, False])
@pytest.mark.parametrize("table", TABLES)
def test_mcnemar_asymptotic_from_the_definition(table, correction):
    b, c = table[0][1], table[1][0]
    got = fc.mcnemar(table, exact=False, correction=correction)
    if b + c == 0:
        assert (got.statistic, got.pvalue) == (0.0, 1.0)
        return
    stat = max(abs(b - c) - correction, 0) ** 2 / (b + c)
    assert got.statistic == pytest.approx(stat, rel=1e-15)
    assert got.pvalue == pytest.approx(scipy.stats.chi2.sf(stat, 1), rel=1e-12)
    if not correction:   # the chi-square with 1 df is a squared normal
        z = abs(b - c) / math.sqrt(b + c)
        assert got.pvalue == pytest.approx(2 * scipy.stats.norm.sf(z), rel=1e-12)


def test_mcnemar_published_values():
    assert round(fc.mcnemar(CAVO).pvalue, 6) == 0.052479
    asym = fc.mcnemar(CAVO, exact=False, correction=False)
    assert round(asym.pvalue, 6) == 0.033006 and round(-math.sqrt(asym.statistic), 3) == -2.132


# --- paired-proportion intervals ----------------------------------------------------------

def newcombe_paired(t, level):
    """Newcombe's method 10, written out from the 1998 paper."""
    (a, b), (c, d) = t
    n = a + b + c + d
    z = scipy.stats.norm.ppf((1 + level) / 2)

    def wilson(k):
        p = k / n
        centre = (2 * k + z * z) / (2 * (n + z * z))
        half = z * math.sqrt(z * z + 4 * k * (1 - p)) / (2 * (n + z * z))
        return (0.0 if k == 0 else centre - half), (1.0 if k == n else centre + half)

    p1, p2 = (a + b) / n, (a + c) / n
    (l1, u1), (l2, u2) = wilson(a + b), wilson(a + c)
    big_a = a * d - b * c
    corr = big_a - n / 2 if big_a > n / 2 else (big_a if big_a < 0 else 0)
    prod = (a + b) * (c + d) * (a + c) * (b + d)
    phi = corr / math.sqrt(prod) if prod else 0.0
    dlt = p1 - p2
    lo = dlt - math.sqrt(max(0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    hi = dlt + math.sqrt(max(0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return max(-1, lo), min(1, hi)


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("table", TABLES)
def test_newcombe_paired_from_the_definition(table, level):
    got = fc.paired_proportion_interval(table, level=level, method="newcombe")
    lo, hi = newcombe_paired(table, level)
    assert got.low == pytest.approx(lo, abs=1e-12) and got.high == pytest.approx(hi, abs=1e-12)


def tango_statistic_numerically(t, delta):
    """Tango's score statistic with the restricted maximum-likelihood p01
    found by a numerical maximisation of the multinomial likelihood (not
    the closed form the library solves)."""
    (n11, b), (c, n00) = t
    n = n11 + b + c + n00
    lo, hi = max(0.0, -delta), min(1.0, 1.0 - delta) / 1.0

    def negloglik(q):
        p10, p01 = q + delta, q
        rest = 1 - p10 - p01
        terms = [(b, p10), (c, p01), (n11 + n00, rest)]
        return -sum(k * math.log(max(p, 1e-300)) for k, p in terms if k)

    hi = min(hi, (1 - delta) / 2)
    q = scipy.optimize.minimize_scalar(negloglik, bounds=(lo, hi), method="bounded",
                                       options={"xatol": 1e-13}).x
    return (b - c - n * delta) / math.sqrt(n * (2 * q + delta * (1 - delta)))


@pytest.mark.parametrize("table", [CAVO, [[1, 1], [7, 12]], [[10, 3], [3, 10]],
                                   [[794, 150], [86, 570]]])
def test_tango_limits_solve_the_score_equation(table):
    got = fc.paired_proportion_interval(table, level=0.95)
    z = scipy.stats.norm.ppf(0.975)
    assert tango_statistic_numerically(table, got.low) == pytest.approx(z, abs=1e-6)
    assert tango_statistic_numerically(table, got.high) == pytest.approx(-z, abs=1e-6)
    assert got.low < got.estimate < got.high


def test_paired_intervals_published_values():
    t = fc.paired_proportion_interval(CAVO)
    assert (round(t.estimate, 4), round(t.low, 4), round(t.high, 4)) == (-0.0621, -0.1240, -0.0054)
    n = fc.paired_proportion_interval(CAVO, method="newcombe")
    assert (round(n.low, 4), round(n.high, 4)) == (-0.1186, -0.0046)


def test_paired_interval_is_narrower_than_the_independent_one():
    """Positively correlated outcomes: the pairing narrows the interval (the
    issue's [+0.003, +0.048] independent against [+0.015, +0.036] paired)."""
    t = [[794, 150], [86, 570]]
    lo, hi = fc.newcombe_interval(944, 1600, 880, 1600)
    for method in ("tango", "newcombe"):
        d = fc.paired_proportion_interval(t, method=method)
        assert lo < d.low and d.high < hi


def test_paired_comparison_composes_the_pieces():
    rng = np.random.default_rng(3)
    first = rng.random(300) < 0.6
    second = np.where(rng.random(300) < 0.8, first, rng.random(300) < 0.5)
    c = fc.paired_comparison(first, second, method="newcombe")
    t = fc.paired_table(first, second)
    np.testing.assert_array_equal(c.table, t)
    assert t.sum() == 300 and t[0, 0] == np.count_nonzero(first & second)
    assert c.first_rate == first.mean() and c.second_rate == second.mean()
    assert c.difference == fc.paired_proportion_interval(t, method="newcombe")
    assert c.exact == fc.mcnemar(t) and c.asymptotic == fc.mcnemar(t, exact=False)


@pytest.mark.parametrize("call,match", [
    (lambda: fc.mcnemar([[1, 2, 3]]), "table must be a 2 x 2"),
    (lambda: fc.mcnemar([[1, -2], [3, 4]]), "non-negative whole counts"),
    (lambda: fc.mcnemar([[0, 0], [0, 0]]), "at least one"),
    (lambda: fc.paired_proportion_interval(CAVO, method="wald"), "method"),
    (lambda: fc.paired_proportion_interval(CAVO, level=1.0), "level"),
    (lambda: fc.paired_table([0, 1, 2], [0, 1, 1]), "first must be a 1-D array of 0/1"),
    (lambda: fc.paired_table([0, 1], [0, 1, 1]), "same length"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- the Spearman-difference bootstrap -----------------------------------------------------

def spearman_data(seed, n, ties=False):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    x, y = z + rng.normal(size=n), z + 2 * rng.normal(size=n)
    if ties:
        x, y, z = np.round(x), np.round(y), np.round(z * 2)
    return x, y, z


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n,ties", [(2, False), (7, True), (40, False), (301, True)])
def test_spearman_difference_replicates_against_the_definition(backend, n, ties):
    x, y, z = spearman_data(n, n, ties)
    ci = fc.spearman_difference(x, y, z, resamples=60, seed=11, backend=backend)
    want = ref.bootstrap_spearman_diff(x, y, z, 60, 11)
    np.testing.assert_allclose(ci.replicates, want, rtol=1e-12, atol=1e-12)
    est = scipy.stats.spearmanr(x, z)[0] - scipy.stats.spearmanr(y, z)[0] if n > 2 else \
        ci.estimate
    assert ci.estimate == pytest.approx(est, abs=1e-12)
    assert ci.n == n


def test_spearman_difference_same_bits_any_threads_and_backend():
    x, y, z = spearman_data(5, 500, ties=True)
    runs = [fc.spearman_difference(x, y, z, resamples=700, seed=3, threads=t, backend=b)
            for b in BACKENDS for t in (1, 2)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.replicates, runs[0].replicates)


def test_spearman_difference_leaves_nan_out_and_covers():
    x, y, z = spearman_data(9, 200)
    x[3] = np.nan
    ci = fc.spearman_difference(x, y, z, resamples=2000)
    assert ci.n == 199 and ci.low < ci.estimate < ci.high
    with pytest.raises(ValueError, match="at least 2 items"):
        fc.spearman_difference([1.0, np.nan], [1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="same length"):
        fc.spearman_difference([1.0, 2.0], [1.0, 2.0], [1.0, 2.0, 3.0])


# --- temporal consistency and partial correlation --------------------------------------------

def test_temporal_consistency_is_scipys_spearman():
    rng = np.random.default_rng(4)
    base = rng.normal(size=60)
    s = np.array([np.round(base + 0.5 * rng.normal(size=60), 1) for _ in range(5)])
    s[2, 7] = np.nan
    tc = fc.temporal_consistency(s)
    keep = ~np.isnan(s).any(axis=0)
    want = scipy.stats.spearmanr(s[:, keep], axis=1)[0]
    np.testing.assert_allclose(tc.matrix, want, rtol=1e-12, atol=1e-12)
    iu = np.triu_indices(5, 1)
    assert tc.median == pytest.approx(np.median(want[iu]), abs=1e-12)
    assert tc.mean == pytest.approx(np.mean(want[iu]), abs=1e-12)
    assert tc.adjacent == pytest.approx(np.mean([want[t, t + 1] for t in range(4)]), abs=1e-12)
    assert tc.n == 59


def partial_from_precision(data):
    """-P_xy / sqrt(P_xx P_yy) of the inverse correlation matrix."""
    p = np.linalg.inv(np.corrcoef(data, rowvar=False))
    return -p[0, 1] / math.sqrt(p[0, 0] * p[1, 1])


@pytest.mark.parametrize("method", ["pearson", "spearman"])
@pytest.mark.parametrize("k", [1, 3])
def test_partial_correlation_from_the_definition(method, k):
    rng = np.random.default_rng(k)
    z = rng.normal(size=(80, k))
    x = z.sum(axis=1) + rng.normal(size=80)
    y = z[:, 0] - 0.5 * x + rng.normal(size=80)
    got = fc.partial_correlation(x, y, z if k > 1 else z[:, 0], method=method)
    data = np.column_stack([x, y, z])
    if method == "spearman":
        data = scipy.stats.rankdata(data, axis=0)
    want = partial_from_precision(data)
    assert got.r == pytest.approx(want, abs=1e-12)
    if k == 1:
        r = np.corrcoef(data, rowvar=False)
        formula = (r[0, 1] - r[0, 2] * r[1, 2]) / math.sqrt((1 - r[0, 2] ** 2) * (1 - r[1, 2] ** 2))
        assert got.r == pytest.approx(formula, abs=1e-12)
    df = 80 - 2 - k
    t = want * math.sqrt(df / (1 - want ** 2))
    assert got.pvalue == pytest.approx(2 * scipy.stats.t.sf(abs(t), df), rel=1e-9)
    assert (got.n, got.k, got.method) == (80, k, method)


def test_partial_correlation_without_covariate_signal_is_pearson():
    """Covariates orthogonal to x and y (centred) leave Pearson's r as is."""
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=50), rng.normal(size=50)
    x, y = x - x.mean(), y - y.mean()
    basis = np.linalg.qr(np.column_stack([np.ones(50), x, y, rng.normal(size=50)]))[0]
    got = fc.partial_correlation(x, y, basis[:, 3])
    assert got.r == pytest.approx(scipy.stats.pearsonr(x, y)[0], abs=1e-12)
    pearson = scipy.stats.pearsonr(x, y)
    # with one covariate the test has one degree of freedom less than Pearson's
    assert got.pvalue > pearson.pvalue


def test_bad_tables_and_covariates_are_refused_by_name():
    """What the fuzz harness found (issue 26's standing probes): a ragged
    table or pair of outcome lists raised NumPy's 'inhomogeneous shape'
    naming nothing; counts past 2**53 overflowed the binomial tail's C long;
    an infinite covariate made the regression's SVD fail (LinAlgError)."""
    with pytest.raises(ValueError, match="^table must be a rectangular array"):
        fc.mcnemar([[1, 2], [3]])
    with pytest.raises(ValueError, match="^first must be a rectangular array"):
        fc.paired_table([[1, 0], [1]], [1, 0])
    with pytest.raises(ValueError, match=r"table's counts must add up to at most 2\*\*53"):
        fc.mcnemar(np.array([[1, 2**63], [2**63, 1]], dtype=np.uint64))
    x = np.arange(10.0)
    with pytest.raises(ValueError, match="^covariates must be finite for method='pearson'"):
        fc.partial_correlation(x, x[::-1] ** 2, np.r_[np.inf, np.arange(9.0)])
    # ranks take an infinite value: Spearman is defined
    assert np.isfinite(fc.partial_correlation(x, x[::-1] ** 2, np.r_[np.inf, np.arange(9.0)],
                                              method="spearman").r)


def test_evaluator_fidelity_names_its_own_arguments():
    """The study's table checks named train and audit; evaluator_fidelity's
    arguments are v and reference (its errors were rewritten by a string
    replacement, which missed the dtype errors)."""
    with pytest.raises(TypeError, match="^v must be a real"):
        fc.evaluator_fidelity(np.zeros(8, dtype=complex), np.zeros(8))
    with pytest.raises(TypeError, match="^reference must be a real"):
        fc.evaluator_fidelity(np.zeros(8), np.zeros(8, dtype=np.float16))
    with pytest.raises(ValueError, match="^v and reference must have the same shape"):
        fc.evaluator_fidelity(np.zeros(8), np.zeros(16))
