"""The study in the demo's report: every printed table is the library's
analysis of the demo's own tables (fastcredit.audit.study; the audit
reference is the median of the rerun table's noisy replays,
fastcredit.audit.repeats, recomputed here from its definition), and
``fastcredit demo --html`` writes a valid, self-contained HTML page naming
every table, atomically, or refuses in one line when matplotlib is missing."""
import html.parser
import io
import re
import sys

import numpy as np
import pytest

import fastcredit as fc
from fastcredit import _study_report, cli

N, SEED, RESAMPLES = 1500, 9, 300


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    pytest.importorskip("matplotlib")
    d = tmp_path_factory.mktemp("study")
    out, page = d / "t.npz", d / "report.html"
    text = io.StringIO()
    assert cli.run_demo(N, seed=SEED, out=str(out), threads=None, stream=text, progress=False,
                        resamples=RESAMPLES, study_requests=1000, html=str(page)) == 0
    return text.getvalue(), dict(np.load(out)), page.read_text(encoding="utf-8"), d


def cells(text, title):
    """The rows (lists of cells, split on 2+ spaces) of the table under
    ``title`` in the terminal report."""
    block = text.split(f"\n{title}\n", 1)[1].split("\n  (", 1)[0]
    return [re.split(r"\s{2,}", line.strip()) for line in block.splitlines()[1:]]


R, NOISE = fc._params.REPLAY_REPEATS_DEFAULT, fc._params.REPLAY_NOISE_DEFAULT


def reference(a):
    """y_audit from its definition: the coalition-wise median of the R noisy
    replays of the rerun tables (the study's seed, request b is row b)."""
    y = fc.synthetic.replay_repeats(a, repeats=R, noise=NOISE, seed=SEED)
    return np.median(y, axis=1), y


def test_terminal_tables_are_the_library_analyses(run):
    text, saved, _, _ = run
    t, a = saved["table_filter"][:1000], saved["table_rerun"][:1000]
    ref, y = reference(a)
    titles = dict(_study_report.SECTIONS)
    # the backends' agreement with each other, labelled as such
    cal = fc.calibration(t, a)
    rows = {r[0]: r[1:] for r in cells(text, titles["calibration"])}
    assert rows["I_ij > 0, complements (rerun)"][0] == \
        f"{100 * cal.interactions.positive_share:.1f} %"
    assert rows["backends' edge sign agreement, filter vs rerun (nonzero rerun edges)"][0] == \
        f"{cal.edges.rate:.4f} [{cal.edges.low:.4f}, {cal.edges.high:.4f}]"
    assert rows["backends' edge sign agreement, all edges"][0] == \
        f"{cal.edges.rate_all:.4f} (n={cal.edges.count_all:,})"
    assert rows["backends' pair sign agreement, nonzero in both"][0] == \
        f"{cal.pairs.rate:.4f} [{cal.pairs.low:.4f}, {cal.pairs.high:.4f}] (n={cal.pairs.count:,})"
    # the audit reference: split-half consistency and the noise scale of its repeats
    rows = {r[0]: r[1:] for r in cells(text, titles["replay"])}
    assert rows["repeats R, noise sd per replay"][0] == f"{R}, {NOISE:g}"
    c = fc.audit.split_half_consistency(y)
    for how in ("median", "mean"):
        assert rows[f"split-half Shapley sign consistency, {how} of {R // 2} repeats"][0] == \
            (f"{getattr(c, how):.4f} [{getattr(c, how + '_low'):.4f}, "
             f"{getattr(c, how + '_high'):.4f}]")
    ns = fc.audit.noise_scale(y)
    assert rows["sd of a median table's entry, 2 repeats (sd(1)/sqrt(2))"][0] == \
        f"{ns.sd[1]:.4f} ({ns.reference[1]:.4f})"
    for b, v in (("filter", t), ("rerun", a)):
        e = fc.edge_agreement(v, ref)
        assert rows[f"edge sign agreement, {b} vs replay (nonzero replay edges)"][0] == \
            f"{e.rate:.4f} [{e.low:.4f}, {e.high:.4f}]"
    size = fc.size_agreement(t, ref)
    for k, row in enumerate(cells(text, titles["table1"])):
        assert row == [str(k), f"{size.sign_nonzero[k]:.3f}", f"{size.median_spearman[k]:.3f}",
                       f"{size.top_rate[k]:.3f}", f"{size.median_cosine[k]:.3f}"]
    # Tables 2 and 6: each backend's rules against the replay's Shapley
    full = {r[0]: r[1:] for r in cells(text, titles["table6"])}
    got = {r[0]: r[1:] for r in cells(text, titles["table2"])}
    assert len(full) == len(got) == 2 * len(_study_report.RULE_LABELS)
    for b, v in (("filter", t), ("rerun", a)):
        rules = fc.rule_agreement(v, ref, resamples=RESAMPLES, seed=SEED)
        for rule in _study_report.RULE_LABELS:
            label = _study_report.rule_label(rule, b)
            al = rules.alignment[rule]
            assert full[label] == [f"{al.median_cosine:.4f}", f"{al.mean_sign:.3f}",
                                   f"{al.mean_sign_nonzero:.3f}", f"{al.median_spearman:.3f}",
                                   f"{al.top_rate:.3f}"]   # Sign_all printed
            assert got[label][:4] == [f"{al.median_cosine:.4f}", f"{al.mean_sign_nonzero:.3f}",
                                      f"{al.median_spearman:.3f}", f"{al.top_rate:.3f}"]
            if rule != "shapley":
                ci = rules.versus_shapley[rule]
                assert got[label][4] == f"{ci.estimate:+.4f} [{ci.low:+.4f}, {ci.high:+.4f}]"
    # Table 4: each backend's edges against the replay's
    edges = cells(text, titles["table4"])
    ef, er = fc.edge_agreement(t, ref), fc.edge_agreement(a, ref)
    for k in range(5):
        assert edges[k][:4] == [str(k), f"{ef.count_by_size[k]:,}"] + [
            f"{e.by_size[k]:.4f} [{e.by_size_low[k]:.4f}, {e.by_size_high[k]:.4f}]"
            for e in (ef, er)]
    # fidelity by the replay edge's magnitude
    mag = cells(text, titles["magnitude"])
    ff, fr = fc.audit.fidelity_by_magnitude(t, ref), fc.audit.fidelity_by_magnitude(a, ref)
    for j in range(4):
        assert mag[j][1:] == [f"{ff.count[j]:,}"] + [
            f"{f.rate[j]:.4f} [{f.low[j]:.4f}, {f.high[j]:.4f}]" for f in (ff, fr)]
    assert mag[4] == ["all", f"{ff.count.sum():,}", f"{ef.rate:.4f}", f"{er.rate:.4f}"]


