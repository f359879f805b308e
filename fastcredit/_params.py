"""Each public parameter's allowed values, declared once.

A declaration knows its name, what it accepts and a one-line help text. The
functions check their arguments with it (``PRICING.check(pricing)``), the
configuration objects of the integrations (``ScoreConfig``) check their
fields with the same declaration, and the command line builds its options
from it (choices, type and help), so an option's values are never retyped.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _constants as C
from ._validation import check_choice, check_float, check_int


@dataclass(frozen=True)
class Options:
    """A string option from a fixed tuple of ``values``."""

    name: str
    values: tuple
    help: str
    none_ok: bool = False

    def check(self, value, name: str | None = None):
        if value.__class__ is str and value in self.values:   # valid: no call more
            return value
        if value is None and self.none_ok:
            return None
        return check_choice(value, name or self.name, self.values)


@dataclass(frozen=True)
class Integer:
    """An integer (not bool) in [lo, hi]; None means unbounded."""

    name: str
    lo: int | None
    hi: int | None
    help: str
    none_ok: bool = False

    def check(self, value, name: str | None = None):
        if value.__class__ is int and (self.lo is None or value >= self.lo) and \
                (self.hi is None or value <= self.hi):   # valid: no call more
            return value
        if value is None and self.none_ok:
            return None
        return check_int(value, name or self.name, lo=self.lo, hi=self.hi)


@dataclass(frozen=True)
class Real:
    """A real number in [lo, hi]; ``finite=False`` admits +-inf (never NaN)."""

    name: str
    lo: float | None
    hi: float | None
    help: str
    finite: bool = True

    def check(self, value, name: str | None = None) -> float:
        name = name or self.name
        value = check_float(value, name, lo=self.lo, hi=self.hi, finite=self.finite)
        if value != value:
            raise ValueError(f"{name} must not be NaN")
        return value


# --- every family ------------------------------------------------------------
BACKEND = Options("backend", ("c", "numba"),
                  "kernel backend; None picks the faster one for each kernel", none_ok=True)
THREADS = Integer("threads", 1, None, "threads to split the work over (default: all cores)",
                  none_ok=True)
SEED = Integer("seed", 0, 2**64 - 1, "random seed, an integer in [0, 2**64)")

# --- tables and sampling -----------------------------------------------------
TABLE_PLAYERS = Integer("m", 1, C.MAX_TABLE_PLAYERS, "players of a coalition table")
MIN_SAMPLES = Integer("min_samples", 2, 2**63 - 1,
                      "samples every player needs before the tol stopping rule applies")
COALITIONS = Options("coalitions", ("mask", "bool"),
                     "how a Python value function receives coalitions: uint64 masks, or "
                     "a bool matrix (n, m)")

# --- interactions ------------------------------------------------------------
#: The exact interaction indices and generalized values of fc.interactions, named
#: as shapiq 1.4.1 names them (its IndexType, without ELC: fc.egalitarian_least_core).
INDEX = Options("index", ("SII", "BII", "CHII", "Co-Moebius", "SGV", "BGV", "CHGV", "IGV",
                          "EGV", "k-SII", "STII", "FSII", "FBII", "kADD-SHAP", "JointSV",
                          "Moebius", "SV", "BV"),
                "exact interaction index or generalized value (shapiq's names)")
ORDER = Integer("order", 1, C.MAX_TABLE_PLAYERS,
                "highest interaction order computed (at most the number of players)")
PENALTY = Real("penalty", 1.0, None,
               "FSII and kADD-SHAP: weight of v(empty) and v(N) in the least squares instead of "
               "fitting them exactly (shapiq's ExactComputer uses 1e8)")

# --- auction -----------------------------------------------------------------
ACTIONS = Integer("m", 1, C.AUCTION_MAX_ACTIONS, "actions (query rewrites) per request")
SLOTS = Integer("slots", 1, 1 << 20, "auction slots: the top-N ranked ads win")
RESERVE = Real("reserve", None, None,
               "ads scoring below the reserve are dropped; GSP prices are at least it",
               finite=False)
CAPACITY = Integer("capacity", 1, 2**63 - 1,
                   "keep only this many ads of highest prerank before ranking (default: all)",
                   none_ok=True)
PRICING = Options("pricing", ("first", "gsp"),
                  "earnings of a winner: its value (first) or the generalised second price")
MODE = Options("mode", ("filter", "rerun"),
               "filter the full pool's ranking per coalition, or rerun the pipeline on "
               "each coalition's own pool")

# --- synthetic -------------------------------------------------------------
SEARCH_PRESET = Options("preset", ("default", "realistic"),
                        "synthetic sponsored-search preset: the generator's parameters and the "
                        "auction its requests are replayed with (fastcredit.synthetic."
                        "SEARCH_PRESETS)")
SEARCH_VALUE = Options("value_model", ("click", "expected"),
                       "value of a synthetic ad instance: its bid when clicked in the "
                       "request (else 0), or its expected value per impression, bid x pCTR")

# --- shaping -----------------------------------------------------------------
NORMALIZE = Options("normalize", ("std", "maxabs", "none"),
                    "scale of the centred credit before the projection")
SCALE = Options("scale", ("group", "batch", "none"),
                "divide group-centred rewards by the group's sd, the batch's sd, or nothing")
SINGLETON = Options("singleton", ("zero", "raw"),
                    "a group of one reward gets advantage 0, or is taken with mean 0 and sd 1 "
                    "(verl)")
BETA = Real("beta", None, None, "weight of the shaped credit in the per-action advantage")
KAPPA = Real("kappa", 0.0, None, "bound |z_i| <= kappa of the zero-sum projection")

# --- trees and audit ---------------------------------------------------------
BASELINE = Options("baseline", ("actor", "uniform"),
                   "centre Q by the actor's policy or by the uniform mean over actions")
CONTROLS = Options("controls", ("shuffle", "random", "uniform", "derangement"),
                   "negative controls scored next to the credit")
RESAMPLES = Integer("resamples", 1, 2**31 - 1, "bootstrap replicates")
MIN_STEPS = Integer("min_steps", 2, 2**63 - 1,
                    "trajectories with fewer steps are not scored (degenerate)")
ATOL = Real("atol", 0.0, None,
            "tolerance of a comparison: values within atol of 0 are zero, and within atol "
            "of each other tied")
AGREEMENT_OVER = Options("over", ("audit_nonzero", "both_nonzero", "either_nonzero", "all"),
                         "which items a sign agreement is a share of: those nonzero under "
                         "the audit (reference) evaluator, under both, under either, or all")
PAIRED_INTERVAL = Options("method", ("tango", "newcombe"),
                          "interval of a paired difference of proportions: Tango's score "
                          "interval or Newcombe's square-and-add (method 10)")
CORRELATION = Options("method", ("pearson", "spearman"),
                      "correlation of the residuals: of the values or of their ranks")
COMMITMENT_RULE = Options("rule", ("negative", "excludes_zero"),
                          "commitment point: the last step whose effect interval lies below 0 "
                          "(resampling there still rescues the run), or CAR's literal rule, the "
                          "last step whose interval excludes 0 (either side)")
JUDGE_COST = Real("judge_cost", 0.0, None,
                  "cost of one judge call of a confidence router (dollars, replays, ...)")
STANDARD_DEVIATION = Real("sd", 0.0, None,
                          "standard deviation of one item's score (minimum detectable effects)")
EFFECT_KIND = Options("kind", ("auto", "binary", "continuous"),
                      "outcome kind of contrastive effects (auto: binary when all are 0/1)")

# --- batch scoring -----------------------------------------------------------
RULE = Options("rule", ("shapley", "banzhaf", "singleton", "leave_one_out"),
               "credit rule computed from each request's coalition table")
ON_ERROR = Options("on_error", ("stop", "skip"),
                   "a malformed row stops the run, or is skipped and counted")
SCORE_BETA = Real("beta", 0.0, None,
                  "weight of the shaped credit in the per-action advantage, >= 0 (a negative "
                  "weight would raise the advantage of the actions the credit blames)")

# --- trainer integrations ----------------------------------------------------
CREDIT_RULE = Options("credit_rule", RULE.values,
                      "credit rule applied to coalition tables returned by a credit function "
                      "(None: it returns per-action credit)", none_ok=True)
SHAPING_BETA = Real("shaping_beta", None, None,
                    "weight of the shaped credit in the per-action advantage (not a KL "
                    "coefficient)")

# --- learning benchmark ------------------------------------------------------
CREDIT = Options("credit", ("broadcast", "singleton", "leave_one_out", "banzhaf", "shapley"),
                 "per-action advantage of the policy gradient: the set's group-relative "
                 "advantage (broadcast) or it shaped by a credit rule's bounded zero-sum offsets")
REWRITES = Integer("rewrites", 2, C.AUCTION_MAX_ACTIONS,
                   "candidate rewrites per request the policy chooses from")
STEPS = Integer("steps", 1, 1 << 24, "policy-gradient updates per training run")
BATCH = Integer("batch", 1, 1 << 24, "requests per policy-gradient update")
GROUP = Integer("group", 2, 1 << 16, "sets sampled per request and update (the GRPO group)")
LEARNING_RATE = Real("lr", 0.0, 1e3, "Adam step size of the policy's weights (a step moves "
                     "each weight by about lr)")
RUNS = Integer("runs", 1, 1000, "training runs (seeds) per credit rule or tree-benchmark method")
EVAL_SAMPLES = Integer("eval_samples", 1, 1 << 16,
                       "sets sampled per held-out request to estimate the expected set value")
HELD_OUT = Real("held_out", 0.0, 1.0, "share of the requests held out for evaluation")

# --- causal agent replay (fastcredit.replay) ---------------------------------------
MAX_STEPS = Integer("max_steps", 1, 1 << 20, "most steps a run may take")
MAX_CONCURRENCY = Integer("max_concurrency", 1, 1 << 16, "rollouts run at once")

# --- counterfactual trees (fastcredit.treesearch) --------------------------------
ALLOCATOR = Options("rule", ("uniform", "uct", "agent_uct"),
                    "allocation rule of a tree's trials over root actions")
CREDIT_SOURCE = Options("credit", ("asct", "vine", "return"),
                        "decision credit: counterfactual tree (ASCT), Monte-Carlo state values "
                        "(VinePPO) or the episode's return")
TREE_BUDGET = Integer("budget", 1, 1 << 24, "trials of a counterfactual tree")
CONTINUATIONS = Integer("k", 1, 1 << 24,
                        "Monte-Carlo continuations of the actor per state (VinePPO)")
EXPLORATION = Real("c", 0.0, None, "UCT exploration constant")
COST_PRICE = Real("c_tok", 0.0, None, "price of one unit of cost, in utility units (AgentUCT)")
REPEATS = Integer("repeats", 2, 1 << 20, "independent trees per state")
MAX_LEGAL_ACTIONS = Integer("max_actions", 1, 1 << 16, "most legal actions of any state")
ACTOR_FEATURES = Integer("n_features", 1, 1 << 16, "features per (state, action)")
PREFIX_CAPACITY = Integer("capacity", 1, 1 << 40,
                          "initial nodes of a prefix cache's trie (it grows as needed)")

# --- the tree benchmark (fastcredit.learning) -----------------------------------
TREE_METHOD = Options("methods", ("asct_uniform", "asct_uct", "asct_agent_uct", "vine",
                                  "return"),
                      "credit of the actor's decisions: a counterfactual tree per visited "
                      "state with Uniform, UCT or AgentUCT allocation, VinePPO, or the "
                      "trajectory's return")
PPO_UPDATES = Integer("updates", 1, 1 << 20, "PPO updates per training run")
EPISODES = Integer("episodes", 1, 1 << 20, "episodes per PPO update")
PPO_CLIP = Real("clip", 0.0, 1.0, "PPO's clip range epsilon")
PPO_EPOCHS = Integer("epochs", 1, 1 << 16, "Adam steps per PPO update")
WORKFLOW_KIND = Integer("kind", 0, 3, "request kind of the retrieval workflow (0 easy, "
                        "1 vague, 2 niche, 3 unanswerable)")
WORKFLOW_LEVEL = Integer("level", 0, 3, "request value level of the retrieval workflow (a "
                         "good answer is worth 4 + 2 level)")

# --- replay repeats (fastcredit.audit.repeats, the study's audit reference) -------
REPEAT_AGGREGATE = Options("how", ("median", "mean"),
                           "aggregation of repeated noisy replays into one table: the "
                           "coalition-wise median (the paper's y_audit) or mean")
SPLIT_STATISTIC = Options("statistic", ("shapley", "edges"),
                          "what split-half consistency compares: the signs of the two halves' "
                          "Shapley credits, or of their insertion edges")
MAGNITUDE_BINS = Integer("bins", 1, 1 << 16,
                         "bins of the reference edge's magnitude (quantiles of the counted "
                         "edges)")
REPLAY_REPEATS = Integer("replay_repeats", 1, 1 << 16,
                         "noisy replays per coalition aggregated into the study's audit "
                         "reference")
REPLAY_NOISE = Real("replay_noise", 0.0, 1e300,
                    "sd of one replay's noise, in the units of the tables (the study's audit "
                    "reference)")
#: The study's audit reference: y_audit = median over REPLAY_REPEATS_DEFAULT
#: noisy replays of the rerun table with noise sd REPLAY_NOISE_DEFAULT
#: (docs/study.md says why these).
REPLAY_REPEATS_DEFAULT = 6
REPLAY_NOISE_DEFAULT = 1.0

# --- approximators (fastcredit.approximate) ------------------------------------
APPROX_METHOD = Options("method", ("svarm", "stratified", "owen", "shapiq", "svarmiq",
                                   "kernelshap", "kernelshapiq",
                                   "inconsistent_kernelshapiq", "kaddshap", "regression_fsii",
                                   "regression_fbii", "spex", "proxyspex"),
                        "sampling estimator of fc.approximate (shapiq's SVARM, "
                        "StratifiedSamplingSV, OwenSamplingSV, SHAPIQ, SVARMIQ, KernelSHAP, "
                        "KernelSHAPIQ, InconsistentKernelSHAPIQ, kADDSHAP, RegressionFSII, "
                        "RegressionFBII, SPEX, ProxySPEX)")
APPROX_BUDGET = Integer("budget", 1, 2**62, "game evaluations an approximator may spend")
APPROX_ANCHORS = Integer("anchors", 1, 1 << 16,
                         "Owen sampling: anchor points q in [0, 1] (shapiq's n_anchor_points)")
SPEX_DEGREE = Integer("degree_parameter", 2, C.BCH_MAX_T,
                      "SPEX: errors its BCH code corrects, the largest interaction it can "
                      "detect in one bin (shapiq's degree_parameter, default 5; lowered "
                      "towards 2 when the budget is too small)")
SPEX_DECODER = Options("decoder_type", ("soft", "hard"),
                       "SPEX: BCH decoding of a bin's signs, 'soft' (Chase-2 over the least "
                       "reliable signs) or 'hard' (shapiq's decoder_type, default 'soft')")
#: shapiq's SPEX defaults
SPEX_DEGREE_DEFAULT = 5
SPEX_DECODER_DEFAULT = "soft"
