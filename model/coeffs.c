/* coeffs.c -- the coefficients file of the analytical model: reader,
 * writer, built-in defaults and the C API calibration builds files with
 * (docs/coefficients-format.md).
 *
 * Invariant kept by the reader and coeffs_check: every value that is set
 * is 0 or within [JU_FIG_MIN, JU_FIG_MAX] (ju_fig_ok), rates and bandwidths
 * are not 0, a fitted value carries
 * its r2 and point count, layer keys have the form "network/layer", a
 * class's curve rises in work and does not fall in time, a layer's bands
 * (of rows, of columns) have units falling below the layer's extent and
 * positive ratios, and version is
 * 1 to COEFFS_VERSION (the writer keeps a file's own).  The reader rejects unknown keys, so a typo
 * never silently turns into a fallback.
 */
#include "cost.h"
#include "jsonutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct coeffs_note_s {
    coeffs_note_s *next;
    char text[];
};

static const char *src_names[] = {"unset",      "fitted",   "measured", "derived",
                                  "assumption", "declared", "default"};

const char *coeffs_source_name(coeffs_source s)
{
    return (unsigned)s < sizeof src_names / sizeof *src_names ? src_names[s] : "?";
}

int coeffs_source_parse(const char *s, coeffs_source *out)
{
    for (int i = 1; i < (int)(sizeof src_names / sizeof *src_names); i++)
        if (strcmp(s, src_names[i]) == 0) {
            *out = (coeffs_source)i;
            return 0;
        }
    return -1;
}

/* A value closer to 0 than any figure a file may hold (JU_FIG_MIN: far
 * below a timer's resolution) is 0, so what calibration fits is a value
 * its own reader takes back. */
static double snap(double v) { return fabs(v) < JU_FIG_MIN ? 0 : v; }

coeffs_value coeffs_fitted(double value, double r2, double rmse, int n)
{
    value = snap(value);
    coeffs_value v = {value, COEFFS_FITTED, r2, rmse, n, NULL};
    return v;
}

coeffs_value coeffs_given(double value, coeffs_source s)
{
    value = snap(value);
    coeffs_value v = {value, s, NAN, NAN, 0, NULL};
    return v;
}

static coeffs_value unset(void) { return coeffs_given(0, COEFFS_UNSET); }

static void rates_init(coeffs_rates *r)
{
    r->per_cycle = r->overhead_us = r->busy_w = r->corun = unset();
    memset(&r->band, 0, sizeof r->band);
    memset(&r->cband, 0, sizeof r->cband);
}

static void dev_init(coeffs_device *d)
{
    memset(d, 0, sizeof *d);
    d->overhead_us = d->send_overhead_us = d->copy_bandwidth_mbs = d->step_spread = unset();
    d->busy_w = d->idle_w = d->mem_coefficient = d->mem_bias_mb = unset();
    for (int k = 0; k < NET_KIND_COUNT; k++) d->mem_weights[k] = unset();
    for (int k = 0; k < COST_NCLASS; k++) {
        rates_init(&d->cls[k]);
        d->curve[k].r2 = NAN;
    }
}

/* ---- curves ---- */

int coeffs_curve_at(const coeffs_curve *cv, double w, double *t_s, double *p)
{
    if (cv->n < 2 || !(w > 0)) return -1;
    if (w > cv->work[cv->n - 1]) {
        /* Beyond the largest layer measured: the curve's tangent line
         * there (its fixed cost and its marginal rate), the power of the
         * last rising segment (none: proportional).  Its time per unit of
         * work carried on instead charged vgg16's 1.8-GMAC Winograd layers
         * twice their time from 0.1-GMAC samples; the last power law
         * carried on, half. */
        double e = 1;
        for (int i = cv->n - 2; i >= 0; i--)
            if (cv->us[i + 1] > cv->us[i]) {
                e = log(cv->us[i + 1] / cv->us[i]) / log(cv->work[i + 1] / cv->work[i]);
                break;
            }
        if (e > 1) e = 1;
        double tl = cv->us[cv->n - 1] * 1e-6, r = w / cv->work[cv->n - 1];
        *t_s = tl * (1 - e + e * r);
        *p = e * r / (1 - e + e * r);
        return 0;
    }
    /* The segment [i, i+1] holding w, or the first one below it. */
    int i = 0;
    while (i + 2 < cv->n && w > cv->work[i + 1]) i++;
    double lw = log(cv->work[i + 1] / cv->work[i]);
    double e = log(cv->us[i + 1] / cv->us[i]) / lw; /* >= 0: us non-decreasing */
    if (e < 0) e = 0;
    /* The curve passes through its points; only the tangent's power is
     * held at 1 on a super-linear segment (no negative fixed cost). */
    *t_s = cv->us[i] * 1e-6 * pow(w / cv->work[i], e);
    *p = e > 1 ? 1 : e;
    return 0;
}

/* The two axes a layer's bands are measured along (coeffs_band): the
 * entry's key, the names of its extent and units, the first version. */
typedef struct {
    const char *key, *extent, *units;
    int version;
} band_axis;
static const band_axis BAND_ROWS = {"band", "height", "rows", COEFFS_VERSION_BAND};
static const band_axis BAND_COLS = {"band_columns", "width", "columns", COEFFS_VERSION_COLBAND};

/* The rules of a layer's band table (coeffs_band) along axis ax. */
static int check_band(const coeffs_band *b, const band_axis *ax, const char *ctx, char *err)
{
    if (b->n == 0) return 0;
    if (b->n < 0 || b->n > COEFFS_BAND_MAX || b->height < 2) {
        base_seterr(err, "%s: 1 to %d points and a %s of at least 2 whole %s", ctx,
                    COEFFS_BAND_MAX, ax->extent, ax->units);
        return -1;
    }
    for (int i = 0; i < b->n; i++) {
        int prev = i ? b->rows[i - 1] : b->height;
        if (b->rows[i] < 1 || b->rows[i] >= prev || !isfinite(b->ratio[i]) ||
            !(b->ratio[i] > 0)) {
            base_seterr(err,
                        "%s: point %d must be whole %s from 1 to %d (fewer than the point "
                        "before) and a ratio above 0",
                        ctx, i, ax->units, prev - 1);
            return -1;
        }
    }
    return 0;
}

static int key_is_wildcard(const char *key);

/* A layers entry's band table along ax: its rules (check_band), one layer
 * only, and the version that has it. */
static int check_entry_band(const coeffs_band *b, const band_axis *ax, const char *key,
                            int version, const char *ctx, char *err)
{
    char c2[400];
    snprintf(c2, sizeof c2, "%s.%s", ctx, ax->key);
    if (check_band(b, ax, c2, err)) return -1;
    if (b->n && key_is_wildcard(key)) {
        base_seterr(err, "%s: bands are measured per layer, not for \"network/*\"", c2);
        return -1;
    }
    if (b->n && version < ax->version) {
        base_seterr(err, "%s needs format version %d (the file says %d)", c2, ax->version,
                    version);
        return -1;
    }
    return 0;
}

static int check_curve(const coeffs_curve *cv, const char *ctx, char *err)
{
    if (cv->n == 0) return 0;
    if (cv->n < 2 || cv->n > COEFFS_CURVE_MAX) {
        base_seterr(err, "%s.curve: %d points, 2 to %d allowed", ctx, cv->n, COEFFS_CURVE_MAX);
        return -1;
    }
    for (int i = 0; i < cv->n; i++) {
        if (!ju_fig_ok(cv->work[i], 0) || !ju_fig_ok(cv->us[i], 0) ||
            (i && !(cv->work[i] > cv->work[i - 1] && cv->us[i] >= cv->us[i - 1]))) {
            base_seterr(err,
                        "%s.curve: point %d (%g, %g): work must increase and time not decrease, "
                        "both in [%g, %g]",
                        ctx, i, cv->work[i], cv->us[i], JU_FIG_MIN, JU_FIG_MAX);
            return -1;
        }
    }
    if (!isnan(cv->r2) && !(isfinite(cv->r2) && cv->r2 <= 1)) {
        base_seterr(err, "%s.curve: r2 %g is not a fit's R^2", ctx, cv->r2);
        return -1;
    }
    return 0;
}

