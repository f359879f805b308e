"""The lane masks, selects and row/lane moves of fastcredit/_numba/_simd_lanes.py
(the Numba projection's lanes) against NumPy doing the same IEEE
operations one lane at a time, bit for bit (signed zeros and NaN
included); the C projection's lanes on every processor path against them."""
import os
import platform
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import literally, njit

from fastcredit._numba._simd import choose, if_greater, load8, opaque, store8
from fastcredit._numba._simd_lanes import (bits8, gather_strided, lanes8, lanes_to_rows,
                                           rows_to_lanes, select8, splat8)

SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-300, -2.5, 3.0])


def bits(x):
    return np.asarray(x, dtype=np.float64).view(np.int64)


def pairs(rng, n=64):
    """n groups of 8 lanes of (x, y) pairs mixing special values and
    random ones, every ordered pair of specials included."""
    a, b = np.meshgrid(SPECIALS, SPECIALS)
    x = np.concatenate([a.ravel(), rng.normal(size=8 * n - a.size)])
    y = np.concatenate([b.ravel(), rng.normal(size=8 * n - b.size)])
    return x, y


@njit
def _lane_ops(x, y, masks, out):
    for g in range(x.size // 8):
        a = load8(x, 8 * g)
        b = load8(y, 8 * g)
        masks[g, 0] = bits8(a < b)
        masks[g, 1] = bits8(a <= b)
        masks[g, 2] = bits8(a > b)
        masks[g, 3] = bits8(a >= b)
        masks[g, 4] = bits8(a == b)
        masks[g, 5] = bits8(~(a < b) & (a > 0.0) | (b == 1.0))
        masks[g, 6] = bits8(a < 0.5)
        masks[g, 7] = bits8(2.0 > b)
        masks[g, 8] = bits8(a != b)
        store8(out[0], 8 * g, select8(a < b, a, b))
        store8(out[1], 8 * g, select8(a > b, 7.0, splat8(-0.0)))
        store8(out[2], 8 * g, a / b)
        store8(out[3], 8 * g, a / 3.0)
        store8(out[4], 8 * g, 3.0 / a)
        above = select8(a < -0.0, -0.0, a)
        store8(out[5], 8 * g, select8(above > b, b, above))


def _as_bits(flags):
    """Bit l set where lane l of a group of 8 is True, per group."""
    return (flags.reshape(-1, 8) * (1 << np.arange(8))).sum(1)


def test_comparisons_selects_and_division_lane_by_lane(rng):
    x, y = pairs(rng)
    masks = np.zeros((x.size // 8, 9), dtype=np.int64)
    out = np.zeros((6, x.size))
    _lane_ops(x, y, masks, out)
    with np.errstate(all="ignore"):
        expect = [x < y, x <= y, x > y, x >= y, x == y, ~(x < y) & (x > 0) | (y == 1.0),
                  x < 0.5, 2.0 > y, x != y]
        for k, flags in enumerate(expect):
            np.testing.assert_array_equal(masks[:, k], _as_bits(flags), err_msg=str(k))
        above = np.where(x < -0.0, -0.0, x)
        values = [np.where(x < y, x, y), np.where(x > y, 7.0, -0.0), x / y, x / 3.0, 3.0 / x,
                  np.where(above > y, y, above)]
    for k, v in enumerate(values):
        np.testing.assert_array_equal(bits(out[k]), bits(v), err_msg=str(k))


def test_clip_keeps_signed_zeros_and_nan(rng):
    # min(hi, max(lo, x)) with lo = -0.0, hi = +0.0 (kappa 0): the selects
    # keep the sign of a zero x, turn nothing into NaN and keep NaN
    x = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 1e-310])
    out = np.zeros((6, 8))
    _lane_ops(x, np.zeros(8), np.zeros((1, 8), dtype=np.int64), out)
    np.testing.assert_array_equal(bits(out[5]), bits([0.0, -0.0, 0.0, -0.0, np.nan, 0.0,
                                                      -0.0, 0.0]))


@njit
def _choices(x, y, ints, out, same):
    for j in range(x.size):
        out[0, j] = choose(opaque(-np.int64(x[j] < y[j])), x[j], y[j])
        out[1, j] = choose(-np.int64(x[j] > y[j]), -0.0, x[j])
    for j in range(ints.size):
        same[j] = opaque(ints[j])


def test_choose_and_opaque(rng):
    # choose: the bits of one operand (signed zeros, NaN and infinities as
    # they are), whether its mask is hidden from LLVM or not; opaque: x
    x, y = pairs(rng)
    ints = np.concatenate([[0, -1, 1, np.iinfo(np.int64).min, np.iinfo(np.int64).max],
                           rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, 59)])
    out = np.zeros((2, x.size))
    same = np.zeros(ints.size, dtype=np.int64)
    _choices(x, y, ints, out, same)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(bits(out[0]), bits(np.where(x < y, x, y)))
        np.testing.assert_array_equal(bits(out[1]), bits(np.where(x > y, -0.0, x)))
    np.testing.assert_array_equal(same, ints)


