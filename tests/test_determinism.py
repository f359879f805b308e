"""Every seeded or batched kernel: threads 1, 2 and 7, both backends, same bits.

docs/design.md (Threads, Seeds): batches are split by item into contiguous
chunks, each item computed by the same code in the same order; one large
game is summed over ranges fixed by the data; draws depend only on (seed,
item). So the result of every public entry point taking ``threads=`` must
not depend on the thread count, to the bit, on either backend, and must be
the same on both backends wherever tests/test_compare.py declares the
kernels bit-identical (STRICTNESS).

Each case is sized so that the work really is split: the inputs exceed
7 x the module's minimum of items per thread (``_MIN_*`` constants), and
test_same_bits_for_any_thread_count checks, by watching
fastcredit._parallel.chunks, that threads=7 cut the work into the number of
pieces the case expects.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import pytest

import fastcredit as fc
from fastcredit import _parallel

from conftest import BACKENDS
from test_compare import BITS, STRICTNESS

THREADS = (1, 2, 7)


@dataclasses.dataclass(frozen=True)
class Case:
    """``call(backend, threads)`` returns the outputs to compare.
    ``kernels`` are the FASTEST keys it runs (None: Numba-only code with no
    backend argument); ``pieces`` is how many chunks threads=7 must give at
    least (fewer when the items are fewer than 7)."""
    call: Callable
    kernels: tuple | None
    pieces: int = 7


def _rng(seed):
    return np.random.default_rng(seed)


# --- inputs (built once, lazily) ---------------------------------------------

def _memo(fn):
    cache = {}

    def get():
        if not cache:
            cache["value"] = fn()
        return cache["value"]
    return get


@_memo
def small_games():
    # m = 5: a thread gets >= 2**15 >> 5 = 1024 games, so 8192 games give 7
    # chunks; a NaN and an infinite game take the definition's slow path
    v = _rng(1).normal(size=(8192, 32))
    v[100, 7] = np.nan
    v[5000, 31] = np.inf
    return v


@_memo
def large_game():
    return _rng(2).normal(size=1 << 18)        # 4 fixed ranges of 2**16


@_memo
def large_batch():
    return _rng(3).normal(size=(3, 1 << 17))   # 3 games x 2 ranges = 6 items


@_memo
def pools():
    # a thread gets >= 256 requests
    return fc.synthetic.sponsored_search(2000, k=8, seed=3, catalogue=4000, topics=40,
                                         threads=1)


@_memo
def projection_rows():
    # a thread gets >= 2**14 rows
    n, m = 7 * (1 << 14) + 333, 5
    rng = _rng(4)
    u = rng.normal(scale=2.0, size=(n, m))
    u[17, 2] = np.nan
    kappa = rng.uniform(0.1, 1.5, size=n)
    total = rng.uniform(-0.5, 0.5, size=n) * kappa
    weights = rng.integers(0, 5, size=(n, m)).astype(float)
    weights[:, 0] += 1
    return u, kappa, total, weights


@_memo
def tokens():
    # a thread gets >= 2**18 // T sequences
    g, t, m = 7 * 256 + 40, 1024, 4
    rng = _rng(5)
    ta = rng.integers(-1, m, size=(g, t)).astype(np.int32)
    mask = rng.uniform(size=(g, t)) < 0.9
    return rng.normal(size=g), rng.normal(size=(g, m)), ta, mask


@_memo
def trajectories():
    # ragged groups of 0..12 steps with ties, constant and NaN ones; a thread
    # gets >= 256 groups for the Spearman kernel, >= 1024 for shuffles
    rng = _rng(6)
    sizes = rng.integers(0, 13, size=8000)
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(off[-1])
    credit = np.round(rng.normal(size=n), 1)
    a_replay = credit + rng.normal(size=n)
    a_replay[off[10]:off[11]] = 1.0
    credit[off[20] + 1 if sizes[20] > 1 else 0] = np.nan
    return credit, a_replay, off


@_memo
def equal_trajectories():
    rng = _rng(7)
    off = np.arange(0, 8000 * 6 + 1, 6, dtype=np.int64)
    a = rng.normal(size=off[-1])
    return a + rng.normal(size=a.shape), a, off


@_memo
def requests():
    rng = _rng(8)
    ref = rng.normal(size=(8000, 5))
    credit = np.round(ref + rng.normal(size=ref.shape), 1)
    ref[3] = 1.0                     # constant reference: NaN statistics
    credit[4] = 2.0                  # constant credit: 0
    return credit, ref


@_memo
def fidelity_tables():
    # 16384 pairs of m = 4 tables (>= 2048 per thread); rounded so that signs tie
    rng = _rng(12)
    ref = np.round(rng.normal(size=(16384, 16)), 1)
    return ref + np.round(0.3 * rng.normal(size=ref.shape), 1), ref


# --- the cases ----------------------------------------------------------------

TABLE_KERNELS = {
    "shapley": "tables.semivalue", "banzhaf": "tables.semivalue",
    "singleton": "tables.gather", "leave_one_out": "tables.gather",
    "pair_interactions": "tables.gather", "size_resolved": "tables.size_resolved",
    "moebius": "tables.moebius", "from_moebius": "tables.moebius",
}


def _tables_case(name, games, pieces=7):
    return Case(lambda b, t: getattr(fc, name)(games(), threads=t, backend=b),
                (TABLE_KERNELS[name],), pieces)


CASES = {f"{name}-batch": _tables_case(name, small_games) for name in TABLE_KERNELS}
CASES.update({
    "semivalue-batch-float32": Case(
        lambda b, t: fc.semivalue(small_games().astype(np.float32),
                                  np.linspace(0.1, 0.5, 5), threads=t, backend=b),
        ("tables.semivalue",)),
    "shapley-m18": _tables_case("shapley", large_game, pieces=4),
    "banzhaf-m18": _tables_case("banzhaf", large_game, pieces=4),
    "semivalue-m18": Case(lambda b, t: fc.semivalue(large_game(), np.linspace(1, 2, 18),
                                                    threads=t, backend=b),
                          ("tables.semivalue",), pieces=4),
    "shapley-batch-3x2**17": _tables_case("shapley", large_batch, pieces=6),
    "banzhaf-batch-3x2**17": _tables_case("banzhaf", large_batch, pieces=6),
    "permutation_shapley-batch": Case(
        lambda b, t: fc.permutation_shapley(small_games()[:300, :16].reshape(20, 15, 16),
                                            permutations=40, tol=0.3, min_samples=4,
                                            seed=2**64 - 5, threads=t, backend=b),
        ("sampling.tables",)),
    "permutation_shapley-budget": Case(
        lambda b, t: fc.permutation_shapley(small_games()[:64], budget=37, antithetic=False,
                                            seed=9, threads=t, backend=b),
        ("sampling.tables",)),
    "auction_replay-filter-first": Case(
        lambda b, t: fc.auction_replay(pools(), threads=t, backend=b), ("auction.replay",)),
    "auction_replay-rerun-gsp-capacity": Case(
        lambda b, t: fc.auction_replay(pools(), slots=3, reserve=0.02, capacity=12,
                                       pricing="gsp", mode="rerun", threads=t, backend=b),
        ("auction.replay",)),
    "auction_winners": Case(
        lambda b, t: fc.auction_winners(pools(), slots=2, pricing="gsp", threads=t,
                                        backend=b), ("auction.replay",)),
    "project_zero_sum-kappa": Case(
        lambda b, t: fc.project_zero_sum(projection_rows()[0], projection_rows()[1],
                                         projection_rows()[2], threads=t, backend=b),
        ("shaping.project",)),
    "project_zero_sum-bounds-weights": Case(
        lambda b, t: fc.project_zero_sum(projection_rows()[0], lower=-0.4, upper=1.1,
                                         weights=projection_rows()[3], total=0.3, threads=t,
                                         backend=b),
        ("shaping.project",)),
    "shape_advantages": Case(
        lambda b, t: fc.shape_advantages(projection_rows()[2], projection_rows()[0], beta=0.3,
                                         kappa=0.7, token_counts=projection_rows()[3],
                                         threads=t, backend=b),
        ("shaping.project",)),
    "token_advantages": Case(
        lambda b, t: fc.token_advantages(*tokens(), threads=t, backend=b), ("shaping.tokens",)),
    "bootstrap_median": Case(
        lambda b, t: fc.bootstrap_median(trajectories()[0][:500], resamples=1000, seed=11,
                                         threads=t, backend=b), ("audit.bootstrap_median",)),
    "paired_bootstrap": Case(
        lambda b, t: fc.paired_bootstrap(trajectories()[0][:500], trajectories()[1][:500],
                                         resamples=1000, seed=2**64 - 1, threads=t, backend=b),
        ("audit.bootstrap_median",)),
    "within_spearman": Case(
        lambda b, t: fc.within_spearman(*trajectories(), threads=t, backend=b),
        ("audit.spearman",)),
    "spearman_audit": Case(
        lambda b, t: fc.spearman_audit(*trajectories(), resamples=700, seed=5, threads=t,
                                       backend=b),
        ("audit.spearman", "audit.bootstrap_median")),
    "shuffle_within": Case(
        lambda b, t: fc.shuffle_within(trajectories()[0], trajectories()[2], seed=3, stream=2,
                                       threads=t, backend=b), ("audit.shuffle",)),
    "audit_controls": Case(
        lambda b, t: fc.audit_controls(*equal_trajectories(),
                                       controls=("shuffle", "random", "uniform",
                                                 "derangement"),
                                       resamples=500, seed=13, threads=t, backend=b),
        ("audit.spearman", "audit.bootstrap_median", "audit.shuffle", "audit.derangement")),
    "alignment": Case(
        lambda b, t: fc.alignment(*requests(), threads=t, backend=b), ("audit.spearman",)),
    "alignment_controls": Case(
        lambda b, t: fc.alignment_controls(*requests(), seed=17, threads=t, backend=b),
        ("audit.spearman", "audit.shuffle", "audit.derangement")),
    "evaluator_fidelity": Case(
        lambda b, t: fc.evaluator_fidelity(*fidelity_tables(), threads=t, backend=b),
        ("tables.gather", "tables.size_resolved", "audit.spearman")),
    "contrastive_effects-bootstrap": Case(
        lambda b, t: fc.contrastive_effects(_rng(9).normal(size=(12, 40)),
                                            _rng(10).normal(size=25), resamples=400, seed=21,
                                            threads=t, backend=b),
        ("audit.bootstrap_mean_diff",)),
    # Numba-only code (no backend argument)
    "sponsored_search": Case(
        lambda b, t: fc.synthetic.sponsored_search(7 * 4096 + 50, k=4, seed=2**64 - 2,
                                                   catalogue=5000, topics=50, threads=t),
        None),
    "table_from_function-njit": Case(lambda b, t: fc.table_from_function(_njit_game(), 15,
                                                                         threads=t), None),
    # interactions: batches split by game (Moebius and graded sums, or the
    # table itself), one large game split by subset size (6 sizes)
    "interactions-kSII-batch": Case(lambda b, t: fc.interactions(small_games(), "k-SII", 3,
                                                                 threads=t, backend=b),
                                    ("tables.moebius", "interactions.graded")),
    "interactions-JointSV-batch": Case(lambda b, t: fc.interactions(small_games(), "JointSV", 2,
                                                                    threads=t, backend=b),
                                       ("interactions.graded",)),
    "interactions-STII-one-game": Case(lambda b, t: fc.interactions(interactions_game(), "STII",
                                                                    6, threads=t, backend=b),
                                       ("tables.moebius", "interactions.graded"), pieces=6),
})


@_memo
def interactions_game():
    return _rng(9).normal(size=1 << 14)


@_memo
def _njit_game():
    from numba import njit

    @njit
    def v(mask):
        s = 0.0
        for i in range(15):
            if mask >> i & 1:
                s += 0.1 * (i + 1) * (1.0 + 0.37 * (mask % 11))
        return s
    return v


# --- comparing ----------------------------------------------------------------

def leaves(x, path="result"):
    """Every array-like part of a result as (path, ndarray): arrays,
    dataclasses (results and Pools), dicts, tuples and scalars."""
    if isinstance(x, fc.Pools):
        return [(f"{path}.{f}", getattr(x, f)) for f in ("offsets", "ad_id", "score",
                                                          "value", "prerank")]
    if dataclasses.is_dataclass(x):
        return [leaf for f in dataclasses.fields(x)
                for leaf in leaves(getattr(x, f.name), f"{path}.{f.name}")]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in leaves(x[k], f"{path}[{k!r}]")]
    if isinstance(x, (tuple, list)):
        return [leaf for i, item in enumerate(x) for leaf in leaves(item, f"{path}[{i}]")]
    return [(path, np.asarray(x))]


def assert_same_bits(a, b, what):
    la, lb = leaves(a), leaves(b)
    assert [p for p, _ in la] == [p for p, _ in lb], what
    for (path, x), (_, y) in zip(la, lb):
        assert x.shape == y.shape and x.dtype == y.dtype, f"{what}: {path}"
        if x.dtype.kind in "fc":
            # the same values, NaN where the other has NaN, and the same signed zeros
            assert np.array_equal(x, y, equal_nan=True), f"{what}: {path}"
            assert np.array_equal(np.signbit(x), np.signbit(y)), f"{what}: {path} (-0.0)"
        else:
            assert np.array_equal(x, y), f"{what}: {path}"


_results: dict = {}


def _backends(case):
    return BACKENDS if case.kernels else (None,)


def _run(name, backend, threads):
    key = (name, backend, threads)
    if key not in _results:
        _results[key] = CASES[name].call(backend, threads)
    return _results[key]


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bits_for_any_thread_count(name, monkeypatch):
    case = CASES[name]
    pieces = []
    real = _parallel.chunks

    def watch(n_items, threads, grain=1):
        parts = real(n_items, threads, grain)
        pieces.append(len(parts))
        return parts

    monkeypatch.setattr(_parallel, "chunks", watch)
    for backend in _backends(case):
        first = _run(name, backend, 1)
        for threads in THREADS[1:]:
            pieces.clear()
            _results.pop((name, backend, threads), None)
            got = _run(name, backend, threads)
            # the input is large enough that the work really was split
            assert max(pieces) >= min(threads, case.pieces), (backend, threads, pieces)
            assert_same_bits(got, first, f"{backend}, threads={threads} vs 1")
            if threads == 2:   # only threads 1 and 7 are kept for the next test
                del _results[name, backend, threads]


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.kernels))
def test_same_bits_on_both_backends(name):
    if len(BACKENDS) < 2:
        pytest.skip("needs both backends")
    case = CASES[name]
    strict = [STRICTNESS[k] for k in case.kernels]
    if any(s != BITS for s in strict):
        pytest.skip(f"{case.kernels} not declared bit-identical across backends here")
    for threads in (1, 7):
        assert_same_bits(_run(name, "c", threads), _run(name, "numba", threads),
                         f"c vs numba, threads={threads}")
