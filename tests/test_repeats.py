"""fastcredit.audit.repeats: aggregation of repeated noisy replays, split-half
sign self-consistency, the noise scale against the number of repeats and
fidelity by edge magnitude, each against a from-the-definition oracle
written here (loops over requests, repeats, players and coalitions), on
hand-made landscapes with known counts, and the 1/sqrt(R) noise scale as a
statistical test with its false-failure rate."""
import itertools
import math
import statistics

import numpy as np
import pytest

import fastcredit as fc

ATOL = 1e-9


def sign(x, atol=ATOL):
    if x != x:
        return math.nan
    return 0 if abs(x) <= atol else (1 if x > 0 else -1)


def shapley(v, m):
    w = [math.factorial(k) * math.factorial(m - k - 1) / math.factorial(m) for k in range(m)]
    return [sum(w[bin(s).count("1")] * (v[s | 1 << i] - v[s])
                for s in range(1 << m) if not s >> i & 1) for i in range(m)]


def aggregate(reps, how):
    """Coalition by coalition, with statistics.median / fmean."""
    f = statistics.median if how == "median" else statistics.fmean
    return [f([r[s] for r in reps]) for s in range(len(reps[0]))]


def edges(v, m):
    return [(v[s | 1 << i] - v[s]) for i in range(m) for s in range(1 << m) if not s >> i & 1]


def split_half_oracle(y, statistic, how):
    """(pooled rate, per-request rates) of the definition."""
    hits = counts = 0
    per = []
    for req in y:
        h = len(req) // 2
        a, b = aggregate(req[:h], how), aggregate(req[h:2 * h], how)
        m = len(a).bit_length() - 1
        ca, cb = (shapley(a, m), shapley(b, m)) if statistic == "shapley" else \
            (edges(a, m), edges(b, m))
        sa, sb = [sign(x) for x in ca], [sign(x) for x in cb]
        pairs = [(p, q) for p, q in zip(sa, sb) if p != 0 or q != 0]
        hh = sum(p == q for p, q in pairs)
        per.append(hh / len(pairs) if pairs else math.nan)
        hits += hh
        counts += len(pairs)
    return hits / counts if counts else math.nan, per


def landscape(n, m=5, seed=0):
    """Tables with exact zeros (empty players) and ties, like the replays."""
    rng = np.random.default_rng(seed)
    v = np.round(rng.normal(size=(n, 1 << m)) * 2) / 2
    v[:, 0] = 0
    dead = rng.integers(m, size=n)
    for q in range(n):   # player dead[q] adds nothing
        i = dead[q]
        for s in range(1 << m):
            if s >> i & 1:
                v[q, s] = v[q, s & ~(1 << i)]
    return v


# --- aggregation -----------------------------------------------------------------

@pytest.mark.parametrize("how", ["median", "mean"])
@pytest.mark.parametrize("r", [1, 2, 3, 4, 7])
def test_aggregate_against_the_definition(how, r):
    y = np.random.default_rng(r).normal(size=(3, 2, r, 8))
    got = fc.audit.aggregate_repeats(y, how=how)
    assert got.shape == (3, 2, 8)
    for idx in itertools.product(range(3), range(2)):
        want = aggregate(list(y[idx]), how)
        np.testing.assert_allclose(got[idx], want, rtol=1e-15, atol=1e-15)


def test_aggregate_known_values_and_nan():
    y = np.array([[0., 1., 2., 9.], [0., 3., 2., 1.], [0., 2., 2., 2.], [0., 4., 2., 2.]])
    assert fc.audit.aggregate_repeats(y).tolist() == [0.0, 2.5, 2.0, 2.0]   # even R: midpoint
    assert fc.audit.aggregate_repeats(y, how="mean").tolist() == [0.0, 2.5, 2.0, 3.5]
    y[2, 1] = np.nan
    for how in ("median", "mean"):
        out = fc.audit.aggregate_repeats(y, how=how)
        assert np.isnan(out[1]) and not np.isnan(out[[0, 2, 3]]).any()


