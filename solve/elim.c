/* elim.c -- Jia et al. (seed 001, section 5): the optimal strategy of an
 * additive cost by node and edge elimination (docs/solvers.md, "elim").
 *
 * solve_eliminate works on any pairwise cost graph: node elimination
 * (a node with one in-edge and one out-edge becomes an edge whose cost
 * table is eq. 2's minimum over the node's configurations, the argmin
 * kept for the undo), edge elimination (parallel edges add up, eq. 3),
 * repeated until neither applies; then the K nodes left are enumerated
 * (the paper's final step) when their strategies are few, otherwise a beam
 * along the topological order followed by single-node improvements (our
 * bounded fallback, not optimal); the undo then fixes every eliminated
 * node from its neighbours (Theorem 1).
 *
 * solve_elim builds that graph from the network: per layer the
 * configurations "whole on one device" and "equal channel shares over the
 * k fastest devices" (k = 2..D), unary cost t_c (plus moving the input and
 * concatenating a split output), edge cost t_x, both as solve_additive_s
 * counts them, so the cost of the returned mapping is the optimum found.
 *
 * Invariant: eliminations only ever replace tables by equivalent ones
 * (Theorems 1 and 2), so whenever the reduced graph is enumerated the
 * strategy returned minimises the original graph's cost.
 */
#include "solve_impl.h"
#include "base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- elimination on a pairwise cost graph ---- */

typedef struct {
    int *v;
    int n, cap;
} ilist;

static int il_push(ilist *l, int x)
{
    if (l->n == l->cap) {
        int c = l->cap ? 2 * l->cap : 4;
        int *v = realloc(l->v, (size_t)c * sizeof *v);
        if (!v) return -1;
        l->v = v, l->cap = c;
    }
    l->v[l->n++] = x;
    return 0;
}

static void il_remove(ilist *l, int x)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == x) {
            memmove(l->v + i, l->v + i + 1, (size_t)(l->n - i - 1) * sizeof *l->v);
            l->n--;
            return;
        }
}

typedef struct {
    int a, b, alive;
    double *t; /* ncfg[a] x ncfg[b] */
    int own;   /* t allocated here (else the caller's) */
} xedge;

typedef struct {
    int j, i, k; /* node j eliminated between i and k */
    int *arg;    /* ncfg[i] x ncfg[k]: j's best configuration */
} xrec;

typedef struct {
    const solve_egraph *g;
    int n;
    unsigned char *alive;
    ilist *in, *out; /* edge ids */
    xedge *e;
    int ne, cap_e;
    xrec *rec;
    int nrec, cap_rec;
} elim_state;

static int add_edge(elim_state *s, int a, int b, double *t, int own)
{
    if (s->ne == s->cap_e) {
        int c = s->cap_e ? 2 * s->cap_e : 64;
        xedge *e = realloc(s->e, (size_t)c * sizeof *e);
        if (!e) return -1;
        s->e = e, s->cap_e = c;
    }
    int id = s->ne++;
    s->e[id] = (xedge){a, b, 1, t, own};
    if (il_push(&s->out[a], id) || il_push(&s->in[b], id)) return -1;
    return id;
}

static void kill_edge(elim_state *s, int id)
{
    xedge *e = &s->e[id];
    e->alive = 0;
    il_remove(&s->out[e->a], id);
    il_remove(&s->in[e->b], id);
    if (e->own) free(e->t);
    e->t = NULL;
}

