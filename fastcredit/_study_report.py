"""The set-intervention study as a report: the analyses of
fastcredit.audit.study on one landscape, with the paper's structure: the
repeat-aggregated replay (y_audit, the median over R noisy replays of the
rerun table, fastcredit.audit.repeats) is the audit reference, ``filter``
the training evaluator and ``rerun`` the sensitivity backend; Tables 1, 2,
4 and 6 compare the backends with the replay, the calibration section
reports the backends' agreement with each other, and Tables 7 and 8 compare
the two backends (filter against rerun). Printed for a terminal
(:func:`study_lines`) and written as a self-contained HTML page with
matplotlib plots (:func:`study_html`). Used by ``fastcredit demo``."""
from __future__ import annotations

import base64
import datetime
import html
import io
import textwrap
import time
from dataclasses import dataclass

import numpy as np

from . import __version__, _params
from .audit import null as null_mod, paired, repeats as repeats_mod, study
from .audit.agreement import alignment
from .audit.controls import derangement
from .tables import shapley

#: The paper's figures (1,171 production requests, m = 5) the report prints
#: next to this run's; docs/study.md cites them.
PAPER = {
    "negative_share": 0.644, "positive_share": 0.074, "zero_share": 0.282,
    "median_abs_nonzero": 3.10, "edge_rate": (0.6152, 0.6097, 0.6209), "pair_rate": 0.9697,
    # split-half sign self-consistency of the replay, median and mean aggregation
    "split_half": {"median": 0.7747, "mean": 0.7214},
    # Table 2: median centred cosine with the audit Shapley, filter evaluator
    "casi_cosine": 0.4237, "singleton_cosine": 0.3877,
    "casi_minus": {"singleton": (0.036, 0.004, 0.068), "banzhaf": (0.0437, None, None),
                   "leave_one_out": (0.1968, None, None)},
}
RULE_LABELS = {"singleton": "Singleton", "leave_one_out": "Leave-one-out",
               "banzhaf": "Banzhaf", "shapley": "Shapley (CASI)"}
#: The report's sections, in order: (anchor, title); the HTML report names
#: every one of them.
SECTIONS = (
    ("calibration", "Calibration: the landscape, and the backends' agreement with each other"),
    ("interactions", "Interaction distribution"),
    ("replay", "The audit reference: the median of repeated noisy replays"),
    ("table1", "Table 1: agreement by predecessor size |S| = k, training evaluator against "
               "the replay"),
    ("table2", "Table 2: credit rules under each backend against the replay's Shapley"),
    ("table6", "Table 6: the full metrics of the rules under each backend"),
    ("table4", "Table 4: insertion-edge sign agreement of each backend with the replay, by "
               "predecessor size"),
    ("magnitude", "Fidelity by edge magnitude: each backend against the replay"),
    ("table7", "Table 7: the additive correlated-error null (the backends)"),
    ("table8", "Table 8: the context-shuffle placebo (the backends)"),
)
#: What the replay-aggregated reference is called in the report.
REFERENCE = "replay"
#: Table 7's protocol, the paper's: 1,000 null worlds on about 1,200
#: requests (1,171 there); the null's cost grows with requests x worlds.
NULL_REQUESTS, NULL_WORLDS = 1200, 1000
#: Table 8's per-request binary outcomes: label -> Alignment attribute.
PLACEBO_OUTCOMES = {"top action agrees": "top", "centred cosine > 0": "cosine"}


