/* exec.c -- the MPI interpreter of a Plan; see exec.h for the semantics it
 * shares with the cost model.
 *
 * Invariant: a rank touches only its own steps, its own slices' weights and
 * the tensors its steps produce or receive; every RECV has its buffer and
 * MPI_Irecv before the inference's first step, and every tensor buffer is
 * released exactly once per inference (after its free-list step, or after
 * its pending sends complete).
 */
#include "exec.h"
#include "exec_trace.h"
#include "kernels.h"
#include "mapping.h"
#include "plan.h"
#include "platform.h"
#include "weights.h"

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) { return MPI_Wtime(); }

int64_t rt_peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int64_t kb = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lld kB", (long long *)&kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

/* `local-*` platforms: ranks that share this machine's cores, one each. */
static int local_platform(const platform *pl) { return strncmp(pl->name, "local", 5) == 0; }

int rt_threads(const platform *pl, int dev)
{
    return local_platform(pl) || pl->dev[dev].cores < 1 ? 1 : pl->dev[dev].cores;
}

/* ---- launching ---- */

void rt_mpirun_env(void)
{
    /* Open MPI refuses root unless both variables are set; harmless otherwise. */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    /* Quiet the "no high-performance network" notices of containers. */
    setenv("OMPI_MCA_btl_base_warn_component_unused", "0", 0);
}

int rt_board_is_here(const char *board)
{
    char host[256];
    if (!strcmp(board, "localhost") || !strcmp(board, "127.0.0.1") || !strcmp(board, "::1"))
        return 1;
    if (gethostname(host, sizeof host)) return 0;
    host[sizeof host - 1] = 0;
    size_t l = strcspn(host, ".");
    return !strcmp(board, host) || (strlen(board) == l && !strncmp(board, host, l));
}

int rt_placement_file(const platform *pl, const char *dir, char *path, size_t len, char *remote,
                      size_t rlen, char *err)
{
    char host[256];
    size_t k = 0;
    path[0] = remote[0] = 0;
    for (int d = 0; d < pl->ndev; d++) {
        const char *b = pl->dev[d].board;
        int seen = rt_board_is_here(b);
        for (int e = 0; e < d && !seen; e++) seen = !strcmp(pl->dev[e].board, b);
        if (!seen && k < rlen)
            k += (size_t)snprintf(remote + k, rlen - k, "%s%s", k ? ", " : "", b);
    }
    if (!remote[0] && local_platform(pl)) return 0;
    /* Open MPI knows this machine by its host name only: a line "localhost"
     * next to remote boards is taken for another node. */
    if (gethostname(host, sizeof host)) snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = 0;
    snprintf(path, len, "%s/hosts", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, NET_ERRLEN, "%.300s: cannot write: %s", path, strerror(errno));
        path[0] = 0;
        return -1;
    }
    for (int d = 0; d < pl->ndev; d++)
        fprintf(f, "%s\n", rt_board_is_here(pl->dev[d].board) ? host : pl->dev[d].board);
    if (fclose(f)) {
        snprintf(err, NET_ERRLEN, "%.300s: cannot write: %s", path, strerror(errno));
        remove(path);
        path[0] = 0;
        return -1;
    }
    return 0;
}

int rt_mpirun_argv(int np, const char *hostfile, const char *seqfile, const char *const *args,
                   int nargs, const char **argv_out)
{
    static char npbuf[16];
    int k = 0;
    snprintf(npbuf, sizeof npbuf, "%d", np);
    argv_out[k++] = "mpirun";
    argv_out[k++] = "-np";
    argv_out[k++] = npbuf;
    argv_out[k++] = "--oversubscribe";
    if (hostfile) {
        argv_out[k++] = "--hostfile";
        argv_out[k++] = hostfile;
    }
    if (seqfile) {
        argv_out[k++] = "--hostfile";
        argv_out[k++] = seqfile;
        argv_out[k++] = "--map-by";
        argv_out[k++] = "seq";
        argv_out[k++] = "--bind-to";
        argv_out[k++] = "none";
    }
    for (int i = 0; i < nargs; i++) argv_out[k++] = args[i];
    argv_out[k] = NULL;
    return k;
}

