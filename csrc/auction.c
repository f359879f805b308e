/* auction.c - auction replay over cached candidate pools; see auction.h.
 *
 * Instances are compared with `ranks_before` (score desc, ad_id asc, index
 * asc), a total order in which every ad's first instance is the one the
 * dedup rule keeps, so "the pool of S in rank order" is "S's instances in
 * this order, each ad at its first appearance".
 *
 * Why each action may be cut to its best L distinct ads (capacity = 0;
 * L = slots, or slots + 1 for GSP, whose price reads the next ad; instances
 * below the reserve are dropped first, which is exact because an ad survives
 * the reserve iff its first instance does):
 *   Rerun. Let ad a be among the first L ads of pool(S) through instance x of
 *   action i. Each ad that action i ranks before x has an instance of S
 *   before x, so it ranks before a in pool(S): there are fewer than L of
 *   them, and x is among action i's best L distinct ads. Every such a keeps
 *   its instance x after the cut, and ads whose first instance was cut only
 *   move later, so the first L ads of pool(S), their instances and hence all
 *   winners and prices are unchanged.
 *   Filter. In the ranked full pool F, call entry e relevant when some
 *   action i of its mask has fewer than `slots` entries containing i ranked
 *   before e. The first `slots` entries of F meeting S are relevant (take i
 *   in mask(e) and S: the entries with i before e all meet S), so the
 *   coalition sums read relevant entries only. Let t_i be the score of action
 *   i's L-th best distinct ad; its first L distinct ads are L entries of F
 *   containing i with scores >= t_i, so every relevant-through-i entry (and
 *   for GSP its successor in F) scores >= t_i. An action with fewer than L
 *   distinct ads at or above the reserve gives t_i = its lowest score when it
 *   has no instance below the reserve (then its entries are exactly its own
 *   ads), else -inf. So F is needed only down to
 *   k = max(reserve, min_i t_i): the ads scoring >= k (after dedup in a small
 *   hash table, which also gives their full masks) and, for the last one's
 *   GSP price, the best score of the other ads. Walking any ordered superset
 *   of the relevant entries gives each coalition the same first `slots`, so
 *   at first price the ads scoring below t_i for every action i of their
 *   mask (which cannot be relevant) may go before the sort as well.
 * With capacity > 0 an ad that never wins can still take a capacity place,
 * so no instance is cut.
 */
#include <math.h>
#include <stdlib.h>
#include "fastcredit.h"
#include "internal.h"

typedef struct {
    const int64_t *ad;
    const double *score, *value, *prerank;
    int m, gsp;
    int64_t slots, capacity, wanted; /* wanted: ads a coalition reads (L) */
    int64_t len;                     /* distinct ads kept per action */
    double reserve, floor;           /* instances below floor are never kept */
} Auction;

/* Per-call workspace. The "entries" e_* are a ranked list the coalition sums
 * read: entry j is taken by coalition S when S meets e_a[j], misses e_p[j]
 * and has taken fewer than its quota; it scores e_s[j] and earns e_w[j]. */
typedef struct {
    int64_t *top, *top_n, *below;    /* per action: kept instances, count, #< floor */
    int64_t *inst, *act, *grp;       /* the merged action lists */
    int64_t *gmask, *gstamp;         /* per ad (its first merged position) */
    int64_t *pool, *heap, *pick;
    int64_t *e_inst, *e_a, *e_p, *cnt;
    double *e_s, *e_w, *prev;
    int64_t *h_ad, *h_ent, *h_stamp;
    int h_bits;
} Work;

static int ranks_before(const Auction *A, int64_t x, int64_t y)
{
    const double sx = A->score[x], sy = A->score[y];
    if (sx != sy) return sx > sy;
    if (A->ad[x] != A->ad[y]) return A->ad[x] < A->ad[y];
    return x < y;
}

