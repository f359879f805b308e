r"""shapiq's SVARM, StratifiedSamplingSV and OwenSamplingSV, as thin adapters
over :func:`fastcredit.approximate` (the approximator family: sampling and
per-sample updates compiled, game calls batched).

Each class subclasses shapiq's, keeps its constructor arguments and
attributes, and estimates what shapiq's estimates with shapiq's sampling
design (the family's docs: docs/approximators.md). What changes:

- **the game is evaluated once per distinct coalition** (shapiq's games are
  deterministic value functions; shapiq's SVARM sampler already counts
  distinct coalitions, its stratified and Owen samplers evaluate repeats
  again), in batches of up to 2**12 samples' coalitions per call;
- **budget** = game evaluations, never exceeded; ``estimation_budget`` of the
  result is what was spent. With ``budget >= 2**n`` every coalition is
  evaluated once and the values are exact (``estimated=False``);
- **random_state**: an int makes runs reproducible, None draws fresh
  randomness; repeated ``approximate`` calls continue the same stream, as in
  shapiq (each call's seed is the next draw of numpy's ``default_rng``), but
  the samples are fastcredit's counter-based streams, not shapiq's draws.
"""
from __future__ import annotations

import numpy as np
from shapiq.approximator.marginals import OwenSamplingSV as _ShapiqOwen
from shapiq.approximator.marginals import StratifiedSamplingSV as _ShapiqStratified
from shapiq.approximator.montecarlo import SVARM as _ShapiqSVARM
from shapiq.interaction_values import InteractionValues

from .._params import APPROX_ANCHORS, SEED
from .._validation import check_choice, check_int
from ..approximators import approximate
from ..games import MAX_MASK_PLAYERS, deterministic
from ._common import check_budget, check_fixed

__all__ = ["SVARM", "StratifiedSamplingSV", "OwenSamplingSV"]


def _players(n):
    return check_int(n, "n", lo=1, hi=MAX_MASK_PLAYERS)


def _random_state(random_state):
    return None if random_state is None else SEED.check(random_state, "random_state")


class _Adapter:
    """What the three share: shapiq's game called on bool rows through
    fc.approximate, the result as shapiq's InteractionValues."""

    _method = ""
    _min_budget = 1
    #: shapiq's StratifiedSamplingSV and OwenSamplingSV report every result as
    #: estimated; its SVARM only below 2**n evaluations
    _always_estimated = True

    def _estimate(self, budget, game, **options):
        budget = check_budget(budget, self._min_budget)
        if not callable(game):
            raise TypeError(f"game must be callable, got {type(game).__name__}")
        seed = int(self._rng.integers(0, 2**63))
        est = approximate(deterministic(game), self.n, self.index, 1, method=self._method,
                          budget=budget, seed=seed, coalitions="bool", **options)
        values = np.zeros(len(self.interaction_lookup))
        base = float(est.values[0][0])
        values[self.interaction_lookup[()]] = base
        for i in range(self.n):
            values[self.interaction_lookup[(i,)]] = est.values[1][i]
        self.last_estimate = est
        return InteractionValues(
            values=values, index=self.approximation_index, max_order=self.max_order,
            min_order=self.min_order, n_players=self.n,
            interaction_lookup=self.interaction_lookup,
            estimated=self._always_estimated or not budget >= 2**self.n,
            estimation_budget=int(est.n_evals),
            baseline_value=base, target_index=self.index)


class SVARM(_Adapter, _ShapiqSVARM):
    r"""Drop-in for ``shapiq.SVARM`` (Kolpaczki et al. 2024): the value of i
    from the means of v over coalitions of each size that contain i and that
    do not, each coalition updating a stratum of every player
    (``fc.approximate(method="svarm")``; shapiq's coalition sampler with its
    border trick and weights 1 / (l (n - l))).

    Parameters
    ----------
    n : int
        Players, 1 <= n <= 64.
    index : {"SV", "BV"}
    random_state : int, optional
    pairing_trick, sampling_weights
        shapiq's options; only their defaults (False, None) are supported.
    """

    _method = "svarm"
    _min_budget = 2
    _always_estimated = False

    def __init__(self, n: int, index: str = "SV", *, random_state: int | None = None,
                 pairing_trick: bool = False, sampling_weights=None, **kwargs):
        n = _players(n)
        index = check_choice(index, "index", ("SV", "BV"))
        if pairing_trick is not False:
            raise ValueError("pairing_trick=True is not supported by fastcredit's SVARM yet")
        if sampling_weights is not None:
            raise ValueError("sampling_weights are not supported by fastcredit's SVARM yet "
                             "(it samples sizes with shapiq's default weights)")
        check_fixed(kwargs, {"max_order": 1, "top_order": False}, type(self).__name__)
        super().__init__(n, index, random_state=_random_state(random_state))

    def approximate(self, budget: int, game, *args, **kwargs):
        """Estimate with at most ``budget`` (>= 2) distinct game evaluations."""
        return self._estimate(budget, game)


class StratifiedSamplingSV(_Adapter, _ShapiqStratified):
    r"""Drop-in for ``shapiq.StratifiedSamplingSV`` (Maleki et al. 2013):
    per player and coalition size l = 0..n-1, the mean marginal over random
    S of size l; the value is the mean over sizes
    (``fc.approximate(method="stratified")``, shapiq's order of samples).

    Parameters
    ----------
    n : int
        Players, 1 <= n <= 64.
    random_state : int, optional
    """

    _method = "stratified"

    def __init__(self, n: int, random_state: int | None = None, **kwargs):
        n = _players(n)
        check_fixed(kwargs, {"max_order": 1, "index": "SV", "top_order": False},
                    type(self).__name__)
        super().__init__(n, random_state=_random_state(random_state))

    def approximate(self, budget: int, game, *args, **kwargs):
        """Estimate with at most ``budget`` (>= 1) distinct game evaluations."""
        return self._estimate(budget, game)


class OwenSamplingSV(_Adapter, _ShapiqOwen):
    r"""Drop-in for ``shapiq.OwenSamplingSV`` (Okhrati & Lipani 2020): per
    player and anchor q in linspace(0, 1, n_anchor_points), the mean marginal
    over S drawn with each other player in S with probability q; the value is
    the mean over anchors (``fc.approximate(method="owen")``).

    Parameters
    ----------
    n : int
        Players, 1 <= n <= 64.
    n_anchor_points : int
        Anchors (default 10, shapiq's), >= 1.
    random_state : int, optional
    """

    _method = "owen"

    def __init__(self, n: int, n_anchor_points: int = 10, random_state: int | None = None,
                 **kwargs):
        n = _players(n)
        n_anchor_points = APPROX_ANCHORS.check(n_anchor_points, "n_anchor_points")
        check_fixed(kwargs, {"max_order": 1, "index": "SV", "top_order": False},
                    type(self).__name__)
        super().__init__(n, n_anchor_points, random_state=_random_state(random_state))

    def approximate(self, budget: int, game, *args, **kwargs):
        """Estimate with at most ``budget`` (>= 1) distinct game evaluations."""
        return self._estimate(budget, game, anchors=self.n_anchor_points)
