/* campaign.c -- DSE campaigns: network + platform + coefficients +
 * chromosome -> NSGA-II problem, and the generation loop that logs into
 * the results database (see campaign.h for the invariants).
 *
 * Determinism: the engine draws every random number; evaluation is a pure
 * function of the genome (decode -> plan_build -> cost_eval into a
 * per-thread workspace); everything stored is derived from the engine's
 * state.  So a campaign is the same on any number of threads, and a
 * resume from the checkpoint stored with generation g continues exactly
 * as the uninterrupted run would have.
 */
#include "campaign.h"

#include "chrom.h"
#include "cost.h"
#include "jsonutil.h"
#include "mapping.h"
#include "net.h"
#include "nsga.h"
#include "plan.h"
#include "platform.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* One worker's scratch: nothing on the evaluation path allocates. */
typedef struct {
    mapping *map;
    plan *pl;
    cost_model *cost; /* the model keeps scratch: one per thread */
    char err[CAMP_ERRLEN];
} workspace;

struct camp {
    camp_options opt; /* strings below are owned copies */
    char *s_network, *s_platform, *s_coeffs, *s_chromosome, *s_split_kinds, *s_kind;
    char *config;
    net *net;
    platform *plat;
    cost_coeffs *coeffs;
    char warn[NET_ERRLEN]; /* the cost model's fallback warning, or "" */
    chrom *ch;
    int nvar;
    int *lo, *hi;
    int *fastest;
    double ref[COST_NOBJ];
    int threads;
    nsga_pool *pool;
    workspace *ws;
    /* batch handed to the workers */
    int job_n;
    const int *job_g;
    double *job_obj, *job_cv;
};


/* ---- evaluation ---- */

static int eval_one(camp *c, workspace *w, const int *g, double *obj, double *cv)
{
    char err[NET_ERRLEN];
    if (chrom_decode(c->ch, g, c->nvar, w->map, err) ||
        plan_build(w->pl, c->net, w->map, c->plat->source, err)) {
        snprintf(w->err, sizeof w->err, "%s", err);
        return -1;
    }
    cost_result r;
    if (cost_eval(w->cost, w->pl, &r, NULL)) {
        snprintf(w->err, sizeof w->err, "%s", cost_error(w->cost));
        return -1;
    }
    cost_objectives_of(&r, obj);
    *cv = r.violation_bytes;
    return 0;
}

/* Worker k evaluates its contiguous share of the batch with workspace k. */
static int eval_chunk(void *ctx, int k)
{
    camp *c = ctx;
    int n = c->job_n, t = c->threads;
    int a = (int)((long long)n * k / t), b = (int)((long long)n * (k + 1) / t);
    for (int i = a; i < b; i++)
        if (eval_one(c, &c->ws[k], c->job_g + (size_t)i * c->nvar, c->job_obj + (size_t)i * COST_NOBJ,
                     c->job_cv + i))
            return k + 1;
    return 0;
}

int camp_eval(camp *c, int n, const int *genomes, double *obj, double *cv, char *err)
{
    c->job_n = n;
    c->job_g = genomes;
    c->job_obj = obj;
    c->job_cv = cv;
    int rc;
    if (c->threads == 1 || n < 2 * c->threads) {
        int saved = c->threads;
        c->threads = 1;
        rc = eval_chunk(c, 0);
        c->threads = saved;
    } else {
        rc = nsga_pool_run(c->pool, c->threads, eval_chunk, c);
    }
    if (rc) {
        base_seterr(err, "evaluation failed: %s", c->ws[rc - 1].err);
        return -1;
    }
    return 0;
}

static int engine_eval(void *ctx, int n, const int *genomes, double *obj, double *cv, char *err)
{
    char e[CAMP_ERRLEN];
    if (camp_eval(ctx, n, genomes, obj, cv, e)) {
        snprintf(err, NSGA_ERRLEN, "%.*s", NSGA_ERRLEN - 1, e);
        return -1;
    }
    return 0;
}

double camp_hv(const camp *c, int n, const double *obj)
{
    if (n <= 0) return 0;
    double h = nsga_hv(n, COST_NOBJ, obj, c->ref);
    if (h < 0) return NAN;
    for (int k = 0; k < COST_NOBJ; k++) h /= c->ref[k];
    return h;
}

/* ---- building ---- */

void camp_free(camp *c)
{
    if (!c) return;
    if (c->pool) nsga_pool_destroy(c->pool);
    for (int k = 0; c->ws && k < c->threads; k++) {
        mapping_free(c->ws[k].map);
        plan_free(c->ws[k].pl);
        cost_free(c->ws[k].cost);
    }
    free(c->ws);
    chrom_free(c->ch);
    coeffs_free(c->coeffs);
    platform_free(c->plat);
    net_free(c->net);
    free(c->lo);
    free(c->hi);
    free(c->fastest);
    free(c->config);
    free(c->s_network);
    free(c->s_platform);
    free(c->s_coeffs);
    free(c->s_chromosome);
    free(c->s_split_kinds);
    free(c->s_kind);
    free(c);
}

/* Copies the option strings so the camp owns them. */
static int own_options(camp *c, const camp_options *o)
{
    c->opt = *o;
    c->opt.network = c->s_network = base_strdup(o->network);
    c->opt.platform = c->s_platform = base_strdup(o->platform);
    c->opt.coeffs = c->s_coeffs = base_strdup(o->coeffs);
    c->opt.chromosome = c->s_chromosome = base_strdup(o->chromosome ? o->chromosome : "hybrid");
    c->opt.split_kinds = c->s_split_kinds = base_strdup(o->split_kinds ? o->split_kinds : "conv,fc");
    c->opt.kind = c->s_kind = base_strdup(o->kind ? o->kind : "nsga");
    return (o->network && !c->s_network) || (o->platform && !c->s_platform) ||
                   (o->coeffs && !c->s_coeffs) || !c->s_chromosome || !c->s_split_kinds ||
                   !c->s_kind
               ? -1
               : 0;
}

