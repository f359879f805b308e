"""The fastcredit command line.

fastcredit synth writes synthetic requests to Parquet and fastcredit score
scores a Parquet file or dataset of requests into Parquet (see
fastcredit.scoring); fastcredit learn trains a policy with each credit rule's
advantages and reports held-out set value (fastcredit.learning); fastcredit
warm compiles the Numba kernels ahead of time.

fastcredit demo is the main job: it generates synthetic sponsored-search
requests (m = 5 query rewrites x k = 20 candidate ads each; the realistic
preset by default), replays every request's auction for all 2**m subsets of
rewrites in both evaluator modes, computes Shapley / Banzhaf / Singleton /
leave-one-out credit, and prints the set-intervention study's analyses
(calibration against the paper, the interaction distribution, Tables 1, 2,
6 and 4: rules under the filter evaluator against the rerun Shapley) with
the throughput of every stage; --html also writes them with plots.
"""
# This docstring is the text of --help (main): plain text, no reST markup.
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import _params, synthetic
from ._output import AtomicOutput, OutputError, check_output, write_file
from ._params import Integer, Real
from ._progress import Stage
from ._constants import RNG_MAX_RANGE, SYNTHETIC_MAX_INDEX
from ._validation import check_bool, check_int, check_memory, check_path
from .scoring import BATCH_ROWS

SLOTS = 4
M, K = 5, 20  # query rewrites per request and candidate ads per rewrite of the demo
CHUNK = 100_000
RULES = _params.RULE.values
RULE_NAMES = {"shapley": "Shapley", "banzhaf": "Banzhaf", "singleton": "Singleton",
              "leave_one_out": "Leave-one-out"}
MODES = _params.MODE.values

# Parameters of the command line that fastcredit._params does not declare.
# (upper bounds: those of fastcredit.synthetic.sponsored_search, whose stream
# holds 2**60 requests and whose rewrites retrieve at most 2**32 ads)
REQUESTS = Integer("requests", 1, SYNTHETIC_MAX_INDEX, "number of requests")
CANDIDATES = Integer("k", 1, RNG_MAX_RANGE, "candidate ads per rewrite")
ROW_GROUP = Integer("row_group", 1, SYNTHETIC_MAX_INDEX, "requests per Parquet row group")
STUDY_REQUESTS = Integer("study_requests", 2, SYNTHETIC_MAX_INDEX,
                         "requests (the first ones) the study's analyses run on")
# The paper analysed 1,171 requests; 20,000 make every interval of the
# study narrow and take about a second.
STUDY_DEFAULT = 20_000


# --- the demo: computation ---------------------------------------------------

def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _interaction_lines(dist) -> list[str]:
    """Two report lines of a fastcredit.InteractionDistribution."""
    return [
        f"    negative (substitutes) {_pct(dist.negative_share)} ({dist.negative:,}), positive "
        f"(complements) {_pct(dist.positive_share)} ({dist.positive:,}), zero "
        f"{_pct(dist.zero_share)}",
        f"    median |I_ij|: {dist.median_abs:.3g} over all pairs, "
        f"{dist.median_abs_nonzero:.3g} over the nonzero ones",
    ]


@dataclass(frozen=True)
class DemoResult:
    """What :func:`compute_demo` computed."""

    n_requests: int
    seed: int
    preset: str
    instances: int      # candidate instances over all requests
    tables: dict        # mode -> coalition tables (n_requests, 2**M)
    credit: dict        # (rule, mode) -> credit (n_requests, M)
    interactions: dict  # mode -> fastcredit.InteractionDistribution of all requests
    study: object       # fastcredit._study_report.Study of the first study requests
    times: dict         # stage -> seconds
    started: float      # time.perf_counter() when the computation started

    def arrays(self) -> dict:
        """The tables and credits by the names the .npz file gives them."""
        arrays = {f"table_{mode}": self.tables[mode] for mode in MODES}
        arrays.update({f"{rule}_{mode}": c for (rule, mode), c in self.credit.items()})
        return arrays


