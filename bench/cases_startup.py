"""Start-up: what a first process pays before its first result (each row a
fresh Python process, so ratios to a stream limit do not apply).

* ``import fastcredit`` against ``import numpy`` (what any user already pays);
  target <= 0.3 s.
* the README's first examples (exact credit of a million 5-player games,
  permutation Shapley, auction replay of synthetic requests) in a first
  process after install: no warm marker and an empty Numba cache, so nothing
  is compiled before; target <= 2 s wall time in all.
* each Numba kernel's first compile (empty cache) and its load from the cache
  in a later process, as ``fastcredit warm`` measures them.
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import time

from common import Alternative, Case

from fastcredit._backend import FASTEST

# A first process after install: no warm marker (so backend=None stays on C)
# and, through NUMBA_CACHE_DIR, an empty Numba cache.
_COLD = ("import fastcredit._warm as w, pathlib, tempfile\n"
         "w._marker_dirs = lambda: [pathlib.Path(tempfile.mkdtemp())]\n")

README_EXAMPLES = _COLD + """
import numpy as np
import fastcredit as fc
v = np.random.default_rng(0).random((1_000_000, 32))
phi = fc.shapley(v)
fc.banzhaf(v); fc.singleton(v); fc.leave_one_out(v)
glove = np.array([0., 0., 0., 1., 0., 1., 0., 1.])
est = fc.permutation_shapley(glove, permutations=2000, seed=1)
est.ci(0.95)
pools = fc.synthetic.sponsored_search(100_000, seed=0)
tables = fc.auction_replay(pools, slots=4)
fc.shapley(tables)
"""

#: Why these cases have no bare call (see bench/common.py's Case).
NO_BARE = "n/a: a fresh process (import, compile or cache load), not a call"


def _python(code: str, env: dict | None = None) -> float:
    """Wall seconds of a fresh interpreter running ``code``."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True,
                   env={**os.environ, **(env or {})})
    return time.perf_counter() - t0


def _best(code: str, repeats: int, env: dict | None = None) -> float:
    return min(_python(code, env) for _ in range(repeats))


@functools.cache
def _kernel_seconds(cache_dir: str, phase: str) -> dict:
    """{kernel key: seconds} of ``fastcredit._warm.warm()`` in a fresh
    process whose Numba cache is ``cache_dir`` (``phase`` only keys the memo:
    "compile" runs first on the empty cache, "load" after it)."""
    out = subprocess.run(
        [sys.executable, "-c", _COLD + "import json, fastcredit._warm as w\n"
                                       "print(json.dumps(w.warm()))"],
        check=True, capture_output=True, text=True,
        env={**os.environ, "NUMBA_CACHE_DIR": cache_dir})
    return json.loads(out.stdout.strip().splitlines()[-1])


def cases(quick: bool):
    repeats = 1 if quick else 3
    yield Case("import fastcredit", "fresh process", None,
               alternative=Alternative("import numpy", measure=lambda: _best(
                   "import numpy", repeats)),
               measure=lambda b, t: _best("import fastcredit", repeats),
               target="<= 0.3 s", met=lambda r: "yes" if r.t <= 0.3 else "no",
               backends=("auto",), bare=NO_BARE)
    empty = tempfile.mkdtemp(prefix="fastcredit-bench-numba-")
    yield Case("README first examples", "first process after install (cold cache)", None,
               measure=lambda b, t: _python(README_EXAMPLES, {"NUMBA_CACHE_DIR": empty}),
               target="<= 2 s", met=lambda r: "yes" if r.t <= 2.0 else "no",
               backends=("auto",), bare=NO_BARE)
    if quick:
        return
    cache = tempfile.mkdtemp(prefix="fastcredit-bench-numba-")
    for key in FASTEST:
        yield Case(key, "Numba first compile (empty cache)", None,
                   measure=lambda b, t, key=key: _kernel_seconds(cache, "compile")[key],
                   backends=("numba",), bare=NO_BARE)
    for key in FASTEST:
        yield Case(key, "Numba load from cache (later process)", None,
                   measure=lambda b, t, key=key: (_kernel_seconds(cache, "compile"),
                                                  _kernel_seconds(cache, "load"))[1][key],
                   backends=("numba",), bare=NO_BARE)
