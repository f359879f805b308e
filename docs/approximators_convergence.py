"""The convergence plot of docs/approximators.md: RMSE of the values against
the exact Shapley values, over budgets, for every method of fc.approximate
(and fc.permutation_shapley beside them), on the n = 16 table game of
bench/approximators_vs_shapiq.py, 20 seeds per point.

    .venv/bin/python docs/approximators_convergence.py   # writes docs/approximators_convergence.png
"""
from __future__ import annotations

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


def rmse(estimate, exact):
    return float(np.sqrt(np.mean((np.asarray(estimate) - exact) ** 2)))


def main() -> None:
    v = table_game(N)
    exact = fc.interactions(v, "SV").values[1]
    curves = {}
    for method in ("svarm", "stratified", "owen", "shapiq", "kernelshap"):
        curves[method] = [np.sqrt(np.mean([rmse(fc.approximate(v, method=method, budget=b,
                                                                seed=s).values[1], exact) ** 2
                                           for s in range(SEEDS)])) for b in BUDGETS]
    curves["permutation_shapley"] = [
        np.sqrt(np.mean([rmse(fc.permutation_shapley(v, budget=b, seed=s).values, exact) ** 2
                         for s in range(SEEDS)])) for b in BUDGETS]
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, ys in curves.items():
        ax.loglog(BUDGETS, ys, marker="o", label=name)
        print(name, " ".join(f"{b}:{y:.4f}" for b, y in zip(BUDGETS, ys)))
    ax.set_xlabel("budget (game evaluations)")
    ax.set_ylabel(f"RMSE against exact SV ({SEEDS} seeds)")
    ax.set_title(f"n = {N} table game (additive + pairwise + noise)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "approximators_convergence.png", dpi=110)


if __name__ == "__main__":
    main()
