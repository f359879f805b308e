/* proxyspex.c - ProxySPEX's Fourier coefficients of a fitted tree ensemble
 * (the approximator family; the contract is in approximators.h). */
#include "fastcredit.h"

/* Most tree depth: a leaf at depth d spreads over 2^d frequencies. */
#define TREE_MAX_DEPTH 62

/* One tree's leaves, depth first (left child first), each with its path:
 * feature[j] and right[j] (went right) at depth j. Calls leaf(ctx, value,
 * depth, feature, right) per leaf; returns FC_EINVAL for a child out of
 * range or not after its parent, a feature outside 0..m-1, a leaf reached
 * twice (more leaf visits than leaves) or a path deeper than TREE_MAX_DEPTH. */
typedef void (*leaf_fn)(void *ctx, double value, int depth, const int *feature,
                        const int *right);

static int walk_tree(const int64_t *split_feature, const int64_t *left, const int64_t *right,
                     int64_t n_nodes, const double *leaf_value, int64_t n_leaves, int m,
                     leaf_fn leaf, void *ctx)
{
    int feature[TREE_MAX_DEPTH + 1] = {0}, went_right[TREE_MAX_DEPTH + 1] = {0};
    int64_t node[TREE_MAX_DEPTH + 2];
    int64_t visits = 0;
    int depth = 0;
    if (n_nodes == 0) {                       /* a single leaf */
        leaf(ctx, leaf_value[0], 0, feature, went_right);
        return FC_OK;
    }
    /* node[d]: the internal node at depth d on the current path;
     * went_right[d]: which of its children the path is in */
    node[0] = 0;
    went_right[0] = 0;
    for (;;) {
        const int64_t at = node[depth];
        const int64_t child = went_right[depth] ? right[at] : left[at];
        const int64_t f = split_feature[at];
        if (f < 0 || f >= m) return FC_EINVAL;
        feature[depth] = (int)f;
        if (child < 0) {
            const int64_t l = -child - 1;
            if (l >= n_leaves || ++visits > n_leaves) return FC_EINVAL;
            leaf(ctx, leaf_value[l], depth + 1, feature, went_right);
        } else {
            if (child <= at || child >= n_nodes || depth + 1 >= TREE_MAX_DEPTH) return FC_EINVAL;
            depth++;
            node[depth] = child;
            went_right[depth] = 0;
            continue;
        }
        /* back up to the deepest node whose right child is not yet done */
        while (depth >= 0 && went_right[depth]) depth--;
        if (depth < 0) return FC_OK;
        went_right[depth] = 1;
    }
}

typedef struct {
    int64_t n_terms;                 /* sum over leaves of 2^depth */
    int overflow;
    /* filling: */
    int64_t *slots;
    uint64_t slot_mask;
    int shift;
    uint64_t *masks;
    double *values;
    int64_t n_freq;
} tree_terms;

static void count_leaf(void *ctx, double value, int depth, const int *feature, const int *right)
{
    tree_terms *t = ctx;
    (void)value, (void)feature, (void)right;
    if (t->n_terms > ((int64_t)1 << 62) - ((int64_t)1 << depth)) t->overflow = 1;
    else t->n_terms += (int64_t)1 << depth;
}

static void add_term(tree_terms *t, uint64_t freq, double term)
{
    uint64_t h = (freq * 0x9E3779B97F4A7C15ull) >> t->shift;
    for (;;) {
        int64_t *s = &t->slots[h];
        if (*s < 0) {
            *s = t->n_freq;
            t->masks[t->n_freq] = freq;
            t->values[t->n_freq] = term;
            t->n_freq++;
            return;
        }
        if (t->masks[*s] == freq) {
            t->values[*s] += term;
            return;
        }
        h = (h + 1) & t->slot_mask;
    }
}

/* The leaf's 2^depth terms: subset J of its path (bit j = depth j) has the
 * frequency XOR of the bits of its features and leaf * 2^-depth times -1
 * per right turn in J. */
static void fill_leaf(void *ctx, double value, int depth, const int *feature, const int *right)
{
    tree_terms *t = ctx;
    const double scaled = value * (1.0 / (double)((uint64_t)1 << depth));
    uint64_t j;
    for (j = 0; j < (uint64_t)1 << depth; j++) {
        uint64_t freq = 0;
        int negative = 0, d;
        for (d = 0; d < depth; d++)
            if ((j >> d) & 1) {
                freq ^= (uint64_t)1 << feature[d];
                negative ^= right[d];
            }
        add_term(t, freq, negative ? -scaled : scaled);
    }
}

int fc_approx_tree_fourier(const int64_t *split_feature, const int64_t *left_child,
                           const int64_t *right_child, const int64_t *node_start,
                           const double *leaf_value, const int64_t *leaf_start,
                           int64_t n_trees, int m, int64_t *slots, int64_t n_slots,
                           uint64_t *masks, double *values, int64_t capacity,
                           int64_t *n_terms, int64_t *n_freq)
{
    tree_terms t = {0};
    int64_t k, s;
    int pass, rc;
    if (!split_feature || !left_child || !right_child || !node_start || !leaf_value
        || !leaf_start || !n_terms || !n_freq || n_trees < 0 || m < 1
        || m > FC_APPROX_MAX_PLAYERS || n_slots < 0 || capacity < 0
        || (n_slots & (n_slots - 1)) || node_start[0] != 0 || leaf_start[0] != 0)
        return FC_EINVAL;
    for (k = 0; k < n_trees; k++) {
        const int64_t nodes = node_start[k + 1] - node_start[k];
        if (nodes < 0 || leaf_start[k + 1] - leaf_start[k] != nodes + 1) return FC_EINVAL;
    }
    *n_freq = 0;
    for (pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            /* fill only when the frequencies and a half-empty table fit */
            if (!slots || !masks || !values || capacity < t.n_terms || n_slots < 2 * t.n_terms
                || n_slots < 2)
                return FC_OK;
            for (s = 0; s < n_slots; s++) slots[s] = -1;
            t.slots = slots;
            t.slot_mask = (uint64_t)n_slots - 1;
            t.shift = 64;
            for (s = n_slots; s > 1; s >>= 1) t.shift--;
            t.masks = masks;
            t.values = values;
        }
        for (k = 0; k < n_trees; k++) {
            const int64_t first = node_start[k], leaf = leaf_start[k];
            rc = walk_tree(split_feature + first, left_child + first, right_child + first,
                           node_start[k + 1] - first, leaf_value + leaf,
                           leaf_start[k + 1] - leaf, m, pass ? fill_leaf : count_leaf, &t);
            if (rc != FC_OK || t.overflow) return FC_EINVAL;
        }
        if (pass == 0) *n_terms = t.n_terms;
    }
    *n_freq = t.n_freq;
    return FC_OK;
}