/* Everything after network, platform and cost model are loaded: the
 * chromosome, bounds, the fastest device's genome, workers. */
static int setup(camp *c, int threads, char *err)
{
    char e[NET_ERRLEN];
    chrom_kind kind;
    if (chrom_kind_parse(c->opt.chromosome, &kind)) {
        base_seterr(err, "unknown chromosome \"%s\" (naive, hybrid or vertical)", c->opt.chromosome);
        return -1;
    }
    int mask = net_split_mask_parse(c->opt.split_kinds);
    if (mask < 0) {
        base_seterr(err, "bad --split-kinds \"%s\" (conv,fc, conv or fc)", c->opt.split_kinds);
        return -1;
    }
    if (kind == CHROM_HYBRID && (c->opt.splits < 1 || c->opt.splits > c->plat->ndev)) {
        base_seterr(err, "--splits %d out of range: the hybrid chromosome takes 1..%d (devices of %s)",
               c->opt.splits, c->plat->ndev, c->plat->name);
        return -1;
    }
    if (c->opt.pop < 4 || c->opt.pop % 2) {
        base_seterr(err, "--pop %d: the population must be even and at least 4", c->opt.pop);
        return -1;
    }
    c->ch = chrom_new(c->net, c->plat->ndev, kind, c->opt.splits, mask, e);
    if (!c->ch) {
        base_seterr(err, "%s", e);
        return -1;
    }
    c->nvar = chrom_length(c->ch);
    c->lo = malloc((size_t)c->nvar * sizeof(int));
    c->hi = malloc((size_t)c->nvar * sizeof(int));
    c->fastest = malloc((size_t)c->nvar * sizeof(int));
    if (!c->lo || !c->hi || !c->fastest) goto oom;
    chrom_bounds(c->ch, c->lo, c->hi);
    if (chrom_single_device(c->ch, platform_fastest(c->plat), c->fastest) &&
        chrom_single_device(c->ch, 0, c->fastest)) {
        base_seterr(err, "the %s chromosome cannot express a single-device mapping", c->opt.chromosome);
        return -1;
    }
    c->threads = threads < 1 ? 1 : threads;
    c->ws = calloc((size_t)c->threads, sizeof *c->ws);
    if (!c->ws) goto oom;
    for (int k = 0; k < c->threads; k++) {
        c->ws[k].map = mapping_new(c->net->n, c->plat->ndev);
        c->ws[k].pl = plan_new();
        char w[NET_ERRLEN]; /* the same warning for every thread: keep the first */
        c->ws[k].cost = cost_new(c->net, c->plat, c->coeffs, k ? w : c->warn, e);
        if (!c->ws[k].cost) {
            base_seterr(err, "%s", e);
            return -1;
        }
        if (!c->ws[k].map || !c->ws[k].pl) goto oom;
    }
    if (c->threads > 1 && !(c->pool = nsga_pool_create(c->threads))) {
        base_seterr(err, "cannot start %d threads", c->threads);
        return -1;
    }
    return 0;
oom:
    base_seterr(err, "out of memory");
    return -1;
}

/* The reference point: CAMP_REF_FACTOR x the worst single-device mapping
 * per objective (the engine's hypervolume needs every coordinate > 0).
 * Generous, so that trade-offs slower (or hungrier) than not partitioning
 * at all, e.g. the least-memory mappings, still count. */
static int compute_ref(camp *c, char *err)
{
    int nd = c->plat->ndev, m = 0;
    int *g = malloc((size_t)nd * c->nvar * sizeof(int));
    double *obj = malloc((size_t)nd * COST_NOBJ * sizeof(double)), *cv = malloc((size_t)nd * sizeof(double));
    if (!g || !obj || !cv) {
        free(g), free(obj), free(cv);
        base_seterr(err, "out of memory");
        return -1;
    }
    for (int d = 0; d < nd; d++)
        if (chrom_single_device(c->ch, d, g + (size_t)m * c->nvar) == 0) m++;
    int rc = camp_eval(c, m, g, obj, cv, err);
    for (int k = 0; k < COST_NOBJ && !rc; k++) {
        double w = 0;
        for (int i = 0; i < m; i++)
            if (obj[i * COST_NOBJ + k] > w) w = obj[i * COST_NOBJ + k];
        c->ref[k] = w > 0 ? CAMP_REF_FACTOR * w : 1.0;
    }
    free(g), free(obj), free(cv);
    return rc;
}

static cJSON *parse_or_null(const char *text)
{
    cJSON *o = text ? cJSON_Parse(text) : NULL;
    return o ? o : cJSON_CreateNull();
}