cost_coeffs *coeffs_new(void)
{
    cost_coeffs *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->version = COEFFS_VERSION;
    for (int k = 0; k < 2; k++) dev_init(&c->dev[k]);
    for (int k = 0; k < LINK_CLASS_COUNT; k++)
        c->link[k].latency_us = c->link[k].bandwidth_mbs = c->link[k].pickup_us =
            c->link[k].pull_bandwidth_mbs = unset();
    return c;
}

void coeffs_free(cost_coeffs *c)
{
    if (!c) return;
    for (int i = 0; i < c->nplatforms; i++) free(c->platforms[i]);
    for (int i = 0; i < c->nnetworks; i++) free(c->networks[i]);
    free(c->platforms);
    free(c->networks);
    free(c->board);
    free(c->date);
    free(c->description);
    free(c->arch);
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < c->dev[k].nlayers; i++) free(c->dev[k].layers[i].key);
        free(c->dev[k].layers);
    }
    for (int i = 0; i < c->npairs; i++) {
        free(c->pairs[i].a);
        free(c->pairs[i].b);
    }
    free(c->pairs);
    for (int i = 0; i < c->nper; i++) free(c->per[i].name);
    free(c->per);
    for (coeffs_note_s *n = c->notes, *nx; n; n = nx) {
        nx = n->next;
        free(n);
    }
    free(c);
}

coeffs_link *coeffs_pair_link(cost_coeffs *c, const char *a, const char *b)
{
    for (int i = 0; i < c->npairs; i++) {
        coeffs_pair *p = &c->pairs[i];
        if ((!strcmp(p->a, a) && !strcmp(p->b, b)) || (!strcmp(p->a, b) && !strcmp(p->b, a)))
            return &p->l;
    }
    coeffs_pair *np = realloc(c->pairs, (size_t)(c->npairs + 1) * sizeof *np);
    if (!np) return NULL;
    c->pairs = np;
    coeffs_pair *p = &np[c->npairs];
    p->a = base_strdup(a);
    p->b = base_strdup(b);
    if (!p->a || !p->b) {
        free(p->a);
        free(p->b);
        return NULL;
    }
    p->l.latency_us = p->l.bandwidth_mbs = p->l.pickup_us = p->l.pull_bandwidth_mbs = unset();
    c->npairs++;
    return &p->l;
}

coeffs_devfactor *coeffs_device_factor(cost_coeffs *c, const char *name)
{
    for (int i = 0; i < c->nper; i++)
        if (!strcmp(c->per[i].name, name)) return &c->per[i];
    coeffs_devfactor *np = realloc(c->per, (size_t)(c->nper + 1) * sizeof *np);
    if (!np) return NULL;
    c->per = np;
    coeffs_devfactor *f = &np[c->nper];
    if (!(f->name = base_strdup(name))) return NULL;
    f->compute_scale = unset();
    c->nper++;
    return f;
}

const char *coeffs_note(cost_coeffs *c, const char *text)
{
    size_t len = strlen(text);
    coeffs_note_s *n = malloc(sizeof *n + len + 1);
    if (!n) return NULL;
    memcpy(n->text, text, len + 1);
    n->next = c->notes;
    c->notes = n;
    return n->text;
}

static int setstr(char **dst, const char *s)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d) return -1;
    free(*dst);
    *dst = d;
    return 0;
}

int coeffs_set_arch(cost_coeffs *c, const char *arch) { return setstr(&c->arch, arch); }

int coeffs_arch_warning(const cost_coeffs *c, const platform *pl, char *warn)
{
    char devs[200] = "";
    const char *other = NULL;
    int n = 0;
    warn[0] = 0;
    if (!c->arch) return 0;
    for (int d = 0; d < pl->ndev; d++) {
        const char *a = pl->dev[d].arch;
        if (pl->dev[d].kind != PLAT_CPU || !a || plat_arch_same(a, c->arch)) continue;
        if (!other) other = a;
        size_t l = strlen(devs);
        if (n++ < 4) snprintf(devs + l, sizeof devs - l, "%s%s", l ? ", " : "", pl->dev[d].name);
    }
    if (!n) return 0;
    base_seterr(warn,
             "coefficients measured on %s used for %d %s device%s (%s%s): timings do not carry "
             "across CPU architectures; calibrate on the boards",
             c->arch, n, other, n == 1 ? "" : "s", devs, n > 4 ? ", ..." : "");
    return 1;
}

int coeffs_set_info(cost_coeffs *c, const char *board, const char *date, const char *description)
{
    return setstr(&c->board, board) || setstr(&c->date, date) ||
                   setstr(&c->description, description)
               ? -1
               : 0;
}

static int push_name(char ***arr, int *n, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (strcmp((*arr)[i], name) == 0) return 0;
    char **na = realloc(*arr, (size_t)(*n + 1) * sizeof *na);
    if (!na) return -1;
    *arr = na;
    if (!(na[*n] = strdup(name))) return -1;
    (*n)++;
    return 0;
}

int coeffs_add_platform(cost_coeffs *c, const char *name)
{
    return push_name(&c->platforms, &c->nplatforms, name);
}

int coeffs_add_network(cost_coeffs *c, const char *name)
{
    return push_name(&c->networks, &c->nnetworks, name);
}

coeffs_device *coeffs_dev(cost_coeffs *c, plat_kind k)
{
    c->dev[k].present = 1;
    return &c->dev[k];
}

static coeffs_layer *find_key(const coeffs_device *d, const char *key)
{
    for (int i = 0; i < d->nlayers; i++)
        if (strcmp(d->layers[i].key, key) == 0) return &d->layers[i];
    return NULL;
}

static coeffs_rates *add_key(coeffs_device *d, const char *key)
{
    coeffs_layer *e = find_key(d, key);
    if (e) return &e->r;
    if (d->nlayers == d->cap_layers) {
        int nc = d->cap_layers ? 2 * d->cap_layers : 16;
        coeffs_layer *nl = realloc(d->layers, (size_t)nc * sizeof *nl);
        if (!nl) return NULL;
        d->layers = nl;
        d->cap_layers = nc;
    }
    e = &d->layers[d->nlayers];
    if (!(e->key = strdup(key))) return NULL;
    rates_init(&e->r);
    d->nlayers++;
    return &e->r;
}

coeffs_rates *coeffs_layer_rates(cost_coeffs *c, plat_kind k, const char *network,
                                 const char *layer)
{
    size_t len = strlen(network) + strlen(layer) + 2;
    char *key = malloc(len);
    if (!key) return NULL;
    snprintf(key, len, "%s/%s", network, layer);
    coeffs_rates *r = add_key(coeffs_dev(c, k), key);
    free(key);
    return r;
}

const coeffs_rates *coeffs_find_layer(const cost_coeffs *c, plat_kind k, const char *network,
                                      const char *layer)
{
    const coeffs_device *d = &c->dev[k];
    size_t ln = strlen(network);
    for (int i = 0; i < d->nlayers; i++) {
        const char *key = d->layers[i].key;
        if (strncmp(key, network, ln) == 0 && key[ln] == '/' && strcmp(key + ln + 1, layer) == 0)
            return &d->layers[i].r;
    }
    return NULL;
}

/* ---- defaults ---- */

