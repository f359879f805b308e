"""Numba kernels of the tables family; the same algorithms, in the same
summation order, as csrc/tables.c.

Signatures (v: (B, 2**m) float32/float64, out: float64):
    semivalue(v, weights, out)              out (B, m)
    semivalue_partial(v1, weights, center, start, stop, acc)   acc (m + 1,)
    singleton(v, out), leave_one_out(v, out)                   out (B, m)
    pair_interactions(v, out), size_resolved(v, out)           out (B, m, m)
    moebius(v, out), from_moebius(v, out)                      out (B, 2**m)
"""
import numpy as np
from numba import literally, njit

from .._constants import TABLE_BLOCK_BITS

__all__ = ["semivalue", "semivalue_partial", "singleton", "leave_one_out", "pair_interactions",
           "size_resolved", "moebius", "from_moebius"]

_BLOCK = 1 << TABLE_BLOCK_BITS

jit = njit(cache=True, nogil=True)


@jit
def _popcount(x):
    x = np.uint64(x)
    c = 0
    while x:
        x &= x - np.uint64(1)
        c += 1
    return c


@jit
def _coefficient_tables(m, w):
    """cs[h, j] = w[c-1] + w[c], ws[h, j] = w[c] for entry j of a block whose
    high bits hold h players (c = h + |j|; w[-1] = w[m] = 0)."""
    bb = min(m, TABLE_BLOCK_BITS)
    cs = np.empty((m - bb + 1, 1 << bb))
    ws = np.empty((m - bb + 1, 1 << bb))
    for h in range(m - bb + 1):
        for j in range(1 << bb):
            c = h + _popcount(j)
            cs[h, j] = (w[c - 1] if c > 0 else 0.0) + (w[c] if c < m else 0.0)
            ws[h, j] = w[c] if c < m else 0.0
    return cs, ws


@jit
def _sum8(s):
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))


@jit
def _fold(x, bits, t, s):
    """Halving fold of x[:2**bits] (see csrc/tables.c); s: scratch of 8."""
    for k in range(bits - 1, -1, -1):
        half = 1 << k
        if half >= 8:
            s[:] = 0.0
            for j in range(0, half, 8):
                for lane in range(8):
                    s[lane] += x[j + half + lane]
                    x[j + lane] += x[j + half + lane]
            t[k] += _sum8(s)
        else:
            acc = 0.0
            for j in range(half):
                acc += x[j + half]
                x[j] += x[j + half]
            t[k] += acc


@jit
def _weigh_block(v, g, base, n, center, c, w, x, s):
    """x[j] = (v[g, base + j] - center) c[j]; returns
    sum_j (v[g, base + j] - center) w[j]. s: scratch of 8 partial sums."""
    for lane in range(8):
        s[lane] = 0.0
    if n < 8:
        for j in range(n):
            d = np.float64(v[g, base + j]) - center
            s[0] += d * w[j]
            x[j] = d * c[j]
    else:
        for j in range(0, n, 8):
            for lane in range(8):
                d = np.float64(v[g, base + j + lane]) - center
                s[lane] += d * w[j + lane]
                x[j + lane] = d * c[j + lane]
    return _sum8(s)


@jit
def _scalar_blocks(v, g, m, cs, ws, center, start, stop, acc):
    bb = min(m, TABLE_BLOCK_BITS)
    bs = 1 << bb
    x = np.empty(bs)
    s = np.empty(8)
    for base in range(start, stop, bs):
        blk = base >> bb
        h = _popcount(blk)
        b = _weigh_block(v, g, base, min(stop - base, bs), center, cs[h], ws[h], x, s)
        _fold(x, bb, acc, s)
        for i in range(m - bb):
            if (blk >> i) & 1:
                acc[bb + i] += x[0]
        acc[m] += b


@jit
def _weigh_rows(v, g, base, nv, center, cs, ws, h, x, pb):
    """x[k, lane] = (v - center) cs[h]; pb = lane partial sums of (v - center)
    ws[h] (weigh_vectors in csrc/tables_real.inc)."""
    pb[:] = 0.0
    for k in range(nv):
        for lane in range(8):
            d = np.float64(v[g, base + 8 * k + lane]) - center
            pb[lane] += d * ws[h, 8 * k + lane]
            x[k, lane] = d * cs[h, 8 * k + lane]


@jit
def _fold_rows(x, bits, p):
    """fold_vectors of csrc/tables.c on 8-lane rows."""
    for q in range(bits - 1, 2, -1):
        half = 1 << (q - 3)
        for k in range(half):
            for lane in range(8):
                p[q, lane] += x[k + half, lane]
                x[k, lane] += x[k + half, lane]
    for q in range(3):
        for lane in range(8):
            p[q, lane] += x[0, lane] if (lane >> q) & 1 else 0.0


