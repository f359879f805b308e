"""Numba kernels of the synthetic family: the sponsored-search request
generator of csrc/synthetic.c, operation for operation (see csrc/synthetic.h
for the recipe and its logarithm, exponential and sine/cosine polynomials),
so both give the same bits on every machine.

Signatures (seed uint64; first, m, k, topics, per_topic, start, stop int):
    search_lengths(seed, first, m, k, empty, short, lengths, start, stop)
        lengths int64 (B*m,): rows start..stop-1 written.
    search_fill(seed, first, m, topics, per_topic, bid, ctr, noise,
                expected_value, offsets, ad, score, value, prerank, start, stop)
        bid, ctr float64 (topics*per_topic,); noise float (the pCTR log-sd);
        expected_value int (nonzero: value = score, else the click-realised
        bid); offsets int64 (B*m + 1,); ad
        int64 and score, value, prerank float64 (offsets[-1],): the instances
        of rows start..stop-1 written (with expected_value nonzero, value
        may be score itself); returns how many have a score or prerank
        that is not finite, counted as they are written.
    replay_repeats(seed, first, m, tables, repeats, noise, out, start, stop)
        tables float64 (B*2**m,), out float64 (B*repeats*2**m,): the noisy
        repeats of rows start..stop-1 (csrc/synthetic.h,
        fc_synthetic_replay_repeats).
Row r is request first + r of the stream (seed); its randomness comes from
the streams (seed, 3 (first + r) + s) of fastcredit._numba.rng, s = 0
(list lengths), 1 (instances), 2 (clicks).

Like the C kernel, search_fill lays the instances of up to _BLOCK output rows
out in small arrays and computes them in straight loops with no branch, which
LLVM vectorises: selects by bit masks (_pick), bit casts by an LLVM intrinsic,
the floor of the rank by the same exact trick with 2**52 as C. The uniforms
are converted from their 53-bit integers as fc_rng_uniform does, not by C's
trick (uniform_of, for GCC's AVX2 clone, which cannot convert a vector of
int64): Numba compiles for the CPU it runs on, where LLVM converts with one
instruction given AVX-512 and with a sequence like C's without (0.4 ns an
instance less here); the results are exact either way, so the bits are the
same. Each step is a loop of its own over the block, as in C, and asks LLVM
for 512-bit vectors (_simd.prefer_512_bit_vectors: 8 lanes, like GCC's
x86-64-v4 clone, not the 4 of Numba's default tuning; 0.15 of the fill's
time here). The gathers of bid and ctr run in a loop of their own
(LLVM vectorises none), and the outputs are written through views, so their
stores are contiguous. Plain float arithmetic is never contracted into FMAs
by Numba without fastmath, so every operation rounds as in C.
"""
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from . import rng
from ._simd import prefer_512_bit_vectors

__all__ = ["search_lengths", "search_fill", "replay_repeats"]

jit = njit(cache=True, nogil=True)
# error_model="numpy": a float division never raises (and leaves no branch
# in the loops for the vectoriser to trip on); none here divides by zero.
fast_jit = njit(cache=True, nogil=True, error_model="numpy")

SHAPE_STREAM, DRAW_STREAM, CLICK_STREAM = 0, 1, 2
_BLOCK = 1024
_ROUNDER = 6755399441055744.0   # 1.5 * 2**52: (t + R) - R rounds t to an integer
_MAX_FLOAT = np.finfo(np.float64).max
_G1 = np.uint64(rng.GOLDEN)
_G2 = np.uint64((2 * int(rng.GOLDEN)) % 2**64)
_G3 = np.uint64((3 * int(rng.GOLDEN)) % 2**64)
_G4 = np.uint64((4 * int(rng.GOLDEN)) % 2**64)