/* Nominal rates per core per cycle (docs/coefficients-format.md, section
 * "Built-in defaults"): deliberately round, to be replaced by calibration. */
static const struct {
    double conv, fc, elementwise, overhead_us, send_overhead_us, copy_mbs;
} nominal[2] = {
    /* cpu: a 128-bit SIMD core sustaining 2 of its 4-8 fp32 MACs per cycle
     * on convolutions; FC and elementwise layers bound by memory. */
    {2.0, 0.5, 0.25, 10.0, 5.0, 4000.0},
    /* gpu: a CUDA core sustaining a quarter of its one fp32 FMA per cycle
     * on convolutions; FC and elementwise layers bound by memory. */
    {0.25, 0.01, 0.01, 20.0, 10.0, 10000.0},
};

cost_coeffs *coeffs_default(const platform *pl)
{
    cost_coeffs *c = coeffs_new();
    if (!c) return NULL;
    if (coeffs_add_platform(c, pl->name) ||
        coeffs_set_info(c, "nominal (no calibration)", "-",
                        "built-in defaults derived from the platform file")) {
        coeffs_free(c);
        return NULL;
    }
    for (int k = 0; k < 2; k++) {
        int has = 0;
        for (int i = 0; i < pl->ndev; i++) has |= pl->dev[i].kind == (plat_kind)k;
        if (!has) continue;
        coeffs_device *d = coeffs_dev(c, (plat_kind)k);
        d->overhead_us = coeffs_given(nominal[k].overhead_us, COEFFS_DEFAULT);
        d->send_overhead_us = coeffs_given(nominal[k].send_overhead_us, COEFFS_DEFAULT);
        d->copy_bandwidth_mbs = coeffs_given(nominal[k].copy_mbs, COEFFS_DEFAULT);
        d->mem_coefficient = coeffs_given(1.0, COEFFS_DEFAULT);
        d->mem_bias_mb = coeffs_given(0.0, COEFFS_DEFAULT);
        for (int cls = 0; cls < COST_NCLASS; cls++) {
            double r = cls == NET_CONV || cost_class_base(cls) == NET_CONV ? nominal[k].conv
                       : cls == NET_FC                                    ? nominal[k].fc
                                                                          : nominal[k].elementwise;
            d->cls[cls].per_cycle = coeffs_given(r, COEFFS_DEFAULT);
        }
        /* Powers stay unset: the model then reads each device's declared
         * busy_w / idle_w from the platform. */
    }
    return c;
}

/* ---- checking ---- */

static int check_value(const coeffs_value *v, int positive, const char *ctx, char *err)
{
    if (!coeffs_isset(v)) return 0;
    if ((unsigned)v->source > COEFFS_DEFAULT) {
        base_seterr(err, "%s: unknown source", ctx);
        return -1;
    }
    if (!ju_fig_ok(v->value, !positive)) {
        base_seterr(err, "%s: value %g must be %sa number from %g to %g", ctx, v->value,
                 positive ? "" : "0 or ", JU_FIG_MIN, JU_FIG_MAX);
        return -1;
    }
    if (v->source == COEFFS_FITTED && (!isfinite(v->r2) || v->n < 1)) {
        base_seterr(err, "%s: a fitted value needs its r2 and n (points fitted)", ctx);
        return -1;
    }
    if (v->n < 0 || (!isnan(v->rmse) && (!isfinite(v->rmse) || v->rmse < 0))) {
        base_seterr(err, "%s: n and rmse must not be negative", ctx);
        return -1;
    }
    return 0;
}

static int check_rates(const coeffs_rates *r, const char *ctx, char *err)
{
    char c2[300];
    snprintf(c2, sizeof c2, "%s.per_cycle", ctx);
    if (check_value(&r->per_cycle, 1, c2, err)) return -1;
    snprintf(c2, sizeof c2, "%s.overhead_us", ctx);
    if (check_value(&r->overhead_us, 0, c2, err)) return -1;
    snprintf(c2, sizeof c2, "%s.busy_w", ctx);
    return check_value(&r->busy_w, 0, c2, err);
}

/* A key for every layer of a network: "network/" then a star. */
static int key_is_wildcard(const char *key)
{
    const char *sl = strchr(key, '/');
    return sl && !strcmp(sl + 1, "*");
}

/* A set value v (positive) that version `first` added: refused in an
 * older file. */
static int check_since(const coeffs_value *v, int first, int version, const char *ctx, char *err)
{
    if (check_value(v, 1, ctx, err)) return -1;
    if (version < first) {
        base_seterr(err, "%s needs format version %d (the file says %d)", ctx, first, version);
        return -1;
    }
    return 0;
}

/* The rules of a layers entry's corun factor (coeffs_rates.corun). */
static int check_corun(const coeffs_value *v, const char *key, int version, const char *ctx, char *err)
{
    if (!coeffs_isset(v)) return 0;
    if (check_since(v, COEFFS_VERSION_CORUN, version, ctx, err)) return -1;
    if (key_is_wildcard(key)) {
        base_seterr(err, "%s: corun factors are measured per layer, not for \"network/*\"", ctx);
        return -1;
    }
    if (!(v->value >= 1 && v->value <= COEFFS_CORUN_MAX)) {
        base_seterr(err, "%s: value %g must be from 1 to %g (a layer never runs faster beside "
                    "another)", ctx, v->value, COEFFS_CORUN_MAX);
        return -1;
    }
    return 0;
}

/* A link's pull rate: positive, from version COEFFS_VERSION_PULL. */
static int check_pull(const coeffs_value *v, int version, const char *ctx, char *err)
{
    return coeffs_isset(v) ? check_since(v, COEFFS_VERSION_PULL, version, ctx, err) : 0;
}

static int valid_key(const char *key)
{
    const char *s = strchr(key, '/');
    return s && s > key && s[1] && base_name_ok(key);
}

