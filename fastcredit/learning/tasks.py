"""The set benchmark's requests: candidate rewrites with their pools, set
values and per-rewrite features (:class:`LearningTask`)."""
from __future__ import annotations

import numpy as np

from .. import _params, synthetic
from .._params import ACTIONS, CAPACITY, PRICING, RESERVE, REWRITES, SLOTS
from .._validation import check_memory, float64_array, frozen, owned
from ..auction import Pools, auction_replay

__all__ = ["FEATURES", "LearningTask", "rewrite_features", "benchmark_pools"]

#: What :func:`rewrite_features` computes for each rewrite, in column order.
FEATURES = ("log1p(distinct ads)", "asinh(top score)", "asinh(sum of top-slots scores)",
            "share of its ads no other rewrite retrieved",
            "asinh(sum of its top-slots scores of such ads)")


def _kernels():
    from .._jit import learning
    return learning


def rewrite_features(pools, slots: int = 4) -> np.ndarray:
    """Features of every candidate rewrite, from the pools alone (what a
    policy sees before any auction is run).

    For rewrite j of a request, over the distinct ads it retrieved (an ad's
    best-scoring instance), in the order of :data:`FEATURES`:

    0. :math:`\\log(1 + n_j)`, n_j its distinct ads;
    1. asinh of its top score;
    2. asinh of the sum of its ``slots`` best scores (what it could win alone);
    3. the share of its distinct ads no other rewrite of the request retrieved;
    4. asinh of the sum of the scores of those of its ``slots`` best ads that
       no other rewrite retrieved (what it adds to the others).

    An empty rewrite has all five 0.

    Parameters
    ----------
    pools : Pools
        B requests of K candidate rewrites.
    slots : int
        Auction slots (the top-N of the replay).

    Returns
    -------
    ndarray, shape (B, K, 5), float64
        The five features of each rewrite of each request.

    Raises
    ------
    TypeError
        If ``pools`` is not a :class:`fastcredit.Pools` or ``slots`` not an
        integer.
    ValueError
        If ``slots`` is not in [1, 2**20], or the features would not fit in
        memory.

    Examples
    --------
    >>> import fastcredit as fc
    >>> pools = fc.Pools([0, 2, 3], ad_id=[7, 8, 7], score=[3., 1., 2.], value=[1., 1., 1.], m=2)
    >>> fc.learning.rewrite_features(pools, slots=1)[0, :, 3]   # ad 8 is rewrite 0's own
    array([0.5, 0. ])
    """
    if not isinstance(pools, Pools):
        raise TypeError(f"pools must be a fastcredit.Pools, got {type(pools).__name__}")
    slots = SLOTS.check(slots)
    kern = _kernels()
    shape = (pools.n_requests, pools.m, kern.N_FEATURES)
    check_memory(8 * int(np.prod(shape)), f"pools ({pools.n_requests:,} requests: their features)")
    out = np.empty(shape)
    kern.rewrite_features(pools.offsets, pools.ad_id, pools.score, pools.m, slots, out)
    return out


