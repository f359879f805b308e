r"""A synthetic retrieval workflow whose exact Q values are computable: the
environment of the tree benchmark.

A request has a *kind* (what its retrieval needs) and a *level* (what a
good answer is worth, :math:`V = 4 + 2\,\text{level}`). The agent has at most
``HORIZON`` = 6 steps, each one of five actions:

====  ===========  ====  ==============================================
code  action       cost  effect
====  ===========  ====  ==============================================
0     query        1     rewrite the query: quality q <- min(q + 1, 2)
1     retrieve     1     fast retrieval: docs += FAST[kind, q]
2     deep         3     deep retrieval: docs += DEEP[kind, q]
3     evidence     1     read unread docs: e += min(docs - e, 2)
4     stop         0     answer now (terminal)
====  ===========  ====  ==============================================

(docs and e saturate at 7.) Kinds: 0 easy (fast retrieval works at once), 1
vague (needs a rewrite first), 2 niche (needs deep retrieval), 3
unanswerable (nothing worth paying for). The terminal utility is
:math:`V (1 - 0.6^{e}) - 0.3 \cdot \text{spent}`, spent the summed action
costs: evidence pays, work costs. The step's cost (the ledger's unit) is the
action's cost; stop costs 0.

A state is one int64 (bit fields: step t, q, docs, e, spent, stopped, kind,
level), so the environment is four ``@njit`` functions
(:func:`environment`) and the tree runs compiled. Features of (s, a): the
one-hot action times the state's 10 features (1, q/2, unread docs / 3
capped at 1, e/4, t/6, one-hot kind, level/3): 50 weights.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .._params import SEED, WORKFLOW_KIND, WORKFLOW_LEVEL
from .._validation import check_int

__all__ = ["ACTIONS", "HORIZON", "N_FEATURES", "environment", "root", "sample_roots"]

#: The five actions, by code.
ACTIONS = ("query", "retrieve", "deep", "evidence", "stop")
#: Most steps of an episode.
HORIZON = 6
_STATE_FEATURES = 10
#: Weights of the linear softmax actor: one block of state features per action.
N_FEATURES = len(ACTIONS) * _STATE_FEATURES

_COST = np.array([1.0, 1.0, 3.0, 1.0, 0.0])
_FAST = np.array([[2, 3, 3], [0, 1, 3], [0, 0, 1], [0, 0, 0]], dtype=np.int64)
_DEEP = np.array([[3, 3, 4], [1, 2, 4], [2, 3, 4], [0, 0, 1]], dtype=np.int64)

jit = njit(cache=True, nogil=True)


@jit
def _fields(s):
    return (s & 7, (s >> 3) & 3, (s >> 5) & 7, (s >> 8) & 7, (s >> 11) & 63, (s >> 17) & 1,
            (s >> 18) & 3, (s >> 20) & 3)


@jit
def _pack(t, q, docs, e, spent, stopped, kind, level):
    return np.int64(t | (q << 3) | (docs << 5) | (e << 8) | (spent << 11) | (stopped << 17) |
                    (kind << 18) | (level << 20))


@jit
def n_actions(s):
    t, q, docs, e, spent, stopped, kind, level = _fields(s)
    return 0 if stopped or t >= HORIZON else 5


@jit
def step(s, a):
    t, q, docs, e, spent, stopped, kind, level = _fields(s)
    cost = _COST[a]
    if a == 0:
        q = min(q + 1, 2)
    elif a == 1:
        docs = min(docs + _FAST[kind, q], 7)
    elif a == 2:
        docs = min(docs + _DEEP[kind, q], 7)
    elif a == 3:
        e = min(e + min(docs - e, 2), 7)
    else:
        stopped = 1
    return _pack(t + 1, q, docs, e, spent + np.int64(cost), stopped, kind, level), cost


@jit
def utility(s):
    t, q, docs, e, spent, stopped, kind, level = _fields(s)
    return (4.0 + 2.0 * level) * (1.0 - 0.6 ** e) - 0.3 * spent


@jit
def features(s, a, out):
    t, q, docs, e, spent, stopped, kind, level = _fields(s)
    out[:] = 0.0
    base = a * _STATE_FEATURES
    out[base] = 1.0
    out[base + 1] = q / 2.0
    out[base + 2] = min(docs - e, 3) / 3.0
    out[base + 3] = e / 4.0
    out[base + 4] = t / 6.0
    out[base + 5 + kind] = 1.0
    out[base + 9] = level / 3.0


@jit
def step_cost(s, a):
    return _COST[a]


def environment():
    """The workflow as a :class:`fastcredit.treesearch.JitEnvironment`.

    Returns
    -------
    JitEnvironment
        Five actions, 50 features, the actions' costs as ``step_cost``.

    Raises
    ------
    ImportError
        If numba is not installed (the environment's functions are
        ``@njit``).

    Examples
    --------
    >>> from fastcredit.learning import workflow
    >>> env = workflow.environment()
    >>> env.max_actions, env.n_features
    (5, 50)
    """
    from ..treesearch import JitEnvironment
    return JitEnvironment(n_actions, step, utility, features, max_actions=len(ACTIONS),
                          n_features=N_FEATURES, step_cost=step_cost)


def root(kind: int = 0, level: int = 0) -> int:
    """The start state of a request.

    Parameters
    ----------
    kind : int in [0, 3]
        0 easy, 1 vague, 2 niche, 3 unanswerable.
    level : int in [0, 3]
        A good answer is worth 4 + 2 level.

    Returns
    -------
    int
        The packed int64 state (step 0, nothing retrieved or spent).

    Raises
    ------
    ValueError
        If ``kind`` or ``level`` is not in [0, 3].
    TypeError
        If ``kind`` or ``level`` is not an integer.

    Examples
    --------
    >>> from fastcredit.learning import workflow
    >>> workflow.root(kind=2, level=1)
    1572864
    """
    return int(_pack(0, 0, 0, 0, 0, 0, WORKFLOW_KIND.check(kind),
                     WORKFLOW_LEVEL.check(level)))


def sample_roots(n: int, seed: int = 0) -> np.ndarray:
    """``n`` requests' start states, kind and level uniform and independent.

    Parameters
    ----------
    n : int in [0, 2**32]
        Requests.
    seed : int in [0, 2**64)
        Seed of NumPy's generator that draws the kinds and levels.

    Returns
    -------
    ndarray (n,) int64
        The start states (:func:`root`).

    Raises
    ------
    ValueError
        If ``n`` is not in [0, 2**32] or ``seed`` is outside [0, 2**64).
    TypeError
        If ``n`` or ``seed`` is not an integer.

    Examples
    --------
    >>> from fastcredit.learning import workflow
    >>> workflow.sample_roots(3, seed=0)
    array([1835008, 1572864,  524288])
    >>> bool(workflow.sample_roots(3, seed=0)[1] == workflow.root(kind=2, level=1))
    True
    """
    n = check_int(n, "n", lo=0, hi=1 << 32)
    rng = np.random.default_rng(SEED.check(seed))
    kinds, levels = rng.integers(0, 4, n), rng.integers(0, 4, n)
    return np.array([root(int(k), int(v)) for k, v in zip(kinds, levels)], dtype=np.int64)
