"""Compile-ahead of the Numba kernels: backend=None stays on C until the
Numba kernels are warm, `fastcredit warm` covers every kernel, and Numba's
cache finds a writable home on a read-only install."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import fastcredit as fc
from fastcredit import _backend, _warm


@pytest.fixture
def marker_dir(tmp_path, monkeypatch):
    """Markers read and written in a fresh directory only."""
    monkeypatch.setattr(_warm, "_marker_dirs", lambda: [tmp_path / "markers"])
    monkeypatch.delenv("FASTCREDIT_BACKEND", raising=False)
    _warm.is_warm.cache_clear()
    yield tmp_path / "markers"
    _warm.is_warm.cache_clear()


NUMBA_WINNERS = sorted(k for k, b in _backend.FASTEST.items() if b == "numba")


@pytest.mark.skipif(not NUMBA_WINNERS, reason="no kernel measured faster on Numba")
def test_cold_numba_winners_run_on_c_until_warm(marker_dir):
    assert not _warm.is_warm()
    assert {_backend.resolve(k, None) for k in NUMBA_WINNERS} == {"c"}
    seconds = _warm.warm()
    assert _warm.is_warm() and any(marker_dir.iterdir())
    assert set(seconds) >= set(_backend.FASTEST)
    assert {_backend.resolve(k, None) for k in NUMBA_WINNERS} == {"numba"}
    assert {_backend.resolve(k, None) for k, b in _backend.FASTEST.items() if b == "c"} == {"c"}


def test_warm_covers_every_kernel_family():
    assert set(_warm._calls()) >= set(_backend.FASTEST)


# Run in a fresh interpreter, so that only warm() has compiled or loaded
# anything. A kernel warm() reached has a signature there, unless only
# jitted code calls it and that code was loaded from Numba's cache (the
# callee is linked into it, and cached beside it when first compiled): such
# a helper counts as covered when a covered kernel names it.
_DISCOVER = textwrap.dedent("""
    import importlib, inspect, json, pkgutil, types
    from numba.core.caching import NullCache
    from numba.core.registry import CPUDispatcher
    from fastcredit import _warm

    _warm.warm()
    kernels = {}
    for package in ("fastcredit._numba", "fastcredit._jit"):
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
            module = importlib.import_module(f"{package}.{info.name}")
            for obj in vars(module).values():
                if (isinstance(obj, CPUDispatcher)
                        and obj.py_func.__module__ == module.__name__):
                    kernels[f"{module.__name__}.{obj.__name__}"] = obj

    def names(code):
        yield from code.co_names
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                yield from names(const)

    def callees(caller):
        found = set()
        for name in names(caller.py_func.__code__):
            target = caller.py_func.__globals__.get(name)
            for key, kernel in kernels.items():
                if kernel.__name__ == name and (target is kernel or any(
                        inspect.ismodule(g) and getattr(g, name, None) is kernel
                        for g in caller.py_func.__globals__.values())):
                    found.add(key)
        return found

    cached = {k for k, d in kernels.items() if not isinstance(d._cache, NullCache)}
    covered = {k for k in cached if kernels[k].signatures}
    todo = list(covered)
    while todo:
        for callee in callees(kernels[todo.pop()]) - covered:
            covered.add(callee)
            todo.append(callee)
    print(json.dumps({"cached": sorted(cached), "missed": sorted(cached - covered),
                      "uncached": sorted(set(kernels) - cached)}))
""")


def _fresh_python(code: str) -> str:
    root = pathlib.Path(fc.__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_warm_compiles_every_cached_kernel():
    found = json.loads(_fresh_python(_DISCOVER).splitlines()[-1])
    assert len(found["cached"]) > 100 and "fastcredit._jit.learning.plackett_luce" in \
        found["cached"]
    assert found["missed"] == []
    # the exempt ones: drivers compiled once per user game or environment and
    # process (fastcredit._jit.trees: the tree engine over a JitEnvironment,
    # whose functions each compiled search binds in)
    exempt = {"fastcredit._jit.games.fill_table", "fastcredit._jit.games.estimate_game",
              *(f"fastcredit._numba.sampling.{name}"
                for name in ("_admit", "_value", "_walk", "_estimate"))}
    assert {k for k in found["uncached"] if not k.startswith("fastcredit._jit.trees.")} \
        <= exempt


def test_environment_override_wins_even_when_cold(marker_dir, monkeypatch):
    monkeypatch.setenv("FASTCREDIT_BACKEND", "numba")
    assert _backend.resolve("tables.semivalue", None) == "numba"
    monkeypatch.setenv("FASTCREDIT_BACKEND", "c")
    assert {_backend.resolve(k, None) for k in _backend.FASTEST} == {"c"}
    # read on every resolution: unset at run time, FASTEST decides again
    monkeypatch.setenv("FASTCREDIT_BACKEND", "numba")
    monkeypatch.delenv("FASTCREDIT_BACKEND")
    assert _backend.resolve("tables.semivalue", None) == _backend.FASTEST["tables.semivalue"]


def test_marker_names_this_install(marker_dir):
    name = _warm._marker_name()
    assert fc.__version__ in name and "numba-" in name
    marker_dir.mkdir()
    (marker_dir / "warm-fastcredit-0.0.0-numba-0-py30").write_text("")
    assert not _warm.is_warm()      # another version's marker does not count


def test_read_only_install_caches_in_a_temp_dir(tmp_path, monkeypatch):
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setattr(_warm, "_temp_cache_dir", lambda: tmp_path / "tmpcache")
    monkeypatch.setattr(_warm, "_writable_dir",
                        lambda p: str(p).startswith(str(tmp_path)) and
                        (p.mkdir(parents=True, exist_ok=True) or True))
    _warm.ensure_numba_cache()
    assert pathlib.Path(config.CACHE_DIR) == tmp_path / "tmpcache" / "numba"


def test_a_users_cache_dir_is_kept(monkeypatch):
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", "/somewhere/of/theirs")
    monkeypatch.setattr(_warm, "_writable_dir", lambda p: False)
    _warm.ensure_numba_cache()
    assert config.CACHE_DIR == "/somewhere/of/theirs"
