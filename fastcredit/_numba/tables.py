"""Numba kernels of the tables family; the same algorithms, in the same
summation order, as csrc/tables.c.

Signatures (v: (B, 2**m) float32/float64, out: float64):
    semivalue(v, weights, out)              out (B, m)
    semivalue_ranges(v1, weights, center, start, stop, acc)    acc (n, m + 1): the
        partial sums of fc_semivalue_partial over n equal ranges of [start, stop)
    singleton(v, out), leave_one_out(v, out)                   out (B, m)
    pair_interactions(v, out), size_resolved(v, out)           out (B, m, m)
    moebius(v, out), from_moebius(v, out)                      out (B, 2**m)
    owen(v, groups, level_start, item_start, items, weights, out)  out (B, m)
"""
import numpy as np
from llvmlite import ir
from numba import literally, njit
from numba.core import cgutils, types
from numba.extending import intrinsic

from .._constants import TABLE_BLOCK_BITS
from ._simd import (_F64, _I32, _VEC, _element_pointer, _keep_bit, _on_x86, _realign_stack,
                    _splat, aligned_empty, f64x8, lane, lane_zeta, load8, reduce6, reduce8,
                    store8, store_fence, store_lanes, stream8, zeros8)

__all__ = ["semivalue", "semivalue_ranges", "singleton", "leave_one_out", "pair_interactions",
           "size_resolved", "moebius", "from_moebius", "owen"]

_BLOCK = 1 << TABLE_BLOCK_BITS
#: STREAM_MIN_RESULTS of csrc/tables.c: batches of small games with at
#: least this many results (1 MiB, about a core's L2) stream them
_STREAM_MIN_RESULTS = 1 << 17

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
    cs = aligned_empty((m - bb + 1) << bb, 8).reshape((m - bb + 1, 1 << bb))
    ws = aligned_empty((m - bb + 1) << bb, 8).reshape((m - bb + 1, 1 << bb))
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
                for i in range(8):
                    s[i] += x[j + half + i]
                    x[j + i] += x[j + half + i]
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
    s[:] = 0.0
    if n < 8:
        for j in range(n):
            d = np.float64(v[g, base + j]) - center
            s[0] += d * w[j]
            x[j] = d * c[j]
    else:
        for j in range(0, n, 8):
            for i in range(8):
                d = np.float64(v[g, base + j + i]) - center
                s[i] += d * w[j + i]
                x[j + i] = d * c[j + i]
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


#: the partials a table's bits below TABLE_BLOCK_BITS = 8 add to: p0 .. p7, B's
_PARTIALS = types.UniTuple(f64x8, TABLE_BLOCK_BITS + 1)


