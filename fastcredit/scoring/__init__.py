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
the request key and the pass-through columns named in ``ScoreConfig.carry``;
list columns are ``fixed_size_list<double>``.

Nothing is changed silently. A malformed row is reported with its 0-based
row number in the whole input (files in order) and either stops the run
(``on_error="stop"``) or is skipped and counted (``"skip"``): a null
candidate list, a null candidate or null field, invalid list offsets, an
``action`` or ``ad_id`` that is not an integer of int64 (a float 0.7, 1e30, a
uint64 above 2**63 - 1), an action out of range, candidates not grouped by
action, a non-finite score or prerank, an integer score that float64 cannot
hold exactly, a null key or base advantage. A column of the wrong type is a
TypeError naming the column. Only what the computation uses is read and
checked: the prerank field only with ``capacity``, which is its only use.

Input (:func:`score_parquet`): a Parquet file, a directory (``*.parquet``
below it, hidden files and ``_*`` skipped, hive ``key=value`` directories give
partition columns that ``carry`` can name), a glob, a list of those, a
``pyarrow.dataset.FileSystemDataset``, or URIs of any filesystem pyarrow
opens (``s3://...``). Output: one file, or a directory of files mirroring the
input files when ``destination`` ends with ``/`` or is a directory; written
to a temporary name and renamed into place only when complete, so a failed
run leaves nothing. Reading and decoding (pyarrow's threads, a bounded
read-ahead), the kernels and encoding and writing run at the same time, with
bounded queues between them.

Data cannot rot silently: every page written (scores, and ``fastcredit
synth``'s requests) carries a CRC-32 checksum, and every page read is
verified against its checksum; a file changed after it was written is
refused naming it (:class:`UnreadableFileError`). A file written without
checksums (pyarrow writes none by default) cannot be verified: it is read
as it is. ``ScoreConfig.m`` larger than the actions present in the data is
refused (:class:`ActionCountError`). See docs/scoring.md.

Requires the optional extra ``fastcredit[parquet]`` (pyarrow).

The package: :mod:`.config` (what a run computes and reports),
:mod:`.arrow` (Arrow batches to checked pools to scored batches),
:mod:`.files` (datasets in, files out), :mod:`.pipeline` (the overlapped
run, :func:`score_parquet`).
"""
from .arrow import pools_to_arrow, score_batch
from .config import (BATCH_ROWS, RULES, ActionCountError, MalformedRowError, ScoreConfig,
                     ScoreSummary, UnreadableFileError, _pa)
from .pipeline import score_parquet
# the stages' internals, for the tests and benchmarks that measure them alone
from .arrow import _BadRows, _check_rows, _pools  # noqa: E402,I001
from .config import _DECODE_ROWS, _READ_BUFFER  # noqa: E402
from .files import _leaves, _write_options  # noqa: E402

__all__ = ["ScoreConfig", "ScoreSummary", "MalformedRowError", "ActionCountError",
           "UnreadableFileError", "RULES", "score_batch",
           "score_parquet", "pools_to_arrow"]