int coeffs_check(const cost_coeffs *c, char *err)
{
    char ctx[300];
    if (c->version < 1 || c->version > COEFFS_VERSION) {
        base_seterr(err, "coefficients version %d, this program reads versions 1 to %d",
                 c->version, COEFFS_VERSION);
        return -1;
    }
    if (c->arch && !c->arch[0]) {
        base_seterr(err, "coefficients: empty \"arch\"");
        return -1;
    }
    for (int k = 0; k < 2; k++) {
        const coeffs_device *d = &c->dev[k];
        const char *kn = plat_kind_name((plat_kind)k);
        if (!d->present) continue;
#define CHK(field, pos)                                                                            \
    do {                                                                                           \
        snprintf(ctx, sizeof ctx, "devices.%s.%s", kn, #field);                                    \
        if (check_value(&d->field, pos, ctx, err)) return -1;                                      \
    } while (0)
        CHK(overhead_us, 0);
        CHK(send_overhead_us, 0);
        CHK(copy_bandwidth_mbs, 1);
        CHK(busy_w, 0);
        CHK(idle_w, 0);
        CHK(mem_coefficient, 0);
        CHK(mem_bias_mb, 0);
#undef CHK
        if (coeffs_isset(&d->step_spread)) {
            snprintf(ctx, sizeof ctx, "devices.%s.step_spread", kn);
            if (check_value(&d->step_spread, 0, ctx, err)) return -1;
            if (c->version < COEFFS_VERSION_SPREAD) {
                base_seterr(err, "%s needs format version %d (the file says %d)", ctx,
                            COEFFS_VERSION_SPREAD, c->version);
                return -1;
            }
            if (d->step_spread.value > COEFFS_SPREAD_MAX) {
                base_seterr(err, "%s: value %g must be at most %g", ctx, d->step_spread.value,
                            COEFFS_SPREAD_MAX);
                return -1;
            }
        }
        for (int j = 0; j < NET_KIND_COUNT; j++) {
            snprintf(ctx, sizeof ctx, "devices.%s.memory.weights.%s", kn,
                     net_kind_name((net_kind)j));
            if (check_value(&d->mem_weights[j], 0, ctx, err)) return -1;
        }
        for (int j = 0; j < COST_NCLASS; j++) {
            snprintf(ctx, sizeof ctx, "devices.%s.kinds.%s", kn, cost_class_name(j));
            if (check_rates(&d->cls[j], ctx, err) || check_curve(&d->curve[j], ctx, err))
                return -1;
            if (d->cls[j].band.n || d->cls[j].cband.n) {
                base_seterr(err, "%s: a band belongs to a layer, not to a kind", ctx);
                return -1;
            }
            if (coeffs_isset(&d->cls[j].corun)) {
                base_seterr(err, "%s: a corun factor belongs to a layer, not to a kind", ctx);
                return -1;
            }
            if (d->curve[j].n && !coeffs_isset(&d->cls[j].per_cycle)) {
                base_seterr(err, "%s.curve needs the class's per_cycle beside it", ctx);
                return -1;
            }
            if (d->curve[j].n && c->version < COEFFS_VERSION_CURVE) {
                base_seterr(err, "%s.curve needs format version %d (the file says %d)", ctx,
                            COEFFS_VERSION_CURVE, c->version);
                return -1;
            }
        }
        for (int j = 0; j < d->nlayers; j++) {
            snprintf(ctx, sizeof ctx, "devices.%s.layers.%.200s", kn, d->layers[j].key);
            if (!valid_key(d->layers[j].key)) {
                base_seterr(err, "%s: key must be \"network/layer\" or \"network/*\"",
                         ctx);
                return -1;
            }
            if (check_rates(&d->layers[j].r, ctx, err)) return -1;
            if (check_entry_band(&d->layers[j].r.band, &BAND_ROWS, d->layers[j].key, c->version,
                                 ctx, err) ||
                check_entry_band(&d->layers[j].r.cband, &BAND_COLS, d->layers[j].key, c->version,
                                 ctx, err))
                return -1;
            char c2[320];
            snprintf(c2, sizeof c2, "%s.corun", ctx);
            if (check_corun(&d->layers[j].r.corun, d->layers[j].key, c->version, c2, err)) return -1;
        }
    }
    for (int k = 0; k < LINK_CLASS_COUNT; k++) {
        snprintf(ctx, sizeof ctx, "links.%s.latency_us", link_class_name((link_class)k));
        if (check_value(&c->link[k].latency_us, 0, ctx, err)) return -1;
        snprintf(ctx, sizeof ctx, "links.%s.bandwidth_mbs", link_class_name((link_class)k));
        if (check_value(&c->link[k].bandwidth_mbs, 1, ctx, err)) return -1;
        snprintf(ctx, sizeof ctx, "links.%s.pickup_us", link_class_name((link_class)k));
        if (check_value(&c->link[k].pickup_us, 0, ctx, err)) return -1;
        snprintf(ctx, sizeof ctx, "links.%s.pull_bandwidth_mbs", link_class_name((link_class)k));
        if (check_pull(&c->link[k].pull_bandwidth_mbs, c->version, ctx, err)) return -1;
    }
    for (int i = 0; i < c->nper; i++) {
        snprintf(ctx, sizeof ctx, "per_device.%.100s.compute_scale", c->per[i].name);
        if (check_value(&c->per[i].compute_scale, 1, ctx, err)) return -1;
    }
    for (int i = 0; i < c->npairs; i++) {
        snprintf(ctx, sizeof ctx, "links.pairs[%d] (%.100s, %.100s).latency_us", i, c->pairs[i].a,
                 c->pairs[i].b);
        if (check_value(&c->pairs[i].l.latency_us, 0, ctx, err)) return -1;
        snprintf(ctx, sizeof ctx, "links.pairs[%d] (%.100s, %.100s).bandwidth_mbs", i,
                 c->pairs[i].a, c->pairs[i].b);
        if (check_value(&c->pairs[i].l.bandwidth_mbs, 1, ctx, err)) return -1;
        snprintf(ctx, sizeof ctx, "links.pairs[%d] (%.100s, %.100s).pickup_us", i, c->pairs[i].a,
                 c->pairs[i].b);
        if (check_value(&c->pairs[i].l.pickup_us, 0, ctx, err)) return -1;
        snprintf(ctx, sizeof ctx, "links.pairs[%d] (%.100s, %.100s).pull_bandwidth_mbs", i,
                 c->pairs[i].a, c->pairs[i].b);
        if (check_pull(&c->pairs[i].l.pull_bandwidth_mbs, c->version, ctx, err)) return -1;
    }
    return 0;
}

/* ---- reading ---- */

typedef struct {
    cost_coeffs *c;
    const char *what;
    char *err;
} rd;

/* Reject keys of o not in the NULL-terminated list. */
static int only_keys(rd *r, const cJSON *o, const char *ctx, const char *const *keys)
{
    for (const cJSON *k = o->child; k; k = k->next) {
        int ok = 0;
        for (int i = 0; keys[i] && !ok; i++) ok = strcmp(k->string, keys[i]) == 0;
        if (!ok) {
            base_seterr(r->err, "%s: %s: unknown key \"%s\"", r->what, ctx, k->string);
            return -1;
        }
    }
    return 0;
}

static int want_object(rd *r, const cJSON *o, const char *ctx)
{
    if (cJSON_IsObject(o)) return 0;
    base_seterr(r->err, "%s: %s must be an object", r->what, ctx);
    return -1;
}

/* A coefficient: {"value": v, "source": s, ["r2", "rmse", "n", "note"]}. */
static int read_value(rd *r, const cJSON *parent, const char *key, coeffs_value *out, int positive,
                      const char *pctx)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);
    if (!o) return 0;
    char ctx[400];
    snprintf(ctx, sizeof ctx, "%s: %s.%s", r->what, pctx, key);
    static const char *const keys[] = {"value", "source", "r2", "rmse", "n", "note", NULL};
    if (!cJSON_IsObject(o)) {
        base_seterr(r->err, "%s: must be an object {\"value\": ..., \"source\": ...}",
                 ctx);
        return -1;
    }
    for (const cJSON *k = o->child; k; k = k->next) {
        int ok = 0;
        for (int i = 0; keys[i] && !ok; i++) ok = strcmp(k->string, keys[i]) == 0;
        if (!ok) {
            base_seterr(r->err, "%s: unknown key \"%s\"", ctx, k->string);
            return -1;
        }
    }
    coeffs_value v = coeffs_given(0, COEFFS_UNSET);
    const char *src = NULL, *note = NULL;
    if (ju_num_req(o, "value", &v.value, 1, -HUGE_VAL, ctx, r->err) ||
        ju_str(o, "source", &src, 1, ctx, r->err) || ju_num(o, "r2", &v.r2, ctx, r->err) ||
        ju_num(o, "rmse", &v.rmse, ctx, r->err) || ju_int(o, "n", &v.n, 0, ctx, r->err) ||
        ju_str(o, "note", &note, 0, ctx, r->err))
        return -1;
    if (coeffs_source_parse(src, &v.source)) {
        base_seterr(r->err,
                 "%s: source \"%s\" is not one of fitted, measured, derived, "
                 "assumption, declared, default",
                 ctx, src);
        return -1;
    }
    if (note && !(v.note = coeffs_note(r->c, note))) {
        base_seterr(r->err, "%s: out of memory", ctx);
        return -1;
    }
    char c2[400];
    snprintf(c2, sizeof c2, "%s: %s.%s", r->what, pctx, key);
    if (check_value(&v, positive, c2, r->err)) return -1;
    *out = v;
    return 0;
}

