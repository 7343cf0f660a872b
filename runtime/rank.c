/* rank.c -- one rank's interpreter of its step list (rt_internal.h): set
 * up once, then one inference per rt_rank_run.
 *
 * Invariant: a rank touches only its own steps, its own slices' weights and
 * the tensors its steps produce or receive; every RECV has its buffer and
 * MPI_Irecv before the inference's first step and its message's size is
 * checked against the Plan; every tensor buffer is released exactly once
 * per inference (after its free-list step, or after its pending sends
 * complete).  Tensors are boxes (plan.h): a SEND of part of a tensor
 * sends it in place when it is one run of floats there and packs it first
 * otherwise (plan_send_offset; rows a peer lacks, over several channels,
 * are packed); a CONCAT copies each piece's
 * intersection with its box; a COMPUTE of a row or column band runs kern_run_band.
 */
#include "rt_internal.h"

#include "kernels.h"
#include "weights.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static size_t tensor_floats(const plan *p, int dev, int t)
{
    return (size_t)(plan_tensor_of(p, dev, t)->bytes / 4);
}

/* Copy into dst (box d, stored (nc, nh, nw)) the part of src (box s) that
 * lies in the box x (inside both): whole planes' rows at once where both
 * hold all of x's columns, else row by row. */
static void copy_box(float *dst, const plan_tensor *d, const float *src, const plan_tensor *s,
                     map_box x)
{
    int rows_whole = d->nw == x.nw && s->nw == x.nw;
    for (int c = x.c0; c < x.c0 + x.nc; c++) {
        float *o = dst + ((size_t)(c - d->c0) * d->nh + (x.h0 - d->h0)) * d->nw + (x.w0 - d->w0);
        const float *i = src + ((size_t)(c - s->c0) * s->nh + (x.h0 - s->h0)) * s->nw + (x.w0 - s->w0);
        if (rows_whole) {
            memcpy(o, i, (size_t)x.nh * x.nw * sizeof(float));
            continue;
        }
        for (int r = 0; r < x.nh; r++, o += d->nw, i += s->nw) memcpy(o, i, (size_t)x.nw * sizeof(float));
    }
}

/* a ∩ b, nc, nh or nw 0 when they do not meet. */
static map_box box_cap(const plan_tensor *a, const plan_tensor *b)
{
    map_box x;
    x.c0 = a->c0 > b->c0 ? a->c0 : b->c0;
    x.h0 = a->h0 > b->h0 ? a->h0 : b->h0;
    x.w0 = a->w0 > b->w0 ? a->w0 : b->w0;
    int c1 = a->c0 + a->nc < b->c0 + b->nc ? a->c0 + a->nc : b->c0 + b->nc;
    int h1 = a->h0 + a->nh < b->h0 + b->nh ? a->h0 + a->nh : b->h0 + b->nh;
    int w1 = a->w0 + a->nw < b->w0 + b->nw ? a->w0 + a->nw : b->w0 + b->nw;
    x.nc = c1 > x.c0 ? c1 - x.c0 : 0;
    x.nh = h1 > x.h0 ? h1 - x.h0 : 0;
    x.nw = w1 > x.w0 ? w1 - x.w0 : 0;
    return x;
}

int rt_read_input(const char *path, const net *n, float *x, char *err)
{
    char pb[BASE_PATHSHOW + 1];
    size_t want = (size_t)net_shape_numel(n->input);
    FILE *f = base_open_input(path, -1, NULL, err); /* a regular file: never /dev/zero or a FIFO */
    if (!f) return 2;
    size_t got = fread(x, sizeof(float), want, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != want || extra) {
        base_seterr(err, "%s: expected %zu float32 values (%dx%dx%d), file has %s",
                    base_path(path, pb), want, n->input.c, n->input.h, n->input.w,
                    extra ? "more" : "fewer");
        return 2;
    }
    return 0;
}

