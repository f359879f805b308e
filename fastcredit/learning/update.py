"""Training the set benchmark's policy: group-relative policy gradient with
per-action advantages from a credit rule (:func:`train_policy`)."""
from __future__ import annotations

import numpy as np

from .. import _params
from .._params import (BATCH, BETA, CREDIT, GROUP, KAPPA, LEARNING_RATE, MODE, SEED, STEPS,
                       THREADS)
from .._validation import check_memory
from ..auction import Pools, auction_replay
from ..shaping import group_advantages, shape_advantages
from ..tables import banzhaf, leave_one_out, shapley, singleton
from .policies import Policy, _feature_scale, _sample, _set_masks
from .tasks import _check_m, _check_task, _kernels

__all__ = ["CREDITS", "train_policy"]

#: The per-action advantages compared, in the order results are reported.
CREDITS = _params.CREDIT.values

_RULES = {"singleton": singleton, "leave_one_out": leave_one_out, "banzhaf": banzhaf,
          "shapley": shapley}
_ADAM = (0.9, 0.999, 1e-8)


def _sub_tables(task, req, chosen, evaluator, threads):
    """(N, 2**m) tables of the sampled sets ``chosen`` (N, m) ascending, of
    requests ``req`` (N,), under the evaluator."""
    n, m = chosen.shape
    if evaluator == "rerun":
        member = (np.arange(1 << m)[None, :] >> np.arange(m)[:, None]) & 1
        return task.values[req[:, None], (np.int64(1) << chosen) @ member]
    p, k = task.pools, task.rewrites
    rows = (req[:, None] * k + chosen).ravel()
    starts = p.offsets[rows]
    lengths = p.offsets[rows + 1] - starts
    offsets = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    take = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
    sets = Pools._adopt(offsets, p.ad_id[take], p.score[take], p.value[take], m=m,
                        prerank=None if p.prerank is None else p.prerank[take])
    return auction_replay(sets, task.slots, task.reserve, task.capacity, task.pricing,
                          mode="filter", threads=threads)


def _action_advantages(task, req, order, rewards, group, credit, beta, kappa, evaluator,
                       threads):
    """(N, m) advantage of each drawn action, in drawn order."""
    base = group_advantages(rewards, group_size=group)
    if credit == "broadcast":
        return np.repeat(base[:, None], order.shape[1], axis=1)
    perm = np.argsort(order, axis=1)
    chosen = np.take_along_axis(order, perm, axis=1)
    table = _sub_tables(task, req, chosen, evaluator, threads)
    shaped = shape_advantages(base, _RULES[credit](table, threads=threads), beta=beta,
                              kappa=kappa, threads=threads)
    adv = np.empty_like(shaped)
    np.put_along_axis(adv, perm, shaped, axis=1)
    return adv


