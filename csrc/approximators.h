/*
 * approximators.h - the compiled pieces of the approximator family
 * (fastcredit.approximate; part of fastcredit.h).
 *
 * An approximator draws samples, each a fixed number c of coalitions
 * (uint64 masks, so m <= 64), has the game evaluated on them (by its
 * caller: a table read, a Python call, an @njit game; each distinct
 * coalition once for a deterministic game), and folds the values into
 * per-stratum moments. Drawing and folding are these kernels.
 *
 * Randomness: sample u of game g draws from the stream
 * state = fc_rng_key(fc_rng_key(seed, g), u) (csrc/rng.h), so a sample's
 * coalitions depend on (seed, g, u) only: the same on every backend, for any
 * batching of the samples.
 *
 * A random subset of size k of a list of players p[0..n) is drawn by a
 * partial Fisher-Yates shuffle: for j = 0..k-1, r = fc_rng_below(state, n - j),
 * swap p[j] and p[j + r], take p[j].
 *
 * Moments (fc_approx_fold_*): per stratum s, count[s], first[s] (the first
 * value folded in), s1[s] += x - first[s], s2[s] += (x - first[s])^2, in
 * sample order; the caller finishes mean = first + s1 / count and the sample
 * variance (s2 - s1^2 / count) / (count - 1).
 */
#ifndef FASTCREDIT_APPROXIMATORS_H
#define FASTCREDIT_APPROXIMATORS_H

#include <stdint.h>

/* Most players of an approximated game (coalitions are uint64 masks). */
#define FC_APPROX_MAX_PLAYERS 64

/* SVARM's samples u = first .. first + n - 1: a size drawn from the sizes
 * sizes[0..n_sizes) with cumulative probabilities cdf (x = fc_rng_uniform,
 * the first k with x < cdf[k], the last size when none), then a uniformly
 * random coalition of that size: masks[u - first]. FC_EINVAL for m out of
 * 1..64, n < 0, n_sizes < 1, a size outside 0..m, first < 0 or NULL arrays. */
int fc_approx_draw_svarm(uint64_t seed, uint64_t game, int64_t first, int64_t n, int m,
                         const int64_t *sizes, const double *cdf, int64_t n_sizes,
                         uint64_t *masks);

/* Stratified sampling's samples: sample u is player i = u mod m and size
 * l = (u div m) mod m (shapiq's order: sizes outer, players inner); a
 * uniformly random coalition S of l of the other players (partial
 * Fisher-Yates over them in ascending order): masks[2k] = S,
 * masks[2k + 1] = S + i, slots[k] = i * m + l (k = u - first). */
int fc_approx_draw_stratified(uint64_t seed, uint64_t game, int64_t first, int64_t n, int m,
                              uint64_t *masks, int64_t *slots);

/* Owen sampling's samples: sample u is player i = u mod m at anchor
 * a = (u div m) mod n_anchors (anchors outer, players inner); each other
 * player j (ascending) joins S when fc_rng_uniform < anchors[a]:
 * masks[2k] = S, masks[2k + 1] = S + i, slots[k] = i * n_anchors + a. */
int fc_approx_draw_owen(uint64_t seed, uint64_t game, int64_t first, int64_t n, int m,
                        const double *anchors, int64_t n_anchors, uint64_t *masks,
                        int64_t *slots);

/* Folds x[k] = values[2k + 1] - values[2k] (a marginal) into stratum
 * slots[k]'s moments, k = 0..n-1, in order. Slots must lie in
 * 0..n_slots-1 (FC_EINVAL otherwise, with nothing written). */
int fc_approx_fold_pairs(const double *values, const int64_t *slots, int64_t n,
                         int64_t n_slots, int64_t *count, double *first, double *s1,
                         double *s2);

/* ---- Monte-Carlo interaction estimators (SVARM-IQ, SHAP-IQ;
 * fastcredit/approximators/montecarlo.py) --------------------------------- */

