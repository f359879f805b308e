/* approximators.c - drawing and folding of the approximator family; see
 * approximators.h. */
#include "fastcredit.h"

#include <math.h>

static int popcount64(uint64_t x)
{
    int c = 0;
    while (x) {
        x &= x - 1;
        c++;
    }
    return c;
}

/* Partial Fisher-Yates: a uniformly random k of p[0..n); returns their mask. */
static uint64_t pick(uint64_t *state, int *p, int n, int k)
{
    uint64_t mask = 0;
    int j;
    for (j = 0; j < k; j++) {
        const int r = (int)fc_rng_below(state, (uint64_t)(n - j));
        const int t = p[j];
        p[j] = p[j + r];
        p[j + r] = t;
        mask |= (uint64_t)1 << p[j];
    }
    return mask;
}

int fc_approx_draw_svarm(uint64_t seed, uint64_t game, int64_t first, int64_t n, int m,
                         const int64_t *sizes, const double *cdf, int64_t n_sizes,
                         uint64_t *masks)
{
    const uint64_t game_key = fc_rng_key(seed, game);
    int p[FC_APPROX_MAX_PLAYERS];
    int64_t u, k;
    int i;
    if (m < 1 || m > FC_APPROX_MAX_PLAYERS || n < 0 || n_sizes < 1 || first < 0 ||
        first > INT64_MAX - n || !sizes || !cdf || (n > 0 && !masks))
        return FC_EINVAL;
    for (k = 0; k < n_sizes; k++)
        if (sizes[k] < 0 || sizes[k] > m) return FC_EINVAL;
    for (u = 0; u < n; u++) {
        uint64_t state = fc_rng_key(game_key, (uint64_t)(first + u));
        const double x = fc_rng_uniform(&state);
        int64_t size = sizes[n_sizes - 1];
        for (k = 0; k < n_sizes; k++)
            if (x < cdf[k]) {
                size = sizes[k];
                break;
            }
        for (i = 0; i < m; i++) p[i] = i;
        masks[u] = pick(&state, p, m, (int)size);
    }
    return FC_OK;
}

int fc_approx_draw_stratified(uint64_t seed, uint64_t game, int64_t first, int64_t n, int m,
                              uint64_t *masks, int64_t *slots)
{
    const uint64_t game_key = fc_rng_key(seed, game);
    int p[FC_APPROX_MAX_PLAYERS];
    int64_t u;
    if (m < 1 || m > FC_APPROX_MAX_PLAYERS || n < 0 || first < 0 || first > INT64_MAX - n ||
        (n > 0 && (!masks || !slots)))
        return FC_EINVAL;
    for (u = 0; u < n; u++) {
        const int64_t s = first + u;
        const int i = (int)(s % m);
        const int l = (int)((s / m) % m);
        uint64_t state = fc_rng_key(game_key, (uint64_t)s);
        uint64_t mask;
        int j, q = 0;
        for (j = 0; j < m; j++)
            if (j != i) p[q++] = j;
        mask = pick(&state, p, m - 1, l);
        masks[2 * u] = mask;
        masks[2 * u + 1] = mask | (uint64_t)1 << i;
        slots[u] = (int64_t)i * m + l;
    }
    return FC_OK;
}

int fc_approx_draw_owen(uint64_t seed, uint64_t game, int64_t first, int64_t n, int m,
                        const double *anchors, int64_t n_anchors, uint64_t *masks,
                        int64_t *slots)
{
    const uint64_t game_key = fc_rng_key(seed, game);
    int64_t u;
    if (m < 1 || m > FC_APPROX_MAX_PLAYERS || n < 0 || n_anchors < 1 || first < 0 ||
        first > INT64_MAX - n || !anchors || (n > 0 && (!masks || !slots)))
        return FC_EINVAL;
    for (u = 0; u < n; u++) {
        const int64_t s = first + u;
        const int i = (int)(s % m);
        const int64_t a = (s / m) % n_anchors;
        const double q = anchors[a];
        uint64_t state = fc_rng_key(game_key, (uint64_t)s);
        uint64_t mask = 0;
        int j;
        for (j = 0; j < m; j++)
            if (j != i && fc_rng_uniform(&state) < q) mask |= (uint64_t)1 << j;
        masks[2 * u] = mask;
        masks[2 * u + 1] = mask | (uint64_t)1 << i;
        slots[u] = (int64_t)i * n_anchors + a;
    }
    return FC_OK;
}

