/*
 * shaping.h - bounded zero-sum projection and token advantages
 * (part of fastcredit.h).
 *
 * Turns per-action credit into advantages a trainer can use: a projection
 * that centers and bounds per-action offsets, and the gather that lays
 * per-sequence and per-action advantages out on the tokens of a response.
 */
#ifndef FASTCREDIT_SHAPING_H
#define FASTCREDIT_SHAPING_H

#include <stdint.h>

/* Below this many breakpoints the projection's insertion sort beats qsort's
 * call overhead. */
#define FC_PROJECT_INSERTION_SORT_MAX 32
/* Active-set Newton steps the projection tries before the sorted search
 * (rows of more than FC_PROJECT_EVALUATE_MAX values). */
#define FC_PROJECT_NEWTON_STEPS 4
/* Rows of at most this many values find the breakpoint segment by
 * evaluating f at every breakpoint, with no sort (and, with unit weights
 * and one bound pair, no Newton steps). */
#define FC_PROJECT_EVALUATE_MAX 8
/* Sequences with fewer actions pick each token's advantage by a fixed chain
 * of compare-and-selects (vectorises; no gather); more use a table lookup. */
#define FC_TOKEN_SELECT_MAX 8

/* Weighted box projection of each of n_rows rows of m values:
 *
 *   z = argmin  sum_i w_i (z_i - u_i)^2 / 2
 *       s.t.    sum_i w_i z_i = total,   lower_i <= z_i <= upper_i,
 *
 * solved exactly by z_i = clip(u_i - tau, lower_i, upper_i), where tau is the
 * root of the non-increasing piecewise-linear f(tau) = sum_i w_i clip(u_i -
 * tau, lower_i, upper_i) - total. Between consecutive breakpoints
 * u_i - upper_i, u_i - lower_i every coordinate stays clipped or free, so f
 * is linear there and tau follows in closed form (no iteration tolerance):
 *   1. fast path: tau = (sum w_i u_i - total) / sum w_i, if it clips nothing;
 *   2. else, unless the row has unit weights, one bound pair and m <=
 *      FC_PROJECT_EVALUATE_MAX, at most FC_PROJECT_NEWTON_STEPS active-set
 *      Newton steps tau += f(tau) / (sum of the free w_i), accepted once the
 *      step leaves every coordinate's class (clipped up, clipped down, free)
 *      unchanged, which is the KKT certificate of the optimum (one or two
 *      steps on typical rows);
 *   3. else the sorted breakpoint search: the consecutive breakpoints where
 *      f crosses 0, tau solved on that segment. Rows of m >
 *      FC_PROJECT_EVALUATE_MAX sort the 2m breakpoints and binary search
 *      them (O(m log m)); shorter ones evaluate f at every breakpoint
 *      (O(m^2), branch-free), which finds the same segment.
 * Rows with unit weights and one bound pair (weights == NULL,
 * bound_col_stride == 0, m <= FC_PROJECT_EVALUATE_MAX) run steps 1 and 3
 * several rows at a time (one per vector lane: 8 with AVX-512, else 4),
 * with identical results.
 * When f vanishes on a whole interval of tau (every coordinate of positive
 * weight clipped there, so z varies only in the coordinates of weight 0),
 * tau is the point of it nearest 0, the interval possibly unbounded (a row
 * of zero weights only, no bound: tau = 0, z = u). Rows with a zero weight
 * check the root steps 1-3 found in one more O(m) pass (three when it is
 * near the end of such an interval); rows without one get the same z from
 * any root of the interval. With all w_i = 1 this is the Euclidean
 * projection onto {sum z = total} and the box.
 *
 * Element i of row r is read at
 *   u[r*m + i], lower/upper[r*bound_row_stride + i*bound_col_stride],
 *   weights[r*weight_row_stride + i] (weights == NULL: all 1),
 *   total[r*total_stride],
 * so a scalar, per-row, per-coordinate or full bound is a choice of strides
 * (each stride >= 0). Bounds may be infinite (lower = -inf or upper = +inf
 * leaves that side open). Requires lower_i <= upper_i, w_i >= 0 and
 * sum_{w>0} w lower <= total <= sum_{w>0} w upper: these are NOT checked
 * here (checking them per row costs as much as the projection; the Python
 * layer validates them) and an infeasible row gets an unspecified finite or
 * infinite result, never an out-of-bounds access. A row with a non-finite u
 * becomes all NaN. work holds 2m doubles (the f32 variant: 3m).
 * Returns FC_EINVAL for n_rows < 0, m < 1, negative strides or NULL arrays. */
