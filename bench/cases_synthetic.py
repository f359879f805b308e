"""Cases of the synthetic family (issue targets in the `target` column).

fc.synthetic.sponsored_search of B requests (200,000; quick: 20,000), m = 5
rewrites x k = 20 candidates (~83 instances a request; ~79 with the
realistic preset, which draws the same way with other parameters and
expected values: no click draws, and the values are the scores). `x stream` =
generation time / time to stream its output (offsets, ad_id, score, value,
prerank) once; `x alternative` = generation time / the same distribution
drawn with vectorised numpy.random (other draws, so other numbers), timed on
B / 10 requests and scaled to B. The met column gives requests/s.

Every instance takes two logarithms, an exponential, a sine and cosine and
two square roots. They were the C library's (~37 ns of ~53 ns an instance,
0.22M requests/s a core on a Xeon with AVX-512, both backends); they are now
the generator's own polynomials (csrc/synthetic.h), computed in vectorised
blocks, one step of the recipe per loop (short dependency chains), 8 lanes
with AVX-512 in both backends. Thread CPU time of one call of B = 200,000 on
a shared 2-core Xeon with AVX-512 (default preset, C / Numba): the kernel
13 / 14 ns an instance (the divider alone, two square roots and two
divisions, ~3.4 ns), the kernel zeroing the fresh output pages ~80 ms,
Pools' validation ~35 ms, lengths and offsets ~8 ms: ~0.57M / 0.55M
requests/s a core on a quiet machine; the realistic preset's values are its
scores (no fourth array), ~0.7M. The wall time below also counts what other
processes take of the core.

The bare call is the two kernels as sponsored_search calls them, split over
requests alike: the list lengths, then the fill, on the catalogue and the
offsets of the case's own pools (made once), into new arrays (np.empty, as
sponsored_search makes them). A call that returns new arrays writes fresh
pages, which the operating system zeroes on first touch (~85 ms of ~450 for
B = 200,000 on an AMD EPYC Zen 4; nothing a kernel can fold in or skip), so
the bare call pays them too; the ratio counts the argument checks, the
catalogue draws, the running sum of the lengths and the validation of the
Pools (its offsets; the scores and preranks are not read again: the fill
counts those that are not finite as it writes them, which took ~13 ms of
~145 when Pools summed them after the kernel, public ÷ kernel 1.11 with 2
threads on the quiet AMD EPYC bench). What is left is serial: the catalogue's
draws (2.9 ms, most of it numpy's beta), the running sum (0.5 ms) and the
offsets' check (0.2 ms) beside a 2-thread kernel of ~130 ms: main-thread CPU
time public ÷ kernel 1.00 at 1 thread, 1.04 at 2 (best of 8, a40c6c0, AMD
EPYC Zen 4, load 7.9). The 1.13 of the bench at 13f52f8 was a best of 3 of
calls of 0.15-0.45 s; both presets now take the best of 5.
"""
from __future__ import annotations

import numpy as np

import fastcredit as fc
from common import Alternative, Case, Limit, kernels, sci
from fastcredit import _parallel

M, K = 5, 20
TARGET = 0.5e6   # requests/s on one core


