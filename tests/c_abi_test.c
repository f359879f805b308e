/* Exercises csrc/fastcredit.h directly, as a C library user would:
 * cc -std=c99 -Icsrc tests/c_abi_test.c csrc/[a-z]*.c -lm && ./a.out  -> prints "ok".
 *
 * Every kernel family (rng, tables, audit, sampling, shaping, trees, auction,
 * synthetic) is called on small hand-made inputs whose expected outputs are derived in
 * the comments beside each check, and every family's structurally invalid
 * arguments must return FC_EINVAL and leave the outputs untouched. Values
 * that depend on random draws are derived from the draw rule documented in
 * the family's header, using only the rng.h primitives (themselves checked
 * first, against their definition). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fastcredit.h"

static int failures = 0;

static void expect(int cond, const char *what)
{
    if (!cond) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * (1.0 + fabs(b)); }

/* Output sentinel: an error return must leave the output as it was. */
#define SENTINEL (-12345.0)

static void fill(double *x, int n, double value)
{
    int i;
    for (i = 0; i < n; i++) x[i] = value;
}

static int all_equal(const double *x, int n, double value)
{
    int i;
    for (i = 0; i < n; i++)
        if (!(x[i] == value)) return 0;
    return 1;
}

static int popcount(int x)
{
    int c = 0;
    for (; x; x &= x - 1) c++;
    return c;
}

/* ---- rng --------------------------------------------------------------- */

/* SplitMix64 from its definition in rng.h: state = mix64(seed ^
 * mix64(item + GOLDEN)), draw c = mix64(state + (c + 1) GOLDEN). */
static void check_rng(void)
{
    uint64_t draws[4];
    int i;
    expect(fc_rng_fill(7, 3, 4, draws) == FC_OK, "rng fill");
    {
        const uint64_t key = fc_mix64(7 ^ fc_mix64(3 + FC_RNG_GOLDEN));
        uint64_t state = fc_rng_key(7, 3);
        expect(state == key, "rng key = mix64(seed ^ mix64(item + golden))");
        for (i = 0; i < 4; i++) {
            expect(fc_rng_next(&state) == draws[i], "rng stream");
            expect(draws[i] == fc_mix64(key + (uint64_t)(i + 1) * FC_RNG_GOLDEN),
                   "draw c = mix64(state + (c + 1) golden)");
        }
        state = fc_rng_key(7, 3);
        for (i = 0; i < 1000; i++) {
            double u = fc_rng_uniform(&state);
            expect(u >= 0.0 && u < 1.0, "uniform in [0, 1)");
        }
        /* fc_rng_below(n) = (high 32 bits of the draw * n) >> 32 */
        state = fc_rng_key(7, 3);
        expect(fc_rng_below(&state, 10) == ((draws[0] >> 32) * 10) >> 32, "below = multiply-shift");
        expect(fc_rng_below(&state, 1) == 0, "below(1) = 0");
    }
    /* a draw of the mix function known by value: mix64(0) = 0 (every step
     * is a xor-shift or a multiply of 0) */
    expect(fc_mix64(0) == 0, "mix64(0) = 0");
    expect(fc_rng_fill(7, 3, 0, NULL) == FC_OK, "n = 0 with NULL out");
    draws[0] = 42;
    expect(fc_rng_fill(7, 3, -1, draws) == FC_EINVAL && draws[0] == 42, "negative n refused");
    expect(fc_rng_fill(7, 3, 1, NULL) == FC_EINVAL, "NULL out refused");
}

/* ---- tables -------------------------------------------------------------- */

/* Every batch kernel path (m = 1..10, three games each) against the
 * definition phi_i = sum over S not containing i of w[|S|] (v(S+i) - v(S)). */
static void check_semivalue_paths(void)
{
    static double v[3 << 10], phi[3 * 10];
    double w[10];
    int m, g, i, s;
    for (m = 1; m <= 10; m++) {
        for (s = 0; s < (3 << m); s++) v[s] = cos(1.7 * s) * 10.0 + (s % 5);
        expect(fc_shapley_weights(m, w) == FC_OK, "weights");
        expect(fc_semivalue_f64(v, 3, m, w, phi) == FC_OK, "semivalue batch");
        for (g = 0; g < 3; g++)
            for (i = 0; i < m; i++) {
                double want = 0.0;
                const double *vg = v + (g << m);
                for (s = 0; s < (1 << m); s++)
                    if (!(s >> i & 1)) want += w[popcount(s)] * (vg[s | 1 << i] - vg[s]);
                expect(fabs(phi[g * m + i] - want) <= 1e-12 * 100.0, "semivalue = definition");
            }
    }
}

static void check_tables(void)
{
    /* glove game: player 2 holds the right glove, players 0 and 1 left ones;
     * v = 1 on {0,2} (mask 5), {1,2} (6) and N (7) */
    const double glove[8] = {0, 0, 0, 0, 0, 1, 1, 1};
    const float glove32[8] = {0, 0, 0, 0, 0, 1, 1, 1};
    double w[3], phi[3], a[8], back[8], pairs[9], sizes[9];
    static double big[1 << 10];
    double acc[11] = {0};
    double wbig[10], phibig[10];
    int i;

    expect(fc_shapley_weights(3, w) == FC_OK, "shapley weights");
    /* w[k] = k! (2-k)! / 3! = 1/3, 1/6, 1/3 */
    expect(near(w[0], 1.0 / 3) && near(w[1], 1.0 / 6) && near(w[2], 1.0 / 3), "shapley weights m=3");
    expect(fc_semivalue_f64(glove, 1, 3, w, phi) == FC_OK, "semivalue f64");
    /* player 2 is pivotal after 0 or 1 in 4 of 6 orders (2/3); players 0
     * and 1 each once (1/6) */
    expect(near(phi[0], 1.0 / 6) && near(phi[1], 1.0 / 6) && near(phi[2], 2.0 / 3),
           "glove Shapley (1/6, 1/6, 2/3)");
    expect(fc_semivalue_f32(glove32, 1, 3, w, phi) == FC_OK && near(phi[2], 2.0 / 3),
           "semivalue f32");
    /* Banzhaf: player 2 is pivotal for 3 of the 4 sets of {0,1}, player 0
     * for 1 of the 4 sets of {1,2} */
    expect(fc_banzhaf_weights(3, w) == FC_OK && fc_semivalue_f64(glove, 1, 3, w, phi) == FC_OK &&
           near(phi[2], 0.75) && near(phi[0], 0.25), "glove Banzhaf (1/4, 1/4, 3/4)");

    /* dividends: a({0,2}) = a({1,2}) = 1, a(N) = 1 - 1 - 1 = -1 */
    expect(fc_moebius_f64(glove, 1, 3, a) == FC_OK, "moebius");
    expect(near(a[5], 1) && near(a[6], 1) && near(a[7], -1) && near(a[1], 0), "glove dividends");
    expect(fc_from_moebius_f64(a, 1, 3, back) == FC_OK, "from_moebius");
    for (i = 0; i < 8; i++) expect(near(back[i], glove[i]), "moebius round trip");
    expect(fc_moebius_f32(glove32, 1, 3, a) == FC_OK && a[7] == -1.0, "moebius f32");

    /* I(0,2) = v(5) - v(1) - v(4) + v(0) = 1; I(0,1) = v(3) - ... = 0 */
    expect(fc_pair_interactions_f64(glove, 1, 3, pairs) == FC_OK && near(pairs[0 * 3 + 2], 1) &&
           near(pairs[0 * 3 + 1], 0) && pairs[4] == 0.0, "pair interactions");
    /* player 2's marginal is 0 on {}, 1 on each of {0}, {1} (mean 1) and on
     * {0,1} (1) */
    expect(fc_size_resolved_f64(glove, 1, 3, sizes) == FC_OK && near(sizes[2 * 3 + 0], 0) &&
           near(sizes[2 * 3 + 1], 1) && near(sizes[2 * 3 + 2], 1), "size resolved");
    /* singletons are worth nothing; leave-one-out: v(N) - v(N - i) =
     * 1 - v(6), 1 - v(5), 1 - v(3) = 0, 0, 1 */
    expect(fc_singleton_f64(glove, 1, 3, phi) == FC_OK && all_equal(phi, 3, 0.0), "singleton");
    expect(fc_leave_one_out_f64(glove, 1, 3, phi) == FC_OK && phi[0] == 0.0 && phi[1] == 0.0 &&
           phi[2] == 1.0, "leave one out");
    expect(fc_leave_one_out_f32(glove32, 1, 3, phi) == FC_OK && phi[2] == 1.0,
           "leave one out f32");

    /* Owen value with the left gloves {0, 1} a union and {2} another: the
     * unions split v(N) = 1 evenly (the two-player quotient game), and
     * within {0, 1} each left glove is pivotal only when 2 came before and
     * its mate after: (1/4, 1/4, 1/2). Player 0's levels: the other union
     * (mask 4), then its mate (2); player 1's: 4, then 1; player 2's: {0, 1}
     * (mask 3). Every level has one item: weights 1/2, 1/2. */
    {
        const int64_t groups[3] = {1, 2, 4}, level_start[4] = {0, 2, 4, 5};
        const int64_t item_start[6] = {0, 1, 2, 3, 4, 5}, items[5] = {4, 2, 4, 1, 3};
        const double halves[10] = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
        const int64_t bad_items[5] = {4, 2, 8, 1, 3};
        expect(fc_owen_f64(glove, 1, 3, groups, level_start, item_start, items, halves, phi) ==
               FC_OK && phi[0] == 0.25 && phi[1] == 0.25 && phi[2] == 0.5,
               "glove Owen value (1/4, 1/4, 1/2)");
        expect(fc_owen_f32(glove32, 1, 3, groups, level_start, item_start, items, halves,
                           phi) == FC_OK && phi[2] == 0.5, "Owen value f32");
        fill(phi, 3, SENTINEL);
        expect(fc_owen_f64(glove, 1, 3, groups, level_start, item_start, bad_items, halves,
                           phi) == FC_EINVAL && all_equal(phi, 3, SENTINEL),
               "an Owen item outside the table refused, nothing written");
    }

    check_semivalue_paths();

    /* one game split into two ranges gives the whole-game semivalue */
    for (i = 0; i < (1 << 10); i++) big[i] = sin(0.37 * i) + (i & 3);
    expect(fc_shapley_weights(10, wbig) == FC_OK, "weights m=10");
    expect(fc_semivalue_f64(big, 1, 10, wbig, phibig) == FC_OK, "semivalue m=10");
    expect(fc_semivalue_partial_f64(big, 10, wbig, big[0], 0, 512, acc) == FC_OK &&
           fc_semivalue_partial_f64(big, 10, wbig, big[0], 512, 1024, acc) == FC_OK,
           "partial ranges");
    for (i = 0; i < 10; i++) expect(near(acc[i] - acc[10], phibig[i]), "partial sums");

    /* structural errors are refused, nothing written */
    fill(phi, 3, SENTINEL);
    expect(fc_semivalue_f64(glove, 1, 0, w, phi) == FC_EINVAL, "m = 0 refused");
    expect(fc_semivalue_f64(glove, 1, 31, w, phi) == FC_EINVAL, "m = 31 refused");
    expect(fc_semivalue_f64(glove, -1, 3, w, phi) == FC_EINVAL, "negative count refused");
    expect(fc_semivalue_f64(NULL, 1, 3, w, phi) == FC_EINVAL, "NULL refused");
    expect(fc_singleton_f64(glove, 1, 31, phi) == FC_EINVAL, "singleton m = 31 refused");
    expect(fc_leave_one_out_f64(glove, 1, 0, phi) == FC_EINVAL, "leave one out m = 0 refused");
    expect(fc_shapley_weights(0, phi) == FC_EINVAL && fc_banzhaf_weights(31, phi) == FC_EINVAL,
           "weights m refused");
    expect(all_equal(phi, 3, SENTINEL), "nothing written on error");
    expect(fc_semivalue_partial_f64(big, 10, wbig, 0.0, 3, 512, acc) == FC_EINVAL,
           "unaligned range refused");
    expect(fc_semivalue_partial_f64(big, 10, wbig, 0.0, 0, 2048, acc) == FC_EINVAL,
           "range past the table refused");
    expect(fc_semivalue_partial_f64(big, 10, wbig, 0.0, 512, 256, acc) == FC_EINVAL,
           "reversed range refused");
}