/* Node j has one in-edge (i, j) and one out-edge (j, k): eq. 2. */
static int node_elim(elim_state *s, int j)
{
    const int *nc = s->g->ncfg;
    int e1 = s->in[j].v[0], e2 = s->out[j].v[0];
    int i = s->e[e1].a, k = s->e[e2].b, ni = nc[i], nj = nc[j], nk = nc[k];
    const double *t1 = s->e[e1].t, *t2 = s->e[e2].t, *u = s->g->unary[j];
    double *t = malloc((size_t)ni * nk * sizeof *t);
    int *arg = malloc((size_t)ni * nk * sizeof *arg);
    if (!t || !arg) {
        free(t), free(arg);
        return -1;
    }
    for (int x = 0; x < ni * nk; x++) t[x] = INFINITY, arg[x] = 0;
    for (int ci = 0; ci < ni; ci++)
        for (int cj = 0; cj < nj; cj++) {
            double base = u[cj] + t1[ci * nj + cj];
            const double *row = t2 + (size_t)cj * nk;
            double *to = t + (size_t)ci * nk;
            int *ao = arg + (size_t)ci * nk;
            for (int ck = 0; ck < nk; ck++)
                if (base + row[ck] < to[ck]) to[ck] = base + row[ck], ao[ck] = cj;
        }
    if (s->nrec == s->cap_rec) {
        int c = s->cap_rec ? 2 * s->cap_rec : 64;
        xrec *r = realloc(s->rec, (size_t)c * sizeof *r);
        if (!r) {
            free(t), free(arg);
            return -1;
        }
        s->rec = r, s->cap_rec = c;
    }
    s->rec[s->nrec++] = (xrec){j, i, k, arg};
    kill_edge(s, e1);
    kill_edge(s, e2);
    s->alive[j] = 0;
    return add_edge(s, i, k, t, 1) < 0 ? -1 : 0;
}

/* Parallel edges (a, b): eq. 3, their sum replaces them. */
static int edge_elim(elim_state *s, int x, int y)
{
    const int *nc = s->g->ncfg;
    int a = s->e[x].a, b = s->e[x].b, m = nc[a] * nc[b];
    double *t = malloc((size_t)m * sizeof *t);
    if (!t) return -1;
    for (int q = 0; q < m; q++) t[q] = s->e[x].t[q] + s->e[y].t[q];
    kill_edge(s, x);
    kill_edge(s, y);
    return add_edge(s, a, b, t, 1) < 0 ? -1 : 0;
}

/* One pass of each rule; returns how many applied (-1 no memory).  stamp
 * and firstedge find parallel edges: stamp[b] == *gen marks b as a target
 * already seen in the current scan of one node's out-edges. */
static int reduce_pass(elim_state *s, int *stamp, int *firstedge, int *gen, solve_elim_info *info)
{
    int applied = 0;
    for (int j = 0; j < s->n; j++)
        if (s->alive[j] && s->in[j].n == 1 && s->out[j].n == 1) {
            if (node_elim(s, j)) return -1;
            info->node_elims++, applied++;
        }
    for (int a = 0; a < s->n; a++) {
        if (!s->alive[a]) continue;
        ++*gen;
        for (int x = 0; x < s->out[a].n;) {
            int id = s->out[a].v[x], b = s->e[id].b;
            if (stamp[b] == *gen) {
                if (edge_elim(s, firstedge[b], id)) return -1;
                info->edge_elims++, applied++;
                ++*gen, x = 0; /* the list changed: scan it again */
                continue;
            }
            stamp[b] = *gen, firstedge[b] = id;
            x++;
        }
    }
    return applied;
}

/* Cost of node v taking configuration c, the others as in cfg. */
static double local_cost(const elim_state *s, const int *cfg, int v, int c)
{
    const int *nc = s->g->ncfg;
    double t = s->g->unary[v][c];
    for (int x = 0; x < s->in[v].n; x++) {
        const xedge *e = &s->e[s->in[v].v[x]];
        t += e->t[cfg[e->a] * nc[v] + c];
    }
    for (int x = 0; x < s->out[v].n; x++) {
        const xedge *e = &s->e[s->out[v].v[x]];
        t += e->t[c * nc[e->b] + cfg[e->b]];
    }
    return t;
}

/* Every strategy of the nodes left (mixed radix, the last node fastest). */
static void enumerate(const elim_state *s, const int *left, int K, int *cfg)
{
    const int *nc = s->g->ncfg;
    int *cur = calloc((size_t)s->n, sizeof *cur);
    if (!cur) return; /* cfg stays all 0: still a strategy */
    double best = INFINITY;
    for (;;) {
        double t = 0;
        for (int a = 0; a < K; a++) {
            int v = left[a];
            t += s->g->unary[v][cur[v]];
            for (int x = 0; x < s->in[v].n; x++) {
                const xedge *e = &s->e[s->in[v].v[x]];
                t += e->t[cur[e->a] * nc[v] + cur[v]];
            }
        }
        if (t < best) {
            best = t;
            for (int a = 0; a < K; a++) cfg[left[a]] = cur[left[a]];
        }
        int a = K - 1;
        while (a >= 0 && ++cur[left[a]] == nc[left[a]]) cur[left[a--]] = 0;
        if (a < 0) break;
    }
    free(cur);
}

