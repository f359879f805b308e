/* trees.c - counterfactual-tree credit and allocation rules; see trees.h. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "fastcredit.h"
#include "internal.h"

int fc_actor_centered_credit(const double *q, const double *pi, const int64_t *offsets,
                             int64_t n_states, int uniform, double atol, const int64_t *actions,
                             double *credit, double *baseline, double *sampled, int64_t *bad)
{
    int64_t s, a;
    if (!csr_offsets_ok(offsets, n_states) || offsets[0] != 0 || !q || (!uniform && !pi) ||
        !(atol >= 0) || !credit || !baseline || (actions && !sampled) || !bad)
        return FC_EINVAL;
    for (s = 0; s < n_states; s++) {
        const int64_t lo = offsets[s], hi = offsets[s + 1];
        double b = 0.0;
        if (uniform) {
            for (a = lo; a < hi; a++) b += q[a];
            if (hi > lo) b /= (double)(hi - lo);
        } else {
            /* the policy check rides on the pass that reads pi anyway */
            double total = 0.0;
            int finite = 1;
            for (a = lo; a < hi; a++) {
                finite &= pi[a] >= 0 && pi[a] <= DBL_MAX;
                total += pi[a];
                b += pi[a] * q[a];
            }
            if (!finite || (hi > lo && fabs(total - 1.0) > atol)) {
                *bad = s;
                return FC_CREDIT_NOT_A_POLICY;
            }
        }
        baseline[s] = b;
        for (a = lo; a < hi; a++) credit[a] = q[a] - b;
        if (actions) {
            if (actions[s] < 0 || actions[s] >= hi - lo) {
                *bad = s;
                return FC_CREDIT_ILLEGAL_ACTION;
            }
            sampled[s] = credit[lo + actions[s]];
        }
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

/* The checks of fc_allocation_pick's arguments before it reads counts. */
static int pick_arguments_ok(int rule, int64_t n, const int64_t *counts, const double *sums,
                             const double *costs, const int64_t *choice)
{
    return rule >= FC_ALLOC_UNIFORM && rule <= FC_ALLOC_AGENT_UCT && n >= 1 &&
           n <= FC_RNG_MAX_RANGE && counts && sums && choice &&
           (rule != FC_ALLOC_AGENT_UCT || costs);
}

