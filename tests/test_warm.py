"""Compile-ahead of the Numba kernels: backend=None stays on C until the
Numba kernels are warm, `fastcredit warm` covers every kernel, and Numba's
cache finds a writable home on a read-only install."""
import pathlib

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
    assert set(seconds) == set(_backend.FASTEST)
    assert {_backend.resolve(k, None) for k in NUMBA_WINNERS} == {"numba"}
    assert {_backend.resolve(k, None) for k, b in _backend.FASTEST.items() if b == "c"} == {"c"}


def test_warm_covers_every_kernel():
    assert set(_warm._calls()) == set(_backend.FASTEST)


def test_environment_override_wins_even_when_cold(marker_dir, monkeypatch):
    monkeypatch.setenv("FASTCREDIT_BACKEND", "numba")
    assert _backend.resolve("tables.semivalue", None) == "numba"
    monkeypatch.setenv("FASTCREDIT_BACKEND", "c")
    assert {_backend.resolve(k, None) for k in _backend.FASTEST} == {"c"}


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
