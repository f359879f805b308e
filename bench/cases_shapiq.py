"""The shapiq adapter against shapiq itself, same games, same process.

`x alternative` = fastcredit time / shapiq time (lower is better; the
speedup is its inverse). Exact: both sides evaluate a table game on every
coalition through shapiq's Game interface, then compute the index.
Approximators: equal budget, each side with its default batching,
random_state 0; the detail column adds the RMSE against the exact index over
20 seeds for both, and the time the game itself took inside each side's run
(shapiq's SOUM costs microseconds per coalition, which bounds any speedup).
``python bench/cases_shapiq.py`` prints the RMSE table alone. Skipped when
shapiq is missing.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from common import Alternative, Case, Limit, Skipped

EXACT_INDICES = ("SV", "BV", "Moebius", "SII", "BII", "CHII", "Co-Moebius", "SGV", "BGV",
                 "CHGV", "IGV", "EGV", "k-SII", "STII", "FSII", "FBII", "kADD-SHAP", "JointSV")
TABLE_INDICES = ("SV", "BV", "Moebius")
SEEDS = 20

#: Why these cases have no bare call (see bench/common.py's Case).
NO_BARE = ("n/a: shapiq's interface (its objects, its game calls) around kernels the tables, "
           "interactions and sampling rows time bare")


def _games(n):
    import shapiq_games.synthetic as synthetic
    from fastcredit.shapiq import TableGame
    return {"table": TableGame(np.random.default_rng(n).random(1 << n)),
            "SOUM": synthetic.SOUM(n, n_basis_games=50, random_state=n)}


def _approximators(n):
    """(name, ours(random_state), shapiq's(random_state), exact index, order)."""
    import shapiq

    import fastcredit.shapiq as fs
    return (("PermutationSamplingSV", lambda s: fs.PermutationSamplingSV(n, random_state=s),
             lambda s: shapiq.PermutationSamplingSV(n, random_state=s), "SV", 1),
            ("PermutationSamplingSII",
             lambda s: fs.PermutationSamplingSII(n, 2, "SII", random_state=s),
             lambda s: shapiq.PermutationSamplingSII(n, 2, "SII", random_state=s), "SII", 2),
            ("PermutationSamplingSTII", lambda s: fs.PermutationSamplingSTII(n, 2, random_state=s),
             lambda s: shapiq.PermutationSamplingSTII(n, 2, random_state=s), "STII", 2),
            ("KernelSHAP", lambda s: fs.KernelSHAP(n, random_state=s),
             lambda s: shapiq.KernelSHAP(n, random_state=s), "SV", 1))


def exact_index(table, n, index, order):
    """{interaction: value} from the Moebius transform a of the table, by the
    superset sums (bench oracle, sizes 1..order): SV/SII(S) = sum over T
    containing S of a(T) / (|T| - |S| + 1); STII = a(S) below ``order`` and
    sum of a(T) / C(|T|, order) at it."""
    from itertools import combinations
    from math import comb

    import fastcredit as fc
    a = fc.moebius(table)
    masks = np.arange(1 << n)
    size = np.bitwise_count(masks)
    out = {}
    for s in range(1, order + 1):
        for c in combinations(range(n), s):
            m = sum(1 << i for i in c)
            sup = (masks & m) == m
            if index in ("SV", "SII"):
                out[c] = float(np.sum(a[sup] / (size[sup] - s + 1)))
            elif s < order:
                out[c] = float(a[m])
            else:
                out[c] = float(np.sum(a[sup] / np.array([comb(t, order) for t in size[sup]])))
    return out


class TimedGame:
    """A game that adds up the seconds spent inside it."""

    def __init__(self, game):
        self.game, self.seconds = game, 0.0
        self.n_players = game.n_players

    def __call__(self, coalitions):
        t = time.perf_counter()
        try:
            return self.game(coalitions)
        finally:
            self.seconds += time.perf_counter() - t


def game_seconds(make, game, budget):
    """Seconds the game takes inside one run of ``make(0)``."""
    timed = TimedGame(game)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make(0).approximate(budget, timed)
    return timed.seconds


def rmse_pair(name, ours, theirs, index, order, game, table, n, budget, seeds=SEEDS):
    """RMSE over interactions and seeds of ours and shapiq's estimates."""
    exact = exact_index(table, n, index, order)
    keys = list(exact)
    want = np.array([exact[k] for k in keys])
    errs = {"ours": [], "shapiq": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(seeds):
            for side, make in (("ours", ours), ("shapiq", theirs)):
                est = make(s).approximate(budget, game)
                errs[side].append(np.array([est[k] for k in keys]) - want)
    return {side: float(np.sqrt(np.mean(np.square(e)))) for side, e in errs.items()}


def cases(quick: bool):
    try:
        import shapiq
    except ImportError:
        raise Skipped("shapiq not installed") from None
    import fastcredit as fc
    from fastcredit.shapiq import ExactComputer

    m = 10 if quick else 12
    game = _games(m)["table"]
    for index in EXACT_INDICES:
        if index not in TABLE_INDICES and not hasattr(fc, "interactions"):
            continue
        order = 1 if index in ("SV", "BV") else 2
        # game bound now: the loop below rebinds the name before pytest-benchmark
        # (which collects every case first) calls these
        yield Case("fastcredit.shapiq.ExactComputer", f"{index}, order {order}, m={m}",
                   lambda backend, threads, i=index, o=order, g=game: ExactComputer(
                       g, threads=threads)(i, o),
                   None,
                   Alternative("shapiq ExactComputer",
                               lambda i=index, o=order, g=game: shapiq.ExactComputer(g)(i, o),
                               repeats=1),
                   ">= 100x faster", lambda r: f"{r.alt / r.t:,.0f}x faster",
                   backends=("auto",), repeats=3, bare=NO_BARE)

    n = 16
    budget = 5_000 if quick else 20_000
    for game_name, game in _games(n).items():
        table = ExactComputer(game).table
        for name, ours, theirs, index, order in _approximators(n):
            def detail(r, args=(name, ours, theirs, index, order, game, table, n, budget)):
                e = rmse_pair(*args, seeds=4 if quick else SEEDS)
                g_ours = game_seconds(args[1], args[5], args[8])
                g_theirs = game_seconds(args[2], args[5], args[8])
                return (f"RMSE {e['ours']:.3g} vs shapiq {e['shapiq']:.3g}; game "
                        f"{1e3 * g_ours:.0f} vs {1e3 * g_theirs:.0f} ms of the runs")

            def quiet(make, game=game):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return make(0).approximate(budget, game)

            yield Case(f"fastcredit.shapiq.{name}", f"{game_name}, n={n}, budget={budget}",
                       lambda backend, threads, ours=ours, quiet=quiet: quiet(ours),
                       Limit(table),
                       Alternative(f"shapiq {name}", lambda theirs=theirs, quiet=quiet:
                                   quiet(theirs), repeats=1),
                       ">= 10x faster, RMSE no worse",
                       lambda r: f"{r.alt / r.t:,.1f}x faster", detail=detail,
                       backends=("auto",), repeats=3, bare=NO_BARE)


if __name__ == "__main__":
    from fastcredit.shapiq import ExactComputer
    n, budget = 16, 20_000
    for game_name, game in _games(n).items():
        table = ExactComputer(game).table
        for name, ours, theirs, index, order in _approximators(n):
            e = rmse_pair(name, ours, theirs, index, order, game, table, n, budget)
            print(f"{name:24s} {game_name:6s} n={n} budget={budget}: RMSE over {SEEDS} seeds "
                  f"ours {e['ours']:.4g}, shapiq {e['shapiq']:.4g}")
