"""Ratios for the shaping family (issue targets in the `target` column).

Time ratios, lower is better: `x stream` = kernel time / time to stream its
input once; `x alternative` = kernel time / the alternative's time.
"""
from __future__ import annotations

import numpy as np

import fastcredit as fc
from common import backend_choice_rows, best_of, row, stream_time

ROWS, M = 1_000_000, 5
SEQS, TOKENS = 4096, 2048
BISECTION_TOL = 1e-12


def numpy_bisection(u, kappa, total=0.0, tol=BISECTION_TOL):
    """What a user would write: vectorised bisection on tau until every
    row's bracket is narrower than tol."""
    lo = u.min(1) - kappa
    hi = u.max(1) + kappa
    while (hi - lo).max() > tol:
        mid = 0.5 * (lo + hi)
        f = np.clip(u - mid[:, None], -kappa, kappa).sum(1)
        above = f > total
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return np.clip(u - (0.5 * (lo + hi))[:, None], -kappa, kappa)


def _projection_rows(rows, fastest):
    rng = np.random.default_rng(0)
    credit = rng.normal(size=(ROWS, M))
    u = credit - credit.mean(1, keepdims=True)
    u /= u.std(1, keepdims=True)          # what shape_advantages projects
    out = np.empty_like(u)
    stream = stream_time(u)
    cases = [(3.0, "no row clips (kappa=3)"), (1.0, "every row clips (kappa=1)")]
    for kappa, case in cases:
        alt = best_of(lambda: numpy_bisection(u, kappa), 1)
        np.testing.assert_allclose(fc.project_zero_sum(u, kappa), numpy_bisection(u, kappa),
                                   atol=1e-9)
        times = {}
        for backend in fc.available_backends():
            t = best_of(lambda: fc.project_zero_sum(u, kappa, out=out, threads=1,
                                                    backend=backend), 5)
            times[backend] = t
            ns = t / ROWS * 1e9
            met = "yes" if ns <= 20 and t <= alt / 50 else f"no ({ns:.0f} ns/row)"
            rows.append(row("project_zero_sum", f"1e6 x 5, {case}", backend, 1, t, stream, alt,
                             "NumPy bisection to 1e-12", "<=20 ns/row, <=1/50x bisection",
                             met))
        if kappa == 1.0:
            fastest["shaping.project"] = min(times, key=times.get)
    for backend in fc.available_backends():
        t = best_of(lambda: fc.project_zero_sum(u, 1.0, out=out, threads=2, backend=backend), 5)
        rows.append(row("project_zero_sum", "1e6 x 5, every row clips", backend, 2, t, stream))


def _token_rows(rows, fastest):
    rng = np.random.default_rng(1)
    token_action = rng.integers(-1, M, size=(SEQS, TOKENS)).astype(np.int32)
    token_action.sort(axis=1)             # contiguous spans per action, like real responses
    mask = np.ones((SEQS, TOKENS), dtype=bool)
    mask[:, -TOKENS // 8:] = False        # right padding
    base = rng.normal(size=SEQS)
    action_adv = rng.normal(size=(SEQS, M))
    out = np.empty((SEQS, TOKENS), dtype=np.float32)
    stream = stream_time(token_action)

    def numpy_layout():
        gathered = np.take_along_axis(action_adv, np.maximum(token_action, 0), 1)
        adv = np.where(token_action >= 0, gathered, base[:, None])
        return np.where(mask, adv, 0.0).astype(np.float32)

    alt = best_of(numpy_layout, 2)
    np.testing.assert_array_equal(fc.token_advantages(base, action_adv, token_action, mask),
                                  numpy_layout())
    times = {}
    for backend in fc.available_backends():
        for threads in (1, 2):
            for masked in (False, True):
                mk = mask if masked else None
                t = best_of(lambda: fc.token_advantages(base, action_adv, token_action, mk,
                                                        out=out, threads=threads,
                                                        backend=backend), 5)
                if threads == 1 and masked:
                    times[backend] = t
                case = f"4096 x 2048 int32{', mask' if masked else ''}"
                rows.append(row("token_advantages", case, backend, threads, t, stream, alt,
                                 "NumPy take_along_axis + where", "<=3x stream",
                                 "yes" if t <= 3 * stream else "no"))
    fastest["shaping.tokens"] = min(times, key=times.get)


def _shaping_rows(rows):
    rng = np.random.default_rng(2)
    rewards = rng.normal(size=ROWS)
    credit = rng.normal(size=(ROWS, M))
    base = fc.group_advantages(rewards, 8)
    t = best_of(lambda: fc.group_advantages(rewards, 8), 3)
    rows.append(row("group_advantages", "1e6 rewards, groups of 8", "numpy", 1, t,
                     stream_time(rewards)))
    t = best_of(lambda: fc.shape_advantages(base, credit, threads=1), 3)
    rows.append(row("shape_advantages", "1e6 x 5, std, kappa=1", "c", 1, t,
                     stream_time(credit)))


def rows():
    rows, fastest = [], {}
    _projection_rows(rows, fastest)
    _token_rows(rows, fastest)
    _shaping_rows(rows)
    rows += backend_choice_rows(fastest)
    return rows
