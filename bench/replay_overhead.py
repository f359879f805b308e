"""fastcredit.replay: harness overhead per rollout step, and concurrency scaling.

    python bench/replay_overhead.py [--steps 20] [--rollouts 2000]

1. Overhead: an agent whose policy, tools and outcome return at once, so all
   the time is the harness's (per-step streams, histories, steps, the
   driver). Timed per step for a record, for game rollouts with nothing held
   (every step decided by the policy) and with every step held (reused).
   Target: <= 20 us a step.
2. Scaling: a policy that sleeps 10 ms per step (blocking, on threads; and
   async, on an event loop); 64 rollouts at max_concurrency=64 against one
   rollout. Target: <= 1.5x.
3. Coverage: the 95 % intervals of rp.shapley on the example agents against
   their planted Shapley values, over many seeds (fc.permutation_shapley
   reaches >= 0.947 on the SCMs themselves, @njit games with declared
   bounds).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import platform
import time

import numpy as np

from fastcredit import replay as rp
from fastcredit.replay import examples


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{model}, {os.cpu_count()} cores, load average {load:.2f}, "
            f"Python {platform.python_version()}, NumPy {np.__version__}")


def best_of(fn, repeats=5) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def overhead(steps: int, rollouts: int) -> None:
    agent = rp.Agent(lambda h, rng: 0, lambda a, h, rng: 0, lambda traj: 0.0, max_steps=steps)
    rec = rp.record(agent)
    game = rp.StepGame(rec)
    none = np.zeros(rollouts, dtype=np.uint64)
    every = np.full(rollouts, (1 << steps) - 1, dtype=np.uint64)
    n_rec = max(1, rollouts // 10)
    rows = [("record", best_of(lambda: [rp.record(agent, seed=s) for s in range(n_rec)])
             / (n_rec * steps)),
            ("game rollout, nothing held", best_of(lambda: game(none)) / (rollouts * steps)),
            ("game rollout, every step held", best_of(lambda: game(every)) / (rollouts * steps))]
    gen = best_of(lambda: [rp._streams.generator(12345, t, 0) for t in range(10_000)]) / 10_000
    print(f"harness overhead per rollout step ({steps} steps; policy, tools, outcome return "
          f"at once; best of 5):")
    for name, t in rows:
        print(f"  {name:32s} {t * 1e6:7.2f} us/step   target <= 20 us: "
              f"{'met' if t <= 20e-6 else 'MISSED'}")
    print(f"  (of which two per-step Generators: {2 * gen * 1e6:.2f} us)")


def scaling(steps: int, n: int = 64, sleep: float = 0.010) -> None:
    def blocking(history, rng):
        time.sleep(sleep)
        return 0

    async def awaiting(history, rng):
        await asyncio.sleep(sleep)
        return 0

    print(f"concurrency: {n} rollouts of {steps} steps, the policy sleeping {sleep * 1e3:.0f} ms "
          f"a step, max_concurrency={n}, against one rollout:")
    for name, policy in (("threads (blocking policy)", blocking),
                         ("event loop (async policy)", awaiting)):
        agent = rp.Agent(policy, lambda a, h, rng: 0, lambda traj: 0.0, max_steps=steps)
        rec = rp.record(agent)
        game = rp.StepGame(rec, max_concurrency=n)
        one = best_of(lambda: game(np.zeros(1, dtype=np.uint64)), 3)
        many = best_of(lambda: game(np.zeros(n, dtype=np.uint64)), 3)
        ratio = many / one
        print(f"  {name:28s} one {one * 1e3:6.1f} ms, {n} {many * 1e3:6.1f} ms: "
              f"{ratio:.2f}x   target <= 1.5x: {'met' if ratio <= 1.5 else 'MISSED'}")


def coverage(seeds: int, pairs=(10, 50)) -> None:
    """How often the 95 % intervals of rp.shapley cover the planted Shapley
    values of the example agents, over ``seeds`` seeds (each player's rate;
    the lowest is printed), with the mean |bias| in stderr units."""
    print(f"coverage of the 95 % intervals over {seeds} seeds (lowest over the players):")
    for sc in (examples.and_failure(0.3), examples.refund(0.5), examples.pivotal_chain()):
        for n in pairs:
            hits, bias = [], []
            t = time.perf_counter()
            for seed in range(seeds):
                est = rp.shapley(sc.record, permutations=2 * n, seed=seed)
                low, high = est.ci(0.95)
                hits.append((low <= sc.shapley) & (sc.shapley <= high))
                bias.append(est.values - sc.shapley)
            elapsed = (time.perf_counter() - t) / seeds
            rate = np.mean(hits, axis=0)
            z = np.abs(np.mean(bias, axis=0)) / (np.std(bias, axis=0) / np.sqrt(seeds) + 1e-300)
            print(f"  {sc.name:14s} {n:4d} pairs: coverage {rate.min():.3f} "
                  f"(players {np.round(rate, 3).tolist()}), max |mean bias| {z.max():.1f} "
                  f"standard errors, {elapsed * 1e3:.1f} ms an estimate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="steps of the overhead agent")
    parser.add_argument("--rollouts", type=int, default=2000, help="rollouts timed")
    parser.add_argument("--scaling-steps", type=int, default=5,
                        help="steps of the sleeping agent")
    parser.add_argument("--coverage-seeds", type=int, default=200,
                        help="seeds of the coverage rows (0: skip them)")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    overhead(args.steps, args.rollouts)
    scaling(args.scaling_steps)
    if args.coverage_seeds:
        coverage(args.coverage_seeds)


if __name__ == "__main__":
    main()
