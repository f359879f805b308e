/* shaping.c - bounded zero-sum projection and token advantages; see shaping.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fastcredit.h"
#include "internal.h"

/* Rows of at most LANE_MAX_M values, with unit weights and one bound pair
 * per row, are projected several at a time (see shaping_lanes.inc). */
#define LANE_MAX_M FC_PROJECT_EVALUATE_MAX

/* One row of the projection problem; lower/upper step by bound_step per
 * coordinate (0: one shared bound), weights == NULL means all 1. */
typedef struct {
    const double *u, *lower, *upper, *weights;
    int64_t m, bound_step;
    double total;
} row_problem;

/* Two plain selects (a max, then a min) rather than nested ones: GCC turns
 * these into branch-free min/max; the same result for lo <= hi (NaN x
 * stays NaN). */
static double clip(double x, double lo, double hi)
{
    const double above = x < lo ? lo : x;
    return above > hi ? hi : above;
}

static double weight(const row_problem *p, int64_t i)
{
    return p->weights ? p->weights[i] : 1.0;
}

/* sum_i w_i clip(u_i - tau, lower_i, upper_i), summed in index order. */
static double weighted_sum(const row_problem *p, double tau)
{
    double s = 0.0;
    int64_t i;
    for (i = 0; i < p->m; i++)
        s += weight(p, i) * clip(p->u[i] - tau, p->lower[i * p->bound_step],
                                 p->upper[i * p->bound_step]);
    return s;
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void sort_doubles(double *x, int64_t n)
{
    int64_t i, j;
    if (n > FC_PROJECT_INSERTION_SORT_MAX) {
        qsort(x, (size_t)n, sizeof(double), compare_doubles);
        return;
    }
    for (i = 1; i < n; i++) {
        const double v = x[i];
        for (j = i; j > 0 && x[j - 1] > v; j--) x[j] = x[j - 1];
        x[j] = v;
    }
}

/* First index j in [lo, n) with weighted_sum(bp[j]) below (strict) or at
 * most (!strict) the total; n when there is none. */
static int64_t first_at_or_below(const row_problem *p, const double *bp, int64_t lo,
                                 int64_t n, int strict)
{
    int64_t hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const double f = weighted_sum(p, bp[mid]);
        if (strict ? f < p->total : f <= p->total) hi = mid; else lo = mid + 1;
    }
    return lo;
}

/* tau solving weighted_sum(tau) = total on the open segment (left, right)
 * between consecutive breakpoints, where every coordinate is either clipped
 * or free throughout. Recomputed from the classes rather than carried along
 * the search, so it rounds like the fast path when nothing clips. */
static double segment_root(const row_problem *p, double left, double right)
{
    double level = 0.0, slope = 0.0, tau;
    int64_t i;
    for (i = 0; i < p->m; i++) {
        const double lo = p->lower[i * p->bound_step], hi = p->upper[i * p->bound_step];
        const double w = weight(p, i);
        const int at_hi = p->u[i] - hi >= right, at_lo = p->u[i] - lo <= left;
        level += w * (at_hi ? hi : (at_lo ? lo : p->u[i]));
        slope += at_hi || at_lo ? 0.0 : w;
    }
    if (!(slope > 0.0)) return right;
    tau = (level - p->total) / slope;
    return tau < left ? left : (tau > right ? right : tau);
}

/* The point of [a, b] nearest 0. */
static double nearest_zero(double a, double b)
{
    return a > 0.0 ? a : (b < 0.0 ? b : 0.0);
}

/* c ? a : b on the bit patterns: which side of tau0 an interval end lies on
 * is random, and GCC turns a select between doubles into a branch. */
static double pick(int c, double a, double b)
{
    const uint64_t mask = 0u - (uint64_t)(c != 0);
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    x = (x & mask) | (y & ~mask);
    memcpy(&a, &x, sizeof a);
    return a;
}

/* The documented tau of a row with zero weights, given tau0 from steps 1-3:
 * a root of f = total up to rounding, or an end of the flat segment holding
 * the roots (segment_root's answer when the slope is 0). A coordinate i of
 * positive weight and lower_i < upper_i is free, f strictly decreasing, on
 * the open interval (u_i - upper_i, u_i - lower_i); where none of these
 * intervals reaches, f is constant (a gap, every coordinate of positive
 * weight clipped). So
 *   - tau0 in no interval: every tau of its gap [a, b] is a root (a the
 *     largest interval end <= tau0, b the smallest interval start >= tau0,
 *     -inf / +inf when there is none): the one nearest 0;
 *   - tau0 in an interval: the root is unique, unless rounding put tau0 just
 *     inside an interval next to a gap on which f = total exactly (the gap
 *     starting at the nearest interval end above tau0, or ending at the
 *     nearest interval start below it, when no interval covers that point;
 *     f there is the sum in index order of w_i times the bound i is clipped
 *     at, as weighted_sum computes it): the point of that gap nearest 0;
 *     else tau0.
 * z differs only in the zero-weight coordinates, so rows without them never
 * need this. Usually one light pass decides (see below); the interval ends
 * take one or two passes more. */
