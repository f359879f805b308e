"""The paths that C kernels choose by processor (csrc/internal.h): which ones
they take, and a switch that turns them off, so that the tests run every
path on any machine and the bench can say which one ran. Private: not part
of the API. (The Numba kernels choose no path by processor; LLVM lowers the
same code for the processor it runs on.)

    taken()       names of the paths the kernels take now
    only(*names)  within the block, the kernels take at most these paths
                  (none: the portable code that every machine runs)
"""
import contextlib

from .._cffi import lib

__all__ = ["PATHS", "taken", "only"]

#: name -> bit of fc_internal_paths()
PATHS = {"avx512": lib.FC_PATH_AVX512}


def taken() -> list:
    """Names of the paths the kernels take now: those the processor has and
    the switch allows."""
    bits = lib.fc_internal_paths()
    return [name for name, bit in PATHS.items() if bits & bit]


@contextlib.contextmanager
def only(*names):
    """Within the block, C kernels take no path chosen by processor but the
    named ones (KeyError for an unknown name). Not for use while kernels
    run on other threads: the switch is one global of the library."""
    allowed = 0
    for name in names:
        allowed |= PATHS[name]
    before = lib.fc_internal_allow_paths(allowed)
    try:
        yield
    finally:
        lib.fc_internal_allow_paths(before)
