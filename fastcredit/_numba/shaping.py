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
    shape_advantages(credit, base, beta, kappa, normalize, weights, out)
        credit (n, m) float32/float64, base (n,) float64, normalize 0 (sd),
        1 (max |u|) or 2 (none), weights float64 (n*m,) or None, out (n, m)
        float64: out = base + beta * project_box(normalised centred credit,
        -kappa, kappa, weights, total 0), blocks of rows at a time.
    token_advantages(base, action_adv, token_action, mask, out) -> int
        base (G,) float64, action_adv (G, m) float64, token_action (G, T)
        int32/int64, mask (G, T) uint8 or None, out (G, T) float32.
        Returns -1, or the flat position of the first token_action outside
        [-1, m) (rows before it are written).
"""
import math

import numpy as np
from numba import literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from .._constants import (PROJECT_EVALUATE_MAX, PROJECT_INSERTION_SORT_MAX, PROJECT_NEWTON_STEPS,
                          TOKEN_SELECT_MAX)
from ._simd import (load8, store8, zeros8)
from ._simd_lanes import (bits8, gather_strided, lanes_to_rows, rows_to_lanes, select8, splat8)

__all__ = ["project_box", "shape_advantages", "token_advantages"]

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
        # rows of the lanes' kind go straight to the breakpoint search, as
        # _lane_groups does; for the others Newton steps are cheaper
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


@jit
def _clip8(x, lo, hi):
    """min(hi, max(lo, x)) lane by lane: _clip's two selects."""
    above = select8(x < lo, lo, x)
    return select8(above > hi, hi, above)


@jit
def _lane_values(a, r0, stride):
    """a[(r0 + l) * stride] for the 8 lanes l (one value when stride is 0,
    the common case of one kappa and one total for every row)."""
    return splat8(a[0]) if stride == 0 else gather_strided(a, r0 * stride, stride)


@jit
def _lane_scan(U, m, lo, hi, tot, want_flat):
    """lane_scan of csrc/shaping_lanes.inc: (left, right, f at right,
    flat_end) of the 8 lanes' rows (U[8*i:8*i+8] = coordinate i of each),
    flat_end only when want_flat (m and want_flat compile-time literals). A
    breakpoint that is not finite becomes NaN, which every comparison leaves
    out, so for the others f > total is not (f <= total)."""
    M = literally(m)
    flat_pass = literally(want_flat)
    inf = splat8(np.inf)
    left = splat8(-np.inf)
    flat_end = splat8(-np.inf)
    right = inf
    f_right = zeros8()
    for j in range(M):
        for side in range(2):
            bp = load8(U, 8 * j) - (lo if side else hi)
            t = select8((bp > -np.inf) & (bp < np.inf), bp, np.nan)
            f = zeros8()
            for i in range(M):
                f = f + _clip8(load8(U, 8 * i) - t, lo, hi)
            at_or_below = f <= tot
            nearer = at_or_below & (t < right)
            left = select8(~at_or_below & (t > left), t, left)
            f_right = select8(nearer, f, f_right)
            right = select8(nearer, t, right)
            if flat_pass:
                flat_end = select8((f >= tot) & (t > flat_end), t, flat_end)
    return left, right, f_right, flat_end


@jit
def _project_one(u, r, lower, upper, brs, bcs, weights, wrs, total, ts, flat, row, bp):
    """Row r by _project_row (row: scratch for it in float64)."""
    m = u.shape[1]
    for i in range(m):
        row[i] = np.float64(u[r, i])
    _project_row(row, lower, upper, r * brs, bcs, weights, r * wrs, total[r * ts], flat, r * m,
                 bp)


