"""Ratios for the trees family (no issue targets; for the record).

Time ratios, lower is better: `x stream` = kernel time / time to stream its
input once; `x alternative` = kernel time / the alternative's time.
"""
from __future__ import annotations

import numpy as np

import fastcredit as fc
from common import backend_choice_rows, best_of, row, stream_time

STATES, MAX_ACTIONS, ARMS, BUDGET = 1_000_000, 8, 8, 256


def rows():
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, MAX_ACTIONS + 1, size=STATES)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    state = np.repeat(np.arange(STATES), sizes)
    q = rng.normal(size=offsets[-1])
    pi = rng.uniform(size=offsets[-1])
    pi /= np.bincount(state, weights=pi)[state]
    actions = rng.integers(0, sizes)
    stream = stream_time(q, pi, offsets)

    def numpy_credit():
        base = np.add.reduceat(pi * q, offsets[:-1])
        credit = q - base[state]
        sampled = credit[offsets[:-1] + actions]
        return (sampled - sampled.mean()) / (sampled.std(ddof=1) + 1e-8)

    alt = best_of(numpy_credit, 3)
    out, fastest = [], {}
    times = {}
    for backend in fc.available_backends():
        t = best_of(lambda: fc.actor_centered_credit(q, pi, offsets, actions=actions,
                                                     standardize=True, backend=backend), 3)
        times[backend] = t
        out.append(row("actor_centered_credit", "1e6 states, 1-8 actions, gather + std",
                        backend, 1, t, stream, alt, "NumPy reduceat (no validation)"))
    fastest["trees.credit"] = min(times, key=times.get)
    values = rng.uniform(size=ARMS)
    times = {}
    for backend in fc.available_backends():
        for name, make in [("Uniform", lambda b: fc.Uniform(ARMS, backend=b)),
                           ("UCT", lambda b: fc.UCT(ARMS, backend=b)),
                           ("AgentUCT", lambda b: fc.AgentUCT(ARMS, np.arange(ARMS) * 1.0,
                                                              c_tok=0.01, backend=b))]:
            t = best_of(lambda: make(backend).run(lambda a: values[a], BUDGET), 5)
            if name == "UCT":
                times[backend] = t
            entry = row(name, f"{ARMS} actions, budget {BUDGET} ask/tell", backend, 1, t)
            entry["met"] = f"{t / BUDGET * 1e6:.1f} us per trial"
            out.append(entry)
    fastest["trees.allocation"] = min(times, key=times.get)
    out += backend_choice_rows(fastest)
    return out
