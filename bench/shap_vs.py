"""fastcredit.shap against shap, side by side in one process.

- A cheap NumPy model (linear plus pairwise and a three-way interaction), 10
  features, 1,000 rows, ``maskers.Independent`` with 10 background rows:
  time of each explainer, shap's and ours alternately, best of ``--repeats``,
  at equal ``max_evals`` (``nsamples`` for the legacy Sampling and Kernel);
  and the error against exact Shapley values over 20
  seeds (RMSE over 50 rows x 10 features, mean and sd over seeds).
- A scikit-learn GradientBoosting model (100 trees): the time in the model
  and outside it for both (the model's predict wrapped with a clock).
- The first call in a fresh process (imports done): ours vs shap's.

    .venv/bin/python bench/shap_vs.py [--repeats 3] [--rows 1000]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np
import shap

import fastcredit.shap as fs

M, N_BACKGROUND = 10, 10


def scenario(rows: int, seed: int = 0):
    rs = np.random.RandomState(seed)
    X, B, w = rs.randn(rows, M), rs.randn(N_BACKGROUND, M), rs.randn(M)

    def model(x):
        return (x @ w + x[:, 0] * x[:, 1] - 0.5 * x[:, 2] * x[:, 3]
                + 0.3 * x[:, 4] * x[:, 5] * x[:, 6])
    return model, X, shap.maskers.Independent(B)


def best_time(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def alternate(pairs, repeats):
    """Best time of each (name, ours, theirs), the two run alternately."""
    rows = []
    for name, ours, theirs in pairs:
        t_ours, t_theirs = np.inf, np.inf
        for _ in range(repeats):
            t_theirs = min(t_theirs, best_time(theirs, 1))
            t_ours = min(t_ours, best_time(ours, 1))
        rows.append((name, t_theirs, t_ours))
    return rows


def speed(rows: int, repeats: int) -> None:
    model, X, masker = scenario(rows)
    # warm both (shap compiles its Numba helpers on first use)
    shap.PermutationExplainer(model, masker)(X[:2], silent=True)
    shap.ExactExplainer(model, masker)(X[:2], silent=True)
    pairs = [
        ("Permutation, max_evals=500",
         lambda: fs.PermutationExplainer(model, masker, seed=0)(X, max_evals=500, silent=True),
         lambda: shap.PermutationExplainer(model, masker, seed=0)(X, max_evals=500,
                                                                    silent=True)),
        ("Exact (2**10 coalitions)",
         lambda: fs.ExactExplainer(model, masker)(X, silent=True),
         lambda: shap.ExactExplainer(model, masker)(X, silent=True)),
        ("Sampling, nsamples=500",
         lambda: fs.SamplingExplainer(model, masker.data).shap_values(X, nsamples=500,
                                                                       silent=True),
         lambda: shap.SamplingExplainer(model, masker.data).shap_values(X, nsamples=500,
                                                                         silent=True)),
    ]
    pairs.append(("Kernel, nsamples=500",
                  lambda: fs.KernelExplainer(model, masker.data).shap_values(
                      X, nsamples=500, silent=True),
                  lambda: shap.KernelExplainer(model, masker.data).shap_values(
                      X, nsamples=500, silent=True)))
    print(f"{rows} rows, {M} features, {N_BACKGROUND} background rows, best of {repeats}")
    print(f"{'explainer':<30}{'shap s':>10}{'ours s':>10}{'speed-up':>10}")
    for name, theirs, ours in alternate(pairs, repeats):
        print(f"{name:<30}{theirs:>10.3f}{ours:>10.3f}{theirs / ours:>9.1f}x")


def accuracy(seeds: int = 20, rows: int = 50) -> None:
    model, X, masker = scenario(rows)
    exact = fs.ExactExplainer(model, masker)(X, silent=True).values

    def rmse(values):
        return float(np.sqrt(np.mean((np.asarray(values) - exact) ** 2)))

    runs = {"Permutation 500": ([], []), "Sampling 500": ([], []), "Kernel 500": ([], [])}
    for seed in range(seeds):
        runs["Permutation 500"][0].append(rmse(shap.PermutationExplainer(
            model, masker, seed=seed)(X, max_evals=500, silent=True).values))
        runs["Permutation 500"][1].append(rmse(fs.PermutationExplainer(
            model, masker, seed=seed)(X, max_evals=500, silent=True).values))
        np.random.seed(seed)
        runs["Sampling 500"][0].append(rmse(shap.SamplingExplainer(model, masker.data)
                                            .shap_values(X, nsamples=500, silent=True)))
        np.random.seed(seed)
        runs["Sampling 500"][1].append(rmse(fs.SamplingExplainer(model, masker.data)
                                            .shap_values(X, nsamples=500, silent=True)))
        for who, lib in ((0, shap), (1, fs)):
            np.random.seed(seed)
            runs["Kernel 500"][who].append(rmse(lib.KernelExplainer(model, masker.data)
                                                .shap_values(X, nsamples=500, silent=True)))
    theirs_exact = shap.ExactExplainer(model, masker)(X, silent=True).values
    print(f"\nerror against exact values, {rows} rows, {seeds} seeds (RMSE mean +- sd)")
    print(f"Exact: max |ours - shap's| = {np.abs(exact - theirs_exact).max():.1e}")
    for name, (theirs, ours) in runs.items():
        print(f"{name:<18} shap {np.mean(theirs):.4f} +- {np.std(theirs):.4f}   "
              f"ours {np.mean(ours):.4f} +- {np.std(ours):.4f}")


class Clocked:
    """A model whose calls are timed."""

    def __init__(self, predict):
        self.predict = predict
        self.seconds = 0.0

    def __call__(self, x):
        t = time.perf_counter()
        out = self.predict(x)
        self.seconds += time.perf_counter() - t
        return out


def gradient_boosting(rows: int = 100, repeats: int = 3) -> None:
    from sklearn.ensemble import GradientBoostingRegressor

    model, X, masker = scenario(2000, seed=1)
    gbr = GradientBoostingRegressor(n_estimators=100, random_state=0).fit(X, model(X))
    X = X[:rows]
    print(f"\nGradientBoosting (100 trees), {rows} rows: time in the model and outside it "
          f"(the run of least total time of {repeats}, shap's and ours alternately)")
    print(f"{'explainer':<26}{'who':>6}{'total s':>10}{'model s':>10}{'outside':>10}")
    for name, make in [
            ("Permutation 500", lambda lib, f: lambda: lib.PermutationExplainer(
                f, masker, seed=0)(X, max_evals=500, silent=True)),
            ("Exact", lambda lib, f: lambda: lib.ExactExplainer(f, masker)(X, silent=True))]:
        best = {}
        for _ in range(repeats):
            for who, lib in (("shap", shap), ("ours", fs)):
                clocked = Clocked(gbr.predict)
                t = time.perf_counter()
                make(lib, clocked)()
                total = time.perf_counter() - t
                if who not in best or total < best[who][0]:
                    best[who] = (total, clocked.seconds)
        for who, (total, seconds) in best.items():
            print(f"{name:<26}{who:>6}{total:>10.3f}{seconds:>10.3f}{1 - seconds / total:>9.1%}")


FIRST_CALL = """
import time, numpy as np, shap, fastcredit.shap as fs
rs = np.random.RandomState(0); X, B, w = rs.randn(1, 10), rs.randn(10, 10), rs.randn(10)
cls = fs.ExactExplainer if sys.argv[1] == "ours" else shap.ExactExplainer
t = time.perf_counter(); cls(lambda x: x @ w + x[:, 0] * x[:, 1], B)(X, silent=True)
print(time.perf_counter() - t)
"""


def first_call() -> None:
    print("\nExact, first row in a fresh process (after imports):")
    for who in ("ours", "shap"):
        out = subprocess.run([sys.executable, "-c", "import sys\n" + FIRST_CALL, who],
                             capture_output=True, text=True, check=True).stdout
        print(f"  {who}: {float(out):.3f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1000)
    args = parser.parse_args()
    speed(args.rows, args.repeats)
    accuracy()
    gradient_boosting(repeats=args.repeats)
    first_call()
