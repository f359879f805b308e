import contextlib

import numpy as np
import pytest

import fastcredit as fc

BACKENDS = fc.available_backends()
#: The paths of the C kernels that choose by processor (fastcredit._c.paths):
#: "best", those the machine has; "scalar", none of them (the portable code
#: that every machine runs). Tests that take the `path` fixture run on both,
#: so that no path is tested only on some processors.
PATHS = ("best", "scalar")


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@contextlib.contextmanager
def on_path(path):
    """The C kernels on `path` (one of PATHS) within the block."""
    if path == "best" or "c" not in BACKENDS:
        yield
        return
    from fastcredit._c import paths
    with paths.only():
        yield


@pytest.fixture(params=PATHS)
def path(request):
    """Each of PATHS in turn, set while the test runs."""
    if request.param != "best" and "c" not in BACKENDS:
        pytest.skip("no C backend: no path chosen by processor")
    with on_path(request.param):
        yield request.param


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


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc):
    """A test on both the `backend` and `path` fixtures runs the Numba
    backend on "best" only: Numba kernels choose no path by processor, so
    the other pairs do not exist (rather than skip). Added as a parametrize
    mark, which pytest applies in place of the two fixtures' own params."""
    marked = set()
    for mark in metafunc.definition.iter_markers("parametrize"):
        argnames = mark.args[0]
        marked |= set(argnames.replace(" ", "").split(",") if isinstance(argnames, str)
                      else argnames)
    if {"backend", "path"} <= set(metafunc.fixturenames) and not {"backend", "path"} & marked:
        metafunc.definition.add_marker(pytest.mark.parametrize(
            ("backend", "path"),
            [(b, p) for b in BACKENDS for p in PATHS if p == "best" or b == "c"],
            indirect=True, ids=str))
