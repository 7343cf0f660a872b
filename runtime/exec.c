/* exec.c -- running a Plan on the ranks (runtime.h): load the files,
 * agree that every rank built the same Plan, set up, run the warm-up and
 * timed inferences under a deadline, gather the figures on rank 0, check
 * the output against the single-device run.
 *
 * Invariant: every collective step ends with the ranks agreeing on one
 * return code (agree), so no rank waits for one that has given up; the
 * ranks only start an inference once they agree on a digest of the
 * network, the platform and the Plan.  (The beside run of --beside is the
 * one whose plans differ by rank: it follows a run alone whose digests
 * agreed, and each rank's plan there is derived from those files.)
 */
#include "rt_internal.h"

#include "cost.h"
#include "kernels.h"
#include "mapping.h"

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- timeouts and injected faults ---- */

static double g_timeout;
static int g_rank;
static const platform *g_pl;
static const char *g_phase = ""; /* "" while inferring, else " during set-up" ... */

/* "rank R (device D on board B)" of rank r, into buf. */
static const char *who(char *buf, size_t n, int r)
{
    if (g_pl && r >= 0 && r < g_pl->ndev)
        snprintf(buf, n, "rank %d (device %.60s on board %.60s)", r, g_pl->dev[r].name,
                 g_pl->dev[r].board);
    else
        snprintf(buf, n, "rank %d", r);
    return buf;
}

/* The deadline passed: say what this rank was blocked on, so that the
 * launcher can name the board every other rank waited for (a cut link, a
 * stalled board: rt_stalled_rank). */
static void on_alarm(int sig)
{
    (void)sig;
    char msg[512], me[160], peer[160];
    int w = rt_waiting_for;
    int len = snprintf(msg, sizeof msg, "dse exec: %s: timed out after %.0f s (--timeout)%s %s%s\n",
                       who(me, sizeof me, g_rank), g_timeout, g_phase,
                       w >= 0                ? "waiting for "
                       : w == RT_WAIT_BARRIER ? "at the barrier between inferences"
                       : w == RT_WAIT_ALL     ? "waiting for every other rank"
                                              : "while working",
                       w >= 0 ? who(peer, sizeof peer, w) : "");
    if (len > (int)sizeof msg - 1) len = (int)sizeof msg - 1;
    if (write(2, msg, (size_t)len) < 0) {}
    _exit(1);
}

/* Start a phase of at most timeout seconds (0: none). */
static void deadline(double timeout, const char *phase)
{
    g_phase = phase;
    if (timeout > 0) alarm((unsigned)ceil(timeout));
}

rt_fault rt_fault_for(int rank)
{
    const char *f = getenv("DSE_FAULT");
    char kind[16];
    int r;
    if (!f || sscanf(f, "%15[a-z]@%d", kind, &r) != 2 || r != rank) return RT_FAULT_NONE;
    if (!strcmp(kind, "abort")) return RT_FAULT_ABORT;
    if (!strcmp(kind, "stall")) return RT_FAULT_STALL;
    if (!strcmp(kind, "corrupt")) return RT_FAULT_CORRUPT;
    return RT_FAULT_NONE;
}

double rt_default_timeout(const net *n, const platform *pl, const plan *p, int warmup, int reps)
{
    double t = RT_TIMEOUT_FLOOR_S, lat = NAN;
    cost_coeffs *co = coeffs_default(pl);
    char warn[BASE_ERRLEN], err[BASE_ERRLEN];
    cost_model *m = co ? cost_new(n, pl, co, warn, err) : NULL;
    cost_result r;
    if (m && !cost_eval(m, p, &r, NULL)) lat = r.latency_ms * 1e-3;
    cost_free(m);
    coeffs_free(co);
    double wmax = 0;
    for (int d = 0; d < p->ndev; d++) {
        double w = 0;
        for (int i = 0; i < plan_nsteps_dev(p, d); i++) {
            const plan_step *st = &plan_steps_dev(p, d)[i];
            if (st->op == PLAN_COMPUTE) w += 4.0 * (double)net_slice_weights(n, st->layer, st->c0, st->nc);
        }
        if (w > wmax) wmax = w;
    }
    int runs = (warmup > 0 ? warmup : 0) + (reps > 0 ? reps : 1) + 1;
    double est = (isfinite(lat) ? 100 * lat * runs : 0) + wmax / 10e6;
    return est > t ? est : t;
}

