"""Ratios for the sampling family (issue 4 targets in the `target` column).

Time ratios, lower is better: `x stream` = sampler time / time to stream the
values it evaluates once (n_evals doubles); `x alternative` = sampler time /
the alternative's time at the same number of walks (a vectorised NumPy
permutation sampler, or shapiq's PermutationSamplingSV at the same budget).
"""
from __future__ import annotations

import math
import time

import numpy as np

import fastcredit as fc
from common import best_of, row, stream_time
from fastcredit import synthetic

M_TABLE, EVALS = 16, 1_000_000
BATCH, M_BATCH, BATCH_WALKS = 100_000, 10, 200
SCM_WALKS = 100_000


def numpy_sampler(prefix_values, m, walks, rng, games=1):
    """What a user writes without a compiled sampler: random orders by argsort,
    prefix masks by cumsum, one vectorised evaluation of all prefixes, marginals
    scattered back by player. prefix_values(masks (games, walks, m + 1))."""
    perms = np.argsort(rng.random((games, walks, m)), axis=-1)
    prefix = np.zeros((games, walks, m + 1), dtype=np.int64)
    np.cumsum(np.left_shift(1, perms), axis=-1, out=prefix[..., 1:])
    marg = np.empty((games, walks, m))
    np.put_along_axis(marg, perms, np.diff(prefix_values(prefix), axis=-1), axis=-1)
    return marg.mean(1), marg.std(1, ddof=1) / math.sqrt(walks)


def _rmse(values, want):
    return float(np.sqrt(np.mean((np.asarray(values) - want) ** 2)))


def _shapiq_row(v, want, ours_time, ours_rmse):
    try:
        from shapiq.approximator import PermutationSamplingSV
    except ImportError:
        return None
    pw = 1 << np.arange(M_TABLE)

    def game(coalitions):
        return v[np.atleast_2d(coalitions).astype(np.int64) @ pw]

    times, errors = [], []
    for seed in (0, 1):
        approx = PermutationSamplingSV(n=M_TABLE, random_state=seed)
        t0 = time.perf_counter()
        iv = approx.approximate(budget=EVALS, game=game)
        times.append(time.perf_counter() - t0)
        errors.append(_rmse(iv.get_n_order_values(1), want))
    alt, alt_rmse = min(times), float(np.mean(errors))
    met = "yes" if alt / ours_time >= 100 and ours_rmse <= alt_rmse else "no"
    return row("permutation_shapley", f"table m=16, 1e6 evals: rmse {ours_rmse:.2g} vs "
                f"shapiq {alt_rmse:.2g}", "best", 1, ours_time, stream_time(np.empty(EVALS)),
                alt, "shapiq 1.4 PermutationSamplingSV, same budget",
                ">=100x faster, error no worse", met)