@jit
def _lane_blocks(v, g, m, cs, ws, center, start, stop, acc):
    """The blocked pass for m >= TABLE_BLOCK_BITS in the order of the vector
    path of csrc/tables.c: per-player 8-lane partials accumulate across blocks
    and are reduced (pairwise) once at the end."""
    p = np.zeros((m + 1, 8))
    x = np.empty((_BLOCK >> 3, 8))
    pb = np.empty(8)
    for base in range(start, stop, _BLOCK):
        blk = base >> TABLE_BLOCK_BITS
        _weigh_rows(v, g, base, _BLOCK >> 3, center, cs, ws, _popcount(blk), x, pb)
        for lane in range(8):
            p[m, lane] += pb[lane]
        _fold_rows(x, TABLE_BLOCK_BITS, p)
        for i in range(m - TABLE_BLOCK_BITS):
            if (blk >> i) & 1:
                for lane in range(8):
                    p[TABLE_BLOCK_BITS + i, lane] += x[0, lane]
    for q in range(m + 1):
        acc[q] += _sum8(p[q])


@jit
def _semivalue_blocks(v, g, m, cs, ws, center, start, stop, acc):
    if m >= TABLE_BLOCK_BITS:
        _lane_blocks(v, g, m, cs, ws, center, start, stop, acc)
    else:
        _scalar_blocks(v, g, m, cs, ws, center, start, stop, acc)


#: Scratch of the small-game blocks, in doubles per block (2**m x games).
_SMALL_SCRATCH = 2048


@jit
def _transpose_games(v, g0, n, X, m):
    """X[j, g] = v[g0 + g, j] for the n games of a block; m a literal so the
    copy of a table unrolls."""
    M = literally(m)
    for g in range(n):
        for j in range(1 << M):
            X[j, g] = np.float64(v[g0 + g, j])


@jit
def _transpose_block(v, g0, n, X, m):
    """_transpose_games with m as a literal (3 <= m <= 8)."""
    if m == 3:
        _transpose_games(v, g0, n, X, 3)
    elif m == 4:
        _transpose_games(v, g0, n, X, 4)
    elif m == 5:
        _transpose_games(v, g0, n, X, 5)
    elif m == 6:
        _transpose_games(v, g0, n, X, 6)
    elif m == 7:
        _transpose_games(v, g0, n, X, 7)
    else:
        _transpose_games(v, g0, n, X, 8)


@jit
def _semivalue_lanes(v, g0, n, m, cs, ws, out, X, P, B):
    """Games g0 .. g0 + n - 1 of 3 <= m <= 8 players in the order of the
    vector path of csrc/tables.c (each table as 8-lane rows: the fold runs
    over whole rows for bits >= 3, bits 0..2 are lane masks of the last
    row, every sum is a pairwise _sum8), with the games innermost: X[j, g]
    is entry j of game g0 + g, then weighed; P[8q + lane, g] player q's
    partial sums; B[lane, g] those of the base term, B[8, g] the centre
    v(0). After the transposing copy every loop over g is one operation per
    game on contiguous rows, so LLVM vectorises it across games."""
    _transpose_block(v, g0, n, X, m)
    for g in range(n):
        B[8, g] = X[0, g]
    for lane in range(8):
        for g in range(n):
            B[lane, g] = 0.0
    for q in range(m):
        for lane in range(8):
            for g in range(n):
                P[8 * q + lane, g] = 0.0
    for k in range(1 << (m - 3)):
        for lane in range(8):
            j = 8 * k + lane
            c = cs[0, j]
            w = ws[0, j]
            for g in range(n):
                d = X[j, g] - B[8, g]
                B[lane, g] += d * w
                X[j, g] = d * c
    for q in range(m - 1, 2, -1):
        half = 1 << (q - 3)
        for k in range(half):
            for lane in range(8):
                hi = 8 * (k + half) + lane
                for g in range(n):
                    P[8 * q + lane, g] += X[hi, g]
                    X[8 * k + lane, g] += X[hi, g]
    for q in range(3):
        for lane in range(8):
            masked = 1.0 if (lane >> q) & 1 else 0.0
            for g in range(n):
                # x or +0.0, as the lane mask of csrc/tables.c gives
                P[8 * q + lane, g] += X[lane, g] if masked != 0.0 else 0.0
    for g in range(n):
        B[8, g] = ((B[0, g] + B[1, g]) + (B[2, g] + B[3, g])) + (
            (B[4, g] + B[5, g]) + (B[6, g] + B[7, g]))
    for q in range(m):
        r = 8 * q
        for g in range(n):
            out[g0 + g, q] = (((P[r, g] + P[r + 1, g]) + (P[r + 2, g] + P[r + 3, g]))
                              + ((P[r + 4, g] + P[r + 5, g]) + (P[r + 6, g] + P[r + 7, g]))
                              - B[8, g])


@jit
def _semivalue_small(v, m, cs, ws, out):
    """_semivalue_lanes over blocks of games (3 <= m <= 8)."""
    games = _SMALL_SCRATCH >> m
    X = np.empty((1 << m, games))
    P = np.empty((8 * m, games))
    B = np.empty((9, games))
    for g0 in range(0, v.shape[0], games):
        _semivalue_lanes(v, g0, min(games, v.shape[0] - g0), m, cs, ws, out, X, P, B)


