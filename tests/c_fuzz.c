/* c_fuzz.c - a deterministic fuzz driver for every public kernel of
 * csrc/fastcredit.h, meant to run under AddressSanitizer and
 * UndefinedBehaviorSanitizer (tests/test_sanitizers.py builds and runs it).
 *
 *   c_fuzz [ITERATIONS [SEED [FAMILY [FIRST]]]]   -> prints "fuzz ok ..."
 *   c_fuzz probe NAME                             -> prints "probe ok"
 *
 * Each iteration of each family draws its inputs from its own stream
 * (fc_rng_key(SEED, family * 2^32 + iteration) of rng.h), so a failure report
 * "family F iteration K" reproduces alone with `c_fuzz 1 SEED F K`.
 *
 * Valid inputs are built within each kernel's documented contract: random
 * sizes (zero included), CSR offsets with empty groups and with offsets[0] > 0
 * (a thread's slice of a larger index), duplicated and tied values, NaN and
 * infinities where the contract allows them, float32 and float64 variants,
 * start/stop ranges. Every array is its own malloc of exactly the size the
 * contract requires, so ASan reports any read or write past it; outputs
 * start poisoned, so a value never written is caught too. Results are checked
 * against straightforward re-implementations of the documented definitions
 * (exactly where the kernel promises the same operations, else within a
 * rounding tolerance), against each other (f32 vs f64 variants, a range
 * split in pieces vs whole, the 8-row lanes of the projection vs single
 * rows), and against the documented invariants.
 * Boundary-invalid inputs (negative sizes, m out of range, NULL where the
 * contract says it is checked, offsets not monotone, ...) must return a
 * negative code and leave every output untouched.
 *
 * `probe NAME` runs one input on which a kernel hit undefined behaviour or
 * broke its documented contract (listed in probe() below);
 * tests/test_sanitizers.py expects a known defect's probe to fail until
 * csrc/ is fixed, and a fixed one's to pass. The fuzz loop does not draw
 * first_game/first_unit/counts near INT64_MAX, and leaves the projection's
 * tie-break for zero-weight coordinates to the probes and
 * tests/test_shaping.py (with inputs whose sums are exact).
 *
 * Families: rng, tables, audit, sampling, shaping, trees, auction, interactions and (when
 * fastcredit.h has it) synthetic; every public kernel of each runs in every
 * iteration.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fastcredit.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define HAVE_DEATH_CALLBACK 1
#endif

/* ---- the driver's own random stream ------------------------------------ */

static uint64_t fz;

static uint64_t u64(void) { return fc_rng_next(&fz); }

/* Uniform integer in [lo, hi]. */
static int64_t irange(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(u64() % (uint64_t)(hi - lo + 1));
}

static int chance(int percent) { return (int)(u64() % 100) < percent; }

static double unit(void) { return fc_rng_uniform(&fz); }

/* A value: small integers (ties), zeros, signed zeros, moderate reals and
 * reals over a wide range of magnitudes; with `specials`, also NaN and
 * infinities. */
static double value(int specials)
{
    switch (u64() % (specials ? 12 : 10)) {
    case 0:
    case 1:
    case 2: return (double)irange(-3, 3);
    case 3: return chance(50) ? 0.0 : -0.0;
    case 4: return ldexp(unit() - 0.5, (int)irange(-40, 40));
    case 10: return NAN;
    case 11: return chance(50) ? INFINITY : -INFINITY;
    default: return 8.0 * (unit() - 0.5);
    }
}

/* ---- bookkeeping ---------------------------------------------------------- */

static const char *family = "none";
static const char *kernel = "none";
static long iteration = -1, failures = 0, calls = 0;
static uint64_t run_seed = 0;

static void fail_at(int line, const char *what)
{
    failures++;
    if (failures <= 30)
        printf("FAIL %s/%s iteration %ld (c_fuzz 1 %llu %s %ld), line %d: %s\n", family, kernel,
               iteration, (unsigned long long)run_seed, family, iteration, line, what);
}

#define CHECK(cond, what)                         \
    do {                                          \
        if (!(cond)) fail_at(__LINE__, (what));   \
    } while (0)

/* Marks which kernel is about to run (for failure and sanitizer reports). */
#define CALL(name) (kernel = (name), calls++)

#ifdef HAVE_DEATH_CALLBACK
static void on_death(void)
{
    fprintf(stderr, "c_fuzz: sanitizer report in %s/%s, iteration %ld: reproduce with "
                    "c_fuzz 1 %llu %s %ld\n", family, kernel, iteration,
            (unsigned long long)run_seed, family, iteration);
}
#endif

/* Exactly n bytes (at least one, so that a zero-size array is a valid
 * pointer whose every access ASan reports). */
static void *alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        printf("c_fuzz: out of memory\n");
        exit(2);
    }
    return p;
}

#define NEW(type, n) ((type *)alloc((size_t)(n) * sizeof(type)))

#define POISON 0xA5

static void poison(void *p, size_t n) { memset(p, POISON, n); }

static int untouched(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++)
        if (b[i] != POISON) return 0;
    return 1;
}

/* Equal values, NaN equal to NaN. */
static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static int same_array(const double *a, const double *b, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++)
        if (!same(a[i], b[i])) return 0;
    return 1;
}

static int close_to(double got, double want, double tol)
{
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    return fabs(got - want) <= tol;
}

/* An invalid call: a negative code, outputs untouched. */
#define REFUSED(rc, out, bytes, what)                                              \
    do {                                                                            \
        const int rc_ = (rc);                                                       \
        CHECK(rc_ < 0, what ": accepted");                                          \
        CHECK(untouched((out), (bytes)), what ": wrote an output before refusing"); \
    } while (0)

static int popcount64(uint64_t x)
{
    int c = 0;
    for (; x; x &= x - 1) c++;
    return c;
}

/* CSR offsets of n groups with lengths in [lo, hi] (0 allowed), as a
 * thread's slice of a larger index: *base holds `skip` groups before the
 * slice (their values exist too) and the slice is base + skip, so
 * slice[0] = base[skip] may be > 0. Returns the slice; *total is the
 * number of values (base[skip + n]). */
static int64_t *csr(int64_t n, int64_t lo, int64_t hi, int64_t skip, int64_t **base,
                    int64_t *total)
{
    int64_t g;
    int64_t *b = NEW(int64_t, skip + n + 1);
    b[0] = 0;
    for (g = 0; g < skip + n; g++) {
        int64_t len = irange(lo, hi);
        if (hi > 8 && chance(70)) len = irange(lo, lo + 8 < hi ? lo + 8 : hi);
        b[g + 1] = b[g] + len;
    }
    *base = b;
    *total = b[skip + n];
    return b + skip;
}

static double *doubles(int64_t n, int specials)
{
    double *x = NEW(double, n);
    int64_t i;
    for (i = 0; i < n; i++) x[i] = value(specials);
    return x;
}

/* ---- rng ---------------------------------------------------------------------- */

static void fuzz_rng(void)
{
    const uint64_t seed = u64(), item = u64();
    const int64_t n = irange(0, 40);
    uint64_t *out = NEW(uint64_t, n);
    uint64_t state = fc_rng_key(seed, item);
    int64_t j;
    CALL("fc_rng_fill");
    CHECK(fc_rng_fill(seed, item, n, out) == FC_OK, "valid fill refused");
    for (j = 0; j < n; j++) CHECK(out[j] == fc_rng_next(&state), "fill != stream");
    poison(out, (size_t)n * sizeof *out);
    REFUSED(fc_rng_fill(seed, item, -irange(1, 1000000), out), out, (size_t)n * sizeof *out,
            "negative n");
    CHECK(fc_rng_fill(seed, item, irange(1, 5), NULL) < 0, "NULL out accepted");
    free(out);
}

/* ---- tables ---------------------------------------------------------------------- */

/* m values that must be refused (every kernel checks m before shifting by
 * it; see the fixed probes in probe()). */
static int bad_table_m(void)
{
    static const int safe[] = {0, 31, 32, 40, 62};
    static const int any[] = {-1, -7, -100000, 63, 64, 1000};
    if (chance(50)) return safe[u64() % 5];
    return any[u64() % 6];
}

/* The definition phi_i = sum over S not containing i of w[|S|] (v(S+i) -
 * v(S)), for one game. */
static double ref_semivalue(const double *v, int m, const double *w, int i)
{
    double s = 0.0;
    int64_t S;
    for (S = 0; S < ((int64_t)1 << m); S++)
        if (!(S >> i & 1)) s += w[popcount64((uint64_t)S)] * (v[S | (int64_t)1 << i] - v[S]);
    return s;
}

/* Rounding bound of a sum over the 2^m entries of a game of (v(S) - center)
 * times weights of at most max|w| (two such sums, one subtracted from the
 * other): linear summation error, generously. */
static double table_tol(const double *v, int m, const double *w, double center)
{
    double s = 0.0, wmax = 0.0;
    int64_t S;
    int i;
    for (i = 0; i < m; i++) wmax = fabs(w[i]) > wmax ? fabs(w[i]) : wmax;
    for (S = 0; S < ((int64_t)1 << m); S++) s += fabs(v[S]) + fabs(center) + fabs(v[0]);
    return 4.0 * (double)(((int64_t)1 << m) + 16) * DBL_EPSILON * 2.0 * wmax * s + 1e-300;
}

/* fc_owen on a random partition of the m players (plan arrays exactly
 * sized): f32 = f64 (the same operations on the same values), efficiency
 * within rounding, and refusals of broken plans with the output untouched. */
static void fuzz_owen(const double *v, const float *v32, int64_t n_games, int m, int specials)
{
    const int n_unions = (int)irange(1, m);
    int64_t *label = NEW(int64_t, m), *unions = NEW(int64_t, n_unions);
    int64_t *groups = NEW(int64_t, m), *level_start = NEW(int64_t, m + 1);
    int64_t *item_start, *items, n_levels = 0, n_items = 0, l, j, g;
    double *weights, *o1 = NEW(double, n_games * m), *o2 = NEW(double, n_games * m);
    const size_t ob = (size_t)(n_games * m) * sizeof(double);
    int i, p, u, live = 0;

    for (u = 0; u < n_unions; u++) unions[u] = 0;
    for (i = 0; i < m; i++) {
        label[i] = irange(0, n_unions - 1);
        unions[label[i]] |= (int64_t)1 << i;
        groups[i] = (int64_t)1 << i;
    }
    for (u = 0; u < n_unions; u++) live += unions[u] != 0;
    /* levels: the other unions (if any), then i's union-mates (if any) */
    level_start[0] = 0;
    for (i = 0; i < m; i++) {
        const int mates = popcount64((uint64_t)unions[label[i]]) - 1;
        n_levels += (live > 1) + (mates > 0);
        n_items += (live - 1) + mates;
        level_start[i + 1] = n_levels;
    }
    item_start = NEW(int64_t, n_levels + 1);
    items = NEW(int64_t, n_items > 0 ? n_items : 1);
    weights = NEW(double, n_items + n_levels > 0 ? n_items + n_levels : 1);
    item_start[0] = 0;
    l = 0;
    j = 0;
    for (i = 0; i < m; i++) {
        const int64_t own = unions[label[i]];
        if (live > 1) {
            for (u = 0; u < n_unions; u++)
                if (unions[u] && unions[u] != own) items[j++] = unions[u];
            item_start[++l] = j;
        }
        if (own != groups[i]) {
            for (p = 0; p < m; p++)
                if (p != i && (own >> p & 1)) items[j++] = (int64_t)1 << p;
            item_start[++l] = j;
        }
    }
    for (l = 0; l < n_levels; l++)
        fc_shapley_weights((int)(item_start[l + 1] - item_start[l] + 1),
                           weights + item_start[l] + l);

    CALL("fc_owen_f64");
    CHECK(fc_owen_f64(v, n_games, m, groups, level_start, item_start, items, weights, o1) ==
          FC_OK, "valid owen refused");
    CALL("fc_owen_f32");
    CHECK(fc_owen_f32(v32, n_games, m, groups, level_start, item_start, items, weights, o2) ==
          FC_OK, "valid owen refused");
    CHECK(same_array(o1, o2, n_games * m), "owen f32 != f64");
    if (!specials)
        for (g = 0; g < n_games; g++) {
            const double *vg = v + (g << m);
            double sum = 0.0, scale = 0.0;
            for (j = 0; j < ((int64_t)1 << m); j++) scale += fabs(vg[j]);
            for (i = 0; i < m; i++) sum += o1[g * m + i];
            CHECK(close_to(sum, vg[((int64_t)1 << m) - 1] - vg[0], 1e-12 * scale * m + 1e-300),
                  "owen is not efficient");
        }

    poison(o1, ob);
    CALL("fc_owen_f64");
    switch (u64() % 5) {
    case 0:
        REFUSED(fc_owen_f64(v, n_games, bad_table_m(), groups, level_start, item_start, items,
                            weights, o1), o1, ob, "bad m");
        break;
    case 1:
        REFUSED(fc_owen_f64(v, -irange(1, 5), m, groups, level_start, item_start, items,
                            weights, o1), o1, ob, "negative n_games");
        break;
    case 2:
        groups[irange(0, m - 1)] = chance(50) ? 0 : (int64_t)1 << m;
        REFUSED(fc_owen_f64(v, n_games, m, groups, level_start, item_start, items, weights,
                            o1), o1, ob, "a group outside the table");
        break;
    case 3:
        level_start[0] = 1;
        REFUSED(fc_owen_f64(v, n_games, m, groups, level_start, item_start, items, weights,
                            o1), o1, ob, "level_start[0] != 0");
        break;
    default:
        if (n_items > 0) {
            items[irange(0, n_items - 1)] = chance(50) ? -1 : (int64_t)1 << m;
            REFUSED(fc_owen_f64(v, n_games, m, groups, level_start, item_start, items, weights,
                                o1), o1, ob, "an item outside the table");
        } else {
            REFUSED(fc_owen_f64(v, n_games, m, groups, level_start, item_start, items, NULL,
                                o1), o1, ob, "NULL weights");
        }
    }
    free(label);
    free(unions);
    free(groups);
    free(level_start);
    free(item_start);
    free(items);
    free(weights);
    free(o1);
    free(o2);
}