# The constants of csrc/synthetic.c (see there and csrc/synthetic.h).
_LN2_HI = float.fromhex("0x1.62e42fee00000p-1")
_LN2_LO = float.fromhex("0x1.a39ef35793c76p-33")
_INV_LN2 = float.fromhex("0x1.71547652b82fep+0")
_SQRT_HALF_BITS = np.uint64(0x3fe6a09e667f3bcd)
# H (log), P (exp), S (sin) and C (cos), coefficient 0 first: LOG_H*,
# EXP_P*, SIN_S*, COS_C* of csrc/synthetic.c.
(_LH0, _LH1, _LH2, _LH3, _LH4, _LH5, _LH6,
 _EP0, _EP1, _EP2, _EP3, _EP4, _EP5, _EP6, _EP7, _EP8, _EP9, _EP10,
 _SS0, _SS1, _SS2, _SS3, _SS4, _SS5, _SS6,
 _CC0, _CC1, _CC2, _CC3, _CC4, _CC5, _CC6) = [float.fromhex(h) for h in """
    0x1.5555555555558p-1 0x1.99999999952d7p-2 0x1.2492492df281ap-2 0x1.c71c62e3f11e6p-3
    0x1.7462b51cb66b1p-3 0x1.39fe51a7c18f9p-3 0x1.2b5900de53b32p-3
    0x1.0000000000000p-1 0x1.5555555555557p-3 0x1.5555555555556p-5 0x1.11111111100dcp-7
    0x1.6c16c16c162d4p-10 0x1.a01a01abe7fe1p-13 0x1.a01a01a6d889cp-16 0x1.71de0231960ebp-19
    0x1.27e4db646b17ep-22 0x1.af4de97ca4194p-26 0x1.1f730349868cep-29
    0x1.921fb54442d18p+0 -0x1.4abbce625be41p-1 0x1.466bc677587f8p-4 -0x1.32d2cce2e5b19p-8
    0x1.50782fda12d96p-13 -0x1.e30071afc3e59p-19 0x1.e3f38399551bfp-25
    -0x1.3bd3cc9be45dep+0 0x1.03c1f081b5ac0p-2 -0x1.55d3c7e3cb241p-6 0x1.e1f5068688d5bp-11
    -0x1.a6d1eef479be1p-16 0x1.f9ce245cada0bp-22 -0x1.b2f3eb054afcdp-28
""".split()]
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_TWO = np.uint64(2)
_SHIFT_52 = np.uint64(52)
_SHIFT_62 = np.uint64(62)
_BITS_1023 = np.uint64(1023)
_BITS_54 = np.uint64(54)
_BITS_800 = np.uint64(0x800)
_ONE_BITS = np.uint64(0x3ff0000000000000)
_TWO_POW_M53_BITS = np.uint64(0x3ca0000000000000)
_TWO_POW_52 = 4503599627370496.0
_TWO_POW_52_BITS = np.uint64(0x4330000000000000)
_ROUNDER_BITS = np.uint64(0x4338000000000000)


@intrinsic
def _bits(typingctx, x):
    """The bits of a float64, as uint64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.uint64(types.float64), codegen


@intrinsic
def _double(typingctx, u):
    """The float64 with the bits of a uint64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.uint64), codegen


@fast_jit
def _pick(c, a, b):
    """a if c else b, by masking bits (no branch)."""
    mask = np.uint64(0) - np.uint64(c)
    return _double((_bits(a) & mask) | (_bits(b) & ~mask))


