"""Both backends of every audit kernel against tests/reference.py, scipy and
published values."""
import math

import numpy as np
import pytest
import scipy.stats as st

import fastcredit as fc
import reference as ref


def ragged(rng, n_groups, lo, hi):
    lengths = rng.integers(lo, hi + 1, size=n_groups)
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


# --- bootstrap ---------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 7, 10])
def test_bootstrap_median_replicates_match_reference(n, backend, rng):
    x = rng.integers(0, 5, size=n).astype(float)   # ties on purpose
    ci = fc.bootstrap_median(x, resamples=60, seed=9, backend=backend, threads=1)
    want = ref.bootstrap_median(x, None, 60, 9)
    assert np.array_equal(ci.replicates, want)
    assert ci.estimate == np.median(x) and ci.n == n
    assert (ci.low, ci.high) == tuple(np.quantile(want, [0.025, 0.975]))


@pytest.mark.parametrize("n", [3, 8])
def test_paired_bootstrap_replicates_match_reference(n, backend, rng):
    a, b = rng.normal(size=n), rng.normal(size=n)
    ci = fc.paired_bootstrap(a, b, resamples=50, seed=2**64 - 3, level=0.8, backend=backend)
    want = ref.bootstrap_median(a, b, 50, 2**64 - 3)
    np.testing.assert_array_equal(ci.replicates, want)
    assert ci.estimate == np.median(a) - np.median(b)
    assert (ci.low, ci.high) == pytest.approx(np.quantile(want, [0.1, 0.9]), rel=1e-14)


def test_bootstrap_same_for_any_thread_count(backend, rng):
    a, b = rng.normal(size=301), rng.normal(size=301)
    runs = [fc.paired_bootstrap(a, b, resamples=999, seed=5, backend=backend, threads=t).replicates
            for t in (1, 2, 3)]
    for r in runs[1:]:
        assert np.array_equal(r, runs[0])
    other = fc.paired_bootstrap(a, b, resamples=999, seed=6, threads=1,
                                backend=backend).replicates
    assert not np.array_equal(other, runs[0])


def test_bootstrap_drops_nan_pairs(backend, rng):
    a, b = rng.normal(size=20), rng.normal(size=20)
    a[3], b[7] = np.nan, np.nan
    keep = np.ones(20, bool)
    keep[[3, 7]] = False
    ci = fc.paired_bootstrap(a, b, resamples=40, seed=1, backend=backend)
    assert ci.n == 18
    assert np.array_equal(ci.replicates, ref.bootstrap_median(a[keep], b[keep], 40, 1))


def test_percentile_ci_agrees_with_scipy_bootstrap(rng):
    x = rng.normal(size=401)
    ours = fc.bootstrap_median(x, resamples=10_000, seed=3)
    theirs = st.bootstrap((x,), np.median, method="percentile", n_resamples=10_000,
                          random_state=np.random.default_rng(4)).confidence_interval
    width = theirs.high - theirs.low
    # two independent 10,000-resample Monte-Carlo estimates of the same quantiles
    assert abs(ours.low - theirs.low) < 0.1 * width
    assert abs(ours.high - theirs.high) < 0.1 * width


def test_paired_bootstrap_separates_rules(rng):
    reference = rng.normal(size=(400, 5))
    good = fc.alignment(reference + 0.3 * rng.normal(size=reference.shape), reference)
    bad = fc.alignment(reference + 3.0 * rng.normal(size=reference.shape), reference)
    diff = fc.paired_bootstrap(good.cosine, bad.cosine, seed=0)
    assert diff.low > 0 and diff.estimate == good.median_cosine - bad.median_cosine
    same = fc.paired_bootstrap(good.cosine, good.cosine, resamples=100)
    assert np.all(same.replicates == 0) and same.pvalue() == 1
    assert diff.pvalue() == 0 and diff.pvalue(null=diff.high) <= 0.05 + 1e-12
    reps = diff.replicates
    assert diff.pvalue(np.median(reps)) == pytest.approx(1, abs=2e-4)
    assert diff.pvalue(diff.estimate) == min(1, 2 * min(np.mean(reps <= diff.estimate),
                                                      np.mean(reps >= diff.estimate)))


