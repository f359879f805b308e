"""pytest-benchmark suite for the shaping and trees families:
    .venv/bin/python -m pytest bench/bench_shaping.py --benchmark-only
"""
import numpy as np
import pytest

import fastcredit as fc


@pytest.fixture(scope="module")
def rows():
    u = np.random.default_rng(0).normal(size=(200_000, 5))
    return u / u.std(1, keepdims=True)


@pytest.fixture(scope="module")
def tokens():
    rng = np.random.default_rng(1)
    token_action = np.sort(rng.integers(-1, 5, size=(1024, 2048)).astype(np.int32), axis=1)
    return rng.normal(size=1024), rng.normal(size=(1024, 5)), token_action


@pytest.fixture(scope="module")
def tree_batch():
    rng = np.random.default_rng(2)
    sizes = rng.integers(1, 9, size=100_000)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    pi = rng.uniform(size=offsets[-1])
    state = np.repeat(np.arange(sizes.size), sizes)
    pi /= np.bincount(state, weights=pi)[state]
    return rng.normal(size=offsets[-1]), pi, offsets


@pytest.mark.parametrize("backend", fc.available_backends())
@pytest.mark.parametrize("kappa", [3.0, 1.0])
def test_project_zero_sum(benchmark, rows, kappa, backend):
    benchmark(lambda: fc.project_zero_sum(rows, kappa, threads=1, backend=backend))


@pytest.mark.parametrize("backend", fc.available_backends())
@pytest.mark.parametrize("masked", [False, True])
def test_token_advantages(benchmark, tokens, masked, backend):
    base, action_adv, token_action = tokens
    mask = (token_action > -2) if masked else None
    benchmark(lambda: fc.token_advantages(base, action_adv, token_action, mask, threads=1,
                                          backend=backend))


def test_shape_advantages(benchmark, rows):
    base = np.zeros(rows.shape[0])
    benchmark(lambda: fc.shape_advantages(base, rows, threads=1))


@pytest.mark.parametrize("backend", fc.available_backends())
def test_actor_centered_credit(benchmark, tree_batch, backend):
    q, pi, offsets = tree_batch
    benchmark(lambda: fc.actor_centered_credit(q, pi, offsets, backend=backend))


@pytest.mark.parametrize("backend", fc.available_backends())
def test_uct_budget(benchmark, backend):
    values = np.random.default_rng(3).uniform(size=8)
    benchmark(lambda: fc.UCT(8, backend=backend).run(lambda a: values[a], budget=64))
