"""fastcredit's approximator drop-ins against shapiq's classes of the same
name (issue 27): n = 16 players, budget 20,000, a cheap table game.

For each class: seconds per ``approximate()`` call (median over the seeds)
and the RMSE of the orders 1..k against the exact index
(``fc.interactions(v, index, k)``; Inconsistent KernelSHAP-IQ against its own
full-budget limit), over the same seeds, ours and shapiq's timed
alternately in one process. Also the bare ``fc.approximate`` on the table
(no shapiq game in between).

    .venv/bin/python bench/approximators_vs_shapiq.py [--seeds 10] [--classes KernelSHAP ...]

A row ``Class@k`` runs the class at ``max_order=k`` (``KernelSHAPIQ@3``).
"""
from __future__ import annotations

import argparse
import platform
import statistics
import time
import warnings
from importlib import metadata

import numpy as np
import shapiq

import fastcredit as fc
from fastcredit import shapiq as fcs

N, BUDGET = 16, 20_000
CLASSES = ("SVARM", "StratifiedSamplingSV", "OwenSamplingSV", "KernelSHAP", "KernelSHAPIQ",
           "InconsistentKernelSHAPIQ", "kADDSHAP", "RegressionFSII", "RegressionFBII",
           "SHAPIQ", "SVARMIQ", "SPEX", "ProxySPEX", "KernelSHAPIQ@3")
METHOD = {"SVARM": "svarm", "StratifiedSamplingSV": "stratified", "OwenSamplingSV": "owen",
          "KernelSHAP": "kernelshap", "KernelSHAPIQ": "kernelshapiq",
          "InconsistentKernelSHAPIQ": "inconsistent_kernelshapiq", "kADDSHAP": "kaddshap",
          "RegressionFSII": "regression_fsii", "RegressionFBII": "regression_fbii",
          "SHAPIQ": "shapiq", "SVARMIQ": "svarmiq", "SPEX": "spex", "ProxySPEX": "proxyspex"}
#: (index, order) each class estimates at its defaults (the others: SV, 1)
INDEX = {"KernelSHAPIQ": ("k-SII", 2), "InconsistentKernelSHAPIQ": ("k-SII", 2),
         "kADDSHAP": ("kADD-SHAP", 2), "RegressionFSII": ("FSII", 2),
         "RegressionFBII": ("FBII", 2), "SHAPIQ": ("k-SII", 2), "SVARMIQ": ("k-SII", 2),
         "SPEX": ("FBII", 2), "ProxySPEX": ("FBII", 2), "KernelSHAPIQ@3": ("k-SII", 3)}


def _make(cls, name, seed):
    """The class at its defaults (SPEX's, ProxySPEX's arguments are keywords; order 2),
    or at the row's order (``Class@k``)."""
    if name in ("SPEX", "ProxySPEX"):
        return cls(n=N, max_order=2, random_state=seed)
    if "@" in name:
        return cls(N, max_order=INDEX[name][1], random_state=seed)
    return cls(N, random_state=seed)


def _entries(iv, order):
    """The orders 1..order of a shapiq InteractionValues, in fc's layout."""
    return np.concatenate([iv.get_n_order_values(1)] + [
        iv.get_n_order_values(k)[tuple(fc.subset_players(N, k).T)] for k in range(2, order + 1)])


def table_game(n: int, seed: int = 0) -> np.ndarray:
    """v(S) = sum of the members' weights + a pairwise interaction term +
    noise: a cheap, non-additive table."""
    g = np.random.default_rng(seed)
    masks = np.arange(1 << n)
    x = ((masks[:, None] >> np.arange(n)) & 1).astype(float)
    w = g.normal(size=n)
    pairs = g.normal(size=(n, n)) / n
    return x @ w + np.einsum("si,ij,sj->s", x, pairs, x) + 0.1 * g.normal(size=1 << n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--classes", nargs="+", choices=CLASSES, default=CLASSES)
    args = parser.parse_args()
    v = table_game(N)
    game = fcs.TableGame(v)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.machine())
    print(f"machine: {cpu}, python "
          f"{platform.python_version()}, shapiq {metadata.version('shapiq')}; n = {N}, "
          f"budget = {BUDGET:,}, {args.seeds} seeds, table game")
    fcs.SVARM(N, random_state=0).approximate(BUDGET, game)          # compile / load
    print(f"{'class':<22} {'ours s/call':>11} {'shapiq s/call':>13} {'speed-up':>9} "
          f"{'ours RMSE':>10} {'shapiq RMSE':>11} {'bare fc.approximate s':>22}")
    for name in args.classes:
        cls_name = name.split("@")[0]
        ours_cls, theirs_cls = getattr(fcs, cls_name), getattr(shapiq, cls_name)
        index, order = INDEX.get(name, ("SV", 1))
        if name == "InconsistentKernelSHAPIQ":   # not consistent: RMSE to its own limit
            limit = fc.approximate(v, index=index, order=order, method=METHOD[cls_name],
                                   budget=1 << N)
            exact = np.concatenate(limit.values[1:])
        else:
            exact = np.concatenate(fc.interactions(v, index, order).values[1:])
        t_ours, t_theirs, e_ours, e_theirs, t_bare = [], [], [], [], []
        for s in range(args.seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                a = _make(ours_cls, name, s).approximate(BUDGET, game)
                t1 = time.perf_counter()
                np.random.seed(s)      # shapiq's SPEX subsamples with numpy's global generator
                b = _make(theirs_cls, name, s).approximate(BUDGET, game)
                t2 = time.perf_counter()
            if cls_name in METHOD:
                fc.approximate(v, index=index, order=order, method=METHOD[cls_name],
                               budget=BUDGET, seed=s)
            t3 = time.perf_counter()
            t_ours.append(t1 - t0)
            t_theirs.append(t2 - t1)
            t_bare.append(t3 - t2)
            e_ours.append(np.mean((_entries(a, order) - exact) ** 2))
            e_theirs.append(np.mean((_entries(b, order) - exact) ** 2))
        to, tt = statistics.median(t_ours), statistics.median(t_theirs)
        print(f"{name:<22} {to:>11.4f} {tt:>13.3f} {tt / to:>8.0f}x "
              f"{np.sqrt(np.mean(e_ours)):>10.4f} {np.sqrt(np.mean(e_theirs)):>11.4f} "
              + (f"{statistics.median(t_bare):>22.4f}" if cls_name in METHOD
                 else f"{'-':>22}"),
              flush=True)


if __name__ == "__main__":
    main()
