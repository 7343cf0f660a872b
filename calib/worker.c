/* worker.c -- calib_worker: the measurements of a calibration, one MPI
 * rank per device (`dse calib-worker` under mpirun, launched by
 * calib_run).  Phases, each ended by a barrier that idle ranks wait at
 * without spinning (so they do not steal a core from the rank measuring):
 *
 *  1. compute: on the first device of each kind, every layer of every
 *     network (and of the probe networks) run in inference order, each
 *     layer timed alone, at channel shares 1, 1/2, 1/3, 1/4 for Conv and
 *     FC (the shares hybrid chromosomes produce), the passes cycling
 *     through the shares; in the same rounds, a middle band of 1/2, 1/4
 *     and 1/8 of the rows of every row-splittable layer of the calibrated
 *     networks, and of the columns of every column-splittable one
 *     (kern_run_band, what a spatial mapping's bands run); and
 *     CONCAT-like copies;
 *  1b. every CPU device's speed: whole passes of the calibrated networks,
 *     devices in turn, three rounds alternating (per_device factors);
 *  1c. devices that share a board's memory: the first two CPU devices of
 *     one board run every layer of the calibrated networks alone and at
 *     the same time, in turn (corun_net: the layers' corun factors);
 *  2. links: MPI ping-pong from 1 KB to 64 MB between the first device
 *     pair of each link class and of each set of pairs the platform gives
 *     other figures (calib_link_rep), the cost of issuing an MPI_Isend, and
 *     at each size what a receiver arriving late pays (late_pickup) and
 *     the time of an exchange as a split mapping's (exchange_pull);
 *  3. power: idle and busy power of every device with an energy sensor.
 *
 * Invariant: the kernels, thread count, malloc settings and the lifetime
 * of each output (malloc'd when computed, freed after its last reader)
 * are the runtime's own (kernels/kernels.h, rt_threads, exec.c's mallopt,
 * rank.c), so a timing here is what the same step costs inside `dse
 * exec`.  On a
 * single-threaded device a sample is the thread's CPU time, which does not
 * include time the thread spent preempted by other processes; how many
 * samples were preempted is recorded.  Rank 0 writes the raw JSON
 * (temp file + rename); a failure anywhere is agreed on by every rank.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "calib.h"
#include "runtime.h"
#include "jsonutil.h"
#include "kernels.h"

#include <cJSON.h>
#include <malloc.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* Ranks that wait at a barrier nap at least this long between polls (up
 * to 5 times as long as the wait lasts, rt_wait): they must leave the
 * cores to the one measuring. */
#define CALM_NAP_US 2000

/* Same error on every rank: the largest code wins; rank 0 gets the text of
 * the lowest failing rank. */
