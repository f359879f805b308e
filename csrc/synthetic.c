/* synthetic.c - the sponsored-search request generator; see synthetic.h.
 *
 * No C library function is called: the logarithms, the exponential and the
 * sine and cosine of the recipe are the polynomials of synthetic.h, written
 * here and in the Numba twin (fastcredit/_numba/synthetic.py) as the same
 * sequence of IEEE double operations (no FMA: -ffp-contract=off), so the bits
 * are the same on every machine, C library and backend.
 *
 * Speed (0.57M requests/s a core end to end on a shared 2-core Xeon with
 * AVX-512, of which a quarter is the kernel zeroing the fresh output pages;
 * 0.22M with the C library's functions): a scalar pass lays the instances
 * of up to BLOCK consecutive output rows out in small arrays (their RNG
 * state, keep, topic offsets, click key); straight loops over the block, one
 * step of the recipe each, then draw and compute every instance with no
 * branch, which GCC vectorises in every FC_CLONES target (8 lanes with
 * AVX-512): selects are bit masks (pick), and integer <-> double
 * conversions, which AVX2 lacks, are exact tricks with 2^52 (uniform_of,
 * floor_of, the rounder) except in the AVX-512 build of the steps
 * (fill_block_avx512). The two square roots per instance run in a loop of
 * their own (roots); with the two divisions of the logarithms they keep the
 * divider busy some 3.4 ns an instance, the floor of the recipe here.
 */
#include <float.h>
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "fastcredit.h"
#include "internal.h"

#define SHAPE_STREAM 0
#define DRAW_STREAM 1
#define CLICK_STREAM 2

/* Largest per_topic (synthetic.h): floor_of takes ranks below 2^51. */
#define MAX_PER_TOPIC 2251799813685248

/* Instances laid out and computed at once (Block: 11 * 8 * BLOCK bytes on
 * the stack). */
#define BLOCK 256

#define ONE_BITS 0x3ff0000000000000ULL           /* 1.0 */
#define TWO_POW_M53_BITS 0x3ca0000000000000ULL   /* 2^-53 */
#define TWO_POW_52 4503599627370496.0
#define TWO_POW_52_BITS 0x4330000000000000ULL
/* 1.5 * 2^52: t + ROUNDER is t rounded to an integer n (ties to even) plus
 * ROUNDER, exactly, for |t| < 2^51: its bits are ROUNDER_BITS + n. */
#define ROUNDER 6755399441055744.0
#define ROUNDER_BITS 0x4338000000000000ULL

/* ln 2 = LN2_HI + LN2_LO, LN2_HI with 32 significant bits (so k * LN2_HI
 * is exact for |k| < 2^21); INV_LN2 = 1 / ln 2 rounded. */
#define LN2_HI 0x1.62e42fee00000p-1
#define LN2_LO 0x1.a39ef35793c76p-33
#define INV_LN2 0x1.71547652b82fep+0
/* The bits of the double nearest sqrt(2) / 2: the logarithm's mantissas
 * are brought into [c, 2c) of that c. */
#define SQRT_HALF_BITS 0x3fe6a09e667f3bcdULL

/* Coefficients (synthetic.h): interpolation at Chebyshev nodes, computed in
 * 60-digit decimal arithmetic and rounded to double. */
#define LOG_H0 0x1.5555555555558p-1
#define LOG_H1 0x1.99999999952d7p-2
#define LOG_H2 0x1.2492492df281ap-2
#define LOG_H3 0x1.c71c62e3f11e6p-3
#define LOG_H4 0x1.7462b51cb66b1p-3
#define LOG_H5 0x1.39fe51a7c18f9p-3
#define LOG_H6 0x1.2b5900de53b32p-3

#define EXP_P0 0x1.0000000000000p-1
#define EXP_P1 0x1.5555555555557p-3
#define EXP_P2 0x1.5555555555556p-5
#define EXP_P3 0x1.11111111100dcp-7
#define EXP_P4 0x1.6c16c16c162d4p-10
#define EXP_P5 0x1.a01a01abe7fe1p-13
#define EXP_P6 0x1.a01a01a6d889cp-16
#define EXP_P7 0x1.71de0231960ebp-19
#define EXP_P8 0x1.27e4db646b17ep-22
#define EXP_P9 0x1.af4de97ca4194p-26
#define EXP_P10 0x1.1f730349868cep-29

