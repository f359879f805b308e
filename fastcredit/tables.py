"""Exact credit over coalition tables.

A game on players 0..m-1 is a table ``v`` of length 2**m indexed by coalition
bitmask (bit i set iff player i is in the coalition). Every function here takes
``v`` of shape ``(..., 2**m)`` (float64 or float32, any leading batch shape,
1 <= m <= 30) and returns float64, keeping the leading shape.

All semivalues run in O(2**m) per game in one streaming pass: with d(S) =
v(S) - v(0),

    phi_i = T_i - B,   T_i = sum_{S contains i} d(S) (w[|S|-1] + w[|S|]),
                       B   = sum_S d(S) w[|S|]      (w[-1] = w[m] = 0),

where the m sums T_i come from halving folds of cache-sized blocks of the table
(no 2**m x m weight matrix). Batches of small games are split over threads by
game; one large game is split over threads by block.

Common keyword arguments:

out : ndarray, optional
    float64, C-contiguous, of the result's shape; written and returned.
threads : int, optional
    Threads to split the work over (default: all cores).
backend : {None, "c", "numba"}
    None picks the faster backend for the kernel (see fastcredit._backend).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from . import _parallel
from ._backend import kernels, resolve
from ._params import TABLE_PLAYERS
from ._validation import (as_array, check_int, coalition_table, float64_array, int_array,
                          output, real_array)
from .games import CALLABLE, as_game, call_value_function, masks_to_bool

__all__ = ["shapley", "banzhaf", "semivalue", "singleton", "leave_one_out",
           "size_resolved", "pair_interactions", "moebius", "from_moebius", "owen",
           "owen_coalitions",
           "table_from_function", "shapley_weights", "banzhaf_weights"]

# From this size on a game is cut into ranges of 2**_RANGE_BITS entries (whole
# blocks of the kernels) that threads share; the ranges are fixed by the data
# alone and their partial sums added in range order, so the bits are the same
# for any thread count. Smaller games are too small to be worth a thread, and
# batches of them are split by game.
_SPLIT_GAME_M = 16
_RANGE_BITS = 16
_GRAIN = 8        # games per thread chunk are a multiple of this
# A thread gets at least this many table entries of a batch.
_MIN_ENTRIES_PER_THREAD = 1 << 15
# A thread fills at least this many coalitions of a table from an @njit fn.
_MIN_COALITIONS_PER_THREAD = 1 << 12


def shapley_weights(m: int) -> np.ndarray:
    r"""Shapley weights of coalition sizes.

    .. math:: w_k = \frac{k!\,(m-k-1)!}{m!} = \frac{1}{m \binom{m-1}{k}}, \qquad k = 0, \dots, m-1

    Each is one correctly rounded division of two exact integers, so C, Numba
    and this function give identical bits.

    Parameters
    ----------
    m : int
        Number of players, 1 <= m <= 30.

    Returns
    -------
    ndarray, shape (m,), float64
        ``w[k]`` weighs marginals into coalitions of size k (the ``weights``
        of :func:`semivalue`); a new array.

    Raises
    ------
    TypeError
        If ``m`` is not an integer.
    ValueError
        If ``m`` is outside [1, 30].

    See Also
    --------
    banzhaf_weights, semivalue

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.shapley_weights(3)
    array([0.33333333, 0.16666667, 0.33333333])
    """
    return _shapley_weights(TABLE_PLAYERS.check(m)).copy()


@functools.lru_cache(maxsize=None)
def _shapley_weights(m: int) -> np.ndarray:
    """:func:`shapley_weights` made once per m (math.comb per call cost ~30
    us of a one-game call, issue 33): shared, so only kernels that read it
    get it."""
    return np.array([1.0 / (m * math.comb(m - 1, k)) for k in range(m)])


def banzhaf_weights(m: int) -> np.ndarray:
    r"""Banzhaf weights of coalition sizes.

    .. math:: w_k = \frac{1}{2^{m-1}}, \qquad k = 0, \dots, m-1

    Parameters
    ----------
    m : int
        Number of players, 1 <= m <= 30.

    Returns
    -------
    ndarray, shape (m,), float64
        ``w[k]`` weighs marginals into coalitions of size k (the ``weights``
        of :func:`semivalue`).

    Raises
    ------
    TypeError
        If ``m`` is not an integer.
    ValueError
        If ``m`` is outside [1, 30].

    See Also
    --------
    shapley_weights, semivalue

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.banzhaf_weights(3)
    array([0.25, 0.25, 0.25])
    """
    m = TABLE_PLAYERS.check(m)
    return np.full(m, 1.0 / 2.0 ** (m - 1))


def _split_games(kernel, flat, res_flat, m, nt):
    """``kernel(games, out)`` over the batch, split by game over nt threads
    (a thread gets at least _MIN_ENTRIES_PER_THREAD table entries)."""
    _parallel.run(lambda a, b: kernel(flat[a:b], res_flat[a:b]), flat.shape[0], nt,
                  grain=_GRAIN, min_items=max(1, _MIN_ENTRIES_PER_THREAD >> m))


def _batch(kernel, key, v, tail, out, threads, backend, name="v"):
    """Run a per-game kernel ``kernel(flat_v, flat_out)`` over a batch;
    ``name`` is the table's argument name in errors."""
    flat, m, lead = coalition_table(v, name)
    impl = getattr(kernels("tables", resolve(key, backend)), kernel)
    nt = _parallel.n_threads(threads)
    shape = tail(m)
    res = output(out, lead + shape, inputs={name: (v, flat)})
    if flat.shape[0]:
        _split_games(impl, flat, res.reshape((flat.shape[0],) + shape), m, nt)
    return res


