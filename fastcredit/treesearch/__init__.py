"""Counterfactual trees end to end (ASCT): search over recoverable prefixes
with prefix reuse and a ledger of realized work, actor-centred credit for
the actor's own decisions, and the diagnostics of its repeatability.

The engine of the trees family (:mod:`fastcredit.trees` holds its kernels'
public layer: :func:`~fastcredit.trees.actor_centered_credit` and the
allocation rules, and re-exports this package's names). Modules:

* :mod:`~fastcredit.treesearch.env` - the environment protocol,
  :class:`JitEnvironment`, :class:`SoftmaxActor`, :class:`PrefixCache`,
  :class:`Ledger` and :class:`RunLedger`;
* :mod:`~fastcredit.treesearch.search` - :func:`counterfactual_tree`,
  :func:`monte_carlo_value` (VinePPO's state values), :func:`exact_q`,
  :func:`decision_records`;
* :mod:`~fastcredit.treesearch.diagnostics` - repeat Q SD, credit-sign
  repeat agreement, J_search, centring sign flips, cost-adjusted value.
"""
from .diagnostics import (Repeatability, centring_sign_flips, cost_adjusted_value, j_search,
                          repeatability)
from .env import JitEnvironment, Ledger, PrefixCache, RunLedger, SoftmaxActor
from .search import (ALLOCATORS, CREDIT_SOURCES, DecisionRecords, TreeResult,
                     counterfactual_tree, decision_records, exact_q, monte_carlo_value,
                     state_seed)

__all__ = ["JitEnvironment", "SoftmaxActor", "PrefixCache", "Ledger", "RunLedger",
           "TreeResult", "DecisionRecords", "counterfactual_tree", "monte_carlo_value",
           "exact_q", "decision_records", "state_seed", "ALLOCATORS", "CREDIT_SOURCES",
           "Repeatability", "repeatability", "j_search", "centring_sign_flips",
           "cost_adjusted_value"]
