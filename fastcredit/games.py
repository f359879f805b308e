r"""What a game is, and how each kind of game is evaluated.

A cooperative game on players 0..m-1 gives every coalition S a value v(S); a
coalition is a bitmask (bit i set iff player i is in S). fastcredit takes a
game in one of these forms:

``"table"``
    a coalition table ``(2**m,)`` indexed by mask, or a batch of them
    ``(..., 2**m)`` (float64/float32, 1 <= m <= 30);
``"callable"``
    a vectorised Python function on a batch of coalitions: a uint64 mask
    array ``(n,)``, or a bool matrix ``(n, m)`` (``coalitions="bool"``, the
    layout shapiq games take; always when m > 64), returning n real values.
    Nothing says a Python function returns the same value twice (a replay of
    an agent is one), so it counts as deterministic only when its caller
    declares it so with :func:`deterministic`;
``"jitted"``
    an ``@njit`` function ``fn(mask: uint64) -> float``, evaluated inside
    compiled loops with no Python call;
``"stochastic"``
    an ``@njit`` function ``fn(mask: uint64, key: uint64) -> float`` returning
    one random draw whose mean is v(mask); every evaluation gets a fresh key
    (random bits to seed ``fastcredit._numba.rng`` streams with), and its
    values are never cached, since reusing one draw of v(S) would fake
    certainty.

:func:`as_game` recognises the form once, checks it, and resolves the backend
that will evaluate it, so the functions that take games (sampling, exact
tables from a value function, the shapiq adapters) do not each decide again.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _constants
from ._backend import resolve
from ._params import BACKEND, COALITIONS, TABLE_PLAYERS, Integer
from ._validation import as_array, check_bool, check_int, coalition_table, int_array

__all__ = ["Game", "Deterministic", "as_game", "deterministic", "is_jitted", "masks_to_bool",
           "bool_to_masks", "walk_cost", "table_lookup"]

TABLE, CALLABLE, JITTED, STOCHASTIC = "table", "callable", "jitted", "stochastic"
#: Most players of a game whose coalitions fit in uint64 masks.
MAX_MASK_PLAYERS = 64
#: Players of a game given as a function (masks up to 64, bool rows beyond).
FUNCTION_PLAYERS = Integer("m", 1, _constants.SAMPLING_MAX_PLAYERS,
                           "number of players of a game given as a function")


@dataclass(frozen=True)
class Game:
    """A user's game, recognised and checked (made by :func:`as_game`).

    Parameters
    ----------
    kind : {"table", "callable", "jitted", "stochastic"}
        The form of the game (see :mod:`fastcredit.games`).
    m : int
        Number of players.
    value : ndarray or callable
        The tables as a C-contiguous ``(B, 2**m)`` array, or the function.
    lead : tuple
        Leading (batch) shape of tables; ``()`` otherwise.
    coalitions : {"mask", "bool"}
        How a Python callable receives coalitions.
    backend : {"c", "numba"} or None
        The backend that evaluates the game's kernel ("numba" for @njit
        games, whose compiled loops only Numba can run); None when no kernel
        was named for the game's kind.
    deterministic : bool, default True
        Whether v(S) is known to be the same at every evaluation, so that
        a sampler may cache it: tables and @njit ``fn(mask)`` games by their
        form, Python callables only when declared with
        :func:`deterministic`, stochastic games never.

    Attributes
    ----------
    stochastic : bool
        Whether the game is an @njit ``fn(mask, key)`` returning random draws.

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit import games
    >>> g = games.as_game(np.zeros((3, 4)))      # a batch of 3 tables, m = 2
    >>> g.kind, g.m, g.lead, g.deterministic, g.stochastic
    ('table', 2, (3,), True, False)
    """

    kind: str
    m: int
    value: object
    lead: tuple
    coalitions: str
    backend: str
    deterministic: bool = True

    @property
    def stochastic(self) -> bool:
        return self.kind == STOCHASTIC


@dataclass(frozen=True)
class Deterministic:
    """A Python value function its caller declared deterministic.

    Made by :func:`deterministic`; calling it calls ``fn``, and
    :func:`as_game` recognises it as a game whose values may be cached.

    Parameters
    ----------
    fn : callable
        The vectorised Python game (uint64 masks or bool rows -> n values).

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit import games
    >>> size = games.deterministic(lambda s: np.bitwise_count(s) * 1.0)
    >>> size(np.array([3, 7], dtype=np.uint64))
    array([2., 3.])
    >>> games.as_game(size, 3).deterministic
    True
    """

    fn: object

    def __call__(self, coalitions):
        return self.fn(coalitions)


def deterministic(fn) -> Deterministic:
    """Declare a vectorised Python game deterministic, so samplers may cache it.

    A Python callable game is evaluated afresh every time by default, since
    caching v(S) of a game that is random (a replay of an agent, a noisy
    simulator) would reuse one draw across permutations and report false
    certainty. A function that returns the same v(S) at every call is
    declared once, where it is defined::

        game = fc.games.deterministic(lambda masks: table[masks.astype(np.int64)])

    and :func:`fastcredit.permutation_shapley` then caches it as it caches a
    table (``cache=None``); ``cache=False`` still turns caching off for one
    call.

    Parameters
    ----------
    fn : callable
        A vectorised Python game (uint64 masks or bool rows -> n values).
        Declaring a declared function again returns it unchanged.

    Returns
    -------
    Deterministic
        A callable wrapper that :func:`as_game` recognises.

    Raises
    ------
    TypeError
        If ``fn`` is not callable, or is an ``@njit`` function (deterministic
        by its form already).

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit import games
    >>> table = np.array([0., 1., 2., 4.])
    >>> game = games.deterministic(lambda masks: table[masks.astype(np.int64)])
    >>> game(np.array([1, 3], dtype=np.uint64))
    array([1., 4.])
    >>> games.deterministic(game) is game
    True
    """
    if isinstance(fn, Deterministic):
        return fn
    if not callable(fn) or is_jitted(fn):
        raise TypeError(f"fn must be a vectorised Python callable (an @njit fn(mask) is "
                        f"already deterministic by its form), got {type(fn).__name__}")
    return Deterministic(fn)


def is_jitted(fn) -> bool:
    """Whether ``fn`` is a Numba ``@njit`` dispatcher.

    Parameters
    ----------
    fn : object
        Any object.

    Returns
    -------
    bool
        True for a Numba CPU dispatcher (``@njit``), False for anything else.

    Examples
    --------
    >>> from numba import njit
    >>> from fastcredit import games
    >>> games.is_jitted(njit(lambda mask: 1.0)), games.is_jitted(len)
    (True, False)
    """
    return type(fn).__name__ == "CPUDispatcher" and hasattr(fn, "py_func")


def as_game(game, m: int | None = None, *, coalitions: str = "mask", kernels=None,
            backend: str | None = None, max_table_players: int = _constants.MAX_TABLE_PLAYERS,
            name: str = "game") -> Game:
    """Recognise and check ``game``; resolve the backend of its kernel.

    Parameters
    ----------
    game : array_like or callable
        Any form in the module docstring: coalition tables ``(..., 2**m)``, a
        vectorised Python function, or an ``@njit`` ``fn(mask)`` or
        ``fn(mask, key)``.
    m : int, optional
        Number of players; required for functions (at most 4096 for a Python
        function, 64 for an @njit one), checked against tables.
    coalitions : {"mask", "bool"}
        How a Python callable wants coalitions ("bool" is forced for m > 64).
    kernels : dict, optional
        Kind -> the kernel ("family.name") that will evaluate or drive a game
        of that kind; its backend is resolved from ``backend`` (None: the
        measured fastest). @njit games always run on Numba: ``backend="c"``
        is refused for them.
    backend : {None, "c", "numba"}, optional
        Backend of the game's kernel; None picks the faster one.
    max_table_players : int
        Most players a table game may have for the caller, in [1, 30].
    name : str
        The argument's name in errors.

    Returns
    -------
    Game
        The recognised game: its kind, players, value and backend.

    Raises
    ------
    ValueError
        If ``coalitions`` is not "mask" or "bool"; if ``backend`` is not None,
        "c" or "numba" (or is unavailable here); if ``m`` is missing for a
        function, below 1, or above the limit of the game's form; if
        ``backend="c"`` is asked for an @njit game; if a table's last axis is
        not 2**m with 1 <= m <= ``max_table_players``, or ``m`` is given and
        does not match it; or if ``max_table_players`` is outside [1, 30].
    TypeError
        If ``kernels`` is not a dict or None; if ``m`` or ``max_table_players``
        is not an integer; if a table does not hold real numbers; or if an
        @njit game does not compile for uint64 arguments or does not return a
        real number.

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit import games
    >>> g = games.as_game(lambda masks: np.bitwise_count(masks) * 1.0, 3)
    >>> g.kind, g.m, g.coalitions, g.deterministic
    ('callable', 3, 'mask', False)
    >>> games.as_game(np.zeros(8), m=2)
    Traceback (most recent call last):
    ...
    ValueError: m = 2 does not match the table game: its last axis has length 2**3
    """
    coalitions = COALITIONS.check(coalitions)
    backend = BACKEND.check(backend)
    if kernels is not None and not isinstance(kernels, dict):
        raise TypeError(f"kernels must be a dict (game kind -> kernel name) or None, got "
                        f"{type(kernels).__name__}")
    kernels = kernels or {}
    max_table_players = TABLE_PLAYERS.check(max_table_players, "max_table_players")
    if m is not None:
        m = check_int(m, "m", lo=1)
    if is_jitted(game):
        if m is None:
            raise ValueError("m (the number of players) is required for an @njit game")
        m = check_int(m, "m", lo=1, hi=MAX_MASK_PLAYERS)
        from ._jit.games import takes_key
        kind = STOCHASTIC if takes_key(game) else JITTED
        _check_compiles(game, kind, name)
        if backend == "c":
            raise ValueError("backend='c' cannot run an @njit game; use backend=None or "
                             "'numba'")
        return Game(kind, m, game, (), "mask", resolve(kernels.get(kind, kind), "numba"),
                    kind == JITTED)
    if callable(game):
        if m is None:
            raise ValueError("m (the number of players) is required for a callable game")
        m = FUNCTION_PLAYERS.check(m)
        if m > MAX_MASK_PLAYERS:
            coalitions = "bool"
        declared = isinstance(game, Deterministic)
        return Game(CALLABLE, m, game.fn if declared else game, (), coalitions,
                    _resolve(kernels, CALLABLE, backend), declared)
    flat, m_table, lead = coalition_table(game, "game", max_m=max_table_players)
    if m is not None and m != m_table:
        raise ValueError(f"m = {m} does not match the table game: its last axis has "
                         f"length 2**{m_table}")
    return Game(TABLE, m_table, flat, lead, "mask", _resolve(kernels, TABLE, backend))


def _resolve(kernels: dict, kind: str, backend):
    """The backend of the kernel that evaluates a game of ``kind`` (None
    when the caller evaluates it without a kernel)."""
    return resolve(kernels[kind], backend) if kind in kernels else backend


def _check_compiles(fn, kind: str, name: str) -> None:
    """Compile an @njit game for uint64 masks (and keys) now, so a function
    Numba cannot type, or one returning no real number, is refused here
    with its argument's name rather than deep inside a kernel."""
    from numba import types
    from numba.core.errors import NumbaError

    args = (types.uint64, types.uint64) if kind == STOCHASTIC else (types.uint64,)
    form = "fn(mask, key)" if kind == STOCHASTIC else "fn(mask)"
    try:
        fn.compile(args)
    except NumbaError as exc:
        # the first line only names the compiler stage; the cause follows it
        lines = [line for line in str(exc).splitlines()[1:] if line.strip()]
        raise TypeError(f"{name} must be an @njit {form} Numba can compile for uint64 "
                        f"arguments; it failed: {lines[0] if lines else exc}") from exc
    returns = fn.overloads[args].signature.return_type
    if not isinstance(returns, (types.Number, types.Boolean)) or isinstance(
            returns, types.Complex):
        raise TypeError(f"{name} must return a real number, {form} returns {returns}")