/* ---- audit ----------------------------------------------------------------- */

static void check_replay_advantage(void)
{
    /* step 0: factual {1, 0, 1}, alternative {0, 0}: advantage 2/3 - 0;
     *   noise = sd(ddof 1) = sqrt(((1/3)^2 + (2/3)^2 + (1/3)^2) / 2)
     *         = sqrt(1/3); the factual arm is mixed -> resolution NaN.
     * step 1: factual {0}, alternative {0, 0, 0, 0}: advantage 0, noise NaN
     *   (one outcome), both all zero: resolution 1 - 0.25^(1/min(1, 4)) = 0.75.
     * step 2: factual {0, 0}, alternative {0, 0, 0, 0}: noise 0,
     *   resolution 1 - 0.25^(1/2) = 0.5.
     * step 3: factual {1, 1}, alternative {1}: both all one: advantage 0,
     *   resolution 1 - 0.25^(1/1) = 0.75.
     * step 4: factual {0}, alternative {1, 1}: all zero vs all one: advantage
     *   -1, resolution NaN. */
    const int64_t f_off[6] = {0, 3, 4, 6, 8, 9}, a_off[6] = {0, 2, 6, 10, 11, 13};
    const double f[9] = {1, 0, 1, 0, 0, 0, 1, 1, 0};
    const double alt[13] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1};
    const int64_t bad_off[4] = {0, 3, 3, 6};
    double adv[5], noise[5], res[5];
    uint8_t crit[5];
    int64_t bad = 7;
    expect(fc_replay_advantage(f_off, f, a_off, alt, 5, 0.25, 0.5, adv, noise, res, crit,
                               &bad) == FC_OK && bad == -1,
           "replay advantage");
    expect(near(adv[0], 2.0 / 3) && adv[1] == 0.0 && adv[2] == 0.0 && adv[3] == 0.0 &&
           adv[4] == -1.0, "replay advantages");
    expect(crit[0] == 1 && crit[1] == 0 && crit[2] == 0 && crit[3] == 0 && crit[4] == 1,
           "replay critical: |advantage| > 0.5");
    expect(near(noise[0], sqrt(1.0 / 3)) && isnan(noise[1]) && noise[2] == 0.0 && noise[3] == 0.0,
           "replay noise");
    expect(isnan(res[0]) && near(res[1], 0.75) && near(res[2], 0.5) && near(res[3], 0.75) &&
           isnan(res[4]), "replay resolution");

    fill(adv, 5, SENTINEL);
    expect(fc_replay_advantage(f_off, f, a_off, alt, 3, 1.0, 0.0, adv, noise, res, crit,
                               &bad) == FC_EINVAL && bad == -1,
           "alpha = 1 refused");
    expect(fc_replay_advantage(f_off, f, a_off, alt, 3, NAN, 0.0, adv, noise, res, crit,
                               NULL) == FC_EINVAL,
           "alpha NaN refused");
    expect(fc_replay_advantage(f_off, f, a_off, alt, 3, 0.25, -1.0, adv, noise, res, crit,
                               NULL) == FC_EINVAL,
           "negative threshold refused");
    expect(fc_replay_advantage(bad_off, f, a_off, alt, 3, 0.25, 0.0, adv, noise, res, crit,
                               &bad) == FC_EINVAL && bad == 1,
           "empty factual arm refused, naming step 1");
    expect(fc_replay_advantage(f_off, f, a_off, alt, -1, 0.25, 0.0, adv, noise, res, crit,
                               NULL) == FC_EINVAL,
           "negative step count refused");
    expect(fc_replay_advantage(f_off, NULL, a_off, alt, 3, 0.25, 0.0, adv, noise, res, crit,
                               NULL) == FC_EINVAL,
           "NULL values refused");
    expect(all_equal(adv, 5, SENTINEL), "replay: nothing written on error");
}

static void check_spearman(void)
{
    /* g0: x = (1,2,3), y = (1,3,2): ranks (1,2,3), (1,3,2), c = 2,
     *     dx = (-1,0,1), dy = (-1,1,0): rho = 1 / sqrt(2 * 2) = 0.5.
     * g1: x = (1,1,2,3) -> ranks (1.5,1.5,3,4); y = (4,3,2,1) -> (4,3,2,1);
     *     c = 2.5, dx = (-1,-1,.5,1.5), dy = (1.5,.5,-.5,-1.5):
     *     sxy = -4.5, sxx = 4.5, syy = 5: rho = -4.5 / sqrt(22.5) = -sqrt(0.9).
     * g2: y constant -> CONSTANT, NaN.
     * g3: x constant, y varying -> VALID, rho 0.
     * g4: one value < min_len 2 -> SHORT.  g5: a NaN x -> NONFINITE.
     * g6: empty -> SHORT.
     * g7: 70 values (heap-sort ranking), y = 70 - x: rho = -1. */
    int64_t off[9] = {0, 3, 7, 9, 12, 13, 15, 15, 85};
    double x[85], y[85], rho[8], ranks[3 * 70];
    int64_t idx[70];
    int8_t status[8];
    const double x0[15] = {1, 2, 3, 1, 1, 2, 3, 1, 2, 7, 7, 7, 4, 1, NAN};
    const double y0[15] = {1, 3, 2, 4, 3, 2, 1, 5, 5, 1, 2, 3, 4, 1, 2};
    int i;
    for (i = 0; i < 15; i++) {
        x[i] = x0[i];
        y[i] = y0[i];
    }
    for (i = 15; i < 85; i++) {
        x[i] = (double)(i - 15);
        y[i] = 70.0 - x[i];
    }
    expect(fc_spearman_groups(off, 8, x, y, 2, idx, ranks, rho, status) == FC_OK, "spearman");
    expect(status[0] == FC_SPEARMAN_VALID && near(rho[0], 0.5), "spearman 0.5");
    expect(status[1] == FC_SPEARMAN_VALID && near(rho[1], -sqrt(0.9)), "spearman with ties");
    expect(status[2] == FC_SPEARMAN_CONSTANT && isnan(rho[2]), "spearman constant y");
    expect(status[3] == FC_SPEARMAN_VALID && rho[3] == 0.0, "spearman constant x");
    expect(status[4] == FC_SPEARMAN_SHORT && isnan(rho[4]), "spearman short");
    expect(status[5] == FC_SPEARMAN_NONFINITE && isnan(rho[5]), "spearman non-finite");
    expect(status[6] == FC_SPEARMAN_SHORT && isnan(rho[6]), "spearman empty");
    expect(status[7] == FC_SPEARMAN_VALID && near(rho[7], -1.0), "spearman long group");
    /* a thread's slice: groups 1..2 from offsets + 1 (offsets[0] = 3) */
    expect(fc_spearman_groups(off + 1, 2, x, y, 2, idx, ranks, rho, status) == FC_OK &&
           near(rho[0], -sqrt(0.9)) && status[1] == FC_SPEARMAN_CONSTANT, "spearman slice");

    fill(rho, 8, SENTINEL);
    expect(fc_spearman_groups(off, 8, x, y, 1, idx, ranks, rho, status) == FC_EINVAL,
           "min_len 1 refused");
    off[2] = 2; /* offsets not monotone */
    expect(fc_spearman_groups(off, 8, x, y, 2, idx, ranks, rho, status) == FC_EINVAL,
           "non-monotone offsets refused");
    off[2] = 7;
    expect(fc_spearman_groups(off, 8, NULL, y, 2, idx, ranks, rho, status) == FC_EINVAL,
           "NULL x refused");
    expect(all_equal(rho, 8, SENTINEL), "spearman: nothing written on error");
}

