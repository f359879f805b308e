/* audit.c - credit audits and attribution statistics; see audit.h. */
#include <math.h>
#include <string.h>
#include "fastcredit.h"
#include "internal.h"

/* Item indices in [0, n) from draws first .. first + count - 1 of the stream
 * with state `key`, two per 64-bit draw: out[2c] from its high 32 bits,
 * out[2c + 1] from its low 32 bits, each as (bits * n) >> 32. */
static FC_CLONES void draw_index_pairs(uint64_t key, uint64_t first, int64_t count,
                                       uint64_t n, uint32_t *out)
{
    int64_t c;
    for (c = 0; c < count; c++) {
        const uint64_t z = fc_mix64(key + (first + (uint64_t)c + 1) * FC_RNG_GOLDEN);
        out[2 * c] = (uint32_t)(((z >> 32) * n) >> 32);
        out[2 * c + 1] = (uint32_t)(((z & 0xFFFFFFFFu) * n) >> 32);
    }
}

/* counts[i] = how often resample `key` draws item i: n draws with
 * replacement, two per stream item, in blocks. */
static void tally_resample(uint64_t key, int64_t n, int32_t *counts)
{
    uint32_t idx[2 * FC_BOOTSTRAP_DRAW_BLOCK];
    const int64_t draws = (n + 1) / 2;
    int64_t c, j;
    memset(counts, 0, (size_t)n * sizeof(int32_t));
    for (c = 0; c < draws; c += FC_BOOTSTRAP_DRAW_BLOCK) {
        const int64_t block =
            draws - c < FC_BOOTSTRAP_DRAW_BLOCK ? draws - c : FC_BOOTSTRAP_DRAW_BLOCK;
        const int64_t used = 2 * c + 2 * block > n ? n - 2 * c : 2 * block;
        draw_index_pairs(key, (uint64_t)c, block, (uint64_t)n, idx);
        for (j = 0; j < used; j++) counts[idx[j]]++;
    }
}

/* The value at order statistic k of the tallied draws (counts per item,
 * visited in sorted order), continuing a scan at *pos with *seen draws below. */
static double order_statistic(const double *sorted, const int64_t *order,
                              const int32_t *counts, int64_t k, int64_t *pos, int64_t *seen)
{
    while (*seen + counts[order[*pos]] <= k) {
        *seen += counts[order[*pos]];
        (*pos)++;
    }
    return sorted[*pos];
}

static double tallied_median(const double *sorted, const int64_t *order,
                             const int32_t *counts, int64_t n)
{
    int64_t pos = 0, seen = 0;
    const double lo = order_statistic(sorted, order, counts, (n - 1) / 2, &pos, &seen);
    if (n % 2) return lo;
    return 0.5 * (lo + order_statistic(sorted, order, counts, n / 2, &pos, &seen));
}

int fc_bootstrap_median(const double *sorted_a, const int64_t *order_a,
                        const double *sorted_b, const int64_t *order_b, int64_t n,
                        uint64_t seed, int64_t start, int64_t stop,
                        int32_t *counts, double *out)
{
    int64_t r;
    if (n < 1 || n > FC_BOOTSTRAP_MAX_ITEMS || start < 0 || stop < start || !sorted_a ||
        !order_a || (sorted_b && !order_b) || !counts || (stop > start && !out))
        return FC_EINVAL;
    for (r = start; r < stop; r++) {
        const uint64_t key = fc_rng_key(seed, (uint64_t)r);
        tally_resample(key, n, counts);
        out[r - start] = tallied_median(sorted_a, order_a, counts, n);
        if (sorted_b) out[r - start] -= tallied_median(sorted_b, order_b, counts, n);
    }
    return FC_OK;
}

/* Mean of n draws with replacement from x[0..n). */
static double resampled_mean(const double *x, int64_t n, uint64_t *state)
{
    double s = 0.0;
    int64_t j;
    for (j = 0; j < n; j++) s += x[fc_rng_below(state, (uint64_t)n)];
    return s / (double)n;
}

