/* hv.c -- exact hypervolume (minimisation, bounded by a reference point).
 *
 *  m = 2: sort by f1, sweep the staircase: O(n log n).
 *  m = 3: Beume, Fonseca, Lopez-Ibanez, Paquete, Vahrenhold 2009: sweep the
 *         points by increasing f3 while keeping the 2-D staircase of the
 *         points seen so far (f1 increasing, f2 strictly decreasing) in a
 *         treap; each insertion updates the staircase's area by the strip
 *         it adds, and the volume grows by area * (gap in f3).  Every
 *         point is inserted and removed at most once: O(n log n) expected.
 *  m >= 4: slice along the last objective down to the 3-D case.
 * Points that are not strictly better than the reference in every
 * objective bound no volume and are dropped first.
 *
 * Invariant of the staircase: two sentinels (-inf, ref2) and (ref1, -inf)
 * frame it, so every point has a predecessor and a successor, and the
 * staircase never holds a point weakly dominated by another.
 */
#include "nsga.h"
#include "nsga_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hv_node {
    double x, y;
    uint32_t pri;
    int l, r;
};

int nsga_hvws_init(nsga_hvws *w, int cap)
{
    memset(w, 0, sizeof *w);
    size_t n = (size_t)(cap > 0 ? cap : 1);
    w->cap = cap;
    w->idx = malloc(n * sizeof(int));
    w->tmp = malloc(n * sizeof(int));
    w->key = malloc(n * sizeof(double));
    w->pts = malloc(n * NSGA_MAX_OBJ * sizeof(double));
    w->nodes = malloc((n + 2) * sizeof(struct hv_node));
    w->stack = malloc((n + 2) * sizeof(int));
    if (!w->idx || !w->tmp || !w->key || !w->pts || !w->nodes || !w->stack) {
        nsga_hvws_free(w);
        return NSGA_ENOMEM;
    }
    return 0;
}

void nsga_hvws_free(nsga_hvws *w)
{
    free(w->idx);
    free(w->tmp);
    free(w->key);
    free(w->pts);
    free(w->nodes);
    free(w->stack);
    memset(w, 0, sizeof *w);
}

/* ---- 2-D -------------------------------------------------------------------- */

static double hv2(nsga_hvws *w, int n, const double *p, const double *ref)
{
    for (int i = 0; i < n; i++) w->idx[i] = i;
    nsga_msort_by(w->idx, w->tmp, n, p, 2);
    double vol = 0, besty = ref[1];
    for (int k = 0; k < n; k++) {
        const double *q = p + (size_t)w->idx[k] * 2;
        if (q[1] < besty) {
            vol += (ref[0] - q[0]) * (besty - q[1]);
            besty = q[1];
        }
    }
    return vol;
}

/* ---- 3-D: treap keyed by x ---------------------------------------------------- */

typedef struct hv_node node;

/* a: keys < x (or <= x when le), b: the rest. */
static void split_x(node *N, int t, double x, int le, int *a, int *b)
{
    if (t < 0) {
        *a = *b = -1;
    } else if (N[t].x < x || (le && N[t].x == x)) {
        split_x(N, N[t].r, x, le, &N[t].r, b);
        *a = t;
    } else {
        split_x(N, N[t].l, x, le, a, &N[t].l);
        *b = t;
    }
}

/* In a staircase y decreases with x, so y >= py is a prefix: a gets it. */
static void split_y(node *N, int t, double py, int *a, int *b)
{
    if (t < 0) {
        *a = *b = -1;
    } else if (N[t].y >= py) {
        split_y(N, N[t].r, py, &N[t].r, b);
        *a = t;
    } else {
        split_y(N, N[t].l, py, a, &N[t].l);
        *b = t;
    }
}

static int merge(node *N, int a, int b)
{
    if (a < 0) return b;
    if (b < 0) return a;
    if (N[a].pri > N[b].pri) {
        N[a].r = merge(N, N[a].r, b);
        return a;
    }
    N[b].l = merge(N, a, N[b].l);
    return b;
}

static int leftmost(const node *N, int t)
{
    while (N[t].l >= 0) t = N[t].l;
    return t;
}

static int rightmost(const node *N, int t)
{
    while (N[t].r >= 0) t = N[t].r;
    return t;
}

/* In-order list of subtree t appended to out[*k]. */
static void collect(const node *N, int t, int *out, int *k)
{
    while (t >= 0) {
        collect(N, N[t].l, out, k);
        out[(*k)++] = t;
        t = N[t].r;
    }
}

/* Deterministic pseudo-random priorities (a 32-bit integer hash). */
static uint32_t prio(uint32_t c)
{
    c ^= c >> 16;
    c *= 0x7feb352dU;
    c ^= c >> 15;
    c *= 0x846ca68bU;
    c ^= c >> 16;
    return c;
}