static void check_percentile_interval(void)
{
    /* numpy.quantile([3, 1, 4, 1, 5] - 1, [0.25, 0.8]) = [0, 3.2]: sorted
     * 0, 0, 2, 3, 4; v = 1 gives x(1) = 0; v = 3.2 gives 3 + 0.2 * (4 - 3);
     * a row of one value gives it twice; a row holding NaN gives NaN */
    double reps[11] = {3, 1, 4, 1, 5, 7, 7, 7, 7, 7, 0};
    double one[1] = {2}, low[2], high[2];
    reps[10] = NAN;
    expect(fc_percentile_interval(reps, 1, 5, 1.0, 0.25, 0.8, low, high) == FC_OK &&
           low[0] == 0.0 && fabs(high[0] - 3.2) < 1e-15, "percentile interval: 0 and 3.2");
    expect(fc_percentile_interval(one, 1, 1, 0.5, 0.0, 1.0, low, high) == FC_OK &&
           low[0] == 1.5 && high[0] == 1.5, "percentile interval: one replicate");
    expect(fc_percentile_interval(reps + 5, 1, 6, 0.0, 0.1, 0.9, low, high) == FC_OK &&
           isnan(low[0]) && isnan(high[0]), "percentile interval: NaN row");
    fill(low, 2, SENTINEL);
    expect(fc_percentile_interval(reps, 1, 0, 0.0, 0.1, 0.9, low, high) == FC_EINVAL &&
           fc_percentile_interval(reps, 1, 5, 0.0, 0.9, 0.1, low, high) == FC_EINVAL &&
           fc_percentile_interval(reps, 1, 5, 0.0, 0.1, 1.5, low, high) == FC_EINVAL &&
           fc_percentile_interval(NULL, 1, 5, 0.0, 0.1, 0.9, low, high) == FC_EINVAL &&
           all_equal(low, 2, SENTINEL), "percentile interval: refusals write nothing");
}

static void check_resampling(void)
{
    double out[6], ref[6];
    int32_t counts[2];
    int64_t perm[3];
    int r;

    /* bootstrap median, n = 1: every draw is item 0, the median is 5
     * (minus b's 2 when paired: 3) */
    {
        const double sa[1] = {5}, sb[1] = {2};
        const int64_t order[1] = {0};
        expect(fc_bootstrap_median(sa, order, NULL, NULL, 1, 9, 0, 3, counts, out) == FC_OK &&
               out[0] == 5 && out[1] == 5 && out[2] == 5, "bootstrap median n = 1");
        expect(fc_bootstrap_median(sa, order, sb, order, 1, 9, 0, 2, counts, out) == FC_OK &&
               out[0] == 3 && out[1] == 3, "paired bootstrap median n = 1");
    }
    /* n = 2, a = (20, 10): sorted (10, 20), order (1, 0). Replicate r draws
     * i_0 = (hi32(d) * 2) >> 32 = bit 63 of d and i_1 = (lo32(d) * 2) >> 32
     * = bit 31 of d, d = draw 0 of stream (seed, r); the median of two
     * values is their mean: 0.5 (a[i_0] + a[i_1]). Replicates 2..5 via a
     * thread's range [2, 6). */
    {
        const double a[2] = {20, 10}, sa[2] = {10, 20};
        const int64_t order[2] = {1, 0};
        expect(fc_bootstrap_median(sa, order, NULL, NULL, 2, 77, 2, 6, counts, out) == FC_OK,
               "bootstrap median n = 2");
        for (r = 2; r < 6; r++) {
            uint64_t d;
            fc_rng_fill(77, (uint64_t)r, 1, &d);
            expect(out[r - 2] == 0.5 * (a[d >> 63] + a[(d >> 31) & 1]), "median of two draws");
        }
        fill(out, 6, SENTINEL);
        expect(fc_bootstrap_median(sa, order, NULL, NULL, 0, 77, 0, 2, counts, out) == FC_EINVAL,
               "n = 0 refused");
        expect(fc_bootstrap_median(sa, order, NULL, NULL, 2, 77, 3, 2, counts, out) == FC_EINVAL,
               "stop < start refused");
        expect(fc_bootstrap_median(sa, order, sa, NULL, 2, 77, 0, 2, counts, out) == FC_EINVAL,
               "sorted_b without order_b refused");
        expect(fc_bootstrap_median(sa, order, NULL, NULL, 2, 77, 0, 2, NULL, out) == FC_EINVAL,
               "NULL counts refused");
        expect(all_equal(out, 6, SENTINEL), "median: nothing written on error");
    }

    /* bootstrap mean difference: group 0 = {2, 2, 2}, group 1 = {7}, b =
     * {0.5, 0.5}: every resampled mean is the constant, so each replicate
     * is 1.5 (group 0) or 6.5 (group 1); with n_b = 0, 2 and 7. */
    {
        const int64_t off[3] = {0, 3, 4};
        const double av[4] = {2, 2, 2, 7}, b[2] = {0.5, 0.5};
        expect(fc_bootstrap_mean_diff(off, av, 2, b, 2, 3, 5, 0, out) == FC_OK &&
               out[0] == 1.5 && out[2] == 1.5 && out[3] == 6.5 && out[5] == 6.5,
               "bootstrap mean diff constants");
        expect(fc_bootstrap_mean_diff(off, av, 2, NULL, 0, 2, 5, 0, out) == FC_OK &&
               out[0] == 2 && out[1] == 2 && out[2] == 7 && out[3] == 7,
               "bootstrap mean, known observed side");
    }
    /* group {1, 3}, one replicate, n_b = 0: two draws j = fc_rng_below(s, 2)
     * from the stream s = (seed 11, first_item 4 + g 0); mean = (x_j0 + x_j1)/2 */
    {
        const int64_t off[2] = {0, 2}, bad[3] = {0, 2, 2};
        const double av[2] = {1, 3};
        uint64_t s = fc_rng_key(11, 4);
        double want = av[fc_rng_below(&s, 2)];
        want += av[fc_rng_below(&s, 2)];
        expect(fc_bootstrap_mean_diff(off, av, 1, NULL, 0, 1, 11, 4, out) == FC_OK &&
               out[0] == want / 2, "bootstrap mean of two draws");
        fill(out, 6, SENTINEL);
        expect(fc_bootstrap_mean_diff(bad, av, 2, NULL, 0, 1, 11, 4, out) == FC_EINVAL,
               "empty group refused");
        expect(fc_bootstrap_mean_diff(off, av, 1, NULL, 0, -1, 11, 4, out) == FC_EINVAL,
               "negative resamples refused");
        expect(fc_bootstrap_mean_diff(off, av, 1, NULL, 2, 1, 11, 4, out) == FC_EINVAL,
               "n_b > 0 with NULL b refused");
        expect(fc_bootstrap_mean_diff(NULL, av, 1, NULL, 0, 1, 11, 4, out) == FC_EINVAL,
               "NULL offsets refused");
        expect(all_equal(out, 6, SENTINEL), "mean diff: nothing written on error");
    }

    /* shuffles keep each group's multiset: group 0 empty, group 1 =
     * {1, 2, 3}, group 2 = {9} (a one-value group cannot move). */
    {
        const int64_t off[4] = {0, 0, 3, 4}, bad[4] = {0, 3, 2, 4};
        const double x[4] = {1, 2, 3, 9};
        double o[4];
        expect(fc_shuffle_groups(off, 3, x, 21, 0, o) == FC_OK, "shuffle");
        expect(o[3] == 9 && o[0] + o[1] + o[2] == 6 && o[0] * o[1] * o[2] == 6 &&
               o[0] != o[1] && o[1] != o[2] && o[0] != o[2], "shuffle keeps the multiset");
        /* group 1 keyed as item 1 from the whole call equals the slice of
         * groups 1.. (offsets + 1) keyed from first_item 1 */
        ref[0] = o[0];
        ref[1] = o[1];
        ref[2] = o[2];
        fill(o, 4, SENTINEL);
        expect(fc_shuffle_groups(off + 1, 2, x, 21, 1, o) == FC_OK && o[0] == ref[0] &&
               o[1] == ref[1] && o[2] == ref[2] && o[3] == 9, "shuffle slice = whole");
        fill(o, 4, SENTINEL);
        expect(fc_shuffle_groups(bad, 3, x, 21, 0, o) == FC_EINVAL, "shuffle bad offsets refused");
        expect(fc_shuffle_groups(off, 3, NULL, 21, 0, o) == FC_EINVAL, "shuffle NULL x refused");
        expect(all_equal(o, 4, SENTINEL), "shuffle: nothing written on error");
    }

    /* the only derangement of 2 items swaps them; of 3 items, a 3-cycle */
    expect(fc_derangement(2, 3, perm) == FC_OK && perm[0] == 1 && perm[1] == 0, "derangement 2");
    expect(fc_derangement(3, 3, perm) == FC_OK && perm[0] != 0 && perm[1] != 1 && perm[2] != 2 &&
           perm[0] + perm[1] + perm[2] == 3 && perm[0] != perm[1], "derangement 3");
    perm[0] = 42;
    expect(fc_derangement(1, 3, perm) == FC_EINVAL && fc_derangement(2, 3, NULL) == FC_EINVAL &&
           perm[0] == 42, "derangement n = 1 / NULL refused");
}

/* ---- sampling ---------------------------------------------------------------- */

