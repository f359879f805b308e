"""The docs/trainers.md recipe, end to end on numpy arrays laid out exactly
as TRL's GRPOTrainer and verl hand them over (no torch needed): rewards and
per-action credit in, the (B, T) float32 advantages tensor out."""
import numpy as np

import fastcredit as fc

N_PROMPTS, NUM_GENERATIONS, M, T = 4, 4, 5, 48


def trainer_batch(rng):
    """A GRPO batch: B = prompts x generations completions of up to T tokens
    (right padded; completion_mask 0 on padding); each completion spends
    contiguous token spans on its m actions (query rewrites) and the rest on
    shared text; a coalition table v over the m actions per completion; the
    scalar reward is v(N)."""
    b = N_PROMPTS * NUM_GENERATIONS
    lengths = rng.integers(T // 2, T + 1, size=b)
    completion_mask = (np.arange(T)[None, :] < lengths[:, None]).astype(np.int64)
    token_action = np.full((b, T), -1, dtype=np.int64)
    for g in range(b):
        cuts = np.sort(rng.choice(np.arange(1, lengths[g]), size=2 * M, replace=False))
        for i in range(M):
            token_action[g, cuts[2 * i]:cuts[2 * i + 1]] = i
    v = rng.uniform(size=(b, 1 << M)).cumsum(axis=1)   # grows with the coalition
    v[:, 0] = 0.0
    rewards = v[:, -1].copy()
    return rewards, v, token_action, completion_mask


def recipe(rewards, v, token_action, completion_mask, beta=0.5, kappa=1.0):
    """What a trainer subclass runs after scoring its completions."""
    base = fc.group_advantages(rewards, NUM_GENERATIONS)               # TRL's A_hat
    credit = fc.shapley(v)                                             # per-action credit
    counts = fc.token_counts(token_action, M, completion_mask)
    action_adv = fc.shape_advantages(base, credit, beta=beta, kappa=kappa,
                                     token_counts=counts)
    return base, fc.token_advantages(base, action_adv, token_action, completion_mask)


def test_trl_advantages_tensor(rng):
    rewards, v, token_action, mask = trainer_batch(rng)
    base, adv = recipe(rewards, v, token_action, mask)
    # TRL's _compute_loss accepts advantages of shape (B, T) (it unsqueezes
    # only 1-d ones); float32 like the logps it multiplies.
    assert adv.shape == (N_PROMPTS * NUM_GENERATIONS, T) and adv.dtype == np.float32
    assert (adv[mask == 0] == 0).all()
    shared = (token_action == -1) & (mask == 1)
    np.testing.assert_array_equal(adv[shared], np.broadcast_to(base[:, None], adv.shape)[shared]
                                  .astype(np.float32))
    # on-policy (ratio 1) GRPO loss -sum(A * mask) / sum(mask) per sequence,
    # averaged over sequences (loss_type="grpo"), is unchanged by the shaping:
    # the token-weighted projection keeps every sequence's token mean at A_hat.
    seq_mean = (adv.astype(np.float64) * mask).sum(1) / mask.sum(1)
    np.testing.assert_allclose(seq_mean, base, atol=1e-6)
    # and actions with more credit get more advantage within a completion
    credit = fc.shapley(v)
    for g in range(adv.shape[0]):
        per_action = [adv[g][token_action[g] == i][0] for i in range(M)]
        order = np.argsort(credit[g])
        assert np.all(np.diff(np.array(per_action)[order]) >= -1e-6)


def test_verl_advantages_tensor(rng):
    rewards, v, token_action, mask = trainer_batch(rng)
    response_mask = mask.astype(np.float32)   # verl's data.batch["response_mask"]
    uid = np.repeat(np.arange(N_PROMPTS), NUM_GENERATIONS)
    rng.shuffle(uid)                           # verl groups by uid, in any order
    base = fc.group_advantages(rewards, groups=uid, eps=1e-6)
    # beta = 0 reproduces verl's outcome advantage: scores[:, None] * response_mask
    unshaped = fc.shape_advantages(base, fc.shapley(v), beta=0.0)
    flat = fc.token_advantages(base, unshaped, token_action, response_mask)
    np.testing.assert_array_equal(flat, (base[:, None] * response_mask).astype(np.float32))
    counts = fc.token_counts(token_action, M, response_mask)
    shaped = fc.shape_advantages(base, fc.shapley(v), beta=0.5, token_counts=counts)
    adv = fc.token_advantages(base, shaped, token_action, response_mask)
    assert adv.shape == response_mask.shape   # (bs, response_length)
    seq_mean = (adv.astype(np.float64) * response_mask).sum(1) / response_mask.sum(1)
    np.testing.assert_allclose(seq_mean, base, atol=1e-6)
