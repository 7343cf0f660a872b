/* cluster.c -- Ramiel (seed 002, section III): recursive critical-path
 * linear clustering (its algorithm 1, after Kim et al.), its cluster
 * merging (algorithms 2 and 3), then, since that merging does not aim at a
 * number of clusters, merging down to the number of devices, and one
 * cluster per device, the heaviest on the fastest (docs/solvers.md,
 * "cluster").
 *
 * Weights come from the calibrated model: a layer weighs its compute time
 * on the fastest device that supports it, an edge the time of moving its
 * tensor between the two fastest devices.  The algorithms themselves work
 * on any solve_dag, so the tests can replay a hand-worked example.
 *
 * Invariant: every node ends in exactly one cluster; labels are 0..k-1
 * without gaps after every function that returns a count.
 */
#include "solve_impl.h"
#include "base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Successors in CSR form, with the index of each edge in g->pred / g->ew. */
typedef struct {
    int *first, *succ, *edge;
} succs;

static void succs_free(succs *s) { free(s->first), free(s->succ), free(s->edge); }

static int succs_build(const solve_dag *g, succs *s)
{
    int ne = g->first[g->n];
    s->first = calloc((size_t)g->n + 2, sizeof *s->first);
    s->succ = malloc((size_t)(ne + 1) * sizeof *s->succ);
    s->edge = malloc((size_t)(ne + 1) * sizeof *s->edge);
    if (!s->first || !s->succ || !s->edge) {
        succs_free(s);
        return -1;
    }
    for (int e = 0; e < ne; e++) s->first[g->pred[e] + 2]++;
    for (int i = 0; i < g->n; i++) s->first[i + 2] += s->first[i + 1];
    for (int i = 0; i < g->n; i++) /* successors in increasing order: i ascending */
        for (int e = g->first[i]; e < g->first[i + 1]; e++) {
            int at = s->first[g->pred[e] + 1]++;
            s->succ[at] = i, s->edge[at] = e;
        }
    return 0; /* successors of i: [first[i], first[i+1]) */
}

static inline double wt(const double *v, int i) { return v ? v[i] : 0; }

int solve_distance_to_end(const solve_dag *g, double *dte)
{
    /* Reverse topological order, each node pushing its distance to its
     * predecessors: best[i] is the longest way on from i's successors. */
    double *best = calloc((size_t)g->n + 1, sizeof *best);
    if (!best) return -1;
    for (int i = g->n - 1; i >= 0; i--) {
        dte[i] = wt(g->w, i) + best[i];
        for (int e = g->first[i]; e < g->first[i + 1]; e++) {
            double x = wt(g->ew, e) + dte[i];
            if (x > best[g->pred[e]]) best[g->pred[e]] = x;
        }
    }
    free(best);
    return 0;
}

int solve_lc(const solve_dag *g, int *cluster)
{
    int n = g->n, k = 0;
    double *dte = malloc((size_t)(n + 1) * sizeof *dte);
    int *left = malloc((size_t)(n + 1) * sizeof *left); /* unclustered predecessors */
    succs s = {0};
    if (!dte || !left || succs_build(g, &s) || solve_distance_to_end(g, dte)) {
        free(dte), free(left), succs_free(&s);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        cluster[i] = -1;
        left[i] = g->first[i + 1] - g->first[i];
    }
    int done = 0;
    while (done < n) {
        /* A new critical path: the ready node (no unclustered predecessor)
         * farthest from the end (ties: lowest index) ... */
        int c = -1;
        for (int i = 0; i < n; i++)
            if (cluster[i] < 0 && left[i] == 0 && (c < 0 || dte[i] > dte[c])) c = i;
        /* ... extended through the unclustered successor farthest from the end. */
        while (c >= 0) {
            cluster[c] = k, done++;
            int next = -1;
            for (int e = s.first[c]; e < s.first[c + 1]; e++) {
                int v = s.succ[e];
                left[v]--;
                if (cluster[v] < 0 && (next < 0 || dte[v] > dte[next])) next = v;
            }
            c = next;
        }
        k++;
    }
    free(dte), free(left), succs_free(&s);
    return k;
}