class LearningTask:
    """Requests a policy learns on: set values, rewrite features, and the
    pools the ``"filter"`` training evaluator replays.

    The task is immutable and owns its arrays, as :class:`fastcredit.Pools`
    does: ``values`` and ``features`` are stored read-only, copied when they
    may share memory with the caller's.

    Parameters
    ----------
    values : array_like, shape (B, 2**K)
        ``values[r, S]`` = what request r earns when the rewrites in the
        bitmask S are chosen (the reward); finite.
    features : array_like, shape (B, K, d)
        Features of each candidate rewrite; finite.
    pools : Pools, optional
        The requests' candidate pools (``m = K``), needed by
        ``evaluator="filter"``; build with :meth:`from_pools`.
    slots, reserve, capacity, pricing
        The auction of the filter evaluator (:func:`fastcredit.auction_replay`).

    Attributes
    ----------
    n_requests, rewrites, n_features : int
        B, K and d.

    Raises
    ------
    ValueError
        If ``values`` does not have shape (B, 2**K) with 2 <= K <= 16,
        ``features`` does not have shape (B, K, d) with d >= 1, either holds
        a non-finite value, ``pools`` holds other requests or another m, or
        ``slots``, ``reserve``, ``capacity`` or ``pricing`` is out of range
        as in :func:`fastcredit.auction_replay`.
    TypeError
        If ``values`` or ``features`` is not a real array, ``pools`` is not
        a :class:`fastcredit.Pools`, or ``slots``, ``reserve`` or
        ``capacity`` has the wrong type.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.array([[0., 1., 0., 1.]])           # rewrite 0 carries the value
    >>> task = fc.learning.LearningTask(v, np.eye(2)[None])
    >>> task.n_requests, task.rewrites, task.n_features
    (1, 2, 2)
    """

    __slots__ = ("values", "features", "pools", "slots", "reserve", "capacity", "pricing")

    def __init__(self, values, features, pools=None, *, slots: int = 4, reserve: float = 0.0,
                 capacity=None, pricing: str = "first"):
        self._fill(values, features, pools, slots, reserve, capacity, pricing, adopt=False)

    @classmethod
    def _adopt(cls, values, features, pools, slots, reserve, capacity,
               pricing) -> "LearningTask":
        """The task of arrays nothing else will write (the library's new
        arrays, or views of another task's): validated, not copied."""
        task = object.__new__(cls)
        task._fill(values, features, pools, slots, reserve, capacity, pricing, adopt=True)
        return task

    def _fill(self, values, features, pools, slots, reserve, capacity, pricing, adopt):
        v = float64_array(values, "values")
        if v.ndim != 2 or v.shape[1] < 4 or v.shape[1] & (v.shape[1] - 1):
            raise ValueError(f"values must have shape (B, 2**K) with K >= 2, got {v.shape}")
        k = v.shape[1].bit_length() - 1
        REWRITES.check(k, "K (values has 2**K columns)")
        f = float64_array(features, "features")
        if f.ndim != 3 or f.shape[:2] != (v.shape[0], k) or f.shape[2] < 1:
            raise ValueError(f"features must have shape ({v.shape[0]}, {k}, d) with d >= 1 "
                             f"(values is {v.shape}), got {f.shape}")
        if not adopt:
            # checked below and read by every training step: never the caller's memory
            v = owned(v, values, f"values (the copy the task keeps of its {v.size:,} entries)")
            f = owned(f, features, f"features (the copy the task keeps of its {f.size:,} "
                                    f"entries)")
        for name, arr in (("values", v), ("features", f)):
            if not np.isfinite(arr).all():
                raise ValueError(f"{name} must be finite")
        if pools is not None:
            if not isinstance(pools, Pools):
                raise TypeError(f"pools must be a fastcredit.Pools, got {type(pools).__name__}")
            if (pools.n_requests, pools.m) != (v.shape[0], k):
                raise ValueError(f"pools must hold {v.shape[0]} requests of m = {k} rewrites "
                                 f"like values, got {pools.n_requests} of m = {pools.m}")
        self.values, self.features, self.pools = frozen(v), frozen(f), pools
        self.slots = SLOTS.check(slots)
        self.reserve = RESERVE.check(reserve)
        self.capacity = CAPACITY.check(capacity)
        self.pricing = PRICING.check(pricing)  # last: it marks the task complete

    def __setattr__(self, name, value):
        if hasattr(self, "pricing"):
            raise AttributeError("LearningTask is immutable")
        object.__setattr__(self, name, value)

    def __reduce__(self):
        # unpickled arrays are new and writeable: adopt them, read-only again
        return LearningTask._adopt, (self.values, self.features, self.pools, self.slots,
                                     self.reserve, self.capacity, self.pricing)

    @classmethod
    def from_pools(cls, pools, *, slots: int = 4, reserve: float = 0.0, capacity=None,
                   pricing: str = "first", threads=None) -> "LearningTask":
        """The task of requests with K candidate rewrites: values are their
        rerun tables (:func:`fastcredit.auction_replay`, ``mode="rerun"``),
        features :func:`rewrite_features`.

        Examples
        --------
        >>> import fastcredit as fc
        >>> task = fc.learning.LearningTask.from_pools(fc.synthetic.sponsored_search(3, m=6))
        >>> task.values.shape, task.features.shape
        ((3, 64), (3, 6, 5))
        """
        if not isinstance(pools, Pools):
            raise TypeError(f"pools must be a fastcredit.Pools, got {type(pools).__name__}")
        REWRITES.check(pools.m, "pools.m")
        values = auction_replay(pools, slots, reserve, capacity, pricing, mode="rerun",
                                threads=threads)
        if not np.isfinite(values).all():
            raise ValueError("pools must have finite values (a set value is not finite)")
        return cls._adopt(values, rewrite_features(pools, slots), pools, slots=slots,
                          reserve=reserve, capacity=capacity, pricing=pricing)

    @property
    def n_requests(self) -> int:
        return self.values.shape[0]

    @property
    def rewrites(self) -> int:
        """K, the candidate rewrites per request."""
        return self.features.shape[1]

    @property
    def n_features(self) -> int:
        return self.features.shape[2]

    def requests(self, start: int, stop: int) -> "LearningTask":
        """The task of requests start .. stop - 1.

        Examples
        --------
        >>> import fastcredit as fc
        >>> task = fc.learning.LearningTask.from_pools(fc.synthetic.sponsored_search(5, m=4))
        >>> task.requests(1, 3).n_requests
        2
        """
        n = self.n_requests
        start, stop = (_params.Integer("start", 0, n, "").check(start),
                       _params.Integer("stop", 0, n, "").check(stop))
        if stop < start:
            raise ValueError(f"stop must be >= start, got start = {start}, stop = {stop}")
        pools = None
        if self.pools is not None:
            k, p = self.rewrites, self.pools
            off = p.offsets[start * k:stop * k + 1]
            lo, hi = int(off[0]), int(off[-1])
            pools = Pools._adopt(off - lo, p.ad_id[lo:hi], p.score[lo:hi], p.value[lo:hi], m=k,
                                 prerank=None if p.prerank is None else p.prerank[lo:hi])
        return LearningTask._adopt(self.values[start:stop], self.features[start:stop], pools,
                                   slots=self.slots, reserve=self.reserve,
                                   capacity=self.capacity, pricing=self.pricing)

    def __repr__(self) -> str:
        return (f"LearningTask(n_requests={self.n_requests}, rewrites={self.rewrites}, "
                f"n_features={self.n_features}, pools={self.pools is not None})")


