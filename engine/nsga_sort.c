/* nsga_sort.c -- non-dominated sorting and crowding distance.
 *
 * Two sorts that must agree rank for rank (tests/engine checks it):
 *  - Deb et al. 2002 "fast non-dominated sort", kept as the reference;
 *    the dominated sets S_p are recomputed while peeling fronts instead of
 *    stored, so memory stays O(n) even for 20,000 points.
 *  - ENS-BS (Zhang, Tian, Cheng, Jin 2015): points in lexicographic order
 *    can only be dominated by earlier points, so each point goes to the
 *    first front (found by binary search) that holds no point dominating
 *    it.  For m = 2 the last point added to a front has the front's
 *    smallest second objective, which makes the test O(1): O(n log n).
 * Constrained domination (Deb 2002): feasible (cv == 0) beats infeasible;
 * infeasible points compare by cv only, so they form one front per
 * distinct cv value after all feasible fronts.  Identical points never
 * dominate each other and share a rank.
 *
 * Invariant: every ordering here is a stable merge sort over indices, so
 * results depend only on the values and the input order, never on the
 * C library's qsort.
 */
#include "nsga.h"
#include "nsga_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int nsga_sortws_init(nsga_sortws *w, int cap, int mcap)
{
    memset(w, 0, sizeof *w);
    size_t n = (size_t)(cap > 0 ? cap : 1), mc = (size_t)(mcap > 0 ? mcap : 1);
    w->cap = cap;
    w->mcap = mcap;
    w->idx = malloc(n * sizeof(int));
    w->tmp = malloc(n * sizeof(int));
    w->prev = malloc(n * sizeof(int));
    w->tail = malloc(n * sizeof(int));
    w->order = malloc(n * sizeof(int));
    w->start = malloc((n + 1) * sizeof(int));
    w->key = malloc(n * sizeof(double));
    w->links = malloc(2 * mc * n * sizeof(int));
    w->ver = malloc(n * sizeof(int));
    w->cd = malloc(n * sizeof(double));
    w->hidx = malloc((1 + 2 * mc) * n * sizeof(int));
    w->hver = malloc((1 + 2 * mc) * n * sizeof(int));
    w->hkey = malloc((1 + 2 * mc) * n * sizeof(double));
    if (!w->idx || !w->tmp || !w->prev || !w->tail || !w->order || !w->start || !w->key ||
        !w->links || !w->ver || !w->cd || !w->hidx || !w->hver || !w->hkey) {
        nsga_sortws_free(w);
        return NSGA_ENOMEM;
    }
    return 0;
}

void nsga_sortws_free(nsga_sortws *w)
{
    free(w->idx);
    free(w->tmp);
    free(w->prev);
    free(w->tail);
    free(w->order);
    free(w->start);
    free(w->key);
    free(w->links);
    free(w->ver);
    free(w->cd);
    free(w->hidx);
    free(w->hver);
    free(w->hkey);
    memset(w, 0, sizeof *w);
}

/* ---- stable merge sorts over index arrays ------------------------------ */

enum { RUN = 16 };

/* One bottom-up merge sort body, instantiated for two orders.  LESS(x, y)
 * compares two indices; ties keep the earlier one first (stability). */
#define MSORT_BODY(LESS)                                                                 \
    for (int s = 0; s < n; s += RUN) {                                                   \
        int e = s + RUN < n ? s + RUN : n;                                               \
        for (int i = s + 1; i < e; i++) {                                                \
            int v = a[i], j = i;                                                         \
            while (j > s && LESS(v, a[j - 1])) {                                         \
                a[j] = a[j - 1];                                                         \
                j--;                                                                     \
            }                                                                            \
            a[j] = v;                                                                    \
        }                                                                                \
    }                                                                                    \
    int *src = a, *dst = tmp;                                                            \
    for (int width = RUN; width < n; width *= 2) {                                       \
        for (int lo = 0; lo < n; lo += 2 * width) {                                      \
            int mid = lo + width < n ? lo + width : n;                                   \
            int hi = lo + 2 * width < n ? lo + 2 * width : n;                            \
            int i = lo, j = mid, k = lo;                                                 \
            while (i < mid && j < hi) dst[k++] = LESS(src[j], src[i]) ? src[j++] : src[i++]; \
            while (i < mid) dst[k++] = src[i++];                                         \
            while (j < hi) dst[k++] = src[j++];                                          \
        }                                                                                \
        int *t = src;                                                                    \
        src = dst;                                                                       \
        dst = t;                                                                         \
    }                                                                                    \
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);

