r"""shapiq's KernelSHAP as a thin adapter over ``fc.approximate(method="kernelshap")``.

KernelSHAP (Lundberg and Lee 2017) estimates the Shapley values as the
solution of a weighted least-squares problem over coalitions,

.. math:: \min_\phi \sum_{S} \mu(S) \Big(v(S) - v(\emptyset) - \sum_{i \in S} \phi_i\Big)^2

with the Shapley kernel :math:`\mu(S) = 1 / ((n-1) \binom{n-2}{|S|-1})` and
shapiq's weight 1e8 on v(empty) and v(N) (efficiency all but exact); over
all coalitions its solution is the Shapley value. The sums are estimated
from shapiq's ``CoalitionSampler``'s sample (v(empty), v(N), the border
trick, sizes drawn by ``sampling_weights``, optionally paired with their
complements, importance weights): see
:mod:`fastcredit.approximators.regression` and docs/approximators.md. The
sampling, the normal equations and their solve run compiled; the game is
called on batches of distinct coalitions, each evaluated once.
"""
from __future__ import annotations

import numpy as np
from shapiq.approximator.regression import KernelSHAP as _ShapiqKernelSHAP

from ._common import check_batch_size, check_fixed
from .approximators import _random_state, _RegressionAdapter

__all__ = ["KernelSHAP"]


class KernelSHAP(_RegressionAdapter, _ShapiqKernelSHAP):
    """Drop-in for ``shapiq.KernelSHAP`` (Shapley values by kernel-weighted
    regression; ``fc.approximate(method="kernelshap")``).

    Parameters
    ----------
    n : int
        Number of players, 1 to 4096 (a game of more than 64 runs on shapiq's
        own class).
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

    Examples
    --------
    v(S) = (sum of w_i over S)**2 / 10 with w = (1, 2, 3, 4) has the Shapley
    values w; a budget of 2**4 evaluates every coalition once, so the values
    are exact.

    >>> import numpy as np
    >>> from fastcredit.shapiq import KernelSHAP, TableGame
    >>> bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    >>> game = TableGame((bits @ np.array([1., 2., 3., 4.])) ** 2 / 10)
    >>> sv = KernelSHAP(4, random_state=0).approximate(16, game)
    >>> sv.values.round(6), sv.estimation_budget, sv.estimated   # v(empty), then phi
    (array([0., 1., 2., 3., 4.]), 16, False)
    """

    _method = "kernelshap"

    def __init__(self, n: int, *, pairing_trick: bool = False, sampling_weights=None,
                 random_state: int | None = None, **kwargs):
        check_fixed(kwargs, {"max_order": 1, "index": "SV", "top_order": False},
                    type(self).__name__)
        n, _, _ = self._setup(n, "SV", 1, pairing_trick, sampling_weights)
        super().__init__(n, pairing_trick=self._pairing, sampling_weights=self._weights,
                         random_state=_random_state(random_state))

    def approximate(self, budget: int, game, batch_size: int | None = None):
        """Estimate the Shapley values from at most ``budget`` (>= 2)
        distinct coalitions.

        Parameters
        ----------
        budget : int
            Game evaluations (distinct coalitions; more than the coalitions
            there are is capped at them).
        game : callable
            ``game(coalitions)`` on a bool matrix (k, n).
        batch_size : int, optional
            Most coalitions per game call (None: up to the family's batch).

        Returns
        -------
        shapiq.InteractionValues
            Index "SV", orders 0..1, ``()`` = v(empty) = baseline,
            ``estimated`` False only when ``budget >= 2**n``,
            ``estimation_budget`` = evaluations spent.
        """
        batch_size = check_batch_size(batch_size)
        if batch_size is not None and callable(game):
            game = _in_batches(game, batch_size)
        return super().approximate(budget, game)


def _in_batches(game, batch_size):
    """``game`` called on at most ``batch_size`` rows at a time."""
    def batched(rows):
        return np.concatenate([np.asarray(game(rows[a:a + batch_size]), dtype=np.float64)
                               .reshape(-1) for a in range(0, len(rows), batch_size)])
    return batched
