/* campaign.c -- DSE campaigns: network + platform + coefficients +
 * chromosome -> NSGA-II problem, and the generation loop that logs into
 * the results database (see campaign.h for the invariants).
 *
 * Determinism: the engine draws every random number; evaluation is a pure
 * function of the genome (decode -> camp_plan: the halo choices,
 * plan_build and cost_eval, into a per-thread workspace); everything stored is derived from the engine's
 * state.  So a campaign is the same on any number of threads, and a
 * resume from the checkpoint stored with generation g continues exactly
 * as the uninterrupted run would have.
 */
#include "campaign_internal.h"

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
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* One worker's scratch: nothing on the evaluation path allocates. */


/* ---- evaluation ---- */

int camp_plan(const camp *c, cost_model *cm, mapping *m, plan *p, cost_result *r, char *err)
{
    if (c->halos) return cost_pick_halos(cm, m, p, c->plat->source, r, err) < 0 ? -1 : 0;
    memset(m->recompute, 0, (size_t)m->nlayers);
    if (plan_build(p, c->net, m, c->plat->source, err)) return -1;
    if (r && cost_eval(cm, p, r, NULL)) {
        base_seterr(err, "%s", cost_error(cm));
        return -1;
    }
    return 0;
}

static int eval_one(camp *c, workspace *w, const int *g, double *obj, double *cv)
{
    char err[BASE_ERRLEN];
    cost_result r;
    /* Decode, choose each row cut's halos (recompute or fetch), plan and
     * evaluate (cost_pick_halos evaluates the Plan it settles on). */
    if (chrom_decode(c->ch, g, c->nvar, w->map, err) || camp_plan(c, w->cost, w->map, w->pl, &r, err)) {
        snprintf(w->err, sizeof w->err, "%s", err);
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
    seeds_free(&c->seeds);
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
    c->opt.init = NULL; /* used by camp_new only; the seeds are what is kept */
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
    char e[BASE_ERRLEN];
    chrom_kind kind;
    if (chrom_kind_parse(c->opt.chromosome, &kind)) {
        base_seterr(err, "unknown chromosome \"%s\" (naive, hybrid, vertical or spatial)",
                    c->opt.chromosome);
        return -1;
    }
    int mask = net_split_mask_parse(c->opt.split_kinds);
    if (mask < 0) {
        base_seterr(err, "bad --split-kinds \"%s\" (conv,fc, conv or fc)", c->opt.split_kinds);
        return -1;
    }
    if ((kind == CHROM_HYBRID || kind == CHROM_SPATIAL) &&
        (c->opt.splits < 1 || c->opt.splits > c->plat->ndev)) {
        base_seterr(err, "--splits %d out of range: the %s chromosome takes 1..%d (devices of %s)",
               c->opt.splits, chrom_kind_name(kind), c->plat->ndev, c->plat->name);
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
    if (kind == CHROM_SPATIAL && chrom_set_cut_mode(c->ch, (chrom_cut_mode)c->cuts)) {
        base_seterr(err, "spatial chromosome: no cut mode %d", c->cuts);
        return -1;
    }
    if (kind != CHROM_SPATIAL && c->opt.cuts) {
        base_seterr(err, "--cuts is for the spatial chromosome, not %s", chrom_kind_name(kind));
        return -1;
    }
    if (kind == CHROM_SPATIAL && c->bands1) chrom_band_kinds(c->ch, CAMP_BANDS_1);
    if (chrom_restrict(c->ch, c->plat, e)) { /* devices with a "supports" list */
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
        char w[BASE_ERRLEN]; /* the same warning for every thread: keep the first */
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
    /* The network's weights file by its absolute path: `dse validate` and
     * `dse resume` read the stored network from elsewhere than this
     * process's folder. */
    char *rel = c->net->weights_path, *abs = NULL, cwd[4096];
    if (rel && rel[0] != '/' && getcwd(cwd, sizeof cwd) &&
        (abs = malloc(strlen(cwd) + strlen(rel) + 2)))
        sprintf(abs, "%s/%s", cwd, rel);
    if (abs) c->net->weights_path = abs;
    /* Without the model's recorded size: a campaign's network is checked
     * layer by layer when its weights are loaded, as before the record
     * existed ("import it again" is nothing a stored campaign can do). */
    int64_t wbytes = c->net->weights_bytes;
    c->net->weights_bytes = 0;
    char *nj = net_to_json(c->net);
    c->net->weights_bytes = wbytes;
    if (abs) c->net->weights_path = rel, free(abs);
    cJSON_AddItemToObject(o, "network", parse_or_null(nj));
    free(nj);
    cJSON_AddStringToObject(o, "platform_arg", c->opt.platform);
    cJSON_AddStringToObject(o, "platform_name", c->plat->name);
    cJSON_AddItemToObject(o, "platform", parse_or_null(c->plat->text));
    if (c->opt.coeffs) cJSON_AddStringToObject(o, "coeffs_arg", c->opt.coeffs);
    else cJSON_AddNullToObject(o, "coeffs_arg");
    cJSON_AddItemToObject(o, "coeffs", parse_or_null(coeffs_text));
    cJSON_AddStringToObject(o, "chromosome", c->opt.chromosome);
    if (c->halos) cJSON_AddStringToObject(o, "halos", CAMP_HALO_RULE);
    if (chrom_get_kind(c->ch) == CHROM_SPATIAL) {
        cJSON_AddStringToObject(o, "cuts", chrom_cut_mode_name((chrom_cut_mode)c->cuts));
        if (!c->bands1) cJSON_AddStringToObject(o, "bands", CAMP_BAND_RULE);
    }
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
    if (c->seeds.n) cJSON_AddItemToObject(o, "init", seeds_to_json(&c->seeds));
    if (c->seeds_once) cJSON_AddStringToObject(o, "seeds", "distinct");
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
    char e[BASE_ERRLEN];
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
        c->coeffs_given = 1;
    } else if (!(c->coeffs = coeffs_default(c->plat))) {
        base_seterr(err, "out of memory");
        goto fail;
    }
    c->halos = 1; /* new campaigns: the cost model chooses (docs/spatial.md) */
    c->seeds_once = 1; /* and put each distinct seed genome in once */
    /* and spatial cut genes choose channels or bands along the longer side
     * unless --cuts says otherwise */
    chrom_cut_mode cm = CHROM_CUTS_BANDS;
    if (o->cuts && chrom_cut_mode_parse(o->cuts, &cm)) {
        base_seterr(err, "--cuts \"%.100s\": channels,bands, channels,rows or channels,rows,columns",
                    o->cuts);
        goto fail;
    }
    c->cuts = cm;
    if (setup(c, threads, err)) goto fail;
    c->opt.cuts = NULL; /* the caller's text, read by setup only: the mode is c->cuts */
    /* Built-in defaults are generic by design: warn about a file only. */
    if (c->warn[0] && warn && c->opt.coeffs) warn(warn_ctx, c->warn);
    if (compute_ref(c, err)) goto fail;
    if (o->init && !strcmp(c->opt.kind, "nsga")) { /* dse run --init: solve once, keep the genomes */
        if (seeds_solve(&c->seeds, o->init, c->net, c->plat, c->ws[0].cost, c->ch, chrom_split_mask(c->ch), e)) {
            base_seterr(err, "%s", e);
            goto fail;
        }
        /* what the first population will hold: each distinct genome once */
        int nseed = 0, *first = camp_initial_genomes(c, &nseed);
        if (!first) {
            base_seterr(err, "out of memory");
            goto fail;
        }
        free(first);
        if (nseed > c->opt.pop) {
            base_seterr(err, "--pop %d is smaller than the %d distinct seeded genomes (the fastest device's and "
                        "--init's)", c->opt.pop, nseed);
            goto fail;
        }
    }
    if (build_config(c, c->opt.coeffs ? coeffs_text : NULL, err)) goto fail;
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
    char e[BASE_ERRLEN];
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
    /* Halo choices: the rule's name, or absent in configurations stored
     * before the choice existed, whose points were evaluated fetching every
     * halo (so they resume and export as they were evaluated).  Another
     * name is a rule this dse does not have: refused, never re-evaluated
     * with another. */
    const char *halos = jstr(o, "halos");
    if (cJSON_GetObjectItemCaseSensitive(o, "halos") && (!halos || strcmp(halos, CAMP_HALO_RULE))) {
        base_seterr(err, "stored campaign configuration has \"halos\" %s%s%s, a rule this dse "
                    "does not have (it has \"%s\")", halos ? "\"" : "", halos ? halos : "(not a string)",
                    halos ? "\"" : "", CAMP_HALO_RULE);
        goto fail;
    }
    c->halos = halos != NULL;
    /* Spatial cut genes: "cuts" names the mode (chrom_cut_mode), absent in
     * configurations stored before column cuts, whose genes chose channels
     * or rows: they resume so, as they ran.  A name this dse does not
     * have is refused. */
    const cJSON *jc = cJSON_GetObjectItemCaseSensitive(o, "cuts");
    chrom_cut_mode cm = CHROM_CUTS_ROWS;
    if (jc && chrom_cut_mode_parse(cJSON_IsString(jc) ? jc->valuestring : NULL, &cm)) {
        base_seterr(err, "stored campaign configuration has \"cuts\" that is not channels,bands, "
                    "channels,rows or channels,rows,columns");
        goto fail;
    }
    c->cuts = cm;
    /* Kinds cut into bands: "bands" names the set, absent in configurations
     * stored before 2026-11-29 (CAMP_BANDS_1's kinds alone: they resume and
     * export as they were evaluated); another name is refused. */
    const char *bands = jstr(o, "bands");
    if (cJSON_GetObjectItemCaseSensitive(o, "bands") && (!bands || strcmp(bands, CAMP_BAND_RULE))) {
        base_seterr(err, "stored campaign configuration has \"bands\" %s%s%s, a set of kinds this "
                    "dse does not have (it has \"%s\")", bands ? "\"" : "",
                    bands ? bands : "(not a string)", bands ? "\"" : "", CAMP_BAND_RULE);
        goto fail;
    }
    c->bands1 = bands == NULL;
    /* Seed copies: "seeds": "distinct", absent in configurations stored
     * before (their first population had every --init genome, copies too:
     * they start again so after a crash); anything else is refused. */
    const char *sm = jstr(o, "seeds");
    if (cJSON_GetObjectItemCaseSensitive(o, "seeds") && (!sm || strcmp(sm, "distinct"))) {
        base_seterr(err, "stored campaign configuration has a \"seeds\" that is not \"distinct\"");
        goto fail;
    }
    c->seeds_once = sm != NULL;
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
        c->coeffs_given = 1;
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
    if (seeds_from_json(&c->seeds, cJSON_GetObjectItemCaseSensitive(o, "init"), c->nvar, c->lo, c->hi, e)) {
        base_seterr(err, "%s", e);
        goto fail;
    }
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
int camp_coeffs_given(const camp *c) { return c->coeffs_given; }
const char *camp_platform_name(const camp *c) { return c->plat->name; }
int camp_nvar(const camp *c) { return c->nvar; }
void camp_bounds(const camp *c, const int **lo, const int **hi)
{
    *lo = c->lo;
    *hi = c->hi;
}
const double *camp_ref(const camp *c) { return c->ref; }
int *camp_initial_genomes(const camp *c, int *n)
{
    size_t nv = (size_t)c->nvar;
    int *g = malloc((size_t)(1 + c->seeds.n) * nv * sizeof *g);
    if (!g) return NULL;
    memcpy(g, c->fastest, nv * sizeof *g);
    int k = 1;
    for (int s = 0; s < c->seeds.n; s++) {
        const int *x = c->seeds.genomes + (size_t)s * nv;
        int j = 0;
        while (c->seeds_once && j < k && memcmp(g + (size_t)j * nv, x, nv * sizeof *x)) j++;
        if (!c->seeds_once || j == k) memcpy(g + (size_t)k++ * nv, x, nv * sizeof *x);
    }
    *n = k;
    return g;
}
const camp_seeds *camp_get_seeds(const camp *c) { return &c->seeds; }
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
