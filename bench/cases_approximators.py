"""Cases of the approximator family (fc.approximate; issue 27).

n = 16 players, budget 20,000 game evaluations on a table game (additive +
pairwise + noise, bench/approximators_vs_shapiq.py's), one case per method.
`x alternative` = our call / shapiq's class of the same name on the same
table (a shapiq TableGame), one call each. The RMSE comparison over seeds is
bench/approximators_vs_shapiq.py's.

No bare call: a run is the draw and fold kernels interleaved with the
memo's bookkeeping and the game's evaluation in batches of 4,096 samples;
there is no single kernel call to time beside it.
"""
from __future__ import annotations

import functools
import time
import warnings

import numpy as np

import fastcredit as fc
from fastcredit.approximators import _METHODS
from approximators_vs_shapiq import N, table_game
from common import Alternative, Case

BUDGET = 20_000
SHAPIQ = {"svarm": "SVARM", "stratified": "StratifiedSamplingSV", "owen": "OwenSamplingSV"}
#: the regression methods: (shapiq's class, at its defaults, index, order)
REGRESSION = {"kernelshap": ("KernelSHAP", "SV", 1),
              "kernelshapiq": ("KernelSHAPIQ", "k-SII", 2),
              "inconsistent_kernelshapiq": ("InconsistentKernelSHAPIQ", "k-SII", 2),
              "kaddshap": ("kADDSHAP", "kADD-SHAP", 2),
              "regression_fsii": ("RegressionFSII", "FSII", 2),
              "regression_fbii": ("RegressionFBII", "FBII", 2)}
#: the Monte-Carlo interaction methods, likewise
MONTE_CARLO = {"shapiq": ("SHAPIQ", "k-SII", 2), "svarmiq": ("SVARMIQ", "k-SII", 2)}


def _shapiq(v, name):
    def measure():
        import shapiq
        from fastcredit.shapiq import TableGame
        game = TableGame(v)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            getattr(shapiq, name)(N, random_state=0).approximate(BUDGET, game)
        return time.perf_counter() - t0
    return Alternative(f"shapiq {name}", measure=measure, repeats=1)


def cases(quick: bool):
    v = table_game(N)
    for method, name in SHAPIQ.items():
        yield Case("approximate", f"{method}, n = {N}, budget {BUDGET:,}, table",
                   lambda backend, threads, method=method: fc.approximate(
                       v, method=method, budget=BUDGET, backend=backend, threads=1),
                   alternative=_shapiq(v, name), key=_METHODS[method][0].kernel, repeats=5,
                   bare="a loop of draw/fold kernels and memo bookkeeping: no single kernel")
    for method, (name, index, order) in REGRESSION.items():
        yield Case("approximate", f"{method} ({index}, order {order}), n = {N}, budget "
                                  f"{BUDGET:,}, table",
                   lambda backend, threads, method=method, index=index, order=order:
                   fc.approximate(v, index=index, order=order, method=method, budget=BUDGET,
                                  backend=backend, threads=1),
                   alternative=_shapiq(v, name), key=f"approximators.{method}", repeats=5,
                   bare="draw, fold and Cholesky kernels between the memo's bookkeeping")
    for method, (name, index, order) in MONTE_CARLO.items():
        yield Case("approximate", f"{method} ({index}, order {order}), n = {N}, budget "
                                  f"{BUDGET:,}, table",
                   lambda backend, threads, method=method, index=index, order=order:
                   fc.approximate(v, index=index, order=order, method=method, budget=BUDGET,
                                  backend=backend, threads=1),
                   alternative=_shapiq(v, name), key=f"approximators.{method}", repeats=5,
                   bare="a loop of draw/fold kernels and memo bookkeeping: no single kernel")
    # no alternative: shapiq's SPEX takes minutes a call here (galois' decoder;
    # bench/approximators_vs_shapiq.py's SPEX row times it over seeds)
    yield Case("approximate", f"spex (FBII, order 2), n = {N}, budget {BUDGET:,}, table",
               lambda backend, threads: fc.approximate(
                   v, index="FBII", order=2, method="spex", budget=BUDGET, backend=backend,
                   threads=1),
               key="approximators.spex", repeats=5,
               bare="rounds of the spex_detect kernel between numpy peeling: no single kernel")
    yield _spex_case()
    yield _proxyspex_case()
    yield _proxyspex_reading_case()