def test_replay_reference_is_the_median_of_the_replays():
    v = landscape(50)
    y = fc.synthetic.replay_repeats(v, repeats=5, noise=0.4, seed=3, first=7)
    np.testing.assert_array_equal(
        fc.audit.replay_reference(v, repeats=5, noise=0.4, seed=3, first=7),
        fc.audit.aggregate_repeats(y))
    np.testing.assert_array_equal(fc.audit.replay_reference(v, noise=0.0), v)


# --- split-half consistency ----------------------------------------------------------

def test_split_half_known_counts():
    # request 0: half A (repeats 0, 1) aggregates to [0, 2, -1, 1] (Shapley +2, -1),
    # half B to [0, -1, 1, 0] (Shapley -1, +1): both players disagree.
    # Request 1: equal halves, Shapley (+1, 0): player 0 agrees, player 1 is 0 in
    # both and not counted. The fifth repeat (odd R) is left out, NaN or not.
    y = np.array([[[0, 1, -1, 0], [0, 3, -1, 2], [0, -1, 1, 0], [0, -1, 1, 0], [np.nan] * 4],
                  [[0, 1, 0, 1], [0, 1, 0, 1], [0, 1, 0, 1], [0, 1, 0, 1], [np.nan] * 4]],
                 dtype=float)
    c = fc.audit.split_half_consistency(y)
    assert (c.half, c.median, c.mean, c.median_count, c.mean_count) == (2, 1 / 3, 1 / 3, 3, 3)
    assert c.by_request_median.tolist() == [0.0, 1.0] == c.by_request_mean.tolist()
    e = fc.audit.split_half_consistency(y, statistic="edges")
    # edges (i, S): request 0 A: (0,{})=2, (0,{1})=2, (1,{})=-1, (1,{0})=-1;
    # B: -1, -1, 1, 1: all 4 disagree; request 1: 1, 1, 0, 0: 2 agree, 2 not counted
    assert (e.median, e.median_count) == (2 / 6, 6)


@pytest.mark.parametrize("statistic", ["shapley", "edges"])
@pytest.mark.parametrize("r", [2, 5, 6, 7])
def test_split_half_against_the_definition(statistic, r):
    v = landscape(40, m=4, seed=r)
    y = fc.synthetic.replay_repeats(v, repeats=r, noise=0.5, seed=r)
    y = np.round(y * 4) / 4   # ties and exact zeros, so that 0 signs occur
    c = fc.audit.split_half_consistency(y, statistic=statistic)
    for how in ("median", "mean"):
        rate, per = split_half_oracle(list(map(list, y)), statistic, how)
        assert getattr(c, how) == pytest.approx(rate, abs=1e-12)
        np.testing.assert_allclose(getattr(c, f"by_request_{how}"), per, atol=1e-12)
        assert getattr(c, f"{how}_low") <= getattr(c, how) <= getattr(c, f"{how}_high")


@pytest.mark.parametrize("statistic", ["shapley", "edges"])
def test_split_half_is_one_without_noise(statistic):
    v = landscape(300, seed=4)
    y = fc.synthetic.replay_repeats(v, repeats=6, noise=0.0)
    c = fc.audit.split_half_consistency(y, statistic=statistic)
    assert (c.median, c.mean) == (1.0, 1.0) and c.median_count > 0
    assert np.all(c.by_request_median == 1.0)
    # with noise the halves disagree somewhere, more with more noise
    rates = [fc.audit.split_half_consistency(
        fc.synthetic.replay_repeats(v, repeats=6, noise=s, seed=1), statistic=statistic).median
        for s in (0.1, 1.0)]
    assert 1.0 > rates[0] > rates[1]


# --- the noise scale ----------------------------------------------------------------