def semivalue(v, weights, *, out=None, threads=None, backend=None) -> np.ndarray:
    r"""Semivalue of each game for per-size weights.

    .. math:: \phi_i = \sum_{S \subseteq N \setminus \{i\}} w_{|S|} \, (v(S \cup \{i\}) - v(S))

    One streaming pass of O(2**m) per game. A game with a non-finite result
    (a non-finite table, or sums that overflow) is summed as the definition is
    written, so a defined +-inf is not turned into NaN.

    Parameters
    ----------
    v : array_like, shape (..., 2**m)
        Coalition tables, ``v[..., S]`` the value of coalition bitmask S
        (float64 or float32; integers and bools are converted to float64).
    weights : array_like, shape (m,)
        ``weights[k]`` weighs marginals into coalitions of size k (float64;
        integers are converted): :func:`shapley_weights` gives the Shapley
        value, :func:`banzhaf_weights` the Banzhaf value.
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned. None allocates the result.
    threads : int, optional
        Threads to split the work over, at least 1 (default None: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one for the kernel (see
        :func:`fastcredit.available_backends`).

    Returns
    -------
    ndarray, shape (..., m), float64
        ``phi[..., i]``, the semivalue of player i in each game (``out`` if
        given).

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 30 (or ``v`` is a
        scalar); if ``weights`` does not have shape (m,); if ``out`` has the
        wrong shape, is not writeable and C-contiguous, or overlaps ``v``; if
        ``threads`` is below 1; if ``backend`` is not None, "c" or "numba", or
        is not available here; or if the result (or a contiguous copy of ``v``)
        needs more memory than is available.
    TypeError
        If ``v`` does not hold real numbers (complex, object or string dtype, or
        a float dtype other than float64/float32); if ``weights`` is not a
        float64, integer or bool array; if ``out`` is not a float64 numpy array;
        or if ``threads`` is not an integer.

    See Also
    --------
    shapley, banzhaf

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.array([0., 1., 2., 4.])          # v({0,1}) = 4
    >>> fc.semivalue(v, [0.5, 0.5])             # = Shapley for m = 2
    array([1.5, 2.5])
    """
    flat, m, lead = coalition_table(v)
    w = real_array(weights, "weights", dtypes=(np.float64,))
    if w.shape != (m,):
        raise ValueError(f"weights must have shape ({m},) for m = {m} players, got {w.shape}")
    return _semivalue(flat, m, lead, w, out, threads, backend,
                      {"v": (v, flat), "weights": (weights, w)})


def _semivalue(flat, m, lead, w, out, threads, backend, inputs):
    """Semivalues of the validated tables ``flat``; ``inputs`` are the
    arguments ``out`` must not overlap (see :func:`output`)."""
    impl = kernels("tables", resolve("tables.semivalue", backend))
    nt = _parallel.n_threads(threads)
    res = output(out, lead + (m,), inputs=inputs)
    n_games = flat.shape[0]
    if n_games == 0:
        return res
    res_flat = res.reshape(n_games, m)
    if m < _SPLIT_GAME_M:
        # the kernel redoes a game with a non-finite result by the definition
        # itself, inside its pass (a scan of the result here cost as much as
        # the kernel on a batch of small games)
        _split_games(lambda games, out: impl.semivalue(games, w, out), flat, res_flat, m, nt)
        return res
    _semivalue_ranges(impl, flat, w, res_flat, m, nt)
    # A non-finite result can only come from a non-finite table (or sums that
    # overflow), where the one-pass formula's difference of two infinite sums
    # would turn a defined +-inf into NaN: such games are summed as the
    # definition is written. A few large games: m results each, whose sum
    # is finite when all are (a third of the time of a scan for which game).
    if not math.isfinite(res_flat.sum()):
        for g in np.flatnonzero(~np.isfinite(res_flat).all(axis=1)):
            res_flat[g] = _semivalue_by_definition(flat[g], w)
    return res


