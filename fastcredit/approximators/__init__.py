r"""Sampling estimators of values and interactions, compiled: the approximator
family (``fc.approximate``).

Every estimator shapiq has is to live here, one module per estimator group
over a shared base (as shapiq's ``approximator/``):

- :mod:`~fastcredit.approximators.base`: the budget, the memo of a
  deterministic game's coalitions, the batched sampling loop, the result;
- :mod:`~fastcredit.approximators.montecarlo`: SVARM (``method="svarm"``,
  SVARM-IQ of order 1), SHAP-IQ (``"shapiq"``) and SVARM-IQ (``"svarmiq"``);
- :mod:`~fastcredit.approximators.marginals`: StratifiedSamplingSV
  (``"stratified"``) and OwenSamplingSV (``"owen"``);
- :mod:`~fastcredit.approximators.regression`: KernelSHAP
  (``"kernelshap"``), KernelSHAP-IQ (``"kernelshapiq"``), Inconsistent
  KernelSHAP-IQ (``"inconsistent_kernelshapiq"``), kADD-SHAP (``"kaddshap"``),
  RegressionFSII (``"regression_fsii"``), RegressionFBII (``"regression_fbii"``);
- :mod:`~fastcredit.approximators.sparse`: SPEX (``"spex"``), the sparse
  Fourier transform from BCH-coded subsamples, its rounds of singleton
  detection compiled (``spex_detect``);
- :mod:`~fastcredit.approximators.proxy`: ProxySPEX (``"proxyspex"``).

Drawing the samples and folding the values into moments are the compiled
kernels (csrc/approximators.c and fastcredit._numba.approximators, bit for
bit the same per seed); docs/approximators.md has each estimator, its
variance and what the budget buys.
"""
from __future__ import annotations

import numpy as np

from .. import _parallel
from .._validation import check_bool
from .._params import (APPROX_ANCHORS, APPROX_BUDGET, APPROX_METHOD, INDEX, ORDER, SEED,
                       SPEX_DECODER, SPEX_DECODER_DEFAULT, SPEX_DEGREE, SPEX_DEGREE_DEFAULT)
from ..games import MAX_MASK_PLAYERS, as_game
from .base import InteractionEstimate, run_design
from .marginals import Owen, Stratified
from .montecarlo import MONTE_CARLO_IQ, estimate_interactions
from .regression import REGRESSION, check_regression_order, check_sampling_weights, estimate
from .sparse import SPARSE
from .proxy import PROXY

__all__ = ["InteractionEstimate", "approximate"]

#: method -> (its design, the indices it estimates, its fixed evaluations)
_METHODS = {"stratified": (Stratified, ("SV",), 1),
            "owen": (Owen, ("SV",), 1)}
_METHODS |= {name: (design, indices, 2) for name, (design, indices, _) in REGRESSION.items()}
_METHODS |= {name: (design, indices, 2) for name, (design, indices) in MONTE_CARLO_IQ.items()}
_METHODS |= {name: (design, indices, 1) for name, (design, indices) in SPARSE.items()}
_METHODS |= {name: (design, indices, 2) for name, (design, indices) in PROXY.items()}
#: methods that take an order, pairing and sampling weights
_ORDERED = tuple(REGRESSION) + tuple(MONTE_CARLO_IQ)


