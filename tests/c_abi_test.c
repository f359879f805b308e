/* Exercises csrc/fastcredit.h directly, as a C library user would:
 * cc -std=c99 -Icsrc tests/c_abi_test.c csrc/*.c && ./a.out  -> prints "ok". */
#include <math.h>
#include <stdio.h>
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

static int popcount(int x)
{
    int c = 0;
    for (; x; x &= x - 1) c++;
    return c;
}

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

int main(void)
{
    /* glove game: player 2 holds the right glove, players 0 and 1 left ones */
    const double glove[8] = {0, 0, 0, 0, 0, 1, 1, 1};
    const float glove32[8] = {0, 0, 0, 0, 0, 1, 1, 1};
    double w[3], phi[3], a[8], back[8], pairs[9], sizes[9];
    double big[1 << 10], acc[11] = {0};
    double wbig[10], phibig[10];
    uint64_t draws[4];
    int i;

    expect(fc_shapley_weights(3, w) == FC_OK, "shapley weights");
    expect(fc_semivalue_f64(glove, 1, 3, w, phi) == FC_OK, "semivalue f64");
    expect(near(phi[0], 1.0 / 6) && near(phi[1], 1.0 / 6) && near(phi[2], 2.0 / 3),
           "glove Shapley (1/6, 1/6, 2/3)");
    expect(fc_semivalue_f32(glove32, 1, 3, w, phi) == FC_OK && near(phi[2], 2.0 / 3),
           "semivalue f32");
    expect(fc_banzhaf_weights(3, w) == FC_OK && fc_semivalue_f64(glove, 1, 3, w, phi) == FC_OK &&
           near(phi[2], 0.75) && near(phi[0], 0.25), "glove Banzhaf (1/4, 1/4, 3/4)");

    expect(fc_moebius_f64(glove, 1, 3, a) == FC_OK, "moebius");
    expect(near(a[5], 1) && near(a[6], 1) && near(a[7], -1) && near(a[1], 0), "glove dividends");
    expect(fc_from_moebius_f64(a, 1, 3, back) == FC_OK, "from_moebius");
    for (i = 0; i < 8; i++) expect(near(back[i], glove[i]), "moebius round trip");

    expect(fc_pair_interactions_f64(glove, 1, 3, pairs) == FC_OK && near(pairs[0 * 3 + 2], 1) &&
           near(pairs[0 * 3 + 1], 0) && pairs[4] == 0.0, "pair interactions");
    expect(fc_size_resolved_f64(glove, 1, 3, sizes) == FC_OK && near(sizes[2 * 3 + 0], 0) &&
           near(sizes[2 * 3 + 1], 1) && near(sizes[2 * 3 + 2], 1), "size resolved");

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
    expect(fc_semivalue_f64(glove, 1, 0, w, phi) == FC_EINVAL, "m = 0 refused");
    expect(fc_semivalue_f64(glove, 1, 31, w, phi) == FC_EINVAL, "m = 31 refused");
    expect(fc_semivalue_f64(glove, -1, 3, w, phi) == FC_EINVAL, "negative count refused");
    expect(fc_semivalue_f64(NULL, 1, 3, w, phi) == FC_EINVAL, "NULL refused");
    expect(fc_semivalue_partial_f64(big, 10, wbig, 0.0, 3, 512, acc) == FC_EINVAL,
           "unaligned range refused");
    expect(fc_semivalue_partial_f64(big, 10, wbig, 0.0, 0, 2048, acc) == FC_EINVAL,
           "range past the table refused");

    /* the counter-based RNG is a pure function of (seed, item, draw) */
    expect(fc_rng_fill(7, 3, 4, draws) == FC_OK, "rng fill");
    {
        uint64_t state = fc_rng_key(7, 3);
        for (i = 0; i < 4; i++) expect(fc_rng_next(&state) == draws[i], "rng stream");
        state = fc_rng_key(7, 3);
        for (i = 0; i < 1000; i++) {
            double u = fc_rng_uniform(&state);
            expect(u >= 0.0 && u < 1.0, "uniform in [0, 1)");
        }
    }
    expect(fc_rng_fill(7, 3, -1, draws) == FC_EINVAL, "negative n refused");

    if (failures) return 1;
    printf("ok\n");
    return 0;
}
