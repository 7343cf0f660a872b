/* calibrate.c -- calib_check and calib_run: launch the measurement worker
 * and the memory runs through mpirun (runtime/launch.h), fit every
 * coefficient of the analytical model and build the coefficients file and
 * the fit report (docs/calibration.md describes each fit).
 *
 * Fits (all least squares through calib_fit_line, relative weights):
 *   compute   per layer of a calibrated network and device kind:
 *             time = overhead + work / (freq * cores * per_cycle) over its
 *             channel shares; one share (layers that are never split):
 *             per_cycle of the kind, overhead = the rest of the time.
 *             Per (class, kind) the same line over every layer and share
 *             of the calibrated and probe networks: the fallback.
 *   bands     per row- (column-) splittable layer: each band's time over
 *             its share of the whole layer's (coeffs_band: rates.band,
 *             rates.cband), kept where one differs
 *   corun     per layer: its time beside the same layer on another device
 *             of its board over its time alone (coeffs_rates.corun), kept
 *             where over 1.05 and the layer takes at least 20 us
 *   concat    time = overhead + bytes / copy_bandwidth
 *   links     one-way time = latency + bytes / bandwidth (the rate from the
 *             large sizes: calib_fit_link), per link class,
 *             and per device pair where the platform's pairs of a class differ;
 *             send overhead = median cost of issuing an MPI_Isend;
 *             the pull rate (calib_fit_rate over the receives that
 *             waited in a traced run of each network split in halves
 *             between the pair, fit_pull_runs; where that gives no fit,
 *             over the times of exchanges as a split mapping's); a late
 *             receiver's pickup (median beyond bytes / the exchanges' rate)
 *   devices   per CPU device: compute_scale = its whole passes' measured
 *             time over the model's compute time of them (per_device)
 *   memory    peak RSS = coefficient * (weights + peak live activations of
 *             the model) + bias, per device kind, over runs that put one
 *             layer (the largest Conv, the largest FC, the largest ReLU) on
 *             its own device and the rest on the source device, plus each
 *             network on one device (thesis 4.3.3)
 *   energy    idle and busy power from the worker's sensor readings, else
 *             the platform's declared figures, marked "declared".
 *
 * Invariant: on any failure nothing is left in the caller's file system
 * (the work folder is removed unless keep_dir was given) and the result
 * holds nothing.
 */
#include "calib.h"
#include "runtime.h"
#include "jsonutil.h"
#include "mapping.h"
#include "plan.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- checks ---- */

/* Is `board` the first word of a line of the hostfile text? */
static int hostfile_lists(const char *text, const char *board)
{
    size_t bl = strlen(board);
    for (const char *p = text; p && *p;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!strncmp(p, board, bl) && (p[bl] == 0 || p[bl] == ' ' || p[bl] == '\t' ||
                                       p[bl] == '\n' || p[bl] == '\r'))
            return 1;
        p = strchr(p, '\n');
        if (p) p++;
    }
    return 0;
}

int calib_check(const calib_options *o, char *err)
{
    if (o->nnetworks < 1 || o->nnetworks > CALIB_MAX_NETS) {
        base_seterr(err, "give 1 to %d networks to calibrate on (--network)", CALIB_MAX_NETS);
        return 2;
    }
    platform *pl = platform_open(o->platform, err);
    if (!pl) return 2;
    char *hosts = NULL;
    int rc = 0;
    if (o->hostfile && !(hosts = ju_read_file(o->hostfile, err))) rc = 2;
    for (int d = 0; !rc && d < pl->ndev; d++) {
        const plat_device *D = &pl->dev[d];
        if (D->kind == PLAT_GPU) {
            base_seterr(err, "%s: device %s is a GPU: the runtime has no GPU kernels, so "
                     "it cannot be calibrated here (calibrate a platform file of its CPU devices)",
                     o->platform, D->name);
            rc = 2;
        } else if (hosts && !rt_board_is_here(D->board) && !hostfile_lists(hosts, D->board)) {
            base_seterr(err, "%s: board \"%s\" of device %s is not listed", o->hostfile,
                     D->board, D->name);
            rc = 2;
        }
    }
    /* Coefficients are keyed by network name ("network/layer"): two
     * networks of one name would share their layers' entries. */
    net *opened[CALIB_MAX_NETS] = {0};
    for (int i = 0; !rc && i < o->nnetworks && i < CALIB_MAX_NETS; i++) {
        if (!(opened[i] = net_open(o->networks[i], err))) rc = 2;
        for (int j = 0; !rc && j < i; j++)
            if (!strcmp(opened[i]->name, opened[j]->name)) {
                if (!strcmp(o->networks[i], o->networks[j]))
                    base_seterr(err, "network %s given twice", o->networks[i]);
                else
                    base_seterr(err, "networks %s and %s are both named %s: calibration keys its "
                                     "coefficients by network name (rename one's graph)",
                                o->networks[j], o->networks[i], opened[i]->name);
                rc = 2;
            }
    }
    for (int i = 0; i < CALIB_MAX_NETS; i++) net_free(opened[i]);
    int made;
    if (!rc && o->keep_dir && base_out_dir(o->keep_dir, &made, err)) rc = 2; /* --keep unusable */
    free(hosts);
    platform_free(pl);
    return rc;
}

/* ---- the run's state ---- */

typedef struct {
    int kind;
    const char *network; /* owned by the raw JSON */
    const char *layer;
    int probe, cls, share;
    double work, t;
} rec;

typedef struct {
    const calib_options *o;
    platform *pl;
    net *nets[CALIB_MAX_NETS];
    char dir[512];
    int made_dir;
    char seqfile[600]; /* rank r -> device r's board, or "" (all boards here, or --hostfile) */
    char remote[256];  /* the boards other than this machine, for messages */
    cJSON *raw;
    cost_coeffs *c;
    cJSON *report, *fits;
    calib_row *rows;
    int nrows, caprows;
    int nlayer_fits, nlayer_flagged;
    int nband_layers[2], nband_tables[2]; /* [0] rows, [1] columns */
    int ncorun_layers, ncorun_factors;
    double corun_max;
    char corun_layer[160];
    char *err;
} run;

static void progress(run *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(run *R, const char *fmt, ...)
{
    if (!R->o->progress) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    R->o->progress(R->o->ctx, line);
}

static int add_row(run *R, const char *what, const char *param, coeffs_value v)
{
    if (R->nrows == R->caprows) {
        int nc = R->caprows ? 2 * R->caprows : 32;
        calib_row *nr = realloc(R->rows, (size_t)nc * sizeof *nr);
        if (!nr) return -1;
        R->rows = nr;
        R->caprows = nc;
    }
    calib_row *w = &R->rows[R->nrows++];
    snprintf(w->what, sizeof w->what, "%s", what);
    snprintf(w->param, sizeof w->param, "%s", param);
    w->value = v.value;
    w->source = v.source;
    w->r2 = v.source == COEFFS_FITTED ? v.r2 : NAN;
    w->rmse = v.source == COEFFS_FITTED ? v.rmse : NAN;
    w->n = v.n;
    w->flagged = v.source == COEFFS_FITTED && v.r2 < CALIB_R2_FLAG;
    return 0;
}

/* Record a fit in the report: parameters, quality and every point with
 * its prediction and residual (xs scaled by xscale, ys by yscale). */
static void report_fit(run *R, const char *what, const char *xname, const char *yname,
                       const calib_fit *f, const double *x, const double *y, int n,
                       const char *const *labels)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "what", what);
    cJSON_AddStringToObject(o, "x", xname);
    cJSON_AddStringToObject(o, "y", yname);
    cJSON_AddNumberToObject(o, "intercept", f->a);
    cJSON_AddNumberToObject(o, "slope", f->b);
    cJSON_AddNumberToObject(o, "r2", f->r2);
    cJSON_AddNumberToObject(o, "rmse", f->rmse);
    cJSON_AddNumberToObject(o, "max_rel_residual", f->max_rel);
    cJSON_AddNumberToObject(o, "n", f->n);
    cJSON_AddBoolToObject(o, "flagged", f->r2 < CALIB_R2_FLAG);
    cJSON *pts = cJSON_AddArrayToObject(o, "points");
    for (int i = 0; i < n; i++) {
        cJSON *p = cJSON_CreateObject();
        if (labels && labels[i]) cJSON_AddStringToObject(p, "label", labels[i]);
        cJSON_AddNumberToObject(p, "x", x[i]);
        cJSON_AddNumberToObject(p, "y", y[i]);
        double pr = f->a + f->b * x[i];
        cJSON_AddNumberToObject(p, "predicted", pr);
        cJSON_AddNumberToObject(p, "residual", y[i] - pr);
        cJSON_AddItemToArray(pts, p);
    }
    cJSON_AddItemToArray(R->fits, o);
}

/* A class's curve in the report: its points and its R^2 (the samples
 * are the line's fit, reported just before). */
