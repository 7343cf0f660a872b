/* bench_solve.c -- every planner of dse solve on one network and platform:
 * the model's objectives of its mapping, its own estimate, and its run
 * time (median of ROUNDS runs; the methods alternate within each round, so
 * a drift of the machine hits them alike).  One markdown row per method.
 *
 *   bench_solve NETWORK PLATFORM COEFFS|- [ROUNDS=5] [LABEL]
 */
#include "bench.h"

#include "cost.h"
#include "mapping.h"
#include "solve.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *stat_of(const solve_result *r, const char *key, char *buf, size_t n)
{
    for (int i = 0; i < r->nstat; i++)
        if (!strcmp(r->stat[i].key, key)) {
            snprintf(buf, n, "%g", r->stat[i].value);
            return buf;
        }
    return "-";
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_solve NETWORK PLATFORM COEFFS|- [ROUNDS] [LABEL]\n");
        return 2;
    }
    int rounds = argc > 4 ? atoi(argv[4]) : 5;
    const char *label = argc > 5 ? argv[5] : NULL;
    char err[BASE_ERRLEN];
    net *n = net_open(argv[1], err);
    platform *pl = n ? platform_open(argv[2], err) : NULL;
    cost_coeffs *co = NULL;
    if (pl && strcmp(argv[3], "-") && !(co = coeffs_load(argv[3], err))) pl = NULL;
    cost_model *cm = pl ? cost_new(n, pl, co, NULL, err) : NULL;
    if (!cm) {
        fprintf(stderr, "bench_solve: %s\n", err);
        return 1;
    }
    int nm;
    const solve_method *ms = solve_methods(&nm);
    double t[16][64];
    solve_result res[16];
    int ok[16];
    mapping *m = mapping_new(n->n, pl->ndev);
    solve_problem p = {n, pl, cm, NET_SPLIT_DEFAULT, 0};
    for (int k = 0; k < nm; k++) ok[k] = 1;
    if (rounds > 64) rounds = 64;
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < nm; k++) {
            if (!ok[k]) continue;
            if (solve_run(ms[k].name, &p, m, &res[k], err)) {
                ok[k] = 0; /* e.g. subgraph without an accelerator */
                continue;
            }
            t[k][r] = res[k].seconds;
        }
    for (int k = 0; k < nm; k++) {
        if (!ok[k]) continue;
        char b1[32], b2[32];
        const solve_result *r = &res[k];
        char info[64] = "";
        if (!strcmp(ms[k].name, "elim"))
            snprintf(info, sizeof info, "K=%s %s", stat_of(r, "nodes_left", b1, sizeof b1),
                     !strcmp(stat_of(r, "enumerated", b2, sizeof b2), "1") ? "enumerated" : "beam");
        else if (!strcmp(ms[k].name, "cluster"))
            snprintf(info, sizeof info, "%s->%s->%s clusters", stat_of(r, "clusters_lc", b1, sizeof b1),
                     stat_of(r, "clusters_merged", b2, sizeof b2), stat_of(r, "clusters", b2 + 16, 16));
        else if (!strcmp(ms[k].name, "subgraph"))
            snprintf(info, sizeof info, "%s subgraphs, %s pieces, %s off", stat_of(r, "subgraphs", b1, sizeof b1),
                     stat_of(r, "pieces", b2, 16), stat_of(r, "offloaded", b2 + 16, 16));
        else if (!strcmp(ms[k].name, "greedy"))
            snprintf(info, sizeof info, "%s devices", stat_of(r, "devices_used", b1, sizeof b1));
        else if (!strcmp(ms[k].name, "memory"))
            snprintf(info, sizeof info, "bands on %s devices before layer %s",
                     stat_of(r, "band_devices", b1, sizeof b1), stat_of(r, "boundary", b2, sizeof b2));
        double est = r->estimate_ms;
        char estb[32];
        if (isnan(est)) snprintf(estb, sizeof estb, "-");
        else snprintf(estb, sizeof estb, "%.4g", est);
        printf("| %s | %s | %s | %.4g | %.4g | %.4g | %s | %s | %.3g | %s |\n", label ? label : n->name,
               pl->name, ms[k].name, r->obj.energy_j, r->obj.mem_mb, r->obj.latency_ms, estb,
               r->obj.violation_bytes > 0 ? "no" : "yes", base_median(t[k], rounds) * 1e3, info);
    }
    mapping_free(m);
    cost_free(cm);
    coeffs_free(co);
    platform_free(pl);
    net_free(n);
    return 0;
}