#define SIN_S0 0x1.921fb54442d18p+0
#define SIN_S1 -0x1.4abbce625be41p-1
#define SIN_S2 0x1.466bc677587f8p-4
#define SIN_S3 -0x1.32d2cce2e5b19p-8
#define SIN_S4 0x1.50782fda12d96p-13
#define SIN_S5 -0x1.e30071afc3e59p-19
#define SIN_S6 0x1.e3f38399551bfp-25

#define COS_C0 -0x1.3bd3cc9be45dep+0
#define COS_C1 0x1.03c1f081b5ac0p-2
#define COS_C2 -0x1.55d3c7e3cb241p-6
#define COS_C3 0x1.e1f5068688d5bp-11
#define COS_C4 -0x1.a6d1eef479be1p-16
#define COS_C5 0x1.f9ce245cada0bp-22
#define COS_C6 -0x1.b2f3eb054afcdp-28

static FC_INLINE uint64_t bits_of(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static FC_INLINE double double_of(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* c ? a : b by masking bits: GCC turns a ?: on doubles into a branch, and
 * under -ftrapping-math then cannot if-convert the loop for the vectoriser
 * (it will not run the arithmetic of a branch unconditionally). */
static FC_INLINE double pick(int c, double a, double b)
{
    const uint64_t mask = (uint64_t)0 - (uint64_t)(c != 0);
    return double_of((bits_of(a) & mask) | (bits_of(b) & ~mask));
}

/* (bits >> 11) 2^-53 (fc_rng_uniform) without an integer conversion, which
 * AVX2 lacks: the top 52 bits as the mantissa of a double in [1, 2), minus 1,
 * plus bit 11 times 2^-53; every step is exact. */
static FC_INLINE double uniform_of(uint64_t bits)
{
    const uint64_t low = (uint64_t)0 - ((bits >> 11) & 1);
    return (double_of(ONE_BITS | (bits >> 12)) - 1.0) + double_of(low & TWO_POW_M53_BITS);
}

/* floor(v) for 0 <= v < 2^51, as an integer, by the rounder (no conversion
 * instruction, which AVX2 lacks): v + 2^52 rounds to an integer n, less one
 * where it rounded up; n + 2^52 then holds n in its low mantissa bits. */
static FC_INLINE int64_t floor_of(double v)
{
    const double n = (v + TWO_POW_52) - TWO_POW_52;
    const double fl = n - pick(n > v, 1.0, 0.0);
    return (int64_t)(bits_of(fl + TWO_POW_52) - TWO_POW_52_BITS);
}

/* uniform_of(bits) and floor_of(v), by the conversion instructions where
 * native (AVX-512 has them for vectors of int64) or else by the tricks; the
 * same values either way, as every step is exact (a 53-bit integer times a
 * power of two; v >= 0 truncated). */
static FC_INLINE double uniform_from(uint64_t bits, int native)
{
    return native ? (double)(bits >> 11) * 0x1p-53 : uniform_of(bits);
}

static FC_INLINE int64_t floor_from(double v, int native)
{
    return native ? (int64_t)v : floor_of(v);
}

/* log(x) - lower log(2) for a positive normal finite x (synthetic.h), lower
 * 0 or 54. */
static FC_INLINE double synth_log_normal(double x, uint64_t lower)
{
    const uint64_t ix = bits_of(x);
    /* the exponent k after moving the mantissa into [c, 2c): the top 12 bits
     * of ix - SQRT_HALF_BITS, a signed field (sign-extended by ^ 0x800 -
     * 0x800, since AVX2 has no 64-bit arithmetic shift) */
    const uint64_t top = (ix - SQRT_HALF_BITS) >> 52;
    const double z = double_of(ix - (top << 52));
    /* k - lower as a double: the integer in the mantissa of ROUNDER */
    const double dk = double_of(ROUNDER_BITS + ((top ^ 0x800) - 0x800) - lower) - ROUNDER;
    const double f = z - 1.0;
    const double s = f / (2.0 + f);
    const double w = s * s;
    const double R = w * (LOG_H0 + w * (LOG_H1 + w * (LOG_H2 + w * (LOG_H3 + w * (LOG_H4
                     + w * (LOG_H5 + w * LOG_H6))))));
    const double hfsq = 0.5 * f * f;
    return dk * LN2_HI - ((hfsq - (s * (hfsq + R) + dk * LN2_LO)) - f);
}

/* Natural logarithm of any double (synthetic.h). */
static FC_INLINE double synth_log(double x)
{
    /* subnormal (or <= 0): scaled by 2^54 (1.0 has the bits 1023 << 52) */
    const uint64_t sub = x < 0x1p-1022;
    const double r = synth_log_normal(x * double_of((1023 + 54 * sub) << 52), 54 * sub);
    return pick(x < INFINITY, pick(x > 0.0, r, pick(x == 0.0, -INFINITY, NAN)), x);
}

/* e^x for |x| <= 708 (synthetic.h). */
static FC_INLINE double synth_exp(double x)
{
    const double shifted = x * INV_LN2 + ROUNDER;   /* ROUNDER + k */
    const double kd = shifted - ROUNDER;
    const double r = (x - kd * LN2_HI) - kd * LN2_LO;
    const double p = EXP_P0 + r * (EXP_P1 + r * (EXP_P2 + r * (EXP_P3 + r * (EXP_P4
                     + r * (EXP_P5 + r * (EXP_P6 + r * (EXP_P7 + r * (EXP_P8
                     + r * (EXP_P9 + r * EXP_P10)))))))));
    const double e = 1.0 + (r + r * r * p);
    return e * double_of((bits_of(shifted) - ROUNDER_BITS + 1023) << 52);   /* 2^k */
}

/* sin(2 pi u) and cos(2 pi u) for u in [0, 1] (synthetic.h). */
static FC_INLINE void synth_sincos_2pi(double u, double *sin_out, double *cos_out)
{
    const double t = 4.0 * u;
    const double shifted = t + ROUNDER;   /* ROUNDER + n */
    const double n = shifted - ROUNDER;
    const double f = t - n;
    const double y = f * f;
    const double sp = f * (SIN_S0 + y * (SIN_S1 + y * (SIN_S2 + y * (SIN_S3 + y * (SIN_S4
                      + y * (SIN_S5 + y * SIN_S6))))));
    const double cp = 1.0 + y * (COS_C0 + y * (COS_C1 + y * (COS_C2 + y * (COS_C3
                      + y * (COS_C4 + y * (COS_C5 + y * COS_C6))))));
    const uint64_t q = bits_of(shifted);   /* n, the quarter turns, mod 4 */
    /* odd quadrants swap the two; quadrants 2, 3 negate the sine and 1, 2
     * the cosine (flipping the sign bit) */
    const double a = pick(q & 1, cp, sp), b = pick(q & 1, sp, cp);
    *sin_out = double_of(bits_of(a) ^ ((q & 2) << 62));
    *cos_out = double_of(bits_of(b) ^ (((q + 1) & 2) << 62));
}

static uint64_t request_key(uint64_t seed, int64_t request, int stream)
{
    return fc_rng_key(seed, 3 * (uint64_t)request + (uint64_t)stream);
}

static int range_ok(int64_t first, int m, int64_t start, int64_t stop)
{
    return m >= 1 && m <= FC_AUCTION_MAX_ACTIONS && first >= 0
        && first <= FC_SYNTHETIC_MAX_INDEX && start >= 0 && start <= stop
        && stop <= FC_SYNTHETIC_MAX_INDEX;
}

int fc_synthetic_search_lengths(uint64_t seed, int64_t first, int m, int64_t k,
                                double empty, double short_frac, int64_t *lengths,
                                int64_t start, int64_t stop)
{
    int64_t r;
    int i;
    uint64_t half;
    if (!range_ok(first, m, start, stop) || !lengths || k < 1 || k > FC_RNG_MAX_RANGE
        || !(empty >= 0.0) || !(short_frac >= 0.0) || !(empty + short_frac <= 1.0))
        return FC_EINVAL;
    half = k / 2 > 1 ? (uint64_t)(k / 2) : 1;
    for (r = start; r < stop; r++) {
        uint64_t state = request_key(seed, first + r, SHAPE_STREAM);
        int64_t *len = lengths + r * m;
        for (i = 0; i < m; i++) {
            const double u = fc_rng_uniform(&state);
            if (u < empty)
                len[i] = 0;
            else if (u < empty + short_frac)
                len[i] = 1 + (int64_t)fc_rng_below(&state, half);
            else
                len[i] = k;
        }
    }
    return FC_OK;
}

/* The instances laid out by fc_synthetic_search_fill: instance j draws from
 * state[j] on, keeps its topic when its first uniform is below keep[j], and
 * then takes its ad from on_base[j] (home * per_topic) or off_base[j]
 * (drift * per_topic); clicks[j] is its request's click key. The rest holds
 * what one step of fill_block passes to the next. */
typedef struct {
    uint64_t state[BLOCK], clicks[BLOCK];
    double keep[BLOCK];
    int64_t on_base[BLOCK], off_base[BLOCK];
    int64_t on[BLOCK];
    double ur[BLOCK], root_ur[BLOCK], u1[BLOCK], radius[BLOCK], u2[BLOCK], sin_u2[BLOCK],
        cos_u2[BLOCK], ca[BLOCK], ba[BLOCK];
} Block;

/* y[j] = sqrt(x[j]), j < n (y may be x): a loop of its own, since GCC keeps
 * a library call for sqrt's domain error (errno) that stops the vectoriser;
 * in pairs by SSE2's sqrtpd where there is SSE2 (the divider, not the
 * width, bounds it). */
static FC_INLINE void roots(const double *x, double *y, int64_t n)
{
    int64_t j = 0;
#if defined(__SSE2__)
    for (; j + 2 <= n; j += 2)
        _mm_storeu_pd(y + j, _mm_sqrt_pd(_mm_loadu_pd(x + j)));
#endif
    for (; j < n; j++)
        y[j] = sqrt(x[j]);
}

/* Instances 0..n-1 of the block into ad, score, value, prerank [0..n), one
 * step of the recipe per loop over the block; returns how many have a
 * score or prerank that is not finite. Each loop's iteration is a
 * short chain of dependent operations (a hash, a polynomial by Horner's rule
 * after a division...), so the out-of-order core runs many iterations at
 * once; one loop doing it all is a chain of some 150 operations that it
 * overlaps with barely one other iteration (a third more time per instance,
 * measured). */
static FC_INLINE int64_t fill_steps(Block *restrict B, int64_t n, int64_t per_topic,
                                 const double *restrict bid, const double *restrict ctr,
                                 double noise, int expected_value, int native,
                                 int64_t *restrict ad, double *restrict score,
                                 double *restrict value, double *restrict prerank)
{
    const double f_per_topic = (double)per_topic;
    int64_t j, nonfinite = 0;
    for (j = 0; j < n; j++) {   /* the four uniforms */
        const uint64_t st = B->state[j];
        B->on[j] = uniform_from(fc_mix64(st + FC_RNG_GOLDEN), native) < B->keep[j];
        B->ur[j] = uniform_from(fc_mix64(st + 2 * FC_RNG_GOLDEN), native);
        B->u1[j] = uniform_from(fc_mix64(st + 3 * FC_RNG_GOLDEN), native);
        B->u2[j] = uniform_from(fc_mix64(st + 4 * FC_RNG_GOLDEN), native);
    }
    for (j = 0; j < n; j++)
        synth_sincos_2pi(B->u2[j], &B->sin_u2[j], &B->cos_u2[j]);
    for (j = 0; j < n; j++)   /* 1 - u1 >= 2^-53; the radius squared, for now */
        B->radius[j] = -2.0 * synth_log_normal(1.0 - B->u1[j], 0);
    roots(B->ur, B->root_ur, n);
    roots(B->radius, B->radius, n);
    for (j = 0; j < n; j++) {   /* the ads, and their bid and CTR */
        int64_t rank = floor_from(f_per_topic * B->ur[j] * B->root_ur[j], native);
        int64_t a;
        rank = rank < per_topic - 1 ? rank : per_topic - 1;
        a = (B->on[j] ? B->on_base[j] : B->off_base[j]) + rank;
        ad[j] = a;
        B->ca[j] = ctr[a];
        B->ba[j] = bid[a];
    }
    for (j = 0; j < n; j++) {
        double pctr = B->ca[j] * synth_exp(noise * (B->radius[j] * B->cos_u2[j]))
                      * pick(B->on[j] != 0, 1.0, 0.4);
        pctr = pick(pctr > 1.0, 1.0, pctr);
        score[j] = B->ba[j] * pctr;
    }
    for (j = 0; j < n; j++) {   /* |x| <= DBL_MAX: false for +-inf and NaN */
        prerank[j] = synth_log(score[j]) + 0.5 * (B->radius[j] * B->sin_u2[j]);
        nonfinite += !(fabs(score[j]) <= DBL_MAX) | !(fabs(prerank[j]) <= DBL_MAX);
    }
    if (expected_value) {
        if (value != score)
            for (j = 0; j < n; j++)
                value[j] = score[j];
    } else
        for (j = 0; j < n; j++)
            value[j] = pick(uniform_from(fc_mix64((B->clicks[j] ^ fc_mix64((uint64_t)ad[j]))
                                                  + FC_RNG_GOLDEN), native) < B->ca[j],
                            B->ba[j], 0.0);
    return nonfinite;
}

/* fill_steps with expected_value a constant in each call, so that the click
 * draws are not computed where they are not used. */
static FC_CLONES int64_t fill_block(Block *restrict B, int64_t n, int64_t per_topic,
                                 const double *restrict bid, const double *restrict ctr,
                                 double noise, int expected_value,
                                 int64_t *restrict ad, double *restrict score,
                                 double *restrict value, double *restrict prerank)
{
    if (expected_value)
        return fill_steps(B, n, per_topic, bid, ctr, noise, 1, 0, ad, score, value, prerank);
    return fill_steps(B, n, per_topic, bid, ctr, noise, 0, 0, ad, score, value, prerank);
}

/* AVX-512 machines run fill_steps with the native conversions (uniform_from:
 * 5% less time), in a function compiled for that target alone and picked at
 * run time: a target_clones function cannot tell its clones apart, and the
 * conversions would not vectorise in the AVX2 and default clones. GCC >= 12:
 * older ones know neither the x86-64-v4 target nor
 * __builtin_cpu_supports("x86-64-v4"). */
#if defined(FC_VECTOR_EXT) && __GNUC__ >= 12 && defined(__x86_64__) && defined(__linux__)
#define FC_SYNTHETIC_AVX512 1
__attribute__((target("arch=x86-64-v4"))) static int64_t
fill_block_avx512(Block *restrict B, int64_t n, int64_t per_topic, const double *restrict bid,
                  const double *restrict ctr, double noise, int expected_value,
                  int64_t *restrict ad, double *restrict score, double *restrict value,
                  double *restrict prerank)
{
    if (expected_value)
        return fill_steps(B, n, per_topic, bid, ctr, noise, 1, 1, ad, score, value, prerank);
    return fill_steps(B, n, per_topic, bid, ctr, noise, 0, 1, ad, score, value, prerank);
}
#endif

/* Instances 0..n-1 of the block into ad, score, value, prerank [0..n);
 * returns how many are not finite (fill_steps). */
static int64_t flush_block(Block *B, int64_t n, int64_t per_topic, const double *bid,
                        const double *ctr, double noise, int expected_value, int avx512,
                        int64_t *ad, double *score, double *value, double *prerank)
{
#ifdef FC_SYNTHETIC_AVX512
    if (avx512)
        return fill_block_avx512(B, n, per_topic, bid, ctr, noise, expected_value, ad, score,
                                 value, prerank);
#endif
    (void)avx512;
    return fill_block(B, n, per_topic, bid, ctr, noise, expected_value, ad, score, value,
                      prerank);
}

int fc_synthetic_search_fill(uint64_t seed, int64_t first, int m, int64_t topics,
                             int64_t per_topic, const double *bid, const double *ctr,
                             double noise, int expected_value, const int64_t *offsets,
                             int64_t n_values, int64_t *ad, double *score, double *value,
                             double *prerank, int64_t start, int64_t stop,
                             int64_t *nonfinite)
{
    int64_t r, j, x0, nb = 0, bad = 0;
    const double f_topics = (double)topics;
#ifdef FC_SYNTHETIC_AVX512
    const int avx512 = (fc_internal_paths() & FC_PATH_AVX512) != 0;
#else
    const int avx512 = 0;
#endif
    Block B;
    if (!range_ok(first, m, start, stop) || topics < 1 || topics > FC_RNG_MAX_RANGE
        || per_topic < 1 || per_topic > MAX_PER_TOPIC || !(noise >= 0.0)
        || !(noise <= FC_SYNTHETIC_MAX_NOISE) || !bid || !ctr || !offsets || !ad
        || !score || !value || !prerank || offsets[start * m] < 0 || offsets[stop * m] > n_values)
        return FC_EINVAL;
    for (j = start * m; j < stop * m; j++)
        if (offsets[j + 1] < offsets[j]) return FC_EINVAL;
    x0 = offsets[start * m];   /* output row of the block's instance 0 */
    for (r = start; r < stop; r++) {
        uint64_t state = request_key(seed, first + r, DRAW_STREAM);
        const uint64_t clicks = request_key(seed, first + r, CLICK_STREAM);
        const double uh = fc_rng_uniform(&state);
        int64_t home = (int64_t)(f_topics * uh * uh);
        int i;
        if (home > topics - 1) home = topics - 1;
        for (i = 0; i < m; i++) {
            const int64_t drift = (int64_t)fc_rng_below(&state, (uint64_t)topics);
            const double keep = 0.5 + 0.45 * fc_rng_uniform(&state);
            int64_t left = offsets[r * m + i + 1] - offsets[r * m + i];
            while (left > 0) {
                const int64_t take = left < BLOCK - nb ? left : BLOCK - nb;
                int64_t t;
                for (t = 0; t < take; t++) {
                    B.state[nb + t] = state + 4 * (uint64_t)t * FC_RNG_GOLDEN;
                    B.clicks[nb + t] = clicks;
                    B.keep[nb + t] = keep;
                    B.on_base[nb + t] = home * per_topic;
                    B.off_base[nb + t] = drift * per_topic;
                }
                state += 4 * (uint64_t)take * FC_RNG_GOLDEN;
                nb += take;
                left -= take;
                if (nb == BLOCK) {
                    bad += flush_block(&B, nb, per_topic, bid, ctr, noise, expected_value != 0,
                                       avx512, ad + x0, score + x0, value + x0, prerank + x0);
                    x0 += nb;
                    nb = 0;
                }
            }
        }
    }
    if (nb > 0)
        bad += flush_block(&B, nb, per_topic, bid, ctr, noise, expected_value != 0, avx512,
                           ad + x0, score + x0, value + x0, prerank + x0);
    if (nonfinite) *nonfinite = bad;
    return FC_OK;
}

/* Coalitions a replay draws at a time (two arrays of this many doubles on
 * the stack). */
#define REPLAY_BLOCK 256

/* One replay of a table: y(S) = v(S) + noise * z(S), z by Box-Muller from
 * the counter-based stream at state. The draws of S depend on S only
 * through the counter, so the loop over a block vectorises (8 lanes with
 * AVX-512, whose 64-bit multiplies the stream's mixing needs: the clones),
 * the square roots in a loop of their own (see roots). */
static FC_CLONES void replay_table(const double *v, int64_t n, uint64_t state, double noise,
                                   double *y)
{
    double r2[REPLAY_BLOCK], cs[REPLAY_BLOCK];
    y[0] = v[0];   /* the empty coalition is not replayed */
    for (int64_t s0 = 1; s0 < n; s0 += REPLAY_BLOCK) {
        const int64_t len = n - s0 < REPLAY_BLOCK ? n - s0 : REPLAY_BLOCK;
        for (int64_t j = 0; j < len; j++) {
            const double u1 = fc_rng_uniform(&state);
            const double u2 = fc_rng_uniform(&state);
            double sn;
            synth_sincos_2pi(u2, &sn, &cs[j]);
            r2[j] = -2.0 * synth_log(1.0 - u1);
        }
        roots(r2, r2, len);
        for (int64_t j = 0; j < len; j++)
            y[s0 + j] = v[s0 + j] + noise * (r2[j] * cs[j]);
    }
}

int fc_synthetic_replay_repeats(uint64_t seed, int64_t first, int m, const double *tables,
                                int64_t repeats, double noise, double *out, int64_t start,
                                int64_t stop)
{
    if (!range_ok(first, 1, start, stop) || m < 1 || m > 30 || repeats < 1 || !tables
        || !out || !(noise >= 0.0 && noise <= 1e300))
        return FC_EINVAL;
    const int64_t n = (int64_t)1 << m;
    for (int64_t b = start; b < stop; b++) {
        const uint64_t request = fc_rng_key(seed, (uint64_t)(first + b));
        for (int64_t r = 0; r < repeats; r++)
            replay_table(tables + b * n, n, fc_rng_key(request, (uint64_t)r), noise,
                         out + (b * repeats + r) * n);
    }
    return FC_OK;
}
