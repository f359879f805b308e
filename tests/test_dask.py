"""The Dask path on a real LocalCluster with two worker processes equals the
single-process path (optional extra: skipped without dask/distributed):
frames as ``dd.read_parquet`` makes them (default and Arrow dtypes), paths
read by ``dd.read_parquet`` with its options, output by ``to_parquet``."""
import os
import threading
import time

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import dask.dataframe as dd  # noqa: E402

import fastcredit.dask as fdask  # noqa: E402
from fastcredit import scoring  # noqa: E402
from fastcredit.cli import write_synthetic  # noqa: E402
from fastcredit.scoring import ActionCountError, MalformedRowError, ScoreConfig  # noqa: E402

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
    ddf = fdask.score(source, CONFIG, split_row_groups=True)
    assert ddf.npartitions == 5
    assert as_arrow(ddf.compute()).equals(single)
    assert fdask.score(source, CONFIG, split_row_groups=2).npartitions == 3
    # written by the workers: the same columns, no __null_dask_index__
    out = fdask.score_parquet(source, tmp_path / "scored", CONFIG, split_row_groups=True)
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
    with pytest.raises(MalformedRowError, match=r"row 0: .*action out of range.*partition 1, "
                                                r"row numbered within the partition"):
        fdask.score(tmp_path / "bad.parquet", config, split_row_groups=True).compute()
    kept = fdask.score(tmp_path / "bad.parquet", config, on_error="skip",
                       split_row_groups=True).compute()
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


# --- Dask the way Dask users work (issue 31, item 4) ---------------------------

@pytest.mark.parametrize("dtype_backend", [None, "numpy_nullable", "pyarrow"])
def test_any_frame_read_parquet_returns(client, source, single, dtype_backend):
    """The default dtypes (object columns of lists of dicts) as well as the
    Arrow-backed ones: each partition is converted to Arrow on the worker."""
    kwargs = {} if dtype_backend is None else {"dtype_backend": dtype_backend}
    frame = dd.read_parquet(source, split_row_groups=True, **kwargs)
    got = fdask.score(frame, CONFIG).compute()
    assert as_arrow(got).equals(single)
    assert got["request_id"].dtype == frame.dtypes["request_id"]   # the key as it was
    # a partition of no rows, and one whose candidates are all null
    empty = fdask.score(frame[frame.request_id < 0], CONFIG).compute()
    assert len(empty) == 0 and list(empty.columns) == single.column_names
    nulls = frame.assign(candidates=None)
    with pytest.raises(MalformedRowError, match="null candidate list"):
        fdask.score(nulls, CONFIG).compute()


def test_read_parquet_options_work(client, source, single, tmp_path, monkeypatch):
    """filters, columns, storage_options and blocksize reach dd.read_parquet."""
    got = fdask.score(source, CONFIG, filters=[("request_id", "<", 1000)]).compute()
    assert as_arrow(got).equals(single.slice(0, 1000))
    config = ScoreConfig(rules=("shapley",), mode="rerun", pricing="gsp")
    only = fdask.score(source, config, columns=["request_id", "candidates"]).compute()
    assert as_arrow(only).column("shapley").equals(single.column("shapley"))
    with pytest.raises(ValueError, match="'base_advantage'"):
        fdask.score(source, CONFIG, columns=["request_id", "candidates"])
    uri = "file://" + str(source)
    assert as_arrow(fdask.score(uri, CONFIG, storage_options={"auto_mkdir": False})
                    .compute()).equals(single)
    seen = []
    real = dd.read_parquet

    def spy(path, **kwargs):
        seen.append(kwargs)
        return real(path, **kwargs)

    monkeypatch.setattr(fdask.dd, "read_parquet", spy)
    fdask.score(uri, CONFIG, storage_options={"auto_mkdir": True})
    assert seen[-1]["storage_options"] == {"auto_mkdir": True}
    monkeypatch.undo()
    blocks = fdask.score(source, CONFIG, blocksize="1MB", split_row_groups="adaptive")
    assert blocks.npartitions > 1
    assert as_arrow(blocks.compute()).equals(single)
    with pytest.raises(TypeError, match="'filters' is an argument of dd.read_parquet"):
        fdask.score(dd.read_parquet(source), CONFIG, filters=[("request_id", "<", 3)])


