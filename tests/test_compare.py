"""The C and Numba twins of every kernel, side by side.

Every kernel family exists twice, in C (fastcredit._c) and in Numba
(fastcredit._numba). Instead of a C-vs-Numba comparison in each family's
tests, each with its own strictness, one harness (after numpy-groupies'
tests/test_compare.py):

* STRICTNESS declares, once, what the two twins of each kernel guarantee
  between them;
* CASES lists calls of the public entry points that dispatch to twin
  kernels, on seeded fixtures (float32, batch shapes, m = 1, empty batches,
  ties, NaN), each with its oracle from tests/reference.py;
* test_twins_agree runs every case on each backend, checks each result
  against the oracle and the two against each other with the strictness
  declared for the kernels the case runs; it also checks that the call
  resolves exactly those kernels (the cases of kernels whose C twin
  chooses paths by processor run on each path, BY_PROCESSOR), and
  test_every_kernel_has_a_case_and_a_strictness that every kernel of
  fastcredit._backend.FASTEST has a case and a declared strictness.
"""
from __future__ import annotations

import functools
import importlib
import math
import pathlib
import re
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import fastcredit as fc
from fastcredit import _backend
from fastcredit.approximators import _METHODS

import reference as ref

from conftest import BACKENDS, PATHS, random_tree_batch

BITS = "bits"


def _c_has_vector_ext() -> bool:
    """Whether the C extension was compiled by GCC >= 9, which takes the
    8-wide vector paths of csrc/tables_real.inc (FC_VECTOR_EXT,
    csrc/internal.h) that the Numba twin mirrors; read from the compiler
    notes in the shared object."""
    try:
        from fastcredit import _cffi
    except ImportError:
        return False
    blob = pathlib.Path(_cffi.__file__).read_bytes()
    gcc = re.search(rb"GCC: \([^)]*\) (\d+)\.", blob)
    return b"clang version" not in blob and gcc is not None and int(gcc.group(1)) >= 9


#: kernel (a key of fastcredit._backend.FASTEST) -> what its C and Numba
#: twins guarantee between them on the same input: BITS (the same bits,
#: signed zeros included; NaN where the other has NaN), or a relative
#: tolerance. C is built with -ffp-contract=off (build_ffi.py), so both
#: round every operation alike; each Numba module says it follows its C
#: twin's algorithm in the same summation order.
STRICTNESS = {
    # tables: semivalues fold 8-wide vectors in the same order on both sides
    # when C is built by GCC >= 9; other compilers take a portable scalar loop
    # that sums in another order.
    "tables.semivalue": BITS if _c_has_vector_ext() else 1e-12,
    "tables.gather": BITS,
    "tables.size_resolved": BITS,
    "tables.moebius": BITS,
    # the same odometer over each player's levels, summed in the same order
    "tables.owen": BITS,
    # interactions: the same weighting loop and the zeta transform of tables
    "interactions.graded": BITS,
    # sampling: the same counter-based draws (csrc/rng.h), the same walks and
    # running sums
    "sampling.tables": BITS,
    "sampling.permutations": BITS,
    # the same draws and placements; copies; the same sums in row order
    "sampling.tree_permutations": BITS,
    "sampling.masked_rows": BITS,
    "sampling.background_mean": BITS,
    "sampling.affordable_pairs": BITS,
    "auction.replay": BITS,
    "shaping.project": BITS,
    "shaping.tokens": BITS,
    "trees.credit": BITS,
    "trees.allocation": BITS,
    # audit: the same draws and summation order
    "audit.bootstrap_median": BITS,
    "audit.bootstrap_mean_diff": BITS,
    "audit.spearman": BITS,
    # the same per-row sums in the same order, the same heap sort for the ties
    "audit.alignment": BITS,
    "audit.shuffle": BITS,
    "audit.derangement": BITS,
    "audit.replay_advantage": BITS,
    # the same tallies of the same draws, ranks and sums in item order
    "audit.bootstrap_spearman_diff": BITS,
    # the same donor draws, the same sums in the same order
    "audit.null_worlds": BITS,
    # synthetic: the same draws, the same float operations in the same order
    # and the same C library calls
    "synthetic.sponsored_search": BITS,
    "synthetic.replay_repeats": BITS,
    # approximators: the same streams, the same moments in sample order
    "approximators.stratified": BITS,
    "approximators.owen": BITS,
    "approximators.shapiq": BITS,
    "approximators.svarmiq": BITS,
    # the regression methods: the same draws, folds and Cholesky solves in
    # the same order (then the same NumPy on the same bits)
    "approximators.kernelshap": BITS,
    "approximators.kernelshapiq": BITS,
    "approximators.inconsistent_kernelshapiq": BITS,
    "approximators.kaddshap": BITS,
    "approximators.regression_fsii": BITS,
    "approximators.regression_fbii": BITS,
    # ProxySPEX's trees: the same terms summed per frequency in the same order
    "approximators.proxyspex": BITS,
    # SPEX: the same detections (integer decoding) and float operations in
    # the same order, then the same NumPy
    "approximators.spex": BITS,
}


@dataclass(frozen=True)
class Case:
    """One call of a public entry point, on both backends.

    ``call(backend)`` and ``oracle()`` return dicts of the same named
    outputs. Against the oracle, integer and bool outputs must be equal and
    floats within ``rtol`` (relative, and absolute times the largest finite
    oracle magnitude, at least 1); ``rtol=0`` asks for equality, where the
    oracle does the kernel's arithmetic in the kernel's order (gathers,
    seeded draws, sums in a specified order)."""
    kernels: tuple
    name: str
    call: Callable[[str], dict]
    oracle: Callable[[], dict]
    rtol: float = 1e-10

    @property
    def id(self) -> str:
        return f"{self.kernels[0]}-{self.name}"


def _rng(seed):
    return np.random.default_rng(seed)


# --- tables -------------------------------------------------------------------

TABLE_KERNELS = {
    "shapley": "tables.semivalue",
    "banzhaf": "tables.semivalue",
    "singleton": "tables.gather",
    "leave_one_out": "tables.gather",
    "pair_interactions": "tables.gather",
    "size_resolved": "tables.size_resolved",
    "moebius": "tables.moebius",
    "from_moebius": "tables.moebius",
}


def _weights(name, m):
    if name == "shapley":
        return [math.factorial(k) * math.factorial(m - k - 1) / math.factorial(m)
                for k in range(m)]
    return [0.5 ** (m - 1)] * m


@functools.cache
def _moebius_matrix(m):
    return ref.moebius_matrix(m)


def table_oracle(name, v):
    """Oracle of table function ``name`` on a batch: the matrix forms of the
    definitions for the transforms and for semivalues from m = 9 on, the
    loops of tests/reference.py otherwise."""
    v = np.asarray(v, dtype=np.float64)
    m = v.shape[-1].bit_length() - 1
    if name == "moebius":
        return v @ _moebius_matrix(m).T
    if name == "from_moebius":
        return v @ np.abs(_moebius_matrix(m)).T
    if name in ("shapley", "banzhaf") and m >= 9:
        return v @ ref.semivalue_matrix(m, _weights(name, m))
    return ref.per_game(getattr(ref, name), v)


def table_case(name, label, inputs, **kwargs):
    def call(backend):
        return {k: getattr(fc, name)(v, backend=backend, **kwargs) for k, v in inputs.items()}

    def oracle():
        return {k: table_oracle(name, v) for k, v in inputs.items()}

    kernel = TABLE_KERNELS[name]
    # a gather is one subtraction per entry (pair interactions
    # ((v(ij) - v(i)) - v(j)) + v(0)), as the oracle computes it
    return Case((kernel,), f"{name}-{label}", call, oracle,
                rtol=0 if kernel == "tables.gather" else 1e-10)


def semivalue_case():
    w6, w9 = _rng(30).random(6), _rng(31).random(9)
    v6, v9 = _rng(32).normal(size=(4, 64)), _rng(33).normal(size=(3, 512)).astype(np.float32)

    def call(backend):
        return {"m6": fc.semivalue(v6, w6, backend=backend),
                "m9_f32": fc.semivalue(v9, w9, backend=backend)}

    def oracle():
        return {"m6": ref.per_game(lambda g: ref.semivalue(g, w6), v6),
                "m9_f32": v9.astype(np.float64) @ ref.semivalue_matrix(9, w9)}

    return Case(("tables.semivalue",), "semivalue-weights-m6-m9f32", call, oracle)


