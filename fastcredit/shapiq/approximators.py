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
from shapiq.approximator.montecarlo import SHAPIQ as _ShapiqSHAPIQ
from shapiq.approximator.montecarlo import SVARM as _ShapiqSVARM
from shapiq.approximator.montecarlo import SVARMIQ as _ShapiqSVARMIQ
from shapiq.approximator.montecarlo import UnbiasedKernelSHAP as _ShapiqUnbiasedKernelSHAP
from shapiq.approximator.regression import InconsistentKernelSHAPIQ as \
    _ShapiqInconsistentKernelSHAPIQ
from shapiq.approximator.regression import KernelSHAPIQ as _ShapiqKernelSHAPIQ
from shapiq.approximator.regression import RegressionFBII as _ShapiqRegressionFBII
from shapiq.approximator.regression import RegressionFSII as _ShapiqRegressionFSII
from shapiq.approximator.regression import kADDSHAP as _ShapiqKADDSHAP
from shapiq.interaction_values import InteractionValues
from shapiq.approximator.base import Approximator as _ShapiqApproximator
from shapiq.approximator.sparse import SPEX as _ShapiqSPEX
from shapiq.approximator.sparse import ProxySPEX as _ShapiqProxySPEX

from .. import _parallel
from .._constants import BCH_MAX_ORDER
from .._params import (APPROX_ANCHORS, SEED, SPEX_DECODER, SPEX_DECODER_DEFAULT, SPEX_DEGREE,
                       SPEX_DEGREE_DEFAULT)
from .._validation import check_bool, check_choice, check_int
from ..approximators import approximate
from ..approximators import proxy as _proxy
from ..approximators import sparse as _sparse
from ..approximators.regression import check_sampling_weights
from ..games import (FUNCTION_PLAYERS, MAX_MASK_PLAYERS, as_game, call_value_function,
                     deterministic)
from ._common import check_budget, check_fixed, count_interactions

__all__ = ["SVARM", "StratifiedSamplingSV", "OwenSamplingSV", "SHAPIQ", "SVARMIQ",
           "UnbiasedKernelSHAP", "KernelSHAPIQ", "InconsistentKernelSHAPIQ", "kADDSHAP",
           "RegressionFSII", "RegressionFBII"]


def _players(n, limit=None):
    """Players: 1 to 4096 (a game of fastcredit's samplers); the family's
    coalitions are uint64 masks, so a class estimates n <= 64 itself and
    hands a larger game to shapiq's own class (``limit``: a lower bound of a
    class with no such hand-over)."""
    n = FUNCTION_PLAYERS.check(n, "n")
    return n if limit is None else check_int(n, "n", hi=limit)


def _random_state(random_state):
    return None if random_state is None else SEED.check(random_state, "random_state")


class _Adapter:
    """What every adapter shares: shapiq's game called on bool rows through
    fc.approximate, the result as shapiq's InteractionValues."""

    _method = ""
    _min_budget = 1

    def _estimate(self, budget, game, **options):
        if self.n > MAX_MASK_PLAYERS:
            return super().approximate(budget, game)
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
            estimated=True,     # shapiq's stratified and Owen sampling say so at any budget
            estimation_budget=int(est.n_evals),
            baseline_value=base, target_index=self.index)


