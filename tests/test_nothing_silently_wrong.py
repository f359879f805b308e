"""Regressions of defects a hostile review found: each test fails on the code
before its fix (overlapping out=, infinite tables, seeds past 2**63, calls that
raise after changing state, unchecked options on empty input, unclear errors,
allocations that cannot fit)."""
import re

import numpy as np
import pytest
from numba import njit

import fastcredit as fc
from fastcredit import _validation

import reference as ref

TABLE_KERNELS = ["shapley", "banzhaf", "singleton", "leave_one_out", "size_resolved",
                 "pair_interactions", "moebius", "from_moebius"]


@pytest.mark.parametrize("name", TABLE_KERNELS)
def test_out_overlapping_the_table_is_refused(name, backend):
    buf = np.random.default_rng(0).random(48)
    v = buf[:40].reshape(5, 8)
    shape = getattr(fc, name)(v.copy(), backend=backend).shape
    n = int(np.prod(shape))
    out = buf[1:1 + n].reshape(shape) if n + 1 <= 48 else np.empty(shape)
    if n + 1 <= 48:
        arg = "a" if name == "from_moebius" else "v"
        with pytest.raises(ValueError, match=f"out must not overlap the input {arg}$"):
            getattr(fc, name)(v, out=out, backend=backend)
    # a disjoint out of the same buffer is fine and gives the right answer
    big = np.zeros(40 + n)
    big[:40] = buf[:40]
    res = getattr(fc, name)(big[:40].reshape(5, 8), out=big[40:].reshape(shape),
                            backend=backend)
    assert np.array_equal(res, getattr(fc, name)(buf[:40].reshape(5, 8), backend=backend))


def test_out_overlapping_shaping_inputs_is_refused(backend):
    buf = np.random.default_rng(1).normal(size=40)
    with pytest.raises(ValueError, match="out must not overlap the input u"):
        fc.project_zero_sum(buf[:20].reshape(4, 5), 1.0, out=buf[5:25].reshape(4, 5),
                            backend=backend)
    with pytest.raises(ValueError, match="out must not overlap the input credit"):
        fc.shape_advantages(np.zeros(4), buf[:20].reshape(4, 5), out=buf[10:30].reshape(4, 5),
                            backend=backend)
    mem = np.zeros(16)
    with pytest.raises(ValueError, match="out must not overlap the input base"):
        fc.token_advantages(mem[:2], np.zeros((2, 1)), np.zeros((2, 4), dtype=np.int64),
                            out=mem.view(np.float32)[:8].reshape(2, 4), backend=backend)


@pytest.mark.parametrize("rule, weights", [
    ("shapley", lambda m: fc.shapley_weights(m)),
    ("banzhaf", lambda m: fc.banzhaf_weights(m)),
    ("semivalue", lambda m: np.linspace(0.1, 0.9, m))])
def test_infinite_tables_give_the_definition(rule, weights, backend):
    rng = np.random.default_rng(2)
    for m in (2, 3, 5, 7, 17):
        v = rng.normal(size=(3, 1 << m))
        v[0, rng.integers(1 << m)] = np.inf
        v[1, rng.integers(1 << m)] = -np.inf
        v[2, [rng.integers(1 << m), rng.integers(1 << m)]] = [np.inf, -np.inf]
        w = weights(m)
        got = (fc.semivalue(v, w, backend=backend) if rule == "semivalue"
               else getattr(fc, rule)(v, backend=backend))
        if m <= 7:
            want = np.array([ref.semivalue(g, w) for g in v])
            assert np.array_equal(np.isnan(got), np.isnan(want))
            assert np.array_equal(np.isinf(got), np.isinf(want))
            assert np.array_equal(np.sign(got[np.isinf(got)]), np.sign(want[np.isinf(want)]))
        # a single infinite entry leaves every player's value infinite, not NaN
        assert np.isinf(got[0]).all() and np.isinf(got[1]).all()
    assert np.array_equal(fc.shapley(np.array([0., np.inf, 2., 3.]), backend=backend),
                          [np.inf, -np.inf])


def test_replay_resolution_holds_for_all_one_arms(backend):
    res = fc.replay_advantage([1., 1., 1., 0., 0., 1., 1.], [1., 1., 0., 0., 0., 0.],
                              factual_offsets=[0, 3, 5, 7], alternative_offsets=[0, 2, 4, 6],
                              backend=backend).resolution
    want = ref.replay_advantage([[1, 1, 1], [0, 0], [1, 1]], [[1, 1], [0, 0], [0, 0]], 0.05)[2]
    assert np.allclose(res, want, equal_nan=True)
    assert res[0] == pytest.approx(1 - 0.05 ** 0.5) and np.isnan(res[2])


@pytest.mark.parametrize("rule", ["Uniform", "UCT", "AgentUCT"])
@pytest.mark.parametrize("seed", [2**63, 2**63 + 12345, 2**64 - 1])
def test_allocator_seeds_past_2_63(rule, seed):
    picks = {}
    for backend in fc.available_backends():
        args = (4, [1., 2., 3., 4.]) if rule == "AgentUCT" else (4,)
        alloc = getattr(fc, rule)(*args, seed=seed, backend=backend)
        picks[backend] = alloc.run(lambda a: float(a), budget=12).counts.tolist()
        assert sum(picks[backend]) == 12
    assert len(set(map(tuple, picks.values()))) == 1


def test_a_rejected_tell_changes_nothing():
    alloc = fc.AgentUCT(2, costs=[0.0, 1.0])
    with pytest.raises(ValueError, match="cost"):
        alloc.tell(0, 1.0, cost=-1.0)
    assert alloc.counts.tolist() == [0, 0] and alloc.sums.tolist() == [0.0, 0.0]
    assert alloc.costs.tolist() == [0.0, 1.0]


