"""Numba kernels of the shaping family; the same algorithms (fast path,
active-set Newton steps for long rows, the breakpoint search), in the same
summation order, as csrc/shaping.c (see csrc/shaping.h for the math).

Signatures:
    project_box(u, lower, upper, bound_row_stride, bound_col_stride,
                weights, weight_row_stride, total, total_stride, out)
        u (n, m) float32/float64; lower, upper, total float64 1-d, read at
        [r*row_stride + i*col_stride] / [r*total_stride]; weights float64
        1-d read at [r*weight_row_stride + i], or None for all ones;
        out (n, m) float64.
    token_advantages(base, action_adv, token_action, mask, out) -> int
        base (G,) float64, action_adv (G, m) float64, token_action (G, T)
        int32/int64, mask (G, T) uint8 or None, out (G, T) float32.
        Returns -1, or the flat position of the first token_action outside
        [-1, m) (rows before it are written).
"""
import math

import numpy as np
from numba import literally, njit

from .._constants import (PROJECT_EVALUATE_MAX, PROJECT_INSERTION_SORT_MAX, PROJECT_NEWTON_STEPS,
                          TOKEN_SELECT_MAX)

__all__ = ["project_box", "token_advantages"]

jit = njit(cache=True, nogil=True)


@jit
def _clip(x, lo, hi):
    above = lo if x < lo else x
    return hi if above > hi else above


@jit
def _weight(weights, w0, i):
    return 1.0 if weights is None else weights[w0 + i]


@jit
def _coordinate(lower, upper, b0, bstep, weights, w0, i):
    """(lower, upper, weight) of coordinate i of the row."""
    return lower[b0 + i * bstep], upper[b0 + i * bstep], _weight(weights, w0, i)


@jit
def _weighted_sum(u, lower, upper, b0, bstep, weights, w0, tau):
    s = 0.0
    for i in range(u.shape[0]):
        lo, hi, w = _coordinate(lower, upper, b0, bstep, weights, w0, i)
        s += w * _clip(u[i] - tau, lo, hi)
    return s


@jit
def _sort(x, n):
    if n > PROJECT_INSERTION_SORT_MAX:
        x[:n].sort()
        return
    for i in range(1, n):
        v = x[i]
        j = i
        while j > 0 and x[j - 1] > v:
            x[j] = x[j - 1]
            j -= 1
        x[j] = v


@jit
def _first_at_or_below(u, lower, upper, b0, bstep, weights, w0, total, bp, lo, n, strict):
    hi = n
    while lo < hi:
        mid = lo + (hi - lo) // 2
        f = _weighted_sum(u, lower, upper, b0, bstep, weights, w0, bp[mid])
        if (f < total) if strict else (f <= total):
            hi = mid
        else:
            lo = mid + 1
    return lo


@jit
def _segment_root(u, lower, upper, b0, bstep, weights, w0, total, left, right):
    level = 0.0
    slope = 0.0
    for i in range(u.shape[0]):
        lo, hi, w = _coordinate(lower, upper, b0, bstep, weights, w0, i)
        at_hi = u[i] - hi >= right
        at_lo = u[i] - lo <= left
        level += w * (hi if at_hi else (lo if at_lo else u[i]))
        slope += 0.0 if (at_hi or at_lo) else w
    if not slope > 0.0:
        return right
    tau = (level - total) / slope
    return left if tau < left else (right if tau > right else tau)


@jit
def _nearest_zero(a, b):
    return a if a > 0.0 else (b if b < 0.0 else 0.0)