/* ---- agreement between ranks ---- */

/* Agree on an error across ranks: the largest code wins; rank 0 keeps the
 * message of the lowest rank that failed. */
static int agree(int rc, char *err)
{
    int all = 0, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    rt_waiting_for = RT_WAIT_ALL;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rt_waiting_for = RT_WAIT_NONE;
    if (!all) return 0;
    int who = rc ? rank : 1 << 30, first;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first != 0) {
        if (rank == first) MPI_Send(err, BASE_ERRLEN, MPI_CHAR, 0, 1 << 20, MPI_COMM_WORLD);
        if (rank == 0)
            MPI_Recv(err, BASE_ERRLEN, MPI_CHAR, first, 1 << 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return all;
}

/* FNV-1a, 64 bits. */
static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
#define FNV0 0xcbf29ce484222325ull

static uint64_t fnv_int(uint64_t h, int64_t v) { return fnv(h, &v, sizeof v); }

/* What a rank read: the network (its JSON form), the platform (its JSON
 * text) and the Plan (every field that decides what is sent and computed). */
static void digests(const net *n, const platform *pl, const plan *p, uint64_t out[3])
{
    char *nj = net_to_json(n);
    out[0] = nj ? fnv(FNV0, nj, strlen(nj)) : 0;
    free(nj);
    out[1] = pl->text ? fnv(FNV0, pl->text, strlen(pl->text)) : fnv_int(FNV0, pl->ndev);
    uint64_t h = fnv_int(FNV0, p->ndev);
    h = fnv_int(h, p->source);
    h = fnv_int(h, p->out_dev);
    for (int d = 0; d <= p->ndev; d++) h = fnv_int(fnv_int(h, p->step0[d]), p->tensor0[d]);
    for (int i = 0; i < p->nsteps; i++) {
        const plan_step *s = &p->steps[i];
        int64_t f[13] = {s->op, s->layer, s->c0, s->nc, s->h0, s->nh, s->w0, s->nw, s->peer,
                         s->msg, s->tensor, s->narg, s->nfree};
        h = fnv(h, f, sizeof f);
    }
    for (int i = 0; i < p->nmsgs; i++) h = fnv_int(fnv_int(h, p->msgs[i].bytes), p->msgs[i].to);
    out[2] = h;
}

/* Every rank must hold rank 0's network, platform and Plan: else the
 * ranks would exchange messages of other sizes, or wait for ones never
 * sent.  Returns 0, or 2 with err naming the first rank that differs. */
static int agree_digest(const net *n, const platform *pl, const plan *p, const char *what, char *err)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t mine[3], *all = rank == 0 ? malloc((size_t)size * sizeof mine) : NULL;
    digests(n, pl, p, mine);
    MPI_Gather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    int bad = 0;
    if (rank == 0) {
        static const char *const part[3] = {"network", "platform", "mapping"};
        for (int r = 1; r < size && !bad; r++)
            for (int k = 0; k < 3 && !bad; k++)
                if (all[3 * r + k] != mine[k]) {
                    base_seterr(err, "rank %d read another %s than rank 0 (%s): the files differ "
                                "between boards or changed during the launch", r, part[k],
                                k == 2 ? what : k == 0 ? n->name : pl->name);
                    bad = 2;
                }
        free(all);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return bad;
}

/* ---- load ---- */

/* o->beside keeps the input on the --single device (both of its runs are
 * then alike but for the neighbours). */
static int load(const rt_options *o, net **n, platform **pl, plan *p, char *err)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mapping *m = NULL;
    char pb[BASE_PATHSHOW + 1];
    int rc = 0;
    if (!(*n = net_open(o->network, err))) rc = 2;
    else if (!(*pl = platform_open(o->platform, err))) rc = 2;
    else if (size != (*pl)->ndev) {
        base_seterr(err, "%s has %d devices but mpirun started %d ranks (use -np %d)",
                    base_path(o->platform, pb), (*pl)->ndev, size, (*pl)->ndev);
        rc = 2;
    } else if ((*pl)->ndev > RT_MAX_DEV) {
        base_seterr(err, "%s: more than %d devices", base_path(o->platform, pb), RT_MAX_DEV);
        rc = 2;
    } else if (o->mapping) {
        if (!(m = mapping_load(o->mapping, *n, *pl, err))) rc = 2;
    } else if (o->single_dev < 0 || o->single_dev >= (*pl)->ndev) {
        base_seterr(err, "--single %d: no such device", o->single_dev);
        rc = 2;
    } else if (!(m = mapping_new((*n)->n, (*pl)->ndev))) {
        base_seterr(err, "out of memory");
        rc = 1;
    } else {
        mapping_set_single(m, *n, o->single_dev);
    }
    if (!rc && plan_build(p, *n, m, o->beside && !o->mapping ? o->single_dev : (*pl)->source, err)) rc = 1;
    mapping_free(m);
    /* The outputs, checked as every command checks them (docs/exit-codes.md):
     * usable, and none of the files read (the input tensor included). */
    if (!rc && o->input) base_input_note(o->input);
    const char *outs[2] = {o->output, o->trace};
    if (!rc && base_out_check_all(outs, 2, err)) rc = 2;
    return rc;
}

