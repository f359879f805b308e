"""Advantage shaping for RL trainers.

Per-action credit only reaches a policy through the advantages a trainer puts
on tokens. This module turns credit into such advantages:

* :func:`project_zero_sum` - the exact bounded zero-sum projection
  z = argmin ||z - u|| s.t. sum z = total, |z_i| <= kappa (and its general
  weighted, per-coordinate-bounds form), in C and Numba;
* :func:`group_advantages` - GRPO's group-relative advantages, as TRL and verl
  compute them;
* :func:`shape_advantages` - per-action advantages base + beta * z;
* :func:`token_advantages` - the (G, T) float32 tensor a trainer consumes,
  with :func:`token_counts` for the token-weighted, mean-preserving variant.

Common keyword arguments:

out : ndarray, optional
    C-contiguous array of the result's shape and dtype; written and returned.
threads : int, optional
    Threads to split the rows over (default: all cores).
backend : {None, "c", "numba"}
    None picks the faster backend for the kernel (see fastcredit._backend).
"""
from __future__ import annotations

import math

import numpy as np

from . import _parallel
from ._backend import kernels, resolve
from ._params import BETA, KAPPA, NORMALIZE, SCALE, SINGLETON
from ._validation import (as_array, check_float, check_int, check_memory, float64_array,
                          int_array, output, read_only, real_array)

__all__ = ["project_zero_sum", "group_advantages", "shape_advantages", "token_advantages",
           "token_counts"]

# Rows per thread below which splitting a projection is not worth a thread.
_MIN_ROWS_PER_THREAD = 1 << 14
# Tokens per thread below which splitting the token gather is not worth it.
_MIN_TOKENS_PER_THREAD = 1 << 18
# Relative slack of the feasibility check, so a total exactly at a bound is
# accepted whatever the summation order rounded the bound sums to.
_FEASIBILITY_RTOL = 1e-12


def _position(flat_index: int, shape: tuple) -> tuple:
    """The index tuple of a flat position, as plain ints (for messages)."""
    return tuple(int(i) for i in np.unravel_index(flat_index, shape))


def _row_name(flat_index: int, lead: tuple) -> str:
    return f"row {_position(flat_index, lead) if len(lead) > 1 else flat_index}"