@fast_jit
def _uniform_of(bits):
    """(bits >> 11) 2**-53 (exact: a 53-bit integer, then a power of two)."""
    return np.float64(bits >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@fast_jit
def _floor_of(v):
    """floor(v) for 0 <= v < 2**51, as an int64, by adding 2**52 (as in C)."""
    n = (v + _TWO_POW_52) - _TWO_POW_52
    fl = n - _pick(n > v, 1.0, 0.0)
    return np.int64(_bits(fl + _TWO_POW_52) - _TWO_POW_52_BITS)


@fast_jit
def _log(x):
    """Natural logarithm of any float64 (csrc/synthetic.h)."""
    sub = np.uint64(x < 2.2250738585072014e-308)   # subnormal or <= 0: scaled by 2**54
    r = _log_normal(x * _double((_BITS_1023 + _BITS_54 * sub) << _SHIFT_52), _BITS_54 * sub)
    return _pick(x < np.inf, _pick(x > 0.0, r, _pick(x == 0.0, -np.inf, np.nan)), x)


@fast_jit
def _log_normal(x, lower):
    """log(x) - lower log(2) for a positive normal finite x (lower, uint64,
    is 0 or 54)."""
    ix = _bits(x)
    top = (ix - _SQRT_HALF_BITS) >> _SHIFT_52   # k, a signed 12-bit field
    z = _double(ix - (top << _SHIFT_52))
    dk = _double(_ROUNDER_BITS + ((top ^ _BITS_800) - _BITS_800) - lower) - _ROUNDER
    f = z - 1.0
    s = f / (2.0 + f)
    w = s * s
    R = w * (_LH0 + w * (_LH1 + w * (_LH2 + w * (_LH3 + w * (_LH4 + w * (_LH5
                                                                          + w * _LH6))))))
    hfsq = 0.5 * f * f
    return dk * _LN2_HI - ((hfsq - (s * (hfsq + R) + dk * _LN2_LO)) - f)


@fast_jit
def _exp(x):
    """e**x for |x| <= 708 (csrc/synthetic.h)."""
    shifted = x * _INV_LN2 + _ROUNDER   # _ROUNDER + k
    kd = shifted - _ROUNDER
    r = (x - kd * _LN2_HI) - kd * _LN2_LO
    p = _EP0 + r * (_EP1 + r * (_EP2 + r * (_EP3 + r * (_EP4 + r * (_EP5 + r * (
        _EP6 + r * (_EP7 + r * (_EP8 + r * (_EP9 + r * _EP10)))))))))
    e = 1.0 + (r + r * r * p)
    return e * _double((_bits(shifted) - _ROUNDER_BITS + _BITS_1023) << _SHIFT_52)


@fast_jit
def _sincos_2pi(u):
    """(sin(2 pi u), cos(2 pi u)) for u in [0, 1] (csrc/synthetic.h)."""
    t = 4.0 * u
    shifted = t + _ROUNDER   # _ROUNDER + n
    n = shifted - _ROUNDER
    f = t - n
    y = f * f
    sp = f * (_SS0 + y * (_SS1 + y * (_SS2 + y * (_SS3 + y * (_SS4 + y * (_SS5
                                                                          + y * _SS6))))))
    cp = 1.0 + y * (_CC0 + y * (_CC1 + y * (_CC2 + y * (_CC3 + y * (_CC4 + y * (
        _CC5 + y * _CC6))))))
    q = _bits(shifted)   # n, mod 4
    odd = q & _ONE
    a = _pick(odd, cp, sp)
    b = _pick(odd, sp, cp)
    return (_double(_bits(a) ^ ((q & _TWO) << _SHIFT_62)),
            _double(_bits(b) ^ (((q + _ONE) & _TWO) << _SHIFT_62)))


@jit
def _request_key(seed, request, stream):
    return rng.key(seed, np.uint64(3) * np.uint64(request) + np.uint64(stream))


@jit
def search_lengths(seed, first, m, k, empty, short, lengths, start, stop):
    half = max(k // 2, 1)
    for r in range(start, stop):
        state = _request_key(seed, first + r, SHAPE_STREAM)
        for i in range(m):
            state, u = rng.uniform(state)
            if u < empty:
                lengths[r * m + i] = 0
            elif u < empty + short:
                state, extra = rng.below(state, half)
                lengths[r * m + i] = 1 + extra
            else:
                lengths[r * m + i] = k


@fast_jit
def _uniforms(n, state, keep, on, ur, u1, u2):
    """The four uniforms of instances 0..n-1 (on: the first below keep)."""
    prefer_512_bit_vectors()
    for j in range(n):
        st = state[j]
        on[j] = np.int64(_uniform_of(rng.mix64(st + _G1)) < keep[j])
        ur[j] = _uniform_of(rng.mix64(st + _G2))
        u1[j] = _uniform_of(rng.mix64(st + _G3))
        u2[j] = _uniform_of(rng.mix64(st + _G4))


@fast_jit
def _sincos_block(n, u2, sin_u2, cos_u2):
    prefer_512_bit_vectors()
    for j in range(n):
        sin_u2[j], cos_u2[j] = _sincos_2pi(u2[j])


@fast_jit
def _radius_block(n, u1, radius):
    prefer_512_bit_vectors()
    for j in range(n):
        radius[j] = math.sqrt(-2.0 * _log_normal(1.0 - u1[j], _ZERO))   # 1 - u1 >= 2**-53


@fast_jit
def _ads(n, per_topic, on, ur, on_base, off_base, ad):
    prefer_512_bit_vectors()
    f_per_topic = np.float64(per_topic)
    for j in range(n):
        rank = min(_floor_of(f_per_topic * ur[j] * math.sqrt(ur[j])), per_topic - 1)
        ad[j] = (on_base[j] if on[j] != 0 else off_base[j]) + rank


@fast_jit
def _gather(n, ads, src, dst):
    """dst[j] = src[ads[j]] (a loop of its own: LLVM vectorises no gather)."""
    prefer_512_bit_vectors()
    for j in range(n):
        dst[j] = src[ads[j]]


@fast_jit
def _scores(n, noise, on, radius, cos_u2, ca, ba, score):
    prefer_512_bit_vectors()
    for j in range(n):
        pctr = ca[j] * _exp(noise * (radius[j] * cos_u2[j])) * _pick(on[j] != 0, 1.0, 0.4)
        pctr = _pick(pctr > 1.0, 1.0, pctr)
        score[j] = ba[j] * pctr


@fast_jit
def _preranks(n, radius, sin_u2, score, prerank):
    """The preranks; returns how many of the scores and preranks are not
    finite (abs(x) <= max float is false for +-inf and NaN)."""
    prefer_512_bit_vectors()
    nonfinite = 0
    for j in range(n):
        prerank[j] = _log(score[j]) + 0.5 * (radius[j] * sin_u2[j])
        nonfinite += (not abs(score[j]) <= _MAX_FLOAT) | (not abs(prerank[j]) <= _MAX_FLOAT)
    return nonfinite


@fast_jit
def _clicked_values(n, clicks, ad, ca, ba, value):
    prefer_512_bit_vectors()
    for j in range(n):
        uc = _uniform_of(rng.mix64((clicks[j] ^ rng.mix64(np.uint64(ad[j]))) + _G1))
        value[j] = _pick(uc < ca[j], ba[j], 0.0)


@fast_jit
def _fill_block(n, x0, per_topic, bid, ctr, noise, expected_value, B, ad, score, value,
                prerank):
    """Instances 0..n-1 of the block into ad, score, value, prerank [x0..x0+n),
    one step of the recipe per loop, as in C (csrc/synthetic.c says why); the
    outputs through views at x0 (indices known >= 0: contiguous stores).
    Returns how many are not finite (_preranks)."""
    state, clicks, keep, on_base, off_base, on, ur, u1, u2, radius, sin_u2, cos_u2, ca, ba = B
    ad, score, value, prerank = ad[x0:x0 + n], score[x0:x0 + n], value[x0:x0 + n], \
        prerank[x0:x0 + n]
    _uniforms(n, state, keep, on, ur, u1, u2)
    _sincos_block(n, u2, sin_u2, cos_u2)
    _radius_block(n, u1, radius)
    _ads(n, per_topic, on, ur, on_base, off_base, ad)
    _gather(n, ad, ctr, ca)
    _gather(n, ad, bid, ba)
    _scores(n, noise, on, radius, cos_u2, ca, ba, score)
    nonfinite = _preranks(n, radius, sin_u2, score, prerank)
    if expected_value:
        if value.ctypes.data != score.ctypes.data:   # value may be score itself
            value[:] = score
    else:
        _clicked_values(n, clicks, ad, ca, ba, value)
    return nonfinite


@fast_jit
def search_fill(seed, first, m, topics, per_topic, bid, ctr, noise, expected_value, offsets, ad,
                score, value, prerank, start, stop):
    expected_value = np.int64(expected_value != 0)
    f_topics = np.float64(topics)
    state = np.empty(_BLOCK, dtype=np.uint64)
    clicks = np.empty(_BLOCK, dtype=np.uint64)
    keep = np.empty(_BLOCK)
    on_base = np.empty(_BLOCK, dtype=np.int64)
    off_base = np.empty(_BLOCK, dtype=np.int64)
    on = np.empty(_BLOCK, dtype=np.int64)
    B = (state, clicks, keep, on_base, off_base, on, np.empty(_BLOCK), np.empty(_BLOCK),
         np.empty(_BLOCK), np.empty(_BLOCK), np.empty(_BLOCK), np.empty(_BLOCK),
         np.empty(_BLOCK), np.empty(_BLOCK))
    nb = 0
    nonfinite = 0
    x0 = offsets[start * m]   # output row of the block's instance 0
    for r in range(start, stop):
        st = _request_key(seed, first + r, DRAW_STREAM)
        ck = _request_key(seed, first + r, CLICK_STREAM)
        st, uh = rng.uniform(st)
        home = min(np.int64(f_topics * uh * uh), topics - 1)
        for i in range(m):
            st, drift = rng.below(st, topics)
            st, u = rng.uniform(st)
            kp = 0.5 + 0.45 * u
            left = offsets[r * m + i + 1] - offsets[r * m + i]
            while left > 0:
                take = min(left, _BLOCK - nb)
                on_at, off_at = home * per_topic, drift * per_topic
                for t in range(take):
                    # an unsigned index: no wraparound of negative indices
                    # to compute, so LLVM vectorises the stores (half the
                    # time of this pass)
                    x = np.uintp(nb + t)
                    state[x] = st + np.uint64(t) * _G4
                    clicks[x] = ck
                    keep[x] = kp
                    on_base[x] = on_at
                    off_base[x] = off_at
                st += np.uint64(take) * _G4
                nb += take
                left -= take
                if nb == _BLOCK:
                    nonfinite += _fill_block(nb, x0, per_topic, bid, ctr, noise,
                                             expected_value, B, ad, score, value, prerank)
                    x0 += nb
                    nb = 0
    if nb > 0:
        nonfinite += _fill_block(nb, x0, per_topic, bid, ctr, noise, expected_value, B, ad,
                                 score, value, prerank)
    return nonfinite


@jit
def replay_repeats(seed, first, m, tables, repeats, noise, out, start, stop):
    """fc_synthetic_replay_repeats: out (B*repeats*2**m,) float64 gets the
    repeated noisy replays of rows start..stop-1 of tables (B*2**m,)
    (csrc/synthetic.h), bit for bit."""
    n = np.int64(1) << np.int64(m)
    for b in range(start, stop):
        request = rng.key(seed, np.uint64(first + b))
        for r in range(repeats):
            base = (b * repeats + r) * n
            state = rng.key(request, np.uint64(r))
            out[base] = tables[b * n]   # the empty coalition is not replayed
            for s in range(1, n):
                state, u1 = rng.uniform(state)
                state, u2 = rng.uniform(state)
                cs = _sincos_2pi(u2)[1]
                rho = np.sqrt(-2.0 * _log(1.0 - u1))
                out[base + s] = tables[b * n + s] + noise * (rho * cs)