/* Work the runtime cannot do: compute on a GPU device (2), or more
 * messages than MPI's tags can number (1). */
static int runnable(const platform *pl, const plan *p, char *err)
{
    for (int d = 0; d < pl->ndev; d++)
        if (pl->dev[d].kind == PLAT_GPU && plan_nsteps_dev(p, d) > 0) {
            int k = 0;
            for (int i = 0; i < plan_nsteps_dev(p, d); i++)
                k += plan_steps_dev(p, d)[i].op == PLAN_COMPUTE;
            base_seterr(err, "device %s is a GPU and the mapping puts %d compute steps on it: "
                        "this runtime has no GPU kernels (the model still scores such "
                        "mappings)", pl->dev[d].name, k);
            return 2;
        }
    int *ub, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    if (flag && *ub < p->nmsgs) {
        base_seterr(err, "plan has %d messages but MPI tags stop at %d", p->nmsgs, *ub);
        return 1;
    }
    return 0;
}

/* ---- run: warm-up and timed inferences ---- */

typedef struct {
    double *lat, *busy, *wait, *fin; /* per timed inference, seconds */
    double joules;
    int have_sensor;
} timings;

/* An idle rank's first nap while the others run their inferences
 * (emulated boards only; rt_wait lets it grow to 5 ms): it is then in no
 * one's way. */
#define IDLE_NAP_US 1000

static int run(rt_rank *s, const platform *pl, const rt_options *o, rt_tracer *tr, float *out,
               timings *tm, char *err)
{
    int warm = o->warmup > 0 ? o->warmup : 0, reps = o->reps > 0 ? o->reps : 1, rc = 0;
    rt_sensor *sen = NULL;
    /* On emulated boards (ranks share this machine's cores) a rank with no
     * step leaves the per-inference barriers to the others and waits for
     * them once, napping long: polling every 20 us beside a working board
     * on its CPU, it slowed that board (a resnet50 point on emu-3-mixed:
     * the board's busy time 78.7 ms against 66.5; bench/README).  Decided
     * from the platform, which every rank has agreed on, so all ranks call
     * the split alike.  Real boards have their own cores and sensors: there
     * nothing changes.  Timings of an idle rank are zero either way. */
    int split = pl->emulated, idle = split && s->nsteps == 0;
    MPI_Comm wc = MPI_COMM_WORLD;
    if (split && MPI_Comm_split(MPI_COMM_WORLD, idle ? MPI_UNDEFINED : 0, s->dev, &wc) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1); /* collective: no rank could go on alone */
    for (int it = 0; !idle && it < warm + reps; it++) {
        if (it == warm) sen = rt_sensor_start(pl->dev[s->dev].energy_sensor);
        s->rec = tr && it >= warm ? rt_tracer_rep(tr, it - warm, &s->rec_origin) : NULL;
        rt_waiting_for = RT_WAIT_BARRIER;
        rt_barrier_comm(wc, s->nap_us);
        rt_waiting_for = RT_WAIT_NONE;
        /* The first inference's output is the one checked. */
        if ((rc = rt_rank_run(s, it == 0 ? out : NULL, err))) break;
        if (it >= warm) {
            int k = it - warm;
            tm->busy[k] = s->busy;
            tm->wait[k] = s->wait;
            tm->fin[k] = s->finish;
            tm->lat[k] = s->finish; /* on the output device: barrier to output complete */
        }
    }
    if (split) {
        /* Freed only when this rank got through: a failed rank's peers may
         * still be in a barrier of wc (they end at the deadline). */
        if (!rc && wc != MPI_COMM_WORLD && wc != MPI_COMM_NULL) MPI_Comm_free(&wc);
        rt_waiting_for = RT_WAIT_BARRIER;
        rt_barrier(idle ? IDLE_NAP_US : s->nap_us);
        rt_waiting_for = RT_WAIT_NONE;
    }
    tm->have_sensor = sen != NULL;
    tm->joules = sen ? rt_sensor_stop(sen, NULL) : 0;
    if (isnan(tm->joules)) tm->have_sensor = 0, tm->joules = 0;
    return rc ? 1 : 0;
}

