"""Auction replay on every path the C kernels choose by processor (the `path`
fixture of conftest.py: "best" and "scalar" on any machine), against the
oracle of tests/reference.py, on the edges that let mutants of
csrc/auction.c and fastcredit/_numba/_auction_*.py live (issue 26): an ad
scoring exactly the reserve, prices below zero, the reserve paid by the last
winner of a coalition that fills its slots. Also the switch itself, and the
Numba kernels lowered for a processor without AVX-512."""
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcredit as fc
import reference as ref

from conftest import BACKENDS, PATHS, on_path

HAS_C = "c" in BACKENDS


def _pools(actions):
    """CSR pools of one request from its per-action lists of (ad, score,
    value, prerank)."""
    offsets = np.concatenate([[0], np.cumsum([len(a) for a in actions])])
    cols = np.array([x for a in actions for x in a], dtype=float).reshape(-1, 4)
    return fc.Pools(offsets, cols[:, 0].astype(np.int64), cols[:, 1], cols[:, 2],
                    m=len(actions), prerank=cols[:, 3])


def _expect(actions, slots, reserve, capacity, pricing, mode):
    """The oracle's table, winners' ads and earnings of one request."""
    want, winners = ref.auction_request(actions, slots, reserve, capacity, pricing, mode)
    ads = np.full((len(winners), slots), -1)
    earn = np.zeros((len(winners), slots))
    for s, win in enumerate(winners):
        for q, (ad, e) in enumerate(win):
            ads[s, q], earn[s, q] = ad, e
    return want, ads, earn


def _check(actions, slots, reserve, capacity, pricing, mode, backends, msg="", expect=None):
    """The table of auction_replay, and auction_winners' table, ads and
    earnings, of each backend, equal to the oracle's (`expect`, when given)."""
    pools = _pools(actions)
    want, ads, earn = expect or _expect(actions, slots, reserve, capacity, pricing, mode)
    for backend in backends:
        where = (f"{msg} {backend} slots={slots} reserve={reserve} capacity={capacity} "
                 f"{pricing} {mode}")
        got = fc.auction_replay(pools, slots, reserve, capacity, pricing, mode, backend=backend)
        np.testing.assert_array_equal(got[0], want, err_msg="table " + where)
        win = fc.auction_winners(pools, slots, reserve, capacity, pricing, mode, backend=backend)
        np.testing.assert_array_equal(win.table[0], want, err_msg="winners.table " + where)
        np.testing.assert_array_equal(win.ad_id[0], ads, err_msg="winners.ad_id " + where)
        np.testing.assert_array_equal(win.earnings[0], earn, err_msg="winners.earnings " + where)


# --- the switch ------------------------------------------------------------------

@pytest.mark.skipif(not HAS_C, reason="C backend not built")
def test_switch_turns_the_processor_paths_off_and_back():
    from fastcredit._c import paths
    best = paths.taken()
    assert set(best) <= set(paths.PATHS)
    with paths.only():
        assert paths.taken() == []
        with paths.only(*paths.PATHS):
            assert paths.taken() == best
        assert paths.taken() == []
    assert paths.taken() == best
    with pytest.raises(KeyError):
        with paths.only("sse9"):
            pass
    assert paths.taken() == best


def _built_by_gcc(at_least):
    """Whether the C extension was compiled by GCC >= at_least (the compiler
    notes in the shared object)."""
    from fastcredit import _cffi
    blob = pathlib.Path(_cffi.__file__).read_bytes()
    gcc = re.search(rb"GCC: \([^)]*\) (\d+)\.", blob)
    return b"clang version" not in blob and gcc is not None and int(gcc.group(1)) >= at_least


@pytest.mark.skipif(not HAS_C, reason="C backend not built")
def test_avx512_path_is_taken_where_the_processor_has_it():
    """An x86-64-v4 processor (AVX-512 F, BW, CD, DQ, VL) under a GCC >= 12
    build takes the AVX-512 path unless switched off: a switch that left it
    off would leave that path untested and slow on every machine."""
    from fastcredit._c import paths
    try:
        flags = set(re.search(r"^flags\s*:(.*)$", pathlib.Path("/proc/cpuinfo").read_text(),
                              re.M).group(1).split())
    except (OSError, AttributeError):
        pytest.skip("no /proc/cpuinfo flags")
    v4 = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= flags
    if not (v4 and os.uname().machine == "x86_64" and _built_by_gcc(12)):
        pytest.skip("no x86-64-v4 processor, or not a GCC >= 12 build")
    assert paths.taken() == ["avx512"]


