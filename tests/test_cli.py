"""The fastcredit command line (the demo) on a small run: the saved tables
and credits against the oracles of tests/reference.py, and every printed
figure against an independent computation from the definitions (the study's
tables: tests/test_study_demo.py)."""
import argparse
import io
import re

import numpy as np
import pytest

import fastcredit as fc
from fastcredit import _progress, cli
import reference as ref

N_REQUESTS, SEED = 3000, 4
# The demo generates and replays in chunks of cli.CHUNK requests; a small,
# uneven chunk makes the run cross chunk boundaries.
CHUNK = 1100
PRESET = "realistic"
REPLAY = fc.synthetic.search_preset(PRESET).replay


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "demo.npz"
    text, bars = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli, "CHUNK", CHUNK)
        assert cli.run_demo(N_REQUESTS, seed=SEED, out=str(out), threads=None, stream=text,
                            progress=bars, resamples=500) == 0
    return text.getvalue(), dict(np.load(out))


@pytest.fixture(scope="module")
def pools():
    return fc.synthetic.sponsored_search(N_REQUESTS, m=cli.M, k=cli.K, seed=SEED,
                                         preset=PRESET)


def number(text):
    return float(text.replace(",", ""))


def oracle_requests():
    """Every 10th request and both sides of each chunk boundary."""
    edges = [b + d for b in range(0, N_REQUESTS, CHUNK) for d in (-1, 0) if 0 <= b + d]
    return sorted(set(range(0, N_REQUESTS, 10)) | set(edges) | {N_REQUESTS - 1})


def test_saved_tables_match_the_auction_oracle(demo_run, pools):
    _, saved = demo_run
    for r in oracle_requests():
        actions = ref.auction_actions(pools.offsets, pools.ad_id, pools.score, pools.value,
                                      pools.prerank, cli.M, r)
        for mode in cli.MODES:
            y, _ = ref.auction_request(actions, mode=mode, **REPLAY)
            np.testing.assert_allclose(saved[f"table_{mode}"][r], y, rtol=1e-12, atol=1e-12,
                                       err_msg=f"request {r} ({mode})")
    for mode in cli.MODES:
        t = saved[f"table_{mode}"]
        assert t.shape == (N_REQUESTS, 1 << cli.M)
        assert (t[:, 0] == 0).all() and (t >= 0).all() and np.isfinite(t).all()
    # filter mode, earnings >= 0: every winner of a pair's filtered list is
    # among the first SLOTS of one of the two, so y({i, j}) <= y({i}) + y({j})
    t = saved["table_filter"]
    for i in range(cli.M):
        for j in range(i + 1, cli.M):
            assert (t[:, 1 << i | 1 << j] <= t[:, 1 << i] + t[:, 1 << j] + 1e-9).all()


def test_saved_credits_match_the_definitions(demo_run):
    _, saved = demo_run
    m = cli.M
    full = (1 << m) - 1
    for mode in cli.MODES:
        t = saved[f"table_{mode}"]
        for rule, weights in (("shapley", fc.shapley_weights(m)),
                              ("banzhaf", fc.banzhaf_weights(m))):
            np.testing.assert_allclose(saved[f"{rule}_{mode}"],
                                       t @ ref.semivalue_matrix(m, weights),
                                       rtol=1e-12, atol=1e-12, err_msg=f"{rule} {mode}")
        np.testing.assert_array_equal(saved[f"singleton_{mode}"],
                                      t[:, [1 << i for i in range(m)]] - t[:, :1])
        np.testing.assert_array_equal(saved[f"leave_one_out_{mode}"],
                                      t[:, full:] - t[:, [full ^ 1 << i for i in range(m)]])
        # efficiency: Shapley credit adds up to v(N) - v(0)
        np.testing.assert_allclose(saved[f"shapley_{mode}"].sum(1), t[:, full] - t[:, 0],
                                   rtol=1e-12, atol=1e-12)
        for r in (0, 1234, N_REQUESTS - 1):
            np.testing.assert_allclose(saved[f"shapley_{mode}"][r], ref.shapley(t[r]),
                                       rtol=1e-12, atol=1e-12)
    assert sorted(saved) == sorted([f"table_{mode}" for mode in cli.MODES]
                                   + [f"{rule}_{mode}" for rule in cli.RULES
                                      for mode in cli.MODES])