void nsga_msort_by(int *a, int *tmp, int n, const double *key, int stride)
{
#define KEY_LESS(x, y) (key[(size_t)(x) * stride] < key[(size_t)(y) * stride])
    MSORT_BODY(KEY_LESS)
#undef KEY_LESS
}

static inline int lex_less(const double *x, const double *y, int m)
{
    for (int j = 0; j < m; j++) {
        if (x[j] < y[j]) return 1;
        if (x[j] > y[j]) return 0;
    }
    return 0;
}

static void msort_lex(int *a, int *tmp, int n, const double *obj, int m)
{
#define LEX_LESS(x, y) lex_less(obj + (size_t)(x) * m, obj + (size_t)(y) * m, m)
    MSORT_BODY(LEX_LESS)
#undef LEX_LESS
}

/* ---- Deb's sort ----------------------------------------------------------- */

/* 1: a dominates b, -1: b dominates a, 0: neither (or equal). */
static inline int dom_rel(const double *a, const double *b, int m)
{
    int better = 0, worse = 0;
    for (int j = 0; j < m; j++) {
        if (a[j] < b[j]) better = 1;
        else if (a[j] > b[j]) worse = 1;
        if (better && worse) return 0;
    }
    return better - worse;
}

static inline int cdom_rel(int i, int j, int m, const double *obj, const double *cv)
{
    if (cv) {
        int fi = !(cv[i] > 0), fj = !(cv[j] > 0);
        if (fi != fj) return fi ? 1 : -1;
        if (!fi) return cv[i] < cv[j] ? 1 : cv[i] > cv[j] ? -1 : 0;
    }
    return dom_rel(obj + (size_t)i * m, obj + (size_t)j * m, m);
}

int nsga_sort_deb_ws(nsga_sortws *w, int n, int m, const double *obj, const double *cv, int *rank)
{
    int *count = w->prev, *cur = w->idx, *next = w->tmp;
    for (int i = 0; i < n; i++) count[i] = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            int d = cdom_rel(i, j, m, obj, cv);
            if (d > 0) count[j]++;
            else if (d < 0) count[i]++;
        }
    int ncur = 0, r = 0;
    for (int i = 0; i < n; i++)
        if (count[i] == 0) cur[ncur++] = i;
    while (ncur > 0) {
        int nnext = 0;
        for (int k = 0; k < ncur; k++) rank[cur[k]] = r;
        /* S_p recomputed: only still-unranked points (count > 0) can be
         * in a current member's dominated set. */
        for (int k = 0; k < ncur; k++)
            for (int q = 0; q < n; q++)
                if (count[q] > 0 && cdom_rel(cur[k], q, m, obj, cv) > 0 && --count[q] == 0)
                    next[nnext++] = q;
        int *t = cur;
        cur = next;
        next = t;
        ncur = nnext;
        r++;
    }
    return r;
}

/* ---- ENS-BS ----------------------------------------------------------------- */

/* q precedes p lexicographically, so q_0 <= p_0: q dominates p iff
 * q_j <= p_j for all j >= 1 and q != p. */
static inline int dominates_sorted(const double *q, const double *p, int m)
{
    for (int j = 1; j < m; j++)
        if (q[j] > p[j]) return 0;
    for (int j = 0; j < m; j++)
        if (q[j] < p[j]) return 1;
    return 0;
}

