/* auction.c - auction replay over cached candidate pools; see auction.h.
 *
 * Keys. An ad in a list is ranked by a key (s, ad): s descending, then ad
 * ascending, a total order on distinct ads. Instances of one ad are ordered
 * by score descending, then instance index ascending (the index orders by
 * action, then by position in the action's list), so an ad's first instance
 * in that order is the one the dedup rule keeps.
 *
 * Rerun: each action may be cut to its best L distinct ads by its own
 * scores (capacity = 0; L = slots, or slots + 1 for GSP, whose price reads
 * the next ad; instances below the reserve are dropped first, which is
 * exact because an ad survives the reserve iff its first instance does).
 *   Let ad a be among the first L ads of pool(S) through instance x of
 *   action i. Each ad that action i ranks before x has an instance of S
 *   before x, so it ranks before a in pool(S): there are fewer than L of
 *   them, and x is among action i's best L distinct ads. Every such a keeps
 *   its instance x after the cut, and ads whose first instance was cut only
 *   move later, so the first L ads of pool(S), their instances and hence all
 *   winners and prices are unchanged.
 *
 * Filter (capacity = 0): each action needs only its best `slots` ads by
 * their best score in the whole request, and each ad only the actions
 * through which it is among those.
 *   Let F be the ranked full pool (ads with best score g >= reserve, by key
 *   (g, ad)), mask(e) the actions that retrieved entry e, T_i the first
 *   `slots` entries of F containing action i (action i's best `slots`
 *   distinct ads by key (g, ad)), U the union of the T_i in F order and
 *   mask'(e) = {i : e in T_i}, a subset of mask(e). Take S and W(S), the
 *   first `slots` entries of F meeting S. For e in W(S) and i in mask(e)
 *   and S, every entry of F before e containing i meets S, so there are
 *   fewer than `slots` of them and e is in T_i: e is in U and mask'(e)
 *   meets S. The entries of U meeting S under mask' are therefore a
 *   sublist of F's entries meeting S (mask' is a subset of mask) that
 *   holds W(S), their first `slots`: its first `slots` entries are W(S).
 *   So y(S) sums, in rank order, the first `slots` entries of U whose mask'
 *   meets S, and the winners are the same ads. A GSP price reads the score
 *   of the entry after e in F: the best score of the ads ranked after e
 *   (of all ads: one below the reserve prices e as no ad does, at the
 *   reserve), found from each ad's position among U.
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

/* log2 of the most slots a table is kept 1/8 full with (fc_auction_replay). */
#define HASH_BITS_SPARSE 10

/* A slot of the hash table of a request's ads, half a cache line: the ad,
 * its best score g and instance best, the actions that retrieved it (acts)
 * and mask' of the proof above. A slot is empty when acts is 0; it then
 * holds g = -inf and mask = 0 (EMPTY_SLOT), so that the first instance of
 * an ad updates it as any other does, with no test of whether it is new. A
 * request empties its slots when done. */
typedef struct {
    int64_t ad, best;
    double g;
    int32_t acts, mask; /* m <= FC_AUCTION_MAX_ACTIONS (16) */
} Slot;

#define SLOT_SHIFT 5 /* log2 sizeof(Slot): the gathers scale slot numbers by it */
static const Slot EMPTY_SLOT = {0, 0, -INFINITY, 0, 0};

/* Per-call workspace. The "entries" e_* are a ranked list the coalition sums
 * read: entry j is taken by coalition S when S meets e_a[j], misses e_p[j]
 * and has taken fewer than its quota; it scores e_s[j] and earns e_w[j].
 * slot is a hash table of the request's ads (filter mode). */
typedef struct {
    int64_t *top, *top_n;            /* per action: kept keys and their count */
    int64_t *inst, *act, *grp;       /* the merged action lists */
    int64_t *gmask, *gstamp, *rank;  /* per ad (its first merged position) */
    int64_t *pool, *heap, *pick;
    int64_t *e_inst, *e_a, *e_p, *cnt;
    double *e_s, *e_w, *after, *between; /* between: g of the ads between U's entries */
    int64_t *between_ad, *slot_of, *used; /* between_ad: their ads */
    Slot *slot;                           /* 64-byte aligned in slot_mem */
    void *slot_mem;
    uint32_t meets[32]; /* meets[x]: the bits l < 32 with l & x != 0 */
    int h_bits, avx512;
} Work;