static int build_config(camp *c, const char *coeffs_text, char *err)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "format", "dse-campaign");
    cJSON_AddNumberToObject(o, "version", 1);
    cJSON_AddStringToObject(o, "kind", c->opt.kind);
    cJSON_AddStringToObject(o, "network_arg", c->opt.network);
    cJSON_AddStringToObject(o, "network_name", c->net->name);
    char *nj = net_to_json(c->net);
    cJSON_AddItemToObject(o, "network", parse_or_null(nj));
    free(nj);
    cJSON_AddStringToObject(o, "platform_arg", c->opt.platform);
    cJSON_AddStringToObject(o, "platform_name", c->plat->name);
    cJSON_AddItemToObject(o, "platform", parse_or_null(c->plat->text));
    if (c->opt.coeffs) cJSON_AddStringToObject(o, "coeffs_arg", c->opt.coeffs);
    else cJSON_AddNullToObject(o, "coeffs_arg");
    cJSON_AddItemToObject(o, "coeffs", parse_or_null(coeffs_text));
    cJSON_AddStringToObject(o, "chromosome", c->opt.chromosome);
    cJSON_AddNumberToObject(o, "splits", c->opt.splits);
    cJSON_AddStringToObject(o, "split_kinds", c->opt.split_kinds);
    cJSON_AddNumberToObject(o, "seed", (double)c->opt.seed);
    cJSON_AddNumberToObject(o, "pop", c->opt.pop);
    cJSON_AddNumberToObject(o, "gens", c->opt.gens);
    cJSON_AddNumberToObject(o, "time_budget", c->opt.time_budget);
    cJSON_AddNumberToObject(o, "max_points", (double)c->opt.max_points);
    cJSON_AddNumberToObject(o, "genome_length", c->nvar);
    cJSON_AddNumberToObject(o, "log10_space", chrom_log10_space(c->ch));
    cJSON_AddItemToObject(o, "ref", cJSON_CreateDoubleArray(c->ref, COST_NOBJ));
    cJSON *names = cJSON_AddArrayToObject(o, "objectives");
    for (int k = 0; k < COST_NOBJ; k++)
        cJSON_AddItemToArray(names, cJSON_CreateString(cost_objectives[k].name));
    cJSON *eng = cJSON_AddObjectToObject(o, "engine");
    nsga_options d;
    nsga_options_default(&d);
    cJSON_AddNumberToObject(eng, "pc", d.pc);
    cJSON_AddNumberToObject(eng, "pm", d.pm);
    cJSON_AddStringToObject(eng, "crossover", d.xover == NSGA_XO_UNIFORM ? "uniform" : "two-point");
    c->config = ju_print(o, 0);
    cJSON_Delete(o);
    if (!c->config || !nj) {
        base_seterr(err, "out of memory");
        return -1;
    }
    return 0;
}

camp *camp_new(const camp_options *o, int threads, void (*warn)(void *ctx, const char *line),
               void *warn_ctx, char *err)
{
    char e[NET_ERRLEN];
    char *coeffs_text = NULL;
    camp *c = calloc(1, sizeof *c);
    if (!c || own_options(c, o)) {
        base_seterr(err, "out of memory");
        goto fail;
    }
    if (!c->opt.network || !c->opt.platform) {
        base_seterr(err, "--network and --platform are required");
        goto fail;
    }
    if (!(c->net = net_open(c->opt.network, e)) || !(c->plat = platform_open(c->opt.platform, e))) {
        base_seterr(err, "%s", e);
        goto fail;
    }
    if (c->opt.coeffs) {
        if (!(coeffs_text = ju_read_file(c->opt.coeffs, e)) ||
            !(c->coeffs = coeffs_from_json(coeffs_text, c->opt.coeffs, e))) {
            base_seterr(err, "%s", e);
            goto fail;
        }
    } else if (!(c->coeffs = coeffs_default(c->plat))) {
        base_seterr(err, "out of memory");
        goto fail;
    }
    if (setup(c, threads, err)) goto fail;
    /* Built-in defaults are generic by design: warn about a file only. */
    if (c->warn[0] && warn && c->opt.coeffs) warn(warn_ctx, c->warn);
    if (compute_ref(c, err) || build_config(c, c->opt.coeffs ? coeffs_text : NULL, err)) goto fail;
    free(coeffs_text);
    return c;
fail:
    free(coeffs_text);
    camp_free(c);
    return NULL;
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *k, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

/* An integer of the stored configuration within [lo, hi] (absent: def);
 * a database is untrusted input, so nothing is cast unchecked. */
static int jint(const cJSON *o, const char *k, double lo, double hi, double def, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    double x = v ? (cJSON_IsNumber(v) ? v->valuedouble : NAN) : def;
    if (!(x >= lo && x <= hi && x == floor(x))) return -1;
    *out = x;
    return 0;
}

/* The stored objectives must be this build's (model/objectives.def), in
 * its order; configurations written before they were stored name none
 * and were made with energy, memory, latency. */
static int check_objectives(const cJSON *names, char *err)
{
    static const char *const before[] = {"energy", "memory", "latency"};
    int n = names ? cJSON_GetArraySize(names) : 3, same = n == COST_NOBJ;
    for (int k = 0; same && k < n; k++) {
        const cJSON *v = names ? cJSON_GetArrayItem(names, k) : NULL;
        const char *s = names ? (cJSON_IsString(v) ? v->valuestring : "") : before[k];
        same = !strcmp(s, cost_objectives[k].name);
    }
    if (same) return 0;
    char have[256] = "";
    for (int k = 0; k < COST_NOBJ; k++)
        snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", k ? ", " : "",
                 cost_objectives[k].name);
    base_seterr(err, "stored campaign was made with other objectives than this dse's (%s)", have);
    return -1;
}

