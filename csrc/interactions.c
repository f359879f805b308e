/* interactions.c - size-graded superset and complement sums; see
 * interactions.h. The zeta transform is the one of tables.c
 * (fc_from_moebius_f64, in place). */
#include "fastcredit.h"
#include "internal.h"

/* Popcounts of the low 8 bits; a block of 256 entries shares its high bits. */
static int popcount8(unsigned x)
{
    int c = 0;
    while (x) { x &= x - 1; c++; }
    return c;
}

static int popcount64(uint64_t x)
{
    int c = 0;
    while (x) { x &= x - 1; c++; }
    return c;
}

/* The player of a one-player mask. */
static int bit_of(uint64_t mask)
{
    int b = 0;
    while (!(mask >> b & 1)) b++;
    return b;
}

static int args_ok(int64_t n_games, int m, const double *up, const uint64_t *masks,
                   int64_t n_masks, const double *work, const double *out)
{
    int64_t p;
    if (m < 1 || m > FC_MAX_TABLE_PLAYERS || n_games < 0 || n_masks < 0 || !up || !work ||
        !out || (n_masks > 0 && !masks))
        return 0;
    for (p = 0; p < n_masks; p++)
        if (masks[p] >> m) return 0;
    return 1;
}

#define DEFINE_GRADED_SUMS(REAL, SFX)                                                         \
    /* The one-mask sum, in index order, by blocks of 256 entries. */                        \
    static double direct_##SFX(const REAL *x, int m, const double *up, const double *down,   \
                               uint64_t s, const int *pc8)                                   \
    {                                                                                        \
        const int bb = m < 8 ? m : 8;                                                        \
        const int64_t bs = (int64_t)1 << bb, n = (int64_t)1 << m;                            \
        int64_t base, j;                                                                     \
        double acc = 0.0;                                                                    \
        for (base = 0; base < n; base += bs) {                                               \
            const int h = popcount64((uint64_t)base);                                        \
            for (j = 0; j < bs; j++) {                                                       \
                const uint64_t u = (uint64_t)(base + j);                                     \
                const int c = h + pc8[j];                                                    \
                if ((u & s) == s) acc += up[c] * (double)x[base + j];                        \
                if (down && (u & s) == 0) acc += down[c] * (double)x[base + j];              \
            }                                                                                \
        }                                                                                    \
        return acc;                                                                          \
    }                                                                                        \
                                                                                             \
    /* All masks single players: one pass. With z(W) = up[|W|] x(W) -            \
     * down[|W|] x(W), out = sum_{W containing i} z(W) + sum_T down[|T|] x(T);     \
     * a block of 256 entries adds its low players' sums entry by entry and its   \
     * total to each of its high players. acc has m entries. */                   \
    static void singles_##SFX(const REAL *x, int m, const double *up, const double *down,    \
                              const int *pc8, double *acc)                                   \
    {                                                                                        \
        const int bb = m < 8 ? m : 8;                                                        \
        const int64_t bs = (int64_t)1 << bb, n = (int64_t)1 << m;                            \
        int64_t base, j;                                                                     \
        int b;                                                                               \
        double rest = 0.0;                                                                   \
        for (b = 0; b < m; b++) acc[b] = 0.0;                                                \
        for (base = 0; base < n; base += bs) {                                               \
            const int h = popcount64((uint64_t)base);                                        \
            double low[8] = {0, 0, 0, 0, 0, 0, 0, 0}, block = 0.0;                           \
            for (j = 0; j < bs; j++) {                                                       \
                const int c = h + pc8[j];                                                    \
                const double xv = (double)x[base + j];                                       \
                double z = up[c] * xv;                                                       \
                if (down) {                                                                  \
                    const double d = down[c] * xv;                                           \
                    z -= d;                                                                  \
                    rest += d;                                                               \
                }                                                                            \
                block += z;                                                                  \
                for (b = 0; b < bb; b++)                                                     \
                    if (j >> b & 1) low[b] += z;                                             \
            }                                                                                \
            for (b = 0; b < bb; b++) acc[b] += low[b];                                       \
            for (b = bb; b < m; b++)                                                         \
                if (base >> b & 1) acc[b] += block;                                          \
        }                                                                                    \
        for (b = 0; b < m; b++) acc[b] += rest;                                              \
    }                                                                                        \
                                                                                             \
    /* work[q] = up[m - |q|] x(N - q) (+ down[|q|] x(q)), by blocks of 256. */                \
    static FC_CLONES void weigh_##SFX(const REAL *x, int m, const double *up,                 \
                                      const double *down, const int *pc8, double *work)      \
    {                                                                                        \
        const int bb = m < 8 ? m : 8;                                                        \
        const int64_t bs = (int64_t)1 << bb, n = (int64_t)1 << m, full = n - 1;              \
        int64_t base, j;                                                                     \
        for (base = 0; base < n; base += bs) {                                               \
            const int h = popcount64((uint64_t)base);                                        \
            const REAL *rev = x + (full ^ base); /* x(N - (base + j)) = rev[-j] */           \
            double *y = work + base;                                                         \
            if (down) {                                                                      \
                const REAL *fwd = x + base;                                                  \
                for (j = 0; j < bs; j++) {                                                   \
                    const int c = h + pc8[j];                                                \
                    y[j] = up[m - c] * (double)rev[-j] + down[c] * (double)fwd[j];           \
                }                                                                            \
            } else {                                                                         \
                for (j = 0; j < bs; j++) y[j] = up[m - h - pc8[j]] * (double)rev[-j];        \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    int fc_graded_sums_##SFX(const REAL *x, int64_t n_games, int m, const double *up,         \
                             const double *down, const uint64_t *masks, int64_t n_masks,     \
                             double *work, double *out)                                      \
    {                                                                                        \
        int pc8[256], singles = 1;                                                           \
        int64_t g, p;                                                                        \
        const int64_t n = (int64_t)1 << (m > 0 && m <= FC_MAX_TABLE_PLAYERS ? m : 0);        \
        if (!x || !args_ok(n_games, m, up, masks, n_masks, work, out)) return FC_EINVAL;     \
        for (p = 0; p < 256; p++) pc8[p] = popcount8((unsigned)p);                           \
        for (p = 0; p < n_masks; p++) singles = singles && popcount64(masks[p]) == 1;        \
        for (g = 0; g < n_games; g++) {                                                      \
            const REAL *xg = x + g * n;                                                      \
            double *og = out + g * n_masks;                                                  \
            if (n_masks == 1) {                                                              \
                og[0] = direct_##SFX(xg, m, up, down, masks[0], pc8);                             \
                continue;                                                                    \
            }                                                                                \
            if (n_masks == 0) continue;                                                      \
            if (singles) {                                                                   \
                singles_##SFX(xg, m, up, down, pc8, work);                                   \
                for (p = 0; p < n_masks; p++) og[p] = work[bit_of(masks[p])];                \
                continue;                                                                    \
            }                                                                                \
            weigh_##SFX(xg, m, up, down, pc8, work);                                         \
            fc_from_moebius_f64(work, 1, m, work);                                           \
            for (p = 0; p < n_masks; p++) og[p] = work[(n - 1) ^ (int64_t)masks[p]];         \
        }                                                                                    \
        return FC_OK;                                                                        \
    }

DEFINE_GRADED_SUMS(double, f64)
DEFINE_GRADED_SUMS(float, f32)
