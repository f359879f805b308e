"""Times the study's robustness layer (issue 32) on one core: the additive
correlated-error null (1,000 worlds on 1,200 realistic requests; target
under 1 s) and the paired Spearman-difference bootstrap, on each backend,
with the bare kernel beside the public call.

    .venv/bin/python bench/robustness.py
"""
import platform
import time

import numpy as np

import fastcredit as fc
from fastcredit.audit import null


def best(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    print(f"machine: {cpu}; one thread")
    rep = fc.synthetic.search_preset("realistic").replay
    pools = fc.synthetic.sponsored_search(1200, seed=0, preset="realistic")
    t = fc.auction_replay(pools, mode="filter", **rep)
    a = fc.auction_replay(pools, mode="rerun", **rep)
    rng = np.random.default_rng(0)
    z = rng.normal(size=1200)
    x, y = z + rng.normal(size=1200), z + 2 * rng.normal(size=1200)
    for backend in ("c", "numba"):
        null.correlated_error_null(t, a, worlds=10, threads=1, backend=backend)   # warm
        sec = best(lambda: null.correlated_error_null(t, a, worlds=1000, threads=1,
                                                      backend=backend))
        print(f"  correlated_error_null, 1,000 worlds x 1,200 requests, {backend:>5}: "
              f"{sec:.3f} s")
        sec = best(lambda: fc.spearman_difference(x, y, z, resamples=10_000, threads=1,
                                                  backend=backend))
        print(f"  spearman_difference, 10,000 resamples x 1,200 items, {backend:>5}: "
              f"{sec:.3f} s")


if __name__ == "__main__":
    main()