/* Whether key (sx, ax) ranks before key (sy, ay). */
static FC_INLINE int key_before(double sx, int64_t ax, double sy, int64_t ay)
{
    return (sx > sy) | ((sx == sy) & (ax < ay));
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

/* Key parts of key k: (ks[k], ka[k]), or the slot's (g, ad) with slots. */
#define KEY_S(k) (sl ? sl[k].g : ks[k])
#define KEY_A(k) (sl ? sl[k].ad : ka[k])

/* The best `len` distinct ads of the items x = lo .. hi-1 whose score is at
 * or above `floor`, as keys k (k = map[x - lo] when map is given, else x)
 * into top in rank order; returns how many. Item x has key (KEY_S(k),
 * KEY_A(k)); of two items of one ad the first of the higher score counts.
 * Items with k < 0 are skipped (a map marks so the repeats of a key). */
static FC_INLINE int64_t select_scalar(const double *ks, const int64_t *ka, const Slot *sl,
                                       const int64_t *map, int64_t lo, int64_t hi, int64_t len,
                                       double floor, int64_t *top)
{
    int64_t n = 0, x, j, p;
    for (x = lo; x < hi; x++) {
        const int64_t k = map ? map[x - lo] : x;
        double s;
        int64_t a;
        if (k < 0) continue;
        s = KEY_S(k);
        a = KEY_A(k);
        if (s < floor) continue;
        if (n == len && !key_before(s, a, KEY_S(top[n - 1]), KEY_A(top[n - 1]))) continue;
        j = n; /* a map marks an ad's repeats, so only without one can it be kept */
        if (!map)
            for (j = 0; j < n && KEY_A(top[j]) != a; j++) {}
        if (j < n) {
            if (!(s > KEY_S(top[j]))) continue;
            p = j; /* the ad's better item takes its place, then moves up */
        } else {
            p = n < len ? n++ : n - 1;
        }
        for (; p > 0 && key_before(s, a, KEY_S(top[p - 1]), KEY_A(top[p - 1])); p--)
            top[p] = top[p - 1];
        top[p] = k;
    }
    return n;
}

/* AVX-512 machines select by extraction: a list of at most 32 items sits in
 * four vector pairs of scores and ads (with a map, keys: one per ad; absent
 * items, and items below the floor, score -inf: scores are finite), and each
 * step takes the best key left - the highest score, then the lowest ad among
 * its lanes, then the first lane, which is the ad's first item of that score
 * - and removes every item of its ad. Each step keeps a new ad, so a list
 * costs `len` steps of a few vector instructions instead of an insertion per
 * item. The merge of the kept lists and filter mode's union count their
 * ranks 8 items at a time the same way. These functions are compiled for that
 * target alone and picked at run time, not through FC_CLONES: GCC lowers the
 * vector comparisons of a target_clones function for its default target,
 * lane by lane. A call takes them where fc_internal_paths() has
 * FC_PATH_AVX512 (internal.h). */
#ifdef FC_AVX512_PATHS
#include <immintrin.h>
#define V4_FN inline __attribute__((target("arch=x86-64-v4"), always_inline))
#define EXTRACT_MAX 32 /* items a list may have to be selected by extraction */
#define EXTRACT_SHORT 24 /* items of a short list, in 3 vectors */

/* The lanes of a 32-lane comparison as one bit mask, lane 8v + j at bit 8v + j. */
#define MASK32(c0, c1, c2, c3)                                                   \
    ((uint32_t)(c0) | (uint32_t)(c1) << 8 | (uint32_t)(c2) << 16 | (uint32_t)(c3) << 24)

/* The first n lanes (any n). */
static V4_FN __mmask8 first_lanes(int64_t n)
{
    return n >= 8 ? 0xFF : n > 0 ? (__mmask8)((1u << n) - 1) : 0;
}

/* The first n bits (0 <= n <= 64). */
static V4_FN uint64_t first_bits(int64_t n)
{
    return n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

/* Every lane of x set to the greatest lane of x. */
static V4_FN __m512d max_lanes(__m512d x)
{
    x = _mm512_max_pd(x, _mm512_shuffle_f64x2(x, x, 0x4E));
    x = _mm512_max_pd(x, _mm512_permutex_pd(x, 0x4E));
    return _mm512_max_pd(x, _mm512_permute_pd(x, 0x55));
}

/* Every lane of x set to the least lane of x. */
static V4_FN __m512i min_lanes(__m512i x)
{
    x = _mm512_min_epi64(x, _mm512_shuffle_i64x2(x, x, 0x4E));
    x = _mm512_min_epi64(x, _mm512_permutex_epi64(x, 0x4E));
    return _mm512_min_epi64(x, _mm512_shuffle_epi32(x, 0x4E));
}

/* A list of at most EXTRACT_MAX items in extraction lanes: scores (-inf
 * where no item is, or its score is below the floor) and what removes an
 * item: its ad, or with a map its key (one per ad). The functions below
 * take the number of vectors in use, nv = 3 or 4, as a constant of their
 * caller (they are inlined): a list of at most EXTRACT_SHORT items keeps
 * its 3 vectors in registers without the fourth. */
typedef struct {
    __m512d s[4];
    __m512i a[4];
} Lanes;

/* The items lo .. hi-1 (keys map[x - lo] with a map) into L. */
static V4_FN void extract_load(const double *ks, const int64_t *ka, const Slot *sl,
                               const int64_t *map, int64_t lo, int64_t hi, double floor, int nv,
                               Lanes *L)
{
    const __m512d none = _mm512_set1_pd(-INFINITY), least = _mm512_set1_pd(floor);
    const __m512i zero = _mm512_setzero_si512();
    int v;
    for (v = 0; v < nv; v++) {
        __mmask8 in = first_lanes(hi - lo - 8 * v);
        L->s[v] = none;
        L->a[v] = zero;
        if (!in) continue;
        if (map) { /* key k = map[x - lo], repeats k < 0; the slots hold (g, ad) */
            L->a[v] = _mm512_maskz_loadu_epi64(in, map + 8 * v);
            in = _mm512_mask_cmpge_epi64_mask(in, L->a[v], zero);
            L->s[v] = _mm512_mask_i64gather_pd(none, in, _mm512_slli_epi64(L->a[v], SLOT_SHIFT),
                                               &sl->g, 1);
        } else {
            L->s[v] = _mm512_mask_loadu_pd(none, in, ks + lo + 8 * v);
            L->a[v] = _mm512_maskz_loadu_epi64(in, ka + lo + 8 * v);
        }
        L->s[v] = _mm512_mask_mov_pd(none, _mm512_cmp_pd_mask(L->s[v], least, _CMP_GE_OQ), L->s[v]);
    }
}

/* The best key left in L (the highest score, then the lowest ad among its
 * lanes, then the first lane, which is the ad's first item of that score),
 * every item of its ad removed; -1 when L is used up. */
static V4_FN int64_t extract_step(const int64_t *ka, const Slot *sl, const int64_t *map,
                                  int64_t lo, int nv, Lanes *L)
{
    const __m512d none = _mm512_set1_pd(-INFINITY);
    const __m512i no_ad = _mm512_set1_epi64(INT64_MAX);
    const __m512d s01 = _mm512_max_pd(L->s[0], L->s[1]);
    const __m512d best = max_lanes(
        _mm512_max_pd(s01, nv == 4 ? _mm512_max_pd(L->s[2], L->s[3]) : L->s[2]));
    __mmask8 e[4] = {0, 0, 0, 0};
    uint32_t lanes;
    int64_t k;
    __m512i va;
    int v;
    if (_mm512_cvtsd_f64(best) == -INFINITY) return -1;
    for (v = 0; v < nv; v++) e[v] = _mm512_cmp_pd_mask(L->s[v], best, _CMP_EQ_OQ);
    lanes = MASK32(e[0], e[1], e[2], e[3]);
    if (lanes & (lanes - 1)) { /* a tie of scores: the lowest ad */
        __m512i ads[4], low, a01;
        for (v = 0; v < nv; v++)
            ads[v] = map ? _mm512_mask_i64gather_epi64(
                               no_ad, e[v], _mm512_slli_epi64(L->a[v], SLOT_SHIFT), &sl->ad, 1)
                         : _mm512_mask_mov_epi64(no_ad, e[v], L->a[v]);
        a01 = _mm512_min_epi64(ads[0], ads[1]);
        low = min_lanes(
            _mm512_min_epi64(a01, nv == 4 ? _mm512_min_epi64(ads[2], ads[3]) : ads[2]));
        for (v = 0; v < nv; v++) e[v] = _mm512_mask_cmpeq_epi64_mask(e[v], ads[v], low);
        lanes = MASK32(e[0], e[1], e[2], e[3]);
    }
    k = map ? map[__builtin_ctz(lanes)] : lo + __builtin_ctz(lanes);
    va = _mm512_set1_epi64(map ? k : ka[k]);
    for (v = 0; v < nv; v++)
        L->s[v] = _mm512_mask_mov_pd(L->s[v], _mm512_cmpeq_epi64_mask(L->a[v], va), none);
    return k;
}

/* Lists extracted side by side, `group` at a time: a step waits on the one
 * before it through a chain of lane reductions (about 50 cycles) that the
 * steps of the other lists fill. Five short lists (3 vectors each) fit in
 * the registers together; five long ones did not (rerun/gsp 16 % slower
 * than three at a time), so long lists go three at a time. */
#define EXTRACT_GROUP_MAX 5

static V4_FN void select_groups(int m, const double *ks, const int64_t *ka, const Slot *sl,
                                const int64_t *map, const int64_t *off, int64_t len,
                                double floor, int nv, int group, int64_t *top, int64_t *n)
{
    Lanes L[EXTRACT_GROUP_MAX];
    int list[EXTRACT_GROUP_MAX];
    int i = 0, g, size;
    int64_t got, j;
    while (i < m) {
        for (size = 0; size < group && i < m; i++) {
            const int64_t *mi = map ? map + (off[i] - off[0]) : NULL;
            n[i] = 0;
            if (off[i + 1] - off[i] > 8 * nv) {
                n[i] = select_scalar(ks, ka, sl, mi, off[i], off[i + 1], len, floor, top + i * len);
            } else {
                extract_load(ks, ka, sl, mi, off[i], off[i + 1], floor, nv, &L[size]);
                list[size++] = i;
            }
        }
        for (got = 0; got < len; got++) {
            int live = 0;
#pragma GCC unroll 5
            for (g = 0; g < group; g++) {
                int64_t k;
                if (g >= size || n[list[g]] < got) continue; /* absent, or used up */
                j = list[g];
                k = extract_step(ka, sl, map ? map + (off[j] - off[0]) : NULL, off[j], nv, &L[g]);
                top[j * len + got] = k;
                n[j] += k >= 0;
                live |= k >= 0;
            }
            if (!live) break;
        }
    }
}

/* select_lists on an AVX-512 machine: lists of at most EXTRACT_MAX items by
 * extraction, longer ones by select_scalar; a request whose lists are all
 * short, five at a time in 3 vectors each, else three at a time in 4. */
__attribute__((target("arch=x86-64-v4"))) static void
select_lists_avx512(int m, const double *ks, const int64_t *ka, const Slot *sl,
                    const int64_t *map, const int64_t *off, int64_t len, double floor,
                    int64_t *top, int64_t *n)
{
    int64_t longest = 0;
    int i;
    for (i = 0; i < m; i++)
        longest = off[i + 1] - off[i] > longest ? off[i + 1] - off[i] : longest;
    if (longest <= EXTRACT_SHORT)
        select_groups(m, ks, ka, sl, map, off, len, floor, 3, 5, top, n);
    else
        select_groups(m, ks, ka, sl, map, off, len, floor, 4, 3, top, n);
}

/* rank[q] = how many of s[0 .. n-1] exceed s[q] (n <= 64), counted for 8
 * items at a time; returns 0 when two items share a rank (equal scores),
 * for the caller to count its full key instead. */
__attribute__((target("arch=x86-64-v4"))) static int count_ranks(const double *s, int64_t n,
                                                                 int64_t *rank)
{
    const __m512i one = _mm512_set1_epi64(1);
    uint64_t placed = 0;
    int64_t q;
    int v;
    for (v = 0; 8 * v < n; v++) {
        const __mmask8 in = first_lanes(n - 8 * v);
        const __m512d c = _mm512_maskz_loadu_pd(in, s + 8 * v);
        __m512i above = _mm512_setzero_si512();
        for (q = 0; q < n; q++)
            above = _mm512_mask_add_epi64(
                above, _mm512_cmp_pd_mask(_mm512_set1_pd(s[q]), c, _CMP_GT_OQ), above, one);
        _mm512_mask_storeu_epi64(rank + 8 * v, in, above);
    }
    for (q = 0; q < n; q++) placed |= (uint64_t)1 << rank[q];
    return placed == first_bits(n);
}

/* count_before (below): 8 ads at a time against each entry. */
__attribute__((target("arch=x86-64-v4"))) static void
count_before_avx512(const double *e_s, const int64_t *e_ad, int64_t n, const double *g,
                    const int64_t *a, int64_t n_in, int64_t *count)
{
    const __m512i one = _mm512_set1_epi64(1);
    int64_t j, q;
    for (j = 0; j < n_in; j += 8) {
        const __mmask8 in = first_lanes(n_in - j);
        const __m512d gv = _mm512_maskz_loadu_pd(in, g + j);
        const __m512i av = _mm512_maskz_loadu_epi64(in, a + j);
        __m512i before = _mm512_setzero_si512();
        for (q = 0; q < n; q++) {
            const __m512d s = _mm512_set1_pd(e_s[q]);
            const __mmask8 tie = _mm512_cmp_pd_mask(s, gv, _CMP_EQ_OQ);
            before = _mm512_mask_add_epi64(
                before,
                _mm512_cmp_pd_mask(s, gv, _CMP_GT_OQ) |
                    _mm512_mask_cmpgt_epi64_mask(tie, av, _mm512_set1_epi64(e_ad[q])),
                before, one);
        }
        _mm512_mask_storeu_epi64(count + j, in, before);
    }
}

/* earlier_of_ads (below) on an AVX-512 machine: ra[q] is compared with
 * the ads before it 8 at a time. */
__attribute__((target("arch=x86-64-v4"))) static void
earlier_of_ads_avx512(const int64_t *ra, const int64_t *act, int64_t n, int64_t *first,
                      int64_t *earlier)
{
    int64_t q;
    int v;
    for (q = 0; q < n; q++) {
        const __m512i a = _mm512_set1_epi64(ra[q]);
        uint64_t hits = 0;
        for (v = 0; 8 * v < q; v++) {
            const __mmask8 before = first_lanes(q - 8 * v);
            hits |= (uint64_t)_mm512_mask_cmpeq_epi64_mask(
                        before, _mm512_maskz_loadu_epi64(before, ra + 8 * v), a)
                    << 8 * v;
        }
        first[q] = q;
        earlier[q] = 0;
        if (hits) { /* an ad kept by several actions */
            first[q] = __builtin_ctzll(hits);
            for (; hits; hits &= hits - 1) earlier[q] |= (int64_t)1 << act[__builtin_ctzll(hits)];
        }
    }
}

/* coalition_sums (below) on an AVX-512 machine, for quota, slots <= n <=
 * INT16_MAX: 32 coalitions b + l at a time, their counts in the 16-bit lanes
 * of one vector (one comparison with the quota for all 32) and their sums in
 * four float64 vectors; the coalitions that entry j may go to are a bit mask
 * read from meets[] for its actions and for its excluded actions, in place
 * of a test per lane. A sum adds its lanes' earnings in entry order, as the
 * scalar loop does, so the two agree bit for bit. */
__attribute__((target("arch=x86-64-v4"))) static void
coalition_sums_avx512(const Work *W, int64_t n, int64_t n_masks, int64_t quota, int lagged,
                      double reserve, int64_t slots, double *y)
{
    const __m512i one = _mm512_set1_epi16(1), zero = _mm512_setzero_si512();
    const __m512i most = _mm512_set1_epi16((short)quota), paid = _mm512_set1_epi16((short)slots);
    int64_t b, j;
    int v;
    for (b = 0; b < n_masks; b += 32) {
        __m512d sum[4];
        __m512i taken = zero;
        for (v = 0; v < 4; v++) sum[v] = _mm512_setzero_pd();
        for (j = 0; j < n; j++) {
            const int64_t a = W->e_a[j], p = W->e_p[j];
            const uint32_t in = a & b ? ~0u : W->meets[a & 31];
            const uint32_t out = p & b ? ~0u : W->meets[p & 31];
            const __mmask32 take = _mm512_mask_cmplt_epi16_mask(in & ~out, taken, most);
            /* GSP's lagged earnings: an entry earns the price it sets for
             * the coalition's winner before it */
            const __mmask32 earns = lagged ? _mm512_mask_cmpgt_epi16_mask(take, taken, zero) : take;
            const __m512d w = _mm512_set1_pd(
                lagged ? (W->e_s[j] > reserve ? W->e_s[j] : reserve) : W->e_w[j]);
            for (v = 0; v < 4; v++)
                sum[v] = _mm512_mask_add_pd(sum[v], (__mmask8)(earns >> 8 * v), sum[v], w);
            taken = _mm512_mask_add_epi16(taken, take, taken, one);
        }
        if (lagged) { /* the last winner of 1 .. slots pays the reserve */
            const __mmask32 last = _mm512_cmpgt_epi16_mask(taken, zero) &
                                   _mm512_cmple_epi16_mask(taken, paid);
            for (v = 0; v < 4; v++)
                sum[v] = _mm512_mask_add_pd(sum[v], (__mmask8)(last >> 8 * v), sum[v],
                                            _mm512_set1_pd(reserve));
        }
        for (v = 0; v < 4; v++)
            _mm512_mask_storeu_pd(y + b + 8 * v, first_lanes(n_masks - b - 8 * v), sum[v]);
    }
}
#endif

/* select_scalar on every action's items (action i: offsets off[i] ..
 * off[i+1]-1, keys into top + i * len, counts into n[i]), in vector
 * registers when they fit. */
static FC_INLINE void select_lists(const Work *W, int m, const double *ks, const int64_t *ka,
                                   const Slot *sl, const int64_t *map, const int64_t *off,
                                   int64_t len, double floor, int64_t *top, int64_t *n)
{
    int i;
#ifdef FC_AVX512_PATHS
    if (W->avx512 && len <= 8) {
        select_lists_avx512(m, ks, ka, sl, map, off, len, floor, top, n);
        return;
    }
#else
    (void)W;
#endif
    for (i = 0; i < m; i++)
        n[i] = select_scalar(ks, ka, sl, map ? map + (off[i] - off[0]) : NULL, off[i], off[i + 1],
                             len, floor, top + i * len);
}

/* rank[q] = how many of the n keys (s[r], a[r], x[r]) rank before key q:
 * score desc, then ad asc, then x asc. Counted by score alone (count_ranks)
 * where AVX-512 is, n <= 64 and no two scores are equal; else by the full
 * key, with no branch so that the count vectorises. */
static FC_INLINE void rank_keys(const Work *W, const double *s, const int64_t *a,
                                const int64_t *x, int64_t n, int64_t *rank)
{
    int64_t q, r;
#ifdef FC_AVX512_PATHS
    if (W->avx512 && n <= 64 && count_ranks(s, n, rank)) return;
#else
    (void)W;
#endif
    for (q = 0; q < n; q++) {
        const double sq = s[q];
        const int64_t aq = a[q], xq = x[q];
        int64_t before = 0;
        for (r = 0; r < n; r++)
            before += (s[r] > sq) | ((s[r] == sq) & ((a[r] < aq) | ((a[r] == aq) & (x[r] < xq))));
        rank[q] = before;
    }
}

/* For the ads ra[0 .. n-1] in rank order: first[q], the first position of
 * ra[q]'s ad, and earlier[q], the actions act[] of its positions before q. */
static FC_INLINE void earlier_of_ads(const Work *W, const int64_t *ra, const int64_t *act,
                                     int64_t n, int64_t *first, int64_t *earlier)
{
    int64_t q, r;
#ifdef FC_AVX512_PATHS
    if (W->avx512 && n <= 64) {
        earlier_of_ads_avx512(ra, act, n, first, earlier);
        return;
    }
#else
    (void)W;
#endif
    for (q = 0; q < n; q++) {
        first[q] = q;
        earlier[q] = 0;
        for (r = 0; r < q; r++) {
            const int64_t same = ra[r] == ra[q];
            first[q] = same & (r < first[q]) ? r : first[q];
            earlier[q] |= same ? (int64_t)1 << act[r] : 0;
        }
    }
}

/* Merges the kept action lists (instances) into one list in rank order.
 * Each ad's group is its first merged position, whose gmask ORs the actions
 * that kept it; the entries are the merged instances, each taken by the
 * coalitions that hold its action (e_a) but none of its ad's earlier
 * actions (e_p). Every position is placed by counting the positions ranked
 * before it, which needs no branch. */
static FC_INLINE int64_t merge_lists(const Auction *A, Work *W)
{
    int64_t n = 0, q, j;
    int i;
    for (i = 0; i < A->m; i++) /* the keys side by side, so that the counts vectorise */
        for (j = 0; j < W->top_n[i]; j++, n++) {
            const int64_t x = W->top[i * A->len + j];
            W->pick[n] = x;
            W->pool[n] = i;
            W->e_s[n] = A->score[x];
            W->e_p[n] = A->ad[x];
        }
    rank_keys(W, W->e_s, W->e_p, W->pick, n, W->rank);
    for (q = 0; q < n; q++) {
        W->inst[W->rank[q]] = W->pick[q];
        W->act[W->rank[q]] = W->pool[q];
    }
    for (q = 0; q < n; q++) {
        W->gmask[q] = 0;
        W->pick[q] = A->ad[W->inst[q]]; /* the ads in rank order */
    }
    earlier_of_ads(W, W->pick, W->act, n, W->grp, W->e_p);
    for (q = 0; q < n; q++) {
        const int64_t x = W->inst[q];
        W->gmask[W->grp[q]] |= (int64_t)1 << W->act[q];
        W->e_inst[q] = x;
        W->e_a[q] = (int64_t)1 << W->act[q];
        W->e_s[q] = A->score[x];
        W->e_w[q] = A->value[x];
    }
    return n;
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

/* a where `take` is all ones, b where it is 0, by bit masks: GCC turns a
 * ?: of doubles into a branch, which mispredicts on data at random. */
static FC_INLINE double choose(int64_t take, double a, double b)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    x = (x & (uint64_t)take) | (y & ~(uint64_t)take);
    memcpy(&a, &x, sizeof a);
    return a;
}

/* x where s > g, else b, by a conditional move: GCC branches on the
 * comparison (which mispredicts on data at random) and, told the odds, still
 * does; selected by bit masks it took 4 more instructions an instance of
 * hash_ads. %v: the VEX form in the clones compiled for AVX. */
static FC_INLINE int64_t if_greater(double s, double g, int64_t x, int64_t b)
{
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    __asm__("%vucomisd %[g], %[s]\n\tcmova %[x], %[b]"
            : [b] "+r"(b)
            : [s] "x"(s), [g] "x"(g), [x] "r"(x)
            : "cc");
    return b;
#else
    const int64_t up = -(int64_t)(s > g);
    return (x & up) | (b & ~up);
#endif
}

/* Filter, capacity = 0: every ad of the request's instances into the
 * (empty) hash table with its best score and instance; slot_of[x - off[0]]
 * is x's slot, or ~slot when an earlier instance of x's action has the same
 * ad, and used[] the distinct slots, whose number is returned. No branch
 * but the (rarely repeated) probe. Not inlined into the request loop, whose
 * live values spilled its own to the stack and to vector registers, and its
 * probe walks on past the table's end into n_max spare slots instead of
 * wrapping, which frees one more register: 49 -> 45 instructions an
 * instance on x86-64-v4, fewer of them spills; filter/first 770 -> 710 ns a
 * request (AMD EPYC Zen 4). There the pass is bound by its instructions,
 * not by memory: leaving out the best instance's update (7 of them), the
 * probe's test (8) or slot_of's (5) each saves 45-65 ns of its ~350. */
static FC_CLONES __attribute__((noinline)) int64_t hash_ads(const Auction *A, Work *W,
                                                            const int64_t *off)
{
    const int64_t lo = off[0];
    const int shift = 64 - W->h_bits;
    const int64_t *restrict ads = A->ad;
    const double *restrict score = A->score;
    Slot *restrict T = W->slot;
    int64_t *restrict slot_of = W->slot_of - lo, *restrict used = W->used;
    int64_t x, n = 0, hi;
    int i;
    for (i = 0, x = lo; i < A->m; i++) {
        const int32_t bit = (int32_t)1 << i;
        for (hi = off[i + 1]; x < hi; x++) {
            const int64_t ad = ads[x];
            const double s = score[x];
            int64_t h = (int64_t)(((uint64_t)ad * FC_RNG_GOLDEN) >> shift);
            int32_t acts;
            double g;
            /* one branch, taken only on a slot holding another ad; a
             * probe passes at most n_max - 1 slots */
            while (-(uint64_t)(T[h].acts != 0) & (uint64_t)(T[h].ad ^ ad)) h++;
            /* an empty slot has g = -inf: every choice is a bit mask or a
             * max, so that no branch depends on the data */
            acts = T[h].acts;
            g = T[h].g;
            T[h].ad = ad;
            T[h].best = if_greater(s, g, x, T[h].best);
            T[h].g = s > g ? s : g;
            T[h].acts = acts | bit;
            slot_of[x] = acts & bit ? ~h : h; /* ~h for a repeat */
            used[n] = h;
            n += acts == 0;
        }
    }
    return n;
}

/* count[j] = how many of the n ranked entries (W->e_s, e_ad) have a key
 * before (g[j], a[j]), j < n_in. */
static FC_INLINE void count_before(const Work *W, int64_t n, const int64_t *e_ad,
                                   const double *g, const int64_t *a, int64_t n_in,
                                   int64_t *count)
{
    int64_t j, q;
#ifdef FC_AVX512_PATHS
    if (W->avx512) {
        count_before_avx512(W->e_s, e_ad, n, g, a, n_in, count);
        return;
    }
#endif
    for (j = 0; j < n_in; j++)
        for (count[j] = 0, q = 0; q < n; q++) count[j] += key_before(W->e_s[q], e_ad[q], g[j], a[j]);
}

/* Filter, capacity = 0: U of the proof above as entries (mask', best
 * score, earnings) in rank order; returns their number. */
static FC_INLINE int64_t ranked_union(const Auction *A, Work *W, const int64_t *off)
{
    const int64_t n_ads = hash_ads(A, W, off);
    int64_t n = 0, q, j;
    int i;
    select_lists(W, A->m, NULL, NULL, W->slot, W->slot_of, off, A->len, A->reserve, W->top,
                 W->top_n);
    for (i = 0; i < A->m; i++) {
        const int64_t *top = W->top + i * A->len, k = W->top_n[i];
        for (j = 0; j < k; j++) {
            Slot *t = W->slot + top[j];
            const int64_t fresh = t->mask == 0;
            t->mask |= (int32_t)1 << i;
            W->pick[n] = top[j];
            n += fresh;
        }
    }
    for (q = 0; q < n; q++) { /* the keys side by side, so that the counts vectorise */
        W->e_s[q] = W->slot[W->pick[q]].g;
        W->e_inst[q] = W->slot[W->pick[q]].ad;
    }
    rank_keys(W, W->e_s, W->e_inst, W->pick, n, W->act); /* act: free in filter mode */
    for (q = 0; q < n; q++) W->rank[W->act[q]] = W->pick[q];
    for (q = 0; q < n; q++) {
        const Slot *t = W->slot + W->rank[q];
        W->e_inst[q] = t->best;
        W->e_a[q] = t->mask;
        W->e_p[q] = 0;
        W->e_s[q] = t->g;
        W->e_w[q] = A->value[t->best];
    }
    if (A->gsp && n > 0) {
        /* after[p]: the best score of the ads outside U ranked after exactly
         * p entries of U; the entry after U's q-th in F is U's (q+1)-th or
         * the best of those, whichever ranks first. Ads after U's last
         * entry need no count. */
        /* in_a, in_g: the ads between U's entries and their best scores */
        int64_t *e_ad = W->pool, *in_a = W->between_ad, *count = W->slot_of, n_in = 0;
        double *in_g = W->between, tail = -INFINITY;
        for (q = 0; q < n; q++) e_ad[q] = A->ad[W->e_inst[q]];
        for (j = 0; j < n_ads; j++) {
            const Slot *t = W->slot + W->used[j];
            const int64_t in_u = t->mask != 0, a = t->ad;
            const double g = t->g;
            const int64_t past = key_before(W->e_s[n - 1], e_ad[n - 1], g, a);
            /* a max, whose latency alone chains the ads (a choice on
             * g > tail chained a compare and four bit operations); an ad
             * past U's last entry is not in U */
            const double after_u = choose(-past, g, -INFINITY);
            tail = after_u > tail ? after_u : tail;
            in_a[n_in] = a;
            in_g[n_in] = g;
            n_in += (in_u | past) ^ 1;
        }
        for (q = 0; q < n; q++) W->after[q] = -INFINITY;
        W->after[n] = tail;
        count_before(W, n, e_ad, in_g, in_a, n_in, count);
        for (j = 0; j < n_in; j++)
            W->after[count[j]] = in_g[j] > W->after[count[j]] ? in_g[j] : W->after[count[j]];
        for (q = 0; q < n; q++) {
            const double next = q + 1 < n && W->e_s[q + 1] > W->after[q + 1] ? W->e_s[q + 1]
                                                                              : W->after[q + 1];
            W->e_w[q] = gsp_price(W->e_s[q], next, A->reserve);
        }
    }
    for (j = 0; j < n_ads; j++) { /* the fields an empty slot needs, not the whole slot */
        Slot *t = W->slot + W->used[j];
        t->g = -INFINITY;
        t->acts = t->mask = 0;
    }
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
/* y(S) for every S from n ranked entries, all coalitions at once. Each S
 * takes up to `quota` entries; it earns e_w of each of the first `slots`,
 * or with `lagged` (GSP prices of rerun mode) the price its q-th entry gets
 * from the score of its (q+1)-th. Those entries are ranked by score and at
 * or above the reserve (the floor of the cut), so a price
 * min(own, max(reserve, next)) is max(reserve, next) and the last entry's
 * the reserve: no coalition needs its previous score. With win_ad, records
 * the winners (not with `lagged`). */
static FC_INLINE void coalition_sums(const Auction *A, Work *W, int64_t n, int lagged,
                                     double *y, int64_t *win_ad, double *win_earn)
{
    const int64_t n_masks = (int64_t)1 << A->m, quota = lagged ? A->wanted : A->slots;
    const double reserve = A->reserve;
    int64_t *cnt = W->cnt;
    int64_t j, S;
#ifdef FC_AVX512_PATHS
    if (!win_ad && W->avx512 && n <= INT16_MAX) {
        /* a count never passes n, so quotas of n or more are n */
        coalition_sums_avx512(W, n, n_masks, quota < n ? quota : n, lagged, reserve,
                              A->slots < n ? A->slots : n, y);
        return;
    }
#endif
    for (S = 0; S < n_masks; S++) {
        y[S] = 0.0;
        cnt[S] = 0;
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
        for (S = 0; S < n_masks; S++) {
            const int64_t take = (S & a) != 0 && (S & p) == 0 && cnt[S] < quota;
            y[S] += take && (!lagged || cnt[S] > 0) ? (lagged ? (s > reserve ? s : reserve) : w)
                                                    : 0.0;
            cnt[S] += take;
        }
    }
    if (lagged)
        for (S = 0; S < n_masks; S++) y[S] += cnt[S] > 0 && cnt[S] <= A->slots ? reserve : 0.0;
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

/* The requests start .. stop-1 (see fc_auction_replay), compiled once per
 * CPU generation with every step of the fast paths inlined. */
static FC_CLONES void replay_range(const Auction *A, Work *W, const int64_t *offsets,
                                   int64_t start, int64_t stop, int mode, double *out,
                                   int64_t *win_ad, double *win_earn)
{
    const int m = A->m;
    const int64_t n_masks = (int64_t)1 << m, slots = A->slots, capacity = A->capacity;
    const double *score = A->score;
    const int64_t *ad_id = A->ad;
    int64_t r, j, n;
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
        /* the next request's earnings: a request reads a few at random,
         * too late for the hardware to fetch them ahead (5 % of filter
         * mode's time) */
        if (r + 1 < stop && off[2 * m] > off[m]) {
            for (j = off[m]; j < off[2 * m]; j += 8) __builtin_prefetch(A->value + j);
            __builtin_prefetch(A->value + off[2 * m] - 1);
        }
        if (mode == FC_MODE_FILTER && !capacity) {
            n = ranked_union(A, W, off);
            coalition_sums(A, W, n, 0, y, wa, we);
            continue;
        }
        select_lists(W, m, score, ad_id, NULL, NULL, off, A->len, A->floor, W->top, W->top_n);
        n = merge_lists(A, W);
        if (mode == FC_MODE_RERUN) {
            if (capacity || wa)
                rerun_table(A, W, n, r * n_masks, y, wa, we);
            else
                coalition_sums(A, W, n, A->gsp, y, NULL, NULL);
            continue;
        }
        n = ranked_full(A, W, n, r * n_masks + 1);
        coalition_sums(A, W, relevant_entries(A, W, n), 0, y, wa, we);
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
    int64_t r, j, n_max = 1, a_max = 1, size, list, ranked, n_masks, hsize, cut;
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
    /* the ads each action keeps: filter reads `slots` per action, rerun
     * `wanted` (proof above) */
    cut = mode == FC_MODE_FILTER ? slots : A.wanted;
    A.len = capacity ? a_max : (cut < a_max ? cut : a_max);
    A.floor = capacity ? -INFINITY : reserve;
    W.avx512 = 0;
#ifdef FC_AVX512_PATHS
    W.avx512 = (fc_internal_paths() & FC_PATH_AVX512) != 0;
    for (i = 0; i < 32; i++)
        for (W.meets[i] = 0, j = 0; j < 32; j++) W.meets[i] |= (uint32_t)((j & i) != 0) << j;
#endif
    /* at most 1/8 of the slots taken while the table stays within
     * HASH_BITS_SPARSE (32 KiB): a request's ads then rarely collide, and
     * the probe's one branch rarely mispredicts (filter/first 1,035 -> 975
     * ns a request against 1/2; 1/16 gains nothing more). A larger table
     * leaves the cache anyway: it is at most half full. */
    W.h_bits = 1;
    while (((int64_t)1 << W.h_bits) < 2 * n_max ||
           (((int64_t)1 << W.h_bits) < 8 * n_max && W.h_bits < HASH_BITS_SPARSE))
        W.h_bits++;
    hsize = (int64_t)1 << W.h_bits;
    list = m * A.len;
    ranked = n_max > list ? n_max : list;
    size = (int64_t)m + 10 * list + 3 * ranked + 3 * n_max + n_masks;
    ints = calloc((size_t)size, sizeof *ints);
    reals = malloc((size_t)(3 * ranked + 1 + n_max) * sizeof *reals);
    W.slot = NULL;
    W.slot_mem = NULL;
    if (mode == FC_MODE_FILTER && !capacity) {
        /* aligned, so that no slot straddles two cache lines */
        W.slot_mem = malloc((size_t)(hsize + n_max) * sizeof *W.slot + 63); /* + probes' */
        if (W.slot_mem) {
            W.slot = (Slot *)(((uintptr_t)W.slot_mem + 63) & ~(uintptr_t)63);
            for (j = 0; j < hsize + n_max; j++) W.slot[j] = EMPTY_SLOT;
        }
    }
    if (!ints || !reals || (mode == FC_MODE_FILTER && !capacity && !W.slot)) {
        free(ints);
        free(reals);
        free(W.slot_mem);
        return FC_ENOMEM;
    }
    W.top_n = ints;
    W.top = W.top_n + m;
    W.inst = W.top + list;
    W.act = W.inst + list;
    W.grp = W.act + list;
    W.gmask = W.grp + list;
    W.gstamp = W.gmask + list;
    W.rank = W.gstamp + list;
    W.pool = W.rank + list;
    W.heap = W.pool + list;
    W.pick = W.heap + list;
    W.e_inst = W.pick + list;
    W.e_a = W.e_inst + ranked;
    W.e_p = W.e_a + ranked;
    W.slot_of = W.e_p + ranked;
    W.used = W.slot_of + n_max;
    W.between_ad = W.used + n_max;
    W.cnt = W.between_ad + n_max;
    W.e_s = reals;
    W.e_w = W.e_s + ranked;
    W.after = W.e_w + ranked;
    W.between = W.after + ranked + 1;

    replay_range(&A, &W, offsets, start, stop, mode, out, win_ad, win_earn);
    free(ints);
    free(reals);
    free(W.slot_mem);
    return FC_OK;
}
