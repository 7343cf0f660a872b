/* trace.c -- dse exec --trace: every step of every rank on a common
 * clock (rt_internal.h; the file format is model/trace.h, docs/traces.md).
 *
 * Clocks: each rank times its steps with its own MPI_Wtime.  Before the
 * first inference and after the last, rank 0 exchanges at least
 * SYNC_ROUNDS ping-pongs with every other rank r (more, within a budget,
 * until one round trip is short: on a busy machine a rank may be
 * preempted in the middle of one) and keeps the one with the least round
 * trip (Cristian's algorithm): r's clock read when the ping
 * arrived, minus the midpoint of rank 0's send and receive times, is r's
 * offset, known to within half that round trip.  A step's time on rank r
 * is converted to rank 0's clock with the offset interpolated linearly
 * between the two exchanges (clocks of different boards drift), and the
 * trace's origin is the earliest first step of the drawn inference on any
 * rank that has steps.  The residual skew stated in the file is the largest half round
 * trip kept; the drift between the two exchanges is stated too.
 *
 * Invariant: nothing here runs inside a timed inference except the two
 * stores per step that rank.c makes through rt_tracer_rep.
 */
#include "rt_internal.h"

#include "trace.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNC_ROUNDS 10        /* ping-pongs per rank at least */
#define SYNC_MAX_ROUNDS 1000  /* ... and at most */
#define SYNC_GOOD_RTT 50e-6   /* a round trip this short ends the exchange */
#define SYNC_BUDGET_S 0.5     /* seconds per rank at most */
#define SYNC_TAG ((1 << 20) + 3)
#define MAXRANKS 64

struct rt_tracer {
    int nsteps, reps;
    double *rec;    /* [reps][2 * nsteps] */
    double *origin; /* [reps] */
    int synced[2];
    double off[2][MAXRANKS], half_rtt[2][MAXRANKS], at[2][MAXRANKS]; /* rank 0 only */
};

rt_tracer *rt_tracer_new(int nsteps, int reps)
{
    rt_tracer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->nsteps = nsteps;
    t->reps = reps;
    t->rec = calloc((size_t)reps * 2 * ((size_t)nsteps + 1), sizeof *t->rec);
    t->origin = calloc((size_t)reps, sizeof *t->origin);
    if (!t->rec || !t->origin) {
        rt_tracer_free(t);
        return NULL;
    }
    return t;
}

void rt_tracer_free(rt_tracer *t)
{
    if (!t) return;
    free(t->rec);
    free(t->origin);
    free(t);
}

double *rt_tracer_rep(rt_tracer *t, int rep, double **origin)
{
    *origin = &t->origin[rep];
    return t->rec + (size_t)rep * 2 * ((size_t)t->nsteps + 1);
}

