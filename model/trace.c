/* trace.c -- Chrome trace-event JSON of a Plan's timeline: the writer
 * (measured and predicted traces alike) and the reader the comparisons,
 * `dse validate` and the tests use (trace.h, docs/traces.md).
 *
 * Invariant: the writer emits one "X" event per Plan step with args.step
 * its index in its device's list, so a file's steps can be matched
 * mechanically; the reader accepts a file only when every track's steps
 * are exactly 0, 1, ..., n-1 and every device index is declared.
 */
#include "trace.h"

#include "jsonutil.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *layer_name(const net *n, int layer)
{
    return layer == NET_INPUT ? "input" : n->layers[layer].name;
}

/* "conv1 [0,48)", "send conv1 [0,48) to rank1", ... */
static void event_name(char *buf, size_t len, const net *n, const platform *pl, const plan_step *s)
{
    const char *ln = layer_name(n, s->layer);
    int whole = s->layer == NET_INPUT || s->nc == n->layers[s->layer].out.c;
    char rng[48] = "";
    if (!whole) snprintf(rng, sizeof rng, " [%d,%d)", s->c0, s->c0 + s->nc);
    switch (s->op) {
    case PLAN_COMPUTE: snprintf(buf, len, "%s%s", ln, rng); break;
    case PLAN_CONCAT: snprintf(buf, len, "concat %s", ln); break;
    case PLAN_SEND: snprintf(buf, len, "send %s%s to %s", ln, rng, pl->dev[s->peer].name); break;
    case PLAN_RECV: snprintf(buf, len, "recv %s%s from %s", ln, rng, pl->dev[s->peer].name); break;
    }
}

/* Times in microseconds with nanosecond resolution, printed as such: a
 * reader gets exactly the number written (cJSON's own printing may round
 * the 17th digit), so rows stored from a trace equal the file. */
static double ns(double seconds) { return round(seconds * 1e9); }

static void add_ns(cJSON *o, const char *key, double nanos)
{
    char buf[64];
    double us = nanos / 1e3;
    snprintf(buf, sizeof buf, "%.3f", us == 0 ? 0.0 : us);
    cJSON_AddRawToObject(o, key, buf);
}

static void add_us(cJSON *o, const char *key, double seconds) { add_ns(o, key, ns(seconds)); }

static cJSON *meta(const char *what, int tid, const char *key, cJSON *val)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", what);
    cJSON_AddStringToObject(e, "ph", "M");
    cJSON_AddNumberToObject(e, "pid", 1);
    if (tid >= 0) cJSON_AddNumberToObject(e, "tid", tid);
    cJSON *a = cJSON_AddObjectToObject(e, "args");
    cJSON_AddItemToObject(a, key, val);
    return e;
}

