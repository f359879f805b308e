"""The one bench harness: case definitions, timing, the ratio table and the
check of ``fastcredit._backend.FASTEST``.

Each family ``F`` has ``bench/cases_F.py`` with a generator ``cases(quick)``
yielding :class:`Case` objects: the inputs, the public call, the same work
done by calling the backend's kernels directly (the bare call), the bytes
whose streaming is the physical limit, and the alternative a user would run.
Two front ends read them: ``bench/ratios.py`` (the ratio table, ``make
bench``) and ``bench/test_bench.py`` (pytest-benchmark).

The machine is shared and noisy: every figure is the best of several repeats,
and every kernel is reported as a ratio to two other times measured in the
same process: the physical limit (streaming the same input bytes once with
``np.add.reduce``) and what a user would run instead; and every public call
is reported as a ratio to its bare call, timed in turns with it: what the
public call adds to its kernels (validation, conversion, guards) must cost at
most BARE_LIMIT - 1 of them (issue 33).
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import os
import pathlib
import platform
import sys
import time
from typing import Callable, Iterable

# Measure the source tree this file belongs to (a checkout or a worktree),
# not whichever fastcredit an editable install points the venv at.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import numpy as np

import fastcredit as fc
from fastcredit import _backend

HERE = pathlib.Path(__file__).resolve().parent

#: A public call may take at most this many times its bare kernel calls.
BARE_LIMIT = 1.1

#: Columns of a family's table (bench/ratios.py prints one per family).
COLUMNS = ["kernel", "case", "backend", "threads", "time", "x stream", "x alternative",
           "alternative", "target", "met", "public ÷ kernel", f"≤{BARE_LIMIT}x kernel"]

#: Columns of the FASTEST verdict table.
VERDICT_COLUMNS = ["kernel", "FASTEST", "measured", "c", "numba", "numba / c", "cases", "met"]

#: A FASTEST entry is called wrong when the other backend is faster by more
#: than this (geometric mean over the entry's cases); less is noise here.
MARGIN = 0.15


class Skipped(Exception):
    """Raised by a family's ``cases`` when it cannot run here (a missing
    optional dependency); the message says why."""


def quick_from_env(default: bool) -> bool:
    """FASTCREDIT_BENCH_QUICK=1 / 0 forces small / full sizes."""
    value = os.environ.get("FASTCREDIT_BENCH_QUICK", "")
    return default if value == "" else value not in ("0", "false", "no")


def sci(n: int) -> str:
    """A round count as the tables print it: 1000000 -> "1e6", 20000 -> "2e4"."""
    return f"{n:.0e}".replace("e+0", "e").replace("e+", "e")


def best_of(fn, repeats: int = 7, warmup: bool = True) -> float:
    """Best wall time of ``fn()`` over ``repeats`` calls (after one warm-up
    call unless ``warmup`` is False)."""
    if warmup:
        fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def stream_time(*arrays, repeats: int = 7) -> float:
    """Time to read every byte of ``arrays`` once (the physical limit): an
    integer add-reduce over their bytes (integers, so arbitrary bit patterns
    cannot overflow into warnings or slow denormal paths)."""
    views = [np.ascontiguousarray(a).view(np.uint8).reshape(-1) for a in arrays]
    views = [v.view(np.uint64) if v.size % 8 == 0 else v for v in views]
    return sum(best_of(lambda v=v: np.add.reduce(v), repeats) for v in views)


class Limit:
    """The physical limit of a case: streaming ``arrays`` once. Timed on first
    use; cases sharing one Limit share the timing."""

    def __init__(self, *arrays):
        self.arrays = arrays
        self._time = None

    def time(self, repeats: int) -> float:
        if self._time is None:
            self._time = stream_time(*self.arrays, repeats=repeats)
        return self._time


@dataclasses.dataclass(eq=False)
class Alternative:
    """What a user would run instead of the kernel.

    ``fn()`` is timed (best of ``repeats``, no warm-up: plain NumPy/Python) and
    multiplied by ``scale`` (when ``fn`` runs a sample of the input); or
    ``measure()`` returns seconds itself (when timing and scoring go
    together). Timed on first use; cases sharing one Alternative share it."""
    name: str
    fn: Callable[[], object] | None = None
    scale: float = 1.0
    repeats: int = 3
    measure: Callable[[], float] | None = None
    _time: float | None = dataclasses.field(default=None, repr=False)

    def time(self, quick: bool) -> float:
        if self._time is None:
            if self.measure is not None:
                self._time = self.measure()
            else:
                reps = 1 if quick else self.repeats
                self._time = best_of(self.fn, reps, warmup=False) * self.scale
        return self._time


def _backend_arg(label: str) -> str | None:
    """The backend= a run label stands for: a backend, or None for a label
    that is not one (e.g. "auto", "numpy")."""
    return label if label in _backend.BACKENDS else None


def kernels(key: str, backend: str | None):
    """The kernel module a public call with ``backend`` runs ``key``
    ("family.name") on: what a bare call calls."""
    return _backend.kernels(key.split(".")[0], _backend.resolve(key, backend))


@dataclasses.dataclass(eq=False)
class Case:
    """One benchmark: ``run(backend, threads)`` is the public call, timed for
    each backend in ``backends`` (None: every available one; a label that is
    not a backend, e.g. "auto" or "numpy", runs with backend=None) and each
    thread count in ``threads``.

    ``measure(backend, threads)``, when given, returns the seconds itself
    instead of ``run`` being timed (for what only a fresh process can show,
    e.g. start-up and compile times).

    ``bare(backend, threads)`` prepares the same work done by calling the
    backend's kernels directly (``backend`` as ``run`` gets it, None for a
    label): it validates and converts the inputs once, as the public call
    would pass them to its kernels, and returns the call of no arguments that
    is timed in turns with ``run``; a public call that is several kernel
    calls is those calls in sequence, with the same thread split and the
    Python loops that drive them, so the ratio counts what the public call
    adds around its kernels. A string instead of a function says why a case
    has no bare call ("n/a" is printed with it).

    ``key`` names the ``_backend.FASTEST`` entry the 1-thread times decide.
    ``target`` (text, or a function of the thread count) and ``met``
    (function of the :class:`Result`) fill the verdict columns; ``detail``
    (function of the Result) is appended to the case text. Each of the
    ``repeats`` turns times ``burst`` calls of each run in a row (see
    :func:`interleaved`)."""
    kernel: str
    case: str
    run: Callable[[str | None, int], object]
    limit: Limit | None = None
    alternative: Alternative | None = None
    target: str | Callable[[int], str] = ""
    met: Callable[["Result"], str] | None = None
    detail: Callable[["Result"], str] | None = None
    threads: tuple[int, ...] = (1,)
    backends: tuple[str, ...] | None = None
    key: str | None = None
    repeats: int = 5
    burst: int = 1
    measure: Callable[[str | None, int], float] | None = None
    bare: Callable[[str | None, int], Callable[[], object]] | str | None = None

    def call(self, backend: str, threads: int):
        return self.run(_backend_arg(backend), threads)

    def bare_call(self, backend: str, threads: int) -> Callable[[], object] | None:
        """The prepared bare call of one run (None when the case has none)."""
        return self.bare(_backend_arg(backend), threads) if callable(self.bare) else None

    def runs(self) -> list[tuple[str, int]]:
        """The (backend, threads) pairs this case is timed at."""
        return [(b, t) for b in (self.backends or fc.available_backends())
                for t in self.threads]


@dataclasses.dataclass(eq=False)
class Result:
    """One timing of a case; ``out`` is the kernel's return value, ``earlier``
    the times of the family's rows so far ({(kernel, case, backend, threads):
    seconds})."""
    case: Case
    backend: str
    threads: int
    t: float
    stream: float | None
    alt: float | None
    out: object
    earlier: dict

    def time_of(self, case: str | None = None, threads: int = 1) -> float:
        """The time of an earlier row of the same kernel and backend: case
        text ``case`` (default: this case) at ``threads``."""
        return self.earlier[self.case.kernel, self.case.case if case is None else case,
                            self.backend, threads]


def families() -> list[str]:
    return sorted(p.stem[len("cases_"):] for p in HERE.glob("cases_*.py"))


def family_cases(family: str, quick: bool) -> Iterable[Case]:
    return importlib.import_module(f"cases_{family}").cases(quick)


def row(kernel, case, backend, threads, t, stream=None, alt=None, alt_name="", target="",
        met="", bare=None):
    """One table row; ratios are left blank where there is nothing to compare.
    ``bare`` is the bare call's time, or the text saying why there is none."""
    if isinstance(bare, str):
        over, verdict = "n/a", bare
    elif bare is None:
        over, verdict = "", ""
    else:
        over, verdict = t / bare, "yes" if t <= BARE_LIMIT * bare else "no"
    return {"kernel": kernel, "case": case, "backend": backend, "threads": threads,
            "time": f"{t * 1e3:.2f} ms", "x stream": "" if stream is None else t / stream,
            "x alternative": "" if alt is None else t / alt, "alternative": alt_name,
            "target": target, "met": met, "public ÷ kernel": over,
            f"≤{BARE_LIMIT}x kernel": verdict}