camp *camp_from_config(const char *config, int threads, char *err)
{
    char e[NET_ERRLEN];
    camp *c = calloc(1, sizeof *c);
    cJSON *o = config ? ju_parse(config, "stored campaign configuration", e) : NULL;
    char *txt = NULL;
    if (!c || !o || !cJSON_IsObject(o)) {
        base_seterr(err, "%s", o ? "stored campaign configuration is not a JSON object" : config ? e : "no stored configuration");
        goto fail;
    }
    const char *fmt = jstr(o, "format");
    if (!fmt || strcmp(fmt, "dse-campaign") || jnum(o, "version", 0) != 1) {
        base_seterr(err, "stored campaign configuration is not a dse-campaign version 1");
        goto fail;
    }
    camp_options op = {0};
    op.network = jstr(o, "network_arg");
    op.platform = jstr(o, "platform_arg");
    op.coeffs = jstr(o, "coeffs_arg");
    op.chromosome = jstr(o, "chromosome");
    op.split_kinds = jstr(o, "split_kinds");
    op.kind = jstr(o, "kind");
    double splits, pop, gens, seed, maxp;
    if (jint(o, "splits", -1e6, 1e6, 0, &splits) || jint(o, "pop", 0, 1e8, 0, &pop) ||
        jint(o, "gens", 0, 1e9, 0, &gens) || jint(o, "seed", 0, 4294967295.0, 1, &seed) ||
        jint(o, "max_points", 0, 9e15, 0, &maxp)) {
        base_seterr(err, "stored campaign configuration has an option out of range");
        goto fail;
    }
    op.splits = (int)splits;
    op.pop = (int)pop;
    op.gens = (int)gens;
    op.time_budget = jnum(o, "time_budget", 0);
    op.seed = (unsigned long)seed;
    op.max_points = (long long)maxp;
    if (!(op.time_budget >= 0 && op.time_budget <= 1e9)) {
        base_seterr(err, "stored campaign configuration has an option out of range");
        goto fail;
    }
    if (own_options(c, &op)) {
        base_seterr(err, "out of memory");
        goto fail;
    }
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(o, "network");
    const cJSON *jp = cJSON_GetObjectItemCaseSensitive(o, "platform");
    const cJSON *jk = cJSON_GetObjectItemCaseSensitive(o, "coeffs");
    const cJSON *jr = cJSON_GetObjectItemCaseSensitive(o, "ref");
    if (check_objectives(cJSON_GetObjectItemCaseSensitive(o, "objectives"), err)) goto fail;
    if (!cJSON_IsObject(jn) || !cJSON_IsObject(jp) || cJSON_GetArraySize(jr) != COST_NOBJ) {
        base_seterr(err, "stored campaign configuration lacks the network, platform or reference point");
        goto fail;
    }
    txt = ju_print(jn, 0);
    if (!txt || !(c->net = net_from_json(txt, "stored network", e))) {
        base_seterr(err, "%s", txt ? e : "out of memory");
        goto fail;
    }
    free(txt);
    txt = ju_print(jp, 0);
    if (!txt || !(c->plat = platform_from_json(txt, "stored platform", e))) {
        base_seterr(err, "%s", txt ? e : "out of memory");
        goto fail;
    }
    free(txt);
    txt = NULL;
    if (cJSON_IsObject(jk)) {
        txt = ju_print(jk, 0);
        c->coeffs = txt ? coeffs_from_json(txt, "stored coefficients", e) : NULL;
        if (!c->coeffs) {
            base_seterr(err, "%s", txt ? e : "out of memory");
            goto fail;
        }
    } else if (!(c->coeffs = coeffs_default(c->plat))) {
        base_seterr(err, "out of memory");
        goto fail;
    }
    double stored[COST_NOBJ];
    for (int i = 0; i < COST_NOBJ; i++) {
        const cJSON *v = cJSON_GetArrayItem(jr, i);
        stored[i] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        if (!(stored[i] > 0 && isfinite(stored[i]))) {
            base_seterr(err, "stored campaign configuration has a bad reference point");
            goto fail;
        }
    }
    if (setup(c, threads, err) || compute_ref(c, err)) goto fail;
    /* The reference point is derived from what is stored (network,
     * platform, coefficients, chromosome) and recomputed here.  The stored
     * copy is exact (ju_print) and is what the checkpoint was made with;
     * databases written before numbers were stored exactly hold it rounded
     * to 15 digits, so a recomputed value within that rounding is the
     * original one and keeps their campaigns resumable.  (A larger
     * difference means the cost model changed: the stored value stays.) */
    for (int i = 0; i < COST_NOBJ; i++)
        if (!(fabs(c->ref[i] - stored[i]) <= 1e-14 * fabs(stored[i]))) c->ref[i] = stored[i];
    if (!(c->config = strdup(config))) {
        base_seterr(err, "out of memory");
        goto fail;
    }
    free(txt);
    cJSON_Delete(o);
    return c;
fail:
    free(txt);
    cJSON_Delete(o);
    camp_free(c);
    return NULL;
}

const char *camp_config(const camp *c) { return c->config; }
const camp_options *camp_get_options(const camp *c) { return &c->opt; }
const char *camp_network_name(const camp *c) { return c->net->name; }
const net *camp_net(const camp *c) { return c->net; }
const platform *camp_platform(const camp *c) { return c->plat; }
const cost_coeffs *camp_coeffs(const camp *c) { return c->coeffs; }
const char *camp_platform_name(const camp *c) { return c->plat->name; }
int camp_nvar(const camp *c) { return c->nvar; }
void camp_bounds(const camp *c, const int **lo, const int **hi)
{
    *lo = c->lo;
    *hi = c->hi;
}
double camp_log10_space(const camp *c) { return chrom_log10_space(c->ch); }

long long camp_space_size(const camp *c, long long limit)
{
    long long s = 1;
    for (int j = 0; j < c->nvar; j++) {
        long long r = (long long)c->hi[j] - c->lo[j] + 1;
        if (s > limit / r) return -1;
        s *= r;
    }
    return s <= limit ? s : -1;
}

/* ---- fronts ---- */

typedef struct {
    const double *obj;
    int i;
} front_key;

static int cmp_front(const void *a, const void *b)
{
    const front_key *x = a, *y = b;
    static const int order[COST_NOBJ] = {2, 0, 1}; /* latency, energy, memory */
    for (int k = 0; k < COST_NOBJ; k++) {
        double u = x->obj[order[k]], v = y->obj[order[k]];
        if (u < v) return -1;
        if (u > v) return 1;
    }
    return (x->i > y->i) - (x->i < y->i);
}

