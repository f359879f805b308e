"""Cases of the tables family (issue targets in the `target` column).

Time ratios, lower is better: `x stream` = kernel time / time to stream its
input once; `x alternative` = kernel time / the alternative's time.

The bare call of every case is the kernel on the validated table, split over
threads as the public call splits it (fastcredit.tables' own splitters: games
of a batch; fixed ranges of one game of m >= 16 and the sum of their
partials, for the semivalues), into a prepared output; so `public ÷ kernel`
counts the validation, the output and overlap checks and any scan of the
result. The public calls pass `out=` wherever the result is more than a few
numbers, so the ratio does not count fresh output pages either.
"""
from __future__ import annotations

import dataclasses

import numpy as np

import fastcredit as fc
from common import Alternative, Case, Limit, kernels, sci
from fastcredit import _parallel, tables
from fastcredit._validation import coalition_table

KEYS = {"shapley": "tables.semivalue", "banzhaf": "tables.semivalue",
        "singleton": "tables.gather", "leave_one_out": "tables.gather",
        "pair_interactions": "tables.gather", "moebius": "tables.moebius",
        "size_resolved": "tables.size_resolved"}


def _weights_matrix(m, w):
    masks = np.arange(1 << m)
    member = (masks[:, None] >> np.arange(m)) & 1
    size = member.sum(1)
    w_in = np.where(size > 0, w[np.maximum(size - 1, 0)], 0.0)
    w_out = np.where(size < m, w[np.minimum(size, m - 1)], 0.0)
    return np.where(member == 1, w_in[:, None], -w_out[:, None])


#: Result shape per game of each function, for m players.
TAIL = {"shapley": lambda m: (m,), "banzhaf": lambda m: (m,), "singleton": lambda m: (m,),
        "leave_one_out": lambda m: (m,), "pair_interactions": lambda m: (m, m),
        "size_resolved": lambda m: (m, m), "moebius": lambda m: (1 << m,)}
WEIGHTS = {"shapley": fc.shapley_weights, "banzhaf": fc.banzhaf_weights}


def _kernel(name, v, out=None):
    f = getattr(fc, name)
    return lambda backend, threads: f(v, out=out, threads=threads, backend=backend)


def _bare(name, v, out=None):
    """The bare call of fc.<name>(v, out=out): its kernel on the validated
    table, split as tables.py splits it (see the module docstring)."""
    def prepare(backend, threads):
        flat, m, lead = coalition_table(v)
        n, nt = flat.shape[0], _parallel.n_threads(threads)
        res = (np.empty(lead + TAIL[name](m)) if out is None else out).reshape(
            (n,) + TAIL[name](m))
        impl = kernels(KEYS[name], backend)
        if name not in WEIGHTS:
            return lambda: tables._split_games(getattr(impl, name), flat, res, m, nt)
        w = WEIGHTS[name](m)
        if m >= tables._SPLIT_GAME_M:
            return lambda: tables._semivalue_ranges(impl, flat, w, res, m, nt)
        return lambda: tables._split_games(lambda games, o: impl.semivalue(games, w, o),
                                           flat, res, m, nt)
    return prepare


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"


def _batch(quick):
    b, m = (20_000 if quick else 1_000_000), 5
    v = np.random.default_rng(0).random((b, 1 << m))
    out = np.empty((b, m))
    pairs = np.empty((b, m, m))
    limit = Limit(v)
    w_shap = _weights_matrix(m, fc.shapley_weights(m))
    w_banz = _weights_matrix(m, fc.banzhaf_weights(m))
    idx = 1 << np.arange(m)
    full = (1 << m) - 1
    both = idx[:, None] | idx[None, :]

    def numpy_pairs():
        np.subtract(v[:, both] - v[:, idx[:, None]], v[:, idx[None, :]] - v[:, :1, None],
                    out=pairs)
        pairs[:, np.arange(m), np.arange(m)] = 0.0

    alternatives = {
        "shapley": Alternative("NumPy V @ W", lambda: np.matmul(v, w_shap, out=out), repeats=5),
        "banzhaf": Alternative("NumPy V @ W", lambda: np.matmul(v, w_banz, out=out), repeats=5),
        "singleton": Alternative("NumPy gather",
                                 lambda: np.subtract(v[:, idx], v[:, :1], out=out), repeats=5),
        "leave_one_out": Alternative("NumPy gather", lambda: np.subtract(
            v[:, full:], v[:, full ^ idx], out=out), repeats=5),
    }
    case = f"B={sci(b)}, m={m}, f64"
    for name, alt in alternatives.items():
        threads = (1, 2) if name == "shapley" else (1,)

        def met(r):
            if r.threads == 1:
                return _yes(r.t <= 1.5 * r.stream and r.t <= 0.5 * r.alt)
            return f"{r.time_of() / r.t:.2f}x speedup"

        yield Case(name, case, _kernel(name, v, out), limit, alt,
                   lambda th: "<=1.5x stream, <=0.5x V@W" if th == 1 else "report speedup",
                   met, threads=threads, key=KEYS[name], bare=_bare(name, v, out))
    yield Case("pair_interactions", case, _kernel("pair_interactions", v, pairs), limit,
               Alternative("NumPy gather", numpy_pairs), key=KEYS["pair_interactions"],
               bare=_bare("pair_interactions", v, pairs))
    v32 = v.astype(np.float32)
    yield Case("shapley", f"B={sci(b)}, m={m}, f32", _kernel("shapley", v32, out), Limit(v32),
               key=KEYS["shapley"], bare=_bare("shapley", v32, out))


