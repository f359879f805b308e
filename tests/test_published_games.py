"""Games whose Shapley and Banzhaf values are published, each with its source.

Raw Banzhaf value here is swings / 2**(m-1); papers usually print the
normalised index swings / total swings, which the tests derive from it.
"""
import numpy as np
import pytest

import fastcredit as fc


def weighted_voting(weights, quota):
    """v(S) = 1 iff the weights of S reach the quota."""
    m = len(weights)
    masks = np.arange(1 << m)
    member = (masks[:, None] >> np.arange(m)) & 1
    return (member @ np.asarray(weights) >= quota).astype(np.float64)


def normalised(b):
    return b / b.sum()


def test_glove_game(backend):
    # Glove game with one right glove (player 2) and two left gloves; a pair is
    # worth 1. Shapley (1/6, 1/6, 2/3): e.g. Wikipedia, "Shapley value",
    # section "Glove game"; Maschler, Solan & Zamir, Game Theory (2013), ch. 18.
    v = np.array([0, 0, 0, 0, 0, 1, 1, 1], dtype=float)
    assert fc.shapley(v, backend=backend) == pytest.approx([1 / 6, 1 / 6, 2 / 3])
    # Banzhaf: the right glove swings in 3 of 4 coalitions, each left glove in 1.
    assert fc.banzhaf(v, backend=backend) == pytest.approx([1 / 4, 1 / 4, 3 / 4])


def test_un_security_council(backend):
    # UN Security Council after 1965: 5 permanent members with veto and 10
    # others; a motion passes with all 5 permanent and at least 4 others, i.e.
    # weights 7 and 1 with quota 39 (m = 15). Shapley & Shubik, "A method for
    # evaluating the distribution of power in a committee system", APSR 48
    # (1954); Straffin, Game Theory and Strategy (1993), ch. 10: Shapley-Shubik
    # index 0.1963 for each permanent member and 0.0019 for each other member.
    # Banzhaf: 848 and 84 swings, index 0.167 and 0.0165 (Felsenthal &
    # Machover, The Measurement of Voting Power, 1998, sec. 3.3).
    v = weighted_voting([7] * 5 + [1] * 10, 39)
    phi = fc.shapley(v, backend=backend)
    assert phi[:5] == pytest.approx([0.1963] * 5, abs=5e-5)
    assert phi[5:] == pytest.approx([0.0019] * 10, abs=5e-5)
    b = fc.banzhaf(v, backend=backend)
    assert b * 2 ** 14 == pytest.approx([848] * 5 + [84] * 10)
    assert normalised(b)[[0, 5]] == pytest.approx([0.167, 0.0165], abs=5e-4)


def test_nassau_county_board(backend):
    # Nassau County Board of Supervisors, 1964: weights (9, 9, 7, 3, 1, 1),
    # quota 16. Banzhaf, "Weighted voting doesn't work: a mathematical
    # analysis", Rutgers Law Review 19 (1965): the last three members have no
    # power at all; the first three share it equally.
    v = weighted_voting([9, 9, 7, 3, 1, 1], 16)
    assert fc.shapley(v, backend=backend) == pytest.approx([1 / 3] * 3 + [0] * 3, abs=1e-12)
    assert normalised(fc.banzhaf(v, backend=backend)) == pytest.approx(
        [1 / 3] * 3 + [0] * 3, abs=1e-12)


def test_eec_council_1958(backend):
    # Council of the EEC, 1958: France, Germany, Italy 4 votes, Belgium and
    # the Netherlands 2, Luxembourg 1, quota 12. Felsenthal & Machover (1998),
    # table 3.3.1: Shapley-Shubik 14/60 (0.233) for the large members, 9/60
    # (0.15) for the middle ones, 0 for Luxembourg; Banzhaf 10, 6 and 0 swings
    # (index 0.238, 0.143, 0).
    v = weighted_voting([4, 4, 4, 2, 2, 1], 12)
    assert fc.shapley(v, backend=backend) == pytest.approx(
        [14 / 60] * 3 + [9 / 60] * 2 + [0], abs=1e-12)
    assert fc.banzhaf(v, backend=backend) * 32 == pytest.approx(
        [10] * 3 + [6] * 2 + [0], abs=1e-12)


def test_airport_game(backend):
    # Airport game: a runway must serve the largest plane of S, cost
    # v(S) = max_{i in S} c_i. Littlechild & Owen, "A simple expression for the
    # Shapley value in a special case", Management Science 20 (1973): with
    # c_1 <= ... <= c_m, phi_i = sum_{j <= i} (c_j - c_{j-1}) / (m - j + 1).
    c = np.array([1.0, 3.0, 3.5, 7.0, 10.0, 10.0, 16.0])
    m = len(c)
    masks = np.arange(1 << m)
    member = (masks[:, None] >> np.arange(m)) & 1
    v = (member * c).max(axis=1)
    steps = np.diff(np.concatenate([[0.0], c]))
    want = np.cumsum(steps / (m - np.arange(m)))
    assert fc.shapley(v, backend=backend) == pytest.approx(want, rel=1e-12)


def test_weighted_majority_with_a_strong_player(backend):
    # [51; 50, 49, 1]: the classic example of weight != power (Straffin 1993,
    # ch. 10): Shapley-Shubik (2/3, 1/6, 1/6) although weights are 50/49/1;
    # Banzhaf swings 3, 1, 1 (index 3/5, 1/5, 1/5).
    v = weighted_voting([50, 49, 1], 51)
    assert fc.shapley(v, backend=backend) == pytest.approx([2 / 3, 1 / 6, 1 / 6])
    assert fc.banzhaf(v, backend=backend) * 4 == pytest.approx([3, 1, 1])


@pytest.mark.parametrize("carrier", [0b1, 0b1011, 0b111111111111])
def test_unanimity_games(carrier, backend):
    # Unanimity game u_T(S) = 1 iff T is a subset of S: Shapley 1/|T| on T and
    # 0 elsewhere (Shapley, "A value for n-person games", 1953, the basis of
    # his uniqueness proof); Banzhaf 1/2**(|T|-1) on T. m = 12.
    m = 12
    masks = np.arange(1 << m)
    v = ((masks & carrier) == carrier).astype(float)
    t = bin(carrier).count("1")
    inside = (carrier >> np.arange(m)) & 1
    assert fc.shapley(v, backend=backend) == pytest.approx(inside / t, abs=1e-13)
    assert fc.banzhaf(v, backend=backend) == pytest.approx(inside / 2 ** (t - 1), abs=1e-13)
    # and its dividends are the indicator of T
    assert fc.moebius(v, backend=backend) == pytest.approx((masks == carrier) * 1.0, abs=1e-12)
