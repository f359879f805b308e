"""Synthetic data and games with known answers, for the demo, tests and benchmarks.

Deterministic per seed.
"""
from __future__ import annotations

from dataclasses import dataclass as _dataclass
from dataclasses import field as _field

import numpy as _np

from . import _parallel
from ._constants import RNG_MAX_RANGE as _RNG_MAX_RANGE
from ._constants import SYNTHETIC_MAX_INDEX as _SYNTHETIC_MAX_INDEX
from ._constants import SYNTHETIC_MAX_NOISE as _SYNTHETIC_MAX_NOISE
from ._params import ACTIONS as _ACTIONS
from ._params import SEARCH_PRESET as _SEARCH_PRESET
from ._params import SEARCH_VALUE as _SEARCH_VALUE
from ._params import SEED as _SEED
from ._validation import as_sequence as _as_sequence
from ._validation import check_float as _check_float
from ._validation import check_int as _check_int
from ._validation import check_memory as _check_memory
from ._validation import float64_array as _float64_array

# --- sponsored search (auction replay) --------------------------------------
# m query rewrites per request each retrieve up to k ads of a shared catalogue:
# mostly from the request's topic (so rewrites overlap), partly from a topic the
# rewrite drifted to; some rewrites retrieve little or nothing. Requests are
# drawn by the kernels of the "synthetic" family (csrc/synthetic.c and its
# Numba twin fastcredit/_numba/synthetic.py, the same bits) from the
# counter-based RNG keyed by (seed, request index), so any range of the
# stream can be generated alone, on any threads.


@_dataclass(frozen=True)
class SearchPreset:
    """A named setting of :func:`sponsored_search` and of the auction its
    requests are replayed with.

    The presets are in :data:`SEARCH_PRESETS`; :func:`search_preset` looks one
    up by name.

    Parameters
    ----------
    name : str
        The preset's name.
    generator : dict
        Keyword arguments of :func:`sponsored_search` (all but n_requests,
        seed, start, threads and backend).
    replay : dict
        Keyword arguments of :func:`fastcredit.auction_replay` (slots,
        reserve, capacity, pricing); the mode is the caller's choice.
    summary : str
        One line saying what the preset is for.

    Examples
    --------
    >>> import fastcredit as fc
    >>> preset = fc.synthetic.SEARCH_PRESETS["default"]
    >>> preset.name, preset.generator["m"], preset.replay["pricing"]
    ('default', 5, 'first')
    """

    name: str
    generator: dict
    replay: dict
    summary: str


#: The presets of :func:`sponsored_search`, by name.
#:
#: ``"default"``: click-realised values and a first-price top-4 auction with
#: no reserve (the generator's original setting; the throughput benchmarks
#: use it). Its replay landscape has only substitutes (a first-price sum of
#: nonnegative values over a filtered ranking can only lose by merging
#: pools) and many zero tables (a quarter of the requests earn nothing).
#:
#: ``"realistic"``: expected values (bid x pCTR), a top-4 generalised
#: second-price auction with a reserve, strong per-rewrite pCTR noise (the
#: same ad is retrieved by several rewrites with different scores) and a
#: small catalogue per topic (rewrites share their top ads). The GSP price
#: of a winner is the next ad's score, so adding a rewrite that brings a
#: competitor raises prices: complements next to substitutes. Calibrated so
#: that its replay landscape's statistics fall near the production figures
#: of the set-intervention paper (docs/study.md gives the figures, the
#: bands and the measured values).
SEARCH_PRESETS = {
    "default": SearchPreset(
        "default",
        dict(m=5, k=20, catalogue=50_000, topics=500, empty=0.08, short=0.12, noise=0.3,
             value_model="click", bid_scale=1.0),
        dict(slots=4, reserve=0.0, capacity=None, pricing="first"),
        "click-realised values, first-price top-4 auction (substitutes only)"),
    "realistic": SearchPreset(
        "realistic",
        dict(m=5, k=20, catalogue=5_000, topics=500, empty=0.12, short=0.12, noise=0.6,
             value_model="expected", bid_scale=5.0),
        dict(slots=4, reserve=0.75, capacity=None, pricing="gsp"),
        "expected values, GSP top-4 auction with a reserve, noisy per-rewrite pCTR "
        "(substitutes and complements; calibrated to the set-intervention paper)"),
}