def _replay(n_requests: int, seed: int, preset: str, threads, progress):
    """(tables by mode, candidate instances, seconds by stage) of the pools."""
    import fastcredit as fc
    replay = synthetic.search_preset(preset).replay
    tables = {mode: np.empty((n_requests, 1 << M)) for mode in MODES}
    times = {"generate pools": 0.0, "replay filter": 0.0, "replay rerun": 0.0}
    instances = 0
    with Stage("pools -> tables", n_requests, progress) as stage:
        for a in range(0, n_requests, CHUNK):
            b = min(n_requests, a + CHUNK)
            t0 = time.perf_counter()
            pools = synthetic.sponsored_search(b - a, m=M, k=K, seed=seed, start=a,
                                               preset=preset, threads=threads)
            times["generate pools"] += time.perf_counter() - t0
            instances += pools.ad_id.shape[0]
            for mode in MODES:
                t0 = time.perf_counter()
                fc.auction_replay(pools, mode=mode, out=tables[mode][a:b], threads=threads,
                                  **replay)
                times[f"replay {mode}"] += time.perf_counter() - t0
            stage.advance(b - a)
    return tables, instances, times


def _credit(tables: dict, times: dict, threads, progress):
    """(credit by (rule, mode), interaction distribution by mode); adds their
    seconds to ``times``."""
    import fastcredit as fc
    credit = {}
    with Stage("credit rules", len(RULES) * len(MODES) + 1, progress) as stage:
        for mode in MODES:
            for rule in RULES:
                t0 = time.perf_counter()
                credit[rule, mode] = getattr(fc, rule)(tables[mode], threads=threads)
                times[f"{rule} ({mode})"] = time.perf_counter() - t0
                stage.advance(1)
        t0 = time.perf_counter()
        dists = {mode: fc.interaction_distribution(tables[mode], threads=threads)
                 for mode in MODES}
        times["pair interactions (both)"] = time.perf_counter() - t0
        stage.advance(1)
    return credit, dists


def _demo_arguments(n_requests, seed, preset="realistic", study_requests=STUDY_DEFAULT,
                    resamples=10_000) -> tuple:
    """The demo's arguments checked, and refused when the tables and
    credits of n_requests requests cannot fit in memory."""
    from .audit.bootstrap import check_resamples
    n_requests = REQUESTS.check(n_requests, "n_requests")
    seed = _params.SEED.check(seed)
    preset = _params.SEARCH_PRESET.check(preset)
    study_requests = STUDY_REQUESTS.check(study_requests)
    resamples = check_resamples(resamples)
    # per request and mode: a table, 4 credit rules (M each) and M x M pairs
    per_request = len(MODES) * ((1 << M) + len(RULES) * M + M * M) * 8
    check_memory(n_requests * per_request, f"n_requests = {n_requests:,} (the tables and "
                                           f"credits of the demo)")
    return n_requests, seed, preset, study_requests, resamples


def compute_demo(n_requests: int, seed: int, threads=None, progress=None, *,
                 preset: str = "realistic", study_requests: int = STUDY_DEFAULT,
                 resamples: int = 10_000) -> DemoResult:
    """Replay ``n_requests`` synthetic requests of ``preset`` in both modes,
    compute every credit rule, the interaction shares of all requests and
    the set-intervention study (fastcredit.audit.study, training evaluator
    filter, audit evaluator rerun) of the first ``study_requests``; progress
    bars go to ``progress`` (none when it is None)."""
    from ._study_report import compute_study
    n_requests, seed, preset, study_requests, resamples = _demo_arguments(
        n_requests, seed, preset, study_requests, resamples)
    started = time.perf_counter()
    tables, instances, times = _replay(n_requests, seed, preset, threads, progress)
    credit, interactions = _credit(tables, times, threads, progress)
    n_study = min(study_requests, n_requests)
    t0 = time.perf_counter()
    with Stage("study analyses", 1, progress) as stage:
        study = compute_study({mode: tables[mode][:n_study] for mode in MODES}, "filter",
                              "rerun", resamples=resamples, seed=seed, threads=threads)
        stage.advance(1)
    times[f"study ({n_study:,} requests)"] = time.perf_counter() - t0
    return DemoResult(n_requests=n_requests, seed=seed, preset=preset, instances=instances,
                      tables=tables, credit=credit,
                      interactions=interactions,
                      study=study, times=times, started=started)


# --- the demo: report --------------------------------------------------------