int fc_bootstrap_mean_diff(const int64_t *offsets, const double *a_values,
                           int64_t n_groups, const double *b_values, int64_t n_b,
                           int64_t resamples, uint64_t seed, uint64_t first_item,
                           double *out)
{
    int64_t g, r;
    if (!csr_offsets_ok(offsets, n_groups) || resamples < 0 || n_b < 0 ||
        n_b > FC_RNG_MAX_RANGE || (n_b > 0 && !b_values) ||
        (n_groups > 0 && resamples > 0 && (!a_values || !out)))
        return FC_EINVAL;
    for (g = 0; g < n_groups; g++) {
        const int64_t len = offsets[g + 1] - offsets[g];
        if (len < 1 || len > FC_RNG_MAX_RANGE) return FC_EINVAL;
    }
    for (g = 0; g < n_groups; g++) {
        const int64_t len = offsets[g + 1] - offsets[g];
        const double *a = a_values + offsets[g];
        uint64_t state = fc_rng_key(seed, first_item + (uint64_t)g);
        for (r = 0; r < resamples; r++) {
            const double ma = resampled_mean(a, len, &state);
            out[g * resamples + r] = n_b ? ma - resampled_mean(b_values, n_b, &state) : ma;
        }
    }
    return FC_OK;
}

/* Heap sort of x[0..n) ascending: the selection's fallback. */
static void heap_sort(double *x, int64_t n)
{
    int64_t i, end, root, j;
    for (i = n / 2 - 1, end = n; end > 1; ) {
        double v;
        if (i >= 0) {
            root = i--;
        } else {
            v = x[0];
            x[0] = x[--end];
            x[end] = v;
            root = 0;
        }
        v = x[root];
        while ((j = 2 * root + 1) < end) {
            if (j + 1 < end && x[j + 1] > x[j]) j++;
            if (x[j] <= v) break;
            x[root] = x[j];
            root = j;
        }
        x[root] = v;
    }
}

/* Moves the values below p in x[lo..hi) first (or, with upto, those <= p),
 * branch-free: every value is swapped with the boundary's. Returns the
 * boundary. */
static FC_CLONES int64_t partition_by(double *x, int64_t lo, int64_t hi, double p, int upto)
{
    int64_t i, store = lo;
    if (upto) {
        for (i = lo; i < hi; i++) {
            const double v = x[i];
            x[i] = x[store];
            x[store] = v;
            store += v <= p;
        }
    } else {
        for (i = lo; i < hi; i++) {
            const double v = x[i];
            x[i] = x[store];
            x[store] = v;
            store += v < p;
        }
    }
    return store;
}

/* Upper bounds of the partitions a row's selections leave, kept for its
 * next query (more are dropped: a bound only narrows the next range). */
#define SELECT_BOUNDS 64

/* Puts the k-th smallest of x[lo..hi) (no NaN) at k, the smaller ones
 * before it and the larger after. Each round partitions around the median
 * of three into < p, == p, > p (the second pass only when k is not below
 * p), so ties cannot stall it; past `rounds` rounds the rest is sorted.
 * Each upper end the range shrinks to (above k) is pushed on
 * bounds[0..depth), which decrease: everything from a bound on is at least
 * everything before it. Returns the new depth. */
static int select_kth(double *x, int64_t lo, int64_t hi, int64_t k, int rounds,
                      int64_t *bounds, int depth)
{
    while (hi - lo > 1) {
        const double a = x[lo], b = x[lo + (hi - lo) / 2], c = x[hi - 1];
        const double p = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int64_t below;
        if (rounds-- == 0) {
            heap_sort(x + lo, hi - lo);
            break;
        }
        below = partition_by(x, lo, hi, p, 0);
        if (k < below) {
            hi = below;
            if (depth < SELECT_BOUNDS) bounds[depth++] = below;
            continue;
        }
        lo = partition_by(x, below, hi, p, 1);
        if (k < lo) {
            /* k in the run equal to p: its end bounds the next query */
            if (lo < hi && depth < SELECT_BOUNDS) bounds[depth++] = lo;
            break;
        }
    }
    return depth;
}

/* Puts the k-th smallest of row x[0..n) in place, for queries k that
 * increase: the range searched starts after the last query's k (*done) or
 * at the highest bound at most k, and ends at the lowest bound above k. */
static void order_stat(double *x, int64_t n, int64_t k, int rounds, int64_t *bounds,
                       int *depth, int64_t *done)
{
    int64_t lo = *done;
    while (*depth > 0 && bounds[*depth - 1] <= k) lo = bounds[--*depth];
    *depth = select_kth(x, lo, *depth > 0 ? bounds[*depth - 1] : n, k, rounds, bounds, *depth);
    *done = k + 1;
}