typedef struct {
    double cost;
    int from, c; /* parent state and configuration: a deterministic tie order */
} cand;

static int cmp_cand(const void *x, const void *y)
{
    const cand *a = x, *b = y;
    if (a->cost != b->cost) return a->cost < b->cost ? -1 : 1;
    if (a->from != b->from) return a->from - b->from;
    return a->c - b->c;
}

/* Beam search along the topological order of the nodes left (every edge
 * into a node comes from an earlier one, so a prefix's cost is exact),
 * then single-node improvements until none helps. */
static int beam_search(const elim_state *s, const int *left, int K, int B, int *cfg)
{
    const int *nc = s->g->ncfg;
    int maxc = 1;
    for (int a = 0; a < K; a++)
        if (nc[left[a]] > maxc) maxc = nc[left[a]];
    int *st = malloc((size_t)B * K * sizeof *st), *nx = malloc((size_t)B * K * sizeof *nx);
    double *cost = malloc((size_t)B * sizeof *cost);
    cand *cd = malloc((size_t)B * maxc * sizeof *cd);
    int *full = calloc((size_t)s->n, sizeof *full);
    if (!st || !nx || !cost || !cd || !full) {
        free(st), free(nx), free(cost), free(cd), free(full);
        return -1;
    }
    int nb = 1;
    cost[0] = 0;
    for (int a = 0; a < K; a++) {
        int v = left[a], m = 0;
        for (int b = 0; b < nb; b++) {
            for (int t = 0; t < a; t++) full[left[t]] = st[b * K + t];
            for (int c = 0; c < nc[v]; c++) {
                double x = cost[b] + s->g->unary[v][c];
                for (int q = 0; q < s->in[v].n; q++) {
                    const xedge *e = &s->e[s->in[v].v[q]];
                    x += e->t[full[e->a] * nc[v] + c];
                }
                cd[m++] = (cand){x, b, c};
            }
        }
        qsort(cd, (size_t)m, sizeof *cd, cmp_cand);
        int keep = m < B ? m : B;
        for (int b = 0; b < keep; b++) {
            memcpy(nx + b * K, st + cd[b].from * K, (size_t)a * sizeof *nx);
            nx[b * K + a] = cd[b].c;
            cost[b] = cd[b].cost;
        }
        int *tmp = st;
        st = nx, nx = tmp;
        nb = keep;
    }
    for (int a = 0; a < K; a++) cfg[left[a]] = st[a]; /* state 0 is the best */
    for (int sweep = 0, moved = 1; moved && sweep < 100; sweep++) {
        moved = 0;
        for (int a = 0; a < K; a++) {
            int v = left[a], bc = cfg[v];
            double bx = local_cost(s, cfg, v, bc);
            for (int c = 0; c < nc[v]; c++) {
                double x = local_cost(s, cfg, v, c);
                if (x < bx) bx = x, bc = c;
            }
            if (bc != cfg[v]) cfg[v] = bc, moved = 1;
        }
    }
    free(st), free(nx), free(cost), free(cd), free(full);
    return 0;
}

static double graph_cost(const solve_egraph *g, const int *cfg)
{
    double t = 0;
    for (int i = 0; i < g->n; i++) t += g->unary[i][cfg[i]];
    for (int e = 0; e < g->nedge; e++) t += g->pair[e][cfg[g->ea[e]] * g->ncfg[g->eb[e]] + cfg[g->eb[e]]];
    return t;
}

