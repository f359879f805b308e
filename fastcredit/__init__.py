"""fastcredit: compiled kernels for credit assignment over sets of actions.

Families (each in C via cffi and in Numba, see docs/design.md):
:mod:`~fastcredit.tables` exact credit over coalition tables,
:mod:`~fastcredit.interactions` exact interaction indices of every order (shapiq's indices),
:mod:`~fastcredit.sampling` permutation-sampling Shapley,
:mod:`~fastcredit.auction` auction replay over cached candidate pools,
:mod:`~fastcredit.shaping` advantage shaping for RL trainers,
:mod:`~fastcredit.trees` counterfactual-tree credit and trial allocation,
:mod:`~fastcredit.audit` credit audits and attribution statistics,
:mod:`~fastcredit.synthetic` data and games with known answers;
:mod:`~fastcredit.games` says what a game is and how each kind is evaluated.
Optional integrations: :mod:`fastcredit.scoring` (Parquet), :mod:`fastcredit.dask`,
:mod:`fastcredit.shapiq`.
"""
from . import audit
from . import games, synthetic
from ._backend import available_backends
from ._native import get_include, get_library, get_library_dir
from .auction import AuctionWinners, Pools, auction_replay, auction_winners
from .audit import (Alignment, BootstrapCI, ContrastiveEffects, Fidelity, HolmResult,
                    ReplayAdvantage, SpearmanAudit, alignment, alignment_controls,
                    audit_controls, bootstrap_median, contrastive_effects, derangement,
                    evaluator_fidelity, holm, newcombe_interval, paired_bootstrap,
                    replay_advantage, shuffle_within, spearman_audit, wilson_interval,
                    within_spearman)
from .games import masks_to_bool
from .interactions import (Interactions, LeastCore, egalitarian_least_core, interactions,
                           subset_players, subset_position)
from .sampling import ShapleyEstimate, permutation_shapley
from .shaping import (group_advantages, project_zero_sum, shape_advantages, token_advantages,
                      token_counts)
from .tables import (banzhaf, banzhaf_weights, from_moebius, leave_one_out, moebius,
                     pair_interactions, semivalue, shapley, shapley_weights, singleton,
                     size_resolved, table_from_function)
from .trees import UCT, AgentUCT, TreeCredit, Uniform, actor_centered_credit

__version__ = "0.1.0"

__all__ = ["available_backends",
           # the C library: headers and libfastcredit.so for C/C++ programs
           "get_include", "get_library", "get_library_dir",
           # tables
           "banzhaf", "banzhaf_weights", "from_moebius", "leave_one_out", "masks_to_bool",
           "moebius", "pair_interactions", "semivalue", "shapley", "shapley_weights",
           "singleton", "size_resolved", "table_from_function",
           # interactions
           "Interactions", "LeastCore", "egalitarian_least_core", "interactions",
           "subset_players", "subset_position",
           # sampling
           "ShapleyEstimate", "permutation_shapley",
           # auction
           "AuctionWinners", "Pools", "auction_replay", "auction_winners",
           # shaping
           "group_advantages", "project_zero_sum", "shape_advantages", "token_advantages",
           "token_counts",
           # trees
           "AgentUCT", "TreeCredit", "UCT", "Uniform", "actor_centered_credit",
           "games", "synthetic"] + audit.__all__