def search_preset(preset: str = "default") -> SearchPreset:
    """The :class:`SearchPreset` called ``preset`` (see :data:`SEARCH_PRESETS`).

    Parameters
    ----------
    preset : {"default", "realistic"}
        The preset's name.

    Returns
    -------
    SearchPreset
        Its generator options, auction options and summary.

    Raises
    ------
    ValueError
        If ``preset`` is not one of the names above.

    Examples
    --------
    >>> import fastcredit as fc
    >>> preset = fc.synthetic.search_preset("realistic")
    >>> pools = fc.synthetic.sponsored_search(100, preset="realistic", seed=1)
    >>> fc.auction_replay(pools, mode="rerun", **preset.replay).shape
    (100, 32)
    """
    return SEARCH_PRESETS[_SEARCH_PRESET.check(preset)]


def sponsored_search(n_requests: int, m: int | None = None, k: int | None = None,
                     seed: int = 0, *, preset: str = "default", start: int = 0,
                     catalogue: int | None = None, topics: int | None = None,
                     empty: float | None = None, short: float | None = None,
                     noise: float | None = None, value_model: str | None = None,
                     bid_scale: float | None = None, threads=None, backend=None):
    """Synthetic sponsored-search candidate pools (deterministic per seed).

    A catalogue of ``catalogue`` ads in ``topics`` equal topics, each ad with a
    log-normal bid (``bid_scale`` times lognormal(0, 0.8)) and a Beta(2, 10)
    click-through rate, ads of a topic numbered by popularity. Each request
    has a topic (skewed: low topics are popular) and m rewrites; rewrite i
    keeps to the request's topic with probability q_i ~ U(0.5, 0.95) per
    instance, else it draws from the topic it drifted to, and within a topic
    ad rank = floor(size * u**1.5) (popular ads recur, across and within
    rewrites). A rewrite retrieves nothing with probability ``empty``,
    1..k//2 ads with probability ``short``, else k. Per instance:

    * pCTR = ctr * exp(noise z) (times 0.4 off-topic), z ~ N(0, 1), capped
      at 1;
    * score = eCPM = bid * pCTR (differs across rewrites of the same ad, so
      ``filter`` and ``rerun`` replays differ);
    * prerank = log(score) + 0.5 z' (a noisy pre-ranker; z, z' the
      Box-Muller pair of two uniforms, independent N(0, 1));
    * value (``value_model="click"``) = bid if the ad is clicked in this request
      (one Bernoulli(ctr) draw per request and ad, shared by its instances),
      else 0; (``value_model="expected"``) = score, the expected value of an
      impression (the returned ``value`` is then the ``score`` array itself,
      both read-only).

    Exactly: the catalogue is ``bid = bid_scale * g.lognormal(0, 0.8, n)``,
    then ``ctr = g.beta(2, 10, n)``, of ``g =
    numpy.random.default_rng(seed)``, n = ``catalogue // topics * topics``;
    request q of the stream follows the recipe of csrc/synthetic.h on the
    counter-based streams (seed, 3q + s), one IEEE double operation at a
    time (no FMA), with IEEE sqrt and the generator's own log, exp, sin and
    cos (polynomials documented there, within 1.5 ulp of the exact values),
    not the C library's: the bits are the same on both backends, every
    machine and every C library.

    Parameters
    ----------
    n_requests : int
        Requests to generate, 0 <= n_requests <= 2**60.
    m, k : int, optional
        Rewrites per request (1..16) and candidates per rewrite.
    seed : int
        Fixes the catalogue and the stream of requests.
    preset : {"default", "realistic"}
        Where every parameter left as None takes its value from
        (:data:`SEARCH_PRESETS`; ``search_preset(preset).replay`` are the
        auction options the preset is meant to be replayed with).
    start : int
        Index of the first request in the stream: requests are keyed by
        (seed, index), so a long stream can be generated in parts, and
        ``sponsored_search(n, start=s)`` equals rows s..s+n-1 of a longer one.
    catalogue, topics : int, optional
        Ads in the catalogue (at least ``topics``; ``catalogue // topics``
        per topic) and topics (at most 2**32).
    empty, short : float, optional
        Probabilities of an empty and of a short rewrite (sum at most 1).
    noise : float, optional
        Log-sd of the per-instance pCTR factor, 0..16.
    value_model : {"click", "expected"}, optional
        Click-realised or expected value (see above).
    bid_scale : float, optional
        Median bid (> 0): the unit of scores and values.
    threads : int, optional
        Threads to generate on (default: all cores); the result is the same.
    backend : {"c", "numba"}, optional
        Kernel backend (default: the faster, see fastcredit._backend); both
        give the same bits (the recipe and its exact arithmetic are in
        csrc/synthetic.h).

    Returns
    -------
    fastcredit.Pools
        The candidate pools of the requests, with prerank.

    Raises
    ------
    ValueError
        If ``preset`` or ``value_model`` is not one of its values; if
        ``n_requests`` or ``start`` is negative or above 2**60; if ``m`` is
        outside 1..16; if ``k`` or ``topics`` is outside 1..2**32; if
        ``catalogue`` is below ``topics``; if ``empty`` or ``short`` is outside
        [0, 1], or their sum above 1; if ``noise`` is outside [0, 16]; if
        ``bid_scale`` is not finite and > 0; if ``seed`` is outside [0, 2**64);
        if ``threads`` is below 1; if ``backend`` is not None, "c" or "numba"
        (or is unavailable here); or if the pools need more memory than is
        available.
    TypeError
        If an integer argument (``n_requests``, ``m``, ``k``, ``seed``,
        ``start``, ``catalogue``, ``topics``, ``threads``) is not an integer,
        or ``empty``, ``short``, ``noise`` or ``bid_scale`` is not a real
        number.

    Examples
    --------
    >>> import fastcredit as fc
    >>> pools = fc.synthetic.sponsored_search(1000, seed=1)
    >>> pools.n_requests, pools.m
    (1000, 5)
    >>> fc.auction_replay(pools).shape
    (1000, 32)
    """
    from ._backend import kernels, resolve
    from .auction import Pools
    given = dict(m=m, k=k, catalogue=catalogue, topics=topics, empty=empty, short=short,
                 noise=noise, value_model=value_model, bid_scale=bid_scale)
    opts = {name: given[name] if given[name] is not None else default
            for name, default in search_preset(preset).generator.items()}
    n_requests = _check_int(n_requests, "n_requests", lo=0, hi=_SYNTHETIC_MAX_INDEX)
    m = _ACTIONS.check(opts["m"])
    k = _check_int(opts["k"], "k", lo=1, hi=_RNG_MAX_RANGE)
    seed = _SEED.check(seed)
    start = _check_int(start, "start", lo=0, hi=_SYNTHETIC_MAX_INDEX)
    topics = _check_int(opts["topics"], "topics", lo=1, hi=_RNG_MAX_RANGE)
    catalogue = _check_int(opts["catalogue"], "catalogue", lo=1, hi=_SYNTHETIC_MAX_INDEX)
    if catalogue < topics:
        raise ValueError(f"catalogue must be at least topics (one ad per topic): catalogue = "
                         f"{catalogue}, topics = {topics}")
    empty = _check_float(opts["empty"], "empty", lo=0.0, hi=1.0)
    short = _check_float(opts["short"], "short", lo=0.0, hi=1.0)
    if empty + short > 1.0:
        raise ValueError(f"empty + short must be at most 1, got {empty + short}")
    noise = _check_float(opts["noise"], "noise", lo=0.0, hi=float(_SYNTHETIC_MAX_NOISE))
    expected_value = _SEARCH_VALUE.check(opts["value_model"]) == "expected"
    bid_scale = _check_float(opts["bid_scale"], "bid_scale", lo=0.0)
    if not bid_scale > 0.0:
        raise ValueError(f"bid_scale must be > 0, got {bid_scale}")
    _check_memory(2 * 8 * catalogue, f"catalogue = {catalogue:,} (a bid and a CTR per ad)")
    _check_memory(8 * n_requests * m, f"n_requests = {n_requests:,} (the offsets of its "
                                      f"{n_requests * m:,} rewrites)")
    nt = _parallel.n_threads(threads)
    kern = kernels("synthetic", resolve("synthetic.sponsored_search", backend))
    per_topic = catalogue // topics
    cat = _np.random.default_rng(seed)
    bid = bid_scale * cat.lognormal(0.0, 0.8, per_topic * topics)   # x 1.0 is exact
    ctr = cat.beta(2.0, 10.0, per_topic * topics)
    # the list lengths, summed in place into the offsets (no array of their own)
    offsets = _np.empty(n_requests * m + 1, dtype=_np.int64)
    offsets[0] = 0
    lengths = offsets[1:]
    key = _np.uint64(seed)   # one Numba type for every seed in [0, 2**64)
    _parallel.run(lambda a, b: kern.search_lengths(key, start, m, k, empty, short,
                                                   lengths, a, b),
                  n_requests, nt, min_items=4096)
    _np.cumsum(lengths, out=lengths)
    n = int(offsets[-1])
    # ad, score, value and prerank of every candidate
    _check_memory(4 * 8 * n, f"n_requests = {n_requests:,}, m = {m} and k = {k:,} (their "
                             f"{n:,} candidates)")
    ad = _np.empty(n, dtype=_np.int64)
    score, prerank = _np.empty(n), _np.empty(n)
    # expected values are the scores: one array, not a copy of it
    value = score if expected_value else _np.empty(n)
    # the fill counts the scores and preranks that are not finite as it
    # writes them (a zero CTR makes log(0) = -inf): no second pass over them
    nonfinite = sum(_parallel.run(
        lambda a, b: kern.search_fill(key, start, m, topics, per_topic, bid, ctr, noise,
                                      int(expected_value), offsets, ad, score, value, prerank,
                                      a, b),
        n_requests, nt, min_items=4096))
    # new arrays nothing else holds, not copied; validated as Pools validates
    # (where a value is not finite, the constructor's search names it)
    return Pools._adopt(offsets, ad, score, value, m=m, prerank=prerank,
                        finite=nonfinite == 0)