static int agree(int rc, char *err)
{
    int all = 0, rank, who, first;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!all) return 0;
    who = rc ? rank : 1 << 30;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first != 0) {
        if (rank == first) MPI_Send(err, BASE_ERRLEN, MPI_CHAR, 0, 99, MPI_COMM_WORLD);
        if (rank == 0) MPI_Recv(err, BASE_ERRLEN, MPI_CHAR, first, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return all;
}

/* One timing sample: CPU time of this thread when kernels are
 * single-threaded (immune to preemption), else wall time, less what the
 * stopwatch itself reads between its two ends (`zero`, sw_zero).  Reading
 * the thread's CPU clock is a system call (the wall clock is not), so an
 * empty interval reads about a microsecond: kept in, it would enter every
 * fitted overhead, while dse exec times no layer on its own. */
typedef struct {
    int threads;
    double w0, c0;
    double zero;
} stopwatch;

static void sw_start(stopwatch *s)
{
    s->w0 = base_now();
    s->c0 = s->threads == 1 ? base_cpu_now() : 0;
}

/* The least a sample reads: a step that computes nothing (Flatten) still
 * takes a few nanoseconds, and the fits weigh samples by 1 / time^2. */
#define SW_FLOOR 1e-8

/* Returns the sample; *preempted = the wall clock ran ahead of the CPU. */
static double sw_stop(const stopwatch *s, int *preempted)
{
    double w = base_now() - s->w0, t = w;
    if (s->threads != 1) {
        *preempted = 0;
    } else {
        double c = base_cpu_now() - s->c0;
        *preempted = c < 0.9 * w && w - c > 5e-6;
        t = c < w ? c : w;
    }
    return t - s->zero > SW_FLOOR ? t - s->zero : SW_FLOOR;
}

/* A stopwatch whose zero is the median reading of an empty interval,
 * measured once per process for each clock (CPU time, wall time). */
static stopwatch sw_zero(int threads)
{
    enum { N = 101 };
    static double zero[2];
    static int known[2];
    int k = threads == 1;
    stopwatch s = {threads, 0, 0, 0};
    if (!known[k]) {
        double t[N];
        int pre;
        for (int i = 0; i < N; i++) {
            sw_start(&s);
            t[i] = sw_stop(&s, &pre);
        }
        zero[k] = base_median(t, N);
        known[k] = 1;
    }
    s.zero = zero[k];
    return s;
}

static void fill_pattern(float *x, size_t len, unsigned salt)
{
    /* O(1) magnitudes, no denormals: what kern_time_slice feeds too. */
    for (size_t e = 0; e < len; e++) x[e] = (float)((e * 2654435761u + salt) % 2001) / 1000.0f - 1.0f;
}

/* ---- phase 1: compute ---- */

/* The state of inference-ordered passes over one network at nsh channel
 * shares.  The weights of every share are generated once and kept, so the
 * passes can cycle through the shares: slow phases of the machine (other
 * processes' memory traffic) then hit every share alike instead of
 * bending the per-layer lines. */
typedef struct {
    const net *n;
    int probe, nsh, reps;
    const int *shares; /* 1/k of the output channels */
    float *input;
    float **out;       /* per layer: its output in the pass running, or NULL */
    const float **ins; /* a layer's inputs (the most any layer has) */
    int *lastuse;      /* per layer: the last layer that reads it (itself if none) */
    float **w;         /* [nsh][L]: weights of slice [0, nc) inside warena[j]; share j > 0 may alias share 0 */
    float **warena;    /* [nsh]: one kern_alloc_streamed array per share, as dse exec holds its weights */
    int *nc;           /* [nsh][L]: channels computed */
    float *ws;
    size_t nws;        /* floats of ws */
    double *samples;   /* [nsh][L][reps] */
    int *npre;         /* [nsh][L] */
    /* Bands (calibrated networks only): pass b < NBAND_PARTS computes a
     * middle band of L->out.h / BAND_PARTS[b] rows of every row-splittable
     * layer, pass NBAND_PARTS + b one of L->out.w / BAND_PARTS[b] columns
     * of every column-splittable one (bn 0: none, too thin or as thin as
     * an earlier pass's along that axis; band_cols). */
    int nbp;
    int *b0, *bn;      /* [nbp][L]: first row (column) and rows (columns) */
    double *bsamples;  /* [nbp][L][reps] */
    int *bnpre;        /* [nbp][L] */
} seq_state;

/* The band passes: 1/2, 1/4 and 1/8 of each layer's rows, the bands a
 * spatial mapping on 2, 4 and 8 devices gives a layer (docs/calibration.md). */
static const int BAND_PARTS[] = {2, 4, 8};
#define NBAND_PARTS ((int)(sizeof BAND_PARTS / sizeof *BAND_PARTS))

/* Band pass b cuts columns (else rows). */
static int band_cols(int b) { return b >= NBAND_PARTS; }

/* Band pass b's box of layer i: rows [h0, h0+nh) x columns [w0, w0+nw). */
static void band_box(const seq_state *s, int b, int i, int *h0, int *nh, int *w0, int *nw)
{
    const net_layer *Ly = &s->n->layers[i];
    size_t at = (size_t)b * s->n->n + i;
    *h0 = 0, *nh = Ly->out.h, *w0 = 0, *nw = Ly->out.w;
    if (band_cols(b))
        *w0 = s->b0[at], *nw = s->bn[at];
    else
        *h0 = s->b0[at], *nh = s->bn[at];
}

static void seq_free(seq_state *s)
{
    if (!s->n) return;
    int L = s->n->n;
    for (int i = 0; s->out && i < L; i++) free(s->out[i]);
    free(s->lastuse);
    free(s->ins);
    for (int j = 0; s->warena && j < s->nsh; j++) free(s->warena[j]);
    free(s->warena);
    free(s->input);
    free(s->out);
    free(s->w);
    free(s->nc);
    free(s->ws);
    free(s->samples);
    free(s->npre);
    free(s->b0);
    free(s->bn);
    free(s->bsamples);
    free(s->bnpre);
}

/* Band geometry of the band passes (seq_state), and their scratch. */
static int bands_init(seq_state *s)
{
    const net *n = s->n;
    int L = n->n;
    s->nbp = 2 * NBAND_PARTS;
    s->b0 = calloc((size_t)L * s->nbp, sizeof *s->b0);
    s->bn = calloc((size_t)L * s->nbp, sizeof *s->bn);
    s->bsamples = calloc((size_t)L * s->nbp * s->reps, sizeof *s->bsamples);
    s->bnpre = calloc((size_t)L * s->nbp, sizeof *s->bnpre);
    if (!s->b0 || !s->bn || !s->bsamples || !s->bnpre) return -1;
    size_t nws = 0;
    for (int i = 0; i < L; i++) {
        for (int b = 0; b < s->nbp; b++) {
            int cols = band_cols(b);
            if (!(cols ? net_layer_colsplit(n, i) : net_layer_rowsplit(n, i))) continue;
            int X = cols ? n->layers[i].out.w : n->layers[i].out.h;
            int nx = X / BAND_PARTS[b % NBAND_PARTS];
            for (int e = cols ? NBAND_PARTS : 0; e < b; e++) nx = s->bn[(size_t)e * L + i] == nx ? 0 : nx;
            if (nx < 1) continue;
            s->b0[(size_t)b * L + i] = (X - nx) / 2;
            s->bn[(size_t)b * L + i] = nx;
            int h0, nh, w0, nw;
            band_box(s, b, i, &h0, &nh, &w0, &nw);
            size_t w = kern_workspace_band(n, i, h0, nh, w0, nw);
            if (w > nws) nws = w;
        }
    }
    /* The whole layers' scratch (seq_init) is the larger as a rule; grow
     * it where a band's is not. */
    if (nws > s->nws) {
        float *g = realloc(s->ws, nws * sizeof(float));
        if (!g) return -1;
        s->ws = g, s->nws = nws;
    }
    return 0;
}

static int seq_init(seq_state *s, const net *n, int probe, int bands, const int *shares, int nsh,
                    int reps, uint64_t seed, char *err)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->probe = probe;
    s->shares = shares;
    s->nsh = nsh;
    s->reps = reps;
    int L = n->n;
    size_t nws = 0;
    s->out = calloc((size_t)L, sizeof *s->out);
    s->w = calloc((size_t)L * nsh, sizeof *s->w);
    s->warena = calloc((size_t)nsh, sizeof *s->warena);
    s->nc = calloc((size_t)L * nsh, sizeof *s->nc);
    s->samples = calloc((size_t)L * nsh * reps, sizeof *s->samples);
    s->npre = calloc((size_t)L * nsh, sizeof *s->npre);
    s->input = malloc((size_t)net_shape_numel(n->input) * sizeof(float));
    s->lastuse = malloc((size_t)L * sizeof *s->lastuse);
    int maxin = 1;
    for (int i = 0; i < L; i++) maxin = n->layers[i].nin > maxin ? n->layers[i].nin : maxin;
    s->ins = malloc((size_t)maxin * sizeof *s->ins);
    if (!s->out || !s->lastuse || !s->ins || !s->w || !s->warena || !s->nc || !s->samples || !s->npre ||
        !s->input)
        goto oom;
    fill_pattern(s->input, (size_t)net_shape_numel(n->input), 7);
    for (int i = 0; i < L; i++) {
        s->lastuse[i] = i;
        for (int k = 0; k < n->layers[i].nin; k++)
            if (n->layers[i].in[k] != NET_INPUT) s->lastuse[n->layers[i].in[k]] = i;
        size_t w = kern_workspace_floats(n, i, n->layers[i].out.c);
        if (w > nws) nws = w;
    }
    if (nws && !(s->ws = malloc(nws * sizeof(float)))) goto oom;
    s->nws = nws;
    /* Weights per share: splittable layers cut to their first share, the
     * others whole (shared with share 0).  Each share's weights are one
     * huge-page array, as a rank of dse exec holds its own (exec.c), so
     * that the weights are streamed through the same kind of pages. */
    for (int j = 0; j < nsh; j++) {
        size_t total = 0;
        for (int i = 0; i < L; i++) {
            const net_layer *Ly = &n->layers[i];
            int k = shares[j];
            int nc = net_kind_splittable(Ly->kind) && k > 1 ? calib_share_channels(Ly->out.c, k) : Ly->out.c;
            s->nc[(size_t)j * L + i] = nc;
            if (j == 0 || nc != s->nc[i]) total += (size_t)net_slice_weights(n, i, 0, nc);
        }
        if (total && !(s->warena[j] = kern_alloc_streamed(total))) goto oom;
        size_t off = 0;
        for (int i = 0; i < L; i++) {
            size_t at = (size_t)j * L + i;
            int nc = s->nc[at];
            if (j > 0 && nc == s->nc[i]) {
                s->w[at] = s->w[i];
                continue;
            }
            size_t nw = (size_t)net_slice_weights(n, i, 0, nc);
            if (!nw) continue;
            s->w[at] = s->warena[j] + off;
            off += nw;
            kern_weights_gen(n, i, 0, nc, seed, s->w[at]);
        }
    }
    if (bands && bands_init(s)) goto oom;
    return 0;
oom:
    base_seterr(err, "%s: out of memory for the compute timings", n->name);
    return -1;
}

/* Outputs live as in a rank of dse exec (runtime/rank.c): each layer's
 * output is malloc'd when it is computed and freed after its last reader,
 * so a kernel writes into memory the heap just recycled, warm in cache as
 * it is there.  Outputs kept alive for the whole run (as this worker once
 * did, 100+ MB for resnet50) are cold: ReLU, BatchNorm and Add then timed
 * 1.5-2x slower than they run inside dse exec. */
static float *pass_out(seq_state *s, int i, char *err)
{
    size_t len = (size_t)net_shape_numel(s->n->layers[i].out);
    free(s->out[i]);
    if (!(s->out[i] = malloc(len * sizeof(float))))
        base_seterr(err, "%s: out of memory for the compute timings", s->n->name);
    return s->out[i];
}

/* After layer i's timed step, which wrote the first `written` floats of
 * its output: the rest gets finite values (a slice or a band leaves them
 * unwritten, and its readers must not meet NaNs or denormals), then the
 * outputs whose last reader was i are freed. */
