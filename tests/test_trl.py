"""fastcredit.trl on TRL's real GRPOTrainer: a tiny Llama built from a config,
a character tokenizer built on the fly (no downloads), real training steps on
CPU. The advantages are captured where the loss receives them
(``_compute_loss``) and compared with an independent computation from
fastcredit's public functions; gradients are compared with the per-sequence
baseline on the same batch."""
import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")
tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

from trl import GRPOConfig, GRPOTrainer  # noqa: E402

import fastcredit as fc  # noqa: E402
from fastcredit.trl import (LOSS_TYPES, PER_TOKEN_GRADIENT_LOSSES, CreditGRPOTrainer,  # noqa: E402
                            CreditShaping)

SPECIAL = ["<pad>", "<eos>", "<bos>", "<unk>"]
CHARS = list("abcdefghij ")
VOCAB = {tok: i for i, tok in enumerate(SPECIAL + CHARS)}
PROMPTS = ["abc", "bcd", "cde", "def"]
GENERATIONS = 2
M = 3                     # actions per completion
SHAPING_BETA = 0.5


@pytest.fixture(scope="module")
def tiny(model_dir):
    """(tokenizer, model directory)."""
    return character_tokenizer(), model_dir


def character_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(VOCAB, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")     # one token per character
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>",
                                   bos_token="<bos>", unk_token="<unk>")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A tiny random Llama saved locally: with beta > 0 TRL loads the reference
    model from the policy's path."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(VOCAB), hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=64, pad_token_id=0, eos_token_id=1,
                         bos_token_id=2)
    path = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(path)
    return str(path)


def reward(completions, **kwargs):
    return [float(len(set(c))) + 2.0 * c.count("a") for c in completions]


def layout(ids):
    """Token t of a completion belongs to action (t % 4) - 1 (-1: shared)."""
    return np.array([t % 4 - 1 for t in range(len(ids))])


def varying_credit(completion_ids, **kwargs):
    """Per-action credit that differs between the actions (the last is -1,
    the others >= 0.5) and between completions."""
    return [(layout(ids), np.array([ids.count(4) + 0.5, float(sum(ids) % 7), -1.0]))
            for ids in completion_ids]


def constant_credit(completion_ids, **kwargs):
    return [(layout(ids), np.full(M, 2.0)) for ids in completion_ids]


def config(tmp_path, **options):
    """TRL's default GRPOConfig, made tiny: the only settings are the CPU,
    the batch and length sizes, and no logging or checkpoints."""
    tiny = dict(output_dir=str(tmp_path), use_cpu=True, per_device_train_batch_size=4,
                num_generations=GENERATIONS, max_completion_length=6, max_steps=2,
                report_to="none", save_strategy="no", disable_tqdm=True)
    return GRPOConfig(**{**tiny, **options})


def trainer_of(cls, tiny, tmp_path, options=None, **credit):
    from transformers import LlamaForCausalLM

    tokenizer, model_dir = tiny
    return cls(model=LlamaForCausalLM.from_pretrained(model_dir), reward_funcs=reward,
               args=config(tmp_path, **(options or {})),
               train_dataset=datasets.Dataset.from_dict({"prompt": PROMPTS}),
               processing_class=tokenizer, **credit)


class Recorder:
    """Real trainer methods wrapped to record what passes through them: TRL's
    own output (before the shaping replaces its advantages) and the inputs
    of ``_compute_loss``."""

    def __init__(self, monkeypatch):
        self.generated, self.losses = [], []
        generate = GRPOTrainer._generate_and_score_completions
        compute_loss = GRPOTrainer._compute_loss

        def recorded_generate(trainer, inputs):
            output = generate(trainer, inputs)
            self.generated.append(_copy(output))
            return output

        def recorded_loss(trainer, model, inputs):
            self.losses.append(_copy(inputs))
            return compute_loss(trainer, model, inputs)

        monkeypatch.setattr(GRPOTrainer, "_generate_and_score_completions", recorded_generate)
        monkeypatch.setattr(GRPOTrainer, "_compute_loss", recorded_loss)


