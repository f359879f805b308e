r"""shapiq's KernelSHAP, vectorised, with the efficiency constraint exact.

KernelSHAP (Lundberg and Lee 2017) estimates the Shapley values as the
solution of a weighted least-squares problem over coalitions,

.. math:: \min_\phi \sum_{S} \mu(S) \Big(v(S) - v(\emptyset) - \sum_{i \in S} \phi_i\Big)^2
          \quad\text{s.t.}\quad \sum_i \phi_i = v(N) - v(\emptyset),

with the Shapley kernel :math:`\mu(S) = 1 / ((n-1) \binom{n-2}{|S|-1})`; over
all coalitions its solution is the Shapley value. The sum is estimated from
a sample of coalitions, drawn as shapiq's ``CoalitionSampler`` draws them:

- v(empty) and v(N) are always evaluated (so ``budget`` >= 2);
- the *border trick*: a coalition size whose expected number of draws
  reaches its number of coalitions is enumerated instead of sampled (at
  ``budget >= 2**n`` every size is, and the result is exact);
- the other sizes are drawn with probability proportional to
  ``sampling_weights`` (default ``1 / (s (n - s))``, the Shapley kernel's
  size distribution), members uniformly, with replacement, until ``budget``
  distinct coalitions are held; with ``pairing_trick`` each draw is followed
  by its complement;
- a sampled coalition's regression weight is its kernel weight times
  count / (P(its size) / C(n, size) * draws), the importance-sampling
  correction; an enumerated one keeps its kernel weight.

shapiq imposes efficiency with a large finite weight on v(N); here it is an
exact linear constraint (the KKT system of the problem above), which is the
limit of shapiq's solution as that weight grows.
"""
from __future__ import annotations

import math

import numpy as np
from shapiq.approximator.regression import KernelSHAP as _ShapiqKernelSHAP
from shapiq.interaction_values import InteractionValues

from .._params import SEED
from .._validation import check_bool, float64_array
from ..games import FUNCTION_PLAYERS
from ._common import GameCalls, check_batch_size, check_budget, check_fixed

__all__ = ["KernelSHAP"]


class KernelSHAP(_ShapiqKernelSHAP):
    """Drop-in for ``shapiq.KernelSHAP`` (Shapley values by kernel-weighted
    regression), vectorised; see the module docstring for the estimator.

    Parameters
    ----------
    n : int
        Number of players, 1 <= n <= 4096.
    pairing_trick : bool
        Sample each coalition together with its complement.
    sampling_weights : array_like (n + 1,), optional
        Non-negative weights of the coalition sizes 0..n for sampling (sizes
        0 and n are always evaluated; a size of weight 0 is never used).
    random_state : int, optional
        Seed; None draws fresh randomness.
    **kwargs
        shapiq's compatibility keywords (``max_order=1``, ``index="SV"``,
        ``top_order=False``); anything else is refused.

    Attributes
    ----------
    n, max_order, min_order, index, top_order, iteration_cost
        As shapiq's (``iteration_cost`` = 1).
    """

    def __init__(self, n: int, *, pairing_trick: bool = False, sampling_weights=None,
                 random_state: int | None = None, **kwargs):
        n = FUNCTION_PLAYERS.check(n, "n")
        pairing_trick = check_bool(pairing_trick, "pairing_trick")
        if random_state is not None:
            random_state = SEED.check(random_state, "random_state")
        check_fixed(kwargs, {"max_order": 1, "index": "SV", "top_order": False},
                    type(self).__name__)
        if sampling_weights is not None:
            sampling_weights = _check_weights(sampling_weights, n)
        super().__init__(n, pairing_trick=pairing_trick, sampling_weights=sampling_weights,
                         random_state=random_state)
        self.pairing_trick = pairing_trick
        weights = self._init_sampling_weights() if sampling_weights is None else sampling_weights
        self._size_weights = weights / weights.sum()

    def approximate(self, budget: int, game, batch_size: int | None = None):
        """Estimate the Shapley values from ``budget`` distinct coalitions.

        Parameters
        ----------
        budget : int
            Distinct coalitions to evaluate, >= 2 (more than the coalitions
            there are is capped at them).
        game : callable
            ``game(coalitions)`` on a bool matrix (k, n).
        batch_size : int, optional
            Most coalitions per game call (None: one call, as shapiq).

        Returns
        -------
        shapiq.InteractionValues
            Index "SV", orders 0..1, ``()`` = v(empty) = baseline,
            ``estimated`` False only when every coalition was evaluated,
            ``estimation_budget`` = evaluations spent.
        """
        budget = check_budget(budget, 2)
        calls = GameCalls(game, self.n)
        batch_size = check_batch_size(batch_size)
        n = self.n
        enumerated, sampled, size_prob = self._design(budget)
        masks = np.concatenate([enumerated, sampled[0]])
        rows = _rows(masks, n)
        step = len(rows) if batch_size is None else batch_size
        values = np.concatenate([calls(rows[a:a + step]) for a in range(0, len(rows), step)])
        sizes = rows.sum(axis=1)
        weight = np.zeros(len(rows))
        inner = (sizes > 0) & (sizes < n)
        kernel = np.zeros(n + 1)
        if n > 1:
            s = np.arange(1, n)
            kernel[1:n] = 1.0 / ((n - 1) * np.array([math.comb(n - 2, k - 1) for k in s], float))
        weight[inner] = kernel[sizes[inner]]
        drawn = sampled[1]
        if drawn.sum():
            ss = sizes[len(enumerated):]
            coalitions_of_size = np.array([math.comb(n, k) for k in range(n + 1)], float)
            weight[len(enumerated):] *= drawn / (size_prob[ss] / coalitions_of_size[ss]
                                                  * drawn.sum())
        v0 = values[sizes == 0][0]
        vn = values[sizes == n][0]
        phi = _constrained_wls(rows[inner], values[inner] - v0, weight[inner], vn - v0)
        out = np.concatenate([[v0], phi])
        return InteractionValues(
            values=out, index=self.approximation_index, max_order=1, min_order=0,
            n_players=n, interaction_lookup=self.interaction_lookup,
            estimated=not len(rows) >= 2**n, estimation_budget=calls.n_evals,
            baseline_value=float(v0), target_index=self.index)

    def _design(self, budget):
        """The coalitions to evaluate, as shapiq's CoalitionSampler chooses
        them: (enumerated masks, (sampled distinct masks, their draw counts),
        P(size) of the sampled sizes (n + 1,))."""
        n = self.n
        per_size = np.array([math.comb(n, k) for k in range(n + 1)], float)
        usable = [k for k in range(1, n) if self._size_weights[k] > 0]
        budget = min(budget, 2 + int(per_size[usable].sum()))
        enumerate_sizes = [0, n] if n > 1 else [0, 1]
        left = budget - len(set(enumerate_sizes))
        to_sample = list(usable)
        prob = np.zeros(n + 1)
        while to_sample:
            p = self._size_weights[to_sample] / self._size_weights[to_sample].sum()
            full = p * left >= per_size[to_sample]
            if not full.any():
                prob[to_sample] = p
                break
            moved = [k for k, f in zip(to_sample, full) if f]
            enumerate_sizes += moved
            left -= int(per_size[moved].sum())
            to_sample = [k for k, f in zip(to_sample, full) if not f]
        enumerated = np.concatenate([_masks_of_size(n, k) for k in sorted(set(enumerate_sizes))])
        if not to_sample or left <= 0:
            return enumerated, (enumerated[:0], np.zeros(0)), prob
        return enumerated, self._draw(left, to_sample, prob), prob

    def _draw(self, target, sizes, prob):
        """Draw coalitions (sizes by ``prob``, members uniform), each followed
        by its complement with the pairing trick when that size is sampled,
        until ``target`` distinct ones; (distinct keys, draw counts)."""
        n = self.n
        rng = self._rng
        sampled = np.zeros(n + 1, bool)
        sampled[sizes] = True
        seen = _pack(np.zeros((0, n), bool))
        kept = []
        n_new = 0
        while n_new < target:
            chunk = max(64, 2 * (target - n_new))
            size = rng.choice(np.arange(n + 1), size=chunk, p=prob)
            # the ``size`` players with the smallest of n uniform keys: a uniform subset
            keys = rng.random((chunk, n))
            rows = keys <= np.sort(keys, axis=1)[np.arange(chunk), size - 1][:, None]
            if self.pairing_trick:
                pair = np.stack([rows, ~rows], axis=1).reshape(-1, n)
                keep = np.ones(len(pair), bool)
                keep[1::2] = sampled[n - size]
                rows = pair[keep]
            masks = _pack(rows)
            _, first = np.unique(masks, return_index=True)
            new = np.zeros(len(masks), bool)
            new[first] = True
            new &= ~np.isin(masks, seen)
            total = np.cumsum(new)
            if n_new + total[-1] >= target:
                stop = int(np.searchsorted(total, target - n_new)) + 1
                masks, new = masks[:stop], new[:stop]
            kept.append(masks)
            seen = np.union1d(seen, masks[new])
            n_new += int(new.sum())
        distinct, counts = np.unique(np.concatenate(kept), return_counts=True)
        return distinct, counts.astype(float)


