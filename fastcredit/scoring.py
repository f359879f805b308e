"""Batch scoring of logged requests: Parquet in, Parquet out, bounded memory.

A request row holds its candidates in one of two layouts:

* one column ``candidates`` of type ``list<struct<action, ad_id, score,
  value[, prerank]>>``, the candidates grouped by action (action ascending);
  its Arrow buffers go to the kernels as CSR without copying the values;
* one column per action, ``action_0 .. action_{m-1}``, each
  ``list<struct<ad_id, score, value[, prerank]>>`` (interleaved into CSR).

For every request the scorer replays the auction on all 2**m subsets of its
actions (:func:`fastcredit.auction_replay`), computes the chosen credit rules
on the coalition table and, when a base-advantage column is named, the shaped
per-action advantages (:func:`fastcredit.shape_advantages`). Output rows keep
the request key; list columns are ``fixed_size_list<double>``.

A malformed row (null candidate list, null field, action out of range,
candidates not grouped by action, non-finite score or prerank, null key or
base advantage) is reported with its 0-based row number in the input and
either stops the run (``on_error="stop"``) or is skipped and counted
(``"skip"``). Output is written to a temporary file beside the destination
and renamed into place only when complete, so a failed run leaves no file.

Requires the optional extra ``fastcredit[parquet]`` (pyarrow).
"""
from __future__ import annotations

import os
import pathlib
import resource
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from . import auction, shaping, tables
from ._params import (ACTIONS, BETA, CAPACITY, KAPPA, MODE, NORMALIZE, ON_ERROR, PRICING,
                      RESERVE, RULE, SLOTS, THREADS, Integer)
from ._progress import Stage

__all__ = ["ScoreConfig", "ScoreSummary", "MalformedRowError", "RULES", "score_batch",
           "score_parquet", "pools_to_arrow"]

RULES = {rule: getattr(tables, rule) for rule in RULE.values}

# not in fastcredit._params (yet): only batch scoring and its command line take it
BATCH_ROWS = Integer("batch_rows", 1, None, "requests per record batch, which bounds memory")


def _pa():
    try:
        import pyarrow
    except ImportError as exc:
        raise ImportError("Parquet scoring needs pyarrow: pip install 'fastcredit[parquet]'") \
            from exc
    return pyarrow


class MalformedRowError(ValueError):
    """A request row that cannot be scored; ``row`` is its 0-based number in
    the input."""

    def __init__(self, row: int, reason: str):
        super().__init__(f"row {row}: {reason}")
        self.row = row
        self.reason = reason


# the other fields of ScoreConfig with the declaration that checks each (key,
# candidates and base name columns: any string)
_CONFIG_FIELDS = (("shaping_rule", RULE), ("slots", SLOTS), ("reserve", RESERVE),
                  ("capacity", CAPACITY), ("pricing", PRICING), ("mode", MODE), ("beta", BETA),
                  ("kappa", KAPPA), ("normalize", NORMALIZE), ("threads", THREADS))


@dataclass(frozen=True)
class ScoreConfig:
    """What to compute for each request (see :func:`score_parquet`).

    m : actions per request (1..16).
    rules : credit rules to output, from ``RULES``.
    slots, reserve, capacity, pricing, mode : the auction (see auction_replay).
    key : request key column, copied to the output.
    candidates : the list<struct<action, ...>> column; when the input has no
        such column, per-action columns ``action_0 .. action_{m-1}`` are read.
    base : base-advantage column; when set, output ``advantage`` (B, m) =
        shape_advantages(base, credit[shaping_rule], beta, kappa, normalize).
    """

    m: int = 5
    rules: tuple = ("shapley",)
    slots: int = 4
    reserve: float = 0.0
    capacity: int | None = None
    pricing: str = "first"
    mode: str = "filter"
    key: str = "request_id"
    candidates: str = "candidates"
    base: str | None = None
    shaping_rule: str = "shapley"
    beta: float = 1.0
    kappa: float = 1.0
    normalize: str = "std"
    threads: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "m", ACTIONS.check(self.m, "m"))
        rules = tuple(self.rules)
        if not rules:
            raise ValueError("rules must name at least one rule")
        object.__setattr__(self, "rules", tuple(RULE.check(r, "rules") for r in rules))
        for name, declared in _CONFIG_FIELDS:
            object.__setattr__(self, name, declared.check(getattr(self, name), name))


