r"""Diagnostics of counterfactual trees: how repeatable their Q and credit
are at fixed states, what acting on them would gain, how much the actor
centring changes, and value net of the search's cost.

* **Repeat Q SD**: at a fixed state, the SD over R independent trees
  (seeds) of :math:`\hat Q(s, a)`, averaged over actions;
* **credit-sign repeat agreement**: the share of pairs of repeats whose
  credit of an action has the same sign (0 counted as a sign), averaged
  over actions: 1 is perfectly repeatable, about 0.5 is a coin;
* **J_search** (as defined here): :math:`Q(s, \arg\max_a \hat Q(s, a)) -
  \sum_b \pi(b \mid s) Q(s, b)` with Q the reference (exact) values: what
  acting greedily on the tree's estimate gains over the actor;
* **centring sign flips**: the share of actions whose credit changes sign
  between the actor centring and the uniform one;
* **cost-adjusted value**: mean utility minus :math:`c_{tok}` times the mean
  auxiliary cost per episode.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._params import ATOL, COST_PRICE, REPEATS, SEED
from .._validation import float64_array
from .env import _prefix
from .search import counterfactual_tree

__all__ = ["Repeatability", "repeatability", "j_search", "centring_sign_flips",
           "cost_adjusted_value"]


@dataclass(frozen=True)
class Repeatability:
    """Repeated trees at fixed states (:func:`repeatability`).

    Attributes
    ----------
    q : ndarray (n_states, repeats, A)
        The trees' Q (NaN padded / untried).
    credit : ndarray (n_states, repeats, A)
        Their actor-centred credit.
    q_sd : ndarray (n_states,)
        Mean over actions of the SD (ddof 1) over repeats.
    sign_agreement : ndarray (n_states,)
        Mean over actions of the share of repeat pairs whose credit signs
        agree.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> from fastcredit.learning import workflow
    >>> rep = ts.repeatability(workflow.environment(), workflow.root(0, 3), [[]],
    ...                        repeats=3, budget=10)
    >>> rep.credit.shape, rep.q_sd.round(3), rep.sign_agreement.round(3)
    ((1, 3, 5), array([1.331]), array([0.6]))
    """
    q: np.ndarray
    credit: np.ndarray
    q_sd: np.ndarray
    sign_agreement: np.ndarray


def _pair_agreement(signs):
    """Share of pairs (r < r') with equal entries, per column."""
    r = signs.shape[0]
    same = 0.0
    for v in (-1.0, 0.0, 1.0):
        k = (signs == v).sum(axis=0)
        same = same + k * (k - 1) / 2
    return same / (r * (r - 1) / 2)


def repeatability(env, root, prefixes, actor=None, *, repeats: int = 8, seed: int = 0,
                  **tree) -> Repeatability:
    """Repeat Q SD and credit-sign repeat agreement of ``repeats`` trees at
    each state ``prefixes[i]`` reaches from ``root`` (repeat r seeded
    ``seed + r``; ``tree``: options of :func:`counterfactual_tree`).

    Parameters
    ----------
    env : JitEnvironment or a Python environment (fastcredit.treesearch.env)
        The environment.
    root : object
        The episode's start state (an int for a JitEnvironment).
    prefixes : sequence of sequences of int
        The action prefixes of the states searched.
    actor : SoftmaxActor or None
        The policy that continues trials (None: uniform).
    repeats : int in [2, 2**20]
        Independent trees per state.
    seed : int in [0, 2**64 - repeats)
        Repeat r is seeded ``seed + r``.
    **tree
        Keyword options of :func:`counterfactual_tree` (``budget``,
        ``rule``, ``c``, ``c_tok``, ``baseline``, ``use_cache``,
        ``backend``).

    Returns
    -------
    Repeatability
        Every tree's Q and credit, the repeat Q SD and the sign agreement
        per state.

    Raises
    ------
    ValueError
        If ``repeats`` is not in [2, 2**20], ``seed`` is outside [0, 2**64)
        or leaves no room for ``repeats`` seeds, a prefix is not
        one-dimensional (the error names ``prefixes[i]``), or a tree's
        arguments fail :func:`counterfactual_tree`'s checks.
    TypeError
        If ``prefixes`` is a string or has no length, a prefix is not
        integer, ``repeats`` or ``seed`` is not an integer, ``tree`` holds
        an option :func:`counterfactual_tree` does not take, or a tree's
        arguments have the wrong type.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> from fastcredit.learning import workflow
    >>> rep = ts.repeatability(workflow.environment(), workflow.root(0, 3), [[], [1]],
    ...                        repeats=4, budget=10)
    >>> rep.q.shape
    (2, 4, 5)
    """
    repeats = REPEATS.check(repeats)
    seed = SEED.check(seed)
    if seed > 2**64 - 1 - repeats:
        raise ValueError(f"seed must leave room for {repeats} repeats (seed + r < 2**64)")
    if isinstance(prefixes, (str, bytes)) or not hasattr(prefixes, "__len__"):
        raise TypeError("prefixes must be a sequence of action prefixes")
    rows = []
    for i, p in enumerate(prefixes):
        try:
            p = _prefix(p)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"prefixes[{i}]: {exc}") from None
        rows.append([counterfactual_tree(env, root, p, actor, seed=seed + r, **tree)
                     for r in range(repeats)])
    a = max((res.q.shape[0] for row in rows for res in row), default=0)
    q = np.full((len(rows), repeats, a), np.nan)
    credit = np.full_like(q, np.nan)
    for i, row in enumerate(rows):
        for r, res in enumerate(row):
            q[i, r, :res.q.shape[0]] = res.q
            credit[i, r, :res.credit.shape[0]] = res.credit
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # all-NaN columns: untried actions
        sd = np.nanmean(np.nanstd(q, axis=1, ddof=1), axis=1) if q.size else np.zeros(len(rows))
        agree = np.array([np.nanmean(_pair_agreement(np.sign(c))) for c in credit]) \
            if q.size else np.zeros(len(rows))
    return Repeatability(q, credit, sd, agree)