def walk_cost(m: int, *, cache: bool, crn: bool = False) -> int:
    r"""Evaluations of the game one permutation walk spends.

    A walk evaluates its m + 1 prefixes :math:`\emptyset = P_0 \subset P_1
    \subset \dots \subset P_m = N`; m - 1 when v({}) and v(N) are cached (read
    once per run, 2 evaluations); 2m with common random numbers, where each
    marginal's two prefixes are drawn with one key.

    Parameters
    ----------
    m : int
        Number of players, 1 <= m <= 4096.
    cache : bool
        Whether v({}) and v(N) are cached.
    crn : bool, default False
        Whether each marginal is drawn with common random numbers.

    Returns
    -------
    int
        Evaluations per walk: 2m with ``crn``, else m - 1 with ``cache``,
        else m + 1.

    Raises
    ------
    TypeError
        If ``m`` is not an integer, or ``cache`` or ``crn`` is not a bool.
    ValueError
        If ``m`` is outside [1, 4096].

    Examples
    --------
    >>> from fastcredit import games
    >>> games.walk_cost(4, cache=True), games.walk_cost(4, cache=False)
    (3, 5)
    >>> games.walk_cost(4, cache=True, crn=True)
    8
    """
    m = FUNCTION_PLAYERS.check(m)
    cache = check_bool(cache, "cache")
    crn = check_bool(crn, "crn")
    if crn:
        return 2 * m
    return m - 1 if cache else m + 1