static void fuzz_tables(void)
{
    /* m >= 18 reaches the column strips of the Moebius transform (rarely:
     * 2^18 entries) */
    const int m = (int)(chance(1) ? irange(17, 18) : chance(10) ? irange(9, 12) : irange(1, 9));
    const int64_t n_games = m > 12 ? 1 : irange(0, 3), len = n_games << m;
    const int64_t size = (int64_t)1 << m;
    const int specials = chance(20);
    float *v32 = NEW(float, len);
    double *v = NEW(double, len), *w = NEW(double, m);
    double *o1 = NEW(double, n_games * m), *o2 = NEW(double, n_games * m);
    double *p1 = NEW(double, n_games * m * m), *p2 = NEW(double, n_games * m * m);
    double *t1 = NEW(double, len), *t2 = NEW(double, len), *t3 = NEW(double, len);
    double *phi = NEW(double, n_games * m);
    int64_t j, g, S;
    int i, k;

    for (j = 0; j < len; j++) {
        v32[j] = (float)value(specials);
        v[j] = (double)v32[j];
    }
    switch (u64() % 3) {
    case 0: CALL("fc_shapley_weights"); CHECK(fc_shapley_weights(m, w) == FC_OK, "weights"); break;
    case 1: CALL("fc_banzhaf_weights"); CHECK(fc_banzhaf_weights(m, w) == FC_OK, "weights"); break;
    default: for (i = 0; i < m; i++) w[i] = value(0);
    }

    /* semivalue: f64 = f32 (the same operations on the same values), and
     * the definition within rounding */
    CALL("fc_semivalue_f64");
    CHECK(fc_semivalue_f64(v, n_games, m, w, phi) == FC_OK, "valid semivalue refused");
    CALL("fc_semivalue_f32");
    CHECK(fc_semivalue_f32(v32, n_games, m, w, o2) == FC_OK, "valid semivalue refused");
    CHECK(same_array(phi, o2, n_games * m), "f32 != f64");
    if (!specials && m <= 10)
        for (g = 0; g < n_games; g++)
            for (i = 0; i < m; i++) {
                const double *vg = v + (g << m);
                CHECK(close_to(phi[g * m + i], ref_semivalue(vg, m, w, i),
                               table_tol(vg, m, w, vg[0])),
                      "semivalue != definition");
            }

    /* semivalue_partial: a random split of one game into block-aligned
     * ranges, with a random center, adds up to the whole-game value */
    if (n_games > 0) {
        const int64_t block = (int64_t)1 << FC_TABLE_BLOCK_BITS;
        const double center = chance(50) ? v[(n_games - 1) << m] : value(0);
        const double *vg = v + ((n_games - 1) << m);
        const float *vg32 = v32 + ((n_games - 1) << m);
        double *acc = NEW(double, m + 1), *acc32 = NEW(double, m + 1);
        int64_t start = 0;
        for (i = 0; i <= m; i++) acc[i] = acc32[i] = 0.0;
        while (start < size) {
            int64_t stop = size;
            if (size > block && chance(60))
                stop = start + block * irange(1, (size - start) / block);
            CALL("fc_semivalue_partial_f64");
            CHECK(fc_semivalue_partial_f64(vg, m, w, center, start, stop, acc) == FC_OK,
                  "valid range refused");
            CALL("fc_semivalue_partial_f32");
            CHECK(fc_semivalue_partial_f32(vg32, m, w, center, start, stop, acc32) == FC_OK,
                  "valid range refused");
            start = stop;
        }
        CHECK(same_array(acc, acc32, m + 1), "partial f32 != f64");
        if (!specials)
            for (i = 0; i < m; i++)
                CHECK(close_to(acc[i] - acc[m], phi[(n_games - 1) * m + i],
                               2.0 * table_tol(vg, m, w, center)),
                      "partial ranges != whole game");
        /* invalid ranges */
        poison(acc, (size_t)(m + 1) * sizeof *acc);
        CALL("fc_semivalue_partial_f64");
        switch (u64() % 5) {
        case 0:
            REFUSED(fc_semivalue_partial_f64(vg, m, w, center, irange(1, block - 1), size, acc),
                    acc, (size_t)(m + 1) * sizeof *acc, "unaligned start");
            break;
        case 1:
            REFUSED(fc_semivalue_partial_f64(vg, m, w, center, 0, size + irange(1, 3) * block,
                                             acc), acc, (size_t)(m + 1) * sizeof *acc,
                    "stop past the table");
            break;
        case 2:
            REFUSED(fc_semivalue_partial_f64(vg, m, w, center, -block, size, acc), acc,
                    (size_t)(m + 1) * sizeof *acc, "negative start");
            break;
        case 3:
            REFUSED(fc_semivalue_partial_f64(vg, m, w, center, size, 0, acc), acc,
                    (size_t)(m + 1) * sizeof *acc, "start > stop");
            break;
        default:
            REFUSED(fc_semivalue_partial_f64(vg, bad_table_m(), w, center, 0, size, acc), acc,
                    (size_t)(m + 1) * sizeof *acc, "bad m");
        }
        if (size > block) {
            CALL("fc_semivalue_partial_f32");
            REFUSED(fc_semivalue_partial_f32(vg32, m, w, center, 0, size - irange(1, block - 1),
                                             acc), acc, (size_t)(m + 1) * sizeof *acc,
                    "unaligned stop");
        }
        free(acc);
        free(acc32);
    }

    /* singleton, leave-one-out, pair interactions: the same arithmetic as
     * the definitions, so exactly equal */
    CALL("fc_singleton_f64");
    CHECK(fc_singleton_f64(v, n_games, m, o1) == FC_OK, "valid singleton refused");
    CALL("fc_singleton_f32");
    CHECK(fc_singleton_f32(v32, n_games, m, o2) == FC_OK, "valid singleton refused");
    CHECK(same_array(o1, o2, n_games * m), "singleton f32 != f64");
    for (g = 0; g < n_games; g++)
        for (i = 0; i < m; i++)
            CHECK(same(o1[g * m + i], v[(g << m) + ((int64_t)1 << i)] - v[g << m]),
                  "singleton != v({i}) - v({})");
    CALL("fc_leave_one_out_f64");
    CHECK(fc_leave_one_out_f64(v, n_games, m, o1) == FC_OK, "valid leave-one-out refused");
    CALL("fc_leave_one_out_f32");
    CHECK(fc_leave_one_out_f32(v32, n_games, m, o2) == FC_OK, "valid leave-one-out refused");
    CHECK(same_array(o1, o2, n_games * m), "leave-one-out f32 != f64");
    for (g = 0; g < n_games; g++)
        for (i = 0; i < m; i++)
            CHECK(same(o1[g * m + i],
                       v[(g << m) + size - 1] - v[(g << m) + ((size - 1) ^ ((int64_t)1 << i))]),
                  "leave-one-out != v(N) - v(N - i)");
    CALL("fc_pair_interactions_f64");
    CHECK(fc_pair_interactions_f64(v, n_games, m, p1) == FC_OK, "valid pairs refused");
    CALL("fc_pair_interactions_f32");
    CHECK(fc_pair_interactions_f32(v32, n_games, m, p2) == FC_OK, "valid pairs refused");
    CHECK(same_array(p1, p2, n_games * m * m), "pairs f32 != f64");
    for (g = 0; g < n_games; g++)
        for (i = 0; i < m; i++)
            for (k = 0; k < m; k++) {
                const double *vg = v + (g << m);
                const int64_t bi = (int64_t)1 << i, bk = (int64_t)1 << k;
                CHECK(same(p1[(g * m + i) * m + k],
                           i == k ? 0.0 : vg[bi | bk] - vg[bi] - vg[bk] + vg[0]),
                      "pair interaction != definition");
            }

    /* size-resolved marginals: the mean over |S| = k of v(S+i) - v(S) */
    CALL("fc_size_resolved_f64");
    CHECK(fc_size_resolved_f64(v, n_games, m, p1) == FC_OK, "valid size_resolved refused");
    CALL("fc_size_resolved_f32");
    CHECK(fc_size_resolved_f32(v32, n_games, m, p2) == FC_OK, "valid size_resolved refused");
    CHECK(same_array(p1, p2, n_games * m * m), "size_resolved f32 != f64");
    if (!specials && m <= 10)
        for (g = 0; g < n_games; g++)
            for (i = 0; i < m; i++)
                for (k = 0; k < m; k++) {
                    const double *vg = v + (g << m);
                    double s = 0.0, scale = 0.0, count = 0.0;
                    for (S = 0; S < size; S++) {
                        const int c = popcount64((uint64_t)S);
                        if (!(S >> i & 1) && c == k) {
                            s += vg[S | (int64_t)1 << i] - vg[S];
                            count += 1.0;
                        }
                        /* the kernel sums all sets of sizes k and k + 1 */
                        if (c == k || c == k + 1) scale += fabs(vg[S]) + fabs(vg[0]);
                    }
                    CHECK(close_to(p1[(g * m + i) * m + k], s / count,
                                   4.0 * (double)(size + 16) * DBL_EPSILON * scale / count +
                                       1e-300),
                          "size_resolved != definition");
                }

    /* Moebius: the definition for small m; from_moebius inverts it; f64
     * runs in place as well as out of place */
    CALL("fc_moebius_f64");
    CHECK(fc_moebius_f64(v, n_games, m, t1) == FC_OK, "valid moebius refused");
    CALL("fc_moebius_f32");
    CHECK(fc_moebius_f32(v32, n_games, m, t2) == FC_OK, "valid moebius refused");
    CHECK(same_array(t1, t2, len), "moebius f32 != f64");
    memcpy(t3, v, (size_t)len * sizeof *t3);
    CHECK(fc_moebius_f64(t3, n_games, m, t3) == FC_OK, "in-place moebius refused");
    CHECK(same_array(t1, t3, len), "in-place moebius != out of place");
    if (!specials && m <= 8)
        for (g = 0; g < n_games; g++)
            for (S = 0; S < size; S++) {
                const double *vg = v + (g << m);
                double s = 0.0, scale = 0.0;
                int64_t T = S;
                for (;;) { /* every subset T of S */
                    s += (popcount64((uint64_t)(S ^ T)) & 1) ? -vg[T] : vg[T];
                    scale += fabs(vg[T]);
                    if (T == 0) break;
                    T = (T - 1) & S;
                }
                CHECK(close_to(t1[(g << m) + S], s, 1e-13 * (scale + 1e-300) * size),
                      "moebius != definition");
            }
    CALL("fc_from_moebius_f64");
    CHECK(fc_from_moebius_f64(t1, n_games, m, t2) == FC_OK, "valid from_moebius refused");
    if (!specials)
        for (g = 0; g < n_games; g++) {
            double scale = 0.0;
            for (S = 0; S < size; S++) scale += fabs(v[(g << m) + S]);
            for (S = 0; S < size; S++)
                CHECK(close_to(t2[(g << m) + S], v[(g << m) + S], 1e-13 * scale * size * m),
                      "from_moebius(moebius) != v");
        }
    {
        float *a32 = NEW(float, len);
        for (j = 0; j < len; j++) a32[j] = (float)t1[j];
        for (j = 0; j < len; j++) t1[j] = (double)a32[j];
        CALL("fc_from_moebius_f32");
        CHECK(fc_from_moebius_f32(a32, n_games, m, t2) == FC_OK, "valid from_moebius refused");
        CHECK(fc_from_moebius_f64(t1, n_games, m, t3) == FC_OK, "valid from_moebius refused");
        CHECK(same_array(t2, t3, len), "from_moebius f32 != f64");
        free(a32);
    }

    /* structurally invalid calls */
    {
        const size_t nb = (size_t)(n_games * m) * sizeof(double);
        const size_t tb = (size_t)len * sizeof(double);
        const int bm = bad_table_m(), bm2 = bad_table_m();
        const int64_t bad_n = chance(50) ? -1 : INT64_MIN;
        poison(o1, nb);
        poison(t1, tb);
        CALL("fc_semivalue_f64");
        REFUSED(fc_semivalue_f64(v, n_games, bm, w, o1), o1, nb, "bad m");
        REFUSED(fc_semivalue_f64(v, bad_n, m, w, o1), o1, nb, "negative n_games");
        REFUSED(fc_semivalue_f64(v, n_games, m, NULL, o1), o1, nb, "NULL weights");
        CALL("fc_semivalue_f32");
        REFUSED(fc_semivalue_f32(NULL, n_games, m, w, o1), o1, nb, "NULL table");
        REFUSED(fc_semivalue_f32(v32, n_games, m, w, NULL), o1, nb, "NULL out");
        CALL("fc_shapley_weights");
        REFUSED(fc_shapley_weights(bm, o1), o1, nb, "bad m");
        CALL("fc_banzhaf_weights");
        REFUSED(fc_banzhaf_weights(bm, o1), o1, nb, "bad m");
        CHECK(fc_banzhaf_weights(m, NULL) < 0, "NULL weights accepted");
        CALL("fc_singleton_f64");
        REFUSED(fc_singleton_f64(v, n_games, bm, o1), o1, nb, "bad m");
        CALL("fc_singleton_f32");
        REFUSED(fc_singleton_f32(v32, bad_n, m, o1), o1, nb, "negative n_games");
        CALL("fc_leave_one_out_f64");
        REFUSED(fc_leave_one_out_f64(v, n_games, bm2, o1), o1, nb, "bad m");
        CALL("fc_leave_one_out_f32");
        REFUSED(fc_leave_one_out_f32(NULL, n_games, m, o1), o1, nb, "NULL table");
        CALL("fc_pair_interactions_f64");
        REFUSED(fc_pair_interactions_f64(v, n_games, bm, o1), o1, nb, "bad m");
        CALL("fc_pair_interactions_f32");
        REFUSED(fc_pair_interactions_f32(v32, bad_n, m, o1), o1, nb, "negative n_games");
        CALL("fc_size_resolved_f64");
        REFUSED(fc_size_resolved_f64(v, n_games, bm2, o1), o1, nb, "bad m");
        CALL("fc_size_resolved_f32");
        REFUSED(fc_size_resolved_f32(v32, n_games, m, NULL), o1, nb, "NULL out");
        CALL("fc_moebius_f64");
        REFUSED(fc_moebius_f64(v, n_games, bm, t1), t1, tb, "bad m");
        CALL("fc_moebius_f32");
        REFUSED(fc_moebius_f32(v32, bad_n, m, t1), t1, tb, "negative n_games");
        CALL("fc_from_moebius_f64");
        REFUSED(fc_from_moebius_f64(NULL, n_games, m, t1), t1, tb, "NULL table");
        CALL("fc_from_moebius_f32");
        REFUSED(fc_from_moebius_f32(v32, n_games, bm, t1), t1, tb, "bad m");
    }
    fuzz_owen(v, v32, n_games, m, specials);
    free(v32);
    free(v);
    free(w);
    free(o1);
    free(o2);
    free(p1);
    free(p2);
    free(t1);
    free(t2);
    free(t3);
    free(phi);
}

/* ---- audit ------------------------------------------------------------------------ */

static const double *sort_keys_of;

