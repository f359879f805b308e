"""Timing helpers shared by the ratio scripts of every family.

The machine is shared and noisy: every figure is the best of several repeats,
and every kernel is reported as a ratio to two other times measured in the
same process: the physical limit (streaming the same input bytes once with
``np.add.reduce``) and what a user would run instead.
"""
from __future__ import annotations

import os
import platform
import time

import numpy as np

from fastcredit import _backend


def best_of(fn, repeats: int = 7, min_time: float = 0.0) -> float:
    """Best wall time of ``fn()`` over ``repeats`` calls (after one warm-up);
    calls repeated inside a timing until ``min_time`` seconds have passed."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        n, t0 = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            dt = time.perf_counter() - t0
            if dt >= min_time:
                break
        best = min(best, dt / n)
    return best


def stream_time(*arrays, repeats: int = 7) -> float:
    """Time to read every byte of ``arrays`` once (the physical limit): an
    integer add-reduce over their bytes (integers, so arbitrary bit patterns
    cannot overflow into warnings or slow denormal paths)."""
    views = [np.ascontiguousarray(a).view(np.uint8).reshape(-1) for a in arrays]
    views = [v.view(np.uint64) if v.size % 8 == 0 else v for v in views]
    return sum(best_of(lambda v=v: np.add.reduce(v), repeats) for v in views)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"


def table(rows: list[dict], columns: list[str]) -> str:
    """A Markdown table of ``rows`` (dicts) with the given columns."""
    def fmt(x):
        if isinstance(x, float):
            return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"
        return str(x)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def row(kernel, case, backend, threads, t, stream=None, alt=None, alt_name="", target="",
        met=""):
    """One table row; ratios are left blank where there is nothing to compare."""
    return {"kernel": kernel, "case": case, "backend": backend, "threads": threads,
            "time": f"{t * 1e3:.2f} ms", "x stream": "" if stream is None else t / stream,
            "x alternative": "" if alt is None else t / alt, "alternative": alt_name,
            "target": target, "met": met}


def backend_choice_rows(fastest: dict) -> list[dict]:
    """Rows checking _backend.FASTEST against the measured fastest backend
    ({kernel key: backend})."""
    rows = []
    for key, best in fastest.items():
        listed = _backend.FASTEST.get(key, "c")
        rows.append({"kernel": key, "case": "backend=None", "backend": listed,
                     "alternative": f"measured fastest: {best}",
                     "met": "yes" if best == listed else "update _backend.FASTEST"})
    return rows
