/* measure.c -- rt_measure: one mapping run as a job of `dse exec --json`
 * under mpirun, its record read back (runtime.h).  The one way dse
 * validate, dse calibrate and the fidelity benchmark measure a mapping.
 * Invariant: when it returns the job is gone (rt_run_job), and a failure
 * is one line saying which rank or board failed and how. */
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The job is killed this long after the ranks' own deadline: they report
 * their timeout themselves first, with the rank. */
#define KILL_MARGIN_S 30.0
#define NO_DEADLINE_KILL_S 3600.0

/* Ranks that hit their deadline said what they waited for: name the rank
 * (and its board) the others waited for.  1 with err set, else 0. */
static int stalled_err(const rt_measure_opts *o, const char *etext, char *err)
{
    int waiters = 0, r = etext && strstr(etext, "timed out") ? rt_stalled_rank(etext, o->pl->ndev, &waiters) : -1;
    if (r < 0) return 0;
    base_seterr(err, "timed out: %d rank%s waited for rank %d (device %s on board %s): its board, "
                "its link or the rank itself stalled or failed", waiters, waiters == 1 ? "" : "s", r,
                o->pl->dev[r].name, o->pl->dev[r].board);
    return 1;
}

int rt_measure(const rt_measure_opts *o, rt_result *r, char *err)
{
    char bw[32], to[32], seed[32], single[16];
    const char *args[32];
    int na = 0;
    memset(r, 0, sizeof *r);
    if (o->beside && (o->mapping || o->trace)) {
        base_seterr(err, "--beside goes with a single device, without a trace");
        return 2;
    }
    args[na++] = o->dse ? o->dse : rt_self_exe();
    args[na++] = "exec";
    args[na++] = "--network";
    args[na++] = o->network;
    args[na++] = "--platform";
    args[na++] = o->platform;
    if (o->mapping) {
        args[na++] = "--mapping";
        args[na++] = o->mapping;
    } else {
        snprintf(single, sizeof single, "%d", o->single_dev);
        args[na++] = "--single";
        args[na++] = single;
    }
    snprintf(bw, sizeof bw, "%d,%d", o->warmup, o->reps);
    args[na++] = "--bench";
    args[na++] = bw;
    args[na++] = "--json";
    if (o->timeout_s > 0) {
        snprintf(to, sizeof to, "%.17g", o->timeout_s);
        args[na++] = "--timeout";
        args[na++] = to;
    }
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    args[na++] = "--seed";
    args[na++] = seed;
    if (o->trace) {
        args[na++] = "--trace";
        args[na++] = o->trace;
    }
    if (o->no_check) args[na++] = "--no-check";
    if (o->beside && !o->mapping) args[na++] = "--beside";
    if (o->handoff) args[na++] = "--handoff";
    const char *av[64];
    rt_mpirun_argv(o->pl->ndev, o->hostfile, o->seqfile, args, na, av);
    rt_mpirun_env();
    char *out = NULL, *etext = NULL, eline[BASE_ERRLEN];
    /* --beside runs the network twice, each run under the ranks' deadline */
    int runs = o->beside && !o->mapping ? 2 : 1;
    double kill_at = o->timeout_s > 0 ? runs * o->timeout_s + KILL_MARGIN_S : runs * NO_DEADLINE_KILL_S;
    int jrc = rt_run_job(av, kill_at, o->stop, "dse exec:", &out, &etext, eline, sizeof eline);
    int rc = 0;
    if (jrc == 0) {
        if (rt_record_parse(out, r, err)) rc = 1;
    } else if (stalled_err(o, etext, err)) {
        rc = 1;
    } else if (jrc == RT_JOB_TIMEOUT) {
        base_seterr(err, "the job did not end within %.0f s; killed", kill_at);
        rc = 1;
    } else if (jrc == RT_JOB_INTERRUPTED) {
        base_seterr(err, "interrupted");
        rc = 1;
    } else if (jrc == RT_JOB_NOSTART || jrc == 127) {
        base_seterr(err, "cannot launch mpirun (install openmpi-bin): %s", eline);
        rc = 1;
    } else if (!strncmp(eline, "dse exec: ", 10)) {
        base_seterr(err, "%s", eline + 10);
        rc = jrc == 2 ? 2 : 1;
    } else {
        char how[128];
        int dead = rt_dead_rank(etext, how, sizeof how);
        if (dead >= 0 && dead < o->pl->ndev)
            base_seterr(err, "a rank died: rank %d (device %s on board %s), %s", dead,
                        o->pl->dev[dead].name, o->pl->dev[dead].board, how);
        else
            base_seterr(err, "a rank died (mpirun exit %d%s%.100s): %.300s", jrc,
                        o->remote && o->remote[0] ? "; ranks on boards " : "",
                        o->remote ? o->remote : "", eline);
        rc = 1;
    }
    free(out);
    free(etext);
    return rc;
}