def _shapiq_exact(v, m):
    """shapiq's ExactComputer on the table v (None without shapiq)."""
    try:
        import shapiq
    except ImportError:
        return None

    class TableGame(shapiq.Game):
        def __init__(self):
            super().__init__(n_players=m, normalize=False, verbose=False)

        def value_function(self, coalitions):
            return v[(coalitions.astype(np.int64) << np.arange(m)).sum(1)]

    game = TableGame()
    return lambda: shapiq.ExactComputer(n_players=m, game=game)("SV", 1)


def _one_game(quick, rng):
    m = 14 if quick else 20
    v = rng.random(1 << m)
    limit = Limit(v)
    w = _weights_matrix(m, fc.shapley_weights(m))
    case = f"one game, m={m}"
    # ~0.3 ms a call at m = 20 against ~10 us of Python around it: best of 5
    # left the public ÷ kernel ratio to noise, and best of 25 read 1.08-1.19
    # (AMD EPYC Zen 4, load 1) where a tight loop read 1.05-1.07; 200 turns
    # of one call read 1.11-1.18 at load ~0, and 40 turns of 5 calls in a
    # row read 1.02-1.03, a tight loop's ratio (see common.interleaved)
    yield Case("shapley", case, _kernel("shapley", v), limit,
               Alternative("NumPy v @ W", lambda: v @ w), "<=1/3x v@W",
               lambda r: _yes(r.t <= r.alt / 3), key=KEYS["shapley"], repeats=40, burst=5,
               bare=_bare("shapley", v))
    shapiq_exact = _shapiq_exact(v, m)
    if shapiq_exact is not None:
        yield Case("shapley", case, _kernel("shapley", v), limit,
                   Alternative("shapiq ExactComputer", shapiq_exact, repeats=1), "<=1/1000x",
                   lambda r: _yes(r.t <= r.alt / 1000), repeats=40, burst=5,
                   bare=_bare("shapley", v))
    for name in ("moebius", "size_resolved"):
        out = np.empty(TAIL[name](m))
        yield Case(name, case, _kernel(name, v, out), limit, key=KEYS[name], repeats=3,
                   bare=_bare(name, v, out))


def _large_game(quick, rng):
    m = 16 if quick else 24
    v = rng.random(1 << m)
    yield Case("shapley", f"one game, m={m}", _kernel("shapley", v), Limit(v),
               target=lambda th: "<=3x stream" if th == 1 else "",
               met=lambda r: _yes(r.t <= 3 * r.stream) if r.threads == 1 else "",
               threads=(1, 2), key=KEYS["shapley"], repeats=10, bare=_bare("shapley", v))


def _owen(quick, rng):
    """fc.owen over a batch of m = 10 games, for a scipy linkage of the
    players and for a partition into 3 unions, beside the product with the
    Owen value's matrix (the value is linear in v; the matrix made by
    fc.owen itself, its making not timed)."""
    from scipy.cluster.hierarchy import linkage

    b, m = (2_000 if quick else 20_000), 10
    v = rng.random((b, 1 << m))
    out = np.empty((b, m))
    limit = Limit(v)
    for label, clustering in (("linkage", linkage(rng.random((m, 4)))),
                              ("3 unions", np.arange(m) % 3)):
        w = fc.owen(np.eye(1 << m), clustering)

        def bare(backend, threads, clustering=clustering):
            flat, m_, _ = coalition_table(v)
            plan = tables._owen_plan(clustering, m_)
            impl = kernels("tables.owen", backend)
            nt = _parallel.n_threads(threads)
            return lambda: tables._split_games(lambda g, o: impl.owen(g, *plan, o), flat, out,
                                               m_, nt)

        yield Case("owen", f"B={sci(b)}, m={m}, {label}",
                   lambda backend, threads, c=clustering: fc.owen(v, c, out=out, threads=threads,
                                                                  backend=backend),
                   limit, Alternative("NumPy V @ W", lambda w=w: np.matmul(v, w, out=out)),
                   threads=(1, 2), key="tables.owen", bare=bare)


def _numba_within_c(case):
    """The case with issue 17's target added: a Numba row takes at most 1.5x
    the time of the C row of the same case and thread count."""
    own_target, own_met = case.target, case.met

    def target(threads):
        text = own_target(threads) if callable(own_target) else own_target
        return "; ".join(t for t in (text, "numba <= 1.5x C") if t)

    def met(r):
        text = own_met(r) if own_met else ""
        c_time = r.earlier.get((r.case.kernel, r.case.case, "c", r.threads))
        if r.backend == "numba" and c_time:
            ratio = r.t / c_time
            text = "; ".join(t for t in (text, f"{_yes(ratio <= 1.5)} ({ratio:.2f}x C)") if t)
        return text

    return dataclasses.replace(case, target=target, met=met)


def cases(quick: bool):
    rng = np.random.default_rng(1)
    for group in (_batch(quick), _one_game(quick, rng), _large_game(quick, rng),
                  _owen(quick, rng)):
        for case in group:
            yield _numba_within_c(case)
