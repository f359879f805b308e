r"""Does credit help a policy learn? A credit-assignment learning benchmark.

The set-intervention paper trains a query-rewriting policy whose m rewrites
are merged into one auction, with per-action advantages from a credit rule,
and reports the held-out set value of each rule (its Table 3). This module
is that experiment at a scale NumPy and Numba run in seconds.

**Setting.** Each request has K candidate rewrites, each with its cached
candidate ad pool (:class:`fastcredit.Pools` with ``m = K``). A policy picks
m < K distinct rewrites per request; the *set value* of a choice S is the
auction replay of S's pools, :math:`y(S)`, read from the request's
:math:`2^K` table under ``mode="rerun"`` (the pipeline run on the pool of S
alone: what the production auction does with exactly those rewrites),
computed once per request by :func:`fastcredit.auction_replay`.

**Policy.** Linear over per-rewrite features (:func:`rewrite_features`,
scaled by their standard deviation over the training rewrites),
:math:`\ell_j = \theta^\top f_j / \sigma`, so it applies to requests it never
saw. A set is drawn as a Plackett-Luce ordering (sequential softmax without
replacement): :math:`\pi(j_1..j_m) = \prod_t e^{\ell_{j_t}} / \sum_{k \notin
\{j_1..j_{t-1}\}} e^{\ell_k}`, sampled exactly by adding Gumbel noise to the
logits and taking the m largest. The initial policy is :math:`\theta = 0`
(uniform random sets).

**Training** (:func:`train_policy`): group-relative policy gradient. Each
update takes ``batch`` training requests and ``group`` sampled sets per
request; rewards :math:`r_g = y(S_g)`; the set advantage is GRPO's
:math:`\hat A_g` (:func:`fastcredit.group_advantages`). Per-action
advantages :math:`A_{g,i}`:

* ``"broadcast"``: :math:`\hat A_g` for every action of the set;
* ``"singleton"``, ``"leave_one_out"``, ``"banzhaf"``, ``"shapley"``:
  :math:`\hat A_g + \beta z_{g,i}` with z the bounded zero-sum projection of
  the rule's standardised credit (:func:`fastcredit.shape_advantages`);
  Shapley with this shaping is the paper's CASI. The same shaping for every
  rule, so the rules differ only in their credit.

The credit of a sampled set S is computed on S's own :math:`2^m` table under
the *training evaluator* ``evaluator="filter"`` (the paper's design: the
downstream pipeline is run once on the pool of the m chosen rewrites and its
ranked list filtered per sub-coalition; a replay of the chosen sets' pools
per update), or ``"rerun"`` (the sub-table of the request's rerun table: the
exact counterfactual). The reward is the rerun value either way, because it
is what the chosen set really earns, and both evaluators agree on it: the
filter table of S at S itself is the pipeline on S's pool. The update
ascends :math:`\sum_{g,t} A_{g,j_t} \nabla_\theta \log \pi(j_t \mid
\text{rewrites left})` (:func:`plackett_luce`), averaged over the batch,
with Adam.

**Evaluation** (:func:`policy_value`): the policy's expected set value on
held-out requests, estimated with ``eval_samples`` sampled sets per request
from one fixed noise draw (common random numbers: every policy, and the
initial one, is scored on the same Gumbel noise).

Everything is deterministic per seed, on any thread count.

**Layout** (one module per idea; every public name is importable from
``fastcredit.learning``):

* :mod:`~fastcredit.learning.tasks` - the set benchmark's requests
  (:class:`LearningTask`, :func:`rewrite_features`, :func:`benchmark_pools`);
* :mod:`~fastcredit.learning.policies` - the Plackett-Luce policy and its
  held-out score;
* :mod:`~fastcredit.learning.update` - the policy-gradient update with
  per-action credit (:func:`train_policy`);
* :mod:`~fastcredit.learning.set_benchmark` - the set benchmark
  (:func:`benchmark`);
* :mod:`~fastcredit.learning.workflow` - the synthetic retrieval workflow
  (a multi-step environment with exact Q values);
* :mod:`~fastcredit.learning.ppo` - PPO on decision records for a linear
  softmax actor;
* :mod:`~fastcredit.learning.workflow_benchmark` - the tree benchmark: ASCT
  (Uniform, UCT, AgentUCT) against VinePPO and trajectory-return PPO
  (:func:`tree_benchmark`).
"""
from .policies import Policy, plackett_luce, policy_value
from .ppo import ppo_objective, ppo_update
from .set_benchmark import BenchmarkResult, benchmark
from .tasks import FEATURES, LearningTask, benchmark_pools, rewrite_features
from .workflow_benchmark import TREE_METHODS, TreeBenchmarkResult, tree_benchmark
from .update import CREDITS, train_policy

__all__ = ["FEATURES", "CREDITS", "LearningTask", "Policy", "BenchmarkResult",
           "rewrite_features", "plackett_luce", "train_policy", "policy_value", "benchmark",
           "benchmark_pools", "ppo_objective", "ppo_update", "TREE_METHODS",
           "TreeBenchmarkResult", "tree_benchmark"]
