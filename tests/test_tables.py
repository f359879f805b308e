"""Both backends of every tables kernel against tests/reference.py."""
import math

import numpy as np
import pytest

import fastcredit as fc
import reference as ref

PER_GAME = {  # public function -> oracle on one table
    "shapley": ref.shapley,
    "banzhaf": ref.banzhaf,
    "singleton": ref.singleton,
    "leave_one_out": ref.leave_one_out,
    "size_resolved": ref.size_resolved,
    "pair_interactions": ref.pair_interactions,
    "moebius": ref.moebius,
    "from_moebius": ref.from_moebius,
}


def oracle(name, v):
    return ref.per_game(PER_GAME[name], v)


def close(got, want, v):
    scale = max(1.0, float(np.abs(v).max()))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-11 * scale)


# The moebius and size-resolved oracles are O(4**m); m = 11 is covered by
# test_large_game_transforms_and_size_resolved.
CASES = [(name, m) for name in sorted(PER_GAME) for m in range(1, 11)
         if m <= 8 or name not in ("moebius", "from_moebius", "size_resolved")]


@pytest.mark.parametrize("name,m", CASES)
def test_kernel_matches_reference(name, m, backend, rng):
    v = rng.normal(size=(3, 1 << m))
    got = getattr(fc, name)(v, backend=backend)
    close(got, oracle(name, v), v)


@pytest.mark.parametrize("name", sorted(PER_GAME))
def test_lead_shapes_float32_and_noncontiguous(name, backend, rng):
    m = 4
    v64 = rng.normal(size=(2, 3, 1 << m))
    for v in (v64.astype(np.float32), v64[:, ::2], v64[0, 0], np.asfortranarray(v64[0])):
        got = getattr(fc, name)(v, backend=backend)
        want = oracle(name, np.asarray(v, dtype=np.float64))
        assert got.shape == want.shape
        assert got.dtype == np.float64
        close(got, want, v)


@pytest.mark.parametrize("m", [3, 4, 5, 6, 7])
def test_shapley_is_the_average_over_all_orders(m, backend, rng):
    v = rng.normal(size=1 << m)
    close(fc.shapley(v, backend=backend), ref.shapley_by_orders(v), v)


def test_semivalue_general_weights(backend, rng):
    m = 6
    w = rng.random(m)
    v = rng.normal(size=(4, 1 << m))
    close(fc.semivalue(v, w, backend=backend), np.array([ref.semivalue(g, w) for g in v]), v)


@pytest.mark.parametrize("m", [16, 17])
def test_one_large_game_split_over_threads(m, backend, rng):
    v = rng.normal(size=1 << m)
    want = v @ ref.semivalue_matrix(m, fc.shapley_weights(m))
    one = fc.shapley(v, threads=1, backend=backend)
    two = fc.shapley(v, threads=2, backend=backend)
    close(one, want, v)
    close(two, want, v)
    close(fc.banzhaf(v[None], threads=2, backend=backend)[0],
          v @ ref.semivalue_matrix(m, fc.banzhaf_weights(m)), v)


def test_large_game_transforms_and_size_resolved(backend, rng):
    m = 11  # more than one cache block of 2**8 entries
    v = rng.normal(size=1 << m)
    a = fc.moebius(v, backend=backend)
    close(fc.from_moebius(a, backend=backend), v, v)
    # Shapley from the dividends: phi_i = sum over S containing i of a(S) / |S|
    masks = np.arange(1, 1 << m)
    sizes = np.bitwise_count(masks)
    member = (masks[:, None] >> np.arange(m)) & 1
    close(fc.shapley(v, backend=backend), (a[1:] / sizes) @ member, v)
    # a few entries of the dividends straight from the definition
    for s in (0, 5, 1 << 10, (1 << m) - 1):
        subsets = [t for t in range(1 << m) if t & s == t]
        want = sum((-1) ** bin(s & ~t).count("1") * v[t] for t in subsets)
        close(a[s], want, v)
    sr = fc.size_resolved(v, backend=backend)
    close(sr.mean(axis=1), fc.shapley(v, backend=backend), v)
    for i, k in ((0, 0), (3, 5), (10, 10)):
        diffs = [v[s | 1 << i] - v[s] for s in range(1 << m)
                 if not s >> i & 1 and bin(s).count("1") == k]
        close(sr[i, k], np.mean(diffs), v)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_batches_split_over_threads_give_identical_bits(threads, backend, rng):
    v = rng.normal(size=(1000, 32))
    one = fc.shapley(v, threads=1, backend=backend)
    assert np.array_equal(fc.shapley(v, threads=threads, backend=backend), one)