def replay_repeats(v, *, repeats: int = 5, noise: float = 1.0, seed: int = 0, first: int = 0,
                   threads=None, backend=None):
    r"""Repeated noisy replays of coalition tables: the replay-noise model.

    Every replay of a nonempty coalition S of request q is its table value
    plus independent Gaussian noise; the empty coalition is not replayed:

    .. math:: y_{q,r}(S) = v_q(S) + \sigma z_{q,r,S}, \quad S \ne \emptyset,
              \qquad y_{q,r}(\emptyset) = v_q(\emptyset),

    :math:`z = \sqrt{-2 \log(1 - u_1)} \cos(2 \pi u_2)` (Box-Muller) with
    :math:`u_1, u_2` drawn per coalition in mask order from the RNG stream
    keyed by (seed, request q = first + row, repeat r) (csrc/synthetic.h,
    ``fc_synthetic_replay_repeats``; C and Numba give the same bits). A
    repeat's noise does not depend on how many repeats are drawn, nor on the
    rows generated with it: rows of a larger batch have the same repeats
    when ``first`` numbers them the same.

    Parameters
    ----------
    v : array_like, shape (..., 2**m), 1 <= m <= 30
        float64 or float32, finite or not (NaN propagates).
        The noise-free tables (e.g. ``fc.auction_replay`` of
        :func:`sponsored_search`'s pools).
    repeats : int
        Replays of each table, 1 <= repeats < 2**31.
    noise : float
        :math:`\sigma`, in the units of the tables, in [0, 1e300].
    seed : int
        Seed of the noise, in [0, 2**64).
    first : int
        The request number of row 0, >= 0 (the last row's at most 2**60).
    threads : int, optional
        Threads to generate on, at least 1 (default: all cores); the result
        is the same.
    backend : {None, "c", "numba"}, optional
        Kernel backend; both give the same bits.

    Returns
    -------
    ndarray, shape (..., repeats, 2**m), float64
        Row b of the flattened leading axes is request first + b.

    Raises
    ------
    ValueError
        If the last axis of ``v`` is not 2**m with 1 <= m <= 30; if
        ``repeats`` is outside [1, 2**31); if ``noise`` is outside [0, 1e300]
        or not finite; if ``seed`` is outside [0, 2**64); if ``first`` is
        negative or numbers rows past 2**60; if ``threads`` is below 1; if
        ``backend`` is not None, "c" or "numba" (or is unavailable here); or
        if the result needs more memory than is available.
    TypeError
        If ``v`` does not hold real numbers; if ``repeats``, ``seed``,
        ``first`` or ``threads`` is not an integer; or if ``noise`` is not a
        real number.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.arange(8.0)
    >>> y = fc.synthetic.replay_repeats(v, repeats=2000, noise=0.5, seed=1)
    >>> y.shape, bool((y[:, 0] == 0).all()), bool(abs((y - v)[:, 1:].std() - 0.5) < 0.01)
    ((2000, 8), True, True)
    """
    from ._validation import coalition_table
    from ._backend import kernels, resolve
    t, m, lead = coalition_table(v, "v", max_m=30)
    t = _np.ascontiguousarray(t, dtype=_np.float64)
    repeats = _check_int(repeats, "repeats", lo=1, hi=2**31 - 1)
    # |z| < 8.6, so noise * z stays finite (csrc/synthetic.h)
    noise = _check_float(noise, "noise", lo=0.0, hi=1e300)
    seed = _SEED.check(seed)
    first = _check_int(first, "first", lo=0, hi=_SYNTHETIC_MAX_INDEX - t.shape[0])
    _check_memory(8 * t.shape[0] * repeats << m, f"repeats = {repeats:,} (of {t.shape[0]:,} "
                                                 f"tables of 2**{m} coalitions)")
    out = _np.empty((t.shape[0], repeats, 1 << m))
    kern = kernels("synthetic", resolve("synthetic.replay_repeats", backend))
    key = _np.uint64(seed)
    flat_t, flat_out = t.reshape(-1), out.reshape(-1)
    _parallel.run(lambda a, b: kern.replay_repeats(key, first, m, flat_t, repeats, noise,
                                                   flat_out, a, b),
                  t.shape[0], _parallel.n_threads(threads), min_items=64)
    return out.reshape(lead + (repeats, 1 << m))


