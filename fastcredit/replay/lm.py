r"""A local causal language model as a replayable policy (torch, transformers).

Each step samples one token :math:`a_t \sim \mathrm{softmax}(z_t / T)`, z the
model's next-token logits on the prompt and the tokens so far, by inverting
the CDF at a uniform drawn from the step's numpy stream; the decision carries
:math:`\log p(a_t)`. On a CPU the logits are a deterministic function of the
context, so a record replays at an action-match rate of 1.0: the harness's
fidelity check on a real sampler. A hosted or GPU model that is not
bit-deterministic shows up there as a rate below 1.

Imported lazily: ``import fastcredit.replay`` never imports torch, and this
module needs it (``pip install 'fastcredit[trl]'``) only when called.
"""
from __future__ import annotations

import numpy as np

from .._validation import check_float, check_int
from .agent import Agent, Decision, Transition

__all__ = ["lm_policy", "tiny_agent"]


def _require():
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ImportError("fastcredit.replay.lm needs torch and transformers "
                          "(pip install 'fastcredit[trl]')") from exc
    return torch, transformers


def lm_policy(model, *, temperature: float = 1.0):
    """A policy sampling the next token of ``model``.

    Parameters
    ----------
    model : callable
        A causal LM: ``model(input_ids=LongTensor (1, n)).logits`` of shape
        (1, n, vocab) (any transformers ``*ForCausalLM``).
    temperature : float > 0

    Returns
    -------
    callable
        ``policy(history, rng) -> Decision(token, logprob)``; the context is
        ``history.initial`` (the prompt's token ids) followed by the tokens
        chosen so far (``history.actions``).
    """
    torch, _ = _require()
    if not callable(model):
        raise TypeError(f"model must be a callable causal LM, got {type(model).__name__}")
    temperature = check_float(temperature, "temperature", lo=0.0)
    if temperature == 0.0:
        raise ValueError("temperature must be > 0 (a sampler; greedy decoding needs no replay)")

    def policy(history, rng):
        ids = torch.tensor([list(history.initial) + list(history.actions)], dtype=torch.long)
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, -1].double() / temperature
        logp = torch.log_softmax(logits, dim=-1).numpy()
        cdf = np.cumsum(np.exp(logp))
        token = min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")),
                    len(cdf) - 1)
        return Decision(token, float(logp[token]))
    return policy


def tiny_agent(*, vocab_size: int = 16, n_steps: int = 6, bad_token: int = 3,
               temperature: float = 1.0, seed: int = 0) -> Agent:
    """An agent whose policy is a tiny random GPT-2 built from a config.

    No download: the weights are drawn from ``seed`` (inside a forked torch
    RNG, leaving the global one alone). The prompt is token 0; each step
    emits a token; token 1 (end of sequence) ends the run; the outcome is 1.0
    when ``bad_token`` was emitted.

    Parameters
    ----------
    vocab_size : int
    n_steps : int
        Most tokens a run emits.
    bad_token : int
    temperature : float > 0
    seed : int
        Of the weights.
    """
    torch, transformers = _require()
    vocab_size = check_int(vocab_size, "vocab_size", lo=4, hi=1 << 16)
    n_steps = check_int(n_steps, "n_steps", lo=1, hi=48)
    bad_token = check_int(bad_token, "bad_token", lo=2, hi=vocab_size - 1)
    seed = check_int(seed, "seed", lo=0, hi=(1 << 63) - 1)
    config = transformers.GPT2Config(vocab_size=vocab_size, n_positions=64, n_embd=16,
                                     n_layer=1, n_head=2, bos_token_id=0, eos_token_id=1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = transformers.GPT2LMHeadModel(config).eval()

    def tools(action, history, rng):
        return Transition(None, terminated=action == 1)

    def outcome(trajectory):
        return float(bad_token in trajectory.actions)
    return Agent(lm_policy(model, temperature=temperature), tools, outcome, initial=(0,),
                 max_steps=n_steps)