def table_cases():
    small = {f"m{m}": _rng(m).normal(size=(11, 1 << m)) for m in range(1, 9)}
    shapes = {"ties": _rng(20).integers(-2, 3, size=(6, 32)).astype(float),
              "f32_lead": _rng(22).normal(size=(2, 3, 16)).astype(np.float32),
              "strided": _rng(23).normal(size=(3, 64))[:, ::2],
              "empty": np.zeros((0, 8)), "empty_lead": np.zeros((2, 0, 4))}
    # two blocks of 2**8 entries, and a large common offset (cancellation)
    offset = {"m9": _rng(21).normal(size=(5, 512)) * 1e3 + 5e3}
    m12 = {"m12": _rng(24).normal(size=(37, 1 << 12)) * 1e3 + 5e3}
    cases = []
    for name in TABLE_KERNELS:
        cases += [table_case(name, "m1to8", small), table_case(name, "shapes", shapes),
                  table_case(name, "m9-offset", offset)]
        if name not in ("size_resolved", "moebius", "from_moebius"):   # 4**m oracles
            cases.append(table_case(name, "m12-offset", m12))
    one = {"m16": _rng(25).normal(size=1 << 16)}     # one game split over threads by block
    cases += [table_case("shapley", "m16-split-2threads", one, threads=2),
              table_case("banzhaf", "m17-split-2threads", {"m17": _rng(26).normal(size=1 << 17)},
                         threads=2),
              semivalue_case(), owen_case()]
    return cases


def owen_case():
    """fc.owen over partitions and linkage matrices (one with a cluster of
    negative distance, never split) against the average over the orders
    that keep the hierarchy together (reference.owen)."""
    linkage6 = np.array([[0, 3, 0.5, 2], [1, 2, 0.7, 2], [4, 6, 1.0, 3], [7, 5, 1.5, 3],
                         [8, 9, 2.0, 6]])
    unsplit = linkage6.copy()
    unsplit[2, 2] = -1.0
    inputs = {"partition-m5": (_rng(40).normal(size=(7, 32)), [2, 0, 2, 1, 0]),
              "singletons-m4-f32-lead": (_rng(41).normal(size=(2, 3, 16)).astype(np.float32),
                                         np.arange(4)),
              "linkage-m6": (_rng(42).normal(size=(5, 64)) * 1e3 + 5e3, linkage6),
              "unsplit-m6": (_rng(43).normal(size=(4, 64)), unsplit),
              "m1": (_rng(44).normal(size=(3, 2)), [7]),
              "empty": (np.zeros((0, 8)), [0, 0, 1])}

    def call(backend):
        return {k: fc.owen(v, c, backend=backend, threads=2) for k, (v, c) in inputs.items()}

    def oracle():
        return {k: ref.per_game(lambda g, c=c: ref.owen(g, c), v)
                for k, (v, c) in inputs.items()}

    return Case(("tables.owen",), "partitions-linkages", call, oracle)


# --- interactions -------------------------------------------------------------

def interactions_case(index, order, inputs, threads=None):
    """fc.interactions on each input against the definitions of
    tests/reference.py, game by game."""
    def call(backend):
        return {f"{k}.{j}": x for k, v in inputs.items() for j, x in enumerate(
            fc.interactions(v, index, order, backend=backend, threads=threads).values)}

    def oracle():
        out = {}
        for k, v in inputs.items():
            v = np.asarray(v, dtype=np.float64)
            games = [ref.interaction_index(g, index, order) for g in v.reshape(-1, v.shape[-1])]
            m = v.shape[-1].bit_length() - 1
            for j in range(order + 1):
                out[f"{k}.{j}"] = np.array([g[j] for g in games]).reshape(
                    v.shape[:-1] + (math.comb(m, j),))
        return out

    cardinal = index not in ("SGV", "BGV", "CHGV", "IGV", "EGV", "JointSV")
    kernels = ("tables.moebius", "interactions.graded") if cardinal else ("interactions.graded",)
    return Case(kernels, f"{index}-order{order}", call, oracle)


def interactions_cases():
    r = _rng(60)
    inputs = {"m3": r.normal(size=(4, 8)), "m5_f32_lead": r.normal(size=(2, 3, 32)).astype(
        np.float32), "m6_offset": r.normal(size=(3, 64)) * 1e3 + 5e3,
        "empty": np.zeros((0, 16))}
    cases = [interactions_case(index, 2, inputs)
             for index in ("SII", "BII", "CHII", "Co-Moebius", "k-SII", "STII", "FSII", "FBII",
                           "kADD-SHAP", "Moebius", "SGV", "BGV", "CHGV", "IGV", "EGV",
                           "JointSV")]
    cases += [interactions_case("SV", 1, {"m1": r.normal(size=(3, 2)), "m4": r.normal(size=16)}),
              interactions_case("BV", 1, {"m7": r.normal(size=(2, 128))}),
              interactions_case("STII", 3, {"m9": r.normal(size=(2, 512))}, threads=2),
              interactions_case("JointSV", 3, {"m8_f32": r.normal(size=(2, 256)).astype(
                  np.float32)}, threads=2)]
    return cases


# --- sampling -----------------------------------------------------------------

ESTIMATE = ("values", "stderr", "n_evals", "n_permutations", "n_samples", "truncated")


def estimate_fields(est) -> dict:
    return {f: getattr(est, f) for f in ESTIMATE}


def sampled_oracle(v, seed, **kwargs) -> dict:
    """ref.permutation_run on every game of a batch of tables."""
    flat = np.asarray(v).reshape(-1, v.shape[-1])
    m = v.shape[-1].bit_length() - 1
    runs = [ref.permutation_run(g, seed, i, **kwargs) for i, g in enumerate(flat)]
    lead = v.shape[:-1]
    return {f: np.array([r[f] for r in runs]).reshape(lead + ((m,) if f in ESTIMATE[:2]
                                                              else ()))
            for f in ESTIMATE}


def table_sampling_case(name, inputs, seed, threads=None, **kwargs):
    """permutation_shapley on tables; kwargs as fc.permutation_shapley takes
    them (permutations, budget, antithetic, cache, tol, min_samples)."""
    walks = kwargs.pop("permutations")

    def call(backend):
        return {f"{k}.{f}": x for k, v in inputs.items() for f, x in estimate_fields(
            fc.permutation_shapley(v, permutations=walks, seed=seed, threads=threads,
                                   backend=backend, **kwargs)).items()}

    def oracle():
        return {f"{k}.{f}": x for k, v in inputs.items()
                for f, x in sampled_oracle(v, seed, walks=walks, **kwargs).items()}

    return Case(("sampling.tables",), name, call, oracle)


class MaskGame:
    """v[mask] of a game on Python integer masks of any width (the way
    reference.walk_marginals reads a table)."""

    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, mask):
        return self.fn(mask)


def python_game_cases():
    v6 = _rng(40).normal(size=1 << 6)
    w = np.linspace(0.0, 1.0, 70)

    def bool_game(b):              # 70 players: bool rows
        return b @ w + 2.0 * b[:, 3] * b[:, 60]

    def by_mask(mask):
        bits = [mask >> i & 1 for i in range(70)]
        return sum(w[i] for i in range(70) if bits[i]) + 2.0 * bits[3] * bits[60]

    def call_masks(backend):
        return estimate_fields(fc.permutation_shapley(
            lambda s: v6[s.astype(np.int64)], 6, permutations=40, cache=False, chunk=50,
            seed=3, backend=backend))

    def call_bool(backend):
        # declared deterministic: cached as the reference's default run is
        return estimate_fields(fc.permutation_shapley(fc.games.deterministic(bool_game), 70,
                                                      permutations=20, seed=1, backend=backend))

    return [Case(("sampling.permutations",), "python-masks-m6-nocache", call_masks,
                 lambda: ref.permutation_run(v6, 3, 0, 40, cache=False)),
            Case(("sampling.permutations",), "python-bool-m70", call_bool,
                 lambda: ref.permutation_run(MaskGame(by_mask), 1, 0, 20, m=70))]


def _affordable_found(found):
    """(pairs, each row's masks one after another) of the affordable_pairs
    kernel's (pairs, counts, masks) or the reference's [(pairs, masks)]."""
    if isinstance(found, tuple):
        pairs, counts, masks = found
        found = [(p, m[:c]) for p, c, m in zip(pairs, counts, masks)]
    return (np.array([p for p, _ in found], dtype=np.int64),
            np.concatenate([np.array(m, dtype=np.uint64) for _, m in found]))


