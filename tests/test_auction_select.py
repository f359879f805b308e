"""The vector selection of the Numba auction kernel: the int64 vector and
lane-mask intrinsics of fastcredit/_numba/_simd.py bit for bit against
NumPy, and each action's kept ads (vector lists of at most 8, scalar
lists past 8) against the oracle and the C kernel on requests made of ties
and repeated ads."""
import numpy as np
import pytest
from llvmlite import ir
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import intrinsic

import fastcredit as fc
import reference as ref
from fastcredit._numba._simd import (bits8, i64x8, int_lane, lane, load8, select8, shift_down8,
                                     shift_up8, splat8)

from conftest import BACKENDS


@intrinsic
def _load_int8(typingctx, a):
    """a[0:8] of an int64 array as an i64x8 (test input only)."""
    if not (isinstance(a, types.Array) and a.dtype == types.int64 and a.layout == "C"):
        return None

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        vector = ir.VectorType(ir.IntType(64), 8).as_pointer()
        return builder.load(builder.bitcast(data, vector), align=8)  # numpy aligns to 8 only

    return i64x8(a), codegen


@njit
def _ints(v):
    out = np.empty(8, dtype=np.int64)
    for j in range(8):
        out[j] = int_lane(v, j)
    return out


@njit
def _floats(v):
    out = np.empty(8)
    for j in range(8):
        out[j] = lane(v, j)
    return out


def _lanes(bits):
    return np.array([bits >> j & 1 for j in range(8)], dtype=bool)


@njit
def _comparisons(i, k):
    iv, kv = _load_int8(i), _load_int8(k)
    return (bits8(iv > kv), bits8(iv < kv), bits8(iv == kv), bits8(iv >= kv), bits8(iv <= kv),
            bits8(iv > -1), bits8(7 == iv))


@njit
def _selects(mask, x, y, i, k):
    mv = _load_int8(mask) != 0
    return (_floats(select8(mv, load8(x, 0), load8(y, 0))),
            _ints(select8(mv, _load_int8(i), _load_int8(k))), _ints(select8(mv, _load_int8(i), -1)))


@njit
def _splats(s, a):
    return _floats(splat8(s)), _ints(splat8(a)), bits8(splat8(True)), bits8(splat8(False))


@njit
def _shifts(x, pad, i, ipad, c):
    xs, ps, iv, ip = load8(x, 0), load8(pad, 0), _load_int8(i), _load_int8(ipad)
    cv = _load_int8(c) != 0
    return (_floats(shift_up8(xs, ps, 0)), _floats(shift_up8(xs, ps, 1)),
            _floats(shift_up8(xs, ps, 3)), _floats(shift_up8(xs, ps, 8)),
            _floats(shift_down8(xs, ps, 1)), _floats(shift_down8(xs, ps, 5)),
            _ints(shift_up8(iv, ip, 2)), _ints(shift_down8(iv, ip, 1)),
            _ints(shift_down8(iv, ip, 7)), bits8(shift_up8(cv, splat8(True), 1)),
            bits8(shift_down8(cv, splat8(False), 3)))


_SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, 2.5])
_EXTREME = np.array([0, 1, -1, np.iinfo(np.int64).max, np.iinfo(np.int64).min, 7], dtype=np.int64)


def _draws(rng):
    x = rng.choice(_SPECIAL, 8)
    y = np.where(rng.random(8) < 0.4, x, rng.choice(_SPECIAL, 8))  # equal lanes too
    i = rng.choice(_EXTREME, 8)
    k = np.where(rng.random(8) < 0.4, i, rng.choice(_EXTREME, 8))
    return x, y, i, k


def test_int_lane_comparisons_are_numpys_signed_ones(rng):
    for _ in range(50):
        _, _, i, k = _draws(rng)
        want = [i > k, i < k, i == k, i >= k, i <= k, i > -1, i == 7]
        for got, w in zip(_comparisons(i, k), want):
            np.testing.assert_array_equal(_lanes(got), w)


def test_select_takes_lanes_where_the_mask_is_set(rng):
    for _ in range(50):
        x, y, i, k = _draws(rng)
        mask = rng.choice(_EXTREME, 8)
        fx, ii, ic = _selects(mask, x, y, i, k)
        np.testing.assert_array_equal(fx.view(np.int64), np.where(mask != 0, x, y).view(np.int64))
        np.testing.assert_array_equal(ii, np.where(mask != 0, i, k))
        np.testing.assert_array_equal(ic, np.where(mask != 0, i, -1))