int camp_front_select(int n, const double *obj, const double *cv, const int *rank, int *idx)
{
    int *r = NULL, *sub = NULL, m = 0;
    front_key *keys = malloc((size_t)(n > 0 ? n : 1) * sizeof *keys);
    if (!keys) return -1;
    if (!rank) {
        /* rank the feasible points among themselves */
        r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
        sub = malloc((size_t)(n > 0 ? n : 1) * sizeof *sub);
        double *o = malloc((size_t)(n > 0 ? n : 1) * COST_NOBJ * sizeof *o);
        int nf = 0;
        if (!r || !sub || !o) {
            free(r), free(sub), free(o), free(keys);
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (!(cv && cv[i] > 0)) {
                memcpy(o + (size_t)nf * COST_NOBJ, obj + (size_t)i * COST_NOBJ, sizeof(double) * COST_NOBJ);
                sub[nf++] = i;
            }
        int *rr = malloc((size_t)(nf > 0 ? nf : 1) * sizeof *rr);
        if (!rr || (nf && nsga_sort_fast(nf, COST_NOBJ, o, NULL, rr) < 0)) {
            free(rr), free(r), free(sub), free(o), free(keys);
            return -1;
        }
        for (int i = 0; i < n; i++) r[i] = 1;
        for (int j = 0; j < nf; j++) r[sub[j]] = rr[j];
        free(rr), free(o);
        rank = r;
    }
    for (int i = 0; i < n; i++)
        if (rank[i] == 0 && !(cv && cv[i] > 0)) keys[m++] = (front_key){obj + (size_t)i * COST_NOBJ, i};
    qsort(keys, (size_t)m, sizeof *keys, cmp_front);
    int k = 0;
    for (int j = 0; j < m; j++) {
        if (k && !memcmp(keys[j].obj, obj + (size_t)idx[k - 1] * COST_NOBJ, sizeof(double) * COST_NOBJ))
            continue; /* same point as the previous: keep the lowest index */
        idx[k++] = keys[j].i;
    }
    free(keys), free(r), free(sub);
    return k;
}

int camp_load_front(res_db *db, long long id, res_point **out, char *err)
{
    char re[RES_ERRLEN];
    res_point *pts;
    *out = NULL;
    int n = res_front(db, id, &pts, re);
    if (n < 0) {
        base_seterr(err, "%s", re);
        return -1;
    }
    if (n > 0) {
        *out = pts;
        return n;
    }
    res_points_free(pts, n);
    res_campaign cm;
    if (res_campaign_get(db, id, &cm, re)) {
        base_seterr(err, "%s", re);
        return -1;
    }
    int finished = !strcmp(cm.status, "finished");
    res_campaign_free(&cm);
    if (finished) return 0; /* a finished campaign with an empty front */
    n = res_population(db, id, -1, &pts, re);
    if (n < 0) {
        base_seterr(err, "%s", re);
        return -1;
    }
    double *obj = malloc((size_t)(n > 0 ? n : 1) * COST_NOBJ * sizeof *obj);
    double *cv = malloc((size_t)(n > 0 ? n : 1) * sizeof *cv);
    int *rank = malloc((size_t)(n > 0 ? n : 1) * sizeof *rank);
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    res_point *f = calloc((size_t)(n > 0 ? n : 1), sizeof *f);
    int k = -1;
    if (obj && cv && rank && idx && f) {
        for (int i = 0; i < n; i++) {
            memcpy(obj + (size_t)i * COST_NOBJ, pts[i].obj, sizeof pts[i].obj);
            cv[i] = pts[i].cv;
            rank[i] = pts[i].rank;
        }
        k = camp_front_select(n, obj, cv, rank, idx);
    }
    if (k < 0) {
        base_seterr(err, "out of memory");
    } else {
        for (int j = 0; j < k; j++) {
            f[j] = pts[idx[j]];
            f[j].genome = pts[idx[j]].genome;
            pts[idx[j]].genome = NULL; /* moved */
            f[j].idx = j;
            f[j].src_idx = pts[idx[j]].idx;
            f[j].rank = -1;
            f[j].crowd = NAN;
        }
        *out = f;
        f = NULL;
    }
    res_points_free(pts, n);
    free(obj), free(cv), free(rank), free(idx), free(f);
    return k;
}

/* ---- export ---- */

int camp_decode(const camp *c, const int *genome, mapping *m, char *err)
{
    return chrom_decode(c->ch, genome, c->nvar, m, err);
}

int camp_picture(const camp *c, const int *genome, res_mapping_picture *pic, char *err)
{
    int nl = c->net->n, nd = c->plat->ndev, rc = -1;
    memset(pic, 0, sizeof *pic);
    mapping *m = mapping_new(nl, nd);
    plan *p = plan_new();
    double *share = calloc((size_t)nl * nd, sizeof *share);
    long long *bytes = calloc((size_t)nd * nd, sizeof *bytes);
    const char **dev = calloc((size_t)nd, sizeof *dev), **layer = calloc((size_t)nl, sizeof *layer);
    if (!m || !p || !share || !bytes || !dev || !layer) {
        base_seterr(err, "out of memory");
        goto done;
    }
    if (chrom_decode(c->ch, genome, c->nvar, m, err) || plan_build(p, c->net, m, c->plat->source, err))
        goto done;
    for (int l = 0; l < nl; l++) {
        layer[l] = c->net->layers[l].name;
        for (int k = 0; k < mapping_nslices(m, l); k++) {
            const map_slice *sl = &mapping_slices(m, l)[k];
            share[(size_t)l * nd + sl->dev] = (double)sl->nc / c->net->layers[l].out.c;
        }
    }
    for (int d = 0; d < nd; d++) dev[d] = c->plat->dev[d].name;
    for (int g = 0; g < p->nmsgs; g++) bytes[(size_t)p->msgs[g].from * nd + p->msgs[g].to] += p->msgs[g].bytes;
    *pic = (res_mapping_picture){nd, dev, nl, layer, share, bytes};
    share = NULL, bytes = NULL, dev = NULL, layer = NULL;
    rc = 0;
done:
    free(share), free(bytes), free(dev), free(layer);
    plan_free(p);
    mapping_free(m);
    return rc;
}

void camp_picture_free(res_mapping_picture *pic)
{
    free((void *)pic->share);
    free((void *)pic->bytes);
    free((void *)pic->dev);
    free((void *)pic->layer);
    memset(pic, 0, sizeof *pic);
}

int camp_export(const camp *c, const int *genome, const char *dir, char *err)
{
    char e[NET_ERRLEN], p1[4096], p2[4096];
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        base_seterr(err, "%s: cannot create folder: %s", dir, strerror(errno));
        return -1;
    }
    mapping *m = mapping_new(c->net->n, c->plat->ndev);
    if (!m) {
        base_seterr(err, "out of memory");
        return -1;
    }
    int rc = -1;
    if (chrom_decode(c->ch, genome, c->nvar, m, e)) goto done;
    snprintf(p1, sizeof p1, "%s/dse-mapping.json", dir);
    if (mapping_save(m, c->net, c->plat, p1, e)) goto done;
    snprintf(p1, sizeof p1, "%s/mapping.json", dir);
    snprintf(p2, sizeof p2, "%s/horizontal.json", dir);
    if (mapping_export_autodice(m, c->net, c->plat, p1, p2, e)) goto done;
    rc = 0;
done:
    if (rc) base_seterr(err, "%s", e);
    mapping_free(m);
    return rc;
}