@dataclass(frozen=True)
class ScoreSummary:
    """What a scoring run did."""

    rows: int
    scored: int
    skipped: int
    seconds: float
    peak_rss_bytes: int
    errors: list = field(default_factory=list)  # (row, reason) of the first skipped rows

    @property
    def requests_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else float("inf")


# --- Arrow -> Pools ----------------------------------------------------------

def _numpy(arr, name: str, dtype, bad: np.ndarray, owner: np.ndarray):
    """A primitive Arrow array as numpy (zero-copy when it has the dtype and
    no nulls); marks the owners of null slots in ``bad``."""
    if arr.null_count:
        valid = np.asarray(arr.is_valid())
        bad[owner[~valid]] = True
        arr = arr.fill_null(0)
    out = arr.to_numpy(zero_copy_only=False)
    if out.dtype.kind not in "iuf":
        raise TypeError(f"candidate field {name!r} must be numeric, got {arr.type}")
    return out.astype(dtype, copy=False)


def _list_parts(col, name: str):
    """(offsets relative to the values, values, null-row mask) of a list column."""
    pa = _pa()
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if not (pa.types.is_list(col.type) or pa.types.is_large_list(col.type)):
        raise TypeError(f"column {name!r} must be a list of structs, got {col.type}")
    offsets = np.asarray(col.offsets, dtype=np.int64)
    start, stop = int(offsets[0]), int(offsets[-1])
    values = col.values.slice(start, stop - start)
    if not pa.types.is_struct(values.type):
        raise TypeError(f"column {name!r} must be a list of structs, got {col.type}")
    null_row = np.asarray(col.is_null()) if col.null_count else np.zeros(len(col), bool)
    return offsets - start, values, null_row


def _fields(values, name: str, needed, bad, owner):
    out = {}
    for f in needed + ("prerank",):
        idx = values.type.get_field_index(f)
        if idx < 0:
            if f == "prerank":
                continue
            raise ValueError(f"column {name!r} has no field {f!r} (fields: "
                             f"{[values.type.field(i).name for i in range(values.type.num_fields)]})")
        dtype = np.int64 if f in ("action", "ad_id") else np.float64
        out[f] = _numpy(values.field(idx), f"{name}.{f}", dtype, bad, owner)
    return out


def _interleave(batch, m: int):
    """Candidates of per-action columns action_0..action_{m-1}, request-major."""
    parts = []
    n_rows = batch.num_rows
    counts = np.zeros((n_rows, m), dtype=np.int64)
    null_row = np.zeros(n_rows, bool)
    for i in range(m):
        name = f"action_{i}"
        if batch.schema.get_field_index(name) < 0:
            raise ValueError(f"input has neither a 'candidates' column nor {name!r}")
        offsets, values, nulls = _list_parts(batch.column(name), name)
        counts[:, i] = np.diff(offsets)
        null_row |= nulls
        parts.append((name, offsets, values))
    row_offsets = np.zeros(n_rows * m + 1, dtype=np.int64)
    np.cumsum(counts.ravel(), out=row_offsets[1:])
    n = int(row_offsets[-1])
    owner = np.repeat(np.arange(n_rows), counts.sum(1))
    bad = null_row.copy()
    merged = {}
    for i, (name, offsets, values) in enumerate(parts):
        lens = counts[:, i]
        row_of = np.repeat(np.arange(n_rows), lens)
        dest = (np.repeat(row_offsets[i:-1:m] - offsets[:-1], lens)
                + np.arange(len(values), dtype=np.int64))
        fields = _fields(values, name, ("ad_id", "score", "value"), bad, row_of)
        if merged and set(fields) != set(merged):
            raise ValueError(f"column {name!r} has fields {sorted(fields)}, "
                             f"action_0 has {sorted(merged)}")
        for f, arr in fields.items():
            merged.setdefault(f, np.empty(n, dtype=arr.dtype))[dest] = arr
    return row_offsets, merged, owner, bad, {}