static void check_sampling(void)
{
    /* additive game v(S) = sum_{i in S} c_i, c = (1, 2, 4): v(mask) = mask.
     * Every walk gives player i exactly c_i, so every sample is c, the
     * estimate is c and (two or more samples) the standard error 0. */
    const double v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const float v32[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    double val[3], se[3];
    int64_t st[FC_STATS];
    int32_t perms[6];

    /* antithetic, cached endpoints, 4 walks = 2 units; budget ample:
     * evals = 2 endpoint reads + 2 units * 2 walks * (m - 1 = 2) = 10 */
    expect(fc_permutation_shapley_f64(v, 1, 3, 5, 0, 4, 1000, 1, 1, 0.0, 2, val, se, st) == FC_OK,
           "permutation shapley");
    expect(val[0] == 1 && val[1] == 2 && val[2] == 4, "additive game estimate exact");
    expect(se[0] == 0 && se[1] == 0 && se[2] == 0, "additive game stderr 0");
    expect(st[FC_STAT_EVALS] == 10 && st[FC_STAT_WALKS] == 4 && st[FC_STAT_SAMPLES] == 2 &&
           st[FC_STAT_TRUNCATED] == 0, "permutation shapley stats");
    /* single walks reading both endpoints: unit cost m + 1 = 4; budget 9
     * fits two units (8), the third would need 12: truncated */
    expect(fc_permutation_shapley_f32(v32, 1, 3, 5, 0, 3, 9, 0, 0, 0.0, 2, val, se, st) == FC_OK &&
           val[2] == 4 && st[FC_STAT_EVALS] == 8 && st[FC_STAT_SAMPLES] == 2 &&
           st[FC_STAT_TRUNCATED] == 1, "budget truncation");
    /* budget 5 fits one unit: one sample, stderr inf */
    expect(fc_permutation_shapley_f64(v, 1, 3, 5, 0, 3, 5, 0, 0, 0.0, 2, val, se, st) == FC_OK &&
           val[1] == 2 && isinf(se[1]) && st[FC_STAT_SAMPLES] == 1, "one sample: stderr inf");
    /* tol 1: every stderr is 0 <= 1 after min_samples = 2 samples */
    expect(fc_permutation_shapley_f64(v, 1, 3, 5, 0, 100, 1000, 0, 1, 1.0, 2, val, se, st) ==
               FC_OK && st[FC_STAT_SAMPLES] == 2 && st[FC_STAT_TRUNCATED] == 0,
           "tolerance stops at min_samples");
    /* glove game: every walk's marginals sum to v(N) - v({}) = 1 */
    {
        const double glove[8] = {0, 0, 0, 0, 0, 1, 1, 1};
        expect(fc_permutation_shapley_f64(glove, 1, 3, 8, 2, 8, 1000, 1, 1, 0.0, 2, val, se, st) ==
                   FC_OK && near(val[0] + val[1] + val[2], 1.0), "efficiency of the estimate");
    }

    /* unit u of game g: state = key(key(seed, g), u); perm = identity, then
     * i = 2: swap perm[2], perm[below(3)]; i = 1: swap perm[1], perm[below(2)] */
    expect(fc_sampling_permutations(5, 2, 7, 2, 3, perms) == FC_OK, "sampling permutations");
    {
        int u;
        for (u = 0; u < 2; u++) {
            uint64_t s = fc_rng_key(fc_rng_key(5, 2), (uint64_t)(7 + u));
            int32_t p[3] = {0, 1, 2}, t;
            int j = (int)fc_rng_below(&s, 3);
            t = p[2], p[2] = p[j], p[j] = t;
            j = (int)fc_rng_below(&s, 2);
            t = p[1], p[1] = p[j], p[j] = t;
            expect(perms[3 * u] == p[0] && perms[3 * u + 1] == p[1] && perms[3 * u + 2] == p[2],
                   "permutation from the documented shuffle");
        }
    }
    expect(fc_sampling_permutations(5, 2, 0, 1, 1, perms) == FC_OK && perms[0] == 0, "m = 1");

    fill(val, 3, SENTINEL);
    expect(fc_permutation_shapley_f64(v, 1, 3, 5, 0, 3, 1000, 1, 1, 0.0, 2, val, se, st) ==
           FC_EINVAL, "odd max_walks with antithetic refused");
    expect(fc_permutation_shapley_f64(v, 1, 3, 5, 0, 4, 5, 1, 1, 0.0, 2, val, se, st) == FC_EINVAL,
           "budget below one unit refused");
    expect(fc_permutation_shapley_f64(v, 1, 3, 5, 0, 4, 100, 1, 1, 0.0, 1, val, se, st) ==
           FC_EINVAL, "min_samples 1 refused");
    expect(fc_permutation_shapley_f64(v, 1, 3, 5, 0, 4, 100, 1, 1, NAN, 2, val, se, st) ==
           FC_EINVAL, "tol NaN refused");
    expect(fc_permutation_shapley_f64(v, 1, 31, 5, 0, 4, 100, 1, 1, 0.0, 2, val, se, st) ==
           FC_EINVAL, "m = 31 refused");
    expect(fc_permutation_shapley_f64(v, 1, 3, 5, -1, 4, 100, 1, 1, 0.0, 2, val, se, st) ==
           FC_EINVAL, "negative first_game refused");
    expect(fc_permutation_shapley_f64(NULL, 1, 3, 5, 0, 4, 100, 1, 1, 0.0, 2, val, se, st) ==
           FC_EINVAL, "NULL table refused");
    expect(all_equal(val, 3, SENTINEL), "sampling: nothing written on error");
    perms[0] = 42;
    expect(fc_sampling_permutations(5, 2, 0, 1, 0, perms) == FC_EINVAL &&
           fc_sampling_permutations(5, 2, -1, 1, 3, perms) == FC_EINVAL &&
           fc_sampling_permutations(5, 2, 0, 1, FC_SAMPLING_MAX_PLAYERS + 1, perms) == FC_EINVAL &&
           fc_sampling_permutations(5, 2, 0, 1, 3, NULL) == FC_EINVAL && perms[0] == 42,
           "sampling permutations: bad m, first_unit, NULL refused");
}

/* The kernels under fastcredit.shap: orders that keep a tree's clusters
 * together, masked rows, the average over the background. */
static void check_shap_kernels(void)
{
    /* players 0..3; row 0 joins 1 and 2 (node 4), row 1 joins 4 and 0 (node
     * 5), row 2 (the root) joins 3 and 5 */
    const int64_t children[6] = {1, 2, 4, 0, 3, 5};
    const int64_t bad[6] = {1, 2, 4, 1, 3, 5};       /* player 1 joined twice */
    const double background[4] = {1, 2, 3, 4};       /* 2 rows of 2 features */
    const double xs[4] = {10, 20, 30, 40};           /* 2 explained rows */
    const uint64_t masks[3] = {0, 2, 3}, wide[1] = {4};
    const int64_t owner[3] = {0, 1, 1}, far[1] = {2};
    const double outputs[6] = {1, 2, 3, 4, 5, 6};    /* 3 coalitions x 2 rows x 1 */
    const double weights[2] = {0.25, 0.75};
    double rows[12], means[3];
    int32_t perms[8];
    int u;

    expect(fc_sampling_tree_permutations(9, 1, 4, 2, 4, children, perms) == FC_OK,
           "tree permutations");
    for (u = 0; u < 2; u++) {
        /* bits drawn root first: rows 2, 1, 0; 1 puts the second child first */
        uint64_t s = fc_rng_key(fc_rng_key(9, 1), (uint64_t)(4 + u));
        const int root = (int)(fc_rng_next(&s) >> 63), mid = (int)(fc_rng_next(&s) >> 63),
                  low = (int)(fc_rng_next(&s) >> 63);
        int32_t inner[3], want[4];
        int t;
        inner[mid ? 0 : 2] = 0;
        inner[mid ? 1 : 0] = low ? 2 : 1;
        inner[mid ? 2 : 1] = low ? 1 : 2;
        if (root) {
            for (t = 0; t < 3; t++) want[t] = inner[t];
            want[3] = 3;
        } else {
            want[0] = 3;
            for (t = 0; t < 3; t++) want[t + 1] = inner[t];
        }
        for (t = 0; t < 4; t++)
            expect(perms[4 * u + t] == want[t], "tree permutation from the documented bits");
    }
    expect(fc_sampling_tree_permutations(9, 1, 0, 2, 1, NULL, perms) == FC_OK && perms[0] == 0 &&
           perms[1] == 0, "tree permutations: m = 1");
    perms[0] = 42;
    expect(fc_sampling_tree_permutations(9, 1, 0, 1, 4, bad, perms) == FC_EINVAL &&
           fc_sampling_tree_permutations(9, 1, -1, 1, 4, children, perms) == FC_EINVAL &&
           fc_sampling_tree_permutations(9, 1, 0, 1, 0, children, perms) == FC_EINVAL &&
           fc_sampling_tree_permutations(9, 1, 0, 1, 4, NULL, perms) == FC_EINVAL &&
           perms[0] == 42, "tree permutations: a node joined twice, first_unit, m, NULL refused");

    expect(fc_masked_rows(background, 2, 2, xs, 2, masks, owner, 3, rows) == FC_OK,
           "masked rows");
    {
        const double want[12] = {1, 2, 3, 4, 1, 40, 3, 40, 30, 40, 30, 40};
        int i;
        for (i = 0; i < 12; i++) expect(rows[i] == want[i], "masked rows: x where the mask is set");
    }
    fill(rows, 12, SENTINEL);
    expect(fc_masked_rows(background, 2, 2, xs, 2, wide, owner, 1, rows) == FC_EINVAL &&
           fc_masked_rows(background, 2, 2, xs, 2, masks, far, 1, rows) == FC_EINVAL &&
           fc_masked_rows(background, 2, 65, xs, 2, masks, owner, 3, rows) == FC_EINVAL &&
           fc_masked_rows(background, 0, 2, xs, 2, masks, owner, 3, rows) == FC_EINVAL &&
           fc_masked_rows(NULL, 2, 2, xs, 2, masks, owner, 3, rows) == FC_EINVAL &&
           all_equal(rows, 12, SENTINEL),
           "masked rows: mask beyond m, owner beyond the rows, m, n_b, NULL refused");

    expect(fc_background_mean(outputs, 3, 2, 1, NULL, means) == FC_OK && means[0] == 1.5 &&
           means[1] == 3.5 && means[2] == 5.5, "background mean");
    expect(fc_background_mean(outputs, 3, 2, 1, weights, means) == FC_OK &&
           means[0] == 1.75 && means[1] == 3.75 && means[2] == 5.75, "weighted background mean");
    fill(means, 3, SENTINEL);
    expect(fc_background_mean(outputs, 3, 0, 1, NULL, means) == FC_EINVAL &&
           fc_background_mean(outputs, 3, 2, 0, NULL, means) == FC_EINVAL &&
           fc_background_mean(NULL, 3, 2, 1, NULL, means) == FC_EINVAL &&
           all_equal(means, 3, SENTINEL), "background mean: n_b, k, NULL refused");

    {
        /* 3 players: pair 0 (0 1 2) has {0} {0,1} and their complements
         * {1,2} {2} (masks 1 3 6 4); pair 1 (2 1 0) the same four; pair 2
         * (1 0 2) adds {1} and {0,2} (2 5). A budget of 6 takes two pairs,
         * 8 all three. */
        const int32_t orders[9] = {0, 1, 2, 2, 1, 0, 1, 0, 2}, twice[9] = {0, 0, 2, 2, 1, 0,
                                                                           1, 0, 2};
        const uint64_t two[8] = {0, 1, 3, 4, 6, 7, UINT64_MAX, UINT64_MAX};
        uint64_t found[8];
        int64_t pairs = -1, counts = -1;
        int i, same = 1;
        expect(fc_affordable_pairs(orders, 1, 3, 3, 6, 8, &pairs, &counts, found) == FC_OK &&
               pairs == 2 && counts == 6, "affordable pairs: the budget stops the third pair");
        for (i = 0; i < 8; i++) same &= found[i] == two[i];
        expect(same, "affordable pairs: the coalitions in order, then the padding");
        expect(fc_affordable_pairs(orders, 1, 3, 3, 8, 8, &pairs, &counts, found) == FC_OK &&
               pairs == 3 && counts == 8 && found[2] == 2 && found[5] == 5 && found[7] == 7,
               "affordable pairs: every pair fits");
        pairs = counts = -1;
        found[0] = 42;
        expect(fc_affordable_pairs(twice, 1, 3, 3, 8, 8, &pairs, &counts, found) == FC_EINVAL &&
               fc_affordable_pairs(orders, 1, 3, 3, 8, 7, &pairs, &counts, found) == FC_EINVAL &&
               fc_affordable_pairs(orders, 1, 3, 1, 8, 8, &pairs, &counts, found) == FC_EINVAL &&
               fc_affordable_pairs(orders, 1, 3, 3, 1, 8, &pairs, &counts, found) == FC_EINVAL &&
               fc_affordable_pairs(NULL, 1, 3, 3, 8, 8, &pairs, &counts, found) == FC_EINVAL &&
               pairs == -1 && counts == -1 && found[0] == 42,
               "affordable pairs: a repeated player, capacity, k, max_evals, NULL refused");
    }
}

/* ---- shaping ------------------------------------------------------------------ */

static void check_projection(void)
{
    /* 9 rows (8 go through the 8-lane path, 1 through the row path) of
     * u = (3, 1, 0) + r in [-1, 1]^3 with total 0. Shifting u shifts tau,
     * so every row has the same z. Row r: tau solves clip(3+r-tau) +
     * clip(1+r-tau) + clip(r-tau) = 0; at tau = 1 + r: 1 + 0 + (-1) = 0, so
     * z = (1, 0, -1). Row 4 holds a NaN: all NaN. */
    double u[27], lo[9], hi[9], tot[1] = {0}, z[27], work[9];
    float u32[27];
    int r, i;
    for (r = 0; r < 9; r++) {
        lo[r] = -1;
        hi[r] = 1;
        for (i = 0; i < 3; i++) u[3 * r + i] = (i == 0 ? 3 : i == 1 ? 1 : 0) + r;
    }
    u[3 * 4 + 1] = NAN;
    for (i = 0; i < 27; i++) u32[i] = (float)u[i];
    expect(fc_project_box_f64(u, 9, 3, lo, hi, 1, 0, NULL, 0, tot, 0, z, work) == FC_OK,
           "project box");
    for (r = 0; r < 9; r++)
        if (r == 4)
            expect(isnan(z[12]) && isnan(z[13]) && isnan(z[14]), "NaN row -> all NaN");
        else
            expect(near(z[3 * r], 1) && near(z[3 * r + 1], 0) && near(z[3 * r + 2], -1),
                   "projection (1, 0, -1)");
    fill(z, 27, 0.0);
    expect(fc_project_box_f32(u32, 9, 3, lo, hi, 1, 0, NULL, 0, tot, 0, z, work) == FC_OK &&
           near(z[0], 1) && near(z[25], 0) && near(z[26], -1) && isnan(z[13]), "project box f32");

    /* unbounded: u = (1, 2), total 0: tau = 1.5, z = (-0.5, 0.5).
     * weighted: u = (0, 0), w = (1, 2), total 3: z = -tau, 3 (-tau) = 3,
     * z = (1, 1).  zero weight: u = (5, 1), w = (0, 1), bounds [-10, 10],
     * total 2: 1 - tau = 2, tau = -1, z = (clip(6), 2) = (6, 2). Per-coordinate
     * bounds (bound_col_stride 1) and per-row weights and totals. */
    {
        const double uu[6] = {1, 2, 0, 0, 5, 1};
        const double l3[6] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -10, -10};
        const double h3[6] = {INFINITY, INFINITY, INFINITY, INFINITY, 10, 10};
        const double ww[6] = {1, 1, 1, 2, 0, 1}, tt[3] = {0, 3, 2};
        expect(fc_project_box_f64(uu, 3, 2, l3, h3, 2, 1, ww, 2, tt, 1, z, work) == FC_OK &&
               near(z[0], -0.5) && near(z[1], 0.5) && near(z[2], 1) && near(z[3], 1) &&
               near(z[4], 6) && near(z[5], 2), "weighted projections");
    }

    fill(z, 3, SENTINEL);
    expect(fc_project_box_f64(u, 1, 0, lo, hi, 1, 0, NULL, 0, tot, 0, z, work) == FC_EINVAL,
           "m = 0 refused");
    expect(fc_project_box_f64(u, -1, 3, lo, hi, 1, 0, NULL, 0, tot, 0, z, work) == FC_EINVAL,
           "negative rows refused");
    expect(fc_project_box_f64(u, 1, 3, lo, hi, -1, 0, NULL, 0, tot, 0, z, work) == FC_EINVAL,
           "negative stride refused");
    expect(fc_project_box_f64(u, 1, 3, lo, hi, 1, 0, NULL, 0, tot, 0, z, NULL) == FC_EINVAL,
           "NULL work refused");
    expect(all_equal(z, 3, SENTINEL), "projection: nothing written on error");
}