static void report_curve(run *R, const char *what, const coeffs_curve *cv)
{
    cJSON *o = cJSON_CreateObject();
    char w[160];
    snprintf(w, sizeof w, "%.150s (curve)", what);
    cJSON_AddStringToObject(o, "what", w);
    cJSON_AddStringToObject(o, "x", "work (MACs or ops)");
    cJSON_AddStringToObject(o, "y", "microseconds");
    cJSON_AddNumberToObject(o, "r2", cv->r2);
    cJSON_AddNumberToObject(o, "n", cv->n);
    cJSON_AddBoolToObject(o, "flagged", cv->r2 < CALIB_R2_FLAG);
    cJSON_AddItemToObject(o, "work", cJSON_CreateDoubleArray(cv->work, cv->n));
    cJSON_AddItemToObject(o, "us", cJSON_CreateDoubleArray(cv->us, cv->n));
    cJSON_AddItemToArray(R->fits, o);
}

/* A time fit: intercept and slope must not be negative (an overhead or a
 * cost per unit below zero is noise); fall back to a line through the
 * origin, then to the slope `fallback_b` when given. */
static int fit_time(const double *x, const double *y, int n, double fallback_b, calib_fit *f,
                    char *err)
{
    int spread = 0;
    for (int i = 1; i < n; i++) spread |= x[i] != x[0];
    if (n >= 2 && spread) {
        if (calib_fit_line(x, y, n, 1, f, err)) return -1;
        if (f->a >= 0 && f->b > 0) return 0;
    }
    /* A negative overhead: the rate alone.  A time that does not grow with
     * the work (overhead-bound or noise): the given rate, if any. */
    if (!(n >= 2 && spread && f->b <= 0 && fallback_b > 0) && !(n < 2 && fallback_b > 0)) {
        if (calib_fit_origin(x, y, n, 1, f, err)) return -1;
        if (f->b > 0) return 0;
    }
    if (fallback_b > 0) {
        /* Slope known: the overhead is the median remainder. */
        double *r = malloc((size_t)n * sizeof *r);
        if (!r) return -1;
        for (int i = 0; i < n; i++) r[i] = y[i] - fallback_b * x[i];
        double a = base_median(r, n);
        free(r);
        f->b = fallback_b;
        f->a = a > 0 ? a : 0;
        double ss = 0, mr = 0;
        for (int i = 0; i < n; i++) {
            double e = y[i] - f->a - f->b * x[i];
            ss += e * e;
            if (fabs(e / y[i]) > mr) mr = fabs(e / y[i]);
        }
        f->rmse = sqrt(ss / n);
        f->max_rel = mr;
        f->n = n;
        f->r2 = NAN;
        return 0;
    }
    base_seterr(err, "fit: time does not grow with work over %d points", n);
    return -1;
}

/* ---- parsing the raw measurements ---- */

static int kind_of(const char *s) { return !strcmp(s, "gpu") ? PLAT_GPU : PLAT_CPU; }

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The coefficients record the CPU architecture of the rank that timed the
 * compute: the first CPU device's (the worker's "arch" section). */
static int set_arch(run *R)
{
    int d0 = 0;
    while (d0 < R->pl->ndev && R->pl->dev[d0].kind != PLAT_CPU) d0++;
    const cJSON *arr = cJSON_GetObjectItem(R->raw, "arch");
    for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next)
        if ((int)num(e, "rank") == d0 && str(e, "arch")[0])
            return coeffs_set_arch(R->c, str(e, "arch"));
    return 0;
}

static int load_recs(run *R, rec **out)
{
    const cJSON *arr = cJSON_GetObjectItem(R->raw, "compute");
    int n = cJSON_GetArraySize(arr), k = 0;
    rec *r = calloc((size_t)n + 1, sizeof *r);
    if (!r) return -1;
    for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next) {
        rec *x = &r[k];
        x->kind = kind_of(str(e, "kind"));
        x->network = str(e, "network");
        x->layer = str(e, "layer");
        x->probe = cJSON_IsTrue(cJSON_GetObjectItem(e, "probe"));
        if (cost_class_parse(str(e, "class"), &x->cls)) continue;
        x->share = (int)num(e, "share");
        x->work = num(e, "work");
        x->t = num(e, "seconds");
        if (!(x->work > 0) || !(x->t > 0)) continue; /* nothing measurable */
        k++;
    }
    *out = r;
    return k;
}

/* Representative device of a kind: the first (the worker timed there). */
static int rep_of(const platform *pl, int kind)
{
    for (int d = 0; d < pl->ndev; d++)
        if ((int)pl->dev[d].kind == kind) return d;
    return -1;
}

/* ---- compute fits ---- */

/* How many different values x[0..n) holds. */
static int distinct(const double *x, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = x[j] == x[i];
        d += !seen;
    }
    return d;
}

static int fit_compute(run *R)
{
    rec *r = NULL;
    int nr = load_recs(R, &r), rc = -1;
    double *x = malloc(((size_t)nr + 1) * sizeof *x), *y = malloc(((size_t)nr + 1) * sizeof *y);
    const char **lab = malloc(((size_t)nr + 1) * sizeof *lab);
    char what[160], labbuf[64];
    if (nr < 0 || !x || !y || !lab) {
        base_seterr(R->err, "out of memory fitting the compute timings");
        goto out;
    }
    if (nr == 0) {
        base_seterr(R->err, "the worker returned no compute timings");
        goto out;
    }
    for (int k = 0; k < 2; k++) {
        int rep = rep_of(R->pl, k), any = 0;
        for (int i = 0; i < nr; i++) any |= r[i].kind == k;
        if (!any || rep < 0) continue;
        double fc = R->pl->dev[rep].freq_mhz * 1e6 * (R->pl->dev[rep].cores > 0 ? R->pl->dev[rep].cores : 1);
        coeffs_device *D = coeffs_dev(R->c, (plat_kind)k);
        const char *kn = plat_kind_name((plat_kind)k);
        double cls_b[COST_NCLASS];
        /* Per class: every layer and share, calibrated and probe networks. */
        for (int cls = 0; cls < COST_NCLASS; cls++) {
            int n = 0;
            cls_b[cls] = 0;
            for (int i = 0; i < nr; i++)
                if (r[i].kind == k && r[i].cls == cls) {
                    x[n] = r[i].work;
                    y[n] = r[i].t;
                    lab[n++] = r[i].layer;
                }
            if (!n) continue;
            calib_fit f;
            /* A fixed cost per step needs three work values at least (layers
             * or channel shares of one):
             * through two a line fits exactly, and its intercept, however
             * large, would be charged to every layer of the class (Sigmoid
             * in a --quick calibration: 663 us from its two probe layers,
             * on each of efficientnet_b0's 33 sigmoids, 32 of them on 1x1
             * maps).  Fewer: the rate alone, through the origin. */
            int nx = distinct(x, n);
            int bad = nx >= CALIB_CLASS_MIN_SIZES ? fit_time(x, y, n, 0, &f, R->err)
                                                   : calib_fit_origin(x, y, n, 1, &f, R->err);
            if (bad || !(f.b > 0)) {
                snprintf(what, sizeof what, "%s", bad ? R->err : "no positive rate");
                base_seterr(R->err, "%s on %s: %s", cost_class_name(cls), kn, what);
                goto out;
            }
            cls_b[cls] = f.b;
            coeffs_rates *cr = &D->cls[cls];
            cr->per_cycle = coeffs_fitted(1.0 / (f.b * fc), f.r2, f.rmse * 1e6, f.n);
            cr->overhead_us = coeffs_fitted(f.a * 1e6, f.r2, f.rmse * 1e6, f.n);
            snprintf(what, sizeof what, "%s on %s", cost_class_name(cls), kn);
            report_fit(R, what, "work (MACs or ops)", "seconds", &f, x, y, n, lab);
            if (add_row(R, what, "per_cycle", cr->per_cycle) ||
                add_row(R, what, "overhead_us", cr->overhead_us))
                goto oom;
            /* The curve the model prices other networks' layers of the
             * class by (the line cannot span their sizes: coeffs_curve). */
            coeffs_curve *cv = &D->curve[cls];
            if (calib_fit_curve(x, y, n, cv, R->err)) {
                snprintf(labbuf, sizeof labbuf, "%.60s", R->err);
                base_seterr(R->err, "%s on %s: curve: %s", cost_class_name(cls), kn, labbuf);
                goto out;
            }
            if (cv->n) {
                report_curve(R, what, cv);
                if (add_row(R, what, "curve_points", coeffs_fitted(cv->n, cv->r2, NAN, n)))
                    goto oom;
            }
        }
        /* Per layer of the calibrated networks. */
        for (int i = 0; i < nr; i++) {
            if (r[i].kind != k || r[i].probe || !r[i].layer[0]) continue;
            int n = 0;
            const char *net = r[i].network, *layer = r[i].layer;
            for (int j = i; j < nr; j++)
                if (r[j].kind == k && !r[j].probe && r[j].layer[0] && !strcmp(r[j].network, net) &&
                    !strcmp(r[j].layer, layer)) {
                    x[n] = r[j].work;
                    y[n] = r[j].t;
                    lab[n] = NULL;
                    n++;
                    if (j != i) r[j].layer = ""; /* consumed */
                }
            coeffs_rates *lr = coeffs_layer_rates(R->c, (plat_kind)k, net, layer);
            if (!lr) goto oom;
            double b = cls_b[r[i].cls];
            calib_fit f;
            snprintf(what, sizeof what, "%s/%s on %s", net, layer, kn);
            if (n >= 2) {
                if (fit_time(x, y, n, b, &f, R->err)) {
                    snprintf(labbuf, sizeof labbuf, "%.60s", R->err);
                    base_seterr(R->err, "%s: %s", what, labbuf);
                    goto out;
                }
                double r2 = isfinite(f.r2) ? f.r2 : 0;
                lr->per_cycle = coeffs_fitted(1.0 / (f.b * fc), r2, f.rmse * 1e6, f.n);
                lr->overhead_us = coeffs_fitted(f.a * 1e6, r2, f.rmse * 1e6, f.n);
                R->nlayer_fits++;
                if (r2 < CALIB_R2_FLAG) {
                    R->nlayer_flagged++;
                    if (add_row(R, what, "per_cycle", lr->per_cycle)) goto oom;
                }
                report_fit(R, what, "work (MACs or ops)", "seconds", &f, x, y, n, NULL);
            } else {
                /* Never split: only its whole time matters.  The kind's rate
                 * for the work, the rest is this layer's fixed cost. */
                double a = y[0] - b * x[0];
                if (!(b > 0) || a < 0) {
                    a = 0;
                    b = y[0] / x[0];
                }
                lr->per_cycle = coeffs_given(1.0 / (b * fc), COEFFS_MEASURED);
                lr->overhead_us = coeffs_given(a * 1e6, COEFFS_MEASURED);
            }
        }
    }
    rc = 0;
    goto out;
oom:
    base_seterr(R->err, "out of memory fitting the compute timings");
out:
    free(r);
    free(x);
    free(y);
    free(lab);
    return rc;
}

