"""Cluster-scale scoring with Dask: the single-process scorer of
:mod:`fastcredit.scoring` mapped over partitions on the current Dask
scheduler, so the same code runs on a laptop and on a cluster and gives the
same output.

Frames as Dask makes them: :func:`score` takes any frame ``dd.read_parquet``
returns, with its default (NumPy/object) dtypes or ``dtype_backend="pyarrow"``
(``map_partitions``); each partition is converted to Arrow inside the
partition function. A path is read with ``dd.read_parquet`` itself
(Arrow-backed dtypes unless told otherwise), so its keyword arguments
(``filters``, ``columns``, ``storage_options``, ``blocksize``,
``split_row_groups``, ...) work as in Dask; only the columns scoring needs
are read.

:func:`score_parquet` of a path, with no ``dd.read_parquet`` option but
``split_row_groups`` and ``blocksize``, runs one Dask task per partition that
reads its row groups with fastcredit's own Parquet reader and writes its
output file, as the command line does: only the Parquet leaves scoring uses
are decoded (of the candidates, not ``prerank`` unless ``capacity`` is set),
pages are checksum-verified, no pandas frame is made, and an ``m`` larger
than the actions in the data is refused across partitions. With other
options, or a frame, it writes :func:`score`'s frame with ``to_parquet``.

Each task scores with one kernel thread (``ScoreConfig.threads`` when set):
a worker runs as many tasks at once as it has threads, so a worker's tasks
together use its own thread budget, not every core of the machine each.

What differs from the single-process path (docs/scoring.md): row numbers in
errors count within a partition. Through ``dd.read_parquet`` (:func:`score`,
and :func:`score_parquet` with its other options) Dask opens the files
itself and has no option to verify Parquet page checksums, so those pages
are not verified, and ``m`` larger than the actions in the data is not
detected across partitions. Every output of :func:`score_parquet` carries
page checksums like the command line's.

Requires the optional extra ``fastcredit[dask]`` (dask[dataframe],
distributed, pyarrow).
"""
from __future__ import annotations

import dataclasses
import os

try:
    import dask
    import dask.dataframe as dd
    import pandas as pd
    import pyarrow as pa
    import pyarrow.dataset as pads
    from dask.dataframe.utils import make_meta
    from dask.utils import parse_bytes
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("fastcredit.dask needs dask: pip install 'fastcredit[dask]'") from exc

from ._params import ON_ERROR
from .scoring.arrow import _GROUPED_FIELDS, _score as _score_batch, score_batch
from .scoring.config import ActionCountError, MalformedRowError, ScoreConfig, _DECODE_ROWS
from .scoring.files import (_actions_in_statistics, _destination, _open_columns,
                            _read as _read_batches, _Source, _write_options, _Writer,
                            needed_columns)
from .scoring.pipeline import _described

__all__ = ["score", "score_parquet"]


def _task_config(config: ScoreConfig) -> ScoreConfig:
    """One kernel thread per task unless the config names a count."""
    if not isinstance(config, ScoreConfig):
        raise TypeError(f"config must be a ScoreConfig, got {type(config).__name__}")
    return config if config.threads is not None else dataclasses.replace(config, threads=1)


def _candidate_type(with_action: bool):
    fields = [(f, pa.int64() if f in ("action", "ad_id") else pa.float64())
              for f in (_GROUPED_FIELDS if with_action else _GROUPED_FIELDS[1:])]
    return pa.list_(pa.struct(fields))


def _to_arrow(df: "pd.DataFrame", config: ScoreConfig) -> "pa.Table":
    """A partition as an Arrow table, whatever its dtypes: Arrow-backed
    columns as they are, object columns of lists of dicts (``dd.read_parquet``'s
    default) converted; a candidates column that is null in every row (no
    type to infer) becomes null lists of the candidates' type."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    lists = {config.candidates: True} | {f"action_{i}": False for i in range(config.m)}
    for name, with_action in lists.items():
        i = table.schema.get_field_index(name)
        if i >= 0 and pa.types.is_null(table.schema.field(i).type):
            table = table.set_column(i, name, pa.nulls(table.num_rows,
                                                       _candidate_type(with_action)))
    return table


def _computed_meta(config: ScoreConfig) -> dict:
    """The computed columns' (empty) series: fixed-size lists of doubles."""
    width = {"table": 1 << config.m}
    return {c: pd.Series([], dtype=pd.ArrowDtype(pa.list_(pa.float64(),
                                                           width.get(c, config.m))))
            for c in config.output_columns}