static void check_tokens(void)
{
    /* 2 sequences, m = 2 actions, 4 tokens each; all values exact in float.
     *   tokens (-1, 0, 1, 1 | 1, -1, 0, 0), base (0.5, -1),
     *   action_adv (0.25, 2 | 3, -0.75), mask (1,1,1,0 | 1,0,1,1):
     *   out = (base, adv0, adv1, masked | adv1, masked, adv0, adv0)
     *       = (0.5, 0.25, 2, 0 | -0.75, 0, 3, 3). */
    const double base[2] = {0.5, -1}, adv[2 * 9] = {0.25, 2, 3, -0.75};
    const int32_t ta[8] = {-1, 0, 1, 1, 1, -1, 0, 0};
    const int64_t ta64[8] = {-1, 0, 1, 1, 1, -1, 0, 0};
    const uint8_t mask[8] = {1, 1, 1, 0, 1, 0, 1, 1};
    const float want[8] = {0.5f, 0.25f, 2, 0, -0.75f, 0, 3, 3};
    float out[8], work[10];
    int64_t bad = 7;
    int t;
    expect(fc_token_advantages_i32(base, adv, 2, 2, ta, 4, mask, out, work, &bad) == FC_OK &&
           bad == -1, "token advantages i32");
    for (t = 0; t < 8; t++) expect(out[t] == want[t], "token advantage values");
    /* no mask: the masked tokens get their own values, 2 and -1 */
    expect(fc_token_advantages_i64(base, adv, 2, 2, ta64, 4, NULL, out, work, &bad) == FC_OK &&
           out[3] == 2 && out[5] == -1 && out[6] == 3, "token advantages i64, no mask");
    /* m = 9 (the lookup-table path): action a of sequence 0 has adv[a];
     * tokens (8, -1, 0): adv[8] = 0, base 0.5, adv[0] = 0.25 */
    {
        const int32_t t9[3] = {8, -1, 0};
        expect(fc_token_advantages_i32(base, adv, 1, 9, t9, 3, NULL, out, work, &bad) == FC_OK &&
               out[0] == 0 && out[1] == 0.5f && out[2] == 0.25f, "token advantages m = 9");
    }
    /* an action id 2 >= m = 2 at sequence 1, token 2: flat position 6 */
    {
        const int32_t tb[8] = {0, 0, 0, 0, 1, 1, 2, 0};
        const int64_t tb64[8] = {0, 0, 0, 0, -2, 0, 0, 0};
        expect(fc_token_advantages_i32(base, adv, 2, 2, tb, 4, NULL, out, work, &bad) ==
                   FC_EINVAL && bad == 6 && out[0] == 0.25f, "bad action id reported");
        expect(fc_token_advantages_i64(base, adv, 2, 2, tb64, 4, NULL, out, work, &bad) ==
                   FC_EINVAL && bad == 4, "action id -2 reported");
    }
    for (t = 0; t < 8; t++) out[t] = 42;
    expect(fc_token_advantages_i32(base, adv, -1, 2, ta, 4, NULL, out, work, &bad) == FC_EINVAL &&
           fc_token_advantages_i32(base, adv, 2, -1, ta, 4, NULL, out, work, &bad) == FC_EINVAL &&
           fc_token_advantages_i32(base, adv, 2, 2, ta, -4, NULL, out, work, &bad) == FC_EINVAL &&
           fc_token_advantages_i32(base, adv, 2, 2, ta, 4, NULL, out, NULL, &bad) == FC_EINVAL &&
           fc_token_advantages_i32(base, adv, 2, 2, ta, 4, NULL, out, work, NULL) == FC_EINVAL,
           "token advantages: negative sizes, NULL refused");
    for (t = 0; t < 8; t++) expect(out[t] == 42, "tokens: nothing written on error");
}

/* ---- trees --------------------------------------------------------------------- */

