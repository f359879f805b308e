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
    /* The one-mask sum, in index order. */                                                  \
    static double direct_##SFX(const REAL *x, int m, const double *up, const double *down,   \
                               uint64_t s)                                                   \
    {                                                                                        \
        const int64_t n = (int64_t)1 << m;                                                   \
        int64_t w;                                                                           \
        double acc = 0.0;                                                                    \
        for (w = 0; w < n; w++) {                                                            \
            const uint64_t u = (uint64_t)w;                                                  \
            if ((u & s) == s) acc += up[popcount64(u)] * (double)x[w];                       \
            if (down && (u & s) == 0) acc += down[popcount64(u)] * (double)x[w];             \
        }                                                                                    \
        return acc;                                                                          \
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
        int pc8[256];                                                                        \
        int64_t g, p;                                                                        \
        const int64_t n = (int64_t)1 << (m > 0 && m <= FC_MAX_TABLE_PLAYERS ? m : 0);        \
        if (!x || !args_ok(n_games, m, up, masks, n_masks, work, out)) return FC_EINVAL;     \
        for (p = 0; p < 256; p++) pc8[p] = popcount8((unsigned)p);                           \
        for (g = 0; g < n_games; g++) {                                                      \
            const REAL *xg = x + g * n;                                                      \
            double *og = out + g * n_masks;                                                  \
            if (n_masks == 1) {                                                              \
                og[0] = direct_##SFX(xg, m, up, down, masks[0]);                             \
                continue;                                                                    \
            }                                                                                \
            if (n_masks == 0) continue;                                                      \
            weigh_##SFX(xg, m, up, down, pc8, work);                                         \
            fc_from_moebius_f64(work, 1, m, work);                                           \
            for (p = 0; p < n_masks; p++) og[p] = work[(n - 1) ^ (int64_t)masks[p]];         \
        }                                                                                    \
        return FC_OK;                                                                        \
    }

DEFINE_GRADED_SUMS(double, f64)
DEFINE_GRADED_SUMS(float, f32)
