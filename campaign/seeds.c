/* seeds.c -- the genomes `dse run --init single,elim,...` puts into a
 * campaign's first population: each solver's mapping (solve/), encoded in
 * the campaign's chromosome as the closest genome (chrom_encode), and how
 * they are stored in and read back from the campaign's configuration.
 *
 * Invariant: a campaign's seeds are whatever its stored configuration
 * says; they are computed once, when the campaign is created, and never
 * again (a resume reads them, so a later change of a solver cannot change
 * a campaign).  Every stored genome is checked against the chromosome's
 * bounds when read.
 */
#include "seeds.h"
#include "base.h"

#include "solve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void seeds_free(camp_seeds *s)
{
    for (int i = 0; i < s->n; i++) free(s->method[i]);
    free(s->method);
    free(s->distance);
    free(s->latency_ms);
    free(s->parts);
    free(s->genomes);
    memset(s, 0, sizeof *s);
}

static int seeds_alloc(camp_seeds *s, int n, int nvar)
{
    memset(s, 0, sizeof *s);
    s->nvar = nvar;
    s->method = calloc((size_t)n + 1, sizeof *s->method);
    s->distance = calloc((size_t)n + 1, sizeof *s->distance);
    s->latency_ms = calloc((size_t)n + 1, sizeof *s->latency_ms);
    s->parts = calloc((size_t)n + 1, sizeof *s->parts);
    s->genomes = calloc((size_t)(n + 1) * nvar, sizeof *s->genomes);
    return s->method && s->distance && s->latency_ms && s->parts && s->genomes ? 0 : -1;
}

int seeds_solve(camp_seeds *s, const char *list, const net *n, const platform *pl, cost_model *cost,
                const chrom *ch, int split_mask, char *err)
{
    char buf[256], e[BASE_ERRLEN];
    int count = 1;
    for (const char *p = list; *p; p++) count += *p == ',';
    if (strlen(list) >= sizeof buf || seeds_alloc(s, count, chrom_length(ch))) {
        base_seterr(err, strlen(list) >= sizeof buf ? "--init: list too long" : "out of memory");
        return -1;
    }
    strcpy(buf, list);
    mapping *m = mapping_new(n->n, pl->ndev);
    if (!m) {
        base_seterr(err, "out of memory");
        return -1;
    }
    int rc = -1;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        for (int i = 0; i < s->n; i++)
            if (!strcmp(s->method[i], tok)) {
                base_seterr(err, "--init: %s listed twice", tok);
                goto done;
            }
        solve_problem p = {n, pl, cost, split_mask, 0};
        solve_result r;
        int src = solve_run(tok, &p, m, &r, e);
        if (src) {
            base_seterr(err, "--init %s: %.400s", tok, e);
            goto done;
        }
        int *g = s->genomes + (size_t)s->n * s->nvar;
        double d = chrom_encode(ch, m, g, e);
        if (d < 0 || !(s->method[s->n] = base_strdup(tok))) {
            base_seterr(err, "--init %s: %.400s", tok, d < 0 ? e : "out of memory");
            goto done;
        }
        s->distance[s->n] = d;
        s->latency_ms[s->n] = r.obj.latency_ms;
        for (int l = 0; l < n->n; l++)
            if (mapping_nslices(m, l) > s->parts[s->n]) s->parts[s->n] = mapping_nslices(m, l);
        s->n++;
    }
    if (s->n == 0) {
        base_seterr(err, "--init: no method given (single, greedy, elim, cluster, subgraph, memory)");
        goto done;
    }
    rc = 0;
done:
    mapping_free(m);
    return rc;
}

cJSON *seeds_to_json(const camp_seeds *s)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < s->n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "method", s->method[i]);
        cJSON_AddNumberToObject(o, "distance", s->distance[i]);
        cJSON_AddNumberToObject(o, "solver_latency_ms", s->latency_ms[i]);
        cJSON_AddItemToObject(o, "genome", cJSON_CreateIntArray(s->genomes + (size_t)i * s->nvar, s->nvar));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

int seeds_from_json(camp_seeds *s, const cJSON *a, int nvar, const int *lo, const int *hi, char *err)
{
    memset(s, 0, sizeof *s);
    if (!a) return 0; /* a campaign without seeds */
    int n = cJSON_GetArraySize(a);
    if (!cJSON_IsArray(a) || seeds_alloc(s, n, nvar)) {
        base_seterr(err, cJSON_IsArray(a) ? "out of memory" : "stored campaign configuration: \"init\" is not an array");
        return -1;
    }
    for (const cJSON *o = a->child; o; o = o->next) {
        const cJSON *jm = cJSON_GetObjectItemCaseSensitive(o, "method");
        const cJSON *jd = cJSON_GetObjectItemCaseSensitive(o, "distance");
        const cJSON *jl = cJSON_GetObjectItemCaseSensitive(o, "solver_latency_ms");
        const cJSON *jg = cJSON_GetObjectItemCaseSensitive(o, "genome");
        if (!cJSON_IsString(jm) || !cJSON_IsNumber(jd) || !cJSON_IsArray(jg) ||
            cJSON_GetArraySize(jg) != nvar) {
            base_seterr(err, "stored campaign configuration: init[%d] lacks a method, a "
                     "distance or a genome of %d genes", s->n, nvar);
            return -1;
        }
        int *g = s->genomes + (size_t)s->n * nvar, j = 0;
        for (const cJSON *v = jg->child; v; v = v->next, j++) {
            double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
            if (!(x >= lo[j] && x <= hi[j] && x == floor(x))) {
                base_seterr(err, "stored campaign configuration: init[%d] (%s): gene %d "
                         "outside %d..%d", s->n, jm->valuestring, j, lo[j], hi[j]);
                return -1;
            }
            g[j] = (int)x;
        }
        if (!(s->method[s->n] = base_strdup(jm->valuestring))) {
            base_seterr(err, "out of memory");
            return -1;
        }
        s->distance[s->n] = jd->valuedouble;
        s->latency_ms[s->n] = cJSON_IsNumber(jl) ? jl->valuedouble : NAN;
        s->n++;
    }
    return 0;
}
