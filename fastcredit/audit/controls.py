"""Negative controls: credit shuffled within its group or handed to another
group, scored by the same statistic as the credit itself."""
from __future__ import annotations

import numpy as np

from .. import _parallel
from .._backend import kernels, resolve
from .._constants import RNG_MAX_RANGE
from .._params import CONTROLS, MIN_STEPS, SEED
from .._validation import (as_sequence, check_int, check_memory, dense_offsets, float64_array,
                           output, row_offsets)
from ._data import check_rng_rows, float64_vector, trajectories
from .agreement import alignment
from .bootstrap import check_resamples
from .spearman import _score_trajectories

__all__ = ["alignment_controls", "audit_controls", "derangement", "shuffle_within"]

# Shuffling a group of 4 to 20 values costs about 0.01 to 0.03 us, so 1024
# groups are about as long as handing a chunk to a pool thread.
_MIN_SHUFFLE_GROUPS_PER_THREAD = 1024


def shuffle_within(values, offsets, *, seed=0, stream=0, out=None, threads=None,
                   backend=None) -> np.ndarray:
    r"""Shuffle values within each group, keeping every group's marginals.

    Group g is permuted uniformly (Fisher-Yates) with the RNG stream
    (seed, stream * n_groups + g): the same multiset of values stays in each
    trajectory, only its assignment to steps is destroyed. ``stream`` numbers
    independent shuffles of the same data.

    Parameters
    ----------
    values : array_like, shape (n,)
        The values to shuffle, e.g. the flat per-step credit.
    offsets : array_like of int, shape (n_groups + 1,)
        CSR offsets; groups have at most 2**32 values.
    seed : int in [0, 2**64)
        Seed of the RNG streams.
    stream : int >= 0
        Which of the independent shuffles of the same data to draw.
    out : ndarray (n,) float64, optional
        Where to write the result (C-contiguous, not overlapping the
        inputs); a new array when None.
    threads : int, optional
        Threads to split the groups over (default all cores).
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Returns
    -------
    ndarray (n,), float64
        The shuffled values (``out`` when given).

    Raises
    ------
    ValueError
        If ``values`` is not one-dimensional, ``offsets`` is not valid CSR
        over it (one-dimensional, at least 2 entries, starting at 0,
        non-decreasing, ending at n), a group has more than 2**32 values,
        ``seed`` is outside [0, 2**64), ``stream`` is negative or
        ``stream * n_groups + n_groups`` exceeds 2**64, ``out`` has the wrong
        shape, is not writeable and C-contiguous or overlaps an input,
        ``threads < 1``, or ``backend`` is not None, "c" or "numba" or is
        not available.
    TypeError
        If ``values`` is not a real array, ``offsets`` not integer, ``seed``,
        ``stream`` or ``threads`` not an integer, or ``out`` not a float64
        numpy array.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> s = fc.shuffle_within(np.arange(6.), [0, 3, 6], seed=4)
    >>> np.sort(s[:3]), np.sort(s[3:])
    (array([0., 1., 2.]), array([3., 4., 5.]))
    """
    x = float64_vector(values, "values")
    off = row_offsets(offsets, x.shape[0], "offsets", "group")
    check_rng_rows(off, "values", "group")
    seed = np.uint64(SEED.check(seed))
    n_groups = off.shape[0] - 1
    stream = check_int(stream, "stream", lo=0)
    first = stream * n_groups
    if first + n_groups > 2**64:
        raise ValueError("stream * n_groups must stay below 2**64")
    res = output(out, x.shape, inputs={"values": (values, x), "offsets": (offsets, off)})
    impl = kernels("audit", resolve("audit.shuffle", backend))
    _parallel.run(lambda a, b: impl.shuffle_groups(off[a:b + 1], x, seed,
                                                   np.uint64(first + a), res),
                  n_groups, _parallel.n_threads(threads),
                  min_items=_MIN_SHUFFLE_GROUPS_PER_THREAD)
    return res