# --- agent-trajectory SCMs (permutation sampling) ---------------------------
# Causal agent replay on planted ground truth: the players are the steps of a
# trajectory that ended badly, and v(S) = P(bad outcome | the steps in S keep
# their factual action, the others are resampled by the policy). Each SCM is a
# stochastic @njit game fn(mask, key) for fc.permutation_shapley (one replay,
# 1.0 when it ends badly) with its exact v(S) table for checking.

#: Most steps whose exact table TrajectorySCM.table() will build.
SCM_TABLE_MAX_STEPS = 24
#: The outcome range of every SCM game (1.0 for a bad run, else 0.0).
SCM_OUTCOME_BOUNDS = (0.0, 1.0)


@_dataclass(frozen=True)
class TrajectorySCM:
    r"""A synthetic agent trajectory with known credit.

    The players are the steps of a trajectory that ended badly, and
    :math:`v(S) = P(\text{bad outcome} \mid \text{the steps in } S
    \text{ keep their factual action})`, the others resampled by the policy.
    Made by :func:`and_failure`, :func:`or_failure`,
    :func:`threshold_trajectory` and :func:`pivotal_chain`.

    Parameters
    ----------
    name : str
        What the trajectory is.
    n_steps : int
        The players (steps 0..n_steps-1), at most 64.
    game : numba dispatcher
        Stochastic ``game(mask: uint64, key: uint64) -> float``: one replay
        with the steps in ``mask`` held factual, 1.0 if it ends badly, else
        0.0. It declares that range as ``game.bounds = (0.0, 1.0)``, which
        fc.permutation_shapley reads to keep its error bars honest.
    _exact : callable
        Private: ``_exact(out)`` fills ``out`` (2**n_steps,) with the exact
        table (:meth:`table`).

    Examples
    --------
    >>> import fastcredit as fc
    >>> scm = fc.synthetic.and_failure(0.3)
    >>> scm
    TrajectorySCM(name='AND-failure of steps [0, 1]', n_steps=3)
    >>> scm.table()                      # v(S) = 0.3 ** (steps 0, 1 not in S)
    array([0.09, 0.3 , 0.3 , 1.  , 0.09, 0.3 , 0.3 , 1.  ])
    >>> scm.game.bounds
    (0.0, 1.0)
    """

    name: str
    n_steps: int
    game: object = _field(repr=False)
    _exact: object = _field(repr=False)

    def __post_init__(self):
        # On the game itself, since it is the game users pass to the sampler.
        self.game.bounds = SCM_OUTCOME_BOUNDS

    def table(self) -> _np.ndarray:
        """Exact v(S) = P(bad | S held factual), shape (2**n_steps,).

        Returns
        -------
        ndarray, shape (2**n_steps,), float64
            The coalition table over the steps.

        Raises
        ------
        ValueError
            If ``n_steps`` is above SCM_TABLE_MAX_STEPS (24), or the table
            needs more memory than is available.
        """
        if self.n_steps > SCM_TABLE_MAX_STEPS:
            raise ValueError(f"the exact table of {self.n_steps} steps has 2**{self.n_steps} "
                             f"entries; at most {SCM_TABLE_MAX_STEPS} steps are tabulated")
        _check_memory(8 << self.n_steps, f"the exact table of {self.n_steps} steps")
        out = _np.empty(1 << self.n_steps)
        self._exact(out)
        return out

    def shapley(self) -> _np.ndarray:
        """Exact Shapley credit of each step (fc.shapley of :meth:`table`).

        Returns
        -------
        ndarray, shape (n_steps,), float64
            The Shapley value of each step.

        Raises
        ------
        ValueError
            If ``n_steps`` is above SCM_TABLE_MAX_STEPS (24).
        """
        from .tables import shapley
        return shapley(self.table())