@intrinsic
def _weigh_fold(typingctx, v, start, center, cs, ws, off, bits, partials):
    """weigh_vectors and fold_vectors of csrc/tables_real.inc and tables.c on
    one table of 2**bits entries (3 <= bits <= TABLE_BLOCK_BITS, a literal):
    its 2**(bits-3) vectors from flat index start of v (float32 widened),
    d = v - center, x[k] = d cs[off + 8k ..], B's partial sum_k d ws[off +
    8k ..] from 0 in k order, then the halving fold of x onto p[bits-1] ..
    p3 and the lane masks of the folded first vector onto p0 .. p2. Into
    ``partials`` (p0 .. p7, B's), or, for None, fresh partials (C's fresh:
    each starts at its first term; p[bits] .. p7 and B's 0 before B's
    partial). Returns the partials and the folded first vector (what a
    block's high bits add). Same operations in the same order as C, so the
    same bits.

    Each vector is a value of its own, so LLVM keeps the table in registers
    as GCC does with C's unrolled loops (a jitted loop over a scratch array
    stored the block and loaded it back, issue 33). Two orderings keep
    LLVM's spills near GCC's on a block of 32 vectors: the top level of the
    fold takes each upper vector as soon as it is made, and after each
    vector an empty volatile asm reading B's partial (no instruction: it
    orders the compiler's schedule, not the processor's) keeps B's addition
    (a chain of 32) ahead of the next loads, which LLVM's scheduler otherwise
    hoisted, spilling the 32 products d ws to add them at the end (per block
    101 stack accesses, C 24; one game m = 20 1.11x C's time, with it 1.02x).

    The function this lands in realigns its stack (LLVM's ``stackrealign``):
    Numba's functions keep the 16-byte alignment they are called with, so
    their 64-byte spills crossed cache lines or not as the caller's stack
    depth fell, and one game m = 20 took 240 or 270-310 us by the Python
    path it was called from (AMD EPYC Zen 4)."""
    fresh = partials == types.none
    if not (isinstance(v, types.Array) and v.layout == "C"
            and v.dtype in (types.float32, types.float64)
            and all(isinstance(a, types.Array) and a.layout == "C" and a.dtype == types.float64
                    for a in (cs, ws))
            and isinstance(start, types.Integer) and isinstance(off, types.Integer)
            and isinstance(center, types.Float) and (fresh or partials == _PARTIALS)
            and isinstance(bits, types.IntegerLiteral)
            and 3 <= bits.literal_value <= TABLE_BLOCK_BITS):
        return None
    n_bits = bits.literal_value
    sig = types.UniTuple(f64x8, TABLE_BLOCK_BITS + 2)(v, types.intp, types.float64, cs, ws,
                                                      types.intp, bits, partials)

    def codegen(context, builder, sig, args):
        v_type, _, _, cs_type, ws_type, _, _, _ = sig.args
        a, first, mid, c_arr, w_arr, at, _, packed = args
        _realign_stack(builder)   # see above
        zero = ir.Constant(_VEC, [0.0] * 8)
        p = ([zero] * (TABLE_BLOCK_BITS + 1) if fresh
             else cgutils.unpack_tuple(builder, packed, TABLE_BLOCK_BITS + 1))
        centre = _splat(builder, mid)

        def vector(array_type, array, index, k):
            ptr = _element_pointer(context, builder, array_type, array,
                                   builder.add(index, ir.Constant(index.type, 8 * k)))
            value = builder.load(ptr, align=array_type.dtype.bitwidth // 8)
            return value if array_type.dtype == types.float64 else builder.fpext(value, _VEC)

        def add(q, term, first_term):   # p[q] += term, or p[q] = term for a fresh first
            p[q] = term if fresh and first_term else builder.fadd(p[q], term)

        n, b, x, top = 1 << (n_bits - 3), zero, [], n_bits - 1
        x86 = _on_x86(builder)
        for k in range(n):
            d = builder.fsub(vector(v_type, a, first, k), centre)
            b = builder.fadd(b, builder.fmul(d, vector(ws_type, w_arr, at, k)))
            x.append(builder.fmul(d, vector(cs_type, c_arr, at, k)))
            if top >= 3 and k >= n // 2:   # the top level's fold of it, as soon as it is made
                add(top, x[k], k == n // 2)
                x[k - n // 2] = builder.fadd(x[k - n // 2], x[k])
            if x86:   # B's step k done before the loads of step k + 1 (see above)
                builder.asm(ir.FunctionType(ir.VoidType(), [_F64]), "", "v",
                            [builder.extract_element(b, ir.Constant(_I32, 0))], True)
        for q in range(top - 1, 2, -1):
            half = 1 << (q - 3)
            for k in range(half):
                add(q, x[k + half], k == 0)
                x[k] = builder.fadd(x[k], x[k + half])
        for q in range(3):
            add(q, _keep_bit(builder, x[0], ir.Constant(ir.IntType(64), q)), True)
        add(TABLE_BLOCK_BITS, b, True)
        return context.make_tuple(builder, sig.return_type, p + [x[0]])

    return sig, codegen


@jit
def _lane_blocks(v, g, m, cs, ws, center, start, stop, acc):
    """The blocked pass for m >= TABLE_BLOCK_BITS in the order of the vector
    path of csrc/tables.c: per-player 8-lane partials (row q of p, row m for
    B) accumulate across blocks and are reduced (pairwise) once at the end.
    The partials of a block's own bits (TABLE_BLOCK_BITS = 8: p0 .. p7) and
    of B are values (_weigh_fold), those of its high bits rows of p, each
    on a cache line as the coefficient tables are (a 64-byte access across
    two lines is two)."""
    p = aligned_empty((m + 1) * 8, 8)
    p[:] = 0.0
    row = g * v.shape[1]
    z = zeros8()
    partials = (z, z, z, z, z, z, z, z, z)
    for base in range(start, stop, _BLOCK):
        blk = base >> TABLE_BLOCK_BITS
        off = _popcount(blk) << TABLE_BLOCK_BITS
        p0, p1, p2, p3, p4, p5, p6, p7, pb, total = _weigh_fold(
            v, row + base, center, cs, ws, off, TABLE_BLOCK_BITS, partials)
        partials = (p0, p1, p2, p3, p4, p5, p6, p7, pb)
        for i in range(m - TABLE_BLOCK_BITS):
            if (blk >> i) & 1:
                q = 8 * (TABLE_BLOCK_BITS + i)
                store8(p, q, load8(p, q) + total)
    for q in range(TABLE_BLOCK_BITS):
        store8(p, 8 * q, partials[q])
    store8(p, 8 * m, partials[TABLE_BLOCK_BITS])
    for q in range(m + 1):
        acc[q] += _sum8(p[8 * q:8 * q + 8])


@jit
def _semivalue_blocks(v, g, m, cs, ws, center, start, stop, acc):
    if m >= TABLE_BLOCK_BITS:
        _lane_blocks(v, g, m, cs, ws, center, start, stop, acc)
    else:
        _scalar_blocks(v, g, m, cs, ws, center, start, stop, acc)


@jit
def _vector_game(v, g, m, cs, ws):
    """vector_game of csrc/tables_real.inc (3 <= m <= 8): game g's table as
    2**(m-3) vectors folded into 8 fresh partial vectors p0..p7 (player q's
    in pq; p7 carries B when m < 8) that one transposing reduction sums
    (reduce6 for m <= 5, where p5 and p6 are 0); its results in lanes 0 ..
    m-1, the lanes past m other sums less B, finite for a finite table. m a
    literal, the table's bits for _weigh_fold."""
    M = literally(m)
    z = zeros8()
    p0, p1, p2, p3, p4, p5, p6, p7, pb, _ = _weigh_fold(v, g << M, np.float64(v[g, 0]), cs,
                                                        ws, 0, M, None)
    if M < 8:
        r = (reduce6(p0, p1, p2, p3, p4, pb) if M <= 5
             else reduce8(p0, p1, p2, p3, p4, p5, p6, pb))
        return r - lane(r, 7)
    r = reduce8(p0, p1, p2, p3, p4, p5, p6, p7)
    return r - lane(reduce8(pb, z, z, z, z, z, z, z), 0)


@jit
def _sum_lanes(x):
    z = zeros8()
    return lane(reduce8(x, z, z, z, z, z, z, z), 0)


@jit
def _vector_games(v, m, cs, ws, out, start, stop):
    """vector_games of csrc/tables_real.inc: _vector_game on games start ..
    stop - 1, their results stored into out; returns their probe (the
    sum of every lane times 0)."""
    M = literally(m)
    probe = zeros8()
    for g in range(start, stop):
        r = _vector_game(v, g, M, cs, ws)
        store_lanes(out, g * M, r, M)
        probe = probe + r * 0.0
    return _sum_lanes(probe)


@jit
def _streamed_games(v, m, cs, ws, out, start, stop):
    """streamed_games of csrc/tables_real.inc: _vector_games 8 games at a
    time (stop - start a multiple of 8, out's element start * m on a cache
    line), whose m * 8 results fill m cache lines written with
    non-temporal stores, so that a large batch's results go to memory
    without being read into the cache first. Same results, same bits."""
    M = literally(m)
    lines = aligned_empty(8 * 8 + 8, 128)   # 1024 bytes: within a page
    probe = zeros8()
    for g in range(start, stop, 8):
        for k in range(8):
            r = _vector_game(v, g + k, M, cs, ws)
            store8(lines, k * M, r)   # the next game overwrites the lanes past m
            probe = probe + r * 0.0
        for k in range(M):
            stream8(out, g * M + 8 * k, load8(lines, 8 * k))
    store_fence()   # the results are in memory before the caller reads them
    return _sum_lanes(probe)


@jit
def _streamed_start(out, m):
    """streamed_start of csrc/tables.c: the first of 8 games whose results
    start on a cache line of out, or 8 if none does."""
    for g in range(8):
        if (out.ctypes.data + 8 * g * m) % 64 == 0:
            return g
    return 8


@jit
def _small_games(v, m, cs, ws, out):
    """The small-game pass of fc_semivalue in csrc/tables_real.inc: a batch
    of at least STREAM_MIN_RESULTS results streams the games from the
    first whole cache line of out to the last (_streamed_games), the others
    stored ordinarily (C on its avx512 path; here on any processor, LLVM
    lowering the stores to its vector width). Returns the probe of
    semivalue_small."""
    M = literally(m)
    n = v.shape[0]
    head = _streamed_start(out, M) if n * M >= _STREAM_MIN_RESULTS else n
    body = (n - head) // 8 * 8 if head < min(8, n) else 0
    if not body:
        return _vector_games(v, M, cs, ws, out, 0, n)
    tail = head + body
    return (_vector_games(v, M, cs, ws, out, 0, head)
            + _streamed_games(v, M, cs, ws, out, head, tail)
            + _vector_games(v, M, cs, ws, out, tail, n))


@jit
def _semivalue_small(v, m, cs, ws, out):
    """_small_games with m as a literal (3 <= m <= 8); returns the sum of
    every result times 0: 0 when all are finite, NaN otherwise (C's
    semivalue_small), so that a finite batch needs no second pass."""
    if m == 3:
        return _small_games(v, 3, cs, ws, out)
    if m == 4:
        return _small_games(v, 4, cs, ws, out)
    if m == 5:
        return _small_games(v, 5, cs, ws, out)
    if m == 6:
        return _small_games(v, 6, cs, ws, out)
    if m == 7:
        return _small_games(v, 7, cs, ws, out)
    return _small_games(v, 8, cs, ws, out)


@jit
def _semivalue_definition(v, g, w, phi):
    """phi_i = sum over S without i, in mask order, of w[|S|] (v(S + i) -
    v(S)) for game g: semivalue_definition of csrc/tables_real.inc, for a
    game whose one-pass result is not finite (T_i - B would turn a defined
    +-inf into NaN)."""
    m = w.shape[0]
    for i in range(m):
        bit = 1 << i
        total = 0.0
        for s in range(1 << m):
            if not s & bit:
                total += w[_popcount(s)] * (np.float64(v[g, s | bit]) - np.float64(v[g, s]))
        phi[i] = total


@jit
def _redo_nonfinite(v, w, out):
    """Games whose one-pass result has a non-finite entry, redone by the
    definition (redo_nonfinite of csrc/tables_real.inc)."""
    for g in range(v.shape[0]):
        probe = 0.0
        for i in range(w.shape[0]):
            probe += out[g, i] * 0.0
        if probe != 0.0:
            _semivalue_definition(v, g, w, out[g])


@jit
def semivalue(v, weights, out):
    m = _log2(v.shape[1])
    cs, ws = _coefficient_tables(m, weights)
    if 3 <= m <= TABLE_BLOCK_BITS:
        if _semivalue_small(v, m, cs, ws, out) != 0.0:
            _redo_nonfinite(v, weights, out)
        return
    if m < 3:
        x = np.empty(1 << m)
        t = np.empty(m)
        s = np.empty(8)
        probe = 0.0
        for g in range(v.shape[0]):
            b = _weigh_block(v, g, 0, 1 << m, np.float64(v[g, 0]), cs[0], ws[0], x, s)
            for i in range(m):
                t[i] = 0.0
            _fold(x, m, t, s)
            for i in range(m):
                out[g, i] = t[i] - b
                probe += (t[i] - b) * 0.0
        if probe != 0.0:
            _redo_nonfinite(v, weights, out)
        return
    acc = np.empty(m + 1)
    for g in range(v.shape[0]):
        acc[:] = 0.0
        _semivalue_blocks(v, g, m, cs, ws, np.float64(v[g, 0]), 0, 1 << m, acc)
        for i in range(m):
            out[g, i] = acc[i] - acc[m]
    _redo_nonfinite(v, weights, out)


@jit
def semivalue_ranges(v, weights, center, start, stop, acc):
    m = _log2(v.shape[0])
    cs, ws = _coefficient_tables(m, weights)
    length = (stop - start) // acc.shape[0]
    for r in range(acc.shape[0]):
        a = start + r * length
        _semivalue_blocks(v.reshape(1, v.shape[0]), 0, m, cs, ws, center, a, a + length,
                          acc[r])


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
def _low_bits(src, s0, dst, d0, bs, sign):
    """Bits 0 .. log2(bs) - 1 of the transform (bs >= 8) on the block
    dst[d0 : d0 + bs], read from src[s0 : s0 + bs] (flat indices; src may
    be dst): bits 0..2 within each vector, then whole vectors."""
    for k in range(0, bs, 8):
        store8(dst, d0 + k, lane_zeta(load8(src, s0 + k), sign))
    step = 8
    while step < bs:
        for b0 in range(d0, d0 + bs, 2 * step):
            for j in range(b0, b0 + step, 8):
                store8(dst, j + step, load8(dst, j + step) + load8(dst, j) * sign)
        step *= 2


@jit
def _high_bits(a, a0, m, sign):
    """Bits TABLE_BLOCK_BITS .. m - 1 of the transform of the table
    a[a0 : a0 + 2**m], on column strips narrow enough that a strip's rows
    stay in L2 (as subset_transform in csrc/tables.c)."""
    rows = 1 << (m - TABLE_BLOCK_BITS)
    width = max(8, min(_BLOCK, (1 << 17) // rows))
    for strip in range(0, _BLOCK, width):
        for i in range(m - TABLE_BLOCK_BITS):
            step = 1 << i
            for r0 in range(0, rows, 2 * step):
                for r in range(r0, r0 + step):
                    src = a0 + r * _BLOCK + strip
                    dst = src + step * _BLOCK
                    for j in range(0, width, 8):
                        store8(a, dst + j, load8(a, dst + j) + load8(a, src + j) * sign)


@jit
def _scalar_transform(a, m, sign):
    """The transform of a table of m < 3 players (fewer than 8 entries)."""
    for i in range(m):
        step = 1 << i
        for b0 in range(0, 1 << m, 2 * step):
            for j in range(step):
                a[b0 + step + j] += sign * a[b0 + j]


@jit
def _transform_table(src, s0, dst, d0, m, sign):
    """Zeta (sign = +1) or Moebius (sign = -1) transform of the table
    src[s0 : s0 + 2**m] into dst[d0 : d0 + 2**m] (flat indices of
    C-contiguous arrays; src may be dst): for every bit i and every S
    containing i, a[S] += sign * a[S - i], bits in increasing order for
    every entry as in csrc/tables.c, so the bits are the same. m >= 3."""
    bs = 1 << min(m, TABLE_BLOCK_BITS)
    for base in range(0, 1 << m, bs):
        _low_bits(src, s0 + base, dst, d0 + base, bs, sign)
    if m > TABLE_BLOCK_BITS:
        _high_bits(dst, d0, m, sign)


@jit
def _subset_transform(a, m, sign):
    """The transform of one table in place (a: (2**m,) float64)."""
    if m < 3:
        _scalar_transform(a, m, sign)
    else:
        _transform_table(a, 0, a, 0, m, sign)


@jit
def _transform(v, out, sign):
    m = _log2(v.shape[1])
    n = v.shape[1]
    for g in range(v.shape[0]):
        if m < 3:
            for j in range(n):
                out[g, j] = np.float64(v[g, j])
            _scalar_transform(out[g], m, sign)
        else:
            _transform_table(v, g * n, out, g * n, m, sign)


@jit
def moebius(v, out):
    _transform(v, out, -1.0)


@jit
def from_moebius(v, out):
    _transform(v, out, 1.0)


@jit
def _ctz(x):
    c = 0
    while not (x >> c) & 1:
        c += 1
    return c


# games per block of owen (OWEN_BLOCK and owen_block in csrc/tables.c)
_OWEN_BLOCK = 32


@jit
def _owen_player(v, first, n, group, first_level, n_levels, item_start, items, weights, t, sel,
                 cnt, base, wt, acc):
    """owen_player of csrc/tables_real.inc: player i's Owen value in games
    first .. first + n - 1 into acc[:n], the subsets of each level's
    siblings as an odometer over the levels (the last fastest), each
    level's in Gray-code order, each context's terms added for every game
    of the block; t, sel, cnt, base, wt are its scratch."""
    base[0] = 0
    wt[0] = 1.0
    for l in range(n_levels):
        t[l] = 0
        sel[l] = 0
        cnt[l] = 0
    acc[:n] = 0.0
    l = 0
    while True:
        while l < n_levels:
            lv = first_level + l
            base[l + 1] = base[l] | sel[l]
            wt[l + 1] = wt[l] * weights[item_start[lv] + lv + cnt[l]]
            l += 1
        s = base[n_levels]
        w = wt[n_levels]
        for g in range(n):
            acc[g] += w * (np.float64(v[first + g, s | group]) - np.float64(v[first + g, s]))
        l = n_levels - 1
        while l >= 0:
            lv = first_level + l
            t[l] += 1
            if t[l] < (1 << (item_start[lv + 1] - item_start[lv])):
                item = items[item_start[lv] + _ctz(t[l])]
                cnt[l] += -1 if sel[l] & item else 1
                sel[l] ^= item
                break
            t[l] = 0
            sel[l] = 0
            cnt[l] = 0
            l -= 1
        if l < 0:
            return


@jit
def owen(v, groups, level_start, item_start, items, weights, out):
    m = groups.shape[0]
    t = np.zeros(m, np.int64)
    sel = np.zeros(m, np.int64)
    cnt = np.zeros(m, np.int64)
    base = np.zeros(m, np.int64)
    wt = np.zeros(m)
    acc = np.zeros(_OWEN_BLOCK)
    block = max(1, min(_OWEN_BLOCK, (1 << 15) >> m))
    for first in range(0, v.shape[0], block):
        n = min(block, v.shape[0] - first)
        for i in range(m):
            size = np.float64(_popcount(groups[i]))
            _owen_player(v, first, n, groups[i], level_start[i],
                         level_start[i + 1] - level_start[i], item_start, items, weights, t,
                         sel, cnt, base, wt, acc)
            for g in range(n):
                out[first + g, i] = acc[g] / size
