"""The API reference page (docs/api.rst), written from the public names
themselves, so that it lists every one of them and nothing else: the package's
``__all__`` grouped by the family each name comes from
(``fastcredit._PUBLIC``), then each public module's ``__all__``. docs/conf.py
writes it before every build; tests/test_docstrings.py checks the same names.
"""
import importlib
import importlib.util
import types

import fastcredit

#: The public modules besides the package -> the module their extra provides
#: (None: no extra needed). fastcredit.synthetic has no ``__all__``: its
#: public names are the functions and classes it defines.
MODULES = {
    "fastcredit.audit": None, "fastcredit.games": None, "fastcredit.synthetic": None,
    "fastcredit.replay": None, "fastcredit.treesearch": None, "fastcredit.learning": None,
    "fastcredit.scoring": "pyarrow", "fastcredit.dask": "dask.dataframe",
    "fastcredit.shapiq": "shapiq", "fastcredit.shap": "shap", "fastcredit.trl": "trl",
}
#: Headings of the package's families (its ``_PUBLIC`` keys).
FAMILIES = {
    "._backend": "Backends",
    "._native": "The C library: headers and libfastcredit.so",
    ".tables": "Exact credit over coalition tables",
    ".games": "Games",
    ".interactions": "Exact interaction indices",
    ".sampling": "Sampled Shapley values",
    ".approximators": "Sampling approximators of shapiq's indices",
    ".auction": "Auction replay",
    ".shaping": "Advantage shaping for RL trainers",
    ".trees": "Counterfactual trees",
}
INTRO = """\
Every public name of fastcredit, one page each, grouped by module. The names
of :mod:`fastcredit.audit` are also importable from ``fastcredit`` itself
(``fastcredit.alignment`` is ``fastcredit.audit.alignment``), and are listed
once. The optional integrations need their extras (``pip install
'fastcredit[parquet]'``, ``[dask]``, ``[shapiq]``, ``[shap]``, ``[trl]``); the
narrative pages show them at work."""


def module_names(module_name: str) -> list[str]:
    """The public names of a public module."""
    module = importlib.import_module(module_name)
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [name for name, obj in vars(module).items()
            if not name.startswith("_") and getattr(obj, "__module__", None) == module_name]


def public_modules() -> list[str]:
    """The public modules that exist (fastcredit.shap is recent)."""
    return [name for name in MODULES if importlib.util.find_spec(name) is not None]


def _summary(names, toctree=True) -> list[str]:
    return ([".. autosummary::"] + (["   :toctree: generated"] if toctree else [])
            + ["   :nosignatures:", ""] + [f"   {name}" for name in names] + [""])


def _heading(text: str, underline: str) -> list[str]:
    return [text, underline * len(text), ""]


def api_page(module_names=module_names) -> str:
    """The text of docs/api.rst. An object reachable under two public
    names gets its page under the first (the package's) and a link from the
    other module's section. A module whose extra is missing keeps its
    section: Sphinx mocks its imports where they are stand-ins
    (docs/conf.py's ``autodoc_mock_imports``)."""
    lines = _heading("API reference", "=") + INTRO.splitlines() + [""]
    lines += _heading("fastcredit", "-") + [".. automodule:: fastcredit", "   :no-members:", "",
                                            ".. currentmodule:: fastcredit", ""]
    documented = {}
    audit = set(importlib.import_module("fastcredit.audit").__all__)
    for family, names in fastcredit._PUBLIC.items():
        names = [name for name in names if name not in audit]
        if not names:
            continue
        lines += _heading(FAMILIES.get(family, f"fastcredit{family}"), "~") + _summary(names)
        documented.update((id(getattr(fastcredit, name)), f"fastcredit.{name}")
                          for name in names)
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        own, elsewhere = [], []
        for name in module_names(module_name):
            obj = getattr(module, name)
            if id(obj) in documented and not isinstance(obj, types.ModuleType):
                elsewhere.append(f"~{documented[id(obj)]}")
            else:
                own.append(name)
        lines += _heading(module_name, "-") + [f".. automodule:: {module_name}",
                                               "   :no-members:", "",
                                               f".. currentmodule:: {module_name}", ""]
        lines += _summary(own)
        if elsewhere:
            lines += ["Also here, documented under ``fastcredit``:", ""]
            lines += _summary(elsewhere, toctree=False)
    return "\n".join(lines).rstrip() + "\n"
