"""Arrow record batches of requests -> checked CSR pools -> scored batches,
and pools back to Arrow (the candidates layout)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import auction, shaping
from .._params import ON_ERROR
from .._validation import check_int, read_only
from .config import MalformedRowError, RULES, ScoreConfig, _INT64_MAX, _column_name, _pa


# --- Arrow -> Pools ----------------------------------------------------------
#
# Everything is checked over whole buffers; Python loops run over the bad
# rows only. The fast path of a clean batch of the candidates layout costs a
# few passes over the one-byte actions and one sum over each score column.

class _BadRows:
    """Which rows of a batch are malformed, and the first reason of each."""

    def __init__(self, n_rows: int):
        self.mask = np.zeros(n_rows, bool)
        self.reasons: dict = {}

    def rows(self, rows, reason) -> None:
        """Mark ``rows`` (indices, any order, repeats allowed); ``reason`` is
        a string or a function of the row."""
        rows = np.unique(np.asarray(rows, dtype=np.int64))
        self.mask[rows] = True
        for r in rows.tolist():
            if r not in self.reasons:
                self.reasons[r] = reason(r) if callable(reason) else reason

    def values(self, positions, offsets, describe) -> None:
        """Mark the rows owning the values at ``positions`` (sorted indices);
        ``describe(position)`` says what is wrong with the row's first bad
        value. With row ``offsets`` the values are candidates (the reason
        names the candidate's place in its request); None: one value a row."""
        if offsets is None:
            self.rows(positions, describe)
            return
        positions = np.asarray(positions, dtype=np.int64)
        owner = np.searchsorted(offsets, positions, side="right") - 1
        rows, first = np.unique(owner, return_index=True)
        self.mask[rows] = True
        for r, p in zip(rows.tolist(), positions[first].tolist()):
            if r not in self.reasons:
                self.reasons[r] = f"candidate {p - int(offsets[r])}: {describe(p)}"


def _numeric(arr, label: str):
    """The numpy values of a primitive Arrow array (dictionary-decoded), or
    TypeError naming ``label``."""
    pa = _pa()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t)):
        raise TypeError(f"{label} must be an integer or floating-point column, got {t}")
    return arr


def _nulls_filled(arr, offsets, bad: _BadRows, what: str):
    """``arr`` with nulls replaced by 0; their rows marked (``offsets`` None:
    one value per row)."""
    if not arr.null_count:
        return arr
    null = np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))
    bad.values(null, offsets, lambda p: f"{what} is null")
    return arr.fill_null(0)


def _int64_field(arr, label: str, short: str, offsets, bad: _BadRows,
                 own_width: bool = False) -> np.ndarray:
    """An integer candidate field as int64 (``own_width``: signed integers
    keep their width), never wrapped or truncated: uint64 values above
    2**63 - 1 and floats that are not whole numbers in the int64 range mark
    their rows."""
    arr = _nulls_filled(_numeric(arr, label), offsets, bad, short)
    x = arr.to_numpy(zero_copy_only=False)
    if x.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(x) & (x == np.trunc(x)) & (x >= -2.0**63) & (x < 2.0**63)
        if not ok.all():
            bad.values(np.flatnonzero(~ok), offsets,
                       lambda p: f"{short} {float(x[p])!r} is not an integer in the int64 range")
            x = np.where(ok, x, 0.0)
        return x.astype(np.int64)
    if x.dtype == np.uint64:
        over = x > _INT64_MAX
        if over.any():
            bad.values(np.flatnonzero(over), offsets,
                       lambda p: f"{short} {int(x[p])} does not fit in int64")
            x = np.where(over, 0, x)
    if own_width and x.dtype.kind == "i":
        return x
    return x.astype(np.int64, copy=False)


def _float64_field(arr, label: str, short: str, offsets, bad: _BadRows,
                   finite: bool) -> np.ndarray:
    """A real field as float64: integers only when float64 holds them exactly
    (|x| <= 2**53), non-finite values marked when ``finite``."""
    arr = _nulls_filled(_numeric(arr, label), offsets, bad, short)
    x = arr.to_numpy(zero_copy_only=False)
    if x.dtype.kind in "iu":
        inexact = (x > 2**53) | ((x < -2**53) if x.dtype.kind == "i" else False)
        if np.any(inexact):
            bad.values(np.flatnonzero(inexact), offsets,
                       lambda p: f"{short} {int(x[p])} is not exactly a float64")
    x = x.astype(np.float64, copy=False)
    # one sum finds any NaN or infinity (a sum of finite values can overflow
    # to inf: then the exact test below decides)
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add.reduce(x) if finite and x.size else 0.0
    if not np.isfinite(total):
        bad.values(np.flatnonzero(~np.isfinite(x)), offsets,
                   lambda p: f"{short} is not finite ({float(x[p])!r})")
    return x