@jit
def _nearest_root(u, lower, upper, b0, bstep, weights, w0, total, tau0):
    """The documented tau of a row with zero weights from the tau0 of the
    fast path, Newton steps or sorted search (csrc/shaping.c nearest_root)."""
    if math.isnan(tau0):
        return tau0
    margin = 0.0
    scale = abs(total)
    for i in range(u.shape[0]):
        lo, hi, w = _coordinate(lower, upper, b0, bstep, weights, w0, i)
        x = u[i] - tau0
        below = x - lo
        above = hi - x
        room = w * (below if below < above else above)
        margin = room if room > margin else margin
        scale += abs(w * _clip(x, lo, hi)) + w * abs(tau0)
    if margin > 1e-9 * scale:
        return tau0
    to_below = -np.inf
    from_above = np.inf
    from_below = -np.inf
    to_above = np.inf
    inside = False
    for i in range(u.shape[0]):
        lo, hi, w = _coordinate(lower, upper, b0, bstep, weights, w0, i)
        frm = u[i] - hi
        to = u[i] - lo
        if not w > 0.0 or not lo < hi:
            continue
        inside |= frm < tau0 and tau0 < to
        if to <= tau0:
            to_below = to if to > to_below else to_below
        else:
            to_above = to if to < to_above else to_above
        if frm >= tau0:
            from_above = frm if frm < from_above else from_above
        else:
            from_below = frm if frm > from_below else from_below
    if not inside:
        return _nearest_zero(to_below, from_above)
    left_end = -np.inf
    right_end = np.inf
    left_f = 0.0
    right_f = 0.0
    left_ok = from_below > -np.inf
    right_ok = to_above < np.inf
    for i in range(u.shape[0]):
        lo, hi, w = _coordinate(lower, upper, b0, bstep, weights, w0, i)
        frm = u[i] - hi
        to = u[i] - lo
        if not w > 0.0:
            left_f += 0.0
            right_f += 0.0
            continue
        left_f += w * (lo if to <= from_below else hi)
        right_f += w * (lo if to <= to_above else hi)
        if not lo < hi:
            continue
        left_ok &= not (frm < from_below and from_below < to)
        right_ok &= not (frm < to_above and to_above < to)
        if to <= from_below:
            left_end = to if to > left_end else left_end
        if frm >= to_above:
            right_end = frm if frm < right_end else right_end
    if left_ok and left_f == total:
        return _nearest_zero(left_end, from_below)
    if right_ok and right_f == total:
        return _nearest_zero(to_above, right_end)
    return tau0


@jit
def _newton_projection(u, lower, upper, b0, bstep, weights, w0, total, tau, z, z0):
    """(True, the settled tau) once an active-set Newton step from tau
    settles (z[z0:z0+m] written), else (False, tau)."""
    f = 0.0
    slope = 0.0
    for i in range(u.shape[0]):
        lo, hi, w = _coordinate(lower, upper, b0, bstep, weights, w0, i)
        x = u[i] - tau
        f += w * _clip(x, lo, hi)
        slope += w * (1.0 if (x > lo) & (x < hi) else 0.0)
    for _ in range(PROJECT_NEWTON_STEPS):
        if not slope > 0.0:
            return False, tau
        nxt = tau + (f - total) / slope
        f = 0.0
        slope = 0.0
        moved = False
        for i in range(u.shape[0]):
            lo, hi, w = _coordinate(lower, upper, b0, bstep, weights, w0, i)
            x = u[i] - tau
            y = u[i] - nxt
            c = _clip(y, lo, hi)
            moved |= ((x >= hi) != (y >= hi)) | ((x <= lo) != (y <= lo))
            z[z0 + i] = c
            f += w * c
            slope += w * (1.0 if (y > lo) & (y < hi) else 0.0)
        if not moved:
            return True, nxt
        tau = nxt
    return False, tau


@jit
def _scan_breakpoints(u, lower, upper, b0, bstep, weights, w0, total):
    """(left, right, f at right, flat_end): the neighbours the sorted search
    finds, from f at every finite breakpoint (csrc/shaping.c
    scan_breakpoints)."""
    left = -np.inf
    flat_end = -np.inf
    right = np.inf
    f_right = 0.0
    for i in range(u.shape[0]):
        for side in range(2):
            t = u[i] - (lower if side else upper)[b0 + i * bstep]
            if not math.isfinite(t):
                continue
            f = _weighted_sum(u, lower, upper, b0, bstep, weights, w0, t)
            if f > total:
                if t > left:
                    left = t
            elif t < right:
                right = t
                f_right = f
            if f >= total and t > flat_end:
                flat_end = t
    return left, right, f_right, flat_end