/* Capacity order of two instances of different ads: prerank desc, ad asc. */
static int preranks_before(const Auction *A, int64_t x, int64_t y)
{
    const double px = A->prerank ? A->prerank[x] : A->score[x];
    const double py = A->prerank ? A->prerank[y] : A->score[y];
    if (px != py) return px > py;
    return A->ad[x] < A->ad[y];
}

static double gsp_price(double own, double next, double reserve)
{
    const double p = next > reserve ? next : reserve;
    return p < own ? p : own;
}

/* The best A->len distinct ads of instances [lo, hi) at or above A->floor,
 * in rank order, into top; returns how many and counts the instances below
 * the floor into *below. */
static int64_t best_distinct(const Auction *A, int64_t lo, int64_t hi, int64_t *top,
                             int64_t *below)
{
    int64_t n = 0, x, j, p;
    *below = 0;
    for (x = lo; x < hi; x++) {
        if (A->score[x] < A->floor) {
            (*below)++;
            continue;
        }
        if (n == A->len && !ranks_before(A, x, top[n - 1])) continue;
        for (j = 0; j < n && A->ad[top[j]] != A->ad[x]; j++) {}
        if (j < n) {
            if (!ranks_before(A, x, top[j])) continue;
            p = j; /* the ad's better instance takes its place, then moves up */
        } else {
            p = n < A->len ? n++ : n - 1;
        }
        for (; p > 0 && ranks_before(A, x, top[p - 1]); p--) top[p] = top[p - 1];
        top[p] = x;
    }
    return n;
}

/* Merges the kept action lists into one list in rank order. Each ad's group
 * is its first merged position, whose gmask ORs the actions that kept it;
 * the entries are the merged instances, each taken by the coalitions that
 * hold its action (e_a) but none of its ad's earlier actions (e_p). */
static int64_t merge_lists(const Auction *A, Work *W)
{
    int64_t head[FC_AUCTION_MAX_ACTIONS] = {0};
    int64_t n = 0, j, x;
    int i, best;
    for (;;) {
        best = -1;
        for (i = 0; i < A->m; i++)
            if (head[i] < W->top_n[i] &&
                (best < 0 || ranks_before(A, W->top[i * A->len + head[i]],
                                          W->top[best * A->len + head[best]])))
                best = i;
        if (best < 0) return n;
        x = W->top[best * A->len + head[best]++];
        for (j = 0; j < n && A->ad[W->inst[j]] != A->ad[x]; j++) {}
        W->inst[n] = x;
        W->act[n] = best;
        W->grp[n] = j < n ? W->grp[j] : n;
        if (j == n) W->gmask[n] = 0;
        W->e_inst[n] = x;
        W->e_a[n] = (int64_t)1 << best;
        W->e_p[n] = W->gmask[W->grp[n]];
        W->e_s[n] = A->score[x];
        W->e_w[n] = A->value[x];
        W->gmask[W->grp[n]] |= (int64_t)1 << best;
        n++;
    }
}

/* Sift-down of the capacity heap (its root is the weakest kept ad). */
static void heap_sift(const Auction *A, const Work *W, int64_t *heap, int64_t size,
                      int64_t p)
{
    for (;;) {
        int64_t c = 2 * p + 1, t;
        if (c >= size) return;
        if (c + 1 < size && preranks_before(A, W->inst[heap[c]], W->inst[heap[c + 1]])) c++;
        if (!preranks_before(A, W->inst[heap[p]], W->inst[heap[c]])) return;
        t = heap[p];
        heap[p] = heap[c];
        heap[c] = t;
        p = c;
    }
}

/* The pipeline on pool(S) of the merged list (n entries): the first `limit`
 * ranked ads after capacity and reserve, as merged positions in W->pick;
 * returns how many. `stamp` is unique per (request, S). */