static inline int dominates_sorted3(const double *q, const double *p)
{
    return q[1] <= p[1] && q[2] <= p[2] && (q[0] < p[0] || q[1] < p[1] || q[2] < p[2]);
}

/* Does front f (a list through tail/prev, newest first) hold a point that
 * dominates p?  Newest first: ENS's observation that recently added points
 * are the likeliest to dominate the next one. */
static int front_dominates(const nsga_sortws *w, int f, int p, int m, const double *obj)
{
    const double *pp = obj + (size_t)p * m;
    if (m == 3) {
        for (int q = w->tail[f]; q >= 0; q = w->prev[q])
            if (dominates_sorted3(obj + (size_t)q * 3, pp)) return 1;
        return 0;
    }
    for (int q = w->tail[f]; q >= 0; q = w->prev[q])
        if (dominates_sorted(obj + (size_t)q * m, pp, m)) return 1;
    return 0;
}

/* Ranks the n indices in sorted[] (lexicographic order); returns fronts. */
static int ens_bs(nsga_sortws *w, const int *sorted, int n, int m, const double *obj, int *rank)
{
    int nf = 0;
    for (int k = 0; k < n; k++) {
        int p = sorted[k], lo = 0, hi = nf;
        if (m == 2) {
            const double *pp = obj + (size_t)p * 2;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                const double *l = obj + (size_t)w->tail[mid] * 2;
                if (l[1] < pp[1] || (l[1] == pp[1] && l[0] < pp[0])) lo = mid + 1;
                else hi = mid;
            }
        } else {
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (front_dominates(w, mid, p, m, obj)) lo = mid + 1;
                else hi = mid;
            }
        }
        if (lo == nf) w->tail[nf++] = -1;
        rank[p] = lo;
        w->prev[p] = w->tail[lo];
        w->tail[lo] = p;
    }
    return nf;
}

int nsga_sort_fast_ws(nsga_sortws *w, int n, int m, const double *obj, const double *cv, int *rank)
{
    int nfeas = 0, ninf = 0;
    for (int i = 0; i < n; i++) {
        if (cv && cv[i] > 0) w->order[ninf++] = i;
        else w->idx[nfeas++] = i;
    }
    msort_lex(w->idx, w->tmp, nfeas, obj, m);
    int nf = ens_bs(w, w->idx, nfeas, m, obj, rank);
    if (ninf) {
        nsga_msort_by(w->order, w->tmp, ninf, cv, 1);
        for (int k = 0; k < ninf; k++) {
            if (k > 0 && cv[w->order[k]] != cv[w->order[k - 1]]) nf++;
            else if (k == 0) nf++;
            rank[w->order[k]] = nf - 1;
        }
    }
    return nf;
}

/* ---- crowding distance ------------------------------------------------------ */

void nsga_crowding_set(nsga_sortws *w, int cnt, const int *members, int m, const double *obj,
                       double *crowd)
{
    for (int i = 0; i < cnt; i++) crowd[members[i]] = cnt <= 2 ? INFINITY : 0.0;
    if (cnt <= 2) return;
    for (int k = 0; k < m; k++) {
        int *s = w->idx;
        memcpy(s, members, (size_t)cnt * sizeof *s);
        nsga_msort_by(s, w->tmp, cnt, obj + k, m);
        double lo = obj[(size_t)s[0] * m + k], hi = obj[(size_t)s[cnt - 1] * m + k];
        crowd[s[0]] = crowd[s[cnt - 1]] = INFINITY;
        if (!(hi > lo)) continue; /* a flat objective says nothing about spacing */
        double inv = 1.0 / (hi - lo);
        for (int t = 1; t < cnt - 1; t++)
            crowd[s[t]] += (obj[(size_t)s[t + 1] * m + k] - obj[(size_t)s[t - 1] * m + k]) * inv;
    }
}

