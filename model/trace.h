/* trace.h -- timelines of a Plan: when every step of every device started
 * and ended, measured (`dse exec --trace`) or predicted (`dse eval
 * --trace`), in the Chrome trace-event JSON format that Perfetto
 * (ui.perfetto.dev) and chrome://tracing open (docs/traces.md).
 *
 * One complete event ("ph": "X") per Plan step, on one track per device
 * (pid 1, tid = device index, named after the device), in the device's
 * step order; its args say the step's index, operation, layer, channel
 * range, peer, message and bytes, so a measured and a predicted trace of
 * one mapping can be compared step by step (trace_same_steps).  Every
 * message also gets a flow arrow from its SEND to its RECV.  Times are
 * microseconds from the inference's start on a clock common to all
 * devices: the model's own clock, or the ranks' clocks synchronised by
 * the runtime (the residual skew is stated in the file).
 *
 * Invariant: a trace names exactly the steps of plan_build's Plan of the
 * mapping, device by device in plan order; trace_parse refuses a file
 * whose steps are not numbered 0, 1, ... on each track.
 *
 * Ownership: trace_info is borrowed by the writer; a trace_file owns all
 * its strings and arrays (trace_file_free).  Errors: -1 (or NULL) with one
 * line in err (BASE_ERRLEN bytes) naming the file; nothing prints.
 */
#ifndef DSE_TRACE_H
#define DSE_TRACE_H

#include <stdint.h>

#include "cost.h"
#include "net.h"
#include "plan.h"
#include "platform.h"

#define TRACE_FORMAT "dse-trace"
#define TRACE_VERSION 1

/* One step's times, seconds from the inference's origin. */
typedef struct {
    double t0, t1;
    double med_s; /* measured: the step's median duration over the timed
                     inferences; predicted: t1 - t0 */
} trace_span;

/* What a writer is given. */
typedef struct {
    const char *source;      /* "measured" or "predicted" */
    const net *n;
    const platform *pl;
    const plan *p;
    const trace_span *span;  /* p->nsteps entries, indexed like p->steps */
    double latency_s;        /* of the traced inference */
    /* measured traces only (0 for predicted ones): */
    int warmup, reps;        /* the run's --bench */
    int inference;           /* which timed inference is drawn (0-based) */
    double skew_s;           /* bound on the residual clock skew between ranks */
    const char *clock;       /* how the clocks were synchronised, or NULL */
} trace_info;

/* The JSON text (malloc'd, caller frees), or NULL on allocation failure. */
char *trace_to_json(const trace_info *t);
/* Write it atomically (temporary file + rename): 0 or -1 with err. */
int trace_write(const char *path, const trace_info *t, char *err);

/* The model's timeline of p (cost_schedule): span[i] for every step, with
 * med_s = t1 - t0; r and per_dev (may be NULL) as cost_eval fills them.
 * 0, -1 when the model cannot evaluate p (cost_error says why), -2 when
 * memory runs out. */
int trace_predict(cost_model *m, const plan *p, trace_span *span, cost_result *r,
                  cost_device *per_dev);

/* ---- reading a trace back ---- */

typedef struct {
    int dev, step;      /* device index; index of the step in the device's list */
    plan_op op;
    int layer;          /* layer index (NET_INPUT for the network input) */
    int c0, nc, peer, msg;
    int h0, nh;         /* rows of the step's box (docs/spatial.md) */
    int w0, nw;         /* its columns */
    int64_t bytes;
    double ts_us, dur_us, med_us; /* as written */
} trace_step;

typedef struct {
    char *source, *network, *platform;
    int ndev;
    char **devices;     /* names, by device index */
    int nsteps;
    trace_step *steps;  /* device by device, each in step order */
    double latency_us, skew_us;
    int warmup, reps, inference;
} trace_file;

int trace_parse(const char *text, const char *what, trace_file *out, char *err);
int trace_load(const char *path, trace_file *out, char *err);
void trace_file_free(trace_file *t);

/* Do a and b name the same steps in the same order on every device (same
 * operation, layer, channels, peer and bytes)?  0, or -1 with the first
 * difference in err. */
int trace_same_steps(const trace_file *a, const trace_file *b, char *err);

#endif