/* ---- energy sensors ---- */

struct rt_sensor {
    const char *path;
    int counter;
    double start_uj;
    double t_start, t_last, p_last; /* power files: integrated up to t_last */
    volatile int run;
    double joules;
    pthread_t th;
};

static int read_num(const char *path, double *v)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int ok = fscanf(f, "%lf", v) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

/* Trapezoids between samples; the last value holds until the next one. */
static void *sample_power(void *arg)
{
    rt_sensor *s = arg;
    while (s->run) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
        double p, t = base_now();
        if (read_num(s->path, &p) == 0) {
            s->joules += 0.5 * (p + s->p_last) * 1e-3 * (t - s->t_last);
            s->p_last = p;
            s->t_last = t;
        }
    }
    return NULL;
}

rt_sensor *rt_sensor_start(const char *path)
{
    double v;
    if (!path || read_num(path, &v)) return NULL;
    rt_sensor *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->path = path;
    s->counter = strstr(path, "energy_uj") != NULL;
    s->t_start = s->t_last = base_now();
    if (s->counter) {
        s->start_uj = v;
        return s;
    }
    s->p_last = v;
    s->run = 1;
    if (pthread_create(&s->th, NULL, sample_power, s)) {
        free(s);
        return NULL;
    }
    return s;
}

double rt_sensor_stop(rt_sensor *s, double *seconds)
{
    double j, t;
    if (s->counter) {
        double v = s->start_uj;
        read_num(s->path, &v);
        t = base_now();
        j = v >= s->start_uj ? (v - s->start_uj) * 1e-6 : NAN; /* wrapped: unknown */
    } else {
        s->run = 0;
        pthread_join(s->th, NULL);
        t = base_now();
        j = s->joules + s->p_last * 1e-3 * (t - s->t_last);
    }
    if (seconds) *seconds = t - s->t_start;
    free(s);
    return j;
}

/* ---- timeouts and injected faults ---- */

static double g_timeout;
static int g_rank;