int solve_eliminate(const solve_egraph *g, long long enum_limit, int beam, int *cfg,
                    solve_elim_info *info, char *err)
{
    memset(info, 0, sizeof *info);
    elim_state s = {g, g->n, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, 0};
    int rc = -1, *stamp = NULL, *firstedge = NULL, *left = NULL, gen = 0;
    for (int e = 0; e < g->nedge; e++)
        if (!(g->ea[e] >= 0 && g->ea[e] < g->eb[e] && g->eb[e] < g->n)) {
            base_seterr(err, "elimination: edge %d (%d -> %d) is not forward", e, g->ea[e], g->eb[e]);
            return -1;
        }
    s.alive = malloc((size_t)g->n + 1);
    s.in = calloc((size_t)g->n + 1, sizeof *s.in);
    s.out = calloc((size_t)g->n + 1, sizeof *s.out);
    stamp = calloc((size_t)g->n + 1, sizeof *stamp);
    firstedge = calloc((size_t)g->n + 1, sizeof *firstedge);
    left = malloc((size_t)(g->n + 1) * sizeof *left);
    if (!s.alive || !s.in || !s.out || !stamp || !firstedge || !left) goto oom;
    memset(s.alive, 1, (size_t)g->n);
    for (int e = 0; e < g->nedge; e++)
        if (add_edge(&s, g->ea[e], g->eb[e], g->pair[e], 0) < 0) goto oom;
    for (;;) {
        int k = reduce_pass(&s, stamp, firstedge, &gen, info);
        if (k < 0) goto oom;
        if (k == 0) break;
    }
    int K = 0;
    double space = 1;
    for (int v = 0; v < g->n; v++)
        if (s.alive[v]) {
            left[K++] = v;
            space *= g->ncfg[v];
            info->edges_left += s.out[v].n;
        }
    info->nodes_left = K;
    info->strategies_left = space;
    for (int v = 0; v < g->n; v++) cfg[v] = 0;
    if (space <= (double)enum_limit) {
        enumerate(&s, left, K, cfg);
        info->enumerated = 1;
    } else {
        info->beam = beam > 0 ? beam : SOLVE_BEAM;
        if (beam_search(&s, left, K, info->beam, cfg)) goto oom;
    }
    for (int r = s.nrec - 1; r >= 0; r--) { /* undo, last elimination first */
        const xrec *x = &s.rec[r];
        cfg[x->j] = x->arg[cfg[x->i] * g->ncfg[x->k] + cfg[x->k]];
    }
    info->cost = graph_cost(g, cfg);
    rc = 0;
    goto done;
oom:
    base_seterr(err, "elimination: out of memory");
done:
    for (int e = 0; e < s.ne; e++)
        if (s.e[e].own) free(s.e[e].t);
    for (int r = 0; r < s.nrec; r++) free(s.rec[r].arg);
    for (int v = 0; s.in && s.out && v < g->n; v++) free(s.in[v].v), free(s.out[v].v);
    free(s.e), free(s.rec), free(s.alive), free(s.in), free(s.out);
    free(stamp), free(firstedge), free(left);
    return rc;
}

/* ---- the network's configurations and costs ---- */

typedef struct {
    solve_ctx c;
    int *ncfg, *nsingle;
    int *slice0;      /* (L x maxc + 1): first slice of configuration t of layer l */
    map_slice *sl;
    int maxc;
} configs;

static void cfgs_free(configs *k)
{
    free(k->ncfg), free(k->nsingle), free(k->slice0), free(k->sl);
    sctx_free(&k->c);
}

/* Layer l's configurations: whole on each device that supports it
 * (fastest first), then equal shares over its k fastest such devices,
 * k = 2 .. min(devices, channels), when its kind may be split. */
