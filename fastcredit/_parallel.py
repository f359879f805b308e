"""Splitting batch work over threads.

Kernels release the GIL (cffi calls do; Numba kernels are ``nogil=True``), so
plain Python threads run them in parallel. Work is split into contiguous,
``grain``-aligned chunks, one per thread, so every item is computed by the same
code in the same order whatever the thread count.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from ._params import THREADS

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def cpu_count() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def n_threads(threads) -> int:
    """Validate a ``threads=`` argument: None means all cores."""
    if threads.__class__ is int and threads >= 1:    # valid: no call more
        return threads
    threads = THREADS.check(threads)
    return cpu_count() if threads is None else threads


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers < cpu_count():
            _pool = ThreadPoolExecutor(max_workers=max(cpu_count(), 2),
                                       thread_name_prefix="fastcredit")
        return _pool


def chunks(n_items: int, threads: int, grain: int = 1) -> list[tuple[int, int]]:
    """Split range(n_items) into at most ``threads`` contiguous chunks whose
    boundaries are multiples of ``grain``."""
    units = -(-n_items // grain)
    parts = max(1, min(threads, units))
    if parts == 1:   # the one-thread call of every public function: no list building
        return [(0, n_items)]
    bounds = [min(n_items, (units * p // parts) * grain) for p in range(parts + 1)]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a] or [(0, n_items)]


def run(fn, n_items: int, threads: int, *, grain: int = 1, min_items: int = 1) -> list:
    """Call ``fn(start, stop)`` on chunks covering range(n_items) and return
    the results in chunk order. Runs inline when one thread is asked for or
    the work is smaller than ``min_items`` per extra thread."""
    min_items = max(min_items, 1)
    if threads <= 1 or n_items < 2 * min_items:   # one chunk, as below, without building it
        return [fn(0, n_items)]
    parts = chunks(n_items, min(threads, n_items // min_items), grain)
    if len(parts) == 1:
        return [fn(*parts[0])]
    futures = [_executor().submit(fn, a, b) for a, b in parts[1:]]
    first = fn(*parts[0])
    return [first] + [f.result() for f in futures]