static void on_alarm(int sig)
{
    (void)sig;
    char msg[128];
    int len = snprintf(msg, sizeof msg, "dse exec: rank %d: timed out after %.0f s\n", g_rank,
                       g_timeout);
    if (write(2, msg, (size_t)len) < 0) {}
    _exit(1);
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

/* ---- one rank's state ---- */

typedef struct {
    const net *n;
    const plan *p;
    int dev;
    int nsteps;
    const plan_step *st;
    float **wts;        /* per step: weights of a COMPUTE step (or NULL), in warena */
    float *warena;      /* every weight slice of this rank (kern_alloc_streamed) */
    float *work;        /* kernel workspace, max over my compute steps */
    float **buf;        /* per local tensor */
    int *sending;       /* per local tensor: sends in flight */
    int *dead;          /* per local tensor: freed once sends complete */
    MPI_Request *rreq;  /* per step (RECV) */
    MPI_Request *sreq;  /* per step (SEND) */
    int *sreq_tensor;   /* per step (SEND): its tensor */
    const float *input; /* network input (source rank) */
    rt_fault fault;
    double *rec, *rec_origin; /* --trace: this inference's step times (exec_trace.h), or NULL */
    double busy, wait, finish;
    int64_t sent, recvd;
} rank_state;

static size_t tensor_floats(const plan *p, int dev, int t)
{
    return (size_t)(plan_tensor_of(p, dev, t)->bytes / 4);
}

static void release(rank_state *s, int t)
{
    free(s->buf[t]);
    s->buf[t] = NULL;
    s->dead[t] = 0;
}

/* Free tensors whose sends have completed. */
static void reap_sends(rank_state *s, int wait_all)
{
    for (int i = 0; i < s->nsteps; i++) {
        if (s->sreq[i] == MPI_REQUEST_NULL) continue;
        int done = 0;
        if (wait_all) {
            MPI_Wait(&s->sreq[i], MPI_STATUS_IGNORE);
            done = 1;
        } else {
            MPI_Test(&s->sreq[i], &done, MPI_STATUS_IGNORE);
        }
        if (!done) continue;
        int t = s->sreq_tensor[i];
        if (--s->sending[t] == 0 && s->dead[t]) release(s, t);
    }
}

/* One inference.  out (numel of the output layer) is filled on the output
 * device.  Returns 0 or -1 with err. */
static int run_once(rank_state *s, float *out, char *err)
{
    const plan *p = s->p;
    const net *n = s->n;
    int d = s->dev;
    int ntens = p->tensor0[d + 1] - p->tensor0[d];
    double t0 = now();
    if (s->rec) *s->rec_origin = t0;
    s->busy = s->wait = 0;
    s->sent = s->recvd = 0;
    for (int t = 0; t < ntens; t++) {
        s->buf[t] = NULL;
        s->sending[t] = s->dead[t] = 0;
    }
    if (d == p->source) {
        size_t nf = tensor_floats(p, d, p->input_tensor);
        s->buf[p->input_tensor] = malloc(nf * sizeof(float));
        if (!s->buf[p->input_tensor]) goto oom;
        memcpy(s->buf[p->input_tensor], s->input, nf * sizeof(float));
    }
    for (int i = 0; i < s->nsteps; i++) {
        s->rreq[i] = s->sreq[i] = MPI_REQUEST_NULL;
        const plan_step *st = &s->st[i];
        if (st->op != PLAN_RECV) continue;
        size_t nf = tensor_floats(p, d, st->tensor);
        if (!(s->buf[st->tensor] = malloc(nf * sizeof(float)))) goto oom;
        MPI_Irecv(s->buf[st->tensor], (int)nf, MPI_FLOAT, st->peer, st->msg, MPI_COMM_WORLD,
                  &s->rreq[i]);
    }
    for (int i = 0; i < s->nsteps; i++) {
        const plan_step *st = &s->st[i];
        double a = now();
        switch (st->op) {
        case PLAN_COMPUTE: {
            const float *ins[64];
            for (int k = 0; k < st->narg && k < 64; k++) ins[k] = s->buf[p->args[st->arg0 + k]];
            if (st->narg > 64) {
                snprintf(err, NET_ERRLEN, "layer %s has more than 64 inputs",
                         n->layers[st->layer].name);
                return -1;
            }
            size_t nf = tensor_floats(p, d, st->tensor);
            float *o = malloc(nf * sizeof(float));
            if (!o) goto oom;
            if (s->fault == RT_FAULT_ABORT) abort();
            if (s->fault == RT_FAULT_STALL)
                for (;;) pause();
            if (kern_run(n, st->layer, st->c0, st->nc, ins, s->wts[i], o, s->work, err)) {
                free(o);
                return -1;
            }
            if (s->fault == RT_FAULT_CORRUPT) o[0] += 1.0f;
            s->buf[st->tensor] = o;
            break;
        }
        case PLAN_CONCAT: {
            size_t nf = tensor_floats(p, d, st->tensor), off = 0;
            float *o = malloc(nf * sizeof(float));
            if (!o) goto oom;
            for (int k = 0; k < st->narg; k++) {
                int t = p->args[st->arg0 + k];
                size_t m = tensor_floats(p, d, t);
                memcpy(o + off, s->buf[t], m * sizeof(float));
                off += m;
            }
            s->buf[st->tensor] = o;
            break;
        }
        case PLAN_SEND: {
            size_t nf = tensor_floats(p, d, st->tensor);
            MPI_Isend(s->buf[st->tensor], (int)nf, MPI_FLOAT, st->peer, st->msg, MPI_COMM_WORLD,
                      &s->sreq[i]);
            s->sreq_tensor[i] = st->tensor;
            s->sending[st->tensor]++;
            s->sent += (int64_t)nf * 4;
            break;
        }
        case PLAN_RECV:
            MPI_Wait(&s->rreq[i], MPI_STATUS_IGNORE);
            s->recvd += (int64_t)tensor_floats(p, d, st->tensor) * 4;
            break;
        }
        double b = now();
        if (st->op == PLAN_RECV) s->wait += b - a;
        else if (st->op != PLAN_SEND) s->busy += b - a;
        if (s->rec) {
            s->rec[2 * i] = a - t0;
            s->rec[2 * i + 1] = b - t0;
        }
        for (int k = 0; k < st->nfree; k++) {
            int t = p->args[st->free0 + k];
            if (s->sending[t]) s->dead[t] = 1;
            else release(s, t);
        }
        if (st->op != PLAN_SEND) reap_sends(s, 0);
    }
    if (d == p->out_dev && out)
        memcpy(out, s->buf[p->out_tensor], tensor_floats(p, d, p->out_tensor) * sizeof(float));
    s->finish = now() - t0;
    reap_sends(s, 1);
    for (int t = 0; t < ntens; t++)
        if (s->buf[t]) release(s, t);
    return 0;
oom:
    snprintf(err, NET_ERRLEN, "device %d: out of memory", d);
    return -1;
}

/* Agree on an error across ranks: the largest code wins; rank 0 keeps the
 * message of the lowest rank that failed. */
static int agree(int rc, char *err)
{
    int all = 0, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!all) return 0;
    int who = rc ? rank : 1 << 30, first;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first != 0) {
        if (rank == first) MPI_Send(err, NET_ERRLEN, MPI_CHAR, 0, 1 << 20, MPI_COMM_WORLD);
        if (rank == 0)
            MPI_Recv(err, NET_ERRLEN, MPI_CHAR, first, 1 << 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return all;
}

static int read_input(const char *path, const net *n, float *x, char *err)
{
    size_t want = (size_t)net_shape_numel(n->input);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, NET_ERRLEN, "%s: cannot open: %s", path, strerror(errno));
        return 2;
    }
    size_t got = fread(x, sizeof(float), want, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != want || extra) {
        snprintf(err, NET_ERRLEN, "%s: expected %zu float32 values (%dx%dx%d), file has %s",
                 path, want, n->input.c, n->input.h, n->input.w, extra ? "more" : "fewer");
        return 2;
    }
    return 0;
}

