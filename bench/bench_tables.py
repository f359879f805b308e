"""pytest-benchmark suite for the tables family:
    .venv/bin/python -m pytest bench/bench_tables.py --benchmark-only
"""
import numpy as np
import pytest

import fastcredit as fc


@pytest.fixture(scope="module")
def batch():
    return np.random.default_rng(0).random((200_000, 32))


@pytest.fixture(scope="module")
def large():
    return np.random.default_rng(1).random(1 << 20)


@pytest.mark.parametrize("backend", fc.available_backends())
@pytest.mark.parametrize("name", ["shapley", "banzhaf", "singleton", "leave_one_out",
                                  "size_resolved", "pair_interactions", "moebius"])
def test_batch_m5(benchmark, batch, name, backend):
    f = getattr(fc, name)
    benchmark(lambda: f(batch, threads=1, backend=backend))


@pytest.mark.parametrize("backend", fc.available_backends())
@pytest.mark.parametrize("name", ["shapley", "size_resolved", "moebius"])
def test_one_game_m20(benchmark, large, name, backend):
    f = getattr(fc, name)
    benchmark(lambda: f(large, threads=1, backend=backend))