def test_one_file_per_input_as_the_command_line(client, source, tmp_path):
    """With one partition per input file, part-i is the command line's
    output of the i-th input file, and carries page checksums."""
    table = pq.read_table(source)
    src = tmp_path / "in"
    src.mkdir()
    for i, (a, b) in enumerate([(0, 1000), (1000, 2200), (2200, 3000)]):
        pq.write_table(table.slice(a, b - a), src / f"part-{i}.parquet", row_group_size=300)
    scoring.score_parquet(src, str(tmp_path / "cli") + "/", CONFIG)
    fdask.score_parquet(src, tmp_path / "dask", CONFIG, split_row_groups=False,
                        blocksize=None)
    names = sorted(os.listdir(tmp_path / "dask"))
    assert names == [f"part-{i:05d}.parquet" for i in range(3)]
    for i, name in enumerate(names):
        mine = pq.read_table(tmp_path / "dask" / name)
        assert mine.equals(pq.read_table(tmp_path / "cli" / f"part-{i}.parquet")), name
        pq.ParquetFile(tmp_path / "dask" / name, page_checksum_verification=True).read()
    from test_checksums import has_checksums
    assert has_checksums(tmp_path / "dask" / names[0])


def test_score_parquet_reads_with_fastcredits_reader(client, source, single, tmp_path):
    """A path with no dd.read_parquet option but split_row_groups/blocksize
    is read by the scorer's own reader in one task per partition: the same
    output as the single process, whose part-i files are the row groups
    the options name."""
    real = dd.read_parquet

    def refused(*args, **kwargs):
        raise AssertionError("dd.read_parquet called")
    fdask.dd.read_parquet = refused
    try:
        out = fdask.score_parquet(source, tmp_path / "own", CONFIG)
        pairs = fdask.score_parquet(source, tmp_path / "pairs", CONFIG, split_row_groups=2)
    finally:
        fdask.dd.read_parquet = real
    assert sorted(os.listdir(out)) == ["part-00000.parquet"]   # 3000 rows: a small file
    assert pq.read_table(out).equals(single)
    names = sorted(os.listdir(pairs))
    assert [pq.ParquetFile(os.path.join(pairs, n)).metadata.num_rows for n in names] \
        == [1400, 1400, 200]   # row groups of 700: 2 + 2 + 1
    assert pa.concat_tables(pq.read_table(os.path.join(pairs, n)) for n in names).equals(single)
    # with any other option, dd.read_parquet reads the path as score() does
    filtered = fdask.score_parquet(source, tmp_path / "dd", CONFIG,
                                   filters=[("request_id", "<", 1000)])
    assert pq.read_table(filtered).equals(single.slice(0, 1000))


