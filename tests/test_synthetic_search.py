"""fc.synthetic.sponsored_search: deterministic, chunkable pools with the
structure the demo relies on."""
import numpy as np
import pytest

import fastcredit as fc
from fastcredit.synthetic import sponsored_search


@pytest.fixture(scope="module")
def pools():
    return sponsored_search(4000, seed=11)


def arrays(p):
    return [p.offsets, p.ad_id, p.score, p.value, p.prerank]


def test_deterministic_per_seed_and_thread_count(pools):
    again = sponsored_search(4000, seed=11, threads=1)
    for a, b in zip(arrays(pools), arrays(again)):
        np.testing.assert_array_equal(a, b)
    other = sponsored_search(4000, seed=12)
    assert not np.array_equal(other.ad_id[:1000], pools.ad_id[:1000])


def test_parts_of_the_stream_match_the_whole(pools):
    part = sponsored_search(500, seed=11, start=1200)
    lo, hi = pools.offsets[1200 * 5], pools.offsets[1700 * 5]
    np.testing.assert_array_equal(part.offsets, pools.offsets[6000:8501] - lo)
    for name in ("ad_id", "score", "value", "prerank"):
        np.testing.assert_array_equal(getattr(part, name), getattr(pools, name)[lo:hi])


def test_shape_and_lengths(pools):
    assert pools.m == 5 and pools.n_requests == 4000 and pools.prerank is not None
    lengths = np.diff(pools.offsets)
    assert set(np.unique(lengths)) <= set(range(0, 11)) | {20}
    # 8 % empty, 12 % short, 80 % full rewrites (20,000 draws: 4 sigma bounds)
    assert abs(np.mean(lengths == 0) - 0.08) < 0.01
    assert abs(np.mean((lengths > 0) & (lengths < 20)) - 0.12) < 0.012
    assert (pools.ad_id >= 0).all() and (pools.ad_id < 50_000).all()
    assert np.isfinite(pools.score).all() and (pools.score > 0).all()


def test_values_are_bids_of_clicked_ads_shared_by_instances(pools):
    request = np.repeat(np.arange(pools.n_requests * 5) // 5, np.diff(pools.offsets))
    key = request * 50_000 + pools.ad_id
    order = np.lexsort((pools.value, key))
    k, v = key[order], pools.value[order]
    same = k[1:] == k[:-1]
    # every instance of an ad in a request earns the same (clicked or not)
    np.testing.assert_array_equal(v[1:][same], v[:-1][same])
    assert 0.05 < np.mean(pools.value > 0) < 0.4 and (pools.value >= 0).all()


def test_rewrites_overlap_and_scores_differ_across_rewrites(pools):
    m = pools.m
    shared = differ = 0
    for r in range(500):
        ads = [set(pools.ad_id[pools.offsets[r * m + i]:pools.offsets[r * m + i + 1]])
               for i in range(m)]
        shared += any(ads[i] & ads[j] for i in range(m) for j in range(i + 1, m))
    # the same ad scores differently in two rewrites, which makes filter and rerun differ
    tf = fc.auction_replay(pools, mode="filter")
    tr = fc.auction_replay(pools, mode="rerun")
    differ = np.mean(np.any(tf != tr, axis=1))
    assert shared > 400
    assert 0.05 < differ < 0.95
    # the full sets agree: both modes run the same pipeline on the full pool
    np.testing.assert_array_equal(tf[:, -1], tr[:, -1])


def test_other_shapes():
    p = sponsored_search(10, m=3, k=4, seed=0, empty=0.0, short=0.0, topics=2, catalogue=10)
    assert p.m == 3 and (np.diff(p.offsets) == 4).all() and (p.ad_id < 10).all()
    assert sponsored_search(0).n_requests == 0


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(n_requests=-1), ValueError, "n_requests"),
    (dict(n_requests=10, m=0), ValueError, "m must be >= 1"),
    (dict(n_requests=10, m=17), ValueError, "m must be <= 16"),
    (dict(n_requests=10, k=0), ValueError, "k must be >= 1"),
    (dict(n_requests=10, seed=-1), ValueError, "seed"),
    (dict(n_requests=10, start=-5), ValueError, "start"),
    (dict(n_requests=10, empty=1.5), ValueError, "empty"),
    (dict(n_requests=10, empty=0.6, short=0.6), ValueError, "empty \\+ short"),
    (dict(n_requests=10, topics=10, catalogue=5), ValueError, "catalogue"),
    (dict(n_requests=2.5), TypeError, "n_requests"),
])
def test_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        sponsored_search(**kwargs)
