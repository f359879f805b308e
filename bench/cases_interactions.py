"""Cases of the interactions family (issue 11 targets in the `target` column).

`x alternative` = fastcredit time / shapiq ExactComputer time on the same
table in this process (both from the table of values: the shapiq game looks
its values up, so neither side pays for evaluating a model); the speedup is
its inverse. `x stream` = time / streaming the table once.

The bare call is interactions._exact's kernel calls on prepared arrays: per
chunk of games the Moebius transform (cardinal indices) and one
fc_graded_sums per subset size, split over threads as it splits them (games
of a batch; the subset sizes of one large game), into fresh result arrays
(flat, one per subset size, as any caller of the kernels has to make for a
new result: the public call has no `out=`) and scratch arrays as the public
call gets them (`interactions._scratch`: a thread keeps its scratch up to 16
MiB between calls, one game of m = 20 and its Moebius coefficients; larger
scratch, 256-384 MB at m = 24, is made and mapped per call and dropped after
it, so a caller of the kernels that does not hold that memory between calls
pays for mapping it too: ~0.1 s of a 0.9 s call, which the public call read
as 1.12-1.19x a bare call keeping it, AMD EPYC Zen 4, load 1). So the ratio
counts the validation, the weight tables' cache look-up, the memory check,
the copy of v(∅) and the result object of every public call.
"""
from __future__ import annotations

import importlib
import math
import warnings

import numpy as np

from common import Alternative, Case, Limit, kernels, sci
from fastcredit import _parallel
from fastcredit._params import INDEX
from fastcredit._validation import coalition_table

# The module; its function interactions.interactions is fc.interactions, called
# through the module because fastcredit's lazy attribute of that name becomes
# the module once anything (fastcredit.shapiq, this file) imports the module
# before the attribute is first read.
interactions = importlib.import_module("fastcredit.interactions")

KEY = "interactions.graded"


def _run(v, index, order):
    return lambda backend, threads: interactions.interactions(v, index, order, backend=backend,
                                                              threads=threads)


def _bare(v, index, order):
    """The bare call of fc.interactions(v, index, order) (see the module
    docstring)."""
    def prepare(backend, threads):
        flat, m, _ = coalition_table(v)
        n_games, nt = flat.shape[0], _parallel.n_threads(threads)
        k = 1 if index in ("SV", "BV") else order
        source, up, down, own_empty = interactions.weight_tables(index, m, k)
        graded = kernels("interactions.graded", backend).graded_sums
        to_moebius = kernels("tables.moebius", backend).moebius if source == "moebius" else None
        counts = [math.comb(m, s) for s in range(k + 1)]
        values = []
        sizes = list(range(1, k + 1)) + ([0] if own_empty else [])
        masks = {s: interactions._subset_masks(m, s) for s in sizes}
        rows = {s: (up[s], np.zeros(0) if down is None else down[s]) for s in sizes}
        step = max(1, interactions._CHUNK_ENTRIES >> m)
        large = m >= interactions._LARGE_SCRATCH_M

        def sums(x, s, first, work):
            graded(x, *rows[s], masks[s], work,
                   values[s][first * counts[s]:(first + x.shape[0]) * counts[s]])

        def by_games(a, b):
            work, buf = interactions._scratch(m, min(step, b - a) if to_moebius else 0)
            for c0 in range(a, b, step):
                x = flat[c0:min(b, c0 + step)]
                if to_moebius:
                    to_moebius(x, buf[:x.shape[0]])
                    x = buf[:x.shape[0]]
                for s in sizes:
                    sums(x, s, c0, work)
            if large:
                interactions._drop_large_scratch()

        def by_sizes():
            x = flat[:1]
            if to_moebius:
                x = interactions._scratch(m, 1)[1][:1]
                to_moebius(flat[:1], x)

            def part(i, j):
                work = interactions._scratch(m, 0)[0]
                for s in sizes[i:j]:
                    sums(x, s, 0, work)
                if large:
                    interactions._drop_large_scratch()

            _parallel.run(part, len(sizes), nt)

        def call():
            values[:] = [np.empty(n_games * c) for c in counts]
            min_games = max(1, interactions._MIN_ENTRIES_PER_THREAD >> m)
            if n_games < nt and m >= interactions._SPLIT_SIZES_M and len(sizes) > 1:
                by_sizes()
            elif nt == 1 or n_games < 2 * min_games:    # one chunk, on this thread
                by_games(0, n_games)
            else:
                _parallel.run(by_games, n_games, nt, min_items=min_games)
            return values

        return call
    return prepare


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
    """Every index on one game at m = 12 (the issue's >= 100x target). A call
    takes 30-60 us: the best of 300 turns, since the best of 5 let one slow
    spell of the shared machine decide a row (public ÷ kernel read 1.16-1.45
    in a whole bench where 300 turns in one process read 1.13-1.24 on the
    same code)."""
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
                   key=KEY, repeats=300, bare=_bare(v, index, order))


def _large(quick):
    """Order-2 SII, STII, FSII of one game at m = 20 (target < 1 s) and at
    m = 24 (within memory). A call at m = 24 takes 1-2 s and moved 1.0-1.9 s
    between consecutive calls on the shared 2-core AMD EPYC: the best of 4
    (two turns in each order; ~60 s for its 8 runs on a quiet machine), where
    the best of 1 was no measurement (C 1 thread, load 4-5: a best of 3 read
    0.95-1.23 in turn, a best of 8 1.04); m = 20's 15-25 ms calls the best of
    15."""
    rng = np.random.default_rng(3)
    for m, repeats in ((14, 3), (16, 1)) if quick else ((20, 15), (24, 4)):
        v = rng.random(1 << m)
        limit = Limit(v)
        for index in ("SII", "STII", "FSII") if m < 24 or quick else ("SII",):
            yield Case(f"interactions {index}", f"one game, m={m}, order 2",
                       _run(v, index, 2), limit,
                       target="< 1 s" if m == 20 else "report",
                       met=lambda r: ("yes" if r.t < 1 else "no") if "m=20" in r.case.case
                       else "", threads=(1, 2), key=KEY, repeats=repeats,
                       bare=_bare(v, index, 2))


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
                   else None, threads=(1, 2), key=KEY, bare=_bare(v, index, 2))


def cases(quick: bool):
    yield from _against_shapiq(quick)
    yield from _large(quick)
    yield from _batch(quick)