def _list_column(col, name: str, bad: _BadRows):
    """(row offsets into the values, the struct values) of a list<struct>
    column; rows with null lists or invalid offsets are marked (the latter
    keep no candidates)."""
    pa = _pa()
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    t = col.type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)) \
            or not pa.types.is_struct(t.value_type):
        raise TypeError(f"column {name!r} must be a list of structs, got {t}")
    n_rows = len(col)
    offsets = col.offsets.to_numpy().astype(np.int64) if n_rows else np.zeros(1, np.int64)
    n_values = len(col.values)
    if n_rows and (offsets[0] < 0 or offsets[-1] > n_values
                   or np.any(offsets[1:] < offsets[:-1])):
        start, stop = offsets[:-1], offsets[1:]
        invalid = (start < 0) | (stop < start) | (stop > n_values)
        bad.rows(np.flatnonzero(invalid), lambda r: (
            f"invalid list offsets of {name!r}: {int(start[r])} .. {int(stop[r])} of "
            f"{n_values} values"))
        lens = np.where(invalid, 0, stop - start)
        new = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(lens, out=new[1:])
        take = np.repeat(start - new[:-1], lens) + np.arange(new[-1], dtype=np.int64)
        values = col.values.take(pa.array(take))
        offsets = new
    else:
        begin = int(offsets[0]) if n_rows else 0
        stop = int(offsets[-1]) if n_rows else 0
        values = col.values.slice(begin, stop - begin)
        offsets = offsets - begin
    if col.null_count:
        bad.rows(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False)),
                 "null candidate list")
    if values.null_count:
        bad.values(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False)),
                   offsets, lambda p: "null candidate")
    return offsets, values


_INT_FIELDS = ("action", "ad_id")
_GROUPED_FIELDS = ("action", "ad_id", "score", "value")


def _struct_fields(values, name: str, needed, offsets, bad: _BadRows, prerank: bool) -> dict:
    """The fields ``needed`` (and, with ``prerank``, prerank when present) of
    the candidates as numpy arrays: action and ad_id int64 (action in its own
    width), score, value and prerank float64. Without capacity the prerank
    plays no part, so it is neither read nor checked."""
    t = values.type
    out = {}
    for f in needed + (("prerank",) if prerank else ()):
        idx = t.get_field_index(f)
        if idx < 0:
            if f == "prerank":
                continue
            raise ValueError(f"column {name!r} has no field {f!r} (fields: "
                             f"{[t.field(i).name for i in range(t.num_fields)]})")
        child = values.field(idx)
        label = f"field {f!r} of column {name!r}"
        if f in _INT_FIELDS:
            out[f] = _int64_field(child, label, f, offsets, bad, own_width=f == "action")
        else:
            out[f] = _float64_field(child, label, f, offsets, bad, finite=f != "value")
    return out


def _action_groups(action: np.ndarray, offsets: np.ndarray, m: int, bad: _BadRows):
    """(counts (n_rows, m) of candidates per request and action, int64) of
    the candidates layout, marking actions out of range and rows whose
    actions decrease. Only the ~m group starts of each request are looked at
    once the one-byte actions have been compared with their neighbours."""
    n_rows = offsets.shape[0] - 1
    n = action.shape[0]
    counts = np.zeros((n_rows, m), dtype=np.int64)
    if n == 0:
        return counts
    lo, hi = action.min(), action.max()
    if lo < 0 or hi >= m:
        wrong = np.flatnonzero((action < 0) | (action >= m))
        bad.values(wrong, offsets, lambda p: f"action out of range [0, {m}): {int(action[p])}")
        action = np.clip(action, 0, m - 1)
    action = action.astype(np.int8, copy=False)  # in [0, m), m <= 16
    # a (request, action) group starts where the action changes or a request
    # starts (slot n catches the starts of empty requests at the end)
    is_start = np.empty(n + 1, bool)
    np.not_equal(action[1:], action[:-1], out=is_start[1:n])
    is_start[offsets[:-1]] = True
    starts = np.flatnonzero(is_start[:n])
    rows = np.repeat(np.arange(n_rows), np.diff(np.searchsorted(starts, offsets)))
    keys = rows * m + action[starts]
    sizes = np.diff(starts, append=n)
    back = np.flatnonzero(keys[1:] <= keys[:-1])
    if back.size:
        bad.rows(rows[back + 1], "candidates are not grouped by action (action must be "
                                 "non-decreasing within a request)")
    counts.reshape(-1)[keys] = sizes
    return counts