def _step_probs(p, n_steps, name):
    """A probability per step from a scalar or a length-n_steps sequence, as
    a new array: the SCM's game and table read it after it was checked, so it
    must not be the caller's."""
    arr = _float64_array(p, name)
    if arr.ndim == 0:
        _check_float(float(arr), name, lo=0.0, hi=1.0)
        arr = _np.full(n_steps, float(arr))
    if arr.shape != (n_steps,):
        raise ValueError(f"{name} must be a scalar or have shape ({n_steps},), got {arr.shape}")
    arr = _np.array(arr, order="C")   # at most 64 entries: copied, not compared
    if not _np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError(f"{name} must hold probabilities in [0, 1]")
    return arr


def _steps(steps, n_steps, name="steps"):
    idx = [_check_int(s, name, lo=0, hi=n_steps - 1)
           for s in _as_sequence(steps, name, "step indices")]
    if not idx or len(set(idx)) != len(idx):
        raise ValueError(f"{name} must be a non-empty list of distinct steps, got {steps!r}")
    return idx


def _threshold_scm(name, weight, factual_bad, q, threshold):
    from ._jit import synthetic as kern

    weight = _np.ascontiguousarray(weight, dtype=_np.int64)
    factual_bad = _np.ascontiguousarray(factual_bad, dtype=_np.uint8)
    # a NumPy scalar, not an int: Numba freezes a closure's int as a literal
    # type, which would compile threshold_draw once per threshold value
    threshold = _np.int64(threshold)
    return TrajectorySCM(
        name, len(weight), kern.threshold_game(weight, factual_bad, q, threshold),
        lambda out: kern.threshold_table(weight, factual_bad, q, threshold, out))