def _auction_text(preset: str) -> str:
    r = synthetic.search_preset(preset).replay
    pricing = {"first": "first-price", "gsp": "GSP"}[r["pricing"]]
    extra = "".join([f", reserve {r['reserve']:g}" if r["reserve"] else "",
                     f", capacity {r['capacity']}" if r["capacity"] else ""])
    return f"top-{r['slots']} {pricing} auction{extra}"


def demo_header(n_requests: int, seed: int, preset: str = "realistic") -> str:
    return (f"fastcredit demo: {n_requests:,} synthetic sponsored-search requests (preset "
            f"{preset}), m = {M} rewrites x k = {K} candidate ads, {_auction_text(preset)}, "
            f"seed {seed}")


def _throughput_lines(result: DemoResult) -> list[str]:
    n = result.n_requests
    lines = [f"  {'stage':<28}{'seconds':>9}{'requests/s':>14}"]
    for name, sec in result.times.items():
        count = result.study.n_requests if name.startswith("study") else n
        rate = f"{count / sec:,.0f}" if sec > 0 else "-"
        lines.append(f"  {name:<28}{sec:9.2f}{rate:>14}")
    lines.append(f"  {'total (with this report)':<28}"
                 f"{time.perf_counter() - result.started:9.2f}")
    return lines


def report_demo(result: DemoResult, stream=None) -> None:
    """Print the results of :func:`compute_demo` (all but the header line) to
    ``stream`` (stdout)."""
    from ._study_report import study_lines
    stream = sys.stdout if stream is None else stream

    def say(text=""):
        print(text, file=stream)

    n = result.n_requests
    say(f"\n{result.instances:,} candidate instances ({result.instances / max(n, 1):.1f} per "
        f"request); tables of {1 << M} coalitions per request\n")
    say(f"Pair interactions of all requests, I_ij = v(ij) - v(i) - v(j) + v(0): "
        f"{n * M * (M - 1) // 2:,} pairs per mode")
    for mode in MODES:
        say(f"  {mode}:")
        for line in _interaction_lines(result.interactions[mode]):
            say(line)
    say()
    for line in study_lines(result.study):
        say(line)
    say("\nThroughput")
    for line in _throughput_lines(result):
        say(line)


def _npz_path(out) -> str:
    """``out`` with the suffix numpy.savez would give it (".npz" appended
    when missing)."""
    out = os.fspath(out)
    return out if out.endswith(".npz") else out + ".npz"


def run_demo(n_requests: int, seed: int, out, threads, stream=None, progress=None, *,
             preset: str = "realistic", study_requests: int = STUDY_DEFAULT,
             resamples: int = 10_000, html=None) -> int:
    """Run the demo on ``n_requests`` requests, print the report to
    ``stream`` (stdout) and progress to ``progress`` (stderr; False: none);
    save the tables and credits to the .npz file ``out`` (".npz" appended
    when missing, as numpy.savez does) unless it is None, and the report
    with plots to the HTML file ``html`` unless it is None (matplotlib
    needed: ImportError otherwise, before any work). Outputs are checked
    before the computation (:class:`fastcredit._output.OutputError`) and
    written atomically, before the report."""
    n_requests, seed, preset, study_requests, resamples = _demo_arguments(
        n_requests, seed, preset, study_requests, resamples)
    stream = sys.stdout if stream is None else stream
    progress = sys.stderr if progress is None else (progress or None)
    if out is not None:
        out = _npz_path(check_path(out, "out"))
        check_output(out)
    if html is not None:
        from ._study_report import _matplotlib
        html = os.fspath(check_path(html, "html"))
        check_output(html)
        if out is not None and os.path.abspath(html) == os.path.abspath(out):
            raise OutputError(f"html and out are the same file: {html!r}")
        _matplotlib()
    header = demo_header(n_requests, seed, preset)
    print(header, file=stream)
    result = compute_demo(n_requests, seed, threads, progress, preset=preset,
                          study_requests=study_requests, resamples=resamples)
    if out is not None:   # saved before the report, which a closed pipe may cut short
        arrays = result.arrays()
        write_file(out, lambda f: np.savez(f, **arrays))
    if html is not None:
        from ._study_report import study_html
        page = study_html(result.study, title="fastcredit demo: the set-intervention study",
                          preamble=[header, f"{result.instances:,} candidate instances; the "
                                            f"study uses the first "
                                            f"{result.study.n_requests:,} requests."],
                          throughput=_throughput_lines(result))
        write_file(html, lambda f: f.write(page.encode("utf-8")))
    report_demo(result, stream)
    if out is not None:
        print(f"\nsaved tables and credits to {out}", file=stream)
    if html is not None:
        print(f"wrote the HTML report to {html}", file=stream)
    return 0


