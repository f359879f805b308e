r"""Exact interaction indices of every order, for one game or a batch.

``fc.interactions(v, index, order)`` computes, for every subset S of at most
``order`` players, the interaction index I(S) of the games ``v`` (coalition
tables ``(..., 2**m)``). Index names are shapiq's (1.4.1), and so are the
definitions: each was checked against shapiq's ``ExactComputer`` and the
papers it cites (tests/test_interactions.py).

Output layout
-------------
``values[k]`` has shape ``(..., C(m, k))`` for k = 0..order, the subsets of
size k in lexicographic order (``itertools.combinations(range(m), k)``);
``subset_players(m, k)`` maps positions to players and ``subset_position``
back. Concatenated over k this is shapiq's layout (its ``powerset`` order).

The empty set
-------------
``values[0]`` is the index's own value of the empty set for SII, BII, FBII and
BV (SII(∅) = sum_U a(U)/(|U|+1), BII(∅) and BV(∅) = the mean of v over all
coalitions, FBII(∅) = the intercept of the fit) and the baseline v(∅) for
every other index, as shapiq's ExactComputer reports them. (shapiq renames an
order-1 SII to SV and then reports v(∅); ``fc.interactions(v, "SV")`` does.)

The one transform
-----------------
With a(U) the Moebius transform of v (``fc.moebius``), every *cardinal*
index is a size-weighted sum over supersets,

    I(S) = sum_{U ⊇ S} w(|S|, |U|) a(U),

because a discrete derivative is Δ_S v(T) = sum_{S ⊆ U ⊆ S ∪ T} a(U), so an
index sum_{T ⊆ N∖S} p(|T|) Δ_S v(T) weighs a(U) by
w(s, u) = sum_j C(m-u, j) p(u-s+j). The *generalized values*
GV(S) = sum_{T ⊆ N∖S} p(|T|) (v(T ∪ S) - v(T)) are, with W = T ∪ S,

    GV(S) = sum_{W ⊇ S} p(|W|-|S|) v(W) - sum_{T ∩ S = ∅} p(|T|) v(T).

Both are ``sum_{W ⊇ S} up[|W|] x(W) + sum_{T ∩ S = ∅} down[|T|] x(T)`` for
x = a or x = v. Writing Q = N ∖ W in the first sum, both become one sum over
the subsets Q of N ∖ S of y(Q) = up[m-|Q|] x(N∖Q) + down[|Q|] x(Q): one zeta
(subset-sum) transform of y per subset size s, read at the complements of the
size-s subsets. That is the one compiled kernel (``fc_graded_sums``): O(m 2^m)
per game and size, O(order m 2^m) in all, never a loop over pairs of sets.
The weight tables are computed here exactly (rationals, rounded once), one
function per index:

=========== ===================================================================
index       w(s, u) on a(U), U ⊇ S  (s = |S| >= 1 unless said; k = order)
=========== ===================================================================
Moebius     [u = s]
Co-Moebius  1                       (Co-Moebius(S) = Δ_S v(N∖S) = sum_{U ⊇ S} a(U))
SII         1 / (u - s + 1)         (Grabisch & Roubens 1999; s = 0 too)
BII         2^-(u - s)              (s = 0 too)
CHII        s / u                   (Marichal & Roubens 1999)
STII        [u = s] for s < k; 1 / C(u, k) for s = k   (Sundararajan et al. 2020)
k-SII       sum_{t=s}^{min(k,u)} C(u-s, t-s) B_{t-s} / (u-t+1), B = Bernoulli
            numbers (B_1 = -1/2): shapiq's aggregation of SII (Bordt & von
            Luxburg 2023) folded into the weights
FSII        [u = s] for u <= k; else (-1)^(k-s) s/(k+s) C(k,s) C(u-1,k) / C(u+k-1,k+s)
            (Tsai, Yeh & Ravikumar 2023, Faith-Shap, the closed form of the
            Shapley-kernel least squares with v(∅), v(N) fitted exactly)
FBII        [u = s] for u <= k; else (-1)^(k-s) C(u-s-1, k-s) / 2^(u-s) (s = 0
            too): the uniform least squares is the projection on the Fourier
            characters of degree <= k, rewritten in the Moebius basis
kADD-SHAP   sum_{t=s}^{min(k,u)} C(u-s, t-s) FSII_w(t, u) / (t-s+1): the SII of
            the Shapley-kernel best k-additive game, which is what Pelegrina et
            al.'s (2023) Bernoulli-design least squares returns
SV, BV      SII, BII of order 1
=========== ===================================================================

Generalized values, p(t, s) on T ⊆ N∖S (Marichal 2000; Marichal, Kojadinovic
& Fujimoto 2007): SGV 1/((m-s+1) C(m-s, t)), BGV 2^-(m-s), CHGV
s/((s+t) C(m, s+t)), IGV [t = 0] (v(S) - v(∅)), EGV [t = m-s]
(v(N) - v(N∖S)), JointSV q_t of Harris, Pymar & Rowat (2022), the recursion
q_0 = 1/sum_{j=1}^k C(m,j), q_r = sum_{j=max(r-k,0)}^{r-1} C(r,j) q_j /
sum_{j=1}^{min(k,m-r)} C(m-r,j), computed in rationals.

FSII and kADD-SHAP are the exact solutions of the constrained regressions;
shapiq's ExactComputer solves them with a finite weight 1e8 on v(∅) and v(N)
instead of the constraint, which moves its values by about 1e-9 relative.
``penalty=1e8`` solves shapiq's problem instead, in closed form: a 2 x 2
correction along the fits of the two unit games (see ``_penalise``), one more
zeta transform.

``egalitarian_least_core(v)`` is shapiq's ELC (a convex program, not a
linear one; see its docstring).

Numerics: the cardinal indices sum Moebius coefficients, which grow like
2^(|U|/2) for noisy games, so the absolute rounding error grows with m
(about 1e-10 at m = 20 for a game of unit scale). A non-finite v(S) makes
every Moebius coefficient above S non-finite: inf in v becomes NaN in the
cardinal indices of the subsets below it.
"""
from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import _parallel
from ._backend import kernels, resolve
# the index weights live in their own module, shared with the approximators
from ._index_weights import _CARDINAL, _GENERALIZED, _w_fsii, weight_tables  # noqa: F401
from ._params import INDEX, ORDER, PENALTY, TABLE_PLAYERS
from ._subsets import binomials, combination_rank, combinations
from ._validation import check_int, check_memory, coalition_table, int_array
from .tables import from_moebius