@njit
def _if_greater_all(s, g, x, best, out):
    for j in range(s.size):
        out[j] = if_greater(s[j], g[j], x[j], best[j])


def test_if_greater_is_a_strict_ordered_comparison(rng):
    # x where s > g: not on equal values (0.0 and -0.0 included), not when
    # either is NaN; -inf below every other value
    s, g = pairs(rng)
    x = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, s.size)
    best = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, s.size)
    out = np.zeros(s.size, dtype=np.int64)
    _if_greater_all(s, g, x, best, out)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(out, np.where(s > g, x, best))


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="an x86 path")
def test_if_greater_without_avx(tmp_path):
    # the SSE form (ucomisd) Numba takes for a target without AVX, compiled
    # for the baseline x86-64 in a process of its own
    code = textwrap.dedent("""
        import numpy as np
        from numba import njit
        from fastcredit._numba._simd import if_greater
        @njit
        def f(s, g, x, b, out):
            for j in range(s.size):
                out[j] = if_greater(s[j], g[j], x[j], b[j])
        sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3.0, 5e-324])
        s, g = [a.ravel() for a in np.meshgrid(sp, sp)]
        x = np.arange(s.size, dtype=np.int64)
        b = -x - 1
        out = np.zeros_like(x)
        f(s, g, x, b, out)
        with np.errstate(invalid="ignore"):
            assert (out == np.where(s > g, x, b)).all()
        asm = f.inspect_asm(f.signatures[0])
        assert "ucomisd" in asm and "vucomisd" not in asm
    """)
    env = dict(os.environ, NUMBA_CPU_NAME="x86-64", NUMBA_CPU_FEATURES="",
               NUMBA_CACHE_DIR=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]


@njit
def _lane_masks(ints, out):
    for j in range(ints.size):
        for v in range(4):
            out[j, v] = bits8(lanes8(ints[j], v))


def test_lanes8_takes_a_byte_of_bits_as_lanes(rng):
    # lanes8(bits, v): lane l set iff bit 8v + l of bits is, whatever the other bits
    ints = np.concatenate([[0, -1, 1, 0xFF00FF00, np.iinfo(np.int64).min],
                           rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, 59)])
    out = np.zeros((ints.size, 4), dtype=np.int64)
    _lane_masks(ints, out)
    want = (ints.astype(np.uint64)[:, None] >> (8 * np.arange(4, dtype=np.uint64))) & 0xFF
    np.testing.assert_array_equal(out, want.astype(np.int64))


@njit
def _strided(a, start, step, out):
    store8(out, 0, gather_strided(a, start, step))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gather_strided(rng, dtype):
    a = rng.normal(size=40).astype(dtype)
    out = np.zeros(8)
    for start, step in [(0, 0), (3, 0), (1, 1), (2, 3), (39, -5)]:
        _strided(a, start, step, out)
        np.testing.assert_array_equal(out, a[start + step * np.arange(8)].astype(np.float64))
    _strided(a[::2], 1, 2, out)  # a view: the array's own stride
    np.testing.assert_array_equal(out, a[::2][1 + 2 * np.arange(8)])