@dataclass(frozen=True)
class Study:
    """Every analysis of one landscape: ``train`` / ``audit`` are the
    backend names (e.g. "filter", "rerun"); the audit reference is the
    median over ``repeats`` noisy replays (sd ``noise``) of the ``audit``
    backend's tables."""

    train: str
    audit: str
    n_requests: int
    repeats: int
    noise: float
    calibration: study.Calibration         # the backends' agreement with each other
    consistency: repeats_mod.SplitHalfConsistency   # of the replay's repeats
    noise_scale: repeats_mod.NoiseScale    # of the replay's repeats, median aggregation
    magnitude: dict                        # backend -> MagnitudeFidelity against the replay
    by_size: study.SizeAgreement           # train against the replay
    rules: dict                            # backend -> RuleAgreement against the replay
    edges: dict                            # backend -> EdgeAgreement against the replay
    null: null_mod.CorrelatedErrorNull     # Table 7, on the first null_requests requests
    placebo: dict                          # Table 8: outcome label -> PairedComparison
    placebo_requests: int                  # requests whose audit Shapley varies
    seconds: dict                          # "replay", "analyses", "Table 7", "Table 8" -> s

    @property
    def backends(self) -> tuple:
        return (self.train, self.audit)


def context_placebo(train, audit, *, seed=0, threads=None) -> tuple[dict, int]:
    """Table 8: each request's audit Shapley credit against the training
    evaluator's Shapley credit of its own request (the real context) and of
    request ``perm[r]``, ``perm = derangement(n, seed=seed)`` (another
    request's context), compared per request with
    :func:`fastcredit.audit.paired_comparison` on each outcome of
    :data:`PLACEBO_OUTCOMES`, over the requests whose audit Shapley varies
    (where both outcomes are defined). Returns (outcome -> PairedComparison,
    requests used)."""
    reference = shapley(audit, threads=threads)
    credit = shapley(train, threads=threads)
    perm = derangement(credit.shape[0], seed=seed)
    real = alignment(credit, reference, atol=1e-9, threads=threads)
    placebo = alignment(credit[perm], reference, atol=1e-9, threads=threads)
    defined = ~np.isnan(real.cosine)
    out = {}
    for label, field in PLACEBO_OUTCOMES.items():
        x, y = getattr(real, field)[defined], getattr(placebo, field)[defined]
        if field == "cosine":
            x, y = x > 0, y > 0
        out[label] = paired.paired_comparison(x, y)
    return out, int(np.count_nonzero(defined))


def compute_study(tables: dict, train: str = "filter", audit: str = "rerun", *,
                  repeats: int = _params.REPLAY_REPEATS_DEFAULT,
                  noise: float = _params.REPLAY_NOISE_DEFAULT,
                  resamples: int = 10_000, seed: int = 0, threads=None,
                  null_requests: int = NULL_REQUESTS, worlds: int = NULL_WORLDS) -> Study:
    """The study of ``tables[train]`` and ``tables[audit]`` (both (B, 2**m),
    row b request b) against the audit reference y_audit =
    ``fastcredit.audit.aggregate_repeats(fastcredit.synthetic.replay_repeats(
    tables[audit], repeats=repeats, noise=noise, seed=seed))`` (the median):
    the replay's split-half consistency and noise scale, each backend's
    fidelity by edge magnitude, Tables 1 (train), 2, 4 and 6 (each backend)
    against the replay, the backends' calibration against each other, the
    correlated-error null (Table 7) of the first ``null_requests`` with
    ``worlds`` worlds and the context placebo (Table 8) of all, both of
    train against audit; their seconds in ``Study.seconds``."""
    from .synthetic import replay_repeats
    repeats = _params.REPLAY_REPEATS.check(repeats, "repeats")
    noise = _params.REPLAY_NOISE.check(noise, "noise")
    t, a = tables[train], tables[audit]
    t0 = time.perf_counter()
    y = replay_repeats(a, repeats=repeats, noise=noise, seed=seed, threads=threads)
    ref = repeats_mod.aggregate_repeats(y)
    backends = {train: t, audit: a}
    replay = ((repeats_mod.split_half_consistency(y, threads=threads)
               if repeats >= 2 else None),
              repeats_mod.noise_scale(y) if repeats >= 2 else None,
              {b: repeats_mod.fidelity_by_magnitude(v, ref) for b, v in backends.items()})
    t1 = time.perf_counter()
    parts = (study.calibration(t, a, threads=threads), *replay,
             study.size_agreement(t, ref, threads=threads),
             {b: study.rule_agreement(v, ref, resamples=resamples, seed=seed, threads=threads)
              for b, v in backends.items()},
             {b: study.edge_agreement(v, ref) for b, v in backends.items()})
    t1b = time.perf_counter()
    null = null_mod.correlated_error_null(t[:null_requests], a[:null_requests], worlds=worlds,
                                          seed=seed, threads=threads)
    t2 = time.perf_counter()
    placebo, n_placebo = context_placebo(t, a, seed=seed, threads=threads)
    t3 = time.perf_counter()
    return Study(train, audit, t.shape[0], repeats, noise, *parts, null, placebo, n_placebo,
                 {"replay": t1 - t0, "analyses": t1b - t0, "Table 7": t2 - t1b,
                  "Table 8": t3 - t2})


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _ci(ci) -> str:
    return f"{ci.estimate:+.4f} [{ci.low:+.4f}, {ci.high:+.4f}]"


