"""fastcredit: compiled kernels for credit assignment over sets of actions.

Exact credit over coalition tables (:mod:`fastcredit.tables`), with C (cffi)
and Numba backends; see DESIGN.md for the conventions every family follows.
"""
from ._backend import available_backends
from .tables import (banzhaf, banzhaf_weights, from_moebius, leave_one_out, masks_to_bool,
                     moebius, pair_interactions, semivalue, shapley, shapley_weights,
                     singleton, size_resolved, table_from_function)

__version__ = "0.1.0"

__all__ = ["available_backends", "banzhaf", "banzhaf_weights", "from_moebius",
           "leave_one_out", "masks_to_bool", "moebius", "pair_interactions", "semivalue",
           "shapley", "shapley_weights", "singleton", "size_resolved", "table_from_function"]
