/* bench_plan.c -- decode + plan_build per genome (hybrid p = 2, 16
 * devices): the median over batches of the time per genome, and the number
 * of heap allocations made in the timed loop (must be 0: plan and mapping
 * buffers are reused).  Times are this thread's CPU time, so a loaded
 * machine does not inflate them (wall time equals it on an idle core).
 *
 * usage: bench_plan [batches]   (default 500 batches of 64 genomes)
 */
#include "chrom.h"
#include "plan.h"

#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include <stdlib.h>
#include <time.h>

static long nalloc;
void *__real_malloc(size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
void *__wrap_malloc(size_t n) { nalloc++; return __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { nalloc++; return __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { nalloc++; return __real_realloc(p, n); }

#define BATCH 64
#define POOL 2048

static uint64_t rng = 12345;

static void run(const char *netname, int ndev, int p, int batches)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo(netname, err);
    chrom *c = chrom_new(n, ndev, CHROM_HYBRID, p, NET_SPLIT_DEFAULT, err);
    int len = chrom_length(c);
    int *lo = malloc(sizeof(int) * len), *hi = malloc(sizeof(int) * len);
    int *pool = malloc(sizeof(int) * (size_t)len * POOL);
    double *td = malloc(sizeof(double) * batches), *tp = malloc(sizeof(double) * batches);
    chrom_bounds(c, lo, hi);
    for (int g = 0; g < POOL; g++)
        for (int i = 0; i < len; i++) pool[(size_t)g * len + i] = bench_rnd(&rng, lo[i], hi[i]);
    mapping *m = mapping_new(n->n, ndev);
    plan *pl = plan_new();
    long steps = 0, g = 0;
    for (int w = 0; w < POOL; w++) { /* warm up: buffers reach their final size */
        chrom_decode(c, pool + (size_t)w * len, len, m, err);
        plan_build(pl, n, m, 0, err);
    }
    long before = nalloc;
    for (int b = 0; b < batches; b++) {
        long g0 = g;
        double t0 = base_cpu_now();
        for (int k = 0; k < BATCH; k++, g = (g + 1) % POOL)
            chrom_decode(c, pool + (size_t)g * len, len, m, err);
        double t1 = base_cpu_now();
        g = g0;
        for (int k = 0; k < BATCH; k++, g = (g + 1) % POOL) {
            chrom_decode(c, pool + (size_t)g * len, len, m, err);
            plan_build(pl, n, m, 0, err);
            steps += pl->nsteps;
        }
        double t2 = base_cpu_now();
        td[b] = (t1 - t0) / BATCH;
        tp[b] = (t2 - t1) / BATCH;
    }
    long allocs = nalloc - before;
    qsort(td, batches, sizeof *td, base_cmp_double);
    qsort(tp, batches, sizeof *tp, base_cmp_double);
    printf("%-13s %3d devices  decode %7.2f us  decode+plan %7.2f us  (%5.0f steps/plan)  "
           "allocations in loop: %ld\n", netname, ndev, td[batches / 2] * 1e6, tp[batches / 2] * 1e6,
           (double)steps / ((double)batches * BATCH), allocs);
    free(lo);
    free(hi);
    free(pool);
    free(td);
    free(tp);
    mapping_free(m);
    plan_free(pl);
    chrom_free(c);
    net_free(n);
}

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 500;
    if (batches < 1) batches = 1;
    printf("decode + plan per genome (thread CPU time), hybrid p = 2, median of %d batches of %d genomes\n",
           batches, BATCH);
    run("alexnet-bvlc", 16, 2, batches);
    run("resnet50", 16, 2, batches);
    run("densenet121", 16, 2, batches);
    return 0;
}