int fc_allocation_pick(int rule, int64_t n, const int64_t *counts, const double *sums,
                       const double *costs, double c, double c_tok, uint64_t seed,
                       uint64_t step, int64_t *choice)
{
    int64_t a, total = 0, untried = 0, ties = 0, pick;
    double best = -INFINITY, log_total;
    uint64_t state;
    if (!pick_arguments_ok(rule, n, counts, sums, costs, choice)) return FC_EINVAL;
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

int fc_allocation_tell_pick(int rule, int64_t n, int64_t *counts, double *sums,
                            const double *costs, double c, double c_tok, uint64_t seed,
                            uint64_t step, int64_t told, double value, int64_t *choice)
{
    if (!pick_arguments_ok(rule, n, counts, sums, costs, choice) || told < -1 || told >= n)
        return FC_EINVAL;
    if (told >= 0) {
        if (!isfinite(value) || counts[told] == INT64_MAX) return FC_EINVAL;
        counts[told] += 1;
        sums[told] += value;
    }
    return fc_allocation_pick(rule, n, counts, sums, costs, c, c_tok, seed, step, choice);
}

/* ---- the whole tree over a caller's environment (fc_counterfactual_tree) ----
 * Line for line the Numba loop fastcredit._jit.trees.tree, so that both give
 * the same bits: the same streams, the same order of every sum. */

/* statuses and the actor's rule code (trees.h; fastcredit._jit.trees) */
#define FC_TREE_ROOT_ACTOR (-1)
#define FC_TREE_FULL 1
#define FC_TREE_TERMINAL 2
#define FC_TREE_ILLEGAL 3
#define FC_TREE_BROKEN 4
#define TREE_CONTINUE ((uint64_t)1 << 62)
#define TREE_CANDIDATES ((uint64_t)1 << 63)

typedef struct {
    fc_env_n_actions n_actions;
    fc_env_step step;
    int64_t a_max, capacity;
    int64_t *node_state, *node_nact, *node_child, *n_nodes;
    double *node_cost;
} tree_trie;

/* Take action from node (in state): a known prefix is reused unless execute;
 * an unknown one is executed and added. stats += (executed, reused, cost,
 * new cost). Returns the child, -1 when the trie is full, -2 when the
 * environment broke its contract; *next gets the child's state. */
static int64_t trie_advance(const tree_trie *t, int64_t node, int64_t state, int64_t action,
                            int execute, double *stats, int64_t *next)
{
    int64_t c = t->node_child[node * t->a_max + action], nxt, na, b;
    double cost = 0.0;
    if (c >= 0 && !execute) {
        stats[1] += 1;
        *next = t->node_state[c];
        return c;
    }
    nxt = t->step(state, action, &cost);
    if (!(isfinite(cost) && cost >= 0.0)) return -2;
    stats[0] += 1;
    stats[2] += cost;
    if (c >= 0) {
        *next = nxt;
        return c;
    }
    c = *t->n_nodes;
    if (c >= t->capacity) return -1;
    na = t->n_actions(nxt);
    if (na < 0 || na > t->a_max) return -2;
    *t->n_nodes = c + 1;
    t->node_state[c] = nxt;
    t->node_nact[c] = na;
    t->node_cost[c] = cost;
    for (b = 0; b < t->a_max; b++) t->node_child[c * t->a_max + b] = -1;
    t->node_child[node * t->a_max + action] = c;
    stats[3] += cost;
    *next = nxt;
    return c;
}

/* out[0..n) = softmax of theta . features(state, b), summed in index order. */
static void tree_probs(fc_env_features features, const double *theta, int64_t d,
                       int64_t state, int64_t n, double *phi, double *out)
{
    int64_t b, k;
    double top = -INFINITY, z = 0.0;
    for (b = 0; b < n; b++) {
        double logit = 0.0;
        features(state, b, phi);
        for (k = 0; k < d; k++) logit += theta[k] * phi[k];
        out[b] = logit;
        if (logit > top) top = logit;
    }
    for (b = 0; b < n; b++) {
        out[b] = exp(out[b] - top);
        z += out[b];
    }
    for (b = 0; b < n; b++) out[b] /= z;
}

static int64_t tree_draw(const double *p, int64_t n, double u)
{
    int64_t b;
    for (b = 0; b < n - 1; b++) {
        u -= p[b];
        if (u < 0.0) return b;
    }
    return n - 1;
}

static int tree_failed(int64_t node) { return node == -1 ? FC_TREE_FULL : FC_TREE_BROKEN; }

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
                           double *restore)
{
    tree_trie t;
    double stats[4] = {0.0, 0.0, 0.0, 0.0};
    double *phi = NULL, *p = NULL, *costs = NULL, *g = NULL, *sub_sums = NULL;
    double *sub_costs = NULL, *memo = NULL;
    int64_t *cand = NULL, *sub_counts = NULL, *p_row = NULL;
    char *taken = NULL;
    int64_t node, state, visited, root_state, n, n_cand, a, i, j, k, n_memo = 0, memo_rows = 64;
    int status = FC_OK;
    if (!n_actions || !step || !utility || !features || !step_cost || n_features < 1 ||
        max_actions < 1 || max_actions > FC_RNG_MAX_RANGE || capacity < 1 || !node_state ||
        !node_nact || !node_cost || !node_child || !n_nodes || *n_nodes < 1 ||
        *n_nodes > capacity || prefix_len < 0 || (prefix_len && !prefix) || !theta ||
        rule < FC_TREE_ROOT_ACTOR || rule > FC_ALLOC_AGENT_UCT || budget < 0 || !counts ||
        !sums || !pi || (budget && (!trial_action || !trial_return || !trial_executed ||
                             !trial_reused || !trial_cost)) || !restore)
        return FC_EINVAL;
    t.n_actions = n_actions;
    t.step = step;
    t.a_max = max_actions;
    t.capacity = capacity;
    t.node_state = node_state;
    t.node_nact = node_nact;
    t.node_cost = node_cost;
    t.node_child = node_child;
    t.n_nodes = n_nodes;
    /* restore the visited state: from the cache, or executed from the root */
    node = 0;
    state = node_state[0];
    for (k = 0; k < prefix_len; k++) {
        a = prefix[k];
        if (a < 0 || a >= node_nact[node]) return FC_TREE_ILLEGAL;
        node = trie_advance(&t, node, state, a, !use_cache, stats, &state);
        if (node < 0) return tree_failed(node);
    }
    restore[0] = stats[0];
    restore[1] = stats[1];
    restore[2] = stats[2];
    visited = node;
    root_state = state;
    n = node_nact[visited];
    if (n == 0) return FC_TREE_TERMINAL;
    phi = malloc((size_t)n_features * sizeof *phi);
    p = malloc((size_t)max_actions * sizeof *p);
    costs = calloc((size_t)n, sizeof *costs);
    g = malloc((size_t)n * sizeof *g);
    sub_sums = malloc((size_t)n * sizeof *sub_sums);
    sub_costs = malloc((size_t)n * sizeof *sub_costs);
    cand = malloc((size_t)n * sizeof *cand);
    sub_counts = malloc((size_t)n * sizeof *sub_counts);
    taken = calloc((size_t)n, 1);
    p_row = malloc((size_t)capacity * sizeof *p_row);
    memo = malloc((size_t)memo_rows * (size_t)max_actions * sizeof *memo);
    if (!phi || !p || !costs || !g || !sub_sums || !sub_costs || !cand || !sub_counts ||
        !taken || !p_row || !memo) {
        status = FC_ENOMEM;
        goto done;
    }
    for (a = 0; a < n; a++) {
        counts[a] = 0;
        sums[a] = 0.0;
    }
    tree_probs(features, theta, n_features, root_state, n, phi, p);
    for (a = 0; a < n; a++) pi[a] = p[a];
    /* predicted uncached cost of a trial of each root action (AgentUCT) */
    for (a = 0; a < n; a++) {
        if (node_child[visited * max_actions + a] < 0) {
            costs[a] = step_cost(root_state, a);
            if (!(isfinite(costs[a]) && costs[a] >= 0.0)) {
                status = FC_TREE_BROKEN;
                goto done;
            }
        }
    }
    for (a = 0; a < n; a++) cand[a] = a;
    n_cand = n;
    if (rule == FC_ALLOC_AGENT_UCT && budget < n) {
        uint64_t rs = fc_rng_key(seed, TREE_CANDIDATES);
        for (a = 0; a < n; a++) {
            const double u = fc_rng_uniform(&rs);
            g[a] = -c_tok * costs[a] - log(-log(u + 1e-300) + 1e-300);
        }
        for (j = 0; j < budget; j++) {
            int64_t best = -1;
            for (a = 0; a < n; a++)
                if (!taken[a] && (best < 0 || g[a] > g[best])) best = a;
            taken[best] = 1;
        }
        n_cand = 0;
        for (a = 0; a < n; a++)
            if (taken[a]) cand[n_cand++] = a;
    }
    for (k = 0; k < capacity; k++) p_row[k] = -1;
    for (i = 0; i < budget; i++) {
        int64_t a0;
        uint64_t cs;
        double value;
        stats[0] = stats[1] = stats[2] = stats[3] = 0.0;
        if (rule == FC_TREE_ROOT_ACTOR) {
            cs = fc_rng_key(seed, TREE_CONTINUE + (uint64_t)i);
            a0 = tree_draw(p, n, fc_rng_uniform(&cs));
        } else {
            for (j = 0; j < n_cand; j++) {
                sub_counts[j] = counts[cand[j]];
                sub_sums[j] = sums[cand[j]];
                sub_costs[j] = costs[cand[j]];
            }
            if (fc_allocation_pick(rule, n_cand, sub_counts, sub_sums, sub_costs, c, c_tok,
                                   seed, (uint64_t)i, &j) != FC_OK) {
                status = FC_TREE_BROKEN;
                goto done;
            }
            a0 = cand[j];
            cs = fc_rng_key(seed, TREE_CONTINUE + (uint64_t)i);
        }
        /* without the cache a trial replays the prefix (trial 0 goes on from
         * the tree's own restore) */
        node = visited;
        state = root_state;
        if (!use_cache && i > 0) {
            node = 0;
            state = node_state[0];
            for (k = 0; k < prefix_len; k++) {
                node = trie_advance(&t, node, state, prefix[k], 1, stats, &state);
                if (node < 0) {
                    status = tree_failed(node);
                    goto done;
                }
            }
        } else if (use_cache) {
            stats[1] += (double)prefix_len;
        }
        a = a0;
        for (;;) {
            int64_t na, r;
            node = trie_advance(&t, node, state, a, !use_cache, stats, &state);
            if (node < 0) {
                status = tree_failed(node);
                goto done;
            }
            na = node_nact[node];
            if (na == 0) break;
            /* the actor is fixed during a tree: a node's probabilities are
             * computed once */
            r = p_row[node];
            if (r < 0) {
                if (n_memo >= memo_rows) {
                    double *grown = realloc(memo, (size_t)(2 * memo_rows) *
                                                      (size_t)max_actions * sizeof *memo);
                    if (!grown) {
                        status = FC_ENOMEM;
                        goto done;
                    }
                    memo = grown;
                    memo_rows *= 2;
                }
                r = n_memo++;
                p_row[node] = r;
                tree_probs(features, theta, n_features, state, na, phi,
                           memo + r * max_actions);
            }
            a = tree_draw(memo + r * max_actions, na, fc_rng_uniform(&cs));
        }
        value = utility(state);
        if (!isfinite(value)) {
            status = FC_TREE_BROKEN;
            goto done;
        }
        counts[a0] += 1;
        sums[a0] += value;
        costs[a0] = stats[3];
        trial_action[i] = a0;
        trial_return[i] = value;
        trial_executed[i] = stats[0];
        trial_reused[i] = stats[1];
        trial_cost[i] = stats[2];
    }
done:
    free(phi);
    free(p);
    free(costs);
    free(g);
    free(sub_sums);
    free(sub_costs);
    free(cand);
    free(sub_counts);
    free(taken);
    free(p_row);
    free(memo);
    return status;
}

