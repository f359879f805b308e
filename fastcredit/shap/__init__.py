"""shap backend: fastcredit's kernels behind shap's own explainers.

A shap user swaps one import and gets shap's own ``Explanation`` (or the
legacy arrays where shap's class returns them), faster. Every class here
subclasses the shap class it replaces, takes its constructor arguments and
call signature, and evaluates the model on shap's masked inputs (the
Independent masker's background), each distinct coalition of a row once, in
batched model calls:

- :class:`PermutationExplainer`: antithetic permutation sampling
  (:func:`fastcredit.permutation_shapley`) within ``max_evals`` distinct
  coalitions per row;
- :class:`ExactExplainer`: all 2**varying coalitions, then
  :func:`fastcredit.shapley` (and shap's pairwise interactions from
  :func:`fastcredit.interactions`); with a Partition masker's cluster tree,
  the Owen values (:func:`fastcredit.owen`), as the Permutation explainer
  gives them when its budget covers the table;
- :class:`KernelExplainer`: KernelSHAP on :func:`fastcredit.approximate`'s
  ``method="kernelshap"`` sample, shap's ``l1_reg`` feature selection
  (scikit-learn's selectors, as shap calls them) and the constrained
  regression solved compiled, shap's legacy API;
- :class:`SamplingExplainer` (IME): antithetic walks over all varying
  features at once, one background row per pair, shap's legacy API.

Requires the optional extra: ``pip install fastcredit[shap]``. The page
docs/shap.md compares the two side by side.
"""
from __future__ import annotations

try:
    import shap  # noqa: F401  (the extra must be installed)
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("fastcredit.shap needs shap: pip install 'fastcredit[shap]'") from exc

from .exact import ExactExplainer
from .kernel import KernelExplainer
from .permutation import PermutationExplainer
from .sampling import SamplingExplainer

__all__ = ["ExactExplainer", "KernelExplainer", "PermutationExplainer", "SamplingExplainer"]
