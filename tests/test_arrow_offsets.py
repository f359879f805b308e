"""The list offsets of an Arrow candidates column are bounds-checked before
the kernels read them: offsets ending exactly at the values are accepted,
one or two past the values are a bad row named by its column and row.

pyarrow validates list offsets when an array, batch or table is built, so
corrupt offsets reach scoring through the zero-copy path: the offsets buffer
is the caller's NumPy memory (as from any producer handing Arrow memory
over), changed after the table was built and validated."""
import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

from fastcredit import scoring  # noqa: E402
from fastcredit.scoring import MalformedRowError, ScoreConfig  # noqa: E402

GOOD = [{"action": 0, "ad_id": 1, "score": 2.0, "value": 1.0},
        {"action": 1, "ad_id": 2, "score": 1.0, "value": 3.0}]
GOOD_TABLE = [0.0, 1.0, 3.0, 4.0]  # ad 1 (action 0) beats ad 2 (action 1) for slot 1
STRUCT = pa.struct([("action", pa.int32()), ("ad_id", pa.int64()),
                    ("score", pa.float64()), ("value", pa.float64())])
LIST_TYPES = {"list": (pa.list_, np.int32), "large_list": (pa.large_list, np.int64)}


def list_over_numpy_offsets(rows, list_type, struct=STRUCT):
    """(list array, its offsets as the NumPy array Arrow reads them from)."""
    make, dtype = LIST_TYPES[list_type]
    values = pa.array([c for row in rows for c in row], struct)
    offsets = np.concatenate([[0], np.cumsum([len(row) for row in rows])]).astype(dtype)
    arr = pa.Array.from_buffers(make(struct), len(rows), [None, pa.py_buffer(offsets)],
                                children=[values])
    assert np.shares_memory(np.frombuffer(arr.buffers()[1], dtype), offsets)  # zero-copy
    return arr, offsets


def two_requests(list_type, container):
    """A batch of two GOOD requests over 4 values and its offsets [0, 2, 4]."""
    arr, offsets = list_over_numpy_offsets([GOOD, GOOD], list_type)
    data = {"request_id": pa.array([0, 1], pa.int64()), "candidates": arr}
    batch = pa.table(data) if container == "table" else pa.RecordBatch.from_pydict(data)
    return batch, offsets


@pytest.mark.parametrize("container", ["table", "record_batch"])
@pytest.mark.parametrize("list_type", sorted(LIST_TYPES))
def test_offsets_ending_exactly_at_the_values_are_accepted(list_type, container):
    batch, offsets = two_requests(list_type, container)
    assert offsets.tolist() == [0, 2, 4]
    out, problems = scoring.score_batch(batch, ScoreConfig(m=2))
    assert problems == []
    assert out.column("table").to_pylist() == [GOOD_TABLE, GOOD_TABLE]


@pytest.mark.parametrize("past", [1, 2])
@pytest.mark.parametrize("container", ["table", "record_batch"])
@pytest.mark.parametrize("list_type", sorted(LIST_TYPES))
def test_offsets_ending_past_the_values_are_a_bad_row_named_by_column_and_row(
        list_type, container, past):
    """Kills the mutant: arrow.py _list_column's bounds check
    ``offsets[-1] > n_values`` changed to ``offsets[-1] > n_values + 1``
    (list offsets that end exactly one past the values accepted: the batch
    took the zero-copy fast path, the slice of the values was silently
    clamped and row 1 was scored from 2 of the 3 candidates its offsets
    claim). Also guards the same ``+ 1`` in the per-row ``stop > n_values``
    test (the values' take then raised pyarrow's IndexError, naming nothing)."""
    batch, offsets = two_requests(list_type, container)
    offsets[-1] += past  # after pyarrow validated the batch
    column = batch.column("candidates")
    column = column.chunk(0) if isinstance(column, pa.ChunkedArray) else column
    assert column.offsets.to_pylist() == [0, 2, 4 + past]
    reason = f"invalid list offsets of 'candidates': 2 .. {4 + past} of 4 values"
    config = ScoreConfig(m=2)
    with pytest.raises(MalformedRowError) as info:
        scoring.score_batch(batch, config)
    assert (info.value.row, info.value.reason) == (1, reason)
    assert str(info.value) == f"row 1: {reason}"
    with pytest.raises(MalformedRowError, match=r"^row 11: invalid list offsets of "
                                                r"'candidates': "):
        scoring.score_batch(batch, config, first_row=10)
    out, problems = scoring.score_batch(batch, config, on_error="skip")
    assert problems == [(1, reason)]
    assert out.column("request_id").to_pylist() == [0]
    assert out.column("table").to_pylist() == [GOOD_TABLE]


@pytest.mark.parametrize("past", [0, 1, 2])
@pytest.mark.parametrize("list_type", sorted(LIST_TYPES))
def test_per_action_columns_check_their_offsets_too(list_type, past):
    """Kills the same mutant in the per-action layout (action_0 ..
    action_{m-1} columns go through the same check): offsets of
    ``action_1`` one past its values are a bad row naming ``action_1``
    (the mutant failed later with NumPy's "shape mismatch", naming nothing)."""
    per_action = pa.struct([("ad_id", pa.int64()), ("score", pa.float64()),
                            ("value", pa.float64())])
    columns = {"request_id": pa.array([0, 1, 2], pa.int64())}
    for i in range(2):
        rows = [[{k: c[k] for k in ("ad_id", "score", "value")} for c in GOOD
                 if c["action"] == i]] * 3
        columns[f"action_{i}"], offsets = list_over_numpy_offsets(rows, list_type, per_action)
    table = pa.table(columns)
    offsets[-1] += past  # action_1's offsets [0, 1, 2, 3] end `past` beyond its 3 values
    config = ScoreConfig(m=2)
    if past == 0:
        out, problems = scoring.score_batch(table, config)
        assert problems == [] and out.column("table").to_pylist() == [GOOD_TABLE] * 3
        return
    reason = f"invalid list offsets of 'action_1': 2 .. {3 + past} of 3 values"
    with pytest.raises(MalformedRowError) as info:
        scoring.score_batch(table, config)
    assert (info.value.row, info.value.reason) == (2, reason)
    out, problems = scoring.score_batch(table, config, on_error="skip")
    assert problems == [(2, reason)]
    assert out.column("request_id").to_pylist() == [0, 1]
    assert out.column("table").to_pylist() == [GOOD_TABLE] * 2