__all__ = ["Interactions", "LeastCore", "egalitarian_least_core", "interactions",
           "subset_players", "subset_position"]

# Games are transformed in chunks of about this many table entries (the
# Moebius coefficients of a chunk stay in cache for all sizes s).
_CHUNK_ENTRIES = 1 << 16
# From this size on, few games are split over threads by subset size.
_SPLIT_SIZES_M = 14
# A thread gets at least this many table entries of a batch.
_MIN_ENTRIES_PER_THREAD = 1 << 15
# A thread keeps its scratch between calls up to this many entries (16 MiB:
# one game of m = 20 and its Moebius coefficients); from this m on, its
# scratch may be larger, and is dropped when the call ends.
_KEPT_SCRATCH_ENTRIES = 1 << 21
_LARGE_SCRATCH_M = 21


@dataclass(frozen=True)
class Interactions:
    """Exact interaction values of a game or a batch of games.

    Returned by :func:`interactions`; ``values[k][..., p]`` is the index of the
    subset ``subset_players(m, k)[p]``.

    Parameters
    ----------
    index : str
        The index (shapiq's name).
    order : int
        The highest order computed (1 for SV and BV).
    m : int
        The number of players.
    values : tuple of ndarray
        ``values[k]``: float64 of shape ``(..., C(m, k))``, k = 0..order, the
        subsets of size k in the order of ``subset_players(m, k)``.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.array([0., 1., 2., 4.])
    >>> res = fc.interactions(np.stack([v, 2 * v]), "BV")
    >>> res
    Interactions(index='BV', order=1, m=2, batch shape (2,))
    >>> res.values[1]
    array([[1.5, 2.5],
           [3. , 5. ]])
    """
    index: str
    order: int
    m: int
    values: tuple

    def __repr__(self) -> str:
        lead = self.values[0].shape[:-1]
        return (f"Interactions(index={self.index!r}, order={self.order}, m={self.m}, "
                f"batch shape {lead})")