static void check_trees(void)
{
    /* states: s0 = actions 0,1 with q = (1, 3), pi = (0.25, 0.75);
     * s1 = no action; s2 = action 2 with q = 2, pi = 1.
     *   actor:   baseline = (0.25 + 2.25, 0, 2) = (2.5, 0, 2),
     *            credit = (1 - 2.5, 3 - 2.5, 0) = (-1.5, 0.5, 0);
     *   uniform: baseline = ((1 + 3)/2, 0, 2) = (2, 0, 2), credit (-1, 1, 0). */
    int64_t off[4] = {0, 2, 2, 3}, bad = -1;
    const int64_t actions[3] = {1, 0, 0}, past[1] = {3};
    const double q[3] = {1, 3, 2}, pi[3] = {0.25, 0.75, 1};
    double not_policy[3] = {0.25, 0.75, 0.5}, credit[3], base[3], sampled[3];
    int64_t choice;
    expect(fc_actor_centered_credit(q, pi, off, 3, 0, 0.0, NULL, credit, base, NULL, &bad) ==
           FC_OK && base[0] == 2.5 && base[1] == 0 && base[2] == 2 && credit[0] == -1.5 &&
           credit[1] == 0.5 && credit[2] == 0, "actor-centered credit");
    expect(fc_actor_centered_credit(q, NULL, off, 3, 1, 0.0, NULL, credit, base, NULL, &bad) ==
           FC_OK && base[0] == 2 && credit[0] == -1 && credit[1] == 1, "uniform-centered credit");
    /* state 1 has no action: any index is illegal there */
    expect(fc_actor_centered_credit(q, pi, off, 3, 0, 0.0, actions, credit, base, sampled, &bad) ==
           FC_CREDIT_ILLEGAL_ACTION && bad == 1 && sampled[0] == 0.5,
           "an action outside its state refused at that state, the states before it sampled");
    off[1] = 3; /* one state of 3 actions */
    expect(fc_actor_centered_credit(q, NULL, off, 1, 1, 0.0, past, credit, base, sampled, &bad) ==
           FC_CREDIT_ILLEGAL_ACTION && bad == 0, "action = n_s refused");
    off[1] = 2;
    expect(fc_actor_centered_credit(q, not_policy, off, 3, 0, 0.0, NULL, credit, base, NULL,
                                    &bad) == FC_CREDIT_NOT_A_POLICY && bad == 2,
           "pi summing to 0.5 at state 2 refused there");
    expect(fc_actor_centered_credit(q, not_policy, off, 3, 0, 0.5, NULL, credit, base, NULL,
                                    &bad) == FC_OK, "... and accepted within atol 0.5");
    not_policy[2] = 1;
    not_policy[0] = -0.25;
    not_policy[1] = 1.25;
    expect(fc_actor_centered_credit(q, not_policy, off, 3, 0, 0.0, NULL, credit, base, NULL,
                                    &bad) == FC_CREDIT_NOT_A_POLICY && bad == 0,
           "a negative probability refused though its state sums to 1");
    not_policy[0] = NAN;
    expect(fc_actor_centered_credit(q, not_policy, off, 3, 0, 1e9, NULL, credit, base, NULL,
                                    &bad) == FC_CREDIT_NOT_A_POLICY && bad == 0,
           "a NaN probability refused");
    fill(credit, 3, SENTINEL);
    fill(base, 3, SENTINEL);
    expect(fc_actor_centered_credit(q, NULL, off, 3, 0, 0.0, NULL, credit, base, NULL, &bad) ==
           FC_EINVAL, "pi NULL without uniform refused");
    expect(fc_actor_centered_credit(q, pi, off, 3, 0, -1.0, NULL, credit, base, NULL, &bad) ==
           FC_EINVAL, "negative atol refused");
    expect(fc_actor_centered_credit(q, pi, off, 3, 0, NAN, NULL, credit, base, NULL, &bad) ==
           FC_EINVAL, "NaN atol refused");
    expect(fc_actor_centered_credit(q, pi, off, 3, 0, 0.0, actions, credit, base, NULL, &bad) ==
           FC_EINVAL, "actions without sampled refused");
    expect(fc_actor_centered_credit(q, pi, off, 3, 0, 0.0, NULL, credit, base, NULL, NULL) ==
           FC_EINVAL, "bad NULL refused");
    expect(fc_actor_centered_credit(q, pi, off, -1, 0, 0.0, NULL, credit, base, NULL, &bad) ==
           FC_EINVAL, "negative states refused");
    off[0] = 1; /* offsets[0] must be 0 */
    expect(fc_actor_centered_credit(q, pi, off, 3, 0, 0.0, NULL, credit, base, NULL, &bad) ==
           FC_EINVAL, "offsets[0] != 0 refused");
    off[0] = 0;
    off[2] = 1; /* not monotone */
    expect(fc_actor_centered_credit(q, pi, off, 3, 0, 0.0, NULL, credit, base, NULL, &bad) ==
           FC_EINVAL, "non-monotone offsets refused");
    off[2] = 2;
    expect(all_equal(credit, 3, SENTINEL) && all_equal(base, 3, SENTINEL),
           "credit: nothing written on error");

    {
        const int64_t c4[4] = {2, 1, 1, 3}, c3[3] = {1, 2, 4}, c_untried[4] = {1, 0, 2, 0};
        const int64_t c_agent[3] = {0, 0, 3}, c2[2] = {1, 1}, neg[2] = {1, -1};
        const double s4[4] = {0, 0, 0, 0}, s3[3] = {0.5, 1.8, 2.0}, cost3[3] = {5, 2, 0};
        const double s2[2] = {1, 1}, cost2[2] = {0, 1};
        uint64_t st = fc_rng_key(13, 6);
        /* uniform: counts (2, 1, 1, 3): actions 1 and 2 tie on the fewest;
         * draw 0 of (seed 13, step 6) picks one: 1 + below(2) */
        const int64_t tie = 1 + (int64_t)fc_rng_below(&st, 2);
        expect(fc_allocation_pick(FC_ALLOC_UNIFORM, 4, c4, s4, NULL, 1.0, 0.0, 13, 6, &choice) ==
                   FC_OK && choice == tie, "uniform allocation tie-break");
        /* UCT with untried actions 1 and 3 (score +inf each): tie,
         * the same draw picks 1 or 3 */
        expect(fc_allocation_pick(FC_ALLOC_UCT, 4, c_untried, s4, NULL, 1.0, 0.0, 13, 6, &choice) ==
                   FC_OK && choice == (tie == 1 ? 1 : 3), "UCT untried first");
        /* UCT, c = 0: means (0.5, 0.9, 0.5): action 1 */
        expect(fc_allocation_pick(FC_ALLOC_UCT, 3, c3, s3, NULL, 0.0, 0.0, 1, 1, &choice) == FC_OK &&
               choice == 1, "UCT greedy");
        /* UCT, c = 1: N = 7, log 8 = 2.0794: 0.5 + sqrt(2.0794) = 1.942,
         * 0.9 + sqrt(1.0397) = 1.920, 0.5 + sqrt(0.5199) = 1.221: action 0 */
        expect(fc_allocation_pick(FC_ALLOC_UCT, 3, c3, s3, NULL, 1.0, 0.0, 1, 1, &choice) == FC_OK &&
               choice == 0, "UCT exploration bonus");
        /* agent UCT, untried 0 and 1 of costs 5 and 2: the cheaper, 1 */
        expect(fc_allocation_pick(FC_ALLOC_AGENT_UCT, 3, c_agent, s3, cost3, 1.0, 1.0, 1, 1,
                                  &choice) == FC_OK && choice == 1, "agent UCT cheapest untried");
        /* agent UCT, both tried once, c = 0, c_tok = 0.5: scores 1 - 0 and
         * 1 - 0.5: action 0 */
        expect(fc_allocation_pick(FC_ALLOC_AGENT_UCT, 2, c2, s2, cost2, 0.0, 0.5, 1, 1, &choice) ==
                   FC_OK && choice == 0, "agent UCT cost penalty");
        choice = 42;
        expect(fc_allocation_pick(3, 2, c2, s2, cost2, 0.0, 0.5, 1, 1, &choice) == FC_EINVAL &&
               fc_allocation_pick(-1, 2, c2, s2, cost2, 0.0, 0.5, 1, 1, &choice) == FC_EINVAL &&
               fc_allocation_pick(FC_ALLOC_UCT, 0, c2, s2, NULL, 0.0, 0.5, 1, 1, &choice) ==
                   FC_EINVAL &&
               fc_allocation_pick(FC_ALLOC_UCT, 2, neg, s2, NULL, 0.0, 0.5, 1, 1, &choice) ==
                   FC_EINVAL &&
               fc_allocation_pick(FC_ALLOC_AGENT_UCT, 2, c2, s2, NULL, 0.0, 0.5, 1, 1, &choice) ==
                   FC_EINVAL &&
               fc_allocation_pick(FC_ALLOC_UCT, 2, c2, NULL, NULL, 0.0, 0.5, 1, 1, &choice) ==
                   FC_EINVAL && choice == 42,
               "allocation: bad rule, n, counts, NULL refused");
    }
    {
        /* tell-and-pick: UCT, c = 0, counts (1, 2, 4), sums (0.5, 1.8, 2.0):
         * 1.0 told to action 0 makes its mean 0.75, below action 1's 0.9 */
        int64_t counts[3] = {1, 2, 4};
        double sums[3] = {0.5, 1.8, 2.0};
        expect(fc_allocation_tell_pick(FC_ALLOC_UCT, 3, counts, sums, NULL, 0.0, 0.0, 1, 1, 0, 1.0,
                                       &choice) == FC_OK && choice == 1 && counts[0] == 2 &&
                   sums[0] == 1.5, "tell-and-pick adds the trial, then picks");
        expect(fc_allocation_tell_pick(FC_ALLOC_UCT, 3, counts, sums, NULL, 0.0, 0.0, 1, 1, -1, 0.0,
                                       &choice) == FC_OK && choice == 1 && counts[0] == 2,
               "tell-and-pick: told -1 adds nothing");
        choice = 42;
        expect(fc_allocation_tell_pick(FC_ALLOC_UCT, 3, counts, sums, NULL, 0.0, 0.0, 1, 1, 0,
                                       NAN, &choice) == FC_EINVAL &&
                   fc_allocation_tell_pick(FC_ALLOC_UCT, 3, counts, sums, NULL, 0.0, 0.0, 1, 1, 3,
                                           1.0, &choice) == FC_EINVAL &&
                   fc_allocation_tell_pick(FC_ALLOC_UCT, 3, counts, sums, NULL, 0.0, 0.0, 1, 1, -2,
                                           1.0, &choice) == FC_EINVAL &&
                   fc_allocation_tell_pick(3, 3, counts, sums, NULL, 0.0, 0.0, 1, 1, 0, 1.0,
                                           &choice) == FC_EINVAL &&
                   choice == 42 && counts[0] == 2 && sums[0] == 1.5,
               "tell-and-pick: a NaN value, told out of range, a bad rule refused unwritten");
    }
}

/* ---- auction ------------------------------------------------------------------- */

