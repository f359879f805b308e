"""What a scoring run computes and reports: ScoreConfig, ScoreSummary,
MalformedRowError, the rules and the tuning constants of the pipeline."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import tables
from .._interrupts import interrupts_deferred
from .._params import (ACTIONS, CAPACITY, KAPPA, MODE, NORMALIZE, PRICING, RESERVE, RULE,
                       SCORE_BETA, SLOTS, THREADS, Integer)


RULES = {rule: getattr(tables, rule) for rule in RULE.values}

# not in fastcredit._params (yet): only batch scoring and its command line take it
BATCH_ROWS = Integer("batch_rows", 1, 1 << 26,
                     "requests per output row group (at most pyarrow's 2**26), which bounds "
                     "memory")

#: Requests decoded and scored at a time (at most ``batch_rows``). Decoding the
#: nested candidates column in batches of a whole 65,536-request row group
#: peaks at ~3x the batch (~700 MB) and is no faster; 16,384 peaks at ~0.2 GB.
_DECODE_ROWS = 16_384
#: Decoded batches read ahead of the kernels, and scored batches queued for
#: the writer (each side's queue); with _DECODE_ROWS this bounds memory.
_QUEUE_DEPTH = 2
#: Bytes the Parquet reader fetches at a time (no pre-buffering: see _read).
_READ_BUFFER = 4 << 20
_INT64_MAX = np.iinfo(np.int64).max


def _pa():
    """pyarrow, or an ImportError saying which extra installs it (the
    command line prints it as one line, exit status 2)."""
    try:
        with interrupts_deferred():
            import pyarrow
            import pyarrow.dataset  # noqa: F401
            import pyarrow.fs  # noqa: F401
            import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        raise ImportError("Parquet files need pyarrow, which is not installed: pip install "
                          "'fastcredit[parquet]'") from exc
    return pyarrow


class ActionCountError(ValueError):
    """``ScoreConfig.m`` is larger than the actions present in the input.

    No candidate of any request has an action above ``present - 1``, so the
    credit of actions ``present .. m - 1`` would be made up (a phantom action
    with zero credit). A :class:`ValueError`.

    Parameters
    ----------
    m : int
        The configured number of actions.
    present : int
        The actions present in the input (its largest action + 1).
    where : str
        What was read (the source), for the message.

    Attributes
    ----------
    m, present : int
        The two counts.
    where : str
        As given.

    Examples
    --------
    >>> from fastcredit.scoring import ActionCountError
    >>> err = ActionCountError(6, 5, "file 'requests.parquet'")
    >>> err.m, err.present, isinstance(err, ValueError)
    (6, 5, True)
    >>> print(err)  # doctest: +NORMALIZE_WHITESPACE
    m = 6 is more than the 5 actions present in file 'requests.parquet'
    (no candidate has an action above 4); score it with m = 5
    """

    def __init__(self, m: int, present: int, where: str):
        super().__init__(f"m = {m} is more than the {present} actions present in {where} "
                         f"(no candidate has an action above {present - 1}); score it with "
                         f"m = {present}")
        self.m = m
        self.present = present
        self.where = where

    def __reduce__(self):   # pickled by its arguments, so that it crosses processes (Dask)
        return type(self), (self.m, self.present, self.where)


class UnreadableFileError(ValueError):
    """An input file whose pages cannot be read.

    A page checksum that does not match (the file changed after it was
    written), or pages that do not decode. A :class:`ValueError`.

    Parameters
    ----------
    path : str
        The file.
    reason : str
        What is wrong with it.

    Attributes
    ----------
    path, reason : str
        As given.

    Examples
    --------
    >>> from fastcredit.scoring import UnreadableFileError
    >>> err = UnreadableFileError("requests.parquet", "a page checksum does not match")
    >>> err.path, str(err)
    ('requests.parquet', "file 'requests.parquet' cannot be read: a page checksum does not match")
    """

    def __init__(self, path: str, reason: str):
        super().__init__(f"file {path!r} cannot be read: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self):   # pickled by its arguments, so that it crosses processes (Dask)
        return type(self), (self.path, self.reason)


class MalformedRowError(ValueError):
    """A request row that cannot be scored. A :class:`ValueError`.

    Parameters
    ----------
    row : int
        Its 0-based number in the input (files in order).
    reason : str
        What is wrong with it.

    Attributes
    ----------
    row : int
        As given.
    reason : str
        As given.

    Examples
    --------
    >>> from fastcredit.scoring import MalformedRowError
    >>> err = MalformedRowError(11, "null candidate list")
    >>> err.row, str(err)
    (11, 'row 11: null candidate list')
    """

    def __init__(self, row: int, reason: str):
        super().__init__(f"row {row}: {reason}")
        self.row = row
        self.reason = reason

    def __reduce__(self):   # pickled by its arguments, so that it crosses processes (Dask)
        return type(self), (self.row, self.reason)


# the other fields of ScoreConfig with the declaration that checks each (key,
# candidates, base and carry name columns)
_CONFIG_FIELDS = (("shaping_rule", RULE), ("slots", SLOTS), ("reserve", RESERVE),
                  ("capacity", CAPACITY), ("pricing", PRICING), ("mode", MODE),
                  ("beta", SCORE_BETA),
                  ("kappa", KAPPA), ("normalize", NORMALIZE), ("threads", THREADS))


def _column_name(value, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a column name (str), got {type(value).__name__}")
    if not value:
        raise ValueError(f"{name} must be a non-empty column name")
    return value


@dataclass(frozen=True)
class ScoreConfig:
    """What to compute for each request (see :func:`score_parquet`).

    Every field is checked when the config is made, with the same declaration
    the command line builds its option from.

    Parameters
    ----------
    m : int
        Actions per request (1..16).
    rules : sequence of str
        Credit rules to output, from ``RULES`` ("shapley", "banzhaf",
        "singleton", "leave_one_out"); at least one.
    slots, reserve, capacity, pricing, mode
        The auction (see :func:`fastcredit.auction_replay`).
    key : str
        Request key column, copied to the output.
    candidates : str
        The list<struct<action, ...>> column; when the input has no such
        column, per-action columns ``action_0 .. action_{m-1}`` are read.
    base : str, optional
        Base-advantage column; when set, output ``advantage`` (B, m) =
        shape_advantages(base, credit[shaping_rule], beta, kappa, normalize).
    shaping_rule : str
        The rule whose credit is shaped into ``advantage``.
    beta : float
        Weight of the shaped credit, >= 0.
    kappa : float
        Bound of the zero-sum projection, >= 0.
    normalize : {"std", "maxabs", "none"}
        Scale of the centred credit (:func:`fastcredit.shape_advantages`).
    threads : int, optional
        Threads of the kernels (default: all cores).
    carry : sequence of str
        Further input columns copied to the output after the key (a hive
        partition key of the input counts as a column). The key and the
        carried columns must not be named like an output column (``table``, a
        rule, ``advantage``).

    Attributes
    ----------
    output_columns : tuple of str
        The computed output columns, in order (after the key and carry).

    Raises
    ------
    ValueError
        If a field is outside its range or not one of its values (``m``,
        ``slots``, ``reserve`` NaN, ``capacity``, ``pricing``, ``mode``,
        ``shaping_rule``, a rule, ``beta`` or ``kappa`` negative or infinite,
        ``normalize``, ``threads``); if ``rules`` is empty; if a column name is
        empty; or if the key or a carried column is named like an output
        column, or ``carry`` names a column twice or names the key.
    TypeError
        If an integer or real field has another type; if ``rules`` or
        ``carry`` is a string or not a sequence; or if a column name is not a
        string.

    Examples
    --------
    >>> from fastcredit.scoring import ScoreConfig
    >>> config = ScoreConfig(m=2, rules=("shapley", "banzhaf"), base="adv")
    >>> config.output_columns
    ('table', 'shapley', 'banzhaf', 'advantage')
    >>> ScoreConfig(m=2, carry=("table",))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: carry column 'table' has the name of an output column (table, ...
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
    carry: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "m", ACTIONS.check(self.m, "m"))
        if isinstance(self.rules, str) or not hasattr(self.rules, "__iter__"):
            raise TypeError(f"rules must be a sequence of rule names, got "
                            f"{type(self.rules).__name__}")
        rules = tuple(self.rules)
        if not rules:
            raise ValueError("rules must name at least one rule")
        object.__setattr__(self, "rules", tuple(RULE.check(r, "rules") for r in rules))
        for name, declared in _CONFIG_FIELDS:
            object.__setattr__(self, name, declared.check(getattr(self, name), name))
        _column_name(self.key, "key")
        _column_name(self.candidates, "candidates")
        if self.base is not None:
            _column_name(self.base, "base")
        if isinstance(self.carry, str) or not hasattr(self.carry, "__iter__"):
            raise TypeError(f"carry must be a sequence of column names, got "
                            f"{type(self.carry).__name__}")
        carry = tuple(_column_name(c, "carry") for c in self.carry)
        object.__setattr__(self, "carry", carry)
        outputs = self.output_columns
        for name, col in [("key", self.key)] + [("carry", c) for c in carry]:
            if col in outputs:
                raise ValueError(f"{name} column {col!r} has the name of an output column "
                                 f"({', '.join(outputs)}); rename it in the input")
        seen = {self.key}
        for col in carry:
            if col in seen:
                raise ValueError(f"carry names {col!r} twice or names the key")
            seen.add(col)

    @property
    def output_columns(self) -> tuple:
        """The computed output columns, in order (after the key and carry)."""
        return ("table",) + self.rules + (("advantage",) if self.base is not None else ())


@dataclass(frozen=True)
class ScoreSummary:
    """What a scoring run did (returned by :func:`score_parquet`).

    Parameters
    ----------
    rows : int
        Request rows read.
    scored : int
        Rows scored and written.
    skipped : int
        Malformed rows left out (``on_error="skip"``).
    seconds : float
        Wall time of the run.
    peak_rss_bytes : int
        Peak resident memory of the process.
    errors : list of (int, str)
        (row, reason) of the first skipped rows.

    Attributes
    ----------
    requests_per_second : float
        ``rows / seconds`` (inf for a run of no measurable time).

    Examples
    --------
    >>> from fastcredit.scoring import ScoreSummary
    >>> summary = ScoreSummary(rows=10, scored=9, skipped=1, seconds=2.0, peak_rss_bytes=0,
    ...                        errors=[(3, "null candidate list")])
    >>> summary.requests_per_second
    5.0
    """

    rows: int
    scored: int
    skipped: int
    seconds: float
    peak_rss_bytes: int
    errors: list = field(default_factory=list)  # (row, reason) of the first skipped rows

    @property
    def requests_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else float("inf")