def _failure(kind, q, n_steps, steps):
    n_steps = _check_int(n_steps, "n_steps", lo=1, hi=64)
    steps = _steps(steps, n_steps)
    weight = _np.zeros(n_steps, dtype=_np.int64)
    weight[steps] = 1
    threshold = len(steps) if kind == "AND" else 1
    return _threshold_scm(f"{kind}-failure of steps {steps}", weight, weight,
                          _step_probs(q, n_steps, "q"), threshold)


def and_failure(q=0.3, n_steps: int = 3, steps=(0, 1)) -> TrajectorySCM:
    r"""The run fails iff every step in ``steps`` takes a bad action.

    Factually all of them did; a resampled step is bad with probability q, so
    :math:`v(S) = \prod_{j \in steps \setminus S} q_j`; the other steps are
    irrelevant (credit 0). For q = 0.3 and two steps: v(N) - v({}) = 1 - 0.09
    = 0.91, Shapley 0.455, 0.455 and 0 for an irrelevant third step.

    Parameters
    ----------
    q : float or array_like (n_steps,)
        P(a resampled step is bad).
    n_steps : int
        Steps of the trajectory, 1..64.
    steps : sequence of int
        The steps whose joint failure fails the run (distinct, non-empty, in
        0..n_steps-1).

    Returns
    -------
    TrajectorySCM
        The game and its exact table.

    Raises
    ------
    ValueError
        If ``n_steps`` is outside 1..64; if ``steps`` is empty, repeats a
        step or has one outside 0..n_steps-1; or if ``q`` is not a scalar or
        of shape (n_steps,), or is not in [0, 1].
    TypeError
        If ``n_steps`` or a step is not an integer, ``steps`` is not a
        sequence, or ``q`` is not real.

    Examples
    --------
    >>> import fastcredit as fc
    >>> scm = fc.synthetic.and_failure(0.3)
    >>> scm.shapley().round(3)
    array([0.455, 0.455, 0.   ])
    """
    return _failure("AND", q, n_steps, steps)


