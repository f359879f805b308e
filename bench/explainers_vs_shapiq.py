"""shapiq's own TabularExplainer with fastcredit's classes (fastcredit.shapiq.use())
against shapiq alone (issue 27): a scikit-learn model on 10 features, the
explainer's automatic choice and the named configurations, at one budget.

For each configuration and index: the model calls and rows the explainer
made for one explanation, and its wall time, both sides in one process,
alternately, over a few points.

    .venv/bin/python bench/explainers_vs_shapiq.py [--budget 500] [--points 3]
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
from sklearn.ensemble import RandomForestRegressor

from fastcredit import shapiq as fcs

N_FEATURES = 10
#: (approximator configuration, index, max_order)
RUNS = [("auto", "SV", 1), ("svarm", "SV", 1), ("montecarlo", "SV", 1), ("auto", "k-SII", 2),
        ("svarm", "k-SII", 2), ("montecarlo", "k-SII", 2), ("permutation", "k-SII", 2)]


class CountingModel:
    def __init__(self, model):
        self.model, self.calls, self.rows = model, 0, 0

    def __call__(self, x):
        self.calls += 1
        self.rows += len(x)
        return self.model.predict(x)


def explain(model, data, x, approximator, index, order, budget, ours):
    counting = CountingModel(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with fcs.use() if ours else _nothing():
            explainer = shapiq.TabularExplainer(counting, data, approximator=approximator,
                                                index=index, max_order=order,
                                                imputer="marginal", random_state=0)
        name = type(explainer.approximator).__name__
        t0 = time.perf_counter()
        explainer.explain(x, budget=budget)
        dt = time.perf_counter() - t0
    return name, counting.calls, counting.rows, dt


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--points", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, N_FEATURES))
    y = x[:, 0] * x[:, 1] + x[:, 2] - x[:, 3] * x[:, 4] + 0.1 * rng.normal(size=400)
    model = RandomForestRegressor(n_estimators=30, max_depth=6, random_state=0,
                                  n_jobs=1).fit(x, y)
    data = x[:50]
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.machine())
    print(f"machine: {cpu}; shapiq {metadata.version('shapiq')}; RandomForestRegressor, "
          f"{N_FEATURES} features, marginal imputer (50 background rows), budget "
          f"{args.budget}, {args.points} points")
    print(f"{'approximator':<12} {'index':<6} {'ours class':<22} {'calls':>11} {'rows':>15} "
          f"{'ours s':>7} {'shapiq s':>8}")
    for approximator, index, order in RUNS:
        times = {True: [], False: []}
        seen = {}
        for p in range(args.points):
            for ours in (True, False):
                seen[ours] = explain(model, data, x[100 + p], approximator, index, order,
                                     args.budget, ours)
                times[ours].append(seen[ours][3])
        (name, calls, rows, _), (_, calls_s, rows_s, _) = seen[True], seen[False]
        print(f"{approximator:<12} {index:<6} {name:<22} {calls:>5}/{calls_s:<5} "
              f"{rows:>7}/{rows_s:<7} {statistics.median(times[True]):>7.3f} "
              f"{statistics.median(times[False]):>8.3f}", flush=True)


if __name__ == "__main__":
    main()