# --- the tables, as rows of cells (shared by the text and HTML layouts) --------

def _calibration_rows(s: Study):
    c = s.calibration
    i, e, p = c.interactions, c.edges, c.pairs
    paper_edge = PAPER["edge_rate"]
    return (["figure", "this run", "paper"], [
        [f"I_ij < 0, substitutes ({s.audit})", _pct(i.negative_share),
         _pct(PAPER["negative_share"])],
        [f"I_ij > 0, complements ({s.audit})", _pct(i.positive_share),
         _pct(PAPER["positive_share"])],
        [f"I_ij = 0 ({s.audit})", _pct(i.zero_share), _pct(PAPER["zero_share"])],
        [f"median |I_ij|, nonzero ({s.audit})", f"{i.median_abs_nonzero:.3g}",
         f"{PAPER['median_abs_nonzero']:.2f}"],
        [f"backends' edge sign agreement, {s.train} vs {s.audit} (nonzero {s.audit} edges)",
         f"{e.rate:.4f} [{e.low:.4f}, {e.high:.4f}]",
         f"{paper_edge[0]:.4f} [{paper_edge[1]:.4f}, {paper_edge[2]:.4f}]"],
        ["backends' edge sign agreement, all edges", f"{e.rate_all:.4f} (n={e.count_all:,})",
         "-"],
        ["backends' pair sign agreement, nonzero in both",
         f"{p.rate:.4f} [{p.low:.4f}, {p.high:.4f}] (n={p.count:,})",
         f"{PAPER['pair_rate']:.4f}"],
        ["backends' pair sign agreement, all pairs",
         f"{p.rate_all:.4f} (n={p.count_all:,})", "-"],
    ])


def _interaction_rows(s: Study):
    rows = []
    for name, d in ((s.audit, s.calibration.interactions),
                    (s.train, s.calibration.train_interactions)):
        rows.append([name, f"{_pct(d.negative_share)} ({d.negative:,})",
                     f"{_pct(d.positive_share)} ({d.positive:,})",
                     f"{_pct(d.zero_share)} ({d.zero:,})", f"{d.median_abs_nonzero:.3g}",
                     f"{d.median_abs:.3g}"])
    return (["evaluator", "negative", "positive", "zero", "median |I| nonzero",
             "median |I| all"], rows)