def _grouped(batch, config, bad: _BadRows):
    """Candidates of a list<struct<action, ...>> column (zero-copy values)."""
    offsets, values = _list_column(batch.column(config.candidates), config.candidates, bad)
    fields = _struct_fields(values, config.candidates, _GROUPED_FIELDS, offsets, bad,
                            config.capacity is not None)
    counts = _action_groups(fields.pop("action"), offsets, config.m, bad)
    return counts, np.diff(offsets), fields


def _interleave(batch, config, bad: _BadRows):
    """Candidates of per-action columns action_0..action_{m-1}, request-major."""
    m = config.m
    n_rows = batch.num_rows
    counts = np.zeros((n_rows, m), dtype=np.int64)
    parts = []
    for i in range(m):
        name = f"action_{i}"
        if batch.schema.get_field_index(name) < 0:
            raise ValueError(f"input has neither a {config.candidates!r} column nor {name!r}")
        offsets, values = _list_column(batch.column(name), name, bad)
        fields = _struct_fields(values, name, _GROUPED_FIELDS[1:], offsets, bad,
                                config.capacity is not None)
        if parts and set(fields) != set(parts[0][1]):
            raise ValueError(f"column {name!r} has fields {sorted(fields)}, "
                             f"action_0 has {sorted(parts[0][1])}")
        counts[:, i] = np.diff(offsets)
        parts.append((offsets, fields))
    row_offsets = np.zeros(n_rows * m + 1, dtype=np.int64)
    np.cumsum(counts.reshape(-1), out=row_offsets[1:])
    n = int(row_offsets[-1])
    merged = {}
    for i, (offsets, fields) in enumerate(parts):
        lens = counts[:, i]
        dest = (np.repeat(row_offsets[i:-1:m] - offsets[:-1], lens)
                + np.arange(offsets[-1], dtype=np.int64))
        for f, arr in fields.items():
            merged.setdefault(f, np.empty(n, dtype=arr.dtype))[dest] = arr
    return counts, counts.sum(axis=1), merged


@dataclass
class _Checked:
    """One batch turned into kernel input: the good rows' candidates as CSR
    over (request, action), ``keep`` (None: every row is good), the base
    advantages of the good rows and the problems (row in batch, reason)."""
    offsets: np.ndarray
    fields: dict
    keep: np.ndarray | None
    base: np.ndarray | None
    problems: list
    present: int = 0   # actions present: the largest action of a good row's candidate + 1


def _check_rows(batch, config) -> _Checked:
    """Validate a record batch and build the kernel input of its good rows."""
    schema = batch.schema
    if schema.get_field_index(config.key) < 0:
        raise ValueError(f"input has no key column {config.key!r}")
    for col in config.carry:
        if schema.get_field_index(col) < 0:
            raise ValueError(f"input has no column {col!r} to carry")
    bad = _BadRows(batch.num_rows)
    if schema.get_field_index(config.candidates) >= 0:
        counts, lens, fields = _grouped(batch, config, bad)
    else:
        counts, lens, fields = _interleave(batch, config, bad)
    key = batch.column(config.key)
    if key.null_count:
        bad.rows(np.flatnonzero(key.is_null().to_numpy(zero_copy_only=False)),
                 f"{config.key} is null")
    base = None
    if config.base is not None:
        if schema.get_field_index(config.base) < 0:
            raise ValueError(f"input has no base-advantage column {config.base!r}")
        col = batch.column(config.base)
        if isinstance(col, _pa().ChunkedArray):
            col = col.combine_chunks()
        base = _float64_field(col, f"base-advantage column {config.base!r}", config.base,
                              None, bad, finite=False)
    keep = None
    if bad.mask.any():
        keep = ~bad.mask
        counts = counts[keep]
        cand = np.repeat(keep, lens)
        fields = {f: a[cand] for f, a in fields.items()}
        base = None if base is None else base[keep]
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts.reshape(-1), out=offsets[1:])
    problems = sorted(bad.reasons.items())
    seen = np.flatnonzero(counts.any(axis=0)) if counts.size else counts[:0, 0]
    present = int(seen[-1]) + 1 if seen.size else 0
    return _Checked(offsets, fields, keep, base, problems, present)


