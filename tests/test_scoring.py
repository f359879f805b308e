"""Parquet scoring: round trips equal the in-memory kernels, malformed rows
are reported with their row numbers, failed runs leave no file."""
import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import fastcredit as fc  # noqa: E402
from fastcredit import scoring  # noqa: E402
from fastcredit.cli import write_synthetic  # noqa: E402
from fastcredit.scoring import MalformedRowError, ScoreConfig  # noqa: E402


def fixed(table, column):
    return np.stack(table.column(column).to_numpy(zero_copy_only=False))


@pytest.fixture(scope="module")
def synthetic_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("synth") / "requests.parquet"
    write_synthetic(path, 2500, seed=7, row_group=1000)
    return path


def test_synthetic_file_holds_sponsored_search(synthetic_file):
    table = pq.read_table(synthetic_file)
    assert table.num_rows == 2500
    assert pq.ParquetFile(synthetic_file).metadata.num_row_groups == 3
    pools = fc.synthetic.sponsored_search(2500, seed=7)
    back = scoring.score_batch(table, ScoreConfig(rules=("singleton",)))[0]
    assert np.array_equal(fixed(back, "table"), fc.auction_replay(pools))
    assert np.array_equal(table.column("request_id").to_numpy(), np.arange(2500))


@pytest.mark.parametrize("mode,pricing", [("filter", "first"), ("rerun", "gsp")])
def test_round_trip_equals_in_memory_kernels(synthetic_file, tmp_path, mode, pricing):
    config = ScoreConfig(rules=("shapley", "banzhaf", "singleton", "leave_one_out"),
                         mode=mode, pricing=pricing, capacity=30, reserve=0.05,
                         base="base_advantage", beta=0.5, kappa=0.8)
    summary = scoring.score_parquet(synthetic_file, tmp_path / "out.parquet", config,
                                    batch_rows=700)
    assert (summary.rows, summary.scored, summary.skipped) == (2500, 2500, 0)
    out = pq.read_table(tmp_path / "out.parquet")
    pools = fc.synthetic.sponsored_search(2500, seed=7)
    table = fc.auction_replay(pools, slots=4, reserve=0.05, capacity=30, pricing=pricing,
                              mode=mode)
    assert np.array_equal(fixed(out, "table"), table)
    for rule in config.rules:
        assert np.array_equal(fixed(out, rule), getattr(fc, rule)(table))
    base = pq.read_table(synthetic_file).column("base_advantage").to_numpy()
    want = fc.shape_advantages(base, fc.shapley(table), beta=0.5, kappa=0.8)
    assert np.array_equal(fixed(out, "advantage"), want)
    assert np.array_equal(out.column("request_id").to_numpy(), np.arange(2500))


def test_per_action_columns_give_the_same_result(synthetic_file):
    grouped = pq.read_table(synthetic_file).slice(0, 300)
    lists = grouped.column("candidates").combine_chunks()
    per_action = {"request_id": grouped.column("request_id")}
    rows = lists.to_pylist()
    for i in range(5):
        per_action[f"action_{i}"] = pa.array(
            [[{k: c[k] for k in ("ad_id", "score", "value", "prerank")}
              for c in row if c["action"] == i] for row in rows])
    config = ScoreConfig(rules=("shapley",))
    a = scoring.score_batch(grouped, config)[0]
    b = scoring.score_batch(pa.table(per_action), config)[0]
    assert a.equals(b)


def small_table(rows):
    return pa.table({"request_id": pa.array(range(len(rows)), pa.int64()),
                     "candidates": pa.array(rows, pa.list_(pa.struct([
                         ("action", pa.int32()), ("ad_id", pa.int64()),
                         ("score", pa.float64()), ("value", pa.float64())])))})


GOOD = [{"action": 0, "ad_id": 1, "score": 2.0, "value": 1.0},
        {"action": 1, "ad_id": 2, "score": 1.0, "value": 3.0}]