def shap_kernel_cases():
    """The kernels under fastcredit.shap's explainers: orders that respect a
    cluster tree, the masked rows, the average over the background."""
    from fastcredit.sampling import (_affordable_pairs, _background_mean, _masked_rows,
                                     _tree_permutations)
    r = _rng(42)
    # a linkage of 7 players (scipy's order) and the chain and pair trees
    trees = {"m7": [[1, 2], [0, 7], [3, 4], [5, 9], [6, 10], [8, 11]],
             "m2": [[1, 0]], "m1": np.zeros((0, 2)),
             "m5-chain": [[0, 1], [5, 2], [6, 3], [7, 4]]}
    background, xs = r.normal(size=(4, 6)), r.normal(size=(3, 6))
    background[1, 2], xs[0, 4], xs[2, 0] = np.nan, np.inf, -np.inf
    masks = r.integers(0, 64, size=40).astype(np.uint64)
    owner = r.integers(0, 3, size=40)
    wide = r.normal(size=(1, 64))
    wide_mask = np.array([2**64 - 1, 2**63, 5], dtype=np.uint64)
    outputs = r.normal(size=(30, 7, 3))
    outputs[3, 2, 1] = np.nan
    weights = r.random(7)
    orders = {k: np.argsort(r.random((3, 12, k)), axis=2).astype(np.int32) for k in (5, 10, 20, 64)}
    affordable = [(5, 2), (5, 12), (5, 31), (10, 60), (10, 10**6), (20, 150), (64, 700)]
    return [
        Case(("sampling.tree_permutations",), "trees",
             lambda backend: {name: _tree_permutations(t, 2**64 - 5, 9, 3, backend=backend)
                              for name, t in trees.items()},
             lambda: {name: [ref.tree_permutation(2**64 - 5, 0, 3 + u, t) for u in range(9)]
                      for name, t in trees.items()}, rtol=0),
        Case(("sampling.masked_rows",), "owners-nan-inf-m64-empty",
             lambda backend: {
                 "rows": _masked_rows(background, xs, masks, owner, backend=backend),
                 "m64": _masked_rows(wide, wide[::-1] + 1.0, wide_mask, np.zeros(3, np.int64),
                                     backend=backend),
                 "empty": _masked_rows(background, xs, masks[:0], owner[:0], backend=backend)},
             lambda: {"rows": ref.masked_rows(background, xs, masks, owner),
                      "m64": ref.masked_rows(wide, wide[::-1] + 1.0, wide_mask, [0, 0, 0]),
                      "empty": np.zeros((0, 6))}, rtol=0),
        Case(("sampling.background_mean",), "plain-weighted-nan-empty",
             lambda backend: {
                 "plain": _background_mean(outputs, backend=backend),
                 "weighted": _background_mean(outputs, weights, backend=backend),
                 "one-row": _background_mean(outputs[:, :1], backend=backend),
                 "empty": _background_mean(outputs[:0], backend=backend)},
             lambda: {"plain": ref.background_mean(outputs),
                      "weighted": ref.background_mean(outputs, weights),
                      "one-row": ref.background_mean(outputs[:, :1]),
                      "empty": np.zeros((0, 3))}),
        # a bit per coalition (k = 5, 10) and the hash set (k = 20, 64); budgets
        # that stop inside the pairs, at the first, and never
        Case(("sampling.affordable_pairs",), "dense-hash-budgets",
             lambda backend: {f"k{k}-{budget}-{part}": array
                              for k, budget in affordable for part, array in zip(
                                  ("pairs", "masks"), _affordable_found(_affordable_pairs(
                                      orders[k], budget, backend=backend)))},
             lambda: {f"k{k}-{budget}-{part}": array
                      for k, budget in affordable for part, array in zip(
                          ("pairs", "masks"), _affordable_found(ref.affordable_pairs(
                              orders[k], budget)))}, rtol=0),
    ]


def sampling_cases():
    r = _rng(41)
    return [
        table_sampling_case("table-antithetic-m5", {"m5": r.normal(size=(3, 32))}, seed=11,
                            permutations=12),
        table_sampling_case("table-plain-nocache-f32", {
            "m5": r.normal(size=(3, 32)).astype(np.float32)}, seed=2**64 - 3,
            permutations=9, antithetic=False, cache=False),
        # budget cut, early stop on tol, a batch shape and two threads
        table_sampling_case("table-budget-tol-lead", {"m7": r.normal(size=(4, 10, 128))},
                            seed=5, threads=2, permutations=60, budget=250, tol=0.3,
                            min_samples=4),
        table_sampling_case("table-m1-and-empty", {"m1": r.normal(size=(2, 2)),
                                                   "empty": np.zeros((0, 8))},
                            seed=0, permutations=4),
    ] + python_game_cases() + shap_kernel_cases()


# --- auction ------------------------------------------------------------------

def tricky_pools(rng, n_requests, m, max_len=9, with_prerank=True):
    """Small requests rich in duplicates (8 ad ids), score ties (a handful of
    score levels, some negative), empty and short actions, and long ones that
    the per-action cut shortens."""
    lengths = rng.integers(0, max_len + 1, n_requests * m) * (rng.random(n_requests * m) > 0.2)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    n = int(offsets[-1])
    ad = rng.integers(0, 8, n)
    score = rng.choice([-1.0, 0.0, 0.5, 1.0, 1.0, 2.0, 2.0, 3.0], n) + rng.choice([0, 0, .25], n)
    value = rng.integers(0, 4, n) + rng.random(n) * (rng.random(n) < 0.5)
    prerank = rng.integers(0, 4, n).astype(float) if with_prerank else None
    return fc.Pools(offsets, ad, score, value, m=m, prerank=prerank)


def auction_oracle(pools, slots, options) -> dict:
    """The coalition tables and, padded to ``slots``, the winners' ad ids
    (-1) and earnings (0) of every request and coalition."""
    n, size = pools.n_requests, 1 << pools.m
    table = np.zeros((n, size))
    ads, earn = np.full((n, size, slots), -1), np.zeros((n, size, slots))
    for r in range(n):
        actions = ref.auction_actions(pools.offsets, pools.ad_id, pools.score, pools.value,
                                      pools.prerank, pools.m, r)
        table[r], winners = ref.auction_request(actions, slots, **options)
        for s, win in enumerate(winners):
            for q, (ad, e) in enumerate(win):
                ads[r, s, q], earn[r, s, q] = ad, e
    return {"table": table, "winners.table": table, "winners.ad_id": ads,
            "winners.earnings": earn}


def auction_case(name, requests, **options):
    """auction_replay and auction_winners on each (pools, slots) of
    ``requests``; options as both take them (reserve, capacity, pricing, mode)."""
    def call(backend):
        out = {}
        for k, (pools, slots) in requests.items():
            win = fc.auction_winners(pools, slots, backend=backend, **options)
            out |= {f"{k}.table": fc.auction_replay(pools, slots, backend=backend, **options),
                    f"{k}.winners.table": win.table, f"{k}.winners.ad_id": win.ad_id,
                    f"{k}.winners.earnings": win.earnings}
        return out

    def oracle():
        return {f"{k}.{f}": x for k, (pools, slots) in requests.items()
                for f, x in auction_oracle(pools, slots, options).items()}

    return Case(("auction.replay",), name, call, oracle, rtol=0)


def auction_cases():
    cases = []
    for i, (pricing, mode, capacity) in enumerate(
            (p, mo, c) for p in ("first", "gsp") for mo in ("filter", "rerun")
            for c in (None, 1, 3)):
        rng = _rng(100 + i)
        for m, reserve in [(1, 0.0), (2, -np.inf), (3, 1.0), (5, 0.5)]:
            requests = {f"m{m}": (tricky_pools(rng, 60, m, with_prerank=m != 2),
                                  int(rng.choice([1, 2, 3, 4, 12])))}
            cases.append(auction_case(f"{pricing}-{mode}-cap{capacity}-m{m}", requests,
                                      reserve=reserve, capacity=capacity, pricing=pricing,
                                      mode=mode))
    rng = _rng(99)
    ad = rng.integers(-1, 6, (20, 3, 6))
    padded = fc.Pools.from_padded(ad, rng.choice([0.5, 1., 2.], ad.shape).astype(np.float32),
                                  rng.random(ad.shape))
    empty = fc.Pools([0], [], [], [], m=3)
    cases.append(auction_case("padded-f32-and-empty", {"padded": (padded, 2), "empty": (empty, 4)},
                              pricing="gsp", mode="rerun"))
    return cases


# --- shaping ------------------------------------------------------------------

