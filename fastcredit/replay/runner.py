"""Running rollouts: one at a time or concurrently, sync or async.

A rollout is written once, as a generator that yields the calls it needs
(``(role, step, fn, args)``: the policy, a tool, a context edit, the outcome)
and receives their results; a driver makes the calls. The synchronous driver
calls them directly (rollouts spread over a thread pool of
``max_concurrency`` threads, kept between calls, for blocking clients), the
asynchronous one awaits those that return awaitables (rollouts as tasks of
one event loop, for async clients). Either way at most
``max_concurrency`` rollouts are in flight and results come back in index
order, so with streams keyed by the rollout index (:mod:`._streams`) the
results do not depend on the concurrency.

An exception raised by a user's callable is thrown back into its rollout,
which raises :class:`AgentError` naming the step; the first failing rollout in
index order is the one reported, the others are cancelled, and nothing of a
failed batch is returned.
"""
from __future__ import annotations

import asyncio
import inspect
import threading
from concurrent.futures import ThreadPoolExecutor

from .._params import MAX_CONCURRENCY

__all__ = ["AgentError", "MAX_CONCURRENCY", "run_one", "run_many"]


class AgentError(RuntimeError):
    """A policy, tool, context edit or outcome raised during a run.

    The original exception is its ``__cause__``.

    Parameters
    ----------
    message : str
        What failed, naming the step.
    role : str
        "policy", "env", "reset", "context edit" or "outcome".
    step : int
        The step being run.
    rollout : int
        The rollout's index.
    steps : tuple of Step
        The steps completed before the failure (the partial run, never
        returned as a Trajectory).

    Attributes
    ----------
    role, step, rollout, steps
        As given.

    Examples
    --------
    >>> from fastcredit.replay import Agent, AgentError, record
    >>> agent = Agent(lambda h, rng: 1 / 0, lambda a, h, rng: a, outcome=len)
    >>> try:
    ...     record(agent)
    ... except AgentError as error:
    ...     print(error.role, error.step, error.rollout, error.steps)
    ...     print(error)
    policy 0 0 ()
    policy raised at step 0 of the record (rollout 0): ZeroDivisionError('division by zero')
    """

    def __init__(self, message, *, role, step, rollout, steps):
        super().__init__(message)
        self.role, self.step, self.rollout, self.steps = role, step, rollout, steps


def _drive(gen):
    """Run a rollout generator with plain calls; its return value."""
    try:
        call = next(gen)
        while True:
            role, _step, fn, args = call
            try:
                result = fn(*args)
            except Exception as exc:
                call = gen.throw(exc)
                continue
            if inspect.isawaitable(result):
                getattr(result, "close", lambda: None)()
                call = gen.throw(TypeError(
                    f"{role} returned an awaitable to a synchronous run; declare it with "
                    f"async def so that the run goes on an event loop"))
                continue
            call = gen.send(result)
    except StopIteration as stop:
        return stop.value


async def _adrive(gen):
    """Run a rollout generator, awaiting what its calls return."""
    try:
        call = next(gen)
        while True:
            _role, _step, fn, args = call
            try:
                result = fn(*args)
                if inspect.isawaitable(result):
                    result = await result
            except Exception as exc:
                call = gen.throw(exc)
                continue
            call = gen.send(result)
    except StopIteration as stop:
        return stop.value


def _run_coroutine(coro):
    """Run ``coro`` to completion from synchronous code, also when this
    thread already runs an event loop (a notebook): then on a fresh loop in
    a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box = {}

    def target():
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:      # re-raised in the caller's thread
            box["error"] = exc
    thread = threading.Thread(target=target, name="fastcredit-replay-loop")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


async def _gather(make, n, limit):
    semaphore = asyncio.Semaphore(limit)

    async def one(i):
        async with semaphore:
            return await _adrive(make(i))
    tasks = [asyncio.ensure_future(one(i)) for i in range(n)]
    try:
        return [await t for t in tasks]            # index order: the first failure by index
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def run_one(gen, is_async: bool):
    """The result of one rollout generator."""
    return _run_coroutine(_adrive(gen)) if is_async else _drive(gen)


def run_many(make, n: int, *, max_concurrency: int, is_async: bool) -> list:
    """``[result of make(i) for i in range(n)]`` with at most
    ``max_concurrency`` rollouts in flight."""
    if n == 0:
        return []
    limit = min(max_concurrency, n)
    if is_async:
        return _run_coroutine(_gather(make, n, limit))
    if limit == 1 or getattr(_worker, "active", False):
        # inside a pool thread (an agent that runs replays itself), waiting on
        # the pool could deadlock it: run in this thread
        return [_drive(make(i)) for i in range(n)]
    pool = _pool(limit)
    futures = [pool.submit(_drive, make(i)) for i in range(n)]
    try:
        return [f.result() for f in futures]       # index order: the first failure by index
    finally:
        for f in futures:
            f.cancel()


_worker = threading.local()
_pools: dict = {}
_pools_lock = threading.Lock()


def _pool(workers: int) -> ThreadPoolExecutor:
    """A thread pool of ``workers`` threads, kept for the next call: starting
    64 threads costs tens of milliseconds on a loaded machine, as much as the
    rollouts they run."""
    with _pools_lock:
        pool = _pools.get(workers)
        if pool is None:
            pool = _pools[workers] = ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="fastcredit-replay",
                initializer=lambda: setattr(_worker, "active", True))
        return pool
