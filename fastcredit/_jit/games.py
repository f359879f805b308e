"""Numba drivers that evaluate users' ``@njit`` value functions.

Not cached: each user function is a distinct argument type, compiled once per
process.

Signatures:
    fill_table(fn, out, start, stop)
    estimate_game(fn, m, seed, max_walks, budget, antithetic, cache_endpoints,
                  crn, tol, min_samples, values, stderr, stats, span, declared, bad)
        -> a STATUS_* of fastcredit._numba.sampling: 0, 1 when fn returned a
        non-finite value, 2 when a stochastic draw fell outside the declared
        bounds (its mask in bad[0]); fn: an @njit ``fn(mask) -> float``, or a
        stochastic ``fn(mask, key) -> float`` (told apart by the number of
        parameters). span (2,): a stochastic game's declared (lo, hi) when
        ``declared``, else (inf, -inf), widened to the range of its draws.
    evaluate(game, mask, key), stochastic(game): usable in users' jitted code.

Stochastic games draw their keys as described in fastcredit._numba.sampling,
whose estimate helpers run here on the user's game.
"""
import inspect

import numpy as np
from numba import njit, types
from numba.extending import overload

from .._numba.rng import key as rng_key
from .._numba.sampling import _estimate, _evaluate


@njit(nogil=True)
def fill_table(fn, out, start, stop):
    """out[mask] = fn(uint64(mask)) for mask in [start, stop)."""
    for mask in range(start, stop):
        out[mask] = fn(np.uint64(mask))


def takes_key(fn) -> bool:
    """Whether a jitted game is stochastic, ``fn(mask, key)``."""
    return len(inspect.signature(fn.py_func).parameters) == 2


@overload(_evaluate, jit_options={"nogil": True})
def _evaluate_jitted(game, mask, key):
    if isinstance(game, types.Dispatcher):
        if takes_key(game.dispatcher):
            return lambda game, mask, key: np.float64(game(mask, key))
        return lambda game, mask, key: np.float64(game(mask))
    return None


def evaluate(game, mask, key):
    """v(mask) of a game inside jitted code: ``game[mask]`` for a table,
    ``game(mask)`` for an @njit deterministic game, ``game(mask, key)`` for an
    @njit stochastic one (told apart by the number of parameters)."""
    raise NotImplementedError("evaluate is only callable from jitted code")


@overload(evaluate, jit_options={"nogil": True})
def _evaluate_impl(game, mask, key):
    return lambda game, mask, key: _evaluate(game, mask, key)


def stochastic(game):
    """Whether ``game`` draws keys (a stochastic @njit game), in jitted code."""
    raise NotImplementedError("stochastic is only callable from jitted code")


@overload(stochastic, jit_options={"nogil": True})
def _stochastic_impl(game):
    is_stochastic = isinstance(game, types.Dispatcher) and takes_key(game.dispatcher)
    return lambda game: is_stochastic


@njit(nogil=True)
def estimate_game(fn, m, seed, max_walks, budget, antithetic, cache_endpoints, crn, tol,
                  min_samples, values, stderr, stats, span, declared, bad):
    """The estimate of one ``@njit`` game (game index 0 of ``seed``); its
    status, with the offending coalition in ``bad[0]``."""
    return _estimate(fn, m, rng_key(seed, 0), max_walks, budget, antithetic,
                     cache_endpoints, stochastic(fn), crn, tol, min_samples, values, stderr,
                     stats, True, span, declared, bad, np.empty(m, dtype=np.int32),
                     np.empty((4, m)))