def project_rows(u, kappa, total) -> np.ndarray:
    """Row by row ref.project_box with bounds +-kappa; a row holding NaN or
    inf is NaN (documented); coordinates beyond 1e300 (whose sum overflows)
    sit at their bound for any finite tau, and the others are the
    projection onto what remains of the total."""
    u = np.asarray(u, dtype=np.float64)
    out = np.empty(u.shape)
    for r in range(u.shape[0]):
        k, t = float(np.broadcast_to(kappa, u.shape[:1])[r]), float(np.broadcast_to(
            total, u.shape[:1])[r])
        if not np.isfinite(u[r]).all():
            out[r] = np.nan
            continue
        huge = np.abs(u[r]) > 1e300
        out[r, huge] = np.sign(u[r, huge]) * k
        out[r, ~huge] = ref.project_box(u[r, ~huge], -k, k, total=t - out[r, huge].sum())
    return out


def projection_case(name, call, oracle):
    return Case(("shaping.project",), name, call, oracle, rtol=1e-12)


def shaping_cases():
    r = _rng(50)
    per_m = {m: (r.normal(scale=2.0, size=(20, m)), r.uniform(0.05, 2.0, 20)) for m in
             (1, 2, 5, 17)}
    per_m = {m: (u, k, r.uniform(-1, 1, 20) * m * k) for m, (u, k) in per_m.items()}

    # C projects unit-weight rows eight at a time, Numba one by one: blocks
    # holding a NaN row and a row whose sum overflows, a tail of 203 % 8 rows
    blocks = r.normal(scale=2.0, size=(203, 6))
    blocks[17] = [np.nan, 0, 0, 0, 0, 0]
    blocks[42] = [1e308, 1e308, 0, 0, 0, 0]
    bk = r.uniform(0.1, 2.0, 203)
    bt = r.uniform(-0.5, 0.5, 203) * bk
    with np.errstate(over="ignore"):
        blocks32 = blocks.astype(np.float32)      # 1e308 becomes inf: a NaN row

    wu = r.normal(scale=2.0, size=(300, 5))
    ww = r.integers(0, 9, (300, 5)) + 0.0
    ww[:, 0] += 1.0                               # no row without weight

    n, m = 60, 7
    gu = r.normal(scale=2.0, size=(n, m))
    lower, upper = -r.uniform(0, 1.5, size=(n, m)), r.uniform(0, 1.5, size=(n, m))
    gw = r.integers(0, 6, size=(n, m)).astype(float)
    gw[:, 0] += 1
    alpha = r.uniform(0, 1, size=n)
    gt = alpha * (gw * lower).sum(1) + (1 - alpha) * (gw * upper).sum(1)

    base, credit = r.normal(size=30), r.normal(size=(30, 5)) * r.uniform(0, 3, (30, 1))
    credit[3] = 1.0                                  # constant credit: 0 offsets
    counts = r.integers(0, 6, (30, 5)) + 0.0
    counts[:, 1] += 1

    def weighted(u, w, lo, hi, t):
        return np.array([ref.project_box(u[i], lo[i], hi[i], w[i], t[i]) for i in range(len(u))])

    def call_shaped(backend):
        out = {norm: fc.shape_advantages(base, credit, beta=0.3, kappa=0.8, normalize=norm,
                                         backend=backend)
               for norm in ("std", "maxabs", "none")}
        out["token_counts"] = fc.shape_advantages(base, credit, beta=0.5, token_counts=counts,
                                                  backend=backend)
        return out

    def oracle_shaped():
        out = {norm: np.array([ref.shape_advantages(base[g], credit[g], 0.3, 0.8, norm)
                               for g in range(30)]) for norm in ("std", "maxabs", "none")}
        out["token_counts"] = np.array([ref.shape_advantages(base[g], credit[g], 0.5, 1.0,
                                                             weights=counts[g])
                                        for g in range(30)])
        return out

    return [
        projection_case("kappa-total-per-row-m1-2-5-17", lambda b: {
            f"m{m}": fc.project_zero_sum(u, k, t, backend=b) for m, (u, k, t) in per_m.items()},
            lambda: {f"m{m}": project_rows(u, k, t) for m, (u, k, t) in per_m.items()}),
        projection_case("row-blocks-nan-overflow-f64-f32", lambda b: {
            "f64": fc.project_zero_sum(blocks, bk, bt, backend=b),
            "f32": fc.project_zero_sum(blocks32, bk, bt, backend=b)},
            lambda: {"f64": project_rows(blocks, bk, bt), "f32": project_rows(blocks32, bk, bt)}),
        projection_case("weights-and-no-clip", lambda b: {
            "weights": fc.project_zero_sum(wu, 0.7, weights=ww, backend=b),
            "no_clip": fc.project_zero_sum(wu, 30.0, backend=b)},
            lambda: {"weights": weighted(wu, ww, np.full(300, -0.7), np.full(300, 0.7),
                                         np.zeros(300)),
                     "no_clip": project_rows(wu, 30.0, 0.0)}),
        projection_case("bounds-weights-total", lambda b: {"z": fc.project_zero_sum(
            gu, lower=lower, upper=upper, weights=gw, total=gt, backend=b)},
            lambda: {"z": weighted(gu, gw, lower, upper, gt)}),
        projection_case("shape_advantages", call_shaped, oracle_shaped),
    ] + token_cases()


def token_cases():
    r = _rng(51)
    G, T, m = 6, 50, 3
    base, adv = r.normal(size=G), r.normal(size=(G, m))
    mask = r.integers(0, 2, size=(G, T))
    ta = r.integers(-1, m, size=(G, T))
    typed = {"int8": ta.astype(np.int8), "uint16": np.abs(ta).astype(np.uint16),
             "int64": ta.astype(np.int64)}
    lead_ta = r.integers(-1, 4, size=(2, 30, 500)).astype(np.int32)
    lead_base, lead_adv = r.normal(size=(2, 30)), r.normal(size=(2, 30, 4))

    def call(backend):
        out = {f"{k}.mask": fc.token_advantages(base, adv, t, mask, backend=backend)
               for k, t in typed.items()}
        out["int64.nomask"] = fc.token_advantages(base, adv, typed["int64"], backend=backend)
        out["lead_threads"] = fc.token_advantages(lead_base, lead_adv, lead_ta, threads=2,
                                                  backend=backend)
        out["no_tokens"] = fc.token_advantages(base, adv, np.zeros((G, 0), np.int32),
                                               backend=backend)
        return out

    def oracle():
        out = {f"{k}.mask": ref.token_advantages(base, adv, t, mask) for k, t in typed.items()}
        out["int64.nomask"] = ref.token_advantages(base, adv, typed["int64"])
        out["lead_threads"] = ref.token_advantages(
            lead_base.reshape(-1), lead_adv.reshape(-1, 4),
            lead_ta.reshape(-1, 500)).reshape(lead_ta.shape)
        out["no_tokens"] = np.zeros((G, 0), np.float32)
        return out

    return [Case(("shaping.tokens",), "dtypes-mask-lead-threads-empty", call, oracle, rtol=0)]


# --- trees --------------------------------------------------------------------

def credit_case():
    rng = _rng(60)
    q, pi, offsets, _ = random_tree_batch(rng, n_states=500)   # some states without actions
    kq, kpi, koff, ksizes = random_tree_batch(rng, n_states=200, min_actions=1)
    actions = rng.integers(0, ksizes)                 # the action each state took

    def call(backend):
        out = {}
        for baseline in ("actor", "uniform"):
            res = fc.actor_centered_credit(q, pi, offsets, baseline=baseline, backend=backend)
            out |= {f"{baseline}.credit": res.credit, f"{baseline}.baseline": res.baseline}
        out["sampled"] = fc.actor_centered_credit(kq, kpi, koff, actions=actions,
                                                  backend=backend).sampled
        return out

    def oracle():
        out = {}
        for baseline in ("actor", "uniform"):
            credit, base = ref.actor_centered_credit(q, pi, offsets, baseline == "uniform")
            out |= {f"{baseline}.credit": credit, f"{baseline}.baseline": base}
        out["sampled"] = ref.actor_centered_credit(kq, kpi, koff)[0][koff[:-1] + actions]
        return out

    # the oracle sums in index order, as csrc/trees.h specifies: the same bits
    return Case(("trees.credit",), "actor-uniform-empty-states-sampled", call, oracle, rtol=0)


ALLOCATION_STEPS = 40


def allocation_value(a, j):
    return float((a * 7 + j) % 3) / 2         # three values: many tied means


