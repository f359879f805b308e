"""Every command works from a plain install (no optional extras) or says in
one line which extra to install, exit status 2 (issue 31, item 3).

A plain install is simulated in a subprocess whose pyarrow cannot be imported
(``sys.modules['pyarrow'] = None`` before fastcredit is imported)."""
import subprocess
import sys

import pytest

BLOCKED = ("pyarrow", "pyarrow.parquet", "pyarrow.dataset", "pyarrow.fs", "pyarrow.compute")

PLAIN = (
    "import sys\n"
    f"for name in {BLOCKED!r}:\n"
    "    sys.modules[name] = None\n"
    "from fastcredit.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def plain(*args, cwd):
    return subprocess.run([sys.executable, "-c", PLAIN, *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def one_line_naming_the_extra(result, command):
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"fastcredit {command}: "), lines[0]
    assert "pip install 'fastcredit[parquet]'" in lines[0]


def test_the_simulation_blocks_pyarrow(tmp_path):
    probe = subprocess.run([sys.executable, "-c", PLAIN.split("from fastcredit")[0]
                            + "import pyarrow\n"], capture_output=True, text=True)
    assert probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr


def test_synth_and_score_say_which_extra_in_one_line(tmp_path):
    (tmp_path / "in.parquet").write_bytes(b"PAR1")
    one_line_naming_the_extra(plain("synth", "x.parquet", "--requests", 10, cwd=tmp_path),
                              "synth")
    one_line_naming_the_extra(plain("score", "in.parquet", "out.parquet", cwd=tmp_path),
                              "score")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]   # nothing written


@pytest.mark.parametrize("command", ["", "demo", "score", "synth", "learn", "learn-trees",
                                     "warm"])
def test_help_of_every_command_works_without_pyarrow(tmp_path, command):
    result = plain(*([command] if command else []), "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: fastcredit")


def test_demo_runs_without_pyarrow(tmp_path):
    result = plain("demo", "--requests", 2000, "--study-requests", 1000, "--quiet", "--out",
                   "d.npz", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "d.npz").exists()


def test_the_library_names_the_extra():
    code = PLAIN.split("from fastcredit")[0] + (
        "import fastcredit, fastcredit.scoring as s\n"
        "try:\n"
        "    s.score_parquet('in.parquet', 'out.parquet')\n"
        "except ImportError as err:\n"
        "    print(err)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "pip install 'fastcredit[parquet]'" in result.stdout


@pytest.mark.parametrize("flags", [["--cflags"], ["--libs"], ["--cflags", "--libs"],
                                   ["--include"]])
def test_native_flags_print_no_warning(tmp_path, flags):
    """``python -m fastcredit._native`` prints its flags and nothing else:
    no RuntimeWarning of runpy (the package must not import _native
    itself), even with warnings as errors."""
    result = subprocess.run([sys.executable, "-W", "error", "-m", "fastcredit._native",
                             *flags], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "" and result.stdout.strip()


def test_the_package_ships_py_typed():
    import os

    import fastcredit
    assert os.path.isfile(os.path.join(os.path.dirname(fastcredit.__file__), "py.typed"))