def _grouped(batch, config):
    """Candidates of a list<struct<action, ...>> column (zero-copy values)."""
    m = config.m
    offsets, values, null_row = _list_parts(batch.column(config.candidates), config.candidates)
    n_rows = batch.num_rows
    lens = np.diff(offsets)
    owner = np.repeat(np.arange(n_rows), lens)
    bad = null_row.copy()
    fields = _fields(values, config.candidates, ("action", "ad_id", "score", "value"), bad, owner)
    action = fields.pop("action")
    reasons = {}
    out_of_range = (action < 0) | (action >= m)
    if out_of_range.any():
        for r in np.unique(owner[out_of_range]):
            reasons.setdefault(int(r), f"action out of range [0, {m})")
        bad[owner[out_of_range]] = True
        action = np.clip(action, 0, m - 1)
    if len(action) > 1:
        same_row = owner[1:] == owner[:-1]
        unsorted = same_row & (action[1:] < action[:-1])
        if unsorted.any():
            for r in np.unique(owner[1:][unsorted]):
                reasons.setdefault(int(r), "candidates are not grouped by action "
                                   "(action must be non-decreasing within a request)")
            bad[owner[1:][unsorted]] = True
    counts = np.bincount(owner * m + action, minlength=n_rows * m) if len(action) else \
        np.zeros(n_rows * m, dtype=np.int64)
    row_offsets = np.zeros(n_rows * m + 1, dtype=np.int64)
    np.cumsum(counts, out=row_offsets[1:])
    return row_offsets, fields, owner, bad, reasons


def _scalar_column(batch, name, dtype, bad):
    col = batch.column(name)
    if col.null_count:
        bad |= np.asarray(col.is_null())
        col = col.fill_null(0)
    return col.to_numpy(zero_copy_only=False).astype(dtype, copy=False)


def _check_rows(batch, config, first_row):
    """Pools and per-row problems of one record batch."""
    if batch.schema.get_field_index(config.key) < 0:
        raise ValueError(f"input has no key column {config.key!r}")
    if batch.schema.get_field_index(config.candidates) >= 0:
        row_offsets, fields, owner, bad, reasons = _grouped(batch, config)
    else:
        row_offsets, fields, owner, bad, reasons = _interleave(batch, config.m)
    for f in ("score", "prerank"):
        if f in fields:
            nonfinite = ~np.isfinite(fields[f])
            for r in np.unique(owner[nonfinite]):
                reasons.setdefault(int(r), f"{f} is not finite")
            bad[owner[nonfinite]] = True
    key_bad = np.zeros(batch.num_rows, bool)
    if batch.column(config.key).null_count:
        key_bad |= np.asarray(batch.column(config.key).is_null())
    base = None
    if config.base is not None:
        if batch.schema.get_field_index(config.base) < 0:
            raise ValueError(f"input has no base-advantage column {config.base!r}")
        base_bad = np.zeros(batch.num_rows, bool)
        base = _scalar_column(batch, config.base, np.float64, base_bad)
        for r in np.flatnonzero(base_bad):
            reasons.setdefault(int(r), f"{config.base} is null")
        bad |= base_bad
    for r in np.flatnonzero(key_bad):
        reasons.setdefault(int(r), f"{config.key} is null")
    bad |= key_bad
    for r in np.flatnonzero(bad):
        reasons.setdefault(int(r), "null candidate list or null candidate field")
    problems = [(first_row + r, reasons[r]) for r in sorted(reasons)]
    return row_offsets, fields, owner, bad, base, problems


