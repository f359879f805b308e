"""Compiling the Numba kernels ahead of time, and knowing that it was done.

The C backend is compiled when fastcredit is installed; a Numba kernel is
compiled the first time it runs (seconds each) and then loaded from Numba's
on-disk cache (milliseconds). So that a first call never waits for a
compiler, ``backend=None`` runs a kernel on Numba only once the Numba kernels
are *warm*: ``fastcredit warm`` (:func:`warm`) has compiled and cached every
one of them for this fastcredit, Numba and Python, and left a marker saying
so. Until then every kernel runs on C.

Where Numba caches: beside the kernels (``fastcredit/_numba/__pycache__``)
when that is writable, else in Numba's per-user cache directory, else (no
writable home either, e.g. a read-only container) in a per-user directory
under the system's temporary directory, so a read-only install does not
recompile in every process (:func:`ensure_numba_cache`).
"""
from __future__ import annotations

import functools
import os
import pathlib
import sys
import tempfile
import time
from importlib import metadata

_NUMBA_DIR = pathlib.Path(__file__).resolve().parent / "_numba"


def _writable_dir(path: pathlib.Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK)


def _user_cache_dir() -> pathlib.Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "fastcredit"


def _temp_cache_dir() -> pathlib.Path:
    return pathlib.Path(tempfile.gettempdir()) / f"fastcredit-{os.getuid()}"


def ensure_numba_cache() -> None:
    """Point Numba's cache at a per-user temporary directory when neither
    the package nor the user's home can hold it (a user's own
    ``NUMBA_CACHE_DIR`` is kept)."""
    from numba.core import config

    if config.CACHE_DIR or _writable_dir(_NUMBA_DIR / "__pycache__"):
        return
    from numba.misc.appdirs import AppDirs

    if _writable_dir(pathlib.Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)):
        return
    fallback = _temp_cache_dir() / "numba"
    if _writable_dir(fallback):
        config.CACHE_DIR = str(fallback)


def _marker_name() -> str:
    from . import __version__

    try:
        numba_version = metadata.version("numba")
    except metadata.PackageNotFoundError:
        numba_version = "none"
    return (f"warm-fastcredit-{__version__}-numba-{numba_version}-"
            f"py{sys.version_info.major}{sys.version_info.minor}")


def _marker_dirs() -> list[pathlib.Path]:
    return [_NUMBA_DIR / "__pycache__", _user_cache_dir(), _temp_cache_dir()]


@functools.cache
def is_warm() -> bool:
    """Whether :func:`warm` has compiled the Numba kernels of this install
    (read once per process, without importing Numba)."""
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return False
    name = _marker_name()
    return any((d / name).exists() for d in _marker_dirs())


