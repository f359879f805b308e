/* tables.c - exact credit over coalition tables; see tables.h. */
#include <string.h>
#include "fastcredit.h"
#include "internal.h"

#define BLOCK_BITS FC_TABLE_BLOCK_BITS

static int popcount64(uint64_t x)
{
#if defined(__GNUC__)
    return __builtin_popcountll(x);
#else
    int c = 0;
    while (x) { x &= x - 1; c++; }
    return c;
#endif
}

static int bad_m(int m) { return m < 1 || m > FC_MAX_TABLE_PLAYERS; }

int fc_shapley_weights(int m, double *weights)
{
    int k;
    double binom = 1.0; /* C(m-1, k), exact in double for m <= 30 */
    if (bad_m(m) || !weights) return FC_EINVAL;
    for (k = 0; k < m; k++) {
        weights[k] = 1.0 / ((double)m * binom);
        binom = binom * (double)(m - 1 - k) / (double)(k + 1);
    }
    return FC_OK;
}

int fc_banzhaf_weights(int m, double *weights)
{
    int k;
    if (bad_m(m) || !weights) return FC_EINVAL;
    for (k = 0; k < m; k++) weights[k] = 1.0 / (double)((int64_t)1 << (m - 1));
    return FC_OK;
}

/* Per-entry coefficients of the one-pass semivalue, laid out block by
 * block: for a block whose high bits hold h players, entry j (a coalition of
 * size c = h + |j|) gets cs[(h << bb) + j] = w[c-1] + w[c] and
 * ws[(h << bb) + j] = w[c] (w[-1] = w[m] = 0), bb = min(m, BLOCK_BITS). */
#define COEF_TABLE ((FC_MAX_TABLE_PLAYERS - BLOCK_BITS + 1) << BLOCK_BITS)

static void coefficient_tables(int m, const double *w, double *cs, double *ws)
{
    const int bb = m < BLOCK_BITS ? m : BLOCK_BITS;
    int h;
    int64_t j;
    for (h = 0; h <= m - bb; h++)
        for (j = 0; j < ((int64_t)1 << bb); j++) {
            const int c = h + popcount64((uint64_t)j);
            cs[(h << bb) + j] = (c > 0 ? w[c - 1] : 0.0) + (c < m ? w[c] : 0.0);
            ws[(h << bb) + j] = c < m ? w[c] : 0.0;
        }
}

/* Whether [start, stop) is a range fc_semivalue_partial takes on a table of
 * 2^m entries (m checked): block-aligned ends within the table. */
static int table_range_ok(int m, int64_t start, int64_t stop)
{
    const int64_t bs = (int64_t)1 << BLOCK_BITS, len = (int64_t)1 << m;
    return start >= 0 && stop <= len && start <= stop && start % bs == 0 &&
           (stop % bs == 0 || stop == len);
}

/* Halving fold of x[0 .. 2^bits): for k = bits-1 .. 0, t[k] += sum of the
 * upper half (the entries with bit k set, summed over the bits above k),
 * then the upper half is added onto the lower half. Leaves the total in x[0].
 * Sums run in 8 interleaved partials (a fixed order, so they vectorise
 * without -ffast-math and every backend rounds the same way). */
static FC_INLINE void fold(double *x, int bits, double *t)
{
    int k, l;
    int64_t j;
    for (k = bits - 1; k >= 0; k--) {
        const int64_t half = (int64_t)1 << k;
        if (half >= 8) {
            double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (j = 0; j < half; j += 8)
                for (l = 0; l < 8; l++) {
                    s[l] += x[j + half + l];
                    x[j + l] += x[j + half + l];
                }
            t[k] += ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
        } else {
            double s = 0.0;
            for (j = 0; j < half; j++) {
                s += x[j + half];
                x[j] += x[j + half];
            }
            t[k] += s;
        }
    }
}

/* Small games (3 <= m <= 8) run on 8-wide vectors (FC_VECTOR_EXT, see
 * internal.h). Each game's table is 2^(m-3) vectors; the fold over the bits
 * >= 3 works on whole vectors, the bits 0..2 are lane masks of the last
 * vector, and one transposing reduction turns the eight per-player partial
 * vectors into one vector of sums. Other compilers use the portable
 * small_games loop (define FC_NO_VECTOR_EXT to force it). */
#ifdef FC_VECTOR_EXT
/* The halving fold of fold() on a table of 2^bits entries held as vectors:
 * p[q] += the entries with bit q set, summed over the bits above q (whole
 * vectors for q >= 3, lane masks of the folded first vector for q < 3).
 * fresh (a constant): p[q] is set to its first term and the rest added, an
 * addition fewer per partial than adding all to 0 (and the sign of a zero
 * sum is its terms', where 0 + -0 is +0). */