static int cfgs_build(configs *k, const solve_problem *p, char *err)
{
    memset(k, 0, sizeof *k);
    if (sctx_init(&k->c, p, err)) return -1;
    int L = k->c.L, D = k->c.D;
    k->ncfg = malloc((size_t)L * sizeof *k->ncfg);
    k->nsingle = malloc((size_t)L * sizeof *k->nsingle);
    if (!k->ncfg || !k->nsingle) goto oom;
    long long nsl = 0;
    for (int l = 0; l < L; l++) {
        const net_layer *Ly = &p->n->layers[l];
        int na = k->c.nallowed[l];
        int split = net_split_has(p->split_mask, Ly->kind);
        int kmax = na < Ly->out.c ? na : Ly->out.c;
        k->nsingle[l] = na;
        k->ncfg[l] = na + (split && kmax >= 2 ? kmax - 1 : 0);
        if (k->ncfg[l] > k->maxc) k->maxc = k->ncfg[l];
        nsl += na + (long long)(k->ncfg[l] - na) * (k->ncfg[l] - na + 3) / 2;
    }
    k->slice0 = malloc(((size_t)L * k->maxc + 1) * sizeof *k->slice0);
    k->sl = malloc((size_t)(nsl > 0 ? nsl : 1) * sizeof *k->sl);
    int *w = malloc((size_t)D * sizeof *w), *share = malloc((size_t)D * sizeof *share);
    if (!k->slice0 || !k->sl || !w || !share) {
        free(w), free(share);
        goto oom;
    }
    int pos = 0;
    for (int l = 0; l < L; l++) {
        const int *al = sctx_allowed(&k->c, l);
        int C = p->n->layers[l].out.c;
        for (int t = 0; t < k->maxc; t++) {
            k->slice0[l * k->maxc + t] = pos;
            if (t >= k->ncfg[l]) continue;
            if (t < k->nsingle[l]) {
                k->sl[pos++] = (map_slice){al[t], 0, C};
                continue;
            }
            int nk = t - k->nsingle[l] + 2, c0 = 0;
            for (int a = 0; a < nk; a++) w[a] = 1;
            mapping_apportion(C, nk, w, share);
            for (int a = 0; a < nk; a++) {
                k->sl[pos++] = (map_slice){al[a], c0, share[a]};
                c0 += share[a];
            }
        }
    }
    k->slice0[(size_t)L * k->maxc] = pos;
    free(w), free(share);
    return 0;
oom:
    cfgs_free(k);
    base_seterr(err, "out of memory");
    return -1;
}

static inline const map_slice *cfg_sl(const configs *k, int l, int t, int *n)
{
    int a = k->slice0[l * k->maxc + t];
    int b = t + 1 < k->maxc ? k->slice0[l * k->maxc + t + 1] : k->slice0[(l + 1) * k->maxc];
    *n = b - a;
    return k->sl + a;
}

