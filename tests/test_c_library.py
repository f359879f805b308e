"""The C library shipped in the package links into plain C and C++ programs:
headers from fastcredit.get_include(), libfastcredit.so from
fastcredit.get_library(), flags from ``python -m fastcredit._native`` and from
pkg-config (the fastcredit.pc the package ships, and the absolute one the
module prints). Each program computes the Shapley value of the glove game with
the library and must print the bits fastcredit.shapley(..., backend="c")
gives (same sources, same flags). tests/c_abi_test.c, when it sits beside this
file, is also linked against the shared library instead of the sources.

Runs against whichever fastcredit is imported: an editable install (library
built in place, headers from csrc/) or a wheel (.ci/packaging copies this file
out of the tree and runs it there). Compiling tests skip only when the
compiler is missing.
"""
import ctypes
import functools
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import numpy as np
import pytest

import fastcredit as fc

HERE = pathlib.Path(__file__).resolve().parent
CC = shutil.which("gcc") or shutil.which("cc")
CXX = shutil.which("g++") or shutil.which("c++")
PKG_CONFIG = shutil.which("pkg-config") or shutil.which("pkgconf")

# Glove game: player 0 holds the only left glove, players 1 and 2 a right one
# each; a coalition is worth the pairs it can make. Shapley: (2/3, 1/6, 1/6).
GLOVE = [0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
GLOVE_SHAPLEY = [2 / 3, 1 / 6, 1 / 6]

C_USER = r"""
#include <stdio.h>
#include "fastcredit.h"

int main(void)
{
    const double glove[8] = {0, 0, 0, 1, 0, 1, 0, 1};
    double w[3], phi[3];
    uint64_t draws[2], state;
    if (fc_shapley_weights(3, w) != FC_OK) return 1;
    if (fc_semivalue_f64(glove, 1, 3, w, phi) != FC_OK) return 2;
    /* the linked stream and the header's inline generator agree */
    if (fc_rng_fill(7, 3, 2, draws) != FC_OK) return 3;
    state = fc_rng_key(7, 3);
    if (draws[0] != fc_rng_next(&state) || draws[1] != fc_rng_next(&state)) return 4;
    printf("%.17g %.17g %.17g\n", phi[0], phi[1], phi[2]);
    return 0;
}
"""

CXX_USER = r"""
#include <cstdio>
#include <vector>
#include "fastcredit.h"

int main()
{
    const std::vector<double> glove = {0, 0, 0, 1, 0, 1, 0, 1};
    std::vector<double> w(3), phi(3);
    std::vector<uint64_t> draws(2);
    if (fc_shapley_weights(3, w.data()) != FC_OK) return 1;
    if (fc_semivalue_f64(glove.data(), 1, 3, w.data(), phi.data()) != FC_OK) return 2;
    if (fc_rng_fill(7, 3, 2, draws.data()) != FC_OK) return 3;
    uint64_t state = fc_rng_key(7, 3);
    if (draws[0] != fc_rng_next(&state) || draws[1] != fc_rng_next(&state)) return 4;
    std::printf("%.17g %.17g %.17g\n", phi[0], phi[1], phi[2]);
    return 0;
}
"""

LANGUAGES = {"c": (lambda: CC, ".c", C_USER, ["-std=c99"]),
             "c++": (lambda: CXX, ".cpp", CXX_USER, ["-std=c++11"])}


@functools.lru_cache(maxsize=None)
def _native(*args) -> str:
    """Output of ``python -m fastcredit._native ARGS`` (the documented CLI)."""
    res = subprocess.run([sys.executable, "-m", "fastcredit._native", *args],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def _stale_hint() -> str:
    """Why linking may fail in a source tree: a library older than csrc/."""
    inc = pathlib.Path(fc.get_include())
    if inc.name != "csrc":
        return ""
    built = os.path.getmtime(fc.get_library())
    newer = sorted(p.name for p in inc.iterdir() if p.suffix in (".c", ".h", ".inc")
                   and p.stat().st_mtime > built)
    return (f"\n(libfastcredit.so is older than csrc/{', csrc/'.join(newer)}: "
            "reinstall, pip install -e . or make test)" if newer else "")


def _compile_and_run(tmp_path, language, flags) -> str:
    compiler, suffix, source, std = LANGUAGES[language]
    if compiler() is None:
        pytest.skip(f"no {language} compiler on PATH")
    src = tmp_path / f"user{suffix}"
    src.write_text(source)
    exe = tmp_path / f"user-{language}"
    cmd = [compiler(), *std, "-Wall", "-Wextra", "-pedantic", "-Werror", str(src), *flags,
           "-o", str(exe)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, shlex.join(cmd) + "\n" + res.stderr + _stale_hint()
    # found through the rpath the flags put in, not through the environment
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    run = subprocess.run([str(exe)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, f"exit {run.returncode}: {run.stdout}{run.stderr}"
    return run.stdout


def _check_glove(stdout):
    phi = [float(x) for x in stdout.split()]
    assert phi == pytest.approx(GLOVE_SHAPLEY, abs=1e-15)
    # bit for bit what the cffi extension, built from the same sources, gives
    assert phi == fc.shapley(np.array(GLOVE), backend="c").tolist()


def _flags(how, tmp_path):
    if how == "api":              # the Python functions; the .so named by its path
        lib_dir = fc.get_library_dir()
        return ["-I" + fc.get_include(), fc.get_library(), "-Wl,-rpath," + lib_dir]
    if how == "cli":              # python -m fastcredit._native --cflags --libs
        return shlex.split(_native("--cflags", "--libs"))
    if PKG_CONFIG is None:
        pytest.skip("no pkg-config on PATH")
    if how == "pkg-config":       # the fastcredit.pc the package ships
        pc_dir = _native("--pkg-config-path")
    else:                         # the absolute one python -m fastcredit._native prints
        pc_dir = tmp_path / "pkgconfig"
        pc_dir.mkdir()
        (pc_dir / "fastcredit.pc").write_text(_native("--pkg-config") + "\n")
    env = dict(os.environ, PKG_CONFIG_PATH=str(pc_dir))
    res = subprocess.run([PKG_CONFIG, "--cflags", "--libs", "fastcredit"], capture_output=True,
                         text=True, env=env)
    assert res.returncode == 0, res.stderr
    return shlex.split(res.stdout)


@pytest.mark.parametrize("how", ["api", "cli", "pkg-config", "pkg-config-absolute"])
@pytest.mark.parametrize("language", ["c", "c++"])
def test_program_links_the_library(tmp_path, language, how):
    _check_glove(_compile_and_run(tmp_path, language, _flags(how, tmp_path)))


def test_c_abi_test_against_the_shared_library(tmp_path):
    """The exhaustive C ABI test links against libfastcredit.so: every function
    the headers declare is exported."""
    source = HERE / "c_abi_test.c"
    if not source.is_file():
        pytest.skip("tests/c_abi_test.c is not beside this file")
    if CC is None:
        pytest.skip("no C compiler on PATH")
    exe = tmp_path / "c_abi_test"
    cmd = [CC, "-std=c99", "-O2", "-I" + fc.get_include(), str(source), fc.get_library(),
           "-Wl,-rpath," + fc.get_library_dir(), "-lm", "-o", str(exe)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, shlex.join(cmd) + "\n" + res.stderr + _stale_hint()
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr


def test_library_loads_without_a_compiler():
    lib = ctypes.CDLL(fc.get_library())
    w = (ctypes.c_double * 3)()
    assert lib.fc_shapley_weights(3, w) == 0
    assert list(w) == pytest.approx([1 / 3, 1 / 6, 1 / 3])


def test_layout():
    inc = pathlib.Path(fc.get_include())
    top = (inc / "fastcredit.h").read_text()
    families = re.findall(r'^\s*#\s*include\s+"([^"]+)"', top, flags=re.M)
    assert families and all((inc / name).is_file() for name in families)
    if inc.name == "include":     # a wheel: the public headers only
        names = {p.name for p in inc.iterdir()}
        assert {"fastcredit.h", *families} <= names and "internal.h" not in names
        assert all(name.endswith(".h") for name in names), names
    lib = pathlib.Path(fc.get_library())
    assert lib.parent == pathlib.Path(fc.get_library_dir())
    assert (pathlib.Path(_native("--pkg-config-path")) / "fastcredit.pc").is_file()
    assert _native("--include", "--library") == f"{fc.get_include()}\n{fc.get_library()}"
    readelf = shutil.which("readelf")
    if readelf and sys.platform.startswith("linux"):
        dynamic = subprocess.run([readelf, "-d", str(lib)], capture_output=True, text=True).stdout
        assert "Library soname: [libfastcredit.so]" in dynamic
        assert "RPATH" not in dynamic and "RUNPATH" not in dynamic
