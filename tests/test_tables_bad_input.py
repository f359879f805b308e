"""Malformed input at every tables entry point: a clear error naming the
argument, never a crash or a read out of bounds."""
import numpy as np
import pytest

import fastcredit as fc

KERNELS = [fc.shapley, fc.banzhaf, fc.singleton, fc.leave_one_out, fc.size_resolved,
           fc.pair_interactions, fc.moebius, fc.from_moebius,
           lambda v, **kw: fc.semivalue(v, np.ones(3), **kw)]  # the valid tables here have m = 3


@pytest.fixture(params=range(len(KERNELS)))
def kernel(request):
    return KERNELS[request.param]


@pytest.mark.parametrize("length", [0, 1, 3, 6, 12, 100])
def test_length_not_a_power_of_two(kernel, length):
    with pytest.raises(ValueError, match="v must have a last axis of length 2\\*\\*m"):
        kernel(np.zeros((2, length)))


def test_scalar(kernel):
    with pytest.raises(ValueError, match="v"):
        kernel(np.float64(3.0))


def test_too_many_players_is_rejected_before_any_copy(kernel):
    huge = np.broadcast_to(np.zeros(1), (1 << 31,))  # 16 GiB if it were copied
    with pytest.raises(ValueError, match="m = 31 players"):
        kernel(huge)


@pytest.mark.parametrize("bad", [np.zeros(8, complex), np.array([None] * 8),
                                 np.array(["a"] * 8), np.zeros(8, np.float16)])
def test_wrong_dtype(kernel, bad):
    with pytest.raises(TypeError, match="v must be a real"):
        kernel(bad)


def test_integer_and_bool_tables_are_converted():
    v = np.array([0, 0, 0, 1])
    assert fc.shapley(v).tolist() == [0.5, 0.5]
    assert fc.shapley(v.astype(bool)).tolist() == [0.5, 0.5]


def test_bad_out(kernel):
    v = np.zeros((2, 8))
    good = kernel(v)
    with pytest.raises(ValueError, match="out must have shape"):
        kernel(v, out=np.empty((3,) + good.shape[1:]))
    with pytest.raises(TypeError, match="out must have dtype float64"):
        kernel(v, out=np.empty(good.shape, np.float32))
    with pytest.raises(TypeError, match="out must be a numpy array"):
        kernel(v, out=good.tolist())
    with pytest.raises(ValueError, match="out must be a writeable C-contiguous"):
        kernel(v, out=np.empty(good.shape[:-1] + (2 * good.shape[-1],))[..., ::2])
    ro = np.empty(good.shape)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out must be a writeable"):
        kernel(v, out=ro)


@pytest.mark.parametrize("threads", [0, -1, 1.5, "2", True])
def test_bad_threads(kernel, threads):
    with pytest.raises((ValueError, TypeError), match="threads"):
        kernel(np.zeros((100, 8)), threads=threads)


@pytest.mark.parametrize("backend", ["C", "cuda", 1])
def test_unknown_backend(kernel, backend):
    with pytest.raises(ValueError, match="backend"):
        kernel(np.zeros(8), backend=backend)


def test_semivalue_weights():
    with pytest.raises(ValueError, match=r"weights must have shape \(3,\)"):
        fc.semivalue(np.zeros(8), [1.0, 2.0])
    with pytest.raises(TypeError, match="weights must be a real float64"):
        fc.semivalue(np.zeros(8), np.ones(3, complex))


@pytest.mark.parametrize("m", [0, 31, -2])
def test_weights_m_out_of_range(m):
    with pytest.raises(ValueError, match="m must be"):
        fc.shapley_weights(m)
    with pytest.raises(ValueError, match="m must be"):
        fc.banzhaf_weights(m)


class TestTableFromFunction:
    @pytest.mark.parametrize("m", [0, 31])
    def test_m_out_of_range(self, m):
        with pytest.raises(ValueError, match="m must be"):
            fc.table_from_function(lambda s: s * 0.0, m)

    def test_not_callable(self):
        with pytest.raises(TypeError, match="fn must be callable"):
            fc.table_from_function(np.zeros(8), 3)

    def test_wrong_shape_returned(self):
        with pytest.raises(ValueError, match=r"fn must return one value per coalition"):
            fc.table_from_function(lambda s: np.zeros(3), 3)

    def test_non_numeric_returned(self):
        with pytest.raises(TypeError, match="fn must return real numbers"):
            fc.table_from_function(lambda s: np.array(["x"] * len(s)), 2)

    def test_exception_surfaces_with_context(self):
        def boom(s):
            raise KeyError("lookup failed")
        with pytest.raises(RuntimeError, match="fn raised on coalitions 0..7") as info:
            fc.table_from_function(boom, 3)
        assert isinstance(info.value.__cause__, KeyError)

    def test_bad_options(self):
        with pytest.raises(ValueError, match="coalitions must be one of"):
            fc.table_from_function(lambda s: s * 0.0, 3, coalitions="list")
        with pytest.raises(ValueError, match="chunk must be >= 1"):
            fc.table_from_function(lambda s: s * 0.0, 3, chunk=0)


def test_masks_to_bool():
    assert fc.masks_to_bool(np.array([5, 0]), 3).tolist() == [[True, False, True],
                                                             [False, False, False]]
    assert fc.masks_to_bool(6, 3).tolist() == [False, True, True]
    with pytest.raises(TypeError, match="masks must be an integer array"):
        fc.masks_to_bool(np.array([1.5]), 3)
    with pytest.raises(ValueError, match="masks must be non-negative"):
        fc.masks_to_bool(np.array([-1]), 3)
    with pytest.raises(ValueError, match="m must be <= 64"):
        fc.masks_to_bool(np.array([1]), 65)
