"""Cases of the sampling family (issue 4 targets in the `target` column).

Time ratios, lower is better: `x stream` = sampler time / time to stream the
values it evaluates once (n_evals doubles); `x alternative` = sampler time /
the alternative's time at the same number of walks (a vectorised NumPy
permutation sampler, or shapiq's PermutationSamplingSV at the same budget).

Bare calls: the sampling kernel the public call drives (fc_permutation_shapley
over the games of a table batch, split as sampling.py splits them; the
compiled estimate_game of an @njit game), with the walk plan and the result
arrays prepared once; so the ratio counts the argument checks, the game's
recognition (an @njit game is compiled-checked on every call) and the result
object.
"""
from __future__ import annotations

import math
import time

import numpy as np

import fastcredit as fc
from common import Alternative, Case, Limit, kernels, sci
from fastcredit import _parallel, sampling, synthetic
from fastcredit._constants import STATS
from fastcredit._validation import coalition_table


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


def _bare_tables(v, seed, permutations=None, budget=None, antithetic=True):
    """The bare call of fc.permutation_shapley(v, ..., threads=threads) on
    tables (cache on, no tol: the defaults): fc_permutation_shapley over the
    games, split as sampling._tables splits them."""
    def prepare(backend, threads):
        flat, m, _ = coalition_table(v)
        n_games = flat.shape[0]
        max_walks, cap, _ = sampling._plan(m, permutations, budget, antithetic, True)
        impl = kernels("sampling.tables", backend)
        values, stderr = np.empty((n_games, m)), np.empty((n_games, m))
        stats = np.zeros((n_games, STATS), dtype=np.int64)
        nt = _parallel.n_threads(threads)

        def call():
            _parallel.run(lambda a, b: impl.permutation_shapley(
                flat[a:b], np.uint64(seed), a, max_walks, cap, antithetic, True, 0.0, 32,
                values[a:b], stderr[a:b], stats[a:b]), n_games, nt)
            return values

        return call
    return prepare


def _bare_jitted(game, m, walks, crn, seed):
    """The bare call of fc.permutation_shapley(game, m, permutations=walks,
    crn=crn, seed=seed) for a stochastic @njit game with declared bounds:
    the compiled estimate_game, no cache."""
    def prepare(backend, threads):
        from fastcredit._jit.games import estimate_game

        max_walks, cap, _ = sampling._plan(m, walks, None, True, False, crn)
        values, stderr, stats = np.empty(m), np.empty(m), np.zeros(STATS, dtype=np.int64)
        span, bad = np.array([float(x) for x in game.bounds]), np.zeros(1, dtype=np.uint64)

        def call():
            estimate_game(game, m, np.uint64(seed), max_walks, cap, True, False, crn, 0.0, 32,
                          values, stderr, stats, span, True, bad)
            return values

        return call
    return prepare


def _rmse(values, want):
    return float(np.sqrt(np.mean((np.asarray(values) - want) ** 2)))


def _shapiq_case(v, m, evals, want, stream):
    """fastcredit (backend=None) against shapiq's PermutationSamplingSV at the
    same budget: time and error (None without shapiq)."""
    try:
        from shapiq.approximator import PermutationSamplingSV
    except ImportError:
        return None
    pw = 1 << np.arange(m)
    shapiq_rmse = []

    def game(coalitions):
        return v[np.atleast_2d(coalitions).astype(np.int64) @ pw]

    def measure():
        times = []
        for seed in (0, 1):
            approx = PermutationSamplingSV(n=m, random_state=seed)
            t0 = time.perf_counter()
            iv = approx.approximate(budget=evals, game=game)
            times.append(time.perf_counter() - t0)
            shapiq_rmse.append(_rmse(iv.get_n_order_values(1), want))
        return min(times)

    def run(backend, threads, seed=0):
        return fc.permutation_shapley(v, budget=evals, seed=seed, threads=threads,
                                      backend=backend)

    def ours_rmse():
        return float(np.mean([_rmse(run(None, 1, s).values, want) for s in range(5)]))

    def detail(r):
        return f"rmse {ours_rmse():.2g} vs shapiq {np.mean(shapiq_rmse):.2g}"

    def met(r):
        ok = r.alt / r.t >= 100 and ours_rmse() <= np.mean(shapiq_rmse)
        return "yes" if ok else "no"

    return Case("permutation_shapley", f"table m={m}, {sci(evals)} evals", run, stream,
                Alternative("shapiq 1.4 PermutationSamplingSV, same budget", measure=measure),
                ">=100x faster, error no worse", met, detail, backends=("auto",),
                bare=_bare_tables(v, 0, budget=evals))


