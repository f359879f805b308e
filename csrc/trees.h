/*
 * trees.h - counterfactual-tree (ASCT) credit and trial allocation rules
 * (part of fastcredit.h).
 *
 * At actor-visited states a budgeted search evaluates alternative legal
 * actions; the action values Q(s, a) become credit centered on the actor's
 * own policy. States are ragged: state s owns the legal actions
 * offsets[s] .. offsets[s+1]-1 of the flat arrays (CSR).
 */
#ifndef FASTCREDIT_TREES_H
#define FASTCREDIT_TREES_H

#include <stdint.h>

/* Actor-centered credit of every legal action:
 *
 *   baseline[s] = sum_{a in s} pi[a] q[a]      (uniform == 0: the actor)
 *               = (1/n_s) sum_{a in s} q[a]    (uniform != 0)
 *   credit[a]   = q[a] - baseline[s],
 *
 * summed in index order; a state with no legal actions gets baseline 0.
 * pi is not read when uniform != 0 (it may then be NULL). offsets has
 * n_states + 1 entries, offsets[0] = 0, non-decreasing; the flat arrays hold
 * offsets[n_states] entries. Returns FC_EINVAL (writing nothing) for
 * n_states < 0, NULL arrays or offsets that are not a valid CSR index. */
int fc_actor_centered_credit(const double *q, const double *pi, const int64_t *offsets,
                             int64_t n_states, int uniform, double *credit,
                             double *baseline);

/* Allocation rules for one trial over n legal actions. */
#define FC_ALLOC_UNIFORM 0
#define FC_ALLOC_UCT 1
#define FC_ALLOC_AGENT_UCT 2

/* The action to try next, given counts[a] trials with value sums[a]:
 *   FC_ALLOC_UNIFORM:   an action with the fewest trials (covers every
 *                       action before repeating one, then balances);
 *   FC_ALLOC_UCT:       an untried action if any, else the argmax of
 *                       sums[a]/counts[a] + c sqrt(log(N + 1) / counts[a]),
 *                       N = sum of counts;
 *   FC_ALLOC_AGENT_UCT: the same score minus c_tok * costs[a] (the predicted
 *                       uncached cost of a trial of a); among untried
 *                       actions, the cheapest.
 * Ties (exact equality) are broken uniformly with draw 0 of the stream
 * (seed, step) of rng.h. costs is read only by FC_ALLOC_AGENT_UCT (else it
 * may be NULL). Returns FC_EINVAL, with *choice not written, for n < 1 or
 * n > FC_RNG_MAX_RANGE (the tie draw is fc_rng_below's), an unknown rule,
 * negative counts, counts whose sum N exceeds INT64_MAX, or NULL arrays.
 *
 * Scores are compared with > and ==, so a NaN score (sums[a] NaN, or +inf
 * with c_tok * costs[a] = +inf; the Python layer tells only finite values,
 * so only overflow to infinity gets there) neither wins nor ties: such an
 * action is not picked, and when the first candidate's score is NaN nothing
 * compares equal to the best and FC_EINVAL is returned (*choice not
 * written). */
int fc_allocation_pick(int rule, int64_t n, const int64_t *counts, const double *sums,
                       const double *costs, double c, double c_tok, uint64_t seed,
                       uint64_t step, int64_t *choice);

#endif
