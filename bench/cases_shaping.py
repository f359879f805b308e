"""Cases of the shaping family (issue targets in the `target` column).

Time ratios, lower is better: `x stream` = kernel time / time to stream its
input once; `x alternative` = kernel time / the alternative's time.

Bare calls: the projection and token kernels on the converted inputs (read-only
views, as the public calls pass them, so Numba runs the same compiled
signature), split over rows as shaping.py splits them, into the same `out`.
"""
from __future__ import annotations

import numpy as np

import fastcredit as fc
from common import Alternative, Case, Limit, kernels, sci
from fastcredit import _parallel, shaping
from fastcredit._validation import read_only

M = 5
BISECTION_TOL = 1e-12
# Rounds of the interleaved timing (common.interleaved) of the projection's
# cases; the 1-2 ms token layouts take TOKEN_REPEATS. A 2-thread call is
# timed at its best only in a round where both cores are free for its whole
# length: with best of 5, the 2-thread public ÷ kernel of these rows read
# 1.11-1.40 on the shared AMD EPYC (1-thread rows 1.00-1.07), and from 0.6
# to 2.3 between runs when loaded (load 11). What the public token call adds
# is its Python before the kernel, run with the caches the previous kernel
# left (~10 us warm): 31-35 us cold against the bare call's 12-15 (its checks
# 12, `output`'s overlap tests 9, the backend and threads 5; best of 100 at
# a40c6c0, AMD EPYC Zen 4, load 5-7), 1-2 % of the 1-thread kernel, whose
# main-thread CPU public ÷ kernel read 1.02-1.06.
REPEATS = 10
TOKEN_REPEATS = 100


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


def _bare_projection(u, kappa, out):
    """The bare call of fc.project_zero_sum(u, kappa, out=out) (u float64
    (n, m), kappa a scalar): fc_project_box over row ranges, with kappa as
    the one shared bound pair (strides 0) and total 0."""
    def prepare(backend, threads):
        impl = kernels("shaping.project", backend)
        flat = read_only(u)
        lo, hi = read_only(np.array([-kappa])), read_only(np.array([kappa]))
        total = read_only(np.zeros(1))

        def part(a, b):
            impl.project_box(flat[a:b], lo, hi, 0, 0, None, 0, total, 0, out[a:b])

        return lambda: _parallel.run(part, u.shape[0], _parallel.n_threads(threads),
                                     min_items=shaping._MIN_ROWS_PER_THREAD)
    return prepare


def _projection_cases(quick):
    rows = 20_000 if quick else 1_000_000
    rng = np.random.default_rng(0)
    credit = rng.normal(size=(rows, M))
    u = credit - credit.mean(1, keepdims=True)
    u /= u.std(1, keepdims=True)          # what shape_advantages projects
    out = np.empty_like(u)
    limit = Limit(u)

    def met(r):
        if r.threads > 1:
            return ""
        ns = r.t / rows * 1e9
        return "yes" if ns <= 20 and r.t <= r.alt / 50 else f"no ({ns:.0f} ns/row)"

    for kappa, case in [(3.0, "no row clips (kappa=3)"), (1.0, "every row clips (kappa=1)"),
                        (0.5, "most coordinates clip (kappa=0.5)")]:
        np.testing.assert_allclose(fc.project_zero_sum(u, kappa), numpy_bisection(u, kappa),
                                   atol=1e-9)
        yield Case("project_zero_sum", f"{sci(rows)} x {M}, {case}",
                   lambda backend, threads, kappa=kappa: fc.project_zero_sum(
                       u, kappa, out=out, threads=threads, backend=backend),
                   limit,
                   Alternative("NumPy bisection to 1e-12", lambda kappa=kappa: numpy_bisection(
                       u, kappa), repeats=1),
                   lambda th: "<=20 ns/row, <=1/50x bisection" if th == 1 else "", met,
                   threads=(1, 2) if kappa == 1.0 else (1,), key="shaping.project",
                   repeats=REPEATS, bare=_bare_projection(u, kappa, out))