static double hv3(nsga_hvws *w, int n, const double *p, const double *ref)
{
    node *N = w->nodes;
    int *freelist = w->stack, nfree = 0, used = 0;
    uint32_t counter = 1;
    for (int i = 0; i < n; i++) w->idx[i] = i;
    nsga_msort_by(w->idx, w->tmp, n, p + 2, 3);

    N[0] = (node){-INFINITY, ref[1], UINT32_MAX, -1, -1};
    N[1] = (node){ref[0], -INFINITY, prio(counter++), -1, -1};
    used = 2;
    int root = merge(N, 0, 1);
    double area = 0, vol = 0, zprev = 0;
    int *removed = w->tmp; /* idx sorted already; tmp is free again */

    for (int k = 0; k < n; k++) {
        const double *q = p + (size_t)w->idx[k] * 3;
        if (k > 0) vol += area * (q[2] - zprev);
        zprev = q[2];
        int A, B, A1, A2, B1, B2;
        split_x(N, root, q[0], 1, &A, &B);
        if (N[rightmost(N, A)].y <= q[1]) { /* weakly dominated in (x, y) */
            root = merge(N, A, B);
            continue;
        }
        split_x(N, A, q[0], 0, &A1, &A2); /* A2: the one point with x == q.x */
        split_y(N, B, q[1], &B1, &B2);    /* B1: points q dominates */
        int nrem = 0;
        collect(N, A2, removed, &nrem);
        collect(N, B1, removed, &nrem);
        double h = N[rightmost(N, A1)].y, px = q[0], added = 0;
        for (int r = 0; r < nrem; r++) {
            node *R = &N[removed[r]];
            added += (R->x - px) * (h - q[1]);
            px = R->x;
            h = R->y;
            freelist[nfree++] = removed[r];
        }
        added += (N[leftmost(N, B2)].x - px) * (h - q[1]);
        area += added;
        int t = nfree ? freelist[--nfree] : used++;
        N[t] = (node){q[0], q[1], prio(counter++), -1, -1};
        root = merge(N, merge(N, A1, t), B2);
    }
    if (n > 0) vol += area * (ref[2] - zprev);
    return vol;
}

/* ---- m >= 4: slicing ---------------------------------------------------------- */

static double hv_any(nsga_hvws *w, int n, int m, const double *p, const double *ref);

static double hv_slice(nsga_hvws *w, int n, int m, const double *p, const double *ref)
{
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    int *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    double *q = malloc((size_t)(n > 0 ? n : 1) * (m - 1) * sizeof *q);
    double vol = -1;
    if (idx && tmp && q) {
        vol = 0;
        for (int i = 0; i < n; i++) idx[i] = i;
        nsga_msort_by(idx, tmp, n, p + m - 1, m);
        for (int i = 0; i < n && vol >= 0; i++) {
            const double *pi = p + (size_t)idx[i] * m;
            memcpy(q + (size_t)i * (m - 1), pi, (size_t)(m - 1) * sizeof *q);
            double znext = i + 1 < n ? p[(size_t)idx[i + 1] * m + m - 1] : ref[m - 1];
            if (znext > pi[m - 1]) {
                double a = hv_any(w, i + 1, m - 1, q, ref);
                vol = a < 0 ? -1 : vol + a * (znext - pi[m - 1]);
            }
        }
    }
    free(idx);
    free(tmp);
    free(q);
    return vol;
}

static double hv_any(nsga_hvws *w, int n, int m, const double *p, const double *ref)
{
    if (m == 2) return hv2(w, n, p, ref);
    if (m == 3) return hv3(w, n, p, ref);
    return hv_slice(w, n, m, p, ref);
}

double nsga_hv_ws(nsga_hvws *w, int n, int m, const double *pts, const double *ref)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        const double *p = pts + (size_t)i * m;
        int j = 0;
        while (j < m && p[j] < ref[j]) j++;
        if (j == m) memcpy(w->pts + (size_t)k++ * m, p, (size_t)m * sizeof *p);
    }
    if (m == 1) {
        double best = ref[0];
        for (int i = 0; i < k; i++)
            if (w->pts[i] < best) best = w->pts[i];
        return ref[0] - best;
    }
    return hv_any(w, k, m, w->pts, ref);
}

double nsga_hv(int n, int m, const double *pts, const double *ref)
{
    if (n < 0 || m < 1 || m > NSGA_MAX_OBJ || !ref || (n > 0 && !pts)) return -1;
    for (int j = 0; j < m; j++)
        if (!isfinite(ref[j])) return -1;
    for (size_t i = 0; i < (size_t)n * m; i++)
        if (isnan(pts[i])) return -1;
    nsga_hvws w;
    if (nsga_hvws_init(&w, n)) return -1;
    double v = nsga_hv_ws(&w, n, m, pts, ref);
    nsga_hvws_free(&w);
    return v;
}
