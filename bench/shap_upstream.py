"""shap's own explainer tests with fastcredit.shap's classes swapped in.

Runs shap's test files for the explainers fastcredit.shap replaces twice,
in separate pytest processes: once as they are (shap's classes), once with
``shap.PermutationExplainer``, ``shap.ExactExplainer``,
``shap.SamplingExplainer`` and (when fastcredit.shap has it)
``shap.KernelExplainer`` replaced by fastcredit's, in both ``shap`` and
``shap.explainers``. Prints, per file, how many tests pass with shap's
classes and how many of those pass with ours, and names every test that
passes with shap's and fails with ours. Tests that do not pass with shap's
own classes (they need xgboost, or download data sets) are out.

shap's tests are taken from its repository at the tag of the installed
version: ``SHAP_TESTS`` (a checkout's tests/ directory), or else a git
mirror of github.com/shap/shap given by ``SHAP_REPO`` (default: the
mirror the fetch tool leaves in /work/.mirror/shap+shap/repo).

    .venv/bin/python bench/shap_upstream.py [test_permutation.py ...]
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from upstream_tests import pytest_outcomes, tests_at_tag

FILES = ["test_permutation.py", "test_exact.py", "test_kernel.py", "test_sampling.py",
         "test_partition.py"]

#: A pytest plugin that swaps the classes when FASTCREDIT_SHAP_SWAP=1.
PLUGIN = '''
import os
if os.environ.get("FASTCREDIT_SHAP_SWAP") == "1":
    import shap
    import fastcredit.shap as ours
    for name in ours.__all__:
        if name.endswith("Explainer"):
            cls = getattr(ours, name)
            setattr(shap, name, cls)
            setattr(shap.explainers, name, cls)
            short = name[:-len("Explainer")]
            if hasattr(shap.explainers, short):
                setattr(shap.explainers, short, cls)
'''


def shap_tests(workdir: Path) -> Path:
    """The tests/ directory of shap's repository at the installed version."""
    given = os.environ.get("SHAP_TESTS")
    if given:
        return Path(given)
    import shap
    return tests_at_tag(os.environ.get("SHAP_REPO", "/work/.mirror/shap+shap/repo"),
                        f"v{shap.__version__}", workdir) / "tests"


def run(tests: Path, files: list[str], swap: bool, workdir: Path) -> dict:
    """{test id: outcome} of one pytest run."""
    report = workdir / f"report_{int(swap)}.xml"
    env = dict(os.environ, FASTCREDIT_SHAP_SWAP="1" if swap else "0",
               PYTHONPATH=os.pathsep.join([str(workdir), os.environ.get("PYTHONPATH", "")]))
    args = ["-q", "-p", "no:cacheprovider", "-p", "fastcredit_swap", "--rootdir",
            str(tests.parent)] + [str(tests / "explainers" / f) for f in files]
    return pytest_outcomes(args, env, tests.parent, report)


def main(files: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "fastcredit_swap.py").write_text(PLUGIN)
        tests = shap_tests(workdir)
        theirs = run(tests, files, False, workdir)
        ours = run(tests, files, True, workdir)
    import shap
    print(f"shap {shap.__version__}'s tests, shap's classes vs fastcredit.shap's swapped in")
    print(f"{'file':<22}{'tests':>7}{'pass (shap)':>13}{'pass (ours)':>13}")
    failing = []
    for f in files:
        stem = f.removesuffix(".py")
        ids = [t for t in theirs if t.split("::")[0].endswith(stem)]
        base = [t for t in ids if theirs[t] == "passed"]
        kept = [t for t in base if ours.get(t) == "passed"]
        failing += [t for t in base if ours.get(t) != "passed"]
        print(f"{f:<22}{len(ids):>7}{len(base):>13}{len(kept):>13}")
    for t in failing:
        print(f"  passes with shap's, not with ours: {t}")


if __name__ == "__main__":
    main(sys.argv[1:] or FILES)