int fc_tree_finish(const int64_t *counts, const double *sums, const double *pi, int64_t n,
                   const int64_t *trial_action, const double *trial_return, int64_t budget,
                   int uniform, double *q, double *stderr_, double *credit, double *baseline)
{
    int64_t a, i, tried = 0;
    double ptot = 0.0, b = 0.0;
    if (!counts || !sums || !pi || n < 1 || budget < 0 ||
        (budget && (!trial_action || !trial_return)) || !q || !stderr_ || !credit ||
        !baseline)
        return FC_EINVAL;
    for (i = 0; i < budget; i++)
        if (trial_action[i] < 0 || trial_action[i] >= n) return FC_EINVAL;
    for (a = 0; a < n; a++) {
        stderr_[a] = 0.0;
        if (counts[a] > 0) {
            q[a] = sums[a] / (double)counts[a];
            tried++;
            ptot += pi[a];
        } else {
            q[a] = NAN;
        }
    }
    for (i = 0; i < budget; i++) {
        const double d = trial_return[i] - q[trial_action[i]];
        stderr_[trial_action[i]] += d * d;
    }
    for (a = 0; a < n; a++)
        stderr_[a] = counts[a] > 1 ? sqrt(stderr_[a] / (double)(counts[a] - 1)) /
                                         sqrt((double)counts[a])
                                   : NAN;
    if (uniform) {
        for (a = 0; a < n; a++)
            if (counts[a] > 0) b += q[a];
        b /= (double)tried;
    } else {
        for (a = 0; a < n; a++)
            if (counts[a] > 0) b += (ptot > 0.0 ? pi[a] / ptot : 1.0 / (double)tried) * q[a];
    }
    for (a = 0; a < n; a++) credit[a] = counts[a] > 0 ? q[a] - b : NAN;
    *baseline = b;
    return FC_OK;
}
