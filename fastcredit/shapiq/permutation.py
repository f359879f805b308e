r"""shapiq's permutation samplers (SV, SII / k-SII, STII), vectorised.

Each estimator is shapiq's, with shapiq's sampling design: the same
permutations (drawn from the same generator, so a ``random_state`` gives
shapiq's permutations) and, per permutation, the same derivatives. The work
per permutation changes: a batch of permutations is drawn at once, every
coalition the batch needs is built as one bool matrix, the game is called
once per batch, and the derivatives are accumulated with ``np.bincount``.

Budget: counted in game evaluations and spent. v(empty) and v(N) are
evaluated once per run (STII: with its exact lower orders); then whole
permutations, as many as the rest affords, so what is left over is less
than one permutation. A permutation costs its *distinct* coalitions,
``permutation_cost``: for SV its n - 1 proper non-empty prefixes, which is
shapiq's ``iteration_cost``; for SII and STII far fewer than shapiq's
``iteration_cost`` (which counts each derivative's 2**s terms separately,
though many are the same coalition: T u {first player of S} is the next
prefix, ...): 2n - 2 instead of 6n - 4 for SII of order 2, and about
C(n, 2) + n instead of 4 C(n, 2) for STII of order 2. The saved
evaluations buy more permutations, so at equal budget the estimates are
shapiq's with more samples. ``iteration_cost`` keeps shapiq's value.

``batch_size`` is shapiq's: permutations per game call (the last call may
have fewer). ``None`` (the default) lets the adapter choose, as many
permutations as fit in about 2**14 coalitions (shapiq's None means 1).

``random_state``: an int makes runs reproducible; None draws fresh
randomness (numpy's ``default_rng``, as shapiq). Repeated ``approximate``
calls continue the same stream.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np
from shapiq.approximator.permutation import PermutationSamplingSII as _ShapiqSII
from shapiq.approximator.permutation import PermutationSamplingSTII as _ShapiqSTII
from shapiq.approximator.permutation import PermutationSamplingSV as _ShapiqSV
from shapiq.interaction_values import InteractionValues

from .._params import SEED
from .._validation import check_bool, check_choice, check_int
from ..games import FUNCTION_PLAYERS
from ._common import (GameCalls, binomials, check_batch_size, check_budget, check_fixed,
                      combination_rank, combinations, count_interactions, per_call)

__all__ = ["PermutationSamplingSV", "PermutationSamplingSII", "PermutationSamplingSTII"]


def _random_state(random_state):
    return None if random_state is None else SEED.check(random_state, "random_state")


def _order(max_order, n):
    return check_int(max_order, "max_order", lo=1, hi=n)


def _permutations(rng, count, n):
    """``count`` uniformly random orders of 0..n-1, (count, n) int64."""
    return rng.permuted(np.tile(np.arange(n, dtype=np.int64), (count, 1)), axis=1)


class _Antithetic:
    """The orders of one antithetic run, batch by batch: each order drawn
    followed by its reverse. A batch that ends between the two leaves the
    reverse to open the next batch, so the orders walked do not depend on
    the batch size: K orders are the first ceil(K / 2) draws, each followed
    by its reverse, the last draw alone when K is odd."""

    def __init__(self, rng, n):
        self.rng, self.n, self.pending = rng, n, None

    def __call__(self, count):
        """The next ``count`` orders, (count, n) int64."""
        head = [] if self.pending is None else [self.pending[None, :]]
        need = count - len(head)
        drawn = _permutations(self.rng, (need + 1) // 2, self.n)
        pairs = np.stack([drawn, drawn[:, ::-1]], axis=1).reshape(-1, self.n)
        self.pending = pairs[need] if need < len(pairs) else None
        return np.concatenate(head + [pairs[:need]])


def _ranks(perms):
    """rank[b, i]: the position of player i in order b."""
    rank = np.empty_like(perms)
    np.put_along_axis(rank, perms, np.arange(perms.shape[1], dtype=perms.dtype)[None, :],
                      axis=1)
    return rank


def _signs(s):
    """(-1)**(s - |L|) for the subsets L of s positions, L as bit patterns."""
    return np.where((s - np.bitwise_count(np.arange(1 << s))) % 2, -1.0, 1.0)


def _result(approx, values, baseline, used):
    return InteractionValues(
        values=values, index=approx.approximation_index, max_order=approx.max_order,
        min_order=approx.min_order, n_players=approx.n,
        interaction_lookup=approx.interaction_lookup, estimated=True, estimation_budget=used,
        baseline_value=float(baseline), target_index=approx.index)


class _Design:
    r"""What one permutation evaluates, in *position space*.

    Every estimator here takes, for each of a fixed list of *slots*, a
    discrete derivative :math:`\Delta_S(T) = \sum_{L \subseteq S}
    (-1)^{|S|-|L|} v(T \cup L)` where S is the set of players at some
    positions of the permutation and T the players before some position.
    Written over positions, the coalitions :math:`T \cup L` are the same for
    every permutation, and many coincide (:math:`T \cup \{\pi_p\}` is the
    next prefix): each distinct one is evaluated once per permutation. This
    is fixed bookkeeping, not a memo of values: every permutation costs
    exactly ``cost`` evaluations, fewer than shapiq's ``iteration_cost``.

    ``slots[s]``: the position tuples (J_s, s) of the slots of size s;
    ``terms[s]``: (J_s, 2**s) indices into ``patterns`` of their coalitions,
    ``signs[s]`` (2**s,) their signs; ``patterns`` (U, n): the distinct
    coalitions as position sets, the empty and the full one first (they are
    evaluated once per run, not per permutation).
    """

    def __init__(self, n, slots):
        keys = {(0, ()): 0, (n, ()): 1}
        self.slots, self.terms, self.signs = {}, {}, {}
        for size, positions in slots.items():
            terms = np.empty((len(positions), 1 << size), dtype=np.int64)
            for j, (before, window) in enumerate(positions):
                for pattern in range(1 << size):
                    extra = [q for b, q in enumerate(window) if pattern >> b & 1]
                    key = _normalised(before, extra)
                    terms[j, pattern] = keys.setdefault(key, len(keys))
            self.slots[size] = np.array([w for _, w in positions], dtype=np.int64).reshape(
                len(positions), size)
            self.terms[size] = terms
            self.signs[size] = _signs(size)
        self.patterns = np.zeros((len(keys), n), dtype=bool)
        for (prefix, extra), u in keys.items():
            self.patterns[u, :prefix] = True
            self.patterns[u, list(extra)] = True
        self.cost = len(keys) - 2

    def derivatives(self, perms, calls, v0, vn):
        """{size: (B, J_s) derivatives} of a batch of permutations (B, n),
        from one game call on their distinct coalitions."""
        b, n = perms.shape
        rank = _ranks(perms)
        g = np.empty((b, len(self.patterns)))
        g[:, 0], g[:, 1] = v0, vn
        if self.cost:
            rows = self.patterns[2:][:, rank].transpose(1, 0, 2)      # (B, U-2, n)
            g[:, 2:] = calls(rows.reshape(-1, n)).reshape(b, -1)
        return {s: g[:, t] @ self.signs[s] for s, t in self.terms.items()}


def _normalised(before, extra):
    """(prefix length, sorted positions beyond it) of the positions
    {0..before-1} u extra, with the positions that extend the prefix
    absorbed into it."""
    extra = sorted(set(q for q in extra if q >= before))
    while extra and extra[0] == before:
        before += 1
        extra.pop(0)
    return before, tuple(extra)


class PermutationSamplingSV(_ShapiqSV):
    r"""Drop-in for ``shapiq.PermutationSamplingSV`` (ApproShapley, Castro et
    al. 2009), vectorised.

    .. math:: \hat\phi_i = \frac{1}{K} \sum_{k=1}^{K} v(P_i^{\pi_k} \cup i) - v(P_i^{\pi_k})

    over K uniformly random orders :math:`\pi_k`, :math:`P_i^\pi` the players
    before i. Each order costs n - 1 evaluations (its proper non-empty
    prefixes); v(empty) and v(N) are evaluated once, so ``budget`` buys
    K = (budget - 2) // (n - 1) orders, as in shapiq.

    Parameters
    ----------
    n : int
        Number of players, 1 <= n <= 4096.
    random_state : int, optional
        Seed; None draws fresh randomness.
    antithetic : bool
        Walk each drawn order and its reverse (unbiased, same budget
        accounting; lowers the variance for games close to additive and can
        raise it for others). K orders are the first ceil(K / 2) draws, each
        followed by its reverse, and the last draw alone when K is odd
        (counted like the others); pairs are never split by ``batch_size``.
        Each ``approximate`` call starts its own pairs. Off by default: then
        the permutations are shapiq's own draws, and a ``random_state``
        gives shapiq's estimate.
    **kwargs
        shapiq's compatibility keywords (``max_order=1``, ``index="SV"``,
        ``top_order=False``); anything else is refused.

    Attributes
    ----------
    n, max_order, min_order, index, top_order, iteration_cost
        As shapiq's (``iteration_cost`` = n - 1).

    Raises
    ------
    TypeError
        If ``n`` or ``random_state`` is not an integer, ``antithetic`` is not a
        bool, or a keyword is not one of shapiq's compatibility keywords.
    ValueError
        If ``n`` is outside [1, 4096], ``random_state`` outside [0, 2**64), or
        a compatibility keyword has another value than the fixed one.

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit.shapiq import PermutationSamplingSV
    >>> additive = lambda coalitions: coalitions @ np.array([1., 2., 3.])
    >>> iv = PermutationSamplingSV(3, random_state=0).approximate(20, additive)
    >>> iv.values, iv.estimation_budget          # v(empty), then phi; 2 + 9 x 2 evaluations
    (array([0., 1., 2., 3.]), 20)
    """

    def __init__(self, n: int, random_state: int | None = None, *, antithetic: bool = False,
                 **kwargs):
        n = FUNCTION_PLAYERS.check(n, "n")
        random_state = _random_state(random_state)
        self.antithetic = check_bool(antithetic, "antithetic")
        check_fixed(kwargs, {"max_order": 1, "index": "SV", "top_order": False},
                    type(self).__name__)
        super().__init__(n, random_state=random_state)

    def approximate(self, budget: int, game, batch_size: int | None = None):
        """Estimate the Shapley values with at most ``budget`` evaluations.

        Parameters
        ----------
        budget : int
            Game evaluations to spend, >= 2 (v(empty) and v(N)).
        game : callable
            ``game(coalitions)`` on a bool matrix (k, n), e.g. a shapiq Game.
        batch_size : int, optional
            Orders per game call (None: automatic).

        Returns
        -------
        shapiq.InteractionValues
            Index "SV", orders 0..1, entry ``()`` = v(empty) = baseline,
            ``estimated=True``, ``estimation_budget`` = evaluations spent.

        Raises
        ------
        TypeError
            If ``budget`` or ``batch_size`` is not an integer; if ``game`` is
            not callable or returns values that are not real numbers.
        ValueError
            If ``budget`` is below 2 or above 2**62; if ``batch_size`` is
            below 1; or if ``game`` does not return one value per coalition.
        RuntimeError
            If ``game`` raises (wrapped, naming the batch it was called on).
        """
        budget = check_budget(budget, 2)
        calls = GameCalls(game, self.n)
        batch_size = check_batch_size(batch_size)
        n = self.n
        v0, vn = calls(np.stack([np.zeros(n, bool), np.ones(n, bool)]))
        values = np.zeros(n + 1)
        values[0] = v0
        if n == 1:
            values[1] = vn - v0
            return _result(self, values, v0, calls.n_evals)
        walks = (budget - 2) // self.iteration_cost
        step = per_call(batch_size, self.iteration_cost)
        sums = np.zeros(n)
        sizes = np.arange(1, n)[None, :, None]
        draw = (_Antithetic(self._rng, n) if self.antithetic
                else functools.partial(_permutations, self._rng, n=n))
        done = 0
        while done < walks:
            count = min(step, walks - done)
            perms = draw(count)
            rows = _ranks(perms)[:, None, :] < sizes           # proper prefixes (count, n-1, n)
            prefix = np.empty((count, n + 1))
            prefix[:, 0], prefix[:, n] = v0, vn
            prefix[:, 1:n] = calls(rows.reshape(-1, n)).reshape(count, n - 1)
            sums += np.bincount(perms.ravel(), weights=np.diff(prefix, axis=1).ravel(),
                                minlength=n)
            done += count
        if done:
            values[1:] = sums / done
        return _result(self, values, v0, calls.n_evals)

    @property
    def permutation_cost(self) -> int:
        """Evaluations one permutation costs: its n - 1 proper non-empty
        prefixes (shapiq's ``iteration_cost``)."""
        return self.iteration_cost


class _DistinctCoalitions:
    """What the SII and STII samplers share: a permutation's discrete
    derivatives at the position sets ``_slots()`` names, evaluated on its
    distinct coalitions only (:class:`_Design`, built once per sampler)."""

    @functools.cached_property
    def _design(self):
        return _Design(self.n, self._slots())

    @property
    def permutation_cost(self) -> int:
        """Evaluations one permutation costs: its distinct coalitions
        (``iteration_cost`` counts every derivative's 2**s separately)."""
        return self._design.cost


class PermutationSamplingSII(_DistinctCoalitions, _ShapiqSII):
    r"""Drop-in for ``shapiq.PermutationSamplingSII`` (SII and k-SII),
    vectorised.

    Each random order :math:`\pi` yields, for every order s and every window
    of s consecutive players :math:`S = \pi[k:k+s]`, one discrete derivative
    :math:`\Delta_S(T) = \sum_{L \subseteq S} (-1)^{s-|L|} v(T \cup L)` at its
    prefix :math:`T = \pi[:k]`; conditioned on S being a window, T is
    distributed with exactly the SII weights, so the mean derivative per
    interaction is unbiased. A permutation costs its distinct coalitions
    (``permutation_cost``, 2n - 2 for max_order 2, see the module docstring;
    shapiq's ``iteration_cost`` = sum over the estimated orders of
    (n - s + 1) 2**s); v(empty) and v(N) are evaluated once. k-SII is
    aggregated from SII by shapiq's ``InteractionValues``.

    Parameters
    ----------
    n : int
        Number of players, 1 <= n <= 4096.
    max_order : int
        1 <= max_order <= n.
    index : {"k-SII", "SII"}
        The index estimated.
    top_order : bool
        Estimate only interactions of size ``max_order``.
    random_state : int, optional
        Seed; None draws fresh randomness.

    Raises
    ------
    TypeError
        If ``n``, ``max_order`` or ``random_state`` is not an integer, or
        ``top_order`` is not a bool.
    ValueError
        If ``n`` is outside [1, 4096], ``max_order`` outside [1, n] or
        ``random_state`` outside [0, 2**64); if ``index`` is not "SII" or
        "k-SII"; or if the interactions to estimate are more than 2**24.

    Examples
    --------
    A unanimity game on players 0 and 1: each sampled derivative of the pair
    is exactly 1, of the other pairs 0.

    >>> from fastcredit.shapiq import PermutationSamplingSII
    >>> both = lambda coalitions: (coalitions[:, 0] & coalitions[:, 1]) * 1.0
    >>> sii = PermutationSamplingSII(3, max_order=2, index="SII", top_order=True,
    ...                              random_state=0)
    >>> sii.approximate(50, both).values         # pairs (0, 1), (0, 2), (1, 2)
    array([1., 0., 0.])
    """

    def __init__(self, n: int, max_order: int = 2, index: str = "k-SII", *,
                 top_order: bool = False, random_state: int | None = None):
        n = FUNCTION_PLAYERS.check(n, "n")
        max_order = _order(max_order, n)
        index = check_choice(index, "index", ("SII", "k-SII"))
        top_order = check_bool(top_order, "top_order")
        random_state = _random_state(random_state)
        count_interactions(n, max_order if top_order else 0, max_order, "max_order")
        super().__init__(n, max_order, index, top_order=top_order, random_state=random_state)
        lo = self.max_order if self.top_order else 1
        self._sizes = range(lo, self.max_order + 1)
        self._binom = binomials(n, max_order)
        lookup = self.interaction_lookup
        self._offset = {s: lookup[tuple(range(s))] for s in self._sizes}

    def approximate(self, budget: int, game, batch_size: int | None = None):
        """Estimate SII (or k-SII) with at most ``budget`` evaluations.

        Parameters
        ----------
        budget : int
            Game evaluations to spend, >= 2 (v(empty) and v(N)); each order
            costs ``permutation_cost``.
        game : callable
            ``game(coalitions)`` on a bool matrix (k, n).
        batch_size : int, optional
            Orders per game call (None: automatic).

        Returns
        -------
        shapiq.InteractionValues
            shapiq's layout; interactions never sampled are 0.

        Raises
        ------
        TypeError
            If ``budget`` or ``batch_size`` is not an integer; if ``game`` is
            not callable or returns values that are not real numbers.
        ValueError
            If ``budget`` is below 2 or above 2**62; if ``batch_size`` is
            below 1; or if ``game`` does not return one value per coalition.
        RuntimeError
            If ``game`` raises (wrapped, naming the batch it was called on).
        """
        budget = check_budget(budget, 2)
        calls = GameCalls(game, self.n)
        batch_size = check_batch_size(batch_size)
        n, design = self.n, self._design
        v0, vn = calls(np.stack([np.zeros(n, bool), np.ones(n, bool)]))
        walks = (budget - 2) // design.cost if design.cost else 1
        step = per_call(batch_size, design.cost)
        size = len(self.interaction_lookup)
        sums, counts = np.zeros(size), np.zeros(size, dtype=np.int64)
        done = 0
        while done < walks:
            count = min(step, walks - done)
            perms = _permutations(self._rng, count, n)
            for s, delta in design.derivatives(perms, calls, v0, vn).items():
                players = np.sort(perms[:, design.slots[s]], axis=-1)      # (B, J, s)
                pos = self._offset[s] + combination_rank(players, n, self._binom)
                sums += np.bincount(pos.ravel(), weights=delta.ravel(), minlength=size)
                counts += np.bincount(pos.ravel(), minlength=size)
            done += count
        values = np.divide(sums, counts, out=np.zeros(size), where=counts > 0)
        return _result(self, values, v0, calls.n_evals)

    def _slots(self) -> dict:
        """Every window of s consecutive positions, for each order s."""
        return {s: [(k, tuple(range(k, k + s))) for k in range(self.n - s + 1)]
                for s in self._sizes}


class PermutationSamplingSTII(_DistinctCoalitions, _ShapiqSTII):
    r"""Drop-in for ``shapiq.PermutationSamplingSTII`` (Shapley-Taylor,
    Sundararajan et al. 2020), vectorised.

    Interactions below ``max_order`` = k are exact: STII equals the Moebius
    coefficient a(S) there, computed from v on every coalition of size < k
    (sum over s < k of C(n, s) evaluations, v(empty) among them, which is
    evaluated once here where shapiq evaluates it twice). Each random order
    :math:`\pi` then gives every S of size k one derivative
    :math:`\Delta_S(T)` at the players T before S's first member in
    :math:`\pi`, whose distribution is the STII weight. A permutation costs
    its distinct coalitions (``permutation_cost``; shapiq's
    ``iteration_cost`` = C(n, k) 2**k counts every derivative's terms), v(N)
    one evaluation once.

    With a budget below the exact part, or with nothing left for one order,
    a UserWarning is raised and the part computed so far is returned, as
    shapiq does. Unlike shapiq (which returns zeros), ``max_order=1``
    estimates the Shapley values (STII of order 1).

    Parameters
    ----------
    n : int
        Number of players, 1 <= n <= 4096.
    max_order : int
        1 <= max_order <= n.
    random_state : int, optional
        Seed; None draws fresh randomness.
    **kwargs
        shapiq's compatibility keywords (``index="STII"``,
        ``top_order=False``); anything else is refused.

    Raises
    ------
    TypeError
        If ``n``, ``max_order`` or ``random_state`` is not an integer, or a
        keyword is not one of shapiq's compatibility keywords.
    ValueError
        If ``n`` is outside [1, 4096], ``max_order`` outside [1, n] or
        ``random_state`` outside [0, 2**64); if a compatibility keyword has
        another value than the fixed one; or if the interactions are more
        than 2**24, or one permutation's derivative terms,
        C(n, max_order) 2**max_order, more than 2**22.

    Examples
    --------
    >>> from fastcredit.shapiq import PermutationSamplingSTII
    >>> both = lambda coalitions: (coalitions[:, 0] & coalitions[:, 1]) * 1.0
    >>> stii = PermutationSamplingSTII(3, max_order=2, random_state=0).approximate(50, both)
    >>> float(stii[(0,)]), float(stii[(0, 1)]), float(stii[(0, 2)])
    (0.0, 1.0, 0.0)
    """

    def __init__(self, n: int, max_order: int, random_state: int | None = None, **kwargs):
        n = FUNCTION_PLAYERS.check(n, "n")
        max_order = _order(max_order, n)
        random_state = _random_state(random_state)
        check_fixed(kwargs, {"index": "STII", "top_order": False}, type(self).__name__)
        count_interactions(n, 0, max_order, "max_order")
        if math.comb(n, max_order) << max_order > 1 << 22:
            raise ValueError(f"max_order must keep the derivative terms of one permutation, "
                             f"C(n, max_order) 2**max_order, under 2**22; got n = {n}, "
                             f"max_order = {max_order}")
        super().__init__(n, max_order, random_state=random_state)
        self._binom = binomials(n, max_order)

    def approximate(self, budget: int, game, batch_size: int | None = None):
        """Estimate STII with at most ``budget`` evaluations.

        Parameters
        ----------
        budget : int
            Game evaluations to spend, >= 1 (a budget below the exact lower
            orders warns and returns what it covers).
        game : callable
            ``game(coalitions)`` on a bool matrix (k, n).
        batch_size : int, optional
            Orders per game call (None: automatic).

        Returns
        -------
        shapiq.InteractionValues
            Orders 0..max_order, ``()`` = v(empty) = baseline.

        Raises
        ------
        TypeError
            If ``budget`` or ``batch_size`` is not an integer; if ``game`` is
            not callable or returns values that are not real numbers.
        ValueError
            If ``budget`` is below 1 or above 2**62; if ``batch_size`` is
            below 1; or if ``game`` does not return one value per coalition.
        RuntimeError
            If ``game`` raises (wrapped, naming the batch it was called on).
        """
        budget = check_budget(budget, 1)
        calls = GameCalls(game, self.n)
        batch_size = check_batch_size(batch_size)
        n, k = self.n, self.max_order
        lookup = self.interaction_lookup
        values = np.zeros(len(lookup))
        lower_cost = sum(math.comb(n, s) for s in range(k))
        if budget < lower_cost:
            warnings.warn(f"The budget {budget} is too small to compute the lower order "
                          f"interactions of the STII index, which requires {lower_cost} "
                          f"evaluations. Consider increasing the budget.", UserWarning,
                          stacklevel=2)
            return _result(self, values, 0.0, 0)
        lower = [combinations(n, s) for s in range(k)]
        rows = np.zeros((lower_cost, n), bool)
        at = 0
        for c in lower:
            rows[np.repeat(np.arange(at, at + len(c)), c.shape[1]), c.ravel()] = True
            at += len(c)
        v_lower = calls(rows)
        values[:lower_cost] = self._moebius(v_lower, lower)
        v0 = v_lower[0]
        design = self._design
        walks = (budget - lower_cost - 1) // design.cost if design.cost else 1
        if walks <= 0 or budget <= lower_cost:
            warnings.warn(f"The budget {budget} is too small to perform a single iteration, "
                          f"which requires {lower_cost + 1 + design.cost} evaluations. "
                          f"Consider increasing the budget.", UserWarning, stacklevel=2)
            return _result(self, values, v0, calls.n_evals)
        vn = calls(np.ones((1, n), bool))[0]
        step = per_call(batch_size, design.cost)
        sums = np.zeros(math.comb(n, k))
        done = 0
        while done < walks:
            count = min(step, walks - done)
            perms = _permutations(self._rng, count, n)
            delta = design.derivatives(perms, calls, v0, vn)[k]               # (B, C)
            players = np.sort(perms[:, design.slots[k]], axis=-1)
            sums += np.bincount(combination_rank(players, n, self._binom).ravel(),
                                weights=delta.ravel(), minlength=len(sums))
            done += count
        values[lower_cost:] = sums / done
        values[0] = v0
        return _result(self, values, v0, calls.n_evals)

    def _slots(self) -> dict:
        """Every set of max_order positions, at its first position."""
        return {self.max_order: [(int(c[0]), tuple(int(q) for q in c))
                                 for c in combinations(self.n, self.max_order)]}

    def _moebius(self, v_lower, lower):
        r"""a(S) = sum over L subset of S of (-1)^(|S|-|L|) v(L), for every
        |S| < max_order, from v on those coalitions (laid out by size)."""
        n = self.n
        offsets = np.cumsum([0] + [len(c) for c in lower])
        out = np.zeros(offsets[-1])
        out[0] = v_lower[0]
        for s in range(1, len(lower)):
            subsets = lower[s]
            acc = np.zeros(len(subsets))
            for p in range(1 << s):
                picked = [j for j in range(s) if p >> j & 1]
                part = subsets[:, picked]
                pos = offsets[len(picked)] + combination_rank(part, n, self._binom)
                acc += (-1.0) ** (s - len(picked)) * v_lower[pos]
            out[offsets[s]:offsets[s + 1]] = acc
        return out