char *trace_to_json(const trace_info *t)
{
    const plan *p = t->p;
    const net *n = t->n;
    const platform *pl = t->pl;
    int measured = !strcmp(t->source, "measured");
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
    cJSON *od = cJSON_AddObjectToObject(root, "otherData");
    cJSON_AddStringToObject(od, "format", TRACE_FORMAT);
    cJSON_AddNumberToObject(od, "version", TRACE_VERSION);
    cJSON_AddStringToObject(od, "source", t->source);
    cJSON_AddStringToObject(od, "network", n->name);
    cJSON_AddStringToObject(od, "platform", pl->name);
    cJSON *dv = cJSON_AddArrayToObject(od, "devices");
    for (int d = 0; d < pl->ndev; d++) cJSON_AddItemToArray(dv, cJSON_CreateString(pl->dev[d].name));
    cJSON_AddNumberToObject(od, "steps", p->nsteps);
    add_us(od, "latency_us", t->latency_s);
    cJSON_AddStringToObject(od, "output_device", pl->dev[p->out_dev].name);
    if (measured) {
        cJSON_AddNumberToObject(od, "warmup", t->warmup);
        cJSON_AddNumberToObject(od, "reps", t->reps);
        cJSON_AddNumberToObject(od, "inference", t->inference);
        add_us(od, "clock_skew_us", t->skew_s);
        if (t->clock) cJSON_AddStringToObject(od, "clock", t->clock);
    }
    cJSON *ev = cJSON_AddArrayToObject(root, "traceEvents");
    char title[300];
    snprintf(title, sizeof title, "dse %s: %s on %s", t->source, n->name, pl->name);
    cJSON_AddItemToArray(ev, meta("process_name", -1, "name", cJSON_CreateString(title)));
    for (int d = 0; d < pl->ndev; d++) {
        cJSON_AddItemToArray(ev, meta("thread_name", d, "name", cJSON_CreateString(pl->dev[d].name)));
        cJSON_AddItemToArray(ev, meta("thread_sort_index", d, "sort_index", cJSON_CreateNumber(d)));
    }
    char name[300];
    for (int d = 0; d < p->ndev; d++) {
        const plan_step *st = plan_steps_dev(p, d);
        for (int i = 0; i < plan_nsteps_dev(p, d); i++) {
            const plan_step *s = &st[i];
            const trace_span *sp = &t->span[p->step0[d] + i];
            cJSON *e = cJSON_CreateObject();
            event_name(name, sizeof name, n, pl, s);
            cJSON_AddStringToObject(e, "name", name);
            cJSON_AddStringToObject(e, "cat", plan_op_name(s->op));
            cJSON_AddStringToObject(e, "ph", "X");
            cJSON_AddNumberToObject(e, "pid", 1);
            cJSON_AddNumberToObject(e, "tid", d);
            /* the end is exactly ts + dur at the file's resolution */
            add_us(e, "ts", sp->t0);
            add_ns(e, "dur", ns(sp->t1) - ns(sp->t0));
            cJSON *a = cJSON_AddObjectToObject(e, "args");
            cJSON_AddNumberToObject(a, "step", i);
            cJSON_AddStringToObject(a, "op", plan_op_name(s->op));
            cJSON_AddStringToObject(a, "layer", layer_name(n, s->layer));
            cJSON_AddNumberToObject(a, "layer_index", s->layer);
            cJSON_AddNumberToObject(a, "c0", s->c0);
            cJSON_AddNumberToObject(a, "nc", s->nc);
            cJSON_AddNumberToObject(a, "h0", s->h0);
            cJSON_AddNumberToObject(a, "nh", s->nh);
            cJSON_AddNumberToObject(a, "w0", s->w0);
            cJSON_AddNumberToObject(a, "nw", s->nw);
            if (s->peer >= 0) {
                cJSON_AddStringToObject(a, "peer", pl->dev[s->peer].name);
                cJSON_AddNumberToObject(a, "peer_index", s->peer);
                cJSON_AddNumberToObject(a, "msg", s->msg);
            }
            cJSON_AddNumberToObject(a, "bytes", (double)plan_step_bytes(p, d, i));
            if (measured) add_us(a, "median_us", sp->med_s);
            cJSON_AddItemToArray(ev, e);
        }
    }
    /* Flow arrows: each message from its SEND to its RECV, ending inside the
     * receive no earlier than the send began (an arrow never runs back). */
    for (int g = 0; g < p->nmsgs; g++) {
        const plan_msg *G = &p->msgs[g];
        const trace_span *ss = &t->span[G->send_step], *rs = &t->span[G->recv_step];
        snprintf(name, sizeof name, "%s", layer_name(n, G->layer));
        for (int k = 0; k < 2; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "name", name);
            cJSON_AddStringToObject(e, "cat", "message");
            cJSON_AddStringToObject(e, "ph", k ? "f" : "s");
            if (k) cJSON_AddStringToObject(e, "bp", "e");
            cJSON_AddNumberToObject(e, "id", g);
            cJSON_AddNumberToObject(e, "pid", 1);
            cJSON_AddNumberToObject(e, "tid", k ? G->to : G->from);
            double at = ss->t0;
            if (k) at = rs->t0 > at ? rs->t0 : (rs->t1 < at ? rs->t1 : at);
            add_us(e, "ts", at);
            cJSON_AddItemToArray(ev, e);
        }
    }
    char *txt = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return txt;
}