static void pass_done(seq_state *s, int i, size_t written)
{
    const net_layer *Ly = &s->n->layers[i];
    size_t len = (size_t)net_shape_numel(Ly->out);
    if (written < len) fill_pattern(s->out[i] + written, len - written, (unsigned)i);
    for (int k = 0; k < Ly->nin; k++) {
        int q = Ly->in[k];
        if (q != NET_INPUT && s->lastuse[q] == i) {
            free(s->out[q]);
            s->out[q] = NULL;
        }
    }
    if (s->lastuse[i] == i) {
        free(s->out[i]);
        s->out[i] = NULL;
    }
}

/* One inference-ordered pass of band pass b: sample r of every banded
 * layer (r < 0: warm-up).  The weights are the whole layer's (share 1).
 * A band reads the first rows of its producers' output arrays and writes
 * the first rows of its own, the arrays the whole layers use: the same
 * memory, as warm or as cold as in the passes it is compared with (a
 * scratch array reused by every band stays in cache, and made ReLU and
 * BatchNorm bands look twice as fast as they run). */
static int band_pass(seq_state *s, int b, int r, int threads, char *err)
{
    const net *n = s->n;
    int L = n->n;
    stopwatch sw = sw_zero(threads);
    for (int i = 0; i < L; i++) {
        const net_layer *Ly = &n->layers[i];
        size_t at = (size_t)b * L + i;
        if (!s->bn[at]) {
            /* Not banded in this pass: its readers get values, not a time. */
            if (!pass_out(s, i, err)) return -1;
            pass_done(s, i, 0);
            continue;
        }
        const float **ins = s->ins;
        for (int k = 0; k < Ly->nin; k++)
            ins[k] = Ly->in[k] == NET_INPUT ? s->input : s->out[Ly->in[k]];
        float *o = pass_out(s, i, err);
        if (!o) return -1;
        int pre;
        sw_start(&sw);
        int h0, nh, w0, nw;
        band_box(s, b, i, &h0, &nh, &w0, &nw);
        int rc = kern_run_band(n, i, h0, nh, w0, nw, ins, s->w[i], o, s->ws, err);
        double t = sw_stop(&sw, &pre);
        if (rc) return -1;
        if (r >= 0) {
            s->bsamples[at * s->reps + r] = t;
            s->bnpre[at] += pre;
        }
        pass_done(s, i, (size_t)Ly->out.c * nh * nw);
    }
    return 0;
}

/* One inference-ordered pass at share j; sample r of every layer (r < 0:
 * warm-up; threads 0: no stopwatch at all, a pass as dse exec runs it). */
static int seq_pass(seq_state *s, int j, int r, int threads, char *err)
{
    const net *n = s->n;
    int L = n->n;
    stopwatch sw = threads ? sw_zero(threads) : (stopwatch){0, 0, 0, 0};
    for (int i = 0; i < L; i++) {
        const net_layer *Ly = &n->layers[i];
        const float **ins = s->ins;
        size_t at = (size_t)j * L + i;
        for (int k = 0; k < Ly->nin; k++)
            ins[k] = Ly->in[k] == NET_INPUT ? s->input : s->out[Ly->in[k]];
        float *o = pass_out(s, i, err);
        if (!o) return -1;
        if (!threads) {
            if (kern_run(n, i, 0, s->nc[at], ins, s->w[at], o, s->ws, err)) return -1;
            pass_done(s, i, kern_out_floats(n, i, s->nc[at]));
            continue;
        }
        int pre;
        sw_start(&sw);
        int rc = kern_run(n, i, 0, s->nc[at], ins, s->w[at], o, s->ws, err);
        double t = sw_stop(&sw, &pre);
        if (rc) return -1;
        if (r >= 0) {
            s->samples[at * s->reps + r] = t;
            s->npre[at] += pre;
        }
        pass_done(s, i, kern_out_floats(n, i, s->nc[at]));
    }
    return 0;
}

/* One device's speed: the median wall time of reps whole passes (share 1)
 * after one untimed pass, into *sec.  Wall time, not the sum of each
 * layer's sample: a single-threaded layer's sample is the thread's CPU
 * time (sw_stop, immune to preemption), which does not count the waits of
 * a board under a CPU quota, nor anything else a whole inference pays
 * beyond its layers (emu-3-mixed: boards of share 0.6 and 0.4 timed as
 * fast as the board of share 1).  No per-layer stopwatch runs inside the
 * pass: its clock reads, a microsecond or two per layer, are no part of
 * an inference, and on a network of tiny layers they were most of the
 * pass (toy6: a factor of 15).  A paced board (rt_pace) paces each pass
 * as dse exec paces its steps. */
static int time_pass(const net *n, int reps, uint64_t seed, rt_pace *pace, double *sec, char *err)
{
    static const int one[] = {1};
    seq_state s;
    int rc = -1;
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) {
        base_seterr(err, "out of memory");
        return -1;
    }
    if (seq_init(&s, n, 0, 0, one, 1, reps, seed, err)) goto out;
    for (int r = -1; r < reps; r++) {
        double t0 = base_now();
        rt_pace_begin(pace);
        if (seq_pass(&s, 0, r, 0, err)) goto out;
        rt_pace_end(pace, 1);
        if (r >= 0) t[r] = base_now() - t0;
    }
    *sec = base_median(t, reps);
    rc = 0;
out:
    seq_free(&s);
    free(t);
    return rc;
}

/* A timing record of layer `layer` (a "compute" or a "bands" entry):
 * who timed what, then the caller's fields, then the median and its
 * sample counts (rec_end appends it to arr: 0, or -1 out of memory). */
static cJSON *rec_begin(const char *kind, int rank, const net *n, int layer)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "kind", kind);
    cJSON_AddNumberToObject(o, "rank", rank);
    cJSON_AddStringToObject(o, "network", n->name);
    cJSON_AddStringToObject(o, "layer", n->layers[layer].name);
    cJSON_AddNumberToObject(o, "index", layer);
    return o;
}

static int rec_end(cJSON *arr, cJSON *o, double med, int reps, int npre)
{
    cJSON_AddNumberToObject(o, "seconds", med);
    cJSON_AddNumberToObject(o, "samples", reps);
    cJSON_AddNumberToObject(o, "preempted", npre);
    if (cJSON_AddItemToArray(arr, o)) return 0;
    cJSON_Delete(o);
    return -1;
}

/* The spread of n sorted samples relative to their median med: the
 * interquartile range / 1.349 (a normal's standard deviation), robust to
 * the odd preempted sample; 0 with fewer than 4 samples. */
static double rel_spread(const double *v, int n, double med)
{
    if (n < 4 || !(med > 0)) return 0;
    return (v[(3 * n) / 4] - v[n / 4]) / 1.349 / med;
}

static int add_compute(cJSON *arr, const char *kind, int rank, const seq_state *s, int j, int layer,
                       double med)
{
    const net *n = s->n;
    size_t at = (size_t)j * n->n + layer;
    cJSON *o = rec_begin(kind, rank, n, layer);
    if (!o) return -1;
    cJSON_AddBoolToObject(o, "probe", s->probe);
    cJSON_AddStringToObject(o, "class", cost_class_name(cost_class(n, layer, kern_conv_rule())));
    cJSON_AddNumberToObject(o, "share", s->shares[j]);
    cJSON_AddNumberToObject(o, "nc", s->nc[at]);
    cJSON_AddNumberToObject(o, "work", (double)calib_work(n, layer, 0, s->nc[at]));
    /* How much the layer's time varies from pass to pass (the samples are
     * sorted: base_median): calibrate.c's step spread. */
    cJSON_AddNumberToObject(o, "spread", rel_spread(s->samples + at * s->reps, s->reps, med));
    return rec_end(arr, o, med, s->reps, s->npre[at]);
}