static int64_t rank_pool(const Auction *A, Work *W, int64_t n, int64_t S, int64_t stamp,
                         int64_t limit)
{
    int64_t j, t, np = 0, k = 0, weakest = -1;
    for (j = 0; j < n; j++) {
        if (!(S >> W->act[j] & 1) || W->gstamp[W->grp[j]] == stamp) continue;
        W->gstamp[W->grp[j]] = stamp;
        if (A->capacity == 0) {
            if (A->score[W->inst[j]] < A->reserve || k == limit) return k;
            W->pick[k++] = j;
        } else {
            W->pool[np++] = j;
        }
    }
    if (A->capacity == 0) return k;
    if (np > A->capacity) {
        for (t = 0; t < A->capacity; t++) W->heap[t] = W->pool[t];
        for (t = A->capacity / 2; t-- > 0;) heap_sift(A, W, W->heap, A->capacity, t);
        for (t = A->capacity; t < np; t++)
            if (preranks_before(A, W->inst[W->pool[t]], W->inst[W->heap[0]])) {
                W->heap[0] = W->pool[t];
                heap_sift(A, W, W->heap, A->capacity, 0);
            }
        weakest = W->inst[W->heap[0]];
    }
    for (t = 0; t < np && k < limit; t++) {
        const int64_t x = W->inst[W->pool[t]];
        if (weakest >= 0 && preranks_before(A, weakest, x)) continue;
        if (A->score[x] < A->reserve) break;
        W->pick[k++] = W->pool[t];
    }
    return k;
}

/* Earnings of the q-th of k ranked scores; `tail` scores the ad after them. */
static double earning(const Auction *A, int64_t x, const double *scores, int64_t q,
                      int64_t k, double tail)
{
    if (!A->gsp) return A->value[x];
    return gsp_price(scores[q], q + 1 < k ? scores[q + 1] : tail, A->reserve);
}

static int64_t hash_slot(const Work *W, int64_t ad, int64_t stamp)
{
    const int64_t mask = ((int64_t)1 << W->h_bits) - 1;
    int64_t h = (int64_t)(((uint64_t)ad * FC_RNG_GOLDEN) >> (64 - W->h_bits));
    while (W->h_stamp[h] == stamp && W->h_ad[h] != ad) h = (h + 1) & mask;
    return h;
}

/* Filter, capacity = 0: the ranked full pool down to the score bound k of
 * the proof above, as entries (mask, score, cached earnings); returns their
 * number, or -1 when every action is empty. Every instance goes through the
 * hash table once (no test on its score, which would mispredict), then the
 * ads below the bound leave; at first price so does every ad that scores
 * below t_i for all of its actions i (it cannot be relevant, and dropping
 * irrelevant entries changes no coalition's first `slots`). */
