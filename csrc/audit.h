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

/* Percentile intervals of rows of replicates, as numpy.quantile(reps -
 * shift, [q_low, q_high], axis=1) (method "linear") computes them, bit for
 * bit.
 *
 * Row g is reps[g*n .. g*n + n), overwritten by x_i = reps_i - shift and
 * then reordered (caller scratch). For q in {q_low, q_high}: with
 * v = (n - 1) * q (float64), the order statistics x_(j), x_(j+1) at
 * j = floor(v) are interpolated with t = v - j as
 *     d = x_(j+1) - x_(j);  x_(j) + d * t,  or  x_(j+1) - d * (1 - t) when t >= 0.5;
 * at v >= n - 1 both are the largest x and t = v + 1 (numpy's own index
 * clipping). A row holding a NaN gets NaN for both. The order statistics
 * come from a deterministic selection (median-of-three pivots, branch-free
 * partitions, a heap sort past 2 log2(n) + 8 rounds), O(n) expected.
 * Requires n >= 1, 0 <= q_low <= q_high <= 1. */
int fc_percentile_interval(double *reps, int64_t n_rows, int64_t n, double shift,
                           double q_low, double q_high, double *low, double *high);

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

/* Per-request agreement of credit with reference credit (fastcredit.alignment).
 *
 * Row g of credit and reference, (n, m) row-major, is centred when center
 * (x - sum(x) / m, summed left to right); with c, r those rows, dot = sum c_i r_i, cc = sum c_i^2, rr = sum r_i^2 (left
 * to right). When atol > 0, c and r are then tied in place: a value within
 * atol of 0 is 0, and each run of sorted values whose gaps are at most atol
 * takes the run's smallest value (NaN stays NaN); a row is constant when
 * all its tied values are 0. When atol = 0 a row is constant when its sum of
 * squares is 0. Then
 *     cosine[g]       = NaN if r is constant, else 0 if c is, else
 *                       dot / (sqrt(cc) sqrt(rr)) (of the untied values),
 *     sign[g]         = #{i : sign c_i = sign r_i} / m (NaN agrees with
 *                       nothing),
 *     sign_nonzero[g] = the same count over {i : r_i != 0} / its size (NaN
 *                       when empty),
 *     top[g]          = argmax c == argmax r (first index of the largest, or
 *                       of the first NaN, as numpy.argmax),
 *     spearman[g]     = the Spearman rho of c against r (after the ties), as
 *                       fc_spearman_groups with min_len 2 gives it,
 *     defined[g]      = r is not constant.
 * work (double, 5 m) and idx (int64, m) are caller scratch. Requires
 * m >= 2, 0 <= atol < inf. */
int fc_alignment_rows(int64_t n, int64_t m, const double *credit, const double *reference,
                      int center, double atol, double *work, int64_t *idx, double *cosine,
                      double *sign, double *sign_nonzero, double *spearman, uint8_t *top,
                      uint8_t *defined);

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
 *   critical[t]   = |advantage[t]| > threshold (0 for NaN).
 * The offsets are checked in one pass before anything is written: each must
 * start >= 0 and give every step at least one outcome (strictly increasing);
 * their ends must lie within the values (not checked here). When step t's
 * offsets (in either arm) break this, *bad = t (the first such step) and the
 * function returns FC_EINVAL; otherwise *bad = -1 (bad may be NULL).
 * Requires 0 < alpha < 1, threshold >= 0. */
int fc_replay_advantage(const int64_t *f_offsets, const double *f_values,
                        const int64_t *a_offsets, const double *a_values,
                        int64_t n_steps, double alpha, double threshold, double *advantage,
                        double *noise, double *resolution, uint8_t *critical, int64_t *bad);

