/* front.c -- a campaign's front: which points it is (camp_front_select,
 * camp_load_front), and one point out as files (camp_export) or as a
 * picture (camp_picture).
 * Invariant: the front is selected by one rule wherever it is shown:
 * feasible points of rank 0 among the candidates (a finished campaign's:
 * its last population and its seeds, drive.c), one per distinct objective
 * vector, sorted by latency, then energy, then memory. */
#include "campaign_internal.h"

#include "chrom.h"
#include "cost.h"
#include "jsonutil.h"
#include "mapping.h"
#include "nsga.h"
#include "plan.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    char re[BASE_ERRLEN];
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

/* The mapping a genome stands for, as the campaign evaluated it: decoded,
 * then each row cut's halo choice made by the cost model (camp_plan, as
 * eval_one); p, when not NULL, receives its Plan.  It uses the first
 * worker's cost model (its scratch): not to be called while the campaign
 * evaluates, nor from two threads at once. */
static int decode_planned(const camp *c, const int *genome, mapping *m, plan *p, char *err)
{
    plan *own = p ? NULL : plan_new();
    if (!p && !own) {
        base_seterr(err, "out of memory");
        return -1;
    }
    int rc = chrom_decode(c->ch, genome, c->nvar, m, err) ||
                     camp_plan(c, c->ws[0].cost, m, p ? p : own, NULL, err)
                 ? -1
                 : 0;
    plan_free(own);
    return rc;
}

int camp_decode(const camp *c, const int *genome, mapping *m, char *err)
{
    return decode_planned(c, genome, m, NULL, err);
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
    if (decode_planned(c, genome, m, p, err)) goto done;
    for (int l = 0; l < nl; l++) {
        layer[l] = c->net->layers[l].name;
        for (int k = 0; k < mapping_nslices(m, l); k++) {
            const map_slice *sl = &mapping_slices(m, l)[k];
            /* its share of the channels, rows or columns the layer is cut by */
            share[(size_t)l * nd + sl->dev] = (double)sl->nc / mapping_cut_total(c->net, l, m->cut[l]);
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

int camp_export(const camp *c, const int *genome, const char *dir, char *warn, char *err)
{
    char e[BASE_ERRLEN], w[BASE_ERRLEN];
    if (warn) warn[0] = 0;
    mapping *m = mapping_new(c->net->n, c->plat->ndev);
    if (!m) {
        base_seterr(err, "out of memory");
        return -1;
    }
    int rc = decode_planned(c, genome, m, NULL, e) ? -1
                                                          : mapping_export_dir(m, c->net, c->plat,
                                                                               dir, w, e);
    if (rc < 0) base_seterr(err, "%s", e);
    else if (warn) base_seterr(warn, "%s", w);
    mapping_free(m);
    return rc;
}
