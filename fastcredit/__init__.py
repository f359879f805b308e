"""fastcredit: compiled kernels for credit assignment over sets of actions.

Families (each in C via cffi and in Numba, see DESIGN.md):
:mod:`~fastcredit.tables` exact credit over coalition tables,
:mod:`~fastcredit.sampling` permutation-sampling Shapley,
:mod:`~fastcredit.auction` auction replay over cached candidate pools,
:mod:`~fastcredit.shaping` advantage shaping for RL trainers,
:mod:`~fastcredit.trees` counterfactual-tree credit and trial allocation,
:mod:`~fastcredit.audit` credit audits and attribution statistics,
:mod:`~fastcredit.synthetic` data and games with known answers.
Optional integrations: :mod:`fastcredit.scoring` (Parquet), :mod:`fastcredit.dask`,
:mod:`fastcredit.shapiq`.
"""
from . import audit
from ._backend import available_backends
from .auction import AuctionWinners, Pools, auction_replay, auction_winners
from .audit import *  # noqa: F401,F403  (its __all__: alignment, paired_bootstrap, ...)
from .sampling import ShapleyEstimate, permutation_shapley
from .shaping import (group_advantages, project_zero_sum, shape_advantages, token_advantages,
                      token_counts)
from .tables import (banzhaf, banzhaf_weights, from_moebius, leave_one_out, masks_to_bool,
                     moebius, pair_interactions, semivalue, shapley, shapley_weights,
                     singleton, size_resolved, table_from_function)
from .trees import UCT, AgentUCT, TreeCredit, Uniform, actor_centered_credit

from . import synthetic  # noqa: E402,I001  (draws on auction, so imported after it)

__version__ = "0.1.0"

__all__ = ["available_backends",
           # tables
           "banzhaf", "banzhaf_weights", "from_moebius", "leave_one_out", "masks_to_bool",
           "moebius", "pair_interactions", "semivalue", "shapley", "shapley_weights",
           "singleton", "size_resolved", "table_from_function",
           # sampling
           "ShapleyEstimate", "permutation_shapley",
           # auction
           "AuctionWinners", "Pools", "auction_replay", "auction_winners",
           # shaping
           "group_advantages", "project_zero_sum", "shape_advantages", "token_advantages",
           "token_counts",
           # trees
           "AgentUCT", "TreeCredit", "UCT", "Uniform", "actor_centered_credit",
           "synthetic"] + audit.__all__