static void fold(int64_t s, double x, int64_t *count, double *first, double *s1, double *s2)
{
    if (count[s] == 0) {
        first[s] = x;
    } else {
        const double d = x - first[s];
        s1[s] += d;
        s2[s] += d * d;
    }
    count[s]++;
}

int fc_approx_fold_pairs(const double *values, const int64_t *slots, int64_t n,
                         int64_t n_slots, int64_t *count, double *first, double *s1,
                         double *s2)
{
    int64_t k;
    if (n < 0 || n_slots < 0 || (n > 0 && (!values || !slots)) ||
        (n_slots > 0 && (!count || !first || !s1 || !s2)))
        return FC_EINVAL;
    for (k = 0; k < n; k++)
        if (slots[k] < 0 || slots[k] >= n_slots) return FC_EINVAL;
    for (k = 0; k < n; k++)
        fold(slots[k], values[2 * k + 1] - values[2 * k], count, first, s1, s2);
    return FC_OK;
}

/* ---- Monte-Carlo interaction estimators (SVARM-IQ, SHAP-IQ) --------------- */

int fc_approx_fold_svarmiq(const uint64_t *masks, const double *values, int64_t n, int m,
                           double centre, const int64_t *members, const int64_t *sizes,
                           int64_t n_subsets, int order, int64_t *count, double *first,
                           double *s1, double *s2)
{
    int64_t k, j;
    int b;
    if (m < 1 || m > FC_APPROX_MAX_PLAYERS || order < 1 || order > m || order > 30 || n < 0 ||
        n_subsets < 0 || (n > 0 && (!masks || !values)) ||
        (n_subsets > 0 && (!members || !sizes || !count || !first || !s1 || !s2)))
        return FC_EINVAL;
    for (j = 0; j < n_subsets; j++) {
        if (sizes[j] < 1 || sizes[j] > order) return FC_EINVAL;
        for (b = 0; b < sizes[j]; b++)
            if (members[j * order + b] < 0 || members[j * order + b] >= m) return FC_EINVAL;
    }
    if (m < 64)
        for (k = 0; k < n; k++)
            if (masks[k] >> m) return FC_EINVAL;
    for (k = 0; k < n; k++) {
        const uint64_t mask = masks[k];
        const int t = popcount64(mask);
        const double x = values[k] - centre;
        for (j = 0; j < n_subsets; j++) {
            const int64_t *mem = members + j * order;
            int64_t p = 0;
            for (b = 0; b < sizes[j]; b++)
                p |= (int64_t)(mask >> mem[b] & 1) << b;
            fold(((j << order) + p) * (m + 1) + t, x, count, first, s1, s2);
        }
    }
    return FC_OK;
}

