"""fastcredit.replay.lm: a tiny local language model (built from a config, no
download) recorded and replayed with full fidelity. Skipped without torch and
transformers (the trl extra)."""
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from fastcredit import replay as rp  # noqa: E402
from fastcredit.replay import lm  # noqa: E402


@pytest.fixture(scope="module")
def agent():
    return lm.tiny_agent(vocab_size=12, n_steps=6, bad_token=3, seed=0)


def test_a_local_model_replays_at_full_action_match(agent):
    rec = rp.record(agent, seed=4)
    assert 1 <= rec.n_steps <= 6
    assert all(isinstance(a, int) and 0 <= a < 12 for a in rec.actions)
    assert all(s.logprob is not None and s.logprob <= 0.0 for s in rec.steps)
    rep = rp.replay(rec)
    assert rep.action_match == 1.0 and rep.first_divergence is None
    assert rep.trajectory == rec.trajectory                      # logprobs included
    assert rp.record(agent, seed=4).trajectory == rec.trajectory


def test_the_sampler_follows_the_model_distribution(agent):
    """The step streams draw tokens with the model's probabilities: 4,000
    first tokens against exp(logprob) (false-failure rate: a chi-square test
    at 1e-4)."""
    from scipy.stats import chisquare

    policy = agent.policy
    history = rp.History((0,))
    gen = np.random.default_rng(1)
    draws = [policy(history, gen) for _ in range(4000)]
    p = np.zeros(12)
    for d in draws:
        p[d.action] = np.exp(d.logprob)
    counts = np.bincount([d.action for d in draws], minlength=12)
    seen = p > 0
    assert abs(p[seen].sum() - 1.0) < 0.05       # tokens never drawn carry little mass
    assert chisquare(counts[seen], p[seen] / p[seen].sum() * counts.sum()).pvalue > 1e-4


def test_interventions_and_attribution_run_on_the_model(agent):
    rec = rp.record(agent, seed=4)
    forced = rp.replay(rec, rp.ForceAction(0, 3)).trajectory
    assert forced.actions[0] == 3 and forced.outcome == 1.0
    est = rp.shapley(rec, permutations=8, seed=0, max_concurrency=2)
    assert est.n_evals == 8 * (rec.n_steps + 1) and np.all(np.isfinite(est.values))


def test_the_global_torch_rng_is_left_alone():
    state = torch.random.get_rng_state()
    lm.tiny_agent(seed=5)
    assert torch.equal(state, torch.random.get_rng_state())


def test_bad_arguments_name_the_argument():
    with pytest.raises(ValueError, match="temperature"):
        lm.tiny_agent(temperature=0.0)
    with pytest.raises(ValueError, match="bad_token"):
        lm.tiny_agent(vocab_size=8, bad_token=8)
    with pytest.raises(TypeError, match="model must be a callable"):
        lm.lm_policy(3)


def test_importing_replay_does_not_import_torch():
    code = "import sys, fastcredit.replay; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