static double nearest_root(const row_problem *p, double tau0)
{
    const double *u = p->u, *lower = p->lower, *upper = p->upper, *weights = p->weights;
    const int64_t m = p->m, bs = p->bound_step;
    double to_below = -INFINITY, from_above = INFINITY; /* gap around tau0 */
    double from_below = -INFINITY, to_above = INFINITY; /* gaps' ends next to tau0 */
    double left_end = -INFINITY, right_end = INFINITY, left_f = 0.0, right_f = 0.0;
    double margin = 0.0, scale = fabs(p->total);
    int64_t i;
    int inside = 0, left_ok, right_ok;
    if (isnan(tau0)) return tau0;
    /* The usual case first, in one light pass: some coordinate i of positive
     * weight is free at tau0 with room d on both sides (f has slope >= w_i on
     * [tau0 - d, tau0 + d]) and w_i d exceeds any rounding error of f(tau0) -
     * total, bounded by 1e-9 (sum |w_i z_i| + |total| + sum w_i |tau0|):
     * then f crosses total inside that interval, only once. A NaN or an
     * infinite tau0 fails the test. */
    for (i = 0; i < m; i++) {
        const double lo = lower[i * bs], hi = upper[i * bs], w = weights ? weights[i] : 1.0;
        const double x = u[i] - tau0, below = x - lo, above = hi - x;
        const double room = w * (below < above ? below : above);
        margin = room > margin ? room : margin;
        scale += fabs(w * clip(x, lo, hi)) + w * fabs(tau0);
    }
    if (margin > 1e-9 * scale) return tau0;
    /* a coordinate that is not used gets the empty interval (+inf, -inf) */
    for (i = 0; i < m; i++) {
        const double lo = lower[i * bs], hi = upper[i * bs];
        const int use = ((weights ? weights[i] : 1.0) > 0.0) & (lo < hi);
        const double from = pick(use, u[i] - hi, INFINITY), to = pick(use, u[i] - lo, -INFINITY);
        const double tb = pick(to <= tau0, to, -INFINITY), ta = pick(to > tau0, to, INFINITY);
        const double fa = pick(from >= tau0, from, INFINITY);
        const double fb = pick(from < tau0, from, -INFINITY);
        inside |= (from < tau0) & (tau0 < to);
        to_below = tb > to_below ? tb : to_below;
        to_above = ta < to_above ? ta : to_above;
        from_above = fa < from_above ? fa : from_above;
        from_below = fb > from_below ? fb : from_below;
    }
    if (!inside) return nearest_zero(to_below, from_above);
    /* the gap [left_end, from_below] left of tau0, [to_above, right_end]
     * right of it, and f on each (zero weights add 0); a gap's end must not
     * lie inside an interval */
    left_ok = from_below > -INFINITY;
    right_ok = to_above < INFINITY;
    for (i = 0; i < m; i++) {
        const double lo = lower[i * bs], hi = upper[i * bs], w = weights ? weights[i] : 1.0;
        const int use = (w > 0.0) & (lo < hi);
        const double from = pick(use, u[i] - hi, INFINITY), to = pick(use, u[i] - lo, -INFINITY);
        const double le = pick(to <= from_below, to, -INFINITY);
        const double re = pick(from >= to_above, from, INFINITY);
        left_f += pick(w > 0.0, w * pick(u[i] - lo <= from_below, lo, hi), 0.0);
        right_f += pick(w > 0.0, w * pick(u[i] - lo <= to_above, lo, hi), 0.0);
        left_ok &= !((from < from_below) & (from_below < to));
        right_ok &= !((from < to_above) & (to_above < to));
        left_end = le > left_end ? le : left_end;
        right_end = re < right_end ? re : right_end;
    }
    if (left_ok && left_f == p->total) return nearest_zero(left_end, from_below);
    if (right_ok && right_f == p->total) return nearest_zero(to_above, right_end);
    return tau0;
}

/* Active-set Newton steps from the fast path's tau: classify every
 * coordinate as clipped at its upper or lower bound or free at tau, solve
 * f = total on that class by one linear step (f is linear while the classes
 * hold), and accept the result when it classifies every coordinate the same
 * way: then z = clip(u - tau) meets the KKT conditions and is the
 * projection. Each pass checks one step and prepares the next, writing z as
 * it goes. Usually 1-2 steps; returns 1 with the settled tau in *tau_io, or
 * 0 when FC_PROJECT_NEWTON_STEPS steps did not settle (or nothing was free),
 * leaving the exact breakpoint search to decide. */
static int newton_projection(const row_problem *p, double *tau_io, double *z)
{
    /* locals, not p->...: stores into z could alias *p as far as C knows */
    const double *u = p->u, *lower = p->lower, *upper = p->upper, *weights = p->weights;
    const double total = p->total;
    const int64_t m = p->m, bs = p->bound_step;
    double f = 0.0, slope = 0.0, tau = *tau_io;
    int step;
    int64_t i;
    /* branch-free: clip is a min/max, the free test a 0/1 factor */
    for (i = 0; i < m; i++) {
        const double w = weights ? weights[i] : 1.0, x = u[i] - tau;
        f += w * clip(x, lower[i * bs], upper[i * bs]);
        slope += w * (double)((x > lower[i * bs]) & (x < upper[i * bs]));
    }
    for (step = 0; step < FC_PROJECT_NEWTON_STEPS; step++) {
        double next;
        int moved = 0;
        if (!(slope > 0.0)) return 0;
        next = tau + (f - total) / slope;
        f = slope = 0.0;
        for (i = 0; i < m; i++) {
            const double lo = lower[i * bs], hi = upper[i * bs];
            const double w = weights ? weights[i] : 1.0, x = u[i] - tau, y = u[i] - next;
            const double c = clip(y, lo, hi);
            moved |= ((x >= hi) != (y >= hi)) | ((x <= lo) != (y <= lo));
            z[i] = c;
            f += w * c;
            slope += w * (double)((y > lo) & (y < hi));
        }
        if (!moved) {
            *tau_io = next;
            return 1;
        }
        tau = next;
    }
    return 0;
}