def _copy(batch):
    return {k: v.detach().clone() if torch.is_tensor(v) else v for k, v in batch.items()}


def _row_key(batch, g):
    """(prompt tokens, completion tokens) of row g of a batch."""
    prompt = batch["prompt_ids"][g][batch["prompt_mask"][g].bool()]
    n = int(batch["completion_mask"][g].sum())
    return tuple(prompt.tolist()), tuple(batch["completion_ids"][g, :n].tolist())


def expected_advantages(loss_inputs, generated, credit_fn):
    """The (B, T) advantages of a loss batch, computed row by row with
    fastcredit's public functions from TRL's own (B,) advantages."""
    base_of = {_row_key(generated, g): float(generated["advantages"][g])
               for g in range(len(generated["advantages"]))}
    mask = loss_inputs["completion_mask"].numpy()
    n_rows, n_tok = mask.shape
    out = np.zeros((n_rows, n_tok), dtype=np.float32)
    for g in range(n_rows):
        prompt, ids = _row_key(loss_inputs, g)
        base = np.array([base_of[prompt, ids]])
        [(actions, credit)] = credit_fn([list(ids)])
        token_action = np.full((1, n_tok), -1)
        token_action[0, :len(actions)] = actions
        counts = fc.token_counts(token_action, M, mask[g:g + 1])
        action_adv = fc.shape_advantages(base, credit[None], beta=SHAPING_BETA, kappa=1.0,
                                         token_counts=counts)
        out[g] = fc.token_advantages(base, action_adv, token_action, mask[g:g + 1])[0]
    return out


def gradient(trainer, inputs):
    """The gradient of the trainer's real loss on one batch."""
    trainer.model.zero_grad()
    trainer.compute_loss(trainer.model, inputs).backward()
    return torch.cat([p.grad.flatten() for p in trainer.model.parameters() if p.grad is not None])


def with_sequence_advantages(inputs, generated):
    """The same batch with TRL's own per-sequence advantages."""
    base_of = {_row_key(generated, g): generated["advantages"][g]
               for g in range(len(generated["advantages"]))}
    out = dict(inputs)
    out["advantages"] = torch.stack([base_of[_row_key(inputs, g)]
                                     for g in range(len(inputs["advantages"]))])
    return out


# --- the trainer ---------------------------------------------------------------

def test_never_shadows_a_grpo_trainer_attribute(tiny, tmp_path):
    plain = trainer_of(GRPOTrainer, tiny, tmp_path, {"beta": 0.04})
    ours = trainer_of(CreditGRPOTrainer, tiny, tmp_path, {"beta": 0.04},
                      credit_fn=varying_credit, shaping_beta=SHAPING_BETA)
    added = set(vars(ours)) - set(vars(plain))
    assert added == {"credit_fn", "credit_shaping", "_credit_of_batch"}
    for name in added:
        assert not hasattr(plain, name) and not hasattr(GRPOTrainer, name), name
    # the class adds no attribute either; it overrides two of TRL's methods
    declared = {n for n in vars(CreditGRPOTrainer) if not n.startswith("__")}
    assert declared == {"_calculate_rewards", "_generate_and_score_completions"}
    assert all(callable(getattr(GRPOTrainer, n)) for n in declared)
    # the shaping options live in a config of their own, not on the trainer
    assert {f.name for f in __import__("dataclasses").fields(CreditShaping)}.isdisjoint(
        vars(plain))
    assert ours.beta == plain.beta == 0.04