def interleaved(calls: dict, repeats: int, burst: int = 1) -> tuple[dict, dict]:
    """Best time and last output of each of ``calls`` ({label: fn()}). After
    one warm-up call each, the calls take turns within each of ``repeats``
    rounds, so that a slow spell of the shared machine hits all of them
    alike rather than the ones timed during it: the ratios between them
    (numba / C, 2 threads / 1, public / bare) are what the verdicts read.
    Every other round runs them in reverse order, so that no call always
    follows the same one: a 2-thread call right after another 2-thread call
    finds the pool's thread just idle and the other core awake, one after a
    1-thread call does not (token_advantages' 2-thread public ÷ kernel read
    1.07-1.28 with the bare call second and 0.93-1.13 with it first, best of
    100-150 on the shared AMD EPYC Zen 4, load 5-8). A call's previous output
    is released before it runs, so that each call makes its result in the
    memory its own last result left, not in whatever the calls between freed
    (derangement's public ÷ kernel, both making a fresh 8 MB result, read
    1.25 with each output released after the next call, AMD EPYC, load 1).
    With ``burst`` > 1 a call takes its turn as that many calls in a row, each
    timed, so that the best finds the cache as the call's own last run left
    it: the one-game m = 20 Shapley calls (0.3 ms, reading an 8 MB table)
    read public ÷ kernel 1.04-1.11 on C one call a turn and 1.03 in bursts of
    5, the ratio of a loop of either call (AMD EPYC Zen 4, load ~0)."""
    outs = {label: fn() for label, fn in calls.items()}
    best = dict.fromkeys(calls, float("inf"))
    for turn in range(repeats):
        for label, fn in reversed(calls.items()) if turn % 2 else calls.items():
            for _ in range(burst):
                outs[label] = None
                t0 = time.perf_counter()
                outs[label] = fn()
                best[label] = min(best[label], time.perf_counter() - t0)
    return best, outs