class StratifiedSamplingSV(_Adapter, _ShapiqStratified):
    r"""Drop-in for ``shapiq.StratifiedSamplingSV`` (Maleki et al. 2013):
    per player and coalition size l = 0..n-1, the mean marginal over random
    S of size l; the value is the mean over sizes
    (``fc.approximate(method="stratified")``, shapiq's order of samples).

    Parameters
    ----------
    n : int
        Players, 1 to 4096 (a game of more than 64 runs on shapiq's own class).
    random_state : int, optional

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4) has the Shapley
    values w; a budget of 2**4 evaluates every coalition once, so the values
    are exact (flagged estimated all the same, as shapiq's).

    >>> import numpy as np
    >>> from fastcredit.shapiq import StratifiedSamplingSV, TableGame
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> sv = StratifiedSamplingSV(4, random_state=0).approximate(16, game)
    >>> sv.values.round(6), sv.estimation_budget, sv.estimated   # v(empty), then phi
    (array([0., 1., 2., 3., 4.]), 16, True)
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
        Players, 1 to 4096 (a game of more than 64 runs on shapiq's own class).
    n_anchor_points : int
        Anchors (default 10, shapiq's), >= 1.
    random_state : int, optional

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4) has the Shapley
    values w; a budget of 2**4 evaluates every coalition once, so the values
    are exact (flagged estimated all the same, as shapiq's).

    >>> import numpy as np
    >>> from fastcredit.shapiq import OwenSamplingSV, TableGame
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> sv = OwenSamplingSV(4, random_state=0).approximate(16, game)
    >>> sv.values.round(6), sv.estimation_budget, sv.estimated   # v(empty), then phi
    (array([0., 1., 2., 3., 4.]), 16, True)
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


# --- SHAP-IQ and SVARM-IQ (shapiq's MonteCarlo approximators) ---------------------

class _MonteCarloAdapter(_Adapter):
    """shapiq's MonteCarlo approximators (SHAPIQ, SVARMIQ, SVARM,
    UnbiasedKernelSHAP) over ``fc.approximate(method="shapiq" | "svarmiq")``: every order
    min_order..max_order, k-SII as shapiq builds it (the SII estimates,
    aggregated by shapiq's InteractionValues)."""

    _min_budget = 2
    #: further fc.approximate options (the regression classes: no stderr,
    #: which shapiq's result does not carry)
    _options = {}

    def _setup(self, n, index, max_order, pairing_trick, sampling_weights):
        n = _players(n)
        index = check_choice(index, "index", tuple(self.valid_indices))
        max_order = check_int(max_order, "max_order", lo=1, hi=n)
        if index in ("SV", "BV") and max_order != 1:
            raise ValueError(f"max_order must be 1 for index={index!r}, got {max_order}")
        count_interactions(n, 1, max_order, "max_order")
        self._pairing = check_bool(pairing_trick, "pairing_trick")
        self._weights = (None if sampling_weights is None
                         else check_sampling_weights(sampling_weights, n))
        return n, index, max_order

    def approximate(self, budget: int, game, *args, **kwargs):
        """Estimate with at most ``budget`` (>= 2) distinct game evaluations."""
        if self.n > MAX_MASK_PLAYERS:
            return super().approximate(budget, game, *args, **kwargs)
        budget = check_budget(budget, self._min_budget)
        if not callable(game):
            raise TypeError(f"game must be callable, got {type(game).__name__}")
        seed = int(self._rng.integers(0, 2**63))
        est = approximate(deterministic(game), self.n, self.approximation_index, self.max_order,
                          method=self._method, budget=budget, seed=seed, coalitions="bool",
                          pairing=self._pairing, sampling_weights=self._weights,
                          **self._options)
        base = float(est.values[0][0])
        # shapiq's lookup: sizes min_order..max_order, each in combinations
        # order, which is the layout's
        parts = [np.array([base]) if s == 0 else est.values[s]
                 for s in range(self.min_order, self.max_order + 1)]
        self.last_estimate = est
        return InteractionValues(
            values=np.concatenate(parts), index=self.approximation_index,
            max_order=self.max_order, min_order=self.min_order, n_players=self.n,
            interaction_lookup=self.interaction_lookup, estimated=not budget >= 2**self.n,
            estimation_budget=int(est.n_evals), baseline_value=base, target_index=self.index)


class SVARM(_MonteCarloAdapter, _ShapiqSVARM):
    r"""Drop-in for ``shapiq.SVARM`` (Kolpaczki et al. 2024): the value of i
    from the means of v over coalitions of each size that contain i and that
    do not, each coalition updating a stratum of every player. shapiq's SVARM
    is its SVARM-IQ of order 1, and so is this one
    (``fc.approximate(method="svarmiq", index="SII", order=1)``, which is
    ``method="svarm"``; shapiq's coalition sampler with its border trick).

    Parameters
    ----------
    n : int
        Players, 1 to 4096 (a game of more than 64 runs on shapiq's own class).
    index : {"SV", "BV"}
    random_state : int, optional
    pairing_trick : bool
        Each drawn coalition with its complement.
    sampling_weights : array_like (n + 1,), optional
        Weights of the coalition sizes (default shapiq's, 1 / (l (n - l))).

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4) has the Shapley
    values w; a budget of 2**4 evaluates every coalition once, so the values
    are exact.

    >>> import numpy as np
    >>> from fastcredit.shapiq import SVARM, TableGame
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> sv = SVARM(4, random_state=0).approximate(16, game)
    >>> sv.values.round(6), sv.estimation_budget, sv.estimated   # v(empty), then phi
    (array([0., 1., 2., 3., 4.]), 16, False)
    """

    _method = "svarmiq"

    def __init__(self, n: int, index: str = "SV", *, random_state: int | None = None,
                 pairing_trick: bool = False, sampling_weights=None, **kwargs):
        n, index, _ = self._setup(n, index, 1, pairing_trick, sampling_weights)
        check_fixed(kwargs, {"max_order": 1, "top_order": False}, type(self).__name__)
        super().__init__(n, index, random_state=_random_state(random_state),
                         pairing_trick=self._pairing, sampling_weights=self._weights)


class SHAPIQ(_MonteCarloAdapter, _ShapiqSHAPIQ):
    r"""Drop-in for ``shapiq.SHAPIQ`` (Fumagalli et al. 2023): the index's
    standard form, the border sizes enumerated and the mean over drawn
    coalitions of their importance-weighted terms, unbiased
    (``fc.approximate(method="shapiq")``; shapiq's coalition sampler).

    Parameters
    ----------
    n : int
        Players, 1 to 4096 (a game of more than 64 runs on shapiq's own class).
    max_order : int
    index : {"k-SII", "SII", "STII", "FSII", "FBII", "SV", "CHII", "BII", "BV"}
        FSII and FBII estimate the top order only (shapiq's ``top_order``);
        CHII is the chaining index (shapiq's own MonteCarlo weighs CHII with
        its Moebius weights, which does not converge to its ExactComputer's
        CHII).
    top_order : bool
    sampling_weights : array_like (n + 1,), optional
        Weights of the coalition sizes (default shapiq's).
    pairing_trick : bool
        Each drawn coalition with its complement.
    random_state : int, optional

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4): the SII of
    player i is w_i (its Shapley value), of a pair 2 w_i w_j / 10. A budget
    of 2**4 evaluates every coalition once, so the values are exact.

    >>> import numpy as np
    >>> from fastcredit.shapiq import SHAPIQ, TableGame
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> sii = SHAPIQ(4, max_order=2, index="SII", random_state=0).approximate(16, game)
    >>> sii.values.round(6)              # v(empty), the players, the pairs (0, 1), (0, 2), ...
    array([0. , 1. , 2. , 3. , 4. , 0.4, 0.6, 0.8, 1.2, 1.6, 2.4])
    >>> sii.estimation_budget, sii.estimated
    (16, False)
    """

    _method = "shapiq"

    def __init__(self, n: int, max_order: int = 2, index: str = "k-SII", *,
                 top_order: bool = False, sampling_weights=None, pairing_trick: bool = False,
                 random_state: int | None = None, **kwargs):
        n, index, max_order = self._setup(n, index, max_order, pairing_trick, sampling_weights)
        super().__init__(n, max_order, index, top_order=check_bool(top_order, "top_order"),
                         sampling_weights=self._weights, pairing_trick=self._pairing,
                         random_state=_random_state(random_state))


class UnbiasedKernelSHAP(_MonteCarloAdapter, _ShapiqUnbiasedKernelSHAP):
    r"""Drop-in for ``shapiq.UnbiasedKernelSHAP`` (Covert & Lee 2021): SHAP-IQ
    for the Shapley value (``fc.approximate(method="shapiq", index="SV")``).

    Parameters
    ----------
    n : int
        Players, 1 to 4096 (a game of more than 64 runs on shapiq's own class).
    pairing_trick : bool
    sampling_weights : array_like (n + 1,), optional
    random_state : int, optional

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4) has the Shapley
    values w; a budget of 2**4 evaluates every coalition once, so the values
    are exact.

    >>> import numpy as np
    >>> from fastcredit.shapiq import TableGame, UnbiasedKernelSHAP
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> sv = UnbiasedKernelSHAP(4, random_state=0).approximate(16, game)
    >>> sv.values.round(6), sv.estimation_budget, sv.estimated   # v(empty), then phi
    (array([0., 1., 2., 3., 4.]), 16, False)
    """

    _method = "shapiq"

    def __init__(self, n: int, *, pairing_trick: bool = False, sampling_weights=None,
                 random_state: int | None = None, **kwargs):
        n, _, _ = self._setup(n, "SV", 1, pairing_trick, sampling_weights)
        super().__init__(n, pairing_trick=self._pairing, sampling_weights=self._weights,
                         random_state=_random_state(random_state))


class SVARMIQ(_MonteCarloAdapter, _ShapiqSVARMIQ):
    r"""Drop-in for ``shapiq.SVARMIQ`` (Kolpaczki et al. 2024): the index's
    standard form stratified by coalition size and the coalition's
    intersection with each interaction, each drawn coalition updating one
    stratum of every interaction (``fc.approximate(method="svarmiq")``;
    shapiq's coalition sampler).

    Parameters
    ----------
    n : int
        Players, 1 to 4096 (a game of more than 64 runs on shapiq's own class).
    max_order : int
    index : {"k-SII", "SII", "STII", "FSII", "FBII", "SV", "CHII", "BII", "BV"}
        As :class:`SHAPIQ`.
    top_order : bool
    pairing_trick : bool
    sampling_weights : array_like (n + 1,), optional
    random_state : int, optional

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4) is 2-additive,
    so its 2-SII are its Moebius coefficients: w_i**2 / 10 for player i,
    2 w_i w_j / 10 for a pair. A budget of 2**4 evaluates every coalition
    once, so the values are exact.

    >>> import numpy as np
    >>> from fastcredit.shapiq import SVARMIQ, TableGame
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> ksii = SVARMIQ(4, max_order=2, random_state=0).approximate(16, game)
    >>> ksii.index, ksii.values.round(6)   # v(empty), the players, the pairs (0, 1), (0, 2), ...
    ('k-SII', array([0. , 0.1, 0.4, 0.9, 1.6, 0.4, 0.6, 0.8, 1.2, 1.6, 2.4]))
    """

    _method = "svarmiq"

    def __init__(self, n: int, max_order: int = 2, index: str = "k-SII", *,
                 top_order: bool = False, pairing_trick: bool = False, sampling_weights=None,
                 random_state: int | None = None):
        n, index, max_order = self._setup(n, index, max_order, pairing_trick, sampling_weights)
        super().__init__(n, max_order, index, top_order=check_bool(top_order, "top_order"),
                         pairing_trick=self._pairing, sampling_weights=self._weights,
                         random_state=_random_state(random_state))


# --- the regression approximators (shapiq's approximator/regression) ---------------

class _RegressionAdapter(_MonteCarloAdapter):
    """The regression classes: shapiq's result carries no standard errors,
    so fc.approximate skips their variance pass (about half the time)."""

    _options = {"stderr": False}


class KernelSHAPIQ(_RegressionAdapter, _ShapiqKernelSHAPIQ):
    r"""Drop-in for ``shapiq.KernelSHAPIQ`` (Fumagalli et al. 2024): SII by
    weighted least squares, order 1 and then order 2 on the residuals, each
    with its own kernel; k-SII aggregated from SII by shapiq's
    InteractionValues (``fc.approximate(method="kernelshapiq")``; shapiq's
    coalition sampler, importance weights and 1e8 border weights).

    Parameters
    ----------
    n : int
        Players, 1 to 4096 (a game of more than 64 runs on shapiq's own class).
    max_order : int
        Any order; from 3 on, as shapiq, order t's regression runs on the
        middle sizes t..n-t and the border coalitions enter with SII's own
        weights.
    index : {"k-SII", "SII", "SV"}
    pairing_trick : bool
    sampling_weights : array_like (n + 1,), optional
    random_state : int, optional

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4) is 2-additive,
    so its 2-SII are its Moebius coefficients: w_i**2 / 10 for player i,
    2 w_i w_j / 10 for a pair. A budget of 2**4 evaluates every coalition
    once, so the values are exact.

    >>> import numpy as np
    >>> from fastcredit.shapiq import KernelSHAPIQ, TableGame
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> ksii = KernelSHAPIQ(4, max_order=2, random_state=0).approximate(16, game)
    >>> ksii.index, ksii.values.round(6)   # v(empty), the players, the pairs (0, 1), (0, 2), ...
    ('k-SII', array([0. , 0.1, 0.4, 0.9, 1.6, 0.4, 0.6, 0.8, 1.2, 1.6, 2.4]))
    """

    _method = "kernelshapiq"

    def __init__(self, n: int, max_order: int = 2, index: str = "k-SII", *,
                 pairing_trick: bool = False, sampling_weights=None,
                 random_state: int | None = None):
        n, index, max_order = self._setup(n, index, max_order, pairing_trick, sampling_weights)
        super().__init__(n, max_order, index, pairing_trick=self._pairing,
                         sampling_weights=self._weights, random_state=_random_state(random_state))


class InconsistentKernelSHAPIQ(_RegressionAdapter, _ShapiqInconsistentKernelSHAPIQ):
    r"""Drop-in for ``shapiq.InconsistentKernelSHAPIQ``: one least squares
    over every order with SII's Bernoulli coefficients and KernelSHAP's
    kernel (not consistent for SII, as shapiq's;
    ``fc.approximate(method="inconsistent_kernelshapiq")``).

    Parameters
    ----------
    n : int
        Players, 1 to 4096 (a game of more than 64 runs on shapiq's own class).
    max_order : int
    index : {"k-SII", "SII", "SV"}
    pairing_trick : bool
    sampling_weights : array_like (n + 1,), optional
    random_state : int, optional

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4): the SII of
    player i is w_i (its Shapley value), of a pair 2 w_i w_j / 10. Over
    every coalition (a budget of 2**4) the least squares is exact.

    >>> import numpy as np
    >>> from fastcredit.shapiq import InconsistentKernelSHAPIQ, TableGame
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> approximator = InconsistentKernelSHAPIQ(4, max_order=2, index="SII", random_state=0)
    >>> approximator.approximate(16, game).values.round(6)   # v(empty), players, pairs
    array([0. , 1. , 2. , 3. , 4. , 0.4, 0.6, 0.8, 1.2, 1.6, 2.4])
    """

    _method = "inconsistent_kernelshapiq"

    def __init__(self, n: int, max_order: int = 2, index: str = "k-SII", *,
                 pairing_trick: bool = False, sampling_weights=None,
                 random_state: int | None = None):
        n, index, max_order = self._setup(n, index, max_order, pairing_trick, sampling_weights)
        super().__init__(n, max_order, index, pairing_trick=self._pairing,
                         sampling_weights=self._weights, random_state=_random_state(random_state))


class _FixedIndexRegression(_RegressionAdapter):
    """kADDSHAP, RegressionFSII, RegressionFBII: shapiq's constructors fix
    the index and take ``**kwargs`` for compatibility."""

    _index = ""
    #: further ``index`` values shapiq's explainers pass (and its class ignores)
    _also = ()

    def __init__(self, n: int, max_order: int = 2, *, pairing_trick: bool = False,
                 sampling_weights=None, random_state: int | None = None, **kwargs):
        if "index" in kwargs:
            check_choice(kwargs.pop("index"), "index", (self._index,) + self._also)
        check_fixed(kwargs, {}, type(self).__name__)
        n, _, max_order = self._setup(n, self._index, max_order, pairing_trick,
                                      sampling_weights)
        super().__init__(n, max_order, pairing_trick=self._pairing,
                         sampling_weights=self._weights, random_state=_random_state(random_state))


class kADDSHAP(_FixedIndexRegression, _ShapiqKADDSHAP):  # noqa: N801  (shapiq's name)
    r"""Drop-in for ``shapiq.kADDSHAP`` (Pelegrina et al. 2023): the
    k-additive least squares with the Bernoulli coefficients
    (``fc.approximate(method="kaddshap")``).

    Parameters
    ----------
    n : int
        Players, 1 to 4096 (a game of more than 64 runs on shapiq's own class).
    max_order : int
    pairing_trick : bool
    sampling_weights : array_like (n + 1,), optional
    random_state : int, optional

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4) is 2-additive,
    so its 2-additive fit is exact: the Shapley values w for the players,
    2 w_i w_j / 10 for a pair. A budget of 2**4 evaluates every coalition
    once.

    >>> import numpy as np
    >>> from fastcredit.shapiq import TableGame, kADDSHAP
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> kadd = kADDSHAP(4, max_order=2, random_state=0).approximate(16, game)
    >>> kadd.values.round(6)             # v(empty), the players, the pairs (0, 1), (0, 2), ...
    array([0. , 1. , 2. , 3. , 4. , 0.4, 0.6, 0.8, 1.2, 1.6, 2.4])
    """

    _method, _index = "kaddshap", "kADD-SHAP"


class RegressionFSII(_FixedIndexRegression, _ShapiqRegressionFSII):
    r"""Drop-in for ``shapiq.RegressionFSII`` (Tsai et al. 2023): FSII as
    the least squares on the indicators [T ⊆ S], ``|T| <= k``, with
    KernelSHAP's kernel (``fc.approximate(method="regression_fsii")``).

    Parameters
    ----------
    n : int
        Players, 1 to 4096 (a game of more than 64 runs on shapiq's own class).
    max_order : int
    pairing_trick : bool
    sampling_weights : array_like (n + 1,), optional
    random_state : int, optional

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4) is 2-additive,
    so its FSII of order 2 are its Moebius coefficients: w_i**2 / 10 for
    player i, 2 w_i w_j / 10 for a pair. A budget of 2**4 evaluates every
    coalition once, so the values are exact.

    >>> import numpy as np
    >>> from fastcredit.shapiq import RegressionFSII, TableGame
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> fsii = RegressionFSII(4, max_order=2, random_state=0).approximate(16, game)
    >>> [round(float(fsii[players]), 6) for players in [(0,), (3,), (2, 3)]]
    [0.1, 1.6, 2.4]
    """

    _method, _index = "regression_fsii", "FSII"


class RegressionFBII(_FixedIndexRegression, _ShapiqRegressionFBII):
    r"""Drop-in for ``shapiq.RegressionFBII`` (Tsai et al. 2023): FBII as
    the unweighted least squares on the indicators [T ⊆ S], ``|T| <= k``,
    coalitions drawn uniformly (``fc.approximate(method="regression_fbii")``).

    Parameters
    ----------
    n : int
        Players, 1 to 4096 (a game of more than 64 runs on shapiq's own class).
    max_order : int
    pairing_trick : bool
    sampling_weights : array_like (n + 1,), optional
    random_state : int, optional

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4) is 2-additive,
    so its FBII of order 2 are its Moebius coefficients: w_i**2 / 10 for
    player i, 2 w_i w_j / 10 for a pair. A budget of 2**4 evaluates every
    coalition once, so the values are exact.

    >>> import numpy as np
    >>> from fastcredit.shapiq import RegressionFBII, TableGame
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> fbii = RegressionFBII(4, max_order=2, random_state=0).approximate(16, game)
    >>> [round(float(fbii[players]), 6) for players in [(0,), (3,), (2, 3)]]
    [0.1, 1.6, 2.4]
    """

    _method, _index = "regression_fbii", "FBII"

    def approximate(self, budget: int, game, *args, **kwargs):
        """Estimate with at most ``budget`` (>= 2) distinct game evaluations;
        ``baseline_value`` is v(empty), as shapiq's, while the ``()`` entry is
        FBII's own (the fitted intercept, v(empty) included)."""
        if not callable(game):
            raise TypeError(f"game must be callable, got {type(game).__name__}")
        empty = []

        def game_seen_empty(coalitions):
            values = game(coalitions)
            at = np.flatnonzero(~np.asarray(coalitions, dtype=bool).any(axis=1))
            if at.size and not empty:
                # as returned: the checks of the values are the estimator's
                empty.append(np.asarray(values).reshape(-1)[at[0]])
            return values

        result = super().approximate(budget, game_seen_empty, *args, **kwargs)
        result.baseline_value = float(empty[0])
        return result

    # shapiq's explainers build it for BV (approximator="regression"), the
    # FBII of order 1
    _also = ("BV",)


# --- sparse transform: SPEX --------------------------------------------------------

__all__ += ["SPEX"]


class SPEX(_ShapiqSPEX):
    r"""Drop-in for ``shapiq.SPEX`` (Kang et al. 2025): the sparse Fourier
    transform of the game from ``budget`` subsampled evaluations, its
    coefficients turned into Moebius coefficients and those into ``index``
    (shapiq's converter), the transform fastcredit's
    (:mod:`fastcredit.approximators.sparse`: shapiq's sparse_transform
    estimator, its subsampling, peeling and BCH decoding compiled; neither
    ``sparse_transform`` nor ``galois`` is called).

    The subsampling matrices are drawn from ``random_state`` (shapiq's draw
    them from numpy's global generator). The queries are 3 (parity bits + 1)
    2^b coalitions for the largest b that fits in the budget; each distinct
    coalition is evaluated once, and ``estimation_budget`` is the
    evaluations spent.

    Parameters
    ----------
    n : int
        Players, n >= 1 (no coalition masks: beyond 64 as well).
    index : str
        Any index of shapiq's MoebiusConverter (default "FBII").
    max_order : int, optional
    top_order : bool
    random_state : int, optional
    decoder_type : {"soft", "hard"}
    degree_parameter : int
        Errors the BCH code corrects (the degree SPEX looks for), 2..16.

    Examples
    --------
    v(S) = 2 [{0, 1} ⊆ S] + [5 ∈ S] on 16 players has five Fourier
    coefficients, which SPEX recovers from a few hundred of the 2**16
    coalitions: the FBII of order 2 of this 2-additive game, its Moebius
    coefficients, exact; every other interaction is zero and left out.

    >>> from fastcredit.shapiq import SPEX
    >>> game = lambda coalitions: 2.0 * coalitions[:, 0] * coalitions[:, 1] + coalitions[:, 5]
    >>> fbii = SPEX(n=16, max_order=2, random_state=0).approximate(1000, game)
    >>> {s: round(float(fbii[s]), 6) for s in sorted(fbii.interaction_lookup, key=len)}
    {(): 0.0, (5,): 1.0, (0, 1): 2.0}
    >>> fbii.estimation_budget <= 1000
    True
    """

    def __init__(self, *, n, index="FBII", max_order=None, top_order=False, random_state=None,
                 decoder_type=SPEX_DECODER_DEFAULT, degree_parameter=SPEX_DEGREE_DEFAULT):
        # no coalition masks on this path: any n a BCH code of ours covers
        # (shapiq's explainers pick SPEX beyond 64 players at order 2)
        n = _players(n, limit=BCH_MAX_ORDER)
        self.transform_type = "fourier"
        self.decoder_type = SPEX_DECODER.check(decoder_type)
        self.degree_parameter = SPEX_DEGREE.check(degree_parameter)
        # shapiq's sampling and decoding parameters, as attributes (the
        # estimator is fastcredit.approximators.sparse's with these values)
        self.query_args = {"query_method": "complex", "num_subsample": _sparse.N_GROUPS,
                           "delays_method_source": "joint-coded", "subsampling_method": "qsft",
                           "delays_method_channel": "identity-siso", "num_repeat": 1,
                           "t": self.degree_parameter}
        self.decoder_args = {"num_subsample": _sparse.N_GROUPS, "num_repeat": 1,
                             "reconstruct_method_source": "coded",
                             "peeling_method": "multi-detect",
                             "reconstruct_method_channel": "identity-siso"
                             if self.decoder_type == "soft" else "identity",
                             "regress": "lasso", "res_energy_cutoff": _sparse.ENERGY_CUTOFF}
        # shapiq's Sparse.__init__ would build galois' BCH decoder (galois
        # compiling itself, ~30 s once per process): its attributes are set
        # above and the base class below is shapiq's Approximator
        _ShapiqApproximator.__init__(
            self, n=n,
            max_order=n if max_order is None else check_int(max_order, "max_order", lo=1, hi=n),
            index=index,
            top_order=check_bool(top_order, "top_order"),
            random_state=_random_state(random_state), initialize_dict=False)

    def approximate(self, budget, game, **kwargs):
        budget = check_budget(budget, 1)
        if not callable(game):
            raise TypeError(f"game must be callable, got {type(game).__name__}")
        n = self.n

        def subsampling(b):
            return np.stack([self._rng.integers(2, size=(n, b))
                             for _ in range(_sparse.N_GROUPS)])

        fourier = _sparse.sparse_fourier(
            lambda rows, keys: call_value_function(game, rows.astype(bool), name="game",
                                                   where="inside SPEX.approximate",
                                                   finite=True),
            n, budget, subsampling, self.query_args["t"], self.decoder_type == "soft")
        # as shapiq's: t as it fell, b as chosen
        self.degree_parameter = self.query_args["t"] = fourier.t
        self.query_args["b"] = self.decoder_args["b"] = fourier.b
        used = fourier.n_evals
        result = self._process_moebius(moebius_transform=_sparse.fourier_to_moebius(
            fourier.frequencies, fourier.coefficients))
        if self.top_order:
            result = self._filter_order(result)
        return InteractionValues(
            values=result, index=self.approximation_index, min_order=self.min_order,
            max_order=self.max_order, n_players=self.n,
            interaction_lookup=dict(self.interaction_lookup), estimated=True,
            estimation_budget=used,
            baseline_value=result[self.interaction_lookup[()]]
            if () in self.interaction_lookup else 0.0, target_index=self.index)


# --- ProxySPEX ----------------------------------------------------------------------

__all__ += ["ProxySPEX"]


class ProxySPEX(_ShapiqProxySPEX):
    r"""Drop-in for ``shapiq.ProxySPEX`` (Butler et al. 2025): LightGBM
    regressors cross-validated over shapiq's grid on uniformly sampled
    coalitions (with their complements), the chosen ensemble's Fourier
    coefficients read off its trees, the largest refitted by ridge
    regression, turned into Moebius coefficients and those into ``index``
    (:mod:`fastcredit.approximators.proxy`). The estimator is shapiq's, fitted
    with less work: one 1000-round fit per learning rate, depth and fold
    scored at 500 and 1000 trees (the same models as shapiq's 40 fits), the
    folds' fits on all cores; the sampling, the trees' Fourier coefficients
    (compiled) and the refinement take a fraction of a second. Needs
    lightgbm.

    - **budget** = game evaluations, never exceeded: v(empty), v(N), then a
      uniformly random coalition and its complement per draw, each distinct
      coalition evaluated once; ``estimation_budget`` is what was spent. A
      budget of 2**n or more evaluates every coalition, and the proxy is
      fitted to all of them (as shapiq's: the result is still an estimate).
    - **random_state**: the coalitions are fastcredit's counter-based
      streams, seeded by the next draw of the class's generator on each
      call (shapiq's sampler continues one stream); LightGBM's
      ``random_state`` is the class's, as shapiq's.
    - more than 64 players run on shapiq's own class.

    Parameters
    ----------
    n : int
        Players, 1 to 4096.
    index : str
        Any index of shapiq's MoebiusConverter (default "FBII").
    max_order : int, optional
        Default n.
    top_order : bool
    random_state : int, optional

    Examples
    --------
    v(S) = 2 [{0, 1} ⊆ S] + [5 ∈ S] on 16 players is 2-additive: its FBII of
    order 2 are its Moebius coefficients, which the proxy fitted to 1,000
    of the 2**16 coalitions recovers; every other interaction is zero (to
    the refit's rounding) or left out.

    >>> from fastcredit.shapiq import ProxySPEX
    >>> game = lambda coalitions: 2.0 * coalitions[:, 0] * coalitions[:, 1] + coalitions[:, 5]
    >>> fbii = ProxySPEX(n=16, max_order=2, random_state=0).approximate(1000, game)
    >>> {s: round(float(fbii[s]), 6) for s in sorted(fbii.interaction_lookup, key=len)
    ...  if abs(fbii[s]) > 1e-6}
    {(5,): 1.0, (0, 1): 2.0}
    >>> fbii.estimation_budget
    1000
    """

    def __init__(self, *, n, index="FBII", max_order=None, top_order=False,
                 random_state=None):
        n = _players(n)
        super().__init__(
            n=n, index=index,
            max_order=None if max_order is None else check_int(max_order, "max_order", lo=1,
                                                               hi=n),
            top_order=check_bool(top_order, "top_order"),
            random_state=_random_state(random_state))

    def approximate(self, budget, game, **kwargs):
        """Estimate with at most ``budget`` (>= 2) distinct game evaluations."""
        if self.n > MAX_MASK_PLAYERS:
            return super().approximate(budget, game, **kwargs)
        budget = check_budget(budget, 2)
        if not callable(game):
            raise TypeError(f"game must be callable, got {type(game).__name__}")
        seed = np.uint64(self._rng.integers(0, 2**63))
        g = as_game(deterministic(game), self.n, coalitions="bool",
                    kernels={"callable": _proxy.ProxySpex.kernel})
        moebius, used = _proxy.moebius(g, budget, seed, _parallel.n_threads(None),
                                       self._random_state)
        result = self._process_moebius(moebius_transform=moebius)
        if self.top_order:
            result = self._filter_order(result)
        return InteractionValues(
            values=result, index=self.approximation_index, min_order=self.min_order,
            max_order=self.max_order, n_players=self.n,
            interaction_lookup=dict(self.interaction_lookup), estimated=True,
            estimation_budget=int(used),
            baseline_value=result[self.interaction_lookup[()]]
            if () in self.interaction_lookup else 0.0, target_index=self.index)
