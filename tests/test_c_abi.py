"""csrc/ is a standalone C99 library: it compiles with no Python headers and
its public header works from a plain C program (tests/c_abi_test.c, which calls
every kernel family on hand-checked inputs; tests/test_sanitizers.py runs it
again under ASan and UBSan, with a fuzz driver)."""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
CC = shutil.which("cc") or shutil.which("gcc")


@pytest.fixture(scope="module")
def compiler():
    if CC is None:
        pytest.fail("no C compiler on PATH (fastcredit needs one to install)")
    return CC


def test_csrc_compiles_as_plain_c99(compiler, tmp_path):
    for src in sorted((ROOT / "csrc").glob("*.c")):
        res = subprocess.run([compiler, "-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic",
                              "-Werror", "-c", str(src), "-o", str(tmp_path / (src.stem + ".o"))],
                             capture_output=True, text=True)
        assert res.returncode == 0, f"{src.name}:\n{res.stderr}"


# FC_NO_VECTOR_EXT: the portable loops that compilers without GCC's vector
# extensions use.
@pytest.mark.parametrize("defines", [[], ["-DFC_NO_VECTOR_EXT"]])
def test_header_from_a_c_program(compiler, tmp_path, defines):
    exe = tmp_path / "c_abi_test"
    sources = [str(p) for p in sorted((ROOT / "csrc").glob("*.c"))]
    res = subprocess.run([compiler, "-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror",
                          *defines, "-I", str(ROOT / "csrc"),
                          str(ROOT / "tests" / "c_abi_test.c"), *sources, "-lm", "-o", str(exe)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr
