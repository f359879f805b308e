"""fastcredit demo: synthetic sponsored search replayed in both evaluator
modes, every credit rule, and the set-intervention study's report."""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from .. import _params, synthetic
from .._constants import SYNTHETIC_MAX_INDEX
from .._output import OutputError, check_output, write_file
from .._params import Integer
from .._progress import Stage
from .._validation import check_memory, check_path
from .common import OUTPUTS, REQUESTS, _add_option, _add_quiet

M, K = 5, 20  # query rewrites per request and candidate ads per rewrite of the demo
RULES = _params.RULE.values
MODES = _params.MODE.values
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
    from . import CHUNK     # fastcredit.cli.CHUNK as it is now
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
                    resamples=10_000, replay_repeats=_params.REPLAY_REPEATS_DEFAULT,
                    replay_noise=_params.REPLAY_NOISE_DEFAULT) -> tuple:
    """The demo's arguments checked, and refused when the tables and
    credits of n_requests requests cannot fit in memory."""
    from ..audit.bootstrap import check_resamples
    n_requests = REQUESTS.check(n_requests, "n_requests")
    seed = _params.SEED.check(seed)
    preset = _params.SEARCH_PRESET.check(preset)
    study_requests = STUDY_REQUESTS.check(study_requests)
    resamples = check_resamples(resamples)
    replay_repeats = _params.REPLAY_REPEATS.check(replay_repeats)
    replay_noise = _params.REPLAY_NOISE.check(replay_noise)
    # per request and mode: a table, 4 credit rules (M each) and M x M pairs
    per_request = len(MODES) * ((1 << M) + len(RULES) * M + M * M) * 8
    check_memory(n_requests * per_request, f"n_requests = {n_requests:,} (the tables and "
                                           f"credits of the demo)")
    check_memory(min(n_requests, study_requests) * 8 * (replay_repeats + 2) << M,
                 f"replay_repeats = {replay_repeats:,} (the study's noisy replays)")
    return n_requests, seed, preset, study_requests, resamples, replay_repeats, replay_noise


def compute_demo(n_requests: int, seed: int, threads=None, progress=None, *,
                 preset: str = "realistic", study_requests: int = STUDY_DEFAULT,
                 resamples: int = 10_000, replay_repeats: int = _params.REPLAY_REPEATS_DEFAULT,
                 replay_noise: float = _params.REPLAY_NOISE_DEFAULT) -> DemoResult:
    """Replay ``n_requests`` synthetic requests of ``preset`` in both modes,
    compute every credit rule, the interaction shares of all requests and
    the set-intervention study (fastcredit.audit.study, training evaluator
    filter, sensitivity backend rerun, audit reference the median of
    ``replay_repeats`` noisy replays of the rerun table with noise sd
    ``replay_noise``, seeded by ``seed``) of the first ``study_requests``
    with its robustness tables (Table 7's null on the first 1,200 of them,
    1,000 worlds; Table 8's placebo on all of them); progress bars go to
    ``progress`` (none when it is None)."""
    from .._study_report import compute_study
    n_requests, seed, preset, study_requests, resamples, replay_repeats, replay_noise = \
        _demo_arguments(n_requests, seed, preset, study_requests, resamples, replay_repeats,
                        replay_noise)
    started = time.perf_counter()
    tables, instances, times = _replay(n_requests, seed, preset, threads, progress)
    credit, interactions = _credit(tables, times, threads, progress)
    n_study = min(study_requests, n_requests)
    t0 = time.perf_counter()
    with Stage("study analyses", 1, progress) as stage:
        study = compute_study({mode: tables[mode][:n_study] for mode in MODES}, "filter",
                              "rerun", repeats=replay_repeats, noise=replay_noise,
                              resamples=resamples, seed=seed, threads=threads)
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


def _throughput_table(result: DemoResult) -> tuple[list, list]:
    """The Throughput section as (header, rows), for the terminal and the
    HTML report alike: each stage's seconds and requests per second, the
    study's parts, and the total so far."""
    n = result.n_requests
    rows = []
    for name, sec in result.times.items():
        count = result.study.n_requests if name.startswith("study") else n
        rows.append([name, f"{sec:.2f}", f"{count / sec:,.0f}" if sec > 0 else "-"])
        if name.startswith("study"):   # what the robustness tables add, on their own
            for part, label in (("replay", "of which the replay"),
                                ("Table 7", "of which Table 7 (null)"),
                                ("Table 8", "of which Table 8 (placebo)")):
                rows.append([f"  {label}", f"{result.study.seconds[part]:.2f}", "-"])
    rows.append(["total (with this report)", f"{time.perf_counter() - result.started:.2f}", ""])
    return ["stage", "seconds", "requests/s"], rows


def report_demo(result: DemoResult, stream=None) -> None:
    """Print the results of :func:`compute_demo` (all but the header line) to
    ``stream`` (stdout)."""
    from .._study_report import study_lines, text_table
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
    for line in text_table(*_throughput_table(result)):
        say(line.rstrip())


def _npz_path(out) -> str:
    """``out`` with the suffix numpy.savez would give it (".npz" appended
    when missing)."""
    out = os.fspath(out)
    return out if out.endswith(".npz") else out + ".npz"


def run_demo(n_requests: int, seed: int, out, threads, stream=None, progress=None, *,
             preset: str = "realistic", study_requests: int = STUDY_DEFAULT,
             resamples: int = 10_000, html=None,
             replay_repeats: int = _params.REPLAY_REPEATS_DEFAULT,
             replay_noise: float = _params.REPLAY_NOISE_DEFAULT) -> int:
    """Run the demo on ``n_requests`` requests, print the report to
    ``stream`` (stdout) and progress to ``progress`` (stderr; False: none);
    save the tables and credits to the .npz file ``out`` (".npz" appended
    when missing, as numpy.savez does) unless it is None, and the report
    with plots to the HTML file ``html`` unless it is None (matplotlib
    needed: ImportError otherwise, before any work). Outputs are checked
    before the computation (:class:`fastcredit._output.OutputError`) and
    written atomically, before the report."""
    n_requests, seed, preset, study_requests, resamples, replay_repeats, replay_noise = \
        _demo_arguments(n_requests, seed, preset, study_requests, resamples, replay_repeats,
                        replay_noise)
    stream = sys.stdout if stream is None else stream
    progress = sys.stderr if progress is None else (progress or None)
    if out is not None:
        out = _npz_path(check_path(out, "out"))
        check_output(out)
    if html is not None:
        from .._study_report import _matplotlib
        html = os.fspath(check_path(html, "html"))
        check_output(html)
        if out is not None and os.path.abspath(html) == os.path.abspath(out):
            raise OutputError(f"html and out are the same file: {html!r}")
        _matplotlib()
    header = demo_header(n_requests, seed, preset)
    print(header, file=stream)
    result = compute_demo(n_requests, seed, threads, progress, preset=preset,
                          study_requests=study_requests, resamples=resamples,
                          replay_repeats=replay_repeats, replay_noise=replay_noise)
    if out is not None:   # saved before the report, which a closed pipe may cut short
        arrays = result.arrays()
        write_file(out, lambda f: np.savez(f, **arrays))
    if html is not None:
        from .._study_report import study_html
        page = study_html(result.study, title="fastcredit demo: the set-intervention study",
                          preamble=[header, f"{result.instances:,} candidate instances; the "
                                            f"study uses the first "
                                            f"{result.study.n_requests:,} requests."],
                          throughput=_throughput_table(result))
        write_file(html, lambda f: f.write(page.encode("utf-8")))
    report_demo(result, stream)
    if out is not None:
        print(f"\nsaved tables and credits to {out}", file=stream)
    if html is not None:
        print(f"wrote the HTML report to {html}", file=stream)
    return 0


def add_parser(sub, description: str) -> None:
    """The demo's options; ``description``: its --help text."""
    demo = sub.add_parser("demo", help="replay synthetic sponsored search and report credit",
                          description=description, epilog=OUTPUTS)
    _add_option(demo, "--requests", REQUESTS, 1_000_000)
    _add_option(demo, "--seed", _params.SEED, 0)
    _add_option(demo, "--preset", _params.SEARCH_PRESET, "realistic")
    _add_option(demo, "--study-requests", STUDY_REQUESTS, STUDY_DEFAULT)
    _add_option(demo, "--resamples", _params.RESAMPLES, 10_000,
                "bootstrap replicates of the study's paired intervals")
    _add_option(demo, "--replay-repeats", _params.REPLAY_REPEATS,
                _params.REPLAY_REPEATS_DEFAULT)
    _add_option(demo, "--replay-noise", _params.REPLAY_NOISE, _params.REPLAY_NOISE_DEFAULT)
    demo.add_argument("--out", default=None,
                      help="save the tables and credits to this .npz file (written "
                           "atomically; .npz is appended when missing)")
    demo.add_argument("--html", default=None,
                      help="also write the report with plots to this self-contained HTML "
                           "file (written atomically; needs matplotlib: "
                           "pip install 'fastcredit[report]')")
    _add_option(demo, "--threads", _params.THREADS, None)
    _add_quiet(demo)


def run(args) -> int:
    return run_demo(args.requests, args.seed, args.out, args.threads,
                    progress=False if args.quiet else None, preset=args.preset,
                    study_requests=args.study_requests, resamples=args.resamples,
                    html=args.html, replay_repeats=args.replay_repeats,
                    replay_noise=args.replay_noise)


#: What the demo's arguments can be refused with, besides OSError of its files.
ERRORS = (OSError, ValueError, ImportError)
