import numpy as np
import pytest

import fastcredit as fc

BACKENDS = fc.available_backends()


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(20261130)


def random_tree_batch(rng, n_states=50, max_actions=6, min_actions=0):
    """(q, pi, offsets, sizes) of ragged states with min_actions..max_actions
    legal actions each (state 0 has 3), pi a policy over each state's actions."""
    sizes = rng.integers(min_actions, max_actions + 1, size=n_states)
    sizes[0] = 3
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    q = rng.normal(size=offsets[-1])
    pi = rng.uniform(0.01, 1, size=offsets[-1])
    state = np.repeat(np.arange(n_states), sizes)
    pi /= np.bincount(state, weights=pi, minlength=n_states)[state]
    return q, pi, offsets, sizes