@pytest.mark.parametrize("kl", [None, 0.04], ids=["default-config", "kl"])
def test_two_steps_loss_receives_the_shaped_advantages(tiny, tmp_path, monkeypatch, kl):
    recorder = Recorder(monkeypatch)
    options = {} if kl is None else {"beta": kl}
    trainer = trainer_of(CreditGRPOTrainer, tiny, tmp_path, options,
                         credit_fn=varying_credit, shaping_beta=SHAPING_BETA)
    trainer.train()
    assert trainer.state.global_step == 2
    # the KL coefficient is TRL's, untouched (0.0 by default: no reference model)
    assert trainer.beta == trainer.args.beta == (0.0 if kl is None else kl)
    assert (trainer.ref_model is None) == (kl is None)
    assert len(recorder.losses) == len(recorder.generated) == 2
    for inputs, generated in zip(recorder.losses, recorder.generated):
        assert generated["advantages"].shape == (4,)
        assert inputs["advantages"].shape == inputs["completion_mask"].shape
        assert inputs["advantages"].dtype == torch.float32
        np.testing.assert_array_equal(inputs["advantages"].numpy(),
                                      expected_advantages(inputs, generated, varying_credit))
        assert ("ref_per_token_logps" in inputs) == (kl is not None)
    # shaping moves the gradient away from the per-sequence one
    inputs, generated = recorder.losses[-1], recorder.generated[-1]
    shaped = gradient(trainer, inputs)
    baseline = gradient(trainer, with_sequence_advantages(inputs, generated))
    assert (shaped - baseline).abs().max() > 1e-3 * baseline.abs().max()


def test_constant_credit_gives_the_per_sequence_gradient(tiny, tmp_path, monkeypatch):
    recorder = Recorder(monkeypatch)
    trainer = trainer_of(CreditGRPOTrainer, tiny, tmp_path, {"max_steps": 1},
                         credit_fn=constant_credit, shaping_beta=SHAPING_BETA)
    trainer.train()
    inputs, generated = recorder.losses[-1], recorder.generated[-1]
    sequence = with_sequence_advantages(inputs, generated)
    mask = inputs["completion_mask"].bool()
    assert torch.equal(inputs["advantages"][mask],
                       sequence["advantages"][:, None].expand_as(mask)[mask])
    torch.testing.assert_close(gradient(trainer, inputs), gradient(trainer, sequence),
                               rtol=0, atol=0)


def _one_batch(trainer):
    """One real generation batch (what a training step feeds the loss)."""
    rows = [{"prompt": p} for p in PROMPTS[:2] for _ in range(GENERATIONS)]
    trainer.model.train()
    # what the training loop sets before its first loss
    trainer.current_gradient_accumulation_steps = trainer.args.gradient_accumulation_steps
    return trainer._generate_and_score_completions(rows)


@pytest.mark.parametrize("loss_type", LOSS_TYPES)
def test_shaping_acts_for_every_loss_type(tiny, tmp_path, monkeypatch, loss_type):
    recorder = Recorder(monkeypatch)
    trainer = trainer_of(CreditGRPOTrainer, tiny, tmp_path, {"loss_type": loss_type},
                         credit_fn=varying_credit, shaping_beta=SHAPING_BETA)
    inputs = _one_batch(trainer)
    generated = recorder.generated[-1]
    np.testing.assert_array_equal(inputs["advantages"].numpy(),
                                  expected_advantages(inputs, generated, varying_credit))
    shaped = gradient(trainer, inputs)
    baseline = gradient(trainer, with_sequence_advantages(inputs, generated))
    assert (shaped - baseline).abs().max() > 1e-3 * baseline.abs().max()


@pytest.mark.parametrize("loss_type", sorted(set(LOSS_TYPES) - set(PER_TOKEN_GRADIENT_LOSSES)))
def test_refuses_sequence_level_importance_sampling(tiny, tmp_path, loss_type):
    with pytest.raises(ValueError, match="importance_sampling_level='sequence' \\(GSPO\\)"):
        trainer_of(CreditGRPOTrainer, tiny, tmp_path,
                   {"importance_sampling_level": "sequence", "loss_type": loss_type},
                   credit_fn=varying_credit)


