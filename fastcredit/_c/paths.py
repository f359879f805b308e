"""The paths that C kernels choose by processor (csrc/internal.h): which ones
they take, and a switch that turns them off, so that the tests run every
path on any machine and the bench can say which one ran. Private: not part
of the API. (The Numba kernels choose no path by processor; LLVM lowers the
same code for the processor it runs on.)

    taken()       names of the paths the kernels take now
    only(*names)  within the block, the kernels take at most these paths
                  (none: the portable code that every machine runs)
    taken_by(key) the paths the kernels of a FASTEST key take now
"""
import contextlib

from .._cffi import lib

__all__ = ["PATHS", "KERNELS", "taken", "taken_by", "only"]

#: name -> bit of fc_internal_paths()
PATHS = {"avx512": lib.FC_PATH_AVX512}

#: FASTEST key -> the paths its C kernels can take (where their inputs
#: allow: e.g. the projection's lanes take rows of at most 8 values)
KERNELS = {
    "shaping.project": ("avx512",),
    "shaping.tokens": ("avx512",),
    "auction.replay": ("avx512",),
    "synthetic.sponsored_search": ("avx512",),
    "tables.semivalue": ("avx512",),   # large batches of m <= 8: streamed results
}


def taken() -> list:
    """Names of the paths the kernels take now: those the processor has and
    the switch allows."""
    bits = lib.fc_internal_paths()
    return [name for name, bit in PATHS.items() if bits & bit]


def taken_by(key: str) -> list:
    """Names of the paths the C kernels of FASTEST key ``key`` take now
    (empty: the portable code, or a key whose kernels choose no path)."""
    return [name for name in taken() if name in KERNELS.get(key, ())]


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