@dataclass(frozen=True)
class LeastCore:
    """The egalitarian least core of a game or a batch.

    Returned by :func:`egalitarian_least_core`.

    Parameters
    ----------
    values : ndarray, shape (..., m)
        The allocation x to the players (of the game normalised to v(∅) = 0).
    subsidy : ndarray, shape (...)
        The subsidy e >= 0 it needs: x(S) + e >= v(S) - v(∅) for every
        coalition S other than ∅ and N.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> core = fc.egalitarian_least_core(np.array([0., 1., 2., 4.]))
    >>> core.values, float(core.subsidy)
    (array([2., 2.]), 0.0)
    """
    values: np.ndarray
    subsidy: np.ndarray


# --- subsets ------------------------------------------------------------------

def subset_players(m: int, k: int) -> np.ndarray:
    r"""The subsets of k of the players 0..m-1 in lexicographic order.

    Row p holds the players of the subset at position p of
    ``Interactions.values[k]``: the order of
    ``itertools.combinations(range(m), k)``, :math:`\binom{m}{k}` rows.

    Parameters
    ----------
    m : int
        Number of players, 1 <= m <= 30.
    k : int
        Subset size, 0 <= k <= m.

    Returns
    -------
    ndarray of int64, shape (C(m, k), k)
        The players of each subset, ascending.

    Raises
    ------
    TypeError
        If ``m`` or ``k`` is not an integer.
    ValueError
        If ``m`` is outside [1, 30] or ``k`` outside [0, m], or the array
        needs more memory than is available.

    See Also
    --------
    subset_position : the inverse.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.subset_players(3, 2).tolist()
    [[0, 1], [0, 2], [1, 2]]
    """
    m = TABLE_PLAYERS.check(m)
    k = check_int(k, "k", lo=0, hi=m)
    count = math.comb(m, k)
    check_memory(count * k * 8, f"subset_players({m}, {k}) (an int64 array of {count:,} x {k})")
    return combinations(m, k)


@functools.lru_cache(maxsize=128)
def _subset_masks(m, k):
    """uint64 masks of the k-subsets in lexicographic order (cached; never
    written to)."""
    players = subset_players(m, k)
    return np.bitwise_or.reduce(np.left_shift(np.uint64(1), players.astype(np.uint64)), axis=1,
                                initial=np.uint64(0))


def subset_position(players, m: int) -> np.ndarray:
    r"""Positions of subsets in the lexicographic order of :func:`subset_players`.

    For a subset :math:`s_1 < \dots < s_k` of 0..m-1 the position is its
    combinatorial rank among the k-subsets in lexicographic order.

    Parameters
    ----------
    players : array_like of int, shape (..., k)
        Each row: the players of one subset, ascending, without duplicates,
        in 0..m-1.
    m : int
        The number of players, 1 <= m <= 30.

    Returns
    -------
    ndarray of int64, shape (...)
        The position p with ``subset_players(m, k)[p] == row``.

    Raises
    ------
    TypeError
        If ``m`` is not an integer, or ``players`` is not an integer array.
    ValueError
        If ``m`` is outside [1, 30]; if ``players`` is a scalar or holds more
        than m players per row; or if a row has a player outside 0..m-1, or is
        not strictly ascending.

    See Also
    --------
    subset_players : the inverse.

    Examples
    --------
    >>> import fastcredit as fc
    >>> int(fc.subset_position([1, 2], 3))
    2
    >>> fc.subset_position([[0, 1], [0, 2]], 3)
    array([0, 1])
    """
    m = TABLE_PLAYERS.check(m)
    arr = int_array(players, "players")
    if arr.ndim == 0:
        raise ValueError("players must have a last axis holding the players of each subset, "
                         "got a scalar")
    k = arr.shape[-1]
    if k > m:
        raise ValueError(f"players must hold at most m = {m} players per subset, got {k}")
    rows = arr.reshape(math.prod(arr.shape[:-1]), k)
    bad = np.flatnonzero(((rows < 0) | (rows >= m)).any(axis=1))
    if bad.size:
        raise ValueError(f"players must be in 0..{m - 1}: subset {int(bad[0])} is "
                         f"{rows[bad[0]].tolist()}")
    bad = np.flatnonzero((np.diff(rows, axis=1) <= 0).any(axis=1))
    if bad.size:
        raise ValueError(f"players must be sorted ascending without duplicates: subset "
                         f"{int(bad[0])} is {rows[bad[0]].tolist()}")
    return combination_rank(rows, m, binomials(m, k)).reshape(arr.shape[:-1])