def test_why_sequence_level_is_refused(tiny, tmp_path, monkeypatch):
    """GSPO on TRL's own trainer: the shaped advantages give the per-sequence
    gradient (up to float32 rounding of the token sums), so shaping could not
    act there; "cispo" keeps a per-token gradient and is accepted."""
    recorder = Recorder(monkeypatch)
    shaper = trainer_of(CreditGRPOTrainer, tiny, tmp_path, credit_fn=varying_credit,
                        shaping_beta=SHAPING_BETA)
    inputs = _one_batch(shaper)
    generated = recorder.generated[-1]
    gspo = trainer_of(GRPOTrainer, tiny, tmp_path,
                      {"importance_sampling_level": "sequence", "loss_type": "grpo"})
    torch.testing.assert_close(gradient(gspo, inputs),
                               gradient(gspo, with_sequence_advantages(inputs, generated)),
                               rtol=1e-4, atol=1e-6)
    cispo = trainer_of(CreditGRPOTrainer, tiny, tmp_path,
                       {"importance_sampling_level": "sequence", "loss_type": "cispo"},
                       credit_fn=varying_credit)
    shaped = gradient(cispo, inputs)
    baseline = gradient(cispo, with_sequence_advantages(inputs, generated))
    assert (shaped - baseline).abs().max() > 1e-3 * baseline.abs().max()


def test_tool_tokens_are_outside_the_loss_mask(tiny, tmp_path, monkeypatch):
    """With tools TRL's loss mask is completion_mask * tool_mask: tool-result
    tokens get 0 and do not count in the token-weighted projection."""
    generate = GRPOTrainer._generate_and_score_completions

    def with_tool_result(trainer, inputs):
        output = generate(trainer, inputs)
        tool_mask = torch.ones_like(output["completion_mask"])
        tool_mask[:, 1:3] = 0                   # tokens 1 and 2 came from a tool
        output["tool_mask"] = tool_mask
        return output

    monkeypatch.setattr(GRPOTrainer, "_generate_and_score_completions", with_tool_result)
    recorder = Recorder(monkeypatch)
    trainer = trainer_of(CreditGRPOTrainer, tiny, tmp_path, credit_fn=varying_credit,
                         shaping_beta=SHAPING_BETA)
    inputs = _one_batch(trainer)
    base = recorder.generated[-1]["advantages"].double()
    loss_mask = (inputs["completion_mask"] * inputs["tool_mask"]).double()
    adv = inputs["advantages"].double()
    assert (adv[:, 1:3] == 0).all()
    torch.testing.assert_close((adv * loss_mask).sum(1) / loss_mask.sum(1), base,
                               rtol=0, atol=1e-6)


def test_credit_fn_gets_the_reward_keywords_and_is_checked(tiny, tmp_path):
    seen = {}

    def credit_fn(prompts, completions, completion_ids, **kwargs):
        seen.update(kwargs, prompts=prompts, completions=completions)
        return [None] * len(prompts)

    trainer = trainer_of(CreditGRPOTrainer, tiny, tmp_path, credit_fn=credit_fn)
    inputs = _one_batch(trainer)
    assert seen["prompts"] == [p for p in PROMPTS[:2] for _ in range(GENERATIONS)]
    assert {"trainer_state", "log_extra", "log_metric"} <= set(seen)
    # no credit: every token keeps TRL's advantage
    assert inputs["advantages"].shape == inputs["completion_mask"].shape

    trainer = trainer_of(CreditGRPOTrainer, tiny, tmp_path,
                         credit_fn=lambda completion_ids, **k: [None])
    with pytest.raises(ValueError, match="credit_fn returned 1 items for 4 completions"):
        _one_batch(trainer)
    trainer = trainer_of(CreditGRPOTrainer, tiny, tmp_path,
                         credit_fn=lambda completion_ids, **k: [([0], [1.0, 2.0])] * 4)
    with pytest.raises(ValueError, match="credit_fn item 0: token_action has 1 entries"):
        _one_batch(trainer)
    with pytest.raises(TypeError, match="credit_fn must be callable"):
        trainer_of(CreditGRPOTrainer, tiny, tmp_path, credit_fn=3)
    with pytest.raises(ValueError, match="normalize"):
        trainer_of(CreditGRPOTrainer, tiny, tmp_path, credit_fn=varying_credit,
                   normalize="l2")


# --- CreditShaping on arrays -------------------------------------------------------

