"""Constants the C library and the Numba kernels share, written once.

Each ``NAME`` here is ``FC_NAME`` of csrc/*.h; tests/test_constants.py checks
that every one equals the value the compiled C library reports. The Numba
kernels and the Python layer read them from here, so neither retypes a C
literal (and the Numba twins, which must round like C, take the same block
sizes and search limits).
"""

#: Return codes of every C kernel.
OK = 0
EINVAL = -1
ENOMEM = -2

# --- tables ------------------------------------------------------------------
#: Most players of a coalition table (2**30 entries).
MAX_TABLE_PLAYERS = 30
#: Semivalue folds work on blocks of 2**TABLE_BLOCK_BITS table entries.
TABLE_BLOCK_BITS = 8

# --- sampling ----------------------------------------------------------------
#: Most players a sampled game may have (permutations are int32 rows).
SAMPLING_MAX_PLAYERS = 4096
#: Columns of the per-game statistics row of the sampling kernels.
STATS = 4
STAT_EVALS = 0
STAT_WALKS = 1
STAT_SAMPLES = 2
STAT_TRUNCATED = 3
#: Most features of a masked row of fastcredit.shap (coalitions are uint64 masks).
MASKED_MAX_FEATURES = 64
#: Most players whose coalitions the affordable_pairs kernel keeps a bit each of.
AFFORDABLE_DENSE_PLAYERS = 16

# --- auction -----------------------------------------------------------------
AUCTION_MAX_ACTIONS = 16
PRICING_FIRST = 0
PRICING_GSP = 1
MODE_FILTER = 0
MODE_RERUN = 1

# --- trees -------------------------------------------------------------------
ALLOC_UNIFORM = 0
ALLOC_UCT = 1
ALLOC_AGENT_UCT = 2
#: fc_actor_centered_credit's statuses: the first state at fault is reported.
CREDIT_NOT_A_POLICY = 1
CREDIT_ILLEGAL_ACTION = 2

# --- audit -------------------------------------------------------------------
#: fc_bootstrap_median tallies draws per item in int32.
BOOTSTRAP_MAX_ITEMS = 2147483647
#: Draws per block of bootstrap index generation.
BOOTSTRAP_DRAW_BLOCK = 128
#: fc_spearman_groups status codes, in code order.
SPEARMAN_VALID = 0
SPEARMAN_SHORT = 1
SPEARMAN_CONSTANT = 2
SPEARMAN_NONFINITE = 3
#: Spearman groups up to this length are ranked by counting, longer ones by
#: heap sort.
SPEARMAN_COUNTING_MAX = 64

# --- shaping -----------------------------------------------------------------
#: Below this many breakpoints the projection's insertion sort beats a
#: library sort.
PROJECT_INSERTION_SORT_MAX = 32
#: Newton steps the projection tries before the sorted breakpoint search.
PROJECT_NEWTON_STEPS = 4
#: Rows of at most this many values find the breakpoint segment by
#: evaluating f at every breakpoint (no sort); with unit weights and one
#: bound pair they skip the Newton steps.
PROJECT_EVALUATE_MAX = 8
#: Sequences with fewer actions pick token advantages by a select chain.
TOKEN_SELECT_MAX = 8

# --- rng -----------------------------------------------------------------------
#: The SplitMix64 stream increment.
RNG_GOLDEN = 0x9E3779B97F4A7C15
#: fc_rng_below draws integers below n <= RNG_MAX_RANGE (2**32).
RNG_MAX_RANGE = 4294967296

# --- synthetic -----------------------------------------------------------------
#: Largest first request index and request count of the sponsored-search
#: generator (2**60): its stream items 3 * index + 2 stay below 2**63.
SYNTHETIC_MAX_INDEX = 1152921504606846976
#: Largest pCTR noise (log-sd) of the generator: |noise z| stays far below
#: 708, the range of its exponential, for every Box-Muller z (|z| < 8.6).
SYNTHETIC_MAX_NOISE = 16

# --- processor paths (csrc/internal.h; private, fastcredit._c.paths) --------------
#: Bit of fc_internal_paths(): the functions compiled for x86-64-v4 alone.
PATH_AVX512 = 1

# --- approximators -----------------------------------------------------------------
#: Most players of fc.approximate (a coalition is one uint64 mask).
APPROX_MAX_PLAYERS = 64
#: Most errors a BCH code of the sparse transform (SPEX) corrects.
BCH_MAX_T = 16
#: Largest field order 2^q - 1 of those codes.
BCH_MAX_ORDER = 65535
