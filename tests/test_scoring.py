"""Parquet scoring: round trips equal the in-memory kernels; directories,
globs, lists, URIs and datasets in, one file or a directory out, equal to
the single-file run; the pipelined scorer equals the sequential one; nothing
changes silently (malformed rows are named by their input row, then stopped
or skipped); failed runs leave no file."""
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


def test_skipped_rows_are_numbered_in_the_input_across_batches(tmp_path):
    # batches [GOOD, None] and [GOOD, None]: the second batch starts at input
    # row 2 although only one row was scored before it, so its bad row is 3
    path, dest = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(small_table([GOOD, None, GOOD, None]), path)
    config = ScoreConfig(m=2, rules=("shapley",))
    summary = scoring.score_parquet(path, dest, config, on_error="skip", batch_rows=2)
    assert (summary.rows, summary.scored, summary.skipped) == (4, 2, 2)
    assert [row for row, _ in summary.errors] == [1, 3]
    assert all("null candidate list" in reason for _, reason in summary.errors)
    assert pq.read_table(dest).column("request_id").to_pylist() == [0, 2]
    with pytest.raises(MalformedRowError, match="row 1: ") as info:
        scoring.score_parquet(path, dest, config, batch_rows=2)
    assert info.value.row == 1
    # stopping at the first bad row of the second batch names it by input row
    pq.write_table(small_table([GOOD, GOOD, GOOD, None]), path)
    with pytest.raises(MalformedRowError, match="row 3: null candidate list") as info:
        scoring.score_parquet(path, dest, config, batch_rows=2)
    assert info.value.row == 3


def test_interrupted_write_leaves_no_file(synthetic_file, tmp_path, monkeypatch):
    calls = {"n": 0}
    real = scoring.pipeline._score

    def fail_on_second(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(scoring.pipeline, "_score", fail_on_second)
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
                     "--batch-rows", "400", "--carry", "base_advantage"]) == 0
    assert "scored 1,200 of 1,200 requests" in capsys.readouterr().out
    out = pq.read_table(dest)
    assert out.column_names[:2] == ["request_id", "base_advantage"]
    assert out.column("base_advantage").equals(pq.read_table(src).column("base_advantage"))
    table = fc.auction_replay(fc.synthetic.sponsored_search(1200, seed=3), mode="rerun")
    assert np.array_equal(fixed(out, "table"), table)
    assert np.array_equal(fixed(out, "banzhaf"), fc.banzhaf(table))
    base = pq.read_table(src).column("base_advantage").to_numpy()
    assert np.array_equal(fixed(out, "advantage"),
                          fc.shape_advantages(base, fc.shapley(table), kappa=0.5))


