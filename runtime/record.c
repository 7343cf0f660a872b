/* record.c -- the record of a run, `dse exec --json` (docs/runtime.md):
 * written by the command, read back by rt_measure -- the one definition
 * of its format -- and the measured objectives it holds.
 * Invariant: rt_record_parse(rt_record_json(r)) gives r back (numbers
 * exact: ju_print). */
#include "runtime.h"

#include "cost.h"
#include "jsonutil.h"

#include <cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Latencies after a warm-up are warm; without one, the first inference
 * pays page faults, weight streaming from cold memory, MPI connection
 * set-up: a cold figure nobody should compare with a prediction. */
static const char *latency_kind(int warm) { return warm > 0 ? "warm" : "cold"; }

/* What the runtime measures of one objective on device d (NAN: not). */
static double measured_dev(const rt_result *r, int d, int k)
{
    const rt_device *D = &r->dev[d];
    switch (k) {
    case COST_OBJ_ENERGY: return D->energy_measured ? D->energy_j : NAN;
    case COST_OBJ_MEMORY: return D->peak_rss_mb;
    case COST_OBJ_LATENCY: return D->finish_ms;
    default: return NAN; /* an objective the runtime has no sensor for */
    }
}

void rt_objectives_dev(const rt_result *r, int dev, double *obj)
{
    for (int k = 0; k < COST_NOBJ; k++) obj[k] = measured_dev(r, dev, k);
}

int rt_moved_data(const rt_result *r)
{
    for (int d = 0; d < r->ndev; d++)
        if (r->dev[d].bytes_sent > 0) return 1;
    return 0;
}

void rt_objectives(const rt_result *r, double *obj)
{
    /* As the model: the maximum over the devices that work (an unmeasured
     * one makes the whole unmeasured); latency is the inference's. */
    for (int k = 0; k < COST_NOBJ; k++) {
        double m = 0;
        for (int d = 0; d < r->ndev; d++)
            if (r->dev[d].nsteps) {
                double v = measured_dev(r, d, k);
                m = isnan(v) || isnan(m) ? NAN : v > m ? v : m;
            }
        obj[k] = k == COST_OBJ_LATENCY ? r->lat_med_ms : m;
    }
}