def approximate(game, m: int | None = None, index: str = "SV", order: int = 1, *,
                method: str = "svarm", budget: int = 20_000, seed: int = 0,
                anchors: int | None = None, pairing: bool = False, sampling_weights=None,
                degree_parameter: int | None = None, decoder_type: str | None = None,
                stderr: bool = True, coalitions: str = "mask", backend=None,
                threads=None) -> InteractionEstimate:
    r"""Estimate a value (interaction index) by sampling, within a budget of
    game evaluations.

    Parameters
    ----------
    game : array_like or callable
        A coalition table ``(2**m,)`` or a batch ``(..., 2**m)`` (one estimate
        per game, each keyed by its position), a vectorised Python callable
        on uint64 masks (or bool rows with ``coalitions="bool"``), an @njit
        ``fn(mask)``, or a stochastic @njit ``fn(mask, key)``
        (:mod:`fastcredit.games`); m <= 64.
    m : int
        Players (taken from a table).
    index : str
        "SV" (svarm, stratified, owen, kernelshap: its "SII" of order 1 too) or
        "BV" (svarm); "SII" or
        "k-SII" (kernelshapiq, inconsistent_kernelshapiq), "kADD-SHAP"
        (kaddshap), "FSII" (regression_fsii), "FBII" (regression_fbii);
        shapiq and svarmiq: "SII", "BII", "CHII", "STII", "FSII", "FBII",
        "k-SII" (any order) and "SV", "BV" (order 1); spex: those and
        "Moebius", "Co-Moebius", "kADD-SHAP" (every index with Moebius
        weights, from the recovered Fourier coefficients; SPEX's usual one
        is "FBII").
    order : int
        1 for the value estimators (svarm, stratified, owen, kernelshap); the
        interaction order k of the regression methods and of shapiq and svarmiq (every order 1..k is estimated).
    method : str
        The estimator: "svarm", "stratified", "owen", "shapiq", "svarmiq",
        "kernelshap", "kernelshapiq", "inconsistent_kernelshapiq", "kaddshap",
        "regression_fsii", "regression_fbii" or "spex" (see
        :mod:`fastcredit.approximators` and docs/approximators.md);
        "proxyspex": ProxySPEX, a cross-validated LightGBM proxy fitted to
        the evaluated coalitions, its Fourier coefficients refitted (needs
        lightgbm; index any with Moebius weights: "SII", "BII", "CHII",
        "STII", "FSII", "FBII", "k-SII", "kADD-SHAP", "Moebius",
        "Co-Moebius", "SV", "BV"; no standard errors: NaN; at least 5
        coalitions).
    budget : int
        Game evaluations to spend, never exceeded: a deterministic game
        (table, @njit ``fn(mask)``, declared callable) is evaluated once per
        distinct coalition; a stochastic one afresh at every use. At least
        the method's fixed evaluations (svarm and the regression methods:
        v(empty) and v(N), 2; stratified, owen: v(empty), 1; spex: its
        3 (parity bits + 1) 2^b queries for the largest b that fits, b >= 3
        with the code of t = 2 at least: 264 for m <= 21, 312 for m <= 51,
        360 beyond).
        When a deterministic game's 2**m coalitions fit in it, all are
        evaluated once and the estimand is exact.
    seed : int
        Seed of the counter-based streams, in [0, 2**64): the same estimate
        on the C and Numba backends.
    anchors : int, optional
        Owen sampling's anchor points (default 10, shapiq's).
    pairing : bool
        Regression methods, svarm, shapiq and svarmiq: each drawn coalition followed
        by its complement (shapiq's ``pairing_trick``).
    sampling_weights : array_like (m + 1,), optional
        Regression methods, svarm, shapiq and svarmiq (deterministic games): weights
        of the coalition sizes 0..m for drawing
        (shapiq's ``sampling_weights``; default shapiq's for the method).
    degree_parameter : int, optional
        spex: t, the errors its BCH code corrects, 2..16 (default 5,
        shapiq's): a bin's singleton is found when its frequency K and the
        sign errors in the bin number at most t together, so t is the
        largest interaction size :math:`|K|` SPEX detects (a soft limit: the peeling may
        still find larger ones elsewhere). A larger t buys longer codes (more
        delays per subsample, fewer subsample points 2^b for the budget);
        when the budget leaves b <= 2, t is lowered towards 2, as shapiq's.
    decoder_type : {"soft", "hard"}, optional
        spex: how a bin's signs are decoded (default "soft", shapiq's):
        "hard" decodes the signs of its ratios to the zero delay; "soft" when
        that fails, also tries flipping the t least reliable signs (smallest
        ratios) in Chase-2's patterns and takes the message of fewest errors.
    stderr : bool
        False skips the regression methods' variance pass (a second compiled
        pass over the samples, about half their time; their ``stderr`` is
        then NaN). The other methods' standard errors come with their
        moments and are always given.
    coalitions : {"mask", "bool"}
        How a Python callable receives coalitions.
    backend : {None, "c", "numba"}
        For the draw and fold kernels (@njit games run on Numba).
    threads : int, optional
        Threads for a batch of tables.

    Returns
    -------
    InteractionEstimate
        :class:`fastcredit.Interactions` (``values[0]`` = v(empty), but for
        regression_fbii FBII's own empty entry, the fitted intercept, as
        ``fc.interactions(v, "FBII", k)``; ``values[1]`` the m values;
        ``values[k]`` the order-k interactions of the regression methods,
        shapiq, svarmiq and spex) with ``stderr`` (same
        layout; NaN for svarmiq's k-SII orders below k, sums of estimates
        each stratified its own way, whose covariances the strata do not
        give, and for spex, whose peeling gives none), ``n_evals``,
        ``n_samples`` (spex: its queries, repeated coalitions included) and
        ``method``.

    Raises
    ------
    ValueError
        If ``method``, ``index`` or ``coalitions`` is not one of its values,
        or ``index`` is not one the method estimates; if ``order`` is outside
        [1, 30], is not 1 for svarm, stratified, owen or index "SV" or "BV",
        or is above m; if ``budget`` is outside
        [1, 2**62] or does not cover the method's fixed evaluations (spex:
        its smallest design) when below 2**m; if
        ``anchors`` is given for a method other than owen, or is outside
        [1, 2**16]; if ``degree_parameter`` or ``decoder_type`` is given
        for a method other than spex, or is outside [2, 16] or not "soft" or
        "hard"; if ``pairing`` or ``sampling_weights`` is given for
        stratified, owen or spex; if ``sampling_weights`` is not of shape
        (m + 1,), finite and non-negative with a positive weight on some size
        1..m-1, or is given for a stochastic game (svarm, shapiq, svarmiq); if
        ``seed`` is outside [0, 2**64) or ``threads`` below 1; if ``backend``
        is not None, "c" or "numba" (or is unavailable here, or is "c" for an
        @njit game); if ``m`` is missing for a function game, below 1 or
        above 64, or does not match a table; if a table's last axis is not
        2**m with 1 <= m <= 30; if a function game returns a non-finite value
        or not one value per coalition; or if the game's whole table (a
        budget that covers it) or SVARM-IQ's strata need more memory than is
        available.
    TypeError
        If ``order``, ``budget``, ``anchors``, ``degree_parameter``,
        ``seed``, ``m`` or ``threads`` is not an integer; if ``pairing`` or
        ``stderr`` is not a bool; if ``sampling_weights`` or a table does not
        hold real numbers; or if a function game returns values that are not
        real numbers, or an @njit game does not compile for uint64 arguments
        or does not return a real number.
    RuntimeError
        If the game raises (a Python game's exception is wrapped, naming the
        batch it was called on) or an @njit game fails.
    ImportError
        If ``method="proxyspex"`` and lightgbm is not installed.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.arange(16.0) ** 1.5
    >>> est = fc.approximate(v, method="stratified", budget=10)
    >>> est.values[1].shape, est.n_evals <= 10
    ((4,), True)
    >>> est = fc.approximate(v, index="k-SII", order=2, method="svarmiq", budget=12)
    >>> est.values[2].shape, est.n_evals <= 12
    ((6,), True)

    SPEX recovers a game of few Fourier coefficients exactly from a few
    hundred of its 2**10 coalitions: v(S) = 2 [{0, 1} ⊆ S] + [5 ∈ S], whose
    FBII of order 2 is its Moebius coefficients.

    >>> bits = (np.arange(1 << 10)[:, None] >> np.arange(10)) & 1
    >>> v = 2.0 * bits[:, 0] * bits[:, 1] + bits[:, 5]
    >>> est = fc.approximate(v, index="FBII", order=2, method="spex", budget=400)
    >>> float(est.values[2][0].round(6)), est.values[1].round(6)[[0, 5]], est.n_evals <= 400
    (2.0, array([0., 1.]), True)
    """
    method = APPROX_METHOD.check(method)
    design, indices, fixed = _METHODS[method]
    index = INDEX.check(index)
    if index not in indices:
        raise ValueError(f"index must be one of {indices} for method={method!r}, got "
                         f"{index!r}")
    order = ORDER.check(order)
    if method in REGRESSION:
        order = check_regression_order(method, index, order)
    elif method in MONTE_CARLO_IQ or method in SPARSE or method in PROXY:
        if index in ("SV", "BV") and order != 1:
            raise ValueError(f"order must be 1 for index={index!r}, got {order}")
    elif order != 1:
        raise ValueError(f"order must be 1 for method={method!r} (it estimates values), got "
                         f"{order}")
    budget = APPROX_BUDGET.check(budget)
    if budget < fixed:
        raise ValueError(f"budget must cover the {fixed} fixed evaluation(s) of "
                         f"method={method!r}, got {budget}")
    if anchors is not None and method != "owen":
        raise ValueError(f"anchors applies to method='owen' only, not to {method!r}")
    n_anchors = APPROX_ANCHORS.check(10 if anchors is None else anchors, "anchors")
    if (degree_parameter is not None or decoder_type is not None) and method != "spex":
        raise ValueError(f"degree_parameter and decoder_type apply to method='spex' only, not "
                         f"to {method!r}")
    degree = SPEX_DEGREE.check(SPEX_DEGREE_DEFAULT if degree_parameter is None
                               else degree_parameter)
    decoder = SPEX_DECODER.check(SPEX_DECODER_DEFAULT if decoder_type is None else decoder_type)
    pairing = check_bool(pairing, "pairing")
    stderr = check_bool(stderr, "stderr")
    if (pairing or sampling_weights is not None) and method not in _ORDERED:
        raise ValueError(f"pairing and sampling_weights apply to the methods {_ORDERED} "
                         f"only, not to {method!r}")
    seed = np.uint64(SEED.check(seed))
    threads = _parallel.n_threads(threads)
    kernel = design.kernel
    g = as_game(game, m, coalitions=coalitions,
                kernels={k: kernel for k in ("table", "callable", "jitted", "stochastic")},
                backend=backend)
    if g.m > MAX_MASK_PLAYERS:
        raise ValueError(f"m must be at most {MAX_MASK_PLAYERS} for fc.approximate "
                         f"(coalitions are uint64 masks), got {g.m}")
    if method in SPARSE or method in PROXY:
        if order > g.m:
            raise ValueError(f"order must be at most the number of players m = {g.m}, got "
                             f"{order}")
        if method in SPARSE:
            return design.estimate(g, index, order, budget, seed, threads, degree,
                                   decoder == "soft")
        return design.estimate(g, index, order, budget, seed, threads)
    if method in _ORDERED:
        if order > g.m:
            raise ValueError(f"order must be at most the number of players m = {g.m}, got "
                             f"{order}")
        weights = (None if sampling_weights is None
                   else check_sampling_weights(sampling_weights, g.m))
        if method in MONTE_CARLO_IQ:
            if weights is not None and not g.deterministic:
                raise ValueError("sampling_weights apply to deterministic games (a stochastic "
                                 "game's sizes are all drawn)")
            return estimate_interactions(method, g, index, order, budget, seed, threads,
                                         pairing, weights)
        return estimate(method, g, index, order, budget, seed, threads, pairing, weights,
                        stderr)
    deterministic = bool(g.deterministic)
    if method == "owen":
        def make():
            return Owen(g.m, index, deterministic, budget, n_anchors)
    else:
        def make():
            return design(g.m, index, deterministic, budget)
    base, values, stderr, n_evals, n_samples = run_design(make, g, index, budget, seed, threads)
    zero = np.zeros_like(base)
    return InteractionEstimate(index=index, order=1, m=g.m, values=(base, values),
                               stderr=(zero, stderr), n_evals=n_evals, n_samples=n_samples,
                               method=method)
