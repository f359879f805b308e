"""The Dask path on a real LocalCluster with two worker processes equals the
single-process path (optional extra: skipped without dask/distributed)."""
import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import fastcredit.dask as fdask  # noqa: E402
from fastcredit import scoring  # noqa: E402
from fastcredit.cli import write_synthetic  # noqa: E402
from fastcredit.scoring import MalformedRowError, ScoreConfig  # noqa: E402

CONFIG = ScoreConfig(rules=("shapley", "leave_one_out"), base="base_advantage",
                     mode="rerun", pricing="gsp")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as c:
            yield c


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    src = tmp_path_factory.mktemp("dask") / "in.parquet"
    write_synthetic(src, 3000, seed=11, row_group=700, progress=False)
    return src


@pytest.fixture(scope="module")
def single(source, tmp_path_factory):
    dest = tmp_path_factory.mktemp("single") / "out.parquet"
    scoring.score_parquet(source, dest, CONFIG)
    return pq.read_table(dest)


def as_arrow(df):
    return pa.Table.from_pandas(df, preserve_index=False)


def test_dask_equals_single_process(client, source, single, tmp_path):
    ddf = fdask.score(source, CONFIG)
    assert ddf.npartitions == 5
    assert as_arrow(ddf.compute()).equals(single)
    assert fdask.score(source, CONFIG, split_row_groups=2).npartitions == 3
    # written by the workers: the same columns, no __null_dask_index__
    out = fdask.score_parquet(source, tmp_path / "scored", CONFIG)
    names = sorted(p.name for p in (tmp_path / "scored").iterdir())
    assert names == [f"part-{i:05d}.parquet" for i in range(5)]
    back = pa.concat_tables(pq.read_table(tmp_path / "scored" / n) for n in names)
    assert back.equals(single) and out == str(tmp_path / "scored")


def test_dask_reads_lists_directories_and_hive_partitions(client, source, single, tmp_path):
    table = pq.read_table(source)
    root = tmp_path / "hive"
    files = []
    for i, (a, b) in enumerate([(0, 1000), (1000, 2200), (2200, 3000)]):
        path = root / f"shard={i}" / "part-0.parquet"
        path.parent.mkdir(parents=True)
        pq.write_table(table.slice(a, b - a), path, row_group_size=500)
        files.append(path)
    assert as_arrow(fdask.score([str(f) for f in files], CONFIG).compute()).equals(single)
    config = ScoreConfig(rules=CONFIG.rules, base="base_advantage", mode="rerun",
                         pricing="gsp", carry=("shard",))
    got = as_arrow(fdask.score(root, config).compute())
    assert got.column("shard").to_pylist() == [0] * 1000 + [1] * 1200 + [2] * 800
    assert got.drop_columns(["shard"]).equals(single)


def test_each_task_uses_one_kernel_thread_unless_told():
    assert fdask._task_config(ScoreConfig()).threads == 1
    assert fdask._task_config(ScoreConfig(threads=3)).threads == 3


def test_dask_reports_malformed_rows_by_input_row(client, tmp_path):
    good = [{"action": 0, "ad_id": 1, "score": 2.0, "value": 1.0}]
    bad = [{"action": 3, "ad_id": 1, "score": 2.0, "value": 1.0}]
    table = pa.table({"request_id": pa.array([0, 1, 2, 3], pa.int64()),
                      "candidates": pa.array([good, good, bad, good])})
    pq.write_table(table, tmp_path / "bad.parquet", row_group_size=2)
    config = ScoreConfig(m=2)
    with pytest.raises(MalformedRowError, match=r"row 2: .*action out of range.*partition 1"):
        fdask.score(tmp_path / "bad.parquet", config).compute()
    kept = fdask.score(tmp_path / "bad.parquet", config, on_error="skip").compute()
    assert kept["request_id"].tolist() == [0, 1, 3]
    with pytest.raises(TypeError, match="data must be a dask DataFrame or a path"):
        fdask.score(3)
    with pytest.raises(TypeError, match="source must be a dask DataFrame or a path"):
        fdask.score_parquet(3, tmp_path / "out")
    with pytest.raises(ValueError, match="contains the input"):
        fdask.score_parquet(tmp_path / "bad.parquet", tmp_path)


def test_a_null_candidate_is_a_bad_row_on_the_dask_path(client, tmp_path):
    import dask.dataframe as dd
    struct = pa.struct([("action", pa.int32()), ("ad_id", pa.int64()),
                        ("score", pa.float64()), ("value", pa.float64())])
    values = pa.StructArray.from_arrays(
        [pa.array([0, 0, 1], pa.int32()), pa.array([1, 2, 3]), pa.array([2.0, 1.0, 1.0]),
         pa.array([1.0, 3.0, 1.0])], fields=list(struct), mask=pa.array([False, True, False]))
    table = pa.table({"request_id": pa.array([0, 1, 2], pa.int64()),
                      "candidates": pa.ListArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()),
                                                             values)})
    pq.write_table(table, tmp_path / "null.parquet")
    config = ScoreConfig(m=2)
    with pytest.raises(MalformedRowError, match="row 1: candidate 0: null candidate"):
        fdask.score(tmp_path / "null.parquet", config).compute()
    frame = dd.from_pandas(table.to_pandas(types_mapper=__import__("pandas").ArrowDtype),
                           npartitions=1)
    with pytest.raises(MalformedRowError, match="row 1: candidate 0: null candidate"):
        fdask.score(frame, config).compute()
    kept = fdask.score(frame, config, on_error="skip").compute()
    assert kept["request_id"].tolist() == [0, 2]