# --- synth -------------------------------------------------------------------

_CANDIDATE = "candidates.list.element."


def synthetic_parquet_options(schema) -> dict:
    """ParquetWriter options of :func:`write_synthetic`, chosen for writing
    speed. Measured with pyarrow 26 on 1,000,000 requests (83 million
    candidates): the writer takes 9.2 CPU seconds with pyarrow's defaults
    (a 1.6 GB file) and 4.4 with these (1.7 GB: only value compresses
    much). No dictionary pages (the doubles are nearly
    all distinct; the 50,000 ad ids would take a hash lookup per candidate),
    no statistics but the key's; ad_id delta-encoded and, like score and
    prerank (random doubles, which snappy shrinks by a few percent at a
    quarter more writing time), not compressed; snappy for the rest (value
    is mostly zeros). Leaves declared non-null (:func:`_required`) spare the
    writer validity bitmaps."""
    leaves = [f.name for f in schema if f.name != "candidates"]
    if schema.get_field_index("candidates") >= 0:
        leaves += [_CANDIDATE + f.name for f in schema.field("candidates").type.value_type]
    plain = {_CANDIDATE + name for name in ("ad_id", "score", "prerank")}
    return {"use_dictionary": False, "write_statistics": ["request_id"],
            "compression": {c: "none" if c in plain else "snappy" for c in leaves},
            "column_encoding": {c: "DELTA_BINARY_PACKED" for c in leaves
                                if c == _CANDIDATE + "ad_id"}}


def _required(schema):
    """``schema`` with every field, nested ones too, declared non-null: the
    generator makes no nulls, and the Parquet writer then keeps no validity
    bitmaps (10 % of its time). Casting to it copies nothing."""
    from .scoring import _pa
    pa = _pa()

    def required(field):
        t = field.type
        if pa.types.is_struct(t):
            t = pa.struct([required(f) for f in t])
        elif pa.types.is_large_list(t):
            t = pa.large_list(required(t.value_field))
        elif pa.types.is_list(t):
            t = pa.list_(required(t.value_field))
        return field.with_type(t).with_nullable(False)

    return pa.schema([required(f) for f in schema])


def _synthetic_part(start: int, count: int, m: int, k: int, seed: int, base: bool,
                    threads):
    """Requests start .. start + count - 1 of the stream as an Arrow table."""
    from .scoring import _pa, pools_to_arrow
    pools = synthetic.sponsored_search(count, m=m, k=k, seed=seed, start=start,
                                       threads=threads)
    table = pools_to_arrow(pools, first_key=start)
    if base:
        rng = np.random.default_rng([seed, 1 << 20, start])
        table = table.append_column("base_advantage", _pa().array(rng.normal(size=count)))
    return table