/* A value that format version `first` added (read_value's rules): refused,
 * present, in an older file. */
static int read_since(rd *r, const cJSON *parent, const char *key, int first, coeffs_value *out,
                      int positive, const char *pctx)
{
    if (!cJSON_GetObjectItemCaseSensitive(parent, key)) return 0;
    if (r->c->version < first) {
        base_seterr(r->err, "%s: %s.%s needs format version %d (the file says %d)", r->what, pctx,
                    key, first, r->c->version);
        return -1;
    }
    return read_value(r, parent, key, out, positive, pctx);
}

/* A link's "pull_bandwidth_mbs" (version COEFFS_VERSION_PULL on). */
static int read_pull(rd *r, const cJSON *parent, coeffs_value *out, const char *pctx)
{
    return read_since(r, parent, "pull_bandwidth_mbs", COEFFS_VERSION_PULL, out, 1, pctx);
}

/* A device's "step_spread" (version COEFFS_VERSION_SPREAD on), at most
 * COEFFS_SPREAD_MAX. */
static int read_spread(rd *r, const cJSON *parent, coeffs_value *out, const char *pctx)
{
    if (read_since(r, parent, "step_spread", COEFFS_VERSION_SPREAD, out, 0, pctx)) return -1;
    if (coeffs_isset(out) && out->value > COEFFS_SPREAD_MAX) {
        base_seterr(r->err, "%s: %s.step_spread: value %g must be at most %g", r->what, pctx,
                    out->value, COEFFS_SPREAD_MAX);
        return -1;
    }
    return 0;
}

/* "curve": {"work": [...], "us": [...], ["r2": x]}; the checks are
 * coeffs_check's (check_curve). */
static int read_curve(rd *r, const cJSON *o, coeffs_curve *cv, const char *pctx)
{
    char ctx[800];
    snprintf(ctx, sizeof ctx, "%s.curve", pctx);
    static const char *const keys[] = {"work", "us", "r2", NULL};
    if (want_object(r, o, ctx) || only_keys(r, o, ctx, keys)) return -1;
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "work");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "us");
    int n = cJSON_GetArraySize(w);
    if (!cJSON_IsArray(w) || !cJSON_IsArray(t) || cJSON_GetArraySize(t) != n || n < 2 ||
        n > COEFFS_CURVE_MAX) {
        base_seterr(r->err, "%s: %s: \"work\" and \"us\" must be arrays of one length, 2 to %d",
                    r->what, ctx, COEFFS_CURVE_MAX);
        return -1;
    }
    const cJSON *a = w->child, *b = t->child;
    for (int i = 0; i < n; i++, a = a->next, b = b->next) {
        if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b)) {
            base_seterr(r->err, "%s: %s: point %d is not two numbers", r->what, ctx, i);
            return -1;
        }
        cv->work[i] = a->valuedouble;
        cv->us[i] = b->valuedouble;
    }
    cv->n = n;
    cv->r2 = NAN;
    if (ju_num(o, "r2", &cv->r2, ctx, r->err)) return -1;
    char e2[BASE_ERRLEN];
    if (check_curve(cv, pctx, e2)) {
        base_seterr(r->err, "%s: %s", r->what, e2);
        return -1;
    }
    return 0;
}

/* Rows (columns) as a file gives them: a whole number of at most 1e9, else
 * 0, which check_band refuses (converting first could overflow an int). */
static int whole_rows(double v)
{
    return v >= 0 && v <= 1e9 && v == floor(v) ? (int)v : 0;
}

/* A layers entry's band table along ax ("band", "band_columns":
 * coeffs_band): numbers here, their rules in check_band. */
static int read_band(rd *r, const cJSON *o, coeffs_band *b, const band_axis *ax, const char *pctx)
{
    char ctx[800], e2[BASE_ERRLEN];
    snprintf(ctx, sizeof ctx, "%s.%s", pctx, ax->key);
    const char *const keys[] = {ax->extent, ax->units, "ratio", NULL};
    if (want_object(r, o, ctx) || only_keys(r, o, ctx, keys)) return -1;
    if (r->c->version < ax->version) {
        base_seterr(r->err, "%s: %s needs format version %d (the file says %d)", r->what, ctx,
                    ax->version, r->c->version);
        return -1;
    }
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, ax->extent);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, ax->units);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "ratio");
    int n = cJSON_GetArraySize(w);
    if (!cJSON_IsNumber(h) || !cJSON_IsArray(w) || !cJSON_IsArray(t) ||
        cJSON_GetArraySize(t) != n || n < 1 || n > COEFFS_BAND_MAX) {
        base_seterr(r->err,
                    "%s: %s: needs \"%s\" and arrays \"%s\" and \"ratio\" of one "
                    "length, 1 to %d",
                    r->what, ctx, ax->extent, ax->units, COEFFS_BAND_MAX);
        return -1;
    }
    b->height = whole_rows(h->valuedouble);
    const cJSON *a = w->child, *q = t->child;
    for (int i = 0; i < n; i++, a = a->next, q = q->next) {
        if (!cJSON_IsNumber(a) || !cJSON_IsNumber(q)) {
            base_seterr(r->err, "%s: %s: point %d is not two numbers", r->what, ctx, i);
            return -1;
        }
        b->rows[i] = whole_rows(a->valuedouble);
        b->ratio[i] = q->valuedouble;
    }
    b->n = n;
    if (check_band(b, ax, ctx, e2)) {
        base_seterr(r->err, "%s: %s", r->what, e2);
        return -1;
    }
    return 0;
}

/* A kinds entry (curve allowed, from version 5) or a layers entry (cv
 * NULL; band allowed from version 6, band_columns from 8). */
static int read_rates(rd *r, const cJSON *o, coeffs_rates *out, coeffs_curve *cv, const char *ctx)
{
    static const char *const keys[] = {"per_cycle", "overhead_us", "busy_w", "band",
                                       "band_columns", "corun", NULL};
    static const char *const ckeys[] = {"per_cycle", "overhead_us", "busy_w", "curve", NULL};
    if (want_object(r, o, ctx) || only_keys(r, o, ctx, cv ? ckeys : keys)) return -1;
    const cJSON *jc = cv ? cJSON_GetObjectItemCaseSensitive(o, "curve") : NULL;
    if (jc && r->c->version < COEFFS_VERSION_CURVE) {
        base_seterr(r->err, "%s: %s.curve needs format version %d (the file says %d)", r->what,
                    ctx, COEFFS_VERSION_CURVE, r->c->version);
        return -1;
    }
    if (jc && read_curve(r, jc, cv, ctx)) return -1;
    const cJSON *jb = cv ? NULL : cJSON_GetObjectItemCaseSensitive(o, BAND_ROWS.key);
    if (jb && read_band(r, jb, &out->band, &BAND_ROWS, ctx)) return -1;
    jb = cv ? NULL : cJSON_GetObjectItemCaseSensitive(o, BAND_COLS.key);
    if (jb && read_band(r, jb, &out->cband, &BAND_COLS, ctx)) return -1;
    if (jc && !cJSON_GetObjectItemCaseSensitive(o, "per_cycle")) {
        base_seterr(r->err, "%s: %s.curve needs the class's per_cycle beside it", r->what, ctx);
        return -1;
    }
    return read_value(r, o, "per_cycle", &out->per_cycle, 1, ctx) ||
                   read_value(r, o, "overhead_us", &out->overhead_us, 0, ctx) ||
                   read_value(r, o, "busy_w", &out->busy_w, 0, ctx) ||
                   (!cv && read_value(r, o, "corun", &out->corun, 1, ctx))
               ? -1
               : 0;
}

