"""The overlapped pipeline: reading and decoding, the kernels, encoding and
writing run at once with bounded queues; score_parquet."""
from __future__ import annotations

import os
import queue
import resource
import sys
import threading
import time

from .._params import ON_ERROR
from .._progress import Stage
from .._validation import check_bool, check_int
from .arrow import _score
from .config import (ActionCountError, BATCH_ROWS, ScoreConfig, ScoreSummary, _DECODE_ROWS,
                     _QUEUE_DEPTH, _pa)
from .files import _Source, _Writer, _actions_in_statistics, _destination, _open_columns, _read


# --- the pipeline ------------------------------------------------------------

class _Failed:
    def __init__(self, exc: BaseException):
        self.exc = exc


_DONE = object()


def _put(q: queue.Queue, item, stop: threading.Event) -> bool:
    while not stop.is_set():
        try:
            q.put(item, timeout=0.05)
            return True
        except queue.Full:
            pass
    return False


def _get(q: queue.Queue, stop: threading.Event):
    while True:
        try:
            return q.get(timeout=0.05)
        except queue.Empty:
            if stop.is_set():
                return _DONE


def _pipeline(items, work, write, depth: int = _QUEUE_DEPTH):
    """``write(work(x))`` for every x of the iterable ``items``, in order:
    ``items`` is iterated in a reader thread and ``write`` called in a writer
    thread, each ``depth`` items at most ahead of or behind ``work`` (this
    thread). An exception in any of the three stops the others and is
    raised here."""
    stop = threading.Event()
    read_q: queue.Queue = queue.Queue(depth)
    write_q: queue.Queue = queue.Queue(depth)
    failed: list = []

    def reader():
        try:
            for x in items:
                if not _put(read_q, x, stop):
                    return
            _put(read_q, _DONE, stop)
        except BaseException as exc:  # delivered to the main thread
            _put(read_q, _Failed(exc), stop)

    def writer():
        try:
            while True:
                y = _get(write_q, stop)
                if y is _DONE or stop.is_set():
                    return
                write(y)
        except BaseException as exc:
            failed.append(exc)
            stop.set()

    threads = [threading.Thread(target=reader, name="fastcredit-read", daemon=True),
               threading.Thread(target=writer, name="fastcredit-write", daemon=True)]
    for t in threads:
        t.start()
    try:
        while True:
            x = _get(read_q, stop)
            if x is _DONE:
                break
            if isinstance(x, _Failed):
                raise x.exc
            if not _put(write_q, work(x), stop):
                break
        _put(write_q, _DONE, stop)
        threads[1].join()
        if failed:
            raise failed[0]
    except BaseException:
        stop.set()
        raise
    finally:
        stop.set()
        for t in threads:
            t.join()


def _peak_rss_bytes() -> int:
    """Peak resident memory of this process: Linux's VmHWM (ru_maxrss also
    counts the memory of the process this one was forked from, which Linux
    keeps across exec), else ru_maxrss."""
    try:
        with open("/proc/self/status") as status:
            kib = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
        return int(kib) * 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _described(source) -> str:
    """``source`` as an error names it."""
    if isinstance(source, (str, os.PathLike)):
        return repr(os.fspath(source))
    if isinstance(source, (list, tuple)):
        return repr([os.fspath(s) if isinstance(s, os.PathLike) else s for s in source])
    return "(the dataset)"


