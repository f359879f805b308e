"""The counter-based RNG is the same function of (seed, item, draw) in C and
Numba, and looks uniform."""
import numpy as np
import pytest

from fastcredit._c import ffi, lib
from fastcredit._numba import rng


def c_draws(seed, item, n):
    out = np.empty(n, np.uint64)
    assert lib.fc_rng_fill(seed, item, n, ffi.from_buffer("uint64_t[]", out)) == lib.FC_OK
    return out


@pytest.mark.parametrize("seed,item", [(0, 0), (1, 0), (0, 1), (2**64 - 1, 2**63 + 5)])
def test_c_and_numba_streams_are_identical(seed, item):
    nb = np.empty(1000, np.uint64)
    rng.fill(np.uint64(seed), np.uint64(item), nb)
    assert np.array_equal(c_draws(seed, item, 1000), nb)


def test_streams_differ_by_seed_and_item():
    a, b, c = c_draws(1, 2, 64), c_draws(2, 1, 64), c_draws(1, 3, 64)
    assert len({a.tobytes(), b.tobytes(), c.tobytes()}) == 3


def test_bits_and_derived_draws_are_uniform():
    x = c_draws(42, 7, 200_000)
    bits = (x[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    # every bit is 1 with probability 1/2: 5 sigma of a binomial(200000, 1/2)
    assert np.abs(bits.mean(0) - 0.5).max() < 5 * 0.5 / np.sqrt(len(x))
    state = rng.key(np.uint64(42), np.uint64(7))
    counts = np.zeros(6)
    for _ in range(60_000):
        state, k = rng.below(np.uint64(state), 6)
        counts[k] += 1
    expected = 10_000
    assert ((counts - expected) ** 2 / expected).sum() < 20.5  # chi2(5) 0.999 quantile


@pytest.mark.parametrize("seed,item", [(0, 0), (12345, 678), (2**64 - 1, 2**64 - 1)])
def test_streams_follow_the_documented_definition(seed, item):
    import reference
    stream = reference.Stream(seed, item)
    assert c_draws(seed, item, 50).tolist() == [stream.next() for _ in range(50)]