def test_group_advantages_propagate_infinite_rewards():
    adv = fc.group_advantages([np.inf, 0., 1., 0.], 2)
    assert np.isnan(adv[:2]).all()
    assert np.allclose(adv[2:], ref.group_advantages([1., 0.], [0, 0]))
    # NaN still counts as 0, as documented (TRL's nansum)
    assert np.array_equal(fc.group_advantages([np.nan, 0., 1., 0.], 2)[:2], [0.0, 0.0])


@pytest.mark.parametrize("call", [
    lambda **kw: fc.shapley(np.zeros((0, 4)), **kw),
    lambda **kw: fc.singleton(np.zeros((0, 4)), **kw),
    lambda **kw: fc.project_zero_sum(np.zeros((0, 3)), 1.0, **kw),
    lambda **kw: fc.token_advantages(np.zeros(0), np.zeros((0, 2)), np.zeros((0, 4), int),
                                     **kw),
    lambda **kw: fc.permutation_shapley(np.zeros((0, 8)), **kw),
    lambda **kw: fc.permutation_shapley(lambda s: np.zeros(len(s)), 3, permutations=2, **kw),
])
@pytest.mark.parametrize("bad, error, word", [
    ({"threads": 0}, ValueError, "threads"), ({"threads": "2"}, TypeError, "threads"),
    ({"backend": "x"}, ValueError, "backend")])
def test_options_are_checked_on_empty_input(call, bad, error, word):
    with pytest.raises(error, match=word):
        call(**bad)


def test_njit_game_and_fn_get_argument_errors():
    @njit
    def returns_text(mask):
        return "x"

    @njit
    def untypable(mask):
        return mask.no_such_attribute

    for fn in (returns_text, untypable):
        with pytest.raises(TypeError, match=r"^fn must"):
            fc.table_from_function(fn, 3)
        with pytest.raises(TypeError, match=r"^game must"):
            fc.permutation_shapley(fn, 3, permutations=2)


@pytest.mark.parametrize("call, word", [
    (lambda: fc.wilson_interval(1, np.inf), "n must hold finite whole counts"),
    (lambda: fc.wilson_interval(np.nan, 4), "successes must hold finite whole counts"),
    (lambda: fc.wilson_interval(1.5, 4), "successes must hold finite whole counts"),
    (lambda: fc.synthetic.and_failure(q="0.3"), "q must be a real"),
    (lambda: fc.synthetic.and_failure(q=0.3 + 1j), "q must be a real"),
    (lambda: fc.synthetic.sponsored_search(10, empty="0.1"), "empty must be a real"),
    (lambda: fc.shape_advantages(np.zeros(1), np.ones((1, 3)), token_counts=[[1, -2, 1]]),
     "token_counts must be finite and >= 0"),
])
def test_bad_values_are_refused_by_name(call, word):
    with pytest.raises((ValueError, TypeError), match=re.escape(word)):
        call()


def test_ragged_input_is_refused_by_name():
    with pytest.raises(ValueError, match="factual must be a rectangular array"):
        fc.replay_advantage([[1.0, 1.0], [0.0]], [[1.0], [0.0]])
    with pytest.raises(ValueError, match="v must be a rectangular array"):
        fc.shapley([[0.0, 1.0], [0.0]])


def test_messages_print_plain_numbers():
    with pytest.raises(ValueError) as info:
        fc.token_advantages(np.zeros((2, 2)), np.zeros((2, 2, 3)),
                            np.array([[[0, 1], [1, 7]], [[0, 0], [0, 0]]]))
    assert "np." not in str(info.value) and "(0, 1, 1)" in str(info.value)
    with pytest.raises(ValueError) as info:
        fc.project_zero_sum(np.zeros((2, 3)), lower=np.zeros((2, 3)),
                            upper=np.array([[1., 1., 1.], [1., -1., 1.]]))
    assert "np." not in str(info.value) and "(1, 1)" in str(info.value)


def test_allocations_that_cannot_fit_are_refused_first(monkeypatch):
    monkeypatch.setattr(_validation, "_available_memory", lambda: 1 << 20)
    with pytest.raises(ValueError, match=r"v \(a contiguous float64 copy .*\) needs .* GiB"):
        fc.shapley(np.broadcast_to(0.0, 1 << 18))
    with pytest.raises(ValueError, match="the result .* needs .* GiB, more than"):
        fc.table_from_function(lambda s: np.zeros(len(s)), 18)
    # what fits still runs
    assert fc.shapley(np.zeros(1 << 10)).shape == (10,)


@pytest.mark.parametrize("field", ["score", "prerank"])
def test_pools_finiteness_is_not_fooled_by_an_overflowing_sum(field):
    # Pools proves finiteness by one sum; finite terms whose sum overflows
    # must pass, and one infinite term among them must still be named
    big = [1e308, 1e308, -1e308, 1e308]
    args = dict(offsets=[0, 2, 4], ad_id=[7, 8, 7, 9], score=[1., 2., 3., 4.],
                value=[1., 1., 1., 1.], m=2)
    with np.errstate(all="raise"):
        pools = fc.Pools(**{**args, field: big})
    assert np.array_equal(getattr(pools, field), big)
    for bad in (np.inf, -np.inf, np.nan):
        with pytest.raises(ValueError, match=rf"{field} must be finite: request 0 \(action 1\)"
                                              rf" has {field}\[3\] = {bad}"):
            fc.Pools(**{**args, field: big[:3] + [bad]})
