"""Ratios for the tables family (issue targets in the `target` column).

Time ratios, lower is better: `x stream` = kernel time / time to stream its
input once; `x alternative` = kernel time / the alternative's time.
"""
from __future__ import annotations

import numpy as np

import fastcredit as fc
from common import backend_choice_rows, best_of, row, stream_time

B, M_SMALL = 1_000_000, 5


def _weights_matrix(m, w):
    masks = np.arange(1 << m)
    member = (masks[:, None] >> np.arange(m)) & 1
    size = member.sum(1)
    w_in = np.where(size > 0, w[np.maximum(size - 1, 0)], 0.0)
    w_out = np.where(size < m, w[np.minimum(size, m - 1)], 0.0)
    return np.where(member == 1, w_in[:, None], -w_out[:, None])


def _batch_rows(rows, fastest):
    rng = np.random.default_rng(0)
    v = rng.random((B, 1 << M_SMALL))
    out = np.empty((B, M_SMALL))
    stream = stream_time(v)
    w_shap = _weights_matrix(M_SMALL, fc.shapley_weights(M_SMALL))
    w_banz = _weights_matrix(M_SMALL, fc.banzhaf_weights(M_SMALL))
    idx = 1 << np.arange(M_SMALL)
    full = (1 << M_SMALL) - 1
    alternatives = {
        "shapley": (lambda: np.matmul(v, w_shap, out=out), "NumPy V @ W"),
        "banzhaf": (lambda: np.matmul(v, w_banz, out=out), "NumPy V @ W"),
        "singleton": (lambda: np.subtract(v[:, idx], v[:, :1], out=out), "NumPy gather"),
        "leave_one_out": (lambda: np.subtract(v[:, full:], v[:, full ^ idx], out=out),
                          "NumPy gather"),
    }
    for name, (alt_fn, alt_name) in alternatives.items():
        alt = best_of(alt_fn, 5)
        times = {}
        for backend in fc.available_backends():
            f = getattr(fc, name)
            t = best_of(lambda: f(v, out=out, threads=1, backend=backend), 5)
            times[backend] = t
            met = "yes" if t <= 1.5 * stream and t <= 0.5 * alt else "no"
            rows.append(row(name, "B=1e6, m=5, f64", backend, 1, t, stream, alt, alt_name,
                             "<=1.5x stream, <=0.5x V@W", met))
        fastest[name] = min(times, key=times.get)
    for backend in fc.available_backends():
        t1 = best_of(lambda: fc.shapley(v, out=out, threads=1, backend=backend), 5)
        t2 = best_of(lambda: fc.shapley(v, out=out, threads=2, backend=backend), 5)
        rows.append(row("shapley", "B=1e6, m=5, 2 threads", backend, 2, t2, stream, t1,
                        "same kernel, 1 thread", "report speedup", f"{t1 / t2:.2f}x speedup"))
    v32 = v.astype(np.float32)
    for backend in fc.available_backends():
        t = best_of(lambda: fc.shapley(v32, out=out, threads=1, backend=backend), 5)
        rows.append(row("shapley", "B=1e6, m=5, f32", backend, 1, t, stream_time(v32)))


def _shapiq_exact_time(v, m):
    try:
        import shapiq
    except ImportError:
        return None
    masks_v = v

    class TableGame(shapiq.Game):
        def __init__(self):
            super().__init__(n_players=m, normalize=False, verbose=False)

        def value_function(self, coalitions):
            bits = coalitions.astype(np.int64) << np.arange(m)
            return masks_v[bits.sum(1)]

    game = TableGame()

    def run():
        shapiq.ExactComputer(n_players=m, game=game)("SV", 1)

    return best_of(run, 1)


def _large_rows(rows, fastest):
    rng = np.random.default_rng(1)
    m = 20
    v = rng.random(1 << m)
    stream = stream_time(v)
    w = _weights_matrix(m, fc.shapley_weights(m))
    alt = best_of(lambda: v @ w, 3)
    shapiq_t = _shapiq_exact_time(v, m)
    times = {}
    for backend in fc.available_backends():
        t = best_of(lambda: fc.shapley(v, threads=1, backend=backend), 5)
        times[backend] = t
        rows.append(row("shapley", "one game, m=20", backend, 1, t, stream, alt,
                         "NumPy v @ W", "<=1/3x v@W", "yes" if t <= alt / 3 else "no"))
        if shapiq_t is not None:
            rows.append(row("shapley", "one game, m=20", backend, 1, t, stream, shapiq_t,
                             "shapiq ExactComputer", "<=1/1000x",
                             "yes" if t <= shapiq_t / 1000 else "no"))
    fastest["shapley m=20"] = min(times, key=times.get)
    m = 24
    v = rng.random(1 << m)
    stream = stream_time(v)
    for backend in fc.available_backends():
        for threads in (1, 2):
            t = best_of(lambda: fc.shapley(v, threads=threads, backend=backend), 5)
            rows.append(row("shapley", "one game, m=24", backend, threads, t, stream,
                             target="<=3x stream" if threads == 1 else "",
                             met=("yes" if t <= 3 * stream else "no") if threads == 1 else ""))
    m = 20
    v = rng.random(1 << m)
    stream = stream_time(v)
    for name in ("moebius", "size_resolved"):
        times = {}
        for backend in fc.available_backends():
            f = getattr(fc, name)
            t = best_of(lambda: f(v, threads=1, backend=backend), 3)
            times[backend] = t
            rows.append(row(name, "one game, m=20", backend, 1, t, stream))
        fastest[name] = min(times, key=times.get)


KEYS = {"shapley": "tables.semivalue", "banzhaf": "tables.semivalue",
        "singleton": "tables.gather", "leave_one_out": "tables.gather",
        "moebius": "tables.moebius", "size_resolved": "tables.size_resolved"}


def rows():
    rows, fastest = [], {}
    _batch_rows(rows, fastest)
    _large_rows(rows, fastest)
    return rows + backend_choice_rows({KEYS[name]: b for name, b in fastest.items()
                                       if name in KEYS})