def _table_cases(quick):
    m, evals = (10, 20_000) if quick else (16, 1_000_000)
    rng = np.random.default_rng(0)
    v = rng.random(1 << m)
    stream = Limit(np.empty(evals))
    walks = 2 * ((evals - 2) // (2 * (m - 1)))
    alt = Alternative("NumPy vectorised sampler",
                      lambda: numpy_sampler(lambda p: v[p], m, walks, rng))
    for antithetic in (True, False):
        yield Case("permutation_shapley",
                   f"table m={m}, {sci(evals)} evals, {'antithetic' if antithetic else 'plain'}",
                   lambda backend, threads, antithetic=antithetic: fc.permutation_shapley(
                       v, budget=evals, antithetic=antithetic, seed=0, threads=threads,
                       backend=backend),
                   stream, alt, "<=10 ns/eval",
                   lambda r: "yes" if r.t / r.out.n_evals * 1e9 <= 10 else "no",
                   lambda r: f"{r.t / r.out.n_evals * 1e9:.1f} ns/eval",
                   key="sampling.tables",
                   bare=_bare_tables(v, 0, budget=evals, antithetic=antithetic))
    shapiq_case = _shapiq_case(v, m, evals, fc.shapley(v), stream)
    if shapiq_case is not None:
        yield shapiq_case


def _permutation_cases(quick):
    m = 16
    perms = np.empty((5_000 if quick else 100_000, m), dtype=np.int32)
    rng = np.random.default_rng(0)

    def run(backend, threads):
        return fc._backend.kernels("sampling", backend).permutations(0, 0, 0, perms)

    # this row times the kernel itself (it has no public function of its
    # own): its bare call is the same call, and the ratio shows the noise
    yield Case("sampling permutations", f"{sci(perms.shape[0])} orders of {m} players", run,
               Limit(perms),
               Alternative("NumPy argsort of uniforms",
                           lambda: np.argsort(rng.random(perms.shape), axis=1), repeats=5),
               "report", lambda r: "reported", key="sampling.permutations",
               bare=lambda backend, threads: lambda: run(backend, threads))


def _shap_cases(quick):
    """fastcredit.shap's kernels, at the sizes of one of its model calls
    (1,500 coalitions of 10 features over 10 background rows, the rows of 3
    explained rows; orders of a 16-leaf cluster tree; the affordable pairs of
    the 64 rows the Permutation explainer plans at once, 10 features, budget
    500). The masked rows' bare call writes into the public call's ``out``;
    the others make their results fresh, as the public calls (no ``out``) do."""
    rng = np.random.default_rng(1)
    n_c, n_b, m = (300 if quick else 1500), 10, 10
    background, xs = rng.normal(size=(n_b, m)), rng.normal(size=(3, m))
    masks = rng.integers(0, 2**m, size=n_c).astype(np.uint64)
    owner = np.sort(rng.integers(0, 3, size=n_c))
    rows = np.empty((n_c * n_b, m))
    keep = ((masks[:, None] >> np.arange(m, dtype=np.uint64)) & np.uint64(1)) != 0

    def masked(backend, threads):
        return sampling._masked_rows(background, xs, masks, owner, out=rows, backend=backend)

    yield Case("sampling masked rows", f"{sci(n_c)} coalitions x {n_b} rows x {m}", masked,
               Limit(rows),
               Alternative("NumPy where", lambda: np.where(
                   keep[:, None, :], xs[owner][:, None, :], background).reshape(-1, m)),
               "report", lambda r: "reported", key="sampling.masked_rows",
               bare=lambda backend, threads: lambda: kernels(
                   "sampling.masked_rows", backend).masked_rows(background, xs, masks, owner,
                                                                 rows))
    outputs = rng.normal(size=(n_c, n_b, 1))
    yield Case("sampling background mean", f"{sci(n_c)} coalitions x {n_b} rows",
               lambda backend, threads: sampling._background_mean(outputs, backend=backend),
               Limit(outputs), Alternative("NumPy mean", lambda: outputs.mean(axis=1)),
               "report", lambda r: "reported", key="sampling.background_mean",
               bare=lambda backend, threads: lambda: kernels(
                   "sampling.background_mean", backend).background_mean(
                       outputs, None, np.empty((n_c, 1))))
    leaves = 16
    children = np.array([[2 * r, 2 * r + 1] for r in range(leaves - 1)], dtype=np.int64)
    units = 500 if quick else 20_000
    perms = np.empty((units, leaves), dtype=np.int32)
    yield Case("sampling tree permutations", f"{sci(units)} orders of a {leaves}-leaf tree",
               lambda backend, threads: sampling._tree_permutations(children, 0, units,
                                                                    backend=backend),
               Limit(perms),
               Alternative("NumPy argsort of uniforms",
                           lambda: np.argsort(rng.random(perms.shape), axis=1)),
               "report", lambda r: "reported", key="sampling.tree_permutations",
               bare=lambda backend, threads: lambda: kernels(
                   "sampling.tree_permutations", backend).tree_permutations(0, 0, 0, children,
                                                                           perms))
    rows, k, budget = (8 if quick else 64), 10, 500
    candidates = 2 * ((budget - 2) // (2 * (k - 1))) + 1
    orders = np.argsort(rng.random((rows, candidates, k)), axis=2).astype(np.int32)

    def numpy_affordable():
        # each coalition's first pair by np.unique over the pairs' prefixes and
        # their complements, then the pairs whose new coalitions fit
        bits = np.left_shift(np.uint64(1), orders.astype(np.uint64))
        prefixes = np.bitwise_or.accumulate(bits, axis=2)[:, :, :-1]
        keys = np.concatenate([prefixes, prefixes ^ np.uint64(2**k - 1)], axis=2)
        found = []
        for row in keys:
            distinct, first = np.unique(row.reshape(-1), return_index=True)
            spent = 2 + np.cumsum(np.bincount(first // (2 * (k - 1)), minlength=candidates))
            pairs = int((spent <= budget).sum())
            found.append((pairs, distinct[first // (2 * (k - 1)) < pairs]))
        return found

    yield Case("sampling affordable pairs",
               f"{rows} rows x {candidates} pairs of {k} players, budget {budget}",
               lambda backend, threads: sampling._affordable_pairs(orders, budget,
                                                                   backend=backend),
               Limit(orders), Alternative("NumPy unique of the prefixes", numpy_affordable),
               "report", lambda r: "reported", key="sampling.affordable_pairs",
               bare=lambda backend, threads: lambda: kernels(
                   "sampling.affordable_pairs", backend).affordable_pairs(
                       orders, budget, np.empty(rows, np.int64), np.empty(rows, np.int64),
                       np.empty((rows, min(budget, 2 + 2 * (k - 1) * candidates)), np.uint64)))


def _scm_cases(quick):
    walks = 5_000 if quick else 100_000
    scm = synthetic.and_failure(0.3)
    q = 0.3
    rng = np.random.default_rng(0)

    def numpy_and_game(prefix):
        # the same SCM drawn in NumPy: steps 0 and 1 bad (held, or w.p. q)
        held = (prefix[..., None] >> np.arange(3)) & 1
        bad = np.where(held == 1, np.array([1, 1, 0]), rng.random(held.shape) < q)
        return (bad[..., 0] & bad[..., 1]).astype(np.float64)

    alt = Alternative("NumPy sampler + vectorised SCM draw",
                      lambda: numpy_sampler(numpy_and_game, 3, walks, rng))
    for crn in (False, True):
        yield Case("permutation_shapley",
                   f"AND-failure SCM, @njit stochastic, {'CRN' if crn else 'fresh keys'}",
                   lambda backend, threads, crn=crn: fc.permutation_shapley(
                       scm.game, 3, permutations=walks, crn=crn, seed=1),
                   Limit(np.empty(walks * 4)), alt, "report evals/s", lambda r: "reported",
                   lambda r: f"{r.out.n_evals / r.t / 1e6:.0f} M evals/s",
                   backends=("numba",), bare=_bare_jitted(scm.game, 3, walks, crn, 1))


def _batch_cases(quick):
    batch, m, walks = (2_000, 10, 50) if quick else (100_000, 10, 200)
    rng = np.random.default_rng(1)
    v = rng.random((batch, 1 << m))
    sub = v[:2000]
    yield Case("permutation_shapley", f"{sci(batch)} tables m={m}, {walks} walks",
               lambda backend, threads: fc.permutation_shapley(
                   v, permutations=walks, seed=2, threads=threads, backend=backend),
               Limit(v),
               Alternative(f"NumPy vectorised sampler (per game, x{sci(batch)})",
                           lambda: numpy_sampler(lambda p: np.take_along_axis(
                               sub, p.reshape(len(sub), -1), axis=1).reshape(p.shape),
                               m, walks, rng, games=len(sub)),
                           scale=batch / len(sub)),
               "report games/s", lambda r: "reported",
               lambda r: f"{batch / r.t:,.0f} games/s",
               threads=(1, 2), key="sampling.tables", repeats=3,
               bare=_bare_tables(v, 2, permutations=walks))


def cases(quick: bool):
    yield from _table_cases(quick)
    yield from _permutation_cases(quick)
    yield from _shap_cases(quick)
    yield from _scm_cases(quick)
    yield from _batch_cases(quick)