int fc_approx_fold_shapiq(const uint64_t *masks, const double *values, int64_t n_units,
                          int per_unit, int m, double centre, const int64_t *members,
                          const int64_t *sizes, int64_t n_subsets, int order,
                          const double *weights, int64_t *count, double *first, double *s1,
                          double *s2)
{
    int64_t u, j;
    int b, c;
    if (m < 1 || m > FC_APPROX_MAX_PLAYERS || per_unit < 1 || per_unit > 2 || order < 1 ||
        order > m || n_units < 0 || n_subsets < 0 || (n_units > 0 && (!masks || !values)) ||
        (n_subsets > 0 && (!members || !sizes || !weights || !count || !first || !s1 || !s2)))
        return FC_EINVAL;
    for (j = 0; j < n_subsets; j++) {
        if (sizes[j] < 1 || sizes[j] > order) return FC_EINVAL;
        for (b = 0; b < sizes[j]; b++)
            if (members[j * order + b] < 0 || members[j * order + b] >= m) return FC_EINVAL;
    }
    if (m < 64)
        for (u = 0; u < n_units * per_unit; u++)
            if (masks[u] >> m) return FC_EINVAL;
    for (u = 0; u < n_units; u++) {
        const uint64_t *unit = masks + u * per_unit;
        double x[2];
        int t[2];
        for (c = 0; c < per_unit; c++) {
            x[c] = values[u * per_unit + c] - centre;
            t[c] = popcount64(unit[c]);
        }
        for (j = 0; j < n_subsets; j++) {
            const int64_t *mem = members + j * order;
            const int64_t s = sizes[j];
            double y = 0.0;
            for (c = 0; c < per_unit; c++) {
                int64_t i = 0;
                for (b = 0; b < s; b++)
                    i += (int64_t)(unit[c] >> mem[b] & 1);
                y += x[c] * weights[(s * (m + 1) + t[c]) * (order + 1) + i];
            }
            fold(j, y, count, first, s1, s2);
        }
    }
    return FC_OK;
}

/* ---- regression estimators ---------------------------------------------- */

/* The bits of x by SWAR arithmetic (no loop over them: the folds count the
 * members of S and of S & T for every column). */
static int popcount_swar(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}

/* Whether x_a(S) = coef[t_a, |S & U_a|] is [U_a ⊆ S] coef[t_a, t_a]: coef[t,
 * j] = 0 for j < t and every column's size its number of members (the f
 * basis); the folds then test U_a & ~S instead of counting S & U_a. */
static int subset_columns(const double *coef, int order, const uint64_t *columns,
                          const int64_t *column_sizes, int64_t p)
{
    int64_t a;
    int t, j;
    for (t = 0; t <= order; t++)
        for (j = 0; j < t; j++)
            if (coef[t * (order + 1) + j] != 0.0) return 0;
    for (a = 0; a < p; a++)
        if (popcount_swar(columns[a]) != column_sizes[a]) return 0;
    return 1;
}

int fc_approx_fold_regression(const uint64_t *masks, const double *values, int64_t n, int m,
                              double centre, const double *weights, int64_t n_kernels,
                              const uint64_t *columns, const int64_t *column_sizes, int64_t p,
                              const double *coef, int order, double *work_x, int64_t *work_i,
                              double *gram, double *moment)
{
    const int width = order + 1;
    int64_t k, a, b, j;
    int subset;
    if (m < 1 || m > FC_APPROX_MAX_PLAYERS || n < 0 || n_kernels < 1 || p < 1 || order < 0 ||
        order > m || (n > 0 && (!masks || !values)) || !weights || !columns ||
        !column_sizes || !coef || !work_x || !work_i || !gram || !moment)
        return FC_EINVAL;
    for (a = 0; a < p; a++)
        if (column_sizes[a] < 0 || column_sizes[a] > order ||
            (m < 64 && columns[a] >> m))
            return FC_EINVAL;
    if (m < 64)
        for (k = 0; k < n; k++)
            if (masks[k] >> m) return FC_EINVAL;
    subset = subset_columns(coef, order, columns, column_sizes, p);
    for (k = 0; k < n; k++) {
        const uint64_t mask = masks[k];
        const int s = popcount_swar(mask);
        const double y = values[k] - centre;
        int64_t nz = 0;
        int live = 0;
        for (j = 0; j < n_kernels; j++)
            if (weights[j * (m + 1) + s] != 0.0) live = 1;
        if (!live) continue;
        for (a = 0; a < p; a++) {
            const double x =
                subset ? (columns[a] & ~mask ? 0.0 : coef[column_sizes[a] * (width + 1)])
                       : coef[column_sizes[a] * width + popcount_swar(mask & columns[a])];
            if (x != 0.0) {
                work_x[nz] = x;
                work_i[nz] = a;
                nz++;
            }
        }
        for (j = 0; j < n_kernels; j++) {
            const double w = weights[j * (m + 1) + s];
            double *g = gram + j * p * p;
            double *h = moment + j * p;
            if (w == 0.0) continue;
            for (a = 0; a < nz; a++) {
                const double wa = w * work_x[a];
                double *row = g + work_i[a] * p;
                h[work_i[a]] += wa * y;
                for (b = a; b < nz; b++) row[work_i[b]] += wa * work_x[b];
            }
        }
    }
    return FC_OK;
}