def test_shaping_rows_without_credit_and_mixed_action_counts(rng):
    base = rng.normal(size=5)
    mask = rng.integers(0, 2, size=(5, 9))
    credits = [(np.array([0, 0, 1, -1]), np.array([1.0, 3.0])), None,
               (np.array([2, 1, 0, 0, 2, 2, -1, -1, 1]), np.array([0.2, -1.0, 4.0])),
               (np.array([-1, -1]), np.zeros(0)),          # no actions at all
               (np.array([1, 0]), np.array([5.0, 5.0]))]   # constant credit
    shaping = CreditShaping(shaping_beta=0.3, kappa=0.7, normalize="maxabs")
    got = shaping.advantages(base, credits, mask)
    flat = (base[:, None] * (mask != 0)).astype(np.float32)
    np.testing.assert_array_equal(got[[1, 3, 4]], flat[[1, 3, 4]])
    for g in (0, 2):
        actions, credit = credits[g]
        token_action = np.full((1, 9), -1)
        token_action[0, :len(actions)] = actions
        counts = fc.token_counts(token_action, len(credit), mask[g:g + 1])
        action_adv = fc.shape_advantages(base[g:g + 1], credit[None], beta=0.3, kappa=0.7,
                                         normalize="maxabs", token_counts=counts)
        np.testing.assert_array_equal(
            got[g], fc.token_advantages(base[g:g + 1], action_adv, token_action,
                                        mask[g:g + 1])[0])


def test_shaping_from_coalition_tables(rng):
    tables = rng.normal(size=(4, 8)).cumsum(1)
    layouts = [rng.integers(-1, 3, size=6) for _ in range(4)]
    mask = np.ones((4, 6))
    base = rng.normal(size=4)
    for rule in ("shapley", "banzhaf", "singleton", "leave_one_out"):
        from_tables = CreditShaping(credit_rule=rule).advantages(
            base, list(zip(layouts, tables)), mask)
        credit = getattr(fc, rule)(tables)
        np.testing.assert_array_equal(
            from_tables, CreditShaping().advantages(base, list(zip(layouts, credit)), mask))


def test_shaping_keeps_each_sequence_token_mean(rng):
    base = rng.normal(size=6)
    mask = rng.integers(0, 2, size=(6, 20))
    mask[:, 0] = 1
    credits = [(rng.integers(-1, 4, size=20), rng.normal(size=4)) for _ in range(6)]
    adv = CreditShaping(shaping_beta=2.0).advantages(base, credits, mask).astype(np.float64)
    np.testing.assert_allclose((adv * mask).sum(1) / mask.sum(1), base, atol=1e-6)
    # and beta = 0 is TRL's advantage exactly
    np.testing.assert_array_equal(
        CreditShaping(shaping_beta=0.0).advantages(base, credits, mask),
        (base[:, None] * mask).astype(np.float32))


@pytest.mark.parametrize("credits, error, match", [
    ([3, None], TypeError, r"credits\[0\] must be None or a pair"),
    ([([0, 5], [1.0, 2.0]), None], ValueError, r"credits\[0\] token_action must be -1"),
    ([([0, 1], [1.0, np.nan]), None], ValueError, r"credits\[0\] credit must be finite"),
    ([None, ([0] * 9, [1.0])], ValueError, r"credits\[1\] token_action must have shape"),
    ([None], ValueError, "credits must have one item per completion"),
    ([None, ([0.5], [1.0])], TypeError, r"credits\[1\] token_action must be an integer"),
])
def test_shaping_refuses_malformed_credits(credits, error, match):
    with pytest.raises(error, match=match):
        CreditShaping().advantages([0.0, 1.0], credits, np.ones((2, 8)))


def test_shaping_refuses_a_table_of_the_wrong_length():
    with pytest.raises(ValueError, match=r"credits\[0\] credit must be a coalition table"):
        CreditShaping(credit_rule="shapley").advantages([0.0], [([0], [1.0, 2.0, 3.0])],
                                                         np.ones((1, 2)))
