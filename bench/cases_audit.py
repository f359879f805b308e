"""Cases of the audit family (issue 6 targets in the `target` column).

Time ratios, lower is better: `x stream` = kernel time / time to stream its
input once; `x alternative` = kernel time / the alternative's time (the
vectorised NumPy/SciPy code a user would write instead).

Bare calls: the audit kernels the public call makes, in order, on the
converted arrays (and, for a kernel that reads what an earlier step made,
such as the sorted sample of a bootstrap, that input made once), split over
threads as the public call splits them, into prepared outputs (fresh ones
where the kernel's outputs are the result, as any caller of the kernels
makes them for a new result: the null's worlds, alignment, replay_advantage);
the bootstraps' percentile interval is fc_percentile_interval on a prepared copy
of the replicates (the selection reorders what it reads). NumPy steps
between or after the kernels are not in the bare call: the ratio counts
them with the checks; except the summaries computed from the kernels'
outputs, which the bare call makes:
the null's statistics of every world (a medians and two Spearman
correlations per world: the computation the kernel's output feeds, as long
as the kernel on this case) and alignment's medians and means over the
requests.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

import fastcredit as fc
from common import Alternative, Case, Limit, kernels
from fastcredit import _parallel
from fastcredit.audit import agreement, bootstrap, controls, null, spearman

M = 5


def _numpy_bootstrap(a, b, resamples, seed, chunk):
    """What a user writes: index matrices of resamples (``chunk`` at a time to
    bound memory), medians along rows; b None for a one-sample median."""
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    for s in range(0, resamples, chunk):
        idx = rng.integers(0, a.shape[0], size=(min(chunk, resamples - s), a.shape[0]))
        out[s:s + idx.shape[0]] = np.median(a[idx], axis=1)
        if b is not None:
            out[s:s + idx.shape[0]] -= np.median(b[idx], axis=1)
    return np.quantile(out, [0.025, 0.975])


def _numpy_within_spearman(x, y, offsets):
    """Trajectories grouped by length, ranked with scipy's rankdata along rows,
    Pearson of the ranks row-wise (constant A_replay -> NaN)."""
    lengths = np.diff(offsets)
    rho = np.full(lengths.shape[0], np.nan)
    for n in np.unique(lengths):
        rows = np.flatnonzero(lengths == n)
        idx = offsets[rows][:, None] + np.arange(n)
        rx = rankdata(x[idx], axis=1) - (n + 1) / 2
        ry = rankdata(y[idx], axis=1) - (n + 1) / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            rho[rows] = (rx * ry).sum(1) / np.sqrt((rx * rx).sum(1) * (ry * ry).sum(1))
    return rho


def _numpy_shuffle_within(x, offsets, seed):
    """Sort by (trajectory, random key): the usual vectorised within-group shuffle."""
    group = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
    order = np.lexsort((np.random.default_rng(seed).random(x.shape[0]), group))
    return x[order]


def _numpy_derangement(n, seed):
    """Rejection sampling: redraw a permutation until it has no fixed point
    (about e draws)."""
    rng = np.random.default_rng(seed)
    ident = np.arange(n)
    while True:
        p = rng.permutation(n)
        if not (p == ident).any():
            return p


def _numpy_mean_diff_bootstrap(vals, obs, resamples, seed):
    """Per step, index matrices resampling both arms, mean differences,
    percentile interval."""
    rng = np.random.default_rng(seed)
    low, high = np.empty(vals.shape[0]), np.empty(vals.shape[0])
    for k, arm in enumerate(vals):
        d = (arm[rng.integers(0, arm.shape[0], (resamples, arm.shape[0]))].mean(1)
             - obs[rng.integers(0, obs.shape[0], (resamples, obs.shape[0]))].mean(1))
        low[k], high[k] = np.quantile(d, [0.025, 0.975])
    return low, high


def _in_sequence(*bares):
    """The bare call that makes the bare calls ``bares`` one after the other."""
    def prepare(backend, threads):
        calls = [bare(backend, threads) for bare in bares]
        return lambda: [call() for call in calls]
    return prepare


def _bare_bootstrap(a, b, resamples, seed=0):
    """fc_bootstrap_median over the resamples (the replicates of median(a),
    or of median(a) - median(b) with pairs resampled together), on the
    sorted samples bootstrap._median_bootstrap makes of the non-NaN items,
    then the percentile interval (level 0.95)."""
    keep = ~np.isnan(a) if b is None else ~(np.isnan(a) | np.isnan(b))
    sorted_a, order_a = bootstrap._sorted(a[keep])
    sorted_b, order_b = (np.empty(0), np.empty(0, dtype=np.int64)) if b is None else \
        bootstrap._sorted(b[keep])

    def prepare(backend, threads):
        impl = kernels("audit.bootstrap_median", backend)
        reps, scratch, low, high = np.empty(resamples), np.empty((1, resamples)), \
            np.empty(1), np.empty(1)

        def part(start, stop):
            counts = np.empty(sorted_a.shape[0], dtype=np.int32)
            impl.bootstrap_median(sorted_a, order_a, sorted_b, order_b, np.uint64(seed), start,
                                  stop, counts, reps[start:stop])

        def call():
            _parallel.run(part, resamples, _parallel.n_threads(threads),
                          min_items=bootstrap._MIN_RESAMPLES_PER_THREAD)
            np.copyto(scratch[0], reps)
            impl.percentile_interval(scratch, 0.0, 0.025, 0.975, low, high)
            return reps, low, high

        return call
    return prepare


def _bare_spearman(x, y, offsets, min_len):
    """fc_spearman_groups over the groups, split as spearman._group_spearman
    splits them, with its per-thread scratch."""
    def prepare(backend, threads):
        impl = kernels("audit.spearman", backend)
        n_groups = offsets.shape[0] - 1
        rho, status = np.empty(n_groups), np.empty(n_groups, dtype=np.int8)
        longest = int(np.diff(offsets).max(initial=0))

        def part(a, b):
            idx, ranks = np.empty(max(longest, 1), dtype=np.int64), np.empty(max(3 * longest, 1))
            impl.spearman_groups(offsets[a:b + 1], x, y, min_len, idx, ranks, rho[a:b],
                                 status[a:b])

        def call():
            _parallel.run(part, n_groups, _parallel.n_threads(threads),
                          min_items=spearman._MIN_GROUPS_PER_THREAD)
            return rho

        return call
    return prepare


def _bare_alignment(credit, reference):
    """fc_alignment_rows over alignment's split of the requests, into fresh
    outputs (as any caller of the kernel makes them for a new result: the
    public call has no ``out=``), then the summaries from them
    (agreement._summarised: medians and means of the per-request results,
    the result the public call computes from the kernels', not a check). The
    validation and conversion are not in the bare call: the ratio counts
    them."""
    n, m = credit.shape

    def prepare(backend, threads):
        impl = kernels("audit.alignment", backend)
        cosine = sign = sign_nonzero = rho = top = defined = None

        def part(a, b):
            impl.alignment_rows(credit[a:b], reference[a:b], True, 0.0, np.empty(5 * m),
                                np.empty(m, dtype=np.int64), cosine[a:b], sign[a:b],
                                sign_nonzero[a:b], rho[a:b], top[a:b], defined[a:b])

        def call():
            nonlocal cosine, sign, sign_nonzero, rho, top, defined
            cosine, sign, sign_nonzero, rho = np.empty((4, n))
            top, defined = np.empty((2, n), dtype=bool)
            _parallel.run(part, n, _parallel.n_threads(threads),
                          min_items=spearman._MIN_GROUPS_PER_THREAD)
            return agreement._summarised((n,), cosine, sign, sign_nonzero, rho, top, defined)

        return call
    return prepare


def _request_cases(quick, rng):
    requests, resamples = 1_171, (1_000 if quick else 10_000)
    reference = rng.normal(size=(requests, M))
    cos_a = fc.alignment(reference + 0.5 * rng.normal(size=reference.shape), reference).cosine
    cos_b = fc.alignment(reference + 1.5 * rng.normal(size=reference.shape), reference).cosine
    yield Case("paired_bootstrap", f"{requests} requests x m={M}, {resamples} resamples",
               lambda backend, threads: fc.paired_bootstrap(
                   cos_a, cos_b, resamples=resamples, threads=threads, backend=backend),
               Limit(cos_a, cos_b),
               Alternative("NumPy index matrix + median",
                           lambda: _numpy_bootstrap(cos_a, cos_b, resamples, 0, 1000)),
               "<100 ms 1 thread, >=20x NumPy",
               lambda r: ("yes" if r.t < 0.1 and r.t * 20 <= r.alt else "no")
               if r.threads == 1 else "",
               # 6-17 ms calls: the best of 7 read public ÷ kernel 1.38 / 1.45 (C, 1 / 2
               # threads) where 40 turns read 1.02 / 1.06, Numba 1.02 / 1.04 (load 1.2):
               # a 2-thread call needs both cores free throughout (100 turns: ~8 s)
               threads=(1, 2), key="audit.bootstrap_median", repeats=100,
               bare=_bare_bootstrap(cos_a, cos_b, resamples))
    credit = reference + rng.normal(size=reference.shape)
    yield Case("alignment", f"{requests} requests x m={M}",
               lambda backend, threads: fc.alignment(credit, reference, threads=threads,
                                                     backend=backend),
               Limit(credit, reference),
               Alternative("np.corrcoef per request",
                           lambda: [np.corrcoef(c, r)[0, 1]
                                    for c, r in zip(credit[:100], reference[:100])],
                           scale=requests / 100),
               # a 0.2 ms call: the best of 7 read public ÷ kernel 1.24 where 500 read 1.07
               key="audit.alignment", repeats=200, bare=_bare_alignment(credit, reference))


def _bare_shuffle(x, offsets, out):
    """fc_shuffle_groups (seed 0, stream 0) over controls.shuffle_within's
    group split, into ``out``."""
    def prepare(backend, threads):
        impl = kernels("audit.shuffle", backend)

        def call():
            _parallel.run(lambda a, b: impl.shuffle_groups(offsets[a:b + 1], x, np.uint64(0),
                                                           np.uint64(a), out),
                          offsets.shape[0] - 1, _parallel.n_threads(threads),
                          min_items=controls._MIN_SHUFFLE_GROUPS_PER_THREAD)
            return out

        return call
    return prepare


def _bare_replay(factual, alternative, offsets):
    """fc_replay_advantage (alpha 0.05, threshold 0: it checks the offsets'
    order and writes ``critical`` too) into fresh outputs, as any caller of
    the kernel makes them for a new result (the public call has no ``out=``;
    at 1.1e6 steps their first writes, the pages the system maps, cost about
    a fifth of the kernel's time); both arms on the same CSR ``offsets``."""
    def prepare(backend, threads):
        impl = kernels("audit.replay_advantage", backend)
        n_steps = offsets.shape[0] - 1

        def call():
            adv, noise, res = np.empty(n_steps), np.empty(n_steps), np.empty(n_steps)
            critical = np.empty(n_steps, dtype=bool)
            impl.replay_advantage(offsets, factual, offsets, alternative, 0.05, 0.0, adv, noise,
                                  res, critical)
            return adv

        return call
    return prepare


def _bare_derangement(perm):
    """fc_derangement (seed 0) into ``perm``, the array the public call
    writes with ``out=``: the kernel's random swaps over 8 MB run at the
    speed of the memory they land in (its caches, and how much of it the
    system backs with huge pages), so both sides write the same array. Each
    making a fresh one, public ÷ kernel read 0.87-1.25 by the turns' order
    and which freed block each side's allocation got (C 0.92 and Numba 1.21
    in one run, C 1.25 and Numba 0.97 in the run before, AMD EPYC Zen 4,
    load 1): not the public call's ~40 us of checks."""
    def prepare(backend, threads):
        impl = kernels("audit.derangement", backend)

        def call():
            impl.derangement(perm.shape[0], np.uint64(0), perm)
            return perm

        return call
    return prepare


def _bare_mean_diff(vals, obs, resamples):
    """fc_bootstrap_mean_diff (seed 0) and fc_percentile_interval (level
    0.95) over contrastive._bootstrap_effects' split of the steps (rows of
    ``vals``) into prepared replicates and intervals."""
    def prepare(backend, threads):
        impl = kernels("audit.bootstrap_mean_diff", backend)
        flat, steps = vals.reshape(-1), vals.shape[0]
        offsets = np.arange(steps + 1, dtype=np.int64) * vals.shape[1]
        reps, low, high = np.empty((steps, resamples)), np.empty(steps), np.empty(steps)

        def part(a, c):
            impl.bootstrap_mean_diff(offsets[a:c + 1], flat, obs, resamples, np.uint64(0),
                                     np.uint64(a), reps[a:c])
            impl.percentile_interval(reps[a:c], 0.0, 0.025, 0.975, low[a:c], high[a:c])

        def call():
            _parallel.run(part, steps, _parallel.n_threads(threads))
            return low, high

        return call
    return prepare


def _trajectory_cases(quick, rng):
    trajectories = 2_000 if quick else 50_000
    resamples = 1_000 if quick else 10_000
    offsets = np.concatenate([[0], np.cumsum(rng.integers(5, 41, trajectories))])
    n = int(offsets[-1])
    a_replay = rng.normal(size=n).round(1)
    credit = a_replay + rng.normal(size=n)
    limit = Limit(credit, a_replay, offsets)
    case = f"{trajectories} traj of 5-40 steps"
    yield Case("within_spearman", case,
               lambda backend, threads: fc.within_spearman(credit, a_replay, offsets,
                                                           threads=threads, backend=backend),
               limit,
               Alternative("scipy rankdata by length",
                           lambda: _numpy_within_spearman(credit, a_replay, offsets)),
               # 25-40 ms calls: thread CPU time read 1.01-1.02 where the wall time of
               # 30 turns read 1.03-1.11 (load 5)
               "report", key="audit.spearman", repeats=20,
               bare=_bare_spearman(credit, a_replay, offsets, 4))
    rho = fc.within_spearman(credit, a_replay, offsets)
    yield Case("spearman_audit", f"{case}, {resamples} resamples",
               lambda backend, threads: fc.spearman_audit(
                   credit, a_replay, offsets, resamples=resamples, threads=threads,
                   backend=backend),
               limit,
               Alternative("scipy rankdata + NumPy bootstrap",
                           lambda: (_numpy_within_spearman(credit, a_replay, offsets),
                                    _numpy_bootstrap(rho[~np.isnan(rho)], None, resamples, 0,
                                                     100)),
                           repeats=1),
               "report", threads=(1, 2), repeats=3,
               bare=_in_sequence(_bare_spearman(credit, a_replay, offsets, 4),
                                 _bare_bootstrap(rho, None, resamples)))
    shuffled = np.empty_like(credit)
    yield Case("shuffle_within", case,
               lambda backend, threads: fc.shuffle_within(credit, offsets, out=shuffled,
                                                          threads=threads, backend=backend),
               Limit(credit, offsets),
               Alternative("NumPy lexsort(group, random)",
                           lambda: _numpy_shuffle_within(credit, offsets, 0), repeats=5),
               key="audit.shuffle", repeats=50, bare=_bare_shuffle(credit, offsets, shuffled))
    f_off = np.arange(0, 8 * n + 1, 8)
    factual = (rng.random(8 * n) < 0.3).astype(float)
    alternative = (rng.random(8 * n) < 0.3).astype(float)

    def numpy_replay():
        mf = np.add.reduceat(factual, f_off[:-1]) / 8
        ma = np.add.reduceat(alternative, f_off[:-1]) / 8
        sd = np.sqrt(np.add.reduceat((factual - np.repeat(mf, 8)) ** 2, f_off[:-1]) / 7)
        return mf - ma, sd

    yield Case("replay_advantage", f"{n} steps x 8 + 8 replays",
               lambda backend, threads: fc.replay_advantage(
                   factual, alternative, factual_offsets=f_off, alternative_offsets=f_off,
                   backend=backend),
               Limit(factual, alternative, f_off),
               Alternative("NumPy add.reduceat", numpy_replay, repeats=5),
               key="audit.replay_advantage", repeats=50,
               bare=_bare_replay(factual, alternative, f_off))


def _control_cases(quick, rng):
    n = 10_000 if quick else 1_000_000
    perm = np.empty(n, dtype=np.int64)   # written by both sides (see _bare_derangement)
    yield Case("derangement", f"n={n:,}, into out=",
               lambda backend, threads: fc.derangement(n, seed=0, out=perm, backend=backend),
               Limit(perm),      # the permutation it writes
               Alternative("NumPy permutation until no fixed point",
                           lambda: _numpy_derangement(n, 0), repeats=5),
               key="audit.derangement", repeats=100, bare=_bare_derangement(perm))
    steps, k, resamples = (20, 16, 1_000) if quick else (200, 16, 10_000)
    vals = rng.normal(size=(steps, k))
    obs = rng.normal(size=k)
    yield Case("contrastive_effects", f"{steps} steps x {k} continuous outcomes, "
               f"{resamples} resamples",
               lambda backend, threads: fc.contrastive_effects(
                   vals, obs, kind="continuous", resamples=resamples, threads=threads,
                   backend=backend),
               Limit(vals, obs),
               Alternative("NumPy index matrices per step",
                           lambda: _numpy_mean_diff_bootstrap(vals, obs, resamples, 0)),
               key="audit.bootstrap_mean_diff", repeats=3,
               bare=_bare_mean_diff(vals, obs, resamples))


def _numpy_spearman_difference(x, y, z, resamples, seed):
    """What a user writes: index matrices of resamples, scipy's rankdata along
    rows, Pearson of the ranks row-wise, percentile interval."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.shape[0], size=(resamples, x.shape[0]))

    def rho(a, b):
        ra, rb = rankdata(a, axis=1), rankdata(b, axis=1)
        ra -= ra.mean(1, keepdims=True)
        rb -= rb.mean(1, keepdims=True)
        return (ra * rb).sum(1) / np.sqrt((ra * ra).sum(1) * (rb * rb).sum(1))

    zi = z[idx]
    return np.quantile(rho(x[idx], zi) - rho(y[idx], zi), [0.025, 0.975])


def _bare_spearman_difference(x, y, z, resamples, seed=0):
    """fc_bootstrap_spearman_diff over the resamples, split as
    spearman_difference splits them, on the sorted samples it makes, into
    prepared replicates, then the percentile interval (level 0.95) as
    _bare_bootstrap takes it (the estimate is NumPy, counted by the
    ratio)."""
    (sx, ox), (sy, oy), (sz, oz) = (bootstrap._sorted(v) for v in (x, y, z))
    n = x.shape[0]

    def prepare(backend, threads):
        impl = kernels("audit.bootstrap_spearman_diff", backend)
        reps, scratch, low, high = np.empty(resamples), np.empty((1, resamples)), \
            np.empty(1), np.empty(1)

        def part(start, stop):
            impl.bootstrap_spearman_diff(sx, ox, sy, oy, sz, oz, np.uint64(seed), start, stop,
                                         np.empty(n, dtype=np.int32), np.empty(3 * n),
                                         reps[start:stop])

        def call():
            _parallel.run(part, resamples, _parallel.n_threads(threads),
                          min_items=bootstrap._MIN_RESAMPLES_PER_THREAD)
            np.copyto(scratch[0], reps)
            impl.percentile_interval(scratch, 0.0, 0.025, 0.975, low, high)
            return reps, low, high

        return call
    return prepare


def _paired_cases(quick, rng):
    n, resamples = (400, 1_000) if quick else (1_171, 10_000)
    z = rng.normal(size=n)
    x, y = z + 0.5 * rng.normal(size=n), z + 3 * rng.normal(size=n)
    yield Case("spearman_difference", f"{n} items, {resamples} resamples",
               lambda backend, threads: fc.audit.spearman_difference(
                   x, y, z, resamples=resamples, threads=threads, backend=backend),
               Limit(x, y, z),
               Alternative("NumPy index matrices + rankdata",
                           lambda: _numpy_spearman_difference(x, y, z, resamples // 10, 0),
                           scale=10),
               threads=(1, 2), key="audit.bootstrap_spearman_diff", repeats=5,
               bare=_bare_spearman_difference(x, y, z, resamples))


def _bare_null_worlds(train, audit, worlds, seed=0, atol=1e-9):
    """fc_null_worlds over the worlds, split as correlated_error_null splits
    them, on the per-request statistics it computes first (made once here),
    into fresh outputs (the public call's are new too: their first writes
    fault ~5,700 pages for 1000 worlds of 1171 requests, ~9 ms of the
    kernel's CPU time beside prepared outputs on the AMD EPYC, most of the
    1.06-1.14 public ÷ kernel read against those), then the worlds'
    statistics from them
    (null._world_statistics: medians and Spearman correlations of every
    world, the result the public call computes from the kernel's, not a
    check). The statistics of the tables (Shapley credits, insertion edges,
    pair interactions: other kernels and NumPy) are not in the bare call:
    the ratio counts them with the checks."""
    t, a, m = null._pair(train, audit)
    scale = a.std(axis=1)
    resid = (t - a) / scale[:, None]

    def stats(v):
        phi = fc.shapley(v)
        return (np.ascontiguousarray(null._edges(v, m)[0]),
                np.ascontiguousarray(null._pairs(v, m, None, None)),
                phi - phi.mean(axis=1, keepdims=True))

    (ea, pa, fa), (er, pr, fr) = stats(a), stats(resid)
    fa[np.abs(fa).max(axis=1) <= atol] = 0.0

    es, ps, n = null._signs(ea, atol), null._signs(pa, atol), a.shape[0]
    edge_count = (es != 0).sum(axis=1)
    cos_ok = (fa != 0).any(axis=1)
    strength = np.abs(pa).sum(axis=1) / scale
    strength_ranks = (null._rank_rows(strength), null._rank_rows(strength[cos_ok]))

    def prepare(backend, threads):
        impl = kernels("audit.null_worlds", backend)

        def call():
            out = (np.empty((worlds, n), dtype=np.int32), np.empty((worlds, n), dtype=np.int32),
                   np.empty((worlds, n), dtype=np.int32), np.empty((worlds, n)))

            def part(start, stop):
                impl.null_worlds(scale, ea, es, er, pa, ps, pr, fa, fr, atol, np.uint64(seed),
                                 start, stop, *(o[start:stop].reshape(-1) for o in out))

            _parallel.run(part, worlds, _parallel.n_threads(threads), min_items=16)
            return null._world_statistics(out[0], edge_count, out[1], out[2], out[3],
                                          strength_ranks, cos_ok)

        return call
    return prepare


def _null_cases(quick, rng):
    n, worlds = (300, 100) if quick else (1_171, 1_000)
    audit = rng.normal(size=(n, 1 << M))
    audit[:, 0] = 0
    train = audit + 0.3 * rng.normal(size=audit.shape) * audit.std(axis=1, keepdims=True)
    yield Case("correlated_error_null", f"{n} requests x m={M}, {worlds} worlds",
               lambda backend, threads: fc.audit.correlated_error_null(
                   train, audit, worlds=worlds, threads=threads, backend=backend),
               Limit(train, audit), None,
               # the best of 3 read public ÷ kernel 1.20 (C, 1 thread) where the
               # thread CPU time of 12 turns read 1.045: the tables' statistics and
               # signs, ~7 ms warm beside the bare call's ~280 ms
               threads=(1, 2), key="audit.null_worlds", repeats=10,
               bare=_bare_null_worlds(train, audit, worlds))


def cases(quick: bool):
    rng = np.random.default_rng(0)
    yield from _request_cases(quick, rng)
    yield from _trajectory_cases(quick, rng)
    yield from _control_cases(quick, rng)
    yield from _paired_cases(quick, rng)
    yield from _null_cases(quick, rng)