int fc_approx_fold_scores(const uint64_t *masks, const double *values, int64_t n_units, int c,
                          int m, double centre, const double *weights, int64_t n_stages,
                          const uint64_t *columns, const int64_t *column_sizes, int64_t p,
                          const double *coef, int order, const double *phi,
                          const int64_t *reach, double *work_x, int64_t *work_i,
                          double *work_g, double *work_fit, double *scores_sq, double *scores)
{
    const int width = order + 1;
    const int64_t wide = n_stages * p;
    int64_t u, a, b, t;
    int q, subset;
    if (m < 1 || m > FC_APPROX_MAX_PLAYERS || n_units < 0 || c < 1 || n_stages < 1 || p < 1 ||
        order < 0 || order > m || (n_units > 0 && (!masks || !values)) || !weights ||
        !columns || !column_sizes || !coef || !phi || !reach || !work_x || !work_i ||
        !work_g || !work_fit || !scores_sq || !scores)
        return FC_EINVAL;
    for (a = 0; a < p; a++)
        if (column_sizes[a] < 0 || column_sizes[a] > order || (m < 64 && columns[a] >> m))
            return FC_EINVAL;
    for (t = 0; t < n_stages; t++)
        if (reach[t] < 0 || reach[t] > p) return FC_EINVAL;
    if (m < 64)
        for (u = 0; u < n_units * c; u++)
            if (masks[u] >> m) return FC_EINVAL;
    subset = subset_columns(coef, order, columns, column_sizes, p);
    for (u = 0; u < n_units; u++) {
        int64_t nz = 0;
        for (a = 0; a < wide; a++) work_g[a] = 0.0;
        for (q = 0; q < c; q++) {
            const uint64_t mask = masks[u * c + q];
            const int s = popcount_swar(mask);
            double r = values[u * c + q] - centre;
            int64_t k = 0;
            for (a = 0; a < p; a++) {
                const double x =
                    subset ? (columns[a] & ~mask ? 0.0 : coef[column_sizes[a] * (width + 1)])
                           : coef[column_sizes[a] * width + popcount_swar(mask & columns[a])];
                if (x != 0.0) {
                    work_x[k] = x;
                    work_i[k] = a;
                    k++;
                }
            }
            /* the residual of stage t takes off the fits of stages 0..t */
            for (t = 0; t < n_stages; t++) {
                double fit = 0.0;
                for (a = 0; a < k; a++) fit += work_x[a] * phi[t * p + work_i[a]];
                r -= fit;
                work_fit[t] = r * weights[t * (m + 1) + s];
            }
            /* stage t's scores on its first reach[t] columns (the others
             * are never read); work_i ascends */
            for (t = 0; t < n_stages; t++) {
                const double rw = work_fit[t];
                if (rw == 0.0) continue;
                for (a = 0; a < k && work_i[a] < reach[t]; a++)
                    work_g[t * p + work_i[a]] += rw * work_x[a];
            }
        }
        for (a = 0; a < wide; a++)
            if (work_g[a] != 0.0) {
                work_x[nz] = work_g[a];
                work_i[nz] = a;
                nz++;
            }
        for (a = 0; a < nz; a++) {
            double *row = scores_sq + work_i[a] * wide;
            scores[work_i[a]] += work_x[a];
            for (b = a; b < nz; b++) row[work_i[b]] += work_x[a] * work_x[b];
        }
    }
    return FC_OK;
}

