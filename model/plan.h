/* plan.h -- what a mapping does, step by step, on every device
 * (DESIGN section 2): the single source of truth that both the cost model
 * and the MPI runtime interpret.
 *
 * Every tensor is a BOX of a layer's output: channels [c0, c0+nc) x rows
 * [h0, h0+nh) x columns [w0, w0+nw) (map_box; docs/spatial.md).  For each
 * device, an ordered list of steps:
 *   COMPUTE  a box of a layer's output: a channel slice (all rows and
 *            columns) from the full inputs, or a row or column band (all
 *            channels) from, for each input, all its channels x the rows
 *            and columns net_rows_in and net_cols_in say the band reads
 *   SEND     a box of a local tensor (all of it, or the rows or columns a
 *            peer lacks: the halo) to a peer, from the tensor in place or
 *            packed first (plan_send_offset)
 *   RECV     a tensor from a peer (matching exactly one SEND)
 *   CONCAT   assemble a box from pieces (local or received tensors of the
 *            same layer), each giving its intersection with the box: the
 *            slices of a split layer into its full output, bands and halos
 *            into the input box a band reads, or a crop of one tensor
 * Each step names local tensors by id; after a step, the tensors whose last
 * use it was are freed (free list), so activation lifetimes are decided here
 * once for both interpreters.
 *
 * Construction (plan_build) walks the layers in topological order and
 * appends steps to the devices concerned: a slice is computed where the
 * mapping puts it; each device needs of a layer's output one box (the
 * hull of what its slices read: every row and column for a channel
 * slice); what a slice produces is sent at once to every other
 * device whose interval it meets, only the intersecting box (once per
 * device, however many consumers there); receives and concats are emitted
 * lazily, right before the first step that needs the box.  A device that
 * holds exactly the box it needs (its own band, or one received box) uses
 * it without a concat, so consecutive bands on one device chain.  A band
 * of a layer with mapping.recompute computes the hull of its rows and what
 * its device needs of the layer (the hull pass walks the layers backwards,
 * so those needs are complete first); its sends carry only its own rows and
 * go only to devices without a band of the layer.  Slices
 * of a split layer are assembled on each device that runs a consumer of
 * the layer; the network output, when split, on the device of its first
 * slice.  Because every device's
 * list is a subsequence of one global order in which each RECV comes after
 * its SEND, executing the lists with blocking receives and buffered sends
 * cannot deadlock (plan_check verifies it by simulation).
 *
 * Ownership: a plan owns its arrays.  plan_build reuses them, growing only
 * when a larger plan is met, so the evaluation hot path does not allocate.
 */
#ifndef DSE_PLAN_H
#define DSE_PLAN_H

#include <stdint.h>
#include <stdio.h>

#include "mapping.h"
#include "net.h"
#include "platform.h"

typedef enum { PLAN_COMPUTE, PLAN_SEND, PLAN_RECV, PLAN_CONCAT } plan_op;

/* A tensor held by one device: channels [c0, c0+nc) x rows [h0, h0+nh) x
 * columns [w0, w0+nw) of the output of `layer` (NET_INPUT for the network
 * input), stored (nc, nh, nw).  Full when it is the whole output. */
typedef struct {
    int layer;
    int c0, nc;
    int h0, nh;
    int w0, nw;
    int64_t bytes; /* float32 */
} plan_tensor;

typedef struct {
    plan_op op;
    int layer;           /* layer computed, or whose output is moved/assembled */
    int c0, nc;          /* channel range computed / moved / assembled */
    int h0, nh;          /* row range computed / moved / assembled (SEND: the box of
                            `tensor` sent, within it) */
    int w0, nw;          /* column range, alike */
    int peer;            /* SEND: destination device; RECV: source; else -1 */
    int msg;             /* SEND/RECV: index into plan.msgs; else -1 */
    int tensor;          /* local tensor produced (COMPUTE, RECV, CONCAT) or sent (SEND) */
    int arg0, narg;      /* inputs in plan.args: COMPUTE one per layer input (in order);
                            CONCAT the slices in channel order */
    int free0, nfree;    /* local tensors dead after this step, in plan.args */
} plan_step;

typedef struct {
    int from, to;
    int layer, c0, nc, h0, nh, w0, nw;
    int64_t bytes;
    int send_step, recv_step; /* global step indices */
} plan_msg;