/* ---- bands of rows and of columns ---- */

/* The worker's band of rows [h0, h0+rows) of a layer of height rows (a
 * record with "axis": "columns": columns [w0, w0+columns) of a layer of
 * width columns) took `seconds`; the same layer whole (share 1, same
 * rounds) took the compute record's.  Their ratio to the band's share of
 * the whole is what the model multiplies a band's share by (coeffs_band:
 * rates.band for rows, rates.cband for columns); a layer whose every band
 * along an axis costs its share within CALIB_BAND_SAME keeps no table for
 * it (the model's default is that share). */
#define CALIB_BAND_SAME 0.05

/* A bands record's axis: 1 columns, 0 rows (also a raw file of a dse that
 * timed rows only and wrote no "axis"). */
static int band_axis_of(const cJSON *e)
{
    return !strcmp(str(e, "axis"), CALIB_BAND_UNITS(1));
}

static int fit_bands(run *R)
{
    const cJSON *bands = cJSON_GetObjectItem(R->raw, "bands");
    const cJSON *comp = cJSON_GetObjectItem(R->raw, "compute");
    int nb = cJSON_GetArraySize(bands), nlayers[2] = {0, 0}, ntables[2] = {0, 0};
    unsigned char *done = calloc((size_t)nb + 1, 1);
    if (!done) {
        base_seterr(R->err, "out of memory fitting the band timings");
        return -1;
    }
    int i = 0;
    for (const cJSON *b = bands ? bands->child : NULL; b; b = b->next, i++) {
        if (done[i]) continue;
        const char *kind = str(b, "kind"), *net = str(b, "network"), *layer = str(b, "layer");
        int ax = band_axis_of(b);
        double xv = num(b, CALIB_BAND_EXTENT(ax));
        int X = isfinite(xv) && xv >= 0 && xv < 1e9 ? (int)xv : 0; /* 0: every point refused */
        double whole = 0;
        for (const cJSON *c = comp ? comp->child : NULL; c && !(whole > 0); c = c->next)
            if ((int)num(c, "share") == 1 && !cJSON_IsTrue(cJSON_GetObjectItem(c, "probe")) &&
                !strcmp(str(c, "kind"), kind) && !strcmp(str(c, "network"), net) &&
                !strcmp(str(c, "layer"), layer))
                whole = num(c, "seconds");
        /* This layer's points along ax, units falling (the worker's order:
         * 1/2, 1/4, 1/8). */
        coeffs_band t = {0, X, {0}, {0}};
        int differs = 0, j = i;
        for (const cJSON *e = b; e; e = e->next, j++) {
            if (done[j] || band_axis_of(e) != ax || strcmp(str(e, "kind"), kind) ||
                strcmp(str(e, "network"), net) || strcmp(str(e, "layer"), layer))
                continue;
            done[j] = 1;
            double nv = num(e, CALIB_BAND_UNITS(ax));
            int nx = isfinite(nv) && nv >= 0 && nv < 1e9 ? (int)nv : 0;
            double sec = num(e, "seconds");
            if (!(whole > 0) || !(sec > 0) || nx < 1 || nx >= X || t.n == COEFFS_BAND_MAX ||
                (t.n && nx >= t.rows[t.n - 1]))
                continue;
            t.rows[t.n] = nx;
            t.ratio[t.n] = sec / (whole * nx / X);
            differs |= fabs(t.ratio[t.n] - 1) > CALIB_BAND_SAME;
            t.n++;
        }
        if (!t.n) continue;
        nlayers[ax]++;
        if (!differs) continue;
        coeffs_rates *lr = coeffs_layer_rates(R->c, (plat_kind)kind_of(kind), net, layer);
        if (!lr) {
            free(done);
            base_seterr(R->err, "out of memory fitting the band timings");
            return -1;
        }
        if (ax)
            lr->cband = t;
        else
            lr->band = t;
        ntables[ax]++;
    }
    free(done);
    for (int a = 0; a < 2; a++) R->nband_layers[a] = nlayers[a], R->nband_tables[a] = ntables[a];
    return 0;
}

/* Corun factors (docs/calibration.md, "Devices that share a board's
 * memory"): each layer's median time beside another device of its board
 * running the same layer over its median alone (measured in turn by the
 * worker, phase 1c).  Layers under CALIB_CORUN_MIN_S alone, or slowed by
 * at most CALIB_CORUN_SAME, keep none (the model then charges nothing). */
#define CALIB_CORUN_SAME 0.05
#define CALIB_CORUN_MIN_S 20e-6

static int fit_corun(run *R)
{
    const cJSON *co = cJSON_GetObjectItem(R->raw, "corun");
    R->corun_max = 1;
    R->corun_layer[0] = 0;
    for (const cJSON *e = co ? co->child : NULL; e; e = e->next) {
        double alone = num(e, "alone"), beside = num(e, "seconds");
        if (!(alone > 0) || !(beside > 0)) continue;
        R->ncorun_layers++;
        double f = beside / alone;
        if (alone < CALIB_CORUN_MIN_S || f <= 1 + CALIB_CORUN_SAME) continue;
        if (f > COEFFS_CORUN_MAX) f = COEFFS_CORUN_MAX;
        const char *net = str(e, "network"), *layer = str(e, "layer");
        coeffs_rates *lr = coeffs_layer_rates(R->c, (plat_kind)kind_of(str(e, "kind")), net, layer);
        if (!lr) {
            base_seterr(R->err, "out of memory fitting the shared-memory timings");
            return -1;
        }
        lr->corun = coeffs_given(f, COEFFS_MEASURED);
        lr->corun.n = (int)num(e, "samples");
        R->ncorun_factors++;
        if (f > R->corun_max) {
            R->corun_max = f;
            snprintf(R->corun_layer, sizeof R->corun_layer, "%.70s/%.80s", net, layer);
        }
    }
    return 0;
}

/* ---- how much a step's time varies ---- */

/* Per device kind, the step spread (coeffs_device.step_spread): the median
 * over the kind's whole-layer timings of at least STEP_SPREAD_MIN_S of
 * each one's spread from pass to pass (the worker's "spread", interquartile
 * range / 1.349 / median), over every timing if none is that long (below
 * it the timer's resolution and the fixed cost decide the spread, and the
 * model's use of it, the expected later of two clocks, hardly sees short
 * steps), at most COEFFS_SPREAD_MAX.  Left out when no timing has one (a
 * raw file of an older worker). */
#define STEP_SPREAD_MIN_S 100e-6