int rt_rank_setup(rt_rank *s, const net *n, const plan *p, int dev, const char *input,
                  uint64_t seed, char *err)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->p = p;
    s->dev = dev;
    s->nsteps = plan_nsteps_dev(p, dev);
    s->st = plan_steps_dev(p, dev);
    s->fault = rt_fault_for(dev);
    int ntens = p->tensor0[dev + 1] - p->tensor0[dev];
    s->wts = calloc((size_t)s->nsteps + 1, sizeof *s->wts);
    s->buf = calloc((size_t)ntens + 1, sizeof *s->buf);
    s->sending = calloc((size_t)ntens + 1, sizeof(int));
    s->dead = calloc((size_t)ntens + 1, sizeof(int));
    s->rreq = malloc(((size_t)s->nsteps + 1) * sizeof(MPI_Request));
    s->sreq = malloc(((size_t)s->nsteps + 1) * sizeof(MPI_Request));
    s->sreq_tensor = malloc(((size_t)s->nsteps + 1) * sizeof(int));
    s->pack = calloc((size_t)s->nsteps + 1, sizeof *s->pack);
    s->sent_to = calloc((size_t)p->ndev, sizeof *s->sent_to);
    if (!s->wts || !s->buf || !s->sending || !s->dead || !s->rreq || !s->sreq || !s->sreq_tensor ||
        !s->pack || !s->sent_to) {
        base_seterr(err, "device %d: out of memory", dev);
        return 1;
    }
    /* Weights: one arena for all my slices (streamed every inference, so
     * huge pages), an ONNX file's initializers read once. */
    size_t wtotal = 0, work = 0;
    for (int i = 0; i < s->nsteps; i++) {
        const plan_step *st = &s->st[i];
        if (st->op != PLAN_COMPUTE) continue;
        wtotal += (size_t)net_slice_weights(n, st->layer, st->c0, st->nc);
        size_t w = plan_step_band(st, n)
                       ? kern_workspace_band(n, st->layer, st->h0, st->nh, st->w0, st->nw)
                       : kern_workspace_floats(n, st->layer, st->nc);
        if (w > work) work = w;
    }
    if (wtotal && !(s->warena = kern_alloc_streamed(wtotal))) {
        base_seterr(err, "device %d: out of memory for %zu weights", dev, wtotal);
        return 1;
    }
    float *whole = NULL;
    if (wtotal && weights_in_onnx(n) && !(whole = weights_load(n, err))) return 1;
    int rc = 0;
    for (size_t i = 0, off = 0; !rc && i < (size_t)s->nsteps; i++) {
        const plan_step *st = &s->st[i];
        size_t nf = st->op == PLAN_COMPUTE ? (size_t)net_slice_weights(n, st->layer, st->c0, st->nc) : 0;
        if (!nf) continue;
        s->wts[i] = s->warena + off;
        off += nf;
        if (kern_weights_fill(n, whole, st->layer, st->c0, st->nc, seed, s->wts[i], err)) rc = 1;
    }
    free(whole);
    if (rc) return rc;
    if (work && !(s->work = malloc(work * sizeof(float)))) {
        base_seterr(err, "device %d: out of memory for the workspace", dev);
        return 1;
    }
    if (dev == p->source) {
        if (!(s->input = malloc((size_t)net_shape_numel(n->input) * sizeof(float)))) {
            base_seterr(err, "device %d: out of memory for the input", dev);
            return 1;
        }
        if (input) return rt_read_input(input, n, s->input, err);
        kern_input_gen(n, seed ^ 0x1234567ull, s->input);
    }
    return 0;
}

void rt_rank_free(rt_rank *s)
{
    free(s->warena);
    free(s->wts);
    free(s->work);
    free(s->buf);
    free(s->sending);
    free(s->dead);
    free(s->rreq);
    free(s->sreq);
    free(s->sreq_tensor);
    if (s->pack)
        for (int i = 0; i < s->nsteps; i++) free(s->pack[i]);
    free(s->pack);
    free(s->sent_to);
    free(s->input);
    memset(s, 0, sizeof *s);
}

volatile sig_atomic_t rt_waiting_for = RT_WAIT_NONE;

int rt_wait_nap(const platform *pl)
{
    const char *e = getenv("DSE_WAIT");
    if (e && !strcmp(e, "spin")) return 0;
    if (e && !strcmp(e, "nap")) return 20;
    return pl->emulated ? 20 : 0;
}

/* The nap doubles from nap_us up to this many times nap_us while a wait
 * lasts: a long wait then polls a fifth as often (each poll is a few
 * microseconds of CPU taken from whatever shares the core), and a message
 * is picked up at most that much later than it arrived. */
#define NAP_GROWTH_MAX 5

