"""fastcredit.replay against CAR (causal-agent-replay) on CAR's own two-step
interaction scenario: the same attribution within the intervals, and the
time per rollout.

    python bench/replay_car.py --car PATH [--permutations 200] [--repeats 3]

PATH is a checkout of CAR's public repository (its ``src`` and ``tests``
folders are imported from there; CAR needs pydantic and structlog). Both
estimate Shapley credit over the steps of the AND failure of two steps with
q = 0.3 (planted: 0.455, 0.455, 0) with the same number of rollouts: CAR's
``shapley_attribution`` on its ``interaction_policy`` fixture (``samples_per_eval=1``,
antithetic), and ``fastcredit.replay.shapley`` on ``examples.and_failure``.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import numpy as np

from fastcredit import replay as rp
from fastcredit.replay import examples

PLANTED = np.array([0.455, 0.455, 0.0])


def car_run(car: Path, permutations: int, seed: int):
    """(values, low, high, rollouts, seconds) of CAR's estimate."""
    sys.path[:0] = [str(car / "src"), str(car)]
    from car.attribute.shapley import shapley_attribution
    from car.record.recorder import SyntheticCodec, record_run
    from tests.scm_fixtures import ScriptedPolicy
    from tests.synthetic_scms import (ENV, INTERACTION_OBSERVED, interaction_outcome,
                                      interaction_policy)

    codec = SyntheticCodec()

    async def run():
        factual = await record_run(trajectory_id="obs", policy=ScriptedPolicy(INTERACTION_OBSERVED),
                                   environment=ENV, codec=codec, system_prompt="sys",
                                   tool_schemas=[], user_input="go")
        t = time.perf_counter()
        res = await shapley_attribution(factual, policy=interaction_policy(0.3, seed=seed),
                                        environment=ENV, codec=codec,
                                        outcome_fn=interaction_outcome(), bad_label="bad",
                                        n_permutations=permutations, samples_per_eval=1,
                                        antithetic=True, seed=seed)
        return res, time.perf_counter() - t
    res, seconds = asyncio.run(run())
    steps = sorted(res.per_step, key=lambda s: s.index)
    rollouts = 2 * permutations * (len(steps) + 1)
    return (np.array([s.value for s in steps]), np.array([s.ci_low for s in steps]),
            np.array([s.ci_high for s in steps]), rollouts, seconds)


def ours(permutations: int, seed: int):
    rec = examples.and_failure(0.3).record
    t = time.perf_counter()
    est = rp.shapley(rec, permutations=2 * permutations, bounds=(0.0, 1.0), seed=seed)
    seconds = time.perf_counter() - t
    low, high = est.ci(0.95)
    return est.values, low, high, est.n_evals, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--car", type=Path, required=True, help="a checkout of CAR")
    parser.add_argument("--permutations", type=int, default=200,
                        help="antithetic pairs (CAR's n_permutations)")
    parser.add_argument("--repeats", type=int, default=3, help="seeds timed")
    args = parser.parse_args()
    print(f"AND failure of two steps, q = 0.3, planted {PLANTED.tolist()}; "
          f"{args.permutations} antithetic pairs each")
    times = {"CAR": [], "fastcredit.replay": []}
    for seed in range(args.repeats):
        for name, run in (("CAR", lambda s: car_run(args.car, args.permutations, s)),
                          ("fastcredit.replay", lambda s: ours(args.permutations, s))):
            values, low, high, rollouts, seconds = run(seed)
            covered = (low <= PLANTED) & (PLANTED <= high)
            times[name].append(seconds / rollouts)
            print(f"  seed {seed} {name:18s} values {np.round(values, 3).tolist()} 95 % CI "
                  f"[{', '.join(f'{a:+.3f}..{b:+.3f}' for a, b in zip(low, high))}] "
                  f"covers planted: {covered.tolist()}; {rollouts} rollouts in {seconds:.3f} s")
    car_t, our_t = np.median(times["CAR"]), np.median(times["fastcredit.replay"])
    print(f"time per rollout (median over seeds): CAR {car_t * 1e6:.0f} us, fastcredit.replay "
          f"{our_t * 1e6:.0f} us: {car_t / our_t:.1f}x")


if __name__ == "__main__":
    main()
