"""pytest-benchmark suite of the audit kernels (issue 6 sizes).

    pytest bench/bench_audit.py --benchmark-only
"""
import numpy as np
import pytest

import fastcredit as fc

BACKENDS = fc.available_backends()


@pytest.fixture(scope="module")
def cosines():
    rng = np.random.default_rng(0)
    return rng.uniform(-1, 1, 1_171), rng.uniform(-1, 1, 1_171)


@pytest.fixture(scope="module")
def trajectories():
    rng = np.random.default_rng(1)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(5, 41, 50_000))])
    a_replay = rng.normal(size=offsets[-1]).round(1)
    return a_replay + rng.normal(size=offsets[-1]), a_replay, offsets


@pytest.mark.parametrize("backend", BACKENDS)
def test_paired_bootstrap_1171x10000(benchmark, cosines, backend):
    res = benchmark(fc.paired_bootstrap, *cosines, resamples=10_000, threads=1,
                    backend=backend)
    assert res.low <= res.estimate <= res.high


@pytest.mark.parametrize("backend", BACKENDS)
def test_within_spearman_50000(benchmark, trajectories, backend):
    rho = benchmark(fc.within_spearman, *trajectories, threads=1, backend=backend)
    assert np.nanmedian(rho) > 0.5


@pytest.mark.parametrize("backend", BACKENDS)
def test_spearman_audit_50000x10000(benchmark, trajectories, backend):
    audit = benchmark.pedantic(fc.spearman_audit, args=trajectories,
                               kwargs={"resamples": 10_000, "backend": backend}, rounds=2)
    assert audit.median.low > 0.5


@pytest.mark.parametrize("backend", BACKENDS)
def test_shuffle_within_50000(benchmark, trajectories, backend):
    credit, _, offsets = trajectories
    out = benchmark(fc.shuffle_within, credit, offsets, threads=1, backend=backend)
    assert out.sum() == pytest.approx(credit.sum())
