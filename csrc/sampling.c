/* sampling.c - permutation-sampling Shapley estimates and the masked rows of
 * shap's tabular explainers; see sampling.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fastcredit.h"
#include "internal.h"

/* Fisher-Yates shuffle of 0..m-1 from the stream `state` (see sampling.h). */
static void shuffle(uint64_t *state, int m, int32_t *perm)
{
    int i;
    for (i = 0; i < m; i++) perm[i] = i;
    for (i = m - 1; i > 0; i--) {
        const int j = (int)fc_rng_below(state, (uint64_t)i + 1);
        const int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

int fc_sampling_permutations(uint64_t seed, uint64_t game, int64_t first_unit,
                             int64_t n_units, int m, int32_t *perms)
{
    const uint64_t game_key = fc_rng_key(seed, game);
    int64_t u;
    if (m < 1 || m > FC_SAMPLING_MAX_PLAYERS || first_unit < 0 || n_units < 0 ||
        first_unit > INT64_MAX - n_units || (n_units > 0 && !perms))
        return FC_EINVAL;
    for (u = 0; u < n_units; u++) {
        uint64_t state = fc_rng_key(game_key, (uint64_t)(first_unit + u));
        shuffle(&state, m, perms + u * m);
    }
    return FC_OK;
}

/* A table game: double or float entries, read as double. */
typedef struct {
    const double *f64;
    const float *f32;
} table_t;

static double read(table_t t, uint64_t mask)
{
    return t.f64 ? t.f64[mask] : (double)t.f32[mask];
}

/* Adds the marginals of the walk along perm (reversed when `reverse`) to x.
 * v0, vn: the cached v({}) and v(N), or NaN to read them. Returns the table
 * reads spent. */
static int64_t walk(table_t t, int m, const int32_t *perm, int reverse,
                    int cache_endpoints, double v0, double vn, double *x)
{
    uint64_t mask = 0;
    int64_t reads = 0;
    double prev, cur;
    int k;
    if (cache_endpoints) {
        prev = v0;
    } else {
        prev = read(t, 0);
        reads++;
    }
    for (k = 0; k < m - 1; k++) {
        const int32_t p = perm[reverse ? m - 1 - k : k];
        mask |= (uint64_t)1 << p;
        cur = read(t, mask);
        x[p] += cur - prev;
        prev = cur;
    }
    reads += m - 1;
    if (cache_endpoints) {
        cur = vn;
    } else {
        cur = read(t, mask | (uint64_t)1 << perm[reverse ? 0 : m - 1]);
        reads++;
    }
    x[perm[reverse ? 0 : m - 1]] += cur - prev;
    return reads;
}

/* Every standard error <= tol after n samples (see sampling.h). */
static int converged(const double *s1, const double *s2, int m, int64_t n, double tol)
{
    const double nn = (double)n;
    int i;
    for (i = 0; i < m; i++)
        if (!((s2[i] - s1[i] * s1[i] / nn) / (nn - 1.0) / nn <= tol * tol)) return 0;
    return 1;
}

static void estimate(table_t t, int m, uint64_t game_key, int64_t max_walks,
                     int64_t budget, int antithetic, int cache_endpoints,
                     double tol, int64_t min_samples, double *values,
                     double *stderr_out, int64_t *stats)
{
    int32_t perm[FC_MAX_TABLE_PLAYERS];
    double x[FC_MAX_TABLE_PLAYERS], first[FC_MAX_TABLE_PLAYERS];
    double s1[FC_MAX_TABLE_PLAYERS], s2[FC_MAX_TABLE_PLAYERS];
    const uint64_t full = ((uint64_t)1 << m) - 1;
    const int unit_walks = antithetic ? 2 : 1;
    const int64_t unit_cost = unit_walks * (int64_t)(cache_endpoints ? m - 1 : m + 1);
    const int64_t max_units = max_walks / unit_walks;
    const double scale = antithetic ? 0.5 : 1.0;
    double v0 = 0.0, vn = 0.0;
    int64_t evals = 0, n = 0, u;
    int i, truncated = 0;
    if (cache_endpoints) {
        v0 = read(t, 0);
        vn = read(t, full);
        evals = 2;
    }
    for (i = 0; i < m; i++) s1[i] = s2[i] = 0.0;
    for (u = 0; u < max_units; u++) {
        uint64_t state = fc_rng_key(game_key, (uint64_t)u);
        if (evals + unit_cost > budget) {
            truncated = 1;
            break;
        }
        shuffle(&state, m, perm);
        for (i = 0; i < m; i++) x[i] = 0.0;
        evals += walk(t, m, perm, 0, cache_endpoints, v0, vn, x);
        if (antithetic) evals += walk(t, m, perm, 1, cache_endpoints, v0, vn, x);
        n++;
        if (n == 1) {
            for (i = 0; i < m; i++) first[i] = scale * x[i];
        } else {
            for (i = 0; i < m; i++) {
                const double d = scale * x[i] - first[i];
                s1[i] += d;
                s2[i] += d * d;
            }
        }
        if (tol > 0.0 && n >= min_samples && converged(s1, s2, m, n, tol)) break;
    }
    for (i = 0; i < m; i++) {
        const double nn = (double)n;
        const double var = (s2[i] - s1[i] * s1[i] / nn) / (nn - 1.0);
        values[i] = first[i] + s1[i] / nn;
        stderr_out[i] = n > 1 ? sqrt((var < 0.0 ? 0.0 : var) / nn) : INFINITY;
    }
    stats[FC_STAT_EVALS] = evals;
    stats[FC_STAT_WALKS] = n * unit_walks;
    stats[FC_STAT_SAMPLES] = n;
    stats[FC_STAT_TRUNCATED] = truncated;
}

static int estimate_games(table_t t, int64_t n_games, int m, uint64_t seed,
                          int64_t first_game, int64_t max_walks, int64_t budget,
                          int antithetic, int cache_endpoints, double tol,
                          int64_t min_samples, double *values, double *stderr_out,
                          int64_t *stats)
{
    const int unit_walks = antithetic ? 2 : 1;
    const int64_t fixed = cache_endpoints ? 2 : 0;
    const int64_t unit_cost = unit_walks * (int64_t)(cache_endpoints ? m - 1 : m + 1);
    int64_t g;
    if (m < 1 || m > FC_MAX_TABLE_PLAYERS || n_games < 0 || first_game < 0 ||
        first_game > INT64_MAX - n_games || max_walks < unit_walks || max_walks % unit_walks || budget < fixed + unit_cost ||
        !(tol >= 0.0) || min_samples < 2 || (n_games > 0 && (!values || !stderr_out || !stats)))
        return FC_EINVAL;
    for (g = 0; g < n_games; g++) {
        const int64_t off = g << m;
        table_t game = {t.f64 ? t.f64 + off : 0, t.f32 ? t.f32 + off : 0};
        estimate(game, m, fc_rng_key(seed, (uint64_t)(first_game + g)), max_walks, budget,
                 antithetic, cache_endpoints, tol, min_samples, values + g * m,
                 stderr_out + g * m, stats + g * FC_STATS);
    }
    return FC_OK;
}

/* The two public entry points differ only in the table's element type. */
#define PERMUTATION_SHAPLEY(SFX, REAL, F64, F32)                                     \
    int fc_permutation_shapley##SFX(const REAL *v, int64_t n_games, int m,           \
                                    uint64_t seed, int64_t first_game,               \
                                    int64_t max_walks, int64_t budget,               \
                                    int antithetic, int cache_endpoints,             \
                                    double tol, int64_t min_samples,                 \
                                    double *values, double *stderr_out,              \
                                    int64_t *stats)                                  \
    {                                                                                \
        table_t t;                                                                   \
        t.f64 = F64;                                                                 \
        t.f32 = F32;                                                                 \
        if (n_games > 0 && !v) return FC_EINVAL;                                     \
        return estimate_games(t, n_games, m, seed, first_game, max_walks, budget,    \
                              antithetic, cache_endpoints, tol, min_samples, values, \
                              stderr_out, stats);                                    \
    }

PERMUTATION_SHAPLEY(_f64, double, v, 0)
PERMUTATION_SHAPLEY(_f32, float, 0, v)

int fc_sampling_tree_permutations(uint64_t seed, uint64_t game, int64_t first_unit,
                                  int64_t n_units, int m, const int64_t *children,
                                  int32_t *perms)
{
    const uint64_t game_key = fc_rng_key(seed, game);
    const int64_t rows = (int64_t)m - 1;
    int64_t *size, *start, *joined;
    int64_t r, u;
    if (m < 1 || m > FC_SAMPLING_MAX_PLAYERS || first_unit < 0 || n_units < 0 ||
        first_unit > INT64_MAX - n_units || (n_units > 0 && !perms) || (m > 1 && !children))
        return FC_EINVAL;
    if (m == 1) {
        for (u = 0; u < n_units; u++) perms[u] = 0;
        return FC_OK;
    }
    size = malloc((size_t)(4 * m - 3) * sizeof *size);
    if (!size) return FC_ENOMEM;
    start = size + rows;
    joined = start + rows;       /* 2m - 1 flags, one per node */
    for (r = 0; r < 2 * rows + 1; r++) joined[r] = 0;
    for (r = 0; r < rows; r++) {
        const int64_t a = children[2 * r], b = children[2 * r + 1];
        if (a < 0 || b < 0 || a >= m + r || b >= m + r || a == b || joined[a] || joined[b]) {
            free(size);
            return FC_EINVAL;
        }
        joined[a] = joined[b] = 1;
        size[r] = (a < m ? 1 : size[a - m]) + (b < m ? 1 : size[b - m]);
    }
    for (u = 0; u < n_units; u++) {
        uint64_t state = fc_rng_key(game_key, (uint64_t)(first_unit + u));
        int32_t *perm = perms + u * m;
        start[rows - 1] = 0;
        for (r = rows - 1; r >= 0; r--) {
            const int swap = (int)(fc_rng_next(&state) >> 63);
            const int64_t first = children[2 * r + swap], second = children[2 * r + 1 - swap];
            const int64_t at = start[r] + (first < m ? 1 : size[first - m]);
            if (first < m) perm[start[r]] = (int32_t)first;
            else start[first - m] = start[r];
            if (second < m) perm[at] = (int32_t)second;
            else start[second - m] = at;
        }
    }
    free(size);
    return FC_OK;
}

/* The slot of `key` (nonzero) in a set of 2^bits slots (open addressing,
 * linear probing, 0 = empty): where it is, or the empty slot it would take. */
static uint64_t set_slot(const uint64_t *slots, int bits, uint64_t key)
{
    const uint64_t last = ((uint64_t)1 << bits) - 1;
    uint64_t i = (key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits);
    while (slots[i] && slots[i] != key) i = (i + 1) & last;
    return i;
}

static int compare_masks(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int fc_affordable_pairs(const int32_t *perms, int64_t n_rows, int64_t n_pairs, int k,
                        int64_t max_evals, int64_t capacity, int64_t *pairs, int64_t *counts,
                        uint64_t *masks)
{
    const int width = 2 * (k - 1);
    /* a bit per coalition up to FC_AFFORDABLE_DENSE_PLAYERS (the coalitions
     * then come out sorted by a scan of its words), else a hash set of them
     * (sorted at the end) */
    const int dense = k <= FC_AFFORDABLE_DENSE_PLAYERS;
    uint64_t keys[2 * (FC_MASKED_MAX_FEATURES - 1)], full, *slots;
    int64_t need, r, p, i, n_slots;
    int bits = 2, j;
    if (k < 2 || k > FC_MASKED_MAX_FEATURES || n_rows < 0 || n_pairs < 0 || max_evals < 2 ||
        (n_rows > 0 && (!perms || !pairs || !counts || !masks)))
        return FC_EINVAL;
    need = n_pairs > (max_evals - 2) / width ? max_evals : 2 + width * n_pairs;
    if (capacity < need) return FC_EINVAL;
    full = k == 64 ? ~(uint64_t)0 : ((uint64_t)1 << k) - 1;
    for (r = 0; r < n_rows * n_pairs; r++) {
        uint64_t seen = 0;
        for (j = 0; j < k; j++) {
            const int32_t player = perms[r * k + j];
            if (player < 0 || player >= k || (seen >> player & 1)) return FC_EINVAL;
            seen |= (uint64_t)1 << player;
        }
    }
    if (n_rows == 0) return FC_OK;
    if (need > (int64_t)1 << 60) return FC_ENOMEM;
    /* the hash set holds at most need - 2 coalitions: at most half its slots */
    while (((int64_t)1 << bits) < 2 * need) bits++;
    n_slots = dense ? ((int64_t)1 << k) / 64 + 1 : (int64_t)1 << bits;
    slots = calloc((size_t)n_slots, sizeof *slots);
    if (!slots) return FC_ENOMEM;
    for (r = 0; r < n_rows; r++) {
        const int32_t *order = perms + r * n_pairs * k;
        uint64_t *out = masks + r * capacity;
        int64_t count = 1;
        out[0] = 0;
        for (p = 0; p < n_pairs; p++, order += k) {
            uint64_t prefix = 0;
            int fresh = 0;
            for (j = 0; j < k - 1; j++) {
                prefix |= (uint64_t)1 << order[j];
                keys[j] = prefix;
                keys[k - 1 + j] = prefix ^ full;
            }
            if (dense) {
                for (j = 0; j < width; j++) fresh += !(slots[keys[j] >> 6] >> (keys[j] & 63) & 1);
                if (count + fresh + 1 > max_evals) break;
                for (j = 0; j < width; j++) slots[keys[j] >> 6] |= (uint64_t)1 << (keys[j] & 63);
                count += fresh;
            } else {
                for (j = 0; j < width; j++) fresh += !slots[set_slot(slots, bits, keys[j])];
                if (count + fresh + 1 > max_evals) break;
                for (j = 0; j < width; j++) {
                    const uint64_t at = set_slot(slots, bits, keys[j]);
                    if (!slots[at]) slots[at] = out[count++] = keys[j];
                }
            }
        }
        if (dense) {
            /* the coalitions in increasing order, the set emptied for the next row */
            int64_t at = 1;
            for (i = 0; i < n_slots; i++) {
                for (; slots[i]; slots[i] &= slots[i] - 1)
                    out[at++] = (uint64_t)i << 6 | (uint64_t)ctz64(slots[i]);
            }
        } else {
            qsort(out + 1, (size_t)(count - 1), sizeof *out, compare_masks);
            memset(slots, 0, (size_t)n_slots * sizeof *slots);
        }
        out[count++] = full;
        pairs[r] = p;
        counts[r] = count;
        for (i = count; i < capacity; i++) out[i] = UINT64_MAX;
    }
    free(slots);
    return FC_OK;
}

int fc_masked_rows(const double *background, int64_t n_b, int m, const double *xs,
                   int64_t n_x, const uint64_t *masks, const int64_t *owner,
                   int64_t n_coalitions, double *rows)
{
    const uint64_t beyond = m < 64 ? ~(((uint64_t)1 << m) - 1) : 0;
    int64_t c, b;
    if (m < 1 || m > FC_MASKED_MAX_FEATURES || n_b < 1 || n_x < 1 || n_coalitions < 0 ||
        (n_coalitions > 0 && (!background || !xs || !masks || !owner || !rows)))
        return FC_EINVAL;
    for (c = 0; c < n_coalitions; c++)
        if ((masks[c] & beyond) || owner[c] < 0 || owner[c] >= n_x) return FC_EINVAL;
    /* each coalition's n_b rows: the background copied, then x's value
     * written down each kept column (cheaper than a select per value when
     * the rows are short, as shap's are), the kept columns found bit by bit
     * of the mask rather than by a test of every column, whose outcome a
     * random mask makes unpredictable (3,000 coalitions of 10 x 10 values:
     * 150 -> 86 us, AMD EPYC Zen 4) */
    for (c = 0; c < n_coalitions; c++) {
        const double *x = xs + owner[c] * m;
        double *out = rows + c * n_b * m;
        uint64_t kept;
        memcpy(out, background, (size_t)(n_b * m) * sizeof *out);
        for (kept = masks[c]; kept; kept &= kept - 1) {
            const int j = ctz64(kept);
            const double value = x[j];
            for (b = 0; b < n_b; b++) out[b * m + j] = value;
        }
    }
    return FC_OK;
}

int fc_background_mean(const double *outputs, int64_t n_coalitions, int64_t n_b, int64_t k,
                       const double *weights, double *means)
{
    int64_t c, b, o;
    if (n_coalitions < 0 || n_b < 1 || k < 1 ||
        (n_coalitions > 0 && (!outputs || !means)))
        return FC_EINVAL;
    /* each sum in a register (summed through means[], every add waited for
     * the store before it); different coalitions' sums overlap */
    for (c = 0; c < n_coalitions; c++) {
        const double *rows = outputs + c * n_b * k;
        for (o = 0; o < k; o++) {
            double sum = weights ? weights[0] * rows[o] : rows[o];
            if (weights)
                for (b = 1; b < n_b; b++) sum += weights[b] * rows[b * k + o];
            else
                for (b = 1; b < n_b; b++) sum += rows[b * k + o];
            means[c * k + o] = weights ? sum : sum / (double)n_b;
        }
    }
    return FC_OK;
}
