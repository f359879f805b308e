"""Cluster-scale scoring with Dask: the single-process scorer of
:mod:`fastcredit.scoring` mapped over partitions, so the same code runs on a
laptop and on a cluster and gives the same output.

Each task scores with one kernel thread (``ScoreConfig.threads`` when set):
a worker runs as many tasks at once as it has threads, so a worker's tasks
together use its own thread budget, not every core of the machine each.

Requires the optional extra ``fastcredit[dask]`` (dask[dataframe],
distributed, pyarrow).
"""
from __future__ import annotations

import dataclasses
import os

try:
    import dask.dataframe as dd
    import pandas as pd
    import pyarrow as pa
    import pyarrow.dataset as pads
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("fastcredit.dask needs dask: pip install 'fastcredit[dask]'") from exc

from ._params import ON_ERROR
from ._validation import check_int
from .scoring.arrow import score_batch
from .scoring.config import _DECODE_ROWS, MalformedRowError, ScoreConfig
from .scoring.files import (_destination, _empty_batch, _open_columns, _read, _Source,
                            _write_options)
from .scoring.pipeline import _pipeline

__all__ = ["score", "score_parquet"]


def _to_arrow(df: "pd.DataFrame") -> "pa.Table":
    return pa.Table.from_pandas(df, preserve_index=False)


def _to_pandas(batches, schema) -> "pd.DataFrame":
    return pa.Table.from_batches(batches, schema=schema).to_pandas(types_mapper=pd.ArrowDtype)


def _task_config(config: ScoreConfig) -> ScoreConfig:
    """One kernel thread per task unless the config names a count."""
    if not isinstance(config, ScoreConfig):
        raise TypeError(f"config must be a ScoreConfig, got {type(config).__name__}")
    return config if config.threads is not None else dataclasses.replace(config, threads=1)


def _score_partition(df, config, on_error, partition_info=None):
    number = None if partition_info is None else partition_info.get("number")
    try:
        out, _ = score_batch(_to_arrow(df), config, on_error=on_error)
    except MalformedRowError as err:
        raise MalformedRowError(err.row, f"{err.reason} (partition {number}, row numbered "
                                f"within the partition)") from err
    return _to_pandas([out], out.schema)


@dataclasses.dataclass(frozen=True)
class _Part:
    """Row groups of one input file, and the input row number of its first row."""
    number: int
    file: int
    row_groups: tuple
    first_row: int


def _score_part(part: _Part, source: _Source, config: ScoreConfig, on_error: str, schema):
    """The scored rows of one part: the next batch is read and decoded while
    this one is scored, as in the single-process pipeline."""
    def work(item):
        _, batch, first = item
        try:
            out, _ = score_batch(batch, config, first_row=part.first_row + first,
                                 on_error=on_error)
        except MalformedRowError as err:
            raise MalformedRowError(err.row, f"{err.reason} (partition {part.number})") \
                from err
        return out.cast(schema) if not out.schema.equals(schema) else out

    outs = []
    _pipeline(_read(source, config, _DECODE_ROWS, files=[part.file],
                    row_groups=part.row_groups), work, outs.append)
    return _to_pandas(outs, schema)


def _parts(source: _Source, split_row_groups) -> list:
    """One part per row group (True), per ``split_row_groups`` row groups
    (an int), or per file (False); row numbers count across the input."""
    if split_row_groups is True:
        step = 1
    elif split_row_groups is False:
        step = None
    else:
        step = check_int(split_row_groups, "split_row_groups", lo=1)
    parts, first = [], 0
    for index, file in enumerate(source.files):
        meta = source.open(file).metadata
        counts = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
        size = step or max(len(counts), 1)
        for g in range(0, max(len(counts), 1), size):
            groups = tuple(range(g, min(g + size, len(counts))))
            parts.append(_Part(len(parts), index, groups, first))
            first += sum(counts[i] for i in groups)
    return parts


def _meta(source: _Source, config: ScoreConfig):
    """The scored schema: the first file's columns, scored empty."""
    return score_batch(_empty_batch(*_open_columns(source, 0, config)), config)[0].schema


def _is_source(data) -> bool:
    return isinstance(data, (str, os.PathLike, list, tuple, pads.FileSystemDataset))


