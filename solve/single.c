/* single.c -- the plain baseline: every layer on one device, the device
 * with the lowest simulated latency among those that support every layer
 * of the network (ties: the lowest index). */
#include "solve_impl.h"
#include "base.h"

#include <math.h>
#include <stdio.h>

int solve_single(const solve_problem *p, mapping *out, solve_result *r, char *err)
{
    int best = -1;
    double best_ms = INFINITY;
    for (int d = 0; d < p->pl->ndev; d++) {
        int ok = 1;
        for (int l = 0; l < p->n->n && ok; l++) ok = platform_supports(p->pl, d, p->n->layers[l].kind);
        if (!ok) continue;
        cost_result c;
        mapping_set_single(out, p->n, d);
        if (solve_eval(p, out, &c, err)) return -1;
        if (c.latency_ms < best_ms) best_ms = c.latency_ms, best = d;
    }
    if (best < 0) {
        base_seterr(err, "single: no device of %s supports every layer of %s", p->pl->name,
                 p->n->name);
        return -1;
    }
    mapping_set_single(out, p->n, best);
    r->estimate_ms = best_ms;
    snprintf(r->detail, sizeof r->detail, "every layer on %s", p->pl->dev[best].name);
    solve_stat(r, "device", best);
    return 0;
}