def derangement(n, *, seed=0, out=None, backend=None) -> np.ndarray:
    r"""A uniformly random derangement of 0..n-1 (no fixed points).

    ``perm[i] != i`` for every i: giving item i the context (or credit) of
    item ``perm[i]`` pairs every item with another item's, a control that
    keeps the marginals of both sides.

    Parameters
    ----------
    n : int, 2 <= n <= 2**32
        Number of items.
    seed : int in [0, 2**64)
        Seed of the RNG stream.
    out : ndarray (n,) int64, optional
        Written with the permutation and returned (a writeable C-contiguous
        array); a new array when None.
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Returns
    -------
    ndarray (n,) int64
        ``perm``, a permutation of 0..n-1 with ``perm[i] != i`` (``out`` when
        given).

    Raises
    ------
    ValueError
        If ``n`` is not in [2, 2**32] or its permutation would not fit in
        memory, ``seed`` is outside [0, 2**64), ``out`` has the wrong shape
        or is not writeable and C-contiguous, or ``backend`` is not None,
        "c" or "numba" or is not available.
    TypeError
        If ``n`` or ``seed`` is not an integer, or ``out`` not an int64
        numpy array.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> p = fc.derangement(5, seed=3)
    >>> bool(np.all(p != np.arange(5))), sorted(p.tolist())
    (True, [0, 1, 2, 3, 4])
    """
    n = check_int(n, "n", lo=2, hi=RNG_MAX_RANGE)
    if out is None:
        check_memory(8 * n, f"n = {n:,} (the permutation, int64)")
        res = np.empty(n, dtype=np.int64)
    else:
        res = output(out, (n,), dtype=np.int64)
    kernels("audit", resolve("audit.derangement", backend)).derangement(
        n, np.uint64(SEED.check(seed)), res)
    return res


def _control_signals(x, off, controls, seed, threads, backend) -> dict:
    """The credit ``x`` (CSR ``off``) as ``"signal"`` and the named controls
    of it, each drawing its randomness from ``seed``."""
    controls = [CONTROLS.check(c) for c in as_sequence(controls, "controls", "control names")]
    seed = SEED.check(seed)
    signals = {"signal": x}
    for name in controls:
        if name == "shuffle":
            signals[name] = shuffle_within(x, off, seed=seed, threads=threads, backend=backend)
        elif name == "random":
            signals[name] = np.random.default_rng(seed).random(x.shape[0])
        elif name == "uniform":
            signals[name] = np.zeros_like(x)
        else:
            lengths = np.diff(off)
            if lengths.size < 2 or np.any(lengths != lengths[0]):
                raise ValueError("controls: 'derangement' needs at least 2 groups, all of "
                                 "the same length")
            perm = derangement(lengths.size, seed=seed, backend=backend)
            signals[name] = x.reshape(lengths.size, -1)[perm].reshape(-1)
    return signals


def audit_controls(credit, a_replay, offsets, *, controls=CONTROLS.values[:3], min_steps=4,
                   resamples=10_000, level=0.95, seed=0, threads=None,
                   backend=None) -> dict:
    r"""A credit signal and its controls through the same Spearman audit.

    Returns ``{"signal": SpearmanAudit, control: SpearmanAudit, ...}`` where
    the controls replace the credit by:

    * ``"shuffle"``: the credit shuffled within each trajectory
      (:func:`shuffle_within`, marginals kept exactly);
    * ``"random"``: i.i.d. uniform [0, 1) credit;
    * ``"uniform"``: the same credit for every step (scores 0 by definition);
    * ``"derangement"``: trajectory g gets the credit of trajectory
      ``perm[g]``, ``perm`` = :func:`derangement` (needs trajectories of one
      length).

    Every audit uses the same trajectories (exclusion depends on A_replay
    only), the same ``seed`` for its bootstrap, and the controls draw their
    credit from ``seed`` too, so the comparison is paired.

    Parameters
    ----------
    credit, a_replay, offsets, min_steps, resamples, level, seed, threads, backend
        As in :func:`~fastcredit.audit.spearman_audit`.
    controls : sequence of {"shuffle", "random", "uniform", "derangement"}
        The controls to score beside the signal (default the first three).

    Returns
    -------
    dict of str -> SpearmanAudit
        ``"signal"`` and each control, in that order.

    Raises
    ------
    ValueError
        If an argument fails the checks of
        :func:`~fastcredit.audit.spearman_audit` (on the signal or a
        control), ``controls`` names an unknown control or is an array that
        is not one-dimensional, or ``"derangement"`` is asked for with fewer
        than 2 trajectories or trajectories of different lengths.
    TypeError
        If ``controls`` is a single string or not a sequence, or an argument
        has a wrong type as in :func:`~fastcredit.audit.spearman_audit`.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> off = np.arange(0, 2001, 20)
    >>> a = rng.normal(size=2000)
    >>> res = fc.audit_controls(a + rng.normal(size=2000), a, off, resamples=1000)
    >>> res["signal"].median.low > res["shuffle"].median.high, res["uniform"].median.estimate
    (True, 0.0)
    >>> diff = fc.paired_bootstrap(res["signal"].rho, res["shuffle"].rho, resamples=1000)
    >>> fc.holm([diff.pvalue(), 0.2]).reject
    array([ True, False])
    """
    x, y, off = trajectories(credit, a_replay, offsets)
    min_steps = MIN_STEPS.check(min_steps)
    check_resamples(resamples)
    signals = _control_signals(x, off, controls, seed, threads, backend)
    return {name: _score_trajectories(s, y, off, min_steps, resamples, level, seed, threads,
                                      backend)
            for name, s in signals.items()}


