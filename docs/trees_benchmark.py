"""The tree benchmark of docs/trees.md, plotted: held-out expected utility
of the retrieval workflow's actor over PPO updates for ASCT-Uniform, -UCT,
-AgentUCT, VinePPO and trajectory-return PPO (mean and sd over runs), and
each method's final utility against the auxiliary cost its search spent.

    python docs/trees_benchmark.py [--runs 5] [--updates 60] [--out docs/trees_benchmark.png]

The same settings as ``fastcredit learn-trees`` (fastcredit.learning.tree_benchmark),
scored every 5 updates. Needs matplotlib for the plot (``pip install
'fastcredit[report]'``); without it the table is still printed.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from fastcredit import learning

LABELS = {"asct_uniform": "ASCT-Uniform", "asct_uct": "ASCT-UCT",
          "asct_agent_uct": "ASCT-AgentUCT", "vine": "VinePPO",
          "return": "trajectory-return PPO"}


def run(runs: int, updates: int, seed: int = 0):
    checkpoints = tuple(range(5, updates + 1, 5)) or (updates,)
    if checkpoints[-1] != updates:
        checkpoints += (updates,)
    res = learning.tree_benchmark(runs=runs, updates=updates, checkpoints=checkpoints,
                                  seed=seed)
    print(res.table())
    print(f"{len(res.methods) * runs} training runs in {res.seconds:.1f} s")
    return res


def plot(res, out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    x = np.array((0,) + tuple(res.checkpoints))
    for m in res.methods:
        v = np.column_stack([np.full(res.curves[m].shape[0], res.initial), res.curves[m]])
        mean = v.mean(axis=0)
        sd = v.std(axis=0, ddof=1) if v.shape[0] > 1 else np.zeros_like(mean)
        line, = ax.plot(x, mean, marker="o", ms=3, label=LABELS.get(m, m))
        ax.fill_between(x, mean - sd, mean + sd, color=line.get_color(), alpha=0.15)
        bx.errorbar(res.aux_cost[m].mean(), res.utility[m].mean(),
                    yerr=res.utility[m].std(ddof=1) if res.utility[m].size > 1 else 0,
                    fmt="o", color=line.get_color(), capsize=3)
        bx.annotate(LABELS.get(m, m), (res.aux_cost[m].mean(), res.utility[m].mean()),
                    textcoords="offset points", xytext=(5, 5), fontsize=8)
    s = res.settings
    ax.set_xlabel("PPO updates (16 episodes each)")
    ax.set_ylabel("held-out expected utility (exact)")
    ax.set_title(f"retrieval workflow: {s['runs']} runs, mean ± sd; tree budget "
                 f"{s['budget']}, VinePPO k {s['k']}", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    bx.set_xlabel("auxiliary cost units per episode (search)")
    bx.set_ylabel(f"utility after {res.checkpoints[-1]} updates")
    bx.set_title("utility against search cost", fontsize=10)
    bx.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--updates", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path(__file__).with_name("trees_benchmark.png"))
    a = p.parse_args(argv)
    res = run(a.runs, a.updates, a.seed)
    try:
        plot(res, a.out)
    except ImportError:
        print("matplotlib is not installed (pip install 'fastcredit[report]'): no plot")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
