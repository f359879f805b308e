"""What the shapiq adapters share: the table game, checked and counted game
calls, and the subset orders shapiq lays its results out in."""
from __future__ import annotations

import functools
import math

import numpy as np
import shapiq

from .._subsets import binomials, combination_rank, combinations  # noqa: F401  (shared)
from .._validation import check_int, coalition_table, read_only
from ..games import call_value_function, table_lookup

#: Coalitions per game call when ``batch_size`` is left to the adapter.
AUTO_BATCH_COALITIONS = 1 << 14
#: Most interactions (entries of one result) an approximator may lay out.
MAX_INTERACTIONS = 1 << 24


class TableGame(shapiq.Game):
    r"""A shapiq Game whose values are a coalition table.

    The table v (2**m,) is indexed by bitmask as everywhere in fastcredit (bit
    i set iff player i plays): a bool coalition row B has the value
    :math:`v\big[\sum_{i : B_i} 2^i\big]`. The game is not normalised
    (shapiq's ``normalize=False``).

    Parameters
    ----------
    v : array_like, shape (2**m,)
        One coalition table (float64 or float32), 1 <= m <= 30.
    **kwargs
        Further keyword arguments of ``shapiq.Game`` (not ``n_players``,
        ``normalize`` or ``verbose``, which the table sets).

    Attributes
    ----------
    table : ndarray, shape (2**m,)
        The table: a view of the caller's C-contiguous float64/float32 array,
        else a converted copy.
    n_players : int
        m.

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 30, or ``v`` is a
        batch of tables.
    TypeError
        If ``v`` does not hold real numbers.

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit.shapiq import TableGame
    >>> game = TableGame(np.array([0., 1., 2., 4.]))
    >>> game.n_players
    2
    >>> game(np.array([[True, True], [False, True]]))
    array([4., 2.])
    """

    def __init__(self, v, **kwargs):
        flat, m, lead = coalition_table(v)
        if lead:
            raise ValueError(f"v must be one table (2**m,), got shape {np.shape(v)}")
        self.table = flat[0]
        self._bits = np.left_shift(np.int64(1), np.arange(m, dtype=np.int64))
        super().__init__(n_players=m, normalize=False, verbose=False, **kwargs)

    def value_function(self, coalitions):
        rows = coalitions
        if not (isinstance(rows, np.ndarray) and rows.dtype == bool and rows.ndim == 2
                and rows.shape[1] == len(self._bits)):
            return table_lookup(self.table, coalitions)
        # the common case, bool rows (n, m): one matrix product gives the masks
        return self.table[rows.view(np.uint8) @ self._bits]


class GameCalls:
    """A game called on bool coalition rows (k, n): each answer checked (one
    real value per row) and the evaluations counted."""

    def __init__(self, game, n: int):
        if not callable(game):
            raise TypeError(f"game must be callable, got {type(game).__name__}")
        self.game = game
        self.n = n
        self.n_evals = 0

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        vals = call_value_function(self.game, rows, name="game", finite=False,
                                   where=f"on a batch of {len(rows)} coalitions (after "
                                         f"{self.n_evals} evaluations)")
        self.n_evals += len(rows)
        return vals


def check_budget(budget, lo: int) -> int:
    return check_int(budget, "budget", lo=lo, hi=2**62)


def check_batch_size(batch_size):
    """``batch_size`` as given (an int >= 1), or None for automatic."""
    return None if batch_size is None else check_int(batch_size, "batch_size", lo=1,
                                                     hi=2**62)


def per_call(batch_size, unit_cost: int) -> int:
    """Sampling units (permutations) per game call: ``batch_size`` when the
    caller set it, else as many as fit in AUTO_BATCH_COALITIONS coalitions."""
    if batch_size is not None:
        return batch_size
    return max(1, AUTO_BATCH_COALITIONS // max(unit_cost, 1))


def check_fixed(kwargs: dict, fixed: dict, cls: str) -> None:
    """shapiq's constructors take ``**kwargs`` for compatibility (e.g.
    ``KernelSHAP(n, max_order=1)``); accept those naming this class's fixed
    settings with their fixed value, refuse anything else."""
    for key, value in kwargs.items():
        if key not in fixed:
            raise TypeError(f"{cls}() got an unexpected keyword argument {key!r}")
        if value != fixed[key]:
            raise ValueError(f"{key} must be {fixed[key]!r} for {cls}, got {value!r}")


def count_interactions(n: int, lo: int, hi: int, what: str) -> int:
    total = sum(math.comb(n, s) for s in range(lo, hi + 1))
    if total > MAX_INTERACTIONS:
        raise ValueError(f"{what} must keep the interactions of {n} players of orders "
                         f"{lo}..{hi} under {MAX_INTERACTIONS}, got {total}")
    return total


@functools.lru_cache(maxsize=16)
def powerset_masks(n: int, lo: int = 0, hi: int | None = None) -> np.ndarray:
    """Bitmasks of the subsets of 0..n-1 of sizes lo..hi in shapiq's powerset
    order (by size, then ``itertools.combinations`` order), int64, read-only
    (cached).

    Within a size, subset A comes before B iff the lowest player in which
    they differ is in A, i.e. iff A's bit-reversed mask is the larger."""
    hi = n if hi is None else hi
    masks = np.arange(1 << n, dtype=np.int64)
    size = np.bitwise_count(masks)
    keep = (size >= lo) & (size <= hi)
    masks, size = masks[keep], size[keep]
    reversed_masks = np.zeros_like(masks)
    for i in range(n):
        reversed_masks |= ((masks >> i) & 1) << (n - 1 - i)
    return read_only(masks[np.lexsort((-reversed_masks, size))])


def powerset_lookup(n: int, lo: int, hi: int) -> dict:
    """shapiq's interaction lookup: subset tuple -> position, sizes lo..hi."""
    from itertools import combinations as combos
    lookup, pos = {}, 0
    for s in range(lo, hi + 1):
        for c in combos(range(n), s):
            lookup[c] = pos
            pos += 1
    return lookup


def rows_of_masks(masks: np.ndarray, n: int) -> np.ndarray:
    """Bool coalition rows (k, n) of int64 bitmasks (k,)."""
    return ((masks[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(bool)