def test_splat_fills_every_lane_bit_for_bit():
    for s, a in ((-0.0, np.iinfo(np.int64).min), (np.nan, -1), (-np.inf, 3)):
        f, i, every, none = _splats(s, a)
        np.testing.assert_array_equal(f.view(np.int64), np.full(8, s).view(np.int64))
        np.testing.assert_array_equal(i, np.full(8, a, dtype=np.int64))
        assert (every, none) == (255, 0)


def _shifted(x, pad, by):
    """x moved `by` lanes up (by > 0) or down (by < 0), vacated lanes from pad."""
    out = pad.copy()
    for j in range(8):
        if 0 <= j - by < 8:
            out[j] = x[j - by]
    return out


def test_lane_shifts_fill_from_the_padding_vector(rng):
    for _ in range(20):
        x, pad, i, ipad = _draws(rng)
        c = rng.choice(_EXTREME, 8)
        got = _shifts(x, pad, i, ipad, c)
        want = [_shifted(x, pad, b) for b in (0, 1, 3, 8, -1, -5)]
        want += [_shifted(i, ipad, b) for b in (2, -1, -7)]
        for g, w in zip(got[:9], want):
            np.testing.assert_array_equal(g.view(np.int64), w.view(np.int64))
        np.testing.assert_array_equal(_lanes(got[9]), _shifted(c != 0, np.ones(8, bool), 1))
        np.testing.assert_array_equal(_lanes(got[10]), _shifted(c != 0, np.zeros(8, bool), -3))


def test_shift_needs_a_constant_amount():
    @njit
    def moved(x, by):
        return shift_up8(load8(x, 0), load8(x, 0), by)

    with pytest.raises(TypingError):
        moved(np.zeros(8), 1)


def _pools(actions, m):
    offsets = np.concatenate([[0], np.cumsum([len(a) for a in actions])])
    cols = np.array([x for a in actions for x in a], dtype=float).reshape(-1, 4)
    return fc.Pools(offsets, cols[:, 0].astype(np.int64), cols[:, 1], cols[:, 2], m=m,
                    prerank=cols[:, 3])


@pytest.mark.parametrize("m", [1, 3, 4, 5, 9])
@pytest.mark.parametrize("mode", ["filter", "rerun"])
def test_kept_lists_of_up_to_and_past_eight_match_oracle(rng, m, mode):
    """Lists of 1 .. 10 kept ads (slots up to 9, GSP reruns keep one more;
    capacity keeps whole actions of up to 12 items): the vector lists, their
    groups of up to 4 actions, and the scalar lists past 8 lanes; few ads
    and few scores, so that every request repeats ads and ties."""
    for _ in range(6):
        actions = [[(int(rng.integers(0, 6)), float(rng.integers(0, 5)), float(rng.random()),
                     float(rng.integers(0, 3))) for _ in range(rng.integers(0, 13))]
                   for _ in range(m)]
        pools = _pools(actions, m)
        for slots in (1, 4, 8, 9):
            for pricing in ("first", "gsp"):
                for capacity in (None, 3):
                    want, _ = ref.auction_request(actions, slots, 1.0, capacity, pricing, mode)
                    for backend in BACKENDS:
                        got = fc.auction_replay(pools, slots, 1.0, capacity, pricing, mode,
                                                backend=backend)
                        np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=0)


@pytest.mark.skipif("c" not in BACKENDS, reason="C backend not built")
@pytest.mark.parametrize("mode", ["filter", "rerun"])
@pytest.mark.parametrize("pricing", ["first", "gsp"])
def test_numba_selection_is_cs_bit_for_bit(mode, pricing):
    """The sponsored-search workload of the benchmark, with and without
    winners: the kept keys decide every entry, so the tables and winners of
    both backends are the same bits."""
    pools = fc.synthetic.sponsored_search(300, seed=3)
    for slots in (2, 4, 7):
        c = fc.auction_replay(pools, slots, pricing=pricing, mode=mode, backend="c")
        nb = fc.auction_replay(pools, slots, pricing=pricing, mode=mode, backend="numba")
        np.testing.assert_array_equal(nb.view(np.int64), c.view(np.int64))
    c = fc.auction_winners(pools, pricing=pricing, mode=mode, backend="c")
    nb = fc.auction_winners(pools, pricing=pricing, mode=mode, backend="numba")
    for name in ("table", "ad_id", "earnings"):
        np.testing.assert_array_equal(getattr(nb, name).view(np.int64),
                                      getattr(c, name).view(np.int64))