def _replay_rows(s: Study):
    c, ns = s.consistency, s.noise_scale
    rows = [["repeats R, noise sd per replay", f"{s.repeats}, {s.noise:g}", "-"]]
    if c is not None:
        paper = PAPER["split_half"]
        for how in ("median", "mean"):
            rate, lo, hi = (getattr(c, how), getattr(c, f"{how}_low"),
                            getattr(c, f"{how}_high"))
            rows.append([f"split-half Shapley sign consistency, {how} of {c.half} repeats",
                         f"{rate:.4f} [{lo:.4f}, {hi:.4f}]", f"{paper[how]:.4f}"])
    if ns is not None:
        for r, sd, ref in zip(ns.repeats, ns.sd, ns.reference):
            rows.append([f"sd of a median table's entry, {r} repeat{'s' if r > 1 else ''} "
                         f"(sd(1)/sqrt({r}))", f"{sd:.4f} ({ref:.4f})", "-"])
    for b in s.backends:
        rows.append([f"edge sign agreement, {b} vs {REFERENCE} (nonzero {REFERENCE} edges)",
                     f"{s.edges[b].rate:.4f} [{s.edges[b].low:.4f}, {s.edges[b].high:.4f}]",
                     "-"])
    return (["figure", "this run", "paper"], rows)


def _magnitude_rows(s: Study):
    f = [s.magnitude[b] for b in s.backends]
    e = f[0].bin_edges
    rows = [[f"[{e[j]:.3g}, {e[j + 1]:.3g}{']' if j == len(e) - 2 else ')'}", f"{f[0].count[j]:,}"]
            + [f"{x.rate[j]:.4f} [{x.low[j]:.4f}, {x.high[j]:.4f}]" for x in f]
            for j in range(len(e) - 1)]
    rows.append(["all", f"{f[0].count.sum():,}"] + [f"{x.overall:.4f}" for x in f])
    return ([f"|{REFERENCE} edge|", "edges"] + [f"{b} vs {REFERENCE}" for b in s.backends],
            rows)


def _size_rows(s: Study):
    b = s.by_size
    return (["k = |S|", "sign (nonzero targets)", "Spearman", "top action", "cosine"],
            [[str(k), f"{b.sign_nonzero[k]:.3f}", f"{b.median_spearman[k]:.3f}",
              f"{b.top_rate[k]:.3f}", f"{b.median_cosine[k]:.3f}"]
             for k in range(len(b.by_size))])


def rule_label(rule: str, backend: str) -> str:
    """A row of Tables 2 and 6: the rule and the backend it is computed on."""
    return f"{RULE_LABELS[rule]} ({backend})"


def _rule_rows(s: Study):
    rows = []
    for b in s.backends:
        r = s.rules[b]
        for rule in r.rules:
            al = r.alignment[rule]
            vs = r.versus_shapley.get(rule)
            rows.append([rule_label(rule, b), f"{al.median_cosine:.4f}",
                         f"{al.mean_sign_nonzero:.3f}", f"{al.median_spearman:.3f}",
                         f"{al.top_rate:.3f}", _ci(vs) if vs is not None else "-"])
    return (["rule (backend)", "cosine", "sign", "Spearman", "top action",
             "CASI - rule [95 % CI]"], rows)


def _full_rows(s: Study):
    """Table 6: every metric of every rule under each backend, Sign_all (all
    m components) beside the sign agreement on the nonzero targets."""
    return (["rule (backend)", "cosine", "Sign_all", "Sign_nonzero", "Spearman", "top action"],
            [[rule_label(rule, b), f"{al.median_cosine:.4f}", f"{al.mean_sign:.3f}",
              f"{al.mean_sign_nonzero:.3f}", f"{al.median_spearman:.3f}", f"{al.top_rate:.3f}"]
             for b in s.backends
             for rule, al in ((rule, s.rules[b].alignment[rule]) for rule in s.rules[b].rules)])