def _bare_tokens(base, action_adv, token_action, mask, out):
    """The bare call of fc.token_advantages(..., out=out): the token kernel
    over sequence ranges, the bool mask read as uint8."""
    def prepare(backend, threads):
        impl = kernels("shaping.tokens", backend)
        mk = None if mask is None else mask.view(np.uint8)
        n_seq, n_tok = token_action.shape

        def part(a, b):
            impl.token_advantages(base[a:b], action_adv[a:b], token_action[a:b],
                                  None if mk is None else mk[a:b], out[a:b])

        return lambda: _parallel.run(part, n_seq, _parallel.n_threads(threads),
                                     min_items=max(1, shaping._MIN_TOKENS_PER_THREAD // n_tok))
    return prepare


def _token_cases(quick):
    seqs, tokens = (256, 512) if quick else (4096, 2048)
    rng = np.random.default_rng(1)
    token_action = rng.integers(-1, M, size=(seqs, tokens)).astype(np.int32)
    token_action.sort(axis=1)             # contiguous spans per action, like real responses
    mask = np.ones((seqs, tokens), dtype=bool)
    mask[:, -tokens // 8:] = False        # right padding
    base = rng.normal(size=seqs)
    action_adv = rng.normal(size=(seqs, M))
    out = np.empty((seqs, tokens), dtype=np.float32)
    limit = Limit(token_action)

    def numpy_layout():
        gathered = np.take_along_axis(action_adv, np.maximum(token_action, 0), 1)
        adv = np.where(token_action >= 0, gathered, base[:, None])
        return np.where(mask, adv, 0.0).astype(np.float32)

    np.testing.assert_array_equal(fc.token_advantages(base, action_adv, token_action, mask),
                                  numpy_layout())
    alt = Alternative("NumPy take_along_axis + where", numpy_layout, repeats=2)
    for masked in (False, True):
        mk = mask if masked else None
        yield Case("token_advantages", f"{seqs} x {tokens} int32{', mask' if masked else ''}",
                   lambda backend, threads, mk=mk: fc.token_advantages(
                       base, action_adv, token_action, mk, out=out, threads=threads,
                       backend=backend),
                   limit, alt, "<=3x stream", lambda r: "yes" if r.t <= 3 * r.stream else "no",
                   threads=(1, 2), key="shaping.tokens", repeats=TOKEN_REPEATS,
                   bare=_bare_tokens(base, action_adv, token_action, mk, out))


def _shaping_cases(quick):
    rows = 20_000 if quick else 1_000_000
    rng = np.random.default_rng(2)
    rewards = rng.normal(size=rows)
    credit = rng.normal(size=(rows, M))
    base = fc.group_advantages(rewards, 8)
    yield Case("group_advantages", f"{sci(rows)} rewards, groups of 8",
               lambda backend, threads: fc.group_advantages(rewards, 8), Limit(rewards),
               backends=("numpy",), repeats=3, bare="no kernel: NumPy bincounts throughout")
    # bare: the shaping kernel (centring, scaling, projection and base +
    # beta z in one pass over blocks of rows) over shape_advantages' row
    # split. Both calls write into one prepared output, as the projection's
    # cases do: a fresh 40 MB result costs its page faults to any call that
    # allocates one, public or bare
    out = np.empty_like(credit)
    yield Case("shape_advantages", f"{sci(rows)} x {M}, std, kappa=1",
               lambda backend, threads: fc.shape_advantages(base, credit, threads=threads,
                                                            backend=backend, out=out),
               Limit(credit), repeats=5, key="shaping.project",
               bare=_bare_shaping(base, credit, out))


def _bare_shaping(base, credit, out):
    """The bare call of fc.shape_advantages(base, credit) (float64, std,
    beta 1, kappa 1): the shaping kernel over row ranges."""
    def prepare(backend, threads):
        impl = kernels("shaping.project", backend)
        flat, b = read_only(credit), read_only(base)

        def part(a, e):
            impl.shape_advantages(flat[a:e], b[a:e], 1.0, 1.0, 0, None, out[a:e])

        return lambda: _parallel.run(part, credit.shape[0], _parallel.n_threads(threads),
                                     min_items=shaping._MIN_ROWS_PER_THREAD)
    return prepare


def cases(quick: bool):
    yield from _projection_cases(quick)
    yield from _token_cases(quick)
    yield from _shaping_cases(quick)