def or_failure(q=0.3, n_steps: int = 3, steps=(0, 1)) -> TrajectorySCM:
    r"""The run fails iff any step in ``steps`` takes a bad action.

    Factually all of them did: :math:`v(S) = 1` if S holds one of them, else
    :math:`1 - \prod_{j \in steps} (1 - q_j)`. For q = 0.3 and two steps,
    v({}) = 0.51 and each relevant step gets 0.245 (redundant causes).

    Parameters
    ----------
    q : float or array_like (n_steps,)
        P(a resampled step is bad).
    n_steps : int
        Steps of the trajectory, 1..64.
    steps : sequence of int
        The steps any one of whose failures fails the run (distinct,
        non-empty, in 0..n_steps-1).

    Returns
    -------
    TrajectorySCM
        The game and its exact table.

    Raises
    ------
    ValueError
        If ``n_steps`` is outside 1..64; if ``steps`` is empty, repeats a
        step or has one outside 0..n_steps-1; or if ``q`` is not a scalar or
        of shape (n_steps,), or is not in [0, 1].
    TypeError
        If ``n_steps`` or a step is not an integer, ``steps`` is not a
        sequence, or ``q`` is not real.

    See Also
    --------
    and_failure

    Examples
    --------
    >>> import fastcredit as fc
    >>> scm = fc.synthetic.or_failure(0.3)
    >>> scm.shapley().round(3)
    array([0.245, 0.245, 0.   ])
    """
    return _failure("OR", q, n_steps, steps)