def _edge_rows(s: Study):
    e = [s.edges[b] for b in s.backends]

    def signs(x):
        return " / ".join(f"{v:.2f}" for v in x)

    def ci(x, k):
        return f"{x.by_size[k]:.4f} [{x.by_size_low[k]:.4f}, {x.by_size_high[k]:.4f}]"

    return (["k = |S|", "edges"] + [f"{b} vs {REFERENCE}" for b in s.backends]
            + [f"{b} - / 0 / +" for b in s.backends] + [f"{REFERENCE} - / 0 / +"],
            [[str(k), f"{e[0].count_by_size[k]:,}"] + [ci(x, k) for x in e]
             + [signs(x.train_signs[k]) for x in e] + [signs(e[0].audit_signs[k])]
             for k in range(len(e[0].by_size))] +
            [["all", f"{e[0].count:,}"] + [f"{x.rate:.4f} [{x.low:.4f}, {x.high:.4f}]"
                                           for x in e] + [""] * (len(e) + 1)])


#: Table 7's statistics: name -> (label, decimals).
NULL_LABELS = {"edge_agreement": ("edge sign agreement (nonzero audit edges)", 4),
               "pair_agreement": ("pair sign agreement (nonzero in both)", 4),
               "median_cosine": ("median Shapley cosine", 4),
               "strength_vs_edge_disagreement": ("Spearman(strength, edge disagreement)", 3),
               "strength_vs_cosine_gap": ("Spearman(strength, 1 - cosine)", 3)}


def _null_rows(s: Study):
    rows = []
    for name, (label, d) in NULL_LABELS.items():
        x = s.null.statistics[name]
        rows.append([label, f"{x.observed:.{d}f}",
                     f"{x.null_median:.{d}f} [{x.null_low:.{d}f}, {x.null_high:.{d}f}]",
                     f"{x.gap:+.{d}f}", f"{x.pvalue:.3g}"])
    return (["statistic", "observed", "null median [95 % interval]", "gap", "p"], rows)


def _placebo_rows(s: Study):
    rows = []
    for label, c in s.placebo.items():
        d = c.difference
        rows.append([label, f"{c.first_rate:.4f}", f"{c.second_rate:.4f}",
                     f"{d.estimate:+.4f} [{d.low:+.4f}, {d.high:+.4f}]",
                     f"{c.table[0, 1]:,} / {c.table[1, 0]:,}", f"{c.exact.pvalue:.3g}"])
    return (["outcome", "real context", "deranged", "difference [95 % paired CI]",
             "n10 / n01", "McNemar p"], rows)


