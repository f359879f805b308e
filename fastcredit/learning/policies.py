"""The set benchmark's policy: linear Plackett-Luce over rewrite features
(:class:`Policy`, :func:`plackett_luce`) and its held-out score
(:func:`policy_value`)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _params
from .._params import EVAL_SAMPLES, SEED
from .._validation import check_memory, float64_array, int_array, real_array
from .tasks import _check_m, _check_task, _kernels

__all__ = ["Policy", "plackett_luce", "policy_value"]


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
        :math:`w_{n,t}`, the weight of draw t (e.g. its advantage); all 1
        when None.

    Returns
    -------
    (L, grad) : ndarray (...) and ndarray (..., K), float64
        grad[n] = dL_n / d logits[n].

    Raises
    ------
    ValueError
        If ``logits`` has no last axis of length K >= 1 or holds a
        non-finite value, ``order`` does not have shape (..., m) with
        m <= K, holds an index outside [0, K) or repeats one in a row,
        ``weights`` does not have ``order``'s shape, or the gradient would
        not fit in memory.
    TypeError
        If ``logits`` or ``weights`` is not a real array or ``order`` not an
        integer array.

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

    Made by :func:`train_policy` or :meth:`initial`.

    Parameters
    ----------
    theta : ndarray (d,) float64
        The weights learned.
    scale : ndarray (d,) float64
        The features' sd over the training rewrites (1 where it is 0).
    credit : str
        The per-action advantage it was trained with ("initial": not
        trained).
    rewards : ndarray (steps,) float64
        The mean sampled set value of each update.
    history : ndarray (steps, d) float64
        The weights after each update (``history[-1]`` is theta).

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> task = fc.learning.LearningTask(np.array([[0., 1., 0., 1.]]), np.eye(2)[None])
    >>> policy = fc.learning.train_policy(task, m=1, steps=3, batch=1, evaluator="rerun")
    >>> policy.credit, policy.scale, policy.rewards, policy.history.shape
    ('shapley', array([0.5, 0.5]), array([0.375, 0.5  , 0.5  ]), (3, 2))
    >>> policy.logits(np.eye(2)).round(4)
    array([ 0.3002, -0.3002])
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


def _feature_scale(features):
    sd = features.reshape(-1, features.shape[-1]).std(axis=0)
    return np.where(sd > 0, sd, 1.0)



def _sample(logits, m, noise):
    """Plackett-Luce orderings (rows, group, m) of m of the K rewrites:
    the m largest of logits + Gumbel noise, in descending order."""
    keys = logits[:, None, :] + noise
    return np.argsort(-keys, axis=-1, kind="stable")[..., :m]


def _set_masks(order):
    return (np.int64(1) << order).sum(axis=-1)


def policy_value(task, policy, *, m: int = 5, samples: int = 64, seed: int = 0) -> float:
    """The policy's expected set value on the task's requests: the mean over
    requests and ``samples`` sampled sets per request of ``task.values``.
    The noise is fixed by ``seed`` alone, so policies scored with one seed
    are compared on the same draws (common random numbers).

    Parameters
    ----------
    task : LearningTask
        The requests scored (e.g. held-out ones).
    policy : Policy
        With as many weights as the task has features.
    m : int
        Rewrites per set, 1 <= m < K.
    samples : int in [1, 2**16]
        Sets sampled per request.
    seed : int in [0, 2**64)
        Fixes the Gumbel noise of the samples.

    Returns
    -------
    float
        The mean set value; NaN for a task of no requests.

    Raises
    ------
    TypeError
        If ``task`` is not a LearningTask, ``policy`` not a Policy, its
        weights or scales not real, or ``m``, ``samples`` or ``seed`` not an
        integer.
    ValueError
        If the policy's weights and scales do not have the task's number of
        features, are not finite or a scale is not positive, ``m`` is not in
        [1, K), ``samples`` is not in [1, 2**16], or ``seed`` is outside
        [0, 2**64).

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

