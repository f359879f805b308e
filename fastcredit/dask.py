"""Cluster-scale scoring with Dask: the single-process scorer mapped over
partitions, so the same code runs on a laptop and on a cluster.

Requires the optional extra ``fastcredit[dask]`` (dask[dataframe],
distributed, pyarrow).
"""
from __future__ import annotations

import pathlib

try:
    import dask.dataframe as dd
    import pandas as pd
    import pyarrow as pa
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("fastcredit.dask needs dask: pip install 'fastcredit[dask]'") from exc

from ._params import ON_ERROR
from .scoring import MalformedRowError, ScoreConfig, score_batch

__all__ = ["score"]


def _to_arrow(df: "pd.DataFrame") -> "pa.Table":
    return pa.Table.from_pandas(df, preserve_index=False)


def _to_pandas(batch) -> "pd.DataFrame":
    return pa.Table.from_batches([batch]).to_pandas(types_mapper=pd.ArrowDtype)


def _score_partition(df, config, on_error, partition_info=None):
    number = None if partition_info is None else partition_info.get("number")
    try:
        out, _ = score_batch(_to_arrow(df), config, on_error=on_error)
    except MalformedRowError as err:
        raise MalformedRowError(err.row, f"{err.reason} (partition {number}, row numbered "
                                f"within the partition)") from err
    return _to_pandas(out)


def score(data, config: ScoreConfig = ScoreConfig(), *, on_error: str = "stop",
          split_row_groups: bool | int = True) -> "dd.DataFrame":
    """Score every request of a Dask DataFrame or Parquet dataset, lazily.

    Parameters
    ----------
    data : dask.dataframe.DataFrame or path
        Requests in either layout of :mod:`fastcredit.scoring`; a path (file
        or directory) is read with ``dask.dataframe.read_parquet`` using
        Arrow-backed dtypes, one partition per row group by default.
    config : ScoreConfig
        What to compute (the same object the single-process path takes).
    on_error : {"stop", "skip"}
        Malformed rows stop the computation (the error names the partition
        and the row within it) or are left out.

    Returns
    -------
    dask.dataframe.DataFrame
        One row per scored request with the columns of
        :func:`fastcredit.scoring.score_batch` (Arrow-backed list columns),
        built by ``map_partitions`` with an explicit ``meta``; call
        ``.compute()`` or ``.to_parquet(...)``.

    Examples
    --------
    >>> from distributed import Client, LocalCluster            # doctest: +SKIP
    >>> client = Client(LocalCluster(n_workers=2))                # doctest: +SKIP
    >>> fastcredit.dask.score("requests.parquet").to_parquet("scored/")  # doctest: +SKIP
    """
    on_error = ON_ERROR.check(on_error)
    if isinstance(data, (str, pathlib.Path)):
        data = dd.read_parquet(str(data), dtype_backend="pyarrow",
                               split_row_groups=split_row_groups)
    if not isinstance(data, dd.DataFrame):
        raise TypeError(f"data must be a dask DataFrame or a path, got {type(data).__name__}")
    meta_batch, _ = score_batch(_to_arrow(data._meta), config, on_error=on_error)
    meta = _to_pandas(meta_batch)
    return data.map_partitions(_score_partition, config, on_error, meta=meta)
