"""Monte-Carlo Shapley values by antithetic permutation sampling.

For games with too many players for a table, or whose every evaluation is a
costly replay. A walk along a uniformly random order pi of the players
evaluates v on its m + 1 prefixes and credits each player with its marginal
v(prefix + i) - v(prefix); the mean marginal over orders is the Shapley value

    phi_i = E_pi [ v(P_i^pi + i) - v(P_i^pi) ],

P_i^pi the players before i in pi. Walks come in antithetic pairs (an order
and its reverse; the pair's average is one sample) or alone, and the reported
standard error is the sample sd over sqrt(number of samples), so
``est.ci(0.95)`` is a 95% confidence interval (Student t quantiles). A
stochastic game's sd is estimated with pseudo-samples at the ends of its
outcome range, so that a sample that happens not to vary does not pass for
certainty (see :class:`ShapleyEstimate`).

Permutations come from the counter-based RNG keyed by (seed, game index,
sampling unit): the same seed gives the same permutations, and the same
estimates, on the C and Numba backends and for any thread count.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _parallel
from ._backend import kernels, resolve
from ._constants import MASKED_MAX_FEATURES, SAMPLING_MAX_PLAYERS, STATS
from ._params import MIN_SAMPLES, SEED
from ._validation import check_bool, check_float, check_int, check_open_unit
from .games import (CALLABLE, JITTED, MAX_MASK_PLAYERS, STOCHASTIC, TABLE, Evaluator, as_game,
                    walk_cost)

__all__ = ["ShapleyEstimate", "permutation_shapley"]

#: Walks run when neither ``permutations`` nor ``budget`` is given.
DEFAULT_PERMUTATIONS = 1000
#: Most players a sampled game may have (permutations are int32 rows).
MAX_PLAYERS = SAMPLING_MAX_PLAYERS
_UNLIMITED = 2**62
#: The kernel (and so the backend) that drives each kind of game.
_KERNEL = {TABLE: "sampling.tables", CALLABLE: "sampling.permutations",
           JITTED: "sampling.jitted", STOCHASTIC: "sampling.jitted"}


@dataclass(frozen=True)
class ShapleyEstimate:
    r"""A sampled Shapley value with its error bars.

    A player's value is the mean :math:`\bar x` of its n samples
    :math:`x_1..x_n` (the marginals of one walk, or the average of an
    antithetic pair), its standard error :math:`s / \sqrt n` and its interval
    :math:`\bar x \pm t_{(1+\mathrm{level})/2,\ n-1}\, s / \sqrt n`, where
    :math:`SS = \sum_j (x_j - \bar x)^2` and

    - for a table or a deterministic game, :math:`s^2 = SS / (n - 1)`, the
      sample variance;
    - for a stochastic game, whose draws lie in ``bounds`` = [lo, hi] so that
      every sample lies in [-w, w], w = hi - lo,

      .. math:: s^2 = \frac{SS + c\,[(w - \bar x)^2 + (w + \bar x)^2]}{n - 1 + 2c},
                \qquad c = 2,

      the sample variance with c pseudo-samples added at each end of that
      range (Agresti and Coull's "add two successes and two failures" of
      the binomial, for any bounded outcome).

    Why: a few draws of a rare 0/1 outcome often do not vary at all, and
    SS = 0 would report the value as exact. With the pseudo-samples the
    interval keeps a half-width of about 2 t w / n when every sample agreed
    (an outcome unseen in n draws can still have probability about 3.7 / n
    at 95%), and its inflation fades as 1/n beside the 1/sqrt(n) sampling
    error. The 95% interval covered the exact values in at least 94% of
    seeds for every player of the trajectory SCMs of
    :mod:`fastcredit.synthetic` from 10 samples on, with and without common
    random numbers (tests/test_sampling_coverage.py), where the plain t
    interval covered as few as 4% (rare outcomes, common random numbers).
    A stochastic game's interval has width 0 only when lo = hi, a game that
    provably cannot vary. A deterministic game keeps the plain t interval:
    its only randomness is the choice of orders, and a player that matters
    in few orders can still go unseen by a small sample.

    Made by :func:`permutation_shapley`.

    Parameters
    ----------
    values : ndarray, shape (..., m)
        Mean marginal of each player over the samples.
    stderr : ndarray, shape (..., m)
        s / sqrt(n_samples), s as above (``inf`` when there is one sample).
    n_evals : int or ndarray (...)
        Game evaluations spent (for a table: table reads).
    n_permutations : int or ndarray (...)
        Permutation walks completed; a reversed walk counts as one.
    n_samples : int or ndarray (...)
        Independent samples averaged: antithetic pairs, or walks.
    truncated : bool or ndarray (...)
        True when the budget stopped sampling before ``permutations`` walks.
    bounds : (float, float) or None
        A stochastic game's outcome range [lo, hi] that ``stderr`` was
        regularised with: the declared bounds, or else the range of the draws
        seen (if every draw was the same value, that says nothing of the
        range, and ``stderr`` is ``inf``). None for deterministic games.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> glove = np.array([0., 0., 0., 1., 0., 1., 0., 1.])  # L = {0}, R = {1, 2}
    >>> est = fc.permutation_shapley(glove, permutations=4, seed=0)
    >>> est.values, est.stderr, est.n_samples        # 2 antithetic pairs
    (array([0.75, 0.25, 0.  ]), array([0.25, 0.25, 0.  ]), 2)
    >>> low, high = est.ci(0.95)                     # t quantile 12.71 at 1 df
    >>> high.round(3)
    array([3.927, 3.427, 0.   ])
    """

    values: np.ndarray
    stderr: np.ndarray
    n_evals: int | np.ndarray
    n_permutations: int | np.ndarray
    n_samples: int | np.ndarray
    truncated: bool | np.ndarray
    bounds: tuple[float, float] | None = None

    def ci(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        r"""Two-sided confidence interval ``(low, high)`` of each value.

        .. math:: \hat\phi_i \pm t_{(1+\mathrm{level})/2,\ n-1} \cdot \mathrm{stderr}_i

        with n the number of samples (the CLT interval with Student t
        quantiles, so small n are not overconfident: with 2 samples the 95%
        half-width is 12.7 stderr); ``(-inf, +inf)`` for every player of a
        game with n = 1 (one walk, or one antithetic pair: there is no spread
        to estimate, and ``stderr`` is inf). For a stochastic game
        ``stderr`` carries the pseudo-samples described above.
        """
        # the Student t quantile itself (scipy.stats would cost a second to import)
        from scipy.special import stdtrit

        level = check_open_unit(level, "level")
        df = np.asarray(self.n_samples, dtype=np.float64) - 1.0
        with np.errstate(invalid="ignore"):
            q = np.where(df >= 1.0, stdtrit(np.maximum(df, 1.0), 0.5 + level / 2.0), np.inf)
        half = q[..., None] * self.stderr
        return self.values - half, self.values + half


def _plan(m, permutations, budget, antithetic, cache, crn=False):
    """(max_walks, budget, walk cost) for the kernels, from the user's limits."""
    unit_walks = 2 if antithetic else 1
    cost = walk_cost(m, cache=cache, crn=crn)
    unit_cost = unit_walks * cost
    fixed_cost = 2 if cache else 0
    if budget is not None:
        budget = check_int(budget, "budget", lo=1, hi=_UNLIMITED)
        if budget < fixed_cost + unit_cost:
            what = "an antithetic pair of walks" if antithetic else "one walk"
            raise ValueError(f"budget must cover {what}: {fixed_cost + unit_cost} evaluations "
                             f"for m = {m} players, got {budget}")
    if permutations is None:
        if budget is None or unit_cost == 0:
            max_walks = DEFAULT_PERMUTATIONS
        else:
            max_walks = unit_walks * ((budget - fixed_cost) // unit_cost)
    else:
        max_walks = check_int(permutations, "permutations", lo=unit_walks, hi=_UNLIMITED)
        if max_walks % unit_walks:
            raise ValueError(f"permutations must be even with antithetic=True (each order "
                             f"is walked with its reverse), got {max_walks}")
    return max_walks, _UNLIMITED if budget is None else budget, cost


class _Moments:
    """Running sums of samples shifted by the first one (d = x - x_1,
    s1 += d, s2 += d * d), finished as csrc/sampling.c does."""

    def __init__(self, m):
        self.first = None
        self.s1 = np.zeros(m)
        self.s2 = np.zeros(m)
        self.n = 0

    def add(self, samples):
        if self.first is None:
            self.first = samples[0].copy()
        d = samples - self.first
        self.s1 += d.sum(axis=0)
        self.s2 += (d * d).sum(axis=0)
        self.n += len(samples)

    def finish(self):
        """(values, stderr)."""
        nn = float(self.n)
        values = self.first + self.s1 / nn
        if self.n < 2:
            return values, np.full_like(values, np.inf)
        with np.errstate(invalid="ignore"):
            var = (self.s2 - self.s1 * self.s1 / nn) / (nn - 1.0)
            return values, np.sqrt(np.where(var < 0.0, 0.0, var) / nn)


def _estimate(values, stderr, stats, bounds=None):
    lead = stats.shape[:-1]

    def pick(col, dtype):
        arr = stats[..., col].astype(dtype)
        return arr.item() if not lead else arr

    return ShapleyEstimate(values, stderr, pick(0, np.int64), pick(1, np.int64),
                           pick(2, np.int64), pick(3, bool), bounds)


def _outcome_bounds(game, bounds):
    """The declared outcome range (lo, hi) of a stochastic game, from the
    ``bounds`` argument or else the game's ``bounds`` attribute; None when
    neither declares one. Refused for deterministic games, whose samples it
    would not change."""
    source = "bounds"
    if bounds is None and game.stochastic:
        bounds = getattr(game.value, "bounds", None)
        source = "the game's bounds attribute"
    if bounds is None:
        return None
    if not game.stochastic:
        raise ValueError("bounds applies to stochastic games fn(mask, key) only; the samples "
                         "of a deterministic game keep their plain sample variance")
    if isinstance(bounds, (str, bytes)) or np.ndim(bounds) != 1 or len(bounds) != 2:
        raise TypeError(f"{source} must be a pair (lo, hi), got {bounds!r}")
    lo = check_float(bounds[0], f"{source}[0]")
    hi = check_float(bounds[1], f"{source}[1]", lo=lo)
    return lo, hi


def _tables(game, options, seed, threads):
    m = game.m
    if options["crn"]:
        raise ValueError("crn=True needs a stochastic game; a table is deterministic")
    cache = options["cache"] is not False
    max_walks, budget, _ = _plan(m, options["permutations"], options["budget"],
                                 options["antithetic"], cache)
    impl = kernels("sampling", game.backend)
    flat = game.value
    n_games = flat.shape[0]
    values = np.empty((n_games, m))
    stderr = np.empty((n_games, m))
    stats = np.zeros((n_games, STATS), dtype=np.int64)
    if n_games:
        _parallel.run(lambda a, b: impl.permutation_shapley(
            flat[a:b], seed, a, max_walks, budget, options["antithetic"], cache,
            options["tol"], options["min_samples"], values[a:b], stderr[a:b], stats[a:b]),
            n_games, threads)
    lead = game.lead
    return _estimate(values.reshape(lead + (m,)), stderr.reshape(lead + (m,)),
                     stats.reshape(lead + (STATS,)))


def _jitted(game, options, seed):
    from ._jit.games import estimate_game
    from ._numba.sampling import STATUS_NOT_FINITE, STATUS_OUT_OF_BOUNDS

    m, stochastic, cache = game.m, game.stochastic, options["cache"]
    if stochastic and cache:
        raise ValueError("cache=True is refused for a stochastic game fn(mask, key): reusing "
                         "one draw of v(S) across permutations hides its variance and "
                         "reports false confidence")
    if options["crn"] and not stochastic:
        raise ValueError("crn=True needs a stochastic game fn(mask, key)")
    cache = not stochastic and cache is not False
    max_walks, budget, _ = _plan(m, options["permutations"], options["budget"],
                                 options["antithetic"], cache, options["crn"])
    declared = options["bounds"]
    span = np.array(declared if declared else (np.inf, -np.inf))
    values = np.empty(m)
    stderr = np.empty(m)
    stats = np.zeros(STATS, dtype=np.int64)
    bad = np.zeros(1, dtype=np.uint64)
    try:
        status = estimate_game(game.value, m, seed, max_walks, budget, options["antithetic"],
                               cache, options["crn"], options["tol"], options["min_samples"],
                               values, stderr, stats, span, declared is not None, bad)
    except Exception as exc:
        kind = "fn(mask, key)" if stochastic else "fn(mask)"
        raise RuntimeError(f"the @njit game {kind} failed during sampling (m = {m}): "
                           f"{exc!r}") from exc
    if status == STATUS_NOT_FINITE:
        raise ValueError(f"game returned a non-finite value for coalition mask {int(bad[0])}")
    if status == STATUS_OUT_OF_BOUNDS:
        raise ValueError(f"game returned a value outside its bounds {declared} for coalition "
                         f"mask {int(bad[0])}")
    return _estimate(values, stderr, stats, (float(span[0]), float(span[1])) if stochastic
                     else None)


def _prefix_values(ev, orders, cache, v0, vn):
    """v on the m + 1 prefixes of each walk: (W, m + 1)."""
    w, m = orders.shape
    out = np.empty((w, m + 1))
    lo, hi = (1, m) if cache else (0, m + 1)
    if cache:
        out[:, 0], out[:, m] = v0, vn
    if m <= MAX_MASK_PLAYERS:
        bits = np.left_shift(np.uint64(1), orders.astype(np.uint64))
        prefix = np.zeros((w, m + 1), dtype=np.uint64)
        np.bitwise_or.accumulate(bits, axis=1, out=prefix[:, 1:])
        out[:, lo:hi] = ev.masks(prefix[:, lo:hi].reshape(-1)).reshape(w, hi - lo)
    else:
        rank = np.empty_like(orders)
        np.put_along_axis(rank, orders, np.arange(m, dtype=orders.dtype)[None, :], axis=1)
        sizes = np.arange(lo, hi)
        rows = rank[:, None, :] < sizes[None, :, None]
        out[:, lo:hi] = ev.rows(rows.reshape(-1, m)).reshape(w, hi - lo)
    return out


def _python(game, options, seed):
    m = game.m
    if options["crn"]:
        raise ValueError("crn=True needs a stochastic @njit game fn(mask, key)")
    # a plain Python callable may be random (an agent's replay): cached only
    # when declared deterministic (fc.games.deterministic) or cache=True
    cache = game.deterministic if options["cache"] is None else options["cache"]
    antithetic = options["antithetic"]
    max_walks, budget, cost = _plan(m, options["permutations"], options["budget"], antithetic,
                                    cache)
    ev = Evaluator(game, memo=cache and m <= MAX_MASK_PLAYERS)
    full_row = np.ones((1, m), dtype=bool)
    v0 = vn = 0.0
    if cache:
        if m <= MAX_MASK_PLAYERS:
            full = np.uint64(2**m - 1)
            v0, vn = ev.masks(np.array([0, full], dtype=np.uint64))
        else:
            v0, vn = ev.rows(np.vstack([~full_row, full_row]))
    perm_kernel = kernels("sampling", game.backend).permutations
    unit_walks = 2 if antithetic else 1
    unit_cost = unit_walks * cost
    units_per_call = max(1, options["chunk"] // (unit_walks * (m + 1)))
    max_units = max_walks // unit_walks
    moments = _Moments(m)
    truncated = False
    while moments.n < max_units:
        affordable = (budget - ev.n_evals) // unit_cost if unit_cost else max_units
        units = min(units_per_call, max_units - moments.n, affordable)
        if units <= 0:
            truncated = True
            break
        perms = np.empty((units, m), dtype=np.int32)
        perm_kernel(seed, 0, moments.n, perms)
        orders = np.concatenate([perms, perms[:, ::-1]]) if antithetic else perms
        vals = _prefix_values(ev, orders, cache, v0, vn)
        marginals = np.empty(orders.shape)
        np.put_along_axis(marginals, orders, np.diff(vals, axis=1), axis=1)
        moments.add(0.5 * (marginals[:units] + marginals[units:]) if antithetic
                    else marginals)
        tol = options["tol"]
        if tol > 0 and moments.n >= options["min_samples"] and np.all(
                moments.finish()[1] <= tol):
            break
    values, stderr = moments.finish()
    stats = np.array([ev.n_evals, moments.n * unit_walks, moments.n, truncated],
                     dtype=np.int64)
    return _estimate(values, stderr, stats)


def permutation_shapley(game, m: int | None = None, *, permutations: int | None = None,
                        budget: int | None = None, antithetic: bool = True,
                        cache: bool | None = None, tol: float | None = None,
                        min_samples: int = 32, crn: bool = False,
                        bounds: tuple[float, float] | None = None, coalitions: str = "mask",
                        chunk: int = 1 << 16, seed: int = 0, threads: int | None = None,
                        backend: str | None = None) -> ShapleyEstimate:
    r"""Shapley values by (antithetic) permutation sampling, with error bars.

    A walk along a random order :math:`\pi` of the m players evaluates v on
    its m + 1 prefixes and credits each player its marginal
    :math:`v(P \cup \{i\}) - v(P)`, P the players before i; averaged over
    uniformly random orders this is the Shapley value. With
    ``antithetic=True`` every order is walked together with its reverse and
    the pair's average marginal is one sample (on games with monotone
    marginals, e.g. redundancy or complementarity, the two walks are
    negatively correlated and the pair average has a smaller variance than two
    independent walks). ``values`` is the mean of the samples,
    ``stderr = sd(samples) / sqrt(n_samples)``, with the sd of a stochastic
    game's samples estimated with two pseudo-samples at each end of their
    range, so that samples that happen not to vary do not report certainty
    (the math is in :class:`ShapleyEstimate`). Per sample the marginals sum
    to v(N) - v({}) (efficiency), for a deterministic game.

    Parameters
    ----------
    game : array_like or callable
        One of

        - a coalition table ``(2**m,)`` or a batch of tables ``(..., 2**m)``
          (float64/float32, 1 <= m <= 30): one estimate per game, games split
          over threads, C or Numba backend;
        - an ``@njit`` function ``fn(mask: uint64) -> float`` (m <= 64): the
          whole sampling loop runs compiled;
        - a stochastic ``@njit`` function ``fn(mask: uint64, key: uint64) ->
          float`` returning one random draw whose mean is v(mask); the sampler
          hands every evaluation a fresh key (a uint64 of random bits: seed
          fastcredit._numba.rng streams with it). Never cached;
        - a vectorised Python callable on a batch of coalitions: a uint64 mask
          array ``(n,)``, or a bool matrix ``(n, m)`` with
          ``coalitions="bool"`` (as shapiq games take; always when m > 64),
          returning n finite real values (m <= 4096). It is called with all the prefixes
          of many walks at once (about ``chunk`` coalitions per call), in
          the same order for a seed, and evaluated afresh every time unless
          declared deterministic (see ``cache``), so it may be random (one
          draw per coalition, e.g. a replay of an agent): its values are
          then one draw each and the interval is the plain t interval over
          the samples.
    m : int
        Number of players (taken from the table for table games).
    permutations : int, optional
        Walks to run (reversed walks count; even when antithetic). Default:
        as many as ``budget`` affords, or 1000 without a budget.
    budget : int, optional
        Hard cap on game evaluations. A walk (antithetic pair) starts only if
        its whole cost fits, so evaluations never exceed the budget; walks that
        do not fit are not run and ``truncated`` is True. Must cover one walk
        (pair) plus the cached v({}) and v(N).
    antithetic : bool
        Pair each order with its reverse.
    cache : bool, optional
        None: cache only games known to be deterministic: tables, @njit
        ``fn(mask)`` games, and Python callables their caller declared
        deterministic with :func:`fastcredit.games.deterministic`; never a
        plain Python callable (it may be a replay of an agent, whose cached
        draw would fake certainty) and never a stochastic game. ``True``
        caches a Python callable for this call. Caching reads v({}) and v(N)
        once (2 evaluations; a walk then costs m - 1) and, for Python
        callables with m <= 64, evaluates each distinct coalition once over
        the whole run. Without it a walk costs m + 1. ``cache=True`` on a
        stochastic @njit game raises ValueError: reusing one draw of v(S)
        across permutations collapses the variance and reports false
        confidence.
    tol : float, optional
        Stop early once every stderr is <= tol (checked after each sample
        from ``min_samples`` on; after each batch for Python callables).
    min_samples : int
        Samples before ``tol`` may stop the run (>= 2; small samples of a
        0/1 game often have sd 0 by chance).
    crn : bool
        Common random numbers, stochastic games only: the two prefixes of
        each marginal are evaluated with the same key, so for games whose
        randomness is driven by the key (the resampled steps of an agent
        trajectory) most noise cancels in the difference. Each marginal stays
        unbiased, but a walk costs 2m evaluations instead of m + 1 and the
        per-walk marginals no longer telescope to one v(N) - v({}) draw.
    bounds : (float, float), optional
        Stochastic games only: the range [lo, hi] every draw lies in (e.g.
        (0, 1) for a 0/1 outcome), which sets the pseudo-samples of the
        stderr; a draw outside it raises ValueError. Default: the game's own
        ``bounds`` attribute when it has one (the trajectory SCMs of
        :mod:`fastcredit.synthetic` declare (0, 1)), else the range of the
        draws seen, which is only an estimate of it (and says nothing when
        every draw was equal: the stderr is then infinite).
    coalitions : {"mask", "bool"}
        How a Python callable receives coalitions (bool matrices whenever
        m > 64, which uint64 masks cannot hold).
    chunk : int
        About how many coalitions a Python callable receives per call.
    seed : int
        Seed of the permutations and draw keys, in [0, 2**64).
    threads : int, optional
        Threads for batches of tables (default all cores); results do not
        depend on it.
    backend : {None, "c", "numba"}
        For table games (and the permutations of Python callables); @njit
        games always run on Numba.

    Returns
    -------
    ShapleyEstimate
        ``values`` and ``stderr`` of shape (..., m); ``ci(level)``;
        ``n_evals``, ``n_permutations``, ``n_samples``, ``truncated`` (arrays
        of the leading shape for a batch of tables); ``bounds``, the outcome
        range a stochastic game's stderr used.

    Raises
    ------
    ValueError
        If ``m`` is missing for a function game, below 1, or above 4096 (64
        for an @njit game), or does not match a table; if a table's last axis
        is not 2**m with 1 <= m <= 30; if ``permutations`` is below 1 (2 when
        antithetic), or odd with ``antithetic=True``; if ``budget`` cannot
        cover one walk (pair) plus the cached v({}) and v(N); if ``tol`` is
        negative or not finite; if ``min_samples`` is below 2; if ``chunk`` or
        ``threads`` is below 1; if ``seed`` is outside [0, 2**64); if
        ``coalitions`` or ``backend`` is not one of its values (or
        ``backend="c"`` is asked for an @njit game); if ``cache=True`` is given
        for a stochastic game, or ``crn=True`` or ``bounds`` for a
        deterministic one; if ``bounds`` has hi < lo or a non-finite end; or
        if the game returns a non-finite value, the wrong number of values,
        or a stochastic draw outside the declared bounds (the coalition is
        named). Nothing partial is returned.
    TypeError
        If an integer argument (``m``, ``permutations``, ``budget``,
        ``min_samples``, ``chunk``, ``seed``, ``threads``) is not an
        integer; if ``antithetic``, ``cache`` or ``crn`` is not a bool; if
        ``tol`` or an end of ``bounds`` is not a real number, or ``bounds``
        is not a pair; if a table does not hold real numbers; or if the game
        returns values that are not real numbers, or an @njit game does not
        compile for uint64 arguments.
    RuntimeError
        If the game raises (a Python game's exception is wrapped, naming the
        batch it was called on) or an @njit game fails during sampling.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> glove = np.array([0., 0., 0., 1., 0., 1., 0., 1.])  # L = {0}, R = {1, 2}
    >>> est = fc.permutation_shapley(glove, permutations=2000, seed=1)
    >>> bool(np.all(np.abs(est.values - [2/3, 1/6, 1/6]) < 4 * est.stderr + 1e-12))
    True
    >>> low, high = est.ci(0.95)
    """
    options = {
        "permutations": permutations, "budget": budget,
        "antithetic": check_bool(antithetic, "antithetic"), "crn": check_bool(crn, "crn"),
        "cache": None if cache is None else check_bool(cache, "cache"),
        "tol": 0.0 if tol is None else check_float(tol, "tol", lo=0.0),
        "min_samples": MIN_SAMPLES.check(min_samples),
        "chunk": check_int(chunk, "chunk", lo=1),
    }
    seed = np.uint64(SEED.check(seed))       # numba would take 2**63.. as out of range
    threads = _parallel.n_threads(threads)
    game = as_game(game, m, coalitions=coalitions, kernels=_KERNEL, backend=backend)
    options["bounds"] = _outcome_bounds(game, bounds)
    if game.kind == TABLE:
        return _tables(game, options, seed, threads)
    if game.kind == CALLABLE:
        return _python(game, options, seed)
    return _jitted(game, options, seed)


# --- the kernels of fastcredit.shap's explainers (private: their callers build
# --- and check the arrays; each is checked here once more where a Numba twin
# --- would otherwise read out of bounds)

def _tree_permutations(children, seed: int, n_units: int, first_unit: int = 0,
                       backend=None) -> np.ndarray:
    """The orders (n_units, m) int32 of the m players that keep every cluster
    of the binary tree ``children`` ((m - 1, 2) int64: the nodes each row of
    a linkage matrix joins) together, units first_unit.. of ``seed``'s
    stream (csrc/sampling.h, fc_sampling_tree_permutations)."""
    children = np.ascontiguousarray(children, dtype=np.int64)
    m = len(children) + 1
    if children.shape != (m - 1, 2) or not 1 <= m <= MAX_PLAYERS:
        raise ValueError(f"children must be a binary tree's (m - 1, 2) rows for 1 <= m <= "
                         f"{MAX_PLAYERS}, got shape {children.shape}")
    rows = np.arange(m - 1)[:, None]
    if (children < 0).any() or (children >= m + rows).any() or (
            np.bincount(children.ravel(), minlength=2 * m - 2) != 1).any():
        raise ValueError("children must join each node but the root once, a player or an "
                         "earlier row's cluster")
    perms = np.empty((n_units, m), dtype=np.int32)
    impl = kernels("sampling", resolve("sampling.tree_permutations", backend))
    # uint64 always: a Numba overload compiled for an int64 seed would take a
    # seed above 2**63 by unsafe conversion and overflow
    impl.tree_permutations(np.uint64(SEED.check(seed)), np.uint64(0), first_unit, children,
                           perms)
    return perms


def _masked_rows(background, xs, masks, owner, out=None, backend=None) -> np.ndarray:
    """The masked rows (c n_b, m) of coalitions ``masks`` ((c,) uint64 over
    the m features) of rows ``xs[owner]`` over the background (n_b, m):
    x's values where a coalition has the feature, the background row's
    elsewhere (csrc/sampling.h, fc_masked_rows); written into ``out`` when
    given (float64, C-contiguous, at least c n_b rows: its first c n_b are
    written and returned). ValueError unless every mask is below 2**m and
    every owner in [0, n_x): checked by the kernel, in its own pass before it
    writes (the three NumPy reductions that checked them here were ~5 us of
    a 45 us call, AMD EPYC Zen 4)."""
    background = np.ascontiguousarray(background, dtype=np.float64)
    xs = np.ascontiguousarray(xs, dtype=np.float64)
    masks = np.ascontiguousarray(masks, dtype=np.uint64)
    owner = np.ascontiguousarray(owner, dtype=np.int64)
    (n_b, m), n_x = background.shape, len(xs)
    if (not 1 <= m <= MASKED_MAX_FEATURES or n_b < 1 or xs.shape != (n_x, m) or n_x < 1
            or owner.shape != masks.shape or masks.ndim != 1):
        raise ValueError(f"masked rows need a background (n_b >= 1, 1 <= m <= "
                         f"{MASKED_MAX_FEATURES}), rows (n_x >= 1, m) and one owner per mask; "
                         f"got {background.shape}, {xs.shape}, {masks.shape}, {owner.shape}")
    if out is None:
        rows = np.empty((len(masks) * n_b, m))
    elif (out.dtype != np.float64 or out.ndim != 2 or out.shape[1] != m
          or len(out) < len(masks) * n_b or not out.flags.c_contiguous):
        raise ValueError(f"out must be float64, C-contiguous, of shape (>= {len(masks) * n_b}, "
                         f"{m}); got {out.dtype} {out.shape}")
    else:
        rows = out[:len(masks) * n_b]
    impl = kernels("sampling", resolve("sampling.masked_rows", backend))
    impl.masked_rows(background, xs, masks, owner, rows)
    return rows


def _background_mean(outputs, weights=None, backend=None) -> np.ndarray:
    """The average (c, k) of model outputs (c, n_b, k) over the background
    rows, weighted by ``weights`` (n_b,) when given, summed in row order
    (csrc/sampling.h, fc_background_mean). ValueError for n_b = 0 or k = 0
    from the kernel (a call of 1,500 coalitions takes 5-8 us: each check
    here is a few percent of it)."""
    outputs = np.ascontiguousarray(outputs, dtype=np.float64)
    if outputs.ndim != 3:
        raise ValueError(f"outputs must be (c, n_b >= 1, k >= 1), got shape {outputs.shape}")
    if weights is not None:
        weights = np.ascontiguousarray(weights, dtype=np.float64)
        if weights.shape != outputs.shape[1:2]:
            raise ValueError(f"weights must be ({outputs.shape[1]},), got {weights.shape}")
    means = np.empty((len(outputs), outputs.shape[2]))
    impl = kernels("sampling", resolve("sampling.background_mean", backend))
    impl.background_mean(outputs, weights, means)
    return means


def _affordable_pairs(perms, max_evals: int, backend=None):
    """(pairs (n,), counts (n,), masks (n, capacity)): for each row of orders
    ``perms`` (n, n_pairs, k) int32, the most antithetic pairs (the first
    ones, walked forward and backward) whose distinct coalitions, with {} and
    N, fit in ``max_evals``, their number and those coalitions in increasing
    order, each row padded with 2**64 - 1 (csrc/sampling.h,
    fc_affordable_pairs; capacity = min(max_evals, 2 + 2 (k - 1) n_pairs)).
    ValueError when an order is not a permutation (from the kernel)."""
    perms = np.ascontiguousarray(perms, dtype=np.int32)
    if perms.ndim != 3 or not 2 <= perms.shape[2] <= MASKED_MAX_FEATURES:
        raise ValueError(f"perms must be (rows, pairs, k) with 2 <= k <= {MASKED_MAX_FEATURES}, "
                         f"got shape {perms.shape}")
    max_evals = check_int(max_evals, "max_evals", lo=2)
    n_rows, n_pairs, k = perms.shape
    capacity = min(max_evals, 2 + 2 * (k - 1) * n_pairs)
    pairs, counts = np.empty(n_rows, dtype=np.int64), np.empty(n_rows, dtype=np.int64)
    masks = np.empty((n_rows, capacity), dtype=np.uint64)
    kernels("sampling", resolve("sampling.affordable_pairs", backend)).affordable_pairs(
        perms, max_evals, pairs, counts, masks)
    return pairs, counts, masks