static void check_auction(void)
{
    /* request 0, m = 2:
     *   action 0: x0 = (ad 1, score 3, value 0.5,  prerank 1),
     *             x1 = (ad 2, score 1, value 0.25, prerank 5);
     *   action 1: x2 = (ad 2, score 2, value 0.75, prerank 5),
     *             x3 = (ad 3, score 0.5, value 1,  prerank 0).
     * request 1, m = 2: action 0 empty; action 1: x4 = (ad 9, score 1, value 2).
     * Pools of request 0: {0}: ad1(3), ad2(1, x1); {1}: ad2(2, x2), ad3(0.5);
     * {0,1}: ad1(3), ad2(2, x2: its higher-score instance), ad3(0.5). */
    const int64_t off[5] = {0, 2, 4, 4, 5};
    const int64_t ad[5] = {1, 2, 2, 3, 9};
    const double score[5] = {3, 1, 2, 0.5, 1}, value[5] = {0.5, 0.25, 0.75, 1, 2};
    const double prerank[5] = {1, 5, 5, 0, 0};
    double y[8], earn[8];
    int64_t win[8];
#define Y4(a, b, c, d) (y[0] == (a) && y[1] == (b) && y[2] == (c) && y[3] == (d))

    /* rerun, 1 slot, first price: {0} -> ad1 0.5; {1} -> ad2 0.75;
     * {0,1} -> ad1 0.5. Winners: -1 pad for {}, then 1, 2, 1. */
    expect(fc_auction_replay(off, ad, score, value, NULL, 5, 2, 2, 0, 1, 1, 0.0, 0,
                             FC_PRICING_FIRST, FC_MODE_RERUN, y, win, earn) == FC_OK &&
               Y4(0, 0.5, 0.75, 0.5) && win[0] == -1 && earn[0] == 0 && win[1] == 1 &&
               win[2] == 2 && win[3] == 1 && earn[2] == 0.75,
           "auction rerun first price");
    /* rerun, 2 slots: {0}: ad1 + ad2 (x1) = 0.5 + 0.25 = 0.75; {1}: ad2 +
     * ad3 = 0.75 + 1 = 1.75; {0,1}: ad1 + ad2 (x2) = 0.5 + 0.75 = 1.25 */
    expect(fc_auction_replay(off, ad, score, value, NULL, 5, 2, 2, 0, 1, 2, 0.0, 0,
                             FC_PRICING_FIRST, FC_MODE_RERUN, y, NULL, NULL) == FC_OK &&
               Y4(0, 0.75, 1.75, 1.25), "auction rerun 2 slots");
    /* filter, 2 slots: the full pool ranks ad1 (mask {0}, 0.5), ad2 (mask
     * {0,1}, x2: 0.75), ad3 (mask {1}, 1): {0} takes ad1 + ad2 = 1.25 (not
     * rerun's 0.75: the full pool's ad2 earns x2's value) */
    expect(fc_auction_replay(off, ad, score, value, NULL, 5, 2, 2, 0, 1, 2, 0.0, 0,
                             FC_PRICING_FIRST, FC_MODE_FILTER, y, win, earn) == FC_OK &&
               Y4(0, 1.25, 1.75, 1.25) && win[2] == 1 && win[3] == 2 && earn[3] == 0.75 &&
               win[4] == 2 && win[5] == 3, "auction filter 2 slots");
    /* GSP, 1 slot, reserve 0, rerun: {0}: min(3, next 1) = 1; {1}:
     * min(2, 0.5) = 0.5; {0,1}: min(3, 2) = 2. Filter prices every ad in the
     * full pool ad1(3), ad2(2), ad3(0.5): ad1 earns min(3, 2) = 2 wherever it
     * wins, so {0} gets 2 there (not rerun's 1) */
    expect(fc_auction_replay(off, ad, score, value, NULL, 5, 2, 2, 0, 1, 1, 0.0, 0,
                             FC_PRICING_GSP, FC_MODE_RERUN, y, NULL, NULL) == FC_OK &&
               Y4(0, 1, 0.5, 2), "auction GSP rerun");
    expect(fc_auction_replay(off, ad, score, value, NULL, 5, 2, 2, 0, 1, 1, 0.0, 0,
                             FC_PRICING_GSP, FC_MODE_FILTER, y, NULL, NULL) == FC_OK &&
               Y4(0, 2, 0.5, 2), "auction GSP filter");
    /* GSP rerun, reserve 1.5: {0}: ad2 (1) drops, no next: min(3, 1.5) =
     * 1.5; {1}: ad3 drops: min(2, 1.5) = 1.5; {0,1}: min(3, max(1.5, 2)) = 2 */
    expect(fc_auction_replay(off, ad, score, value, NULL, 5, 2, 2, 0, 1, 1, 1.5, 0,
                             FC_PRICING_GSP, FC_MODE_RERUN, y, NULL, NULL) == FC_OK &&
               Y4(0, 1.5, 1.5, 2), "auction GSP reserve");
    /* capacity 1 by prerank: {0} keeps ad2 (prerank 5 > 1) -> x1's 0.25;
     * {1}: ad2 -> 0.75; {0,1}: ad2 (x2) -> 0.75 */
    expect(fc_auction_replay(off, ad, score, value, prerank, 5, 2, 2, 0, 1, 1, 0.0, 1,
                             FC_PRICING_FIRST, FC_MODE_RERUN, y, NULL, NULL) == FC_OK &&
               Y4(0, 0.25, 0.75, 0.75), "auction capacity by prerank");
    /* capacity 1 by score (prerank NULL), rerun: the best-scoring ad of
     * each pool: ad1 on {0} and {0,1} (0.5), ad2 on {1} (0.75). Filter keeps
     * one ad of the full pool, ad1 (mask {0}): {1} gets nothing */
    expect(fc_auction_replay(off, ad, score, value, NULL, 5, 2, 2, 0, 1, 1, 0.0, 1,
                             FC_PRICING_FIRST, FC_MODE_RERUN, y, NULL, NULL) == FC_OK &&
               Y4(0, 0.5, 0.75, 0.5), "auction rerun capacity by score");
    expect(fc_auction_replay(off, ad, score, value, NULL, 5, 2, 2, 0, 1, 1, 0.0, 1,
                             FC_PRICING_FIRST, FC_MODE_FILTER, y, NULL, NULL) == FC_OK &&
               Y4(0, 0.5, 0, 0.5), "auction filter capacity by score");
    /* a thread's range [1, 2): request 1 = (0, 0, 2, 2); row 0 untouched */
    fill(y, 8, SENTINEL);
    expect(fc_auction_replay(off, ad, score, value, NULL, 5, 2, 2, 1, 2, 1, 0.0, 0,
                             FC_PRICING_FIRST, FC_MODE_RERUN, y, NULL, NULL) == FC_OK &&
               all_equal(y, 4, SENTINEL) && y[4] == 0 && y[5] == 0 && y[6] == 2 && y[7] == 2,
           "auction request range");

    fill(y, 8, SENTINEL);
    {
        const int64_t bad_off[5] = {0, 2, 1, 4, 5}, far_off[5] = {0, 2, 4, 4, 6};
#define BAD(args, what) expect(fc_auction_replay args == FC_EINVAL, what)
        BAD((off, ad, score, value, NULL, 5, 2, 0, 0, 2, 1, 0.0, 0, 0, 0, y, NULL, NULL), "m = 0");
        BAD((off, ad, score, value, NULL, 5, 2, 17, 0, 2, 1, 0.0, 0, 0, 0, y, NULL, NULL),
            "m = 17");
        BAD((off, ad, score, value, NULL, 5, 2, 2, 0, 2, 0, 0.0, 0, 0, 0, y, NULL, NULL),
            "slots = 0");
        BAD((off, ad, score, value, NULL, 5, 2, 2, 0, 2, 1, NAN, 0, 0, 0, y, NULL, NULL),
            "reserve NaN");
        BAD((off, ad, score, value, NULL, 5, 2, 2, 0, 2, 1, 0.0, -1, 0, 0, y, NULL, NULL),
            "negative capacity");
        BAD((off, ad, score, value, NULL, 5, 2, 2, 0, 2, 1, 0.0, 0, 2, 0, y, NULL, NULL),
            "unknown pricing");
        BAD((off, ad, score, value, NULL, 5, 2, 2, 0, 2, 1, 0.0, 0, 0, 2, y, NULL, NULL),
            "unknown mode");
        BAD((off, ad, score, value, NULL, 5, 2, 2, 0, 3, 1, 0.0, 0, 0, 0, y, NULL, NULL),
            "stop > n_requests");
        BAD((off, ad, score, value, NULL, 5, 2, 2, 2, 1, 1, 0.0, 0, 0, 0, y, NULL, NULL),
            "start > stop");
        BAD((bad_off, ad, score, value, NULL, 5, 2, 2, 0, 2, 1, 0.0, 0, 0, 0, y, NULL, NULL),
            "non-monotone offsets");
        BAD((far_off, ad, score, value, NULL, 5, 2, 2, 0, 2, 1, 0.0, 0, 0, 0, y, NULL, NULL),
            "offsets past n_values");
        BAD((off, ad, score, value, NULL, 5, 2, 2, 0, 2, 1, 0.0, 0, 0, 0, y, win, NULL),
            "win_ad without win_earn");
        BAD((off, NULL, score, value, NULL, 5, 2, 2, 0, 2, 1, 0.0, 0, 0, 0, y, NULL, NULL),
            "NULL ad_id");
        BAD((off, ad, score, value, NULL, 5, -1, 2, 0, 0, 1, 0.0, 0, 0, 0, y, NULL, NULL),
            "negative n_requests");
#undef BAD
    }
    expect(all_equal(y, 8, SENTINEL), "auction: nothing written on error");
#undef Y4
}

/* ---- synthetic --------------------------------------------------------------------- */