@jit
def _lane_groups(u, lower, upper, brs, bcs, weights, wrs, total, ts, out, m):
    """lane_groups and project_lanes of csrc/shaping_lanes.inc: the whole
    groups of 8 rows of unit weights and one bound pair per row, one row
    per lane of 8-lane vectors (m a compile-time literal, so the loops over
    coordinates unroll), the same operations in the same order as
    _project_row, so the same bits, every lane taking every step and
    selects keeping what applies to it. A row that clips finds its segment
    as _scan_breakpoints does: f at all 2m breakpoints. Rows with a
    non-finite sum are redone by _project_row. Returns the rows done. One
    function, not a call per group: a call passes every array field on the
    stack. bcs, weights and wrs (0, None and 0 here) only pass through to
    _project_one: with project_box's own types it is compiled once."""
    M = literally(m)
    n_rows = u.shape[0]
    U = np.empty(8 * M)  # U[8*i:8*i+8] = coordinate i of the 8 rows
    row = np.empty(M)
    bp = np.empty(2 * M)
    out_flat = out.reshape(-1)
    r0 = 0
    while r0 + 8 <= n_rows:
        lo = _lane_values(lower, r0, brs)
        hi = _lane_values(upper, r0, brs)
        tot = _lane_values(total, r0, ts)
        rows_to_lanes(U, u, r0, M)
        s = zeros8()
        for i in range(M):
            s = s + load8(U, 8 * i)
        finite = (s > -np.inf) & (s < np.inf)
        tau = (s - tot) / np.float64(M)
        clipped = tau < -np.inf  # no lane
        for i in range(M):
            x = load8(U, 8 * i) - tau
            clipped = clipped | (x < lo) | (x > hi)
        clipped = clipped & finite
        if bits8(clipped):
            left, right, f_right, flat_end = _lane_scan(U, M, lo, hi, tot, False)
            flat = (right < np.inf) & (f_right == tot)
            if bits8(flat):  # rare: f = total exactly at a breakpoint
                left, right, f_right, flat_end = _lane_scan(U, M, lo, hi, tot, True)
            # _segment_root on (left, right), or the flat end nearest 0
            level = zeros8()
            slope = zeros8()
            for i in range(M):
                x = load8(U, 8 * i)
                at_hi = x - hi >= right
                at_lo = x - lo <= left
                level = level + select8(at_hi, hi, select8(at_lo, lo, x))
                slope = slope + select8(at_hi | at_lo, 0.0, 1.0)
            root = (level - tot) / slope
            root = select8(root < left, left, select8(root > right, right, root))
            root = select8(slope > 0.0, root, right)
            nearest = select8(right > 0.0, right, select8(flat_end < 0.0, flat_end, 0.0))
            root = select8(flat, nearest, root)
            tau = select8(clipped, root, tau)
        # u - tau itself where nothing clipped (clip changes nothing there)
        for i in range(M):
            store8(U, 8 * i, _clip8(load8(U, 8 * i) - tau, lo, hi))
        lanes_to_rows(out, r0, U, M)
        redo = ~bits8(finite) & 0xFF
        for l in range(8):
            if redo >> l & 1:
                _project_one(u, r0 + l, lower, upper, brs, bcs, weights, wrs, total, ts,
                             out_flat, row, bp)
        r0 += 8
    return r0


@jit
def _lane_rows(u, lower, upper, brs, bcs, weights, wrs, total, ts, out):
    """_lane_groups with m as a literal (m <= PROJECT_EVALUATE_MAX)."""
    m = u.shape[1]
    if m == 1:
        return _lane_groups(u, lower, upper, brs, bcs, weights, wrs, total, ts, out, 1)
    if m == 2:
        return _lane_groups(u, lower, upper, brs, bcs, weights, wrs, total, ts, out, 2)
    if m == 3:
        return _lane_groups(u, lower, upper, brs, bcs, weights, wrs, total, ts, out, 3)
    if m == 4:
        return _lane_groups(u, lower, upper, brs, bcs, weights, wrs, total, ts, out, 4)
    if m == 5:
        return _lane_groups(u, lower, upper, brs, bcs, weights, wrs, total, ts, out, 5)
    if m == 6:
        return _lane_groups(u, lower, upper, brs, bcs, weights, wrs, total, ts, out, 6)
    if m == 7:
        return _lane_groups(u, lower, upper, brs, bcs, weights, wrs, total, ts, out, 7)
    return _lane_groups(u, lower, upper, brs, bcs, weights, wrs, total, ts, out, 8)


@jit
def project_box(u, lower, upper, bound_row_stride, bound_col_stride, weights,
                weight_row_stride, total, total_stride, out):
    n_rows, m = u.shape
    bp = np.empty(2 * m)
    row = np.empty(m)
    # flat output and offsets rather than out[r]: a view per row costs more
    # than projecting it
    flat = out.reshape(-1)
    done = 0
    # its own test: Numba drops the branch when weights is an array, so
    # those signatures compile no lanes
    if weights is None:
        if bound_col_stride == 0 and m <= PROJECT_EVALUATE_MAX:
            done = _lane_rows(u, lower, upper, bound_row_stride, bound_col_stride, weights,
                              weight_row_stride, total, total_stride, out)
    for r in range(done, n_rows):
        _project_one(u, r, lower, upper, bound_row_stride, bound_col_stride, weights,
                     weight_row_stride, total, total_stride, flat, row, bp)


# Values in a block of shape_advantages' rows (csrc/shaping.c projects
# blocks of 2048; the arithmetic of a row does not depend on the block).
_SHAPE_BLOCK_VALUES = 8192