def _tables(s: Study) -> dict:
    """anchor -> (header, rows, note)."""
    ref = (f"the {REFERENCE} (y_audit: the coalition-wise median of {s.repeats} noisy "
           f"replays of the {s.audit} table, noise sd {s.noise:g})")
    return {
        "calibration": (*_calibration_rows(s),
                        f"{s.n_requests:,} requests; the paper: 1,171 production requests, "
                        f"m = 5. The agreement rows compare the two backends with each other "
                        f"({s.train} against {s.audit}, noise-free), not with the replay. "
                        f"Bands and choices: docs/study.md."),
        "replay": (*_replay_rows(s),
                   f"The audit reference is {ref}. Split-half: the first and the next "
                   f"floor(R/2) repeats aggregated apart, the signs of their Shapley credits "
                   f"compared over the players nonzero in either half (request-clustered "
                   f"95 % intervals). Noise scale: sd of one entry from two disjoint sets of "
                   f"r repeats. The replay noise is Gaussian, so the mean, not the median, "
                   f"is its efficient aggregate (the paper's median gain needs heavier "
                   f"tails), and the replay has no exact zeros: every edge is nonzero, and "
                   f"a backend's exact zeros count as disagreements."),
        "interactions": (*_interaction_rows(s),
                         f"I_ij = v(ij) - v(i) - v(j) + v(0), i < j; |I| <= 1e-9 is 0. The "
                         f"{s.train} evaluator has no complements by construction (its "
                         f"filtered top-N of a union is inside the two own top-N's)."),
        "table1": (*_size_rows(s),
                   f"{s.train}'s size-resolved marginals (mean over |S| = k of "
                   f"v(S+i) - v(S)) against the {REFERENCE}'s at the same k; per request, "
                   f"centred; sign over the nonzero targets (mean), Spearman and cosine "
                   f"(median), top action (rate)."),
        "table2": (*_rule_rows(s),
                   f"Rules computed on each backend's tables, reference Shapley on {ref}; "
                   f"CASI - rule: median cosine difference, request-level paired "
                   f"bootstrap. Paper ({s.train}): CASI 0.4237 vs Singleton 0.3877, +0.036 "
                   f"[0.004, 0.068]; Banzhaf +0.0437; LOO +0.1968; {s.audit}: CASI 0.6011 "
                   f"vs Singleton 0.6029."),
        "table6": (*_full_rows(s),
                   f"Rules computed on each backend's tables against the {REFERENCE} "
                   f"Shapley, per request and centred: median cosine and Spearman; "
                   f"Sign_all the "
                   f"mean share of the m components whose signs agree, Sign_nonzero over "
                   f"the nonzero reference components; top action the rate."),
        "table4": (*_edge_rows(s),
                   f"Sign (-, 0, +) of v(S+i) - v(S) under each backend and the "
                   f"{REFERENCE}, by |S| = k, over the edges whose {REFERENCE} marginal is "
                   f"nonzero (the paper's denominator; 'edges' counts them); "
                   f"request-clustered 95 % intervals; the shares of each sign over all "
                   f"edges. The backends against each other: the calibration section."),
        "magnitude": (*_magnitude_rows(s),
                      f"Table 4's counted edges split by the {REFERENCE} edge's |v(S+i) - "
                      f"v(S)| at its quartiles; agreement and request-clustered 95 % "
                      f"intervals per bin. Edges the {REFERENCE} barely moves are "
                      f"decided by its noise."),
        "table7": (*_null_rows(s),
                   f"The first {s.null.n_requests + s.null.n_excluded:,} requests "
                   f"({s.null.n_requests:,} with a varying {s.audit} table), "
                   f"{s.null.worlds.shape[0]:,} null worlds: each request's {s.train} table "
                   f"replaced by its {s.audit} table plus another request's normalised "
                   f"residual ({s.train} - {s.audit}) / sd({s.audit}), transferred whole. "
                   f"Observed outside the null interval: the {s.train} evaluator's error "
                   f"is not an additive error blind to the request. p: two-sided "
                   f"Monte-Carlo."),
        "table8": (*_placebo_rows(s),
                   f"{s.placebo_requests:,} requests whose {s.audit} Shapley varies: the "
                   f"{s.train} Shapley of the request itself against that of another "
                   f"request (a derangement of contexts across requests), both scored "
                   f"against the request's {s.audit} Shapley. Paired: Tango's score "
                   f"interval and McNemar's exact test. Synthetic rewrites are "
                   f"exchangeable across requests, so the placebo falls to chance."),
    }


# --- terminal --------------------------------------------------------------------

def text_table(header, rows) -> list[str]:
    widths = [max(len(str(r[j])) for r in [header, *rows]) for j in range(len(header))]
    def line(cells):
        first = f"{cells[0]:<{widths[0]}}"
        return "  " + "  ".join([first] + [f"{c:>{w}}" for c, w in zip(cells[1:], widths[1:])])
    return [line(header)] + [line(r) for r in rows]


def study_lines(s: Study) -> list[str]:
    """The report for a terminal: every section, a table and a note each."""
    out = textwrap.wrap(f"The set-intervention study on {s.n_requests:,} requests: credit "
                        f"rules under the training evaluator ({s.train}) and the sensitivity "
                        f"backend ({s.audit}), audit reference the {REFERENCE} (the median of "
                        f"{s.repeats} noisy replays of the {s.audit} table, noise sd "
                        f"{s.noise:g})", width=98)
    tables = _tables(s)
    for anchor, title in SECTIONS:
        header, rows, note = tables[anchor]
        out += (["", title] + text_table(header, rows)
                + textwrap.wrap(f"({note})", width=96, initial_indent="  ",
                                subsequent_indent="   "))
    return out