/* numpy's _lerp */
static double lerp(double a, double b, double t)
{
    const double d = b - a;
    return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

int fc_percentile_interval(double *reps, int64_t n_rows, int64_t n, double shift,
                           double q_low, double q_high, double *low, double *high)
{
    int64_t g, i;
    int rounds = 8;
    if (n_rows < 0 || n < 1 || !(0.0 <= q_low && q_low <= q_high && q_high <= 1.0) ||
        (n_rows > 0 && (!reps || !low || !high)))
        return FC_EINVAL;
    for (i = n; i > 1; i >>= 1) rounds += 2;
    for (g = 0; g < n_rows; g++) {
        double *x = reps + g * n;
        const double q[2] = {q_low, q_high};
        double res[2];
        int64_t bounds[SELECT_BOUNDS], done = 0, last = -1, s;
        int depth = 0, nan = 0;
        for (i = 0; i < n; i++) {
            x[i] -= shift;
            nan |= x[i] != x[i];
        }
        for (s = 0; s < 2 && !nan; s++) {
            const double v = (double)(n - 1) * q[s];
            const double j = floor(v);
            /* at v >= n - 1 numpy takes the largest twice, with t = v + 1 */
            const int64_t at = v >= (double)(n - 1) ? n - 1 : (int64_t)j;
            const int64_t next = at + 1 < n ? at + 1 : n - 1;
            const double t = v >= (double)(n - 1) ? v + 1.0 : v - j;
            double a;
            /* a position up to the last one queried is in place: the
             * queries go at, at + 1 (or n - 1 twice), and the high
             * quantile's at is at least the low one's */
            if (at > last) order_stat(x, n, at, rounds, bounds, &depth, &done);
            a = x[at];
            if (next > at && next > last) order_stat(x, n, next, rounds, bounds, &depth, &done);
            last = next;
            res[s] = lerp(a, x[next], t);
        }
        low[g] = nan ? NAN : res[0];
        high[g] = nan ? NAN : res[1];
    }
    return FC_OK;
}

/* Restores the max-heap order of (keys, idx)[root..end) below root. */
static void sift_down(double *keys, int64_t *idx, int64_t root, int64_t end)
{
    const double kv = keys[root];
    const int64_t ki = idx[root];
    int64_t j;
    while ((j = 2 * root + 1) < end) {
        if (j + 1 < end && keys[j + 1] > keys[j]) j++;
        if (keys[j] <= kv) break;
        keys[root] = keys[j];
        idx[root] = idx[j];
        root = j;
    }
    keys[root] = kv;
    idx[root] = ki;
}

/* Heap sort of keys[0..n) ascending, carrying idx along (any order among
 * equal keys). */
static void sort_keys(double *keys, int64_t *idx, int64_t n)
{
    int64_t i;
    for (i = n / 2 - 1; i >= 0; i--) sift_down(keys, idx, i, n);
    for (i = n - 1; i > 0; i--) {
        const double kv = keys[0];
        const int64_t ki = idx[0];
        keys[0] = keys[i];
        idx[0] = idx[i];
        keys[i] = kv;
        idx[i] = ki;
        sift_down(keys, idx, 0, i);
    }
}

/* Average ranks of a short x by counting: rank_i = 1 + #{x_j < x_i} +
 * (#{x_j == x_i} - 1) / 2, branch-free so the O(n^2) loop vectorises. */
static FC_CLONES int64_t counted_ranks(const double *x, int64_t n, double *ranks)
{
    int64_t i, j, ties_of_first = 0;
    for (i = 0; i < n; i++) {
        int64_t less = 0, equal = 0;
        for (j = 0; j < n; j++) {
            less += x[j] < x[i];
            equal += x[j] == x[i];
        }
        ranks[i] = 0.5 * (double)(2 * less + equal + 1);
        if (i == 0) ties_of_first = equal;
    }
    return ties_of_first;
}

/* Average 1-based ranks of x[0..n) into ranks, with keys and idx scratch of
 * n each; returns 1 if x is constant. The two methods give the same ranks:
 * both are exact half-integers. */
static int average_ranks(const double *x, int64_t n, double *keys, int64_t *idx,
                         double *ranks)
{
    int64_t i, lo, hi;
    if (n <= FC_SPEARMAN_COUNTING_MAX) return counted_ranks(x, n, ranks) == n;
    for (i = 0; i < n; i++) {
        keys[i] = x[i];
        idx[i] = i;
    }
    sort_keys(keys, idx, n);
    for (lo = 0; lo < n; lo = hi) {
        double r;
        for (hi = lo + 1; hi < n && keys[hi] == keys[lo]; hi++) {}
        r = 0.5 * (double)(lo + hi - 1) + 1.0;
        for (i = lo; i < hi; i++) ranks[idx[i]] = r;
    }
    return keys[0] == keys[n - 1];
}

/* The Spearman rho of x[0..n) against y[0..n) into *rho (NaN unless
 * valid), and its FC_SPEARMAN_* status; idx (n) and ranks (3 n) scratch. */
static int spearman_group(const double *x, const double *y, int64_t n, int64_t min_len,
                          int64_t *idx, double *ranks, double *rho)
{
    double *rx = ranks, *ry = ranks + n, *keys = ranks + 2 * n;
    double c, sxy = 0.0, sxx = 0.0, syy = 0.0;
    int64_t i;
    int finite = 1;
    *rho = NAN;
    if (n < min_len) return FC_SPEARMAN_SHORT;
    for (i = 0; i < n; i++) finite &= isfinite(x[i]) && isfinite(y[i]);
    if (!finite) return FC_SPEARMAN_NONFINITE;
    if (average_ranks(y, n, keys, idx, ry)) return FC_SPEARMAN_CONSTANT;
    if (average_ranks(x, n, keys, idx, rx)) {
        *rho = 0.0;
        return FC_SPEARMAN_VALID;
    }
    c = 0.5 * (double)(n + 1);
    for (i = 0; i < n; i++) {
        const double dx = rx[i] - c, dy = ry[i] - c;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    *rho = sxy / sqrt(sxx * syy);
    return FC_SPEARMAN_VALID;
}

int fc_spearman_groups(const int64_t *offsets, int64_t n_groups, const double *x,
                       const double *y, int64_t min_len, int64_t *idx,
                       double *ranks, double *rho, int8_t *status)
{
    int64_t g, longest = 0;
    if (!csr_offsets_ok(offsets, n_groups) || min_len < 2 ||
        (n_groups > 0 && (!rho || !status)))
        return FC_EINVAL;
    for (g = 0; g < n_groups; g++)
        if (offsets[g + 1] - offsets[g] > longest) longest = offsets[g + 1] - offsets[g];
    if (longest > 0 && (!x || !y || !idx || !ranks)) return FC_EINVAL;
    for (g = 0; g < n_groups; g++)
        status[g] = (int8_t)spearman_group(x + offsets[g], y + offsets[g],
                                           offsets[g + 1] - offsets[g], min_len, idx, ranks,
                                           &rho[g]);
    return FC_OK;
}

int fc_shuffle_groups(const int64_t *offsets, int64_t n_groups, const double *x,
                      uint64_t seed, uint64_t first_item, double *out)
{
    int64_t g, j;
    if (!csr_offsets_ok(offsets, n_groups)) return FC_EINVAL;
    for (g = 0; g < n_groups; g++)
        if (offsets[g + 1] - offsets[g] > FC_RNG_MAX_RANGE) return FC_EINVAL;
    if (n_groups > 0 && offsets[n_groups] > offsets[0] && (!x || !out)) return FC_EINVAL;
    for (g = 0; g < n_groups; g++) {
        const int64_t n = offsets[g + 1] - offsets[g];
        double *o = out + offsets[g];
        uint64_t state = fc_rng_key(seed, first_item + (uint64_t)g);
        memcpy(o, x + offsets[g], (size_t)n * sizeof(double));
        for (j = n - 1; j > 0; j--) {
            const int64_t k = (int64_t)fc_rng_below(&state, (uint64_t)(j + 1));
            const double t = o[j];
            o[j] = o[k];
            o[k] = t;
        }
    }
    return FC_OK;
}

int fc_derangement(int64_t n, uint64_t seed, int64_t *out)
{
    uint64_t attempt;
    if (n < 2 || n > FC_RNG_MAX_RANGE || !out) return FC_EINVAL;
    for (attempt = 0;; attempt++) {
        uint64_t state = fc_rng_key(seed, attempt);
        int64_t i, j;
        for (i = 0; i < n; i++) out[i] = i;
        for (j = n - 1; j > 0; j--) {
            const int64_t k = (int64_t)fc_rng_below(&state, (uint64_t)(j + 1));
            const int64_t t = out[j];
            out[j] = out[k];
            out[k] = t;
            if (out[j] == j) break;
        }
        if (j == 0 && out[0] != 0) return FC_OK;
    }
}

/* Mean of x[0..n) (n >= 1) and whether every value is the bound `edge`
 * of a binary outcome: all 0, or all 1. */
static double arm_mean(const double *x, int64_t n, int *at_edge, double *edge)
{
    double s = 0.0;
    int64_t i;
    *edge = x[0];
    *at_edge = x[0] == 0.0 || x[0] == 1.0;
    for (i = 0; i < n; i++) {
        s += x[i];
        *at_edge &= x[i] == x[0];
    }
    return s / (double)n;
}

int fc_replay_advantage(const int64_t *f_offsets, const double *f_values,
                        const int64_t *a_offsets, const double *a_values,
                        int64_t n_steps, double alpha, double threshold, double *advantage,
                        double *noise, double *resolution, uint8_t *critical, int64_t *bad)
{
    int64_t t, i;
    if (bad) *bad = -1;
    if (n_steps < 0 || !f_offsets || !a_offsets || !(alpha > 0.0 && alpha < 1.0) ||
        !(threshold >= 0.0) ||
        (n_steps > 0 && (!f_values || !a_values || !advantage || !noise || !resolution ||
                         !critical)))
        return FC_EINVAL;
    /* both arms' offsets in one pass, before anything is written */
    for (t = 0; t < n_steps; t++)
        if (f_offsets[t + 1] <= f_offsets[t] || a_offsets[t + 1] <= a_offsets[t] ||
            (t == 0 && (f_offsets[0] < 0 || a_offsets[0] < 0))) {
            if (bad) *bad = t;
            return FC_EINVAL;
        }
    for (t = 0; t < n_steps; t++) {
        const int64_t nf = f_offsets[t + 1] - f_offsets[t], na = a_offsets[t + 1] - a_offsets[t];
        const double *f = f_values + f_offsets[t];
        int f_edge, a_edge;
        double f_at, a_at;
        const double mf = arm_mean(f, nf, &f_edge, &f_at);
        const double ma = arm_mean(a_values + a_offsets[t], na, &a_edge, &a_at);
        double ss = 0.0;
        for (i = 0; i < nf; i++) ss += (f[i] - mf) * (f[i] - mf);
        advantage[t] = mf - ma;
        critical[t] = fabs(mf - ma) > threshold;
        noise[t] = nf > 1 ? sqrt(ss / (double)(nf - 1)) : NAN;
        resolution[t] = f_edge && a_edge && f_at == a_at
                            ? 1.0 - pow(alpha, 1.0 / (double)(nf < na ? nf : na)) : NAN;
    }
    return FC_OK;
}

/* Average ranks of the tallied draws, item by item (see
 * fc_bootstrap_spearman_diff); items drawn 0 times get their run's rank. */
static void tallied_ranks(const double *sorted, const int64_t *order, const int32_t *counts,
                          int64_t n, double *ranks)
{
    int64_t p = 0, q, seen = 0;
    while (p < n) {
        int64_t total = 0;
        double rank;
        for (q = p; q < n && sorted[q] == sorted[p]; q++) total += counts[order[q]];
        rank = (double)seen + (double)(total + 1) * 0.5;
        for (; p < q; p++) ranks[order[p]] = rank;
        seen += total;
    }
}

int fc_bootstrap_spearman_diff(const double *sorted_x, const int64_t *order_x,
                               const double *sorted_y, const int64_t *order_y,
                               const double *sorted_z, const int64_t *order_z, int64_t n,
                               uint64_t seed, int64_t start, int64_t stop, int32_t *counts,
                               double *ranks, double *out)
{
    int64_t r, i;
    if (n < 1 || n > FC_BOOTSTRAP_MAX_ITEMS || start < 0 || stop < start || !sorted_x ||
        !order_x || !sorted_y || !order_y || !sorted_z || !order_z || !counts || !ranks ||
        (stop > start && !out))
        return FC_EINVAL;
    for (r = start; r < stop; r++) {
        const uint64_t key = fc_rng_key(seed, (uint64_t)r);
        const double mid = (double)(n + 1) * 0.5;
        double *rx = ranks, *ry = ranks + n, *rz = ranks + 2 * n;
        double sxx = 0.0, syy = 0.0, szz = 0.0, sxz = 0.0, syz = 0.0, rho_x, rho_y;
        tally_resample(key, n, counts);
        tallied_ranks(sorted_x, order_x, counts, n, rx);
        tallied_ranks(sorted_y, order_y, counts, n, ry);
        tallied_ranks(sorted_z, order_z, counts, n, rz);
        for (i = 0; i < n; i++) {
            const double w = (double)counts[i];
            const double dx = rx[i] - mid, dy = ry[i] - mid, dz = rz[i] - mid;
            sxx += w * dx * dx;
            syy += w * dy * dy;
            szz += w * dz * dz;
            sxz += w * dx * dz;
            syz += w * dy * dz;
        }
        if (szz == 0.0) {
            out[r - start] = NAN;
            continue;
        }
        rho_x = sxx == 0.0 ? 0.0 : sxz / sqrt(sxx * szz);
        rho_y = syy == 0.0 ? 0.0 : syz / sqrt(syy * szz);
        out[r - start] = rho_x - rho_y;
    }
    return FC_OK;
}

/* #{e : sign[e] != 0 and the sign of audit[e] + s * resid[e] beyond atol is
 * sign[e]}: for sign[e] in {-1, +1} that is sign[e] * x > atol (an exact
 * negation), and 0 > atol is false; branch-free so it vectorises. With
 * `count` non-NULL, *count = #{e : sign[e] != 0 and |x| > atol}. */
static FC_CLONES int32_t signed_hits(const double *audit, const int8_t *sign,
                                     const double *resid, double s, double atol, int64_t len,
                                     int32_t *count)
{
    int32_t hits = 0, counted = 0;
    int64_t e;
    for (e = 0; e < len; e++) {
        const double x = audit[e] + s * resid[e];
        const double sg = (double)sign[e];
        hits += sg * x > atol;
        counted += (sign[e] != 0) & ((x > atol) | (x < -atol));
    }
    if (count) *count = counted;
    return hits;
}

int fc_null_worlds(int64_t n, int64_t n_edges, int64_t n_pairs, int64_t n_players,
                   const double *scale, const double *edge_audit, const int8_t *edge_sign,
                   const double *edge_resid, const double *pair_audit,
                   const int8_t *pair_sign, const double *pair_resid,
                   const double *phi_audit, const double *phi_resid, double atol,
                   uint64_t seed, int64_t start, int64_t stop, int32_t *edge_hits,
                   int32_t *pair_hits, int32_t *pair_count, double *cosine)
{
    int64_t w, r, i;
    if (n < 2 || n - 1 > FC_RNG_MAX_RANGE || n_edges < 0 || n_pairs < 0 || n_players < 1 ||
        !(atol >= 0.0) || start < 0 || stop < start || !scale || !edge_audit ||
        !edge_sign || !edge_resid || !pair_audit || !pair_sign || !pair_resid ||
        !phi_audit || !phi_resid || (stop > start && (!edge_hits || !pair_hits ||
                                                     !pair_count || !cosine)))
        return FC_EINVAL;
    for (w = start; w < stop; w++) {
        uint64_t state = fc_rng_key(seed, (uint64_t)w);
        for (r = 0; r < n; r++) {
            const int64_t o = (w - start) * n + r;
            int64_t d = (int64_t)fc_rng_below(&state, (uint64_t)(n - 1));
            const double s = scale[r];
            const double *ea = edge_audit + r * n_edges, *er = edge_resid;
            const double *pa = pair_audit + r * n_pairs, *pr;
            const double *fa = phi_audit + r * n_players, *fr;
            const int8_t *es = edge_sign + r * n_edges, *ps = pair_sign + r * n_pairs;
            int32_t hits = 0, phits = 0, pcount = 0;
            double tt = 0.0, ta = 0.0, aa = 0.0;
            if (d >= r) d++;
            er = edge_resid + d * n_edges;
            pr = pair_resid + d * n_pairs;
            fr = phi_resid + d * n_players;
            hits = signed_hits(ea, es, er, s, atol, n_edges, NULL);
            phits = signed_hits(pa, ps, pr, s, atol, n_pairs, &pcount);
            for (i = 0; i < n_players; i++) {
                const double t = fa[i] + s * fr[i];
                tt += t * t;
                ta += t * fa[i];
                aa += fa[i] * fa[i];
            }
            edge_hits[o] = hits;
            pair_hits[o] = phits;
            pair_count[o] = pcount;
            cosine[o] = aa == 0.0 ? NAN : (tt == 0.0 ? 0.0 : ta / sqrt(tt * aa));
        }
    }
    return FC_OK;
}

/* x[0..m) with the values within atol of 0 set to 0, then each run of its
 * sorted values whose gaps are at most atol set to the run's smallest value
 * (ties chain); NaN stays NaN (its own run). keys and idx: scratch of m. The
 * runs do not depend on the order among equal keys, so the heap sort
 * serves. */
static void tie_values(double *x, int64_t m, double atol, double *keys, int64_t *idx)
{
    int64_t i, k = 0, lo, hi;
    for (i = 0; i < m; i++) {
        if (fabs(x[i]) <= atol) x[i] = 0.0;
        if (!isnan(x[i])) {
            keys[k] = x[i];
            idx[k++] = i;
        }
    }
    sort_keys(keys, idx, k);
    for (lo = 0; lo < k; lo = hi)
        for (hi = lo + 1; hi < k && keys[hi] - keys[hi - 1] <= atol; hi++)
            x[idx[hi]] = keys[lo];
}

/* The first index of the largest of x[0..m), or of the first NaN (as
 * numpy.argmax). Branch-free (selects, no early exit): the values of random
 * credit rows would mispredict every comparison. */
static int64_t first_argmax(const double *x, int64_t m)
{
    int64_t i, best = 0;
    double top = x[0];
    for (i = 1; i < m; i++) {
        const int up = !(x[i] <= top) & (top == top);   /* a NaN top stays */
        best = up ? i : best;
        top = up ? x[i] : top;
    }
    return best;
}

static int sign_of(double x) { return (x > 0.0) - (x < 0.0); }

int fc_alignment_rows(int64_t n, int64_t m, const double *credit, const double *reference,
                      int center, double atol, double *work, int64_t *idx, double *cosine,
                      double *sign, double *sign_nonzero, double *spearman, uint8_t *top,
                      uint8_t *defined)
{
    int64_t g, i;
    double *c = work, *r = work + m, *ranks = work + 2 * m;
    if (n < 0 || m < 2 || !(atol >= 0.0) || isinf(atol)) return FC_EINVAL;
    if (n > 0 && (!credit || !reference || !work || !idx || !cosine || !sign ||
                  !sign_nonzero || !spearman || !top || !defined))
        return FC_EINVAL;
    for (g = 0; g < n; g++) {
        const double *cg = credit + g * m, *rg = reference + g * m;
        double mean_c = 0.0, mean_r = 0.0, dot = 0.0, cc = 0.0, rr = 0.0;
        int64_t same = 0, nonzero = 0, hits = 0;
        int constant_c = 1, constant_r = 1;
        if (center) {
            for (i = 0; i < m; i++) {
                mean_c += cg[i];
                mean_r += rg[i];
            }
            mean_c /= (double)m;
            mean_r /= (double)m;
        }
        for (i = 0; i < m; i++) {
            c[i] = cg[i] - mean_c;
            r[i] = rg[i] - mean_r;
            dot += c[i] * r[i];
            cc += c[i] * c[i];
            rr += r[i] * r[i];
        }
        if (atol > 0.0) {
            tie_values(c, m, atol, ranks, idx);
            tie_values(r, m, atol, ranks, idx);
            for (i = 0; i < m; i++) {
                constant_c &= c[i] == 0.0;
                constant_r &= r[i] == 0.0;
            }
        } else {
            constant_c = cc == 0.0;
            constant_r = rr == 0.0;
        }
        defined[g] = !constant_r;
        cosine[g] = constant_r ? NAN : constant_c ? 0.0 : dot / (sqrt(cc) * sqrt(rr));
        for (i = 0; i < m; i++) {
            /* & rather than &&: no branch on the signs of random values */
            const int agree = (c[i] == c[i]) & (r[i] == r[i]) &
                              (sign_of(c[i]) == sign_of(r[i]));
            const int counted = r[i] != 0.0;
            same += agree;
            nonzero += counted;
            hits += agree & counted;
        }
        sign[g] = (double)same / (double)m;
        sign_nonzero[g] = nonzero ? (double)hits / (double)nonzero : NAN;
        top[g] = first_argmax(c, m) == first_argmax(r, m);
        spearman_group(c, r, m, 2, idx, ranks, &spearman[g]);
    }
    return FC_OK;
}