def _vectors(**arrays):
    """float64 vectors of one shape (n,), n >= 1, named by their keywords."""
    out = [float64_array(x, name) for name, x in arrays.items()]
    shapes = [x.shape for x in out]
    if out[0].ndim != 1 or out[0].size == 0 or any(s != shapes[0] for s in shapes):
        names = ", ".join(arrays)
        raise ValueError(f"{names} must have one shape (n,), n >= 1; got "
                         f"{', '.join(map(str, shapes))}")
    return out


def j_search(q_hat, q, pi) -> float:
    r"""What acting greedily on a tree's estimate gains over the actor:
    :math:`Q(s, \arg\max_a \hat Q(s, a)) - \sum_b \pi(b \mid s) Q(s, b)`
    (untried actions, NaN in ``q_hat``, are not picked).

    Parameters
    ----------
    q_hat : array_like, shape (n,)
        The tree's estimate of each action's Q (NaN: untried).
    q : array_like, shape (n,)
        The reference (exact) Q, e.g. :func:`exact_q`.
    pi : array_like, shape (n,)
        The actor's probabilities.

    Returns
    -------
    float
        The gain; NaN when no action was tried.

    Raises
    ------
    ValueError
        If ``q_hat``, ``q`` and ``pi`` do not share one shape (n,) with
        n >= 1.
    TypeError
        If one of them is not a real array.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> ts.j_search([1.0, 2.0], [1.0, 3.0], [0.5, 0.5])
    1.0
    """
    qh, qe, p = _vectors(q_hat=q_hat, q=q, pi=pi)
    if np.isnan(qh).all():
        return float("nan")
    return float(qe[int(np.nanargmax(qh))] - p @ qe)


def centring_sign_flips(q, pi, *, atol: float = 0.0) -> float:
    r"""Share of actions whose credit sign differs between the actor centring
    (Q - pi . Q) and the uniform one (Q - mean Q); credits within ``atol``
    of 0 have sign 0.

    Parameters
    ----------
    q : array_like, shape (n,)
        Q of the state's actions.
    pi : array_like, shape (n,)
        The actor's probabilities.
    atol : float >= 0
        Credits with :math:`|x| \le` atol have sign 0.

    Returns
    -------
    float
        The share of the n actions whose sign flips.

    Raises
    ------
    ValueError
        If ``q`` and ``pi`` do not share one shape (n,) with n >= 1, or
        ``atol`` is negative or not finite.
    TypeError
        If ``q`` or ``pi`` is not a real array, or ``atol`` not a real
        number.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> ts.centring_sign_flips([0.0, 3.0, 5.0], [0.1, 0.1, 0.8])
    0.3333333333333333
    """
    qe, p = _vectors(q=q, pi=pi)
    atol = ATOL.check(atol)

    def sign(x):
        return np.where(np.abs(x) <= atol, 0.0, np.sign(x))
    return float(np.mean(sign(qe - p @ qe) != sign(qe - qe.mean())))


def cost_adjusted_value(utility, cost, c_tok: float = 1.0) -> float:
    r"""Mean utility minus ``c_tok`` times the mean auxiliary cost per
    episode, :math:`\bar u - c_{tok} \bar c`.

    Parameters
    ----------
    utility : array_like, shape (n,)
        Each episode's utility.
    cost : array_like, shape (n,)
        Each episode's auxiliary cost (e.g. ``DecisionRecords.ledger.cost``).
    c_tok : float >= 0
        Price of one unit of cost, in utility units.

    Returns
    -------
    float
        :math:`\bar u - c_{tok} \bar c`.

    Raises
    ------
    ValueError
        If ``utility`` and ``cost`` do not share one shape (n,) with n >= 1,
        or ``c_tok`` is negative or not finite.
    TypeError
        If ``utility`` or ``cost`` is not a real array, or ``c_tok`` not a
        real number.

    Examples
    --------
    >>> import fastcredit.treesearch as ts
    >>> ts.cost_adjusted_value([1.0, 3.0], [10.0, 30.0], c_tok=0.01)
    1.8
    """
    u, cst = _vectors(utility=utility, cost=cost)
    c_tok = COST_PRICE.check(c_tok)
    return float(u.mean() - c_tok * cst.mean())
