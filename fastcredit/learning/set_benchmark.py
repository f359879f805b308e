"""The set benchmark: train a policy with each per-action advantage and
score it on held-out requests (:func:`benchmark`, the set-intervention
paper's Table 3 analogue)."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .. import _params
from .._params import (ACTIONS, BATCH, BETA, CAPACITY, CREDIT, EVAL_SAMPLES, GROUP, HELD_OUT,
                       KAPPA, LEARNING_RATE, MODE, PRICING, RESERVE, REWRITES, RUNS, SEED,
                       SLOTS, STEPS, THREADS)
from .._validation import as_sequence
from ..auction import Pools
from .policies import Policy, policy_value
from .tasks import LearningTask, _check_m
from .update import CREDITS, train_policy

__all__ = ["BenchmarkResult", "benchmark"]


@dataclass(frozen=True)
class BenchmarkResult:
    """What :func:`benchmark` measured.

    Attributes
    ----------
    credits : tuple of str
        The per-action advantages compared.
    checkpoints : tuple of int
        Update counts the policies were scored after (the last is
        ``steps``).
    curves : dict
        credit -> (runs, len(checkpoints)) held-out expected set value of
        each run after each checkpoint.
    initial : float
        The initial (uniform) policy's held-out set value.
    best : float
        The mean over held-out requests of their best m-set's value.
    policies : dict
        credit -> list of the runs' Policy.
    n_train, n_held_out : int
        Training and held-out requests.
    settings : dict
        The parameters of the run.
    seconds : float
        Wall time of the whole benchmark.

    Examples
    --------
    >>> import fastcredit as fc
    >>> res = fc.learning.benchmark(fc.learning.benchmark_pools(20, rewrites=4), m=2,
    ...                             credits=("broadcast", "shapley"), runs=1, steps=3,
    ...                             eval_samples=8)
    >>> res.credits, res.checkpoints, res.n_train, res.n_held_out
    (('broadcast', 'shapley'), (1, 3), 14, 6)
    >>> round(res.initial, 3), round(res.best, 3), len(res.policies["shapley"])
    (13.244, 16.364, 1)
    """

    credits: tuple
    checkpoints: tuple
    curves: dict
    initial: float
    best: float
    policies: dict
    n_train: int
    n_held_out: int
    settings: dict
    seconds: float

    @property
    def values(self) -> dict:
        """credit -> (runs,) held-out set value of each run after training."""
        return {c: v[:, -1] for c, v in self.curves.items()}

    def summary(self) -> dict:
        """credit -> (mean, sd) over runs of the final held-out set value
        (sd with ddof 1; 0 for one run)."""
        return {c: (float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0)
                for c, v in self.values.items()}

    def table(self) -> str:
        """The Table 3 analogue as text: held-out expected set value, mean
        +- sd over runs, after each checkpoint; the last column is the final
        value as a share of the best set's. Rows by final value."""
        s = self.settings
        cols = [f"after {n:,}" for n in self.checkpoints]
        lines = [f"Held-out expected set value ({self.n_held_out:,} requests; policies trained "
                 f"on {self.n_train:,}; {s['runs']} runs each; m = {s['m']} of K = "
                 f"{s['rewrites']} rewrites; credit under the {s['evaluator']} evaluator)",
                 f"  {'advantage':<16}" + "".join(f"{c:>18}" for c in cols) +
                 f"{'% of best':>11}"]

        def row(name, cells, final):
            share = 100 * final / self.best if self.best else float("nan")
            lines.append(f"  {name:<16}" + "".join(f"{c:>18}" for c in cells) +
                         f"{share:>10.1f}%")

        names = {"broadcast": "Broadcast", "singleton": "Singleton",
                 "leave_one_out": "Leave-one-out", "banzhaf": "Banzhaf",
                 "shapley": "Shapley (CASI)"}
        for c in sorted(self.credits, key=lambda c: -self.curves[c][:, -1].mean()):
            v = self.curves[c]
            sd = v.std(axis=0, ddof=1) if v.shape[0] > 1 else np.zeros(v.shape[1])
            row(names[c], [f"{a:.3f} +- {b:.3f}" for a, b in zip(v.mean(axis=0), sd)],
                v[:, -1].mean())
        row("initial policy", [f"{self.initial:.3f}"] * len(cols), self.initial)
        row("best set", [f"{self.best:.3f}"] * len(cols), self.best)
        return "\n".join(lines)