def _drop_rows(row_offsets, fields, owner, bad, m):
    keep_cand = ~bad[owner]
    counts = np.diff(row_offsets).reshape(-1, m)[~bad]
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts.ravel(), out=offsets[1:])
    return offsets, {f: a[keep_cand] for f, a in fields.items()}


def _fixed_size(flat: np.ndarray, width: int):
    pa = _pa()
    return pa.FixedSizeListArray.from_arrays(pa.array(flat.reshape(-1)), width)


def score_batch(batch, config: ScoreConfig = ScoreConfig(), *, first_row: int = 0,
                on_error: str = "stop"):
    """Score one Arrow record batch (or table) of requests.

    Returns ``(scored, problems)``: a ``pyarrow.RecordBatch`` with the key,
    ``table`` (2**m values per row), one column per rule (m values) and
    ``advantage`` when ``config.base`` is set; and the list of (row, reason)
    of malformed rows, which were left out (``on_error="skip"``). With
    ``on_error="stop"`` the first malformed row raises MalformedRowError.
    """
    pa = _pa()
    on_error = ON_ERROR.check(on_error)
    if isinstance(batch, pa.Table):
        batch = batch.combine_chunks().to_batches()[0] if batch.num_rows else \
            pa.RecordBatch.from_pylist([], schema=batch.schema)
    m = config.m
    row_offsets, fields, owner, bad, base, problems = _check_rows(batch, config, first_row)
    if problems and on_error == "stop":
        raise MalformedRowError(*problems[0])
    keys = batch.column(config.key)
    if bad.any():
        row_offsets, fields = _drop_rows(row_offsets, fields, owner, bad, m)
        keep = ~bad
        keys = keys.filter(pa.array(keep))
        base = None if base is None else base[keep]
    pools = auction.Pools(row_offsets, fields["ad_id"], fields["score"], fields["value"], m=m,
                          prerank=fields.get("prerank"))
    table = auction.auction_replay(pools, slots=config.slots, reserve=config.reserve,
                                   capacity=config.capacity, pricing=config.pricing,
                                   mode=config.mode, threads=config.threads)
    columns = {config.key: keys, "table": _fixed_size(table, 1 << m)}
    credit = {}
    for rule in dict.fromkeys(config.rules + ((config.shaping_rule,) if base is not None else ())):
        credit[rule] = RULES[rule](table, threads=config.threads)
    for rule in config.rules:
        columns[rule] = _fixed_size(credit[rule], m)
    if base is not None:
        adv = shaping.shape_advantages(base, credit[config.shaping_rule], beta=config.beta,
                                       kappa=config.kappa, normalize=config.normalize,
                                       threads=config.threads)
        columns["advantage"] = _fixed_size(adv, m)
    return pa.RecordBatch.from_pydict(columns), problems


# --- files -------------------------------------------------------------------

class _AtomicParquet:
    """A ParquetWriter on a temporary file beside ``destination``, renamed
    into place on a clean exit and removed on any exception, so readers never
    see a half-written file."""

    def __init__(self, destination):
        self.destination = pathlib.Path(destination)
        self.tmp = self.destination.with_name(f".{self.destination.name}.{os.getpid()}.tmp")
        self.writer = None

    def write(self, table_or_batch, **kwargs):
        import pyarrow.parquet as pq
        if self.writer is None:
            self.writer = pq.ParquetWriter(str(self.tmp), table_or_batch.schema)
        if table_or_batch.num_rows:
            self.writer.write(table_or_batch, **kwargs)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.writer is not None:
            self.writer.close()
        if exc_type is None:
            os.replace(self.tmp, self.destination)
        else:
            self.tmp.unlink(missing_ok=True)
        return False


def _parquet_files(source: pathlib.Path) -> list:
    """The Parquet files of a file or dataset directory, in a fixed order."""
    if source.is_dir():
        files = sorted(p for p in source.rglob("*.parquet") if not p.name.startswith("."))
        if not files:
            raise ValueError(f"source {str(source)!r} holds no .parquet files")
        return files
    return [source]