static int fit_spread(run *R)
{
    const cJSON *comp = cJSON_GetObjectItem(R->raw, "compute");
    int n = cJSON_GetArraySize(comp);
    double *y = malloc(((size_t)n + 1) * sizeof *y);
    if (!y) return -1;
    for (int k = 0; k < 2; k++) {
        int m = 0;
        for (int all = 0; all < 2 && !m; all++)
            for (const cJSON *e = comp ? comp->child : NULL; e; e = e->next) {
                double sp = num(e, "spread"), t = num(e, "seconds");
                if (kind_of(str(e, "kind")) == k && (int)num(e, "share") == 1 && sp >= 0 &&
                    t > 0 && (all || t >= STEP_SPREAD_MIN_S))
                    y[m++] = sp;
            }
        if (!m) continue;
        coeffs_device *D = coeffs_dev(R->c, (plat_kind)k);
        double med = base_median(y, m);
        /* A median over 1 says the machine was busy, not that steps vary
         * that much: the most the format takes. */
        D->step_spread = coeffs_given(med < COEFFS_SPREAD_MAX ? med : COEFFS_SPREAD_MAX, COEFFS_MEASURED);
        D->step_spread.n = m;
        char what[64];
        snprintf(what, sizeof what, "step spread on %s", plat_kind_name((plat_kind)k));
        if (add_row(R, what, "step_spread", D->step_spread)) {
            free(y);
            return -1;
        }
    }
    free(y);
    return 0;
}

/* ---- copies and links ---- */

/* Is (a, b), a < b, the first pair of its link class (which then stands
 * for the class; a later pair's coefficients are per pair)? */
static int class_first(const platform *pl, int a, int b)
{
    int nd = pl->ndev;
    link_class c = pl->link_cls[a * nd + b];
    for (int i = 0; i < nd; i++)
        for (int j = i + 1; j < nd; j++)
            if (i * nd + j < a * nd + b && pl->link_cls[i * nd + j] == c) return 0;
    return 1;
}

static int fit_copies_links(run *R)
{
    int rc = -1;
    char what[160];
    const cJSON *copies = cJSON_GetObjectItem(R->raw, "copy"), *links = cJSON_GetObjectItem(R->raw, "links");
    int nmax = cJSON_GetArraySize(copies) + cJSON_GetArraySize(links) + 1;
    double *x = malloc((size_t)nmax * sizeof *x), *y = malloc((size_t)nmax * sizeof *y);
    if (!x || !y) goto out;
    for (int k = 0; k < 2; k++) {
        int n = 0;
        for (const cJSON *e = copies ? copies->child : NULL; e; e = e->next)
            if (kind_of(str(e, "kind")) == k && num(e, "seconds") > 0) {
                x[n] = num(e, "bytes");
                y[n++] = num(e, "seconds");
            }
        if (!n) continue;
        calib_fit f;
        snprintf(what, sizeof what, "concat copy on %s", plat_kind_name((plat_kind)k));
        if (fit_time(x, y, n, 0, &f, R->err)) goto out;
        coeffs_device *D = coeffs_dev(R->c, (plat_kind)k);
        D->copy_bandwidth_mbs = coeffs_fitted(1.0 / (f.b * 1e6), f.r2, f.rmse * 1e6, f.n);
        D->overhead_us = coeffs_fitted(f.a * 1e6, f.r2, f.rmse * 1e6, f.n);
        report_fit(R, what, "bytes", "seconds", &f, x, y, n, NULL);
        if (add_row(R, what, "copy_bandwidth_mbs", D->copy_bandwidth_mbs) ||
            add_row(R, what, "overhead_us", D->overhead_us))
            goto out;
    }
    /* Links: one fit per measured pair (calib_link_rep); the first pair of
     * a class gives the class's coefficients, any other the per-pair
     * coefficients of every pair it stands for. */
    int nd = R->pl->ndev;
    for (int a = 0; a < nd; a++)
        for (int b = a + 1; b < nd; b++) {
            int n = 0, nclean = 0;
            double maxb = 0, maxclean = 0;
            for (const cJSON *e = links ? links->child : NULL; e; e = e->next)
                if ((int)num(e, "from") == a && (int)num(e, "to") == b) {
                    int cl = cJSON_IsTrue(cJSON_GetObjectItem(e, "clean"));
                    nclean += cl;
                    maxb = fmax(maxb, num(e, "bytes"));
                    if (cl) maxclean = fmax(maxclean, num(e, "bytes"));
                }
            /* Sizes no round trip of which escaped preemption (a loaded
             * machine) are left out while two clean sizes remain and the
             * largest size is among them: on boards whose CPU is a quota
             * (emulated boards) every long round trip is throttled, and the
             * small sizes alone fit inside a shaper's token bucket, so they
             * would show the link's burst rate, not its rate. */
            int drop = nclean >= 2 && maxclean >= maxb;
            for (const cJSON *e = links ? links->child : NULL; e; e = e->next)
                if ((int)num(e, "from") == a && (int)num(e, "to") == b && num(e, "seconds") > 0 &&
                    (!drop || cJSON_IsTrue(cJSON_GetObjectItem(e, "clean")))) {
                    x[n] = num(e, "bytes");
                    y[n++] = num(e, "seconds");
                }
            if (!n) continue;
            link_class c = R->pl->link_cls[a * nd + b];
            int first = class_first(R->pl, a, b);
            calib_fit f;
            if (first) snprintf(what, sizeof what, "link %s", link_class_name(c));
            else snprintf(what, sizeof what, "link %.60s-%.60s", R->pl->dev[a].name, R->pl->dev[b].name);
            /* The large sizes decide the rate (calib_fit_link); data too
             * noisy for that (time not growing with size) get the relative
             * fit of every other time. */
            if (calib_fit_link(x, y, n, &f, R->err)) {
                R->err[0] = 0;
                if (fit_time(x, y, n, 0, &f, R->err)) goto out;
            }
            coeffs_link L;
            L.latency_us = coeffs_fitted(f.a * 1e6, f.r2, f.rmse * 1e6, f.n);
            L.bandwidth_mbs = coeffs_fitted(1.0 / (f.b * 1e6), f.r2, f.rmse * 1e6, f.n);
            report_fit(R, what, "bytes", "one-way seconds", &f, x, y, n, NULL);
            /* The pull rate: the link fit over the exchanges' times (the
             * worker's exchange_pull: messages fresh on their senders
             * pulled into cold buffers, both ways at once, as a split
             * mapping's are; pull_bandwidth_mbs, left out when the time
             * does not grow with size).  A late receiver's cost beyond
             * bytes / that rate (the worker's late_pickup, one way): the
             * median over the sizes whose bytes at that rate take at most
             * half their late time (where the fixed cost shows: a one-way
             * pull of a large message is faster than an exchange's, and
             * would leave nothing), all sizes if none does; a median, so
             * that one size's protocol switch or a slow sample does not
             * decide it. */
            int nl = 0;
            for (const cJSON *e = links ? links->child : NULL; e; e = e->next)
                if ((int)num(e, "from") == a && (int)num(e, "to") == b && num(e, "exchange_seconds") > 0) {
                    x[nl] = num(e, "bytes");
                    y[nl++] = num(e, "exchange_seconds");
                }
            calib_fit pf;
            int pulled = nl >= 2 && !calib_fit_link(x, y, nl, &pf, R->err);
            R->err[0] = 0;
            char pw[200];
            snprintf(pw, sizeof pw, "%s pull (exchanges)", what);
            if (pulled) report_fit(R, pw, "bytes", "exchange seconds", &pf, x, y, nl, NULL);
            double pb = pulled ? pf.b : f.b;
            for (int all = 0; all < 2; all++) {
                nl = 0;
                for (const cJSON *e = links ? links->child : NULL; e; e = e->next) {
                    double late = num(e, "late_seconds"), moved = num(e, "bytes") * pb;
                    if ((int)num(e, "from") == a && (int)num(e, "to") == b && late > 0 &&
                        (all || moved <= 0.5 * late))
                        y[nl++] = fmax(0.0, late - moved);
                }
                if (nl) break;
            }
            L.pickup_us = nl ? coeffs_given(base_median(y, nl) * 1e6, COEFFS_MEASURED) : (coeffs_value){0};
            L.pickup_us.n = nl;
            L.pull_bandwidth_mbs = pulled ? coeffs_fitted(1.0 / (pf.b * 1e6), pf.r2, pf.rmse * 1e6, pf.n)
                                          : (coeffs_value){0};
            if (add_row(R, what, "latency_us", L.latency_us) ||
                add_row(R, what, "bandwidth_mbs", L.bandwidth_mbs) ||
                (nl && add_row(R, what, "pickup_us", L.pickup_us)) ||
                (pulled && add_row(R, pw, "pull_bandwidth_mbs", L.pull_bandwidth_mbs)))
                goto out;
            if (first) {
                R->c->link[c] = L;
                continue;
            }
            for (int i = 0; i < nd; i++)
                for (int j = i + 1; j < nd; j++)
                    if (calib_link_rep(R->pl, i, j) == a * nd + b) {
                        coeffs_link *P = coeffs_pair_link(R->c, R->pl->dev[i].name, R->pl->dev[j].name);
                        if (!P) goto out;
                        *P = L;
                    }
        }
    /* Cost of issuing a send, per kind of the sending device. */
    for (int k = 0; k < 2; k++) {
        int n = 0;
        for (const cJSON *e = links ? links->child : NULL; e; e = e->next) {
            int from = (int)num(e, "from");
            if (from >= 0 && from < R->pl->ndev && (int)R->pl->dev[from].kind == k &&
                num(e, "isend_seconds") >= 0)
                x[n++] = num(e, "isend_seconds");
        }
        if (!n) continue;
        coeffs_device *D = coeffs_dev(R->c, (plat_kind)k);
        D->send_overhead_us = coeffs_given(base_median(x, n) * 1e6, COEFFS_MEASURED);
        D->send_overhead_us.n = n;
        snprintf(what, sizeof what, "send on %s", plat_kind_name((plat_kind)k));
        if (add_row(R, what, "send_overhead_us", D->send_overhead_us)) goto out;
    }
    rc = 0;
out:
    if (rc && !R->err[0]) base_seterr(R->err, "out of memory fitting copies and links");
    free(x);
    free(y);
    return rc;
}

