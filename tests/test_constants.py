"""fastcredit._constants and the #define constants of csrc/*.h are one list:
every NAME there is FC_NAME of the compiled library, with the same value, and
the library has no integer constant the Python side does not know."""
import pytest

from fastcredit import _constants

lib = pytest.importorskip("fastcredit._cffi").lib

NAMES = sorted(name for name in vars(_constants) if name.isupper())


@pytest.mark.parametrize("name", NAMES)
def test_python_constant_is_the_c_constant(name):
    assert getattr(lib, "FC_" + name) == getattr(_constants, name)


def test_every_c_constant_is_in_constants():
    c_names = {name[len("FC_"):] for name in dir(lib)
               if name.startswith("FC_") and isinstance(getattr(lib, name), int)}
    assert c_names - set(NAMES) == set()
