"""shapiq backend: fastcredit's kernels behind shapiq's own interfaces.

A shapiq user swaps one import and gets the same objects (shapiq's own
``InteractionValues``), faster. Every class here subclasses the shapiq class it
replaces, so ``isinstance`` checks, ``repr``, equality and shapiq's helper
methods keep working:

- :class:`ExactComputer` (``shapiq.ExactComputer``): every index shapiq
  computes exactly, from one evaluation of the game on all 2**n coalitions;
  :func:`exact_values` is its order-1 shortcut for SV and BV.
- :class:`PermutationSamplingSV`, :class:`PermutationSamplingSII`,
  :class:`PermutationSamplingSTII` (shapiq's permutation samplers): the same estimators, sampling
  designs, budget accounting and output layout, vectorised (a whole batch of
  permutations or coalitions is drawn, evaluated in one game call and
  accumulated at once).
- :class:`SVARM`, :class:`StratifiedSamplingSV`, :class:`OwenSamplingSV`
  (shapiq's stratified value estimators): thin adapters over
  :func:`fastcredit.approximate`, the compiled approximator family;
  :class:`SHAPIQ`, :class:`SVARMIQ`, :class:`UnbiasedKernelSHAP` (shapiq's
  Monte-Carlo interaction estimators), likewise; and :class:`KernelSHAP`,
  :class:`KernelSHAPIQ`, :class:`InconsistentKernelSHAPIQ`, :class:`kADDSHAP`,
  :class:`RegressionFSII`, :class:`RegressionFBII` (shapiq's regression
  estimators).
- :class:`TableGame`: a shapiq ``Game`` over a fastcredit coalition table.
- :func:`use`: shapiq's explainers (and everything else in shapiq that
  builds one of these classes by name, ``approximator="auto"`` included)
  build fastcredit's classes instead; an instance passed as
  ``approximator=`` works without it.

Requires the optional extra: ``pip install fastcredit[shapiq]``.
"""
from __future__ import annotations

try:
    import shapiq  # noqa: F401  (the extra must be installed)
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("fastcredit.shapiq needs shapiq: pip install 'fastcredit[shapiq]'") from exc

from ._common import TableGame
from .approximators import (SHAPIQ, SVARM, SVARMIQ, InconsistentKernelSHAPIQ, KernelSHAPIQ,
                            OwenSamplingSV, RegressionFBII, RegressionFSII, StratifiedSamplingSV,
                            UnbiasedKernelSHAP, kADDSHAP)
from .approximators import SPEX
from .approximators import ProxySPEX
from .exact import ExactComputer, exact_values
from .explainers import use
from .kernelshap import KernelSHAP
from .permutation import PermutationSamplingSII, PermutationSamplingSTII, PermutationSamplingSV

__all__ = ["ExactComputer", "exact_values", "PermutationSamplingSV", "PermutationSamplingSII",
           "PermutationSamplingSTII", "KernelSHAP", "SVARM", "StratifiedSamplingSV",
           "OwenSamplingSV", "SHAPIQ", "SVARMIQ", "UnbiasedKernelSHAP", "KernelSHAPIQ",
           "InconsistentKernelSHAPIQ", "kADDSHAP", "RegressionFSII", "RegressionFBII",
           "SPEX", "ProxySPEX", "TableGame", "use"]