# --- the computation ----------------------------------------------------------

def interactions(v, index: str = "SII", order: int = 2, *, penalty=None, backend=None,
                 threads=None) -> Interactions:
    r"""Exact interaction index of every order up to ``order``.

    With :math:`a(U)` the Moebius transform of v, every cardinal index is a
    size-weighted sum over supersets,

    .. math:: I(S) = \sum_{U \supseteq S} w(|S|, |U|)\, a(U),

    the weights of each index given in the module docstring; the others
    (k-SII, STII, FSII, FBII, kADD-SHAP, JointSV) are built from these.

    Cost: O(order m 2**m) per game (one zeta transform per subset size) and
    memory for the Moebius coefficients plus one 2**m scratch per thread.

    Parameters
    ----------
    v : array_like, shape (..., 2**m)
        Coalition tables (float64 or float32), any leading batch shape,
        1 <= m <= 30.
    index : str
        One of shapiq's names: "SII", "BII", "CHII", "Co-Moebius", "SGV",
        "BGV", "CHGV", "IGV", "EGV", "k-SII", "STII", "FSII", "FBII",
        "kADD-SHAP", "JointSV", "Moebius", "SV", "BV" (definitions in the
        module docstring).
    order : int
        Highest order, 1 <= order <= m. SV and BV are values: their order is
        1 whatever is asked (as in shapiq).
    penalty : float, optional
        FSII and kADD-SHAP only: None (default) fits v(∅) and v(N) exactly,
        as the indices are defined; a weight >= 1 puts them in the least
        squares with that weight instead. shapiq's ExactComputer uses 1e8,
        which moves its values by about 1e-9 relative: ``penalty=1e8``
        reproduces them (to rounding).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one for the kernel (see
        :func:`fastcredit.available_backends`).
    threads : int, optional
        Threads to split the work over (games of a batch, or the subset sizes
        of one large game), at least 1; default all cores.

    Returns
    -------
    Interactions
        ``values[k]`` of shape ``(..., C(m, k))`` float64, k = 0..order.

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 30; if ``index``
        is not one of the names above; if ``order`` is below 1 or above m; if
        ``penalty`` is below 1, infinite or NaN, or is given for an index other
        than FSII and kADD-SHAP; if ``threads`` is below 1; if ``backend`` is
        not None, "c" or "numba" (or is unavailable here); or if the result
        needs more memory than is available.
    TypeError
        If ``v`` does not hold real numbers (or is a float dtype other than
        float64/float32); if ``order`` or ``threads`` is not an integer; or if
        ``penalty`` is not a real number.

    See Also
    --------
    egalitarian_least_core : the ELC, shapiq's one non-cardinal index.
    pair_interactions : order-2 interactions of the singletons only.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.array([0., 1., 2., 4.])        # v({0,1}) = 4
    >>> res = fc.interactions(v, "SII", order=2)
    >>> res.values[1], res.values[2]          # Shapley values, then a({0,1})
    (array([1.5, 2.5]), array([1.]))
    """
    flat, m, lead = coalition_table(v)
    index = INDEX.check(index)
    order = ORDER.check(order)
    if order > m:
        raise ValueError(f"order must be at most the number of players m = {m}, got {order}")
    if index in ("SV", "BV"):
        order = 1
    if penalty is not None:
        penalty = PENALTY.check(penalty)
        if index not in ("FSII", "kADD-SHAP"):
            raise ValueError(f"penalty applies to FSII and kADD-SHAP only, not to {index}")
    nt = _parallel.n_threads(threads)
    values = _exact(flat, m, index, order, nt, backend)
    if penalty is not None and m >= 2 and flat.shape[0]:
        _penalise(values, flat, m, index, order, penalty, nt, backend)
    # one game's flat arrays are its result as they are (a view each would
    # cost ~1 us of a 40 us call at m = 12)
    return _result(index, order, m, _with_lead(values, lead, m) if lead else tuple(values))


def _result(index, order, m, values):
    """``Interactions(index, order, m, values)``, its fields written into a new
    instance's dict: a frozen dataclass's ``__init__`` sets each through
    ``object.__setattr__`` (0.49 -> 0.22 us, of a 40 us call at m = 12)."""
    res = object.__new__(Interactions)
    fields = res.__dict__
    fields["index"], fields["order"], fields["m"], fields["values"] = index, order, m, values
    return res


