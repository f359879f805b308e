"""Credit audits and attribution statistics.

The statistics the credit-assignment papers judge credit rules with, fast
enough to rerun over thousands of requests and trajectories with 10,000
bootstrap resamples and shuffle controls:

* set-credit alignment (:mod:`~fastcredit.audit.agreement`:
  :func:`alignment`, :func:`evaluator_fidelity`): per request, a credit
  vector (m,) against a reference credit vector, both centred within the
  request;
* step-level audit against execution replay (:mod:`~fastcredit.audit.replay`:
  :func:`replay_advantage`; :mod:`~fastcredit.audit.spearman`:
  :func:`within_spearman`, :func:`spearman_audit`): trajectories are CSR,
  ``offsets`` (n_traj + 1,) int64 over flat per-step arrays;
* negative controls for both (:mod:`~fastcredit.audit.controls`:
  :func:`audit_controls`, :func:`alignment_controls`, :func:`shuffle_within`,
  :func:`derangement`);
* causal agent replay (:mod:`~fastcredit.audit.contrastive`:
  :func:`contrastive_effects`): the effect of resampling from step k onward,
  its confidence interval and the commitment point;
* the set-intervention study's analyses of a replay landscape under a
  training and an audit evaluator (:mod:`~fastcredit.audit.study`:
  :func:`calibration`, :func:`interaction_distribution`,
  :func:`edge_agreement`, :func:`pair_agreement`, :func:`size_agreement`,
  :func:`rule_agreement`);
* paired inference (:mod:`~fastcredit.audit.paired`): McNemar's test and
  paired-proportion intervals (the context-shuffle placebo,
  :func:`paired_comparison`), a bootstrap interval for a paired difference
  of Spearman correlations, temporal self-consistency and partial
  correlation;
* the additive correlated-error null (:mod:`~fastcredit.audit.null`:
  :func:`correlated_error_null`, the paper's Table 7);
* replay repeats (:mod:`~fastcredit.audit.repeats`): the repeat-aggregated
  audit reference (:func:`aggregate_repeats`, :func:`replay_reference`),
  split-half sign self-consistency, the noise scale against the number of
  repeats and fidelity by edge magnitude;
* the step-level audit's protocol (:mod:`~fastcredit.audit.protocol`):
  the frozen, control-gated verdict order (:func:`audit_verdicts`),
  precision lift over a control, dose matching of credit rules, the
  minimum-detectable-effect ladder and the confidence router's figures;
* the inference these rest on: percentile bootstraps
  (:mod:`~fastcredit.audit.bootstrap`: :func:`bootstrap_median`,
  :func:`paired_bootstrap`), score intervals for proportions
  (:mod:`~fastcredit.audit.intervals`: :func:`wilson_interval`,
  :func:`newcombe_interval`) and Holm's correction
  (:mod:`~fastcredit.audit.multitest`: :func:`holm`).

Seeded statistics draw from the counter-based RNG shared by both backends
(resample r, or group g, has its own stream), so a seed gives the same
numbers on ``backend="c"`` and ``"numba"`` and for any ``threads``.

NaN handling: a NaN score marks an undefined statistic (the cosine of a
request whose reference is constant, the Spearman of an excluded
trajectory); bootstraps and medians leave such items out and report how many
they used. A trajectory with a non-finite credit or A_replay is excluded from
the Spearman audit and counted (``n_nonfinite``), never silently scored.
Replay advantages and contrastive effects propagate NaN outcomes like NumPy.

Common keyword arguments: ``threads`` (default all cores), ``backend``
(None, "c" or "numba"; None picks the faster one, see fastcredit._backend),
``seed`` (integer in [0, 2**64)).
"""
from .agreement import Alignment, Fidelity, alignment, evaluator_fidelity
from .bootstrap import BootstrapCI, bootstrap_median, paired_bootstrap
from .contrastive import ContrastiveEffects, contrastive_effects
from .controls import alignment_controls, audit_controls, derangement, shuffle_within
from .intervals import newcombe_interval, wilson_interval
from .multitest import HolmResult, holm
from .replay import ReplayAdvantage, replay_advantage
from .spearman import SpearmanAudit, spearman_audit, within_spearman
from .null import CorrelatedErrorNull, NullStatistic, correlated_error_null
from .paired import (McNemar, PairedComparison, PairedDifference, PartialCorrelation,
                     TemporalConsistency, mcnemar, paired_comparison, paired_proportion_interval,
                     paired_table, partial_correlation, spearman_difference,
                     temporal_consistency)
from .protocol import (AuditVerdicts, DoseMatch, MDELadder, PrecisionLift, RouterMetrics,
                       Verdict, audit_verdicts, dose_match, effective_sample_size, mde_ladder,
                       precision_lift, router_metrics, zero_arm_bound)
from .repeats import (MagnitudeFidelity, NoiseScale, SplitHalfConsistency, aggregate_repeats,
                      fidelity_by_magnitude, noise_scale, replay_reference,
                      split_half_consistency)
from .study import (Calibration, EdgeAgreement, InteractionDistribution,
                    PairAgreement, RuleAgreement, SizeAgreement, calibration, edge_agreement,
                    interaction_distribution, pair_agreement, rule_agreement, size_agreement)

__all__ = ["Alignment", "BootstrapCI", "ContrastiveEffects", "Fidelity", "HolmResult",
           "ReplayAdvantage", "SpearmanAudit", "alignment", "alignment_controls", "audit_controls",
           "bootstrap_median", "contrastive_effects", "derangement", "evaluator_fidelity",
           "holm", "newcombe_interval", "paired_bootstrap", "replay_advantage",
           "shuffle_within", "spearman_audit", "wilson_interval", "within_spearman",
           # the set-intervention study (fastcredit.audit.study)
           "Calibration", "EdgeAgreement", "InteractionDistribution",
           "PairAgreement", "RuleAgreement", "SizeAgreement", "calibration", "edge_agreement",
           "interaction_distribution", "pair_agreement", "rule_agreement", "size_agreement",
           # paired inference and the placebo (fastcredit.audit.paired)
           "McNemar", "PairedComparison", "PairedDifference", "PartialCorrelation",
           "TemporalConsistency", "mcnemar", "paired_comparison", "paired_proportion_interval",
           "paired_table", "partial_correlation", "spearman_difference",
           "temporal_consistency",
           # Table 7 (fastcredit.audit.null)
           "CorrelatedErrorNull", "NullStatistic", "correlated_error_null",
           # the step-level audit's protocol (fastcredit.audit.protocol)
           "AuditVerdicts", "DoseMatch", "MDELadder", "PrecisionLift", "RouterMetrics",
           "Verdict", "audit_verdicts", "dose_match", "effective_sample_size", "mde_ladder",
           "precision_lift", "router_metrics", "zero_arm_bound",
           # replay repeats: the audit reference and its noise (fastcredit.audit.repeats)
           "MagnitudeFidelity", "NoiseScale", "SplitHalfConsistency", "aggregate_repeats",
           "fidelity_by_magnitude", "noise_scale", "replay_reference",
           "split_half_consistency"]

# doctest.testmod(fastcredit.audit) only collects objects defined in this
# module; listing the re-exported names runs their examples too.
__test__ = {name: globals()[name] for name in __all__}
