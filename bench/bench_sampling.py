"""pytest-benchmark suite of the sampling family (``pytest bench/bench_sampling.py``).

The issue 4 benchmark cases at reduced size; bench/ratios_sampling.py prints
the full-size ratios."""
import numpy as np
import pytest

import fastcredit as fc
from fastcredit import synthetic


@pytest.fixture(params=fc.available_backends())
def backend(request):
    return request.param


def test_table_game_m16(benchmark, backend):
    v = np.random.default_rng(0).random(1 << 16)
    est = benchmark(fc.permutation_shapley, v, budget=200_000, seed=0, backend=backend)
    assert est.n_evals <= 200_000


def test_and_failure_scm(benchmark):
    scm = synthetic.and_failure(0.3)
    est = benchmark(fc.permutation_shapley, scm.game, 3, permutations=20_000, seed=0)
    assert est.n_evals == 20_000 * 4


@pytest.mark.parametrize("threads", [1, 2])
def test_batch_of_tables_m10(benchmark, backend, threads):
    v = np.random.default_rng(1).random((10_000, 1 << 10))
    est = benchmark(fc.permutation_shapley, v, permutations=200, seed=0, threads=threads,
                    backend=backend)
    assert est.values.shape == (10_000, 10)
