"""The Dask path on a real LocalCluster with two worker processes equals the
single-process path (optional extra: skipped without dask/distributed)."""
import numpy as np
import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import pyarrow.parquet as pq  # noqa: E402

import fastcredit.dask as fdask  # noqa: E402
from fastcredit import scoring  # noqa: E402
from fastcredit.cli import write_synthetic  # noqa: E402
from fastcredit.scoring import MalformedRowError, ScoreConfig  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def as_array(series):
    return np.stack([np.asarray(x) for x in series])


def test_dask_equals_single_process(client, tmp_path):
    src = tmp_path / "in.parquet"
    write_synthetic(src, 3000, seed=11, row_group=700)
    config = ScoreConfig(rules=("shapley", "leave_one_out"), base="base_advantage",
                         mode="rerun", pricing="gsp")
    scoring.score_parquet(src, tmp_path / "single.parquet", config)
    want = pq.read_table(tmp_path / "single.parquet")
    ddf = fdask.score(src, config)
    assert ddf.npartitions == 5
    got = ddf.compute().sort_values("request_id")
    assert got["request_id"].tolist() == want.column("request_id").to_pylist()
    for col in ("table", "shapley", "leave_one_out", "advantage"):
        assert np.array_equal(as_array(got[col]),
                              np.stack(want.column(col).to_numpy(zero_copy_only=False)))


def test_dask_reports_malformed_rows(client, tmp_path):
    import pyarrow as pa
    good = [{"action": 0, "ad_id": 1, "score": 2.0, "value": 1.0}]
    bad = [{"action": 3, "ad_id": 1, "score": 2.0, "value": 1.0}]
    table = pa.table({"request_id": pa.array([0, 1, 2], pa.int64()),
                      "candidates": pa.array([good, bad, good])})
    pq.write_table(table, tmp_path / "bad.parquet")
    config = ScoreConfig(m=2)
    with pytest.raises(MalformedRowError, match="action out of range.*partition 0"):
        fdask.score(tmp_path / "bad.parquet", config).compute()
    kept = fdask.score(tmp_path / "bad.parquet", config, on_error="skip").compute()
    assert kept["request_id"].tolist() == [0, 2]
    with pytest.raises(TypeError, match="data must be a dask DataFrame or a path"):
        fdask.score([1, 2, 3])