def pair_interactions_by_hand(t, m):
    """I_ij = v(ij) - v(i) - v(j) + v(0) for i < j, (n_requests, pairs)."""
    return np.stack([t[:, 1 << i | 1 << j] - t[:, 1 << i] - t[:, 1 << j] + t[:, 0]
                     for i in range(m) for j in range(i + 1, m)], axis=1)


def test_report_figures_match_independent_computations(demo_run, pools):
    text, saved = demo_run
    n, m = N_REQUESTS, cli.M
    assert text.startswith(f"fastcredit demo: 3,000 synthetic sponsored-search requests "
                           f"(preset realistic), m = 5 rewrites x k = 20 candidate ads, "
                           f"top-4 GSP auction, reserve {REPLAY['reserve']:g}, seed {SEED}\n")
    inst = re.search(r"\n([\d,]+) candidate instances \(([\d.]+) per request\); tables of "
                     r"(\d+) coalitions per request", text)
    assert number(inst.group(1)) == pools.ad_id.size == pools.offsets[-1]
    assert inst.group(2) == f"{pools.ad_id.size / n:.1f}" and inst.group(3) == "32"
    assert f"{n * m * (m - 1) // 2:,} pairs per mode" in text
    for mode in cli.MODES:
        t = saved[f"table_{mode}"]
        inter = pair_interactions_by_hand(t, m)
        neg, pos = inter < -1e-9, inter > 1e-9
        row = re.search(rf"  {mode}:\n    negative \(substitutes\) ([\d.]+) % \(([\d,]+)\), "
                        rf"positive \(complements\) ([\d.]+) % \(([\d,]+)\), zero ([\d.]+) %\n"
                        rf"    median \|I_ij\|: (\S+) over all pairs, (\S+) over the nonzero",
                        text)
        assert row, mode
        assert number(row.group(2)) == neg.sum() > 0
        assert number(row.group(4)) == pos.sum()
        assert (pos.sum() == 0) == (mode == "filter")   # complements only when rerun
        assert row.group(1) == f"{100 * neg.mean():.1f}"
        assert row.group(5) == f"{100 * (1 - neg.mean() - pos.mean()):.1f}"
        magnitude = np.where(neg | pos, np.abs(inter), 0.0)
        assert number(row.group(6)) == pytest.approx(np.median(magnitude), rel=5e-3, abs=1e-12)
        assert number(row.group(7)) == pytest.approx(np.median(np.abs(inter[neg | pos])),
                                                     rel=5e-3)
    assert f"The set-intervention study on {n:,} requests" in text


def test_throughput_table_is_consistent(demo_run):
    text, _ = demo_run
    table = text.split("\nThroughput\n")[1]
    rows = {name: (float(sec), rate) for name, sec, rate in
            re.findall(r"\n  (\S.*?\S)\s{2,}(\d+\.\d\d)\s+([\d,]+|-)(?=\n)", table)}
    study = f"study ({N_REQUESTS:,} requests)"
    stages = (["generate pools"] + [f"replay {mode}" for mode in cli.MODES]
              + [f"{rule} ({mode})" for mode in cli.MODES for rule in cli.RULES]
              + ["pair interactions (both)", study])
    assert sorted(rows) == sorted(stages)
    for name, (sec, rate) in rows.items():
        if rate != "-":   # requests/s = requests / unrounded seconds
            assert abs(N_REQUESTS / number(rate) - sec) <= 0.005 + 1e-9, name
    total = float(re.search(r"total \(with this report\)\s+(\d+\.\d\d)\n", table).group(1))
    # the stages are disjoint parts of the run
    assert sum(sec for sec, _ in rows.values()) <= total + 0.005 * (len(rows) + 1)
    assert re.search(r"\nsaved tables and credits to .*demo\.npz\n$", text)