def _output_meta(meta: "pd.DataFrame", config: ScoreConfig) -> "pd.DataFrame":
    """The scored frame's meta: the key and carried columns as the input
    has them, then the computed columns."""
    out = meta[[config.key, *config.carry]].copy()
    for name, series in _computed_meta(config).items():
        out[name] = series.set_axis(out.index[:0])
    return out


def _in_partition(err: MalformedRowError, number) -> MalformedRowError:
    """A malformed row's error naming its partition."""
    return MalformedRowError(err.row, f"{err.reason} (partition {number}, row numbered "
                             f"within the partition)")


def _score_partition(df, config, on_error, partition_info=None):
    """The scored rows of one partition: the key and carried columns as
    they were (dtypes and index of the kept rows), the computed columns
    Arrow-backed."""
    number = None if partition_info is None else partition_info.get("number")
    try:
        out, problems = score_batch(_to_arrow(df, config), config, on_error=on_error)
    except MalformedRowError as err:
        raise _in_partition(err, number) from err
    keep = slice(None)
    if problems:
        keep = pd.Series(True, index=range(len(df)))
        keep.iloc[[row for row, _ in problems]] = False
        keep = keep.to_numpy()
    scored = df[[config.key, *config.carry]].iloc[keep].copy()
    for name in config.output_columns:
        scored[name] = pd.Series(pd.arrays.ArrowExtensionArray(out.column(name)),
                                 index=scored.index)
    return scored


def _is_source(data) -> bool:
    return isinstance(data, (str, os.PathLike, list, tuple, pads.FileSystemDataset))


def _read(data, read_parquet: dict, name: str = "data"):
    """``dd.read_parquet`` of a path, glob, URI, list or pyarrow dataset,
    Arrow-backed dtypes unless ``read_parquet`` says otherwise; its errors
    name the argument ``name`` and what it was."""
    kwargs = {"dtype_backend": "pyarrow", **read_parquet}
    if isinstance(data, pads.FileSystemDataset):
        kwargs.setdefault("filesystem", data.filesystem)
        data = list(data.files)
    elif isinstance(data, (list, tuple)):
        data = [os.fspath(d) if isinstance(d, os.PathLike) else d for d in data]
    else:
        data = os.fspath(data)
    try:
        return dd.read_parquet(data, **kwargs)
    except (ValueError, TypeError, OSError) as err:
        text = " ".join(str(err).split())
        try:
            named = type(err)(f"{name} {data!r} cannot be read by dd.read_parquet: {text}")
        except Exception:  # an exception type of other arguments
            named = ValueError(f"{name} {data!r} cannot be read by dd.read_parquet: {text}")
        raise named from err