/* Scans every finite breakpoint t of the row once, f(t) computed by
 * weighted_sum: the largest t with f(t) > total (*left, -inf if none), the
 * smallest with f(t) <= total (*right, +inf if none; *f_right = f there) and
 * the largest with f(t) >= total (*flat_end). f rounds monotonically in t,
 * so these are the neighbours the sorted search finds. */
static void scan_breakpoints(const row_problem *p, double *left, double *right,
                             double *f_right, double *flat_end)
{
    int64_t i;
    int side;
    *left = *flat_end = -INFINITY;
    *right = INFINITY;
    *f_right = 0.0;
    for (i = 0; i < p->m; i++)
        for (side = 0; side < 2; side++) {
            const double t = p->u[i] - (side ? p->lower : p->upper)[i * p->bound_step];
            double f;
            if (!isfinite(t)) continue;
            f = weighted_sum(p, t);
            if (f > p->total) {
                if (t > *left) *left = t;
            } else if (t < *right) {
                *right = t;
                *f_right = f;
            }
            if (f >= p->total && t > *flat_end) *flat_end = t;
        }
}

/* The exact sorted breakpoint search: the segment between consecutive
 * finite breakpoints where f crosses total. Rows of m <=
 * FC_PROJECT_EVALUATE_MAX find it by evaluating f at every breakpoint (the
 * same neighbours in O(m^2), as project_lanes does 8 or 4 rows at a time);
 * longer rows sort the breakpoints and binary search them. bp holds 2m
 * doubles. */
static double sorted_threshold(const row_problem *p, double *bp)
{
    int64_t n = 0, i, j, k;
    double left, right, f_right, flat_end;
    if (p->m <= FC_PROJECT_EVALUATE_MAX) {
        scan_breakpoints(p, &left, &right, &f_right, &flat_end);
    } else {
        for (i = 0; i < p->m; i++) {
            const double a = p->u[i] - p->upper[i * p->bound_step];
            const double b = p->u[i] - p->lower[i * p->bound_step];
            if (isfinite(a)) bp[n++] = a;
            if (isfinite(b)) bp[n++] = b;
        }
        sort_doubles(bp, n);
        j = first_at_or_below(p, bp, 0, n, 0);
        left = j > 0 ? bp[j - 1] : -INFINITY;
        right = j < n ? bp[j] : INFINITY;
        f_right = j < n ? weighted_sum(p, bp[j]) : 0.0;
        k = j < n && f_right == p->total ? first_at_or_below(p, bp, j, n, 1) - 1 : j;
        flat_end = j < n ? bp[k] : -INFINITY;
    }
    /* f = total on [right, flat_end]: any tau there is a root */
    if (right < INFINITY && f_right == p->total) return nearest_zero(right, flat_end);
    return segment_root(p, left, right);
}

static inline void project_row(const row_problem *p, double *z, double *work)
{
    /* locals, not p->...: stores into z could alias *p as far as C knows */
    const double *u = p->u, *lower = p->lower, *upper = p->upper, *weights = p->weights;
    const int64_t m = p->m, bs = p->bound_step;
    double s = 0.0, w_sum = 0.0, tau = 0.0;
    int64_t i;
    int fast, zero = 0, settled = 0;
    for (i = 0; i < m; i++) {
        const double w = weights ? weights[i] : 1.0;
        s += w * u[i];
        w_sum += w;
        zero |= w == 0.0;
    }
    fast = isfinite(s) && w_sum > 0.0;
    if (!isfinite(s))
        for (i = 0; i < m; i++)
            if (!isfinite(u[i])) {
                for (i = 0; i < m; i++) z[i] = NAN;
                return;
            }
    if (fast) {
        /* bitwise, not short-circuit: about half the coordinates of a
         * clipping row fail, and a branch per test would mispredict */
        int clipped = 0;
        tau = (s - p->total) / w_sum;
        for (i = 0; i < m; i++) {
            const double x = u[i] - tau;
            clipped |= (x < lower[i * bs]) | (x > upper[i * bs]);
            z[i] = x;
        }
        /* rows of the lanes' kind go straight to the breakpoint search, as
         * project_lanes does; for the others Newton steps are cheaper */
        settled = !clipped || ((weights || bs != 0 || m > FC_PROJECT_EVALUATE_MAX) &&
                               newton_projection(p, &tau, z));
        if (settled && !zero) return; /* z written */
    }
    if (!settled) {
        tau = sorted_threshold(p, work);
        if (zero) tau = nearest_root(p, tau);
    } else {
        /* with zero weights the root found may be one of a range: z is
         * rewritten at the documented one, if that is another */
        const double found = tau;
        tau = nearest_root(p, found);
        if (tau == found) return;
    }
    for (i = 0; i < m; i++) z[i] = clip(u[i] - tau, lower[i * bs], upper[i * bs]);
}