/* ---- gather: per-device figures and latency on rank 0 ---- */

static void gather(const rt_rank *s, const platform *pl, int out_dev, timings *tm, int reps,
                   int64_t rss, rt_result *r)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* The step count from each rank: with o->beside the ranks' plans differ. */
    double mine[9] = {base_median(tm->busy, reps) * 1e3, base_median(tm->wait, reps) * 1e3,
                      base_median(tm->fin, reps) * 1e3, (double)s->sent, (double)s->recvd,
                      rss / 1e6, tm->have_sensor ? tm->joules / reps : 0, tm->have_sensor,
                      (double)s->nsteps};
    double *all = rank == 0 ? calloc((size_t)size * 9, sizeof(double)) : NULL;
    MPI_Gather(mine, 9, MPI_DOUBLE, all, 9, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    /* Bytes to each peer: a row per rank (exact in doubles below 2^53). */
    double *to = calloc((size_t)size, sizeof *to);
    double *allto = rank == 0 ? calloc((size_t)size * (size_t)size, sizeof(double)) : NULL;
    for (int d = 0; to && d < size; d++) to[d] = (double)s->sent_to[d];
    if (!to || (rank == 0 && !allto)) MPI_Abort(MPI_COMM_WORLD, 1); /* collective: none can skip it */
    MPI_Gather(to, size, MPI_DOUBLE, allto, size, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(to);
    /* Latency: measured on the output device, sent to rank 0.  (tm->lat is
     * sorted by base_median; the trace, written before, needed it in order.) */
    double lm[3] = {0, 0, 0}, lm0[3];
    if (rank == out_dev) {
        lm[0] = base_median(tm->lat, reps) * 1e3;
        lm[1] = tm->lat[0] * 1e3;
        lm[2] = tm->lat[reps - 1] * 1e3;
    }
    MPI_Reduce(lm, lm0, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    r->ndev = size;
    r->bytes_to_known = 1;
    r->out_dev = out_dev;
    r->lat_med_ms = lm0[0];
    r->lat_min_ms = lm0[1];
    r->lat_max_ms = lm0[2];
    for (int d = 0; d < size && all; d++) {
        rt_device *D = &r->dev[d];
        double *v = all + 9 * d;
        snprintf(D->name, sizeof D->name, "%s", pl->dev[d].name);
        D->nsteps = (int)v[8];
        D->busy_ms = v[0];
        D->wait_ms = v[1];
        D->finish_ms = v[2];
        D->bytes_sent = (int64_t)v[3];
        D->bytes_recv = (int64_t)v[4];
        for (int e = 0; e < size; e++) D->bytes_to[e] = (int64_t)allto[(size_t)d * size + e];
        D->peak_rss_mb = v[5];
        D->energy_j = v[6];
        D->energy_measured = v[7] != 0;
    }
    free(all);
    free(allto);
}

/* ---- the handoff probe (rt_options.handoff) ---- */

#define HANDOFF_TAG ((1 << 20) + 1) /* apart from the Plan's messages and agree's */

static void touch(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = x[i] * 0.5f + 1.0f;
}

static double now_us(void) { return MPI_Wtime() * 1e6; }

/* Ranks a and b of platform_cpu_pair pass a buffer back and forth, each
 * touching it on receipt; a times each round trip (two passes) and, after,
 * the same touch on its own data; rank 0 gets a's medians (a reduce: the
 * others add zeros).  The others wait in a napping barrier meanwhile, out
 * of the pair's way (idle_nap_us); the pair first agree that both hold a
 * buffer, so neither waits for a message the other will never send.  Its
 * tag, like agree's, is above the 32767 the MPI standard promises (Open
 * MPI's bound is 8388607).  Every rank calls it; 0 or an agreed error. */
static int handoff(const platform *pl, int rank, int nap_us, int idle_nap_us, rt_result *r, char *err)
{
    int a = -1, b = -1, pair = platform_cpu_pair(pl, &a, &b), in = pair && (rank == a || rank == b);
    size_t n = RT_HANDOFF_BYTES / sizeof(float);
    float *x = in ? calloc(n, sizeof *x) : NULL;
    int rc = in && !x ? (base_seterr(err, "device %d: out of memory for the handoff probe", rank), 1) : 0;
    double mine[2] = {0, 0}, got[2] = {0, 0};
    if ((rc = agree(rc, err))) {
        free(x);
        return rc;
    }
    if (in) {
        double hop[RT_HANDOFF_ROUNDS], loc[RT_HANDOFF_ROUNDS];
        int peer = rank == a ? b : a, m = (int)n;
        rt_waiting_for = peer; /* a deadline then names the peer this rank waited for */
        for (int k = 0; k < RT_HANDOFF_ROUNDS && !rc; k++) {
            double t0 = now_us();
            if (rank == a) {
                rc = MPI_Send(x, m, MPI_FLOAT, peer, HANDOFF_TAG, MPI_COMM_WORLD) != MPI_SUCCESS ||
                     MPI_Recv(x, m, MPI_FLOAT, peer, HANDOFF_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS;
                touch(x, n);
            } else {
                rc = MPI_Recv(x, m, MPI_FLOAT, peer, HANDOFF_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS;
                touch(x, n);
                rc = rc || MPI_Send(x, m, MPI_FLOAT, peer, HANDOFF_TAG, MPI_COMM_WORLD) != MPI_SUCCESS;
            }
            hop[k] = (now_us() - t0) / 2;
        }
        rt_waiting_for = RT_WAIT_NONE;
        if (rc) base_seterr(err, "device %d: the handoff probe's messages failed", rank);
        if (!rc && rank == a) {
            for (int k = 0; k < RT_HANDOFF_ROUNDS; k++) {
                double t0 = now_us();
                touch(x, n);
                loc[k] = now_us() - t0;
            }
            mine[0] = base_median(hop, RT_HANDOFF_ROUNDS);
            mine[1] = base_median(loc, RT_HANDOFF_ROUNDS);
        }
    }
    free(x);
    rt_waiting_for = RT_WAIT_BARRIER;
    rt_barrier(in ? nap_us : idle_nap_us);
    rt_waiting_for = RT_WAIT_NONE;
    if ((rc = agree(rc, err))) return rc;
    MPI_Reduce(mine, got, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        r->handoff.a = pair ? a : -1;
        r->handoff.b = pair ? b : -1;
        r->handoff.hop_us = got[0];
        r->handoff.touch_us = got[1];
    }
    return 0;
}

/* ---- check: the output file, and the output against one device ---- */

/* On the output device: write the output, compare it with the whole
 * network run on this rank alone.  check[] = max abs, max rel, ok. */
static int check(const net *n, const rt_options *o, const float *out, int64_t numel,
                 double check[3], char *err)
{
    if (o->output && base_write_file(o->output, out, (size_t)numel * sizeof(float), err))
        return 1;
    if (!o->check) return 0;
    int rc = 1;
    float *ref = malloc((size_t)numel * sizeof(float));
    float *x = malloc((size_t)net_shape_numel(n->input) * sizeof(float));
    int have_x = 0;
    if (ref && x) {
        if (o->input) have_x = rt_read_input(o->input, n, x, err) == 0;
        else kern_input_gen(n, o->seed ^ 0x1234567ull, x), have_x = 1;
    }
    kern_model *km = have_x ? kern_model_new(n, o->seed, err) : NULL;
    if (km && !kern_model_forward(km, x, ref, NULL, err)) {
        double scale = 0, maxabs = 0, maxrel = 0;
        int ok = 1;
        for (int64_t i = 0; i < numel; i++)
            if (fabs(ref[i]) > scale) scale = fabs(ref[i]);
        for (int64_t i = 0; i < numel; i++) {
            double e = fabs((double)out[i] - ref[i]);
            double rel = e / fmax(fabs(ref[i]), 1e-1 * scale + 1e-30);
            if (e > maxabs) maxabs = e;
            if (rel > maxrel) maxrel = rel;
            if (!(e <= 1e-4 * fabs(ref[i]) + 1e-5 * scale)) ok = 0;
        }
        check[0] = maxabs;
        check[1] = maxrel;
        check[2] = ok;
        rc = 0;
        if (!ok) {
            base_seterr(err, "output mismatch against the single-device run: max relative "
                        "error %.3g (tolerance 1e-4)", maxrel);
            rc = 1;
        }
    }
    kern_model_free(km);
    free(ref);
    free(x);
    return rc;
}

/* ---- the whole run ---- */

int rt_exec_plan(const net *n, const platform *pl, const plan *p, const rt_options *o,
                 const char *what, rt_result *r, char *err)
{
    int rank = 0, rc;
    rt_rank s;
    float *out = NULL;
    rt_tracer *tr = NULL;
    int reps = o->reps > 0 ? o->reps : 1;
    timings tm = {calloc((size_t)reps, sizeof(double)), calloc((size_t)reps, sizeof(double)),
                  calloc((size_t)reps, sizeof(double)), calloc((size_t)reps, sizeof(double)), 0, 0};
    memset(&s, 0, sizeof s);
    memset(r, 0, sizeof *r);
    err[0] = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    g_rank = rank;
    g_pl = pl;
    /* A message the Plan does not expect is an error to report, not a
     * job abort (MPI_ERR_TRUNCATE is fatal by default). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* The deadline (given, none = 0, or derived from the Plan) bounds each
     * phase in turn: set-up, the inferences, then gathering and the check,
     * so that a board or link lost at any moment ends the job with a line
     * naming what each rank waited for. */
    double timeout = o->timeout_s < 0 ? rt_default_timeout(n, pl, p, o->warmup, reps) : o->timeout_s;
    if (timeout > 0) {
        g_timeout = timeout;
        signal(SIGALRM, on_alarm);
    }
    deadline(timeout, " during set-up");
    if ((rc = agree(runnable(pl, p, err), err))) goto out;
    /* With o->beside every rank runs a plan of its own (rt_exec agreed on
     * the files first), and the output and latency are the --single
     * device's. */
    int out_dev = o->beside ? o->single_dev : p->out_dev;
    if (o->beside && (out_dev < 0 || out_dev >= pl->ndev)) {
        base_seterr(err, "--beside: no device %d", out_dev);
        rc = 2;
        goto out;
    }
    if (!o->beside && (rc = agree(agree_digest(n, pl, p, what ? what : "the mapping", err), err))) goto out;

    /* Set-up: threads, weights of my slices, buffers.  Freed activations
     * stay in the heap: no page faults between inferences, and VmHWM then
     * tracks the peak live set. */
    kern_set_threads(rt_threads(pl, rank));
    kern_set_conv_rule(&pl->kernels); /* the algorithms the model charges */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, -1);
    rc = rt_rank_setup(&s, n, p, rank, o->input, o->seed, err);
    s.nap_us = rt_wait_nap(pl);
    rt_pace_init(&s.pace, pl, rank);
    r->out_numel = net_shape_numel(n->layers[n->n - 1].out);
    if (!rc && (!tm.lat || !tm.busy || !tm.wait || !tm.fin)) base_seterr(err, "out of memory"), rc = 1;
    if (!rc && rank == out_dev && !(out = malloc((size_t)r->out_numel * sizeof(float))))
        base_seterr(err, "out of memory for the output"), rc = 1;
    if ((rc = agree(rc, err))) goto out;

    deadline(timeout, "");
    if (o->trace && !o->beside) {
        int ok = (tr = rt_tracer_new(s.nsteps, reps)) != NULL;
        if (!ok) base_seterr(err, "device %d: out of memory for the trace", rank);
        if ((rc = agree(!ok, err))) goto out;
        rt_tracer_sync(tr, 0);
    }
    rc = run(&s, pl, o, tr, out, &tm, err);
    deadline(timeout, " after the inferences");
    if ((rc = agree(rc, err))) goto out;
    /* The trace after the memory figure is taken (gathering allocates on
     * rank 0) but before the latencies are sorted. */
    int64_t rss = rt_peak_rss();
    if (tr) {
        rt_tracer_sync(tr, 1);
        if ((rc = rt_tracer_write(tr, o->trace, n, pl, p, tm.lat, o->warmup, err))) goto out;
    }
    gather(&s, pl, out_dev, &tm, reps, rss, r);
    /* In the same launch as the inferences, after them (its buffer is
     * not in the memory figure). */
    if (o->handoff && (rc = handoff(pl, rank, s.nap_us, IDLE_NAP_US, r, err))) goto out;

    /* Output and correctness after the measurements: the reference run
     * holds every weight and would distort the memory figures. */
    double chk[3] = {0, 0, 1};
    int orc = rank == out_dev ? check(n, o, out, r->out_numel, chk, err) : 0;
    if (out_dev != 0) {
        if (rank == out_dev) MPI_Send(chk, 3, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
        if (rank == 0) MPI_Recv(chk, 3, MPI_DOUBLE, out_dev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank == 0) {
        r->checked = o->check;
        r->max_abs_err = chk[0];
        r->max_rel_err = chk[1];
        r->check_ok = chk[2] != 0;
        r->warmup = o->warmup > 0 ? o->warmup : 0;
        r->reps = reps;
        r->timeout_s = timeout;
    }
    rc = agree(orc, err);
out:
    alarm(0);
    rt_tracer_free(tr);
    rt_rank_free(&s);
    free(out);
    free(tm.lat);
    free(tm.busy);
    free(tm.wait);
    free(tm.fin);
    return rc;
}

/* rt_options.beside, after the run alone (pa, the --single device's plan):
 * every CPU of that device's board runs the whole network on itself, with
 * its own input, at the same time; r->beside gets the --single device's
 * latency.  Nothing to run beside (no other CPU on the board): n = 1. */
static int beside(const net *n, const platform *pl, const plan *pa, const rt_options *o, int rank,
                  rt_result *r, char *err)
{
    int R = o->single_dev, nb = platform_board_cpus(pl, R);
    if (rank == 0) r->beside.n = 1;
    if (nb < 2) return 0;
    /* My plan: the whole network on me, input on me -- or, off R's board,
     * R's plan (no step of mine). */
    plan *mine = plan_new();
    mapping *m = mapping_new(n->n, pl->ndev);
    int rc = 0;
    if (!mine || !m) {
        base_seterr(err, "out of memory");
        rc = 1;
    } else if (platform_board_cpu(pl, rank, R)) {
        mapping_set_single(m, n, rank);
        rc = plan_build(mine, n, m, rank, err) ? 1 : 0;
    }
    mapping_free(m);
    if (!(rc = agree(rc, err))) {
        rt_options ob = *o;
        ob.check = 0; /* the run alone checked the output */
        ob.output = NULL;
        ob.trace = NULL;
        ob.handoff = 0; /* the run alone probed */
        rt_result rb;
        rc = rt_exec_plan(n, pl, platform_board_cpu(pl, rank, R) ? mine : pa, &ob, "--beside", &rb, err);
        if (!rc && rank == 0) {
            r->beside.n = nb;
            r->beside.med_ms = rb.lat_med_ms;
            r->beside.min_ms = rb.lat_min_ms;
            r->beside.max_ms = rb.lat_max_ms;
        }
    }
    plan_free(mine);
    return rc;
}

int rt_exec(const rt_options *o, rt_result *r, char *err)
{
    net *n = NULL;
    platform *pl = NULL;
    plan *p = plan_new();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    g_rank = rank;
    memset(r, 0, sizeof *r);
    err[0] = 0;
    /* Every rank reads the same files; the first failure is reported. */
    int rc = p ? load(o, &n, &pl, p, err) : (base_seterr(err, "out of memory"), 1);
    rt_options alone = *o;
    alone.beside = 0;
    if (!(rc = agree(rc, err))) rc = rt_exec_plan(n, pl, p, &alone, o->mapping, r, err);
    if (!rc && o->beside && !o->mapping) rc = beside(n, pl, p, o, rank, r, err);
    plan_free(p);
    platform_free(pl);
    net_free(n);
    return rc;
}
