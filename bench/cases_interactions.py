"""Cases of the interactions family (issue 11 targets in the `target` column).

`x alternative` = fastcredit time / shapiq ExactComputer time on the same
table in this process (both from the table of values: the shapiq game looks
its values up, so neither side pays for evaluating a model); the speedup is
its inverse. `x stream` = time / streaming the table once.
"""
from __future__ import annotations

import warnings

import numpy as np

import fastcredit as fc
from common import Alternative, Case, Limit, sci
from fastcredit._params import INDEX

KEY = "interactions.graded"


def _run(v, index, order):
    return lambda backend, threads: fc.interactions(v, index, order, backend=backend,
                                                    threads=threads)


def _shapiq_exact(v, index, order):
    """shapiq's ExactComputer on the table v (None without shapiq): a fresh
    computer per call, so nothing is cached between repeats."""
    try:
        import shapiq
    except ImportError:
        return None
    m = v.shape[-1].bit_length() - 1
    powers = np.int64(1) << np.arange(m)

    def game(coalitions):
        return v[coalitions.astype(np.int64) @ powers]

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shapiq.ExactComputer(game, n_players=m)(index, order)

    return run


def _against_shapiq(quick):
    """Every index on one game at m = 12 (the issue's >= 100x target)."""
    m = 8 if quick else 12
    v = np.random.default_rng(2).random(1 << m)
    limit = Limit(v)
    for index in INDEX.values:
        order = 1 if index in ("SV", "BV") else 2
        alt = _shapiq_exact(v, index, order)
        yield Case(f"interactions {index}", f"one game, m={m}, order {order}",
                   _run(v, index, order), limit,
                   Alternative("shapiq ExactComputer", alt, repeats=1) if alt else None,
                   ">=100x faster than shapiq" if alt else "",
                   (lambda r: f"{r.alt / r.t:,.0f}x faster: " + ("yes" if r.t * 100 <= r.alt
                                                                 else "no")) if alt else None,
                   key=KEY)


def _large(quick):
    """Order-2 SII, STII, FSII of one game at m = 20 (target < 1 s) and at
    m = 24 (within memory)."""
    rng = np.random.default_rng(3)
    for m, repeats in ((14, 3), (16, 1)) if quick else ((20, 3), (24, 1)):
        v = rng.random(1 << m)
        limit = Limit(v)
        for index in ("SII", "STII", "FSII") if m < 24 or quick else ("SII",):
            yield Case(f"interactions {index}", f"one game, m={m}, order 2",
                       _run(v, index, 2), limit,
                       target="< 1 s" if m == 20 else "report",
                       met=lambda r: ("yes" if r.t < 1 else "no") if "m=20" in r.case.case
                       else "", threads=(1, 2), key=KEY, repeats=repeats)


def _batch(quick):
    """Item 4: the exact indices of a batch of games in one call."""
    b, m = (2_000 if quick else 100_000), 8
    v = np.random.default_rng(4).random((b, 1 << m))
    sample = v[:5]

    def shapiq_per_game():
        for g in sample:
            _shapiq_exact(g, "k-SII", 2)()

    try:
        import shapiq  # noqa: F401
        alt = Alternative("shapiq ExactComputer per game", shapiq_per_game, scale=b / 5,
                          repeats=1)
    except ImportError:
        alt = None
    for index in ("k-SII", "SGV"):
        yield Case(f"interactions {index}", f"B={sci(b)}, m={m}, order 2", _run(v, index, 2),
                   Limit(v), alt if index == "k-SII" else None, "report speedup",
                   (lambda r: f"{r.alt / r.t:,.0f}x faster") if index == "k-SII" and alt
                   else None, threads=(1, 2), key=KEY)


def cases(quick: bool):
    yield from _against_shapiq(quick)
    yield from _large(quick)
    yield from _batch(quick)
