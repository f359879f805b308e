/*
 * sampling.h - permutation-sampling Shapley estimates (part of fastcredit.h).
 *
 * A walk along a permutation pi of the m players evaluates v on its m + 1
 * prefixes P_0 = {}, P_k = {pi_0, .., pi_(k-1)} and gives player pi_k the
 * marginal v(P_(k+1)) - v(P_k). Its expectation over uniform permutations is
 * the Shapley value. With antithetic pairing, each permutation is walked
 * together with its reverse and the pair's average marginal is one sample
 * (the two walks are negatively correlated on games with monotone marginals,
 * so the pair average has less variance than two independent walks). The
 * estimate is the mean of the n samples and its standard error is
 * sd(samples) / sqrt(n) (sample sd, n - 1 in the denominator).
 *
 * Randomness: sampling unit u of game g (a pair, or a single walk) draws its
 * permutation from the stream state fc_rng_key(fc_rng_key(seed, g), u) by
 * Fisher-Yates: perm = identity, then for i = m-1 down to 1 swap perm[i] and
 * perm[fc_rng_below(state, i + 1)]. Every backend and thread count therefore
 * walks the same permutations.
 */
#ifndef FASTCREDIT_SAMPLING_H
#define FASTCREDIT_SAMPLING_H

#include <stdint.h>

/* Largest player count the samplers accept (permutations are int32). */
#define FC_SAMPLING_MAX_PLAYERS 4096

/* Per-game counters written by fc_permutation_shapley_*: stats[g*FC_STATS + .]. */
#define FC_STATS 4
#define FC_STAT_EVALS 0       /* game evaluations (table reads) spent       */
#define FC_STAT_WALKS 1       /* permutation walks completed (pairs count 2) */
#define FC_STAT_SAMPLES 2     /* samples averaged: pairs, or walks           */
#define FC_STAT_TRUNCATED 3   /* 1 when the budget stopped the sampling      */

/* The permutations of units first_unit .. first_unit + n_units - 1 of game
 * `game` (see above): perms[u*m + k] is the k-th player of unit
 * first_unit + u. 1 <= m <= FC_SAMPLING_MAX_PLAYERS, n_units >= 0 and
 * 0 <= first_unit <= INT64_MAX - n_units (every unit number is an int64);
 * else FC_EINVAL with nothing written. perms may be NULL when n_units = 0. */
int fc_sampling_permutations(uint64_t seed, uint64_t game, int64_t first_unit,
                             int64_t n_units, int m, int32_t *perms);

/* Permutation-sampling Shapley estimate of each of n_games tables of 2^m
 * values (1 <= m <= FC_MAX_TABLE_PLAYERS); game g is keyed as game
 * first_game + g, so a batch split into chunks gives the same numbers.
 *
 * Sampling runs unit by unit, u = 0, 1, ..., up to max_walks walks (max_walks
 * a positive multiple of the walks per unit: 2 when antithetic, else 1).
 * Evaluation cost: with cache_endpoints, v({}) and v(N) are read once (2
 * evaluations) and a walk costs its m - 1 interior prefixes; without, a walk
 * costs m + 1. A unit starts only if its whole cost fits in `budget` (so the
 * evaluations never exceed it; budget must cover the fixed cost and one unit);
 * a unit that does not fit is not walked and the game is marked truncated.
 * When tol > 0, sampling also stops after the first sample n >= min_samples
 * (min_samples >= 2) at which every standard error is <= tol.
 *
 * Samples are accumulated shifted by the first sample x_1 (d = x - x_1,
 * s1 += d, s2 += d * d) in walk order; then
 *   values[g*m + i] = x_1 + s1 / n,
 *   stderr[g*m + i] = sqrt(((s2 - s1 * s1 / n) / (n - 1)) / n)  (inf if n = 1).
 * NaN in a table propagates to the estimates that read it.
 *
 * Returns FC_EINVAL, with nothing written, for m out of range, n_games < 0,
 * first_game < 0 or first_game > INT64_MAX - n_games (every game number is an
 * int64), max_walks not a positive multiple of the walks per unit, budget
 * below the fixed cost plus one unit, tol < 0 or NaN, min_samples < 2, or a
 * NULL array when n_games > 0. */
int fc_permutation_shapley_f64(const double *v, int64_t n_games, int m,
                               uint64_t seed, int64_t first_game,
                               int64_t max_walks, int64_t budget,
                               int antithetic, int cache_endpoints,
                               double tol, int64_t min_samples,
                               double *values, double *stderr_out,
                               int64_t *stats);
int fc_permutation_shapley_f32(const float *v, int64_t n_games, int m,
                               uint64_t seed, int64_t first_game,
                               int64_t max_walks, int64_t budget,
                               int antithetic, int cache_endpoints,
                               double tol, int64_t min_samples,
                               double *values, double *stderr_out,
                               int64_t *stats);