def score_parquet(source, destination, config: ScoreConfig = ScoreConfig(), *,
                  on_error: str = "stop", batch_rows: int = 65_536,
                  progress: bool | None = None, max_errors_kept: int = 100,
                  pipeline: bool = True) -> ScoreSummary:
    r"""Score a Parquet dataset into Parquet.

    Every request is scored as by :func:`score_batch`: the auction replay's
    coalition table :math:`y(S)` over its m actions, each rule's credit of it,
    and with ``config.base`` the shaped advantages
    :math:`A_i = b + \beta z_i`.

    Row numbers (errors, ``ScoreSummary.errors``) count across the whole
    input in order. Reading and decoding (pyarrow's threads, up to
    ``2 x 16,384`` requests read ahead), the kernels (``config.threads``,
    default all cores) and encoding and writing run at the same time; at most
    ``min(batch_rows, 16,384)`` requests are decoded and scored at a time and
    output row groups hold ``batch_rows`` requests, so memory is bounded
    whatever the input size.

    Every page of the output carries a CRC-32 checksum, and the checksums
    of the input's pages are verified as they are read: a page that does not
    match (a file changed after it was written) or does not decode stops
    the run with :class:`UnreadableFileError` naming the file. Files written
    without checksums (pyarrow's default before, and most other writers)
    cannot be verified and are read as they are.

    ``config.m`` must be the number of actions in the data: a run whose
    candidates' largest action is below ``m - 1`` is refused
    (:class:`ActionCountError`, naming both counts) before any work when
    the files' statistics of ``action`` say so (``fastcredit synth`` writes
    them), else at its end, its output discarded, rather than giving every
    request phantom actions of zero credit; an action of ``m`` or more is a
    malformed row.

    Parameters
    ----------
    source : str, os.PathLike, list or pyarrow.dataset.FileSystemDataset
        A file, a directory (its ``*.parquet`` files, hidden and ``_*`` ones
        skipped, in natural order; hive ``key=value`` directories give
        partition columns ``config.carry`` can name), a glob (``*``, ``?``,
        ``[..]``, ``**``), a list of those (in the given order), a
        ``pyarrow.dataset.FileSystemDataset``, or URIs of any filesystem
        pyarrow opens.
    destination : str or os.PathLike
        One Parquet file, or, when it ends with ``/`` or is a directory, a
        directory with one file per input file at the input's path below the
        source's base directory. It is checked before any work (an input, or
        a directory holding one, is refused), written under a temporary name
        and renamed into place at the end, and removed on any error.
    config : ScoreConfig
        What to compute.
    on_error : {"stop", "skip"}
        A malformed row stops the run, or is skipped and counted.
    batch_rows : int
        Requests per output row group, 1..2**26.
    progress : bool, optional
        Show a progress bar on stderr (default: when stderr is a terminal).
    max_errors_kept : int
        Skipped rows whose (row, reason) ``ScoreSummary.errors`` keeps, >= 0.
    pipeline : bool
        Overlap reading, scoring and writing in threads (True), or run them
        one after another in this thread (False: the same output).

    Returns
    -------
    ScoreSummary
        Rows read, scored and skipped, seconds, peak resident memory of the
        process, and the first skipped rows' errors.

    Raises
    ------
    MalformedRowError
        With ``on_error="stop"``, for the first malformed row.
    ActionCountError
        If ``config.m`` is more than the actions present in the data.
    UnreadableFileError
        If a page of an input file does not match its checksum or does not
        decode.
    ValueError
        If ``on_error`` is not "stop" or "skip"; if ``batch_rows`` is outside
        1..2**26 or ``max_errors_kept`` negative; if ``source`` is empty, holds
        no .parquet files, mixes filesystems, names a file twice, or a file is
        not Parquet; if ``destination`` is empty or is (or holds) an input; or
        if a column scoring needs is missing (all subclasses above are
        ValueErrors too).
    TypeError
        If ``config`` is not a :class:`ScoreConfig`; if ``batch_rows`` or
        ``max_errors_kept`` is not an integer, or ``progress`` or ``pipeline``
        not a bool; if ``source`` or ``destination`` is not a path, URI, glob
        or list of them (or a dataset, for ``source``); or if a column has the
        wrong type (named).
    FileNotFoundError
        If a path of ``source`` does not exist or a glob matches no file.
    OSError
        If writing the destination fails (a full disk, a quota):
        :class:`fastcredit._output.WriteError`, naming the destination.
    ImportError
        If pyarrow is not installed (extra ``fastcredit[parquet]``).

    Examples
    --------
    >>> import os, tempfile
    >>> import pyarrow.parquet as pq
    >>> import fastcredit as fc
    >>> from fastcredit.scoring import ScoreConfig, pools_to_arrow, score_parquet
    >>> tmp = tempfile.TemporaryDirectory()
    >>> source = os.path.join(tmp.name, "requests.parquet")
    >>> pq.write_table(pools_to_arrow(fc.synthetic.sponsored_search(10, seed=1)), source)
    >>> destination = os.path.join(tmp.name, "scores.parquet")
    >>> summary = score_parquet(source, destination, ScoreConfig(m=5), progress=False)
    >>> summary.rows, summary.scored, summary.skipped
    (10, 10, 0)
    >>> pq.read_table(destination).column_names
    ['request_id', 'table', 'shapley']
    >>> tmp.cleanup()
    """
    _pa()
    start = time.perf_counter()
    on_error = ON_ERROR.check(on_error)
    batch_rows = BATCH_ROWS.check(batch_rows)
    max_errors_kept = check_int(max_errors_kept, "max_errors_kept", lo=0)
    pipeline = check_bool(pipeline, "pipeline")
    if not isinstance(config, ScoreConfig):
        raise TypeError(f"config must be a ScoreConfig, got {type(config).__name__}")
    show = sys.stderr.isatty() if progress is None else check_bool(progress, "progress")
    src = _Source.resolve(source)
    filesystem, output, directory = _destination(destination, src)
    counts = {"rows": 0, "scored": 0, "skipped": 0, "present": 0}
    errors: list = []
    with output as root:  # the destination is checked here, before any work
        _open_columns(src, 0, config)  # the first file has the columns, before any work
        stated = _actions_in_statistics(src, config)   # fastcredit synth writes them
        if stated is not None and 0 < stated < config.m:
            raise ActionCountError(config.m, stated, f"{src.name} {_described(source)}")
        total = sum(src.metadata(f).num_rows for f in src.files) if show else 0
        sink = _Writer(filesystem, root, directory, src, config, batch_rows, destination)
        with Stage("score requests", total, sys.stderr if show else None,
                   unit="requests") as bar:

            def work(item):
                index, batch, first_row = item
                out, problems, present = _score(batch, config, first_row=first_row,
                                                on_error=on_error)
                counts["present"] = max(counts["present"], present)
                counts["rows"] += batch.num_rows
                counts["skipped"] += len(problems)
                counts["scored"] += out.num_rows
                errors.extend(problems[:max(0, max_errors_kept - len(errors))])
                bar.advance(batch.num_rows)
                return index, out

            items = _read(src, config, min(batch_rows, _DECODE_ROWS))
            try:
                if pipeline:
                    _pipeline(items, work, lambda y: sink.write(*y))
                else:
                    for item in items:
                        sink.write(*work(item))
                if 0 < counts["present"] < config.m:   # before the output is published
                    raise ActionCountError(config.m, counts["present"], f"{src.name} "
                                           f"{_described(source)}")
            except BaseException:
                sink.abandon()
                raise
            sink.close()
    return ScoreSummary(rows=counts["rows"], scored=counts["scored"],
                        skipped=counts["skipped"], seconds=time.perf_counter() - start,
                        peak_rss_bytes=_peak_rss_bytes(), errors=errors)
