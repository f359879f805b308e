"""What a scoring run computes and reports: ScoreConfig, ScoreSummary,
MalformedRowError, the rules and the tuning constants of the pipeline."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import tables
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
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        raise ImportError("Parquet files need pyarrow, which is not installed: pip install "
                          "'fastcredit[parquet]'") from exc
    return pyarrow


class ActionCountError(ValueError):
    """``ScoreConfig.m`` is larger than the actions present in the input: no
    candidate of any request has an action above ``present - 1``, so the
    credit of actions ``present .. m - 1`` would be made up (a phantom
    action with zero credit). ``m`` and ``present`` are the two counts."""

    def __init__(self, m: int, present: int, where: str):
        super().__init__(f"m = {m} is more than the {present} actions present in {where} "
                         f"(no candidate has an action above {present - 1}); score it with "
                         f"m = {present}")
        self.m = m
        self.present = present


class UnreadableFileError(ValueError):
    """An input file whose pages cannot be read: a page checksum that does
    not match (the file changed after it was written), or pages that do not
    decode. ``path`` is the file."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"file {path!r} cannot be read: {reason}")
        self.path = path
        self.reason = reason


class MalformedRowError(ValueError):
    """A request row that cannot be scored; ``row`` is its 0-based number in
    the input."""

    def __init__(self, row: int, reason: str):
        super().__init__(f"row {row}: {reason}")
        self.row = row
        self.reason = reason


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

    m : actions per request (1..16).
    rules : credit rules to output, from ``RULES``.
    slots, reserve, capacity, pricing, mode : the auction (see auction_replay).
    key : request key column, copied to the output.
    candidates : the list<struct<action, ...>> column; when the input has no
        such column, per-action columns ``action_0 .. action_{m-1}`` are read.
    base : base-advantage column; when set, output ``advantage`` (B, m) =
        shape_advantages(base, credit[shaping_rule], beta, kappa, normalize);
        ``beta`` >= 0.
    carry : further input columns copied to the output after the key (a
        hive partition key of the input counts as a column).
    threads : threads of the kernels (default: all cores).

    The key and the carried columns must not be named like an output column
    (``table``, a rule, ``advantage``).
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
