"""The fastcredit command line.

fastcredit synth writes synthetic requests to Parquet and fastcredit score
scores a Parquet file or dataset of requests into Parquet (see
fastcredit.scoring); fastcredit learn trains a policy with each credit rule's
advantages and reports held-out set value (fastcredit.learning); fastcredit
learn-trees compares counterfactual-tree credit with VinePPO and
trajectory-return PPO on a workflow with exact values; fastcredit warm
compiles the Numba kernels ahead of time.

fastcredit demo is the main job: it generates synthetic sponsored-search
requests (m = 5 query rewrites x k = 20 candidate ads each; the realistic
preset by default), replays every request's auction for all 2**m subsets of
rewrites in both evaluator modes, computes Shapley / Banzhaf / Singleton /
leave-one-out credit, and prints the set-intervention study's analyses
(calibration against the paper, the interaction distribution, Tables 1, 2,
6 and 4: each evaluator's rules against the repeat-aggregated replay; Table
7: the correlated-error null; Table 8: the context placebo) with the
throughput of every stage; --html also writes them with plots.
"""
# This docstring is the text of --help (main): plain text, no reST markup.
# One module per command (demo, synth, score, learn, learn-trees, warm), each with its
# options (add_parser), what it runs (run) and the errors that are the user's
# (ERRORS); fastcredit.cli.parser puts them together. Here: what other code
# imports from fastcredit.cli, and the command line's parameter declarations
# (tests/fuzz_catalogue.py reads them).
from .common import REQUESTS  # noqa: F401
from .demo import (K, M, MODES, RULES, STUDY_DEFAULT, STUDY_REQUESTS,  # noqa: F401
                   DemoResult, _interaction_lines, compute_demo, demo_header, report_demo,
                   run_demo)
from .parser import _parser, main  # noqa: F401
from .synth import CANDIDATES, ROW_GROUP, synthetic_parquet_options, write_synthetic  # noqa: F401

#: Requests the demo generates and replays at a time (read here by each run).
CHUNK = 100_000
