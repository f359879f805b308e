/*
 * synthetic.h - the sponsored-search request generator behind
 * fc.synthetic.sponsored_search (part of fastcredit.h).
 *
 * A stream of requests, each of m rewrites (query rewrites, the players of
 * the auction family) retrieving candidate instances of ads of a catalogue of
 * topics * per_topic ads (ad a is rank a % per_topic of topic a / per_topic;
 * bid[a] > 0 and ctr[a] in [0, 1] are given). Request number q of the stream
 * (q = first + r for row r of the output) reads three streams of csrc/rng.h
 * keyed by (seed, 3 q + s), taking its draws in turn as fc_rng_uniform
 * ("uniform") and fc_rng_below ("below(n)") do:
 *   s = 0 (shape): per rewrite i, u = uniform; its list length is 0 if
 *       u < empty, else 1 + below(max(k / 2, 1)) if u < empty + short_frac,
 *       else k;
 *   s = 1 (draws): u = uniform, home = min(floor(topics * u * u), topics - 1);
 *       per rewrite: drift = below(topics), keep = 0.5 + 0.45 * uniform; per
 *       instance, four uniforms u_t, u_r, u1, u2:
 *         on   = u_t < keep,
 *         rank = min(floor(per_topic * u_r * sqrt(u_r)), per_topic - 1),
 *         ad   = (on ? home : drift) * per_topic + rank,
 *         rho  = sqrt(-2 log(1 - u1))   (1 - u1 is exact, u1 being on
 *                                        the 2^-53 grid: log1p(-u1)),
 *         z1 = rho cos(2 pi u2), z2 = rho sin(2 pi u2)       (Box-Muller:
 *                                        two independent N(0, 1)),
 *         pctr = min(ctr[ad] * exp(noise * z1) * (on ? 1 : 0.4), 1)
 *                                       (noise 0.3 by default),
 *         score = bid[ad] * pctr, prerank = log(score) + 0.5 z2;
 *   s = 2 (clicks): with K its key, the ad is clicked in this request iff
 *       the uniform drawn first from the state K ^ mix64(ad) is < ctr[ad]
 *       (one draw per request and ad, shared by all its instances);
 *       value = bid[ad] if clicked, else 0 (click-realised value); with
 *       expected_value nonzero, value = score (bid x pCTR, the expected
 *       value per impression) and this stream is not read.
 * Every operation is one IEEE double operation in the order written
 * (products left to right), never fused (no FMA), and sqrt is the IEEE one;
 * log, exp, cos and sin are not the C library's but the functions below,
 * written as the same operations in csrc/synthetic.c, in its Numba twin
 * (fastcredit/_numba/synthetic.py) and in the oracle (tests/reference.py),
 * so the bits are the same on every machine, C library and backend.
 *
 *   log x, any double x (log 0 = -inf, log +inf = +inf, NaN for x < 0 or
 *     NaN): x = 2^k z with z in [c, 2c), c the double nearest sqrt(2)/2
 *     (x < 2^-1022 is first scaled by 2^54, and k lowered by 54); then
 *     f = z - 1, s = f / (2 + f), w = s * s, R = w * H(w), h = 0.5 * f * f,
 *       log x = k * LN2_HI - ((h - (s * (h + R) + k * LN2_LO)) - f)
 *     (log(1 + f) = 2 atanh(s) = 2s + s R, rearranged).
 *   exp x, |x| <= 708: k = x * INV_LN2 rounded to the nearest integer (ties
 *     to even), r = (x - k * LN2_HI) - k * LN2_LO,
 *       exp x = (1 + (r + r * r * P(r))) * 2^k.
 *   sin and cos of 2 pi u, u in [0, 1]: n = 4u rounded to the nearest
 *     integer, f = 4u - n (exact, in [-1/2, 1/2]), y = f * f; sin(pi f / 2)
 *     = f * S(y), cos(pi f / 2) = 1 + y * C(y), turned by n quarter turns
 *     (n odd swaps the two; the sine is negated for n mod 4 in {2, 3}, the
 *     cosine for n mod 4 in {1, 2}).
 * LN2_HI is ln 2 cut to 32 significant bits (k * LN2_HI is exact), LN2_LO
 * and INV_LN2 are ln 2 - LN2_HI and 1 / ln 2 rounded. H, P, S and C are
 * evaluated by Horner's rule, c0 + t * (c1 + t * (c2 + ...)); each
 * interpolates its function at the d + 1 Chebyshev nodes of its interval,
 * computed in 60-digit decimal arithmetic and rounded to double
 * (tests/reference.py refits them, and the tests check the kernels' copies):
 *   H, d = 6: (2 atanh(s) - 2s) / s^3 in w = s^2, w in [0, 1.0001 (3 - 2 sqrt 2)^2];
 *   P, d = 10: (e^r - 1 - r) / r^2, r in [-1.0001 ln2 / 2, 1.0001 ln2 / 2];
 *   S, d = 6: sin(pi f / 2) / f in y = f^2, y in [0, 1/4];
 *   C, d = 6: (cos(pi f / 2) - 1) / y, y in [0, 1/4].
 * Accuracy, measured on 10^6 points of each input range against the exact
 * value (tests/test_synthetic_search.py): log and exp within 1 ulp (0.85
 * and 0.93 at most), sin(2 pi u) and cos(2 pi u) within 1.5 ulp (1.48).
 *
 * Rows start .. stop-1 of the output are written (disjoint row ranges may run
 * on several threads). Requires 1 <= m <= FC_AUCTION_MAX_ACTIONS,
 * 1 <= k <= FC_RNG_MAX_RANGE, 1 <= topics <= FC_RNG_MAX_RANGE,
 * 1 <= per_topic <= 2^51 (bid and ctr that long could not be held anyway),
 * 0 <= noise <= FC_SYNTHETIC_MAX_NOISE (so that |noise z1| <= 708, z1 being
 * below 8.6 in magnitude),
 * 0 <= first, stop <= FC_SYNTHETIC_MAX_INDEX, 0 <= start <= stop, non-NULL
 * arrays and 0 <= empty, short_frac with empty + short_frac <= 1; FC_EINVAL
 * otherwise (then nothing is written).
 */
