/* subgraph.c -- seed 004 (Zhang, Lan, Zhi: subgraph extraction for DL
 * accelerators): the layers an accelerator supports, grouped into maximal
 * connected convex subgraphs (no path between two of its vertices leaves
 * it, so one launch cannot deadlock), post-pruned into pieces with one
 * input operator and one output operator each, and each piece offloaded
 * when the model says the network finishes sooner (docs/solvers.md,
 * "subgraph").
 *
 * Convexity is checked with reachability bitsets: a node set X is convex
 * iff no node outside X is both reachable from X and reaching X.
 *
 * Invariant: every subgraph and every piece handed out is convex and
 * weakly connected; pieces partition their subgraph.
 */
#include "solve_impl.h"
#include "base.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t word;
#define WB 64

/* Reachability: desc[i] and anc[i] as bitsets of nw words (i excluded). */
typedef struct {
    int n, nw;
    word *desc, *anc;
    int *sfirst, *succ; /* successors, CSR */
} reach;

static void reach_free(reach *r) { free(r->desc), free(r->anc), free(r->sfirst), free(r->succ); }

static inline void bset(word *b, int i) { b[i / WB] |= (word)1 << (i % WB); }
static inline int bget(const word *b, int i) { return (int)(b[i / WB] >> (i % WB) & 1); }

static int reach_build(const solve_dag *g, reach *r)
{
    int n = g->n, nw = (n + WB - 1) / WB, ne = g->first[n];
    memset(r, 0, sizeof *r);
    r->n = n, r->nw = nw;
    r->desc = calloc((size_t)n * nw + 1, sizeof *r->desc);
    r->anc = calloc((size_t)n * nw + 1, sizeof *r->anc);
    r->sfirst = calloc((size_t)n + 2, sizeof *r->sfirst);
    r->succ = malloc((size_t)(ne + 1) * sizeof *r->succ);
    if (!r->desc || !r->anc || !r->sfirst || !r->succ) {
        reach_free(r);
        return -1;
    }
    for (int e = 0; e < ne; e++) r->sfirst[g->pred[e] + 2]++;
    for (int i = 0; i < n; i++) r->sfirst[i + 2] += r->sfirst[i + 1];
    for (int i = 0; i < n; i++)
        for (int e = g->first[i]; e < g->first[i + 1]; e++) r->succ[r->sfirst[g->pred[e] + 1]++] = i;
    for (int i = 0; i < n; i++) /* ancestors: predecessors come first */
        for (int e = g->first[i]; e < g->first[i + 1]; e++) {
            int p = g->pred[e];
            word *a = r->anc + (size_t)i * nw;
            const word *ap = r->anc + (size_t)p * nw;
            for (int w = 0; w < nw; w++) a[w] |= ap[w];
            bset(a, p);
        }
    for (int i = n - 1; i >= 0; i--) /* descendants: successors come later */
        for (int e = r->sfirst[i]; e < r->sfirst[i + 1]; e++) {
            int s = r->succ[e];
            word *d = r->desc + (size_t)i * nw;
            const word *ds = r->desc + (size_t)s * nw;
            for (int w = 0; w < nw; w++) d[w] |= ds[w];
            bset(d, s);
        }
    return 0;
}

/* A growing node set: members, and the union of their descendants and
 * ancestors. */
typedef struct {
    word *in, *desc, *anc, *tmp_d, *tmp_a;
} gset;

static int gset_new(gset *s, int nw)
{
    s->in = calloc((size_t)nw + 1, sizeof(word));
    s->desc = calloc((size_t)nw + 1, sizeof(word));
    s->anc = calloc((size_t)nw + 1, sizeof(word));
    s->tmp_d = calloc((size_t)nw + 1, sizeof(word));
    s->tmp_a = calloc((size_t)nw + 1, sizeof(word));
    return s->in && s->desc && s->anc && s->tmp_d && s->tmp_a ? 0 : -1;
}

static void gset_free(gset *s) { free(s->in), free(s->desc), free(s->anc), free(s->tmp_d), free(s->tmp_a); }

static void gset_clear(gset *s, int nw)
{
    memset(s->in, 0, (size_t)nw * sizeof(word));
    memset(s->desc, 0, (size_t)nw * sizeof(word));
    memset(s->anc, 0, (size_t)nw * sizeof(word));
}

/* Would s + {v} be convex?  (Leaves the candidate unions in tmp_*.) */
static int convex_with(const reach *r, gset *s, int v)
{
    const word *dv = r->desc + (size_t)v * r->nw, *av = r->anc + (size_t)v * r->nw;
    int ok = 1;
    for (int w = 0; w < r->nw; w++) {
        s->tmp_d[w] = s->desc[w] | dv[w];
        s->tmp_a[w] = s->anc[w] | av[w];
        word inside = s->in[w] | (v / WB == w ? (word)1 << (v % WB) : 0);
        if (s->tmp_d[w] & s->tmp_a[w] & ~inside) ok = 0;
    }
    return ok;
}