# --- HTML ------------------------------------------------------------------------

def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise ImportError("the HTML report needs matplotlib: pip install "
                          "'fastcredit[report]'") from None
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    return plt


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _figures(s: Study, plt) -> dict:
    """anchor -> base64 PNG of the section's plot."""
    figs = {}
    c = s.calibration
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    both = [d.values[d.values != 0] for d in (c.interactions, c.train_interactions)]
    lim = max((np.quantile(np.abs(x), 0.99) for x in both if x.size), default=1.0)
    bins = np.linspace(-lim, lim, 81)
    for name, d, x, color in ((s.audit, c.interactions, both[0], "tab:blue"),
                              (s.train, c.train_interactions, both[1], "tab:orange")):
        if x.size:
            ax.hist(np.clip(x, -lim, lim), bins=bins, alpha=0.55, color=color,
                    label=f"{name} (nonzero; {_pct(d.zero_share)} exactly 0)")
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("pair interaction I_ij (clipped at the 99th percentile of |I|)")
    ax.set_ylabel("pairs")
    ax.legend(fontsize=8)
    figs["interactions"] = _png(fig)
    plt.close(fig)

    if s.noise_scale is not None:
        ns = s.noise_scale
        fig, ax = plt.subplots(figsize=(6.4, 3.4))
        ax.plot(ns.repeats, ns.sd, marker="o", label="median of r repeats (measured)")
        ax.plot(ns.repeats, ns.reference, ls="--", color="gray", label="sd(1) / sqrt(r)")
        ax.set_xticks(ns.repeats)
        ax.set_xlabel("repeats aggregated r")
        ax.set_ylabel("sd of a table entry")
        ax.legend(fontsize=8)
        figs["replay"] = _png(fig)
        plt.close(fig)

    m = len(s.by_size.by_size)
    k = np.arange(m)
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for label, y in (("sign (nonzero targets)", s.by_size.sign_nonzero),
                     ("Spearman", s.by_size.median_spearman),
                     ("top action", s.by_size.top_rate), ("cosine", s.by_size.median_cosine)):
        ax.plot(k, y, marker="o", label=label)
    ax.set_xticks(k)
    ax.set_xlabel("predecessor size k = |S|")
    ax.set_ylabel("agreement")
    ax.legend(fontsize=8)
    figs["table1"] = _png(fig)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7.4, 3.4))
    data, labels = [], []
    for b in s.backends:
        r = s.rules[b]
        for rule in r.rules:
            data.append(r.alignment[rule].cosine[~np.isnan(r.alignment[rule].cosine)])
            labels.append(rule_label(rule, b).replace(" (", "\n("))
    ax.boxplot(data, showfliers=False)
    ax.set_xticks(np.arange(1, len(data) + 1), labels, fontsize=7)
    ax.set_ylabel(f"centred cosine with the {REFERENCE} Shapley")
    figs["table2"] = _png(fig)
    plt.close(fig)

    figs["table4"] = _png(edge_figure(s, plt))
    plt.close("all")

    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for b in s.backends:
        f = s.magnitude[b]
        x = np.arange(f.rate.size)
        ax.errorbar(x, f.rate, yerr=[f.rate - f.low, f.high - f.rate], marker="o", capsize=3,
                    label=f"{b} vs {REFERENCE}")
    e = s.magnitude[s.train].bin_edges
    ax.set_xticks(np.arange(e.size - 1), [f"{e[j]:.2g}-{e[j + 1]:.2g}"
                                          for j in range(e.size - 1)])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(f"|{REFERENCE} edge| (quartile bins)")
    ax.set_ylabel("edge sign agreement")
    ax.legend(fontsize=8)
    figs["magnitude"] = _png(fig)
    plt.close(fig)

    x = s.null.statistics["edge_agreement"]
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.hist(s.null.worlds[:, 0], bins=40, color="tab:gray", label="null worlds")
    ax.axvline(x.observed, color="tab:red", label=f"observed ({x.observed:.3f})")
    ax.set_xlabel("edge sign agreement (nonzero audit edges)")
    ax.set_ylabel("worlds")
    ax.legend(fontsize=8)
    figs["table7"] = _png(fig)
    plt.close(fig)
    return figs


