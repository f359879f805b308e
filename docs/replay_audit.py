"""The audit of docs/replay.md, end to end: record the refund agent's failure,
check replay fidelity, intervene, attribute, and plot per-step credit with
its intervals.

    python docs/replay_audit.py [--out docs/replay_audit.png]

Needs matplotlib for the plot (``pip install 'fastcredit[report]'``); without
it the numbers are still printed.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from fastcredit import replay as rp
from fastcredit.replay import examples


def audit(seed: int = 0):
    scenario = examples.refund(p_absorb=0.5)
    rec = scenario.record
    print("recorded:", [a.name for a in rec.actions], "outcome", rec.outcome,
          f"(seed {rec.seed})")
    fidelity = rp.replay(rec)
    print(f"replay: action match {fidelity.action_match:.0%} over {fidelity.n_compared} steps")
    for name, iv in [("no injection in the context at step 1",
                      rp.EditContext(1, examples.without_injection)),
                     ("decline forced at step 1", rp.ForceAction(1, examples.DECLINE)),
                     ("step 2 resampled", rp.Resample(2))]:
        runs = [rp.replay(rec, iv, index=i).trajectory.outcome for i in range(200)]
        print(f"do({name}): P(refund) = {np.mean(runs):.2f} over 200 replays")
    t = time.perf_counter()
    est = rp.shapley(rec, budget=4000, seed=seed, max_concurrency=4)
    low, high = est.ci(0.95)
    ce = rp.contrastive(rec, samples=200, seed=seed, max_concurrency=4)
    elapsed = time.perf_counter() - t
    e = ce.effects
    print(f"{est.n_evals + ce.n_rollouts} rollouts in {elapsed:.2f} s "
          f"(Shapley truncated by its budget: {est.truncated})")
    print("step  action         Shapley [95% CI]          exact   contrastive [95% CI]")
    for k, step in enumerate(rec.steps):
        print(f"{k:4d}  {step.action.name:13s} {est.values[k]:+.3f} "
              f"[{low[k]:+.3f}, {high[k]:+.3f}]  {scenario.shapley[k]:+.3f}   "
              f"{e.effect[k]:+.3f} [{e.low[k]:+.3f}, {e.high[k]:+.3f}]")
    print("commitment point:", e.commitment_point)
    return scenario, est, ce


def plot(scenario, est, ce, out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [f"{k}: {s.action.name}" for k, s in enumerate(scenario.record.steps)]
    x = np.arange(len(names))
    low, high = est.ci(0.95)
    e = ce.effects
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6), sharey=False)
    ax1.bar(x, est.values, color="#4c72b0", alpha=0.8, label="estimate")
    ax1.errorbar(x, est.values, yerr=[est.values - low, high - est.values], fmt="none",
                 ecolor="black", capsize=4, label="95 % CI")
    ax1.scatter(x, scenario.shapley, marker="D", color="#dd8452", zorder=3, label="exact")
    ax1.set_title(f"Shapley credit over steps ({est.n_evals} rollouts)")
    ax2.bar(x, e.effect, color="#55a868", alpha=0.8)
    ax2.errorbar(x, e.effect, yerr=[e.effect - e.low, e.high - e.effect], fmt="none",
                 ecolor="black", capsize=4)
    if e.commitment_point is not None:
        ax2.axvline(e.commitment_point, color="#c44e52", ls="--", label="commitment point")
    ax2.set_title(f"Contrastive effect of resampling from k ({ce.n_rollouts} rollouts)")
    for ax in (ax1, ax2):
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(x, names, rotation=20, ha="right")
        ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote", out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("replay_audit.png"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    scenario, est, ce = audit(args.seed)
    try:
        plot(scenario, est, ce, args.out)
    except ImportError:
        print("matplotlib is not installed: no plot (pip install 'fastcredit[report]')")


if __name__ == "__main__":
    main()
