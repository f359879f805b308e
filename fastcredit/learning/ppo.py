r"""PPO on decision records for a small linear softmax actor (NumPy).

A record is one decision of the actor's own episode: the features
:math:`\phi(s, b)` of every legal action, the sampled action a, its
behaviour probability :math:`\mu = \pi_{old}(a \mid s)` and its advantage A
(a tree's centred credit, VinePPO's value difference, or a centred return).
With :math:`\pi_\theta(a \mid s) \propto e^{\theta^\top \phi(s, a)}` and
:math:`r = \pi_\theta(a \mid s) / \mu`, the clipped surrogate is

.. math:: L(\theta) = \frac1N \sum_n \min\big(r_n A_n,
          \operatorname{clip}(r_n, 1 - \epsilon, 1 + \epsilon) A_n\big)

and its gradient, where the unclipped term is the minimum,
:math:`A r (\phi(s, a) - \sum_b \pi_\theta(b \mid s) \phi(s, b))` (0
elsewhere). Records with a NaN advantage (a tree that did not try the
actor's action) are left out.
"""
from __future__ import annotations

import numpy as np

from .._params import LEARNING_RATE, PPO_CLIP, PPO_EPOCHS
from .._validation import float64_array, int_array

__all__ = ["ppo_objective", "ppo_update"]

_ADAM = (0.9, 0.999, 1e-8)


def _records(theta, features, n_legal, actions, behaviour, advantages):
    th = float64_array(theta, "theta")
    f = float64_array(features, "features")
    if f.ndim != 3 or th.shape != (f.shape[2],):
        raise ValueError(f"features must have shape (N, A, d) and theta (d,), got "
                         f"{f.shape} and {th.shape}")
    n, a_max = f.shape[:2]
    legal = int_array(n_legal, "n_legal")
    act = int_array(actions, "actions")
    for name, x in (("n_legal", legal), ("actions", act)):
        if x.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), got {x.shape}")
    if ((legal < 1) | (legal > a_max)).any():
        raise ValueError(f"n_legal must be in 1..{a_max}")
    if ((act < 0) | (act >= legal)).any():
        raise ValueError("actions must be legal (0 <= actions < n_legal)")
    mu = float64_array(behaviour, "behaviour")
    adv = float64_array(advantages, "advantages")
    for name, x in (("behaviour", mu), ("advantages", adv)):
        if x.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), got {x.shape}")
    if not ((mu > 0) & (mu <= 1)).all():
        raise ValueError("behaviour must be probabilities in (0, 1]")
    if not (np.isfinite(th).all() and np.isfinite(f).all()):
        raise ValueError("theta and features must be finite")
    keep = ~np.isnan(adv)
    return th, f[keep], legal[keep], act[keep], mu[keep], adv[keep]


def _objective(th, f, legal, act, mu, adv, clip):
    n, a_max, _ = f.shape
    if n == 0:
        return 0.0, np.zeros_like(th)
    logits = f @ th
    logits[np.arange(a_max)[None, :] >= legal[:, None]] = -np.inf
    top = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - top)
    pi = e / e.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    r = pi[rows, act] / mu
    unclipped, clipped = r * adv, np.clip(r, 1 - clip, 1 + clip) * adv
    value = float(np.minimum(unclipped, clipped).mean())
    active = unclipped <= clipped
    score = f[rows, act] - np.einsum("na,nad->nd", pi, f)
    grad = ((active * adv * r)[:, None] * score).sum(axis=0) / n
    return value, grad


def ppo_objective(theta, features, n_legal, actions, behaviour, advantages, *,
                  clip: float = 0.2):
    r"""The clipped surrogate L(theta) of the records and its gradient
    (module docstring).

    Parameters
    ----------
    theta : array_like, shape (d,)
        The actor's weights; finite.
    features : array_like, shape (N, A, d)
        :math:`\phi(s_n, b)` of every legal action b of each record (zero
        padded past ``n_legal``); finite.
    n_legal : array_like of int, shape (N,)
        Legal actions of each record's state, in [1, A].
    actions : array_like of int, shape (N,)
        The sampled action of each record, in [0, n_legal).
    behaviour : array_like, shape (N,)
        :math:`\mu_n`, probabilities in (0, 1].
    advantages : array_like, shape (N,)
        :math:`A_n` (NaN: the record is left out).
    clip : float in [0, 1]
        :math:`\epsilon`.

    Returns
    -------
    (value, grad) : float, ndarray (d,)
        :math:`L(\theta)` and its gradient (0 and zeros when every record
        is left out).

    Raises
    ------
    ValueError
        If ``features`` is not 3-D or ``theta`` does not have shape (d,),
        ``n_legal``, ``actions``, ``behaviour`` or ``advantages`` does not
        have shape (N,), an ``n_legal`` is outside [1, A], an action is not
        legal, a ``behaviour`` is outside (0, 1], ``theta`` or ``features``
        holds a non-finite value, or ``clip`` is not in [0, 1].
    TypeError
        If ``theta``, ``features``, ``behaviour`` or ``advantages`` is not a
        real array, ``n_legal`` or ``actions`` not an integer array, or
        ``clip`` not a real number.

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit.learning import ppo
    >>> f = np.eye(2)[None]                    # one state, two actions, d = 2
    >>> v, g = ppo.ppo_objective([0.0, 0.0], f, [2], [0], [0.5], [1.0])
    >>> v, g
    (1.0, array([ 0.5, -0.5]))
    """
    clip = PPO_CLIP.check(clip)
    return _objective(*_records(theta, features, n_legal, actions, behaviour, advantages),
                      clip)


def ppo_update(theta, features, n_legal, actions, behaviour, advantages, *,
               clip: float = 0.2, epochs: int = 4, lr: float = 0.05) -> np.ndarray:
    """``epochs`` Adam ascent steps (step size ``lr``; 0.9, 0.999, 1e-8) of
    :func:`ppo_objective` on one batch of records, from ``theta``; returns
    the new weights.

    Parameters
    ----------
    theta, features, n_legal, actions, behaviour, advantages, clip
        As in :func:`ppo_objective`.
    epochs : int in [1, 2**16]
        Adam steps on the batch.
    lr : float in [0, 1000]
        Adam step size.

    Returns
    -------
    ndarray (d,) float64
        The new weights (``theta`` itself is not modified).

    Raises
    ------
    ValueError
        If an argument fails the checks of :func:`ppo_objective`, ``epochs``
        is not in [1, 2**16], or ``lr`` is not in [0, 1000].
    TypeError
        If an argument has the wrong type as in :func:`ppo_objective`,
        ``epochs`` is not an integer or ``lr`` not a real number.

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit.learning import ppo
    >>> ppo.ppo_update([0.0, 0.0], np.eye(2)[None], [2], [0], [0.5], [1.0], epochs=1)
    array([ 0.05, -0.05])
    """
    clip, epochs = PPO_CLIP.check(clip), PPO_EPOCHS.check(epochs)
    lr = LEARNING_RATE.check(lr)
    th, f, legal, act, mu, adv = _records(theta, features, n_legal, actions, behaviour,
                                          advantages)
    th = th.copy()
    b1, b2, eps = _ADAM
    m, v = np.zeros_like(th), np.zeros_like(th)
    for k in range(epochs):
        _, g = _objective(th, f, legal, act, mu, adv, clip)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        th += lr * (m / (1 - b1 ** (k + 1))) / (np.sqrt(v / (1 - b2 ** (k + 1))) + eps)
    return th