static int64_t ranked_prefix(const Auction *A, Work *W, const int64_t *off, int64_t stamp)
{
    double need[FC_AUCTION_MAX_ACTIONS];
    double bound = INFINITY, tail = -INFINITY;
    int64_t n = 0, kept = 0, x, q, h;
    int i;
    for (i = 0; i < A->m; i++) {
        if (off[i + 1] == off[i])
            need[i] = INFINITY;
        else if (W->top_n[i] >= A->wanted)
            need[i] = A->score[W->top[i * A->len + A->wanted - 1]];
        else
            need[i] = W->below[i] ? -INFINITY : A->score[W->top[i * A->len + W->top_n[i] - 1]];
        if (need[i] < bound) bound = need[i];
    }
    if (bound == INFINITY) return -1;
    if (bound < A->reserve) bound = A->reserve;
    for (i = 0; i < A->m; i++)
        for (x = off[i]; x < off[i + 1]; x++) {
            h = hash_slot(W, A->ad[x], stamp);
            if (W->h_stamp[h] != stamp) {
                W->h_stamp[h] = stamp;
                W->h_ad[h] = A->ad[x];
                W->h_ent[h] = n;
                W->e_inst[n] = x;
                W->e_a[n++] = (int64_t)1 << i;
            } else {
                q = W->h_ent[h];
                W->e_a[q] |= (int64_t)1 << i;
                if (A->score[x] > A->score[W->e_inst[q]]) W->e_inst[q] = x;
            }
        }
    for (q = 0; q < n; q++) {
        const double s = A->score[W->e_inst[q]];
        const int64_t a = W->e_a[q];
        int keep = s >= bound;
        if (!A->gsp) {
            int through = 0;
            for (i = 0; i < A->m; i++) through |= (int)(a >> i & 1) & (s >= need[i]);
            keep &= through;
        }
        tail = s < bound && s > tail ? s : tail;
        W->e_inst[kept] = W->e_inst[q];
        W->e_a[kept] = a;
        W->e_s[kept] = s;
        kept += keep;
    }
    n = kept;
    /* insertion sort by (score desc, ad asc); the ads are distinct */
    for (q = 1; q < n; q++) {
        const int64_t xi = W->e_inst[q], ai = W->e_a[q], adi = A->ad[xi];
        const double si = W->e_s[q];
        int64_t p = q;
        for (; p > 0 && (si > W->e_s[p - 1] ||
                         (si == W->e_s[p - 1] && adi < A->ad[W->e_inst[p - 1]])); p--) {
            W->e_inst[p] = W->e_inst[p - 1];
            W->e_a[p] = W->e_a[p - 1];
            W->e_s[p] = W->e_s[p - 1];
        }
        W->e_inst[p] = xi;
        W->e_a[p] = ai;
        W->e_s[p] = si;
    }
    for (q = 0; q < n; q++) W->e_w[q] = earning(A, W->e_inst[q], W->e_s, q, n, tail);
    return n;
}

/* Filter, capacity > 0: the pipeline once on the full pool of the merged
 * (complete) lists, as entries. */
static int64_t ranked_full(const Auction *A, Work *W, int64_t n_merged, int64_t stamp)
{
    const int64_t full = ((int64_t)1 << A->m) - 1;
    const int64_t k = rank_pool(A, W, n_merged, full, stamp, n_merged);
    int64_t q;
    for (q = 0; q < k; q++) {
        W->e_inst[q] = W->inst[W->pick[q]];
        W->e_a[q] = W->gmask[W->grp[W->pick[q]]];
        W->e_s[q] = A->score[W->e_inst[q]];
    }
    for (q = 0; q < k; q++) W->e_w[q] = earning(A, W->e_inst[q], W->e_s, q, k, -INFINITY);
    return k;
}

/* Keeps the relevant entries of a ranked full pool (those among the first
 * `slots` holding one of their actions), in order; returns how many. */
static int64_t relevant_entries(const Auction *A, Work *W, int64_t n)
{
    int64_t count[FC_AUCTION_MAX_ACTIONS] = {0};
    int64_t q, kept = 0;
    int i;
    for (q = 0; q < n; q++) {
        const int64_t a = W->e_a[q];
        int64_t relevant = 0;
        for (i = 0; i < A->m; i++) {
            const int64_t bit = a >> i & 1;
            relevant |= bit & (count[i] < A->slots);
            count[i] += bit;
        }
        W->e_inst[kept] = W->e_inst[q];
        W->e_a[kept] = a;
        W->e_p[kept] = 0;
        W->e_s[kept] = W->e_s[q];
        W->e_w[kept] = W->e_w[q];
        kept += relevant;
    }
    return kept;
}

/* y(S) for every S from n ranked entries, all coalitions at once (one vector
 * lane per S). Each S takes up to `quota` entries; it earns e_w of each of
 * the first `slots`, or with `lagged` (GSP prices of rerun mode) the price
 * its q-th entry gets from the score of its (q+1)-th. With win_ad, records
 * the winners (not with `lagged`). */