@pytest.mark.parametrize("m", [3, 4, 5, 6, 7, 8])
def test_large_batches_same_bits_on_every_path(m, path, rng):
    # A batch of small games with >= 2**17 results writes them 8 games (m
    # cache lines) at a time with non-temporal stores (C: on the avx512
    # path; Numba: always), the games before the first whole line and
    # after the last one ordinarily: each backend's bits are those of the
    # other backend's ordinary stores (a batch one result too small to
    # stream), for outputs at every offset within a cache line (a NaN game
    # redone by the definition); the doubles around the result are left alone
    n = (1 << 17) // m + 13
    v = rng.normal(size=(n, 1 << m))
    v[n // 2, 3] = np.nan
    backends = fc.available_backends()
    unstreamed = (1 << 17) // m - 1   # games: too few results to stream
    want = {b: np.concatenate([fc.shapley(v[:unstreamed], threads=1, backend=b),
                               fc.shapley(v[unstreamed:], threads=1, backend=b)])
            for b in backends}
    assert np.isnan(want[backends[0]][n // 2]).all()
    assert np.isfinite(np.delete(want[backends[0]], n // 2, 0)).all()
    buf = np.empty(n * m + 16)
    for b in backends:
        other = want[backends[-1] if b == backends[0] else backends[0]]
        for offset in range(8):
            buf[:] = 7.0
            out = buf[offset:offset + n * m].reshape(n, m)
            got = fc.shapley(v, out=out, threads=1, backend=b)
            assert got is out
            np.testing.assert_array_equal(got.view(np.int64), other.view(np.int64),
                                          err_msg=f"{b} at offset {offset}")
            assert (buf[:offset] == 7.0).all() and (buf[offset + n * m:] == 7.0).all()


def test_out_is_written_and_returned(backend, rng):
    v = rng.normal(size=(5, 8))
    out = np.full((5, 3), np.nan)
    res = fc.shapley(v, out=out, backend=backend)
    assert res is out
    close(out, oracle("shapley", v), v)
    out2 = np.empty((5, 3, 3))
    assert fc.pair_interactions(v, out=out2, backend=backend) is out2


def test_empty_batch(backend):
    assert fc.shapley(np.zeros((0, 8)), backend=backend).shape == (0, 3)
    assert fc.moebius(np.zeros((2, 0, 4)), backend=backend).shape == (2, 0, 4)


def test_nan_propagates(backend, rng):
    v = rng.normal(size=(2, 16))
    v[0, 6] = np.nan  # coalition {1, 2}
    for name in PER_GAME:
        got = getattr(fc, name)(v, backend=backend)
        want = np.isnan(oracle(name, v))
        if name == "size_resolved":
            want[0, :, 2] = True  # documented: the whole size-|S| column
        np.testing.assert_array_equal(np.isnan(got), want, err_msg=name)
        assert not np.isnan(got[1]).any()


def test_inputs_are_not_modified(backend, rng):
    v = rng.normal(size=(3, 32))
    keep = v.copy()
    for name in PER_GAME:
        getattr(fc, name)(v, backend=backend)
    assert np.array_equal(v, keep)


def test_weights_are_the_textbook_ones():
    for m in (1, 5, 30):
        w = fc.shapley_weights(m)
        assert w == pytest.approx([math.factorial(k) * math.factorial(m - k - 1)
                                   / math.factorial(m) for k in range(m)], rel=1e-15)
        # sum over sizes of C(m-1, k) w[k] = 1 for any probabilistic value
        assert sum(math.comb(m - 1, k) * w[k] for k in range(m)) == pytest.approx(1.0)
    assert np.all(fc.banzhaf_weights(4) == 1 / 8)


class TestTableFromFunction:
    def test_vectorised_masks(self):
        got = fc.table_from_function(lambda s: (s * 3 + 1).astype(float), 4, chunk=5)
        assert np.array_equal(got, np.arange(16) * 3 + 1.0)

    def test_bool_coalitions(self):
        got = fc.table_from_function(lambda b: b[:, 0] & ~b[:, 2], 3, coalitions="bool")
        assert np.array_equal(got, [float(s & 1 and not s & 4) for s in range(8)])

    def test_njit_function(self):
        from numba import njit

        @njit
        def v(mask):
            return float(mask % 7) - 0.5 * float(mask & 3)

        got = fc.table_from_function(v, 12, threads=2)
        masks = np.arange(1 << 12)
        assert np.array_equal(got, (masks % 7) - 0.5 * (masks & 3))

    def test_feeds_the_credit_kernels(self, backend):
        v = fc.table_from_function(lambda s: np.bitwise_count(s).astype(float) ** 2, 5)
        # symmetric game: every player gets (v(N) - v(0)) / m
        close(fc.shapley(v, backend=backend), np.full(5, 25 / 5), v)


@pytest.mark.parametrize("m", [1, 2, 3, 5, 8, 10])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bare_semivalue_kernel_redoes_nonfinite_games_by_definition(m, dtype, backend):
    """The batch kernel itself (no Python check after it, issue 33) gives
    the definition on a game with an infinite entry and leaves the finite
    games of the same batch untouched: the one-pass formula alone gives NaN
    where the definition gives +-inf, so a kernel whose in-pass probe were
    dropped (or ignored a lane) fails here. m = 10 takes the blocked path,
    1-2 the scalar one, 3-8 the vector one."""
    from fastcredit._backend import kernels
    rng = np.random.default_rng(m)
    v = rng.normal(size=(6, 1 << m)).astype(dtype)
    v[2, (1 << m) - 1] = np.inf           # only v(N): every phi_i is +inf
    v[4, 0] = -np.inf                     # only v(0): every phi_i is +inf
    w = fc.shapley_weights(m)
    out = np.full((6, m), 7.0)
    kernels("tables", backend).semivalue(v, w, out)
    want = np.array([ref.semivalue(g.astype(np.float64), w) for g in v])
    assert np.isposinf(out[2]).all() and np.isposinf(out[4]).all()
    assert np.isposinf(want[2]).all() and np.isposinf(want[4]).all()
    finite = [0, 1, 3, 5]
    np.testing.assert_allclose(out[finite], want[finite], rtol=1e-10, atol=1e-12)


def test_large_games_same_bits_for_any_thread_split(rng):
    # Large games are summed over fixed ranges of 2**16 entries (a kernel
    # call per game and thread writes its ranges' partials) added in range
    # order: the bits do not depend on the thread count, nor on where a
    # thread's share of three games begins and ends, nor on the backend
    v = rng.normal(size=(3, 1 << 17))
    backends = fc.available_backends()
    got = {(b, t): fc.shapley(v, threads=t, backend=b) for b in backends for t in (1, 2, 3)}
    for key, phi in got.items():
        np.testing.assert_array_equal(phi.view(np.int64), got[backends[0], 1].view(np.int64),
                                      err_msg=str(key))


def test_c_semivalue_ranges_is_partial_per_range_and_refuses_bad_ranges(rng):
    # fc_semivalue_ranges_* = one fc_semivalue_partial_* per range, bit for
    # bit; ranges that are not block-aligned or do not tile [start, stop)
    # are refused with nothing written
    if "c" not in fc.available_backends():
        pytest.skip("no C backend")
    from fastcredit._cffi import ffi, lib
    m = 11
    v, w = rng.normal(size=1 << m), fc.shapley_weights(m)
    ptr = lambda a: ffi.from_buffer("double[]", a)   # noqa: E731
    acc = np.zeros((4, m + 1))
    assert lib.fc_semivalue_ranges_f64(ptr(v), m, ptr(w), v[0], 512, 1536, 256, ptr(acc)) == 0
    for r in range(4):
        one = np.zeros(m + 1)
        lib.fc_semivalue_partial_f64(ptr(v), m, ptr(w), v[0], 512 + 256 * r, 768 + 256 * r,
                                     ptr(one))
        np.testing.assert_array_equal(one.view(np.int64), acc[r].view(np.int64))
    for start, stop, length in [(0, 1024, 300), (0, 1024, 128), (0, 768, 512), (0, 1024, 0),
                                (256, 0, 256), (0, 4096, 256)]:
        acc[:] = 7.0
        assert lib.fc_semivalue_ranges_f64(ptr(v), m, ptr(w), 0.0, start, stop, length,
                                           ptr(acc)) == lib.FC_EINVAL, (start, stop, length)
        assert (acc == 7.0).all()