def allocation_case(rule, cls, **kwargs):
    n, seed = 6, 11
    costs = kwargs.get("costs")

    def call(backend):
        alloc = cls(n, seed=seed, backend=backend, **kwargs)
        picks = []
        for j in range(ALLOCATION_STEPS):
            a = alloc.ask()
            picks.append(a)
            if costs is not None and j % 5 == 4:
                alloc.tell(a, allocation_value(a, j), cost=float(j % 4))
            else:
                alloc.tell(a, allocation_value(a, j))
        return {"picks": np.array(picks), "counts": alloc.counts}

    def oracle():
        counts, sums = np.zeros(n, dtype=np.int64), np.zeros(n)
        cost = None if costs is None else np.array(costs, dtype=np.float64)
        picks = []
        for j in range(ALLOCATION_STEPS):
            a = ref.allocation_pick(rule, counts, sums, cost, kwargs.get("c", math.sqrt(2)),
                                    kwargs.get("c_tok", 0.0 if costs is None else 1.0), seed, j)
            picks.append(a)
            counts[a] += 1
            sums[a] += allocation_value(a, j)
            if costs is not None and j % 5 == 4:
                cost[a] = float(j % 4)
        return {"picks": np.array(picks), "counts": counts}

    return Case(("trees.allocation",), rule, call, oracle, rtol=0)


def trees_cases():
    return [credit_case(), allocation_case("uniform", fc.Uniform),
            allocation_case("uct", fc.UCT, c=0.5),
            allocation_case("agent_uct", fc.AgentUCT, costs=np.arange(6.0) % 3, c=0.3,
                            c_tok=0.25)]


# --- audit --------------------------------------------------------------------