def _record_batches(files, batch_rows: int):
    """Record batches of every file in turn, one row group in memory at a
    time. pre_buffer=False: with pre-buffering the reader keeps every column
    chunk it has fetched until the file is closed (memory grew by a row group
    per batch on a 16 GB file), and a dataset scanner's read-ahead buffers many
    row groups whenever the kernels are the slower side."""
    import pyarrow.parquet as pq
    for path in files:
        yield from pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=batch_rows)


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def score_parquet(source, destination, config: ScoreConfig = ScoreConfig(), *,
                  on_error: str = "stop", batch_rows: int = 65_536,
                  progress: bool | None = None, max_errors_kept: int = 100) -> ScoreSummary:
    """Score a Parquet file or dataset (directory) into one Parquet file.

    Streams record batches of at most ``batch_rows`` requests, one row group
    in memory at a time, so memory is bounded by a row group and a batch
    whatever the input size (a directory is read file by file, in sorted
    order, and row numbers count across files); the kernels use
    ``config.threads`` threads (default all cores). The output is written to
    a temporary file beside ``destination`` and renamed into place at the
    end; on any error it is removed and the error re-raised.

    Returns a :class:`ScoreSummary` (rows read, scored, skipped, seconds,
    peak resident memory of the process).
    """
    _pa()
    import pyarrow.parquet as pq
    on_error = ON_ERROR.check(on_error)
    batch_rows = BATCH_ROWS.check(batch_rows)
    source = pathlib.Path(source)
    destination = pathlib.Path(destination)
    if not source.exists():
        raise FileNotFoundError(f"source {str(source)!r} does not exist")
    files = _parquet_files(source)
    total = sum(pq.ParquetFile(path).metadata.num_rows for path in files)
    show = sys.stderr.isatty() if progress is None else progress
    rows = scored = skipped = 0
    errors = []
    t0 = time.perf_counter()
    with _AtomicParquet(destination) as sink, \
            Stage("score requests", total, sys.stderr if show else None) as bar:
        for batch in _record_batches(files, batch_rows):
            out, problems = score_batch(batch, config, first_row=rows, on_error=on_error)
            rows += batch.num_rows
            skipped += len(problems)
            errors.extend(problems[:max(0, max_errors_kept - len(errors))])
            sink.write(out)
            scored += out.num_rows
            bar.advance(batch.num_rows)
        if sink.writer is None:  # no batches at all: still write the schema
            schema = pq.ParquetFile(files[0]).schema_arrow
            sink.write(score_batch(schema.empty_table(), config)[0])
    return ScoreSummary(rows=rows, scored=scored, skipped=skipped,
                        seconds=time.perf_counter() - t0, peak_rss_bytes=_peak_rss_bytes(),
                        errors=errors)


def pools_to_arrow(pools, first_key: int = 0, key: str = "request_id"):
    """The requests of ``pools`` as a pyarrow Table in the ``candidates``
    layout (keys first_key, first_key + 1, ...)."""
    pa = _pa()
    m = pools.m
    counts = np.diff(pools.offsets)
    action = np.tile(np.arange(m, dtype=np.int8), pools.n_requests).repeat(counts)
    struct_fields = [pa.array(action), pa.array(pools.ad_id), pa.array(pools.score),
                     pa.array(pools.value)]
    names = ["action", "ad_id", "score", "value"]
    if pools.prerank is not None:
        struct_fields.append(pa.array(pools.prerank))
        names.append("prerank")
    values = pa.StructArray.from_arrays(struct_fields, names=names)
    request_offsets = pools.offsets[::m].astype(np.int64)
    candidates = pa.LargeListArray.from_arrays(pa.array(request_offsets), values)
    keys = pa.array(np.arange(first_key, first_key + pools.n_requests, dtype=np.int64))
    return pa.table({key: keys, "candidates": candidates})