int rt_wait(MPI_Request *r, MPI_Status *st, int nap_us)
{
    if (nap_us <= 0) return MPI_Wait(r, st);
    long nap = nap_us;
    for (;;) {
        int done = 0, rc = MPI_Test(r, &done, st);
        if (rc != MPI_SUCCESS || done) return rc;
        struct timespec ts = {(time_t)(nap / 1000000), (nap % 1000000) * 1000L};
        nanosleep(&ts, NULL);
        nap = nap * 2 < (long)nap_us * NAP_GROWTH_MAX ? nap * 2 : (long)nap_us * NAP_GROWTH_MAX;
    }
}

/* Always an MPI_Ibarrier, whatever the nap: ranks that wait differently
 * (an idle rank napping long, a working one spinning) still meet in the
 * same collective; an MPI_Barrier would not match an MPI_Ibarrier. */
int rt_barrier_comm(MPI_Comm comm, int nap_us)
{
    MPI_Request r;
    int rc = MPI_Ibarrier(comm, &r);
    return rc == MPI_SUCCESS ? rt_wait(&r, MPI_STATUS_IGNORE, nap_us) : rc;
}

int rt_barrier(int nap_us) { return rt_barrier_comm(MPI_COMM_WORLD, nap_us); }

static void release(rt_rank *s, int t)
{
    free(s->buf[t]);
    s->buf[t] = NULL;
    s->dead[t] = 0;
}

/* Free tensors whose sends have completed. */
static void reap_sends(rt_rank *s, int wait_all)
{
    for (int i = 0; i < s->nsteps; i++) {
        if (s->sreq[i] == MPI_REQUEST_NULL) continue;
        int done = 0;
        if (wait_all) {
            rt_waiting_for = s->st[i].peer;
            rt_wait(&s->sreq[i], MPI_STATUS_IGNORE, s->nap_us);
            rt_waiting_for = RT_WAIT_NONE;
            done = 1;
        } else {
            MPI_Test(&s->sreq[i], &done, MPI_STATUS_IGNORE);
        }
        if (!done) continue;
        free(s->pack[i]);
        s->pack[i] = NULL;
        int t = s->sreq_tensor[i];
        if (t >= 0 && --s->sending[t] == 0 && s->dead[t]) release(s, t);
    }
}

/* The receive of step i is complete: its message must have the Plan's
 * size (a peer that built another Plan sends other sizes; MPI itself
 * refuses a larger one, MPI_ERR_TRUNCATE, under MPI_ERRORS_RETURN). */
static int recv_done(rt_rank *s, int i, char *err)
{
    const plan_step *st = &s->st[i];
    MPI_Status status;
    rt_waiting_for = st->peer;
    int rc = rt_wait(&s->rreq[i], &status, s->nap_us), count = -1;
    rt_waiting_for = RT_WAIT_NONE;
    if (rc == MPI_SUCCESS) MPI_Get_count(&status, MPI_FLOAT, &count);
    size_t want = tensor_floats(s->p, s->dev, st->tensor);
    if (rc != MPI_SUCCESS || count != (int)want) {
        base_seterr(err, "rank %d: message %d from rank %d has %s, its Plan says %zu bytes: the "
                    "ranks run different Plans", s->dev, st->msg, st->peer,
                    rc == MPI_SUCCESS ? "another size" : "more bytes", want * 4);
        return -1;
    }
    return 0;
}