/* The "bands" record of layer `layer`'s band pass b (median med). */
static int add_band(cJSON *arr, const char *kind, int rank, const seq_state *s, int b, int layer,
                    double med)
{
    size_t at = (size_t)b * s->n->n + layer;
    cJSON *o = rec_begin(kind, rank, s->n, layer);
    if (!o) return -1;
    /* rows: "height", "h0", "rows"; columns: "width", "w0", "columns" */
    int cols = band_cols(b);
    const net_layer *Ly = &s->n->layers[layer];
    cJSON_AddStringToObject(o, "axis", CALIB_BAND_UNITS(cols));
    cJSON_AddNumberToObject(o, CALIB_BAND_EXTENT(cols), cols ? Ly->out.w : Ly->out.h);
    cJSON_AddNumberToObject(o, CALIB_BAND_START(cols), s->b0[at]);
    cJSON_AddNumberToObject(o, CALIB_BAND_UNITS(cols), s->bn[at]);
    return rec_end(arr, o, med, s->reps, s->bnpre[at]);
}

static int time_net(const net *n, int probe, const int *shares, int nshares, int reps,
                    uint64_t seed, int threads, const char *kind, int rank, cJSON *arr,
                    cJSON *barr, char *err)
{
    seq_state s;
    int rc = -1, warm = 2, nsplit = 0;
    for (int i = 0; i < n->n; i++) nsplit += net_kind_splittable(n->layers[i].kind);
    if (!nsplit) nshares = 1; /* shares below 1 would change nothing */
    if (seq_init(&s, n, probe, !probe, shares, nshares, reps, seed, err)) goto out;
    /* Warm-up passes at every share, then the timed passes cycling through
     * the shares. */
    for (int r = -warm; r < reps; r++) {
        for (int j = 0; j < nshares; j++)
            if (seq_pass(&s, j, r, threads, err)) goto out;
        /* The band passes in the same rounds as the whole layers they are
         * compared with (calibrate.c divides one by the other). */
        for (int b = 0; b < s.nbp; b++)
            if (band_pass(&s, b, r, threads, err)) goto out;
    }
    for (int b = 0; b < s.nbp; b++)
        for (int i = 0; i < n->n; i++)
            if (s.bn[(size_t)b * n->n + i] &&
                add_band(barr, kind, rank, &s, b, i,
                         base_median(s.bsamples + ((size_t)b * n->n + i) * reps, reps))) {
                base_seterr(err, "out of memory");
                goto out;
            }
    for (int j = 0; j < nshares; j++)
        for (int i = 0; i < n->n; i++) {
            const net_layer *L = &n->layers[i];
            size_t at = (size_t)j * n->n + i;
            /* Shares below 1 only change splittable layers. */
            if (shares[j] > 1 && (!net_kind_splittable(L->kind) || s.nc[at] == L->out.c)) continue;
            double med = base_median(s.samples + at * reps, reps);
            if (add_compute(arr, kind, rank, &s, j, i, med)) {
                base_seterr(err, "out of memory");
                goto out;
            }
        }
    rc = 0;
out:
    seq_free(&s);
    return rc;
}

/* ---- phase 1c: devices that share a board's memory ---- */

/* The two ranks of a pair wait for each other like this: a rank waiting
 * while the other times a layer alone must leave the memory to it (a
 * poll every 20-100 us, rt_wait).  Before both time a layer at once, a
 * second exchange in MPI_Wait's spin lines them up: the first one can
 * find the other still napping for up to ~150 us, and a "beside" sample
 * that starts that much before the other's would not be beside it. */
#define PAIR_NAP_US 20
enum { TAG_PAIR = 70, TAG_PAIR_OK = 71, TAG_PAIR_DONE = 72 };