def train_policy(task, credit: str = "shapley", *, m: int = 5, steps: int = 300,
                 batch: int = 32, group: int = 8, lr: float = 0.05, beta: float = 1.0,
                 kappa: float = 1.0, evaluator: str = "filter", seed: int = 0,
                 threads=None) -> Policy:
    r"""Train a linear Plackett-Luce policy by group-relative policy gradient.

    Starting from :math:`\theta = 0`, each of ``steps`` updates draws
    ``batch`` requests (a fresh random permutation of the task's requests per
    pass), ``group`` sets of m rewrites per request from the policy, rewards
    them with their set value, turns them into per-action advantages by
    ``credit`` (module docstring) and takes an Adam step (``lr``; 0.9,
    0.999, 1e-8) up the mean of :math:`\sum_t A_{j_t} \nabla_\theta \log
    \pi(j_t \mid \text{left})`.

    Parameters
    ----------
    task : LearningTask
        The training requests.
    credit : {"broadcast", "singleton", "leave_one_out", "banzhaf", "shapley"}
        The per-action advantage (module docstring).
    m : int
        Rewrites chosen per request, 1 <= m < K.
    steps, batch, group : int
        Updates, requests per update (at most the task's), sets per request.
    lr : float
        Adam step size.
    beta, kappa : float
        Scale and bound of the zero-sum offsets (:func:`fastcredit.shape_advantages`).
    evaluator : {"filter", "rerun"}
        How the credit of a sampled set is computed: the filter replay of the
        chosen rewrites' pools (needs a task built by
        :meth:`LearningTask.from_pools`), or the sub-table of ``task.values``.
    seed : int
        Fixes the batches and the sampled sets; the same seed gives the same
        policy, on any thread count.
    threads : int, optional
        Threads of the replay, credit and shaping kernels.

    Returns
    -------
    Policy
        The trained weights, with the mean reward and weights of every
        update.

    Raises
    ------
    TypeError
        If ``task`` is not a LearningTask, an integer argument (``m``,
        ``steps``, ``batch``, ``group``, ``seed``, ``threads``) is not an
        integer, or ``lr``, ``beta`` or ``kappa`` is not a real number.
    ValueError
        If ``credit`` or ``evaluator`` is not one of its values, ``m`` is not
        in [1, K), ``steps`` or ``batch`` is not in [1, 2**24] (or ``batch``
        exceeds the task's requests), ``group`` is not in [2, 2**16],
        ``lr`` is not in [0, 1000], ``beta`` is not finite, ``kappa`` is
        negative or not finite, ``seed`` is outside [0, 2**64), ``threads``
        is below 1, ``evaluator="filter"`` needs pools the task does not
        have, or the sampled sets or the history would not fit in memory.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.tile(np.array([0., 1., 0., 1., 0., 1., 0., 1.]), (4, 1))   # rewrite 0 pays
    >>> task = fc.learning.LearningTask(v, np.tile(np.eye(3), (4, 1, 1)))
    >>> policy = fc.learning.train_policy(task, m=1, steps=50, batch=4, lr=0.2,
    ...                                   evaluator="rerun")
    >>> int(np.argmax(policy.theta))
    0
    """
    _check_task(task)
    credit = CREDIT.check(credit)
    m = _check_m(m, task)
    steps = STEPS.check(steps)
    batch = BATCH.check(batch)
    if batch > task.n_requests:
        raise ValueError(f"batch must be at most the task's {task.n_requests} requests, "
                         f"got {batch}")
    group = GROUP.check(group)
    lr = LEARNING_RATE.check(lr)
    beta, kappa = BETA.check(beta), KAPPA.check(kappa)
    evaluator = MODE.check(evaluator, "evaluator")
    if evaluator == "filter" and task.pools is None and credit != "broadcast":
        raise ValueError("evaluator 'filter' replays the chosen rewrites' pools: build the "
                         "task with LearningTask.from_pools, or use evaluator='rerun'")
    seed, threads = SEED.check(seed), THREADS.check(threads)
    check_memory(8 * batch * group * (task.rewrites * (task.n_features + 3) + (1 << m)),
                 f"batch = {batch:,} and group = {group:,} (the sampled sets of an update)")
    check_memory(8 * steps * (task.n_features + 1),
                 f"steps = {steps:,} (the weights and mean reward after each update)")
    kern = _kernels()
    scale = _feature_scale(task.features)
    features = task.features / scale
    theta, mom, vel = (np.zeros(task.n_features) for _ in range(3))
    b1, b2, eps = _ADAM
    rng = np.random.default_rng(seed)
    perm, cursor = rng.permutation(task.n_requests), 0
    rewards_seen = np.empty(steps)
    history = np.empty((steps, task.n_features))
    n = batch * group
    logp, grad = np.empty(n), np.empty((n, task.rewrites))
    for step in range(steps):
        if cursor + batch > task.n_requests:
            perm, cursor = rng.permutation(task.n_requests), 0
        reqs = perm[cursor:cursor + batch]
        cursor += batch
        feats = features[reqs]
        logits = feats @ theta
        order = _sample(logits, m, rng.gumbel(size=(batch, group, task.rewrites)))
        order = order.reshape(n, m)
        req = np.repeat(reqs, group)
        rewards = task.values[req, _set_masks(order)]
        rewards_seen[step] = rewards.mean()
        adv = _action_advantages(task, req, order, rewards, group, credit, beta, kappa,
                                 evaluator, threads)
        kern.plackett_luce(np.repeat(logits, group, axis=0), order, adv, logp, grad)
        g = np.einsum("bgk,bkd->d", grad.reshape(batch, group, -1), feats) / n
        mom = b1 * mom + (1 - b1) * g
        vel = b2 * vel + (1 - b2) * g * g
        theta = theta + lr * (mom / (1 - b1 ** (step + 1))) / (
            np.sqrt(vel / (1 - b2 ** (step + 1))) + eps)
        history[step] = theta
    return Policy(theta, scale, credit, rewards_seen, history)

