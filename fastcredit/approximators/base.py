"""What every approximator shares: the game, the budget, the memo of
evaluated coalitions, the sampling loop and the result.

An estimator is a *design*: it draws samples (each a fixed number of
coalitions, from the counter-based stream of its sample number, compiled:
``draw``), and folds the game's values on them into per-stratum moments
(compiled: ``fold``); it then turns the moments into values and standard
errors (``finish``). This module runs the loop between the two:

* **budget** = game evaluations. A deterministic game (a table, an @njit
  ``fn(mask)``, a callable declared with :func:`fastcredit.games.deterministic`)
  is evaluated once per distinct coalition (a memo of every coalition seen),
  so a sample costs the coalitions it adds; a stochastic game (an @njit
  ``fn(mask, key)`` or a plain Python callable, which may be random) is
  evaluated afresh for every coalition of every sample, each draw with its
  own key. Samples are taken in order while their cost fits what is left:
  the first that does not fit ends the run, so the evaluations never exceed
  the budget, and the result does not depend on how the samples are batched.
* evaluations are **batched**: the coalitions of up to ``BATCH`` samples
  are evaluated in one call (one gather for a table, one call of a Python
  game, one compiled loop for an @njit game).
* a deterministic game whose every coalition fits in the budget
  (``budget >= 2**m``, m <= 30) is evaluated on all of them once, and the
  estimand is computed exactly (its standard errors are 0).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _parallel
from .._backend import kernels
from .._validation import check_memory
from ..games import CALLABLE, JITTED, STOCHASTIC, TABLE, call_value_function, masks_to_bool
from ..interactions import Interactions

__all__ = ["InteractionEstimate", "Design", "run_design", "BATCH"]

#: Samples drawn, evaluated and folded per round of the loop.
BATCH = 1 << 12
#: Samples a run may draw per unit of budget at most (a deterministic game
#: whose coalitions are all seen stops there instead of drawing forever).
SAMPLES_PER_EVALUATION = 64
#: The stream item of a game's evaluation keys (sample numbers stay below it).
_EVAL_ITEM = np.uint64(2**64 - 1)


@dataclass(frozen=True)
class InteractionEstimate(Interactions):
    """Estimated values in the layout of :class:`fastcredit.Interactions`,
    with their error bars.

    Attributes
    ----------
    index, order, m, values
        As in :class:`fastcredit.Interactions`.
    stderr : tuple of ndarray
        The standard error of each entry of ``values``, same shapes: 0 where
        the value is exact (a census, or the baseline of a deterministic
        game), ``inf`` where a stratum it needs has fewer than two samples.
    n_evals : int or ndarray (...)
        Game evaluations spent (never more than the budget).
    n_samples : int or ndarray (...)
        Samples folded in (a memo hit is a sample too).
    method : str
        The estimator.

    Examples
    --------
    A budget that covers the 2**4 coalitions buys the exact values; a smaller
    one, estimates with their standard errors.

    >>> import fastcredit as fc, numpy as np
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> v = (bits @ np.array([1., 2., 3., 4.])) ** 2 / 10   # Shapley values 1, 2, 3, 4
    >>> est = fc.approximate(v, method="svarm", budget=16)
    >>> est
    InteractionEstimate(method='svarm', index='SV', order=1, m=4, batch shape (), n_evals=16)
    >>> est.values[1].round(6), est.stderr[1]
    (array([1., 2., 3., 4.]), array([0., 0., 0., 0.]))
    >>> est = fc.approximate(v, method="kernelshap", budget=12)
    >>> int(est.n_evals), bool((est.stderr[1] > 0).all())
    (12, True)
    """

    stderr: tuple = ()
    n_evals: object = 0
    n_samples: object = 0
    method: str = ""

    def __repr__(self) -> str:
        lead = self.values[0].shape[:-1]
        return (f"InteractionEstimate(method={self.method!r}, index={self.index!r}, "
                f"order={self.order}, m={self.m}, batch shape {lead}, "
                f"n_evals={self.n_evals})")


class Design:
    """One estimator's sampling design (subclasses in the method modules).

    ``coalitions``: coalitions per sample; ``kernel``: its FASTEST key;
    ``fixed(m)``: the coalitions evaluated first (uint64 masks, v(empty) first)
    and folded as a census; ``draw(impl, seed, g, first, n)`` -> (masks (n, c),
    slots or None); ``fold(impl, masks, values, slots)``; ``finish(v0)`` ->
    (values (m,), stderr (m,)); ``exact(table)`` -> the estimand of a whole
    table (m,)."""

    coalitions = 1
    kernel = ""

    def __init__(self, m, index, deterministic, budget):
        self.m, self.index = m, index
        self.deterministic, self.budget = deterministic, budget

    def fixed(self):
        return np.zeros(1, dtype=np.uint64)


class _DenseMemo:
    """The memo as a seen flag and a value per coalition, indexed by mask:
    for games whose 2**m coalitions are few beside the budget."""

    def __init__(self, m):
        self.seen = np.zeros(1 << m, dtype=bool)
        self.vals = np.empty(1 << m)

    def known(self, masks):
        return self.seen[masks]

    def add(self, masks, vals):
        self.seen[masks] = True
        self.vals[masks] = vals

    def get(self, masks):
        return self.vals[masks]


def _memo(m, budget):
    """A dense memo when 2**m is at most max(2**16, 8 budget) (m <= 26),
    else the sorted one; the same answers either way."""
    if m <= 26 and (1 << m) <= max(1 << 16, 8 * budget):
        return _DenseMemo(m)
    return _Memo()


class _Memo:
    """Every coalition a deterministic game was evaluated on, and its value
    (sorted keys)."""

    def __init__(self):
        self.keys = np.empty(0, dtype=np.uint64)
        self.vals = np.empty(0)

    def known(self, masks):
        if not len(self.keys):
            return np.zeros(masks.shape, dtype=bool)
        pos = np.minimum(np.searchsorted(self.keys, masks), len(self.keys) - 1)
        return self.keys[pos] == masks

    def add(self, masks, vals):
        """Merge new (distinct, unseen) coalitions in: O(seen + new log new)."""
        order = np.argsort(masks, kind="stable")
        masks, vals = masks[order], vals[order]
        at = np.searchsorted(self.keys, masks)
        self.keys, self.vals = np.insert(self.keys, at, masks), np.insert(self.vals, at, vals)

    def get(self, masks):
        return self.vals[np.searchsorted(self.keys, masks)]


class Evaluations:
    """The game of one run, evaluated on uint64 masks and counted; stochastic
    @njit games get key e of the stream (seed, game g, _EVAL_ITEM) for their
    e-th evaluation."""

    def __init__(self, game, g, seed):
        self.game, self.n_evals = game, 0
        self.table = game.value[g] if game.kind == TABLE else None
        if game.kind == STOCHASTIC:
            from .._numba.rng import key as rng_key
            self.eval_key = np.uint64(rng_key(np.uint64(rng_key(np.uint64(seed), np.uint64(g))),
                                              _EVAL_ITEM))

    def __call__(self, masks):
        masks = np.ascontiguousarray(masks, dtype=np.uint64)
        kind = self.game.kind
        if kind == TABLE:
            vals = self.table[masks.astype(np.int64)].astype(np.float64)
        elif kind == CALLABLE:
            batch = (masks_to_bool(masks, self.game.m) if self.game.coalitions == "bool"
                     else masks)
            vals = call_value_function(
                self.game.value, batch, name="game", finite=True,
                where=f"on a batch of {len(masks)} coalitions (after {self.n_evals} "
                      f"evaluations)")
        else:
            from . import _jit
            vals = np.empty(len(masks))
            try:
                if kind == JITTED:
                    _jit.fill(self.game.value, masks, vals)
                else:
                    _jit.fill_keyed(self.game.value, masks, self.eval_key,
                                    np.uint64(self.n_evals), vals)
            except Exception as exc:
                form = "fn(mask, key)" if kind == STOCHASTIC else "fn(mask)"
                raise RuntimeError(f"the @njit game {form} failed (m = {self.game.m}): "
                                   f"{exc!r}") from exc
            bad = np.flatnonzero(~np.isfinite(vals))
            if bad.size:
                raise ValueError(f"game returned a non-finite value ({vals[bad[0]]}) for "
                                 f"coalition mask {int(masks[bad[0]])}")
        self.n_evals += len(masks)
        return vals


def _run_one(design, game, g, seed, budget, impl):
    """values (m,), stderr (m,), v0, n_evals, n_samples of game g."""
    m = game.m
    ev = Evaluations(game, g, seed)
    if design.deterministic and m <= 30 and budget >= 1 << m:
        check_memory((1 << m) * 16, f"the whole table of the game (m = {m}), which the "
                                    f"budget {budget} covers")
        table = ev(np.arange(1 << m, dtype=np.uint64))
        values = design.exact(table)
        return values, np.zeros_like(values), table[0], ev.n_evals, 0
    memo = _memo(m, budget) if design.deterministic else None
    fixed = design.fixed()
    # the fixed coalitions are evaluated in the game call of the first batch
    # (one call, not two: a model behind the game sees as few calls as can be)
    if memo is not None:
        fixed_keys, fixed_at = np.unique(fixed, return_inverse=True)
    else:
        fixed_keys, fixed_at = fixed, np.arange(len(fixed))
    v0 = None

    def evaluate(fresh):
        """Values of the fresh coalitions, the fixed ones first if not yet."""
        nonlocal v0
        if v0 is not None:
            return ev(fresh)
        vals = ev(np.concatenate([fixed_keys, fresh]))
        head, vals = vals[:len(fixed_keys)], vals[len(fixed_keys):]
        if memo is not None:
            memo.add(fixed_keys, head)
        v0 = head[fixed_at[0]]
        design.fold_fixed(impl, fixed, head[fixed_at], v0)
        return vals

    left = budget - len(fixed_keys)
    c = design.coalitions
    max_samples = SAMPLES_PER_EVALUATION * budget
    done = 0
    while done < max_samples and left > 0 and design.samples_left(done):
        count = min(BATCH, max_samples - done)
        if memo is not None:
            # the round's first n samples, n doubled until their new coalitions
            # pass what is left (a draw is a function of the sample number, so a
            # longer one extends a shorter one): the samples taken are those of
            # all count, without drawing and sorting thousands for a budget of
            # hundreds (a per-row cost in fastcredit.shap's Kernel explainer)
            n = min(count, 2 * (left // c) + 16)
            while True:
                masks, slots = design.draw(impl, seed, g, done, n)
                flat = masks.reshape(-1)
                new = ~memo.known(flat)
                if v0 is None:
                    new &= ~np.isin(flat, fixed_keys)
                firsts = np.zeros(flat.shape, dtype=bool)
                firsts[np.unique(flat, return_index=True)[1]] = True
                new &= firsts
                cost = np.cumsum(new.reshape(n, c).sum(axis=1))
                if n == count or cost[-1] > left:
                    break
                n = min(count, 2 * n)
            take = int(np.searchsorted(cost, left, side="right"))
            fresh = flat[:take * c][new[:take * c]]
            if len(fresh) or v0 is None:
                memo.add(fresh, evaluate(fresh))
            values = memo.get(flat[:take * c])
        else:
            take = min(count, left // c)
            # the samples the budget takes (the round ends there)
            masks, slots = design.draw(impl, seed, g, done, max(take, 1))
            values = evaluate(masks.reshape(-1)[:take * c])
        left = budget - ev.n_evals
        design.fold(impl, masks[:take], values.reshape(take, c),
                    None if slots is None else slots[:take], v0)
        done += take
        if take < count:
            break
    if v0 is None:
        evaluate(np.empty(0, dtype=np.uint64))
    values, stderr = design.finish(v0)
    return values, stderr, v0, ev.n_evals, done


def run_design(make_design, game, index, budget, seed, threads, width=None):
    """The estimate of every game (a batch of tables, or one function game);
    ``width``: the entries a design's ``finish`` returns (default m)."""
    m = game.m
    width = m if width is None else width
    impl = kernels("approximators", game.backend)
    n_games = game.value.shape[0] if game.kind == TABLE else 1
    values = np.empty((n_games, width))
    stderr = np.empty((n_games, width))
    base = np.empty((n_games, 1))
    evals = np.zeros(n_games, dtype=np.int64)
    samples = np.zeros(n_games, dtype=np.int64)

    def work(a, b):
        for g in range(a, b):
            design = make_design()
            values[g], stderr[g], base[g, 0], evals[g], samples[g] = _run_one(
                design, game, g, seed, budget, impl)

    if game.kind == TABLE:
        _parallel.run(work, n_games, threads)
    else:
        work(0, 1)
    lead = game.lead
    scalar = not lead

    def shaped(x, last):
        return x.reshape(lead + (last,))

    return (shaped(base, 1), shaped(values, width), shaped(stderr, width),
            int(evals[0]) if scalar else evals.reshape(lead),
            int(samples[0]) if scalar else samples.reshape(lead))