/* The arguments of fc_project_box_*, u as either u64 or u32 (the other
 * NULL). */
typedef struct {
    const double *u64;
    const float *u32;
    int64_t m;
    const double *lower, *upper;
    int64_t bound_row_stride, bound_col_stride;
    const double *weights;
    int64_t weight_row_stride;
    const double *total;
    int64_t total_stride;
    double *out, *work;
} rows_problem;

/* Row r by project_row; f32 rows are widened into work + 2m first. */
static void project_one(const rows_problem *q, int64_t r)
{
    const int64_t m = q->m;
    row_problem p;
    int64_t i;
    if (q->u32) {
        double *wide = q->work + 2 * m;
        for (i = 0; i < m; i++) wide[i] = (double)q->u32[r * m + i];
        p.u = wide;
    } else {
        p.u = q->u64 + r * m;
    }
    p.m = m;
    p.bound_step = q->bound_col_stride;
    p.lower = q->lower + r * q->bound_row_stride;
    p.upper = q->upper + r * q->bound_row_stride;
    p.weights = q->weights ? q->weights + r * q->weight_row_stride : NULL;
    p.total = q->total[r * q->total_stride];
    project_row(&p, q->out + r * m, q->work);
}

#ifdef FC_VECTOR_EXT
/* Portable lanes: 4 doubles, 256-bit registers on the AVX2 and x86-64-v4
 * clones of project_rows (wider generic vectors lose there: GCC lowers their
 * comparisons lane by lane). */
typedef double lane4_d __attribute__((vector_size(32)));
typedef int64_t lane4_i __attribute__((vector_size(32)));

/* c ? a : b in each lane (c: -1 or 0 from a vector comparison). */
static FC_INLINE lane4_d select4(lane4_i c, lane4_d a, lane4_d b)
{
    return (lane4_d)(((lane4_i)a & c) | ((lane4_i)b & ~c));
}

static FC_INLINE unsigned bits4(lane4_i c)
{
    return (unsigned)((c[0] & 1) | (c[1] & 2) | (c[2] & 4) | (c[3] & 8));
}

static FC_INLINE void load_rows4(const double *u64, const float *u32, int64_t r0, int m,
                                  lane4_d *u)
{
    double lanes[4];
    int i, l;
    for (i = 0; i < m; i++) {
        for (l = 0; l < 4; l++)
            lanes[l] = u64 ? u64[(r0 + l) * m + i] : (double)u32[(r0 + l) * m + i];
        memcpy(&u[i], lanes, sizeof u[i]);
    }
}

static FC_INLINE void store_rows4(double *out, int64_t r0, int m, const lane4_d *x)
{
    int i, l;
    for (i = 0; i < m; i++)
        for (l = 0; l < 4; l++) out[(r0 + l) * m + i] = x[i][l];
}

#define LANES 4
#define LN(name) name##4
#define LANE_FN FC_INLINE
#define lane_d lane4_d
#define lane_m lane4_i
#define LT(a, b) ((a) < (b))
#define LE(a, b) ((a) <= (b))
#define GT(a, b) ((a) > (b))
#define GE(a, b) ((a) >= (b))
#define EQ(a, b) ((a) == (b))
#define SEL select4
#define CLIP(x, lo, hi) select4(GT(select4(LT(x, lo), lo, x), hi), hi, select4(LT(x, lo), lo, x))
#define FINITE_OR_NAN(x) select4(GT(x, -(lane4_d){0} - INFINITY) & LT(x, (lane4_d){0} + INFINITY), \
                                 x, (lane4_d){0} + NAN)
#define RAISE(c, a, b) select4((c) & GT(a, b), a, b)
#define BITS bits4
#define LOAD_ROWS load_rows4
#define STORE_ROWS store_rows4
#include "shaping_lanes.inc"
#endif

/* AVX-512 machines take 8 rows at a time with intrinsics (comparisons into
 * mask registers, max/min for the clips: max(lo, x) is x < lo ? lo : x and
 * min(hi, x) is x > hi ? hi : x, NaN and signed zeros included, so the same
 * bits), in a function compiled for that target alone and picked at run
 * time. GCC >= 12: older ones know neither the x86-64-v4 target nor
 * __builtin_cpu_supports("x86-64-v4"). */
#if defined(FC_VECTOR_EXT) && __GNUC__ >= 12 && defined(__x86_64__) && defined(__linux__)
#define FC_SHAPING_AVX512 1
#include <immintrin.h>
#define V4_FN inline __attribute__((target("arch=x86-64-v4"), always_inline))

/* The 8 rows from row r0 (8 m contiguous values) in m vector loads, and
 * their columns picked from those by permutes: lane l of column i is value
 * l m + i, lane (l m + i) % 8 of load (l m + i) / 8. Gathers and scatters
 * would do the same in one instruction per column, but Zen 4 runs them an
 * order of magnitude slower than the permutes (issue 33). m is a constant
 * where these inline, and the indices and masks are written as expressions
 * (not loops) so that GCC folds them into constants. */
#define EACH_LANE(F, a, b, c) F(0, a, b, c), F(1, a, b, c), F(2, a, b, c), F(3, a, b, c), \
                              F(4, a, b, c), F(5, a, b, c), F(6, a, b, c), F(7, a, b, c)