/* Stable ascending order of the keys (index breaks ties). */
static int by_key_then_index(const void *a, const void *b)
{
    const int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    const double x = sort_keys_of[i], y = sort_keys_of[j];
    if (x != y) return x < y ? -1 : 1;
    return (i > j) - (i < j);
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median as numpy.median of x[0..n) (sorts x) */
static double ref_median(double *x, int64_t n)
{
    qsort(x, (size_t)n, sizeof *x, by_value);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static void fuzz_bootstrap_median(void)
{
    const int64_t n = chance(10) ? irange(200, 700) : irange(1, 40);
    const int paired = chance(50);
    const int64_t start = chance(30) ? 0 : irange(0, 5000), stop = start + irange(0, 4);
    const int64_t n_out = stop - start;
    const uint64_t seed = u64();
    double *a = NEW(double, n), *b = NEW(double, n), *sa = NEW(double, n), *sb = NEW(double, n);
    int64_t *oa = NEW(int64_t, n), *ob = NEW(int64_t, n);
    int32_t *counts = NEW(int32_t, n);
    double *out = NEW(double, n_out), *da = NEW(double, n), *db = NEW(double, n);
    int64_t i, r, j;
    const int ties = chance(50);
    for (i = 0; i < n; i++) {
        /* "given sorted": no NaN; infinities sort fine */
        a[i] = ties ? (double)irange(-2, 2) : value(0);
        b[i] = ties ? (double)irange(-2, 2) : value(0);
        if (chance(3)) a[i] = chance(50) ? INFINITY : -INFINITY;
        oa[i] = ob[i] = i;
    }
    sort_keys_of = a;
    qsort(oa, (size_t)n, sizeof *oa, by_key_then_index);
    sort_keys_of = b;
    qsort(ob, (size_t)n, sizeof *ob, by_key_then_index);
    for (i = 0; i < n; i++) {
        sa[i] = a[oa[i]];
        sb[i] = b[ob[i]];
    }
    poison(out, (size_t)n_out * sizeof *out);
    CALL("fc_bootstrap_median");
    CHECK(fc_bootstrap_median(sa, oa, paired ? sb : NULL, paired ? ob : NULL, n, seed, start, stop,
                              counts, out) == FC_OK, "valid call refused");
    /* the documented draws: item j of replicate r from draw j/2 of the
     * stream (seed, r), high 32 bits for even j, low for odd, (h n) >> 32 */
    for (r = start; r < stop; r++) {
        const uint64_t key = fc_rng_key(seed, (uint64_t)r);
        double want;
        for (j = 0; j < n; j++) {
            const uint64_t d = fc_mix64(key + ((uint64_t)(j / 2) + 1) * FC_RNG_GOLDEN);
            const uint64_t h = j % 2 ? d & 0xFFFFFFFFu : d >> 32;
            const int64_t item = (int64_t)((h * (uint64_t)n) >> 32);
            da[j] = a[item];
            db[j] = b[item];
        }
        want = ref_median(da, n);
        if (paired) want -= ref_median(db, n);
        CHECK(same(out[r - start], want), "replicate != median of the documented draws");
    }

    poison(out, (size_t)n_out * sizeof *out);
    poison(counts, (size_t)n * sizeof *counts);
    {
        const size_t ob_ = (size_t)n_out * sizeof *out;
        switch (u64() % 9) {
        case 0:
            REFUSED(fc_bootstrap_median(sa, oa, NULL, NULL, chance(50) ? 0 : -irange(1, 9), seed,
                                        start, stop, counts, out), out, ob_, "n < 1");
            break;
        case 1:
            REFUSED(fc_bootstrap_median(sa, oa, NULL, NULL, (int64_t)FC_BOOTSTRAP_MAX_ITEMS + 1,
                                        seed, start, stop, counts, out), out, ob_,
                    "n > FC_BOOTSTRAP_MAX_ITEMS");
            break;
        case 2:
            REFUSED(fc_bootstrap_median(sa, oa, NULL, NULL, n, seed, -irange(1, 9), stop, counts,
                                        out), out, ob_, "negative start");
            break;
        case 3:
            REFUSED(fc_bootstrap_median(sa, oa, NULL, NULL, n, seed, stop + 1, stop, counts, out),
                    out, ob_, "stop < start");
            break;
        case 4:
            REFUSED(fc_bootstrap_median(NULL, oa, NULL, NULL, n, seed, start, stop, counts, out),
                    out, ob_, "NULL sorted_a");
            break;
        case 5:
            REFUSED(fc_bootstrap_median(sa, NULL, NULL, NULL, n, seed, start, stop, counts, out),
                    out, ob_, "NULL order_a");
            break;
        case 6:
            REFUSED(fc_bootstrap_median(sa, oa, sb, NULL, n, seed, start, stop, counts, out), out,
                    ob_, "sorted_b without order_b");
            break;
        case 7:
            REFUSED(fc_bootstrap_median(sa, oa, NULL, NULL, n, seed, start, stop, NULL, out), out,
                    ob_, "NULL counts");
            break;
        default:
            REFUSED(fc_bootstrap_median(sa, oa, NULL, NULL, n, seed, start, start + 1, counts,
                                        NULL), out, ob_, "NULL out");
        }
        CHECK(untouched(counts, (size_t)n * sizeof *counts), "scratch written before refusing");
    }
    free(a);
    free(b);
    free(sa);
    free(sb);
    free(oa);
    free(ob);
    free(counts);
    free(out);
    free(da);
    free(db);
}

static void fuzz_bootstrap_mean_diff(void)
{
    const int64_t n_groups = irange(0, 6), skip = irange(0, 2);
    int64_t *base, total;
    const int64_t *off = csr(n_groups, 1, 20, skip, &base, &total);
    const int specials = chance(10);
    double *av = doubles(total, specials);
    const int64_t n_b = chance(30) ? 0 : irange(1, 20), resamples = irange(0, 6);
    double *bv = n_b ? doubles(n_b, specials) : NULL;
    const uint64_t seed = u64(), first = chance(20) ? UINT64_MAX - (uint64_t)irange(0, 3) : u64();
    const size_t nb = (size_t)(n_groups * resamples) * sizeof(double);
    double *out = NEW(double, n_groups * resamples);
    int64_t g, r, j;
    poison(out, nb);
    CALL("fc_bootstrap_mean_diff");
    CHECK(fc_bootstrap_mean_diff(off, av, n_groups, bv, n_b, resamples, seed, first, out) == FC_OK,
          "valid call refused");
    for (g = 0; g < n_groups; g++) {
        const int64_t len = off[g + 1] - off[g];
        uint64_t st = fc_rng_key(seed, first + (uint64_t)g);
        for (r = 0; r < resamples; r++) {
            double sa = 0.0, sb = 0.0, want;
            for (j = 0; j < len; j++) sa += av[off[g] + (int64_t)fc_rng_below(&st, (uint64_t)len)];
            want = sa / (double)len;
            if (n_b) {
                for (j = 0; j < n_b; j++) sb += bv[fc_rng_below(&st, (uint64_t)n_b)];
                want -= sb / (double)n_b;
            }
            CHECK(same(out[g * resamples + r], want), "replicate != documented resampling");
        }
    }
    poison(out, nb);
    {
        int64_t bad_off[3] = {0, 0, 0};
        double one[1] = {1.0};
        switch (u64() % 9) {
        case 0: /* an empty group */
            bad_off[1] = 2;
            bad_off[2] = 2;
            REFUSED(fc_bootstrap_mean_diff(bad_off, av, 2, bv, n_b, 1, seed, first, out), out, nb,
                    "empty group");
            break;
        case 1: /* not monotone */
            bad_off[1] = 3;
            bad_off[2] = 1;
            REFUSED(fc_bootstrap_mean_diff(bad_off, one, 2, NULL, 0, 1, seed, first, out), out, nb,
                    "offsets not monotone");
            break;
        case 2: /* offsets[0] < 0 */
            bad_off[0] = -1;
            bad_off[1] = 1;
            REFUSED(fc_bootstrap_mean_diff(bad_off, one, 1, NULL, 0, 1, seed, first, out), out, nb,
                    "negative offsets[0]");
            break;
        case 3: /* a group longer than FC_RNG_MAX_RANGE: refused before reading */
            bad_off[1] = (int64_t)FC_RNG_MAX_RANGE + 1;
            REFUSED(fc_bootstrap_mean_diff(bad_off, one, 1, NULL, 0, 1, seed, first, out), out, nb,
                    "group too long");
            break;
        case 4:
            REFUSED(fc_bootstrap_mean_diff(off, av, n_groups, bv, n_b, -irange(1, 5), seed, first,
                                           out), out, nb, "negative resamples");
            break;
        case 5:
            REFUSED(fc_bootstrap_mean_diff(off, av, n_groups, one,
                                           chance(50) ? -1 : (int64_t)FC_RNG_MAX_RANGE + 1, 1,
                                           seed, first, out), out, nb, "n_b out of range");
            break;
        case 6:
            REFUSED(fc_bootstrap_mean_diff(off, av, n_groups, NULL, irange(1, 5), resamples, seed,
                                           first, out), out, nb, "n_b > 0 with NULL b");
            break;
        case 7:
            REFUSED(fc_bootstrap_mean_diff(chance(50) ? NULL : off, av, -irange(1, 3), bv, n_b,
                                           resamples, seed, first, out), out, nb,
                    "NULL offsets / negative n_groups");
            break;
        default:
            if (n_groups > 0 && resamples > 0) {
                const int which = chance(50);
                REFUSED(fc_bootstrap_mean_diff(off, which ? NULL : av, n_groups, bv, n_b,
                                               resamples, seed, first, which ? out : NULL),
                        out, nb, "NULL values or out");
            }
        }
    }
    free(base);
    free(av);
    free(bv);
    free(out);
}

/* Average 1-based ranks by counting. */
static void ref_ranks(const double *x, int64_t n, double *rank)
{
    int64_t i, j;
    for (i = 0; i < n; i++) {
        int64_t less = 0, equal = 0;
        for (j = 0; j < n; j++) {
            less += x[j] < x[i];
            equal += x[j] == x[i];
        }
        rank[i] = 1.0 + (double)less + 0.5 * (double)(equal - 1);
    }
}

static void fuzz_spearman(void)
{
    const int64_t n_groups = irange(0, 7), skip = irange(0, 2);
    int64_t *base, total, longest = 0, g, i;
    const int64_t *off = csr(n_groups, 0, chance(20) ? 150 : 12, skip, &base, &total);
    const int64_t min_len = irange(2, 4);
    const int ties = chance(50), specials = chance(15);
    double *x = NEW(double, total), *y = NEW(double, total), *rho, *ranks, *rx, *ry;
    int64_t *idx;
    int8_t *status;
    for (i = 0; i < total; i++) {
        x[i] = ties ? (double)irange(-2, 2) : value(0);
        y[i] = ties ? (double)irange(-2, 2) : value(0);
        if (specials && chance(5)) x[i] = value(1);
        if (specials && chance(5)) y[i] = value(1);
    }
    for (g = 0; g < n_groups; g++)
        if (off[g + 1] - off[g] > longest) longest = off[g + 1] - off[g];
    /* sometimes one group all-constant in y or in x */
    if (n_groups > 0 && chance(30)) {
        g = irange(0, n_groups - 1);
        double *which = chance(50) ? x : y;
        for (i = off[g]; i < off[g + 1]; i++) which[i] = 1.5;
    }
    idx = NEW(int64_t, longest);
    ranks = NEW(double, 3 * longest);
    rho = NEW(double, n_groups);
    status = NEW(int8_t, n_groups);
    rx = NEW(double, longest);
    ry = NEW(double, longest);
    poison(rho, (size_t)n_groups * sizeof *rho);
    poison(status, (size_t)n_groups);
    CALL("fc_spearman_groups");
    CHECK(fc_spearman_groups(off, n_groups, x, y, min_len, idx, ranks, rho, status) == FC_OK,
          "valid call refused");
    for (g = 0; g < n_groups; g++) {
        const int64_t n = off[g + 1] - off[g];
        const double *xg = x + off[g], *yg = y + off[g];
        int finite = 1, want_status;
        double want = NAN;
        for (i = 0; i < n; i++) finite &= isfinite(xg[i]) && isfinite(yg[i]);
        if (n < min_len) {
            want_status = FC_SPEARMAN_SHORT;
        } else if (!finite) {
            want_status = FC_SPEARMAN_NONFINITE;
        } else {
            int y_const = 1, x_const = 1;
            for (i = 1; i < n; i++) {
                y_const &= yg[i] == yg[0];
                x_const &= xg[i] == xg[0];
            }
            if (y_const) {
                want_status = FC_SPEARMAN_CONSTANT;
            } else {
                want_status = FC_SPEARMAN_VALID;
                if (x_const) {
                    want = 0.0;
                } else {
                    const double c = 0.5 * (double)(n + 1);
                    double sxy = 0.0, sxx = 0.0, syy = 0.0;
                    ref_ranks(xg, n, rx);
                    ref_ranks(yg, n, ry);
                    for (i = 0; i < n; i++) {
                        sxy += (rx[i] - c) * (ry[i] - c);
                        sxx += (rx[i] - c) * (rx[i] - c);
                        syy += (ry[i] - c) * (ry[i] - c);
                    }
                    want = sxy / sqrt(sxx * syy);
                }
            }
        }
        CHECK(status[g] == want_status, "status != documented status");
        /* ranks are exact half-integers and the sums run in index order,
         * so rho is exact */
        CHECK(same(rho[g], want), "rho != definition");
        CHECK(!(want_status == FC_SPEARMAN_VALID) || (rho[g] >= -1.0 && rho[g] <= 1.0),
              "rho outside [-1, 1]");
    }
    poison(rho, (size_t)n_groups * sizeof *rho);
    poison(status, (size_t)n_groups);
    {
        int64_t bad_off[3] = {0, 2, 1};
        double two[2] = {1, 2};
        const size_t nb = (size_t)n_groups * sizeof *rho;
        switch (u64() % 5) {
        case 0:
            REFUSED(fc_spearman_groups(off, n_groups, x, y, irange(-3, 1), idx, ranks, rho,
                                       status), rho, nb, "min_len < 2");
            break;
        case 1:
            REFUSED(fc_spearman_groups(bad_off, 2, two, two, 2, idx, ranks, rho, status), rho, nb,
                    "offsets not monotone");
            break;
        case 2:
            bad_off[0] = -2;
            bad_off[2] = 2;
            REFUSED(fc_spearman_groups(bad_off, 2, two, two, 2, idx, ranks, rho, status), rho, nb,
                    "negative offsets[0]");
            break;
        case 3:
            REFUSED(fc_spearman_groups(off, -irange(1, 3), x, y, 2, idx, ranks, rho, status), rho,
                    nb, "negative n_groups");
            break;
        default:
            if (longest > 0) {
                const int which = (int)(u64() % 4);
                REFUSED(fc_spearman_groups(off, n_groups, which == 0 ? NULL : x,
                                           which == 1 ? NULL : y, 2, which == 2 ? NULL : idx,
                                           which == 3 ? NULL : ranks, rho, status),
                        rho, nb, "NULL x, y or scratch");
            } else if (n_groups > 0) {
                REFUSED(fc_spearman_groups(off, n_groups, x, y, 2, idx, ranks, NULL, status), rho,
                        nb, "NULL rho");
            }
        }
        CHECK(untouched(status, (size_t)n_groups), "status written before refusing");
    }
    free(base);
    free(x);
    free(y);
    free(idx);
    free(ranks);
    free(rho);
    free(status);
    free(rx);
    free(ry);
}

/* Whether b[0..n) holds the same values as a[0..n), bit for bit, in any
 * order. */
static int same_multiset(const double *a, const double *b, int64_t n)
{
    char *used = NEW(char, n);
    int64_t i, j;
    int ok = 1;
    memset(used, 0, (size_t)n);
    for (i = 0; i < n && ok; i++) {
        for (j = 0; j < n; j++)
            if (!used[j] && memcmp(&a[i], &b[j], sizeof(double)) == 0) break;
        if (j == n) ok = 0; else used[j] = 1;
    }
    free(used);
    return ok;
}

static void fuzz_shuffle(void)
{
    const int64_t n_groups = irange(0, 7), skip = irange(0, 2);
    int64_t *base, total, g;
    const int64_t *off = csr(n_groups, 0, chance(10) ? 200 : 12, skip, &base, &total);
    double *x = doubles(total, chance(20));
    double *o1 = NEW(double, total), *o2 = NEW(double, total);
    const uint64_t seed = u64(), first = u64();
    const int64_t k = irange(0, n_groups);
    const size_t nb = (size_t)total * sizeof(double);
    poison(o1, nb);
    CALL("fc_shuffle_groups");
    CHECK(fc_shuffle_groups(off, n_groups, x, seed, first, o1) == FC_OK, "valid call refused");
    /* the groups before the slice are not written */
    CHECK(untouched(o1, (size_t)off[0] * sizeof(double)), "wrote before the slice");
    for (g = 0; g < n_groups; g++)
        CHECK(same_multiset(x + off[g], o1 + off[g], off[g + 1] - off[g]),
              "a group's values changed");
    /* the slice of groups k.. keyed from first + k gives the same groups */
    poison(o2, nb);
    CHECK(fc_shuffle_groups(off + k, n_groups - k, x, seed, first + (uint64_t)k, o2) == FC_OK,
          "valid slice refused");
    CHECK(untouched(o2, (size_t)off[k] * sizeof(double)), "wrote before the slice");
    CHECK(memcmp(o1 + off[k], o2 + off[k], (size_t)(off[n_groups] - off[k]) * sizeof(double)) == 0,
          "slice != whole");
    poison(o1, nb);
    {
        int64_t bad_off[3] = {0, 2, 1};
        switch (u64() % 4) {
        case 0:
            REFUSED(fc_shuffle_groups(bad_off, 2, x, seed, first, o1), o1, nb,
                    "offsets not monotone");
            break;
        case 1:
            bad_off[1] = (int64_t)FC_RNG_MAX_RANGE + 1;
            bad_off[2] = bad_off[1];
            REFUSED(fc_shuffle_groups(bad_off, 2, x, seed, first, o1), o1, nb, "group too long");
            break;
        case 2:
            REFUSED(fc_shuffle_groups(chance(50) ? NULL : off, -irange(1, 3), x, seed, first, o1),
                    o1, nb, "NULL offsets / negative n_groups");
            break;
        default:
            if (off[n_groups] > off[0]) {
                const int which = chance(50);
                REFUSED(fc_shuffle_groups(off, n_groups, which ? NULL : x, seed, first,
                                          which ? o1 : NULL), o1, nb, "NULL x or out");
            }
        }
    }
    free(base);
    free(x);
    free(o1);
    free(o2);
}

static void fuzz_derangement(void)
{
    const int64_t n = chance(5) ? irange(500, 3000) : irange(2, 60);
    int64_t *out = NEW(int64_t, n);
    char *seen = NEW(char, n);
    int64_t i;
    memset(seen, 0, (size_t)n);
    CALL("fc_derangement");
    CHECK(fc_derangement(n, u64(), out) == FC_OK, "valid call refused");
    for (i = 0; i < n; i++) {
        CHECK(out[i] >= 0 && out[i] < n, "entry out of range");
        if (out[i] >= 0 && out[i] < n) {
            CHECK(!seen[out[i]], "not a permutation");
            seen[out[i]] = 1;
        }
        CHECK(out[i] != i, "fixed point");
    }
    poison(out, (size_t)n * sizeof *out);
    switch (u64() % 3) {
    case 0:
        REFUSED(fc_derangement(irange(-5, 1), u64(), out), out, (size_t)n * sizeof *out, "n < 2");
        break;
    case 1:
        REFUSED(fc_derangement((int64_t)FC_RNG_MAX_RANGE + irange(1, 9), u64(), out), out,
                (size_t)n * sizeof *out, "n > FC_RNG_MAX_RANGE");
        break;
    default:
        CHECK(fc_derangement(n, u64(), NULL) < 0, "NULL out accepted");
    }
    free(out);
    free(seen);
}

/* Mean of an arm; *edge = 0 when all outcomes are 0, 1 when all are 1,
 * else -1. */
static double ref_arm_mean(const double *x, int64_t n, int *edge)
{
    double s = 0.0;
    int64_t i;
    int zeros = 1, ones = 1;
    for (i = 0; i < n; i++) {
        s += x[i];
        zeros &= x[i] == 0.0;
        ones &= x[i] == 1.0;
    }
    *edge = zeros ? 0 : ones ? 1 : -1;
    return s / (double)n;
}

static void fuzz_replay(void)
{
    const int64_t n = irange(0, 8);
    int64_t *fb, *ab, nf_total, na_total, t, i;
    const int64_t *fo = csr(n, 1, 10, irange(0, 2), &fb, &nf_total);
    const int64_t *ao = csr(n, 1, 10, irange(0, 2), &ab, &na_total);
    const int kind = (int)(u64() % 3);
    double *fv = NEW(double, nf_total), *av = NEW(double, na_total);
    double *adv = NEW(double, n), *noise = NEW(double, n), *res = NEW(double, n);
    uint8_t *crit = NEW(uint8_t, n);
    double alpha = unit();
    const double threshold = chance(30) ? 0.0 : unit();
    const size_t nb = (size_t)n * sizeof(double);
    int64_t bad = 7;
    if (!(alpha > 0.0)) alpha = 0.5;
    for (i = 0; i < nf_total; i++)
        fv[i] = kind == 0 ? (chance(80) ? 0.0 : 1.0) : kind == 1 ? (double)irange(0, 1) : value(1);
    for (i = 0; i < na_total; i++)
        av[i] = kind == 0 ? (chance(80) ? 0.0 : 1.0) : kind == 1 ? (double)irange(0, 1) : value(1);
    poison(adv, nb);
    poison(noise, nb);
    poison(res, nb);
    poison(crit, (size_t)n);
    CALL("fc_replay_advantage");
    CHECK(fc_replay_advantage(fo, fv, ao, av, n, alpha, threshold, adv, noise, res, crit,
                              &bad) == FC_OK && bad == -1,
          "valid call refused");
    for (t = 0; t < n; t++) {
        const int64_t nf = fo[t + 1] - fo[t], na = ao[t + 1] - ao[t];
        const double *f = fv + fo[t];
        int fz0, az0;
        const double mf = ref_arm_mean(f, nf, &fz0), ma = ref_arm_mean(av + ao[t], na, &az0);
        double ss = 0.0;
        for (i = 0; i < nf; i++) ss += (f[i] - mf) * (f[i] - mf);
        CHECK(same(adv[t], mf - ma), "advantage != mean difference");
        CHECK(crit[t] == (fabs(mf - ma) > threshold), "critical != |advantage| > threshold");
        CHECK(same(noise[t], nf > 1 ? sqrt(ss / (double)(nf - 1)) : NAN), "noise != sd");
        /* both arms all zero, or both all one */
        CHECK(same(res[t], fz0 >= 0 && fz0 == az0
                               ? 1.0 - pow(alpha, 1.0 / (double)(nf < na ? nf : na)) : NAN),
              "resolution != documented bound");
    }
    poison(adv, nb);
    {
        int64_t bad_off[3] = {0, 1, 1};
        const int64_t good_off[3] = {0, 1, 2};
        double one[2] = {0, 0};
        static const double bad_alpha[] = {0.0, 1.0, -0.5, 2.0, NAN, INFINITY};
        static const double bad_threshold[] = {-0.5, -INFINITY, NAN};
        bad = 7;
        switch (u64() % 6) {
        case 0:
            REFUSED(fc_replay_advantage(fo, fv, ao, av, n, bad_alpha[u64() % 6], threshold, adv,
                                        noise, res, crit, &bad),
                    adv, nb, "alpha outside (0, 1)");
            CHECK(bad == -1, "alpha refused as offsets");
            break;
        case 1: /* an empty arm */
            if (chance(50))
                REFUSED(fc_replay_advantage(bad_off, one, good_off, one, 2, 0.5, 0.0, adv, noise,
                                            res, crit, &bad),
                        adv, nb, "empty factual arm");
            else
                REFUSED(fc_replay_advantage(good_off, one, bad_off, one, 2, 0.5, 0.0, adv, noise,
                                            res, crit, &bad),
                        adv, nb, "empty alternative arm");
            CHECK(bad == 1, "empty arm: not step 1");
            break;
        case 2:
            bad_off[1] = 2;
            bad_off[2] = 1;
            REFUSED(fc_replay_advantage(good_off, one, bad_off, one, 2, 0.5, 0.0, adv, noise, res,
                                        crit, &bad), adv,
                    nb, "offsets not monotone");
            CHECK(bad == 1, "offsets not monotone: not step 1");
            break;
        case 3:
            REFUSED(fc_replay_advantage(fo, fv, ao, av, -irange(1, 4), 0.5, 0.0, adv, noise, res,
                                        crit, NULL), adv,
                    nb, "negative n_steps");
            break;
        case 4:
            REFUSED(fc_replay_advantage(fo, fv, ao, av, n, 0.5, bad_threshold[u64() % 3], adv,
                                        noise, res, crit, &bad),
                    adv, nb, "threshold negative or NaN");
            CHECK(bad == -1, "threshold refused as offsets");
            break;
        default:
            if (n > 0) {
                const int which = (int)(u64() % 4);
                REFUSED(fc_replay_advantage(fo, which == 0 ? NULL : fv, ao,
                                            which == 1 ? NULL : av, n, 0.5, 0.0, adv,
                                            which == 2 ? NULL : noise, res,
                                            which == 3 ? NULL : crit, &bad),
                        adv, nb, "NULL values or outputs");
            }
        }
    }
    free(fb);
    free(ab);
    free(fv);
    free(av);
    free(adv);
    free(noise);
    free(res);
    free(crit);
}

/* numpy.quantile(x, q) (method "linear") of x[0..n) without NaN (sorts x) */
static double ref_quantile(double *x, int64_t n, double q)
{
    const double v = (double)(n - 1) * q, j = floor(v);
    const int64_t at = v >= (double)(n - 1) ? n - 1 : (int64_t)j;
    const int64_t next = at + 1 < n ? at + 1 : n - 1;
    const double t = v >= (double)(n - 1) ? v + 1.0 : v - j;
    double d;
    qsort(x, (size_t)n, sizeof *x, by_value);
    d = x[next] - x[at];
    return t >= 0.5 ? x[next] - d * (1.0 - t) : x[at] + d * t;
}

static void fuzz_percentile_interval(void)
{
    const int64_t n_rows = irange(0, 4), n = chance(20) ? irange(100, 600) : irange(1, 12);
    const int specials = chance(30);
    double *reps = doubles(n_rows * n, specials), *work = NEW(double, n_rows * n + 1);
    double *low = NEW(double, n_rows + 1), *high = NEW(double, n_rows + 1);
    double *x = NEW(double, n);
    const double shift = chance(20) ? 0.0 : value(0);
    double q_low = unit(), q_high = unit();
    int64_t g, i;
    if (q_low > q_high) { const double t = q_low; q_low = q_high; q_high = t; }
    if (chance(20)) q_low = 0.0;
    if (chance(20)) q_high = 1.0;
    memcpy(work, reps, (size_t)(n_rows * n) * sizeof(double));
    CALL("fc_percentile_interval");
    CHECK(fc_percentile_interval(work, n_rows, n, shift, q_low, q_high, low, high) == FC_OK,
          "valid call refused");
    for (g = 0; g < n_rows; g++) {
        int nan = 0;
        for (i = 0; i < n; i++) {
            x[i] = reps[g * n + i] - shift;
            nan |= isnan(x[i]);
        }
        CHECK(same_multiset(x, work + g * n, n), "a row's values are not its shifted replicates");
        if (nan) {
            CHECK(isnan(low[g]) && isnan(high[g]), "a row with NaN not NaN");
            continue;
        }
        CHECK(same(low[g], ref_quantile(x, n, q_low)), "low != numpy's linear quantile");
        CHECK(same(high[g], ref_quantile(x, n, q_high)), "high != numpy's linear quantile");
    }
    poison(low, (size_t)(n_rows + 1) * sizeof(double));
    switch (u64() % 3) {
    case 0:
        REFUSED(fc_percentile_interval(work, n_rows + 1, chance(50) ? 0 : -irange(1, 5), shift,
                                       q_low, q_high, low, high),
                low, (size_t)(n_rows + 1) * sizeof(double), "n < 1");
        break;
    case 1:
        REFUSED(fc_percentile_interval(work, n_rows + 1, n, shift, chance(50) ? -0.5 : q_high,
                                       chance(50) ? 1.5 : q_low - 0.25, low, high),
                low, (size_t)(n_rows + 1) * sizeof(double), "quantiles out of order or range");
        break;
    default: {
        const int which = chance(50);
        REFUSED(fc_percentile_interval(which ? NULL : work, n_rows + 1, n, shift, q_low, q_high,
                                       low, which ? high : NULL),
                low, (size_t)(n_rows + 1) * sizeof(double), "NULL reps or high");
    }
    }
    free(reps);
    free(work);
    free(low);
    free(high);
    free(x);
}

static void fuzz_audit(void)
{
    fuzz_bootstrap_median();
    fuzz_bootstrap_mean_diff();
    fuzz_spearman();
    fuzz_shuffle();
    fuzz_derangement();
    fuzz_replay();
    fuzz_percentile_interval();
}

/* ---- sampling ------------------------------------------------------------------------ */

/* The documented Fisher-Yates shuffle of 0..m-1 from `state`. */
static void ref_shuffle(uint64_t *state, int m, int32_t *perm)
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

static void fuzz_permutations(void)
{
    const int m = (int)(chance(3) ? FC_SAMPLING_MAX_PLAYERS : chance(10) ? irange(31, 300)
                                                                        : irange(1, 30));
    const int64_t n_units = irange(0, 4);
    const int64_t first = chance(50) ? irange(0, 100) : irange(0, (int64_t)1 << 50);
    const uint64_t seed = u64(), game = u64();
    int32_t *perms = NEW(int32_t, n_units * m), *want = NEW(int32_t, m);
    const size_t nb = (size_t)(n_units * m) * sizeof(int32_t);
    int64_t u;
    CALL("fc_sampling_permutations");
    CHECK(fc_sampling_permutations(seed, game, first, n_units, m, perms) == FC_OK,
          "valid call refused");
    for (u = 0; u < n_units; u++) {
        uint64_t st = fc_rng_key(fc_rng_key(seed, game), (uint64_t)(first + u));
        ref_shuffle(&st, m, want);
        CHECK(memcmp(perms + u * m, want, (size_t)m * sizeof(int32_t)) == 0,
              "permutation != documented shuffle");
    }
    poison(perms, nb);
    switch (u64() % 4) {
    case 0: {
        static const int bad_m[] = {0, -1, -1000, FC_SAMPLING_MAX_PLAYERS + 1, 1 << 30};
        REFUSED(fc_sampling_permutations(seed, game, first, n_units, bad_m[u64() % 5], perms),
                perms, nb, "bad m");
        break;
    }
    case 1:
        REFUSED(fc_sampling_permutations(seed, game, -irange(1, 9), n_units, m, perms), perms, nb,
                "negative first_unit");
        break;
    case 2:
        REFUSED(fc_sampling_permutations(seed, game, first, -irange(1, 9), m, perms), perms, nb,
                "negative n_units");
        break;
    default:
        CHECK(fc_sampling_permutations(seed, game, first, irange(1, 3), m, NULL) < 0,
              "NULL perms accepted");
    }
    free(perms);
    free(want);
}

/* The documented estimator for one game (table read as double). */
static void ref_estimate(const double *v, int m, uint64_t game_key, int64_t max_walks,
                         int64_t budget, int antithetic, int cache, double tol,
                         int64_t min_samples, double *values, double *se, int64_t *stats)
{
    int32_t perm[FC_MAX_TABLE_PLAYERS];
    double x[FC_MAX_TABLE_PLAYERS], first[FC_MAX_TABLE_PLAYERS];
    double s1[FC_MAX_TABLE_PLAYERS], s2[FC_MAX_TABLE_PLAYERS];
    const int unit_walks = antithetic ? 2 : 1;
    const int64_t unit_cost = unit_walks * (int64_t)(cache ? m - 1 : m + 1);
    const uint64_t full = ((uint64_t)1 << m) - 1;
    int64_t evals = cache ? 2 : 0, n = 0, u;
    int i, k, walk, truncated = 0;
    for (i = 0; i < m; i++) s1[i] = s2[i] = 0.0;
    for (u = 0; u < max_walks / unit_walks; u++) {
        uint64_t st = fc_rng_key(game_key, (uint64_t)u);
        if (evals + unit_cost > budget) {
            truncated = 1;
            break;
        }
        ref_shuffle(&st, m, perm);
        for (i = 0; i < m; i++) x[i] = 0.0;
        for (walk = 0; walk < unit_walks; walk++) {
            /* prefixes of perm (walk 0) or of its reverse (walk 1) */
            uint64_t mask = 0;
            double prev = v[0];
            for (k = 0; k < m; k++) {
                const int p = perm[walk ? m - 1 - k : k];
                double cur;
                mask |= (uint64_t)1 << p;
                cur = mask == full ? v[full] : v[mask];
                x[p] += cur - prev;
                prev = cur;
            }
            evals += cache ? m - 1 : m + 1;
        }
        n++;
        for (i = 0; i < m; i++) {
            const double sample = (antithetic ? 0.5 : 1.0) * x[i];
            if (n == 1) {
                first[i] = sample;
            } else {
                s1[i] += sample - first[i];
                s2[i] += (sample - first[i]) * (sample - first[i]);
            }
        }
        if (tol > 0.0 && n >= min_samples) {
            int done = 1;
            for (i = 0; i < m; i++)
                done &= (s2[i] - s1[i] * s1[i] / (double)n) / ((double)n - 1.0) / (double)n <=
                        tol * tol;
            if (done) break;
        }
    }
    for (i = 0; i < m; i++) {
        const double var = (s2[i] - s1[i] * s1[i] / (double)n) / ((double)n - 1.0);
        values[i] = first[i] + s1[i] / (double)n;
        /* a variance rounded below 0 counts as 0 */
        se[i] = n > 1 ? sqrt((var < 0.0 ? 0.0 : var) / (double)n) : INFINITY;
    }
    stats[FC_STAT_EVALS] = evals;
    stats[FC_STAT_WALKS] = n * unit_walks;
    stats[FC_STAT_SAMPLES] = n;
    stats[FC_STAT_TRUNCATED] = truncated;
}

static void fuzz_permutation_shapley(void)
{
    const int m = (int)irange(1, 10);
    const int64_t n_games = irange(0, 3), len = n_games << m;
    const int antithetic = chance(50), cache = chance(50), specials = chance(15);
    const int unit_walks = antithetic ? 2 : 1;
    const int64_t fixed = cache ? 2 : 0, unit_cost = unit_walks * (int64_t)(cache ? m - 1 : m + 1);
    const int64_t max_walks = unit_walks * (chance(10) ? irange(100, 1000) : irange(1, 12));
    const int64_t budget = chance(20) ? INT64_MAX
                                      : fixed + unit_cost * irange(1, 14) + irange(0, unit_cost);
    const double tol = chance(50) ? 0.0 : chance(20) ? INFINITY : unit() * 2.0;
    const int64_t min_samples = irange(2, 5), first_game = irange(0, (int64_t)1 << 40);
    const uint64_t seed = u64();
    float *v32 = NEW(float, len);
    double *v = NEW(double, len);
    double *val = NEW(double, n_games * m), *se = NEW(double, n_games * m);
    double *val32 = NEW(double, n_games * m), *se32 = NEW(double, n_games * m);
    double rv[FC_MAX_TABLE_PLAYERS], rse[FC_MAX_TABLE_PLAYERS];
    int64_t *st = NEW(int64_t, n_games * FC_STATS), *st32 = NEW(int64_t, n_games * FC_STATS);
    int64_t rst[FC_STATS], j, g;
    const size_t nb = (size_t)(n_games * m) * sizeof(double);
    int i;
    for (j = 0; j < len; j++) {
        v32[j] = (float)value(specials);
        v[j] = (double)v32[j];
    }
    poison(val, nb);
    poison(se, nb);
    CALL("fc_permutation_shapley_f64");
    CHECK(fc_permutation_shapley_f64(v, n_games, m, seed, first_game, max_walks, budget, antithetic,
                                     cache, tol, min_samples, val, se, st) == FC_OK,
          "valid call refused");
    CALL("fc_permutation_shapley_f32");
    CHECK(fc_permutation_shapley_f32(v32, n_games, m, seed, first_game, max_walks, budget,
                                     antithetic, cache, tol, min_samples, val32, se32, st32) ==
              FC_OK, "valid call refused");
    CHECK(same_array(val, val32, n_games * m) && same_array(se, se32, n_games * m) &&
              memcmp(st, st32, (size_t)(n_games * FC_STATS) * sizeof(int64_t)) == 0,
          "f32 != f64");
    for (g = 0; g < n_games; g++) {
        const int64_t *s = st + g * FC_STATS;
        ref_estimate(v + (g << m), m, fc_rng_key(seed, (uint64_t)(first_game + g)), max_walks,
                     budget, antithetic, cache, tol, min_samples, rv, rse, rst);
        CHECK(same_array(val + g * m, rv, m), "estimate != documented estimator");
        CHECK(same_array(se + g * m, rse, m), "stderr != documented estimator");
        CHECK(memcmp(s, rst, sizeof rst) == 0, "stats != documented estimator");
        CHECK(s[FC_STAT_EVALS] <= budget, "evaluations over budget");
        CHECK(s[FC_STAT_SAMPLES] >= 1 && s[FC_STAT_WALKS] == unit_walks * s[FC_STAT_SAMPLES] &&
                  s[FC_STAT_WALKS] <= max_walks,
              "inconsistent counters");
        CHECK(s[FC_STAT_EVALS] == fixed + s[FC_STAT_SAMPLES] * unit_cost, "evaluation count");
        if (!specials) {
            /* each walk's marginals telescope to v(N) - v({}) */
            const double *vg = v + (g << m);
            double sum = 0.0, scale = fabs(vg[((int64_t)1 << m) - 1]) + fabs(vg[0]);
            for (i = 0; i < m; i++) sum += val[g * m + i];
            for (j = 0; j < ((int64_t)1 << m); j++) scale += fabs(vg[j]);
            CHECK(close_to(sum, vg[((int64_t)1 << m) - 1] - vg[0], 1e-12 * scale * m),
                  "estimates do not sum to v(N) - v({})");
        }
        /* a batch split into chunks gives the same numbers */
        if (g == n_games - 1 && g > 0) {
            double cv[FC_MAX_TABLE_PLAYERS], cse[FC_MAX_TABLE_PLAYERS];
            int64_t cst[FC_STATS];
            CHECK(fc_permutation_shapley_f64(v + (g << m), 1, m, seed, first_game + g, max_walks,
                                             budget, antithetic, cache, tol, min_samples, cv, cse,
                                             cst) == FC_OK &&
                      same_array(cv, val + g * m, m) && same_array(cse, se + g * m, m),
                  "chunk != batch");
        }
    }
    poison(val, nb);
    {
        int64_t a_max_walks = max_walks, a_budget = budget, a_min = min_samples, a_first = first_game;
        int64_t a_games = n_games;
        int a_m = m;
        double a_tol = tol;
        switch (u64() % 8) {
        case 0: {
            static const int bad_m[] = {0, -1, 31, 64, -100000};
            a_m = bad_m[u64() % 5];
            break;
        }
        case 1: a_games = -irange(1, 3); break;
        case 2: a_first = -irange(1, 3); break;
        case 3:
            a_max_walks = antithetic && chance(50) ? 2 * irange(0, 5) + 1 : -irange(0, 2) * unit_walks;
            break;
        case 4: a_budget = fixed + unit_cost - irange(1, 3); break;
        case 5: {
            static const double bad_tol[] = {-1.0, -1e-300, NAN};
            a_tol = bad_tol[u64() % 3];
            break;
        }
        case 6: a_min = irange(-2, 1); break;
        default:
            if (n_games > 0) {
                const int which = (int)(u64() % 4);
                REFUSED(fc_permutation_shapley_f64(which == 0 ? NULL : v, n_games, m, seed,
                                                   first_game, max_walks, budget, antithetic,
                                                   cache, tol, min_samples,
                                                   which == 1 ? NULL : val, which == 2 ? NULL : se,
                                                   which == 3 ? NULL : st), val, nb,
                        "NULL table or outputs");
            }
            a_games = -1;
        }
        CALL("fc_permutation_shapley_f64");
        REFUSED(fc_permutation_shapley_f64(v, a_games, a_m, seed, a_first, a_max_walks, a_budget,
                                           antithetic, cache, a_tol, a_min, val, se, st), val, nb,
                "invalid argument");
        CALL("fc_permutation_shapley_f32");
        REFUSED(fc_permutation_shapley_f32(v32, a_games, a_m, seed, a_first, a_max_walks, a_budget,
                                           antithetic, cache, a_tol, a_min, val, se, st), val, nb,
                "invalid argument");
    }
    free(v32);
    free(v);
    free(val);
    free(se);
    free(val32);
    free(se32);
    free(st);
    free(st32);
}

/* The players of `node` in the documented order: its children's lists,
 * the second child's first when its row's bit is set. Returns the next
 * free position of out. */
static int64_t ref_tree_order(const int64_t *children, const int *bit, int m, int64_t node,
                              int32_t *out, int64_t at)
{
    int64_t first, second;
    if (node < m) {
        out[at] = (int32_t)node;
        return at + 1;
    }
    first = children[2 * (node - m) + bit[node - m]];
    second = children[2 * (node - m) + 1 - bit[node - m]];
    return ref_tree_order(children, bit, m, second, out,
                          ref_tree_order(children, bit, m, first, out, at));
}

/* Orders of a random binary tree (nodes joined in a random order), the
 * masked rows and the background average against their definitions. */
static void fuzz_shap_kernels(void)
{
    const int m = (int)irange(1, chance(10) ? 200 : 12);
    const int64_t n_units = irange(0, 4);
    const int64_t first = irange(0, 1000);
    const uint64_t seed = u64(), game = u64();
    int64_t *children = NEW(int64_t, 2 * (m - 1)), *open = NEW(int64_t, m);
    int32_t *perms = NEW(int32_t, n_units * m), *want = NEW(int32_t, m);
    int *bit = NEW(int, m);
    const size_t nb = (size_t)(n_units * m) * sizeof(int32_t);
    int64_t n_open = m, r, u, i;
    for (i = 0; i < m; i++) open[i] = i;
    for (r = 0; r < m - 1; r++) {       /* join two open nodes into node m + r */
        const int64_t a = irange(0, n_open - 1);
        int64_t b = irange(0, n_open - 2);
        if (b >= a) b++;
        children[2 * r] = open[a];
        children[2 * r + 1] = open[b];
        open[a < b ? a : b] = m + r;           /* the new node takes the lower slot, */
        open[a < b ? b : a] = open[--n_open];  /* the last open node the higher one  */
    }
    CALL("fc_sampling_tree_permutations");
    CHECK(fc_sampling_tree_permutations(seed, game, first, n_units, m, children, perms) == FC_OK,
          "valid call refused");
    for (u = 0; u < n_units; u++) {
        uint64_t st = fc_rng_key(fc_rng_key(seed, game), (uint64_t)(first + u));
        for (r = m - 2; r >= 0; r--) bit[r] = (int)(fc_rng_next(&st) >> 63);
        ref_tree_order(children, bit, m, m > 1 ? 2 * m - 2 : 0, want, 0);
        CHECK(memcmp(perms + u * m, want, (size_t)m * sizeof(int32_t)) == 0,
              "tree permutation != documented order");
    }
    poison(perms, nb);
    if (m > 2 && n_units > 0) {
        const int64_t keep = children[0];
        children[0] = children[1];             /* one node joined twice */
        REFUSED(fc_sampling_tree_permutations(seed, game, first, n_units, m, children, perms),
                perms, nb, "node joined twice");
        children[0] = m + irange(0, m);        /* a later row's node, or beyond */
        REFUSED(fc_sampling_tree_permutations(seed, game, first, n_units, m, children, perms),
                perms, nb, "child not an earlier node");
        children[0] = keep;
    }
    REFUSED(fc_sampling_tree_permutations(seed, game, -irange(1, 9), n_units, m, children, perms),
            perms, nb, "negative first_unit");
    free(children);
    free(open);
    free(perms);
    free(want);
    free(bit);

    {
        const int w = (int)irange(1, chance(10) ? FC_MASKED_MAX_FEATURES : 12);
        const int64_t n_b = irange(1, 6), n_x = irange(1, 4), n_c = irange(0, 20), k = irange(1, 3);
        double *background = doubles(n_b * w, 1), *xs = doubles(n_x * w, 1);
        double *rows = NEW(double, n_c * n_b * w), *outputs = doubles(n_c * n_b * k, 1);
        double *weights = doubles(n_b, 0), *means = NEW(double, n_c * k);
        uint64_t *masks = NEW(uint64_t, n_c);
        int64_t *owner = NEW(int64_t, n_c);
        const size_t rb = (size_t)(n_c * n_b * w) * sizeof(double);
        const size_t mb = (size_t)(n_c * k) * sizeof(double);
        int64_t c, b, o;
        int j;
        for (c = 0; c < n_c; c++) {
            masks[c] = w == 64 ? u64() : u64() & (((uint64_t)1 << w) - 1);
            owner[c] = irange(0, n_x - 1);
        }
        poison(rows, rb);
        CALL("fc_masked_rows");
        CHECK(fc_masked_rows(background, n_b, w, xs, n_x, masks, owner, n_c, rows) == FC_OK,
              "valid call refused");
        for (c = 0; c < n_c; c++)
            for (b = 0; b < n_b; b++)
                for (j = 0; j < w; j++)
                    CHECK(memcmp(&rows[(c * n_b + b) * w + j],
                                 masks[c] >> j & 1 ? &xs[owner[c] * w + j] : &background[b * w + j],
                                 sizeof(double)) == 0, "masked row != definition");
        if (n_c > 0) {
            const int64_t at = irange(0, n_c - 1), was = owner[at];
            poison(rows, rb);
            owner[at] = chance(50) ? n_x : -1;
            REFUSED(fc_masked_rows(background, n_b, w, xs, n_x, masks, owner, n_c, rows), rows, rb,
                    "owner out of range");
            owner[at] = was;
            if (w < 64) {
                masks[at] |= (uint64_t)1 << irange(w, 63);
                REFUSED(fc_masked_rows(background, n_b, w, xs, n_x, masks, owner, n_c, rows), rows,
                        rb, "mask beyond m");
            }
        }
        CALL("fc_background_mean");
        for (i = 0; i < 2; i++) {
            const double *wt = i ? weights : NULL;
            CHECK(fc_background_mean(outputs, n_c, n_b, k, wt, means) == FC_OK, "valid call refused");
            for (c = 0; c < n_c; c++)
                for (o = 0; o < k; o++) {
                    double sum = wt ? wt[0] * outputs[c * n_b * k + o] : outputs[c * n_b * k + o];
                    for (b = 1; b < n_b; b++)
                        sum += wt ? wt[b] * outputs[(c * n_b + b) * k + o] : outputs[(c * n_b + b) * k + o];
                    CHECK(same(means[c * k + o], wt ? sum : sum / (double)n_b),
                          "background mean != definition");
                }
        }
        if (n_c > 0) {
            poison(means, mb);
            REFUSED(fc_background_mean(outputs, n_c, 0, k, NULL, means), means, mb, "n_b = 0");
            REFUSED(fc_background_mean(outputs, n_c, n_b, 0, NULL, means), means, mb, "k = 0");
        }
        free(background);
        free(xs);
        free(rows);
        free(outputs);
        free(weights);
        free(means);
        free(masks);
        free(owner);
    }

    {
        /* affordable pairs against a pair-by-pair count with a linear search */
        const int k = (int)irange(2, chance(20) ? FC_MASKED_MAX_FEATURES : 20);
        const int64_t n_rows = irange(0, 3), n_pairs = irange(0, 12), max_evals = irange(2, 300);
        const int64_t every = 2 + 2 * (int64_t)(k - 1) * n_pairs;
        const int64_t need = every < max_evals ? every : max_evals, capacity = need + irange(0, 3);
        const uint64_t full = k == 64 ? ~(uint64_t)0 : ((uint64_t)1 << k) - 1;
        int32_t *orders = NEW(int32_t, n_rows * n_pairs * k);
        uint64_t *found = NEW(uint64_t, n_rows * capacity), *want = NEW(uint64_t, capacity);
        int64_t *pairs = NEW(int64_t, n_rows), *counts = NEW(int64_t, n_rows);
        const size_t fb = (size_t)(n_rows * capacity) * sizeof(uint64_t);
        int64_t r, p, i, t;
        int j;
        for (r = 0; r < n_rows * n_pairs; r++) {
            int32_t *order = orders + r * k;
            for (j = 0; j < k; j++) order[j] = j;
            for (j = k - 1; j > 0; j--) {
                const int at = (int)irange(0, j);
                const int32_t swap = order[j];
                order[j] = order[at];
                order[at] = swap;
            }
        }
        poison(found, fb);
        CALL("fc_affordable_pairs");
        CHECK(fc_affordable_pairs(orders, n_rows, n_pairs, k, max_evals, capacity, pairs, counts,
                                  found) == FC_OK, "valid call refused");
        for (r = 0; r < n_rows; r++) {
            int64_t count = 2, taken = 0;
            want[0] = 0;
            want[1] = full;
            for (p = 0; p < n_pairs; p++) {
                const int32_t *order = orders + (r * n_pairs + p) * k;
                uint64_t keys[2 * (FC_MASKED_MAX_FEATURES - 1)], prefix = 0;
                int64_t fresh = 0;
                for (j = 0; j < k - 1; j++) {
                    prefix |= (uint64_t)1 << order[j];
                    keys[2 * j] = prefix;
                    keys[2 * j + 1] = prefix ^ full;
                }
                for (j = 0; j < 2 * (k - 1); j++) {
                    for (i = 0; i < count && want[i] != keys[j]; i++) {}
                    fresh += i == count;
                }
                if (count + fresh > max_evals) break;
                for (j = 0; j < 2 * (k - 1); j++) {
                    for (i = 0; i < count && want[i] != keys[j]; i++) {}
                    if (i == count) want[count++] = keys[j];
                }
                taken++;
            }
            for (i = 1; i < count; i++)             /* insertion sort */
                for (t = i; t > 0 && want[t - 1] > want[t]; t--) {
                    const uint64_t swap = want[t];
                    want[t] = want[t - 1];
                    want[t - 1] = swap;
                }
            CHECK(pairs[r] == taken && counts[r] == count, "affordable pairs != pair-by-pair count");
            for (i = 0; i < capacity; i++)
                CHECK(found[r * capacity + i] == (i < count ? want[i] : UINT64_MAX),
                      "affordable coalitions != sorted distinct prefixes, then padding");
        }
        if (n_rows > 0 && n_pairs > 0) {
            int32_t *order = orders + irange(0, n_rows * n_pairs - 1) * k;
            const int32_t was = order[0];
            poison(found, fb);
            order[0] = chance(50) ? order[1] : (chance(50) ? k : -1);
            REFUSED(fc_affordable_pairs(orders, n_rows, n_pairs, k, max_evals, capacity, pairs,
                                        counts, found), found, fb, "an order not a permutation");
            order[0] = was;
            REFUSED(fc_affordable_pairs(orders, n_rows, n_pairs, k, max_evals, need - 1, pairs,
                                        counts, found), found, fb, "capacity too small");
        }
        free(orders);
        free(found);
        free(want);
        free(pairs);
        free(counts);
    }
}

static void fuzz_sampling(void)
{
    fuzz_permutations();
    fuzz_permutation_shapley();
    fuzz_shap_kernels();
}

/* ---- shaping ----------------------------------------------------------------------- */

/* Checks z (one row) against the projection's optimality conditions: z in
 * the box, sum w z = total, and one tau with z_i = clip(u_i - tau, lo_i,
 * hi_i) for every i (free coordinates give tau = u_i - z_i, those at a
 * bound a half-line). Returns 0 on a violation. Coordinates of weight 0 are
 * left out: their tau is the documented tie-break (tau nearest 0 of a range
 * of roots), which rounding makes ambiguous on these inputs (see the
 * project_box_zero_weight* probes and tests/test_shaping.py). */
static int kkt_ok(const double *u, const double *lo, const double *hi, int64_t bs, const double *w,
                  double total, const double *z, int64_t m)
{
    double tau_lo = -INFINITY, tau_hi = INFINITY, s = 0.0, mag = fabs(total), scale = 0.0;
    int64_t i;
    for (i = 0; i < m; i++) {
        const double l = lo[i * bs], h = hi[i * bs], wi = w ? w[i] : 1.0;
        if (wi == 0.0) continue;
        if (!(z[i] >= l && z[i] <= h)) return 0;
        s += wi * z[i];
        mag += fabs(wi * z[i]) + fabs(wi * u[i]);
        scale = fmax(scale, fmax(fabs(u[i]), fabs(z[i])));
        if (isfinite(l)) scale = fmax(scale, fabs(l));
        if (isfinite(h)) scale = fmax(scale, fabs(h));
    }
    if (!(fabs(s - total) <= 1e-9 * (mag + 1e-300))) return 0;
    for (i = 0; i < m; i++) {
        const double l = lo[i * bs], h = hi[i * bs];
        if (l == h || (w && w[i] == 0.0)) continue;
        if (z[i] == h) {
            tau_hi = fmin(tau_hi, u[i] - h);
        } else if (z[i] == l) {
            tau_lo = fmax(tau_lo, u[i] - l);
        } else {
            tau_lo = fmax(tau_lo, u[i] - z[i]);
            tau_hi = fmin(tau_hi, u[i] - z[i]);
        }
    }
    return tau_lo <= tau_hi + 1e-9 * (scale + fabs(total)) * (double)m;
}

static void fuzz_projection(void)
{
    const int64_t n_rows = chance(10) ? irange(17, 40) : irange(0, 18);
    const int64_t m = chance(70) ? irange(1, 8) : irange(9, 20);
    const int64_t bcs = chance(50) ? 0 : 1;
    const int64_t brs = chance(30) ? 0 : bcs ? m + irange(0, 2) : irange(1, 3);
    const int with_w = chance(40);
    const int64_t wrs = chance(30) ? 0 : m + irange(0, 2);
    int64_t ts = irange(0, 2);
    const int wild = chance(20);
    const int64_t n_b = n_rows ? (n_rows - 1) * brs + (m - 1) * bcs + 1 : 1;
    const int64_t n_w = n_rows ? (n_rows - 1) * wrs + m : 1;
    const int64_t n_t = n_rows ? (n_rows - 1) * 2 + 1 : 1; /* room for any stride <= 2 */
    double *u = NEW(double, n_rows * m), *lo = NEW(double, n_b), *hi = NEW(double, n_b);
    double *w = with_w ? NEW(double, n_w) : NULL, *tot = NEW(double, n_t);
    double *z = NEW(double, n_rows * m), *z32 = NEW(double, n_rows * m), *z1 = NEW(double, m);
    double *work = NEW(double, 2 * m), *work32 = NEW(double, 3 * m);
    float *u32 = NEW(float, n_rows * m);
    const size_t nb = (size_t)(n_rows * m) * sizeof(double);
    int64_t r, i;

    for (i = 0; i < n_b; i++) {
        lo[i] = chance(15) ? -INFINITY : value(0);
        hi[i] = chance(15) ? INFINITY : chance(5) && isfinite(lo[i]) ? lo[i] : lo[i] + fabs(value(0));
        if (hi[i] == -INFINITY) hi[i] = value(0); /* infinite bounds only open a side */
        if (wild && chance(20)) hi[i] = lo[i] - 1.0; /* infeasible */
        if (wild && chance(5)) lo[i] = NAN;
    }
    if (w)
        for (i = 0; i < n_w; i++) w[i] = chance(15) ? 0.0 : 0.1 + 10.0 * unit();
    for (i = 0; i < n_rows * m; i++) {
        u32[i] = (float)(wild && chance(10) ? value(1) : value(0));
        u[i] = (double)u32[i];
    }
    /* totals inside each row's range [sum_{w>0} w lo, sum_{w>0} w hi];
     * rows sharing one total (stride 0) get the intersection, or per-row
     * totals when it is empty */
    {
        double *rlo = NEW(double, n_rows), *rhi = NEW(double, n_rows);
        double glo = -INFINITY, ghi = INFINITY;
        for (r = 0; r < n_rows; r++) {
            rlo[r] = rhi[r] = 0.0;
            for (i = 0; i < m; i++) {
                const double wi = w ? w[r * wrs + i] : 1.0;
                if (wi > 0.0) {
                    rlo[r] += wi * lo[r * brs + i * bcs];
                    rhi[r] += wi * hi[r * brs + i * bcs];
                }
            }
            glo = fmax(glo, rlo[r]);
            ghi = fmin(ghi, rhi[r]);
        }
        if (ts == 0 && !(glo <= ghi)) ts = 1;
        for (r = 0; r < (ts == 0 ? 1 : n_rows); r++) {
            const double a = ts == 0 ? glo : rlo[r], b = ts == 0 ? ghi : rhi[r];
            double t;
            if (isfinite(a) && isfinite(b)) t = a + unit() * (b - a);
            else if (isfinite(a)) t = a + fabs(value(0));
            else if (isfinite(b)) t = b - fabs(value(0));
            else t = value(0);
            if (!(t >= a)) t = a; /* rounding */
            if (!(t <= b)) t = b;
            tot[r * ts] = wild && chance(20) ? value(1) : t;
        }
        for (i = 0; i < n_t; i++)
            if (ts == 0 ? i > 0 : i % ts != 0 || i / ts >= n_rows) tot[i] = NAN; /* unread */
        free(rlo);
        free(rhi);
    }
    poison(z, nb);
    CALL("fc_project_box_f64");
    CHECK(fc_project_box_f64(u, n_rows, m, lo, hi, brs, bcs, w, wrs, tot, ts, z, work) == FC_OK,
          "valid call refused");
    CALL("fc_project_box_f32");
    CHECK(fc_project_box_f32(u32, n_rows, m, lo, hi, brs, bcs, w, wrs, tot, ts, z32, work32) ==
              FC_OK, "valid call refused");
    CHECK(same_array(z, z32, n_rows * m), "f32 != f64 on the same values");
    for (r = 0; r < n_rows; r++) {
        const double *ur = u + r * m, *zr = z + r * m;
        int finite = 1;
        for (i = 0; i < m; i++) finite &= isfinite(ur[i]) != 0;
        /* a row alone (never the 8-row lanes) gives the same bits */
        CALL("fc_project_box_f64");
        CHECK(fc_project_box_f64(ur, 1, m, lo + r * brs, hi + r * brs, brs, bcs,
                                 w ? w + r * wrs : NULL, wrs, tot + r * ts, ts, z1, work) == FC_OK,
              "valid row refused");
        CHECK(same_array(z1, zr, m), "batch (lanes) != single row");
        if (!finite) {
            for (i = 0; i < m; i++) CHECK(isnan(zr[i]), "non-finite u: row not all NaN");
        } else if (!wild) {
            CHECK(kkt_ok(ur, lo + r * brs, hi + r * brs, bcs, w ? w + r * wrs : NULL, tot[r * ts],
                         zr, m),
                  "not the projection (box, sum or tau violated)");
        }
    }
    poison(z, nb);
    {
        int64_t a_rows = n_rows, a_m = m, a_brs = brs, a_bcs = bcs, a_wrs = wrs, a_ts = ts;
        const double *a_u = u, *a_lo = lo, *a_hi = hi, *a_tot = tot;
        double *a_work = work, *a_z = z;
        switch (u64() % 5) {
        case 0: a_rows = -irange(1, 3); break;
        case 1: a_m = irange(-3, 0); break;
        case 2:
            switch (u64() % 4) {
            case 0: a_brs = -1; break;
            case 1: a_bcs = -1; break;
            case 2: a_wrs = -1; break;
            default: a_ts = -1;
            }
            break;
        default:
            switch (u64() % 6) {
            case 0: a_u = NULL; break;
            case 1: a_lo = NULL; break;
            case 2: a_hi = NULL; break;
            case 3: a_tot = NULL; break;
            case 4: a_work = NULL; break;
            default: a_z = NULL;
            }
        }
        CALL("fc_project_box_f64");
        REFUSED(fc_project_box_f64(a_u, a_rows, a_m, a_lo, a_hi, a_brs, a_bcs, w, a_wrs, a_tot,
                                   a_ts, a_z, a_work), z, nb, "invalid argument");
        CALL("fc_project_box_f32");
        REFUSED(fc_project_box_f32(a_u ? u32 : NULL, a_rows, a_m, a_lo, a_hi, a_brs, a_bcs, w,
                                   a_wrs, a_tot, a_ts, a_z, a_work == work ? work32 : NULL),
                z, nb, "invalid argument");
    }
    free(u);
    free(lo);
    free(hi);
    free(w);
    free(tot);
    free(z);
    free(z32);
    free(z1);
    free(work);
    free(work32);
    free(u32);
}

static void fuzz_tokens(void)
{
    const int64_t n_seq = irange(0, 5), m = chance(10) ? 0 : irange(1, 14);
    const int64_t n_tok = irange(0, 40), n = n_seq * n_tok;
    const int64_t n_work = (m > FC_TOKEN_SELECT_MAX ? m : FC_TOKEN_SELECT_MAX) + 1;
    const int specials = chance(20), masked = chance(50), inject = chance(30);
    double *base = doubles(n_seq, specials), *adv = doubles(n_seq * m, specials);
    int32_t *t32 = NEW(int32_t, n);
    int64_t *t64 = NEW(int64_t, n);
    uint8_t *mask = masked ? NEW(uint8_t, n) : NULL;
    float *o32 = NEW(float, n), *o64 = NEW(float, n), *want = NEW(float, n);
    float *work = NEW(float, n_work);
    const size_t nb = (size_t)n * sizeof(float);
    int64_t i, bad32 = -7, bad64 = -7, first_bad = -1;
    for (i = 0; i < n; i++) {
        t64[i] = irange(-1, m - 1);
        if (mask) mask[i] = chance(30) ? 0 : (uint8_t)irange(1, 255);
    }
    if (inject && n > 0) { /* ids outside [-1, m) at random tokens */
        static const int64_t bad_ids[] = {-2, -3, INT32_MIN, INT32_MAX, INT64_MIN, INT64_MAX};
        int64_t k, count = irange(1, 3);
        for (k = 0; k < count; k++) {
            const int64_t pos = irange(0, n - 1), which = irange(0, 7);
            t64[pos] = which == 6 ? m : which == 7 ? m + irange(1, 1000) : bad_ids[which];
        }
    }
    for (i = 0; i < n; i++) {
        /* the i32 twin holds the same ids (64-bit ones clamped to int32) */
        t32[i] = t64[i] > INT32_MAX ? INT32_MAX : t64[i] < INT32_MIN ? INT32_MIN : (int32_t)t64[i];
        if (first_bad < 0 && (t64[i] < -1 || t64[i] >= m)) first_bad = i;
    }
    for (i = 0; i < n; i++) {
        const int64_t g = i / n_tok, a = t64[i];
        want[i] = mask && !mask[i] ? 0.0f : a == -1 ? (float)base[g]
                                              : a >= 0 && a < m ? (float)adv[g * m + a] : 0.0f;
    }
    poison(o32, nb);
    poison(o64, nb);
    CALL("fc_token_advantages_i32");
    i = fc_token_advantages_i32(base, adv, n_seq, m, t32, n_tok, mask, o32, work, &bad32);
    CHECK(first_bad < 0 ? i == FC_OK && bad32 == -1 : i == FC_EINVAL && bad32 == first_bad,
          "wrong return or *bad");
    CALL("fc_token_advantages_i64");
    i = fc_token_advantages_i64(base, adv, n_seq, m, t64, n_tok, mask, o64, work, &bad64);
    CHECK(first_bad < 0 ? i == FC_OK && bad64 == -1 : i == FC_EINVAL && bad64 == first_bad,
          "wrong return or *bad");
    {
        /* every row (or, on a bad id, every row before its row) as defined */
        const int64_t upto = first_bad < 0 ? n : (first_bad / n_tok) * n_tok;
        CHECK(memcmp(o32, want, (size_t)upto * sizeof(float)) == 0, "i32 values != definition");
        CHECK(memcmp(o64, want, (size_t)upto * sizeof(float)) == 0, "i64 values != definition");
    }
    poison(o32, nb);
    bad32 = -7;
    {
        const double *a_base = base, *a_adv = adv;
        const int32_t *a_t = t32;
        float *a_out = o32, *a_work = work;
        int64_t a_seq = n_seq, a_m = m, a_tok = n_tok, *a_bad = &bad32;
        switch (u64() % 4) {
        case 0: a_seq = -irange(1, 3); break;
        case 1: a_m = -irange(1, 3); break;
        case 2: a_tok = -irange(1, 3); break;
        default:
            switch (u64() % 6) {
            case 0: a_base = NULL; break;
            case 1: a_adv = NULL; break;
            case 2: a_t = NULL; break;
            case 3: a_out = NULL; break;
            case 4: a_work = NULL; break;
            default: a_bad = NULL;
            }
        }
        CALL("fc_token_advantages_i32");
        REFUSED(fc_token_advantages_i32(a_base, a_adv, a_seq, a_m, a_t, a_tok, mask, a_out, a_work,
                                        a_bad), o32, nb, "invalid argument");
        CHECK(bad32 == -7, "*bad written on a structural error");
        CALL("fc_token_advantages_i64");
        REFUSED(fc_token_advantages_i64(a_base, a_adv, a_seq, a_m, a_t ? t64 : NULL, a_tok, mask,
                                        a_out, a_work, a_bad), o32, nb, "invalid argument");
    }
    free(base);
    free(adv);
    free(t32);
    free(t64);
    free(mask);
    free(o32);
    free(o64);
    free(want);
    free(work);
}

static void fuzz_shaping(void)
{
    fuzz_projection();
    fuzz_tokens();
}

/* ---- trees -------------------------------------------------------------------------- */

static void fuzz_actor_credit(void)
{
    const int64_t n = irange(0, 10);
    int64_t *base, total, s, a, bad = -1, first_empty = n, far = n;
    const int64_t *off = csr(n, 0, 6, 0, &base, &total);
    const int specials = chance(15), uniform = chance(50), sample = chance(50);
    double *q = doubles(total, specials), *pi = uniform && chance(50) ? NULL : doubles(total, 0);
    double *credit = NEW(double, total), *bl = NEW(double, n), *sampled = NEW(double, n);
    int64_t *actions = NEW(int64_t, n);
    const size_t cb = (size_t)total * sizeof(double), bb = (size_t)n * sizeof(double);
    const double atol = 1e-12;
    int rc;
    /* pi a policy: |x| / sum |x| at each state (uniform where the sum is 0);
     * the first state whose sum still misses 1 by more than atol, the first
     * without actions (an action index there is illegal) */
    for (s = 0; s < n; s++) {
        const int64_t lo = off[s], hi = off[s + 1];
        double sum = 0.0;
        actions[s] = hi > lo ? irange(0, hi - lo - 1) : 0;
        if (hi == lo && first_empty == n) first_empty = s;
        if (!pi) continue;
        for (a = lo; a < hi; a++) sum += pi[a] = fabs(pi[a]);
        for (a = lo; a < hi; a++) pi[a] = sum > 0 ? pi[a] / sum : 1.0 / (double)(hi - lo);
        for (sum = 0.0, a = lo; a < hi; a++) sum += pi[a];
        if (hi > lo && fabs(sum - 1.0) > atol && far == n) far = s;
    }
    if (uniform) far = n; /* pi not read */
    if (!sample) first_empty = n;
    poison(credit, cb);
    poison(bl, bb);
    CALL("fc_actor_centered_credit");
    rc = fc_actor_centered_credit(q, pi, off, n, uniform, atol, sample ? actions : NULL, credit,
                                  bl, sample ? sampled : NULL, &bad);
    if (far < first_empty) {
        CHECK(rc == FC_CREDIT_NOT_A_POLICY && bad == far, "pi off 1 not refused at its state");
    } else if (first_empty < n) {
        CHECK(rc == FC_CREDIT_ILLEGAL_ACTION && bad == first_empty,
              "the action of an empty state not refused there");
    } else {
        CHECK(rc == FC_OK, "valid call refused");
        for (s = 0; s < n; s++) {
            double b = 0.0;
            for (a = off[s]; a < off[s + 1]; a++) b += uniform ? q[a] : pi[a] * q[a];
            if (uniform && off[s + 1] > off[s]) b /= (double)(off[s + 1] - off[s]);
            CHECK(same(bl[s], b), "baseline != definition");
            for (a = off[s]; a < off[s + 1]; a++)
                CHECK(same(credit[a], q[a] - b), "credit != q - b");
            if (sample) CHECK(same(sampled[s], credit[off[s] + actions[s]]), "sampled != gather");
        }
        if (!uniform && total) {
            const int64_t at = irange(0, total - 1);
            int64_t owner = 0;
            while (off[owner + 1] <= at) owner++;
            pi[at] = chance(50) ? -pi[at] - 1.0 : NAN;
            CHECK(fc_actor_centered_credit(q, pi, off, n, 0, atol, NULL, credit, bl, NULL, &bad)
                  == FC_CREDIT_NOT_A_POLICY && bad == owner, "negative or NaN pi not refused");
        }
    }
    poison(credit, cb);
    poison(bl, bb);
    {
        int64_t three_off[3] = {1, 2, 3};
        double three[3] = {1, 2, 3};
        switch (u64() % 6) {
        case 0: /* offsets[0] != 0 (this kernel takes no slices) */
            REFUSED(fc_actor_centered_credit(three, three, three_off, 2, uniform, atol, NULL,
                                             credit, bl, NULL, &bad), credit, cb,
                    "offsets[0] != 0");
            break;
        case 1:
            three_off[0] = 0;
            three_off[1] = 3;
            three_off[2] = 2;
            REFUSED(fc_actor_centered_credit(three, three, three_off, 2, uniform, atol, NULL,
                                             credit, bl, NULL, &bad), credit, cb,
                    "offsets not monotone");
            break;
        case 2:
            REFUSED(fc_actor_centered_credit(q, pi, off, -irange(1, 3), uniform, atol, NULL,
                                             credit, bl, NULL, &bad), credit, cb,
                    "negative n_states");
            break;
        case 3:
            REFUSED(fc_actor_centered_credit(q, NULL, off, n, 0, atol, NULL, credit, bl, NULL,
                                             &bad), credit, cb, "pi NULL without uniform");
            break;
        case 4:
            REFUSED(fc_actor_centered_credit(q, pi, off, n, uniform, chance(50) ? -atol : NAN,
                                             NULL, credit, bl, NULL, &bad), credit, cb,
                    "atol negative or NaN");
            break;
        default: {
            const int which = (int)(u64() % 6);
            REFUSED(fc_actor_centered_credit(which == 0 ? NULL : q, pi, which == 1 ? NULL : off, n,
                                             uniform, atol, which == 4 ? actions : NULL,
                                             which == 2 ? NULL : credit, which == 3 ? NULL : bl,
                                             NULL, which == 5 ? NULL : &bad), credit, cb,
                    "NULL array, or actions without sampled");
        }
        }
        CHECK(untouched(bl, bb), "baseline written before refusing");
    }
    free(actions);
    free(sampled);
    free(base);
    free(q);
    free(pi);
    free(credit);
    free(bl);
}

/* The documented allocation rule; -1 when no score compares equal to the
 * best (NaN scores). */
static int64_t ref_pick(int rule, int64_t n, const int64_t *counts, const double *sums,
                        const double *costs, double c, double c_tok, uint64_t seed, uint64_t step)
{
    int64_t a, total = 0, untried = 0, ties = 0, pick;
    double best = -INFINITY, *score = NEW(double, n);
    uint64_t st;
    for (a = 0; a < n; a++) {
        total += counts[a];
        untried += counts[a] == 0;
    }
    for (a = 0; a < n; a++) {
        const double pen = rule == FC_ALLOC_AGENT_UCT ? c_tok * costs[a] : 0.0;
        if (rule == FC_ALLOC_UNIFORM)
            score[a] = -(double)counts[a];
        else if (counts[a] == 0)
            score[a] = rule == FC_ALLOC_AGENT_UCT ? -pen : INFINITY;
        else if (untried)
            score[a] = NAN; /* not eligible */
        else
            score[a] = sums[a] / (double)counts[a] +
                       c * sqrt(log((double)total + 1.0) / (double)counts[a]) - pen;
    }
    for (a = 0; a < n; a++) {
        const int eligible = rule == FC_ALLOC_UNIFORM || !untried || counts[a] == 0;
        if (!eligible) continue;
        if (score[a] > best || ties == 0) {
            best = score[a];
            ties = 1;
        } else if (score[a] == best) {
            ties++;
        }
    }
    st = fc_rng_key(seed, step);
    pick = (int64_t)fc_rng_below(&st, (uint64_t)ties);
    for (a = 0; a < n; a++) {
        const int eligible = rule == FC_ALLOC_UNIFORM || !untried || counts[a] == 0;
        if (eligible && score[a] == best && pick-- == 0) break;
    }
    free(score);
    return a < n ? a : -1;
}

static void fuzz_allocation(void)
{
    const int rule = (int)irange(0, 2);
    const int64_t n = chance(5) ? irange(100, 2000) : irange(1, 12);
    const int ties = chance(60), specials = chance(10);
    int64_t *counts = NEW(int64_t, n), choice = -7, a;
    double *sums = NEW(double, n), *costs = rule == FC_ALLOC_AGENT_UCT || chance(50)
                                                ? NEW(double, n) : NULL;
    const double c = chance(30) ? 0.0 : ties ? (double)irange(0, 2) : 3.0 * unit();
    const double c_tok = chance(30) ? 0.0 : ties ? (double)irange(0, 2) : 3.0 * unit();
    const uint64_t seed = u64(), step = u64();
    int rc;
    for (a = 0; a < n; a++) {
        counts[a] = chance(20) ? 0 : ties ? irange(1, 3) : chance(5) ? irange(1, (int64_t)1 << 40)
                                                                     : irange(1, 100);
        sums[a] = ties ? (double)(counts[a] * irange(0, 2)) : value(specials);
        if (costs) costs[a] = ties ? (double)irange(0, 2) : fabs(value(specials));
    }
    CALL("fc_allocation_pick");
    rc = fc_allocation_pick(rule, n, counts, sums, costs, c, c_tok, seed, step, &choice);
    {
        const int64_t want = ref_pick(rule, n, counts, sums, costs, c, c_tok, seed, step);
        if (want >= 0)
            CHECK(rc == FC_OK && choice == want, "choice != documented rule");
        else /* NaN scores (not covered by the contract): refused, not an arbitrary pick */
            CHECK(rc == FC_EINVAL && choice == -7, "NaN scores: neither a pick nor a refusal");
    }
    {
        /* tell-and-pick: the trial told added (a value that is not finite
         * refused before), then the documented rule on the counts and sums
         * it leaves; told outside -1 .. n-1 refused before anything */
        const int64_t told = irange(-1, n - 1), away = chance(50) ? -2 - irange(0, 5)
                                                                  : n + irange(0, 5);
        const double v = value(specials);
        const int64_t c0 = told >= 0 ? counts[told] : 0;
        const double s0 = told >= 0 ? sums[told] : 0.0;
        choice = -7;
        CALL("fc_allocation_tell_pick");
        rc = fc_allocation_tell_pick(rule, n, counts, sums, costs, c, c_tok, seed, step, told, v,
                                     &choice);
        if (told >= 0 && !isfinite(v)) {
            CHECK(rc == FC_EINVAL && choice == -7 && counts[told] == c0 && same(sums[told], s0),
                  "tell-and-pick: a value that is not finite not refused unwritten");
        } else {
            const int64_t want = ref_pick(rule, n, counts, sums, costs, c, c_tok, seed, step);
            if (told >= 0)
                CHECK(counts[told] == c0 + 1 && same(sums[told], s0 + v),
                      "tell-and-pick: the trial told not added");
            if (want >= 0)
                CHECK(rc == FC_OK && choice == want, "tell-and-pick: choice != documented rule");
            else
                CHECK(rc == FC_EINVAL && choice == -7,
                      "tell-and-pick, NaN scores: neither a pick nor a refusal");
        }
        choice = -7;
        REFUSED(fc_allocation_tell_pick(rule, n, counts, sums, costs, c, c_tok, seed, step, away,
                                        1.0, &choice), &choice, 0, "told outside -1 .. n-1");
        CHECK(choice == -7, "tell-and-pick: choice written before refusing");
    }
    choice = -7;
    {
        int a_rule = rule;
        int64_t a_n = n;
        const int64_t *a_counts = counts;
        const double *a_sums = sums, *a_costs = costs;
        int64_t *a_choice = &choice, saved = 0, where = -1;
        switch (u64() % 5) {
        case 0: a_rule = chance(50) ? -1 : (int)irange(3, 100); break;
        case 1: a_n = chance(50) ? irange(-3, 0) : (int64_t)FC_RNG_MAX_RANGE + irange(1, 9); break;
        case 2:
            where = irange(0, n - 1);
            saved = counts[where];
            counts[where] = -irange(1, 1000);
            break;
        case 3:
            if (rule == FC_ALLOC_AGENT_UCT) {
                a_costs = NULL;
                break;
            }
            /* fall through */
        default:
            switch (u64() % 3) {
            case 0: a_counts = NULL; break;
            case 1: a_sums = NULL; break;
            default: a_choice = NULL;
            }
        }
        REFUSED(fc_allocation_pick(a_rule, a_n, a_counts, a_sums, a_costs, c, c_tok, seed, step,
                                   a_choice), &choice, 0, "invalid argument");
        CHECK(choice == -7, "choice written before refusing");
        if (where >= 0) counts[where] = saved;
    }
    free(counts);
    free(sums);
    free(costs);
}

static void fuzz_trees(void)
{
    fuzz_actor_credit();
    fuzz_allocation();
}

/* ---- auction ------------------------------------------------------------------------ */

typedef struct {
    const int64_t *ad;
    const double *score, *value, *prerank;
} Pools;

static const Pools *rank_of;

/* Instances in the documented total order: score desc, ad_id asc, index asc. */
static int by_rank(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    const double sx = rank_of->score[x], sy = rank_of->score[y];
    if (sx != sy) return sx > sy ? -1 : 1;
    if (rank_of->ad[x] != rank_of->ad[y]) return rank_of->ad[x] < rank_of->ad[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* The documented pipeline on the pool of the actions in S (of one request
 * with per-action offsets off[0..m]): writes the ranked ads' kept instances
 * to inst, their masks to mask and earnings to earn; returns how many. */
static int64_t ref_pipeline(const Pools *P, const int64_t *off, int m, int64_t S, double reserve,
                            int64_t capacity, int gsp, int64_t *inst, int64_t *mask, double *earn,
                            int64_t *scratch)
{
    int64_t n = 0, k = 0, j, q, x;
    int i;
    for (i = 0; i < m; i++)
        if (S >> i & 1)
            for (x = off[i]; x < off[i + 1]; x++) scratch[n++] = x;
    rank_of = P;
    qsort(scratch, (size_t)n, sizeof *scratch, by_rank);
    /* dedup by ad: the first instance in rank order stays; masks OR the
     * actions of S that retrieved the ad */
    for (j = 0; j < n; j++) {
        const int64_t xj = scratch[j];
        int act = 0;
        while (!(xj >= off[act] && xj < off[act + 1])) act++;
        for (q = 0; q < k && P->ad[inst[q]] != P->ad[xj]; q++) {}
        if (q == k) {
            inst[k] = xj;
            mask[k++] = 0;
        }
        mask[q] |= (int64_t)1 << act;
    }
    /* capacity: keep the `capacity` ads of highest prerank (ties: ad asc) */
    if (capacity > 0 && k > capacity) {
        int64_t kept = 0;
        for (j = 0; j < k; j++) {
            const double pj = P->prerank ? P->prerank[inst[j]] : P->score[inst[j]];
            int64_t better = 0;
            for (q = 0; q < k; q++) {
                const double pq = P->prerank ? P->prerank[inst[q]] : P->score[inst[q]];
                better += pq > pj || (pq == pj && P->ad[inst[q]] < P->ad[inst[j]]);
            }
            scratch[j] = better < capacity;
        }
        for (j = 0; j < k; j++)
            if (scratch[j]) {
                inst[kept] = inst[j];
                mask[kept++] = mask[j];
            }
        k = kept;
    }
    /* rank order is kept; drop ads below the reserve */
    for (j = q = 0; j < k; j++)
        if (P->score[inst[j]] >= reserve) {
            inst[q] = inst[j];
            mask[q++] = mask[j];
        }
    k = q;
    for (j = 0; j < k; j++) {
        const double s = P->score[inst[j]], next = j + 1 < k ? P->score[inst[j + 1]] : reserve;
        earn[j] = gsp ? fmin(s, fmax(reserve, next)) : P->value[inst[j]];
    }
    return k;
}

static void fuzz_auction(void)
{
    const int m = (int)(chance(3) ? irange(11, 16) : chance(10) ? irange(6, 10) : irange(1, 5));
    const int64_t n_req = irange(0, 4), n_masks = (int64_t)1 << m;
    const int with_win = m <= 12 && chance(50), gsp = chance(50), rerun = chance(50);
    const int64_t slots = !with_win && chance(5) ? irange(1000, (int64_t)1 << 40) : irange(1, 4);
    const int64_t capacity = chance(50) ? 0 : chance(10) ? irange(100, (int64_t)1 << 40)
                                                         : irange(1, 6);
    const int64_t n_ads = irange(1, 10), lead = irange(0, 3);
    const int score_ties = chance(50), with_prerank = chance(50), big_ids = chance(10);
    const int64_t start = irange(0, n_req), stop = irange(start, n_req);
    double reserve;
    int64_t *off = NEW(int64_t, n_req * m + 1), n_values, j, r, S, q;
    int64_t *ad;
    double *score, *val, *pre, *y;
    int64_t *win_ad = NULL;
    double *win_earn = NULL;
    Pools P;
    switch (u64() % 6) {
    case 0: reserve = -INFINITY; break;
    case 1: reserve = chance(50) ? INFINITY : 0.0; break;
    case 2: reserve = (double)irange(-1, 3); break;
    default: reserve = value(0);
    }
    off[0] = lead; /* instances before the first request's */
    for (j = 0; j < n_req * m; j++)
        off[j + 1] = off[j] + (m > 10 ? irange(0, 2) : chance(10) ? irange(6, 20) : irange(0, 5));
    n_values = off[n_req * m] + irange(0, 2);
    ad = NEW(int64_t, n_values);
    score = NEW(double, n_values);
    val = NEW(double, n_values);
    pre = with_prerank ? NEW(double, n_values) : NULL;
    for (j = 0; j < n_values; j++) {
        ad[j] = big_ids ? (chance(50) ? INT64_MIN + irange(0, 3) : INT64_MAX - irange(0, 3))
                        : irange(0, n_ads - 1);
        score[j] = score_ties ? (double)irange(0, 4) : value(0);
        val[j] = value(chance(10));
        if (pre) pre[j] = chance(50) ? (double)irange(0, 3) : value(0);
    }
    y = NEW(double, n_req * n_masks);
    poison(y, (size_t)(n_req * n_masks) * sizeof *y);
    if (with_win) {
        win_ad = NEW(int64_t, n_req * n_masks * slots);
        win_earn = NEW(double, n_req * n_masks * slots);
        poison(win_ad, (size_t)(n_req * n_masks * slots) * sizeof *win_ad);
        poison(win_earn, (size_t)(n_req * n_masks * slots) * sizeof *win_earn);
    }
    CALL("fc_auction_replay");
    CHECK(fc_auction_replay(off, ad, score, val, pre, n_values, n_req, m, start, stop, slots,
                            reserve, capacity, gsp ? FC_PRICING_GSP : FC_PRICING_FIRST,
                            rerun ? FC_MODE_RERUN : FC_MODE_FILTER, y, win_ad, win_earn) == FC_OK,
          "valid call refused");
    /* rows outside [start, stop) untouched */
    CHECK(untouched(y, (size_t)(start * n_masks) * sizeof *y) &&
              untouched(y + stop * n_masks, (size_t)((n_req - stop) * n_masks) * sizeof *y),
          "wrote a row outside [start, stop)");
    if (with_win)
        CHECK(untouched(win_ad, (size_t)(start * n_masks * slots) * sizeof *win_ad) &&
                  untouched(win_ad + stop * n_masks * slots,
                            (size_t)((n_req - stop) * n_masks * slots) * sizeof *win_ad),
              "wrote winners outside [start, stop)");
    P.ad = ad;
    P.score = score;
    P.value = val;
    P.prerank = pre;
    if (m <= 12) {
        const int64_t most = n_values;
        int64_t *inst = NEW(int64_t, most), *mask = NEW(int64_t, most), *scratch = NEW(int64_t, most);
        int64_t *finst = NEW(int64_t, most), *fmask = NEW(int64_t, most);
        double *earn = NEW(double, most), *fearn = NEW(double, most);
        for (r = start; r < stop; r++) {
            const int64_t *o = off + r * m;
            const int64_t nf = ref_pipeline(&P, o, m, n_masks - 1, reserve, capacity, gsp, finst,
                                            fmask, fearn, scratch);
            int ok = 1, win_ok = 1;
            for (S = 0; S < n_masks; S++) {
                int64_t k, taken = 0, wa[4];
                double want = 0.0, we[4];
                if (S == 0) {
                    k = 0;
                } else if (rerun) {
                    k = ref_pipeline(&P, o, m, S, reserve, capacity, gsp, inst, mask, earn,
                                     scratch);
                    for (q = 0; q < k && taken < slots; q++, taken++) {
                        want += earn[q];
                        if (taken < 4) {
                            wa[taken] = ad[inst[q]];
                            we[taken] = earn[q];
                        }
                    }
                } else {
                    for (q = 0; q < nf && taken < slots; q++)
                        if (fmask[q] & S) {
                            want += fearn[q];
                            if (taken < 4) {
                                wa[taken] = ad[finst[q]];
                                we[taken] = fearn[q];
                            }
                            taken++;
                        }
                }
                ok &= same(y[r * n_masks + S], S ? want : 0.0);
                if (with_win)
                    for (q = 0; q < slots; q++) {
                        const int64_t at = (r * n_masks + S) * slots + q;
                        win_ok &= q < taken ? win_ad[at] == wa[q] && same(win_earn[at], we[q])
                                            : win_ad[at] == -1 && win_earn[at] == 0.0;
                    }
            }
            CHECK(ok, rerun ? "y(S) != the pipeline on pool(S)"
                            : "y(S) != the first slots of the full pool meeting S");
            CHECK(win_ok, "winners != the documented winners");
        }
        free(inst);
        free(mask);
        free(scratch);
        free(finst);
        free(fmask);
        free(earn);
        free(fearn);
    }
    /* invalid calls */
    poison(y, (size_t)(n_req * n_masks) * sizeof *y);
    {
        int a_m = m, a_pricing = gsp, a_mode = rerun;
        int64_t a_req = n_req, a_start = start, a_stop = stop, a_slots = slots, a_cap = capacity;
        int64_t a_nv = n_values, saved_off = 0, which_off = -1;
        double a_res = reserve;
        const int64_t *a_ad = ad;
        const double *a_score = score, *a_val = val;
        double *a_y = y, *a_we = win_earn;
        int64_t *a_wa = win_ad;
        switch (u64() % 10) {
        case 0: a_m = chance(50) ? (int)irange(-2, 0) : (int)irange(17, 64); break;
        case 1: a_slots = chance(70) ? irange(-2, 0) : INT64_MAX / 4 / n_masks + 1; break;
        case 2: a_cap = -irange(1, 5); break;
        case 3: a_res = NAN; break;
        case 4:
            if (chance(50)) a_pricing = chance(50) ? -1 : 2; else a_mode = chance(50) ? -1 : 2;
            break;
        case 5:
            switch (u64() % 4) {
            case 0: a_start = -irange(1, 3); break;
            case 1: a_stop = n_req + irange(1, 3); break;
            case 2: a_req = m >= 2 && chance(50) ? INT64_MAX : -1; break;
            default:
                a_start = stop + 1;
                a_stop = stop;
            }
            break;
        case 6:
            if (stop > start) { /* offsets of the range: not monotone, or past n_values */
                if (chance(50)) {
                    which_off = irange(start * m, stop * m - 1) + 1;
                    saved_off = off[which_off];
                    off[which_off] = off[which_off - 1] - irange(1, 3);
                } else {
                    a_nv = off[stop * m] - irange(1, 3);
                }
            } else {
                a_nv = -1;
            }
            break;
        case 7:
            if (chance(50)) a_wa = a_wa ? NULL : (int64_t *)off; else a_we = a_we ? NULL : val;
            if (stop == start) a_start = -1;
            break;
        case 8:
            switch (u64() % 4) {
            case 0: a_ad = NULL; break;
            case 1: a_score = NULL; break;
            case 2: a_val = NULL; break;
            default: a_y = NULL;
            }
            break;
        default:
            which_off = start * m;
            saved_off = off[which_off];
            off[which_off] = -irange(1, 3); /* offsets[start * m] < 0 */
            if (stop == start) a_start = -1;
        }
        REFUSED(fc_auction_replay(off, a_ad, a_score, a_val, pre, a_nv, a_req, a_m, a_start, a_stop,
                                  a_slots, a_res, a_cap, a_pricing, a_mode, a_y, a_wa, a_we),
                y, (size_t)(n_req * n_masks) * sizeof *y, "invalid argument");
        if (which_off >= 0) off[which_off] = saved_off;
        CHECK(fc_auction_replay(NULL, ad, score, val, pre, n_values, n_req, m, start, stop, slots,
                                reserve, capacity, gsp, rerun, y, NULL, NULL) < 0,
              "NULL offsets accepted");
    }
    free(off);
    free(ad);
    free(score);
    free(val);
    free(pre);
    free(y);
    free(win_ad);
    free(win_earn);
}

/* ---- synthetic ------------------------------------------------------------------------- */

#ifdef FASTCREDIT_SYNTHETIC_H
/* The documented generator (synthetic.h), one IEEE operation at a time in
 * the documented order, with the C library's log, exp, sin and cos: the
 * kernel's own few-ulp versions of them give scores and preranks within a
 * relative 1e-12 of these (near_or_same), every other output bit for bit. */
static int64_t ref_length(uint64_t *state, int64_t k, double empty, double short_frac)
{
    const double u = fc_rng_uniform(state);
    if (u < empty) return 0;
    if (u < empty + short_frac) return 1 + (int64_t)fc_rng_below(state, (uint64_t)(k / 2 > 1 ? k / 2 : 1));
    return k;
}

static void ref_fill_row(uint64_t seed, int64_t q, int m, int64_t topics, int64_t per_topic,
                         const double *bid, const double *ctr, double noise, int expected,
                         const int64_t *o, int64_t *ad, double *score, double *value, double *pre)
{
    uint64_t st = fc_rng_key(seed, 3 * (uint64_t)q + 1);
    const uint64_t clicks = fc_rng_key(seed, 3 * (uint64_t)q + 2);
    const double uh = fc_rng_uniform(&st);
    int64_t home = (int64_t)((double)topics * uh * uh), x;
    int i;
    if (home > topics - 1) home = topics - 1;
    for (i = 0; i < m; i++) {
        const int64_t drift = (int64_t)fc_rng_below(&st, (uint64_t)topics);
        const double keep = 0.5 + 0.45 * fc_rng_uniform(&st);
        for (x = o[i]; x < o[i + 1]; x++) {
            const double ut = fc_rng_uniform(&st), ur = fc_rng_uniform(&st);
            const double u1 = fc_rng_uniform(&st), u2 = fc_rng_uniform(&st);
            const int on = ut < keep;
            int64_t rank = (int64_t)((double)per_topic * ur * sqrt(ur)), a;
            double rho, pctr;
            uint64_t cs;
            if (rank > per_topic - 1) rank = per_topic - 1;
            a = (on ? home : drift) * per_topic + rank;
            rho = sqrt(-2.0 * log1p(-u1));
            pctr = ctr[a] * exp(noise * (rho * cos(2.0 * 3.14159265358979323846 * u2))) *
                   (on ? 1.0 : 0.4);
            if (pctr > 1.0) pctr = 1.0;
            ad[x] = a;
            score[x] = bid[a] * pctr;
            pre[x] = log(score[x]) + 0.5 * (rho * sin(2.0 * 3.14159265358979323846 * u2));
            cs = clicks ^ fc_mix64((uint64_t)a);
            value[x] = expected ? score[x] : fc_rng_uniform(&cs) < ctr[a] ? bid[a] : 0.0;
        }
    }
}

/* Each a[i] is b[i] to the bit, or both finite within 1e-12 max(1, |a|, |b|). */
static int near_or_same_abs(const double *a, const double *b, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) {
        if (memcmp(a + i, b + i, sizeof *a) == 0) continue;
        if (!isfinite(a[i]) || !isfinite(b[i]) ||
            fabs(a[i] - b[i]) > 1e-12 * fmax(1.0, fmax(fabs(a[i]), fabs(b[i]))))
            return 0;
    }
    return 1;
}

/* Each a[i] is b[i] to the bit, or both finite within a relative 1e-12. */
static int near_or_same(const double *a, const double *b, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) {
        if (memcmp(a + i, b + i, sizeof *a) == 0) continue;
        if (!isfinite(a[i]) || !isfinite(b[i]) ||
            fabs(a[i] - b[i]) > 1e-12 * fmax(fabs(a[i]), fabs(b[i])))
            return 0;
    }
    return 1;
}

static void fuzz_synthetic(void)
{
    const int m = (int)(chance(10) ? irange(7, FC_AUCTION_MAX_ACTIONS) : irange(1, 6));
    const int64_t n_rows = irange(0, 5), start = irange(0, n_rows), stop = irange(start, n_rows);
    const int64_t k = chance(5) ? irange(1000, (int64_t)FC_RNG_MAX_RANGE) : irange(1, 12);
    const int64_t first = chance(20) ? (int64_t)FC_SYNTHETIC_MAX_INDEX - n_rows - irange(0, 3)
                                     : irange(0, (int64_t)1 << 40);
    const int64_t topics = irange(1, 6), per_topic = irange(1, 7), n_cat = topics * per_topic;
    const uint64_t seed = u64();
    double empty = chance(20) ? 0.0 : unit(), short_frac = chance(20) ? 0.0 : unit() * (1.0 - empty);
    const double noise = chance(10) ? 0.0 : chance(10) ? FC_SYNTHETIC_MAX_NOISE : 3.0 * unit();
    const int expected = (int)irange(0, 1) * (chance(50) ? 1 : 7);   /* any nonzero int */
    int64_t *len = NEW(int64_t, n_rows * m), *off = NEW(int64_t, n_rows * m + 1);
    double *bid = NEW(double, n_cat), *ctr = NEW(double, n_cat);
    int64_t n_values, r, i, j, *ad, *rad;
    double *score, *value, *pre, *rs, *rv, *rp;
    const size_t lb = (size_t)(n_rows * m) * sizeof(int64_t);
    if (chance(10)) empty = 1.0 - short_frac; /* the sum at its bound 1 */
    poison(len, lb);
    CALL("fc_synthetic_search_lengths");
    CHECK(fc_synthetic_search_lengths(seed, first, m, k, empty, short_frac, len, start, stop) ==
              FC_OK, "valid call refused");
    CHECK(untouched(len, (size_t)(start * m) * sizeof(int64_t)) &&
              untouched(len + stop * m, (size_t)((n_rows - stop) * m) * sizeof(int64_t)),
          "wrote a row outside [start, stop)");
    for (r = start; r < stop; r++) {
        uint64_t st = fc_rng_key(seed, 3 * (uint64_t)(first + r));
        for (i = 0; i < m; i++)
            CHECK(len[r * m + i] == ref_length(&st, k, empty, short_frac),
                  "length != documented draws");
    }
    /* fill: lists of the drawn lengths (capped) after `lead` unused values */
    off[0] = irange(0, 3);
    for (j = 0; j < n_rows * m; j++) {
        const int64_t l = j >= start * m && j < stop * m ? len[j] : irange(0, 3);
        off[j + 1] = off[j] + (l < 8 ? l : irange(0, 8));
    }
    n_values = off[n_rows * m] + irange(0, 2);
    for (j = 0; j < n_cat; j++) {
        bid[j] = chance(20) ? (double)irange(1, 3) : 0.01 + 10.0 * unit();
        ctr[j] = chance(15) ? 0.0 : chance(15) ? 1.0 : unit();
    }
    ad = NEW(int64_t, n_values);
    score = NEW(double, n_values);
    value = NEW(double, n_values);
    pre = NEW(double, n_values);
    rad = NEW(int64_t, n_values);
    rs = NEW(double, n_values);
    rv = NEW(double, n_values);
    rp = NEW(double, n_values);
    poison(ad, (size_t)n_values * sizeof *ad);
    poison(score, (size_t)n_values * sizeof *score);
    memcpy(rad, ad, (size_t)n_values * sizeof *ad);
    memcpy(rs, score, (size_t)n_values * sizeof *score);
    poison(value, (size_t)n_values * sizeof *value);
    poison(pre, (size_t)n_values * sizeof *pre);
    memcpy(rv, value, (size_t)n_values * sizeof *value);
    memcpy(rp, pre, (size_t)n_values * sizeof *pre);
    CALL("fc_synthetic_search_fill");
    CHECK(fc_synthetic_search_fill(seed, first, m, topics, per_topic, bid, ctr, noise, expected,
                                   off, n_values, ad, score, value, pre, start, stop,
                                   NULL) == FC_OK,
          "valid call refused");
    for (r = start; r < stop; r++)
        ref_fill_row(seed, first + r, m, topics, per_topic, bid, ctr, noise, expected,
                     off + r * m, rad, rs, rv, rp);
    /* the reference leaves the other values poisoned, as the kernel must */
    CHECK(memcmp(ad, rad, (size_t)n_values * sizeof *ad) == 0, "ad != documented generator");
    CHECK(near_or_same(score, rs, n_values), "score != documented generator");
    /* expected values are scores, which the reference computes by libm */
    CHECK(expected ? near_or_same(value, rv, n_values)
                   : memcmp(value, rv, (size_t)n_values * sizeof *rv) == 0,
          "value != documented generator");
    /* prerank = log(score) + 0.5 z2 may cancel to near 0: an absolute bound */
    CHECK(near_or_same_abs(pre, rp, n_values), "prerank != documented generator");
    /* invalid calls */
    poison(len, lb);
    poison(value, (size_t)n_values * sizeof *value);
    {
        int a_m = m;
        int64_t a_k = k, a_first = first, a_start = start, a_stop = stop, a_topics = topics;
        int64_t a_per = per_topic, a_nv = n_values, which_off = -1, saved = 0;
        double a_empty = empty, a_short = short_frac, a_noise = noise;
        int64_t *a_len = len;
        const double *a_bid = bid, *a_ctr = ctr;
        switch (u64() % 9) {
        case 0: a_m = chance(50) ? (int)irange(-2, 0) : (int)irange(17, 40); break;
        case 1: a_first = chance(50) ? -irange(1, 3) : (int64_t)FC_SYNTHETIC_MAX_INDEX + 1; break;
        case 2:
            if (chance(50)) {
                a_start = stop + 1;
            } else {
                a_start = -1;
            }
            break;
        case 3: a_stop = (int64_t)FC_SYNTHETIC_MAX_INDEX + irange(1, 3); break;
        case 4: a_len = NULL; a_bid = NULL; break;
        case 5: a_ctr = NULL; a_k = chance(50) ? irange(-2, 0) : (int64_t)FC_RNG_MAX_RANGE + 1; break;
        case 6:
            switch (u64() % 3) {
            case 0: a_empty = chance(50) ? -0.25 : NAN; break;
            case 1: a_short = chance(50) ? -1e-300 : NAN; break;
            default: a_empty = 0.75; a_short = 0.5;
            }
            a_topics = chance(50) ? 0 : (int64_t)FC_RNG_MAX_RANGE + 1;
            break;
        case 7:
            a_per = -irange(0, 2);
            a_k = 0;
            if (chance(50)) a_noise = chance(50) ? -0.5 : chance(50) ? NAN : 16.5;
            break;
        default:
            if (stop > start) { /* offsets of the range: not monotone, or past n_values */
                if (chance(50)) {
                    which_off = irange(start * m, stop * m - 1) + 1;
                    saved = off[which_off];
                    off[which_off] = off[which_off - 1] - irange(1, 3);
                } else {
                    a_nv = off[stop * m] - irange(1, 3);
                }
            } else {
                which_off = start * m;
                saved = off[which_off];
                off[which_off] = -1;
            }
            a_k = 0;
        }
        CALL("fc_synthetic_search_lengths");
        REFUSED(fc_synthetic_search_lengths(seed, a_first, a_m, a_k, a_empty, a_short, a_len,
                                            a_start, a_stop),
                len, lb, "invalid argument");
        CALL("fc_synthetic_search_fill");
        REFUSED(fc_synthetic_search_fill(seed, a_first, a_m, a_topics, a_per, a_bid, a_ctr,
                                         a_noise, expected, off, a_nv, ad, score, value, pre,
                                         a_start, a_stop, NULL),
                value, (size_t)n_values * sizeof *value, "invalid argument");
        if (which_off >= 0) off[which_off] = saved;
    }
    free(len);
    free(off);
    free(bid);
    free(ctr);
    free(ad);
    free(score);
    free(value);
    free(pre);
    free(rad);
    free(rs);
    free(rv);
    free(rp);
}
#endif

/* ---- known defects ----------------------------------------------------------------- */

/* Inputs on which a kernel currently hits undefined behaviour (UBSan
 * reports it; without sanitizers the result is whatever the compiler made
 * of it) or breaks its documented contract. Each passes once the kernel
 * refuses the input or handles it: "probe ok" means a negative code, or
 * FC_OK with the documented output. */
static int probe(const char *name)
{
    double v[8] = {0, 1, 2, 3, 4, 5, 6, 7}, w[3] = {1, 1, 1}, out[64], acc[4] = {0, 0, 0, 0};
    double val[2 * 2], se[2 * 2];
    int64_t st[2 * FC_STATS], choice = -1;
    int32_t perms[2 * 2];
    int rc;
    family = "probe";
    kernel = name;
    if (!strcmp(name, "leave_one_out_negative_m")) {
        /* full = (1 << m) - 1 is computed before m is checked */
        rc = fc_leave_one_out_f64(v, 1, -1, out);
        return rc < 0;
    }
    if (!strcmp(name, "leave_one_out_m64")) {
        rc = fc_leave_one_out_f32((const float *)v, 1, 64, out);
        return rc < 0;
    }
    if (!strcmp(name, "size_resolved_negative_m")) {
        /* bs = 1 << min(m, 8) is computed before m is checked */
        rc = fc_size_resolved_f64(v, 1, -3, out);
        return rc < 0;
    }
    if (!strcmp(name, "semivalue_partial_m63")) {
        /* len = 1 << m is computed before m is checked */
        rc = fc_semivalue_partial_f64(v, 63, w, 0.0, 0, 8, acc);
        return rc < 0;
    }
    if (!strcmp(name, "semivalue_partial_m64")) {
        rc = fc_semivalue_partial_f32((const float *)v, 64, w, 0.0, 0, 8, acc);
        return rc < 0;
    }
    if (!strcmp(name, "permutation_shapley_first_game_overflow")) {
        /* game g is keyed (uint64_t)(first_game + g): a signed overflow for
         * first_game = INT64_MAX, g = 1 (first_game >= 0 is the only
         * documented bound) */
        rc = fc_permutation_shapley_f64(v, 2, 2, 1, INT64_MAX, 2, 100, 0, 0, 0.0, 2, val, se, st);
        return rc < 0 || (rc == FC_OK && st[FC_STATS + FC_STAT_SAMPLES] == 2);
    }
    if (!strcmp(name, "sampling_permutations_first_unit_overflow")) {
        /* unit u is keyed (uint64_t)(first_unit + u): a signed overflow for
         * first_unit = INT64_MAX, u = 1 */
        rc = fc_sampling_permutations(1, 1, INT64_MAX, 2, 2, perms);
        return rc < 0 || (rc == FC_OK && perms[2] + perms[3] == 1);
    }
    if (!strcmp(name, "allocation_counts_overflow")) {
        /* the total of the counts (valid: each >= 0) overflows int64 */
        const int64_t counts[2] = {INT64_MAX, 1};
        const double sums[2] = {0, 0};
        rc = fc_allocation_pick(FC_ALLOC_UCT, 2, counts, sums, NULL, 1.0, 0.0, 1, 1, &choice);
        return rc < 0 || (rc == FC_OK && (choice == 0 || choice == 1));
    }
    if (!strcmp(name, "project_box_zero_weights_unbounded")) {
        /* all weights 0 (total 0 is then the only feasible total), no bound:
         * f = 0 on all of R, so tau is 0 (the point nearest 0) and z = u */
        const double u[2] = {0, 3}, lo[1] = {-INFINITY}, hi[1] = {INFINITY}, wz[2] = {0, 0};
        const double total[1] = {0};
        double z[2], work[4];
        rc = fc_project_box_f64(u, 1, 2, lo, hi, 0, 0, wz, 0, total, 0, z, work);
        return rc < 0 || (rc == FC_OK && z[0] == 0 && z[1] == 3);
    }
    if (!strcmp(name, "project_box_zero_weight_tie_break")) {
        /* u = (0, 5), w = (0, 1), z_1 in [0, 1], z_0 free, total 1: f = total
         * for every tau <= 4 (z_1 = 1), so the documented tau is 0 and
         * z = (0, 1) */
        const double u[2] = {0, 5}, lo[2] = {-INFINITY, 0}, hi[2] = {INFINITY, 1};
        const double wz[2] = {0, 1}, total[1] = {1};
        double z[2], work[4];
        rc = fc_project_box_f64(u, 1, 2, lo, hi, 0, 1, wz, 0, total, 0, z, work);
        return rc < 0 || (rc == FC_OK && z[0] == 0 && z[1] == 1);
    }
    if (!strcmp(name, "project_box_zero_weight_flat_tail")) {
        /* u = (0, 3, -10), w = (0, 1, 1), z_1 >= 0.1, z_2 = 0, total 0.1 (the
         * lower end of the feasible range): f = total for every tau >= 2.9,
         * so the documented tau is 2.9 and z = (-2.9, 0.1, 0); the last
         * breakpoint rounds to f slightly above total and the flat segment
         * after it returns tau = +inf: z_0 = -inf */
        const double u[3] = {0, 3, -10}, lo[3] = {-INFINITY, 0.1, 0};
        const double hi[3] = {INFINITY, INFINITY, 0}, wz[3] = {0, 1, 1}, total[1] = {0.1};
        double z[3], work[6];
        rc = fc_project_box_f64(u, 1, 3, lo, hi, 0, 1, wz, 0, total, 0, z, work);
        return rc < 0 || (rc == FC_OK && fabs(z[0] + 2.9) < 1e-12 && z[2] == 0);
    }
    printf("unknown probe %s\n", name);
    return 0;
}

/* ---- interactions ------------------------------------------------------------------ */

/* The definition of fc_graded_sums for one game and one mask, and the scale
 * of its rounding error. */
static double ref_graded(const double *x, int m, const double *up, const double *down,
                         uint64_t s, double *scale)
{
    double acc = 0.0;
    int64_t w;
    *scale = 0.0;
    for (w = 0; w < ((int64_t)1 << m); w++) {
        const int c = popcount64((uint64_t)w);
        if (((uint64_t)w & s) == s) {
            acc += up[c] * x[w];
            *scale += fabs(up[c] * x[w]);
        }
        /* the one-player path sums down over every T (and takes the ones
         * that meet S back out), so its rounding scales with all of them */
        if (down) *scale += fabs(down[c] * x[w]);
        if (down && ((uint64_t)w & s) == 0) acc += down[c] * x[w];
    }
    return acc;
}

static void fuzz_interactions(void)
{
    const int m = (int)(chance(5) ? irange(11, 13) : irange(1, 10));
    const int64_t n_games = m > 10 ? 1 : irange(0, 3), len = n_games << m;
    const int64_t n_masks = chance(20) ? irange(0, 1) : irange(2, 7);
    const int specials = chance(20), with_down = chance(50);
    float *x32 = NEW(float, len);
    double *x = NEW(double, len), *up = NEW(double, m + 1), *down = NEW(double, m + 1);
    double *work = NEW(double, (int64_t)1 << m);
    double *o1 = NEW(double, n_games * n_masks), *o2 = NEW(double, n_games * n_masks);
    uint64_t *masks = NEW(uint64_t, n_masks);
    const int s = (int)irange(0, m);
    int64_t j, g, p;
    int i;

    for (j = 0; j < len; j++) {
        x32[j] = (float)value(specials);
        x[j] = (double)x32[j];
    }
    for (i = 0; i <= m; i++) {
        up[i] = value(0);
        down[i] = value(0);
    }
    /* masks of one size s (as fastcredit asks), duplicates allowed */
    for (p = 0; p < n_masks; p++) {
        uint64_t mask = 0;
        while (popcount64(mask) < s) mask |= (uint64_t)1 << irange(0, m - 1);
        masks[p] = mask;
    }
    CALL("fc_graded_sums_f64");
    CHECK(fc_graded_sums_f64(x, n_games, m, up, with_down ? down : NULL, masks, n_masks, work,
                             o1) == FC_OK, "valid graded sums refused");
    CALL("fc_graded_sums_f32");
    CHECK(fc_graded_sums_f32(x32, n_games, m, up, with_down ? down : NULL, masks, n_masks,
                             work, o2) == FC_OK, "valid graded sums refused");
    CHECK(same_array(o1, o2, n_games * n_masks), "graded sums f32 != f64");
    if (!specials)
        for (g = 0; g < n_games; g++)
            for (p = 0; p < n_masks; p++) {
                double scale;
                const double want = ref_graded(x + (g << m), m, up, with_down ? down : NULL,
                                               masks[p], &scale);
                CHECK(close_to(o1[g * n_masks + p], want,
                               4.0 * DBL_EPSILON * (m + 2) * ((int64_t)1 << m) * scale + 1e-300),
                      "graded sums != definition");
            }

    /* structurally invalid calls */
    {
        const size_t ob = (size_t)(n_games * n_masks) * sizeof(double);
        const int bm = bad_table_m();
        const int64_t bad_n = chance(50) ? -1 : INT64_MIN;
        uint64_t *bad_masks = NEW(uint64_t, 1);
        bad_masks[0] = (uint64_t)1 << (m + (int)irange(0, 63 - m));
        poison(o1, ob);
        CALL("fc_graded_sums_f64");
        REFUSED(fc_graded_sums_f64(x, n_games, bm, up, down, masks, n_masks, work, o1), o1, ob,
                "bad m");
        REFUSED(fc_graded_sums_f64(x, bad_n, m, up, down, masks, n_masks, work, o1), o1, ob,
                "negative n_games");
        REFUSED(fc_graded_sums_f64(x, n_games, m, up, down, masks, bad_n, work, o1), o1, ob,
                "negative n_masks");
        REFUSED(fc_graded_sums_f64(x, n_games, m, up, down, bad_masks, 1, work, o1), o1, ob,
                "mask beyond m");
        REFUSED(fc_graded_sums_f64(x, n_games, m, NULL, down, masks, n_masks, work, o1), o1,
                ob, "NULL up");
        CALL("fc_graded_sums_f32");
        REFUSED(fc_graded_sums_f32(NULL, n_games, m, up, down, masks, n_masks, work, o1), o1,
                ob, "NULL table");
        REFUSED(fc_graded_sums_f32(x32, n_games, m, up, down, masks, n_masks, NULL, o1), o1,
                ob, "NULL work");
        REFUSED(fc_graded_sums_f32(x32, n_games, m, up, down, masks, n_masks, work, NULL), o1,
                ob, "NULL out");
        free(bad_masks);
    }
    free(x32);
    free(x);
    free(up);
    free(down);
    free(work);
    free(o1);
    free(o2);
    free(masks);
}

/* ---- driver ---------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    void (*run)(void);
} Family;

static const Family families[] = {
    {"rng", fuzz_rng},           {"tables", fuzz_tables}, {"audit", fuzz_audit},
    {"sampling", fuzz_sampling}, {"shaping", fuzz_shaping}, {"trees", fuzz_trees},
    {"auction", fuzz_auction},  {"interactions", fuzz_interactions},
#ifdef FASTCREDIT_SYNTHETIC_H
    {"synthetic", fuzz_synthetic},
#endif
};

#define N_FAMILIES ((int)(sizeof families / sizeof families[0]))

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? strtol(argv[1], NULL, 10) : 200, first = 0, k;
    const char *only = argc > 3 ? argv[3] : NULL;
    int f, ran = 0;
    setvbuf(stdout, NULL, _IONBF, 0);
#ifdef HAVE_DEATH_CALLBACK
    __sanitizer_set_death_callback(on_death);
#endif
    if (argc > 2 && !strcmp(argv[1], "probe")) {
        if (probe(argv[2])) {
            printf("probe ok\n");
            return 0;
        }
        printf("probe %s: accepted an invalid input or gave a wrong result\n", argv[2]);
        return 1;
    }
    run_seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 20240601u;
    if (argc > 4) first = strtol(argv[4], NULL, 10);
    for (f = 0; f < N_FAMILIES; f++) {
        if (only && strcmp(only, families[f].name)) continue;
        ran++;
        family = families[f].name;
        for (k = first; k < first + iterations; k++) {
            iteration = k;
            fz = fc_rng_key(run_seed, ((uint64_t)f << 32) + (uint64_t)k);
            families[f].run();
        }
    }
    if (!ran) {
        printf("unknown family %s\n", only);
        return 2;
    }
    if (failures) {
        printf("%ld failures\n", failures);
        return 1;
    }
    printf("fuzz ok: %ld iterations x %d families, %ld kernel calls, seed %llu\n", iterations, ran,
           calls, (unsigned long long)run_seed);
    return 0;
}