def _with_lead(values, lead, m):
    """The flat arrays of _exact reshaped to ``lead + (C(m, k),)``."""
    return tuple([val.reshape(lead + (math.comb(m, k),)) for k, val in enumerate(values)])


@functools.lru_cache(maxsize=256)
def _plan(index, m, order):
    """What _exact needs of an index at (m, order), made once (its arrays
    are cached and never written to): whether the sums read the Moebius
    transform, the sizes in the order they are computed (the empty set, one
    direct sum, last, so that threads splitting the sizes each get whole
    transforms), each size's (up, down) weight rows and subset masks (size
    0 when the empty set has its own), the subsets' counts per size and
    their sum, whether the empty set has its own weights (else it is v(∅)),
    the games a chunk transforms and a thread's least share of games."""
    source, up, down, own_empty = weight_tables(index, m, order)
    sizes = tuple(range(1, order + 1)) + ((0,) if own_empty else ())
    no_down = np.zeros(0)
    rows = tuple((up[s], no_down if down is None else down[s]) for s in range(order + 1))
    masks = tuple(_subset_masks(m, s) if s in sizes else None for s in range(order + 1))
    counts = tuple(math.comb(m, s) for s in range(order + 1))
    return (source == "moebius", sizes, rows, masks, counts, sum(counts), own_empty,
            max(1, _CHUNK_ENTRIES >> m), max(1, _MIN_ENTRIES_PER_THREAD >> m))


@functools.lru_cache(maxsize=None)
def _kernels(graded_backend, moebius_backend):
    """The graded sums and the Moebius transform (None) of resolved backends
    (one cached call, not two module look-ups: ~0.3 us of a small call)."""
    return (kernels("interactions", graded_backend).graded_sums,
            kernels("tables", moebius_backend).moebius if moebius_backend else None)


class _KeptScratch(threading.local):
    """This thread's last scratch: a work row and ``rows`` rows of Moebius
    coefficients (None for 0) for games of ``m`` players."""
    m = None
    rows = 0
    work = None
    buf = None


_kept = _KeptScratch()


def _scratch(m, rows):
    """A thread's scratch for games of m players: a (2**m,) work row and a
    buffer of at least ``rows`` rows of 2**m Moebius coefficients (None when
    ``rows`` is 0 and none is kept). Never read before written, never
    returned. A thread keeps its last ones, up to _KEPT_SCRATCH_ENTRIES
    between calls (larger ones until _drop_large_scratch): fresh ones cost
    ~1 us of a 40 us call at m = 12 (the allocation, and the kernels then
    writing memory out of the cache), ~3.8 ms of a 15 ms call at m = 20 (the
    pages the system maps on first write)."""
    kept = _kept
    if kept.m == m and kept.rows >= rows:
        return kept.work, kept.buf
    work = kept.work if kept.m == m else np.empty(1 << m)
    buf = np.empty((rows, 1 << m)) if rows else None
    if (rows + 1) << m > _KEPT_SCRATCH_ENTRIES:
        # mapped in order first (~30 ms for 256 MB): the kernels' own first
        # writes took ~0.2 s more at m = 24 (AMD EPYC Zen 4)
        for fresh in (buf,) if work is kept.work else (work, buf):
            if fresh is not None:
                fresh.fill(0.0)
    kept.m, kept.rows, kept.work, kept.buf = m, rows, work, buf
    return work, buf


def _drop_large_scratch():
    """Forget this thread's scratch if it is larger than a thread keeps
    between calls."""
    kept = _kept
    if kept.m is not None and (kept.rows + 1) << kept.m > _KEPT_SCRATCH_ENTRIES:
        kept.m, kept.rows, kept.work, kept.buf = None, 0, None, None


