r"""shapiq's ExactComputer on fastcredit's kernels.

The game is evaluated once on all 2**n coalitions (bool matrices, in chunks),
giving the coalition table v; every index is then one kernel call on v:
Shapley and Banzhaf values (:func:`fastcredit.shapley`,
:func:`fastcredit.banzhaf`), the Moebius transform (:func:`fastcredit.moebius`,
O(n 2**n)), and every other interaction index and generalized value of
shapiq (SII, BII, CHII, Co-Moebius, k-SII, STII, FSII, FBII, kADD-SHAP, SGV,
BGV, CHGV, IGV, EGV, JointSV) from :func:`fastcredit.interactions`, where
shapiq loops over pairs of coalitions in Python.

The results are shapiq's own ``InteractionValues``, built with the same
arguments shapiq builds them with (index, orders, lookup in shapiq's powerset
order, baseline value, ``estimated=False``), so shapiq's conventions for the
empty interaction apply unchanged.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import shapiq
from shapiq.game_theory.aggregation import aggregate_base_interaction
from shapiq.interaction_values import InteractionValues

from .. import tables
from ..interactions import ELC_MAX_PLAYERS, egalitarian_least_core, interactions
from .._params import BACKEND, THREADS
from .._validation import check_bool, check_choice, check_int, check_memory
from ._common import powerset_lookup, powerset_masks

__all__ = ["ExactComputer", "exact_values"]


def _empty_entry(index, computed, baseline):
    """The empty interaction's entry as shapiq's ExactComputer fills it
    before building the result: the index's own value at S = {} for SII, BII
    and FBII, 0 for the generalized values (never accumulated there),
    v(empty) otherwise. (shapiq's InteractionValues then applies its own
    conventions to it, the same for both sides.)"""
    if index in ("SII", "BII", "FBII"):
        return computed
    if index in ("SGV", "BGV", "CHGV", "IGV", "EGV"):
        return 0.0
    return baseline


class ExactComputer(shapiq.ExactComputer):
    r"""Drop-in for ``shapiq.ExactComputer``: the same constructor, calls and
    results, computed by fastcredit's kernels.

    The game is evaluated once on all 2**n coalitions, giving its coalition
    table v; every index is then one kernel call on v, e.g. the Shapley
    interaction index

    .. math:: I^{SII}(S) = \sum_{T \subseteq N \setminus S}
              \frac{(n-|T|-|S|)!\,|T|!}{(n-|S|+1)!} \,\Delta_S v(T)

    from :func:`fastcredit.interactions`.

    Calling ``computer(index, order)`` returns shapiq's ``InteractionValues``
    for every index shapiq offers (``order`` None means n_players; order 0,
    the empty interaction alone, is shapiq's own computation, with its
    warning for CHII); an unknown index raises shapiq's ValueError, an order
    outside 0..n_players a ValueError naming ``order``. ``game_values``,
    ``coalition_lookup``, ``baseline_value`` and ``moebius_transform`` are as
    in shapiq. FSII and kADD-SHAP are shapiq's fits (a weight of 1e8 on
    v(empty) and v(N), solved in closed form by
    ``fc.interactions(..., penalty=1e8)``), not the exactly constrained ones
    ``fc.interactions`` gives by default; the egalitarian least core ("ELC",
    n_players <= 16) is :func:`fastcredit.egalitarian_least_core` (optimal
    where shapiq's SLSQP stops about 1e-4 short), its subsidy in
    ``_elc_stability_subsidy`` as computed (shapiq rounds one below 1e-6 to
    0). shapiq's named methods (``shapley_interactions``,
    ``base_interaction``, ...) are shapiq's own code, run on the game values
    computed here.

    Parameters
    ----------
    game : shapiq.Game or callable
        ``game(coalitions)`` on a bool matrix (k, n_players).
    n_players : int, optional
        Required when ``game`` is not a shapiq Game; 1 <= n_players <= 30
        (the table of 2**n values must fit in memory).
    evaluate_game : bool
        Evaluate the game now rather than at the first call.
    threads : int, optional
        Threads of the kernels, at least 1 (default all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one.

    Attributes
    ----------
    table : ndarray, shape (2**n_players,)
        The game's coalition table v, indexed by bitmask (evaluated on first
        use).

    Raises
    ------
    TypeError
        If ``game`` is not callable; if ``n_players`` or ``threads`` is not an
        integer, or ``evaluate_game`` not a bool.
    ValueError
        If ``n_players`` is missing for a game that is not a shapiq Game, or
        is outside [1, 30]; if ``threads`` is below 1; if ``backend`` is not
        None, "c" or "numba"; or if the table needs more memory than is
        available.

    Examples
    --------
    >>> from fastcredit.shapiq import ExactComputer
    >>> computer = ExactComputer(lambda c: c.sum(1) ** 2.0, n_players=3)
    >>> computer("SV", 1).values                 # v(empty), then the Shapley values
    array([0., 3., 3., 3.])
    >>> float(computer("SII", 2)[(0, 1)])        # every pair interacts by 2
    2.0
    """

    def __init__(self, game, n_players: int | None = None, *, evaluate_game: bool = False,
                 threads: int | None = None, backend: str | None = None):
        if not callable(game):
            raise TypeError(f"game must be callable, got {type(game).__name__}")
        if n_players is None:
            n_players = getattr(game, "n_players", None) if isinstance(game, shapiq.Game) \
                else None
            if n_players is None:
                raise ValueError("n_players must be specified if game is not a Game object.")
        n_players = check_int(n_players, "n_players", lo=1, hi=30)
        check_memory(8 << n_players, f"the table of 2**{n_players} game values")
        evaluate_game = check_bool(evaluate_game, "evaluate_game")
        self._threads = THREADS.check(threads)
        self._backend = BACKEND.check(backend)
        self._table = None
        super().__init__(game, n_players, evaluate_game=evaluate_game)

    @staticmethod
    def get_n_interactions(n_players: int) -> np.ndarray:
        """Interactions of size at most s, for s = 0..n_players (shapiq's,
        with exact integer binomials)."""
        n_players = check_int(n_players, "n_players", lo=1, hi=30)
        return np.cumsum([math.comb(n_players, s) for s in range(n_players + 1)])

    # -- the game, evaluated once -------------------------------------------------

    @property
    def table(self) -> np.ndarray:
        """The game's coalition table v (2**n,), indexed by bitmask."""
        if self._table is None:
            self._table = tables._table_from_function(
                self._game_fun, self.n_players, coalitions="bool", threads=self._threads,
                name="game")
        return self._table

    def _evaluate_game(self):
        """shapiq's hook: baseline, game values in shapiq's powerset order;
        the coalition lookup is built when first read (2**n tuples are slow
        to make, and fastcredit's kernels never read them)."""
        v = self.table
        self._baseline_value = float(v[0])
        self._game_values = v[powerset_masks(self.n_players)]
        self._coalition_lookup = None
        self._game_is_computed = True

    @property
    def coalition_lookup(self) -> dict:
        """shapiq's lookup: coalition tuple -> position in ``game_values``."""
        if not self._game_is_computed:
            self._evaluate_game()
        if self._coalition_lookup is None:
            self._coalition_lookup = powerset_lookup(self.n_players, 0, self.n_players)
        return self._coalition_lookup

    # -- the indices --------------------------------------------------------------

    def __call__(self, index, order=None):
        """The exact ``index`` up to ``order`` (None: n_players), as shapiq's
        ``InteractionValues``; cached, and returned as a copy, as in shapiq."""
        if order is None:
            order = self.n_players
        if not isinstance(index, str) or index not in self.valid_indices:
            raise ValueError("Index or value not supported.")
        if index == "ELC":              # shapiq computes it whatever ``order`` is
            if (index, order) not in self._computed:
                self._computed[(index, order)] = self._egalitarian_least_core()
            return _copy(self._computed[(index, order)])
        order = check_int(order, "order", lo=0, hi=self.n_players)
        if order == 0 and index not in ("Moebius", "SV", "BV"):
            # the empty interaction alone, each index by its own convention
            # (CHII warns that it is undefined there): shapiq's code, one
            # pass over the game values computed here
            return super().__call__(index, 0)
        if (index, order) not in self._computed:
            self._computed[(index, order)] = self._compute(index, order)
        return _copy(self._computed[(index, order)])

    @property
    def moebius_transform(self) -> InteractionValues:
        """The Moebius transform a(S) of every coalition (all orders)."""
        return self("Moebius", self.n_players)

    def _egalitarian_least_core(self):
        """shapiq's ELC (allocation of the game normalised to v(empty) = 0,
        its subsidy kept in ``_elc_stability_subsidy``) by
        :func:`fastcredit.egalitarian_least_core`."""
        n = self.n_players
        if n > ELC_MAX_PLAYERS:
            raise ValueError(f"n_players must be <= {ELC_MAX_PLAYERS} for the egalitarian least "
                             f"core (one constraint per coalition), got {n}")
        if self.baseline_value != 0:
            warnings.warn("The egalitarian least core is only defined for normalized games."
                          "Thus the resulting vector will undercut efficiency by the value of "
                          "the empty set.To suppress warnings normalize the game to have "
                          "baseline_value == 0.", stacklevel=3)
        core = egalitarian_least_core(self.table)
        self._elc_stability_subsidy = float(core.subsidy)
        return InteractionValues(
            values=core.values, index="ELC", max_order=1, min_order=1, n_players=n,
            interaction_lookup={(i,): i for i in range(n)}, estimated=False, baseline_value=0)

    def _compute(self, index, order):
        n, baseline = self.n_players, self.baseline_value
        if index == "Moebius":          # shapiq reports every order, whatever ``order`` is
            order = n
            values = tables.moebius(self.table, threads=self._threads,
                                    backend=self._backend)[powerset_masks(n)]
        elif index in ("SV", "BV"):
            order = 1
            rule = tables.shapley if index == "SV" else tables.banzhaf
            v = self.table
            phi = rule(v, threads=self._threads, backend=self._backend)
            # shapiq's empty entries: v({}) for SV, BII({}) = the mean of v for BV
            values = np.concatenate([[baseline if index == "SV" else float(v.mean())], phi])
        else:
            # k-SII the way shapiq makes it: SII aggregated by shapiq (whose
            # result leaves out the interactions that aggregate to exactly 0)
            base = "SII" if index == "k-SII" else index
            # shapiq fits FSII and kADD-SHAP with a weight of 1e8 on v(empty)
            # and v(N) in place of the exact constraints: solve its problem
            penalty = 1e8 if index in ("FSII", "kADD-SHAP") else None
            res = interactions(self.table, index=base, order=order, penalty=penalty,
                               threads=self._threads, backend=self._backend)
            values = np.concatenate([np.ravel(part) for part in res.values])
            values[0] = _empty_entry(base, values[0], baseline)
            if index == "CHII":
                warnings.warn(f"CHII is not defined for the empty set. Setting to the "
                              f"baseline value {baseline}.", stacklevel=3)
            if index == "FBII":         # its intercept is its baseline, as in shapiq
                baseline = float(values[0])
            if index == "k-SII":
                return aggregate_base_interaction(InteractionValues(
                    values=values, index="SII", max_order=order, min_order=0, n_players=n,
                    interaction_lookup=powerset_lookup(n, 0, order), estimated=False,
                    baseline_value=baseline), order)
        return InteractionValues(
            values=values, index=index, max_order=order, min_order=0, n_players=n,
            interaction_lookup=powerset_lookup(n, 0, order), estimated=False,
            baseline_value=baseline)