/* right-hand sides the back substitution carries at once */
#define FC_SOLVE_RHS 4

int fc_approx_cholesky_solve(double *a, int64_t n, double *rhs, int64_t n_rhs, int64_t *info)
{
    int64_t i, j, k, r, c;
    if (n < 1 || n_rhs < 0 || !a || (n_rhs > 0 && !rhs) || !info) return FC_EINVAL;
    info[0] = 0;
    /* every sum runs along rows of R (the rows above row j; then, solving,
     * row k of R scaled by z[k]): the terms of each entry in ascending k as
     * down R's columns, the entries of a row independent of each other */
    for (j = 0; j < n; j++) {
        const double diag = a[j * n + j];
        double *row = a + j * n;
        double d;
        for (k = 0; k < j; k++) {
            const double *above = a + k * n;
            const double r_kj = above[j];
            for (i = j; i < n; i++) row[i] -= r_kj * above[i];
        }
        d = row[j];
        if (!(d > 1e-13 * diag)) {
            info[0] = j + 1;
            return FC_OK;
        }
        d = sqrt(d);
        row[j] = d;
        for (i = j + 1; i < n; i++) row[i] /= d;
    }
    /* FC_SOLVE_RHS right-hand sides at a time in the back substitution: its
     * sums along R's rows are each one chain of dependent subtractions */
    for (r = 0; r < n_rhs; r += FC_SOLVE_RHS) {
        const int64_t w = n_rhs - r < FC_SOLVE_RHS ? n_rhs - r : FC_SOLVE_RHS;
        double *z = rhs + r * n;
        for (c = 0; c < w; c++)
            for (k = 0; k < n; k++) {
                const double *row = a + k * n;
                const double zk = z[c * n + k] / row[k];
                z[c * n + k] = zk;
                for (i = k + 1; i < n; i++) z[c * n + i] -= row[i] * zk;
            }
        for (i = n - 1; i >= 0; i--) {
            const double *row = a + i * n;
            double x[FC_SOLVE_RHS];
            for (c = 0; c < w; c++) x[c] = z[c * n + i];
            for (k = i + 1; k < n; k++)
                for (c = 0; c < w; c++) x[c] -= row[k] * z[c * n + k];
            for (c = 0; c < w; c++) z[c * n + i] = x[c] / row[i];
        }
    }
    return FC_OK;
}


/* --- sparse transform (SPEX): binary BCH decoding ------------------------------ */

/* GF(2^q) arithmetic on logarithms: gf_exp[e] = alpha^e for 0 <= e < 2 * order,
 * gf_log[x] = log_alpha x for 1 <= x <= order (order = 2^q - 1). */
static int32_t bch_mul(int32_t a, int32_t b, const int32_t *gf_exp, const int32_t *gf_log)
{
    if (a == 0 || b == 0) return 0;
    return gf_exp[gf_log[a] + gf_log[b]];
}

/* One received word (0/1 bits) decoded into out; returns n_errors (-1 for a
 * failure, out = the word then). The caller has checked the bits and the code. */