@pytest.mark.skipif(not HAS_C, reason="C backend not built")
def test_every_path_gives_the_same_bits_on_the_benchmark_workload():
    """The sponsored-search workload of the benchmark (5 actions, lists of
    up to 20 items), slots 1 .. 9: the scalar path and the processor's best
    path give the same tables and winners, bit for bit."""
    pools = fc.synthetic.sponsored_search(400, seed=8)
    for mode in ("filter", "rerun"):
        for pricing in ("first", "gsp"):
            for slots in (1, 4, 8, 9):
                runs = {}
                for path in PATHS:
                    with on_path(path):
                        table = fc.auction_replay(pools, slots, 0.05, pricing=pricing, mode=mode,
                                                  backend="c")
                        win = fc.auction_winners(pools, slots, 0.05, pricing=pricing, mode=mode,
                                                 backend="c")
                    runs[path] = [table, win.table, win.ad_id, win.earnings]
                for a, b in zip(runs["best"], runs["scalar"]):
                    np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64),
                                                  err_msg=f"{mode}/{pricing} slots={slots}")


# --- mutants of issue 26 ------------------------------------------------------------

# Reserve 1.0; action 0 has ads 1 (score 2), 2 (score 1 = the reserve) and 3
# (below it); action 1 has ad 2 again (score 1), ad 4 (score 1) and ad 5
# (score 3). Capacity ranks by prerank, which favours the ads at the reserve:
# with capacity 1 to 3 the kept ads include them.
_AT_RESERVE = [[(1, 2.0, 10.0, 3.0), (2, 1.0, 20.0, 5.0), (3, 0.5, 40.0, 0.0)],
               [(2, 1.0, 25.0, 5.0), (4, 1.0, 80.0, 4.0), (5, 3.0, 160.0, 1.0)]]


@pytest.mark.parametrize("capacity", [None, 1, 2, 3])
@pytest.mark.parametrize("mode", ["filter", "rerun"])
@pytest.mark.parametrize("pricing", ["first", "gsp"])
def test_ads_scoring_exactly_the_reserve_win(path, backend, capacity, mode, pricing):
    """docs/design.md drops ads with score < reserve, so an ad scoring exactly
    the reserve stays (tests/reference.py keeps score >= reserve). Kills the
    mutants `score < reserve` changed to `<=` in csrc/auction.c's rank_pool
    (its capacity branch: rerun and filter with capacity; its branch without
    capacity: auction_winners in rerun mode) and in the Numba twin
    (fastcredit/_numba/_auction_merged.py: _capped_pool and _rank_pool), and the
    floors of the per-action cut (select_scalar / extract_load, _select /
    _list_lanes) made strict."""
    for slots in (1, 2, 3):
        _check(_AT_RESERVE, slots, 1.0, capacity, pricing, mode, [backend], msg=path)
    _, ads, _ = _expect(_AT_RESERVE, 3, 1.0, capacity, pricing, mode)
    assert np.isin(ads, [2, 4]).any()  # ads at the reserve win some coalitions


# One action whose ads score -1 and -3 (values 7 and 9).
_NEGATIVE = [[(1, -1.0, 7.0, 0.0), (2, -3.0, 9.0, 0.0)]]