def best_interleaved(case: Case, repeats: int) -> tuple[dict, dict]:
    """Best time and last output of each of ``case.runs()``, each next to its
    bare call (keyed ("bare", backend, threads)), all timed in turns by
    :func:`interleaved`. ``case.measure`` cases are measured once per run."""
    runs = case.runs()
    if case.measure is not None:
        return {run: case.measure(*run) for run in runs}, dict.fromkeys(runs)
    calls = {}
    for run in runs:
        calls[run] = functools.partial(case.call, *run)
        bare = case.bare_call(*run)
        if bare is not None:
            calls["bare", *run] = bare
    return interleaved(calls, repeats, case.burst)


def run_cases(cases: Iterable[Case], quick: bool, measured: dict) -> list[dict]:
    """Time every case; returns the table rows and adds the 1-thread times of
    keyed cases to ``measured`` ({key: [{backend: seconds} per case]})."""
    earlier: dict = {}
    rows = []
    for case in cases:
        stream = case.limit.time(2 if quick else 7) if case.limit else None
        alt = case.alternative.time(quick) if case.alternative else None
        times = {}
        best, outs = best_interleaved(case, 1 if quick else case.repeats)
        for backend, threads in case.runs():
            t = best[backend, threads]
            r = Result(case, backend, threads, t, stream, alt, outs[backend, threads], earlier)
            target = case.target(threads) if callable(case.target) else case.target
            text = case.case if case.detail is None else f"{case.case}: {case.detail(r)}"
            bare = case.bare if isinstance(case.bare, str) else best.get(("bare", backend,
                                                                          threads))
            rows.append(row(case.kernel, text, backend_label(case.key, backend), threads, t,
                            stream, alt,
                            case.alternative.name if case.alternative else "", target,
                            case.met(r) if case.met else "", bare))
            earlier[case.kernel, case.case, backend, threads] = t
            if threads == 1 and backend in _backend.BACKENDS:
                times[backend] = t
        if case.key is not None:
            measured.setdefault(case.key, []).append(times)
    return rows