def masks_to_bool(masks, m: int) -> np.ndarray:
    r"""Coalition bitmasks as bool rows (the layout shapiq games take).

    .. math:: B[\dots, i] = \big((\mathrm{mask} \gg i) \mathbin{\&} 1\big) = 1
              \iff i \in S

    Parameters
    ----------
    masks : array_like of int, shape (...)
        Coalition bitmasks (non-negative integers).
    m : int
        Number of players, 1 <= m <= 64.

    Returns
    -------
    ndarray of bool, shape (..., m)
        ``[..., i]`` is True iff bit i of the mask is set.

    Raises
    ------
    TypeError
        If ``m`` is not an integer, or ``masks`` is not an integer array.
    ValueError
        If ``m`` is outside [1, 64], or a mask is negative.

    See Also
    --------
    bool_to_masks : the inverse.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.masks_to_bool([1, 6], 3)
    array([[ True, False, False],
           [False,  True,  True]])
    """
    m = check_int(m, "m", lo=1, hi=MAX_MASK_PLAYERS)
    arr = as_array(masks, "masks")
    if arr.dtype.kind == "i" and arr.size and arr.min() < 0:
        raise ValueError("masks must be non-negative")
    arr = int_array(arr, "masks", dtype=np.uint64)
    bits = np.arange(m, dtype=np.uint64)
    return ((arr[..., None] >> bits) & np.uint64(1)).astype(bool)