def edge_figure(s: Study, plt):
    """Table 4's plot, one quantity per panel: each backend's edge sign
    agreement with the replay by predecessor size (left), and the share of
    each backend's marginals that are exactly zero (right); the legends sit
    below the panels, clear of the data."""
    k = np.arange(len(s.by_size.by_size))
    fig, (agree, zeros) = plt.subplots(1, 2, figsize=(9.6, 3.6), sharex=True)
    for b in s.backends:
        e = s.edges[b]
        agree.errorbar(k, e.by_size, yerr=[e.by_size - e.by_size_low,
                                           e.by_size_high - e.by_size],
                       marker="o", capsize=3, label=f"{b} vs {REFERENCE}")
        zeros.plot(k, e.train_signs[:, 1], marker="o", label=b)
    agree.axhline(PAPER["edge_rate"][0], color="gray", ls="--", lw=0.8,
                  label="paper, nonzero replay edges (0.6152)")
    agree.set_ylabel("edge sign agreement")
    zeros.set_ylabel("share of zero marginals")
    for ax in (agree, zeros):
        ax.set_xticks(k)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("predecessor size k = |S|")
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
                  frameon=False)
    fig.tight_layout()
    return fig


def _html_table(header, rows) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_STYLE = ("body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;"
          "color:#222}table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;"
          "padding:.25em .6em;text-align:right}th:first-child,td:first-child{text-align:left}"
          "th{background:#f3f3f3}p.note{color:#555;font-size:.9em}img{max-width:100%}")


def study_html(s: Study, *, title: str, preamble: list[str] = (),
               throughput: tuple | None = None, when: datetime.datetime | None = None) -> str:
    """A self-contained HTML page: the fastcredit version and the time it
    was made (``when``, default now, in UTC), every section's table, its note
    and a plot (PNG embedded as a data URI); ``preamble`` lines introduce the
    run, ``throughput`` (header, rows) is a last table. Raises ImportError
    with a one-line message when matplotlib is missing."""
    plt = _matplotlib()
    figs = _figures(s, plt)
    tables = _tables(s)
    when = datetime.datetime.now(datetime.timezone.utc) if when is None else when
    made = (f"Made with fastcredit {__version__} on "
            f"{when.astimezone(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.")
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             f'<meta name="generator" content="fastcredit {html.escape(__version__)}">',
             f"<title>{html.escape(title)}</title>", f"<style>{_STYLE}</style>", "</head>",
             "<body>", f"<h1>{html.escape(title)}</h1>",
             f'<p class="note">{html.escape(made)}</p>']
    parts += [f"<p>{html.escape(line)}</p>" for line in preamble]
    parts.append("<nav><ul>" + "".join(f'<li><a href="#{a}">{html.escape(t)}</a></li>'
                                       for a, t in SECTIONS) + "</ul></nav>")
    for anchor, heading in SECTIONS:
        header, rows, note = tables[anchor]
        parts += [f'<section id="{anchor}">', f"<h2>{html.escape(heading)}</h2>",
                  _html_table(header, rows), f'<p class="note">{html.escape(note)}</p>']
        if anchor in figs:
            parts.append(f'<img alt="{html.escape(heading)}" '
                         f'src="data:image/png;base64,{figs[anchor]}">')
        parts.append("</section>")
    if throughput is not None:
        parts += ['<section id="throughput">', "<h2>Throughput</h2>",
                  _html_table(*throughput), "</section>"]
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"