def _semivalue_by_definition(game, w):
    """phi_i = sum over S not containing i of w[|S|] (v(S + i) - v(S)), in
    chunks of coalitions (the slow path for non-finite tables)."""
    m = w.shape[0]
    phi = np.zeros(m)
    chunk = 1 << min(m, _RANGE_BITS)
    for start in range(0, 1 << m, chunk):
        masks = np.arange(start, start + chunk, dtype=np.int64)
        weight = w[np.minimum(np.bitwise_count(masks), m - 1)]
        base = game[masks].astype(np.float64)
        for i in range(m):
            out_of_s = (masks >> i & 1) == 0
            with np.errstate(invalid="ignore"):
                marginal = game[masks[out_of_s] | 1 << i] - base[out_of_s]
                phi[i] += np.sum(weight[out_of_s] * marginal)
    return phi


def _semivalue_ranges(impl, flat, w, res_flat, m, nt):
    """Semivalues of large games from partial sums over fixed ranges of each
    table: (game, range) items are split over threads, and each game's
    partials are added in range order."""
    step = 1 << _RANGE_BITS
    per_game = 1 << (m - _RANGE_BITS)
    parts = np.zeros((flat.shape[0], per_game, m + 1))

    def work(a, b):
        # one kernel call per game in [a, b): its ranges' partials in turn
        while a < b:
            g, r = divmod(a, per_game)
            end = min(b - g * per_game, per_game)
            impl.semivalue_ranges(flat[g], w, float(flat[g, 0]), r * step, end * step,
                                  parts[g, r:end])
            a = g * per_game + end

    _parallel.run(work, flat.shape[0] * per_game, nt)
    acc = parts[:, 0].copy()
    with np.errstate(invalid="ignore"):   # non-finite tables are redone below
        for r in range(1, per_game):
            acc += parts[:, r]
        res_flat[:] = acc[:, :m] - acc[:, m:]


def shapley(v, *, out=None, threads=None, backend=None) -> np.ndarray:
    r"""Shapley value of each game.

    .. math:: \phi_i = \sum_{S \subseteq N \setminus \{i\}}
              \frac{|S|!\,(m-|S|-1)!}{m!} \, (v(S \cup \{i\}) - v(S))

    Efficient: ``phi.sum(-1) == v[..., -1] - v[..., 0]``. This is
    :func:`semivalue` with :func:`shapley_weights`.

    Parameters
    ----------
    v : array_like, shape (..., 2**m)
        Coalition tables, ``v[..., S]`` the value of coalition bitmask S
        (float64 or float32; integers and bools are converted to float64).
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned. None allocates the result.
    threads : int, optional
        Threads to split the work over, at least 1 (default None: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one for the kernel (see
        :func:`fastcredit.available_backends`).

    Returns
    -------
    ndarray, shape (..., m), float64
        ``phi[..., i]``, the Shapley value of player i in each game (``out``
        if given).

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 30 (or ``v`` is a
        scalar); if ``out`` has the wrong shape, is not writeable and
        C-contiguous, or overlaps ``v``; if ``threads`` is below 1; if
        ``backend`` is not None, "c" or "numba", or is not available here; or if
        the result (or a contiguous copy of ``v``) needs more memory than is
        available.
    TypeError
        If ``v`` does not hold real numbers (complex, object or string dtype, or
        a float dtype other than float64/float32); if ``out`` is not a float64
        numpy array; or if ``threads`` is not an integer.

    See Also
    --------
    banzhaf, semivalue, permutation_shapley

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> glove = np.array([0., 0., 0., 1., 0., 1., 0., 1.])  # L = {0}, R = {1, 2}
    >>> fc.shapley(glove).round(4)
    array([0.6667, 0.1667, 0.1667])
    """
    flat, m, lead = coalition_table(v)
    return _semivalue(flat, m, lead, _shapley_weights(m), out, threads, backend,
                      {"v": (v, flat)})


def banzhaf(v, *, out=None, threads=None, backend=None) -> np.ndarray:
    r"""Banzhaf value of each game.

    .. math:: \beta_i = \frac{1}{2^{m-1}} \sum_{S \subseteq N \setminus \{i\}}
              (v(S \cup \{i\}) - v(S))

    This is :func:`semivalue` with :func:`banzhaf_weights`.

    Parameters
    ----------
    v : array_like, shape (..., 2**m)
        Coalition tables, ``v[..., S]`` the value of coalition bitmask S
        (float64 or float32; integers and bools are converted to float64).
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned. None allocates the result.
    threads : int, optional
        Threads to split the work over, at least 1 (default None: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one for the kernel (see
        :func:`fastcredit.available_backends`).

    Returns
    -------
    ndarray, shape (..., m), float64
        ``beta[..., i]``, the Banzhaf value of player i in each game (``out``
        if given).

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 30 (or ``v`` is a
        scalar); if ``out`` has the wrong shape, is not writeable and
        C-contiguous, or overlaps ``v``; if ``threads`` is below 1; if
        ``backend`` is not None, "c" or "numba", or is not available here; or if
        the result (or a contiguous copy of ``v``) needs more memory than is
        available.
    TypeError
        If ``v`` does not hold real numbers (complex, object or string dtype, or
        a float dtype other than float64/float32); if ``out`` is not a float64
        numpy array; or if ``threads`` is not an integer.

    See Also
    --------
    shapley, semivalue

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> glove = np.array([0., 0., 0., 1., 0., 1., 0., 1.])  # L = {0}, R = {1, 2}
    >>> fc.banzhaf(glove)
    array([0.75, 0.25, 0.25])
    """
    flat, m, lead = coalition_table(v)
    return _semivalue(flat, m, lead, banzhaf_weights(m), out, threads, backend,
                      {"v": (v, flat)})


