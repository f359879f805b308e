"""pytest-benchmark suite of auction replay (issue 3 shape: m = 5 actions x
k = 20 candidates, slots = 4; 50,000 requests to keep a run short).

    pytest bench/bench_auction.py --benchmark-only
"""
import pytest

import fastcredit as fc

BACKENDS = fc.available_backends()
CASES = [("filter", "first"), ("filter", "gsp"), ("rerun", "first"), ("rerun", "gsp")]


@pytest.fixture(scope="module")
def pools():
    return fc.synthetic.sponsored_search(50_000, seed=0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode,pricing", CASES)
def test_replay_50000_requests(benchmark, pools, mode, pricing, backend):
    table = benchmark(fc.auction_replay, pools, 4, mode=mode, pricing=pricing, threads=1,
                      backend=backend)
    assert table.shape == (50_000, 32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_replay_with_capacity(benchmark, pools, backend):
    table = benchmark(fc.auction_replay, pools, 4, capacity=10, mode="rerun", threads=1,
                      backend=backend)
    assert table.shape == (50_000, 32)


def test_generate_50000_requests(benchmark):
    pools = benchmark(fc.synthetic.sponsored_search, 50_000, seed=0)
    assert pools.n_requests == 50_000
