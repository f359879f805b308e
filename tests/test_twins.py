"""Each kernel family's C bindings (fastcredit._c.F) and Numba kernels
(fastcredit._numba.F) are twins: the same kernels, by name and parameters, so
the public layer can call either one."""
import importlib
import inspect

import pytest

from fastcredit._backend import FAMILIES


def _twins(family):
    c = pytest.importorskip(f"fastcredit._c.{family}")
    return c, importlib.import_module(f"fastcredit._numba.{family}")


def _signature(fn):
    """The Python-level signature; a Numba dispatcher's is its py_func's."""
    return inspect.signature(getattr(fn, "py_func", fn))


def _defined_here(module):
    """The public functions (or Numba dispatchers) the module itself defines."""
    return {name for name, obj in vars(module).items()
            if not name.startswith("_") and callable(obj) and not inspect.isclass(obj)
            and getattr(obj, "__module__", None) == module.__name__}


@pytest.mark.parametrize("family", FAMILIES)
def test_twins_declare_the_same_kernels(family):
    c, nb = _twins(family)
    assert c.__all__ == nb.__all__


@pytest.mark.parametrize("family", FAMILIES)
def test_twin_kernels_take_the_same_parameters(family):
    c, nb = _twins(family)
    for name in c.__all__:
        assert _signature(getattr(c, name)) == _signature(getattr(nb, name)), name


@pytest.mark.parametrize("family", FAMILIES)
def test_all_is_exactly_what_the_module_defines(family):
    for module in _twins(family):
        assert set(module.__all__) == _defined_here(module), module.__name__


@pytest.mark.parametrize("family", FAMILIES)
def test_numba_kernels_are_njit_functions(family):
    """docs/design.md: users call fastcredit._numba kernels from their own
    jitted code, so each must be a Numba dispatcher, not a Python wrapper."""
    from numba.core.registry import CPUDispatcher
    nb = importlib.import_module(f"fastcredit._numba.{family}")
    for name in nb.__all__:
        assert isinstance(getattr(nb, name), CPUDispatcher), name
