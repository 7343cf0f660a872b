/* validate.c -- val_run (validate.h): choose front points, predict each
 * with the campaign's own model, measure it on the runtime with a trace,
 * line the measured steps up with the predicted ones, store everything.
 *
 * Invariant: a point's measured steps are matched to its predicted ones
 * only when both traces name the same steps in the same order on every
 * device (trace_same_steps); otherwise its steps are stored predicted
 * only, and the reason says why.
 */
#include "validate.h"

#include "campaign.h"
#include "jsonutil.h"
#include "mapping.h"
#include "plan.h"
#include "platform.h"
#include "runtime.h"
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(const val_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const val_options *o, const char *fmt, ...)
{
    if (!o->progress) return;
    char line[BASE_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->progress(o->ctx, line);
}

/* Write text to dir/name whole (base_write_file); the path into out. */
static int put_file(const char *dir, const char *name, const char *text, char *out, size_t len)
{
    char e[BASE_ERRLEN];
    snprintf(out, len, "%s/%s", dir, name);
    return base_write_file(out, text, strlen(text), e);
}

/* Pick front indices: the best per objective (distinct), or n spread
 * evenly over the front (which camp_load_front sorts by latency). */
static int choose(const res_point *p, int n, int top, val_point *out)
{
    int k = 0;
    if (top <= 0) {
        for (int o = 0; o < COST_NOBJ; o++) {
            int b = 0;
            for (int i = 1; i < n; i++)
                if (p[i].obj[o] < p[b].obj[o]) b = i;
            int dup = 0;
            for (int j = 0; j < k; j++) dup |= out[j].idx == b;
            if (dup) continue;
            out[k].idx = b;
            snprintf(out[k++].why, sizeof out->why, "best %s", cost_objectives[o].name);
        }
        return k;
    }
    if (top > n) top = n;
    for (int j = 0; j < top; j++) {
        out[k].idx = top == 1 ? 0 : (int)((double)j * (n - 1) / (top - 1) + 0.5);
        snprintf(out[k++].why, sizeof out->why, "front point");
    }
    return k;
}

static double step_error(const res_step *x) { return fabs(x->meas_med_ms - x->pred_ms); }

/* The steps of p, predicted (span) and, when the measured trace names the
 * same steps, measured; the compute steps of the largest errors into V. */
static int steps_of(const plan *p, const platform *pl, const trace_span *span,
                    const trace_file *meas, res_step *st, val_point *V)
{
    int k = 0;
    for (int d = 0; d < p->ndev; d++)
        for (int i = 0; i < plan_nsteps_dev(p, d); i++, k++) {
            const plan_step *s = &plan_steps_dev(p, d)[i];
            res_step *x = &st[k];
            x->device = d;
            x->step = i;
            x->op = plan_op_name(s->op);
            x->layer = s->layer;
            x->c0 = s->c0;
            x->nc = s->nc;
            x->bytes = plan_step_bytes(p, d, i);
            const trace_span *sp = &span[p->step0[d] + i];
            x->pred_start_ms = sp->t0 * 1e3;
            x->pred_ms = (sp->t1 - sp->t0) * 1e3;
            x->meas_start_ms = x->meas_ms = x->meas_med_ms = NAN;
            if (meas && k < meas->nsteps) {
                const trace_step *m = &meas->steps[k];
                x->meas_start_ms = m->ts_us * 1e-3;
                x->meas_ms = m->dur_us * 1e-3;
                x->meas_med_ms = m->med_us * 1e-3;
            }
        }
    /* The worst compute steps: the largest |median measured - predicted|,
     * kept sorted, largest first. */
    V->nworst = 0;
    for (int j = 0; j < k; j++) {
        const res_step *x = &st[j];
        if (strcmp(x->op, "compute") || isnan(x->meas_med_ms)) continue;
        double e = step_error(x);
        int at = V->nworst;
        if (at == VAL_WORST) {
            if (e <= step_error(&V->worst[VAL_WORST - 1])) continue;
            at = VAL_WORST - 1;
        } else {
            V->nworst++;
        }
        for (; at > 0 && step_error(&V->worst[at - 1]) < e; at--) {
            V->worst[at] = V->worst[at - 1];
            memcpy(V->worst_dev[at], V->worst_dev[at - 1], sizeof V->worst_dev[at]);
        }
        V->worst[at] = *x;
        snprintf(V->worst_dev[at], sizeof V->worst_dev[at], "%s", pl->dev[x->device].name);
    }
    return k;
}

typedef struct {
    const val_options *o;
    res_db *db;
    camp *c;
    const net *n;
    const platform *pl;
    cost_model *cm;
    char dir[512], netpath[600], plpath[600], seqfile[600], remote[256];
    plan *p;
    mapping *m;
    cost_device *pd;
    trace_span *span;
    res_step *steps;
    int cap_steps;
    int rounds;
    double pred_latency_s; /* of the point last predicted */
    double msg_us;         /* the model's price of the handoff probe's message (NAN: no pair) */
    double touch_min;      /* the fastest touch of the launches so far (INFINITY: none) */
    int relaunched;        /* slow launches run again */
} ctx;

/* Was the launch of r slow by its probe, against the fastest touch so far? */
static int launch_slow(ctx *X, const rt_result *r) { return val_judge_launch(r, X->msg_us, &X->touch_min); }

/* Decode, export and predict point P into X's plan, spans and per-device
 * figures; V->pred.  0, or -1 with V failed and its reason. */
static int predict(ctx *X, const res_point *P, val_point *V)
{
    const platform *pl = X->pl;
    char e[BASE_ERRLEN], pdir[700], mpath[800];
    snprintf(pdir, sizeof pdir, "%s/point-%d", X->dir, V->idx);
    snprintf(mpath, sizeof mpath, "%s/dse-mapping.json", pdir);
    cost_result cr;
    int ok = mkdir(pdir, 0755) == 0 || errno == EEXIST;
    if (!ok) snprintf(e, sizeof e, "%s: cannot create: %s", pdir, strerror(errno));
    ok = ok && !camp_decode(X->c, P->genome, X->m, e) && !mapping_save(X->m, X->n, pl, mpath, e) &&
         !plan_build(X->p, X->n, X->m, pl->source, e);
    if (ok && X->p->nsteps > X->cap_steps) {
        free(X->span);
        free(X->steps);
        X->cap_steps = X->p->nsteps;
        X->span = malloc((size_t)X->cap_steps * sizeof *X->span);
        X->steps = malloc((size_t)X->cap_steps * sizeof *X->steps);
        if (!X->span || !X->steps) snprintf(e, sizeof e, "out of memory"), X->cap_steps = 0, ok = 0;
    }
    if (ok && trace_predict(X->cm, X->p, X->span, &cr, X->pd)) {
        snprintf(e, sizeof e, "%s", cost_error(X->cm));
        ok = 0;
    }
    if (!ok) {
        V->status = "failed";
        snprintf(V->reason, sizeof V->reason, "%s", e);
        return -1;
    }
    X->pred_latency_s = cr.latency_ms * 1e-3;
    cost_objectives_of(&cr, V->pred);
    return 0;
}

static void round_trace(const ctx *X, const val_point *V, int round, char *out, size_t len)
{
    snprintf(out, len, "%s/point-%d/round-%d-trace.json", X->dir, V->idx, round + 1);
}

/* First phase: predict point P and decide whether it can run here. */
static void prepare(ctx *X, const res_point *P, val_point *V)
{
    V->status = "ok";
    V->reason[0] = 0;
    V->nrounds = 0;
    V->relaunched = 0;
    V->med_round = -1;
    V->rel_meas = V->rel_pred = NAN;
    for (int k = 0; k < COST_NOBJ; k++) V->spread[k] = NAN;
    for (int k = 0; k < COST_NOBJ; k++) V->pred[k] = V->meas[k] = NAN;
    if (predict(X, P, V)) return;
    /* GPU work cannot run here: the prediction is still stored. */
    for (int d = 0; d < X->pl->ndev; d++)
        if (X->pl->dev[d].kind == PLAT_GPU && X->pd[d].used) {
            V->status = "unmeasured";
            snprintf(V->reason, sizeof V->reason, "puts work on a GPU device; this runtime has no "
                     "GPU kernels");
            return;
        }
}

/* Second phase, once per round: run point V (if it is still "ok") and
 * keep the run in rr[round]. */
static void measure(ctx *X, val_point *V, int round, rt_result *rr)
{
    const val_options *o = X->o;
    if (strcmp(V->status, "ok")) return;
    char e[BASE_ERRLEN], mpath[800], tpath[800];
    snprintf(mpath, sizeof mpath, "%s/point-%d/dse-mapping.json", X->dir, V->idx);
    round_trace(X, V, round, tpath, sizeof tpath);
    if (X->rounds > 1)
        say(o, "round %d of %d: point %d (%s) on %d ranks...", round + 1, X->rounds, V->idx, V->why,
            X->pl->ndev);
    else
        say(o, "point %d (%s) on %d ranks...", V->idx, V->why, X->pl->ndev);
    rt_measure_opts mo = {NULL, X->netpath, X->plpath, mpath, -1, X->pl, NULL,
                          X->seqfile[0] ? X->seqfile : NULL, X->remote, o->warmup, o->reps,
                          o->timeout_s, 1, tpath, 0, o->stop, 0, !o->no_handoff};
    /* A slow launch (the VM's hand-offs, bench/README.md "Split mappings
     * slower in some launches") is run again; the last launch is kept, so
     * its trace is the one on disk. */
    for (int again = 0;; again++) {
        if (rt_measure(&mo, &rr[round], e)) {
            if (o->stop && *o->stop) return; /* Ctrl-C: its measured rounds stand (store) */
            V->status = "failed";
            if (round) snprintf(V->reason, sizeof V->reason, "round %d of %d: %.900s", round + 1, X->rounds, e);
            else snprintf(V->reason, sizeof V->reason, "%s", e);
            return;
        }
        if (o->no_handoff || again >= o->relaunch || (o->stop && *o->stop) || !launch_slow(X, &rr[round]))
            break;
        V->relaunched++;
        X->relaunched++;
        say(o, "point %d: a slow launch (data passed between cores at %.0f us per 2 MB, a touch %.0f us); "
            "again...", V->idx, rr[round].handoff.hop_us, rr[round].handoff.touch_us);
    }
    V->round_ms[V->nrounds++] = rr[round].lat_med_ms;
}

/* Will device d's reference run beside its board's other CPUs: asked
 * for, it has such neighbours, and each of them holds the whole network
 * (its single-device plan fits the model's memory)?  Then the input stays
 * on d (rt_options.beside). */
static int reference_beside(ctx *X, int d)
{
    const platform *pl = X->pl;
    if (X->o->no_beside || pl->dev[d].kind != PLAT_CPU || platform_board_cpus(pl, d) < 2) return 0;
    char e[BASE_ERRLEN];
    for (int b = 0; b < pl->ndev; b++) {
        cost_result cr;
        if (b == d || !platform_board_cpu(pl, b, d)) continue;
        mapping_set_single(X->m, X->n, b);
        if (plan_build(X->p, X->n, X->m, b, e) || cost_eval(X->cm, X->p, &cr, NULL) || cr.violation_bytes > 0)
            return 0;
    }
    return 1;
}

/* The reference (validate.h): of the devices this runtime can run (not a
 * GPU), the one whose single-device mapping the model predicts fastest,
 * each predicted as it would run (the input on it when it runs beside its
 * neighbours).  Uses X's plan and mapping as scratch (store predicts each
 * point again). */
static void reference_choose(ctx *X, val_reference *R)
{
    R->dev = -1;
    R->name[0] = 0;
    R->pred_ms = R->meas_ms = R->beside_ratio = NAN;
    R->nrounds = 0;
    R->beside_n = 0;
    R->reason[0] = 0;
    if (X->o->no_reference) return;
    char e[BASE_ERRLEN];
    int fits = 0;
    for (int d = 0; d < X->pl->ndev; d++) {
        cost_result cr;
        if (X->pl->dev[d].kind == PLAT_GPU) continue;
        int bs = reference_beside(X, d);
        mapping_set_single(X->m, X->n, d);
        if (plan_build(X->p, X->n, X->m, bs ? d : X->pl->source, e) || cost_eval(X->cm, X->p, &cr, NULL) ||
            !(cr.latency_ms > 0))
            continue;
        int f = cr.violation_bytes <= 0;
        if (R->dev < 0 || f > fits || (f == fits && cr.latency_ms < R->pred_ms))
            R->dev = d, R->pred_ms = cr.latency_ms, fits = f, R->beside_n = bs ? platform_board_cpus(X->pl, d) : 0;
    }
    if (R->dev >= 0) snprintf(R->name, sizeof R->name, "%s", X->pl->dev[R->dev].name);
}

/* Once per round, before the points: run the reference (dse exec
 * --single).  A failed run is noted and leaves the points alone. */
static void reference_measure(ctx *X, val_reference *R, int round)
{
    const val_options *o = X->o;
    R->round_ms[round] = R->beside_round_ms[round] = NAN;
    R->hop_us[round] = R->touch_us[round] = NAN;
    R->nrounds = round + 1;
    if (R->dev < 0) return;
    char e[BASE_ERRLEN];
    char rd[64] = "";
    if (X->rounds > 1) snprintf(rd, sizeof rd, "round %d of %d: ", round + 1, X->rounds);
    if (R->beside_n)
        say(o, "%sthe reference (the whole network on %s, alone, then beside the %d other CPU "
            "device%s of its board)...", rd, X->pl->dev[R->dev].name, R->beside_n - 1,
            R->beside_n == 2 ? "" : "s");
    else
        say(o, "%sthe reference (the whole network on %s)...", rd, X->pl->dev[R->dev].name);
    rt_measure_opts mo = {NULL, X->netpath, X->plpath, NULL, R->dev, X->pl, NULL,
                          X->seqfile[0] ? X->seqfile : NULL, X->remote, o->warmup, o->reps,
                          o->timeout_s, 1, NULL, 0, o->stop, R->beside_n > 0, !o->no_handoff};
    rt_result rr;
    int rc = rt_measure(&mo, &rr, e);
    if (rc && mo.beside && !(o->stop && *o->stop)) {
        /* The neighbours' run failed the job (a board short of memory for
         * two copies, a rank killed): the reference alone still counts,
         * and later rounds run it alone (its input then on the platform's
         * input device, not as predicted: a transfer's worth). */
        say(o, "%sthe reference beside its board's other CPUs failed (%.300s); alone...", rd, e);
        if (!R->reason[0]) snprintf(R->reason, sizeof R->reason, "round %d: beside: %.900s", round + 1, e);
        mo.beside = 0;
        R->beside_n = 0;
        rc = rt_measure(&mo, &rr, e);
    }
    if (rc) {
        if (!R->reason[0]) snprintf(R->reason, sizeof R->reason, "round %d: %.900s", round + 1, e);
        return;
    }
    R->round_ms[round] = rr.lat_med_ms;
    if (rr.beside.n > 1) R->beside_round_ms[round] = rr.beside.med_ms;
    if (rr.handoff.a >= 0 && rr.handoff.b > rr.handoff.a) {
        R->hop_us[round] = rr.handoff.hop_us, R->touch_us[round] = rr.handoff.touch_us;
        (void)launch_slow(X, &rr); /* its touch counts among the fastest */
    }
}

/* The reference's median round (NAN: none measured). */
static void reference_median(val_reference *R)
{
    double x[VAL_MAX_ROUNDS], b[VAL_MAX_ROUNDS];
    int n = 0, nb = 0;
    for (int k = 0; k < R->nrounds; k++) {
        if (isnan(R->round_ms[k])) continue;
        x[n++] = R->round_ms[k];
        if (!isnan(R->beside_round_ms[k]) && R->round_ms[k] > 0) b[nb++] = R->beside_round_ms[k] / R->round_ms[k];
    }
    R->meas_ms = n ? base_median(x, n) : NAN;
    R->beside_ratio = nb ? base_median(b, nb) : NAN;
}

/* Each measured point's latency relative to the reference's (round by
 * round, then the median); NAN where either was not measured. */
static void reference_relate(val_report *r)
{
    val_reference *R = &r->ref;
    double x[VAL_MAX_ROUNDS];
    for (int v = 0; v < r->n; v++) {
        val_point *V = &r->pts[v];
        V->rel_meas = V->rel_pred = NAN;
        if (isnan(R->meas_ms) || strcmp(V->status, "ok")) continue;
        int m = 0;
        for (int k = 0; k < V->nrounds && k < R->nrounds; k++) /* V's k-th run was round k */
            if (!isnan(R->round_ms[k]) && R->round_ms[k] > 0) x[m++] = V->round_ms[k] / R->round_ms[k];
        if (!m) continue;
        V->rel_meas = base_median(x, m);
        V->rel_pred = R->pred_ms > 0 ? V->pred[COST_OBJ_LATENCY] / R->pred_ms : NAN;
    }
}

int val_launch_slow(double hop_us, double touch_us, int moves, double msg_us, double touch_min)
{
    return (moves && hop_us > VAL_HANDOFF_SLOW * (msg_us + touch_us)) || touch_us > VAL_TOUCH_SLOW * touch_min;
}

int val_judge_launch(const rt_result *r, double msg_us, double *touch_min)
{
    const rt_handoff *h = &r->handoff;
    if (h->a < 0 || !(h->hop_us > 0) || !(h->touch_us > 0) || isnan(msg_us)) return 0;
    if (!(h->touch_us >= *touch_min)) *touch_min = h->touch_us;
    return val_launch_slow(h->hop_us, h->touch_us, rt_moved_data(r), msg_us, *touch_min);
}

/* The handoff probes of every launch (val_report.handoff): their range
 * and the pass the model's link prices; then which points' stored runs
 * were slow launches (VAL_HANDOFF_SLOW, VAL_TOUCH_SLOW). */
static void handoff_summary(val_report *r, const ctx *X, const rt_result *rr)
{
    val_handoff *H = &r->handoff;
    const platform *pl = X->pl;
    int a, b;
    memset(H, 0, sizeof *H);
    H->msg_us = NAN;
    if (!platform_cpu_pair(pl, &a, &b)) return; /* dse exec --handoff's pair */
    snprintf(H->a, sizeof H->a, "%s", pl->dev[a].name);
    snprintf(H->b, sizeof H->b, "%s", pl->dev[b].name);
    H->msg_us = cost_message_s(X->cm, a, b, RT_HANDOFF_BYTES) * 1e6;
    H->relaunched = X->relaunched;
    for (int pass = 0; pass < 2; pass++)
        for (int v = -1; v < r->n; v++) {
            val_point *V = v >= 0 ? &r->pts[v] : NULL;
            for (int k = 0; k < (V ? V->nrounds : r->ref.nrounds); k++) {
                double hop = r->ref.hop_us[k], tch = r->ref.touch_us[k];
                int moves = 0; /* the reference runs on one device */
                if (V) {
                    const rt_result *R = &rr[(size_t)v * X->rounds + k];
                    int ok = R->handoff.a == a && R->handoff.b == b;
                    hop = ok ? R->handoff.hop_us : NAN, tch = ok ? R->handoff.touch_us : NAN;
                    moves = rt_moved_data(R);
                }
                if (!(hop > 0) || !(tch > 0)) continue;
                if (pass == 0) {
                    H->hop_min = H->n ? fmin(H->hop_min, hop) : hop;
                    H->hop_max = H->n ? fmax(H->hop_max, hop) : hop;
                    H->touch_min = H->n ? fmin(H->touch_min, tch) : tch;
                    H->touch_max = H->n ? fmax(H->touch_max, tch) : tch;
                    H->n++;
                } else if (V && k == V->med_round && !strcmp(V->status, "ok")) {
                    V->slow_launch = val_launch_slow(hop, tch, moves, H->msg_us, H->touch_min);
                }
            }
        }
}

/* The median-latency round of V's measured ones (the lower middle one),
 * and the spread of the rounds per objective. */
static void pick_round(val_point *V, const rt_result *rr)
{
    int ord[VAL_MAX_ROUNDS], n = V->nrounds;
    for (int i = 0; i < n; i++) {
        int j = i;
        for (; j > 0 && V->round_ms[ord[j - 1]] > V->round_ms[i]; j--) ord[j] = ord[j - 1];
        ord[j] = i;
    }
    V->med_round = ord[(n - 1) / 2];
    double lo[COST_NOBJ], hi[COST_NOBJ], x[COST_NOBJ];
    for (int i = 0; i < n; i++) {
        rt_objectives(&rr[i], x);
        for (int k = 0; k < COST_NOBJ; k++) {
            lo[k] = i ? fmin(lo[k], x[k]) : x[k];
            hi[k] = i ? fmax(hi[k], x[k]) : x[k];
        }
    }
    for (int k = 0; k < COST_NOBJ; k++) V->spread[k] = lo[k] > 0 ? hi[k] / lo[k] : NAN;
}

/* Payload bytes from each device to each other one, as the runtime
 * counted them (rt_device.bytes_to), against the Plan's messages: 1 with
 * why[] naming the first pair that differs, 0 when all are equal or the
 * record does not have them. */
static int bytes_differ(const plan *p, const platform *pl, const rt_result *r, char *why, size_t n)
{
    int nd = p->ndev, differ = 0;
    if (!r->bytes_to_known || r->ndev != nd) return 0;
    int64_t *want = calloc((size_t)nd * (size_t)nd, sizeof *want);
    if (!want) return 0;
    for (int m = 0; m < p->nmsgs; m++) want[p->msgs[m].from * nd + p->msgs[m].to] += p->msgs[m].bytes;
    for (int a = 0; a < nd && !differ; a++)
        for (int b = 0; b < nd && !differ; b++)
            if (r->dev[a].bytes_to[b] != want[a * nd + b]) {
                snprintf(why, n, "payload bytes from %s to %s: the runtime sent %lld, the Plan's "
                         "messages hold %lld", pl->dev[a].name, pl->dev[b].name,
                         (long long)r->dev[a].bytes_to[b], (long long)want[a * nd + b]);
                differ = 1;
            }
    free(want);
    return differ;
}

/* Third phase: predict P again (its plan, spans and per-device figures
 * are X's scratch, shared by the points), line up the median round's
 * trace with the prediction, store everything.  0, or -1 when the
 * database refused a row (err). */
static int store(ctx *X, const res_point *P, val_point *V, const rt_result *rr, char *err)
{
    const val_options *o = X->o;
    const platform *pl = X->pl;
    char e[BASE_ERRLEN], tpath[800];
    int prepared = predict(X, P, V) == 0; /* as in prepare: it fails again if it failed there */
    if (!prepared) {
        res_validation whole = {0, o->campaign, V->idx, NULL, {0}, {0}, "failed", V->reason};
        for (int k = 0; k < COST_NOBJ; k++) whole.pred[k] = whole.meas[k] = NAN;
        V->status = "failed";
        return res_validation_add(X->db, &whole, NULL, 0, &V->row, err);
    }
    if (!strcmp(V->status, "ok") && V->nrounds == 0) {
        /* stopped (Ctrl-C) before a launch of it completed: predicted, not measured */
        V->status = "unmeasured";
        snprintf(V->reason, sizeof V->reason, "interrupted before it was measured");
    }
    int measured = !strcmp(V->status, "ok") && V->nrounds > 0;
    const rt_result *best = NULL;
    if (measured) {
        pick_round(V, rr);
        best = &rr[V->med_round];
        rt_objectives(best, V->meas);
        /* A run that moved other bytes than its Plan did not run the Plan:
         * failed (any round), with its figures kept for a look. */
        for (int k = 0; k < V->nrounds && strcmp(V->status, "failed"); k++)
            if (bytes_differ(X->p, pl, &rr[k], V->reason, sizeof V->reason)) V->status = "failed";
    }
    /* The median round's trace, matched step for step with the prediction;
     * kept as measured-trace.json. */
    trace_file tf;
    memset(&tf, 0, sizeof tf);
    int have_trace = 0;
    if (measured) {
        char rpath[800];
        round_trace(X, V, V->med_round, rpath, sizeof rpath);
        snprintf(tpath, sizeof tpath, "%s/point-%d/measured-trace.json", X->dir, V->idx);
        have_trace = rename(rpath, tpath) == 0 && trace_load(tpath, &tf, e) == 0;
    }
    if (have_trace) {
        /* The predicted trace of the same Plan, to compare the step lists. */
        trace_info ti = {"predicted", X->n, pl, X->p, X->span, X->pred_latency_s, 0, 0, 0, 0, NULL};
        char *pj = trace_to_json(&ti);
        trace_file pf;
        memset(&pf, 0, sizeof pf);
        int same = pj && trace_parse(pj, "predicted trace", &pf, e) == 0 &&
                   trace_same_steps(&tf, &pf, e) == 0;
        if (!same) {
            if (!V->reason[0]) /* a reason already there (bytes) says more */
                snprintf(V->reason, sizeof V->reason, "measured steps not compared: %.900s", e);
            trace_file_free(&tf);
            have_trace = 0;
        }
        trace_file_free(&pf);
        free(pj);
    }
    V->nsteps = steps_of(X->p, pl, X->span, have_trace ? &tf : NULL, X->steps, V);
    trace_file_free(&tf);
    /* Per device rows, then the whole mapping with its steps. */
    for (int d = 0; d < pl->ndev; d++) {
        if (!X->pd[d].used) continue;
        res_validation rv = {0, o->campaign, V->idx, pl->dev[d].name, {0}, {0}, V->status,
                             V->reason[0] ? V->reason : NULL};
        cost_objectives_dev(&X->pd[d], rv.pred);
        if (measured) rt_objectives_dev(best, d, rv.meas);
        else
            for (int k = 0; k < COST_NOBJ; k++) rv.meas[k] = NAN;
        if (res_validation_add(X->db, &rv, NULL, 0, NULL, err)) return -1;
    }
    res_validation whole = {0, o->campaign, V->idx, NULL, {0}, {0}, V->status,
                            V->reason[0] ? V->reason : NULL};
    memcpy(whole.pred, V->pred, sizeof whole.pred);
    memcpy(whole.meas, V->meas, sizeof whole.meas);
    return res_validation_add(X->db, &whole, X->steps, V->nsteps, &V->row, err);
}

int val_run(const val_options *o, val_report *r, char *err)
{
    memset(r, 0, sizeof *r);
    r->ref.dev = -1; /* no reference until one is chosen */
    r->ref.pred_ms = r->ref.meas_ms = r->ref.beside_ratio = NAN;
    r->warmup = o->warmup;
    r->reps = o->reps;
    ctx X;
    memset(&X, 0, sizeof X);
    X.o = o;
    int rc = 2;
    res_campaign cm;
    memset(&cm, 0, sizeof cm);
    res_point *pts = NULL;
    int npts = 0;
    rt_result *rr = NULL; /* point v's round k at v * rounds + k */
    char warn[BASE_ERRLEN];
    if (!(X.db = res_open(o->db ? o->db : "dse.db", RES_OPEN_WRITE, err))) return 2;
    if (res_campaign_get(X.db, o->campaign, &cm, err)) goto out;
    snprintf(r->network, sizeof r->network, "%s", cm.network ? cm.network : "?");
    snprintf(r->platform, sizeof r->platform, "%s", cm.platform ? cm.platform : "?");
    snprintf(r->chromosome, sizeof r->chromosome, "%s", cm.chromosome ? cm.chromosome : "?");
    char e[BASE_ERRLEN];
    if (!(X.c = camp_from_config(cm.config, 1, e)) || (npts = camp_load_front(X.db, o->campaign, &pts, e)) < 0) {
        base_seterr(err, "campaign %lld: %s", o->campaign, e);
        goto out;
    }
    if (npts == 0) {
        base_seterr(err, "campaign %lld has no feasible front point yet", o->campaign);
        goto out;
    }
    rc = 1;
    X.n = camp_net(X.c);
    X.pl = camp_platform(X.c);
    snprintf(X.dir, sizeof X.dir, "%s", o->keep ? o->keep : "/tmp/dse-validate-XXXXXX");
    int made;
    if (o->keep && base_out_dir(X.dir, &made, err)) { /* --keep unusable: bad usage */
        X.dir[0] = 0;
        rc = 2;
        goto out;
    }
    if (!o->keep && !mkdtemp(X.dir)) {
        base_seterr(err, "%s: cannot create: %s", X.dir, strerror(errno));
        X.dir[0] = 0;
        goto out;
    }
    /* The campaign's own network and platform, as files for dse exec. */
    char *nj = net_to_json(X.n);
    int files = nj && X.pl->text && put_file(X.dir, "network.json", nj, X.netpath, sizeof X.netpath) == 0 &&
                put_file(X.dir, "platform.json", X.pl->text, X.plpath, sizeof X.plpath) == 0;
    free(nj);
    if (!files) {
        base_seterr(err, "%s: cannot write the campaign's network and platform", X.dir);
        goto out;
    }
    if (!(X.cm = cost_new(X.n, X.pl, camp_coeffs(X.c), warn, err))) goto out;
    {
        int a, b;
        X.msg_us = platform_cpu_pair(X.pl, &a, &b) ? cost_message_s(X.cm, a, b, RT_HANDOFF_BYTES) * 1e6 : NAN;
        X.touch_min = INFINITY;
    }
    /* of the model's fallbacks, the one that bears on predicted vs measured */
    coeffs_arch_warning(camp_coeffs(X.c), X.pl, r->warn);
    /* Rank r on device r's board (a generated hostfile) unless all are here. */
    if (rt_placement_file(X.pl, X.dir, X.seqfile, sizeof X.seqfile, X.remote, sizeof X.remote, err))
        goto out;
    X.p = plan_new();
    X.m = mapping_new(X.n->n, X.pl->ndev);
    X.pd = calloc((size_t)X.pl->ndev, sizeof *X.pd);
    r->pts = calloc((size_t)npts + COST_NOBJ, sizeof *r->pts);
    if (!X.p || !X.m || !X.pd || !r->pts) {
        base_seterr(err, "out of memory");
        goto out;
    }
    r->n = choose(pts, npts, o->top, r->pts);
    X.rounds = o->rounds < 1 ? 1 : o->rounds > VAL_MAX_ROUNDS ? VAL_MAX_ROUNDS : o->rounds;
    r->rounds = X.rounds;
    if (!(rr = malloc((size_t)r->n * (size_t)X.rounds * sizeof *rr))) {
        base_seterr(err, "out of memory");
        goto out;
    }
    reference_choose(&X, &r->ref);
    {
        const cost_coeffs *cc = camp_coeffs(X.c);
        r->ref.calibrated = camp_coeffs_given(X.c);
        snprintf(r->ref.calib_date, sizeof r->ref.calib_date, "%s", cc->date ? cc->date : "");
        for (int i = 0; i < cc->nnetworks; i++)
            r->ref.calib_net |= cc->networks[i] && !strcmp(cc->networks[i], X.n->name);
    }
    for (int v = 0; v < r->n; v++) prepare(&X, &pts[r->pts[v].idx], &r->pts[v]);
    /* Points in turn, round after round: a drift of the cores' speed
     * during the run falls on every point alike.  The reference first,
     * while any point is still measured. */
    for (int k = 0; k < X.rounds && !(o->stop && *o->stop); k++) {
        int live = 0;
        for (int v = 0; v < r->n; v++) live |= !strcmp(r->pts[v].status, "ok");
        if (live) reference_measure(&X, &r->ref, k);
        for (int v = 0; v < r->n && !(o->stop && *o->stop); v++)
            measure(&X, &r->pts[v], k, &rr[(size_t)v * X.rounds]);
    }
    reference_median(&r->ref);
    int failed = 0;
    for (int v = 0; v < r->n; v++) {
        if (store(&X, &pts[r->pts[v].idx], &r->pts[v], &rr[(size_t)v * X.rounds], err)) goto out;
        failed |= !strcmp(r->pts[v].status, "failed");
    }
    reference_relate(r);
    handoff_summary(r, &X, rr);
    rc = failed || (o->stop && *o->stop) ? 1 : 0;
    if (o->stop && *o->stop) base_seterr(err, "interrupted");
out:
    if (!o->keep && X.dir[0]) {
        /* Remove what this run wrote (a flat tree of known names). */
        for (int v = 0; v < r->n; v++) {
            char pth[900];
            static const char *const names[] = {"dse-mapping.json", "measured-trace.json"};
            for (int k = 0; k < 2; k++) {
                snprintf(pth, sizeof pth, "%s/point-%d/%s", X.dir, r->pts[v].idx, names[k]);
                unlink(pth);
            }
            for (int k = 0; k < X.rounds; k++) {
                round_trace(&X, &r->pts[v], k, pth, sizeof pth);
                unlink(pth);
            }
            snprintf(pth, sizeof pth, "%s/point-%d", X.dir, r->pts[v].idx);
            rmdir(pth);
        }
        if (X.netpath[0]) unlink(X.netpath);
        if (X.plpath[0]) unlink(X.plpath);
        if (X.seqfile[0]) unlink(X.seqfile);
        rmdir(X.dir);
    }
    free(rr);
    free(X.span);
    free(X.steps);
    free(X.pd);
    plan_free(X.p);
    mapping_free(X.m);
    cost_free(X.cm);
    if (pts) res_points_free(pts, npts);
    camp_free(X.c);
    res_campaign_free(&cm);
    res_close(X.db);
    return rc;
}

int val_order(const val_report *r, int k, int *pairs, int *ties, int (*wrong)[2], int cap)
{
    int nw = 0;
    *pairs = *ties = 0;
    for (int a = 0; a < r->n; a++)
        for (int b = a + 1; b < r->n; b++) {
            const val_point *A = &r->pts[a], *B = &r->pts[b];
            if (isnan(A->meas[k]) || isnan(B->meas[k]) || isnan(A->pred[k]) || isnan(B->pred[k]))
                continue;
            ++*pairs;
            double lo = fmin(A->pred[k], B->pred[k]), gap = fabs(A->pred[k] - B->pred[k]);
            double spread = fmax(A->spread[k], B->spread[k]) - 1;
            if (lo <= 0 || gap <= lo * spread) {
                ++*ties;
                continue;
            }
            if ((A->pred[k] < B->pred[k]) != (A->meas[k] < B->meas[k])) {
                if (nw < cap) wrong[nw][0] = a, wrong[nw][1] = b;
                nw++;
            }
        }
    return nw;
}

void val_report_free(val_report *r)
{
    free(r->pts);
    memset(r, 0, sizeof *r);
}