int solve_elim(const solve_problem *p, mapping *out, solve_result *r, char *err)
{
    configs k;
    if (cfgs_build(&k, p, err)) return -1;
    const net *n = p->n;
    int L = k.c.L, rc = -1, ne = 0, ntab = 0;
    double **unary = calloc((size_t)L, sizeof *unary);
    int *ea = NULL, *eb = NULL, *cfg = malloc((size_t)L * sizeof *cfg), *tab_q = NULL, *tab_l = NULL;
    double **pair = NULL, **tabs = NULL;
    int rdev[64];
    for (int l = 0; l < L; l++) ne += n->layers[l].nin;
    ea = malloc((size_t)(ne + 1) * sizeof *ea);
    eb = malloc((size_t)(ne + 1) * sizeof *eb);
    pair = malloc((size_t)(ne + 1) * sizeof *pair);
    tabs = calloc((size_t)(ne + 1), sizeof *tabs);
    tab_q = malloc((size_t)(ne + 1) * sizeof *tab_q);
    tab_l = malloc((size_t)(ne + 1) * sizeof *tab_l);
    if (!unary || !cfg || !ea || !eb || !pair || !tabs || !tab_q || !tab_l) goto oom;
    for (int l = 0; l < L; l++) {
        const net_layer *Ly = &n->layers[l];
        if (!(unary[l] = malloc((size_t)k.ncfg[l] * sizeof **unary))) goto oom;
        for (int t = 0; t < k.ncfg[l]; t++) {
            int ns;
            const map_slice *s = cfg_sl(&k, l, t, &ns);
            for (int a = 0; a < ns; a++) rdev[a] = s[a].dev;
            double u = solve_tc(p, l, s, ns);
            for (int j = 0; j < Ly->nin; j++)
                if (Ly->in[j] == NET_INPUT) {
                    map_slice in = {p->pl->source, 0, n->input.c};
                    u += solve_tx(p, NET_INPUT, &in, 1, rdev, ns);
                    break;
                }
            if (l == L - 1 && ns > 1)
                u += cost_concat_s(p->cost, s[0].dev, solve_bytes(n, l, Ly->out.c));
            unary[l][t] = u;
        }
    }
    /* Edges: one per distinct producer -> consumer; consumers with the
     * same configurations (the same allowed devices and count) share the
     * producer's table. */
    ne = 0;
    for (int l = 0; l < L; l++) {
        const net_layer *Ly = &n->layers[l];
        for (int j = 0; j < Ly->nin; j++) {
            int q = Ly->in[j], dup = 0;
            for (int a = 0; a < j; a++) dup |= Ly->in[a] == q;
            if (q == NET_INPUT || dup) continue;
            double *t = NULL;
            for (int x = 0; x < ntab && !t; x++)
                if (tab_q[x] == q && k.ncfg[tab_l[x]] == k.ncfg[l] && k.nsingle[tab_l[x]] == k.nsingle[l] &&
                    !memcmp(sctx_allowed(&k.c, tab_l[x]), sctx_allowed(&k.c, l), (size_t)k.nsingle[l] * sizeof(int)))
                    t = tabs[x];
            if (!t) {
                if (!(t = malloc((size_t)k.ncfg[q] * k.ncfg[l] * sizeof *t))) goto oom;
                tabs[ntab] = t, tab_q[ntab] = q, tab_l[ntab] = l, ntab++;
                for (int tq = 0; tq < k.ncfg[q]; tq++) {
                    int nq;
                    const map_slice *sq = cfg_sl(&k, q, tq, &nq);
                    for (int tl = 0; tl < k.ncfg[l]; tl++) {
                        int nl;
                        const map_slice *s = cfg_sl(&k, l, tl, &nl);
                        for (int a = 0; a < nl; a++) rdev[a] = s[a].dev;
                        t[tq * k.ncfg[l] + tl] = solve_tx(p, q, sq, nq, rdev, nl);
                    }
                }
            }
            ea[ne] = q, eb[ne] = l, pair[ne] = t, ne++;
        }
    }
    solve_egraph g = {L, k.ncfg, unary, ne, ea, eb, pair};
    solve_elim_info info;
    if (solve_eliminate(&g, SOLVE_ENUM_LIMIT, p->beam, cfg, &info, err)) goto done;
    for (int l = 0, pos = 0; l < L; l++) {
        int ns;
        const map_slice *s = cfg_sl(&k, l, cfg[l], &ns);
        out->first[l] = pos;
        for (int a = 0; a < ns; a++) out->slices[pos++] = s[a];
        out->first[l + 1] = pos;
    }
    r->estimate_ms = info.cost * 1e3;
    snprintf(r->detail, sizeof r->detail,
             "%d layers, %d edges, up to %d configurations; %d node and %d edge eliminations "
             "leave K = %d nodes, %d edges (10^%.1f strategies): %s; additive optimum %.6g ms",
             L, ne, k.maxc, info.node_elims, info.edge_elims, info.nodes_left, info.edges_left,
             log10(info.strategies_left), info.enumerated ? "enumerated (optimal)" : "beam search + local improvement (not proven optimal)",
             r->estimate_ms);
    if (!info.enumerated) {
        size_t len = strlen(r->detail);
        snprintf(r->detail + len, sizeof r->detail - len, " (beam %d)", info.beam);
    }
    solve_stat(r, "nodes_left", info.nodes_left);
    solve_stat(r, "edges_left", info.edges_left);
    solve_stat(r, "log10_strategies_left", log10(info.strategies_left));
    solve_stat(r, "enumerated", info.enumerated);
    solve_stat(r, "beam", info.beam);
    solve_stat(r, "node_elims", info.node_elims);
    solve_stat(r, "edge_elims", info.edge_elims);
    solve_stat(r, "configs", k.maxc);
    rc = 0;
    goto done;
oom:
    base_seterr(err, "out of memory");
done:
    for (int l = 0; unary && l < L; l++) free(unary[l]);
    for (int x = 0; x < ntab; x++) free(tabs[x]);
    free(unary), free(ea), free(eb), free(pair), free(tabs), free(tab_q), free(tab_l), free(cfg);
    cfgs_free(&k);
    return rc;
}