def bool_to_masks(coalitions) -> np.ndarray:
    r"""Bool coalition rows as uint64 bitmasks: the inverse of :func:`masks_to_bool`.

    .. math:: \mathrm{mask} = \sum_{i : B[\dots, i]} 2^i

    Parameters
    ----------
    coalitions : array_like of bool, shape (..., m)
        Coalition rows, m <= 64 (nonzero integers count as True).

    Returns
    -------
    ndarray of uint64, shape (...)
        The bitmask of each row.

    Raises
    ------
    TypeError
        If ``coalitions`` is a scalar or not a bool or integer array.
    ValueError
        If the rows have more than 64 players.

    Examples
    --------
    >>> from fastcredit import games
    >>> games.bool_to_masks([[True, False, False], [False, True, True]])
    array([1, 6], dtype=uint64)
    """
    rows = as_array(coalitions, "coalitions")
    if rows.ndim < 1 or rows.dtype.kind not in "biu":
        raise TypeError(f"coalitions must be a bool array (..., m), got dtype {rows.dtype} "
                        f"and shape {rows.shape}")
    m = rows.shape[-1]
    if m > MAX_MASK_PLAYERS:
        raise ValueError(f"coalitions of {m} players do not fit in uint64 masks")
    bits = np.left_shift(np.uint64(1), np.arange(m, dtype=np.uint64))
    return np.bitwise_or.reduce(np.where(rows != 0, bits, np.uint64(0)), axis=-1)


