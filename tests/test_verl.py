"""verl's GRPO outcome advantage from fc.group_advantages: against the
definition (tests/reference.py) always, against verl's own
``compute_grpo_outcome_advantage`` where verl imports (it is not a dependency
of any extra: its core algorithms import omegaconf, ray-side configs and
workers, so this part skips unless a verl install is present)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcredit as fc
import reference as ref

# verl's options as group_advantages keywords: norm_adv_by_std_in_grpo -> scale
SCALE_OF = {True: "group", False: "none"}


@st.composite
def verl_batches(draw):
    """Scores with uid labels (strings, as verl's uuid uids), groups of one
    included, and an epsilon."""
    n = draw(st.integers(1, 14))
    n_groups = draw(st.integers(1, n))
    labels = [f"uid-{draw(st.integers(0, n_groups - 1))}" for _ in range(n)]
    scores = draw(st.lists(st.floats(-5, 5, allow_nan=False), min_size=n, max_size=n))
    eps = draw(st.sampled_from([1e-6, 1e-4, 0.1]))
    return np.array(scores), labels, eps


@settings(max_examples=150, deadline=None)
@given(verl_batches(), st.booleans())
def test_matches_verl_definition(batch, norm):
    scores, uid, eps = batch
    got = fc.group_advantages(scores, groups=uid, eps=eps, singleton="raw",
                              scale=SCALE_OF[norm])
    np.testing.assert_allclose(got, ref.verl_grpo_outcome(scores, uid, eps, norm),
                               rtol=1e-12, atol=1e-12)


def test_group_of_one_is_the_score():
    """verl: mean 0, sd 1, so A = score / (1 + eps), or the score unscaled;
    the default keeps TRL's 0."""
    scores = np.array([3.0, 1.0, 2.0])
    uid = np.array([7, 9, 9])
    got = fc.group_advantages(scores, groups=uid, eps=1e-6, singleton="raw")
    assert got[0] == 3.0 / (1.0 + 1e-6)
    assert fc.group_advantages(scores, groups=uid, eps=1e-6, singleton="raw",
                               scale="none")[0] == 3.0
    assert fc.group_advantages(scores, groups=uid, eps=1e-6)[0] == 0.0
    # the larger group is untouched by the option
    np.testing.assert_array_equal(got[1:], fc.group_advantages(scores, groups=uid, eps=1e-6)[1:])


@st.composite
def multi_turn_batches(draw):
    """Rows of sessions (several turns each, in any row order) of prompts."""
    n_uid = draw(st.integers(1, 4))
    rows = []
    for u in range(n_uid):
        for s in range(draw(st.integers(1, 3))):
            n_turns = draw(st.integers(1, 3))
            turns = draw(st.permutations(range(n_turns)))
            if draw(st.booleans()):          # a repeated final index: the first row wins
                turns = list(turns) + [n_turns - 1]
            for t in turns:
                rows.append((f"u{u}", f"u{u}_s{s}", t, draw(st.floats(-3, 3))))
    order = draw(st.permutations(range(len(rows))))
    rows = [rows[i] for i in order]
    uid, session, turn, score = (list(x) for x in zip(*rows))
    return np.array(score), uid, session, np.array(turn)


@settings(max_examples=150, deadline=None)
@given(multi_turn_batches(), st.booleans())
def test_multi_turn_matches_verl_v1_definition(batch, norm):
    scores, uid, session, turn = batch
    got = fc.group_advantages(scores, groups=uid, eps=1e-6, singleton="raw",
                              scale=SCALE_OF[norm], sessions=session, turns=turn)
    np.testing.assert_allclose(got, ref.verl_multi_turn(scores, uid, session, list(turn),
                                                        1e-6, norm), rtol=1e-12, atol=1e-12)


def test_multi_turn_counts_each_session_once():
    """A session of many turns weighs as much in its group as one of one turn:
    only the final turns are the group's rewards."""
    scores = np.array([0.0, 0.0, 0.0, 1.0, 5.0])
    uid = ["a"] * 5
    session = ["a_0", "a_0", "a_0", "a_0", "a_1"]
    got = fc.group_advantages(scores, groups=uid, sessions=session, eps=0.0)
    # group {1.0 (final turn of a_0), 5.0}: mean 3, sd 2 sqrt(2)
    np.testing.assert_allclose(got, [-1 / np.sqrt(2)] * 4 + [1 / np.sqrt(2)])


def test_multi_turn_refusals():
    with pytest.raises(TypeError, match="turns needs sessions"):
        fc.group_advantages([1.0, 2.0], 2, turns=[0, 1])
    with pytest.raises(ValueError, match="groups and sessions disagree: row 0 is in a "
                                         "different group from the final row 1"):
        fc.group_advantages([1.0, 2.0, 3.0, 4.0], groups=[0, 1, 0, 1], sessions=[5, 5, 6, 7])
    with pytest.raises(ValueError, match="turns must have shape"):
        fc.group_advantages([1.0, 2.0], 2, sessions=[0, 1], turns=[0])
    with pytest.raises(TypeError, match="groups must hold integers or strings"):
        fc.group_advantages([1.0, 2.0], groups=np.array([1, "a"], dtype=object))
    with pytest.raises(ValueError, match="singleton"):
        fc.group_advantages([1.0, 2.0], 2, singleton="one")


def test_matches_verl_itself():
    core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    bs, length = 12, 7
    uid = np.array([f"u{i}" for i in [0, 0, 0, 1, 1, 2, 3, 3, 3, 3, 4, 4]], dtype=object)
    lengths = rng.integers(1, length + 1, size=bs)
    response_mask = (np.arange(length)[None, :] < lengths[:, None]).astype(np.float32)
    token_level_rewards = np.zeros((bs, length), dtype=np.float32)
    token_level_rewards[np.arange(bs), lengths - 1] = rng.normal(size=bs)
    for norm in (True, False):
        adv, returns = core_algos.compute_grpo_outcome_advantage(
            torch.from_numpy(token_level_rewards), torch.from_numpy(response_mask), uid,
            norm_adv_by_std_in_grpo=norm)
        scores = token_level_rewards.sum(-1)
        base = fc.group_advantages(scores, groups=uid, eps=1e-6, singleton="raw",
                                   scale=SCALE_OF[norm])
        # verl computes in float32
        np.testing.assert_allclose(adv.numpy(), base[:, None] * response_mask, rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_array_equal(adv.numpy(), returns.numpy())