int trace_write(const char *path, const trace_info *t, char *err)
{
    char *txt = trace_to_json(t);
    if (!txt) {
        base_seterr(err, "%s: out of memory writing the trace", path);
        return -1;
    }
    int rc = ju_write_file_atomic(path, txt, err);
    free(txt);
    return rc;
}

int trace_predict(cost_model *m, const plan *p, trace_span *span, cost_result *r,
                  cost_device *per_dev)
{
    double *t = malloc(2 * ((size_t)p->nsteps + 1) * sizeof *t);
    if (!t) return -2;
    int rc = cost_schedule(m, p, r, per_dev, t, t + p->nsteps + 1);
    for (int i = 0; !rc && i < p->nsteps; i++) {
        span[i].t0 = t[i];
        span[i].t1 = t[p->nsteps + 1 + i];
        span[i].med_s = span[i].t1 - span[i].t0;
    }
    free(t);
    return rc;
}

/* ---- reader ---- */

void trace_file_free(trace_file *t)
{
    if (!t) return;
    free(t->source);
    free(t->network);
    free(t->platform);
    for (int d = 0; t->devices && d < t->ndev; d++) free(t->devices[d]);
    free(t->devices);
    free(t->steps);
    memset(t, 0, sizeof *t);
}

static int parse_op(const char *s, plan_op *op)
{
    for (int k = PLAN_COMPUTE; k <= PLAN_CONCAT; k++)
        if (!strcmp(s, plan_op_name((plan_op)k))) {
            *op = (plan_op)k;
            return 0;
        }
    return -1;
}

static int cmp_step(const void *a, const void *b)
{
    const trace_step *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    return (x->step > y->step) - (x->step < y->step);
}

static double numv(const cJSON *o, const char *k, double def)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

int trace_parse(const char *text, const char *what, trace_file *out, char *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = ju_parse(text, what, err);
    if (!root) return -1;
    const cJSON *od = cJSON_GetObjectItem(root, "otherData");
    const cJSON *fmt = cJSON_GetObjectItem(od, "format");
    const cJSON *ev = cJSON_GetObjectItem(root, "traceEvents");
    const cJSON *dv = cJSON_GetObjectItem(od, "devices");
    int rc = -1, cap;
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, TRACE_FORMAT) || !cJSON_IsArray(ev) ||
        !cJSON_IsArray(dv)) {
        base_seterr(err, "%s: not a dse trace (otherData.format \"%s\" with devices "
                 "and traceEvents expected)", what, TRACE_FORMAT);
        goto out;
    }
    if (numv(od, "version", 0) > TRACE_VERSION) {
        base_seterr(err, "%s: trace version %g is newer than this dse reads (%d)", what,
                 numv(od, "version", 0), TRACE_VERSION);
        goto out;
    }
    const char *src = "", *netn = "", *pln = "";
    ju_str(od, "source", &src, 0, what, err);
    ju_str(od, "network", &netn, 0, what, err);
    ju_str(od, "platform", &pln, 0, what, err);
    out->source = base_strdup(src);
    out->network = base_strdup(netn);
    out->platform = base_strdup(pln);
    out->ndev = cJSON_GetArraySize(dv);
    out->devices = calloc((size_t)out->ndev + 1, sizeof *out->devices);
    cap = cJSON_GetArraySize(ev);
    out->steps = calloc((size_t)cap + 1, sizeof *out->steps);
    if (!out->source || !out->network || !out->platform || !out->devices || !out->steps) goto oom;
    for (int d = 0; d < out->ndev; d++) {
        const cJSON *s = cJSON_GetArrayItem(dv, d);
        if (!(out->devices[d] = base_strdup(cJSON_IsString(s) ? s->valuestring : ""))) goto oom;
    }
    out->latency_us = numv(od, "latency_us", NAN);
    out->skew_us = numv(od, "clock_skew_us", 0);
    out->warmup = (int)numv(od, "warmup", 0);
    out->reps = (int)numv(od, "reps", 0);
    out->inference = (int)numv(od, "inference", 0);
    int k = 0;
    for (const cJSON *e = ev->child; e; e = e->next) {
        const cJSON *ph = cJSON_GetObjectItem(e, "ph"), *a = cJSON_GetObjectItem(e, "args");
        if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X")) continue;
        trace_step *s = &out->steps[k];
        const cJSON *op = cJSON_GetObjectItem(a, "op");
        s->dev = (int)numv(e, "tid", -1);
        s->step = (int)numv(a, "step", -1);
        if (!cJSON_IsString(op) || parse_op(op->valuestring, &s->op) || s->dev < 0 ||
            s->dev >= out->ndev || s->step < 0 || !cJSON_IsNumber(cJSON_GetObjectItem(e, "ts")) ||
            !cJSON_IsNumber(cJSON_GetObjectItem(e, "dur"))) {
            base_seterr(err, "%s: event %d is not a step of a declared device (tid, "
                     "ts, dur, args.step and args.op needed)", what, k);
            goto out;
        }
        s->layer = (int)numv(a, "layer_index", NET_INPUT);
        s->c0 = (int)numv(a, "c0", 0);
        s->nc = (int)numv(a, "nc", 0);
        s->h0 = (int)numv(a, "h0", 0);
        s->nh = (int)numv(a, "nh", 0);
        s->w0 = (int)numv(a, "w0", 0);
        s->nw = (int)numv(a, "nw", 0);
        s->peer = (int)numv(a, "peer_index", -1);
        s->msg = (int)numv(a, "msg", -1);
        s->bytes = (int64_t)numv(a, "bytes", 0);
        s->ts_us = numv(e, "ts", 0);
        s->dur_us = numv(e, "dur", 0);
        s->med_us = numv(a, "median_us", s->dur_us);
        k++;
    }
    out->nsteps = k;
    qsort(out->steps, (size_t)k, sizeof *out->steps, cmp_step);
    for (int i = 0; i < k; i++) {
        int want = i > 0 && out->steps[i - 1].dev == out->steps[i].dev ? out->steps[i - 1].step + 1 : 0;
        if (out->steps[i].step != want) {
            base_seterr(err, "%s: device %s: step %d %s (steps must be 0, 1, ... on "
                     "each track)", what, out->devices[out->steps[i].dev], want,
                     out->steps[i].step < want ? "appears twice" : "is missing");
            goto out;
        }
    }
    rc = 0;
    goto out;