def test_tables_7_and_8_are_the_library_analyses(run):
    text, saved, page, _ = run
    t, a = saved["table_filter"][:1000], saved["table_rerun"][:1000]
    titles = dict(_study_report.SECTIONS)
    # Table 7: the null of the first 1,200 study requests (all 1,000 here), 1,000 worlds
    null = fc.audit.correlated_error_null(t, a, worlds=1000, seed=SEED)
    rows = {r[0]: r[1:] for r in cells(text, titles["table7"])}
    assert len(rows) == len(fc.audit.null.NULL_STATISTICS)
    for name, (label, d) in _study_report.NULL_LABELS.items():
        x = null.statistics[name]
        assert rows[label] == [f"{x.observed:.{d}f}", f"{x.null_median:.{d}f} "
                               f"[{x.null_low:.{d}f}, {x.null_high:.{d}f}]",
                               f"{x.gap:+.{d}f}", f"{x.pvalue:.3g}"]
    # Table 8 from the definition: request r's filter Shapley, and that of
    # request perm[r], against r's rerun Shapley, on the requests whose
    # rerun Shapley varies
    perm = fc.derangement(1000, seed=SEED)
    credit, ref = fc.shapley(t), fc.shapley(a)
    c = credit - credit.mean(axis=1, keepdims=True)
    r = ref - ref.mean(axis=1, keepdims=True)
    varies = np.abs(r).max(axis=1) > 1e-9
    real = fc.alignment(credit, ref, atol=1e-9).top[varies]
    placebo = fc.alignment(credit[perm], ref, atol=1e-9).top[varies]
    cos_real, cos_placebo = ((c * r).sum(axis=1) > 0)[varies], ((c[perm] * r).sum(axis=1) > 0)[varies]
    rows = {r[0]: r[1:] for r in cells(text, titles["table8"])}
    for label, (x, y) in (("top action agrees", (real, placebo)),
                          ("centred cosine > 0", (cos_real, cos_placebo))):
        n10, n01 = int(np.sum(x & ~y)), int(np.sum(~x & y))
        cmp = fc.audit.paired_comparison(x, y)
        d = cmp.difference
        assert d.estimate == pytest.approx((n10 - n01) / varies.sum(), abs=1e-15)
        assert rows[label] == [f"{x.mean():.4f}", f"{y.mean():.4f}",
                               f"{d.estimate:+.4f} [{d.low:+.4f}, {d.high:+.4f}]",
                               f"{n10:,} / {n01:,}", f"{cmp.exact.pvalue:.3g}"]
    assert f"{varies.sum():,} requests whose rerun Shapley varies" in text.replace("\n   ", " ")