def _pools(checked: _Checked, m: int):
    """auction.Pools of checked candidates. Everything Pools() would check
    (int64/float64 1-D arrays of one length, CSR offsets over them, finite
    scores and preranks) holds by construction, so the instance is built
    without checking it again (the checks cost about as much as the whole
    Arrow-to-CSR step)."""
    f = checked.fields
    pools = object.__new__(auction.Pools)
    for name, arr in (("offsets", checked.offsets), ("ad_id", f["ad_id"]),
                      ("score", f["score"]), ("value", f["value"]),
                      ("prerank", f.get("prerank"))):
        if arr is not None:
            arr = read_only(np.ascontiguousarray(arr))
        object.__setattr__(pools, name, arr)
    object.__setattr__(pools, "m", m)  # last: it marks the instance complete
    return pools


def _fixed_size(flat: np.ndarray, width: int):
    pa = _pa()
    return pa.FixedSizeListArray.from_arrays(pa.array(flat.reshape(-1)), width)


def _as_batch(batch):
    pa = _pa()
    if isinstance(batch, pa.RecordBatch):
        return batch
    if isinstance(batch, pa.Table):
        if batch.num_rows == 0:
            return pa.RecordBatch.from_pylist([], schema=batch.schema)
        if any(c.num_chunks != 1 for c in batch.columns):
            batch = batch.combine_chunks()
        return batch.to_batches()[0]
    raise TypeError(f"batch must be a pyarrow RecordBatch or Table, got "
                    f"{type(batch).__name__}")


def score_batch(batch, config: ScoreConfig = ScoreConfig(), *, first_row: int = 0,
                on_error: str = "stop"):
    r"""Score one Arrow record batch (or table) of requests.

    For each good row r, the auction replay gives the coalition table
    :math:`y_r(S)` over its m actions (:func:`fastcredit.auction_replay`), and
    each rule its credit of the table (e.g. :math:`\phi_i`, the Shapley value);
    with ``config.base`` the shaped advantages
    :math:`A_{r,i} = b_r + \beta z_{r,i}` (:func:`fastcredit.shape_advantages`).

    Parameters
    ----------
    batch : pyarrow.RecordBatch or pyarrow.Table
        Requests in either layout of :mod:`fastcredit.scoring`.
    config : ScoreConfig
        What to compute.
    first_row : int
        Number of the batch's first row in the whole input (>= 0), for the
        rows named in errors.
    on_error : {"stop", "skip"}
        A malformed row raises :class:`MalformedRowError`, or is left out and
        reported.

    Returns
    -------
    scored : pyarrow.RecordBatch
        The key, the carried columns, ``table`` (2**m values per row), one
        column per rule (m values) and ``advantage`` when ``config.base`` is
        set.
    problems : list of (int, str)
        (row, reason) of the malformed rows left out, rows numbered from
        ``first_row``.

    Raises
    ------
    MalformedRowError
        With ``on_error="stop"``, for the first malformed row (a
        :class:`ValueError`).
    ValueError
        If ``on_error`` is not "stop" or "skip"; if ``first_row`` is negative;
        or if the key, a carried, the base-advantage or the candidates column
        (or a field of it) is missing.
    TypeError
        If ``batch`` is not a pyarrow RecordBatch or Table; if ``config`` is
        not a :class:`ScoreConfig`; if ``first_row`` is not an integer; or if
        a column has the wrong type (the column is named).
    ImportError
        If pyarrow is not installed (extra ``fastcredit[parquet]``).

    Examples
    --------
    >>> import fastcredit as fc
    >>> from fastcredit.scoring import ScoreConfig, pools_to_arrow, score_batch
    >>> pools = fc.Pools([0, 2, 4], ad_id=[7, 8, 7, 9], score=[3., 1., 2., 2.5],
    ...                  value=[1., .5, 1., 2.], m=2)
    >>> scored, problems = score_batch(pools_to_arrow(pools), ScoreConfig(m=2, slots=1))
    >>> scored.to_pydict(), problems
    ({'request_id': [0], 'table': [[0.0, 1.0, 1.0, 1.0]], 'shapley': [[0.5, 0.5]]}, [])
    """
    out, problems, _ = _score(batch, config, first_row=first_row, on_error=on_error)
    return out, problems


