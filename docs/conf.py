"""Sphinx configuration of fastcredit's reference site: the API reference
from the numpydoc docstrings (docs/api.rst, written here by docs/api_page.py;
autosummary) and the narrative pages docs/*.md (myst-parser). ``make docs`` builds it with warnings as
errors into docs/_build/html; no network is needed (MathJax is loaded by the
reader's browser)."""
import importlib.util
import pathlib
import sys
import warnings

from sphinx.ext.autodoc.mock import mock

DOCS = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS)]

import fastcredit  # noqa: E402
from api_page import api_page  # noqa: E402

project = "fastcredit"
author = "the fastcredit authors"
release = version = fastcredit.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
templates_path = ["_templates"]

# One page per public name (docs/generated/, rebuilt on every build).
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"          # the numpydoc Parameters sections say the types
# fastcredit.trl needs the trainer stack (extra ``trl``: torch, TRL); where it
# is absent the page is built from its docstrings over stand-ins.
autodoc_mock_imports = [name for name in ("torch", "trl", "transformers")
                        if importlib.util.find_spec(name) is None]
if autodoc_mock_imports:    # a stand-in TRL has no version for fastcredit.trl to check
    warnings.filterwarnings("ignore", message="fastcredit.trl is checked against",
                            category=UserWarning)

# The API page lists the public names as they are now (docs/api_page.py).
with mock(autodoc_mock_imports):
    (DOCS / "api.rst").write_text(api_page())

# numpydoc renders the sections; the class pages list no member tables
# (results are documented by their Attributes sections).
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True

# Markdown pages: $...$ math, heading anchors for the pages' own links.
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

html_theme = "alabaster"
html_title = f"fastcredit {release}"
