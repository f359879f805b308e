/*
 * auction.h - auction replay over cached candidate pools (part of fastcredit.h).
 *
 * A batch holds n_requests requests of m actions (1 <= m <= 16). The candidate
 * instances of action i of request r are x = offsets[r*m + i] ..
 * offsets[r*m + i + 1] - 1 of the flat arrays ad_id[x], score[x], value[x] and
 * (optionally) prerank[x]; scores and preranks are finite.
 *
 * Semantics (docs/design.md, "Auction replay"). Instances are ordered by
 *   score descending, then ad_id ascending, then instance index ascending
 * (the index orders by action, then by position in the action's list). The
 * pool of a set S of actions is their instances deduplicated by ad_id: an ad
 * keeps its first instance in that order (its highest-score one; ties: lowest
 * action, then first listed) and its mask is the OR of the actions of S that
 * retrieved it. The pipeline on a pool: with capacity P > 0 keep the P ads of
 * highest prerank (ties: ad_id ascending; prerank = score when none is
 * given); rank by score descending (ties: ad_id ascending); drop ads with
 * score < reserve; the first `slots` ranked ads win and earn
 *   first price:  value,
 *   GSP:          min(score, max(reserve, score of the next ranked ad, or
 *                 reserve when there is none)).
 * y(S) = sum of the winners' earnings in rank order; y(empty) = 0.
 *   mode rerun:   the pipeline runs on the pool of S itself, for every S.
 *   mode filter:  the pipeline runs once on the pool of all m actions (every
 *                 ranked ad gets its earnings there, as if it won); y(S) sums
 *                 the first `slots` ranked ads whose mask meets S.
 *
 * Work per request does not grow with the pool size beyond one pass over its
 * instances (two in filter mode, the first a hash-table dedup that gives
 * every ad its best score in the request) when capacity = 0: in rerun mode
 * each action keeps only its best `slots` (+1 for GSP) distinct ads by its
 * own scores, in filter mode its best `slots` by their best scores, which
 * provably hold every ad that can win any coalition (see auction.c; GSP
 * prices in filter mode read the ad after each of them among all ads); the
 * at most m * (slots + 1) kept ads are ranked by counting, and the 2^m
 * coalitions then cost O(2^m * m * slots), computed for all coalitions at
 * once, one per vector lane.
 * With capacity > 0 an ad that cannot win can still take a capacity place,
 * so every instance is kept and each coalition costs O(n log P).
 */
#ifndef FASTCREDIT_AUCTION_H
#define FASTCREDIT_AUCTION_H

#include <stdint.h>

#define FC_AUCTION_MAX_ACTIONS 16
#define FC_PRICING_FIRST 0
#define FC_PRICING_GSP 1
#define FC_MODE_FILTER 0
#define FC_MODE_RERUN 1

/* Coalition tables of requests start .. stop-1:
 *   out[r * 2^m + S] = y(S) of request r, for every mask S < 2^m.
 * Rows of other requests are not touched, so disjoint request ranges can run
 * on several threads over the same arrays. n_values is the length of the
 * flat arrays; prerank may be NULL (then capacity ranks by score).
 * capacity = 0 means no capacity stage. pricing is FC_PRICING_*, mode is
 * FC_MODE_*. win_ad and win_earn are both NULL or both arrays of
 * n_requests * 2^m * slots: the ad_id and earnings of the winners of each
 * coalition in rank order, padded with -1 and 0.0.
 * Allocates one workspace per call, sized by the largest request of the
 * range (FC_ENOMEM when that fails). */
int fc_auction_replay(const int64_t *offsets, const int64_t *ad_id,
                      const double *score, const double *value,
                      const double *prerank, int64_t n_values,
                      int64_t n_requests, int m, int64_t start, int64_t stop,
                      int64_t slots, double reserve, int64_t capacity,
                      int pricing, int mode, double *out, int64_t *win_ad,
                      double *win_earn);

#endif
