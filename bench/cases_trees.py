"""Cases of the trees family (no issue targets; for the record).

Time ratios, lower is better: `x stream` = kernel time / time to stream its
input once; `x alternative` = kernel time / the alternative's time.
"""
from __future__ import annotations

import numpy as np

import fastcredit as fc
from common import Alternative, Case, Limit, sci

MAX_ACTIONS, ARMS = 8, 8


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

    yield Case("actor_centered_credit",
               f"{sci(states)} states, 1-{MAX_ACTIONS} actions, gather + std",
               lambda backend, threads: fc.actor_centered_credit(
                   q, pi, offsets, actions=actions, standardize=True, backend=backend),
               Limit(q, pi, offsets),
               Alternative("NumPy reduceat (no validation)", numpy_credit),
               key="trees.credit", repeats=3)


def _allocation_cases(quick, rng):
    budget = 64 if quick else 256
    values = rng.uniform(size=ARMS)
    for name, make in [("Uniform", lambda b: fc.Uniform(ARMS, backend=b)),
                       ("UCT", lambda b: fc.UCT(ARMS, backend=b)),
                       ("AgentUCT", lambda b: fc.AgentUCT(ARMS, np.arange(ARMS) * 1.0,
                                                          c_tok=0.01, backend=b))]:
        yield Case(name, f"{ARMS} actions, budget {budget} ask/tell",
                   lambda backend, threads, make=make: make(backend).run(
                       lambda a: values[a], budget),
                   met=lambda r: f"{r.t / budget * 1e6:.1f} us per trial",
                   key="trees.allocation")


def cases(quick: bool):
    rng = np.random.default_rng(0)
    yield from _credit_cases(quick, rng)
    yield from _allocation_cases(quick, rng)