static int read_device(rd *r, const cJSON *o, coeffs_device *d, const char *kn)
{
    char ctx[300], c2[400];
    snprintf(ctx, sizeof ctx, "devices.%s", kn);
    static const char *const keys[] = {"overhead_us", "send_overhead_us", "copy_bandwidth_mbs",
                                       "step_spread", "busy_w",           "idle_w",
                                       "memory",      "kinds",            "layers",
                                       NULL};
    if (want_object(r, o, ctx) || only_keys(r, o, ctx, keys)) return -1;
    d->present = 1;
    if (read_value(r, o, "overhead_us", &d->overhead_us, 0, ctx) ||
        read_value(r, o, "send_overhead_us", &d->send_overhead_us, 0, ctx) ||
        read_value(r, o, "copy_bandwidth_mbs", &d->copy_bandwidth_mbs, 1, ctx) ||
        read_spread(r, o, &d->step_spread, ctx) || read_value(r, o, "busy_w", &d->busy_w, 0, ctx) ||
        read_value(r, o, "idle_w", &d->idle_w, 0, ctx))
        return -1;
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(o, "memory");
    if (mem) {
        static const char *const mk[] = {"coefficient", "bias_mb", "weights", NULL};
        snprintf(c2, sizeof c2, "%s.memory", ctx);
        if (want_object(r, mem, c2) || only_keys(r, mem, c2, mk) ||
            read_value(r, mem, "coefficient", &d->mem_coefficient, 0, c2) ||
            read_value(r, mem, "bias_mb", &d->mem_bias_mb, 0, c2))
            return -1;
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(mem, "weights");
        if (w) {
            snprintf(c2, sizeof c2, "%s.memory.weights", ctx);
            if (want_object(r, w, c2)) return -1;
            for (const cJSON *k = w->child; k; k = k->next) {
                net_kind kind;
                if (net_kind_parse(k->string, &kind)) {
                    base_seterr(r->err, "%s: %s: \"%s\" is not a layer kind", r->what, c2,
                             k->string);
                    return -1;
                }
                if (read_value(r, w, k->string, &d->mem_weights[kind], 0, c2)) return -1;
            }
        }
    }
    const cJSON *ks = cJSON_GetObjectItemCaseSensitive(o, "kinds");
    if (ks) {
        snprintf(c2, sizeof c2, "%s.kinds", ctx);
        if (want_object(r, ks, c2)) return -1;
        for (const cJSON *k = ks->child; k; k = k->next) {
            int cls;
            char c3[700];
            if (cost_class_parse(k->string, &cls)) {
                base_seterr(r->err,
                         "%s: %s: \"%s\" is not a layer kind or "
                         "ConvWinograd",
                         r->what, c2, k->string);
                return -1;
            }
            snprintf(c3, sizeof c3, "%s.%.200s", c2, k->string);
            if (read_rates(r, k, &d->cls[cls], &d->curve[cls], c3)) return -1;
        }
    }
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(o, "layers");
    if (ls) {
        snprintf(c2, sizeof c2, "%s.layers", ctx);
        if (want_object(r, ls, c2)) return -1;
        for (const cJSON *k = ls->child; k; k = k->next) {
            char c3[700];
            snprintf(c3, sizeof c3, "%s.%.200s", c2, k->string);
            if (!valid_key(k->string)) {
                base_seterr(r->err,
                         "%s: devices.%s.layers.%.200s: key must be "
                         "\"network/layer\" or \"network/*\"",
                         r->what, kn, k->string);
                return -1;
            }
            coeffs_rates *rt = add_key(d, k->string);
            if (!rt) {
                base_seterr(r->err, "%s: out of memory", r->what);
                return -1;
            }
            if (read_rates(r, k, rt, NULL, c3)) return -1;
            if ((rt->band.n || rt->cband.n) && key_is_wildcard(k->string)) {
                base_seterr(r->err, "%s: %s.%s: bands are measured per layer, not for \"network/*\"",
                            r->what, c3, rt->band.n ? BAND_ROWS.key : BAND_COLS.key);
                return -1;
            }
            char c4[720], e2[BASE_ERRLEN];
            snprintf(c4, sizeof c4, "%s.corun", c3);
            if (check_corun(&rt->corun, k->string, r->c->version, c4, e2)) {
                base_seterr(r->err, "%s: %s", r->what, e2);
                return -1;
            }
        }
    }
    return 0;
}

static int read_names(rd *r, const cJSON *root, const char *key, char ***arr, int *n, int required)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!a) {
        if (!required) return 0;
        base_seterr(r->err, "%s: missing \"%s\"", r->what, key);
        return -1;
    }
    if (!cJSON_IsArray(a)) {
        base_seterr(r->err, "%s: \"%s\" must be an array of names", r->what, key);
        return -1;
    }
    for (const cJSON *e = a->child; e; e = e->next) {
        if (!cJSON_IsString(e) || !base_name_ok(e->valuestring)) {
            base_seterr(r->err, "%s: \"%s\" must hold names (non-empty, without "
                     "control characters)", r->what, key);
            return -1;
        }
        if (push_name(arr, n, e->valuestring)) {
            base_seterr(r->err, "%s: out of memory", r->what);
            return -1;
        }
    }
    return 0;
}