char *rt_record_json(const rt_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "warmup", r->warmup);
    cJSON_AddNumberToObject(o, "reps", r->reps);
    cJSON_AddStringToObject(o, "latency_kind", latency_kind(r->warmup));
    cJSON *l = cJSON_AddObjectToObject(o, "latency_ms");
    cJSON_AddNumberToObject(l, "median", r->lat_med_ms);
    cJSON_AddNumberToObject(l, "min", r->lat_min_ms);
    cJSON_AddNumberToObject(l, "max", r->lat_max_ms);
    cJSON_AddNumberToObject(o, "timeout_s", r->timeout_s);
    cJSON_AddStringToObject(o, "output_device", r->dev[r->out_dev].name);
    cJSON *c = cJSON_AddObjectToObject(o, "check");
    cJSON_AddBoolToObject(c, "done", r->checked);
    cJSON_AddBoolToObject(c, "ok", r->checked && r->check_ok);
    cJSON_AddNumberToObject(c, "max_rel_err", r->max_rel_err);
    cJSON_AddNumberToObject(c, "max_abs_err", r->max_abs_err);
    cJSON *ds = cJSON_AddArrayToObject(o, "devices");
    for (int d = 0; d < r->ndev; d++) {
        const rt_device *D = &r->dev[d];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", D->name);
        cJSON_AddNumberToObject(j, "rank", d);
        cJSON_AddNumberToObject(j, "steps", D->nsteps);
        cJSON_AddNumberToObject(j, "busy_ms", D->busy_ms);
        cJSON_AddNumberToObject(j, "wait_ms", D->wait_ms);
        cJSON_AddNumberToObject(j, "finish_ms", D->finish_ms);
        cJSON_AddNumberToObject(j, "bytes_sent", (double)D->bytes_sent);
        cJSON_AddNumberToObject(j, "bytes_recv", (double)D->bytes_recv);
        if (r->bytes_to_known) {
            cJSON *bt = cJSON_AddArrayToObject(j, "bytes_to");
            for (int e = 0; e < r->ndev; e++) cJSON_AddItemToArray(bt, cJSON_CreateNumber((double)D->bytes_to[e]));
        }
        cJSON_AddNumberToObject(j, "peak_rss_mb", D->peak_rss_mb);
        if (D->energy_measured) cJSON_AddNumberToObject(j, "energy_j", D->energy_j);
        else cJSON_AddNullToObject(j, "energy_j");
        cJSON_AddItemToArray(ds, j);
    }
    if (r->beside.n > 0) { /* dse exec --beside */
        cJSON *b = cJSON_AddObjectToObject(o, "beside");
        cJSON_AddNumberToObject(b, "devices", r->beside.n);
        if (r->beside.n > 1) {
            cJSON *bl = cJSON_AddObjectToObject(b, "latency_ms");
            cJSON_AddNumberToObject(bl, "median", r->beside.med_ms);
            cJSON_AddNumberToObject(bl, "min", r->beside.min_ms);
            cJSON_AddNumberToObject(bl, "max", r->beside.max_ms);
        }
    }
    if (r->handoff.a < 0 || r->handoff.b > r->handoff.a) { /* dse exec --handoff */
        cJSON *h = cJSON_AddObjectToObject(o, "handoff");
        cJSON *hd = cJSON_AddArrayToObject(h, "devices");
        if (r->handoff.a >= 0) {
            cJSON_AddItemToArray(hd, cJSON_CreateString(r->dev[r->handoff.a].name));
            cJSON_AddItemToArray(hd, cJSON_CreateString(r->dev[r->handoff.b].name));
            cJSON_AddNumberToObject(h, "bytes", RT_HANDOFF_BYTES);
            cJSON_AddNumberToObject(h, "hop_us", r->handoff.hop_us);
            cJSON_AddNumberToObject(h, "touch_us", r->handoff.touch_us);
        }
    }
    double obj[COST_NOBJ];
    rt_objectives(r, obj);
    cJSON *ob = cJSON_AddObjectToObject(o, "objectives");
    for (int k = 0; k < COST_NOBJ; k++) {
        if (isnan(obj[k])) cJSON_AddNullToObject(ob, cost_objectives[k].key);
        else cJSON_AddNumberToObject(ob, cost_objectives[k].key, obj[k]);
    }
    char *t = ju_print(o, 1);
    cJSON_Delete(o);
    return t;
}

static int num(const cJSON *o, const char *k, double *v)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(x)) return -1;
    *v = x->valuedouble;
    return 0;
}

/* Is v a whole number in [0, max]? */
static int whole(double v, double max) { return v >= 0 && v <= max && v == floor(v); }

