/* drive.c -- running a campaign generation by generation into the
 * results database (camp_drive), and ending it (the final front).
 * Invariant: every generation is stored with the engine checkpoint of that
 * generation in one transaction, so a resumed campaign continues exactly
 * as the uninterrupted run would have. */
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

/* ---- the generation loop ---- */

/* The engine's evaluation callback: the campaign's model. */
static int engine_eval(void *ctx, int n, const int *genomes, double *obj, double *cv, char *err)
{
    return camp_eval(ctx, n, genomes, obj, cv, err) ? -1 : 0;
}


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
    char re[BASE_ERRLEN];
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

int camp_finish_front(camp *c, res_db *db, long long id, int n, const int *genomes,
                      const double *obj, const double *cv, const int *rank, const long *src_gen,
                      const int *src_idx, char *err)
{
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    int *fi = malloc((size_t)(n > 0 ? n : 1) * sizeof *fi);
    long *fgen = malloc((size_t)(n > 0 ? n : 1) * sizeof *fgen);
    int *fg = malloc((size_t)(n > 0 ? n : 1) * (size_t)c->nvar * sizeof *fg);
    double *fo = malloc((size_t)(n > 0 ? n : 1) * COST_NOBJ * sizeof *fo);
    double *fc = malloc((size_t)(n > 0 ? n : 1) * sizeof *fc);
    int k = idx && fi && fgen && fg && fo && fc ? camp_front_select(n, obj, cv, rank, idx) : -1;
    int rc = -1;
    if (k < 0) {
        base_seterr(err, "out of memory");
        goto done;
    }
    for (int j = 0; j < k; j++) {
        memcpy(fg + (size_t)j * c->nvar, genomes + (size_t)idx[j] * c->nvar, sizeof(int) * (size_t)c->nvar);
        memcpy(fo + (size_t)j * COST_NOBJ, obj + (size_t)idx[j] * COST_NOBJ, sizeof(double) * COST_NOBJ);
        fc[j] = cv ? cv[idx[j]] : 0;
        fi[j] = src_idx ? src_idx[idx[j]] : idx[j];
        fgen[j] = src_gen ? src_gen[idx[j]] : 0;
    }
    res_pop fr = {k, c->nvar, fg, fo, fc, NULL, NULL};
    char re[BASE_ERRLEN];
    if (res_finish(db, id, &fr, fgen, fi, "finished", re)) {
        base_seterr(err, "%s", re);
        goto done;
    }
    rc = 0;
done:
    free(idx), free(fi), free(fgen), free(fg), free(fo), free(fc);
    return rc;
}

void camp_mark_failed(res_db *db, long long id, const char *msg)
{
    char re[BASE_ERRLEN];
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
    char ne[BASE_ERRLEN], re[BASE_ERRLEN];
    nsga_options o;
    nsga_options_default(&o);
    o.pop_size = c->opt.pop;
    o.seed = c->opt.seed;
    o.ref = c->ref;
    /* The first population starts with the fastest device's genome, then
     * the distinct --init genomes in their order (camp_initial_genomes). */
    int *seed_g = camp_initial_genomes(c, &o.nseeds);
    if (!seed_g) {
        base_seterr(err, "out of memory");
        return -1;
    }
    o.seed_int = seed_g;
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
            camp_mark_failed(db, id, err);
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
            camp_mark_failed(db, id, err);
            goto done;
        }
        if (log_gen(&d, e, err)) goto done;
    }
    /* The final front: the non-dominated feasible points of the final
     * population and of the seed genomes (the fastest device's, then the
     * distinct --init ones; generation 0, indices 0..ns-1).  Elitism keeps a seed
     * unless something dominates it or the first front outgrows the
     * population and crowding drops it; the second must not lose a
     * planner's mapping, so the seeds are evaluated again here (the model
     * is deterministic: the same numbers as in generation 0) and join. */
    {
        int ns = o.nseeds, m = n + ns, nv = c->nvar;
        int *g = malloc((size_t)m * nv * sizeof *g), *si = malloc((size_t)m * sizeof *si);
        long *sg = malloc((size_t)m * sizeof *sg);
        double *obj = malloc((size_t)m * COST_NOBJ * sizeof *obj), *cv = malloc((size_t)m * sizeof *cv);
        long gen = nsga_get_stats(e)->generation;
        int r = -1;
        if (!g || !si || !sg || !obj || !cv) {
            base_seterr(err, "out of memory");
        } else {
            for (int i = 0; i < n; i++) {
                memcpy(g + (size_t)i * nv, nsga_genome_int(e, i), sizeof(int) * (size_t)nv);
                memcpy(obj + (size_t)i * COST_NOBJ, nsga_objectives(e, i), sizeof(double) * COST_NOBJ);
                cv[i] = nsga_cv(e, i);
                sg[i] = gen, si[i] = i;
            }
            memcpy(g + (size_t)n * nv, seed_g, (size_t)ns * nv * sizeof *g);
            for (int s = 0; s < ns; s++) sg[n + s] = 0, si[n + s] = s;
            r = camp_eval(c, ns, seed_g, obj + (size_t)n * COST_NOBJ, cv + n, err);
            if (!r) r = camp_finish_front(c, db, id, m, g, obj, cv, NULL, sg, si, err);
        }
        free(g), free(si), free(sg), free(obj), free(cv);
        if (r) goto done;
    }
    rc = CAMP_FINISHED;
done:
    nsga_destroy(e);
    free(seed_g);
    free(d.gbuf), free(d.rank), free(d.crowd), free(d.ckpt);
    return rc;
}