@pytest.mark.parametrize("bad_row,reason", [
    (None, "null candidate list"),
    ([{"action": 7, "ad_id": 1, "score": 1.0, "value": 1.0}], "action out of range"),
    ([{"action": 1, "ad_id": 1, "score": 1.0, "value": 1.0},
      {"action": 0, "ad_id": 2, "score": 1.0, "value": 1.0}], "not grouped by action"),
    ([{"action": 0, "ad_id": 1, "score": float("nan"), "value": 1.0}], "score is not finite"),
    ([{"action": 0, "ad_id": None, "score": 1.0, "value": 1.0}], "null"),
])
def test_malformed_rows_are_named_then_stopped_or_skipped(tmp_path, bad_row, reason):
    rows = [GOOD, GOOD, bad_row, GOOD, []]
    path = tmp_path / "in.parquet"
    pq.write_table(small_table(rows), path)
    config = ScoreConfig(m=2, rules=("shapley",))
    dest = tmp_path / "out.parquet"
    with pytest.raises(MalformedRowError, match=f"row 2: .*{reason}") as info:
        scoring.score_parquet(path, dest, config, batch_rows=2)
    assert info.value.row == 2
    assert not dest.exists() and not list(tmp_path.glob(".*tmp"))
    summary = scoring.score_parquet(path, dest, config, on_error="skip", batch_rows=2)
    assert (summary.rows, summary.scored, summary.skipped) == (5, 4, 1)
    assert summary.errors[0][0] == 2 and reason in summary.errors[0][1]
    out = pq.read_table(dest)
    assert out.column("request_id").to_pylist() == [0, 1, 3, 4]
    # the good rows' values: ad 1 (action 0) beats ad 2 (action 1) for slot 1
    tables = fixed(out, "table")
    assert tables[0].tolist() == [0.0, 1.0, 3.0, 4.0]
    assert tables[3].tolist() == [0.0, 0.0, 0.0, 0.0]


def test_interrupted_write_leaves_no_file(synthetic_file, tmp_path, monkeypatch):
    calls = {"n": 0}
    real = scoring.score_batch

    def fail_on_second(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(scoring, "score_batch", fail_on_second)
    dest = tmp_path / "out.parquet"
    with pytest.raises(KeyboardInterrupt):
        scoring.score_parquet(synthetic_file, dest, batch_rows=1000)
    assert list(tmp_path.iterdir()) == []


def test_bad_configuration_and_input(synthetic_file, tmp_path):
    with pytest.raises(ValueError, match="rules must be one of"):
        ScoreConfig(rules=("owen",))
    with pytest.raises(ValueError, match="m must be <= 16"):
        ScoreConfig(m=17)
    with pytest.raises(ValueError, match="kappa must be >= 0"):
        ScoreConfig(kappa=-1.0)
    with pytest.raises(ValueError, match="on_error must be one of"):
        scoring.score_parquet(synthetic_file, tmp_path / "o.parquet", on_error="ignore")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        scoring.score_parquet(tmp_path / "missing.parquet", tmp_path / "o.parquet")
    with pytest.raises(ValueError, match="no key column 'rid'"):
        scoring.score_parquet(synthetic_file, tmp_path / "o.parquet", ScoreConfig(key="rid"))
    with pytest.raises(ValueError, match="no base-advantage column 'adv'"):
        scoring.score_parquet(synthetic_file, tmp_path / "o.parquet", ScoreConfig(base="adv"))
    no_candidates = pa.table({"request_id": [1], "other": [[1]]})
    with pytest.raises(ValueError, match="neither a 'candidates' column nor 'action_0'"):
        scoring.score_batch(no_candidates, ScoreConfig())
    assert list(tmp_path.iterdir()) == []


def test_command_line_synth_then_score(tmp_path, capsys):
    from fastcredit import cli
    src, dest = tmp_path / "in.parquet", tmp_path / "out.parquet"
    assert cli.main(["synth", str(src), "--requests", "1200", "--seed", "3",
                     "--row-group", "500"]) == 0
    assert cli.main(["score", str(src), str(dest), "--rules", "shapley,banzhaf",
                     "--base", "base_advantage", "--mode", "rerun", "--kappa", "0.5",
                     "--batch-rows", "400"]) == 0
    assert "scored 1,200 of 1,200 requests" in capsys.readouterr().out
    out = pq.read_table(dest)
    table = fc.auction_replay(fc.synthetic.sponsored_search(1200, seed=3), mode="rerun")
    assert np.array_equal(fixed(out, "table"), table)
    assert np.array_equal(fixed(out, "banzhaf"), fc.banzhaf(table))
    base = pq.read_table(src).column("base_advantage").to_numpy()
    assert np.array_equal(fixed(out, "advantage"),
                          fc.shape_advantages(base, fc.shapley(table), kappa=0.5))


def test_command_line_reports_malformed_rows(tmp_path, capsys):
    from fastcredit import cli
    src, dest = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(small_table([GOOD, None, GOOD]), src)
    assert cli.main(["score", str(src), str(dest), "--m", "2"]) == 1
    assert "row 1: null candidate list" in capsys.readouterr().err
    assert not dest.exists()
    assert cli.main(["score", str(src), str(dest), "--m", "2", "--on-error", "skip"]) == 0
    text = capsys.readouterr().out
    assert "scored 2 of 3 requests" in text and "skipped row 1: null candidate list" in text
    assert cli.main(["score", str(src), str(dest), "--rules", "owen"]) == 1
    assert "rules must be one of" in capsys.readouterr().err