def singleton(v, *, out=None, threads=None, backend=None) -> np.ndarray:
    r"""Singleton credit of each player.

    .. math:: s_i = v(\{i\}) - v(\emptyset)

    Parameters
    ----------
    v : array_like, shape (..., 2**m)
        Coalition tables, ``v[..., S]`` the value of coalition bitmask S
        (float64 or float32; integers and bools are converted to float64).
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned. None allocates the result.
    threads : int, optional
        Threads to split the work over, at least 1 (default None: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one for the kernel (see
        :func:`fastcredit.available_backends`).

    Returns
    -------
    ndarray, shape (..., m), float64
        ``s[..., i]`` for each game (``out`` if given).

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 30 (or ``v`` is a
        scalar); if ``out`` has the wrong shape, is not writeable and
        C-contiguous, or overlaps ``v``; if ``threads`` is below 1; if
        ``backend`` is not None, "c" or "numba", or is not available here; or if
        the result (or a contiguous copy of ``v``) needs more memory than is
        available.
    TypeError
        If ``v`` does not hold real numbers (complex, object or string dtype, or
        a float dtype other than float64/float32); if ``out`` is not a float64
        numpy array; or if ``threads`` is not an integer.

    See Also
    --------
    leave_one_out

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> fc.singleton(np.array([0., 1., 2., 4.]))
    array([1., 2.])
    """
    return _batch("singleton", "tables.gather", v, lambda m: (m,), out, threads, backend)


def leave_one_out(v, *, out=None, threads=None, backend=None) -> np.ndarray:
    r"""Leave-one-out credit of each player.

    .. math:: l_i = v(N) - v(N \setminus \{i\})

    Parameters
    ----------
    v : array_like, shape (..., 2**m)
        Coalition tables, ``v[..., S]`` the value of coalition bitmask S
        (float64 or float32; integers and bools are converted to float64).
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned. None allocates the result.
    threads : int, optional
        Threads to split the work over, at least 1 (default None: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one for the kernel (see
        :func:`fastcredit.available_backends`).

    Returns
    -------
    ndarray, shape (..., m), float64
        ``l[..., i]`` for each game (``out`` if given).

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 30 (or ``v`` is a
        scalar); if ``out`` has the wrong shape, is not writeable and
        C-contiguous, or overlaps ``v``; if ``threads`` is below 1; if
        ``backend`` is not None, "c" or "numba", or is not available here; or if
        the result (or a contiguous copy of ``v``) needs more memory than is
        available.
    TypeError
        If ``v`` does not hold real numbers (complex, object or string dtype, or
        a float dtype other than float64/float32); if ``out`` is not a float64
        numpy array; or if ``threads`` is not an integer.

    See Also
    --------
    singleton

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> fc.leave_one_out(np.array([0., 1., 2., 4.]))
    array([2., 3.])
    """
    return _batch("leave_one_out", "tables.gather", v, lambda m: (m,), out, threads, backend)


def pair_interactions(v, *, out=None, threads=None, backend=None) -> np.ndarray:
    r"""Pair interactions of each game.

    .. math:: I_{ij} = v(\{i,j\}) - v(\{i\}) - v(\{j\}) + v(\emptyset)

    Negative :math:`I_{ij}`: i and j are substitutes (redundant); positive:
    complements.

    Parameters
    ----------
    v : array_like, shape (..., 2**m)
        Coalition tables, ``v[..., S]`` the value of coalition bitmask S
        (float64 or float32; integers and bools are converted to float64).
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned. None allocates the result.
    threads : int, optional
        Threads to split the work over, at least 1 (default None: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one for the kernel (see
        :func:`fastcredit.available_backends`).

    Returns
    -------
    ndarray, shape (..., m, m), float64
        Symmetric with a zero diagonal (``out`` if given).

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 30 (or ``v`` is a
        scalar); if ``out`` has the wrong shape, is not writeable and
        C-contiguous, or overlaps ``v``; if ``threads`` is below 1; if
        ``backend`` is not None, "c" or "numba", or is not available here; or if
        the result (or a contiguous copy of ``v``) needs more memory than is
        available.
    TypeError
        If ``v`` does not hold real numbers (complex, object or string dtype, or
        a float dtype other than float64/float32); if ``out`` is not a float64
        numpy array; or if ``threads`` is not an integer.

    See Also
    --------
    interactions : interaction indices of every order.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> fc.pair_interactions(np.array([0., 1., 2., 4.]))
    array([[0., 1.],
           [1., 0.]])
    """
    return _batch("pair_interactions", "tables.gather", v, lambda m: (m, m), out,
                  threads, backend)


