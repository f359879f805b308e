"""Ratios for the auction family (issue 3 targets in the `target` column).

B requests (default 1,000,000; env FASTCREDIT_BENCH_REQUESTS) of m = 5
actions x k = 20 candidates from fc.synthetic.sponsored_search, slots = 4.
`x stream` = replay time / time to stream the arrays the replay reads
(offsets, ad_id, score, value) once; `x alternative` = replay time / a plain
Python per-request replay (dict dedup, sort, pick per coalition), timed on
2,000 requests and scaled to B.
"""
from __future__ import annotations

import os
import time

import fastcredit as fc
from common import best_of, row, stream_time

B = int(os.environ.get("FASTCREDIT_BENCH_REQUESTS", 1_000_000))
M, K, SLOTS = 5, 20, 4
PY_REQUESTS = 2_000


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


def rows() -> list[dict]:
    pools = fc.synthetic.sponsored_search(B, m=M, k=K, seed=0)
    stream = stream_time(pools.offsets, pools.ad_id, pools.score, pools.value, repeats=3)
    alternative = {}
    for mode in ("filter", "rerun"):
        t0 = time.perf_counter()
        python_replay(pools, PY_REQUESTS, mode)
        alternative[mode] = (time.perf_counter() - t0) * B / PY_REQUESTS
    out = fc.auction_replay(pools, SLOTS)  # the output pages, touched once
    result = []
    for backend in fc.available_backends():
        base = None
        for mode, pricing, threads in [("filter", "first", 1), ("filter", "gsp", 1),
                                       ("rerun", "first", 1), ("rerun", "gsp", 1),
                                       ("filter", "first", 2), ("rerun", "first", 2)]:
            t = best_of(lambda: fc.auction_replay(pools, SLOTS, mode=mode, pricing=pricing,
                                                  threads=threads, out=out, backend=backend),
                        3)
            rate = f"{B / t / 1e6:.2f}M req/s"
            if (mode, pricing, threads) == ("filter", "first", 1):
                base = t
                target, met = ">= 2M req/s", f"{'yes' if B / t >= 2e6 else 'no'} ({rate})"
            elif threads == 1:
                target = "<= 3x filter/first"
                met = f"{'yes' if t <= 3 * base else 'no'} ({t / base:.2f}x, {rate})"
            else:
                single = next(r for r in result if r["backend"] == backend
                              and r["case"].endswith(f"{mode}/{pricing}") and r["threads"] == 1)
                speedup = single["_t"] / t
                target = ">= 1.7x 1 thread"
                met = f"{'yes' if speedup >= 1.7 else 'no'} ({speedup:.2f}x, {rate})"
            alt = alternative[mode] if pricing == "first" else None
            entry = row("auction_replay", f"B={B:,} m={M} k={K} slots={SLOTS} {mode}/{pricing}",
                        backend, threads, t, stream, alt,
                        "Python per-request replay" if alt else "", target, met)
            entry["_t"] = t
            result.append(entry)
    for entry in result:
        del entry["_t"]
    return result