/* Per-device compute factors: the worker timed whole passes of the
 * calibrated networks on every CPU device in alternating rounds
 * (device_compute).  A device's factor is its measured time over the
 * model's compute time of the same passes on it (which already holds the
 * platform's clock and cores: a board under a CPU quota is declared
 * slower), the median over the rounds.  Written for every CPU device. */
static int fit_device_scales(run *R)
{
    const cJSON *dc = cJSON_GetObjectItem(R->raw, "device_compute");
    int nd = R->pl->ndev, rc = -1;
    if (!dc || !dc->child || rep_of(R->pl, PLAT_CPU) < 0) return 0;
    double *pred = calloc((size_t)nd, sizeof *pred), *ratio = calloc(8, sizeof *ratio);
    cost_device *pd = calloc((size_t)nd, sizeof *pd);
    mapping *m = NULL;
    plan *p = plan_new();
    cost_model *cm = NULL;
    if (!pred || !ratio || !pd || !p) goto out;
    /* The model's compute time of every calibrated network on each device. */
    for (int i = 0; i < R->o->nnetworks; i++) {
        const net *n = R->nets[i];
        char warn[BASE_ERRLEN];
        cost_free(cm);
        mapping_free(m);
        if (!(cm = cost_new(n, R->pl, R->c, warn, R->err)) || !(m = mapping_new(n->n, nd))) goto out;
        for (int d = 0; d < nd; d++) {
            if (R->pl->dev[d].kind != PLAT_CPU) continue;
            cost_result cr;
            mapping_set_single(m, n, d);
            if (plan_build(p, n, m, d, R->err) || cost_eval(cm, p, &cr, pd)) goto out;
            pred[d] += pd[d].compute_s;
        }
    }
    /* Every CPU device's factor, the first one's too: its whole passes over
     * what the model makes of them.  The per-layer coefficients come from
     * each layer's CPU time on the first device; a whole inference pays
     * what those timings miss (on a board under a CPU quota, its waits),
     * on every device. */
    for (int d = 0; d < nd; d++) {
        if (R->pl->dev[d].kind != PLAT_CPU || !(pred[d] > 0)) continue;
        int nr = 0;
        for (int round = 0; round < 8; round++) {
            double a = 0;
            for (const cJSON *e = dc->child; e; e = e->next)
                if ((int)num(e, "round") == round && (int)num(e, "rank") == d) a += num(e, "seconds");
            if (a > 0) ratio[nr++] = a / pred[d];
        }
        if (!nr) continue;
        coeffs_devfactor *f = coeffs_device_factor(R->c, R->pl->dev[d].name);
        if (!f) goto out;
        f->compute_scale = coeffs_given(base_median(ratio, nr), COEFFS_MEASURED);
        f->compute_scale.n = nr;
        char what[200];
        snprintf(what, sizeof what, "compute of %.100s", R->pl->dev[d].name);
        if (add_row(R, what, "compute_scale", f->compute_scale)) goto out;
    }
    rc = 0;
out:
    if (rc && !R->err[0]) base_seterr(R->err, "out of memory fitting per-device factors");
    cost_free(cm);
    mapping_free(m);
    plan_free(p);
    free(pred);
    free(ratio);
    free(pd);
    return rc;
}

/* ---- jobs ---- */

static int job_failed(run *R, int jrc, const char *what, const char *eline)
{
    if (jrc == RT_JOB_INTERRUPTED)
        base_seterr(R->err, "interrupted during %s", what);
    else if (jrc == RT_JOB_TIMEOUT)
        base_seterr(R->err, "%s timed out after %g s (--timeout)", what, R->o->timeout_s > 0 ? R->o->timeout_s : 3600.0);
    else if (jrc == RT_JOB_NOSTART || jrc == 127)
        base_seterr(R->err, "%s: cannot launch mpirun (install openmpi-bin): %.600s", what, eline);
    else if (jrc == 2 && (strstr(eline, "dse calib-worker:") || strstr(eline, "dse exec:")))
        base_seterr(R->err, "%s", strchr(eline, ':') + 2);
    else if (strstr(eline, "dse calib-worker:") || strstr(eline, "dse exec:"))
        base_seterr(R->err, "%s failed: %s", what, strchr(eline, ':') + 2);
    else
        base_seterr(R->err, "%s failed: a rank died (mpirun exit %d%s%.100s)%s%.200s", what,
                 jrc, R->remote[0] ? "; ranks on boards " : "", R->remote, eline[0] ? ": " : "",
                 eline);
    return jrc == 2 ? 2 : 1;
}

static int launch(run *R, const char *const *args, int nargs, const char *what, char **out)
{
    const char *av[96];
    char eline[BASE_ERRLEN - 64];
    if (nargs > 80) {
        base_seterr(R->err, "too many arguments");
        return 1;
    }
    rt_mpirun_argv(R->pl->ndev, R->o->hostfile, R->seqfile[0] ? R->seqfile : NULL, args, nargs, av);
    rt_mpirun_env();
    double to = R->o->timeout_s > 0 ? R->o->timeout_s : 3600.0;
    int jrc = rt_run_job(av, to, R->o->stop, "dse ", out, NULL, eline, sizeof eline);
    if (jrc == 0) return 0;
    free(*out);
    *out = NULL;
    return job_failed(R, jrc, what, eline);
}

static const char *dse_prog(const run *R) { return R->o->dse ? R->o->dse : rt_self_exe(); }

static int run_worker(run *R)
{
    const char *args[80];
    char reps[16], seed[32], raw[600];
    int k = 0;
    snprintf(reps, sizeof reps, "%d", R->o->reps > 0 ? R->o->reps : CALIB_REPS);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)R->o->seed);
    snprintf(raw, sizeof raw, "%s/raw.json", R->dir);
    args[k++] = dse_prog(R);
    args[k++] = "calib-worker";
    args[k++] = "--platform";
    args[k++] = R->o->platform;
    for (int i = 0; i < R->o->nnetworks; i++) {
        args[k++] = "--network";
        args[k++] = R->o->networks[i];
    }
    args[k++] = "--out";
    args[k++] = raw;
    args[k++] = "--reps";
    args[k++] = reps;
    args[k++] = "--seed";
    args[k++] = seed;
    if (R->o->quick) args[k++] = "--quick";
    progress(R, "timing layers, copies and links on %d ranks (mpirun)...", R->pl->ndev);
    char *out = NULL;
    int rc = launch(R, args, k, "the measurement worker", &out);
    free(out);
    if (rc) return rc;
    char *txt = ju_read_file(raw, R->err);
    if (!txt) return 1;
    R->raw = cJSON_Parse(txt);
    free(txt);
    if (!R->raw || strcmp(str(R->raw, "format"), "dse-calib-raw")) {
        base_seterr(R->err, "%.400s: unreadable worker output", raw);
        return 1;
    }
    return 0;
}

/* ---- memory ---- */

#define MEM_MIN_SPAN_MB 10.0

typedef struct {
    const char *what; /* layer name or "(whole network)" */
    int network;      /* index */
    int layer;        /* alone on dev_b, or -1: all on dev_a */
} mem_run;

/* The largest layer of a kind by weights (ReLU: by output size). */
static int largest(const net *n, net_kind k)
{
    int best = -1;
    int64_t bv = -1;
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        if (L->kind != k) continue;
        int64_t v = k == NET_RELU ? net_shape_numel(L->out) : L->weights;
        if (v > bv) {
            bv = v;
            best = i;
        }
    }
    return best;
}

