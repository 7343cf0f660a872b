/* bench_kernels.c -- single-thread speed of the runtime's kernels
 * (bench/README.md, section "Kernels").
 *
 *   bench_kernels peak
 *       a 2048^3 SGEMM, best of 5: this machine's BLAS roof (cblas_sgemm),
 *       and the runtime's own AVX-512 product's where it has one
 *   bench_kernels convs NET... [--reps R] [--share K]
 *       every Conv layer of each net, whole layer as one slice (--share K:
 *       its first 1/K of the output channels, a device's part of a channel
 *       split; the MFLOP and GFLOP/s are then the slice's): median time
 *       with the default algorithms (Winograd where kernels.h picks it) and
 *       with im2col/1x1 + SGEMM only; GFLOP/s counted as 2 * MACs of the
 *       direct convolution ("effective" for Winograd) and as % of the SGEMM
 *       roof measured in the same run; then the overall figures
 *   bench_kernels forward NET... [--reps R] [--warmup W]
 *       whole-network latency with kern_model_forward (median and minimum of
 *       R runs after W warm-up runs), and where the time goes per layer kind
 *       (--layers: per layer, mean over the R runs)
 *   bench_kernels bands NET... [--reps R]
 *       every row-splittable layer whole and as middle bands of 1/2, 1/4 and
 *       1/8 of its rows, then of its columns (kern_run_band, docs/spatial.md):
 *       each band's time per unit of work against the whole layer's (1.00 =
 *       a band costs its share of the work, the uncalibrated model's
 *       assumption; calibration times bands of both (coefficients format 8,
 *       docs/coefficients-format.md))
 *   bench_kernels corun NET... [--reps R]
 *       every layer whole on one core (two threads pinned to the first two
 *       CPUs this process may use; one kernel thread each; wall time), in
 *       four ways taken in turn every repetition, their order rotating:
 *       alone (the other core asleep);
 *       its input rewritten first by core 0 itself; its input rewritten
 *       first by core 1 (the data another core just wrote, as after a
 *       receive); and beside the same layer run on core 1 at the same time
 *       (contention for the memory both cores share, as in a channel
 *       split).  Each way's median against alone, per layer and by
 *       arithmetic intensity (bench/README.md, "What a split costs a core")
 * Options: --winograd M: kern_set_winograd's mode for the default algorithms
 * (1 by shape, 2 or 4 forced; --no-winograd = 0); --gemm auto|own|blas: the
 * convolutions' products (kern_set_gemm 1, 2, 0; auto = the default);
 * --threads T (default 1); --clock cpu|wall: what the per-layer and
 * SGEMM figures time (default cpu = this thread's CPU time, which a loaded
 * machine disturbs far less than wall time; with T > 1 wall is used).
 * forward always prints both wall and process CPU time.  Output is plain
 * text with greppable "key=value" summary lines.
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kern_impl.h"
#include "convalgo.h"
#include "kernels.h"

static int use_cpu_clock = 1;
static int wino_mode = 1; /* kern_set_winograd's mode for the default algorithms */
static int show_layers;   /* forward: every layer's mean time too */
static int conv_share = 1; /* convs: time the first 1/conv_share of the output channels */

/* CPU seconds of the whole process (all kernel threads). */
static double proc_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The clock of per-layer and SGEMM figures (--clock). */
static double now(void) { return use_cpu_clock ? base_cpu_now() : base_now(); }

/* Best of 5 of a 2048^3 SGEMM, row-major like the conv path. */
/* Best of 5 2048^3 products: cblas_sgemm, or (own) the runtime's product
 * kern_sgemm as the convolutions call it. */
static double sgemm_peak(int own)
{
    const int n = 2048;
    float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n);
    float *c = malloc(sizeof(float) * n * n);
    for (long i = 0; i < (long)n * n; i++) a[i] = b[i] = (float)(i % 17) / 17.0f, c[i] = 0;
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = now();
        if (own) kern_sgemm(n, n, n, a, n, b, n, 0, c, n);
        else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        t = now() - t;
        if (t < best) best = t;
    }
    free(a), free(b), free(c);
    return 2.0 * n * n * (double)n / best / 1e9;
}

/* Output channels [0, nc) that `convs` times of layer i: all, or a
 * device's share of a channel split (--share). */
static int conv_nc(const net *n, int i)
{
    int c = n->layers[i].out.c / conv_share;
    return c > 0 ? c : 1;
}