def size_resolved(v, *, out=None, threads=None, backend=None) -> np.ndarray:
    r"""Size-resolved marginals: the mean marginal of i into coalitions of size k.

    .. math:: M_{ik} = \binom{m-1}{k}^{-1} \sum_{S \not\ni i,\ |S| = k} (v(S \cup \{i\}) - v(S))

    Shapley is the plain mean over k, ``size_resolved(v).mean(-1)``.

    Computed from per-size sums in O(2**m) memory traffic, so a NaN in v(S)
    makes column ``k = |S|`` NaN for every player (the definition would spare
    the players in S there) as well as the entries the definition touches.

    Parameters
    ----------
    v : array_like, shape (..., 2**m)
        Coalition tables, ``v[..., S]`` the value of coalition bitmask S
        (float64 or float32; integers and bools are converted to float64).
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned. None allocates the result.
    threads : int, optional
        Threads to split the work over, at least 1 (default None: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one for the kernel (see
        :func:`fastcredit.available_backends`).

    Returns
    -------
    ndarray, shape (..., m, m), float64
        ``M[..., i, k]``, k = 0..m-1 (``out`` if given).

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 30 (or ``v`` is a
        scalar); if ``out`` has the wrong shape, is not writeable and
        C-contiguous, or overlaps ``v``; if ``threads`` is below 1; if
        ``backend`` is not None, "c" or "numba", or is not available here; or if
        the result (or a contiguous copy of ``v``) needs more memory than is
        available.
    TypeError
        If ``v`` does not hold real numbers (complex, object or string dtype, or
        a float dtype other than float64/float32); if ``out`` is not a float64
        numpy array; or if ``threads`` is not an integer.

    See Also
    --------
    shapley

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> M = fc.size_resolved(np.array([0., 1., 2., 4.]))
    >>> M
    array([[1., 2.],
           [2., 3.]])
    >>> M.mean(-1)                              # the Shapley value
    array([1.5, 2.5])
    """
    return _batch("size_resolved", "tables.size_resolved", v, lambda m: (m, m), out,
                  threads, backend)


def moebius(v, *, out=None, threads=None, backend=None) -> np.ndarray:
    r"""Moebius transform (Harsanyi dividends) of each game.

    .. math:: a(S) = \sum_{T \subseteq S} (-1)^{|S \setminus T|} v(T)

    O(m 2**m) per game. The inverse is :func:`from_moebius`. Shapley is
    :math:`\phi_i = \sum_{S \ni i} a(S)/|S|`.

    Parameters
    ----------
    v : array_like, shape (..., 2**m)
        Coalition tables, ``v[..., S]`` the value of coalition bitmask S
        (float64 or float32; integers and bools are converted to float64).
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned. None allocates the result.
    threads : int, optional
        Threads to split the work over, at least 1 (default None: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one for the kernel (see
        :func:`fastcredit.available_backends`).

    Returns
    -------
    ndarray, shape (..., 2**m), float64
        ``a[..., S]``, the dividend of coalition mask S (``out`` if given).

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 30 (or ``v`` is a
        scalar); if ``out`` has the wrong shape, is not writeable and
        C-contiguous, or overlaps ``v``; if ``threads`` is below 1; if
        ``backend`` is not None, "c" or "numba", or is not available here; or if
        the result (or a contiguous copy of ``v``) needs more memory than is
        available.
    TypeError
        If ``v`` does not hold real numbers (complex, object or string dtype, or
        a float dtype other than float64/float32); if ``out`` is not a float64
        numpy array; or if ``threads`` is not an integer.

    See Also
    --------
    from_moebius

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> fc.moebius(np.array([0., 1., 2., 4.]))  # a({0,1}) = 4 - 1 - 2 + 0
    array([0., 1., 2., 1.])
    """
    return _batch("moebius", "tables.moebius", v, lambda m: (1 << m,), out, threads, backend)


def from_moebius(a, *, out=None, threads=None, backend=None) -> np.ndarray:
    r"""Inverse Moebius (zeta) transform of each table of dividends.

    .. math:: v(S) = \sum_{T \subseteq S} a(T)

    O(m 2**m) per game; the inverse of :func:`moebius`.

    Parameters
    ----------
    a : array_like, shape (..., 2**m)
        Dividend tables, ``a[..., S]`` the dividend of coalition mask S
        (float64 or float32; integers and bools are converted to float64).
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned. None allocates the result.
    threads : int, optional
        Threads to split the work over, at least 1 (default None: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one for the kernel (see
        :func:`fastcredit.available_backends`).

    Returns
    -------
    ndarray, shape (..., 2**m), float64
        The coalition tables ``v`` (``out`` if given).

    Raises
    ------
    ValueError
        If the last axis of ``a`` is not 2**m with 1 <= m <= 30 (or ``a`` is a
        scalar); if ``out`` has the wrong shape, is not writeable and
        C-contiguous, or overlaps ``a``; if ``threads`` is below 1; if
        ``backend`` is not None, "c" or "numba", or is not available here; or if
        the result (or a contiguous copy of ``a``) needs more memory than is
        available.
    TypeError
        If ``a`` does not hold real numbers (complex, object or string dtype, or
        a float dtype other than float64/float32); if ``out`` is not a float64
        numpy array; or if ``threads`` is not an integer.

    See Also
    --------
    moebius

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> fc.from_moebius(np.array([0., 1., 2., 1.]))
    array([0., 1., 2., 4.])
    """
    return _batch("from_moebius", "tables.moebius", a, lambda m: (1 << m,), out, threads,
                  backend, name="a")