#define OR_LANES(F, a, b, c) (F(0, a, b, c) | F(1, a, b, c) | F(2, a, b, c) | F(3, a, b, c) | \
                              F(4, a, b, c) | F(5, a, b, c) | F(6, a, b, c) | F(7, a, b, c))
/* lane l of column i: lane and load of value l m + i */
#define COLUMN_LANE(l, m, i, _) (((l) * (m) + (i)) % 8)
#define FROM_LOAD(l, m, i, k) ((unsigned)(((l) * (m) + (i)) / 8 == (k)) << (l))
/* lane p of store k (value 8 k + p): lane and column */
#define ROW_LANE(p, m, k, _) ((8 * (k) + (p)) / (m))
#define FROM_COLUMN(p, m, k, i) ((unsigned)((8 * (k) + (p)) % (m) == (i)) << (p))

static V4_FN void load_rows8(const double *u64, const float *u32, int64_t r0, int m, __m512d *u)
{
    __m512d rows[LANE_MAX_M];
    int i, k;
#pragma GCC unroll 8
    for (k = 0; k < m; k++)
        rows[k] = u64 ? _mm512_loadu_pd(u64 + r0 * m + 8 * k)
                      : _mm512_cvtps_pd(_mm256_loadu_ps(u32 + r0 * m + 8 * k));
#pragma GCC unroll 8
    for (i = 0; i < m; i++) {
        const __m512i index = (__m512i)(v8i){EACH_LANE(COLUMN_LANE, m, i, 0)};
        __m512d column = _mm512_setzero_pd();
#pragma GCC unroll 8
        for (k = 0; k < m; k++) {
            const unsigned from_k = OR_LANES(FROM_LOAD, m, i, k);
            if (from_k) column = _mm512_mask_permutexvar_pd(column, from_k, index, rows[k]);
        }
        u[i] = column;
    }
}

/* The inverse of load_rows8. */
static V4_FN void store_rows8(double *out, int64_t r0, int m, const __m512d *x)
{
    int i, k;
#pragma GCC unroll 8
    for (k = 0; k < m; k++) {
        const __m512i index = (__m512i)(v8i){EACH_LANE(ROW_LANE, m, k, 0)};
        __m512d row = _mm512_setzero_pd();
#pragma GCC unroll 8
        for (i = 0; i < m; i++) {
            const unsigned from_i = OR_LANES(FROM_COLUMN, m, k, i);
            if (from_i) row = _mm512_mask_permutexvar_pd(row, from_i, index, x[i]);
        }
        _mm512_storeu_pd(out + r0 * m + 8 * k, row);
    }
}
#undef EACH_LANE
#undef OR_LANES
#undef COLUMN_LANE
#undef FROM_LOAD
#undef ROW_LANE
#undef FROM_COLUMN

#define LANES 8
#define LN(name) name##8
#define LANE_FN V4_FN
#define lane_d __m512d
#define lane_m __mmask8
#define LT(a, b) _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ)
#define LE(a, b) _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ)
#define GT(a, b) _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ)
#define GE(a, b) _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ)
#define EQ(a, b) _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ)
#define SEL(c, a, b) _mm512_mask_blend_pd((__mmask8)(c), b, a)
#define CLIP(x, lo, hi) _mm512_min_pd(hi, _mm512_max_pd(lo, x))
/* fixupimm: an infinity (input classes 4, 5) becomes a quiet NaN (token 3),
 * everything else itself (token 1), -0 and NaN included */
#define FINITE_OR_NAN(x) _mm512_fixupimm_pd(x, x, _mm512_set1_epi64(0x11331111), 0)
/* max(a, b) is a > b ? a : b, so where c it is the select */
#define RAISE(c, a, b) _mm512_mask_max_pd(b, (__mmask8)(c), a, b)
#define BITS(c) ((unsigned)(__mmask8)(c))
#define LOAD_ROWS load_rows8
#define STORE_ROWS store_rows8
#include "shaping_lanes.inc"

__attribute__((target("arch=x86-64-v4"))) static int64_t lane_rows_avx512(const rows_problem *q,
                                                                           int64_t n_rows)
{
    return lane_rows8(q, n_rows);
}
#endif

/* Every row: whole groups of rows by the lanes where they apply, the rest
 * one by one. One cloned function so the row code inlines into it. */
static FC_CLONES void project_rows(const rows_problem *q, int64_t n_rows)
{
    int64_t r = 0;
#ifdef FC_SHAPING_AVX512
    if (fc_internal_paths() & FC_PATH_AVX512) r = lane_rows_avx512(q, n_rows);
    else
#endif
#ifdef FC_VECTOR_EXT
        r = lane_rows4(q, n_rows);
#endif
    for (; r < n_rows; r++) project_one(q, r);
}

/* The two public entry points differ only in u's type; project_rows takes
 * exactly one of the two pointers. */