static void gset_add(const reach *r, gset *s, int v)
{
    bset(s->in, v);
    memcpy(s->desc, s->tmp_d, (size_t)r->nw * sizeof(word));
    memcpy(s->anc, s->tmp_a, (size_t)r->nw * sizeof(word));
}

static void gset_add_alone(const reach *r, gset *s, int v)
{
    convex_with(r, s, v); /* fills tmp_* */
    gset_add(r, s, v);
}

/* Is v adjacent to a member of s (a predecessor or successor of it)? */
static int adjacent(const solve_dag *g, const reach *r, const gset *s, int v)
{
    for (int e = g->first[v]; e < g->first[v + 1]; e++)
        if (bget(s->in, g->pred[e])) return 1;
    for (int e = r->sfirst[v]; e < r->sfirst[v + 1]; e++)
        if (bget(s->in, r->succ[e])) return 1;
    return 0;
}

int solve_convex_subgraphs(const solve_dag *g, const unsigned char *ok, int *label)
{
    reach r;
    gset s;
    if (reach_build(g, &r)) return -1;
    if (gset_new(&s, r.nw)) {
        gset_free(&s), reach_free(&r);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < g->n; i++) label[i] = -1;
    for (int u = 0; u < g->n; u++) {
        if (!ok[u] || label[u] >= 0) continue;
        gset_clear(&s, r.nw);
        gset_add_alone(&r, &s, u);
        label[u] = k;
        /* Grow by any adjacent supported node that keeps it convex, until
         * none does (a node refused now may fit once others joined). */
        for (int grown = 1; grown;) {
            grown = 0;
            for (int v = 0; v < g->n; v++)
                if (ok[v] && label[v] < 0 && adjacent(g, &r, &s, v) && convex_with(&r, &s, v)) {
                    gset_add(&r, &s, v);
                    label[v] = k;
                    grown = 1;
                }
        }
        k++;
    }
    gset_free(&s), reach_free(&r);
    return k;
}

/* Input and output operators of the node set members[0..nm) (in[] marks
 * them): members with a predecessor, resp. a successor, outside the set,
 * or with none at all (the network's input and output). */
static void count_io(const solve_dag *g, const reach *r, const unsigned char *in, const int *members, int nm,
                     int *nin, int *nout)
{
    *nin = *nout = 0;
    for (int a = 0; a < nm; a++) {
        int x = members[a], i = g->first[x] == g->first[x + 1], o = r->sfirst[x] == r->sfirst[x + 1];
        for (int e = g->first[x]; e < g->first[x + 1] && !i; e++) i = !in[g->pred[e]];
        for (int e = r->sfirst[x]; e < r->sfirst[x + 1] && !o; e++) o = !in[r->succ[e]];
        *nin += i, *nout += o;
    }
}

/* Pieces: from the first node of a subgraph not yet in a piece, grow by
 * adjacent nodes of the same subgraph (in index order, again until none
 * fits) while the set stays convex and has one input operator; then cut
 * back to the longest prefix of the additions with one output operator
 * (every prefix is convex, connected and has one input operator: it was a
 * state of the growth).  The nodes cut go to later pieces. */
int solve_prune(const solve_dag *g, const int *label, int *piece)
{
    reach r;
    gset s;
    int *members = malloc((size_t)(g->n + 1) * sizeof *members);
    unsigned char *in = calloc((size_t)g->n + 1, 1);
    if (!members || !in || reach_build(g, &r)) {
        free(members), free(in);
        return -1;
    }
    if (gset_new(&s, r.nw)) {
        gset_free(&s), reach_free(&r), free(members), free(in);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < g->n; i++) piece[i] = -1;
    for (int u = 0; u < g->n; u++) {
        if (label[u] < 0 || piece[u] >= 0) continue;
        gset_clear(&s, r.nw);
        gset_add_alone(&r, &s, u);
        int nm = 0, nin, nout;
        members[nm++] = u;
        in[u] = 1;
        for (int grown = 1; grown;) {
            grown = 0;
            for (int v = 0; v < g->n; v++) {
                if (label[v] != label[u] || piece[v] >= 0 || in[v] || !adjacent(g, &r, &s, v)) continue;
                members[nm] = v, in[v] = 1;
                count_io(g, &r, in, members, nm + 1, &nin, &nout);
                if (nin <= 1 && convex_with(&r, &s, v)) {
                    gset_add(&r, &s, v);
                    nm++;
                    grown = 1;
                } else {
                    in[v] = 0;
                }
            }
        }
        for (;;) { /* the longest prefix with one output operator */
            count_io(g, &r, in, members, nm, &nin, &nout);
            if (nout <= 1 || nm == 1) break;
            in[members[--nm]] = 0;
        }
        for (int a = 0; a < nm; a++) piece[members[a]] = k, in[members[a]] = 0;
        k++;
    }
    gset_free(&s), reach_free(&r), free(members), free(in);
    return k;
}

