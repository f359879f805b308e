"""out= never overwrites an input, even one the function converts on the way in.

The overlap check used to compare ``out`` with the converted arrays (an int64
table's float64 copy, a strided view's contiguous copy) and so accepted an
``out`` over the caller's own buffer, which the call then overwrote. Every
public function with an ``out=`` parameter is found by the fuzz harness's
discovery, so a new one is covered here without an edit.
"""
import dataclasses
import inspect
import pathlib

import numpy as np
import pytest

import fastcredit as fc
import fuzz_catalogue as fz


def test_shapley_refuses_out_over_an_int_table():
    v = np.arange(16).reshape(2, 8)
    with pytest.raises(ValueError, match="^out must not overlap the input v$"):
        fc.shapley(v, out=v.view(np.float64).reshape(-1)[:6].reshape(2, 3))
    assert np.array_equal(v, np.arange(16).reshape(2, 8))


def test_shape_advantages_refuses_out_over_int_credit():
    c = np.arange(8).reshape(2, 4)
    with pytest.raises(ValueError, match="^out must not overlap the input credit$"):
        fc.shape_advantages(np.zeros(2), c, out=c.view(np.float64))
    assert np.array_equal(c, np.arange(8).reshape(2, 4))


def test_token_advantages_refuses_out_over_a_float32_base():
    bb = np.zeros(8, np.float32)
    bb[:2] = [0.5, 0.25]
    ta = np.array([[-1, 0, 1, 2], [2, 1, -1, 0]])
    with pytest.raises(ValueError, match="^out must not overlap the input base$"):
        fc.token_advantages(bb[:2], np.ones((2, 3)), ta, out=bb.reshape(2, 4))
    assert np.array_equal(bb, [0.5, 0.25, 0, 0, 0, 0, 0, 0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_project_zero_sum_names_a_per_row_kappa(dtype):
    # a float64 kappa is read in place as the upper bounds: the error names
    # the argument the caller gave, not the bound it became
    mem = np.zeros(8)
    kappa = mem.view(dtype)[:4]
    kappa[:] = 1.0
    with pytest.raises(ValueError, match="^out must not overlap the input kappa$"):
        fc.project_zero_sum(np.ones((4, 2)), kappa, out=mem[:8].reshape(4, 2))
    assert np.array_equal(kappa, np.ones(4))


def test_an_input_exposing_only_a_buffer_is_checked():
    # memory the caller owns through the buffer protocol (here a memoryview
    # of int64s, converted to a float64 copy) is an input like an array
    mem = np.arange(8, dtype=np.int64)
    with pytest.raises(ValueError, match="^out must not overlap the input v$"):
        fc.shapley(memoryview(mem), out=mem.view(np.float64)[:3])
    assert np.array_equal(mem, np.arange(8))


def _out_targets():
    """Public callables with an out= parameter, by name."""
    targets = fz.discover({})
    return {name: t for name, t in targets.items()
            if any(p.name == "out" for p in fz.parameters(t))}


OUT_TARGETS = _out_targets()


def test_discovery_finds_the_out_functions():
    """Discovery finds at least the functions with out= known today (a new
    one is covered by the tests below without an edit)."""
    assert set(OUT_TARGETS) >= {
        "fastcredit.shapley", "fastcredit.banzhaf", "fastcredit.semivalue",
        "fastcredit.singleton", "fastcredit.leave_one_out", "fastcredit.size_resolved",
        "fastcredit.pair_interactions", "fastcredit.moebius", "fastcredit.from_moebius",
        "fastcredit.table_from_function", "fastcredit.auction_replay",
        "fastcredit.project_zero_sum", "fastcredit.shape_advantages",
        "fastcredit.token_advantages", "fastcredit.shuffle_within"}


def _array_inputs(target, tmp):
    """(valid kwargs, {name: the valid ndarray of each array input}); an
    optional array input comes with the companions it needs."""
    params = fz.parameters(target)
    ctx = fz.Ctx(target, [p.name for p in params], tmp)
    kwargs = fz.base_call(target, ctx)
    arrays, companions = {}, {}
    for p in params:
        value, also = fz.valid_value(target, p, ctx, kwargs)
        if isinstance(value, np.ndarray) and p.name != "out":
            arrays[p.name] = value
            companions[p.name] = also
    return kwargs, arrays, companions


def _cases():
    tmp = pathlib.Path("/nonexistent")    # no target with out= takes a path
    for name, target in OUT_TARGETS.items():
        kwargs, arrays, _ = _array_inputs(target, tmp)
        for param in arrays:
            yield pytest.param(name, param, id=f"{name.removeprefix('fastcredit.')}-{param}")


@pytest.mark.parametrize("name, param", list(_cases()))
def test_out_over_a_converted_input_is_refused(name, param, tmp_path):
    """For each array input: in every form the function converts (another
    dtype, a strided view) whose buffer out aliases, a ValueError naming out
    and the input, with the input unchanged; and an out interleaved with a
    strided input but sharing none of its memory is accepted with the right
    answer."""
    target = OUT_TARGETS[name]
    fn = fz.resolve(name)
    kwargs, arrays, companions = _array_inputs(target, tmp_path)
    kwargs.update(companions[param])
    refused = []
    for label, value, stride in fz.converted(arrays[param]):
        try:
            want = fn(**{**kwargs, param: value.copy()})
        except (ValueError, TypeError):
            continue            # this form is refused for its own sake
        field, first = _first_array(want)
        inp, out = fz.place(value, stride, first.shape, first.dtype)
        before = inp.copy()
        with pytest.raises(ValueError, match=rf"^out{field} must not overlap the input {param}\b"):
            fn(**{**kwargs, param: inp, "out": _out_with(want, out)})
        assert np.array_equal(inp, before), label
        refused.append(label)
    assert "strided" in refused and len(refused) >= 2, refused

    # out between the first two elements of a strided input: disjoint
    value = arrays[param]
    want = fn(**{**kwargs, param: value})
    field, first = _first_array(want)
    gap = 8 + -(-first.nbytes // 8) * 8
    inp, out = fz.place(value, gap, first.shape, first.dtype, out_at=8)
    assert np.may_share_memory(inp, out) and not np.shares_memory(inp, out)
    out = _out_with(want, out)
    got = fn(**{**kwargs, param: inp, "out": out})
    assert _first_array(got)[1] is _first_array(out)[1]
    for a, b in zip(_arrays(got), _arrays(want)):
        np.testing.assert_array_equal(a, b)


def _arrays(result):
    """A result's arrays: the array itself, or a result object's array fields."""
    if isinstance(result, np.ndarray):
        return [result]
    return [getattr(result, f.name) for f in dataclasses.fields(result)
            if getattr(result, f.name) is not None]


def _first_array(result):
    """(how an error names it: "" or ".field", the array) of the first
    array a result is written into."""
    if isinstance(result, np.ndarray):
        return "", result
    name = dataclasses.fields(result)[0].name
    return rf"\.{name}", getattr(result, name)


def _out_with(want, array):
    """An out= for a result like ``want`` whose first array is ``array``
    (a result object's other arrays: fresh copies)."""
    if isinstance(want, np.ndarray):
        return array
    fields = dataclasses.fields(want)
    return dataclasses.replace(want, **{fields[0].name: array},
                               **{f.name: np.copy(getattr(want, f.name)) for f in fields[1:]
                                  if getattr(want, f.name) is not None})


def test_functions_without_array_inputs_are_the_known_ones(tmp_path):
    """table_from_function reads no array (its fn is the caller's code),
    derangement none at all (n and a seed), and auction_replay only its
    Pools (tested below); a new function with out= and no array input needs
    a test of its own, like the Pools one."""
    bare = {name for name, t in OUT_TARGETS.items() if not _array_inputs(t, tmp_path)[1]}
    assert bare == {"fastcredit.table_from_function", "fastcredit.auction_replay",
                    "fastcredit.derangement"}
    assert [p.name for p in fz.parameters(OUT_TARGETS["fastcredit.auction_replay"])
            if p.default is inspect.Parameter.empty] == ["pools"]


@pytest.mark.parametrize("field", ["offsets", "ad_id", "score", "value", "prerank"])
def test_auction_replay_never_writes_into_its_pools(field):
    """An out over the memory of a caller's array a Pools was built from:
    refused naming out and pools while the Pools reads that memory, or (a
    Pools that owns copies) the right table with the Pools unchanged."""
    dtype = np.int64 if field in ("offsets", "ad_id") else np.float64
    arrays = {k: np.array(v, dtype=np.int64 if k in ("offsets", "ad_id") else np.float64)
              for k, v in fz.POOL.items()}
    want = fc.auction_replay(fc.Pools(**arrays, m=fz.M), slots=2)
    held, out = fz.place(arrays[field], np.dtype(dtype).itemsize, want.shape, want.dtype)
    pools = fc.Pools(**{**arrays, field: held}, m=fz.M)
    before = {k: getattr(pools, k).copy() for k in arrays}
    try:
        got = fc.auction_replay(pools, slots=2, out=out)
    except ValueError as exc:
        assert str(exc) == f"out must not overlap the input pools.{field}"
    else:
        np.testing.assert_array_equal(got, want)
    for k in arrays:
        np.testing.assert_array_equal(getattr(pools, k), before[k])
