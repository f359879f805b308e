"""Cases of the trees family (no issue targets; for the record).

Time ratios, lower is better: `x stream` = kernel time / time to stream its
input once; `x alternative` = kernel time / the alternative's time.

Bare calls: fc_actor_centered_credit on the converted arrays into prepared
outputs (the kernel checks pi and the actions and gathers the sampled
actions in its pass), then the standardisation of the sampled credit the
public call does in NumPy (work asked for, not a guard), so the ratio counts
the checks of the arguments' shapes and of the offsets (the public call
writes into out=, as a training loop reusing its last result would: fresh
result pages, ~9 ms of a ~28 ms kernel here, are not counted); and for the
allocation rules, the loop as the rules run it (a call of
fc_allocation_tell_pick, which tallies the last trial and picks the next,
then evaluate; the last trial tallied after the loop), so the ratio counts
the rule's construction and the per-trial checks of the values.
"""
from __future__ import annotations

import math

import numpy as np

import fastcredit as fc
from common import Alternative, Case, Limit, kernels, sci
from fastcredit._constants import ALLOC_AGENT_UCT, ALLOC_UCT, ALLOC_UNIFORM

MAX_ACTIONS, ARMS = 8, 8


def _bare_credit(q, pi, offsets, actions):
    """The bare call of fc.actor_centered_credit(q, pi, offsets,
    actions=actions, standardize=True)."""
    def prepare(backend, threads):
        impl = kernels("trees.credit", backend)
        credit, baseline = np.empty_like(q), np.empty(offsets.shape[0] - 1)
        sampled = np.empty(offsets.shape[0] - 1)

        def call():
            impl.actor_centered_credit(q, pi, offsets, False, 1e-6, actions, credit, baseline,
                                       sampled)
            sd = sampled.std(ddof=1)
            np.subtract(sampled, sampled.mean(), out=sampled)
            return np.divide(sampled, sd + 1e-8, out=sampled)

        return call
    return prepare


def _bare_allocation(rule, costs, c, c_tok, evaluate, budget):
    """The bare call of a rule's ``run(evaluate, budget)`` from a fresh rule
    (seed 0): the kernel's tally and pick and the caller's evaluate of each
    trial, and the last trial's tally."""
    def prepare(backend, threads):
        tell_pick = kernels("trees.allocation", backend).allocation_tell_pick
        counts, sums, seed = np.zeros(ARMS, dtype=np.int64), np.zeros(ARMS), np.uint64(0)

        def call():
            counts[:], sums[:] = 0, 0.0
            a, value = -1, 0.0
            for step in range(budget):
                a = tell_pick(rule, counts, sums, costs, c, c_tok, seed, step, a, value)
                value = evaluate(a)
            counts[a] += 1
            sums[a] += value
            return counts

        return call
    return prepare


def _credit_cases(quick, rng):
    states = 20_000 if quick else 1_000_000
    sizes = rng.integers(1, MAX_ACTIONS + 1, size=states)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    state = np.repeat(np.arange(states), sizes)
    q = rng.normal(size=offsets[-1])
    pi = rng.uniform(size=offsets[-1])
    pi /= np.bincount(state, weights=pi)[state]
    actions = rng.integers(0, sizes)

    def numpy_credit():
        base = np.add.reduceat(pi * q, offsets[:-1])
        credit = q - base[state]
        sampled = credit[offsets[:-1] + actions]
        return (sampled - sampled.mean()) / (sampled.std(ddof=1) + 1e-8)

    out = fc.actor_centered_credit(q, pi, offsets, actions=actions)   # pages touched once
    yield Case("actor_centered_credit",
               f"{sci(states)} states, 1-{MAX_ACTIONS} actions, gather + std, into out",
               lambda backend, threads: fc.actor_centered_credit(
                   q, pi, offsets, actions=actions, standardize=True, out=out,
                   backend=backend),
               Limit(q, pi, offsets),
               Alternative("NumPy reduceat (no validation)", numpy_credit),
               key="trees.credit", repeats=3, bare=_bare_credit(q, pi, offsets, actions))


def _allocation_cases(quick, rng):
    budget = 64 if quick else 256
    values = rng.uniform(size=ARMS)
    costs = np.arange(ARMS) * 1.0

    def evaluate(a):
        return values[a]

    for name, make, rule, c, c_tok in [
            ("Uniform", lambda b: fc.Uniform(ARMS, backend=b), ALLOC_UNIFORM, 0.0, 0.0),
            ("UCT", lambda b: fc.UCT(ARMS, backend=b), ALLOC_UCT, math.sqrt(2), 0.0),
            ("AgentUCT", lambda b: fc.AgentUCT(ARMS, costs, c_tok=0.01, backend=b),
             ALLOC_AGENT_UCT, math.sqrt(2), 0.01)]:
        yield Case(name, f"{ARMS} actions, budget {budget} ask/tell",
                   lambda backend, threads, make=make: make(backend).run(evaluate, budget),
                   met=lambda r: f"{r.t / budget * 1e6:.1f} us per trial",
                   key="trees.allocation", repeats=25,   # ~0.3 ms a run: best of 5 was noise
                   bare=_bare_allocation(rule, costs if rule == ALLOC_AGENT_UCT else
                                         np.zeros(ARMS), c, c_tok, evaluate, budget))


def cases(quick: bool):
    rng = np.random.default_rng(0)
    yield from _credit_cases(quick, rng)
    yield from _allocation_cases(quick, rng)