def _score(batch, config: ScoreConfig = ScoreConfig(), *, first_row: int = 0,
           on_error: str = "stop"):
    """:func:`score_batch`, and the actions present in the batch's good rows
    (the largest action of a candidate + 1; 0 without candidates)."""
    pa = _pa()
    on_error = ON_ERROR.check(on_error)
    if not isinstance(config, ScoreConfig):
        raise TypeError(f"config must be a ScoreConfig, got {type(config).__name__}")
    first_row = check_int(first_row, "first_row", lo=0)
    batch = _as_batch(batch)
    m = config.m
    checked = _check_rows(batch, config)
    problems = [(first_row + r, reason) for r, reason in checked.problems]
    if problems and on_error == "stop":
        raise MalformedRowError(*problems[0])
    passed = [batch.column(c) for c in (config.key,) + config.carry]
    if checked.keep is not None:
        mask = pa.array(checked.keep)
        passed = [c.filter(mask) for c in passed]
    pools = _pools(checked, m)
    table = auction.auction_replay(pools, slots=config.slots, reserve=config.reserve,
                                   capacity=config.capacity, pricing=config.pricing,
                                   mode=config.mode, threads=config.threads)
    arrays = passed + [_fixed_size(table, 1 << m)]
    credit = {}
    base = checked.base
    for rule in dict.fromkeys(config.rules + ((config.shaping_rule,) if base is not None else ())):
        credit[rule] = RULES[rule](table, threads=config.threads)
    arrays += [_fixed_size(credit[rule], m) for rule in config.rules]
    if base is not None:
        adv = shaping.shape_advantages(base, credit[config.shaping_rule], beta=config.beta,
                                       kappa=config.kappa, normalize=config.normalize,
                                       threads=config.threads)
        arrays.append(_fixed_size(adv, m))
    names = [config.key, *config.carry, *config.output_columns]
    return pa.RecordBatch.from_arrays(arrays, names=names), problems, checked.present



def pools_to_arrow(pools, first_key: int = 0, key: str = "request_id"):
    """The requests of ``pools`` as a pyarrow Table in the ``candidates`` layout.

    Request r gets key ``first_key + r`` and its candidates grouped by action.
    No value can be null, and the schema says so: Parquet then stores no
    definition levels for the fields, which decodes ~1.7x faster than the
    same layout nullable.

    Parameters
    ----------
    pools : fastcredit.Pools
        The requests.
    first_key : int
        Key of the first request; the keys must fit in int64.
    key : str
        Name of the key column.

    Returns
    -------
    pyarrow.Table
        Columns ``key`` (int64) and ``candidates`` (large list of structs
        ``action`` int8, ``ad_id`` int64, ``score``, ``value`` and, when the
        pools have one, ``prerank`` double).

    Raises
    ------
    TypeError
        If ``pools`` is not a :class:`fastcredit.Pools`, ``first_key`` is not
        an integer, or ``key`` is not a string.
    ValueError
        If the keys do not fit in int64, or ``key`` is empty.
    ImportError
        If pyarrow is not installed (extra ``fastcredit[parquet]``).

    Examples
    --------
    >>> import fastcredit as fc
    >>> from fastcredit.scoring import pools_to_arrow
    >>> pools = fc.Pools([0, 1, 2], ad_id=[7, 9], score=[3., 2.5], value=[1., 2.], m=2)
    >>> table = pools_to_arrow(pools, first_key=100)
    >>> table.column_names, table.num_rows
    (['request_id', 'candidates'], 1)
    >>> table.to_pylist()[0]["candidates"]  # doctest: +NORMALIZE_WHITESPACE
    [{'action': 0, 'ad_id': 7, 'score': 3.0, 'value': 1.0},
     {'action': 1, 'ad_id': 9, 'score': 2.5, 'value': 2.0}]
    """
    pa = _pa()
    if not isinstance(pools, auction.Pools):
        raise TypeError(f"pools must be a fastcredit.Pools, got {type(pools).__name__}")
    first_key = check_int(first_key, "first_key", lo=-2**63,
                          hi=2**63 - 1 - max(pools.n_requests - 1, 0))
    key = _column_name(key, "key")
    m = pools.m
    counts = np.diff(pools.offsets)
    action = np.tile(np.arange(m, dtype=np.int8), pools.n_requests).repeat(counts)
    arrays = {"action": pa.array(action), "ad_id": pa.array(pools.ad_id),
              "score": pa.array(pools.score), "value": pa.array(pools.value)}
    if pools.prerank is not None:
        arrays["prerank"] = pa.array(pools.prerank)
    fields = [pa.field(name, arr.type, nullable=False) for name, arr in arrays.items()]
    values = pa.StructArray.from_arrays(list(arrays.values()), fields=fields)
    request_offsets = pools.offsets[::m].astype(np.int64)
    candidates = pa.LargeListArray.from_arrays(pa.array(request_offsets), values)
    keys = pa.array(np.arange(first_key, first_key + pools.n_requests, dtype=np.int64))
    schema = pa.schema([pa.field(key, pa.int64(), nullable=False),
                        pa.field("candidates", pa.large_list(
                            pa.field("element", values.type, nullable=False)), nullable=False)])
    return pa.Table.from_arrays([keys, candidates.cast(schema.field(1).type)], schema=schema)