int rt_record_parse(const char *text, rt_result *r, char *err)
{
    memset(r, 0, sizeof *r);
    cJSON *o = cJSON_Parse(text);
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "latency_ms");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "check");
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(o, "devices");
    const char *outd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "output_device"));
    double w, reps, to = 0;
    const char *bad = NULL;
    if (!o) bad = "not JSON";
    else if (num(o, "warmup", &w) || num(o, "reps", &reps) || num(l, "median", &r->lat_med_ms) ||
             num(l, "min", &r->lat_min_ms) || num(l, "max", &r->lat_max_ms) || !outd)
        bad = "no warmup, reps, latency_ms or output_device";
    else if (!cJSON_IsArray(ds) || cJSON_GetArraySize(ds) < 1 || cJSON_GetArraySize(ds) > RT_MAX_DEV)
        bad = "no devices";
    if (!bad) {
        num(o, "timeout_s", &to);
        r->warmup = (int)w;
        r->reps = (int)reps;
        r->timeout_s = to;
        r->checked = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "done"));
        r->check_ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok"));
        num(c, "max_rel_err", &r->max_rel_err);
        num(c, "max_abs_err", &r->max_abs_err);
        r->ndev = cJSON_GetArraySize(ds);
        for (int d = 0; d < r->ndev && !bad; d++) {
            const cJSON *j = cJSON_GetArrayItem(ds, d);
            rt_device *D = &r->dev[d];
            double steps, sent, recvd;
            const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "name"));
            if (!name || num(j, "steps", &steps) || num(j, "busy_ms", &D->busy_ms) ||
                num(j, "wait_ms", &D->wait_ms) || num(j, "finish_ms", &D->finish_ms) ||
                num(j, "bytes_sent", &sent) || num(j, "bytes_recv", &recvd) ||
                num(j, "peak_rss_mb", &D->peak_rss_mb)) {
                bad = "a device lacks name, steps, times, bytes or peak_rss_mb";
                break;
            }
            /* Counts are whole numbers a double holds exactly (casting a
             * larger or non-finite one would be undefined). */
            if (!whole(steps, INT_MAX) || !whole(sent, 9007199254740992.0) ||
                !whole(recvd, 9007199254740992.0)) {
                bad = "a device's steps or bytes are not whole numbers in range";
                break;
            }
            snprintf(D->name, sizeof D->name, "%s", name);
            D->nsteps = (int)steps;
            D->bytes_sent = (int64_t)sent;
            D->bytes_recv = (int64_t)recvd;
            D->energy_measured = num(j, "energy_j", &D->energy_j) == 0;
            if (!strcmp(name, outd)) r->out_dev = d;
            /* bytes_to: on every device or on none (records before
             * 2026-11-27 lack it); when there, ndev whole byte counts. */
            const cJSON *bt = cJSON_GetObjectItemCaseSensitive(j, "bytes_to");
            if (d == 0) {
                r->bytes_to_known = bt != NULL;
            } else if ((bt != NULL) != r->bytes_to_known) {
                bad = "bytes_to on some devices only";
                break;
            }
            if (!bt) continue;
            if (!cJSON_IsArray(bt) || cJSON_GetArraySize(bt) != r->ndev) {
                bad = "a device's bytes_to is not one byte count per device";
                break;
            }
            for (int e = 0; e < r->ndev && !bad; e++) {
                const cJSON *x = cJSON_GetArrayItem(bt, e);
                if (!cJSON_IsNumber(x) || !whole(x->valuedouble, 9007199254740992.0))
                    bad = "a device's bytes_to holds something other than byte counts";
                else
                    D->bytes_to[e] = (int64_t)x->valuedouble;
            }
        }
    }
    /* beside: absent (not asked), {"devices": 1} (nothing beside), or the
     * latency with n > 1 devices busy at once. */
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "beside");
    if (!bad && b) {
        const cJSON *bl = cJSON_GetObjectItemCaseSensitive(b, "latency_ms");
        double bn;
        if (num(b, "devices", &bn) || !whole(bn, r->ndev) || bn < 1)
            bad = "beside without a device count from 1 to the devices'";
        else if (bn > 1 && (num(bl, "median", &r->beside.med_ms) || num(bl, "min", &r->beside.min_ms) ||
                            num(bl, "max", &r->beside.max_ms) || !(r->beside.min_ms > 0) ||
                            !(r->beside.min_ms <= r->beside.med_ms) || !(r->beside.med_ms <= r->beside.max_ms)))
            bad = "beside without its latency (0 < min <= median <= max)";
        else
            r->beside.n = (int)bn;
    }
    /* handoff: absent (not asked), "devices": [] (no board with two CPUs),
     * or two device names of the record in order, RT_HANDOFF_BYTES and both
     * times positive. */
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "handoff");
    if (!bad && h) {
        const cJSON *hd = cJSON_GetObjectItemCaseSensitive(h, "devices");
        int nh = cJSON_IsArray(hd) ? cJSON_GetArraySize(hd) : -1, ix[2] = {-1, -1};
        for (int k = 0; k < nh && k < 2; k++) {
            const char *nm = cJSON_GetStringValue(cJSON_GetArrayItem(hd, k));
            for (int d = 0; nm && d < r->ndev; d++)
                if (!strcmp(nm, r->dev[d].name)) ix[k] = d;
        }
        double by = 0;
        if (nh == 0)
            r->handoff.a = r->handoff.b = -1;
        else if (nh != 2 || ix[0] < 0 || !(ix[1] > ix[0]) || num(h, "bytes", &by) || by != RT_HANDOFF_BYTES ||
                 num(h, "hop_us", &r->handoff.hop_us) ||
                 num(h, "touch_us", &r->handoff.touch_us) || !(r->handoff.hop_us > 0) || !(r->handoff.touch_us > 0))
            bad = "handoff without two devices of the record, its bytes and positive times";
        else
            r->handoff.a = ix[0], r->handoff.b = ix[1];
    }
    cJSON_Delete(o);
    if (bad) {
        base_seterr(err, "unreadable record of dse exec: %s", bad);
        return -1;
    }
    return 0;
}
