"""C backend of the interactions family (csrc/interactions.c)."""
from . import check, ffi, lib, ptr, suffix

__all__ = ["graded_sums"]


def graded_sums(x, up, down, masks, work, out):
    f = "fc_graded_sums" + suffix(x)
    check(getattr(lib, f)(ptr(x), x.shape[0], x.shape[1].bit_length() - 1, ptr(up),
                          ptr(down) if down.shape[0] else ffi.NULL, ptr(masks), masks.shape[0],
                          ptr(work), ptr(out)), f)