def threshold_trajectory(n_steps: int = 10, threshold: int | None = None, *, q=None,
                         seed: int = 0) -> TrajectorySCM:
    r"""A random n-step trajectory that fails when enough steps go wrong.

    The run fails iff at least ``threshold`` steps take a bad action. From
    ``seed``: each step's P(bad when resampled) q_j ~ U(0.05, 0.5) (unless
    ``q`` is given; the factual run is the same either way) and a factual
    run in which a random set of at least ``threshold`` steps was bad (so it
    failed). Exact v(S) is the
    Poisson-binomial tail :math:`P(F_S + \sum_{j \notin S} B_j \ge t)`,
    F_S the factual bad steps in S and B_j ~ Bernoulli(q_j).

    Parameters
    ----------
    n_steps : int
        1..64 steps.
    threshold : int, optional
        1..n_steps bad steps fail the run; default max(1, n_steps // 3).
    q : float or array_like (n_steps,), optional
        P(a resampled step is bad), in [0, 1]; default drawn from ``seed``.
    seed : int
        Seed of q and of the factual run, in [0, 2**64).

    Returns
    -------
    TrajectorySCM
        The game and its exact table.

    Raises
    ------
    ValueError
        If ``n_steps`` is outside 1..64 or ``threshold`` outside
        1..n_steps; if ``seed`` is outside [0, 2**64); or if ``q`` is not a
        scalar or of shape (n_steps,), or is not in [0, 1].
    TypeError
        If ``n_steps``, ``threshold`` or ``seed`` is not an integer, or ``q``
        is not real.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> scm = fc.synthetic.threshold_trajectory(4, seed=0)
    >>> scm.name
    '4-step threshold-1 trajectory'
    >>> v = scm.table()
    >>> float(v[-1])                            # the factual run failed
    1.0
    >>> bool(np.isclose(scm.shapley().sum(), v[-1] - v[0]))
    True
    """
    n_steps = _check_int(n_steps, "n_steps", lo=1, hi=64)
    threshold = (max(1, n_steps // 3) if threshold is None
                 else _check_int(threshold, "threshold", lo=1, hi=n_steps))
    gen = _np.random.default_rng(_SEED.check(seed))
    drawn_q = gen.uniform(0.05, 0.5, n_steps)   # drawn either way: same factual run
    q = drawn_q if q is None else _step_probs(q, n_steps, "q")
    n_bad = int(gen.integers(threshold, n_steps + 1))
    factual_bad = _np.zeros(n_steps, dtype=_np.uint8)
    factual_bad[gen.choice(n_steps, n_bad, replace=False)] = 1
    return _threshold_scm(f"{n_steps}-step threshold-{threshold} trajectory",
                          _np.ones(n_steps, dtype=_np.int64), factual_bad,
                          _np.ascontiguousarray(q), threshold)


def pivotal_chain(n_steps: int = 6, pivot: int = 2, *, q=0.2, r=0.3) -> TrajectorySCM:
    r"""A trajectory that derails at a pivotal step and never recovers.

    A run is on track or derailed; it fails iff derailed at the end.
    Factually step ``pivot`` derailed it and the others neither derailed nor
    recovered it. A resampled step derails an on-track run with probability
    q_j and recovers a derailed one with probability r_j, so holding the
    steps after the pivot factual (no recovery) also carries credit, and
    holding those before it (on track) carries negative credit. Exact v(S)
    by the forward recursion p <- p (1 - r_j) + (1 - p) q_j over resampled
    steps (p <- 1 at a held pivot); v(N) = 1.

    Parameters
    ----------
    n_steps : int
        1..64 steps.
    pivot : int
        The step that derailed the run.
    q, r : float or array_like (n_steps,)
        P(derail) and P(recover) of a resampled step, in [0, 1].

    Returns
    -------
    TrajectorySCM
        The game and its exact table.

    Raises
    ------
    ValueError
        If ``n_steps`` is outside 1..64 or ``pivot`` outside 0..n_steps-1;
        or if ``q`` or ``r`` is not a scalar or of shape (n_steps,), or is
        not in [0, 1].
    TypeError
        If ``n_steps`` or ``pivot`` is not an integer, or ``q`` or ``r`` is
        not real.

    Examples
    --------
    >>> import fastcredit as fc
    >>> scm = fc.synthetic.pivotal_chain(4, pivot=1)
    >>> scm.shapley().round(3)          # the step before the pivot: negative
    array([-0.023,  0.444,  0.102,  0.102])
    """
    from ._jit import synthetic as kern

    n_steps = _check_int(n_steps, "n_steps", lo=1, hi=64)
    pivot = _check_int(pivot, "pivot", lo=0, hi=n_steps - 1)
    q = _step_probs(q, n_steps, "q")
    r = _step_probs(r, n_steps, "r")
    derails = _np.zeros(n_steps, dtype=_np.uint8)
    derails[pivot] = 1
    return TrajectorySCM(f"{n_steps}-step chain pivoting at step {pivot}", n_steps,
                         kern.chain_game(derails, q, r),
                         lambda out: kern.chain_table(derails, q, r, out))
