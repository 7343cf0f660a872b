/* rt_internal.h -- what the files of the runtime share, private to
 * runtime/ (the public API is runtime.h):
 *  - one rank's interpreter of its step list (rank.c): set up once
 *    (weights of its slices, buffers, input), then one inference per call;
 *  - what dse exec --trace records (trace.c): the start and end of every
 *    step of a rank in every timed inference, the ranks' clock offsets,
 *    and the gathering of one inference's timeline into a trace file
 *    (model/trace.h).
 *
 * Invariants: a rank touches only its own steps, its own slices' weights
 * and the tensors its steps produce or receive; every RECV has its buffer
 * and MPI_Irecv before the inference's first step, and its message's size
 * is checked against the Plan; every tensor buffer is released exactly
 * once per inference.  Recording a trace is two stores per step into
 * memory allocated before the first inference; everything else (clock
 * synchronisation, medians, gathering, the file) happens outside the timed
 * inferences.
 */
#ifndef DSE_RT_INTERNAL_H
#define DSE_RT_INTERNAL_H

#include <mpi.h>
#include <signal.h>

#include "net.h"
#include "plan.h"
#include "platform.h"
#include "runtime.h"

/* ---- one rank (rank.c) ---- */

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
    int *sreq_tensor;   /* per step (SEND): its tensor, -1 when packed (the pack is sent) */
    float **pack;       /* per step (SEND of part of a tensor): the packed box, or NULL */
    float *input;       /* network input (source rank), owned */
    rt_fault fault;
    double *rec, *rec_origin; /* --trace: this inference's step times, or NULL */
    double busy, wait, finish;
    int64_t sent, recvd;
    int64_t *sent_to;   /* per peer rank: payload bytes sent this inference */
    int nap_us;         /* waits: 0 spins in MPI, else polls and naps (rt_wait_nap) */
    rt_pace pace;       /* an emulated board's pace (rt_pace_init), or none */
} rt_rank;

/* What this rank is blocked on, for the message of a timeout (set by the
 * rank before it blocks, read by the SIGALRM handler): a peer rank, or
 * RT_WAIT_NONE (working), or RT_WAIT_BARRIER (between inferences). */
enum { RT_WAIT_NONE = -1, RT_WAIT_BARRIER = -2, RT_WAIT_ALL = -3 /* a collective */ };
extern volatile sig_atomic_t rt_waiting_for;

/* rt_barrier of one communicator (exec: the ranks that have steps). */
int rt_barrier_comm(MPI_Comm comm, int nap_us);

/* Set up device dev's rank of Plan p: weights of its slices (generated
 * from seed, or the network's weights), workspace, buffers, and on the
 * source device the input (read from `input`, or generated).  0, or 1/2
 * (runtime failure / bad input) with err. */
int rt_rank_setup(rt_rank *s, const net *n, const plan *p, int dev, const char *input,
                  uint64_t seed, char *err);
/* One inference; out (the output layer's numel) is filled on the output
 * device when not NULL.  0, or -1 with err. */
int rt_rank_run(rt_rank *s, float *out, char *err);
void rt_rank_free(rt_rank *s);
/* Read a raw float32 input file of the network's input shape: 0 or 2. */
int rt_read_input(const char *path, const net *n, float *x, char *err);

/* ---- dse exec --trace (trace.c) ---- */

typedef struct rt_tracer rt_tracer;

/* For a rank with nsteps steps and reps timed inferences; NULL when out
 * of memory. */
rt_tracer *rt_tracer_new(int nsteps, int reps);
void rt_tracer_free(rt_tracer *t);
/* Where timed inference `rep` records: 2 * nsteps doubles, the start and
 * end of step i at [2i] and [2i + 1], seconds after *origin, where
 * *origin is the inference's start on this rank's MPI_Wtime. */
double *rt_tracer_rep(rt_tracer *t, int rep, double **origin);
/* Collective: measure every rank's clock offset to rank 0 (ping-pongs,
 * the least round trip kept).  Call once before the first inference
 * (phase 0) and once after the last (phase 1). */
void rt_tracer_sync(rt_tracer *t, int phase);
/* Collective: pick the timed inference of median latency (lat: the
 * output device's latencies per timed inference, read on p->out_dev
 * only), gather its timeline on rank 0 and write it to path there, with
 * warmup and reps for the record.  Returns 0 or -1 with err (on rank 0;
 * every rank returns the same code). */
int rt_tracer_write(rt_tracer *t, const char *path, const net *n, const platform *pl,
                    const plan *p, const double *lat, int warmup, char *err);

#endif