/* SVARM-IQ's fold: coalition T = masks[k] of size t, x = values[k] - centre,
 * goes into the stratum ((j << order) + p) * (m + 1) + t of every subset j =
 * 0..n_subsets-1, p the pattern of T on the subset's members
 * members[j * order + b], b = 0..sizes[j]-1 (bit b of p set iff T holds
 * member b), in the order of k, then j. FC_EINVAL for m out of 1..64, order
 * out of 1..min(m, 30), a size out of 1..order, a member out of 0..m-1, a
 * mask with a bit at m or above, n or n_subsets < 0, or NULL arrays. */
int fc_approx_fold_svarmiq(const uint64_t *masks, const double *values, int64_t n, int m,
                           double centre, const int64_t *members, const int64_t *sizes,
                           int64_t n_subsets, int order, int64_t *count, double *first,
                           double *s1, double *s2);

/* SHAP-IQ's fold: unit u = 0..n_units-1 holds the per_unit coalitions
 * masks[u * per_unit + c]; its value for subset j (members and sizes as in
 * fc_approx_fold_svarmiq) is y = sum over c (in order) of (values[.] -
 * centre) * weights[(s * (m + 1) + t) * (order + 1) + i], s = sizes[j],
 * t = |T|, i = the members T holds, folded into the moments of j (in the
 * order of u, then j). FC_EINVAL for m out of 1..64, per_unit < 1, order
 * out of 1..m, a size out of 1..order, a member out of 0..m-1, a mask with
 * a bit at m or above, negative counts or NULL arrays. */
int fc_approx_fold_shapiq(const uint64_t *masks, const double *values, int64_t n_units,
                          int per_unit, int m, double centre, const int64_t *members,
                          const int64_t *sizes, int64_t n_subsets, int order,
                          const double *weights, int64_t *count, double *first, double *s1,
                          double *s2);

/* ---- regression estimators (KernelSHAP, kADD-SHAP, RegressionFSII/FBII,
 * KernelSHAP-IQ; fastcredit/approximators/regression.py) ------------------ */

/* Folds coalitions masks[k] (values[k], k = 0..n-1) into the normal equations
 * of n_kernels weighted least-squares problems over the p columns
 * columns[a] (interaction masks, sizes column_sizes[a] in 0..order): the
 * coalition S's row is x_a = coef[column_sizes[a] * (order + 1) +
 * |S & columns[a]|], its response y = values[k] - centre, its weight in
 * problem j w = weights[j * (m + 1) + |S|] (skipped when 0); then
 * moment[j * p + a] += (w x_a) y and, for a <= b with x_a, x_b != 0,
 * gram[(j * p + a) * p + b] += (w x_a) x_b (the upper triangle), in the
 * order of k, then a, then b. work_x, work_i: scratch of p entries.
 * FC_EINVAL for m out of 1..64, n < 0, n_kernels < 1, p < 1, order out of
 * 0..m, a column size out of 0..order, a mask or column with a bit at m or
 * above, or NULL arrays. */
int fc_approx_fold_regression(const uint64_t *masks, const double *values, int64_t n, int m,
                              double centre, const double *weights, int64_t n_kernels,
                              const uint64_t *columns, const int64_t *column_sizes, int64_t p,
                              const double *coef, int order, double *work_x, int64_t *work_i,
                              double *gram, double *moment);

/* The sandwich variance's scores over n_stages stacked fits: unit u (c
 * coalitions masks[u * c + q], values[u * c + q]) has, for each stage t and
 * column a < reach[t] (0 otherwise), g[t * p + a] = sum over its coalitions
 * of w_t(|S|) r_t(S) x_a(S),
 * with x as in fc_approx_fold_regression, w_t = weights[t * (m + 1) + |S|]
 * and r_t = values - centre - sum_{t' <= t} x . phi[t' * p ..]; then
 * scores[i] += g[i] and scores_sq[i * n_stages * p + j] += g[i] g[j]
 * (i <= j, both non-zero). work_x, work_i, work_g: n_stages * p entries of
 * scratch; work_fit: n_stages. FC_EINVAL as fc_approx_fold_regression, or
 * for a reach out of 0..p. */