def alignment_controls(credit, reference, *, controls=CONTROLS.values, seed=0, center=True,
                       threads=None, backend=None) -> dict:
    r"""Set credit and its controls scored by the same :func:`~fastcredit.audit.alignment`.

    Returns ``{"signal": Alignment, control: Alignment, ...}`` with the
    controls of :func:`audit_controls` applied to requests instead of
    trajectories: ``"shuffle"`` permutes the m credits within each request,
    ``"derangement"`` gives request r the credit vector of request
    ``perm[r]`` (no request keeps its own), ``"random"`` and ``"uniform"``
    replace it.

    The per-request cosines are paired across the entries: compare a rule
    with a control by :func:`~fastcredit.audit.paired_bootstrap` of their
    ``cosine`` arrays.

    Parameters
    ----------
    credit, reference : array_like, shape (n_requests, m)
        Credit and reference vectors of each request, n_requests >= 1,
        m >= 2 (``"derangement"`` needs n_requests >= 2).
    controls : sequence of {"shuffle", "random", "uniform", "derangement"}
        The controls to score beside the signal (default all four).
    seed : int in [0, 2**64)
        Drives the controls.
    center, threads, backend
        As in :func:`~fastcredit.audit.alignment`.

    Returns
    -------
    dict of str -> Alignment
        ``"signal"`` and each control, in that order.

    Raises
    ------
    ValueError
        If ``credit`` is not 2-D with n_requests >= 1 and m >= 2,
        ``controls`` names an unknown control, ``"derangement"`` is asked
        for with a single request, ``seed`` is outside [0, 2**64), or an
        argument fails the checks of :func:`~fastcredit.audit.alignment`
        (``reference`` of another shape, for one).
    TypeError
        If ``controls`` is a single string or not a sequence, ``seed`` is
        not an integer, or an argument has a wrong type as in
        :func:`~fastcredit.audit.alignment`.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> ref = rng.normal(size=(300, 5))
    >>> res = fc.alignment_controls(ref + 0.5 * rng.normal(size=ref.shape), ref)
    >>> res["signal"].median_cosine > 0.8, abs(res["derangement"].median_cosine) < 0.2
    (True, True)
    """
    c = float64_array(credit, "credit")
    if c.ndim != 2 or c.shape[0] < 1 or c.shape[1] < 2:
        raise ValueError(f"credit must have shape (n_requests, m) with n_requests >= 1 and "
                         f"m >= 2, got {c.shape}")
    signals = _control_signals(c.reshape(-1), dense_offsets(*c.shape), controls, seed, threads,
                               backend)
    return {name: alignment(s.reshape(c.shape), reference, center=center, threads=threads,
                            backend=backend) for name, s in signals.items()}