static int fit_memory(run *R)
{
    const platform *pl = R->pl;
    int a = pl->source, b = -1, rc = 1;
    for (int d = 0; d < pl->ndev && b < 0; d++)
        if (d != a) b = d;
    mem_run runs[CALIB_MAX_NETS * 4];
    int nruns = 0;
    for (int i = 0; i < R->o->nnetworks; i++) {
        runs[nruns++] = (mem_run){"(whole network)", i, -1};
        if (b < 0) continue;
        static const net_kind kinds[] = {NET_CONV, NET_FC, NET_RELU};
        for (int j = 0; j < 3; j++) {
            int l = largest(R->nets[i], kinds[j]);
            if (l >= 0) runs[nruns++] = (mem_run){R->nets[i]->layers[l].name, i, l};
        }
    }
    /* Points: per device used, (model MB, measured MB). */
    int cap = nruns * 2 + 1, np[2] = {0, 0};
    double *x[2], *y[2];
    const char **lab[2];
    char (*labs)[160] = calloc((size_t)cap, sizeof *labs);
    int nl = 0;
    for (int k = 0; k < 2; k++) {
        x[k] = malloc((size_t)cap * sizeof(double));
        y[k] = malloc((size_t)cap * sizeof(double));
        lab[k] = malloc((size_t)cap * sizeof(char *));
    }
    cost_model *cm[CALIB_MAX_NETS] = {0};
    mapping *m = NULL;
    plan *p = plan_new();
    cost_device *pd = calloc((size_t)pl->ndev, sizeof *pd);
    cJSON *jr = cJSON_AddArrayToObject(R->report, "memory_runs");
    if (!labs || !x[0] || !x[1] || !y[0] || !y[1] || !lab[0] || !lab[1] || !p || !pd) {
        base_seterr(R->err, "out of memory for the memory runs");
        goto out;
    }
    for (int r = 0; r < nruns; r++) {
        const mem_run *M = &runs[r];
        const net *n = R->nets[M->network];
        char warn[BASE_ERRLEN], mpath[700], what[300];
        if (!cm[M->network] && !(cm[M->network] = cost_new(n, pl, R->c, warn, R->err))) goto out;
        mapping_free(m);
        if (!(m = mapping_new(n->n, pl->ndev))) goto oom;
        mapping_set_single(m, n, a);
        if (M->layer >= 0) m->slices[m->first[M->layer]].dev = b;
        snprintf(mpath, sizeof mpath, "%s/memory-%d.json", R->dir, r);
        if (mapping_save(m, n, pl, mpath, R->err)) goto out;
        cost_result cr;
        if (plan_build(p, n, m, pl->source, R->err)) goto out;
        if (cost_eval(cm[M->network], p, &cr, pd)) {
            base_seterr(R->err, "%s", cost_error(cm[M->network]));
            goto out;
        }
        if (M->layer >= 0)
            snprintf(what, sizeof what, "memory run %d/%d (%s: %s on %s, the rest on %s)", r + 1,
                     nruns, n->name, M->what, pl->dev[b].name, pl->dev[a].name);
        else
            snprintf(what, sizeof what, "memory run %d/%d (%s on %s)", r + 1, nruns, n->name,
                     pl->dev[a].name);
        progress(R, "%s...", what);
        rt_measure_opts mo = {dse_prog(R), R->o->networks[M->network], R->o->platform, mpath, -1,
                              pl, R->o->hostfile, R->seqfile[0] ? R->seqfile : NULL, R->remote,
                              2, 3, R->o->timeout_s, 1, NULL, 0, R->o->stop, 0, 0};
        rt_result rr;
        char me[BASE_ERRLEN];
        int jrc = rt_measure(&mo, &rr, me);
        if (jrc) {
            base_seterr(R->err, "%.300s failed: %.700s", what, me);
            rc = jrc;
            goto out;
        }
        for (int d = 0; d < pl->ndev; d++) {
            if (!pd[d].used) continue;
            int k = pl->dev[d].kind;
            double model = (pd[d].weights_bytes + pd[d].peak_act_bytes + pd[d].workspace_bytes) / 1e6;
            double rss = rr.dev[d].peak_rss_mb;
            if (!(rss > 0)) continue;
            snprintf(labs[nl], sizeof labs[nl], "%s %s on %s", n->name, M->layer >= 0 && d == b ? M->what : (M->layer >= 0 ? "(rest)" : "(whole)"), pl->dev[d].name);
            x[k][np[k]] = model;
            y[k][np[k]] = rss;
            lab[k][np[k]++] = labs[nl++];
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "network", n->name);
            cJSON_AddStringToObject(e, "alone", M->what);
            cJSON_AddStringToObject(e, "device", pl->dev[d].name);
            cJSON_AddNumberToObject(e, "weights_mb", pd[d].weights_bytes / 1e6);
            cJSON_AddNumberToObject(e, "peak_activations_mb", pd[d].peak_act_bytes / 1e6);
            cJSON_AddNumberToObject(e, "workspace_mb", pd[d].workspace_bytes / 1e6);
            cJSON_AddNumberToObject(e, "peak_rss_mb", rss);
            cJSON_AddItemToArray(jr, e);
        }
    }
    for (int k = 0; k < 2; k++) {
        if (!np[k]) continue;
        calib_fit f;
        char what[96];
        snprintf(what, sizeof what, "memory on %s", plat_kind_name((plat_kind)k));
        double lo = x[k][0], hi = x[k][0];
        for (int i = 1; i < np[k]; i++) {
            if (x[k][i] < lo) lo = x[k][i];
            if (x[k][i] > hi) hi = x[k][i];
        }
        coeffs_device *D = coeffs_dev(R->c, (plat_kind)k);
        int fitted = 0;
        /* A slope needs the runs' model bytes to span more than the noise
         * of the baseline (small networks do not). */
        if (np[k] >= 2 && hi - lo >= MEM_MIN_SPAN_MB) {
            if (calib_fit_line(x[k], y[k], np[k], 1, &f, R->err)) goto out;
            fitted = f.b > 0 && f.a >= 0;
        }
        if (fitted) {
            D->mem_coefficient = coeffs_fitted(f.b, f.r2, f.rmse, f.n);
            D->mem_bias_mb = coeffs_fitted(f.a, f.r2, f.rmse, f.n);
        } else {
            /* Bytes at face value; the baseline is the median remainder. */
            double *r = malloc((size_t)np[k] * sizeof *r);
            if (!r) goto oom;
            for (int i = 0; i < np[k]; i++) r[i] = y[k][i] - x[k][i];
            f = (calib_fit){base_median(r, np[k]), 1.0, NAN, 0, 0, np[k]};
            free(r);
            if (f.a < 0) f.a = 0;
            const char *note = coeffs_note(R->c, hi - lo < MEM_MIN_SPAN_MB
                                                     ? "the memory runs span too few bytes to fit a slope: 1 assumed"
                                                     : "the fitted slope or bias was negative: 1 assumed");
            if (!note) goto oom;
            D->mem_coefficient = coeffs_given(1.0, COEFFS_ASSUMPTION);
            D->mem_bias_mb = coeffs_given(f.a, COEFFS_MEASURED);
            D->mem_coefficient.note = D->mem_bias_mb.note = note;
            D->mem_bias_mb.n = np[k];
        }
        report_fit(R, what, "model MB (weights + peak live activations + workspace)", "peak RSS MB", &f, x[k],
                   y[k], np[k], lab[k]);
        if (add_row(R, what, "coefficient", D->mem_coefficient) ||
            add_row(R, what, "bias_mb", D->mem_bias_mb))
            goto oom;
    }
    rc = 0;
    goto out;
oom:
    base_seterr(R->err, "out of memory for the memory runs");
out:
    for (int i = 0; i < CALIB_MAX_NETS; i++) cost_free(cm[i]);
    mapping_free(m);
    plan_free(p);
    free(pd);
    free(labs);
    for (int k = 0; k < 2; k++) {
        free(x[k]);
        free(y[k]);
        free(lab[k]);
    }
    return rc;
}

/* ---- the pull rate a split run meets (traced) ---- */

/* A pull run: warm-up and timed inferences (the trace keeps one, the
 * median), launches of it per network, and the fewest waiting receives a
 * rate is fitted from. */
#define PULL_RUN_WARMUP 2
#define PULL_RUN_REPS 5
#define PULL_RUN_LAUNCHES 3
#define PULL_RUN_MIN 4

/* Receives of a traced run (dse exec --trace FILE) between devices a and b
 * that waited for their message (the receive began before the send did,
 * on the trace's common clock): bytes in x, the time from the send's
 * start to the receive's end in y (seconds).  Returns how many (at most
 * cap), -1 with err when the file is not such a trace. */