@jit
def _shape_rows(credit, r0, nb, normalize, U, stat, rep):
    """shape_rows of csrc/shaping.c: rows [r0, r0 + nb) of credit centred
    and scaled into U[:nb], in the same order, the divisions and square
    roots in loops over the block that vectorise across rows."""
    m = credit.shape[1]
    for r in range(nb):
        for i in range(m):
            U[r, i] = np.float64(credit[r0 + r, i])
    for r in range(nb):
        s = 0.0
        for i in range(m):
            s += U[r, i]
        stat[r] = s
    for r in range(nb):
        stat[r] = stat[r] / m
    for r in range(nb):
        for i in range(m):
            U[r, i] -= stat[r]
    if normalize == 2:
        return
    if normalize == 0:
        for r in range(nb):
            q = 0.0
            for i in range(m):
                q += U[r, i] * U[r, i]
            stat[r] = q
        for r in range(nb):
            stat[r] = math.sqrt(stat[r] / m)
    else:
        for r in range(nb):
            spread = 0.0
            nan = False
            for i in range(m):
                a = abs(U[r, i])
                spread = a if a > spread else spread
                nan |= a != a
            stat[r] = np.nan if nan else spread
    for r in range(nb):
        for i in range(m):
            rep[r * m + i] = stat[r]
    flat = U.reshape(-1)
    for k in range(nb * m):
        d = rep[k]
        y = flat[k] / (d if d > 0.0 else 1.0)
        flat[k] = y if d > 0.0 else (0.0 if d == d else np.nan)


@jit
def shape_advantages(credit, base, beta, kappa, normalize, weights, out):
    n_rows, m = credit.shape
    rows = max(1, _SHAPE_BLOCK_VALUES // m)
    if rows >= 8:
        rows -= rows % 8
    U = np.empty((rows, m))
    stat = np.empty(rows)
    rep = np.empty(rows * m)
    lo = np.full(1, -kappa)
    hi = np.full(1, kappa)
    total = np.zeros(1)
    for r0 in range(0, n_rows, rows):
        nb = min(rows, n_rows - r0)
        _shape_rows(credit, r0, nb, normalize, U, stat, rep)
        if weights is None:
            project_box(U[:nb], lo, hi, 0, 0, None, m, total, 0, out[r0:r0 + nb])
        else:
            project_box(U[:nb], lo, hi, 0, 0, weights[r0 * m:], m, total, 0, out[r0:r0 + nb])
        for r in range(r0, r0 + nb):
            b = base[r]
            for i in range(m):
                out[r, i] = out[r, i] * beta + b


@jit
def _pick(a, w):
    """w[a & 7] (w: 8 float32) by three selects on the bits of a: no load
    per token and no compare per action (the vector loop's compares into
    mask registers share one port)."""
    low = w[1] if a & 1 else w[0]
    low_high = w[3] if a & 1 else w[2]
    high_low = w[5] if a & 1 else w[4]
    high = w[7] if a & 1 else w[6]
    below = low_high if a & 2 else low
    above = high if a & 2 else high_low
    return above if a & 4 else below


@jit
def token_advantages(base, action_adv, token_action, mask, out):
    n_seq, n_tok = token_action.shape
    m = action_adv.shape[1]
    if n_tok == 0:
        return -1
    # zeros past m: a bad id of [m, TOKEN_SELECT_MAX) reads one, as in C
    size = max(m, TOKEN_SELECT_MAX)
    table = np.zeros(size + 1, dtype=np.float32)
    # ids -1 .. 6 by their low three bits: w[a & 7], w[7] = w[-1] the base
    w = np.zeros(8, dtype=np.float32)
    for g in range(n_seq):
        table[0] = np.float32(base[g])
        for i in range(m):
            table[1 + i] = np.float32(action_adv[g, i])
        ta = token_action[g]
        o = out[g]
        bad = False
        if m < 8:
            w[7] = table[0]
            for i in range(m):
                w[i] = table[1 + i]
            values = to_fixed_tuple(w, 8)
            # the row's smallest and largest ids, in ta's own integer type
            # (one min and one max per vector of ids), decide whether any
            # is bad
            lowest = ta[0]
            highest = ta[0]
            for t in range(n_tok):
                a = ta[t]
                lowest = a if a < lowest else lowest
                highest = a if a > highest else highest
                v = _pick(a, values)
                o[t] = v if mask is None else (v if mask[g, t] else np.float32(0.0))
            bad = lowest < -1 or highest >= m
        if m >= 8 or bad:
            # (a bad id: the row again as C writes it)
            for t in range(n_tok):
                k = np.int64(ta[t]) + 1
                bad |= (k < 0) | (k > m)
                v = table[k if 0 <= k <= size else 0]
                o[t] = v if mask is None else (v if mask[g, t] else np.float32(0.0))
        if bad:
            for t in range(n_tok):
                if not -1 <= ta[t] < m:
                    return g * n_tok + t
    return -1