def _calls():
    """kernel key -> a small call of its public entry point on Numba, for
    every dtype the kernel is compiled for: each kernel family of
    fastcredit._backend.FASTEST, then the cached kernels with no C twin
    (fastcredit._jit, and fastcredit._numba.rng's fill for users' jitted
    code)."""
    import numpy as np

    import fastcredit as fc
    from fastcredit import sampling
    from fastcredit._numba import rng

    nb = {"backend": "numba", "threads": 1}
    tables = [np.linspace(0.0, 1.0, 16).astype(dt).reshape(2, 8) for dt in (np.float64,
                                                                                 np.float32)]
    big = np.linspace(0.0, 1.0, 1 << 16)
    pools = fc.Pools([0, 2, 3], ad_id=[1, 2, 1], score=[3.0, 1.0, 2.0], value=[1.0, 1.0, 2.0],
                     m=2, prerank=[1.0, 2.0, 3.0])
    offsets = np.array([0, 3, 6])
    x = np.array([0.1, 0.5, 0.2, 0.9, 0.3, 0.4])
    calls = {
        "tables.semivalue": [lambda v=v: (fc.shapley(v, **nb), fc.shapley(big, **nb))
                             for v in tables],
        "tables.gather": [lambda v=v: (fc.singleton(v, **nb), fc.leave_one_out(v, **nb),
                                       fc.pair_interactions(v, **nb)) for v in tables],
        "tables.size_resolved": [lambda v=v: fc.size_resolved(v, **nb) for v in tables],
        "tables.moebius": [lambda v=v: (fc.moebius(v, **nb), fc.from_moebius(v, **nb))
                           for v in tables],
        "tables.owen": [lambda v=v: fc.owen(v, [0, 0, 1], **nb) for v in tables],
        "interactions.graded": [lambda v=v: (fc.interactions(v, "SII", 2, **nb),
                                             fc.interactions(v, "SGV", 2, **nb))
                                for v in tables],
        "auction.replay": [lambda: fc.auction_replay(pools, slots=1, **nb),
                           lambda: fc.auction_winners(pools, slots=1, **nb)],
        "sampling.tables": [lambda v=v: fc.permutation_shapley(v, permutations=2, **nb)
                            for v in tables],
        "sampling.permutations": [lambda: fc.permutation_shapley(
            lambda s: np.zeros(len(s)), 3, permutations=2, **nb)],
        # fastcredit.shap's kernels (private entry points)
        "sampling.tree_permutations": [lambda: sampling._tree_permutations(
            [[0, 1], [2, 3]], 0, 2, backend="numba")],
        "sampling.masked_rows": [lambda: sampling._masked_rows(
            x.reshape(2, 3), x[:3].reshape(1, 3), np.array([5], np.uint64), np.zeros(1, np.int64),
            backend="numba")],
        "sampling.background_mean": [lambda w=w: sampling._background_mean(
            x.reshape(1, 2, 3), w, backend="numba") for w in (None, x[:2])],
        "sampling.affordable_pairs": [lambda: sampling._affordable_pairs(
            np.array([[[0, 1, 2], [2, 1, 0]]], np.int32), 6, backend="numba")],
        "audit.bootstrap_median": [lambda: fc.paired_bootstrap(x, x[::-1], resamples=4, **nb)],
        "audit.bootstrap_mean_diff": [lambda: fc.contrastive_effects(
            x, 0.5, offsets=offsets, kind="continuous", resamples=4, backend="numba")],
        "audit.spearman": [lambda: fc.within_spearman(x, x[::-1], offsets, min_steps=2, **nb)],
        "audit.alignment": [lambda atol=atol: fc.alignment(
            x.reshape(-1, 2), x[::-1].reshape(-1, 2), atol=atol, **nb) for atol in (0.0, 0.5)],
        "audit.shuffle": [lambda: fc.shuffle_within(x, offsets, **nb)],
        "audit.derangement": [lambda: fc.derangement(4, backend="numba")],
        "audit.replay_advantage": [lambda: fc.replay_advantage([[1.0, 0.0]], [[0.0, 0.0]],
                                                               backend="numba")],
        "audit.bootstrap_spearman_diff": [lambda: fc.spearman_difference(
            x, x[::-1], x, resamples=4, **nb)],
        "audit.null_worlds": [lambda: fc.correlated_error_null(
            np.arange(64.0).reshape(4, 16) % 5, np.arange(64.0).reshape(4, 16) % 3, worlds=2,
            **nb)],
        "shaping.project": [lambda v=v: (fc.project_zero_sum(v, 0.5, **nb),
                                         fc.shape_advantages(np.zeros(2), v, **nb))
                            for v in tables],
        "shaping.tokens": [lambda ta=ta: fc.token_advantages(
            np.zeros(2), np.zeros((2, 2)), ta, **nb)
            for ta in (np.zeros((2, 3), dtype=np.int64), np.zeros((2, 3), dtype=np.int32))],
        "trees.credit": [lambda: fc.actor_centered_credit(x, np.full(6, 1 / 3), offsets,
                                                          backend="numba")],
        "trees.allocation": [lambda: fc.AgentUCT(2, [0.0, 1.0], backend="numba").run(
            float, 3)],
        "synthetic.sponsored_search": [lambda: fc.synthetic.sponsored_search(2, **nb)],
        "synthetic.replay_repeats": [lambda v=v: fc.synthetic.replay_repeats(v, repeats=2, **nb)
                                     for v in tables],
        "approximators.stratified": [lambda v=v: fc.approximate(v, method="stratified",
                                                                budget=5, **nb)
                                     for v in tables],
        "approximators.owen": [lambda v=v: fc.approximate(v, method="owen", budget=5, **nb)
                               for v in tables],
        "approximators.shapiq": [lambda v=v: fc.approximate(v, index="SII", order=2,
                                                            method="shapiq", budget=5, **nb)
                                 for v in tables],
        "approximators.svarmiq": [lambda v=v: fc.approximate(v, index="SII", order=2,
                                                             method="svarmiq", budget=5, **nb)
                                  for v in tables],
        # budget 7 of 8 coalitions: draws, both folds and the Cholesky solve
        **{f"approximators.{method}": [
            lambda v=v, method=method, index=index: fc.approximate(
                v, method=method, index=index, order=1 if index == "SV" else 2, budget=7,
                **nb) for v in tables]
           for method, index in (("kernelshap", "SV"), ("kernelshapiq", "k-SII"),
                                 ("inconsistent_kernelshapiq", "SII"),
                                 ("kaddshap", "kADD-SHAP"), ("regression_fsii", "FSII"),
                                 ("regression_fbii", "FBII"))},
        # SPEX: its detection kernel on 9 players (budget 300 of 512: t = 2, b = 3)
        "approximators.spex": [lambda dt=dt: fc.approximate(
            np.linspace(0.0, 1.0, 512).astype(dt) ** 2, index="FBII", order=2, method="spex",
            budget=300, **nb) for dt in (np.float64, np.float32)],
        # SPEX's BCH decoder (fastcredit.approximators.sparse), one word with an error
        "approximators.bch_decode": [lambda: _bch_code().decode(
            np.eye(1, 6 + _bch_code().parity_length, dtype=np.uint8), "numba")],
        # ProxySPEX's trees' Fourier coefficients: one stump (a split and two leaves)
        "approximators.proxyspex": [lambda: _stump_fourier()],
        "learning": [lambda: fc.learning.benchmark(fc.learning.benchmark_pools(4, rewrites=3),
                                                   m=2, credits=("shapley",), runs=1, steps=1,
                                                   batch=2, group=2, eval_samples=2),
                     lambda: fc.learning.plackett_luce(np.zeros((1, 3)), [[2, 0]])],
        # the trajectories' exact tables and the draws their games make, one
        # through the sampler: what it runs only for stochastic @njit games
        # (a game itself, and the sampler's driver of it, are compiled per
        # process: a game freezes its parameters in)
        "synthetic.trajectories": [
            lambda scm=fc.synthetic.and_failure(): (scm.shapley(),
                                                    scm.game(np.uint64(0), np.uint64(0))),
            lambda scm=fc.synthetic.pivotal_chain(2, 0): (
                scm.shapley(), fc.permutation_shapley(scm.game, scm.n_steps, permutations=2,
                                                      backend="numba"))],
        "rng.fill": [lambda: rng.fill(np.uint64(0), np.uint64(0), np.empty(1, np.uint64))],
    }
    return calls


def _stump_fourier():
    from .approximators.proxy import ensemble_fourier
    return ensemble_fourier([0], [-1], [-2], [0, 1], [1.0, 2.0], [0, 2], 2, "numba")


def _bch_code():
    from .approximators.sparse import BCHCode
    return BCHCode(6, 2)


def warm(stream=None) -> dict[str, float]:
    """Compile (or load from cache) every cached Numba kernel, then mark
    them warm.

    Every ``cache=True`` kernel of fastcredit._numba and fastcredit._jit is
    covered; not the drivers of users' ``@njit`` games
    (fastcredit._jit.games), which are compiled once per game and process.

    Returns the seconds each kernel key took: compile times in a process
    with an empty cache, load times once cached. Progress goes to
    ``stream`` when given."""
    seconds = {}
    for key, calls in _calls().items():
        t0 = time.perf_counter()
        for call in calls:
            call()
        seconds[key] = time.perf_counter() - t0
        if stream is not None:
            print(f"  {key:<28} {seconds[key]:7.2f} s", file=stream, flush=True)
    name = _marker_name()
    for d in _marker_dirs():
        if _writable_dir(d):
            (d / name).write_text("every fastcredit Numba kernel compiled and cached\n")
            break
    is_warm.cache_clear()
    return seconds