def _table_rows(rows, fastest):
    rng = np.random.default_rng(0)
    v = rng.random(1 << M_TABLE)
    want = fc.shapley(v)
    stream = stream_time(np.empty(EVALS))
    walks = 2 * ((EVALS - 2) // (2 * (M_TABLE - 1)))
    alt = best_of(lambda: numpy_sampler(lambda p: v[p], M_TABLE, walks, rng), 3)
    times, errors = {}, {}
    for backend in fc.available_backends():
        for antithetic in (True, False):
            def run(seed=0):
                return fc.permutation_shapley(v, budget=EVALS, antithetic=antithetic,
                                              seed=seed, backend=backend)

            t = best_of(run, 5)
            est = run()
            ns = t / est.n_evals * 1e9
            rows.append(row("permutation_shapley",
                             f"table m=16, 1e6 evals, {'antithetic' if antithetic else 'plain'}"
                             f": {ns:.1f} ns/eval", backend, 1, t, stream, alt,
                             "NumPy vectorised sampler", "<=10 ns/eval",
                             "yes" if ns <= 10 else "no"))
            if antithetic:
                times[backend] = t
                errors[backend] = np.mean([_rmse(run(s).values, want) for s in range(5)])
    fastest["sampling.tables"] = min(times, key=times.get)
    best = fastest["sampling.tables"]
    shapiq_row = _shapiq_row(v, want, times[best], errors[best])
    if shapiq_row is not None:
        rows.append(shapiq_row)


def _scm_rows(rows):
    scm = synthetic.and_failure(0.3)
    q = 0.3

    def numpy_and_game(prefix):
        # the same SCM drawn in NumPy: steps 0 and 1 bad (held, or w.p. q)
        held = (prefix[..., None] >> np.arange(3)) & 1
        bad = np.where(held == 1, np.array([1, 1, 0]), rng.random(held.shape) < q)
        return (bad[..., 0] & bad[..., 1]).astype(np.float64)

    rng = np.random.default_rng(0)
    alt = best_of(lambda: numpy_sampler(numpy_and_game, 3, SCM_WALKS, rng), 3)
    for crn in (False, True):
        def run():
            return fc.permutation_shapley(scm.game, 3, permutations=SCM_WALKS, crn=crn, seed=1)

        t = best_of(run, 5)
        n_evals = run().n_evals
        rows.append(row("permutation_shapley",
                         f"AND-failure SCM, @njit stochastic, {'CRN' if crn else 'fresh keys'}: "
                         f"{n_evals / t / 1e6:.0f} M evals/s", "numba", 1, t,
                         stream_time(np.empty(n_evals)), alt,
                         "NumPy sampler + vectorised SCM draw", "report evals/s", "reported"))


def _batch_rows(rows):
    rng = np.random.default_rng(1)
    v = rng.random((BATCH, 1 << M_BATCH))
    stream = stream_time(v)
    sub = v[:2000]
    alt = best_of(lambda: numpy_sampler(
        lambda p: np.take_along_axis(sub, p.reshape(len(sub), -1), axis=1).reshape(p.shape),
        M_BATCH, BATCH_WALKS, rng, games=len(sub)), 3) * BATCH / len(sub)
    for backend in fc.available_backends():
        for threads in (1, 2):
            t = best_of(lambda: fc.permutation_shapley(v, permutations=BATCH_WALKS, seed=2,
                                                       threads=threads, backend=backend), 3)
            rows.append(row("permutation_shapley",
                             f"1e5 tables m=10, 200 walks: {BATCH / t:,.0f} games/s",
                             backend, threads, t, stream, alt,
                             "NumPy vectorised sampler (per game, x1e5)",
                             "report games/s", "reported"))


def _permutation_rows(rows, fastest):
    perms = np.empty((100_000, M_TABLE), dtype=np.int32)
    rng = np.random.default_rng(0)
    alt = best_of(lambda: np.argsort(rng.random(perms.shape), axis=1), 5)
    stream = stream_time(perms)
    times = {}
    for backend in fc.available_backends():
        impl = fc._backend.kernels("sampling", backend)
        times[backend] = t = best_of(lambda: impl.permutations(0, 0, 0, perms), 5)
        rows.append(row("sampling permutations", "1e5 orders of 16 players", backend, 1, t,
                         stream, alt, "NumPy argsort of uniforms", "report", "reported"))
    fastest["sampling.permutations"] = min(times, key=times.get)


def rows() -> list[dict]:
    out: list[dict] = []
    fastest: dict[str, str] = {}
    _table_rows(out, fastest)
    _permutation_rows(out, fastest)
    _scm_rows(out)
    _batch_rows(out)
    for key, backend in fastest.items():
        out.append({"kernel": key, "case": "fastest backend on this bench", "backend": backend,
                    "target": f"FASTEST[{key!r}] = {fc._backend.FASTEST.get(key)!r}",
                    "met": "yes" if fc._backend.FASTEST.get(key) == backend else "update"})
    return out