/* Median time of layer i's output channels [0, nc), after one warm-up run. */
static double time_layer(const net *n, int i, int nc, int reps)
{
    char err[BASE_ERRLEN];
    size_t xl = (size_t)net_shape_numel(net_in_shape(n, i, 0));
    size_t nw = (size_t)net_slice_weights(n, i, 0, nc), nws = kern_workspace_floats(n, i, nc);
    float *x = malloc(xl * sizeof *x), *w = malloc(nw * sizeof *w);
    float *ws = malloc((nws ? nws : 1) * sizeof *ws), *o = malloc(kern_out_floats(n, i, nc) * sizeof *o);
    double *t = malloc((size_t)reps * sizeof *t), med = -1;
    for (size_t e = 0; e < xl; e++) x[e] = (float)((e * 2654435761u) % 2001) / 1000.0f - 1.0f;
    kern_weights_gen(n, i, 0, nc, 1, w);
    const float *in[1] = {x};
    if (kern_run(n, i, 0, nc, in, w, o, ws, err) == 0) {
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            kern_run(n, i, 0, nc, in, w, o, ws, err);
            t[r] = now() - t0;
        }
        med = base_median(t, reps);
    } else {
        fprintf(stderr, "bench_kernels: %s\n", err);
    }
    free(x), free(w), free(ws), free(o), free(t);
    return med;
}

typedef struct {
    double flop, s_def, s_im2col;
} conv_tot;

static const char *algo(const net *n, int i)
{
    const net_layer *L = &n->layers[i];
    net_shape x = net_in_shape(n, i, 0);
    const net_attr *a = &L->a;
    if (a->groups > 1 && x.c / a->groups == 1) return "direct";
    if (a->kh == 1 && a->kw == 1 && a->sh == 1 && a->sw == 1 && !a->pt && !a->pl && !a->pb && !a->pr)
        return "1x1";
    return "im2col";
}

static int bench_convs(const char *name, int reps, double peak, conv_tot *tot)
{
    char err[BASE_ERRLEN];
    net *n = net_open(name, err);
    if (!n) {
        fprintf(stderr, "bench_kernels: %s\n", err);
        return -1;
    }
    conv_tot t = {0, 0, 0};
    char what[64] = "whole";
    if (conv_share > 1) snprintf(what, sizeof what, "'s first 1/%d of its output channels", conv_share);
    printf("# %s: every Conv layer%s%s, median of %d runs (%s time)\n", name, conv_share > 1 ? "" : " ",
           what, reps, use_cpu_clock ? "thread CPU" : "wall");
    printf("%-18s %16s %4s %8s | %7s %7s %6s %-6s | %7s %7s %6s\n", "layer", "in->out", "k/s", "MFLOP",
           "ms", "GFLOP/s", "%peak", "algo", "ms", "GFLOP/s", "%peak");
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        if (L->kind != NET_CONV) continue;
        int nc = conv_nc(n, i);
        /* which algorithm the mode picks, told apart by workspace size */
        kern_set_winograd(4);
        size_t ws4 = kern_workspace_floats(n, i, nc);
        kern_set_winograd(wino_mode);
        size_t ws_def = kern_workspace_floats(n, i, nc);
        double td = time_layer(n, i, nc, reps);
        kern_set_winograd(0);
        int wino = kern_workspace_floats(n, i, nc) != ws_def;
        double ti = wino ? time_layer(n, i, nc, reps) : td;
        kern_set_winograd(wino_mode);
        if (td < 0 || ti < 0) {
            net_free(n);
            return -1;
        }
        double f = 2.0 * (double)L->macs * nc / L->out.c;
        net_shape x = net_in_shape(n, i, 0);
        char io[48], ks[16];
        snprintf(io, sizeof io, "%dx%d:%d->%d", x.h, x.w, x.c, L->out.c);
        snprintf(ks, sizeof ks, "%d/%d", L->a.kh, L->a.sh);
        printf("%-18s %16s %4s %8.1f | %7.3f %7.1f %5.1f%% %-6s | %7.3f %7.1f %5.1f%%\n", L->name, io, ks,
               f / 1e6, td * 1e3, f / td / 1e9, 100 * f / td / 1e9 / peak, wino ? ws_def == ws4 ? "wino4" : "wino2" : algo(n, i),
               ti * 1e3, f / ti / 1e9, 100 * f / ti / 1e9 / peak);
        t.flop += f, t.s_def += td, t.s_im2col += ti;
    }
    printf("%s conv_ms=%.1f conv_gflops=%.1f pct_of_peak=%.1f | im2col_only: conv_ms=%.1f "
           "conv_gflops=%.1f pct_of_peak=%.1f\n", name, t.s_def * 1e3, t.flop / t.s_def / 1e9,
           100 * t.flop / t.s_def / 1e9 / peak, t.s_im2col * 1e3, t.flop / t.s_im2col / 1e9,
           100 * t.flop / t.s_im2col / 1e9 / peak);
    tot->flop += t.flop, tot->s_def += t.s_def, tot->s_im2col += t.s_im2col;
    net_free(n);
    return 0;
}