def write_synthetic(destination, n_requests: int, *, m: int = 5, k: int = 20, seed: int = 0,
                    row_group: int = 65_536, base: bool = True, progress: bool | None = None,
                    threads=None):
    """Write :func:`fastcredit.synthetic.sponsored_search` requests to one
    Parquet file in the ``candidates`` layout of fastcredit.scoring
    (:func:`~fastcredit.scoring.pools_to_arrow`), ``row_group`` requests per
    row group, generated row group by row group (bounded memory; the requests
    are those of one ``sponsored_search(n_requests, seed=seed)`` call), the
    next row group generated (on ``threads``) while one is written. With
    ``base`` a column ``base_advantage`` (standard normal, seeded) is added
    for shaping. Progress goes to stderr (``progress`` None: when it is a
    terminal). The file is written through
    :class:`fastcredit._output.AtomicOutput`: the destination is checked
    before any work, and complete or absent at the end. Returns
    ``destination``."""
    from .scoring import _pa
    _pa()
    import pyarrow.parquet as pq
    destination = check_path(destination, "destination")
    n_requests = check_int(n_requests, "n_requests", lo=0, hi=SYNTHETIC_MAX_INDEX)
    row_group = ROW_GROUP.check(row_group)
    m, k = _params.ACTIONS.check(m, "m"), CANDIDATES.check(k)
    seed, threads = _params.SEED.check(seed), _params.THREADS.check(threads)
    base = check_bool(base, "base")
    if progress is not None:
        progress = check_bool(progress, "progress")
    # two row groups in memory (one generated while one is written), each of
    # up to m * k candidates per request of 4 float64/int64 columns
    rows = min(row_group, n_requests)
    check_memory(2 * rows * m * k * 4 * 8,
                 f"k = {k:,}, m = {m} and row_group = {row_group:,} (the candidates of two "
                 f"row groups of {rows:,} requests)")
    output = AtomicOutput(destination)
    show = sys.stderr.isatty() if progress is None else progress
    starts = range(0, max(n_requests, 1), row_group)

    def part(start):
        return _synthetic_part(start, min(row_group, n_requests - start), m, k, seed, base,
                               threads)

    with output as temp, \
            Stage("write requests", n_requests, sys.stderr if show else None,
                  unit="requests") as bar, \
            ThreadPoolExecutor(1, thread_name_prefix="fastcredit-synth") as ahead:
        writer = None
        try:
            coming = ahead.submit(part, starts[0])
            for i in range(len(starts)):
                table = coming.result()
                if i + 1 < len(starts):
                    coming = ahead.submit(part, starts[i + 1])
                if writer is None:
                    schema = _required(table.schema)
                    writer = pq.ParquetWriter(temp, schema, **synthetic_parquet_options(schema))
                writer.write_table(table.cast(schema), row_group_size=row_group)
                bar.advance(table.num_rows)
        finally:
            if writer is not None:
                writer.close()
    return destination


# --- the command line --------------------------------------------------------

_READ = {Integer: (int, "an integer"), Real: (float, "a real number")}


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {_one_line(message)} (see {self.prog} --help)\n")


