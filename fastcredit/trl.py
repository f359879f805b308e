r"""Per-action advantages in TRL's ``GRPOTrainer`` (extra ``trl``).

A GRPO completion made of several actions (query rewrites, tool calls, steps)
gets one advantage :math:`\hat A` on every token. With per-action credit
:math:`c_i` (Shapley over the actions' coalition table, say) the tokens of
action i get instead

.. math:: A_{t} = \hat A + \beta z_i, \qquad
          z = \mathrm{project\_zero\_sum}(\mathrm{normalize}(c - \bar c), \kappa,
          \text{weights} = n)

with :math:`n_i` the action's loss-mask tokens, so :math:`\sum_i n_i z_i = 0`
and the token mean of every completion's advantages stays :math:`\hat A`;
shared tokens (reasoning, formatting) and completions without credit keep
:math:`\hat A`. :math:`\beta` is ``shaping_beta``: GRPOTrainer's own ``beta``
is its KL coefficient, which this module never reads or sets.

* :class:`CreditGRPOTrainer` - ``GRPOTrainer`` with a ``credit_fn`` called
  like a reward function, turning TRL's (B,) advantages into (B, T) ones
  before its loss.
* :class:`CreditShaping` - the shaping options and the conversion itself on
  NumPy arrays, for any trainer.

Supported: TRL >= 1.16, < 1.17 (the ``trl`` extra pins it; another version
warns at import). In TRL 1.16 ``_compute_loss`` takes (B, T) advantages for
every ``loss_type`` ("grpo", "bnpo", "dr_grpo", "dapo", "luspo", "sapo",
"cispo", "vespo"). With ``importance_sampling_level="sequence"`` (GSPO) the
ratio is one per sequence, and for every loss except "cispo" and "vespo" the
gradient then sees only each sequence's token sum of advantages, which the
shaping keeps: the trainer refuses that configuration. See docs/trainers.md.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import torch
import trl
from packaging.version import Version
from trl import GRPOTrainer

from . import tables
from ._params import CREDIT_RULE, KAPPA, NORMALIZE, SHAPING_BETA
from ._validation import as_array, as_sequence, check_bool, int_array, real_array
from .shaping import shape_advantages, token_advantages, token_counts

__all__ = ["CreditShaping", "CreditGRPOTrainer"]

#: TRL versions whose GRPOTrainer this module was checked against.
SUPPORTED_TRL = (Version("1.16"), Version("1.17"))
#: TRL 1.16's loss types; all multiply (B, T) advantages token by token.
LOSS_TYPES = ("grpo", "bnpo", "dr_grpo", "dapo", "luspo", "sapo", "cispo", "vespo")
#: Losses whose gradient is A_t * grad log pi_t (times a detached weight) at
#: either importance-sampling level; the others differentiate the ratio, which
#: is one per sequence under importance_sampling_level="sequence".
PER_TOKEN_GRADIENT_LOSSES = ("cispo", "vespo")

if not SUPPORTED_TRL[0] <= Version(trl.__version__) < SUPPORTED_TRL[1]:
    warnings.warn(f"fastcredit.trl is checked against TRL >= {SUPPORTED_TRL[0]}, "
                  f"< {SUPPORTED_TRL[1]}; found {trl.__version__}: check that its "
                  f"GRPOTrainer._compute_loss still takes (B, T) advantages "
                  f"(docs/trainers.md)", stacklevel=2)


@dataclasses.dataclass(frozen=True)
class CreditShaping:
    r"""How per-action credit becomes per-token advantages.

    Parameters
    ----------
    credit_rule : {None, "shapley", "banzhaf", "singleton", "leave_one_out"}
        None: each completion's credit is per-action credit (m,). A rule: it
        is a coalition table (2**m,) over the actions, and the credit is that
        rule's value (:func:`fastcredit.shapley`, ...).
    shaping_beta : float
        :math:`\beta`, the scale of the per-action offsets (0 gives the
        sequence advantages back exactly).
    kappa : float
        Bound :math:`|z_i| \le \kappa` (>= 0): no action moves more than
        ``shaping_beta * kappa`` from the sequence advantage.
    normalize : {"std", "maxabs", "none"}
        Scale of the centred credit before the projection
        (:func:`fastcredit.shape_advantages`).
    token_weighted : bool
        Weight the projection by each action's loss-mask tokens, so the
        token mean of each completion's advantages stays the sequence
        advantage (True); or plain :math:`\sum_i z_i = 0` (False).

    Raises
    ------
    ValueError
        If ``credit_rule`` or ``normalize`` is not one of its values, or
        ``shaping_beta`` or ``kappa`` is not finite (``kappa`` also if
        negative).
    TypeError
        If ``shaping_beta`` or ``kappa`` is not a real number, or
        ``token_weighted`` is not a bool.

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit.trl import CreditShaping
    >>> shaping = CreditShaping(credit_rule="shapley", shaping_beta=0.1)
    >>> shaping.advantages([0.5], [([0, 1], [0., 1., 2., 4.])], np.ones((1, 2)))
    array([[0.4, 0.6]], dtype=float32)
    """

    credit_rule: str | None = None
    shaping_beta: float = 0.5
    kappa: float = 1.0
    normalize: str = "std"
    token_weighted: bool = True

    def __post_init__(self):
        checked = {"credit_rule": CREDIT_RULE.check(self.credit_rule),
                   "shaping_beta": SHAPING_BETA.check(self.shaping_beta),
                   "kappa": KAPPA.check(self.kappa),
                   "normalize": NORMALIZE.check(self.normalize),
                   "token_weighted": check_bool(self.token_weighted, "token_weighted")}
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    def advantages(self, base, credits, mask) -> np.ndarray:
        r"""The (B, T) float32 advantages of B completions.

        Parameters
        ----------
        base : array_like, shape (B,)
            Sequence advantages (TRL's ``inputs["advantages"]``).
        credits : sequence of B items
            Per completion, None (every token keeps its sequence advantage)
            or a pair ``(token_action, credit)``: ``token_action`` (L,) ints,
            L <= T, the action index of each completion token or -1 for a
            shared one (tokens past L are shared); ``credit`` (m,) finite
            per-action credit, or a coalition table (2**m,) with
            ``credit_rule``. m may differ between completions.
        mask : array_like, shape (B, T)
            The loss mask (TRL: ``completion_mask * tool_mask``); tokens where
            it is 0 get 0 and do not count.

        Returns
        -------
        ndarray, shape (B, T), float32
            :math:`\hat A_g` on shared tokens, :math:`\hat A_g + \beta
            z_{g,i}` on action i's tokens, 0 off the mask.

        Raises
        ------
        ValueError
            If ``base`` is not 1-D; if ``mask`` is not (B, T); if ``credits``
            does not have B items; if a ``token_action`` is not (L,) with
            L <= T or has an entry outside [-1, m); or if a ``credit`` is not
            1-D, not finite, or (with ``credit_rule``) not of length 2**m.
        TypeError
            If ``base`` or a ``credit`` is not a real array; if ``mask`` is
            not a bool or numeric array; if ``credits`` is not a sequence, or
            an item is neither None nor a pair; or if a ``token_action`` is not
            an integer array.

        Examples
        --------
        >>> import numpy as np
        >>> from fastcredit.trl import CreditShaping
        >>> CreditShaping(shaping_beta=0.1).advantages(
        ...     [1.0, -1.0], [([-1, 0, 0, 1], [2.0, 0.0]), None], np.ones((2, 4)))
        array([[ 1.  ,  1.05,  1.05,  0.9 ],
               [-1.  , -1.  , -1.  , -1.  ]], dtype=float32)
        """
        b = real_array(base, "base")
        if b.ndim != 1:
            raise ValueError(f"base must have shape (B,), got {b.shape}")
        n = b.shape[0]
        mk = as_array(mask, "mask")
        if mk.ndim != 2 or mk.shape[0] != n:
            raise ValueError(f"mask must have shape ({n}, T) (one row per base), got {mk.shape}")
        if mk.dtype.kind not in "biuf":
            raise TypeError(f"mask must be a bool or numeric array, got dtype {mk.dtype}")
        mk = mk != 0
        items = as_sequence(credits, "credits", "per-completion credit")
        if len(items) != n:
            raise ValueError(f"credits must have one item per completion ({n}), got {len(items)}")
        n_tok = mk.shape[1]
        by_m: dict[int, list] = {}
        for g, item in enumerate(items):
            if item is not None:
                layout = self._layout(item, f"credits[{g}]", n_tok)
                if layout is not None:
                    by_m.setdefault(layout[1].shape[0], []).append((g,) + layout)
        b64 = b.astype(np.float64)
        res = np.where(mk, b64[:, None], 0.0).astype(np.float32)
        for m, rows in by_m.items():
            idx = np.array([row[0] for row in rows])
            actions = np.stack([row[1] for row in rows])
            credit = np.stack([row[2] for row in rows])
            row_mask = mk[idx]
            counts = token_counts(actions, m, row_mask) if self.token_weighted else None
            action_adv = shape_advantages(b64[idx], credit, beta=self.shaping_beta,
                                          kappa=self.kappa, normalize=self.normalize,
                                          token_counts=counts)
            res[idx] = token_advantages(b64[idx], action_adv, actions, row_mask)
        return res

    def _layout(self, item, name: str, n_tok: int):
        """(token_action (T,) int64, per-action credit (m,)) of one completion,
        or None when it has no action tokens."""
        try:
            raw_actions, raw_credit = item
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be None or a pair (token_action, credit), got "
                            f"{type(item).__name__}") from None
        actions = int_array(raw_actions, f"{name} token_action")
        if actions.ndim != 1 or actions.shape[0] > n_tok:
            raise ValueError(f"{name} token_action must have shape (L,) with L <= {n_tok} "
                             f"(the completion's tokens), got {actions.shape}")
        values = real_array(raw_credit, f"{name} credit")
        if values.ndim != 1:
            raise ValueError(f"{name} credit must be 1-d, got shape {values.shape}")
        if not np.isfinite(values).all():
            raise ValueError(f"{name} credit must be finite (a NaN advantage would reach the "
                             f"policy gradient)")
        if self.credit_rule is not None:
            size = values.shape[0]
            if size < 2 or size & (size - 1):
                raise ValueError(f"{name} credit must be a coalition table of length 2**m, "
                                 f"m >= 1 (credit_rule={self.credit_rule!r}), got length {size}")
            values = getattr(tables, self.credit_rule)(values)
        m = values.shape[0]
        bad = np.flatnonzero((actions < -1) | (actions >= m))
        if bad.size:
            raise ValueError(f"{name} token_action must be -1 (shared) or an action index in "
                             f"[0, {m}); got {actions[bad[0]]} at token {int(bad[0])}")
        if m == 0:
            return None
        padded = np.full(n_tok, -1, dtype=np.int64)
        padded[:actions.shape[0]] = actions
        return padded, values.astype(np.float64)


class CreditGRPOTrainer(GRPOTrainer):
    r"""TRL's ``GRPOTrainer`` with per-action advantages on action tokens.

    Takes every argument of ``GRPOTrainer`` (model, reward functions,
    ``GRPOConfig``, datasets, ...) unchanged, plus:

    Parameters
    ----------
    *args
        Positional arguments of ``GRPOTrainer`` (``model``, ``reward_funcs``,
        ``args``, ...).
    credit_fn : callable
        Called once per generation batch, right after the reward functions
        and with their keywords: ``credit_fn(prompts=..., completions=...,
        completion_ids=..., **dataset_columns, trainer_state=...,
        log_extra=..., log_metric=...)`` (and ``environments=`` when TRL has
        them). Returns one item per completion: None (no per-action credit;
        the completion keeps TRL's advantage on every token) or a pair
        ``(token_action, credit)`` with ``token_action`` of the completion's
        length (``len(completion_ids[g])``), the action index of each token or
        -1 for shared tokens, and ``credit`` the per-action credit (m,) or,
        with ``credit_rule``, the coalition table (2**m,).
    credit_rule, shaping_beta, kappa, normalize, token_weighted
        The shaping: see :class:`CreditShaping` (``shaping_beta`` is the
        credit weight; ``GRPOConfig.beta`` stays the KL coefficient).
    **kwargs
        Keyword arguments of ``GRPOTrainer``, passed on unchanged.

    Attributes
    ----------
    credit_fn : callable
    credit_shaping : CreditShaping

    Raises
    ------
    ValueError
        A ``loss_type`` TRL 1.16 does not have, or
        ``importance_sampling_level="sequence"`` (GSPO) with a loss other than
        "cispo" and "vespo", where per-token advantages cannot change the
        gradient; or a shaping option :class:`CreditShaping` refuses. During
        training: ``credit_fn`` returning a number of items other than one
        per completion, or a ``token_action`` whose length is not the
        completion's.
    TypeError
        If ``credit_fn`` is not callable (checked before the model is
        loaded), or a shaping option has the wrong type; during training, a
        ``credit_fn`` item that is neither None nor a pair.

    Notes
    -----
    TRL's (B,) advantages (group-normalised, this process's slice) are
    replaced in ``_generate_and_score_completions`` by
    ``credit_shaping.advantages(A_hat, credits, completion_mask * tool_mask)``
    (the mask ``_compute_loss`` applies). TRL logs its advantage statistics
    before the replacement. Per-token advantages also make the sign tests of
    ``off_policy_mask_threshold`` and of the "sapo"/"vespo" weights per token.

    Examples
    --------
    ``credit_fn`` is checked before ``GRPOTrainer`` loads anything:

    >>> from fastcredit.trl import CreditGRPOTrainer
    >>> CreditGRPOTrainer(model=None, credit_fn=3.0)
    Traceback (most recent call last):
    ...
    TypeError: credit_fn must be callable, got float

    Training, with a ``credit_fn`` returning coalition tables
    (docs/trainers.md has the whole recipe)::

        def credit_fn(prompts, completions, completion_ids, **kwargs):
            out = []
            for text, ids in zip(completions, completion_ids):
                spans = find_rewrites(text, ids)      # your parser: the m actions' tokens
                if spans is None:
                    out.append(None)                  # TRL's advantage on every token
                    continue
                token_action = np.full(len(ids), -1)  # -1: shared token
                for i, (start, stop) in enumerate(spans):
                    token_action[start:stop] = i
                out.append((token_action, coalition_table(text)))   # (2**m,)
            return out

        trainer = CreditGRPOTrainer(
            model="Qwen/Qwen2.5-0.5B-Instruct", reward_funcs=reward_fn,
            args=GRPOConfig(...), train_dataset=dataset,
            credit_fn=credit_fn, credit_rule="shapley", shaping_beta=0.5)
        trainer.train()
    """

    def __init__(self, *args, credit_fn, credit_rule=None, shaping_beta=0.5, kappa=1.0,
                 normalize="std", token_weighted=True, **kwargs):
        if not callable(credit_fn):
            raise TypeError(f"credit_fn must be callable, got {type(credit_fn).__name__}")
        shaping = CreditShaping(credit_rule=credit_rule, shaping_beta=shaping_beta,
                                kappa=kappa, normalize=normalize,
                                token_weighted=token_weighted)
        super().__init__(*args, **kwargs)
        if self.loss_type not in LOSS_TYPES:
            raise ValueError(f"loss_type {self.loss_type!r} is not one of TRL 1.16's "
                             f"{LOSS_TYPES}, for which fastcredit.trl checked that "
                             f"_compute_loss takes (B, T) advantages")
        if (self.importance_sampling_level == "sequence"
                and self.loss_type not in PER_TOKEN_GRADIENT_LOSSES):
            raise ValueError(
                f"importance_sampling_level='sequence' (GSPO) with loss_type="
                f"{self.loss_type!r}: the importance ratio is one per sequence, so the "
                f"gradient sees only each sequence's token sum of advantages, which "
                f"per-action shaping leaves unchanged; use importance_sampling_level="
                f"'token', or loss_type 'cispo' or 'vespo'")
        self.credit_fn = credit_fn
        self.credit_shaping = shaping
        self._credit_of_batch = None

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        # the dataset columns, as TRL hands them to reward functions
        skip = ("prompt", "completion", "completion_ids")
        kwargs = {key: [example[key] for example in inputs] for key in inputs[0] if key not in skip}
        kwargs.update(trainer_state=self.state, log_extra=self._log_completion_extra,
                      log_metric=self._log_metric)
        if self.environments is not None:
            kwargs["environments"] = self.environments
        credits = self.credit_fn(prompts=prompts, completions=completions,
                                 completion_ids=completion_ids_list, **kwargs)
        credits = as_sequence(credits, "the value of credit_fn", "per-completion credit")
        if len(credits) != len(prompts):
            raise ValueError(f"credit_fn returned {len(credits)} items for {len(prompts)} "
                             f"completions (one per completion, None for no credit)")
        for g, item in enumerate(credits):
            if item is None:
                continue
            try:
                n_actions = len(item[0])
            except (TypeError, IndexError, KeyError):
                raise TypeError(f"credit_fn item {g} must be None or a pair (token_action, "
                                f"credit), got {type(item).__name__}") from None
            if n_actions != len(completion_ids_list[g]):
                raise ValueError(f"credit_fn item {g}: token_action has {n_actions} entries, "
                                 f"the completion {len(completion_ids_list[g])} tokens")
        self._credit_of_batch = credits
        return rewards

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        credits, self._credit_of_batch = self._credit_of_batch, None
        base = output["advantages"]
        mask = output["completion_mask"]
        if "tool_mask" in output:
            mask = mask * output["tool_mask"]
        shaped = self.credit_shaping.advantages(base.detach().float().cpu().numpy(), credits,
                                                mask.detach().cpu().numpy())
        output["advantages"] = torch.from_numpy(shaped).to(base.device)
        return output