oom:
    base_seterr(err, "%s: out of memory reading the trace", what);
out:
    cJSON_Delete(root);
    if (rc) trace_file_free(out);
    return rc;
}

int trace_load(const char *path, trace_file *out, char *err)
{
    memset(out, 0, sizeof *out);
    char *txt = ju_read_file(path, err);
    if (!txt) return -1;
    int rc = trace_parse(txt, path, out, err);
    free(txt);
    return rc;
}

int trace_same_steps(const trace_file *a, const trace_file *b, char *err)
{
    if (a->ndev != b->ndev) {
        base_seterr(err, "%d devices against %d", a->ndev, b->ndev);
        return -1;
    }
    if (a->nsteps != b->nsteps) {
        base_seterr(err, "%d steps against %d", a->nsteps, b->nsteps);
        return -1;
    }
    for (int i = 0; i < a->nsteps; i++) {
        const trace_step *x = &a->steps[i], *y = &b->steps[i];
        if (x->dev != y->dev || x->step != y->step || x->op != y->op || x->layer != y->layer ||
            x->c0 != y->c0 || x->nc != y->nc || x->h0 != y->h0 || x->nh != y->nh ||
            x->w0 != y->w0 || x->nw != y->nw ||
            x->peer != y->peer || x->bytes != y->bytes) {
            base_seterr(err, "device %s step %d: %s of layer %d ch [%d,+%d) rows [%d,+%d) cols "
                     "[%d,+%d) against %s of layer %d ch [%d,+%d) rows [%d,+%d) cols [%d,+%d)",
                     a->devices[x->dev], x->step, plan_op_name(x->op), x->layer, x->c0, x->nc,
                     x->h0, x->nh, x->w0, x->nw, plan_op_name(y->op), y->layer, y->c0, y->nc,
                     y->h0, y->nh, y->w0, y->nw);
            return -1;
        }
    }
    return 0;
}