def owen(v, clustering, *, out=None, threads=None, backend=None) -> np.ndarray:
    r"""Owen value of each game over a hierarchy of coalitions of its players.

    The players are grouped by ``clustering``, either a partition into
    unions or a binary cluster tree, and a random order of the players is
    drawn that keeps every group together: at each node of the hierarchy its
    children come in a uniformly random order, each child's members one
    block. A player's credit is its expected marginal contribution in that
    order. For a partition :math:`U_1, \dots, U_K` (``M`` the set of unions,
    player i in :math:`U_k`) this is Owen's value

    .. math:: \phi_i = \sum_{R \subseteq M \setminus \{k\}}
              \sum_{T \subseteq U_k \setminus \{i\}}
              \frac{|R|!\,(K-|R|-1)!}{K!} \, \frac{|T|!\,(|U_k|-|T|-1)!}{|U_k|!}
              \big(v(U_R \cup T \cup \{i\}) - v(U_R \cup T)\big),
              \qquad U_R = \textstyle\bigcup_{r \in R} U_r .

    For a tree the same holds level by level (the Winter value): at each
    ancestor of i the sibling branch comes before i's or after it, each with
    probability 1/2, so

    .. math:: \phi_i = 2^{-d} \sum_{C} \big(v(C \cup \{i\}) - v(C)\big),

    summed over the :math:`2^d` unions C of a subset of the d sibling
    branches along i's path from the root. This is the value shap's
    ``PartitionExplainer`` computes (its ``owen`` recursion with
    ``fixed_context=None``) when ``max_evals`` lets it split every cluster;
    a cluster of negative distance is not split there, and is not here: it
    enters as one block and its members share its marginal equally.

    Efficient (``phi.sum(-1) == v[..., -1] - v[..., 0]``); the credit of a
    union is its Shapley value in the quotient game of the unions; one union,
    or all singletons, gives the Shapley value. A player's share reads
    :math:`\prod_\ell 2^{n_\ell}` entries of the table (:math:`n_\ell`
    siblings at level l): m entries per player of a balanced tree of m
    leaves, :math:`2^{m-1}` for one union of all.

    Parameters
    ----------
    v : array_like, shape (..., 2**m)
        Coalition tables (float64 or float32; integers are converted).
    clustering : array_like
        Either an integer array of shape (m,), the union of each player (any
        integer labels; equal labels share a union), or a scipy linkage
        matrix of shape (m - 1, 4) (``scipy.cluster.hierarchy.linkage``, or
        a shap masker's ``clustering``): row k joins nodes ``[k, 0]`` and
        ``[k, 1]`` (players are 0..m-1, row k's cluster is m + k, so a
        child is a player or an earlier row) at distance ``[k, 2]`` into a
        cluster of ``[k, 3]`` players; the last row is the root.
    out, threads, backend
        See the module docstring. Games of a batch are split over threads;
        each game is summed in one fixed order, the same bits for any
        thread count.

    Returns
    -------
    ndarray, shape (..., m), float64

    Raises
    ------
    ValueError
        A clustering of the wrong shape or that is not a hierarchy of the m
        players (a child out of range or joined twice, a size in column 3
        that is not the cluster's, a non-finite entry), naming
        ``clustering``; a bad ``v`` or ``out``.
    TypeError
        A partition that is not an integer array, or a table or ``out`` of
        another dtype.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> glove = np.array([0., 0., 0., 1., 0., 1., 0., 1.])  # L = {0}, R = {1, 2}
    >>> fc.owen(glove, [0, 1, 1])        # the right gloves form a union
    array([0.5 , 0.25, 0.25])
    >>> tree = [[1, 2, 1.0, 2], [0, 3, 2.0, 3]]   # join 1 and 2, then 0
    >>> fc.owen(glove, tree)
    array([0.5 , 0.25, 0.25])
    """
    flat, m, lead = coalition_table(v)
    plan = _owen_plan(clustering, m)
    impl = kernels("tables", resolve("tables.owen", backend))
    nt = _parallel.n_threads(threads)
    res = output(out, lead + (m,), inputs={"v": (v, flat), "clustering": clustering})
    if flat.shape[0]:
        _split_games(lambda games, o: impl.owen(games, *plan, o), flat,
                     res.reshape(flat.shape[0], m), m, nt)
    return res


