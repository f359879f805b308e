/*
 * interactions.h - exact interaction indices of every order (part of
 * fastcredit.h).
 *
 * Every index fastcredit computes (SII, BII, CHII, STII, k-SII, FSII, FBII,
 * kADD-SHAP, Moebius, Co-Moebius and the generalized values) is, for the
 * subsets S of one size s, a pair of size-weighted sums over a table x of
 * 2^m values: over the supersets W of S and over the subsets T of the
 * complement of S,
 *
 *   I(S) = sum_{W superset of S} up[|W|] x(W) + sum_{T, T and S disjoint} down[|T|] x(T)
 *
 * (x is the Moebius transform of the game for the cardinal indices, the game
 * itself for the generalized values; the weights are computed by the caller,
 * fastcredit/interactions.py). Complementing the index turns both sums into
 * one subset sum: y(Q) = up[m - |Q|] x(N - Q) + down[|Q|] x(Q), then
 * I(S) = sum_{Q subset of N - S} y(Q), the zeta transform of y read at N - S,
 * O(m 2^m) per game and size.
 */
#ifndef FASTCREDIT_INTERACTIONS_H
#define FASTCREDIT_INTERACTIONS_H

#include <stdint.h>

/* For each game g (n_games tables of 2^m values back to back, 1 <= m <= 30)
 * and each p < n_masks:
 *   out[g*n_masks + p] = sum_{W superset of masks[p]} up[|W|] x(W)
 *                      + sum_{T disjoint from masks[p]} down[|T|] x(T).
 * up and down hold m + 1 weights; down may be NULL (no second sum). work is
 * scratch of 2^m doubles, overwritten. One mask is summed directly (O(2^m));
 * more go through one zeta transform of work per game (O(m 2^m)).
 * FC_EINVAL, writing nothing, for m out of range, n_games < 0, n_masks < 0,
 * a mask with bits at or above m, or a NULL array (other than down). */
int fc_graded_sums_f64(const double *x, int64_t n_games, int m, const double *up,
                       const double *down, const uint64_t *masks, int64_t n_masks,
                       double *work, double *out);
int fc_graded_sums_f32(const float *x, int64_t n_games, int m, const double *up,
                       const double *down, const uint64_t *masks, int64_t n_masks,
                       double *work, double *out);

#endif