int solve_lc_merge(const solve_dag *g, int k, int *cluster)
{
    int n = g->n;
    double *dte = malloc((size_t)(n + 1) * sizeof *dte);
    double *ss = malloc((size_t)(k + 1) * sizeof *ss), *es = malloc((size_t)(k + 1) * sizeof *es);
    int *to = malloc((size_t)(k + 1) * sizeof *to), *skip = malloc((size_t)(k + 1) * sizeof *skip);
    if (!dte || !ss || !es || !to || !skip || solve_distance_to_end(g, dte)) {
        free(dte), free(ss), free(es), free(to), free(skip);
        return -1;
    }
    for (int merged = 1; merged;) {
        /* Spans: distance_to_end of the entry (the largest) and of the exit
         * (the smallest) of each cluster. */
        for (int c = 0; c < k; c++) ss[c] = -INFINITY, es[c] = INFINITY;
        for (int i = 0; i < n; i++) {
            int c = cluster[i];
            if (dte[i] > ss[c]) ss[c] = dte[i];
            if (dte[i] < es[c]) es[c] = dte[i];
        }
        /* Algorithm 2: each cluster, in order, merges with the first
         * cluster not yet used whose span does not overlap its own. */
        merged = 0;
        int m = 0;
        for (int c = 0; c < k; c++) skip[c] = 0;
        for (int c1 = 0; c1 < k; c1++) {
            if (skip[c1]) continue;
            skip[c1] = 1;
            to[c1] = m;
            for (int c2 = 0; c2 < k; c2++)
                if (!skip[c2] && (ss[c1] < es[c2] || ss[c2] < es[c1])) {
                    skip[c2] = 1, to[c2] = m, merged = 1;
                    break;
                }
            m++;
        }
        for (int i = 0; i < n; i++) cluster[i] = to[cluster[i]];
        k = m; /* algorithm 3: again until nothing merges */
    }
    free(dte), free(ss), free(es), free(to), free(skip);
    return k;
}

/* Schedule length with labels lab (k clusters), scratch fin (n), fr (k). */
static double length(const solve_dag *g, const int *lab, int k, double *fin, double *fr)
{
    double len = 0;
    for (int c = 0; c < k; c++) fr[c] = 0;
    for (int i = 0; i < g->n; i++) {
        double st = fr[lab[i]];
        for (int e = g->first[i]; e < g->first[i + 1]; e++) {
            int p = g->pred[e];
            double a = fin[p] + (lab[p] != lab[i] ? wt(g->ew, e) : 0);
            if (a > st) st = a;
        }
        fin[i] = st + wt(g->w, i);
        fr[lab[i]] = fin[i];
        if (fin[i] > len) len = fin[i];
    }
    return len;
}

static int nlabels(const solve_dag *g, const int *cluster)
{
    int k = 0;
    for (int i = 0; i < g->n; i++)
        if (cluster[i] + 1 > k) k = cluster[i] + 1;
    return k;
}

double solve_cluster_length(const solve_dag *g, const int *cluster)
{
    int k = nlabels(g, cluster);
    double *fin = malloc((size_t)(g->n + 1) * sizeof *fin), *fr = malloc((size_t)(k + 1) * sizeof *fr);
    double len = fin && fr ? length(g, cluster, k, fin, fr) : NAN;
    free(fin), free(fr);
    return len;
}

int solve_merge_to(const solve_dag *g, int k, int target, int *cluster)
{
    int n = g->n;
    double *fin = malloc((size_t)(n + 1) * sizeof *fin), *fr = malloc((size_t)(k + 1) * sizeof *fr);
    int *lab = malloc((size_t)(n + 1) * sizeof *lab);
    if (!fin || !fr || !lab) {
        free(fin), free(fr), free(lab);
        return -1;
    }
    if (target < 1) target = 1;
    while (k > target) {
        int ba = 0, bb = 1;
        double best = INFINITY;
        for (int a = 0; a < k; a++)
            for (int b = a + 1; b < k; b++) {
                for (int i = 0; i < n; i++) lab[i] = cluster[i] == b ? a : cluster[i];
                double x = length(g, lab, k, fin, fr);
                if (x < best) best = x, ba = a, bb = b;
            }
        for (int i = 0; i < n; i++) {
            if (cluster[i] == bb) cluster[i] = ba;
            else if (cluster[i] > bb) cluster[i]--;
        }
        k--;
    }
    free(fin), free(fr), free(lab);
    return k;
}

/* ---- the method ---- */

/* One device per cluster, heaviest cluster first, each to the fastest
 * device (by c->rank) that supports all its layers and is still free, or
 * the fastest supporting one when none is free.  Fills out; returns the
 * devices used, or -1 (err) when no device supports a cluster. */