def noise_oracle(y, how):
    out = []
    for r in range(1, y.shape[1] // 2 + 1):
        total = n = 0
        for req in y:
            a, b = aggregate(list(req[:r]), how), aggregate(list(req[r:2 * r]), how)
            total += sum((p - q) ** 2 for p, q in zip(a[1:], b[1:]))
            n += len(a) - 1
        out.append(math.sqrt(total / (2 * n)))
    return out


@pytest.mark.parametrize("how", ["median", "mean"])
def test_noise_scale_against_the_definition(how):
    y = np.random.default_rng(5).normal(size=(30, 7, 16))
    s = fc.audit.noise_scale(y, how=how)
    assert s.repeats.tolist() == [1, 2, 3] and s.count == 30 * 15
    np.testing.assert_allclose(s.sd, noise_oracle(y, how), rtol=1e-13)
    np.testing.assert_allclose(s.reference, s.sd[0] / np.sqrt([1, 2, 3]), rtol=1e-15)
    slope = np.polyfit(np.log([1, 2, 3]), np.log(s.sd), 1)[0]
    assert s.slope == pytest.approx(slope, rel=1e-12)


def test_noise_scale_falls_as_one_over_sqrt_r():
    """A statistical test. With N = 2,000 requests x 31 coalitions = 62,000
    independent Gaussian differences per r, the estimate sd_hat(r)^2 is
    sigma^2/r times chi2_N / N, so sd_hat(r) / (sigma / sqrt(r)) has sd
    1/sqrt(2N) = 0.0028. The tolerance is 5 of those, a false failure
    probability of 5.7e-7 per r and below 1e-5 for the 16 checks (the
    draws are seeded: the test is deterministic, this is the chance that a
    seed fails a correct implementation)."""
    sigma, n = 0.7, 2000
    v = landscape(n, seed=6) * 3
    y = fc.synthetic.replay_repeats(v, repeats=16, noise=sigma, seed=11)
    tol = 5 / math.sqrt(2 * n * 31)
    mean = fc.audit.noise_scale(y, how="mean")
    assert mean.repeats.tolist() == list(range(1, 9))
    np.testing.assert_allclose(mean.sd * np.sqrt(mean.repeats) / sigma, 1.0, atol=tol)
    assert mean.slope == pytest.approx(-0.5, abs=0.03)
    median = fc.audit.noise_scale(y, how="median")
    np.testing.assert_array_equal(median.sd[:2], mean.sd[:2])   # median = mean for r <= 2
    # the median of r >= 3 Gaussians is noisier than their mean (efficiency
    # 2/pi asymptotically): sd ratio sqrt(pi/2) = 1.25 at large r
    ratio = median.sd[2:] / mean.sd[2:]
    assert np.all(ratio > 1.05) and np.all(ratio < 1.26)
    # no noise, no spread
    z = fc.audit.noise_scale(fc.synthetic.replay_repeats(v, repeats=4, noise=0.0))
    assert z.sd.tolist() == [0.0, 0.0] and math.isnan(z.slope)


# --- fidelity by magnitude -------------------------------------------------------------

def magnitude_oracle(v, ref, bin_edges, over):
    m = v.shape[1].bit_length() - 1
    nb = len(bin_edges) - 1
    hits, counts = [0] * nb, [0] * nb
    for t, a in zip(v, ref):
        for dt, da in zip(edges(t, m), edges(a, m)):
            st, sa = sign(dt), sign(da)
            keep = {"audit_nonzero": sa != 0, "both_nonzero": st != 0 and sa != 0,
                    "either_nonzero": st != 0 or sa != 0, "all": True}[over]
            if not keep:
                continue
            for j in range(nb):
                lo, hi = bin_edges[j], bin_edges[j + 1]
                if lo <= abs(da) < hi or (j == nb - 1 and abs(da) == hi):
                    hits[j] += st == sa
                    counts[j] += 1
    return [h / c if c else math.nan for h, c in zip(hits, counts)], counts


@pytest.mark.parametrize("over", ["audit_nonzero", "both_nonzero", "either_nonzero", "all"])
def test_fidelity_by_magnitude_against_the_definition(over):
    v = landscape(60, m=4, seed=8)
    ref = np.round(fc.audit.replay_reference(v, repeats=3, noise=0.6, seed=2) * 2) / 2
    for bins in (3, [0.0, 0.5, 1.0, 2.5, 100.0]):
        f = fc.audit.fidelity_by_magnitude(v, ref, bins=bins, over=over)
        rate, counts = magnitude_oracle(v, ref, f.bin_edges, over)
        np.testing.assert_allclose(f.rate, rate, atol=1e-12)
        assert f.count.tolist() == counts
        # one definition: the overall rate is edge_agreement's
        e = fc.edge_agreement(v, ref, over=over)
        assert f.overall == pytest.approx(e.rate, abs=1e-15)
        if isinstance(bins, int):
            assert sum(counts) == e.count   # quantile bins hold every counted edge
            keep = f.count > 0
            assert np.sum(f.rate[keep] * f.count[keep]) / f.count.sum() == \
                pytest.approx(e.rate, abs=1e-12)


def test_fidelity_by_magnitude_known_counts():
    # edges (i, S) of v: (0,{})=1, (0,{1})=0, (1,{})=1, (1,{0})=0; of ref: 1, 0.5, 1, 0.5
    f = fc.audit.fidelity_by_magnitude([0., 1., 1., 1.], [0., 1., 1., 1.5], bins=[0, 1, 2])
    assert f.rate.tolist() == [0.0, 1.0] and f.count.tolist() == [2, 2] and f.overall == 0.5
    f = fc.audit.fidelity_by_magnitude([0., 1., 1., 1.], [0., 1., 1., 1.5], bins=2)
    assert f.bin_edges.tolist() == [0.5, 0.75, 1.0] and f.count.tolist() == [2, 2]
    f = fc.audit.fidelity_by_magnitude([0., 1., 1., 1.], [0., 1., 1., 1.5], bins=[5, 6])
    assert math.isnan(f.rate[0]) and f.count.tolist() == [0]


# --- arguments ---------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: fc.audit.aggregate_repeats(np.zeros(8)), "repeated"),
    (lambda: fc.audit.aggregate_repeats(np.zeros((2, 6))), "repeated"),
    (lambda: fc.audit.aggregate_repeats(np.zeros((2, 8)), how="mode"), "how"),
    (lambda: fc.audit.split_half_consistency(np.zeros((1, 8))), "repeated"),
    (lambda: fc.audit.split_half_consistency(np.zeros((2, 8)), statistic="x"), "statistic"),
    (lambda: fc.audit.split_half_consistency(np.zeros((2, 8)), level=1.0), "level"),
    (lambda: fc.audit.noise_scale(np.zeros((3, 1, 8))), "repeated"),
    (lambda: fc.audit.noise_scale(np.zeros((2, 8)), how=1), "how"),
    (lambda: fc.audit.fidelity_by_magnitude(np.zeros(8), np.zeros(4)), "reference"),
    (lambda: fc.audit.fidelity_by_magnitude(np.zeros(8), np.zeros((2, 8))), "same shape"),
    (lambda: fc.audit.fidelity_by_magnitude(np.zeros(8), np.zeros(8), bins=0), "bins"),
    (lambda: fc.audit.fidelity_by_magnitude(np.zeros(8), np.zeros(8), bins=[1, 1]), "bins"),
    (lambda: fc.audit.fidelity_by_magnitude(np.zeros(8), np.zeros(8), over="x"), "over"),
    (lambda: fc.audit.replay_reference(np.zeros(8), repeats=0), "repeats"),
    (lambda: fc.audit.replay_reference(np.zeros(8), noise=-1.0), "noise"),
])
def test_rejects_bad_arguments(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_results_are_frozen():
    c = fc.audit.split_half_consistency(np.zeros((2, 8)))
    with pytest.raises(AttributeError):
        c.median = 0.0