def test_command_line_reports_malformed_rows(tmp_path, capsys):
    # (the exit statuses are tests/test_cli.py's)
    from fastcredit import cli
    src, dest = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(small_table([GOOD, None, GOOD]), src)
    assert cli.main(["score", str(src), str(dest), "--m", "2"]) != 0
    assert "row 1: null candidate list" in capsys.readouterr().err
    assert not dest.exists()
    assert cli.main(["score", str(src), str(dest), "--m", "2", "--on-error", "skip"]) == 0
    text = capsys.readouterr().out
    assert "scored 2 of 3 requests" in text and "skipped row 1: null candidate list" in text
    assert cli.main(["score", str(src), str(dest), "--rules", "owen"]) != 0
    assert "rules must be one of" in capsys.readouterr().err
    assert cli.main(["score", str(src), str(dest), "--m", "2", "--carry", "shapley"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--carry: carry column 'shapley'" in err


# --- datasets in and out -----------------------------------------------------

CONFIG4 = ScoreConfig(rules=("shapley", "banzhaf", "singleton", "leave_one_out"),
                      base="base_advantage", mode="rerun", pricing="gsp")


def split_into_files(table, paths, sizes):
    """Write consecutive slices of ``table`` to ``paths`` (row groups of 300)."""
    start = 0
    for path, size in zip(paths, sizes):
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table.slice(start, size), path, row_group_size=300)
        start += size
    assert start == table.num_rows


@pytest.fixture(scope="module")
def single_run(synthetic_file, tmp_path_factory):
    dest = tmp_path_factory.mktemp("single") / "out.parquet"
    scoring.score_parquet(synthetic_file, dest, CONFIG4, batch_rows=500)
    return pq.read_table(dest)


@pytest.fixture(scope="module")
def dataset_dir(synthetic_file, tmp_path_factory):
    """The synthetic requests in 12 files whose names sort differently as text
    (part-10 before part-2) and naturally, plus files a dataset reader skips."""
    root = tmp_path_factory.mktemp("dataset")
    table = pq.read_table(synthetic_file)
    sizes = [200] * 12 + [100]
    split_into_files(table, [root / f"part-{i}.parquet" for i in range(13)], sizes)
    (root / "_SUCCESS").write_text("")
    (root / ".part-99.parquet.crc").write_text("junk")
    (root / "README.txt").write_text("not a parquet file")
    return root


@pytest.mark.parametrize("kind", ["directory", "glob", "list", "uri", "dataset"])
def test_directory_glob_and_list_inputs_equal_the_single_file(dataset_dir, single_run, tmp_path,
                                                               kind):
    import pyarrow.dataset as ds
    files = [dataset_dir / f"part-{i}.parquet" for i in range(13)]
    source = {"directory": dataset_dir,
              "glob": str(dataset_dir / "part-*.parquet"),
              "list": [str(f) for f in files[:5]] + files[5:9] + [str(dataset_dir / "part-9.*")]
              + files[10:],
              "uri": f"file://{dataset_dir}",
              "dataset": ds.dataset([str(f) for f in files], format="parquet")}[kind]
    summary = scoring.score_parquet(source, tmp_path / "out.parquet", CONFIG4, batch_rows=500)
    assert (summary.rows, summary.scored) == (2500, 2500)
    assert pq.read_table(tmp_path / "out.parquet").equals(single_run)


def test_directory_output_mirrors_the_input_files(dataset_dir, single_run, tmp_path):
    dest = tmp_path / "scored"
    scoring.score_parquet(dataset_dir, str(dest) + "/", CONFIG4)
    names = sorted(p.name for p in dest.iterdir())
    assert names == sorted(f"part-{i}.parquet" for i in range(13))
    parts = [pq.read_table(dest / f"part-{i}.parquet") for i in range(13)]
    assert [p.num_rows for p in parts] == [200] * 12 + [100]
    assert pa.concat_tables(parts).equals(single_run)
    # an existing directory of Parquet output is a directory destination and is replaced
    summary = scoring.score_parquet(dataset_dir / "part-3.parquet", dest, CONFIG4)
    assert summary.rows == 200
    assert [p.name for p in dest.iterdir()] == ["part-3.parquet"]
    assert pq.read_table(dest / "part-3.parquet").equals(single_run.slice(600, 200))
    # URIs of pyarrow filesystems, in and out
    scoring.score_parquet(f"file://{dataset_dir}/part-1*.parquet", f"file://{tmp_path}/uri/",
                          CONFIG4)
    names = ["part-1.parquet"] + [f"part-{i}.parquet" for i in (10, 11, 12)]
    assert sorted(p.name for p in (tmp_path / "uri").iterdir()) == sorted(names)
    assert pq.read_table(tmp_path / "uri" / "part-11.parquet").equals(
        single_run.slice(2200, 200))


def test_hive_partitions_are_carried_and_mirrored(synthetic_file, single_run, tmp_path):
    table = pq.read_table(synthetic_file).append_column(
        "country", pa.array(np.where(np.arange(2500) % 3, "de", "fr")))
    root = tmp_path / "hive"
    days = ["2024-01-01", "2024-01-02"]
    split_into_files(table.drop_columns(["country"]),
                     [root / f"day={d}" / "part-0.parquet" for d in days], [1000, 1500])
    config = ScoreConfig(rules=CONFIG4.rules, base="base_advantage", mode="rerun",
                         pricing="gsp", carry=("day",))
    dest = tmp_path / "out"
    scoring.score_parquet(root, f"{dest}/", config)
    out = pa.concat_tables(pq.read_table(dest / f"day={d}" / "part-0.parquet") for d in days)
    assert out.column("day").to_pylist() == ["2024-01-01"] * 1000 + ["2024-01-02"] * 1500
    assert out.drop_columns(["day"]).equals(single_run)
    # a carried column of the files, after the key
    src = tmp_path / "with_country.parquet"
    pq.write_table(table, src)
    config = ScoreConfig(rules=("shapley",), carry=("country", "base_advantage"))
    scoring.score_parquet(src, tmp_path / "c.parquet", config)
    out = pq.read_table(tmp_path / "c.parquet")
    assert out.schema.names == ["request_id", "country", "base_advantage", "table", "shapley"]
    assert out.column("country").equals(table.column("country"))
    table = fc.auction_replay(fc.synthetic.sponsored_search(2500, seed=7))
    assert np.array_equal(fixed(out, "shapley"), fc.shapley(table))


def test_pipelined_output_equals_the_sequential_output(dataset_dir, tmp_path):
    # bad rows in several files: skipped rows and row numbers must agree too
    table = pq.read_table(dataset_dir / "part-0.parquet")
    cands = table.column("candidates").combine_chunks()
    values = cands.values
    score = values.field("score").to_numpy().copy()
    for r in (3, 150, 199):
        score[cands.offsets[r].as_py()] = np.nan
    fields = [values.field(i) for i in range(values.type.num_fields)]
    fields[values.type.get_field_index("score")] = pa.array(score)
    broken = pa.LargeListArray.from_arrays(
        cands.offsets, pa.StructArray.from_arrays(fields, fields=list(values.type)))
    src = tmp_path / "in"
    src.mkdir()
    for i in range(13):
        t = pq.read_table(dataset_dir / f"part-{i}.parquet")
        if i in (2, 7):
            t = t.set_column(1, "candidates", broken.slice(0, t.num_rows))
        pq.write_table(t, src / f"part-{i}.parquet", row_group_size=64)
    runs = {}
    for pipeline in (True, False):
        dest = tmp_path / f"out-{pipeline}.parquet"
        runs[pipeline] = scoring.score_parquet(src, dest, CONFIG4, on_error="skip",
                                               batch_rows=100, pipeline=pipeline)
    a, b = (pq.read_table(tmp_path / f"out-{p}.parquet") for p in (True, False))
    assert a.equals(b) and a.num_rows == 2500 - 6
    meta = [pq.ParquetFile(tmp_path / f"out-{p}.parquet").metadata for p in (True, False)]
    assert [meta[0].row_group(i).num_rows for i in range(meta[0].num_row_groups)] == \
        [meta[1].row_group(i).num_rows for i in range(meta[1].num_row_groups)]
    assert runs[True].errors == runs[False].errors
    assert [row for row, _ in runs[True].errors] == [403, 550, 599, 1403, 1550, 1599]


def test_rows_are_numbered_across_files_and_batches(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    pq.write_table(small_table([GOOD, GOOD, GOOD]), src / "a.parquet")
    pq.write_table(small_table([GOOD, None, GOOD]), src / "b.parquet")
    config = ScoreConfig(m=2)
    with pytest.raises(MalformedRowError, match="row 4: null candidate list"):
        scoring.score_parquet(src, tmp_path / "out.parquet", config, batch_rows=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]
    summary = scoring.score_parquet([src / "b.parquet", src / "a.parquet"],
                                    tmp_path / "out.parquet", config, on_error="skip")
    assert summary.errors == [(1, "null candidate list")]


def test_destination_is_checked_before_any_work(synthetic_file, dataset_dir, tmp_path,
                                                monkeypatch):
    from fastcredit._output import OutputError

    def never(*args, **kwargs):
        raise AssertionError("work started")

    monkeypatch.setattr(scoring.pipeline, "_read", never)
    with pytest.raises(OutputError, match="is the input"):
        scoring.score_parquet(synthetic_file, synthetic_file)
    with pytest.raises(OutputError, match="contains the input"):
        scoring.score_parquet(dataset_dir / "part-0.parquet", f"{dataset_dir}/")
    with pytest.raises(OutputError, match="inside the input directory"):
        scoring.score_parquet(dataset_dir, dataset_dir / "out.parquet")
    with pytest.raises(OutputError, match="does not exist"):
        scoring.score_parquet(synthetic_file, tmp_path / "no" / "out.parquet")
    with pytest.raises(TypeError, match="destination must be a path"):
        scoring.score_parquet(synthetic_file, 3)
    with pytest.raises(TypeError, match="source must be a path"):
        scoring.score_parquet(3, tmp_path / "o.parquet")
    with pytest.raises(FileNotFoundError, match="matches no file"):
        scoring.score_parquet(str(tmp_path / "*.parquet"), tmp_path / "o.parquet")
    with pytest.raises(ValueError, match="batch_rows must be <= 67108864"):
        scoring.score_parquet(synthetic_file, tmp_path / "o.parquet", batch_rows=2**63)
    with pytest.raises(TypeError, match="pools must be a fastcredit.Pools"):
        scoring.pools_to_arrow(None)
    assert list(tmp_path.iterdir()) == []


def test_a_reader_error_stops_the_run_and_leaves_no_file(dataset_dir, tmp_path):
    junk = tmp_path / "junk.parquet"
    junk.write_text("not a parquet file")
    dest = tmp_path / "out.parquet"
    with pytest.raises(ValueError, match="source file '.*junk.parquet' is not a Parquet file"):
        scoring.score_parquet([dataset_dir / "part-0.parquet", junk], dest, CONFIG4)
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1]}), other)
    with pytest.raises(ValueError, match="no key column 'request_id'.*other.parquet"):
        scoring.score_parquet([dataset_dir / "part-0.parquet", other], dest, CONFIG4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.parquet", "other.parquet"]


# --- nothing changes silently ------------------------------------------------

def candidates_table(rows, types=None):
    """A one-column-per-field table of candidate dicts with explicit types."""
    types = {"action": pa.int32(), "ad_id": pa.int64(), "score": pa.float64(),
             "value": pa.float64(), **(types or {})}
    struct = pa.struct([(k, t) for k, t in types.items()])
    return pa.table({"request_id": pa.array(range(len(rows)), pa.int64()),
                     "candidates": pa.array(rows, pa.list_(struct))})


def stop_and_skip(table, row, reason, m=2, **config):
    config = ScoreConfig(m=m, **config)
    with pytest.raises(MalformedRowError, match=f"row {row}: {reason}") as info:
        scoring.score_batch(table, config)
    assert info.value.row == row
    out, problems = scoring.score_batch(table, config, on_error="skip")
    assert [r for r, _ in problems] == [row]
    assert out.column("request_id").to_pylist() == [r for r in range(table.num_rows)
                                                    if r != row]
    return out


def test_a_uint64_ad_id_above_int64_is_a_bad_row():
    rows = [GOOD, [{"action": 0, "ad_id": 2**64 - 1, "score": 1.0, "value": 1.0}], GOOD]
    table = candidates_table(rows, {"ad_id": pa.uint64()})
    stop_and_skip(table, 1, "candidate 0: ad_id 18446744073709551615 does not fit in int64")
    ok = candidates_table([GOOD, [{"action": 0, "ad_id": 2**63 - 1, "score": 1.0,
                                   "value": 1.0}]], {"ad_id": pa.uint64()})
    assert scoring.score_batch(ok, ScoreConfig(m=2))[0].num_rows == 2


@pytest.mark.filterwarnings("error")
def test_float_ad_ids_must_be_whole_int64_numbers():
    rows = [[{"action": 0, "ad_id": 1e30, "score": 2.0, "value": 1.0},
             {"action": 1, "ad_id": -1e30, "score": 1.0, "value": 3.0}],
            [{"action": 0, "ad_id": 7.0, "score": 2.0, "value": 1.0}],
            [{"action": 0, "ad_id": 2.5, "score": 2.0, "value": 1.0}],
            [{"action": 0, "ad_id": float("nan"), "score": 2.0, "value": 1.0}]]
    table = candidates_table(rows, {"ad_id": pa.float64()})
    config = ScoreConfig(m=2)
    with pytest.raises(MalformedRowError, match=r"row 0: candidate 0: ad_id 1e\+30 is not an "
                                                r"integer in the int64 range"):
        scoring.score_batch(table, config)
    out, problems = scoring.score_batch(table, config, on_error="skip")
    assert [r for r, _ in problems] == [0, 2, 3]
    assert "ad_id 2.5" in problems[1][1] and "ad_id nan" in problems[2][1]
    assert out.column("request_id").to_pylist() == [1]


def test_a_fractional_action_is_a_bad_row():
    rows = [GOOD, [{"action": 0.7, "ad_id": 1, "score": 1.0, "value": 1.0}],
            [{"action": 1.0, "ad_id": 1, "score": 1.0, "value": 1.0}]]
    table = candidates_table(rows, {"action": pa.float64()})
    out = stop_and_skip(table, 1, "candidate 0: action 0.7 is not an integer")
    # a whole float is that action: ad 1 in action 1 only
    assert fixed(out, "table")[1].tolist() == [0.0, 0.0, 1.0, 1.0]


def test_a_null_candidate_is_a_bad_row_whatever_its_fields():
    struct = pa.struct([("action", pa.int32()), ("ad_id", pa.int64()),
                        ("score", pa.float64()), ("value", pa.float64())])
    children = [pa.array([0, 1, 0, 1], pa.int32()), pa.array([1, 2, 3, 4]),
                pa.array([2.0, 1.0, 2.0, 1.0]), pa.array([1.0, 3.0, 1.0, 3.0])]
    values = pa.StructArray.from_arrays(children, fields=list(struct),
                                        mask=pa.array([False, False, False, True]))
    candidates = pa.ListArray.from_arrays(pa.array([0, 2, 4], pa.int32()), values)
    table = pa.table({"request_id": [0, 1], "candidates": candidates})
    assert values.field(1).null_count == 0  # the children say nothing of the null
    stop_and_skip(table, 1, "candidate 1: null candidate")


def test_key_and_carry_must_not_be_output_columns():
    with pytest.raises(ValueError, match="key column 'table' has the name of an output"):
        ScoreConfig(key="table")
    with pytest.raises(ValueError, match="key column 'shapley'"):
        ScoreConfig(key="shapley")
    with pytest.raises(ValueError, match="carry column 'advantage'"):
        ScoreConfig(base="b", carry=("advantage",))
    with pytest.raises(ValueError, match="carry names 'x' twice"):
        ScoreConfig(carry=("x", "x"))
    with pytest.raises(ValueError, match="carry names 'request_id' twice or names the key"):
        ScoreConfig(carry=("request_id",))
    with pytest.raises(TypeError, match="carry must be a sequence"):
        ScoreConfig(carry="x")
    with pytest.raises(TypeError, match="key must be a column name"):
        ScoreConfig(key=3)
    assert ScoreConfig(key="advantage").key == "advantage"  # no base: no such output
    with pytest.raises(ValueError, match="no column 'day' to carry"):
        scoring.score_batch(small_table([GOOD]), ScoreConfig(m=2, carry=("day",)))


def test_a_base_column_of_strings_is_refused_by_name():
    table = small_table([GOOD]).append_column("adv", pa.array(["0.5"]))
    with pytest.raises(TypeError, match="base-advantage column 'adv' must be an integer or "
                                        "floating-point column, got string"):
        scoring.score_batch(table, ScoreConfig(m=2, base="adv"))
    table = small_table([GOOD, GOOD]).append_column("adv", pa.array([None, 1.5]))
    stop_and_skip(table, 0, "adv is null", base="adv")
    keys = small_table([GOOD, GOOD]).set_column(0, "request_id", pa.array(["a", None]))
    out, problems = scoring.score_batch(keys, ScoreConfig(m=2), on_error="skip")
    assert problems == [(1, "request_id is null")] and out.column(0).to_pylist() == ["a"]


def test_invalid_list_offsets_name_the_row():
    values = small_table([GOOD, GOOD]).column("candidates").combine_chunks().values
    offsets = pa.array([0, 2, 1, 2, 4], pa.int32())  # row 1 would have length -1
    candidates = pa.Array.from_buffers(pa.list_(values.type), 4, [None, offsets.buffers()[1]],
                                       children=[values])
    table = pa.table({"request_id": [0, 1, 2, 3], "candidates": candidates})
    out = stop_and_skip(table, 1, "invalid list offsets of 'candidates': 2 .. 1 of 4 values")
    assert fixed(out, "table")[:2].tolist() == [[0.0, 1.0, 3.0, 4.0], [0.0, 0.0, 3.0, 3.0]]


@pytest.mark.parametrize("field,value,reason", [
    ("score", 2**53 + 1, "score 9007199254740993 is not exactly a float64"),
    ("score", float("inf"), r"score is not finite \(inf\)"),
    ("prerank", float("nan"), r"prerank is not finite \(nan\)"),
])
def test_scores_that_float64_cannot_rank_are_bad_rows(field, value, reason):
    types = {"score": pa.int64()} if isinstance(value, int) else {}
    types["prerank"] = pa.float64()
    good = [{**c, "score": int(c["score"]), "prerank": 1.0} for c in GOOD]
    bad = [{**good[0], field: value}]
    table = candidates_table([good, bad], types)
    stop_and_skip(table, 1, f"candidate 0: {reason}", capacity=10)
    if field == "prerank":  # without capacity the prerank plays no part: not even read
        assert scoring.score_batch(table, ScoreConfig(m=2))[0].num_rows == 2


def test_only_the_candidate_fields_scoring_uses_are_decoded(synthetic_file, tmp_path):
    reader = pq.ParquetFile(synthetic_file)
    columns = ["request_id", "candidates"]
    assert scoring._leaves(reader, columns, ScoreConfig()) == ["request_id"] + [
        f"candidates.list.element.{f}" for f in ("action", "ad_id", "score", "value")]
    assert "candidates.list.element.prerank" in scoring._leaves(reader, columns,
                                                               ScoreConfig(capacity=3))
    # a NaN prerank: no matter without capacity, a bad row with it
    table = pq.read_table(synthetic_file).slice(0, 50)
    cands = table.column("candidates").combine_chunks()
    values = cands.values
    prerank = values.field("prerank").to_numpy().copy()
    prerank[cands.offsets[7].as_py()] = np.nan
    fields = [values.field(i) for i in range(4)] + [pa.array(prerank)]
    table = table.set_column(1, "candidates", pa.LargeListArray.from_arrays(
        cands.offsets, pa.StructArray.from_arrays(fields, fields=list(values.type))))
    pq.write_table(table, tmp_path / "in.parquet")
    assert scoring.score_parquet(tmp_path / "in.parquet", tmp_path / "a.parquet").scored == 50
    with pytest.raises(MalformedRowError, match="row 7: candidate 0: prerank is not finite"):
        scoring.score_parquet(tmp_path / "in.parquet", tmp_path / "b.parquet",
                              ScoreConfig(capacity=8))


def test_arrow_to_csr_equals_pools_and_keeps_the_zero_copy_values(synthetic_file):
    batch = next(pq.ParquetFile(synthetic_file).iter_batches(batch_size=700))
    checked = scoring._check_rows(batch, ScoreConfig(capacity=30))
    pools = fc.synthetic.sponsored_search(700, seed=7)
    assert checked.keep is None and checked.problems == []
    assert np.array_equal(checked.offsets, pools.offsets)
    for name in ("ad_id", "score", "value", "prerank"):
        assert np.array_equal(checked.fields[name], getattr(pools, name))
    built = fc.Pools(checked.offsets, checked.fields["ad_id"], checked.fields["score"],
                     checked.fields["value"], m=5, prerank=checked.fields["prerank"])
    trusted = scoring._pools(checked, 5)  # built without checking again
    for name in fc.Pools.__slots__:
        a, b = getattr(trusted, name), getattr(built, name)
        assert np.array_equal(a, b) and (np.ndim(a) == 0 or not a.flags.writeable)
    values = batch.column("candidates").values
    assert checked.fields["score"].ctypes.data == values.field("score").buffers()[1].address \
        + 8 * values.field("score").offset
    # requests with empty actions, empty requests at both ends, a sliced list column
    rows = [[], [{"action": 2, "ad_id": 1, "score": 1.0, "value": 1.0}], [],
            [{"action": 0, "ad_id": 1, "score": 1.0, "value": 1.0},
             {"action": 0, "ad_id": 2, "score": 2.0, "value": 1.0},
             {"action": 3, "ad_id": 1, "score": 1.0, "value": 1.0}], []]
    table = candidates_table(rows).slice(1)
    checked = scoring._check_rows(table.to_batches()[0], ScoreConfig(m=4))
    assert checked.offsets.tolist() == [0, 0, 0, 1, 1] + [1] * 4 + [3, 3, 3, 4] + [4] * 4


def test_a_clean_batch_is_checked_without_a_python_loop(synthetic_file, monkeypatch):
    def per_row(*args, **kwargs):
        raise AssertionError("a per-row Python loop ran on a clean batch")

    monkeypatch.setattr(scoring._BadRows, "rows", per_row)
    monkeypatch.setattr(scoring._BadRows, "values", per_row)
    batch = next(pq.ParquetFile(synthetic_file).iter_batches(batch_size=2500))
    checked = scoring._check_rows(batch, CONFIG4)
    assert checked.keep is None and checked.offsets[-1] == len(checked.fields["score"])


def test_scoring_errors_cross_processes_as_they_are():
    # pickled by their arguments (a Dask task returns or raises them): the
    # same type, attributes and message after the round trip
    import pickle
    cases = ((scoring.ActionCountError(6, 5, "file 'a.parquet'"), ("m", "present", "where")),
             (scoring.UnreadableFileError("a.parquet", "bad page"), ("path", "reason")),
             (scoring.MalformedRowError(11, "null candidate list"), ("row", "reason")))
    for err, attrs in cases:
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err)
        assert all(getattr(back, a) == getattr(err, a) for a in attrs)