static FC_INLINE void fold_vectors(v8d *x, int bits, v8d *p, const int fresh)
{
    const v8i bit0 = {0, -1, 0, -1, 0, -1, 0, -1}, bit1 = {0, 0, -1, -1, 0, 0, -1, -1},
              bit2 = {0, 0, 0, 0, -1, -1, -1, -1};
    int q, k;
    /* Unrolled whole (bits is a constant at every call), so that the block
     * stays in registers: as a stack array it cost two stores and three
     * loads a vector, twice the block's arithmetic (issue 33). */
    _Pragma("GCC unroll 8") for (q = bits - 1; q >= 3; q--) {
        const int half = 1 << (q - 3);
        _Pragma("GCC unroll 16") for (k = 0; k < half; k++) {
            p[q] = fresh && k == 0 ? x[half] : p[q] + x[k + half];
            x[k] += x[k + half];
        }
    }
    p[0] = fresh ? (v8d)((v8i)x[0] & bit0) : p[0] + (v8d)((v8i)x[0] & bit0);
    p[1] = fresh ? (v8d)((v8i)x[0] & bit1) : p[1] + (v8d)((v8i)x[0] & bit1);
    p[2] = fresh ? (v8d)((v8i)x[0] & bit2) : p[2] + (v8d)((v8i)x[0] & bit2);
}

/* Lane q of the result is the sum of the lanes of p[q]. */
static FC_INLINE v8d reduce8(const v8d *p)
{
    const v8i lo1 = {0, 8, 2, 10, 4, 12, 6, 14}, hi1 = {1, 9, 3, 11, 5, 13, 7, 15};
    const v8i lo2 = {0, 1, 8, 9, 4, 5, 12, 13}, hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
    const v8i lo3 = {0, 1, 2, 3, 8, 9, 10, 11}, hi3 = {4, 5, 6, 7, 12, 13, 14, 15};
    const v8d a0 = __builtin_shuffle(p[0], p[1], lo1) + __builtin_shuffle(p[0], p[1], hi1);
    const v8d a1 = __builtin_shuffle(p[2], p[3], lo1) + __builtin_shuffle(p[2], p[3], hi1);
    const v8d a2 = __builtin_shuffle(p[4], p[5], lo1) + __builtin_shuffle(p[4], p[5], hi1);
    const v8d a3 = __builtin_shuffle(p[6], p[7], lo1) + __builtin_shuffle(p[6], p[7], hi1);
    const v8d b0 = __builtin_shuffle(a0, a1, lo2) + __builtin_shuffle(a0, a1, hi2);
    const v8d b1 = __builtin_shuffle(a2, a3, lo2) + __builtin_shuffle(a2, a3, hi2);
    return __builtin_shuffle(b0, b1, lo3) + __builtin_shuffle(b0, b1, hi3);
}

/* reduce8 where p[5] and p[6] are 0 (m <= 5; neither is read), in 4 vector
 * operations fewer: lanes 0..4 and 7 have reduce8's bits (the same
 * additions, some with their operands swapped, which IEEE addition does not
 * see); lanes 5 and 6 repeat lanes 7 and 4. */
static FC_INLINE v8d reduce6(const v8d *p)
{
    const v8i lo1 = {0, 8, 2, 10, 4, 12, 6, 14}, hi1 = {1, 9, 3, 11, 5, 13, 7, 15};
    const v8i lo2 = {0, 1, 8, 9, 4, 5, 12, 13}, hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
    const v8i lo3 = {0, 1, 2, 3, 8, 9, 10, 11}, hi3 = {4, 5, 6, 7, 12, 13, 14, 15};
    const v8i swap_pairs = {2, 3, 0, 1, 6, 7, 4, 5};
    const v8d a0 = __builtin_shuffle(p[0], p[1], lo1) + __builtin_shuffle(p[0], p[1], hi1);
    const v8d a1 = __builtin_shuffle(p[2], p[3], lo1) + __builtin_shuffle(p[2], p[3], hi1);
    /* reduce8's a2 and a3 with p[5]'s and p[6]'s zero lanes left out */
    const v8d a23 = __builtin_shuffle(p[4], p[7], lo1) + __builtin_shuffle(p[4], p[7], hi1);
    const v8d b0 = __builtin_shuffle(a0, a1, lo2) + __builtin_shuffle(a0, a1, hi2);
    const v8d b1 = a23 + __builtin_shuffle(a23, swap_pairs);
    return __builtin_shuffle(b0, b1, lo3) + __builtin_shuffle(b0, b1, hi3);
}