/* Percentile-bootstrap replicates of a paired difference of Spearman
 * correlations, rho(x, z) - rho(y, z), the triples (x_i, y_i, z_i)
 * resampled together.
 *
 * Each variable is given sorted (sorted_v[p] its p-th smallest value,
 * order_v[p] that item's index, a stable argsort). For r in [start, stop),
 * replicate r draws n item indices exactly as fc_bootstrap_median does
 * (stream (seed, r), two per draw) and tallies them per item in counts (n
 * int32 scratch). The resample's average ranks are read off the tallies in
 * sorted order: a run of equal values holding C draws, after `seen` draws of
 * smaller values, has rank seen + (C + 1) / 2. With c = (n + 1) / 2 and
 * w_i the count of item i, in item order,
 *     S_uv = sum_i w_i (ru_i - c)(rv_i - c)      ((w_i du) dv, left to right)
 *     rho(u, z) = S_uz / sqrt(S_uu * S_zz), 0 when S_uu = 0 (a constant
 *                 signal ranks nothing), NaN when S_zz = 0,
 * and out[r - start] = rho(x, z) - rho(y, z). ranks is scratch of 3 n
 * doubles. Requires 1 <= n <= FC_BOOTSTRAP_MAX_ITEMS, 0 <= start <= stop,
 * order_* permutations of 0..n-1 and no NaN values. */
int fc_bootstrap_spearman_diff(const double *sorted_x, const int64_t *order_x,
                               const double *sorted_y, const int64_t *order_y,
                               const double *sorted_z, const int64_t *order_z, int64_t n,
                               uint64_t seed, int64_t start, int64_t stop, int32_t *counts,
                               double *ranks, double *out);

/* The worlds of the additive correlated-error null (fastcredit.audit.null).
 *
 * n requests (n >= 2), each with n_edges insertion-edge marginals, n_pairs
 * pair interactions and n_players centred Shapley values of the audit
 * evaluator (edge_audit, pair_audit, phi_audit, row-major (n, .)), the
 * audit's signs of the first two (edge_sign, pair_sign: -1, 0, +1), the
 * request's scale s_r > 0 and the same three statistics of its normalised
 * residual (train - audit) / s_r (edge_resid, pair_resid, phi_resid). All
 * three statistics are linear in the table, so the world-w training
 * evaluator of request r, audit_r + s_r * residual_d with donor d, has
 *     edge e:  x = edge_audit[r, e] + s_r * edge_resid[d, e]
 *     pair j:  x = pair_audit[r, j] + s_r * pair_resid[d, j]
 *     phi i:   t_i = phi_audit[r, i] + s_r * phi_resid[d, i].
 * World w (start <= w < stop) draws the donors of r = 0..n-1 in turn from the
 * stream (seed, w): d = fc_rng_below(n - 1), plus one when d >= r (never the
 * request itself). With sign(x) = +1 for x > atol, -1 for x < -atol, else 0,
 * at o = (w - start) * n + r:
 *     edge_hits[o]  = #{e : edge_sign[r, e] != 0 and sign(x_e) = edge_sign[r, e]}
 *     pair_count[o] = #{j : pair_sign[r, j] != 0 and sign(x_j) != 0}
 *     pair_hits[o]  = #{j counted : sign(x_j) = pair_sign[r, j]}
 *     cosine[o]     = sum t_i a_i / sqrt(sum t_i^2 * sum a_i^2) (sums in i
 *                     order), 0 when sum t_i^2 = 0, NaN when sum a_i^2 = 0,
 * a = phi_audit[r]. Requires finite inputs, atol >= 0,
 * 2 <= n <= FC_RNG_MAX_RANGE + 1, 0 <= start <= stop. */
int fc_null_worlds(int64_t n, int64_t n_edges, int64_t n_pairs, int64_t n_players,
                   const double *scale, const double *edge_audit, const int8_t *edge_sign,
                   const double *edge_resid, const double *pair_audit,
                   const int8_t *pair_sign, const double *pair_resid,
                   const double *phi_audit, const double *phi_resid, double atol,
                   uint64_t seed, int64_t start, int64_t stop, int32_t *edge_hits,
                   int32_t *pair_hits, int32_t *pair_count, double *cosine);

#endif
