/* bench_kernels.c -- single-thread speed of the runtime's kernels
 * (bench/README.md, section "Kernels").
 *
 *   bench_kernels peak                  large square SGEMM GFLOP/s (the roof)
 *   bench_kernels convs NET... [--reps R]
 *       every Conv layer of each net: median time, GFLOP/s, % of the SGEMM
 *       roof measured in the same run; then the overall figure
 *   bench_kernels forward NET... [--reps R] [--warmup W]
 *       whole-network latency with kern_model_forward (median of R runs),
 *       plus where the time goes per layer kind
 * Options: --threads T (default 1).  Output is plain text, one fact a line,
 * with machine-greppable "key=value" summary lines.
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Best of 5 of a 2048^3 SGEMM, row-major like the conv path. */
static double sgemm_peak(void)
{
    const int n = 2048;
    float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n);
    float *c = malloc(sizeof(float) * n * n);
    for (long i = 0; i < (long)n * n; i++) a[i] = b[i] = (float)(i % 17) / 17.0f, c[i] = 0;
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        t = now() - t;
        if (t < best) best = t;
    }
    free(a), free(b), free(c);
    return 2.0 * n * n * (double)n / best / 1e9;
}

static int bench_convs(const char *name, int reps, double peak, double *tot_flop, double *tot_s)
{
    char err[NET_ERRLEN];
    net *n = net_open(name, err);
    if (!n) {
        fprintf(stderr, "bench_kernels: %s\n", err);
        return -1;
    }
    double flop = 0, secs = 0;
    printf("# %s: conv layers, median of %d runs, 1 slice = whole layer\n", name, reps);
    printf("%-22s %14s %5s %9s %9s %8s %7s\n", "layer", "in->out", "k/s", "MFLOP", "ms", "GFLOP/s", "%peak");
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        if (L->kind != NET_CONV) continue;
        double t = kern_time_slice(n, i, 0, L->out.c, 1, reps, err);
        if (t < 0) {
            fprintf(stderr, "bench_kernels: %s\n", err);
            net_free(n);
            return -1;
        }
        double f = 2.0 * (double)L->macs;
        net_shape x = net_in_shape(n, i, 0);
        char io[64], ks[16];
        snprintf(io, sizeof io, "%dx%d:%d->%d", x.h, x.w, x.c, L->out.c);
        snprintf(ks, sizeof ks, "%d/%d", L->a.kh, L->a.sh);
        printf("%-22s %14s %5s %9.1f %9.3f %8.1f %6.1f%%\n", L->name, io, ks, f / 1e6, t * 1e3,
               f / t / 1e9, 100.0 * f / t / 1e9 / peak);
        flop += f, secs += t;
    }
    printf("%s conv_overall_gflops=%.1f pct_of_peak=%.1f conv_ms=%.1f\n", name, flop / secs / 1e9,
           100.0 * flop / secs / 1e9 / peak, secs * 1e3);
    *tot_flop += flop, *tot_s += secs;
    net_free(n);
    return 0;
}

static int bench_forward(const char *name, int warmup, int reps)
{
    char err[NET_ERRLEN];
    net *n = net_open(name, err);
    if (!n) {
        fprintf(stderr, "bench_kernels: %s\n", err);
        return -1;
    }
    kern_model *m = kern_model_new(n, 1, err);
    if (!m) {
        fprintf(stderr, "bench_kernels: %s\n", err);
        net_free(n);
        return -1;
    }
    float *x = malloc((size_t)net_shape_numel(n->input) * sizeof *x);
    float *y = malloc((size_t)net_shape_numel(n->layers[n->n - 1].out) * sizeof *y);
    double *lat = malloc((size_t)reps * sizeof *lat), *ls = calloc((size_t)n->n, sizeof *ls);
    double *cpu = malloc((size_t)reps * sizeof *cpu);
    double *acc = calloc((size_t)n->n, sizeof *acc), kind_s[NET_KIND_COUNT] = {0};
    kern_input_gen(n, 7, x);
    int rc = 0;
    for (int r = 0; r < warmup + reps && rc == 0; r++) {
        double t = now(), c = cpu_now();
        rc = kern_model_forward(m, x, y, ls, err);
        t = now() - t, c = cpu_now() - c;
        if (r >= warmup) {
            lat[r - warmup] = t;
            cpu[r - warmup] = c;
            for (int i = 0; i < n->n; i++) acc[i] += ls[i];
        }
    }
    if (rc) {
        fprintf(stderr, "bench_kernels: %s\n", err);
    } else {
        double med = median(lat, reps), tot = 0;
        for (int i = 0; i < n->n; i++) kind_s[n->layers[i].kind] += acc[i] / reps, tot += acc[i] / reps;
        printf("%s forward_ms=%.2f min_ms=%.2f cpu_ms=%.2f (median/min wall, median CPU time of "
               "%d after %d warm-up) GMACs=%.3f\n", name, med * 1e3, lat[0] * 1e3,
               median(cpu, reps) * 1e3, reps, warmup, (double)net_total(n, 0).macs / 1e9);
        printf("  time by kind:");
        for (int k = 0; k < NET_KIND_COUNT; k++)
            if (kind_s[k] > 0) printf(" %s %.1f%%", net_kind_name((net_kind)k), 100 * kind_s[k] / tot);
        printf("\n");
    }
    free(x), free(y), free(lat), free(cpu), free(ls), free(acc);
    kern_model_free(m);
    net_free(n);
    return rc ? -1 : 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_kernels peak | convs NET... | forward NET... "
                    "[--reps R] [--warmup W] [--threads T]\n");
}

int main(int argc, char **argv)
{
    int reps = 10, warmup = 2, threads = 1, nnets = 0;
    const char *nets[32];
    if (argc < 2) {
        usage();
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (argv[i][0] != '-' && nnets < 32) nets[nnets++] = argv[i];
        else {
            usage();
            return 2;
        }
    }
    if (reps < 1 || warmup < 0 || threads < 1) {
        usage();
        return 2;
    }
    kern_set_threads(threads);
    if (!strcmp(argv[1], "peak")) {
        printf("sgemm_peak_gflops=%.1f threads=%d openblas_core=%s\n", sgemm_peak(), threads,
               openblas_get_corename());
        return 0;
    }
    if (!strcmp(argv[1], "convs")) {
        double peak = sgemm_peak(), flop = 0, secs = 0;
        printf("sgemm_peak_gflops=%.1f threads=%d openblas_core=%s\n", peak, threads,
               openblas_get_corename());
        for (int k = 0; k < nnets; k++)
            if (bench_convs(nets[k], reps, peak, &flop, &secs)) return 1;
        printf("all conv_overall_gflops=%.1f pct_of_peak=%.1f\n", flop / secs / 1e9,
               100.0 * flop / secs / 1e9 / peak);
        return 0;
    }
    if (!strcmp(argv[1], "forward")) {
        for (int k = 0; k < nnets; k++)
            if (bench_forward(nets[k], warmup, reps)) return 1;
        return 0;
    }
    usage();
    return 2;
}