static int traced_waits(const char *path, int a, int b, double *x, double *y, int cap, char *err)
{
    size_t len;
    char *text = base_read_file(path, 1LL << 30, &len, err);
    if (!text) return -1;
    cJSON *t = cJSON_Parse(text);
    free(text);
    const cJSON *ev = t ? cJSON_GetObjectItem(t, "traceEvents") : NULL;
    if (!cJSON_IsArray(ev)) {
        cJSON_Delete(t);
        base_seterr(err, "%s: not a dse trace", path);
        return -1;
    }
    /* Messages are numbered across the Plan: a send's start by number. */
    int nev = cJSON_GetArraySize(ev), n = 0;
    double *sent = malloc(((size_t)nev + 1) * sizeof *sent);
    int *from = malloc(((size_t)nev + 1) * sizeof *from);
    if (!sent || !from) {
        free(sent);
        free(from);
        cJSON_Delete(t);
        base_seterr(err, "out of memory");
        return -1;
    }
    for (int i = 0; i <= nev; i++) sent[i] = NAN, from[i] = -1;
    for (int pass = 0; pass < 2; pass++)
        for (const cJSON *e = ev->child; e; e = e->next) {
            const cJSON *ar = cJSON_GetObjectItem(e, "args");
            const char *op = ar ? str(ar, "op") : "";
            int send = !strcmp(op, "send");
            if (!send && strcmp(op, "recv")) continue; /* compute, concat, metadata */
            /* Numbers checked before any conversion (a NaN to int is undefined). */
            double fm = num(ar, "msg"), fd = num(e, "tid"), fp = num(ar, "peer_index"),
                   ts = num(e, "ts") * 1e-6, dur = num(e, "dur") * 1e-6, by = num(ar, "bytes");
            if (!(fm >= 0 && fm <= nev) || !(fd >= 0 && fd < nev) || !(fp >= 0 && fp < nev) ||
                !isfinite(ts) || !isfinite(dur) || !isfinite(by))
                continue;
            int msg = (int)fm, dev = (int)fd, peer = (int)fp;
            if ((dev != a && dev != b) || (peer != a && peer != b) || dev == peer) continue;
            if (!pass && send) sent[msg] = ts, from[msg] = dev;
            if (pass && !send && from[msg] == peer && ts < sent[msg] && n < cap) {
                x[n] = by;
                y[n++] = ts + dur - sent[msg];
            }
        }
    free(sent);
    free(from);
    cJSON_Delete(t);
    return n;
}

/* The mapping of a pull run: every layer that can be cut by channels
 * halved between a and b (the first half on a), the others whole on a:
 * each layer's halves meet in an exchange, as a naive split's do. */
static void halves(mapping *m, const net *n, int a, int b)
{
    int k = 0;
    for (int i = 0; i < n->n; i++) {
        int c = n->layers[i].out.c;
        m->first[i] = k;
        m->cut[i] = MAP_CUT_CHANNELS;
        m->recompute[i] = 0;
        if (c >= 2 && mapping_cut_allowed(n, i, MAP_CUT_CHANNELS)) {
            m->slices[k++] = (map_slice){a, 0, c / 2};
            m->slices[k++] = (map_slice){b, c / 2, c - c / 2};
        } else
            m->slices[k++] = (map_slice){a, 0, c};
    }
    m->first[n->n] = k;
}

/* The pull rate of each pair of devices sharing a board that the links
 * were timed on (the first such pair stands for the class, others for
 * the pairs that differ from it):
 * every network run split in halves between the two (halves), traced,
 * and the receives that waited (traced_waits) fitted as latency + bytes /
 * rate by calib_fit_rate (a median of slopes: a few receives a poll or a
 * preemption delayed must not decide it).  The exchanges' rate (fit_copies_links) is the
 * ping-pong's with the caches cold; dse exec's receives pull data its
 * sender has just written while the sender goes on computing, which on
 * some machines is several times slower (bench/README.md, "The pull rate
 * a split run meets").  Where the run gives no fit (too few receives
 * waited, or times that do not grow with size) the exchanges' rate stays. */
static int fit_pull_runs(run *R)
{
    const platform *pl = R->pl;
    int nd = pl->ndev, rc = 1, cap = 0;
    const cJSON *links = cJSON_GetObjectItem(R->raw, "links");
    for (int i = 0; i < R->o->nnetworks; i++) cap += PULL_RUN_LAUNCHES * (8 * R->nets[i]->n + 16);
    double *x = malloc((size_t)cap * sizeof *x), *y = malloc((size_t)cap * sizeof *y);
    mapping *m = NULL;
    cJSON *jr = cJSON_AddArrayToObject(R->report, "pull_runs");
    if (!x || !y || !jr) goto oom;
    for (int a = 0; a < nd; a++)
        for (int b = a + 1; b < nd; b++) {
            int timed = 0;
            for (const cJSON *e = links ? links->child : NULL; e && !timed; e = e->next)
                timed = (int)num(e, "from") == a && (int)num(e, "to") == b && num(e, "seconds") > 0;
            /* Shared memory only: there the receiver copies the payload
             * itself, which is what differs from the exchanges; on a wire
             * the link's rate decides, and a network in halves over a
             * 50 Mbit/s link would take minutes. */
            if (!timed || pl->link_cls[a * nd + b] != LINK_SAME_BOARD) continue;
            int np = 0;
            cJSON *run_ = cJSON_CreateObject();
            if (!run_ || !cJSON_AddItemToArray(jr, run_)) {
                cJSON_Delete(run_);
                goto oom;
            }
            cJSON_AddStringToObject(run_, "from", pl->dev[a].name);
            cJSON_AddStringToObject(run_, "to", pl->dev[b].name);
            cJSON *js = cJSON_AddArrayToObject(run_, "bytes"), *jt = cJSON_AddArrayToObject(run_, "seconds"),
                  *jf = cJSON_AddArrayToObject(run_, "failed");
            if (!js || !jt || !jf) goto oom;
            for (int i = 0; i < R->o->nnetworks; i++) {
                const net *n = R->nets[i];
                char mpath[700], tpath[700], me[BASE_ERRLEN];
                mapping_free(m);
                if (!(m = mapping_new(n->n, nd))) goto oom;
                halves(m, n, a, b);
                snprintf(mpath, sizeof mpath, "%s/pull-%d-%d-%d.json", R->dir, a, b, i);
                if (mapping_save(m, n, pl, mpath, R->err)) goto out;
                /* Launches, not inferences, are what differ most: how the
                 * machine places the two ranks' cores (4.9-7.2 GB/s over
                 * five launches of one resnet50 run here). */
                for (int l = 0; l < PULL_RUN_LAUNCHES; l++) {
                    snprintf(tpath, sizeof tpath, "%s/pull-%d-%d-%d-%d-trace.json", R->dir, a, b, i, l);
                    progress(R, "pull run %d/%d (%s split in halves between %s and %s, traced)...", l + 1,
                             PULL_RUN_LAUNCHES, n->name, pl->dev[a].name, pl->dev[b].name);
                    rt_measure_opts mo = {dse_prog(R), R->o->networks[i], R->o->platform, mpath, -1,
                                          pl, R->o->hostfile, R->seqfile[0] ? R->seqfile : NULL,
                                          R->remote, PULL_RUN_WARMUP, PULL_RUN_REPS, R->o->timeout_s, 1,
                                          tpath, 1, R->o->stop, 0, 0};
                    rt_result rr;
                    int jrc = rt_measure(&mo, &rr, me);
                    if (jrc && R->o->stop && *R->o->stop) {
                        base_seterr(R->err, "%s", me);
                        goto out;
                    }
                    if (jrc) {
                        /* The phase is a refinement: a run that fails (a
                         * network the runtime cannot split so) is reported
                         * and left out, the rest of the calibration kept. */
                        char line[BASE_ERRLEN + 400];
                        snprintf(line, sizeof line, "pull run %d of %.200s between %.100s and %.100s failed: %.600s",
                                 l + 1, n->name, pl->dev[a].name, pl->dev[b].name, me);
                        progress(R, "%s", line);
                        cJSON_AddItemToArray(jf, cJSON_CreateString(line));
                        continue;
                    }
                    int k = traced_waits(tpath, a, b, x + np, y + np, cap - np, R->err);
                    if (k < 0) goto out;
                    for (int j = np; j < np + k; j++) {
                        cJSON_AddItemToArray(js, cJSON_CreateNumber(x[j]));
                        cJSON_AddItemToArray(jt, cJSON_CreateNumber(y[j]));
                    }
                    np += k;
                }
            }
            calib_fit f;
            int ok = np >= PULL_RUN_MIN && !calib_fit_rate(x, y, np, &f, R->err);
            R->err[0] = 0;
            cJSON_AddBoolToObject(run_, "fitted", ok);
            if (!ok) continue;
            char what[200];
            link_class c = pl->link_cls[a * nd + b];
            int first = class_first(pl, a, b);
            if (first) snprintf(what, sizeof what, "link %s pull (split run)", link_class_name(c));
            else
                snprintf(what, sizeof what, "link %.30s-%.30s pull (split run)", pl->dev[a].name,
                         pl->dev[b].name);
            report_fit(R, what, "bytes", "seconds from send to receive", &f, x, y, np, NULL);
            coeffs_value v = coeffs_fitted(1.0 / (f.b * 1e6), f.r2, f.rmse * 1e6, f.n);
            if (add_row(R, what, "pull_bandwidth_mbs", v)) goto oom;
            if (first) {
                R->c->link[c].pull_bandwidth_mbs = v;
                continue;
            }
            for (int i = 0; i < nd; i++)
                for (int j = i + 1; j < nd; j++)
                    if (calib_link_rep(pl, i, j) == a * nd + b) {
                        coeffs_link *P = coeffs_pair_link(R->c, pl->dev[i].name, pl->dev[j].name);
                        if (!P) goto oom;
                        P->pull_bandwidth_mbs = v;
                    }
        }
    rc = 0;
    goto out;
oom:
    base_seterr(R->err, "out of memory for the pull runs");
out:
    mapping_free(m);
    free(x);
    free(y);
    return rc;
}