@pytest.mark.parametrize("capacity", [None, 2])
@pytest.mark.parametrize("mode", ["filter", "rerun"])
def test_gsp_prices_below_zero_by_hand(path, backend, capacity, mode):
    """Reserve -5, slots 2: ad 1 pays the next score, -3, and ad 2, with no ad
    after it, the reserve, -5: y = -8. Kills the mutants of csrc/auction.c
    where the price of "no ad after" is 0.0 instead of -INFINITY: filter/GSP's
    `after` prices (ad 1 would pay min(-1, 0) = -1) and the tail's default
    (ad 2 would pay min(-3, 0) = -3) in ranked_union, the tail of ranked_full
    (filter with capacity) and of rerun_table (rerun with capacity, winners),
    and the same spots of fastcredit/_numba/_auction_union.py
    (replay_union) and _auction_merged.py (_ranked_full, _rerun_table)."""
    pools = _pools(_NEGATIVE)
    y = fc.auction_replay(pools, 2, -5.0, capacity, "gsp", mode, backend=backend)
    assert y.tolist() == [[0.0, -8.0]]
    win = fc.auction_winners(pools, 2, -5.0, capacity, "gsp", mode, backend=backend)
    assert win.ad_id.tolist() == [[[-1, -1], [1, 2]]]
    assert win.earnings.tolist() == [[[0.0, 0.0], [-3.0, -5.0]]]
    # with no reserve the last winner pays max(-inf, nothing) = -inf
    y = fc.auction_replay(pools, 2, -np.inf, capacity, "gsp", mode, backend=backend)
    assert y.tolist() == [[0.0, -np.inf]]
    assert fc.auction_replay(pools, 1, -np.inf, capacity, "gsp", mode,
                             backend=backend).tolist() == [[0.0, -3.0]]


@pytest.mark.parametrize("reserve", [-np.inf, -5.0, -2.5, -2.0])
@pytest.mark.parametrize("capacity", [None, 1, 3])
@pytest.mark.parametrize("mode", ["filter", "rerun"])
def test_gsp_prices_below_zero_match_oracle(path, backend, reserve, capacity, mode):
    """Every score below zero, reserves below all, between and equal to
    them, or none (-inf): ads that no action keeps between and after the
    kept ones set the prices of filter mode. The mutants of
    test_gsp_prices_below_zero_by_hand, on requests of 1 .. 3 actions."""
    rng = np.random.default_rng(26)
    for _ in range(12):
        m = int(rng.integers(1, 4))
        actions = [[(int(rng.integers(0, 7)), float(rng.choice([-0.5, -1.0, -2.0, -2.5, -4.0])),
                     float(rng.integers(1, 5)), float(rng.integers(0, 3)))
                    for _ in range(rng.integers(0, 6))] for _ in range(m)]
        for slots in (1, 2, 3):
            _check(actions, slots, reserve, capacity, "gsp", mode, [backend], msg=path)


# Reserve 1; action 0 lists scores 3 and 2, action 1 scores 2.5 and 0.5.
_FULL_SLOTS = [[(1, 3.0, 1.0, 0.0), (2, 2.0, 1.0, 0.0)], [(3, 2.5, 1.0, 0.0), (4, 0.5, 1.0, 0.0)]]


def test_rerun_gsp_last_winner_of_full_slots_pays_the_reserve(path, backend):
    """Rerun/GSP, slots 2, reserve 1: coalition {0} has exactly 2 ads (scores
    3, 2): they pay 2 and the reserve 1, y = 3; {1} has one ad above the
    reserve, which pays it, y = 1; {0, 1} has three (3, 2.5, 2): the second
    winner pays the third's score, y = 2.5 + 2. Kills the mutant of
    csrc/auction.c's scalar coalition loop `cnt[S] <= slots` changed to `<`
    (on AVX-512 machines the scalar loop ran only for auction_winners, never
    lagged, or past 32,767 entries: the scalar path runs it), and the same
    `<=` made `<` in its 16-bit-lane vector loop (_mm512_cmple_epi16_mask)
    and in fastcredit/_numba/_auction_sums.py's coalition_sums."""
    pools = _pools(_FULL_SLOTS)
    y = fc.auction_replay(pools, 2, 1.0, pricing="gsp", mode="rerun", backend=backend)
    assert y.tolist() == [[0.0, 3.0, 1.0, 4.5]]
    for m in (1, 2, 6):  # m = 6: two blocks of 32 coalitions
        actions = (_FULL_SLOTS * 3)[:m]
        for slots in (1, 2, 3):
            _check(actions, slots, 1.0, None, "gsp", "rerun", [backend], msg=path)


def _request_lists():
    """Requests of 1 .. 6 actions over few ads and scores, negative ones
    among them, so that ads repeat, scores tie and equal the reserves."""
    instance = st.tuples(st.integers(0, 6), st.sampled_from([-2.0, -1.0, 0.0, 1.0, 1.5, 3.0]),
                         st.sampled_from([0.0, 1.0, 2.5]), st.sampled_from([0.0, 1.0, 2.0]))
    return st.integers(1, 6).flatmap(
        lambda m: st.lists(st.lists(instance, max_size=8), min_size=m, max_size=m))


