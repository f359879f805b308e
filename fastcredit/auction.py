r"""Auction replay: coalition tables from cached candidate pools.

For each request, m retrieval actions each retrieved a list of candidate ad
instances ``(ad_id, score, value[, prerank])``. Replaying the downstream
merge -> dedup -> rank -> top-N auction for each of the 2**m subsets of
actions gives the request's coalition table y(S), ready for exact credit
(:func:`fastcredit.shapley` and friends).

Semantics (docs/design.md, "Auction replay"). The *pool* of a set S of actions is
their instances deduplicated by ad_id: an ad's mask is the OR of the actions
of S that retrieved it; its score, value and prerank are those of its
highest-score instance (ties: lowest action, then first listed). The
*pipeline* on a pool: with ``capacity`` P keep the P ads of highest prerank
(ties: ad_id ascending); rank by score descending (ties: ad_id ascending);
drop ads with score < ``reserve``; the first ``slots`` ranked ads win and earn

* ``pricing="first"``: their value;
* ``pricing="gsp"``: :math:`\min(s, \max(r, s_{next}))`, with :math:`s_{next}`
  the score of the next ranked ad of that pool (the reserve r when none).

:math:`y(S)` is the sum of the winners' earnings; :math:`y(\emptyset) = 0`.
``mode="rerun"`` runs the whole pipeline on the pool of S's actions only;
``mode="filter"`` runs it once on the pool of all m actions and sums the
cached earnings of the first ``slots`` ranked ads whose mask meets S.
With one score per ad, no capacity and first pricing the two modes agree.

Cost. Without capacity a request costs one pass over its instances, plus
O(2**m * m * slots) for all coalitions at once: rerun mode cuts each action
to its best ``slots`` (+1 for GSP) distinct ads, filter mode first finds
every ad's best score (a hash pass) and cuts each action to its best
``slots`` ads by that score; both cuts provably keep every ad that can win
or price any coalition (proofs in csrc/auction.c). With capacity an ad that
never wins can still take a capacity place: nothing is cut and each
coalition costs O(n log P) for n candidates.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _constants, _parallel
from ._backend import kernels, resolve
from ._params import ACTIONS, CAPACITY, MODE, PRICING, RESERVE, SLOTS
from ._validation import (check_memory, csr_offsets, float64_array, frozen, int_array, output,
                          owned, real_array)

__all__ = ["Pools", "auction_replay", "auction_winners", "AuctionWinners", "MAX_ACTIONS"]

#: Most actions per request (tables of 2**16 coalitions).
MAX_ACTIONS = _constants.AUCTION_MAX_ACTIONS
_PRICING = {"first": _constants.PRICING_FIRST, "gsp": _constants.PRICING_GSP}
_MODE = {"filter": _constants.MODE_FILTER, "rerun": _constants.MODE_RERUN}
# Requests per thread below which splitting a replay is not worth a thread.
_MIN_REQUESTS_PER_THREAD = 256


class Pools:
    """Cached candidate pools of a batch of requests, CSR over (request, action).

    Instances of action ``i`` of request ``r`` are
    ``x = offsets[r*m + i] .. offsets[r*m + i + 1] - 1`` of the flat arrays.

    Float arrays are stored as float64 (float32 input is converted once).
    The instance owns what it stores: an array that may share memory with
    the caller's is copied (a converted one already is a new array), and
    every stored array is read-only, so what was validated here, once, is
    what every replay reads; errors name the first offending request.

    Parameters
    ----------
    offsets : array_like of int, shape (B*m + 1,)
        Non-decreasing, starting at 0 and ending at the number of instances.
    ad_id : array_like of int, shape (n,)
        Ad of each instance (any int64; duplicates within and across actions
        are allowed and deduplicated by the replay).
    score : array_like of float, shape (n,)
        Ranking score (e.g. eCPM = bid x pCTR); must be finite.
    value : array_like of float, shape (n,)
        What the instance earns when it wins at first price; NaN propagates.
    m : int
        Actions per request, 1 <= m <= 16.
    prerank : array_like of float, shape (n,), optional
        Pre-ranking score used by ``capacity``; finite. Default: the score.

    Attributes
    ----------
    offsets, ad_id, score, value, prerank : ndarray
        The validated read-only arrays (int64, int64, float64, float64, and
        float64 or None).
    m : int
        Actions per request.
    n_requests : int
        Number of requests B.

    Raises
    ------
    ValueError
        If ``m`` is outside [1, 16]; if ``ad_id`` is not 1-D, or ``score``,
        ``value`` or ``prerank`` does not have its shape; if ``offsets`` is not
        of shape (B*m + 1,), does not start at 0, decreases, or does not end
        at the number of instances; if a score or prerank is not finite; or
        if the copies need more memory than is available.
    TypeError
        If ``m`` is not an integer; if ``offsets`` or ``ad_id`` is not an
        integer array; or if ``score``, ``value`` or ``prerank`` is not a
        float64, float32, integer or bool array.

    Examples
    --------
    >>> import fastcredit as fc
    >>> pools = fc.Pools([0, 2, 4], ad_id=[7, 8, 7, 9], score=[3., 1., 2., 2.5],
    ...                  value=[1., .5, 1., 2.], m=2)
    >>> pools.n_requests, pools.m
    (1, 2)
    """

    __slots__ = ("offsets", "ad_id", "score", "value", "prerank", "m")

    def __init__(self, offsets, ad_id, score, value, m: int = 5, prerank=None):
        self._fill(offsets, ad_id, score, value, m, prerank, adopt=False)

    @classmethod
    def _adopt(cls, offsets, ad_id, score, value, m: int, prerank=None,
               finite: bool = False) -> "Pools":
        """Pools over arrays that nothing else will write (new arrays the
        library made, or views of another Pools' arrays): validated as by the
        constructor, but not copied. ``finite``: the kernel that wrote score
        and prerank counted none that is not finite, so they are not read
        again to check it."""
        pools = object.__new__(cls)
        pools._fill(offsets, ad_id, score, value, m, prerank, adopt=True, finite=finite)
        return pools

    def __reduce__(self):
        # unpickled arrays are new and writeable: adopt them, read-only again
        return Pools._adopt, (self.offsets, self.ad_id, self.score, self.value, self.m,
                              self.prerank)

    def _fill(self, offsets, ad_id, score, value, m, prerank, adopt, finite=False):
        m = ACTIONS.check(m)
        ad = int_array(ad_id, "ad_id")
        if ad.ndim != 1:
            raise ValueError(f"ad_id must be 1-D, got shape {ad.shape}")
        n = ad.shape[0]
        given = {"ad_id": ad_id, "score": score, "value": value, "prerank": prerank,
                 "offsets": offsets}
        arrays = {"ad_id": ad}
        for name in ("score", "value", "prerank"):
            if given[name] is None and name == "prerank":
                continue
            arr = float64_array(given[name], name)
            if arr.shape != (n,):
                raise ValueError(f"{name} must have shape ({n},) like ad_id, got {arr.shape}")
            arrays[name] = arr
        off = int_array(offsets, "offsets")
        if off.ndim != 1 or off.shape[0] < 1 or (off.shape[0] - 1) % m:
            raise ValueError(f"offsets must have shape (B*m + 1,) for m = {m}, got {off.shape}")
        arrays["offsets"] = off
        # the checks below read the arrays the replays will read, never the
        # caller's, which could change after them
        for name, arr in arrays.items():
            arrays[name] = arr if adopt else owned(arr, given[name], f"{name} (the copy "
                                                   f"Pools keeps of its {arr.size:,} entries)")
        off = csr_offsets(arrays["offsets"], off.shape[0] - 1, n, values="instances",
                          row_label=lambda j: f"request {j // m} (action {j % m})")
        for name in ("score", "prerank"):
            # a finite sum proves every term finite in one pass (it is rarely
            # not, and then an overflow is told apart by the search)
            if name not in arrays or finite:
                continue
            with np.errstate(over="ignore", invalid="ignore"):
                total = np.add.reduce(arrays[name])
            if not np.isfinite(total):
                bad = np.flatnonzero(~np.isfinite(arrays[name]))
                if bad.size:
                    x = int(bad[0])
                    row = int(np.searchsorted(off, x, side="right")) - 1
                    raise ValueError(f"{name} must be finite: request {row // m} (action "
                                     f"{row % m}) has {name}[{x}] = {arrays[name][x]}")
        self.offsets = frozen(off)
        self.ad_id = frozen(arrays["ad_id"])
        self.score = frozen(arrays["score"])
        self.value = frozen(arrays["value"])
        self.prerank = frozen(arrays["prerank"]) if "prerank" in arrays else None
        self.m = m  # last: it marks the instance as complete (see __setattr__)

    def __setattr__(self, name, value):
        if hasattr(self, "m"):
            raise AttributeError("Pools are immutable")
        object.__setattr__(self, name, value)

    @property
    def n_requests(self) -> int:
        """Number of requests B."""
        return (self.offsets.shape[0] - 1) // self.m

    def __len__(self) -> int:
        return self.n_requests

    def __repr__(self) -> str:
        return (f"Pools(n_requests={self.n_requests}, m={self.m}, "
                f"instances={self.ad_id.shape[0]}, prerank={self.prerank is not None})")

    @classmethod
    def from_padded(cls, ad_id, score, value, prerank=None) -> "Pools":
        """Pools from padded arrays of shape (B, m, K).

        Slot k of action i of request r holds one instance; ``ad_id < 0`` marks
        padding, whose score, value and prerank are ignored.

        Parameters
        ----------
        ad_id : array_like of int, shape (B, m, K)
            Ad of each instance, negative for padding.
        score : array_like of float, shape (B, m, K)
            Ranking score; finite where ``ad_id >= 0``.
        value : array_like of float, shape (B, m, K)
            First-price earnings of each instance.
        prerank : array_like of float, shape (B, m, K), optional
            Pre-ranking score used by ``capacity``. Default: the score.

        Returns
        -------
        Pools
            The CSR pools of the non-padding instances, m = ``ad_id.shape[1]``.

        Raises
        ------
        ValueError
            If ``ad_id`` is not 3-D; if ``score``, ``value`` or ``prerank`` does not
            have its shape; if m is above 16; or if a kept score or prerank is not
            finite.
        TypeError
            If ``ad_id`` is not an integer array, or ``score``, ``value`` or
            ``prerank`` is not a float64, float32, integer or bool array.

        Examples
        --------
        >>> import fastcredit as fc, numpy as np
        >>> ad = np.array([[[7, 8], [7, -1]]])             # action 1 has one ad
        >>> pools = fc.Pools.from_padded(ad, [[[3., 1.], [2., 0.]]], [[[1., .5], [1., 0.]]])
        >>> pools.offsets, pools.ad_id
        (array([0, 2, 3]), array([7, 8, 7]))
        """
        ad = int_array(ad_id, "ad_id")
        if ad.ndim != 3:
            raise ValueError(f"ad_id must have shape (B, m, K), got {ad.shape}")
        keep = ad >= 0
        flat = {}
        for name, x in (("score", score), ("value", value), ("prerank", prerank)):
            if x is None and name == "prerank":
                continue
            arr = real_array(x, name)
            if arr.shape != ad.shape:
                raise ValueError(f"{name} must have shape {ad.shape} like ad_id, got {arr.shape}")
            flat[name] = arr[keep]
        offsets = np.zeros(ad.shape[0] * ad.shape[1] + 1, dtype=np.int64)
        np.cumsum(keep.sum(axis=2).ravel(), out=offsets[1:])
        # the boolean gathers are new arrays: nothing to copy
        return cls._adopt(offsets, ad[keep], flat["score"], flat["value"], m=ad.shape[1],
                          prerank=flat.get("prerank"))


@dataclass(frozen=True)
class AuctionWinners:
    """Tables with the winners of every coalition (see :func:`auction_winners`).

    Parameters
    ----------
    table : ndarray, shape (B, 2**m), float64
        The coalition tables of :func:`auction_replay`.
    ad_id : ndarray, shape (B, 2**m, slots), int64
        Winners' ad ids in rank order, -1 padded.
    earnings : ndarray, shape (B, 2**m, slots), float64
        Their earnings, 0.0 padded; ``earnings.sum(-1) == table`` up to
        rounding.

    Examples
    --------
    >>> import fastcredit as fc
    >>> pools = fc.Pools([0, 2, 4], ad_id=[7, 8, 7, 9], score=[3., 1., 2., 2.5],
    ...                  value=[1., .5, 1., 2.], m=2)
    >>> won = fc.auction_winners(pools, slots=2)
    >>> won.ad_id[0, 3], won.earnings[0, 3]     # coalition {0, 1}: ads 7 and 9
    (array([7, 9]), array([1., 2.]))
    >>> won.table
    array([[0. , 1.5, 3. , 3. ]])
    """
    table: np.ndarray
    ad_id: np.ndarray
    earnings: np.ndarray


def _options(pools, slots, reserve, capacity, pricing, mode):
    if not isinstance(pools, Pools):
        raise TypeError(f"pools must be a fastcredit.Pools, got {type(pools).__name__}")
    slots = SLOTS.check(slots)
    reserve = RESERVE.check(reserve)
    capacity = CAPACITY.check(capacity) or 0
    pricing = _PRICING[PRICING.check(pricing)]
    mode = _MODE[MODE.check(mode)]
    return slots, reserve, capacity, pricing, mode


def _run(pools, slots, reserve, capacity, pricing, mode, table, win_ad, win_earn, threads,
         backend):
    impl = kernels("auction", resolve("auction.replay", backend)).replay
    prerank = pools.prerank if pools.prerank is not None else np.empty(0)

    def part(a, b):
        impl(pools.offsets, pools.ad_id, pools.score, pools.value, prerank, pools.m, a, b,
             slots, reserve, capacity, pricing, mode, table, win_ad, win_earn)

    _parallel.run(part, pools.n_requests, _parallel.n_threads(threads), min_items=_MIN_REQUESTS_PER_THREAD)
    return table


def auction_replay(pools, slots: int = 4, reserve: float = 0.0, capacity=None,
                   pricing: str = "first", mode: str = "filter", *, out=None, threads=None,
                   backend=None) -> np.ndarray:
    r"""Coalition tables y(S) of every request by replaying its auction.

    Parameters
    ----------
    pools : Pools
        B requests of m actions.
    slots : int
        Number of winners (top-N), >= 1.
    reserve : float
        Ads scoring below it are dropped (GSP prices are at least it).
    capacity : int, optional
        Keep only the ``capacity`` ads of highest prerank before ranking.
    pricing : {"first", "gsp"}
        Earnings of a winner: its value, or the generalised second price
        :math:`\min(s, \max(r, s_{next}))`.
    mode : {"filter", "rerun"}
        Filter the full pool's ranking per coalition, or rerun the pipeline
        (dedup, capacity, prices) on each coalition's own pool.
    out : ndarray, optional
        float64 (B, 2**m), C-contiguous, sharing no memory with the pools;
        written and returned.
    threads : int, optional
        Threads to split the requests over, at least 1 (default: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one.

    Returns
    -------
    ndarray, shape (B, 2**m), float64
        ``[r, S]`` = y(S) of request r, S a bitmask over actions (``out`` if
        given).

    Raises
    ------
    TypeError
        If ``pools`` is not a :class:`Pools`; if ``slots``, ``capacity`` or
        ``threads`` is not an integer; if ``reserve`` is not a real number;
        or if ``out`` is not a float64 numpy array.
    ValueError
        If ``slots`` is outside [1, 2**20]; if ``reserve`` is NaN; if
        ``capacity`` is below 1; if ``pricing`` or ``mode`` is not one of its
        values; if ``out`` has the wrong shape, is not writeable and
        C-contiguous, or overlaps the pools' arrays; if ``threads`` is below 1;
        or if ``backend`` is not None, "c" or "numba" (or is unavailable here).

    Examples
    --------
    >>> import fastcredit as fc
    >>> pools = fc.Pools([0, 2, 4], ad_id=[7, 8, 7, 9], score=[3., 1., 2., 2.5],
    ...                  value=[1., .5, 1., 2.], m=2)
    >>> fc.auction_replay(pools, slots=1)
    array([[0., 1., 1., 1.]])
    >>> fc.auction_replay(pools, slots=1, mode="rerun")  # action 1 alone ranks ad 9 first
    array([[0., 1., 2., 1.]])
    """
    opts = _options(pools, slots, reserve, capacity, pricing, mode)
    table = output(out, (pools.n_requests, 1 << pools.m),
                   inputs={f"pools.{f}": getattr(pools, f)
                           for f in ("offsets", "ad_id", "score", "value", "prerank")})
    placeholder = np.empty((1, 1, 1), dtype=np.int64), np.empty((1, 1, 1))
    return _run(pools, *opts, table, *placeholder, threads, backend)


def auction_winners(pools, slots: int = 4, reserve: float = 0.0, capacity=None,
                    pricing: str = "first", mode: str = "filter", *, threads=None,
                    backend=None) -> AuctionWinners:
    r""":func:`auction_replay` with the winners of every coalition.

    For debugging a surprising table: which ads won y(S) and what each earned,
    :math:`y(S) = \sum_{j < \mathrm{slots}} \mathrm{earnings}[S, j]`.
    Memory: 16 * B * 2**m * slots bytes on top of the table.

    Parameters
    ----------
    pools : Pools
        B requests of m actions.
    slots : int
        Number of winners (top-N), >= 1.
    reserve : float
        Ads scoring below it are dropped (GSP prices are at least it).
    capacity : int, optional
        Keep only the ``capacity`` ads of highest prerank before ranking.
    pricing : {"first", "gsp"}
        Earnings of a winner: its value, or the generalised second price
        :math:`\min(s, \max(r, s_{next}))`.
    mode : {"filter", "rerun"}
        Filter the full pool's ranking per coalition, or rerun the pipeline
        (dedup, capacity, prices) on each coalition's own pool.
    threads : int, optional
        Threads to split the requests over, at least 1 (default: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one.

    Returns
    -------
    AuctionWinners
        ``table`` (B, 2**m), and the winners' ``ad_id`` and ``earnings``
        (B, 2**m, slots) in rank order.

    Raises
    ------
    TypeError
        If ``pools`` is not a :class:`Pools`; if ``slots``, ``capacity`` or
        ``threads`` is not an integer; or if ``reserve`` is not a real number.
    ValueError
        If ``slots`` is outside [1, 2**20]; if ``reserve`` is NaN; if
        ``capacity`` is below 1; if ``pricing`` or ``mode`` is not one of its
        values; if ``threads`` is below 1; if ``backend`` is not None, "c" or
        "numba" (or is unavailable here); or if the winners' arrays need more
        memory than is available.

    Examples
    --------
    >>> import fastcredit as fc
    >>> pools = fc.Pools([0, 2, 4], ad_id=[7, 8, 7, 9], score=[3., 1., 2., 2.5],
    ...                  value=[1., .5, 1., 2.], m=2)
    >>> fc.auction_winners(pools, slots=1, mode="rerun").ad_id[0, :, 0]
    array([-1,  7,  9,  7])
    """
    opts = _options(pools, slots, reserve, capacity, pricing, mode)
    shape = (pools.n_requests, 1 << pools.m)
    check_memory(8 * math.prod(shape) * (1 + 2 * opts[0]),
                 f"slots = {opts[0]:,} (the tables, and the winners' ad ids and earnings "
                 f"in {opts[0]:,} slots of each of their {math.prod(shape):,} coalitions)")
    table = np.empty(shape)
    win_ad = np.empty(shape + (opts[0],), dtype=np.int64)
    win_earn = np.empty(shape + (opts[0],))
    _run(pools, *opts, table, win_ad, win_earn, threads, backend)
    return AuctionWinners(table, win_ad, win_earn)