int rt_rank_run(rt_rank *s, float *out, char *err)
{
    const plan *p = s->p;
    const net *n = s->n;
    int d = s->dev;
    int ntens = p->tensor0[d + 1] - p->tensor0[d];
    double t0 = MPI_Wtime();
    if (s->rec) *s->rec_origin = t0;
    rt_pace_idle(&s->pace);
    s->busy = s->wait = 0;
    s->sent = s->recvd = 0;
    memset(s->sent_to, 0, (size_t)p->ndev * sizeof *s->sent_to);
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
        double a = MPI_Wtime();
        /* A paced board (emulated, rt_pace) pays for its work before the
         * next message it sends or awaits and before the inference ends
         * (and whenever it owes 200 us), so what other boards see is what
         * a board of that speed would give them; a trace shows short steps
         * lumped at most 200 us late. */
        int works = st->op == PLAN_COMPUTE || st->op == PLAN_CONCAT;
        int settle = i + 1 == s->nsteps ||
                     (s->st[i + 1].op != PLAN_COMPUTE && s->st[i + 1].op != PLAN_CONCAT);
        if (works) rt_pace_begin(&s->pace);
        switch (st->op) {
        case PLAN_COMPUTE: {
            /* Args of this step are consecutive in the Plan: their buffers
             * are gathered into a small array (any count: NET_MAX_IN). */
            const float *ins_small[16], **ins = ins_small;
            if (st->narg > 16 && !(ins = malloc((size_t)st->narg * sizeof *ins))) goto oom;
            for (int k = 0; k < st->narg; k++) ins[k] = s->buf[p->args[st->arg0 + k]];
            size_t nf = tensor_floats(p, d, st->tensor);
            float *o = malloc(nf * sizeof(float));
            if (!o) {
                if (ins != ins_small) free(ins);
                goto oom;
            }
            if (s->fault == RT_FAULT_ABORT) abort();
            if (s->fault == RT_FAULT_STALL)
                for (;;) pause();
            int krc = plan_step_band(st, n)
                          ? kern_run_band(n, st->layer, st->h0, st->nh, st->w0, st->nw, ins,
                                          s->wts[i], o, s->work, err)
                          : kern_run(n, st->layer, st->c0, st->nc, ins, s->wts[i], o, s->work, err);
            if (ins != ins_small) free(ins);
            if (krc) {
                free(o);
                return -1;
            }
            if (s->fault == RT_FAULT_CORRUPT) o[0] += 1.0f;
            s->buf[st->tensor] = o;
            break;
        }
        case PLAN_CONCAT: {
            /* Each piece gives its intersection with the box (plan_check:
             * they tile it). */
            const plan_tensor *T = plan_tensor_of(p, d, st->tensor);
            float *o = malloc(tensor_floats(p, d, st->tensor) * sizeof(float) + 1);
            if (!o) goto oom;
            for (int k = 0; k < st->narg; k++) {
                int t = p->args[st->arg0 + k];
                const plan_tensor *A = plan_tensor_of(p, d, t);
                map_box x = box_cap(A, T);
                if (x.nc && x.nh && x.nw) copy_box(o, T, s->buf[t], A, x);
            }
            s->buf[st->tensor] = o;
            break;
        }
        case PLAN_SEND: {
            /* The step's box of the tensor: in place where it is one run
             * of floats there (a channel range of whole planes, rows of one
             * channel), else packed first (plan_send_offset: the model
             * charges the copy). */
            const plan_tensor *T = plan_tensor_of(p, d, st->tensor);
            const plan_msg *G = &p->msgs[st->msg];
            size_t nf = (size_t)(G->bytes / 4);
            const float *src = s->buf[st->tensor];
            int64_t off = plan_send_offset(p, d, st);
            if (off >= 0) {
                src += off;
            } else {
                plan_tensor X = {st->layer, st->c0, st->nc, st->h0, st->nh, st->w0, st->nw, G->bytes};
                if (!(s->pack[i] = malloc(nf * sizeof(float) + 1))) goto oom;
                copy_box(s->pack[i], &X, src, T,
                         (map_box){st->c0, st->nc, st->h0, st->nh, st->w0, st->nw});
                src = s->pack[i];
            }
            MPI_Isend(src, (int)nf, MPI_FLOAT, st->peer, st->msg, MPI_COMM_WORLD, &s->sreq[i]);
            /* A packed send holds its pack, not the tensor: the tensor may
             * be freed at its last reader, as the model frees it. */
            s->sreq_tensor[i] = off >= 0 ? st->tensor : -1;
            if (off >= 0) s->sending[st->tensor]++;
            s->sent += (int64_t)nf * 4;
            s->sent_to[st->peer] += (int64_t)nf * 4;
            break;
        }
        case PLAN_RECV:
            rt_pace_idle(&s->pace);
            if (recv_done(s, i, err)) return -1;
            s->recvd += (int64_t)tensor_floats(p, d, st->tensor) * 4;
            break;
        }
        if (works) rt_pace_end(&s->pace, settle);
        double b = MPI_Wtime();
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
    s->finish = MPI_Wtime() - t0;
    reap_sends(s, 1);
    for (int t = 0; t < ntens; t++)
        if (s->buf[t]) release(s, t);
    return 0;
oom:
    base_seterr(err, "device %d: out of memory", d);
    return -1;
}