int fc_project_box_f64(const double *u, int64_t n_rows, int64_t m,
                       const double *lower, const double *upper,
                       int64_t bound_row_stride, int64_t bound_col_stride,
                       const double *weights, int64_t weight_row_stride,
                       const double *total, int64_t total_stride,
                       double *out, double *work);
int fc_project_box_f32(const float *u, int64_t n_rows, int64_t m,
                       const double *lower, const double *upper,
                       int64_t bound_row_stride, int64_t bound_col_stride,
                       const double *weights, int64_t weight_row_stride,
                       const double *total, int64_t total_stride,
                       double *out, double *work);

/* Per-action advantages of n_rows rows of m actions (fastcredit's
 * shape_advantages), in one pass over blocks of rows:
 *
 *   u   = c - mean(c)                         (sums in index order)
 *   u  /= spread   (normalize: 0 the population sd of u, 1 max |u|,
 *                   2 no division);
 *                  spread 0 makes u = 0, a NaN spread u = NaN
 *   z   = fc_project_box(u, lower = -kappa, upper = kappa, weights, total 0)
 *   out = z * beta + base[r]
 *
 * c = credit[r*m ...], weights[r*m + i] (NULL: all 1; must be finite and
 * >= 0, NOT checked here). A row whose credit is not finite gets NaN (its u
 * is NaN, and so its z). The rows go in blocks of about 2048 values, which
 * stay in cache between these passes; work holds 3 max(2048, m) + 3m
 * doubles. Returns FC_EINVAL for n_rows < 0, m < 1, NULL arrays, kappa < 0
 * or NaN, or an unknown normalize. */
int fc_shape_advantages_f64(const double *credit, int64_t n_rows, int64_t m,
                            const double *base, double beta, double kappa, int normalize,
                            const double *weights, double *out, double *work);
int fc_shape_advantages_f32(const float *credit, int64_t n_rows, int64_t m,
                            const double *base, double beta, double kappa, int normalize,
                            const double *weights, double *out, double *work);

/* Token advantages of n_seq sequences of n_tok tokens:
 *
 *   out[g*n_tok + t] = 0                              if mask && !mask[g*n_tok + t]
 *                    = base[g]                        if a == -1
 *                    = action_adv[g*m + a]            if 0 <= a < m
 *   with a = token_action[g*n_tok + t],
 *
 * rounded to float. mask may be NULL (every token kept). work holds
 * max(m, FC_TOKEN_SELECT_MAX) + 1 floats (the per-sequence lookup table). An
 * a outside [-1, m) makes the function store its flat position in *bad and
 * return FC_EINVAL; rows before the offending one have then been written
 * (the range check is fused into the pass so the tokens are read once).
 * Otherwise *bad = -1. */
int fc_token_advantages_i32(const double *base, const double *action_adv,
                            int64_t n_seq, int64_t m,
                            const int32_t *token_action, int64_t n_tok,
                            const uint8_t *mask, float *out, float *work,
                            int64_t *bad);
int fc_token_advantages_i64(const double *base, const double *action_adv,
                            int64_t n_seq, int64_t m,
                            const int64_t *token_action, int64_t n_tok,
                            const uint8_t *mask, float *out, float *work,
                            int64_t *bad);

#endif