static int64_t bch_decode_word(const uint8_t *word, int64_t length, int64_t order, int64_t t,
                               const int32_t *gf_exp, const int32_t *gf_log, uint8_t *out)
{
    int32_t syndrome[2 * FC_BCH_MAX_T], locator[2 * FC_BCH_MAX_T + 1];
    int32_t previous[2 * FC_BCH_MAX_T + 1], saved[2 * FC_BCH_MAX_T + 1];
    int64_t roots[FC_BCH_MAX_T];
    int64_t i, j, l, r;
    int any = 0, degree = 0, shift = 1, n_roots = 0, outside = 0;
    int32_t last = 1;
    for (j = 0; j < length; j++) out[j] = word[j];
    /* S_l = r(alpha^(l + 1)); bit j of the word is the coefficient of
     * x^(length - 1 - j) (galois' descending order) */
    for (l = 0; l < 2 * t; l++) {
        int32_t s = 0;
        for (j = 0; j < length; j++)
            if (word[j]) s ^= gf_exp[((l + 1) * (length - 1 - j)) % order];
        syndrome[l] = s;
        any |= s != 0;
    }
    if (!any) return 0;
    /* Berlekamp-Massey: the shortest recurrence locator(x) (degree <= 2t)
     * generating the syndromes; degree is its linear complexity */
    for (i = 0; i <= 2 * t; i++) locator[i] = previous[i] = 0;
    locator[0] = previous[0] = 1;
    for (r = 0; r < 2 * t; r++) {
        int32_t discrepancy = syndrome[r], scale;
        for (i = 1; i <= degree; i++)
            discrepancy ^= bch_mul(locator[i], syndrome[r - i], gf_exp, gf_log);
        if (discrepancy == 0) {
            shift++;
            continue;
        }
        scale = gf_exp[gf_log[discrepancy] + order - gf_log[last]];
        for (i = 0; i <= 2 * t; i++) saved[i] = locator[i];
        for (i = 0; i + shift <= 2 * t; i++)
            locator[i + shift] ^= bch_mul(scale, previous[i], gf_exp, gf_log);
        if (2 * degree <= r) {
            degree = (int)(r + 1 - degree);
            for (i = 0; i <= 2 * t; i++) previous[i] = saved[i];
            last = discrepancy;
            shift = 1;
        } else {
            shift++;
        }
    }
    if (degree > t) return -1;
    /* Chien search over every position of the full code: an error at
     * x^i when locator(alpha^-i) = 0; a root beyond the shortened word,
     * or fewer roots than the degree, is a decoding failure */
    for (i = 0; i < order; i++) {
        int32_t value = 1;
        for (l = 1; l <= degree; l++)
            if (locator[l]) value ^= gf_exp[(gf_log[locator[l]] + (order - i) * l) % order];
        if (value == 0) {
            if (i >= length) outside = 1;
            else if (n_roots < FC_BCH_MAX_T) roots[n_roots++] = i;
        }
    }
    if (outside || n_roots != degree) {
        for (j = 0; j < length; j++) out[j] = word[j];
        return -1;
    }
    for (i = 0; i < n_roots; i++) out[length - 1 - roots[i]] ^= 1;
    return degree;
}

static int bch_code_ok(int64_t length, int64_t order, int64_t t, const int32_t *gf_exp,
                       const int32_t *gf_log)
{
    return gf_exp && gf_log && t >= 1 && t <= FC_BCH_MAX_T && order >= 3
        && order <= FC_BCH_MAX_ORDER && !(order & (order + 1)) && length >= 1
        && length <= order && 2 * t <= order;
}

int fc_approx_bch_decode(const uint8_t *received, int64_t n_words, int64_t length,
                         int64_t order, int64_t t, const int32_t *gf_exp,
                         const int32_t *gf_log, uint8_t *decoded, int64_t *n_errors)
{
    int64_t w, j;
    if (!received || !decoded || !n_errors || n_words < 0
        || !bch_code_ok(length, order, t, gf_exp, gf_log))
        return FC_EINVAL;
    for (w = 0; w < n_words; w++)
        for (j = 0; j < length; j++)
            if (received[w * length + j] > 1) return FC_EINVAL;
    for (w = 0; w < n_words; w++)
        n_errors[w] = bch_decode_word(received + w * length, length, order, t, gf_exp, gf_log,
                                      decoded + w * length);
    return FC_OK;
}

/* --- sparse transform (SPEX): singleton detection ------------------------------ */

/* Python's order of (sum, [bit 0, bit 1, ...]) tuples: the sums, then the
 * patterns as lists of their bits (the first differing bit decides). */
static int chase_less(double sa, uint32_t pa, double sb, uint32_t pb)
{
    uint32_t diff = pa ^ pb;
    int j = 0;
    if (sa != sb) return sa < sb;
    if (!diff) return 0;
    while (!((diff >> j) & 1)) j++;
    return (pb >> j) & 1;
}

