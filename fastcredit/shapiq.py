"""shapiq backend: fastcredit's kernels behind shapiq's own interfaces.

shapiq users keep their code and get compiled speed:

- :func:`exact_values` computes exact Shapley ("SV") or Banzhaf ("BV") values
  of a shapiq ``Game`` (or any callable on bool coalition matrices) and returns
  shapiq's ``InteractionValues``, laid out exactly as ``shapiq.ExactComputer``
  lays out order-1 results (entry ``()`` first, then ``(i,)``).
- :class:`PermutationSamplingSV` is a drop-in for
  ``shapiq.PermutationSamplingSV``: same constructor and ``approximate(budget,
  game)``, estimated with :func:`fastcredit.permutation_shapley` (antithetic
  pairs, one vectorised game call per batch of walks).

Requires the optional extra: ``pip install fastcredit[shapiq]``.
"""
from __future__ import annotations

import numpy as np

try:
    import shapiq
    from shapiq.approximator.base import Approximator
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("fastcredit.shapiq needs shapiq: pip install 'fastcredit[shapiq]'") from exc

from . import tables
from ._params import BACKEND, SEED, TABLE_PLAYERS, THREADS
from ._validation import check_bool, check_choice, check_int, coalition_table
from .games import FUNCTION_PLAYERS, call_value_function, table_lookup
from .sampling import permutation_shapley

__all__ = ["exact_values", "PermutationSamplingSV", "TableGame"]


class TableGame(shapiq.Game):
    """A shapiq Game whose values are a coalition table v (2**m,), indexed
    by bitmask as everywhere in fastcredit (bit i set iff player i plays)."""

    def __init__(self, v, **kwargs):
        flat, m, lead = coalition_table(v)
        if lead:
            raise ValueError(f"v must be one table (2**m,), got shape {np.shape(v)}")
        self.table = flat[0]
        super().__init__(n_players=m, normalize=False, verbose=False, **kwargs)

    def value_function(self, coalitions):
        return table_lookup(self.table, coalitions)


def _players(game, n_players) -> int:
    if n_players is None:
        n_players = getattr(game, "n_players", None)
        if n_players is None:
            raise ValueError("n_players is required when game is not a shapiq Game")
    return TABLE_PLAYERS.check(n_players, "n_players")


def _order_one(values, baseline, first, index, n, estimated, budget=None):
    lookup = {(): 0} | {(i,): i + 1 for i in range(n)}
    return shapiq.InteractionValues(
        values=np.concatenate([[first], values]), index=index, max_order=1, min_order=0,
        n_players=n, interaction_lookup=lookup, estimated=estimated,
        estimation_budget=budget, baseline_value=float(baseline))


def exact_values(game, index: str = "SV", *, n_players: int | None = None,
                 threads: int | None = None, backend: str | None = None):
    r"""Exact Shapley or Banzhaf values of a shapiq game, as InteractionValues.

    The game is evaluated once on all 2**m coalitions (as bool matrices, in
    chunks), then :func:`fastcredit.shapley` / :func:`fastcredit.banzhaf` run
    on the table in O(2**m).

    Parameters
    ----------
    game : shapiq.Game or callable
        Called as ``game(coalitions)`` with a bool matrix (n, m).
    index : {"SV", "BV"}
    n_players : int, optional
        Needed when ``game`` has no ``n_players`` attribute; 1 <= m <= 30.

    Returns
    -------
    shapiq.InteractionValues
        Order 1, entry ``()`` = v(empty) for SV and the mean of v over all
        coalitions for BV (as shapiq's ExactComputer), baseline v(empty).

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit.shapiq import exact_values
    >>> iv = exact_values(lambda c: c.sum(1) ** 2.0, "SV", n_players=3)
    >>> iv.values
    array([0., 3., 3., 3.])
    """
    index = check_choice(index, "index", ("SV", "BV"))
    m = _players(game, n_players)
    v = tables._table_from_function(game, m, coalitions="bool", threads=threads, name="game")
    rule = tables.shapley if index == "SV" else tables.banzhaf
    phi = rule(v, threads=threads, backend=backend)
    first = v[0] if index == "SV" else v.mean()
    return _order_one(phi, v[0], first, index, m, estimated=False)


class PermutationSamplingSV(Approximator):
    """Drop-in for ``shapiq.PermutationSamplingSV`` running on fastcredit.

    Parameters
    ----------
    n : int
        Number of players.
    random_state : int, optional
        Seed (None means 0, so results are reproducible by default).
    antithetic : bool
        Pair each permutation with its reverse (see
        :func:`fastcredit.permutation_shapley`).
    threads, backend
        Passed to :func:`fastcredit.permutation_shapley`.

    ``approximate(budget, game)`` spends at most ``budget`` game evaluations
    (one on the empty coalition for the baseline, the rest on whole
    permutation walks) and returns order-1 ``InteractionValues`` with
    ``estimated=True``. The estimate's standard errors are kept in
    ``self.last_estimate`` (a :class:`fastcredit.sampling.ShapleyEstimate`).
    """

    def __init__(self, n: int, random_state: int | None = None, *, antithetic: bool = True,
                 threads: int | None = None, backend: str | None = None, **kwargs):
        n = FUNCTION_PLAYERS.check(n, "n")
        if random_state is not None:
            random_state = SEED.check(random_state, "random_state")
        antithetic = check_bool(antithetic, "antithetic")
        threads = THREADS.check(threads)
        backend = BACKEND.check(backend)
        super().__init__(n=n, max_order=1, index="SV", top_order=False,
                         random_state=random_state)
        self.antithetic = antithetic
        self.threads = threads
        self.backend = backend
        self.last_estimate = None

    def approximate(self, budget: int, game, *args, **kwargs):
        budget = check_int(budget, "budget", lo=2)
        if not callable(game):
            raise TypeError(f"game must be callable, got {type(game).__name__}")
        seed = 0 if self._random_state is None else int(self._random_state)
        empty = float(call_value_function(game, np.zeros((1, self.n), dtype=bool), name="game",
                                          where="on the empty coalition", finite=False)[0])
        est = permutation_shapley(game, self.n, budget=budget - 1, antithetic=self.antithetic,
                                  coalitions="bool", seed=seed, threads=self.threads,
                                  backend=self.backend)
        self.last_estimate = est
        return _order_one(est.values, empty, empty, "SV", self.n, estimated=True,
                          budget=int(est.n_evals) + 1)
