"""The array recipes of docs/trainers.md, run as written (the code blocks are
read from the page by tests/doc_blocks.py, so the page cannot drift from what
is tested), on numpy batches laid out as trainers hand them over: rewards and
per-action credit in, the (B, T) float32 advantages out. No torch needed.
(tests/test_doc_blocks.py runs every block of the page on its own tiny batch;
here the recipes' results are checked.)"""
import numpy as np

import fastcredit as fc
import reference as ref
from doc_blocks import ROOT, block_containing

DOC = ROOT / "docs" / "trainers.md"
N_PROMPTS, NUM_GENERATIONS, M, T = 4, 4, 5, 48


def run_doc_block(marker: str, **names) -> dict:
    """Run the python block of docs/trainers.md containing marker on names."""
    return block_containing(DOC, marker).run(dict(names))


def trainer_batch(rng, n_rows=N_PROMPTS * NUM_GENERATIONS):
    """Completions of up to T tokens (right padded; mask 0 on padding), each
    spending contiguous token spans on its m actions and the rest on shared
    text; a coalition table v over the m actions per completion, growing
    with the coalition; the scalar reward is v(N)."""
    lengths = rng.integers(T // 2, T + 1, size=n_rows)
    mask = (np.arange(T)[None, :] < lengths[:, None]).astype(np.int64)
    token_action = np.full((n_rows, T), -1, dtype=np.int64)
    for g in range(n_rows):
        cuts = np.sort(rng.choice(np.arange(1, lengths[g]), size=2 * M, replace=False))
        for i in range(M):
            token_action[g, cuts[2 * i]:cuts[2 * i + 1]] = i
    v = rng.uniform(size=(n_rows, 1 << M)).cumsum(axis=1)
    v[:, 0] = 0.0
    return v[:, -1].copy(), v, token_action, mask


def test_any_trainer_recipe(rng):
    rewards, v, token_action, mask = trainer_batch(rng)
    ns = run_doc_block("base = fc.group_advantages(rewards, group_size)", rewards=rewards,
                       group_size=NUM_GENERATIONS, v=v, token_action=token_action, m=M, mask=mask)
    base, adv = ns["base"], ns["advantages"]
    assert adv.shape == (N_PROMPTS * NUM_GENERATIONS, T) and adv.dtype == np.float32
    assert (adv[mask == 0] == 0).all()
    shared = (token_action == -1) & (mask == 1)
    np.testing.assert_array_equal(adv[shared], np.broadcast_to(base[:, None], adv.shape)[shared]
                                  .astype(np.float32))
    # the token-weighted projection keeps every sequence's token mean at A_hat,
    # so an on-policy loss averaged over tokens is unchanged by the shaping
    seq_mean = (adv.astype(np.float64) * mask).sum(1) / mask.sum(1)
    np.testing.assert_allclose(seq_mean, base, atol=1e-6)
    # and actions with more credit get more advantage within a completion
    credit = fc.shapley(v)
    for g in range(adv.shape[0]):
        per_action = np.array([adv[g][token_action[g] == i][0] for i in range(M)])
        assert np.all(np.diff(per_action[np.argsort(credit[g])]) >= -1e-6)


def shape_verl_advantages():
    return run_doc_block("def shape_verl_advantages(")["shape_verl_advantages"]


def test_verl_recipe(rng):
    """verl's GRPO advantages (uid groups, a group of one) -> shaped ones."""
    rewards, v, token_action, mask = trainer_batch(rng, n_rows=N_PROMPTS * NUM_GENERATIONS + 1)
    response_mask = mask.astype(np.float32)            # verl's batch["response_mask"]
    uid = np.array([f"uid-{g}" for g in range(N_PROMPTS) for _ in range(NUM_GENERATIONS)]
                   + ["alone"], dtype=object)
    order = rng.permutation(len(uid))                  # verl's rows come in any order
    uid, rewards, v = uid[order], rewards[order], v[order]
    token_action, response_mask = token_action[order], response_mask[order]
    # what verl writes: A * response_mask, in float32
    verl_adv = (ref.verl_grpo_outcome(rewards, list(uid))[:, None] * response_mask
                ).astype(np.float32)
    shape = shape_verl_advantages()
    credit = fc.shapley(v)
    # shaping_beta = 0 gives verl's advantages back exactly
    np.testing.assert_array_equal(shape(verl_adv, response_mask, credit, token_action,
                                        shaping_beta=0.0), verl_adv)
    adv = shape(verl_adv, response_mask, credit, token_action)
    assert adv.shape == response_mask.shape and adv.dtype == np.float32
    base = fc.group_advantages(rewards, groups=uid, eps=1e-6, singleton="raw")
    seq_mean = (adv.astype(np.float64) * response_mask).sum(1) / response_mask.sum(1)
    np.testing.assert_allclose(seq_mean, base, rtol=1e-5, atol=1e-5)


def test_verl_multi_turn_recipe(rng):
    """Multi-turn v1 rows: every turn carries its session's final-turn
    advantage, which the recipe reads per row and fc.group_advantages
    reproduces with sessions and turns."""
    n_rows = 3 * NUM_GENERATIONS * 2
    rewards, v, token_action, mask = trainer_batch(rng, n_rows=n_rows)
    uid = np.repeat([f"u{k}" for k in range(3)], 2 * NUM_GENERATIONS)
    session = np.array([f"{u}_{g // 2}" for g, u in enumerate(uid)])   # two turns each
    turn = np.tile([0, 1], n_rows // 2)
    verl_adv = (ref.verl_multi_turn(rewards, list(uid), list(session), list(turn))[:, None]
                * mask).astype(np.float32)
    base = fc.group_advantages(rewards, groups=uid, eps=1e-6, singleton="raw",
                               sessions=session, turns=turn)
    adv = shape_verl_advantages()(verl_adv, mask, fc.shapley(v), token_action)
    seq_mean = (adv.astype(np.float64) * mask).sum(1) / mask.sum(1)
    np.testing.assert_allclose(seq_mean, base, rtol=1e-5, atol=1e-5)
    assert np.array_equal(base[::2], base[1::2])       # both turns of a session