def _exact(flat, m, index, order, nt, backend):
    """The values of every size, flat (n_games * C(m, s),) each, game by game
    (the kernels' layout: one game's arrays are its result as they are)."""
    moebius, sizes, rows, masks, counts, per_game, own_empty, step, min_games = \
        _plan(index, m, order)
    graded, to_moebius = _kernels(resolve("interactions.graded", backend),
                                  resolve("tables.moebius", backend) if moebius else None)

    n_games = flat.shape[0]
    # the result, and unless this thread holds scratch for m already, a row
    # per thread that gets work and the Moebius coefficients (reading the
    # system's figure took 0.2 ms of a 15 ms call at m = 20); under
    # check_memory's 1 MiB not even the call (~0.4 us of a 35 us call at
    # m = 12, with its message's function)
    entries = n_games * per_game
    if _kept.m != m:
        entries += (min(nt, max(n_games, order + 1)) + (to_moebius is not None)) << m
    if entries >= 1 << 17:
        check_memory(8 * entries, f"interactions of v ({n_games:,} games of m = {m} players "
                                  f"up to order {order})")
    values = [np.empty(n_games * c) for c in counts]
    if not own_empty:   # v(∅); one game's by scalar indexing, a third of a slice's cost
        if n_games == 1:
            values[0][0] = flat[0, 0]
        else:
            values[0][:] = flat[:, 0]
    if n_games == 0 or not sizes:
        return values
    if nt == 1 or n_games < 2 * min_games and (n_games >= nt or m < _SPLIT_SIZES_M
                                                or len(sizes) == 1):
        # one chunk: no thread, no closure, no tuple of the arguments
        _sum_games(graded, to_moebius, flat, m, sizes, rows, masks, counts, values, step, 0,
                   n_games)
        return values
    sums = (graded, to_moebius, flat, m, sizes, rows, masks, counts, values, step)
    if n_games < nt and m >= _SPLIT_SIZES_M and len(sizes) > 1:
        _sum_sizes(*sums, nt)
    else:
        _parallel.run(lambda a, b: _sum_games(*sums, a, b), n_games, nt, min_items=min_games)
    return values


def _sum_games(graded, to_moebius, flat, m, sizes, rows, masks, counts, values, step, a, b):
    """Games a..b of _exact, in chunks of ``step`` games: the Moebius
    transform of a chunk (cardinal indices), then each size's graded sums
    into the chunk's part of ``values``. The kernel calls are written out,
    not through a helper: a Python call per subset size is ~0.2 us of a
    40 us call at m = 12."""
    work, buf = _scratch(m, min(step, b - a) if to_moebius else 0)
    try:
        for c0 in range(a, b, step):
            c1 = min(b, c0 + step)
            x = flat[c0:c1]
            if to_moebius:
                x = buf[:c1 - c0]
                to_moebius(flat[c0:c1], x)
            for s in sizes:
                graded(x, *rows[s], masks[s], work, values[s][c0 * counts[s]:c1 * counts[s]])
    finally:
        if m >= _LARGE_SCRATCH_M:
            _drop_large_scratch()


def _sum_sizes(graded, to_moebius, flat, m, sizes, rows, masks, counts, values, step, nt):
    """Each of a few large games of _exact, its subset sizes split over
    ``nt`` threads (each with a scratch row) after its Moebius transform."""
    for g in range(flat.shape[0]):
        x = flat[g:g + 1]
        if to_moebius:      # the main thread's buffer, read by every thread
            x = _scratch(m, 1)[1][:1]
            to_moebius(flat[g:g + 1], x)

        def by_sizes(i, j, x=x, g=g):
            work = _scratch(m, 0)[0]
            try:
                for s in sizes[i:j]:
                    graded(x, *rows[s], masks[s], work,
                           values[s][g * counts[s]:(g + 1) * counts[s]])
            finally:
                _drop_large_scratch()

        _parallel.run(by_sizes, len(sizes), nt)


# --- shapiq's penalised FSII and kADD-SHAP ---------------------------------------
# With weight M on v(∅) and v(N) instead of the two constraints, the fit moves
# within the k-additive games along the fits g_∅, g_N of the unit games e_∅,
# e_N (the constrained fit is linear in the target and the two pinned
# values): f_M = f* + δ_∅ g_∅ + δ_N g_N, and δ minimises the interior loss
# plus M |δ|², a 2 x 2 system: (H + M I) δ = q with q_j = <v - f*, g_j> and
# H_jl = <g_j, g_l> (interior Shapley-kernel inner products). g_∅, g_N are
# symmetric, so everything but q is a function of sizes; q needs the
# residual v - f* summed by coalition size (one zeta transform). kADD-SHAP has
# no intercept (its ∅ row is zero): only δ_N, added through the SII of g_N.