/* The orders of the m players that keep every cluster of a binary tree
 * together (shap's PermutationExplainer with a Partition masker; their
 * uniform mixture gives the Owen/Winter value, fastcredit.owen).
 * children[2r], children[2r + 1] are the two nodes row r of the tree joins
 * (players 0..m-1, row r's cluster is node m + r; a child is a player or an
 * earlier row's cluster, each node but the root, row m - 2, joined once).
 * Unit first_unit + u draws from the stream fc_rng_key(fc_rng_key(seed,
 * game), first_unit + u) one bit per row, rows m - 2 (the root) down to 0,
 * the top bit of fc_rng_next: 0 puts children[2r]'s players before
 * children[2r + 1]'s, 1 after; perms[u*m + t] is the t-th player of that
 * order. 1 <= m <= FC_SAMPLING_MAX_PLAYERS, n_units >= 0, 0 <= first_unit
 * <= INT64_MAX - n_units; a tree that is not one (a child out of range or
 * joined twice) is FC_EINVAL, as are NULL arrays (perms may be NULL when
 * n_units = 0, children when m = 1), with nothing written. Allocates
 * 4m - 3 int64 of workspace (FC_ENOMEM). */
int fc_sampling_tree_permutations(uint64_t seed, uint64_t game, int64_t first_unit,
                                  int64_t n_units, int m, const int64_t *children,
                                  int32_t *perms);

/* Most features of a masked row (coalitions are uint64 masks). */
#define FC_MASKED_MAX_FEATURES 64

/* Most players whose coalitions fc_affordable_pairs keeps one bit each of
 * (2^k bits: 8 KB at 16); beyond, a hash set. */
#define FC_AFFORDABLE_DENSE_PLAYERS 16

/* The antithetic pairs of walks over k players that fit a budget of
 * distinct coalitions (fastcredit.shap's Permutation explainer plans its
 * model calls with it). Pair p of row r walks the order
 * perms[(r*n_pairs + p)*k ..] (a permutation of 0..k-1) forward and
 * backward; its coalitions are the prefixes of 1 .. k-1 players of the
 * order and their complements (the backward walk's), 2(k - 1) masks (bit j
 * = player j), all distinct. With {} and N counted once, pair p adds its
 * coalitions no earlier pair of the row has:
 *   pairs[r]  = the most pairs P <= n_pairs whose 2 + (distinct coalitions of
 *               pairs 0 .. P-1) <= max_evals, taken in order;
 *   counts[r] = that 2 + distinct;
 *   masks[r*capacity + i], i < counts[r]: those coalitions, 0 and 2^k - 1,
 *               in increasing order; the rest of the row UINT64_MAX.
 * 2 <= k <= FC_MASKED_MAX_FEATURES, n_rows >= 0, n_pairs >= 0,
 * max_evals >= 2, capacity >= min(max_evals, 2 + 2 (k - 1) n_pairs), every
 * order a permutation, else FC_EINVAL with nothing written (arrays may be
 * NULL only when n_rows = 0); FC_ENOMEM when its set of a row's
 * coalitions cannot be allocated. */
int fc_affordable_pairs(const int32_t *perms, int64_t n_rows, int64_t n_pairs, int k,
                        int64_t max_evals, int64_t capacity, int64_t *pairs, int64_t *counts,
                        uint64_t *masks);

/* The masked rows of a tabular explainer (fastcredit.shap): n_coalitions
 * coalitions of m features, each over n_b background rows:
 *   rows[(c*n_b + b)*m + j] = xs[owner[c]*m + j]   if bit j of masks[c] is set,
 *                             background[b*m + j]  otherwise.
 * 1 <= m <= FC_MASKED_MAX_FEATURES, n_b >= 1, n_x >= 1, n_coalitions >= 0;
 * every mask below 2^m and every owner in [0, n_x), else FC_EINVAL with
 * nothing written (arrays may be NULL only when n_coalitions = 0). */
int fc_masked_rows(const double *background, int64_t n_b, int m, const double *xs,
                   int64_t n_x, const uint64_t *masks, const int64_t *owner,
                   int64_t n_coalitions, double *rows);

/* The average of each coalition's model outputs over the background rows:
 *   means[c*k + o] = sum_b weights[b] * outputs[(c*n_b + b)*k + o]
 * summed over b = 0, 1, ..., or, with weights NULL, that sum of the outputs
 * divided by n_b. n_coalitions >= 0, n_b >= 1, k >= 1, else FC_EINVAL with
 * nothing written (outputs and means may be NULL only when n_coalitions =
 * 0). NaN propagates. */
int fc_background_mean(const double *outputs, int64_t n_coalitions, int64_t n_b, int64_t k,
                       const double *weights, double *means);

#endif
