"""Axioms and identities every table kernel must satisfy, on random games."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import fastcredit as fc

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def games(draw, max_m=7):
    m = draw(st.integers(1, max_m))
    return draw(arrays(np.float64, 1 << m, elements=finite))


def tol(v):
    return 1e-9 * max(1.0, float(np.abs(v).max()))


def permute_players(v, perm):
    """w(S) = v(perm(S)) where perm maps player i to perm[i]."""
    m = len(perm)
    masks = np.arange(1 << m)
    image = np.zeros_like(masks)
    for i, p in enumerate(perm):
        image |= ((masks >> i) & 1) << p
    return v[image]


@settings(max_examples=60, deadline=None)
@given(games())
def test_efficiency(v):
    for backend in fc.available_backends():
        assert fc.shapley(v, backend=backend).sum() == pytest.approx(v[-1] - v[0], abs=tol(v))


@settings(max_examples=60, deadline=None)
@given(games(), st.randoms())
def test_players_permute_with_the_game(v, rnd):
    m = len(v).bit_length() - 1
    perm = list(range(m))
    rnd.shuffle(perm)
    w = permute_players(v, perm)
    for name in ("shapley", "banzhaf", "singleton", "leave_one_out"):
        # player i of w plays the role of player perm[i] of v
        assert getattr(fc, name)(w) == pytest.approx(getattr(fc, name)(v)[perm], abs=tol(v))


@settings(max_examples=60, deadline=None)
@given(games(), st.data())
def test_null_player_gets_zero(v, data):
    m = len(v).bit_length() - 1
    i = data.draw(st.integers(0, m - 1))
    masks = np.arange(1 << m)
    v = v[masks & ~(1 << i)]  # v(S) = v(S - i): i adds nothing anywhere
    for name in ("shapley", "banzhaf", "singleton", "leave_one_out"):
        assert getattr(fc, name)(v)[i] == pytest.approx(0.0, abs=tol(v))
    assert np.abs(fc.size_resolved(v)[i]).max() <= tol(v)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7).flatmap(lambda m: st.tuples(
    arrays(np.float64, 1 << m, elements=finite), arrays(np.float64, 1 << m, elements=finite))),
    finite)
def test_linearity(vw, c):
    v, w = vw
    for name in ("shapley", "banzhaf", "size_resolved", "moebius", "pair_interactions"):
        f = getattr(fc, name)
        assert f(v + c * w) == pytest.approx(f(v) + c * f(w), abs=1e-9 * (1 + abs(c)) * 1e3)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8).flatmap(lambda m: arrays(np.float64, m, elements=finite)), finite)
def test_additive_games_get_the_same_credit_from_every_rule(u, v0):
    m = len(u)
    masks = np.arange(1 << m)
    v = v0 + ((masks[:, None] >> np.arange(m)) & 1) @ u
    for name in ("shapley", "banzhaf", "singleton", "leave_one_out"):
        assert getattr(fc, name)(v) == pytest.approx(u, abs=tol(v))
    # any semivalue scales u by the total weight sum_k C(m-1, k) w[k]
    w = np.random.default_rng(m).random(m)
    scale = sum(math.comb(m - 1, k) * w[k] for k in range(m))
    assert fc.semivalue(v, w) == pytest.approx(scale * u, abs=scale * tol(v))
    assert fc.size_resolved(v) == pytest.approx(np.repeat(u[:, None], m, 1), abs=tol(v))
    assert np.abs(fc.pair_interactions(v)).max() <= tol(v)


@settings(max_examples=60, deadline=None)
@given(games(max_m=10))
def test_moebius_round_trip_is_the_identity(v):
    for backend in fc.available_backends():
        a = fc.moebius(v, backend=backend)
        assert fc.from_moebius(a, backend=backend) == pytest.approx(v, abs=1e-9 * 2 ** 10 * 1e3)
        assert fc.moebius(fc.from_moebius(v, backend=backend), backend=backend) == pytest.approx(
            v, abs=1e-9 * 2 ** 10 * 1e3)


@settings(max_examples=40, deadline=None)
@given(games(max_m=6))
def test_float32_input_equals_its_float64_widening(v):
    v32 = v.astype(np.float32)
    for name in ("shapley", "banzhaf", "size_resolved", "moebius"):
        f = getattr(fc, name)
        assert np.array_equal(f(v32), f(v32.astype(np.float64)))