static int bench_forward(const char *name, int warmup, int reps)
{
    char err[BASE_ERRLEN];
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
    double *lat = malloc((size_t)reps * sizeof *lat), *cpu = malloc((size_t)reps * sizeof *cpu);
    double *ls = calloc((size_t)n->n, sizeof *ls), *acc = calloc((size_t)n->n, sizeof *acc);
    double kind_s[NET_KIND_COUNT] = {0};
    kern_input_gen(n, 7, x);
    int rc = 0;
    for (int r = 0; r < warmup + reps && rc == 0; r++) {
        double t = base_now(), c = proc_cpu();
        rc = kern_model_forward(m, x, y, ls, err);
        t = base_now() - t, c = proc_cpu() - c;
        if (r >= warmup) {
            lat[r - warmup] = t;
            cpu[r - warmup] = c;
            for (int i = 0; i < n->n; i++) acc[i] += ls[i];
        }
    }
    if (rc) {
        fprintf(stderr, "bench_kernels: %s\n", err);
    } else {
        double med = base_median(lat, reps), cmed = base_median(cpu, reps), tot = 0;
        for (int i = 0; i < n->n; i++) kind_s[n->layers[i].kind] += acc[i] / reps, tot += acc[i] / reps;
        printf("%s forward_ms=%.2f min_ms=%.2f cpu_ms=%.2f cpu_min_ms=%.2f (wall median/min, process "
               "CPU median/min of %d after %d warm-up) GMACs=%.3f\n", name, med * 1e3, lat[0] * 1e3,
               cmed * 1e3, cpu[0] * 1e3, reps, warmup, (double)net_total(n, 0).macs / 1e9);
        printf("  wall time by kind:");
        for (int k = 0; k < NET_KIND_COUNT; k++)
            if (kind_s[k] > 0) printf(" %s %.1f%%", net_kind_name((net_kind)k), 100 * kind_s[k] / tot);
        printf("\n");
        if (show_layers)
            for (int i = 0; i < n->n; i++)
                printf("  layer %-24s %-18s %8.3f ms\n", n->layers[i].name,
                       net_kind_name(n->layers[i].kind), acc[i] / reps * 1e3);
    }
    free(x), free(y), free(lat), free(cpu), free(ls), free(acc);
    kern_model_free(m);
    net_free(n);
    return rc ? -1 : 0;
}

/* Median time of rows [h0, h0+nh) x columns [w0, w0+nw) of layer i (all
 * channels; the whole output: the whole layer by kern_run), after one
 * warm-up run.  Every input holds the rows and columns the band reads. */