/* ---- the generation loop ---- */

typedef struct {
    camp *c;
    res_db *db;
    long long id;
    const camp_hooks *h;
    double t0, wall0;      /* session start; campaign seconds before it */
    long gen0;             /* generation the session started from */
    long long evals0;
    int *gbuf, *rank;
    double *crowd;
    unsigned char *ckpt;
    size_t ckpt_cap;
} driver;

static int log_gen(driver *d, const nsga *e, char *err)
{
    camp *c = d->c;
    const nsga_stats *st = nsga_get_stats(e);
    int n = nsga_pop_size(e), nv = c->nvar;
    double *obj = malloc((size_t)n * COST_NOBJ * sizeof *obj), *cv = malloc((size_t)n * sizeof *cv);
    if (!obj || !cv) {
        free(obj), free(cv);
        base_seterr(err, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        memcpy(d->gbuf + (size_t)i * nv, nsga_genome_int(e, i), sizeof(int) * (size_t)nv);
        memcpy(obj + (size_t)i * COST_NOBJ, nsga_objectives(e, i), sizeof(double) * COST_NOBJ);
        cv[i] = nsga_cv(e, i);
        d->rank[i] = nsga_rank(e, i);
        d->crowd[i] = nsga_crowding(e, i);
    }
    size_t need = nsga_checkpoint(e, NULL, 0);
    if (need > d->ckpt_cap) {
        unsigned char *b = realloc(d->ckpt, need);
        if (!b) {
            free(obj), free(cv);
            base_seterr(err, "out of memory");
            return -1;
        }
        d->ckpt = b;
        d->ckpt_cap = need;
    }
    nsga_checkpoint(e, d->ckpt, d->ckpt_cap);
    double now = base_now(), box = 1;
    for (int k = 0; k < COST_NOBJ; k++) box *= c->ref[k];
    res_gen g = {st->generation, st->evaluations, st->cache_hits, st->hv / box, {0},
                 st->front_size, st->feasible, d->wall0 + (now - d->t0)};
    memcpy(g.best, st->best, sizeof g.best);
    res_pop pop = {n, nv, d->gbuf, obj, cv, d->rank, d->crowd};
    char re[RES_ERRLEN];
    int rc = res_generation_write(d->db, d->id, &g, &pop, d->ckpt, need, re);
    free(obj), free(cv);
    if (rc) {
        base_seterr(err, "%s", re);
        return -1;
    }
    if (d->h && d->h->progress) {
        double dt = now - d->t0;
        long done = st->generation - d->gen0;
        camp_progress p = {st->generation, c->opt.gens, st->evaluations, st->cache_hits,
                           dt > 0 ? (double)(st->evaluations - d->evals0) / dt : 0, g.hv,
                           {0}, g.wall,
                           done > 0 ? dt / (double)done * (double)(c->opt.gens - st->generation) : NAN,
                           st->front_size, st->feasible};
        memcpy(p.best, g.best, sizeof p.best);
        d->h->progress(d->h->ctx, &p);
    }
    return 0;
}

static int finish_front(camp *c, res_db *db, long long id, int n, const int *genomes,
                        const double *obj, const double *cv, const int *rank, long gen, char *err)
{
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    int *fg = malloc((size_t)(n > 0 ? n : 1) * (size_t)c->nvar * sizeof *fg);
    double *fo = malloc((size_t)(n > 0 ? n : 1) * COST_NOBJ * sizeof *fo);
    double *fc = malloc((size_t)(n > 0 ? n : 1) * sizeof *fc);
    int k = idx && fg && fo && fc ? camp_front_select(n, obj, cv, rank, idx) : -1;
    int rc = -1;
    if (k < 0) {
        base_seterr(err, "out of memory");
        goto done;
    }
    for (int j = 0; j < k; j++) {
        memcpy(fg + (size_t)j * c->nvar, genomes + (size_t)idx[j] * c->nvar, sizeof(int) * (size_t)c->nvar);
        memcpy(fo + (size_t)j * COST_NOBJ, obj + (size_t)idx[j] * COST_NOBJ, sizeof(double) * COST_NOBJ);
        fc[j] = cv ? cv[idx[j]] : 0;
    }
    res_pop fr = {k, c->nvar, fg, fo, fc, NULL, NULL};
    char re[RES_ERRLEN];
    if (res_finish(db, id, &fr, gen, idx, "finished", re)) {
        base_seterr(err, "%s", re);
        goto done;
    }
    rc = 0;
done:
    free(idx), free(fg), free(fo), free(fc);
    return rc;
}

static void mark_failed(res_db *db, long long id, const char *msg)
{
    char re[RES_ERRLEN];
    res_campaign_set_status(db, id, "failed", msg, re);
}

/* The campaign's own ends: --gens generations after the initial
 * population (0: the initial population only), and --time-budget seconds
 * of the campaign's wall time (summed over resumes; the engine's own clock
 * counts only its steps, not the storing of each generation). */
static int campaign_done(const camp *c, const nsga *e, const driver *d)
{
    if (nsga_get_stats(e)->generation >= c->opt.gens) return 1;
    if (c->opt.time_budget > 0 && d->wall0 + (base_now() - d->t0) >= c->opt.time_budget) return 1;
    return nsga_should_stop(e) != NSGA_STOP_NONE;
}

int camp_drive(camp *c, res_db *db, long long id, int resume, const camp_hooks *h, char *err)
{
    char ne[NSGA_ERRLEN], re[RES_ERRLEN];
    nsga_options o;
    nsga_options_default(&o);
    o.pop_size = c->opt.pop;
    o.seed = c->opt.seed;
    o.ref = c->ref;
    o.nseeds = 1;
    o.seed_int = c->fastest;
    o.max_gens = 0; /* the campaign decides when to stop (campaign_done) */
    o.max_seconds = 0;
    nsga_problem p = {0};
    p.kind = NSGA_INT;
    p.nvar = c->nvar;
    p.nobj = COST_NOBJ;
    p.ilo = c->lo;
    p.ihi = c->hi;
    p.eval_int = engine_eval;
    p.ctx = c;
    driver d = {c, db, id, h, base_now(), 0, 0, 0, NULL, NULL, NULL, NULL, 0};
    int n = c->opt.pop, rc = -1;
    d.gbuf = malloc((size_t)n * c->nvar * sizeof(int));
    d.rank = malloc((size_t)n * sizeof(int));
    d.crowd = malloc((size_t)n * sizeof(double));
    nsga *e = nsga_create(&p, &o, ne);
    if (!e || !d.gbuf || !d.rank || !d.crowd) {
        base_seterr(err, "%s", e ? "out of memory" : ne);
        goto done;
    }
    /* Restore first: a checkpoint that cannot be restored leaves the
     * campaign as it was (its status included). */
    int restored = 0;
    if (resume) {
        long cg;
        void *blob;
        size_t len;
        int found = res_checkpoint_get(db, id, &cg, &blob, &len, re);
        if (found < 0) {
            base_seterr(err, "%s", re);
            goto done;
        }
        if (found) {
            int r = nsga_restore(e, blob, len, ne);
            free(blob);
            if (r) {
                base_seterr(err, "campaign %lld: cannot restore its checkpoint: %s", id, ne);
                goto done;
            }
            res_gen *gs;
            int ng = res_generations(db, id, &gs, re);
            for (int i = 0; i < ng; i++)
                if (gs[i].gen == cg && !isnan(gs[i].wall)) d.wall0 = gs[i].wall;
            free(gs);
            if (res_truncate(db, id, cg, re)) {
                base_seterr(err, "%s", re);
                goto done;
            }
            restored = 1;
        } else if (res_truncate(db, id, -1, re)) {
            base_seterr(err, "%s", re);
            goto done;
        }
    }
    if (res_campaign_set_status(db, id, "running", NULL, re)) {
        base_seterr(err, "%s", re);
        goto done;
    }
    d.t0 = base_now();
    if (!restored) {
        if (nsga_init(e, ne)) {
            base_seterr(err, "%s", ne);
            mark_failed(db, id, err);
            goto done;
        }
        if (log_gen(&d, e, err)) goto done;
    }
    d.gen0 = nsga_get_stats(e)->generation;
    d.evals0 = nsga_get_stats(e)->evaluations;
    while (!campaign_done(c, e, &d)) {
        if (h && h->stop && *h->stop) {
            if (res_campaign_set_status(db, id, "interrupted", NULL, re)) {
                base_seterr(err, "%s", re);
                goto done;
            }
            rc = CAMP_INTERRUPTED;
            goto done;
        }
        if (nsga_step(e, ne)) {
            base_seterr(err, "%s", ne);
            mark_failed(db, id, err);
            goto done;
        }
        if (log_gen(&d, e, err)) goto done;
    }
    /* The final front, from the final population as the engine ranked it. */
    for (int i = 0; i < n; i++) {
        memcpy(d.gbuf + (size_t)i * c->nvar, nsga_genome_int(e, i), sizeof(int) * (size_t)c->nvar);
        d.rank[i] = nsga_rank(e, i);
    }
    {
        double *obj = malloc((size_t)n * COST_NOBJ * sizeof *obj), *cv = malloc((size_t)n * sizeof *cv);
        if (!obj || !cv) {
            free(obj), free(cv);
            base_seterr(err, "out of memory");
            goto done;
        }
        for (int i = 0; i < n; i++) {
            memcpy(obj + (size_t)i * COST_NOBJ, nsga_objectives(e, i), sizeof(double) * COST_NOBJ);
            cv[i] = nsga_cv(e, i);
        }
        int r = finish_front(c, db, id, n, d.gbuf, obj, cv, d.rank, nsga_get_stats(e)->generation, err);
        free(obj), free(cv);
        if (r) goto done;
    }
    rc = CAMP_FINISHED;
done:
    nsga_destroy(e);
    free(d.gbuf), free(d.rank), free(d.crowd), free(d.ckpt);
    return rc;
}

/* ---- exhaustive enumeration ---- */

typedef struct {
    int n, cap, nvar;
    int *g;
    double *obj;
    long long *order; /* enumeration index, to keep the earliest of equal points */
} archive;

static int arch_reserve(archive *a, int need)
{
    if (need <= a->cap) return 0;
    int cap = a->cap ? a->cap : 1024;
    while (cap < need) cap *= 2;
    int *g = realloc(a->g, (size_t)cap * a->nvar * sizeof *g);
    if (g) a->g = g;
    double *o = realloc(a->obj, (size_t)cap * COST_NOBJ * sizeof *o);
    if (o) a->obj = o;
    long long *r = realloc(a->order, (size_t)cap * sizeof *r);
    if (r) a->order = r;
    if (!g || !o || !r) return -1;
    a->cap = cap;
    return 0;
}

/* Keep the non-dominated, distinct points of the archive (which already
 * holds the batch's feasible points appended). */
static int arch_reduce(archive *a)
{
    int n = a->n;
    if (n == 0) return 0;
    int *rank = malloc((size_t)n * sizeof *rank), *idx = malloc((size_t)n * sizeof *idx);
    if (!rank || !idx || nsga_sort_fast(n, COST_NOBJ, a->obj, NULL, rank) < 0) {
        free(rank), free(idx);
        return -1;
    }
    /* camp_front_select dedups by objectives keeping the lowest index; the
     * archive is in enumeration order, so that is the earliest genome. */
    int k = camp_front_select(n, a->obj, NULL, rank, idx);
    free(rank);
    if (k < 0) {
        free(idx);
        return -1;
    }
    /* back into enumeration order, compacting in place */
    int *keep = calloc((size_t)n, sizeof *keep);
    if (!keep) {
        free(idx);
        return -1;
    }
    for (int j = 0; j < k; j++) keep[idx[j]] = 1;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!keep[i]) continue;
        if (m != i) {
            memmove(a->g + (size_t)m * a->nvar, a->g + (size_t)i * a->nvar, sizeof(int) * (size_t)a->nvar);
            memmove(a->obj + (size_t)m * COST_NOBJ, a->obj + (size_t)i * COST_NOBJ, sizeof(double) * COST_NOBJ);
            a->order[m] = a->order[i];
        }
        m++;
    }
    a->n = m;
    free(keep), free(idx);
    return 0;
}

