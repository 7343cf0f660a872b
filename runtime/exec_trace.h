/* exec_trace.h -- what dse exec --trace records, private to the runtime
 * (the module's public API is exec.h): the start and end of every step of
 * a rank in every timed inference, the ranks' clock offsets, and the
 * gathering of one inference's timeline into a trace file (model/trace.h).
 *
 * Invariant: recording is two stores per step into memory allocated before
 * the first inference; everything else (the clock synchronisation, the
 * medians, the gathering, the file) happens outside the timed inferences.
 */
#ifndef DSE_EXEC_TRACE_H
#define DSE_EXEC_TRACE_H

#include "net.h"
#include "plan.h"
#include "platform.h"

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
