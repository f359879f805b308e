"""C backend of the shaping family (csrc/shaping.c); the same signatures as
fastcredit._numba.shaping."""
import numpy as np

from .._constants import TOKEN_SELECT_MAX
from . import check, ffi, lib, ptr, suffix

__all__ = ["project_box", "shape_advantages", "token_advantages"]


def project_box(u, lower, upper, bound_row_stride, bound_col_stride, weights,
                weight_row_stride, total, total_stride, out):
    n_rows, m = u.shape
    work = np.empty(3 * m)
    f = "fc_project_box" + suffix(u)
    check(getattr(lib, f)(ptr(u), n_rows, m, ptr(lower), ptr(upper), bound_row_stride,
                          bound_col_stride, ffi.NULL if weights is None else ptr(weights),
                          weight_row_stride, ptr(total), total_stride, ptr(out), ptr(work)), f)


def token_advantages(base, action_adv, token_action, mask, out):
    n_seq, n_tok = token_action.shape
    m = action_adv.shape[1]
    work = np.empty(max(m, TOKEN_SELECT_MAX) + 1, dtype=np.float32)
    bad = ffi.new("int64_t *")
    f = "fc_token_advantages_" + ("i32" if token_action.dtype == np.int32 else "i64")
    rc = getattr(lib, f)(ptr(base), ptr(action_adv), n_seq, m, ptr(token_action), n_tok,
                         ffi.NULL if mask is None else ptr(mask), ptr(out), ptr(work), bad)
    if bad[0] >= 0:
        return int(bad[0])
    check(rc, f)
    return -1


def shape_advantages(credit, base, beta, kappa, normalize, weights, out):
    n_rows, m = credit.shape
    work = np.empty(3 * max(2048, m) + 3 * m)
    f = "fc_shape_advantages" + suffix(credit)
    check(getattr(lib, f)(ptr(credit), n_rows, m, ptr(base), beta, kappa,
                          normalize, ffi.NULL if weights is None else ptr(weights),
                          ptr(out), ptr(work)), f)