static void pair_sync(int peer, int spin)
{
    int x = 0, y = 0;
    MPI_Request q[2];
    MPI_Irecv(&y, 1, MPI_INT, peer, TAG_PAIR, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(&x, 1, MPI_INT, peer, TAG_PAIR, MPI_COMM_WORLD, &q[1]);
    rt_wait(&q[0], MPI_STATUS_IGNORE, PAIR_NAP_US);
    rt_wait(&q[1], MPI_STATUS_IGNORE, PAIR_NAP_US);
    if (spin)
        MPI_Sendrecv(&x, 1, MPI_INT, peer, TAG_PAIR, &y, 1, MPI_INT, peer, TAG_PAIR, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
}

/* Every layer of n, whole, in inference order, on ranks a (= first) and
 * peer: a alone (the peer waits) and both at once, in turn, repetition
 * after repetition, so that a drift of the machine falls on both ways
 * alike.  Rank `first` records each layer's median alone and beside the
 * other ("corun" records: calibrate.c's corun factors).  Both ranks go
 * through every synchronisation whatever fails, and agree at the end. */
static int corun_net(const net *n, int me, int first, int peer, int reps, uint64_t seed,
                     int threads, const char *kind, cJSON *arr, char *err)
{
    static const int ones[] = {1, 1}; /* share 0: alone, share 1 (aliased weights): beside */
    seq_state s;
    int ok = seq_init(&s, n, 0, 0, ones, 2, reps, seed, err) == 0, both = 0;
    MPI_Sendrecv(&ok, 1, MPI_INT, peer, TAG_PAIR_OK, &both, 1, MPI_INT, peer, TAG_PAIR_OK,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    both = both && ok; /* the same on both ranks: both run the loop, or neither */
    stopwatch sw = sw_zero(threads);
    int L = n->n;
    for (int r = -1; both && r < reps; r++) /* every synchronisation, even after a failure */
        for (int i = 0; i < L; i++) {
            const net_layer *Ly = &n->layers[i];
            const float **ins = s.ins;
            for (int k = 0; k < Ly->nin; k++)
                ins[k] = Ly->in[k] == NET_INPUT ? s.input : s.out[Ly->in[k]];
            float *o = ok ? pass_out(&s, i, err) : NULL;
            ok = ok && o;
            /* Which way runs first alternates: the first writes the
             * freshly allocated output, the second finds it in cache. */
            for (int w2 = 0; w2 < 2; w2++) {
                int way = r & 1 ? 1 - w2 : w2;
                pair_sync(peer, way == 1);
                if (!ok || (way == 0 && me != first)) continue;
                int pre;
                sw_start(&sw);
                ok = kern_run(n, i, 0, Ly->out.c, ins, s.w[i], o, s.ws, err) == 0;
                double t = sw_stop(&sw, &pre);
                if (r >= 0) {
                    s.samples[((size_t)way * L + i) * reps + r] = t;
                    s.npre[(size_t)way * L + i] += pre;
                }
            }
            if (ok) pass_done(&s, i, kern_out_floats(n, i, Ly->out.c));
        }
    /* The records first (rank `first`), so that a failure there is agreed
     * on too: both ranks then return the same and call the next network
     * alike. */
    for (int i = 0; ok && both && me == first && i < L; i++) {
        cJSON *o = rec_begin(kind, me, n, i);
        if (o) {
            cJSON_AddNumberToObject(o, "beside", peer);
            cJSON_AddNumberToObject(o, "alone", base_median(s.samples + (size_t)i * reps, reps));
        }
        if (!o || rec_end(arr, o, base_median(s.samples + ((size_t)L + i) * reps, reps), reps,
                          s.npre[(size_t)L + i])) {
            base_seterr(err, "out of memory");
            ok = 0;
        }
    }
    int all = 0;
    MPI_Sendrecv(&ok, 1, MPI_INT, peer, TAG_PAIR_DONE, &all, 1, MPI_INT, peer, TAG_PAIR_DONE,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int rc = ok && all ? 0 : -1;
    if (rc) {
        /* Both know it failed: the one that did not gets the other's reason
         * (agree() reports the lower rank's text). */
        char theirs[BASE_ERRLEN];
        MPI_Sendrecv(err, BASE_ERRLEN, MPI_CHAR, peer, TAG_PAIR_DONE, theirs, BASE_ERRLEN, MPI_CHAR,
                     peer, TAG_PAIR_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        theirs[BASE_ERRLEN - 1] = 0;
        if (ok) base_seterr(err, "%.900s (rank %d, in the shared-memory timings)", theirs, peer);
    }
    seq_free(&s);
    return rc;
}

static volatile char copy_sink;

/* Read bytes at p a cache line at a time (into copy_sink, so the reads
 * stay): brings them into this core's caches, and pushes out what was
 * there when bytes exceed the last-level cache. */
static void read_lines(const void *p, size_t bytes)
{
    const char *c = p;
    char acc = 0;
    for (size_t k = 0; k < bytes; k += 64) acc += c[k];
    copy_sink += acc;
}

/* CONCAT: malloc the output and copy two slices into it, as exec.c does,
 * and as a concat meets its data: the pieces fresh (a slice this device
 * just computed, one it just received), the output cold (a buffer last
 * touched long before).  Before each copy the core reads COPY_EVICT bytes
 * (more than a last-level cache holds), then the two pieces, outside the
 * timing.  Timed hot (the same copy again and again), copies up to 1 MB
 * ran at 30-110 GB/s here and the fitted bandwidth came out at 80-90 GB/s,
 * while the concats of a split efficientnet_b0 ran at 8 GB/s (below 64 KB)
 * and 16-19 GB/s (64 KB to 5 MB) in `dse exec --trace`; so timed, this
 * machine copies 12 GB/s at 16 KB, 19-25 GB/s from 64 KB to 1 MB, 15 GB/s
 * from 4 MB (all cold: 8-15 GB/s). */
enum { COPY_EVICT = 64 << 20 };

static int time_copies(int quick, int reps, int threads, const char *kind, int rank, cJSON *arr,
                       char *err)
{
    size_t maxb = quick ? (16u << 20) : (64u << 20);
    char *a = malloc(maxb / 2), *b = malloc(maxb / 2), *ev = malloc(COPY_EVICT);
    double *t = malloc((size_t)reps * sizeof *t);
    if (!a || !b || !ev || !t) {
        free(a);
        free(b);
        free(ev);
        free(t);
        base_seterr(err, "out of memory for the copy timings");
        return -1;
    }
    memset(a, 1, maxb / 2);
    memset(b, 2, maxb / 2);
    memset(ev, 3, COPY_EVICT);
    stopwatch sw = sw_zero(threads);
    for (size_t bytes = 16u << 10; bytes <= maxb; bytes *= 4) {
        int npre = 0;
        for (int r = -2; r < reps; r++) {
            int pre;
            read_lines(ev, COPY_EVICT);
            read_lines(a, bytes / 2);
            read_lines(b, bytes / 2);
            sw_start(&sw);
            char *o = malloc(bytes);
            if (!o) break;
            memcpy(o, a, bytes / 2);
            memcpy(o + bytes / 2, b, bytes / 2);
            double x = sw_stop(&sw, &pre);
            copy_sink += o[bytes - 1]; /* keeps the copy observable */
            free(o);
            if (r >= 0) {
                t[r] = x;
                npre += pre;
            }
        }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", kind);
        cJSON_AddNumberToObject(o, "rank", rank);
        cJSON_AddNumberToObject(o, "bytes", (double)bytes);
        cJSON_AddNumberToObject(o, "seconds", base_median(t, reps));
        cJSON_AddNumberToObject(o, "preempted", npre);
        cJSON_AddItemToArray(arr, o);
    }
    free(t);
    free(a);
    free(b);
    free(ev);
    return 0;
}

/* ---- phase 2: links ---- */

static long involuntary_switches(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_THREAD, &u)) return 0;
    return u.ru_nivcsw;
}

/* A receiver that reaches its RECV late, after a compute step, as in
 * `dse exec`: the message was sent (its sender waits in MPI) while the
 * receiver streamed through memory with its receive already posted; the
 * sample is the receiver's MPI_Wait.  That costs more than a ping-pong
 * (whose ranks sit in MPI with hot caches): the payload moves only inside
 * the receiver's MPI call (CMA pull), after a handshake with cold caches.
 * Returns the median on the receiver (b), 0 on a; negative on failure. */
/* 64 MB read a cache line at a time by late_pickup's receiver: more than
 * the last-level caches hold, as a large layer's weights and activations
 * stream through them.  (With 16 MB the pickup measured here was ~15 us,
 * with 128 MB ~37 us; a receive after alexnet's fc6 took ~40 us in `dse
 * exec`.)  work: NULL on the sender, else LATE_WORK floats. */
enum { LATE_WORK = 16 << 20 };

/* How this platform's ranks wait in dse exec (rt_wait_nap): the ping-pong
 * and the pickup wait alike, so that the links are calibrated as dse exec
 * meets them.  On emulated boards they nap between polls: two boards on
 * one CPU spinning in MPI_Wait took turns by scheduler slices, and the
 * fitted latency and pickup came out at 2-4 ms and 5 ms (emu-4-100m) where
 * dse exec moved small messages in well under a millisecond. */
static int g_nap;

static void wait_req(MPI_Request *q) { rt_wait(q, MPI_STATUS_IGNORE, g_nap); }

static void recv_wait(void *buf, int count, int from, int tag)
{
    MPI_Request q;
    MPI_Irecv(buf, count, MPI_BYTE, from, tag, MPI_COMM_WORLD, &q);
    wait_req(&q);
}

static void send_wait(const void *buf, int count, int to, int tag)
{
    MPI_Request q;
    MPI_Isend(buf, count, MPI_BYTE, to, tag, MPI_COMM_WORLD, &q);
    wait_req(&q);
}

static double late_pickup(int me, int a, int b, char *buf, int count, int reps, const float *work)
{
    int k = reps < 10 ? reps : 10, peer = me == a ? b : a;
    double *t = malloc((size_t)k * sizeof *t);
    int ok = t && (me == a || work);
    int both = 0;
    MPI_Sendrecv(&ok, 1, MPI_INT, peer, 56, &both, 1, MPI_INT, peer, 56, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (!ok || !both) {
        free(t);
        return -1;
    }
    for (int r = -1; r < k; r++) {
        int tok = 0;
        MPI_Request q;
        if (me == b) MPI_Irecv(buf, count, MPI_BYTE, a, 53, MPI_COMM_WORLD, &q);
        {
            /* The token both ways, waiting as dse exec waits (a spinning
             * sender would share b's CPU on emulated boards). */
            int in = 0;
            MPI_Request tq[2];
            MPI_Irecv(&in, 1, MPI_INT, peer, 55, MPI_COMM_WORLD, &tq[0]);
            MPI_Isend(&tok, 1, MPI_INT, peer, 55, MPI_COMM_WORLD, &tq[1]);
            wait_req(&tq[0]);
            wait_req(&tq[1]);
        }
        if (me == a) {
            /* Send once b is surely out of MPI and at work (it streams for
             * milliseconds): else b may match the message inside the
             * exchange above, and the sender push it before b's Wait. */
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < 300e-6) continue;
            MPI_Isend(buf, count, MPI_BYTE, b, 53, MPI_COMM_WORLD, &q);
            wait_req(&q);
            continue;
        }
        read_lines(work, LATE_WORK * sizeof *work);
        double t0 = MPI_Wtime();
        wait_req(&q);
        if (r >= 0) t[r] = MPI_Wtime() - t0;
    }
    double med = me == b ? base_median(t, k) : 0;
    free(t);
    return med;
}

/* Seconds of exchanges per size, at most (after 3 samples). */
#define EXCHANGE_SECS 3.0

/* A token both ways between me and peer, waiting as dse exec waits (a
 * spinning rank would share the other's CPU on emulated boards): on
 * return *v is rank a's value on both ranks. */
static void token_of_a(int *v, int me, int a, int peer)
{
    int in = 0;
    MPI_Request tq[2];
    MPI_Irecv(&in, 1, MPI_INT, peer, 59, MPI_COMM_WORLD, &tq[0]);
    MPI_Isend(v, 1, MPI_INT, peer, 59, MPI_COMM_WORLD, &tq[1]);
    wait_req(&tq[0]);
    wait_req(&tq[1]);
    if (me != a) *v = in;
}

/* Messages as a split mapping's exchange moves them in `dse exec`: both
 * ranks have their receive posted (dse exec posts them as an inference
 * starts), compute (stream LATE_WORK floats: the receive buffer leaves
 * the caches), write the message they send, then send and wait at once.
 * The sample is b's
 * time from its MPI_Isend to the end of its receive.  It costs more than
 * a ping-pong, whose ranks sit in MPI with hot caches: the payload moves
 * only inside the receiver's MPI call (CMA pull on shared memory), from a
 * buffer in the sender's cache into a cold one, while the other rank
 * pulls its own (two copies share the board's memory; a network link
 * carries both directions at once).  (2026-11-29, local-2: 1 MB pulled at
 * 10-17 GB/s hot, 7 one way with cold caches, 5.1 both ways at once; the
 * receives of split resnet50 and resnestish mappings in `dse exec
 * --trace` moved at 5.0-5.6 GB/s.)  The sizes' samples give the link's
 * pull rate (calibrate.c).  buf: count bytes to send; work: LATE_WORK
 * floats.  Returns the median on b, 0 on a; negative on failure. */
static double exchange_pull(int me, int a, int b, char *buf, int count, int reps, const float *work)
{
    int k = reps < 10 ? reps : 10, peer = me == a ? b : a, n = 0;
    double *t = malloc((size_t)k * sizeof *t);
    int *bad = malloc((size_t)k * sizeof *bad);
    char *in = malloc((size_t)count);
    int ok = t && bad && in && work, both = 0;
    MPI_Sendrecv(&ok, 1, MPI_INT, peer, 58, &both, 1, MPI_INT, peer, 58, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (!ok || !both) {
        free(t);
        free(bad);
        free(in);
        return -1;
    }
    memset(in, 0, (size_t)count);
    double start = MPI_Wtime();
    int preempted = 0; /* this rank's last sample */
    for (int r = -1; r <= k; r++) {
        /* a says whether to go on (bit 0: at most EXCHANGE_SECS per size
         * once 3 samples are in, a slow link moves 16 MB in seconds; never
         * at r == k, a closing token) and whether it was preempted during
         * the last sample (bit 1): a sample either rank lost its core in
         * times the scheduler, not the link, and is left out as the
         * ping-pong's are. */
        int go = me == a && r < k && (r < 3 || MPI_Wtime() - start < EXCHANGE_SECS);
        if (me == a) go |= preempted << 1;
        token_of_a(&go, me, a, peer);
        if (me == b && n > 0) bad[n - 1] |= (go >> 1) & 1;
        if (!(go & 1)) break;
        MPI_Request q[2];
        MPI_Irecv(in, count, MPI_BYTE, peer, 57, MPI_COMM_WORLD, &q[0]);
        read_lines(work, LATE_WORK * sizeof *work);
        memset(buf, r & 0x7f, (size_t)count); /* fresh, as a step's output */
        int now = 1;
        token_of_a(&now, me, a, peer); /* both at once */
        long s0 = involuntary_switches();
        double t0 = MPI_Wtime();
        MPI_Isend(buf, count, MPI_BYTE, peer, 57, MPI_COMM_WORLD, &q[1]);
        wait_req(&q[0]);
        double t1 = MPI_Wtime();
        wait_req(&q[1]);
        preempted = involuntary_switches() != s0;
        if (r >= 0) t[n] = t1 - t0, bad[n++] = preempted;
    }
    /* The clean samples' median; all samples' when fewer than 3 are clean
     * (a busy machine: better a slow rate than none). */
    int clean = 0, use = n;
    for (int i = 0; i < n; i++) clean += !bad[i];
    if (clean >= 3)
        for (int i = 0, j = 0; i < n; i++)
            if (!bad[i]) t[j++] = t[i], use = j;
    double med = me == b ? base_median(t, use) : 0;
    free(t);
    free(bad);
    free(in);
    return med;
}

static int pingpong(int me, int a, int b, const char *cls, int quick, int reps, cJSON *arr,
                    char *err)
{
    size_t maxb = quick ? (16u << 20) : (64u << 20);
    char *buf = malloc(maxb);
    float *work = malloc(LATE_WORK * sizeof *work);
    if (work)
        for (int i = 0; i < LATE_WORK; i++) work[i] = (float)(i & 7);
    int cap = 10 * reps + 2;
    double *rt = malloc((size_t)cap * sizeof *rt), *is = malloc((size_t)cap * sizeof *is);
    double *all = malloc((size_t)cap * sizeof *all), *alli = malloc((size_t)cap * sizeof *alli);
    int peer = me == a ? b : a, rc = 0;
    if (!buf || !rt || !is || !all || !alli) {
        base_seterr(err, "out of memory for the ping-pong");
        rc = -1;
    }
    if (buf) memset(buf, 3, maxb);
    /* Both sides must agree to go on (a failed malloc must not hang the peer). */
    int ok = rc == 0, both = 0;
    MPI_Sendrecv(&ok, 1, MPI_INT, peer, 50, &both, 1, MPI_INT, peer, 50, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (!ok || !both) {
        if (!rc) base_seterr(err, "ping-pong peer failed");
        free(buf);
        free(work);
        free(rt);
        free(is);
        free(all);
        free(alli);
        return -1;
    }
    /* Factor 2 steps in the full run, 4 in the quick one.  A round trip
     * counts only if neither rank was preempted during it (both wait as
     * dse exec does, g_nap): the receiver reports its involuntary context switches in the
     * first bytes of its reply; the sender's first bytes say whether to go
     * on.  At most 10 x reps attempts (and 20 s) per size; if too few are
     * clean, all samples are used. */
    size_t step = quick ? 4 : 2;
    for (size_t bytes = 1024; bytes <= maxb; bytes *= step) {
        int count = (int)bytes, clean = 0, n = 0, warm = 2;
        int64_t hdr[2];
        double start = MPI_Wtime();
        for (;;) {
            if (me == a) {
                int go = n < cap && clean < reps && MPI_Wtime() - start < 20.0;
                hdr[0] = go;
                memcpy(buf, hdr, sizeof hdr);
                MPI_Request q;
                long s0 = involuntary_switches();
                double t0 = MPI_Wtime();
                MPI_Isend(buf, count, MPI_BYTE, b, 51, MPI_COMM_WORLD, &q);
                double t1 = MPI_Wtime();
                wait_req(&q);
                recv_wait(buf, count, b, 52);
                double t2 = MPI_Wtime();
                long s1 = involuntary_switches();
                if (!go) break;
                memcpy(hdr, buf, sizeof hdr);
                if (warm > 0) {
                    warm--;
                    continue;
                }
                all[n] = 0.5 * (t2 - t0);
                alli[n] = t1 - t0;
                if (s1 == s0 && hdr[1] == 0) {
                    rt[clean] = all[n];
                    is[clean++] = alli[n];
                }
                n++;
            } else {
                long s0 = involuntary_switches();
                recv_wait(buf, count, a, 51);
                memcpy(hdr, buf, sizeof hdr);
                int go = hdr[0] != 0;
                hdr[1] = involuntary_switches() - s0;
                memcpy(buf, hdr, sizeof hdr);
                send_wait(buf, count, a, 52);
                if (!go) break;
            }
        }
        /* The late receiver's cost, measured on b and reported to a. */
        double late = late_pickup(me, a, b, buf, count, reps, work);
        double xch = exchange_pull(me, a, b, buf, count, reps, work);
        if (me == b) {
            send_wait(&late, (int)sizeof late, a, 54);
            send_wait(&xch, (int)sizeof xch, a, 54);
        } else {
            recv_wait(&late, (int)sizeof late, b, 54);
            recv_wait(&xch, (int)sizeof xch, b, 54);
        }
        if (me == a) {
            /* Too few clean round trips: the least disturbed one, marked so
             * that the fit leaves it out while enough clean sizes remain. */
            int ok = clean >= 3, use = ok ? clean : n;
            double *t = ok ? rt : all, *ti = ok ? is : alli;
            if (!ok && n) {
                base_median(t, n);
                base_median(ti, n);
                use = 1;
            }
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "class", cls);
            cJSON_AddNumberToObject(o, "from", a);
            cJSON_AddNumberToObject(o, "to", b);
            cJSON_AddNumberToObject(o, "bytes", (double)bytes);
            cJSON_AddNumberToObject(o, "seconds", base_median(t, use));
            cJSON_AddNumberToObject(o, "isend_seconds", base_median(ti, use));
            if (late > 0) cJSON_AddNumberToObject(o, "late_seconds", late);
            if (xch > 0) cJSON_AddNumberToObject(o, "exchange_seconds", xch);
            cJSON_AddNumberToObject(o, "samples", use);
            cJSON_AddNumberToObject(o, "preempted", n - clean);
            cJSON_AddBoolToObject(o, "clean", ok);
            cJSON_AddItemToArray(arr, o);
        }
    }
    free(all);
    free(alli);
    free(work);
    free(buf);
    free(rt);
    free(is);
    return 0;
}

/* ---- phase 3: power ---- */

/* Average power over about `secs` seconds while work() runs (or sleeping
 * when work is NULL), through the runtime's sensor reader (exec.h). */
static double measure_power(const char *path, double secs, void (*work)(void *), void *ctx)
{
    rt_sensor *sen = rt_sensor_start(path);
    double t0 = base_now(), dt;
    if (!sen) return NAN;
    while (base_now() - t0 < secs) {
        if (work) work(ctx);
        else {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    double j = rt_sensor_stop(sen, &dt);
    return j / dt;
}

typedef struct {
    seq_state *s;
    int threads;
    char err[BASE_ERRLEN];
} busy_ctx;

static void busy_work(void *p)
{
    busy_ctx *b = p;
    seq_pass(b->s, 0, -1, b->threads, b->err);
}

/* ---- the worker ---- */

/* DSE_FAULT=abort@R | stall@R (exec.h): how the tests kill or hang a rank. */
static void inject_fault(int rank)
{
    rt_fault f = rt_fault_for(rank);
    if (f == RT_FAULT_ABORT) abort();
    if (f == RT_FAULT_STALL)
        for (;;) pause();
}

/* Gather every rank's records into rank 0's arrays. */
static int gather(cJSON *mine, cJSON *root, int rank, int size)
{
    char *txt = ju_print(mine, 0);
    int len = txt ? (int)strlen(txt) + 1 : 0, rc = 0;
    if (rank != 0) {
        MPI_Send(&len, 1, MPI_INT, 0, 60, MPI_COMM_WORLD);
        if (len) MPI_Send(txt, len, MPI_CHAR, 0, 61, MPI_COMM_WORLD);
        free(txt);
        return 0;
    }
    for (int r = 0; r < size; r++) {
        char *t = txt;
        int l = len;
        if (r) {
            MPI_Recv(&l, 1, MPI_INT, r, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t = l ? malloc((size_t)l) : NULL;
            if (l) MPI_Recv(t, l, MPI_CHAR, r, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        cJSON *part = t ? cJSON_Parse(t) : NULL;
        if (!part) rc = -1;
        for (cJSON *sec = part ? part->child : NULL; sec; sec = sec->next) {
            cJSON *dst = cJSON_GetObjectItem(root, sec->string);
            for (cJSON *e = sec->child; e && dst;) {
                cJSON *nx = e->next;
                cJSON_AddItemToArray(dst, cJSON_DetachItemViaPointer(sec, e));
                e = nx;
            }
        }
        cJSON_Delete(part);
        if (t != txt) free(t);
    }
    free(txt);
    return rc;
}

int calib_worker(const calib_worker_opts *o, char *err)
{
    int rank, size, rc = 0;
    platform *pl = NULL;
    net *nets[CALIB_MAX_NETS + 8] = {0};
    int nn = 0;
    cJSON *mine = cJSON_CreateObject(), *root = NULL;
    /* "arch": each rank's CPU architecture (uname -m), which the
     * coefficients record (docs/coefficients-format.md). */
    const char *secs[] = {"compute", "bands", "copy", "links", "power", "arch", "device_compute",
                          "corun"};
    enum { NSECS = sizeof secs / sizeof *secs };
    for (int i = 0; i < NSECS; i++) cJSON_AddArrayToObject(mine, secs[i]);
    err[0] = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct utsname un;
    if (uname(&un) == 0) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", rank);
        cJSON_AddStringToObject(e, "arch", un.machine);
        cJSON_AddItemToArray(cJSON_GetObjectItem(mine, "arch"), e);
    }
    int reps = o->reps > 0 ? o->reps : CALIB_REPS;

    if (!(pl = platform_open(o->platform, err))) rc = 2;
    else if (pl->ndev != size) {
        base_seterr(err, "%s has %d devices but mpirun started %d ranks", o->platform,
                 pl->ndev, size);
        rc = 2;
    }
    for (int i = 0; !rc && i < o->nnetworks; i++)
        if (!(nets[nn++] = net_open(o->networks[i], err))) rc = 2;
    int nprobe = o->quick ? CALIB_PROBES_QUICK : calib_probe_count();
    for (int i = 0; !rc && i < nprobe; i++)
        if (!(nets[nn++] = calib_probe_net(i, err))) rc = 1;
    if ((rc = agree(rc, err))) goto out;
    inject_fault(rank);

    int threads = rt_threads(pl, rank);
    g_nap = rt_wait_nap(pl);
    kern_set_threads(threads);
    kern_set_conv_rule(&pl->kernels); /* time what the model will charge */
    mallopt(M_MMAP_THRESHOLD, 1 << 30); /* as exec.c: freed memory stays in the heap */
    mallopt(M_TRIM_THRESHOLD, -1);
    const plat_device *me = &pl->dev[rank];
    const char *kind = plat_kind_name(me->kind);

    /* 1. Compute and copies, on the first device of each kind. */
    static const int full_shares[] = {1, 2, 3, 4}, quick_shares[] = {1, 2, 4};
    int rep = 1;
    for (int d = 0; d < rank; d++) rep &= pl->dev[d].kind != me->kind;
    if (rep && me->kind == PLAT_CPU) {
        cJSON *arr = cJSON_GetObjectItem(mine, "compute");
        for (int i = 0; !rc && i < nn; i++)
            if (time_net(nets[i], i >= o->nnetworks, o->quick ? quick_shares : full_shares,
                         o->quick ? 3 : 4, reps, o->seed, threads, kind, rank, arr,
                         cJSON_GetObjectItem(mine, "bands"), err))
                rc = 1;
        if (!rc && time_copies(o->quick, reps, threads, kind, rank, cJSON_GetObjectItem(mine, "copy"), err))
            rc = 1;
    } else if (rep) {
        base_seterr(err, "device %s is a GPU: the runtime has no GPU kernels to time",
                 me->name);
        rc = 2;
    }
    rt_barrier(CALM_NAP_US);
    if ((rc = agree(rc, err))) goto out;

    /* 1b. Every CPU device's speed on the calibrated networks, devices in
     * turn and rounds alternating (so a drift of the machine falls on all
     * of them alike): calib_run turns them into every CPU device's
     * per_device factor. */
    int ncpu = 0;
    rt_pace pace; /* a paced board's passes are paced as dse exec paces its steps */
    rt_pace_init(&pace, pl, rank);
    for (int d = 0; d < size; d++) ncpu += pl->dev[d].kind == PLAT_CPU;
    for (int round = 0; ncpu > 0 && o->nnetworks > 0 && round < 3; round++)
        for (int d = 0; d < size; d++) {
            if (pl->dev[d].kind != PLAT_CPU) continue;
            if (rank == d)
                for (int i = 0; !rc && i < o->nnetworks; i++) {
                    double sec = 0;
                    if (time_pass(nets[i], o->quick ? 5 : 10, o->seed, &pace, &sec, err)) {
                        rc = 1;
                        break;
                    }
                    cJSON *e = cJSON_CreateObject();
                    cJSON_AddNumberToObject(e, "rank", rank);
                    cJSON_AddStringToObject(e, "network", nets[i]->name);
                    cJSON_AddNumberToObject(e, "round", round);
                    cJSON_AddNumberToObject(e, "seconds", sec);
                    cJSON_AddItemToArray(cJSON_GetObjectItem(mine, "device_compute"), e);
                }
            rt_barrier(CALM_NAP_US);
            if ((rc = agree(rc, err))) goto out;
        }

    /* 1c. Devices that share a board's memory: a pair of them runs every
     * layer of the calibrated networks alone and beside each other. */
    int pa, pb;
    int creps = (reps + 1) / 2 < 10 ? (reps < 10 ? reps : 10) : (reps + 1) / 2;
    if (o->nnetworks > 0 && platform_cpu_pair(pl, &pa, &pb)) {
        if (rank == pa || rank == pb)
            for (int i = 0; !rc && i < o->nnetworks; i++)
                if (corun_net(nets[i], rank, pa, rank == pa ? pb : pa, creps, o->seed, threads, kind,
                              cJSON_GetObjectItem(mine, "corun"), err))
                    rc = 1;
        rt_barrier(CALM_NAP_US);
        if ((rc = agree(rc, err))) goto out;
    }

    /* 2. Links: one pair per class and distinct platform figures
     * (calib_link_rep): a slower board's links are measured on their own. */
    for (int a = 0; a < size; a++)
        for (int b = a + 1; b < size; b++) {
            if (calib_link_rep(pl, a, b) != a * size + b) continue;
            if (rank == a || rank == b)
                if (pingpong(rank, a, b, link_class_name(pl->link_cls[a * size + b]), o->quick,
                             reps, cJSON_GetObjectItem(mine, "links"), err))
                    rc = 1;
            rt_barrier(CALM_NAP_US);
            if ((rc = agree(rc, err))) goto out;
        }

    /* 3. Power where a sensor exists: all idle together, then busy in turn. */
    double idle = NAN, busy = NAN;
    int any = me->energy_sensor != NULL, anyall = 0;
    MPI_Allreduce(&any, &anyall, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anyall) {
        rt_barrier(CALM_NAP_US);
        if (any) idle = measure_power(me->energy_sensor, 1.0, NULL, NULL);
        else sleep(1);
        rt_barrier(CALM_NAP_US);
        /* Busy power on the probe of the most work: a network of tiny
         * layers (the 8x16x16 probe) barely loads the cores. */
        int big = nn - 1;
        double most = -1;
        for (int i = o->nnetworks; i < nn; i++) {
            double w = 0;
            for (int l = 0; l < nets[i]->n; l++)
                w += (double)calib_work(nets[i], l, 0, nets[i]->layers[l].out.c);
            if (w > most) most = w, big = i;
        }
        for (int d = 0; d < size; d++) {
            if (rank == d && any) {
                seq_state s;
                busy_ctx bc = {&s, threads, ""};
                static const int whole[] = {1};
                if (seq_init(&s, nets[big], 1, 0, whole, 1, 1, o->seed, err) == 0)
                    busy = measure_power(me->energy_sensor, 1.0, busy_work, &bc);
                seq_free(&s);
                cJSON *p = cJSON_CreateObject();
                cJSON_AddStringToObject(p, "kind", kind);
                cJSON_AddNumberToObject(p, "rank", rank);
                cJSON_AddStringToObject(p, "sensor", me->energy_sensor);
                if (isfinite(idle)) cJSON_AddNumberToObject(p, "idle_w", idle);
                if (isfinite(busy)) cJSON_AddNumberToObject(p, "busy_w", busy);
                cJSON_AddItemToArray(cJSON_GetObjectItem(mine, "power"), p);
            }
            rt_barrier(CALM_NAP_US);
        }
    }

    /* Rank 0 writes everything. */
    if (rank == 0) {
        root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "format", "dse-calib-raw");
        cJSON_AddNumberToObject(root, "version", 1);
        cJSON_AddStringToObject(root, "platform", pl->name);
        cJSON_AddNumberToObject(root, "reps", reps);
        cJSON_AddBoolToObject(root, "quick", o->quick);
        cJSON *dv = cJSON_AddArrayToObject(root, "devices");
        for (int d = 0; d < size; d++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "rank", d);
            cJSON_AddStringToObject(e, "name", pl->dev[d].name);
            cJSON_AddStringToObject(e, "kind", plat_kind_name(pl->dev[d].kind));
            cJSON_AddNumberToObject(e, "threads", rt_threads(pl, d));
            cJSON_AddItemToArray(dv, e);
        }
        for (int i = 0; i < NSECS; i++) cJSON_AddArrayToObject(root, secs[i]);
    }
    if (gather(mine, root, rank, size)) {
        base_seterr(err, "rank 0: cannot merge the measurements of the other ranks");
        rc = 1;
    }
    if (rank == 0 && !rc) {
        char *txt = ju_print(root, 1);
        if (!txt || ju_write_file_atomic(o->out, txt, err)) rc = 1;
        if (!txt) base_seterr(err, "out of memory writing %s", o->out);
        free(txt);
    }
    rc = agree(rc, err);
out:
    cJSON_Delete(mine);
    cJSON_Delete(root);
    for (int i = 0; i < nn; i++) net_free(nets[i]);
    platform_free(pl);
    return rc;
}
