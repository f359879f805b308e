"""fastcredit: compiled kernels for credit assignment over sets of actions.

Families (each in C via cffi and in Numba, see docs/design.md):
:mod:`~fastcredit.tables` exact credit over coalition tables,
:mod:`~fastcredit.interactions` exact interaction indices of every order (shapiq's indices),
:mod:`~fastcredit.sampling` permutation-sampling Shapley,
:mod:`~fastcredit.approximators` shapiq's sampling approximators (:func:`approximate`),
:mod:`~fastcredit.auction` auction replay over cached candidate pools,
:mod:`~fastcredit.shaping` advantage shaping for RL trainers,
:mod:`~fastcredit.trees` counterfactual-tree credit and trial allocation,
:mod:`~fastcredit.audit` credit audits and attribution statistics,
:mod:`~fastcredit.synthetic` data and games with known answers;
:mod:`~fastcredit.learning` is a credit-assignment learning benchmark over them;
:mod:`~fastcredit.games` says what a game is and how each kind is evaluated.
Engines that drive a user's agent or workflow and hand games to the families:
:mod:`fastcredit.replay` (record, replay and do() on a stochastic agent) and
:mod:`fastcredit.treesearch` (counterfactual trees over recoverable prefixes,
served from :mod:`~fastcredit.trees`).
Optional integrations: :mod:`fastcredit.scoring` (Parquet), :mod:`fastcredit.dask`,
:mod:`fastcredit.shapiq`, :mod:`fastcredit.shap` (shap's explainers),
:mod:`fastcredit.trl` (per-action advantages in TRL's
``GRPOTrainer``; verl recipes in docs/trainers.md).
"""
import importlib as _importlib
import importlib.util  # noqa: F401  (find_spec below)
import sys as _sys
import types as _types

__version__ = "0.1.0"

# The public names and the module each comes from. They are imported on first
# use (PEP 562), so that ``import fastcredit`` costs almost nothing: the
# command line installs its interrupt handling before numpy and the kernels
# load (a Ctrl-C in the first second is then one line and exit 130), and a
# program that uses one family loads that family only.
_PUBLIC = {
    "._backend": ("available_backends",),
    # the C library: headers and libfastcredit.so for C/C++ programs
    "._native": ("get_include", "get_library", "get_library_dir"),
    ".tables": ("banzhaf", "banzhaf_weights", "from_moebius", "leave_one_out", "moebius",
                "owen", "owen_coalitions", "pair_interactions", "semivalue", "shapley",
                "shapley_weights", "singleton", "size_resolved", "table_from_function"),
    ".games": ("masks_to_bool",),
    ".interactions": ("Interactions", "LeastCore", "egalitarian_least_core", "interactions",
                      "subset_players", "subset_position"),
    ".sampling": ("ShapleyEstimate", "permutation_shapley"),
    ".approximators": ("InteractionEstimate", "approximate"),
    ".auction": ("AuctionWinners", "Pools", "auction_replay", "auction_winners"),
    ".shaping": ("group_advantages", "project_zero_sum", "shape_advantages",
                 "token_advantages", "token_counts"),
    ".trees": ("AgentUCT", "TreeCredit", "UCT", "Uniform", "actor_centered_credit",
               # the counterfactual-tree engine (fastcredit.treesearch)
               "DecisionRecords", "JitEnvironment", "PrefixCache", "SoftmaxActor", "TreeResult",
               "counterfactual_tree", "decision_records"),
    # fastcredit.audit's __all__ (tests/test_package.py checks the two agree)
    ".audit": ("Alignment", "BootstrapCI", "ContrastiveEffects", "Fidelity", "HolmResult",
               "ReplayAdvantage", "SpearmanAudit", "alignment", "alignment_controls",
               "audit_controls", "bootstrap_median", "contrastive_effects", "derangement",
               "evaluator_fidelity", "holm", "newcombe_interval", "paired_bootstrap",
               "replay_advantage", "shuffle_within", "spearman_audit", "wilson_interval",
               "within_spearman", "Calibration", "EdgeAgreement", "InteractionDistribution",
               "PairAgreement", "RuleAgreement", "SizeAgreement", "calibration",
               "edge_agreement", "interaction_distribution", "pair_agreement",
               "rule_agreement", "size_agreement", "McNemar", "PairedComparison",
               "PairedDifference", "PartialCorrelation", "TemporalConsistency", "mcnemar",
               "paired_comparison", "paired_proportion_interval", "paired_table",
               "partial_correlation", "spearman_difference", "temporal_consistency",
               "CorrelatedErrorNull", "NullStatistic", "correlated_error_null",
               "AuditVerdicts", "DoseMatch", "MDELadder", "PrecisionLift", "RouterMetrics",
               "Verdict", "audit_verdicts", "dose_match", "effective_sample_size",
               "mde_ladder", "precision_lift", "router_metrics", "zero_arm_bound",
               "MagnitudeFidelity", "NoiseScale", "SplitHalfConsistency",
               "aggregate_repeats", "fidelity_by_magnitude", "noise_scale",
               "replay_reference", "split_half_consistency"),
}
_HOME = {name: module for module, names in _PUBLIC.items() for name in names}
_SUBMODULES = ("audit", "games", "learning", "replay", "synthetic")

__all__ = [name for names in _PUBLIC.values() for name in names] + list(_SUBMODULES)


def __getattr__(name: str):
    if name in _HOME:
        value = getattr(_importlib.import_module(_HOME[name], __name__), name)
    elif _importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = _importlib.import_module(f".{name}", __name__)   # any submodule
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(_types.ModuleType):
    """The package's module type. The import system binds a submodule to its
    name on the package when it first loads it; fastcredit.interactions is
    both a family's module and that family's main function, and the package's
    name means the function (as when the package imported its names eagerly),
    whoever imports the module first."""

    def __setattr__(self, name, value):
        if isinstance(value, _types.ModuleType) and _HOME.get(name) == f".{name}":
            value = getattr(value, name)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