def benchmark_pools(n_requests: int, rewrites: int = 10, seed: int = 0, *,
                    preset: str = "realistic") -> Pools:
    """The benchmark's data: ``n_requests`` synthetic requests of
    ``rewrites`` candidate rewrites each,
    :func:`fastcredit.synthetic.sponsored_search` with the generator
    ``preset`` (replay them with ``fastcredit.synthetic.search_preset(preset).replay``).

    Parameters
    ----------
    n_requests : int
        Requests to generate.
    rewrites : int in [2, 16]
        Candidate rewrites per request (the pools' m).
    seed : int in [0, 2**64)
        Seed of the generator.
    preset : {"default", "realistic"}
        The generator's preset.

    Returns
    -------
    Pools
        ``n_requests`` requests of ``rewrites`` candidate pools.

    Raises
    ------
    ValueError
        If ``rewrites`` is not in [2, 16], or ``n_requests``, ``seed`` or
        ``preset`` is out of range as in
        :func:`fastcredit.synthetic.sponsored_search`.
    TypeError
        If ``n_requests``, ``rewrites`` or ``seed`` is not an integer.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.learning.benchmark_pools(4, rewrites=8).m
    8
    """
    rewrites = REWRITES.check(rewrites)
    return synthetic.sponsored_search(n_requests, m=rewrites, seed=seed, preset=preset)


def _check_task(task):
    if not isinstance(task, LearningTask):
        raise TypeError(f"task must be a fastcredit.learning.LearningTask, got "
                        f"{type(task).__name__}")



def _check_m(m, task):
    m = ACTIONS.check(m)
    if m >= task.rewrites:
        raise ValueError(f"m must be less than the {task.rewrites} candidate rewrites, got {m}")
    return m

