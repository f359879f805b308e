"""Cases of the auction family (issue 17 targets in the `target` column).

B requests (1,000,000; quick: 20,000) of m = 5 actions x k = 20 candidates
from fc.synthetic.sponsored_search, slots = 4. `x stream` = replay time / time
to stream the arrays the replay reads (offsets, ad_id, score, value) once;
`x alternative` = replay time / a plain Python per-request replay (dict
dedup, sort, pick per coalition), timed on 2,000 requests and scaled to B.

Bare calls: the replay kernel over the same request ranges as auction.py's
thread split, on the Pools' arrays (validated when the Pools were made) and
the option codes, into a prepared table; so the ratio counts the option
checks and the output and overlap checks of every call.
"""
from __future__ import annotations

import numpy as np

import fastcredit as fc
from common import Alternative, Case, Limit, kernels
from fastcredit import _constants, _parallel, auction

PRICING = {"first": _constants.PRICING_FIRST, "gsp": _constants.PRICING_GSP}
MODE = {"filter": _constants.MODE_FILTER, "rerun": _constants.MODE_RERUN}

M, K, SLOTS = 5, 20, 4


def python_replay(pools, n_requests, mode):
    """What a user writes without fastcredit: per request and coalition,
    merge the pools in a dict, sort, take the top slots (first price)."""
    m, off = pools.m, pools.offsets
    ad, score, value = pools.ad_id.tolist(), pools.score.tolist(), pools.value.tolist()
    tables = []
    for r in range(n_requests):
        lists = [range(off[r * m + i], off[r * m + i + 1]) for i in range(m)]

        def ranked(actions):
            best = {}
            for i in actions:
                for x in lists[i]:
                    a = ad[x]
                    if a not in best or score[x] > score[best[a][0]]:
                        best[a] = (x, best.get(a, (0, 0))[1] | 1 << i)
                    else:
                        best[a] = (best[a][0], best[a][1] | 1 << i)
            return sorted(best.items(), key=lambda kv: (-score[kv[1][0]], kv[0]))

        full = ranked(range(m))
        row = [0.0] * (1 << m)
        for s in range(1, 1 << m):
            if mode == "filter":
                chosen = [x for _, (x, mask) in full if mask & s][:SLOTS]
            else:
                chosen = [x for _, (x, _) in ranked([i for i in range(m) if s >> i & 1])][:SLOTS]
            row[s] = sum(value[x] for x in chosen if score[x] >= 0.0)
        tables.append(row)
    return tables


def _bare(pools, mode, pricing, capacity=0, out=None):
    """The bare call of fc.auction_replay(pools, SLOTS, capacity=capacity or
    None, pricing=pricing, mode=mode, out=out) (reserve 0)."""
    def prepare(backend, threads):
        replay = kernels("auction.replay", backend).replay
        table = np.empty((pools.n_requests, 1 << pools.m)) if out is None else out
        placeholder = np.empty((1, 1, 1), dtype=np.int64), np.empty((1, 1, 1))
        prerank = pools.prerank if pools.prerank is not None else np.empty(0)

        def part(a, b):
            replay(pools.offsets, pools.ad_id, pools.score, pools.value, prerank, pools.m, a,
                   b, SLOTS, 0.0, capacity, PRICING[pricing], MODE[mode], table, *placeholder)

        def call():
            _parallel.run(part, pools.n_requests, _parallel.n_threads(threads),
                          min_items=auction._MIN_REQUESTS_PER_THREAD)
            return table

        return call
    return prepare


def _replay_cases(quick):
    b = 20_000 if quick else 1_000_000
    py_requests = 200 if quick else 2_000
    pools = fc.synthetic.sponsored_search(b, m=M, k=K, seed=0)
    limit = Limit(pools.offsets, pools.ad_id, pools.score, pools.value)
    python = {mode: Alternative("Python per-request replay",
                                lambda mode=mode: python_replay(pools, py_requests, mode),
                                scale=b / py_requests, repeats=1)
              for mode in ("filter", "rerun")}
    out = fc.auction_replay(pools, SLOTS)  # the output pages, touched once
    label = f"B={b:,} m={M} k={K} slots={SLOTS}"
    base = f"{label} filter/first"

    def rate(r):
        return f"{b / r.t / 1e6:.2f}M req/s"

    def verdict(ok, text):
        return f"{'yes' if ok else 'no'} ({text})"

    def met(r):
        if r.threads > 1:
            speedup = r.time_of(threads=1) / r.t
            text = verdict(speedup >= 1.8, f"{speedup:.2f}x, {rate(r)}")
        elif r.case.case == base:
            text = verdict(b / r.t >= 2e6, rate(r))
        else:
            ratio = r.t / r.time_of(base)
            text = verdict(ratio <= 1.5, f"{ratio:.2f}x, {rate(r)}")
        c_time = r.earlier.get((r.case.kernel, r.case.case, "c", r.threads))
        if r.backend == "numba" and c_time:
            text += "; " + verdict(r.t <= 1.5 * c_time, f"{r.t / c_time:.2f}x C")
        return text

    def target(threads, case):
        text = (">= 1.8x 1 thread" if threads > 1 else ">= 2M req/s" if case == base else
                "<= 1.5x filter/first")
        return text + "; numba <= 1.5x C"

    for mode, pricing in [("filter", "first"), ("filter", "gsp"), ("rerun", "first"),
                          ("rerun", "gsp")]:
        case = f"{label} {mode}/{pricing}"
        yield Case("auction_replay", case,
                   lambda backend, threads, mode=mode, pricing=pricing: fc.auction_replay(
                       pools, SLOTS, mode=mode, pricing=pricing, threads=threads, out=out,
                       backend=backend),
                   limit, python[mode] if pricing == "first" else None,
                   lambda th, case=case: target(th, case), met,
                   threads=(1, 2) if pricing == "first" else (1,), key="auction.replay",
                   repeats=5,  # about a second a run; the verdicts read ratios of best times
                   bare=_bare(pools, mode, pricing, out=out))


def _capacity_cases(quick):
    b = 2_000 if quick else 50_000         # capacity replays cost ~40 us a request
    pools = fc.synthetic.sponsored_search(b, m=M, k=K, seed=0)
    yield Case("auction_replay", f"B={b:,} m={M} k={K} slots={SLOTS} rerun/first capacity=10",
               lambda backend, threads: fc.auction_replay(
                   pools, SLOTS, capacity=10, mode="rerun", threads=threads, backend=backend),
               Limit(pools.offsets, pools.ad_id, pools.score, pools.value),
               key="auction.replay", repeats=3, bare=_bare(pools, "rerun", "first", capacity=10))


def cases(quick: bool):
    yield from _replay_cases(quick)
    yield from _capacity_cases(quick)
