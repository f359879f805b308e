"""Auction replay against the literal oracle of tests/reference.py (the tricky
requests of every pricing, mode and capacity are cases of tests/test_compare.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcredit as fc
import reference as ref

from conftest import BACKENDS


def _request_lists():
    instance = st.tuples(st.integers(0, 5), st.sampled_from([0.0, 1.0, 1.5, 2.0, 3.0]),
                         st.sampled_from([0.0, 1.0, 2.5]), st.sampled_from([0.0, 1.0, 2.0]))
    return st.integers(1, 4).flatmap(
        lambda m: st.lists(st.lists(instance, max_size=7), min_size=m, max_size=m))


@settings(max_examples=60, deadline=None)
@given(actions=_request_lists(), slots=st.integers(1, 3),
       reserve=st.sampled_from([-np.inf, 0.0, 1.5]), capacity=st.sampled_from([None, 1, 2, 4]),
       pricing=st.sampled_from(["first", "gsp"]), mode=st.sampled_from(["filter", "rerun"]))
def test_matches_oracle_property(actions, slots, reserve, capacity, pricing, mode):
    m = len(actions)
    flat = [x for action in actions for x in action]
    offsets = np.concatenate([[0], np.cumsum([len(a) for a in actions])])
    cols = np.array(flat, dtype=float).reshape(-1, 4)
    pools = fc.Pools(offsets, cols[:, 0].astype(np.int64), cols[:, 1], cols[:, 2], m=m,
                     prerank=cols[:, 3])
    want, _ = ref.auction_request(actions, slots, reserve, capacity, pricing, mode)
    for backend in BACKENDS:
        got = fc.auction_replay(pools, slots, reserve, capacity, pricing, mode, backend=backend)
        np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("m", [5, 6, 7])
@pytest.mark.parametrize("pricing", ["first", "gsp"])
@pytest.mark.parametrize("mode", ["filter", "rerun"])
def test_coalition_lanes_past_one_vector_block_match_oracle(rng, m, pricing, mode):
    """m >= 5: the coalitions fill one or more blocks of 32 vector lanes; repeated
    ads, tied scores and scores under the reserve in every request."""
    for _ in range(4):
        actions = [[(int(rng.integers(0, 9)), float(rng.integers(0, 6)) / 2, float(rng.random()),
                     0.0) for _ in range(rng.integers(0, 7))] for _ in range(m)]
        offsets = np.concatenate([[0], np.cumsum([len(a) for a in actions])])
        cols = np.array([x for a in actions for x in a], dtype=float).reshape(-1, 4)
        pools = fc.Pools(offsets, cols[:, 0].astype(np.int64), cols[:, 1], cols[:, 2], m=m)
        want, _ = ref.auction_request(actions, 2, 0.75, None, pricing, mode)
        for backend in BACKENDS:
            got = fc.auction_replay(pools, 2, 0.75, pricing=pricing, mode=mode, backend=backend)
            np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=0)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), m=st.integers(1, 7), slots=st.integers(1, 5),
       reserve=st.sampled_from([-np.inf, 1.0]), pricing=st.sampled_from(["first", "gsp"]),
       mode=st.sampled_from(["filter", "rerun"]))
def test_short_and_long_lists_side_by_side_match_oracle(data, m, slots, reserve, pricing, mode):
    """Requests whose actions mix empty lists, lists under the reserve, lists
    of up to 32 items (selected several at a time in vector lanes) and longer
    ones (the scalar insertion), in any order; few ads and scores, so ads
    repeat within and across actions and scores tie."""
    sizes = data.draw(st.lists(st.sampled_from([0, 1, 5, 17, 20, 24, 25, 32, 33, 40]),
                               min_size=m, max_size=m))
    actions = [[(data.draw(st.integers(0, 30)), data.draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])),
                 data.draw(st.sampled_from([0.25, 1.0, 3.0])), 0.0) for _ in range(size)]
               for size in sizes]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    cols = np.array([x for a in actions for x in a], dtype=float).reshape(-1, 4)
    pools = fc.Pools(offsets, cols[:, 0].astype(np.int64), cols[:, 1], cols[:, 2], m=m)
    want, _ = ref.auction_request(actions, slots, reserve, None, pricing, mode)
    for backend in BACKENDS:
        got = fc.auction_replay(pools, slots, reserve, pricing=pricing, mode=mode, backend=backend)
        np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("size", [8, 9, 16, 17, 23, 24, 25, 31, 32, 33])
def test_best_items_last_in_their_lists_match_oracle(size, backend):
    """Scores rising along each list, so that the best ads sit in the last
    lanes of the last vector of a list (3 vectors up to 24 items, 4 up to 32,
    then the scalar insertion); distinct ads, so no repeat can stand in for
    a lane left unread."""
    for m in (1, 3, 6):
        actions = [[(100 * i + j, float(j) + 0.25 * i, 1.0 + j, 0.0) for j in range(size)]
                   for i in range(m)]
        offsets = np.arange(m + 1) * size
        cols = np.array([x for a in actions for x in a], dtype=float).reshape(-1, 4)
        pools = fc.Pools(offsets, cols[:, 0].astype(np.int64), cols[:, 1], cols[:, 2], m=m)
        for mode in ("filter", "rerun"):
            for pricing in ("first", "gsp"):
                want, _ = ref.auction_request(actions, 4, 0.0, None, pricing, mode)
                got = fc.auction_replay(pools, 4, 0.0, pricing=pricing, mode=mode,
                                        backend=backend)
                np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=0)


def test_docstring_example_filter_and_rerun_differ():
    pools = fc.Pools([0, 2, 4], ad_id=[7, 8, 7, 9], score=[3., 1., 2., 2.5],
                     value=[1., .5, 1., 2.], m=2)
    for backend in BACKENDS:
        assert fc.auction_replay(pools, slots=1, backend=backend).tolist() == [[0, 1, 1, 1]]
        assert fc.auction_replay(pools, slots=1, mode="rerun",
                                 backend=backend).tolist() == [[0, 1, 2, 1]]


def test_deep_ad_wins_through_another_actions_score(backend):
    # Ad 2 is second in both actions, but in the full pool it carries action
    # 0's score 5 and outranks action 1's best ad 3 (score 1): filtering
    # {1} must pick it, though cutting each action to its own best ad loses it.
    pools = fc.Pools([0, 2, 4], ad_id=[1, 2, 3, 2], score=[10., 5., 1., .5],
                     value=[1., 20., 300., 4000.], m=2)
    filt = fc.auction_replay(pools, slots=1, backend=backend)
    rerun = fc.auction_replay(pools, slots=1, mode="rerun", backend=backend)
    assert filt.tolist() == [[0.0, 1.0, 20.0, 1.0]]
    assert rerun.tolist() == [[0.0, 1.0, 300.0, 1.0]]


def test_gsp_prices_by_hand(backend):
    pools = fc.Pools([0, 3], ad_id=[1, 2, 3], score=[3., 2., 1.], value=[9., 9., 9.], m=1)
    # reserve 0: winners pay the next score, 2 and 1
    assert fc.auction_replay(pools, 2, pricing="gsp", backend=backend)[0, 1] == 3.0
    # reserve 1.5 drops ad 3; the second winner pays the reserve
    assert fc.auction_replay(pools, 2, 1.5, pricing="gsp", backend=backend)[0, 1] == 3.5
    # one winner, capacity 1 keeps only the best prerank (= score): it pays the reserve
    assert fc.auction_replay(pools, 1, 0.5, 1, pricing="gsp", backend=backend)[0, 1] == 0.5


def test_filter_gsp_price_from_below_the_sorted_part(backend):
    """Action 0 has one ad, A (score 1); action 1 has B 10, C 9, D 0.5. Filter
    sorts the full pool only down to score 1, but A's GSP price is the score
    of D, the next ad of the full ranking B, C, A, D."""
    pools = fc.Pools([0, 1, 4], ad_id=[1, 2, 3, 4], score=[1., 10., 9., .5],
                     value=[7., 7., 7., 7.], m=2)
    got = fc.auction_replay(pools, 1, pricing="gsp", backend=backend)
    want, _ = ref.auction_request(ref.auction_actions(pools.offsets, pools.ad_id, pools.score,
                                                      pools.value, None, 2, 0), 1,
                                  pricing="gsp")
    assert got.tolist() == [[0.0, 0.5, 9.0, 9.0]] == [want.tolist()]


def test_filter_gsp_price_from_an_ad_no_action_keeps(backend):
    """Filter keeps, per action, its best `slots` ads by best score; a GSP
    price can still read an ad that no action keeps. With slots=1 action 0
    keeps ad 1 (score 100) and action 1 ad 10 (50), but ad 1 pays ad 2's
    score (99) and ad 10 pays ad 6's (49.5): the next ads of the full pool,
    which neither action keeps."""
    pools = fc.Pools([0, 6, 8], ad_id=[1, 2, 3, 4, 5, 6, 10, 11],
                     score=[100., 99., 98., 97., 96., 49.5, 50., 10.], value=[1.] * 8, m=2)
    assert fc.auction_replay(pools, 1, pricing="gsp", backend=backend).tolist() == [
        [0.0, 99.0, 49.5, 99.0]]
    actions = ref.auction_actions(pools.offsets, pools.ad_id, pools.score, pools.value, None, 2, 0)
    for slots in (2, 3, 7):
        want, _ = ref.auction_request(actions, slots, pricing="gsp")
        got = fc.auction_replay(pools, slots, pricing="gsp", backend=backend)[0]
        np.testing.assert_array_equal(got, want)


def test_repeated_ad_in_one_action_keeps_its_best_instance(backend):
    """An action lists ad 7 at 1.0, then ad 8, then ad 7 again at 5.0 (and
    ad 9 twice at the same score): the later, better instance of ad 7 must
    replace the kept one, the first of two equal ones stays."""
    pools = fc.Pools([0, 5], ad_id=[7, 8, 7, 9, 9], score=[1., 2., 5., 3., 3.],
                     value=[10., 20., 70., 90., 95.], m=1)
    for mode in ("filter", "rerun"):
        assert fc.auction_replay(pools, 1, mode=mode, backend=backend)[0, 1] == 70.0
        assert fc.auction_replay(pools, 2, mode=mode, backend=backend)[0, 1] == 160.0
        assert fc.auction_replay(pools, 3, mode=mode, backend=backend)[0, 1] == 180.0
        assert fc.auction_replay(pools, 2, mode=mode, pricing="gsp",
                                 backend=backend)[0, 1] == 3.0 + 2.0


def test_capacity_uses_prerank_not_score(backend):
    pools = fc.Pools([0, 3], ad_id=[1, 2, 3], score=[3., 2., 1.], value=[10., 20., 30.], m=1,
                     prerank=[0., 5., 4.])
    # capacity 2 keeps ads 2 and 3 (preranks 5, 4); ad 2 then wins on score
    assert fc.auction_replay(pools, 1, capacity=2, backend=backend)[0, 1] == 20.0
    assert fc.auction_replay(pools, 2, capacity=2, backend=backend)[0, 1] == 50.0


def test_dedup_keeps_highest_score_instance_with_ties_to_lowest_action(backend):
    # ad 5 appears in both actions with equal scores: action 0's value counts
    pools = fc.Pools([0, 1, 2], ad_id=[5, 5], score=[2., 2.], value=[1., 7.], m=2)
    assert fc.auction_replay(pools, 1, mode="rerun", backend=backend).tolist() == [[0, 1, 7, 1]]
    # within one action the first listed of equal-score duplicates counts
    pools = fc.Pools([0, 2], ad_id=[5, 5], score=[2., 2.], value=[3., 4.], m=1)
    assert fc.auction_replay(pools, 1, backend=backend)[0, 1] == 3.0


def test_filter_equals_rerun_with_one_score_per_ad(rng, backend):
    """docs/design.md: with one score per ad, no capacity and first pricing the two
    modes give the same table."""
    m, n_requests = 5, 300
    lengths = rng.integers(0, 12, n_requests * m)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    request = np.repeat(np.arange(n_requests * m) // m, lengths)
    ad = rng.integers(0, 15, offsets[-1])
    ad_score = rng.choice([0.5, 1.0, 2.0, 3.0, 4.0], (n_requests, 15))
    ad_value = rng.random((n_requests, 15))
    pools = fc.Pools(offsets, ad, ad_score[request, ad], ad_value[request, ad], m=m)
    for reserve in (0.0, 1.5):
        filt = fc.auction_replay(pools, 3, reserve, backend=backend)
        rerun = fc.auction_replay(pools, 3, reserve, mode="rerun", backend=backend)
        np.testing.assert_array_equal(filt, rerun)
        assert np.any(filt[:, -1] > 0)


def test_padded_and_csr_agree(rng, backend):
    B, m, K = 40, 3, 6
    ad = rng.integers(-1, 6, (B, m, K))
    score = rng.choice([0.5, 1., 2.], (B, m, K))
    score[ad < 0] = np.nan  # padding is ignored, whatever it holds
    value = rng.random((B, m, K))
    padded = fc.Pools.from_padded(ad, score.astype(np.float32), value)
    keep = ad >= 0
    csr = fc.Pools(np.concatenate([[0], np.cumsum(keep.sum(-1).ravel())]), ad[keep],
                   score[keep].astype(np.float32), value[keep], m=m)
    assert padded.m == m and padded.score.dtype == np.float64
    for mode in ("filter", "rerun"):
        np.testing.assert_array_equal(fc.auction_replay(padded, 2, mode=mode, backend=backend),
                                      fc.auction_replay(csr, 2, mode=mode, backend=backend))


def test_threads_out_and_winner_sums(rng, backend):
    pools = fc.synthetic.sponsored_search(3000, seed=3)
    one = fc.auction_replay(pools, pricing="gsp", mode="rerun", threads=1, backend=backend)
    out = np.full((3000, 32), np.nan)
    two = fc.auction_replay(pools, pricing="gsp", mode="rerun", threads=2, out=out,
                            backend=backend)
    assert two is out
    np.testing.assert_array_equal(one, two)
    detail = fc.auction_winners(pools, pricing="gsp", mode="rerun", backend=backend)
    np.testing.assert_array_equal(detail.table, one)
    np.testing.assert_allclose(detail.earnings.sum(-1), one, rtol=1e-12, atol=1e-12)
    assert ((detail.ad_id >= 0).sum(-1) <= 4).all() and (detail.ad_id[:, 0] == -1).all()


def test_value_nan_propagates_only_where_that_ad_wins(backend):
    pools = fc.Pools([0, 1, 2], ad_id=[1, 2], score=[2., 1.], value=[np.nan, 1.], m=2)
    y = fc.auction_replay(pools, 1, mode="rerun", backend=backend)[0]
    assert np.isnan(y[1]) and y[2] == 1.0 and np.isnan(y[3]) and y[0] == 0.0


def test_sixteen_actions(backend):
    m = 16
    offsets = np.zeros(m + 1, dtype=np.int64)
    offsets[m] = 1  # the only instance belongs to action 15
    pools = fc.Pools(offsets, [4], [1.0], [2.5], m=m)
    y = fc.auction_replay(pools, backend=backend)[0]
    masks = np.arange(1 << m)
    np.testing.assert_array_equal(y, np.where(masks >> 15 & 1, 2.5, 0.0))


def test_empty_batch(backend):
    pools = fc.Pools([0], [], [], [], m=3)
    assert fc.auction_replay(pools, backend=backend).shape == (0, 8)


# --- malformed input ---------------------------------------------------------

GOOD = dict(offsets=[0, 2, 3], ad_id=[1, 2, 1], score=[1., 2., 3.], value=[1., 1., 1.], m=2)


@pytest.mark.parametrize("change,error,match", [
    (dict(offsets=[0, 3, 2, 3, 3], m=2), ValueError, r"request 0 \(action 1\)"),
    (dict(offsets=[0, 2, 3, 3, 1], m=2), ValueError, r"request 1 \(action 1\)"),
    (dict(offsets=[1, 2, 3]), ValueError, r"offsets\[0\]"),
    (dict(offsets=[0, 2, 4]), ValueError, r"offsets\[-1\]"),
    (dict(offsets=[0, 2]), ValueError, r"B\*m \+ 1"),
    (dict(offsets=[0., 2., 3.]), TypeError, "offsets"),
    (dict(score=[1., np.nan, 3.]), ValueError, r"score must be finite: request 0 \(action 0\)"),
    (dict(score=[1., 2., np.inf]), ValueError, r"request 0 \(action 1\)"),
    (dict(prerank=[0., 0., np.nan]), ValueError, "prerank must be finite"),
    (dict(score=[1., 2.]), ValueError, "score must have shape"),
    (dict(value=[1., 2., 3., 4.]), ValueError, "value must have shape"),
    (dict(prerank=[1.]), ValueError, "prerank must have shape"),
    (dict(ad_id=[1.5, 2., 1.]), TypeError, "ad_id"),
    (dict(ad_id=[[1, 2, 1]]), ValueError, "ad_id must be 1-D"),
    (dict(score=["a", "b", "c"]), TypeError, "score"),
    (dict(value=None), TypeError, "value"),
    (dict(m=0), ValueError, "m must be >= 1"),
    (dict(m=17), ValueError, "m must be <= 16"),
    (dict(m=2.0), TypeError, "m must be an integer"),
])
def test_pools_rejects_malformed_input(change, error, match):
    with pytest.raises(error, match=match):
        fc.Pools(**{**GOOD, **change})


def test_pools_are_read_only():
    pools = fc.Pools(**GOOD)
    with pytest.raises(AttributeError):
        pools.m = 3
    with pytest.raises(ValueError):
        pools.score[0] = 5.0
    assert "n_requests=1" in repr(pools) and len(pools) == 1


@pytest.mark.parametrize("args,error,match", [
    (([[1, 2]], [[1., 2.]], [[1., 2.]]), ValueError, r"\(B, m, K\)"),
    ((np.ones((1, 2, 2), int), np.ones((1, 2, 3)), np.ones((1, 2, 2))), ValueError,
     "score must have shape"),
    ((np.ones((1, 2, 2), int), np.ones((1, 2, 2)), np.ones((1, 2, 2)), np.ones(2)),
     ValueError, "prerank must have shape"),
    ((np.ones((1, 17, 2), int), np.ones((1, 17, 2)), np.ones((1, 17, 2))), ValueError,
     "m must be <= 16"),
    ((np.ones((1, 2, 2)), np.ones((1, 2, 2)), np.ones((1, 2, 2))), TypeError, "ad_id"),
    ((np.ones((1, 2, 2), int), None, np.ones((1, 2, 2))), TypeError, "score"),
])
def test_from_padded_rejects_malformed_input(args, error, match):
    with pytest.raises(error, match=match):
        fc.Pools.from_padded(*args)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(slots=0), ValueError, "slots must be >= 1"),
    (dict(slots=-2), ValueError, "slots must be >= 1"),
    (dict(slots=1.5), TypeError, "slots"),
    (dict(reserve=np.nan), ValueError, "reserve"),
    (dict(reserve="1"), TypeError, "reserve"),
    (dict(capacity=0), ValueError, "capacity must be >= 1"),
    (dict(pricing="second"), ValueError, "pricing"),
    (dict(mode="replay"), ValueError, "mode"),
    (dict(threads=0), ValueError, "threads"),
    (dict(backend="fortran"), ValueError, "backend"),
    (dict(out=np.empty((1, 3))), ValueError, "out must have shape"),
    (dict(out=np.empty((1, 4), dtype=np.float32)), TypeError, "out must have dtype"),
])
def test_replay_rejects_bad_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        fc.auction_replay(fc.Pools(**GOOD), **kwargs)


def test_replay_rejects_non_pools():
    with pytest.raises(TypeError, match="pools must be a fastcredit.Pools"):
        fc.auction_replay(np.zeros((2, 4)))
    with pytest.raises(TypeError, match="pools"):
        fc.auction_winners({"offsets": [0]})
    with pytest.raises(ValueError, match="mode"):
        fc.auction_winners(fc.Pools(**GOOD), mode="x")


def test_c_kernel_rejects_inconsistent_arguments():
    """The C boundary checks its arguments even past Python's validation."""
    if "c" not in BACKENDS:
        pytest.skip("C backend not built")
    from fastcredit._c import auction as c_auction
    pools = fc.Pools(**GOOD)
    out = np.zeros((1, 4))
    none = np.empty((1, 1, 1), dtype=np.int64), np.empty((1, 1, 1))
    args = [pools.offsets, pools.ad_id, pools.score, pools.value, np.empty(0), 2, 0, 1, 1,
            0.0, 0, 0, 0, out, *none]
    for index, bad in [(7, 2), (8, 0), (11, 2), (12, 5), (10, -1)]:
        broken = list(args)
        broken[index] = bad
        with pytest.raises(ValueError, match="fc_auction_replay"):
            c_auction.replay(*broken)
    broken_offsets = np.array([0, 3, 2], dtype=np.int64)
    with pytest.raises(ValueError, match="fc_auction_replay"):
        c_auction.replay(broken_offsets, *args[1:])