#define PROJECT_BOX(SFX, REAL, U64, U32)                                           \
    int fc_project_box_##SFX(const REAL *u, int64_t n_rows, int64_t m,              \
                             const double *lower, const double *upper,             \
                             int64_t bound_row_stride, int64_t bound_col_stride,   \
                             const double *weights, int64_t weight_row_stride,     \
                             const double *total, int64_t total_stride,            \
                             double *out, double *work)                            \
    {                                                                               \
        if (n_rows < 0 || m < 1 || !u || !lower || !upper || !total || !out ||      \
            !work || bound_row_stride < 0 || bound_col_stride < 0 ||                \
            weight_row_stride < 0 || total_stride < 0)                              \
            return FC_EINVAL;                                                       \
        rows_problem q = {U64, U32, m, lower, upper, bound_row_stride,             \
                          bound_col_stride, weights, weight_row_stride, total,       \
                          total_stride, out, work};                                 \
        project_rows(&q, n_rows);                                                   \
        return FC_OK;                                                               \
    }

PROJECT_BOX(f64, double, u, NULL)
PROJECT_BOX(f32, float, NULL, u)

/* fc_shape_advantages_*'s normalize (shaping.h) and the values in a block
 * of its rows. */
#define FC_SHAPE_STD 0
#define FC_SHAPE_MAXABS 1
#define FC_SHAPE_NONE 2
#define FC_SHAPE_BLOCK_VALUES 2048

/* Rows of a block of fc_shape_advantages: as many as fill
 * FC_SHAPE_BLOCK_VALUES values (a multiple of 8 when that is at least 8, so
 * the lanes take whole groups), at least one. */
static int64_t shape_block_rows(int64_t m)
{
    const int64_t rows = FC_SHAPE_BLOCK_VALUES / m;
    return rows >= 8 ? rows & ~(int64_t)7 : (rows > 0 ? rows : 1);
}

/* Rows [r0, r0 + nb) of credit (c64 or c32, the other NULL) centred and
 * scaled into u (nb rows of m): u = c - mean(c), then divided by the
 * population sd or the largest |u| unless that is 0 (u = 0 then) or NaN (u
 * = NaN), sums in index order. The divisions by the spread (what limits a
 * row-by-row loop: the divider) run as one loop over the block that
 * vectorises across rows; scratch holds 2 nb m doubles (the spreads, then
 * each row's spread repeated along it). */
static FC_CLONES void shape_rows(const double *c64, const float *c32, int64_t r0, int64_t nb,
                                 int64_t m, int normalize, double *restrict u,
                                 double *restrict scratch)
{
    double *restrict stat = scratch, *restrict rep = scratch + nb * m;
    int64_t r, i, k;
    for (r = 0; r < nb; r++) {
        double *restrict x = u + r * m;
        double s = 0.0, mean, spread = 0.0;
        if (c64) {
            const double *c = c64 + (r0 + r) * m;
            for (i = 0; i < m; i++) s += c[i];
            mean = s / (double)m;
            for (i = 0; i < m; i++) x[i] = c[i] - mean;
        } else {
            const float *c = c32 + (r0 + r) * m;
            for (i = 0; i < m; i++) s += (double)c[i];
            mean = s / (double)m;
            for (i = 0; i < m; i++) x[i] = (double)c[i] - mean;
        }
        if (normalize == FC_SHAPE_STD) {
            double q = 0.0;
            for (i = 0; i < m; i++) q += x[i] * x[i];
            spread = sqrt(q / (double)m);
        } else if (normalize == FC_SHAPE_MAXABS) {
            int nan = 0;
            for (i = 0; i < m; i++) {
                const double a = fabs(x[i]);
                spread = a > spread ? a : spread;
                nan |= a != a;
            }
            if (nan) spread = NAN;
        }
        stat[r] = spread;
    }
    if (normalize == FC_SHAPE_NONE) return;
    for (r = 0; r < nb; r++)
        for (i = 0; i < m; i++) rep[r * m + i] = stat[r];
    /* u / spread where spread > 0, else 0 (or NaN for a NaN spread); the
     * division by 1 elsewhere keeps the loop free of branches */
    for (k = 0; k < nb * m; k++) {
        const double d = rep[k], y = u[k] / (d > 0.0 ? d : 1.0);
        u[k] = d > 0.0 ? y : (d == d ? 0.0 : NAN);
    }
}

#define SHAPE_ADVANTAGES(SFX, REAL, C64, C32)                                             \
    int fc_shape_advantages_##SFX(const REAL *credit, int64_t n_rows, int64_t m,          \
                                  const double *base, double beta, double kappa,          \
                                  int normalize, const double *weights, double *out,      \
                                  double *work)                                           \
    {                                                                                     \
        const double lo = -kappa, hi = kappa, total = 0.0;                                \
        int64_t r0, r, i, rows;                                                           \
        if (n_rows < 0 || m < 1 || !credit || !base || !out || !work || !(kappa >= 0.0) || \
            normalize < FC_SHAPE_STD || normalize > FC_SHAPE_NONE)                        \
            return FC_EINVAL;                                                             \
        rows = shape_block_rows(m);                                                       \
        for (r0 = 0; r0 < n_rows; r0 += rows) {                                           \
            const int64_t nb = n_rows - r0 < rows ? n_rows - r0 : rows;                   \
            double *o = out + r0 * m;                                                     \
            rows_problem q = {work, NULL, m, &lo, &hi, 0, 0,                              \
                              weights ? weights + r0 * m : NULL, m, &total, 0, o,         \
                              work + 3 * rows * m};                                       \
            shape_rows(C64, C32, r0, nb, m, normalize, work, work + rows * m);            \
            project_rows(&q, nb);                                                         \
            for (r = 0; r < nb; r++)                                                      \
                for (i = 0; i < m; i++) o[r * m + i] = o[r * m + i] * beta + base[r0 + r]; \
        }                                                                                 \
        return FC_OK;                                                                     \
    }