def _check_weights(weights, n):
    w = float64_array(weights, "sampling_weights")
    if w.shape != (n + 1,):
        raise ValueError(f"sampling_weights must have shape ({n + 1},) (sizes 0..n), got "
                         f"{w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sampling_weights must be finite and non-negative")
    if n > 1 and not np.any(w[1:n] > 0):
        raise ValueError("sampling_weights must give some size 1..n-1 a positive weight")
    return w.copy()


def _pack(rows):
    """Bool rows (k, n) as one sortable key each: uint64 masks for n <= 64,
    else the rows' packed bytes as a void scalar."""
    k, n = rows.shape
    width = max(8, -(-n // 64) * 8)
    packed = np.zeros((k, width), np.uint8)
    packed[:, :-(-n // 8)] = np.packbits(rows, axis=1, bitorder="little")
    return packed.view(np.uint64)[:, 0].copy() if width == 8 else \
        packed.view(np.dtype((np.void, width)))[:, 0].copy()


def _rows(keys, n):
    """The bool rows (k, n) of keys made by :func:`_pack`."""
    raw = keys.view(np.uint8).reshape(len(keys), -1)
    return np.unpackbits(raw, axis=1, count=n, bitorder="little").astype(bool)


def _masks_of_size(n, k):
    """Every coalition of size k as packed keys, in combinations order."""
    from ._common import combinations
    players = combinations(n, k)
    rows = np.zeros((len(players), n), bool)
    rows[np.repeat(np.arange(len(players)), k), players.ravel()] = True
    return _pack(rows)


def _constrained_wls(x, y, w, total):
    """argmin sum_j w_j (y_j - x_j . phi)^2 subject to sum(phi) = total, by
    its KKT system (least squares when the sample leaves it singular)."""
    n = x.shape[1]
    xf = x.astype(np.float64)
    kkt = np.zeros((n + 1, n + 1))
    kkt[:n, :n] = xf.T @ (w[:, None] * xf)
    kkt[:n, n] = kkt[n, :n] = 1.0
    rhs = np.concatenate([xf.T @ (w * y), [total]])
    try:
        sol = np.linalg.solve(kkt, rhs)
    except np.linalg.LinAlgError:
        sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
    return sol[:n]