static double time_band(const net *n, int i, int h0, int nh, int w0, int nwd, int reps)
{
    char err[BASE_ERRLEN];
    const net_layer *L = &n->layers[i];
    int whole = h0 == 0 && nh == L->out.h && w0 == 0 && nwd == L->out.w;
    const float *in[64];
    float *xs[64] = {0};
    for (int k = 0; k < L->nin && k < 64; k++) {
        net_shape s = net_in_shape(n, i, k);
        int r0 = 0, r1 = s.h, q0 = 0, q1 = s.w;
        /* An axis the band does not cut: all of the input (net_band_layer). */
        if (nh != L->out.h) net_rows_in(n, i, k, h0, h0 + nh, &r0, &r1);
        if (nwd != L->out.w) net_cols_in(n, i, k, w0, w0 + nwd, &q0, &q1);
        size_t len = (size_t)s.c * (r1 > r0 ? r1 - r0 : 1) * (q1 > q0 ? q1 - q0 : 1);
        xs[k] = malloc(len * sizeof(float));
        for (size_t e = 0; e < len; e++) xs[k][e] = (float)((e * 2654435761u) % 2001) / 1000.0f - 1.0f;
        in[k] = xs[k];
    }
    size_t nw = (size_t)net_slice_weights(n, i, 0, L->out.c);
    size_t nws = whole ? kern_workspace_floats(n, i, L->out.c)
                       : kern_workspace_band(n, i, h0, nh, w0, nwd);
    float *w = malloc((nw ? nw : 1) * sizeof *w), *ws = malloc((nws ? nws : 1) * sizeof *ws);
    float *o = malloc((size_t)L->out.c * nh * nwd * sizeof *o);
    double *t = malloc((size_t)reps * sizeof *t), med = -1;
    if (nw) kern_weights_gen(n, i, 0, L->out.c, 1, w);
    int rc = 0;
    for (int r = -1; r < reps && !rc; r++) {
        double t0 = now();
        rc = whole ? kern_run(n, i, 0, L->out.c, in, w, o, ws, err)
                   : kern_run_band(n, i, h0, nh, w0, nwd, in, w, o, ws, err);
        if (r >= 0) t[r] = now() - t0;
    }
    if (!rc) med = base_median(t, reps);
    else fprintf(stderr, "bench_kernels: %s\n", err);
    for (int k = 0; k < L->nin && k < 64; k++) free(xs[k]);
    free(w), free(ws), free(o), free(t);
    return med;
}

/* Every layer of a net that may be cut into bands: the whole layer and bands of
 * 1/2, 1/4 and 1/8 of its rows, then of its columns (a middle band: halos
 * on both sides), the band's time per unit of work against the whole
 * layer's (1.00: a band costs its share of the work). */
static int bench_bands(const char *name, int reps)
{
    char err[BASE_ERRLEN];
    net *n = net_open(name, err);
    if (!n) {
        fprintf(stderr, "bench_kernels: %s\n", err);
        return -1;
    }
    static const int parts[] = {2, 4, 8};
    printf("# %s: row and column bands against the whole layer, median of %d runs (%s time); "
           "ratio = (band time / band work) / (whole time / whole work)\n", name, reps,
           use_cpu_clock ? "thread CPU" : "wall");
    printf("%-22s %-16s %9s %9s | %6s %6s %6s | %6s %6s %6s\n", "layer", "kind", "HxW", "whole ms",
           "r1/2", "r1/4", "r1/8", "c1/2", "c1/4", "c1/8");
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        if (!net_layer_rowsplit(n, i) && !net_layer_colsplit(n, i)) continue;
        int mac = L->kind == NET_CONV || L->kind == NET_FC;
        double tw = time_band(n, i, 0, L->out.h, 0, L->out.w, reps);
        if (tw < 0) {
            net_free(n);
            return -1;
        }
        double ww = (double)(mac ? net_box_macs(n, i, 0, L->out.c, 0, L->out.h, 0, L->out.w)
                                 : net_box_ops(n, i, 0, L->out.c, 0, L->out.h, 0, L->out.w));
        char hw[24];
        snprintf(hw, sizeof hw, "%dx%d", L->out.h, L->out.w);
        printf("%-22s %-16s %9s %9.3f |", L->name, L->kind == NET_CONV ? convalgo_name((convalgo)convalgo_of(n, i, kern_conv_rule())) : net_kind_name(L->kind), hw, tw * 1e3);
        for (int cols = 0; cols < 2; cols++) {
            int P = cols ? L->out.w : L->out.h;
            for (int p = 0; p < 3; p++) {
                int nb = P / parts[p], b0 = (P - nb) / 2;
                if (nb < 1) {
                    printf(" %6s", "-");
                    continue;
                }
                int h0 = cols ? 0 : b0, nh = cols ? L->out.h : nb;
                int w0 = cols ? b0 : 0, nwd = cols ? nb : L->out.w;
                double tb = time_band(n, i, h0, nh, w0, nwd, reps);
                if (tb < 0) {
                    net_free(n);
                    return -1;
                }
                double wb = (double)(mac ? net_box_macs(n, i, 0, L->out.c, h0, nh, w0, nwd)
                                         : net_box_ops(n, i, 0, L->out.c, h0, nh, w0, nwd));
                printf(" %6.2f", ww > 0 && wb > 0 ? (tb / wb) / (tw / ww) : 0);
            }
            printf(cols ? "\n" : " |");
        }
    }
    net_free(n);
    return 0;
}