def owen_coalitions(clustering, m: int) -> np.ndarray:
    """The coalitions :func:`owen` reads for ``clustering`` over m players.

    Each player's contexts C and C + G (see :func:`owen`) over all players:
    a table that holds the game's values at these masks gives the Owen
    value whatever it holds elsewhere (NaN included), so an expensive game
    need be evaluated only here: O(m**2) coalitions for a balanced binary
    tree (44 of the 256 for m = 8, 172 of 65,536 for m = 16).

    Parameters
    ----------
    clustering : array_like
        A partition or a linkage matrix, as :func:`owen` takes it.
    m : int
        Number of players, 1 <= m <= 30.

    Returns
    -------
    ndarray, shape (n,), uint64
        The masks, ascending, each once; 0 and 2**m - 1 among them.

    Raises
    ------
    ValueError
        m out of range, or a clustering :func:`owen` refuses, naming it.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.owen_coalitions([[1, 2, 0.5, 2], [0, 3, 1.0, 3]], 3)  # 1 and 2 join, then 0
    array([0, 1, 2, 3, 4, 5, 6, 7], dtype=uint64)
    >>> fc.owen_coalitions([0, 1, 2, 3], 4).size       # all singletons: every coalition
    16
    >>> fc.owen_coalitions([0] * 5 + [1] * 5, 10).size  # two unions of 5, of 1024
    124
    """
    m = TABLE_PLAYERS.check(m)
    groups, level_start, item_start, items, _ = _owen_plan(clustering, m)
    found = []
    for i in range(m):
        contexts = np.zeros(1, dtype=np.int64)
        for level in range(level_start[i], level_start[i + 1]):
            masks = items[item_start[level]:item_start[level + 1]]
            subsets = np.zeros(1, dtype=np.int64)
            for mask in masks:
                subsets = np.concatenate([subsets, subsets | mask])
            contexts = (contexts[:, None] | subsets[None, :]).ravel()
        found += [contexts, contexts | groups[i]]
    return np.unique(np.concatenate(found)).astype(np.uint64)


def _owen_plan(clustering, m):
    """The hierarchy ``clustering`` over m players as the plan of the owen
    kernels (csrc/tables.h): (groups, level_start, item_start, items,
    weights). Each player's levels run from the root down and skip nodes
    where it has no sibling."""
    arr = as_array(clustering, "clustering")
    if arr.ndim == 1:
        paths = _partition_paths(arr, m)
    elif arr.ndim == 2:
        paths = _linkage_paths(arr, m)
    else:
        raise ValueError(f"clustering must be a partition, shape ({m},), or a linkage matrix, "
                         f"shape ({m - 1}, 4), for m = {m} players; got shape {arr.shape}")
    groups = np.array([group for group, _ in paths], dtype=np.int64)
    levels = [level for _, path in paths for level in path if level]
    level_start = np.cumsum([0] + [sum(1 for level in path if level) for _, path in paths],
                            dtype=np.int64)
    item_start = np.cumsum([0] + [len(level) for level in levels], dtype=np.int64)
    items = np.array([mask for level in levels for mask in level], dtype=np.int64)
    weights = np.concatenate([_shapley_weights(len(level) + 1) for level in levels] +
                             [np.zeros(0)])
    return groups, level_start, item_start, items, weights


def _partition_paths(arr, m):
    """(group mask, [sibling masks per level]) of each player of the
    partition whose union labels are ``arr``: the other unions, then the
    other members of its own."""
    labels = int_array(arr, "clustering", dtype=None)
    if labels.shape != (m,):
        raise ValueError(f"clustering as a partition must give the union of each of the m = {m} "
                         f"players, shape ({m},); got shape {labels.shape}")
    _, union = np.unique(labels, return_inverse=True)
    members = [np.flatnonzero(union == k) for k in range(union.max() + 1)]
    masks = [int(np.bitwise_or.reduce(1 << u)) for u in members]
    return [(1 << i, [[u for k, u in enumerate(masks) if k != union[i]],
                      [1 << int(p) for p in members[union[i]] if p != i]])
            for i in range(m)]