@settings(max_examples=60, deadline=None)
@given(actions=_request_lists(), slots=st.integers(1, 4),
       reserve=st.sampled_from([-np.inf, -2.0, -1.0, 0.0, 1.5]),
       capacity=st.sampled_from([None, 1, 2, 4]), pricing=st.sampled_from(["first", "gsp"]),
       mode=st.sampled_from(["filter", "rerun"]))
def test_every_path_matches_oracle_property(actions, slots, reserve, capacity, pricing, mode):
    """Tables and winners of every backend on every path (conftest.PATHS),
    against the oracle: reserves equal to scores and below zero, capacity."""
    expect = _expect(actions, slots, reserve, capacity, pricing, mode)
    for path in PATHS:
        with on_path(path):
            _check(actions, slots, reserve, capacity, pricing, mode, BACKENDS, path, expect)


# --- the Numba kernels lowered for another processor ----------------------------------

_LOWERED = r"""
import json, sys
import numpy as np
import fastcredit as fc

out = {}
pools = fc.synthetic.sponsored_search(300, seed=3, backend="numba")
for f in ("offsets", "ad_id", "score", "value", "prerank"):
    out[f"synthetic.{f}"] = getattr(pools, f)
for mode in ("filter", "rerun"):
    for pricing in ("first", "gsp"):
        for slots in (2, 9):
            key = f"auction.{mode}.{pricing}.{slots}"
            out[key] = fc.auction_replay(pools, slots, pricing=pricing, mode=mode, backend="numba")
            win = fc.auction_winners(pools, slots, pricing=pricing, mode=mode, backend="numba")
            out[key + ".ad_id"], out[key + ".earnings"] = win.ad_id, win.earnings
u = np.random.default_rng(5).normal(scale=2.0, size=(203, 6))
out["shaping.project"] = fc.project_zero_sum(u, 0.5, backend="numba")
np.savez(sys.argv[1], **out)
print(json.dumps(__import__("numba").config.CPU_NAME))
"""


@pytest.mark.skipif(not HAS_C or sys.platform != "linux" or os.uname().machine != "x86_64",
                    reason="C backend and x86-64 Linux needed")
def test_numba_lowered_without_avx512_gives_cs_bits(tmp_path):
    """The Numba kernels choose no path by processor, but LLVM lowers their
    8-lane vectors, masked loads and gathers for the processor it compiles
    for: here for an AVX2 one (NUMBA_CPU_NAME=haswell, its own features
    only), whatever this machine has, in a child process. Its synthetic
    pools, auction tables and winners and projections are C's on the scalar
    path, bit for bit. (The first run compiles them for that processor, a
    minute or two; Numba's cache keeps them apart from the host's.)"""
    result = tmp_path / "lowered.npz"
    env = dict(os.environ, NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES="")
    run = subprocess.run([sys.executable, "-c", _LOWERED, str(result)], env=env,
                         capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.splitlines()[-1]) == "haswell"
    got = np.load(result)
    with on_path("scalar"):
        pools = fc.synthetic.sponsored_search(300, seed=3, backend="c")
        want = {f"synthetic.{f}": getattr(pools, f)
                for f in ("offsets", "ad_id", "score", "value", "prerank")}
        for mode in ("filter", "rerun"):
            for pricing in ("first", "gsp"):
                for slots in (2, 9):
                    key = f"auction.{mode}.{pricing}.{slots}"
                    want[key] = fc.auction_replay(pools, slots, pricing=pricing, mode=mode,
                                                  backend="c")
                    win = fc.auction_winners(pools, slots, pricing=pricing, mode=mode,
                                             backend="c")
                    want[key + ".ad_id"], want[key + ".earnings"] = win.ad_id, win.earnings
        u = np.random.default_rng(5).normal(scale=2.0, size=(203, 6))
        want["shaping.project"] = fc.project_zero_sum(u, 0.5, backend="c")
    assert set(got.files) == set(want)
    for key, w in want.items():
        np.testing.assert_array_equal(got[key].view(np.int64), np.asarray(w).view(np.int64),
                                      err_msg=key)