# --- alignment ---------------------------------------------------------------

def test_alignment_matches_reference(backend, rng):
    c = rng.integers(-2, 3, size=(40, 5)).astype(float)
    r = rng.integers(-2, 3, size=(40, 5)).astype(float)
    c[0] = 1.0          # constant credit
    r[1] = 2.0          # constant reference
    c[2] = r[2] * 3 + 1  # same direction
    al = fc.alignment(c, r, backend=backend)
    for name in ("cosine", "sign", "sign_nonzero", "spearman", "top"):
        want = np.array([ref.alignment(ci, ri)[name] for ci, ri in zip(c, r)])
        np.testing.assert_allclose(getattr(al, name), want, rtol=1e-12, atol=1e-15,
                                   err_msg=name)
    assert al.cosine[0] == 0 and math.isnan(al.cosine[1]) and al.cosine[2] == pytest.approx(1)
    assert al.n_defined == 39
    assert al.median_cosine == np.median(np.delete(al.cosine, 1))
    assert al.top_rate == np.mean(al.top)


def near_ties(rng, shape, atol):
    """Values on a grid of step 1 (many exact ties and zeros once centred),
    each moved by less than atol / 4, and rows that are constant or zero up to
    such moves."""
    x = rng.integers(-2, 3, size=shape) + rng.uniform(-atol / 4, atol / 4, size=shape)
    x[0] = 0.3 + rng.uniform(-atol / 4, atol / 4, size=shape[-1])
    x[1] = rng.uniform(-atol / 4, atol / 4, size=shape[-1])
    return x


def test_alignment_with_atol_matches_reference(backend, rng):
    atol = 1e-9
    c, r = near_ties(rng, (60, 6), atol), near_ties(rng, (60, 6), atol)[::-1]
    for tol in (0.0, atol):
        al = fc.alignment(c, r, atol=tol, backend=backend)
        for name in ("cosine", "sign", "sign_nonzero", "spearman", "top"):
            want = np.array([ref.alignment(ci, ri, tol)[name] for ci, ri in zip(c, r)])
            np.testing.assert_allclose(getattr(al, name), want, rtol=1e-12, atol=1e-15,
                                       err_msg=f"{name}, atol={tol}")
    exact, tolerant = fc.alignment(c, r), fc.alignment(c, r, atol=atol)
    # the near-constant rows: a direction only rounding gave them
    assert tolerant.cosine[0] == 0 and np.isnan(tolerant.cosine[-2])
    assert exact.cosine[0] != 0 and not np.isnan(exact.cosine[-2])
    assert tolerant.n_defined == exact.n_defined - 2
    assert np.mean(tolerant.top) > np.mean(exact.top)     # ties no longer broken by noise


def test_alignment_atol_ties_rounding_differences():
    credit, reference = [0.3, 0.1 + 0.2, 0.0], [1.0, 1.0, 0.0]
    exact = fc.alignment(credit, reference)
    assert not exact.top and exact.spearman < 1
    tolerant = fc.alignment(credit, reference, atol=1e-12)
    assert tolerant.top and tolerant.spearman == 1 and tolerant.sign == 1
    # tied values chain: 2, 2.6 and 3.2 are one class at atol 0.7, not at 0.5
    x = [2.0, 2.6, 3.2, 9.0]
    assert fc.alignment(x, [0.0, 0.0, 0.0, 1.0], atol=0.7, center=False).spearman == 1
    assert fc.alignment(x, [0.0, 0.0, 0.0, 1.0], atol=0.5, center=False).spearman < 1


def test_alignment_atol_is_validated():
    for bad, kind in ((-1e-9, ValueError), (float("nan"), ValueError),
                      (float("inf"), ValueError), ("0", TypeError), (True, TypeError)):
        with pytest.raises(kind, match="atol"):
            fc.alignment([1.0, 2.0], [2.0, 1.0], atol=bad)