#ifdef FASTCREDIT_SYNTHETIC_H
static void check_synthetic(void)
{
    int64_t len[2 * 3], off[4] = {0, 2, 2, 3}, ad[3], nonfinite = -1;
    double score[3], value[3], pre[3];
    const double bid[1] = {2}, ctr1[1] = {1}, ctr0[1] = {0};
    int i, r;
    /* list lengths from the shape stream's uniform u of each rewrite:
     * empty = 1: every u < 1 -> 0; empty = short = 0: every list has k = 5;
     * short = 1, k = 3: 1 + below(max(3 / 2, 1) = 1) = 1 */
    expect(fc_synthetic_search_lengths(4, 0, 3, 5, 1.0, 0.0, len, 0, 2) == FC_OK &&
           len[0] == 0 && len[5] == 0, "synthetic lengths: all empty");
    expect(fc_synthetic_search_lengths(4, 0, 3, 5, 0.0, 0.0, len, 0, 2) == FC_OK &&
           len[0] == 5 && len[5] == 5, "synthetic lengths: all k");
    expect(fc_synthetic_search_lengths(4, 0, 3, 3, 0.0, 1.0, len, 0, 2) == FC_OK &&
           len[0] == 1 && len[5] == 1, "synthetic lengths: all short");
    /* row 1 of the stream from first = 6, i.e. request 7: its shape stream
     * is (seed, 3 * 7 + 0); per rewrite u < 0.25 -> 0, u < 0.75 -> 1 +
     * below(4 / 2), else 4. Only row 1 is written (range [1, 2)). */
    for (i = 0; i < 6; i++) len[i] = -9;
    expect(fc_synthetic_search_lengths(4, 6, 3, 4, 0.25, 0.5, len, 1, 2) == FC_OK &&
           len[0] == -9 && len[2] == -9, "synthetic lengths: row range");
    {
        uint64_t st = fc_rng_key(4, 3 * 7 + 0);
        for (i = 0; i < 3; i++) {
            const double u = fc_rng_uniform(&st);
            const int64_t want = u < 0.25 ? 0 : u < 0.75 ? 1 + (int64_t)fc_rng_below(&st, 2) : 4;
            expect(len[3 + i] == want, "synthetic lengths: documented draws");
        }
    }
    /* one topic of one ad (every instance is ad 0), bid 2. ctr 1: every
     * click draw u < 1, value = bid = 2, and score = bid * min(pctr, 1) is
     * in (0, 2]. ctr 0: pctr = 0, score 0, prerank log(0) = -inf, value 0:
     * three instances counted as not finite. */
    expect(fc_synthetic_search_fill(4, 0, 3, 1, 1, bid, ctr1, 0.3, 0, off, 3, ad,
                                    score, value, pre, 0, 1, &nonfinite) == FC_OK &&
           nonfinite == 0, "synthetic fill");
    for (i = 0; i < 3; i++)
        expect(ad[i] == 0 && value[i] == 2 && score[i] > 0 && score[i] <= 2 && isfinite(pre[i]),
               "synthetic fill, ctr 1");
    expect(fc_synthetic_search_fill(4, 0, 3, 1, 1, bid, ctr0, 0.3, 0, off, 3, ad,
                                    score, value, pre, 0, 1, &nonfinite) == FC_OK &&
           nonfinite == 3, "synthetic fill ctr 0");
    for (i = 0; i < 3; i++)
        expect(ad[i] == 0 && value[i] == 0 && score[i] == 0 && isinf(pre[i]) && pre[i] < 0,
               "synthetic fill, ctr 0");
    /* expected value: value = score; noise 0: pctr = ctr = 1 (0.4 off the
     * request's topic, here the same), score = bid = 2 or 0.8 */
    expect(fc_synthetic_search_fill(4, 0, 3, 1, 1, bid, ctr1, 0.0, 1, off, 3, ad,
                                    score, value, pre, 0, 1, NULL) == FC_OK, "synthetic fill expected");
    for (i = 0; i < 3; i++)
        expect(ad[i] == 0 && (score[i] == 2 || score[i] == 2 * 0.4) && value[i] == score[i],
               "synthetic fill, expected value");
    expect(fc_synthetic_search_fill(4, 0, 3, 1, 1, bid, ctr1, -1.0, 0, off, 3, ad,
                                    score, value, pre, 0, 1, NULL) == FC_EINVAL &&
           fc_synthetic_search_fill(4, 0, 3, 1, 1, bid, ctr1, NAN, 0, off, 3, ad,
                                    score, value, pre, 0, 1, NULL) == FC_EINVAL &&
           fc_synthetic_search_fill(4, 0, 3, 1, 1, bid, ctr1, 17.0, 0, off, 3, ad,
                                    score, value, pre, 0, 1, NULL) == FC_EINVAL,
           "synthetic fill: noise out of range refused");

    for (r = 0; r < 6; r++) len[r] = -9;
    expect(fc_synthetic_search_lengths(4, 0, 0, 5, 0.0, 0.0, len, 0, 2) == FC_EINVAL &&
           fc_synthetic_search_lengths(4, 0, 17, 5, 0.0, 0.0, len, 0, 2) == FC_EINVAL &&
           fc_synthetic_search_lengths(4, 0, 3, 0, 0.0, 0.0, len, 0, 2) == FC_EINVAL &&
           fc_synthetic_search_lengths(4, 0, 3, 5, -0.1, 0.0, len, 0, 2) == FC_EINVAL &&
           fc_synthetic_search_lengths(4, 0, 3, 5, 0.6, 0.6, len, 0, 2) == FC_EINVAL &&
           fc_synthetic_search_lengths(4, 0, 3, 5, 0.0, NAN, len, 0, 2) == FC_EINVAL &&
           fc_synthetic_search_lengths(4, -1, 3, 5, 0.0, 0.0, len, 0, 2) == FC_EINVAL &&
           fc_synthetic_search_lengths(4, 0, 3, 5, 0.0, 0.0, len, 2, 1) == FC_EINVAL &&
           fc_synthetic_search_lengths(4, 0, 3, 5, 0.0, 0.0, NULL, 0, 2) == FC_EINVAL,
           "synthetic lengths: bad m, k, fractions, first, range, NULL refused");
    for (r = 0; r < 6; r++) expect(len[r] == -9, "synthetic lengths: nothing written on error");
    fill(value, 3, SENTINEL);
    off[2] = 1; /* not monotone */
    expect(fc_synthetic_search_fill(4, 0, 3, 1, 1, bid, ctr1, 0.3, 0, off, 3, ad,
                                    score, value, pre, 0, 1, NULL) == FC_EINVAL,
           "synthetic fill: offsets not monotone");
    off[2] = 2;
    expect(fc_synthetic_search_fill(4, 0, 3, 1, 1, bid, ctr1, 0.3, 0, off, 2, ad,
                                    score, value, pre, 0, 1, NULL) == FC_EINVAL &&
           fc_synthetic_search_fill(4, 0, 3, 0, 1, bid, ctr1, 0.3, 0, off, 3, ad,
                                    score, value, pre, 0, 1, NULL) == FC_EINVAL &&
           fc_synthetic_search_fill(4, 0, 3, 1, 0, bid, ctr1, 0.3, 0, off, 3, ad,
                                    score, value, pre, 0, 1, NULL) == FC_EINVAL &&
           fc_synthetic_search_fill(4, 0, 3, 1, 1, NULL, ctr1, 0.3, 0, off, 3, ad,
                                    score, value, pre, 0, 1, NULL) == FC_EINVAL,
           "synthetic fill: offsets past n_values, topics 0, per_topic 0, NULL refused");
    expect(all_equal(value, 3, SENTINEL), "synthetic fill: nothing written on error");
}
#endif

/* ---- interactions -------------------------------------------------------- */

static void check_interactions(void)
{
    /* glove game: v = 1 on {0,2} (mask 5), {1,2} (6) and N (7); dividends
     * a(5) = a(6) = 1, a(7) = -1. SII of order 2 weighs a(U) by
     * 1 / (|U| - |S| + 1): SII(0,2) = 1 - 1/2, SII(0,1) = -1/2; order 1 is
     * Shapley (1/6, 1/6, 2/3). */
    const double glove[8] = {0, 0, 0, 0, 0, 1, 1, 1};
    const float glove32[8] = {0, 0, 0, 0, 0, 1, 1, 1};
    const double up1[4] = {0, 1, 0.5, 1.0 / 3}, up2[4] = {0, 0, 1, 0.5};
    const uint64_t singles[3] = {1, 2, 4}, pairs[3] = {3, 5, 6}, bad[1] = {8};
    /* SGV of order 1 from the table: up[|W|] = 1 / (3 C(2, |W| - 1)) on v(W),
     * down[|T|] = -1 / (3 C(2, |T|)) on v(T), T disjoint from S */
    const double sgv_up[4] = {0, 1.0 / 3, 1.0 / 6, 1.0 / 3};
    const double sgv_down[4] = {-1.0 / 3, -1.0 / 6, -1.0 / 3, 0};
    double a[8], work[8], out[3];
    expect(fc_moebius_f64(glove, 1, 3, a) == FC_OK, "interactions: dividends");
    expect(fc_graded_sums_f64(a, 1, 3, up1, NULL, singles, 3, work, out) == FC_OK &&
           near(out[0], 1.0 / 6) && near(out[1], 1.0 / 6) && near(out[2], 2.0 / 3),
           "graded sums: SII order 1 = Shapley");
    expect(fc_graded_sums_f64(a, 1, 3, up2, NULL, pairs, 3, work, out) == FC_OK &&
           near(out[0], -0.5) && near(out[1], 0.5) && near(out[2], 0.5),
           "graded sums: SII of the pairs");
    expect(fc_graded_sums_f64(a, 1, 3, up2, NULL, pairs + 1, 1, work, out) == FC_OK &&
           near(out[0], 0.5), "graded sums: one mask, summed directly");
    expect(fc_graded_sums_f32(glove32, 1, 3, sgv_up, sgv_down, singles, 3, work, out) == FC_OK &&
           near(out[0], 1.0 / 6) && near(out[2], 2.0 / 3), "graded sums f32: SGV = Shapley");
    out[0] = SENTINEL;
    expect(fc_graded_sums_f64(a, 1, 3, up1, NULL, bad, 1, work, out) == FC_EINVAL &&
           fc_graded_sums_f64(a, 1, 0, up1, NULL, singles, 3, work, out) == FC_EINVAL &&
           fc_graded_sums_f64(a, 1, 31, up1, NULL, singles, 3, work, out) == FC_EINVAL &&
           fc_graded_sums_f64(a, -1, 3, up1, NULL, singles, 3, work, out) == FC_EINVAL &&
           fc_graded_sums_f64(a, 1, 3, up1, NULL, singles, -1, work, out) == FC_EINVAL &&
           fc_graded_sums_f64(a, 1, 3, NULL, NULL, singles, 3, work, out) == FC_EINVAL &&
           fc_graded_sums_f64(a, 1, 3, up1, NULL, singles, 3, NULL, out) == FC_EINVAL &&
           fc_graded_sums_f64(NULL, 1, 3, up1, NULL, singles, 3, work, out) == FC_EINVAL,
           "graded sums: mask out of range, m, n_games, n_masks, NULL refused");
    expect(out[0] == SENTINEL, "graded sums: nothing written on error");
}

int main(void)
{
    check_rng();
    check_tables();
    check_interactions();
    check_replay_advantage();
    check_spearman();
    check_resampling();
    check_percentile_interval();
    check_sampling();
    check_shap_kernels();
    check_projection();
    check_tokens();
    check_trees();
    check_auction();
#ifdef FASTCREDIT_SYNTHETIC_H
    check_synthetic();
#endif
    if (failures) return 1;
    printf("ok\n");
    return 0;
}
