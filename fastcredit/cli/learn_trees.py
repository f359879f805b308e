"""fastcredit learn-trees: the tree benchmark (fastcredit.learning.workflow_benchmark):
counterfactual-tree credit (ASCT) against VinePPO and trajectory-return PPO."""
from __future__ import annotations

import sys

from .. import _params
from .._params import CONTINUATIONS, COST_PRICE, EPISODES, PPO_UPDATES, RUNS, TREE_BUDGET
from .common import _UserError, _add_option, _add_quiet


def add_parser(sub) -> None:
    from ..learning import TREE_METHODS
    p = sub.add_parser(
        "learn-trees", help="tree benchmark: ASCT credit vs VinePPO vs trajectory-return PPO",
        description="Train a linear softmax actor on a synthetic multi-step retrieval "
                    "workflow (query, retrieve, deep retrieval, evidence, stop) by PPO on its "
                    "own decisions, with the credit of counterfactual trees (ASCT: Uniform, "
                    "UCT, AgentUCT allocation), of VinePPO's Monte-Carlo state values, or of "
                    "the episode's return, and print each method's exact held-out expected "
                    "utility (mean +- sd over runs) and the auxiliary cost its search "
                    "executed (fastcredit.learning.workflow_benchmark).")
    p.add_argument("--methods", default=",".join(TREE_METHODS),
                   help=f"comma-separated methods from {', '.join(TREE_METHODS)} "
                        f"(default: all)")
    _add_option(p, "--runs", RUNS, 5)
    _add_option(p, "--updates", PPO_UPDATES, 60)
    _add_option(p, "--episodes", EPISODES, 16)
    _add_option(p, "--budget", TREE_BUDGET, 10,
                "trials per counterfactual tree (ASCT)")
    _add_option(p, "--k", CONTINUATIONS, 10)
    _add_option(p, "--c-tok", COST_PRICE, 0.05)
    p.add_argument("--no-cache", action="store_true",
                   help="execute every step (no prefix reuse): the same results, a larger "
                        "ledger")
    _add_option(p, "--seed", _params.SEED, 0)
    _add_quiet(p)


def run(args) -> int:
    from .. import learning
    methods = [m.strip() for m in args.methods.split(",")]
    for m in methods:
        if m not in learning.TREE_METHODS:
            raise _UserError(f"--methods must be from {', '.join(learning.TREE_METHODS)}, "
                             f"got {m!r}")
    print(f"fastcredit learn-trees: {len(methods)} methods x {args.runs} runs x "
          f"{args.updates} PPO updates of {args.episodes} episodes, seed {args.seed}")
    res = learning.tree_benchmark(
        methods=methods, runs=args.runs, updates=args.updates, episodes=args.episodes,
        budget=args.budget, k=args.k, c_tok=args.c_tok, use_cache=not args.no_cache,
        seed=args.seed,
        progress=None if args.quiet else lambda line: print(f"  {line}", file=sys.stderr))
    print(res.table())
    print(f"{len(methods) * args.runs} training runs in {res.seconds:.1f} s")
    return 0


#: What learn-trees' arguments can be refused with (the library names them).
ERRORS = (ValueError,)