def numpy_generator(n, m=M, k=K, seed=0, catalogue=50_000, topics=500, empty=0.08,
                    short=0.12, noise=0.3, value_model="click", bid_scale=1.0):
    """What a user would write: the documented distribution with
    numpy.random, vectorised over all rewrites and instances (one click
    draw per request and ad through np.unique)."""
    g = np.random.default_rng(seed)
    per = catalogue // topics
    size = per * topics
    bid, ctr = bid_scale * g.lognormal(0.0, 0.8, size), g.beta(2.0, 10.0, size)
    u = g.random(n * m)
    lengths = np.where(u < empty, 0,
                       np.where(u < empty + short, 1 + g.integers(0, max(k // 2, 1), n * m), k))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    home = np.minimum((topics * g.random(n) ** 2).astype(np.int64), topics - 1)
    drift = g.integers(0, topics, n * m)
    keep = 0.5 + 0.45 * g.random(n * m)
    rewrite = np.repeat(np.arange(n * m), lengths)
    total = rewrite.size
    on = g.random(total) < keep[rewrite]
    rank = np.minimum((per * g.random(total) ** 1.5).astype(np.int64), per - 1)
    ad = np.where(on, home[rewrite // m], drift[rewrite]) * per + rank
    z1, z2 = g.standard_normal(total), g.standard_normal(total)
    score = bid[ad] * np.minimum(ctr[ad] * np.exp(noise * z1) * np.where(on, 1.0, 0.4), 1.0)
    prerank = np.log(score) + 0.5 * z2
    if value_model == "expected":
        return offsets, ad, score, score, prerank
    pairs, which = np.unique((rewrite // m) * size + ad, return_inverse=True)
    clicked = g.random(pairs.size) < ctr[pairs % size]
    return offsets, ad, score, np.where(clicked[which], bid[ad], 0.0), prerank


def cases(quick: bool):
    b = 20_000 if quick else 200_000
    sample = b // 10
    for preset in ("default", "realistic"):
        yield from _preset_cases(b, sample, preset)
    yield from _repeats_cases(quick)


def _bare_repeats(t, repeats, noise, seed=0):
    """fc_synthetic_replay_repeats over the rows, split as replay_repeats
    splits them, into a prepared output (so the ratio counts the checks and
    the fresh output pages)."""
    flat_t = np.ascontiguousarray(t).reshape(-1)
    m = t.shape[-1].bit_length() - 1

    def prepare(backend, threads):
        kern = kernels("synthetic.replay_repeats", backend)
        out = np.empty((t.shape[0], repeats, t.shape[1]))
        flat_out = out.reshape(-1)

        def call():
            _parallel.run(lambda a, b: kern.replay_repeats(np.uint64(seed), 0, m, flat_t,
                                                           repeats, noise, flat_out, a, b),
                          t.shape[0], _parallel.n_threads(threads), min_items=64)
            return out

        return call
    return prepare


def _repeats_cases(quick):
    b, repeats, noise = (2_000 if quick else 20_000), 6, 0.5
    v = np.random.default_rng(1).normal(size=(b, 1 << M))
    v[:, 0] = 0.0

    def numpy_repeats():
        y = v[:, None, :] + noise * np.random.default_rng(0).standard_normal(
            (b, repeats, 1 << M))
        y[:, :, 0] = v[:, None, 0]
        return y

    yield Case("replay_repeats", f"B={sci(b)} tables of m={M}, {repeats} repeats",
               lambda backend, threads: fc.synthetic.replay_repeats(
                   v, repeats=repeats, noise=noise, seed=0, threads=threads, backend=backend),
               Limit(np.empty((b, repeats, 1 << M))),      # the repeats it writes
               Alternative("NumPy v + noise * standard_normal", numpy_repeats, repeats=5),
               threads=(1, 2), key="synthetic.replay_repeats", repeats=7,
               bare=_bare_repeats(v, repeats, noise))


def _bare(pools, params, seed=0):
    """The bare call of fc.synthetic.sponsored_search(pools.n_requests,
    seed=seed, preset=...) whose parameters are ``params`` and result
    ``pools`` (see the module docstring)."""
    def prepare(backend, threads):
        kern = kernels("synthetic.sponsored_search", backend)
        n_req, m, k = pools.n_requests, params["m"], params["k"]
        per_topic, topics = params["catalogue"] // params["topics"], params["topics"]
        catalogue = np.random.default_rng(seed)
        bid = params["bid_scale"] * catalogue.lognormal(0.0, 0.8, per_topic * topics)
        ctr = catalogue.beta(2.0, 10.0, per_topic * topics)
        expected = params["value_model"] == "expected"
        offsets = pools.offsets.copy()
        key, nt = np.uint64(seed), _parallel.n_threads(threads)

        def call():
            lengths = np.empty(n_req * m, dtype=np.int64)
            ad, score, prerank = np.empty_like(pools.ad_id), np.empty_like(pools.score), \
                np.empty_like(pools.score)
            value = score if expected else np.empty_like(score)
            _parallel.run(lambda a, b: kern.search_lengths(
                key, 0, m, k, params["empty"], params["short"], lengths, a, b),
                n_req, nt, min_items=4096)
            _parallel.run(lambda a, b: kern.search_fill(
                key, 0, m, topics, per_topic, bid, ctr, params["noise"], int(expected),
                offsets, ad, score, value, prerank, a, b), n_req, nt, min_items=4096)
            return ad, score, value, prerank

        return call
    return prepare


def _preset_cases(b, sample, preset):
    params = fc.synthetic.search_preset(preset).generator
    pools = fc.synthetic.sponsored_search(b, seed=0, preset=preset)
    limit = Limit(pools.offsets, pools.ad_id, pools.score, pools.value, pools.prerank)
    per_request = pools.ad_id.size / b

    def met(r):
        rate = f"{b / r.t / 1e6:.2f}M req/s"
        if r.threads == 1:
            ok, note = b / r.t >= TARGET, f"{rate}, {r.t / pools.ad_id.size * 1e9:.0f} ns/instance"
        else:
            speedup = r.time_of(threads=1) / r.t
            ok, note = speedup >= 1.7, f"{speedup:.2f}x, {rate}"
        return f"{'yes' if ok else 'no'} ({note})"

    yield Case("sponsored_search",
               f"{preset}: B={sci(b)} m={M} k={K} ({per_request:.1f} instances/request)",
               lambda backend, threads: fc.synthetic.sponsored_search(
                   b, seed=0, preset=preset, threads=threads, backend=backend),
               limit,
               Alternative("vectorised numpy.random",
                           lambda: numpy_generator(sample, **{k: v for k, v in params.items()
                                                              if k not in ("m", "k")}),
                           scale=b / sample),
               lambda th: ">= 1.7x 1 thread" if th > 1 else f">= {TARGET / 1e6:.1f}M req/s",
               met, threads=(1, 2), key="synthetic.sponsored_search" if preset == "default"
               else None, repeats=5, bare=_bare(pools, params))
