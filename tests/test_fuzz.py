"""Nothing silently wrong: a standing fuzz harness over the whole public API.

Every public callable (``__all__`` of fastcredit and of its public
submodules, constructors of classes that validate, public methods) gets a
valid call built from examples keyed by parameter name, then a generated
catalogue of malformed inputs for each parameter: dtypes, shapes, strides,
read-only, unaligned and overlapping arrays (two inputs sharing a buffer;
``out=`` over an input, or over the caller's buffer of an input the function
converts), non-finite values, out-of-range and huge integers, unknown
options, bad callables and paths. Each case runs in
a subprocess worker and must raise ValueError/TypeError naming the argument,
or succeed with the answer of the repaired input; a crash, a hang, another
exception, an error naming no argument, a modified input or a NaN from finite
input fails. Design and tables: tests/fuzz_catalogue.py. A new public
function is covered without editing anything when its required parameters
have examples there (``test_every_public_function_has_a_valid_call`` says
which are missing).

Defects the harness has found and that are not fixed yet are listed in
``DEFECTS`` as strict xfails, so the suite stays green and a fix shows up as
an XPASS to delete from the list.
"""
from __future__ import annotations

import atexit
import os
import pathlib
import shutil
import sys
import tempfile

import pytest

import fuzz_catalogue as fz

_TMP = pathlib.Path(tempfile.mkdtemp(prefix="fastcredit-fuzz-collect-"))
atexit.register(shutil.rmtree, _TMP, True)

SKIPPED: dict = {}
TARGETS = fz.discover(SKIPPED)
PLAN = fz.Plan(TARGETS, _TMP)

# The integrations import pyarrow and dask, or shapiq (seconds each): each
# group stays on one worker so the others never import it.
_LANES = {"fastcredit.scoring": 0, "fastcredit.dask": 0, "fastcredit.cli": 0,
          "fastcredit.shapiq": 1}


def _lane(name: str):
    for prefix, lane in _LANES.items():
        if name.startswith(prefix + "."):
            return lane
    return None


# Known defects found by this harness: reason -> case ids (the id says the
# function, the parameter and the malformed input; run one with
# ``pytest tests/test_fuzz.py -k '<id>' --runxfail`` to see what happens).
# Strict xfails: when a defect is fixed its cases XPASS, which fails, and the
# ids are deleted here.
DEFECTS: dict[str, list[str]] = {}

_KNOWN = {cid: reason for reason, ids in DEFECTS.items() for cid in ids}


# Without RLIMIT_AS (not Linux) a huge allocation may be granted lazily and
# thrash the machine instead of failing: those cases need Linux.
_LIMITED = sys.platform.startswith("linux")


def _params():
    for cid in PLAN.cases:
        reason = _KNOWN.get(cid)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        if not _LIMITED and fz.is_huge(cid):
            marks = [pytest.mark.skip(reason="needs the address-space limit of Linux")]
        yield pytest.param(cid, id=cid, marks=marks)


def _workers() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return int(os.environ.get("FASTCREDIT_FUZZ_WORKERS", max(1, min(cores, 4))))


@pytest.fixture(scope="module")
def results(request):
    """Every selected case, run once on the worker pool."""
    wanted = {cid for cid in PLAN.cases if cid.endswith(":valid")}
    if not _LIMITED:
        wanted = {cid for cid in wanted if not fz.is_huge(cid)}
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if spec is not None and "case" in spec.params and item.module is request.module:
            wanted.add(spec.params["case"])
    n = _workers()
    jobs = []
    for name, ids in PLAN.by_target.items():
        chosen = [cid for cid in ids if cid in wanted]
        if chosen:
            jobs.append((TARGETS[name], chosen, _lane(name)))
    # the pinned integrations first, then the largest groups, so the workers end together
    jobs.sort(key=lambda job: (job[2] is None, -len(job[1])))
    return fz.run_cases(jobs, n_workers=n)


@pytest.mark.parametrize("case", list(_params()))
def test_fuzz(case, results):
    ok, text = results.get(case, (False, "not run (its worker gave no answer)"))
    if not ok:
        pytest.fail(f"{case}: {text}", pytrace=False)


def test_every_public_function_has_a_valid_call(results):
    """Each public callable has examples for its required parameters, and the
    valid call built from them succeeds (with finite results); otherwise its
    malformed inputs would test nothing."""
    problems = dict(PLAN.missing)
    for name, ids in PLAN.by_target.items():
        ok, text = results.get(f"{name}:valid", (False, "not run"))
        if not ok:
            problems[name] = text
    assert not problems, "\n".join(f"{k}: {v}" for k, v in problems.items())


def test_discovery_covers_the_public_api():
    """Every public callable of every public module is a target (under the
    first name it is exported by), and result records are not."""
    import dataclasses
    import importlib
    import types

    covered = {id(fz.resolve(name)) for name in TARGETS}
    covered |= {id(fz.resolve(t.owner)) for t in TARGETS.values() if t.owner}
    for module_name in fz.PUBLIC_MODULES:
        if module_name in SKIPPED:
            continue
        module = importlib.import_module(module_name)
        names = fz.public_names(module)
        assert names, module_name
        for name in names:
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType) or not callable(obj) or (
                    isinstance(obj, type) and issubclass(obj, BaseException)):
                continue
            if isinstance(obj, type) and fz._is_result_class(obj) and not fz._public_methods(obj):
                continue
            assert id(obj) in covered, f"{module_name}.{name} is not fuzzed"
    for name in ("fastcredit.Pools", "fastcredit.UCT", "fastcredit.UCT.tell",
                 "fastcredit.synthetic.sponsored_search", "fastcredit.games.as_game",
                 "fastcredit.ShapleyEstimate.ci"):
        assert name in TARGETS, name
    # result records are not constructors
    assert "fastcredit.ShapleyEstimate" not in TARGETS
    assert "fastcredit.TreeCredit" not in TARGETS
    if "fastcredit.scoring" not in SKIPPED:   # a dataclass with defaults is a constructor
        assert dataclasses.is_dataclass(fz.resolve("fastcredit.scoring.ScoreConfig"))
        assert "fastcredit.scoring.ScoreConfig" in TARGETS


def test_the_harness_catches_misbehaviour(tmp_path):
    """Toy functions that crash, misread strides, modify their input, raise
    unnamed or IndexErrors or return NaN are caught; a correct one passes."""
    targets = {name: fz.Target(f"fuzz_catalogue.{name}", "function") for name in fz.TOYS}
    plans = {name: fz.build_cases(t, tmp_path) for name, t in targets.items()}
    jobs = [(targets[name], [c.id for c in cases], None) for name, cases in plans.items()]
    results = fz.run_cases(jobs, n_workers=min(2, _workers()))
    for name, expected in fz.TOYS.items():
        texts = [text for cid, (ok, text) in results.items()
                 if cid.startswith(f"fuzz_catalogue.{name}:") and not ok]
        if not expected:
            assert not texts, texts[:3]
        for what in expected:
            assert any(what in t for t in texts), (name, what, texts[:3])


def test_known_defects_are_cases():
    """Every id in DEFECTS still names a case (a renamed case would leave a
    stale entry that silently stops checking)."""
    stale = sorted(cid for cid in set(_KNOWN) - set(PLAN.cases)
                   if not any(cid.startswith(module + ".") for module in SKIPPED))
    assert not stale, stale