@jit
def _sorted_threshold(u, lower, upper, b0, bstep, weights, w0, total, bp):
    m = u.shape[0]
    if m <= PROJECT_EVALUATE_MAX:
        left, right, f_right, flat_end = _scan_breakpoints(u, lower, upper, b0, bstep,
                                                           weights, w0, total)
    else:
        n = 0
        for i in range(m):
            a = u[i] - upper[b0 + i * bstep]
            b = u[i] - lower[b0 + i * bstep]
            if math.isfinite(a):
                bp[n] = a
                n += 1
            if math.isfinite(b):
                bp[n] = b
                n += 1
        _sort(bp, n)
        j = _first_at_or_below(u, lower, upper, b0, bstep, weights, w0, total, bp, 0, n,
                               False)
        left = bp[j - 1] if j > 0 else -np.inf
        right = bp[j] if j < n else np.inf
        f_right = (_weighted_sum(u, lower, upper, b0, bstep, weights, w0, bp[j]) if j < n
                   else 0.0)
        k = j
        if j < n and f_right == total:
            k = _first_at_or_below(u, lower, upper, b0, bstep, weights, w0, total, bp, j, n,
                                   True) - 1
        flat_end = bp[k] if j < n else -np.inf
    # f = total on [right, flat_end]: any tau there is a root
    if right < np.inf and f_right == total:
        return _nearest_zero(right, flat_end)
    return _segment_root(u, lower, upper, b0, bstep, weights, w0, total, left, right)


@jit
def _project_row(u, lower, upper, b0, bstep, weights, w0, total, z, z0, bp):
    m = u.shape[0]
    s = 0.0
    w_sum = 0.0
    zero = False
    for i in range(m):
        w = _weight(weights, w0, i)
        s += w * u[i]
        w_sum += w
        zero |= w == 0.0
    fast = math.isfinite(s) and w_sum > 0.0
    if not math.isfinite(s):
        for i in range(m):
            if not math.isfinite(u[i]):
                for k in range(m):
                    z[z0 + k] = np.nan
                return
    tau = 0.0
    settled = False
    if fast:
        clipped = False
        tau = (s - total) / w_sum
        for i in range(m):
            x = u[i] - tau
            clipped |= (x < lower[b0 + i * bstep]) | (x > upper[b0 + i * bstep])
            z[z0 + i] = x
        settled = not clipped
        # rows of the lane pass's kind go straight to the breakpoint
        # search, as _project_block does; for the others Newton steps are
        # cheaper
        if clipped and (weights is not None or bstep != 0 or m > PROJECT_EVALUATE_MAX):
            settled, tau = _newton_projection(u, lower, upper, b0, bstep, weights, w0, total,
                                              tau, z, z0)
        if settled and not zero:
            return
    if not settled:
        tau = _sorted_threshold(u, lower, upper, b0, bstep, weights, w0, total, bp)
        if zero:
            tau = _nearest_root(u, lower, upper, b0, bstep, weights, w0, total, tau)
    else:
        # with zero weights the root found may be one of a range: z is
        # rewritten at the documented one, if that is another
        found = tau
        tau = _nearest_root(u, lower, upper, b0, bstep, weights, w0, total, found)
        if tau == found:
            return
    for i in range(m):
        z[z0 + i] = _clip(u[i] - tau, lower[b0 + i * bstep], upper[b0 + i * bstep])


#: Rows per block of the lane pass: its scratch ((LANE rows + 10) x this
#: many doubles) stays in L1.
_BLOCK = 128

# The lane pass divides by a slope that may be 0 in lanes whose result is
# then not used: IEEE division (inf/NaN), not Python's ZeroDivisionError
# branch, which would also stop LLVM vectorising the loops.
lanes_jit = njit(cache=True, nogil=True, error_model="numpy")