class _Structure(html.parser.HTMLParser):
    """Tags opened and closed (void elements excepted), headings, section
    ids, tables and images of a page."""

    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.headings, self.ids = [], [], [], []
        self.images, self.tables, self._heading = [], 0, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images.append(attrs.get("src", ""))
        if tag == "table":
            self.tables += 1
        if tag == "section":
            self.ids.append(attrs.get("id"))
        if tag in ("h1", "h2"):
            self._heading = ""
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()
        if tag in ("h1", "h2"):
            self.headings.append(self._heading)
            self._heading = None

    def handle_data(self, data):
        if self._heading is not None:
            self._heading += data


def test_html_report_is_valid_and_names_every_table(run):
    _, _, page, _ = run
    assert page.startswith("<!DOCTYPE html>\n")
    p = _Structure()
    p.feed(page)
    p.close()
    assert p.errors == [] and p.stack == []
    for anchor, title in _study_report.SECTIONS:
        assert title in p.headings and anchor in p.ids
    # every section's table and the throughput table (not preformatted text)
    assert "Throughput" in p.headings and p.tables == len(_study_report.SECTIONS) + 1
    assert "<pre>" not in page
    throughput = page.split('<section id="throughput">', 1)[1]
    assert "<th>stage</th><th>seconds</th><th>requests/s</th>" in throughput
    assert "<td>total (with this report)</td>" in throughput
    # the version that made it and when
    made = re.search(r"Made with fastcredit (\S+) on (\d{4}-\d\d-\d\d \d\d:\d\d) UTC", page)
    assert made and made.group(1) == fc.__version__
    assert f'<meta name="generator" content="fastcredit {fc.__version__}">' in page
    # self-contained: every image is an embedded PNG, nothing is fetched
    assert len(p.images) == 7 and all(s.startswith("data:image/png;base64,") for s in p.images)
    assert not re.search(r"""(src|href)=["'](https?:|//)""", page)
    import base64
    for src in p.images:
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_table4_plot_has_one_quantity_per_axis():
    """Sign agreement and the share of zero marginals are two panels, each
    with its own y label and its legend below the data."""
    plt = _study_report._matplotlib()
    v = fc.synthetic.sponsored_search(200, seed=SEED, preset="realistic")
    tables = {mode: fc.auction_replay(v, **fc.synthetic.search_preset("realistic").replay,
                                      mode=mode) for mode in ("filter", "rerun")}
    s = _study_report.compute_study(tables, resamples=50, null_requests=100, worlds=20)
    fig = _study_report.edge_figure(s, plt)
    try:
        fig.canvas.draw()
        axes = fig.axes
        assert len(axes) == 2
        assert [ax.get_ylabel() for ax in axes] == ["edge sign agreement",
                                                    "share of zero marginals"]
        for ax in axes:
            legend = ax.get_legend()
            box, frame = legend.get_window_extent(), ax.get_window_extent()
            assert box.y1 <= frame.y0             # below the panel, not over its data
    finally:
        plt.close(fig)


def test_html_written_atomically_and_never_over_an_input(run, capsys):
    _, _, _, d = run
    assert sorted(x.name for x in d.iterdir()) == ["report.html", "t.npz"]   # no temporaries
    same = d / "same.npz"
    assert cli.main(["demo", "--requests", "50", "--out", str(same), "--html", str(same),
                     "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "same file" in err and not same.exists()


def test_missing_matplotlib_is_one_line_before_any_work(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # import matplotlib fails
    page = tmp_path / "r.html"
    assert cli.main(["demo", "--requests", "50", "--html", str(page), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not page.exists() and list(tmp_path.iterdir()) == []
    lines = captured.err.splitlines()
    assert len(lines) == 1 and "matplotlib" in lines[0] and "fastcredit[report]" in lines[0]


def test_replay_options_reach_the_study(capsys):
    """--replay-repeats 1 --replay-noise 0: the reference is the rerun table
    itself (no split halves or noise scale to report), so rerun's Shapley
    agrees with it perfectly; a refused value is one line, exit status 2."""
    assert cli.main(["demo", "--requests", "300", "--study-requests", "300", "--resamples",
                     "50", "--replay-repeats", "1", "--replay-noise", "0", "--quiet"]) == 0
    text = capsys.readouterr().out
    titles = dict(_study_report.SECTIONS)
    rows = {r[0]: r[1:] for r in cells(text, titles["replay"])}
    assert rows["repeats R, noise sd per replay"][0] == "1, 0"
    assert not any(k.startswith(("split-half", "sd of")) for k in rows)
    got = {r[0]: r[1:] for r in cells(text, titles["table2"])}
    assert got[_study_report.rule_label("shapley", "rerun")][:4] == \
        ["1.0000", "1.000", "1.000", "1.000"]
    with pytest.raises(SystemExit) as exc:   # argparse's refusal
        cli.main(["demo", "--requests", "50", "--replay-noise", "-1", "--quiet"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "replay_noise" in err
