/* bench_decode.c -- time of chrom_decode() per genome, the hot path of
 * every evaluation.  For each case, random genomes within bounds are
 * generated up front; decodes are timed in batches of BATCH different
 * genomes and the figure is the median over batches of the time per
 * genome (batches amortise the clock's own cost of ~20 ns).
 *
 * usage: bench_chrom_decode [batches]   (default 2000 batches of 64)
 */
#include "chrom.h"

#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include <stdlib.h>
#include <time.h>

#define BATCH 64
#define POOL 4096 /* distinct genomes cycled through */

static uint64_t rng = 12345;

static void run(const char *netname, chrom_kind k, int ndev, int p, int batches)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo(netname, err);
    chrom *c = n ? chrom_new(n, ndev, k, p, NET_SPLIT_DEFAULT, err) : NULL;
    if (!c) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    int len = chrom_length(c);
    int *lo = malloc(sizeof(int) * len), *hi = malloc(sizeof(int) * len);
    int *pool = malloc(sizeof(int) * (size_t)len * POOL);
    double *t = malloc(sizeof(double) * batches);
    chrom_bounds(c, lo, hi);
    for (int g = 0; g < POOL; g++)
        for (int i = 0; i < len; i++) pool[(size_t)g * len + i] = bench_rnd(&rng, lo[i], hi[i]);
    mapping *m = mapping_new(n->n, ndev);
    long sink = 0, g = 0;
    for (int w = 0; w < POOL; w++) /* warm up */
        sink += chrom_decode(c, pool + (size_t)w * len, len, m, err) + m->first[n->n];
    for (int b = 0; b < batches; b++) {
        double t0 = base_now();
        for (int r = 0; r < BATCH; r++, g = (g + 1) % POOL)
            sink += chrom_decode(c, pool + (size_t)g * len, len, m, err) + m->first[n->n];
        t[b] = (base_now() - t0) / BATCH;
    }
    qsort(t, (size_t)batches, sizeof *t, base_cmp_double);
    char what[32];
    if (k == CHROM_HYBRID) snprintf(what, sizeof what, "hybrid p=%d", p);
    else snprintf(what, sizeof what, "%s", chrom_kind_name(k));
    printf("%-14s %-12s %3d dev %5d layers %5d genes  median %8.3f us  (p10 %.3f, p90 %.3f)\n",
           netname, what, ndev, n->n, len, t[batches / 2] * 1e6, t[batches / 10] * 1e6,
           t[batches * 9 / 10] * 1e6);
    if (sink == 42) puts(""); /* keep the decodes alive */
    mapping_free(m);
    free(lo);
    free(hi);
    free(pool);
    free(t);
    chrom_free(c);
    net_free(n);
}

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 2000;
    if (batches < 10) batches = 10;
    const char *nets[] = {"alexnet-bvlc", "resnet50", "densenet121"};
    printf("chrom_decode time per genome, median of %d batches of %d random genomes\n",
           batches, BATCH);
    for (int i = 0; i < 3; i++) run(nets[i], CHROM_HYBRID, 16, 2, batches);
    for (int i = 0; i < 3; i++) run(nets[i], CHROM_HYBRID, 16, 16, batches);
    for (int i = 0; i < 3; i++) run(nets[i], CHROM_NAIVE, 16, 0, batches);
    for (int i = 0; i < 3; i++) run(nets[i], CHROM_VERTICAL, 16, 0, batches);
    return 0;
}
