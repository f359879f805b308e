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

/* SVARM's fold: coalition masks[k] of size l with value x = values[k] -
 * centre goes into the stratum (i, l, 1) of each member i and (i, l, 0) of
 * each other player, stratum index (i * (m + 1) + l) * 2 + in, i = 0..m-1. */
int fc_approx_fold_svarm(const uint64_t *masks, const double *values, int64_t n, int m,
                         double centre, int64_t *count, double *first, double *s1,
                         double *s2);

#endif