#ifndef FASTCREDIT_SYNTHETIC_H
#define FASTCREDIT_SYNTHETIC_H

#include <stdint.h>

/* Largest first request index and row count (2^60), so that the stream
 * items 3 (first + row) + 2 stay below 2^63. */
#define FC_SYNTHETIC_MAX_INDEX 1152921504606846976

/* Largest pCTR noise (the log-sd of the per-instance pCTR factor). */
#define FC_SYNTHETIC_MAX_NOISE 16

/* lengths[r * m + i] = the list length of rewrite i of row r, rows start ..
 * stop-1. */
int fc_synthetic_search_lengths(uint64_t seed, int64_t first, int m, int64_t k,
                                double empty, double short_frac, int64_t *lengths,
                                int64_t start, int64_t stop);

/* The instances of rows start .. stop-1: rewrite i of row r fills
 * x = offsets[r*m + i] .. offsets[r*m + i + 1] - 1 of ad, score, value and
 * prerank (n_values long each); offsets must be non-decreasing from >= 0
 * and end within n_values over the range (FC_EINVAL otherwise). bid and ctr
 * hold topics * per_topic entries; noise is the log-sd of the pCTR factor
 * and expected_value (0 or not) picks the value (see above); with
 * expected_value nonzero, value may be score itself (the values are the
 * scores: nothing more is written). Unless nonfinite is NULL, *nonfinite
 * gets the number of instances written whose score or prerank is not
 * finite (a zero CTR makes log(0) = -inf), counted as they are written so
 * that no caller reads the outputs again to check them. */
int fc_synthetic_search_fill(uint64_t seed, int64_t first, int m, int64_t topics,
                             int64_t per_topic, const double *bid, const double *ctr,
                             double noise, int expected_value, const int64_t *offsets,
                             int64_t n_values, int64_t *ad,
                             double *score, double *value, double *prerank,
                             int64_t start, int64_t stop, int64_t *nonfinite);

/* Repeated noisy replays of coalition tables (the replay-noise model):
 * tables holds rows start .. stop-1 of (B, 2^m) tables, row b being request
 * first + b; out (B, repeats, 2^m) gets, for repeat r of row b,
 *   out[b, r, 0] = tables[b, 0]   (the empty coalition is not replayed),
 *   out[b, r, S] = tables[b, S] + noise * z,  S = 1 .. 2^m - 1,
 * z = sqrt(-2 log(1 - u1)) cos(2 pi u2) (Box-Muller, the log and cos of
 * this header), u1 then u2 drawn in turn per coalition in increasing mask
 * order as fc_rng_uniform from the state
 * fc_rng_key(fc_rng_key(seed, first + b), r): keyed by (seed, request,
 * repeat), so a repeat's noise does not depend on how many repeats are
 * drawn. 1 <= m <= 30, repeats >= 1, 0 <= noise <= 1e300 (|z| < 8.6: the noise
 * stays finite) and the ranges of fc_synthetic_search_lengths; FC_EINVAL otherwise. */
int fc_synthetic_replay_repeats(uint64_t seed, int64_t first, int m, const double *tables,
                                int64_t repeats, double noise, double *out, int64_t start,
                                int64_t stop);

#endif