int fc_approx_fold_scores(const uint64_t *masks, const double *values, int64_t n_units, int c,
                          int m, double centre, const double *weights, int64_t n_stages,
                          const uint64_t *columns, const int64_t *column_sizes, int64_t p,
                          const double *coef, int order, const double *phi,
                          const int64_t *reach, double *work_x, int64_t *work_i,
                          double *work_g, double *work_fit, double *scores_sq, double *scores);

/* Solves A x = rhs[r] for each of the n_rhs rows (length n) of rhs, in
 * place, A (n x n, row-major) symmetric positive definite given by its upper
 * triangle, which is overwritten by the Cholesky factor R (A = R^T R; sums
 * in ascending k). info[0] = 0, or j + 1 when pivot j falls to at most
 * 1e-13 of A's diagonal entry (A not numerically positive definite: rhs is
 * then left as it was). FC_EINVAL for n < 1, n_rhs < 0 or NULL arrays. */
int fc_approx_cholesky_solve(double *a, int64_t n, double *rhs, int64_t n_rhs, int64_t *info);

/* --- sparse transform (SPEX): binary BCH decoding ------------------------------ */

#define FC_BCH_MAX_T 16          /* errors a BCH code corrects, at most */
#define FC_BCH_MAX_ORDER 65535   /* 2^q - 1 of its field GF(2^q), at most */

/* Hard-decision decoding of n_words received words (length bits each, 0/1,
 * row-major) of a narrow-sense binary BCH code of length order = 2^q - 1
 * (shortened to length: the leading order - length bits are 0) correcting t
 * errors, as galois' BCH.decode: bit j is the coefficient of
 * x^(length - 1 - j); syndromes S_l = r(alpha^l), l = 1..2t, over GF(2^q)
 * (gf_exp[e] = alpha^e, 0 <= e < 2 * order; gf_log[x] = log x, 1 <= x <=
 * order); Berlekamp-Massey gives the error locator and its linear complexity
 * v; a Chien search over all order positions finds its roots. n_errors[w] = v
 * and decoded[w] the corrected word when v <= t and the locator has v roots,
 * all inside the word; otherwise n_errors[w] = -1 and decoded[w] = received[w]
 * (0 and the word itself when every syndrome is 0). FC_EINVAL for a bit
 * other than 0/1, t outside 1..FC_BCH_MAX_T or 2t > order, order not 2^q - 1
 * in 3..FC_BCH_MAX_ORDER, length outside 1..order, or NULL arrays. */
int fc_approx_bch_decode(const uint8_t *received, int64_t n_words, int64_t length,
                         int64_t order, int64_t t, const int32_t *gf_exp,
                         const int32_t *gf_log, uint8_t *decoded, int64_t *n_errors);