def offsets_of(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def bootstrap_fields(ci) -> dict:
    return {"replicates": ci.replicates, "estimate": ci.estimate, "low": ci.low,
            "high": ci.high, "n": ci.n}


def bootstrap_oracle(a, b, resamples, seed, level) -> dict:
    keep = ~np.isnan(a) if b is None else ~(np.isnan(a) | np.isnan(b))
    a = a[keep]
    b = None if b is None else b[keep]
    reps = ref.bootstrap_median(a, b, resamples, seed)
    low, high = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    estimate = np.median(a) - (0.0 if b is None else np.median(b))
    return {"replicates": reps, "estimate": estimate, "low": low, "high": high, "n": len(a)}


def bootstrap_cases():
    r = _rng(70)
    ties = {n: r.integers(0, 5, size=n).astype(float) for n in (2, 7, 10)}
    a, b = r.normal(size=301), r.normal(size=301)
    a[3], b[7] = np.nan, np.nan

    def call_median(backend):
        return {f"n{n}.{f}": x for n, v in ties.items() for f, x in bootstrap_fields(
            fc.bootstrap_median(v, resamples=60, seed=9, threads=1, backend=backend)).items()}

    def oracle_median():
        return {f"n{n}.{f}": x for n, v in ties.items()
                for f, x in bootstrap_oracle(v, None, 60, 9, 0.95).items()}

    def call_paired(backend):
        return bootstrap_fields(fc.paired_bootstrap(a, b, resamples=150, seed=2**64 - 3,
                                                    level=0.8, threads=2, backend=backend))

    return [Case(("audit.bootstrap_median",), "bootstrap_median-ties", call_median,
                 oracle_median, rtol=0),
            Case(("audit.bootstrap_median",), "paired_bootstrap-nan-pairs-2threads",
                 call_paired, lambda: bootstrap_oracle(a, b, 150, 2**64 - 3, 0.8), rtol=0)]


def contrastive_case():
    r = _rng(71)
    off = offsets_of(r.integers(1, 8, 5))
    vals, obs = r.normal(size=off[-1]), r.normal(size=5)
    groups = [vals[off[g]:off[g + 1]] for g in range(5)]

    def call(backend):
        out = {}
        for k, o in (("replays", obs), ("scalar", 0.5)):
            ce = fc.contrastive_effects(vals, o, offsets=off, resamples=40, seed=8, level=0.9,
                                        kind="continuous", threads=2, backend=backend)
            out |= {f"{k}.effect": ce.effect, f"{k}.low": ce.low, f"{k}.high": ce.high}
        return out

    def oracle():
        out = {}
        for k, o in (("replays", obs), ("scalar", 0.5)):
            reps = (ref.bootstrap_mean_diff(groups, obs, 40, 8) if k == "replays"
                    else ref.bootstrap_mean_diff(groups, [], 40, 8) - 0.5)
            low, high = np.quantile(reps, [0.05, 0.95], axis=1)
            out |= {f"{k}.effect": np.array([g.mean() for g in groups]) - np.mean(o),
                    f"{k}.low": low, f"{k}.high": high}
        return out

    return Case(("audit.bootstrap_mean_diff",), "contrastive_effects-continuous", call, oracle,
                rtol=1e-12)


def spearman_status(x, y, off, min_steps) -> np.ndarray:
    """csrc/audit.h status codes: 1 short, 3 a non-finite value, 2 constant
    y, 0 scored (the fixtures hold no group that is two of these)."""
    status = []
    for a, b in zip(off[:-1], off[1:]):
        xs, ys = x[a:b], y[a:b]
        status.append(1 if b - a < min_steps else 3 if not np.isfinite(np.r_[xs, ys]).all()
                      else 2 if len(set(ys)) == 1 else 0)
    return np.array(status, dtype=np.int8)


def spearman_cases():
    r = _rng(72)
    lengths = r.integers(1, 150, 40)             # ranked by counting (<= 64) and by heap sort
    lengths[5:10] = [6, 9, 12, 3, 1]             # short for min_steps 4, and for 2
    off = offsets_of(lengths)
    x = r.integers(0, 6, size=off[-1]).astype(float)
    y = r.normal(size=off[-1]).round(1)
    y[off[5]:off[6]] = 2.0                       # constant A_replay
    x[off[6]:off[7]] = 1.0                       # constant credit: rho 0
    y[off[7] + 1] = np.nan                       # a non-finite value
    c = r.integers(-2, 3, size=(40, 5)).astype(float)
    rr = r.integers(-2, 3, size=(40, 5)).astype(float)
    c[0], rr[1], c[2] = 1.0, 2.0, rr[2] * 3 + 1  # constant credit, constant reference, aligned
    c32 = r.normal(size=(2, 3, 4)).astype(np.float32)
    r32 = r.normal(size=(2, 3, 4))
    alignment_fields = ("cosine", "sign", "sign_nonzero", "spearman", "top")
    # the integer rows moved by at most 1e-3: tied again by atol = 0.01
    near = r.uniform(-1e-3, 1e-3, size=c.shape)
    alignment_inputs = (("ties", (c, rr), 0.0), ("f32_lead", (c32, r32), 0.0),
                        ("atol", (c + near, rr - near), 0.01))

    def call_within(backend):
        return {"rho": fc.within_spearman(x, y, off, min_steps=2, threads=2, backend=backend)}

    def call_alignment(backend):
        return {f"{k}.{f}": getattr(fc.alignment(cc, ri, atol=atol, backend=backend), f)
                for k, (cc, ri), atol in alignment_inputs for f in alignment_fields}

    def oracle_alignment():
        out = {}
        for k, (cc, ri), atol in alignment_inputs:
            rows = [ref.alignment(ci, rj, atol) for ci, rj in zip(cc.reshape(-1, cc.shape[-1]),
                                                                  ri.reshape(-1, ri.shape[-1]))]
            out |= {f"{k}.{f}": np.array([row[f] for row in rows]).reshape(cc.shape[:-1])
                    for f in alignment_fields}
        return out

    def call_audit(backend):
        audit = fc.spearman_audit(x, y, off, min_steps=4, resamples=50, seed=4,
                                  backend=backend)
        return {"rho": audit.rho, "status": audit.status,
                **{f"median.{f}": v for f, v in bootstrap_fields(audit.median).items()}}

    def oracle_audit():
        rho = ref.within_spearman(x, y, off, 4)
        return {"rho": rho, "status": spearman_status(x, y, off, 4),
                **{f"median.{f}": v for f, v in bootstrap_oracle(rho, None, 50, 4, 0.95).items()}}

    return [Case(("audit.spearman",), "within_spearman-ties-long-groups", call_within,
                 lambda: {"rho": ref.within_spearman(x, y, off, 2)}, rtol=1e-12),
            Case(("audit.alignment",), "alignment-constant-rows-f32-lead-atol",
                 call_alignment, oracle_alignment, rtol=1e-12),
            Case(("audit.spearman", "audit.bootstrap_median"), "spearman_audit", call_audit,
                 oracle_audit, rtol=1e-12)]


def shuffle_oracle(x, off, seed, first) -> np.ndarray:
    return np.concatenate([ref.fisher_yates(x[a:b], seed, first + g)
                           for g, (a, b) in enumerate(zip(off[:-1], off[1:]))] or [[]])


def controls_cases():
    r = _rng(73)
    off = offsets_of(r.integers(0, 13, 50))
    x = r.normal(size=off[-1])
    derange = [(n, seed) for n in (2, 3, 10, 1000) for seed in (0, 77)]

    def call_derangement(backend):
        return {f"n{n}.seed{s}": fc.derangement(n, seed=s, backend=backend) for n, s in derange}

    def oracle_derangement():
        return {f"n{n}.seed{s}": np.array(ref.derangement(n, s)) for n, s in derange}

    # audit_controls: 30 trajectories of 20 steps; alignment_controls: 40 requests of m = 5
    toff = np.arange(0, 601, 20)
    a = r.normal(size=600)
    credit = a + r.normal(size=600)
    sc, sr = r.normal(size=(40, 5)), r.normal(size=(40, 5))

    def controlled(v, o, seed):
        """The documented controls of credit v with CSR offsets o."""
        n = len(o) - 1
        return {"signal": v, "shuffle": shuffle_oracle(v, o, seed, 0),
                "random": np.random.default_rng(seed).random(v.shape[0]),
                "uniform": np.zeros_like(v),
                "derangement": v.reshape(n, -1)[ref.derangement(n, seed)].reshape(-1)}

    def call_audit(backend):
        res = fc.audit_controls(credit, a, toff, controls=("shuffle", "random", "uniform",
                                                           "derangement"),
                                resamples=30, seed=3, backend=backend)
        return {f"{k}.{f}": v for k, au in res.items()
                for f, v in (("rho", au.rho), ("replicates", au.median.replicates))}

    def oracle_audit():
        out = {}
        for k, s in controlled(credit, toff, 3).items():
            rho = ref.within_spearman(s, a, toff, 4)
            out |= {f"{k}.rho": rho,
                    f"{k}.replicates": bootstrap_oracle(rho, None, 30, 3, 0.95)["replicates"]}
        return out

    def call_alignment(backend):
        res = fc.alignment_controls(sc, sr, seed=4, backend=backend)
        return {f"{k}.{f}": getattr(al, f) for k, al in res.items() for f in ("cosine", "spearman")}

    def oracle_alignment():
        out = {}
        for k, s in controlled(sc.reshape(-1), np.arange(41) * 5, 4).items():
            rows = [ref.alignment(ci, ri) for ci, ri in zip(s.reshape(40, 5), sr)]
            out |= {f"{k}.{f}": np.array([row[f] for row in rows]) for f in ("cosine", "spearman")}
        return out

    controls = ("audit.spearman", "audit.shuffle", "audit.derangement")
    return [
        Case(("audit.shuffle",), "shuffle_within-empty-groups-stream2-2threads",
             lambda b: {"x": fc.shuffle_within(x, off, seed=11, stream=2, threads=2, backend=b)},
             lambda: {"x": shuffle_oracle(x, off, 11, 2 * 50)}, rtol=0),
        Case(("audit.derangement",), "n2-3-10-1000", call_derangement, oracle_derangement, rtol=0),
        Case(controls + ("audit.bootstrap_median",), "audit_controls", call_audit, oracle_audit,
             rtol=1e-12),
        Case(("audit.alignment", "audit.shuffle", "audit.derangement"), "alignment_controls",
             call_alignment, oracle_alignment, rtol=1e-12),
    ]


def replay_case():
    r = _rng(74)
    f_off, a_off = offsets_of(r.integers(1, 7, 30)), offsets_of(r.integers(1, 7, 30))
    f = (r.random(f_off[-1]) < 0.3).astype(float)
    a = (r.random(a_off[-1]) < 0.3).astype(float)
    f[f_off[0]:f_off[1]] = 0
    a[a_off[0]:a_off[1]] = 0                  # both arms all zero: a resolution
    dense_f, dense_a = r.normal(size=(4, 3)), r.normal(size=(4, 5))
    dense_f[2, 1] = np.nan

    def call(backend):
        out = {}
        for k, (fv, av, fo, ao) in (("ragged", (f, a, f_off, a_off)),
                                    ("dense", (dense_f, dense_a, None, None))):
            ra = fc.replay_advantage(fv, av, factual_offsets=fo, alternative_offsets=ao,
                                     threshold=0.1, backend=backend)
            out |= {f"{k}.{name}": getattr(ra, name)
                    for name in ("advantage", "noise_floor", "critical", "resolution")}
        return out

    def oracle():
        out = {}
        for k, (fv, av) in (("ragged", ([f[f_off[t]:f_off[t + 1]] for t in range(30)],
                                        [a[a_off[t]:a_off[t + 1]] for t in range(30)])),
                            ("dense", (list(dense_f), list(dense_a)))):
            adv, noise, res = ref.replay_advantage(fv, av, 0.05)
            out |= {f"{k}.advantage": adv, f"{k}.noise_floor": noise,
                    f"{k}.critical": np.abs(adv) > 0.1, f"{k}.resolution": res}
        return out

    return Case(("audit.replay_advantage",), "ragged-and-dense-nan", call, oracle, rtol=1e-12)


def fidelity_case():
    r = _rng(75)
    truth = r.integers(0, 3, size=(7, 16)).astype(float)
    truth[:, 0] = 0
    v = truth + r.integers(-1, 2, size=truth.shape) * (r.random(truth.shape) < 0.3)
    iu = np.triu_indices(4, 1)

    def call(backend):
        fid = fc.evaluator_fidelity(v, truth, backend=backend)
        return {"pair_sign": fid.pair_sign, "pair_sign_nonzero": fid.pair_sign_nonzero,
                "edge_sign": fid.edge_sign, "edge_count": fid.edge_count,
                **{f"size{k}.cosine": al.cosine for k, al in enumerate(fid.size_resolved)}}

    def oracle():
        pa = ref.per_game(ref.pair_interactions, v)[:, iu[0], iu[1]]
        pr = ref.per_game(ref.pair_interactions, truth)[:, iu[0], iu[1]]
        same = np.sign(pa) == np.sign(pr)
        hits, count = ref.edge_sign_agreement(v, truth)
        sa, sr = ref.per_game(ref.size_resolved, v), ref.per_game(ref.size_resolved, truth)
        return {"pair_sign": same.mean(), "pair_sign_nonzero": same[pr != 0].mean(),
                "edge_sign": hits / count, "edge_count": count,
                **{f"size{k}.cosine": np.array([ref.alignment(sa[g, :, k], sr[g, :, k])["cosine"]
                                                for g in range(7)]) for k in range(4)}}

    return Case(("tables.gather", "tables.size_resolved", "audit.alignment"),
                "evaluator_fidelity", call, oracle, rtol=1e-12)


def spearman_difference_case():
    g = _rng(91)
    z = np.round(g.normal(size=57), 1)
    x, y = z + g.normal(size=57), np.round(z + 2 * g.normal(size=57))
    x[5] = np.nan

    def call(backend):
        ci = fc.spearman_difference(x, y, z, resamples=40, seed=2**64 - 1, threads=2,
                                    backend=backend)
        return {"replicates": ci.replicates}

    def oracle():
        keep = ~np.isnan(x)
        return {"replicates": ref.bootstrap_spearman_diff(x[keep], y[keep], z[keep], 40,
                                                          2**64 - 1)}

    return Case(("audit.bootstrap_spearman_diff",), "ties-and-nan", call, oracle, rtol=1e-12)


def null_worlds_case():
    from fastcredit.audit import null
    g = _rng(92)
    audit = g.integers(-2, 4, size=(30, 16)).astype(float)
    audit[:, 0] = 0
    audit[3] = 0.0
    train = audit + 0.5 * g.normal(size=audit.shape) * audit.std(axis=1, keepdims=True)

    def call(backend):
        return {"worlds": null.correlated_error_null(train, audit, worlds=12, seed=5,
                                                     threads=2, backend=backend).worlds}

    def oracle():
        eh, ec, ph, pc, cos, strength = ref.correlated_error_null(train, audit, 12, 5, 1e-9)
        ok = ~np.isnan(cos[0])
        from scipy.stats import spearmanr
        return {"worlds": np.array([[eh[w].sum() / ec.sum(), ph[w].sum() / pc[w].sum(),
                                     np.median(cos[w, ok]),
                                     spearmanr(strength, 1 - eh[w] / ec)[0],
                                     spearmanr(strength[ok], np.round(1 - cos[w, ok], 12))[0]]
                                    for w in range(12)])}

    return Case(("tables.semivalue", "tables.gather", "audit.null_worlds"), "m4-constant-row",
                call, oracle, rtol=1e-12)


def audit_cases():
    return (bootstrap_cases() + [contrastive_case()] + spearman_cases() + controls_cases()
            + [replay_case(), fidelity_case(), spearman_difference_case(), null_worlds_case()])


# --- synthetic ----------------------------------------------------------------

def synthetic_case():
    """sponsored_search against the per-request recipe, bit for bit: the
    default shape near the end of the index range, every rewrite (m = 16)
    with long lists over a tiny catalogue, one ad, the realistic preset and
    expected values under strong pCTR noise."""
    shapes = {"default-start-2e60": dict(n_requests=40, seed=5, start=2**60 - 40),
              "m16-k33-catalogue10": dict(n_requests=30, m=16, k=33, seed=2**64 - 1, topics=3,
                                          catalogue=10, empty=0.2, short=0.5),
              "m1-k1-one-ad": dict(n_requests=50, m=1, k=1, seed=0, topics=1, catalogue=1,
                                   empty=0.3, short=0.3),
              "realistic": dict(n_requests=40, seed=7, preset="realistic"),
              "expected-noise-2.5": dict(n_requests=30, m=3, k=9, seed=3, noise=2.5,
                                         value_model="expected", bid_scale=0.01)}
    fields = ("offsets", "ad_id", "score", "value", "prerank")

    def call(backend):
        out = {}
        for name, kw in shapes.items():
            pools = fc.synthetic.sponsored_search(**kw, threads=2, backend=backend)
            out |= {f"{name}.{f}": getattr(pools, f) for f in fields}
        return out

    def oracle():
        out = {}
        for name, kw in shapes.items():
            opts = (dict(start=0) | fc.synthetic.search_preset(kw.get("preset", "default")).generator
                    | kw)
            bid, ctr = ref.sponsored_search_catalogue(opts["seed"], opts["catalogue"],
                                                      opts["topics"], opts["bid_scale"])
            lengths, rows = [], []
            for q in range(opts["start"], opts["start"] + opts["n_requests"]):
                n, inst = ref.sponsored_search_request(
                    opts["seed"], q, opts["m"], opts["k"], opts["empty"], opts["short"],
                    opts["topics"], opts["catalogue"] // opts["topics"], bid, ctr,
                    opts["noise"], opts["value_model"])
                lengths += n
                rows += inst
            cols = list(zip(*rows))
            out |= {f"{name}.offsets": np.concatenate([[0], np.cumsum(lengths)]),
                    f"{name}.ad_id": np.array(cols[0], dtype=np.int64),
                    **{f"{name}.{f}": np.array(c, dtype=np.float64)
                       for f, c in zip(fields[2:], cols[1:])}}
        return out

    return Case(("synthetic.sponsored_search",), "five-shapes", call, oracle, rtol=0)


def replay_repeats_case():
    g = _rng(93)
    v = g.normal(size=(37, 16)) * 3.0
    v[4] = np.inf          # non-finite values propagate; the noise stays the same bits
    v[5, 3] = np.nan

    def call(backend):
        return {"y": fc.synthetic.replay_repeats(v, repeats=3, noise=0.4, seed=2**64 - 1,
                                                 first=11, threads=2, backend=backend)}

    def oracle():
        return {"y": ref.replay_repeats(v, 3, 0.4, 2**64 - 1, first=11)}

    return Case(("synthetic.replay_repeats",), "m4-nonfinite-threads", call, oracle, rtol=0)


# --- approximators ---------------------------------------------------------------
# Each method's draw and fold kernels, against tests/reference.py's run from
# the definitions.

def approximator_case(method, index="SV"):
    g = _rng(94)
    v = g.normal(size=(2, 3, 1 << 7)) + np.bitwise_count(np.arange(1 << 7)) ** 1.5
    v32 = v[0].astype(np.float32)

    def call(backend):
        out = {}
        for name, table in (("f64", v), ("f32", v32)):
            est = fc.approximate(table, method=method, index=index, budget=90, seed=2**64 - 5,
                                 threads=2, backend=backend)
            out |= {f"{name}.values": est.values[1], f"{name}.stderr": est.stderr[1],
                    f"{name}.base": est.values[0], f"{name}.n_evals": est.n_evals}
        return out

    def oracle():
        out = {}
        for name, table in (("f64", v), ("f32", v32.astype(np.float64))):
            flat = table.reshape(-1, 1 << 7)
            runs = [ref.approx_run(t, method, 90, 2**64 - 5, game=i, index=index)
                    for i, t in enumerate(flat)]
            lead = table.shape[:-1]
            out |= {f"{name}.values": np.array([r["values"] for r in runs]).reshape(lead + (7,)),
                    f"{name}.stderr": np.array([r["stderr"] for r in runs]).reshape(lead + (7,)),
                    f"{name}.base": np.array([r["base"] for r in runs]).reshape(lead + (1,)),
                    f"{name}.n_evals": np.array([r["n_evals"] for r in runs]).reshape(lead)}
        return out

    # svarm runs on svarmiq's kernels (SVARM-IQ of order 1)
    kernel = _METHODS[method][0].kernel
    return Case((kernel,), f"{method}-{index}-batch-f32-threads", call, oracle)


def approximator_cases():
    return [approximator_case("svarm"), approximator_case("svarm", "BV"),
                  approximator_case("stratified"), approximator_case("owen")]


def estimator_run_case(method, index, order, pairing, m, budget, seed, run, rtol):
    """One run of a sampling method on two tables (m players, each
    coalition value a normal draw, from the generator keyed by the seed's
    low byte, plus |S|**1.5) and one float32 table,
    against ``run``, tests/reference.py's run of the same draws from the
    definitions."""
    g = _rng(seed & 0xFF)
    v = g.normal(size=(2, 1 << m)) + np.bitwise_count(np.arange(1 << m)) ** 1.5
    v32 = v[0].astype(np.float32)

    def call(backend):
        out = {}
        for name, table in (("f64", v), ("f32", v32)):
            est = fc.approximate(table, method=method, index=index, order=order, budget=budget,
                                 seed=seed, pairing=pairing, threads=2, backend=backend)
            out |= {f"{name}.values": np.concatenate(est.values, axis=-1),
                    f"{name}.stderr": np.concatenate(est.stderr, axis=-1),
                    f"{name}.n_evals": est.n_evals}
        return out

    def oracle():
        out = {}
        for name, table in (("f64", v), ("f32", v32.astype(np.float64))):
            flat = table.reshape(-1, 1 << m)
            runs = [run(t, method, index, order, budget, seed, game=i, pairing=pairing)
                    for i, t in enumerate(flat)]
            lead = table.shape[:-1]
            out |= {f"{name}.{key}": np.array([np.hstack(r[key]) for r in runs]
                                              ).reshape(lead + (-1,))
                    for key in ("values", "stderr")}
            out[f"{name}.n_evals"] = np.array([r["n_evals"] for r in runs]).reshape(lead)
        return out

    return Case((f"approximators.{method}",), f"{index}-order{order}-pairing{pairing:d}",
                call, oracle, rtol=rtol)


def montecarlo_iq_cases():
    """SHAP-IQ / SVARM-IQ against the definitions (m = 6, budget 45: the
    border sizes enumerated, the others drawn)."""
    return [estimator_run_case(method, index, order, pairing, 6, 45, 2**64 - 11,
                               ref.montecarlo_iq_run, 1e-9)
            for method, index, order, pairing in (("shapiq", "STII", 3, True),
                                                  ("shapiq", "k-SII", 2, False),
                                                  ("svarmiq", "k-SII", 2, True),
                                                  ("svarmiq", "FSII", 2, False))]


def regression_cases():
    """The regression methods against a dense solve from the definitions
    (m = 7, budget 90: a well-posed sample; the oracle's LU and the kernels'
    Cholesky of the 1e8-weighted normal equations agree to about 1e-6)."""
    return [estimator_run_case(method, index, order, pairing, 7, 90, 2**64 - 7,
                               ref.regression_run, 2e-5)
            for method, index, order, pairing in (
                ("kernelshap", "SV", 1, False),
                ("kernelshap", "SV", 1, True),
                ("kernelshapiq", "k-SII", 2, False),
                ("kernelshapiq", "SII", 2, True),
                ("inconsistent_kernelshapiq", "k-SII", 2, False),
                ("kaddshap", "kADD-SHAP", 2, True),
                ("regression_fsii", "FSII", 2, False),
                ("regression_fbii", "FBII", 2, True))]


def random_trees(g, n_trees, m, max_leaves):
    """Trees in LightGBM's layout (fastcredit.approximators.proxy.ensemble_fourier):
    grown by splitting a random leaf into itself (left) and a new leaf, on a
    feature not yet on its path, the new internal node numbered after its
    parent; some trees a single leaf."""
    feature, left, right, values, node_start, leaf_start = [], [], [], [], [0], [0]
    for _ in range(n_trees):
        n_leaves = int(g.integers(1, max_leaves + 1))
        lf, rt, ft = [], [], []
        parent_of_leaf, path_of_leaf = [None], [()]
        for j in range(n_leaves - 1):
            leaf = int(g.integers(0, len(parent_of_leaf)))
            free = [f for f in range(m) if f not in path_of_leaf[leaf]]
            if not free:
                break
            f = int(g.choice(free))
            parent = parent_of_leaf[leaf]
            if parent is not None:
                node, side = parent
                (lf if side == 0 else rt)[node] = j
            lf.append(~leaf)
            rt.append(~len(parent_of_leaf))
            ft.append(f)
            path = path_of_leaf[leaf] + (f,)
            parent_of_leaf[leaf], path_of_leaf[leaf] = (j, 0), path
            parent_of_leaf.append((j, 1))
            path_of_leaf.append(path)
        feature += ft
        left += lf
        right += rt
        values += list(g.normal(size=len(parent_of_leaf)))
        node_start.append(node_start[-1] + len(ft))
        leaf_start.append(leaf_start[-1] + len(parent_of_leaf))
    return tuple(np.array(x, dtype=np.float64 if x is values else np.int64)
                 for x in (feature, left, right, node_start, values, leaf_start))


def proxyspex_case():
    """ProxySPEX's trees' Fourier coefficients (the tree_fourier kernel)
    against shapiq's recursion over the same trees (tests/reference.py), 60
    trees of up to 16 leaves on 9 players; sorted by frequency (the kernel
    keeps the order first met)."""
    from fastcredit.approximators.proxy import ensemble_fourier
    trees = random_trees(_rng(95), 60, 9, 16)

    def call(backend):
        freqs, coefs = ensemble_fourier(*trees, 9, backend)
        order = np.argsort(freqs)
        return {"freqs": freqs[order], "coefs": coefs[order]}

    def oracle():
        want = ref.tree_fourier(*trees)
        freqs = np.array(sorted(want), dtype=np.uint64)
        return {"freqs": freqs, "coefs": np.array([want[int(f)] for f in freqs])}

    return Case(("approximators.proxyspex",), "60-trees-m9", call, oracle, rtol=1e-12)


def spex_case():
    """SPEX on a batch of two tables of m = 11 players (six Fourier
    coefficients plus noise of sd 0.05, so that some bins are multitons and
    some need the Chase candidates), budget 1,300 of the 2,048 coalitions
    (t = 5, b = 4), FBII of
    order 2, against tests/reference.py's sparse_transform peeling in complex
    arithmetic with a bounded-distance decoder, and FBII of the recovered
    game from its definition (the least squares over all coalitions); the
    oracle's transforms and sums run in another order (rtol 1e-9)."""
    m, budget, seed = 11, 1300, 2**64 - 3
    masks = np.arange(1 << m)
    v = np.zeros((2, 1 << m))
    for k, c in zip([0, 0b1, 0b110, 0b1000100000, 0b10, 0b11100], [0.5, 1.0, -0.7, 0.4, 0.3, 0.2]):
        v += np.where(np.bitwise_count(masks & k) & 1, -c, c)
    v += 0.05 * _rng(5).normal(size=v.shape)

    def call(backend):
        est = fc.approximate(v, index="FBII", order=2, method="spex", budget=budget, seed=seed,
                             threads=2, backend=backend)
        return {"values": np.concatenate(est.values, axis=-1), "n_evals": est.n_evals}

    def oracle():
        runs = [ref.spex_run(table, budget, seed, game=g) for g, table in enumerate(v)]
        return {"values": np.array([np.concatenate(ref.fbii(r["table"], 2)) for r in runs]),
                "n_evals": np.array([r["n_evals"] for r in runs])}

    return Case(("approximators.spex",), "FBII-order2-batch", call, oracle, rtol=1e-9)


CASES = table_cases() + interactions_cases() + sampling_cases() + auction_cases() + shaping_cases() + trees_cases() \
    + audit_cases() + [synthetic_case(), replay_repeats_case()] + approximator_cases() \
    + regression_cases() + montecarlo_iq_cases() + [proxyspex_case(), spex_case()]


#: kernels whose C twin chooses paths by processor (fastcredit._c.paths): their
#: cases run on each of conftest.PATHS, so that every path meets the oracle
#: and the Numba twin on any machine
BY_PROCESSOR = {"auction.replay", "shaping.project", "synthetic.sponsored_search"}
RUNS = [pytest.param(case, path, id=case.id if path == PATHS[0] else f"{case.id}-{path}")
        for case in CASES
        for path in (PATHS if BY_PROCESSOR.intersection(case.kernels) else PATHS[:1])]


# --- the harness --------------------------------------------------------------

def strictness(case):
    """The loosest guarantee among the case's kernels."""
    tols = [STRICTNESS[k] for k in case.kernels if STRICTNESS[k] != BITS]
    return max(tols) if tols else BITS


def assert_same_bits(a, b, msg):
    assert a.dtype == b.dtype and a.shape == b.shape, msg
    if a.dtype.kind in "fc":
        nan = np.isnan(a)
        np.testing.assert_array_equal(nan, np.isnan(b), err_msg=f"{msg}: NaN positions")
        # the bits of every number (signed zeros too); NaN payloads are no contract
        a, b = np.where(nan, 0, a), np.where(nan, 0, b)
        a, b = np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8)
    np.testing.assert_array_equal(a, b, err_msg=msg)


