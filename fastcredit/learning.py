r"""Does credit help a policy learn? A credit-assignment learning benchmark.

The set-intervention paper trains a query-rewriting policy whose m rewrites
are merged into one auction, with per-action advantages from a credit rule,
and reports the held-out set value of each rule (its Table 3). This module
is that experiment at a scale NumPy and Numba run in seconds.

**Setting.** Each request has K candidate rewrites, each with its cached
candidate ad pool (:class:`fastcredit.Pools` with ``m = K``). A policy picks
m < K distinct rewrites per request; the *set value* of a choice S is the
auction replay of S's pools, :math:`y(S)`, read from the request's
:math:`2^K` table under ``mode="rerun"`` (the pipeline run on the pool of S
alone: what the production auction does with exactly those rewrites),
computed once per request by :func:`fastcredit.auction_replay`.

**Policy.** Linear over per-rewrite features (:func:`rewrite_features`,
scaled by their standard deviation over the training rewrites),
:math:`\ell_j = \theta^\top f_j / \sigma`, so it applies to requests it never
saw. A set is drawn as a Plackett-Luce ordering (sequential softmax without
replacement): :math:`\pi(j_1..j_m) = \prod_t e^{\ell_{j_t}} / \sum_{k \notin
\{j_1..j_{t-1}\}} e^{\ell_k}`, sampled exactly by adding Gumbel noise to the
logits and taking the m largest. The initial policy is :math:`\theta = 0`
(uniform random sets).

**Training** (:func:`train_policy`): group-relative policy gradient. Each
update takes ``batch`` training requests and ``group`` sampled sets per
request; rewards :math:`r_g = y(S_g)`; the set advantage is GRPO's
:math:`\hat A_g` (:func:`fastcredit.group_advantages`). Per-action
advantages :math:`A_{g,i}`:

* ``"broadcast"``: :math:`\hat A_g` for every action of the set;
* ``"singleton"``, ``"leave_one_out"``, ``"banzhaf"``, ``"shapley"``:
  :math:`\hat A_g + \beta z_{g,i}` with z the bounded zero-sum projection of
  the rule's standardised credit (:func:`fastcredit.shape_advantages`);
  Shapley with this shaping is the paper's CASI. The same shaping for every
  rule, so the rules differ only in their credit.

The credit of a sampled set S is computed on S's own :math:`2^m` table under
the *training evaluator* ``evaluator="filter"`` (the paper's design: the
downstream pipeline is run once on the pool of the m chosen rewrites and its
ranked list filtered per sub-coalition; a replay of the chosen sets' pools
per update), or ``"rerun"`` (the sub-table of the request's rerun table: the
exact counterfactual). The reward is the rerun value either way, because it
is what the chosen set really earns, and both evaluators agree on it: the
filter table of S at S itself is the pipeline on S's pool. The update
ascends :math:`\sum_{g,t} A_{g,j_t} \nabla_\theta \log \pi(j_t \mid
\text{rewrites left})` (:func:`plackett_luce`), averaged over the batch,
with Adam.

**Evaluation** (:func:`policy_value`): the policy's expected set value on
held-out requests, estimated with ``eval_samples`` sampled sets per request
from one fixed noise draw (common random numbers: every policy, and the
initial one, is scored on the same Gumbel noise).

Everything is deterministic per seed, on any thread count.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from . import _params, synthetic
from ._params import (ACTIONS, BATCH, BETA, CAPACITY, CREDIT, EVAL_SAMPLES, GROUP, HELD_OUT,
                      KAPPA, LEARNING_RATE, MODE, PRICING, RESERVE, REWRITES, RUNS, SEED,
                      SLOTS, STEPS, THREADS)
from ._validation import (as_sequence, check_memory, float64_array, frozen, int_array, owned,
                          real_array)
from .auction import Pools, auction_replay
from .shaping import group_advantages, shape_advantages
from .tables import banzhaf, leave_one_out, shapley, singleton

__all__ = ["FEATURES", "CREDITS", "LearningTask", "Policy", "BenchmarkResult",
           "rewrite_features", "plackett_luce", "train_policy", "policy_value", "benchmark",
           "benchmark_pools"]

#: What :func:`rewrite_features` computes for each rewrite, in column order.
FEATURES = ("log1p(distinct ads)", "asinh(top score)", "asinh(sum of top-slots scores)",
            "share of its ads no other rewrite retrieved",
            "asinh(sum of its top-slots scores of such ads)")
#: The per-action advantages compared, in the order results are reported.
CREDITS = _params.CREDIT.values

_RULES = {"singleton": singleton, "leave_one_out": leave_one_out, "banzhaf": banzhaf,
          "shapley": shapley}
_ADAM = (0.9, 0.999, 1e-8)


def _kernels():
    from ._jit import learning
    return learning


# --- data ----------------------------------------------------------------------

def rewrite_features(pools, slots: int = 4) -> np.ndarray:
    """Features of every candidate rewrite, from the pools alone (what a
    policy sees before any auction is run).

    For rewrite j of a request, over the distinct ads it retrieved (an ad's
    best-scoring instance), in the order of :data:`FEATURES`:

    0. :math:`\\log(1 + n_j)`, n_j its distinct ads;
    1. asinh of its top score;
    2. asinh of the sum of its ``slots`` best scores (what it could win alone);
    3. the share of its distinct ads no other rewrite of the request retrieved;
    4. asinh of the sum of the scores of those of its ``slots`` best ads that
       no other rewrite retrieved (what it adds to the others).

    An empty rewrite has all five 0.

    Parameters
    ----------
    pools : Pools
        B requests of K candidate rewrites.
    slots : int
        Auction slots (the top-N of the replay).

    Returns
    -------
    ndarray, shape (B, K, 5), float64

    Examples
    --------
    >>> import fastcredit as fc
    >>> pools = fc.Pools([0, 2, 3], ad_id=[7, 8, 7], score=[3., 1., 2.], value=[1., 1., 1.], m=2)
    >>> fc.learning.rewrite_features(pools, slots=1)[0, :, 3]   # ad 8 is rewrite 0's own
    array([0.5, 0. ])
    """
    if not isinstance(pools, Pools):
        raise TypeError(f"pools must be a fastcredit.Pools, got {type(pools).__name__}")
    slots = SLOTS.check(slots)
    kern = _kernels()
    shape = (pools.n_requests, pools.m, kern.N_FEATURES)
    check_memory(8 * int(np.prod(shape)), f"pools ({pools.n_requests:,} requests: their features)")
    out = np.empty(shape)
    kern.rewrite_features(pools.offsets, pools.ad_id, pools.score, pools.m, slots, out)
    return out


class LearningTask:
    """Requests a policy learns on: set values, rewrite features, and the
    pools the ``"filter"`` training evaluator replays.

    Parameters
    ----------
    values : array_like, shape (B, 2**K)
        ``values[r, S]`` = what request r earns when the rewrites in the
        bitmask S are chosen (the reward); finite.
    features : array_like, shape (B, K, d)
        Features of each candidate rewrite; finite.
    pools : Pools, optional
        The requests' candidate pools (``m = K``), needed by
        ``evaluator="filter"``; build with :meth:`from_pools`.
    slots, reserve, capacity, pricing
        The auction of the filter evaluator (:func:`fastcredit.auction_replay`).

    The task is immutable and owns its arrays, as :class:`fastcredit.Pools`
    does: ``values`` and ``features`` are stored read-only, copied when they
    may share memory with the caller's.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.array([[0., 1., 0., 1.]])           # rewrite 0 carries the value
    >>> task = fc.learning.LearningTask(v, np.eye(2)[None])
    >>> task.n_requests, task.rewrites, task.n_features
    (1, 2, 2)
    """

    __slots__ = ("values", "features", "pools", "slots", "reserve", "capacity", "pricing")

    def __init__(self, values, features, pools=None, *, slots: int = 4, reserve: float = 0.0,
                 capacity=None, pricing: str = "first"):
        self._fill(values, features, pools, slots, reserve, capacity, pricing, adopt=False)

    @classmethod
    def _adopt(cls, values, features, pools, slots, reserve, capacity,
               pricing) -> "LearningTask":
        """The task of arrays nothing else will write (the library's new
        arrays, or views of another task's): validated, not copied."""
        task = object.__new__(cls)
        task._fill(values, features, pools, slots, reserve, capacity, pricing, adopt=True)
        return task

    def _fill(self, values, features, pools, slots, reserve, capacity, pricing, adopt):
        v = float64_array(values, "values")
        if v.ndim != 2 or v.shape[1] < 4 or v.shape[1] & (v.shape[1] - 1):
            raise ValueError(f"values must have shape (B, 2**K) with K >= 2, got {v.shape}")
        k = v.shape[1].bit_length() - 1
        REWRITES.check(k, "K (values has 2**K columns)")
        f = float64_array(features, "features")
        if f.ndim != 3 or f.shape[:2] != (v.shape[0], k) or f.shape[2] < 1:
            raise ValueError(f"features must have shape ({v.shape[0]}, {k}, d) with d >= 1 "
                             f"(values is {v.shape}), got {f.shape}")
        if not adopt:
            # checked below and read by every training step: never the caller's memory
            v = owned(v, values, f"values (the copy the task keeps of its {v.size:,} entries)")
            f = owned(f, features, f"features (the copy the task keeps of its {f.size:,} "
                                    f"entries)")
        for name, arr in (("values", v), ("features", f)):
            if not np.isfinite(arr).all():
                raise ValueError(f"{name} must be finite")
        if pools is not None:
            if not isinstance(pools, Pools):
                raise TypeError(f"pools must be a fastcredit.Pools, got {type(pools).__name__}")
            if (pools.n_requests, pools.m) != (v.shape[0], k):
                raise ValueError(f"pools must hold {v.shape[0]} requests of m = {k} rewrites "
                                 f"like values, got {pools.n_requests} of m = {pools.m}")
        self.values, self.features, self.pools = frozen(v), frozen(f), pools
        self.slots = SLOTS.check(slots)
        self.reserve = RESERVE.check(reserve)
        self.capacity = CAPACITY.check(capacity)
        self.pricing = PRICING.check(pricing)  # last: it marks the task complete

    def __setattr__(self, name, value):
        if hasattr(self, "pricing"):
            raise AttributeError("LearningTask is immutable")
        object.__setattr__(self, name, value)

    def __reduce__(self):
        # unpickled arrays are new and writeable: adopt them, read-only again
        return LearningTask._adopt, (self.values, self.features, self.pools, self.slots,
                                     self.reserve, self.capacity, self.pricing)

    @classmethod
    def from_pools(cls, pools, *, slots: int = 4, reserve: float = 0.0, capacity=None,
                   pricing: str = "first", threads=None) -> "LearningTask":
        """The task of requests with K candidate rewrites: values are their
        rerun tables (:func:`fastcredit.auction_replay`, ``mode="rerun"``),
        features :func:`rewrite_features`.

        Examples
        --------
        >>> import fastcredit as fc
        >>> task = fc.learning.LearningTask.from_pools(fc.synthetic.sponsored_search(3, m=6))
        >>> task.values.shape, task.features.shape
        ((3, 64), (3, 6, 5))
        """
        if not isinstance(pools, Pools):
            raise TypeError(f"pools must be a fastcredit.Pools, got {type(pools).__name__}")
        REWRITES.check(pools.m, "pools.m")
        values = auction_replay(pools, slots, reserve, capacity, pricing, mode="rerun",
                                threads=threads)
        if not np.isfinite(values).all():
            raise ValueError("pools must have finite values (a set value is not finite)")
        return cls._adopt(values, rewrite_features(pools, slots), pools, slots=slots,
                          reserve=reserve, capacity=capacity, pricing=pricing)

    @property
    def n_requests(self) -> int:
        return self.values.shape[0]

    @property
    def rewrites(self) -> int:
        """K, the candidate rewrites per request."""
        return self.features.shape[1]

    @property
    def n_features(self) -> int:
        return self.features.shape[2]

    def requests(self, start: int, stop: int) -> "LearningTask":
        """The task of requests start .. stop - 1.

        Examples
        --------
        >>> import fastcredit as fc
        >>> task = fc.learning.LearningTask.from_pools(fc.synthetic.sponsored_search(5, m=4))
        >>> task.requests(1, 3).n_requests
        2
        """
        n = self.n_requests
        start, stop = (_params.Integer("start", 0, n, "").check(start),
                       _params.Integer("stop", 0, n, "").check(stop))
        if stop < start:
            raise ValueError(f"stop must be >= start, got start = {start}, stop = {stop}")
        pools = None
        if self.pools is not None:
            k, p = self.rewrites, self.pools
            off = p.offsets[start * k:stop * k + 1]
            lo, hi = int(off[0]), int(off[-1])
            pools = Pools._adopt(off - lo, p.ad_id[lo:hi], p.score[lo:hi], p.value[lo:hi], m=k,
                                 prerank=None if p.prerank is None else p.prerank[lo:hi])
        return LearningTask._adopt(self.values[start:stop], self.features[start:stop], pools,
                                   slots=self.slots, reserve=self.reserve,
                                   capacity=self.capacity, pricing=self.pricing)

    def __repr__(self) -> str:
        return (f"LearningTask(n_requests={self.n_requests}, rewrites={self.rewrites}, "
                f"n_features={self.n_features}, pools={self.pools is not None})")


def benchmark_pools(n_requests: int, rewrites: int = 10, seed: int = 0, *,
                    preset: str = "realistic") -> Pools:
    """The benchmark's data: ``n_requests`` synthetic requests of
    ``rewrites`` candidate rewrites each,
    :func:`fastcredit.synthetic.sponsored_search` with the generator
    ``preset`` (replay them with ``fastcredit.synthetic.search_preset(preset).replay``).

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.learning.benchmark_pools(4, rewrites=8).m
    8
    """
    rewrites = REWRITES.check(rewrites)
    return synthetic.sponsored_search(n_requests, m=rewrites, seed=seed, preset=preset)


# --- the policy ------------------------------------------------------------------

def plackett_luce(logits, order, weights=None):
    r"""Weighted Plackett-Luce log-probability of orderings and its gradient.

    .. math:: L_n = \sum_{t=0}^{m-1} w_{n,t} \Big(\ell_{n,j_t} - \log
              \sum_{k \notin \{j_0..j_{t-1}\}} e^{\ell_{n,k}}\Big)

    With ``weights`` None (all 1) :math:`L_n` is the log-probability of
    drawing rewrites :math:`j_0, .., j_{m-1}` in this order by sequential
    softmax without replacement; with per-action advantages it is the
    policy-gradient surrogate of :func:`train_policy`.

    Parameters
    ----------
    logits : array_like, shape (..., K)
        Finite, float64 or float32.
    order : array_like of int, shape (..., m)
        m <= K distinct indices in [0, K) per row, in the order drawn.
    weights : array_like, shape (..., m), optional

    Returns
    -------
    (L, grad) : ndarray (...) and ndarray (..., K), float64
        grad[n] = dL_n / d logits[n].

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> logp, grad = fc.learning.plackett_luce(np.zeros((1, 3)), [[2, 0]])
    >>> round(float(np.exp(logp[0])), 4)          # 1/3 * 1/2
    0.1667
    """
    lg = float64_array(logits, "logits")
    if lg.ndim < 1 or lg.shape[-1] < 1:
        raise ValueError(f"logits must have shape (..., K) with K >= 1, got {lg.shape}")
    if not np.isfinite(lg).all():
        raise ValueError("logits must be finite")
    lead, k = lg.shape[:-1], lg.shape[-1]
    od = int_array(order, "order")
    if od.shape[:-1] != lead or od.ndim != lg.ndim or od.shape[-1] > k:
        raise ValueError(f"order must have shape {lead} + (m,) with m <= {k} (logits is "
                         f"{lg.shape}), got {od.shape}")
    if od.size and (od.min() < 0 or od.max() >= k):
        raise ValueError(f"order must hold indices in [0, {k}), got "
                         f"{od.min() if od.min() < 0 else od.max()}")
    n, m = int(np.prod(lead)), od.shape[-1]
    od = od.reshape(n, m)
    if m > 1:
        s = np.sort(od, axis=1)
        dup = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if dup.size:
            raise ValueError(f"order must hold distinct indices per row: row "
                             f"{np.unravel_index(int(dup[0]), lead)} repeats one")
    if weights is None:
        w = np.ones((n, m))
    else:
        w = float64_array(weights, "weights")
        if w.shape != lead + (m,):
            raise ValueError(f"weights must have order's shape {lead + (m,)}, got {w.shape}")
    check_memory(8 * n * (k + 1), f"logits (shape {lg.shape}: the gradient)")
    logp, grad = np.empty(n), np.empty((n, k))
    _kernels().plackett_luce(np.ascontiguousarray(lg.reshape(n, k)), od,
                             np.ascontiguousarray(w.reshape(n, m)), logp, grad)
    return logp.reshape(lead), grad.reshape(lg.shape)


@dataclass(frozen=True)
class Policy:
    """A linear Plackett-Luce policy: logits ``features @ (theta / scale)``.

    theta : (d,) float64, the weights learned.
    scale : (d,) float64, the features' sd over the training rewrites
        (1 where it is 0).
    credit : str, the per-action advantage it was trained with ("initial":
        not trained).
    rewards : (steps,) float64, the mean sampled set value of each update.
    history : (steps, d) float64, the weights after each update
        (``history[-1]`` is theta).
    """

    theta: np.ndarray
    scale: np.ndarray
    credit: str
    rewards: np.ndarray
    history: np.ndarray

    def logits(self, features) -> np.ndarray:
        """(..., K) logits of the rewrites of (..., K, d) features."""
        f = float64_array(features, "features")
        d = self.theta.shape[0]
        if f.ndim < 2 or f.shape[-1] != d:
            raise ValueError(f"features must have shape (..., K, {d}) for this policy's {d} "
                             f"weights, got {f.shape}")
        return f @ (self.theta / self.scale)

    def after(self, updates: int) -> "Policy":
        """The policy as it was after its first ``updates`` updates (0: the
        initial policy).

        Examples
        --------
        >>> import fastcredit as fc, numpy as np
        >>> task = fc.learning.LearningTask(np.array([[0., 1., 0., 1.]]), np.eye(2)[None])
        >>> policy = fc.learning.train_policy(task, m=1, steps=3, batch=1, evaluator="rerun")
        >>> np.array_equal(policy.after(3).theta, policy.theta), policy.after(0).theta
        (True, array([0., 0.]))
        """
        n = _params.Integer("updates", 0, self.history.shape[0], "").check(updates)
        theta = self.history[n - 1] if n else np.zeros_like(self.theta)
        return Policy(theta, self.scale, self.credit, self.rewards[:n], self.history[:n])

    @classmethod
    def initial(cls, task) -> "Policy":
        """theta = 0: uniform random sets, with ``task``'s feature scale."""
        _check_task(task)
        return cls(np.zeros(task.n_features), _feature_scale(task.features), "initial",
                   np.empty(0), np.empty((0, task.n_features)))


def _check_task(task):
    if not isinstance(task, LearningTask):
        raise TypeError(f"task must be a fastcredit.learning.LearningTask, got "
                        f"{type(task).__name__}")


def _feature_scale(features):
    sd = features.reshape(-1, features.shape[-1]).std(axis=0)
    return np.where(sd > 0, sd, 1.0)


def _check_m(m, task):
    m = ACTIONS.check(m)
    if m >= task.rewrites:
        raise ValueError(f"m must be less than the {task.rewrites} candidate rewrites, got {m}")
    return m


def _sample(logits, m, noise):
    """Plackett-Luce orderings (rows, group, m) of m of the K rewrites:
    the m largest of logits + Gumbel noise, in descending order."""
    keys = logits[:, None, :] + noise
    return np.argsort(-keys, axis=-1, kind="stable")[..., :m]


def _set_masks(order):
    return (np.int64(1) << order).sum(axis=-1)


# --- training --------------------------------------------------------------------

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


# --- evaluation ------------------------------------------------------------------

def policy_value(task, policy, *, m: int = 5, samples: int = 64, seed: int = 0) -> float:
    """The policy's expected set value on the task's requests: the mean over
    requests and ``samples`` sampled sets per request of ``task.values``.
    The noise is fixed by ``seed`` alone, so policies scored with one seed
    are compared on the same draws (common random numbers).

    Returns NaN for a task of no requests.

    Parameters
    ----------
    task : LearningTask
    policy : Policy
        With as many weights as the task has features.
    m : int
        Rewrites per set, 1 <= m < K.
    samples : int
        Sets sampled per request.
    seed : int

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.array([[0., 1., 0., 1.]])
    >>> task = fc.learning.LearningTask(v, np.eye(2)[None])
    >>> fc.learning.policy_value(task, fc.learning.Policy.initial(task), m=1, samples=1000)
    0.468
    """
    _check_task(task)
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be a fastcredit.learning.Policy, got "
                        f"{type(policy).__name__}")
    theta = real_array(policy.theta, "policy.theta")
    scale = real_array(policy.scale, "policy.scale")
    d = task.n_features
    if theta.shape != (d,) or scale.shape != (d,):
        raise ValueError(f"policy must have {d} weights and scales like the task's features, "
                         f"got {theta.shape} and {scale.shape}")
    if not (np.isfinite(theta).all() and np.isfinite(scale).all() and (scale > 0).all()):
        raise ValueError("policy must have finite weights and positive finite scales")
    m = _check_m(m, task)
    samples = EVAL_SAMPLES.check(samples, "samples")
    seed = SEED.check(seed)
    rows = max(1, min(task.n_requests, (1 << 22) // (samples * task.rewrites)))
    rng = np.random.default_rng(seed)
    total = 0.0
    for a in range(0, task.n_requests, rows):
        b = min(task.n_requests, a + rows)
        noise = rng.gumbel(size=(b - a, samples, task.rewrites))
        order = _sample(task.features[a:b] @ (theta / scale), m, noise)
        total += task.values[np.arange(a, b)[:, None], _set_masks(order)].sum()
    return float(total / (task.n_requests * samples)) if task.n_requests else float("nan")


# --- the benchmark ---------------------------------------------------------------

@dataclass(frozen=True)
class BenchmarkResult:
    """What :func:`benchmark` measured.

    credits : tuple of str, the per-action advantages compared.
    checkpoints : tuple of int, update counts the policies were scored
        after (the last is ``steps``).
    curves : dict credit -> (runs, len(checkpoints)) held-out expected set
        value of each run after each checkpoint.
    initial : float, the initial (uniform) policy's held-out set value.
    best : float, the mean over held-out requests of their best m-set's value.
    policies : dict credit -> list of the runs' Policy.
    n_train, n_held_out : int
    settings : dict, the parameters of the run.
    seconds : float, wall time of the whole benchmark.
    """

    credits: tuple
    checkpoints: tuple
    curves: dict
    initial: float
    best: float
    policies: dict
    n_train: int
    n_held_out: int
    settings: dict
    seconds: float

    @property
    def values(self) -> dict:
        """credit -> (runs,) held-out set value of each run after training."""
        return {c: v[:, -1] for c, v in self.curves.items()}

    def summary(self) -> dict:
        """credit -> (mean, sd) over runs of the final held-out set value
        (sd with ddof 1; 0 for one run)."""
        return {c: (float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0)
                for c, v in self.values.items()}

    def table(self) -> str:
        """The Table 3 analogue as text: held-out expected set value, mean
        +- sd over runs, after each checkpoint; the last column is the final
        value as a share of the best set's. Rows by final value."""
        s = self.settings
        cols = [f"after {n:,}" for n in self.checkpoints]
        lines = [f"Held-out expected set value ({self.n_held_out:,} requests; policies trained "
                 f"on {self.n_train:,}; {s['runs']} runs each; m = {s['m']} of K = "
                 f"{s['rewrites']} rewrites; credit under the {s['evaluator']} evaluator)",
                 f"  {'advantage':<16}" + "".join(f"{c:>18}" for c in cols) +
                 f"{'% of best':>11}"]

        def row(name, cells, final):
            share = 100 * final / self.best if self.best else float("nan")
            lines.append(f"  {name:<16}" + "".join(f"{c:>18}" for c in cells) +
                         f"{share:>10.1f}%")

        names = {"broadcast": "Broadcast", "singleton": "Singleton",
                 "leave_one_out": "Leave-one-out", "banzhaf": "Banzhaf",
                 "shapley": "Shapley (CASI)"}
        for c in sorted(self.credits, key=lambda c: -self.curves[c][:, -1].mean()):
            v = self.curves[c]
            sd = v.std(axis=0, ddof=1) if v.shape[0] > 1 else np.zeros(v.shape[1])
            row(names[c], [f"{a:.3f} +- {b:.3f}" for a, b in zip(v.mean(axis=0), sd)],
                v[:, -1].mean())
        row("initial policy", [f"{self.initial:.3f}"] * len(cols), self.initial)
        row("best set", [f"{self.best:.3f}"] * len(cols), self.best)
        return "\n".join(lines)


def _derived_seed(seed: int, index: int) -> int:
    """The seed of run ``index`` of a benchmark seeded ``seed`` (a uint64 of
    NumPy's SeedSequence of both, so runs are independent streams)."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint64)[0])


def _checkpoints(checkpoints, steps):
    if checkpoints is None:
        picks = {steps // 30, steps // 10, steps // 3}
    else:
        picks = {_params.Integer("checkpoints", 1, steps, "").check(c)
                 for c in as_sequence(checkpoints, "checkpoints", "update counts")}
    return tuple(sorted(n for n in picks | {steps} if n >= 1))


def benchmark(pools, *, credits=CREDITS, m: int = 5, runs: int = 5, held_out: float = 0.3,
              steps: int = 300, checkpoints=None, batch: int = 32, group: int = 8,
              lr: float = 0.05, beta: float = 1.0, kappa: float = 1.0,
              evaluator: str = "filter", eval_samples: int = 64, slots: int = 4,
              reserve: float = 0.0, capacity=None, pricing: str = "first", seed: int = 0,
              threads=None, progress=None) -> BenchmarkResult:
    """The Table 3 analogue: train a policy with each per-action advantage
    ``runs`` times and report its held-out expected set value.

    The last ``held_out`` share of the requests is held out; the others are
    the training task. Run r of every credit is trained with the seed
    ``SeedSequence([seed, r])`` (its first uint64; the same first batches and
    noise for every credit); every policy, and the initial one, is scored by
    :func:`policy_value` with ``eval_samples`` sets per held-out request on
    the noise of ``SeedSequence([seed, runs])``, after each checkpoint.

    Parameters
    ----------
    pools : Pools
        Requests with K candidate rewrites each (e.g. :func:`benchmark_pools`).
    credits : sequence of str
        From :data:`CREDITS`.
    runs : int
        Training runs per credit.
    held_out : float
        Share of requests held out, in (0, 1); both parts must be non-empty.
    checkpoints : sequence of int, optional
        Update counts in [1, steps] after which the policies are also scored
        (default: steps // 30, steps // 10 and steps // 3); ``steps`` always is.
    slots, reserve, capacity, pricing
        The auction (:func:`fastcredit.auction_replay`).
    progress : callable, optional
        Called with a line of text after each run.
    m, steps, batch, group, lr, beta, kappa, evaluator, seed, threads
        As :func:`train_policy` (batch is capped at the training requests).

    Returns
    -------
    BenchmarkResult

    Examples
    --------
    >>> import fastcredit as fc
    >>> res = fc.learning.benchmark(fc.learning.benchmark_pools(40, rewrites=6), m=3,
    ...                             credits=("broadcast", "shapley"), runs=2, steps=5)
    >>> res.checkpoints, res.curves["shapley"].shape
    ((1, 5), (2, 2))
    """
    t0 = time.perf_counter()
    if not isinstance(pools, Pools):
        raise TypeError(f"pools must be a fastcredit.Pools, got {type(pools).__name__}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable (it is given a line of text), got "
                        f"{type(progress).__name__}")
    credits = tuple(CREDIT.check(c, "credits") for c in as_sequence(credits, "credits",
                                                                    "credit names"))
    if not credits or len(set(credits)) != len(credits):
        raise ValueError(f"credits must be a non-empty list of distinct names, got {credits!r}")
    runs = RUNS.check(runs)
    held_out = HELD_OUT.check(held_out)
    n_test = int(round(held_out * pools.n_requests))
    n_train = pools.n_requests - n_test
    if n_test < 1 or n_train < 1:
        raise ValueError(f"held_out = {held_out} of the {pools.n_requests} requests of pools "
                         f"leaves {n_train} for training and {n_test} held out; both need >= 1")
    options = dict(m=ACTIONS.check(m), steps=STEPS.check(steps),
                   batch=min(BATCH.check(batch), n_train), group=GROUP.check(group),
                   lr=LEARNING_RATE.check(lr), beta=BETA.check(beta), kappa=KAPPA.check(kappa),
                   evaluator=MODE.check(evaluator, "evaluator"), threads=THREADS.check(threads))
    checkpoints = _checkpoints(checkpoints, options["steps"])
    auction = dict(slots=SLOTS.check(slots), reserve=RESERVE.check(reserve),
                   capacity=CAPACITY.check(capacity), pricing=PRICING.check(pricing))
    eval_samples = EVAL_SAMPLES.check(eval_samples, "eval_samples")
    seed = SEED.check(seed)
    REWRITES.check(pools.m, "pools.m")
    full = LearningTask.from_pools(pools, threads=threads, **auction)
    m = _check_m(m, full)
    train, test = full.requests(0, n_train), full.requests(n_train, full.n_requests)
    eval_seed = _derived_seed(seed, runs)

    def score(policy):
        return policy_value(test, policy, m=m, samples=eval_samples, seed=eval_seed)

    initial = score(Policy.initial(train))
    sizes = np.bitwise_count(np.arange(1 << full.rewrites))
    best = float(test.values[:, sizes == m].max(axis=1).mean())
    curves, policies = {}, {}
    for c in credits:
        policies[c], curve = [], []
        for r in range(runs):
            policies[c].append(train_policy(train, c, seed=_derived_seed(seed, r), **options))
            curve.append([score(policies[c][-1].after(n)) for n in checkpoints])
            if progress is not None:
                progress(f"{c} run {r + 1}/{runs}: held-out set value {curve[-1][-1]:.3f} "
                         f"({time.perf_counter() - t0:.1f} s)")
        curves[c] = np.array(curve)
    settings = dict(options, runs=runs, held_out=held_out, eval_samples=eval_samples,
                    rewrites=full.rewrites, seed=seed, **auction)
    return BenchmarkResult(credits, checkpoints, curves, initial, best, policies, n_train,
                           n_test, settings, time.perf_counter() - t0)