@functools.lru_cache(maxsize=64)
def _unit_fits(m, order):
    """Per size: the FSII coefficients G_∅(t), G_N(t) (t = 0..order) of the
    unit games, their fitted games g(c) (c = 0..m), the interior kernel
    weights mu(c) and the SII of g_N by size (for kADD-SHAP)."""
    g_coef = {j: [sum(math.comb(m - t, u - t) * _w_fsii(m, order, t, u) * a(u)
                      for u in range(t, m + 1)) for t in range(order + 1)]
              for j, a in (("empty", lambda u: (-1) ** u), ("full", lambda u: int(u == m)))}
    fitted = {j: [sum(math.comb(c, t) * g[t] for t in range(min(order, c) + 1))
                  for c in range(m + 1)] for j, g in g_coef.items()}
    mu = [Fraction(0)] + [Fraction(1, (m - 1) * math.comb(m - 2, c - 1))
                          for c in range(1, m)] + [Fraction(0)]
    sii_full = [sum(math.comb(m - s, t - s) * g_coef["full"][t] * Fraction(1, t - s + 1)
                    for t in range(s, order + 1)) for s in range(order + 1)]
    as_float = lambda xs: np.array([float(x) for x in xs])  # noqa: E731
    return ({j: as_float(g) for j, g in g_coef.items()},
            {j: as_float(g) for j, g in fitted.items()}, as_float(mu), as_float(sii_full))


def _penalise(values, flat, m, index, order, penalty, nt, backend):
    n_games = flat.shape[0]
    exact = values if index == "FSII" else _exact(flat, m, "FSII", order, nt, backend)
    coef, fitted, mu, sii_full = _unit_fits(m, order)
    n = 1 << m
    check_memory(2 * flat.shape[0] * n * 8, f"the penalised fit of v ({flat.shape[0]:,} games "
                                            f"of m = {m} players)")
    b = np.zeros((flat.shape[0], n))
    for s in range(order + 1):
        b[:, _subset_masks(m, s).astype(np.int64)] = exact[s].reshape(n_games, -1)
    resid = flat - from_moebius(b, threads=nt, backend=backend)
    size = np.bitwise_count(np.arange(n))
    by_size = np.zeros((flat.shape[0], m + 1))
    for c in range(1, m):
        by_size[:, c] = resid[:, size == c].sum(axis=1)
    counts = np.array([math.comb(m, c) for c in range(m + 1)], dtype=np.float64)
    keys = ("empty", "full") if index == "FSII" else ("full",)
    q = np.stack([by_size @ (mu * fitted[j]) for j in keys], axis=1)
    h = np.array([[np.sum(counts * mu * fitted[i] * fitted[j]) for j in keys] for i in keys])
    delta = np.linalg.solve(h + penalty * np.eye(len(keys)), q.T).T
    for s in range(1, order + 1):
        if index == "FSII":
            shift = delta[:, 0] * coef["empty"][s] + delta[:, 1] * coef["full"][s]
        else:
            shift = delta[:, 0] * sii_full[s]
        values[s].reshape(n_games, -1)[:] += shift[:, None]


# --- the egalitarian least core -------------------------------------------------

#: Most players of fc.egalitarian_least_core (one constraint per coalition).
ELC_MAX_PLAYERS = 16


def _least_distance(g, h):
    """argmin ||x|| subject to g x >= h, by Lawson & Hanson's reduction of
    least-distance programming to non-negative least squares (Solving Least
    Squares Problems, 1974, ch. 23): finite and exact up to rounding."""
    from scipy.optimize import nnls
    n = g.shape[1]
    e = np.vstack([g.T, h[None, :]])
    f = np.zeros(n + 1)
    f[n] = 1.0
    u = nnls(e, f, maxiter=50 * e.shape[1])[0]
    r = e @ u - f
    return -r[:n] / r[n]


