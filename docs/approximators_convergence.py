"""The convergence plot of docs/approximators.md, RMSE against budget for
every method of fc.approximate on the n = 16 table game of
bench/approximators_vs_shapiq.py:

- left, the values: RMSE against the exact Shapley values (and
  fc.permutation_shapley beside the methods), 20 seeds per point;
- right, the order-2 methods, each on its own index (orders 1 and 2 against
  fc.interactions of that index; Inconsistent KernelSHAP-IQ against its own
  full-budget limit, which is not k-SII), 20 seeds per point; ProxySPEX
  (LightGBM's cross-validated fitting, seconds to minutes a call) with 2 seeds
  and budgets up to 3,000, when lightgbm is installed.

    .venv/bin/python docs/approximators_convergence.py   # writes docs/approximators_convergence.png
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import fastcredit as fc  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "bench"))
from approximators_vs_shapiq import N, table_game  # noqa: E402

BUDGETS = [300, 1000, 3000, 10_000, 20_000, 40_000]
SEEDS = 20
VALUE_METHODS = ("svarm", "stratified", "owen", "shapiq", "kernelshap")
#: order-2 methods and the index each estimates
ORDER_2 = {"shapiq": "k-SII", "svarmiq": "k-SII", "kernelshapiq": "k-SII",
           "inconsistent_kernelshapiq": "k-SII", "kaddshap": "kADD-SHAP",
           "regression_fsii": "FSII", "regression_fbii": "FBII", "spex": "FBII",
           "proxyspex": "FBII"}
#: (seeds, budgets) of the methods whose calls take seconds or more
SLOW = {"proxyspex": (2, [300, 1000, 3000])}


def rmse(estimate, exact):
    return float(np.sqrt(np.mean((np.asarray(estimate) - exact) ** 2)))


def mean_rmse(estimate, exact, seeds, budgets):
    """sqrt of the mean over seeds of the squared RMSE, at each budget."""
    return [np.sqrt(np.mean([rmse(estimate(b, s), exact) ** 2 for s in range(seeds)]))
            for b in budgets]


def flat(est, order):
    return np.concatenate([np.asarray(est.values[k]) for k in range(1, order + 1)])


def value_curves(v):
    exact = fc.interactions(v, "SV").values[1]
    curves = {method: (BUDGETS, mean_rmse(lambda b, s, method=method: fc.approximate(
        v, method=method, budget=b, seed=s).values[1], exact, SEEDS, BUDGETS))
        for method in VALUE_METHODS}
    curves["permutation_shapley"] = (BUDGETS, mean_rmse(
        lambda b, s: fc.permutation_shapley(v, budget=b, seed=s).values, exact, SEEDS, BUDGETS))
    return curves


def order_2_curves(v):
    from fastcredit.approximators import _METHODS
    curves = {}
    for method, index in ORDER_2.items():
        if method not in _METHODS:
            continue
        if method == "proxyspex" and importlib.util.find_spec("lightgbm") is None:
            continue
        seeds, budgets = SLOW.get(method, (SEEDS, BUDGETS))
        if method == "inconsistent_kernelshapiq":
            exact = flat(fc.approximate(v, index=index, order=2, method=method,
                                        budget=2**N), 2)
        else:
            exact = flat(fc.interactions(v, index, 2), 2)
        curves[f"{method} ({index})"] = (budgets, mean_rmse(
            lambda b, s, method=method, index=index: flat(fc.approximate(
                v, index=index, order=2, method=method, budget=b, seed=s), 2),
            exact, seeds, budgets))
    return curves


def main() -> None:
    v = table_game(N)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, curves, what in ((axes[0], value_curves(v), "exact SV"),
                             (axes[1], order_2_curves(v), "the exact index, orders 1-2")):
        for name, (budgets, ys) in curves.items():
            ax.loglog(budgets, ys, marker="o", label=name)
            print(name, " ".join(f"{b}:{y:.4f}" for b, y in zip(budgets, ys)))
        ax.set_xlabel("budget (game evaluations)")
        ax.set_ylabel(f"RMSE against {what}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"n = {N} table game (additive + pairwise + noise); {SEEDS} seeds a point")
    fig.tight_layout()
    fig.savefig(HERE / "approximators_convergence.png", dpi=110)


if __name__ == "__main__":
    main()