static int assign(const solve_ctx *c, const int *cl, int k, const double *w, mapping *out, char *err)
{
    const solve_problem *p = c->p;
    const net *n = p->n;
    int L = c->L, D = c->D, used = 0, rc = -1;
    double *weight = calloc((size_t)k, sizeof *weight);
    int *order = malloc((size_t)k * sizeof *order), *dev = malloc((size_t)k * sizeof *dev);
    int *taken = calloc((size_t)D, sizeof *taken);
    if (!weight || !order || !dev || !taken) {
        base_seterr(err, "out of memory");
        goto done;
    }
    for (int l = 0; l < L; l++) weight[cl[l]] += w[l];
    for (int a = 0; a < k; a++) { /* stable: ties keep the label order */
        int b = a - 1;
        while (b >= 0 && weight[order[b]] < weight[a]) order[b + 1] = order[b], b--;
        order[b + 1] = a;
    }
    for (int a = 0; a < k; a++) {
        int cc = order[a], pick = -1, shared = -1;
        for (int t = 0; t < D && pick < 0; t++) {
            int d = c->rank[t], ok = 1;
            for (int l = 0; l < L && ok; l++) ok = cl[l] != cc || platform_supports(p->pl, d, n->layers[l].kind);
            if (!ok) continue;
            if (shared < 0) shared = d;
            if (!taken[d]) pick = d;
        }
        if (pick < 0) pick = shared;
        if (pick < 0) {
            base_seterr(err, "cluster: no device of %s supports every layer of a cluster",
                     p->pl->name);
            goto done;
        }
        used += !taken[pick];
        taken[pick] = 1;
        dev[cc] = pick;
    }
    for (int l = 0; l < L; l++) {
        out->first[l] = l;
        out->slices[l] = (map_slice){dev[cl[l]], 0, n->layers[l].out.c};
    }
    out->first[L] = L;
    rc = used;
done:
    free(weight), free(order), free(dev), free(taken);
    return rc;
}

int solve_cluster(const solve_problem *p, mapping *out, solve_result *r, char *err)
{
    solve_ctx c;
    if (sctx_init(&c, p, err)) return -1;
    const net *n = p->n;
    int L = c.L, D = c.D, rc = -1;
    solve_dag g;
    double *w = malloc((size_t)L * sizeof *w), *ew = NULL;
    int *cl = malloc((size_t)L * sizeof *cl), *best_cl = malloc((size_t)L * sizeof *best_cl);
    mapping *m = mapping_new(L, D);
    if (!w || !cl || !best_cl || !m || sdag_of_net(n, &g)) {
        free(w), free(cl), free(best_cl), mapping_free(m);
        sctx_free(&c);
        base_seterr(err, "out of memory");
        return -1;
    }
    ew = malloc((size_t)(g.first[L] + 1) * sizeof *ew);
    if (!ew) goto oom;
    /* Weights: compute on the fastest device supporting the layer; moving
     * a tensor between the two fastest devices. */
    for (int l = 0; l < L; l++) w[l] = cost_compute_s(p->cost, l, sctx_allowed(&c, l)[0], 0, n->layers[l].out.c);
    for (int l = 0; l < L; l++)
        for (int e = g.first[l]; e < g.first[l + 1]; e++) {
            int q = g.pred[e];
            ew[e] = D > 1 ? cost_message_s(p->cost, c.rank[0], c.rank[1], solve_bytes(n, q, n->layers[q].out.c)) : 0;
        }
    g.w = w, g.ew = ew;
    int k_lc = solve_lc(&g, cl);
    int k_merged = k_lc < 0 ? -1 : solve_lc_merge(&g, k_lc, cl);
    int k = k_merged < 0 ? -1 : solve_merge_to(&g, k_merged, D, cl);
    if (k < 0) goto oom;
    /* Ramiel's clusters assume equal cores and cheap messages: merge on,
     * one pair at a time down to one cluster, and keep the clustering whose
     * mapping the model (schedule simulation) finds fastest. */
    double best_ms = INFINITY;
    int best_k = k, best_used = 0, k_devices = k;
    for (;;) {
        cost_result cr;
        int used = assign(&c, cl, k, w, m, err);
        if (used < 0 || solve_eval(p, m, &cr, err)) goto done;
        if (cr.latency_ms < best_ms) {
            best_ms = cr.latency_ms, best_k = k, best_used = used;
            memcpy(best_cl, cl, (size_t)L * sizeof *cl);
            mapping_copy(out, m);
        }
        if (k == 1) break;
        if ((k = solve_merge_to(&g, k, k - 1, cl)) < 0) goto oom;
    }
    r->estimate_ms = solve_cluster_length(&g, best_cl) * 1e3;
    snprintf(r->detail, sizeof r->detail,
             "%d linear clusters, %d after Ramiel's merging, %d after merging down to %d devices; "
             "kept %d (simulated fastest), on %d devices; their schedule on the reference weights "
             "%.6g ms",
             k_lc, k_merged, k_devices, D, best_k, best_used, r->estimate_ms);
    solve_stat(r, "clusters_lc", k_lc);
    solve_stat(r, "clusters_merged", k_merged);
    solve_stat(r, "clusters_devices", k_devices);
    solve_stat(r, "clusters", best_k);
    solve_stat(r, "devices_used", best_used);
    rc = 0;
    goto done;
oom:
    base_seterr(err, "out of memory");
done:
    free(w), free(ew), free(cl), free(best_cl);
    mapping_free(m);
    sdag_free(&g);
    sctx_free(&c);
    return rc;
}
