/*
 * audit.h - credit audits and attribution statistics (part of fastcredit.h).
 *
 * Ragged data (trajectories, replay arms) is CSR: offsets[0..n_groups] with
 * offsets[0] = 0, non-decreasing, indexing flat value arrays. Group g holds
 * values[offsets[g] .. offsets[g+1]). A kernel may be handed a slice of a
 * larger offsets array (offsets[0] != 0) to split groups over threads; the
 * offsets stay absolute indices into the value arrays.
 *
 * Seeded resampling uses the counter-based RNG of rng.h: resample (or group)
 * r draws from the stream (seed, first_item + r), so a result does not depend
 * on how the work is split. Integers in [0, n) come from fc_rng_below.
 */
#ifndef FASTCREDIT_AUDIT_H
#define FASTCREDIT_AUDIT_H

#include <stdint.h>

/* Largest sample fc_bootstrap_median takes: it tallies draws per item in
 * int32. */
#define FC_BOOTSTRAP_MAX_ITEMS 2147483647
/* Draws per block of fc_bootstrap_median's index generation: the SplitMix64
 * outputs of a block are independent of each other, so the block vectorises. */
#define FC_BOOTSTRAP_DRAW_BLOCK 128

/* Percentile-bootstrap replicates of a median, or of a paired difference of
 * medians.
 *
 * The sample is a[0..n) (and b[0..n), paired item by item), given sorted:
 * sorted_a[p] is the p-th smallest a and order_a[p] its item index (a stable
 * argsort), likewise for b. For r in [start, stop), replicate r draws n item
 * indices i_0..i_{n-1} uniformly with replacement and writes
 *     out[r - start] = median(a[i_0..i_{n-1}]) - median(b[i_0..i_{n-1}]),
 * or just median(a[i_0..i_{n-1}]) when sorted_b is NULL (order_b is then
 * ignored). Index i_j comes from draw j/2 of the stream (seed, r): its high
 * 32 bits h when j is even, its low 32 bits when j is odd, as (h * n) >> 32.
 * median = the middle order statistic, or 0.5 * (the two middle ones) when n
 * is even, as numpy.median. Each replicate costs O(n): draws are tallied per
 * item in counts (caller scratch of n int32) and the middle order statistics
 * read off a running count in sorted order, with no sort.
 * Requires 1 <= n <= FC_BOOTSTRAP_MAX_ITEMS, 0 <= start <= stop, order_*
 * permutations of 0..n-1. */
int fc_bootstrap_median(const double *sorted_a, const int64_t *order_a,
                        const double *sorted_b, const int64_t *order_b, int64_t n,
                        uint64_t seed, int64_t start, int64_t stop,
                        int32_t *counts, double *out);

/* Bootstrap replicates of a difference of two independent means.
 *
 * For each group g (CSR over a_values, n_g >= 1 values) and replicate
 * r = 0..resamples-1, draw n_g values of group g and n_b values of b_values
 * with replacement (both from the stream (seed, first_item + g); group
 * values first) and write
 *     out[g*resamples + r] = mean(group draws) - mean(b draws).
 * With n_b = 0 (b_values may be NULL) the b term is 0: the observed side is a
 * known constant. Means are left-to-right sums divided by the count.
 * Requires every group non-empty, n_g and n_b <= FC_RNG_MAX_RANGE,
 * resamples >= 0. */
int fc_bootstrap_mean_diff(const int64_t *offsets, const double *a_values,
                           int64_t n_groups, const double *b_values, int64_t n_b,
                           int64_t resamples, uint64_t seed, uint64_t first_item,
                           double *out);

/* fc_spearman_groups status codes: what rho[g] is. */
#define FC_SPEARMAN_VALID 0      /* a correlation (rho = 0 when x is constant: a
                                  * constant signal ranks nothing, so it scores
                                  * as uncorrelated) */
#define FC_SPEARMAN_SHORT 1      /* fewer than min_len values (rho = NaN) */
#define FC_SPEARMAN_CONSTANT 2   /* y constant (rho = NaN) */
#define FC_SPEARMAN_NONFINITE 3  /* a non-finite x or y (rho = NaN) */
/* Groups up to this length are ranked by counting (O(n^2), branch-free, so
 * it vectorises), longer ones by heap sort (O(n log n)). */
#define FC_SPEARMAN_COUNTING_MAX 64

/* Spearman rank correlation within each group of paired values (x, y).
 *
 * Ranks are 1-based with ties given their average rank; then
 *     rho = sum (rx - c)(ry - c) / sqrt(sum (rx - c)^2 * sum (ry - c)^2),
 * c = (n + 1) / 2, summed in index order. status[g] is an FC_SPEARMAN_* code
 * saying what rho[g] is.
 * Which groups are excluded depends on y only (besides non-finite x), so
 * every credit signal scored against the same y uses the same groups.
 * idx (int64, at least the longest group's length) and ranks (double, three
 * times that) are caller scratch; see FC_SPEARMAN_COUNTING_MAX for the cost of
 * ranking.
 * Requires min_len >= 2. */
int fc_spearman_groups(const int64_t *offsets, int64_t n_groups, const double *x,
                       const double *y, int64_t min_len, int64_t *idx,
                       double *ranks, double *rho, int8_t *status);

/* Uniform random permutation of each group's values (Fisher-Yates, group g
 * from the stream (seed, first_item + g)): out holds, group by group, the
 * same multiset of values as x, so every group's marginal distribution is
 * kept exactly. out must not overlap x. Groups have at most FC_RNG_MAX_RANGE
 * values. */
int fc_shuffle_groups(const int64_t *offsets, int64_t n_groups, const double *x,
                      uint64_t seed, uint64_t first_item, double *out);

/* A uniform random derangement of 0..n-1 (a permutation with out[i] != i for
 * every i): Fisher-Yates from the top, restarted on the stream
 * (seed, attempt) whenever a position is finalised as a fixed point
 * (rejection sampling, e attempts on average). Requires
 * 2 <= n <= FC_RNG_MAX_RANGE. */
int fc_derangement(int64_t n, uint64_t seed, int64_t *out);

/* Step-level audit against execution replay. Step t has a factual arm
 * (f_values in CSR f_offsets: outcomes with the factual action replayed) and
 * an alternative arm (a_values in a_offsets: outcomes with policy-sampled
 * alternatives), each non-empty, n_f and n_a outcomes:
 *   advantage[t]  = mean(factual) - mean(alternative)         (A_replay)
 *   noise[t]      = sd of the factual arm, ddof = 1 (NaN when n_f = 1)
 *   resolution[t] = 1 - alpha^(1 / min(n_f, n_a)) when both arms are all
 *                   zero, or both all one, else NaN: an all-zero arm of n
 *                   binary outcomes has the exact one-sided (1 - alpha)
 *                   binomial upper bound 1 - alpha^(1/n) on its rate (and an
 *                   all-one arm the same bound on 1 - rate), so a zero
 *                   advantage there only excludes |dp| above this bound.
 * Requires 0 < alpha < 1. */
int fc_replay_advantage(const int64_t *f_offsets, const double *f_values,
                        const int64_t *a_offsets, const double *a_values,
                        int64_t n_steps, double alpha, double *advantage,
                        double *noise, double *resolution);

#endif