def _add_option(parser, flag: str, declared, default, text: str | None = None) -> None:
    """Add the option ``flag`` built from the declaration ``declared`` (see
    fastcredit._params): its values as choices, a type that reads the text and
    checks it with ``declared.check`` (a refusal is an argparse error, exit
    status 2), and help text (``text``, else the declaration's) with the
    default shown."""
    dest = flag.lstrip("-").replace("-", "_")
    read, kind = _READ.get(type(declared), (str, "a string"))

    def parse(value: str):
        try:
            value = read(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{dest} must be {kind}, got {value!r}") from None
        try:
            return declared.check(value, dest)
        except (TypeError, ValueError) as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    text = text or declared.help
    if default is not None:
        text += f" (default: {default:,})" if type(default) is int else f" (default: {default})"
    parser.add_argument(flag, type=parse, default=default,
                        choices=getattr(declared, "values", None), help=text.replace("%", "%%"))


def _add_quiet(p) -> None:
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress output (results and errors are still printed)")


def _add_config_arguments(p) -> None:
    """The options of a fastcredit.scoring.ScoreConfig."""
    _add_option(p, "--m", _params.ACTIONS, 5)
    p.add_argument("--rules", default="shapley",
                   help=f"comma-separated credit rules to output, from "
                        f"{', '.join(_params.RULE.values)} (default: shapley)")
    _add_option(p, "--slots", _params.SLOTS, SLOTS)
    _add_option(p, "--reserve", _params.RESERVE, 0.0)
    _add_option(p, "--capacity", _params.CAPACITY, None)
    _add_option(p, "--pricing", _params.PRICING, "first")
    _add_option(p, "--mode", _params.MODE, "filter")
    p.add_argument("--key", default="request_id",
                   help="request key column, copied to the output (default: request_id)")
    p.add_argument("--carry", default="",
                   help="comma-separated input columns copied to the output after the key "
                        "(default: none)")
    p.add_argument("--base", default=None,
                   help="base-advantage column: also output shaped per-action advantages")
    _add_option(p, "--shaping-rule", _params.RULE, "shapley", "credit rule the shaping uses")
    _add_option(p, "--beta", _params.BETA, 1.0)
    _add_option(p, "--kappa", _params.KAPPA, 1.0)
    _add_option(p, "--normalize", _params.NORMALIZE, "std")


def _score(args) -> int:
    from .scoring import ScoreConfig, score_parquet
    try:   # options first: an error here names the option, not the input
        config = ScoreConfig(m=args.m, rules=tuple(args.rules.split(",")), slots=args.slots,
                             reserve=args.reserve, capacity=args.capacity,
                             pricing=args.pricing, mode=args.mode, key=args.key,
                             carry=tuple(c for c in args.carry.split(",") if c),
                             base=args.base, shaping_rule=args.shaping_rule, beta=args.beta,
                             kappa=args.kappa, normalize=args.normalize, threads=args.threads)
    except (ValueError, TypeError) as err:   # the message starts with the field's name
        field = str(err).split(" ", 1)[0]
        flag = f"--{field.replace('_', '-')}: " if hasattr(args, field) else ""
        raise _UserError(f"{flag}{err}") from None
    if not os.path.lexists(args.input) and not any(c in args.input for c in "*?[") \
            and "://" not in args.input:
        raise _UserError(f"input {args.input!r} does not exist")
    try:
        summary = score_parquet(args.input, args.output, config, on_error=args.on_error,
                                batch_rows=args.batch_rows, progress=not args.quiet)
    except OutputError:
        raise
    except _user_errors(ValueError, TypeError, OSError) as err:
        text = _message(err)
        if args.input not in text and args.output not in text:
            text = f"input {args.input!r}: {text}"
        raise _UserError(text) from None
    print(f"scored {summary.scored:,} of {summary.rows:,} requests in {summary.seconds:.2f} s "
          f"({summary.requests_per_second:,.0f} requests/s), skipped {summary.skipped:,}, "
          f"peak RSS {summary.peak_rss_bytes / 2**20:,.0f} MiB -> {args.output}")
    for row, reason in summary.errors[:10]:
        print(f"  skipped row {row}: {reason}")
    return 0


def _synth(args) -> int:
    t0 = time.perf_counter()
    write_synthetic(args.output, args.requests, m=args.m, k=args.k, seed=args.seed,
                    row_group=args.row_group, progress=not args.quiet, threads=args.threads)
    seconds = time.perf_counter() - t0
    print(f"wrote {args.requests:,} synthetic requests (m = {args.m}, k = {args.k}) to "
          f"{args.output} in {seconds:.1f} s ({args.requests / max(seconds, 1e-9):,.0f} "
          f"requests/s)")
    return 0


def _warm_kernels(args) -> int:
    from ._warm import warm
    if not args.quiet:
        print("compiling and caching every Numba kernel (backend=None uses Numba where it "
              "measured faster once they are warm):")
    seconds = warm(stream=None if args.quiet else sys.stdout)
    print(f"{len(seconds)} kernels warm in {sum(seconds.values()):.1f} s")
    return 0


def _demo(args) -> int:
    return run_demo(args.requests, args.seed, args.out, args.threads,
                    progress=False if args.quiet else None, preset=args.preset,
                    study_requests=args.study_requests, resamples=args.resamples,
                    html=args.html)


# --- learn -------------------------------------------------------------------

def _add_learn_parser(sub) -> None:
    from . import learning
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
        _add_option(learn, flag, declared, None, f"{declared.help} (default: the preset's)")
    _add_option(learn, "--seed", _params.SEED, 0)
    _add_option(learn, "--threads", _params.THREADS, None)
    _add_quiet(learn)


def _learn(args) -> int:
    from . import learning
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


# --- errors ------------------------------------------------------------------

class _UserError(Exception):
    """A user error of a command: its message is the one line printed."""


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _message(err: BaseException) -> str:
    """One line saying what went wrong, naming the file an OSError names."""
    if isinstance(err, OSError) and err.strerror and err.filename is not None:
        return f"{err.strerror}: {os.fspath(err.filename)!r}"
    return _one_line(str(err) or type(err).__name__)


def _user_errors(*types) -> tuple:
    """``types`` and pyarrow's own exceptions when pyarrow is loaded."""
    pyarrow = sys.modules.get("pyarrow")
    return types + ((pyarrow.ArrowException,) if pyarrow is not None else ())


# what each command's user errors are (besides _UserError); anything else
# is a bug and keeps its traceback
# What each command's arguments can be refused with (the library names the
# argument in the message), besides OSError from the files.
_COMMANDS = {"demo": (_demo, (OSError, ValueError, ImportError)),
             "score": (_score, (OSError,)),
             "synth": (_synth, (OSError, ValueError)),
             "learn": (_learn, (ValueError,)),
             "warm": (_warm_kernels, (OSError,))}


def _stdout_gone() -> None:
    """stdout is a closed pipe (``fastcredit demo | head``): send what is
    left to /dev/null so that exiting does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _parser() -> argparse.ArgumentParser:
    from . import __version__
    intro, commands, demo_text = __doc__.split("\n\n", 2)
    parser = _Parser(prog="fastcredit", description=f"{intro} {commands}")
    parser.add_argument("--version", action="version", version=f"fastcredit {__version__}",
                        help="print fastcredit's version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="command",
                                help="what to do (fastcredit COMMAND --help tells more)")
    demo = sub.add_parser("demo", help="replay synthetic sponsored search and report credit",
                          description=demo_text)
    _add_option(demo, "--requests", REQUESTS, 1_000_000)
    _add_option(demo, "--seed", _params.SEED, 0)
    _add_option(demo, "--preset", _params.SEARCH_PRESET, "realistic")
    _add_option(demo, "--study-requests", STUDY_REQUESTS, STUDY_DEFAULT)
    _add_option(demo, "--resamples", _params.RESAMPLES, 10_000,
                "bootstrap replicates of the study's paired intervals")
    demo.add_argument("--out", default=None,
                      help="save the tables and credits to this .npz file (written "
                           "atomically; .npz is appended when missing)")
    demo.add_argument("--html", default=None,
                      help="also write the report with plots to this self-contained HTML "
                           "file (written atomically; needs matplotlib: "
                           "pip install 'fastcredit[report]')")
    _add_option(demo, "--threads", _params.THREADS, None)
    _add_quiet(demo)
    score = sub.add_parser("score", help="score a Parquet file or dataset of requests",
                           description="Score the requests of a Parquet file or dataset "
                                       "(see fastcredit.scoring) into Parquet.")
    score.add_argument("input", help="Parquet file, directory or glob of requests")
    score.add_argument("output", help="Parquet file to write, or a directory (existing, or "
                                      "ending with /) for one file per input file; written "
                                      "atomically, never over an input")
    _add_config_arguments(score)
    _add_option(score, "--on-error", _params.ON_ERROR, "stop")
    _add_option(score, "--batch-rows", BATCH_ROWS, 65_536)
    _add_option(score, "--threads", _params.THREADS, None)
    _add_quiet(score)
    synth = sub.add_parser("synth", help="write synthetic sponsored-search requests to Parquet",
                           description="Write synthetic sponsored-search requests "
                                       "(fastcredit.synthetic.sponsored_search) to one "
                                       "Parquet file in the candidates layout of "
                                       "fastcredit score.")
    synth.add_argument("output", help="Parquet file to write (atomically)")
    _add_option(synth, "--requests", REQUESTS, 1_000_000)
    _add_option(synth, "--m", _params.ACTIONS, M)
    _add_option(synth, "--k", CANDIDATES, K)
    _add_option(synth, "--seed", _params.SEED, 0)
    _add_option(synth, "--row-group", ROW_GROUP, 65_536)
    _add_option(synth, "--threads", _params.THREADS, None,
                "threads generating requests (default: all cores); the file is the same")
    _add_quiet(synth)
    warm = sub.add_parser("warm", help="compile and cache every Numba kernel ahead of time",
                          description="Compile every Numba kernel and cache it on disk, so no "
                                      "later process waits for the compiler; until then "
                                      "backend=None runs every kernel on the C backend.")
    _add_quiet(warm)
    _add_learn_parser(sub)
    return parser


def main(argv=None) -> int:
    """Run the command line; returns the exit status: 0, 2 for a user error
    (one line on stderr: ``fastcredit COMMAND: message``), 130 when
    interrupted, 141 when stdout is a closed pipe."""
    args = _parser().parse_args(argv)
    command, errors = _COMMANDS[args.command]
    try:
        status = command(args)
        sys.stdout.flush()   # a closed pipe shows here, not at exit
        return status
    except BrokenPipeError:
        _stdout_gone()
        return 141
    except KeyboardInterrupt:
        print(f"fastcredit {args.command}: interrupted", file=sys.stderr)
        return 130
    except (_UserError, OutputError) as err:
        print(f"fastcredit {args.command}: {_one_line(err)}", file=sys.stderr)
        return 2
    except _user_errors(*errors) as err:
        print(f"fastcredit {args.command}: {_message(err)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