/* corun: one layer on two pinned threads.  Thread 0 always times; thread
 * 1 sleeps on the barrier (alone), rewrites thread 0's input (remote), or
 * runs the same layer on its own buffers (beside).  Barriers, not spins,
 * so an idle core is really idle.  The ways' order rotates every
 * repetition: none always follows the same one. */
enum { CO_ALONE, CO_LOCAL, CO_REMOTE, CO_BESIDE, CO_WAYS };
typedef struct {
    const net *n;
    int layer, reps;
    int cpu[2]; /* the CPUs the two threads are pinned to */
    pthread_barrier_t bar;
    float *x[2], *w[2], *ws[2], *o[2];
    size_t xl;
    double *t[CO_WAYS];
    int rc[2]; /* per thread: no two threads write one int */
} corun_job;

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void fill(float *x, size_t len, unsigned salt)
{
    for (size_t e = 0; e < len; e++) x[e] = (float)(((e + salt) * 2654435761u) % 2001) / 1000.0f - 1.0f;
}

static int corun_run(corun_job *J, int me)
{
    char err[BASE_ERRLEN];
    const float *in[1] = {J->x[me]};
    int nc = J->n->layers[J->layer].out.c;
    return kern_run(J->n, J->layer, 0, nc, in, J->w[me], J->o[me], J->ws[me], err);
}

static int way_of(int r, int k) { return (k + (r + 1)) % CO_WAYS; }

static void *corun_thread(void *arg)
{
    corun_job *J = arg;
    if (pin(J->cpu[1])) J->rc[1] = -1;
    for (int r = -1; r < J->reps; r++)
        for (int k = 0; k < CO_WAYS; k++) {
            int way = way_of(r, k);
            pthread_barrier_wait(&J->bar);
            if (way == CO_REMOTE) fill(J->x[0], J->xl, (unsigned)r);
            pthread_barrier_wait(&J->bar);
            if (way == CO_BESIDE && corun_run(J, 1)) J->rc[1] = -1;
            pthread_barrier_wait(&J->bar);
        }
    return NULL;
}

/* Medians of the four ways for layer i (wall time of thread 0), or -1. */
static int corun_layer(const net *n, int i, int reps, const int cpu[2], double med[CO_WAYS])
{
    const net_layer *L = &n->layers[i];
    corun_job J;
    memset(&J, 0, sizeof J);
    J.n = n, J.layer = i, J.reps = reps, J.cpu[0] = cpu[0], J.cpu[1] = cpu[1];
    J.xl = (size_t)net_shape_numel(net_in_shape(n, i, 0));
    size_t nw = (size_t)net_slice_weights(n, i, 0, L->out.c), nws = kern_workspace_floats(n, i, L->out.c);
    int ok = 1;
    for (int k = 0; k < 2; k++) {
        J.x[k] = malloc(J.xl * sizeof(float)), J.w[k] = malloc((nw ? nw : 1) * sizeof(float));
        J.ws[k] = malloc((nws ? nws : 1) * sizeof(float));
        J.o[k] = malloc(kern_out_floats(n, i, L->out.c) * sizeof(float));
        ok = ok && J.x[k] && J.w[k] && J.ws[k] && J.o[k];
        if (ok) {
            fill(J.x[k], J.xl, 0);
            if (nw) kern_weights_gen(n, i, 0, L->out.c, 1, J.w[k]);
        }
    }
    for (int w = 0; w < CO_WAYS; w++) ok = ok && (J.t[w] = malloc((size_t)reps * sizeof(double)));
    pthread_t th;
    if (ok && !pthread_barrier_init(&J.bar, NULL, 2)) {
        if (!pthread_create(&th, NULL, corun_thread, &J)) {
            for (int r = -1; r < reps; r++)
                for (int k = 0; k < CO_WAYS; k++) {
                    int way = way_of(r, k);
                    pthread_barrier_wait(&J.bar);
                    if (way == CO_LOCAL) fill(J.x[0], J.xl, (unsigned)r);
                    pthread_barrier_wait(&J.bar);
                    double t0 = base_now();
                    if (corun_run(&J, 0)) J.rc[0] = -1;
                    if (r >= 0) J.t[way][r] = base_now() - t0;
                    pthread_barrier_wait(&J.bar);
                }
            pthread_join(th, NULL);
        } else {
            ok = 0;
        }
        pthread_barrier_destroy(&J.bar);
    } else {
        ok = 0;
    }
    ok = ok && !J.rc[0] && !J.rc[1];
    if (ok)
        for (int w = 0; w < CO_WAYS; w++) med[w] = base_median(J.t[w], reps);
    for (int k = 0; k < 2; k++) free(J.x[k]), free(J.w[k]), free(J.ws[k]), free(J.o[k]);
    for (int w = 0; w < CO_WAYS; w++) free(J.t[w]);
    return ok ? 0 : -1;
}