def _derived_seed(seed: int, index: int) -> int:
    """The seed of run ``index`` of a benchmark seeded ``seed`` (a uint64 of
    NumPy's SeedSequence of both, so runs are independent streams)."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint64)[0])


def _checkpoints(checkpoints, steps):
    if checkpoints is None:
        picks = {steps // 30, steps // 10, steps // 3}
    else:
        picks = {_params.Integer("checkpoints", 1, steps, "").check(c)
                 for c in as_sequence(checkpoints, "checkpoints", "update counts")}
    return tuple(sorted(n for n in picks | {steps} if n >= 1))


def benchmark(pools, *, credits=CREDITS, m: int = 5, runs: int = 5, held_out: float = 0.3,
              steps: int = 300, checkpoints=None, batch: int = 32, group: int = 8,
              lr: float = 0.05, beta: float = 1.0, kappa: float = 1.0,
              evaluator: str = "filter", eval_samples: int = 64, slots: int = 4,
              reserve: float = 0.0, capacity=None, pricing: str = "first", seed: int = 0,
              threads=None, progress=None) -> BenchmarkResult:
    """The Table 3 analogue: train a policy with each per-action advantage
    ``runs`` times and report its held-out expected set value.

    The last ``held_out`` share of the requests is held out; the others are
    the training task. Run r of every credit is trained with the seed
    ``SeedSequence([seed, r])`` (its first uint64; the same first batches and
    noise for every credit); every policy, and the initial one, is scored by
    :func:`policy_value` with ``eval_samples`` sets per held-out request on
    the noise of ``SeedSequence([seed, runs])``, after each checkpoint.

    Parameters
    ----------
    pools : Pools
        Requests with K candidate rewrites each (e.g. :func:`benchmark_pools`).
    credits : sequence of str
        From :data:`CREDITS`.
    runs : int
        Training runs per credit.
    held_out : float
        Share of requests held out, in (0, 1); both parts must be non-empty.
    eval_samples : int in [1, 2**16]
        Sets sampled per held-out request by :func:`policy_value`.
    checkpoints : sequence of int, optional
        Update counts in [1, steps] after which the policies are also scored
        (default: steps // 30, steps // 10 and steps // 3); ``steps`` always is.
    slots, reserve, capacity, pricing
        The auction (:func:`fastcredit.auction_replay`).
    progress : callable, optional
        Called with a line of text after each run.
    m, steps, batch, group, lr, beta, kappa, evaluator, seed, threads
        As :func:`train_policy` (batch is capped at the training requests).

    Returns
    -------
    BenchmarkResult
        The held-out curves of every run of every credit, the initial and
        best values, and the trained policies.

    Raises
    ------
    TypeError
        If ``pools`` is not a :class:`fastcredit.Pools`, ``progress`` is not
        callable, ``credits`` or ``checkpoints`` is a single string or not a
        sequence, or an integer or real argument has the wrong type.
    ValueError
        If ``credits`` is empty, repeats a name or names an unknown credit,
        ``runs`` is not in [1, 1000], ``held_out`` is not in [0, 1] or
        leaves no training or no held-out request, a checkpoint is not in
        [1, steps], ``pools.m`` is not in [2, 16], ``m`` is not in [1, K),
        ``eval_samples`` is not in [1, 2**16], or another argument is out
        of range as in :func:`train_policy` and
        :func:`fastcredit.auction_replay`.

    Examples
    --------
    >>> import fastcredit as fc
    >>> res = fc.learning.benchmark(fc.learning.benchmark_pools(40, rewrites=6), m=3,
    ...                             credits=("broadcast", "shapley"), runs=2, steps=5)
    >>> res.checkpoints, res.curves["shapley"].shape
    ((1, 5), (2, 2))
    """
    t0 = time.perf_counter()
    if not isinstance(pools, Pools):
        raise TypeError(f"pools must be a fastcredit.Pools, got {type(pools).__name__}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable (it is given a line of text), got "
                        f"{type(progress).__name__}")
    credits = tuple(CREDIT.check(c, "credits") for c in as_sequence(credits, "credits",
                                                                    "credit names"))
    if not credits or len(set(credits)) != len(credits):
        raise ValueError(f"credits must be a non-empty list of distinct names, got {credits!r}")
    runs = RUNS.check(runs)
    held_out = HELD_OUT.check(held_out)
    n_test = int(round(held_out * pools.n_requests))
    n_train = pools.n_requests - n_test
    if n_test < 1 or n_train < 1:
        raise ValueError(f"held_out = {held_out} of the {pools.n_requests} requests of pools "
                         f"leaves {n_train} for training and {n_test} held out; both need >= 1")
    options = dict(m=ACTIONS.check(m), steps=STEPS.check(steps),
                   batch=min(BATCH.check(batch), n_train), group=GROUP.check(group),
                   lr=LEARNING_RATE.check(lr), beta=BETA.check(beta), kappa=KAPPA.check(kappa),
                   evaluator=MODE.check(evaluator, "evaluator"), threads=THREADS.check(threads))
    checkpoints = _checkpoints(checkpoints, options["steps"])
    auction = dict(slots=SLOTS.check(slots), reserve=RESERVE.check(reserve),
                   capacity=CAPACITY.check(capacity), pricing=PRICING.check(pricing))
    eval_samples = EVAL_SAMPLES.check(eval_samples, "eval_samples")
    seed = SEED.check(seed)
    REWRITES.check(pools.m, "pools.m")
    full = LearningTask.from_pools(pools, threads=threads, **auction)
    m = _check_m(m, full)
    train, test = full.requests(0, n_train), full.requests(n_train, full.n_requests)
    eval_seed = _derived_seed(seed, runs)

    def score(policy):
        return policy_value(test, policy, m=m, samples=eval_samples, seed=eval_seed)

    initial = score(Policy.initial(train))
    sizes = np.bitwise_count(np.arange(1 << full.rewrites))
    best = float(test.values[:, sizes == m].max(axis=1).mean())
    curves, policies = {}, {}
    for c in credits:
        policies[c], curve = [], []
        for r in range(runs):
            policies[c].append(train_policy(train, c, seed=_derived_seed(seed, r), **options))
            curve.append([score(policies[c][-1].after(n)) for n in checkpoints])
            if progress is not None:
                progress(f"{c} run {r + 1}/{runs}: held-out set value {curve[-1][-1]:.3f} "
                         f"({time.perf_counter() - t0:.1f} s)")
        curves[c] = np.array(curve)
    settings = dict(options, runs=runs, held_out=held_out, eval_samples=eval_samples,
                    rewrites=full.rewrites, seed=seed, **auction)
    return BenchmarkResult(credits, checkpoints, curves, initial, best, policies, n_train,
                           n_test, settings, time.perf_counter() - t0)