def _copy(result: InteractionValues) -> InteractionValues:
    """A copy sharing nothing mutable with ``result`` (what shapiq's deepcopy
    gives): its one mutable part is the dict of interactions, whose keys are
    tuples of ints and values floats. (InteractionValues' own ``__copy__``
    is a deepcopy, which costs more than computing most indices.)"""
    out = object.__new__(type(result))
    out.__dict__.update(result.__dict__)
    out.interactions = dict(result.interactions)
    return out


def exact_values(game, index: str = "SV", *, n_players: int | None = None,
                 threads: int | None = None, backend: str | None = None):
    r"""Exact Shapley or Banzhaf values of a shapiq game, as InteractionValues.

    The order-1 shortcut of :class:`ExactComputer`: the game is evaluated once
    on all 2**m coalitions, then :func:`fastcredit.shapley` /
    :func:`fastcredit.banzhaf` run on the table in O(2**m).

    Parameters
    ----------
    game : shapiq.Game or callable
        Called as ``game(coalitions)`` with a bool matrix (n, m).
    index : {"SV", "BV"}
        Shapley or Banzhaf values.
    n_players : int, optional
        Needed when ``game`` has no ``n_players`` attribute; 1 <= m <= 30.
    threads : int, optional
        Threads of the kernels, at least 1 (default all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one.

    Returns
    -------
    shapiq.InteractionValues
        Orders 0..1, entry ``()`` = v(empty) = baseline for SV, the mean of
        v for BV (as shapiq's ExactComputer).

    Raises
    ------
    ValueError
        If ``index`` is not "SV" or "BV"; if ``n_players`` is missing for a
        game without an ``n_players`` attribute, or is outside [1, 30]; if
        ``threads`` is below 1 or ``backend`` not None, "c" or "numba"; or if
        the game returns the wrong number of values.
    TypeError
        If ``game`` is not callable, or returns values that are not real
        numbers; or if ``n_players`` or ``threads`` is not an integer.
    RuntimeError
        If the game raises (wrapped, naming the coalitions it was called
        on).

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit.shapiq import exact_values
    >>> iv = exact_values(lambda c: c.sum(1) ** 2.0, "SV", n_players=3)
    >>> iv.values
    array([0., 3., 3., 3.])
    """
    index = check_choice(index, "index", ("SV", "BV"))
    if n_players is None:
        n_players = getattr(game, "n_players", None)
        if n_players is None:
            raise ValueError("n_players is required when game is not a shapiq Game")
    computer = ExactComputer(game, n_players, threads=threads, backend=backend)
    return computer(index, 1)
