"""The Numba auction's selection by extraction and merge of the kept lists:
the lane intrinsics they stand on (fastcredit/_numba/_simd.py and _simd_lanes.py: int64
comparisons, selects, sums, loads and stores, lane reductions, masked loads
and gathers, first_lanes) bit for bit against NumPy, the kept keys of each
list against a model of select_scalar in csrc/auction.c (both modes, lists
of 0 .. 40 items, 1 .. 9 kept ads, ties, repeated ads, floors), the merged
lists against a model of merge_lists (ties of scores across actions, ads
kept by several actions, 0 .. 96 items: past 64 the full key alone), and
whole requests against the oracle and the C kernel."""
import ctypes
import mmap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit, types
from numba.extending import intrinsic

import fastcredit as fc
import reference as ref
from fastcredit._numba import _auction_merged, _auction_select
from fastcredit._numba._simd import (i64x8, lane, load8, prefetch, store8)
from fastcredit._numba._simd_lanes import (bits8, first_lanes, gather8, load_lanes8, max_lanes,
                                           min_lanes, select8, splat8)

from conftest import BACKENDS

I64 = np.iinfo(np.int64)
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, 2.5])
EXTREME = np.array([0, 1, -1, I64.max, I64.min, 7, I64.max - 1], dtype=np.int64)


