/* trees.c - counterfactual-tree credit and allocation rules; see trees.h. */
#include <math.h>
#include "fastcredit.h"
#include "internal.h"

int fc_actor_centered_credit(const double *q, const double *pi, const int64_t *offsets,
                             int64_t n_states, int uniform, double *credit,
                             double *baseline)
{
    int64_t s, a;
    if (!csr_offsets_ok(offsets, n_states) || offsets[0] != 0 || !q || (!uniform && !pi) ||
        !credit || !baseline)
        return FC_EINVAL;
    for (s = 0; s < n_states; s++) {
        const int64_t lo = offsets[s], hi = offsets[s + 1];
        double b = 0.0;
        for (a = lo; a < hi; a++) b += uniform ? q[a] : pi[a] * q[a];
        if (uniform && hi > lo) b /= (double)(hi - lo);
        baseline[s] = b;
        for (a = lo; a < hi; a++) credit[a] = q[a] - b;
    }
    return FC_OK;
}

/* The score an action competes on (higher wins); untried actions outrank
 * every tried one under UCT rules, so they get +inf minus their cost. */
static double score(int rule, const int64_t *counts, const double *sums, const double *costs,
                    double c, double c_tok, double log_total, int64_t a)
{
    const double penalty = rule == FC_ALLOC_AGENT_UCT ? c_tok * costs[a] : 0.0;
    if (rule == FC_ALLOC_UNIFORM) return -(double)counts[a];
    if (counts[a] == 0) return rule == FC_ALLOC_AGENT_UCT ? -penalty : INFINITY;
    return sums[a] / (double)counts[a] + c * sqrt(log_total / (double)counts[a]) - penalty;
}

int fc_allocation_pick(int rule, int64_t n, const int64_t *counts, const double *sums,
                       const double *costs, double c, double c_tok, uint64_t seed,
                       uint64_t step, int64_t *choice)
{
    int64_t a, total = 0, untried = 0, ties = 0, pick;
    double best = -INFINITY, log_total;
    uint64_t state;
    if (rule < FC_ALLOC_UNIFORM || rule > FC_ALLOC_AGENT_UCT || n < 1 ||
        n > FC_RNG_MAX_RANGE || !counts || !sums || !choice ||
        (rule == FC_ALLOC_AGENT_UCT && !costs))
        return FC_EINVAL;
    for (a = 0; a < n; a++) {
        /* total + counts[a] > INT64_MAX checked without computing it */
        if (counts[a] < 0 || counts[a] > INT64_MAX - total) return FC_EINVAL;
        total += counts[a];
        untried += counts[a] == 0;
    }
    log_total = log((double)total + 1.0);
    for (a = 0; a < n; a++) {
        /* under UCT rules only untried actions compete while there are any */
        const int eligible = rule == FC_ALLOC_UNIFORM || !untried || counts[a] == 0;
        const double v = score(rule, counts, sums, costs, c, c_tok, log_total, a);
        if (!eligible) continue;
        if (v > best || ties == 0) {
            best = v;
            ties = 1;
        } else if (v == best) {
            ties++;
        }
    }
    state = fc_rng_key(seed, step);
    pick = (int64_t)fc_rng_below(&state, (uint64_t)ties);
    for (a = 0; a < n; a++) {
        const int eligible = rule == FC_ALLOC_UNIFORM || !untried || counts[a] == 0;
        if (eligible && score(rule, counts, sums, costs, c, c_tok, log_total, a) == best &&
            pick-- == 0) {
            *choice = a;
            return FC_OK;
        }
    }
    return FC_EINVAL;
}
