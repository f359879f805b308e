"""shapiq's own approximator, explainer and exact-computer tests with
fastcredit.shapiq's classes swapped in (issue 27).

Runs shapiq's test files twice, in separate pytest processes: once as they
are (shapiq's classes), once under ``fastcredit.shapiq.use()`` (every class
fastcredit.shapiq replaces, in every shapiq module that holds it, the
explainers' configurations included). Prints, per file, how many tests pass
with shapiq's classes and how many of those pass with ours, and names every
test that passes with shapiq's and fails with ours. Tests that do not pass
with shapiq's own classes (the tree explainer's xgboost cases when xgboost
is not installed) are out.

shapiq's tests are taken from its repository at the tag of the installed
version: ``SHAPIQ_TESTS`` (a checkout's root, holding tests/), or else a git
mirror of github.com/mmschlk/shapiq given by ``SHAPIQ_REPO`` (default: the
mirror the fetch tool leaves in /work/.mirror/mmschlk+shapiq/repo).

    .venv/bin/python bench/shapiq_upstream.py [tests/shapiq/tests_unit/... ...]
"""
from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from importlib.metadata import version
from pathlib import Path

from upstream_tests import pytest_outcomes, tests_at_tag

PATHS = ["tests/shapiq/tests_unit/tests_approximators", "tests/shapiq/tests_unit/tests_explainer",
         "tests/shapiq/tests_unit/tests_game_theory/test_exact_computer.py"]

#: A pytest plugin that swaps the classes when FASTCREDIT_SHAPIQ_SWAP=1
#: (before collection: shapiq's test modules import the classes by name).
PLUGIN = '''
import os


def pytest_configure(config):
    if os.environ.get("FASTCREDIT_SHAPIQ_SWAP") == "1":
        import fastcredit.shapiq
        fastcredit.shapiq.use()
'''


def shapiq_root(workdir: Path) -> Path:
    """A directory holding shapiq's tests/ at the installed version."""
    given = os.environ.get("SHAPIQ_TESTS")
    if given:
        return Path(given)
    return tests_at_tag(os.environ.get("SHAPIQ_REPO", "/work/.mirror/mmschlk+shapiq/repo"),
                        f"v{version('shapiq')}", workdir)


def run(root: Path, paths: list[str], swap: bool, workdir: Path) -> dict:
    """{test id: outcome} of one pytest run."""
    report = workdir / f"report_{int(swap)}.xml"
    env = dict(os.environ, FASTCREDIT_SHAPIQ_SWAP="1" if swap else "0",
               PYTHONPATH=os.pathsep.join([str(workdir), os.environ.get("PYTHONPATH", "")]))
    args = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-W", "ignore", "-p",
            "fastcredit_shapiq_swap", "--rootdir", str(root)] + paths
    return pytest_outcomes(args, env, root, report)


def main(paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "fastcredit_shapiq_swap.py").write_text(PLUGIN)
        root = shapiq_root(workdir)
        theirs = run(root, paths, False, workdir)
        ours = run(root, paths, True, workdir)
    print(f"shapiq {version('shapiq')}'s tests, shapiq's classes vs fastcredit.shapiq's "
          f"swapped in (fastcredit.shapiq.use())")
    print(f"shapiq's classes: {dict(Counter(theirs.values()))}; ours: "
          f"{dict(Counter(ours.values()))}")
    print(f"{'module':<60}{'tests':>7}{'pass (shapiq)':>15}{'pass (ours)':>13}")
    modules = sorted({t.split("::")[0] for t in theirs})
    failing = []
    for module in modules:
        ids = [t for t in theirs if t.split("::")[0] == module]
        base = [t for t in ids if theirs[t] == "passed"]
        kept = [t for t in base if ours.get(t) == "passed"]
        failing += [t for t in base if ours.get(t) != "passed"]
        print(f"{module.removeprefix('tests.shapiq.tests_unit.'):<60}{len(ids):>7}"
              f"{len(base):>15}{len(kept):>13}")
    for t in failing:
        print(f"  passes with shapiq's, not with ours: {t}")


if __name__ == "__main__":
    main(sys.argv[1:] or PATHS)