def score(data, config: ScoreConfig = ScoreConfig(), *, on_error: str = "stop",
          split_row_groups: bool | int = True) -> "dd.DataFrame":
    """Score every request of a Dask DataFrame or Parquet dataset, lazily.

    Parameters
    ----------
    data : dask.dataframe.DataFrame, or what :func:`fastcredit.scoring.score_parquet`
        reads (a file, directory, glob, URI, a list of them, a
        ``pyarrow.dataset.FileSystemDataset``)
        Requests in either layout of :mod:`fastcredit.scoring`. Files are read
        by the single-process reader, one partition per row group by default
        (``split_row_groups``: an int groups that many, False one per file),
        hive partition keys included, and row numbers in errors count across
        the whole input as in the single-process path.
    config : ScoreConfig
        What to compute (the same object the single-process path takes); each
        task uses ``config.threads`` kernel threads, default 1.
    on_error : {"stop", "skip"}
        Malformed rows stop the computation (the error names the row and the
        partition; for a DataFrame the row is numbered within the partition)
        or are left out.

    Returns
    -------
    dask.dataframe.DataFrame
        One row per scored request with the columns of
        :func:`fastcredit.scoring.score_batch` (Arrow-backed list columns);
        call ``.compute()``, or write it with :func:`score_parquet` (or
        ``.to_parquet(path, write_index=False)``: with the default
        ``write_index=True`` Dask adds a ``__null_dask_index__`` column).

    Examples
    --------
    >>> from distributed import Client, LocalCluster            # doctest: +SKIP
    >>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1))  # doctest: +SKIP
    >>> fastcredit.dask.score_parquet("requests/", "scored/")   # doctest: +SKIP
    """
    return _score(data, config, on_error, split_row_groups, "data")


def _score(data, config, on_error, split_row_groups, name: str):
    """:func:`score`, errors naming the argument ``name``."""
    on_error = ON_ERROR.check(on_error)
    task_config = _task_config(config)
    if isinstance(data, dd.DataFrame):
        meta_batch, _ = score_batch(_to_arrow(data._meta), task_config, on_error=on_error)
        meta = _to_pandas([meta_batch], meta_batch.schema)
        return data.map_partitions(_score_partition, task_config, on_error, meta=meta)
    if not isinstance(data, _Source) and not _is_source(data):
        raise TypeError(f"{name} must be a dask DataFrame or a path, URI, glob, list of them "
                        f"or a pyarrow dataset, got {type(data).__name__}")
    if not isinstance(split_row_groups, bool):
        check_int(split_row_groups, "split_row_groups", lo=1)
    source = data if isinstance(data, _Source) else _Source.resolve(data, name)
    schema = _meta(source, task_config)
    parts = _parts(source, split_row_groups)
    return dd.from_map(_score_part, parts, args=(source, task_config, on_error, schema),
                       meta=_to_pandas([], schema), label="fastcredit-score",
                       enforce_metadata=False)


def _part_name(number: int) -> str:
    return f"part-{number:05d}.parquet"


def score_parquet(source, destination, config: ScoreConfig = ScoreConfig(), *,
                  on_error: str = "stop", split_row_groups: bool | int = True) -> str:
    """Score ``source`` (see :func:`score`) on the current Dask scheduler into
    the directory ``destination``, one Parquet file per partition
    (``part-00000.parquet``, ...: partition order is name order) with exactly
    the columns of the single-process output. Like
    :func:`fastcredit.scoring.score_parquet` the destination is checked
    before any work (an input, or a directory holding one, is refused) and
    written under a temporary name that is renamed into place only when
    every partition is written. Returns the destination path."""
    if isinstance(source, dd.DataFrame):
        inputs = _Source(None, [], "", True)
    elif _is_source(source):
        inputs = source = _Source.resolve(source, "source")
    else:
        raise TypeError(f"source must be a dask DataFrame or a path, URI, glob, list of them "
                        f"or a pyarrow dataset, got {type(source).__name__}")
    if isinstance(destination, os.PathLike):
        destination = os.fspath(destination)
    if isinstance(destination, str) and not destination.endswith(("/", os.sep)):
        destination += "/"  # always a directory
    filesystem, output, _ = _destination(destination, inputs)  # checked before any work
    ddf = _score(source, config, on_error, split_row_groups, "source")
    with output as root:
        ddf.to_parquet(root, filesystem=filesystem, write_index=False, name_function=_part_name,
                       write_metadata_file=False,
                       **_write_options(pa.Schema.from_pandas(ddf._meta), config))
    return destination.rstrip("/")
