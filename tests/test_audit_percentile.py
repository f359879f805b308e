"""The percentile interval the audit kernels select (fc_percentile_interval
and its Numba twin, under contrastive_effects' bootstrap): numpy.quantile's
"linear" method bit for bit, on rows that stress a selection (ties, signed
zeros, sorted and reversed rows, NaN, infinities, one or two replicates),
and the same bits from both backends."""
import numpy as np
import pytest

from conftest import BACKENDS
from fastcredit._backend import kernels


def _rows(rng, kind, rows, n):
    if kind == "normal":
        return rng.normal(size=(rows, n))
    if kind == "ties":
        return rng.integers(0, 3, size=(rows, n)).astype(float)
    if kind == "signed zeros":
        x = np.zeros((rows, n))
        x[:, ::2] = -0.0
        return x
    if kind == "reversed":
        return np.sort(rng.normal(size=(rows, n)), axis=1)[:, ::-1].copy()
    if kind == "sorted":
        return np.sort(rng.normal(size=(rows, n)), axis=1)
    x = rng.normal(size=(rows, n))        # "nan and inf"
    x[0, rng.integers(n)] = np.nan
    x[-1, 0] = np.inf
    return x


@pytest.mark.parametrize("kind", ["normal", "ties", "signed zeros", "reversed", "sorted",
                                  "nan and inf"])
@pytest.mark.parametrize("n", [1, 2, 3, 40, 1001, 4096])
@pytest.mark.parametrize("level", [0.95, 0.5, 1e-9, 1 - 1e-12])
def test_percentile_interval_is_numpy_quantile(rng, kind, n, level):
    rows = 3
    x = _rows(rng, kind, rows, n)
    q_low, q_high = (1 - level) / 2, (1 + level) / 2
    for shift in (0.0, -1.25):
        with np.errstate(invalid="ignore"):
            want = np.quantile(x - shift, [q_low, q_high], axis=1)
        bits = []
        for b in BACKENDS:
            reps, low, high = x.copy(), np.empty(rows), np.empty(rows)
            kernels("audit", b).percentile_interval(reps, shift, q_low, q_high, low, high)
            np.testing.assert_array_equal(np.array([low, high]), want, err_msg=b)
            bits.append(np.array([low, high]).view(np.int64))
        for other in bits[1:]:
            np.testing.assert_array_equal(other, bits[0])


def test_percentile_interval_survives_a_pivot_killer(rng):
    # rows built so that the median of three is always near an end (an
    # organ-pipe order) take the selection to its heap-sort fallback; the
    # answer stays numpy's
    n = 5000
    half = np.arange(n // 2, dtype=float)
    x = np.stack([np.concatenate([half, half[::-1]]), np.repeat([1.0, 0.0], n // 2)])
    for b in BACKENDS:
        reps, low, high = x.copy(), np.empty(2), np.empty(2)
        kernels("audit", b).percentile_interval(reps, 0.0, 0.025, 0.975, low, high)
        np.testing.assert_array_equal(np.array([low, high]),
                                      np.quantile(x, [0.025, 0.975], axis=1), err_msg=b)
