/* exhaust.c -- dse exhaust (camp_exhaust): every genome of a small space
 * evaluated, the exact front stored as the campaign's front.
 * Invariant: of equal objective vectors the earliest genome in enumeration
 * order is kept, so the front does not depend on batch sizes. */
#include "campaign_internal.h"

#include "chrom.h"
#include "cost.h"
#include "jsonutil.h"
#include "mapping.h"
#include "nsga.h"
#include "plan.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
    char re[BASE_ERRLEN];
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
            camp_mark_failed(db, id, err);
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
        if (camp_finish_front(c, db, id, a.n, a.g, a.obj, NULL, NULL, NULL, NULL, err)) goto out;
    }
    rc = CAMP_FINISHED;
out:
    free(g), free(cur), free(obj), free(cv);
    free(a.g), free(a.obj), free(a.order);
    return rc;
}