def test_partitions_follow_dd_read_parquets_options(source):
    src = scoring.files._Source.resolve(source)   # 3000 rows in row groups of 700
    sizes = [pq.ParquetFile(source).metadata.row_group(g).total_byte_size for g in range(5)]
    total = sum(sizes)
    assert fdask._pieces(src) == [(0, None)]
    assert fdask._pieces(src, split_row_groups=True) == [(0, [g]) for g in range(5)]
    assert fdask._pieces(src, split_row_groups=3) == [(0, [0, 1, 2]), (0, [3, 4])]
    assert fdask._pieces(src, split_row_groups=False, blocksize=None) == [(0, None)]
    assert fdask._pieces(src, split_row_groups="adaptive", blocksize=None) == [(0, None)]
    # adaptive: consecutive row groups within blocksize; infer: adaptive past 2 x blocksize
    for block in (sizes[0] + sizes[1], sizes[0] + sizes[1] - 1, total // 3):
        groups = [g for _, g in fdask._pieces(src, split_row_groups="adaptive",
                                              blocksize=block)]
        assert sum(groups, []) == list(range(5))
        for g, after in zip(groups, groups[1:]):   # within the block; the next would not be
            assert len(g) == 1 or sum(sizes[i] for i in g) <= block
            assert sum(sizes[i] for i in g) + sizes[after[0]] > block
    assert [g for _, g in fdask._pieces(src, split_row_groups="adaptive",
                                        blocksize=sizes[0] + sizes[1])][0] == [0, 1]
    assert fdask._pieces(src, blocksize=total // 2 - 1) == \
        fdask._pieces(src, split_row_groups="adaptive", blocksize=total // 2 - 1)
    assert fdask._pieces(src, blocksize=total // 2 + 1) == [(0, None)]
    assert fdask._pieces(src, blocksize="1 B") == [(0, [g]) for g in range(5)]
    for bad in (0, -1, "some", 1.5, None):
        with pytest.raises(ValueError, match="split_row_groups must be"):
            fdask._pieces(src, split_row_groups=bad)
    for bad in ("lots", -1, True, 2.5j):
        with pytest.raises(ValueError, match="blocksize must be a size"):
            fdask._pieces(src, blocksize=bad)


def test_a_sources_footers_are_read_once_and_not_sent(source, monkeypatch):
    # the m check and the partitioning share one read of each footer; a task
    # is sent the files without them
    import pickle
    src = scoring.files._Source.resolve(source)
    opened = []
    real_open = scoring.files._Source.open
    monkeypatch.setattr(scoring.files._Source, "open",
                        lambda self, f: opened.append(f.path) or real_open(self, f))
    scoring.files._actions_in_statistics(src, scoring.ScoreConfig(m=5))
    fdask._pieces(src, split_row_groups=True)
    assert opened == [f.path for f in src.files]
    assert src.metadata(src.files[0]).num_rows == 3000
    sent = pickle.loads(pickle.dumps(src))
    assert sent._footers == {} and [f.path for f in sent.files] == [f.path for f in src.files]
    assert sent.metadata(sent.files[0]).num_rows == 3000


_PIECE_ENDED = threading.Event()
_REAL_PIECE = fdask._score_piece


def _failing_or_slow_piece(*args):
    """Partition 0 fails at once; the others score after half a second and
    say so (module level: what a task runs is pickled, in-process too)."""
    if args[-1] == 0:
        raise ValueError("partition 0 is bad")
    time.sleep(0.5)
    out = _REAL_PIECE(*args)
    _PIECE_ENDED.set()
    return out


def test_a_failing_partition_waits_for_the_others(source, tmp_path, monkeypatch):
    # partition 0 fails while the others are still writing: dask.compute
    # raises its error only once they have ended, so that none writes into
    # the directory being removed, and nothing is published
    _PIECE_ENDED.clear()
    monkeypatch.setattr(fdask, "_score_piece", _failing_or_slow_piece)
    dest = tmp_path / "out"
    # workers in this process, so that they run the patched function
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=":0"):
        with pytest.raises(ValueError, match="partition 0 is bad"):
            fdask.score_parquet(source, dest, CONFIG, split_row_groups=True)
        assert _PIECE_ENDED.is_set()
    assert not dest.exists() and os.listdir(tmp_path) == []


def test_score_parquet_verifies_pages_and_the_action_count(client, source, tmp_path):
    """What the single-process path guarantees holds on this path too: a
    page that does not match its checksum is refused naming the file, and
    an m larger than the actions present is refused (without statistics:
    once the partitions are scored); nothing is published."""
    from test_checksums import corrupt
    bad = corrupt(source, tmp_path / "bad.parquet", at=0.5)
    with pytest.raises(scoring.UnreadableFileError, match="bad.parquet"):
        fdask.score_parquet(bad, tmp_path / "out", CONFIG)
    assert sorted(os.listdir(tmp_path)) == ["bad.parquet"]
    bad.unlink()
    six = ScoreConfig(m=6, rules=("shapley",))
    with pytest.raises(ActionCountError, match="m = 6 is more than the 5 actions"):
        fdask.score_parquet(source, tmp_path / "out", six)
    pq.write_table(pq.read_table(source), tmp_path / "nostats.parquet",
                   write_statistics=False, row_group_size=700)
    with pytest.raises(ActionCountError, match="m = 6 is more than the 5 actions"):
        fdask.score_parquet(tmp_path / "nostats.parquet", tmp_path / "out", six,
                            split_row_groups=True)
    assert sorted(os.listdir(tmp_path)) == ["nostats.parquet"]


def test_no_private_attributes():
    text = open(fdask.__file__).read()
    assert "._meta" not in text and "from_map" not in text