SHAPE_ADVANTAGES(f64, double, credit, NULL)
SHAPE_ADVANTAGES(f32, float, NULL, credit)

#ifdef FC_SHAPING_AVX512
/* token_row_* for m < 16 on AVX-512 machines: the advantages (lanes 0..m-1)
 * and the base (lane 15) in one register, and 16 tokens looked up by one
 * permute of their ids' low four bits (-1 is lane 15), zeroed where the mask
 * is 0 by the same instruction, rather than a compare and select for each of
 * FC_TOKEN_SELECT_MAX ids (what the portable loop vectorises to), which left
 * the masked pass compute-bound on Zen 4. The ids' range is checked by a
 * running minimum and maximum (no compare into a mask register per vector);
 * a row with a bad id is flagged and the caller writes it again with the
 * portable loop, whose bits the twins share. ta32 or ta64 (the other NULL)
 * holds the ids. */
static V4_FN __m512i token_ids16(const int32_t *ta32, const int64_t *ta64, int64_t t,
                                 __mmask16 live)
{
    if (ta32) return _mm512_maskz_loadu_epi32(live, ta32 + t);
    /* narrowed with signed saturation: an id beyond 32 bits stays out of
     * range */
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm512_cvtsepi64_epi32(
            _mm512_maskz_loadu_epi64((__mmask8)live, ta64 + t))),
        _mm512_cvtsepi64_epi32(_mm512_maskz_loadu_epi64((__mmask8)(live >> 8), ta64 + t + 8)),
        1);
}

/* The 16 tokens from t (the lanes of live) looked up in tab and masked;
 * their ids folded into the running *lo and *hi. */
static V4_FN __m512 token_values16(const int32_t *ta32, const int64_t *ta64, int64_t t,
                                   __mmask16 live, const uint8_t *mask, __m512 tab,
                                   __m512i *lo, __m512i *hi)
{
    const __m512i k = token_ids16(ta32, ta64, t, live);
    __mmask16 keep = live;
    *lo = _mm512_mask_min_epi32(*lo, live, *lo, k);
    *hi = _mm512_mask_max_epi32(*hi, live, *hi, k);
    if (mask) {
        const __m128i bytes = _mm_maskz_loadu_epi8(live, mask + t);
        keep = _mm_test_epi8_mask(bytes, bytes);
    }
    return _mm512_maskz_permutexvar_ps(keep, k, tab);
}

/* stream: the whole vectors go to memory by non-temporal stores (the
 * caller's output is larger than the caches, and an ordinary store would
 * first read each line it writes: 4 bytes of traffic more per token, on a
 * pass that moves 5 to 13), from the first 64-byte boundary of the row.
 * Returns whether an id is outside [-1, m) (the row is then to be written
 * again). */
__attribute__((target("arch=x86-64-v4"))) static int
token_row_avx512(const int32_t *ta32, const int64_t *ta64, int64_t n_tok, int64_t m,
                 const uint8_t *mask, const float *table, float *o, int stream)
{
    const __m512 tab = _mm512_mask_blend_ps(
        (__mmask16)0x8000, _mm512_maskz_loadu_ps((__mmask16)((1u << m) - 1), table + 1),
        _mm512_set1_ps(table[0]));
    __m512i lo = _mm512_set1_epi32(-1), hi = _mm512_set1_epi32(-1);
    /* tokens before the row's first 64-byte boundary (floats are 4-aligned) */
    int64_t head = stream ? (int64_t)(((uintptr_t)0 - (uintptr_t)o) / sizeof(float) % 16) : 0;
    int64_t t = 0;
    head = head < n_tok ? head : n_tok;
    if (head) {
        const __mmask16 live = (__mmask16)((1u << head) - 1);
        _mm512_mask_storeu_ps(o, live, token_values16(ta32, ta64, 0, live, mask, tab, &lo, &hi));
        t = head;
    }
    if (stream)
        for (; t + 16 <= n_tok; t += 16)
            _mm512_stream_ps(o + t, token_values16(ta32, ta64, t, 0xFFFF, mask, tab, &lo, &hi));
    for (; t < n_tok; t += 16) {
        const __mmask16 live = n_tok - t >= 16 ? 0xFFFF : (__mmask16)((1u << (n_tok - t)) - 1);
        _mm512_mask_storeu_ps(o + t, live, token_values16(ta32, ta64, t, live, mask, tab,
                                                          &lo, &hi));
    }
    return _mm512_reduce_min_epi32(lo) < -1 || _mm512_reduce_max_epi32(hi) >= m;
}

/* orders the non-temporal stores before whatever follows the call */
__attribute__((target("arch=x86-64-v4"))) static void token_fence(void) { _mm_sfence(); }
#endif

/* One sequence: table[0] = base, table[1 + i] = action i's advantage,
 * padded with zeros to FC_TOKEN_SELECT_MAX + 1 entries. A bad id only raises
 * the returned flag (the caller reports it), keeping the loops branch-free.
 * The selects run on the floats' bit patterns: GCC vectorises integer masks
 * but turns a chain of float selects into branches. */