def _proxyspex_case():
    """ProxySPEX's Fourier coefficients of its trees (tree_fourier): the
    1,000 trees of depth 5 of a LightGBM model of the table game on 20,000
    coalitions (the size of its proxy at n = 16, budget 20,000). The public
    entry is ``proxy.ensemble_fourier`` on the trees' arrays (what
    fc.approximate runs after reading the trees once); the bare call is the
    kernel's two calls (count, then sum). Reading the trees off the booster
    is LightGBM's export, not this kernel's work: its own row
    (:func:`_proxyspex_reading_case`). No alternative: shapiq's recursion
    over dump_model's JSON is bench/approximators_vs_shapiq.py's ProxySPEX
    row's. Needs lightgbm."""
    from fastcredit.approximators import proxy
    from fastcredit._backend import kernels
    booster = _proxyspex_booster()
    trees = proxy.trees_of(booster)

    def bare(backend, threads):
        impl = kernels("approximators", backend or "c")
        args = trees + (N,)
        counts = np.zeros(2, np.int64)
        impl.tree_fourier(*args, np.zeros(0, np.int64), np.zeros(0, np.uint64), np.zeros(0),
                          counts)
        terms = int(counts[0])
        slots = np.empty(1 << max(1, (2 * terms - 1).bit_length()), np.int64)
        freqs, coefs = np.empty(terms, np.uint64), np.empty(terms)

        def call():
            impl.tree_fourier(*args, np.zeros(0, np.int64), np.zeros(0, np.uint64),
                              np.zeros(0), counts)
            impl.tree_fourier(*args, slots, freqs, coefs, counts)
        return call

    return Case("proxyspex", "ProxySPEX's trees' Fourier coefficients: 1,000 LightGBM trees "
                             "of depth 5 on n = 16 binary features",
                lambda backend, threads: proxy.ensemble_fourier(*trees, N, backend),
                key="approximators.proxyspex", repeats=5, bare=bare)


def _proxyspex_reading_case():
    """Reading those 1,000 trees off the LightGBM booster (proxy.trees_of:
    its model text, parsed with numpy) against shapiq's reading
    (``booster.dump_model()``, JSON). The floor is LightGBM's serialization
    itself (docs/approximators.md has the measurement)."""
    from fastcredit.approximators import proxy
    booster = _proxyspex_booster()
    return Case("proxyspex", "reading ProxySPEX's 1,000 trees off the LightGBM booster "
                             "(model text, parsed)",
                lambda backend, threads: proxy.trees_of(booster), backends=("numpy",),
                alternative=Alternative("shapiq: booster.dump_model() (JSON)",
                                        fn=booster.dump_model, repeats=2),
                repeats=5, bare="LightGBM's export and a numpy parse: no kernel")


@functools.lru_cache(maxsize=1)
def _proxyspex_booster():
    """The LightGBM model of the ProxySPEX cases (one fit, shared)."""
    from fastcredit.approximators import proxy
    lgb = proxy.lightgbm()
    v = table_game(N)
    masks = np.random.default_rng(0).choice(1 << N, BUDGET, replace=False).astype(np.uint64)
    x = ((masks[:, None] >> np.arange(N, dtype=np.uint64)) & np.uint64(1)).astype(float)
    return proxy._train(lgb, x, v[masks.astype(np.int64)], 0.1, 5, 1000, 0)


def _spex_case():
    """SPEX's BCH decoding (fastcredit.approximators.sparse): 1,000 received
    words of the n = 16, t = 5 code (BCH(63, 36) shortened to 43 bits), each
    a random codeword with 0..7 bit errors; no alternative (galois' decoder
    takes ~40-60 ms a word here, bench/approximators_vs_shapiq.py's SPEX row
    times shapiq's whole class)."""
    from fastcredit.approximators.sparse import BCHCode
    code = BCHCode(N, 5)
    g = np.random.default_rng(0)
    messages = (g.random((1000, N)) < 0.2).astype(np.uint8)
    received = np.concatenate([messages, messages @ code.delay_matrix()[1:].T % 2], axis=1)
    flips = g.random(received.shape) < g.integers(0, 8, (1000, 1)) / received.shape[1]
    words = (received ^ flips).astype(np.uint8)
    return Case("bch_decode", "SPEX's BCH(63, 36) shortened to 43 bits, t = 5, 1,000 words "
                              "with 0..7 errors",
                lambda backend, threads: code.decode(words, backend), repeats=5,
                bare="the public call is the kernel call")
