/* solve.c -- the table of solvers, solve_run (solve, check, evaluate), and
 * what the solvers share: the device ranking, the additive cost of seed
 * 001's eq. 1 on our plan's messages, the network as a DAG.
 *
 * Invariant: solve_run hands back only mappings that pass mapping_validate
 * and place no layer on a device that does not support its kind; their
 * objectives come from the same plan + schedule simulation as a campaign's.
 */
#include "solve_impl.h"
#include "base.h"

#include "plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const solve_method methods[] = {
    {"single", solve_single, "the best single-device mapping (lowest simulated latency)"},
    {"greedy", solve_greedy, "list scheduling: each layer to the device where it finishes first"},
    {"elim", solve_elim, "Jia et al.: node and edge elimination of the additive cost, then enumeration"},
    {"cluster", solve_cluster, "Ramiel: critical-path linear clustering, cluster merging, one cluster per device"},
    {"subgraph", solve_subgraph, "maximal convex subgraphs of supported layers on an accelerator, post-pruned"},
    {"memory", solve_memory, "the lowest peak memory per device: bands early, channels after, weights balanced"},
};

const solve_method *solve_methods(int *count)
{
    *count = (int)(sizeof methods / sizeof *methods);
    return methods;
}

const solve_method *solve_find(const char *name)
{
    for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
        if (!strcmp(methods[i].name, name)) return &methods[i];
    return NULL;
}

void solve_stat(solve_result *r, const char *key, double value)
{
    if (r->nstat < SOLVE_MAX_STATS) {
        r->stat[r->nstat].key = key;
        r->stat[r->nstat].value = value;
        r->nstat++;
    }
}

int solve_eval(const solve_problem *p, const mapping *m, cost_result *r, char *err)
{
    return solve_eval_dev(p, m, r, NULL, err);
}

int solve_eval_dev(const solve_problem *p, const mapping *m, cost_result *r, cost_device *per_dev,
                   char *err)
{
    plan *pl = plan_new();
    if (!pl) {
        base_seterr(err, "out of memory");
        return -1;
    }
    int rc = plan_build(pl, p->n, m, p->pl->source, err);
    if (!rc && cost_eval(p->cost, pl, r, per_dev)) {
        base_seterr(err, "%s", cost_error(p->cost));
        rc = -1;
    }
    plan_free(pl);
    return rc;
}

int solve_run(const char *name, const solve_problem *p, mapping *out, solve_result *r, char *err)
{
    const solve_method *sm = solve_find(name);
    memset(r, 0, sizeof *r);
    r->estimate_ms = NAN;
    if (!sm) {
        char list[200] = "";
        for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     methods[i].name);
        base_seterr(err, "unknown method \"%s\" (%s)", name, list);
        return -1;
    }
    r->method = sm->name;
    if (out->nlayers != p->n->n || out->ndev != p->pl->ndev) {
        base_seterr(err, "%s: mapping sized %d x %d, expected %d layers x %d devices",
                 name, out->nlayers, out->ndev, p->n->n, p->pl->ndev);
        return -1;
    }
    if (platform_check_net(p->pl, p->n, err)) return -1;
    /* Every method starts from channel cuts without recompute (a method
     * that sets only slices must not inherit another's bands). */
    memset(out->cut, MAP_CUT_CHANNELS, (size_t)out->nlayers);
    memset(out->recompute, 0, (size_t)out->nlayers);
    double t0 = base_now();
    if (sm->fn(p, out, r, err)) return strstr(err, "out of memory") ? -2 : -1;
    r->seconds = base_now() - t0;
    char e[BASE_ERRLEN];
    if (mapping_validate(out, p->n, e)) {
        base_seterr(err, "%s: produced an invalid mapping: %.400s", name, e);
        return -1;
    }
    for (int i = 0; i < p->n->n; i++)
        for (int k = 0; k < mapping_nslices(out, i); k++)
            if (!platform_supports(p->pl, mapping_slices(out, i)[k].dev, p->n->layers[i].kind)) {
                base_seterr(err, "%s: placed layer %s on %s, which does not support it",
                         name, p->n->layers[i].name, p->pl->dev[mapping_slices(out, i)[k].dev].name);
                return -1;
            }
    return solve_eval(p, out, &r->obj, err);
}

/* ---- context ---- */

void sctx_free(solve_ctx *c)
{
    free(c->rank);
    free(c->speed_s);
    free(c->allowed);
    free(c->nallowed);
    memset(c, 0, sizeof *c);
}