def score(data, config: ScoreConfig = ScoreConfig(), *, on_error: str = "stop",
          **read_parquet) -> "dd.DataFrame":
    r"""Score every request of a Dask DataFrame or Parquet dataset, lazily.

    Each partition is scored as by :func:`fastcredit.scoring.score_batch`:
    the auction replay's coalition table :math:`y(S)` over the m actions of
    each request, each rule's credit of it and, with ``config.base``, the
    shaped advantages :math:`A_i = b + \beta z_i`.

    Parameters
    ----------
    data : dask.dataframe.DataFrame, or a path, directory, glob, URI, list of
        them or a ``pyarrow.dataset.FileSystemDataset``
        Requests in either layout of :mod:`fastcredit.scoring`, in a frame of
        any dtypes ``dd.read_parquet`` gives (its default NumPy/object ones
        or ``dtype_backend="pyarrow"``: each partition is converted to Arrow
        inside the partition function). A path is read with
        ``dd.read_parquet(data, dtype_backend="pyarrow", **read_parquet)``,
        the columns scoring needs only.
    config : ScoreConfig
        What to compute (the same object the single-process path takes); each
        task uses ``config.threads`` kernel threads, default 1.
    on_error : {"stop", "skip"}
        Malformed rows stop the computation (the error names the row,
        numbered within its partition, and the partition) or are left out.
    **read_parquet
        Keyword arguments of ``dask.dataframe.read_parquet`` for a path:
        ``filters``, ``columns``, ``storage_options``, ``blocksize``,
        ``split_row_groups``, ``dtype_backend``, ...

    Returns
    -------
    dask.dataframe.DataFrame
        One row per scored request: the key and carried columns as the input
        has them (dtypes and index of the kept rows), then ``table``, one
        column per rule and ``advantage`` (Arrow-backed fixed-size lists of
        doubles), as in :func:`fastcredit.scoring.score_batch`; call
        ``.compute()``, or write it with :func:`score_parquet` (or
        ``.to_parquet(path, write_index=False)``: with the default
        ``write_index=True`` Dask adds the index as a column).

    Raises
    ------
    TypeError
        If ``data`` is neither a frame nor a path, URI, glob, list of them or
        a pyarrow dataset; if ``config`` is not a ScoreConfig; or if
        ``read_parquet`` arguments are given with a frame.
    ValueError
        If ``on_error`` is not "stop" or "skip"; if a column scoring needs is
        missing (named); or if ``dd.read_parquet`` refuses the path or an
        option (its error, naming ``data``).
    MalformedRowError
        With ``on_error="stop"``, when the result is computed: the first
        malformed row, numbered within its partition (the partition is
        named).

    Examples
    --------
    >>> import os, tempfile
    >>> import pyarrow.parquet as pq
    >>> import fastcredit as fc
    >>> import fastcredit.dask
    >>> from fastcredit.scoring import ScoreConfig, pools_to_arrow
    >>> tmp = tempfile.TemporaryDirectory()
    >>> source = os.path.join(tmp.name, "requests.parquet")
    >>> pq.write_table(pools_to_arrow(fc.synthetic.sponsored_search(10, seed=1)), source)
    >>> scored = fastcredit.dask.score(source, ScoreConfig(m=5))
    >>> list(scored.columns)
    ['request_id', 'table', 'shapley']
    >>> frame = scored.compute(scheduler="synchronous")
    >>> len(frame), frame["request_id"].tolist()[:3]
    (10, [0, 1, 2])
    >>> tmp.cleanup()

    On a cluster, with the arguments of ``dd.read_parquet``::

        from distributed import Client, LocalCluster
        client = Client(LocalCluster(n_workers=2, threads_per_worker=1))
        fastcredit.dask.score_parquet("requests/", "scored/", ScoreConfig(m=5),
                                      filters=[("day", "=", 3)])
    """
    return _score(data, config, on_error, read_parquet, "data")


def _score(data, config, on_error, read_parquet: dict, name: str):
    """:func:`score`, errors naming the argument ``name``."""
    on_error = ON_ERROR.check(on_error)
    task_config = _task_config(config)
    if isinstance(data, dd.DataFrame):
        if read_parquet:
            raise TypeError(f"{sorted(read_parquet)[0]!r} is an argument of dd.read_parquet: "
                            f"{name} is a DataFrame already")
        frame = data
    elif _is_source(data):
        frame = _read(data, read_parquet, name)
    else:
        raise TypeError(f"{name} must be a dask DataFrame or a path, URI, glob, list of them "
                        f"or a pyarrow dataset, got {type(data).__name__}")
    meta = make_meta(frame)
    needed = needed_columns(list(meta.columns), task_config, name,
                            f"columns: {list(meta.columns)}")
    if list(meta.columns) != needed:
        frame = frame[needed]   # only these are read
        meta = make_meta(frame)
    return frame.map_partitions(_score_partition, task_config, on_error,
                                meta=_output_meta(meta, task_config),
                                enforce_metadata=False)


def _part_name(number: int) -> str:
    return f"part-{number:05d}.parquet"


#: The ``dd.read_parquet`` options :func:`score_parquet`'s own reader takes.
_OWN_READER_OPTIONS = frozenset({"split_row_groups", "blocksize"})


def _pieces(source: _Source, split_row_groups="infer", blocksize="256 MiB") -> list:
    """(file index, its row groups or None for all) of each partition, by
    the rules of ``dd.read_parquet``'s options applied to each file:
    ``split_row_groups`` True, one row group a partition; an integer n, n
    consecutive row groups; False, the whole file; "adaptive", consecutive
    row groups while their uncompressed size (Parquet's ``total_byte_size``)
    stays within ``blocksize`` (at least one; the whole file when
    ``blocksize`` is None); "infer", "adaptive" for a file larger than twice
    ``blocksize``, else the whole file. Files are never gathered."""
    if not (isinstance(split_row_groups, bool) or split_row_groups in ("infer", "adaptive")
            or (isinstance(split_row_groups, int) and split_row_groups >= 1)):
        raise ValueError(f"split_row_groups must be 'infer', 'adaptive', a bool or an integer "
                         f">= 1, got {split_row_groups!r}")
    if blocksize is not None:
        try:
            size = parse_bytes(blocksize)
        except (ValueError, TypeError, AttributeError):
            size = -1
        if isinstance(blocksize, bool) or size < 0:
            raise ValueError(f"blocksize must be a size in bytes (an int >= 0 or a string "
                             f"such as '256 MiB') or None, got {blocksize!r}")
        blocksize = size
    pieces = []
    for index, file in enumerate(source.files):
        meta = source.metadata(file)
        sizes = [meta.row_group(g).total_byte_size for g in range(meta.num_row_groups)]
        split = split_row_groups
        if split == "infer":
            split = "adaptive" if blocksize and sum(sizes) > 2 * blocksize else False
        if split == "adaptive" and not blocksize:
            split = False
        if split is False or not sizes:
            pieces.append((index, None))
        elif split == "adaptive":
            start, size = 0, 0
            for g, n in enumerate(sizes):
                if g > start and size + n > blocksize:
                    pieces.append((index, list(range(start, g))))
                    start, size = g, 0
                size += n
            pieces.append((index, list(range(start, len(sizes)))))
        else:
            step = 1 if split is True else split
            pieces += [(index, list(range(g, min(g + step, len(sizes)))))
                       for g in range(0, len(sizes), step)]
    return pieces