/* The sum of the lanes, pairwise. */
static FC_INLINE double sum_lanes(v8d x)
{
    return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
}

#endif

#ifdef FC_AVX512_PATHS
#include <immintrin.h>
/* Batches of small games with at least this many results write them with
 * non-temporal stores (semivalue_streamed): 1 MiB, about what stays in a
 * core's L2, beyond which the results would go to memory anyway. */
#define STREAM_MIN_RESULTS ((int64_t)1 << 17)

/* The first of 8 games of m results each whose results start on a cache
 * line of out, or 8 if none does (out's offset in the line is not a
 * multiple of gcd(m, 8) doubles). */
static int64_t streamed_start(const double *out, int m)
{
    int64_t g;
    for (g = 0; g < 8; g++)
        if (((uintptr_t)(out + g * m) & 63) == 0) return g;
    return 8;
}
#endif

/* Zeta (sign = +1) or Moebius (sign = -1) transform of one table in place:
 * for every bit i and every S containing i, a[S] += sign * a[S - i].
 * Low bits run block by block while the block is in cache; high bits run on
 * column strips narrow enough that a strip's rows stay in L2. */
static FC_CLONES void subset_transform(double *a, int m, double sign)
{
    const int bb = m < BLOCK_BITS ? m : BLOCK_BITS;
    const int64_t bs = (int64_t)1 << bb, n = (int64_t)1 << m;
    const int64_t rows = n / bs;
    int64_t base, strip, j, r, width;
    int i;
    for (base = 0; base < n; base += bs) {
        double *blk = a + base;
        for (i = 0; i < bb; i++) {
            const int64_t step = (int64_t)1 << i;
            int64_t b0;
            for (b0 = 0; b0 < bs; b0 += 2 * step)
                for (j = 0; j < step; j++) blk[b0 + step + j] += sign * blk[b0 + j];
        }
    }
    if (rows == 1) return;
    width = ((int64_t)1 << 17) / rows; /* 1 MiB of doubles per strip */
    if (width < 8) width = 8;
    if (width > bs) width = bs;
    for (strip = 0; strip < bs; strip += width) {
        for (i = 0; i < m - bb; i++) {
            const int64_t step = (int64_t)1 << i;
            int64_t r0;
            for (r0 = 0; r0 < rows; r0 += 2 * step)
                for (r = r0; r < r0 + step; r++) {
                    const double *src = a + r * bs + strip;
                    double *dst = a + (r + step) * bs + strip;
                    for (j = 0; j < width; j++) dst[j] += sign * src[j];
                }
        }
    }
}

static void transform_games(double *out, int64_t n_games, int m, double sign)
{
    int64_t g;
    const int64_t len = (int64_t)1 << m;
    for (g = 0; g < n_games; g++) subset_transform(out + g * len, m, sign);
}

/* fc_owen runs games in blocks that share each player's walk over its
 * contexts: up to OWEN_BLOCK games, at most 2^15 table entries (256 KiB of
 * doubles, in L2). A game's result does not depend on its block. */
#define OWEN_BLOCK 32

static int64_t owen_block(int m)
{
    const int64_t n = ((int64_t)1 << 15) >> m;
    return n < 1 ? 1 : n > OWEN_BLOCK ? OWEN_BLOCK : n;
}

/* The checks of fc_owen (see tables.h): every read of the kernel stays in
 * the plan and every mask it forms in the table. */
static int owen_plan_ok(int m, int64_t n_games, const int64_t *groups,
                        const int64_t *level_start, const int64_t *item_start,
                        const int64_t *items)
{
    int64_t full, l, j;
    int i;
    if (bad_m(m) || n_games < 0 || !groups || !level_start || !item_start || !items) return 0;
    full = ((int64_t)1 << m) - 1;
    if (level_start[0] != 0 || !csr_offsets_ok(level_start, m)) return 0;
    if (item_start[0] != 0 || !csr_offsets_ok(item_start, level_start[m])) return 0;
    for (i = 0; i < m; i++) {
        if (groups[i] < 1 || groups[i] > full) return 0;
        if (level_start[i + 1] - level_start[i] > m - 1) return 0;
    }
    for (l = 0; l < level_start[m]; l++) {
        const int64_t n = item_start[l + 1] - item_start[l];
        if (n < 1 || n > m - 1) return 0;
        for (j = item_start[l]; j < item_start[l + 1]; j++)
            if (items[j] < 1 || items[j] > full) return 0;
    }
    return 1;
}

#define REAL double
#define SFX(name) name##_f64
#include "tables_real.inc"
#undef REAL
#undef SFX

#define REAL float
#define SFX(name) name##_f32
#include "tables_real.inc"
#undef REAL
#undef SFX