def _per_row(x, name: str, lead: tuple):
    """A scalar or a lead-shaped array as (values float64 1-d, stride)."""
    if isinstance(x, float) or (type(x) is int and abs(x) <= 1 << 53):
        # a Python or NumPy float64 scalar, or an int it holds exactly: one
        # array made, not four NumPy calls (each costs microseconds, more
        # after a kernel has flushed the caches: issue 33)
        return np.array([float(x)]), 0
    arr = real_array(x, name, dtypes=(np.float64, np.float32))
    if np.ndim(x) == 0:
        return arr.astype(np.float64).reshape(1), 0
    if arr.shape != lead:
        raise ValueError(f"{name} must be a scalar or have shape {lead} (one per row), "
                         f"got {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.float64).reshape(-1), 1


def _per_coordinate(x, name: str, shape: tuple):
    """A scalar, an (m,) or a full-shape array as (values float64, form)
    with form 0 (scalar), 1 (shared (m,)) or 2 (one per element)."""
    arr = real_array(x, name, dtypes=(np.float64, np.float32))
    if np.ndim(x) == 0:
        return arr.astype(np.float64).reshape(()), 0
    if arr.shape == shape[-1:]:
        return np.ascontiguousarray(arr, dtype=np.float64), 1
    if arr.shape == shape:
        return np.ascontiguousarray(arr, dtype=np.float64), 2
    raise ValueError(f"{name} must be a scalar, shape {shape[-1:]} or shape {shape}, "
                     f"got {arr.shape}")


def _bounds(kappa, lower, upper, shape):
    """(lower, upper, row_stride, col_stride) with lower/upper float64 1-d."""
    lead, m = shape[:-1], shape[-1]
    if kappa is not None:
        if lower is not None or upper is not None:
            raise ValueError("give either kappa or lower/upper, not both")
        k, stride = _per_row(kappa, "kappa", lead)
        bad = np.flatnonzero(~(k >= 0)) if stride or not k[0] >= 0 else ()
        if len(bad):
            where = _row_name(int(bad[0]), lead) if stride else "scalar"
            raise ValueError(f"kappa must be >= 0 (and not NaN), got {k[bad[0]]} ({where})")
        return -k, k, stride, 0
    if lower is None and upper is None:
        raise TypeError("project_zero_sum needs kappa or lower/upper bounds")
    lo, lo_form = _per_coordinate(-np.inf if lower is None else lower, "lower", shape)
    hi, hi_form = _per_coordinate(np.inf if upper is None else upper, "upper", shape)
    form = max(lo_form, hi_form)
    full = {0: (), 1: (m,), 2: shape}[form]
    lo = np.ascontiguousarray(np.broadcast_to(lo, full)).reshape(-1)
    hi = np.ascontiguousarray(np.broadcast_to(hi, full)).reshape(-1)
    bad = np.flatnonzero(~(lo <= hi) | (lo == np.inf) | (hi == -np.inf))
    if bad.size:
        b = int(bad[0])
        raise ValueError(f"bounds must satisfy -inf < upper, lower < inf and lower <= upper; "
                         f"got lower = {lo[b]}, upper = {hi[b]} at element "
                         f"{_position(b, full) if full else ()}")
    return lo, hi, (m if form == 2 else 0), (1 if form else 0)


def _check_feasible(lo, hi, brs, bcs, w, wrs, total, n_rows, m, lead):
    """sum_{w>0} w lower <= total <= sum_{w>0} w upper on every row. Rows
    whose bounds and weights are shared are checked once."""
    n = n_rows if brs or wrs else 1
    if n == 1 and w is None and bcs == 0 and total.size == 1:
        # one bound pair and total for every row (a scalar kappa): the same
        # test in Python floats, the NumPy path below only for the error
        lo_sum, hi_sum, tot = m * float(lo[0]), m * float(hi[0]), float(total[0])
        slack = _FEASIBILITY_RTOL * (abs(lo_sum) + abs(hi_sum) if math.isfinite(lo_sum) and
                                     math.isfinite(hi_sum) else 0.0) + 1e-300
        if lo_sum - slack <= tot <= hi_sum + slack:
            return
    rows = np.arange(n)[:, None] * brs
    with np.errstate(invalid="ignore"):
        if w is None and bcs == 0:
            lo_sum, hi_sum = m * lo[rows[:, 0]], m * hi[rows[:, 0]]
        else:
            idx = rows + np.arange(m)[None, :] * bcs
            weights = np.ones((1, m)) if w is None else w.reshape(-1, m)
            active = weights > 0
            lo_sum = np.where(active, weights * lo[idx], 0.0).sum(1)
            hi_sum = np.where(active, weights * hi[idx], 0.0).sum(1)
        slack = _FEASIBILITY_RTOL * np.where(np.isfinite(lo_sum) & np.isfinite(hi_sum),
                                             np.abs(lo_sum) + np.abs(hi_sum), 0.0) + 1e-300
        ok = (lo_sum - slack <= total) & (total <= hi_sum + slack)
    bad = np.flatnonzero(~ok)
    if bad.size:
        r = int(bad[0])
        lo_r, hi_r = lo_sum[min(r, lo_sum.size - 1)], hi_sum[min(r, hi_sum.size - 1)]
        raise ValueError(f"infeasible projection at {_row_name(r, lead)}: total = "
                         f"{total[min(r, total.size - 1)]} is outside [sum(w*lower), "
                         f"sum(w*upper)] = [{lo_r}, {hi_r}]")


def project_zero_sum(u, kappa=None, total=0.0, *, lower=None, upper=None, weights=None,
                     out=None, threads=None, backend=None) -> np.ndarray:
    r"""Bounded zero-sum projection of each row of ``u``.

    .. math:: z = \arg\min_z \tfrac12 \sum_i w_i (z_i - u_i)^2 \quad
              \text{s.t.} \ \sum_i w_i z_i = \text{total}, \ \ l_i \le z_i \le h_i

    with :math:`l_i = -\kappa, h_i = \kappa` and :math:`w_i = 1` by default.
    The solution is :math:`z_i = \mathrm{clip}(u_i - \tau, l_i, h_i)`, where
    :math:`\tau` is found exactly by a sorted search over the breakpoints
    :math:`u_i - h_i, u_i - l_i` (O(m log m) per row, no iteration tolerance);
    when :math:`\tau = (\sum w u - \text{total}) / \sum w` clips nothing it is
    taken directly. With zero weights the minimiser is not unique in the
    zero-weight coordinates; :math:`\tau` nearest 0 is returned then.

    Parameters
    ----------
    u : array_like, shape (..., m)
        Values to project, float64 or float32, m >= 1. A row holding NaN or
        +-inf gives a NaN row; keep ``|u|`` below about 1e300 / m.
    kappa : float or array_like of shape (...), optional
        Symmetric bound (>= 0; inf means unbounded), one for all rows or one
        per row. Give either ``kappa`` or ``lower``/``upper``.
    total : float or array_like of shape (...)
        Required weighted sum of each row (default 0).
    lower, upper : float or array_like of shape (m,) or (..., m), optional
        Per-coordinate bounds (lower may be -inf, upper +inf; a missing one is
        open). Rows must be feasible:
        :math:`\sum_{w_i>0} w_i l_i \le \text{total} \le \sum_{w_i>0} w_i h_i`.
    weights : array_like of shape (m,) or (..., m), optional
        Non-negative finite weights, e.g. token counts per action (then the
        token-weighted mean of ``z`` is total / sum(w)).
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned.
    threads : int, optional
        Threads to split the rows over, at least 1 (default: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one.

    Returns
    -------
    ndarray, shape (..., m), float64
        The projection z of each row (``out`` if given).

    Raises
    ------
    ValueError
        If ``u`` is a scalar or has m = 0; if both ``kappa`` and
        ``lower``/``upper`` are given; if ``kappa`` is negative or NaN; if
        ``lower`` > ``upper``, ``lower`` is +inf or ``upper`` is -inf; if
        ``total`` is not finite; if ``weights`` is a scalar or has an entry
        that is negative or not finite; if ``kappa``, ``total``, ``lower``,
        ``upper`` or ``weights`` does not have one of its shapes; if a row is
        infeasible (the message names the row); if ``out`` has the wrong
        shape, is not writeable and C-contiguous, or overlaps an input; if
        ``threads`` is below 1; or if ``backend`` is not None, "c" or "numba"
        (or is unavailable here).
    TypeError
        If neither ``kappa`` nor ``lower``/``upper`` is given; if ``u``,
        ``kappa``, ``total``, ``lower``, ``upper`` or ``weights`` is not a
        float64, float32, integer or bool array; if ``out`` is not a float64
        numpy array; or if ``threads`` is not an integer.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> fc.project_zero_sum(np.array([3., 0., -1.]), kappa=1.0)
    array([ 1.,  0., -1.])
    >>> fc.project_zero_sum([0.5, 1.0, 0.0], lower=0.0, total=1.0)   # simplex
    array([0.25, 0.75, 0.  ])
    """
    arr = real_array(u, "u")
    if arr.ndim == 0 or arr.shape[-1] < 1:
        raise ValueError(f"u must have shape (..., m) with m >= 1, got {arr.shape}")
    shape = arr.shape
    lead, m = shape[:-1], shape[-1]
    n_rows = math.prod(lead)
    lo, hi, brs, bcs = _bounds(kappa, lower, upper, shape)
    tot, ts = _per_row(total, "total", lead)
    if not (math.isfinite(tot[0]) if tot.size == 1 else np.isfinite(tot).all()):
        raise ValueError(f"total must be finite, got {tot[~np.isfinite(tot)][0]}")
    w, wrs = None, 0
    if weights is not None:
        w, form = _per_coordinate(weights, "weights", shape)
        if form == 0:
            raise ValueError("weights must have shape (m,) or u's shape, got a scalar")
        if not ((w >= 0) & np.isfinite(w)).all():
            raise ValueError("weights must be finite and >= 0")
        w, wrs = w.reshape(-1), (m if form == 2 else 0)
    impl = kernels("shaping", resolve("shaping.project", backend))
    threads = _parallel.n_threads(threads)
    # kappa before upper: a float64 kappa is read in place as the upper bounds
    res = output(out, shape, inputs={"u": (u, arr), "kappa": kappa, "lower": (lower, lo),
                                     "upper": (upper, hi), "weights": (weights, w),
                                     "total": (total, tot)})
    if n_rows == 0:
        return res
    _check_feasible(lo, hi, brs, bcs, w, wrs, tot, n_rows, m, lead)
    flat, res_flat = arr.reshape(n_rows, m), res.reshape(n_rows, m)

    # inputs read-only whatever the caller's flags: one compiled signature
    flat, lo, hi, tot = read_only(flat), read_only(lo), read_only(hi), read_only(tot)
    w = None if w is None else read_only(w)

    def part(a, b):
        impl.project_box(flat[a:b], lo[a * brs:], hi[a * brs:], brs, bcs,
                         None if w is None else w[a * wrs:], wrs, tot[a * ts:], ts,
                         res_flat[a:b])

    _parallel.run(part, n_rows, threads, min_items=_MIN_ROWS_PER_THREAD)
    return res


def group_advantages(rewards, group_size=None, *, groups=None, scale="group", eps=1e-4,
                     ddof=1, singleton="zero", sessions=None, turns=None) -> np.ndarray:
    r"""GRPO group-relative advantages.

    .. math:: A_j = \frac{r_j - \bar r_{g(j)}}{s_{g(j)} + \varepsilon}

    with :math:`\bar r_g` the mean and :math:`s_g` the standard deviation
    (``ddof=1``, like ``torch.std``) of the rewards of j's group. This is
    TRL's ``GRPOTrainer`` (``scale_rewards="group"``, eps 1e-4) and verl's
    GRPO estimator (eps 1e-6). NaN rewards count as 0 (TRL sums reward
    functions with ``nansum``); an infinite reward makes every advantage of
    its group NaN, whatever ``scale`` (the group has no mean), and with
    ``scale="batch"`` every advantage of the batch (the batch has no sd); a
    group of one gets advantage 0 unless ``singleton="raw"``.

    verl's ``compute_grpo_outcome_advantage`` (both its trainers, see
    docs/trainers.md) is ``groups=uid, eps=1e-6, singleton="raw"``, with
    ``scale="none"`` for ``norm_adv_by_std_in_grpo=False``; its multi-turn
    agent loop adds ``sessions`` and ``turns``.

    Parameters
    ----------
    rewards : array_like, shape (N,)
        Reward of each completion (float64 or float32; integers converted).
    group_size : int, optional
        Groups are consecutive runs of ``group_size`` rewards (TRL's layout:
        ``num_generations`` completions per prompt); N must be a multiple.
    groups : array_like of int or str, shape (N,), optional
        Group label of each reward, in any order (verl's ``uid``). Give
        exactly one of ``group_size`` and ``groups``.
    scale : {"group", "batch", "none"}
        Divide by the group's sd, by the sd of the whole batch (TRL's
        ``scale_rewards="batch"``), or not at all.
    eps : float
        Added to the sd before dividing (>= 0).
    ddof : int
        Delta degrees of freedom of the sd (1 = unbiased, as torch).
    singleton : {"zero", "raw"}
        A group of one reward gets 0 (``"zero"``), or is taken with mean 0
        and sd 1 (``"raw"``, verl): :math:`r / (1 + \varepsilon)` with
        ``scale="group"``, :math:`r` with ``scale="none"``.
    sessions : array_like of int or str, shape (N,), optional
        Multi-turn rollouts: the session (one agent loop) each row belongs to,
        labels unique across the batch (verl v1: ``f"{uid}_{session_id}"``).
        Only each session's final row enters the group statistics (one reward
        per session), and every row of the session gets that row's advantage.
        A session's rows must share one group.
    turns : array_like of int, shape (N,), optional
        The turn index of each row in its session (verl v1: the last field of
        the batch key); the final row is the first one with the largest
        index. Without ``turns`` it is the session's last row. Needs
        ``sessions``.

    Returns
    -------
    ndarray, shape (N,), float64
        The advantage of each reward.

    Raises
    ------
    ValueError
        If ``rewards`` is not 1-D; if ``scale`` or ``singleton`` is not one of
        its values; if ``eps`` is negative or not finite; if ``ddof`` is not 0
        or 1; if ``group_size`` is below 1 or does not divide N; if
        ``groups``, ``sessions`` or ``turns`` does not have shape (N,); or if
        a session's rows are in different groups.
    TypeError
        If ``rewards`` is not a real array or ``eps`` not a real number; if
        ``ddof`` or ``group_size`` is not an integer; if not exactly one of
        ``group_size`` and ``groups`` is given; if ``turns`` is given without
        ``sessions``, or is not an integer array; or if ``groups`` or
        ``sessions`` holds labels other than integers or strings, or both.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.group_advantages([1., 0., 0., 1.], group_size=2).round(4)
    array([ 0.707, -0.707, -0.707,  0.707])
    >>> fc.group_advantages([2., 1., 0.], groups=["a", "b", "b"], eps=0.0,
    ...                     singleton="raw").round(4)
    array([ 2.    ,  0.7071, -0.7071])
    """
    r = real_array(rewards, "rewards")
    if r.ndim != 1:
        raise ValueError(f"rewards must have shape (N,), got {r.shape}")
    n = r.shape[0]
    scale = SCALE.check(scale)
    singleton = SINGLETON.check(singleton)
    eps = check_float(eps, "eps", lo=0.0)
    ddof = check_int(ddof, "ddof", lo=0, hi=1)
    if (group_size is None) == (groups is None):
        raise TypeError("give exactly one of group_size and groups")
    if group_size is not None:
        group_size = check_int(group_size, "group_size", lo=1)
        if n % group_size:
            raise ValueError(f"rewards has length {n}, not a multiple of group_size = "
                             f"{group_size}")
        inverse = np.arange(n) // group_size
    else:
        inverse = _label_index(groups, "groups", n)
    r = r.astype(np.float64)
    r[np.isnan(r)] = 0.0
    if sessions is None:
        if turns is not None:
            raise TypeError("turns needs sessions (the session of each row)")
        return _grouped(r, inverse, scale, eps, ddof, singleton)
    session = _label_index(sessions, "sessions", n)
    final = _final_rows(session, turns, n)
    final_group = inverse[final]                       # the group of each session's final row
    if not np.array_equal(final_group[session], inverse):
        row = int(np.flatnonzero(final_group[session] != inverse)[0])
        raise ValueError(f"groups and sessions disagree: row {row} is in a different group "
                         f"from the final row {int(final[session[row]])} of its session")
    return _grouped(r[final], final_group, scale, eps, ddof, singleton)[session]


def _label_index(labels, name: str, n: int) -> np.ndarray:
    """Integer or string labels (N,) as indices 0..k-1 of the sorted distinct labels."""
    arr = as_array(labels, name)
    if arr.dtype.kind not in "USO":
        arr = int_array(arr, name)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {arr.shape}")
    if arr.dtype.kind == "O" and not all(isinstance(x, (str, int, np.integer)) and
                                         not isinstance(x, bool) for x in arr):
        raise TypeError(f"{name} must hold integers or strings")
    try:
        return np.unique(arr, return_inverse=True)[1].reshape(-1)
    except TypeError:
        raise TypeError(f"{name} must hold integers or strings of one kind, not both") from None


def _final_rows(session: np.ndarray, turns, n: int) -> np.ndarray:
    """For each session 0..k-1 its final row: the first with the largest turn
    (the last row without turns)."""
    rows = np.arange(n)
    if turns is None:
        order = np.lexsort((rows, session))            # by session, then row
        last = np.r_[session[order][1:] != session[order][:-1], True]
        return order[last]
    turn = int_array(turns, "turns")
    if turn.shape != (n,):
        raise ValueError(f"turns must have shape ({n},), got {turn.shape}")
    order = np.lexsort((-rows, turn, session))         # by session, turn, then row descending
    last = np.r_[session[order][1:] != session[order][:-1], True]
    return order[last]


def _grouped(r, inverse, scale, eps, ddof, singleton) -> np.ndarray:
    """Group-relative advantages of float64 rewards r with group indices inverse."""
    n = r.shape[0]
    counts = np.bincount(inverse, minlength=1).astype(np.float64)
    single = counts == 1
    # A group of several rewards one of which is infinite has no mean: its
    # infinite members get inf - inf = NaN, but the others r - inf = -+inf
    # unless a NaN sd divides them (not with scale="none"), so the group is
    # made NaN here. A group of one keeps its singleton rule.
    undefined = (np.bincount(inverse, weights=np.isinf(r), minlength=1) > 0) & ~single
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(inverse, weights=r, minlength=1) / np.maximum(counts, 1)
        if singleton == "raw":
            mean[single] = 0.0
        adv = r - mean[inverse]
        if scale == "group":
            ss = np.bincount(inverse, weights=adv * adv, minlength=1)
            sd = np.sqrt(ss / (counts - ddof))
            sd[single] = 1.0
            adv = adv / (sd[inverse] + eps)
        elif scale == "batch" and n > ddof:
            adv = adv / (np.std(r, ddof=ddof) + eps)
    adv[undefined[inverse]] = np.nan
    if singleton == "zero":
        adv[single[inverse]] = 0.0
    return adv


#: shape_advantages' normalize= as the kernels' code (csrc/shaping.h).
_NORMALIZE_CODES = {"std": 0, "maxabs": 1, "none": 2}


def shape_advantages(base, credit, *, beta=1.0, kappa=1.0, normalize="std", token_counts=None,
                     out=None, threads=None, backend=None) -> np.ndarray:
    r"""Per-action advantages: the shared advantage plus bounded zero-sum credit.

    .. math:: A_{g,i} = b_g + \beta z_{g,i}, \qquad
              z_g = \mathrm{project\_zero\_sum}(\mathrm{normalize}(c_g - \bar c_g), \kappa)

    so the actions of a sequence share its group-relative advantage
    :math:`b_g` on average and are told apart by at most
    :math:`\beta\kappa`. ``normalize="std"`` divides the centered credit by
    its (population) sd, ``"maxabs"`` by its largest magnitude (0 stays 0 in
    both), ``"none"`` leaves it. With ``token_counts`` n the projection is
    weighted, :math:`\sum_i n_{g,i} z_{g,i} = 0`, so the token-weighted mean
    of the advantages over a sequence (shared tokens counting :math:`b_g`)
    stays :math:`b_g` however unevenly the actions' tokens are spread.

    Parameters
    ----------
    base : array_like, shape (...)
        Sequence-level advantages, e.g. :func:`group_advantages`.
    credit : array_like, shape (..., m)
        Per-action credit (Shapley, LOO, ...).
    beta : float
        Scale of the per-action offsets.
    kappa : float
        Bound on each offset before scaling (>= 0).
    normalize : {"std", "maxabs", "none"}
        Scale of the centred credit before the projection: its population
        sd, its largest magnitude, or none.
    token_counts : array_like, shape (..., m), optional
        Tokens of each action (:func:`token_counts`); non-negative, finite.
    out : ndarray, optional
        float64, C-contiguous, writeable, of the result's shape and sharing no
        memory with the inputs; written and returned.
    threads : int, optional
        Threads to split the rows over, at least 1 (default: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one.

    Returns
    -------
    ndarray, shape (..., m), float64
        :math:`A_{g,i}` (``out`` if given).

    Raises
    ------
    ValueError
        If ``credit`` is a scalar or has m = 0; if ``base`` does not have
        ``credit``'s leading shape; if ``beta`` is not finite; if ``kappa`` is
        negative or not finite; if ``normalize`` is not one of its values; if
        ``token_counts`` does not have ``credit``'s shape or has an entry that
        is negative or not finite; if ``out`` has the wrong shape, is not
        writeable and C-contiguous, or overlaps an input; if ``threads`` is
        below 1; or if ``backend`` is not None, "c" or "numba" (or is
        unavailable here).
    TypeError
        If ``base``, ``credit`` or ``token_counts`` is not a float64, float32,
        integer or bool array; if ``beta`` or ``kappa`` is not a real number;
        if ``out`` is not a float64 numpy array; or if ``threads`` is not an
        integer.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> fc.shape_advantages(np.array([0.5]), np.array([[2., 0., 1.]]), beta=0.1,
    ...                     kappa=1.0).round(4)
    array([[0.6, 0.4, 0.5]])
    >>> fc.shape_advantages(np.array([0.5]), np.array([[2., 0., 1.]]), beta=0.1,
    ...                     token_counts=[[1, 3, 1]]).round(4)   # sum n (A - b) = 0
    array([[0.6   , 0.4444, 0.5669]])
    """
    c = real_array(credit, "credit")
    if c.ndim == 0 or c.shape[-1] < 1:
        raise ValueError(f"credit must have shape (..., m) with m >= 1, got {c.shape}")
    b = real_array(base, "base")
    if b.shape != c.shape[:-1]:
        raise ValueError(f"base must have shape {c.shape[:-1]} (credit's leading shape), "
                         f"got {b.shape}")
    beta = BETA.check(beta)
    kappa = KAPPA.check(kappa)
    normalize = NORMALIZE.check(normalize)
    weights = None
    if token_counts is not None:
        weights = real_array(token_counts, "token_counts")
        if not (np.isfinite(weights) & (weights >= 0)).all():
            raise ValueError("token_counts must be finite and >= 0")
        if weights.shape != c.shape:
            raise ValueError(f"token_counts must have shape {c.shape}, got {weights.shape}")
    res = output(out, c.shape, inputs={"credit": (credit, c), "base": (base, b),
                                       "token_counts": (token_counts, weights)})
    m = c.shape[-1]
    n_rows = math.prod(c.shape[:-1])
    if n_rows == 0:
        return res
    # the centring, the scaling, the projection and base + beta z are one
    # compiled pass over blocks of rows (csrc/shaping.h fc_shape_advantages)
    flat = read_only(c.reshape(n_rows, m))
    b = read_only(np.ascontiguousarray(b, dtype=np.float64).reshape(-1))
    w = None if weights is None else read_only(
        np.ascontiguousarray(weights, dtype=np.float64).reshape(-1))
    res_flat = res.reshape(n_rows, m)
    impl = kernels("shaping", resolve("shaping.project", backend))
    code = _NORMALIZE_CODES[normalize]

    def part(a, e):
        impl.shape_advantages(flat[a:e], b[a:e], beta, kappa, code,
                              None if w is None else w[a * m:e * m], res_flat[a:e])

    _parallel.run(part, n_rows, _parallel.n_threads(threads), min_items=_MIN_ROWS_PER_THREAD)
    return res


def _token_inputs(token_action, mask):
    """token_action as int32/int64 (..., T) and mask as uint8 or None."""
    ta = int_array(token_action, "token_action", dtype=None)
    if ta.ndim < 1:
        raise ValueError("token_action must have shape (..., T), got a scalar")
    if mask is None:
        return ta, None
    mk = as_array(mask, "mask")
    if mk.shape != ta.shape:
        raise ValueError(f"mask must have token_action's shape {ta.shape}, got {mk.shape}")
    if mk.dtype.kind not in "biuf":
        raise TypeError(f"mask must be a bool or numeric array, got dtype {mk.dtype}")
    mk = np.ascontiguousarray(mk).view(np.uint8) if mk.dtype == np.bool_ else \
        (mk != 0).view(np.uint8)
    return ta, mk


#: Most actions token_counts counts (token_action values are int32/int64 indices).
_MAX_TOKEN_ACTIONS = 2**31 - 1


def token_counts(token_action, m: int, mask=None) -> np.ndarray:
    r"""Tokens of each action per sequence.

    .. math:: n_{g,i} = \#\{t : a_{g,t} = i,\ \text{mask}_{g,t} \ne 0\}

    Parameters
    ----------
    token_action : array_like of int, shape (..., T)
        Action index of each token, or -1 for a shared token.
    m : int
        Number of actions, 0 <= m < 2**31.
    mask : array_like, shape (..., T), optional
        Tokens where the mask is 0/False are not counted.

    Returns
    -------
    ndarray, shape (..., m), int64
        ``[..., i]`` counts the unmasked tokens with ``token_action == i``.

    Raises
    ------
    TypeError
        If ``m`` is not an integer, ``token_action`` is not an integer array,
        or ``mask`` is not a bool or numeric array.
    ValueError
        If ``m`` is negative or at least 2**31; if ``token_action`` is a
        scalar or has a value outside [-1, m) (its position is named); if
        ``mask`` does not have ``token_action``'s shape; or if the counts need
        more memory than is available.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fc.token_counts([[-1, 0, 0, 1, -1]], 2)
    array([[2, 1]])
    """
    m = check_int(m, "m", lo=0, hi=_MAX_TOKEN_ACTIONS)
    ta, mk = _token_inputs(token_action, mask)
    lead = ta.shape[:-1]
    n_seq = math.prod(lead)
    check_memory(n_seq * m * 8 * 2, f"m = {m} (the counts of {n_seq:,} sequences x m actions)")
    _check_token_range(ta, m)
    rows = ta.reshape(n_seq, ta.shape[-1])
    keep = rows >= 0
    if mk is not None:
        keep &= mk.reshape(rows.shape).astype(bool)
    seq = np.broadcast_to(np.arange(rows.shape[0])[:, None], rows.shape)
    counts = np.bincount(seq[keep] * m + rows[keep], minlength=rows.shape[0] * m)
    return counts.astype(np.int64).reshape(lead + (m,))


def _check_token_range(ta, m):
    bad = np.flatnonzero((ta < -1) | (ta >= m))
    if bad.size:
        _raise_bad_token(ta, m, int(bad[0]))


def _raise_bad_token(ta, m, flat_pos):
    raise ValueError(f"token_action must be -1 (shared) or an action index in [0, {m}); "
                     f"got {ta.reshape(-1)[flat_pos]} at position "
                     f"{_position(flat_pos, ta.shape)}")


def token_advantages(base, action_adv, token_action, mask=None, *, out=None, threads=None,
                     backend=None) -> np.ndarray:
    r"""Lay sequence and action advantages out on the tokens of each response.

    .. math:: A_{g,t} = \begin{cases} 0 & \text{mask}_{g,t} = 0 \\
              b_g & a_{g,t} = -1 \ \text{(shared token)} \\
              A_{g,a_{g,t}} & \text{otherwise} \end{cases}

    The result is the (B, T) tensor TRL's ``GRPOTrainer`` accepts as
    ``inputs["advantages"]`` and verl as ``data.batch["advantages"]`` (see
    docs/trainers.md). Trainers average the loss over tokens; to keep the
    token-weighted mean of each sequence at :math:`b_g`, build
    ``action_adv`` with ``shape_advantages(..., token_counts=token_counts(
    token_action, m, mask))``.

    Parameters
    ----------
    base : array_like, shape (...)
        Sequence-level advantage, kept by shared tokens.
    action_adv : array_like, shape (..., m)
        Advantage of each action (e.g. :func:`shape_advantages`).
    token_action : array_like of int, shape (..., T)
        Action index of each token, -1 for shared tokens (int32 and int64
        are read in place; other integer types are converted).
    mask : array_like, shape (..., T), optional
        The trainer's response/attention mask; tokens where it is 0 get 0.
    out : ndarray, optional
        float32, C-contiguous, writeable, of ``token_action``'s shape and
        sharing no memory with the inputs; written and returned.
    threads : int, optional
        Threads to split the sequences over, at least 1 (default: all cores).
    backend : {None, "c", "numba"}, optional
        Kernel backend; None picks the faster one.

    Returns
    -------
    ndarray, shape (..., T), float32
        :math:`A_{g,t}` (``out`` if given).

    Raises
    ------
    ValueError
        If a token_action is outside [-1, m), naming its position (the range
        is checked inside the single pass over the tokens, so rows before the
        offending one may already be written into ``out``); if
        ``token_action`` is a scalar; if ``mask``, ``action_adv`` or ``base``
        does not have the shape ``token_action`` implies; if ``out`` has the
        wrong shape, is not writeable and C-contiguous, or overlaps an input;
        if ``threads`` is below 1; or if ``backend`` is not None, "c" or
        "numba" (or is unavailable here).
    TypeError
        If ``token_action`` is not an integer array; if ``mask`` is not a bool
        or numeric array; if ``base`` or ``action_adv`` is not a float64,
        float32, integer or bool array; if ``out`` is not a float32 numpy
        array; or if ``threads`` is not an integer.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> fc.token_advantages(np.array([0.5]), np.array([[1.0, -1.0]]),
    ...                     np.array([[-1, 0, 0, 1, -1]]), mask=[[1, 1, 1, 1, 0]])
    array([[ 0.5,  1. ,  1. , -1. ,  0. ]], dtype=float32)
    """
    ta, mk = _token_inputs(token_action, mask)
    lead, n_tok = ta.shape[:-1], ta.shape[-1]
    adv = float64_array(action_adv, "action_adv")
    if adv.ndim != len(lead) + 1 or adv.shape[:-1] != lead:
        raise ValueError(f"action_adv must have shape {lead} + (m,) to match token_action "
                         f"{ta.shape}, got {adv.shape}")
    b = float64_array(base, "base")
    if b.shape != lead:
        raise ValueError(f"base must have shape {lead} (token_action's leading shape), "
                         f"got {b.shape}")
    m = adv.shape[-1]
    impl = kernels("shaping", resolve("shaping.tokens", backend))
    threads = _parallel.n_threads(threads)
    res = output(out, ta.shape, dtype=np.float32,
                 inputs={"base": (base, b), "action_adv": (action_adv, adv),
                         "token_action": (token_action, ta), "mask": (mask, mk)})
    n_seq = math.prod(lead)
    if n_seq == 0 or n_tok == 0:
        return res
    flat_ta = ta.reshape(n_seq, n_tok)
    flat_mk = None if mk is None else mk.reshape(n_seq, n_tok)
    flat_b, flat_adv, flat_res = b.reshape(n_seq), adv.reshape(n_seq, m), res.reshape(n_seq, n_tok)

    def part(a, c):
        bad = impl.token_advantages(flat_b[a:c], flat_adv[a:c], flat_ta[a:c],
                                    None if flat_mk is None else flat_mk[a:c], flat_res[a:c])
        return bad if bad < 0 else a * n_tok + bad

    bad = [x for x in _parallel.run(part, n_seq, threads,
                                    min_items=max(1, _MIN_TOKENS_PER_THREAD // n_tok))
           if x >= 0]
    if bad:
        _raise_bad_token(ta, m, bad[0])
    return res