/* ---- the method ---- */

int solve_subgraph(const solve_problem *p, mapping *out, solve_result *r, char *err)
{
    const net *n = p->n;
    const platform *pl = p->pl;
    int L = n->n, D = pl->ndev, rc = -1;
    solve_ctx c;
    if (!platform_restricted(pl)) {
        base_seterr(err, "subgraph: no device of platform %s lists \"supports\" (an "
                 "accelerator running some layer kinds only; docs/platform-format.md)", pl->name);
        return -1;
    }
    if (sctx_init(&c, p, err)) return -1;
    solve_dag g;
    int *label = malloc((size_t)L * sizeof *label), *piece = malloc((size_t)L * sizeof *piece);
    unsigned char *ok = malloc((size_t)L);
    mapping *m = mapping_new(L, D);
    if (!label || !piece || !ok || !m || sdag_of_net(n, &g)) {
        free(label), free(piece), free(ok), mapping_free(m), sctx_free(&c);
        base_seterr(err, "out of memory");
        return -1;
    }
    /* The host: the device running every layer alone fastest (simulated). */
    int host = -1;
    double host_ms = INFINITY;
    for (int d = 0; d < D; d++) {
        if (pl->dev[d].restricted) continue;
        cost_result cr;
        mapping_set_single(m, n, d);
        if (solve_eval(p, m, &cr, err)) goto done;
        if (cr.latency_ms < host_ms) host_ms = cr.latency_ms, host = d;
    }
    if (host < 0) {
        base_seterr(err, "subgraph: every device of %s is restricted: no host runs the "
                 "layers the accelerator cannot", pl->name);
        goto done;
    }
    /* Each accelerator in turn, keeping the one that ends fastest. */
    double best_ms = INFINITY;
    int best_acc = -1, best_sub = 0, best_pieces = 0, best_off = 0, best_layers = 0;
    mapping_set_single(out, n, host);
    for (int t = 0; t < D; t++) {
        int a = c.rank[t];
        if (!pl->dev[a].restricted) continue;
        for (int l = 0; l < L; l++) ok[l] = (unsigned char)platform_supports(pl, a, n->layers[l].kind);
        int nsub = solve_convex_subgraphs(&g, ok, label);
        int npc = nsub < 0 ? -1 : solve_prune(&g, label, piece);
        if (npc < 0) {
            base_seterr(err, "out of memory");
            goto done;
        }
        cost_result cr;
        mapping_set_single(m, n, host);
        if (solve_eval(p, m, &cr, err)) goto done;
        double cur = cr.latency_ms;
        int off = 0, nlay = 0;
        for (int q = 0; q < npc; q++) { /* pieces in topological order of their first node */
            for (int l = 0; l < L; l++)
                if (piece[l] == q) m->slices[m->first[l]].dev = a;
            if (solve_eval(p, m, &cr, err)) goto done;
            if (cr.latency_ms < cur) {
                cur = cr.latency_ms, off++;
                for (int l = 0; l < L; l++) nlay += piece[l] == q;
            } else {
                for (int l = 0; l < L; l++)
                    if (piece[l] == q) m->slices[m->first[l]].dev = host;
            }
        }
        if (cur < best_ms) {
            best_ms = cur, best_acc = a, best_sub = nsub, best_pieces = npc, best_off = off, best_layers = nlay;
            mapping_copy(out, m);
        }
    }
    r->estimate_ms = best_ms;
    snprintf(r->detail, sizeof r->detail,
             "host %s, accelerator %s: %d convex subgraphs of supported layers, %d pieces after "
             "post-pruning, %d offloaded (%d layers)",
             pl->dev[host].name, pl->dev[best_acc].name, best_sub, best_pieces, best_off, best_layers);
    solve_stat(r, "host", host);
    solve_stat(r, "accelerator", best_acc);
    solve_stat(r, "subgraphs", best_sub);
    solve_stat(r, "pieces", best_pieces);
    solve_stat(r, "offloaded", best_off);
    solve_stat(r, "layers_offloaded", best_layers);
    rc = 0;
done:
    free(label), free(piece), free(ok);
    mapping_free(m);
    sdag_free(&g);
    sctx_free(&c);
    return rc;
}
