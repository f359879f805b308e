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
 *   sampled[s]  = credit[offsets[s] + actions[s]]   (when actions is given),
 *
 * summed in index order; a state with no legal actions gets baseline 0.
 * pi is not read when uniform != 0 (it may then be NULL); otherwise it must
 * be a policy, checked in the same pass: at every state each entry finite
 * and >= 0 and, for a state with legal actions, the entries' sum (in index
 * order) within atol of 1. actions (n_states, may be NULL: sampled is then
 * not written) must hold 0 <= actions[s] < n_s. offsets has n_states + 1
 * entries, offsets[0] = 0, non-decreasing; the flat arrays hold
 * offsets[n_states] entries.
 *
 * Returns FC_OK; FC_EINVAL (writing nothing) for n_states < 0, NULL arrays
 * (sampled with actions, bad), atol < 0 or NaN, or offsets that are not a
 * valid CSR index; or a positive status at the first state s (in order) at
 * fault, *bad = s, the outputs of the states before s written and the rest
 * unspecified: FC_CREDIT_NOT_A_POLICY (pi at s is not a policy; checked
 * before the action) or FC_CREDIT_ILLEGAL_ACTION (actions[s] outside
 * 0..n_s-1). */
#define FC_CREDIT_NOT_A_POLICY 1
#define FC_CREDIT_ILLEGAL_ACTION 2

int fc_actor_centered_credit(const double *q, const double *pi, const int64_t *offsets,
                             int64_t n_states, int uniform, double atol, const int64_t *actions,
                             double *credit, double *baseline, double *sampled, int64_t *bad);

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

/* One step of an ask/tell loop in one call: the last trial told (action
 * told, its value) added to counts[told] and sums[told], then
 * fc_allocation_pick's choice. told = -1 adds nothing. Returns FC_EINVAL
 * with nothing written for an unknown rule, n out of range, NULL arrays,
 * told outside -1 .. n-1, a value that is not finite or counts[told] =
 * INT64_MAX; and, with the trial added and *choice not written, for the
 * rest of what fc_allocation_pick refuses (negative counts, counts summing
 * past INT64_MAX, no action that can be picked). The whole trial in C: a
 * caller's loop of fc_allocation_pick and its own additions spent a quarter
 * of a trial on them (Python, issue 33). */
int fc_allocation_tell_pick(int rule, int64_t n, int64_t *counts, double *sums,
                            const double *costs, double c, double c_tok, uint64_t seed,
                            uint64_t step, int64_t told, double value, int64_t *choice);

/* The whole counterfactual tree over a caller's environment (the C twin of
 * fastcredit._jit.trees.tree; fastcredit.treesearch documents the method).
 * The environment is five callbacks over int64 states:
 *   n_actions(state)                legal actions 0..n-1 (0: terminal);
 *   step(state, action, &cost)      the next state, its cost written;
 *   utility(state)                  a terminal state's return;
 *   features(state, action, out)    writes n_features doubles;
 *   step_cost(state, action)        AgentUCT's predicted cost of a step.
 * The prefix cache is a trie of capacity nodes (node 0 the episode's root,
 * *n_nodes in use): node_state, node_nact (capacity), node_cost (capacity),
 * node_child (capacity x max_actions, row-major, -1: not executed). rule is
 * an FC_ALLOC_* code or -1 (the actor draws the root action too: Monte-Carlo
 * continuations). The streams, the order of every sum and
 * the trie's growth are those of the Numba loop, so both give the same bits.
 * Outputs: counts, sums, pi (max_actions; the first n written: pi the
 * actor's probabilities at the visited state), trial_action,
 * trial_return, trial_executed, trial_reused, trial_cost (budget), restore
 * (3: the restore's executed, reused steps and cost).
 * Returns FC_OK, a positive status (the codes of fastcredit._jit.trees: 1
 * the trie has no room: the caller grows it, rolls back the nodes added and
 * calls again; 2 the prefix reaches a terminal state; 3 an action of prefix
 * is not legal; 4 a callback broke its contract: an action count outside
 * 0..max_actions, a negative or non-finite cost or step cost, a non-finite
 * utility), FC_EINVAL for NULL pointers, sizes < 0, n_features < 1 or
 * max_actions outside 1..FC_RNG_MAX_RANGE, or FC_ENOMEM. */
typedef int64_t (*fc_env_n_actions)(int64_t state);
typedef int64_t (*fc_env_step)(int64_t state, int64_t action, double *cost);
typedef double (*fc_env_utility)(int64_t state);
typedef void (*fc_env_features)(int64_t state, int64_t action, double *out);
typedef double (*fc_env_step_cost)(int64_t state, int64_t action);

int fc_counterfactual_tree(fc_env_n_actions n_actions, fc_env_step step,
                           fc_env_utility utility, fc_env_features features,
                           fc_env_step_cost step_cost, int64_t n_features,
                           int64_t max_actions, int64_t capacity, int64_t *node_state,
                           int64_t *node_nact, double *node_cost, int64_t *node_child,
                           int64_t *n_nodes, const int64_t *prefix, int64_t prefix_len,
                           const double *theta, int rule, int64_t budget, double c,
                           double c_tok, uint64_t seed, int use_cache, int64_t *counts,
                           double *sums, double *pi, int64_t *trial_action, double *trial_return,
                           double *trial_executed, double *trial_reused, double *trial_cost,
                           double *restore);

/* A tree's Q, standard errors and centred credit over its n root actions
 * (fastcredit._jit.trees.finish): q[a] = sums[a] / counts[a]; stderr[a] =
 * sd of a's trial returns (ddof 1) / sqrt(counts[a]); credit[a] = q[a] -
 * baseline, the baseline over the tried actions: sum_a w_a q[a] with w = pi
 * renormalised over them (1/k each when their pi sums to 0), or (uniform)
 * their mean. Untried actions (and stderr below 2 trials): NaN. *baseline is
 * written. Returns FC_EINVAL for NULL pointers, n < 1, budget < 0 or a trial
 * action outside 0..n-1. */
int fc_tree_finish(const int64_t *counts, const double *sums, const double *pi, int64_t n,
                   const int64_t *trial_action, const double *trial_return, int64_t budget,
                   int uniform, double *q, double *stderr_, double *credit,
                   double *baseline);

#endif