@pytest.mark.parametrize("mode", ["filter", "rerun"])
@pytest.mark.parametrize("pricing", ["first", "gsp"])
def test_extreme_ad_ids_match_oracle(mode, pricing, backend):
    """Ads INT64_MAX and INT64_MIN, repeated within and across actions and
    in score ties: the kept lists of both backends start as padding keys
    (-inf, INT64_MAX), which no real ad may be mistaken for."""
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    actions = [[(big, 1.0, 1.0, 0.0), (3, 2.0, 2.0, 0.0), (big, 4.0, 3.0, 0.0)],
               [(small, 1.0, 5.0, 0.0), (big, 1.0, 7.0, 0.0), (4, 0.5, 11.0, 0.0)],
               [(big, 0.25, 13.0, 0.0), (small, 3.0, 17.0, 0.0)]]
    flat = [x for action in actions for x in action]
    pools = fc.Pools([0, 3, 6, 8], [x[0] for x in flat], [x[1] for x in flat],
                     [x[2] for x in flat], m=3)
    for slots in (1, 2, 3):
        want, _ = ref.auction_request(actions, slots, 0.0, None, pricing, mode)
        got = fc.auction_replay(pools, slots, pricing=pricing, mode=mode, backend=backend)
        np.testing.assert_array_equal(got[0], want)