def _linkage_paths(arr, m):
    """(group mask, [sibling masks per level]) of each player of the binary
    cluster tree of the linkage matrix ``arr``, validated: one sibling per
    level down to the player, or to the cluster of negative distance that
    holds it (its group)."""
    z = float64_array(arr, "clustering")
    if z.shape != (m - 1, 4):
        raise ValueError(f"clustering as a linkage matrix must have shape ({m - 1}, 4) for "
                         f"m = {m} players; got shape {z.shape}")
    if not np.isfinite(z).all():
        raise ValueError("clustering must be finite (a linkage matrix has no NaN or inf)")
    children = z[:, :2].astype(np.int64)
    if (children != z[:, :2]).any():
        raise ValueError("clustering's columns 0 and 1 (the nodes each row joins) must be "
                         "integers")
    mask = [1 << i for i in range(m)]
    joined = set()
    for k, pair in enumerate(children.tolist()):
        if pair[0] == pair[1]:
            raise ValueError(f"clustering row {k} joins node {pair[0]} with itself")
        for child in pair:
            if not 0 <= child < m + k:
                raise ValueError(f"clustering row {k} joins node {child}, which is neither a "
                                 f"player nor an earlier row's cluster (0 <= node < {m + k})")
            if child in joined:
                raise ValueError(f"clustering joins node {child} twice (row {k} and before)")
            joined.add(child)
        mask.append(mask[pair[0]] | mask[pair[1]])
        if z[k, 3] != mask[-1].bit_count():
            raise ValueError(f"clustering[{k}, 3] = {z[k, 3]:g} is not the size of the cluster "
                             f"row {k} makes, {mask[-1].bit_count()} players")
    paths = []
    for i in range(m):
        node, path = len(mask) - 1, []
        while node >= m and z[node - m, 2] >= 0:
            left, right = children[node - m]
            inside, sibling = (left, right) if mask[left] >> i & 1 else (right, left)
            path.append([mask[sibling]])
            node = int(inside)
        paths.append((mask[node], path))
    return paths


def table_from_function(fn, m: int, *, coalitions: str = "mask", chunk: int = 1 << 18,
                        out=None, threads=None) -> np.ndarray:
    r"""Evaluate a value function on all 2**m coalitions.

    .. math:: v[S] = \mathrm{fn}(S), \qquad S = 0, \dots, 2^m - 1

    Parameters
    ----------
    fn : callable
        Either a vectorised Python function called on chunks of coalitions,
        ``fn(masks)`` with ``masks`` a uint64 array (n,) (or ``fn(bools)``
        with a bool matrix (n, m) when ``coalitions="bool"``) returning n
        real values; or an ``@njit`` function ``fn(mask: uint64) -> float``,
        which runs compiled (and split over threads) with no Python calls.
    m : int
        Number of players, 1 <= m <= 30.
    coalitions : {"mask", "bool"}
        How a Python ``fn`` receives coalitions.
    chunk : int
        Coalitions per Python call, at least 1.
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned. None allocates the result.
    threads : int, optional
        Threads to split the work over, at least 1 (default None: all cores).

    Returns
    -------
    ndarray, shape (2**m,), float64
        The coalition table (``out`` if given).

    Raises
    ------
    TypeError
        If ``fn`` is not callable; if ``m``, ``chunk`` or ``threads`` is not an
        integer; if an @njit ``fn`` does not compile for a uint64 mask or does
        not return a real number; if a Python ``fn`` returns values that are not
        real numbers; or if ``out`` is not a float64 numpy array.
    ValueError
        If ``m`` is outside [1, 30]; if ``chunk`` or ``threads`` is below 1; if
        ``coalitions`` is not "mask" or "bool"; if ``fn`` is a stochastic @njit
        ``fn(mask, key)`` (it has no exact table); if a Python ``fn`` does not
        return one value per coalition; or if ``out`` has the wrong shape or is
        not writeable and C-contiguous.
    RuntimeError
        If a Python ``fn`` raises; the message names the coalitions it was
        called on.

    See Also
    --------
    fastcredit.games : the forms a game can take.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> fc.table_from_function(lambda s: np.minimum(np.bitwise_count(s), 2), 3)
    array([0., 1., 1., 2., 1., 2., 2., 2.])
    """
    return _table_from_function(fn, m, coalitions=coalitions, chunk=chunk, out=out,
                                threads=threads)


def _table_from_function(fn, m, *, coalitions="mask", chunk=1 << 18, out=None, threads=None,
                         name="fn"):
    """:func:`table_from_function`, naming the function ``name`` in errors."""
    m = TABLE_PLAYERS.check(m)
    chunk = check_int(chunk, "chunk", lo=1)
    nt = _parallel.n_threads(threads)
    if not callable(fn):
        raise TypeError(f"{name} must be callable, got {type(fn).__name__}")
    game = as_game(fn, m, coalitions=coalitions, name=name)
    if game.stochastic:
        raise ValueError(f"{name} must be deterministic, fn(mask); a stochastic fn(mask, key) "
                         "has no exact table (estimate it with permutation_shapley)")
    n = 1 << m
    res = output(out, (n,))
    if game.kind != CALLABLE:
        from ._jit.games import fill_table
        _parallel.run(lambda a, b: fill_table(fn, res, a, b), n, nt,
                      min_items=_MIN_COALITIONS_PER_THREAD)
        return res
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        masks = np.arange(a, b, dtype=np.uint64)
        arg = masks if game.coalitions == "mask" else masks_to_bool(masks, m)
        res[a:b] = call_value_function(fn, arg, name=name,
                                       where=f"on coalitions {a}..{b - 1}", finite=False)
    return res
