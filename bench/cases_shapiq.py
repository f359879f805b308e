"""The shapiq adapter against shapiq itself, same games, same process.

`x alternative` = fastcredit time / shapiq time (lower is better; the
speedup is its inverse). Both sides include evaluating the game on every
coalition through shapiq's Game interface. Skipped when shapiq is missing.
"""
from __future__ import annotations

import numpy as np

from common import Alternative, Case, Limit, Skipped


def cases(quick: bool):
    try:
        import shapiq
    except ImportError:
        raise Skipped("shapiq not installed") from None
    from fastcredit.shapiq import TableGame, exact_values

    for m in ((8, 10) if quick else (10, 16)):
        game = TableGame(np.random.default_rng(m).random(1 << m))
        yield Case("fastcredit.shapiq.exact_values", f"SV, m={m}",
                   lambda backend, threads, game=game: exact_values(game, "SV", threads=threads),
                   Limit(game.table),
                   Alternative("shapiq ExactComputer",
                               lambda game=game, m=m: shapiq.ExactComputer(
                                   n_players=m, game=game)("SV", 1),
                               repeats=3 if m <= 10 else 1),
                   "report speedup", lambda r: f"{r.alt / r.t:,.0f}x faster",
                   backends=("auto",))
