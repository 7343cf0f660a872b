/* greedy.c -- list scheduling, the simple baseline: layers in topological
 * order, each whole on the device (among those supporting it) where it
 * would finish first, given when that device is free and when its inputs
 * can be there (a tensor fetched once per device serves every later
 * consumer on it).  Times are the model's step durations
 * (cost_compute_s, cost_message_s); links are taken as idle. */
#include "solve_impl.h"
#include "base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* When tensor q (NET_INPUT: the input, on the source at 0) can be on
 * device d, fetched from where it was computed. */
static double fetch(const solve_problem *p, int q, int d, const int *dev, const double *fin)
{
    const net *n = p->n;
    if (q == NET_INPUT)
        return cost_message_s(p->cost, p->pl->source, d, solve_bytes(n, q, n->input.c));
    return fin[q] + cost_message_s(p->cost, dev[q], d, solve_bytes(n, q, n->layers[q].out.c));
}

int solve_greedy(const solve_problem *p, mapping *out, solve_result *r, char *err)
{
    solve_ctx c;
    if (sctx_init(&c, p, err)) return -1;
    const net *n = p->n;
    int L = c.L, D = c.D, rc = -1;
    double *fin = malloc((size_t)L * sizeof *fin), *free_at = calloc((size_t)D, sizeof *free_at);
    double *avail = malloc((size_t)(L + 1) * D * sizeof *avail); /* [q+1][d]: tensor q there */
    int *dev = malloc((size_t)L * sizeof *dev);
    if (!fin || !free_at || !avail || !dev) {
        base_seterr(err, "out of memory");
        goto done;
    }
    for (int i = 0; i < (L + 1) * D; i++) avail[i] = INFINITY;
    avail[p->pl->source] = 0; /* the input, on the source at the start */
    for (int l = 0; l < L; l++) {
        const net_layer *Ly = &n->layers[l];
        int best = -1;
        double best_fin = INFINITY;
        for (int a = 0; a < c.nallowed[l]; a++) {
            int d = sctx_allowed(&c, l)[a];
            double ready = free_at[d];
            for (int j = 0; j < Ly->nin; j++) {
                int q = Ly->in[j];
                double t = avail[(q + 1) * D + d];
                if (t == INFINITY) t = fetch(p, q, d, dev, fin);
                if (t > ready) ready = t;
            }
            double f = ready + cost_compute_s(p->cost, l, d, 0, Ly->out.c);
            if (f < best_fin) best_fin = f, best = d;
        }
        for (int j = 0; j < Ly->nin; j++) { /* what the chosen device fetched stays there */
            int q = Ly->in[j];
            if (avail[(q + 1) * D + best] == INFINITY) avail[(q + 1) * D + best] = fetch(p, q, best, dev, fin);
        }
        dev[l] = best;
        fin[l] = best_fin;
        free_at[best] = best_fin;
        avail[(l + 1) * D + best] = best_fin;
    }
    for (int l = 0; l < L; l++) {
        out->first[l] = l;
        out->slices[l] = (map_slice){dev[l], 0, n->layers[l].out.c};
    }
    out->first[L] = L;
    int used = 0;
    for (int d = 0; d < D; d++) used += free_at[d] > 0;
    r->estimate_ms = fin[L - 1] * 1e3;
    snprintf(r->detail, sizeof r->detail, "list schedule on %d device%s, its finish %.6g ms", used,
             used == 1 ? "" : "s", r->estimate_ms);
    solve_stat(r, "devices_used", used);
    rc = 0;
done:
    free(fin), free(free_at), free(avail), free(dev);
    sctx_free(&c);
    return rc;
}