/* Every single-input layer of a net in the four ways; then the median
 * ratio of each way to alone over the layers of each arithmetic intensity
 * ("compute-bound": at least 2 multiply-adds per byte of its input, output
 * and weights; the rest, element-wise kinds, depthwise convolutions,
 * pooling and, at batch 1, fully connected layers, "memory-bound"), and
 * over their summed time.  Thread 0 on the first
 * CPU this process may use, thread 1 on the second (the mask it was given
 * is restored after). */
static int bench_corun(const char *name, int reps)
{
    char err[BASE_ERRLEN];
    cpu_set_t mask;
    int cpu[2] = {-1, -1}, ncpu = 0;
    if (sched_getaffinity(0, sizeof mask, &mask) == 0)
        for (int c = 0; c < CPU_SETSIZE && ncpu < 2; c++)
            if (CPU_ISSET(c, &mask)) cpu[ncpu++] = c;
    if (ncpu < 2) {
        fprintf(stderr, "bench_kernels: corun needs two CPUs this process may use\n");
        return -1;
    }
    net *n = net_open(name, err);
    if (!n) {
        fprintf(stderr, "bench_kernels: %s\n", err);
        return -1;
    }
    int cap = n->n, rc = 0;
    double *rat[2][CO_WAYS], sum[2][CO_WAYS];
    int cnt[2] = {0, 0};
    memset(sum, 0, sizeof sum);
    for (int b = 0; b < 2; b++)
        for (int w = 0; w < CO_WAYS; w++)
            if (!(rat[b][w] = calloc((size_t)cap, sizeof(double)))) rc = -1;
    if (!rc && pin(cpu[0])) {
        fprintf(stderr, "bench_kernels: cannot pin to CPU %d\n", cpu[0]);
        rc = -1;
    }
    if (!rc) {
        printf("# %s: each layer whole on CPU %d (the other thread on CPU %d), wall-clock median of "
               "%d runs; ratios to alone\n", name, cpu[0], cpu[1], reps);
        printf("%-22s %-16s %-8s %9s | %8s %8s %8s\n", "layer", "kind", "bound", "alone ms", "local",
               "remote", "beside");
    }
    for (int i = 0; i < n->n && !rc; i++) {
        const net_layer *L = &n->layers[i];
        if (L->nin != 1) continue;
        double med[CO_WAYS];
        if (corun_layer(n, i, reps, cpu, med)) {
            fprintf(stderr, "bench_kernels: %s: layer %s could not be run (or pinned to CPU %d)\n",
                    name, L->name, cpu[1]);
            rc = -1;
            break;
        }
        double bytes = 4.0 * ((double)net_shape_numel(L->out) + (double)net_shape_numel(net_in_shape(n, i, 0)) +
                              (double)net_slice_weights(n, i, 0, L->out.c));
        int b = (double)net_box_macs(n, i, 0, L->out.c, 0, L->out.h, 0, L->out.w) >= 2.0 * bytes ? 0 : 1;
        printf("%-22s %-16s %-8s %9.3f | %8.2f %8.2f %8.2f\n", L->name,
               L->kind == NET_CONV ? convalgo_name((convalgo)convalgo_of(n, i, kern_conv_rule())) : net_kind_name(L->kind),
               b ? "memory" : "compute", med[CO_ALONE] * 1e3, med[CO_LOCAL] / med[CO_ALONE],
               med[CO_REMOTE] / med[CO_ALONE], med[CO_BESIDE] / med[CO_ALONE]);
        for (int w = 0; w < CO_WAYS; w++) {
            rat[b][w][cnt[b]] = med[w] / med[CO_ALONE];
            sum[b][w] += med[w];
        }
        cnt[b]++;
    }
    sched_setaffinity(0, sizeof mask, &mask);
    static const char *way[CO_WAYS] = {"alone", "local", "remote", "beside"};
    for (int b = 0; b < 2 && !rc; b++) {
        if (!cnt[b]) continue;
        printf("%s %s-bound layers=%d", name, b ? "memory" : "compute", cnt[b]);
        for (int w = 1; w < CO_WAYS; w++)
            printf(" %s_median=%.2f %s_summed=%.2f", way[w], base_median(rat[b][w], cnt[b]), way[w],
                   sum[b][w] / sum[b][CO_ALONE]);
        printf(" alone_ms=%.2f\n", sum[b][CO_ALONE] * 1e3);
    }
    for (int b = 0; b < 2; b++)
        for (int w = 0; w < CO_WAYS; w++) free(rat[b][w]);
    net_free(n);
    return rc;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_kernels peak | convs NET... | bands NET... | corun NET... | forward NET... "
                    "[--reps R] [--warmup W] [--threads T] [--clock cpu|wall] [--no-winograd]\n"
                    "       [--winograd 1|2|4] [--gemm auto|own|blas] [--layers] [--share K]\n");
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
        else if (!strcmp(argv[i], "--clock") && i + 1 < argc) use_cpu_clock = !strcmp(argv[++i], "cpu");
        else if (!strcmp(argv[i], "--no-winograd")) kern_set_winograd(wino_mode = 0);
        else if (!strcmp(argv[i], "--layers")) show_layers = 1;
        else if (!strcmp(argv[i], "--share") && i + 1 < argc) conv_share = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--gemm") && i + 1 < argc) {
            i++;
            kern_set_gemm(!strcmp(argv[i], "blas") ? 0 : !strcmp(argv[i], "own") ? 2 : 1);
        }
        else if (!strcmp(argv[i], "--winograd") && i + 1 < argc) kern_set_winograd(wino_mode = atoi(argv[++i]));
        else if (argv[i][0] != '-' && nnets < 32) nets[nnets++] = argv[i];
        else {
            usage();
            return 2;
        }
    }
    if (reps < 1 || warmup < 0 || threads < 1 || conv_share < 1 ||
        (conv_share > 1 && strcmp(argv[1], "convs"))) { /* --share times convs only */
        usage();
        return 2;
    }
    if (threads > 1 || !strcmp(argv[1], "corun")) use_cpu_clock = 0; /* corun times wall clock */
    kern_set_threads(threads);
    printf("openblas_core=%s gemm=%s threads=%d clock=%s\n", openblas_get_corename(),
           kern_gemm_own() ? "own-avx512" : "blas", threads, use_cpu_clock ? "thread-cpu" : "wall");
    if (!strcmp(argv[1], "peak")) {
        printf("sgemm_peak_gflops=%.1f\n", sgemm_peak(0));
        if (kern_gemm_own()) printf("own_gemm_peak_gflops=%.1f\n", sgemm_peak(1));
        return 0;
    }
    if (!strcmp(argv[1], "convs")) {
        double peak = sgemm_peak(0);
        conv_tot t = {0, 0, 0};
        printf("sgemm_peak_gflops=%.1f\n", peak);
        if (kern_gemm_own()) printf("own_gemm_peak_gflops=%.1f\n", sgemm_peak(1));
        for (int k = 0; k < nnets; k++)
            if (bench_convs(nets[k], reps, peak, &t)) return 1;
        printf("all conv_gflops=%.1f pct_of_peak=%.1f | im2col_only: conv_gflops=%.1f pct_of_peak=%.1f\n",
               t.flop / t.s_def / 1e9, 100 * t.flop / t.s_def / 1e9 / peak, t.flop / t.s_im2col / 1e9,
               100 * t.flop / t.s_im2col / 1e9 / peak);
        return 0;
    }
    if (!strcmp(argv[1], "bands")) {
        for (int k = 0; k < nnets; k++)
            if (bench_bands(nets[k], reps)) return 1;
        return 0;
    }
    if (!strcmp(argv[1], "corun")) {
        /* One kernel thread per core (threads would pile onto the pinned
         * CPU), timed by the wall clock. */
        if (threads != 1) {
            fprintf(stderr, "bench_kernels: corun runs one kernel thread per core (no --threads)\n");
            return 2;
        }
        for (int k = 0; k < nnets; k++)
            if (bench_corun(nets[k], reps)) return 1;
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