@njit
def _round_trip(a, row, out, m):
    M = literally(m)
    U = np.empty(8 * M)
    rows_to_lanes(U, a, row, M)
    for i in range(M):
        store8(U, 8 * i, load8(U, 8 * i) * 2.0)
    lanes_to_rows(out, row, U, M)
    return U


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m", range(1, 9))
def test_rows_to_lanes_and_back(rng, m, dtype):
    # C-contiguous rows move by vector loads and shuffles, other layouts by
    # gathers and scatters: the same lanes either way; rows outside the 8
    # are not touched
    n, row = 13, 3
    a = rng.normal(size=(n, m)).astype(dtype)
    a[4, 0] = -0.0
    a[5, m - 1] = np.nan
    for source in (a, np.asfortranarray(a), np.repeat(a, 2, axis=1)[:, ::2]):
        for wide in (np.full((n, m), 5.0), np.full((n, 2 * m), 5.0)[:, ::2]):
            U = _round_trip(source, row, wide, m)
            lanes = a[row:row + 8].astype(np.float64).T
            np.testing.assert_array_equal(bits(U.reshape(m, 8)), bits(2.0 * lanes))
            expect = np.full((n, m), 5.0)
            expect[row:row + 8] = 2.0 * a[row:row + 8].astype(np.float64)
            np.testing.assert_array_equal(bits(wide), bits(expect))


def test_c_processor_paths_name_fastest_kernels():
    # the bench labels a C row with the path its kernels took
    # (fastcredit._c.paths.KERNELS): a key or path name that drifted from
    # FASTEST or PATHS would label rows wrongly
    import fastcredit as fc
    from fastcredit._backend import FASTEST
    if "c" not in fc.available_backends():
        pytest.skip("no C backend")
    from fastcredit._c import paths
    for key, names in paths.KERNELS.items():
        assert key in FASTEST, key
        assert set(names) <= set(paths.PATHS), key
        with paths.only():
            assert paths.taken_by(key) == []
        assert set(paths.taken_by(key)) == set(paths.taken()) & set(names)


@pytest.mark.parametrize("m", range(1, 9))
def test_c_lanes_with_infinite_bounds_and_breakpoints(rng, m, path):
    # The C lanes on every path: rows with an infinite upper bound (so
    # infinite breakpoints u_j - bound, which the scan leaves out), an
    # overflowing one and ordinary rows share groups of lanes; the same bits
    # as Numba's lanes and as each row alone
    import fastcredit as fc
    from fastcredit._backend import kernels
    if "c" not in fc.available_backends():
        pytest.skip("no C backend")
    n = 40
    u = 3.0 * rng.normal(size=(n, m))
    u[5, 0] = 1e308
    kappa = rng.choice([np.inf, 0.5, 1.0, 1e308], size=n)
    lo, hi = -kappa, np.where(kappa == 0.5, np.inf, kappa)
    total = rng.uniform(-0.3, 0.3, size=n) * m
    got = {}
    for backend in ("c", "numba"):
        got[backend] = np.full((n, m), 9.0)
        kernels("shaping", backend).project_box(u, lo, hi, 1, 0, None, 0, total, 1, got[backend])
    np.testing.assert_array_equal(bits(got["c"]), bits(got["numba"]))
    for r in (0, 5, 13, 39):
        alone = np.full((1, m), 9.0)
        kernels("shaping", "c").project_box(u[r:r + 1], lo[r:r + 1], hi[r:r + 1], 1, 0, None, 0,
                                            total[r:r + 1], 1, alone)
        np.testing.assert_array_equal(bits(alone[0]), bits(got["c"][r]), err_msg=f"row {r}")