def _score_piece(source: _Source, index: int, row_groups, filesystem, path: str,
                 config: ScoreConfig, on_error: str, number: int) -> int:
    """Score partition ``number`` (``row_groups`` of file ``index``) into the
    Parquet file ``path`` as the single-process path does (its reader, 16,384
    requests decoded at a time, row groups of 65,536); the actions present
    in its good rows."""
    sink = _Writer(filesystem, path, False, source, config, 65_536, path)
    present = 0
    try:
        for i, batch, first in _read_batches(source, config, _DECODE_ROWS, files=[index],
                                             row_groups=row_groups):
            try:
                out, _, seen = _score_batch(batch, config, first_row=first, on_error=on_error)
            except MalformedRowError as err:
                raise _in_partition(err, number) from err
            present = max(present, seen)
            sink.write(i, out)
    except BaseException:
        sink.abandon()
        raise
    sink.close()
    return present


def _score_piece_settled(*args) -> tuple:
    """(_score_piece(*args), None), or (0, its exception): a task that
    raises makes dask.compute return while other tasks may still be writing
    into the directory being removed; returned, every task ends first."""
    try:
        return _score_piece(*args), None
    except Exception as err:
        return 0, err


def score_parquet(source, destination, config: ScoreConfig = ScoreConfig(), *,
                  on_error: str = "stop", **read_parquet) -> str:
    """Score ``source`` with Dask into a directory of Parquet files.

    The requests are scored as by :func:`score` (the coalition table
    :math:`y(S)` of each request, each rule's credit of it, the shaped
    advantages with ``config.base``) on the current Dask scheduler into the
    directory ``destination``, one file per partition named
    ``part-00000.parquet``, ... in partition order.

    A path with no ``dd.read_parquet`` option but ``split_row_groups`` and
    ``blocksize`` is scored by one task per partition, each reading its row
    groups with the single-process reader (only the Parquet leaves scoring
    uses; page checksums verified, :class:`~fastcredit.scoring.UnreadableFileError`
    naming the file) and writing its file; an ``m`` larger than the actions
    present is refused, from the files' statistics before any work, else
    once every partition is scored, before the output is published. The
    partitions follow the options' meaning in ``dd.read_parquet``, file by
    file: ``split_row_groups=True`` one row group each, an integer n
    consecutive row groups, False the whole file, "adaptive" consecutive row
    groups while their uncompressed size stays within ``blocksize``, and
    "infer" (the default) "adaptive" for a file over twice ``blocksize``
    (default 256 MiB), else the whole file. Otherwise (a frame, or other
    options) :func:`score`'s frame is written with ``to_parquet``.

    The command line writing into a directory names each output file after
    its input file; partitions are not files, so the names here are the
    partitions' numbers: with one partition per input file
    (``split_row_groups=False``, ``blocksize=None``) ``part-i`` holds the i-th
    input file in the source's (sorted) order. The files have exactly the
    columns of the single-process output and carry page checksums. Like
    :func:`fastcredit.scoring.score_parquet` the destination is checked
    before any work (an input, or a directory holding one, is refused) and
    written under a temporary name that is renamed into place only when
    every partition is written.

    Parameters
    ----------
    source : dask.dataframe.DataFrame, str, os.PathLike, list or pyarrow dataset
        The requests, as :func:`score` takes them: a frame, or a path,
        directory, glob, URI, list of them or a
        ``pyarrow.dataset.FileSystemDataset``.
    destination : str or os.PathLike
        The output directory (a trailing ``/`` is implied).
    config : ScoreConfig
        What to compute; each task uses ``config.threads`` kernel threads,
        default 1.
    on_error : {"stop", "skip"}
        Malformed rows stop the computation or are left out.
    **read_parquet
        Keyword arguments of ``dask.dataframe.read_parquet`` for a path
        (``filters``, ``columns``, ``storage_options``, ``blocksize``,
        ``split_row_groups``, ...).

    Returns
    -------
    str
        The destination directory's path (without a trailing ``/``).

    Raises
    ------
    TypeError
        If ``source`` is neither a frame nor a path, URI, glob, list of them or
        a pyarrow dataset; if ``destination`` is not a path or URI; if
        ``config`` is not a ScoreConfig; or if ``read_parquet`` arguments are
        given with a frame.
    ValueError
        If ``on_error`` is not "stop" or "skip"; if ``source`` names no file,
        or ``destination`` is empty or is (or holds) an input; if a column
        scoring needs is missing (named); if ``split_row_groups`` or
        ``blocksize`` is not a value ``dd.read_parquet`` takes; or if
        ``dd.read_parquet`` refuses the path or an option.
    ActionCountError
        If ``config.m`` is more than the actions present (read with
        fastcredit's reader); nothing is published.
    UnreadableFileError
        If a page read with fastcredit's reader does not match its checksum
        or does not decode (the file named); nothing is published.
    FileNotFoundError
        If a path of ``source`` does not exist or a glob matches no file.
    MalformedRowError
        With ``on_error="stop"``, for the first malformed row (numbered within
        its partition, the partition named); nothing is published.

    Examples
    --------
    >>> import os, tempfile
    >>> import dask
    >>> import pyarrow.parquet as pq
    >>> import fastcredit as fc
    >>> import fastcredit.dask
    >>> from fastcredit.scoring import ScoreConfig, pools_to_arrow
    >>> tmp = tempfile.TemporaryDirectory()
    >>> source = os.path.join(tmp.name, "requests.parquet")
    >>> pq.write_table(pools_to_arrow(fc.synthetic.sponsored_search(10, seed=1)), source)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     out = fastcredit.dask.score_parquet(source, os.path.join(tmp.name, "scored"),
    ...                                         ScoreConfig(m=5))
    >>> sorted(os.listdir(out)), pq.read_table(out).num_rows
    (['part-00000.parquet'], 10)
    >>> tmp.cleanup()
    """
    if isinstance(source, dd.DataFrame):
        inputs = _Source(None, [], "", True)
    elif _is_source(source):
        inputs = _Source.resolve(source, "source")
    else:
        raise TypeError(f"source must be a dask DataFrame or a path, URI, glob, list of them "
                        f"or a pyarrow dataset, got {type(source).__name__}")
    if isinstance(destination, os.PathLike):
        destination = os.fspath(destination)
    if isinstance(destination, str) and not destination.endswith(("/", os.sep)):
        destination += "/"  # always a directory
    filesystem, output, _ = _destination(destination, inputs)  # checked before any work
    if inputs.files and set(read_parquet) <= _OWN_READER_OPTIONS:
        on_error = ON_ERROR.check(on_error)
        task_config = _task_config(config)
        _open_columns(inputs, 0, config)  # the first file has the columns, before any work
        stated = _actions_in_statistics(inputs, config)
        where = f"source {_described(source)}"
        if stated is not None and 0 < stated < config.m:
            raise ActionCountError(config.m, stated, where)
        with output as root:
            tasks = [dask.delayed(_score_piece_settled, pure=False)(
                inputs, index, groups, filesystem, f"{root.rstrip('/')}/{_part_name(number)}",
                task_config, on_error, number)
                for number, (index, groups) in enumerate(_pieces(inputs, **read_parquet))]
            settled = dask.compute(*tasks)
            for _, err in settled:   # the first partition's error, once all have ended
                if err is not None:
                    raise err
            present = max((n for n, _ in settled), default=0)
            if 0 < present < config.m:   # before the output is published
                raise ActionCountError(config.m, present, where)
        return destination.rstrip("/")
    ddf = _score(source, config, on_error, read_parquet, "source")
    schema = pa.Schema.from_pandas(make_meta(ddf), preserve_index=False)
    with output as root:
        ddf.to_parquet(root, filesystem=filesystem, write_index=False, name_function=_part_name,
                       write_metadata_file=False, **_write_options(schema, config))
    return destination.rstrip("/")