void nsga_crowding_all(nsga_sortws *w, int n, int m, const double *obj, const int *rank,
                       int nfronts, double *crowd)
{
    int *start = w->start;
    for (int r = 0; r <= nfronts; r++) start[r] = 0;
    for (int i = 0; i < n; i++) start[rank[i] + 1]++;
    for (int r = 0; r < nfronts; r++) start[r + 1] += start[r];
    /* counting sort by rank, stable; start[r] ends as the end of front r */
    for (int i = 0; i < n; i++) w->order[start[rank[i]]++] = i;
    int b = 0;
    for (int r = 0; r < nfronts; r++) {
        nsga_crowding_set(w, start[r] - b, w->order + b, m, obj, crowd);
        b = start[r];
    }
}

/* ---- iterative truncation by crowding ------------------------------------------
 * Per objective a doubly linked list of the front in sorted order; a
 * point's distance is the normalised gap between its list neighbours
 * (INFINITY at a list end).  Removing a point only widens its neighbours'
 * gaps, so a min-heap with lazy deletion (entries carry a version) finds
 * the next victim in O(log n): O(m n log n) for the whole truncation. */

typedef struct {
    nsga_sortws *w;
    int cnt, m;
    const int *members;
    const double *obj;
    double inv[NSGA_MAX_OBJ];
    int hn;
} trunc_ctx;

static double local_cd(const trunc_ctx *c, int t)
{
    const int *prv = c->w->links, *nxt = c->w->links + (size_t)c->m * c->cnt;
    double sum = 0;
    for (int k = 0; k < c->m; k++) {
        int p = prv[(size_t)k * c->cnt + t], n = nxt[(size_t)k * c->cnt + t];
        if (p < 0 || n < 0) return INFINITY;
        if (c->inv[k] > 0)
            sum += (c->obj[(size_t)c->members[n] * c->m + k] - c->obj[(size_t)c->members[p] * c->m + k]) *
                   c->inv[k];
    }
    return sum;
}

static int heap_less(const nsga_sortws *w, int a, int b)
{
    return w->hkey[a] < w->hkey[b] || (w->hkey[a] == w->hkey[b] && w->hidx[a] < w->hidx[b]);
}

static void heap_swap(nsga_sortws *w, int a, int b)
{
    double k = w->hkey[a];
    w->hkey[a] = w->hkey[b], w->hkey[b] = k;
    int i = w->hidx[a];
    w->hidx[a] = w->hidx[b], w->hidx[b] = i;
    i = w->hver[a];
    w->hver[a] = w->hver[b], w->hver[b] = i;
}