def scale_of(x):
    finite = np.abs(x[np.isfinite(x)]) if x.dtype.kind in "fc" else np.abs(x)
    return max(1.0, float(finite.max(initial=0.0)))


def assert_close(got, want, rtol, msg):
    assert got.shape == want.shape, f"{msg}: shape {got.shape} != {want.shape}"
    if rtol == 0 or want.dtype.kind in "biu" or got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=msg)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale_of(want),
                                   err_msg=msg)


@pytest.fixture
def resolved(monkeypatch):
    """The kernels the public functions resolve while the test runs."""
    seen = []
    real = _backend.resolve

    def record(kernel, backend):
        seen.append(kernel)
        return real(kernel, backend)

    # fastcredit imports its families on first use: import every family that
    # has a kernel, so that each module calling resolve is patched
    for family in {key.split(".")[0] for key in _backend.FASTEST}:
        importlib.import_module(f"fastcredit.{family}")
    for name, module in list(sys.modules.items()):
        if name.startswith("fastcredit.") and getattr(module, "resolve", None) is real:
            monkeypatch.setattr(module, "resolve", record)
    return seen


@functools.cache
def oracle_of(case):
    """case.oracle() as arrays, once for all the paths a case runs on."""
    return {k: np.asarray(v) for k, v in case.oracle().items()}


