/* approximators.c - drawing and folding of the approximator family; see
 * approximators.h. */
#include "fastcredit.h"

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

int fc_approx_fold_svarm(const uint64_t *masks, const double *values, int64_t n, int m,
                         double centre, int64_t *count, double *first, double *s1,
                         double *s2)
{
    int64_t k;
    int i;
    if (m < 1 || m > FC_APPROX_MAX_PLAYERS || n < 0 || (n > 0 && (!masks || !values)) ||
        !count || !first || !s1 || !s2)
        return FC_EINVAL;
    if (m < 64)
        for (k = 0; k < n; k++)
            if (masks[k] >> m) return FC_EINVAL;
    for (k = 0; k < n; k++) {
        const uint64_t mask = masks[k];
        const int l = popcount64(mask);
        const double x = values[k] - centre;
        for (i = 0; i < m; i++) {
            const int in = (int)(mask >> i & 1);
            fold(((int64_t)i * (m + 1) + l) * 2 + in, x, count, first, s1, s2);
        }
    }
    return FC_OK;
}
