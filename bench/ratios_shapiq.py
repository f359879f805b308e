"""The shapiq adapter against shapiq itself, same games, same process.

`x alternative` = fastcredit time / shapiq time (lower is better; the
speedup is its inverse). Both sides include evaluating the game on every
coalition through shapiq's Game interface. Skipped when shapiq is missing.
"""
from __future__ import annotations

import numpy as np

from common import best_of, stream_time


def rows():
    try:
        import shapiq
    except ImportError:
        return [{"kernel": "shapiq adapter", "case": "shapiq not installed", "met": "skipped"}]
    from fastcredit.shapiq import TableGame, exact_values

    out = []
    for m in (10, 16):
        game = TableGame(np.random.default_rng(m).random(1 << m))
        theirs = best_of(lambda: shapiq.ExactComputer(n_players=m, game=game)("SV", 1),
                         3 if m <= 10 else 1)
        ours = best_of(lambda: exact_values(game, "SV", threads=1), 5)
        out.append({"kernel": "fastcredit.shapiq.exact_values", "case": f"SV, m={m}",
                    "backend": "auto", "threads": 1, "time": f"{ours * 1e3:.2f} ms",
                    "x stream": ours / stream_time(game.table), "x alternative": ours / theirs,
                    "alternative": "shapiq ExactComputer", "target": "report speedup",
                    "met": f"{theirs / ours:,.0f}x faster"})
    return out
