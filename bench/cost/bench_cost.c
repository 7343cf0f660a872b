/* bench_cost.c -- time of the analytical model on the campaign hot path:
 * plan_build + cost_eval per mapping, and cost_eval alone, for realistic
 * hybrid mappings (chrom hybrid p=2 decoder on random genomes within
 * bounds, 16 devices of jetson-nx-8-cpugpu, examples/coeffs/
 * jetson-nx-thesis.json).  Mappings are decoded up front; evaluations are
 * timed in batches of BATCH different mappings and each figure is the median
 * over batches of the time per mapping: plan_build alone, plan_build +
 * cost_eval into one reused plan (the campaign's loop), and cost_eval alone
 * over POOL prebuilt plans (each plan comes cold from memory: an upper
 * bound of cost_eval's share in the loop, where the plan was just built),
 * and the same with a step spread of BENCH_SPREAD on every device kind
 * (each RECV the expected later of two clocks: erfc and exp) in the same
 * batches (each phase meets every plan of the pool, cold), and the ratio
 * of the two medians.
 *
 * usage: bench_cost [batches] [networks...]   (default 300 batches)
 */
#include "chrom.h"
#include "cost.h"
#include "plan.h"

#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include <stdlib.h>
#include <time.h>

#define BATCH 64
#define POOL 512 /* distinct mappings cycled through */
#define BENCH_SPREAD 0.05 /* the "spread" column's step spread (calibrated: 0.04-0.10) */

static uint64_t rng = 2463534242ull;

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_cost: %s: %s\n", what, err);
    exit(1);
}

static void run(const char *netname, const platform *pl, const cost_coeffs *co,
                const cost_coeffs *cs, int batches)
{
    char err[BASE_ERRLEN], warn[BASE_ERRLEN];
    net *n = net_zoo(netname, err);
    if (!n) die(netname, err);
    chrom *c = chrom_new(n, pl->ndev, CHROM_HYBRID, 2, NET_SPLIT_DEFAULT, err);
    if (!c) die(netname, err);
    cost_model *m = cost_new(n, pl, co, warn, err), *ms = cost_new(n, pl, cs, warn, err);
    if (!m || !ms) die(netname, err);
    int len = chrom_length(c);
    int *lo = malloc(sizeof(int) * len), *hi = malloc(sizeof(int) * len),
        *g = malloc(sizeof(int) * len);
    chrom_bounds(c, lo, hi);
    mapping **maps = malloc(POOL * sizeof *maps);
    plan **plans = malloc(POOL * sizeof *plans);
    double steps = 0, msgs = 0;
    for (int k = 0; k < POOL; k++) {
        for (int i = 0; i < len; i++) g[i] = bench_rnd(&rng, lo[i], hi[i]);
        maps[k] = mapping_new(n->n, pl->ndev);
        plans[k] = plan_new();
        if (chrom_decode(c, g, len, maps[k], err) ||
            plan_build(plans[k], n, maps[k], pl->source, err))
            die(netname, err);
        steps += plans[k]->nsteps;
        msgs += plans[k]->nmsgs;
    }
    plan *p = plan_new();
    double *t0s = malloc(sizeof(double) * batches), *t1 = malloc(sizeof(double) * batches),
           *t2 = malloc(sizeof(double) * batches), *t3 = malloc(sizeof(double) * batches);
    cost_result r;
    double sink = 0;
    for (int k = 0; k < POOL; k++) { /* warm up: scratch sized for the largest plan */
        if (plan_build(p, n, maps[k], pl->source, err) || cost_eval(m, p, &r, NULL) ||
            cost_eval(ms, p, &r, NULL))
            die(netname, err);
        sink += r.latency_ms;
    }
    int k = 0;
    for (int b = 0; b < batches; b++) {
        double t0 = base_now();
        for (int i = 0; i < BATCH; i++, k = (k + 1) % POOL) {
            plan_build(p, n, maps[k], pl->source, err);
            sink += p->nsteps;
        }
        t0s[b] = (base_now() - t0) / BATCH;
        t0 = base_now();
        for (int i = 0; i < BATCH; i++, k = (k + 1) % POOL) {
            plan_build(p, n, maps[k], pl->source, err);
            cost_eval(m, p, &r, NULL);
            sink += r.latency_ms;
        }
        t1[b] = (base_now() - t0) / BATCH;
        t0 = base_now();
        for (int i = 0; i < BATCH; i++, k = (k + 1) % POOL) {
            cost_eval(m, plans[k], &r, NULL);
            sink += r.energy_j;
        }
        t2[b] = (base_now() - t0) / BATCH;
        t0 = base_now();
        for (int i = 0; i < BATCH; i++, k = (k + 1) % POOL) {
            cost_eval(ms, plans[k], &r, NULL);
            sink += r.energy_j;
        }
        t3[b] = (base_now() - t0) / BATCH;
        /* Five groups of BATCH per batch over a pool of eight: every
         * phase meets every plan, each from cold memory. */
        k = (k + BATCH) % POOL;
    }
    qsort(t0s, (size_t)batches, sizeof *t0s, base_cmp_double);
    qsort(t1, (size_t)batches, sizeof *t1, base_cmp_double);
    qsort(t2, (size_t)batches, sizeof *t2, base_cmp_double);
    qsort(t3, (size_t)batches, sizeof *t3, base_cmp_double);
    double tp = t0s[batches / 2], tb = t1[batches / 2];
    printf("%-13s %4d %6.0f %5.0f | %9.2f %9.2f %9.0f | %9.2f %9.2f %6.2f\n", netname, n->n,
           steps / POOL, msgs / POOL, tp * 1e6, tb * 1e6, 1 / tb, t2[batches / 2] * 1e6,
           t3[batches / 2] * 1e6, t3[batches / 2] / t2[batches / 2]);
    if (sink == 42) puts("");
    for (int j = 0; j < POOL; j++) {
        mapping_free(maps[j]);
        plan_free(plans[j]);
    }
    free(maps);
    free(plans);
    plan_free(p);
    free(t0s);
    free(t1);
    free(t2);
    free(t3);
    free(lo);
    free(hi);
    free(g);
    cost_free(m);
    cost_free(ms);
    chrom_free(c);
    net_free(n);
}