def table_lookup(table: np.ndarray, coalitions) -> np.ndarray:
    r"""Values of bool coalition rows read from a coalition table.

    .. math:: y_r = v\Big[\sum_{i : B[r, i]} 2^i\Big]

    Parameters
    ----------
    table : array_like, shape (2**m,)
        One coalition table (float64 or float32; integers are converted).
    coalitions : array_like of bool, shape (n, m)
        Coalition rows over the table's m players.

    Returns
    -------
    ndarray, shape (n,)
        v of each row, in the table's dtype.

    Raises
    ------
    ValueError
        If ``table``'s last axis is not 2**m with 1 <= m <= 30, or ``table`` is a
        batch of tables; or if ``coalitions`` is not rows of length m.
    TypeError
        If ``table`` does not hold real numbers, or ``coalitions`` is not a
        bool or integer array.

    Examples
    --------
    >>> import numpy as np
    >>> from fastcredit import games
    >>> games.table_lookup(np.array([0., 1., 2., 4.]), [[True, True], [False, True]])
    array([4., 2.])
    """
    flat, m, lead = coalition_table(table, "table")
    if lead:
        raise ValueError(f"table must be one coalition table (2**m,), got shape "
                         f"{lead + (flat.shape[1],)}")
    rows = as_array(coalitions, "coalitions")
    if rows.ndim < 1 or rows.shape[-1] != m:
        raise ValueError(f"coalitions must be bool rows (n, m) with m = {m} (the table's "
                         f"players), got shape {rows.shape}")
    return flat[0][bool_to_masks(rows).astype(np.int64)]


def call_value_function(fn, coalitions, *, name: str, where: str, finite: bool) -> np.ndarray:
    """``fn(coalitions)`` checked: one real value per coalition (float64);
    with ``finite``, a non-finite value is an error naming the coalition.
    An exception of ``fn`` becomes a RuntimeError saying ``where`` it was
    called."""
    try:
        vals = fn(coalitions)
    except Exception as exc:
        raise RuntimeError(f"{name} raised {where}: {exc!r}") from exc
    vals = np.asarray(vals)
    if vals.dtype.kind not in "biuf":
        raise TypeError(f"{name} must return real numbers, got dtype {vals.dtype}")
    if vals.shape != (len(coalitions),):
        raise ValueError(f"{name} must return one value per coalition: shape "
                         f"({len(coalitions)},), got {vals.shape}")
    vals = vals.astype(np.float64)
    if finite:
        bad = np.flatnonzero(~np.isfinite(vals))
        if bad.size:
            row = coalitions[bad[0]]
            who = (f"mask {int(row)}" if row.ndim == 0
                   else f"players {np.flatnonzero(row).tolist()}")
            raise ValueError(f"{name} returned a non-finite value ({vals[bad[0]]}) for "
                             f"coalition {who}")
    return vals


class Evaluator:
    """Evaluates coalitions of a Python callable game, counting evaluations:
    as uint64 masks or bool rows (``game.coalitions``), with a memo of every
    coalition seen when ``memo`` (deterministic games with m <= 64)."""

    def __init__(self, game: Game, memo: bool):
        self.game = game
        self.n_evals = 0
        self.keys = np.empty(0, dtype=np.uint64) if memo else None
        self.vals = np.empty(0)

    def _eval(self, masks=None, rows=None):
        as_bool = self.game.coalitions == "bool"
        if rows is None and as_bool:
            rows = masks_to_bool(masks, self.game.m)
        batch = rows if as_bool else masks
        vals = call_value_function(
            self.game.value, batch, name="game", finite=True,
            where=f"on a batch of {len(batch)} coalitions (after {self.n_evals} evaluations)")
        self.n_evals += len(batch)
        return vals

    def masks(self, masks):
        """v of a flat uint64 mask array."""
        if self.keys is None:
            return self._eval(masks)
        need = np.unique(masks)
        new = need
        if len(self.keys):
            pos = np.minimum(np.searchsorted(self.keys, need), len(self.keys) - 1)
            new = need[self.keys[pos] != need]
        if len(new):
            keys = np.concatenate([self.keys, new])
            vals = np.concatenate([self.vals, self._eval(new)])
            order = np.argsort(keys, kind="stable")
            self.keys, self.vals = keys[order], vals[order]
        return self.vals[np.searchsorted(self.keys, masks)]

    def rows(self, rows):
        """v of a bool matrix (n, m) of coalitions."""
        return self._eval(rows=rows)