cost_coeffs *coeffs_from_json(const char *text, const char *what, char *err)
{
    err[0] = 0;
    cJSON *root = ju_parse(text, what, err);
    if (!root) return NULL;
    cost_coeffs *c = coeffs_new();
    rd r = {c, what, err};
    const char *s;
    if (!c) {
        base_seterr(err, "%s: out of memory", what);
        goto fail;
    }
    const cJSON *jf = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsObject(root) || !cJSON_IsString(jf) ||
        strcmp(jf->valuestring, "dse-coefficients")) {
        base_seterr(err,
                 "%s: not a dse coefficients file (\"format\": "
                 "\"dse-coefficients\" missing)",
                 what);
        goto fail;
    }
    /* version 1 has no "arch": it is an unknown key there */
    static const char *const keys[] = {"format",   "version",     "platforms", "board",
                                       "date",     "networks",    "description", "devices",
                                       "links",    "arch",        "per_device", NULL};
    if (ju_int(root, "version", &c->version, 1, what, err)) goto fail;
    if (c->version < 1 || c->version > COEFFS_VERSION) {
        base_seterr(err,
                 "%s: coefficients format version %d; this program reads "
                 "versions 1 to %d",
                 what, c->version, COEFFS_VERSION);
        goto fail;
    }
    if (only_keys(&r, root, "top level", keys)) goto fail;
    if (c->version < 2 && cJSON_GetObjectItemCaseSensitive(root, "arch")) {
        base_seterr(err, "%s: \"arch\" needs format version 2 (the file says 1)", what);
        goto fail;
    }
    if (read_names(&r, root, "platforms", &c->platforms, &c->nplatforms, 1) ||
        read_names(&r, root, "networks", &c->networks, &c->nnetworks, 1))
        goto fail;
    s = NULL;
    if (ju_str(root, "board", &s, 1, what, err) || setstr(&c->board, s)) goto fail;
    s = NULL;
    if (ju_str(root, "date", &s, 1, what, err) || setstr(&c->date, s)) goto fail;
    s = NULL;
    if (ju_str(root, "description", &s, 0, what, err) || setstr(&c->description, s)) goto fail;
    s = NULL;
    if (ju_str(root, "arch", &s, 0, what, err) || setstr(&c->arch, s)) goto fail;
    if (s && !s[0]) {
        base_seterr(err, "%s: \"arch\" is empty", what);
        goto fail;
    }
    const cJSON *dv = cJSON_GetObjectItemCaseSensitive(root, "devices");
    if (!dv) {
        base_seterr(err, "%s: missing \"devices\"", what);
        goto fail;
    }
    static const char *const dk[] = {"cpu", "gpu", NULL};
    if (want_object(&r, dv, "devices") || only_keys(&r, dv, "devices", dk)) goto fail;
    for (int k = 0; k < 2; k++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(dv, plat_kind_name((plat_kind)k));
        if (o && read_device(&r, o, &c->dev[k], plat_kind_name((plat_kind)k))) goto fail;
    }
    const cJSON *pd = cJSON_GetObjectItemCaseSensitive(root, "per_device");
    if (pd) {
        static const char *const fkeys[] = {"compute_scale", NULL};
        if (want_object(&r, pd, "per_device")) goto fail;
        for (const cJSON *o = pd->child; o; o = o->next) {
            char ctx[200];
            snprintf(ctx, sizeof ctx, "per_device.%.100s", o->string);
            if (!o->string[0] || base_has_control(o->string)) {
                base_seterr(err, "%s: per_device: a device name must be non-empty, without "
                            "control characters", what);
                goto fail;
            }
            coeffs_devfactor *f = coeffs_device_factor(c, o->string);
            if (!f || want_object(&r, o, ctx) || only_keys(&r, o, ctx, fkeys) ||
                read_value(&r, o, "compute_scale", &f->compute_scale, 1, ctx))
                goto fail;
        }
    }
    const cJSON *lk = cJSON_GetObjectItemCaseSensitive(root, "links");
    if (lk) {
        static const char *const lkeys[] = {"same_device", "same_board", "network", "pairs", NULL};
        static const char *const vkeys[] = {"latency_us", "bandwidth_mbs", "pickup_us",
                                            "pull_bandwidth_mbs", NULL};
        static const char *const pkeys[] = {"a", "b", "latency_us", "bandwidth_mbs", "pickup_us",
                                            "pull_bandwidth_mbs", NULL};
        if (want_object(&r, lk, "links") || only_keys(&r, lk, "links", lkeys)) goto fail;
        const cJSON *jp = cJSON_GetObjectItemCaseSensitive(lk, "pairs");
        if (jp && !cJSON_IsArray(jp)) {
            base_seterr(err, "%s: links.pairs must be an array", what);
            goto fail;
        }
        int i = 0;
        for (const cJSON *o = jp ? jp->child : NULL; o; o = o->next, i++) {
            char ctx[100];
            const char *a = NULL, *b = NULL;
            snprintf(ctx, sizeof ctx, "links.pairs[%d]", i);
            if (want_object(&r, o, ctx) || only_keys(&r, o, ctx, pkeys) ||
                ju_str(o, "a", &a, 1, ctx, err) || ju_str(o, "b", &b, 1, ctx, err))
                goto fail;
            if (!strcmp(a, b)) {
                base_seterr(err, "%s: %s: a and b are the same device %.100s", what, ctx, a);
                goto fail;
            }
            for (int j = 0; j < c->npairs; j++)
                if ((!strcmp(c->pairs[j].a, a) && !strcmp(c->pairs[j].b, b)) ||
                    (!strcmp(c->pairs[j].a, b) && !strcmp(c->pairs[j].b, a))) {
                    base_seterr(err, "%s: %s: the pair %.100s, %.100s is given twice",
                             what, ctx, a, b);
                    goto fail;
                }
            coeffs_link *L = coeffs_pair_link(c, a, b);
            if (!L || read_value(&r, o, "latency_us", &L->latency_us, 0, ctx) ||
                read_value(&r, o, "bandwidth_mbs", &L->bandwidth_mbs, 1, ctx) ||
                read_value(&r, o, "pickup_us", &L->pickup_us, 0, ctx) ||
                read_pull(&r, o, &L->pull_bandwidth_mbs, ctx))
                goto fail;
        }
        for (int k = 0; k < LINK_CLASS_COUNT; k++) {
            char ctx[100];
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(lk, link_class_name((link_class)k));
            if (!o) continue;
            snprintf(ctx, sizeof ctx, "links.%s", link_class_name((link_class)k));
            if (want_object(&r, o, ctx) || only_keys(&r, o, ctx, vkeys) ||
                read_value(&r, o, "latency_us", &c->link[k].latency_us, 0, ctx) ||
                read_value(&r, o, "bandwidth_mbs", &c->link[k].bandwidth_mbs, 1, ctx) ||
                read_value(&r, o, "pickup_us", &c->link[k].pickup_us, 0, ctx) ||
                read_pull(&r, o, &c->link[k].pull_bandwidth_mbs, ctx))
                goto fail;
        }
    }
    if (c->version < 3 && c->nper > 0) {
        base_seterr(err, "%s: \"per_device\" needs format version 3 (the file says %d)", what,
                    c->version);
        goto fail;
    }
    cJSON_Delete(root);
    return c;
fail:
    if (c && err[0] == 0) base_seterr(err, "%s: out of memory", what);
    cJSON_Delete(root);
    coeffs_free(c);
    return NULL;
}

cost_coeffs *coeffs_load(const char *path, char *err)
{
    char *text = ju_read_file(path, err);
    if (!text) return NULL;
    cost_coeffs *c = coeffs_from_json(text, path, err);
    free(text);
    return c;
}

/* ---- writing ---- */

static int put_value(cJSON *o, const char *key, const coeffs_value *v)
{
    if (!coeffs_isset(v)) return 0;
    cJSON *e = cJSON_AddObjectToObject(o, key);
    if (!e || !cJSON_AddNumberToObject(e, "value", v->value) ||
        !cJSON_AddStringToObject(e, "source", coeffs_source_name(v->source)))
        return -1;
    if (isfinite(v->r2) && !cJSON_AddNumberToObject(e, "r2", v->r2)) return -1;
    if (isfinite(v->rmse) && !cJSON_AddNumberToObject(e, "rmse", v->rmse)) return -1;
    if (v->n > 0 && !cJSON_AddNumberToObject(e, "n", v->n)) return -1;
    if (v->note && !cJSON_AddStringToObject(e, "note", v->note)) return -1;
    return 0;
}

static int rates_set(const coeffs_rates *r)
{
    return coeffs_isset(&r->per_cycle) || coeffs_isset(&r->overhead_us) || coeffs_isset(&r->busy_w) ||
           r->band.n > 0 || r->cband.n > 0 || coeffs_isset(&r->corun);
}

static int put_band(cJSON *parent, const coeffs_band *b, const band_axis *ax)
{
    if (b->n == 0) return 0;
    double rows[COEFFS_BAND_MAX];
    for (int i = 0; i < b->n; i++) rows[i] = b->rows[i];
    cJSON *o = cJSON_AddObjectToObject(parent, ax->key);
    if (!o || !cJSON_AddNumberToObject(o, ax->extent, b->height)) return -1;
    cJSON *w = cJSON_CreateDoubleArray(rows, b->n);
    cJSON *t = w ? cJSON_CreateDoubleArray(b->ratio, b->n) : NULL;
    if (!t) {
        cJSON_Delete(w);
        return -1;
    }
    cJSON_AddItemToObject(o, ax->units, w);
    cJSON_AddItemToObject(o, "ratio", t);
    return 0;
}

static int put_curve(cJSON *parent, const coeffs_curve *cv)
{
    if (!cv || cv->n == 0) return 0;
    cJSON *o = cJSON_AddObjectToObject(parent, "curve");
    cJSON *w = o ? cJSON_CreateDoubleArray(cv->work, cv->n) : NULL;
    cJSON *t = w ? cJSON_CreateDoubleArray(cv->us, cv->n) : NULL;
    if (!t) {
        cJSON_Delete(w);
        return -1;
    }
    cJSON_AddItemToObject(o, "work", w);
    cJSON_AddItemToObject(o, "us", t);
    return isfinite(cv->r2) && !cJSON_AddNumberToObject(o, "r2", cv->r2) ? -1 : 0;
}