int sctx_init(solve_ctx *c, const solve_problem *p, char *err)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    c->L = p->n->n;
    c->D = p->pl->ndev;
    c->rank = malloc((size_t)c->D * sizeof *c->rank);
    c->speed_s = calloc((size_t)c->D, sizeof *c->speed_s);
    c->allowed = malloc((size_t)c->L * c->D * sizeof *c->allowed);
    c->nallowed = calloc((size_t)c->L, sizeof *c->nallowed);
    if (!c->rank || !c->speed_s || !c->allowed || !c->nallowed) {
        sctx_free(c);
        base_seterr(err, "out of memory");
        return -1;
    }
    /* A device's speed for this network: the whole network's compute alone
     * on it (what the model says; a GPU's cores x MHz says little). */
    for (int d = 0; d < c->D; d++) {
        for (int l = 0; l < c->L; l++)
            c->speed_s[d] += cost_compute_s(p->cost, l, d, 0, p->n->layers[l].out.c);
        c->rank[d] = d;
    }
    for (int a = 1; a < c->D; a++) { /* insertion sort: stable, ties keep the index order */
        int d = c->rank[a], b = a - 1;
        while (b >= 0 && c->speed_s[c->rank[b]] > c->speed_s[d]) c->rank[b + 1] = c->rank[b], b--;
        c->rank[b + 1] = d;
    }
    for (int l = 0; l < c->L; l++)
        for (int a = 0; a < c->D; a++)
            if (platform_supports(p->pl, c->rank[a], p->n->layers[l].kind))
                c->allowed[(size_t)l * c->D + c->nallowed[l]++] = c->rank[a];
    return 0;
}

/* ---- the additive cost ---- */

double solve_bytes(const net *n, int l, int nc)
{
    net_shape s = l == NET_INPUT ? n->input : n->layers[l].out;
    return 4.0 * (double)nc * s.h * s.w;
}

double solve_tc(const solve_problem *p, int l, const map_slice *s, int k)
{
    double t = 0;
    for (int a = 0; a < k; a++) {
        double x = cost_compute_s(p->cost, l, s[a].dev, s[a].c0, s[a].nc);
        if (x > t) t = x;
    }
    return t;
}

double solve_tx(const solve_problem *p, int q, const map_slice *s, int k, const int *rdev, int nr)
{
    double worst = 0;
    /* Each receiver pulls the slices it lacks one after the other, then
     * concatenates a split tensor. */
    for (int b = 0; b < nr; b++) {
        int r = rdev[b];
        double t = 0;
        for (int a = 0; a < k; a++)
            if (s[a].dev != r) t += cost_message_s(p->cost, s[a].dev, r, solve_bytes(p->n, q, s[a].nc));
        if (k > 1) t += cost_concat_s(p->cost, r, solve_bytes(p->n, q, p->n->layers[q].out.c));
        if (t > worst) worst = t;
    }
    /* Each holder sends its slice to every other receiver, one after the
     * other on its outgoing link. */
    for (int a = 0; a < k; a++) {
        double t = 0, bytes = solve_bytes(p->n, q, s[a].nc);
        for (int b = 0; b < nr; b++)
            if (rdev[b] != s[a].dev) t += cost_message_s(p->cost, s[a].dev, rdev[b], bytes);
        if (t > worst) worst = t;
    }
    return worst;
}

/* Is producer q listed before position j among layer l's inputs? */
static int seen_before(const net_layer *L, int j)
{
    for (int a = 0; a < j; a++)
        if (L->in[a] == L->in[j]) return 1;
    return 0;
}

double solve_additive_s(const solve_problem *p, const mapping *m)
{
    const net *n = p->n;
    int rdev[64];
    double t = 0;
    for (int l = 0; l < n->n; l++) {
        const net_layer *L = &n->layers[l];
        int k = mapping_nslices(m, l), nr = 0;
        const map_slice *s = mapping_slices(m, l);
        for (int a = 0; a < k && nr < 64; a++) rdev[nr++] = s[a].dev;
        t += solve_tc(p, l, s, k);
        for (int j = 0; j < L->nin; j++) {
            int q = L->in[j];
            if (seen_before(L, j)) continue;
            if (q == NET_INPUT) {
                map_slice in = {p->pl->source, 0, n->input.c};
                t += solve_tx(p, NET_INPUT, &in, 1, rdev, nr);
            } else {
                t += solve_tx(p, q, mapping_slices(m, q), mapping_nslices(m, q), rdev, nr);
            }
        }
    }
    int out = n->n - 1;
    if (mapping_nslices(m, out) > 1)
        t += cost_concat_s(p->cost, mapping_slices(m, out)[0].dev,
                           solve_bytes(n, out, n->layers[out].out.c));
    return t;
}

/* ---- the network as a DAG ---- */

void sdag_free(solve_dag *g)
{
    free((void *)g->first);
    free((void *)g->pred);
    memset(g, 0, sizeof *g);
}

int sdag_of_net(const net *n, solve_dag *g)
{
    memset(g, 0, sizeof *g);
    int ne = 0;
    for (int l = 0; l < n->n; l++) ne += n->layers[l].nin;
    int *first = malloc((size_t)(n->n + 1) * sizeof *first);
    int *pred = malloc((size_t)(ne > 0 ? ne : 1) * sizeof *pred);
    if (!first || !pred) {
        free(first), free(pred);
        return -1;
    }
    int k = 0;
    for (int l = 0; l < n->n; l++) {
        const net_layer *L = &n->layers[l];
        first[l] = k;
        for (int j = 0; j < L->nin; j++)
            if (L->in[j] != NET_INPUT && !seen_before(L, j)) pred[k++] = L->in[j];
    }
    first[n->n] = k;
    g->n = n->n;
    g->first = first;
    g->pred = pred;
    return 0;
}