void rt_tracer_sync(rt_tracer *t, int phase)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 1; r < size && r < MAXRANKS; r++) {
        if (rank == 0) {
            double best = INFINITY, start = MPI_Wtime();
            for (int k = 0;; k++) {
                /* At least SYNC_ROUNDS; more while no round trip was short
                 * (a rank preempted on a busy machine), within a budget. */
                double msg[2] = {MPI_Wtime(), 1}, x;
                if (k >= SYNC_ROUNDS &&
                    (best <= SYNC_GOOD_RTT || k >= SYNC_MAX_ROUNDS || msg[0] - start > SYNC_BUDGET_S))
                    msg[1] = 0;
                MPI_Send(msg, 2, MPI_DOUBLE, r, SYNC_TAG, MPI_COMM_WORLD);
                if (msg[1] == 0) break;
                MPI_Recv(&x, 1, MPI_DOUBLE, r, SYNC_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double a = msg[0], b = MPI_Wtime();
                if (b - a < best) {
                    best = b - a;
                    t->off[phase][r] = x - 0.5 * (a + b);
                    t->at[phase][r] = 0.5 * (a + b);
                    t->half_rtt[phase][r] = 0.5 * best;
                }
            }
        } else if (rank == r) {
            for (;;) {
                double msg[2], x;
                MPI_Recv(msg, 2, MPI_DOUBLE, 0, SYNC_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (msg[1] == 0) break;
                x = MPI_Wtime();
                MPI_Send(&x, 1, MPI_DOUBLE, 0, SYNC_TAG, MPI_COMM_WORLD);
            }
        }
    }
    t->synced[phase] = 1;
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank r's clock reading x on rank 0's clock. */
static double to_common(const rt_tracer *t, int r, double x)
{
    if (r == 0) return x;
    double o0 = t->off[0][r];
    if (!t->synced[1] || t->at[1][r] <= t->at[0][r]) return x - o0;
    double tau = x - o0, f = (tau - t->at[0][r]) / (t->at[1][r] - t->at[0][r]);
    if (f < 0) f = 0;
    if (f > 1) f = 1;
    return x - (o0 + f * (t->off[1][r] - o0));
}

int rt_tracer_write(rt_tracer *t, const char *path, const net *n, const platform *pl,
                    const plan *p, const double *lat, int warmup, char *err)
{
    int rank, size, rc = 0, ns = t->nsteps, reps = t->reps;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* The inference drawn: the output device's median latency (the lower
     * middle one), so the picture is a typical inference, not an outlier. */
    double pick[2] = {0, 0};
    if (rank == p->out_dev) {
        double *v = malloc((size_t)reps * sizeof *v);
        if (v) {
            memcpy(v, lat, (size_t)reps * sizeof *v);
            qsort(v, (size_t)reps, sizeof *v, base_cmp_double);
            double med = v[(reps - 1) / 2];
            for (int k = 0; k < reps; k++)
                if (lat[k] == med) {
                    pick[0] = k;
                    pick[1] = med;
                    break;
                }
            free(v);
        }
    }
    MPI_Bcast(pick, 2, MPI_DOUBLE, p->out_dev, MPI_COMM_WORLD);
    int k = (int)pick[0];
    /* Mine: origin, then per step start, end (relative) and median duration. */
    int mine_n = 1 + 3 * ns;
    double *mine = malloc((size_t)mine_n * sizeof *mine), *dur = malloc(((size_t)reps + 1) * sizeof *dur);
    double *o, *rec = rt_tracer_rep(t, k, &o);
    if (mine && dur) {
        mine[0] = *o;
        for (int i = 0; i < ns; i++) {
            for (int r = 0; r < reps; r++) {
                double *o2, *x = rt_tracer_rep(t, r, &o2);
                dur[r] = x[2 * i + 1] - x[2 * i];
            }
            mine[1 + 3 * i] = rec[2 * i];
            mine[2 + 3 * i] = rec[2 * i + 1];
            mine[3 + 3 * i] = base_median(dur, reps);
        }
    } else {
        rc = 1;
    }
    free(dur);
    int *cnt = NULL, *disp = NULL;
    double *all = NULL;
    if (rank == 0) {
        cnt = calloc((size_t)size, sizeof *cnt);
        disp = calloc((size_t)size, sizeof *disp);
        int tot = 0;
        for (int r = 0; cnt && disp && r < size; r++) {
            cnt[r] = 1 + 3 * plan_nsteps_dev(p, r);
            disp[r] = tot;
            tot += cnt[r];
        }
        all = malloc(((size_t)tot + 1) * sizeof *all);
        if (!cnt || !disp || !all) rc = 1;
    }
    /* Every rank takes part whatever happened, so nobody waits forever. */
    int ok = rc == 0, allok = 0;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!allok) {
        base_seterr(err, "%s: out of memory gathering the trace", path);
        rc = 1;
        goto out;
    }
    MPI_Gatherv(mine, mine_n, MPI_DOUBLE, all, cnt, disp, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        trace_span *span = calloc((size_t)p->nsteps + 1, sizeof *span);
        double origin = INFINITY, skew = 0, drift = 0;
        /* The origin: the earliest first step of a rank that has steps (an
         * idle rank leaves the start barrier at its own moment). */
        for (int r = 0; r < size; r++) {
            double c = plan_nsteps_dev(p, r) ? to_common(t, r, all[disp[r]] + all[disp[r] + 1]) : INFINITY;
            if (c < origin) origin = c;
            for (int ph = 0; ph < 2; ph++)
                if (t->synced[ph] && t->half_rtt[ph][r] > skew) skew = t->half_rtt[ph][r];
            if (t->synced[1] && fabs(t->off[1][r] - t->off[0][r]) > drift)
                drift = fabs(t->off[1][r] - t->off[0][r]);
        }
        if (!span) {
            base_seterr(err, "%s: out of memory writing the trace", path);
            rc = 1;
        }
        for (int r = 0; span && r < size; r++) {
            const double *v = all + disp[r];
            for (int i = 0; i < plan_nsteps_dev(p, r); i++) {
                trace_span *s = &span[p->step0[r] + i];
                s->t0 = to_common(t, r, v[0] + v[1 + 3 * i]) - origin;
                s->t1 = to_common(t, r, v[0] + v[2 + 3 * i]) - origin;
                s->med_s = v[3 + 3 * i];
            }
        }
        char clock[400];
        snprintf(clock, sizeof clock,
                 "MPI_Wtime of each rank; offsets to rank 0 from ping-pongs before and after "
                 "the timed inferences (the least round trip kept), interpolated between them; "
                 "residual skew at most %.1f us; offsets drifted by %.1f us in between",
                 skew * 1e6, drift * 1e6);
        trace_info ti = {"measured", n, pl, p, span, pick[1], warmup, reps, k, skew, clock};
        if (span && trace_write(path, &ti, err)) rc = 1;
        free(span);
    }
out:
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(mine);
    free(cnt);
    free(disp);
    free(all);
    return rc;
}