int rt_exec(const rt_options *o, rt_result *r, char *err)
{
    int rank = 0, size = 1, rc = 0;
    net *n = NULL;
    platform *pl = NULL;
    mapping *m = NULL;
    plan *p = plan_new();
    rank_state s;
    float *input = NULL, *out = NULL;
    double *lat = NULL, *busy = NULL, *wait = NULL, *fin = NULL;
    rt_tracer *tr = NULL;
    memset(&s, 0, sizeof s);
    memset(r, 0, sizeof *r);
    err[0] = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g_rank = rank;

    /* Every rank reads the same files; the first failure is reported. */
    if (!(n = net_open(o->network, err))) rc = 2;
    else if (!(pl = platform_open(o->platform, err))) rc = 2;
    else if (size != pl->ndev) {
        snprintf(err, NET_ERRLEN, "%s has %d devices but mpirun started %d ranks (use -np %d)",
                 o->platform, pl->ndev, size, pl->ndev);
        rc = 2;
    } else if (pl->ndev > 64) {
        snprintf(err, NET_ERRLEN, "%s: more than 64 devices", o->platform);
        rc = 2;
    } else if (o->mapping) {
        if (!(m = mapping_load(o->mapping, n, pl, err))) rc = 2;
    } else if (o->single_dev < 0 || o->single_dev >= pl->ndev) {
        snprintf(err, NET_ERRLEN, "--single %d: no such device", o->single_dev);
        rc = 2;
    } else {
        m = mapping_new(n->n, pl->ndev);
        mapping_set_single(m, n, o->single_dev);
    }
    if (!rc && plan_build(p, n, m, pl->source, err)) rc = 1;
    if (!rc)
        for (int d = 0; d < pl->ndev; d++)
            if (pl->dev[d].kind == PLAT_GPU && plan_nsteps_dev(p, d) > 0) {
                int k = 0;
                for (int i = 0; i < plan_nsteps_dev(p, d); i++)
                    k += plan_steps_dev(p, d)[i].op == PLAN_COMPUTE;
                snprintf(err, NET_ERRLEN, "device %s is a GPU and the mapping puts %d compute "
                         "steps on it: this runtime has no GPU kernels (the model still scores "
                         "such mappings)", pl->dev[d].name, k);
                rc = 2;
                break;
            }
    if ((rc = agree(rc, err))) goto out;
    {
        int32_t tag_ub_ok = 1;
        int *ub, flag;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
        if (flag && *ub < p->nmsgs) tag_ub_ok = 0;
        if (!tag_ub_ok) {
            snprintf(err, NET_ERRLEN, "plan has %d messages but MPI tags stop at %d", p->nmsgs, *ub);
            rc = 1;
        }
    }
    if ((rc = agree(rc, err))) goto out;

    /* Local set-up: threads, weights of my slices, buffers. */
    kern_set_threads(rt_threads(pl, rank));
    /* Keep freed activations in the heap: no page faults between inferences,
     * and VmHWM then tracks the peak live set. */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, -1);
    s.n = n;
    s.p = p;
    s.dev = rank;
    s.nsteps = plan_nsteps_dev(p, rank);
    s.st = plan_steps_dev(p, rank);
    s.fault = rt_fault_for(rank);
    int ntens = p->tensor0[rank + 1] - p->tensor0[rank];
    s.wts = calloc((size_t)s.nsteps + 1, sizeof *s.wts);
    s.buf = calloc((size_t)ntens + 1, sizeof *s.buf);
    s.sending = calloc((size_t)ntens + 1, sizeof(int));
    s.dead = calloc((size_t)ntens + 1, sizeof(int));
    s.rreq = malloc(((size_t)s.nsteps + 1) * sizeof(MPI_Request));
    s.sreq = malloc(((size_t)s.nsteps + 1) * sizeof(MPI_Request));
    s.sreq_tensor = malloc(((size_t)s.nsteps + 1) * sizeof(int));
    size_t work = 0;
    if (!s.wts || !s.buf || !s.sending || !s.dead || !s.rreq || !s.sreq || !s.sreq_tensor) {
        snprintf(err, NET_ERRLEN, "device %d: out of memory", rank);
        rc = 1;
    }
    /* Weights: one arena for all my slices (streamed every inference, so
     * huge pages), an ONNX file's initializers read once. */
    size_t wtotal = 0;
    for (int i = 0; !rc && i < s.nsteps; i++) {
        const plan_step *st = &s.st[i];
        if (st->op != PLAN_COMPUTE) continue;
        wtotal += (size_t)net_slice_weights(n, st->layer, st->c0, st->nc);
        size_t w = kern_workspace_floats(n, st->layer, st->nc);
        if (w > work) work = w;
    }
    float *whole = NULL;
    if (!rc && wtotal && !(s.warena = kern_alloc_streamed(wtotal))) {
        snprintf(err, NET_ERRLEN, "device %d: out of memory for %zu weights", rank, wtotal);
        rc = 1;
    }
    if (!rc && wtotal && weights_in_onnx(n) && !(whole = weights_load(n, err))) rc = 1;
    for (size_t i = 0, off = 0; !rc && i < (size_t)s.nsteps; i++) {
        const plan_step *st = &s.st[i];
        size_t nf = st->op == PLAN_COMPUTE ? (size_t)net_slice_weights(n, st->layer, st->c0, st->nc) : 0;
        if (!nf) continue;
        s.wts[i] = s.warena + off;
        off += nf;
        if (kern_weights_fill(n, whole, st->layer, st->c0, st->nc, o->seed, s.wts[i], err)) rc = 1;
    }
    free(whole);
    if (!rc && work && !(s.work = malloc(work * sizeof(float)))) {
        snprintf(err, NET_ERRLEN, "device %d: out of memory for the workspace", rank);
        rc = 1;
    }
    if (!rc && rank == pl->source) {
        input = malloc((size_t)net_shape_numel(n->input) * sizeof(float));
        if (!input) rc = 1;
        else if (o->input) rc = read_input(o->input, n, input, err);
        else kern_input_gen(n, o->seed ^ 0x1234567ull, input);
        s.input = input;
    }
    const net_layer *OL = &n->layers[n->n - 1];
    r->out_numel = net_shape_numel(OL->out);
    if (!rc && rank == p->out_dev && !(out = malloc((size_t)r->out_numel * sizeof(float)))) rc = 1;
    if ((rc = agree(rc, err))) goto out;

    /* Warm-up, then timed inferences from a common barrier. */
    if (o->timeout_s > 0) {
        g_timeout = o->timeout_s;
        signal(SIGALRM, on_alarm);
        alarm((unsigned)ceil(o->timeout_s));
    }
    int reps = o->reps > 0 ? o->reps : 1, warm = o->warmup > 0 ? o->warmup : 0;
    lat = calloc((size_t)reps, sizeof *lat);
    busy = calloc((size_t)reps, sizeof *busy);
    wait = calloc((size_t)reps, sizeof *wait);
    fin = calloc((size_t)reps, sizeof *fin);
    rt_sensor *sen = NULL;
    if (o->trace) {
        int ok = (tr = rt_tracer_new(s.nsteps, reps)) != NULL;
        if (!ok) snprintf(err, NET_ERRLEN, "device %d: out of memory for the trace", rank);
        if ((rc = agree(!ok, err))) goto out;
        rt_tracer_sync(tr, 0);
    }
    for (int it = 0; it < warm + reps; it++) {
        if (it == warm)
            sen = rt_sensor_start(pl->dev[rank].energy_sensor);
        s.rec = tr && it >= warm ? rt_tracer_rep(tr, it - warm, &s.rec_origin) : NULL;
        MPI_Barrier(MPI_COMM_WORLD);
        /* The first inference's output is the one checked. */
        rc = run_once(&s, it == 0 ? out : NULL, err);
        if (rc) break;
        if (it >= warm) {
            int k = it - warm;
            busy[k] = s.busy;
            wait[k] = s.wait;
            fin[k] = s.finish;
            lat[k] = s.finish; /* on the output device: barrier to output complete */
        }
    }
    int have_sensor = sen != NULL;
    double joules = sen ? rt_sensor_stop(sen, NULL) : 0;
    if (isnan(joules)) have_sensor = 0, joules = 0;
    alarm(0);
    if ((rc = agree(rc ? 1 : 0, err))) goto out;
    int64_t rss = rt_peak_rss();
    /* The trace after the memory figure: gathering it allocates on rank 0. */
    if (tr) {
        rt_tracer_sync(tr, 1);
        if ((rc = rt_tracer_write(tr, o->trace, n, pl, p, lat, warm, err))) goto out;
    }

    /* Gather per-device figures on rank 0. */
    double mine[8] = {base_median(busy, reps) * 1e3, base_median(wait, reps) * 1e3,
                      base_median(fin, reps) * 1e3, (double)s.sent, (double)s.recvd,
                      rss / 1e6, have_sensor ? joules / reps : 0, have_sensor};
    double *all = rank == 0 ? calloc((size_t)size * 8, sizeof(double)) : NULL;
    MPI_Gather(mine, 8, MPI_DOUBLE, all, 8, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    /* Latency: measured on the output device, sent to rank 0. */
    double lm[3] = {0, 0, 0};
    if (rank == p->out_dev) {
        lm[0] = base_median(lat, reps) * 1e3;
        lm[1] = lat[0] * 1e3;
        lm[2] = lat[reps - 1] * 1e3; /* sorted by base_median() */
    }
    double lm0[3];
    MPI_Reduce(lm, lm0, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        r->ndev = size;
        r->out_dev = p->out_dev;
        r->lat_med_ms = lm0[0];
        r->lat_min_ms = lm0[1];
        r->lat_max_ms = lm0[2];
        for (int d = 0; d < size; d++) {
            rt_device *D = &r->dev[d];
            double *v = all + 8 * d;
            snprintf(D->name, sizeof D->name, "%s", pl->dev[d].name);
            D->nsteps = plan_nsteps_dev(p, d);
            D->busy_ms = v[0];
            D->wait_ms = v[1];
            D->finish_ms = v[2];
            D->bytes_sent = (int64_t)v[3];
            D->bytes_recv = (int64_t)v[4];
            D->peak_rss_mb = v[5];
            D->energy_j = v[6];
            D->energy_measured = v[7] != 0;
        }
        free(all);
    }

    /* Output file and correctness, after the measurements (the reference run
     * holds every weight and would distort the memory figures). */
    int orc = 0;
    double check[3] = {0, 0, 1};
    if (rank == p->out_dev) {
        if (o->output) {
            FILE *f = fopen(o->output, "wb");
            if (!f || fwrite(out, sizeof(float), (size_t)r->out_numel, f) != (size_t)r->out_numel) {
                snprintf(err, NET_ERRLEN, "%s: cannot write the output: %s", o->output,
                         strerror(errno));
                orc = 1;
            }
            if (f && fclose(f)) orc = 1;
        }
        if (!orc && o->check) {
            float *ref = malloc((size_t)r->out_numel * sizeof(float));
            float *x = malloc((size_t)net_shape_numel(n->input) * sizeof(float));
            int have_x = 0;
            if (ref && x) {
                if (o->input) have_x = read_input(o->input, n, x, err) == 0;
                else kern_input_gen(n, o->seed ^ 0x1234567ull, x), have_x = 1;
            }
            kern_model *km = have_x ? kern_model_new(n, o->seed, err) : NULL;
            if (!km || kern_model_forward(km, x, ref, NULL, err)) {
                orc = 1;
            } else {
                double scale = 0, maxabs = 0, maxrel = 0;
                int ok = 1;
                for (int64_t i = 0; i < r->out_numel; i++)
                    if (fabs(ref[i]) > scale) scale = fabs(ref[i]);
                for (int64_t i = 0; i < r->out_numel; i++) {
                    double e = fabs((double)out[i] - ref[i]);
                    double rel = e / fmax(fabs(ref[i]), 1e-1 * scale + 1e-30);
                    if (e > maxabs) maxabs = e;
                    if (rel > maxrel) maxrel = rel;
                    if (!(e <= 1e-4 * fabs(ref[i]) + 1e-5 * scale)) ok = 0;
                }
                check[0] = maxabs;
                check[1] = maxrel;
                check[2] = ok;
                if (!ok) {
                    snprintf(err, NET_ERRLEN, "output mismatch against the single-device run: "
                             "max relative error %.3g (tolerance 1e-4)", maxrel);
                    orc = 1;
                }
            }
            kern_model_free(km);
            free(ref);
            free(x);
        }
    }
    /* Send the check to rank 0. */
    if (p->out_dev != 0) {
        if (rank == p->out_dev) MPI_Send(check, 3, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
        if (rank == 0) MPI_Recv(check, 3, MPI_DOUBLE, p->out_dev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank == 0) {
        r->checked = o->check;
        r->max_abs_err = check[0];
        r->max_rel_err = check[1];
        r->check_ok = check[2] != 0;
    }
    rc = agree(orc, err);
out:
    rt_tracer_free(tr);
    free(s.warena);
    free(s.wts);
    free(s.work);
    free(s.buf);
    free(s.sending);
    free(s.dead);
    free(s.rreq);
    free(s.sreq);
    free(s.sreq_tensor);
    free(input);
    free(out);
    free(lat);
    free(busy);
    free(wait);
    free(fin);
    plan_free(p);
    mapping_free(m);
    platform_free(pl);
    net_free(n);
    return rc;
}