@lanes_jit
def _scan_block(U, n, m, lo, hi, tot, left, right, f_right, flat_end, want_flat):
    """lane_scan of csrc/shaping_lanes.inc on the block's n rows (U[i, l]): left,
    right, f at right, and flat_end only when want_flat (m and want_flat
    compile-time literals). A breakpoint that is not finite becomes NaN,
    which every comparison leaves out, so for the others f > total is
    not (f <= total)."""
    M = literally(m)
    flat_pass = literally(want_flat)
    for l in range(n):
        left[l] = -np.inf
        flat_end[l] = -np.inf
        right[l] = np.inf
        f_right[l] = 0.0
    for j in range(M):
        for side in range(2):
            for l in range(n):
                bp = U[j, l] - (lo[l] if side else hi[l])
                t = bp if bp - bp == 0.0 else np.nan
                f = 0.0
                for i in range(M):
                    f += _clip(U[i, l] - t, lo[l], hi[l])
                at_or_below = f <= tot[l]
                nearer = at_or_below & (t < right[l])
                left[l] = t if (not at_or_below) & (t > left[l]) else left[l]
                f_right[l] = f if nearer else f_right[l]
                right[l] = t if nearer else right[l]
                if flat_pass:
                    flat_end[l] = t if (f >= tot[l]) & (t > flat_end[l]) else flat_end[l]


@lanes_jit
def _project_block(u, r0, n, lower, upper, brs, total, ts, out, U, S, m):
    """project_lanes of csrc/shaping_lanes.inc on rows r0 .. r0 + n - 1 (n <= _BLOCK)
    of unit weights and one bound pair per row: the same operations per row
    as _project_row, so the same bits. Each loop runs over the rows l
    (U[i, l] = u[r0 + l, i]) with the loops over i inside it unrolled (m is
    a compile-time literal), so LLVM vectorises it across rows, lanes in
    registers. Returns whether a row has a non-finite sum (to redo row by
    row)."""
    M = literally(m)
    lo = S[0]
    hi = S[1]
    tot = S[2]
    tau = S[3]
    clipped = S[4]
    left = S[5]
    right = S[6]
    f_right = S[7]
    flat_end = S[8]
    finite = S[9]
    # the transposing copy on its own: the loops below then read rows
    for l in range(n):
        for i in range(M):
            U[i, l] = np.float64(u[r0 + l, i])
    for l in range(n):
        lo[l] = lower[(r0 + l) * brs]
        hi[l] = upper[(r0 + l) * brs]
        tot[l] = total[(r0 + l) * ts]
        s = 0.0
        for i in range(M):
            s += U[i, l]
        t = (s - tot[l]) / M
        c = 0.0
        for i in range(M):
            x = U[i, l] - t
            c = 1.0 if (x < lo[l]) | (x > hi[l]) else c
        tau[l] = t
        finite[l] = 1.0 if s - s == 0.0 else 0.0
        clipped[l] = c * finite[l]
    redo = False
    work = False
    for l in range(n):
        redo |= finite[l] == 0.0
        work |= clipped[l] != 0.0
    if work:
        _scan_block(U, n, M, lo, hi, tot, left, right, f_right, flat_end, False)
        flat = False
        for l in range(n):
            flat |= (right[l] < np.inf) & (f_right[l] == tot[l])
        if flat:
            # rare: f = total exactly at a breakpoint
            _scan_block(U, n, M, lo, hi, tot, left, right, f_right, flat_end, True)
        for l in range(n):
            level = 0.0
            slope = 0.0
            for i in range(M):
                x = U[i, l]
                at_hi = x - hi[l] >= right[l]
                at_lo = x - lo[l] <= left[l]
                level += hi[l] if at_hi else (lo[l] if at_lo else x)
                slope += 0.0 if at_hi | at_lo else 1.0
            root = (level - tot[l]) / slope
            root = left[l] if root < left[l] else (right[l] if root > right[l] else root)
            root = root if slope > 0.0 else right[l]
            nearest = _nearest_zero(right[l], flat_end[l])
            root = nearest if (right[l] < np.inf) & (f_right[l] == tot[l]) else root
            tau[l] = root if clipped[l] != 0.0 else tau[l]
    # u - tau itself where nothing clipped (clip changes nothing there)
    for i in range(M):
        for l in range(n):
            U[i, l] = _clip(U[i, l] - tau[l], lo[l], hi[l])
    for l in range(n):
        for i in range(M):
            out[r0 + l, i] = U[i, l]
    return redo