static int put_rates(cJSON *parent, const char *key, const coeffs_rates *r, const coeffs_curve *cv)
{
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    return !o || put_value(o, "per_cycle", &r->per_cycle) ||
                   put_value(o, "overhead_us", &r->overhead_us) ||
                   put_value(o, "busy_w", &r->busy_w) || put_curve(o, cv) ||
                   put_band(o, &r->band, &BAND_ROWS) || put_band(o, &r->cband, &BAND_COLS) ||
                   put_value(o, "corun", &r->corun)
               ? -1
               : 0;
}

static int put_names(cJSON *root, const char *key, char *const *names, int n)
{
    cJSON *a = cJSON_AddArrayToObject(root, key);
    if (!a) return -1;
    for (int i = 0; i < n; i++) {
        cJSON *s = cJSON_CreateString(names[i]);
        if (!s || !cJSON_AddItemToArray(a, s)) return -1;
    }
    return 0;
}

char *coeffs_to_json(const cost_coeffs *c)
{
    cJSON *root = cJSON_CreateObject();
    char *out = NULL;
    if (!root) return NULL;
    if (!cJSON_AddStringToObject(root, "format", "dse-coefficients") ||
        /* its own version: an older file's rates mean what that version
         * says (GlobalAveragePool's before 4), and it holds nothing a
         * later version added (the reader refused it) */
        !cJSON_AddNumberToObject(root, "version", c->version) ||
        put_names(root, "platforms", c->platforms, c->nplatforms) ||
        !cJSON_AddStringToObject(root, "board", c->board ? c->board : "") ||
        !cJSON_AddStringToObject(root, "date", c->date ? c->date : "") ||
        put_names(root, "networks", c->networks, c->nnetworks) ||
        (c->description && !cJSON_AddStringToObject(root, "description", c->description)) ||
        (c->arch && !cJSON_AddStringToObject(root, "arch", c->arch)))
        goto out;
    cJSON *dv = cJSON_AddObjectToObject(root, "devices");
    if (!dv) goto out;
    for (int k = 0; k < 2; k++) {
        const coeffs_device *d = &c->dev[k];
        if (!d->present) continue;
        cJSON *o = cJSON_AddObjectToObject(dv, plat_kind_name((plat_kind)k));
        if (!o || put_value(o, "overhead_us", &d->overhead_us) ||
            put_value(o, "send_overhead_us", &d->send_overhead_us) ||
            put_value(o, "copy_bandwidth_mbs", &d->copy_bandwidth_mbs) ||
            put_value(o, "step_spread", &d->step_spread) || put_value(o, "busy_w", &d->busy_w) || put_value(o, "idle_w", &d->idle_w))
            goto out;
        int anyw = 0;
        for (int j = 0; j < NET_KIND_COUNT; j++) anyw |= coeffs_isset(&d->mem_weights[j]);
        if (coeffs_isset(&d->mem_coefficient) || coeffs_isset(&d->mem_bias_mb) || anyw) {
            cJSON *m = cJSON_AddObjectToObject(o, "memory");
            if (!m || put_value(m, "coefficient", &d->mem_coefficient) ||
                put_value(m, "bias_mb", &d->mem_bias_mb))
                goto out;
            if (anyw) {
                cJSON *w = cJSON_AddObjectToObject(m, "weights");
                if (!w) goto out;
                for (int j = 0; j < NET_KIND_COUNT; j++)
                    if (put_value(w, net_kind_name((net_kind)j), &d->mem_weights[j])) goto out;
            }
        }
        int anyk = 0;
        for (int j = 0; j < COST_NCLASS; j++) anyk |= rates_set(&d->cls[j]);
        if (anyk) {
            cJSON *ks = cJSON_AddObjectToObject(o, "kinds");
            if (!ks) goto out;
            for (int j = 0; j < COST_NCLASS; j++)
                if (rates_set(&d->cls[j]) &&
                    put_rates(ks, cost_class_name(j), &d->cls[j], &d->curve[j]))
                    goto out;
        }
        if (d->nlayers) {
            cJSON *ls = cJSON_AddObjectToObject(o, "layers");
            if (!ls) goto out;
            for (int j = 0; j < d->nlayers; j++)
                if (put_rates(ls, d->layers[j].key, &d->layers[j].r, NULL)) goto out;
        }
    }
    int anyl = c->npairs > 0;
    for (int k = 0; k < LINK_CLASS_COUNT; k++)
        anyl |= coeffs_isset(&c->link[k].latency_us) || coeffs_isset(&c->link[k].bandwidth_mbs) ||
                coeffs_isset(&c->link[k].pickup_us) || coeffs_isset(&c->link[k].pull_bandwidth_mbs);
    if (anyl) {
        cJSON *lk = cJSON_AddObjectToObject(root, "links");
        if (!lk) goto out;
        for (int k = 0; k < LINK_CLASS_COUNT; k++) {
            if (!coeffs_isset(&c->link[k].latency_us) && !coeffs_isset(&c->link[k].bandwidth_mbs) &&
                !coeffs_isset(&c->link[k].pickup_us) && !coeffs_isset(&c->link[k].pull_bandwidth_mbs))
                continue;
            cJSON *o = cJSON_AddObjectToObject(lk, link_class_name((link_class)k));
            if (!o || put_value(o, "latency_us", &c->link[k].latency_us) ||
                put_value(o, "bandwidth_mbs", &c->link[k].bandwidth_mbs) ||
                put_value(o, "pickup_us", &c->link[k].pickup_us) ||
                put_value(o, "pull_bandwidth_mbs", &c->link[k].pull_bandwidth_mbs))
                goto out;
        }
        cJSON *ps = c->npairs ? cJSON_AddArrayToObject(lk, "pairs") : NULL;
        if (c->npairs && !ps) goto out;
        for (int i = 0; i < c->npairs; i++) {
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(ps, o) || !cJSON_AddStringToObject(o, "a", c->pairs[i].a) ||
                !cJSON_AddStringToObject(o, "b", c->pairs[i].b) ||
                put_value(o, "latency_us", &c->pairs[i].l.latency_us) ||
                put_value(o, "bandwidth_mbs", &c->pairs[i].l.bandwidth_mbs) ||
                put_value(o, "pickup_us", &c->pairs[i].l.pickup_us) ||
                put_value(o, "pull_bandwidth_mbs", &c->pairs[i].l.pull_bandwidth_mbs))
                goto out;
        }
    }
    int anyp = 0;
    for (int i = 0; i < c->nper; i++) anyp |= coeffs_isset(&c->per[i].compute_scale);
    if (anyp) {
        cJSON *pd = cJSON_AddObjectToObject(root, "per_device");
        if (!pd) goto out;
        for (int i = 0; i < c->nper; i++) {
            if (!coeffs_isset(&c->per[i].compute_scale)) continue;
            cJSON *o = cJSON_AddObjectToObject(pd, c->per[i].name);
            if (!o || put_value(o, "compute_scale", &c->per[i].compute_scale)) goto out;
        }
    }
    out = ju_print(root, 1);
out:
    cJSON_Delete(root);
    return out;
}

int coeffs_save(const cost_coeffs *c, const char *path, char *err)
{
    if (coeffs_check(c, err)) return -1;
    char *text = coeffs_to_json(c);
    if (!text) {
        base_seterr(err, "%s: out of memory serialising coefficients", path);
        return -1;
    }
    size_t len = strlen(text);
    char *t2 = realloc(text, len + 2);
    if (!t2) {
        free(text);
        base_seterr(err, "%s: out of memory", path);
        return -1;
    }
    t2[len] = '\n';
    t2[len + 1] = 0;
    int rc = ju_write_file_atomic(path, t2, err);
    free(t2);
    return rc;
}