def test_alignment_keeps_lead_shape_and_float32(rng):
    c = rng.normal(size=(2, 3, 4))
    r = rng.normal(size=(2, 3, 4))
    al = fc.alignment(c.astype(np.float32), r)
    assert al.cosine.shape == (2, 3)
    np.testing.assert_allclose(al.cosine, fc.alignment(c.astype(np.float32).astype(float),
                                                       r).cosine)
    unc = fc.alignment(c, r, center=False)
    np.testing.assert_allclose(unc.cosine, (c * r).sum(-1) / np.linalg.norm(c, axis=-1)
                               / np.linalg.norm(r, axis=-1))


def test_spearman_matches_scipy_with_ties(backend, rng):
    off = ragged(rng, 300, 2, 150)     # both the counting and the heap-sort ranks
    x = rng.integers(0, 6, size=off[-1]).astype(float)
    y = rng.normal(size=off[-1]).round(1)
    rho = fc.within_spearman(x, y, off, min_steps=2, backend=backend)
    for g in range(300):
        xs, ys = x[off[g]:off[g + 1]], y[off[g]:off[g + 1]]
        if len(set(ys)) == 1:
            assert math.isnan(rho[g])
        elif len(set(xs)) == 1:
            assert rho[g] == 0
        else:
            assert rho[g] == pytest.approx(st.spearmanr(xs, ys).statistic, rel=1e-12,
                                           abs=1e-14)


def test_within_spearman_degenerate_trajectories(backend):
    x = np.array([1, 2, 3, 4, 5, 1, 2, 3, 4, 1, 2, 3, 9, 9, 9, 9, 1, 2, np.nan, 4.0])
    y = np.array([5, 4, 3, 2, 1, 1, 2, 3, 4, 7, 7, 7, 1, 2, 3, 4, 1, 2, 3, 4.0])
    off = [0, 5, 9, 12, 16, 20]
    audit = fc.spearman_audit(x, y, off, min_steps=4, resamples=20, backend=backend)
    np.testing.assert_array_equal(audit.status, [0, 0, 1, 0, 3])
    np.testing.assert_array_equal(audit.rho, ref.within_spearman(x, y, off, 4))
    assert audit.rho[0] == -1 and audit.rho[1] == 1 and audit.rho[3] == 0
    assert (audit.n_scored, audit.n_short, audit.n_constant, audit.n_nonfinite) == (3, 1, 0, 1)
    assert audit.median.estimate == 0 and audit.median.n == 3
    y[9:12] = [1, 2, 3]   # no longer short-and-constant: min_steps 3 scores it
    assert fc.within_spearman(x, y, off, min_steps=3)[2] == 1


def test_spearman_same_for_any_thread_count(backend, rng):
    off = ragged(rng, 2000, 1, 90)
    x, y = rng.normal(size=off[-1]), rng.normal(size=off[-1])
    runs = [fc.within_spearman(x, y, off, backend=backend, threads=t) for t in (1, 2)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r, runs[0])


# --- controls ----------------------------------------------------------------

def test_shuffle_matches_reference_and_keeps_marginals(backend, rng):
    off = ragged(rng, 50, 0, 12)
    x = rng.normal(size=off[-1])
    s = fc.shuffle_within(x, off, seed=11, stream=2, backend=backend, threads=2)
    for g in range(50):
        a, b = off[g], off[g + 1]
        assert s[a:b].tolist() == ref.fisher_yates(x[a:b], 11, 2 * 50 + g)
        assert sorted(s[a:b]) == sorted(x[a:b])
    out = np.empty_like(x)
    assert fc.shuffle_within(x, off, seed=11, stream=2, out=out) is out
    np.testing.assert_array_equal(out, s)


def test_shuffle_is_uniform_over_permutations():
    counts = {}
    for seed in range(6000):
        p = tuple(fc.shuffle_within([0.0, 1.0, 2.0], [0, 3], seed=seed).astype(int))
        counts[p] = counts.get(p, 0) + 1
    assert len(counts) == 6
    chi2 = sum((c - 1000) ** 2 / 1000 for c in counts.values())
    assert chi2 < 20.5   # chi2(5) 0.999 quantile


