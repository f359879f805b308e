"""A library's own test files at a tag, and one pytest run of them read back
test by test: shared by shap_upstream.py and shapiq_upstream.py, which run
the files twice (the library's classes, then fastcredit's swapped in by a
plugin)."""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def tests_at_tag(repo: str, tag: str, workdir: Path) -> Path:
    """``workdir``, holding the tests/ directory of the git mirror ``repo``
    at ``tag``."""
    archive = subprocess.run(["git", f"--git-dir={repo}", "archive", tag, "tests"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(workdir)], input=archive, check=True)
    return workdir


def pytest_outcomes(args: list[str], env: dict, cwd: Path, report: Path) -> dict:
    """{test id: "passed" | "failed" | "skipped"} of ``pytest args`` run in
    ``cwd`` with ``env``, from its JUnit report written to ``report``."""
    subprocess.run([sys.executable, "-m", "pytest", *args, f"--junitxml={report}"],
                   env=env, cwd=cwd, capture_output=True)
    outcomes = {}
    for case in ET.parse(report).iter("testcase"):
        kinds = {child.tag for child in case}
        outcome = ("failed" if kinds & {"failure", "error"} else
                   "skipped" if "skipped" in kinds else "passed")
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = outcome
    return outcomes