/* heapq.heappush */
static void chase_push(double *hs, uint32_t *hp, int64_t *size, double s, uint32_t p)
{
    int64_t pos = (*size)++;
    while (pos > 0) {
        const int64_t parent = (pos - 1) >> 1;
        if (!chase_less(s, p, hs[parent], hp[parent])) break;
        hs[pos] = hs[parent];
        hp[pos] = hp[parent];
        pos = parent;
    }
    hs[pos] = s;
    hp[pos] = p;
}

#define CHASE_MAX (FC_BCH_MAX_T * (FC_BCH_MAX_T + 1) + 2)

/* sparse_transform's k_smallest_partial_sums_with_indices(arr, count), step
 * for step (its heap, its culls to the count largest of the negated sums,
 * ascending); the patterns are then tried from the heap's last entry to its
 * first. Returns the heap's size. */
static int64_t chase_patterns(const double *arr, int64_t depth, int64_t count, double *hs,
                              uint32_t *hp)
{
    double add_s[CHASE_MAX];
    uint32_t add_p[CHASE_MAX];
    int64_t size = 1, i, x, a, b;
    hs[0] = 0.0;
    hp[0] = 0;
    for (i = 0; i < depth; i++) {
        const double current_min = hs[0];
        int64_t n_add = 0;
        for (x = 0; x < size; x++)
            if (size < count || hs[x] - arr[i] >= current_min) {
                add_s[n_add] = hs[x] - arr[i];
                add_p[n_add++] = hp[x] | (uint32_t)1 << i;
            }
        for (a = 0; a < n_add; a++) chase_push(hs, hp, &size, add_s[a], add_p[a]);
        if (size > count) {
            /* heapq.nlargest(count, h)[::-1]: ascending, the largest count */
            for (a = 1; a < size; a++) {
                const double s = hs[a];
                const uint32_t p = hp[a];
                for (b = a; b > 0 && chase_less(s, p, hs[b - 1], hp[b - 1]); b--) {
                    hs[b] = hs[b - 1];
                    hp[b] = hp[b - 1];
                }
                hs[b] = s;
                hp[b] = p;
            }
            for (a = 0; a < count; a++) {
                hs[a] = hs[size - count + a];
                hp[a] = hp[size - count + a];
            }
            size = count;
        }
    }
    return size;
}

