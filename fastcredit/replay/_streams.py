r"""Seeded per-step random streams.

Every random input of a run comes from a numpy Generator (PCG64) keyed by

    (seed, domain, rollout index, step, role)

so any step of any rollout can be re-drawn on its own, and a rollout's draws
depend on its index, never on when it ran or beside which others (the same
seed gives the same result for any concurrency). ``domain`` separates the
record from replays and from each attribution's rollouts; ``role`` the
policy's stream from the environment's at the same step.

The key is hashed to PCG64's 256 seed bits by chained SplitMix64 finalisers
(the mixer of fastcredit's counter-based RNG, :mod:`fastcredit._numba.rng`)
instead of numpy's SeedSequence, which costs about 15 us to build: a stream
per step and role would alone exceed the harness's 20 us per step.
"""
from __future__ import annotations

import numpy as np
from numpy.random.bit_generator import ISeedSequence

from .._constants import RNG_GOLDEN

__all__ = ["RECORD", "REPLAY", "GAME", "CONTRASTIVE", "POLICY", "ENV", "RESET",
           "rollout_key", "generator"]

# domains
RECORD, REPLAY, GAME, CONTRASTIVE = 0, 1, 2, 3
# roles
POLICY, ENV, RESET = 0, 1, 2

_MASK = (1 << 64) - 1


def _mix(z: int) -> int:
    """SplitMix64's finaliser (a bijection of 64-bit words)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _absorb(state: int, word: int) -> int:
    return _mix(state ^ _mix((word + RNG_GOLDEN) & _MASK))


def rollout_key(seed: int, domain: int, index: int) -> int:
    """The 64-bit key of a rollout's streams."""
    return _absorb(_absorb(_mix(seed), domain), index)


class _StepSeed(ISeedSequence):
    """A seed sequence of one (rollout, step, role) stream: SplitMix64 words
    counted up from the stream's key."""

    __slots__ = ("state",)

    def __init__(self, state: int):
        self.state = state

    def generate_state(self, n_words, dtype=np.uint32):
        dtype = np.dtype(dtype)
        n64 = n_words if dtype == np.uint64 else (n_words + 1) // 2
        s, words = self.state, []
        for _ in range(n64):
            s = (s + RNG_GOLDEN) & _MASK
            words.append(_mix(s))
        out = np.array(words, dtype=np.uint64)
        return out if dtype == np.uint64 else out.view(np.uint32)[:n_words].copy()


def generator(key: int, step: int, role: int) -> np.random.Generator:
    """The Generator of ``role`` at ``step`` of the rollout keyed ``key``."""
    return np.random.Generator(np.random.PCG64(_StepSeed(_absorb(key, 3 * step + role))))