@jit
def semivalue(v, weights, out):
    m = _log2(v.shape[1])
    cs, ws = _coefficient_tables(m, weights)
    if 3 <= m <= TABLE_BLOCK_BITS:
        _semivalue_small(v, m, cs, ws, out)
        return
    if m < 3:
        x = np.empty(1 << m)
        t = np.empty(m)
        s = np.empty(8)
        for g in range(v.shape[0]):
            b = _weigh_block(v, g, 0, 1 << m, np.float64(v[g, 0]), cs[0], ws[0], x, s)
            for i in range(m):
                t[i] = 0.0
            _fold(x, m, t, s)
            for i in range(m):
                out[g, i] = t[i] - b
        return
    acc = np.empty(m + 1)
    for g in range(v.shape[0]):
        acc[:] = 0.0
        _semivalue_blocks(v, g, m, cs, ws, np.float64(v[g, 0]), 0, 1 << m, acc)
        for i in range(m):
            out[g, i] = acc[i] - acc[m]


@jit
def semivalue_partial(v, weights, center, start, stop, acc):
    m = _log2(v.shape[0])
    cs, ws = _coefficient_tables(m, weights)
    _semivalue_blocks(v.reshape(1, v.shape[0]), 0, m, cs, ws, center, start, stop, acc)


@jit
def _log2(n):
    m = 0
    while (1 << m) < n:
        m += 1
    return m


@jit
def singleton(v, out):
    m = _log2(v.shape[1])
    for g in range(v.shape[0]):
        for i in range(m):
            out[g, i] = np.float64(v[g, 1 << i]) - np.float64(v[g, 0])


@jit
def leave_one_out(v, out):
    m = _log2(v.shape[1])
    full = (1 << m) - 1
    for g in range(v.shape[0]):
        for i in range(m):
            out[g, i] = np.float64(v[g, full]) - np.float64(v[g, full ^ (1 << i)])


@jit
def pair_interactions(v, out):
    m = _log2(v.shape[1])
    for g in range(v.shape[0]):
        v0 = np.float64(v[g, 0])
        for i in range(m):
            for j in range(m):
                if i == j:
                    out[g, i, j] = 0.0
                else:
                    bi = 1 << i
                    bj = 1 << j
                    out[g, i, j] = (np.float64(v[g, bi | bj]) - np.float64(v[g, bi])
                                    - np.float64(v[g, bj]) + v0)


@jit
def size_resolved(v, out):
    m = _log2(v.shape[1])
    bb = min(m, TABLE_BLOCK_BITS)
    bs = 1 << bb
    binom = np.empty(m)
    binom[0] = 1.0
    for k in range(1, m):
        binom[k] = binom[k - 1] * np.float64(m - k) / np.float64(k)
    a = np.empty((m, m + 1))
    tot = np.empty(m + 1)
    hist = np.empty(m + 1)
    for g in range(v.shape[0]):
        v0 = np.float64(v[g, 0])
        a[:, :] = 0.0
        tot[:] = 0.0
        for base in range(0, 1 << m, bs):
            blk = base >> bb
            hp = _popcount(blk)
            hist[:] = 0.0
            for j in range(bs):
                d = np.float64(v[g, base + j]) - v0
                size = hp + _popcount(j)
                hist[size] += d
                for bit in range(bb):
                    if (j >> bit) & 1:
                        a[bit, size] += d
            for c in range(m + 1):
                tot[c] += hist[c]
            for i in range(m - bb):
                if (blk >> i) & 1:
                    for c in range(m + 1):
                        a[bb + i, c] += hist[c]
        for i in range(m):
            for k in range(m):
                out[g, i, k] = (a[i, k + 1] - (tot[k] - a[i, k])) / binom[k]


@jit
def _subset_transform(a, m, sign):
    bb = min(m, TABLE_BLOCK_BITS)
    bs = 1 << bb
    n = 1 << m
    rows = n // bs
    for base in range(0, n, bs):
        for i in range(bb):
            step = 1 << i
            for b0 in range(base, base + bs, 2 * step):
                for j in range(step):
                    a[b0 + step + j] += sign * a[b0 + j]
    if rows == 1:
        return
    width = max(8, min(bs, (1 << 17) // rows))
    for strip in range(0, bs, width):
        for i in range(m - bb):
            step = 1 << i
            for r0 in range(0, rows, 2 * step):
                for r in range(r0, r0 + step):
                    src = r * bs + strip
                    dst = (r + step) * bs + strip
                    for j in range(width):
                        a[dst + j] += sign * a[src + j]


@jit
def _transform(v, out, sign):
    m = _log2(v.shape[1])
    for g in range(v.shape[0]):
        for j in range(v.shape[1]):
            out[g, j] = np.float64(v[g, j])
        _subset_transform(out[g], m, sign)


@jit
def moebius(v, out):
    _transform(v, out, -1.0)


@jit
def from_moebius(v, out):
    _transform(v, out, 1.0)