@pytest.mark.parametrize("n", [2, 3, 10, 1000])
def test_derangement_matches_reference(n, backend):
    for seed in (0, 1, 77):
        p = fc.derangement(n, seed=seed, backend=backend)
        assert p.tolist() == ref.derangement(n, seed)
        assert np.all(p != np.arange(n)) and sorted(p) == list(range(n))


@pytest.mark.parametrize("n", [2, 1000])
def test_derangement_into_out(n, backend):
    out = np.full(n, -7, dtype=np.int64)
    assert fc.derangement(n, seed=5, out=out, backend=backend) is out
    assert out.tolist() == ref.derangement(n, 5)
    with pytest.raises(TypeError, match="out must have dtype int64"):
        fc.derangement(n, out=np.zeros(n))
    with pytest.raises(ValueError, match=r"out must have shape \(%d,\)" % n):
        fc.derangement(n, out=np.zeros(n + 1, dtype=np.int64))
    with pytest.raises(ValueError, match="out must be a writeable C-contiguous array"):
        fc.derangement(n, out=np.zeros(2 * n, dtype=np.int64)[::2])
    assert out.tolist() == ref.derangement(n, 5)   # refused calls wrote nothing


def test_derangement_is_uniform():
    # the two derangements of 3 items are equally likely
    first = [fc.derangement(3, seed=s)[0] for s in range(4000)]
    assert set(first) == {1, 2}
    assert abs(np.mean(np.array(first) == 1) - 0.5) < 4 * 0.5 / math.sqrt(4000)


def test_audit_controls(rng):
    off = np.arange(0, 4001, 20)
    a = rng.normal(size=4000)
    credit = a + 0.5 * rng.normal(size=4000)
    res = fc.audit_controls(credit, a, off, resamples=500, seed=3)
    assert set(res) == {"signal", "shuffle", "random", "uniform"}
    assert res["signal"].median.low > 0.6
    for name in ("shuffle", "random"):
        # null median rho of 200 trajectories of 20 steps: sd about 0.02
        assert abs(res[name].median.estimate) < 0.12
    assert np.all(res["uniform"].rho == 0)
    shuffled = fc.shuffle_within(credit, off, seed=3)
    np.testing.assert_array_equal(res["shuffle"].rho, fc.within_spearman(shuffled, a, off))
    assert np.array_equal(res["signal"].rho, fc.spearman_audit(credit, a, off,
                                                                resamples=10).rho)


def test_alignment_controls(rng):
    reference = rng.normal(size=(300, 5))
    credit = reference + 0.5 * rng.normal(size=reference.shape)
    res = fc.alignment_controls(credit, reference, seed=4)
    assert set(res) == {"signal", "shuffle", "random", "uniform", "derangement"}
    perm = fc.derangement(300, seed=4)
    np.testing.assert_array_equal(res["derangement"].cosine,
                                  fc.alignment(credit[perm], reference).cosine)
    shuffled = fc.shuffle_within(credit.reshape(-1), np.arange(301) * 5, seed=4)
    np.testing.assert_array_equal(res["shuffle"].cosine,
                                  fc.alignment(shuffled.reshape(300, 5), reference).cosine)
    assert np.all(res["uniform"].cosine == 0)
    assert res["signal"].median_cosine > 0.8
    for name in ("shuffle", "random", "derangement"):
        # null median cosine over 300 requests of m = 5: sd about 0.04
        assert abs(res[name].median_cosine) < 0.2
        assert fc.paired_bootstrap(res["signal"].cosine, res[name].cosine,
                                   resamples=500).low > 0.5


def test_trajectory_derangement_control_needs_equal_lengths(rng):
    a = rng.normal(size=60)
    res = fc.audit_controls(a, a, np.arange(0, 61, 6), controls=["derangement"],
                            resamples=50, seed=2)
    perm = fc.derangement(10, seed=2)
    np.testing.assert_array_equal(res["derangement"].rho, fc.within_spearman(
        a.reshape(10, 6)[perm].reshape(-1), a, np.arange(0, 61, 6)))
    with pytest.raises(ValueError, match="derangement' needs at least 2 groups"):
        fc.audit_controls(a, a, [0, 30, 60 - 1, 60], controls=["derangement"])