int camp_exhaust(camp *c, res_db *db, long long id, const camp_hooks *h, char *err)
{
    char re[RES_ERRLEN];
    long long total = camp_space_size(c, c->opt.max_points > 0 ? c->opt.max_points : 0);
    if (total < 0) {
        base_seterr(err, "the %s space of %s on %s has 10^%.1f genomes, more than --max-points %lld",
               c->opt.chromosome, c->net->name, c->plat->name, chrom_log10_space(c->ch),
               c->opt.max_points);
        return -1;
    }
    enum { B = 4096 };
    int nv = c->nvar, rc = -1;
    int *g = malloc((size_t)B * nv * sizeof *g), *cur = calloc((size_t)nv, sizeof *cur);
    double *obj = malloc((size_t)B * COST_NOBJ * sizeof *obj), *cv = malloc((size_t)B * sizeof *cv);
    archive a = {0, 0, nv, NULL, NULL, NULL};
    double t0 = base_now();
    long long done = 0;
    if (!g || !cur || !obj || !cv) {
        base_seterr(err, "out of memory");
        goto out;
    }
    memcpy(cur, c->lo, sizeof(int) * (size_t)nv);
    while (done < total) {
        int nb = 0;
        /* the next batch, last gene fastest (lexicographic order) */
        while (nb < B && done + nb < total) {
            memcpy(g + (size_t)nb * nv, cur, sizeof(int) * (size_t)nv);
            nb++;
            for (int j = nv - 1; j >= 0; j--) {
                if (cur[j] < c->hi[j]) {
                    cur[j]++;
                    break;
                }
                cur[j] = c->lo[j];
            }
        }
        if (camp_eval(c, nb, g, obj, cv, err)) {
            mark_failed(db, id, err);
            goto out;
        }
        int feas = 0;
        for (int i = 0; i < nb; i++) feas += !(cv[i] > 0);
        if (arch_reserve(&a, a.n + feas)) {
            base_seterr(err, "out of memory");
            goto out;
        }
        for (int i = 0; i < nb; i++) {
            if (cv[i] > 0) continue;
            memcpy(a.g + (size_t)a.n * nv, g + (size_t)i * nv, sizeof(int) * (size_t)nv);
            memcpy(a.obj + (size_t)a.n * COST_NOBJ, obj + (size_t)i * COST_NOBJ, sizeof(double) * COST_NOBJ);
            a.order[a.n++] = done + i;
        }
        if (arch_reduce(&a)) {
            base_seterr(err, "out of memory");
            goto out;
        }
        done += nb;
        if (h && h->progress) {
            double dt = base_now() - t0;
            camp_progress p = {0, 0, done, 0, dt > 0 ? (double)done / dt : 0,
                               camp_hv(c, a.n, a.obj), {NAN, NAN, NAN}, dt,
                               dt / (double)done * (double)(total - done), a.n, a.n};
            for (int k = 0; k < COST_NOBJ; k++)
                for (int i = 0; i < a.n; i++)
                    if (!(a.obj[i * COST_NOBJ + k] >= p.best[k])) p.best[k] = a.obj[i * COST_NOBJ + k];
            h->progress(h->ctx, &p);
        }
        if (h && h->stop && *h->stop && done < total) {
            if (res_campaign_set_status(db, id, "interrupted", NULL, re)) base_seterr(err, "%s", re);
            else rc = CAMP_INTERRUPTED;
            goto out;
        }
    }
    {
        /* generation 0 = the exact front; the front table = the same, sorted */
        res_gen st = {0, total, 0, camp_hv(c, a.n, a.obj), {NAN, NAN, NAN}, a.n, a.n, base_now() - t0};
        for (int k = 0; k < COST_NOBJ; k++)
            for (int i = 0; i < a.n; i++)
                if (!(a.obj[i * COST_NOBJ + k] >= st.best[k])) st.best[k] = a.obj[i * COST_NOBJ + k];
        int *rank = calloc((size_t)(a.n > 0 ? a.n : 1), sizeof *rank);
        if (!rank) {
            base_seterr(err, "out of memory");
            goto out;
        }
        res_pop pop = {a.n, nv, a.g, a.obj, NULL, rank, NULL};
        int r = res_generation_write(db, id, &st, &pop, NULL, 0, re);
        free(rank);
        if (r) {
            base_seterr(err, "%s", re);
            goto out;
        }
        if (finish_front(c, db, id, a.n, a.g, a.obj, NULL, NULL, 0, err)) goto out;
    }
    rc = CAMP_FINISHED;
out:
    free(g), free(cur), free(obj), free(cv);
    free(a.g), free(a.obj), free(a.order);
    return rc;
}
