"""Property tests of the audit statistics (hypothesis)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as hs

import fastcredit as fc
import reference as ref

small = settings(max_examples=40, deadline=None)

lengths = hs.lists(hs.integers(0, 9), min_size=1, max_size=12)
seeds = hs.integers(0, 2**64 - 1)


def offsets_of(sizes):
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


@small
@given(lengths, seeds, hs.integers(0, 3))
def test_shuffle_keeps_every_group_multiset(sizes, seed, stream):
    off = offsets_of(sizes)
    x = np.random.default_rng(len(sizes)).integers(0, 4, off[-1]).astype(float)
    for backend in fc.available_backends():
        s = fc.shuffle_within(x, off, seed=seed, stream=stream, backend=backend)
        for a, b in zip(off[:-1], off[1:]):
            assert sorted(s[a:b]) == sorted(x[a:b])


@small
@given(hs.lists(hs.integers(4, 12), min_size=1, max_size=6), hs.integers(0, 2**32))
def test_spearman_matches_reference_and_is_symmetric(sizes, data_seed):
    off = offsets_of(sizes)
    rng = np.random.default_rng(data_seed)
    x = rng.integers(0, 4, off[-1]).astype(float)
    y = rng.integers(0, 4, off[-1]).astype(float)
    for backend in fc.available_backends():
        rho = fc.within_spearman(x, y, off, backend=backend)
        np.testing.assert_allclose(rho, ref.within_spearman(x, y, off, 4), rtol=1e-12,
                                   atol=1e-15)
        both = ~np.isnan(rho) & ~np.isnan(fc.within_spearman(y, x, off))
        np.testing.assert_allclose(rho[both], fc.within_spearman(y, x, off)[both],
                                   rtol=1e-12, atol=1e-15)
        assert np.all(np.abs(rho[~np.isnan(rho)]) <= 1 + 1e-12)
        # monotone transforms of either side leave rank correlation unchanged
        np.testing.assert_array_equal(rho, fc.within_spearman(np.exp(x), 3 * y - 1, off,
                                                              backend=backend))


@small
@given(hs.lists(hs.floats(0, 1), min_size=1, max_size=30))
def test_holm_bounds_and_order(p):
    p = np.array(p)
    adj = fc.holm(p).adjusted
    assert np.all(adj >= p) and np.all(adj <= np.minimum(1, len(p) * p) + 1e-15)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adj[order]) >= 0)
    np.testing.assert_allclose(adj, ref.holm(p), rtol=1e-15)


@small
@given(hs.lists(hs.floats(-1e6, 1e6), min_size=2, max_size=40), seeds)
def test_bootstrap_medians_lie_within_the_data(x, seed):
    x = np.array(x)
    ci = fc.bootstrap_median(x, resamples=50, seed=seed)
    assert np.all(ci.replicates >= x.min()) and np.all(ci.replicates <= x.max())
    assert ci.low <= ci.high


@small
@given(hs.integers(2, 60), seeds)
def test_derangement_has_no_fixed_points(n, seed):
    perms = [fc.derangement(n, seed=seed, backend=b) for b in fc.available_backends()]
    for p in perms:
        assert np.array_equal(p, perms[0])
        assert np.all(p != np.arange(n)) and np.array_equal(np.sort(p), np.arange(n))


@small
@given(hs.integers(1, 40), hs.integers(1, 40), hs.floats(0.5, 0.999))
def test_wilson_contains_the_estimate_and_newcombe_the_difference(k, extra, level):
    n = k + extra
    lo, hi = fc.wilson_interval(k, n, level=level)
    assert lo <= k / n <= hi
    lo, hi = fc.newcombe_interval(k, n, extra, n, level=level)
    assert lo <= (k - extra) / n <= hi


def _alignment_fields(al):
    return [np.asarray(getattr(al, f), dtype=float) for f in
            ("cosine", "sign", "sign_nonzero", "spearman", "top")] + [al.n_defined]


@small
@given(hs.integers(1, 5), hs.integers(2, 7), hs.sampled_from([1e-12, 1e-6, 1e-3]),
       hs.booleans(), hs.integers(0, 2**32))
def test_alignment_is_invariant_to_moves_below_atol(n, m, atol, center, data_seed):
    # grid values: distinct centred values (and 0) are at least 1/7 apart; each
    # value moves by at most atol / 4, so at most atol / 2 once centred
    rng = np.random.default_rng(data_seed)
    c = rng.integers(-3, 4, size=(n, m)).astype(float)
    r = rng.integers(-3, 4, size=(n, m)).astype(float)
    if center:
        c[0] = c[0, 0]                  # a constant row of each
        r[-1] = r[-1, 0]
    else:
        c[0] = 0.0
        r[-1] = 0.0
    moved_c = c + rng.uniform(-atol / 4, atol / 4, size=c.shape)
    moved_r = r + rng.uniform(-atol / 4, atol / 4, size=r.shape)
    by_backend = []
    for backend in fc.available_backends():
        exact = _alignment_fields(fc.alignment(c, r, center=center, backend=backend))
        same = _alignment_fields(fc.alignment(c, r, center=center, atol=atol, backend=backend))
        moved = _alignment_fields(fc.alignment(moved_c, moved_r, center=center, atol=atol,
                                               backend=backend))
        # on exact ties the tolerance changes nothing
        for a, b in zip(exact, same):
            np.testing.assert_array_equal(a, b)
        # below it, moves change nothing but the cosine's value
        np.testing.assert_array_equal(np.isnan(moved[0]), np.isnan(exact[0]))
        assert moved[0][0] == 0 or np.isnan(exact[0][0])    # the constant credit
        np.testing.assert_allclose(moved[0], exact[0], rtol=0, atol=8 * atol)
        for a, b in zip(exact[1:], moved[1:]):
            np.testing.assert_array_equal(a, b)
        by_backend.append(moved)
    for a, b in zip(by_backend[0], by_backend[-1]):      # ties are the backends' input
        np.testing.assert_array_equal(a, b)