@jit
def _project_blocks(u, r0, n, lower, upper, brs, total, ts, out, U, S):
    """_project_block with m as a literal (PROJECT_EVALUATE_MAX cases)."""
    m = u.shape[1]
    if m == 1:
        return _project_block(u, r0, n, lower, upper, brs, total, ts, out, U, S, 1)
    if m == 2:
        return _project_block(u, r0, n, lower, upper, brs, total, ts, out, U, S, 2)
    if m == 3:
        return _project_block(u, r0, n, lower, upper, brs, total, ts, out, U, S, 3)
    if m == 4:
        return _project_block(u, r0, n, lower, upper, brs, total, ts, out, U, S, 4)
    if m == 5:
        return _project_block(u, r0, n, lower, upper, brs, total, ts, out, U, S, 5)
    if m == 6:
        return _project_block(u, r0, n, lower, upper, brs, total, ts, out, U, S, 6)
    if m == 7:
        return _project_block(u, r0, n, lower, upper, brs, total, ts, out, U, S, 7)
    return _project_block(u, r0, n, lower, upper, brs, total, ts, out, U, S, 8)


@jit
def project_box(u, lower, upper, bound_row_stride, bound_col_stride, weights,
                weight_row_stride, total, total_stride, out):
    n_rows, m = u.shape
    bp = np.empty(2 * m)
    row = np.empty(m)
    # flat output and offsets rather than out[r]: a view per row costs more
    # than projecting it
    flat = out.reshape(-1)
    lanes = weights is None and bound_col_stride == 0 and m <= PROJECT_EVALUATE_MAX
    U = np.empty((m, _BLOCK))
    S = np.empty((10, _BLOCK))
    for r0 in range(0, n_rows, _BLOCK):
        n = min(_BLOCK, n_rows - r0)
        redo = True
        if lanes:
            redo = _project_blocks(u, r0, n, lower, upper, bound_row_stride, total,
                                   total_stride, out, U, S)
        if not redo:
            continue
        for r in range(r0, r0 + n):
            s = 0.0
            for i in range(m):
                row[i] = np.float64(u[r, i])
                s += row[i]
            if lanes and math.isfinite(s):
                continue  # the lane pass's row stands
            _project_row(row, lower, upper, r * bound_row_stride, bound_col_stride, weights,
                         r * weight_row_stride, total[r * total_stride], flat, r * m, bp)


@jit
def _pick(a, table):
    v = table[0]
    for i in range(TOKEN_SELECT_MAX):
        v = table[1 + i] if a == i else v
    return v


@jit
def token_advantages(base, action_adv, token_action, mask, out):
    n_seq, n_tok = token_action.shape
    m = action_adv.shape[1]
    table = np.zeros(max(m, TOKEN_SELECT_MAX) + 1, dtype=np.float32)
    for g in range(n_seq):
        table[0] = np.float32(base[g])
        for i in range(m):
            table[1 + i] = np.float32(action_adv[g, i])
        ta = token_action[g]
        o = out[g]
        bad = False
        if m < TOKEN_SELECT_MAX:
            for t in range(n_tok):
                a = ta[t]
                bad |= (a < -1) | (a >= m)
                v = _pick(a, table)
                o[t] = v if mask is None else (v if mask[g, t] else np.float32(0.0))
        else:
            for t in range(n_tok):
                k = np.int64(ta[t]) + 1
                bad |= (k < 0) | (k > m)
                v = table[k if 0 <= k <= m else 0]
                o[t] = v if mask is None else (v if mask[g, t] else np.float32(0.0))
        if bad:
            for t in range(n_tok):
                if not -1 <= ta[t] < m:
                    return g * n_tok + t
    return -1