int fc_approx_spex_detect(const double *u, int64_t n_groups, int64_t n_delays, int64_t b,
                          const uint8_t *subsampling, const uint8_t *delays, int64_t n,
                          int64_t order, int64_t t, const int32_t *gf_exp,
                          const int32_t *gf_log, int soft, double cutoff, double energy_cutoff,
                          uint8_t *check, uint8_t *status, uint8_t *k, double *rho,
                          uint8_t *work)
{
    double hs[CHASE_MAX], arr[FC_BCH_MAX_T];
    uint32_t hp[CHASE_MAX];
    int64_t idx[FC_BCH_MAX_T];
    const int64_t r = n_delays - 1, length = n + r, n_bins = (int64_t)1 << (b < 0 ? 0 : b);
    const int64_t depth = t < r ? t : r, count = t * (t + 1) / 2;
    uint8_t *word = work, *dec = work + length, *messages = work + 2 * length;
    int64_t g, j, d, i, p;
    if (!u || !subsampling || !delays || !check || !status || !k || !rho || !work
        || n_groups < 0 || r < 1 || b < 0 || b > 30 || n < 1
        || !bch_code_ok(length, order, t, gf_exp, gf_log))
        return FC_EINVAL;
    for (g = 0; g < n_groups; g++)
        for (j = 0; j < n_bins; j++) {
            const int64_t bin = g * n_bins + j;
            const double *col = u + g * n_delays * n_bins + j;
            uint8_t *kk = k + bin * n;
            double energy = 0.0, mean = 0.0, residual = 0.0;
            int64_t n_errors, matching = 1;
            for (d = 0; d < n_delays; d++) energy += col[d * n_bins] * col[d * n_bins];
            if (!(energy > cutoff * (double)n_delays) || !check[bin]) {
                check[bin] = 0;
                status[bin] = 0;
                continue;
            }
            /* the word [0] * n + parity: the signs of the ratios to delay 0
             * (soft), or of the delays against delay 0's (hard) */
            for (i = 0; i < n; i++) word[i] = 0;
            for (p = 0; p < r; p++)
                word[n + p] = soft ? col[(p + 1) * n_bins] / col[0] < 0
                                   : (col[(p + 1) * n_bins] < 0) != (col[0] < 0);
            n_errors = bch_decode_word(word, length, order, t, gf_exp, gf_log, dec);
            for (i = 0; i < n; i++) kk[i] = n_errors == -1 ? 0 : dec[i];
            if (n_errors == -1 && soft) {
                /* Chase-2: the depth least reliable parity bits (ascending
                 * |ratio|, the first on ties), flipped by the patterns in
                 * sparse_transform's order; of the distinct messages decoded
                 * (the first of each), the one with the fewest errors */
                int64_t size, h, n_distinct = 0, best = -1, best_errors = 0;
                for (i = 0; i < depth; i++) {
                    int64_t pick = -1;
                    double pick_key = 0.0;
                    for (p = 0; p < r; p++) {
                        const double key = fabs(col[(p + 1) * n_bins] / col[0]);
                        int64_t c, taken = 0;
                        for (c = 0; c < i; c++) taken |= idx[c] == p;
                        if (!taken && (pick < 0 || key < pick_key)) {
                            pick = p;
                            pick_key = key;
                        }
                    }
                    idx[i] = pick;
                    arr[i] = pick_key;
                }
                size = chase_patterns(arr, depth, count, hs, hp);
                for (h = size - 1; h >= 0; h--) {
                    for (i = 0; i < depth; i++) word[n + idx[i]] ^= (uint8_t)((hp[h] >> i) & 1);
                    n_errors = bch_decode_word(word, length, order, t, gf_exp, gf_log, dec);
                    for (i = 0; i < depth; i++) word[n + idx[i]] ^= (uint8_t)((hp[h] >> i) & 1);
                    if (n_errors == -1) continue;
                    for (i = 0; i < n_distinct; i++) {
                        int64_t c = 0;
                        while (c < n && messages[i * n + c] == dec[c]) c++;
                        if (c == n) break;
                    }
                    if (i < n_distinct) continue;
                    for (i = 0; i < n; i++) messages[n_distinct * n + i] = dec[i];
                    if (best < 0 || n_errors < best_errors) {
                        best = n_distinct;
                        best_errors = n_errors;
                    }
                    n_distinct++;
                }
                if (best >= 0)
                    for (i = 0; i < n; i++) kk[i] = messages[best * n + i];
            }
            /* valid_k: the coefficient from the signatures (-1)^(D k), the
             * energy it leaves, and k's bin in this group */
            for (d = 0; d < n_delays; d++) {
                int parity = 0;
                for (i = 0; i < n; i++) parity ^= delays[d * n + i] & kk[i];
                mean += parity ? -col[d * n_bins] : col[d * n_bins];
            }
            mean /= (double)n_delays;
            for (d = 0; d < n_delays; d++) {
                int parity = 0;
                double e;
                for (i = 0; i < n; i++) parity ^= delays[d * n + i] & kk[i];
                e = col[d * n_bins] - (parity ? -mean : mean);
                residual += e * e;
            }
            for (p = 0; p < b; p++) {
                int bit = 0;
                for (i = 0; i < n; i++) bit ^= subsampling[(g * n + i) * b + p] & kk[i];
                matching &= bit == (int)((j >> (b - 1 - p)) & 1);
            }
            rho[bin] = mean;
            if (matching && residual / energy < energy_cutoff) {
                status[bin] = 2;
            } else {
                status[bin] = 1;
                check[bin] = 0;
            }
        }
    return FC_OK;
}