/* ---- energy ---- */

static int fit_power(run *R)
{
    const cJSON *pw = cJSON_GetObjectItem(R->raw, "power");
    for (int k = 0; k < 2; k++) {
        if (rep_of(R->pl, k) < 0) continue;
        double idle[64], busy[64];
        int ni = 0, nb = 0;
        for (const cJSON *e = pw ? pw->child : NULL; e; e = e->next) {
            if (kind_of(str(e, "kind")) != k) continue;
            if (num(e, "idle_w") >= 0 && ni < 64) idle[ni++] = num(e, "idle_w");
            if (num(e, "busy_w") >= 0 && nb < 64) busy[nb++] = num(e, "busy_w");
        }
        coeffs_device *D = coeffs_dev(R->c, (plat_kind)k);
        char what[64];
        snprintf(what, sizeof what, "power of %s", plat_kind_name((plat_kind)k));
        if (ni && nb) {
            D->idle_w = coeffs_given(base_median(idle, ni), COEFFS_MEASURED);
            D->busy_w = coeffs_given(base_median(busy, nb), COEFFS_MEASURED);
            D->idle_w.n = ni;
            D->busy_w.n = nb;
        } else {
            /* No sensor: the platform's figures, if its devices agree. */
            int same = 1, first = rep_of(R->pl, k);
            for (int d = 0; d < R->pl->ndev; d++)
                if ((int)R->pl->dev[d].kind == k &&
                    (R->pl->dev[d].busy_w != R->pl->dev[first].busy_w ||
                     R->pl->dev[d].idle_w != R->pl->dev[first].idle_w))
                    same = 0;
            if (!same) continue; /* unset: the model reads each device's own figures */
            const char *note = coeffs_note(R->c, "no energy sensor on this platform: the "
                                                 "platform file's declared figure");
            if (!note) return -1;
            D->idle_w = coeffs_given(R->pl->dev[first].idle_w, COEFFS_DECLARED);
            D->busy_w = coeffs_given(R->pl->dev[first].busy_w, COEFFS_DECLARED);
            D->idle_w.note = D->busy_w.note = note;
        }
        if (add_row(R, what, "busy_w", D->busy_w) || add_row(R, what, "idle_w", D->idle_w)) return -1;
    }
    return 0;
}

/* ---- driver ---- */

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

void calib_result_free(calib_result *r)
{
    if (!r) return;
    coeffs_free(r->coeffs);
    free(r->report_json);
    free(r->rows);
    memset(r, 0, sizeof *r);
}

int calib_run(const calib_options *o, calib_result *res, char *err)
{
    memset(res, 0, sizeof *res);
    err[0] = 0;
    int rc = calib_check(o, err);
    if (rc) return rc;
    double t0 = base_now();
    run R;
    memset(&R, 0, sizeof R);
    R.o = o;
    R.err = err;
    rc = 1;
    if (!(R.pl = platform_open(o->platform, err))) return 2;
    for (int i = 0; i < o->nnetworks; i++)
        if (!(R.nets[i] = net_open(o->networks[i], err))) {
            rc = 2;
            goto out;
        }
    if (o->keep_dir) {
        snprintf(R.dir, sizeof R.dir, "%s", o->keep_dir);
        if (mkdir(R.dir, 0777) && errno != EEXIST) {
            base_seterr(err, "%.300s: cannot create: %s", R.dir, strerror(errno));
            rc = 2;
            goto out;
        }
    } else {
        snprintf(R.dir, sizeof R.dir, "/tmp/dse-calib-XXXXXX");
        if (!mkdtemp(R.dir)) {
            base_seterr(err, "cannot create a work folder in /tmp: %s", strerror(errno));
            goto out;
        }
        R.made_dir = 1;
    }
    if (!o->hostfile &&
        rt_placement_file(R.pl, R.dir, R.seqfile, sizeof R.seqfile, R.remote, sizeof R.remote, err))
        goto out;
    R.c = coeffs_new();
    R.report = cJSON_CreateObject();
    if (!R.c || !R.report || !(R.fits = cJSON_AddArrayToObject(R.report, "fits"))) {
        base_seterr(err, "out of memory");
        goto out;
    }
    char date[32], board[300], desc[600], host[128] = "this machine";
    base_now_iso(date, sizeof date);
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    snprintf(board, sizeof board, "%s (%s)", R.pl->description ? R.pl->description : R.pl->name, host);
    snprintf(desc, sizeof desc, "dse calibrate%s on %s: median of %d timed runs after warm-up per "
             "timing; fits by least squares with relative weights (r2 of the weighted fit, rmse "
             "in microseconds for times and MB for memory)", o->quick ? " --quick" : "",
             R.pl->name, o->reps > 0 ? o->reps : CALIB_REPS);
    if (coeffs_set_info(R.c, board, date, desc) || coeffs_add_platform(R.c, R.pl->name)) goto oom;
    for (int i = 0; i < o->nnetworks; i++)
        if (coeffs_add_network(R.c, R.nets[i]->name)) goto oom;

    if ((rc = run_worker(&R))) goto out;
    rc = 1;
    if (set_arch(&R)) goto oom;
    if (fit_compute(&R) || fit_bands(&R) || fit_corun(&R) || fit_spread(&R) || fit_copies_links(&R) ||
        fit_device_scales(&R))
        goto out;
    if ((rc = fit_memory(&R))) goto out;
    if ((rc = fit_pull_runs(&R))) goto out;
    rc = 1;
    if (fit_power(&R)) goto oom;
    if (coeffs_check(R.c, err)) goto out;

    cJSON_AddStringToObject(R.report, "platform", R.pl->name);
    cJSON *nets = cJSON_AddArrayToObject(R.report, "networks");
    for (int i = 0; i < o->nnetworks; i++) cJSON_AddItemToArray(nets, cJSON_CreateString(R.nets[i]->name));
    cJSON_AddBoolToObject(R.report, "quick", o->quick);
    cJSON_AddNumberToObject(R.report, "reps", o->reps > 0 ? o->reps : CALIB_REPS);
    cJSON_AddStringToObject(R.report, "date", date);
    cJSON_AddItemReferenceToObject(R.report, "devices", cJSON_GetObjectItem(R.raw, "devices"));
    /* How loaded the machine was: preempted samples of the compute timings. */
    double pre = 0, tot = 0;
    for (const cJSON *e = cJSON_GetObjectItem(R.raw, "compute")->child; e; e = e->next) {
        pre += num(e, "preempted");
        tot += num(e, "samples");
    }
    cJSON_AddNumberToObject(R.report, "preempted_fraction", tot > 0 ? pre / tot : 0);
    res->report_json = ju_print(R.report, 1);
    if (!res->report_json) goto oom;
    res->coeffs = R.c;
    R.c = NULL;
    res->rows = R.rows;
    res->nrows = R.nrows;
    R.rows = NULL;
    res->nlayer_fits = R.nlayer_fits;
    for (int a = 0; a < 2; a++)
        res->nband_layers[a] = R.nband_layers[a], res->nband_tables[a] = R.nband_tables[a];
    res->ncorun_layers = R.ncorun_layers;
    res->ncorun_factors = R.ncorun_factors;
    res->corun_max = R.corun_max;
    snprintf(res->corun_layer, sizeof res->corun_layer, "%s", R.corun_layer);
    res->nlayer_flagged = R.nlayer_flagged;
    coeffs_arch_warning(res->coeffs, R.pl, res->warn);
    res->seconds = base_now() - t0;
    rc = 0;
    goto out;
oom:
    base_seterr(err, "out of memory");
    rc = 1;
out:
    if (R.made_dir) remove_dir(R.dir);
    cJSON_Delete(R.report);
    cJSON_Delete(R.raw);
    coeffs_free(R.c);
    free(R.rows);
    for (int i = 0; i < CALIB_MAX_NETS; i++) net_free(R.nets[i]);
    platform_free(R.pl);
    return rc;
}
