"""The ``fastcredit`` command line.

``fastcredit synth`` writes synthetic requests to Parquet and ``fastcredit
score`` scores a Parquet file or dataset of requests into Parquet (see
fastcredit.scoring).

``fastcredit demo`` is the main job: it generates synthetic sponsored-search
requests (m = 5 query rewrites x k = 20 candidate ads each), replays every
request's auction for all 2**m subsets of rewrites in both evaluator modes,
computes Shapley / Banzhaf / Singleton / leave-one-out credit and prints a
short results section with the throughput of every stage.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ._progress import Stage

SLOTS = 4
CHUNK = 100_000
RULES = ("shapley", "banzhaf", "singleton", "leave_one_out")
RULE_NAMES = {"shapley": "Shapley", "banzhaf": "Banzhaf", "singleton": "Singleton",
              "leave_one_out": "Leave-one-out"}
MODES = ("filter", "rerun")


def _insertion_signs(tables: dict, m: int):
    """(same sign, same sign among the marginals nonzero in either mode, count)
    of the insertion marginals v(S + i) - v(S), filter vs rerun."""
    same = nonzero = same_nonzero = 0
    masks = np.arange(1 << m)
    for i in range(m):
        without = masks[(masks >> i & 1) == 0]
        f = np.sign(tables["filter"][:, without | 1 << i] - tables["filter"][:, without])
        r = np.sign(tables["rerun"][:, without | 1 << i] - tables["rerun"][:, without])
        agree = f == r
        either = (f != 0) | (r != 0)
        same += int(agree.sum())
        nonzero += int(either.sum())
        same_nonzero += int((agree & either).sum())
    total = tables["filter"].shape[0] * m << (m - 1)
    return same / total, same_nonzero / max(nonzero, 1), total, nonzero


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _interaction_report(pairs: np.ndarray, m: int) -> list[str]:
    iu = np.triu_indices(m, 1)
    vals = pairs[:, iu[0], iu[1]].ravel()
    tol = 1e-9  # the sums of a table round; smaller |I_ij| are zero
    neg, pos = vals < -tol, vals > tol
    magnitude = np.where(neg | pos, np.abs(vals), 0.0)
    nonzero = magnitude[neg | pos]
    share = (lambda mask: _pct(mask.mean())) if vals.size else (lambda mask: _pct(0.0))
    return [
        f"    negative (substitutes) {share(neg)} ({int(neg.sum()):,}), positive "
        f"(complements) {share(pos)} ({int(pos.sum()):,}), zero {share(~(neg | pos))}",
        f"    median |I_ij|: {np.median(magnitude) if vals.size else 0.0:.3g} over all pairs, "
        f"{np.median(nonzero) if nonzero.size else 0.0:.3g} over the nonzero ones",
    ]


def run_demo(n_requests: int, seed: int, out, threads, stream=None, progress=None) -> int:
    """Run the demo on ``n_requests`` requests, print the report to
    ``stream`` (stdout) and progress bars to ``progress`` (stderr); save the
    tables and credits to the .npz file ``out`` unless it is None."""
    import fastcredit as fc

    stream = sys.stdout if stream is None else stream
    progress = sys.stderr if progress is None else progress
    m, k = 5, 20
    t_start = time.perf_counter()
    print(f"fastcredit demo: {n_requests:,} synthetic sponsored-search requests, m = {m} "
          f"rewrites x k = {k} candidate ads, top-{SLOTS} first-price auction, seed {seed}",
          file=stream)
    tables = {mode: np.empty((n_requests, 1 << m)) for mode in MODES}
    times = {"generate pools": 0.0, "replay filter": 0.0, "replay rerun": 0.0}
    instances = 0
    with Stage("pools -> tables", n_requests, progress) as stage:
        for a in range(0, n_requests, CHUNK):
            b = min(n_requests, a + CHUNK)
            t0 = time.perf_counter()
            pools = fc.synthetic.sponsored_search(b - a, m=m, k=k, seed=seed, start=a,
                                                  threads=threads)
            times["generate pools"] += time.perf_counter() - t0
            instances += pools.ad_id.shape[0]
            for mode in MODES:
                t0 = time.perf_counter()
                fc.auction_replay(pools, slots=SLOTS, mode=mode, out=tables[mode][a:b],
                                  threads=threads)
                times[f"replay {mode}"] += time.perf_counter() - t0
            stage.advance(b - a)
    credit = {}
    with Stage("credit rules", len(RULES) * len(MODES) + 1, progress) as stage:
        for mode in MODES:
            for rule in RULES:
                t0 = time.perf_counter()
                credit[rule, mode] = getattr(fc, rule)(tables[mode], threads=threads)
                times[f"{rule} ({mode})"] = time.perf_counter() - t0
                stage.advance(1)
        t0 = time.perf_counter()
        pairs = {mode: fc.pair_interactions(tables[mode], threads=threads) for mode in MODES}
        times["pair interactions (both)"] = time.perf_counter() - t0
        stage.advance(1)

    print(f"\n{instances:,} candidate instances ({instances / max(n_requests, 1):.1f} per "
          f"request); tables of {1 << m} coalitions per request\n", file=stream)
    print(f"Coalition dependence: pair interactions I_ij = v(ij) - v(i) - v(j) + v(0), "
          f"{n_requests * m * (m - 1) // 2:,} pairs per mode", file=stream)
    for mode in MODES:
        print(f"  {mode}:", file=stream)
        for line in _interaction_report(pairs[mode], m):
            print(line, file=stream)
    for mode in MODES:
        t = tables[mode]
        stuck = (t[:, -1] == 0) & (t[:, :-1].max(axis=1) > 0)
        print(f"  requests whose full set earns 0 while a smaller coalition earns more "
              f"({mode}): {int(stuck.sum()):,} ({_pct(stuck.mean() if n_requests else 0)})",
              file=stream)
    same, same_nonzero, total, nonzero = _insertion_signs(tables, m)
    identical = np.all(tables["filter"] == tables["rerun"], axis=1).mean() if n_requests else 0
    print("\nFilter vs rerun evaluators", file=stream)
    print(f"  identical tables: {_pct(identical)} of requests", file=stream)
    print(f"  insertion marginals v(S+i) - v(S) with the same sign: {_pct(same)} of {total:,}; "
          f"{_pct(same_nonzero)} of the {nonzero:,} nonzero in either mode", file=stream)
    print("\nAlignment with Shapley: median centered cosine over requests "
          "(defined where Shapley credit varies; a constant rule scores 0)", file=stream)
    print(f"  {'rule':<14}" + "".join(f"{mode:>18}" for mode in MODES), file=stream)
    for rule in RULES[1:]:
        cells = []
        for mode in MODES:
            cos = fc.alignment(credit[rule, mode], credit["shapley", mode],
                               threads=threads).cosine
            ok = np.isfinite(cos)
            cells.append(f"{np.median(cos[ok]) if ok.any() else np.nan:8.3f} "
                         f"(n={int(ok.sum()):,})")
        print(f"  {RULE_NAMES[rule]:<14}" + "".join(f"{c:>18}" for c in cells), file=stream)

    print("\nThroughput", file=stream)
    print(f"  {'stage':<28}{'seconds':>9}{'requests/s':>14}", file=stream)
    for name, sec in times.items():
        rate = f"{n_requests / sec:,.0f}" if sec > 0 else "-"
        print(f"  {name:<28}{sec:9.2f}{rate:>14}", file=stream)
    print(f"  {'total (with this report)':<28}{time.perf_counter() - t_start:9.2f}", file=stream)

    if out is not None:
        arrays = {f"table_{mode}": tables[mode] for mode in MODES}
        arrays.update({f"{rule}_{mode}": credit[rule, mode] for rule, mode in credit})
        np.savez(out, **arrays)
        print(f"\nsaved tables and credits to {out}", file=stream)
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _seed(text: str) -> int:
    value = int(text)
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"must be in [0, 2**63), got {value}")
    return value


def _add_config_arguments(p) -> None:
    from .scoring import RULES
    p.add_argument("--m", type=_positive, default=5, help="actions per request (default 5)")
    p.add_argument("--rules", default="shapley",
                   help=f"comma-separated credit rules from {', '.join(RULES)} "
                        "(default shapley)")
    p.add_argument("--slots", type=_positive, default=SLOTS, help="auction slots (default 4)")
    p.add_argument("--reserve", type=float, default=0.0, help="reserve score (default 0)")
    p.add_argument("--capacity", type=_positive, default=None,
                   help="pre-rank capacity (default none)")
    p.add_argument("--pricing", choices=("first", "gsp"), default="first")
    p.add_argument("--mode", choices=MODES, default="filter")
    p.add_argument("--key", default="request_id", help="request key column")
    p.add_argument("--base", default=None,
                   help="base-advantage column: also output shaped per-action advantages")
    p.add_argument("--shaping-rule", default="shapley", help="credit rule the shaping uses")
    p.add_argument("--beta", type=float, default=1.0)
    p.add_argument("--kappa", type=float, default=1.0)
    p.add_argument("--normalize", choices=("std", "maxabs", "none"), default="std")


def _score(args) -> int:
    from .scoring import MalformedRowError, ScoreConfig, score_parquet
    try:
        config = ScoreConfig(m=args.m, rules=tuple(args.rules.split(",")), slots=args.slots,
                             reserve=args.reserve, capacity=args.capacity,
                             pricing=args.pricing, mode=args.mode, key=args.key,
                             base=args.base, shaping_rule=args.shaping_rule, beta=args.beta,
                             kappa=args.kappa, normalize=args.normalize, threads=args.threads)
        summary = score_parquet(args.input, args.output, config, on_error=args.on_error,
                                batch_rows=args.batch_rows, progress=True)
    except (MalformedRowError, ValueError, TypeError, FileNotFoundError) as err:
        print(f"fastcredit score: {err}", file=sys.stderr)
        return 1
    print(f"scored {summary.scored:,} of {summary.rows:,} requests in {summary.seconds:.2f} s "
          f"({summary.requests_per_second:,.0f} requests/s), skipped {summary.skipped:,}, "
          f"peak RSS {summary.peak_rss_bytes / 2**20:,.0f} MiB -> {args.output}")
    for row, reason in summary.errors[:10]:
        print(f"  skipped row {row}: {reason}")
    return 0


def _synth(args) -> int:
    from .scoring import write_synthetic
    t0 = time.perf_counter()
    write_synthetic(args.output, args.requests, m=args.m, k=args.k, seed=args.seed,
                    row_group=args.row_group, progress=True)
    print(f"wrote {args.requests:,} synthetic requests (m = {args.m}, k = {args.k}) to "
          f"{args.output} in {time.perf_counter() - t0:.1f} s")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="fastcredit", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="replay synthetic sponsored search and report credit",
                          description=__doc__.split("\n\n", 2)[2])
    demo.add_argument("--requests", type=_positive, default=1_000_000,
                      help="number of requests (default 1,000,000)")
    demo.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    demo.add_argument("--out", default=None,
                      help="save the tables and credits to this .npz file")
    demo.add_argument("--threads", type=_positive, default=None,
                      help="threads (default: all cores)")
    score = sub.add_parser("score", help="score a Parquet file or dataset of requests")
    score.add_argument("input", help="Parquet file or directory of requests")
    score.add_argument("output", help="Parquet file to write (atomically)")
    _add_config_arguments(score)
    score.add_argument("--on-error", choices=("stop", "skip"), default="stop",
                       help="malformed rows stop the run (default) or are skipped and counted")
    score.add_argument("--batch-rows", type=_positive, default=65_536,
                       help="requests per batch (bounds memory; default 65,536)")
    score.add_argument("--threads", type=_positive, default=None,
                       help="threads (default: all cores)")
    synth = sub.add_parser("synth", help="write synthetic sponsored-search requests to Parquet")
    synth.add_argument("output", help="Parquet file to write")
    synth.add_argument("--requests", type=_positive, default=1_000_000)
    synth.add_argument("--m", type=_positive, default=5, help="rewrites per request")
    synth.add_argument("--k", type=_positive, default=20, help="candidates per rewrite")
    synth.add_argument("--seed", type=_seed, default=0)
    synth.add_argument("--row-group", type=_positive, default=65_536,
                       help="requests per row group (default 65,536)")
    args = parser.parse_args(argv)
    if args.command == "score":
        return _score(args)
    if args.command == "synth":
        return _synth(args)
    return run_demo(args.requests, args.seed, args.out, args.threads)


if __name__ == "__main__":
    sys.exit(main())