def _egalitarian_least_core_of(d, m):
    """(x, e) for one normalised game d (d(∅) = 0): the least core's subsidy
    e* by an LP, then a golden-section search over e in [e*, e_max] of the
    convex ||x(e)|| + e, x(e) the least-norm allocation with subsidy e (from
    e_max on, the equal split, which only grows the objective)."""
    from scipy.optimize import linprog
    n = 1 << m
    c = float(d[-1])
    inner = np.arange(1, n - 1)
    a = ((inner[:, None] >> np.arange(m)) & 1).astype(np.float64)
    b = d[inner]
    lp = linprog(np.r_[np.zeros(m), 1.0], A_ub=-np.hstack([a, np.ones((n - 2, 1))]), b_ub=-b,
                 A_eq=np.r_[np.ones(m), 0.0][None], b_eq=[c],
                 bounds=[(None, None)] * m + [(0, None)], method="highs")
    if lp.status != 0:
        raise ValueError(f"the least core LP failed: {lp.message}")
    g = np.vstack([a, np.ones((1, m)), -np.ones((1, m))])

    def allocation(e):
        return _least_distance(g, np.r_[b - e, c, -c])

    def objective(e):
        return float(np.linalg.norm(allocation(e))) + e

    lo = float(lp.x[m])
    hi = max(lo, float(np.max(b - a.sum(1) * c / m, initial=0.0)))
    ratio = (math.sqrt(5) - 1) / 2
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1, f2 = objective(x1), objective(x2)
    while hi - lo > 1e-13 * max(1.0, abs(hi)):
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - ratio * (hi - lo)
            f1 = objective(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + ratio * (hi - lo)
            f2 = objective(x2)
    e = min((objective(float(lp.x[m])), float(lp.x[m])), (objective((lo + hi) / 2), (lo + hi) / 2))[1]
    return allocation(e), e


def egalitarian_least_core(v) -> LeastCore:
    r"""The egalitarian least core (ELC) as shapiq's ExactComputer defines it.

    For the game normalised to v(∅) = 0, the allocation x and subsidy e that

    .. math:: \min_{x, e} \; \|x\|_2 + e \quad \text{s.t.} \quad
              x(S) + e \ge v(S) - v(\emptyset) \ (S \ne \emptyset, N),\quad
              x(N) = v(N) - v(\emptyset),\quad e \ge 0

    (shapiq 1.4.1, after Yan & Procaccia 2021). This is not a linear
    program: with the norm in the objective it trades subsidy for equality,
    so e can exceed the least core's subsidy e* (the lexicographic ELC of Yan
    & Procaccia, minimal e first, then minimal norm, would keep e = e*).
    shapiq hands it to SLSQP (tolerance about 1e-6, its x off the optimum by
    up to about 3e-4 at m = 8); here e* comes from an LP
    (``scipy.optimize.linprog``, HiGHS), the least-norm allocation for a
    given e from non-negative least squares (exact), and e from a golden
    section search of the convex objective, so x is optimal to about 1e-8
    and the objective is never above shapiq's. Unlike shapiq, the subsidy is
    reported as computed (shapiq rounds one below 1e-6 to 0).

    Parameters
    ----------
    v : array_like, shape (..., 2**m)
        Coalition tables, 1 <= m <= 16 (one constraint per coalition).

    Returns
    -------
    LeastCore
        ``values`` (..., m) and ``subsidy`` (...), float64.

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 16; if a game
        (or v - v(∅)) is not finite; or if the least-core LP fails.
    TypeError
        If ``v`` does not hold real numbers (or is a float dtype other than
        float64/float32).

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> glove = np.array([0., 0., 0., 1., 0., 1., 0., 1.])  # L = {0}, R = {1, 2}
    >>> core = fc.egalitarian_least_core(glove)
    >>> core.values.round(4), float(core.subsidy.round(4))
    (array([0.5442, 0.2279, 0.2279]), 0.2279)
    """
    flat, m, lead = coalition_table(v, max_m=ELC_MAX_PLAYERS)
    values = np.empty((flat.shape[0], m))
    subsidy = np.empty(flat.shape[0])
    for g, game in enumerate(flat):
        d = game.astype(np.float64) - float(game[0])
        if not np.isfinite(d).all():
            raise ValueError(f"v must be finite for the least core (and v - v(∅) too): game "
                             f"{g} is not")
        scale = float(np.abs(d).max())
        if m == 1 or scale == 0.0:
            values[g], subsidy[g] = d[-1] / m, 0.0
            continue
        # the program is homogeneous: solve the game scaled to max |d| = 1
        x, e = _egalitarian_least_core_of(d / scale, m)
        values[g], subsidy[g] = x * scale, e * scale
    return LeastCore(values=values.reshape(lead + (m,)), subsidy=subsidy.reshape(lead))