@intrinsic
def _int_lane(typingctx, x, i):
    """Lane i of an I64x8 (test read-out only)."""
    if x != i64x8 or not isinstance(i, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.extract_element(args[0], args[1])

    return types.int64(i64x8, types.intp), codegen


@njit
def _ints(v):
    out = np.empty(8, dtype=np.int64)
    for j in range(8):
        out[j] = _int_lane(v, j)
    return out


@njit
def _floats(v):
    out = np.empty(8)
    for j in range(8):
        out[j] = lane(v, j)
    return out


def _lanes(bits):
    return np.array([bits >> j & 1 for j in range(8)], dtype=bool)


def _bits(x):
    return np.asarray(x, dtype=np.float64).view(np.int64)


def _draws(rng):
    x = rng.choice(SPECIAL, 8)
    y = np.where(rng.random(8) < 0.4, x, rng.choice(SPECIAL, 8))  # equal lanes too
    i = rng.choice(EXTREME, 8)
    k = np.where(rng.random(8) < 0.4, i, rng.choice(EXTREME, 8))
    return x, y, i, k


# --- int64 lanes, selects, splats ---------------------------------------------

@njit
def _comparisons(i, k):
    iv, kv = load_lanes8(i, 0, 8, 0), load_lanes8(k, 0, 8, 0)
    return (bits8(iv > kv), bits8(iv < kv), bits8(iv == kv), bits8(iv >= kv), bits8(iv <= kv),
            bits8(iv > -1), bits8(7 == iv))


@njit
def _selects(mask, x, y, i, k):
    mv = load_lanes8(mask, 0, 8, 0) != 0
    return (_floats(select8(mv, load_lanes8(x, 0, 8, 0.0), load_lanes8(y, 0, 8, 0.0))),
            _ints(select8(mv, load_lanes8(i, 0, 8, 0), load_lanes8(k, 0, 8, 0))),
            _ints(select8(mv, load_lanes8(i, 0, 8, 0), -1)))


@njit
def _splats(s, a):
    return _floats(splat8(s)), _ints(splat8(a)), bits8(splat8(True)), bits8(splat8(False))


def test_int_lane_comparisons_are_numpys_signed_ones(rng):
    for _ in range(50):
        _, _, i, k = _draws(rng)
        want = [i > k, i < k, i == k, i >= k, i <= k, i > -1, i == 7]
        for got, w in zip(_comparisons(i, k), want):
            np.testing.assert_array_equal(_lanes(got), w)


def test_select_takes_lanes_where_the_mask_is_set(rng):
    for _ in range(50):
        x, y, i, k = _draws(rng)
        mask = rng.choice(EXTREME, 8)
        fx, ii, ic = _selects(mask, x, y, i, k)
        np.testing.assert_array_equal(_bits(fx), _bits(np.where(mask != 0, x, y)))
        np.testing.assert_array_equal(ii, np.where(mask != 0, i, k))
        np.testing.assert_array_equal(ic, np.where(mask != 0, i, -1))


def test_splat_fills_every_lane_bit_for_bit():
    for s, a in ((-0.0, I64.min), (np.nan, -1), (-np.inf, I64.max)):
        f, i, every, none = _splats(s, a)
        np.testing.assert_array_equal(_bits(f), _bits(np.full(8, s)))
        np.testing.assert_array_equal(i, np.full(8, a, dtype=np.int64))
        assert (every, none) == (255, 0)


@njit
def _int_arithmetic(i, k, out):
    iv, kv = load8(i, 0), load8(k, 0)
    store8(out, 0, iv + kv)
    store8(out, 8, iv - kv)
    store8(out, 16, iv + 1)
    store8(out, 24, 7 - kv)


def test_int_lanes_add_subtract_load_and_store_as_numpy_wrapping(rng):
    for _ in range(50):
        _, _, i, k = _draws(rng)
        out = np.zeros(40, dtype=np.int64)
        _int_arithmetic(i, k, out)
        with np.errstate(over="ignore"):
            want = np.concatenate([i + k, i - k, i + np.int64(1), np.int64(7) - k])
        np.testing.assert_array_equal(out[:32], want)
        assert (out[32:] == 0).all()  # store8 writes 8 lanes, no more


@njit
def _first_lane_bits(n):
    return bits8(first_lanes(n))


def test_first_lanes_are_the_lanes_below_n():
    for n in (I64.min, -9, -1, 0, 1, 3, 7, 8, 9, 64, I64.max):
        assert _first_lane_bits(n) == (1 << max(0, min(n, 8))) - 1


# --- lane reductions ------------------------------------------------------------

def _butterfly(x, wins):
    """The documented order of max_lanes / min_lanes, one lane at a time."""
    x = x.copy()
    for d in (4, 2, 1):
        y = x[np.arange(8) ^ d]
        x = np.where(wins(x, y), x, y)
    return x


@njit
def _extremes(x, i):
    xv, iv = load_lanes8(x, 0, 8, 0.0), load_lanes8(i, 0, 8, 0)
    return _floats(max_lanes(xv)), _floats(min_lanes(xv)), _ints(max_lanes(iv)), _ints(min_lanes(iv))


def test_lane_extremes_follow_the_butterfly_bit_for_bit(rng):
    with np.errstate(invalid="ignore"):
        for _ in range(200):
            x, _, i, _ = _draws(rng)
            fmax, fmin, imax, imin = _extremes(x, i)
            np.testing.assert_array_equal(_bits(fmax), _bits(_butterfly(x, np.greater)))
            np.testing.assert_array_equal(_bits(fmin), _bits(_butterfly(x, np.less)))
            np.testing.assert_array_equal(imax, np.full(8, i.max()))
            np.testing.assert_array_equal(imin, np.full(8, i.min()))
            if not np.isnan(x).any():  # every lane the extreme (either zero)
                assert (fmax == x.max()).all() and (fmin == x.min()).all()


# --- masked loads and gathers ---------------------------------------------------

@njit
def _load_floats(a, i, n, pad):
    return _floats(load_lanes8(a, i, n, pad))


@njit
def _load_ints(a, i, n, pad):
    return _ints(load_lanes8(a, i, n, pad))


@njit
def _load_padded_by_vector(a, i, n, pad):
    return _ints(load_lanes8(a, i, n, load_lanes8(pad, 0, 8, 0)))


def _first(a, i, n, pad):
    out = np.array(np.broadcast_to(pad, 8), dtype=a.dtype)
    n = max(0, min(n, 8))
    out[:n] = a[i:i + n]
    return out


def test_load_lanes_takes_the_first_n_and_pads_the_rest(rng):
    f = rng.choice(SPECIAL, 20)
    k = rng.choice(EXTREME, 20)
    pad = rng.choice(EXTREME, 8)
    for i in (0, 3, 12):
        for n in (-3, 0, 1, 5, 8, 9, 100):
            if i + max(0, min(n, 8)) > 20:
                continue
            np.testing.assert_array_equal(_bits(_load_floats(f, i, n, -0.0)),
                                          _bits(_first(f, i, n, -0.0)))
            np.testing.assert_array_equal(_load_ints(k, i, n, I64.min), _first(k, i, n, I64.min))
            np.testing.assert_array_equal(_load_padded_by_vector(k, i, n, pad),
                                          _first(k, i, n, pad))


def _before_a_guard_page(dtype, count):
    """An array of count elements that ends where an unreadable page starts
    (a read past its end faults), and the mapping that holds it."""
    page = mmap.PAGESIZE
    buf = mmap.mmap(-1, 2 * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.mprotect(ctypes.c_void_p(base + page), page, 0) == 0  # PROT_NONE
    size = np.dtype(dtype).itemsize * count
    return np.frombuffer(buf, dtype=dtype, count=count, offset=page - size), buf


def test_load_lanes_reads_nothing_past_the_lanes_it_keeps():
    """A list that ends at its array's end, right before an unreadable page:
    loading 8 lanes from it would fault."""
    floats, fbuf = _before_a_guard_page(np.float64, 3)
    ints, ibuf = _before_a_guard_page(np.int64, 3)
    floats[:] = [1.5, -0.0, 2.0]
    ints[:] = [I64.max, -1, 4]
    np.testing.assert_array_equal(_bits(_load_floats(floats, 1, 2, np.inf)),
                                  _bits(_first(floats, 1, 2, np.inf)))
    np.testing.assert_array_equal(_load_ints(ints, 0, 3, 0), _first(ints, 0, 3, 0))
    np.testing.assert_array_equal(_load_ints(ints, 3, 0, 9), np.full(8, 9))
    del floats, ints
    fbuf.close()
    ibuf.close()


@njit
def _prefetched_sum(a, lo, hi):
    prefetch(a, lo, hi)
    return a.sum()


def test_prefetch_changes_nothing_and_reads_nothing_past_its_range():
    """Ranges ending at the array's end before an unreadable page, empty and
    reversed ranges: the values stay as they were (a prefetch compiled as a
    load past the end would fault; as a store, change them)."""
    floats, buf = _before_a_guard_page(np.float64, 21)
    floats[:] = np.arange(21) * 0.5
    expect = floats.sum()
    for lo, hi in ((0, 21), (20, 21), (13, 21), (5, 5), (9, 3), (0, 0)):
        assert _prefetched_sum(floats, lo, hi) == expect
    np.testing.assert_array_equal(floats, np.arange(21) * 0.5)
    del floats
    buf.close()


@njit
def _gathers(f, k, idx, mask, fpad, kpad):
    iv = load_lanes8(idx, 0, 8, 0)
    c = load_lanes8(mask, 0, 8, 0) != 0
    return _floats(gather8(f, iv, c, fpad)), _ints(gather8(k, iv, c, kpad))


def test_gather_reads_the_lanes_of_the_mask_only(rng):
    """Lanes left out hold indices far out of bounds (INT64 extremes): a read
    there would fault."""
    f = rng.choice(SPECIAL, 30)
    k = rng.choice(EXTREME, 30)
    for _ in range(50):
        mask = (rng.random(8) < 0.6).astype(np.int64)
        idx = np.where(mask != 0, rng.integers(0, 30, 8), rng.choice([I64.max, I64.min, -1], 8))
        got_f, got_k = _gathers(f, k, idx, mask, -np.inf, I64.min)
        safe = np.where(mask != 0, idx, 0)
        np.testing.assert_array_equal(_bits(got_f), _bits(np.where(mask != 0, f[safe], -np.inf)))
        np.testing.assert_array_equal(got_k, np.where(mask != 0, k[safe], I64.min))


# --- the kept keys of each list --------------------------------------------------

def _kept_model(ks, ka, keys, length, floor):
    """select_scalar of one list in csrc/auction.c: the keys k (k < 0
    skipped) of the best `length` distinct ads at or above floor by key
    (score desc, ad asc), each ad by its first item of its highest score."""
    best = {}
    for k in keys:
        if k < 0 or not ks[k] >= floor:
            continue
        a = ka[k]
        if a not in best or ks[k] > ks[best[a]]:
            best[a] = k
    ranked = sorted(best.values(), key=lambda k: (-ks[k], ka[k]))
    return ranked[:length]


def _select(ks, ka, kmap, use_map, off, length, floor):
    m = len(off) - 1
    top = np.full(m * length, -7, dtype=np.int64)
    top_n = np.zeros(m, dtype=np.int64)
    _auction_select.select_lists(ks, ka, kmap if use_map else top, use_map, off, 0, m,
                                 length, floor, top, top_n, np.zeros(length),
                                 np.zeros(length, dtype=np.int64))
    return [list(top[i * length:i * length + top_n[i]]) for i in range(m)]


_SCORES = [0.0, -0.0, 1.0, 1.0, 2.5, -3.0, 7.0, 1e300, -1e300]
_ADS = [0, 1, 2, 3, 5, I64.max, I64.min]

_list_sizes = st.lists(st.integers(0, 40), min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(sizes=_list_sizes, data=st.data(), length=st.integers(1, 9),
       floor=st.sampled_from([-np.inf, -3.0, 0.0, 1.0, 2.5]), base=st.integers(0, 3))
def test_rerun_lists_keep_select_scalars_keys(sizes, data, length, floor, base):
    """Items (score, ad) straight from the arrays: repeated ads within a
    list with equal and different scores, ties of scores across ads, +0.0
    and -0.0, lists of up to 40 items (past 32 and past 8 kept ads: the
    scalar path), offsets starting past 0."""
    n = base + sum(sizes)
    ks = np.array(data.draw(st.lists(st.sampled_from(_SCORES), min_size=n, max_size=n)))
    ka = np.array(data.draw(st.lists(st.sampled_from(_ADS), min_size=n, max_size=n)),
                  dtype=np.int64)
    off = np.cumsum([base] + sizes).astype(np.int64)
    got = _select(ks, ka, None, False, off, length, floor)
    for i in range(len(sizes)):
        assert got[i] == _kept_model(ks, ka, range(off[i], off[i + 1]), length, floor)


@settings(max_examples=150, deadline=None)
@given(sizes=_list_sizes, data=st.data(), length=st.integers(1, 9),
       floor=st.sampled_from([-np.inf, -3.0, 0.0, 1.0, 2.5]))
def test_filter_lists_keep_select_scalars_keys(sizes, data, length, floor):
    """Keys through a map into slots of distinct ads, as the filter's hash
    table: each list marks an ad's repeats ~slot, and the slots' scores
    tie."""
    n_slots = data.draw(st.integers(1, 12))
    ks = np.array(data.draw(st.lists(st.sampled_from(_SCORES), min_size=n_slots,
                                     max_size=n_slots)))
    ka = np.array(data.draw(st.permutations(list(range(-6, 6)) + [I64.max, I64.min]))[:n_slots],
                  dtype=np.int64)
    kmap = []
    for size in sizes:
        seen = set()
        for h in data.draw(st.lists(st.integers(0, n_slots - 1), min_size=size, max_size=size)):
            kmap.append(~h if h in seen else h)
            seen.add(h)
    kmap = np.array(kmap, dtype=np.int64)
    start = data.draw(st.integers(0, 50))  # the request's offsets need not start at 0
    off = np.cumsum([start] + sizes).astype(np.int64)
    got = _select(ks, ka, kmap, True, off, length, floor)
    for i in range(len(sizes)):
        keys = kmap[off[i] - start:off[i + 1] - start]
        assert got[i] == _kept_model(ks, ka, keys, length, floor)


# --- the merged lists ---------------------------------------------------------------

def _merge_model(ad, score, value, top, top_n, length):
    """merge_lists in csrc/auction.c: the kept items (instance x of action i)
    in order of (score desc, ad asc, x asc); each position's group (its ad's
    first position), gmask and entries."""
    items = [(top[i * length + j], i) for i in range(len(top_n)) for j in range(top_n[i])]
    items.sort(key=lambda it: (-score[it[0]], ad[it[0]], it[0]))
    n = len(items)
    inst = [x for x, _ in items]
    act = [i for _, i in items]
    grp, gmask, e_p = [], [0] * n, []
    for q in range(n):
        same = [r for r in range(q) if ad[inst[r]] == ad[inst[q]]]
        grp.append(same[0] if same else q)
        gmask[grp[q]] |= 1 << act[q]
        e_p.append(sum({1 << act[r] for r in same}))
    return dict(inst=inst, act=act, grp=grp, gmask=gmask, e_inst=inst,
                e_a=[1 << i for i in act], e_p=e_p, e_s=[score[x] for x in inst],
                e_w=[value[x] for x in inst])


def _merge(ad, score, value, top, top_n, length):
    """replay's merge steps on kept lists top / top_n (workspaces sized as
    replay's, the merge's ones holding stale values as after a request)."""
    size = len(top_n) * length
    ints = {k: np.full(size, -5, dtype=np.int64)
            for k in ("inst", "act", "grp", "gmask", "pick", "pool", "e_inst", "e_a", "e_p")}
    reals = {k: np.full(size, np.nan) for k in ("e_s", "e_w")}
    ks = np.full(size + 7, 3.0)
    ka, rank, ra = (np.full(size + 7, 2, dtype=np.int64) for _ in range(3))
    n = _auction_merged.kept_items(ad, score, len(top_n), length, top, top_n, ints["pick"],
                                   ints["pool"], ks, ka)
    if n > 64 or not _auction_select.count_ranks(ks, n, rank):
        _auction_select.rank_by_key(ks, ka, ints["pick"], n, rank)
    _auction_merged.place_ranked(ints["pick"], ints["pool"], ka, rank, n, ints["inst"],
                                 ints["act"], ra, ints["gmask"])
    _auction_merged.merged_entries(score, value, n, ints["inst"], ints["act"], ra, ints["grp"],
                                   ints["gmask"], ints["e_inst"], ints["e_a"], ints["e_p"],
                                   reals["e_s"], reals["e_w"])
    return {k: list(v[:n]) for k, v in {**ints, **reals}.items()}


@pytest.mark.parametrize("m, length", [(1, 1), (3, 5), (5, 9), (4, 16), (5, 13), (6, 16)])
@pytest.mark.parametrize("n_ads, scores", [(4, [1.0, 2.0, 0.0, -0.0]), (1000, None)])
def test_merged_lists_match_merge_lists(rng, m, length, n_ads, scores):
    """Full lists of 4 x 16 = 64 items (ranks of all 64 bits), 65 and 96
    (the full key alone), shorter ones; few scores (ties across actions:
    the full key, -0.0 equal to 0.0) or distinct ones (ranks by score
    alone); few ads (an ad kept by several actions, several times) or many."""
    for _ in range(20):
        n_inst = m * length + 10
        ad = rng.integers(-n_ads // 2, n_ads, n_inst).astype(np.int64)
        score = (rng.choice(scores, n_inst) if scores else rng.permutation(n_inst) / 7.0 - 3.0)
        value = rng.random(n_inst)
        top_n = np.where(rng.random(m) < 0.7, length, rng.integers(0, length + 1, m))
        top = rng.permutation(n_inst)[:m * length].astype(np.int64)  # each instance once
        got = _merge(ad, score, value, top, top_n, length)
        want = _merge_model(ad, score, value, top, top_n, length)
        for key, w in want.items():
            np.testing.assert_array_equal(np.asarray(got[key]).view(np.int64),
                                          np.asarray(w, dtype=np.asarray(got[key]).dtype)
                                          .view(np.int64), err_msg=key)


# --- whole requests ---------------------------------------------------------------

def _pools(actions, m):
    offsets = np.concatenate([[0], np.cumsum([len(a) for a in actions])])
    cols = np.array([x for a in actions for x in a], dtype=float).reshape(-1, 4)
    return fc.Pools(offsets, cols[:, 0].astype(np.int64), cols[:, 1], cols[:, 2], m=m,
                    prerank=cols[:, 3])


@pytest.mark.parametrize("m", [1, 3, 5])
@pytest.mark.parametrize("mode", ["filter", "rerun"])
def test_requests_of_up_to_forty_items_match_the_oracle(rng, m, mode, path):
    """Lists of 0 .. 40 items of few ads and few scores (every request
    repeats ads and ties), 1 .. 8 slots (1 .. 9 kept ads), reserves that
    scores equal, both pricings, with and without capacity; on every path
    of the C kernels."""
    for _ in range(3):
        actions = [[(int(rng.integers(0, 8)), float(rng.integers(0, 5)), float(rng.random()),
                     float(rng.integers(0, 3))) for _ in range(rng.integers(0, 41))]
                   for _ in range(m)]
        pools = _pools(actions, m)
        for slots in (1, 3, 8):
            for reserve in (0.0, 2.0):
                for pricing in ("first", "gsp"):
                    for capacity in (None, 3):
                        want, _ = ref.auction_request(actions, slots, reserve, capacity, pricing,
                                                      mode)
                        got = {b: fc.auction_replay(pools, slots, reserve, capacity, pricing,
                                                    mode, backend=b) for b in BACKENDS}
                        for table in got.values():
                            np.testing.assert_allclose(table[0], want, rtol=1e-12, atol=0)
                        if "c" in got:
                            np.testing.assert_array_equal(_bits(got["numba"]), _bits(got["c"]))


@pytest.mark.skipif("c" not in BACKENDS, reason="C backend not built")
@pytest.mark.parametrize("mode", ["filter", "rerun"])
@pytest.mark.parametrize("pricing", ["first", "gsp"])
def test_numba_selection_is_cs_bit_for_bit(mode, pricing, path):
    """The sponsored-search workload of the benchmark, with and without
    winners, slots 1 .. 8: the kept keys decide every entry, so the tables
    and winners of both backends are the same bits, on every path of the C
    kernels."""
    pools = fc.synthetic.sponsored_search(300, seed=3)
    for slots in (1, 2, 4, 7, 8):
        c = fc.auction_replay(pools, slots, pricing=pricing, mode=mode, backend="c")
        nb = fc.auction_replay(pools, slots, pricing=pricing, mode=mode, backend="numba")
        np.testing.assert_array_equal(_bits(nb), _bits(c))
    c = fc.auction_winners(pools, pricing=pricing, mode=mode, backend="c")
    nb = fc.auction_winners(pools, pricing=pricing, mode=mode, backend="numba")
    for name in ("table", "ad_id", "earnings"):
        np.testing.assert_array_equal(getattr(nb, name).view(np.int64),
                                      getattr(c, name).view(np.int64))