@pytest.mark.parametrize("case, path", RUNS, indirect=["path"])
def test_twins_agree(case, path, resolved):
    want = oracle_of(case)
    got = {}
    for backend in BACKENDS:
        got[backend] = {k: np.asarray(v) for k, v in case.call(backend).items()}
        assert got[backend].keys() == want.keys()
        for k in want:
            assert_close(got[backend][k], want[k], case.rtol,
                         f"{case.id} {k} on {backend} against tests/reference.py")
    assert set(resolved) == set(case.kernels), "the case runs other kernels than it declares"
    if len(got) == 2:
        strict = strictness(case)
        for k in want:
            a, b = got["c"][k], got["numba"][k]
            msg = f"{case.id} {k}: C against Numba"
            if strict == BITS:
                assert_same_bits(a, b, msg)
            else:
                np.testing.assert_allclose(a, b, rtol=strict, atol=strict * scale_of(a),
                                           err_msg=msg)


def test_every_kernel_has_a_case_and_a_strictness():
    assert STRICTNESS.keys() == _backend.FASTEST.keys()
    covered = {k for case in CASES for k in case.kernels}
    assert not set(_backend.FASTEST) - covered, "kernels without a case in CASES"
    assert len({case.id for case in CASES}) == len(CASES), "case ids must be unique"
