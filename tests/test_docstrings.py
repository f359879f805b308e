"""The public docstrings: every public name's examples run (doctest, as
written: each example imports what it uses), and every public function and
class has the numpydoc sections the reference site shows (numpydoc's
validator: Parameters naming every signature parameter, Returns, Raises and
Examples for functions; Parameters, when the constructor takes any, and
Examples for classes). The public names are those of ``fastcredit.__all__``
and of the public modules' (docs/api_page.py, which writes the API page of
the reference site from the same names).

Names that do not have every section yet are listed in ``_PENDING``; each is
an expected failure that says what is missing, and one that passes fails the
test until it is removed from the list. Functions that cannot raise are
listed, each with the reason, in ``_RAISES_NOTHING``: they need no Raises
section, and must not have one."""
import doctest
import importlib
import importlib.util
import inspect
import pathlib
import sys

import pytest

import fastcredit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "docs"))
from api_page import MODULES, module_names, public_modules  # noqa: E402

#: Names whose docstrings do not have every section yet (see the module
#: docstring); a name leaves it when its docstring is complete.
_PENDING: set[str] = set()

#: Functions that cannot raise, so have no Raises section (see the module
#: docstring), each with the reason.
_RAISES_NOTHING = {
    # no arguments; a backend that does not import is left out, not an error
    "fastcredit.available_backends",
    # any object is an answer: False for everything but an @njit dispatcher
    "fastcredit.games.is_jitted",
    # no arguments; it only rebinds names in shapiq's loaded modules
    "fastcredit.shapiq.use",
}

DOCTEST_FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
#: numpydoc's codes this test holds every public function to: PR01 a
#: parameter of the signature is not documented, PR02 a documented parameter
#: is not in the signature, RT01 no Returns, EX01 no Examples.
FUNCTION_CODES = ("PR01", "PR02", "RT01", "EX01")


def _extra_missing(needs: str | None) -> bool:
    try:
        return needs is not None and importlib.util.find_spec(needs) is None
    except ModuleNotFoundError:           # a dotted name whose parent is missing
        return True


def _has_docstring(obj) -> bool:
    """Functions and classes carry docstrings; constants (tuples, dicts)
    are described by their modules."""
    return inspect.isclass(obj) or callable(obj)


def public_names() -> list[str]:
    """Every public name, the first place each object is documented at
    (fastcredit.alignment, not again as fastcredit.audit.alignment); one
    entry "<module>" for a module whose extra is missing."""
    names, seen = [], {}
    for name in fastcredit.__all__:
        obj = getattr(fastcredit, name)
        if _has_docstring(obj):                     # not the submodules, not constants
            names.append(f"fastcredit.{name}")
            seen[id(obj)] = name
    for module_name in public_modules():
        if _extra_missing(MODULES[module_name]):
            names.append(module_name)
            continue
        module = importlib.import_module(module_name)
        for name in module_names(module_name):
            obj = getattr(module, name)
            if _has_docstring(obj) and id(obj) not in seen:
                names.append(f"{module_name}.{name}")
                seen[id(obj)] = name
    return names


PUBLIC = public_names()


def _resolve(qualified: str):
    """The object of a public name; skips when its module's extra is missing."""
    if qualified in MODULES:
        pytest.importorskip(MODULES[qualified], reason=f"{qualified} needs its extra")
    module_name, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module_name), name)


def _doctest_failures(qualified: str, obj) -> list[str]:
    """Run the examples of obj's docstring and of its public methods and
    properties (as written: no names are given to them); the failing ones."""
    finder = doctest.DocTestFinder(recurse=inspect.isclass(obj), exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    failed = []
    for test in finder.find(obj, qualified, globs={}):
        if not any(part.startswith("_") for part in test.name[len(qualified):].split(".")):
            runner.run(test, out=failed.append)      # out: the failure reports
    return failed


def _documented_names(section) -> set[str]:
    """The names a numpydoc Parameters/Attributes section documents
    ("x, y : array" documents both)."""
    return {name.strip().lstrip("*") for entry in section for name in entry.name.split(",")}


def _section_problems(qualified: str, obj) -> list[str]:
    """The sections obj's docstring lacks. Functions: numpydoc's
    FUNCTION_CODES and a Raises section. Classes: every constructor
    parameter documented, under Parameters or, for a result's fields,
    Attributes; nothing under Parameters that the constructor does not
    take; Examples."""
    validate = pytest.importorskip("numpydoc.validate").validate
    errors = validate(qualified)["errors"]
    if not inspect.isclass(obj):
        problems = [f"{code}: {message}" for code, message in errors if code in FUNCTION_CODES]
        has_raises = "Raises\n------" in (inspect.getdoc(obj) or "")
        if qualified in _RAISES_NOTHING:
            if has_raises:
                problems.append("a Raises section, but it is listed in _RAISES_NOTHING")
        elif not has_raises:
            problems.append("no Raises section")
        return problems
    from numpydoc.docscrape import NumpyDocString
    doc = NumpyDocString(inspect.getdoc(obj) or "")
    try:
        signature = [name for name, p in inspect.signature(obj).parameters.items()
                     if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    except (TypeError, ValueError):      # no signature to compare with
        signature = None
    problems = [f"{code}: {message}" for code, message in errors if code == "EX01"]
    if signature is not None:
        documented = _documented_names(doc["Parameters"])
        undocumented = set(signature) - documented - _documented_names(doc["Attributes"])
        unknown = documented - set(signature) - {"args", "kwargs"}
        if undocumented:
            problems.append(f"constructor parameters {sorted(undocumented)} not documented")
        if unknown:
            problems.append(f"Parameters {sorted(unknown)} not taken by the constructor")
    return problems


@pytest.mark.parametrize("qualified", PUBLIC)
def test_docstring(qualified):
    obj = _resolve(qualified)
    failures = _doctest_failures(qualified, obj)
    problems = _section_problems(qualified, obj)
    if qualified in _PENDING:
        if not failures and not problems:
            pytest.fail(f"{qualified} now has every section and passing examples: "
                        f"remove it from _PENDING")
        pytest.xfail(f"pending: {'; '.join(problems)}"
                     + (" (and a failing example)" if failures else ""))
    assert not failures, "\n".join(failures)
    assert not problems, f"{qualified}: " + "; ".join(problems)


@pytest.mark.parametrize("listed", ["_PENDING", "_RAISES_NOTHING"])
def test_listed_names_are_public(listed):
    """A name left in a list after it was renamed or removed exempts nothing;
    a name under a module whose extra is missing is that module's entry."""
    stale = {name for name in globals()[listed]
             if name not in PUBLIC and name.rpartition(".")[0] not in PUBLIC}
    assert not stale, f"{listed} names no public function or class: {sorted(stale)}"