typedef struct {
    int ndev;
    int nlayers;
    /* Steps of device d: steps[step0[d] .. step0[d+1]); tensors of device d:
     * tensors[tensor0[d] .. tensor0[d+1]); step.tensor and args hold ids
     * local to the device (add tensor0[d] to index tensors[]). */
    int *step0, *tensor0;
    plan_step *steps;
    plan_tensor *tensors;
    int *args;
    plan_msg *msgs;
    int nsteps, ntensors, nargs, nmsgs;
    int source;           /* device holding the network input at start */
    int input_tensor;     /* its local id on the source device */
    int out_dev, out_tensor; /* where the full network output ends up */
    int64_t bytes_moved;  /* total bytes of all messages */
    /* Capacities and scratch (private). */
    int cap_steps, cap_tensors, cap_args, cap_msgs;
    void *scratch;
} plan;

plan *plan_new(void);
void plan_free(plan *p);
/* Build the plan of mapping m (which must satisfy mapping_validate).
 * source = device holding the network input.  Returns 0, or -1 with err
 * (only on allocation failure or a mapping that names devices >= ndev). */
int plan_build(plan *p, const net *n, const mapping *m, int source, char *err);

static inline int plan_nsteps_dev(const plan *p, int d) { return p->step0[d + 1] - p->step0[d]; }
static inline const plan_step *plan_steps_dev(const plan *p, int d) { return p->steps + p->step0[d]; }
static inline const plan_tensor *plan_tensor_of(const plan *p, int d, int id)
{
    return &p->tensors[p->tensor0[d] + id];
}
/* Where the box of SEND step s of device d lies in its tensor (stored
 * (nc, nh, nw)) when it is one run of floats there: the whole tensor, a
 * channel range of all its rows and columns, rows of all its columns in one
 * channel, or part of one row of one channel.  Its offset in floats, and
 * the runtime sends it in place.  -1 otherwise (a band of some rows or
 * columns over several channels, as a halo is): the runtime first packs
 * the box into a buffer of its own, a copy the cost model charges the
 * sender as it charges a concat of those bytes.  The one rule of both
 * interpreters. */
static inline int64_t plan_send_offset(const plan *p, int d, const plan_step *s)
{
    const plan_tensor *T = plan_tensor_of(p, d, s->tensor);
    int whole_planes = s->nh == T->nh && s->nw == T->nw, whole_rows = s->nw == T->nw;
    if (!(s->nc == 1 || whole_planes) || !(s->nh == 1 || whole_rows)) return -1;
    return ((int64_t)(s->c0 - T->c0) * T->nh + (s->h0 - T->h0)) * T->nw + (s->w0 - T->w0);
}

/* The bytes of step i of device d: its message's for a SEND or RECV (a
 * SEND may carry part of its tensor), else its tensor's.  What traces and
 * stored validation steps call a step's bytes. */
static inline int64_t plan_step_bytes(const plan *p, int d, int i)
{
    const plan_step *s = plan_steps_dev(p, d) + i;
    return s->msg >= 0 ? p->msgs[s->msg].bytes : plan_tensor_of(p, d, s->tensor)->bytes;
}
/* Is step s a band: a COMPUTE of fewer rows or columns than its layer's
 * (kern_run_band runs it; the cost model prices it by band_dur)? */
static inline int plan_step_band(const plan_step *s, const net *n)
{
    return s->op == PLAN_COMPUTE &&
           (s->nh != n->layers[s->layer].out.h || s->nw != n->layers[s->layer].out.w);
}
/* Does the plan compute any band? */
int plan_has_bands(const plan *p, const net *n);

/* Invariants, for tests: every step's inputs exist on its device before it
 * (produced or received, not yet freed); a COMPUTE's inputs are exactly
 * the boxes its slice reads (net_rows_in, net_cols_in, net_chans_in); a CONCAT's pieces are of its
 * layer and their intersections with its box tile it (disjoint, covering);
 * every SEND sends a box within its tensor and has exactly one matching
 * RECV of that box; every tensor is freed at most once and never used
 * after; simulating the lists with blocking receives and buffered sends
 * finishes (no deadlock); the output tensor is the whole output layer.
 * Returns 0, or -1 with the first violation in err. */
int plan_check(const plan *p, const net *n, char *err);

/* Human-readable listing (dse plan): per device its steps with bytes. */
void plan_print(FILE *f, const plan *p, const net *n, const platform *pl);
const char *plan_op_name(plan_op op);

#endif