static FC_CLONES void coalition_sums(const Auction *A, Work *W, int64_t n, int lagged,
                                     double *y, int64_t *win_ad, double *win_earn)
{
    const int64_t n_masks = (int64_t)1 << A->m, quota = lagged ? A->wanted : A->slots;
    const double reserve = A->reserve;
    int64_t *cnt = W->cnt;
    double *prev = W->prev;
    int64_t j, S;
    for (S = 0; S < n_masks; S++) {
        y[S] = 0.0;
        cnt[S] = 0;
        prev[S] = 0.0;
    }
    for (j = 0; j < n; j++) {
        const int64_t a = W->e_a[j], p = W->e_p[j];
        const double s = W->e_s[j], w = W->e_w[j];
        if (win_ad)
            for (S = 0; S < n_masks; S++)
                if ((S & a) && !(S & p) && cnt[S] < quota) {
                    win_ad[S * A->slots + cnt[S]] = A->ad[W->e_inst[j]];
                    win_earn[S * A->slots + cnt[S]] = w;
                }
        if (lagged) {
            for (S = 0; S < n_masks; S++) {
                const int64_t take = (S & a) != 0 && (S & p) == 0 && cnt[S] < quota;
                y[S] += take && cnt[S] > 0 ? gsp_price(prev[S], s, reserve) : 0.0;
                prev[S] = take ? s : prev[S];
                cnt[S] += take;
            }
        } else {
            for (S = 0; S < n_masks; S++) {
                const int64_t take = (S & a) != 0 && (S & p) == 0 && cnt[S] < quota;
                y[S] += take ? w : 0.0;
                cnt[S] += take;
            }
        }
    }
    if (lagged)
        for (S = 0; S < n_masks; S++)
            y[S] += cnt[S] > 0 && cnt[S] <= A->slots ? gsp_price(prev[S], -INFINITY, reserve)
                                                     : 0.0;
}

/* Rerun with capacity or winners: the pipeline on each coalition's pool. */
static void rerun_table(const Auction *A, Work *W, int64_t n_merged, int64_t stamp0,
                        double *y, int64_t *win_ad, double *win_earn)
{
    const int64_t n_masks = (int64_t)1 << A->m;
    int64_t S, q, k;
    y[0] = 0.0;
    for (S = 1; S < n_masks; S++) {
        double sum = 0.0;
        k = rank_pool(A, W, n_merged, S, stamp0 + S, A->wanted);
        for (q = 0; q < k; q++) W->e_s[q] = A->score[W->inst[W->pick[q]]];
        for (q = 0; q < k && q < A->slots; q++) {
            const int64_t x = W->inst[W->pick[q]];
            const double e = earning(A, x, W->e_s, q, k, -INFINITY);
            sum += e;
            if (win_ad) {
                win_ad[S * A->slots + q] = A->ad[x];
                win_earn[S * A->slots + q] = e;
            }
        }
        y[S] = sum;
    }
}

