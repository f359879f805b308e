"""Ratios for the audit family (issue 6 targets in the `target` column).

Time ratios, lower is better: `x stream` = kernel time / time to stream its
input once; `x alternative` = kernel time / the alternative's time (the
vectorised NumPy/SciPy code a user would write instead).
"""
from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

import fastcredit as fc
from common import best_of, row, stream_time

REQUESTS, M, RESAMPLES = 1_171, 5, 10_000
TRAJECTORIES = 50_000


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


def _paired_bootstrap_rows(rows, rng):
    reference = rng.normal(size=(REQUESTS, M))
    cos_a = fc.alignment(reference + 0.5 * rng.normal(size=reference.shape), reference).cosine
    cos_b = fc.alignment(reference + 1.5 * rng.normal(size=reference.shape), reference).cosine
    stream = stream_time(cos_a, cos_b)
    alt = best_of(lambda: _numpy_bootstrap(cos_a, cos_b, RESAMPLES, 0, 1000), 3)
    case = f"{REQUESTS} requests x m={M}, {RESAMPLES} resamples"
    for backend in fc.available_backends():
        for threads in (1, 2):
            t = best_of(lambda: fc.paired_bootstrap(cos_a, cos_b, resamples=RESAMPLES,
                                                    threads=threads, backend=backend), 7)
            met = ("yes" if t < 0.1 and t * 20 <= alt else "no") if threads == 1 else ""
            rows.append(row("paired_bootstrap", case, backend, threads, t, stream, alt,
                             "NumPy index matrix + median", "<100 ms 1 thread, >=20x NumPy",
                             met))
    credit = reference + rng.normal(size=reference.shape)
    alt = best_of(lambda: [np.corrcoef(c, r)[0, 1] for c, r in zip(credit[:100],
                                                                 reference[:100])], 3) * (
        REQUESTS / 100)
    for backend in fc.available_backends():
        t = best_of(lambda: fc.alignment(credit, reference, threads=1, backend=backend), 7)
        rows.append(row("alignment", f"{REQUESTS} requests x m={M}", backend, 1, t,
                         stream_time(credit, reference), alt, "np.corrcoef per request"))


def _trajectory_rows(rows, rng):
    offsets = np.concatenate([[0], np.cumsum(rng.integers(5, 41, TRAJECTORIES))])
    n = int(offsets[-1])
    a_replay = rng.normal(size=n).round(1)
    credit = a_replay + rng.normal(size=n)
    stream = stream_time(credit, a_replay, offsets)
    case = f"{TRAJECTORIES} traj of 5-40 steps"
    alt_rho = best_of(lambda: _numpy_within_spearman(credit, a_replay, offsets), 3)
    for backend in fc.available_backends():
        t = best_of(lambda: fc.within_spearman(credit, a_replay, offsets, threads=1,
                                               backend=backend), 5)
        rows.append(row("within_spearman", case, backend, 1, t, stream, alt_rho,
                         "scipy rankdata by length", "report"))
    rho = fc.within_spearman(credit, a_replay, offsets)
    alt_boot = best_of(lambda: _numpy_bootstrap(rho[~np.isnan(rho)], None, RESAMPLES, 0, 100), 1)
    for backend in fc.available_backends():
        for threads in (1, 2):
            t = best_of(lambda: fc.spearman_audit(credit, a_replay, offsets,
                                                  resamples=RESAMPLES, threads=threads,
                                                  backend=backend), 3)
            rows.append(row("spearman_audit", case + f", {RESAMPLES} resamples", backend,
                             threads, t, stream, alt_rho + alt_boot,
                             "scipy rankdata + NumPy bootstrap", "report"))
    alt = best_of(lambda: _numpy_shuffle_within(credit, offsets, 0), 5)
    for backend in fc.available_backends():
        t = best_of(lambda: fc.shuffle_within(credit, offsets, threads=1, backend=backend), 7)
        rows.append(row("shuffle_within", case, backend, 1, t, stream_time(credit, offsets),
                         alt, "NumPy lexsort(group, random)"))
    f_off = np.arange(0, 8 * n + 1, 8)
    factual = (rng.random(8 * n) < 0.3).astype(float)
    alternative = (rng.random(8 * n) < 0.3).astype(float)

    def numpy_replay():
        mf = np.add.reduceat(factual, f_off[:-1]) / 8
        ma = np.add.reduceat(alternative, f_off[:-1]) / 8
        sd = np.sqrt(np.add.reduceat((factual - np.repeat(mf, 8)) ** 2, f_off[:-1]) / 7)
        return mf - ma, sd

    alt = best_of(numpy_replay, 5)
    for backend in fc.available_backends():
        t = best_of(lambda: fc.replay_advantage(factual, alternative, factual_offsets=f_off,
                                                alternative_offsets=f_off, backend=backend), 5)
        rows.append(row("replay_advantage", f"{n} steps x 8 + 8 replays", backend, 1, t,
                         stream_time(factual, alternative, f_off), alt,
                         "NumPy add.reduceat"))


def rows() -> list[dict]:
    rng = np.random.default_rng(0)
    out: list[dict] = []
    _paired_bootstrap_rows(out, rng)
    _trajectory_rows(out, rng)
    return out