int main(int argc, char **argv)
{
    char err[BASE_ERRLEN];
    int batches = argc > 1 ? atoi(argv[1]) : 300;
    if (batches < 10) batches = 10;
    platform *pl = platform_open("jetson-nx-8-cpugpu", err);
    if (!pl) die("platform", err);
    cost_coeffs *co = coeffs_load(DSE_SOURCE_DIR "/examples/coeffs/jetson-nx-thesis.json", err);
    if (!co) die("coefficients", err);
    /* The same with a step spread on every device kind: every RECV then
     * takes the expected later of two clocks (erfc, exp: cost-model.md,
     * "Clocks that vary"), timed beside the plain one, batch by batch. */
    cost_coeffs *cs = coeffs_load(DSE_SOURCE_DIR "/examples/coeffs/jetson-nx-thesis.json", err);
    if (!cs) die("coefficients", err);
    for (int k = 0; k < 2; k++) cs->dev[k].step_spread = coeffs_given(BENCH_SPREAD, COEFFS_MEASURED);
    static const char *def[] = {"alexnet-bvlc", "vgg16", "resnet50", "densenet121"};
    const char **nets = argc > 2 ? (const char **)argv + 2 : def;
    int nn = argc > 2 ? argc - 2 : 4;
    printf("hybrid p=2 mappings of random genomes on %s (%d devices); median of %d batches of %d\n",
           pl->name, pl->ndev, batches, BATCH);
    printf("%-13s %4s %6s %5s | %9s %9s %9s | %9s %9s %6s\n", "network", "L", "steps", "msgs", "plan us",
           "plan+cost", "evals/s", "cost us", "spread us", "ratio");
    for (int i = 0; i < nn; i++) run(nets[i], pl, co, cs, batches);
    coeffs_free(co);
    coeffs_free(cs);
    platform_free(pl);
    return 0;
}