/* --- ProxySPEX: the Fourier coefficients of a fitted tree ensemble (proxyspex.c) ---
 *
 * Trees over m binary features (x_f = 0 goes left, as shapiq's
 * _lgboost_tree_to_fourier reads LightGBM's splits), tree k with internal
 * nodes node_start[k] .. node_start[k + 1] - 1 (split_feature, left_child,
 * right_child; a child c >= 0 is the tree's internal node c, which must come
 * after its parent, c < 0 its leaf -c - 1) and leaves leaf_start[k] ..
 * leaf_start[k + 1] - 1 (one more than its nodes; a tree of one leaf has no
 * node). A leaf of value v at depth d, whose path turns right at the depths
 * in R, is v 2^-d prod_j (1 + s_j chi_{f_j}) with chi_f = (-1)^{x_f} and
 * s_j = -1 in R, +1 else: for every subset J of its path, the term
 * v 2^-d (-1)^{|J & R|} at the frequency XOR_{j in J} 2^{f_j}.
 *
 * The terms are taken tree by tree, leaves depth first (left first), J
 * ascending (bit j = depth j); each distinct frequency is written once, in
 * the order of first appearance, to masks[0..n_freq), its terms summed in
 * that order into values[] (the first term, then += each further one).
 * *n_terms = the number of terms (sum over leaves of 2^d) is always
 * written; the frequencies only when capacity >= *n_terms and n_slots (a
 * power of two, the open-addressing table's slots, work) >= 2 *n_terms,
 * else *n_freq = 0 and nothing else is written (call once to size, then to
 * fill). FC_EINVAL for n_trees < 0, m outside 1..64, node_start[0] or
 * leaf_start[0] not 0, a tree whose leaves are not its nodes + 1, a child
 * out of range or not after its parent, a feature outside 0..m-1, a leaf
 * reached twice, a path deeper than 62, more than 2^62 terms, n_slots
 * neither 0 nor a power of two, capacity < 0 or NULL tree arrays. */
int fc_approx_tree_fourier(const int64_t *split_feature, const int64_t *left_child,
                           const int64_t *right_child, const int64_t *node_start,
                           const double *leaf_value, const int64_t *leaf_start,
                           int64_t n_trees, int m, int64_t *slots, int64_t n_slots,
                           uint64_t *masks, double *values, int64_t capacity,
                           int64_t *n_terms, int64_t *n_freq);

/* SPEX's singleton detection (sparse_transform's multi-detect peeling, step
 * 1) on every bin j = 0..2^b - 1 of every subsampling group g =
 * 0..n_groups-1, bin = g * 2^b + j: its column col[d] = u[(g * n_delays + d)
 * * 2^b + j], d = 0..n_delays-1 (the subsampled Walsh-Hadamard transform
 * under delay d; delay 0 the zero row of delays (n_delays, n), the others
 * the parity rows of the BCH code: order, t, gf_exp, gf_log as in
 * fc_approx_bch_decode, length n + n_delays - 1). A bin with check[bin] = 0
 * or energy sum col^2 <= cutoff * n_delays gets check 0 and status 0. Else
 * k (n bits, k + bin * n) is found by decoding the word [0] * n + parity,
 * parity[p] = col[p + 1] / col[0] < 0 (soft) or sign(col[p + 1]) !=
 * sign(col[0]) (hard), k = the decoded message (0 on a failure); soft: when
 * the hard decision fails, Chase-2 over the min(t, n_delays - 1) parity
 * bits of least |col[p + 1] / col[0]| (ascending, the first on ties) with
 * the t (t + 1) / 2 flip patterns of sparse_transform's
 * k_smallest_partial_sums_with_indices (its heap, replayed; tried from the
 * heap's last entry to its first), k = the first message of fewest errors
 * among the distinct messages decoded. Then rho[bin] = sum_d s_d col[d] /
 * n_delays, s_d = (-1)^(delays[d] . k); status 2 (a singleton) when k's bin
 * in the group, bit p (most significant first) the parity of
 * subsampling[(g * n + i) * b + p] & k[i] over i, is j and sum_d (col[d] -
 * rho s_d)^2 / energy < energy_cutoff; else status 1 and check 0. work:
 * (t (t + 1) / 2 + 3) * length bytes of scratch. FC_EINVAL for n_groups < 0,
 * n_delays < 2, b outside 0..30, n < 1, a code as fc_approx_bch_decode
 * refuses, or NULL arrays. */
int fc_approx_spex_detect(const double *u, int64_t n_groups, int64_t n_delays, int64_t b,
                          const uint8_t *subsampling, const uint8_t *delays, int64_t n,
                          int64_t order, int64_t t, const int32_t *gf_exp,
                          const int32_t *gf_log, int soft, double cutoff, double energy_cutoff,
                          uint8_t *check, uint8_t *status, uint8_t *k, double *rho,
                          uint8_t *work);

#endif