def test_holm_worked_example_and_reference(rng):
    # Holm (1979) step-down by hand: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1
    # = 0.02, 0.03, 0.06, 0.04 -> running max 0.02, 0.03, 0.06, 0.06.
    h = fc.holm([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(h.adjusted, [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_array_equal(h.reject, [True, False, False, True])
    p = rng.random(25) ** 3
    np.testing.assert_allclose(fc.holm(p).adjusted, ref.holm(p), rtol=1e-15)
    assert fc.holm([0.7]).adjusted.tolist() == [0.7]


# --- replay advantages and contrastive effects -------------------------------

def test_replay_advantage_matches_reference(backend, rng):
    f_off, a_off = ragged(rng, 30, 1, 6), ragged(rng, 30, 1, 6)
    f = (rng.random(f_off[-1]) < 0.3).astype(float)
    a = (rng.random(a_off[-1]) < 0.3).astype(float)
    f[f_off[0]:f_off[1]] = 0
    a[a_off[0]:a_off[1]] = 0
    res = fc.replay_advantage(f, a, factual_offsets=f_off, alternative_offsets=a_off,
                              backend=backend)
    groups = lambda v, off: [v[off[t]:off[t + 1]] for t in range(30)]  # noqa: E731
    adv, noise, resolution = ref.replay_advantage(groups(f, f_off), groups(a, a_off), 0.05)
    np.testing.assert_allclose(res.advantage, adv, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res.noise_floor, noise, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res.resolution, resolution, rtol=1e-12)
    np.testing.assert_array_equal(res.critical, adv != 0)
    assert not math.isnan(res.resolution[0])


@pytest.mark.parametrize("n", [1, 3, 10, 50])
def test_resolution_is_the_clopper_pearson_bound(n, backend):
    res = fc.replay_advantage(np.zeros((1, n)), np.zeros((1, n + 2)), alpha=0.05,
                              backend=backend).resolution[0]
    # one-sided 95% exact bound = upper end of the two-sided 90% Clopper-Pearson interval
    cp = st.binomtest(0, n).proportion_ci(confidence_level=0.90, method="exact").high
    assert res == pytest.approx(cp, rel=1e-12)
    if n == 3:
        assert round(res, 3) == 0.632   # docs/design.md: the 0.632 bound for n = 3


def test_wilson_and_newcombe_published_values():
    for k, n in [(0, 10), (1, 29), (15, 148), (81, 263)]:
        want = st.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        got = fc.wilson_interval(k, n)
        assert got[0] == pytest.approx(want.low, abs=1e-12)
        assert got[1] == pytest.approx(want.high, abs=1e-12)
    # Newcombe (1998), Stat Med 17:873, Table II examples (a) and (b), method 10
    assert np.round(fc.newcombe_interval(56, 70, 48, 80), 4).tolist() == [0.0524, 0.3339]
    assert np.round(fc.newcombe_interval(9, 10, 3, 10), 4).tolist() == [0.1705, 0.8090]


def test_wilson_ends_are_exact():
    n = np.arange(1, 3000)
    assert np.all(fc.wilson_interval(n, n)[1] == 1) and np.all(fc.wilson_interval(0, n)[0] == 0)
    # a step where every resample still fails has no significant effect
    ce = fc.contrastive_effects(np.ones((3, 2000)), 1.0)
    assert np.all(ce.high == 0) and ce.commitment_point is None


def test_contrastive_binary_effects(rng):
    y = (rng.random((6, 80)) < 0.4).astype(float)
    ce = fc.contrastive_effects(y, 1.0)
    lo, hi = fc.wilson_interval(y.sum(1), 80)
    assert ce.kind == "binary"
    np.testing.assert_allclose(ce.effect, y.mean(1) - 1)
    np.testing.assert_allclose(ce.low, lo - 1)
    np.testing.assert_allclose(ce.high, hi - 1)
    obs = np.array([1.0, 1.0, 0.0, 1.0])
    ce = fc.contrastive_effects(y, obs)
    lo, hi = fc.newcombe_interval(y.sum(1), 80, 3, 4)
    np.testing.assert_allclose(ce.effect, y.mean(1) - 0.75)
    np.testing.assert_allclose((ce.low, ce.high), (lo, hi))


def test_contrastive_continuous_bootstrap_matches_reference(backend, rng):
    off = ragged(rng, 4, 1, 7)
    vals = rng.normal(size=off[-1])
    obs = rng.normal(size=5)
    ce = fc.contrastive_effects(vals, obs, offsets=off, resamples=30, seed=8, level=0.9,
                                backend=backend)
    groups = [vals[off[g]:off[g + 1]] for g in range(4)]
    reps = ref.bootstrap_mean_diff(groups, obs, 30, 8)
    np.testing.assert_allclose(ce.low, np.quantile(reps, 0.05, axis=1), rtol=1e-12)
    np.testing.assert_allclose(ce.high, np.quantile(reps, 0.95, axis=1), rtol=1e-12)
    ce1 = fc.contrastive_effects(vals, 0.5, offsets=off, resamples=30, seed=8,
                                 kind="continuous", backend=backend)
    reps = ref.bootstrap_mean_diff(groups, [], 30, 8) - 0.5
    np.testing.assert_allclose(ce1.high, np.quantile(reps, 0.975, axis=1), rtol=1e-12)
    np.testing.assert_allclose(ce1.effect, [g.mean() - 0.5 for g in groups])


@pytest.mark.parametrize("pivot", [0, 3, 6])
def test_commitment_point_finds_planted_pivotal_step(pivot):
    # A run fails for sure once step `pivot` is taken; resampling at or before
    # the pivot draws a different action there and fails with probability 0.3.
    rng = np.random.default_rng(pivot)
    steps, k = 9, 200
    p_bad = np.where(np.arange(steps) <= pivot, 0.3, 1.0)
    outcomes = (rng.random((steps, k)) < p_bad[:, None]).astype(float)
    ce = fc.contrastive_effects(outcomes, 1.0)
    assert ce.commitment_point == pivot
    replays = np.ones(40)   # the observed run replayed: always bad
    assert fc.contrastive_effects(outcomes, replays).commitment_point == pivot
    assert fc.contrastive_effects(np.ones((steps, k)), 1.0).commitment_point is None


# --- evaluator fidelity ------------------------------------------------------

def test_evaluator_fidelity_matches_reference(rng):
    m = 4
    ref_v = rng.integers(0, 3, size=(7, 1 << m)).astype(float)
    ref_v[:, 0] = 0
    v = ref_v + rng.integers(-1, 2, size=ref_v.shape) * (rng.random(ref_v.shape) < 0.3)
    fid = fc.evaluator_fidelity(v, ref_v)
    hits, count = ref.edge_sign_agreement(v, ref_v)
    np.testing.assert_array_equal(fid.edge_count, count)
    np.testing.assert_allclose(fid.edge_sign, hits / count)
    ia, ir = fc.pair_interactions(v), fc.pair_interactions(ref_v)
    iu = np.triu_indices(m, 1)
    same = np.sign(ia[:, iu[0], iu[1]]) == np.sign(ir[:, iu[0], iu[1]])
    assert fid.pair_sign == same.mean()
    nz = ir[:, iu[0], iu[1]] != 0
    assert fid.pair_sign_nonzero == same[nz].mean()
    sa, sr = fc.size_resolved(v), fc.size_resolved(ref_v)
    for k in range(m):
        np.testing.assert_array_equal(fid.size_resolved[k].cosine,
                                      fc.alignment(sa[:, :, k], sr[:, :, k]).cosine)
    same_fid = fc.evaluator_fidelity(ref_v, ref_v)
    assert same_fid.pair_sign == 1 and np.all(same_fid.edge_sign[count > 0] == 1)


def test_docstring_examples_run():
    import doctest

    from fastcredit import audit
    assert doctest.testmod(audit).failed == 0
