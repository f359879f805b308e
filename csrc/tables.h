/*
 * tables.h - exact credit over coalition tables (part of fastcredit.h).
 *
 * v holds n_games tables of 2^m values each, back to back; 1 <= m <= 30.
 * Outputs are double. *_f32 variants read float tables. Results are exact
 * up to floating-point rounding; every kernel is O(2^m) or O(m 2^m) per game.
 * Every kernel returns FC_EINVAL, writing nothing, for m outside
 * 1 .. FC_MAX_TABLE_PLAYERS (any int, checked before it is used),
 * n_games < 0 or a NULL array.
 */
#ifndef FASTCREDIT_TABLES_H
#define FASTCREDIT_TABLES_H

#include <stdint.h>

/* log2 of the block length (in table entries) of the cache-blocked passes.
 * fc_semivalue_partial_* ranges must start and end on multiples of it. */
#define FC_TABLE_BLOCK_BITS 8

/* Shapley weights w[k] = k! (m-k-1)! / m! = 1 / (m C(m-1, k)), k = 0..m-1. */
int fc_shapley_weights(int m, double *weights);

/* Banzhaf weights w[k] = 1 / 2^(m-1), k = 0..m-1. */
int fc_banzhaf_weights(int m, double *weights);

/* Semivalue of each game: out[g*m + i] = sum over S not containing i of
 * weights[|S|] * (v(S + i) - v(S)).  weights has m entries.
 * Computed in one streaming pass as phi_i = T_i - B with
 *   T_i = sum_{S contains i} (v(S) - v(0)) (w[|S|-1] + w[|S|]),
 *   B   = sum_S (v(S) - v(0)) w[|S|]            (w[-1] = w[m] = 0),
 * where each T_i comes from halving folds of cache-sized blocks. A game
 * whose result has a non-finite entry (only a non-finite table, or sums
 * that overflow, give one) is summed again as the definition is written,
 * where T_i - B would turn a defined +-inf into NaN; the pass itself
 * carries the test, so finite batches pay nothing for it. Uses about
 * 100 KB of stack for per-size coefficient tables. */
int fc_semivalue_f64(const double *v, int64_t n_games, int m,
                     const double *weights, double *out);
int fc_semivalue_f32(const float *v, int64_t n_games, int m,
                     const double *weights, double *out);

/* The same pass over entries [start, stop) of ONE game, for splitting a large
 * game over threads: adds T_i into acc[i] (i < m) and B into acc[m], with
 * v(0) replaced by `center`. start and stop must be multiples of
 * 2^FC_TABLE_BLOCK_BITS (or stop = 2^m). Summing acc over disjoint ranges that
 * cover the table gives phi_i = acc[i] - acc[m]. */
int fc_semivalue_partial_f64(const double *v, int m, const double *weights,
                             double center, int64_t start, int64_t stop,
                             double *acc);
int fc_semivalue_partial_f32(const float *v, int m, const double *weights,
                             double center, int64_t start, int64_t stop,
                             double *acc);

/* fc_semivalue_partial on each range [start + r range_len, start + (r + 1)
 * range_len) of [start, stop) in turn, adding into acc[r (m + 1) ..] (the
 * same bits as one fc_semivalue_partial call per range, without redoing the
 * per-call set-up: what a thread's share of one large game takes). range_len
 * divides stop - start and is a multiple of 2^FC_TABLE_BLOCK_BITS, or is
 * stop - start itself. */
int fc_semivalue_ranges_f64(const double *v, int m, const double *weights, double center,
                            int64_t start, int64_t stop, int64_t range_len, double *acc);
int fc_semivalue_ranges_f32(const float *v, int m, const double *weights, double center,
                            int64_t start, int64_t stop, int64_t range_len, double *acc);

/* out[g*m + i] = v({i}) - v({}). */
int fc_singleton_f64(const double *v, int64_t n_games, int m, double *out);
int fc_singleton_f32(const float *v, int64_t n_games, int m, double *out);

/* out[g*m + i] = v(N) - v(N - i). */
int fc_leave_one_out_f64(const double *v, int64_t n_games, int m, double *out);
int fc_leave_one_out_f32(const float *v, int64_t n_games, int m, double *out);

/* out[(g*m + i)*m + j] = v({i,j}) - v({i}) - v({j}) + v({}) for i != j, 0 on
 * the diagonal. */
int fc_pair_interactions_f64(const double *v, int64_t n_games, int m,
                             double *out);
int fc_pair_interactions_f32(const float *v, int64_t n_games, int m,
                             double *out);

/* Size-resolved marginals: out[(g*m + i)*m + k] = mean over |S| = k, i not in
 * S, of v(S + i) - v(S), k = 0..m-1. */
int fc_size_resolved_f64(const double *v, int64_t n_games, int m, double *out);
int fc_size_resolved_f32(const float *v, int64_t n_games, int m, double *out);

/* Moebius transform a(S) = sum_{T subset of S} (-1)^{|S - T|} v(T) and its
 * inverse v(S) = sum_{T subset of S} a(T), each O(m 2^m) per game.
 * out holds n_games * 2^m doubles; the f64 variants may run in place
 * (out == v). */
int fc_moebius_f64(const double *v, int64_t n_games, int m, double *out);
int fc_moebius_f32(const float *v, int64_t n_games, int m, double *out);
int fc_from_moebius_f64(const double *a, int64_t n_games, int m, double *out);
int fc_from_moebius_f32(const float *a, int64_t n_games, int m, double *out);

/* Owen value over a hierarchy of coalitions (fastcredit.owen builds the
 * plan from a partition or a linkage matrix). Player i's share is
 *   out[g*m + i] = 1/|G_i| * sum over contexts C of w(C) (v(C + G_i) - v(C)),
 * where G_i = groups[i] is the mask of the tree leaf holding i (i alone, or
 * a cluster that is never split) and the contexts are built level by level
 * down the path from the root: player i's levels are l = level_start[i] ..
 * level_start[i+1] - 1 (root first); level l offers the n_l = item_start[l+1]
 * - item_start[l] sibling masks items[item_start[l] ..]; C takes any subset
 * R_l of each level's siblings, weighted by the product over levels of
 * weights[item_start[l] + l + |R_l|] (the Shapley weight of |R_l| among
 * n_l + 1 players). Per player, the subsets run as an odometer over the
 * levels (the last level fastest), each level's subsets in Gray-code order
 * (step t flips item ctz(t)), and the terms are summed in that order.
 * FC_EINVAL unless level_start[0] = item_start[0] = 0, both are
 * non-decreasing, a player has at most m - 1 levels, a level 1 .. m - 1
 * items, and every item and group is a mask in 1 .. 2^m - 1. */
int fc_owen_f64(const double *v, int64_t n_games, int m, const int64_t *groups,
                const int64_t *level_start, const int64_t *item_start,
                const int64_t *items, const double *weights, double *out);
int fc_owen_f32(const float *v, int64_t n_games, int m, const int64_t *groups,
                const int64_t *level_start, const int64_t *item_start,
                const int64_t *items, const double *weights, double *out);

#endif