def backend_label(key: str | None, backend: str) -> str:
    """The backend column of a row: for C kernels that choose a path by
    processor (fastcredit._c.paths.KERNELS), the path they took, e.g.
    "c (avx512)", or "c (portable)" where they took none."""
    if backend != "c" or key is None:
        return backend
    from fastcredit._c import paths
    if key not in paths.KERNELS:
        return backend
    return f"c ({'+'.join(paths.taken_by(key)) or 'portable'})"


def backend_choice_rows(measured: dict) -> list[dict]:
    """One row per measured FASTEST key: both backends' 1-thread times on the
    bench inputs, the winner (geometric mean of numba/c over the key's cases)
    beside the entry in _backend.FASTEST, flagged when they disagree."""
    rows = []
    order = list(_backend.FASTEST)
    for key, cases in sorted(measured.items(), key=lambda kv: (
            order.index(kv[0]) if kv[0] in order else len(order), kv[0])):
        listed = _backend.FASTEST.get(key, "(missing)")
        both = [t for t in cases if set(_backend.BACKENDS) <= set(t)]
        entry = {"kernel": key, "FASTEST": listed, "cases": len(cases)}
        if not both:
            have = sorted({b for t in cases for b in t})
            rows.append({**entry, "measured": "/".join(have) or "-",
                         "met": "no verdict: needs both backends"})
            continue
        ratios = [t["numba"] / t["c"] for t in both]
        g = math.exp(sum(map(math.log, ratios)) / len(ratios))
        best = "c" if g > 1 else "numba"
        factor = g if g > 1 else 1 / g
        if best == listed:
            met = "yes"
        elif factor > 1 + MARGIN:
            met = f"NO: {best} {factor:.2f}x faster, update FASTEST"
        else:
            met = f"no, within noise ({best} {factor:.2f}x)"
        per_case = "" if len(ratios) == 1 else " (" + ", ".join(f"{x:.2f}" for x in ratios) + ")"
        rows.append({**entry, "measured": best,
                     "c": f"{sum(t['c'] for t in both) * 1e3:.2f} ms",
                     "numba": f"{sum(t['numba'] for t in both) * 1e3:.2f} ms",
                     "numba / c": f"{g:.2f}{per_case}", "met": met})
    return rows


def coverage(measured: dict, run: Iterable[str]) -> tuple[list[str], list[str]]:
    """The FASTEST keys of the families in ``run`` that no case measured (and
    keys of families that have no bench module), and the keys cases use that
    FASTEST does not list."""
    run, have = set(run), set(families())
    missing = [k for k in _backend.FASTEST
               if k not in measured and (k.split(".")[0] in run or k.split(".")[0] not in have)]
    unknown = [k for k in measured if k not in _backend.FASTEST]
    return missing, unknown


def machine() -> str:
    """The processor (model name, vendor and family from /proc/cpuinfo: the
    figures differ by processor kind, see docs/design.md), cores and versions."""
    cpu = {"model name": platform.processor() or platform.machine(), "vendor_id": "unknown",
           "cpu family": "?"}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                field, _, value = line.partition(":")
                if field.strip() in cpu:
                    cpu[field.strip()] = value.strip()
                if not line.strip():     # the first processor's fields end here
                    break
    except OSError:
        pass
    return (f"{cpu['model name']} (vendor {cpu['vendor_id']}, family {cpu['cpu family']}), "
            f"{os.cpu_count()} cores, Python {platform.python_version()}, "
            f"numpy {np.__version__}")


def c_paths() -> str:
    """The processor paths of the C kernels (fastcredit._c.paths): which the
    kernels take here, and the kernels that have them."""
    try:
        from fastcredit._c import paths
    except ImportError:
        return "no C backend"
    kernels = ", ".join(f"{key} ({'+'.join(names)})" for key, names in paths.KERNELS.items())
    return f"taking {'+'.join(paths.taken()) or 'none (portable code)'}; kernels with paths: {kernels}"


def table(rows: list[dict], columns: list[str]) -> str:
    """A Markdown table of ``rows`` (dicts) with the given columns."""
    def fmt(x):
        if isinstance(x, float):
            return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"
        return str(x)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)
