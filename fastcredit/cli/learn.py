"""fastcredit learn: the credit-assignment learning benchmark
(fastcredit.learning)."""
from __future__ import annotations

import re
import sys

from .. import _params, synthetic
from .common import REQUESTS, _UserError, _add_option, _add_quiet


def add_parser(sub) -> None:
    from .. import learning
    learn = sub.add_parser(
        "learn", help="credit-assignment learning benchmark (held-out set value by credit)",
        description="Train a policy that picks m of K candidate query rewrites per synthetic "
                    "request by group-relative policy gradient, once per per-action advantage "
                    "(broadcast, and bounded zero-sum shaping by singleton, leave-one-out, "
                    "Banzhaf and Shapley credit), and print each one's held-out expected set "
                    "value, mean +- sd over runs, beside the initial policy "
                    "(fastcredit.learning.benchmark).")
    _add_option(learn, "--preset", _params.SEARCH_PRESET, "realistic")
    _add_option(learn, "--requests", REQUESTS, 3000)
    _add_option(learn, "--rewrites", _params.REWRITES, 10)
    _add_option(learn, "--m", _params.ACTIONS, 5, "rewrites the policy picks per request")
    learn.add_argument("--credits", default=",".join(learning.CREDITS),
                       help=f"comma-separated per-action advantages to compare, from "
                            f"{', '.join(learning.CREDITS)} (default: all)")
    _add_option(learn, "--runs", _params.RUNS, 5)
    _add_option(learn, "--steps", _params.STEPS, 300)
    learn.add_argument("--checkpoints", default=None,
                       help="comma-separated update counts after which the policies are also "
                            "scored (default: steps/30, steps/10, steps/3)")
    _add_option(learn, "--batch", _params.BATCH, 32)
    _add_option(learn, "--group", _params.GROUP, 8)
    _add_option(learn, "--lr", _params.LEARNING_RATE, 0.05)
    _add_option(learn, "--beta", _params.BETA, 1.0)
    _add_option(learn, "--kappa", _params.KAPPA, 1.0)
    _add_option(learn, "--evaluator", _params.MODE, "filter",
                "evaluator of the credit of a sampled set: filter (the chosen rewrites' "
                "pools replayed once, then filtered) or rerun (exact counterfactuals)")
    _add_option(learn, "--eval-samples", _params.EVAL_SAMPLES, 64)
    _add_option(learn, "--held-out", _params.HELD_OUT, 0.3)
    for flag, declared in (("--slots", _params.SLOTS), ("--reserve", _params.RESERVE),
                           ("--capacity", _params.CAPACITY), ("--pricing", _params.PRICING)):
        # the preset's value replaces the declaration's own default ("all")
        text = re.sub(r"\s*\(default: [^)]*\)$", "", declared.help)
        _add_option(learn, flag, declared, None, f"{text} (default: the preset's)")
    _add_option(learn, "--seed", _params.SEED, 0)
    _add_option(learn, "--threads", _params.THREADS, None)
    _add_quiet(learn)


def run(args) -> int:
    from .. import learning
    credits = [c.strip() for c in args.credits.split(",")]
    try:   # an error here names the option, before the data is generated
        for c in credits:
            _params.CREDIT.check(c, "--credits")
        checkpoints = None if args.checkpoints is None else \
            [_params.Integer("--checkpoints", 1, args.steps, "").check(int(n))
             for n in args.checkpoints.split(",")]
    except ValueError as err:
        text = str(err)
        raise _UserError(text if text.startswith("--") else
                         f"--checkpoints must be comma-separated integers, got "
                         f"{args.checkpoints!r}") from None
    if args.m >= args.rewrites:
        raise _UserError(f"--m must be less than --rewrites, got --m {args.m} and "
                         f"--rewrites {args.rewrites}")
    n_test = round(args.held_out * args.requests)
    if not 1 <= n_test < args.requests:
        raise _UserError(f"--held-out {args.held_out} of --requests {args.requests:,} leaves "
                         f"{args.requests - n_test:,} for training and {n_test:,} held out; "
                         f"both need >= 1")
    auction = dict(synthetic.search_preset(args.preset).replay)
    auction.update({k: getattr(args, k) for k in auction if getattr(args, k) is not None})
    print(f"fastcredit learn: {args.requests:,} synthetic requests ({args.preset} preset), "
          f"m = {args.m} of K = {args.rewrites} candidate rewrites, top-{auction['slots']} "
          f"{auction['pricing']} auction (reserve {auction['reserve']:g}), {args.runs} runs "
          f"of {args.steps} updates per advantage, seed {args.seed}")
    pools = learning.benchmark_pools(args.requests, args.rewrites, args.seed,
                                     preset=args.preset)
    result = learning.benchmark(
        pools, credits=credits, m=args.m, runs=args.runs, held_out=args.held_out,
        steps=args.steps, checkpoints=checkpoints, batch=args.batch, group=args.group,
        lr=args.lr, beta=args.beta, kappa=args.kappa, evaluator=args.evaluator,
        eval_samples=args.eval_samples, seed=args.seed, threads=args.threads,
        progress=None if args.quiet else lambda line: print(f"  {line}", file=sys.stderr),
        **auction)
    print(result.table())
    print(f"{len(credits) * args.runs} training runs in {result.seconds:.1f} s")
    return 0


#: What learn's arguments can be refused with (the library names them).
ERRORS = (ValueError,)