int fc_auction_replay(const int64_t *offsets, const int64_t *ad_id,
                      const double *score, const double *value,
                      const double *prerank, int64_t n_values,
                      int64_t n_requests, int m, int64_t start, int64_t stop,
                      int64_t slots, double reserve, int64_t capacity,
                      int pricing, int mode, double *out, int64_t *win_ad,
                      double *win_earn)
{
    Auction A;
    Work W;
    int64_t r, j, n_max = 1, a_max = 1, n, size, list, ranked, n_masks, hsize;
    int64_t *ints;
    double *reals;
    int i;
    if (!offsets || !ad_id || !score || !value || !out || m < 1 ||
        m > FC_AUCTION_MAX_ACTIONS || n_requests < 0 || n_values < 0 || start < 0 ||
        stop < start || stop > n_requests || slots < 1 || capacity < 0 || isnan(reserve) ||
        (pricing != FC_PRICING_FIRST && pricing != FC_PRICING_GSP) ||
        (mode != FC_MODE_FILTER && mode != FC_MODE_RERUN) || (!win_ad) != (!win_earn) ||
        n_requests > INT64_MAX / m || slots > INT64_MAX / 4 / ((int64_t)1 << m))
        return FC_EINVAL;
    if (start == stop) return FC_OK;
    if (!csr_offsets_ok(offsets + start * m, (stop - start) * m) || offsets[stop * m] > n_values)
        return FC_EINVAL;
    for (r = start; r < stop; r++) {
        const int64_t *off = offsets + r * m;
        if (off[m] - off[0] > n_max) n_max = off[m] - off[0];
        for (i = 0; i < m; i++)
            if (off[i + 1] - off[i] > a_max) a_max = off[i + 1] - off[i];
    }
    n_masks = (int64_t)1 << m;
    A.ad = ad_id;
    A.score = score;
    A.value = value;
    A.prerank = prerank;
    A.m = m;
    A.gsp = pricing == FC_PRICING_GSP;
    A.slots = slots;
    A.capacity = capacity;
    A.wanted = slots + A.gsp;
    A.reserve = reserve;
    A.len = capacity ? a_max : (A.wanted < a_max ? A.wanted : a_max);
    A.floor = capacity ? -INFINITY : reserve;
    W.h_bits = 1;
    while (((int64_t)1 << W.h_bits) < 2 * n_max) W.h_bits++;
    hsize = (int64_t)1 << W.h_bits;
    list = m * A.len;
    ranked = n_max > list ? n_max : list;
    size = 2 * (int64_t)m + 9 * list + 3 * ranked + 3 * hsize + n_masks;
    ints = calloc((size_t)size, sizeof *ints);
    reals = malloc((size_t)(2 * ranked + n_masks) * sizeof *reals);
    if (!ints || !reals) {
        free(ints);
        free(reals);
        return FC_ENOMEM;
    }
    W.top_n = ints;
    W.below = W.top_n + m;
    W.top = W.below + m;
    W.inst = W.top + list;
    W.act = W.inst + list;
    W.grp = W.act + list;
    W.gmask = W.grp + list;
    W.gstamp = W.gmask + list;
    W.pool = W.gstamp + list;
    W.heap = W.pool + list;
    W.pick = W.heap + list;
    W.e_inst = W.pick + list;
    W.e_a = W.e_inst + ranked;
    W.e_p = W.e_a + ranked;
    W.h_ad = W.e_p + ranked;
    W.h_ent = W.h_ad + hsize;
    W.h_stamp = W.h_ent + hsize;
    W.cnt = W.h_stamp + hsize;
    W.e_s = reals;
    W.e_w = W.e_s + ranked;
    W.prev = W.e_w + ranked;
    for (r = start; r < stop; r++) {
        const int64_t *off = offsets + r * m;
        double *y = out + r * n_masks;
        int64_t *wa = win_ad ? win_ad + r * n_masks * slots : NULL;
        double *we = win_earn ? win_earn + r * n_masks * slots : NULL;
        if (wa)
            for (j = 0; j < n_masks * slots; j++) {
                wa[j] = -1;
                we[j] = 0.0;
            }
        for (i = 0; i < m; i++)
            W.top_n[i] = best_distinct(&A, off[i], off[i + 1], W.top + i * A.len, W.below + i);
        if (mode == FC_MODE_RERUN) {
            n = merge_lists(&A, &W);
            if (capacity || wa)
                rerun_table(&A, &W, n, r * n_masks, y, wa, we);
            else
                coalition_sums(&A, &W, n, A.gsp, y, NULL, NULL);
            continue;
        }
        n = capacity ? ranked_full(&A, &W, merge_lists(&A, &W), r * n_masks + 1)
                     : ranked_prefix(&A, &W, off, r + 1);
        coalition_sums(&A, &W, n < 0 ? 0 : relevant_entries(&A, &W, n), 0, y, wa, we);
    }
    free(ints);
    free(reals);
    return FC_OK;
}