#define TOKEN_ROW(SFX, INT, UINT, TA32, TA64)                                      \
    static uint32_t pick_##SFX(INT a, const uint32_t *tab)                          \
    {                                                                               \
        uint32_t v = tab[0];                                                        \
        int i;                                                                      \
        for (i = 0; i < FC_TOKEN_SELECT_MAX; i++) {                                 \
            const uint32_t hit = 0u - (uint32_t)(a == (INT)i);                      \
            v = (v & ~hit) | (tab[1 + i] & hit);                                    \
        }                                                                           \
        return v;                                                                   \
    }                                                                               \
                                                                                    \
    static FC_CLONES int token_row_##SFX(const INT *restrict ta, int64_t n_tok,     \
                                         int64_t m, const uint8_t *restrict mask,  \
                                         const float *table, float *restrict o)    \
    {                                                                               \
        uint32_t tab[FC_TOKEN_SELECT_MAX + 1];                                      \
        int64_t t;                                                                  \
        int bad = 0;                                                                \
        if (m >= FC_TOKEN_SELECT_MAX) {                                             \
            for (t = 0; t < n_tok; t++) {                                           \
                uint64_t k = (uint64_t)ta[t] + 1;                                   \
                bad |= k > (uint64_t)m;                                             \
                k = k > (uint64_t)m ? 0 : k;                                        \
                o[t] = mask && !mask[t] ? 0.0f : table[k];                          \
            }                                                                       \
            return bad;                                                             \
        }                                                                           \
        memcpy(tab, table, sizeof tab);                                             \
        if (mask) {                                                                 \
            for (t = 0; t < n_tok; t++) {                                           \
                const uint32_t v = pick_##SFX(ta[t], tab) & (0u - (uint32_t)(mask[t] != 0)); \
                bad |= (UINT)ta[t] + 1 > (UINT)m;                                   \
                memcpy(o + t, &v, sizeof v);                                        \
            }                                                                       \
        } else {                                                                    \
            for (t = 0; t < n_tok; t++) {                                           \
                const uint32_t v = pick_##SFX(ta[t], tab);                          \
                bad |= (UINT)ta[t] + 1 > (UINT)m;                                   \
                memcpy(o + t, &v, sizeof v);                                        \
            }                                                                       \
        }                                                                           \
        return bad;                                                                 \
    }                                                                               \
                                                                                    \
    int fc_token_advantages_##SFX(const double *base, const double *action_adv,     \
                                  int64_t n_seq, int64_t m, const INT *token_action, \
                                  int64_t n_tok, const uint8_t *mask, float *out,   \
                                  float *work, int64_t *bad)                        \
    {                                                                               \
        int64_t g, i, t;                                                            \
        int avx512, stream;                                                         \
        if (n_seq < 0 || m < 0 || n_tok < 0 || !base || !action_adv ||              \
            !token_action || !out || !work || !bad)                                 \
            return FC_EINVAL;                                                       \
        *bad = -1;                                                                  \
        avx512 = TOKEN_AVX512(m < 16 && (fc_internal_paths() & FC_PATH_AVX512));    \
        stream = avx512 && (double)n_seq * n_tok * sizeof(float) >= TOKEN_STREAM_BYTES; \
        for (g = 0; g < n_seq; g++) {                                               \
            const INT *ta = token_action + g * n_tok;                               \
            const uint8_t *mk = mask ? mask + g * n_tok : NULL;                     \
            work[0] = (float)base[g];                                               \
            for (i = 0; i < m; i++) work[1 + i] = (float)action_adv[g * m + i];     \
            for (i = m; i < FC_TOKEN_SELECT_MAX; i++) work[1 + i] = 0.0f;           \
            if (avx512 ? TOKEN_AVX512(token_row_avx512(TA32, TA64, n_tok, m, mk,    \
                                                       work, out + g * n_tok, stream)) \
                       : token_row_##SFX(ta, n_tok, m, mk, work, out + g * n_tok)) { \
                /* a bad row: as the portable loop writes it (the twins' bits) */ \
                if (avx512) token_row_##SFX(ta, n_tok, m, mk, work, out + g * n_tok); \
                for (t = 0; t < n_tok && ta[t] >= -1 && (int64_t)ta[t] < m; t++) {} \
                *bad = g * n_tok + t;                                               \
                break;                                                              \
            }                                                                       \
        }                                                                           \
        if (stream) TOKEN_FENCE();                                                  \
        return *bad < 0 ? FC_OK : FC_EINVAL;                                        \
    }

/* Outputs from this size on are written by non-temporal stores on the
 * AVX-512 path: larger than any x86 core's L2 and a good share of a shared
 * L3, so unlikely to be in cache when the caller reads them; below it the
 * ordinary stores leave the output in cache for the caller. */
#define TOKEN_STREAM_BYTES (8.0 * 1024 * 1024)

/* its argument where the AVX-512 token path is compiled, else 0; the fence
 * after its non-temporal stores */
#ifdef FC_SHAPING_AVX512
#define TOKEN_AVX512(x) (x)
#define TOKEN_FENCE() token_fence()
#else
#define TOKEN_AVX512(x) 0
#define TOKEN_FENCE() ((void)0)
#endif
TOKEN_ROW(i32, int32_t, uint32_t, ta, NULL)
TOKEN_ROW(i64, int64_t, uint64_t, NULL, ta)
#undef TOKEN_AVX512
#undef TOKEN_FENCE