def test_interaction_report_lines():
    v = np.array([[0., 1., 1., 1.], [0., 1., 1., 3.], [0., 1., 1., 2. + 1e-15]])
    lines = "\n".join(cli._interaction_lines(fc.interaction_distribution(v)))
    assert ("negative (substitutes) 33.3 % (1), positive (complements) 33.3 % (1), "
            "zero 33.3 %") in lines
    assert "1 over all pairs, 1 over the nonzero ones" in lines


def test_progress_bar_only_after_a_second(monkeypatch):
    clock = iter([0.0, 0.5, 1.6, 2.0])
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: next(clock))
    bars = io.StringIO()
    with _progress.Stage("work", 4, bars) as stage:
        stage.advance(1)    # at 0.5 s: nothing drawn
        assert bars.getvalue() == ""
        stage.advance(1)    # at 1.6 s: a bar at 50 %
    assert "work" in bars.getvalue() and "50.0 %" in bars.getvalue()
    assert stage.seconds == 2.0 and stage.done == 2


@pytest.mark.parametrize("preset", ["default", "realistic"])
def test_main_runs_the_demo(capsys, tmp_path, preset):
    out = tmp_path / "d.npz"
    assert cli.main(["demo", "--requests", "500", "--seed", "2", "--threads", "1",
                     "--preset", preset, "--resamples", "200", "--study-requests", "300",
                     "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"500 synthetic sponsored-search requests (preset {preset})" in text
    assert "seed 2\n" in text and "The set-intervention study on 300 requests" in text
    pools = fc.synthetic.sponsored_search(500, seed=2, preset=preset)
    replay = fc.synthetic.search_preset(preset).replay
    assert f"\n{pools.ad_id.size:,} candidate instances" in text
    saved = np.load(out)
    for r in (0, 250, 499):   # the options reach the replay: the preset's auction, seed 2
        actions = ref.auction_actions(pools.offsets, pools.ad_id, pools.score, pools.value,
                                      pools.prerank, cli.M, r)
        for mode in cli.MODES:
            np.testing.assert_allclose(saved[f"table_{mode}"][r],
                                       ref.auction_request(actions, mode=mode, **replay)[0],
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("argv, names", [
    ([], "command"), (["demo", "--requests", "0"], "--requests"),
    (["demo", "--seed", "-1"], "--seed"), (["demo", "--requests", "many"], "--requests"),
    (["play"], "'play'"), (["demo", "--threads", "0"], "--threads"),
    (["demo", "--preset", "huge"], "--preset"), (["demo", "--study-requests", "1"],
                                                 "--study-requests"),
    (["demo", "--resamples", "0"], "--resamples")])
def test_main_rejects_bad_arguments(argv, names, capsys):
    # docs/design.md: one stderr line naming the option, exit status 2, no traceback
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and names in lines[0] and "Traceback" not in captured.err


# --- learn -------------------------------------------------------------------

LEARN = ["learn", "--requests", "60", "--rewrites", "5", "--m", "2", "--runs", "2",
         "--steps", "3", "--batch", "8", "--group", "4", "--eval-samples", "4", "--seed", "3"]


def test_learn_prints_the_benchmark_table(capsys):
    from fastcredit import learning
    assert cli.main(LEARN + ["--credits", "broadcast,shapley", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    res = learning.benchmark(learning.benchmark_pools(60, rewrites=5, seed=3),
                             credits=("broadcast", "shapley"), m=2, runs=2, steps=3, batch=8,
                             group=4, eval_samples=4, seed=3,
                             **fc.synthetic.search_preset("realistic").replay)
    assert res.checkpoints == (1, 3)
    assert res.table() in captured.out and "4 training runs in" in captured.out
    assert cli.main(LEARN + ["--credits", "shapley"]) == 0
    assert "shapley run 2/2: held-out set value" in capsys.readouterr().err
    # the preset's auction unless an option overrides it
    assert cli.main(LEARN + ["--preset", "default", "--pricing", "gsp", "--credits",
                             "broadcast", "--quiet"]) == 0
    res = learning.benchmark(learning.benchmark_pools(60, rewrites=5, seed=3, preset="default"),
                             credits=("broadcast",), m=2, runs=2, steps=3, batch=8, group=4,
                             eval_samples=4, seed=3, pricing="gsp")
    out = capsys.readouterr().out
    assert res.table() in out and "(default preset)" in out and "top-4 gsp auction" in out


@pytest.mark.parametrize("argv, names", [
    (["--credits", "casi"], "--credits"), (["--m", "5"], "--m"),
    (["--requests", "1"], "--held-out"), (["--group", "1"], "--group"),
    (["--evaluator", "audit"], "--evaluator"), (["--lr", "-1"], "--lr"),
    (["--rewrites", "17"], "--rewrites"), (["--checkpoints", "2,x"], "--checkpoints"),
    (["--checkpoints", "4"], "--checkpoints"), (["--preset", "production"], "--preset")])
def test_learn_refuses_bad_arguments_in_one_line(argv, names, capsys):
    try:
        code = cli.main(LEARN + argv)
    except SystemExit as exc:   # refused by the parser
        code = exc.code
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and names in lines[0] and "Traceback" not in captured.err


# --- progress, --version, --quiet, help ------------------------------------------

class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_terminal_is_a_bar_with_rate_and_eta(monkeypatch):
    monkeypatch.setattr(_progress, "DELAY", 0.0)
    screen = _Terminal()
    with _progress.Stage("work", 1000, screen, unit="requests") as stage:
        for _ in range(10):
            stage.advance(100)
    text = screen.getvalue()
    assert "work" in text and "100%" in text and "requests/s" in text
    assert re.search(r"\[\d\d:\d\d<\d\d:\d\d", text)   # elapsed < remaining
    assert stage.done == 1000 and stage.seconds > 0


def test_the_score_bar_counts_requests(monkeypatch, tmp_path):
    """The terminal bar of fastcredit score says requests/s, never kit/s."""
    pytest.importorskip("pyarrow")
    from fastcredit import scoring
    from fastcredit.cli import write_synthetic
    monkeypatch.setattr(_progress, "DELAY", 0.0)
    write_synthetic(tmp_path / "in.parquet", 3000, row_group=1000, progress=False)
    screen = _Terminal()
    monkeypatch.setattr("sys.stderr", screen)
    scoring.score_parquet(tmp_path / "in.parquet", tmp_path / "out.parquet", progress=True,
                          batch_rows=1000)
    text = screen.getvalue()
    assert "score requests" in text and "requests/s" in text and "it/s" not in text
    screen = _Terminal()
    with _progress.Stage("rules", 8, screen) as stage:
        stage.advance(8)
    assert "kit" not in screen.getvalue()


def test_progress_in_a_log_is_a_plain_line_every_few_seconds(monkeypatch):
    clock = iter([0.0, 0.5, 1.2, 3.0, 6.5, 7.0])
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: next(clock))
    log = io.StringIO()
    with _progress.Stage("work", 10, log, unit="requests") as stage:
        for _ in range(4):
            stage.advance(2)   # at 0.5 s nothing, 1.2 s a line, 3.0 s none, 6.5 s a line
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and len(lines) == 3
    assert lines[0] == "  work: 4 of 10 (40.0 %), 3 requests/s, 00:01 elapsed, about 00:01 left"
    assert lines[1].startswith("  work: 8 of 10 (80.0 %), 1 requests/s, 00:06 elapsed")
    assert lines[2] == "  work: 8 of 10 (80.0 %), 1 requests/s, done in 00:07"


def test_version(capsys):
    from fastcredit import __version__
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out == f"fastcredit {__version__}\n"


def test_every_option_has_help():
    parser = cli._parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(commands.choices) == ["demo", "learn", "learn-trees", "score", "synth", "warm"]
    for name, sub in [("fastcredit", parser)] + sorted(commands.choices.items()):
        for action in sub._actions:
            assert action.help and action.help.strip(), (name, action.dest)
        if sub is not parser:
            assert any("--quiet" in a.option_strings for a in sub._actions), name


def test_quiet_leaves_only_the_result(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(_progress, "DELAY", 0.0)
    assert cli.main(["synth", str(tmp_path / "s.parquet"), "--requests", "300",
                     "--row-group", "100", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out.startswith("wrote 300 synthetic requests")
    assert cli.main(["synth", str(tmp_path / "s.parquet"), "--requests", "300",
                     "--row-group", "100"]) == 0
    assert "write requests: 300 of 300 (100.0 %)" in capsys.readouterr().err


# --- synth -------------------------------------------------------------------

def test_synth_writes_the_generator_stream(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    n, seed = 2500, 7
    one, two = tmp_path / "one.parquet", tmp_path / "two.parquet"
    cli.write_synthetic(one, n, seed=seed, row_group=1000, threads=1, progress=False)
    cli.write_synthetic(two, n, seed=seed, row_group=1000, threads=2, progress=False)
    assert one.read_bytes() == two.read_bytes()   # deterministic per seed
    pools = fc.synthetic.sponsored_search(n, seed=seed)
    file = pq.ParquetFile(one)
    assert file.metadata.num_row_groups == 3
    table = file.read()
    assert table.column("request_id").to_pylist() == list(range(n))
    candidates = table.column("candidates").combine_chunks()
    np.testing.assert_array_equal(np.asarray(candidates.offsets), pools.offsets[::cli.M])
    values = candidates.values
    for name in ("ad_id", "score", "value", "prerank"):
        np.testing.assert_array_equal(values.field(name).to_numpy(), getattr(pools, name))
    counts = np.diff(pools.offsets)
    np.testing.assert_array_equal(values.field("action").to_numpy(),
                                  np.tile(np.arange(cli.M), n).repeat(counts))
    base = np.concatenate([np.random.default_rng([seed, 1 << 20, s]).normal(size=min(1000, n - s))
                           for s in range(0, n, 1000)])
    np.testing.assert_array_equal(table.column("base_advantage").to_numpy(), base)
    # the writer settings: no nulls declared, no dictionary, plain doubles
    assert not any(f.nullable for f in table.schema)
    chunks = {file.metadata.row_group(0).column(i).path_in_schema:
              file.metadata.row_group(0).column(i) for i in range(file.metadata.num_columns)}
    score = chunks["candidates.list.element.score"]
    assert score.compression == "UNCOMPRESSED" and "RLE_DICTIONARY" not in score.encodings
    assert "DELTA_BINARY_PACKED" in chunks["candidates.list.element.ad_id"].encodings
    assert chunks["candidates.list.element.value"].compression == "SNAPPY"


def test_synth_of_no_requests_writes_the_schema(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    cli.write_synthetic(tmp_path / "empty.parquet", 0, progress=False)
    file = pq.ParquetFile(tmp_path / "empty.parquet")
    assert file.metadata.num_rows == 0
    assert file.schema_arrow.names == ["request_id", "candidates", "base_advantage"]


@pytest.mark.parametrize("command", ["demo", "score", "synth", "learn", "learn-trees", "warm"])
def test_every_option_says_its_default_once(command, capsys):
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option in re.split(r"\s(?=--?[a-z])", text):
        assert option.count("(default:") <= 1, option