static void heap_push(trunc_ctx *c, double key, int t, int ver)
{
    nsga_sortws *w = c->w;
    int i = c->hn++;
    w->hkey[i] = key, w->hidx[i] = t, w->hver[i] = ver;
    while (i > 0 && heap_less(w, i, (i - 1) / 2)) {
        heap_swap(w, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_pop(trunc_ctx *c)
{
    nsga_sortws *w = c->w;
    heap_swap(w, 0, --c->hn);
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, s = i;
        if (l < c->hn && heap_less(w, l, s)) s = l;
        if (r < c->hn && heap_less(w, r, s)) s = r;
        if (s == i) break;
        heap_swap(w, i, s);
        i = s;
    }
}

void nsga_truncate_crowding(nsga_sortws *w, int cnt, int *members, int keep, int m,
                            const double *obj)
{
    if (keep >= cnt) return;
    trunc_ctx c = {w, cnt, m, members, obj, {0}, 0};
    int *prv = w->links, *nxt = w->links + (size_t)m * cnt;
    for (int k = 0; k < m; k++) {
        for (int t = 0; t < cnt; t++) {
            w->key[t] = obj[(size_t)members[t] * m + k];
            w->idx[t] = t;
        }
        nsga_msort_by(w->idx, w->tmp, cnt, w->key, 1);
        double lo = w->key[w->idx[0]], hi = w->key[w->idx[cnt - 1]];
        c.inv[k] = hi > lo ? 1.0 / (hi - lo) : 0.0;
        for (int r = 0; r < cnt; r++) {
            int t = w->idx[r];
            prv[(size_t)k * cnt + t] = r > 0 ? w->idx[r - 1] : -1;
            nxt[(size_t)k * cnt + t] = r < cnt - 1 ? w->idx[r + 1] : -1;
        }
    }
    for (int t = 0; t < cnt; t++) {
        w->ver[t] = 0;
        w->cd[t] = local_cd(&c, t);
        heap_push(&c, w->cd[t], t, 0);
    }
    for (int removed = 0; removed < cnt - keep;) {
        int t = w->hidx[0], v = w->hver[0];
        heap_pop(&c);
        if (w->ver[t] != v) continue; /* stale entry or dead point */
        w->ver[t] = -1;
        removed++;
        for (int k = 0; k < m; k++) {
            int p = prv[(size_t)k * cnt + t], n = nxt[(size_t)k * cnt + t];
            if (p >= 0) nxt[(size_t)k * cnt + p] = n;
            if (n >= 0) prv[(size_t)k * cnt + n] = p;
        }
        for (int k = 0; k < m; k++)
            for (int side = 0; side < 2; side++) {
                int q = (side ? nxt : prv)[(size_t)k * cnt + t];
                if (q < 0 || w->ver[q] < 0) continue;
                double d = local_cd(&c, q);
                if (d != w->cd[q]) {
                    w->cd[q] = d;
                    heap_push(&c, d, q, ++w->ver[q]);
                }
            }
    }
    int j = 0;
    for (int t = 0; t < cnt; t++)
        if (w->ver[t] >= 0) members[j++] = members[t];
}

/* ---- public, allocating versions --------------------------------------------- */

static int check_points(int n, int m, const double *obj, const double *cv)
{
    if (n < 0 || m < 1 || (n > 0 && !obj)) return NSGA_EINVAL;
    for (size_t i = 0; i < (size_t)n * m; i++)
        if (isnan(obj[i])) return NSGA_EINVAL;
    if (cv)
        for (int i = 0; i < n; i++)
            if (!(cv[i] >= 0)) return NSGA_EINVAL;
    return 0;
}

int nsga_sort_deb(int n, int m, const double *obj, const double *cv, int *rank)
{
    nsga_sortws w;
    if (check_points(n, m, obj, cv) || (n > 0 && !rank)) return NSGA_EINVAL;
    if (nsga_sortws_init(&w, n, m)) return NSGA_ENOMEM;
    int nf = nsga_sort_deb_ws(&w, n, m, obj, cv, rank);
    nsga_sortws_free(&w);
    return nf;
}

int nsga_sort_fast(int n, int m, const double *obj, const double *cv, int *rank)
{
    nsga_sortws w;
    if (check_points(n, m, obj, cv) || (n > 0 && !rank)) return NSGA_EINVAL;
    if (nsga_sortws_init(&w, n, m)) return NSGA_ENOMEM;
    int nf = nsga_sort_fast_ws(&w, n, m, obj, cv, rank);
    nsga_sortws_free(&w);
    return nf;
}

int nsga_crowding_distance(int n, int m, const double *obj, const int *rank, double *crowd)
{
    nsga_sortws w;
    if (check_points(n, m, obj, NULL) || (n > 0 && (!rank || !crowd))) return NSGA_EINVAL;
    int nf = 0;
    for (int i = 0; i < n; i++) {
        if (rank[i] < 0 || rank[i] >= n) return NSGA_EINVAL;
        if (rank[i] + 1 > nf) nf = rank[i] + 1;
    }
    if (nsga_sortws_init(&w, n, m)) return NSGA_ENOMEM;
    nsga_crowding_all(&w, n, m, obj, rank, nf, crowd);
    nsga_sortws_free(&w);
    return 0;
}
